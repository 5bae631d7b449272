#!/bin/bash
# The BTF-free variant (tp,hash) on the host: /sys/kernel/btf hidden under a
# tmpfs in a private mount namespace (unshare -m), as on a kernel built
# without BTF.  t_record.sh runs there whole (its checks against the
# workload's own times); then the BTF chain as probe shows it, --btf none,
# kernel threads, per-thread entries of dead threads, and a kernel with
# neither BTF nor tracefs (the perf backend's software event).
source "$(dirname "$0")/lib.sh"
BLOCKER=${BLOCKER:-$ROOT/build/x86_64/blocker}
CHECK="python3 $ROOT/tests/perf_check.py"

if [ "$(id -u)" != 0 ] || ! command -v unshare >/dev/null; then
	skip nobtf "needs root and unshare"
	exit 0
fi
# hidden CMD...: CMD with /sys/kernel/btf empty (and the rest as it is).
hidden() {
	unshare -m sh -c 'mount -t tmpfs none /sys/kernel/btf && exec "$@"' sh "$@"
}

hidden "$OFFCPU" probe >"$WORK/probe" 2>&1
rc=$?
if [ $rc -eq 0 ] && grep -q '^variant: tp,hash' "$WORK/probe" &&
   grep -q '^btf chain: kernel BTF: /sys/kernel/btf/vmlinux missing -> embedded: none for .* -> --btf: not given -> none: classic tracepoints' "$WORK/probe" &&
   grep -q '^load: ok' "$WORK/probe"; then
	pass nobtf-probe-chain
else
	fail nobtf-probe-chain "exit $rc: $(tr '\n' ' ' <"$WORK/probe" | head -c 400)"
fi

# Every recording check of t_record.sh, through the BTF-free variant.
: >"$WORK/results"
hidden env NO_BTF=1 TPREFIX=nobtf-record RESULTS="$WORK/results" \
	bash "$ROOT/tests/t_record.sh" >"$WORK/record.log" 2>&1
cat "$WORK/results" >>"$RESULTS"
cat "$WORK/results"
grep -q '^PASS nobtf-record-cmd-runs' "$WORK/results" ||
	fail nobtf-record "no recording ran: $(tail -n 3 "$WORK/record.log" | tr '\n' ' ')"

# --btf none forces it where BTF exists; -v says which variant ran.
"$OFFCPU" -v --btf none -o "$WORK/none.data" -- "$BLOCKER" -t 1 >"$WORK/none.out" 2>"$WORK/none.err"
if grep -q '^variant: tp,hash' "$WORK/none.err"; then
	check nobtf-btf-none-times $CHECK compare "$WORK/none.data" "$WORK/none.out"
	explain "$WORK/none.err"
else
	fail nobtf-btf-none-times "$(tail -n 2 "$WORK/none.err" | tr '\n' ' ')"
fi
"$OFFCPU" probe --btf none --variant raw_tp,hash >"$WORK/conflict" 2>&1
[ $? -ne 0 ] && [ "$(wc -l <"$WORK/conflict")" -eq 1 ] && grep -q 'btf none' "$WORK/conflict" &&
	pass nobtf-btf-none-conflict || fail nobtf-btf-none-conflict "$(cat "$WORK/conflict")"

# Kernel threads are recognised without task fields: none in a default
# recording of the whole system, some with --include-kernel-threads.
kthread_tids() {	# processes whose /proc stat flags have PF_KTHREAD
	local s line
	for s in /proc/[0-9]*/stat; do
		read -r line 2>/dev/null <"$s" || continue
		set -- ${line##*) }	# the name may hold spaces: fields after the last ")"
		(( $7 & 0x200000 )) && echo "${line%% *}"
	done | sort -u
}
# A quiet machine (CI's) may have no user thread that blocks and wakes in
# 2 s: a sleeper loop of our own runs through each recording.
sleeper_loop() { bash -c 'for i in $(seq 50); do sleep 0.05; done' & }
kthread_tids >"$WORK/kt.before"
sleeper_loop
hidden "$OFFCPU" -d 2 -o "$WORK/sys.data" 2>"$WORK/sys.err"
wait $!
sleeper_loop
hidden "$OFFCPU" --include-kernel-threads -d 2 -o "$WORK/kt.data" 2>"$WORK/kt.err"
wait $!
kthread_tids >"$WORK/kt.after"
sort -u "$WORK/kt.before" "$WORK/kt.after" >"$WORK/kt"
samples_tids() { perf script -i "$1" -F tid 2>/dev/null | tr -d ' ' | sort -u; }
samples_tids "$WORK/sys.data" >"$WORK/sys.tids"
samples_tids "$WORK/kt.data" >"$WORK/kt.tids"
in_sys=$(comm -12 "$WORK/kt" "$WORK/sys.tids" | wc -l)
in_kt=$(comm -12 "$WORK/kt" "$WORK/kt.tids" | wc -l)
if [ -s "$WORK/sys.tids" ] && [ "$in_sys" -eq 0 ] && [ "$in_kt" -gt 0 ]; then
	pass nobtf-kernel-threads
else
	fail nobtf-kernel-threads "$in_sys kernel threads in a -u recording of $(wc -l <"$WORK/sys.tids") threads, $in_kt with --include-kernel-threads; $(tail -n 2 "$WORK/sys.err" | tr '\n' ' ')"
fi

# Fork storm: entries of dead threads leave tid_start (sched_process_free).
# The map is dumped while this offcpu still records (by its id: other
# offcpu processes may have a tid_start too), then the recording is ended
# (-d only bounds it: a loaded machine takes minutes for the storm).
BPFTOOL=$("$ROOT/btf/min_btf.sh" bpftool 2>/dev/null)
map_entries() {	# PID NAME: entries of map NAME held by process PID, or "none"
	local ids id
	ids=$(cat /proc/"$1"/fdinfo/* 2>/dev/null | sed -n 's/^map_id:[[:space:]]*//p')
	id=$("$BPFTOOL" -j map list 2>/dev/null | python3 -c '
import json, sys
ids = set(sys.argv[2].split())
for m in json.load(sys.stdin):
    if m.get("name") == sys.argv[1] and str(m["id"]) in ids:
        print(m["id"])' "$2" "$ids" | head -n 1)
	[ -n "$id" ] || { echo none; return; }
	"$BPFTOOL" -j map dump id "$id" | python3 -c 'import json, sys; print(len(json.load(sys.stdin)))'
}
if [ -x "$BPFTOOL" ]; then
	"$OFFCPU" --btf none -d 900 -o "$WORK/storm.data" 2>"$WORK/storm.err" &
	op=$!
	sleep 1
	for r in $(seq 1 30); do
		for i in $(seq 1 50); do sleep 0.001 & done
		wait $(jobs -p | grep -v "^$op$") 2>/dev/null
	done
	threads=$(ls /proc/*/task 2>/dev/null | grep -c '^[0-9]')
	entries=$(map_entries $op tid_start)
	kill -INT $op
	wait $op
	rc=$?
	if [ $rc -eq 0 ] && [ "$entries" != none ] && [ "$entries" -le $((threads + 64)) ]; then
		pass nobtf-fork-storm-no-leak
	else
		fail nobtf-fork-storm-no-leak "exit $rc; $entries tid_start entries for $threads live threads after 1500 processes"
	fi
else
	skip nobtf-fork-storm-no-leak "no bpftool"
fi

# Neither BTF nor tracefs (all of /sys/kernel hidden): no BPF program can
# be typed and sched_switch is missing too, so the perf backend records
# with the context-switch software event (t_perfbackend checks its
# recordings); probe names both reasons on the backend line.
unshare -m sh -c 'mount -t tmpfs none /sys/kernel && exec "$@"' sh \
	"$OFFCPU" probe >"$WORK/neither.out" 2>&1
rc=$?
if [ $rc -eq 0 ] && grep -q '^backend: perf (no BTF for kernel .* and no tracepoint format.*; context-switch software event: tracefs has no sched_switch: ' "$WORK/neither.out"; then
	pass nobtf-neither-swevent
else
	fail nobtf-neither-swevent "exit $rc: $(grep -m1 '^backend' "$WORK/neither.out" || tail -n 1 "$WORK/neither.out")"
fi
