#!/bin/bash
# `make bench-perf` (root): offcpu's perf-events backend (--backend perf, no
# BPF) beside what people run on such kernels by hand, `perf record -e
# sched:sched_switch -a` with --call-graph fp and with --call-graph dwarf,
# in one run on this machine; prints a table and writes
# build/bench/PERF_BACKEND.md (bench/PERF_BACKEND.md after a full run).
#
# The whole cost of seeing the stacks, per context switch of the load:
#   kernel      the load's slowdown: `perf bench sched pipe` pinned to CPU 0
#               (every message two switches there), each profiled run against
#               the mean of the runs without a profiler before and after it,
#               the time it lost over its switches; BPF's bpf_stats cannot
#               see perf events' cost, so this is the kernel side for all rows
#   record      the profiler process's own CPU over its whole life (exec to
#               exit, its file written), pinned to CPU 1, per switch
#   report      `perf report --stdio` of the file, CPU per switch: perf's
#               dwarf recording unwinds its stack copies here; offcpu's file
#               has its stacks unwound already, read by the same command
# and the file's size per switch.  Median of RUNS rounds, the profilers in
# turn (order rotated each round), so a drift of the machine hits all alike.
# The perf here is the host's (Debian's linux-perf): these rows need no BPF
# skeleton, unlike bench/run.sh's perf --off-cpu.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
OFFCPU=${OFFCPU:-$ROOT/build/x86_64/offcpu}
OUT=$ROOT/build/bench/perf-backend
PERF=${PERF:-perf}
RUNS=${RUNS:-5}
LOOPS=${LOOPS:-10000}	# pipe round trips a run: 2 × LOOPS switches on CPU 0
ALL="offcpu-perf offcpu-perf-fp perf-switch-fp perf-switch-dwarf"
PROFILERS=${PROFILERS:-$ALL}	# a subset is printed, not written to bench/

[ "$(id -u)" = 0 ] || { echo "bench/perf_backend.sh: needs root" >&2; exit 1; }
[ -x "$OFFCPU" ] || { echo "bench/perf_backend.sh: no $OFFCPU (make first)" >&2; exit 1; }
"$PERF" version >/dev/null 2>&1 ||
	{ echo "bench/perf_backend.sh: no perf (Debian's linux-perf, toolchain/deps.sh)" >&2; exit 1; }
[ "$(nproc)" -ge 2 ] || { echo "bench/perf_backend.sh: needs 2 CPUs (load and profiler apart)" >&2; exit 1; }
mkdir -p "$OUT"
SWITCHES=$((2 * LOOPS))

# Seconds of one pipe run on CPU 0.
load_time() {
	taskset -c 0 "$PERF" bench sched pipe -l "$LOOPS" 2>/dev/null | awk '/Total time/ { print $3 }'
}

# The profiler's command line (its output file OUT/NAME.data).
command_of() {
	local f=$OUT/$1.data
	case $1 in
	offcpu-perf) echo "$OFFCPU -v -a --backend perf -o $f" ;;
	offcpu-perf-fp) echo "$OFFCPU -v -a --backend perf --call-graph fp -o $f" ;;
	perf-switch-fp) echo "$PERF record -q -e sched:sched_switch --call-graph fp -a -o $f" ;;
	perf-switch-dwarf) echo "$PERF record -q -e sched:sched_switch --call-graph dwarf -a -o $f" ;;
	esac
}

# cpu_of FILE: the user + system seconds of bash's `times` second line.
cpu_of() {
	awk 'NR == 2 { t = 0; for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); t += a[1] * 60 + a[2] }
		printf "%.3f", t }' "$1"
}

# ready NAME PID: the profiler records (offcpu says so; perf has opened its
# events when its file has a header), or it died.
ready() {
	local i
	for i in $(seq 1 500); do
		case $1 in
		offcpu-*) grep -qs recording "$OUT/$1.err" && return 0 ;;
		*) [ -s "$OUT/$1.data" ] && return 0 ;;
		esac
		kill -0 "$2" 2>/dev/null || return 1
		sleep 0.02
	done
	return 1
}

# lost NAME: the records the recording says it lost (offcpu's -v summary;
# perf report's "lost N chunks" warning, in OUT/report.err).
lost() {
	case $1 in
	offcpu-*) sed -n 's/.*samples, \([0-9]*\) lost).*/\1/p' "$OUT/$1.err" | tail -n 1 ;;
	*) sed -n 's/.*and lost \([0-9]*\) chunks.*/\1/p' "$OUT/report.err" | tail -n 1 ;;
	esac | awk '{ n = $1 } END { print n + 0 }'
}

# profiled NAME: one load run under NAME; prints "LOAD_S RECORD_CPU_S REPORT_CPU_S BYTES LOST".
profiled() {
	local name=$1 pid t rec rep bytes
	rm -f "$OUT/$name.data" "$OUT/$name.err" "$OUT/times"
	# shellcheck disable=SC2046 # the command's words
	( taskset -c 1 $(command_of "$name") >/dev/null 2>"$OUT/$name.err" & echo $! >"$OUT/pid"
	  wait $!; times >"$OUT/times" ) &
	local job=$!
	sleep 0.1
	pid=$(cat "$OUT/pid")
	ready "$name" "$pid" || { echo "bench/perf_backend.sh: $name did not start: $(tail -n 1 "$OUT/$name.err")" >&2
		kill "$pid" 2>/dev/null; wait "$job"; echo "n/a n/a n/a n/a n/a"; return; }
	sleep 0.3
	t=$(load_time)
	kill -INT "$pid"
	wait "$job"
	sync
	rec=$(cpu_of "$OUT/times")
	bytes=$(stat -c %s "$OUT/$name.data" 2>/dev/null || echo n/a)
	rep=$( { time -p taskset -c 1 "$PERF" report --stdio -i "$OUT/$name.data" >/dev/null \
		2>"$OUT/report.err"; } 2>&1 | awk '$1 == "user" || $1 == "sys" { s += $2 } END { printf "%.3f", s }')
	echo "$t $rec $rep $bytes $(lost "$name")"
}

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

declare -A KERN=() REC=() REP=() BYTES=() LOST=()
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg) T0=$(date -u +%H:%M)
load_time >/dev/null	# warm-up, discarded
b0=$(load_time)
ps=($PROFILERS)
for r in $(seq 1 "$RUNS"); do
	for i in $(seq 0 $(( ${#ps[@]} - 1 ))); do
		p=${ps[$(( (i + r - 1) % ${#ps[@]} ))]}
		read -r t rec rep bytes lost < <(profiled "$p")
		b1=$(load_time)
		# ns the load lost per switch, against the mean of its neighbours.
		KERN[$p]+="$(awk -v t="$t" -v a="$b0" -v b="$b1" -v n="$SWITCHES" 'BEGIN {
			if (t ~ /^[0-9.]+$/) printf "%.0f", (t - (a + b) / 2) * 1e9 / n; else print "n/a" }') "
		REC[$p]+="$(awk -v s="$rec" -v n="$SWITCHES" 'BEGIN { if (s ~ /^[0-9.]+$/) printf "%.0f", s * 1e9 / n; else print "n/a" }') "
		REP[$p]+="$(awk -v s="$rep" -v n="$SWITCHES" 'BEGIN { if (s ~ /^[0-9.]+$/) printf "%.0f", s * 1e9 / n; else print "n/a" }') "
		BYTES[$p]+="$bytes "
		LOST[$p]=$(( ${LOST[$p]:-0} + ${lost/n\/a/0} ))
		rm -f "$OUT/$p.data"
		b0=$b1
	done
done

med() { tr ' ' '\n' <<<"$1" | grep -E '^-?[0-9.]+$' | median; }
declare -A M_K=() M_REC=() M_REP=() M_W=() M_B=()
{
	echo "# offcpu's perf backend beside perf record -e sched:sched_switch, $(date -u +%Y-%m-%d)," \
		"$(uname -r), $(nproc) CPUs, $("$PERF" version)"
	echo
	echo "| profiler | stacks | kernel ns per switch (load's slowdown) | record CPU ns per switch | report CPU ns per switch | whole ns per switch | file bytes per switch | records lost |"
	echo "|---|---|---|---|---|---|---|---|"
	for p in $PROFILERS; do
		M_K[$p]=$(med "${KERN[$p]}") M_REC[$p]=$(med "${REC[$p]}") M_REP[$p]=$(med "${REP[$p]}")
		M_B[$p]=$(tr ' ' '\n' <<<"${BYTES[$p]}" | grep -E '^[0-9]+$' | median |
			awk -v n="$SWITCHES" 'NF { printf "%.0f", $1 / n }')
		M_W[$p]=$(awk -v a="${M_K[$p]:-}" -v b="${M_REC[$p]:-}" -v c="${M_REP[$p]:-}" \
			'BEGIN { if (a != "" && b != "" && c != "") printf "%.0f", (a > 0 ? a : 0) + b + c; else print "n/a" }')
		case $p in
		*-fp) s="kernel + user, frame pointers" ;;
		perf-switch-dwarf) s="kernel + user, dwarf (8 KiB copies, unwound by perf report)" ;;
		*) s="kernel + user, CFI (copies unwound by offcpu while recording)" ;;
		esac
		echo "| $p | $s | ${M_K[$p]:-n/a} | ${M_REC[$p]:-n/a} | ${M_REP[$p]:-n/a} | ${M_W[$p]} | ${M_B[$p]:-n/a} | ${LOST[$p]:-n/a} |"
	done
	echo
	echo "Load: \`perf bench sched pipe -l $LOOPS\` pinned to CPU 0 ($SWITCHES switches a run), the"
	echo "profiler pinned to CPU 1, recording the whole system (-a). Kernel: the load's time"
	echo "lost per switch against the mean of the unprofiled runs before and after (a"
	echo "negative median is noise: counted as 0 in the whole). Record: the profiler's user"
	echo "+ system CPU from exec to exit. Report: \`perf report --stdio\` of its file (perf's"
	echo "dwarf recording is unwound here). Medians of $RUNS rounds, profilers in turn."
	echo "Records lost: summed over the rounds (offcpu's -v count; perf report's lost chunks)."
	echo
	ratio() {
		awk -v a="$1" -v b="$2" -v t="$3" -v w="$4" 'BEGIN {
			if (a !~ /^[0-9.]+$/ || b !~ /^[0-9.]+$/ || b == 0) { printf "- %s: not measured\n", w; exit }
			r = a / b
			printf "- %s: %.4f× (target ≤ %s×): %s\n", w, r, t, r <= t ? "met" : "NOT met" }'
	}
	ratio "${M_W[offcpu-perf]:-}" "${M_W[perf-switch-dwarf]:-}" 1 \
		"whole cost, offcpu --backend perf (CFI) vs perf record --call-graph dwarf"
	ratio "${M_W[offcpu-perf-fp]:-}" "${M_W[perf-switch-fp]:-}" 1 \
		"whole cost, offcpu --backend perf --call-graph fp vs perf record --call-graph fp"
	ratio "${M_B[offcpu-perf]:-}" "${M_B[perf-switch-dwarf]:-}" 0.05 \
		"file size, offcpu --backend perf vs perf record --call-graph dwarf (20× smaller)"
	ratio "${M_B[offcpu-perf-fp]:-}" "${M_B[perf-switch-fp]:-}" 1 \
		"file size, --call-graph fp, offcpu vs perf"
	echo
	echo "Run from $T0 to $(date -u +%H:%M) UTC; load average (1, 5, 15 min) at the start: $LOAD0," \
		"at the end: $(cut -d' ' -f1-3 /proc/loadavg)."
} | tee "$OUT/PERF_BACKEND.md"
[ "$PROFILERS" = "$ALL" ] && [ "$RUNS" -ge 5 ] && cp "$OUT/PERF_BACKEND.md" "$HERE/PERF_BACKEND.md"
exit 0
