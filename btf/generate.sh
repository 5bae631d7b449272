#!/bin/bash
# `make btf`: regenerate the committed minimal BTF files and btf/manifest.tsv
# for the kernels in btf/kernels.txt, from Debian's debug kernel packages
# (only the vmlinux is extracted; packages and full BTF stay in the cache).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
CACHE=${OFFCPU_CACHE:-$HOME/.cache/offcpu}
APT=$ROOT/toolchain/apt.sh
DL=$CACHE/btf

mkdir -p "$DL"
manifest=$HERE/manifest.tsv.new
printf 'release\tarch\tpackage\tversion\tsha256\tfile\n' > "$manifest"
grep -v '^#' "$HERE/kernels.txt" | while read -r board suite flavour; do
	[ -n "$board" ] || continue
	make -s -C "$ROOT" TARGET="$board" build/bpf/"$board"/offcpu.bpf.o
	meta=linux-image-$flavour-dbg
	pkg=$("$APT" --cache show "$meta/$suite" | awk -F': ' '/^Depends:/ { print $2; exit }' | cut -d' ' -f1)
	ver=$("$APT" --cache show "$pkg/$suite" | awk '/^Version:/ { print $2; exit }')
	deb=$(ls "$DL"/"${pkg}"_"${ver}"_*.deb 2>/dev/null | head -1 || true)
	if [ -z "$deb" ]; then
		(cd "$DL" && "$APT" download -q "$pkg/$suite" >&2)
		deb=$(ls "$DL"/"${pkg}"_*.deb | head -1)
	fi
	vmlinux=$(dpkg-deb -c "$deb" | awk '!f && $6 ~ /\/boot\/vmlinux-/ { print $6; f = 1 }')
	release=${vmlinux##*/vmlinux-}
	if [ ! -s "$DL/vmlinux-$release" ]; then
		dpkg-deb --fsys-tarfile "$deb" | tar -x -O "$vmlinux" > "$DL/vmlinux-$release.tmp"
		mv "$DL/vmlinux-$release.tmp" "$DL/vmlinux-$release"
	fi
	arch=$(awk '$1 == "UNAME_M" { print $3 }' "$ROOT/board/$board.mk")
	deb_arch=$(awk '$1 == "DEB_ARCH" { print $3 }' "$ROOT/board/$board.mk")
	mkdir -p "$HERE/$deb_arch"
	out=$deb_arch/$release.btf
	"$HERE/min_btf.sh" reduce "$DL/vmlinux-$release" "$board" \
		"$ROOT/build/bpf/$board/offcpu.bpf.o" "$HERE/$out"
	printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$release" "$arch" "$pkg" "$ver" \
		"$(sha256sum "$HERE/$out" | cut -d' ' -f1)" "$out" >> "$manifest"
	echo "btf: $out ($(stat -c %s "$HERE/$out") bytes) from $pkg $ver" >&2
done
mv "$manifest" "$HERE/manifest.tsv"
