#!/bin/bash
# One static binary per board: the right ELF, no dynamic dependencies, and it
# runs --version, --help and selftest (opens the embedded BPF object without
# the bpf() syscall) under qemu-user.
source "$(dirname "$0")/lib.sh"

for mk in "$ROOT"/board/*.mk; do
	b=$(basename "$mk" .mk)
	bin=$ROOT/build/$b/offcpu
	if [ ! -x "$bin" ]; then
		fail "static-$b" "$bin not built (make all-targets)"
		continue
	fi
	f=$(file -b "$bin")
	machine=$(board_var "$b" ELF_MACHINE)
	endian=$(board_var "$b" ELF_ENDIAN)
	if [[ "$f" == *"$endian executable, $machine,"* && "$f" == *"statically linked"* ]]; then
		pass "static-$b-elf"
	else
		fail "static-$b-elf" "$f"
	fi
	size=$(stat -c %s "$bin")
	[ "$size" -le $((1536 * 1024)) ] && pass "static-$b-size-$((size / 1024))KiB" \
		|| fail "static-$b-size" "$size bytes > 1.5 MiB"
	run=$(board_var "$b" QEMU_USER)
	[ "$b" = x86_64 ] && run=
	if $run "$bin" --version 2>&1 | grep -q "offcpu .*($b; musl"; then
		pass "static-$b-version"
	else
		fail "static-$b-version" "$($run "$bin" --version 2>&1 | head -1)"
	fi
	$run "$bin" --help 2>&1 | grep -q -- '--off-cpu-thresh' && pass "static-$b-help" \
		|| fail "static-$b-help" "no usage"
	$run "$bin" selftest >"$WORK/st" 2>&1
	rc=$?
	if [ $rc -eq 0 ] && grep -q 'program: on_switch_raw raw_tp/sched_switch' "$WORK/st" &&
	   grep -q 'program: on_switch_tp tracepoint/sched/sched_switch' "$WORK/st" &&
	   grep -q 'map: stacks' "$WORK/st"; then
		pass "static-$b-selftest"
	else
		fail "static-$b-selftest" "exit $rc: $(tail -n 2 "$WORK/st" | tr '\n' ' ')"
	fi
done
