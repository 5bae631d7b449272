#!/bin/bash
# The kernel matrix: boot each board's Debian kernels under QEMU (TCG) with
# an initramfs holding busybox, the static offcpu and the blocker workload,
# record the workload in the guest, and check the guest's perf.data with the
# host's perf and the guest's own `offcpu report`.  Prints one line per cell,
#   PASS <cell> (...) | FAIL <cell>: why | SKIP <cell>: why
# then a table, also written to build/qemu/RESULTS.md (and to
# qemu-tests/RESULTS.md when the whole matrix ran).
#
#   qemu-tests/run.sh [CELL...]   CELL: x86_64-6.1, arm64-trixie, s390x (a board)
# Environment: QEMU_TIMEOUT (s per boot, 120), QEMU_JOBS (cells at once, 2:
# the guests mostly sleep, so two at a time take 60 %, not 100 %, of the time),
# QEMU_ACCEL (-accel value, tcg: one host thread per vCPU).
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
OUT=$ROOT/build/qemu
TIMEOUT=${QEMU_TIMEOUT:-120}
# One host thread per vCPU (TCG's default here).  A few in hundreds of
# x86_64 boots oops on int3 at the tracepoint's jump site in __schedule or
# lock up as the recording starts, likely one vCPU running code the other is
# patching: run_cell retries those.  thread=single may avoid them, but the
# vCPUs then take turns on one host thread: a woken thread waits on the host,
# not off-CPU in the guest, and the workload's own block times ran 12 % long.
ACCEL=${QEMU_ACCEL:-tcg}
JOBS=${QEMU_JOBS:-2}
declare -A VERSION_OF=([bullseye]=5.10 [bookworm]=6.1 [trixie]=6.12 [sid]=7.x)
SUITES=(bullseye bookworm trixie sid)
BOARDS=()
for mk in "$ROOT"/board/*.mk; do BOARDS+=("$(basename "$mk" .mk)"); done

board_var() { make -s --no-print-directory -C "$ROOT" TARGET="$1" "print-$2"; }

has_suite() { [[ " $(board_var "$1" KERNEL_SUITES) " == *" $2 "* ]]; }

# The cells to run, "board suite" per line; the verdicts of unknown names
# (FAIL) and of cells the board has no kernel for (SKIP) go to fd 3.
select_cells() {
	local c b s hit
	if [ $# -eq 0 ]; then
		for b in "${BOARDS[@]}"; do
			for s in $(board_var "$b" KERNEL_SUITES); do echo "$b $s"; done
		done
		return
	fi
	for c in "$@"; do
		hit=""
		for b in "${BOARDS[@]}"; do
			for s in "${SUITES[@]}"; do
				case $c in "$b"|"$b-$s"|"$b-${VERSION_OF[$s]}") ;; *) continue ;; esac
				hit=1
				if has_suite "$b" "$s"; then
					echo "$b $s"
				elif [ "$c" != "$b" ]; then
					echo "SKIP $b-${VERSION_OF[$s]}: Debian $s has no $(board_var "$b" DEB_ARCH) kernel" >&3
				fi
			done
		done
		[ -n "$hit" ] || echo "FAIL $c: unknown cell (boards: ${BOARDS[*]}; suites or versions: ${SUITES[*]} ${VERSION_OF[*]})" >&3
	done | awk '!seen[$0]++'
}

# The initramfs tree doubles as perf's --symfs: same paths as in the guest.
make_initramfs() {
	local board=$1 tree=$OUT/$1/root
	make -s -C "$ROOT" TARGET="$board" all workloads >&2 || return 1
	rm -rf "$tree"
	mkdir -p "$tree/bin"
	cp "$("$HERE/fetch.sh" busybox "$board")" "$tree/bin/busybox"
	cp "$ROOT/build/$board/offcpu" "$ROOT/build/$board/blocker" "$tree/"
	cp "$HERE/init.sh" "$tree/init"
	chmod +x "$tree/init"
	(cd "$tree" && find . | cpio -o -H newc --quiet | gzip -1) > "$OUT/$board/initramfs.gz"
}

section() {	# LOG NAME: the text between @@BEGIN NAME and @@END NAME
	tr -d '\r' < "$1" | awk -v n="$2" '$0 ~ "@@BEGIN " n "$" { on = 1; next }
		$0 ~ "^@@END " n " " { on = 0 } on'
}

section_rc() { tr -d '\r' < "$1" | sed -n "s/^@@END $2 rc=\([0-9]*\).*/\1/p" | head -1; }

# The file itself, not tr | grep -q: with pipefail, an early match can kill
# tr with SIGPIPE and turn the answer into "no" (the \r stays at line end).
booted() { grep -q '@@BEGIN uname' "$1"; }
finished() { grep -q '^@@DONE' "$1"; }

boot() {	# BOARD KERNEL LOG
	local board=$1 kernel=$2 log=$3 console machine
	console=$(board_var "$board" QEMU_CONSOLE)
	read -r -a machine <<< "$(board_var "$board" QEMU_MACHINE)"
	timeout --kill-after=10 "$TIMEOUT" "$(board_var "$board" QEMU_SYSTEM)" \
		"${machine[@]}" -accel "$ACCEL" -m 1024 -smp 2 -no-reboot -nographic \
		-kernel "$kernel" -initrd "$OUT/$board/initramfs.gz" \
		-append "console=$console panic=-1 quiet loglevel=1 rdinit=/init" \
		</dev/null >"$log" 2>&1
}

# s390 got perf_callchain_user() only in Linux 6.7 (commit 504b73d00a55):
# older s390 kernels record no user frames at all, whatever the tool does.
kernel_walks_user_stacks() {	# BOARD KERNEL-RELEASE
	local major minor
	IFS=. read -r major minor _ <<< "$2"
	[ "$1" != s390x ] || [ "$major" -gt 6 ] || { [ "$major" -eq 6 ] && [ "$minor" -ge 7 ]; }
}

# Verdict of one cell; sets REASON, VARIANT, BTF, NOTE.
check_cell() {
	local board=$1 dir=$2 log=$2/console.log release stacks user
	VARIANT=$(section "$log" probe | sed -n 's/^variant: //p')
	BTF=$(section "$log" probe | sed -n 's/^btf: //p' | cut -d' ' -f1)
	if [ -n "$(section "$log" hang)" ]; then
		REASON="recording hung; $(section "$log" hang | grep -m3 '^--' | tr '\n' ' ')"
		return 1
	fi
	if ! finished "$log"; then
		REASON="guest did not finish (timeout ${TIMEOUT}s or crash): $(tr -d '\r' < "$log" | grep -v '^$' | tail -n 2 | tr '\n' ' ')"
		return 1
	fi
	if [ "$(section_rc "$log" probe)" != 0 ]; then
		REASON="probe failed: $(section "$log" probe | tail -n 1)"
		return 1
	fi
	if [ "$(section_rc "$log" record)" != 0 ]; then
		REASON="recording failed: $(section "$log" record | grep offcpu: | tail -n 1)"
		return 1
	fi
	section "$log" workload > "$dir/workload.out"
	if ! grep -q '^thread ' "$dir/workload.out"; then
		REASON="no workload output (the workload's own measurements): $(head -c 100 "$dir/workload.out")"
		return 1
	fi
	section "$log" report > "$dir/report.txt"
	section "$log" folded > "$dir/folded.txt"
	section "$log" perfdata | base64 -d 2>/dev/null | gunzip > "$dir/perf.data" 2>/dev/null
	if [ ! -s "$dir/perf.data" ]; then
		REASON="no perf.data came back"
		return 1
	fi
	if ! stacks=$(python3 "$HERE/check.py" stacks "$dir/perf.data" --symfs "$OUT/$board/root" 2>&1); then
		REASON="perf script: $(tail -n 1 <<< "$stacks")"
		return 1
	fi
	# user=N% umax=N kmax=N samples=N
	user=$(sed -n 's/.*user=\([0-9]*\)%.*/\1/p' <<< "$stacks")
	release=$(section "$log" uname | cut -d' ' -f1)
	if kernel_walks_user_stacks "$board" "$release"; then
		if [ "${user:-0}" -eq 0 ]; then
			REASON="no user stacks, though this kernel can walk them ($stacks)"
			return 1
		fi
		STACKS="user stacks in $user % of samples (up to $(sed 's/.*umax=\([0-9]*\).*/\1/' <<< "$stacks") frames)"
		STACKS+=", kernel up to $(sed 's/.*kmax=\([0-9]*\).*/\1/' <<< "$stacks")"
		set -- compare --symfs "$OUT/$board/root"
		NOTE="truth per thread and function"
	else
		STACKS="kernel walks no user stacks (s390 < 6.7): $user % with user frames"
		STACKS+=", kernel up to $(sed 's/.*kmax=\([0-9]*\).*/\1/' <<< "$stacks")"
		set -- threads
		NOTE="truth per thread"
	fi
	# The user stack cache (5.15+ with kernel BTF): how much it reused here.
	cache=$(section "$log" record | sed -n 's/.*stack cache: .*(\([0-9.]*\) % reused).*/\1/p')
	STACKS+=", stack cache $([ -n "$cache" ] && echo "$cache % reused" || echo off)"
	# init.sh records with tiny stack maps: the stacks that collided.
	spill=$(section "$log" record | sed -n 's/.*stack map collisions: \([0-9]*\) user and \([0-9]*\) kernel.*/\1 user, \2 kernel/p')
	STACKS+=", spilled ${spill:-none}"
	if ! python3 "$ROOT/tests/perf_check.py" "$1" "$dir/perf.data" "$dir/workload.out" \
		"${@:2}" >"$dir/check.out" 2>&1; then
		REASON="perf script $1: $(tail -n 1 "$dir/check.out")"
		return 1
	fi
	[ "$1" = threads ] && set -- --threads-only || set --
	if [ "$(section_rc "$log" folded)" != 0 ] ||
	   ! python3 "$HERE/check.py" folded "$dir/folded.txt" "$dir/workload.out" "$@" \
		>"$dir/folded.out" 2>&1; then
		REASON="on-device offcpu report: $(tail -n 1 "$dir/folded.out" "$dir/folded.txt" 2>/dev/null | grep -v '^==' | tr '\n' ' ' | cut -c1-200)"
		return 1
	fi
	NOTE="perf script and on-device report: $NOTE"
	return 0
}

# reboot_cell NAME WHY: keep the failed console log as console.NAME.log, boot
# the cell's guest again, and note why in the row (run_cell's locals).
reboot_cell() {
	cp "$dir/console.log" "$dir/console.$1.log"
	boot "$board" "$kernel" "$dir/console.log"
	retried+="; retried after $2"
}

run_cell() {	# BOARD SUITE
	local board=$1 suite=$2 cell=$1-${VERSION_OF[$2]} dir info kernel pkg ver start secs
	local verdict=PASS retried=""
	dir=$OUT/$board/$suite
	mkdir -p "$dir"
	rm -f "$dir/row" "$dir/console.hung.log" "$dir/console.oops.log"
	if ! info=$("$HERE/fetch.sh" kernel "$board" "$suite" 2>"$dir/fetch.err"); then
		echo "FAIL|fetch failed||||" > "$dir/row"
		echo "FAIL $cell: kernel fetch failed: $(tail -n 1 "$dir/fetch.err")"
		return
	fi
	IFS=$'\t' read -r kernel pkg ver <<< "$info"
	start=$(date +%s)
	boot "$board" "$kernel" "$dir/console.log"
	# A guest that hangs before /init runs under TCG (seen once in ~50
	# boots) gets one more try; the cell says so.  A hang after that is
	# the tool's and fails the cell.
	if ! booted "$dir/console.log"; then
		reboot_cell hung "a hung boot"
	fi
	REASON="" VARIANT="" BTF="" NOTE="" STACKS=""
	check_cell "$board" "$dir" || verdict=FAIL
	# Those TCG failures (see ACCEL; never twice in a row) get one more
	# try, and the cell says so; the same failure again, or any other, fails.
	if [ $verdict = FAIL ] && grep -aqE 'int3: [0-9a-f]+ \[#[0-9]+\]|soft lockup' "$dir/console.log"; then
		reboot_cell oops "a guest $(grep -aoE -m1 'int3|soft lockup' "$dir/console.log") $(grep -a -m1 'RIP:' "$dir/console.log" | tr -d '\r' | sed 's/.*RIP: *//')"
		REASON="" VARIANT="" BTF="" NOTE="" STACKS="" verdict=PASS
		check_cell "$board" "$dir" || verdict=FAIL
	fi
	secs=$(( $(date +%s) - start ))
	NOTE+=$retried
	echo "$verdict|$ver|$VARIANT|$BTF|${secs}s|$STACKS|$NOTE" > "$dir/row"
	if [ $verdict = PASS ]; then
		echo "PASS $cell ($pkg $ver, $VARIANT, btf $BTF, ${secs}s; $STACKS; $NOTE)"
	else
		echo "FAIL $cell: $REASON ($pkg $ver, ${secs}s)"
	fi
}

table() {	# the cells run now, from their row files
	local board suite row
	echo "| board | 5.10 (bullseye) | 6.1 (bookworm) | 6.12 (trixie) | 7.x (sid) |"
	echo "|---|---|---|---|---|"
	for board in "${BOARDS[@]}"; do
		printf '| %s |' "$board"
		for suite in "${SUITES[@]}"; do
			row=$OUT/$board/$suite/row
			if [[ " ${RAN[*]} " == *" $board-$suite "* ]] && [ -s "$row" ]; then
				IFS='|' read -r v ver var btf secs stacks note < "$row"
				printf ' **%s** %s<br>%s, btf %s<br>%s<br>%s, %s |' "$v" "$ver" "$var" \
					"$btf" "$stacks" "$note" "$secs"
			elif has_suite "$board" "$suite"; then
				printf ' not run |'
			else
				printf ' n/a |'
			fi
		done
		echo
	done
}

mkdir -p "$OUT"
select_cells "$@" 3>&1 >"$OUT/cells" | tee "$OUT/early.verdicts"
mapfile -t SELECTED < "$OUT/cells"
RAN=()
start=$(date +%s)
# Binaries and initramfs first (make is not safe to run twice at once).
declare -A READY=()
for board in "${BOARDS[@]}"; do
	printf '%s\n' "${SELECTED[@]}" | grep -q "^$board " || continue
	mkdir -p "$OUT/$board"
	if make_initramfs "$board" 2>"$OUT/$board/initramfs.err"; then
		READY[$board]=1
	fi
done
for cell in "${SELECTED[@]}"; do
	read -r board suite <<< "$cell"
	if [ -z "${READY[$board]:-}" ]; then
		echo "FAIL $board-${VERSION_OF[$suite]}: initramfs: $(tail -n 1 "$OUT/$board/initramfs.err")" |
			tee -a "$OUT/early.verdicts"
		continue
	fi
	RAN+=("$board-$suite")
	while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n; done
	run_cell "$board" "$suite" &
done
wait
secs=$(( $(date +%s) - start ))
{
	echo "# QEMU kernel matrix"
	echo
	echo "Generated by \`make qemu-test\` on $(date -u +%Y-%m-%d) in ${secs} s" \
		"($JOBS cell(s) at a time, QEMU TCG, $(nproc) cores); Debian kernel package versions as booted."
	echo
	table
} > "$OUT/RESULTS.md"
[ $# -eq 0 ] && cp "$OUT/RESULTS.md" "$HERE/RESULTS.md"
echo
cat "$OUT/RESULTS.md"
# Exit status: 1 when any cell failed.
status=0
grep -q '^FAIL' "$OUT/early.verdicts" && status=1
for c in "${RAN[@]}"; do
	grep -q '^PASS' "$OUT/${c%%-*}/${c#*-}/row" 2>/dev/null || status=1
done
exit $status
