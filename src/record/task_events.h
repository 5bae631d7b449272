/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Task events: one dummy perf event per CPU reporting COMM, MMAP2, FORK and
 * EXIT, the records synthesized from /proc for what already runs, and the
 * -p/-t/command filter that follows forks.  With -F the on-CPU sampler's
 * samples (oncpu.h) are read here too, through the filter, in the same
 * time order.
 */
#ifndef OFFCPU_TASK_EVENTS_H
#define OFFCPU_TASK_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "record/cli.h"
#include "format/perf_data.h"
#include "record/synthesis.h"

struct oncpu;
struct task_events;

/*
 * Opens the events on NCPUS CPUs.  PIDS are the tgids tracked (none: the
 * whole system).  Returns NULL after printing a one-line error.
 */
struct task_events *task_events_open(const struct offcpu_opts *o, int ncpus,
				     const uint32_t *pids, size_t nr_pids);

/* The events by CPU (-1: not opened), for the sampler's to output into. */
const int *task_events_fds(const struct task_events *te);

/* -F: ON's samples are read with the task events from now on (ON outlives TE's reads). */
void task_events_add_oncpu(struct task_events *te, struct oncpu *on);

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

/* Declares dummy:u with the ids of the CPUs that had it. */
void task_events_describe(const struct task_events *te, struct pd_writer *w);

void task_events_free(struct task_events *te);

#endif
