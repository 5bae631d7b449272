#!/bin/bash
# Runs every check: unit tests, host integration tests (tests/t_*.sh), the
# static-build checks and the QEMU kernel matrix.  Ends with the line
# "N passed, N failed, N skipped".
#   tests/run.sh [PATTERN]     only test files whose name contains PATTERN
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
export ROOT
RESULTS=$(mktemp)
export RESULTS
pattern=${1:-}

for t in "$ROOT"/tests/t_*.sh; do
	[ -n "$pattern" ] && [[ "$(basename "$t")" != *"$pattern"* ]] && continue
	echo "== $(basename "$t")"
	before=$(wc -l < "$RESULTS")
	bash "$t"
	rc=$?
	after=$(wc -l < "$RESULTS")
	# A test file that dies without reporting must not vanish from the count.
	if [ "$rc" -ne 0 ] || [ "$after" -eq "$before" ]; then
		echo "FAIL $(basename "$t"): exited $rc after $((after - before)) checks" | tee -a "$RESULTS"
	fi
done

echo
grep -E '^(FAIL|SKIP)' "$RESULTS" || true
p=$(grep -c '^PASS' "$RESULTS"); f=$(grep -c '^FAIL' "$RESULTS"); s=$(grep -c '^SKIP' "$RESULTS")
rm -f "$RESULTS"
echo "$p passed, $f failed, $s skipped"
[ "$f" -eq 0 ] && [ "$p" -gt 0 ]
