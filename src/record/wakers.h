/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --wakers: who woke each block, in perf.data.  A sleeper's offcpu-time
 * sample carries a pair id as its RAW payload (0: no wakeup seen); the
 * offcpu-waker sample right after it (same time and period) carries the
 * waker's callchain, its pid/tid (0/0 for an interrupt) and struct
 * waker_raw.  Interrupt wakers are told from task wakers by the kernel
 * functions on the waker's stack (hrtimer_wakeup: a timer, ...), since in
 * interrupt context the current task is only the one that was interrupted.
 */
#ifndef OFFCPU_WAKERS_H
#define OFFCPU_WAKERS_H

#include <stdint.h>

#include "offcpu.h"
#include "format/waker_record.h"
#include "record/sample_writer.h"
#include "record/stacks.h"

struct wakers;
typedef int (*wakers_queue_fn)(void *ctx, const struct perf_event_header *rec, uint64_t time);

struct wakers *wakers_new(struct stacks *st, uint32_t max_stack);

/*
 * Queues the sleeper's sample S with a pair id and, when W saw a wakeup,
 * the waker's sample after it.  BUF: SAMPLE_MAX_SIZE bytes.
 */
int wakers_add(struct wakers *wk, struct offcpu_sample *s, const struct offcpu_waker *w,
	       void *buf, wakers_queue_fn queue, void *ctx);

/* How the interrupt functions' ranges were found (-v), or NULL: not yet. */
const char *wakers_ranges_how(const struct wakers *wk);

/*
 * Task wakers shown without their user stack so far: an interrupt marker
 * said interrupt where the kernel stack says task (MARKED), or the id named
 * nothing known (UNKNOWN, a bug).  Both are reset.
 */
void wakers_take_counts(struct wakers *wk, uint64_t *marked, uint64_t *unknown);

void wakers_free(struct wakers *wk);

#endif
