#!/bin/bash
# Stock perf reads what our perf.data writer writes: build/unit/gen_perf_data
# writes an offcpu-time + dummy event file with a COMM, an MMAP2 of its own
# text and three samples (gen_leaf_a 1+5 ms, gen_leaf_b 3 ms, both under
# gen_middle < main); perf script/report/--header-only/buildid-list must show
# them and print nothing on stderr.  The same file byte-swapped (what an
# s390x writer produces) must read the same.  With perf 5.10 (bullseye's,
# fetched once into the cache with toolchain/apt.sh) the files whose samples
# carry a PERF_SAMPLE_RAW field (gen_perf_data --raw) are checked too: perf
# before 5.19 adds RAW to every BPF-output event's sample_type when reading.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

if ! command -v perf >/dev/null || ! perf version >/dev/null 2>&1; then
	skip perf-data-perf "no working perf (Debian linux-perf)"
	exit 0
fi
if ! make -s -C "$ROOT" build/unit/gen_perf_data >"$WORK/make.log" 2>&1; then
	fail perf-data-perf-build "$(tail -n 3 "$WORK/make.log" | tr '\n' ' ')"
	exit 0
fi
gen=$ROOT/build/unit/gen_perf_data

cd "$WORK"
if ! "$gen" le.data extra-arg >gen.out 2>gen.err ||
	! "$gen" --raw raw.data extra-arg >>gen.out 2>>gen.err; then
	fail perf-data-perf-gen "$(cat gen.err)"
	exit 0
fi
pid=$(sed -n 's/^pid //p' gen.out | head -n 1)
pid_raw=$(sed -n 's/^pid //p' gen.out | tail -n 1)
"$gen" --swap le.data be.data || fail perf-data-perf-swap "cannot byte-swap the file"
"$gen" --swap raw.data rawbe.data || fail perf-data-perf-swap-raw "cannot byte-swap the file"
PERF=perf

# quiet NAME FILE: perf's stderr FILE is empty (no warning about the file).
quiet() {
	if [ -s "$2" ]; then fail "$1" "perf stderr: $(head -n 3 "$2" | tr '\n' ' ')"; else pass "$1"; fi
}
# has NAME FILE REGEX...: every extended regex matches a line of FILE.
has() {
	local name=$1 file=$2 re; shift 2
	for re in "$@"; do
		if ! grep -Eq -- "$re" "$file"; then
			fail "$name" "no line matches '$re'"
			return
		fi
	done
	pass "$name"
}

# check_file TAG FILE PID: every check of FILE with $PERF; names carry TAG.
check_file() {
	local o=$1 f=$2 pid=$3 name=$2
	[ -f "$f" ] || return 0
	[ "$f" = be.data ] && name=le.data
	[ "$f" = rawbe.data ] && name=raw.data
	if $PERF script -i "$f" -F comm,pid,tid,event,period,ip,sym >"$o.script" 2>"$o.script.err"; then
		quiet "perf-script-$o-stderr" "$o.script.err"
		# Three samples of comm offcpu-gen, pid/tid, the period, the chain.
		has "perf-script-$o-samples" "$o.script" \
			"^ *offcpu-gen +$pid/$pid +1000000 +offcpu-time:" \
			"^ *offcpu-gen +$pid/$pid +3000000 +offcpu-time:" \
			"^ *offcpu-gen +$pid/$pid +5000000 +offcpu-time:" \
			"^[[:space:]]+[0-9a-f]+ gen_leaf_a$" "^[[:space:]]+[0-9a-f]+ gen_leaf_b$" \
			"^[[:space:]]+[0-9a-f]+ gen_middle$" "^[[:space:]]+[0-9a-f]+ main$"
		n=$(grep -c 'offcpu-time:' "$o.script" || true)
		[ "$n" = 3 ] && pass "perf-script-$o-count" || fail "perf-script-$o-count" "$n samples, want 3"
	else
		fail "perf-script-$o" "exit $?: $(head -n 3 "$o.script.err" | tr '\n' ' ')"
	fi

	if $PERF report --stdio --no-children -F overhead,period,sym -i "$f" \
		>"$o.report" 2>"$o.report.err"; then
		quiet "perf-report-$o-stderr" "$o.report.err"
		has "perf-report-$o-totals" "$o.report" \
			"^# Samples: 3 +of event 'offcpu-time'" \
			"^# Event count \(approx\.\): 9000000$" \
			"^ +66\.67% +6000000 +\[\.\] gen_leaf_a$" \
			"^ +33\.33% +3000000 +\[\.\] gen_leaf_b$"
	else
		fail "perf-report-$o" "exit $?: $(head -n 3 "$o.report.err" | tr '\n' ' ')"
	fi

	if $PERF report --header-only -i "$f" >"$o.header" 2>"$o.header.err"; then
		quiet "perf-header-$o-stderr" "$o.header.err"
		has "perf-header-$o-features" "$o.header" \
			"^# hostname : $(uname -n)$" "^# os release : $(uname -r)$" \
			"^# arch : $(uname -m)$" "^# nrcpus online : 5$" "^# nrcpus avail : 7$" \
			"^# total memory : 123456 kB$" "^# perf version : offcpu test$" \
			"^# cmdline : $gen $name extra-arg *$" \
			"^# event : name = offcpu-time, .*id = \{ 1000 \}.*sample_type = IP\|TID\|TIME\|CALLCHAIN\|CPU\|PERIOD(\|RAW)?\|IDENTIFIER.*sample_id_all = 1" \
			"^# event : name = dummy:u, .*id = \{ 2000 \}.*mmap = 1, comm = 1, task = 1, sample_id_all = 1, mmap2 = 1" \
			"^# clockid: monotonic \(1\)$" \
			"^# reference time: .* = 1700000000\.000000 \(TOD\) = 1\.000000000 \(monotonic\)$"
	else
		fail "perf-header-$o" "exit $?: $(head -n 3 "$o.header.err" | tr '\n' ' ')"
	fi

	bid=$(readelf -n "$gen" | sed -n 's/.*Build ID: *//p')
	if [ -z "$bid" ]; then
		skip "perf-buildid-$o" "gen_perf_data has no build id note"
	elif $PERF buildid-list -i "$f" >"$o.bid" 2>"$o.bid.err"; then
		quiet "perf-buildid-$o-stderr" "$o.bid.err"
		has "perf-buildid-$o" "$o.bid" "^$bid $gen$"
	else
		fail "perf-buildid-$o" "exit $?: $(head -n 3 "$o.bid.err" | tr '\n' ' ')"
	fi
}

check_file le le.data "$pid"
check_file be be.data "$pid"
check_file raw raw.data "$pid_raw"
check_file rawbe rawbe.data "$pid_raw"

# perf 5.10 from bullseye, its shared libraries beside it (not installed;
# make setup fetches it, tests/fetch-perf510.sh).
P510=${OFFCPU_CACHE:-$HOME/.cache/offcpu}/perf510
"$ROOT/tests/fetch-perf510.sh" >"$WORK/p510.log" 2>&1
if [ -x "$P510/root/usr/bin/perf_5.10" ] &&
	LD_LIBRARY_PATH=$P510/root/usr/lib/x86_64-linux-gnu "$P510/root/usr/bin/perf_5.10" version >/dev/null 2>&1; then
	export LD_LIBRARY_PATH=$P510/root/usr/lib/x86_64-linux-gnu
	PERF=$P510/root/usr/bin/perf_5.10
	check_file perf510-raw raw.data "$pid_raw"
	check_file perf510-rawbe rawbe.data "$pid_raw"
	unset LD_LIBRARY_PATH
else
	fail perf-data-perf510 "no runnable perf 5.10 (tests/fetch-perf510.sh: $(tail -n 1 "$WORK/p510.log" 2>/dev/null))"
fi
