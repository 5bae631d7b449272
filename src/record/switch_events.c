// SPDX-License-Identifier: GPL-2.0
/*
 * The perf backend: sched_switch perf events (or the context-switch software
 * event), paired per thread in user space.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <time.h>
#include <unistd.h>

#include "format/perf_data_reader.h"
#include "format/perf_records.h"
#include "lib/clock.h"
#include "lib/hashset.h"
#include "record/ordered.h"
#include "record/perf_events.h"
#include "record/switch_events.h"
#include "record/switch_wakers.h"

/* sched_switch's prev_state as __trace_sched_switch_state reports it (4.14+). */
#define REPORT_IDLE	0x80	/* TASK_IDLE: a D that is not load, counted as D */
#define REPORT_MASK	0xff	/* above: a preempted task (runnable) */

/* The software event's blocks: S or D, which is not known (the probe refuses --state). */
#define STATE_UNKNOWN	(OFFCPU_TASK_INTERRUPTIBLE | OFFCPU_TASK_UNINTERRUPTIBLE)

#ifndef PERF_RECORD_MISC_SWITCH_OUT_PREEMPT
#define PERF_RECORD_MISC_SWITCH_OUT_PREEMPT	(1 << 14)	/* 4.17 */
#endif

/*
 * Per-CPU rings: what a CPU's switches fill between two reads (100 ms, a
 * reader late by a second under load).  dwarf: each switch-out carries its
 * stack copy (8 KiB by default), so --dwarf-buffer per CPU, as the BPF ring
 * holds the copies; else callchains, a few hundred bytes.  All CPUs' rings
 * together at most a 32nd of the memory.
 */
#define RING_FP_BYTES		(512u << 10)
/*
 * dwarf without --dwarf-buffer: 16 MiB per CPU.  The reader names each
 * stack as it reads it, and a program it has not seen before stalls it
 * while that program's CFI loads (tens of ms for a large one): a pipe
 * load at 66,000 switches a second on one CPU filled 4 MiB in that time
 * (bench/perf_backend.sh lost 6 % of its records at its start), 16 none.
 */
#define RING_DWARF_BYTES	(16u << 20)
#define RING_MIN_PAGES		8
#define RING_MEM_SHARE		32

/* Private record types of the pairing queue (never written to a file). */
enum { REC_SWITCH = 0x7f00, REC_IN, REC_EXIT };

/* A switch-out sample, as the pairing needs it (its stacks already named). */
struct switch_rec {
	struct perf_event_header h;	/* REC_SWITCH */
	uint32_t cpu, pid, tid;		/* prev: the task that switched out */
	uint32_t next_tid;
	uint32_t state;			/* OFFCPU_TASK_* */
	int32_t ustack, kstack;
	uint32_t starts;		/* prev's block is wanted (state, filters) */
};

/* A switch-in from PERF_RECORD_SWITCH_CPU_WIDE. */
struct in_rec {
	struct perf_event_header h;	/* REC_IN */
	uint32_t cpu, tid;
};

/* The software event: a thread's PERF_RECORD_EXIT (its last switch-out is no block). */
struct exit_rec {
	struct perf_event_header h;	/* REC_EXIT */
	uint32_t tid, pad;
};

/*
 * The software event: a CPU's last sample, held until the switch-out record
 * after it says whether prev blocked; with a copy of the sample (its stack
 * copy) when the block would be wanted, for its stacks.
 */
struct held {
	struct switch_rec r;
	uint64_t time;
	bool full, wanted;
	void *copy;
	size_t cap;
};

/* PERF_RECORD_SWITCH_CPU_WIDE with the sample_id trailer of TID, TIME and CPU. */
struct switch_cpu_wide {
	struct perf_event_header header;
	uint32_t next_prev_pid, next_prev_tid;
	uint32_t pid, tid;
	uint64_t time;
	uint32_t cpu, res;
};

/* A thread's open block (struct offcpu_start's part the pairing needs). */
struct open_block {
	uint64_t ts;
	uint32_t tgid, state, cpu;
	int32_t ustack, kstack;
	struct offcpu_waker waker;	/* --wakers: the last waking since ts */
	struct open_block *next_free;
};

/*
 * A sum of short blocks under its key, as the BPF sums map holds it (the
 * wsums map's, its waker all zero without --wakers).
 */
struct sum {
	struct offcpu_wkey k;
	struct offcpu_val v;
};

struct switch_events {
	const struct offcpu_opts *o;
	const struct plan *pl;
	const struct tracefs_sched *tp;	/* NULL: the context-switch software event */
	bool swevent;
	struct held *held;		/* swevent: per CPU */
	struct switch_wakers *wk;	/* --wakers, else NULL */
	struct u32_set exited;		/* swevent: threads whose EXIT was paired, last switch to come */
	struct stacks *stacks;
	struct switch_sink sink;
	int ncpus;
	int *fds;
	void **rings;
	size_t ring_bytes;
	struct perf_event_attr attr;	/* as opened: how its samples read */
	void *scratch;			/* a record that wrapped around its ring */
	uint64_t *ips;			/* frames of one stack */
	struct ordered_events q;	/* the records of all CPUs, put in time order */
	struct u32_map open;		/* tid -> struct open_block */
	struct open_block *free_blocks;
	struct key_set sums;		/* struct sum, by key */
	uint64_t *last_switch;		/* per CPU: the time of its last switch paired */
	uint32_t self_pid;
	uint64_t refreshed_at;		/* the task records were read up to here */
	int err;
	uint64_t counters[COUNTER_MAX];
};

static void count(struct switch_events *sw, uint32_t what)
{
	sw->counters[what]++;
}

/* ---- pairing, in time order ---- */

static bool same_key(const void *ctx, uintptr_t rec, const void *key)
{
	(void)ctx;
	return !memcmp(&((const struct sum *)rec)->k, key, sizeof(struct offcpu_wkey));
}

/* Adds a block of DELTA ns ending at NOW on CPU to KEY's sum (sum_into's rules). */
static void add_sum(struct switch_events *sw, const struct offcpu_wkey *key, uint64_t now,
		    uint64_t delta, uint32_t cpu)
{
	uint32_t h = fnv1a(FNV1A_INIT, key, sizeof(*key));
	struct sum *s = (struct sum *)key_set_get(&sw->sums, h, key, same_key, NULL);

	if (!s) {
		s = calloc(1, sizeof(*s));
		if (!s || key_set_add(&sw->sums, h, (uintptr_t)s)) {
			free(s);
			count(sw, DROP_SUMS);
			return;
		}
		s->k = *key;
	}
	s->v.total += delta;
	s->v.count++;
	s->v.last = now;
	s->v.cpu = cpu;
}

/*
 * --wakers: the waker part of B's key (waker_of in offcpu_wakers.bpf.h):
 * all zero but the stack ids when no waking was seen, which is counted.
 */
static void waker_of(struct switch_events *sw, const struct open_block *b,
		     struct offcpu_waker *w)
{
	if (!(b->waker.flags & OFFCPU_WAKER_SEEN)) {
		count(sw, STAT_WAKER_NONE);
		w->ustack = w->kstack = -1;
		return;
	}
	*w = b->waker;
}

/* TID's block B ends at NOW on CPU (end_block's rules: --min/--max-block, the threshold). */
static void end_block(struct switch_events *sw, uint32_t tid, struct open_block *b,
		      uint64_t now, uint32_t cpu)
{
	uint64_t delta = now - b->ts;
	struct offcpu_event e = {
		.time = now, .delta = delta, .pid = b->tgid, .tid = tid, .cpu = cpu,
		.state = b->state, .ustack = b->ustack, .kstack = b->kstack,
	};
	struct offcpu_wkey key = {
		.k = { .pid = b->tgid, .tid = tid, .ustack = b->ustack, .kstack = b->kstack,
		       .state = b->state },
	};

	u32_map_del(&sw->open, tid);
	b->next_free = sw->free_blocks;
	sw->free_blocks = b;
	if (delta < sw->o->min_block_ns || delta > sw->o->max_block_ns)
		return;
	/* Counted once, under its waker (end_block_waker). */
	if (sw->wk)
		waker_of(sw, b, &key.w);
	if (delta >= sw->o->thresh_ns) {
		if (sw->sink.block(sw->sink.ctx, &e, sw->wk ? &key.w : NULL))
			sw->err = -1;
		return;
	}
	add_sum(sw, &key, now, delta, cpu);
}

static void switch_in(struct switch_events *sw, uint32_t tid, uint64_t now, uint32_t cpu)
{
	struct open_block *b = tid ? u32_map_get(&sw->open, tid) : NULL;

	if (b && now >= b->ts)
		end_block(sw, tid, b, now, cpu);
}

/*
 * TID switches out with its block B still open: it was switched in without
 * a record seen (a lost record, a sample the kernel did not emit).  It ran
 * on this CPU since, so that switch-in came after LAST, this CPU's last
 * switch seen: the block ends there (end_unseen in offcpu_tp.bpf.c).
 */
static void end_unseen(struct switch_events *sw, uint32_t tid, struct open_block *b,
		       uint64_t last, uint64_t now, uint32_t cpu)
{
	if (!last || last < b->ts || last > now) {
		u32_map_del(&sw->open, tid);
		b->next_free = sw->free_blocks;
		sw->free_blocks = b;
		count(sw, DROP_UNSEEN);
		return;
	}
	count(sw, STAT_UNSEEN_ENDED);
	end_block(sw, tid, b, last, cpu);
}

static struct open_block *new_block(struct switch_events *sw, uint32_t tid)
{
	struct open_block *b = sw->free_blocks;

	if (b)
		sw->free_blocks = b->next_free;
	else
		b = malloc(sizeof(*b));
	if (b && u32_map_put(&sw->open, tid, b)) {
		free(b);
		b = NULL;
	}
	return b;
}

/*
 * The software event: whether R is the last switch-out of a thread that
 * exited (do_task_dead: no preemption, so a block to the event, one that
 * would never end).  Its EXIT record came first: do_exit reports it before.
 */
static bool last_switch(struct switch_events *sw, const struct switch_rec *r)
{
	if (!sw->swevent || !r->state || !u32_set_has(&sw->exited, r->tid))
		return false;
	u32_map_del(&sw->exited.m, r->tid);
	return true;
}

static void switch_out(struct switch_events *sw, const struct switch_rec *r, uint64_t now)
{
	uint64_t last = sw->last_switch[r->cpu];
	struct open_block *b = u32_map_get(&sw->open, r->tid);

	if (b)
		end_unseen(sw, r->tid, b, last, now, r->cpu);
	if (last_switch(sw, r) || !r->starts)
		return;
	b = new_block(sw, r->tid);
	if (!b) {
		count(sw, DROP_STORAGE);
		return;
	}
	*b = (struct open_block){
		.ts = now, .tgid = r->pid, .state = r->state, .cpu = r->cpu,
		.ustack = r->ustack, .kstack = r->kstack,
	};
}

/*
 * A waking of R->wakee: its block, if one is open, takes this waker (the
 * last one seen wins, as in the thread's start in BPF); none is no drop.
 */
static void waking(struct switch_events *sw, const struct waking_rec *r)
{
	struct open_block *b = u32_map_get(&sw->open, r->wakee);

	if (!b)
		return;
	b->waker = r->w;
	switch_wakers_comm(sw->wk, &b->waker, r->cpu);
}

static void pair(void *ctx, const struct perf_event_header *h, uint64_t time)
{
	struct switch_events *sw = ctx;
	const struct switch_rec *r = (const void *)h;
	const struct in_rec *in = (const void *)h;
	const struct exit_rec *ex = (const void *)h;

	if (h->type == REC_IN) {
		switch_in(sw, in->tid, time, in->cpu);
		return;
	}
	if (h->type == REC_EXIT) {
		if (u32_set_add(&sw->exited, ex->tid))
			count(sw, DROP_STORAGE);
		return;
	}
	if (h->type == REC_WAKING) {
		waking(sw, (const void *)h);
		return;
	}
	if (h->type == REC_COMM || h->type == REC_FORK) {
		switch_wakers_rename(sw->wk, h);
		return;
	}
	switch_out(sw, r, time);
	switch_in(sw, r->next_tid, time, r->cpu);
	sw->last_switch[r->cpu] = time;
}

static void no_round(void *ctx)
{
	(void)ctx;
}

/* ---- reading samples ---- */

/* The user registers of sample S (pc, sp, fp, lr), 0 where the board has none. */
static void sample_uregs(const struct switch_events *sw, const struct pd_sample *s,
			 uint64_t regs[PERF_UREGS_MAX])
{
	uint64_t mask = sw->attr.sample_regs_user;

	for (int i = 0; i < PERF_UREGS_MAX; i++) {
		regs[i] = 0;
		if (perf_uregs[i] >= 0)
			regs[i] = s->uregs[__builtin_popcountll(mask & ((1ull << perf_uregs[i]) - 1))];
	}
}

/* The frames of S's callchain in CONTEXT (PERF_CONTEXT_KERNEL or _USER), into sw->ips. */
static uint32_t chain_part(struct switch_events *sw, const struct pd_sample *s, uint64_t context)
{
	uint32_t n = 0, max = OFFCPU_MAX_STACK + OFFCPU_KSTACK_GLUE;
	bool in = false;

	for (uint64_t i = 0; i < s->nr; i++) {
		uint64_t ip = s->ips[i];

		if (ip >= (uint64_t)PERF_CONTEXT_MAX) {
			in = ip == context;
			continue;
		}
		if (in && n < max)
			sw->ips[n++] = ip;
	}
	return n;
}

/* The user stack id of S: unwound from its copy (dwarf) or its callchain; -1: none. */
static int32_t user_stack(struct switch_events *sw, const struct pd_sample *s)
{
	uint64_t regs[PERF_UREGS_MAX];
	uint32_t n;

	/* A kernel thread (--include-kernel-threads) has none to record. */
	if (!sw->o->ustack || !s->uregs_abi)
		return -1;
	if (!sw->pl->dwarf) {
		n = chain_part(sw, s, PERF_CONTEXT_USER);
	} else {
		if (!s->stack)
			return -1;
		count(sw, STAT_UCOPY_SENT);
		if (!s->stack_dyn)
			count(sw, STAT_UCOPY_UNREADABLE);
		else if (s->stack_dyn < sw->o->copy_bytes)
			count(sw, STAT_UCOPY_SHORT);
		sample_uregs(sw, s, regs);
		n = stacks_unwind_regs(sw->stacks, s->pid, s->tid, regs, s->stack, s->stack_dyn,
				       s->stack_dyn < sw->o->copy_bytes, sw->ips, sw->pl->max_stack);
	}
	if (!n) {
		count(sw, DROP_USTACK);
		return -1;
	}
	return stacks_table_put(sw->stacks, sw->ips, n, false);
}

/* S's kernel stack id; -1: none (WANTED: a block's asked for, a waker's always). */
static int32_t kernel_stack(struct switch_events *sw, const struct pd_sample *s, bool wanted)
{
	uint32_t n;
	int32_t id;

	if (!wanted)
		return -1;
	n = chain_part(sw, s, PERF_CONTEXT_KERNEL);
	id = n ? stacks_table_put(sw->stacks, sw->ips, n, true) : -1;
	if (id < 0)
		count(sw, DROP_KSTACK);
	return id;
}

/* An unsigned field of the raw record (4 or 8 bytes, as tracefs says). */
static uint64_t raw_field(const struct pd_sample *s, const struct tracefs_field *f)
{
	uint64_t v8 = 0;
	uint32_t v4 = 0;

	if ((uint64_t)f->offset + f->size > s->raw_size)
		return 0;
	if (f->size == 8) {
		memcpy(&v8, (const char *)s->raw + f->offset, 8);
		return v8;
	}
	memcpy(&v4, (const char *)s->raw + f->offset, 4);
	return v4;
}

/* The state a switch-out is recorded under (0: not blocked), as offcpu_tp.bpf.c reads it. */
static uint32_t block_state(const struct pd_sample *s, const struct tracefs_field *f)
{
	uint64_t state = raw_field(s, f);

	if (state & REPORT_IDLE)
		state = OFFCPU_TASK_UNINTERRUPTIBLE;
	return state & REPORT_MASK;
}

/*
 * The task records up to now are read, unless they were after S was taken
 * (its process's fork or exec, its maps, come before it).
 */
static void refresh_for(struct switch_events *sw, const struct pd_sample *s)
{
	if (s->time < sw->refreshed_at)
		return;
	sw->refreshed_at = mono_ns();
	sw->sink.refresh(sw->sink.ctx);
}

/*
 * Whether prev's block is wanted, filters_pass's rules and a kernel thread
 * known by its lack of user registers (perf gives none to PF_KTHREAD).
 * -p and a command: the task events follow forks; a process they do not
 * know yet may have forked since they were read.
 */
static bool block_wanted(struct switch_events *sw, const struct pd_sample *s, uint32_t state)
{
	const struct offcpu_opts *o = sw->o;

	if (!(state & o->state_mask) || !s->pid || s->pid == sw->self_pid)
		return false;
	if (o->user_only && !s->uregs_abi)
		return false;
	if (o->tids.n && !id_list_has(&o->tids, s->tid))
		return false;
	if (o->cpus.n && !id_list_has(&o->cpus, s->cpu))
		return false;
	if (sw->sink.follows(sw->sink.ctx, s->pid))
		return true;
	refresh_for(sw, s);
	return sw->sink.follows(sw->sink.ctx, s->pid);
}

/* R's stacks from its sample S, when R starts a block (the copy goes with the ring). */
static void name_stacks(struct switch_events *sw, const struct pd_sample *s, struct switch_rec *r)
{
	r->ustack = r->kstack = -1;
	if (!r->starts)
		return;
	/* A process forked or exec'ed since the last read: its maps first. */
	if (sw->pl->dwarf)
		refresh_for(sw, s);
	r->ustack = user_stack(sw, s);
	r->kstack = kernel_stack(sw, s, sw->o->kstack);
}

static void queue_rec(struct switch_events *sw, const struct perf_event_header *h, uint64_t time)
{
	if (ordered_queue(&sw->q, h, time))
		sw->err = -1;
}

static void queue_switch(struct switch_events *sw, const struct switch_rec *r, uint64_t time)
{
	queue_rec(sw, &r->h, time);
}

/* A sched_switch sample: its pairing record, its stacks named now. */
static void read_tracepoint(struct switch_events *sw, const struct pd_sample *s)
{
	struct switch_rec r = { .h = { REC_SWITCH, 0, sizeof(r) } };

	if (!s->raw)
		return;
	r.cpu = s->cpu;
	r.pid = s->pid;
	r.tid = s->tid;
	r.next_tid = (uint32_t)raw_field(s, &sw->tp->switch_next_pid);
	r.state = block_state(s, &sw->tp->switch_prev_state);
	r.starts = block_wanted(sw, s, r.state);
	if (sw->wk && r.state)
		switch_wakers_blocks(sw->wk, r.tid, r.starts);
	name_stacks(sw, s, &r);
	queue_switch(sw, &r, s->time);
}

/*
 * A waking sample, in the waker's context: its stacks named as a
 * switch-out's are (the same unwinding), the kernel one always (the
 * interrupt functions on it tell interrupt wakers), the user one for a
 * task (note_waker and waker_ustack's rules).
 */
static void read_waking(struct switch_events *sw, const struct pd_sample *s)
{
	struct waking_rec r;
	bool user;

	if (!switch_wakers_sample(sw->wk, s, &r, &user))
		return;
	if (sw->pl->dwarf && user)
		refresh_for(sw, s);
	r.w.kstack = kernel_stack(sw, s, true);
	if (user && sw->o->ustack) {
		r.w.ustack = user_stack(sw, s);
		/* Also an interrupted task without user registers: not a drop of a stack. */
		if (r.w.ustack < 0)
			count(sw, STAT_WAKER_NO_USTACK);
	}
	queue_rec(sw, &r.h, s->time);
}

/* ---- the context-switch software event: prev's state from the switch-out record ---- */

/* A copy of sample H in HD, for its stacks once its switch-out record comes; -1: no memory. */
static int hold_copy(struct held *hd, const struct perf_event_header *h)
{
	void *p;

	if (hd->cap < h->size) {
		p = realloc(hd->copy, h->size);
		if (!p)
			return -1;
		hd->copy = p;
		hd->cap = h->size;
	}
	memcpy(hd->copy, h, h->size);
	return 0;
}

/*
 * HD's sample settled by the switch-out record W that followed it on its
 * CPU (NULL, or another thread's: its own was lost, the state is not known
 * and no block starts).  Not a preemption: a block, S or D unknown.
 */
static void settle(struct switch_events *sw, struct held *hd, const struct switch_cpu_wide *w)
{
	struct pd_sample s;

	if (!hd->full)
		return;
	hd->full = false;
	if (w && w->tid == hd->r.tid) {
		hd->r.next_tid = w->next_prev_tid;
		if (!(w->header.misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT))
			hd->r.state = STATE_UNKNOWN;
	}
	hd->r.starts = hd->wanted && hd->r.state;
	if (hd->r.starts && pd_parse_sample_attr(&sw->attr, false, hd->copy, &s))
		hd->r.starts = 0;
	if (hd->r.starts)
		name_stacks(sw, &s, &hd->r);
	queue_switch(sw, &hd->r, hd->time);
}

/*
 * A software event sample: counted in perf_event_task_sched_out(prev, next)
 * while current is prev (probe_swevent), so its tid and stacks are prev's;
 * held until the switch-out record that perf writes right after it.
 * Whether a block would be wanted (the filters) is asked now, its stacks
 * are named only for a block: a preemption costs no unwinding.
 */
static void hold_sample(struct switch_events *sw, const struct perf_event_header *h,
			const struct pd_sample *s)
{
	struct held *hd = &sw->held[s->cpu];

	settle(sw, hd, NULL);
	hd->r = (struct switch_rec){
		.h = { REC_SWITCH, 0, sizeof(hd->r) }, .cpu = s->cpu, .pid = s->pid, .tid = s->tid,
		.ustack = -1, .kstack = -1,
	};
	hd->time = s->time;
	hd->full = true;
	hd->wanted = block_wanted(sw, s, STATE_UNKNOWN);
	if (hd->wanted && hold_copy(hd, h)) {
		hd->wanted = false;
		count(sw, DROP_STORAGE);
	}
}

/* A thread exits: the software event's last switch-out of it is not a block (last_switch). */
static void read_exit(struct switch_events *sw, const struct perf_event_header *h)
{
	const struct perf_record_fork *f = (const void *)h;
	struct exit_rec ex = { .h = { REC_EXIT, 0, sizeof(ex) } };

	if (h->size < sizeof(*f))
		return;
	ex.tid = f->tid;
	if (ordered_queue(&sw->q, &ex.h, f->time))
		sw->err = -1;
}

/* ---- reading the rings ---- */

static void read_sample(struct switch_events *sw, const struct perf_event_header *h)
{
	struct pd_sample s;

	if (pd_parse_sample_attr(&sw->attr, false, h, &s) || s.cpu >= (uint32_t)sw->ncpus)
		return;
	if (sw->swevent)
		hold_sample(sw, h, &s);
	else if (sw->wk && switch_wakers_is_waking(sw->wk, &s))
		read_waking(sw, &s);
	else
		read_tracepoint(sw, &s);
}

/* A switch-in, or the software event's switch-out record (its state). */
static void read_switch(struct switch_events *sw, const struct perf_event_header *h)
{
	const struct switch_cpu_wide *w = (const void *)h;
	struct in_rec in = { .h = { REC_IN, 0, sizeof(in) } };

	if (h->size < sizeof(*w) || w->cpu >= (uint32_t)sw->ncpus)
		return;
	if (h->misc & PERF_RECORD_MISC_SWITCH_OUT) {
		if (sw->swevent)
			settle(sw, &sw->held[w->cpu], w);
		return;
	}
	in.cpu = w->cpu;
	in.tid = w->tid;
	if (ordered_queue(&sw->q, &in.h, w->time))
		sw->err = -1;
}

static void on_record(void *ctx, const struct perf_event_header *h)
{
	struct switch_events *sw = ctx;

	if (h->type == PERF_RECORD_SAMPLE)
		read_sample(sw, h);
	else if (h->type == PERF_RECORD_SWITCH_CPU_WIDE)
		read_switch(sw, h);
	else if (h->type == PERF_RECORD_EXIT && sw->swevent)
		read_exit(sw, h);
	else if (sw->wk && switch_wakers_task_record(sw->wk, h, &sw->q))
		sw->err = -1;
}

int switch_events_read(struct switch_events *sw, uint64_t upto)
{
	const struct ordered_sink sink = { pair, no_round, sw };

	for (int cpu = 0; cpu < sw->ncpus; cpu++)
		if (sw->rings[cpu])
			sw->counters[STAT_PERF_LOST] += perf_ring_read(sw->rings[cpu], sw->scratch,
								       on_record, sw);
	/* The last read: a sample still held lost its switch-out record. */
	for (int cpu = 0; sw->held && upto == UINT64_MAX && cpu < sw->ncpus; cpu++)
		settle(sw, &sw->held[cpu], NULL);
	ordered_flush(&sw->q, upto, &sink);
	return sw->err;
}

int switch_events_poll(struct switch_events *sw, int timeout_ms)
{
	struct pollfd *p = calloc(sw->ncpus, sizeof(*p));
	int n = 0, r;

	if (!p)
		return -1;
	for (int cpu = 0; cpu < sw->ncpus; cpu++)
		if (sw->fds[cpu] >= 0)
			p[n++] = (struct pollfd){ .fd = sw->fds[cpu], .events = POLLIN };
	r = poll(p, n, timeout_ms);
	free(p);
	return r < 0 ? -1 : 0;
}

void switch_events_stop(struct switch_events *sw)
{
	for (int cpu = 0; cpu < sw->ncpus; cpu++)
		if (sw->fds[cpu] >= 0)
			ioctl(sw->fds[cpu], PERF_EVENT_IOC_DISABLE, 0);
	switch_wakers_stop(sw->wk);
}

int switch_events_drain(struct switch_events *sw, switch_sum_fn fn, void *ctx)
{
	int err = 0;

	for (size_t i = 0; i < sw->sums.cap; i++) {
		struct sum *s = (struct sum *)sw->sums.v[i];

		if (!s)
			continue;
		if (!err && fn && fn(ctx, &s->k, &s->v))
			err = -1;
		free(s);
	}
	key_set_free(&sw->sums);
	memset(&sw->sums, 0, sizeof(sw->sums));
	return err;
}

int switch_events_blocked(struct switch_events *sw, uint64_t end, blocked_fn fn, void *ctx,
			  uint64_t *ran)
{
	struct u32_map *m = &sw->open;
	int err = 0;

	*ran = 0;
	for (size_t i = 0; i < m->cap && !err; i++) {
		const struct open_block *b = m->vals[i];
		struct offcpu_blocked bl;

		if (!b || b->ts > end)
			continue;
		bl = (struct offcpu_blocked){
			.ts = b->ts, .pid = b->tgid, .tid = m->keys[i], .ustack = b->ustack,
			.kstack = b->kstack, .state = b->state,
		};
		err = blocked_end_one(&bl, end, fn, ctx, ran);
	}
	return err;
}

const uint64_t *switch_events_counters(const struct switch_events *sw)
{
	return sw->counters;
}

/* ---- opening ---- */

static void switch_attr(struct perf_event_attr *a, const struct switch_events *sw)
{
	const struct plan *pl = sw->pl;

	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->sample_period = 1;
	a->sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
			 PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER;
	if (sw->swevent) {
		/* No raw record: the state comes from the switch-out record, exits from EXIT. */
		a->type = PERF_TYPE_SOFTWARE;
		a->config = PERF_COUNT_SW_CONTEXT_SWITCHES;
		a->task = 1;
	} else {
		a->type = PERF_TYPE_TRACEPOINT;
		a->config = sw->tp->switch_id;
		a->sample_type |= PERF_SAMPLE_RAW;
	}
	a->sample_id_all = 1;
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
	a->context_switch = 1;
	/* User registers always: a kernel thread is a sample without them. */
	a->sample_regs_user = perf_uregs_mask();
	a->exclude_callchain_kernel = !pl->kstack;
	a->exclude_callchain_user = !sw->o->ustack || pl->dwarf;
	a->sample_max_stack = pl->kstack_frames > pl->max_stack ? pl->kstack_frames : pl->max_stack;
	if (pl->dwarf) {
		a->sample_type |= PERF_SAMPLE_STACK_USER;
		a->sample_stack_user = sw->o->copy_bytes;
	}
	a->watermark = 1;
	a->wakeup_watermark = sw->ring_bytes / 4;
}

static size_t pow2_floor(size_t n)
{
	size_t p = 1;

	while (p * 2 <= n)
		p *= 2;
	return p;
}

/*
 * Pages per CPU ring: OFFCPU_PERF_RING_PAGES (the tests' tiny rings), else
 * --dwarf-buffer with stack copies or RING_FP_BYTES, within a share of the
 * memory split among the CPUs.  Said with -v.
 */
static size_t ring_pages(const struct switch_events *sw, const char **why)
{
	const char *env = getenv("OFFCPU_PERF_RING_PAGES");
	size_t page = sysconf(_SC_PAGESIZE), want, cap;
	struct sysinfo si;

	if (env && atoi(env) > 0) {
		*why = "OFFCPU_PERF_RING_PAGES";
		return pow2_floor(atoi(env));
	}
	want = !sw->pl->dwarf ? RING_FP_BYTES :
	       sw->o->dwarf_buffer_given ? sw->o->dwarf_buffer : RING_DWARF_BYTES;
	*why = !sw->pl->dwarf ? "callchains only" :
	       sw->o->dwarf_buffer_given ? "--dwarf-buffer per CPU" :
	       "stack copies: 16 MiB per CPU by default";
	if (!sysinfo(&si)) {
		cap = (size_t)((uint64_t)si.totalram * si.mem_unit / RING_MEM_SHARE / sw->ncpus);
		if (cap < want) {
			want = cap;
			*why = "a 32nd of the memory shared by the CPUs";
		}
	}
	want /= page;
	return pow2_floor(want < RING_MIN_PAGES ? RING_MIN_PAGES : want);
}

static int open_cpu(struct switch_events *sw, int cpu)
{
	int fd = syscall(SYS_perf_event_open, &sw->attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);

	if (fd < 0) {
		/* A CPU offline (possible, not present) has no events. */
		if (errno == ENODEV || errno == ENOENT)
			return 0;
		fprintf(stderr, "offcpu: cannot open the %s perf event on CPU %d: %s\n",
			sw->swevent ? "context-switches" : "sched_switch", cpu, strerror(errno));
		return -1;
	}
	sw->fds[cpu] = fd;
	sw->rings[cpu] = perf_ring_map(fd, sw->ring_bytes, cpu);
	return sw->rings[cpu] ? 0 : -1;
}

static int alloc_all(struct switch_events *sw)
{
	if (sw->swevent && !(sw->held = calloc(sw->ncpus, sizeof(*sw->held))))
		return -1;
	sw->fds = calloc(sw->ncpus, sizeof(int));
	for (int i = 0; sw->fds && i < sw->ncpus; i++)
		sw->fds[i] = -1;
	sw->rings = calloc(sw->ncpus, sizeof(void *));
	sw->last_switch = calloc(sw->ncpus, sizeof(uint64_t));
	sw->scratch = malloc(65536);
	sw->ips = calloc(OFFCPU_MAX_STACK + OFFCPU_KSTACK_GLUE, sizeof(uint64_t));
	return sw->fds && sw->rings && sw->last_switch && sw->scratch && sw->ips ? 0 : -1;
}

struct switch_events *switch_events_open(const struct offcpu_opts *o, const struct plan *pl,
					 const struct tracefs_sched *tp, struct stacks *stacks,
					 int ncpus, const struct switch_sink *sink)
{
	struct switch_events *sw = calloc(1, sizeof(*sw));
	size_t page = sysconf(_SC_PAGESIZE), pages;
	const char *why;

	if (sw) {
		sw->ncpus = ncpus;
		sw->swevent = !tp;
	}
	if (!sw || alloc_all(sw)) {
		fprintf(stderr, "offcpu: out of memory\n");
		switch_events_free(sw);
		return NULL;
	}
	sw->o = o;
	sw->pl = pl;
	sw->tp = tp;
	sw->stacks = stacks;
	sw->sink = *sink;
	sw->self_pid = getpid();
	pages = ring_pages(sw, &why);
	sw->ring_bytes = (pages + 1) * page;
	switch_attr(&sw->attr, sw);
	for (int cpu = 0; cpu < ncpus; cpu++)
		if (open_cpu(sw, cpu)) {
			switch_events_free(sw);
			return NULL;
		}
	if (o->wakers && !(sw->wk = switch_wakers_open(tp, &sw->attr, sw->fds, ncpus))) {
		switch_events_free(sw);
		return NULL;
	}
	if (o->verbose)
		fprintf(stderr, "perf backend rings: %d CPUs x %zu KiB (%s)\n", ncpus,
			pages * page / 1024, why);
	return sw;
}

void switch_events_free(struct switch_events *sw)
{
	struct open_block *b;

	if (!sw)
		return;
	/* The waking events first: their records go to the switch events' rings. */
	switch_wakers_free(sw->wk);
	perf_events_close(sw->fds, sw->rings, sw->ring_bytes, sw->ncpus);
	ordered_free(&sw->q);
	switch_events_drain(sw, NULL, NULL);
	u32_map_free(&sw->open, free);
	u32_set_free(&sw->exited);
	for (int cpu = 0; sw->held && cpu < sw->ncpus; cpu++)
		free(sw->held[cpu].copy);
	free(sw->held);
	while ((b = sw->free_blocks)) {
		sw->free_blocks = b->next_free;
		free(b);
	}
	free(sw->fds);
	free(sw->rings);
	free(sw->last_switch);
	free(sw->scratch);
	free(sw->ips);
	free(sw);
}
