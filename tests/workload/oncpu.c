// SPDX-License-Identifier: GPL-2.0
/*
 * On-CPU time inside libc, built like a distribution's program (-O2, no
 * frame-pointer flags, Debian's glibc): main sorts with qsort, whose
 * comparison callback, oncpu_compare, burns the CPU.  A frame-pointer walk
 * from the callback cannot cross glibc's sort to reach main; CFI can
 * (--call-graph dwarf for the -F samples, t_cfi).
 *   oncpu SECONDS
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define NOINLINE __attribute__((noinline))

static volatile uint64_t sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

NOINLINE int oncpu_compare(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	for (int i = 0; i < 2000; i++)
		sink += i ^ x;
	return (x > y) - (x < y);
}

NOINLINE void oncpu_sort(uint32_t *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		v[i] = (uint32_t)(i * 2654435761u);
	qsort(v, n, sizeof(*v), oncpu_compare);
}

int main(int argc, char **argv)
{
	double end = now() + (argc > 1 ? atof(argv[1]) : 1.0);
	static uint32_t v[4096];

	while (now() < end)
		oncpu_sort(v, sizeof(v) / sizeof(v[0]));
	printf("%llu\n", (unsigned long long)sink);
	return 0;
}
