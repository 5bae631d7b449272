#!/bin/bash
# The registry is not always consistent: a suite's index for one
# architecture can fail its Release file for days.  Simulated on the
# loopback (tests/broken_mirror.py serves trixie's real, signed InRelease and
# wrong bytes for its indexes), from an apt state with no lists of that
# index, as on a fresh machine: the other architectures of the suite stay
# usable, the failure is one line naming the index and the registry's error,
# a cell whose listed kernel cannot be had boots what its series offers (6.12:
# trixie, then bookworm-backports) and still runs every recording.
source "$(dirname "$0")/lib.sh"
CACHE=${OFFCPU_CACHE:-$HOME/.cache/offcpu}
APT=$ROOT/toolchain/apt.sh
FETCH=$ROOT/qemu-tests/fetch.sh

# The real indexes, current (a no-op when they are), to copy from.
"$APT" --cache policy >/dev/null 2>"$WORK/refresh.err"
for s in trixie bookworm-backports; do
	rel=$(compgen -G "$CACHE/apt/index/${s}_amd64/lists/*_dists_${s}_InRelease" | head -1)
	[ -n "$rel" ] || { fail fetch-setup "no $s InRelease in $CACHE/apt: $(tail -n 1 "$WORK/refresh.err")"; exit 0; }
	releases+=("$s=$rel")
done
python3 "$ROOT/tests/broken_mirror.py" "$WORK/port" "${releases[@]}" &
mirror=$!
trap 'kill $mirror 2>/dev/null; rm -rf "$WORK"' EXIT
for _ in $(seq 50); do [ -s "$WORK/port" ] && break; sleep 0.1; done
BROKEN=http://127.0.0.1:$(cat "$WORK/port")/debian

# A fresh apt state but for the other indexes' lists (hard links, stamps
# kept, so nothing else is fetched): trixie/s390x has none of its own.
fresh_apt() {	# DIR INDEX...(left out)
	local dir=$1 d
	shift
	mkdir -p "$dir/index"
	for d in "$CACHE"/apt/index/*; do
		[[ " $* " == *" $(basename "$d") "* ]] && continue
		cp -al "$d" "$dir/index/"
	done
}
fresh_apt "$WORK/apt1" trixie_s390x
export OFFCPU_APT_DIR=$WORK/apt1 OFFCPU_APT_INDEX_URI="trixie/s390x=$BROKEN"
"$APT" --cache policy linux-image-amd64:amd64 linux-image-s390x:s390x >"$WORK/policy" 2>"$WORK/apt.err"
lines=$(grep -c '^apt.sh: index trixie/s390x unusable (no lists kept' "$WORK/apt.err")
if [ "$lines" = 1 ] && grep -qE 'unexpected size|Hash Sum mismatch' "$WORK/apt.err" &&
   ! grep -q 127.0.0.1 "$WORK/apt.err"; then
	pass fetch-broken-index-one-line
else
	fail fetch-broken-index-one-line "$lines lines: $(head -c 300 "$WORK/apt.err")"
fi
# The rest of trixie stays: amd64 from trixie, s390x only from other suites.
awk '/^linux-image-amd64/ { a = 1 } /^linux-image-s390x/ { a = 0; s = 1 }
	a && /trixie\/main amd64 Packages/ { ta = 1 } s && /trixie\/main s390x Packages/ { ts = 1 }
	s && /bookworm-backports\/main s390x Packages/ { bs = 1 }
	END { exit !(ta && !ts && bs) }' "$WORK/policy" &&
	pass fetch-broken-index-keeps-suite ||
	fail fetch-broken-index-keeps-suite "$(tr '\n' ' ' < "$WORK/policy" | head -c 400)"

# OFFCPU_APT_INDEXES (toolchain/progress.sh's opt-in) refreshes only the
# indexes it names: trixie/s390x, broken and without lists, is not asked
# for, so it costs no line and no time; named, it is refreshed (and fails).
fresh_apt "$WORK/apt3" trixie_s390x
export OFFCPU_APT_DIR=$WORK/apt3 OFFCPU_APT_INDEX_URI="trixie/s390x=$BROKEN"
OFFCPU_APT_INDEXES="bookworm/amd64 bookworm/source" "$APT" --cache policy >/dev/null 2>"$WORK/apt3.err"
if [ ! -s "$WORK/apt3.err" ] && [ ! -e "$WORK/apt3/index/trixie_s390x" ]; then
	OFFCPU_APT_INDEXES="trixie/s390x" "$APT" --cache policy >/dev/null 2>"$WORK/apt3.err"
	if grep -q '^apt.sh: index trixie/s390x unusable' "$WORK/apt3.err" &&
	   [ "$(grep -c '^apt.sh: index' "$WORK/apt3.err")" = 1 ]; then
		pass fetch-apt-indexes-restrict
	else
		fail fetch-apt-indexes-restrict "trixie/s390x named: $(head -c 300 "$WORK/apt3.err")"
	fi
else
	fail fetch-apt-indexes-restrict "trixie/s390x not named, still refreshed: $(head -c 300 "$WORK/apt3.err")"
fi

# A kernel list the registry has moved past (trixie s390x lists a version no
# suite holds): the cell falls back, and says why.
awk -F'\t' -v OFS='\t' '$1 == "s390x" && $2 == "trixie" { $3 = "linux-image-6.12.999+deb13-s390x"; $4 = "6.12.999-1" } 1' \
	"$ROOT/qemu-tests/kernels.tsv" > "$WORK/kernels.tsv"
export OFFCPU_KERNELS=$WORK/kernels.tsv
if out=$("$FETCH" kernel s390x trixie 2>"$WORK/fetch.err"); then
	IFS=$'\t' read -r image pkg ver from note <<< "$out"
	if [ "$from" = bookworm-backports ] && [ -s "$image" ] && [[ $note == *"index trixie/s390x unusable"* ]]; then
		pass fetch-falls-back-by-series
	else
		fail fetch-falls-back-by-series "$out"
	fi
else
	fail fetch-falls-back-by-series "$(tail -n 1 "$WORK/fetch.err")"
fi
# trixie's amd64 kernel is still the listed one.
out=$("$FETCH" kernel x86_64 trixie 2>&1)
[[ $out == *$'\ttrixie\tlisted' ]] && pass fetch-other-arch-listed || fail fetch-other-arch-listed "$out"

# Both suites of the series broken: one line naming the board, the suites,
# and each index's error.
fresh_apt "$WORK/apt2" trixie_s390x bookworm-backports_s390x
export OFFCPU_APT_DIR=$WORK/apt2 OFFCPU_APT_INDEX_URI="trixie/s390x=$BROKEN bookworm-backports/s390x=$BROKEN"
if "$FETCH" kernel s390x trixie >/dev/null 2>"$WORK/fetch2.err"; then
	fail fetch-fails-in-one-line "fetched with both indexes broken"
elif grep -q 'index trixie/s390x unusable' "$WORK/fetch2.err" &&
     grep -q 'index bookworm-backports/s390x unusable' "$WORK/fetch2.err" &&
     tail -n 1 "$WORK/fetch2.err" | grep -q 'no kernel for s390x in trixie or bookworm-backports'; then
	pass fetch-fails-in-one-line
else
	fail fetch-fails-in-one-line "$(tr '\n' ' ' < "$WORK/fetch2.err" | head -c 400)"
fi

# A package record larger than a pipe holds (Debian's libc6-dbg lists many
# versions): reading one field must not end the fetch silently (apt-cache
# killed by SIGPIPE under pipefail and set -e: the riscv64 cells of a fresh
# machine once had no libc and no word why).  A stand-in apt prints 256 KiB
# after the field and builds the .deb it is asked to download.
mkdir -p "$WORK/stub/pkg/bin" "$WORK/stub/pkg/DEBIAN" "$WORK/stubcache"
printf '#!/bin/sh\necho stub\n' > "$WORK/stub/pkg/bin/busybox"
chmod +x "$WORK/stub/pkg/bin/busybox"
printf 'Package: busybox-static\nVersion: 1:1.0-1\nArchitecture: amd64\nMaintainer: t\nDescription: t\n' \
	> "$WORK/stub/pkg/DEBIAN/control"
cat > "$WORK/stub/apt" <<EOF
#!/bin/bash
case "\$*" in
*show*) echo "Package: busybox-static"; echo "Version: 1:1.0-1"; head -c 262144 /dev/zero | tr '\\\\0' x | fold -w 80 ;;
*download*) dpkg-deb -b -Zgzip "$WORK/stub/pkg" busybox-static_1.0-1_amd64.deb >/dev/null ;;
esac
EOF
chmod +x "$WORK/stub/apt"
if out=$(OFFCPU_APT=$WORK/stub/apt OFFCPU_CACHE=$WORK/stubcache "$FETCH" busybox x86_64 2>"$WORK/stub.err") &&
   [ "$("$out")" = stub ]; then
	pass fetch-big-record-read-whole
else
	fail fetch-big-record-read-whole "rc $?, ${out:-no path}: $(tail -n 1 "$WORK/stub.err")"
fi

# The cell itself, on the fallback kernel: all its recordings, its row names
# what it booted, the BTF of recording (b) made now.
if [ -z "${OFFCPU_SKIP_QEMU:-}" ] && command -v qemu-system-s390x >/dev/null; then
	export OFFCPU_APT_DIR=$WORK/apt1 OFFCPU_APT_INDEX_URI="trixie/s390x=$BROKEN"
	"$ROOT/qemu-tests/run.sh" s390x-6.12 >"$WORK/cell.log" 2>&1
	line=$(grep -E '^(PASS|FAIL) s390x-6.12' "$WORK/cell.log")
	if [[ $line == PASS*"(bookworm-backports), not the listed kernel"*"minimal BTF made now"* ]] &&
	   [[ $line == *"btf kernel / embedded / none"* ]]; then
		pass fetch-fallback-cell-runs-everything
	else
		fail fetch-fallback-cell-runs-everything "${line:-$(tail -n 3 "$WORK/cell.log" | tr '\n' ' ')}"
	fi
fi
