/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Stack ids to frames.  The BPF program stores each stack once, in the stack
 * maps (id = bucket) or, when a bucket collided, in the spill maps (keyed by
 * the frames, id with OFFCPU_SPILL_ID set); samples carry only the ids.
 * Read from the maps once per id and cached: nothing deletes a stack during
 * a recording.  Kernel stacks start at __schedule.
 */
#ifndef OFFCPU_STACKS_H
#define OFFCPU_STACKS_H

#include <stdbool.h>
#include <stdint.h>

#include "loader.h"

struct stack {
	uint32_t nr;
	uint64_t ip[];
};

struct stacks;

/* NULL when out of memory. */
struct stacks *stacks_new(const struct loader *ld);

/* The frames of user or KERNEL stack ID, or NULL (no stack, or unreadable). */
const struct stack *stacks_get(struct stacks *s, int32_t id, bool kernel);

void stacks_free(struct stacks *s);

#endif
