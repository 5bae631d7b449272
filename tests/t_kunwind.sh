#!/bin/bash
# --unwind-in kernel (bpf/offcpu_unwind.bpf.h, src/unwind/ktables.c): user
# stacks walked by the BPF program with CFI rows loaded per file.  On the
# distribution-built workload (no frame pointers, libc's CFI):
#  - the same truth as the copy path (tests/perf_check.py distro), user
#    stacks unwound in the kernel (-v), none by frame pointer, and copies
#    only while rows load;
#  - the same user stacks as the copy path gives, block by block
#    (--unwind-in verify copies the walked stacks too and compares);
#  - the stack cache fed by walked stacks: no wrong reuse (--stack-cache
#    verify);
#  - a table that cannot load (--unwind-rows too small for any file) falls
#    back to the copy for every block: the same truth, nothing unwound in
#    the kernel;
#  - forked children walked with their parent's mappings from their first
#    block (none waits for its own "process not loaded"), their stacks
#    whole; children that exec or dlopen a library are never walked with
#    the parent's stale mappings: every walked stack equals its copy's.
#  - the copy path behind the ring: copies of children gone (exited, or
#    exec'ed) before they are unwound use the maps kept at their fork or
#    from their MMAP2 records, whole (see gone below).
#  - the row pool never kept mapped in the recorder (its RSS): rows are
#    written through a window of their own pages.
set -uo pipefail
source "$(dirname "$0")/lib.sh"
T=kunwind

bad_value unwind-in "expected user, kernel or verify" --unwind-in both
bad_value unwind-rows "must be at least 1" --unwind-rows 0

DISTRO=$ROOT/build/x86_64/distro
CHECK="python3 $ROOT/tests/perf_check.py"
need_bpf $T "$OFFCPU" "$DISTRO" || exit 0
if [ "$(board_var x86_64 KUNWIND)" != 1 ]; then
	skip $T "the board does not unwind in the kernel"
	exit 0
fi

# counts NAME: "kernel copied fp" from its -v line.
counts() {
	sed -nE 's/.*user stacks: ([0-9]+) unwound in the kernel, ([0-9]+) copied, ([0-9]+) by frame pointer.*/\1 \2 \3/p' \
		"$WORK/$1.err"
}

# A process forking beside it, not recorded (see the in-kernel check).
(while :; do /bin/true; done) &
forking=$!
record_distro $T kernel --unwind-in kernel
kill $forking
wait $forking 2>/dev/null
echo "    $(grep -m1 '^user stacks' "$WORK/kernel.err")"
grep 'unwound in the kernel\|kernel unwinding' "$WORK/kernel.err" | sed 's/^/    /'

check $T-truth $CHECK distro "$WORK/kernel.data" "$WORK/kernel.out" --folded "$WORK/kernel.folded" \
	--record-err "$WORK/kernel.err"
# Stacks unwound in the kernel once the rows are loaded, more than copied
# (issue 27): the only copies are blocks before that (their process or
# file not loaded yet: how many depends on how busy the machine is), never
# a row, a word or a step the walker could not follow on this workload.
read -r kern copied fp <<<"$(counts kernel)"
others=$(sed -nE 's/.*row it cannot follow ([0-9]+), stack word unreadable ([0-9]+), sp went backwards ([0-9]+), spill map full ([0-9]+).*/\1 + \2 + \3 + \4/p' "$WORK/kernel.err")
# The workload forks nothing: no entry inherited at fork (the shell
# forking beside it is not recorded, so not loaded when it forks).
inherited=$(sed -nE 's/.* ([0-9]+) inherited at fork.*/\1/p' "$WORK/kernel.err")
if [ "${kern:-0}" -gt "${copied:-0}" ] && [ "${fp:-1}" -eq 0 ] && [ -n "$others" ] && [ $((others)) -eq 0 ] &&
   [ "${inherited:-1}" -eq 0 ]; then
	pass $T-in-kernel
else
	fail $T-in-kernel "in the kernel ${kern:-?}, copied ${copied:-?}, frame pointer ${fp:-?}, other misses ${others:-?}, inherited at fork ${inherited:-?}"
fi

# verify: every walked stack also copied and unwound in user space (the
# stack cache off, so every block is walked); none may differ.  Every
# walker: bpf_loop's where the kernel has it (-v names the one loaded), and
# forced, the tail-called steps and the bounded loop of kernels without it.
record_distro $T verify --unwind-in verify --stack-cache off
verified $T-same-stacks "$WORK/verify.err" 'kernel unwinding (verify)' \
	'.*: ([0-9]+) walked stacks compared.*, ([0-9]+) of those differ.*' 100 compared differ
# Its samples carry the walked stacks (as the QEMU cells judge them): the
# same truth, more stacks unwound in the kernel than copied (verify's
# copies of walked stacks are not counted as copied).
check $T-verify-truth $CHECK distro "$WORK/verify.data" "$WORK/verify.out" --folded "$WORK/verify.folded" \
	--record-err "$WORK/verify.err"
read -r kern copied fp <<<"$(counts verify)"
if [ "${kern:-0}" -gt "${copied:-0}" ]; then
	pass $T-verify-in-kernel
else
	fail $T-verify-in-kernel "in the kernel ${kern:-?}, copied ${copied:-?}"
fi
for w in tail bounded; do
	OFFCPU_KWALKER=$w record_distro $T verify-$w --unwind-in verify --stack-cache off
	verified $T-same-stacks-$w "$WORK/verify-$w.err" 'kernel unwinding (verify)' \
		'.*: ([0-9]+) walked stacks compared.*, ([0-9]+) of those differ.*' 100 compared differ
done
walker() { sed -n 's/^kernel walker: \([a-z_]*\).*/\1/p' "$WORK/$1.err"; }
if grep -q '^bpf_loop: yes' "$WORK/verify.err" && grep -q '^jit: yes' "$WORK/verify.err"; then
	want=bpf_loop
else
	want=tail	# it loads here: verify-tail (forced: no fallback) shows it
fi
if [ "$(walker verify)" = $want ] && [ "$(walker verify-tail)" = tail ] &&
   [ "$(walker verify-bounded)" = bounded ]; then
	pass $T-walker-chosen
else
	fail $T-walker-chosen "walker '$(walker verify)' (expected $want), forced \
'$(walker verify-tail)' and '$(walker verify-bounded)'"
fi
# A walker the variable does not name: one line, no recording.
if OFFCPU_KWALKER=loop "$OFFCPU" --unwind-in kernel -d 1 -o "$WORK/badwalker.data" \
	>/dev/null 2>"$WORK/badwalker.err"; then
	fail $T-bad-walker "OFFCPU_KWALKER=loop accepted"
elif [ "$(wc -l <"$WORK/badwalker.err")" -eq 1 ] && grep -q 'OFFCPU_KWALKER=loop' "$WORK/badwalker.err"; then
	pass $T-bad-walker
else
	fail $T-bad-walker "$(head -n 2 "$WORK/badwalker.err" | tr '\n' ' ')"
fi

# The stack cache fed by the walks: a walked stack's entry holds the
# registers and every word the walk read; verify copies every block anyway
# and counts the reuses whose stack differs (none may).
record_distro $T cache --unwind-in kernel --stack-cache verify
stack_cache_verified $T-stack-cache-verify "$WORK/cache.err"

record_distro $T norows --unwind-in kernel --unwind-rows 1
check $T-fallback-truth $CHECK distro "$WORK/norows.data" "$WORK/norows.out" --folded "$WORK/norows.folded" \
	--record-err "$WORK/norows.err"
read -r kern copied fp <<<"$(counts norows)"
if [ "${kern:-1}" -eq 0 ] && [ "${copied:-0}" -gt 0 ] && [ "${fp:-1}" -eq 0 ]; then
	pass $T-fallback-copies
else
	fail $T-fallback-copies "in the kernel ${kern:-?}, copied ${copied:-?}, frame pointer ${fp:-?}"
fi

# A forking program built like a distribution's (-O2, no frame pointers,
# dynamically linked): the parent blocks first (its entry and rows load),
# then forks children that block in child_sleep (fork), exec themselves
# and block in execd_sleep (exec), or dlopen a library mapped after the
# fork and block in lib_sleep inside it (dlopen).  asm volatile after each
# call keeps it a call (no tail call drops the caller's frame).
cat >"$WORK/forker.c" <<'C'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#define NOINLINE __attribute__((noinline))
#define KEEP() __asm__ volatile("")
#ifdef PAD
/* The exec'd program's code lies elsewhere than its parent's at the same addresses. */
__attribute__((used)) static void pad(void) { __asm__ volatile(".skip 3000, 0x90"); }
#endif
static NOINLINE void nap(long ns)
{
	struct timespec ts = { 0, ns };
	nanosleep(&ts, NULL);
	KEEP();
}
static NOINLINE void parent_warm(void) { for (int i = 0; i < 60; i++) { nap(4000000); KEEP(); } }
static NOINLINE void child_sleep(void) { for (int i = 0; i < 20; i++) { nap(2000000); KEEP(); } }
/* Not child_sleep's code: gcc -O2 would fold identical functions into one. */
static NOINLINE void execd_sleep(void) { for (int i = 0; i < 25; i++) { nap(1500000); KEEP(); } }
#ifndef STATIC
static NOINLINE void child_dlopen(const char *lib)
{
	void *h = dlopen(lib, RTLD_NOW);
	void (*f)(void) = h ? (void (*)(void))dlsym(h, "lib_sleep") : NULL;
	if (!f)
		_exit(3);
	f();
	KEEP();
}
#else
static void child_dlopen(const char *lib) { (void)lib; _exit(4); }
#endif
int main(int argc, char **argv)
{
	int n = 40, bad = 0;
	if (argc > 1 && !strcmp(argv[1], "execd")) {
		execd_sleep();
		return 0;
	}
	parent_warm();
	for (int i = 0; i < n; i++) {
		pid_t p = fork();
		if (p < 0)
			return 1;
		if (p)
			continue;
		if (argc > 2 && !strcmp(argv[1], "exec"))
			execl(argv[2], argv[2], "execd", (char *)NULL), _exit(2);
		if (argc > 2 && !strcmp(argv[1], "dlopen"))
			child_dlopen(argv[2]);
		else
			child_sleep();
		_exit(0);
	}
	for (int st; wait(&st) > 0;)
		bad |= !WIFEXITED(st) || WEXITSTATUS(st);
	return bad;
}
C
cat >"$WORK/libku.c" <<'C'
#include <time.h>
__attribute__((noinline)) void lib_sleep(void)
{
	for (int i = 0; i < 20; i++) {
		struct timespec ts = { 0, 2000000 };
		nanosleep(&ts, (void *)0);
		__asm__ volatile("");
	}
}
C
# exec: static and not PIE, so the exec'd program's text lies where its
# parent's did and a walk with the parent's mappings would find rows there
# (the wrong program's); the entry's mm is all that tells them apart.
if ! gcc -O2 "$WORK/forker.c" -o "$WORK/forker" -ldl ||
   ! gcc -O2 -static -no-pie -DSTATIC "$WORK/forker.c" -o "$WORK/forker-static" ||
   ! gcc -O2 -static -no-pie -DSTATIC -DPAD "$WORK/forker.c" -o "$WORK/execd-static" ||
   ! gcc -O2 -shared -fPIC "$WORK/libku.c" -o "$WORK/libku.so"; then
	fail $T-fork-setup "cannot build the forking workload"
	exit 0
fi

# fork_record NAME MODE [offcpu options]
fork_record() {
	local name=$1 mode=$2
	shift 2
	local prog=$WORK/forker arg=$WORK/libku.so

	[ "$mode" = exec ] && prog=$WORK/forker-static arg=$WORK/execd-static
	"$OFFCPU" -v "$@" -o "$WORK/$name.data" -- "$prog" "$mode" "$arg" \
		>"$WORK/$name.out" 2>"$WORK/$name.err" ||
		fail "$T-$name-runs" "exit $?: $(tail -n 1 "$WORK/$name.err")"
	"$OFFCPU" report -i "$WORK/$name.data" --folded >"$WORK/$name.folded" 2>"$WORK/$name.rerr" ||
		fail "$T-$name-report" "exit $?: $(head -n 1 "$WORK/$name.rerr")"
}
# miss NAME WHAT: the count of that miss on the -v line.
miss() { sed -nE "s/.*copied instead:.* $2 ([0-9]+).*/\1/p" "$WORK/$1.err"; }
# whole NAME FUNC CALLERS: the share (%) of FUNC's off-CPU time whose stack
# goes through CALLERS (e.g. "main;child_sleep;nap").
whole() {
	awk -v f=";$2;" -v c="$3" '{ v = $NF; s = $0; sub(/ [0-9]+$/, "", s)
		if (index(s ";", f)) { all += v; if (index(s, c)) ok += v } }
		END { printf "%d", all ? 100 * ok / all : -1 }' "$WORK/$1.folded"
}

# Forked children: none waits for an entry of its own, nor for rows (the
# parent's first block, copied, made the loader load its files' rows), so
# every child's first block is walked (the rest reuse it from the stack
# cache); only the parent's first blocks miss.  Their stacks are whole.
fork_record fork fork --unwind-in kernel
echo "    $(grep -m1 '^\[ offcpu: user stacks: ' "$WORK/fork.err")"
grep 'kernel unwinding' "$WORK/fork.err" | sed 's/^/    /'
read -r kern copied fp <<<"$(counts fork)"
noproc=$(miss fork "process not loaded")
norows=$(miss fork "file's rows not loaded")
inherited=$(sed -nE 's/.* ([0-9]+) inherited at fork.*/\1/p' "$WORK/fork.err")
share=$(whole fork child_sleep "main;child_sleep;nap")
if [ "${inherited:-0}" -ge 40 ] && [ $(( ${noproc:-99} + ${norows:-99} )) -le 5 ] &&
   [ "${kern:-0}" -ge 40 ] && [ "${share:-0}" -ge 99 ]; then
	pass $T-fork-inherits
else
	fail $T-fork-inherits "inherited ${inherited:-?} of 40, process or rows not loaded ${noproc:-?} + ${norows:-?} (at most 5), in the kernel ${kern:-?} (at least 40), child_sleep whole ${share:-?} %"
fi

# Children that exec or map a new library after the fork: every walked
# stack equals its copy's unwinding (never the parent's stale mappings),
# and the new library's stacks are whole.
for mode in fork exec dlopen; do
	fork_record "v$mode" $mode --unwind-in verify --stack-cache off
	line=$(grep 'kernel unwinding (verify)' "$WORK/v$mode.err" || true)
	echo "    $mode: ${line:-no verify line}"
	read -r compared differ <<<"$(sed -nE 's/.*: ([0-9]+) walked stacks compared.*, ([0-9]+) of those differ.*/\1 \2/p' <<<"$line")"
	case $mode in
	exec) share=$(whole vexec execd_sleep "main;execd_sleep;nap") ;;
	dlopen) share=$(whole vdlopen lib_sleep "main;child_dlopen;lib_sleep") ;;
	*) share=$(whole vfork child_sleep "main;child_sleep;nap") ;;
	esac
	if [ "${compared:-0}" -gt 100 ] && [ "${differ:-1}" -eq 0 ] && [ "${share:-0}" -ge 99 ]; then
		pass $T-fork-$mode-same-stacks
	else
		fail $T-fork-$mode-same-stacks "compared ${compared:-?}, differ ${differ:-?}, whole ${share:-?} %"
		explain "$WORK/v$mode.err"
	fi
done

# The copy path (--unwind-in user) when user space is behind: the profiler
# stopped (SIGSTOP, as a busy machine holds it back) while a parent forks
# children that block and exit (fork), or exec a program that does
# (exec); when it runs again their copies wait in the ring and /proc has
# no maps of them any more.  Their FORK records say whose maps they have
# (their parent's), the exec'ed program's MMAP2 records what it maps:
# every child stack whole, its 160 blocks unwound, at most 8 of them cut
# for want of an address space (before: all 160 cut at their first frame;
# under perf bench messaging, 142 of 228 stacks that differed from the
# walker's did so).  The few allowed: on a loaded host the 4 blocks of
# one exec'ed child were cut in 2 of 10 runs (not yet explained: task
# records lost while the profiler stood still, or blocks inside the exec,
# are candidates); never a fork's.
cat >"$WORK/burst.c" <<'C'
#include <fcntl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#define NOINLINE __attribute__((noinline))
#define KEEP() __asm__ volatile("")
static NOINLINE void nap(long ns)
{
	struct timespec ts = { 0, ns };
	nanosleep(&ts, NULL);
	KEEP();
}
static NOINLINE void child_sleep(void) { for (int i = 0; i < 4; i++) { nap(2000000); KEEP(); } }
static NOINLINE void execd_sleep(void) { for (int i = 0; i < 4; i++) { nap(1500000); KEEP(); } }
static NOINLINE void parent_wait(const char *go) { while (access(go, F_OK)) { nap(5000000); KEEP(); } }
static void touch(const char *f) { close(open(f, O_CREAT | O_WRONLY, 0644)); }
/* burst READY GO DONE [exec], or burst execd */
int main(int argc, char **argv)
{
	int bad = 0;
	if (argc == 2) {
		execd_sleep();
		return 0;
	}
	if (argc < 4)
		return 2;
	for (int i = 0; i < 10; i++)
		nap(5000000);
	touch(argv[1]);
	parent_wait(argv[2]);
	for (int i = 0; i < 40; i++) {
		pid_t p = fork();
		if (p < 0)
			return 1;
		if (!p && argc > 4)
			execl("/proc/self/exe", argv[0], "execd", (char *)NULL), _exit(2);
		if (!p) {
			child_sleep();
			_exit(0);
		}
	}
	for (int st; wait(&st) > 0;)
		bad |= !WIFEXITED(st) || WEXITSTATUS(st);
	touch(argv[3]);
	nap(100000000);
	return bad;
}
C
# wait_file FILE: up to 20 s for it.
wait_file() { for _ in $(seq 200); do [ -e "$1" ] && return 0; sleep 0.1; done; return 1; }
# burst_record NAME MODE [stop]: the burst recorded into NAME.data (-v in
# NAME.err, folded stacks in NAME.folded), the profiler stopped while the
# children run when asked: after the parent's first blocks were unwound
# (its maps read).
burst_record() {
	local name=$1 mode=$2 stop=${3:-} rec
	rm -f "$WORK/ready" "$WORK/go" "$WORK/done"
	"$OFFCPU" -v --unwind-in user -o "$WORK/$name.data" -- "$WORK/burst" "$WORK/ready" \
		"$WORK/go" "$WORK/done" ${mode/fork/} >"$WORK/$name.out" 2>"$WORK/$name.err" &
	rec=$!
	wait_file "$WORK/ready" && sleep 0.5
	[ -z "$stop" ] || kill -STOP $rec
	touch "$WORK/go"
	[ -z "$stop" ] || { wait_file "$WORK/done"; kill -CONT $rec; }
	wait $rec || fail $T-$name-$mode-runs "exit $?: $(tail -n 1 "$WORK/$name.err")"
	"$OFFCPU" report -i "$WORK/$name.data" --folded >"$WORK/$name.folded" 2>"$WORK/$name.rerr" ||
		fail $T-$name-$mode-report "exit $?: $(head -n 1 "$WORK/$name.rerr")"
}
# gone MODE FUNC: the burst recorded with the profiler stopped; FUNC's stacks whole.
gone() {
	local mode=$1 func=$2 gone nocfi kept share cuts cuts_rc
	burst_record gone $mode stop
	gone=$(sed -nE 's/.*cut: address space gone.*: ([0-9]+) .*/\1/p' "$WORK/gone.err")
	nocfi=$(sed -nE 's/.*cut: no CFI for a pc: ([0-9]+) .*/\1/p' "$WORK/gone.err")
	kept=$(sed -nE 's/.*not read\): ([0-9]+) .*/\1/p' "$WORK/gone.err")
	share=$(whole gone $func "main;$func;nap")
	echo "    $mode: $func's stacks whole ${share:-?} %, unwound with the maps kept ${kept:-?}, cut: address space gone ${gone:-?}, no CFI ${nocfi:-?}"
	cuts=$($CHECK cuts "$WORK/gone.data" --record-err "$WORK/gone.err" 2>&1)
	cuts_rc=$?
	echo "    $mode: $cuts" | head -n 2
	if [ "${share:--1}" -ge 99 ] && [ "${kept:-0}" -ge 40 ] && [ -n "$gone" ] && [ -n "$nocfi" ] &&
	   [ "$cuts_rc" -eq 0 ]; then
		pass $T-copy-gone-$mode
	else
		fail $T-copy-gone-$mode "$func's stacks whole ${share:-?} % (at least 99), unwound with the maps kept ${kept:-?} (at least 40); $(tail -n 1 <<<"$cuts")"
		explain "$WORK/gone.err"
	fi
}
if gcc -O2 "$WORK/burst.c" -o "$WORK/burst"; then
	gone fork child_sleep
	gone exec execd_sleep
else
	fail $T-gone-setup "cannot build the forking workload"
fi

# The same burst with the profiler running: each child is alive when its
# first copy is unwound, and is unwound with the maps kept at its fork
# (its parent's, and the MMAP2 records since) instead of reading
# /proc/PID/maps: 160 us in the kernel and as much parsing for each of a
# busy machine's new processes.  Its stacks stay whole.
live() {
	local mode=$1 func=$2 share notread
	burst_record live $mode
	notread=$(sed -nE 's/.*not read\): ([0-9]+) .*/\1/p' "$WORK/live.err")
	share=$(whole live $func "main;$func;nap")
	echo "    $mode, profiler running: $func's stacks whole ${share:-?} %, processes unwound without reading /proc/PID/maps ${notread:-?}"
	if [ "${share:--1}" -ge 99 ] && [ "${notread:-0}" -ge 40 ]; then
		pass $T-copy-live-$mode
	else
		fail $T-copy-live-$mode "$func's stacks whole ${share:-?} % (at least 99), processes unwound without reading /proc/PID/maps ${notread:-?} (at least 40: the 40 children)"
		explain "$WORK/live.err"
	fi
}
if [ -x "$WORK/burst" ]; then
	live fork child_sleep
	live exec execd_sleep
fi

# The row pool is written a window at a time (ktables.c, pool_write), never
# kept mapped: mapping a BPF array puts all its pages in the process's RSS
# at once (4 MiB by default), for rows it only writes.  With a 32 MiB pool,
# no mapping of a map that large may stay while rows load.
pool_rows=2097152
"$OFFCPU" -v --unwind-in kernel --unwind-rows $pool_rows -o "$WORK/pool.data" -- "$DISTRO" -t 2 \
	>"$WORK/pool.out" 2>"$WORK/pool.err" &
pool_pid=$!
largest=0
if wait_recording "$WORK/pool.err"; then
	for _ in $(seq 1 15); do
		while read -r range _ _ _ _ name; do
			[ "$name" = "anon_inode:bpf-map" ] || continue
			size=$(( 16#${range#*-} - 16#${range%-*} ))
			[ $size -gt $largest ] && largest=$size
		done < /proc/$pool_pid/maps
		sleep 0.1
	done
fi
wait $pool_pid
pool_loaded=$(sed -nE 's/.*kernel unwinding rows: ([0-9]+) files.*/\1/p' "$WORK/pool.err")
echo "    largest BPF map mapping while rows loaded: $((largest / 1024)) KiB; files loaded ${pool_loaded:-?}"
if [ "${pool_loaded:-0}" -gt 0 ] && [ $largest -lt $((pool_rows * 16)) ]; then
	pass $T-pool-not-mapped
else
	fail $T-pool-not-mapped "largest mapping $largest B (the pool: $((pool_rows * 16))), files loaded ${pool_loaded:-?} (at least 1)"
	explain "$WORK/pool.err"
fi
