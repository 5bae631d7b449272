// SPDX-License-Identifier: GPL-2.0
/*
 * stuck: threads that block and never wake, for the still-blocked tests
 * (issue 15).
 *
 *   st-early  blocks at once in stuck_early_read(), a read of a pipe nobody
 *             writes (before a recording that starts later);
 *   st-late   sleeps LATE seconds, then blocks the same way in
 *             stuck_late_read() (during the recording).
 *
 * Each prints, before it blocks, "<name> <tid> <CLOCK_MONOTONIC ns>" (the
 * clock of the recording's timestamps).  The process exits after LIFE
 * seconds.  With -f it forks first: the parent prints "child <pid>" and
 * exits after PARENT seconds, the child runs the threads (a command that
 * ends while the threads it started are still blocked).
 *
 *   stuck [-l LATE] [-k LIFE] [-f PARENT]
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline, used))

/*
 * Frame-pointer walks lose the caller of a leaf without a frame (libc's
 * syscall wrappers; on s390x all of libc, which keeps no back chain), so the
 * read is made from a frame of our own, as blocker.c does.
 */
#if defined(__s390x__)
NOINLINE static long sys_read(int fd, char *c)
{
	register long r1 __asm__("r1") = SYS_read;
	register long r2 __asm__("r2") = fd;
	register long r3 __asm__("r3") = (long)c;
	register long r4 __asm__("r4") = 1;

	__asm__ __volatile__("svc 0" : "+d"(r2) : "d"(r1), "d"(r3), "d"(r4) : "memory", "cc");
	return r2;
}

/*
 * A leaf keeps its return address in r14, not in a frame: the back chain
 * loses its caller.  That caller is this frame, not stuck_*_read.
 */
NOINLINE static long read_byte(int fd, char *c)
{
	long r = sys_read(fd, c);

	__asm__ __volatile__("" ::: "memory");
	return r;
}
#else
NOINLINE static long read_byte(int fd, char *c)
{
	return syscall(SYS_read, fd, c, 1);
}
#endif

static double late_secs = 1.0;
static int early_pipe[2], late_pipe[2];

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void announce(const char *name)
{
	printf("%s %ld %llu\n", name, (long)gettid(), (unsigned long long)mono_ns());
	fflush(stdout);
}

NOINLINE static void stuck_early_read(void)
{
	char c;

	announce("st-early");
	if (read_byte(early_pipe[0], &c) < 0)
		perror("read");
}

NOINLINE static void stuck_late_read(void)
{
	char c;

	announce("st-late");
	if (read_byte(late_pipe[0], &c) < 0)
		perror("read");
}

static void *early(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, "st-early");
	stuck_early_read();
	return NULL;
}

static void *late(void *arg)
{
	struct timespec ts = { (time_t)late_secs, (long)((late_secs - (time_t)late_secs) * 1e9) };

	(void)arg;
	prctl(PR_SET_NAME, "st-late");
	nanosleep(&ts, NULL);
	stuck_late_read();
	return NULL;
}

int main(int argc, char **argv)
{
	double life = 30, parent = -1;
	pthread_t t;
	int opt;

	while ((opt = getopt(argc, argv, "l:k:f:")) != -1) {
		switch (opt) {
		case 'l': late_secs = atof(optarg); break;
		case 'k': life = atof(optarg); break;
		case 'f': parent = atof(optarg); break;
		default:
			fprintf(stderr, "usage: stuck [-l LATE] [-k LIFE] [-f PARENT]\n");
			return 2;
		}
	}
	if (parent >= 0) {
		pid_t pid = fork();

		if (pid < 0)
			return 1;
		if (pid) {
			printf("child %d\n", pid);
			fflush(stdout);
			usleep((useconds_t)(parent * 1e6));
			return 0;
		}
	}
	if (pipe(early_pipe) || pipe(late_pipe))
		return 1;
	if (pthread_create(&t, NULL, early, NULL) || pthread_create(&t, NULL, late, NULL))
		return 1;
	usleep((useconds_t)(life * 1e6));
	return 0;
}
