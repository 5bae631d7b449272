#!/bin/bash
# Options whose effect is a size or a source, each checked against its
# default: --dwarf-buffer (the copies' ring), --unwind-tables (the CFI rows'
# budget), report --kallsyms (the kernel's names), archive -v (where each
# file came from) and --symfs (another machine's files).  tests/options.tsv names these checks.
source "$(dirname "$0")/lib.sh"
need_bpf knobs "$OFFCPU" "$ROOT/build/x86_64/blocker" || exit 0
BLOCKER=$ROOT/build/x86_64/blocker

# The ring for the stack copies is the events map: MiB << 20 entries.
ring() { grep -E '^map events ' "$1" | awk '{ print $4 }'; }
"$OFFCPU" -v --dwarf-buffer 1 -o "$WORK/b1.data" -- "$BLOCKER" -t 1 >/dev/null 2>"$WORK/b1.err"
"$OFFCPU" -v -o "$WORK/b4.data" -- "$BLOCKER" -t 1 >/dev/null 2>"$WORK/b4.err"
if [ "$(ring "$WORK/b1.err")" = $((1 << 20)) ] && [ "$(ring "$WORK/b4.err")" = $((4 << 20)) ]; then
	pass knobs-dwarf-buffer
else
	fail knobs-dwarf-buffer "events map $(ring "$WORK/b1.err") with --dwarf-buffer 1, $(ring "$WORK/b4.err") by default"
fi

# A file's tables are read at its first pc, so the stacks must run through
# more than 1 MiB of CFI rows and index, not merely map it (perf's 28 files
# did, its pipe's stacks touch 0.4 MiB): Debian's clang reading its source
# from a pipe that waits blocks under libLLVM and libclang-cpp (8.6 MiB by
# -v).  Over a 1 MiB budget some lookups go without (counted), not at 32.
over() { sed -n 's/.* \([0-9]*\) lookups over the --unwind-tables budget.*/\1/p' "$1"; }
pf() { (sleep 0.5; echo 'int x;') |
	"$OFFCPU" -v "$@" -o "$WORK/pf.data" -- clang -x c -c - -o /dev/null >/dev/null 2>"$WORK/pf.err"
	over "$WORK/pf.err"; }
small=$(pf --unwind-tables 1)
# The stacks those lookups cut are said to be cut by the budget, not by
# code without tables (whose hint would send the user to rebuild).
budget_cut=$(sed -n 's/.*cut: CFI rows over the --unwind-tables budget: \([0-9]*\) .*/\1/p' "$WORK/pf.err")
default=$(pf)
if [ "${small:-0}" -gt 0 ] && [ "$default" = 0 ] && [ "${budget_cut:-0}" -gt 0 ]; then
	pass knobs-unwind-tables
else
	fail knobs-unwind-tables "lookups over the budget: '$small' at 1 MiB (stacks cut by it: '$budget_cut'), '$default' at the default"
fi
"$OFFCPU" -o "$WORK/py.data" -- /usr/bin/python3 -c 'import time, json, decimal, sqlite3
for _ in range(30): time.sleep(0.01)' >/dev/null 2>"$WORK/py.err"

# A kallsyms file whose schedule is renamed: the report names the kernel's
# frames from it, and from /proc/kallsyms without it.
sed 's/ \([tT]\) schedule$/ \1 offcpu_test_schedule/' /proc/kallsyms > "$WORK/kallsyms"
"$OFFCPU" report -i "$WORK/b4.data" --folded --kallsyms "$WORK/kallsyms" > "$WORK/k1" 2>&1
"$OFFCPU" report -i "$WORK/b4.data" --folded > "$WORK/k2" 2>&1
if grep -q ';offcpu_test_schedule_\[k\]' "$WORK/k1" && ! grep -q offcpu_test_schedule "$WORK/k2" &&
   grep -q ';schedule_\[k\]' "$WORK/k2"; then
	pass knobs-report-kallsyms
else
	fail knobs-report-kallsyms "$(head -c 300 "$WORK/k1")"
fi

# archive -v: one line per archived ELF file saying where it was taken
# from (kallsyms, when archived, has none); none without -v.
"$OFFCPU" archive -v -i "$WORK/py.data" -o "$WORK/a1.tgz" > "$WORK/a1.out" 2>&1
"$OFFCPU" archive -i "$WORK/py.data" -o "$WORK/a2.tgz" > "$WORK/a2.out" 2>&1
files=$(tar tzf "$WORK/a1.tgz" | grep -c '/elf$')
from=$(grep -c '^offcpu: archive: .* from ' "$WORK/a1.out")
if [ -n "$files" ] && [ "$files" -gt 0 ] && [ "$from" = "$files" ] &&
   ! grep -q ' from ' "$WORK/a2.out"; then
	pass knobs-archive-verbose
else
	fail knobs-archive-verbose "$from 'from' lines for '$files' files; without -v: $(grep -c ' from ' "$WORK/a2.out")"
fi

# archive --symfs: a program recorded from a directory that is gone
# since, its copy under DIR: archived from DIR/path with --symfs, not at
# all without (another machine's recording read on the host).
# A build-id cache of its own: ~/.debug may hold the program from an
# earlier run, and archive would take it from there, with or without DIR.
mkdir -p "$WORK/gone" "$WORK/bidcache"
cp "$ROOT/build/x86_64/blocker-bid" "$WORK/gone/bid"
PERF_BUILDID_DIR="$WORK/bidcache" "$OFFCPU" -o "$WORK/s.data" -- "$WORK/gone/bid" -t 1 >/dev/null 2>&1
rm -rf "$WORK/bidcache"/.build-id "$WORK/bidcache"/[!.]*
mkdir -p "$WORK/symfs$WORK"
mv "$WORK/gone" "$WORK/symfs$WORK/gone"
PERF_BUILDID_DIR="$WORK/bidcache" "$OFFCPU" archive -v --symfs "$WORK/symfs" -i "$WORK/s.data" \
	-o "$WORK/s1.tgz" > "$WORK/s1.out" 2>&1
PERF_BUILDID_DIR="$WORK/bidcache" "$OFFCPU" archive -v -i "$WORK/s.data" -o "$WORK/s2.tgz" \
	> "$WORK/s2.out" 2>&1
if grep -qF "$WORK/gone/bid from $WORK/symfs$WORK/gone/bid" "$WORK/s1.out" &&
   tar tzf "$WORK/s1.tgz" | grep -q 'gone/bid/.*/elf$' &&
   ! tar tzf "$WORK/s2.tgz" | grep -q 'gone/bid'; then
	pass knobs-archive-symfs
else
	fail knobs-archive-symfs "$(grep -F gone "$WORK/s1.out" | head -c 300)"
fi

# report -n, -m, -s on the same recording: the entries of the text output
# ("  15.11%      1.022 s        1  blocker/6711 ...": share, total, samples).
# Printed: share and samples (the total's unit varies; the share follows it).
entries() { awk '$1 ~ /^[0-9.]+%$/ && $3 ~ /^[mun]?s$/ { print substr($1, 1, length($1) - 1), $4 }'; }
"$OFFCPU" report -i "$WORK/b4.data" -n 0 2>/dev/null | entries > "$WORK/all"
"$OFFCPU" report -i "$WORK/b4.data" -n 2 2>/dev/null | entries > "$WORK/top2"
n_all=$(wc -l < "$WORK/all")
if [ "$(wc -l < "$WORK/top2")" = 2 ] && [ "$n_all" -gt 2 ] && cmp -s "$WORK/top2" <(head -n 2 "$WORK/all"); then
	pass knobs-report-top
else
	fail knobs-report-top "-n 2 gave $(wc -l < "$WORK/top2") entries of $n_all"
fi
"$OFFCPU" report -i "$WORK/b4.data" -n 0 -m 10 2>/dev/null | entries > "$WORK/m10"
small=$(awk '$1 < 10' "$WORK/m10" | wc -l)
if [ -s "$WORK/m10" ] && [ "$small" = 0 ] && [ "$(wc -l < "$WORK/m10")" -lt "$n_all" ]; then
	pass knobs-report-min-percent
else
	fail knobs-report-min-percent "$small entries under 10 % of $(wc -l < "$WORK/m10") shown, $n_all in all"
fi
# By samples: the samples column never grows; by time (the default) it does
# somewhere in this recording (a 700 ms block is one sample), so the two differ.
"$OFFCPU" report -i "$WORK/b4.data" -n 0 -s count 2>/dev/null | entries > "$WORK/bycount"
sorted_desc() { awk -v c="$2" 'NR > 1 && $c > prev { bad = 1 } { prev = $c } END { exit bad }' "$1"; }
if [ -s "$WORK/bycount" ] && sorted_desc "$WORK/bycount" 2 && sorted_desc "$WORK/all" 1 && ! sorted_desc "$WORK/all" 2; then
	pass knobs-report-sort
else
	fail knobs-report-sort "by count: $(awk '{ print $2 }' "$WORK/bycount" | tr '\n' ' ')"
fi

# --nice: the recorder's main thread runs at -20 by default (a busy
# machine must not starve the ring's reader), at --nice N when asked, and
# at the nice it was started with when that is not 0; the command it runs
# keeps the caller's.  Field 19 of /proc/PID/stat, read by the command
# (its parent is offcpu) while the recording runs.
nices() {
	"$@" -o "$WORK/nice.data" -- sh -c \
		'echo $(cut -d" " -f19 /proc/$PPID/stat) $(cut -d" " -f19 /proc/self/stat)' \
		2>/dev/null | tail -n 1
}
# The test's own nice (0 in CI; a developer may run it niced).
base=$(nice)
up=$((base + 3 > 19 ? 19 : base + 3))
want_default="$([ "$base" = 0 ] && echo -20 || echo "$base") $base"
n_default=$(nices "$OFFCPU")
n_asked=$(nices "$OFFCPU" --nice 5)
n_started=$(nices nice -n 3 "$OFFCPU")
if [ "$n_default" = "$want_default" ] && [ "$n_asked" = "5 $base" ] && [ "$n_started" = "$up $up" ]; then
	pass knobs-nice
else
	fail knobs-nice "recorder, command: '$n_default' by default (want $want_default), '$n_asked' with --nice 5 (5 $base), '$n_started' under nice -n 3 ($up $up)"
fi
T=knobs
bad_value nice "expected a number from -20 to 19" --nice 20
