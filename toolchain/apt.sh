#!/bin/bash
# Private apt configuration: its own sources list, lists and cache under
# $OFFCPU_CACHE/apt, so fetching kernels, cross packages and sources for other
# suites never touches the system's apt state.  The mirror URI is read from the
# system's own sources so no registry host is written into this repository.
#
# Usage: toolchain/apt.sh <apt-get args...>      e.g. apt.sh download busybox-static:arm64/bookworm
#        toolchain/apt.sh --cache <apt-cache args...>
#        toolchain/apt.sh --update                (refresh stale indexes now)
#        toolchain/apt.sh --failed                (the indexes whose last refresh failed, with why)
#
# Each index (one suite's packages for one architecture, or its sources) is
# refreshed with an apt configuration of its own.  apt verifies a suite as
# one transaction: a single index that does not match its Release file (a
# mirror caught mid-sync, or broken for days) makes it drop the whole suite,
# every architecture, and a fresh machine then has none of it.  Apart, a
# broken trixie s390x index costs trixie's s390x packages only, and lists an
# index had before stay until it refreshes again.  The lists apt-get and
# apt-cache read are the union of the indexes' own.
#
# OFFCPU_APT_INDEXES="SUITE/ARCH ..." (opt-in): refresh only those indexes
# (ARCH "source" for a suite's sources); the others keep the lists they
# have, or stay without any until a run without it.  toolchain/progress.sh
# sets the few a toolchain reads, so a first `make setup` does not wait
# for every suite and architecture of the QEMU matrix.
#
# Test hook: OFFCPU_APT_INDEX_URI="SUITE/ARCH=URI ..." fetches those indexes
# from another URI (tests/t_fetch.sh serves a broken one on the loopback).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${OFFCPU_CACHE:-$HOME/.cache/offcpu}
# OFFCPU_APT_DIR: another apt state (tests/t_fetch.sh starts from none).
APTDIR=${OFFCPU_APT_DIR:-$CACHE/apt}
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
SUITES=(bullseye bookworm bookworm-backports trixie sid)
# Sources only: the toolchain may build libbpf from there (versions.mk).
SOURCE_ONLY=(trixie-backports)
HOST_ARCH=$(dpkg --print-architecture)
# The boards' architectures (board/*.mk DEB_ARCH): a new board adds its own.
mapfile -t ARCHS < <({ echo "$HOST_ARCH"; awk '$1 == "DEB_ARCH" { print $3 }' "$ROOT"/board/*.mk; } | awk '!seen[$0]++')

mkdir -p "$APTDIR"/{lists/partial,archives/partial,etc/preferences.d,index}

mirror() {
	local f=/etc/apt/sources.list.d/debian.sources
	if [ -r "$f" ]; then
		awk '/^URIs:/ && $2 !~ /security/ { print $2; exit }' "$f"
	elif [ -r /etc/apt/sources.list ]; then
		awk '$1 == "deb" && $0 !~ /security/ { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) { print $i; exit } }' /etc/apt/sources.list
	fi
}

URI=$(mirror)
[ -n "$URI" ] || { echo "apt.sh: cannot read the Debian mirror URI from /etc/apt" >&2; exit 1; }

# The indexes, "SUITE ARCH" (ARCH "source" for deb-src); with
# OFFCPU_APT_INDEXES only those it names.
all_indexes() {
	local s a
	for s in "${SUITES[@]}"; do
		for a in "${ARCHS[@]}" source; do echo "$s $a"; done
	done
	for s in "${SOURCE_ONLY[@]}"; do echo "$s source"; done
}
indexes() {
	local s a
	all_indexes | while read -r s a; do
		[ -z "${OFFCPU_APT_INDEXES:-}" ] || [[ " $OFFCPU_APT_INDEXES " == *" $s/$a "* ]] || continue
		echo "$s $a"
	done
}

index_uri() {	# SUITE ARCH
	local pair
	for pair in ${OFFCPU_APT_INDEX_URI:-}; do
		[ "${pair%%=*}" = "$1/$2" ] && { echo "${pair#*=}"; return; }
	done
	echo "$URI"
}

source_line() {	# SUITE ARCH URI
	if [ "$2" = source ]; then
		echo "deb-src [signed-by=$KEYRING] $3 $1 main"
	else
		echo "deb [arch=$2 signed-by=$KEYRING] $3 $1 main"
	fi
}

# The settings every configuration shares; LISTS and SOURCES differ.
write_conf() {	# FILE LISTS SOURCES
	cat > "$1.new" <<-CONF
	Dir::Etc::SourceList "$3";
	Dir::Etc::SourceParts "/nonexistent";
	Dir::Etc::Preferences "$APTDIR/etc/preferences";
	Dir::Etc::PreferencesParts "$APTDIR/etc/preferences.d";
	Dir::State "$APTDIR";
	Dir::State::Lists "$2";
	Dir::State::status "$APTDIR/status";
	Dir::Cache "$APTDIR";
	Dir::Cache::Archives "$APTDIR/archives";
	Dir::Cache::pkgcache "$APTDIR/pkgcache.bin";
	Dir::Cache::srcpkgcache "$APTDIR/srcpkgcache.bin";
	APT::Architecture "$HOST_ARCH";
	APT::Architectures { $(printf '"%s"; ' "${ARCHS[@]}")};
	Acquire::Languages "none";
	Acquire::IndexTargets::deb::Contents-deb::DefaultEnabled "false";
	Acquire::Retries "3";
	APT::Get::AllowUnauthenticated "false";
	APT::Sandbox::User "root";
	CONF
	if cmp -s "$1.new" "$1"; then rm "$1.new"; else mv "$1.new" "$1"; fi
}

[ -e "$APTDIR/status" ] || touch "$APTDIR/status"
[ -e "$APTDIR/etc/preferences" ] || touch "$APTDIR/etc/preferences"
# The union: what apt-get and apt-cache read.
SOURCES=$APTDIR/etc/sources.list
{
	for s in "${SUITES[@]}"; do
		source_line "$s" "$(IFS=,; echo "${ARCHS[*]}")" "$URI"
		source_line "$s" source "$URI"
	done
	for s in "${SOURCE_ONLY[@]}"; do source_line "$s" source "$URI"; done
} > "$SOURCES.new"
if cmp -s "$SOURCES.new" "$SOURCES"; then rm "$SOURCES.new"; else mv "$SOURCES.new" "$SOURCES"; fi
CONF=$APTDIR/etc/apt.conf
write_conf "$CONF" "$APTDIR/lists" "$SOURCES"

# refresh SUITE ARCH: one index with a configuration of its own.  A failure
# leaves the lists that index had and writes the registry's reason (the
# mirror's name taken out) to its "error" file.
refresh() {
	local s=$1 a=$2 dir=$APTDIR/index/$1_$2 uri log
	uri=$(index_uri "$s" "$a")
	mkdir -p "$dir/lists/partial"
	source_line "$s" "$a" "$uri" > "$dir/sources.list.new"
	# A changed source (another URI) is a new index: its old lists go.
	if ! cmp -s "$dir/sources.list.new" "$dir/sources.list"; then
		find "$dir/lists" -maxdepth 1 -type f -delete
		rm -f "$dir/updated"
		mv "$dir/sources.list.new" "$dir/sources.list"
	else
		rm "$dir/sources.list.new"
	fi
	write_conf "$dir/apt.conf" "$dir/lists" "$dir/sources.list"
	log=$dir/update.log
	# No package cache: nothing reads this index alone.
	if APT_CONFIG=$dir/apt.conf apt-get -q -o Debug::NoLocking=1 \
		-o Dir::Cache::pkgcache= -o Dir::Cache::srcpkgcache= update >"$log" 2>&1 &&
	   ! grep -qE '^(E|W): (Failed to fetch|Some index files)' "$log"; then
		touch "$dir/updated"
		rm -f "$dir/update-failed" "$dir/error"
		return 0
	fi
	grep -E '^(E|W): ' "$log" | grep -vE 'Some index files failed|old ones used' | head -1 |
		sed -e "s|$uri/*||g" -e "s/^[EW]: //" -e "s/ *\[IP: [^]]*\]//" > "$dir/error"
	[ -s "$dir/error" ] || tail -n 1 "$log" > "$dir/error"
	touch "$dir/update-failed"
	return 1
}

# Say in one line what a failed index costs.
report_failed() {	# SUITE ARCH
	local dir=$APTDIR/index/$1_$2 kept="no lists kept: its packages are missing"
	[ -n "$(find "$dir/lists" -maxdepth 1 -type f -name '*_InRelease' 2>/dev/null)" ] &&
		kept="using its lists of $(date -u -r "$(find "$dir/lists" -maxdepth 1 -type f | head -1)" +%Y-%m-%d)"
	echo "apt.sh: index $1/$2 unusable ($kept): $(cat "$dir/error")" >&2
}

# Hard links of every index's lists into the union's folder.
merge_lists() {
	find "$APTDIR/lists" -maxdepth 1 -type f ! -name lock -delete
	local d
	for d in "$APTDIR"/index/*/lists; do
		find "$d" -maxdepth 1 -type f ! -name lock -exec ln -f -t "$APTDIR/lists" {} +
	done
	rm -f "$APTDIR/pkgcache.bin" "$APTDIR/srcpkgcache.bin"
}

older() { [ ! -e "$1" ] || [ -n "$(find "$1" -mmin "+$2")" ]; }

# Refresh every index older than a day whose last failure is over an hour
# old, or whose source changed (FORCE: every index), four at once; say in
# one line each what failed; then rebuild the union.
update() {
	local force=${1:-} s a dir todo=() n=0
	while read -r s a; do
		dir=$APTDIR/index/${s}_$a
		if [ -z "$force" ] && cmp -s "$dir/sources.list" <(source_line "$s" "$a" "$(index_uri "$s" "$a")"); then
			older "$dir/updated" 1440 && older "$dir/update-failed" 60 || continue
		fi
		todo+=("$s $a")
	done < <(indexes)
	[ ${#todo[@]} -gt 0 ] || return 0
	for s in "${todo[@]}"; do
		[ $((n++)) -lt 4 ] || wait -n || true
		refresh $s &
	done
	wait || true
	for s in "${todo[@]}"; do
		[ -e "$APTDIR/index/${s/ /_}/error" ] && report_failed $s
	done
	merge_lists
}

# --failed: the indexes whose last refresh failed, with the registry's reason.
failed() {
	local s a
	while read -r s a; do
		[ -e "$APTDIR/index/${s}_$a/update-failed" ] && report_failed "$s" "$a" 2>&1
	done < <(all_indexes)
	return 0
}

# One refresh at a time: the union is rebuilt at its end.
locked_update() {
	exec 9>"$APTDIR/update.lock"
	flock 9
	update "$@"
	exec 9>&-
}

export APT_CONFIG=$CONF
# Command-line options win over the system's apt.conf.d, which may disable
# the package caches (docker-clean): without them each query takes seconds.
CACHE_OPTS=(-o "Dir::Cache::pkgcache=$APTDIR/pkgcache.bin" -o "Dir::Cache::srcpkgcache=$APTDIR/srcpkgcache.bin")

case ${1:-} in
--update) locked_update force; exit 0 ;;
--failed) failed; exit 0 ;;
esac
locked_update
if [ "${1:-}" = "--cache" ]; then
	shift
	exec apt-cache "${CACHE_OPTS[@]}" "$@"
fi
exec apt-get -q -o Debug::NoLocking=1 "${CACHE_OPTS[@]}" "$@"
