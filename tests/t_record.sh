#!/bin/bash
# Host integration: record the blocker workload on the running kernel and
# read the result with Debian's perf.  OFFCPU may point at another build
# (the static x86_64 binary by default; the ASan build in t_asan.sh).
# NO_BTF=1: /sys/kernel/btf is hidden on purpose (t_nobtf.sh runs this in a
# mount namespace), so every recording goes through the BTF-free variant.
source "$(dirname "$0")/lib.sh"
BLOCKER=${BLOCKER:-$ROOT/build/x86_64/blocker}
CHECK="python3 $ROOT/tests/perf_check.py"
T=${TPREFIX:-record}

need_bpf "$T" "$OFFCPU" "$BLOCKER" || exit 0

# -- command: record until it exits.  Truth: every thread's off-CPU time per
# blocking function, as the workload measured it, against perf script's view
# (tests/perf_check.py check_truth: tolerances and the noise behind them).
"$OFFCPU" -o "$WORK/cmd.data" -- "$BLOCKER" -t 2 >"$WORK/cmd.out" 2>"$WORK/cmd.err"
rc=$?
if [ $rc -eq 0 ] && grep -q 'Captured and wrote' "$WORK/cmd.err"; then
	pass "$T-cmd-runs"
else
	fail "$T-cmd-runs" "exit $rc: $(tail -n 2 "$WORK/cmd.err" | tr '\n' ' ')"
fi
check "$T-cmd-truth" $CHECK compare "$WORK/cmd.data" "$WORK/cmd.out" \
	--kernel-func do_nanosleep --kernel-func vfs_read
explain "$WORK/cmd.err"
check "$T-cmd-perf-report-clean" $CHECK report "$WORK/cmd.data"

# --min-block 15 ms --max-block 100 ms: each function of the workload whose
# every call is one block inside those bounds has all its time, one whose
# every call is outside has none (the blocker's calls lines: shortest and
# longest call; both the sums of short blocks and the long blocks' events).
"$OFFCPU" --min-block 15000 --max-block 100000 -o "$WORK/mm.data" -- "$BLOCKER" -t 2 \
	>"$WORK/mm.out" 2>"$WORK/mm.err" || fail "$T-min-max-block-runs" "exit $?: $(tail -n 1 "$WORK/mm.err")"
check "$T-min-max-block" $CHECK compare "$WORK/mm.data" "$WORK/mm.out" \
	--min-block-us 15000 --max-block-us 100000
explain "$WORK/mm.err"

# -C: the workload pinned to the last CPU: all its truth with -C of that
# CPU, not one sample of it with -C of another.
last=$(( $(nproc) - 1 ))
if [ "$last" -gt 0 ]; then
	"$OFFCPU" -C $last -o "$WORK/cpu.data" -- taskset -c $last "$BLOCKER" -t 2 \
		>"$WORK/cpu.out" 2>"$WORK/cpu.err" || fail "$T-cpu-runs" "exit $?: $(tail -n 1 "$WORK/cpu.err")"
	"$OFFCPU" -C 0 -o "$WORK/cpu0.data" -- taskset -c $last "$BLOCKER" -t 1 \
		>/dev/null 2>"$WORK/cpu0.err" || fail "$T-cpu-runs" "exit $?: $(tail -n 1 "$WORK/cpu0.err")"
	n0=$(perf script -i "$WORK/cpu0.data" -F comm 2>/dev/null | grep -c 'bl-')
	if [ "$n0" -ne 0 ]; then
		fail "$T-cpu" "-C 0 recorded $n0 samples of a workload pinned to CPU $last"
	else
		check "$T-cpu" $CHECK compare "$WORK/cpu.data" "$WORK/cpu.out"
		explain "$WORK/cpu.err"
	fi
else
	skip "$T-cpu" "one CPU: no other to leave out"
fi

# --off-cpu-thresh 5: every 10 ms sleep of bl-sleep is a sample of its own
# (with its own time: no two the same), one per call the workload
# counted; the truth holds.
"$OFFCPU" --off-cpu-thresh 5 -o "$WORK/th.data" -- "$BLOCKER" -t 2 >"$WORK/th.out" 2>"$WORK/th.err" ||
	fail "$T-off-cpu-thresh-runs" "exit $?: $(tail -n 1 "$WORK/th.err")"
# Distinct times, not >= 10 ms apart: where a switch-in went unseen, the
# BTF-free variant ends the block at the CPU's last switch (t_nobtf).
read -r n calls gap <<<"$($CHECK sleeper "$WORK/th.data" "$WORK/th.out" 2>&1 | tail -n 1)"
if [ -n "$n" ] && [ "$n" = "$calls" ] && [ "${gap:-0.000}" != 0.000 ]; then
	check "$T-off-cpu-thresh" $CHECK compare "$WORK/th.data" "$WORK/th.out"
else
	fail "$T-off-cpu-thresh" "${n:-?} samples of bl-sleep for ${calls:-?} sleeps of 10 ms, shortest gap ${gap:-?} ms (want one each, apart)"
fi

# --off-cpu-thresh 20, milliseconds too (at 5 us or 20 us every one of those
# sleeps would be a sample of its own, as at 5 ms): the 10 ms sleeps of
# bl-sleep are under it, summed per stack and sent at the drains (about one
# a second), so far fewer samples than calls; bl-long's 700 ms sleeps are
# over it, one sample each; the truth holds.
"$OFFCPU" --off-cpu-thresh 20 -o "$WORK/th20.data" -- "$BLOCKER" -t 2 >"$WORK/th20.out" 2>"$WORK/th20.err" ||
	fail "$T-off-cpu-thresh-ms-runs" "exit $?: $(tail -n 1 "$WORK/th20.err")"
if python3 - "$WORK/th20.data" "$WORK/th20.out" >"$WORK/th20.chk" 2>&1 <<'EOF2'
import os, sys
sys.path.insert(0, os.path.join(os.environ['ROOT'], 'tests'))
import perf_check
truth = perf_check.read_truth(sys.argv[2])
facts = perf_check.read_call_facts(sys.argv[2])
out, _ = perf_check.perf_script(sys.argv[1])
samples = [x for x in perf_check.parse(out) if x['event'] == 'offcpu-time']
def of(comm, fn):
    tid = next(t for t, c in truth if c == comm)
    return sum(1 for x in samples if x['tid'] == tid and fn in {f[0] for f in x['frames']})
short, calls = of('bl-sleep', 'blocker_nanosleep'), facts['blocker_nanosleep']['voluntary']
long_, lcalls = of('bl-long', 'blocker_long_sleep'), facts['blocker_long_sleep']['voluntary']
print(f'bl-sleep: {short} samples of {calls} 10 ms sleeps; bl-long: {long_} of {lcalls} 700 ms sleeps')
assert calls >= 50 and short * 5 <= calls, f'{short} samples for {calls} sleeps under the threshold'
assert lcalls >= 1 and long_ == lcalls, f'{long_} samples for {lcalls} sleeps over it'
EOF2
then
	check "$T-off-cpu-thresh-ms" $CHECK compare "$WORK/th20.data" "$WORK/th20.out"
else
	fail "$T-off-cpu-thresh-ms" "$(tail -n 1 "$WORK/th20.chk")"
fi

# --max-stack 3: no kernel or user stack deeper than 3 frames; the default
# recording (cmd.data, 64) has deeper ones.
"$OFFCPU" --max-stack 3 -o "$WORK/ms.data" -- "$BLOCKER" -t 1 >/dev/null 2>"$WORK/ms.err" ||
	fail "$T-max-stack-runs" "exit $?: $(tail -n 1 "$WORK/ms.err")"
deepest() {	# FILE: the deepest kernel and user stacks of its offcpu-time samples
	python3 - "$1" <<'EOF2'
import os, sys
sys.path.insert(0, os.path.join(os.environ['ROOT'], 'tests'))
import perf_check
out, _ = perf_check.perf_script(sys.argv[1])
k = u = 0
for x in perf_check.parse(out):
    if x['event'] == 'offcpu-time':
        nk = sum('kernel' in d for _, d in x['frames'])
        k, u = max(k, nk), max(u, len(x['frames']) - nk)
print(k, u)
EOF2
}
read -r k3 u3 <<<"$(deepest "$WORK/ms.data")"
read -r k64 u64 <<<"$(deepest "$WORK/cmd.data")"
if [ "${k3:-9}" -le 3 ] && [ "${u3:-9}" -le 3 ] && [ "${k3:-0}" -ge 1 ] && [ "${u64:-0}" -gt 3 ] &&
   [ "${k64:-0}" -gt 3 ]; then
	pass "$T-max-stack"
else
	fail "$T-max-stack" "deepest kernel/user stacks: --max-stack 3 ${k3:-?}/${u3:-?}, default ${k64:-?}/${u64:-?}"
fi
mode=$(stat -c %a "$WORK/cmd.data")
[ "$mode" = 600 ] && pass "$T-output-mode-0600" || fail "$T-output-mode-0600" "mode $mode"

# The user stack cache (on by default, so every check here uses it).  Off:
# every stack walked, the same times.  Verify: every stack walked and
# compared with what the cache would have reused.  bl-mutexh sleeps from two
# call sites of mutex_holder with equal registers but for the caller's return
# address, so a key without it reuses the wrong stack and this fails.
"$OFFCPU" --stack-cache off -o "$WORK/off.data" -- "$BLOCKER" -t 2 >"$WORK/off.out" 2>"$WORK/off.err" ||
	fail "$T-stack-cache-off-runs" "exit $?: $(tail -n 1 "$WORK/off.err")"
check "$T-stack-cache-off-truth" $CHECK compare "$WORK/off.data" "$WORK/off.out"
explain "$WORK/off.err"
# Both caches: frame pointers (key: registers and two return addresses)
# and dwarf (key: registers and the stack words the unwinding read).
for cg in fp dwarf; do
	"$OFFCPU" -v --call-graph $cg --stack-cache verify -o "$WORK/sc.data" -- "$BLOCKER" -t 2 \
		>"$WORK/sc.out" 2>"$WORK/sc.err" ||
		fail "$T-stack-cache-verify-$cg-runs" "exit $?: $(tail -n 1 "$WORK/sc.err")"
	line=$(grep 'stack cache (verify)' "$WORK/sc.err")
	read -r reusable walked wrong <<<"$(sed -E 's/.*: ([0-9]+) of ([0-9]+) user.*, ([0-9]+) of those wrong.*/\1 \2 \3/' <<<"$line")"
	if [ -n "${NO_BTF:-}" ]; then
		# No task registers without BTF: no cache, and -v says so.
		grep -q '^user stack cache: no (BTF-free variant' "$WORK/sc.err" && [ -z "$line" ] &&
			pass "$T-stack-cache-none-said-$cg" ||
			fail "$T-stack-cache-none-said-$cg" "$(grep 'stack cache' "$WORK/sc.err" | tr '\n' ' ')"
	elif [ -n "$line" ] && [ "${wrong:-1}" -eq 0 ] && [ "${reusable:-0}" -gt 0 ] &&
	   [ "$reusable" -lt "$walked" ]; then
		pass "$T-stack-cache-verify-$cg-no-wrong-reuse"
	else
		fail "$T-stack-cache-verify-$cg-no-wrong-reuse" "${line:-no verify line: $(tail -n 1 "$WORK/sc.err")}"
	fi
done

# Stacks keyed by their frames: with --stack-entries 1 the map holds 64
# stacks (its minimum) and every stack goes there; the times per blocking
# path, with their kernel frames, must not change.
"$OFFCPU" -v --call-graph fp --stack-entries 1 -o "$WORK/spill.data" -- "$BLOCKER" -t 2 >"$WORK/spill.out" 2>"$WORK/spill.err" ||
	fail "$T-spill-runs" "exit $?: $(tail -n 1 "$WORK/spill.err")"
check "$T-spill-truth" $CHECK compare "$WORK/spill.data" "$WORK/spill.out" \
	--kernel-func do_nanosleep --kernel-func vfs_read
explain "$WORK/spill.err"
line=$(grep 'stacks keyed by their frames' "$WORK/spill.err")
read -r us ks <<<"$(sed -E 's/.*: ([0-9]+) user and ([0-9]+) kernel.*/\1 \2/' <<<"$line")"
if [ "${us:-0}" -ge 3 ] && [ "${ks:-0}" -ge 1 ] && ! grep -q 'not recorded' "$WORK/spill.err"; then
	pass "$T-spill-keeps-colliding-stacks"
else
	fail "$T-spill-keeps-colliding-stacks" "${line:-no stacks-keyed line}; $(grep 'not recorded' "$WORK/spill.err" | tr '\n' ' ')"
fi

# -p: an existing process, attached after it started.  Its threads that
# block all the time (bl-sleep, bl-piperd, bl-pipewr) must have been off the
# CPU for about the whole recording: at least from "offcpu: recording" to
# the workload's end as this script saw them, at most from offcpu's start;
# -10 % and +3 % (this script's view of the window; on a loaded machine
# those threads also wait for a CPU at times), a block at the start (20 ms)
# and the polling.
"$BLOCKER" -t 3 >"$WORK/p.out" &
bp=$!
launch=$(date +%s%N)
"$OFFCPU" -v -p $bp -o "$WORK/p.data" 2>"$WORK/p.err" &
op=$!
wait_recording "$WORK/p.err"
rec_start=$(date +%s%N)
while kill -0 $bp 2>/dev/null; do sleep 0.01; done
rec_ms=$(( ($(date +%s%N) - rec_start) / 1000000 ))
max_ms=$(( ($(date +%s%N) - launch) / 1000000 ))
wait $bp
wait $op
rc=$?
if [ $rc -eq 0 ]; then
	$CHECK summary "$WORK/p.data" >"$WORK/p.json" 2>&1
	if python3 - "$WORK/p.json" $bp $rec_ms $max_ms >"$WORK/p.chk" 2>&1 <<'EOF'
import json, sys
s = json.load(open(sys.argv[1])); pid = sys.argv[2]
rec, most = float(sys.argv[3]) * 1e6, float(sys.argv[4]) * 1e6
pids = set(s['by_pid'])
assert pids == {pid}, f'samples of other processes: {sorted(pids)[:5]}'
funcs, comms = dict(s['top_funcs']), s['by_comm']
assert rec > 2e9, f'recorded only {rec / 1e6:.0f} ms of a 3 s workload'
for f, c in (('blocker_nanosleep', 'bl-sleep'), ('blocker_pipe_read', 'bl-piperd'),
             ('blocker_pipe_pause', 'bl-pipewr')):
    for what, got in ((f, funcs.get(f, 0)), (c, comms.get(c, 0))):
        assert 0.90 * rec - 40e6 <= got <= 1.03 * most + 40e6, \
            f'{what}: {got / 1e6:.0f} ms for {rec / 1e6:.0f} ms recorded'
print(f'{rec / 1e6:.0f} ms recorded')
EOF
	then pass "$T-pid"; else fail "$T-pid" "$(tail -n 1 "$WORK/p.chk")"; fi
else
	fail "$T-pid" "exit $rc: $(tail -n 1 "$WORK/p.err")"
fi

# -t: one thread, picked by name; nothing of its siblings.  That thread is
# off the CPU all the time: about the whole recording, which -d 1 ends at
# the first 100 ms poll after 1 s of recording, and which starts when offcpu
# attaches, before -d counts: at least 1 s (less 10 % and the block under way
# at the start), at most offcpu's run time.
"$BLOCKER" -t 3 >/dev/null &
bp=$!
sleep 0.3
tid=$(grep -l '^bl-sleep$' /proc/$bp/task/*/comm | head -1 | cut -d/ -f5)
t0=$(date +%s%N)
"$OFFCPU" -t "$tid" -d 1 -o "$WORK/t.data" 2>"$WORK/t.err"
rc=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
wait $bp
$CHECK summary "$WORK/t.data" >"$WORK/t.json" 2>&1
if [ $rc -eq 0 ] && python3 - "$WORK/t.json" $ms >"$WORK/t.chk" 2>&1 <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
funcs = dict(s['top_funcs'])
got = funcs.get('blocker_nanosleep', 0)
run = float(sys.argv[2]) * 1e6
assert 0.89e9 <= got <= run, f'blocker_nanosleep {got / 1e6:.0f} ms in -d 1, offcpu ran {run / 1e6:.0f} ms'
for f in ('blocker_pipe_read', 'blocker_mutex_wait'):
    assert f not in funcs, f'{f} of another thread recorded'
EOF
then pass "$T-tid"; else fail "$T-tid" "exit $rc: $(tail -n 1 "$WORK/t.chk")"; fi

# -d, system wide; a process that exits during the recording keeps its name
# and symbols (perf --off-cpu shows it as :PID [unknown]).
# The workload starts once offcpu says it records (a loaded machine or the
# sanitizer build can take longer than a fixed delay to get there).
start=$(date +%s%N)
"$OFFCPU" -v -d 4 -o "$WORK/d.data" 2>"$WORK/d.err" &
op=$!
for _ in $(seq 1 100); do grep -qs '^offcpu: recording' "$WORK/d.err" && break; sleep 0.05; done
# 2 s, like every truth check: at 1 s, one 30 ms block that the recording
# lacks (seen now and then on this host, cause not found yet) is 3.4 %.
"$BLOCKER" -t 2 >"$WORK/d.out" &
bp=$!
wait $op
rc=$?
elapsed=$(( ($(date +%s%N) - start) / 1000000 ))
wait $bp
if [ $rc -eq 0 ] && [ $elapsed -ge 3900 ] && [ $elapsed -lt 7000 ]; then
	pass "$T-duration"
else
	fail "$T-duration" "exit $rc after $elapsed ms"
fi
check "$T-exited-process-named" $CHECK compare "$WORK/d.data" "$WORK/d.out" --pid $bp
explain "$WORK/d.err"
check "$T-system-perf-report-clean" $CHECK report "$WORK/d.data"

# Ctrl-C (SIGINT), SIGTERM and SIGHUP end a recording early with a complete
# file: exit 0, and a thread of the workload that is off the CPU all the
# time (bl-sleep) has about the whole recording in it.  The window is this
# script's view: at least from "offcpu: recording" to the signal, at most
# from offcpu's start to its exit (it attaches before it says so, and
# records until it detaches).  Less 10 % (polling; on a loaded machine
# bl-sleep also waits for a CPU at times) and a block at each end (30 ms).
"$BLOCKER" -t 60 >/dev/null &
bp=$!
for sig in INT TERM HUP; do
	launch=$(date +%s%N)
	"$OFFCPU" -v -o "$WORK/$sig.data" 2>"$WORK/$sig.err" &
	op=$!
	wait_recording "$WORK/$sig.err"
	t0=$(date +%s%N)
	sleep 1.5
	kill -$sig $op
	lo=$(( ($(date +%s%N) - t0) / 1000000 * 90 / 100 - 30 ))
	wait $op
	rc=$?
	hi=$(( ($(date +%s%N) - launch) / 1000000 * 103 / 100 + 30 ))
	if [ $rc -eq 0 ] && $CHECK has "$WORK/$sig.data" --pid $bp --comm bl-sleep --func blocker_nanosleep \
		--min-ms $lo --max-ms $hi >"$WORK/$sig.chk" 2>&1; then
		pass "$T-sig$sig"
	else
		fail "$T-sig$sig" "exit $rc: $(tail -n 1 "$WORK/$sig.chk") $(tail -n 1 "$WORK/$sig.err")"
	fi
done
kill $bp 2>/dev/null
wait $bp 2>/dev/null

# The profiled command killed or crashed: offcpu exits as it did, like perf
# (128 + the signal), so a crash under offcpu is not hidden, and the file is
# complete: it holds the command's blocks.
"$OFFCPU" -o "$WORK/killed.data" -- "$BLOCKER" -t 30 >/dev/null 2>"$WORK/killed.err" &
op=$!
sleep 1.5
pkill -KILL -P $op
wait $op
rc=$?
if [ $rc -eq 137 ] && $CHECK has "$WORK/killed.data" --comm bl-sleep --func blocker_nanosleep \
	--min-ms 500 >"$WORK/killed.chk" 2>&1; then
	pass "$T-command-killed"
else
	fail "$T-command-killed" "exit $rc (want 137): $(tail -n 1 "$WORK/killed.chk") $(tail -n 1 "$WORK/killed.err")"
fi
"$OFFCPU" -o "$WORK/segv.data" -- sh -c 'sleep 0.3; kill -SEGV $$' 2>"$WORK/segv.err"
rc=$?
# (By its kernel function: a short-lived child's name is sometimes lost.)
if [ $rc -eq 139 ] && $CHECK has "$WORK/segv.data" --func do_nanosleep --min-ms 280 --max-ms 400 \
	>"$WORK/segv.chk" 2>&1; then
	pass "$T-command-crashed-exit-139"
else
	fail "$T-command-crashed-exit-139" "exit $rc: $(tail -n 1 "$WORK/segv.chk") $(tail -n 1 "$WORK/segv.err")"
fi
"$OFFCPU" -o "$WORK/exit3.data" -- sh -c 'exit 3' 2>"$WORK/exit3.err"
rc=$?
[ $rc -eq 3 ] && pass "$T-command-exit-code" || fail "$T-command-exit-code" "exit $rc, want 3"

# An existing output is kept as .old, as perf does: the very file, whose
# samples still match the workload, and the new one complete.
cp "$WORK/cmd.data" "$WORK/cmd.data.before"
"$OFFCPU" -o "$WORK/cmd.data" -- sleep 0.2 2>"$WORK/old.err"
rc=$?
if [ $rc -eq 0 ] && cmp -s "$WORK/cmd.data.old" "$WORK/cmd.data.before" &&
   $CHECK compare "$WORK/cmd.data.old" "$WORK/cmd.out" >"$WORK/old.chk" 2>&1 &&
   $CHECK has "$WORK/cmd.data" --func do_nanosleep --min-ms 180 --max-ms 250 >>"$WORK/old.chk" 2>&1; then
	pass "$T-keeps-old"
else
	fail "$T-keeps-old" "exit $rc: $(tail -n 1 "$WORK/old.chk") $(cmp "$WORK/cmd.data.old" "$WORK/cmd.data.before" 2>&1)"
fi

# -F: on-CPU samples (cpu-clock) beside offcpu-time in the same file, at the
# rate asked: two rates 5x apart, each sample's period (the CPU time it
# stands for, by the kernel's own clock) about 1 s / HZ, whatever the load.
freq_periods() {	# HZ FILE: the median cpu-clock period against 1 s / HZ
	perf script -i "$2" -F event,period 2>/dev/null | python3 -c '
import sys
hz = int(sys.argv[1])
p = sorted(int(next(t for t in l.split() if t.isdigit())) for l in sys.stdin
           if any(t.startswith("cpu-clock") for t in l.split()))
if len(p) < 10:
    sys.exit(f"{len(p)} cpu-clock samples")
med = p[len(p) // 2]
print(f"-F {hz}: {len(p)} samples, median period {med} ns, 1 s / HZ {10**9 // hz} ns")
sys.exit(0 if abs(med - 10**9 / hz) <= 0.2 * 10**9 / hz else f"-F {hz}: median period {med} ns, want {10**9 // hz}")' "$1"
}
# (At 997 Hz most samples' stack copies find the ring full, counted as
# lost: the periods of those kept still tell the rate.)
for hz in 199 997; do
	"$OFFCPU" -F $hz -o "$WORK/f$hz.data" -- sh -c 'i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done; sleep 0.3' 2>"$WORK/f$hz.rec"
	rc=$?
	: >"$WORK/f$hz.err"
	[ $hz = 199 ] && perf report -i "$WORK/f$hz.data" --stdio >"$WORK/f$hz.rep" 2>"$WORK/f$hz.err"
	[ $rc -eq 0 ] || echo "offcpu exited $rc: $(tail -n 1 "$WORK/f$hz.rec")" >>"$WORK/f$hz.err"
done
n=$(sed -n "s/^# Samples: \([0-9]*\) *of event 'cpu-clock'.*/\1/p" "$WORK/f199.rep")
if [ "${n:-0}" -ge 10 ] && grep -q "of event 'offcpu-time'" "$WORK/f199.rep" && [ ! -s "$WORK/f199.err" ]; then
	pass "$T-on-cpu-samples"
else
	fail "$T-on-cpu-samples" "cpu-clock samples: ${n:-none}; $(head -c 200 "$WORK/f199.err")"
fi
if [ ! -s "$WORK/f997.err" ] && freq_periods 199 "$WORK/f199.data" >"$WORK/freq.chk" 2>&1 &&
   freq_periods 997 "$WORK/f997.data" >>"$WORK/freq.chk" 2>&1; then
	pass "$T-freq-periods"
	sed 's/^/    /' "$WORK/freq.chk"
elif [ -s "$WORK/f997.err" ]; then
	fail "$T-freq-periods" "$(head -c 200 "$WORK/f997.err")"
else
	fail "$T-freq-periods" "$(tail -n 1 "$WORK/freq.chk")"
fi

# Disk full: a clear error naming the file and the cause, a non-zero exit, and
# what reached the disk kept as a valid file.
mkdir -p "$WORK/full"
if mount -t tmpfs -o size=64k tmpfs "$WORK/full" 2>/dev/null; then
	# Every block a sample: ~100 KB from this workload, more than fits.
	"$OFFCPU" --off-cpu-thresh 0 -o "$WORK/full/p.data" -- "$BLOCKER" -t 2 >/dev/null 2>"$WORK/full.err"
	rc=$?
	if [ $rc -ne 0 ] && grep -q "offcpu: $WORK/full/p.data: No space left on device" "$WORK/full.err" &&
	   perf report -i "$WORK/full/p.data" --stdio >/dev/null 2>"$WORK/full.rep" &&
	   ! ls "$WORK"/full/*.tmp.* >/dev/null 2>&1; then
		pass "$T-disk-full-keeps-valid-file"
	else
		fail "$T-disk-full-keeps-valid-file" "exit $rc: $(head -c 200 "$WORK/full.err") $(head -c 100 "$WORK/full.rep")"
	fi
	umount "$WORK/full"
else
	skip "$T-disk-full-keeps-valid-file" "cannot mount a small tmpfs"
fi

# Kernel stacks start at __schedule: the range they are cut at (-v says how
# it was found: the kernel's %pB of a frame, else /proc/kallsyms) is the
# one kallsyms gives (its address up to the next higher of any symbol), and
# no stack still starts in the tracepoint glue or the BPF program.
"$OFFCPU" -v -o "$WORK/cut.data" -- "$BLOCKER" -t 1 >/dev/null 2>"$WORK/cut.err" ||
	fail "$T-kernel-cut-runs" "exit $?: $(tail -n 1 "$WORK/cut.err")"
said=$(sed -n 's/.*kernel stacks cut at __schedule \[\(0x[0-9a-f]*\), \(0x[0-9a-f]*\)) from .*/\1 \2/p' \
	"$WORK/cut.err")
want=$(python3 -c '
import sys
addrs, lo = [], None
for line in open("/proc/kallsyms"):
    f = line.split()
    a = int(f[0], 16)
    addrs.append(a)
    if lo is None and f[2] == "__schedule":
        lo = a
print("%#x %#x" % (lo, min(a for a in addrs if a > lo)) if lo else "")')
"$OFFCPU" report -i "$WORK/cut.data" -f 2>/dev/null |
	sed 's/ [0-9]*$//; s/.*;//' | grep '_\[k\]$' > "$WORK/cut.leaves"
glue=$(grep -cE '^(bpf_|__bpf_trace|__traceiter|__trace_|trace_)' "$WORK/cut.leaves")
if [ -n "$want" ] && [ "$said" = "$want" ] && [ "$glue" -eq 0 ] &&
   grep -q '^__schedule_\[k\]$' "$WORK/cut.leaves"; then
	pass "$T-kernel-cut-at-schedule"
	grep -o 'kernel stacks cut at .*' "$WORK/cut.err"
else
	fail "$T-kernel-cut-at-schedule" "said '$said', kallsyms '$want', $glue stacks starting in glue"
fi

# perf 5.10 (bullseye's, fetched into the cache by make test) reads
# the recording too: older perf adds PERF_SAMPLE_RAW to bpf-output events.
P510=${OFFCPU_CACHE:-$HOME/.cache/offcpu}/perf510/root
if [ -x "$P510/usr/bin/perf_5.10" ]; then
	# p.data: the -p recording of the workload (cmd.data was replaced above).
	LD_LIBRARY_PATH=$P510/usr/lib/x86_64-linux-gnu "$P510/usr/bin/perf_5.10" report \
		-i "$WORK/p.data" --stdio >"$WORK/p510.out" 2>"$WORK/p510.err"
	if grep -q "of event 'offcpu-time'" "$WORK/p510.out" && ! grep -qi error "$WORK/p510.err"; then
		pass "$T-perf-5.10-reads-it"
	else
		fail "$T-perf-5.10-reads-it" "$(tr '\n' ' ' < "$WORK/p510.err" | head -c 300)"
	fi
else
	fail "$T-perf-5.10-reads-it" "perf 5.10 not fetched (make test: tests/fetch-perf510.sh)"
fi
