/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The live status line of a recording on a terminal: elapsed time, samples,
 * lost samples, data size, redrawn in place at most twice a second.  Only
 * when stderr is a TTY, so logs and pipes never get it; cleared at the end,
 * before the summary.
 */
#ifndef OFFCPU_STATUS_H
#define OFFCPU_STATUS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "record/collector.h"

#define STATUS_INTERVAL_NS	500000000ull	/* at most twice a second */

struct status {
	FILE *out;		/* NULL: not a terminal, nothing shown */
	uint64_t start, next;	/* CLOCK_MONOTONIC ns */
	size_t shown;		/* length of the line on screen */
};

/* Shows the line on OUT only when it is a terminal; START: the recording's start. */
void status_init(struct status *s, FILE *out, uint64_t start);

/* Redraws the line when STATUS_INTERVAL_NS has passed since the last time. */
void status_update(struct status *s, struct collector *c, uint64_t now);

/* Blanks the line and leaves the cursor at its start. */
void status_end(struct status *s);

#endif
