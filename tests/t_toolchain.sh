#!/bin/bash
# The per-target toolchains (toolchain/build.sh, symlibs.sh and protobuf.sh below): built and current, the
# expected layout, no glibc header in a musl compile, and a tiny program
# linked statically against libbpf, libdw, libelf and libz runs (under qemu-user)
# and reports the versions pinned in toolchain/versions.mk, libbpf's the one
# the toolchain picked (its libbpf.version), which offcpu --version names too.
# `make setup` builds only TARGET's toolchain and `make test` every one
# first: a target not built here is one SKIP naming what builds it (a
# failure under CI=true, where make test has built them all).
source "$(dirname "$0")/lib.sh"

CACHE=${OFFCPU_CACHE:-${CACHE:-$HOME/.cache/offcpu}}
export OFFCPU_CACHE=$CACHE
ver() { make -s --no-print-directory -C "$ROOT" "print-$1"; }

cat > "$WORK/t.c" <<'C'
#include <fcntl.h>
#include <stdio.h>
#include <bpf/libbpf.h>
#include <elfutils/libdw.h>
#include <libelf.h>
#include <zlib.h>

/* libdw with its architecture backends: the CFI of this very program. */
static const char *libdw_cfi(void)
{
	int fd = open("/proc/self/exe", O_RDONLY);
	Elf *elf = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
	Dwarf_CFI *cfi = elf ? dwarf_getcfi_elf(elf) : NULL;

	return cfi ? "ok" : "bad";
}

int main(void)
{
	const char *libelf = elf_version(EV_CURRENT) == EV_NONE ? "bad" : "ok";

	printf("libbpf %u.%u libelf %s libdw %s zlib %s\n", libbpf_major_version(),
	       libbpf_minor_version(), libelf, libdw_cfi(), zlibVersion());
	return 0;
}
C
zlib_version=$(ver ZLIB_VERSION)
libbpf_min=$(ver LIBBPF_MIN_VERSION)
libbpf_suites=" $(ver LIBBPF_SUITES) "

# has_files NAME DIR FILE...: every FILE exists under DIR.
has_files() {
	local name=$1 dir=$2 f missing=
	shift 2
	for f in "$@"; do [ -e "$dir/$f" ] || missing+=" $f"; done
	if [ -z "$missing" ]; then pass "$name"; else fail "$name" "missing:$missing"; fi
}

# libbpf_version TARGET TC RUN: the libbpf build.sh picked for TC (sets
# LIBBPF: upstream version) is >= the minimum, from one of the suites, and
# what offcpu --version of TARGET's builds names; the PASS line says which.
libbpf_version() {
	local t=$1 tc=$2 run=$3 deb suite bin bins=() out checked=
	if ! read -r LIBBPF deb suite < "$tc/libbpf.version" || [ -z "$suite" ]; then
		fail "toolchain-$t-libbpf-version" "$tc/libbpf.version missing or not 'VERSION DEBIAN_VERSION SUITE'"
		return 1
	fi
	if ! dpkg --compare-versions "$deb" ge "$libbpf_min" || [[ "$libbpf_suites" != *" $suite "* ]]; then
		fail "toolchain-$t-libbpf-version" "libbpf $deb from $suite: not >= $libbpf_min from$libbpf_suites(versions.mk)"
		return 1
	fi
	if [ "$t" = host ]; then bins=("$ROOT/build/asan/offcpu" "$ROOT/build/host/offcpu")
	else bins=("$ROOT/build/$t/offcpu"); fi
	for bin in "${bins[@]}"; do
		[ -x "$bin" ] || continue
		# Exits 1 when the libbpf linked in is not the one it names.
		out=$($run "$bin" --version 2>&1)
		if [ $? -ne 0 ] || [[ "$out" != *"libbpf $LIBBPF,"* && "$out" != *"libbpf $LIBBPF)"* ]]; then
			fail "toolchain-$t-libbpf-version" "${bin#"$ROOT"/} --version: '$out', the toolchain has libbpf $LIBBPF (rebuild: make)"
			return 1
		fi
		checked+=" ${bin#"$ROOT"/}"
	done
	if [ -z "$checked" ]; then
		skip "toolchain-$t-libbpf-version" "no offcpu built with it to compare (${bins[*]#"$ROOT"/}): $(builds_it "$t")"
		return 0
	fi
	pass "toolchain-$t-libbpf-version (libbpf $LIBBPF from $suite, $deb;$checked)"
}

# builds_it TARGET: the command that builds TARGET's toolchain and offcpu.
builds_it() { if [ "$1" = host ]; then echo "make asan"; else echo "make TARGET=$1"; fi; }
# built PREFIX TARGET: TARGET's toolchain exists, else one SKIP (PREFIX-TARGET).
built() {
	[ -e "$CACHE/toolchain/$2/.done" ] && return 0
	skip "$1-$2" "$CACHE/toolchain/$2 not built ($(builds_it "$2") builds it; make test builds every target's)"
	return 1
}

# runs NAME CMD...: CMD prints the pinned versions.
runs() {
	local name=$1 out
	shift
	out=$("$@" 2>&1)
	if [ "$out" = "$want" ]; then pass "$name"; else fail "$name" "got '$out', want '$want'"; fi
}

check_target() {	# target cc run
	local t=$1 cc=$2 run=$3 tc=$CACHE/toolchain/$1 ldflags= f
	built toolchain "$t" || return
	if "$ROOT/toolchain/build.sh" --check "$t"; then pass "toolchain-$t-current"
	else fail "toolchain-$t-current" "stale against toolchain/build.sh or versions.mk ($(builds_it "$t"))"; fi
	has_files "toolchain-$t-layout" "$tc" lib/libbpf.a lib/libelf.a lib/libdw.a lib/libz.a \
		include/elfutils/libdw.h include/dwarf.h \
		include/bpf/libbpf.h include/bpf/bpf_helpers.h include/bpf/bpf_core_read.h \
		include/bpf/bpf_tracing.h include/bpf/bpf_endian.h include/bpf/btf.h
	if [ "$t" != host ]; then
		has_files "toolchain-$t-musl" "$tc" musl-gcc.specs include/libelf.h \
			include/gelf.h include/zlib.h
		ldflags=-static
		# Only the sysroot's and gcc's own headers: no glibc leaking in.
		echo '#include <stdio.h>
#include <linux/bpf.h>' | $cc -E -x c - > "$WORK/$t.i" 2>&1
		if grep -q '^# [0-9]* "/usr/include' "$WORK/$t.i"; then
			fail "toolchain-$t-no-glibc" "$(grep -m1 '^# [0-9]* "/usr/include' "$WORK/$t.i")"
		elif grep -q 'musl' "$WORK/$t.i"; then pass "toolchain-$t-no-glibc"
		else fail "toolchain-$t-no-glibc" "$(tail -n 2 "$WORK/$t.i" | tr '\n' ' ')"; fi
	fi
	if ! $cc -std=gnu11 -Wall -Wextra -Werror $ldflags -I"$tc/include" "$WORK/t.c" \
		-L"$tc/lib" -lbpf -ldw -lelf -lz -o "$WORK/t-$t" > "$WORK/cc.out" 2>&1; then
		fail "toolchain-$t-link" "$(tail -n 3 "$WORK/cc.out" | tr '\n' ' ')"
		return
	fi
	pass "toolchain-$t-link"
	if [ "$t" != host ]; then
		f=$(file -b "$WORK/t-$t")
		if [[ "$f" == *"$(board_var "$t" ELF_ENDIAN) executable, $(board_var "$t" ELF_MACHINE),"* &&
		      "$f" == *"statically linked"* ]]; then pass "toolchain-$t-static"
		else fail "toolchain-$t-static" "$f"; fi
	fi
	if [ -n "$run" ] && ! command -v "$run" > /dev/null; then
		skip "toolchain-$t-run" "$run not installed (toolchain/deps.sh)"
		return
	fi
	libbpf_version "$t" "$tc" "$run" || return
	# libbpf tells only its major and minor.
	want="libbpf $(cut -d. -f1-2 <<< "$LIBBPF") libelf ok libdw ok zlib $zlib_version"
	runs "toolchain-$t-run" $run "$WORK/t-$t"
}

# each_target FN: FN TARGET CC RUN for the host (gcc) and every board (its
# cross gcc on its musl toolchain; RUN: the board's qemu-user, none where
# the board is this machine's architecture).
each_target() {
	local mk b run
	"$1" host gcc ""
	for mk in "$ROOT"/board/*.mk; do
		b=$(basename "$mk" .mk)
		run=$(board_var "$b" QEMU_USER)
		[ "$(board_var "$b" UNAME_M)" = "$(uname -m)" ] && run=
		"$1" "$b" "$(board_var "$b" TRIPLE)-gcc-12 -specs $CACHE/toolchain/$b/musl-gcc.specs" "$run"
	done
}
each_target check_target

# The symbol libraries of `offcpu report` (toolchain/symlibs.sh): current,
# and a static program demangling C++ and Rust v0 and naming liblzma runs.
cat > "$WORK/s.c" <<'C'
#include <stdio.h>
#include <lzma.h>
#include <libiberty/demangle.h>

int main(void)
{
	char *a = cplus_demangle("_ZN3app6Worker8wait_forERSt6vectorIiSaIiEEi", DMGL_AUTO);
	char *b = cplus_demangle("_RNvNtCs1234_7mycrate6module4wait", DMGL_AUTO);

	printf("%s %s lzma %s\n", a ? a : "-", b ? b : "-", lzma_version_string());
	return 0;
}
C
symver() { awk -v k="$1" '$1 == k { print $3 }' "$ROOT/toolchain/symlibs.mk"; }
check_symlibs() {	# target cc run
	local t=$1 cc=$2 run=$3 sym=$CACHE/toolchain/$1-sym ldflags= out
	want="app::Worker::wait_for mycrate::module::wait lzma $(symver XZ_VERSION)"
	built symlibs "$t" || return
	if "$ROOT/toolchain/symlibs.sh" --check "$t"; then pass "symlibs-$t-current"
	else fail "symlibs-$t-current" "$sym missing or stale against toolchain/symlibs.sh ($(builds_it "$t"))"; return; fi
	[ "$t" = host ] || ldflags=-static
	if ! $cc -std=gnu11 -Wall -Wextra -Werror $ldflags -I"$sym/include" "$WORK/s.c" \
		-L"$sym/lib" -liberty -llzma -o "$WORK/s-$t" > "$WORK/cc.out" 2>&1; then
		fail "symlibs-$t-link" "$(tail -n 3 "$WORK/cc.out" | tr '\n' ' ')"
		return
	fi
	if [ -n "$run" ] && ! command -v "$run" > /dev/null; then
		skip "symlibs-$t-run" "$run not installed (toolchain/deps.sh)"
		return
	fi
	out=$($run "$WORK/s-$t" 2>&1)
	if [ "$out" = "$want" ]; then pass "symlibs-$t-run"; else fail "symlibs-$t-run" "got '$out', want '$want'"; fi
}
each_target check_symlibs

# protobuf-c's runtime of `offcpu report --pprof` (toolchain/protobuf.sh):
# current, its library and header in place (the offcpu builds link it).
for t in host $(cd "$ROOT/board" && ls -- *.mk | sed 's/\.mk$//'); do
	built protobuf "$t" || continue
	if "$ROOT/toolchain/protobuf.sh" --check "$t"; then pass "protobuf-$t-current"
	else fail "protobuf-$t-current" "$CACHE/toolchain/$t-pb missing or stale against toolchain/protobuf.sh ($(builds_it "$t"))"; continue; fi
	has_files "protobuf-$t-layout" "$CACHE/toolchain/$t-pb" lib/libprotobuf-c.a include/protobuf-c/protobuf-c.h
done
