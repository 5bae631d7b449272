/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The processes alive at this point of the recording, as its records
 * describe them (--switch-output).  A rotated file must name every process
 * alive in it, also those that started files ago: perf's own rotated files
 * lack them (the reason for its --tail-synthesize).  Reading /proc again at
 * a switch would miss a process that exited between the switch and the
 * read, and name one that exec'ed meanwhile by its new program; the records
 * already written say exactly what was alive at the switch.  So every
 * record written goes through here (COMM, MMAP/MMAP2, FORK, EXIT), and a
 * new file starts with the COMM of every live thread and the maps of every
 * live process, stamped 0 like perf's synthesized records.
 */
#ifndef OFFCPU_LIVE_TASKS_H
#define OFFCPU_LIVE_TASKS_H

#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>

#include "record/synthesis.h"

struct live_tasks;

struct live_tasks *live_tasks_new(void);

/* Follows one written record (others are ignored); -1 when out of memory. */
int live_tasks_note(struct live_tasks *lt, const struct perf_event_header *rec);

/* A COMM per live thread, then each live process's maps, through FN (time 0). */
int live_tasks_emit(const struct live_tasks *lt, uint64_t id, record_fn fn, void *ctx);

/* The threads and processes it holds (an exit takes them out). */
void live_tasks_count(const struct live_tasks *lt, size_t *threads, size_t *procs);

void live_tasks_free(struct live_tasks *lt);

#endif
