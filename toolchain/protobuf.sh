#!/bin/bash
# Builds protobuf-c's runtime (libprotobuf-c.a, include/protobuf-c/) per
# target, static, from Debian's source package, for `offcpu report --pprof`,
# into $OFFCPU_CACHE/toolchain/<target>-pb with its own .done stamp: it
# rebuilds only when this script or toolchain/protobuf.mk changes, never
# with build.sh or symlibs.sh.  Musl targets use the sysroot and specs of
# $OFFCPU_CACHE/toolchain/<target> (build.sh first).  The code generator,
# protoc-c, is the build host's (toolchain/deps.sh).
#
#   toolchain/protobuf.sh <host|board>
#   toolchain/protobuf.sh --check <host|board>   exit 0 when built and current
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
CACHE=${OFFCPU_CACHE:-$HOME/.cache/offcpu}
CHECK=
[ "${1:-}" = --check ] && { CHECK=1; shift; }
TARGET=${1:?usage: protobuf.sh [--check] <host|board>}
TC=$CACHE/toolchain/$TARGET
OUT=$CACHE/toolchain/$TARGET-pb
SRC=$CACHE/src
JOBS=${JOBS:-$(nproc)}

VERSION=$(awk '$1 == "PROTOBUF_C_VERSION" { print $3 }' "$HERE/protobuf.mk")
LOG_NAME=protobuf
. "$HERE/common.sh"
STAMP=$({ cat "$HERE/protobuf.sh" "$HERE/common.sh" "$HERE/protobuf.mk"
	  [ "$TARGET" = host ] || board_var TRIPLE; } | sha256sum | cut -d' ' -f1)
current() { [ "$(cat "$OUT/.done" 2>/dev/null)" = "$STAMP" ]; }
current && exit 0
[ -z "$CHECK" ] || exit 1

mkdir -p "$CACHE/toolchain" "$SRC"
exec 9>"$OUT.lock"
flock 9
current && exit 0
STAGE=$OUT.stage

# The unpacked source (shared; the same steps and lock as symlibs.sh, which
# is not changed so that its stamp, and its libraries, stay as they are).
fetch_source() {	# PKG SUITE VERSION
	local pkg=$1 suite=$2 version=$3 dir=$SRC/$1-$3 orig
	(
		flock 8
		[ -d "$dir" ] && exit 0
		rm -rf "$SRC/dl-$pkg" "$dir.tmp"
		mkdir -p "$SRC/dl-$pkg" "$dir.tmp"
		(cd "$SRC/dl-$pkg" && "$HERE/apt.sh" source --download-only -q "$pkg/$suite" >&2)
		orig=$(compgen -G "$SRC/dl-$pkg/${pkg}_${version}*.orig.tar.*" | grep -v '\.asc$' | head -1) || true
		[ -n "$orig" ] || { log "no $pkg $version source in $suite"; exit 1; }
		tar -xf "$orig" -C "$dir.tmp" --strip-components=1 || exit 1
		mv "$dir.tmp" "$dir"
	) 8>"$SRC/.lock" || exit 1
	echo "$dir"
}

start=$(date +%s)
rm -rf "$STAGE"
mkdir -p "$STAGE/lib" "$STAGE/include/protobuf-c" "$STAGE/build"
if [ "$TARGET" = host ]; then
	CC=gcc CFLAGS="-g -O2" TRIPLE=$(gcc -dumpmachine)
else
	TRIPLE=$(board_var TRIPLE)
	[ -f "$TC/musl-gcc.specs" ] || { log "no musl toolchain in $TC (toolchain/build.sh $TARGET)"; exit 1; }
	CC="$TRIPLE-gcc-12 -specs $TC/musl-gcc.specs" CFLAGS="-Os -ffunction-sections -fdata-sections"
fi
log "protobuf-c $VERSION"
src=$(fetch_source protobuf-c bookworm "$VERSION")
# The runtime only: protoc-c would need protobuf's C++ libraries.
(cd "$STAGE/build" && CC="$CC" CFLAGS="$CFLAGS" "$src/configure" --host="$TRIPLE" \
	--disable-protoc --enable-static --disable-shared >&2 &&
	make -s -j"$JOBS" protobuf-c/libprotobuf-c.la >&2)
cp "$STAGE/build/protobuf-c/.libs/libprotobuf-c.a" "$STAGE/lib/"
cp "$src/protobuf-c/protobuf-c.h" "$STAGE/include/protobuf-c/"
rm -rf "$STAGE/build"
echo "$STAMP" > "$STAGE/.done"
rm -rf "$OUT.old"
[ -e "$OUT" ] && mv "$OUT" "$OUT.old"
mv "$STAGE" "$OUT"
rm -rf "$OUT.old"
log "done in $(( $(date +%s) - start )) s"
