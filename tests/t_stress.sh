#!/bin/bash
# Short stress checks (full length: STRESS_SECONDS=60 make stress):
#  - fork/exit storm: thousands of short processes while recording with the
#    hash variant; the per-thread map must not keep entries of dead threads.
#  - overload: perf bench sched messaging at full speed; offcpu keeps up or
#    counts what it drops, finishes a valid file, and its memory stays bounded.
source "$(dirname "$0")/lib.sh"
SECS=${STRESS_SECONDS:-4}

if [ "$(id -u)" != 0 ]; then
	skip stress "needs root"
	exit 0
fi
# The hash variant frees a thread's entry at exit: the one that can leak.
HASH=tp_btf,hash
if [ ! -r /sys/kernel/btf/vmlinux ] || [ -n "${OFFCPU_TEST_FORCE_BTF:-}" ]; then
	use_host_btf || { skip stress "$BTF_WHY"; exit 0; }
	HASH=raw_tp,hash
fi
BPFTOOL=$("$ROOT/btf/min_btf.sh" bpftool)

# Recording until told to stop (a slow storm must not outlive it: the map
# is read while it records).
"$OFFCPU" --variant $HASH -d $((SECS + 120)) -o "$WORK/storm.data" 2>"$WORK/storm.err" &
op=$!
sleep 1
end=$(( $(date +%s) + SECS ))
n=0
while [ "$(date +%s)" -lt $end ]; do
	for i in $(seq 1 50); do sleep 0.001 & done
	wait $(jobs -p | grep -v "^$op$") 2>/dev/null
	n=$((n + 50))
done
threads=$(ls /proc/*/task 2>/dev/null | grep -c '^[0-9]')
# bpftool must answer: a failed dump would count 0 entries, no leak.  The
# map is this offcpu's (other recordings may run at the same time).
mine=$(sed -n 's/^map_id:[[:space:]]*//p' /proc/$op/fdinfo/* 2>/dev/null | tr '\n' ' ')
map_id=$("$BPFTOOL" -j map show 2>"$WORK/dump.err" | python3 -c '
import json, sys
mine = sys.argv[1].split()
for m in json.load(sys.stdin):
    if m.get("name") == "tid_start" and str(m["id"]) in mine:
        print(m["id"])' "$mine")
"$BPFTOOL" -j map dump id "${map_id:-0}" >"$WORK/dump.json" 2>>"$WORK/dump.err"
dump_rc=$?
entries=$(python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))))' "$WORK/dump.json" 2>/dev/null)
kill -INT $op
wait $op
rc=$?
echo "fork storm: $n processes, ${entries:-no} tid_start entries, $threads live threads"
if [ $dump_rc -ne 0 ] || [ -z "$entries" ]; then
	fail stress-fork-storm-no-leak "bpftool map dump failed ($dump_rc): $(head -c 200 "$WORK/dump.err")"
elif [ $rc -eq 0 ] && [ "$entries" -le $((threads + 64)) ]; then
	pass "stress-fork-storm-no-leak-$n-procs"
else
	fail stress-fork-storm-no-leak "exit $rc; $entries entries in tid_start for $threads live threads after $n processes"
fi
grep -q 'per-thread storage full' "$WORK/storm.err" && fail stress-fork-storm-storage "storage full" \
	|| pass stress-fork-storm-storage

"$OFFCPU" -d "$SECS" --off-cpu-thresh 0 -o "$WORK/load.data" 2>"$WORK/load.err" &
op=$!
sleep 0.5
timeout $((SECS + 5)) perf bench sched messaging -g 20 -l 100000 >/dev/null 2>&1 &
lp=$!
peak=0
while kill -0 $op 2>/dev/null; do
	r=$(awk '/^VmRSS/ { print $2 }' /proc/$op/status 2>/dev/null)
	[ "${r:-0}" -gt $peak ] && peak=$r
	sleep 0.2
done
wait $op
rc=$?
kill $lp 2>/dev/null
wait $lp 2>/dev/null
if [ $rc -eq 0 ] && perf report -i "$WORK/load.data" --stdio >/dev/null 2>&1; then
	pass stress-overload-valid-file
else
	fail stress-overload-valid-file "exit $rc: $(tail -n 1 "$WORK/load.err")"
fi
# A recording that drops must say so; one that does not, must not have lost anything.
lost=$(sed -n 's/.*(\([0-9]*\) samples, \([0-9]*\) lost).*/\2/p' "$WORK/load.err")
echo "overload: $(grep -h 'offcpu:' "$WORK/load.err" | tr '\n' ' ') peak RSS ${peak} KiB"
[ -n "$lost" ] && pass stress-overload-summary || fail stress-overload-summary "no summary line"
# A full ring buffer loses nothing (those blocks are summed): what is lost
# can only be what the full sums map refused, and the summary says so.
if [ "${lost:-0}" -eq 0 ] || grep -q 'short blocks lost (sums map full)' "$WORK/load.err"; then
	pass stress-overload-losses-explained
else
	fail stress-overload-losses-explained "$lost lost without a cause: $(grep -h 'offcpu:' "$WORK/load.err" | tr '\n' ' ')"
fi
[ "$peak" -lt $((64 * 1024)) ] && pass stress-overload-rss-bounded \
	|| fail stress-overload-rss-bounded "peak RSS $peak KiB"
