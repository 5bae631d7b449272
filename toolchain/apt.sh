#!/bin/bash
# Private apt configuration: its own sources list, lists and cache under
# $OFFCPU_CACHE/apt, so fetching kernels, cross packages and sources for other
# suites never touches the system's apt state.  The mirror URI is read from the
# system's own sources so no registry host is written into this repository.
#
# Usage: toolchain/apt.sh <apt-get args...>      e.g. apt.sh download busybox-static:arm64/bookworm
#        toolchain/apt.sh --cache <apt-cache args...>
#        toolchain/apt.sh --update                (refresh lists; done automatically when older than a day)
set -euo pipefail

CACHE=${OFFCPU_CACHE:-$HOME/.cache/offcpu}
APTDIR=$CACHE/apt
mkdir -p "$APTDIR"/{lists/partial,archives/partial,etc/preferences.d,etc/apt.conf.d}

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

SOURCES=$APTDIR/etc/sources.list
{
	for s in bullseye bookworm bookworm-backports trixie sid; do
		echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $URI $s main"
		echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $URI $s main"
	done
	# Sources only: the toolchain may build libbpf from there (versions.mk).
	echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $URI trixie-backports main"
} > "$SOURCES.new"
# Rewrite only on change: a newer sources.list invalidates apt's caches.  A
# changed list (a suite added) is fetched at once, not up to a day later.
if cmp -s "$SOURCES.new" "$SOURCES"; then rm "$SOURCES.new"; else
	mv "$SOURCES.new" "$SOURCES"
	rm -f "$APTDIR/updated" "$APTDIR/update-failed"
fi

CONF=$APTDIR/etc/apt.conf
cat > "$CONF.new" <<CONF
Dir::Etc::SourceList "$SOURCES";
Dir::Etc::SourceParts "/nonexistent";
Dir::Etc::Preferences "$APTDIR/etc/preferences";
Dir::Etc::PreferencesParts "$APTDIR/etc/preferences.d";
Dir::State "$APTDIR";
Dir::State::Lists "$APTDIR/lists";
Dir::State::status "$APTDIR/status";
Dir::Cache "$APTDIR";
Dir::Cache::Archives "$APTDIR/archives";
Dir::Cache::pkgcache "$APTDIR/pkgcache.bin";
Dir::Cache::srcpkgcache "$APTDIR/srcpkgcache.bin";
APT::Architecture "amd64";
APT::Architectures { "amd64"; "arm64"; "s390x"; };
Acquire::Languages "none";
Acquire::IndexTargets::deb::Contents-deb::DefaultEnabled "false";
Acquire::Retries "3";
APT::Get::AllowUnauthenticated "false";
APT::Sandbox::User "root";
CONF
if cmp -s "$CONF.new" "$CONF"; then rm "$CONF.new"; else mv "$CONF.new" "$CONF"; fi
[ -e "$APTDIR/status" ] || touch "$APTDIR/status"
[ -e "$APTDIR/etc/preferences" ] || touch "$APTDIR/etc/preferences"
export APT_CONFIG=$CONF
# Command-line options win over the system's apt.conf.d, which may disable
# the package caches (docker-clean): without them each query takes seconds.
CACHE_OPTS=(-o "Dir::Cache::pkgcache=$APTDIR/pkgcache.bin" -o "Dir::Cache::srcpkgcache=$APTDIR/srcpkgcache.bin")

# A mirror in mid-sync fails an index or two ("File has unexpected size") and
# apt keeps the previous lists: go on with those, say so, and retry in an
# hour rather than on every call.
update() {
	if apt-get -q -o Debug::NoLocking=1 update >&2; then
		touch "$APTDIR/updated"
		rm -f "$APTDIR/update-failed"
		return 0
	fi
	echo "apt.sh: apt-get update failed (above); using the lists it has, retrying in an hour" >&2
	touch "$APTDIR/update-failed"
	return 1
}

if [ "${1:-}" = "--update" ]; then
	update
	exit
fi
# Refresh at most once a day: the lists are large and CI runs often.
older() { [ ! -e "$APTDIR/$1" ] || [ -n "$(find "$APTDIR/$1" -mmin "+$2")" ]; }
if older updated 1440 && older update-failed 60; then
	update || true
fi
if [ "${1:-}" = "--cache" ]; then
	shift
	exec apt-cache "${CACHE_OPTS[@]}" "$@"
fi
exec apt-get -q -o Debug::NoLocking=1 "${CACHE_OPTS[@]}" "$@"
