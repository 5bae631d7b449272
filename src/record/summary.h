/* SPDX-License-Identifier: GPL-2.0 */
/* What a recording tells on stderr: start lines, files written, the end-of-run summary. */
#ifndef OFFCPU_SUMMARY_H
#define OFFCPU_SUMMARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "record/cli.h"
#include "record/collector.h"
#include "record/probe.h"

/*
 * --switch-output: the files written, named as perf names them, and the
 * newest --switch-max-files of them kept.
 */
struct rotation {
	char first[4200], last[4200];	/* the first and last file written */
	char **kept;			/* oldest first */
	size_t nr_kept;
	uint64_t files, removed;
	uint64_t next_time;		/* SWITCH_TIME: CLOCK_MONOTONIC ns */
	bool max_size_hit;
	uint64_t triggered, signalled;	/* --flight-recorder: files by a trigger, by SIGUSR2 */
	uint64_t ended_unwritten;	/* its window's bytes at the end, when no file was due */
};

/* The summary lines, at the end of the recording: MISSED program runs the kernel skipped. */
void summary_print(const struct offcpu_opts *o, const struct probe *p,
		   const struct collector_stats *st, uint64_t missed,
		   const struct rotation *rot);

/* How user stacks are unwound, and why not by CFI: -v, or one line when dwarf was asked for. */
void summary_unwinding(const struct offcpu_opts *o, const struct probe *p);

/* -v: what the flight recorder keeps, in how much memory, and what writes a file. */
void summary_flight(const struct offcpu_opts *o);

/* -v: one line for the file NAME, as it is closed (WHY: a flight recorder's reason, or NULL). */
void summary_file(const char *name, const struct collector_file *f, const char *why);

#endif
