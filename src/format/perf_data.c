// SPDX-License-Identifier: GPL-2.0
/*
 * perf.data writer (file mode, PERFILE2).  Formats follow perf's
 * tools/perf/util/header.c: perf_file_header, perf_file_attr, the feature
 * index of perf_file_section after the data, do_write_string padding.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "format/perf_data.h"

#define NAME_ALIGN	64
#define BUF_SIZE	(64 * 1024)

/* A growable byte buffer for feature contents. */
struct blob {
	uint8_t *p;
	size_t len, cap;
};

struct pd_writer {
	char *path, *tmp;
	int fd;
	int err;		/* first errno of a failed write */
	int salvaged;		/* the error after which the file was cut short */
	uint8_t buf[BUF_SIZE];
	size_t fill;
	uint64_t off;		/* file offset of buf[0] */
	uint64_t data_size;
	uint64_t rec_end;	/* file offset after the last record appended */
	uint64_t safe_end;	/* ... after the last record known to be on disk */
	struct pd_event *events;
	size_t nr_events;
	struct blob feat[MAX_FEAT];
	uint64_t feat_set[MAX_FEAT / 64];
};

static int blob_put(struct blob *b, const void *p, size_t n)
{
	if (b->len + n > b->cap) {
		size_t cap = (b->len + n) * 2 + 64;
		uint8_t *np = realloc(b->p, cap);

		if (!np)
			return -1;
		b->p = np;
		b->cap = cap;
	}
	memcpy(b->p + b->len, p, n);
	b->len += n;
	return 0;
}

/* perf's do_write_string: u32 length (padded), string, NUL padding. */
static int blob_string(struct blob *b, const char *s)
{
	uint32_t len = strlen(s) + 1, padded = (len + NAME_ALIGN - 1) & ~(NAME_ALIGN - 1);
	static const char zero[NAME_ALIGN];

	return blob_put(b, &padded, 4) || blob_put(b, s, len) ||
	       blob_put(b, zero, padded - len);
}

static struct blob *feature(struct pd_writer *w, enum pd_feature f)
{
	w->feat_set[f / 64] |= 1ull << (f % 64);
	w->feat[f].len = 0;
	return &w->feat[f];
}

static int flush_buf(struct pd_writer *w)
{
	size_t done = 0;

	while (!w->err && done < w->fill) {
		ssize_t n = pwrite(w->fd, w->buf + done, w->fill - done, w->off + done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			w->err = n < 0 ? errno : ENOSPC;
		else
			done += n;
	}
	w->off += w->fill;
	w->fill = 0;
	if (!w->err && w->rec_end <= w->off)
		w->safe_end = w->rec_end;
	return w->err ? -1 : 0;
}

static int put(struct pd_writer *w, const void *p, size_t n)
{
	const uint8_t *s = p;

	while (n && !w->err) {
		size_t k = BUF_SIZE - w->fill < n ? BUF_SIZE - w->fill : n;

		memcpy(w->buf + w->fill, s, k);
		w->fill += k;
		s += k;
		n -= k;
		if (w->fill == BUF_SIZE)
			flush_buf(w);
	}
	return w->err ? -1 : 0;
}

/*
 * Replace the trailing XXXXXX of TMP with random characters and create it:
 * O_EXCL|O_NOFOLLOW so nothing planted there (a symlink) is ever written
 * through, mode 0600 as perf's, O_CLOEXEC so a profiled command does not
 * inherit it.
 */
static int create_tmp(char *tmp)
{
	static const char chars[] =
		"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	char *x = tmp + strlen(tmp) - 6;

	for (int tries = 0; tries < 100; tries++) {
		uint8_t r[6];
		int fd;

		if (getrandom(r, sizeof(r), GRND_NONBLOCK) != sizeof(r)) {
			struct timespec ts;
			uint64_t v;

			clock_gettime(CLOCK_MONOTONIC, &ts);
			v = ts.tv_nsec ^ (uint64_t)ts.tv_sec << 30 ^ (uint64_t)getpid() << 20;
			v += tries * 0x9e3779b97f4a7c15ull;
			memcpy(r, &v, sizeof(r));
		}
		for (int i = 0; i < 6; i++)
			x[i] = chars[r[i] % (sizeof(chars) - 1)];
		fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0 || errno != EEXIST)
			return fd;
	}
	errno = EEXIST;
	return -1;
}

int pd_check_output(const char *path)
{
	struct stat st;

	if (!*path)
		return ENOENT;
	if (!stat(path, &st) && S_ISDIR(st.st_mode))
		return EISDIR;
	/* A device or fifo would be replaced by the final rename. */
	if (!lstat(path, &st) && !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode))
		return EINVAL;
	return 0;
}

struct pd_writer *pd_open(const char *path)
{
	struct pd_writer *w;
	int e;

	e = pd_check_output(path);
	if (e) {
		errno = e;
		return NULL;
	}
	w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->path = strdup(path);
	if (!w->path || asprintf(&w->tmp, "%s.tmp.XXXXXX", path) < 0)
		goto fail;
	w->fd = create_tmp(w->tmp);
	if (w->fd < 0)
		goto fail;
	/* The header is rewritten at the end; the data starts after it. */
	w->off = w->rec_end = w->safe_end = sizeof(struct pd_file_header);
	return w;
fail:
	e = errno;
	free(w->path);
	free(w->tmp);
	free(w);
	errno = e;
	return NULL;
}

int pd_add_event(struct pd_writer *w, const char *name,
		 const struct perf_event_attr *attr, const uint64_t *ids,
		 size_t nr_ids)
{
	struct pd_event *n = realloc(w->events, (w->nr_events + 1) * sizeof(*n));
	struct pd_event *e;

	if (!n)
		return -1;
	w->events = n;
	e = &n[w->nr_events];
	memset(e, 0, sizeof(*e));
	/* Fields past PD_ATTR_SIZE are dropped: see perf_data.h. */
	memcpy(&e->attr, attr, PD_ATTR_SIZE);
	e->attr.size = PD_ATTR_SIZE;
	e->name = strdup(name);
	e->ids = malloc((nr_ids ? nr_ids : 1) * sizeof(uint64_t));
	if (!e->name || !e->ids) {
		free(e->name);
		free(e->ids);
		return -1;
	}
	memcpy(e->ids, ids, nr_ids * sizeof(uint64_t));
	e->nr_ids = nr_ids;
	w->nr_events++;
	return 0;
}

int pd_write(struct pd_writer *w, const struct perf_event_header *rec)
{
	if (rec->size < sizeof(*rec)) {
		errno = EINVAL;
		return -1;
	}
	if (put(w, rec, rec->size)) {
		errno = w->err;
		return -1;
	}
	w->data_size += rec->size;
	w->rec_end = w->off + w->fill;
	return 0;
}

/* Rounds also flush: what is on disk stays usable if the disk fills up. */
int pd_finish_round(struct pd_writer *w)
{
	struct perf_event_header h = { PD_RECORD_FINISHED_ROUND, 0, sizeof(h) };

	if (pd_write(w, &h))
		return -1;
	if (flush_buf(w)) {
		errno = w->err;
		return -1;
	}
	return 0;
}

int pd_set_string(struct pd_writer *w, enum pd_feature f, const char *s)
{
	return blob_string(feature(w, f), s);
}

int pd_set_nrcpus(struct pd_writer *w, uint32_t available, uint32_t online)
{
	struct blob *b = feature(w, PD_FEAT_NRCPUS);

	return blob_put(b, &available, 4) || blob_put(b, &online, 4);
}

int pd_set_total_mem(struct pd_writer *w, uint64_t kib)
{
	return blob_put(feature(w, PD_FEAT_TOTAL_MEM), &kib, 8);
}

int pd_set_cmdline(struct pd_writer *w, int argc, char *const argv[])
{
	struct blob *b = feature(w, PD_FEAT_CMDLINE);
	uint32_t n = argc;
	int err = blob_put(b, &n, 4);

	for (int i = 0; i < argc && !err; i++)
		err = blob_string(b, argv[i]);
	return err;
}

int pd_set_clock_res(struct pd_writer *w, uint64_t res_ns)
{
	return blob_put(feature(w, PD_FEAT_CLOCKID), &res_ns, 8);
}

int pd_set_clock_data(struct pd_writer *w, uint32_t clockid,
		      uint64_t realtime_ns, uint64_t clock_ns)
{
	struct blob *b = feature(w, PD_FEAT_CLOCK_DATA);
	uint32_t version = 1;

	return blob_put(b, &version, 4) || blob_put(b, &clockid, 4) ||
	       blob_put(b, &realtime_ns, 8) || blob_put(b, &clock_ns, 8);
}

/* A struct perf_record_build_id, the file name padded to NAME_ALIGN. */
int pd_add_build_id(struct pd_writer *w, uint16_t misc, int32_t pid,
		    const uint8_t *id, size_t id_len, const char *filename)
{
	struct blob *b = &w->feat[PD_FEAT_BUILD_ID];
	size_t len = strlen(filename) + 1;
	size_t padded = (len + NAME_ALIGN - 1) & ~(size_t)(NAME_ALIGN - 1);
	struct perf_record_build_id e;
	static const char zero[NAME_ALIGN];

	if (id_len > sizeof(e.build_id))
		return -1;
	w->feat_set[PD_FEAT_BUILD_ID / 64] |= 1ull << (PD_FEAT_BUILD_ID % 64);
	memset(&e, 0, sizeof(e));
	e.header.type = 0;
	e.header.misc = misc | PERF_RECORD_MISC_BUILD_ID_SIZE;
	e.header.size = sizeof(e) + padded;
	e.pid = pid;
	memcpy(e.build_id, id, id_len);
	e.size = id_len;
	return blob_put(b, &e, sizeof(e)) || blob_put(b, filename, len) ||
	       blob_put(b, zero, padded - len);
}

int pd_set_path(struct pd_writer *w, const char *path)
{
	char *p = strdup(path);

	if (!p)
		return -1;
	free(w->path);
	w->path = p;
	return 0;
}

uint64_t pd_data_size(const struct pd_writer *w)
{
	return w->data_size;
}

static int write_event_desc(struct pd_writer *w)
{
	struct blob *b = feature(w, PD_FEAT_EVENT_DESC);
	uint32_t nr = w->nr_events, sz = PD_ATTR_SIZE;
	int err = blob_put(b, &nr, 4) || blob_put(b, &sz, 4);

	for (size_t i = 0; i < w->nr_events && !err; i++) {
		struct pd_event *e = &w->events[i];
		uint32_t n = e->nr_ids;

		err = blob_put(b, &e->attr, sz) || blob_put(b, &n, 4) ||
		      blob_string(b, e->name) || blob_put(b, e->ids, n * 8);
	}
	return err;
}

/* Attr section (after the features): id arrays, then perf_file_attr[]. */
static int write_attrs(struct pd_writer *w, struct pd_section *attrs)
{
	uint64_t *id_off = calloc(w->nr_events + 1, sizeof(uint64_t));
	int err = !id_off;

	for (size_t i = 0; i < w->nr_events && !err; i++) {
		id_off[i] = w->off + w->fill;
		err = put(w, w->events[i].ids, w->events[i].nr_ids * 8);
	}
	attrs->offset = w->off + w->fill;
	for (size_t i = 0; i < w->nr_events && !err; i++) {
		struct pd_file_attr fa;

		memcpy(fa.attr, &w->events[i].attr, PD_ATTR_SIZE);
		fa.ids.offset = id_off[i];
		fa.ids.size = w->events[i].nr_ids * 8;
		err = put(w, &fa, sizeof(fa));
	}
	attrs->size = w->nr_events * sizeof(struct pd_file_attr);
	free(id_off);
	return err ? -1 : 0;
}

/* Feature index (one section per set bit, ascending), then the contents. */
static int write_features(struct pd_writer *w)
{
	struct pd_section idx[MAX_FEAT];
	uint64_t idx_off = w->off + w->fill, pos;
	int n = 0;

	for (int f = 0; f < MAX_FEAT; f++)
		if (w->feat_set[f / 64] & (1ull << (f % 64)))
			n++;
	pos = idx_off + n * sizeof(struct pd_section);
	n = 0;
	for (int f = 0; f < MAX_FEAT; f++) {
		if (!(w->feat_set[f / 64] & (1ull << (f % 64))))
			continue;
		idx[n].offset = pos;
		idx[n].size = w->feat[f].len;
		pos += w->feat[f].len;
		n++;
	}
	if (put(w, idx, n * sizeof(idx[0])))
		return -1;
	for (int f = 0; f < MAX_FEAT; f++)
		if ((w->feat_set[f / 64] & (1ull << (f % 64))) && put(w, w->feat[f].p, w->feat[f].len))
			return -1;
	return 0;
}

static int write_header(struct pd_writer *w, const struct pd_section *attrs)
{
	struct pd_file_header h = {
		.magic = PERF_MAGIC2,
		.size = sizeof(h),
		.attr_size = sizeof(struct pd_file_attr),
		.attrs = *attrs,
		.data = { sizeof(h), w->data_size },
	};

	memcpy(h.adds_features, w->feat_set, sizeof(h.adds_features));
	if (flush_buf(w))
		return -1;
	/* Through the buffer: its loop handles short writes. */
	w->off = 0;
	return put(w, &h, sizeof(h)) || flush_buf(w) ? -1 : 0;
}

static void free_writer(struct pd_writer *w)
{
	for (size_t i = 0; i < w->nr_events; i++) {
		free(w->events[i].name);
		free(w->events[i].ids);
	}
	for (int f = 0; f < MAX_FEAT; f++)
		free(w->feat[f].p);
	free(w->events);
	free(w->path);
	free(w->tmp);
	free(w);
}

/*
 * After a write error (disk full), keep the records known to be on disk:
 * cut the file after the last whole one, which frees the space the tail
 * took, and try once more to write the rest of a valid file there.
 */
static int salvage(struct pd_writer *w)
{
	if (ftruncate(w->fd, w->safe_end))
		return -1;
	w->salvaged = w->err;
	w->err = 0;
	w->fill = 0;
	w->off = w->safe_end;
	w->data_size = w->safe_end - sizeof(struct pd_file_header);
	return 0;
}

static int write_meta(struct pd_writer *w)
{
	struct pd_section attrs;

	/* perf looks for the feature index right after the data section. */
	return write_event_desc(w) || write_features(w) || write_attrs(w, &attrs) ||
	       write_header(w, &attrs) ? -1 : 0;
}

static int finish(struct pd_writer *w)
{
	char *old;
	int e;

	if (flush_buf(w) || write_meta(w)) {
		e = w->err;
		if (salvage(w) || write_meta(w)) {
			w->err = w->err ? w->err : e;
			return -1;
		}
	}
	if (fsync(w->fd)) {
		w->err = errno;
		return -1;
	}
	if (asprintf(&old, "%s.old", w->path) < 0) {
		w->err = ENOMEM;
		return -1;
	}
	/* Keep the previous recording as PATH.old, as perf does. */
	if (rename(w->path, old) && errno != ENOENT) {
		e = errno;
		free(old);
		w->err = e;
		return -1;
	}
	free(old);
	if (rename(w->tmp, w->path)) {
		w->err = errno;
		return -1;
	}
	return 0;
}

int pd_close(struct pd_writer *w)
{
	int err = finish(w), e = w->err;

	if (err) {
		fprintf(stderr, "offcpu: %s: %s\n", w->path, strerror(e ? e : EIO));
		unlink(w->tmp);
	} else if (w->salvaged) {
		fprintf(stderr, "offcpu: %s: %s: kept the first %.3f MB of data\n", w->path,
			strerror(w->salvaged), w->data_size / 1048576.0);
		e = w->salvaged;
		err = -1;
	}
	close(w->fd);
	free_writer(w);
	if (err)
		errno = e;
	return err ? -1 : 0;
}

void pd_abort(struct pd_writer *w)
{
	if (!w)
		return;
	close(w->fd);
	unlink(w->tmp);
	free_writer(w);
}
