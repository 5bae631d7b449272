// SPDX-License-Identifier: GPL-2.0
/* The recording's plan: each decision the options and the probe make, once. */
#include <stdlib.h>
#include <string.h>

#include <bpf/libbpf.h>

#include "offcpu.h"
#include "record/plan.h"

/* Map sizes, chosen to keep locked memory under 4 MiB by default. */
#define SPILL_MIN	64
#define RINGBUF_BYTES	(256 * 1024)
#define UCACHE_ENTRIES	4096	/* dwarf stack cache: threads (528 bytes each, allocated as used) */

static const char *no_dwarf(const struct offcpu_opts *o, const struct probe *p)
{
	if (!o->ustack)
		return "no user stacks recorded";
	if (o->unwind == UNWIND_FPTR)
		return "--call-graph fp";
	if (libbpf_num_possible_cpus() > (int)OFFCPU_DWARF_SCAN_CPU)
		return "more possible CPUs than its stack ids can name";
	if (o->unwind == UNWIND_DEFAULT && !OFFCPU_DWARF_DEFAULT)
		return "not the default on " OFFCPU_TARGET " yet (frame-pointer steps over code "
		       "without CFI; --call-graph dwarf asks for it)";
	/* The perf backend's samples carry the user registers. */
	if (p->perf_backend)
		return NULL;
	if (!p->task_pt_regs && !p->thread_size)
		return "the user registers need the kernel's task layout (BTF: the BTF-free "
		       "variant has none)";
	return NULL;
}

static const char *no_kunwind(const struct offcpu_opts *o, const struct probe *p,
			      const struct plan *pl)
{
	if (!o->unwind_in_kernel)
		return "--unwind-in user (the default)";
	if (p->perf_backend)
		return "the perf backend has no BPF program to walk them";
	if (!pl->dwarf || p->classic_tp)
		return "user stacks are not unwound with CFI";
	if (!OFFCPU_KUNWIND)
		return "not on " OFFCPU_TARGET " yet: its stacks are copied";
	if (!pl->spill)
		return "--max-stack above 64 (walked stacks are spill map keys)";
	return NULL;
}

/*
 * The kernel walker's frame loop (bpf/offcpu_unwind.bpf.h): the verifier
 * checks a bpf_loop callback once, a tail-called step of a few frames once,
 * a bounded loop frame by frame (0.5 to 1 s more start-up).  The loader
 * falls back to the bounded loop where the tail calls do not load (arm64's
 * JIT before 6.0 refuses them beside bpf-to-bpf calls, for one).
 * OFFCPU_KWALKER=bpf_loop|tail|bounded forces one, for the tests to compare
 * the walkers on one kernel.
 */
static void plan_kwalk(struct plan *pl, const struct probe *p)
{
	static const struct { const char *name, *why; } forced[] = {
		[KWALK_LOOP] = { "bpf_loop", "bpf_loop, forced by OFFCPU_KWALKER=bpf_loop" },
		[KWALK_TAIL] = { "tail", "tail calls, forced by OFFCPU_KWALKER=tail" },
		[KWALK_BOUNDED] = { "bounded", "bounded loop, forced by OFFCPU_KWALKER=bounded" },
	};
	const char *force = getenv("OFFCPU_KWALKER");

	if (force && *force) {
		for (int i = 0; i < (int)(sizeof(forced) / sizeof(forced[0])); i++)
			if (!strcmp(force, forced[i].name)) {
				pl->kwalk = i;
				pl->kwalk_why = forced[i].why;
				pl->kwalk_forced = true;
				return;
			}
		pl->kwalk_bad = force;
	}
	pl->kwalk = KWALK_TAIL;
	if (!p->bpf_loop)
		pl->kwalk_why = "tail calls, each step's frames verified once "
				"(no bpf_loop: 5.17+)";
	else if (!p->jit)
		pl->kwalk_why = "tail calls, each step's frames verified once "
				"(bpf_loop's callback needs the BPF JIT)";
	else
		pl->kwalk = KWALK_LOOP;
	if (pl->kwalk == KWALK_LOOP)
		pl->kwalk_why = "bpf_loop, one frame step verified once (bpf_loop: yes)";
}

/* A stack id is a bucket: the kernel rounds the entries up to a power of two. */
static size_t buckets(size_t entries)
{
	size_t n = 1;

	while (n < entries)
		n <<= 1;
	return n;
}

static uint32_t min_u32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

/*
 * Stacks of at most OFFCPU_SPILL_FRAMES frames all go to the maps keyed by
 * their frames (the "spill" maps), never to the stack maps: reading a stack
 * map bucket from user space (bpf_stackmap_copy) empties the bucket for a
 * moment, a colliding stack walked on another CPU meanwhile takes the bucket
 * and its id, and the copy then puts the old stack back: that id names
 * another stack for the rest of the run.  Found by the per-function truth
 * checks in QEMU with 4-entry maps (a pipe reader's whole time under the
 * sleeper's stack).  Hash map lookups from user space have no such window.
 */
static void plan_sizes(struct plan *pl, const struct offcpu_opts *o)
{
	uint32_t spill = o->stack_entries < SPILL_MIN ? SPILL_MIN : o->stack_entries;

	/*
	 * A kernel stack taken in the program starts with the program and the
	 * tracepoint glue above __schedule (stacks.c cuts them): walk that much
	 * more than --max-stack, so a small one keeps the thread's own frames,
	 * within the kernel's perf_event_max_stack (127 by default).
	 */
	pl->max_stack = o->max_stack;
	pl->kstack_frames = min_u32(o->max_stack + OFFCPU_KSTACK_GLUE, OFFCPU_MAX_STACK);
	pl->kspill_frames = min_u32(pl->kstack_frames, OFFCPU_SPILL_FRAMES);
	pl->ustack_entries = o->ustack && !pl->spill ? o->stack_entries : 1;
	pl->kstack_entries = pl->kstack && !pl->spill ? o->stack_entries : 1;
	pl->stack_ids = buckets(pl->ustack_entries > pl->kstack_entries ?
				pl->ustack_entries : pl->kstack_entries);
	pl->ustack_spill_entries = o->ustack && pl->spill ? spill : 1;
	pl->kstack_spill_entries = pl->kstack && pl->spill ? spill : 1;
	pl->ucache_entries = pl->dwarf && pl->stack_cache ? UCACHE_ENTRIES : 1;
	pl->ku_rows = pl->kunwind ? o->unwind_rows : 1;
	/* dwarf: the copies share the ring with the long blocks, which must follow them. */
	pl->ring_bytes = pl->dwarf && o->dwarf_buffer > RINGBUF_BYTES ? o->dwarf_buffer :
		RINGBUF_BYTES;
}

void plan_resolve(struct plan *pl, const struct offcpu_opts *o, const struct probe *p)
{
	*pl = (struct plan){ 0 };
	pl->no_dwarf = no_dwarf(o, p);
	pl->dwarf = !pl->no_dwarf;
	/* Spilled stacks are map keys, and a key holds at most OFFCPU_SPILL_FRAMES. */
	pl->spill = o->max_stack <= OFFCPU_SPILL_FRAMES && !p->perf_backend;
	pl->no_kunwind = no_kunwind(o, p, pl);
	pl->kunwind = !pl->no_kunwind;
	if (pl->kunwind)
		plan_kwalk(pl, p);
	/*
	 * Frame pointers: the key needs bpf_task_pt_regs.  dwarf: user space checks
	 * every stack word a reuse depends on, wherever the registers came from.
	 */
	pl->stack_cache = o->ustack && o->stack_cache != STACK_CACHE_OFF &&
			  (p->task_pt_regs || pl->dwarf) && !p->perf_backend;
	/* --wakers walks the waker's kernel stack even with --call-graph user. */
	pl->kstack = o->kstack || o->wakers;
	plan_sizes(pl, o);
}
