#!/bin/bash
# Makes the BTF archive embedded in offcpu for one board: every committed
# minimal BTF of that architecture (btf/manifest.tsv), plus, with
# BTF_VMLINUX, one made now for a vendor's kernel against this BPF object,
# and with BTF_EXTRA ("FULL_BTF:RELEASE ...", the QEMU matrix's unlisted
# kernels), one made now for each.
#
#   btf/archive.sh TARGET BPF_OBJ OUT [BTF_VMLINUX]
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
TARGET=$1 OBJ=$2 OUT=$3 VMLINUX=${4:-}

uname_m=$(awk '$1 == "UNAME_M" { print $3 }' "$ROOT/board/$TARGET.mk")
specs=()
if [ -f "$HERE/manifest.tsv" ]; then
	# release  arch  package  version  sha256  file
	while IFS=$'\t' read -r release arch _pkg _ver sha file; do
		[ "$release" = release ] && continue
		[ "$arch" = "$uname_m" ] || continue
		echo "$sha  $HERE/$file" | sha256sum -c --quiet - ||
			{ echo "archive.sh: $file does not match its manifest sha256" >&2; exit 1; }
		specs+=("$HERE/$file:$release")
	done < "$HERE/manifest.tsv"
fi
if [ -n "$VMLINUX" ]; then
	tmp=$(dirname "$OUT")/vendor
	mkdir -p "$tmp"
	release=${BTF_RELEASE:-}
	[ -n "$release" ] || release=$("$HERE/min_btf.sh" release "$VMLINUX")
	"$HERE/min_btf.sh" reduce "$VMLINUX" "$TARGET" "$OBJ" "$tmp/$release.btf"
	# The vendor's kernel replaces a committed file of the same release.
	kept=()
	for s in "${specs[@]}"; do
		[ "${s##*:}" = "$release" ] || kept+=("$s")
	done
	specs=("${kept[@]}" "$tmp/$release.btf:$release")
	echo "btf: $TARGET archive adds $release from $VMLINUX ($(stat -c %s "$tmp/$release.btf") bytes)" >&2
fi
for extra in ${BTF_EXTRA:-}; do
	release=${extra##*:}
	mkdir -p "$(dirname "$OUT")/extra"
	"$HERE/min_btf.sh" reduce "${extra%:*}" "$TARGET" "$OBJ" "$(dirname "$OUT")/extra/$release.btf"
	specs+=("$(dirname "$OUT")/extra/$release.btf:$release")
	echo "btf: $TARGET archive adds $release (made now from ${extra%:*})" >&2
done
python3 "$HERE/archive.py" "$OUT" "$uname_m" "${specs[@]}"
