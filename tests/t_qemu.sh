#!/bin/bash
# The QEMU kernel matrix (qemu-tests/run.sh): one check per cell, plus the
# big-endian s390x recording read on this little-endian host by offcpu report.
source "$(dirname "$0")/lib.sh"

if ! command -v qemu-system-x86_64 >/dev/null; then
	skip qemu "QEMU is not installed (make setup)"
	exit 0
fi
"$ROOT/qemu-tests/run.sh" ${QEMU_CELLS:-} >"$WORK/matrix.log" 2>&1
rc=$?
cat "$WORK/matrix.log"
while read -r verdict rest; do
	cell=${rest%%[: ]*}
	case $verdict in
	PASS) pass "qemu-$cell" ;;
	FAIL) fail "qemu-$cell" "${rest#*: }" ;;
	SKIP) skip "qemu-$cell" "${rest#*: }" ;;
	esac
done < <(grep -E '^(PASS|FAIL|SKIP) ' "$WORK/matrix.log")
grep -qE '^(PASS|FAIL|SKIP) ' "$WORK/matrix.log" ||
	fail qemu "run.sh printed no verdict: $(tail -n 2 "$WORK/matrix.log" | tr '\n' ' ')"
# A cell whose job died without a verdict leaves only run.sh's exit status.
if [ $rc -ne 0 ] && ! grep -q '^FAIL ' "$WORK/matrix.log"; then
	fail qemu-run "run.sh exited $rc without a failed cell: $(tail -n 2 "$WORK/matrix.log" | tr '\n' ' ')"
fi

be=$ROOT/build/qemu/s390x/trixie/perf.data
if [ -s "$be" ]; then
	"$OFFCPU" report -i "$be" --symfs "$ROOT/build/qemu/s390x/root" --folded >"$WORK/be" 2>&1
	grep -q 'blocker_nanosleep' "$WORK/be" && pass qemu-report-reads-big-endian \
		|| fail qemu-report-reads-big-endian "$(head -c 200 "$WORK/be")"
fi

# The cell checks must be able to fail: the same guest output against a
# workload that claims 8 % more blocked time in every function.
fo=$ROOT/build/qemu/x86_64/trixie
if [ -s "$fo/folded.txt" ] && [ -s "$fo/workload.out" ]; then
	awk '$1 == "thread" { $5 = sprintf("%.0f", $5 * 1.08) } 1' "$fo/workload.out" > "$WORK/wrong.out"
	if python3 "$ROOT/qemu-tests/check.py" folded "$fo/folded.txt" "$WORK/wrong.out" >/dev/null 2>&1 ||
	   python3 "$ROOT/tests/perf_check.py" compare "$fo/perf.data" "$WORK/wrong.out" \
		--symfs "$ROOT/build/qemu/x86_64/root" >/dev/null 2>&1; then
		fail qemu-checks-can-fail "an 8 % wrong workload measurement passed"
	else
		pass qemu-checks-can-fail
	fi
fi

# The same for the perf backend's recording (f) of the blocker.
fo=$ROOT/build/qemu/x86_64/trixie/rec-perf
if [ -s "$fo/folded.txt" ] && [ -s "$fo/workload.out" ]; then
	awk '$1 == "thread" { $5 = sprintf("%.0f", $5 * 1.08) } 1' "$fo/workload.out" > "$WORK/wrong-perf.out"
	check_fails qemu-perf-checks-can-fail "an 8 % wrong workload measurement passed (perf backend)" \
		python3 "$ROOT/qemu-tests/check.py" folded "$fo/folded.txt" "$WORK/wrong-perf.out"
fi

# The distro check (check.py's distro_verdict: perf_check.py distro) must be
# able to fail on a guest's recording: the same output against a workload
# that claims 15 % more time in each distro_* function than the most the
# check accepts for its truth (10 %, and the function's preempted time:
# the walker's 4 s recording under TCG has up to a fifth of a function's
# time preempted, which a flat 15 % stays within).
# The same for the kernel walker's recording (--unwind-in verify: its
# samples carry the walked stacks), and its user stacks cut to their
# innermost frame, as a walker that stopped after the pc would leave them.
for sub in distro distro-kunwind distro-perf; do
	dd=$ROOT/build/qemu/x86_64/trixie/$sub
	[ -s "$dd/perf.data" ] && [ -s "$dd/workload.out" ] || continue
	awk 'NR == FNR { if ($1 == "preempted") pre[$2] = $3; next }
	     $1 == "path" { $3 = sprintf("%.0f", ($3 + pre[$2]) / 0.9 * 1.15) } 1' \
		"$dd/workload.out" "$dd/workload.out" > "$WORK/$sub-wrong.out"
	check_fails qemu-$sub-check-can-fail "a 15 % wrong distro measurement passed" \
		python3 "$ROOT/tests/perf_check.py" distro "$dd/perf.data" "$WORK/$sub-wrong.out" \
		--folded "$dd/folded.txt" --symfs "$ROOT/build/qemu/x86_64/root"
done
dd=$ROOT/build/qemu/x86_64/trixie/distro-kunwind
if [ -s "$dd/folded.txt" ]; then
	awk '{ us = $NF; $NF = ""; sub(/ $/, ""); n = split($0, f, ";"); s = f[1]; u = 0
	       for (i = 2; i <= n; i++) if (f[i] !~ /_\[k\]$/) u = i
	       for (i = 2; i <= n; i++) if (i == u || f[i] ~ /_\[k\]$/) s = s ";" f[i]
	       print s, us }' "$dd/folded.txt" > "$WORK/kunwind-cut.folded"
	check_fails qemu-kunwind-cut-stacks-fail "user stacks cut to their innermost frame passed" \
		python3 "$ROOT/tests/perf_check.py" distro "$dd/perf.data" "$dd/workload.out" \
		--folded "$WORK/kunwind-cut.folded" --symfs "$ROOT/build/qemu/x86_64/root"
fi
