#!/bin/bash
# The kernel matrix: boot each board's Debian kernels under QEMU (TCG) with
# an initramfs holding busybox, the static offcpu and the blocker workload,
# record the workload in the guest, and check the guest's perf.data with the
# host's perf.  Prints PASS/FAIL/SKIP per cell and writes qemu-tests/RESULTS.md.
#
#   qemu-tests/run.sh [CELL...]     CELL: x86_64-6.1, arm64-trixie, s390x ...
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
CACHE=${OFFCPU_CACHE:-$HOME/.cache/offcpu}
OUT=$ROOT/build/qemu
TIMEOUT=${QEMU_TIMEOUT:-120}
declare -A VERSION_OF=([bullseye]=5.10 [bookworm]=6.1 [trixie]=6.12 [sid]=7.x)
SUITES=(bullseye bookworm trixie sid)

board_var() { awk -v k="$2" '$1 == k { sub(/^[^=]*=[ \t]*/, ""); print; exit }' "$ROOT/board/$1.mk"; }

wanted() {	# BOARD SUITE: is this cell selected?
	local c
	[ ${#CELLS[@]} -eq 0 ] && return 0
	for c in "${CELLS[@]}"; do
		case $c in
		"$1"|"$1-$2"|"$1-${VERSION_OF[$2]}") return 0 ;;
		esac
	done
	return 1
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

boot() {	# BOARD KERNEL LOG
	local board=$1 kernel=$2 log=$3 console machine
	console=$(board_var "$board" QEMU_CONSOLE)
	read -r -a machine <<< "$(board_var "$board" QEMU_MACHINE)"
	timeout --kill-after=10 "$TIMEOUT" "$(board_var "$board" QEMU_SYSTEM)" \
		"${machine[@]}" -m 1024 -smp 2 -no-reboot -nographic \
		-kernel "$kernel" -initrd "$OUT/$board/initramfs.gz" \
		-append "console=$console panic=-1 quiet loglevel=1 rdinit=/init" \
		</dev/null >"$log" 2>&1
}

# Verdict of one cell; sets REASON, VARIANT, BTF, NOTE.
check_cell() {
	local board=$1 dir=$2 log=$2/console.log
	VARIANT=$(section "$log" probe | sed -n 's/^variant: //p')
	BTF=$(section "$log" probe | sed -n 's/^btf: //p' | cut -d' ' -f1)
	if ! grep -q '^@@DONE' <(tr -d '\r' < "$log"); then
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
	section "$log" perfdata | base64 -d | gunzip > "$dir/perf.data" 2>/dev/null
	if [ ! -s "$dir/perf.data" ]; then
		REASON="no perf.data came back"
		return 1
	fi
	if python3 "$ROOT/tests/perf_check.py" compare "$dir/perf.data" "$dir/workload.out" \
		--symfs "$OUT/$board/root" >"$dir/check.out" 2>&1; then
		NOTE="user+kernel stacks, times within 10 %"
	elif section "$log" record > "$dir/record.txt" &&
	     grep -q 'user stacks not recorded' "$dir/record.txt"; then
		# The kernel cannot walk user stacks here (bpf_get_stackid fails):
		# check what it can do, the time per blocking thread.
		if ! python3 "$ROOT/tests/perf_check.py" threads "$dir/perf.data" \
			"$dir/workload.out" >"$dir/check.out" 2>&1; then
			REASON="per-thread check: $(tail -n 1 "$dir/check.out")"
			return 1
		fi
		NOTE="kernel walks no user stacks: per-thread times within 10 %"
	else
		REASON="perf check: $(tail -n 1 "$dir/check.out")"
		return 1
	fi
	section "$log" report > "$dir/report.txt"
	if [ "$(section_rc "$log" report)" != 0 ] ||
	   ! grep -qE "bl-sleep|blocker_nanosleep" "$dir/report.txt"; then
		REASON="on-device report: $(tail -n 1 "$dir/report.txt")"
		return 1
	fi
	return 0
}

run_cell() {	# BOARD SUITE
	local board=$1 suite=$2 cell=$1-${VERSION_OF[$2]} dir info kernel pkg ver start
	dir=$OUT/$board/$suite
	mkdir -p "$dir"
	if ! info=$("$HERE/fetch.sh" kernel "$board" "$suite" 2>"$dir/fetch.err"); then
		RESULT[$cell]="FAIL|fetch failed|||"
		echo "FAIL $cell: kernel fetch failed: $(tail -n 1 "$dir/fetch.err")"
		return
	fi
	IFS=$'\t' read -r kernel pkg ver <<< "$info"
	start=$(date +%s)
	boot "$board" "$kernel" "$dir/console.log"
	local secs=$(( $(date +%s) - start )) verdict=PASS retried=""
	# A guest that hangs during boot under TCG (seen once in ~50 boots) gets
	# one more try; the cell says so.
	if ! grep -q '^@@DONE' <(tr -d '\r' < "$dir/console.log"); then
		cp "$dir/console.log" "$dir/console.hung.log"
		boot "$board" "$kernel" "$dir/console.log"
		secs=$(( $(date +%s) - start ))
		retried="; retried after a hung boot"
	fi
	REASON="" VARIANT="" BTF="" NOTE=""
	check_cell "$board" "$dir" || verdict=FAIL
	NOTE+=$retried
	RESULT[$cell]="$verdict|$ver|$VARIANT|$BTF|${secs}s|$NOTE"
	if [ $verdict = PASS ]; then
		echo "PASS $cell ($pkg $ver, $VARIANT, btf $BTF, ${secs}s; $NOTE)"
	else
		echo "FAIL $cell: $REASON ($pkg $ver, ${secs}s)"
	fi
}

table() {
	local board suite r
	echo "| board | 5.10 (bullseye) | 6.1 (bookworm) | 6.12 (trixie) | 7.x (sid) |"
	echo "|---|---|---|---|---|"
	for mk in "$ROOT"/board/*.mk; do
		board=$(basename "$mk" .mk)
		printf '| %s |' "$board"
		for suite in "${SUITES[@]}"; do
			r=${RESULT[$board-${VERSION_OF[$suite]}]:-}
			if [ -n "$r" ]; then
				IFS='|' read -r v ver var btf secs note <<< "$r"
				printf ' **%s** %s<br>%s, btf %s, %s%s |' "$v" "$ver" "$var" "$btf" "$secs" \
					"${note:+<br>$note}"
			elif [[ " $(board_var "$board" KERNEL_SUITES) " == *" $suite "* ]]; then
				printf ' not run |'
			else
				printf ' n/a |'
			fi
		done
		echo
	done
}

CELLS=("$@")
declare -A RESULT
mkdir -p "$OUT"
for mk in "$ROOT"/board/*.mk; do
	board=$(basename "$mk" .mk)
	selected=()
	for suite in $(board_var "$board" KERNEL_SUITES); do
		wanted "$board" "$suite" && selected+=("$suite")
	done
	[ ${#selected[@]} -gt 0 ] || continue
	mkdir -p "$OUT/$board"
	if ! make_initramfs "$board" 2>"$OUT/$board/initramfs.err"; then
		for suite in "${selected[@]}"; do
			echo "FAIL $board-${VERSION_OF[$suite]}: initramfs: $(tail -n 1 "$OUT/$board/initramfs.err")"
		done
		continue
	fi
	for suite in "${selected[@]}"; do
		run_cell "$board" "$suite"
	done
done
{
	echo "# QEMU kernel matrix"
	echo
	echo "Generated by \`make qemu-test\` on $(date -u +%Y-%m-%d); Debian kernel package versions as booted."
	echo
	table
} > "$OUT/RESULTS.md"
[ ${#CELLS[@]} -eq 0 ] && cp "$OUT/RESULTS.md" "$HERE/RESULTS.md"
echo
table
