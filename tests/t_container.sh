#!/bin/bash
# Containers and build-ids (issue 17): a static program whose file exists
# only inside another mount namespace (on a tmpfs mounted in that namespace
# alone), started as a container runtime starts it (its own root, chroot),
# and a DECOY at the same path on the host: a copy with every symbol renamed
# decoy_* and another build-id (a symlink from / into $WORK, removed at
# exit, so nothing of the host changes).
#   - the recording reads the program's build-id through /proc/PID/root and
#     copies it into the build-id cache ($HOME/.debug);
#   - offcpu report names its functions with the workload's own times, and
#     with an empty cache gives [unknown] and one warning, never decoy names;
#   - `offcpu archive`, extracted into a fresh ~/.debug, lets Debian's perf
#     report name them with the same times;
#   - recorded with -p while the container lives and --no-buildid-cache,
#     report and archive find the file through /proc/PID/root.
source "$(dirname "$0")/lib.sh"
PROG=${BLOCKER_BID:-$ROOT/build/x86_64/blocker-bid}
FUNCS="blocker_nanosleep blocker_pipe_read blocker_mutex_wait blocker_long_sleep"
# The path inside the container and of the decoy on the host.
APP=/offcpu-test-app.$$
trap 'rm -f "$APP"; rm -rf "$WORK"' EXIT

# The program's copy with its symbols renamed and its build-id flipped.
make_decoy() {	# SRC DST
	objcopy --prefix-symbols=decoy_ "$1" "$2" && python3 - "$2" <<'PY'
import sys
d = bytearray(open(sys.argv[1], 'rb').read())
note = b'\x04\x00\x00\x00\x14\x00\x00\x00\x03\x00\x00\x00GNU\x00'
i = d.index(note) + len(note)
d[i:i + 20] = bytes(b ^ 0xff for b in d[i:i + 20])
open(sys.argv[1], 'wb').write(d)
PY
}

# The program, copied onto a tmpfs that only its mount namespace has, run
# there as APP/blocker in that root (exec: in the background, $! is that
# shell).  A child of the shell that prepared it,
# so no wait of that shell is under the workload's pid (the truth's).
container() {	# BLOCKER_ARGS...
	exec unshare -m --propagation private sh -c '
		root=$1 app=$2 prog=$3; shift 3
		mount -t tmpfs offcpu-test "$root" && mkdir -p "$root$app" &&
			cp "$prog" "$root$app/blocker" || exit 1
		chroot "$root" "$app/blocker" "$@" & wait $!' \
		sh "$WORK/ctroot" "$APP" "$PROG" "$@"
}

build_id() { readelf -n "$1" | awk '/Build ID/ { print $3 }'; }

# No function of the decoy, in any output.
no_decoy() {	# FILE...
	! grep -h 'decoy_' "$@" | head -n 3 | grep .
}

has_funcs() {	# FILE
	local f missing=""
	for f in $FUNCS; do grep -qw "$f" "$1" || missing="$missing $f"; done
	[ -z "$missing" ] || { echo "not named:$missing"; return 1; }
}

# The report against an empty cache: the decoy is not the recorded file.
mismatch_checks() {
	mkdir -p "$WORK/empty"
	HOME=$WORK/empty "$OFFCPU" report -i "$WORK/r.data" -n 0 >"$WORK/mm.txt" 2>"$WORK/mm.err"
	rc=$?
	n=$(grep -c "is not the recorded file" "$WORK/mm.err")
	if [ $rc -eq 0 ] && [ "$n" = 1 ] && [ "$(wc -l <"$WORK/mm.err")" = 1 ] &&
	   grep -q "$APP/blocker is not the recorded file (build-id $DECOY_ID, recorded $PROG_ID)" "$WORK/mm.err" &&
	   grep -q '^ *\[unknown\]$' "$WORK/mm.txt" && ! grep -q 'blocker_' "$WORK/mm.txt" &&
	   no_decoy "$WORK/mm.txt" >/dev/null; then
		pass container-build-id-mismatch
	else
		fail container-build-id-mismatch "exit $rc, $n warnings: $(head -c 300 "$WORK/mm.err")"
	fi
}

archive_checks() {
	HOME=$WORK/rec-home "$OFFCPU" archive -i "$WORK/r.data" -o "$WORK/a.tar.gz" >"$WORK/ar.out" 2>"$WORK/ar.err"
	rc=$?
	[ $rc -eq 0 ] && grep -qE "^offcpu: archive: $WORK/a.tar.gz: [0-9]+ files, [0-9.]+ MiB \([0-9.]+ MiB gzipped\)" "$WORK/ar.out" &&
		[ ! -s "$WORK/ar.err" ] && pass container-archive-runs ||
		fail container-archive-runs "exit $rc: $(cat "$WORK/ar.out" "$WORK/ar.err" | head -c 300)"
	# perf-archive's layout: the link by build-id and the file it leads to.
	check container-archive-layout python3 - "$WORK/a.tar.gz" "$PROG_ID" "${APP#/}/blocker" "$PROG" <<'PY'
import sys, tarfile
tar, bid, path, prog = sys.argv[1:]
t = tarfile.open(tar)
link = t.getmember(f'.build-id/{bid[:2]}/{bid[2:]}')
assert link.issym() and link.linkname == f'../../{path}/{bid}', link.linkname
elf = t.extractfile(f'{path}/{bid}/elf').read()
assert elf == open(prog, 'rb').read(), 'the archived file is not the program'
PY
	mkdir -p "$WORK/perf-home/.debug"
	tar xf "$WORK/a.tar.gz" -C "$WORK/perf-home/.debug" || fail container-archive-extract "tar exit $?"
	kernel_checks
	if ! command -v perf >/dev/null; then
		skip container-perf-report "perf is not installed (linux-perf, toolchain/deps.sh)"
		return
	fi
	HOME=$WORK/perf-home perf report -i "$WORK/r.data" --stdio --no-children --sort sym \
		>"$WORK/perf.txt" 2>/dev/null
	check container-perf-report-names has_funcs "$WORK/perf.txt"
	check container-perf-report-truth env HOME="$WORK/perf-home" \
		python3 "$ROOT/tests/perf_check.py" compare "$WORK/r.data" "$WORK/r.out"
	# perf too refuses the decoy (build-id) when the archive is not there.
	HOME=$WORK/empty perf report -i "$WORK/r.data" --stdio --no-children --sort sym \
		>"$WORK/perf-empty.txt" 2>/dev/null
	check container-perf-no-decoy no_decoy "$WORK/perf.txt" "$WORK/perf-empty.txt"
}

# The kernel's symbols travel too: the archive holds /proc/kallsyms by the
# kernel's build-id, and report reads them from the cache for a recording
# of another kernel (simulated: this recording with its kernel id changed).
kernel_checks() {
	local kid other ksyms
	# The running kernel's build-id, from its notes (the recorded one: same boot).
	kid=$(python3 -c '
import struct
d = open("/sys/kernel/notes", "rb").read(); o = 0
while o + 12 <= len(d):
    n, s, t = struct.unpack_from("<III", d, o); name = o + 12; desc = name + (n + 3) // 4 * 4
    if t == 3 and d[name:name + 4] == b"GNU\0": print(d[desc:desc + s].hex()); break
    o = desc + (s + 3) // 4 * 4')
	ksyms="$WORK/perf-home/.debug/[kernel.kallsyms]/$kid/kallsyms"
	if [ -n "$kid" ] && [ -s "$ksyms" ] && grep -qE '^[0-9a-f]{16} [Tt] do_nanosleep$' "$ksyms" &&
	   [ "$(readlink "$WORK/perf-home/.debug/.build-id/${kid:0:2}/${kid:2}")" = "../../[kernel.kallsyms]/$kid" ]; then
		pass container-archive-kallsyms
	else
		fail container-archive-kallsyms "no [kernel.kallsyms]/$kid/kallsyms with do_nanosleep"
		return
	fi
	other=$(python3 - "$WORK/r.data" "$WORK/other-kernel.data" "$kid" <<'PY'
import sys
d = open(sys.argv[1], 'rb').read()
kid = bytes.fromhex(sys.argv[3])
new = bytes(b ^ 0x5a for b in kid)
assert d.count(kid) == 1, 'kernel build-id not found once'
open(sys.argv[2], 'wb').write(d.replace(kid, new))
print(new.hex())
PY
)
	mkdir -p "$WORK/k-home"
	cp -a "$WORK/perf-home/.debug" "$WORK/k-home/"	# the program's file
	mkdir -p "$WORK/k-home/.debug/[kernel.kallsyms]/$other"
	cp "$ksyms" "$WORK/k-home/.debug/[kernel.kallsyms]/$other/kallsyms"
	HOME=$WORK/k-home "$OFFCPU" report -i "$WORK/other-kernel.data" -n 0 >"$WORK/k.txt" 2>"$WORK/k.err"
	rc=$?
	[ $rc -eq 0 ] && grep -q 'do_nanosleep \[k\]' "$WORK/k.txt" && [ ! -s "$WORK/k.err" ] &&
		pass container-report-cached-kallsyms ||
		fail container-report-cached-kallsyms "exit $rc: $(head -c 200 "$WORK/k.err")"
	HOME=$WORK/empty "$OFFCPU" report -i "$WORK/other-kernel.data" -n 0 >"$WORK/k0.txt" 2>"$WORK/k0.err"
	grep -q 'recorded on another kernel' "$WORK/k0.err" && ! grep -q 'do_nanosleep' "$WORK/k0.txt" &&
		pass container-report-other-kernel-unknown ||
		fail container-report-other-kernel-unknown "$(head -c 200 "$WORK/k0.err")"
}

# A container's file without a build-id cannot be checked: the recording says so.
unchecked_checks() {
	HOME=$WORK/rec-home "$OFFCPU" -o "$WORK/nb.data" -- \
		bash -c "$(declare -f container); WORK=$WORK APP=$APP PROG=${PROG%-bid} container -t 0.3" \
		>/dev/null 2>"$WORK/nb.err"
	rc=$?
	[ $rc -eq 0 ] && grep -q "file of other mount namespaces without a build-id (first: $APP/blocker)" "$WORK/nb.err" &&
		pass container-no-build-id-warns ||
		fail container-no-build-id-warns "exit $rc: $(grep -v '^\[' "$WORK/nb.err" | head -c 200)"
}

# Bad input: one line naming the problem, non-zero exit, no tarball.
archive_errors() {
	printf 'not a recording' >"$WORK/bad.data"
	"$OFFCPU" archive -i "$WORK/bad.data" -o "$WORK/bad.tar.gz" >"$WORK/bad.out" 2>&1
	rc=$?
	[ $rc -ne 0 ] && [ "$(wc -l <"$WORK/bad.out")" = 1 ] && grep -q '^offcpu: archive: ' "$WORK/bad.out" &&
		[ ! -e "$WORK/bad.tar.gz" ] && pass container-archive-bad-input ||
		fail container-archive-bad-input "exit $rc: $(head -c 200 "$WORK/bad.out")"
	"$OFFCPU" archive --bogus >"$WORK/bad.out" 2>&1
	rc=$?
	[ $rc -eq 2 ] && grep -q "bad option '--bogus'" "$WORK/bad.out" && pass container-archive-bad-option ||
		fail container-archive-bad-option "exit $rc: $(head -c 200 "$WORK/bad.out")"
}

# -p while the container lives, nothing cached: report and archive read
# the file through /proc/PID/root.
live_checks() {
	local pid
	mkdir -p "$WORK/live-home"
	container -t 60 >"$WORK/live.out" &
	sleep 0.5
	pid=$(pgrep -P $! -x blocker)	# other tests may run blockers too
	if [ -z "$pid" ]; then
		fail container-live "the container's blocker did not start: $(head -c 200 "$WORK/live.out")"
		kill $!
		wait
		return
	fi
	HOME=$WORK/live-home "$OFFCPU" --no-buildid-cache -p "$pid" -d 1.5 -o "$WORK/l.data" \
		>/dev/null 2>"$WORK/l.err" || fail container-live-record "exit $?: $(tail -n 1 "$WORK/l.err")"
	HOME=$WORK/live-home "$OFFCPU" report -i "$WORK/l.data" -n 0 >"$WORK/l.txt" 2>"$WORK/l.rep.err"
	HOME=$WORK/live-home "$OFFCPU" archive -i "$WORK/l.data" -o "$WORK/l.tar.gz" >/dev/null 2>"$WORK/l.ar.err" ||
		fail container-live-archive-runs "exit $?: $(head -c 200 "$WORK/l.ar.err")"
	kill "$pid"	# ended once report and archive have read it (ASan builds are slow)
	wait 2>/dev/null
	[ -z "$(ls -A "$WORK/live-home")" ] && pass container-no-buildid-cache ||
		fail container-no-buildid-cache "$(cd "$WORK/live-home" && find . | head -3)"
	# blocker_long_sleep's one block may be outside the 1.5 s.
	if FUNCS="blocker_nanosleep blocker_pipe_read blocker_mutex_wait" has_funcs "$WORK/l.txt" >"$WORK/l.why" && [ ! -s "$WORK/l.rep.err" ] && no_decoy "$WORK/l.txt" >/dev/null; then
		pass container-live-report
	else
		fail container-live-report "$(cat "$WORK/l.why") $(head -c 200 "$WORK/l.rep.err")"
	fi
	# Named as /proc/PID/maps names it (the tmpfs's mount point in the container's namespace).
	tar tzf "$WORK/l.tar.gz" 2>/dev/null | grep -q "/blocker/$PROG_ID/elf\$" &&
		pass container-live-archive || fail container-live-archive "the program is not in the archive"
}

if [ "$(id -u)" != 0 ]; then
	skip container "needs root to record and to unshare"
elif ! use_host_btf; then
	skip container "$BTF_WHY"
elif [ -e "$APP" ]; then
	fail container-setup "$APP exists"
else
	mkdir -p "$WORK/ctroot" "$WORK/decoy" "$WORK/rec-home"
	make_decoy "$PROG" "$WORK/decoy/blocker" || fail container-setup "cannot make the decoy"
	ln -s "$WORK/decoy" "$APP"
	PROG_ID=$(build_id "$PROG")
	DECOY_ID=$(build_id "$APP/blocker")
	if [ -z "$PROG_ID" ] || [ "$PROG_ID" = "$DECOY_ID" ]; then
		fail container-setup "build-ids: program '$PROG_ID', decoy '$DECOY_ID'"
	elif ! HOME=$WORK/rec-home "$OFFCPU" -o "$WORK/r.data" -- \
		bash -c "$(declare -f container); WORK=$WORK APP=$APP PROG=$PROG container -t 2" \
		>"$WORK/r.out" 2>"$WORK/rec.err"; then
		fail container-record "$(tail -n 1 "$WORK/rec.err")"
	else
		[ -L "$WORK/rec-home/.debug/.build-id/${PROG_ID:0:2}/${PROG_ID:2}" ] &&
			pass container-build-id-cached ||
			fail container-build-id-cached "$(cd "$WORK/rec-home" && find . | head -5 | tr '\n' ' ')"
		HOME=$WORK/rec-home "$OFFCPU" report -i "$WORK/r.data" -n 0 >"$WORK/text" 2>"$WORK/text.err"
		rc=$?
		[ $rc -eq 0 ] && [ ! -s "$WORK/text.err" ] && pass container-report-runs ||
			fail container-report-runs "exit $rc: $(head -n 1 "$WORK/text.err")"
		check container-report-names has_funcs "$WORK/text"
		HOME=$WORK/rec-home "$OFFCPU" report -i "$WORK/r.data" -T --folded >"$WORK/folded" 2>"$WORK/folded.err" ||
			fail container-report-folded-runs "exit $?: $(head -c 200 "$WORK/folded.err")"
		check container-report-truth python3 "$ROOT/qemu-tests/check.py" folded "$WORK/folded" "$WORK/r.out"
		check container-report-no-decoy no_decoy "$WORK/text" "$WORK/folded"
		mismatch_checks
		archive_checks
		archive_errors
		unchecked_checks
		live_checks
	fi
fi
