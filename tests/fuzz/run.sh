#!/bin/bash
# `make fuzz`: every libFuzzer harness for FUZZ_SECONDS (default 60) each,
# from the committed seeds; a crash fails and its input is kept in
# tests/fuzz/crashes/ (add it to the seeds once fixed, as a regression test).
#   tests/fuzz/run.sh [NAME...]   only these harnesses (fuzz_NAME.c)
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
# The symbolizer's demangler and MiniDebugInfo decoder (toolchain/symlibs.sh).
symlibs=(-I"$CACHE/toolchain/host-sym/include" -L"$CACHE/toolchain/host-sym/lib" -lelf -liberty -llzma -lz)
names=("$@")
[ $# -gt 0 ] || names=(perf_data btf_archive elf report proc btf_file tracefs cfi unwind)
for name in "${names[@]}"; do
	corpus=$name extra=()
	case $name in
	perf_data) srcs=("$ROOT/src/format/perf_data_reader.c") libs=() ;;
	btf_archive) srcs=("$ROOT/src/record/btf_archive.c") libs=(-lz) ;;
	elf) srcs=("$ROOT"/src/{symbols/symbolize,lib/build_id,lib/buildid_cache,lib/procfs,lib/hashset,symbols/debuginfo,symbols/demangle}.c) libs=("${symlibs[@]}") ;;
	# --pprof too: protobuf-c's runtime and the code protoc-c generates.
	report) make -s -C "$ROOT" build/gen/proto/profile.pb-c.c || { status=1; continue; }
		srcs=("$ROOT"/src/{report/report,format/perf_data_reader,format/waker_record,symbols/symbolize,report/flamegraph}.c
			"$ROOT"/src/{lib/build_id,lib/buildid_cache,lib/procfs,lib/hashset,symbols/debuginfo,symbols/demangle,report/pprof}.c
			"$ROOT/build/gen/proto/profile.pb-c.c")
		libs=(-I"$ROOT/build/gen/proto" -I"$CACHE/toolchain/host-pb/include"
			-L"$CACHE/toolchain/host-pb/lib" -lprotobuf-c "${symlibs[@]}")
		corpus=perf_data extra=(-close_fd_mask=2) ;;
	proc) srcs=("$ROOT/src/lib/procfs.c" "$ROOT/src/record/synthesis.c") libs=() ;;
	tracefs) srcs=("$ROOT/src/record/tracefs.c") libs=() ;;
	btf_file) srcs=("$ROOT/src/record/probe.c" "$ROOT/src/record/btf_archive.c")
		libs=($(libbpf_fuzz) -lelf -lz) ;;
	# libdw itself is linked as built (no coverage): cfi.c's own decoding
	# of FDE addresses, and what it asks of libdw, are what is explored.
	cfi) srcs=("$ROOT/src/unwind/cfi.c") libs=(-I"$CACHE/toolchain/host/include"
		-L"$CACHE/toolchain/host/lib" -ldw -lelf -lz) ;;
	# The unwinder over any stack bytes and rows (its /proc half unused).
	unwind) srcs=("$ROOT"/src/{unwind/unwind,unwind/cfi,lib/hashset,lib/procfs}.c) libs=(-I"$CACHE/toolchain/host/include"
		-L"$CACHE/toolchain/host/lib" -ldw -lelf -lz) ;;
	esac
	if ! clang $CFLAGS "$HERE/fuzz_$name.c" "${srcs[@]}" "${libs[@]}" -o "$OUT/fuzz_$name"; then
		echo "fuzz: cannot build fuzz_$name" >&2
		status=1
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
