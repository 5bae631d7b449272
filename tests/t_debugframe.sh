#!/bin/bash
# CFI from a file's separate debug file (src/unwind/unwind.c, open_debug_cfi):
# a library with no .eh_frame of its own whose debug file (found by its
# .gnu_debuglink, beside it) has .debug_frame, as Debian's libc6-dbg has for
# libc's pcs its EHABI tables leave out.  build/unit/test_unwind debuglib
# unwinds its own stack through the library's dl_fn: with the debug file the
# frame after dl_fn is its caller, found by the debug file's row; without it
# (the control) the unwinder can only guess past dl_fn.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
T=debugframe

if [ "$(uname -m)" != x86_64 ]; then
	skip $T "the live stack capture is x86_64's"
	exit 0
fi
if ! make -s -C "$ROOT" build/unit/test_unwind >"$WORK/make.log" 2>&1; then
	fail $T-build "$(grep -m 3 -E 'error|Error' "$WORK/make.log" | tr '\n' ' ')"
	exit 0
fi
cat > "$WORK/dl.c" <<'C'
int dl_fn(void (*cb)(void))
{
	volatile int x = 1;

	cb();
	return x;
}
C
# No unwind tables in the code: gcc writes the CFI to .debug_frame (-g) only.
gcc -shared -fPIC -O2 -g -fno-asynchronous-unwind-tables -fno-unwind-tables \
	-Wl,--build-id "$WORK/dl.c" -o "$WORK/libdl_test.so"
objcopy --only-keep-debug "$WORK/libdl_test.so" "$WORK/libdl_test.so.debug"
strip --strip-debug "$WORK/libdl_test.so"
objcopy --add-gnu-debuglink="$WORK/libdl_test.so.debug" "$WORK/libdl_test.so"
# (crtend's .eh_frame terminator stays: a table without one FDE.)
if readelf -wf "$WORK/libdl_test.so" 2>/dev/null | grep -q FDE; then
	fail $T-setup "the library still has CFI of its own"
	exit 0
fi
readelf -SW "$WORK/libdl_test.so.debug" | grep -q '\.debug_frame' ||
	{ fail $T-setup "the debug file has no .debug_frame"; exit 0; }

run() { "$ROOT/build/unit/test_unwind" debuglib "$WORK/libdl_test.so" >"$WORK/$1" 2>&1 || true; }
run with
sed 's/^/    /' "$WORK/with"
if grep -qx 'in_lib 1' "$WORK/with" && grep -qx 'caller_found 1' "$WORK/with" &&
	grep -q '^debug_files 1 debug_rows [1-9]' "$WORK/with"; then
	pass $T-debug-file
else
	fail $T-debug-file "dl_fn's caller not found through the debug file's CFI"
fi
# Control: the debug file gone, the same unwind must not find dl_fn's caller
# by a row (nor count one).
mv "$WORK/libdl_test.so.debug" "$WORK/moved.debug"
run without
sed 's/^/    /' "$WORK/without"
if grep -qx 'in_lib 1' "$WORK/without" && grep -qx 'caller_found 0' "$WORK/without" &&
	grep -qx 'debug_files 0 debug_rows 0' "$WORK/without"; then
	pass $T-no-debug-file
else
	fail $T-no-debug-file "without the debug file the caller was still found, or counted"
fi
# A debug file of another build (build-id differs): not taken.
gcc -shared -fPIC -O2 -g -fno-asynchronous-unwind-tables -fno-unwind-tables \
	-Wl,--build-id -DX=1 -include stdio.h "$WORK/dl.c" -o "$WORK/other.so"
objcopy --only-keep-debug "$WORK/other.so" "$WORK/libdl_test.so.debug"
run other
if grep -qx 'debug_files 0 debug_rows 0' "$WORK/other"; then
	pass $T-other-build
else
	fail $T-other-build "a debug file of another build was taken: $(tr '\n' ' ' <"$WORK/other")"
fi
