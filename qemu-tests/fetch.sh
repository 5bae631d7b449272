#!/bin/bash
# Fetch what a matrix cell boots, into the cache (downloads happen once):
#   fetch.sh kernel BOARD SUITE   -> prints "VMLINUZ<tab>PACKAGE<tab>VERSION"
#   fetch.sh busybox BOARD        -> prints the path of a static busybox
# The kernel package is found through the suite's metapackage
# linux-image-<flavour>; sid splits images into linux-binary-* packages.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
CACHE=${OFFCPU_CACHE:-$HOME/.cache/offcpu}
APT=$ROOT/toolchain/apt.sh

board_var() { make -s --no-print-directory -C "$ROOT" TARGET="$1" "print-$2"; }

depends() {	# PKG SUITE -> its Depends, one package name per line
	"$APT" --cache show "$1/$2" 2>/dev/null | awk -F': ' '/^Depends:/ { print $2; exit }' |
		tr ',' '\n' | sed -e 's/^ *//' -e 's/[ (].*//' -e 's/|.*//'
}

version() { "$APT" --cache show "$1/$2" 2>/dev/null | awk '/^Version:/ { print $2; exit }'; }

# download PKG SUITE ARCH -> path of the .deb in the cache
download() {
	local dir=$CACHE/debs/$2 ver deb pattern
	ver=$(version "$1:$3" "$2")
	# apt writes an epoch as %3a in the file name.
	pattern="$dir/${1}_*${ver#*:}_$3.deb"
	deb=$(compgen -G "$pattern" | head -1 || true)
	if [ -z "$deb" ]; then
		mkdir -p "$dir"
		(cd "$dir" && "$APT" download -q "$1:$3/$2" >&2)
		deb=$(compgen -G "$pattern" | head -1)
	fi
	echo "$deb"
}

# Find the package holding /boot/vmlinuz-*, following the metapackage.
kernel() {
	local board=$1 suite=$2 flavour arch queue=() seen=" " pkg deb path out
	flavour=$(board_var "$board" KERNEL_FLAVOUR)
	arch=$(board_var "$board" DEB_ARCH)
	queue=("linux-image-$flavour")
	while [ ${#queue[@]} -gt 0 ]; do
		pkg=${queue[0]}
		queue=("${queue[@]:1}")
		[[ "$seen" == *" $pkg "* ]] && continue
		seen+="$pkg "
		case $pkg in
		linux-image-*|linux-binary-*) ;;
		*) continue ;;
		esac
		deb=$(download "$pkg" "$suite" "$arch")
		# awk reads to the end: an early exit would SIGPIPE dpkg-deb.
		path=$(dpkg-deb -c "$deb" | awk '!f && $6 ~ /^\.\/(boot\/(vmlinuz|vmlinux|image)-|usr\/lib\/modules\/[^\/]+\/(vmlinuz|image)$)/ { print $6; f = 1 }')
		if [ -n "$path" ]; then
			out=$CACHE/qemu/kernels/$board-$suite-$pkg
			if [ ! -s "$out" ]; then
				mkdir -p "$(dirname "$out")"
				dpkg-deb --fsys-tarfile "$deb" | tar -x -O "$path" > "$out.tmp"
				mv "$out.tmp" "$out"
			fi
			printf '%s\t%s\t%s\n' "$out" "$pkg" "$(version "$pkg" "$suite")"
			return 0
		fi
		mapfile -t -O ${#queue[@]} queue < <(depends "$pkg:$arch" "$suite")
	done
	echo "fetch.sh: no kernel image for $board in $suite" >&2
	return 1
}

# bookworm's, or the board's BUSYBOX_SUITE where bookworm has none of its arch.
busybox() {
	local arch out deb suite
	arch=$(board_var "$1" DEB_ARCH)
	suite=$(board_var "$1" BUSYBOX_SUITE)
	out=$CACHE/qemu/busybox-$arch
	if [ ! -x "$out" ]; then
		deb=$(download busybox-static "${suite:-bookworm}" "$arch")
		mkdir -p "$CACHE/qemu"
		dpkg-deb --fsys-tarfile "$deb" | tar -x -O ./bin/busybox > "$out.tmp"
		chmod +x "$out.tmp"
		mv "$out.tmp" "$out"
	fi
	echo "$out"
}

# Resolving packages is slow (apt-cache over five suites): remember the
# answer until the package lists are refreshed.
cached_kernel() {
	local info=$CACHE/qemu/kernels/$1-$2.info
	if [ -s "$info" ] && [ "$info" -nt "$CACHE/apt/updated" ] &&
	   [ -s "$(cut -f1 "$info")" ]; then
		cat "$info"
		return
	fi
	mkdir -p "$(dirname "$info")"
	kernel "$1" "$2" > "$info.tmp"
	mv "$info.tmp" "$info"
	cat "$info"
}

case ${1:-} in
kernel) cached_kernel "$2" "$3" ;;
busybox) busybox "$2" ;;
*) echo "usage: $0 kernel BOARD SUITE | busybox BOARD" >&2; exit 2 ;;
esac
