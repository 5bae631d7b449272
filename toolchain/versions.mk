# Pinned third-party versions (Debian source packages).  Reported by
# `offcpu --version`; toolchain/build.sh reads the same values.
MUSL_VERSION     := 1.2.3
ZLIB_VERSION     := 1.2.13
ELFUTILS_VERSION := 0.188
# libbpf 1.6+ maps the kernel's BTF (/sys/kernel/btf/vmlinux, mmap-able
# since Linux 6.16) instead of reading two copies of it into the heap: the
# peak RSS of a recording drops from ~12 MiB to ~1 MiB.  1.7 came first to
# sid, and sid moves on: a minimum, not a version.  toolchain/build.sh takes
# the newest upload >= LIBBPF_MIN_VERSION of LIBBPF_SUITES when it builds a
# toolchain and writes it to <toolchain>/libbpf.version ("1.7.0 1.7.0-1 sid");
# the Makefile reads it from there.
LIBBPF_MIN_VERSION := 1.7
LIBBPF_SUITES      := sid trixie-backports
# libbpf's is the built toolchain's: the Makefile adds it.
LIB_VERSIONS     := musl $(MUSL_VERSION), zlib $(ZLIB_VERSION), libelf $(ELFUTILS_VERSION), libdw $(ELFUTILS_VERSION)
