#!/bin/bash
# Builds what one target links against (build.sh, symlibs.sh, protobuf.sh:
# each only when it is not current) with one line per step on the terminal,
#   [toolchain x86_64 3/7] libelf 0.188 (0m41s)
# instead of thousands of configure and compiler lines: those go to
# $OFFCPU_CACHE/log/<builder>-<target>.log, named with its last lines when
# a step fails.  The builders are not changed: their stamps digest their own
# text, so a cache built before keeps every toolchain.
#
#   toolchain/progress.sh <host|board>
#
# OFFCPU_TC_WHY: what asked for the build (the Makefile passes its goals),
# said in the first line.  OFFCPU_APT_INDEXES: toolchain/apt.sh refreshes
# only those indexes; unset, this sets the ones a toolchain reads (bookworm's
# packages of the host and the board, the sources of bookworm and of
# versions.mk's LIBBPF_SUITES), so a first build does not wait for every
# suite and architecture of the QEMU matrix (which refreshes the rest).
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
CACHE=${OFFCPU_CACHE:-$HOME/.cache/offcpu}
TARGET=${1:?usage: progress.sh <host|board>}
mkvar() { awk -v k="$2" '$1 == k { sub(/^[^=]*=[ \t]*/, ""); print; exit }' "$1"; }

if [ "$TARGET" != host ] && [ ! -e "$ROOT/board/$TARGET.mk" ]; then
	echo "toolchain: no board/$TARGET.mk (boards: $(cd "$ROOT/board" && ls -- *.mk | sed 's/\.mk$//' | paste -sd' '))" >&2
	exit 1
fi

# Steps: build.sh logs 2 (host: libbpf; libelf and libdw) or 5 (a board:
# the musl sysroot, zlib, libelf, libdw, libbpf); symlibs.sh and
# protobuf.sh one each.
if [ "$TARGET" = host ]; then nbuild=2; else nbuild=5; fi
total=$((nbuild + 2))
declare -A first=([build]=0 [symlibs]=$nbuild [protobuf]=$((nbuild + 1)))
declare -A logname=([build]=toolchain [symlibs]=symlibs [protobuf]=protobuf)

# Which parts are stale.  A current one still runs once (a no-op but for
# build.sh touching a stamp older than a checkout of the scripts).
todo=()
for part in build symlibs protobuf; do
	if "$HERE/$part.sh" --check "$TARGET" 2>/dev/null; then
		"$HERE/$part.sh" "$TARGET" >/dev/null 2>&1 || todo+=("$part")
	else
		todo+=("$part")
	fi
done
[ ${#todo[@]} -gt 0 ] || exit 0

if [ -z "${OFFCPU_APT_INDEXES:-}" ]; then
	host_arch=$(dpkg --print-architecture)
	idx="bookworm/$host_arch bookworm/source"
	if [ "$TARGET" != host ] && [ "$(mkvar "$ROOT/board/$TARGET.mk" MUSL_FROM)" != source ]; then
		idx+=" bookworm/$(mkvar "$ROOT/board/$TARGET.mk" DEB_ARCH)"
	fi
	for s in $(mkvar "$HERE/versions.mk" LIBBPF_SUITES); do idx+=" $s/source"; done
	export OFFCPU_APT_INDEXES=$idx
fi

mkdir -p "$CACHE/log"
start=$SECONDS
elapsed() { local s=$((SECONDS - start)); printf '%dm%02ds' $((s / 60)) $((s % 60)); }
what=
for part in "${todo[@]}"; do
	case $part in
	build) what+="${what:+, }$([ "$TARGET" = host ] && echo "libbpf, libelf, libdw (glibc)" ||
		echo "musl sysroot, zlib, libelf, libdw, libbpf")" ;;
	symlibs) what+="${what:+, }libiberty, liblzma" ;;
	protobuf) what+="${what:+, }protobuf-c" ;;
	esac
done
# Measured on a 2-CPU machine under load (toolchain/README.md): x86_64 in
# 6 minutes at load 3 to 4.7; other boards 6 to 22 at load 4.5 to 7.7.
echo "toolchain $TARGET: building $what from Debian sources${OFFCPU_TC_WHY:+ for $OFFCPU_TC_WHY}:" \
	"configure scripts and static builds, about 6 minutes per target on 2 busy CPUs, once" \
	"(cached in $CACHE/toolchain); logs in $CACHE/log/"

# run_part PART: one builder, its step lines shown, the rest in its log;
# non-zero, with the log named and its tail, when it fails.
run_part() {
	local part=$1 log=$CACHE/log/${logname[$1]}-$TARGET.log n=${first[$1]} step=starting rc='' line msg
	[ "$part" = build ] && echo "[toolchain $TARGET $n/$total] package indexes (toolchain/apt.sh) and libbpf's pick ($(elapsed))"
	while IFS= read -r line; do
		case $line in
		"@@progress-rc "*) rc=${line#@@progress-rc } ;;
		"${logname[$part]}[$TARGET]: "*)
			msg=${line#*]: }
			if [[ $msg == "done in "* ]]; then
				:
			elif [[ $msg =~ ^(musl|zlib|libelf,?|libdw|libbpf|libiberty|protobuf-c)\  ]]; then
				n=$((n + 1)) step=$msg
				echo "[toolchain $TARGET $n/$total] $msg ($(elapsed))"
			else
				echo "$line"
			fi ;;
		"apt.sh: "*) echo "$line" ;;
		esac
	done < <(echo "== $(date -u '+%F %T') $part.sh $TARGET" >"$log"
		"$HERE/$part.sh" "$TARGET" 2>&1 | tee -a "$log"
		echo "@@progress-rc ${PIPESTATUS[0]}")
	[ "${rc:-1}" = 0 ] && return 0
	echo "toolchain $TARGET: $part.sh failed (exit ${rc:-?}) at step $n/$total ($step) after $(elapsed); its full log: $log, which ends:" >&2
	tail -n 15 "$log" | sed 's/^/    /' >&2
	return 1
}

# A board's libiberty, liblzma and protobuf-c are built with its musl
# sysroot (build.sh first); then they build side by side, their configure
# scripts (one CPU each, most of the time) overlapping.  The host's three
# need nothing of each other.
pids=() failed=
for part in "${todo[@]}"; do
	if [ "$part" = build ] && [ "$TARGET" != host ]; then
		run_part build || exit 1
	else
		run_part "$part" &
		pids+=($!)
	fi
done
for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
[ -z "$failed" ] || exit 1
echo "toolchain $TARGET: ready in $(elapsed)"
