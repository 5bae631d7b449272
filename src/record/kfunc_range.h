/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where a kernel function starts and ends, and whether a symbol exists:
 * asked of the kernel by a syscall program (bpf/offcpu_ksym.bpf.c), or
 * else read from /proc/kallsyms.
 */
#ifndef OFFCPU_KFUNC_RANGE_H
#define OFFCPU_KFUNC_RANGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * [LO, HI) of kernel function NAME (LO = HI = 0 when unknown).  Returns
 * how it was found, one line for -v (never NULL).
 */
const char *kfunc_range(const char *name, uint64_t *lo, uint64_t *hi);

/* The most names kfunc_ranges takes. */
#define KFUNC_RANGES_MAX	32

/*
 * [LO[i], HI[i]) of each of the N (at most KFUNC_RANGES_MAX) kernel
 * functions NAMES (0, 0 when absent or its end unknown): the program
 * loaded once and run per name, /proc/kallsyms read once for those it
 * could not answer.  Returns how they were found, one line for -v.
 */
const char *kfunc_ranges(const char *const *names, size_t n, uint64_t *lo, uint64_t *hi);

/*
 * Whether the running kernel has symbol NAME (listed by /proc/kallsyms,
 * which answers where the program cannot: not reading all of it when
 * absent is the point).
 */
bool kfunc_exists(const char *name);

#endif
