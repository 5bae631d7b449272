#!/bin/bash
# offcpu behind its program: the user stack cache must never hand a block an
# id user space has freed.  offcpu is stopped (SIGSTOP) 0.45 s at a time,
# twenty times, while build/host/alternate's threads block in two places in
# turn: meanwhile each thread's blocks of one shape reuse the cache entry,
# the others copy; catching up, user space replaces the entries and retires
# the ids that blocks still in progress carry (a guest stalled 600 ms in a
# CI run lost the user stacks of every thread's next block so).  Every
# sample must keep its user stack (-v counts those whose id named nothing:
# "samples without their user stack"), and the stack cache must have been
# used at all (else nothing was tested).
set -uo pipefail
source "$(dirname "$0")/lib.sh"
T=stall
ALT=$ROOT/build/host/alternate
need_bpf $T "$OFFCPU" "$ALT" || exit 0

"$OFFCPU" -v -o "$WORK/s.data" -- "$ALT" 20 >"$WORK/s.out" 2>"$WORK/s.err" &
p=$!
sleep 0.5
for i in $(seq 20); do
	kill -STOP $p 2>/dev/null || break
	sleep 0.45
	kill -CONT $p
	# Uneven gaps: the drain of the sums (every second) falls at every phase.
	sleep 0.$((3 + i % 6))
done
wait $p
rc=$?
if [ $rc != 0 ]; then
	fail $T-runs "exit $rc: $(tail -n 1 "$WORK/s.err")"
	exit 0
fi
reused=$(sed -nE 's/.*stack cache: ([0-9]+) user stacks reused.*/\1/p' "$WORK/s.err")
lost=$(sed -nE 's/.*offcpu: ([0-9]+) samples without their user stack.*/\1/p' "$WORK/s.err")
echo "    $(grep -m1 'offcpu: stack cache' "$WORK/s.err")"
if [ "${reused:-0}" -gt 0 ] && [ -z "$lost" ]; then
	pass $T-no-user-stack-lost
else
	fail $T-no-user-stack-lost "reused ${reused:-none}, ${lost:-0} samples without their user stack"
fi
check $T-perf-report-clean python3 "$ROOT/tests/perf_check.py" report "$WORK/s.data"
