/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The offcpu-waker event's RAW payload (--wakers, record/wakers.h writes it,
 * the report reads it): who woke a block, and what kind of waker it was.
 */
#ifndef OFFCPU_WAKER_RECORD_H
#define OFFCPU_WAKER_RECORD_H

#include <stdint.h>

/* The offcpu-waker event's sample id (offcpu-time's is OFFCPU_ID; + 1: offcpu-blocked). */
#define OFFCPU_WAKER_ID	((1ull << 62) + 2)

enum waker_kind {
	WAKER_UNKNOWN,		/* no wakeup seen (never in a waker sample) */
	WAKER_TASK,		/* a user task, with its stacks */
	WAKER_KTHREAD,		/* a kernel thread */
	WAKER_TIMER,		/* a timer (hrtimer, timer wheel), in interrupt context */
	WAKER_SOFTIRQ,		/* another softirq */
	WAKER_IRQ,		/* a hardware interrupt or an IPI, or the idle task */
	WAKER_NO_KSTACK,	/* its kernel stack not recorded (maps full): the kind unknown */
	WAKER_KSTACK_CUT,	/* its kernel stack ends before try_to_wake_up: the kind unknown */
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

#endif
