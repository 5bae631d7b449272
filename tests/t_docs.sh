#!/bin/bash
# The man pages (docs/*.1): they render without a warning, each names every
# option its command's --help lists, and `make install` puts the binary and
# the pages where a package wants them.
source "$(dirname "$0")/lib.sh"

# The long options a help text lists ("  -o, --output FILE", "      --wakers").
help_options() { grep -oE '^ +(-[A-Za-z], )?--[a-z][a-z-]*' | grep -oE -- '--[a-z][a-z-]*' | sort -u; }
# The options a page names, its roff escapes undone.
page_options() { sed 's/\\-/-/g' "$1" | grep -oE -- '--[a-z][a-z-]*' | sort -u; }

for page in "$ROOT"/docs/*.1; do
	name=$(basename "$page" .1)
	warn=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$page" 2>&1 >/dev/null)
	[ -z "$warn" ] && pass "docs-$name-renders" || fail "docs-$name-renders" "$(echo "$warn" | head -n 2 | tr '\n' ' ')"
	case $name in
	offcpu) cmd=() ;;
	offcpu-*) cmd=("${name#offcpu-}") ;;
	esac
	"$OFFCPU" "${cmd[@]}" --help 2>&1 | help_options > "$WORK/help"
	missing=$(comm -23 "$WORK/help" <(page_options "$page") | tr '\n' ' ')
	if [ ! -s "$WORK/help" ]; then
		fail "docs-$name-every-option" "no options in '$name --help'"
	elif [ -n "$missing" ]; then
		fail "docs-$name-every-option" "not in docs/$name.1: $missing"
	else
		pass "docs-$name-every-option"
	fi
done
# The check must be able to fail: an option the page lacks.
printf -- '      --banana-split   no such option\n' | help_options | comm -23 - <(page_options "$ROOT/docs/offcpu.1") |
	grep -q banana && pass docs-option-check-can-fail || fail docs-option-check-can-fail "a missing option was not found"

dest=$WORK/dest
if make -s -C "$ROOT" install PREFIX=/usr DESTDIR="$dest" >"$WORK/install.log" 2>&1 &&
   "$dest/usr/bin/offcpu" --version >/dev/null 2>&1 &&
   [ -s "$dest/usr/share/man/man1/offcpu.1" ] && [ -s "$dest/usr/share/man/man1/offcpu-report.1" ] &&
   [ -s "$dest/usr/share/man/man1/offcpu-archive.1" ]; then
	pass docs-make-install
else
	fail docs-make-install "$(tail -n 2 "$WORK/install.log" | tr '\n' ' ') $(find "$dest" -type f | tr '\n' ' ')"
fi
