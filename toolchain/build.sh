#!/bin/bash
# Builds, per target, what the static offcpu links against:
#   host:            libbpf.a (glibc, system gcc) + its headers, for the BPF
#                    compile and the development/sanitizer builds
#   x86_64|arm64|s390x: a musl sysroot (Debian's musl-dev + linux-libc-dev),
#                    a gcc specs file for it, and static libz.a, libelf.a,
#                    libbpf.a built from Debian source packages
# into $OFFCPU_CACHE/toolchain/<target>, ending with a .done stamp.
# Idempotent: a finished target returns at once.  Versions: versions.mk.
#
#   toolchain/build.sh <host|board>
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
CACHE=${OFFCPU_CACHE:-$HOME/.cache/offcpu}
TARGET=${1:?usage: build.sh <host|board>}
OUT=$CACHE/toolchain/$TARGET
SRC=$CACHE/src
JOBS=${JOBS:-$(nproc)}
APT=$HERE/apt.sh

[ -e "$OUT/.done" ] && exit 0

ver() { awk -v k="$1" '$1 == k { print $3 }' "$HERE/versions.mk"; }
ZLIB_VERSION=$(ver ZLIB_VERSION)
ELFUTILS_VERSION=$(ver ELFUTILS_VERSION)
LIBBPF_VERSION=$(ver LIBBPF_VERSION)
MUSL_VERSION=$(ver MUSL_VERSION)

log() { echo "toolchain[$TARGET]: $*" >&2; }

# fetch_source PKG SUITE VERSION -> prints the unpacked source directory
fetch_source() {
	local pkg=$1 suite=$2 version=$3 dir=$SRC/$1-$3
	if [ ! -d "$dir" ]; then
		mkdir -p "$SRC/dl-$pkg"
		(cd "$SRC/dl-$pkg" && "$APT" source --download-only -q "$pkg/$suite" >&2)
		local orig
		orig=$(ls "$SRC/dl-$pkg/${pkg}_${version}"*.orig.tar.* | head -1)
		[ -n "$orig" ] || { log "no $pkg $version source in $suite"; exit 1; }
		mkdir -p "$dir.tmp"
		tar -xf "$orig" -C "$dir.tmp" --strip-components=1
		mv "$dir.tmp" "$dir"
	fi
	echo "$dir"
}

build_libbpf() {	# CC EXTRA_CFLAGS
	local src obj
	src=$(fetch_source libbpf trixie "$LIBBPF_VERSION")
	obj=$OUT/build/libbpf
	rm -rf "$obj"
	mkdir -p "$obj"
	make -s -C "$src/src" -j"$JOBS" BUILD_STATIC_ONLY=1 NO_PKG_CONFIG=1 \
		CC="$1" EXTRA_CFLAGS="$2" OBJDIR="$obj" DESTDIR="$OUT" \
		PREFIX=/ LIBDIR=/lib INCLUDEDIR=/include install >&2
	rm -rf "$OUT/lib/pkgconfig"
}

build_host() {
	log "libbpf $LIBBPF_VERSION (glibc)"
	build_libbpf gcc "-g -O2"
}

# --- musl targets ---

board_var() { awk -v k="$1" '$1 == k { sub(/^[^=]*=[ \t]*/, ""); print; exit }' "$ROOT/board/$TARGET.mk"; }

make_sysroot() {
	local arch=$1 mtriple=$2 gtriple=$3 dl=$CACHE/debs/$arch sys=$OUT/sysroot
	mkdir -p "$dl" "$sys"
	(cd "$dl" && "$APT" download -q "musl-dev:$arch/bookworm" "linux-libc-dev:$arch/bookworm" >&2)
	for d in "$dl"/musl-dev_"$MUSL_VERSION"*_"$arch".deb "$dl"/linux-libc-dev_*_"$arch".deb; do
		dpkg-deb -x "$d" "$sys"
	done
	# Kernel UAPI headers beside musl's, so nothing of glibc leaks in.
	local inc=$sys/usr/include/$mtriple
	cp -r "$sys/usr/include/linux" "$sys/usr/include/asm-generic" "$inc/"
	cp -r "$sys/usr/include/$gtriple/asm" "$inc/asm"
	sed -e "s@/usr/@$sys/usr/@g" -e "s@-dynamic-linker [^ ]*@@" \
		"$sys/usr/lib/$mtriple/musl-gcc.specs" > "$OUT/musl-gcc.specs"
}

build_zlib() {
	local src
	src=$(fetch_source zlib bookworm "$ZLIB_VERSION")
	rm -rf "$OUT/build/zlib"
	cp -r "$src" "$OUT/build/zlib"
	(cd "$OUT/build/zlib" &&
		CC="$CC" CFLAGS="-Os -ffunction-sections -fdata-sections" ./configure --static \
			--prefix=/ >&2 &&
		make -s -j"$JOBS" libz.a >&2)
	cp "$OUT/build/zlib/libz.a" "$OUT/lib/"
	cp "$OUT/build/zlib/zlib.h" "$OUT/build/zlib/zconf.h" "$OUT/include/"
}

# libelf only: musl lacks argp, fts and obstack, which only the tools need.
build_libelf() {
	local src b=$OUT/build/elfutils
	src=$(fetch_source elfutils bookworm "$ELFUTILS_VERSION")
	rm -rf "$b"
	mkdir -p "$b"
	(cd "$b" &&
		ac_cv_search_argp_parse="none required" ac_cv_search_fts_close="none required" \
		ac_cv_search__obstack_free="none required" ac_cv_fts_h=yes \
		CC="$CC" CFLAGS="-Os -ffunction-sections -fdata-sections -Wno-error" \
		CPPFLAGS="-I$OUT/include -I$HERE/compat" LDFLAGS="-L$OUT/lib" \
		"$src/configure" --host="$GNU_TRIPLE" --disable-debuginfod \
			--disable-libdebuginfod --without-bzlib --without-lzma --without-zstd \
			--disable-nls --disable-demangler --disable-symbol-versioning \
			--disable-textrelcheck >&2 &&
		make -s -C libelf -j"$JOBS" libelf.a >&2)
	cp "$b/libelf/libelf.a" "$OUT/lib/"
	cp "$src/libelf/libelf.h" "$src/libelf/gelf.h" "$src/libelf/nlist.h" "$OUT/include/"
	mkdir -p "$OUT/include/elfutils"
	cp "$b/version.h" "$src/libelf/elf-knowledge.h" "$OUT/include/elfutils/" 2>/dev/null || true
}

build_musl_target() {
	local arch mtriple
	GNU_TRIPLE=$(board_var TRIPLE)
	arch=$(board_var DEB_ARCH)
	mtriple=${GNU_TRIPLE/-gnu/-musl}
	mkdir -p "$OUT/lib" "$OUT/include" "$OUT/build"
	log "musl $MUSL_VERSION sysroot ($arch)"
	make_sysroot "$arch" "$mtriple" "$GNU_TRIPLE"
	CC="$GNU_TRIPLE-gcc-12 -specs $OUT/musl-gcc.specs"
	log "zlib $ZLIB_VERSION"
	build_zlib
	log "libelf $ELFUTILS_VERSION"
	build_libelf
	log "libbpf $LIBBPF_VERSION"
	build_libbpf "$CC" "-Os -ffunction-sections -fdata-sections -I$OUT/include"
	rm -rf "$OUT/build"
}

start=$(date +%s)
rm -rf "$OUT"
mkdir -p "$OUT"
if [ "$TARGET" = host ]; then
	build_host
else
	[ -e "$ROOT/board/$TARGET.mk" ] || { log "no board/$TARGET.mk"; exit 1; }
	build_musl_target
fi
touch "$OUT/.done"
log "done in $(( $(date +%s) - start )) s"
