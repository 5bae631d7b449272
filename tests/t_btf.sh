#!/bin/bash
# The embedded minimal BTF (btf/README.md):
#  - every committed file is intact, in its target's byte order, and still
#    satisfies every CO-RE relocation of the *current* BPF object of each board
#    that embeds it (libbpf's own relocation logic, tests/unit/btf_check.c; a
#    stale archive fails here: run `make btf`), and the checker can fail;
#  - the archive round trip: archive.sh packs, src/record/btf_archive.c finds by
#    arch/release (arm64 = aarch64), truncated or corrupted archives are errors
#    and never crash (ASan/UBSan);
#  - the host BTF path: the host's BTF reduced the same way satisfies the
#    x86_64 object, also through BTF_VMLINUX, and loads (root).
source "$(dirname "$0")/lib.sh"
CACHE=${OFFCPU_CACHE:-$HOME/.cache/offcpu}
HOSTTC=$CACHE/toolchain/host
CHECK=$ROOT/build/unit/btf_check
boards() { for mk in "$ROOT"/board/*.mk; do basename "$mk" .mk; done; }

# The board's BPF object built from the current source with the Makefile's
# flags (read from make itself, so they cannot drift).  SRC defaults to
# bpf/offcpu.bpf.c; TARGET_OVERRIDE=bpfel builds the little-endian twin.
bpf_object() {
	local board=$1 src=$2 out=$3 flags
	flags=$(board_var "$board" BPF_CFLAGS)
	[ -n "${TARGET_OVERRIDE:-}" ] && flags=${flags/-target bpfeb/-target $TARGET_OVERRIDE}
	# shellcheck disable=SC2086
	(cd "$ROOT" && clang $flags -c "$src" -o "$out")
}

# Built by the Makefile (it needs the libbpf source of the host toolchain).
if ! make -s --no-print-directory -C "$ROOT" build/unit/btf_check >"$WORK/build.log" 2>&1; then
	# Without it some 40 checks would not run: a failure, not a skip.
	fail btf-check "btf_check does not build: $(tail -n 2 "$WORK/build.log" | tr '\n' ' ')"
	exit 0
fi
for b in $(boards); do
	bpf_object "$b" bpf/offcpu.bpf.c "$WORK/$b.o" ||
		{ fail "btf-object-$b" "cannot compile bpf/offcpu.bpf.c"; continue; }
done

# bpftool < 7.6 cannot read big-endian objects, so s390x files are reduced
# against the little-endian twin min_btf.sh builds: valid only while the two
# have the same relocations.  (Boards differ from each other: the user
# registers of the stack cache are per architecture.)
"$ROOT/btf/min_btf.sh" le-object s390x "$WORK/s390x.o" "$WORK/s390x-le.o"
"$CHECK" relos "$WORK/s390x-le.o" > "$WORK/relos.le"
if [ -s "$WORK/s390x.o" ]; then
	"$CHECK" relos "$WORK/s390x.o" > "$WORK/relos.s390x"
	if [ -s "$WORK/relos.s390x" ] && cmp -s "$WORK/relos.le" "$WORK/relos.s390x"; then
		pass "btf-relos-same-s390x-le-twin"
	else
		fail "btf-relos-same-s390x-le-twin" "CO-RE relocations differ from the little-endian twin: $(diff "$WORK/relos.le" "$WORK/relos.s390x" | head -3 | tr '\n' ' ')"
	fi
fi

# --- (a) committed files: intact, right byte order, not stale ---
n=0
while IFS=$'\t' read -r release arch _pkg _ver sha file; do
	[ "$release" = release ] && continue
	n=$((n + 1))
	f=$ROOT/btf/$file
	if echo "$sha  $f" | sha256sum -c --quiet - 2>/dev/null; then
		pass "btf-manifest-$release"
	else
		fail "btf-manifest-$release" "$file does not match its sha256"
	fi
	full=$CACHE/btf/vmlinux-$release.btf
	[ -s "$full" ] || full=
	for b in $(boards); do
		[ "$(board_var "$b" UNAME_M)" = "$arch" ] || continue
		want=little
		[ "$(board_var "$b" ELF_ENDIAN)" = MSB ] && want=big
		got=$(python3 "$ROOT/btf/btf_endian.py" "$f" 2>&1)
		[ "$got" = "$want" ] && pass "btf-byte-order-$b-$release" ||
			fail "btf-byte-order-$b-$release" "$got, $b is $want-endian"
		# With the cached full BTF (make btf), results must be identical;
		# without it, every relocation the object requires must resolve.
		if "$CHECK" check "$WORK/$b.o" "$f" $full >"$WORK/c" 2>&1; then
			pass "btf-not-stale-$b-$release"
		else
			fail "btf-not-stale-$b-$release" "$(grep -m2 -E 'FAIL|error' "$WORK/c" | tr '\n' ' ')(run make btf)"
		fi
		# The board's binary embeds it.
		q=$(board_var "$b" QEMU_USER)
		[ "$b" = x86_64 ] && q=
		if [ ! -x "$ROOT/build/$b/offcpu" ]; then
			skip "btf-embedded-$b-$release" "build/$b/offcpu not built"
		elif $q "$ROOT/build/$b/offcpu" selftest 2>&1 | grep -q "^btf: $arch $release "; then
			pass "btf-embedded-$b-$release"
		else
			fail "btf-embedded-$b-$release" "not listed by offcpu selftest"
		fi
	done
	# Through the verifier too: the x86_64 object relocated with this file
	# loads on the host (offsets of another architecture are never used:
	# nothing is attached; its relocations are the same, checked above).
	if [ "$(id -u)" != 0 ]; then
		skip "btf-loads-$release" "needs root to load BPF"
	elif [ ! -x "$OFFCPU" ]; then
		skip "btf-loads-$release" "$OFFCPU not built"
	elif "$OFFCPU" probe --btf "$f" --variant raw_tp,hash >"$WORK/p" 2>&1; then
		pass "btf-loads-$release"
	else
		fail "btf-loads-$release" "$(tail -n 1 "$WORK/p")"
	fi
done < "$ROOT/btf/manifest.tsv"
[ "$n" -gt 0 ] && pass btf-manifest-entries || fail btf-manifest-entries "btf/manifest.tsv lists no file"

# --- the staleness check can fail ---
# A full BTF to reduce from: the cached s390x one, else the host's.
s390x_full=$(ls "$CACHE"/btf/vmlinux-*-s390x.btf 2>/dev/null | head -1 || true)
if [ -n "$s390x_full" ]; then
	full=$s390x_full board=s390x
elif [ -r /sys/kernel/btf/vmlinux ]; then
	full=/sys/kernel/btf/vmlinux board=x86_64
else
	full='' board=''
fi
if [ -z "$full" ]; then
	skip btf-stale-detected "no full BTF (make btf, or a kernel with /sys/kernel/btf/vmlinux)"
else
	# (1) a BTF reduced against an object that needs less (pid only).
	TARGET_OVERRIDE=bpfel bpf_object "$board" tests/bpf/stale.bpf.c "$WORK/stale.o"
	"$ROOT/btf/min_btf.sh" reduce "$full" "$board" "$WORK/stale.o" "$WORK/stale.btf"
	"$CHECK" check "$WORK/$board.o" "$WORK/stale.btf" >"$WORK/s" 2>&1
	rc=$?
	if [ "$rc" = 1 ] && grep -q 'FAIL byte_off task_struct.tgid: missing' "$WORK/s"; then
		pass "btf-stale-detected-$board"
	else
		fail "btf-stale-detected-$board" "exit $rc: $(tail -n 1 "$WORK/s")"
	fi
	# (2) the object grew: one field access more than the BTF was made for.
	"$ROOT/btf/min_btf.sh" reduce "$full" "$board" "$WORK/$board.o" "$WORK/cur.btf"
	bpf_object "$board" tests/bpf/extra.bpf.c "$WORK/extra.o"
	for ref in "" "$full"; do
		"$CHECK" check "$WORK/extra.o" "$WORK/cur.btf" $ref >"$WORK/e" 2>&1
		rc=$?
		name=btf-extra-field-detected-$board${ref:+-vs-full}
		if [ "$rc" = 1 ] && grep -q 'FAIL byte_off mm_struct.total_vm' "$WORK/e"; then
			pass "$name"
		else
			fail "$name" "exit $rc: $(tail -n 1 "$WORK/e")"
		fi
	done
	# ... while the same BTF satisfies the object it was made for.
	check "btf-fresh-accepted-$board" "$CHECK" check "$WORK/$board.o" "$WORK/cur.btf" "$full"
fi
# The verifier agrees (root): offcpu refuses the stale BTF.
if [ "$(id -u)" = 0 ] && [ -r /sys/kernel/btf/vmlinux ] && [ -x "$OFFCPU" ]; then
	bpf_object x86_64 tests/bpf/stale.bpf.c "$WORK/stale-x86.o"
	"$ROOT/btf/min_btf.sh" reduce /sys/kernel/btf/vmlinux x86_64 "$WORK/stale-x86.o" "$WORK/stale-x86.btf"
	if "$OFFCPU" probe --btf "$WORK/stale-x86.btf" --variant raw_tp,hash >"$WORK/s" 2>&1; then
		fail btf-stale-rejected-by-verifier "a BTF without tgid/flags/__state was accepted"
	else
		grep -q "cannot load" "$WORK/s" && pass btf-stale-rejected-by-verifier ||
			fail btf-stale-rejected-by-verifier "$(tail -n 1 "$WORK/s")"
	fi
else
	skip btf-stale-rejected-by-verifier "needs root, host BTF and $OFFCPU"
fi

# --- (b) archive round trip ---
for b in $(boards); do
	ar=$WORK/$b.bin arch=$(board_var "$b" UNAME_M)
	if ! "$ROOT/btf/archive.sh" "$b" "$WORK/$b.o" "$ar" 2>"$WORK/a"; then
		fail "btf-archive-$b" "archive.sh: $(tail -n 1 "$WORK/a")"
		continue
	fi
	want=$(awk -F'\t' -v a="$arch" 'NR > 1 && $2 == a' "$ROOT/btf/manifest.tsv" | wc -l)
	got=$("$CHECK" list "$ar" | grep -c "^btf: $arch ")
	ok=1
	[ "$got" = "$want" ] || ok=0
	while IFS=$'\t' read -r release a _ _ _ file; do
		[ "$a" = "$arch" ] || continue
		"$CHECK" find "$ar" "$arch" "$release" "$WORK/found" && cmp -s "$WORK/found" "$ROOT/btf/$file" || ok=0
		"$CHECK" find "$ar" "$arch" "$release-nope" "$WORK/found"; [ $? = 1 ] || ok=0
	done < "$ROOT/btf/manifest.tsv"
	[ "$ok" = 1 ] && pass "btf-archive-$b" || fail "btf-archive-$b" "$got of $want entries, or a lookup failed"
done

# Two entries, named arm64 and aarch64: both names find both.
f=$(awk -F'\t' 'NR == 2 { print $6 }' "$ROOT/btf/manifest.tsv")
if [ -n "$f" ]; then
	python3 "$ROOT/btf/archive.py" "$WORK/a1.bin" aarch64 "$ROOT/btf/$f:9.9.9-a"
	python3 "$ROOT/btf/archive.py" "$WORK/a2.bin" arm64 "$ROOT/btf/$f:9.9.9-b" "$ROOT/btf/$f:9.9.9-c"
	ok=1
	for m in arm64 aarch64; do
		"$CHECK" find "$WORK/a1.bin" "$m" 9.9.9-a "$WORK/x" && cmp -s "$WORK/x" "$ROOT/btf/$f" || ok=0
		"$CHECK" find "$WORK/a2.bin" "$m" 9.9.9-c "$WORK/x" && cmp -s "$WORK/x" "$ROOT/btf/$f" || ok=0
	done
	"$CHECK" find "$WORK/a2.bin" x86_64 9.9.9-c "$WORK/x"; [ $? = 1 ] || ok=0
	[ "$ok" = 1 ] && pass btf-archive-arm64-alias || fail btf-archive-arm64-alias "a lookup failed"
	check btf-archive-corrupt "$CHECK" corrupt "$WORK/a2.bin" aarch64 9.9.9-c
	printf 'OCBTFAR1\2\0\0\0\0\0\0\0' > "$WORK/v2.bin"
	"$CHECK" find "$WORK/v2.bin" aarch64 9.9.9-a "$WORK/x" 2>"$WORK/v"
	[ $? = 2 ] && pass btf-archive-bad-version || fail btf-archive-bad-version "$(cat "$WORK/v")"
else
	skip btf-archive-arm64-alias "no committed BTF to pack"
fi

# --- (c) the host's BTF, reduced as a vendor's kernel would be ---
if [ -r /sys/kernel/btf/vmlinux ]; then
	"$ROOT/btf/min_btf.sh" reduce /sys/kernel/btf/vmlinux x86_64 "$WORK/x86_64.o" "$WORK/host.btf"
	check btf-host-min-satisfies "$CHECK" check "$WORK/x86_64.o" "$WORK/host.btf" /sys/kernel/btf/vmlinux
	# BTF_VMLINUX: the vendor's kernel joins the archive.
	rel=$(uname -r)
	if BTF_RELEASE=$rel "$ROOT/btf/archive.sh" x86_64 "$WORK/x86_64.o" "$WORK/vendor.bin" \
		/sys/kernel/btf/vmlinux 2>"$WORK/a" &&
	   "$CHECK" find "$WORK/vendor.bin" x86_64 "$rel" "$WORK/vendor.btf" &&
	   cmp -s "$WORK/vendor.btf" "$WORK/host.btf"; then
		pass btf-vendor-archive
	else
		fail btf-vendor-archive "$(tail -n 1 "$WORK/a")"
	fi
	if [ "$(id -u)" = 0 ] && [ -x "$OFFCPU" ]; then
		check btf-host-min-loads "$OFFCPU" probe --btf "$WORK/host.btf" --variant raw_tp,hash
	else
		skip btf-host-min-loads "needs root and $OFFCPU"
	fi
else
	skip btf-host-min-satisfies "no /sys/kernel/btf/vmlinux on this host"
fi
