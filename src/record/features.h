/* SPDX-License-Identifier: GPL-2.0 */
/* The perf.data feature sections a recording writes, as perf record does. */
#ifndef OFFCPU_FEATURES_H
#define OFFCPU_FEATURES_H

#include "format/perf_data.h"
#include "record/cli.h"

/* Host, kernel, CPUs, memory, command line and clocks, just before W closes. */
void features_set(struct pd_writer *w, const struct offcpu_opts *o);

#endif
