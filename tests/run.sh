#!/bin/bash
# Runs every check: unit tests, host integration tests (tests/t_*.sh), the
# static-build checks and the QEMU kernel matrix.  Ends with the line
# "N passed, N failed, N skipped", after every failure and every skip with
# its reason and, just before it, where the time went:
#   time: toolchains 6m10s, builds 4m02s, kernels 0m00s, host tests 17m40s, QEMU matrix 14m05s
# (toolchains, builds and kernels: OFFCPU_PHASE_TIMES="toolchains=SECONDS
# builds=SECONDS kernels=SECONDS", from make test, kernels the wait for the
# matrix's downloads and built kernel after the builds; the QEMU matrix is
# t_qemu.sh, host tests every other file).
# CI=true: a skip not on ALLOWED_SKIPS (below) is a failure.
#   tests/run.sh [PATTERN]     only test files whose name contains PATTERN
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
export ROOT
RESULTS=$(mktemp)
export RESULTS
pattern=${1:-}
host_s=0 qemu_s=0 ran_qemu=

for t in "$ROOT"/tests/t_*.sh; do
	[ -n "$pattern" ] && [[ "$(basename "$t")" != *"$pattern"* ]] && continue
	echo "== $(basename "$t")"
	before=$(wc -l < "$RESULTS")
	t0=$SECONDS
	bash "$t"
	rc=$?
	if [ "$(basename "$t")" = t_qemu.sh ]; then qemu_s=$((qemu_s + SECONDS - t0)) ran_qemu=1
	else host_s=$((host_s + SECONDS - t0)); fi
	after=$(wc -l < "$RESULTS")
	# A test file that dies without reporting must not vanish from the count.
	if [ "$rc" -ne 0 ] || [ "$after" -eq "$before" ]; then
		echo "FAIL $(basename "$t"): exited $rc after $((after - before)) checks" | tee -a "$RESULTS"
	fi
done

# A full run: every check tests/options.tsv names must have reported (a
# renamed or removed check leaves an option unproven).
if [ -z "$pattern" ]; then
	while IFS=$'\t' read -r cmd opt file checks _; do
		for c in $checks; do
			[ "$c" = - ] && continue
			grep -qE "^(PASS|FAIL|SKIP) $c(:|\$| )" "$RESULTS" ||
				echo "FAIL options-table-$c: tests/options.tsv names it for $cmd $opt, $file did not report it" |
				tee -a "$RESULTS"
		done
	done < <(grep -v '^#' "$ROOT/tests/options.tsv")
fi

# Skips that a CI machine may have for reasons outside the repository; under
# CI=true any other skip fails the run (a skipped check hides coverage).
# Patterns match the check's name (shell glob), one per line, each with why.
ALLOWED_SKIPS=(
	# a container without CAP_SYS_ADMIN cannot mount the small tmpfs
	'*record-disk-full-keeps-valid-file'
	# a kernel without seccomp filters cannot simulate a kernel without bpf()
	'cli-error-no-kernel-support'
	# the same for the perf backend's automatic choice (t_perfbackend)
	'perfbackend-nobpf'
)
allowed() {
	local p
	for p in "${ALLOWED_SKIPS[@]}"; do
		# shellcheck disable=SC2053
		[[ $1 == $p ]] && return 0
	done
	return 1
}

echo
grep -E '^FAIL' "$RESULTS" || true
# Every skip with its reason; under CI=true one off the list is a failure.
while read -r _ name why; do
	name=${name%:}
	if [ "${CI:-}" = true ] && ! allowed "$name"; then
		echo "FAIL $name: skipped under CI=true and not on tests/run.sh's ALLOWED_SKIPS ($why)" |
			tee -a "$RESULTS"
	else
		echo "SKIP $name: $why"
	fi
done < <(grep '^SKIP' "$RESULTS")
p=$(grep -c '^PASS' "$RESULTS"); f=$(grep -c '^FAIL' "$RESULTS"); s=$(grep -c '^SKIP' "$RESULTS")
rm -f "$RESULTS"
mmss() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }
times=
for kv in ${OFFCPU_PHASE_TIMES:-}; do times+="${kv%%=*} $(mmss "${kv#*=}"), "; done
times+="host tests $(mmss "$host_s")"
[ -n "$ran_qemu" ] && times+=", QEMU matrix $(mmss "$qemu_s")"
echo "time: $times"
echo "$p passed, $f failed, $s skipped"
[ "$f" -eq 0 ] && [ "$p" -gt 0 ]
