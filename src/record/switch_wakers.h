/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The perf backend's --wakers (issue 41): sched:sched_waking (else
 * sched_wakeup) as a second tracepoint perf event per CPU, its records
 * put into the sched_switch event's ring (PERF_EVENT_IOC_SET_OUTPUT), so
 * that the pairing's time order holds wakings and switches alike.  Its
 * sample is taken in the waker's context: the sample's pid/tid, callchain
 * and user registers with the stack copy are the waker's (its stacks named
 * by switch_events.c as a switch-out's are), the raw record's pid is the
 * wakee's tid.  A block takes the last waking of its thread seen after its
 * switch-out, as bpf/offcpu_wakers.bpf.h stores it in the thread's start.
 *
 * What differs from the BPF program: the waker's name is not in the
 * sample; it is kept per thread from the COMM and FORK records the waking
 * event asks for (in the same time order), /proc for threads older than the
 * recording.  Interrupt context comes from the raw record's common_flags
 * (the tracing flags: hardirq, serving softirq) as the BPF program reads
 * preempt_count on armhf; the interrupt functions on the kernel stack
 * decide first either way (src/record/wakers.c).
 */
#ifndef OFFCPU_SWITCH_WAKERS_H
#define OFFCPU_SWITCH_WAKERS_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/perf_event.h>

#include "offcpu.h"
#include "format/perf_data_reader.h"
#include "record/ordered.h"
#include "record/tracefs.h"

/* Private record types of the pairing queue (switch_events.c's are 0x7f00...). */
enum { REC_WAKING = 0x7f10, REC_COMM, REC_FORK };

/* A waking: WAKEE's block, if open, was ended by W (stacks named, comm not yet). */
struct waking_rec {
	struct perf_event_header h;	/* REC_WAKING */
	uint32_t wakee, cpu;
	struct offcpu_waker w;
};

/* A thread's name set (REC_COMM), or inherited at a fork (REC_FORK). */
struct name_rec {
	struct perf_event_header h;
	uint32_t tid, ptid;		/* ptid: REC_FORK's parent thread */
	char comm[16];
};

struct switch_wakers;

/*
 * Opens TP's waking event on the NCPUS CPUs with SWITCH_ATTR's sample
 * layout, its records going to the ring of FDS[cpu] (-1: CPU not opened).
 * NULL after one line on stderr.
 */
struct switch_wakers *switch_wakers_open(const struct tracefs_sched *tp,
					 const struct perf_event_attr *switch_attr,
					 const int *fds, int ncpus);

/* Whether sample S of the shared ring is a waking (else a sched_switch). */
bool switch_wakers_is_waking(const struct switch_wakers *wk, const struct pd_sample *s);

/*
 * Waking sample S as its pairing record R (no stacks yet).  Returns whether
 * stacks are wanted: the wakee may have a block of interest (not known to
 * have none), and *USER: the user stack too (a task, not an interrupt).
 */
bool switch_wakers_sample(struct switch_wakers *wk, const struct pd_sample *s,
			  struct waking_rec *r, bool *user);

/* A switch-out of TID was read: a block of interest (WANTED) or not. */
void switch_wakers_blocks(struct switch_wakers *wk, uint32_t tid, bool wanted);

/*
 * A COMM, FORK or EXIT record H of the ring queued into Q as a name_rec;
 * -1 when out of memory.
 */
int switch_wakers_task_record(struct switch_wakers *wk, const struct perf_event_header *h,
			      struct ordered_events *q);

/* In time order: name_rec H applied. */
void switch_wakers_rename(struct switch_wakers *wk, const struct perf_event_header *h);

/* In time order: W's comm, as the thread was named when it woke (tid 0: swapper/CPU). */
void switch_wakers_comm(struct switch_wakers *wk, struct offcpu_waker *w, uint32_t cpu);

void switch_wakers_stop(struct switch_wakers *wk);
void switch_wakers_free(struct switch_wakers *wk);

#endif
