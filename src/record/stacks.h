/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Stack ids to frames.  With --call-graph dwarf, user stack ids name copies
 * of the stack that unwind.c turns into frames as they arrive.  The BPF program stores each stack once, in the stack
 * maps (id = bucket) or, when a bucket collided, in the spill maps (keyed by
 * the frames, id with OFFCPU_SPILL_ID set); samples carry only the ids.
 * Read from the maps once per id and cached: nothing deletes a stack during
 * a recording.  Kernel stacks start at __schedule.
 */
#ifndef OFFCPU_STACKS_H
#define OFFCPU_STACKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "record/loader.h"
#include "offcpu.h"
#include "unwind/unwind.h"

struct stack {
	uint32_t nr;
	uint64_t ip[];
};

struct stacks;

/* NULL when out of memory.  TABLE_BUDGET: bytes of CFI tables (--call-graph dwarf). */
struct stacks *stacks_new(const struct loader *ld, size_t table_budget, uint32_t copy_bytes);

/*
 * The perf backend's stacks (src/record/switch_events.c): no map holds
 * them, the callchains and unwound copies are kept here, each distinct
 * stack once, under an id with this bit (neither a spill nor a dwarf id's)
 * for the whole run: blocks with the same stack get the same id, so
 * their sums meet under one key as they do in the BPF sums map.
 */
#define STACKS_TABLE_ID		0x10000000

/*
 * The id of the N frames IP (KERNEL: cut above __schedule), added if new;
 * at most --max-stack frames kept.  < 0 when out of memory.
 */
int32_t stacks_table_put(struct stacks *s, const uint64_t *ip, uint32_t n, bool kernel);

/* The frames of user or KERNEL stack ID, or NULL (no stack, or unreadable). */
const struct stack *stacks_get(struct stacks *s, int32_t id, bool kernel);

/*
 * --call-graph dwarf: unwinds copy C (SIZE bytes as received), keeps the
 * frames under its id (until stacks_done without the stack cache) and
 * writes the thread's stack cache entry; -1 when out of memory.
 */
int stacks_add_copy(struct stacks *s, const struct offcpu_ucopy *c, size_t size);

/*
 * The one block of user stack ID was written: the frames of a dwarf id
 * never cached go (a cached one goes once it leaves the cache).
 */
void stacks_done(struct stacks *s, int32_t id);

/*
 * Thread TID exited: the id its stack cache entry held retires, and the
 * entry goes; -1 when out of memory.
 */
int stacks_forget_tid(struct stacks *s, uint32_t tid);

/*
 * Around each drain of the sums map: the cached ids retired before it
 * began are freed after it (a sum of blocks that reused one is drained).
 */
void stacks_drain_begin(struct stacks *s);
void stacks_drain_end(struct stacks *s);

/* What the tables of a long recording hold, and held at most (-v). */
struct stacks_tables {
	size_t ids, ids_peak;		/* dwarf ids with their frames */
	size_t stacks, stacks_peak;	/* distinct unwound stacks they name */
	size_t cached, cached_peak;	/* threads with a stack cache entry */
	size_t procs;			/* processes whose maps the unwinder holds */
};
const struct stacks_tables *stacks_tables(struct stacks *s);

/* How __schedule's range, where kernel stacks are cut, was found (-v), or NULL: no kernel stack yet. */
const char *stacks_kernel_cut(const struct stacks *s);

/* Process PID exited: what is kept of its maps goes at a later drain. */
void stacks_forget_pid(struct stacks *s, uint32_t pid);

/*
 * Process PID forked from PPID at TIME (a FORK record's), or exec'ed at
 * TIME (a COMM record's): its stacks are unwound with its new maps, kept
 * for copies unwound once the process is gone.  Called when the record
 * is read, before the copies taken after it are unwound.
 */
void stacks_fork_pid(struct stacks *s, uint32_t pid, uint32_t ppid, uint64_t time);
void stacks_exec_pid(struct stacks *s, uint32_t pid, uint64_t time);

/* Task records were lost: the unwinder's views of forks and execs may lack mappings. */
void stacks_records_lost(struct stacks *s);
/* Whether copy C's address space is known: else the task records before it are wanted. */
bool stacks_knows_copy(const struct stacks *s, const struct offcpu_ucopy *c);

struct perf_event_header;

/* An MMAP2 record at TIME: a file mapped after that fork or exec. */
void stacks_note_mmap(struct stacks *s, const struct perf_event_header *rec, uint64_t time);

/*
 * --call-graph dwarf for a -F sample: REGS (pc, sp, frame pointer, link
 * register) and LEN bytes of stack from sp, copied by the kernel, unwound
 * into IP (at most MAX frames); 0 without an unwinder.  The on-CPU
 * sampler's unwind callback (oncpu.h; CTX: the stacks).
 */
uint32_t stacks_unwind_regs(void *ctx, uint32_t pid, uint32_t tid, const uint64_t regs[4],
			    const uint8_t *stack, uint32_t len, bool ends_stack, uint64_t *ip,
			    uint32_t max);

/* --stack-cache verify with dwarf: reuses whose stack was not the unwound one. */
uint64_t stacks_wrong_reuses(const struct stacks *s);

/* How the copies were unwound (NULL without --call-graph dwarf). */
const struct unwind_counts *stacks_unwind_counts(const struct stacks *s);

void stacks_free(struct stacks *s);

#endif
