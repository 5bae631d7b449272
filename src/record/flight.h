/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The flight recorder's window (--flight-recorder): the records of the last
 * seconds, in the order the time-ordered queue hands them out, kept in one
 * buffer allocated once at its cap.  So the memory they take is bounded by
 * construction: a record that does not fit pushes the oldest out (counted),
 * whatever their age.  Each entry is a small header (its time and size)
 * and a copy of the record; an entry never wraps around the buffer's end
 * (a short header marks the skipped tail), so a record is read in place.
 */
#ifndef OFFCPU_FLIGHT_H
#define OFFCPU_FLIGHT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>

struct flight {
	uint8_t *buf;
	size_t cap;		/* bytes of buf */
	size_t head, tail;	/* the oldest entry, where the next one goes */
	size_t nr;		/* entries held */
	uint64_t bytes;		/* of the entries held (headers included) */
	uint64_t peak;		/* the most bytes held at once */
};

/* CAP bytes at most (at least 64 KiB); -1 when out of memory. */
int flight_init(struct flight *f, size_t cap);

/*
 * Copies REC of TIME in.  When it does not fit, the oldest entries go
 * first, each through EVICT (it may read the record, not keep it); a
 * record larger than the whole buffer is refused (returns 1).
 */
typedef void (*flight_evict_fn)(void *ctx, const struct perf_event_header *rec);
int flight_push(struct flight *f, const struct perf_event_header *rec, uint64_t time,
		flight_evict_fn evict, void *ctx);

/* The oldest entry's time; false when empty. */
bool flight_oldest(const struct flight *f, uint64_t *time);

/* Removes the oldest entry, through EVICT. */
void flight_pop(struct flight *f, flight_evict_fn evict, void *ctx);

/* FN for each entry, oldest first; stops at FN's first non-zero return. */
int flight_each(const struct flight *f,
		int (*fn)(void *ctx, const struct perf_event_header *rec), void *ctx);

void flight_free(struct flight *f);

#endif
