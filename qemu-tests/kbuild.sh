#!/bin/bash
# A kernel as many devices run it, which Debian does not ship: built here
# from Debian's own kernel source (linux-source-X, Debian's patches applied)
# with a board's fragment qemu-tests/kconfig/NAME.config over tinyconfig.
# The first, nobpf-armhf, is the mainline 32-bit ARM case: perf events and
# tracepoints on, no bpf() (CONFIG_BPF_SYSCALL off, as multi_v7_defconfig).
#
#   kbuild.sh NAME     -> "IMAGE<tab>PACKAGE<tab>VERSION<tab>SUITE<tab>NOTE"
#                         (fetch.sh kernel's line; NOTE "listed" or why not)
#
# The source is the one qemu-tests/kbuild.tsv names (package, version, sha256
# of the .deb); when the registry no longer has it, the suite's current
# linux-source, and NOTE says so.  The image is cached under
# $OFFCPU_CACHE/qemu/kernels, keyed by the source's version and a digest of
# the fragment and this script, so a warm cache builds nothing.  The build
# log is kept beside it and named on failure.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
CACHE=${OFFCPU_CACHE:-$HOME/.cache/offcpu}
APT=${OFFCPU_APT:-$ROOT/toolchain/apt.sh}
LIST=$HERE/kbuild.tsv
NAME=${1:?usage: kbuild.sh NAME (qemu-tests/kconfig/NAME.config)}
FRAG=$HERE/kconfig/$NAME.config
JOBS=${JOBS:-$(nproc)}

. "$ROOT/tests/board.sh"

[ -r "$FRAG" ] || { echo "kbuild.sh: no $FRAG" >&2; exit 1; }
row=$(awk -F'\t' -v n="$NAME" '$1 == n' "$LIST")
[ -n "$row" ] || { echo "kbuild.sh: no $NAME row in $(basename "$LIST")" >&2; exit 1; }
IFS=$'\t' read -r _ board suite pkg ver sha <<< "$row"

field() { "$APT" --cache show "$1/$2" 2>/dev/null | awk -v f="$3:" '!d && $1 == f { print $2; d = 1 }'; }

# The listed source .deb (from the cache, else downloaded and checked), or
# the suite's current one; prints "DEB<tab>PKG<tab>VERSION<tab>NOTE".
source_deb() {
	local dir=$CACHE/debs/$suite deb cur note=listed
	deb=$(compgen -G "$dir/${pkg}_${ver}_all.deb" | head -1 || true)
	if [ -z "$deb" ] && [ "$(field "$pkg" "$suite" Version)" = "$ver" ]; then
		mkdir -p "$dir"
		(cd "$dir" && "$APT" download -q "$pkg=$ver" >&2) ||
			{ echo "kbuild.sh: $suite: cannot download $pkg $ver" >&2; return 1; }
		deb=$(compgen -G "$dir/${pkg}_${ver}_all.deb" | head -1 || true)
	fi
	if [ -n "$deb" ] && [ "$(sha256sum "$deb" | cut -d' ' -f1)" != "$sha" ]; then
		echo "kbuild.sh: $deb is not the listed file (sha256 differs)" >&2
		return 1
	fi
	if [ -z "$deb" ]; then
		# The metapackage linux-source depends on the current linux-source-X.
		cur=$("$APT" --cache show "linux-source/$suite" 2>/dev/null |
			awk -F': ' '!d && /^Depends:/ { print $2; d = 1 }' | sed 's/[ ,(].*//')
		ver=$(field "$cur" "$suite" Version)
		[ -n "$cur" ] && [ -n "$ver" ] ||
			{ echo "kbuild.sh: $suite has neither $pkg $ver nor a linux-source" >&2; return 1; }
		note="not the listed source: $pkg $(awk -F'\t' -v n="$NAME" '$1 == n { print $5 }' "$LIST") is gone from $suite"
		echo "kbuild.sh: $note; building $cur $ver" >&2
		pkg=$cur
		mkdir -p "$dir"
		(cd "$dir" && "$APT" download -q "$pkg=$ver" >&2) ||
			{ echo "kbuild.sh: $suite: cannot download $pkg $ver" >&2; return 1; }
		deb=$(compgen -G "$dir/${pkg}_${ver}_all.deb" | head -1)
	fi
	printf '%s\t%s\t%s\t%s\n' "$deb" "$pkg" "$ver" "$note"
}

IFS=$'\t' read -r deb pkg ver note <<< "$(source_deb)"
[ -n "$deb" ] || exit 1
digest=$(cat "$FRAG" "$HERE/kbuild.sh" | sha256sum | cut -c1-12)
out=$CACHE/qemu/kernels/$NAME-$ver-$digest
if [ ! -s "$out" ]; then
	arch=$(board_var "$board" KBUILD_ARCH)
	triple=$(board_var "$board" TRIPLE)
	work=$CACHE/kbuild/$NAME
	log=$out.log
	mkdir -p "$(dirname "$out")"
	echo "kbuild.sh: building $NAME from $pkg $ver (a few minutes; log: $log)" >&2
	rm -rf "$work"
	mkdir -p "$work"
	start=$(date +%s)
	if ! {
		dpkg-deb --fsys-tarfile "$deb" | tar -x -O --wildcards './usr/src/linux-source-*.tar.xz' |
			xz -dc | tar -x -C "$work" --strip-components=1 &&
		kmake() { make -C "$work" ARCH="$arch" CROSS_COMPILE="$triple-" CC="$triple-gcc-12" "$@"; } &&
		kmake tinyconfig &&
		(cd "$work" && scripts/kconfig/merge_config.sh -m -O . .config "$FRAG") &&
		kmake olddefconfig &&
		# Every line of the fragment must have survived olddefconfig: a
		# dependency it lacks would silently drop an option (BPF on, say).
		python3 "$HERE/kconfig_check.py" "$FRAG" "$work/.config" &&
		kmake -j"$JOBS" "$(board_var "$board" KBUILD_IMAGE)" &&
		cp "$work/arch/$arch/boot/$(board_var "$board" KBUILD_IMAGE)" "$out.tmp"
	} >"$log" 2>&1; then
		echo "kbuild.sh: building $NAME failed: $(grep -m1 -E 'error|Error|not set in' "$log" || tail -n 1 "$log") (log: $log)" >&2
		exit 1
	fi
	mv "$out.tmp" "$out"
	echo "kbuild.sh: $NAME built in $(( $(date +%s) - start )) s" >&2
	rm -rf "$work"
fi
printf '%s\t%s\t%s\t%s\t%s\n' "$out" "$pkg" "$ver" "$suite" "$note"
