# Sourced by tests/t_*.sh.  Each check reports one line to $RESULTS:
#   PASS name | FAIL name: why | SKIP name: why
# and echoes it for the log.  A test file may hold many checks.
: "${RESULTS:=/dev/null}"
ROOT=${ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
export ROOT
OFFCPU=${OFFCPU:-$ROOT/build/x86_64/offcpu}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/offcpu-test.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
# board_var BOARD VAR: a fact of board/BOARD.mk (make print-VAR).
source "$ROOT/tests/board.sh"

# The first task-bound perf event of a machine waits, in D, for an RCU
# grace period (perf_sched_events, enabled in account_event); the blocker's
# main thread opens its task clock in blocker_main_clock, and must time that
# block by the scheduler's CPU clock, which stops at the dequeue, before the
# sched_switch tracepoint and the profiler's walks there (offcpu's block
# starts after them, like the task clock): 30-140 us more than offcpu on
# this 2-CPU host (100-200 us in a CI run) of a 4-14 ms block; the walks,
# timed in BPF, were 33-53 us of it.  A task clock held open for the test
# file's life keeps the key enabled, so no workload open blocks there; the
# QEMU guests still time it (30-40 ms, where those microseconds are 1 %).
hold_perf_sched_key() {
	[ "$(id -u)" = 0 ] && command -v perf >/dev/null || return 0
	perf stat -e task-clock -o /dev/null -- python3 -c '
import os, select, sys
shell = os.pidfd_open(int(sys.argv[1]))
print("held", flush=True)
select.select([shell], [], [])' $$ >"$WORK/perf-key" 2>/dev/null </dev/null &
	disown
	for _ in $(seq 1 100); do [ -s "$WORK/perf-key" ] && return 0; sleep 0.05; done
	echo "tests/lib.sh: no task clock held open: the blocker's first open may block" >&2
}
hold_perf_sched_key

pass() { echo "PASS $1" | tee -a "$RESULTS"; }
fail() { echo "FAIL $1: $2" | tee -a "$RESULTS"; }
skip() { echo "SKIP $1: $2" | tee -a "$RESULTS"; }
# explain FILE: after a failed check, log the summary offcpu printed to FILE
# (its drop counters say where a missing block went).
explain() {
	tail -n 1 "$RESULTS" 2>/dev/null | grep -q '^FAIL' || return 0
	grep '^\[ offcpu:' "$1" | sed 's/^/    /'
}
# check NAME CMD...: pass when CMD succeeds.
check() {
	local name=$1; shift
	if "$@" >"$WORK/check.out" 2>&1; then pass "$name"; else
		fail "$name" "$(tail -n 3 "$WORK/check.out" | tr '\n' ' ')"; fi
}
# check_fails NAME WHY CMD...: a control that must fail (a check run on what
# it must reject); WHY says what passing would mean.
check_fails() {
	local name=$1 why=$2; shift 2
	if "$@" >/dev/null 2>&1; then fail "$name" "$why"; else pass "$name"; fi
}

# wait_recording ERR: up to 3 s for the offcpu writing its stderr to ERR
# to say it records (signals sent before that find no handler yet).
wait_recording() {
	for _ in $(seq 1 300); do grep -qs '^offcpu: recording' "$1" && return 0; sleep 0.01; done
	return 1
}

# rotated_files BASE: the files a rotation or a flight recorder wrote for
# -o BASE, as perf names them (BASE.YYYYmmddHHMMSSCC), oldest first.
rotated_files() { ls -1 "$1".* 2>/dev/null | grep -E "^$1\.[0-9]{16}\$"; }

# rss_every_5s PID FILE: PID's VmRSS ("SECONDS KiB" lines) appended to FILE
# every 5 s until PID ends; returns PID's exit status.
rss_every_5s() {
	local pid=$1 out=$2
	while kill -0 "$pid" 2>/dev/null; do
		awk -v t="$SECONDS" '/^VmRSS/ { print t, $2 }' "/proc/$pid/status" 2>/dev/null >>"$out"
		sleep 5
	done
	wait "$pid"
}

# bad_value NAME PATTERN ARGS...: offcpu ARGS refused as a bad option
# should be: exit 2, one line holding PATTERN, nothing written; the check
# is named $T-bad-NAME.
bad_value() {
	local name=$1 pat=$2 rc lines
	shift 2
	(cd "$WORK" && "$OFFCPU" "$@" -o bad.data -- true >"$WORK/bad.out" 2>"$WORK/bad.err")
	rc=$?
	lines=$(grep -c . "$WORK/bad.err")
	if [ $rc -eq 2 ] && [ "$lines" -eq 1 ] && grep -qF -- "$pat" "$WORK/bad.err" &&
	   ! ls "$WORK"/bad.data* >/dev/null 2>&1; then
		pass "$T-bad-$name"
	else
		fail "$T-bad-$name" "exit $rc, $lines lines: $(head -c 200 "$WORK/bad.err" | tr '\n' ' ')"
	fi
}

# one_line_error NAME PATTERN CMD...: CMD (offcpu given what it cannot
# run with) must exit non-zero with exactly one line on stderr, matching
# the extended regex PATTERN.
one_line_error() {
	local name=$1 pat=$2 rc lines
	shift 2
	"$@" >"$WORK/one-line.out" 2>"$WORK/one-line.err"
	rc=$?
	lines=$(grep -c . "$WORK/one-line.err")
	if [ $rc -ne 0 ] && [ "$lines" -eq 1 ] && grep -qE -- "$pat" "$WORK/one-line.err"; then
		pass "$name"
	else
		fail "$name" "exit $rc, $lines lines: $(head -c 200 "$WORK/one-line.err" | tr '\n' ' ')"
	fi
}

# use_host_btf: make $OFFCPU record on a host kernel without BTF
# (/sys/kernel/btf/vmlinux), as users of such kernels do: through --btf with
# a minimal BTF reduced from the kernel's own vmlinux (DWARF or .BTF:
# $OFFCPU_TEST_VMLINUX, or Debian's debug or boot image), unless offcpu's
# embedded archive knows the kernel.  OFFCPU wraps the binary then (every
# recording gets --btf; report does not).  OFFCPU_TEST_FORCE_BTF=1 takes
# that path on a kernel with BTF too (OFFCPU_TEST_VMLINUX=/sys/kernel/btf/vmlinux).
# Returns 1, with the reason in BTF_WHY, when there is no way.
use_host_btf() {
	local v rel
	rel=$(uname -r)
	BTF_WHY=""
	if [ -z "${OFFCPU_TEST_FORCE_BTF:-}" ]; then
		[ -r /sys/kernel/btf/vmlinux ] && return 0
		"$OFFCPU" probe >/dev/null 2>&1 && return 0
	fi
	for v in ${OFFCPU_TEST_VMLINUX:-} "/usr/lib/debug/boot/vmlinux-$rel" "/boot/vmlinux-$rel"; do
		[ -r "$v" ] || continue
		if "$ROOT/btf/min_btf.sh" reduce "$v" x86_64 "$ROOT/build/bpf/x86_64/offcpu.bpf.o" \
			"$WORK/host-min.btf" >"$WORK/host-min.log" 2>&1; then
			printf '#!/bin/sh\ncase "$1" in\nreport|selftest|--help|--version) exec %q "$@" ;;\nprobe) shift; exec %q probe --btf %q "$@" ;;\nesac\nexec %q --btf %q "$@"\n' \
				"$OFFCPU" "$OFFCPU" "$WORK/host-min.btf" "$OFFCPU" "$WORK/host-min.btf" >"$WORK/offcpu-btf"
			chmod +x "$WORK/offcpu-btf"
			OFFCPU=$WORK/offcpu-btf
			return 0
		fi
		BTF_WHY="reducing $v failed: $(tail -n 1 "$WORK/host-min.log")"
	done
	BTF_WHY=${BTF_WHY:-"no kernel BTF, and no vmlinux of $rel to reduce (OFFCPU_TEST_VMLINUX)"}
	return 1
}

# need_bpf NAME FILE...: the preamble of a recording test: skip NAME without
# root or a usable BTF (use_host_btf, run here so its OFFCPU wrapper holds),
# fail it when a FILE is not built.  Non-zero: the test ends there.
need_bpf() {
	local name=$1 f
	shift
	if [ "$(id -u)" != 0 ]; then
		skip "$name" "needs root to load BPF programs"
		return 1
	fi
	if ! use_host_btf; then
		skip "$name" "$BTF_WHY"
		return 1
	fi
	for f in "$@"; do
		[ -x "$f" ] || { fail "$name" "$f not built"; return 1; }
	done
}

# record_blocker NAME: need_bpf NAME for $BLOCKER, then 2 s of it recorded
# into $WORK/r.data (its output in r.out, offcpu's stderr in rec.err);
# NAME-record fails where the recording does.  Non-zero: no recording.
record_blocker() {
	need_bpf "$1" "$BLOCKER" || return 1
	"$OFFCPU" -o "$WORK/r.data" -- "$BLOCKER" -t 2 >"$WORK/r.out" 2>"$WORK/rec.err" && return 0
	fail "$1-record" "$(tail -n 1 "$WORK/rec.err")"
	return 1
}

# record_distro PREFIX NAME [offcpu options]: offcpu -v records 2 s of
# $DISTRO into $WORK/NAME.data (the workload's output NAME.out, offcpu's
# stderr NAME.err) and folds it into NAME.folded; fails PREFIX-NAME-runs or
# PREFIX-NAME-report where either step fails.
record_distro() {
	local prefix=$1 name=$2
	shift 2
	"$OFFCPU" -v "$@" -o "$WORK/$name.data" -- "$DISTRO" -t 2 >"$WORK/$name.out" 2>"$WORK/$name.err" ||
		fail "$prefix-$name-runs" "exit $?: $(tail -n 1 "$WORK/$name.err")"
	"$OFFCPU" report -i "$WORK/$name.data" --folded >"$WORK/$name.folded" 2>"$WORK/$name.rerr" ||
		fail "$prefix-$name-report" "exit $?: $(head -n 1 "$WORK/$name.rerr")"
}

# verified CHECK ERR LINE RE MIN N BAD: offcpu's -v line holding LINE (a
# fixed string) in ERR, logged; RE (sed -E) takes two numbers from it, N
# and BAD.  CHECK passes where N > MIN and BAD is 0.
verified() {
	local line n bad
	line=$(grep -F -m1 -- "$3" "$2")
	echo "    ${line:-no $3 line}"
	read -r n bad <<<"$(sed -nE "s/$4/\1 \2/p" <<<"$line")"
	if [ "${n:-0}" -gt "$5" ] && [ "${bad:-1}" -eq 0 ]; then
		pass "$1"
	else
		fail "$1" "$6 ${n:-?}, $7 ${bad:-?}"
	fi
}

# stack_cache_verified CHECK ERR: --stack-cache verify's line in ERR counts
# reuses, none of them wrong (a reused id whose stack differs).
stack_cache_verified() {
	verified "$1" "$2" 'stack cache (verify)' \
		'.*: ([0-9]+) of [0-9]+ user.*, ([0-9]+) of those wrong.*' 0 reusable wrong
}
