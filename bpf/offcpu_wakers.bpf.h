/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --wakers: who woke each block.  At sched_waking of a thread that is
 * blocked (its start has a time), the current task's ids, name and stacks
 * are stored in the thread's start; at its switch-in the block is sent or
 * summed with them (wsums instead of sums).  In interrupt context the current
 * task is whatever ran there: user space recognises that from the kernel
 * stack (src/record/wakers.c), which is why the waker's kernel stack is always
 * walked.  The waker's user stack is taken as a block's is (in
 * offcpu.bpf.c, waker_ustack: copied for CFI with --call-graph dwarf).
 * Included by the CO-RE object only: the classic sched_waking record has no
 * task to look up (tp,hash says "not supported").
 */
#ifndef OFFCPU_WAKERS_BPF_H
#define OFFCPU_WAKERS_BPF_H

#include "offcpu_common.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, struct offcpu_wkey);
	__type(value, struct offcpu_val);
} wsums SEC(".maps");

/*
 * The current task woke the thread whose start is S: all but its user
 * stack (w->ustack -1).  KTHREAD: it is a kernel thread; CTX:
 * OFFCPU_WAKER_{HARDIRQ,SOFTIRQ,TASKCTX} where known.
 */
static __always_inline void note_waker(void *ctx, struct offcpu_start *s, bool kthread,
				       __u32 irqctx)
{
	struct offcpu_waker *w = &s->waker;

	current_ids(&w->pid, &w->tid);
	w->flags = OFFCPU_WAKER_SEEN | (kthread ? OFFCPU_WAKER_KTHREAD : 0) | irqctx;
	bpf_get_current_comm(w->comm, sizeof(w->comm));
	w->ustack = -1;
	w->kstack = stack_id(ctx, &kstacks, &kstack_spill, 0, STAT_KSTACK_SPILLED);
	if (w->kstack < 0)
		count(DROP_KSTACK);
}

/* The waker part of a key: all zero but the stack ids when no wakeup was seen. */
static __always_inline void waker_of(struct offcpu_start *s, struct offcpu_waker *w)
{
	if (!(s->waker.flags & OFFCPU_WAKER_SEEN)) {
		count(STAT_WAKER_NONE);
		w->ustack = w->kstack = -1;
		return;
	}
	*w = s->waker;
}

static __always_inline void add_wsum(__u32 pid, __u32 tid, struct offcpu_start *s,
				     __u64 now, __u64 delta)
{
	struct offcpu_wkey key = { .k = block_key(pid, tid, s) };

	waker_of(s, &key.w);
	sum_into(&wsums, &key, now, delta);
}

static __always_inline void send_wevent(__u32 pid, __u32 tid, struct offcpu_start *s,
					__u64 now, __u64 delta)
{
	struct offcpu_wevent *e;

	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count(DROP_RINGBUF);
		count_trigger_summed(delta);
		add_wsum(pid, tid, s, now, delta);
		return;
	}
	fill_event(&e->e, pid, tid, s, now, delta);
	__builtin_memset(&e->w, 0, sizeof(e->w));
	waker_of(s, &e->w);
	bpf_ringbuf_submit(e, 0);
}

/* end_block with the waker: the block is counted once, under its waker. */
static __always_inline void end_block_waker(__u32 pid, __u32 tid, struct offcpu_start *s,
					    __u64 *now)
{
	__u64 delta;

	if (!block_ends(s, now, &delta))
		return;
	if (delta >= cfg.thresh_ns)
		send_wevent(pid, tid, s, *now, delta);
	else
		add_wsum(pid, tid, s, *now, delta);
}

#endif
