# Pinned third-party versions (Debian source packages).  Reported by
# `offcpu --version`; toolchain/build.sh reads the same values.
MUSL_VERSION     := 1.2.3
ZLIB_VERSION     := 1.2.13
ELFUTILS_VERSION := 0.188
# libbpf 1.6+ maps the kernel's BTF (/sys/kernel/btf/vmlinux, mmap-able
# since Linux 6.16) instead of reading two copies of it into the heap: the
# peak RSS of a recording drops from ~12 MiB to ~1 MiB.  Only sid has it.
LIBBPF_VERSION   := 1.7.0
LIBBPF_SUITE     := sid
LIB_VERSIONS     := musl $(MUSL_VERSION), zlib $(ZLIB_VERSION), libelf $(ELFUTILS_VERSION), libdw $(ELFUTILS_VERSION), libbpf $(LIBBPF_VERSION)
