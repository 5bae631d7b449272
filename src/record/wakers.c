// SPDX-License-Identifier: GPL-2.0
/* --wakers: the offcpu-waker samples, and interrupt wakers told apart. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record/kfunc_range.h"
#include "record/wakers.h"

/*
 * Kernel functions that mean the wakeup ran in interrupt context, the first
 * one found from the waker's leaf deciding.  Their names have been stable
 * since 5.10 (handle_softirqs replaced __do_softirq in 6.8; both listed).
 * try_to_wake_up, looked up first, is where the waker's stack starts (the
 * BPF program and tracepoint glue above it are cut).
 */
static const struct { const char *name; enum waker_kind kind; } irq_funcs[] = {
	{ "try_to_wake_up", WAKER_TASK },
	{ "hrtimer_wakeup", WAKER_TIMER },
	{ "process_timeout", WAKER_TIMER },
	{ "call_timer_fn", WAKER_TIMER },
	{ "__hrtimer_run_queues", WAKER_TIMER },
	{ "hrtimer_interrupt", WAKER_TIMER },
	{ "handle_softirqs", WAKER_SOFTIRQ },
	{ "__do_softirq", WAKER_SOFTIRQ },
	{ "__handle_irq_event_percpu", WAKER_IRQ },
	{ "handle_irq_event", WAKER_IRQ },
	{ "generic_handle_domain_irq", WAKER_IRQ },
	{ "handle_domain_irq", WAKER_IRQ },
	{ "flush_smp_call_function_queue", WAKER_IRQ },
	{ "generic_smp_call_function_single_interrupt", WAKER_IRQ },
	{ "irq_exit_rcu", WAKER_IRQ },
	{ "do_io_irq", WAKER_IRQ },
	{ "do_ext_irq", WAKER_IRQ },
};
#define NR_FUNCS (sizeof(irq_funcs) / sizeof(irq_funcs[0]))

struct wakers {
	struct stacks *stacks;
	uint32_t pair;		/* last pair id handed out */
	const char *ranges_how;	/* NULL: not read yet; else how (some may be missing) */
	uint64_t lo[NR_FUNCS], hi[NR_FUNCS];	/* [lo, hi); lo 0: not found */
	struct stack *cut;	/* the waker's kernel stack, cut */
	uint64_t marked;	/* see wakers_take_counts */
	uint64_t unknown;
};

/*
 * Where each function starts and the next symbol does: asked of the kernel
 * (5.16+), /proc/kallsyms read only for what it could not answer.
 */
static void read_ranges(struct wakers *wk)
{
	const char *names[NR_FUNCS];

	_Static_assert(NR_FUNCS <= KFUNC_RANGES_MAX, "too many functions for kfunc_ranges");
	for (size_t i = 0; i < NR_FUNCS; i++)
		names[i] = irq_funcs[i].name;
	wk->ranges_how = kfunc_ranges(names, NR_FUNCS, wk->lo, wk->hi);
}

static int func_at(const struct wakers *wk, uint64_t ip)
{
	for (size_t i = 0; i < NR_FUNCS; i++)
		if (wk->lo[i] && ip >= wk->lo[i] && ip < wk->hi[i])
			return i;
	return -1;
}

/*
 * A waker of KIND (task or kernel thread) whose kernel stack was cut: an
 * interrupt where its preempt_count says so, KIND where it says task
 * context, unknown where it was not read.
 */
static enum waker_kind cut_kind(const struct offcpu_waker *w, enum waker_kind kind)
{
	if (w->flags & OFFCPU_WAKER_HARDIRQ)
		return WAKER_IRQ;
	if (w->flags & OFFCPU_WAKER_SOFTIRQ)
		return WAKER_SOFTIRQ;
	if (w->flags & OFFCPU_WAKER_TASKCTX)
		return kind;
	return WAKER_KSTACK_CUT;
}

/*
 * The kind of waker W, and its kernel stack in wk->cut: from try_to_wake_up
 * to the function that showed interrupt context (the interrupted task's
 * frames below it are not the waker's).
 */
static enum waker_kind classify(struct wakers *wk, const struct offcpu_waker *w,
				const struct stack *k)
{
	enum waker_kind kind = w->flags & OFFCPU_WAKER_KTHREAD ? WAKER_KTHREAD : WAKER_TASK;
	uint32_t from = 0, to = k ? k->nr : 0;
	bool ttwu = false;

	if (!wk->ranges_how)
		read_ranges(wk);
	for (uint32_t i = 0; i < to; i++) {
		int f = func_at(wk, k->ip[i]);

		if (f == 0)
			ttwu = true;
		if (f == 0 && i < 8 && !from)
			from = i;
		if (f > 0) {
			kind = irq_funcs[f].kind;
			to = i + 1;
		}
	}
	if (from >= to)
		from = 0;
	wk->cut->nr = to - from;
	if (to > from)
		memcpy(wk->cut->ip, k->ip + from, (to - from) * sizeof(uint64_t));
	/*
	 * A stack that ends before the wakeup cannot tell an interrupt from
	 * the task it found: 32-bit ARM's unwinder stops in the BPF program
	 * that asked (a raw_tp's regs are its helper's caller's).
	 */
	if (k && !ttwu && (kind == WAKER_TASK || kind == WAKER_KTHREAD))
		kind = cut_kind(w, kind);
	/* The idle task wakes nobody itself: an interrupt found it running. */
	if (!w->pid && kind == WAKER_TASK)
		kind = WAKER_IRQ;
	/*
	 * Without its kernel stack an interrupt cannot be told from the task
	 * it interrupted: name neither (the lost stack is counted).
	 */
	if (!k && kind == WAKER_TASK)
		kind = WAKER_NO_KSTACK;
	return kind;
}

/* A task waker's user stack; its absence counted where it should be there. */
static const struct stack *task_ustack(struct wakers *wk, const struct offcpu_waker *w)
{
	const struct stack *u = stacks_get(wk->stacks, w->ustack, false);

	if (!u && w->ustack >= 0)
		wk->unknown++;
	else if (!u && (w->flags & (OFFCPU_WAKER_HARDIRQ | OFFCPU_WAKER_SOFTIRQ)))
		wk->marked++;
	return u;
}

int wakers_add(struct wakers *wk, struct offcpu_sample *s, const struct offcpu_waker *w,
	       void *buf, wakers_queue_fn queue, void *ctx)
{
	const struct stack *k = stacks_get(wk->stacks, w->kstack, true);
	struct waker_raw raw = { .sleeper_pid = s->pid, .sleeper_tid = s->tid };
	struct offcpu_sample ws = *s;
	bool task;

	if (!(w->flags & OFFCPU_WAKER_SEEN))
		return queue(ctx, sample_write(buf, s), s->time);
	raw.pair = ++wk->pair ? wk->pair : ++wk->pair;
	s->raw = &raw.pair;
	s->raw_size = sizeof(raw.pair);
	if (queue(ctx, sample_write(buf, s), s->time))
		return -1;
	raw.kind = classify(wk, w, k);
	memcpy(raw.comm, w->comm, sizeof(raw.comm));
	task = raw.kind == WAKER_TASK || raw.kind == WAKER_KTHREAD;
	ws.pid = task ? w->pid : 0;
	ws.tid = task ? w->tid : 0;
	ws.kernel = k ? wk->cut : NULL;
	ws.user = raw.kind == WAKER_TASK ? task_ustack(wk, w) : NULL;
	ws.id = OFFCPU_WAKER_ID;
	ws.raw = &raw;
	ws.raw_size = sizeof(raw);
	return queue(ctx, sample_write(buf, &ws), s->time);
}

struct wakers *wakers_new(struct stacks *st, uint32_t max_stack)
{
	struct wakers *wk = calloc(1, sizeof(*wk));

	if (!wk)
		return NULL;
	wk->stacks = st;
	wk->cut = malloc(sizeof(*wk->cut) + max_stack * sizeof(uint64_t));
	if (!wk->cut) {
		free(wk);
		return NULL;
	}
	return wk;
}

const char *wakers_ranges_how(const struct wakers *wk)
{
	return wk ? wk->ranges_how : NULL;
}

void wakers_take_counts(struct wakers *wk, uint64_t *marked, uint64_t *unknown)
{
	*marked += wk->marked;
	*unknown += wk->unknown;
	wk->marked = wk->unknown = 0;
}

void wakers_free(struct wakers *wk)
{
	if (!wk)
		return;
	free(wk->cut);
	free(wk);
}
