/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Task events: one dummy perf event per CPU reporting COMM, MMAP2, FORK and
 * EXIT (and, with -F, the cpu-clock samples sent into the same rings), the
 * records synthesized from /proc for what already runs, and the -p/-t/command
 * filter that follows forks.
 */
#ifndef OFFCPU_TASK_EVENTS_H
#define OFFCPU_TASK_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "record/cli.h"
#include "format/perf_data.h"
#include "record/synthesis.h"

struct task_events;

/*
 * Every event of the file: software, sample ids, CLOCK_MONOTONIC like BPF.
 */
void sw_event_attr(struct perf_event_attr *a, uint64_t config, uint64_t sample_type);

/*
 * --call-graph dwarf for the -F samples: the kernel copies each sample's user
 * registers and COPY_BYTES of its stack (perf's REGS_USER and STACK_USER),
 * FN unwinds them into IP (at most MAX frames, innermost first; ENDS_STACK:
 * the copy stopped where the stack ends), and the file gets the callchain.
 */
typedef uint32_t (*uregs_unwind_fn)(void *ctx, uint32_t pid, uint32_t tid,
				    const uint64_t regs[4], const uint8_t *stack, uint32_t len,
				    bool ends_stack, uint64_t *ip, uint32_t max);
struct task_events_unwind {
	uregs_unwind_fn fn;
	void *ctx;
	uint32_t copy_bytes;
};

/*
 * Opens the events on NCPUS CPUs.  PIDS are the tgids tracked (none: the
 * whole system).  UW: NULL, or how the -F samples' user stacks are unwound
 * (copied above).  Returns NULL after printing a one-line error.
 */
struct task_events *task_events_open(const struct offcpu_opts *o, int ncpus,
				     const uint32_t *pids, size_t nr_pids,
				     const struct task_events_unwind *uw);

/* Records of the processes that already run (and the kernel's maps). */
int task_events_synthesize(struct task_events *te, const uint32_t *pids, size_t nr_pids,
			   record_fn fn, void *ctx);

/* The sample id records synthesized here carry (the first CPU's dummy event). */
uint64_t task_events_id(const struct task_events *te);

/* Everything in the rings, filtered; -1 if something could not be kept. */
int task_events_read(struct task_events *te, record_fn fn, void *ctx);

/*
 * Whether PID's records are kept: always without a filter; with one, from
 * its fork (or the start) until its last thread's exit.
 */
bool task_events_follows(const struct task_events *te, uint32_t pid);

/* The processes followed now (-p/-t/command: an exit takes them out). */
size_t task_events_followed(const struct task_events *te);

/* Records the rings overflowed (PERF_RECORD_LOST). */
uint64_t task_events_lost(const struct task_events *te);
/* -F: the on-CPU sampling starts (opened disabled). */
void task_events_sample(struct task_events *te);
/* The recording ended: samples of the wind-down would only fill the rings. */
void task_events_sample_stop(struct task_events *te);
/* -F samples their own rings lost (dwarf: the rings of the stack copies). */
uint64_t task_events_lost_samples(const struct task_events *te);

/* Declares dummy:u (and cpu-clock) with the ids of the CPUs that had them. */
void task_events_describe(struct task_events *te, struct pd_writer *w);

void task_events_free(struct task_events *te);

#endif
