/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The files a recording writes besides its one output: --switch-output's
 * rotated files (named as perf names them, the newest --switch-max-files
 * kept), the end --max-size puts to them, and the flight recorder's files
 * (its window is the collector's, src/record/flight.c; a file of it is
 * written here, when a trigger or SIGUSR2 asks).  Between two polls of the
 * session's loop.
 */
#ifndef OFFCPU_ROTATION_H
#define OFFCPU_ROTATION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "format/perf_data.h"
#include "record/cli.h"
#include "record/collector.h"
#include "record/status.h"

struct rotation {
	const struct offcpu_opts *o;
	struct collector *c;
	uint64_t end;			/* -d: when the recording ends (CLOCK_MONOTONIC ns) */
	int err;			/* a file could not be written */
	char first[4200], last[4200];	/* the first and last file written */
	char **kept;			/* oldest first */
	size_t nr_kept;
	uint64_t files, removed;
	uint64_t next_time;		/* SWITCH_TIME: CLOCK_MONOTONIC ns */
	bool max_size_hit;
	uint64_t triggered, signalled;	/* --flight-recorder: files by a trigger, by SIGUSR2 */
	uint64_t ended_unwritten;	/* its window's bytes at the end, when no file was due */
};

/* SIGUSR2's handler: a file now (--switch-output=signal, --flight-recorder), else nothing. */
void rotation_on_signal(int sig);

/* The recording of the collector C starts at START and ends at END (CLOCK_MONOTONIC ns). */
void rotation_start(struct rotation *r, const struct offcpu_opts *o, struct collector *c,
		    uint64_t start, uint64_t end);

/*
 * --switch-output and --max-size, between two polls: *W is the file being
 * written (a new one after a switch); false ends the recording (R->err set
 * when a file could not be written).  LINE: the status line, cleared first.
 */
bool rotation_go_on(struct rotation *r, struct pd_writer **w, struct status *line);

/* --flight-recorder, between two polls: a file at SIGUSR2 or when one is due. */
bool rotation_flight_go_on(struct rotation *r, struct status *line);

/* A flight recorder's file, now (F: its figures); -1 stops the recording. */
int rotation_flight_dump(struct rotation *r, struct collector_file *f);

/*
 * Features, its name, close: a finished file W of a rotated recording (W is
 * freed); F its figures, WHY a flight recorder's reason or NULL (-v).
 */
int rotation_close(struct rotation *r, struct pd_writer *w, const struct collector_file *f,
		   const char *why);

void rotation_free(struct rotation *r);

#endif
