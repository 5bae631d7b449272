// SPDX-License-Identifier: GPL-2.0
/*
 * Threads that block in two places in turn (alternate_a, alternate_b):
 * with offcpu behind (t_stall.sh stops it), a block reuses the stack
 * cache entry of the shape before last, whose id user space retires as it
 * catches up, while that block is still in progress.
 *   alternate SECONDS
 */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#define THREADS 8

static void nap_ms(long ms)
{
	struct timespec t = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&t, NULL);
}

__attribute__((noinline)) void alternate_a(void)
{
	nap_ms(170);
	__asm__ volatile("");
}

__attribute__((noinline)) void alternate_b(void)
{
	nap_ms(230);
	__asm__ volatile("");
}

static void *loop(void *arg)
{
	time_t end = time(NULL) + (long)arg;

	while (time(NULL) < end) {
		alternate_a();
		alternate_b();
	}
	return NULL;
}

int main(int argc, char **argv)
{
	long secs = argc > 1 ? atol(argv[1]) : 3;
	pthread_t t[THREADS];

	for (int i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, loop, (void *)secs);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	return 0;
}
