#!/bin/bash
# The ARM EHABI unwinder (src/unwind/ehabi.c) without a kernel:
# - its rows against binutils' decoding (readelf -u, tests/ehabi_check.py)
#   of Debian's armhf libc.so.6, libstdc++ and a program built here;
# - real stacks: tests/workload/ehabi_snap.c, built with Debian's armhf
#   cross compiler as a distribution builds (-O2, PIE, no frame pointer)
#   with -funwind-tables and without, run under qemu-arm; each blocked
#   thread's registers and stack (the copy offcpu takes) unwound through
#   unwind_stack with the mapped files' tables (build/unit/test_ehabi
#   unwind).  With tables every thread must show its functions in order
#   down to its start routine or main; without, libc's frames (found through
#   libc's tables) and the first function of the program, then a counted cut.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

T=ehabi
SYSROOT=/usr/arm-linux-gnueabihf
CC_ARM=arm-linux-gnueabihf-gcc-12
if ! make -s -C "$ROOT" build/unit/test_ehabi >"$WORK/make.log" 2>&1; then
	fail $T-build "$(grep -m 3 -E 'error|Error' "$WORK/make.log" | tr '\n' ' ')"
	exit 0
fi
TEST=$ROOT/build/unit/test_ehabi
missing=""
for tool in $CC_ARM qemu-arm-static readelf python3; do
	command -v $tool >/dev/null || missing="$missing $tool"
done
[ -r $SYSROOT/lib/libc.so.6 ] || missing="$missing $SYSROOT/lib/libc.so.6"
if [ -n "$missing" ]; then
	fail $T-tools "missing$missing (toolchain/deps.sh installs the armhf cross packages)"
	exit 0
fi

compare() {	# NAME FILE MIN_ENTRIES
	local name=$1 file=$2 min=$3
	if ! "$TEST" dump "$file" >"$WORK/dump" 2>"$WORK/err"; then
		fail "$name" "$(head -1 "$WORK/err")"
		return
	fi
	readelf -u "$file" >"$WORK/readelf" 2>/dev/null || true
	if python3 "$ROOT/tests/ehabi_check.py" "$WORK/dump" "$WORK/readelf" "$min" >"$WORK/out"; then
		pass "$name"
	else
		fail "$name" "$(tail -1 "$WORK/out"); $(head -1 "$WORK/out")"
	fi
	sed 's/^/    /' "$WORK/out" | tail -1
}
compare $T-readelf-libc $SYSROOT/lib/libc.so.6 700
compare $T-readelf-libstdcxx $SYSROOT/lib/libstdc++.so.6 1000

# The snapshots: with tables (Debian's defaults + -funwind-tables) and without.
build_snap() {	# VARIANT FLAGS...
	local v=$1
	shift
	mkdir -p "$WORK/$v"
	$CC_ARM -std=gnu11 -Wall -Wextra -Werror -O2 -g "$@" -pthread \
		"$ROOT/tests/workload/ehabi_snap.c" -o "$WORK/$v/snap" >"$WORK/$v.log" 2>&1 &&
	QEMU_LD_PREFIX=$SYSROOT timeout 60 qemu-arm-static "$WORK/$v/snap" "$WORK/$v" \
		>>"$WORK/$v.log" 2>&1
}
# unwound VARIANT THREAD: its frames on one line, then "| how it ended".
unwound() {
	{ "$TEST" unwind "$WORK/$1" "$2" 2>&1 || true; } | sed 's/^end: /| /; s/libc\.so\.6+0x[0-9a-f]*/libc/' |
		tr '\n' ' ' | sed 's/ $//'
}
# expect NAME VARIANT THREAD REGEX: the unwound line must match REGEX whole.
expect() {
	local got
	got=$(unwound "$2" "$3")
	if [[ $got =~ ^$4$ ]]; then pass "$1"; else fail "$1" "got: $got"; fi
	echo "    $3: $got"
}

if build_snap tables -funwind-tables; then
	compare $T-readelf-program "$WORK/tables/snap" 8
	# The innermost frame is libc's syscall helper (no dynamic symbol), then
	# the blocking call; each thread ends in libc's start_thread, which has
	# no table in Debian's libc (CANTUNWIND): a cut, counted.
	expect $T-unwind-tables-sleeper tables sleeper \
		'libc __clock_nanosleep_time64 __nanosleep sleeper_wait sleeper_loop sleeper libc \| cut: no CFI for a pc'
	expect $T-unwind-tables-reader tables reader \
		'libc __read reader_wait reader_loop reader libc \| cut: no CFI for a pc'
	# main: through __libc_start_call_main and __libc_start_main to the
	# program's _start (CANTUNWIND as crt1.o marks it).
	expect $T-unwind-tables-main tables main \
		'libc (__poll|poll) main_poll main_wait main libc __libc_start_main _start \| cut: no CFI for a pc'
else
	fail $T-snapshots-tables "$(tail -3 "$WORK/tables.log" | tr '\n' ' ')"
fi
if build_snap defaults; then
	# No tables in the program: libc's frames, then the function that
	# called libc (its return address came from libc's table), then a cut.
	expect $T-unwind-defaults-sleeper defaults sleeper \
		'libc __clock_nanosleep_time64 __nanosleep sleeper_wait \| cut: no CFI for a pc'
	expect $T-unwind-defaults-reader defaults reader 'libc __read reader_wait \| cut: no CFI for a pc'
	expect $T-unwind-defaults-main defaults main 'libc (__poll|poll) main_poll \| cut: no CFI for a pc'
	# -v's hint is for cuts in code built without tables (this program),
	# not for functions a library with tables marks (libc's start_thread):
	# the program built with tables must count as marked (the control).
	EHABI_NO_TABLES=$WORK/defaults/snap "$TEST" >"$WORK/marked-defaults" 2>&1 || true
	EHABI_NO_TABLES=$WORK/tables/snap "$TEST" >"$WORK/marked-tables" 2>&1 || true
	if grep -qx 'PASS gap-marked-no-tables' "$WORK/marked-defaults" &&
		grep -q '^FAIL gap-marked-no-tables' "$WORK/marked-tables"; then
		pass $T-hint-unmarked
	else
		fail $T-hint-unmarked "the program without tables is not told from one with"
	fi
else
	fail $T-snapshots-defaults "$(tail -3 "$WORK/defaults.log" | tr '\n' ' ')"
fi

# The same decoder and unwinder built for the board itself (static musl,
# 32-bit size_t) and run under qemu-arm: its unit checks and the
# with-tables snapshots must come out as on the host.
TC=${OFFCPU_CACHE:-$HOME/.cache/offcpu}/toolchain/armhf
# The sources the host's test_ehabi links (the Makefile's list, so none is missed).
read -r -a srcs <<<"$(make -s -C "$ROOT" print-UNIT_test_ehabi)"
if [ ! -r "$TC/musl-gcc.specs" ]; then
	fail $T-armhf-native "no armhf toolchain in $TC (make TARGET=armhf)"
elif ! $CC_ARM -specs "$TC/musl-gcc.specs" -static -std=gnu11 -Wall -Wextra -Werror -D_GNU_SOURCE \
	-DOFFCPU_VERSION='"test"' -DOFFCPU_TARGET='"armhf"' -DOFFCPU_DWARF_DEFAULT=1 \
	-DOFFCPU_PERF_UREGS='15,13,7,14' -I"$ROOT/src" -I"$ROOT/bpf" -I"$TC/include" -I"$TC-sym/include" -O1 \
	"$ROOT/tests/unit/test_ehabi.c" "${srcs[@]/#/$ROOT/}" -L"$TC/lib" -L"$TC-sym/lib" -ldw -lelf -llzma -lz \
	-o "$WORK/test_ehabi_armhf" 2>"$WORK/native.err"; then
	fail $T-armhf-native "$(grep -m 2 error "$WORK/native.err" | tr '\n' ' ')"
else
	qemu-arm-static "$WORK/test_ehabi_armhf" >"$WORK/native.out" 2>&1 || true
	same=1
	for s in main sleeper reader; do
		[ -r "$WORK/tables/$s.snap" ] || { same=0; break; }
		cmp -s <(qemu-arm-static "$WORK/test_ehabi_armhf" unwind "$WORK/tables" $s 2>&1) \
			<("$TEST" unwind "$WORK/tables" $s 2>&1) || same=0
	done
	if ! grep -q '^FAIL' "$WORK/native.out" && [ "$(grep -c '^PASS' "$WORK/native.out")" -ge 40 ] &&
		[ $same = 1 ]; then
		pass $T-armhf-native
	else
		fail $T-armhf-native "$(grep -m 1 '^FAIL' "$WORK/native.out"); snapshots alike: $same"
	fi
fi

# -v says what to add to the build when stacks are cut for want of tables:
# a host program built without unwind tables or frame pointer, recorded
# with --call-graph dwarf (the armhf wording: test_ehabi's hint-armhf).
cat >"$WORK/notab.c" <<'EOF'
#include <unistd.h>
__attribute__((noinline)) void w2(void) { usleep(300000); }
__attribute__((noinline)) void w1(void) { w2(); usleep(1); }
int main(void) { w1(); return 0; }
EOF
if ! gcc -O2 -fno-asynchronous-unwind-tables -fno-unwind-tables -fomit-frame-pointer \
	"$WORK/notab.c" -o "$WORK/notab" 2>"$WORK/cc.err"; then
	fail $T-hint-cut "$(head -1 "$WORK/cc.err")"
elif [ ! -x "$OFFCPU" ]; then
	fail $T-hint-cut "no $OFFCPU (make)"
else
	(cd "$WORK" && timeout 30 "$OFFCPU" -v --call-graph dwarf -o hint.data -- ./notab \
		>/dev/null 2>"$WORK/hint.err") || true
	if grep -qE '^\[ offcpu: [0-9]+ user stacks cut at code without unwind tables: .*-fasynchronous-unwind-tables' \
		"$WORK/hint.err"; then
		pass $T-hint-cut
	else
		fail $T-hint-cut "no hint in -v: $(grep -m1 'cut: no CFI' "$WORK/hint.err")"
	fi
fi
