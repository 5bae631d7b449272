/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Lists of ids as the command line and the kernel spell them: "1,2,7" for
 * pids and tids, "0-3,6" for CPUs (-C, /sys/devices/system/cpu/online).
 * The one parser of them, for record and report alike.
 */
#ifndef OFFCPU_ID_LIST_H
#define OFFCPU_ID_LIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct id_list {
	uint32_t *v;
	size_t n;
};

#define ID_RANGES	1u	/* "A-B" elements allowed (CPU lists) */

/* The largest pid the kernel hands out (PID_MAX_LIMIT). */
#define ID_PID_MAX	4194304u
/* The largest CPU number a kernel can have (NR_CPUS is at most 8192). */
#define ID_CPU_MAX	8191u

/*
 * Appends the ids of S to L, each in [MIN, MAX].  Returns 0, or -1 with *WHY
 * the reason in a few words (L keeps what came before the bad element).
 */
int id_list_parse(struct id_list *l, const char *s, unsigned flags,
		  uint32_t min, uint32_t max, const char **why);

bool id_list_has(const struct id_list *l, uint32_t id);

void id_list_free(struct id_list *l);

#endif
