/* SPDX-License-Identifier: GPL-2.0 */
/* What a recording tells on stderr: start lines, files written, the end-of-run summary. */
#ifndef OFFCPU_SUMMARY_H
#define OFFCPU_SUMMARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "record/cli.h"
#include "record/collector.h"
#include "record/plan.h"
#include "record/rotation.h"

/* The summary lines, at the end of the recording: MISSED program runs the kernel skipped. */
void summary_print(const struct offcpu_opts *o, const struct plan *pl,
		   const struct collector_stats *st, uint64_t missed,
		   const struct rotation *rot);

/* How user stacks are unwound, and why not by CFI: -v, or one line when dwarf was asked for. */
void summary_unwinding(const struct offcpu_opts *o, const struct plan *pl);

/* -v: what the flight recorder keeps, in how much memory, and what writes a file. */
void summary_flight(const struct offcpu_opts *o);

/* -v: one line for the file NAME, as it is closed (WHY: a flight recorder's reason, or NULL). */
void summary_file(const char *name, const struct collector_file *f, const char *why);

#endif
