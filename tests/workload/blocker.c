// SPDX-License-Identifier: GPL-2.0
/*
 * blocker: a workload with known off-CPU behaviour for the tests.
 *
 * Each blocking path runs in its own thread inside a uniquely named noinline
 * function, and the workload measures the wall time each path spent blocked.
 * At exit it prints one line per path:
 *	path <function> <total_ns> <count>
 * so a test can compare what the profiler attributed to <function>.
 *
 *   blocker [-t SECONDS] [-w]      -w: wait for a line on stdin before starting
 */
#define _GNU_SOURCE
#include <linux/futex.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline, used))

struct path_stat {
	const char *name;
	uint64_t total_ns;
	uint64_t count;
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

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
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

	while (SYS(SYS_nanosleep, &ts, &ts, 0, 0))
		;
}

/* The compiler must not merge or tail-call these: each is a stack frame. */
#define BARRIER() __asm__ __volatile__("" ::: "memory")

NOINLINE void blocker_nanosleep(struct path_stat *st)
{
	uint64_t t0 = now_ns();

	sleep_ns(10 * 1000000ull);
	st->total_ns += now_ns() - t0;
	st->count++;
	BARRIER();
}

NOINLINE static ssize_t read_byte(int fd, char *c)
{
	return SYS(SYS_read, fd, c, 1, 0);
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

static void unlock_mutex(int *m)
{
	if (__sync_fetch_and_sub(m, 1) != 1) {
		*m = 0;
		syscall(SYS_futex, m, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	}
}

NOINLINE void blocker_pipe_read(struct path_stat *st)
{
	char c;
	uint64_t t0 = now_ns();

	if (read_byte(pipefd[0], &c) != 1)
		stop = 1;
	st->total_ns += now_ns() - t0;
	st->count++;
	BARRIER();
}

NOINLINE void blocker_mutex_wait(struct path_stat *st)
{
	uint64_t t0 = now_ns();

	lock_mutex(&lock);
	st->total_ns += now_ns() - t0;
	st->count++;
	unlock_mutex(&lock);
	BARRIER();
}

NOINLINE void blocker_long_sleep(struct path_stat *st)
{
	uint64_t t0 = now_ns();

	sleep_ns(700 * 1000000ull);
	st->total_ns += now_ns() - t0;
	st->count++;
	BARRIER();
}

static void *sleeper(void *arg)
{
	uint64_t end = now_ns() + run_secs * 1e9;

	while (now_ns() < end)
		blocker_nanosleep(arg);
	return NULL;
}

/* Feeds the pipe every 20 ms, then closes it to end the reader. */
static void *pipe_writer(void *arg)
{
	uint64_t end = now_ns() + run_secs * 1e9;

	(void)arg;
	while (now_ns() < end) {
		sleep_ns(20 * 1000000ull);
		if (write(pipefd[1], "x", 1) != 1)
			break;
	}
	close(pipefd[1]);
	return NULL;
}

static void *pipe_reader(void *arg)
{
	while (!stop)
		blocker_pipe_read(arg);
	return NULL;
}

/* Holds the mutex 30 ms at a time so the waiter blocks in futex_wait. */
static void *mutex_holder(void *arg)
{
	uint64_t end = now_ns() + run_secs * 1e9;

	(void)arg;
	while (now_ns() < end) {
		lock_mutex(&lock);
		sleep_ns(30 * 1000000ull);
		unlock_mutex(&lock);
		sleep_ns(5 * 1000000ull);
	}
	return NULL;
}

static void *mutex_waiter(void *arg)
{
	uint64_t end = now_ns() + run_secs * 1e9;

	while (now_ns() < end) {
		sleep_ns(2 * 1000000ull);
		blocker_mutex_wait(arg);
	}
	return NULL;
}

static void *long_sleeper(void *arg)
{
	blocker_long_sleep(arg);
	return NULL;
}

int main(int argc, char **argv)
{
	struct path_stat st[] = {
		{ "blocker_nanosleep", 0, 0 }, { "blocker_pipe_read", 0, 0 },
		{ "blocker_mutex_wait", 0, 0 }, { "blocker_long_sleep", 0, 0 },
	};
	void *(*fn[])(void *) = { sleeper, pipe_reader, mutex_waiter, long_sleeper };
	pthread_t tid[6];
	int opt, wait_stdin = 0;

	while ((opt = getopt(argc, argv, "t:w")) != -1) {
		if (opt == 't')
			run_secs = atof(optarg);
		else if (opt == 'w')
			wait_stdin = 1;
		else
			return 2;
	}
	if (run_secs <= 0 || pipe(pipefd))
		return 2;
	if (wait_stdin) {
		char line[16];

		if (!fgets(line, sizeof(line), stdin))
			return 2;
	}
	/* Thread names let tests pick one thread (-t) by name. */
	static const char *const names[] = { "bl-sleep", "bl-piperd", "bl-mutexw",
					     "bl-long", "bl-pipewr", "bl-mutexh" };

	for (int i = 0; i < 4; i++)
		pthread_create(&tid[i], NULL, fn[i], &st[i]);
	pthread_create(&tid[4], NULL, pipe_writer, NULL);
	pthread_create(&tid[5], NULL, mutex_holder, NULL);
	for (int i = 0; i < 6; i++)
		pthread_setname_np(tid[i], names[i]);
	for (int i = 0; i < 6; i++)
		pthread_join(tid[i], NULL);
	for (size_t i = 0; i < sizeof(st) / sizeof(st[0]); i++)
		printf("path %s %llu %llu\n", st[i].name,
		       (unsigned long long)st[i].total_ns,
		       (unsigned long long)st[i].count);
	return 0;
}
