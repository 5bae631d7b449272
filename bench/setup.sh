#!/bin/bash
# Prepares the benchmark's peers, once, in the cache: a debootstrap'd Debian
# trixie root (its libbpf-tools need trixie's libc) holding libbpf-tools'
# offcputime, and a perf built there from trixie's linux-source-6.12 with BPF
# skeletons (Debian's linux-perf has none, so `perf record --off-cpu` fails
# with it), installed as /usr/local/bin/perf in that root.  Idempotent: each
# step leaves a stamp file in the root and is skipped once it is there.
# Prints the root's path on stdout; everything else goes to stderr.
set -euo pipefail
CACHE=${OFFCPU_CACHE:-$HOME/.cache/offcpu}
ROOTFS=$CACHE/bench/trixie-root
LOG=$CACHE/bench/perf-build.log
KSRC=linux-source-6.12	# the package, its tarball and its directory
PERF=/usr/local/bin/perf	# inside the root

die() { echo "bench/setup.sh: $*" >&2; exit 1; }

mirror() {
	awk '/^URIs:/ && $2 !~ /security/ { print $2; exit }' /etc/apt/sources.list.d/debian.sources
}

# Nothing may be mounted below the root while it is removed.
mounted_below() {
	findmnt -rn -o TARGET | awk -v r="$ROOTFS/" 'index($0, r) == 1 { f = 1 } END { exit !f }'
}

# in_root CMD...: run in the root with a clean environment (no MAKEFLAGS from
# `make bench`, no host PATH).
in_root() {
	chroot "$ROOTFS" /usr/bin/env -i HOME=/root LC_ALL=C.UTF-8 \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		DEBIAN_FRONTEND=noninteractive "$@"
}

[ "$(id -u)" = 0 ] || die "needs root (debootstrap, chroot)"

if [ ! -e "$ROOTFS/.done" ]; then
	[ -r /etc/apt/sources.list.d/debian.sources ] ||
		die "no /etc/apt/sources.list.d/debian.sources to take the mirror from"
	MIRROR=$(mirror)
	[ -n "$MIRROR" ] || die "no mirror URI in /etc/apt/sources.list.d/debian.sources"
	command -v debootstrap >/dev/null ||
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q debootstrap >&2 ||
		die "cannot install debootstrap"
	! mounted_below || die "something is mounted below $ROOTFS; unmount it first"
	rm -rf --one-file-system "$ROOTFS"
	mkdir -p "$ROOTFS"
	echo "bench/setup.sh: debootstrap of trixie into $ROOTFS" >&2
	debootstrap --variant=minbase --include=libbpf-tools trixie "$ROOTFS" "$MIRROR" >&2 ||
		die "debootstrap failed"
	touch "$ROOTFS/.done"
fi

if [ ! -e "$ROOTFS/.perf-done" ]; then
	# /proc, /sys and /dev for apt's scripts and the build, unmounted on exit
	# (only those mounted here: bench/run.sh may hold its own).
	MOUNTED=()
	cleanup() {
		local i
		for (( i = ${#MOUNTED[@]} - 1; i >= 0; i-- )); do
			umount "${MOUNTED[i]}" || echo "bench/setup.sh: cannot unmount ${MOUNTED[i]}" >&2
		done
	}
	trap cleanup EXIT
	for m in proc sys dev; do
		if ! mountpoint -q "$ROOTFS/$m"; then
			mount --bind "/$m" "$ROOTFS/$m" || die "cannot bind /$m into $ROOTFS"
			MOUNTED+=("$ROOTFS/$m")
		fi
	done
	[ -e "$ROOTFS/etc/resolv.conf" ] || cp /etc/resolv.conf "$ROOTFS/etc/resolv.conf"

	if [ ! -e "$ROOTFS/.perf-deps-done" ]; then
		echo "bench/setup.sh: installing perf's build dependencies and $KSRC in the root" >&2
		# debootstrap wrote sources.list for trixie on the same mirror.
		grep -qs trixie "$ROOTFS/etc/apt/sources.list" ||
			die "$ROOTFS/etc/apt/sources.list names no trixie suite"
		in_root apt-get update -q >&2 || die "apt-get update in the root failed"
		# bpftool: to read perf's BPF maps while it runs (bench/run.sh).
		in_root apt-get install -y -q --no-install-recommends \
			build-essential clang llvm bpftool pkg-config flex bison xz-utils python3 \
			libelf-dev zlib1g-dev libzstd-dev libcap-dev libtraceevent-dev \
			"$KSRC" >&2 || die "apt-get install in the root failed"
		touch "$ROOTFS/.perf-deps-done"
	fi

	echo "bench/setup.sh: building tools/perf with BUILD_BPF_SKEL=1 in the root (a few minutes; log: $LOG)" >&2
	[ -r "$ROOTFS/usr/src/$KSRC.tar.xz" ] || die "no /usr/src/$KSRC.tar.xz in the root"
	rm -rf --one-file-system "$ROOTFS/usr/src/$KSRC"
	tar -C "$ROOTFS/usr/src" -xJf "$ROOTFS/usr/src/$KSRC.tar.xz" || die "cannot unpack $KSRC.tar.xz"
	t0=$(date +%s)
	# Only what --off-cpu needs: libbpf (bundled, static), the skeletons
	# (clang, the bundled bootstrap bpftool), libelf, zlib and libtraceevent;
	# every optional library off.
	if ! in_root make -C "/usr/src/$KSRC/tools/perf" -j"$(nproc)" \
		BUILD_BPF_SKEL=1 NO_LIBPYTHON=1 NO_LIBPERL=1 NO_GTK2=1 NO_JVMTI=1 \
		NO_LIBBABELTRACE=1 NO_LIBUNWIND=1 NO_LIBDW_DWARF_UNWIND=1 NO_DWARF=1 \
		NO_SLANG=1 NO_LIBNUMA=1 NO_LIBCRYPTO=1 NO_LIBAUDIT=1 NO_LIBPFM4=1 \
		NO_LIBDEBUGINFOD=1 NO_CAPSTONE=1 NO_LZMA=1 NO_SDT=1 NO_JEVENTS=1 \
		NO_PERF_READ_VDSO32=1 NO_PERF_READ_VDSOX32=1 NO_SHELLCHECK=1 \
		>"$LOG" 2>&1; then
		tail -n 30 "$LOG" >&2
		die "building tools/perf failed (full log: $LOG)"
	fi
	install -m 0755 "$ROOTFS/usr/src/$KSRC/tools/perf/perf" "$ROOTFS$PERF"
	in_root "$PERF" version --build-options | grep -Eq 'bpf_skeletons: +\[ on' ||
		die "$PERF was built without BPF skeletons (log: $LOG)"
	rm -rf --one-file-system "$ROOTFS/usr/src/$KSRC"
	echo "bench/setup.sh: perf built in $(( $(date +%s) - t0 )) s" >&2
	touch "$ROOTFS/.perf-done"
fi
echo "$ROOTFS"
