/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The time-ordered queue (after perf's util/ordered-events.c): records from
 * several unordered streams are copied in with their time and handed out in
 * (time, arrival) order once nothing older can still arrive; each flush that
 * handed out a record ends with a round marker (PERF_RECORD_FINISHED_ROUND
 * for perf.data).
 */
#ifndef OFFCPU_ORDERED_H
#define OFFCPU_ORDERED_H

#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>

struct ordered_event {
	uint64_t time, seq;
	struct perf_event_header *rec;
};

/*
 * Records up to ORDERED_SLOT_MAX bytes are copied into slots of a few
 * power-of-two sizes, carved from chunks kept until ordered_free and reused
 * through a free list per size: a malloc and free per record made musl's
 * allocator map and unmap its groups under load, each unmap a TLB-flush IPI
 * into the CPUs running the profiled load (as perf's ordered-events keeps
 * its events in a cache).  Larger records are malloc'd.
 */
#define ORDERED_SLOT_MIN_SHIFT	6	/* 64 bytes */
#define ORDERED_SLOT_CLASSES	7	/* to 4096 bytes */
#define ORDERED_SLOT_MAX	(1u << (ORDERED_SLOT_MIN_SHIFT + ORDERED_SLOT_CLASSES - 1))

struct ordered_events {
	struct ordered_event *q;
	size_t n, cap;
	uint64_t seq;
	uint64_t bytes;		/* of the records queued */
	void *free_slots[ORDERED_SLOT_CLASSES];	/* each slot's first word: the next */
	char *unused[ORDERED_SLOT_CLASSES];	/* the rest of the class's newest chunk */
	size_t unused_bytes[ORDERED_SLOT_CLASSES];
	void **chunks;		/* every chunk slots were cut from */
	size_t nchunks;
};

/* Where a flush delivers: every record, then one end of round. */
struct ordered_sink {
	void (*deliver)(void *ctx, const struct perf_event_header *rec, uint64_t time);
	void (*round)(void *ctx);
	void *ctx;
};

/* Copies REC (rec->size bytes) in; -1 when out of memory. */
int ordered_queue(struct ordered_events *oe, const struct perf_event_header *rec,
		  uint64_t time);

/* Delivers and frees every record not newer than CUTOFF; returns how many. */
size_t ordered_flush(struct ordered_events *oe, uint64_t cutoff,
		     const struct ordered_sink *sink);

void ordered_free(struct ordered_events *oe);

#endif
