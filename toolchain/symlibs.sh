#!/bin/bash
# Builds the symbol libraries of `offcpu report` per target, static, from
# Debian source packages:
#   libiberty.a  cplus_demangle (C++ Itanium, Rust legacy and v0), and its
#                demangle.h under include/libiberty/
#   liblzma.a    xz decoders only, for MiniDebugInfo (.gnu_debugdata)
# into $OFFCPU_CACHE/toolchain/<target>-sym, with their own .done stamp, so
# they rebuild only when this script or toolchain/symlibs.mk changes (not
# with every change of build.sh).  Musl targets use the sysroot and specs of
# $OFFCPU_CACHE/toolchain/<target> (build.sh first).
#
#   toolchain/symlibs.sh <host|board>
#   toolchain/symlibs.sh --check <host|board>   exit 0 when built and current
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
CACHE=${OFFCPU_CACHE:-$HOME/.cache/offcpu}
CHECK=
[ "${1:-}" = --check ] && { CHECK=1; shift; }
TARGET=${1:?usage: symlibs.sh [--check] <host|board>}
TC=$CACHE/toolchain/$TARGET
OUT=$CACHE/toolchain/$TARGET-sym
SRC=$CACHE/src
JOBS=${JOBS:-$(nproc)}

ver() { awk -v k="$1" '$1 == k { print $3 }' "$HERE/symlibs.mk"; }
LIBIBERTY_VERSION=$(ver LIBIBERTY_VERSION)
XZ_VERSION=$(ver XZ_VERSION)
LOG_NAME=symlibs
. "$HERE/common.sh"
STAMP=$({ cat "$HERE/symlibs.sh" "$HERE/common.sh" "$HERE/symlibs.mk"
	  [ "$TARGET" = host ] || board_var TRIPLE; } | sha256sum | cut -d' ' -f1)
current() { [ "$(cat "$OUT/.done" 2>/dev/null)" = "$STAMP" ]; }
current && exit 0
[ -z "$CHECK" ] || exit 1

mkdir -p "$CACHE/toolchain" "$SRC"
exec 9>"$OUT.lock"
flock 9
current && exit 0
STAGE=$OUT.stage

# fetch_source PKG SUITE VERSION -> the unpacked source directory (shared).
fetch_source() {
	local pkg=$1 suite=$2 version=$3 dir=$SRC/$1-$3 orig
	(
		flock 8
		[ -d "$dir" ] && exit 0
		rm -rf "$SRC/dl-$pkg" "$dir.tmp"
		mkdir -p "$SRC/dl-$pkg" "$dir.tmp"
		(cd "$SRC/dl-$pkg" && "$HERE/apt.sh" source --download-only -q "$pkg/$suite" >&2)
		# Not the .asc signature beside the tarball.
		orig=$(compgen -G "$SRC/dl-$pkg/${pkg}_${version}*.orig.tar.*" | grep -v '\.asc$' | head -1) || true
		[ -n "$orig" ] || { log "no $pkg $version source in $suite"; exit 1; }
		# errexit is off in $(...): a failed unpack must not leave an empty tree.
		tar -xf "$orig" -C "$dir.tmp" --strip-components=1 || exit 1
		mv "$dir.tmp" "$dir"
	) 8>"$SRC/.lock" || exit 1
	echo "$dir"
}

build_libiberty() {	# CC CFLAGS HOST_TRIPLE
	local src b=$STAGE/build/libiberty
	src=$(fetch_source libiberty bookworm "$LIBIBERTY_VERSION")
	mkdir -p "$b" "$STAGE/include/libiberty"
	(cd "$b" && CC="$1" CFLAGS="$2" "$src/libiberty/configure" --host="$3" >&2 &&
		make -s -j"$JOBS" libiberty.a >&2)
	cp "$b/libiberty.a" "$STAGE/lib/"
	cp "$src/include/demangle.h" "$src/include/libiberty.h" "$src/include/ansidecl.h" \
		"$STAGE/include/libiberty/"
}

build_liblzma() {	# CC CFLAGS HOST_TRIPLE
	local src b=$STAGE/build/xz
	src=$(fetch_source xz-utils bookworm "$XZ_VERSION")
	mkdir -p "$b"
	(cd "$b" && CC="$1" CFLAGS="$2" "$src/configure" --host="$3" --enable-static \
		--disable-shared --disable-encoders --disable-threads --disable-nls \
		--disable-xz --disable-xzdec --disable-lzmadec --disable-lzmainfo \
		--disable-lzma-links --disable-scripts --disable-doc >&2 &&
		make -s -C src/liblzma -j"$JOBS" liblzma.la >&2)
	cp "$b/src/liblzma/.libs/liblzma.a" "$STAGE/lib/"
	cp -r "$src/src/liblzma/api/lzma.h" "$src/src/liblzma/api/lzma" "$STAGE/include/"
}

start=$(date +%s)
rm -rf "$STAGE"
mkdir -p "$STAGE/lib" "$STAGE/include" "$STAGE/build"
if [ "$TARGET" = host ]; then
	CC=gcc CFLAGS="-g -O2" TRIPLE=$(gcc -dumpmachine)
else
	TRIPLE=$(board_var TRIPLE)
	[ -f "$TC/musl-gcc.specs" ] || { log "no musl toolchain in $TC (toolchain/build.sh $TARGET)"; exit 1; }
	CC="$TRIPLE-gcc-12 -specs $TC/musl-gcc.specs" CFLAGS="-Os -ffunction-sections -fdata-sections"
fi
log "libiberty $LIBIBERTY_VERSION, liblzma $XZ_VERSION"
build_libiberty "$CC" "$CFLAGS" "$TRIPLE"
build_liblzma "$CC" "$CFLAGS" "$TRIPLE"
rm -rf "$STAGE/build"
echo "$STAMP" > "$STAGE/.done"
rm -rf "$OUT.old"
[ -e "$OUT" ] && mv "$OUT" "$OUT.old"
mv "$STAGE" "$OUT"
rm -rf "$OUT.old"
log "done in $(( $(date +%s) - start )) s"
