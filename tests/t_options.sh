#!/bin/bash
# The option table (tests/options.tsv): every option the three help texts
# list has an entry naming the check that fails when the option has no
# effect.  An option added to a help text without an entry fails here
# (tests/run.sh, after a full run, fails an entry whose check did not run).
source "$(dirname "$0")/lib.sh"
TABLE=$ROOT/tests/options.tsv

[ -x "$OFFCPU" ] || { fail options "$OFFCPU not built"; exit 0; }

# options HELPFILE: the options its option lines name (first column, up to
# the value or the description, an optional value "[=...]" cut), one a line.
options() {
	sed -nE 's/^ +(-.*)$/\1/p' "$1" | sed -E 's/  .*//; s/\[=[^]]*\]//' | tr ',' ' ' |
		awk '{ for (i = 1; i <= NF && $i ~ /^--?[A-Za-z]/; i++) print $i }' | sort -u
}

# uncovered CMD HELPFILE: the options of HELPFILE without an entry for CMD.
uncovered() {
	options "$2" | while read -r o; do
		awk -F'\t' -v c="$1" -v o="$o" '$1 == c {
			n = split($2, a, ", "); for (i = 1; i <= n; i++) if (a[i] == o) f = 1 }
			END { exit !f }' "$TABLE" || echo "$o"
	done
}

for cmd in record report archive; do
	if [ $cmd = record ]; then "$OFFCPU" --help; else "$OFFCPU" $cmd --help; fi >"$WORK/$cmd.help" 2>&1
	n=$(options "$WORK/$cmd.help" | wc -l)
	miss=$(uncovered $cmd "$WORK/$cmd.help" | tr '\n' ' ')
	if [ "$n" -lt 3 ]; then
		fail "options-table-$cmd" "only $n options read from offcpu $cmd --help"
	elif [ -n "$miss" ]; then
		fail "options-table-$cmd" "in --help, not in tests/options.tsv: $miss"
	else
		pass "options-table-$cmd"
	fi
	# Entries without a check yet: said, not hidden.
	awk -F'\t' -v c=$cmd '$1 == c && $4 == "-" { print $2 "\t" $5 }' "$TABLE" |
		while IFS=$'\t' read -r o why; do
			o=${o##*, }
			skip "options-check-$cmd-${o#"${o%%[!-]*}"}" "$why"
		done
done
# Control: a help text with one more option must fail the table.
{ cat "$WORK/record.help"; echo "      --frobnicate N    a new option"; } >"$WORK/new.help"
check_fails options-table-new-option-fails "an option missing from the table passed" \
	test -z "$(uncovered record "$WORK/new.help")"
