#!/bin/bash
# --wakers on the host kernel: the blocker's pipe reader must be woken by the
# pipe writer's write path, the mutex waiter by the holder's unlock, the
# sleeper by a timer (tests/wakers_check.py: >= 90 % of each function's
# time), in every variant that supports it; tp,hash refuses in one line; the
# sleepers' times are those of a recording without --wakers (perf_check.py),
# and stock perf reads both events.
source "$(dirname "$0")/lib.sh"
BLOCKER=${BLOCKER:-$ROOT/build/x86_64/blocker}
T=wakers

need_bpf "$T" "$OFFCPU" "$BLOCKER" || exit 0

# record NAME ARGS...: the blocker for 2 s under --wakers, then the folded pairs.
record() {
	local name=$1; shift
	if ! "$OFFCPU" --wakers "$@" -o "$WORK/$name.data" -- "$BLOCKER" -t 2 \
		>"$WORK/$name.out" 2>"$WORK/$name.err"; then
		fail "$T-$name-runs" "exit $?: $(tail -n 1 "$WORK/$name.err")"
		return 1
	fi
	"$OFFCPU" report --wakers --folded -T -i "$WORK/$name.data" >"$WORK/$name.folded" \
		2>"$WORK/$name.rep.err" || { fail "$T-$name-report" "$(tail -n 1 "$WORK/$name.rep.err")"; return 1; }
	check "$T-$name-who-woke" python3 "$ROOT/tests/wakers_check.py" "$WORK/$name.folded"
	explain "$WORK/$name.err"
}

# Default map sizes: with --wakers every place an interrupt can find the
# CPU is a waker kernel stack of its own, and 64 entries do not hold a busy
# machine's (those wakers are then named [waker-kernel-stack-not-recorded]).
record default -v
# The interrupt functions' ranges asked of the kernel (5.16+: a syscall
# program, as __schedule's), /proc/kallsyms not read for them.
ranges=$(grep -m1 "interrupt functions' ranges" "$WORK/default.err")
echo "    ${ranges:-no ranges line}"
if [ "$(printf '%s\n' 5.16 "$(uname -r)" | sort -V | head -n 1)" != 5.16 ]; then
	skip "$T-ranges-by-program" "kernel before 5.16"
elif [[ $ranges =~ ranges\ ([0-9]+)\ from\ a\ syscall.*\ 0\ from\ /proc/kallsyms ]] &&
     [ "${BASH_REMATCH[1]}" -ge 10 ]; then
	pass "$T-ranges-by-program"
else
	fail "$T-ranges-by-program" "${ranges:-no -v line}"
fi
# The sleepers' own times are unchanged by --wakers (both events in the file).
check "$T-default-truth" python3 "$ROOT/tests/perf_check.py" compare "$WORK/default.data" \
	"$WORK/default.out" --kernel-func do_nanosleep --kernel-func vfs_read
# The wakers' own pid, tid and name, as perf script reads them.
check "$T-waker-identity" python3 "$ROOT/tests/perf_check.py" wakers "$WORK/default.data" \
	"$WORK/default.out"
check "$T-perf-report-clean" python3 "$ROOT/tests/perf_check.py" report "$WORK/default.data"
if perf report -i "$WORK/default.data" --stdio --sort comm 2>/dev/null | grep -q "of event 'offcpu-waker'" &&
   perf script -i "$WORK/default.data" -F event,comm,ip,sym 2>/dev/null | grep -A3 'offcpu-waker' | grep -q hrtimer_wakeup; then
	pass "$T-perf-shows-offcpu-waker"
else
	fail "$T-perf-shows-offcpu-waker" "no offcpu-waker event or no hrtimer_wakeup frame in perf script"
fi
# Text: each stack, then its wakers; the pipe reader's names the writer.
"$OFFCPU" report --wakers -i "$WORK/default.data" -c bl-piperd -n 1 >"$WORK/text.out" 2>&1 &&
	grep -A40 'woken by:' "$WORK/text.out" | grep -q 'bl-pipewr' &&
	pass "$T-report-text" || fail "$T-report-text" "$(head -c 300 "$WORK/text.out")"
# Without --wakers the report counts each block once (the waker samples are skipped).
"$OFFCPU" report -i "$WORK/default.data" -n 0 >"$WORK/plain.out" 2>&1
"$OFFCPU" report -i "$WORK/default.data" -n 0 --wakers >"$WORK/wk.out" 2>&1
a=$(sed -n 2p "$WORK/plain.out" | cut -d' ' -f2); b=$(sed -n 2p "$WORK/wk.out" | cut -d' ' -f2)
[ -n "$a" ] && [ "$a" = "$b" ] && pass "$T-report-same-total" ||
	fail "$T-report-same-total" "without --wakers $a s, with $b s"

# A recording made without --wakers: one line, and no report.
"$OFFCPU" -o "$WORK/plain.data" -- sleep 0.1 >/dev/null 2>&1
if "$OFFCPU" report --wakers -i "$WORK/plain.data" >"$WORK/nowk.out" 2>&1; then
	fail "$T-report-refuses-plain" "report --wakers accepted a file without offcpu-waker"
elif [ "$(wc -l <"$WORK/nowk.out")" = 1 ] && grep -q 'recorded without --wakers' "$WORK/nowk.out"; then
	pass "$T-report-refuses-plain"
else
	fail "$T-report-refuses-plain" "$(head -c 300 "$WORK/nowk.out")"
fi

for v in tp_btf,hash raw_tp,hash; do
	record "${v%%,*}" --variant "$v"
done
if "$OFFCPU" --wakers --variant tp,hash -d 1 -o "$WORK/tp.data" >"$WORK/tp.out" 2>&1; then
	fail "$T-tp-refused" "tp,hash accepted --wakers"
elif [ "$(wc -l <"$WORK/tp.out")" = 1 ] && grep -q 'not supported' "$WORK/tp.out"; then
	pass "$T-tp-refused"
else
	fail "$T-tp-refused" "$(head -c 300 "$WORK/tp.out")"
fi

# Interrupt wakers classified live, on a recording made now (not only from
# the committed sample files): a UDP receive over loopback is woken from the
# NET_RX softirq the sender's send raises (run as the send leaves its
# bottom-half section, or by ksoftirqd: either way under the softirq
# handler), so udp-rx's blocks in the socket's wait are [softirq]'s, named
# so by the recorder (src/record/wakers.c), not [irq] nor the sender.
cat >"$WORK/udpwake.py" <<'PY'
import ctypes, socket, threading, time
libc = ctypes.CDLL(None)
def name(n):
    libc.prctl(15, n.encode(), 0, 0, 0)
N = 100
rx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
rx.bind(("127.0.0.1", 0))
def receive():
    name("udp-rx")
    for _ in range(N):
        rx.recv(64)
t = threading.Thread(target=receive)
t.start()
name("udp-tx")
tx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for _ in range(N):
    time.sleep(0.01)
    tx.sendto(b"x", rx.getsockname())
t.join()
PY
if "$OFFCPU" --wakers -o "$WORK/udp.data" -- python3 "$WORK/udpwake.py" >"$WORK/udp.out" 2>"$WORK/udp.err" &&
   "$OFFCPU" report --wakers --folded -T -i "$WORK/udp.data" >"$WORK/udp.folded" 2>"$WORK/udp.rep.err"; then
	check "$T-softirq-live" python3 "$ROOT/tests/wakers_check.py" "$WORK/udp.folded" --no-user \
		--expect "udp-rx:-:__skb_wait_for_more_packets:[softirq]:"
	explain "$WORK/udp.err"
else
	fail "$T-softirq-live" "$(tail -n 1 "$WORK/udp.err") $(tail -n 1 "$WORK/udp.rep.err")"
fi

# A program built like a distribution's (tests/workload/pipewake.c: -O2, no
# frame pointers, Debian's glibc): the waker's user stack is unwound with CFI
# as the sleeper's is, so the reader's wakeups name the writer's function,
# pipewake_write, under libc's write (frame pointers stop in write: the
# control).  With the stack cache verified, through raw_tp (registers at the
# top of the task's kernel stack) and with the kernel walker.
PIPEWAKE=${PIPEWAKE:-$ROOT/build/x86_64/pipewake}
PW_EXPECT="--expect pw-reader:pipewake_read:pipe_read:pw-writer:pipewake_write"
pipewake() {	# NAME [offcpu options]: 100 writes 10 ms apart under --wakers
	local name=$1; shift
	if ! "$OFFCPU" -v --wakers "$@" -o "$WORK/$name.data" -- "$PIPEWAKE" -n 100 -i 10 \
		>"$WORK/$name.out" 2>"$WORK/$name.err"; then
		fail "$T-$name-runs" "exit $?: $(tail -n 1 "$WORK/$name.err")"
		return 1
	fi
	"$OFFCPU" report --wakers --folded -T -i "$WORK/$name.data" >"$WORK/$name.folded" \
		2>"$WORK/$name.rep.err" || { fail "$T-$name-report" "$(tail -n 1 "$WORK/$name.rep.err")"; return 1; }
}
# reader_time NAME: the reader's recorded ms in pipewake_read is within 10 %
# of the workload's own measurement (the waker samples take none of it).
reader_time() {
	local rec own
	rec=$(awk '/^pw-reader/ && /;pipewake_read;/ { s += $NF } END { printf "%d", s / 1000 }' \
		"$WORK/$1.folded")
	own=$(awk '$1 == "woken" { printf "%d", $2 / 1000000 }' "$WORK/$1.out")
	echo "    pipewake $1: reader blocked $own ms, recorded $rec ms"
	[ "${own:-0}" -gt 0 ] && [ $((rec * 10)) -ge $((own * 9)) ] && [ $((rec * 10)) -le $((own * 11)) ]
}
if [ ! -x "$PIPEWAKE" ]; then
	fail "$T-pipewake" "no $PIPEWAKE (make workloads)"
elif pipewake pw-dwarf && grep -q '^user stacks: copied' "$WORK/pw-dwarf.err"; then
	check "$T-pipewake-cfi" python3 "$ROOT/tests/wakers_check.py" "$WORK/pw-dwarf.folded" $PW_EXPECT
	explain "$WORK/pw-dwarf.err"
	reader_time pw-dwarf && pass "$T-pipewake-time" || fail "$T-pipewake-time" "see above"
	check "$T-pipewake-perf-report-clean" python3 "$ROOT/tests/perf_check.py" report \
		"$WORK/pw-dwarf.data"
	pipewake pw-fp --call-graph fp &&
		check_fails "$T-pipewake-fp-can-fail" "frame pointers alone found pipewake_write" \
			python3 "$ROOT/tests/wakers_check.py" "$WORK/pw-fp.folded" $PW_EXPECT
	pipewake pw-raw --variant raw_tp,hash --stack-cache verify &&
		check "$T-pipewake-cfi-raw_tp" python3 "$ROOT/tests/wakers_check.py" \
			"$WORK/pw-raw.folded" $PW_EXPECT
	line=$(grep 'stack cache (verify)' "$WORK/pw-raw.err")
	echo "    $line"
	if [[ $line =~ :\ ([0-9]+)\ of\ [0-9]+\ user.*,\ ([0-9]+)\ of\ those\ wrong ]] &&
	   [ "${BASH_REMATCH[1]}" -gt 0 ] && [ "${BASH_REMATCH[2]}" -eq 0 ]; then
		pass "$T-pipewake-stack-cache-verify"
	else
		fail "$T-pipewake-stack-cache-verify" "${line:-no verify line}"
	fi
	# Without the cache every waker is copied, and each id names one
	# block: all are let go once written (none left at the end).
	pipewake pw-nocache --stack-cache off &&
		check "$T-pipewake-cfi-no-cache" python3 "$ROOT/tests/wakers_check.py" \
			"$WORK/pw-nocache.folded" $PW_EXPECT
	line=$(grep 'tables at the end' "$WORK/pw-nocache.err")
	echo "    $line"
	[[ $line == *": 0 dwarf stack ids"* ]] && pass "$T-pipewake-ids-let-go" ||
		fail "$T-pipewake-ids-let-go" "${line:-no tables line}"
else
	skip "$T-pipewake" "no CFI unwinding here: $(grep '^user stacks' "$WORK/pw-dwarf.err")"
fi
