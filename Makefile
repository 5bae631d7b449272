# offcpu — the only entry point.  `make help` lists the targets.
#
# Everything downloaded or built outside the repository lives in $(CACHE), so
# repeated runs (and CI) reuse it.  Per-target facts live in board/<target>.mk;
# this file holds no target-specific logic.

TARGET  ?= x86_64
CACHE   ?= $(or $(OFFCPU_CACHE),$(HOME)/.cache/offcpu)
# The scripts (toolchain/, btf/, qemu-tests/) read the cache from here.
export OFFCPU_CACHE := $(CACHE)
BOARDS  := $(patsubst board/%.mk,%,$(wildcard board/*.mk))
JOBS    ?= $(shell nproc)

include board/$(TARGET).mk

VERSION := 0.1.0
TC      := $(CACHE)/toolchain/$(TARGET)
HOSTTC  := $(CACHE)/toolchain/host
B       := build/$(TARGET)
BPFB    := build/bpf/$(TARGET)

# Pinned third-party versions, reported by `offcpu --version`.
include toolchain/versions.mk
include toolchain/symlibs.mk
# Symbol libraries (demangler, liblzma), stamped apart from the toolchain.
SYMTC     := $(TC)-sym
HOSTSYMTC := $(HOSTTC)-sym

WARN    := -Wall -Wextra -Werror
COMMON_CFLAGS := -std=gnu11 $(WARN) -D_GNU_SOURCE -DOFFCPU_VERSION='"$(VERSION)"' \
	-DOFFCPU_TARGET='"$(TARGET)"' -DOFFCPU_DWARF_DEFAULT=$(DWARF_DEFAULT) \
	-Isrc -Ibpf -Ibuild/gen/$(TARGET)

# The static product: musl, -Os, sections collected and stripped.
CC      := $(TRIPLE)-gcc-12 -specs $(TC)/musl-gcc.specs
CFLAGS  := $(COMMON_CFLAGS) -DOFFCPU_LIBS='"$(LIB_VERSIONS)"' -Os -ffunction-sections -fdata-sections -I$(TC)/include \
	-I$(SYMTC)/include
LDFLAGS := -static -Wl,--gc-sections -s -L$(TC)/lib -L$(SYMTC)/lib
LDLIBS  := -lbpf -ldw -lelf -liberty -llzma -lz

CLANG   ?= clang
BPF_CFLAGS := -g -O2 -target $(BPF_TARGET) -D__TARGET_ARCH_$(BPF_ARCH) \
	-I$(HOSTTC)/include -Ibpf $(WARN) -Wno-unused-function

SRCS    := $(wildcard src/*.c)
HDRS    := $(wildcard src/*.h bpf/*.h)
BPF_SRCS:= $(wildcard bpf/*.bpf.c)
BPF_OBJ := $(BPFB)/offcpu.bpf.o
BPF_TP_OBJ := $(BPFB)/offcpu_tp.bpf.o
BTF_ARCHIVE := build/gen/$(TARGET)/btf_archive.bin

.PHONY: FORCE workloads host-workloads all help setup toolchain host asan all-targets test unit fuzz bench btf \
	qemu-test demo stress mutants clean distclean

all: $(B)/offcpu

help:
	@echo "make setup              install host packages and build the toolchain (idempotent)"
	@echo "make [TARGET=t]         build build/<t>/offcpu (static, musl); boards: $(BOARDS)"
	@echo "make all-targets        build every board"
	@echo "make host               glibc build for development (build/host/offcpu)"
	@echo "make asan               ASan+UBSan build (build/asan/offcpu)"
	@echo "make demo               profile this machine 10 s, write perf.data, show top stacks"
	@echo "make test               every test: unit, host integration, static builds, QEMU matrix"
	@echo "make qemu-test [CELLS=arm64-6.12,...]   the QEMU kernel matrix alone"
	@echo "make btf                regenerate the embedded minimal BTF (btf/)"
	@echo "make bench              overhead benchmarks (prints a table)"
	@echo "make fuzz               run each fuzz harness for 60 s (FUZZ_SECONDS)"
	@echo "make stress             fork storm and overload for 60 s each"
	@echo "make mutants            break-it cases: each small bug must turn its tests red"
	@echo "Options: TARGET=$(TARGET) CACHE=$(CACHE) BTF_VMLINUX=path/to/vmlinux"

setup:
	toolchain/deps.sh
	toolchain/build.sh host
	toolchain/symlibs.sh host
	@for t in $(BOARDS); do toolchain/build.sh $$t && toolchain/symlibs.sh $$t || exit 1; done
	tests/fetch-perf510.sh

toolchain: $(TC)/.done $(HOSTTC)/.done $(SYMTC)/.done $(HOSTSYMTC)/.done
$(TC)/.done $(HOSTTC)/.done: toolchain/build.sh toolchain/versions.mk
	toolchain/build.sh $(patsubst $(CACHE)/toolchain/%/.done,%,$@)
# touch: a current stamp older than a checkout of the script is not rebuilt.
$(SYMTC)/.done: toolchain/symlibs.sh toolchain/symlibs.mk | $(TC)/.done
	toolchain/symlibs.sh $(TARGET) && touch $@
$(HOSTSYMTC)/.done: toolchain/symlibs.sh toolchain/symlibs.mk
	toolchain/symlibs.sh host && touch $@

# --- BPF object, compiled per board (endianness and __TARGET_ARCH differ) ---
$(BPF_OBJ): $(BPF_SRCS) $(HDRS) $(HOSTTC)/.done | $(BPFB)
	$(CLANG) $(BPF_CFLAGS) -c bpf/offcpu.bpf.c -o $@
# The BTF-free variant: a second object without CO-RE relocations.
$(BPF_TP_OBJ): $(BPF_SRCS) $(HDRS) $(HOSTTC)/.done | $(BPFB)
	$(CLANG) $(BPF_CFLAGS) -c bpf/offcpu_tp.bpf.c -o $@

$(BPFB) $(B) build/gen/$(TARGET):
	mkdir -p $@

# --- embedded minimal BTF archive (btf/) ---
# A vendor kernel (BTF_VMLINUX=path) is remembered so changing it rebuilds.
BTF_STAMP := build/gen/$(TARGET)/btf_vmlinux
$(BTF_STAMP): FORCE | build/gen/$(TARGET)
	@echo "$(abspath $(BTF_VMLINUX)) $(BTF_RELEASE)" | cmp -s - $@ || \
		echo "$(abspath $(BTF_VMLINUX)) $(BTF_RELEASE)" > $@
FORCE:

$(BTF_ARCHIVE): $(wildcard btf/*/*.btf btf/*.sh btf/*.py) btf/manifest.tsv $(BPF_OBJ) $(BTF_STAMP) $(BTF_VMLINUX) | build/gen/$(TARGET)
	BTF_RELEASE=$(BTF_RELEASE) btf/archive.sh $(TARGET) $(BPF_OBJ) $@ $(BTF_VMLINUX)

# --- the tool ---
$(B)/embed.o: src/embed.S $(BPF_OBJ) $(BPF_TP_OBJ) $(BTF_ARCHIVE) | $(B)
	$(CC) -c -DBPF_OBJ='"$(BPF_OBJ)"' -DBPF_TP_OBJ='"$(BPF_TP_OBJ)"' -DBTF_ARCHIVE='"$(BTF_ARCHIVE)"' src/embed.S -o $@

$(B)/%.o: src/%.c $(HDRS) $(TC)/.done $(SYMTC)/.done | $(B)
	$(CC) $(CFLAGS) -c $< -o $@

$(B)/offcpu: $(patsubst src/%.c,$(B)/%.o,$(SRCS)) $(B)/embed.o
	$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@
	@echo "$(TARGET): $@ $$(stat -c %s $@) bytes"

# Test workloads: static, symbols kept, frame pointers (back chain on s390x).
workloads: $(B)/blocker $(B)/seccomp_run $(B)/distro
$(B)/blocker: tests/workload/blocker.c $(TC)/.done | $(B)
	$(CC) -std=gnu11 $(WARN) -static -O2 -g $(WORKLOAD_CFLAGS) -pthread $< -o $@
# Programs of the host, as a user builds them (Debian's compilers, dynamic):
# the report must name their frames as perf does (t_parity).
host-workloads: build/host/cxx_app
build/host/cxx_app: tests/workload/cxx_app.cc
	@mkdir -p $(@D)
	g++ -std=c++17 -Wall -Wextra -Werror -O2 -g -fno-omit-frame-pointer $< -o $@
# A program built like a distribution's: Debian's glibc (cross packages),
# dynamic, -O2, no frame-pointer or back-chain flags (CFI unwinding, issue 13).
$(B)/distro: tests/workload/distro.c | $(B)
	$(TRIPLE)-gcc-12 -std=gnu11 $(WARN) -O2 -g -pthread $< -o $@
# Runs a command as if the kernel had no bpf() or no sched_switch (t_seccomp).
$(B)/seccomp_run: tests/seccomp_run.c $(TC)/.done | $(B)
	$(CC) -std=gnu11 $(WARN) -static -O2 $< -o $@

all-targets:
	@for t in $(BOARDS); do $(MAKE) --no-print-directory TARGET=$$t || exit 1; done
	@for t in $(BOARDS); do printf '%-8s %8d bytes\n' $$t $$(stat -c %s build/$$t/offcpu); done

# --- glibc development and sanitizer builds of the same sources ---
HOST_LIBS   := glibc, Debian zlib, libelf and libdw $(ELFUTILS_VERSION), libbpf $(LIBBPF_VERSION), libiberty $(LIBIBERTY_VERSION), liblzma $(XZ_VERSION)
HOST_CFLAGS := $(COMMON_CFLAGS) -DOFFCPU_LIBS='"$(HOST_LIBS)"' -g -O1 -I$(HOSTTC)/include \
	-I$(HOSTSYMTC)/include
host: build/host/offcpu
asan: build/asan/offcpu
build/host/offcpu: $(SRCS) $(HDRS) $(B)/embed.o $(HOSTTC)/.done $(HOSTSYMTC)/.done
	@mkdir -p $(@D)
	gcc $(HOST_CFLAGS) $(SRCS) $(B)/embed.o -L$(HOSTTC)/lib -L$(HOSTSYMTC)/lib $(LDLIBS) -o $@
build/asan/offcpu: $(SRCS) $(HDRS) $(B)/embed.o $(HOSTTC)/.done $(HOSTSYMTC)/.done
	@mkdir -p $(@D)
	gcc $(HOST_CFLAGS) -fsanitize=address,undefined -fno-sanitize-recover=all \
		-fno-omit-frame-pointer $(SRCS) $(B)/embed.o -L$(HOSTTC)/lib -L$(HOSTSYMTC)/lib $(LDLIBS) -o $@

# --- tests ---
# Unit tests: build/unit/test_X from tests/unit/test_X.c and the sources in
# UNIT_test_X (their libraries in UNIT_LIBS_test_X), host gcc, ASan+UBSan.
UNIT_TESTS := test_units test_perf_data test_symbolize test_proc test_tracefs test_cfi test_unwind
UNIT_test_units := src/btf_archive.c src/cli.c
UNIT_LIBS_test_units := -lz
# perf.data writer/reader alone (no libbpf).
UNIT_test_perf_data := src/perf_data.c src/perf_data_reader.c
# Symbolizer alone (libelf): maps over time, ELF, kallsyms, hostile files.
UNIT_test_symbolize := src/symbolize.c src/build_id.c src/proc_sync.c src/hashset.c \
	src/debuginfo.c src/demangle.c
UNIT_LIBS_test_symbolize := -L$(HOSTSYMTC)/lib -lelf -liberty -llzma -lz
# /proc parsers alone: real maps and status of the test itself, bad lines.
UNIT_test_proc := src/proc_sync.c
UNIT_LIBS_test_proc := -pthread
# tracefs format parser alone: real formats of two kernels, every prefix, bad files.
UNIT_test_tracefs := src/tracefs.c
# CFI tables (libdw from the toolchain): the real libc.so.6 of each board; its
# `unwind PID` mode is the user-space reference of the unwinder (t_cfi).
UNIT_test_cfi := src/cfi.c $(UNIT_test_symbolize)
UNIT_LIBS_test_cfi := -L$(HOSTTC)/lib -ldw $(UNIT_LIBS_test_symbolize)
# The user-space unwinder on synthetic stack copies (and u32_map_del).
UNIT_test_unwind := src/unwind.c src/cfi.c src/hashset.c src/proc_sync.c
UNIT_LIBS_test_unwind := -L$(HOSTTC)/lib -ldw -L$(HOSTSYMTC)/lib -lelf -lz
UNIT_CFLAGS := $(COMMON_CFLAGS) -I$(HOSTTC)/include -I$(HOSTSYMTC)/include -g -O0 -fno-omit-frame-pointer
SANITIZE := -fsanitize=address,undefined -fno-sanitize-recover=all
unit: $(patsubst %,build/unit/%,$(UNIT_TESTS)) build/unit/gen_perf_data build/unit/btf_check
.SECONDEXPANSION:
build/unit/test_%: tests/unit/test_%.c $$(UNIT_test_$$*) $(HDRS) $(wildcard tests/unit/*.h)
	@mkdir -p $(@D)
	gcc $(UNIT_CFLAGS) $(SANITIZE) $< $(UNIT_test_$*) $(UNIT_LIBS_test_$*) -o $@
# Unsanitized: its files feed real perf (t_perf_data_perf).
build/unit/gen_perf_data: tests/unit/gen_perf_data.c src/perf_data.c $(HDRS) $(wildcard tests/unit/*.h)
	@mkdir -p $(@D)
	gcc $(UNIT_CFLAGS) $< src/perf_data.c -o $@
# The minimal-BTF checker (t_btf) uses libbpf's internal CO-RE functions, as
# bpftool does, so it needs the libbpf source the host toolchain was built from.
LIBBPF_SRC := $(CACHE)/src/libbpf-$(LIBBPF_VERSION)
build/unit/btf_check: tests/unit/btf_check.c src/btf_archive.c src/btf_archive.h $(HOSTTC)/.done
	@mkdir -p $(@D)
	gcc -std=gnu11 $(WARN) -g -O1 $(SANITIZE) -I$(HOSTTC)/include -I$(LIBBPF_SRC)/src \
		-I$(LIBBPF_SRC)/include -I$(LIBBPF_SRC)/include/uapi -Isrc $< src/btf_archive.c \
		$(HOSTTC)/lib/libbpf.a -lelf -lz -o $@

# Scripts read board and version facts from here: make -s print-DEB_ARCH TARGET=arm64
print-%:
	@echo '$($*)'

test:
	@for t in $(BOARDS); do $(MAKE) --no-print-directory -s TARGET=$$t all workloads || exit 1; done
	@$(MAKE) --no-print-directory -s asan unit host-workloads
	tests/run.sh

qemu-test:
	qemu-tests/run.sh $(CELLS)

# The main job: profile this machine for 10 s, then show the top off-CPU
# stacks.  An idle machine has little that both blocks
# and wakes up within 10 s (a block is recorded when it ends), so the blocker
# workload runs meanwhile: its stacks show what a busy program looks like.
demo: all $(B)/blocker
	$(B)/blocker -t 9 >/dev/null & $(B)/offcpu -d 10 -o perf.data; rc=$$?; wait; exit $$rc
	$(B)/offcpu report -i perf.data -n 10

btf:
	btf/generate.sh

bench: all
	bench/run.sh

fuzz:
	tests/fuzz/run.sh

# Each break-it case of tests/mutants.sh on a copy of the tree (slow).
mutants: all workloads asan
	tests/mutants.sh

# The stress checks of make test at full length.
stress: all
	STRESS_SECONDS=60 tests/run.sh stress

clean:
	rm -rf build

distclean: clean
	rm -rf $(CACHE)
