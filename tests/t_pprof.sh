#!/bin/bash
# `offcpu report --pprof` read by Debian's `go tool pprof` (golang-go): per
# function, flat and cumulative off-CPU time agree with offcpu report's
# folded stacks within 1 %, the totals of both sample types with the text
# report's, and every sample's thread/process labels with the report's
# threads.  Then the live status line of a recording: shown on a terminal
# (under script), never when stderr is not one, and blanked at the end.
source "$(dirname "$0")/lib.sh"
BLOCKER=${BLOCKER:-$ROOT/build/x86_64/blocker}
PPROF=(go tool pprof -symbolize=none)

# pprof -top (every node, in ns) against the per-function times of the
# report's folded stacks (per thread, us): flat is the leaf, cum each stack
# that holds the function once.  Kernel frames lose their _[k] suffix.
compare_top() {	# PPROF_TOP FOLDED
	python3 - "$1" "$2" <<'PY'
import re, sys
top = {}
for line in open(sys.argv[1]):
    m = re.match(r'\s*(\d+)(?:ns)?\s+\S+%\s+\S+%\s+(\d+)(?:ns)?\s+\S+%\s+(.+)$', line)
    if m:
        name = m.group(3).strip().replace(' ', ':').replace(';', ':')
        flat, cum = top.get(name, (0, 0))
        top[name] = (flat + int(m.group(1)), cum + int(m.group(2)))
if not top:
    sys.exit('pprof -top printed no function')
flat, cum, stacks = {}, {}, {}
for line in open(sys.argv[2]):
    stack, us = line.rsplit(' ', 1)
    frames = [f[:-4] if f.endswith('_[k]') else f for f in stack.split(';')[1:]]
    ns = int(us) * 1000
    flat[frames[-1]] = flat.get(frames[-1], 0) + ns
    for f in set(frames):
        cum[f] = cum.get(f, 0) + ns
        stacks[f] = stacks.get(f, 0) + 1
if not cum:
    sys.exit('no folded stacks')
bad = []
for f in sorted(set(cum) | set(top)):
    got_flat, got_cum = top.get(f, (0, 0))
    # The folded file truncates each stack to whole microseconds.
    slack = stacks.get(f, 0) * 1000
    for what, got, want in (('flat', got_flat, flat.get(f, 0)), ('cum', got_cum, cum.get(f, 0))):
        if abs(got - want) > max(0.01 * want, slack):
            bad.append(f'{f} {what}: pprof {got} ns, report {want} ns')
print(f'{len(cum)} functions compared')
sys.exit('; '.join(bad[:4]) if bad else 0)
PY
}

# "Showing nodes accounting for X, 100% of TOTAL total" against the text
# report's header ("# 12.754 s off-CPU in 23 samples").
compare_totals() {	# TOP_NS TOP_SAMPLES TEXT
	python3 - "$@" <<'PY'
import re, sys
def total(p):
    m = re.search(r'of (\d+)(?:ns)? total', open(p).read())
    return int(m.group(1)) if m else None
ns, count = total(sys.argv[1]), total(sys.argv[2])
m = re.search(r'^# ([\d.]+) s off-CPU in (\d+) samples', open(sys.argv[3]).read(), re.M)
if not m or ns is None or count is None:
    sys.exit(f'totals missing: pprof {ns} ns {count} samples, report {m and m.group(0)}')
want_ns, want_count = float(m.group(1)) * 1e9, int(m.group(2))
print(f'pprof {ns} ns in {count} samples, report {want_ns:.0f} ns in {want_count}')
# The text header prints milliseconds.
ok = abs(ns - want_ns) <= 0.5e6 and count == want_count and count > 0
sys.exit(0 if ok else f'pprof {ns} ns in {count} samples, report {want_ns:.0f} ns in {want_count}')
PY
}

# Every sample of pprof -raw has the four labels; off-CPU time per
# (thread name, tid, process name, pid) equals the report's per thread.
compare_labels() {	# RAW FOLDED PROCESS
	python3 - "$@" <<'PY'
import re, sys
raw = open(sys.argv[1]).read()
body = raw.split('\nSamples:\n', 1)[1].split('\nLocations', 1)[0]
# A sample: "NS COUNT: location ids" (wrapped when long), then its labels.
samples = []
for line in body.splitlines()[1:]:
    m = re.match(r'\s*(\d+)\s+(\d+):', line)
    if m:
        samples.append([m.group(1), ''])
    elif samples:
        samples[-1][1] += line + '\n'
if not samples:
    sys.exit('pprof -raw printed no sample')
got = {}
for ns, labels in samples:
    l = dict(re.findall(r'(\w+):\[([^\]]*)\]', labels))
    missing = {'thread', 'tid', 'process', 'pid'} - set(l)
    if missing:
        sys.exit(f'a sample without label {sorted(missing)}: {labels.strip()}')
    if l['process'] != sys.argv[3]:
        sys.exit(f'process label {l["process"]}, want {sys.argv[3]}')
    k = (l['thread'], l['pid'], l['tid'])
    got[k] = got.get(k, 0) + int(ns)
want = {}
for line in open(sys.argv[2]):
    stack, us = line.rsplit(' ', 1)
    comm, ids = stack.split(';')[0].rsplit('-', 1)
    pid, tid = ids.split('/')
    want[(comm, pid, tid)] = want.get((comm, pid, tid), 0) + int(us) * 1000
bad = [f'{k}: pprof {got.get(k, 0)} ns, report {v} ns' for k, v in want.items()
       if abs(got.get(k, 0) - v) > max(0.01 * v, 64000)]
bad += [f'only in pprof: {k}' for k in got if k not in want]
print(f'{len(got)} threads, {len(samples)} samples')
sys.exit('; '.join(bad[:4]) if bad else 0)
PY
}

pprof_checks() {
	local p=$WORK/p.pb.gz
	"$OFFCPU" report -i "$WORK/r.data" --pprof "$p" >"$WORK/p.out" 2>"$WORK/p.err"
	rc=$?
	[ $rc -eq 0 ] && [ ! -s "$WORK/p.out" ] && [ ! -s "$WORK/p.err" ] && pass pprof-writes ||
		fail pprof-writes "exit $rc: $(head -c 200 "$WORK/p.err")"
	[ "$(head -c 2 "$p" | od -An -tx1 | tr -d ' ')" = 1f8b ] && pass pprof-gzipped ||
		fail pprof-gzipped "no gzip magic"
	if ! command -v go >/dev/null; then
		skip pprof-go-tool "go is not installed (golang-go, toolchain/deps.sh)"
		return
	fi
	"${PPROF[@]}" -top -nodecount=1000000 -nodefraction=0 -unit=ns "$p" >"$WORK/top" 2>"$WORK/top.err" ||
		{ fail pprof-go-reads "$(tail -n 2 "$WORK/top.err" | tr '\n' ' ')"; return; }
	pass pprof-go-reads
	"$OFFCPU" report -i "$WORK/r.data" -T --folded >"$WORK/folded" 2>/dev/null
	"$OFFCPU" report -i "$WORK/r.data" -n 0 >"$WORK/text" 2>/dev/null
	check pprof-top-matches-report compare_top "$WORK/top" "$WORK/folded"
	for f in blocker_nanosleep blocker_pipe_read blocker_mutex_wait blocker_long_sleep do_nanosleep; do
		grep -q " $f\$" "$WORK/top" && pass "pprof-shows-$f" || fail "pprof-shows-$f" "not in pprof -top"
	done
	"${PPROF[@]}" -top -sample_index=samples "$p" >"$WORK/top.n" 2>&1
	check pprof-totals-match-report compare_totals "$WORK/top" "$WORK/top.n" "$WORK/text"
	"${PPROF[@]}" -raw "$p" >"$WORK/raw" 2>&1
	check pprof-labels compare_labels "$WORK/raw" "$WORK/folded" blocker
	# The labels select: one thread's samples alone, by name.
	"${PPROF[@]}" -top -tagfocus=thread=bl-long "$p" >"$WORK/top.long" 2>&1
	grep -q ' blocker_long_sleep$' "$WORK/top.long" && ! grep -q ' blocker_pipe_read$' "$WORK/top.long" &&
		pass pprof-tagfocus-thread || fail pprof-tagfocus-thread "$(head -c 300 "$WORK/top.long")"
	grep -qE '^[0-9]+: .* \[kernel\.kallsyms\] [0-9a-f]{40} ' "$WORK/raw" &&
		pass pprof-kernel-build-id || fail pprof-kernel-build-id "no build-id on a mapping"
}

# Bad input: one line, exit RC (2: a bad option, 1: a failure at run time).
pprof_bad() {	# NAME RC ARGS...
	local name=$1 want=$2
	shift 2
	"$OFFCPU" report "$@" >"$WORK/o" 2>"$WORK/e"
	local rc=$?
	if [ $rc -eq "$want" ] && [ "$(grep -c . "$WORK/e")" -eq 1 ]; then pass "pprof-bad-$name"
	else fail "pprof-bad-$name" "exit $rc: $(head -c 200 "$WORK/e")"; fi
}

# Under script, stderr is a terminal: status lines "\r[ offcpu: 0.5 s, ... ]",
# at most twice a second, blanked ("\r   \r") before the summary.
check_status_tty() {	# TYPESCRIPT SECONDS
	python3 - "$@" <<'PY'
import re, sys
out = open(sys.argv[1], 'rb').read().decode('utf-8', 'replace')
secs = float(sys.argv[2])
lines = re.findall(r'\r(\[ offcpu: ([\d.]+) s, \d+ samples, \d+ lost, [\d.]+ MB \])', out)
if not lines:
    sys.exit('no status line on the terminal: ' + repr(out[:300]))
times = [float(t) for _, t in lines]
if len(lines) > 2 * secs + 1 or any(b - a < 0.45 for a, b in zip(times, times[1:])):
    sys.exit(f'more than twice a second: {times}')
end = out.rfind(lines[-1][0]) + len(lines[-1][0])
rest = out[end:]
m = re.match(r'\r( +)\r\[ offcpu: Captured and wrote', rest)
if not m or len(m.group(1)) < len(lines[-1][0]):
    sys.exit('status line not blanked before the summary: ' + repr(rest[:120]))
print(f'{len(lines)} status lines at {times}')
PY
}

status_checks() {
	local cmd
	if ! command -v script >/dev/null; then
		skip pprof-status-line "script is not installed (bsdutils)"
		return
	fi
	cmd=$(printf '%q -o %q -- sleep 1.6' "$OFFCPU" "$WORK/s.data")
	script -qc "$cmd" /dev/null </dev/null >"$WORK/tty.out" 2>&1
	check status-line-on-tty check_status_tty "$WORK/tty.out" 1.6
	# Still a terminal on stdout, but stderr goes to a file: no status line.
	script -qc "$cmd 2>$(printf %q "$WORK/s.err")" /dev/null </dev/null >"$WORK/tty2.out" 2>&1
	if grep -q 'Captured and wrote' "$WORK/s.err" && ! grep -q $'\r' "$WORK/s.err" &&
	   ! grep -q ' s, [0-9]* samples' "$WORK/s.err" "$WORK/tty2.out"; then
		pass status-line-absent-when-redirected
	else
		fail status-line-absent-when-redirected "$(head -c 300 "$WORK/s.err" | od -c | head -5)"
	fi
}

if record_blocker pprof; then
	pprof_checks
	pprof_bad with-svg 2 -i "$WORK/r.data" --pprof "$WORK/x.pb.gz" --svg "$WORK/x.svg"
	pprof_bad unwritable 1 -i "$WORK/r.data" --pprof "$WORK/no/such/dir/p.pb.gz"
	status_checks
fi
