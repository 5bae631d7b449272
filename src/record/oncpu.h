/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The on-CPU sampler (-F): one cpu-clock event per CPU, its samples sent
 * into that CPU's task events ring (task_events reads them with the task
 * events, in one time order, through its filter), or with --call-graph
 * dwarf into rings of their own, each sample's user stack copy unwound
 * here into its callchain.
 */
#ifndef OFFCPU_ONCPU_H
#define OFFCPU_ONCPU_H

#include <stdbool.h>
#include <stdint.h>

#include "format/perf_data.h"
#include "record/cli.h"
#include "record/perf_events.h"

struct oncpu;

/*
 * --call-graph dwarf for the -F samples: the kernel copies each sample's user
 * registers and COPY_BYTES of its stack (perf's REGS_USER and STACK_USER),
 * FN unwinds them into IP (at most MAX frames, innermost first; ENDS_STACK:
 * the copy stopped where the stack ends), and the file gets the callchain.
 */
typedef uint32_t (*uregs_unwind_fn)(void *ctx, uint32_t pid, uint32_t tid,
				    const uint64_t regs[4], const uint8_t *stack, uint32_t len,
				    bool ends_stack, uint64_t *ip, uint32_t max);
struct oncpu_unwind {
	uregs_unwind_fn fn;
	void *ctx;
	uint32_t copy_bytes;
};

/*
 * Opens the cpu-clock events (disabled) on the NCPUS CPUs whose task events
 * opened (DUMMY_FDS, -1: none), their samples output into those events'
 * rings; UW: NULL, or how the samples' user stacks are unwound (into rings
 * of their own, then).  Returns NULL after printing a one-line error.
 */
struct oncpu *oncpu_open(const struct offcpu_opts *o, int ncpus, const int *dummy_fds,
			 const struct oncpu_unwind *uw);

/* FN for each record of CPU's own ring (dwarf), if it has one. */
void oncpu_read(struct oncpu *on, int cpu, perf_ring_fn fn, void *ctx);

/*
 * The time and pid of the sample H as the kernel wrote it (pd_parse_sample's
 * reading of the event opened); -1 if it is malformed.
 */
int oncpu_sample_head(const struct oncpu *on, const struct perf_event_header *h,
		      uint64_t *time, uint32_t *pid);

/*
 * The sample H as the file gets it: with dwarf, rewritten without its
 * register and stack copies, its user frames unwound (valid until the next
 * call); else H.  NULL if it is malformed (dropped).
 */
const struct perf_event_header *oncpu_sample(struct oncpu *on, const struct perf_event_header *h);

/* The sampling starts (opened disabled). */
void oncpu_start(struct oncpu *on);
/* The recording ended: samples of the wind-down would only fill the rings. */
void oncpu_stop(struct oncpu *on);
/* Samples their own rings lost (dwarf: the rings of the stack copies). */
uint64_t oncpu_lost(const struct oncpu *on);

/* Declares cpu-clock with the ids of the CPUs that had it. */
void oncpu_describe(const struct oncpu *on, struct pd_writer *w);

void oncpu_free(struct oncpu *on);

#endif
