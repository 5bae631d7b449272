// SPDX-License-Identifier: GPL-2.0
/*
 * perf.data reader, for `offcpu report`, the tests and the fuzzers.  The
 * input is untrusted: every offset and size is checked.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format/perf_data_reader.h"
#include "format/perf_records.h"

#define PD_ERR(...) (snprintf(err, errlen, __VA_ARGS__), -1)
#define MAX_EVENTS	4096
#define MAX_IDS		(1u << 20)

static uint64_t rd64(const struct pd_file *f, const void *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return f->needs_swap ? __builtin_bswap64(v) : v;
}

static uint32_t rd32(const struct pd_file *f, const void *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return f->needs_swap ? __builtin_bswap32(v) : v;
}

static uint16_t rd16(const struct pd_file *f, const void *p)
{
	uint16_t v;

	memcpy(&v, p, 2);
	return f->needs_swap ? __builtin_bswap16(v) : v;
}

static struct pd_section read_section(const struct pd_file *f, const void *p)
{
	struct pd_section s;

	memcpy(&s, p, sizeof(s));
	s.offset = rd64(f, &s.offset);
	s.size = rd64(f, &s.size);
	return s;
}

static bool in_file(const struct pd_file *f, uint64_t off, uint64_t len)
{
	return off <= f->size && len <= f->size - off;
}

static uint8_t revbyte(uint8_t b)
{
	b = (b & 0xf0) >> 4 | (b & 0x0f) << 4;
	b = (b & 0xcc) >> 2 | (b & 0x33) << 2;
	return (b & 0xaa) >> 1 | (b & 0x55) << 1;
}

/* Widths of perf_event_attr's fields in order; 0 marks the flag bitfield. */
static const uint8_t attr_fields[] = {
	4, 4, 8, 8, 8, 8, 0,		/* type .. read_format, flags */
	4, 4, 8, 8, 8, 8, 4, 4, 8,	/* wakeup_events .. sample_regs_intr */
	4, 2, 2, 4, 4, 8, 8,		/* aux_watermark .. config3 */
};

/*
 * Swap an attr of SIZE bytes in place.  The flag bitfield is allocated from
 * the other end of each byte on the other endianness: its bytes stay in
 * place and their bits are reversed, as perf's swap_bitfield does.
 */
static void swap_attr(uint8_t *p, uint32_t size)
{
	uint32_t off = 0;

	for (size_t i = 0; i < sizeof(attr_fields); i++) {
		uint32_t w = attr_fields[i] ? attr_fields[i] : 8;

		if (off + w > size)
			break;
		if (!attr_fields[i])
			for (int j = 0; j < 8; j++)
				p[off + j] = revbyte(p[off + j]);
		else if (w == 2)
			*(uint16_t *)(p + off) = __builtin_bswap16(*(uint16_t *)(p + off));
		else if (w == 4)
			*(uint32_t *)(p + off) = __builtin_bswap32(*(uint32_t *)(p + off));
		else
			*(uint64_t *)(p + off) = __builtin_bswap64(*(uint64_t *)(p + off));
		off += w;
	}
}

/* An on-file attr of SIZE bytes at P, in host order, into A. */
static void read_attr(const struct pd_file *f, const uint8_t *p, uint32_t size,
		      struct perf_event_attr *a)
{
	union {
		struct perf_event_attr a;
		uint64_t align[sizeof(struct perf_event_attr) / 8 + 1];
	} u;
	uint32_t n = size < sizeof(u.a) ? size : sizeof(u.a);

	memset(&u, 0, sizeof(u));
	memcpy(&u.a, p, n);
	if (f->needs_swap)
		swap_attr((uint8_t *)&u.a, n);
	*a = u.a;
}

static int read_attrs(struct pd_file *f, uint64_t attr_size, uint64_t off,
		      uint64_t size, char *err, size_t errlen)
{
	uint64_t n;

	if (attr_size < PERF_ATTR_SIZE_VER0 + sizeof(struct pd_section) || attr_size > 4096 || size % attr_size ||
	    !in_file(f, off, size))
		return PD_ERR("bad attribute section");
	n = size / attr_size;
	if (!n || n > MAX_EVENTS)
		return PD_ERR("bad number of events (%llu)", (unsigned long long)n);
	f->events = calloc(n, sizeof(*f->events));
	if (!f->events)
		return PD_ERR("out of memory");
	f->nr_events = n;
	for (uint64_t i = 0; i < n; i++) {
		const uint8_t *p = f->map + off + i * attr_size;
		struct pd_event *e = &f->events[i];
		/* perf_file_attr: ATTR_SIZE - 16 bytes of attr (any version), then the ids. */
		struct pd_section ids = read_section(f, p + attr_size - sizeof(ids));
		uint64_t ids_off = ids.offset, ids_size = ids.size;

		read_attr(f, p, attr_size - sizeof(ids), &e->attr);
		if (ids_size % 8 || ids_size / 8 > MAX_IDS || !in_file(f, ids_off, ids_size))
			return PD_ERR("bad id section of event %llu", (unsigned long long)i);
		e->nr_ids = ids_size / 8;
		e->ids = calloc(e->nr_ids + 1, 8);
		if (!e->ids)
			return PD_ERR("out of memory");
		for (size_t j = 0; j < e->nr_ids; j++)
			e->ids[j] = rd64(f, f->map + ids_off + j * 8);
	}
	return 0;
}

/* A feature section being parsed: every read is bounds-checked. */
struct cursor {
	const struct pd_file *f;
	uint64_t pos, end;
	bool bad;
};

static const uint8_t *take(struct cursor *c, uint64_t n)
{
	const uint8_t *p;

	if (c->bad || n > c->end - c->pos) {
		c->bad = true;
		return NULL;
	}
	p = c->f->map + c->pos;
	c->pos += n;
	return p;
}

static uint32_t take32(struct cursor *c)
{
	const uint8_t *p = take(c, 4);

	return p ? rd32(c->f, p) : 0;
}

static uint64_t take64(struct cursor *c)
{
	const uint8_t *p = take(c, 8);

	return p ? rd64(c->f, p) : 0;
}

/* perf's do_write_string: u32 padded length, then NUL-padded bytes. */
static char *take_string(struct cursor *c)
{
	uint32_t len = take32(c);
	const uint8_t *p = take(c, len);

	return p ? strndup((const char *)p, len) : NULL;
}

static void read_cmdline(struct pd_file *f, struct cursor *c)
{
	uint32_t n = take32(c);

	/* Each string takes at least 4 bytes: bounds N before allocating. */
	if (c->bad || n > (c->end - c->pos) / 4)
		return;
	f->cmdline = calloc(n + 1, sizeof(char *));
	if (!f->cmdline)
		return;
	for (f->nr_cmdline = 0; f->nr_cmdline < n; f->nr_cmdline++) {
		f->cmdline[f->nr_cmdline] = take_string(c);
		if (!f->cmdline[f->nr_cmdline])
			break;
	}
}

/* Event names, matched to the attr section by index as perf does. */
static void read_event_desc(struct pd_file *f, struct cursor *c)
{
	uint32_t n = take32(c), sz = take32(c);

	if (c->bad || sz < PERF_ATTR_SIZE_VER0 || sz > 4096)
		return;
	for (uint32_t i = 0; i < n && !c->bad; i++) {
		char *name;
		uint32_t nr_ids;

		take(c, sz);
		nr_ids = take32(c);
		name = take_string(c);
		take(c, (uint64_t)nr_ids * 8);
		if (c->bad || i >= f->nr_events) {
			free(name);
			continue;
		}
		free(f->events[i].name);
		f->events[i].name = name;
	}
}

/* struct perf_record_build_id entries, filename padded. */
static void read_build_ids(struct pd_file *f, struct cursor *c)
{
	struct perf_record_build_id e;

	while (!c->bad && c->end - c->pos >= sizeof(e)) {
		const uint8_t *name;
		struct pd_build_id *b, *nb;

		memcpy(&e, take(c, sizeof(e)), sizeof(e));
		e.header.misc = rd16(f, &e.header.misc);
		e.header.size = rd16(f, &e.header.size);
		e.pid = (int32_t)rd32(f, &e.pid);
		if (e.header.size < sizeof(e) || !(name = take(c, e.header.size - sizeof(e))))
			return;
		nb = realloc(f->build_ids, (f->nr_build_ids + 1) * sizeof(*nb));
		if (!nb)
			return;
		f->build_ids = nb;
		b = &nb[f->nr_build_ids];
		b->misc = e.header.misc & ~PERF_RECORD_MISC_BUILD_ID_SIZE;
		b->pid = e.pid;
		memcpy(b->id, e.build_id, sizeof(e.build_id));
		b->id_len = e.header.misc & PERF_RECORD_MISC_BUILD_ID_SIZE ? e.size : sizeof(e.build_id);
		if (b->id_len > sizeof(e.build_id))
			b->id_len = sizeof(e.build_id);
		b->filename = strndup((const char *)name, e.header.size - sizeof(e));
		if (!b->filename)
			return;
		f->nr_build_ids++;
	}
}

static void read_feature(struct pd_file *f, int bit, struct cursor *c)
{
	switch (bit) {
	case PD_FEAT_HOSTNAME:
		f->hostname = take_string(c);
		break;
	case PD_FEAT_OSRELEASE:
		f->osrelease = take_string(c);
		break;
	case PD_FEAT_ARCH:
		f->arch = take_string(c);
		break;
	case PD_FEAT_VERSION:
		f->version = take_string(c);
		break;
	case PD_FEAT_NRCPUS:
		f->nr_cpus_avail = take32(c);
		f->nr_cpus_online = take32(c);
		break;
	case PD_FEAT_TOTAL_MEM:
		f->total_mem = take64(c);
		break;
	case PD_FEAT_CMDLINE:
		read_cmdline(f, c);
		break;
	case PD_FEAT_EVENT_DESC:
		read_event_desc(f, c);
		break;
	case PD_FEAT_BUILD_ID:
		read_build_ids(f, c);
		break;
	case PD_FEAT_CLOCKID:
		f->clock_res_ns = take64(c);
		break;
	case PD_FEAT_CLOCK_DATA:
		if (take32(c) != 1)
			break;
		f->clockid = take32(c);
		f->tod_ns = take64(c);
		f->clockid_ns = take64(c);
		f->has_clock_data = !c->bad;
		break;
	}
}

/* The feature index follows the data: one section per set bit, ascending. */
static void read_features(struct pd_file *f)
{
	uint64_t off = f->data_offset + f->data_size;
	int n = 0;

	for (int bit = 0; bit < MAX_FEAT; bit++) {
		struct cursor c = { .f = f };
		struct pd_section sec;

		if (!pd_has_feature(f, bit))
			continue;
		if (!in_file(f, off + n * sizeof(sec), sizeof(sec)))
			return;
		sec = read_section(f, f->map + off + n * sizeof(sec));
		n++;
		if (!in_file(f, sec.offset, sec.size))
			continue;
		c.pos = sec.offset;
		c.end = sec.offset + sec.size;
		read_feature(f, bit, &c);
	}
}

int pd_has_feature(const struct pd_file *f, enum pd_feature feat)
{
	unsigned int bit = feat;

	return bit < MAX_FEAT && (f->features[bit / 64] >> (bit % 64) & 1);
}

int pd_read_mem(struct pd_file *f, const void *buf, size_t len, char *err, size_t errlen)
{
	struct pd_file_header hdr, *h = &hdr;	/* BUF may be unaligned */

	memset(f, 0, sizeof(*f));
	f->map = buf;
	f->size = len;
	if (len < sizeof(struct pd_file_header))
		return PD_ERR("not a perf.data file (too short)");
	memcpy(&hdr, buf, sizeof(hdr));
	if (rd64(f, &h->magic) == __builtin_bswap64(PERF_MAGIC2))
		f->needs_swap = 1;
	else if (rd64(f, &h->magic) != PERF_MAGIC2)
		return PD_ERR("not a perf.data file (bad magic)");
	if (rd64(f, &h->size) != sizeof(struct pd_file_header))
		return PD_ERR("unsupported perf.data header size (pipe mode?)");
	f->data_offset = rd64(f, &h->data.offset);
	f->data_size = rd64(f, &h->data.size);
	if (!in_file(f, f->data_offset, f->data_size))
		return PD_ERR("truncated data section");
	for (int i = 0; i < 4; i++)
		f->features[i] = rd64(f, &h->adds_features[i]);
	if (read_attrs(f, rd64(f, &h->attr_size), rd64(f, &h->attrs.offset),
		       rd64(f, &h->attrs.size), err, errlen)) {
		pd_file_free(f);	/* the caller has nothing to free on error */
		return -1;
	}
	read_features(f);
	return 0;
}

int pd_read_file(struct pd_file *f, const char *path, char *err, size_t errlen)
{
	struct stat st;
	void *map;
	int fd = open(path, O_RDONLY | O_CLOEXEC), r;

	memset(f, 0, sizeof(*f));
	if (fd < 0)
		return PD_ERR("%s: %s", path, strerror(errno));
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return PD_ERR("%s: not a regular file", path);
	}
	if (st.st_size == 0) {
		close(fd);
		return PD_ERR("%s: empty file", path);
	}
	map = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return PD_ERR("%s: %s", path, strerror(errno));
	r = pd_read_mem(f, map, st.st_size, err, errlen);
	if (r) {
		munmap(map, st.st_size);
		return r;
	}
	f->owns_map = 1;
	return 0;
}

void pd_file_free(struct pd_file *f)
{
	for (size_t i = 0; i < f->nr_events; i++) {
		free(f->events[i].name);
		free(f->events[i].ids);
	}
	free(f->events);
	free(f->hostname);
	free(f->osrelease);
	free(f->arch);
	free(f->version);
	for (uint32_t i = 0; f->cmdline && i < f->nr_cmdline; i++)
		free(f->cmdline[i]);
	free(f->cmdline);
	for (size_t i = 0; i < f->nr_build_ids; i++)
		free(f->build_ids[i].filename);
	free(f->build_ids);
	if (f->owns_map && f->map)
		munmap((void *)f->map, f->size);
	memset(f, 0, sizeof(*f));
}

static void swap_words(uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t v;

		memcpy(&v, p + i * 8, 8);
		v = __builtin_bswap64(v);
		memcpy(p + i * 8, &v, 8);
	}
}

static void swap_u32s(uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint32_t v;

		memcpy(&v, p + i * 4, 4);
		v = __builtin_bswap32(v);
		memcpy(p + i * 4, &v, 4);
	}
}

/* Offset of the sample_id trailer after the NUL-terminated name at NAME. */
static size_t after_name(const uint8_t *body, size_t len, size_t name)
{
	const uint8_t *nul = name < len ? memchr(body + name, 0, len - name) : NULL;

	return nul ? name + ((nul - (body + name) + 1 + 7) & ~(size_t)7) : len;
}

/*
 * Swap the fixed fields of the records the reader knows into host order.
 * Samples and sample_id trailers are swapped as u64 words (u32 pairs are
 * resolved by pd_parse_sample, as perf does); names stay as they are.
 */
/* Where FIELD of record struct T lies after the header, and where T's fixed part ends. */
#define BODY(t, field)	(offsetof(struct t, field) - sizeof(struct perf_event_header))
#define BODY_END(t)	(sizeof(struct t) - sizeof(struct perf_event_header))

static void swap_record(struct perf_event_header *h)
{
	uint8_t *b = (uint8_t *)(h + 1);
	size_t len = h->size - sizeof(*h), tail = len;

	switch (h->type) {
	case PERF_RECORD_SAMPLE:
		tail = 0;
		break;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		if (len >= BODY_END(perf_record_fork)) {
			swap_u32s(b, 4);	/* pid, ppid, tid, ptid */
			swap_words(b + BODY(perf_record_fork, time), 1);
			tail = BODY_END(perf_record_fork);
		}
		break;
	case PERF_RECORD_COMM:
		if (len >= BODY(perf_record_comm, comm)) {
			swap_u32s(b, 2);	/* pid, tid */
			tail = after_name(b, len, BODY(perf_record_comm, comm));
		}
		break;
	case PERF_RECORD_MMAP:
		if (len >= BODY(perf_record_mmap, filename)) {
			swap_u32s(b, 2);
			swap_words(b + BODY(perf_record_mmap, start), 3);	/* start, len, pgoff */
			tail = after_name(b, len, BODY(perf_record_mmap, filename));
		}
		break;
	case PERF_RECORD_MMAP2:
		if (len >= BODY(perf_record_mmap2, filename)) {
			swap_u32s(b, 2);
			swap_words(b + BODY(perf_record_mmap2, start), 3);
			/* maj, min (or the build id's head) */
			swap_u32s(b + BODY(perf_record_mmap2, maj), 2);
			swap_words(b + BODY(perf_record_mmap2, ino), 2);	/* ino, ino_generation */
			swap_u32s(b + BODY(perf_record_mmap2, prot), 2);	/* prot, flags */
			tail = after_name(b, len, BODY(perf_record_mmap2, filename));
		}
		break;
	case PERF_RECORD_LOST:
		if (len >= BODY_END(perf_record_lost)) {
			swap_words(b, 2);	/* id, lost */
			tail = BODY_END(perf_record_lost);
		}
		break;
	case PERF_RECORD_LOST_SAMPLES:
		if (len >= BODY_END(perf_record_lost_samples)) {
			swap_words(b, 1);
			tail = BODY_END(perf_record_lost_samples);
		}
		break;
	}
	if (tail < len)
		swap_words(b + tail, (len - tail) / 8);
}

int pd_next_record(const struct pd_file *f, uint64_t *pos,
		   const struct perf_event_header **rec, void *scratch,
		   char *err, size_t errlen)
{
	struct perf_event_header h;
	const uint8_t *p;

	if (*pos >= f->data_size)
		return 0;
	if (f->data_size - *pos < sizeof(h))
		return PD_ERR("truncated record at offset %llu",
			      (unsigned long long)(f->data_offset + *pos));
	p = f->map + f->data_offset + *pos;
	memcpy(&h, p, sizeof(h));
	if (f->needs_swap) {
		h.type = __builtin_bswap32(h.type);
		h.misc = __builtin_bswap16(h.misc);
		h.size = __builtin_bswap16(h.size);
	}
	if (h.size < sizeof(h) || h.size > f->data_size - *pos)
		return PD_ERR("bad record size %u at offset %llu", h.size,
			      (unsigned long long)(f->data_offset + *pos));
	/* Always copy: records in the file need not be 8-byte aligned. */
	memcpy(scratch, p, h.size);
	memcpy(scratch, &h, sizeof(h));
	if (f->needs_swap)
		swap_record(scratch);
	*rec = scratch;
	*pos += h.size;
	return 1;
}

const struct pd_event *pd_event_by_id(const struct pd_file *f, uint64_t id)
{
	for (size_t i = 0; i < f->nr_events; i++)
		for (size_t j = 0; j < f->events[i].nr_ids; j++)
			if (f->events[i].ids[j] == id)
				return &f->events[i];
	return f->nr_events == 1 ? &f->events[0] : NULL;
}

/*
 * Two u32 in one sample word.  A swapped file's word was byte-reversed as a
 * whole, which also exchanged the two halves.
 */
static void u32_pair(bool swapped, const uint64_t *w, uint32_t *first, uint32_t *second)
{
	uint32_t a, b;

	memcpy(&a, w, 4);
	memcpy(&b, (const uint8_t *)w + 4, 4);
	*first = swapped ? b : a;
	*second = swapped ? a : b;
}

#define SUPPORTED_SAMPLE (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | \
	PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | \
	PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW | \
	PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER)

/* A sample's words being read: every take is bounds-checked. */
struct words {
	const uint64_t *p;
	size_t i, n;
	bool swapped;
};

#define TAKE(w, x) do { if ((w)->i >= (w)->n) return -1; (x) = (w)->p[(w)->i++]; } while (0)

static int take_pair(struct words *w, uint32_t *a, uint32_t *b)
{
	if (w->i >= w->n)
		return -1;
	u32_pair(w->swapped, &w->p[w->i++], a, b);
	return 0;
}

/* u32 size, then the bytes; 4 + size is a multiple of 8. */
static int take_raw(struct words *w, struct pd_sample *s)
{
	uint32_t res;

	if (w->i >= w->n)
		return -1;
	u32_pair(w->swapped, &w->p[w->i], &s->raw_size, &res);
	if (s->raw_size > (w->n - w->i) * 8 - 4)
		return -1;
	s->raw = (const uint8_t *)&w->p[w->i] + 4;
	w->i += (4 + (uint64_t)s->raw_size + 7) / 8;
	return 0;
}

/* u64 abi, then (abi != 0) one u64 per register of the mask. */
static int take_uregs(struct words *w, uint64_t mask, struct pd_sample *s)
{
	size_t nr = __builtin_popcountll(mask);

	TAKE(w, s->uregs_abi);
	if (!s->uregs_abi)
		return 0;
	if (nr > w->n - w->i)
		return -1;
	s->uregs = w->p + w->i;
	w->i += nr;
	return 0;
}

/* u64 size, the bytes, then (size != 0) u64 dyn_size. */
static int take_stack(struct words *w, struct pd_sample *s)
{
	TAKE(w, s->stack_size);
	if (!s->stack_size)
		return 0;
	if (s->stack_size % 8 || s->stack_size / 8 >= w->n - w->i)
		return -1;
	s->stack = (const uint8_t *)(w->p + w->i);
	w->i += s->stack_size / 8;
	TAKE(w, s->stack_dyn);
	return s->stack_dyn > s->stack_size ? -1 : 0;
}

/* Fields in perf's order (evsel__parse_sample) for the bits we support. */
int pd_parse_sample_attr(const struct perf_event_attr *attr, bool swapped,
			 const struct perf_event_header *rec, struct pd_sample *s)
{
	struct words w = { (const uint64_t *)(rec + 1), 0, 0, swapped };
	uint64_t type = attr->sample_type;
	uint32_t res;

	memset(s, 0, sizeof(*s));
	if (rec->type != PERF_RECORD_SAMPLE || rec->size < sizeof(*rec) ||
	    type & ~(uint64_t)SUPPORTED_SAMPLE)
		return -1;
	w.n = (rec->size - sizeof(*rec)) / 8;
	if (type & PERF_SAMPLE_IDENTIFIER)
		TAKE(&w, s->id);
	if (type & PERF_SAMPLE_IP)
		TAKE(&w, s->ip);
	if (type & PERF_SAMPLE_TID && take_pair(&w, &s->pid, &s->tid))
		return -1;
	if (type & PERF_SAMPLE_TIME)
		TAKE(&w, s->time);
	if (type & PERF_SAMPLE_ADDR)
		TAKE(&w, s->addr);
	if (type & PERF_SAMPLE_ID)
		TAKE(&w, s->id);
	if (type & PERF_SAMPLE_STREAM_ID)
		TAKE(&w, s->stream_id);
	if (type & PERF_SAMPLE_CPU && take_pair(&w, &s->cpu, &res))
		return -1;
	if (type & PERF_SAMPLE_PERIOD)
		TAKE(&w, s->period);
	if (type & PERF_SAMPLE_CALLCHAIN) {
		TAKE(&w, s->nr);
		if (s->nr > w.n - w.i)
			return -1;
		s->ips = w.p + w.i;
		w.i += s->nr;
	}
	if (type & PERF_SAMPLE_RAW && take_raw(&w, s))
		return -1;
	if (type & PERF_SAMPLE_REGS_USER && take_uregs(&w, attr->sample_regs_user, s))
		return -1;
	if (type & PERF_SAMPLE_STACK_USER && take_stack(&w, s))
		return -1;
	return 0;
}
#undef TAKE

int pd_parse_sample(const struct pd_file *f, const struct perf_event_header *rec,
		    struct pd_sample *s)
{
	const uint64_t *p = (const uint64_t *)(rec + 1);
	const struct pd_event *e;

	memset(s, 0, sizeof(*s));
	if (rec->type != PERF_RECORD_SAMPLE || rec->size < sizeof(*rec) || !f->nr_events)
		return -1;
	/* Without IDENTIFIER the sample cannot name its event: only one. */
	e = f->nr_events == 1 ? &f->events[0] : NULL;
	if (!e || (e->attr.sample_type & PERF_SAMPLE_IDENTIFIER)) {
		if (rec->size < sizeof(*rec) + 8)
			return -1;
		e = pd_event_by_id(f, p[0]);
		if (!e || !(e->attr.sample_type & PERF_SAMPLE_IDENTIFIER))
			return -1;
	}
	return pd_parse_sample_attr(&e->attr, f->needs_swap, rec, s);
}
