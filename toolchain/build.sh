#!/bin/bash
# Builds, per target, what offcpu links against:
#   host:            libbpf.a (glibc, system gcc) + its headers, for the BPF
#                    compile and the development/sanitizer builds, beside the
#                    system's libelf.a and libz.a
#   boards:          a musl sysroot (Debian's musl-dev + linux-libc-dev, or
#                    musl built from Debian's source: MUSL_FROM := source),
#                    a gcc specs file for it, and static libz.a, libelf.a,
#                    libbpf.a built from Debian source packages
# into $OFFCPU_CACHE/toolchain/<target>, ending with a .done stamp.
# Idempotent: a finished target returns at once.  Versions: versions.mk.
#
#   toolchain/build.sh <host|board>
#   toolchain/build.sh --check <host|board>   exit 0 when built and current
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
CACHE=${OFFCPU_CACHE:-$HOME/.cache/offcpu}
CHECK=
[ "${1:-}" = --check ] && { CHECK=1; shift; }
TARGET=${1:?usage: build.sh [--check] <host|board>}
OUT=$CACHE/toolchain/$TARGET
SRC=$CACHE/src
JOBS=${JOBS:-$(nproc)}
APT=$HERE/apt.sh

LOG_NAME=toolchain
. "$HERE/common.sh"
ver() { mk_var "$HERE/versions.mk" "$1"; }
ZLIB_VERSION=$(ver ZLIB_VERSION)
ELFUTILS_VERSION=$(ver ELFUTILS_VERSION)
LIBBPF_MIN_VERSION=$(ver LIBBPF_MIN_VERSION)
LIBBPF_SUITES=$(ver LIBBPF_SUITES)
MUSL_VERSION=$(ver MUSL_VERSION)

# The stamp holds a digest of everything the output depends on, so a changed
# version, script or board triple rebuilds on the next run (make setup).
stamp() {
	{
		cat "$HERE/build.sh" "$HERE/common.sh" "$HERE/versions.mk"
		[ "$TARGET" = host ] || { board_var TRIPLE; board_var DEB_ARCH; board_var MUSL_FROM; }
	} | sha256sum | cut -d' ' -f1
}
# current: the stamp matches; a stamp older than its inputs (a checkout) is
# touched so make's $(TC)/.done rule stops calling us.
current() {
	[ "$(cat "$OUT/.done" 2>/dev/null)" = "$STAMP" ] || return 1
	[ -n "$CHECK" ] && return 0
	if [ "$HERE/build.sh" -nt "$OUT/.done" ] || [ "$HERE/common.sh" -nt "$OUT/.done" ] ||
	   [ "$HERE/versions.mk" -nt "$OUT/.done" ]; then
		touch "$OUT/.done"
	fi
}
STAMP=$(stamp)
current && exit 0
[ -z "$CHECK" ] || exit 1

# One builder per target; a second one waits, then finds the stamp.
mkdir -p "$CACHE/toolchain" "$SRC"
exec 9>"$OUT.lock"
flock 9
current && exit 0

# Built in a staging directory and swapped in at the end, so a build using
# the previous toolchain never sees a half-built one.
STAGE=$OUT.stage

# fetch_source PKG SUITE VERSION -> prints the unpacked source directory,
# shared read-only by all targets.
fetch_source() {
	local pkg=$1 suite=$2 version=$3 dir=$SRC/$1-$3 orig
	(
		flock 8
		[ -d "$dir" ] && exit 0
		rm -rf "$SRC/dl-$pkg" "$dir.tmp"
		mkdir -p "$SRC/dl-$pkg" "$dir.tmp"
		(cd "$SRC/dl-$pkg" && "$APT" source --download-only -q "$pkg/$suite" >&2)
		# Not the .asc signature beside the tarball (musl has one).
		orig=$(compgen -G "$SRC/dl-$pkg/${pkg}_${version}*.orig.tar.*" | grep -v '\.asc$' | head -1) || true
		[ -n "$orig" ] || { log "no $pkg $version source in $suite"; exit 1; }
		# errexit is off in $(...): a failed unpack must not leave an empty tree.
		tar -xf "$orig" -C "$dir.tmp" --strip-components=1 || exit 1
		mv "$dir.tmp" "$dir"
	) 8>"$SRC/.lock" || exit 1
	echo "$dir"
}

# pick_libbpf: the newest libbpf source upload >= LIBBPF_MIN_VERSION in
# LIBBPF_SUITES, as "UPSTREAM DEBIAN_VERSION SUITE" (1.7.0 1.7.0-1 sid).  Only
# a build asks: a toolchain built earlier stays (versions.mk pins a minimum).
pick_libbpf() {
	local uploads best= v suite
	# madison: "libbpf | 1.7.0-1 | <mirror> sid/main Sources"
	uploads=$("$APT" --cache madison libbpf | awk -F' *[|] *' '$3 ~ / Sources$/ {
		split($3, w, " "); sub(/\/.*/, "", w[2]); print $2, w[2] }') ||
		{ log "apt-cache madison libbpf failed"; exit 1; }
	while read -r v suite; do
		[[ " $LIBBPF_SUITES " == *" $suite "* ]] || continue
		dpkg --compare-versions "$v" ge "$LIBBPF_MIN_VERSION" || continue
		[ -n "$best" ] && dpkg --compare-versions "$v" le "${best% *}" && continue
		best="$v $suite"
	done <<< "$uploads"
	if [ -z "$best" ]; then
		log "no libbpf >= $LIBBPF_MIN_VERSION in $LIBBPF_SUITES (versions.mk); the registry has: $(paste -sd, <<< "${uploads:-nothing}" | sed 's/,/, /g')"
		exit 1
	fi
	v=${best% *}
	v=${v#*:}	# upstream: no epoch, no Debian revision
	echo "${v%-*} $best"
}

build_libbpf() {	# CC EXTRA_CFLAGS
	local src obj=$STAGE/build/libbpf
	src=$(fetch_source libbpf "$LIBBPF_SUITE" "$LIBBPF_VERSION")
	mkdir -p "$obj"
	# EXTRA_CFLAGS, not CFLAGS: libbpf's own CFLAGS carry -Werror.
	make -s -C "$src/src" -j"$JOBS" BUILD_STATIC_ONLY=1 NO_PKG_CONFIG=1 \
		CC="$1" EXTRA_CFLAGS="$2" OBJDIR="$obj" DESTDIR="$STAGE" \
		PREFIX=/ LIBDIR=/lib INCLUDEDIR=/include install >&2
	rm -rf "$STAGE/lib/pkgconfig"
}

build_host() {
	local a
	log "libbpf $LIBBPF_VERSION from $LIBBPF_SUITE (glibc)"
	build_libbpf gcc "-g -O2"
	# Debian's static libz (zlib1g-dev) beside libbpf.a, so
	# -L$(HOSTTC)/lib -lbpf -ldw -lelf -lz links the same set everywhere.
	a=$(gcc -print-file-name=libz.a)
	[ -f "$a" ] && cp "$a" "$STAGE/lib/"
	# libelf and libdw from source, as on the boards: libdw uses libelf's
	# internal structures, so both come from one build.
	CC=gcc GNU_TRIPLE=$(gcc -dumpmachine)
	log "libelf, libdw $ELFUTILS_VERSION (glibc)"
	build_libelf
	build_libdw
}

# --- musl targets ---

# Debian's musl-dev and linux-libc-dev of the target architecture; the
# kernel UAPI headers go beside musl's so nothing of glibc leaks in.  A board
# bookworm has no packages for (MUSL_FROM := source) gets musl built from
# bookworm's source instead (make_musl) and the headers of its
# linux-libc-dev-<arch>-cross.
make_sysroot() {
	local arch=$1 mtriple=$2 gtriple=$3 dl=$CACHE/debs/$arch sys=$STAGE/sysroot d hdr
	local inc=$sys/usr/include/$mtriple
	mkdir -p "$dl" "$sys"
	if [ "$(board_var MUSL_FROM)" = source ]; then
		make_musl "$mtriple" "$gtriple"
		(cd "$dl" && "$APT" download -q "linux-libc-dev-$arch-cross/bookworm" >&2)
		d=$(cd "$dl" && compgen -G "linux-libc-dev-$arch-cross_*_all.deb" | sort -V | tail -1) ||
			{ log "no linux-libc-dev-$arch-cross in $dl"; exit 1; }
		hdr=$STAGE/build/uapi
		dpkg-deb -x "$dl/$d" "$hdr"
		cp -r "$hdr/usr/$gtriple/include/linux" "$hdr/usr/$gtriple/include/asm-generic" \
			"$hdr/usr/$gtriple/include/asm" "$inc/"
	else
		(cd "$dl" && "$APT" download -q "musl-dev:$arch/bookworm" "linux-libc-dev:$arch/bookworm" >&2)
		for d in musl-dev_"$MUSL_VERSION"-*_"$arch".deb linux-libc-dev_*_"$arch".deb; do
			d=$(cd "$dl" && compgen -G "$d" | sort -V | tail -1) ||
				{ log "no $d in $dl"; exit 1; }
			dpkg-deb -x "$dl/$d" "$sys"
		done
		cp -r "$sys/usr/include/linux" "$sys/usr/include/asm-generic" "$inc/"
		cp -r "$sys/usr/include/$gtriple/asm" "$inc/asm"
	fi
	# musl's own specs with the sysroot's paths; static only, no loader.
	sed -e "s@/usr/@$sys/usr/@g" -e "s@-dynamic-linker [^ ]*@@" \
		"$sys/usr/lib/$mtriple/musl-gcc.specs" > "$STAGE/musl-gcc.specs"
	# libgcc and libc as one group, as -static links them, also for the
	# link tests of configure scripts (no -static there): ARM EABI's libgcc
	# calls raise() from its division-by-zero handler, pulled in by the
	# second libgcc of the dynamic sequence, after libc.
	printf '*link_gcc_c_sequence:\n--start-group %%G %%L --end-group\n\n' >> "$STAGE/musl-gcc.specs"
}

# musl $MUSL_VERSION from bookworm's source into the sysroot, laid out as
# Debian's musl-dev (headers in /usr/include/MTRIPLE, libraries and
# musl-gcc.specs in /usr/lib/MTRIPLE), static only.  musl's configure turns
# unwind tables off, as in Debian's packages.
make_musl() {	# MTRIPLE GTRIPLE
	local src b=$STAGE/build/musl sys=$STAGE/sysroot
	src=$(fetch_source musl bookworm "$MUSL_VERSION")
	mkdir -p "$b"
	(cd "$b" &&
		CC="$2-gcc-12" CROSS_COMPILE="$2-" "$src/configure" --target="$2" \
			--prefix=/usr --includedir="/usr/include/$1" --libdir="/usr/lib/$1" \
			--syslibdir=/lib --disable-shared >&2 &&
		make -s -j"$JOBS" >&2 &&
		make -s install DESTDIR="$sys" >&2)
	sh "$src/tools/musl-gcc.specs.sh" "/usr/include/$1" "/usr/lib/$1" \
		"/lib/ld-musl-${1%%-*}.so.1" > "$sys/usr/lib/$1/musl-gcc.specs"
}

build_zlib() {
	local src b=$STAGE/build/zlib
	src=$(fetch_source zlib bookworm "$ZLIB_VERSION")
	cp -r "$src" "$b"
	(cd "$b" &&
		CC="$CC" CFLAGS="-Os -ffunction-sections -fdata-sections" ./configure --static \
			--prefix=/ >&2 &&
		make -s -j"$JOBS" libz.a >&2)
	cp "$b/libz.a" "$STAGE/lib/"
	cp "$b/zlib.h" "$b/zconf.h" "$STAGE/include/"
}

# libelf only: musl lacks argp, fts and obstack, which only the tools need,
# so configure's checks for them are answered from the cache.
build_libelf() {
	local src b=$STAGE/build/elfutils
	src=$(fetch_source elfutils bookworm "$ELFUTILS_VERSION")
	mkdir -p "$b"
	(cd "$b" &&
		ac_cv_search_argp_parse="none required" ac_cv_search_fts_close="none required" \
		ac_cv_search__obstack_free="none required" ac_cv_fts_h=yes \
		CC="$CC" CFLAGS="-Os -ffunction-sections -fdata-sections -Wno-error" \
		CPPFLAGS="-I$STAGE/include" LDFLAGS="-L$STAGE/lib" \
		"$src/configure" --host="$GNU_TRIPLE" --disable-debuginfod \
			--disable-libdebuginfod --without-bzlib --without-lzma --without-zstd \
			--disable-nls --disable-symbol-versioning \
			--disable-textrelcheck >&2 &&
		make -s -C libelf -j"$JOBS" libelf.a >&2)
	cp "$b/libelf/libelf.a" "$STAGE/lib/"
	cp "$src/libelf/libelf.h" "$src/libelf/gelf.h" "$src/libelf/nlist.h" "$STAGE/include/"
	mkdir -p "$STAGE/include/elfutils"
	cp "$b/version.h" "$src/libelf/elf-knowledge.h" "$STAGE/include/elfutils/"
}

# --- libdw (issue 13: CFI unwinding tables) ---
# libdw reads .eh_frame/.debug_frame for the unwinding tables (src/cfi.c).
# Built from the same elfutils source as libelf, in libelf's configured tree
# (build_libelf runs first).  Its libdw.a already merges libebl, the
# architecture backends (which give the ABI's initial CFI rules) and libcpu;
# libdwfl (argp, fts) is not needed and not built.  libcpu's generated
# tables need m4 (toolchain/deps.sh).
build_libdw() {
	local src b=$STAGE/build/elfutils d
	src=$SRC/elfutils-$ELFUTILS_VERSION
	for d in libebl/libebl.a backends/libebl_backends.a libcpu/libcpu.a \
		libdwelf/libdwelf.a; do
		make -s -C "$b/${d%/*}" -j"$JOBS" "${d#*/}" >&2
	done
	# libdw.a's LIBADD without the unbuilt libdwfl.
	make -s -C "$b/libdw" -j"$JOBS" libdwfl_objects= libdw.a >&2
	cp "$b/libdw/libdw.a" "$STAGE/lib/"
	mkdir -p "$STAGE/include/elfutils"
	cp "$src/libdw/libdw.h" "$src/libdw/known-dwarf.h" "$STAGE/include/elfutils/"
	cp "$src/libdw/dwarf.h" "$STAGE/include/"
}
# --- end libdw ---

build_musl_target() {
	local arch mtriple
	GNU_TRIPLE=$(board_var TRIPLE)
	arch=$(board_var DEB_ARCH)
	mtriple=${GNU_TRIPLE/-gnu/-musl}
	command -v "$GNU_TRIPLE-gcc-12" >/dev/null ||
		{ log "$GNU_TRIPLE-gcc-12 missing (toolchain/deps.sh)"; exit 1; }
	log "musl $MUSL_VERSION sysroot ($arch)"
	make_sysroot "$arch" "$mtriple" "$GNU_TRIPLE"
	CC="$GNU_TRIPLE-gcc-12 -specs $STAGE/musl-gcc.specs"
	log "zlib $ZLIB_VERSION"
	build_zlib
	log "libelf $ELFUTILS_VERSION"
	build_libelf
	log "libdw $ELFUTILS_VERSION"
	build_libdw
	log "libbpf $LIBBPF_VERSION from $LIBBPF_SUITE"
	build_libbpf "$CC" "-Os -ffunction-sections -fdata-sections -I$STAGE/include"
	# The specs file names the sysroot: point it at the final place.
	sed -i "s@$STAGE/@$OUT/@g" "$STAGE/musl-gcc.specs"
}

start=$(date +%s)
rm -rf "$STAGE"
mkdir -p "$STAGE/lib" "$STAGE/include" "$STAGE/build"
LIBBPF_PICK=$(pick_libbpf)
read -r LIBBPF_VERSION LIBBPF_DEBIAN_VERSION LIBBPF_SUITE <<< "$LIBBPF_PICK"
# What this toolchain's libbpf is: `offcpu --version` prints it (Makefile).
echo "$LIBBPF_PICK" > "$STAGE/libbpf.version"
if [ "$TARGET" = host ]; then
	build_host
else
	build_musl_target
fi
rm -rf "$STAGE/build"
echo "$STAMP" > "$STAGE/.done"
rm -rf "$OUT.old"
[ -e "$OUT" ] && mv "$OUT" "$OUT.old"
mv "$STAGE" "$OUT"
rm -rf "$OUT.old"
log "done in $(( $(date +%s) - start )) s"
