#!/bin/bash
# `make bench`: overhead of offcpu against its peers, measured in one run on
# this machine (as root), printed as a table and written to bench/RESULTS.md.
#   per event   run_time_ns / run_cnt of each profiler's sched_switch program
#               (kernel.bpf_stats_enabled=1) during `perf bench sched messaging`
#               and `pipe`; median of ROUNDS rounds that take the profilers in
#               turn, so drift of the machine hits all of them alike
#   slowdown    RUNS load runs without and with the profiler, alternating;
#               ratio of the medians
#   memory      memlock of the profiler's BPF maps (fdinfo), peak RSS (VmHWM)
#   start-up    exec to "recording" (offcpu -v, the empty loader); for perf,
#               exec to its BPF program's `enabled` flag set (bpftool)
#   data rate   perf.data bytes over the recording's duration
# Peers: an empty tp_btf program (the floor), libbpf-tools' offcputime from
# Debian trixie and `perf record --off-cpu` from trixie's linux-source-6.12
# built with BPF skeletons (both in a debootstrap'd root, bench/setup.sh).
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
CACHE=${OFFCPU_CACHE:-$HOME/.cache/offcpu}
OFFCPU=$ROOT/build/x86_64/offcpu
OUT=$ROOT/build/bench
PERF=/usr/local/bin/perf	# in the root, built by setup.sh
RUNS=${RUNS:-5}
ROUNDS=${ROUNDS:-5}
ALL="empty offcpu-user offcpu-kernel-user offcputime perf-offcpu"
# Per-event cost only: offcpu without its user stack cache, for what it
# saves, the kernel stack walk alone, the floor of kernel + user, the
# BTF-free variant, and the default with --wakers (its sched_waking program
# counted per switch too).
NOCACHE="offcpu-user-nocache offcpu-kernel-user-nocache kernel-walk-only offcpu-kernel-user-tp-hash offcpu-kernel-user-wakers"
PROFILERS=${PROFILERS:-$ALL}	# a subset is printed, not written to bench/
mkdir -p "$OUT"

[ "$(id -u)" = 0 ] || { echo "bench: needs root" >&2; exit 1; }
ROOTFS=$("$HERE/setup.sh") || exit 1

build_floor() {
	local f
	for f in empty kstack; do
		clang -g -O2 -target bpfel -D__TARGET_ARCH_x86 -I"$CACHE/toolchain/host/include" \
			-I"$ROOT/bpf" -c "$HERE/$f.bpf.c" -o "$OUT/$f.bpf.o" || return 1
	done
	gcc -O2 -I"$CACHE/toolchain/host/include" "$HERE/empty_loader.c" \
		-L"$CACHE/toolchain/host/lib" -lbpf -lelf -lz -o "$OUT/empty_loader"
}

ms() { echo $(( $(date +%s%N) / 1000000 )); }

# data NAME: its perf.data as seen from here (perf writes into the root).
data() {
	case $1 in
	perf-offcpu) echo "$ROOTFS/tmp/$1.data" ;;
	*) echo "$OUT/$1.data" ;;
	esac
}

# The value of `enabled` in the .bss map of perf's off-cpu skeleton (0 until
# perf has synthesized the existing tasks and enabled its events).
perf_enabled() {
	local id
	for id in $(awk 'FNR == 1 { a = 0 } /^map_type/ { a = $2 == 2 } /^map_id/ && a { print $2 }' /proc/"$1"/fdinfo/* 2>/dev/null); do
		chroot "$ROOTFS" bpftool -j map dump id "$id" 2>/dev/null | grep -q '"enabled": *1' && return 0
	done
	return 1
}

# start NAME: run the profiler in the background; sets PID and STARTUP (ms).
start() {
	local t0 i ready
	rm -f "$OUT/$1.err" "$(data "$1")"	# no stale "recording" line or data
	t0=$(ms)
	case $1 in
	empty) "$OUT/empty_loader" "$OUT/empty.bpf.o" 2>"$OUT/$1.err" & PID=$! ;;
	kernel-walk-only) "$OUT/empty_loader" "$OUT/kstack.bpf.o" kstack 2>"$OUT/$1.err" & PID=$! ;;
	offcpu-user) "$OFFCPU" -v -a --call-graph user -o "$OUT/$1.data" 2>"$OUT/$1.err" & PID=$! ;;
	offcpu-kernel-user) "$OFFCPU" -v -a -o "$OUT/$1.data" 2>"$OUT/$1.err" & PID=$! ;;
	offcpu-user-nocache) "$OFFCPU" -v -a --call-graph user --stack-cache off \
		-o "$OUT/$1.data" 2>"$OUT/$1.err" & PID=$! ;;
	offcpu-kernel-user-nocache) "$OFFCPU" -v -a --stack-cache off \
		-o "$OUT/$1.data" 2>"$OUT/$1.err" & PID=$! ;;
	# The BTF-free variant (classic tracepoints, no stack cache), as used
	# on a kernel without BTF.
	offcpu-kernel-user-tp-hash) "$OFFCPU" -v -a --btf none -o "$OUT/$1.data" \
		2>"$OUT/$1.err" & PID=$! ;;
	offcpu-kernel-user-wakers) "$OFFCPU" -v -a --wakers -o "$OUT/$1.data" \
		2>"$OUT/$1.err" & PID=$! ;;
	offcpu-verify) "$OFFCPU" -v -a --stack-cache verify -o "$OUT/$1.data" \
		2>"$OUT/$1.err" & PID=$! ;;
	offcputime)
		chroot "$ROOTFS" /usr/sbin/offcputime-libbpf >"$OUT/$1.out" 2>"$OUT/$1.err" & PID=$! ;;
	perf-offcpu)	# chroot execs perf: PID is perf's
		chroot "$ROOTFS" "$PERF" record --off-cpu -e dummy -a -o "/tmp/$1.data" \
			>"$OUT/$1.out" 2>"$OUT/$1.err" & PID=$! ;;
	esac
	ready=no
	for i in $(seq 1 1000); do
		case $1 in
		offcputime) prog_fd_count $PID ;;
		perf-offcpu) prog_fd_count $PID && perf_enabled $PID ;;
		*) grep -qs recording "$OUT/$1.err" ;;
		esac && { ready=yes; break; }
		kill -0 "$PID" 2>/dev/null || break
		sleep 0.01
	done
	STARTUP=$(( $(ms) - t0 ))
	[ $1 = offcputime ] && STARTUP="n/a"
	[ $ready = yes ] || { echo "bench: $1 did not start (see $OUT/$1.err)" >&2; STARTUP="n/a"; }
	sleep 0.3
}

prog_fd_count() { grep -ls '^prog_type' /proc/"$1"/fdinfo/* 2>/dev/null | grep -q .; }

# Background jobs of a script ignore SIGINT unless they set a handler (offcpu,
# perf and offcputime do).  perf --off-cpu reads its BPF maps and writes the
# samples only now, so it gets up to 60 s.  HWM: the highest VmHWM seen (kB),
# from just before SIGINT until the process has no memory left to show.
stop() {
	local i h
	HWM=0
	h=$(awk '/^VmHWM/ { print $2 }' /proc/"$PID"/status 2>/dev/null) && [ -n "$h" ] && HWM=$h
	kill -INT "$PID" 2>/dev/null
	for i in $(seq 1 1200); do
		h=$(awk '/^VmHWM/ { print $2 }' /proc/"$PID"/status 2>/dev/null) &&
			[ -n "$h" ] && [ "$h" -gt "$HWM" ] && HWM=$h
		kill -0 "$PID" 2>/dev/null || break
		sleep 0.05
	done
	kill -0 "$PID" 2>/dev/null && echo "bench: $(cat /proc/$PID/comm) did not stop on SIGINT" >&2
	kill -TERM "$PID" 2>/dev/null
	wait "$PID" 2>/dev/null
}

# ns per run of the busiest program of PID (the sched_switch one).
per_event() {
	local f best_cnt=0 all_ns=0 cnt ns
	for f in /proc/"$1"/fdinfo/*; do
		grep -qs '^prog_type' "$f" || continue
		cnt=$(awk '/^run_cnt/ { print $2 }' "$f")
		ns=$(awk '/^run_time_ns/ { print $2 }' "$f")
		all_ns=$(( all_ns + ${ns:-0} ))
		if [ "${cnt:-0}" -gt "$best_cnt" ]; then best_cnt=$cnt; fi
	done
	# Every program's time (sched_waking's with --wakers) per sched_switch run.
	[ "$best_cnt" -gt 0 ] && echo $(( all_ns / best_cnt )) || echo "n/a"
}

# memlock of the BPF map fds of PID (not of its programs), MiB.
memlock() {
	awk 'FNR == 1 { map = 0 } /^map_type/ { map = 1 } /^memlock/ && map { s += $2 }
		END { printf "%.2f", s / 1048576 }' /proc/"$1"/fdinfo/* 2>/dev/null
}

load_time() {	# messaging|pipe -> seconds
	case $1 in
	messaging) perf bench sched messaging -g 10 -l 300 2>/dev/null ;;
	# Both ends on one CPU: every message is two context switches, and the
	# result does not depend on where the scheduler happened to put them.
	pipe) taskset -c 0 perf bench sched pipe -l 20000 2>/dev/null ;;
	esac | awk '/Total time/ { print $3 }'
}

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# slowdown NAME LOAD: ratio of medians, RUNS runs without and with the
# profiler, alternating (the profiler is started and stopped around each).
slowdown() {
	local i base="" prof=""
	for i in $(seq 1 "$RUNS"); do
		base+="$(load_time "$2")"$'\n'
		start "$1"
		prof+="$(load_time "$2")"$'\n'
		stop
	done
	awk -v a="$(grep . <<<"$prof" | median)" -v b="$(grep . <<<"$base" | median)" \
		'BEGIN { printf "%.3f", a / b }'
}

# cost NAME: ns per sched_switch during one messaging and one pipe run.
cost() {
	start "$1"
	load_time messaging >/dev/null
	load_time pipe >/dev/null
	per_event "$PID"
	stop
}

# One row; PE[NAME] holds the median per-event cost of the rounds.
measure() {
	local mem r su bytes secs=0 t0
	start "$1"
	t0=$(ms)
	load_time messaging >/dev/null
	load_time messaging >/dev/null
	mem=$(memlock "$PID")
	su=$STARTUP
	secs=$(( $(ms) - t0 ))
	stop	# peak RSS: VmHWM up to its exit (perf's includes writing its samples)
	r=$(awk -v k="$HWM" 'BEGIN { printf "%.1f", k / 1024 }')
	bytes="n/a"
	[ -f "$(data "$1")" ] && bytes=$(( $(stat -c %s "$(data "$1")") * 1000 / (secs + 300) ))
	[ $1 = perf-offcpu ] && [ -f "$(data "$1")" ] && mv "$(data "$1")" "$OUT/$1.data" # for perf report
	ROW_MEM[$1]=$mem ROW_RSS[$1]=$r ROW_SU[$1]=$su
	SLOW_M[$1]=$(slowdown "$1" messaging)
	SLOW_P[$1]=$(slowdown "$1" pipe)
	printf '| %s | %s | %s | %s | %s | %s | %s | %s |\n' "$1" "${PE[$1]}" \
		"${SLOW_M[$1]}" "${SLOW_P[$1]}" "$mem" "$r" "$su" "$bytes"
}

# The stack cache under each load: how often a user stack is reusable, and
# how often a reuse would have been wrong (--stack-cache verify walks anyway).
# Three runs per load: the share varies between runs (one run in one bench
# saw 23 % reusable under messaging where the others saw 96-97 %).
cache_line() {
	local load line i
	for load in messaging pipe; do
		for i in 1 2 3; do
			start offcpu-verify
			load_time "$load" >/dev/null
			stop
			line=$(sed -n 's/.*stack cache (verify): //p' "$OUT/offcpu-verify.err" | tr -d ']')
			echo "- stack cache under $load, run $i: ${line:-no verify line (see $OUT/offcpu-verify.err)}"
		done
	done
}

# ratio A B TARGET WHAT: one line saying whether A/B meets TARGET.
ratio() {
	awk -v a="$1" -v b="$2" -v t="$3" -v w="$4" 'BEGIN {
		if (a == "" || b == "" || a == "n/a" || b == "n/a" || b == 0) { printf "- %s: not measured\n", w; exit }
		r = a / b
		printf "- %s: %.2f× (target ≤ %.2f×): %s\n", w, r, t,
			r <= t ? "met" : sprintf("NOT met, %.0f %% over", (r / t - 1) * 100) }'
}

lowest() {	# ARRAY: "ratio profiler" of the smallest slowdown of the three
	local -n sl=$1
	local p
	for p in offcpu-kernel-user offcputime perf-offcpu; do
		[ -n "${sl[$p]:-}" ] && echo "${sl[$p]} $p"
	done | sort -g | head -1
}

summary() {
	local l
	ratio "${PE[offcpu-user]:-}" "${PE[perf-offcpu]:-}" 0.5 \
		"user stacks, ns per event vs perf --off-cpu"
	ratio "${PE[offcpu-kernel-user]:-}" "${PE[offcputime]:-}" 0.5 \
		"kernel + user stacks, ns per event vs offcputime"
	ratio "${PE[offcpu-user]:-}" "${PE[offcpu-user-nocache]:-}" 1 \
		"user stacks, with the stack cache vs without"
	ratio "${PE[offcpu-kernel-user]:-}" "${PE[offcpu-kernel-user-nocache]:-}" 1 \
		"kernel + user stacks, with the stack cache vs without"
	ratio "${PE[kernel-walk-only]:-}" "${PE[offcputime]:-}" 0.5 \
		"the kernel stack walk alone (the floor of kernel + user) vs offcputime"
	ratio "${PE[offcpu-kernel-user-wakers]:-}" "${PE[offcpu-kernel-user]:-}" 3 \
		"--wakers (waker stacks walked at each wakeup) vs the default"
	echo "- locked map memory (default, kernel + user): ${ROW_MEM[offcpu-kernel-user]:-?} MiB (target ≤ 4)"
	echo "- peak RSS: ${ROW_RSS[offcpu-user]:-?} / ${ROW_RSS[offcpu-kernel-user]:-?} MiB (target ≤ 8)"
	echo "- start-up: ${ROW_SU[offcpu-user]:-?} / ${ROW_SU[offcpu-kernel-user]:-?} ms (target ≤ 150)"
	for l in M P; do
		local -n sl=SLOW_$l
		echo "- $([ $l = M ] && echo messaging || echo pipe) slowdown, like for like:" \
			"user stacks offcpu ${sl[offcpu-user]:-?} vs perf ${sl[perf-offcpu]:-?};" \
			"kernel + user offcpu ${sl[offcpu-kernel-user]:-?} vs offcputime ${sl[offcputime]:-?};" \
			"lowest of the three (offcpu's default): $(lowest SLOW_$l)"
		unset -n sl
	done
}

build_floor || { echo "bench: cannot build the empty program" >&2; exit 1; }
MOUNTED=""
cleanup() {
	local m
	sysctl -q -w kernel.bpf_stats_enabled=0
	for m in $MOUNTED; do umount "$ROOTFS/$m" || echo "bench: cannot unmount $ROOTFS/$m" >&2; done
	MOUNTED=""
}
trap cleanup EXIT
for m in proc sys dev; do	# only those not mounted already
	mountpoint -q "$ROOTFS/$m" || { mount --bind /$m "$ROOTFS/$m" && MOUNTED="$m $MOUNTED"; }
done
sysctl -q -w kernel.bpf_stats_enabled=1
declare -A PE=() ROW_MEM=() ROW_RSS=() ROW_SU=() SLOW_M=() SLOW_P=()
{
	# Per-event cost first, in rounds over all profilers.
	declare -A costs=()
	for r in $(seq 1 "$ROUNDS"); do
		for p in $PROFILERS $NOCACHE; do
			costs[$p]+="$(cost "$p") "
		done
	done
	for p in $PROFILERS $NOCACHE; do
		PE[$p]=$(tr ' ' '\n' <<<"${costs[$p]}" | grep -E '^[0-9]+$' | median)
		[ -n "${PE[$p]}" ] || PE[$p]=n/a
	done
	echo "# offcpu overhead, $(date -u +%Y-%m-%d), $(uname -r), $(nproc) CPUs"
	echo
	echo "| profiler | ns per sched_switch | messaging slowdown | pipe slowdown | locked MiB | RSS MiB | start-up ms | perf.data B/s |"
	echo "|---|---|---|---|---|---|---|---|"
	for p in $PROFILERS; do
		measure "$p"
	done
	for p in $NOCACHE; do
		echo "| $p | ${PE[$p]} | | | | | | |"
	done
	echo
	echo "ns per sched_switch: median of $ROUNDS rounds (each: one messaging and one pipe"
	echo "run per profiler, profilers in turn). offcputime records kernel and user stacks;"
	echo "perf-offcpu is \`perf record --off-cpu -e dummy -a\` (6.12, built with BPF skeletons),"
	echo "user stacks only, summed in a BPF map and written as samples when it stops; *-nocache"
	echo "is offcpu with \`--stack-cache off\`; kernel-walk-only is one bpf_get_stackid of the"
	echo "kernel stack per switch-out of a sleeping thread and nothing else (bench/kstack.bpf.c);"
	echo "*-tp-hash is offcpu's BTF-free variant (\`--btf none\`: classic sched_switch tracepoint)."
	echo "Slowdown: median of $RUNS runs with the profiler over the median of $RUNS runs without"
	echo "it, alternating (1.000 = no slowdown); pipe runs pinned to CPU 0."
	echo
	summary
	cache_line
} | tee "$OUT/RESULTS.md"
cleanup
rm -f "$ROOTFS/tmp/perf-offcpu.data"	# the slowdown runs' recording
if [ "$PROFILERS" = "$ALL" ]; then cp "$OUT/RESULTS.md" "$HERE/RESULTS.md"; fi
