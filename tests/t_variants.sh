#!/bin/bash
# Every program variant the host kernel can load, forced, records the
# workload correctly; and CO-RE against a minimal BTF (the host's own BTF
# reduced by bpftool gen min_core_btf, given with --btf) works with the
# raw_tp variant, as on kernels without BTF.
source "$(dirname "$0")/lib.sh"
BLOCKER=${BLOCKER:-$ROOT/build/x86_64/blocker}
CHECK="python3 $ROOT/tests/perf_check.py"

if [ "$(id -u)" != 0 ]; then
	skip variants "needs root"
	exit 0
fi
# Without kernel BTF only raw_tp can load, against a BTF reduced from the
# kernel's vmlinux (use_host_btf) instead of /sys/kernel/btf/vmlinux.
VARIANTS="tp_btf,task tp_btf,hash raw_tp,hash tp,hash"
FULL_BTF=/sys/kernel/btf/vmlinux
if [ ! -r /sys/kernel/btf/vmlinux ] || [ -n "${OFFCPU_TEST_FORCE_BTF:-}" ]; then
	use_host_btf || { skip variants "$BTF_WHY"; exit 0; }
	VARIANTS=raw_tp,hash
	FULL_BTF=${OFFCPU_TEST_VMLINUX:-/usr/lib/debug/boot/vmlinux-$(uname -r)}
	[ -r "$FULL_BTF" ] || FULL_BTF=/boot/vmlinux-$(uname -r)
fi

record() {	# NAME ARGS...
	local name=$1
	shift
	# 2 s, like every truth check (one lost block weighs half as much).
	if "$OFFCPU" "$@" -o "$WORK/$name.data" -- "$BLOCKER" -t 2 >"$WORK/$name.out" 2>"$WORK/$name.err"; then
		check "variant-$name" $CHECK compare "$WORK/$name.data" "$WORK/$name.out"
		explain "$WORK/$name.err"
	else
		fail "variant-$name" "$(tail -n 1 "$WORK/$name.err")"
	fi
}

for v in $VARIANTS; do
	record "${v/,/-}" --variant "$v"
done

if "$ROOT/btf/min_btf.sh" reduce "$FULL_BTF" x86_64 \
	"$ROOT/build/bpf/x86_64/offcpu.bpf.o" "$WORK/min.btf" 2>"$WORK/min.err"; then
	size=$(stat -c %s "$WORK/min.btf")
	[ "$size" -lt 4096 ] && pass "min-btf-small-${size}B" || fail min-btf-small "$size bytes"
	"$OFFCPU" probe --btf "$WORK/min.btf" --variant raw_tp,hash >"$WORK/probe" 2>&1
	grep -q "btf: file $WORK/min.btf" "$WORK/probe" && pass min-btf-probe \
		|| fail min-btf-probe "$(cat "$WORK/probe")"
	record min-btf-raw_tp --btf "$WORK/min.btf" --variant raw_tp,hash
else
	fail min-btf "$(tail -n 1 "$WORK/min.err")"
fi

# A file that is not BTF is refused with one line.
echo "not btf" >"$WORK/bad.btf"
"$OFFCPU" probe --btf "$WORK/bad.btf" >"$WORK/bad.out" 2>&1
[ $? -ne 0 ] && grep -q "not a BTF" "$WORK/bad.out" && pass btf-bad-file \
	|| fail btf-bad-file "$(cat "$WORK/bad.out")"
