#!/bin/bash
# --unwind-in kernel (bpf/offcpu_unwind.bpf.h, src/unwind/ktables.c): user
# stacks walked by the BPF program with CFI rows loaded per file.  On the
# distribution-built workload (no frame pointers, libc's CFI):
#  - the same truth as the copy path (tests/perf_check.py distro), user
#    stacks unwound in the kernel (-v), none by frame pointer, and copies
#    only while rows load;
#  - the same user stacks as the copy path gives, block by block
#    (--unwind-in verify copies the walked stacks too and compares);
#  - the stack cache fed by walked stacks: no wrong reuse (--stack-cache
#    verify);
#  - a table that cannot load (--unwind-rows too small for any file) falls
#    back to the copy for every block: the same truth, nothing unwound in
#    the kernel.
set -uo pipefail
source "$(dirname "$0")/lib.sh"
T=kunwind

bad_value unwind-in "expected user, kernel or verify" --unwind-in both
bad_value unwind-rows "must be at least 1" --unwind-rows 0

DISTRO=$ROOT/build/x86_64/distro
CHECK="python3 $ROOT/tests/perf_check.py"
need_bpf $T "$OFFCPU" "$DISTRO" || exit 0
if [ "$(board_var x86_64 KUNWIND)" != 1 ]; then
	skip $T "the board does not unwind in the kernel"
	exit 0
fi

# counts NAME: "kernel copied fp" from its -v line.
counts() {
	sed -nE 's/.*user stacks: ([0-9]+) unwound in the kernel, ([0-9]+) copied, ([0-9]+) by frame pointer.*/\1 \2 \3/p' \
		"$WORK/$1.err"
}

record_distro $T kernel --unwind-in kernel
echo "    $(grep -m1 '^user stacks' "$WORK/kernel.err")"
grep 'unwound in the kernel\|kernel unwinding' "$WORK/kernel.err" | sed 's/^/    /'

check $T-truth $CHECK distro "$WORK/kernel.data" "$WORK/kernel.out" --folded "$WORK/kernel.folded"
# Stacks unwound in the kernel once the rows are loaded: the only copies
# are blocks before that (their process or file not loaded yet: how many
# depends on how busy the machine is), never a row, a word or a step the
# walker could not follow on this workload.
read -r kern copied fp <<<"$(counts kernel)"
others=$(sed -nE 's/.*row it cannot follow ([0-9]+), stack word unreadable ([0-9]+), sp went backwards ([0-9]+), spill map full ([0-9]+).*/\1 + \2 + \3 + \4/p' "$WORK/kernel.err")
if [ "${kern:-0}" -gt 0 ] && [ "${fp:-1}" -eq 0 ] && [ -n "$others" ] && [ $((others)) -eq 0 ]; then
	pass $T-in-kernel
else
	fail $T-in-kernel "in the kernel ${kern:-?}, copied ${copied:-?}, frame pointer ${fp:-?}, other misses ${others:-?}"
fi

# verify: every walked stack also copied and unwound in user space (the
# stack cache off, so every block is walked); none may differ.
record_distro $T verify --unwind-in verify --stack-cache off
verified $T-same-stacks "$WORK/verify.err" 'kernel unwinding (verify)' \
	'.*: ([0-9]+) walked stacks compared.*, ([0-9]+) of those differ.*' 100 compared differ

# The stack cache fed by the walks: a walked stack's entry holds the
# registers and every word the walk read; verify copies every block anyway
# and counts the reuses whose stack differs (none may).
record_distro $T cache --unwind-in kernel --stack-cache verify
stack_cache_verified $T-stack-cache-verify "$WORK/cache.err"

record_distro $T norows --unwind-in kernel --unwind-rows 1
check $T-fallback-truth $CHECK distro "$WORK/norows.data" "$WORK/norows.out" --folded "$WORK/norows.folded"
read -r kern copied fp <<<"$(counts norows)"
if [ "${kern:-1}" -eq 0 ] && [ "${copied:-0}" -gt 0 ] && [ "${fp:-1}" -eq 0 ]; then
	pass $T-fallback-copies
else
	fail $T-fallback-copies "in the kernel ${kern:-?}, copied ${copied:-?}, frame pointer ${fp:-?}"
fi
