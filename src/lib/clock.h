/* SPDX-License-Identifier: GPL-2.0 */
/* The time of a clock in ns: CLOCK_MONOTONIC is bpf_ktime_get_ns()'s clock. */
#ifndef OFFCPU_LIB_CLOCK_H
#define OFFCPU_LIB_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t clock_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static inline uint64_t mono_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

#endif
