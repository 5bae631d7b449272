#!/bin/bash
# `make fuzz`: every libFuzzer harness for FUZZ_SECONDS (default 60) each,
# from the committed seeds; a crash fails and its input is kept in
# tests/fuzz/crashes/ (add it to the seeds once fixed, as a regression test).
#   tests/fuzz/run.sh [NAME...]   only these harnesses (fuzz_NAME.c)
#   FUZZ_BUILD_ONLY=1 tests/fuzz/run.sh   build (link) them, run none
#   FUZZ_SECONDS=2 tests/fuzz/run.sh      a smoke run from the seeds (t_unit)
# -fno-sanitize-recover: a UBSan report stops the run, so it is a finding too.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$(dirname "$HERE")")
CACHE=${OFFCPU_CACHE:-$HOME/.cache/offcpu}
OUT=$ROOT/build/fuzz
SECS=${FUZZ_SECONDS:-60}
CFLAGS="-g -O1 -std=gnu11 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -I$ROOT/src -I$ROOT/bpf"
mkdir -p "$OUT" "$HERE/crashes"
status=0

# libbpf parses --btf files: build it from the toolchain's source with the
# same sanitizers and coverage, so its parser is what gets explored.
libbpf_fuzz() {
	local v src lib
	read -r v _ < "$CACHE/toolchain/host/libbpf.version" ||
		{ echo "fuzz: no $CACHE/toolchain/host/libbpf.version (make setup)" >&2; return 1; }
	src=$CACHE/src/libbpf-$v lib=$OUT/libbpf-$v/libbpf.a
	[ -d "$src/src" ] || { echo "fuzz: no libbpf source in $src (make setup)" >&2; return 1; }
	if [ ! -f "$lib" ]; then
		rm -rf "${lib%/*}" && mkdir -p "${lib%/*}" || return 1
		(cd "${lib%/*}" && clang ${CFLAGS/fuzzer,/fuzzer-no-link,} -D_LARGEFILE64_SOURCE \
			-D_FILE_OFFSET_BITS=64 -I"$src/src" -I"$src/include" -I"$src/include/uapi" \
			-c "$src"/src/*.c && ar rcs libbpf.a ./*.o) >"$OUT/libbpf.log" 2>&1 || return 1
	fi
	echo "-I$src/include/uapi -I$CACHE/toolchain/host/include $lib"
}
# Every source of the Makefile's SRCS but main.c, compiled as the harnesses
# are, in one archive: a harness links what it references, and whatever that
# references in turn, so no list of sources can fall behind the code
# (fuzz_report once lacked wakers.c and did not link).  Objects are named by
# path (record/wakers.c and report/wakers.c both exist) and rebuilt when
# older than their source or any of HDRS.
srclib() {
	local lib=$OUT/src/libsrc.a c o hdr srcs hdrs stale=() objs=()
	mkdir -p "$OUT/src"
	make -s -C "$ROOT" build/gen/proto/profile.pb-c.c || return 1
	# What the Makefile defines for every build (loader.c, oncpu.c).
	defs="-DOFFCPU_VERSION=\"fuzz\" -DOFFCPU_TARGET=\"x86_64\" -DOFFCPU_LIBS=\"fuzz\"
		-DOFFCPU_LIBBPF_VERSION=\"0.0\" -DOFFCPU_DWARF_DEFAULT=$(make -s -C "$ROOT" print-DWARF_DEFAULT)
		-DOFFCPU_PERF_UREGS=$(make -s -C "$ROOT" print-PERF_UREGS)
		-DOFFCPU_KUNWIND=$(k=$(make -s -C "$ROOT" print-KUNWIND); echo "${k:-0}")"
	srcs=$(make -s -C "$ROOT" print-SRCS) && hdrs=$(make -s -C "$ROOT" print-HDRS) || return 1
	hdr=$(cd "$ROOT" && ls -t $hdrs build/gen/proto/profile.pb-c.h | head -n 1)
	for c in $srcs build/gen/proto/profile.pb-c.c; do
		[ "$c" = src/main.c ] && continue
		o=$OUT/src/$(echo "${c%.c}" | tr / _).o
		objs+=("$o")
		[ "$o" -nt "$ROOT/$c" ] && [ "$o" -nt "$ROOT/$hdr" ] || stale+=("$ROOT/$c $o")
	done
	# A source added to or gone from SRCS changes the archive too.
	if [ ${#stale[@]} -gt 0 ] || [ ! -f "$lib" ] ||
		! printf '%s\n' "${objs[@]}" | cmp -s - "$lib.members"; then
		printf '%s\n' "${stale[@]}" | xargs -r -P "$(nproc)" -L 1 sh -c \
			'clang $1 -I"$2/build/gen/proto" -I"$3/toolchain/host/include" -I"$3/toolchain/host-sym/include" -I"$3/toolchain/host-pb/include" -c "$4" -o "$5"' \
			sh "${CFLAGS/fuzzer,/fuzzer-no-link,} $defs" "$ROOT" "$CACHE" >"$OUT/src.log" 2>&1 ||
			{ echo "fuzz: cannot compile src/ (see $OUT/src.log)" >&2; return 1; }
		rm -f "$lib"
		ar rcs "$lib" "${objs[@]}" || return 1
		printf '%s\n' "${objs[@]}" >"$lib.members"
	fi
	echo "$lib"
}
# The symbolizer's demangler and MiniDebugInfo decoder (toolchain/symlibs.sh).
symlibs=(-I"$CACHE/toolchain/host-sym/include" -L"$CACHE/toolchain/host-sym/lib" -lelf -liberty -llzma -lz)
names=("$@")
if [ $# -eq 0 ]; then	# every harness there is
	for f in "$HERE"/fuzz_*.c; do f=${f##*/fuzz_}; names+=("${f%.c}"); done
fi
lib=$(srclib) || exit 1
pb=(-I"$CACHE/toolchain/host-pb/include" -L"$CACHE/toolchain/host-pb/lib" -lprotobuf-c)
dw=(-I"$CACHE/toolchain/host/include" -L"$CACHE/toolchain/host/lib" -ldw)
for name in "${names[@]}"; do
	corpus=$name extra=() srcs=("$lib")
	case $name in
	perf_data|proc|tracefs) libs=() ;;
	btf_archive) libs=(-lz) ;;
	elf) libs=("${symlibs[@]}") ;;
	# --pprof too: protobuf-c's runtime and the code protoc-c generates.
	# (wakers.c's report half shares a file with its recording half: libbpf.)
	report) libs=(-I"$ROOT/build/gen/proto" "${pb[@]}" "${dw[@]}" -lbpf "${symlibs[@]}")
		corpus=perf_data extra=(-close_fd_mask=2) ;;
	# probe.c over libbpf built with coverage (its parser is what is explored).
	btf_file) libs=($(libbpf_fuzz) -lelf -lz) ;;
	# libdw itself is linked as built (no coverage): cfi.c's own decoding
	# of FDE addresses, and what it asks of libdw, are what is explored.
	cfi) libs=("${dw[@]}" -lelf -lz) ;;
	# The EHABI decoder alone (its tables from the input, no ELF).
	ehabi) libs=("${dw[@]}" -lelf -lz) ;;
	# The unwinder over any stack bytes and rows (its /proc half unused).
	unwind) libs=("${dw[@]}" "${symlibs[@]}") ;;
	*) echo "fuzz: no harness $name" >&2; status=1; continue ;;
	esac
	if ! clang $CFLAGS "$HERE/fuzz_$name.c" "${srcs[@]}" "${libs[@]}" -o "$OUT/fuzz_$name"; then
		echo "fuzz: cannot build fuzz_$name" >&2
		status=1
		continue
	fi
	if [ -n "${FUZZ_BUILD_ONLY:-}" ]; then
		echo "fuzz_$name: built"
		continue
	fi
	mkdir -p "$OUT/corpus-$name"
	if "$OUT/fuzz_$name" -max_total_time="$SECS" -max_len=65536 "${extra[@]}" \
		-artifact_prefix="$HERE/crashes/$name-" "$OUT/corpus-$name" \
		"$HERE/corpus/$corpus" >"$OUT/$name.log" 2>&1; then
		echo "fuzz_$name: $(sed -n 's/^Done \([0-9]*\) runs.*/\1/p' "$OUT/$name.log") runs in ${SECS}s, no finding"
	else
		echo "fuzz_$name: FINDING, see $OUT/$name.log and tests/fuzz/crashes/"
		status=1
	fi
done
exit $status
