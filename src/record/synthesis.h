/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Synthesizes the records perf needs to name and symbolize processes that
 * already exist when recording starts: COMM and MMAP2 per process (read from
 * /proc), and the kernel's MMAP for kernel callchains.  Like perf record's
 * synthesis, these carry time 0 so they sort before every sample.
 */
#ifndef OFFCPU_SYNTHESIS_H
#define OFFCPU_SYNTHESIS_H

#include <stdint.h>
#include <linux/perf_event.h>

#include "format/perf_records.h"

/* Receives each synthesized record; returns 0 or -1 to stop. */
typedef int (*record_fn)(void *ctx, const struct perf_event_header *rec, uint64_t time);

/* One process (all its threads) or, with PID 0, every process. */
int proc_sync_pid(uint32_t pid, uint64_t id, record_fn fn, void *ctx);
int proc_sync_all(uint64_t id, record_fn fn, void *ctx);

/* MMAP of [kernel.kallsyms]_text (needs /proc/kallsyms addresses). */
int proc_sync_kernel(uint64_t id, record_fn fn, void *ctx);

/* COMM of thread TID of process PID (time 0). */
int proc_comm_emit(uint32_t pid, uint32_t tid, const char *comm, uint64_t id, record_fn fn,
		   void *ctx);

/* MMAP2 of LINE through FN if it is an executable mapping; FN's result. */
int proc_maps_line_emit(uint32_t pid, uint64_t id, const char *line, record_fn fn, void *ctx);

#endif
