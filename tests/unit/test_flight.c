// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the flight recorder's window (src/record/flight.c): random
 * records of random sizes pushed through a small buffer, checked against a
 * plain FIFO after every step: the same records, oldest first, the same
 * bytes, each evicted record handed out once in order, and the buffer
 * never over its cap.  Prints PASS/FAIL lines.
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "record/flight.h"

#define MAXREC	3000
#define NMODEL	100000

/* The model: record i has time i and size sizes[i]; [first, next) held. */
static uint32_t sizes[NMODEL];
static size_t first, next, evicted_upto;
static int bad_evict;

static void make_rec(uint64_t *buf, size_t i)
{
	struct perf_event_header *h = (void *)buf;
	size_t words = sizes[i] / 8;

	h->type = PERF_RECORD_SAMPLE;
	h->size = sizes[i];
	for (size_t w = 1; w < words; w++)
		buf[w] = i * 1000003u + w;
}

static int rec_ok(const struct perf_event_header *h, size_t i)
{
	const uint64_t *w = (const void *)h;

	if (h->size != sizes[i])
		return 0;
	for (size_t k = 1; k < h->size / 8; k++)
		if (w[k] != i * 1000003u + k)
			return 0;
	return 1;
}

static void on_evict(void *ctx, const struct perf_event_header *h)
{
	(void)ctx;
	if (first >= next || !rec_ok(h, first))
		bad_evict = 1;
	first++;
	evicted_upto = first;
}

struct walk {
	size_t i;
	int bad;
};

static int each(void *ctx, const struct perf_event_header *h)
{
	struct walk *w = ctx;

	if (!rec_ok(h, w->i++))
		w->bad = 1;
	return 0;
}

static int window_ok(const struct flight *f)
{
	struct walk w = { first, 0 };
	uint64_t t;

	flight_each(f, each, &w);
	if (w.bad || w.i != next || f->nr != next - first || f->bytes > f->cap)
		return 0;
	return f->nr ? flight_oldest(f, &t) && t == first : !flight_oldest(f, &t);
}

static void test_random(size_t cap)
{
	static uint64_t buf[MAXREC / 8 + 1];
	struct flight f;
	char name[64];
	int ok = 1;

	first = next = 0;
	srand(cap);
	if (flight_init(&f, cap)) {
		CHECK("flight-init", 0, "out of memory");
		return;
	}
	for (size_t i = 0; i < NMODEL && ok; i++) {
		sizes[i] = 8 * (1 + rand() % (MAXREC / 8));
		make_rec(buf, i);
		ok = !flight_push(&f, (void *)buf, i, on_evict, NULL);
		next++;
		/* Sometimes drop by age, as the collector does. */
		while (ok && rand() % 7 == 0 && f.nr)
			flight_pop(&f, on_evict, NULL);
		ok = ok && !bad_evict && window_ok(&f);
	}
	snprintf(name, sizeof(name), "flight-ring-%zuk", cap >> 10);
	CHECK(name, ok, "record %zu: window [%zu, %zu) differs (nr %zu, %llu bytes)", next,
	      first, next, f.nr, (unsigned long long)f.bytes);
	/* It must keep close to the cap: not evict more than one push needs. */
	snprintf(name, sizeof(name), "flight-ring-%zuk-full-use", cap >> 10);
	CHECK(name, f.peak > f.cap - 2 * (MAXREC + 16),
	      "peak %llu of %zu", (unsigned long long)f.peak, f.cap);
	flight_free(&f);
}

static void test_too_large(void)
{
	static uint64_t buf[65536 / 8];
	struct perf_event_header *h = (void *)buf;
	struct flight f;

	if (flight_init(&f, 0))
		return;
	h->size = 65528;	/* with its entry header, more than 64 KiB */
	CHECK("flight-too-large-refused", flight_push(&f, h, 1, NULL, NULL) == 1 && !f.nr,
	      "a record larger than the buffer was taken");
	flight_free(&f);
}

int main(void)
{
	test_random(64u << 10);
	test_random(200u << 10);
	test_too_large();
	return failures != 0;
}
