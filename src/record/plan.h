/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the options and the probe decide together, resolved once after both
 * (session.c): how stacks are walked and kept, and the sizes that follow.
 * The loader, the collector, the stacks and the summary read it; nothing
 * decides again.
 */
#ifndef OFFCPU_PLAN_H
#define OFFCPU_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "record/cli.h"
#include "record/probe.h"

/* Kernel frames above __schedule a program's stack starts with (its own, the tracepoint's). */
#define OFFCPU_KSTACK_GLUE	8
#define OFFCPU_MAX_STACK	127	/* --max-stack's limit, the kernel's default perf_event_max_stack */

/* The kernel walker's frame loop (bpf/offcpu_unwind.bpf.h), best first. */
enum { KWALK_LOOP, KWALK_TAIL, KWALK_BOUNDED };

struct plan {
	/* User stacks copied and unwound with CFI (--call-graph dwarf, the default where the kernel can) */
	bool dwarf;
	const char *no_dwarf;	/* else why not (-v, the summary) */
	/* The BPF program walks user stacks with CFI rows (--unwind-in kernel, on a board that can) */
	bool kunwind;
	const char *no_kunwind;	/* else why not */
	/* Its frame loop (KWALK_*), why, and whether OFFCPU_KWALKER forced it */
	int kwalk;
	const char *kwalk_why;
	bool kwalk_forced;
	const char *kwalk_bad;	/* an OFFCPU_KWALKER naming no walker (the loader refuses it) */
	bool stack_cache;	/* user stack ids reused when the registers repeat */
	bool spill;		/* stacks that collide in their stack map kept in the spill maps */
	bool kstack;		/* kernel stacks walked: asked for, or --wakers's */
	uint32_t max_stack;	/* frames of a stack kept (--max-stack); per user map entry */
	uint32_t kstack_frames;	/* per kernel map entry: max_stack and the glue above __schedule */
	uint32_t kspill_frames;	/* the same in a kernel spill key */
	/* Map entries (1: the map exists, unused) and the ring buffer's bytes. */
	uint32_t ustack_entries, kstack_entries;
	uint32_t ustack_spill_entries, kstack_spill_entries;
	uint32_t ucache_entries;	/* the dwarf stack cache: threads */
	uint32_t ku_rows;	/* the kernel walker's row pool (--unwind-rows) */
	uint32_t ring_bytes;
	size_t stack_ids;	/* ids a stack map can hand out (its buckets) */
};

void plan_resolve(struct plan *pl, const struct offcpu_opts *o, const struct probe *p);

#endif
