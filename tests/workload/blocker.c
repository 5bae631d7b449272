// SPDX-License-Identifier: GPL-2.0
/*
 * blocker: a workload with known off-CPU behaviour for the tests.
 *
 * Each thread blocks only inside uniquely named noinline functions and
 * measures, with its own clocks, the time each of them kept it off the CPU.
 * At exit it prints one line per thread and function:
 *	thread <tid> <comm> <function> <off_ns> <count>
 * and, for each function (each belongs to one thread), the same time as
 *	path <function> <off_ns> <count>
 * so a test can compare what the profiler attributed to every thread and
 * function, and the sum over a thread with everything recorded for it.
 * <preempted_ns> follows <count> on thread lines: see bracket_close.
 * `calls` lines follow, per function: the calls that switched out
 * voluntarily, those only preempted, the longest wall-minus-CPU time of a
 * call that never switched out voluntarily (for people reading a failed
 * check); then the shortest off-CPU time of one voluntary call that was not
 * preempted, the longest of any, the voluntary calls that were preempted
 * too, the calls that switched out more than once (their blocks are not the
 * call's time: --min-block/--max-block checks need the one block a call
 * is), and the sleep state the function blocks in (S or D: --state checks).
 *
 * Off-CPU time is what the profiler measures: from the switch-out of a
 * sleeping thread to its next switch-in.  A wall clock around the blocking
 * call also holds the thread's own CPU time in the call (system call entry
 * and exit, the profiler's BPF program at switch-in): under QEMU's TCG that
 * is tens of microseconds a block, a few percent of a 2 ms sleep.  So each
 * block counts its wall time minus the thread's CPU time over the same
 * interval, by perf's task clock where the kernel lets us open it (see
 * task_clock.h: not CLOCK_THREAD_CPUTIME_ID).  Both ends read the wall clock,
 * then the CPU clock, so the CPU clock's own system call shifts both ends
 * alike; the context-switch counts that tell a sleep from a preemption are
 * read around them (bracket_open).
 *
 *   blocker [-t SECONDS] [-w] [-s] [-S MS[@AT]]
 *	-w: wait for a line on stdin before starting
 *	-s: also a thread that blocks in D state (bl-vfork: the parent of a
 *	    vfork child that sleeps 20 ms, waiting uninterruptibly for it); its
 *	    children are processes of their own, so it is off by default (-p
 *	    checks want the workload's pid alone)
 *	-S: also a thread (bl-stall) that sleeps 50 ms at a time and once, AT
 *	    seconds in (default: a random moment at least 1 s from either end),
 *	    stalls MS ms in blocker_stall; it prints its own measure of it,
 *	    "stall <tid> bl-stall <start_ns> <end_ns> <off_ns>" (CLOCK_MONOTONIC,
 *	    the recording's clock).  Main then waits in 20 ms sleeps
 *	    (blocker_main_poll), not one long block: the stall is the only
 *	    block longer than bl-long's 700 ms (the flight recorder's trigger).
 */
#define _GNU_SOURCE
#include <linux/futex.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "task_clock.h"

#define NOINLINE __attribute__((noinline, used))
#define MAX_FUNCS 4

/* One blocking function of one thread: its off-CPU time and calls. */
struct fn_stat {
	const char *name;
	uint64_t off_ns;
	uint64_t count;
	uint64_t preempted_ns;
	/* Diagnostics (`calls` lines): how each call left the CPU. */
	uint64_t voluntary, involuntary_only, unswitched_ns_max;
	/*
	 * Per voluntary call: the shortest off-CPU time of one not preempted,
	 * the longest of all, the calls preempted, the calls that switched out
	 * more than once.
	 */
	uint64_t call_min_ns, call_max_ns, vpreempted, multi;
	char state;	/* 'S' (the default, 0) or 'D' */
};

struct thread_truth {
	const char *comm;
	void *(*run)(void *);
	pid_t tid;
	struct fn_stat fn[MAX_FUNCS];
};

/* The two ends of a block as this thread saw them. */
struct bracket {
	uint64_t wall, cpu;
	long nivcsw, nvcsw;
};

static double run_secs = 2.0;
/*
 * A futex lock of our own rather than pthread_mutex_t: musl's mutex code
 * keeps no frame pointer, which ends a frame-pointer stack walk before it
 * reaches our frames (a limit of the unwinder, not of the profiler).
 * 0 free, 1 locked, 2 locked with waiters.
 */
static int lock;
static int pipefd[2];
static volatile int stop;
/* Threads still running; main waits on it (a futex, for the same reason). */
static int running;

static uint64_t clock_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static uint64_t now_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

/*
 * This thread's task clock (-1: not opened, CLOCK_THREAD_CPUTIME_ID
 * instead; why the task clock: task_clock.h).
 */
static __thread int task_clock = -1;
static int task_clock_failed;

/* From now on this thread's blocks subtract the task clock FD, if opened. */
static void task_clock_use(int fd)
{
	task_clock = fd;
	if (fd < 0)
		__atomic_store_n(&task_clock_failed, 1, __ATOMIC_RELAXED);
}

/* The thread's CPU time so far, by the task clock where it opened. */
static uint64_t cpu_ns(void)
{
	return task_clock_ns(task_clock, "blocker: task clock");
}

/* Involuntary context switches of this thread so far. */
static void getrusage_csw(long *nivcsw, long *nvcsw)
{
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	*nivcsw = ru.ru_nivcsw;
	*nvcsw = ru.ru_nvcsw;
}

/*
 * The context-switch counts are read outside the clocks' window: a
 * preemption anywhere in it is seen (its wait is in the clocks' time, and
 * is allowed for as preempted).  Read inside it, a preemption at its
 * edges went unseen (a riscv64 guest's 700 ms sleep measured 734.8 ms).
 * The cost: a sleep at the edges counts as voluntary without its time; a
 * first-touch fault of getrusage's copy-out was one, which stack_prefault
 * now takes before any measured function.
 */
static void bracket_open(struct bracket *b)
{
	getrusage_csw(&b->nivcsw, &b->nvcsw);
	b->wall = now_ns();
	b->cpu = cpu_ns();
}

/*
 * A thread preempted inside the bracket (other load on the machine) waited
 * for a CPU while runnable: off the CPU for its own clocks, not blocked for
 * the profiler, which counts only sleeping threads.  Such a bracket keeps
 * its time, and reports it again as preempted_ns: the error a test must
 * allow for it.  All of it: a thread preempted after it set itself asleep
 * but before it switched out (the timer may wake it meanwhile) waits for a
 * CPU without schedstat's run_delay counting it.
 */
static void bracket_close(const struct bracket *b, struct fn_stat *st)
{
	uint64_t wall = now_ns(), cpu = cpu_ns();
	uint64_t on_cpu = cpu - b->cpu, elapsed = wall - b->wall, off;
	long nivcsw, nvcsw;

	getrusage_csw(&nivcsw, &nvcsw);
	off = elapsed > on_cpu ? elapsed - on_cpu : 0;
	/*
	 * A call that never switched out voluntarily never slept: what its
	 * clocks leave over is theirs (a TCG guest's clocks leave up to 44 us
	 * a call on a pipe write that never blocks), not off-CPU time.
	 */
	if (nvcsw == b->nvcsw) {
		if (nivcsw != b->nivcsw)
			st->involuntary_only++;
		if (off > st->unswitched_ns_max)
			st->unswitched_ns_max = off;
		off = 0;
	} else {
		st->voluntary++;
		/* A preempted call's block is shorter than its time, by an unknown part. */
		if (nivcsw != b->nivcsw)
			st->vpreempted++;
		else if (!st->call_min_ns || off < st->call_min_ns)
			st->call_min_ns = off;
		if (off > st->call_max_ns)
			st->call_max_ns = off;
		if (nvcsw - b->nvcsw > 1)
			st->multi++;
	}
	st->off_ns += off;
	st->count++;
	if (nivcsw != b->nivcsw)
		st->preempted_ns += off;
}

/*
 * s390x walks user stacks by back chain, which only code built with
 * -mbackchain keeps; libc is not, so the chain would end in its syscall
 * wrappers.  There the blocking system calls are made from our own code.
 */
#if defined(__s390x__)
NOINLINE static long sys4(long nr, long a, long b, long c, long d)
{
	register long r1 __asm__("r1") = nr;
	register long r2 __asm__("r2") = a;
	register long r3 __asm__("r3") = b;
	register long r4 __asm__("r4") = c;
	register long r5 __asm__("r5") = d;

	__asm__ __volatile__("svc 0" : "+d"(r2) : "d"(r1), "d"(r3), "d"(r4), "d"(r5)
			     : "memory", "cc");
	return r2;
}
#define SYS(nr, a, b, c, d) sys4(nr, (long)(a), (long)(b), (long)(c), (long)(d))
#elif defined(__riscv)
/*
 * riscv64's kernel walk (perf_callchain_user) takes the innermost return
 * address from the ra register, then reads frame records from s0 on as if
 * s0 were the innermost function's own frame.  libc's syscall() keeps no
 * frame: s0 is its caller's, whose saved return address the walk drops, so
 * the helper's caller (the blocker_* function) went missing with --btf
 * none.  This wrapper keeps a whole record {s0, ra} below its frame (the
 * "ra" clobber makes GCC save ra as in a non-leaf; GCC 12 for RISC-V has
 * no -mno-omit-leaf-frame-pointer), and ra still holds its return address
 * at the ecall: the walk then names every frame.
 */
NOINLINE static long sys4(long nr, long a, long b, long c, long d)
{
	register long a7 __asm__("a7") = nr;
	register long a0 __asm__("a0") = a;
	register long a1 __asm__("a1") = b;
	register long a2 __asm__("a2") = c;
	register long a3 __asm__("a3") = d;

	__asm__ __volatile__("ecall" : "+r"(a0) : "r"(a7), "r"(a1), "r"(a2), "r"(a3)
			     : "memory", "ra");
	return a0;
}
#define SYS(nr, a, b, c, d) sys4(nr, (long)(a), (long)(b), (long)(c), (long)(d))
#else
#define SYS(nr, a, b, c, d) syscall(nr, a, b, c, d)
#endif

/*
 * Frame-pointer unwinding loses the caller of a leaf that keeps no frame
 * (libc's syscall wrappers): the blocking calls go through these noinline
 * helpers so that the blocker_* functions themselves stay on the stack.
 */
NOINLINE static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { ns / 1000000000ull, ns % 1000000000ull };

	/*
	 * 32-bit boards (armhf): musl's timespec has a 64-bit tv_sec since
	 * 1.2, the nanosleep system call reads two 32-bit words (a sleep of
	 * under a second read as none); its time64 twin reads it as it is.
	 */
#if defined(SYS_clock_nanosleep_time64) && !defined(__LP64__)
	while (SYS(SYS_clock_nanosleep_time64, CLOCK_MONOTONIC, 0, &ts, &ts))
		;
#else
	while (SYS(SYS_nanosleep, &ts, &ts, 0, 0))
		;
#endif
}

/* The compiler must not merge or tail-call these: each is a stack frame. */
#define BARRIER() __asm__ __volatile__("" ::: "memory")

NOINLINE static ssize_t read_byte(int fd, char *c)
{
	return SYS(SYS_read, fd, c, 1, 0);
}

NOINLINE static ssize_t write_byte(int fd)
{
	return SYS(SYS_write, fd, "x", 1, 0);
}

NOINLINE static void futex_wait(int *f, int val)
{
	SYS(SYS_futex, f, FUTEX_WAIT_PRIVATE, val, NULL);
}

NOINLINE static void lock_mutex(int *m)
{
	int c = __sync_val_compare_and_swap(m, 0, 1);

	if (!c)
		return;
	if (c != 2)
		c = __sync_lock_test_and_set(m, 2);
	while (c) {
		futex_wait(m, 2);
		c = __sync_lock_test_and_set(m, 2);
	}
}

NOINLINE static void futex_wake(int *f)
{
	SYS(SYS_futex, f, FUTEX_WAKE_PRIVATE, 1, 0);
}

/* Not inlined, as the waiter's waker (--wakers) is this unlock's stack. */
NOINLINE static void unlock_mutex(int *m)
{
	if (__sync_fetch_and_sub(m, 1) != 1) {
		*m = 0;
		futex_wake(m);
	}
}

/* A sleep of its own function, measured: FN names it on the stack. */
#define TIMED_SLEEP(fn, ms)						\
NOINLINE void fn(struct fn_stat *st)					\
{									\
	struct bracket b;						\
									\
	bracket_open(&b);						\
	sleep_ns((ms) * 1000000ull);					\
	bracket_close(&b, st);						\
	BARRIER();							\
}

TIMED_SLEEP(blocker_nanosleep, 10)
TIMED_SLEEP(blocker_long_sleep, 700)
TIMED_SLEEP(blocker_pipe_pause, 20)
TIMED_SLEEP(blocker_mutex_pause, 2)
TIMED_SLEEP(blocker_holder_hold, 30)
TIMED_SLEEP(blocker_holder_pause, 5)
TIMED_SLEEP(blocker_stall_pause, 50)
TIMED_SLEEP(blocker_main_poll, 20)

static uint64_t stall_ms;
static double stall_at = -1;	/* seconds from the start, -1: random */
static uint64_t stall_start, stall_end;

/* The one long stall: its ends by the wall clock, its off-CPU time measured. */
NOINLINE void blocker_stall(struct fn_stat *st)
{
	struct bracket b;

	bracket_open(&b);
	stall_start = b.wall;
	sleep_ns(stall_ms * 1000000ull);
	bracket_close(&b, st);
	stall_end = now_ns();
	BARRIER();
}

NOINLINE void blocker_pipe_read(struct fn_stat *st)
{
	struct bracket b;
	char c;

	bracket_open(&b);
	if (read_byte(pipefd[0], &c) != 1)
		stop = 1;
	bracket_close(&b, st);
	BARRIER();
}

NOINLINE int blocker_pipe_write(struct fn_stat *st)
{
	struct bracket b;
	int ok;

	bracket_open(&b);
	ok = write_byte(pipefd[1]) == 1;
	bracket_close(&b, st);
	BARRIER();
	return ok;
}

NOINLINE void blocker_mutex_wait(struct fn_stat *st)
{
	struct bracket b;

	bracket_open(&b);
	lock_mutex(&lock);
	bracket_close(&b, st);
	unlock_mutex(&lock);
	BARRIER();
}

/* The holder takes the lock it then holds: it can wait for the waiter. */
NOINLINE void blocker_holder_lock(struct fn_stat *st)
{
	struct bracket b;

	bracket_open(&b);
	lock_mutex(&lock);
	bracket_close(&b, st);
	BARRIER();
}

static void *sleeper(void *arg)
{
	struct thread_truth *t = arg;
	uint64_t end = now_ns() + run_secs * 1e9;

	while (now_ns() < end)
		blocker_nanosleep(&t->fn[0]);
	return NULL;
}

/* Feeds the pipe every 20 ms, then closes it to end the reader. */
static void *pipe_writer(void *arg)
{
	struct thread_truth *t = arg;
	uint64_t end = now_ns() + run_secs * 1e9;

	while (now_ns() < end) {
		blocker_pipe_pause(&t->fn[0]);
		if (!blocker_pipe_write(&t->fn[1]))
			break;
	}
	close(pipefd[1]);
	return NULL;
}

static void *pipe_reader(void *arg)
{
	struct thread_truth *t = arg;

	while (!stop)
		blocker_pipe_read(&t->fn[0]);
	return NULL;
}

/* Holds the mutex 30 ms at a time so the waiter blocks in futex_wait. */
static void *mutex_holder(void *arg)
{
	struct thread_truth *t = arg;
	uint64_t end = now_ns() + run_secs * 1e9;

	while (now_ns() < end) {
		blocker_holder_lock(&t->fn[0]);
		blocker_holder_hold(&t->fn[1]);
		unlock_mutex(&lock);
		blocker_holder_pause(&t->fn[2]);
	}
	return NULL;
}

static void *mutex_waiter(void *arg)
{
	struct thread_truth *t = arg;
	uint64_t end = now_ns() + run_secs * 1e9;

	while (now_ns() < end) {
		blocker_mutex_pause(&t->fn[0]);
		blocker_mutex_wait(&t->fn[1]);
	}
	return NULL;
}

/*
 * vfork: this thread waits for the child in uninterruptible sleep (D) until
 * it exits; the child sleeps 20 ms (S, in a process of its own) and exits.
 * On x86_64 the system calls are made here, so that the parent's stack
 * holds our frames (libc's vfork pops its return address
 * before the call, which ends any unwinding there); the child runs on the
 * parent's stack and touches none of it (system calls from registers
 * only).  Elsewhere libc's vfork (the tests use -s on the host only).
 * SIGCHLD is ignored: children are reaped without a wait here.
 */
static const struct timespec child_sleep = { 0, 20 * 1000000 };

NOINLINE static long vfork_syscall(void)
{
#if defined(__x86_64__)
	register const struct timespec *ts __asm__("r9") = &child_sleep;
	long ret;

	__asm__ __volatile__("syscall\n\t"
			     "test %%rax, %%rax\n\t"
			     "jnz 1f\n\t"
			     "mov %%r9, %%rdi\n\t"
			     "xor %%esi, %%esi\n\t"
			     "mov %[nanosleep], %%eax\n\t"
			     "syscall\n\t"
			     "xor %%edi, %%edi\n\t"
			     "mov %[exit], %%eax\n\t"
			     "syscall\n\t"
			     "1:"
			     : "=a"(ret)
			     : "0"((long)SYS_vfork), "r"(ts), [nanosleep] "i"(SYS_nanosleep),
			       [exit] "i"(SYS_exit)
			     : "rcx", "r11", "rdi", "rsi", "memory");
	return ret;
#else
	pid_t pid = vfork();

	if (!pid) {
		nanosleep(&child_sleep, NULL);
		_exit(0);
	}
	return pid;
#endif
}

/* Not a leaf, as read_byte: frame-pointer walks lose the leaf's caller. */
NOINLINE static long vfork_sleeping_child(void)
{
	long pid = vfork_syscall();

	BARRIER();
	return pid;
}

NOINLINE void blocker_vfork_wait(struct fn_stat *st)
{
	struct bracket b;
	long pid;

	bracket_open(&b);
	pid = vfork_sleeping_child();
	bracket_close(&b, st);
	BARRIER();
	if (pid < 0)
		stop = 1;
}

static void *vforker(void *arg)
{
	struct thread_truth *t = arg;
	uint64_t end = now_ns() + run_secs * 1e9;

	while (now_ns() < end && !stop)
		blocker_vfork_wait(&t->fn[0]);
	return NULL;
}

static void *staller(void *arg)
{
	struct thread_truth *t = arg;
	uint64_t start = now_ns(), end = start + run_secs * 1e9;
	uint64_t at = start + stall_at * 1e9;
	int stalled = 0;

	while (now_ns() < end) {
		if (!stalled && now_ns() >= at) {
			blocker_stall(&t->fn[1]);
			stalled = 1;
		}
		blocker_stall_pause(&t->fn[0]);
	}
	return NULL;
}

static void *long_sleeper(void *arg)
{
	struct thread_truth *t = arg;

	blocker_long_sleep(&t->fn[0]);
	return NULL;
}

/*
 * Main opens its task clock here, before any thread opens theirs: the first
 * task-bound perf event of the machine waits for an RCU grace period, in D
 * (perf_sched_events; 30-40 ms in a TCG guest), the threads' opens then do
 * not.  So that block is measured, by the scheduler's CPU clock (the task
 * clock is not open yet, at either end), which stops at the dequeue, before
 * the profiler's walks: up to 0.2 ms more than a profiler that, like the
 * task clock, starts the block after them.  The host tests hold a task clock
 * open (tests/lib.sh), so there the open does not block.
 */
NOINLINE void blocker_main_clock(struct fn_stat *st)
{
	struct bracket b;
	int fd;

	bracket_open(&b);
	fd = task_clock_open();
	bracket_close(&b, st);
	BARRIER();
	task_clock_use(fd);
}

/* Main waits here for every thread (its own futex: see lock). */
NOINLINE void blocker_main_join(struct fn_stat *st)
{
	struct bracket b;
	int n;

	bracket_open(&b);
	while ((n = __atomic_load_n(&running, __ATOMIC_ACQUIRE)))
		futex_wait(&running, n);
	bracket_close(&b, st);
	BARRIER();
}

NOINLINE int blocker_main_start(struct fn_stat *st)
{
	struct bracket b;
	char c = 0;
	ssize_t n;

	bracket_open(&b);
	while ((n = read_byte(0, &c)) == 1 && c != '\n')
		;
	bracket_close(&b, st);
	BARRIER();
	return n == 1;
}

/*
 * Touches the stack the measured functions will use: a first touch of a
 * page faults, and a fault sleeps (in D) while the mm's lock is taken for
 * writing; inside a measured function such a block is off-CPU time its
 * bracket may not hold (outside the clocks, or in a call that never
 * blocks), so each thread takes its faults here, before any of them.
 */
NOINLINE static void stack_prefault(void)
{
	volatile char room[32 * 1024];

	for (size_t i = 0; i < sizeof(room); i += 512)
		room[i] = 0;
}

/*
 * Names itself before its first block, so that every sample of it carries
 * its name; says it is done last (main exits once all are).
 */
static void *thread_main(void *arg)
{
	struct thread_truth *t = arg;

	prctl(PR_SET_NAME, t->comm);
	t->tid = syscall(SYS_gettid);
	task_clock_use(task_clock_open());
	stack_prefault();
	t->run(t);
	if (__atomic_sub_fetch(&running, 1, __ATOMIC_RELEASE) == 0)
		syscall(SYS_futex, &running, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	return NULL;
}

#define F(n) { .name = n }
static struct thread_truth threads[] = {
	{ .comm = "blocker", .fn = { F("blocker_main_start"), F("blocker_main_join"),
				     { .name = "blocker_main_clock", .state = 'D' } } },
	{ .comm = "bl-sleep", .run = sleeper, .fn = { F("blocker_nanosleep") } },
	{ .comm = "bl-piperd", .run = pipe_reader, .fn = { F("blocker_pipe_read") } },
	{ .comm = "bl-mutexw", .run = mutex_waiter,
	  .fn = { F("blocker_mutex_pause"), F("blocker_mutex_wait") } },
	{ .comm = "bl-long", .run = long_sleeper, .fn = { F("blocker_long_sleep") } },
	{ .comm = "bl-pipewr", .run = pipe_writer,
	  .fn = { F("blocker_pipe_pause"), F("blocker_pipe_write") } },
	{ .comm = "bl-mutexh", .run = mutex_holder,
	  .fn = { F("blocker_holder_lock"), F("blocker_holder_hold"), F("blocker_holder_pause") } },
	/* Last: started with -s only (see NSTARTED). */
	{ .comm = "bl-vfork", .run = vforker, .fn = { { .name = "blocker_vfork_wait", .state = 'D' } } },
};
#define NTHREADS (sizeof(threads) / sizeof(threads[0]))
/* The threads started (main among them): all with -s, else all but bl-vfork. */
static size_t nstarted = NTHREADS - 1;
/*
 * Their stacks, here rather than mapped by pthread_create (musl puts TLS on
 * a stack given, so it maps nothing): an mmap takes the mm's lock for
 * writing, and a thread started earlier that faults meanwhile waits for it
 * in D, outside any function measured here (seen under --state D).
 */
#define STACK_SIZE (256 * 1024)
static char stacks[NTHREADS][STACK_SIZE] __attribute__((aligned(4096)));
/* -S: the staller, started apart from the table's threads. */
static struct thread_truth stall_thread = {
	.comm = "bl-stall", .run = staller,
	.fn = { F("blocker_stall_pause"), F("blocker_stall") },
};
static char stall_stack[STACK_SIZE] __attribute__((aligned(4096)));

/* -S without @AT: a moment at least 1 s from both ends of the run. */
static int parse_stall(const char *arg)
{
	const char *at = strchr(arg, '@');
	double room;

	stall_ms = strtoull(arg, NULL, 10);
	if (at)
		stall_at = atof(at + 1);
	room = run_secs - stall_ms / 1000.0 - 2;
	if (!stall_ms || room < 0)
		return -1;
	if (!at) {
		srand(getpid() ^ now_ns());
		stall_at = 1 + room * (rand() / (double)RAND_MAX);
	}
	return 0;
}

static void print_truth(void)
{
	for (size_t i = 0; i < nstarted; i++)
		for (int j = 0; j < MAX_FUNCS && threads[i].fn[j].name; j++)
			printf("thread %d %s %s %llu %llu %llu\n", (int)threads[i].tid,
			       threads[i].comm, threads[i].fn[j].name,
			       (unsigned long long)threads[i].fn[j].off_ns,
			       (unsigned long long)threads[i].fn[j].count,
			       (unsigned long long)threads[i].fn[j].preempted_ns);
	for (int j = 0; stall_ms && j < 2; j++)
		printf("thread %d bl-stall %s %llu %llu %llu\n", (int)stall_thread.tid,
		       stall_thread.fn[j].name, (unsigned long long)stall_thread.fn[j].off_ns,
		       (unsigned long long)stall_thread.fn[j].count,
		       (unsigned long long)stall_thread.fn[j].preempted_ns);
	if (stall_ms)
		printf("stall %d bl-stall %llu %llu %llu\n", (int)stall_thread.tid,
		       (unsigned long long)stall_start, (unsigned long long)stall_end,
		       (unsigned long long)stall_thread.fn[1].off_ns);
	for (size_t i = 0; i < nstarted; i++)
		for (int j = 0; j < MAX_FUNCS && threads[i].fn[j].name; j++)
			printf("path %s %llu %llu\n", threads[i].fn[j].name,
			       (unsigned long long)threads[i].fn[j].off_ns,
			       (unsigned long long)threads[i].fn[j].count);
	/* For a failed check's log: a block the clocks missed shows here. */
	for (size_t i = 0; i < nstarted; i++)
		for (int j = 0; j < MAX_FUNCS && threads[i].fn[j].name; j++)
			printf("calls %s voluntary %llu involuntary-only %llu"
			       " unswitched-max-us %llu call-min-us %llu call-max-us %llu"
			       " preempted-calls %llu multi %llu state %c\n", threads[i].fn[j].name,
			       (unsigned long long)threads[i].fn[j].voluntary,
			       (unsigned long long)threads[i].fn[j].involuntary_only,
			       (unsigned long long)threads[i].fn[j].unswitched_ns_max / 1000,
			       (unsigned long long)threads[i].fn[j].call_min_ns / 1000,
			       (unsigned long long)(threads[i].fn[j].call_max_ns + 999) / 1000,
			       (unsigned long long)threads[i].fn[j].vpreempted,
			       (unsigned long long)threads[i].fn[j].multi,
			       threads[i].fn[j].state ? threads[i].fn[j].state : 'S');
	/* Which CPU clock the blocks subtract (cpu_ns), for a failed check's log. */
	printf("cpu-clock %s\n", task_clock_failed ? "thread-cputime" : "task-clock");
}

int main(int argc, char **argv)
{
	struct thread_truth *m = &threads[0];
	pthread_attr_t attr;
	pthread_t tid;
	const char *stall = NULL;
	int opt, wait_stdin = 0;

	while ((opt = getopt(argc, argv, "t:wsS:")) != -1) {
		if (opt == 't')
			run_secs = atof(optarg);
		else if (opt == 'w')
			wait_stdin = 1;
		else if (opt == 's')
			nstarted = NTHREADS;
		else if (opt == 'S')
			stall = optarg;
		else
			return 2;
	}
	if (stall && parse_stall(stall)) {
		fprintf(stderr, "blocker: -S MS[@AT]: the stall must fit 1 s from both ends of -t\n");
		return 2;
	}
	signal(SIGCHLD, SIG_IGN);
	if (run_secs <= 0 || pipe(pipefd))
		return 2;
	m->tid = syscall(SYS_gettid);
	stack_prefault();
	blocker_main_clock(&m->fn[2]);
	if (wait_stdin && !blocker_main_start(&m->fn[0]))
		return 2;
	/* Thread names let tests pick one thread (-t) by name. */
	running = nstarted - 1 + !!stall_ms;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	for (size_t i = 1; i < nstarted; i++)
		if (pthread_attr_setstack(&attr, stacks[i], STACK_SIZE) ||
		    pthread_create(&tid, &attr, thread_main, &threads[i]))
			return 2;
	if (stall_ms && (pthread_attr_setstack(&attr, stall_stack, STACK_SIZE) ||
			 pthread_create(&tid, &attr, thread_main, &stall_thread)))
		return 2;
	if (stall_ms) {
		/* No long block of main's own: the stall alone triggers. */
		m->fn[3].name = "blocker_main_poll";
		while (__atomic_load_n(&running, __ATOMIC_ACQUIRE))
			blocker_main_poll(&m->fn[3]);
	} else {
		blocker_main_join(&m->fn[1]);
	}
	print_truth();
	return 0;
}
