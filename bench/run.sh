#!/bin/bash
# `make bench`: overhead of offcpu against its peers, measured in one run on
# this machine (as root), printed as a table and written to bench/RESULTS.md.
#   per event   run_time_ns / run_cnt of each profiler's sched_switch program
#               (kernel.bpf_stats_enabled=1) during `perf bench sched messaging`
#   slowdown    median of 5 load runs with the profiler vs 3 without, just before
#   memory      memlock of the profiler's BPF maps (fdinfo), peak RSS (VmHWM)
#   start-up    exec to "recording" (offcpu -v, the empty loader)
# Peers: an empty tp_btf program (the floor) and libbpf-tools' offcputime from
# Debian trixie (in a debootstrap'd root, bench/setup.sh).
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
CACHE=${OFFCPU_CACHE:-$HOME/.cache/offcpu}
OFFCPU=$ROOT/build/x86_64/offcpu
OUT=$ROOT/build/bench
RUNS=${RUNS:-5}
mkdir -p "$OUT"

[ "$(id -u)" = 0 ] || { echo "bench: needs root" >&2; exit 1; }
ROOTFS=$("$HERE/setup.sh") || exit 1

build_floor() {
	clang -g -O2 -target bpfel -D__TARGET_ARCH_x86 -I"$CACHE/toolchain/host/include" \
		-I"$ROOT/bpf" -c "$HERE/empty.bpf.c" -o "$OUT/empty.bpf.o" &&
	gcc -O2 -I"$CACHE/toolchain/host/include" "$HERE/empty_loader.c" \
		-L"$CACHE/toolchain/host/lib" -lbpf -lelf -lz -o "$OUT/empty_loader"
}

ms() { echo $(( $(date +%s%N) / 1000000 )); }

# start NAME: run the profiler in the background; sets PID and STARTUP (ms).
start() {
	local t0 i
	rm -f "$OUT/$1.err"	# no stale "recording" line
	t0=$(ms)
	case $1 in
	empty) "$OUT/empty_loader" "$OUT/empty.bpf.o" 2>"$OUT/$1.err" & PID=$! ;;
	offcpu-user) "$OFFCPU" -v -a --call-graph user -o "$OUT/$1.data" 2>"$OUT/$1.err" & PID=$! ;;
	offcpu-kernel-user) "$OFFCPU" -v -a -o "$OUT/$1.data" 2>"$OUT/$1.err" & PID=$! ;;
	offcputime)
		chroot "$ROOTFS" /usr/sbin/offcputime-libbpf >"$OUT/$1.out" 2>"$OUT/$1.err" & PID=$! ;;
	esac
	for i in $(seq 1 300); do
		if grep -qs recording "$OUT/$1.err" || { [ $1 = offcputime ] && prog_fd_count $PID; }; then
			break
		fi
		sleep 0.01
	done
	STARTUP=$(( $(ms) - t0 ))
	[ $1 = offcputime ] && STARTUP="n/a"
	sleep 0.3
}

prog_fd_count() { grep -ls '^prog_type' /proc/"$1"/fdinfo/* 2>/dev/null | grep -q .; }

# Background jobs of a script ignore SIGINT unless they set a handler.
stop() {
	local i
	kill -INT "$PID" 2>/dev/null
	for i in $(seq 1 50); do
		kill -0 "$PID" 2>/dev/null || break
		sleep 0.1
	done
	kill -TERM "$PID" 2>/dev/null
	wait "$PID" 2>/dev/null
}

# ns per run of the busiest program of PID (the sched_switch one).
per_event() {
	local f best_cnt=0 best_ns=0 cnt ns
	for f in /proc/"$1"/fdinfo/*; do
		grep -qs '^prog_type' "$f" || continue
		cnt=$(awk '/^run_cnt/ { print $2 }' "$f")
		ns=$(awk '/^run_time_ns/ { print $2 }' "$f")
		if [ "${cnt:-0}" -gt "$best_cnt" ]; then best_cnt=$cnt; best_ns=$ns; fi
	done
	[ "$best_cnt" -gt 0 ] && echo $(( best_ns / best_cnt )) || echo "n/a"
}

memlock() {
	awk '/^memlock/ { s += $2 } END { printf "%.2f", s / 1048576 }' /proc/"$1"/fdinfo/* 2>/dev/null
}

rss() { awk '/^VmHWM/ { printf "%.1f", $2 / 1024 }' /proc/"$1"/status; }

load_time() {	# messaging|pipe -> seconds
	case $1 in
	messaging) perf bench sched messaging -g 10 -l 300 2>/dev/null ;;
	pipe) perf bench sched pipe -l 20000 2>/dev/null ;;
	esac | awk '/Total time/ { print $3 }'
}

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# slowdown NAME LOAD: ratio of medians, profiler running vs not.
slowdown() {
	local base prof i
	base=$(for i in 1 2 3; do load_time "$2"; done | median)
	start "$1"
	prof=$(for i in $(seq 1 "$RUNS"); do load_time "$2"; done | median)
	stop
	awk -v a="$prof" -v b="$base" 'BEGIN { printf "%.3f", a / b }'
}

measure() {	# NAME -> one table row
	local pe mem r su bytes secs=0 t0
	start "$1"
	t0=$(ms)
	load_time messaging >/dev/null
	load_time messaging >/dev/null
	pe=$(per_event "$PID")
	mem=$(memlock "$PID")
	su=$STARTUP
	r=$(rss "$PID")
	secs=$(( $(ms) - t0 ))
	stop
	bytes="n/a"
	[ -f "$OUT/$1.data" ] && bytes=$(( $(stat -c %s "$OUT/$1.data") * 1000 / (secs + 300) ))
	printf '| %s | %s | %s | %s | %s | %s | %s | %s |\n' "$1" "$pe" \
		"$(slowdown "$1" messaging)" "$(slowdown "$1" pipe)" "$mem" "$r" "$su" "$bytes"
}

build_floor || { echo "bench: cannot build the empty program" >&2; exit 1; }
for m in proc sys dev; do
	mountpoint -q "$ROOTFS/$m" || mount --bind /$m "$ROOTFS/$m"
done
sysctl -q -w kernel.bpf_stats_enabled=1
{
	echo "# offcpu overhead, $(date -u +%Y-%m-%d), $(uname -r), $(nproc) CPUs"
	echo
	echo "| profiler | ns per sched_switch | messaging slowdown | pipe slowdown | locked MiB | RSS MiB | start-up ms | perf.data B/s |"
	echo "|---|---|---|---|---|---|---|---|"
	for p in empty offcpu-user offcpu-kernel-user offcputime; do
		measure "$p"
	done
	echo "| perf --off-cpu | n/a: Debian's linux-perf is built without BPF skeletons | | | | | | |"
	echo
	echo "offcputime records kernel and user stacks. Slowdown: median of $RUNS runs with the"
	echo "profiler over the median of 3 runs just before without it (1.000 = no slowdown)."
} | tee "$OUT/RESULTS.md"
sysctl -q -w kernel.bpf_stats_enabled=0
for m in proc sys dev; do umount "$ROOTFS/$m" 2>/dev/null; done
cp "$OUT/RESULTS.md" "$HERE/RESULTS.md"
