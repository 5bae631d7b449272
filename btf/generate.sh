#!/bin/bash
# `make btf`: regenerate the committed minimal BTF files and btf/manifest.tsv
# for the kernels in btf/kernels.txt: from the kernel image's own .BTF where
# the kernel has BTF (the images the QEMU matrix boots), else from Debian's
# debug kernel package (only the vmlinux is extracted; packages and full BTF
# stay in the cache).
#   btf/generate.sh [BOARD-SUITE...]   only these kernels (x86_64-trixie); the
#                                     manifest keeps the other rows
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
CACHE=${OFFCPU_CACHE:-$HOME/.cache/offcpu}
APT=$ROOT/toolchain/apt.sh
DL=$CACHE/btf

# full_from_dbg BOARD SUITE: the full BTF of the kernel qemu-tests/kernels.tsv
# lists for the cell, encoded by pahole from its -dbg package's DWARF (a
# kernel built without BTF); sets pkg, ver, release, full.
full_from_dbg() {
	pkg=$(awk -F'\t' -v b="$1" -v s="$2" '$1 == b && $2 == s { print $3 }' "$ROOT/qemu-tests/kernels.tsv")
	[ -n "$pkg" ] || { echo "generate.sh: no $1 $2 row in qemu-tests/kernels.tsv" >&2; return 1; }
	pkg=${pkg/linux-binary-/linux-image-}-dbg
	dbg_btf "$2" "$pkg"
}

# dbg_btf SUITE PKG: the full BTF from the -dbg package PKG; sets ver,
# release, full.
dbg_btf() {
	local suite=$1 pkg=$2 deb vmlinux
	ver=$("$APT" --cache show "$pkg/$suite" | awk '!d && /^Version:/ { print $2; d = 1 }')
	[ -n "$ver" ] || { echo "generate.sh: $suite has no $pkg" >&2; return 1; }
	deb=$(ls "$DL"/"${pkg}"_"${ver}"_*.deb 2>/dev/null | head -1 || true)
	if [ -z "$deb" ]; then
		(cd "$DL" && "$APT" download -q "$pkg/$suite" >&2)
		deb=$(ls "$DL"/"${pkg}"_*.deb | head -1)
	fi
	# linux-image-<release>-dbg holds ./usr/lib/debug/boot/vmlinux-<release>;
	# since 7.x a symlink to ./usr/lib/debug/lib/modules/<release>/vmlinux,
	# which tar -O reads as nothing: the regular file of the two.
	release=${pkg#linux-image-}
	release=${release%-dbg}
	full=$DL/vmlinux-$release.btf
	if [ ! -s "$full" ]; then
		if [ ! -s "$DL/vmlinux-$release" ]; then
			# awk reads to the end: an early exit would SIGPIPE dpkg-deb.
			vmlinux=$(dpkg-deb -c "$deb" | awk -v r="$release" '!f && $1 ~ /^-/ &&
				($6 == "./usr/lib/debug/boot/vmlinux-" r ||
				 $6 == "./usr/lib/debug/lib/modules/" r "/vmlinux") { print $6; f = 1 }')
			[ -n "$vmlinux" ] || { echo "generate.sh: no vmlinux in $deb" >&2; return 1; }
			dpkg-deb --fsys-tarfile "$deb" | tar -x -O "$vmlinux" > "$DL/vmlinux-$release.tmp"
			mv "$DL/vmlinux-$release.tmp" "$DL/vmlinux-$release"
		fi
		# The full BTF (a few MB) is cached: tests/t_btf.sh compares
		# against it, and `make btf` after an object change is quick.
		"$HERE/min_btf.sh" full "$DL/vmlinux-$release" "$full.tmp"
		mv "$full.tmp" "$full"
		echo "btf: $full ($(stat -c %s "$full") bytes, pahole $(pahole --version))" >&2
	fi
}

# full_from_image BOARD SUITE: the kernel's own .BTF, taken from the image
# the QEMU matrix boots (qemu-tests/fetch.sh): no -dbg package where the
# kernel has BTF; sets pkg, ver, release, full.
full_from_image() {
	local image order
	local _from note
	IFS=$'\t' read -r image pkg ver _from note <<< "$("$ROOT/qemu-tests/fetch.sh" kernel "$1" "$2")"
	# The embedded BTF is for the kernels qemu-tests/kernels.tsv lists.
	[ "$note" = listed ] || { echo "generate.sh: $1 $2: $note (make kernels first)" >&2; return 1; }
	read -r order release <<< "$(python3 "$HERE/image_btf.py" "$image" "$DL/image.btf.tmp")"
	full=$DL/vmlinux-$release.btf
	mv "$DL/image.btf.tmp" "$full"
	echo "btf: $full ($(stat -c %s "$full") bytes, $order-endian, from $pkg's image)" >&2
}

mkdir -p "$DL"
# --dbg SUITE PKG OUT: the full BTF of a -dbg package's kernel into OUT,
# its release on stdout (the QEMU matrix, for a kernel it was not listed).
if [ "${1:-}" = --dbg ]; then
	dbg_btf "$2" "$3"
	cp "$full" "$4"
	echo "$release"
	exit 0
fi
manifest=$HERE/manifest.tsv.new
printf 'release\tarch\tpackage\tversion\tsha256\tfile\n' > "$manifest"
ONLY=" $* "
grep -v '^#' "$HERE/kernels.txt" | while read -r board suite flavour source; do
	[ -n "$board" ] || continue
	[ $# -eq 0 ] || [[ "$ONLY" == *" $board-$suite "* ]] || continue
	make -s -C "$ROOT" TARGET="$board" build/bpf/"$board"/offcpu.bpf.o
	if [ "${source:-dbg}" = image ]; then
		full_from_image "$board" "$suite"
	else
		full_from_dbg "$board" "$suite"
	fi
	arch=$(awk '$1 == "UNAME_M" { print $3 }' "$ROOT/board/$board.mk")
	deb_arch=$(awk '$1 == "DEB_ARCH" { print $3 }' "$ROOT/board/$board.mk")
	mkdir -p "$HERE/$deb_arch"
	out=$deb_arch/$release.btf
	"$HERE/min_btf.sh" reduce "$full" "$board" \
		"$ROOT/build/bpf/$board/offcpu.bpf.o" "$HERE/$out"
	printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$release" "$arch" "$pkg" "$ver" \
		"$(sha256sum "$HERE/$out" | cut -d' ' -f1)" "$out" >> "$manifest"
	echo "btf: $out ($(stat -c %s "$HERE/$out") bytes) from $pkg $ver" >&2
done
if [ $# -gt 0 ]; then
	# The rows of the other kernels stay; a regenerated file replaces its row.
	tail -n +2 "$HERE/manifest.tsv" | while IFS=$'\t' read -r r a p v h file; do
		cut -f6 "$manifest" | grep -qxF "$file" || printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$r" "$a" "$p" "$v" "$h" "$file"
	done >> "$manifest"
	mv "$manifest" "$HERE/manifest.tsv"
	exit 0
fi
mv "$manifest" "$HERE/manifest.tsv"
# The manifest is the list: drop files of kernels no longer listed.
for f in "$HERE"/*/*.btf; do
	[ -e "$f" ] || continue
	grep -qF "	${f#"$HERE"/}" "$HERE/manifest.tsv" && continue
	echo "btf: removing ${f#"$ROOT"/} (not in kernels.txt any more)" >&2
	rm -f "$f"
done
