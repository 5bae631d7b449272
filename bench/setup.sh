#!/bin/bash
# Prepares the benchmark's peers, once, in the cache: a debootstrap'd Debian
# trixie root (its libbpf-tools need trixie's libc) holding libbpf-tools'
# offcputime.  Idempotent.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
CACHE=${OFFCPU_CACHE:-$HOME/.cache/offcpu}
ROOTFS=$CACHE/bench/trixie-root

mirror() {
	awk '/^URIs:/ && $2 !~ /security/ { print $2; exit }' /etc/apt/sources.list.d/debian.sources
}

command -v debootstrap >/dev/null ||
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q debootstrap >&2
if [ ! -e "$ROOTFS/.done" ]; then
	rm -rf "$ROOTFS"
	mkdir -p "$ROOTFS"
	debootstrap --variant=minbase --include=libbpf-tools trixie "$ROOTFS" "$(mirror)" >&2
	touch "$ROOTFS/.done"
fi
echo "$ROOTFS"
