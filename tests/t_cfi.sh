#!/bin/bash
# CFI tables (src/unwind/cfi.c) against binutils: for the real libc.so.6 of each
# board (Debian's, host and cross packages) and a distribution-built program,
# every row readelf --debug-dump=frames-interp prints must get the same CFA,
# return-address and frame-pointer rules from offcpu's table (the table
# builder's unit tests: build/unit/test_cfi, via t_unit.sh).
set -euo pipefail
source "$(dirname "$0")/lib.sh"

if ! make -s -C "$ROOT" build/unit/test_cfi >"$WORK/make.log" 2>&1; then
	fail cfi-build "$(grep -m 3 -E 'error|Error' "$WORK/make.log" | tr '\n' ' ')"
	exit 0
fi
compare() {	# NAME ARCH FILE [MIN_ROWS]
	local name=$1 arch=$2 file=$3 min=${4:-1000}
	if [ ! -r "$file" ]; then
		fail "$name" "no $file (toolchain/deps.sh installs it)"
		return
	fi
	if ! "$ROOT/build/unit/test_cfi" dump "$file" >"$WORK/dump" 2>"$WORK/err"; then
		fail "$name" "$(head -1 "$WORK/err")"
		return
	fi
	# readelf exits 1 on files without .debug_info; its output is checked below.
	readelf --debug-dump=frames-interp "$file" >"$WORK/readelf" 2>/dev/null || true
	if python3 "$ROOT/tests/cfi_check.py" "$WORK/dump" "$WORK/readelf" "$arch" "$min" >"$WORK/out"; then
		pass "$name"
	else
		fail "$name" "$(tail -1 "$WORK/out"); $(head -1 "$WORK/out")"
	fi
	sed 's/^/    /' "$WORK/out" | tail -1
}
compare cfi-readelf-libc-x86_64 x86_64 /lib/x86_64-linux-gnu/libc.so.6
compare cfi-readelf-libc-arm64 arm64 /usr/aarch64-linux-gnu/lib/libc.so.6
compare cfi-readelf-libc-s390x s390x /usr/s390x-linux-gnu/lib/libc.so.6
compare cfi-readelf-libc-riscv64 riscv64 /usr/riscv64-linux-gnu/lib/libc.so.6
compare cfi-readelf-bash x86_64 /bin/bash
# Hostile CFI: a register number libdw would grow its frame state to (2 GiB
# of memset per row; found by fuzz_cfi) refuses the file with one line.
seed=$(ls "$ROOT"/tests/fuzz/corpus/cfi/cfi-slow-unit-* | head -1)
if ! "$ROOT/build/unit/test_cfi" dump "$seed" >/dev/null 2>"$WORK/err" &&
	grep -q "register number above" "$WORK/err"; then
	pass cfi-hostile-register
else
	fail cfi-hostile-register "$(head -1 "$WORK/err")"
fi

# The distribution-built workload of each board (make workloads).
for t in x86_64 arm64 s390x riscv64; do
	compare "cfi-readelf-distro-$t" "$t" "$ROOT/build/$t/distro" 50
done

# The whole algorithm on a live process: the distro workload's threads,
# stopped with ptrace while blocked in libc, unwound in user space with the
# tables and cfi_step (the reference of the BPF unwinder).  Each blocking
# thread must show its own function, its loop and its start routine in order,
# then start_thread and clone3, and end at the thread's outermost frame.
DISTRO=$ROOT/build/x86_64/distro
if [ ! -x "$DISTRO" ]; then
	fail cfi-unwind-distro "no $DISTRO (make workloads)"
	exit 0
fi
"$DISTRO" -t 4 >"$WORK/distro.out" &
dpid=$!
sleep 1
# A few snapshots: the mutex thread also sleeps 2 ms between waits, and a
# snapshot can catch it there (a wrong unwind never matches, however often).
: >"$WORK/unwind"
for i in 1 2 3; do
	"$ROOT/build/unit/test_cfi" unwind "$dpid" >>"$WORK/unwind" 2>"$WORK/unwind.err" || true
	sleep 0.2
done
wait "$dpid" || true
grep ' ds-' "$WORK/unwind" | head -9 | sed 's/^/    /'
for what in nanosleep:ds-sleep pipe_read:ds-piperd mutex_lock:ds-mutex cond_wait:ds-cond \
	poll:ds-poll epoll_wait:ds-epoll; do
	fn=${what%%:*} comm=${what#*:}
	# start_thread and clone3 are local symbols of libc, named from
	# libc6-dbg's symbol table (toolchain/deps.sh).
	want=" distro_$fn loop_$fn thread_$fn start_thread clone3 | end$"
	if grep -q "^[0-9]* $comm:.*$want" "$WORK/unwind"; then
		pass "cfi-unwind-distro-$fn"
	else
		fail "cfi-unwind-distro-$fn" "$(grep -m1 "^[0-9]* $comm:" "$WORK/unwind" || head -1 "$WORK/unwind.err")"
	fi
done

# Recording (the default unwinding: user stacks copied at switch-out and
# unwound with CFI where the kernel can, --call-graph dwarf).  Each distro_*
# function's off-CPU time within 10 % of the workload's own measurement in
# perf script and in offcpu report, and 95 % of the samples reach
# start_thread or main (tests/perf_check.py distro).  The same recording with
# --call-graph fp must fail that check: libc has no frame pointers.
CHECK="python3 $ROOT/tests/perf_check.py"
need_bpf cfi-record "$OFFCPU" || exit 0
record_distro cfi-record dwarf
if grep -q '^user stacks: copied' "$WORK/dwarf.err"; then
	check cfi-record-distro-truth $CHECK distro "$WORK/dwarf.data" "$WORK/dwarf.out" \
		--folded "$WORK/dwarf.folded"
	grep 'unwound\|copies' "$WORK/dwarf.err" | sed 's/^/    /'
else
	skip cfi-record-distro-truth "no CFI unwinding here: $(grep '^user stacks' "$WORK/dwarf.err")"
fi
# Kernels without bpf_task_pt_regs (before 5.15) and the raw_tp variant find
# the user registers at the top of the thread's kernel stack, as the
# kernel's task_pt_regs() does: the same truth through raw_tp, and its
# dwarf stack cache (verify: every stack walked, wrong reuses counted).
record_distro cfi-record rawtp --variant raw_tp,hash --stack-cache verify
if grep -q '^user registers: at the top of the task' "$WORK/rawtp.err"; then
	check cfi-record-distro-truth-task-stack $CHECK distro "$WORK/rawtp.data" "$WORK/rawtp.out" \
		--folded "$WORK/rawtp.folded"
else
	fail cfi-record-distro-truth-task-stack "$(grep '^user registers' "$WORK/rawtp.err" || tail -n 1 "$WORK/rawtp.err")"
fi
# The dwarf stack cache reuses a copy's id only when the registers and every
# stack word its unwinding read are unchanged: verify walks every stack and
# counts the reuses whose stack differs.
record_distro cfi-record verify --stack-cache verify
stack_cache_verified cfi-record-stack-cache-verify "$WORK/verify.err"
stack_cache_verified cfi-record-stack-cache-verify-task-stack "$WORK/rawtp.err"
record_distro cfi-record fp --call-graph fp
# The reach share leaves out blocks before main (execve, ld.so's start: a
# cold page cache makes some); never a cut stack.
check cfi-record-startup-left-out $CHECK selftest
check_fails cfi-record-fp-check-can-fail "frame pointers alone passed the distro check" \
	$CHECK distro "$WORK/fp.data" "$WORK/fp.out"

# The on-CPU samples (-F) get the same unwinding: the kernel copies their
# user registers and stack, offcpu unwinds them.  A program built with
# Debian's defaults burns its CPU in qsort's comparison callback: 95 % of
# those samples reach main through glibc; with frame pointers they must not.
ONCPU=$ROOT/build/host/oncpu
if [ -x "$ONCPU" ]; then
	"$OFFCPU" -F 499 -o "$WORK/oncpu.data" -- "$ONCPU" 1 >/dev/null 2>"$WORK/oncpu.err" ||
		fail cfi-record-oncpu-runs "exit $?: $(tail -n 1 "$WORK/oncpu.err")"
	check cfi-record-oncpu-dwarf $CHECK oncpu "$WORK/oncpu.data" --comm oncpu --func oncpu_compare
	"$OFFCPU" -F 499 --call-graph fp -o "$WORK/oncpu-fp.data" -- "$ONCPU" 1 >/dev/null 2>&1
	check_fails cfi-record-oncpu-fp-can-fail "frame pointers alone reached main through qsort" \
		$CHECK oncpu "$WORK/oncpu-fp.data" --comm oncpu --func oncpu_compare
else
	fail cfi-record-oncpu "$ONCPU not built (make host-workloads)"
fi

# make demo's view: a system-wide recording; a bash blocked in the read
# builtin must show bash's own functions under libc's read.
# bash starts once offcpu says it records (a loaded machine takes longer
# than any fixed delay to get there).
"$OFFCPU" -v -a -d 3 -o "$WORK/sys.data" 2>"$WORK/sys.err" &
opid=$!
for _ in $(seq 1 200); do grep -qs '^offcpu: recording' "$WORK/sys.err" && break; sleep 0.05; done
started=$(grep -c '^offcpu: recording' "$WORK/sys.err")
bash -c 'read -t 1 x < <(sleep 2)' || true	# read's timeout: status 142
wait "$opid" || fail cfi-record-bash-runs "exit $?: $(tail -n 1 "$WORK/sys.err")"
if $CHECK has "$WORK/sys.data" --comm bash --func read_builtin >"$WORK/bash.check" 2>&1; then
	pass cfi-record-bash-past-libc
else
	# Why, for the next occurrence: started in time, drops, the bash stacks seen.
	why="$(tail -n 1 "$WORK/bash.check"); recording line seen: $started;"
	why+=" $(grep 'not \|lost' "$WORK/sys.err" | tr '\n' ' ')"
	why+=" $("$OFFCPU" report -i "$WORK/sys.data" -c bash --folded 2>&1 | grep -i 'select' | head -n 2 | tr '\n' ' ')"
	fail cfi-record-bash-past-libc "$why"
fi
grep 'unwound\|copies\|not recorded' "$WORK/sys.err" | sed 's/^/    /'

# A bash asleep in the read builtin before the recording starts: only the
# start scan (bpf/offcpu_blocked.bpf.h) sees its block begin, and its stack
# copy must unwind past libc as a block's does.  The read ends during the
# recording, so the block is an offcpu-time sample.  A recording with
# --call-graph fp runs beside it as the control: its walk stops in libc.
bash -c 'read -t 6 x < <(sleep 7)' &
bpid=$!
for _ in $(seq 1 100); do
	[ "$(awk '{print $3}' "/proc/$bpid/stat" 2>/dev/null)" = S ] && break
	sleep 0.05
done
"$OFFCPU" -a -d 8 -o "$WORK/asleep.data" 2>"$WORK/asleep.err" &
dpid=$!
"$OFFCPU" -a -d 8 --call-graph fp -o "$WORK/asleep-fp.data" 2>/dev/null &
fpid=$!
wait "$dpid" || fail cfi-record-asleep-runs "exit $?: $(tail -n 1 "$WORK/asleep.err")"
wait "$fpid" || true
wait "$bpid" 2>/dev/null || true	# read's timeout: status 142
check cfi-record-asleep-bash-past-libc $CHECK has "$WORK/asleep.data" --pid "$bpid" --func read_builtin
check_fails cfi-record-asleep-fp-can-fail "frame pointers alone reached read_builtin" \
	$CHECK has "$WORK/asleep-fp.data" --pid "$bpid" --func read_builtin
