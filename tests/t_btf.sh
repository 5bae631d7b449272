#!/bin/bash
# The embedded minimal BTF: manifest intact, every committed file still
# satisfies the current object's CO-RE relocations (a stale archive fails
# here), the archive is in each board's binary, and a BTF missing what the
# object needs is detected.
source "$(dirname "$0")/lib.sh"
CACHE=${OFFCPU_CACHE:-$HOME/.cache/offcpu}

while IFS=$'\t' read -r release arch _pkg _ver sha file; do
	[ "$release" = release ] && continue
	f=$ROOT/btf/$file
	if echo "$sha  $f" | sha256sum -c --quiet - 2>/dev/null; then
		pass "btf-manifest-$release"
	else
		fail "btf-manifest-$release" "$file does not match its sha256"
	fi
	# Loading with the file as the CO-RE target fails if a type or field
	# the object needs is missing (the load is on the host kernel; offsets
	# of another architecture are never used: nothing is attached).
	if [ "$(id -u)" = 0 ]; then
		if "$OFFCPU" probe --btf "$f" --variant raw_tp,hash >"$WORK/p" 2>&1; then
			pass "btf-not-stale-$release"
		else
			fail "btf-not-stale-$release" "$(tail -n 1 "$WORK/p") (run make btf)"
		fi
	else
		skip "btf-not-stale-$release" "needs root to load BPF"
	fi
	# The board binary embeds it.
	for mk in "$ROOT"/board/*.mk; do
		b=$(basename "$mk" .mk)
		[ "$(awk '$1 == "UNAME_M" { print $3 }' "$mk")" = "$arch" ] || continue
		q=$(awk '$1 == "QEMU_USER" { print $3 }' "$mk")
		[ "$b" = x86_64 ] && q=
		if $q "$ROOT/build/$b/offcpu" selftest 2>&1 | grep -q "^btf: $arch $release "; then
			pass "btf-embedded-$b-$release"
		else
			fail "btf-embedded-$b-$release" "not listed by selftest"
		fi
	done
done < "$ROOT/btf/manifest.tsv"

# The check above can fail: BTF reduced against an object that needs less.
if [ "$(id -u)" = 0 ] && [ -r /sys/kernel/btf/vmlinux ]; then
	clang -g -O2 -target bpfel -D__TARGET_ARCH_x86 -I"$CACHE/toolchain/host/include" \
		-I"$ROOT/bpf" -c "$ROOT/tests/bpf/stale.bpf.c" -o "$WORK/stale.o" &&
	"$("$ROOT/btf/min_btf.sh" bpftool)" gen min_core_btf /sys/kernel/btf/vmlinux \
		"$WORK/stale.btf" "$WORK/stale.o"
	if "$OFFCPU" probe --btf "$WORK/stale.btf" --variant raw_tp,hash >"$WORK/s" 2>&1; then
		fail btf-stale-detected "a BTF without tgid/flags/__state was accepted"
	else
		grep -q "cannot load" "$WORK/s" && pass btf-stale-detected \
			|| fail btf-stale-detected "$(tail -n 1 "$WORK/s")"
	fi
else
	skip btf-stale-detected "needs root and host BTF"
fi
