#!/bin/bash
# Size and build time of the CFI unwinding tables (src/unwind/cfi.c) for every
# executable file mapped by a process on this machine right now: the figures
# behind the table memory budget (issue 13).  Not part of `make bench`'s
# table yet; prints one summary line.
#   bench/cfi_tables.sh
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
CACHE=${OFFCPU_CACHE:-$HOME/.cache/offcpu}
OUT=$ROOT/build/bench
mkdir -p "$OUT"
# -O2 without sanitizers: the cost offcpu itself would pay.  The sources
# are the Makefile's list for test_cfi, so none is missed.
read -r -a srcs <<<"$(make -s -C "$ROOT" print-UNIT_test_cfi)"
gcc -O2 -std=gnu11 -D_GNU_SOURCE -I"$ROOT/src" -I"$CACHE/toolchain/host/include" \
	"$ROOT/tests/unit/test_cfi.c" "${srcs[@]/#/$ROOT/}" \
	-I"$CACHE/toolchain/host-sym/include" -L"$CACHE/toolchain/host/lib" -L"$CACHE/toolchain/host-sym/lib" \
	-ldw -lelf -liberty -llzma -lz -o "$OUT/cfi_sizes"
mapfile -t files < <(cat /proc/[0-9]*/maps 2>/dev/null | awk '$2 ~ /x/ && $6 ~ /^\// { print $6 }' | sort -u)
procs=$(find /proc -maxdepth 1 -name "[0-9]*" | wc -l)
"$OUT/cfi_sizes" sizes "${files[@]}" > "$OUT/cfi_tables.txt"
tail -1 "$OUT/cfi_tables.txt" | awk -v p="$procs" '{
	printf "%s executable files mapped by %s processes: %s FDEs, %s rows (%s not expressible), ", $3, p, $7, $9, $11
	printf "%.2f MiB at %s bytes per row, %.2f MiB at 16; built in %s ms (%s unreadable)\n", $9 * $13 / 1048576, $13, $9 * 16 / 1048576, $15, $5 }'
sort -k2 -n -r "$OUT/cfi_tables.txt" | head -5 | sed 's/^/  largest: /'
