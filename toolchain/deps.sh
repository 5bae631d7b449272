#!/bin/bash
# Host packages the build, the tests and the QEMU matrix need (Debian bookworm,
# root).  Idempotent: installs only what is missing.
set -euo pipefail

PKGS=(
	make gcc gcc-12 clang llvm libelf-dev zlib1g-dev pkg-config file xz-utils cpio
	dpkg-dev ca-certificates m4
	gcc-12-aarch64-linux-gnu gcc-12-s390x-linux-gnu gcc-12-riscv64-linux-gnu gcc-12-arm-linux-gnueabihf
	binutils-aarch64-linux-gnu binutils-s390x-linux-gnu binutils-riscv64-linux-gnu binutils-arm-linux-gnueabihf
	qemu-user-static qemu-system-x86 qemu-system-arm qemu-system-misc
	linux-perf dwarves python3 librsvg2-bin
	flex bison	# qemu-tests/kbuild.sh: kernels built from Debian's source
	g++ libc6-dbg	# t_parity: a C++ program built as users build it; libc debug symbols
	protobuf-c-compiler golang-go	# report --pprof: protoc-c generates the encoder; t_pprof reads it with go tool pprof
	libc6-arm64-cross libc6-s390x-cross libc6-dev-arm64-cross libc6-dev-s390x-cross
	libc6-riscv64-cross libc6-dev-riscv64-cross libc6-armhf-cross libc6-dev-armhf-cross
)

missing=()
for p in "${PKGS[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	echo "deps: installing ${missing[*]}" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get -q update >&2
	apt-get -q install -y --no-install-recommends "${missing[@]}" >&2
fi
