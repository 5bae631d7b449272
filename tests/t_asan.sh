#!/bin/bash
# The host tests again, against the AddressSanitizer + UBSan build of the
# same sources (glibc; make asan): any memory error, leak or undefined
# behaviour makes the tool exit non-zero and the check fail.
source "$(dirname "$0")/lib.sh"
ASAN=$ROOT/build/asan/offcpu

if [ ! -x "$ASAN" ]; then
	fail asan "$ASAN not built (make asan)"
	exit 0
fi
for t in t_cli t_record t_report t_pprof t_container t_wakers t_rotate t_flight; do
	: >"$WORK/results"
	OFFCPU=$ASAN RESULTS=$WORK/results ASAN_OPTIONS=detect_leaks=1 \
		bash "$ROOT/tests/$t.sh" >"$WORK/$t.log" 2>&1
	sed -E 's/^(PASS|FAIL|SKIP) /\1 asan-/' "$WORK/results" | tee -a "$RESULTS"
	[ -s "$WORK/results" ] || fail "asan-$t" "reported nothing: $(tail -n 2 "$WORK/$t.log")"
done
