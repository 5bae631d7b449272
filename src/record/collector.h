/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reads the two streams of a recording — BPF off-CPU records (ring buffer
 * and the drained sums map) and the per-CPU dummy perf events that report
 * COMM/MMAP2/FORK/EXIT — turns BPF records into PERF_RECORD_SAMPLEs and
 * hands everything to the perf.data writer in time order, with
 * FINISHED_ROUND between batches.
 */
#ifndef OFFCPU_COLLECTOR_H
#define OFFCPU_COLLECTOR_H

#include <stdbool.h>
#include <stdint.h>

#include "record/blocked.h"
#include "record/cli.h"
#include "record/loader.h"
#include "record/stacks.h"
#include "offcpu.h"
#include "format/perf_data.h"
#include "unwind/unwind.h"
#include "unwind/ktables.h"

struct collector;

/* One file of the recording (--switch-output: each rotated file). */
struct collector_file {
	uint64_t start, end;		/* CLOCK_MONOTONIC ns; start 0: the recording's */
	uint64_t samples;		/* PERF_RECORD_SAMPLEs written into it */
	uint64_t bytes;			/* its data section */
	uint64_t lost;			/* samples lost in the kernel while it was written */
	uint64_t blocked_threads;	/* offcpu-blocked samples: blocked at its end */
	uint64_t blocked_ns;		/* their time inside it */
};

struct collector_stats {
	uint64_t samples;		/* PERF_RECORD_SAMPLEs written */
	uint64_t direct;		/* of which long blocks sent at once */
	uint64_t records;		/* all records written */
	uint64_t lost_task_events;	/* dummy ring buffer overflows */
	uint64_t lost_oncpu;		/* -F samples lost by their own rings (dwarf) */
	uint64_t counters[COUNTER_MAX];	/* kernel-side drops, then stack cache counts */
	uint64_t bytes;			/* of every file */
	struct collector_file last;	/* the last file (the only one without rotation) */
	const struct unwind_counts *unwind;	/* dwarf: how copies were unwound, else NULL */
	const struct ktables_counts *ktables;	/* --unwind-in kernel: rows loaded, else NULL */
	uint64_t verify_copies;		/* --unwind-in verify: walked stacks copied to compare */
	uint64_t blocked_threads;	/* still blocked at the end: offcpu-blocked samples */
	uint64_t blocked_ns;		/* their time inside the recording */
	uint64_t blocked_ran;		/* open blocks of threads that ran before the end: none */
	/* --flight-recorder */
	uint64_t flight_seen;		/* samples that entered the window */
	uint64_t flight_capped;		/* of those pushed out by the memory cap before their time */
	uint64_t flight_triggers;	/* blocks of --trigger-block that passed the filters */
	uint64_t flight_merged;		/* of those inside a file already waited for */
	uint64_t flight_from_sums;	/* such blocks the full ring summed, found alone in a sum */
	uint64_t flight_peak;		/* the most bytes the window held */
	uint64_t flight_left;		/* its bytes at the end, not written */
	/* The tables a long recording keeps, at the end (-v: they do not grow) */
	const char *kernel_cut;	/* -v: how __schedule was found, NULL: no kernel stack */
	const char *waker_ranges;	/* -v: how --wakers found its functions, NULL: did not */
	struct stacks_tables tables;
	size_t live_threads, live_procs;	/* rotation, flight recorder: named in a new file */
	size_t followed;		/* -p/-t/command: processes followed */
};

/* --flight-recorder: the block that triggered a file (time 0: none, SIGUSR2). */
struct collector_trigger {
	uint64_t time;		/* the block's end, CLOCK_MONOTONIC ns */
	uint64_t due;		/* when its file is written (--trigger-after) */
	uint64_t block_ns;
	uint32_t pid, tid;
	char comm[16];		/* the thread's, read when the block ended */
};

/* Samples lost in the kernel (a full ring buffer sums its blocks instead). */
static inline uint64_t collector_lost(const struct collector_stats *st)
{
	return st->counters[DROP_SUMS] + st->counters[DROP_UNSEEN] + st->counters[STAT_PERF_LOST];
}

/*
 * Opens the dummy events and the ring buffer and synthesizes the records of
 * existing processes.  PIDS are the tgids tracked for -p/-t/command (empty:
 * whole system).  Returns NULL after printing a one-line error.
 */
struct collector *collector_start(struct pd_writer *w, struct loader *ld,
				  const struct offcpu_opts *o,
				  const uint32_t *pids, size_t nr_pids);

/* -F: on-CPU sampling starts now, with the recording proper. */
void collector_sample(struct collector *c);

/* Poll both streams for up to TIMEOUT_MS and write what is old enough. */
int collector_poll(struct collector *c, int timeout_ms);

/* A running recording's figures, for the status line. */
struct collector_progress {
	uint64_t samples;	/* written so far (the last ~2 s are still queued) */
	uint64_t lost;		/* as collector_lost() counts them, so far */
	uint64_t bytes;		/* of the data section so far */
	uint64_t queued;	/* of the records held for time order, bound for it */
};

void collector_progress(struct collector *c, struct collector_progress *p);

/*
 * The recording ends now (before the programs are detached, which can take
 * a while): threads still blocked are measured up to here.
 */
void collector_end(struct collector *c);

/*
 * --switch-output: the current file ends now.  Everything up to now goes
 * into it (the rings read, the sums drained), threads blocked now get an
 * offcpu-blocked sample for their time inside it (the rest of their block
 * is written where it ends), and its events and build-ids are declared.
 * NEXT then takes what follows, starting with the COMM and maps of every
 * live process.  Returns the finished writer for the caller to give its
 * features and name and close; *DONE: its figures.
 */
struct pd_writer *collector_switch(struct collector *c, struct pd_writer *next,
				   struct collector_file *done);

/*
 * --flight-recorder: the records of the last SECS are held in memory, not
 * written.  A block of --trigger-block asks for a file, due --trigger-after
 * later (another trigger meanwhile joins it).  collector_flight_dump writes
 * the window into W: the COMM and maps of every process alive at its
 * start, its records (up to now: the rings read, the sums drained), the
 * threads blocked now as offcpu-blocked samples (split as at a switch);
 * the window up to SECS before the trigger (or now: SIGUSR2), never before
 * the last file's end, so no record is written twice.  *WHY: the trigger.
 * After collector_finish it writes what the end left.
 */
bool collector_flight_due(const struct collector *c, uint64_t now);
bool collector_flight_waiting(const struct collector *c);
int collector_flight_dump(struct collector *c, struct pd_writer *w, struct collector_file *done,
			  struct collector_trigger *why);

/*
 * Read everything left, drain the sums, write it all and the features
 * (--flight-recorder: into the window).
 */
int collector_finish(struct collector *c, struct collector_stats *st);

void collector_free(struct collector *c);

#endif
