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
compare() {	# NAME ARCH FILE
	local name=$1 arch=$2 file=$3
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
	if python3 "$ROOT/tests/cfi_check.py" "$WORK/dump" "$WORK/readelf" "$arch" >"$WORK/out"; then
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
# The distribution-built workload of each board (make workloads).
for t in x86_64 arm64 s390x; do
	compare "cfi-readelf-distro-$t" "$t" "$ROOT/build/$t/distro"
done
