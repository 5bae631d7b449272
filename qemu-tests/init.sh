#!/bin/busybox sh
# /init of the matrix initramfs: mount what offcpu needs, run the checks,
# send the results (and the perf.data, base64) over the console between
# @@BEGIN/@@END markers, power off.
/bin/busybox mkdir -p /bin /proc /sys /dev /tmp
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mount -t bpf bpf /sys/fs/bpf 2>/dev/null
echo 1 > /proc/sys/kernel/printk 2>/dev/null

section() {	# NAME CMD...: output and exit status of CMD between markers
	name=$1
	shift
	echo "@@BEGIN $name"
	"$@" 2>&1
	echo "@@END $name rc=$?"
}

section uname uname -r -m
section probe /offcpu probe
/offcpu -v -o /tmp/perf.data -- /blocker -t 2 >/tmp/workload.out 2>/tmp/record.err
rc=$?
echo "@@BEGIN record"
cat /tmp/record.err
echo "@@END record rc=$rc"
section workload cat /tmp/workload.out
section report /offcpu report -i /tmp/perf.data -n 8
echo "@@BEGIN perfdata"
gzip -c /tmp/perf.data | base64
echo "@@END perfdata rc=0"
echo "@@DONE"
# Let the console drain: poweroff -f does not wait for the UART.
sleep 2
poweroff -f
