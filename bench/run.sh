#!/bin/bash
# `make bench`: overhead of offcpu against its peers, measured in one run on
# this machine (as root), printed as a table and written to bench/RESULTS.md.
#   per event   run_time_ns / run_cnt of each profiler's sched_switch program
#               (kernel.bpf_stats_enabled=1) during `perf bench sched messaging`
#               and `pipe`; median of ROUNDS rounds that take the profilers in
#               turn, so drift of the machine hits all of them alike; beside
#               it the profiler's own CPU time over its whole life (start-up to
#               exit, its output written) per switch of the same loads
#   slowdown    RUNS load runs without and with the profiler, alternating;
#               ratio of the medians
#   memory      memlock of the profiler's BPF maps (fdinfo), peak RSS (VmHWM)
#   start-up    exec to "recording" (offcpu -v, the empty loader); for perf,
#               exec to its BPF program's `enabled` flag set (bpftool)
#   data rate   perf.data bytes over the recording's duration
#   cache       offcpu --stack-cache verify (default call graph: CFI) under
#               messaging, pipe and real programs: wrong reuses (target 0)
# Peers: an empty tp_btf program (the floor), libbpf-tools' offcputime from
# Debian trixie and `perf record --off-cpu` from trixie's linux-source-6.12
# built with BPF skeletons (both in a debootstrap'd root, bench/setup.sh).
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
CACHE=${OFFCPU_CACHE:-$HOME/.cache/offcpu}
OFFCPU=${OFFCPU:-$ROOT/build/x86_64/offcpu}	# another build: OFFCPU=path
OUT=$ROOT/build/bench
PERF=/usr/local/bin/perf	# in the root, built by setup.sh
RUNS=${RUNS:-5}
ROUNDS=${ROUNDS:-5}
# offcpu-user, offcpu-kernel-user: the defaults (user stacks by CFI, where the
# kernel allows it); *-fp: the same with --call-graph fp (frame pointers).
# *-kunwind: --unwind-in kernel (the BPF program walks with CFI rows, issue 27).
ALL="empty offcpu-user offcpu-kernel-user offcpu-user-kunwind offcpu-kernel-user-kunwind offcpu-user-fp offcpu-kernel-user-fp offcputime perf-offcpu"
# Per-event cost only: offcpu without its user stack cache, for what it
# saves, the kernel stack walk alone, the floor of kernel + user, the
# BTF-free variant, and the default with --wakers (its sched_waking program
# counted per switch too).
NOCACHE_ALL="offcpu-user-nocache offcpu-kernel-user-nocache kernel-walk-only offcpu-kernel-user-tp-hash offcpu-kernel-user-wakers"
NOCACHE=${NOCACHE-$NOCACHE_ALL}	# NOCACHE="" or a subset: not written to bench/ either
PROFILERS=${PROFILERS:-$ALL}	# a subset is printed, not written to bench/
# VERIFY=0: no --stack-cache verify runs (each is 8 s or a load run).
VERIFY=${VERIFY:-1}
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

# Waiting and looking without a fork: on a VM where a fork and exec take
# 5 ms, a poll of `grep; sleep 0.01` came every 24 ms, a coarse clock for
# start-ups of 60 to 150 ms. nap sleeps 10 ms on a pipe that never has
# data; has_line FILE TEXT reads FILE in bash.
exec {NAPFD}<> <(:)
nap() { read -t 0.01 -u "$NAPFD" || :; }
has_line() {
	local l
	[ -f "$1" ] || return 1
	while IFS= read -r l; do [[ $l == *"$2"* ]] && return 0; done <"$1"
	return 1
}

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

# launch NAME CMD...: CMD in the background, in a subshell of its own whose
# `times` once CMD has ended give CMD's CPU over its whole life: start-up and
# end included, where perf and offcputime do most of their user-space work
# (perf writes its samples, offcputime resolves and prints its stacks).
# PID is CMD's (chroot execs the peers), JOB the subshell's.
launch() {
	local name=$1 i
	shift
	rm -f "$OUT/pid" "$OUT/times"
	( "$@" >"$OUT/$name.out" 2>"$OUT/$name.err" & echo $! >"$OUT/pid"; wait $!
	  times >"$OUT/times" ) &
	JOB=$!
	for i in $(seq 1 500); do [ -s "$OUT/pid" ] && break; nap; done
	PID=$(cat "$OUT/pid")
}

# start NAME: run the profiler in the background; sets PID, JOB and STARTUP (ms).
start() {
	local t0 i ready
	local -a cmd
	rm -f "$OUT/$1.err" "$(data "$1")"	# no stale "recording" line or data
	case $1 in
	empty) cmd=("$OUT/empty_loader" "$OUT/empty.bpf.o") ;;
	kernel-walk-only) cmd=("$OUT/empty_loader" "$OUT/kstack.bpf.o" kstack) ;;
	offcpu-user) cmd=("$OFFCPU" -v -a --call-graph user) ;;
	offcpu-kernel-user) cmd=("$OFFCPU" -v -a) ;;
	offcpu-user-kunwind) cmd=("$OFFCPU" -v -a --call-graph user --unwind-in kernel) ;;
	offcpu-kernel-user-kunwind) cmd=("$OFFCPU" -v -a --unwind-in kernel) ;;
	offcpu-user-fp) cmd=("$OFFCPU" -v -a --call-graph user,fp) ;;
	offcpu-kernel-user-fp) cmd=("$OFFCPU" -v -a --call-graph fp) ;;
	offcpu-user-nocache) cmd=("$OFFCPU" -v -a --call-graph user --stack-cache off) ;;
	offcpu-kernel-user-nocache) cmd=("$OFFCPU" -v -a --stack-cache off) ;;
	# The BTF-free variant (classic tracepoints, no stack cache), as used
	# on a kernel without BTF.
	offcpu-kernel-user-tp-hash) cmd=("$OFFCPU" -v -a --btf none) ;;
	offcpu-kernel-user-wakers) cmd=("$OFFCPU" -v -a --wakers) ;;
	offcpu-verify) cmd=("$OFFCPU" -v -a --stack-cache verify) ;;
	offcputime) cmd=(chroot "$ROOTFS" /usr/sbin/offcputime-libbpf) ;;
	perf-offcpu) cmd=(chroot "$ROOTFS" "$PERF" record --off-cpu -e dummy -a -o "/tmp/$1.data") ;;
	esac
	case $1 in offcpu-*) cmd+=(-o "$OUT/$1.data") ;; esac
	t0=$(ms)
	launch "$1" "${cmd[@]}"
	ready=no
	for i in $(seq 1 1000); do
		case $1 in
		offcputime) prog_fd_count $PID ;;
		perf-offcpu) prog_fd_count $PID && perf_enabled $PID ;;
		*) has_line "$OUT/$1.err" recording ;;
		esac && { ready=yes; break; }
		kill -0 "$PID" 2>/dev/null || break
		nap
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
# LIFE_NS: the profiler's CPU time over its whole life (launch), or empty.
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
	wait "$JOB" 2>/dev/null
	# times' second line: its children's user and system time, "0m1.234s 0m0.056s".
	LIFE_NS=$(awk 'NR == 2 { t = 0; for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); t += a[1] * 60 + a[2] }
		printf "%d", t * 1e9 }' "$OUT/times" 2>/dev/null)
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
	# Every program's time (sched_waking's with --wakers) per sched_switch
	# run, and that count.
	[ "$best_cnt" -gt 0 ] && echo "$(( all_ns / best_cnt )) $best_cnt" || echo "n/a 0"
}

# CPU time of PID's threads so far, ns (schedstat: on-CPU time).
cpu_ns() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ s += $1 } END { printf "%d", s }'; }

# How the row's user stacks were unwound, from offcpu's -v line.
unwinding() {
	case $1 in
	offcputime|perf-offcpu) echo "fp" ;;
	offcpu-*) sed -n 's/^user stacks: //p' "$OUT/$1.err" 2>/dev/null | awk '
		/unwound with CFI in the kernel/ { print "CFI in kernel"; exit }
		/unwound with CFI/ { print "CFI"; exit } /^frame pointers/ { print "fp"; exit }
		{ print "?"; exit }' ;;
	*) echo "–" ;;
	esac
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

# ratio3 X A B: X over the mean of A and B, or n/a.
ratio3() {
	awk -v x="$1" -v a="$2" -v b="$3" 'BEGIN { if (x > 0 && a > 0 && b > 0)
		printf "%.4f", 2 * x / (a + b); else printf "n/a" }'
}

# slowdown_rounds LOAD L: RUNS rounds that take every profiler in turn (the
# order rotated each round), a base run without a profiler before and after
# each profiled run: B P1 B P2 B ... Each profiled run is divided by the mean
# of its two neighbouring base runs, so a drift of the machine (the other
# jobs of this VM, frequency) cancels within the pair and hits every
# profiler alike; a first, discarded run warms the caches. `sync` after each
# stop: the recording's dirty pages (perf writes all its samples on exit)
# are not written back during the next base run, which made it slow and
# perf's ratio < 1. RATIOS_L[p]: the ratios, one per round in round order;
# SLOW_L[p] their median, SPREAD_L[p] "min–max".
slowdown_rounds() {
	local load=$1 r p b0 b1 x i n
	local -n rat=RATIOS_$2 med=SLOW_$2 spr=SPREAD_$2
	local -a ps=($PROFILERS)
	load_time "$load" >/dev/null
	b0=$(load_time "$load")
	for r in $(seq 1 "$RUNS"); do
		n=${#ps[@]}
		for i in $(seq 0 $(( n - 1 ))); do
			p=${ps[$(( (i + r - 1) % n ))]}
			start "$p"
			x=$(load_time "$load")
			stop
			sync
			b1=$(load_time "$load")
			rat[$p]+="$(ratio3 "$x" "$b0" "$b1") "
			b0=$b1
		done
	done
	for p in $PROFILERS; do
		med[$p]=$(tr ' ' '\n' <<<"${rat[$p]}" | grep -E '^[0-9.]+$' | median |
			awk 'NF { printf "%.3f", $1 }')
		spr[$p]=$(tr ' ' '\n' <<<"${rat[$p]}" | grep -E '^[0-9.]+$' | sort -g |
			awk 'NR == 1 { a = $1 } { b = $1 } END { if (NR) printf "%.3f–%.3f", a, b }')
		[ -n "${med[$p]}" ] || med[$p]=n/a
	done
}

# copies NAME: "SENT:FALLBACK:KERNEL" from offcpu's -v summary: user stacks
# copied for CFI unwinding, those walked by frame pointer instead because
# the ring buffer was full (cheaper in BPF, and without CFI), and those
# unwound in the kernel (--unwind-in kernel).
copies() {
	awk '/user stack copies:/ { for (i = 1; i <= NF; i++) if ($i == "sent,") s = $(i - 1) }
		/user stacks walked by frame pointer, not copied/ { f += $3 }	# ring full, no registers
		/user stacks: [0-9]+ unwound in the kernel,/ { k = $5 }	# "[ offcpu: user stacks: N unwound ..."
		END { printf "%d:%d:%d", s, f, k }' "$OUT/$1.err" 2>/dev/null
}

# The voluntary switches of PID's threads so far (each a wakeup after a wait).
wakeups() {
	awk '/^voluntary_ctxt_switches/ { s += $2 } END { if (NR) print s }' \
		/proc/"$1"/task/*/status 2>/dev/null
}

# cost NAME: "BPF-ns:CPU-ns:SENT:FALLBACK:KERNEL:WAKEUPS" during one messaging
# and one pipe run: its BPF programs' time per sched_switch, the profiler's
# own CPU time over its whole life (start-up to exit, its output written) per
# sched_switch, copies(), and the profiler's wakeups per second while the
# loads ran (each one a switch that preempts the load).
cost() {
	local pe cnt cpu=n/a w0 w1 t0 wake=n/a
	start "$1"
	w0=$(wakeups "$PID") t0=$(ms)
	load_time messaging >/dev/null
	load_time pipe >/dev/null
	w1=$(wakeups "$PID")
	[ -n "$w0" ] && [ -n "$w1" ] && wake=$(( (w1 - w0) * 1000 / ($(ms) - t0 + 1) ))
	read -r pe cnt < <(per_event "$PID")
	stop
	[ "$cnt" -gt 0 ] && [ -n "$LIFE_NS" ] && cpu=$(( LIFE_NS / cnt ))
	echo "$pe:$cpu:$(copies "$1"):$wake"
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
	# offcpu with CFI: the rows it built (ordinary memory, within
	# --unwind-tables), part of that RSS.
	ROW_CFI[$1]=$(sed -n 's/.*CFI: [0-9]* files read, \([0-9.]*\) MiB of rows.*/\1/p' "$OUT/$1.err" 2>/dev/null)
	printf '| %s | %s | %s | %s | %s | %s (%s) | %s (%s) | %s | %s | %s | %s |\n' "$1" \
		"$(unwinding "$1")" "${PE[$1]}" "${UCPU[$1]}" "${COPIES[$1]}" "${SLOW_M[$1]}" \
		"${SPREAD_M[$1]:-}" "${SLOW_P[$1]}" "${SPREAD_P[$1]:-}" "$mem" "$r" "$su" "$bytes"
}

# A load of real programs, SECS seconds: Debian's python3 (its
# ThreadingHTTPServer) answering curl, one new curl process per request, and
# a shell pipeline of coreutils and gzip; none built with frame pointers.
# The system's own processes run beside it (the recording is system-wide).
real_programs() {
	local secs=$1 srv port end i
	mkdir -p "$OUT/www"
	[ -s "$OUT/www/blob" ] || head -c 262144 /dev/urandom >"$OUT/www/blob"
	/usr/bin/python3 -u -m http.server -b 127.0.0.1 -d "$OUT/www" 0 >"$OUT/http.out" 2>&1 &
	srv=$!
	for i in $(seq 1 200); do
		port=$(sed -n 's/.* port \([0-9]*\).*/\1/p' "$OUT/http.out" | head -1)
		[ -n "$port" ] && break
		sleep 0.05
	done
	if [ -z "$port" ]; then
		echo "bench: python3 -m http.server did not start (see $OUT/http.out)" >&2
		kill "$srv" 2>/dev/null; wait "$srv" 2>/dev/null; return 1
	fi
	end=$(( SECONDS + secs ))
	while [ $SECONDS -lt $end ]; do
		curl -s -o /dev/null "http://127.0.0.1:$port/blob" -o /dev/null "http://127.0.0.1:$port/"
	done &
	i=$!
	while [ $SECONDS -lt $end ]; do
		find /usr/share/doc -type f 2>/dev/null | sort | head -2000 | xargs -r cat 2>/dev/null |
			gzip -1 | md5sum >/dev/null
	done
	wait "$i"
	kill "$srv" 2>/dev/null
	wait "$srv" 2>/dev/null
	return 0
}

# The stack cache under each load, with the default call graph (user stacks
# by CFI): how often a user stack is reusable, and how often a reuse would
# have been wrong (--stack-cache verify copies and unwinds every stack
# anyway and compares).  Three runs per load: the share varies between runs
# (one run in one bench saw 23 % reusable under messaging where the others
# saw 96-97 %).  Ends with the total of wrong reuses (target 0).
cache_line() {
	local load line i mode unw n ok=yes wrong=0 reusable=0 runs=0 sent=0 fallback=0 c
	for load in messaging pipe real; do
		for i in 1 2 3; do
			start offcpu-verify
			case $load in
			real) real_programs 8 ;;
			*) load_time "$load" >/dev/null ;;
			esac
			stop
			mode=$(unwinding offcpu-verify)
			[ "$mode" = CFI ] || ok=no
			line=$(sed -n 's/.*stack cache (verify): //p' "$OUT/offcpu-verify.err" | tr -d ']' | sed 's/ *$//')
			unw=$(awk -F': ' '/user stacks unwound, complete by CFI/ { c += $NF }
				/user stacks unwound, complete, some frames by frame pointer/ { f += $NF }
				/user stacks unwound, cut:/ { x += $NF }
				END { printf "%d complete by CFI, %d with frame-pointer steps, %d cut", c, f, x }' \
				"$OUT/offcpu-verify.err" | tr -d ']')
			echo "- stack cache under ${load/real/real programs}, run $i (user stacks: $mode):" \
				"${line:-no verify line (see $OUT/offcpu-verify.err)};" \
				"copies / fp fallbacks $(copies offcpu-verify | cut -d: -f1,2 | sed 's|:| / |'); unwound: $unw"
			[ -n "$line" ] || { ok=no; continue; }
			n=$(sed -n 's/^\([0-9]*\) of [0-9]* user stacks reusable.*/\1/p' <<<"$line")
			reusable=$(( reusable + ${n:-0} ))
			n=$(sed -n 's/.*, \([0-9]*\) of those wrong.*/\1/p' <<<"$line")
			wrong=$(( wrong + ${n:-0} ))
			runs=$(( runs + 1 ))
			IFS=: read -r c n _ <<<"$(copies offcpu-verify)"
			sent=$(( sent + c )) fallback=$(( fallback + n ))
		done
	done
	# Only a copied stack can be compared: one walked by frame pointer after
	# a full ring buffer has no copy to unwind.
	echo "- wrong reuses of the stack cache (CFI), all $runs verify runs above: $wrong" \
		"(target 0): $([ "$wrong" = 0 ] && echo met || echo NOT met); of $reusable reusable user" \
		"stacks, those among the $sent copied were compared ($fallback more walked by frame" \
		"pointer after a full ring buffer, not compared)$(
		[ $ok = yes ] || echo "; NOT every run unwound by CFI or printed its counts")"
}

# ratio A B TARGET WHAT: one line saying whether A/B meets TARGET ("-": no
# target, the ratio is only shown).
ratio() {
	awk -v a="$1" -v b="$2" -v t="$3" -v w="$4" 'BEGIN {
		if (a == "" || b == "" || a == "n/a" || b == "n/a" || b == 0) { printf "- %s: not measured\n", w; exit }
		r = a / b
		if (t == "-") { printf "- %s: %.2f× (no target)\n", w, r; exit }
		printf "- %s: %.2f× (target ≤ %.2f×): %s\n", w, r, t,
			r <= t ? "met" : sprintf("NOT met, %.0f %% over", (r / t - 1) * 100) }'
}

# atmost LIMIT V...: "met" if every V is a number at most LIMIT.
atmost() {
	local limit=$1
	shift
	awk -v l="$limit" 'BEGIN { ok = 1; for (i = 1; i < ARGC; i++) {
		if (ARGV[i] !~ /^[0-9.]+$/) { print "not measured"; exit }
		if (ARGV[i] + 0 > l + 0) ok = 0 }
		print ok ? "met" : "NOT met" }' "$@"
}

lowest() {	# ARRAY: "ratio profiler" of the smallest slowdown of the three
	local -n sl=$1
	local p
	for p in offcpu-kernel-user offcputime perf-offcpu; do
		[ -n "${sl[$p]:-}" ] && echo "${sl[$p]} $p"
	done | sort -g | head -1
}

# versus A B L WHAT: A's slowdown against B's from the same rounds: the
# median of the round-by-round differences (each round's two ratios share
# the machine's state of that round) and their range; met if that median is
# at most 0.
versus() {
	local -n rat=RATIOS_$3 med=SLOW_$3 spr=SPREAD_$3
	awk -v a="${rat[$1]:-}" -v b="${rat[$2]:-}" -v w="$4" -v na="$1" -v nb="$2" \
		-v l="$([ $3 = M ] && echo messaging || echo pipe)" \
		-v ma="${med[$1]:-?}" -v mb="${med[$2]:-?}" -v sa="${spr[$1]:-}" -v sb="${spr[$2]:-}" 'BEGIN {
		k = split(a, x, " "); split(b, y, " "); n = 0; le = 0
		for (i = 1; i <= k; i++) if (x[i] ~ /^[0-9.]+$/ && y[i] ~ /^[0-9.]+$/) {
			d[++n] = x[i] - y[i]; le += d[n] <= 0 }
		printf "- %s slowdown, %s: %s %s (%s) vs %s %s (%s); ", l, w, na, ma, sa, nb, mb, sb
		if (!n) { print "not measured"; exit }
		for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (d[j] < d[i]) { t = d[i]; d[i] = d[j]; d[j] = t }
		m = n % 2 ? d[(n + 1) / 2] : (d[n / 2] + d[n / 2 + 1]) / 2
		printf "round by round %s − %s: median %+.3f (%+.3f to %+.3f), no worse in %d of %d rounds: %s\n",
			na, nb, m, d[1], d[n], le, n, m <= 0 ? "met" : "NOT met" }'
}

rest() { awk -v a="$1" -v b="$2" 'BEGIN { if (a ~ /^[0-9.]+$/ && b ~ /^[0-9.]+$/) printf "%.1f", a - b }'; }

summary() {
	local l u=offcpu-user k=offcpu-kernel-user uf=offcpu-user-fp kf=offcpu-kernel-user-fp
	# Issue 13: CFI unwinding (the default) costs at most what perf's frame
	# pointer walk does; like for like, both record user stacks only.
	ratio "${PE[$u]:-}" "${PE[perf-offcpu]:-}" 1 \
		"user stacks by CFI (the default), ns per event vs perf --off-cpu (frame pointers)"
	ratio "${PE[$k]:-}" "${PE[perf-offcpu]:-}" - \
		"kernel + user stacks by CFI (the default, all of it) vs perf --off-cpu (user stacks only)"
	# Issue 27: the whole cost (BPF + the profiler's own CPU over its whole
	# life), like for like with perf --off-cpu and offcputime.
	ratio "${WHOLE[$u]:-}" "${WHOLE[perf-offcpu]:-}" 1 \
		"user stacks by CFI (the default: copied), BPF + process ns per switch vs perf --off-cpu"
	ratio "${WHOLE[$k]:-}" "${WHOLE[offcputime]:-}" 1 \
		"kernel + user stacks by CFI (the default: copied), BPF + process ns per switch vs offcputime"
	ratio "${WHOLE[offcpu-user-kunwind]:-}" "${WHOLE[perf-offcpu]:-}" 1 \
		"user stacks by CFI in the kernel (--unwind-in kernel), BPF + process ns per switch vs perf --off-cpu"
	ratio "${WHOLE[offcpu-kernel-user-kunwind]:-}" "${WHOLE[offcputime]:-}" 1 \
		"kernel + user stacks by CFI in the kernel, BPF + process ns per switch vs offcputime"
	ratio "${WHOLE[offcpu-kernel-user-kunwind]:-}" "${WHOLE[$k]:-}" - \
		"kernel + user stacks, BPF + process ns per switch, CFI in the kernel vs copied (the default)"
	ratio "${PE[$uf]:-}" "${PE[perf-offcpu]:-}" 0.5 \
		"user stacks by frame pointer (--call-graph user,fp), ns per event vs perf --off-cpu"
	ratio "${PE[$k]:-}" "${PE[offcputime]:-}" 1 \
		"kernel + user stacks by CFI (the default), ns per event vs offcputime (frame pointers)"
	ratio "${PE[$kf]:-}" "${PE[offcputime]:-}" 0.5 \
		"kernel + user stacks by frame pointer (--call-graph fp), ns per event vs offcputime"
	ratio "${PE[$u]:-}" "${PE[$uf]:-}" - "user stacks, BPF ns per event, CFI vs frame pointers"
	echo "- offcpu's own CPU per switch (copies read, CFI unwound in user space):" \
		"CFI ${UCPU[$u]:-?} / ${UCPU[$k]:-?} ns, frame pointers ${UCPU[$uf]:-?} / ${UCPU[$kf]:-?} ns" \
		"(user / kernel + user; no target)"
	echo "- the profiler's wakeups per second while the loads ran (its threads' voluntary switches," \
		"each one preempting the load): offcpu ${WAKE[$u]:-?} / ${WAKE[$k]:-?} (user / kernel + user)," \
		"frame pointers ${WAKE[$uf]:-?} / ${WAKE[$kf]:-?}, perf --off-cpu ${WAKE[perf-offcpu]:-?}," \
		"offcputime ${WAKE[offcputime]:-?} (no target)"
	ratio "${PE[$u]:-}" "${PE[offcpu-user-nocache]:-}" 1 \
		"user stacks (CFI), with the stack cache vs without"
	ratio "${PE[$k]:-}" "${PE[offcpu-kernel-user-nocache]:-}" 1 \
		"kernel + user stacks (CFI), with the stack cache vs without"
	ratio "${PE[kernel-walk-only]:-}" "${PE[offcputime]:-}" 0.5 \
		"the kernel stack walk alone (the floor of kernel + user) vs offcputime"
	ratio "${PE[offcpu-kernel-user-tp-hash]:-}" "${PE[$kf]:-}" - \
		"the BTF-free variant (tp,hash, frame pointers) vs tp_btf,task with --call-graph fp"
	ratio "${PE[offcpu-kernel-user-wakers]:-}" "${PE[$k]:-}" 3 \
		"--wakers (waker stacks walked at each wakeup) vs the default"
	echo "- locked map memory, default (kernel + user, CFI): ${ROW_MEM[$k]:-?} MiB, user stacks" \
		"${ROW_MEM[$u]:-?} MiB (budget ≤ 16): $(atmost 16 "${ROW_MEM[$k]:-}" "${ROW_MEM[$u]:-}")"
	echo "- locked map memory, --call-graph fp: ${ROW_MEM[$kf]:-?} MiB, user stacks" \
		"${ROW_MEM[$uf]:-?} MiB (target ≤ 4): $(atmost 4 "${ROW_MEM[$kf]:-}" "${ROW_MEM[$uf]:-}")"
	echo "- peak RSS, frame pointers: ${ROW_RSS[$uf]:-?} / ${ROW_RSS[$kf]:-?} MiB (user / kernel +" \
		"user; target ≤ 8): $(atmost 8 "${ROW_RSS[$uf]:-}" "${ROW_RSS[$kf]:-}")"
	echo "- peak RSS, CFI: ${ROW_RSS[$u]:-?} / ${ROW_RSS[$k]:-?} MiB, of it CFI rows" \
		"${ROW_CFI[$u]:-?} / ${ROW_CFI[$k]:-?} MiB (rows: target ≤ 32, the --unwind-tables" \
		"default: $(atmost 32 "${ROW_CFI[$u]:-}" "${ROW_CFI[$k]:-}"); the rest: target ≤ 8:" \
		"$(atmost 8 "$(rest "${ROW_RSS[$u]:-}" "${ROW_CFI[$u]:-}")" \
		"$(rest "${ROW_RSS[$k]:-}" "${ROW_CFI[$k]:-}")"))"
	echo "- start-up: CFI ${ROW_SU[$u]:-?} / ${ROW_SU[$k]:-?} ms, frame pointers" \
		"${ROW_SU[$uf]:-?} / ${ROW_SU[$kf]:-?} ms (target ≤ 150): $(atmost 150 "${ROW_SU[$u]:-}" \
		"${ROW_SU[$k]:-}" "${ROW_SU[$uf]:-}" "${ROW_SU[$kf]:-}")"
	for l in M P; do
		versus offcpu-user perf-offcpu $l "user stacks"
		versus offcpu-kernel-user offcputime $l "kernel + user"
		echo "- $([ $l = M ] && echo messaging || echo pipe) slowdown, lowest of the three" \
			"(offcpu's default): $(lowest SLOW_$l)"
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
loadavg() { cut -d' ' -f1-3 /proc/loadavg; }
declare -A PE=() UCPU=() WHOLE=() WAKE=() COPIES=() ROW_CFI=() ROW_MEM=() ROW_RSS=() ROW_SU=() SLOW_M=() SLOW_P=() \
	SPREAD_M=() SPREAD_P=() RATIOS_M=() RATIOS_P=()
{
	LOAD0=$(loadavg) T0=$(date -u +%H:%M)
	# Per-event cost first, in rounds over all profilers.
	declare -A costs=()
	for r in $(seq 1 "$ROUNDS"); do
		for p in $PROFILERS $NOCACHE; do
			costs[$p]+="$(cost "$p") "
		done
	done
	for p in $PROFILERS $NOCACHE; do
		PE[$p]=$(tr ' ' '\n' <<<"${costs[$p]}" | cut -d: -f1 | grep -E '^[0-9]+$' | median)
		[ -n "${PE[$p]}" ] || PE[$p]=n/a
		UCPU[$p]=$(tr ' ' '\n' <<<"${costs[$p]}" | cut -sd: -f2 | grep -E '^[0-9]+$' | median)
		[ -n "${UCPU[$p]}" ] || UCPU[$p]=n/a
		# Copies and frame-pointer fallbacks, summed over the rounds.
		WAKE[$p]=$(tr ' ' '\n' <<<"${costs[$p]}" | cut -sd: -f6 | grep -E '^[0-9]+$' | median)
		COPIES[$p]=$(tr ' ' '\n' <<<"${costs[$p]}" | awk -F: 'NF >= 5 { s += $3; f += $4; k += $5 }
			END { if (!(s + f + k)) { print "–"; exit }
				printf "%s%d / %d (%.2f %% fp)", k ? k " in kernel, " : "", s, f,
					100 * f / (s + f + k) }')
		WHOLE[$p]=$(awk -v a="${PE[$p]}" -v b="${UCPU[$p]}" \
			'BEGIN { if (a ~ /^[0-9]+$/ && b ~ /^[0-9]+$/) print a + b; else print "n/a" }')
	done
	# Then the slowdowns, in rounds over all profilers too.
	slowdown_rounds messaging M
	slowdown_rounds pipe P
	echo "# offcpu overhead, $(date -u +%Y-%m-%d), $(uname -r), $(nproc) CPUs"
	echo
	echo "| profiler | user stacks | ns per sched_switch | profiler CPU ns per switch | copies / fp fallbacks | messaging slowdown | pipe slowdown | locked MiB | RSS MiB | start-up ms | perf.data B/s |"
	echo "|---|---|---|---|---|---|---|---|---|---|---|"
	for p in $PROFILERS; do
		measure "$p"
	done
	for p in $NOCACHE; do
		echo "| $p | $(unwinding "$p") | ${PE[$p]} | ${UCPU[$p]} | ${COPIES[$p]} | | | | | | |"
	done
	echo
	echo "ns per sched_switch: median of $ROUNDS rounds (each: one messaging and one pipe"
	echo "run per profiler, profilers in turn) of the BPF programs' run time per sched_switch"
	echo "run. Profiler CPU: the profiler process's own CPU time over its whole life, start-up"
	echo "to exit (its output written: perf writes its samples and offcputime resolves and"
	echo "prints its stacks when stopped), per sched_switch of the same run. User stacks: CFI (copied, unwound"
	echo "with the files' call-frame information: offcpu's default, as \`-v\` said) or fp (frame"
	echo "pointers; \`--call-graph fp\` for the *-fp rows). offcputime records kernel and user"
	echo "stacks; perf-offcpu is \`perf record --off-cpu -e dummy -a\` (6.12, built with BPF"
	echo "skeletons), user stacks only, summed in a BPF map and written as samples when it stops;"
	echo "*-nocache is offcpu with \`--stack-cache off\`; kernel-walk-only is one bpf_get_stackid"
	echo "of the kernel stack per switch-out of a sleeping thread and nothing else"
	echo "(bench/kstack.bpf.c); *-tp-hash is offcpu's BTF-free variant (\`--btf none\`: classic"
	echo "sched_switch tracepoint, frame pointers). Slowdown: $RUNS rounds taking the"
	echo "profilers in turn, a run without a profiler before and after each run with one;"
	echo "each profiled run over the mean of its two neighbours, the median of the $RUNS ratios"
	echo "and (their range) (1.000 = no slowdown); pipe runs pinned to CPU 0. Copies / fp fallbacks: user stacks offcpu copied for CFI"
	echo "unwinding, and those it walked by frame pointer instead because the ring buffer was"
	echo "full (counted, \`-v\`), summed over the rounds. Locked MiB: memlock of the profiler's BPF maps after two"
	echo "messaging runs (offcpu's dwarf stack cache grows as threads are seen)."
	echo
	summary
	[ "$VERIFY" = 0 ] || cache_line
	echo
	echo "Run from $T0 to $(date -u +%H:%M) UTC; load average (1, 5, 15 min) at the start: $LOAD0,"
	echo "at the end: $(loadavg)."
} | tee "$OUT/RESULTS.md"
cleanup
rm -f "$ROOTFS/tmp/perf-offcpu.data"	# the slowdown runs' recording
if [ "$PROFILERS" = "$ALL" ] && [ "$NOCACHE" = "$NOCACHE_ALL" ] && [ "$VERIFY" != 0 ]; then cp "$OUT/RESULTS.md" "$HERE/RESULTS.md"; fi
