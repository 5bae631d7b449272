/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Test helper: turn a perf.data written by our writer in host order into the
 * file a writer of the other endianness would have produced, field by field
 * (u32 stay u32, the attr flag bitfield has its bits reversed per byte).  It
 * is written independently of the reader so that the reader's and perf's
 * swapping can be checked against it.  Knows the records and features we
 * write; returns -1 on anything else.
 */
#ifndef SWAP_PERF_DATA_H
#define SWAP_PERF_DATA_H

#include <stdint.h>
#include <string.h>
#include <linux/perf_event.h>

#define SW_MAX_EVENTS 16

struct sw_event {
	uint64_t sample_type, ids[8];
	size_t nr_ids;
};

struct sw_ctx {
	uint8_t *buf;
	size_t len;
	struct sw_event ev[SW_MAX_EVENTS];
	size_t nr_ev;
};

static inline uint64_t sw_get64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static inline uint32_t sw_get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static inline uint16_t sw_get16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, 2);
	return v;
}

static inline void sw16(uint8_t *p)
{
	uint16_t v = __builtin_bswap16(sw_get16(p));

	memcpy(p, &v, 2);
}

static inline void sw32(uint8_t *p)
{
	uint32_t v = __builtin_bswap32(sw_get32(p));

	memcpy(p, &v, 4);
}

static inline void sw64(uint8_t *p)
{
	uint64_t v = __builtin_bswap64(sw_get64(p));

	memcpy(p, &v, 8);
}

static inline void sw64n(uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sw64(p + 8 * i);
}

/* perf_event_attr, SIZE bytes, host order -> other order. */
static inline void sw_attr(uint8_t *p, uint32_t size)
{
	/* type size config period sample_type read_format FLAGS wakeup bp_type
	 * config1 config2 branch_sample_type regs_user stack_user clockid
	 * regs_intr aux_watermark max_stack res2 aux_sample_size res3 sig_data
	 * config3 */
	static const int w[] = { 4, 4, 8, 8, 8, 8, -8, 4, 4, 8, 8, 8, 8, 4, 4, 8,
				 4, 2, 2, 4, 4, 8, 8 };
	uint32_t off = 0;

	for (size_t i = 0; i < sizeof(w) / sizeof(w[0]); i++) {
		int n = w[i] < 0 ? -w[i] : w[i];

		if (off + n > size)
			break;
		if (w[i] < 0) {
			for (int j = 0; j < 8; j++) {
				uint8_t b = p[off + j], r = 0;

				for (int k = 0; k < 8; k++)
					r |= ((b >> k) & 1) << (7 - k);
				p[off + j] = r;
			}
		} else if (n == 2) {
			sw16(p + off);
		} else if (n == 4) {
			sw32(p + off);
		} else {
			sw64(p + off);
		}
		off += n;
	}
}

static inline const struct sw_event *sw_find(const struct sw_ctx *c, uint64_t id)
{
	for (size_t i = 0; i < c->nr_ev; i++)
		for (size_t j = 0; j < c->ev[i].nr_ids; j++)
			if (c->ev[i].ids[j] == id)
				return &c->ev[i];
	return NULL;
}

/* sample_id trailer ending at END (host order, last word the IDENTIFIER). */
static inline int sw_trailer(const struct sw_ctx *c, uint8_t *start, uint8_t *end)
{
	const struct sw_event *e;
	uint64_t t;
	uint8_t *p;
	size_t n = 0;

	if (end - start < 8 || !(e = sw_find(c, sw_get64(end - 8))))
		return -1;
	t = e->sample_type;
	n = !!(t & PERF_SAMPLE_TID) + !!(t & PERF_SAMPLE_TIME) + !!(t & PERF_SAMPLE_ID) +
	    !!(t & PERF_SAMPLE_STREAM_ID) + !!(t & PERF_SAMPLE_CPU) +
	    !!(t & PERF_SAMPLE_IDENTIFIER);
	if ((size_t)(end - start) < n * 8)
		return -1;
	p = end - n * 8;
	if (t & PERF_SAMPLE_TID) {
		sw32(p);
		sw32(p + 4);
		p += 8;
	}
	if (t & PERF_SAMPLE_TIME)
		sw64(p), p += 8;
	if (t & PERF_SAMPLE_ID)
		sw64(p), p += 8;
	if (t & PERF_SAMPLE_STREAM_ID)
		sw64(p), p += 8;
	if (t & PERF_SAMPLE_CPU) {
		sw32(p);
		sw32(p + 4);
		p += 8;
	}
	if (t & PERF_SAMPLE_IDENTIFIER)
		sw64(p);
	return 0;
}

static inline int sw_sample(const struct sw_ctx *c, uint8_t *p, uint8_t *end)
{
	const struct sw_event *e;
	uint64_t t, nr;

	if (end - p < 8 || !(e = sw_find(c, sw_get64(p))))
		return -1;
	t = e->sample_type;
	if (t & ~(uint64_t)(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			    PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_ID |
			    PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |
			    PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW))
		return -1;
	static const uint64_t order[] = { PERF_SAMPLE_IDENTIFIER, PERF_SAMPLE_IP,
		PERF_SAMPLE_TID, PERF_SAMPLE_TIME, PERF_SAMPLE_ADDR, PERF_SAMPLE_ID,
		PERF_SAMPLE_STREAM_ID, PERF_SAMPLE_CPU, PERF_SAMPLE_PERIOD,
		PERF_SAMPLE_CALLCHAIN, PERF_SAMPLE_RAW };
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		uint64_t b = order[i];

		if (!(t & b))
			continue;
		if (end - p < 8)
			return -1;
		if (b == PERF_SAMPLE_TID || b == PERF_SAMPLE_CPU) {
			sw32(p);
			sw32(p + 4);
		} else if (b == PERF_SAMPLE_CALLCHAIN) {
			nr = sw_get64(p);
			sw64(p);
			if (nr > (uint64_t)(end - p) / 8 - 1)
				return -1;
			sw64n(p + 8, nr);
			p += nr * 8;
		} else if (b == PERF_SAMPLE_RAW) {
			/* u32 size, then opaque bytes: 4 + size fill whole words. */
			uint32_t size = sw_get32(p);

			if ((size + 4) % 8 || size + 4 > (uint64_t)(end - p))
				return -1;
			sw32(p);
			p += size + 4 - 8;
		} else {
			sw64(p);
		}
		p += 8;
	}
	return 0;
}

/* Offset just after the NUL-padded name starting at P. */
static inline uint8_t *sw_after_name(uint8_t *p, uint8_t *end)
{
	uint8_t *nul = memchr(p, 0, end - p);

	return nul ? p + ((nul - p + 1 + 7) & ~7) : NULL;
}

static inline int sw_record(const struct sw_ctx *c, uint8_t *r)
{
	uint32_t type = sw_get32(r);
	uint16_t size = sw_get16(r + 6);
	uint8_t *b = r + 8, *end = r + size, *t;

	sw32(r);
	sw16(r + 4);
	sw16(r + 6);
	switch (type) {
	case PERF_RECORD_SAMPLE:
		return sw_sample(c, b, end);
	case PERF_RECORD_COMM:
		sw32(b);
		sw32(b + 4);
		t = sw_after_name(b + 8, end);
		return t ? sw_trailer(c, t, end) : -1;
	case PERF_RECORD_MMAP:
		sw32(b);
		sw32(b + 4);
		sw64n(b + 8, 3);
		t = sw_after_name(b + 32, end);
		return t ? sw_trailer(c, t, end) : -1;
	case PERF_RECORD_MMAP2:
		sw32(b);
		sw32(b + 4);
		sw64n(b + 8, 3);
		sw32(b + 32);
		sw32(b + 36);
		sw64n(b + 40, 2);
		sw32(b + 56);
		sw32(b + 60);
		t = sw_after_name(b + 64, end);
		return t ? sw_trailer(c, t, end) : -1;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		for (int i = 0; i < 4; i++)
			sw32(b + 4 * i);
		sw64(b + 16);
		return sw_trailer(c, b + 24, end);
	case PERF_RECORD_LOST:
		sw64n(b, 2);
		return sw_trailer(c, b + 16, end);
	case PERF_RECORD_LOST_SAMPLES:
		sw64(b);
		return sw_trailer(c, b + 8, end);
	case 68:	/* FINISHED_ROUND */
		return 0;
	}
	return -1;
}

static inline uint8_t *sw_string(uint8_t *p)
{
	uint32_t len = sw_get32(p);

	sw32(p);
	return p + 4 + len;
}

static inline int sw_feature(int bit, uint8_t *p, uint8_t *end)
{
	uint32_t n, sz;

	switch (bit) {
	case 3: case 4: case 5: case 6: case 8: case 9:	/* strings */
		sw_string(p);
		return 0;
	case 7:		/* NRCPUS */
		sw32(p);
		sw32(p + 4);
		return 0;
	case 10:	/* TOTAL_MEM */
	case 23:	/* CLOCKID */
		sw64(p);
		return 0;
	case 11:	/* CMDLINE */
		n = sw_get32(p);
		sw32(p);
		p += 4;
		while (n--)
			p = sw_string(p);
		return 0;
	case 12:	/* EVENT_DESC */
		n = sw_get32(p);
		sz = sw_get32(p + 4);
		sw32(p);
		sw32(p + 4);
		p += 8;
		while (n--) {
			uint32_t nr_ids;

			sw_attr(p, sz);
			p += sz;
			nr_ids = sw_get32(p);
			sw32(p);
			p = sw_string(p + 4);
			sw64n(p, nr_ids);
			p += 8 * nr_ids;
		}
		return 0;
	case 2:		/* BUILD_ID */
		while (p < end) {
			uint16_t size = sw_get16(p + 6);

			if (size < 36 || size > end - p)
				return -1;
			sw32(p);
			sw16(p + 4);
			sw16(p + 6);
			sw32(p + 8);	/* pid */
			p += size;
		}
		return 0;
	case 29:	/* CLOCK_DATA */
		sw32(p);
		sw32(p + 4);
		sw64n(p + 8, 2);
		return 0;
	}
	return -1;
}

/* BUF (LEN bytes) in host order, as written by pd_close, swapped in place. */
static inline int swap_perf_data(uint8_t *buf, size_t len)
{
	struct sw_ctx c = { .buf = buf, .len = len };
	uint64_t attr_size = sw_get64(buf + 16), attrs = sw_get64(buf + 24);
	uint64_t nattr = sw_get64(buf + 32) / attr_size;
	uint64_t data = sw_get64(buf + 40), dsize = sw_get64(buf + 48), feat[4], idx;
	int nf = 0;

	if (nattr > SW_MAX_EVENTS)
		return -1;
	memcpy(feat, buf + 72, sizeof(feat));
	sw64n(buf, 13);
	for (uint64_t i = 0; i < nattr; i++) {
		uint8_t *a = buf + attrs + i * attr_size;
		uint64_t ioff = sw_get64(a + attr_size - 16), isz = sw_get64(a + attr_size - 8);
		struct sw_event *e = &c.ev[c.nr_ev++];

		memcpy(&e->sample_type, a + 24, 8);
		e->nr_ids = isz / 8 < 8 ? isz / 8 : 8;
		memcpy(e->ids, buf + ioff, e->nr_ids * 8);
		sw_attr(a, attr_size - 16);
		sw64n(a + attr_size - 16, 2);
		sw64n(buf + ioff, isz / 8);
	}
	for (uint64_t pos = data; pos < data + dsize;) {
		uint16_t size = sw_get16(buf + pos + 6);

		if (size < 8 || sw_record(&c, buf + pos))
			return -1;
		pos += size;
	}
	idx = data + dsize;
	for (int bit = 0; bit < 256; bit++) {
		uint64_t off, sz;

		if (!(feat[bit / 64] >> (bit % 64) & 1))
			continue;
		off = sw_get64(buf + idx + 16 * nf);
		sz = sw_get64(buf + idx + 16 * nf + 8);
		sw64n(buf + idx + 16 * nf, 2);
		nf++;
		if (sw_feature(bit, buf + off, buf + off + sz))
			return -1;
	}
	return 0;
}

#endif
