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

WARN    := -Wall -Wextra -Werror
COMMON_CFLAGS := -std=gnu11 $(WARN) -D_GNU_SOURCE -DOFFCPU_VERSION='"$(VERSION)"' \
	-DOFFCPU_TARGET='"$(TARGET)"' \
	-Isrc -Ibpf -Ibuild/gen/$(TARGET)

# The static product: musl, -Os, sections collected and stripped.
CC      := $(TRIPLE)-gcc-12 -specs $(TC)/musl-gcc.specs
CFLAGS  := $(COMMON_CFLAGS) -DOFFCPU_LIBS='"$(LIB_VERSIONS)"' -Os -ffunction-sections -fdata-sections -I$(TC)/include
LDFLAGS := -static -Wl,--gc-sections -s -L$(TC)/lib
LDLIBS  := -lbpf -lelf -lz

CLANG   ?= clang
BPF_CFLAGS := -g -O2 -target $(BPF_TARGET) -D__TARGET_ARCH_$(BPF_ARCH) \
	-I$(HOSTTC)/include -Ibpf $(WARN) -Wno-unused-function

SRCS    := $(wildcard src/*.c)
HDRS    := $(wildcard src/*.h bpf/*.h)
BPF_SRCS:= $(wildcard bpf/*.bpf.c)
BPF_OBJ := $(BPFB)/offcpu.bpf.o
BTF_ARCHIVE := build/gen/$(TARGET)/btf_archive.bin

.PHONY: FORCE workloads all help setup toolchain host asan all-targets test unit fuzz bench btf \
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
	@for t in $(BOARDS); do toolchain/build.sh $$t || exit 1; done
	tests/fetch-perf510.sh

toolchain: $(TC)/.done $(HOSTTC)/.done
$(TC)/.done $(HOSTTC)/.done: toolchain/build.sh toolchain/versions.mk
	toolchain/build.sh $(patsubst $(CACHE)/toolchain/%/.done,%,$@)

# --- BPF object, compiled per board (endianness and __TARGET_ARCH differ) ---
$(BPF_OBJ): $(BPF_SRCS) $(HDRS) $(HOSTTC)/.done | $(BPFB)
	$(CLANG) $(BPF_CFLAGS) -c bpf/offcpu.bpf.c -o $@

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
$(B)/embed.o: src/embed.S $(BPF_OBJ) $(BTF_ARCHIVE) | $(B)
	$(CC) -c -DBPF_OBJ='"$(BPF_OBJ)"' -DBTF_ARCHIVE='"$(BTF_ARCHIVE)"' src/embed.S -o $@

$(B)/%.o: src/%.c $(HDRS) $(TC)/.done | $(B)
	$(CC) $(CFLAGS) -c $< -o $@

$(B)/offcpu: $(patsubst src/%.c,$(B)/%.o,$(SRCS)) $(B)/embed.o
	$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@
	@echo "$(TARGET): $@ $$(stat -c %s $@) bytes"

# Test workloads: static, symbols kept, frame pointers (back chain on s390x).
workloads: $(B)/blocker $(B)/seccomp_run
$(B)/blocker: tests/workload/blocker.c $(TC)/.done | $(B)
	$(CC) -std=gnu11 $(WARN) -static -O2 -g $(WORKLOAD_CFLAGS) -pthread $< -o $@
# Runs a command as if the kernel had no bpf() or no sched_switch (t_seccomp).
$(B)/seccomp_run: tests/seccomp_run.c $(TC)/.done | $(B)
	$(CC) -std=gnu11 $(WARN) -static -O2 $< -o $@

all-targets:
	@for t in $(BOARDS); do $(MAKE) --no-print-directory TARGET=$$t || exit 1; done
	@for t in $(BOARDS); do printf '%-8s %8d bytes\n' $$t $$(stat -c %s build/$$t/offcpu); done

# --- glibc development and sanitizer builds of the same sources ---
HOST_LIBS   := glibc, Debian zlib and libelf, libbpf $(LIBBPF_VERSION)
HOST_CFLAGS := $(COMMON_CFLAGS) -DOFFCPU_LIBS='"$(HOST_LIBS)"' -g -O1 -I$(HOSTTC)/include
host: build/host/offcpu
asan: build/asan/offcpu
build/host/offcpu: $(SRCS) $(HDRS) $(B)/embed.o $(HOSTTC)/.done
	@mkdir -p $(@D)
	gcc $(HOST_CFLAGS) $(SRCS) $(B)/embed.o -L$(HOSTTC)/lib $(LDLIBS) -o $@
build/asan/offcpu: $(SRCS) $(HDRS) $(B)/embed.o $(HOSTTC)/.done
	@mkdir -p $(@D)
	gcc $(HOST_CFLAGS) -fsanitize=address,undefined -fno-sanitize-recover=all \
		-fno-omit-frame-pointer $(SRCS) $(B)/embed.o -L$(HOSTTC)/lib $(LDLIBS) -o $@

# --- tests ---
UNIT_SRCS := tests/unit/test_units.c src/perf_data.c src/perf_data_reader.c src/btf_archive.c src/cli.c
# test_perf_data only once its source exists (it is being written).
unit: build/unit/test_units build/unit/gen_perf_data \
	$(if $(wildcard tests/unit/test_perf_data.c),build/unit/test_perf_data) \
	build/unit/test_symbolize build/unit/test_proc
# perf.data writer/reader alone (no libbpf); gen_perf_data feeds real perf.
PD_UNIT_CFLAGS := $(COMMON_CFLAGS) -g -O0 -fno-omit-frame-pointer
PD_SRCS := src/perf_data.c src/perf_data_reader.c
PD_HDRS := src/perf_data.h src/perf_data_reader.h src/perf_records.h
build/unit/test_perf_data: tests/unit/test_perf_data.c tests/unit/swap_perf_data.h $(PD_SRCS) $(PD_HDRS)
	@mkdir -p $(@D)
	gcc $(PD_UNIT_CFLAGS) -fsanitize=address,undefined -fno-sanitize-recover=all \
		tests/unit/test_perf_data.c $(PD_SRCS) -o $@
# Symbolizer alone (libelf): maps over time, ELF, kallsyms, hostile files.
build/unit/test_symbolize: tests/unit/test_symbolize.c src/symbolize.c src/build_id.c src/symbolize.h src/build_id.h
	@mkdir -p $(@D)
	gcc $(PD_UNIT_CFLAGS) -fsanitize=address,undefined -fno-sanitize-recover=all \
		tests/unit/test_symbolize.c src/symbolize.c src/build_id.c -lelf -lz -o $@
# /proc parsers alone: real maps and status of the test itself, bad lines.
build/unit/test_proc: tests/unit/test_proc.c src/proc_sync.c src/proc_sync.h
	@mkdir -p $(@D)
	gcc $(PD_UNIT_CFLAGS) -fsanitize=address,undefined -fno-sanitize-recover=all \
		tests/unit/test_proc.c src/proc_sync.c -pthread -o $@
build/unit/gen_perf_data: tests/unit/gen_perf_data.c tests/unit/swap_perf_data.h src/perf_data.c $(PD_HDRS)
	@mkdir -p $(@D)
	gcc $(PD_UNIT_CFLAGS) tests/unit/gen_perf_data.c src/perf_data.c -o $@
build/unit/test_units: $(UNIT_SRCS) $(HDRS)
	@mkdir -p $(@D)
	gcc $(HOST_CFLAGS) -fsanitize=address,undefined -fno-sanitize-recover=all $(UNIT_SRCS) -lz -o $@

test:
	@for t in $(BOARDS); do $(MAKE) --no-print-directory -s TARGET=$$t all workloads || exit 1; done
	@$(MAKE) --no-print-directory -s asan unit
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
