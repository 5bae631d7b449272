#!/bin/bash
# Options whose effect is a size or a source, each checked against its
# default: --dwarf-buffer (the copies' ring), --unwind-tables (the CFI rows'
# budget), report --kallsyms (the kernel's names), archive -v (where each
# file came from).  tests/options.tsv names these checks.
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

# Debian's python3 and the modules it loads hold more than 1 MiB of CFI
# rows: over a 1 MiB budget some lookups go without (counted), not at 32.
over() { sed -n 's/.* \([0-9]*\) lookups over the --unwind-tables budget.*/\1/p' "$1"; }
py() { "$OFFCPU" -v "$@" -o "$WORK/py.data" -- /usr/bin/python3 -c 'import time, json, decimal, sqlite3
for _ in range(30): time.sleep(0.01)' >/dev/null 2>"$WORK/py.err"; over "$WORK/py.err"; }
small=$(py --unwind-tables 1)
default=$(py)
if [ "${small:-0}" -gt 0 ] && [ "$default" = 0 ]; then
	pass knobs-unwind-tables
else
	fail knobs-unwind-tables "lookups over the budget: '$small' at 1 MiB, '$default' at the default"
fi

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
