#!/bin/bash
# offcpu report names what perf names.  A system-wide recording of real
# programs (the host's own daemons, bash, python3, a C++ program built by
# Debian's g++, and copies of it whose symbols live elsewhere): every user
# frame Debian's `perf script` names must appear with the same name in
# `offcpu report --folded` (tests/parity.py; explained exceptions listed
# there).  The copies: stripped with .gnu_debuglink beside them and in
# .debug/, a debug file found by build-id under --symfs, MiniDebugInfo
# (.gnu_debugdata, which perf 6.1 does not read: offcpu must name it anyway),
# a link to a debug file of another build or with another CRC (refused:
# [unknown], not wrong names), and plain stripped (the control: [unknown]).
source "$(dirname "$0")/lib.sh"

APP=$ROOT/build/host/cxx_app
[ "$(id -u)" = 0 ] || { skip parity "needs root"; exit 0; }
[ -x "$OFFCPU" ] || { fail parity "$OFFCPU not built"; exit 0; }
[ -x "$APP" ] || { fail parity "$APP not built (make host-workloads)"; exit 0; }
for t in perf objcopy nm xz python3 g++; do
	command -v $t >/dev/null || { fail parity "$t missing (toolchain/deps.sh)"; exit 0; }
done
dpkg-query -W -f='${Status}' libc6-dbg 2>/dev/null | grep -q 'ok installed' ||
	{ fail parity "libc6-dbg missing (toolchain/deps.sh)"; exit 0; }
# perf must not find our copies in its build-id cache (~/.debug).
export PERF_BUILDID_DIR=$WORK/perf-buildids

D=$WORK/bin
mkdir -p "$D/.debug" "$WORK/other"
make_copies() {
	cd "$D" || return 1
	cp "$APP" cxx_app
	objcopy --strip-all cxx_app cxx_stripped
	objcopy --only-keep-debug cxx_app cxx_link.debug
	objcopy --strip-all --add-gnu-debuglink=cxx_link.debug cxx_app cxx_link
	cp cxx_link.debug .debug/cxx_linkdir.debug
	objcopy --strip-all --add-gnu-debuglink=.debug/cxx_linkdir.debug cxx_app cxx_linkdir
	# A link whose file is then replaced by another build's debug file
	# (-O0: other addresses, so taking it would misname our frames).
	cp cxx_link.debug cxx_wrong.debug
	objcopy --strip-all --add-gnu-debuglink=cxx_wrong.debug cxx_app cxx_wrong
	g++ -O0 -g "$ROOT/tests/workload/cxx_app.cc" -o other
	objcopy --only-keep-debug other cxx_wrong.debug
	# No build-ids: the link's CRC decides.  cxx_badcrc's file changed since.
	objcopy --remove-section .note.gnu.build-id cxx_app nobid
	objcopy --only-keep-debug nobid cxx_crc.debug
	objcopy --strip-all --add-gnu-debuglink=cxx_crc.debug nobid cxx_crc
	cp cxx_crc.debug cxx_badcrc.debug
	objcopy --strip-all --add-gnu-debuglink=cxx_badcrc.debug nobid cxx_badcrc
	echo changed > changed
	objcopy --add-section .note.changed=changed cxx_badcrc.debug
	# By build-id under --symfs only.
	objcopy --strip-all cxx_app cxx_bid
	local id
	id=$(readelf -n cxx_app | awk '/Build ID/ { print $3 }')
	mkdir -p "$WORK/symfs$D" "$WORK/symfs/usr/lib/debug/.build-id/${id:0:2}"
	cp cxx_bid "$WORK/symfs$D/"
	cp cxx_link.debug "$WORK/symfs/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug"
	# MiniDebugInfo as Fedora makes it: the function symbols .dynsym lacks.
	nm -D cxx_app --format=posix --defined-only | awk '{ print $1 }' | sort > dynsyms
	nm cxx_app --format=posix --defined-only | awk '$2 ~ /[TtWw]/ { print $1 }' | sort > funcsyms
	comm -13 dynsyms funcsyms > keep
	objcopy -S --remove-section .gdb_index --remove-section .comment \
		--keep-symbols=keep cxx_link.debug mini.debug
	xz -f mini.debug
	objcopy --strip-all --remove-section .comment --add-section .gnu_debugdata=mini.debug.xz \
		cxx_app cxx_mini
}
if ! (make_copies) >"$WORK/copies.log" 2>&1; then
	fail parity-fixtures "$(tail -n 3 "$WORK/copies.log" | tr '\n' ' ')"
	exit 0
fi

# The recording: everything on the host for 3 s, our programs inside it.
"$OFFCPU" -a -d 3 -o "$WORK/sys.data" >"$WORK/rec.out" 2>&1 &
rec=$!
sleep 0.5
for p in cxx_app cxx_stripped cxx_link cxx_linkdir cxx_wrong cxx_crc cxx_badcrc cxx_bid cxx_mini; do
	"$D/$p" 1.5 &
done
bash -c 'for i in $(seq 15); do sleep 0.1; read -r -t 0.05 x < <(sleep 0.2); done' &
python3 -c 'import time, threading
t = threading.Thread(target=lambda: [time.sleep(0.1) for _ in range(15)]); t.start(); t.join()' &
wait $rec
wait
[ -s "$WORK/sys.data" ] || { fail parity-record "no recording: $(tail -n 2 "$WORK/rec.out")"; exit 0; }

if python3 "$ROOT/tests/parity.py" "$OFFCPU" "$WORK/sys.data" \
	--expect cxx_app:app::Worker::wait_for --expect cxx_app:__libc_start_call_main \
	--expect cxx_link:app::Worker::wait_for --expect cxx_linkdir:app::Worker::wait_for \
	--except-frame "@plt\$:perf names PLT stubs from .rela.plt (name@plt, or a bare @plt for ld.so's IRELATIVE slots); offcpu reads symbol tables only" \
	--except "cxx_badcrc:perf 6.1 takes the .gnu_debuglink file without checking its CRC; offcpu refuses it (another build would give wrong names)" \
	>"$WORK/parity.out" 2>&1; then
	pass "parity-perf ($(tail -n 1 "$WORK/parity.out"))"
else
	fail parity-perf "$(tr '\n' ' ' < "$WORK/parity.out" | head -c 1500)"
fi

"$OFFCPU" report -i "$WORK/sys.data" --folded -v >"$WORK/folded" 2>"$WORK/verbose"
"$OFFCPU" report -i "$WORK/sys.data" --folded --symfs "$WORK/symfs" >"$WORK/folded-symfs" 2>/dev/null
"$OFFCPU" report -i "$WORK/sys.data" --folded --no-demangle >"$WORK/folded-raw" 2>/dev/null
# frames COMM FILE: the user frames of COMM's stacks in a folded FILE.
frames() { grep "^$1;" "$2" | sed 's/ [0-9]*$//; s/;[^;]*_\[k\]//g'; }
# names NAME COMM FILE FUNC...: COMM's stacks in FILE hold every FUNC.
names() {
	local name=$1 comm=$2 file=$3 f
	shift 3
	for f in "$@"; do
		if ! frames "$comm" "$file" | grep -q ";$f\(;\|$\)"; then
			fail "$name" "no $f in $comm's stacks: $(frames "$comm" "$file" | head -n 3 | tr '\n' ' ')"
			return
		fi
	done
	pass "$name"
}
names parity-demangled cxx_app "$WORK/folded" app::Worker::wait_for main
names parity-libc-dbg-roots cxx_app "$WORK/folded" __libc_start_call_main
names parity-no-demangle cxx_app "$WORK/folded-raw" _ZN3app6Worker8wait_forERSt6vectorIiSaIiEEi
names parity-debuglink cxx_link "$WORK/folded" app::Worker::wait_for main
names parity-debuglink-dir cxx_linkdir "$WORK/folded" app::Worker::wait_for main
names parity-debuglink-crc cxx_crc "$WORK/folded" app::Worker::wait_for main
names parity-build-id-symfs cxx_bid "$WORK/folded-symfs" app::Worker::wait_for main
names parity-gnu-debugdata cxx_mini "$WORK/folded" app::Worker::wait_for main
# The controls: no symbols anywhere, or a debug file of another build: the
# program's own frames (all but its libraries') are [unknown], neither named
# nor misnamed after the other build's symbols.
# The libraries' frames are told by name: every symbol each shared library
# of the program defines (its dynamic ones, and the static ones its debug
# file names, such as libc's __run_exit_handlers or libm's _fini), symbol
# versions cut off.
lib_names() {
	local lib id
	for lib in $(ldd "$APP" | awk '$3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }'); do
		nm -D --defined-only "$lib"
		id=$(readelf -n "$lib" | awk '/Build ID/ { print $3 }')
		[ -n "$id" ] && nm --defined-only "/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug" 2>/dev/null
	done | awk 'NF >= 3 { sub(/@.*/, "", $3); print $3 }' | sort -u
}
lib_names >"$WORK/lib.names"
grep -qx __libc_start_call_main "$WORK/lib.names" ||
	fail parity-control-names "libc6-dbg's names not read: no __libc_start_call_main"
for c in cxx_stripped cxx_wrong cxx_badcrc; do
	own=$(frames $c "$WORK/folded" | grep ';' | cut -d';' -f2- | tr ';' '\n' | sed 's/@.*//' |
		grep -vxF -f "$WORK/lib.names" | sort -u)
	if [ "$own" = "[unknown]" ]; then
		pass "parity-control-$c"
	else
		fail "parity-control-$c" "$(frames $c "$WORK/folded" | head -n 2 | tr '\n' ' ')"
	fi
done
# -v says where each file's symbols came from.
if grep -q "$D/cxx_mini: [0-9]* symbols from $D/cxx_mini .gnu_debugdata and its .dynsym" "$WORK/verbose" &&
	grep -q "$D/cxx_link: [0-9]* symbols from $D/cxx_link.debug$" "$WORK/verbose" &&
	grep -q "libc.so.6: [0-9]* symbols from /usr/lib/debug/.build-id/" "$WORK/verbose"; then
	pass parity-verbose-sources
else
	fail parity-verbose-sources "$(grep -E 'cxx_|libc' "$WORK/verbose" | head -n 5 | tr '\n' ' ')"
fi
