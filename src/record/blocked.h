/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Threads that stay blocked (issue 15).  A block is recorded when its thread
 * runs again, so a thread asleep through the end of a recording would show
 * nothing.  At the start, the task iterator of bpf/offcpu_blocked.bpf.h gives
 * every wanted thread already asleep a start state (its block then counts
 * from the start of the recording); at the end, every start state still set
 * is a thread still blocked: it becomes one sample of the offcpu-blocked
 * event, for its time inside the recording, with the stacks it blocked with.
 */
#ifndef OFFCPU_BLOCKED_H
#define OFFCPU_BLOCKED_H

#include <stdbool.h>
#include <stdint.h>

#include "record/loader.h"
#include "offcpu.h"

/* The offcpu-blocked event's sample id (offcpu-time's is OFFCPU_ID). */
#define OFFCPU_BLOCKED_ID	((1ull << 62) + 1)

struct blocked_start {
	uint64_t threads;	/* asleep at the start, now tracked */
	uint64_t ustacks;	/* of those with a user stack */
};

/* Called between two reads of a scan: the ring's consumer (see run_iter). */
typedef void (*blocked_poll_fn)(void *ctx);

/*
 * Run the start scan, if the loader chose one (after sched_switch is
 * attached); POLL (or NULL) between reads.  Returns 0, or -1 after one
 * line on stderr.
 */
int blocked_scan_start(struct loader *l, struct blocked_start *st, blocked_poll_fn poll,
		       void *poll_ctx);

/* One thread still blocked: its start state, and the CPU it last ran on. */
typedef int (*blocked_fn)(void *ctx, const struct offcpu_blocked *b, uint32_t cpu);

/*
 * Every wanted thread still blocked at END (CLOCK_MONOTONIC ns; call after
 * sched_switch is detached): FN for each (it stops the walk by returning
 * non-zero).  Threads that have exited are skipped; so are those that ran
 * before END though their block looks open (a switch-in no sched_switch
 * event showed), counted in *RAN.  Returns 0, or -1 after one line on stderr.
 */
int blocked_scan_end(struct loader *l, uint64_t end, blocked_fn fn, void *ctx,
		     uint64_t *ran);

/* One such thread B (the perf backend keeps its own): as above. */
int blocked_end_one(const struct offcpu_blocked *b, uint64_t end, blocked_fn fn, void *ctx,
		    uint64_t *ran);

#endif
