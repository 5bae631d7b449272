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
#include "sample_writer.h"
#include "stacks.h"

enum waker_kind {
	WAKER_UNKNOWN,		/* no wakeup seen (never in a waker sample) */
	WAKER_TASK,		/* a user task, with its stacks */
	WAKER_KTHREAD,		/* a kernel thread */
	WAKER_TIMER,		/* a timer (hrtimer, timer wheel), in interrupt context */
	WAKER_SOFTIRQ,		/* another softirq */
	WAKER_IRQ,		/* a hardware interrupt or an IPI, or the idle task */
	WAKER_NO_KSTACK,	/* its kernel stack not recorded (maps full): the kind unknown */
	WAKER_KIND_MAX,
};

/* The RAW payload of an offcpu-waker sample (native byte order). */
struct waker_raw {
	uint32_t pair;		/* the RAW of the offcpu-time sample it belongs to */
	uint32_t sleeper_pid, sleeper_tid;
	uint32_t kind;		/* enum waker_kind */
	char comm[16];		/* the waker's name; for an interrupt, the interrupted task's */
	uint32_t pad;
};

/* "[timer]", "[softirq]", ... for the kinds that are no task, else NULL. */
const char *waker_kind_frame(uint32_t kind);

struct wakers;
typedef int (*wakers_queue_fn)(void *ctx, const struct perf_event_header *rec, uint64_t time);

struct wakers *wakers_new(struct stacks *st, uint32_t max_stack);

/*
 * Queues the sleeper's sample S with a pair id and, when W saw a wakeup,
 * the waker's sample after it.  BUF: SAMPLE_MAX_SIZE bytes.
 */
int wakers_add(struct wakers *wk, struct offcpu_sample *s, const struct offcpu_waker *w,
	       void *buf, wakers_queue_fn queue, void *ctx);

void wakers_free(struct wakers *wk);

#endif
