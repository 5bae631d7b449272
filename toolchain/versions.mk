# Pinned third-party versions (Debian source packages).  Reported by
# `offcpu --version`; toolchain/build.sh reads the same values.
MUSL_VERSION     := 1.2.3
ZLIB_VERSION     := 1.2.13
ELFUTILS_VERSION := 0.188
LIBBPF_VERSION   := 1.5.0
LIB_VERSIONS     := musl $(MUSL_VERSION), zlib $(ZLIB_VERSION), libelf $(ELFUTILS_VERSION), libbpf $(LIBBPF_VERSION)
