#!/bin/bash
# Every program variant the host kernel can load, forced, records the
# workload correctly, and --state S and D each record the blocks of their
# state only (the blocker's vfork parent is D, its other threads S; idle
# kworkers, TASK_IDLE, are D); and CO-RE against a minimal BTF (the host's own BTF
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

# record NAME [--state S|D] ARGS...: the blocker with its D-state thread
# (-s: bl-vfork, a vfork parent) against its truth; with --state, each of
# its functions all there or wholly absent by the state it sleeps in.
record() {
	local name=$1 state=()
	shift
	[ "$1" = --state ] && state=(--state "$2")
	# 2 s, like every truth check (one lost block weighs half as much).
	if "$OFFCPU" "$@" -o "$WORK/$name.data" -- "$BLOCKER" -t 2 -s >"$WORK/$name.out" 2>"$WORK/$name.err"; then
		check "variant-$name" $CHECK compare "$WORK/$name.data" "$WORK/$name.out" "${state[@]}"
		explain "$WORK/$name.err"
	else
		fail "variant-$name" "$(tail -n 1 "$WORK/$name.err")"
	fi
}

# idle NAME STATE ARGS...: 1 s of the whole system with kernel threads, the
# kernel's workers made to wake (vm/stat_refresh queues a work item on every
# CPU and waits for them): idle kworkers sleep in TASK_IDLE, which is D.
idle() {
	local name=$1 state=$2 absent=()
	shift 2
	[ "$state" = S ] && absent=(--absent)
	"$OFFCPU" "$@" --state "$state" --include-kernel-threads -d 1 -o "$WORK/$name.data" \
		>/dev/null 2>"$WORK/$name.err" &
	local op=$!
	for _ in 1 2 3 4 5 6 7 8 9 10; do sleep 0.1; echo 1 >/proc/sys/vm/stat_refresh; done
	if wait $op; then
		check "variant-$name" $CHECK idle "$WORK/$name.data" "${absent[@]}"
	else
		fail "variant-$name" "$(tail -n 1 "$WORK/$name.err")"
	fi
}

for v in $VARIANTS; do
	record "${v/,/-}" --variant "$v"
	for st in S D; do
		record "${v/,/-}-state-$st" --state $st --variant "$v"
		idle "${v/,/-}-idle-kworkers-state-$st" $st --variant "$v"
	done
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
