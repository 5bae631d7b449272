#!/bin/bash
# Unit tests (build/unit/test_units, ASan+UBSan): each PASS/FAIL line is a check.
source "$(dirname "$0")/lib.sh"
bin=$ROOT/build/unit/test_units
[ -x "$bin" ] || { fail unit "$bin not built (make unit)"; exit 0; }
"$bin" >"$WORK/out" 2>&1
rc=$?
while read -r verdict name rest; do
	case $verdict in
	PASS) pass "unit-$name" ;;
	FAIL) fail "unit-${name%:}" "$rest" ;;
	esac
done < <(grep -E '^(PASS|FAIL) ' "$WORK/out")
[ $rc -eq 0 ] || fail unit-exit "exit $rc: $(grep -v -E '^(PASS|FAIL) ' "$WORK/out" | head -3 | tr '\n' ' ')"
