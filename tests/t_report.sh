#!/bin/bash
# `offcpu report` on the host: the workload's blocking functions with their
# times, folded totals that agree with perf report on the same file, a valid
# SVG flame graph, and one clear error (never a crash) for bad input.
source "$(dirname "$0")/lib.sh"
BLOCKER=${BLOCKER:-$ROOT/build/x86_64/blocker}

if [ "$(id -u)" != 0 ] || [ ! -r /sys/kernel/btf/vmlinux ]; then
	skip report "needs root and a host kernel with BTF to record"
else
	"$OFFCPU" -o "$WORK/r.data" -- "$BLOCKER" -t 1 >"$WORK/r.out" 2>/dev/null
	"$OFFCPU" report -i "$WORK/r.data" -n 0 >"$WORK/text" 2>&1 && pass report-runs \
		|| fail report-runs "$(tail -n 1 "$WORK/text")"
	"$OFFCPU" report -i "$WORK/r.data" --folded >"$WORK/folded" 2>"$WORK/folded.err"
	# Per function: folded time of the stacks containing it vs the workload.
	check report-folded-times-within-10pct python3 - "$WORK/folded" "$WORK/r.out" <<'PY'
import sys
tot = {}
for line in open(sys.argv[1]):
    stack, us = line.rsplit(' ', 1)
    for f in set(stack.split(';')[1:]):
        tot[f] = tot.get(f, 0) + int(us) * 1000
bad = []
for line in open(sys.argv[2]):
    _, fn, ns, _ = line.split()
    got, want = tot.get(fn, 0), int(ns)
    if abs(got - want) > 0.1 * want:
        bad.append(f'{fn}: {got/1e6:.1f} ms vs {want/1e6:.1f} ms')
    if not any(fn in l for l in open(sys.argv[1])):
        bad.append(f'{fn} missing')
sys.exit('; '.join(bad) if bad else 0)
PY
	grep -q 'do_nanosleep_\[k\]' "$WORK/folded" && pass report-kernel-frames \
		|| fail report-kernel-frames "no kernel frame resolved"
	# Same totals per command as perf report (periods are ns; folded is us).
	perf report -i "$WORK/r.data" --stdio --no-children --sort comm -F comm,period \
		-g none 2>/dev/null | awk '/^ / && NF == 2 { print $1, $2 }' >"$WORK/perf.comm"
	check report-agrees-with-perf python3 - "$WORK/folded" "$WORK/perf.comm" <<'PY'
import sys
ours = {}
for line in open(sys.argv[1]):
    stack, us = line.rsplit(' ', 1)
    comm = stack.split(';')[0]
    ours[comm] = ours.get(comm, 0) + int(us)
perf = {c: int(p) // 1000 for c, p in (l.split() for l in open(sys.argv[2]))}
if not perf:
    sys.exit('perf report printed no per-comm periods')
bad = [f'{c}: ours {ours.get(c, 0)} us, perf {v} us' for c, v in perf.items()
       if abs(ours.get(c, 0) - v) > max(2, 0.001 * v) + 20]
sys.exit('; '.join(bad) if bad else 0)
PY
	"$OFFCPU" report -i "$WORK/r.data" --svg "$WORK/fg.svg" 2>"$WORK/svg.err"
	check report-svg-valid python3 -c '
import sys, xml.etree.ElementTree as ET
t = ET.parse(sys.argv[1]).getroot()
txt = ET.tostring(t, encoding="unicode")
assert t.tag.endswith("svg"), t.tag
for f in ("blocker_nanosleep", "blocker_pipe_read", "blocker_mutex_wait", "blocker_long_sleep"):
    assert f in txt, f + " not in the SVG"
' "$WORK/fg.svg"
	"$OFFCPU" report -i "$WORK/r.data" --pid 1 >"$WORK/none" 2>&1
	grep -q "0 samples" "$WORK/none" && pass report-pid-filter || fail report-pid-filter "$(head -2 "$WORK/none")"
	cp "$WORK/r.data" "$WORK/trunc.data"
	truncate -s $(( $(stat -c %s "$WORK/r.data") / 2 )) "$WORK/trunc.data"
fi

# Bad input: one line, exit 1, no crash (a crash would exit >= 128).
bad_input() {	# NAME FILE PATTERN
	"$OFFCPU" report -i "$2" >"$WORK/o" 2>"$WORK/e"
	local rc=$?
	if [ $rc -eq 1 ] && [ "$(grep -c . "$WORK/e")" -eq 1 ] && grep -q "$3" "$WORK/e"; then
		pass "report-bad-$1"
	else
		fail "report-bad-$1" "exit $rc: $(head -c 200 "$WORK/e")"
	fi
}
: >"$WORK/empty"
head -c 4096 /dev/urandom >"$WORK/random"
bad_input empty "$WORK/empty" "empty file"
bad_input random "$WORK/random" "not a perf.data file"
bad_input text "$ROOT/README.md" "not a perf.data file"
bad_input missing "$WORK/nonexistent" "No such file"
[ -f "$WORK/trunc.data" ] && bad_input truncated "$WORK/trunc.data" "truncated"
