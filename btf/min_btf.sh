#!/bin/bash
# Minimal BTF, the way BTFHub makes it: full BTF of a kernel (from its .BTF
# section, or encoded by pahole from DWARF) reduced by `bpftool gen
# min_core_btf` to the types our BPF object's CO-RE relocations touch.
#
#   min_btf.sh bpftool                          path of a bpftool that can do it
#   min_btf.sh release VMLINUX                  kernel release named in VMLINUX
#   min_btf.sh full VMLINUX OUT                 full BTF of VMLINUX
#   min_btf.sh reduce VMLINUX TARGET OBJ OUT    minimal BTF for TARGET's object
#   min_btf.sh le-object TARGET OBJ OUT         what reduce runs bpftool on
#
# VMLINUX may be a vmlinux with DWARF, one with a .BTF section, or raw BTF
# (e.g. a copy of /sys/kernel/btf/vmlinux, or a full BTF cached by `full`).
# The minimal BTF is written in TARGET's byte order, like the kernel's own.
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

# The linux_banner of an uncompressed vmlinux: "Linux version 6.1.0-50-s390x (...".
release_of() {
	local r
	r=$(LC_ALL=C grep -aoE -m1 'Linux version [0-9][^ ]*' "$1" | awk 'NR == 1 { print $3 }' || true)
	[ -n "$r" ] || { echo "min_btf.sh: no 'Linux version' string in $1; give BTF_RELEASE=" >&2; return 1; }
	echo "$r"
}

# pahole 1.24 (bookworm) encodes a big-endian s390x vmlinux on this
# little-endian host correctly, in the vmlinux's byte order (checked below).
PAHOLE_MIN=1.24

pahole_ok() {
	local v
	command -v pahole >/dev/null || { echo "min_btf.sh: pahole missing (dwarves)" >&2; return 1; }
	v=$(pahole --version | tr -d v)
	[ "$(printf '%s\n%s\n' "$PAHOLE_MIN" "$v" | sort -V | head -1)" = "$PAHOLE_MIN" ] ||
		{ echo "min_btf.sh: pahole $v is older than $PAHOLE_MIN" >&2; return 1; }
}

# "big" or "little": an ELF's EI_DATA byte.
elf_order() {
	case $(od -An -tx1 -j5 -N1 "$1" | tr -d ' ') in
	02) echo big ;;
	*) echo little ;;
	esac
}

# Full BTF: raw BTF as is; an ELF's .BTF section; else pahole from DWARF.
full_btf() {
	local in=$1 out=$2
	if is_raw_btf "$in"; then
		cp "$in" "$out"
	elif readelf -S "$in" 2>/dev/null | grep -q ' \.BTF '; then
		objcopy -O binary --only-section=.BTF "$in" "$out"
	else
		pahole_ok
		pahole --btf_encode_detached="$out.tmp" "$in" >&2
		# A BTF in the wrong order would still load (libbpf swaps), but
		# would mean pahole misread the ELF: refuse it.
		[ "$(python3 "$HERE/btf_endian.py" "$out.tmp")" = "$(elf_order "$in")" ] ||
			{ echo "min_btf.sh: pahole wrote BTF in the wrong byte order" >&2; return 1; }
		mv "$out.tmp" "$out"
	fi
	is_raw_btf "$out" || { echo "min_btf.sh: no BTF from $in" >&2; return 1; }
}

# CO-RE relocations are the same whatever the byte order, and bpftool < 7.6
# refuses big-endian objects: for a big-endian OBJ, reduce against the
# little-endian build of its source ($BPF_SRC, default bpf/offcpu.bpf.c) for
# the same architecture, with the Makefile's flags.  tests/t_btf.sh checks
# that both builds carry the same relocations.
le_object() {
	local target=$1 obj=$2 out=$3 bpf_arch
	if [ "$(elf_order "$obj")" = little ]; then
		cp "$obj" "$out"
		return
	fi
	bpf_arch=$(awk '$1 == "BPF_ARCH" { print $3 }' "$ROOT/board/$target.mk")
	(cd "$ROOT" && clang -g -O2 -target bpfel -D__TARGET_ARCH_"$bpf_arch" \
		-I"$CACHE/toolchain/$target/include" -Ibpf -Wall -Wextra -Werror \
		-Wno-unused-function -c "${BPF_SRC:-bpf/offcpu.bpf.c}" -o "$out")
}

reduce() {
	local vmlinux=$1 target=$2 obj=$3 out=$4 tmp order
	tmp=$(mktemp -d)
	# shellcheck disable=SC2064 # tmp is local: expand it now
	trap "rm -rf '$tmp'" EXIT
	full_btf "$vmlinux" "$tmp/full.btf"
	le_object "$target" "$obj" "$tmp/obj.o"
	"$(bpftool_path)" gen min_core_btf "$tmp/full.btf" "$tmp/min.btf" "$tmp/obj.o"
	# bpftool writes the host's byte order; the target's kernel uses its own.
	order=little
	[ "$(awk '$1 == "ELF_ENDIAN" { print $3 }' "$ROOT/board/$target.mk")" = MSB ] && order=big
	python3 "$HERE/btf_endian.py" "$tmp/min.btf" "$out" "$order"
}

case ${1:-} in
bpftool) bpftool_path ;;
release) release_of "$2" ;;
full) full_btf "$2" "$3" ;;
reduce) reduce "$2" "$3" "$4" "$5" ;;
le-object) le_object "$2" "$3" "$4" ;;
*) echo "usage: $0 bpftool|release|full|reduce|le-object ..." >&2; exit 2 ;;
esac
