#!/bin/bash
# What a matrix cell boots, fetched into the cache (downloads happen once):
#   fetch.sh kernel BOARD SUITE   -> "VMLINUZ<tab>PACKAGE<tab>VERSION<tab>FROM<tab>NOTE"
#   fetch.sh busybox BOARD        -> the path of a static busybox
#   fetch.sh list                 -> kernels.tsv as the registry has it now
#                                    (`make kernels` writes it: a deliberate update)
#
# The kernels are the ones qemu-tests/kernels.tsv names (package, version,
# sha256 of the .deb), so a cell boots the same kernel whatever the suite
# uploaded since, and btf/manifest.tsv embeds BTF for exactly those.  A .deb
# already in the cache with the listed sha256 needs no registry at all.  When
# the registry has the listed version in none of the cell's suites (SERIES
# below: the suite, then its fallbacks), the cell boots what the first of them
# offers now (the metapackage linux-image-<flavour>; sid splits images into
# linux-binary-* packages), FROM names the suite, and NOTE says it was not the
# listed one: the cell then makes that kernel's minimal BTF itself.
# A fetch that fails says in one line which suite, architecture and package,
# with the registry's own error where an index could not be read.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
CACHE=${OFFCPU_CACHE:-$HOME/.cache/offcpu}
# OFFCPU_APT: a stand-in for apt.sh (tests/t_fetch.sh).
APT=${OFFCPU_APT:-$ROOT/toolchain/apt.sh}
LIST=${OFFCPU_KERNELS:-$HERE/kernels.tsv}
# A series' suites in the order they are tried: 6.12 is trixie's, and
# bookworm-backports carries it for all three architectures.
declare -A SERIES=([bullseye]=bullseye [bookworm]=bookworm [trixie]="trixie bookworm-backports" [sid]=sid)

. "$ROOT/tests/board.sh"

# awk reads to the end in both: with pipefail, an early exit lets apt-cache
# die of SIGPIPE once its output outgrows the pipe (libc6-dbg: many
# versions), and set -e then ends the script without a word.
field() { "$APT" --cache show "$1/$2" 2>/dev/null | awk -v f="$3:" '!d && $1 == f { print $2; d = 1 }'; }

depends() {	# PKG SUITE -> its Depends, one package name per line
	"$APT" --cache show "$1/$2" 2>/dev/null | awk -F': ' '!d && /^Depends:/ { print $2; d = 1 }' |
		tr ',' '\n' | sed -e 's/^ *//' -e 's/[ (].*//' -e 's/|.*//'
}

# Why SUITE ARCH may lack a package: its index's last refresh failed.
index_error() {
	local e=${OFFCPU_APT_DIR:-$CACHE/apt}/index/$1_$2/error
	[ -s "$e" ] && echo " (index $1/$2 unusable: $(cat "$e"))"
	return 0
}

# download PKG VERSION SUITE ARCH -> the .deb's path in the cache
download() {
	local pkg=$1 ver=$2 suite=$3 arch=$4 dir=$CACHE/debs/$3 pattern deb
	# apt writes an epoch as %3a in the file name.
	pattern="$dir/${pkg}_*${ver#*:}_$arch.deb"
	deb=$(compgen -G "$pattern" | head -1 || true)
	if [ -z "$deb" ]; then
		mkdir -p "$dir"
		(cd "$dir" && "$APT" download -q "$pkg:$arch=$ver" >&2) ||
			{ echo "fetch.sh: $suite/$arch: cannot download $pkg $ver" >&2; return 1; }
		deb=$(compgen -G "$pattern" | head -1 || true)
		[ -n "$deb" ] || { echo "fetch.sh: $suite/$arch: $pkg $ver downloaded, but no $pattern" >&2; return 1; }
	fi
	echo "$deb"
}

# The image inside DEB, extracted once into the cache; empty if none.
extract() {	# DEB BOARD SUITE PKG -> path of the image
	local deb=$1 out=$CACHE/qemu/kernels/$2-$3-$4 path
	# awk reads to the end: an early exit would SIGPIPE dpkg-deb.
	path=$(dpkg-deb -c "$deb" | awk '!f && $6 ~ /^\.\/(boot\/(vmlinuz|vmlinux|image)-|usr\/lib\/modules\/[^\/]+\/(vmlinuz|image)$)/ { print $6; f = 1 }')
	[ -n "$path" ] || return 0
	if [ ! -s "$out" ]; then
		mkdir -p "$(dirname "$out")"
		dpkg-deb --fsys-tarfile "$deb" | tar -x -O "$path" > "$out.tmp"
		mv "$out.tmp" "$out"
	fi
	echo "$out"
}

# current BOARD SUITE: the package holding the image in SUITE now, following
# the metapackage; prints "IMAGE<tab>PKG<tab>VERSION<tab>DEB".
current() {
	local board=$1 suite=$2 arch queue=() seen=" " pkg ver deb image
	arch=$(board_var "$board" DEB_ARCH)
	queue=("linux-image-$(board_var "$board" KERNEL_FLAVOUR)")
	while [ ${#queue[@]} -gt 0 ]; do
		pkg=${queue[0]}
		queue=("${queue[@]:1}")
		[[ "$seen" == *" $pkg "* ]] && continue
		seen+="$pkg "
		case $pkg in
		linux-image-*|linux-binary-*) ;;
		*) continue ;;
		esac
		ver=$(field "$pkg:$arch" "$suite" Version)
		if [ -z "$ver" ]; then
			echo "fetch.sh: $suite/$arch has no $pkg$(index_error "$suite" "$arch")" >&2
			return 1
		fi
		deb=$(download "$pkg" "$ver" "$suite" "$arch") || return 1
		image=$(extract "$deb" "$board" "$suite" "$pkg")
		if [ -n "$image" ]; then
			printf '%s\t%s\t%s\t%s\n' "$image" "$pkg" "$ver" "$deb"
			return 0
		fi
		mapfile -t -O ${#queue[@]} queue < <(depends "$pkg:$arch" "$suite")
	done
	echo "fetch.sh: $suite/$arch: no kernel image under linux-image-$(board_var "$board" KERNEL_FLAVOUR)" >&2
	return 1
}

sha_of() { sha256sum "$1" | cut -d' ' -f1; }

# The listed kernel's .deb, from the cache or any of the series' suites.
listed_deb() {	# BOARD SUITE PKG VERSION SHA256 -> "DEB<tab>FROM"
	local board=$1 suite=$2 pkg=$3 ver=$4 sha=$5 arch s deb
	arch=$(board_var "$board" DEB_ARCH)
	for s in ${SERIES[$suite]}; do
		deb=$(compgen -G "$CACHE/debs/$s/${pkg}_*${ver#*:}_$arch.deb" | head -1 || true)
		[ -n "$deb" ] && [ "$(sha_of "$deb")" = "$sha" ] && { printf '%s\t%s\n' "$deb" "$s"; return 0; }
	done
	for s in ${SERIES[$suite]}; do
		[ "$(field "$pkg:$arch" "$s" Version)" = "$ver" ] || continue
		# apt checks the .deb against the index; this checks it against the list.
		deb=$(download "$pkg" "$ver" "$s" "$arch") || continue
		if [ "$(sha_of "$deb")" != "$sha" ]; then
			echo "fetch.sh: $s/$arch: $pkg $ver is not the listed file (sha256 $(sha_of "$deb"), listed $sha)" >&2
			return 1
		fi
		printf '%s\t%s\n' "$deb" "$s"
		return 0
	done
	return 1
}

kernel() {	# BOARD SUITE
	local board=$1 suite=$2 arch pkg ver sha row deb from image s why="" out
	[ -n "${SERIES[$suite]:-}" ] || { echo "fetch.sh: unknown suite $suite" >&2; return 1; }
	arch=$(board_var "$board" DEB_ARCH)
	row=$(awk -F'\t' -v b="$board" -v s="$suite" '$1 == b && $2 == s' "$LIST")
	if [ -n "$row" ]; then
		IFS=$'\t' read -r _ _ pkg ver sha <<< "$row"
		if out=$(listed_deb "$board" "$suite" "$pkg" "$ver" "$sha"); then
			IFS=$'\t' read -r deb from <<< "$out"
			image=$(extract "$deb" "$board" "$suite" "$pkg")
			[ -n "$image" ] || { echo "fetch.sh: $pkg $ver holds no kernel image" >&2; return 1; }
			printf '%s\t%s\t%s\t%s\t%s\n' "$image" "$pkg" "$ver" "$from" listed
			return 0
		fi
		why="listed $pkg $ver is in none of ${SERIES[$suite]// /, }"
		for s in ${SERIES[$suite]}; do why+=$(index_error "$s" "$arch"); done
	else
		why="no $board $suite row in $(basename "$LIST")"
	fi
	echo "fetch.sh: $board $suite: $why; trying what the suites offer now" >&2
	for s in ${SERIES[$suite]}; do
		out=$(current "$board" "$s") || continue
		IFS=$'\t' read -r image pkg ver deb <<< "$out"
		printf '%s\t%s\t%s\t%s\t%s\n' "$image" "$pkg" "$ver" "$s" "not the listed kernel: $why"
		return 0
	done
	echo "fetch.sh: no kernel for $board in ${SERIES[$suite]// / or }" >&2
	return 1
}

# The list as the registry has it now: each board's suites, the first suite
# of the series that offers a kernel.
list() {
	local mk board suite out image pkg ver deb s
	printf 'board\tsuite\tpackage\tversion\tsha256\n'
	for mk in "$ROOT"/board/*.mk; do
		board=$(basename "$mk" .mk)
		for suite in $(board_var "$board" KERNEL_SUITES); do
			for s in ${SERIES[$suite]}; do
				out=$(current "$board" "$s") || continue
				IFS=$'\t' read -r image pkg ver deb <<< "$out"
				printf '%s\t%s\t%s\t%s\t%s\n' "$board" "$suite" "$pkg" "$ver" "$(sha_of "$deb")"
				break
			done
		done
	done
}

# bookworm's, or the board's BUSYBOX_SUITE where bookworm has none of its arch.
busybox() {
	local arch out deb ver suite path
	arch=$(board_var "$1" DEB_ARCH)
	suite=$(board_var "$1" BUSYBOX_SUITE)
	out=$CACHE/qemu/busybox-$arch
	if [ ! -x "$out" ]; then
		suite=${suite:-bookworm}
		ver=$(field "busybox-static:$arch" "$suite" Version)
		[ -n "$ver" ] || { echo "fetch.sh: $suite/$arch has no busybox-static$(index_error "$suite" "$arch")" >&2; return 1; }
		deb=$(download busybox-static "$ver" "$suite" "$arch") || return 1
		mkdir -p "$CACHE/qemu"
		# /bin/busybox; /usr/bin/busybox since trixie (merged /usr).
		path=$(dpkg-deb -c "$deb" | awk '!f && $6 ~ /^\.(\/usr)?\/bin\/busybox$/ { print $6; f = 1 }')
		dpkg-deb --fsys-tarfile "$deb" | tar -x -O "${path:-./bin/busybox}" > "$out.tmp"
		chmod +x "$out.tmp"
		mv "$out.tmp" "$out"
	fi
	echo "$out"
}

# The distribution's own libc of the board's architecture in SUITE (libc6 and
# libc6-dbg, unpacked), for a board whose cross libc is not built as the
# distribution builds it (DISTRO_LIBC_SUITE): prints the unpacked tree.
libc() {	# BOARD SUITE
	local arch out pkg ver deb
	arch=$(board_var "$1" DEB_ARCH)
	out=$CACHE/qemu/libc6-$arch-$2
	if [ ! -d "$out" ]; then
		rm -rf "$out.tmp"
		mkdir -p "$out.tmp"
		for pkg in libc6 libc6-dbg; do
			ver=$(field "$pkg:$arch" "$2" Version)
			[ -n "$ver" ] || { echo "fetch.sh: $2/$arch has no $pkg$(index_error "$2" "$arch")" >&2; return 1; }
			deb=$(download "$pkg" "$ver" "$2" "$arch") || return 1
			dpkg-deb -x "$deb" "$out.tmp" || return 1
		done
		mv "$out.tmp" "$out"
	fi
	echo "$out"
}

case ${1:-} in
kernel) kernel "$2" "$3" ;;
busybox) busybox "$2" ;;
libc) libc "$2" "$3" ;;
list) list ;;
*) echo "usage: $0 kernel BOARD SUITE | busybox BOARD | libc BOARD SUITE | list" >&2; exit 2 ;;
esac
