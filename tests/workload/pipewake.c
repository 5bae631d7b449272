// SPDX-License-Identifier: GPL-2.0
/*
 * pipewake: who woke a sleeper, in a program built like a distribution's
 * (gcc -O2, no frame-pointer flags, dynamically linked against Debian's
 * glibc, as tests/workload/distro.c).  Thread pw-writer writes one byte
 * into a pipe every MS milliseconds from pipewake_write; thread pw-reader
 * blocks in pipewake_read until it comes.  So the reader's off-CPU time
 * is almost all ended by the writer, in
 *	libc write <- pipewake_write <- loop_write <- thread_write <- start_thread
 * and frame pointers stop in libc's write (t_wakers: the waker's stack
 * must hold pipewake_write).  At exit:
 *	woken <reader's ns blocked in read> <reads>
 *
 *   pipewake [-n WRITES] [-i MS]
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

/* Kept out of line so each function is a frame of its own; -O2 otherwise. */
#define NOINLINE __attribute__((noinline))

static int fds[2];
static long writes = 100, interval_ms = 10;
static uint64_t blocked_ns, reads;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

NOINLINE int pipewake_read(void)
{
	uint64_t t0 = now_ns();
	char c;
	int ok = read(fds[0], &c, 1) == 1;

	blocked_ns += now_ns() - t0;
	reads += ok;
	return ok;
}

/* The waker: its call of write() must not become a tail call. */
NOINLINE int pipewake_write(void)
{
	int ok = write(fds[1], "x", 1) == 1;

	__asm__ volatile("" ::: "memory");
	return ok;
}

NOINLINE void loop_read(void)
{
	while (pipewake_read())
		;
}

NOINLINE void loop_write(void)
{
	struct timespec ts = { interval_ms / 1000, (interval_ms % 1000) * 1000000L };

	for (long i = 0; i < writes; i++) {
		nanosleep(&ts, NULL);
		if (!pipewake_write())
			break;
	}
}

NOINLINE void *thread_read(void *arg)
{
	loop_read();
	return arg;
}

NOINLINE void *thread_write(void *arg)
{
	loop_write();
	close(fds[1]);
	return arg;
}

int main(int argc, char **argv)
{
	pthread_t r, w;
	int opt;

	while ((opt = getopt(argc, argv, "n:i:")) != -1) {
		if (opt == 'n')
			writes = atol(optarg);
		else if (opt == 'i')
			interval_ms = atol(optarg);
		else
			return 2;
	}
	if (writes <= 0 || interval_ms <= 0 || pipe(fds))
		return 2;
	if (pthread_create(&r, NULL, thread_read, NULL))
		return 2;
	pthread_setname_np(r, "pw-reader");
	if (pthread_create(&w, NULL, thread_write, NULL))
		return 2;
	pthread_setname_np(w, "pw-writer");
	pthread_join(w, NULL);
	pthread_join(r, NULL);
	printf("woken %llu %llu\n", (unsigned long long)blocked_ns, (unsigned long long)reads);
	return 0;
}
