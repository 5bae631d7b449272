/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where a kernel function starts and ends, asked of the kernel with a stack
 * it is in (bpf/offcpu_ksym.bpf.c), or else read from /proc/kallsyms.
 */
#ifndef OFFCPU_KFUNC_RANGE_H
#define OFFCPU_KFUNC_RANGE_H

#include <stdint.h>

/*
 * [LO, HI) of kernel function NAME (LO = HI = 0 when unknown), given the
 * first N frames IP of a kernel stack that may hold a return address into
 * it.  Returns how it was found, for -v (never NULL).
 */
const char *kfunc_range(const char *name, const uint64_t *ip, uint32_t n, uint64_t *lo,
			uint64_t *hi);

#endif
