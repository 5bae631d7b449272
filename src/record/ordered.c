// SPDX-License-Identifier: GPL-2.0
/* The time-ordered queue: sorted at each flush, stable by arrival. */
#include <stdlib.h>
#include <string.h>

#include "record/ordered.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
/* A free slot is poisoned: a record used after its flush is still caught. */
#define SLOT_POISON(p, n)	ASAN_POISON_MEMORY_REGION(p, n)
#define SLOT_UNPOISON(p, n)	ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define SLOT_POISON(p, n)	((void)(p), (void)(n))
#define SLOT_UNPOISON(p, n)	((void)(p), (void)(n))
#endif

#define CHUNK_BYTES	(64u << 10)

static size_t slot_bytes(int cls)
{
	return (size_t)1 << (ORDERED_SLOT_MIN_SHIFT + cls);
}

/* The smallest class holding SIZE bytes; -1 when over ORDERED_SLOT_MAX. */
static int slot_class(size_t size)
{
	int cls = 0;

	if (size > ORDERED_SLOT_MAX)
		return -1;
	while (slot_bytes(cls) < size)
		cls++;
	return cls;
}

static void slot_put(struct ordered_events *oe, int cls, void *slot)
{
	memcpy(slot, &oe->free_slots[cls], sizeof(void *));
	SLOT_POISON((char *)slot + sizeof(void *), slot_bytes(cls) - sizeof(void *));
	oe->free_slots[cls] = slot;
}

/* A new chunk for class CLS, its slots cut as they are needed: 0, or -1. */
static int chunk_add(struct ordered_events *oe, int cls)
{
	void **chunks = realloc(oe->chunks, (oe->nchunks + 1) * sizeof(*chunks));
	char *chunk;

	if (!chunks)
		return -1;
	oe->chunks = chunks;
	chunk = malloc(CHUNK_BYTES);
	if (!chunk)
		return -1;
	oe->chunks[oe->nchunks++] = chunk;
	oe->unused[cls] = chunk;
	oe->unused_bytes[cls] = CHUNK_BYTES;
	return 0;
}

static void *rec_alloc(struct ordered_events *oe, size_t size)
{
	int cls = slot_class(size);
	void *slot;

	if (cls < 0)
		return malloc(size);
	slot = oe->free_slots[cls];
	if (slot) {
		SLOT_UNPOISON((char *)slot + sizeof(void *), slot_bytes(cls) - sizeof(void *));
		memcpy(&oe->free_slots[cls], slot, sizeof(void *));
		return slot;
	}
	if (oe->unused_bytes[cls] < slot_bytes(cls) && chunk_add(oe, cls))
		return NULL;
	slot = oe->unused[cls];
	oe->unused[cls] += slot_bytes(cls);
	oe->unused_bytes[cls] -= slot_bytes(cls);
	return slot;
}

static void rec_free(struct ordered_events *oe, struct perf_event_header *rec)
{
	int cls = slot_class(rec->size);

	if (cls < 0)
		free(rec);
	else
		slot_put(oe, cls, rec);
}

int ordered_queue(struct ordered_events *oe, const struct perf_event_header *rec,
		  uint64_t time)
{
	struct ordered_event *e;

	if (oe->n == oe->cap) {
		size_t cap = oe->cap ? oe->cap * 2 : 1024;
		struct ordered_event *n = realloc(oe->q, cap * sizeof(*n));

		if (!n)
			return -1;
		oe->q = n;
		oe->cap = cap;
	}
	e = &oe->q[oe->n];
	e->rec = rec_alloc(oe, rec->size);
	if (!e->rec)
		return -1;
	memcpy(e->rec, rec, rec->size);
	e->time = time;
	e->seq = oe->seq++;
	oe->n++;
	oe->bytes += rec->size;
	return 0;
}

static int event_cmp(const void *a, const void *b)
{
	const struct ordered_event *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

size_t ordered_flush(struct ordered_events *oe, uint64_t cutoff,
		     const struct ordered_sink *sink)
{
	size_t i;

	if (oe->n)
		qsort(oe->q, oe->n, sizeof(*oe->q), event_cmp);
	for (i = 0; i < oe->n && oe->q[i].time <= cutoff; i++) {
		sink->deliver(sink->ctx, oe->q[i].rec, oe->q[i].time);
		oe->bytes -= oe->q[i].rec->size;
		rec_free(oe, oe->q[i].rec);
	}
	if (!i)
		return 0;
	memmove(oe->q, oe->q + i, (oe->n - i) * sizeof(*oe->q));
	oe->n -= i;
	sink->round(sink->ctx);
	return i;
}

void ordered_free(struct ordered_events *oe)
{
	for (size_t i = 0; i < oe->n; i++)
		if (slot_class(oe->q[i].rec->size) < 0)
			free(oe->q[i].rec);
	for (size_t i = 0; i < oe->nchunks; i++) {
		SLOT_UNPOISON(oe->chunks[i], CHUNK_BYTES);
		free(oe->chunks[i]);
	}
	free(oe->chunks);
	free(oe->q);
	*oe = (struct ordered_events){ 0 };
}
