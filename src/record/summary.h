/* SPDX-License-Identifier: GPL-2.0 */
/* The end-of-run summary of a recording (stderr). */
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

#endif
