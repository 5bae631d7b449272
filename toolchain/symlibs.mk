# Symbol libraries of `offcpu report` (issue 19), built by toolchain/symlibs.sh
# beside the toolchain and stamped on their own: libiberty's demangler (C++,
# Rust, as perf uses) and liblzma for MiniDebugInfo (.gnu_debugdata).
LIBIBERTY_VERSION := 20230104
XZ_VERSION        := 5.4.1
LIB_VERSIONS      := $(LIB_VERSIONS), libiberty $(LIBIBERTY_VERSION), liblzma $(XZ_VERSION)
