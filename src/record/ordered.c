// SPDX-License-Identifier: GPL-2.0
/* The time-ordered queue: sorted at each flush, stable by arrival. */
#include <stdlib.h>
#include <string.h>

#include "record/ordered.h"

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
	e->rec = malloc(rec->size);
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
		free(oe->q[i].rec);
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
		free(oe->q[i].rec);
	free(oe->q);
	*oe = (struct ordered_events){ 0 };
}
