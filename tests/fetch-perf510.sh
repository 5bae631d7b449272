#!/bin/bash
# Fetches Debian bullseye's perf 5.10 and its shared libraries into the
# cache (not installed): the tests read offcpu's files with it too, since
# older perf handles bpf-output events differently.  Idempotent; `make
# test` runs it, and tests that need it fail (not skip) when it is absent.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
P510=${OFFCPU_CACHE:-$HOME/.cache/offcpu}/perf510
[ -x "$P510/root/usr/bin/perf_5.10" ] && exit 0
mkdir -p "$P510"
cd "$P510"
for p in linux-perf-5.10 libopencsd0 libperl5.32 libpython3.9; do
	"$ROOT/toolchain/apt.sh" download "$p/bullseye"
done
for d in *.deb; do dpkg-deb -x "$d" root; done
[ -x root/usr/bin/perf_5.10 ]
