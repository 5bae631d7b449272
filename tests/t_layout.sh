#!/bin/bash
# The source tree by concern (README.md, Layout): no source directly in src/
# but main.c, and each folder includes only the folders below it:
#   report/, archive/  format/, symbols/, lib/ (and themselves)
#   symbols/           format/, lib/
#   format/            lib/
#   lib/               itself only
#   unwind/            lib/, symbols/ (a file's debug file), and bpf's "offcpu.h"
#   record/            anything but report/ and archive/
# An include names its folder ("format/perf_data.h"); an unqualified one may
# only be bpf's "offcpu.h" (record/, unwind/) or the generated
# "profile.pb-c.h" (report/).  LAYOUT_SRC checks another tree (default src/).
source "$(dirname "$0")/lib.sh"
SRC=${LAYOUT_SRC:-$ROOT/src}

# may_include FOLDER INCLUDED: whether a file of src/FOLDER may include INCLUDED.
may_include() {
	local from=$1 inc=$2 to
	case $inc in
	*..*) return 1 ;;
	*/*) to=${inc%%/*} ;;
	offcpu.h) case $from in record|unwind) return 0 ;; *) return 1 ;; esac ;;
	profile.pb-c.h) [ "$from" = report ]; return ;;
	*) return 1 ;;
	esac
	[ "$to" = "$from" ] && return 0
	case $from in
	report|archive) [[ $to == @(format|symbols|lib) ]] ;;
	symbols) [[ $to == @(format|lib) ]] ;;
	format) [ "$to" = lib ] ;;
	lib) return 1 ;;
	unwind) [[ $to == @(lib|symbols) ]] ;;
	record) [[ $to != @(report|archive) ]] ;;
	*) return 1 ;;	# a folder the rule does not know: add it here first
	esac
}

# violations DIR: "file: #include ..." for every include the rule forbids
# (quoted, or angled and naming a folder of DIR); non-zero if any.
violations() {
	local dir=$1 f from inc line bad=0
	while IFS= read -r f; do
		from=${f#"$dir"/}
		from=${from%%/*}
		while IFS= read -r line; do
			inc=$(sed -E 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*["<]([^">]*)[">].*/\1/' <<<"$line")
			if [[ $line == *'<'* ]] && [ ! -d "$dir/${inc%%/*}" ]; then
				continue	# a system header
			fi
			may_include "$from" "$inc" && continue
			echo "${f#"$dir"/}: $line"
			bad=1
		done < <(grep -E '^[[:space:]]*#[[:space:]]*include[[:space:]]*["<]' "$f")
	done < <(find "$dir" -mindepth 2 -type f \( -name '*.[ch]' -o -name '*.S' \) | sort)
	return $bad
}

# flat DIR: sources directly in DIR other than main.c; non-zero if any.
flat() {
	local f bad=0
	for f in "$1"/*.[chS]; do
		[ -e "$f" ] || continue
		[ "${f##*/}" = main.c ] && continue
		echo "${f#"$1"/}"
		bad=1
	done
	return $bad
}

if flat "$SRC" >"$WORK/flat"; then pass layout-no-flat-sources; else
	fail layout-no-flat-sources "directly in src/: $(tr '\n' ' ' < "$WORK/flat")"; fi
if violations "$SRC" >"$WORK/bad"; then pass layout-includes; else
	fail layout-includes "$(head -n 5 "$WORK/bad" | tr '\n' ' ')"; fi
# At least one file per folder was read: an empty find would pass anything.
n=$(find "$SRC" -mindepth 2 -type f -name '*.c' | wc -l)
if [ "$n" -ge 7 ]; then pass layout-tree-read; else
	fail layout-tree-read "$n .c files under $SRC/*/"; fi

# Controls: a copy of the tree with one forbidden include, and one with a
# source dropped directly in src/, must be caught.
cp -r "$SRC" "$WORK/src"
sed -i '0,/^#include "/s//#include "record\/wakers.h"\n&/' "$WORK/src/symbols/symbolize.c"
check_fails layout-includes-control "symbols/ including record/ went unnoticed" \
	violations "$WORK/src"
rm -rf "$WORK/src" && cp -r "$SRC" "$WORK/src" && touch "$WORK/src/util.c"
check_fails layout-flat-control "src/util.c went unnoticed" flat "$WORK/src"
exit 0
