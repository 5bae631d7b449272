// SPDX-License-Identifier: GPL-2.0
/*
 * distro: a workload built the way a distribution builds programs (gcc -O2,
 * no frame-pointer or back-chain flags, dynamically linked against Debian's
 * glibc), which blocks only through libc.  Frame-pointer unwinding stops in
 * libc here; the CFI unwinder must reach the functions below.
 *
 * Each blocking function calls libc directly and is called by a loop
 * function called by the thread's start routine, so every blocking stack is
 *	libc ... <- distro_<what> <- loop_<what> <- thread_<what> <- start_thread
 * Each blocking function measures the time it spent off-CPU in the libc
 * call: wall time less the thread's CPU time (off_cpu_ns).
 * At exit one line per function:
 *	path <function> <total_ns> <count>
 * then, per function, the time of its calls that were also preempted:
 *	preempted <function> <ns>
 *
 *   distro [-t SECONDS]
 */
#define _GNU_SOURCE
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "task_clock.h"

/* Kept out of line so each function is a frame of its own; -O2 otherwise. */
#define NOINLINE __attribute__((noinline))

struct path_stat {
	const char *name;
	uint64_t total_ns, count;
	uint64_t preempted_ns;	/* of calls preempted too: see account */
};

enum { P_NANOSLEEP, P_PIPE_READ, P_MUTEX, P_COND, P_POLL, P_EPOLL, NR_PATHS };

static struct path_stat stats[NR_PATHS] = {
	[P_NANOSLEEP] = { .name = "distro_nanosleep" },
	[P_PIPE_READ] = { .name = "distro_pipe_read" },
	[P_MUTEX] = { .name = "distro_mutex_lock" },
	[P_COND] = { .name = "distro_cond_wait" },
	[P_POLL] = { .name = "distro_poll" },
	[P_EPOLL] = { .name = "distro_epoll_wait" },
};

static double run_secs = 2.0;
static volatile int stop;
static int read_pipe[2], poll_pipe[2], epoll_pipe[2];
static int epfd;
static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t cond_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int cond_ticks;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/*
 * This thread's CPU time: its task clock (task_clock.h), opened at its
 * first use (before the wall clock is read: its cost is no block's), where
 * the kernel lets us (else CLOCK_THREAD_CPUTIME_ID).  -2: not opened yet,
 * -1: refused.
 */
static __thread int task_clock = -2;

static uint64_t cpu_ns(void)
{
	if (task_clock == -2)
		task_clock = task_clock_open();
	return task_clock_ns(task_clock, "distro: task clock");
}

/*
 * The time this thread was not running: wall time less its CPU time.  A
 * libc call's own CPU time (system call entry and exit, the profiler's
 * work at switch-out: slow under QEMU's TCG) is not off-CPU time, as
 * blocker.c's blocks count it.
 */
static uint64_t off_cpu_ns(void)
{
	uint64_t cpu = cpu_ns();

	return now_ns() - cpu;
}

/* This thread's involuntary context switches so far. */
static long nivcsw(void)
{
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	return ru.ru_nivcsw;
}

static __thread long start_nivcsw;

/* A call starts: its off-CPU clock (off_cpu_ns) and preemption count. */
static uint64_t call_start(void)
{
	start_nivcsw = nivcsw();
	return off_cpu_ns();
}

/*
 * A call that was preempted too waited for a CPU while runnable: off the
 * CPU for its clocks, not blocked for the profiler.  Its time is reported
 * again as preempted, the error a check must allow (as blocker.c's).
 */
static void account(int path, uint64_t t0)
{
	uint64_t off = off_cpu_ns() - t0;

	stats[path].total_ns += off;
	stats[path].count++;
	if (nivcsw() != start_nivcsw)
		stats[path].preempted_ns += off;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts))
		;
}

/* --- the blocking functions: each calls libc directly --- */

NOINLINE void distro_nanosleep(void)
{
	struct timespec ts = { 0, 10 * 1000000L };
	uint64_t t0 = call_start();

	nanosleep(&ts, NULL);
	account(P_NANOSLEEP, t0);
}

NOINLINE int distro_pipe_read(void)
{
	char c;
	uint64_t t0 = call_start();
	ssize_t n = read(read_pipe[0], &c, 1);

	account(P_PIPE_READ, t0);
	return n == 1;
}

NOINLINE void distro_mutex_lock(void)
{
	uint64_t t0 = call_start();

	pthread_mutex_lock(&mutex);
	account(P_MUTEX, t0);
	pthread_mutex_unlock(&mutex);
}

NOINLINE void distro_cond_wait(void)
{
	uint64_t t0;
	int seen;

	pthread_mutex_lock(&cond_mutex);
	seen = cond_ticks;
	t0 = call_start();
	while (cond_ticks == seen && !stop)
		pthread_cond_wait(&cond, &cond_mutex);
	account(P_COND, t0);
	pthread_mutex_unlock(&cond_mutex);
}

NOINLINE int distro_poll(void)
{
	struct pollfd pfd = { .fd = poll_pipe[0], .events = POLLIN };
	uint64_t t0 = call_start();
	char c;
	int n = poll(&pfd, 1, -1);

	account(P_POLL, t0);
	return n == 1 && read(poll_pipe[0], &c, 1) == 1;
}

NOINLINE int distro_epoll_wait(void)
{
	struct epoll_event ev;
	uint64_t t0 = call_start();
	char c;
	int n = epoll_wait(epfd, &ev, 1, -1);

	account(P_EPOLL, t0);
	return n == 1 && read(epoll_pipe[0], &c, 1) == 1;
}

/* --- loops: one call below each thread's start routine --- */

static int running(uint64_t end)
{
	return !stop && now_ns() < end;
}

NOINLINE void loop_nanosleep(uint64_t end)
{
	while (running(end))
		distro_nanosleep();
}

/* The readers end when their writer closes the pipe. */
NOINLINE void loop_pipe_read(void)
{
	while (distro_pipe_read())
		;
}

NOINLINE void loop_mutex_lock(uint64_t end)
{
	while (running(end)) {
		sleep_ms(2);
		distro_mutex_lock();
	}
}

NOINLINE void loop_cond_wait(void)
{
	while (!stop)
		distro_cond_wait();
}

NOINLINE void loop_poll(void)
{
	while (distro_poll())
		;
}

NOINLINE void loop_epoll_wait(void)
{
	while (distro_epoll_wait())
		;
}

/* --- thread start routines --- */

static uint64_t deadline(void)
{
	return now_ns() + (uint64_t)(run_secs * 1e9);
}

NOINLINE void *thread_nanosleep(void *arg)
{
	loop_nanosleep(deadline());
	return arg;
}

NOINLINE void *thread_pipe_read(void *arg)
{
	loop_pipe_read();
	return arg;
}

NOINLINE void *thread_mutex_lock(void *arg)
{
	loop_mutex_lock(deadline());
	return arg;
}

NOINLINE void *thread_cond_wait(void *arg)
{
	loop_cond_wait();
	return arg;
}

NOINLINE void *thread_poll(void *arg)
{
	loop_poll();
	return arg;
}

NOINLINE void *thread_epoll_wait(void *arg)
{
	loop_epoll_wait();
	return arg;
}

/* Feeds the three pipes in turn, 20 ms apart each, then closes them. */
static void *feeder(void *arg)
{
	uint64_t end = deadline();

	while (now_ns() < end) {
		sleep_ms(20);
		if (write(read_pipe[1], "x", 1) != 1 || write(poll_pipe[1], "x", 1) != 1 ||
		    write(epoll_pipe[1], "x", 1) != 1)
			break;
	}
	close(read_pipe[1]);
	close(poll_pipe[1]);
	close(epoll_pipe[1]);
	return arg;
}

/* Holds the mutex 30 ms at a time; signals the condition every 25 ms. */
static void *holder(void *arg)
{
	uint64_t end = deadline();

	while (now_ns() < end) {
		pthread_mutex_lock(&mutex);
		sleep_ms(30);
		pthread_mutex_unlock(&mutex);
		sleep_ms(5);
	}
	return arg;
}

static void *signaller(void *arg)
{
	uint64_t end = deadline();

	while (now_ns() < end) {
		sleep_ms(25);
		pthread_mutex_lock(&cond_mutex);
		cond_ticks++;
		pthread_cond_signal(&cond);
		pthread_mutex_unlock(&cond_mutex);
	}
	pthread_mutex_lock(&cond_mutex);
	stop = 1;
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&cond_mutex);
	return arg;
}

int main(int argc, char **argv)
{
	static void *(*const fn[])(void *) = {
		thread_nanosleep, thread_pipe_read, thread_mutex_lock, thread_cond_wait,
		thread_poll, thread_epoll_wait, feeder, holder, signaller,
	};
	static const char *const names[] = { "ds-sleep", "ds-piperd", "ds-mutex",
					     "ds-cond", "ds-poll", "ds-epoll",
					     "ds-feeder", "ds-holder", "ds-signal" };
	enum { NR_THREADS = sizeof(fn) / sizeof(fn[0]) };
	struct epoll_event ev = { .events = EPOLLIN };
	pthread_t tid[NR_THREADS];
	int opt, i;

	while ((opt = getopt(argc, argv, "t:")) != -1) {
		if (opt != 't')
			return 2;
		run_secs = atof(optarg);
	}
	if (run_secs <= 0 || pipe(read_pipe) || pipe(poll_pipe) || pipe(epoll_pipe))
		return 2;
	epfd = epoll_create1(0);
	ev.data.fd = epoll_pipe[0];
	if (epfd < 0 || epoll_ctl(epfd, EPOLL_CTL_ADD, epoll_pipe[0], &ev))
		return 2;
	/*
	 * The machine's first task-bound perf event waits for an RCU grace
	 * period (in D: 30-40 ms in a TCG guest), and opens meanwhile for
	 * its lock: main opens its task clock first, outside every measured
	 * call, so that the threads' first readings do not wait.
	 */
	cpu_ns();
	for (i = 0; i < NR_THREADS; i++) {
		if (pthread_create(&tid[i], NULL, fn[i], NULL))
			return 2;
		pthread_setname_np(tid[i], names[i]);
	}
	for (i = 0; i < NR_THREADS; i++)
		pthread_join(tid[i], NULL);
	for (i = 0; i < NR_PATHS; i++)
		printf("path %s %llu %llu\n", stats[i].name,
		       (unsigned long long)stats[i].total_ns,
		       (unsigned long long)stats[i].count);
	for (i = 0; i < NR_PATHS; i++)
		printf("preempted %s %llu\n", stats[i].name,
		       (unsigned long long)stats[i].preempted_ns);
	return 0;
}
