#!/bin/busybox sh
# /init of the matrix initramfs: mount what offcpu needs, run the checks,
# send the results (and the perf.data, base64) over the console between
# @@BEGIN/@@END markers, power off.  The host reads the markers (run.sh).
/bin/busybox mkdir -p /bin /proc /sys /dev /tmp
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mount -t bpf bpf /sys/fs/bpf 2>/dev/null
echo 1 > /proc/sys/kernel/printk 2>/dev/null
# Seconds the recording may take before it counts as hung (the workload
# itself runs 2 s plus ~1 s at start and exit).
RECORD_LIMIT=40
# The board's cell options (run.sh writes them from board/BOARD.mk):
# BLOCKER_ARGS, offcpu's options for the frame-pointer workloads; DISTRO_FP,
# also record the distribution-built workload with --call-graph fp.
[ -r /cell.conf ] && . /cell.conf

section() {	# NAME CMD...: output and exit status of CMD between markers
	name=$1
	shift
	echo "@@BEGIN $name"
	"$@" 2>&1
	echo "@@END $name rc=$?"
}

# Where every thread of offcpu and the workload sleeps, for a hung recording.
hang_report() {
	for t in /proc/[0-9]*/task/[0-9]*; do
		comm=$(cat "$t/comm" 2>/dev/null) || continue
		case $comm in offcpu|blocker|bl-*|stuck|st-*|distro|ds-*) ;; *) continue ;; esac
		echo "-- $t $comm state=$(cut -d' ' -f3 "$t/stat") wchan=$(cat "$t/wchan" 2>/dev/null)"
		cat "$t/stack" 2>/dev/null
	done
}

# wait_recording PID TAG: its exit status in rc; a recording still running
# after RECORD_LIMIT seconds is hung: section hangTAG, then it is stopped.
wait_recording() {
	pid=$1
	i=0
	while kill -0 $pid 2>/dev/null && [ $i -lt $RECORD_LIMIT ]; do
		sleep 1
		i=$((i + 1))
	done
	if kill -0 $pid 2>/dev/null; then
		section hang$2 hang_report
		kill -INT $pid
		sleep 5
		kill -KILL $pid 2>/dev/null
	fi
	wait $pid
	rc=$?
}

# record TAG ARGS...: probe, record the workload with offcpu ARGS, the
# guest's own report and the perf.data, in sections suffixed TAG.
record() {
	tag=$1
	shift
	section probe$tag /offcpu probe "$@"
	# Four entries per stack map: most of the workload's stacks collide, so
	# both the stack maps and the spill maps are used on every kernel.
	/offcpu -v --stack-entries 4 $BLOCKER_ARGS "$@" -o /tmp/perf.data -- /blocker -t 2 \
		>/tmp/workload.out 2>/tmp/record.err &
	wait_recording $! $tag
	echo "@@BEGIN record$tag"
	cat /tmp/record.err
	echo "@@END record$tag rc=$rc"
	section workload$tag cat /tmp/workload.out
	section report$tag /offcpu report -i /tmp/perf.data -n 8
	section folded$tag /offcpu report -T -i /tmp/perf.data --folded
	echo "@@BEGIN perfdata$tag"
	gzip -c /tmp/perf.data | base64
	echo "@@END perfdata$tag rc=0"
	rm -f /tmp/perf.data /tmp/perf.data.old
}

section uname uname -r -m
# A kernel whose BPF JIT is built in but off (riscv64's default): 6.12's
# interpreter gets bpf_get_smp_processor_id() wrong (offcpu refuses it),
# 7.x refuses the programs to the interpreter.  Where
# offcpu cannot load, it must say how to turn the JIT on (check.py), and
# the device is then set up as its user would; else it stays off.
# (--backend bpf: by default offcpu would record with perf events there,
# saying why and how to turn the JIT on.)
if [ "$(cat /proc/sys/net/core/bpf_jit_enable 2>/dev/null)" = 0 ]; then
	section probe-jitoff /offcpu probe --backend bpf
	/offcpu probe --backend bpf >/dev/null 2>&1 || echo 1 > /proc/sys/net/core/bpf_jit_enable
fi
# The workloads subtract perf's task clock (blocker.c, cpu_ns).  The machine's
# first task-bound perf event waits for an RCU grace period: with this
# keeper holding one (blocker -w opens its clock, then waits on stdin) no
# recorded workload waits, since under TCG the scheduler's clock, which must
# measure that wait, reads it up to 2 ms off (issue 24).
sleep 100000 | /blocker -w -t 1 >/dev/null 2>&1 &
# A kernel without bpf() (the nobpf cell): offcpu takes the perf backend by
# itself (check.py checks that it did, and why); the recordings that ask
# for BPF ((b), (c), (d2)) have nothing to prove there; --wakers is
# recorded by the perf backend's sched_waking events.
NOBPF=
/offcpu probe 2>/dev/null | grep -q '^backend: perf' && NOBPF=1
# (a) What the kernel offers: its own BTF (or the embedded one, if it has none).
record ""
if [ -z "$NOBPF" ]; then
	# (b) /sys/kernel/btf hidden: this kernel's minimal BTF embedded in offcpu.
	mount -t tmpfs none /sys/kernel/btf 2>/dev/null
	record -embedded
	# (c) Still hidden, and no BTF used: the BTF-free variant.
	record -nobtf --btf none
	umount /sys/kernel/btf 2>/dev/null
fi
# (f) The perf events backend, forced (issue 41): the same truth as (a).
record -perf --backend perf
# record_distro TAG SECS ARGS...: the distribution-built workload
# (tests/workload/distro.c: dynamic against Debian's glibc, no frame
# pointers, blocking only in libc) run SECS s, recorded with offcpu -v ARGS:
# its -v, output, on-device folded report and perf.data in sections
# suffixed TAG (check.py distro_verdict judges them).
record_distro() {
	tag=$1 secs=$2
	shift 2
	/offcpu -v "$@" -o /tmp/distro.data -- /distro -t $secs >/tmp/distro.out \
		2>/tmp/distro.err &
	wait_recording $! $tag
	echo "@@BEGIN record$tag"
	cat /tmp/distro.err
	echo "@@END record$tag rc=$rc"
	section workload$tag cat /tmp/distro.out
	section folded$tag /offcpu report -i /tmp/distro.data --folded
	echo "@@BEGIN perfdata$tag"
	gzip -c /tmp/distro.data | base64
	echo "@@END perfdata$tag rc=0"
	rm -f /tmp/distro.data
}
# (d) The distribution-built workload with the default call graph; -v says
# whether its user stacks were unwound with CFI.
record_distro -distro 2
# (d2) The same with user stacks walked by the BPF program (--unwind-in
# verify, issue 27; the stack cache off so every block is walked): its
# samples carry the walked stacks, judged by the same hard criteria as
# (d); -v says how many were unwound in the kernel, how many copied (while
# rows load), and how many walked stacks differ from their copies unwound
# by offcpu (4 s: building the rows of libc takes seconds under TCG).
# Boards with KUNWIND: x86_64, arm64, riscv64, s390x and armhf.
case $(uname -m) in
x86_64|aarch64|riscv64|s390x|armv7l)
	[ -z "$NOBPF" ] && record_distro -distro-kunwind 4 --unwind-in verify --stack-cache off ;;
esac
# (d3) The perf backend forced: its stack copies unwound by CFI in offcpu,
# judged as (d).
record_distro -distro-perf 2 --backend perf
# (d') The same with --call-graph fp (DISTRO_FP): the control, which must
# miss the criteria the default call graph meets (check.py).
[ -n "$DISTRO_FP" ] && record_distro -distro-fp 2 --call-graph fp
# (e) Who woke the workload's threads (--wakers; tests/wakers_check.py on the
# host checks the guest's folded report).
/offcpu -v --wakers $BLOCKER_ARGS -o /tmp/wakers.data -- /blocker -t 2 \
	>/tmp/wakers.out 2>/tmp/wakers.err &
wait_recording $! -wakers
echo "@@BEGIN record-wakers"
cat /tmp/wakers.err
echo "@@END record-wakers rc=$rc"
section folded-wakers /offcpu report --wakers -T -i /tmp/wakers.data --folded
# Threads that stay blocked (issue 15), on what the kernel offers: st-early
# asleep before the recording starts, st-late blocking during it (5 s after
# its start: loading under TCG takes a while), neither ever woken: their
# offcpu-blocked samples and the report's section.  riscv64 loads slowest
# (4.9 s on sid, more on a busy host: st-late then blocked before the
# recording started): later there, in a longer recording.  The stuck
# section says how long (check.py's window for st-early).
late=5 dur=6
[ "$(uname -m)" = riscv64 ] && late=9 dur=10
/stuck -l $late -k 30 >/tmp/stuck.out &
spid=$!
sleep 1
section blocked_record /offcpu -v $BLOCKER_ARGS -p $spid -d $dur -o /tmp/blocked.data
echo "window $dur" >> /tmp/stuck.out
section stuck cat /tmp/stuck.out
section blocked_report /offcpu report -n 0 -i /tmp/blocked.data
kill $spid
echo "@@BEGIN blockeddata"
gzip -c /tmp/blocked.data | base64
echo "@@END blockeddata rc=0"
echo "@@DONE"
# Let the console drain: poweroff -f does not wait for the UART.
sleep 2
poweroff -f
