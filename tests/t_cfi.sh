#!/bin/bash
# CFI tables (src/cfi.c) against binutils: for the real libc.so.6 of each
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
for t in x86_64 arm64 s390x; do
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
