/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The perf backend (issue 41): off-CPU time without BPF.  sched:sched_switch
 * is opened as a perf event on every CPU; each switch-out sample carries the
 * thread's state (the tracepoint's raw record), its kernel callchain and its
 * user stack (callchain, or registers and a stack copy unwound here with
 * CFI).  Switch-ins come from the same records (next_pid) and from
 * PERF_RECORD_SWITCH_CPU_WIDE (some sched_switch samples never arrive,
 * those with the idle task among them on 6.18).  The records of all CPUs are
 * put in time order (ordered.c) and paired here per thread with the BPF
 * program's rules (bpf/offcpu_common.bpf.h, offcpu_tp.bpf.c): a block of
 * --off-cpu-thresh or more becomes one event at once, shorter ones are summed
 * per (thread, stacks, state) until the collector drains the sums.
 *
 * --wakers: sched_waking perf events into the same rings, src/record/switch_wakers.h.
 *
 * Where tracefs has no sched_switch, the context-switch software event
 * (PERF_COUNT_SW_CONTEXT_SWITCHES) takes its place: the same sample in the
 * same context (prev's), without the raw record.  The switch-out record perf
 * writes right after it tells a preemption from a block (4.17+), not S from
 * D: its blocks have both states (--state is refused), and a thread's last
 * switch-out, after its PERF_RECORD_EXIT, is not one.
 */
#ifndef OFFCPU_SWITCH_EVENTS_H
#define OFFCPU_SWITCH_EVENTS_H

#include <stdbool.h>
#include <stdint.h>

#include "offcpu.h"
#include "record/blocked.h"
#include "record/cli.h"
#include "record/plan.h"
#include "record/stacks.h"
#include "record/tracefs.h"

struct switch_events;

/* Where paired blocks go: the collector. */
struct switch_sink {
	/* A block of at least the threshold, ended at e->time; W: its waker (--wakers), else NULL. */
	int (*block)(void *ctx, const struct offcpu_event *e, const struct offcpu_waker *w);
	/* -p and a command: whether PID's blocks are wanted (forks followed). */
	bool (*follows)(void *ctx, uint32_t pid);
	/* Read the task records now (a fork or exec the filter or unwinder lacks). */
	void (*refresh)(void *ctx);
	void *ctx;
};

/*
 * Opens sched_switch (TP's id and layout; NULL: the context-switch software
 * event) on the NCPUS CPUs, enabled; user stacks unwound by STACKS (with
 * PL->dwarf).  NULL after one line on stderr.
 */
struct switch_events *switch_events_open(const struct offcpu_opts *o, const struct plan *pl,
					 const struct tracefs_sched *tp, struct stacks *stacks,
					 int ncpus, const struct switch_sink *sink);

/* Waits up to TIMEOUT_MS for a ring to fill a quarter; -1 on error (EINTR included). */
int switch_events_poll(struct switch_events *sw, int timeout_ms);

/*
 * Reads every ring and pairs the records up to UPTO (CLOCK_MONOTONIC ns;
 * newer ones wait for the other CPUs' to arrive).  -1 when out of memory.
 */
int switch_events_read(struct switch_events *sw, uint64_t upto);

/* The recording ends: no switch is recorded after this. */
void switch_events_stop(struct switch_events *sw);

/*
 * The short blocks summed so far, handed to FN (the collector's add_sum or,
 * --wakers, add_wsum: KEY is a struct offcpu_wkey, its waker zero without)
 * and forgotten.
 */
typedef int (*switch_sum_fn)(void *ctx, const void *key, const struct offcpu_val *v);
int switch_events_drain(struct switch_events *sw, switch_sum_fn fn, void *ctx);

/*
 * Every thread still blocked at END (its switch-in not seen): FN as
 * blocked_scan_end calls it (threads gone are skipped).
 */
int switch_events_blocked(struct switch_events *sw, uint64_t end, blocked_fn fn, void *ctx,
			  uint64_t *ran);

/* Its counters (enum offcpu_drop, offcpu_stat), as the BPF counters map holds them. */
const uint64_t *switch_events_counters(const struct switch_events *sw);

void switch_events_free(struct switch_events *sw);

#endif
