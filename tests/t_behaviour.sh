#!/bin/bash
# Behaviour that a reshaping of the tree must leave unchanged (issue 26):
# - the perf.data writer makes the same bytes from the same records:
#   build/unit/gen_perf_data --fixed (fixed pid, features and an MMAP2 of the
#   committed tests/fuzz/corpus/cfi/small-x86_64.so) against the committed
#   tests/samples/fixed.data;
# - offcpu report prints the same on the committed recordings (fixed.data;
#   wakers.data, `offcpu --wakers -- blocker -t 1` on x86_64; the fuzz seed
#   cmd.data): text, per thread by count, folded, SVG and pprof, each against
#   tests/samples/expected/NAME.  User files are looked for under --symfs
#   (the repository, or a folder that does not exist) and kernel symbols come
#   from a committed kallsyms, so nothing of this machine enters the output.
# An intended change of output: tests/t_behaviour.sh --update rewrites the
# expected files (and fixed.data); say why in the commit.
source "$(dirname "$0")/lib.sh"
S=tests/samples
E=$S/expected
K=tests/fuzz/corpus/proc/kallsyms
update=${1:-}

[ -x "$OFFCPU" ] || { fail behaviour "$OFFCPU not built"; exit 0; }
if ! make -s -C "$ROOT" build/unit/gen_perf_data >"$WORK/make.log" 2>&1; then
	fail behaviour-build "$(grep -m 3 -E 'error|Error' "$WORK/make.log" | tr '\n' ' ')"
	exit 0
fi
cd "$ROOT" || exit 1

# same NAME FILE: FILE is the expected one (or becomes it with --update).
same() {
	local name=$1 got=$2 want=$E/$1
	[ "$name" = writer ] && want=$S/fixed.data
	if [ "$update" = --update ]; then
		cp "$got" "$want" && echo "updated $want"
		return
	fi
	if [ ! -s "$got" ]; then
		fail "behaviour-$name" "no output"
	elif cmp -s "$got" "$want"; then
		pass "behaviour-$name"
	else
		fail "behaviour-$name" "differs from $want: $(diff <(cat -v "$want") <(cat -v "$got") 2>&1 | head -n 4 | tr '\n' ' ')"
	fi
}

# report NAME ARGS...: offcpu report's standard output.
report() {
	local name=$1
	shift
	"$OFFCPU" report "$@" >"$WORK/$name" 2>"$WORK/$name.err"
	same "$name" "$WORK/$name"
}

mkdir -p "$E"
build/unit/gen_perf_data --fixed "$WORK/fixed.data"
same writer "$WORK/fixed.data"

F=(-i $S/fixed.data --symfs . --kallsyms $K)
report fixed-text "${F[@]}" -n 0
report fixed-thread-count "${F[@]}" -T -s count
report fixed-folded "${F[@]}" --folded
"$OFFCPU" report "${F[@]}" --svg "$WORK/fixed.svg" >/dev/null 2>&1
same fixed-svg "$WORK/fixed.svg"
"$OFFCPU" report "${F[@]}" --pprof "$WORK/fixed.pb.gz" >/dev/null 2>&1
same fixed-pprof "$WORK/fixed.pb.gz"

W=(-i $S/wakers.data --symfs $S/no-such-dir --kallsyms $K)
report wakers-text "${W[@]}" -n 0
report wakers-wakers "${W[@]}" --wakers -n 0
report wakers-folded "${W[@]}" --wakers --folded
report wakers-thread "${W[@]}" -T -c bl-sleep,bl-piperd -m 1
"$OFFCPU" report "${W[@]}" --wakers --svg "$WORK/wakers.svg" >/dev/null 2>&1
same wakers-svg "$WORK/wakers.svg"
"$OFFCPU" report "${W[@]}" --pprof "$WORK/wakers.pb.gz" >/dev/null 2>&1
same wakers-pprof "$WORK/wakers.pb.gz"

report cmd-text -i tests/fuzz/corpus/perf_data/cmd.data --kallsyms $K -n 0
[ "$update" = --update ] && exit 0

# Controls: the comparison sees one byte changed, and one stack less.
cp $S/fixed.data "$WORK/one-byte.data"
printf 'X' | dd of="$WORK/one-byte.data" bs=1 seek=1300 conv=notrunc status=none
check_fails behaviour-writer-control "a changed byte went unnoticed" cmp -s "$WORK/one-byte.data" $S/fixed.data
"$OFFCPU" report "${W[@]}" -n 1 >"$WORK/top1" 2>/dev/null
check_fails behaviour-report-control "a shorter report went unnoticed" cmp -s "$WORK/top1" "$E/wakers-text"
exit 0
