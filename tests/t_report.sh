#!/bin/bash
# `offcpu report` on the host: the workload's blocking functions with their
# times, folded stacks that agree with perf script/report on the same file,
# a valid SVG flame graph, and one clear error (never a crash) for bad input.
source "$(dirname "$0")/lib.sh"
BLOCKER=${BLOCKER:-$ROOT/build/x86_64/blocker}
FUNCS="blocker_nanosleep blocker_pipe_read blocker_mutex_wait blocker_long_sleep"

# Per function: time of the stacks holding it, from the text report (-n 0),
# against the workload's own measurements (the truth of perf_check.py,
# with its tolerances): every blocking function of every thread.
check_text_times() {
	python3 - "$WORK/text" "$WORK/r.out" <<'PY'
import os, re, sys
sys.path.insert(0, os.path.join(os.environ['ROOT'], 'tests'))
import perf_check
tot, cur = {}, None
unit = {'s': 1e9, 'ms': 1e6, 'us': 1e3}
for line in open(sys.argv[1]):
    m = re.match(r'\s+[\d.]+%\s+([\d.]+) (s|ms|us)\s+\d+\s', line)
    if m:
        cur = (float(m.group(1)) * unit[m.group(2)], set())
        continue
    if cur and line.startswith('          ') and line.strip():
        fn = line.split()[0]
        if fn not in cur[1]:
            cur[1].add(fn)
            tot[fn] = tot.get(fn, 0) + cur[0]
if not tot:
    sys.exit('no stacks in the text report')
class A:
    tol, block_us, long_tol = perf_check.TOL, perf_check.BLOCK_US, perf_check.LONG_TOL
# The text report rounds each stack's time to 3 digits: 0.05 % more.
A.tol += 0.0005
bad = []
for funcs in perf_check.read_truth(sys.argv[2]).values():
    for fn, (ns, count, pre) in funcs.items():
        got = tot.get(fn, 0)
        print(f'{fn}: {got / 1e6:.1f} ms vs {ns / 1e6:.1f} ms')
        if not perf_check.within(got, ns, count, pre, A):
            bad.append(f'{fn}: {got/1e6:.1f} ms vs {ns/1e6:.1f} ms')
sys.exit('; '.join(bad) if bad else 0)
PY
}

# perf script's view of the same file, folded like ours (--per-thread).
perf_folded() {
	perf script -i "$WORK/r.data" -F comm,pid,tid,period,ip,sym 2>/dev/null | python3 -c '
import sys
out = {}
def flush(head, frames):
    if not head:
        return
    comm, pidtid, period = head
    fr = [("%s_[k]" % s if int(a, 16) >= 1 << 63 else s) for a, s in frames]
    key = ";".join(["%s-%s" % (comm, pidtid)] + fr[::-1])
    out[key] = out.get(key, 0) + int(period)
head, frames = None, []
for line in sys.stdin:
    if not line.strip():
        flush(head, frames); head, frames = None, []
    elif line[0] in " \t" and head:
        p = line.split()
        frames.append((p[0], p[1] if len(p) > 1 else "[unknown]"))
    else:
        p = line.split()
        head, frames = (" ".join(p[:-2]), p[-2], p[-1]), []
flush(head, frames)
for k, v in out.items():
    print(k, v // 1000)
'
}

# Same stacks with the same totals (us, rounding), the top 5 identical.
compare_folded() {	# OURS PERFS
	python3 - "$1" "$2" <<'PY'
import sys
def load(p):
    d = {}
    for line in open(p):
        k, v = line.rsplit(' ', 1)
        d[k] = d.get(k, 0) + int(v)
    return d
ours, perf = load(sys.argv[1]), load(sys.argv[2])
if not perf:
    sys.exit('perf script gave no stacks')
bad = [f'{k[:120]}: ours {ours.get(k, 0)} perf {v}' for k, v in perf.items()
       if abs(ours.get(k, 0) - v) > 1]
bad += [f'only ours: {k[:120]}' for k in ours if k not in perf]
top = lambda d: sorted(d, key=lambda k: -d[k])[:5]
if set(top(ours)) != set(top(perf)):
    bad.append('top 5 stacks differ')
sys.exit('; '.join(bad[:4]) if bad else 0)
PY
}

# Per thread: folded totals against perf report --sort pid (tid:comm).
compare_per_thread() {	# OURS PERF_REPORT
	python3 - "$1" "$2" <<'PY'
import sys
ours = {}
for line in open(sys.argv[1]):
    stack, us = line.rsplit(' ', 1)
    tid = stack.split(';')[0].rsplit('/', 1)[1]
    ours[tid] = ours.get(tid, 0) + int(us)
perf = {}
for line in open(sys.argv[2]):
    p = line.split()
    if len(p) == 2 and ':' in p[0] and p[1].isdigit():
        perf[p[0].split(':')[0]] = int(p[1]) // 1000
if not perf:
    sys.exit('perf report printed no per-thread periods')
bad = [f'tid {t}: ours {ours.get(t, 0)} us, perf {v} us' for t, v in perf.items()
       if abs(ours.get(t, 0) - v) > 20]
sys.exit('; '.join(bad) if bad else 0)
PY
}

check_svg() {	# FILE
	python3 - "$1" "$FUNCS" <<'PY'
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
assert root.tag.endswith('svg'), root.tag
txt = ET.tostring(root, encoding='unicode')
missing = [f for f in sys.argv[2].split() if f not in txt]
sys.exit('not in the SVG: ' + ' '.join(missing) if missing else 0)
PY
}

record_checks() {
	"$OFFCPU" report -i "$WORK/r.data" -n 0 >"$WORK/text" 2>"$WORK/text.err" \
		&& pass report-runs || fail report-runs "$(tail -n 1 "$WORK/text.err")"
	check report-text-truth check_text_times
	"$OFFCPU" report -i "$WORK/r.data" -T --folded >"$WORK/folded.T" 2>"$WORK/folded.T.err" ||
		fail report-folded-T-runs "exit $?: $(tail -n 1 "$WORK/folded.T.err")"
	check report-folded-truth python3 "$ROOT/qemu-tests/check.py" folded "$WORK/folded.T" "$WORK/r.out"
	for f in $FUNCS; do
		grep -q "^ *$f\$" "$WORK/text" && pass "report-shows-$f" \
			|| fail "report-shows-$f" "not in the text report"
	done
	grep -q 'do_nanosleep \[k\]' "$WORK/text" && pass report-kernel-frames \
		|| fail report-kernel-frames "no kernel frame resolved"
	[ ! -s "$WORK/text.err" ] && pass report-no-warnings \
		|| fail report-no-warnings "$(head -n 1 "$WORK/text.err")"

	"$OFFCPU" report -i "$WORK/r.data" --folded --per-thread >"$WORK/folded" 2>"$WORK/folded.err" ||
		fail report-folded-runs "exit $?: $(tail -n 1 "$WORK/folded.err")"
	if command -v perf >/dev/null; then
		perf_folded >"$WORK/perf.folded"
		check report-folded-matches-perf-script compare_folded "$WORK/folded" "$WORK/perf.folded"
		perf report -i "$WORK/r.data" --stdio --no-children --sort pid -F pid,period -g none \
			2>/dev/null >"$WORK/perf.pid"
		check report-totals-match-perf-report compare_per_thread "$WORK/folded" "$WORK/perf.pid"
	else
		skip report-matches-perf "perf is not installed (linux-perf, toolchain/deps.sh)"
	fi
	"$OFFCPU" report -i "$WORK/r.data" --folded >"$WORK/folded.proc" 2>"$WORK/folded.proc.err" ||
		fail report-folded-proc-runs "exit $?: $(tail -n 1 "$WORK/folded.proc.err")"
	check report-folded-per-process-total python3 -c '
import sys
a = sum(int(l.rsplit(" ", 1)[1]) for l in open(sys.argv[1]))
b = sum(int(l.rsplit(" ", 1)[1]) for l in open(sys.argv[2]))
sys.exit(0 if abs(a - b) <= 10 else f"{a} vs {b} us")' "$WORK/folded.proc" "$WORK/folded"

	"$OFFCPU" report -i "$WORK/r.data" --svg "$WORK/fg.svg" 2>"$WORK/svg.err" &&
		pass report-svg-runs || fail report-svg-runs "exit $?: $(tail -n 3 "$WORK/svg.err" | tr '\n' ' ')"
	check report-svg-valid check_svg "$WORK/fg.svg"
	if command -v rsvg-convert >/dev/null; then
		check report-svg-renders rsvg-convert -o "$WORK/fg.png" "$WORK/fg.svg"
		[ -n "${REPORT_PNG:-}" ] && cp "$WORK/fg.png" "$REPORT_PNG"
	else
		skip report-svg-renders "rsvg-convert not installed (toolchain/deps.sh)"
	fi

	"$OFFCPU" report -i "$WORK/r.data" --pid 1 >"$WORK/none" 2>&1
	rc=$?
	[ $rc -eq 0 ] && grep -q " 0 samples" "$WORK/none" && pass report-pid-filter \
		|| fail report-pid-filter "$(head -2 "$WORK/none")"
	"$OFFCPU" report -i "$WORK/r.data" --comm bl-long -n 0 --per-thread >"$WORK/comm" 2>&1
	rc=$?
	[ $rc -eq 0 ] && grep -q blocker_long_sleep "$WORK/comm" && ! grep -q blocker_pipe_read "$WORK/comm" \
		&& pass report-comm-filter || fail report-comm-filter "$(head -3 "$WORK/comm")"
	filter_checks
	hidden_checks
}

# Per-thread text report ARGS...: its threads ("comm/tid"), sorted, one a
# line, then the header's "N samples" and whether it says "selected from".
threads_of() {
	"$OFFCPU" report -i "$WORK/r.data" -n 0 --per-thread "$@" >"$WORK/sel" 2>&1 || return 1
	awk '$1 ~ /^[0-9.]+%$/ && $3 ~ /^[mun]?s$/ { print $5 }' "$WORK/sel" | sort -u
	sed -n 's/^# .* in \([0-9]*\) samples\( (selected from\)\?.*/samples \1\2/p' "$WORK/sel"
}

# --pid and --comm on the blocker, one process of 7 threads (its truth names
# them: the pid is the main thread's tid).  --pid PID selects every thread,
# all the samples (a filter on the tid would keep the main thread alone);
# --pid of bl-sleep's tid, a thread and no process, selects none; a list
# selects its processes.  --comm of the process's name selects all its
# threads (not the main thread alone, whose name it also is); a list of two
# thread names, those two.
filter_checks() {
	local bpid stid all sel want
	bpid=$(awk '$1 == "thread" && $3 == "blocker" { print $2; exit }' "$WORK/r.out")
	stid=$(awk '$1 == "thread" && $3 == "bl-sleep" { print $2; exit }' "$WORK/r.out")
	if [ -z "$bpid" ] || [ -z "$stid" ]; then
		fail report-pid-real "no blocker or bl-sleep thread line in the workload's output"
		return
	fi
	all=$(threads_of)
	want=$(awk '$1 == "thread" { print $3 "/" $2 }' "$WORK/r.out" | sort -u | tr '\n' ' ')
	# Every thread of the truth, each under its own tid, and nothing else.
	if [ "$(grep -v '^samples' <<<"$all" | tr '\n' ' ')" = "$want" ] &&
	   [ "$(grep -c / <<<"$all")" -ge 6 ]; then
		pass report-per-thread-all
	else
		fail report-per-thread-all "threads $(tr '\n' ' ' <<<"$all"), truth $want"
	fi
	sel=$(threads_of --pid "$bpid")
	[ -n "$sel" ] && [ "$sel" = "$all" ] && pass report-pid-real ||
		fail report-pid-real "--pid $bpid: $(tr '\n' ' ' <<<"$sel"); all: $(tr '\n' ' ' <<<"$all")"
	sel=$(threads_of --pid "1,$bpid")
	[ -n "$sel" ] && [ "$sel" = "$all" ] && pass report-pid-list ||
		fail report-pid-list "--pid 1,$bpid: $(tr '\n' ' ' <<<"$sel")"
	sel=$(threads_of --pid "$stid")
	[ "$sel" = "samples 0 (selected from" ] && pass report-pid-not-tid ||
		fail report-pid-not-tid "--pid $stid (bl-sleep's tid): $(tr '\n' ' ' <<<"$sel")"
	sel=$(threads_of --comm blocker)
	[ -n "$sel" ] && [ "$sel" = "$all" ] && pass report-comm-process ||
		fail report-comm-process "--comm blocker: $(tr '\n' ' ' <<<"$sel"); all: $(tr '\n' ' ' <<<"$all")"
	sel=$(threads_of --comm bl-long,bl-sleep | grep / | sed 's,/.*,,' | tr '\n' ' ')
	[ "$sel" = "bl-long bl-sleep " ] && pass report-comm-list ||
		fail report-comm-list "--comm bl-long,bl-sleep: $sel"
}

# The "N more stacks (T, P %) not shown" line under -n and -m: N the entries
# of -n 0 not shown, T the sum of their times, P their share of the total
# (the shown entries' shares from 100).  Two values of each option (-n 2
# and 3; -m 10 and a share half-way between two entries'): the entries shown
# are those of -n 0 that pass, in its order.
hidden_checks() {
	"$OFFCPU" report -i "$WORK/r.data" -n 0 >"$WORK/h.all" 2>&1
	local a name
	for name in n2 n3 m10 mid; do
		a="-${name:0:1} ${name:1}"
		[ $name = m10 ] && a="-n 0 $a"
		if [ $name = mid ]; then
			# Half-way between the 3rd and 4th shares (or the next two at
			# least 0.05 % apart: the printed shares are rounded).
			a="-n 0 -m $(awk '$1 ~ /^[0-9.]+%$/ && $3 ~ /^[mun]?s$/ { n++; p[n] = substr($1, 1, length($1) - 1) }
				END { for (i = 3; i < n && p[i] - p[i + 1] < 0.05; i++); printf "%.3f", (p[i] + p[i + 1]) / 2 }' "$WORK/h.all")"
		fi
		# shellcheck disable=SC2086
		"$OFFCPU" report -i "$WORK/r.data" $a >"$WORK/h.some" 2>&1
		check "report-more-stacks-$name" python3 - "$WORK/h.all" "$WORK/h.some" "$a" <<'PY'
import re, sys
UNIT = {'s': 1e9, 'ms': 1e6, 'us': 1e3}
def entries(path):
    out, more = [], None
    for line in open(path):
        m = re.match(r'\s*([\d.]+)%\s+([\d.]+) (s|ms|us)\s+(\d+)\s+(\S+)', line)
        if m:
            out.append((float(m.group(1)), float(m.group(2)) * UNIT[m.group(3)],
                        UNIT[m.group(3)], m.group(5)))
        m = re.match(r'# (\d+) more stacks \(([\d.]+) (s|ms|us), ([\d.]+)%\) not shown', line)
        if m:
            more = (int(m.group(1)), float(m.group(2)) * UNIT[m.group(3)], UNIT[m.group(3)],
                    float(m.group(4)))
    return out, more
every, none = entries(sys.argv[1])
some, more = entries(sys.argv[2])
opt, val = sys.argv[3].split()[-2:]
if none or len(every) < 5:
    sys.exit(f'-n 0: {len(every)} entries, more line {none}')
if opt == '-n':
    want = every[:int(val)]
else:
    want = [e for e in every if e[0] >= float(val)]
    if any(abs(e[0] - float(val)) < 0.006 for e in every):
        sys.exit(f'a share at the limit {val}: pick another')
if [e[3] for e in some] != [e[3] for e in want] or [e[0] for e in some] != [e[0] for e in want]:
    sys.exit(f'shown {[(e[0], e[3]) for e in some]}, want the first {len(want)} of -n 0')
rest = every[len(want):]
if not rest or not more:
    sys.exit(f'{len(rest)} entries hidden, more line: {more}')
n, t, unit, pct = more
# Each time printed to 3 decimals of its unit; each share to 2.
t_want = sum(e[1] for e in rest)
t_tol = sum(e[2] for e in rest) * 0.0005 + unit * 0.0005
p_want = 100 - sum(e[0] for e in want)
p_tol = 0.005 * len(want) + 0.006
print(f'{sys.argv[3]}: {n} more, {t / 1e6:.3f} ms, {pct}% against {len(rest)}, '
      f'{t_want / 1e6:.3f} ms, {p_want:.2f}%')
bad = []
if n != len(rest):
    bad.append(f'{n} more stacks, {len(rest)} not shown')
if abs(t - t_want) > t_tol:
    bad.append(f'their time {t / 1e6:.3f} ms, the entries not shown {t_want / 1e6:.3f} ms')
if abs(pct - p_want) > p_tol:
    bad.append(f'their share {pct}%, 100 less the shown {p_want:.2f}%')
sys.exit('; '.join(bad) if bad else 0)
PY
	done
}

# A library that is not the recorded one (other build-id, under --symfs):
# [unknown] and one warning, not wrong names.  The static workload has no
# build-id, so this records sleep(1) and alters libc's.
build_id_checks() {
	local lib
	if ! command -v perf >/dev/null; then
		skip report-build-id-mismatch "perf is not installed (perf buildid-list finds libc)"
		return
	fi
	"$OFFCPU" -o "$WORK/s.data" -- sleep 0.2 >/dev/null 2>"$WORK/s.err" ||
		fail report-build-id-record "exit $?: $(tail -n 1 "$WORK/s.err")"
	# A real recording has build-ids: the kernel's and libc's (FAIL if not).
	perf buildid-list -i "$WORK/s.data" >"$WORK/s.bid" 2>&1
	if grep -qE '^[0-9a-f]{20,} \[kernel\.kallsyms\]' "$WORK/s.bid" &&
	   grep -qE '^[0-9a-f]{20,} .*/libc\.so' "$WORK/s.bid"; then
		pass report-build-ids-recorded
	else
		fail report-build-ids-recorded "perf buildid-list: $(head -c 200 "$WORK/s.bid")"
	fi
	lib=$(perf buildid-list -i "$WORK/s.data" 2>/dev/null | awk '!d && $2 ~ /\/libc\.so/ { print $2; d = 1 }')
	if [ -z "$lib" ] || [ ! -f "$lib" ]; then
		fail report-build-id-mismatch "no libc with a build-id in the sleep recording"
		return
	fi
	"$OFFCPU" report -i "$WORK/s.data" -n 0 >"$WORK/s.txt" 2>&1 ||
		fail report-build-id-report-runs "exit $?: $(tail -n 1 "$WORK/s.txt")"
	# With libc6-dbg the name is the debug file's, versioned as perf shows it.
	grep -q '^ *clock_nanosleep\(@GLIBC_[0-9.]*\)\?$' "$WORK/s.txt" || {
		fail report-build-id-mismatch "clock_nanosleep not resolved in libc to begin with"
		return
	}
	mkdir -p "$WORK/symfs$(dirname "$lib")"
	cp "$lib" "$WORK/symfs$lib"
	printf 'x' | dd of="$WORK/symfs$lib" bs=1 conv=notrunc \
		seek="$(build_id_offset "$lib")" 2>/dev/null
	"$OFFCPU" report -i "$WORK/s.data" --symfs "$WORK/symfs" -n 0 >"$WORK/bid" 2>"$WORK/bid.err"
	rc=$?
	[ $rc -eq 0 ] && grep -q "symfs$lib is not the recorded file" "$WORK/bid.err" && ! grep -q '^ *clock_nanosleep' "$WORK/bid" \
		&& pass report-build-id-mismatch \
		|| fail report-build-id-mismatch "exit $rc: $(head -c 300 "$WORK/bid.err")"
}

# File offset of the first byte of the GNU build-id note's descriptor.
build_id_offset() {
	python3 - "$1" <<'PY'
import struct, sys
d = open(sys.argv[1], 'rb').read()
shoff, = struct.unpack_from('<Q', d, 0x28)
shentsize, shnum = struct.unpack_from('<HH', d, 0x3a)
for i in range(shnum):
    typ, = struct.unpack_from('<I', d, shoff + i * shentsize + 4)
    off, size = struct.unpack_from('<QQ', d, shoff + i * shentsize + 0x18)
    ntype, = struct.unpack_from('<I', d, off + 8)
    if typ == 7 and ntype == 3 and d[off + 12:off + 16] == b'GNU\0':
        print(off + 16)
        sys.exit(0)
sys.exit('no build-id note')
PY
}

if record_blocker report; then
	record_checks
	build_id_checks
	cp "$WORK/r.data" "$WORK/trunc.data"
	truncate -s $(( $(stat -c %s "$WORK/r.data") / 2 )) "$WORK/trunc.data"
	# Flip bytes in the middle of the data section: an error or a report, no crash.
	cp "$WORK/r.data" "$WORK/corrupt.data"
	printf '\xff\xff\xff\xff\xff\xff\xff\xff' | dd of="$WORK/corrupt.data" bs=1 conv=notrunc \
		seek=$(( $(stat -c %s "$WORK/r.data") / 3 )) 2>/dev/null
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
{ printf 'PERFILE2'; head -c 200 /dev/urandom; } >"$WORK/magic"
bad_input empty "$WORK/empty" "empty file"
bad_input random "$WORK/random" "not a perf.data file"
bad_input magic-only "$WORK/magic" "."
bad_input text "$ROOT/README.md" "not a perf.data file"
bad_input missing "$WORK/nonexistent" "No such file"
bad_input directory "$WORK" "."
[ -f "$WORK/trunc.data" ] && bad_input truncated "$WORK/trunc.data" "truncated"
if [ -f "$WORK/corrupt.data" ]; then
	"$OFFCPU" report -i "$WORK/corrupt.data" >"$WORK/o" 2>"$WORK/e"
	rc=$?
	[ $rc -le 1 ] && pass report-bad-corrupt || fail report-bad-corrupt "exit $rc: $(head -c 200 "$WORK/e")"
fi
# A bad option or value: one line, exit 2 (a bad input is 1, as above).
for a in "--top x" "--sort foo" "--pid 0" "--min-percent 200" "--bogus"; do
	# shellcheck disable=SC2086
	"$OFFCPU" report $a >"$WORK/o" 2>"$WORK/e"
	rc=$?
	[ $rc -eq 2 ] && [ "$(grep -c . "$WORK/e")" -eq 1 ] && pass "report-option-${a%% *}" \
		|| fail "report-option-${a%% *}" "exit $rc: $(head -c 200 "$WORK/e")"
done
