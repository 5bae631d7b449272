// SPDX-License-Identifier: GPL-2.0
/*
 * The time-ordered queue alone: records of every slot class and beyond,
 * queued out of order, come out in (time, arrival) order with their bytes
 * intact, those after the cutoff stay, and freed slots are reused (the
 * queue's memory stops growing once it has held its peak).
 */
#include <stdlib.h>
#include <string.h>

#include "record/ordered.h"
#include "check.h"

#define NREC 3000

struct seen {
	uint64_t last_time, last_tag;
	size_t n, bad_order, bad_bytes, rounds;
};

/* A record of SIZE bytes whose payload is its tag, byte by byte. */
static struct perf_event_header *make_rec(uint16_t size, uint64_t tag)
{
	struct perf_event_header *h = calloc(1, size);

	h->type = 9;
	h->size = size;
	for (size_t i = sizeof(*h); i < size; i++)
		((uint8_t *)h)[i] = (uint8_t)(tag * 31 + i);
	memcpy((uint8_t *)h + sizeof(*h), &tag, size - sizeof(*h) >= 8 ? 8 : 0);
	return h;
}

static uint64_t tag_of(const struct perf_event_header *h)
{
	uint64_t tag = 0;

	if (h->size - sizeof(*h) >= 8)
		memcpy(&tag, (const uint8_t *)h + sizeof(*h), 8);
	return tag;
}

static void deliver(void *ctx, const struct perf_event_header *h, uint64_t time)
{
	struct seen *s = ctx;
	uint64_t tag = tag_of(h);

	if (s->n && (time < s->last_time || (time == s->last_time && tag < s->last_tag)))
		s->bad_order++;
	for (size_t i = sizeof(*h) + 8; i < h->size; i++)
		if (((const uint8_t *)h)[i] != (uint8_t)(tag * 31 + i)) {
			s->bad_bytes++;
			break;
		}
	s->last_time = time;
	s->last_tag = tag;
	s->n++;
}

static void round_end(void *ctx)
{
	((struct seen *)ctx)->rounds++;
}

/* Sizes over every class (64 to 4096 bytes) and past the largest. */
static uint16_t size_of(uint64_t i)
{
	static const uint16_t sizes[] = { 16, 64, 65, 152, 256, 300, 1000, 2048, 4096, 4097, 6000 };

	return sizes[i % (sizeof(sizes) / sizeof(sizes[0]))];
}

/* NREC records, tags in arrival order, times shuffled over [0, NREC / 4). */
static void fill(struct ordered_events *oe, unsigned int seed)
{
	srand(seed);
	for (uint64_t i = 0; i < NREC; i++) {
		struct perf_event_header *h = make_rec(size_of(i), i);

		ordered_queue(oe, h, (uint64_t)(rand() % (NREC / 4)));
		free(h);
	}
}

int main(void)
{
	struct ordered_events oe = { 0 };
	struct seen s = { 0 };
	struct ordered_sink sink = { deliver, round_end, &s };
	size_t first, rest, chunks;

	fill(&oe, 1);
	first = ordered_flush(&oe, NREC / 8 - 1, &sink);
	CHECK("ordered-cutoff", first == s.n && first > NREC / 3 && first < 2 * NREC / 3 && oe.n == NREC - first,
	      "%zu delivered, %zu kept of %d", first, oe.n, NREC);
	rest = ordered_flush(&oe, UINT64_MAX, &sink);
	CHECK("ordered-all", first + rest == NREC && oe.n == 0 && oe.bytes == 0 && s.rounds == 2,
	      "%zu + %zu delivered, %zu kept, %llu bytes, %zu rounds", first, rest, oe.n,
	      (unsigned long long)oe.bytes, s.rounds);
	CHECK("ordered-time-then-arrival", s.bad_order == 0, "%zu out of order", s.bad_order);
	CHECK("ordered-bytes-intact", s.bad_bytes == 0, "%zu records changed", s.bad_bytes);
	CHECK("ordered-empty-flush", ordered_flush(&oe, UINT64_MAX, &sink) == 0 && s.rounds == 2,
	      "an empty flush delivered or ended a round");

	/* The same records again: every slot comes from those freed. */
	chunks = oe.nchunks;
	s = (struct seen){ 0 };
	fill(&oe, 2);
	ordered_flush(&oe, UINT64_MAX, &sink);
	CHECK("ordered-slots-reused", chunks > 0 && oe.nchunks == chunks && s.n == NREC && !s.bad_order &&
	      !s.bad_bytes, "%zu chunks after the first pass, %zu after the second", chunks, oe.nchunks);
	ordered_free(&oe);
	return failures != 0;
}
