# Sourced by tests/t_*.sh.  Each check reports one line to $RESULTS:
#   PASS name | FAIL name: why | SKIP name: why
# and echoes it for the log.  A test file may hold many checks.
: "${RESULTS:=/dev/null}"
ROOT=${ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
OFFCPU=${OFFCPU:-$ROOT/build/x86_64/offcpu}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/offcpu-test.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

pass() { echo "PASS $1" | tee -a "$RESULTS"; }
fail() { echo "FAIL $1: $2" | tee -a "$RESULTS"; }
skip() { echo "SKIP $1: $2" | tee -a "$RESULTS"; }
# explain FILE: after a failed check, log the summary offcpu printed to FILE
# (its drop counters say where a missing block went).
explain() {
	tail -n 1 "$RESULTS" 2>/dev/null | grep -q '^FAIL' || return 0
	grep '^\[ offcpu:' "$1" | sed 's/^/    /'
}
# check NAME CMD...: pass when CMD succeeds.
check() {
	local name=$1; shift
	if "$@" >"$WORK/check.out" 2>&1; then pass "$name"; else
		fail "$name" "$(tail -n 3 "$WORK/check.out" | tr '\n' ' ')"; fi
}
