#!/bin/bash
# Unit tests: `make unit` builds build/unit/test_* (host gcc, ASan+UBSan);
# each binary prints PASS/FAIL/SKIP lines, one per test case, forwarded here
# as unit-<binary>-<case>.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

if ! make -s -C "$ROOT" unit >"$WORK/make.log" 2>&1; then
	fail unit-build "$(grep -m 3 -E 'error|Error' "$WORK/make.log" | tr '\n' ' ')"
fi
shopt -s nullglob
bins=("$ROOT"/build/unit/test_*)
[ ${#bins[@]} -gt 0 ] || { fail unit "no build/unit/test_* binary"; exit 0; }
for bin in "${bins[@]}"; do
	[ -x "$bin" ] || continue
	# test_units keeps its historical names (unit-<case>).
	tag=$(basename "$bin")
	tag=${tag#test_}
	[ "$tag" = units ] && tag= || tag=$tag-
	rc=0
	"$bin" >"$WORK/out" 2>&1 || rc=$?
	while read -r verdict name rest; do
		case $verdict in
		PASS) pass "unit-$tag$name" ;;
		FAIL) fail "unit-$tag${name%:}" "$rest" ;;
		SKIP) skip "unit-$tag${name%:}" "$rest" ;;
		esac
	done < <(grep -E '^(PASS|FAIL|SKIP) ' "$WORK/out" || true)
	# A crash (sanitizer report) or a non-zero exit without a FAIL line.
	if [ $rc -ne 0 ] && ! grep -q '^FAIL ' "$WORK/out"; then
		fail "unit-${tag}exit" "exit $rc: $(grep -v -E '^(PASS|FAIL|SKIP) ' "$WORK/out" | head -3 | tr '\n' ' ')"
	fi
done

# The fuzz harnesses (make fuzz) link against today's sources: a harness
# that no longer builds fuzzes nothing, and only make fuzz would say so.
# Each then runs FUZZ_SMOKE_SECONDS (2) from its seeds: clang's UBSan sees
# what gcc's in the unit tests does not (a NULL table offset, found so).
# tests/fuzz/run.sh keeps the objects in build/fuzz, a finding's input in
# tests/fuzz/crashes/.
if command -v clang >/dev/null; then
	FUZZ_SECONDS=${FUZZ_SMOKE_SECONDS:-2} "$ROOT/tests/fuzz/run.sh" >"$WORK/fuzz.log" 2>&1 || true
	for h in "$ROOT"/tests/fuzz/fuzz_*.c; do
		h=$(basename "$h" .c)
		if grep -q "^fuzz: cannot build $h\$" "$WORK/fuzz.log" || ! grep -q "^$h: " "$WORK/fuzz.log"; then
			fail "unit-fuzz-builds-${h#fuzz_}" "$(grep -v warning "$WORK/fuzz.log" | grep -m 2 -E 'error|undefined' | tr '\n' ' ')"
			continue
		fi
		pass "unit-fuzz-builds-${h#fuzz_}"
		grep -q "^$h: .* no finding\$" "$WORK/fuzz.log" && pass "unit-fuzz-runs-${h#fuzz_}" ||
			fail "unit-fuzz-runs-${h#fuzz_}" "$(grep -m 1 "^$h: " "$WORK/fuzz.log")"
	done
else
	fail unit-fuzz-builds "no clang (make setup)"
fi
