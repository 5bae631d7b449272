// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of src/lib/ringbuf.c's reading of a ring, on a ring laid out
 * in memory as the kernel writes one: records in order, a record wrapping
 * the end read whole, discarded ones skipped, the reading stopped at one
 * still being written, and the consumer position moved past what was read.
 * Prints PASS/FAIL lines.
 */
#include <linux/bpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "lib/ringbuf.h"

#define SIZE 64

static uint8_t data[SIZE];
static unsigned long cons, prod;

/* Writes a record of LEN bytes of BYTE at the producer position, with FLAGS. */
static void produce(uint32_t len, uint8_t byte, uint32_t flags)
{
	uint32_t hdr[2] = { len | flags, 0 };

	for (uint32_t i = 0; i < 8; i++)
		data[(prod + i) % SIZE] = ((uint8_t *)hdr)[i];
	for (uint32_t i = 0; i < len; i++)
		data[(prod + 8 + i) % SIZE] = byte;
	if (!(flags & BPF_RINGBUF_BUSY_BIT))
		prod += (8 + len + 7) & ~7u;
}

static char seen[256];

/* Appends "<byte>x<len>," of each record: its bytes must be all alike. */
static int note(void *ctx, void *p, size_t size)
{
	const uint8_t *b = p;
	size_t n = strlen(seen);

	(void)ctx;
	for (size_t i = 1; i < size; i++)
		if (b[i] != b[0])
			return -5;
	snprintf(seen + n, sizeof(seen) - n, "%cx%zu,", size ? b[0] : '-', size);
	return 0;
}

int main(void)
{
	struct ringbuf_view v = { .consumer_pos = &cons, .producer_pos = &prod, .data = data,
				  .size = SIZE };
	int n;

	produce(5, 'a', 0);		/* [0, 16) */
	produce(4, 'b', BPF_RINGBUF_DISCARD_BIT);	/* [16, 32) */
	produce(8, 'c', 0);		/* [32, 48) */
	n = ringbuf_view_consume(&v, note, NULL);
	CHECK("in-order", n == 2 && !strcmp(seen, "ax5,cx8,") && cons == 48, "%d: %s, at %lu",
	      n, seen, cons);

	seen[0] = 0;
	produce(20, 'd', 0);		/* [48, 80): its data wraps the end */
	produce(4, 'e', 0);
	n = ringbuf_view_consume(&v, note, NULL);
	CHECK("wrapped-whole", n == 2 && !strcmp(seen, "dx20,ex4,") && cons == prod,
	      "%d: %s, at %lu of %lu", n, seen, cons, prod);

	seen[0] = 0;
	produce(3, 'f', 0);
	produce(6, 'g', BPF_RINGBUF_BUSY_BIT);	/* still being written */
	n = ringbuf_view_consume(&v, note, NULL);
	CHECK("stops-at-busy", n == 1 && !strcmp(seen, "fx3,") && cons == prod, "%d: %s", n,
	      seen);
	n = ringbuf_view_consume(&v, note, NULL);
	CHECK("busy-again", n == 0 && cons == prod, "%d", n);

	seen[0] = 0;
	produce(40, 'h', 0);
	produce(0, 'i', 0);
	memcpy(&data[(prod - 8) % SIZE], &(uint32_t){ 100 }, 4);	/* longer than the ring */
	n = ringbuf_view_consume(&v, note, NULL);
	CHECK("too-long", n == -1 && !strcmp(seen, "hx40,"), "%d: %s", n, seen);
	ringbuf_free(NULL);
	free(v.scratch);
	return failures != 0;
}
