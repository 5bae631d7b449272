// SPDX-License-Identifier: GPL-2.0
/* The flight recorder's window: a ring of variable-sized records. */
#include <stdlib.h>
#include <string.h>

#include "record/flight.h"

/* An entry's header; size 0 marks the skipped tail of the buffer. */
struct entry {
	uint64_t time;
	uint32_t size;		/* of the entry, header included, a multiple of 8 */
	uint32_t pad;
};

#define FLIGHT_MIN	(64u << 10)

int flight_init(struct flight *f, size_t cap)
{
	memset(f, 0, sizeof(*f));
	/* Allocated once: pages are touched as records come, never more than CAP. */
	f->cap = (cap < FLIGHT_MIN ? FLIGHT_MIN : cap) & ~(size_t)7;
	f->buf = malloc(f->cap);
	return f->buf ? 0 : -1;
}

static struct entry *at(const struct flight *f, size_t off)
{
	return (struct entry *)(f->buf + off);
}

/* Whether OFF is the skipped tail: no room for a header, or a marker. */
static bool is_skip(const struct flight *f, size_t off)
{
	return f->cap - off < sizeof(struct entry) || !at(f, off)->size;
}

bool flight_oldest(const struct flight *f, uint64_t *time)
{
	if (!f->nr)
		return false;
	*time = at(f, f->head)->time;
	return true;
}

void flight_pop(struct flight *f, flight_evict_fn evict, void *ctx)
{
	const struct entry *e;

	if (!f->nr)
		return;
	e = at(f, f->head);
	if (evict)
		evict(ctx, (const struct perf_event_header *)(e + 1));
	f->bytes -= e->size;
	f->head += e->size;
	if (!--f->nr)
		f->head = f->tail = 0;
	else if (is_skip(f, f->head))
		f->head = 0;
}

/* Where NEED bytes fit now without evicting, or -1. */
static long room(struct flight *f, size_t need)
{
	if (!f->nr) {
		f->head = f->tail = 0;
		return 0;
	}
	if (f->tail > f->head) {	/* one run, [head, tail) */
		if (f->cap - f->tail >= need)
			return f->tail;
		if (f->head < need)
			return -1;
		if (f->cap - f->tail >= sizeof(struct entry))
			*at(f, f->tail) = (struct entry){ 0 };
		return 0;
	}
	/* Wrapped: [head, the skip) then [0, tail); free is [tail, head). */
	return f->head - f->tail >= need ? (long)f->tail : -1;
}

int flight_push(struct flight *f, const struct perf_event_header *rec, uint64_t time,
		flight_evict_fn evict, void *ctx)
{
	size_t need = (sizeof(struct entry) + rec->size + 7) & ~(size_t)7;
	struct entry *e;
	long off;

	if (need > f->cap)
		return 1;
	while ((off = room(f, need)) < 0)
		flight_pop(f, evict, ctx);
	e = at(f, off);
	*e = (struct entry){ time, need, 0 };
	memcpy(e + 1, rec, rec->size);
	f->tail = off + need;
	f->nr++;
	f->bytes += need;
	if (f->bytes > f->peak)
		f->peak = f->bytes;
	return 0;
}

int flight_each(const struct flight *f,
		int (*fn)(void *ctx, const struct perf_event_header *rec), void *ctx)
{
	size_t off = f->head;
	int err = 0;

	for (size_t i = 0; i < f->nr && !err; i++) {
		if (is_skip(f, off))
			off = 0;
		err = fn(ctx, (const struct perf_event_header *)(at(f, off) + 1));
		off += at(f, off)->size;
	}
	return err;
}

void flight_free(struct flight *f)
{
	free(f->buf);
	memset(f, 0, sizeof(*f));
}
