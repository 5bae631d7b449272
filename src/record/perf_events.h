/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The recorder's own perf events: the attr every event of the file shares,
 * and their per-CPU rings, mapped and read (task_events' dummy events, the
 * on-CPU sampler's cpu-clock events).
 */
#ifndef OFFCPU_PERF_EVENTS_H
#define OFFCPU_PERF_EVENTS_H

#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>

#include "format/perf_data.h"

/*
 * Every event of the file: software, sample ids, CLOCK_MONOTONIC like BPF.
 */
void sw_event_attr(struct perf_event_attr *a, uint64_t config, uint64_t sample_type);

/* perf_regs indexes of pc, sp, frame pointer, link register (-1: none), from board/. */
#define PERF_UREGS_MAX	4
extern const int perf_uregs[PERF_UREGS_MAX];

/* sample_regs_user: those of perf_uregs the board has. */
uint64_t perf_uregs_mask(void);

/* A ring of BYTES (a power of two pages and one) for event FD; NULL after a message. */
void *perf_ring_map(int fd, size_t bytes, int cpu);

/*
 * FN for every record of the ring META, in order (one that wrapped around
 * the ring's end reassembled in SCRATCH, 64 KiB); returns the records its
 * PERF_RECORD_LOSTs say were lost.
 */
typedef void (*perf_ring_fn)(void *ctx, const struct perf_event_header *h);
uint64_t perf_ring_read(struct perf_event_mmap_page *meta, void *scratch,
			perf_ring_fn fn, void *ctx);

/*
 * Declares the event NAME of attr A with the ids (IDS, by CPU) of the CPUs
 * whose event opened (FDS[cpu] >= 0).  Each rotated file declares them again.
 */
void perf_events_describe(struct pd_writer *w, const char *name, const struct perf_event_attr *a,
			  const int *fds, const uint64_t *ids, int ncpus);

/* Unmaps and closes NCPUS events FDS (-1: none; NULL: not allocated) and their RINGS of BYTES. */
void perf_events_close(const int *fds, void *const *rings, size_t bytes, int ncpus);

#endif
