#!/bin/bash
# Minimal BTF, the way BTFHub makes it: full BTF of a kernel (from its .BTF
# section, or encoded by pahole from DWARF) reduced by `bpftool gen
# min_core_btf` to the types our BPF object's CO-RE relocations touch.
#
#   min_btf.sh bpftool                          path of a bpftool that can do it
#   min_btf.sh release VMLINUX                  kernel release named in VMLINUX
#   min_btf.sh full VMLINUX OUT                 full BTF of VMLINUX
#   min_btf.sh reduce VMLINUX TARGET OBJ OUT    minimal BTF for TARGET's object
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
CACHE=${OFFCPU_CACHE:-$HOME/.cache/offcpu}

# bookworm's bpftool (7.1) lacks fixes of min_core_btf; backports has 7.5,
# which runs on bookworm's libc.  Extracted into the cache, not installed.
bpftool_path() {
	local dir=$CACHE/bpftool
	if [ ! -x "$dir/usr/sbin/bpftool" ]; then
		mkdir -p "$dir/dl"
		(cd "$dir/dl" && "$ROOT/toolchain/apt.sh" download -q bpftool/bookworm-backports >&2)
		dpkg-deb -x "$dir"/dl/bpftool_*.deb "$dir"
	fi
	echo "$dir/usr/sbin/bpftool"
}

is_raw_btf() {
	local m
	m=$(od -An -tx1 -N2 "$1" | tr -d ' ')
	[ "$m" = 9feb ] || [ "$m" = eb9f ]
}

release_of() {
	strings -n 8 "$1" | grep -m1 -oE 'Linux version [^ ]+' | awk '{ print $3 }'
}

# Full BTF: raw BTF as is; an ELF's .BTF section; else pahole from DWARF.
full_btf() {
	local in=$1 out=$2
	if is_raw_btf "$in"; then
		cp "$in" "$out"
	elif readelf -S "$in" 2>/dev/null | grep -q ' \.BTF '; then
		objcopy -O binary --only-section=.BTF "$in" "$out"
	else
		pahole --btf_encode_detached="$out" "$in" >&2
	fi
}

# CO-RE relocations are the same whatever the byte order, and bpftool < 7.6
# refuses big-endian objects: reduce against the little-endian build of the
# same source for the same architecture.
le_object() {
	local target=$1 obj=$2 out=$3 bpf_target bpf_arch
	bpf_target=$(awk '$1 == "BPF_TARGET" { print $3 }' "$ROOT/board/$target.mk")
	if [ "$bpf_target" = bpfel ]; then
		cp "$obj" "$out"
		return
	fi
	bpf_arch=$(awk '$1 == "BPF_ARCH" { print $3 }' "$ROOT/board/$target.mk")
	clang -g -O2 -target bpfel -D__TARGET_ARCH_"$bpf_arch" \
		-I"$CACHE/toolchain/host/include" -I"$ROOT/bpf" -c "$ROOT/bpf/offcpu.bpf.c" -o "$out"
}

reduce() {
	local vmlinux=$1 target=$2 obj=$3 out=$4 tmp
	tmp=$(mktemp -d)
	full_btf "$vmlinux" "$tmp/full.btf"
	le_object "$target" "$obj" "$tmp/obj.o"
	"$(bpftool_path)" gen min_core_btf "$tmp/full.btf" "$out" "$tmp/obj.o"
	rm -rf "$tmp"
}

case ${1:-} in
bpftool) bpftool_path ;;
release) release_of "$2" ;;
full) full_btf "$2" "$3" ;;
reduce) reduce "$2" "$3" "$4" "$5" ;;
*) echo "usage: $0 bpftool|release|full|reduce ..." >&2; exit 2 ;;
esac
