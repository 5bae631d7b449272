// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of src/format/perf_data.c and src/format/perf_data_reader.c: writer/reader round trip of every record
 * and feature we write, the same file in the other byte order, truncated and
 * corrupted inputs, output file safety (0600, planted symlink, PATH.old,
 * abort) and write errors (/dev/full, a full tmpfs).  Prints "PASS name",
 * "FAIL name: why" or "SKIP name: why" lines for tests/t_unit.sh.
 */
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "format/perf_data_reader.h"
#include "swap_perf_data.h"

static char dir[] = "/tmp/offcpu-unit-pd.XXXXXX";
static void path_of(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", dir, name);
}

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *fp = fopen(path, "rb");
	uint8_t *buf = NULL;
	long n;

	if (!fp)
		return NULL;
	if (!fseek(fp, 0, SEEK_END) && (n = ftell(fp)) > 0 && !fseek(fp, 0, SEEK_SET)) {
		buf = malloc(n);
		if (buf && fread(buf, 1, n, fp) != (size_t)n) {
			free(buf);
			buf = NULL;
		}
		*len = n;
	}
	fclose(fp);
	return buf;
}

/* ---- the reference file ---- */

enum { ID_OFF = 77, ID_D0 = 5, ID_D1 = 6, ID_FULL = 900 };

#define SID_TYPE (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU)
#define OFF_TYPE (SID_TYPE | PERF_SAMPLE_IP | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN)
#define FULL_TYPE (OFF_TYPE | PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | \
		   PERF_SAMPLE_RAW)

static struct perf_event_attr attrs[3];
static const char *const names[3] = { "offcpu-time", "dummy:u", "full" };
static const uint64_t ids0[] = { ID_OFF }, ids1[] = { ID_D0, ID_D1 }, ids2[] = { ID_FULL };
static const uint64_t *const ids[3] = { ids0, ids1, ids2 };
static const size_t nr_ids[3] = { 1, 2, 1 };
static char *cmdline[] = { "/usr/bin/offcpu", "-o", "x.data", "--", "sleep", "1" };
static const uint8_t bid[20] = { 0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6, 7, 8, 9 };

/* Records as written, for comparison. */
static uint64_t recs[8][64];
static int nr_recs;

static void init_attrs(void)
{
	struct perf_event_attr *a = attrs;

	memset(attrs, 0, sizeof(attrs));
	a[0].type = PERF_TYPE_SOFTWARE;
	a[0].size = sizeof(a[0]);
	a[0].config = PERF_COUNT_SW_BPF_OUTPUT;
	a[0].sample_period = 1;
	a[0].sample_type = OFF_TYPE;
	a[0].sample_id_all = 1;
	a[0].exclude_kernel = 1;
	a[0].use_clockid = 1;
	a[0].clockid = 1;
	a[0].wakeup_events = 3;
	a[0].sample_max_stack = 127;
	a[1] = a[0];
	a[1].config = PERF_COUNT_SW_DUMMY;
	a[1].sample_type = SID_TYPE;
	a[1].comm = a[1].mmap = a[1].mmap2 = a[1].task = 1;
	a[1].exclude_kernel = 0;
	a[2] = a[0];
	a[2].sample_type = FULL_TYPE;
	a[2].config1 = 0x1122334455667788ull;
}

/* The sample_id trailer of the dummy event. */
static uint64_t *sid(uint64_t *p, uint64_t time)
{
	*p++ = 42 | 43ull << 32;
	*p++ = time;
	*p++ = 3;
	*p++ = ID_D1;
	return p;
}

static void add_rec(uint32_t type, uint16_t misc, uint64_t *end)
{
	uint64_t *r = recs[nr_recs++];

	*(struct perf_event_header *)r = (struct perf_event_header){ type, misc,
		(end - r) * 8 };
}

static void build_records(void)
{
	uint64_t *p;

	memset(recs, 0, sizeof(recs));
	nr_recs = 0;
	p = recs[nr_recs] + 1;				/* COMM */
	*p++ = 42 | 43ull << 32;
	memcpy(p, "blocker", 8);
	p = sid(p + 1, 100);
	add_rec(PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC, p);

	p = recs[nr_recs] + 1;				/* MMAP2 */
	*p++ = 42 | 43ull << 32;
	*p++ = 0x400000;
	*p++ = 0x2000;
	*p++ = 0x1000;
	*p++ = 8 | 1ull << 32;				/* maj, min */
	*p++ = 123456;
	*p++ = 7;
	*p++ = 5 | 2ull << 32;				/* prot, flags */
	memcpy(p, "/usr/bin/blocker", 17);
	p = sid(p + 3, 200);
	add_rec(PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER, p);

	p = recs[nr_recs] + 1;				/* FORK */
	*p++ = 44 | 42ull << 32;
	*p++ = 45 | 43ull << 32;
	*p++ = 250;
	p = sid(p, 250);
	add_rec(PERF_RECORD_FORK, 0, p);

	p = recs[nr_recs] + 1;				/* SAMPLE, offcpu-time */
	*p++ = ID_OFF;
	*p++ = 0x401000;
	*p++ = 42 | 43ull << 32;
	*p++ = 1000;
	*p++ = 1 | 0xabcdull << 32;			/* cpu, res */
	*p++ = 123456789;
	*p++ = 4;
	*p++ = PERF_CONTEXT_USER;
	*p++ = 0x401000;
	*p++ = 0x401100;
	*p++ = 0x401200;
	add_rec(PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, p);

	p = recs[nr_recs] + 1;				/* SAMPLE, every field */
	*p++ = ID_FULL;
	*p++ = 0xffffffff81000000ull;
	*p++ = 7 | 8ull << 32;
	*p++ = 2000;
	*p++ = 0xdead;					/* addr */
	*p++ = ID_FULL;					/* id */
	*p++ = 0x5151;					/* stream_id */
	*p++ = 9;
	*p++ = 555;
	*p++ = 2;
	*p++ = PERF_CONTEXT_KERNEL;
	*p++ = 0xffffffff81000000ull;
	memcpy(p, "\x0c\0\0\0raw-payload", 16);	/* u32 size 12 (LE host), 12 bytes */
	if (*(const uint8_t *)p != 12)
		((uint32_t *)p)[0] = 12;		/* big-endian host */
	p += 2;
	add_rec(PERF_RECORD_SAMPLE, PERF_RECORD_MISC_KERNEL, p);

	p = recs[nr_recs] + 1;				/* LOST_SAMPLES */
	*p++ = 17;
	p = sid(p, 3000);
	add_rec(PERF_RECORD_LOST_SAMPLES, 0, p);

	p = recs[nr_recs] + 1;				/* EXIT */
	*p++ = 44 | 42ull << 32;
	*p++ = 45 | 43ull << 32;
	*p++ = 4000;
	p = sid(p, 4000);
	add_rec(PERF_RECORD_EXIT, 0, p);
}

static int set_features(struct pd_writer *w, const char *host)
{
	return pd_set_string(w, PD_FEAT_HOSTNAME, host) ||
	       pd_set_string(w, PD_FEAT_OSRELEASE, "6.1.0-unit") ||
	       pd_set_string(w, PD_FEAT_ARCH, "x86_64") ||
	       /* 63 characters + NUL: exactly one NAME_ALIGN block */
	       pd_set_string(w, PD_FEAT_VERSION,
			     "offcpu 0.1.0 ----------------------------------------------- 63") ||
	       pd_set_nrcpus(w, 8, 6) || pd_set_total_mem(w, 16318460) ||
	       pd_set_cmdline(w, 6, cmdline) || pd_set_clock_res(w, 1) ||
	       pd_set_clock_data(w, 1, 1700000000123456789ull, 987654321) ||
	       pd_add_build_id(w, PERF_RECORD_MISC_KERNEL, -1, bid, 20, "[kernel.kallsyms]") ||
	       pd_add_build_id(w, PERF_RECORD_MISC_USER, -1, bid, 8, "/usr/bin/blocker");
}

/* Records first (events added at the end, as the collector does). */
static int write_reference(const char *path, const char *host)
{
	struct pd_writer *w = pd_open(path);
	int err = 0;

	if (!w)
		return -1;
	for (int i = 0; i < nr_recs && !err; i++) {
		err = pd_write(w, (struct perf_event_header *)recs[i]);
		if (i == 2 && !err)
			err = pd_finish_round(w);
	}
	for (int i = 0; i < 3 && !err; i++)
		err = pd_add_event(w, names[i], &attrs[i], ids[i], nr_ids[i]);
	if (err || set_features(w, host)) {
		pd_abort(w);
		return -1;
	}
	return pd_close(w);
}

/* ---- comparisons ---- */

static int e_ok(const struct pd_file *f)
{
	return pd_event_by_id(f, ID_D1) == &f->events[1] &&
	       pd_event_by_id(f, ID_FULL) == &f->events[2] && !pd_event_by_id(f, 12345);
}

static const char *cmp_events(const struct pd_file *f)
{
	static char why[128];

	if (f->nr_events != 3)
		return "number of events";
	for (int i = 0; i < 3; i++) {
		const struct pd_event *e = &f->events[i];
		struct perf_event_attr want = attrs[i];

		want.size = PD_ATTR_SIZE;
		if (memcmp(&e->attr, &want, sizeof(want))) {
			snprintf(why, sizeof(why), "attr %d differs", i);
			return why;
		}
		if (!e->name || strcmp(e->name, names[i]))
			return "event name";
		if (e->nr_ids != nr_ids[i] || memcmp(e->ids, ids[i], nr_ids[i] * 8))
			return "ids";
	}
	if (!e_ok(f))
		return "pd_event_by_id";
	return NULL;
}

static const char *cmp_features(const struct pd_file *f)
{
	const struct pd_build_id *b = f->build_ids;

	if (!f->hostname || strcmp(f->hostname, "unit-host") || !f->osrelease ||
	    strcmp(f->osrelease, "6.1.0-unit") || !f->arch || strcmp(f->arch, "x86_64") ||
	    !f->version || strncmp(f->version, "offcpu 0.1.0 ---", 16) ||
	    strlen(f->version) != 63)
		return "string features";
	if (f->nr_cpus_avail != 8 || f->nr_cpus_online != 6 || f->total_mem != 16318460)
		return "nrcpus/total_mem";
	if (f->nr_cmdline != 6)
		return "cmdline count";
	for (int i = 0; i < 6; i++)
		if (strcmp(f->cmdline[i], cmdline[i]))
			return "cmdline";
	if (f->clock_res_ns != 1 || !f->has_clock_data || f->clockid != 1 ||
	    f->tod_ns != 1700000000123456789ull || f->clockid_ns != 987654321)
		return "clock features";
	if (f->nr_build_ids != 2 || b[0].misc != PERF_RECORD_MISC_KERNEL || b[0].pid != -1 ||
	    b[0].id_len != 20 || memcmp(b[0].id, bid, 20) ||
	    strcmp(b[0].filename, "[kernel.kallsyms]") || b[1].misc != PERF_RECORD_MISC_USER ||
	    b[1].id_len != 8 || memcmp(b[1].id, bid, 8) || strcmp(b[1].filename, "/usr/bin/blocker"))
		return "build ids";
	for (int bit = 0; bit < 256; bit++) {
		int want = bit == 2 || (bit >= 3 && bit <= 7) || bit == 10 || bit == 11 ||
			   bit == 12 || bit == 23 || bit == 29;

		if (pd_has_feature(f, bit) != want)
			return "feature bitmap";
	}
	return NULL;
}

/* u32 at byte OFF of the record body (host order after pd_next_record). */
static uint32_t body32(const struct perf_event_header *h, size_t off)
{
	uint32_t v;

	memcpy(&v, (const uint8_t *)(h + 1) + off, 4);
	return v;
}

static uint64_t body64(const struct perf_event_header *h, size_t off)
{
	uint64_t v;

	memcpy(&v, (const uint8_t *)(h + 1) + off, 8);
	return v;
}

static const char *cmp_sample(const struct pd_file *f, const struct perf_event_header *h,
			      int k)
{
	struct pd_sample s;

	if (pd_parse_sample(f, h, &s))
		return "sample does not parse";
	if (k == 3 && (s.id != ID_OFF || s.ip != 0x401000 || s.pid != 42 || s.tid != 43 ||
		       s.time != 1000 || s.cpu != 1 || s.period != 123456789 || s.nr != 4 ||
		       s.ips[0] != PERF_CONTEXT_USER || s.ips[3] != 0x401200))
		return "offcpu sample fields";
	if (k == 4 && (s.id != ID_FULL || s.addr != 0xdead || s.stream_id != 0x5151 ||
		       s.pid != 7 || s.tid != 8 || s.time != 2000 || s.cpu != 9 ||
		       s.period != 555 || s.nr != 2 || s.ips[1] != 0xffffffff81000000ull ||
		       s.raw_size != 12 || (!f->needs_swap && memcmp(s.raw, "raw-payload", 12))))
		return "full sample fields";
	return NULL;
}

/* Every record, fixed fields in host order; the trailer's last words. */
static const char *cmp_records(const struct pd_file *f)
{
	static uint64_t scratch[65536 / 8];
	const struct perf_event_header *h;
	const char *why;
	uint64_t pos = 0;
	char err[128];
	int k = 0, r;

	while ((r = pd_next_record(f, &pos, &h, scratch, err, sizeof(err))) > 0) {
		const struct perf_event_header *w;

		if (h->type == PD_RECORD_FINISHED_ROUND)
			continue;
		if (k >= nr_recs)
			return "too many records";
		w = (const void *)recs[k];
		if (h->type != w->type || h->misc != w->misc || h->size != w->size)
			return "record header";
		if (!f->needs_swap && memcmp(h, w, w->size))
			return "record bytes";
		if (h->type == PERF_RECORD_SAMPLE) {
			if ((why = cmp_sample(f, h, k)))
				return why;
		} else {
			/* Fixed head: first two u32 (pid/tid or pid/ppid). */
			if (body32(h, 0) != body32(w, 0) || body32(h, 4) != body32(w, 4))
				return "record pid/tid";
			/* Trailer: TIME and IDENTIFIER are whole u64. */
			if (body64(h, w->size - 16) != ID_D1 ||
			    body64(h, w->size - 32) != body64(w, w->size - 32))
				return "sample_id trailer";
		}
		if (h->type == PERF_RECORD_MMAP2 &&
		    (body64(h, 8) != 0x400000 || body64(h, 24) != 0x1000 ||
		     body32(h, 32) != 8 || body32(h, 36) != 1 || body64(h, 40) != 123456 ||
		     body32(h, 56) != 5 || body32(h, 60) != 2 ||
		     strcmp((const char *)(h + 1) + 64, "/usr/bin/blocker")))
			return "mmap2 fields";
		if (h->type == PERF_RECORD_COMM && strcmp((const char *)(h + 1) + 8, "blocker"))
			return "comm name";
		if (h->type == PERF_RECORD_FORK && (body32(h, 8) != 45 || body64(h, 16) != 250))
			return "fork fields";
		if (h->type == PERF_RECORD_LOST_SAMPLES && body64(h, 0) != 17)
			return "lost samples";
		k++;
	}
	if (r < 0)
		return err[0] ? "record iteration error" : "?";
	return k == nr_recs ? NULL : "records missing";
}

static void check_file(const char *tag, const struct pd_file *f)
{
	char name[64];
	const char *why;

	snprintf(name, sizeof(name), "%s-events", tag);
	why = cmp_events(f);
	result(name, !why, "%s", why);
	snprintf(name, sizeof(name), "%s-features", tag);
	why = cmp_features(f);
	result(name, !why, "%s", why);
	snprintf(name, sizeof(name), "%s-records", tag);
	why = cmp_records(f);
	result(name, !why, "%s", why);
}

/* ---- tests ---- */

static void test_round_trip(void)
{
	char path[256], err[256];
	uint64_t want = 0;
	struct pd_file f;
	struct stat st;

	path_of(path, sizeof(path), "rt.data");
	umask(0);
	if (write_reference(path, "unit-host")) {
		result("round-trip-write", 0, "%s", strerror(errno));
		return;
	}
	umask(022);
	result("mode-0600", !stat(path, &st) && (st.st_mode & 07777) == 0600,
	       "mode %o (umask 0)", st.st_mode & 07777);
	if (pd_read_file(&f, path, err, sizeof(err))) {
		result("round-trip-read", 0, "%s", err);
		return;
	}
	for (int i = 0; i < nr_recs; i++)
		want += ((struct perf_event_header *)recs[i])->size;
	want += 8;	/* the round */
	result("round-trip-data-size", f.data_offset == 104 && f.data_size == want &&
	       !f.needs_swap, "data at %llu size %llu, want 104 %llu",
	       (unsigned long long)f.data_offset, (unsigned long long)f.data_size,
	       (unsigned long long)want);
	check_file("round-trip", &f);
	pd_file_free(&f);
}

/* What perf expects of the header and the attr section. */
static void test_layout(void)
{
	char path[256];
	uint8_t *buf;
	size_t len;
	uint64_t h[13];

	path_of(path, sizeof(path), "rt.data");
	buf = slurp(path, &len);
	if (!buf || len < 104) {
		result("layout", 0, "cannot read the file");
		free(buf);
		return;
	}
	memcpy(h, buf, sizeof(h));
	result("layout-header", !memcmp(buf, "PERFILE2", 8) && h[1] == 104 &&
	       h[2] == PD_ATTR_SIZE + 16 && h[4] == 3 * h[2] && h[5] == 104 &&
	       h[7] == 0 && h[8] == 0 && h[3] + h[4] <= len && h[5] + h[6] <= h[3],
	       "header fields");
	/* perf reads each attr's size field to find its ids: must match. */
	result("layout-attr-size", h[3] + 8 <= len &&
	       sw_get32(buf + h[3] + 4) == PD_ATTR_SIZE, "attr.size");
	free(buf);
}

static void test_swapped(void)
{
	char path[256], err[256];
	struct pd_file f;
	uint8_t *buf;
	size_t len;

	path_of(path, sizeof(path), "rt.data");
	buf = slurp(path, &len);
	if (!buf || swap_perf_data(buf, len)) {
		result("swapped-build", 0, "cannot swap the reference file");
		free(buf);
		return;
	}
	if (pd_read_mem(&f, buf, len, err, sizeof(err))) {
		result("swapped-read", 0, "%s", err);
		free(buf);
		return;
	}
	result("swapped-detected", f.needs_swap, "needs_swap not set");
	check_file("swapped", &f);
	pd_file_free(&f);
	free(buf);
}

/* Read, iterate and parse everything of BUF (a malloc of exactly LEN). */
static int exercise(const uint8_t *buf, size_t len)
{
	static uint64_t scratch[65536 / 8];
	const struct perf_event_header *h;
	struct pd_sample s;
	struct pd_file f;
	uint64_t pos = 0;
	char err[256];
	int r;

	if (pd_read_mem(&f, buf, len, err, sizeof(err)))
		return -1;
	while ((r = pd_next_record(&f, &pos, &h, scratch, err, sizeof(err))) > 0)
		if (h->type == PERF_RECORD_SAMPLE && !pd_parse_sample(&f, h, &s))
			for (uint64_t i = 0; i < s.nr; i++)
				scratch[0] ^= s.ips[i];
	pd_file_free(&f);
	return r;
}

static void test_robust_one(const char *tag, const uint8_t *ref, size_t len, uint64_t data_end)
{
	char name[64];
	int bad_cut = 0, rejected = 0;
	uint64_t rnd = 0x243f6a8885a308d3ull;

	/* Every truncation: header or data cut short is an error. */
	for (size_t cut = 0; cut < len; cut++) {
		uint8_t *b = malloc(cut ? cut : 1);
		int r;

		memcpy(b, ref, cut);
		r = exercise(b, cut);
		if (cut < data_end && r == 0)
			bad_cut = bad_cut ? bad_cut : (int)cut;
		free(b);
	}
	snprintf(name, sizeof(name), "%s-truncated", tag);
	result(name, !bad_cut, "cut at %d accepted", bad_cut);
	/* Every byte flipped, then random words: must not crash (ASan). */
	for (size_t i = 0; i < len; i++) {
		uint8_t *b = malloc(len);

		memcpy(b, ref, len);
		b[i] ^= 0xff;
		rejected += exercise(b, len) != 0;
		free(b);
	}
	for (int i = 0; i < 20000; i++) {
		uint8_t *b = malloc(len);

		memcpy(b, ref, len);
		for (int j = 0; j < 4; j++) {
			rnd = rnd * 6364136223846793005ull + 1442695040888963407ull;
			size_t at = (rnd >> 20) % (len - 8);
			uint64_t v = rnd >> (rnd & 63);

			memcpy(b + (at & ~7ul), &v, 8);
		}
		exercise(b, len);
		free(b);
	}
	/* No crash (ASan); the intact file read, and corruption noticed. */
	snprintf(name, sizeof(name), "%s-corrupted-no-crash", tag);
	result(name, exercise(ref, len) == 0 && rejected > 0,
	       "intact file: %d, %d of %zu flipped bytes refused", exercise(ref, len), rejected, len);
}

static void test_robust(void)
{
	char path[256];
	uint8_t *buf;
	size_t len;
	uint64_t data_end;

	path_of(path, sizeof(path), "rt.data");
	buf = slurp(path, &len);
	if (!buf) {
		result("robust", 0, "cannot read the reference");
		return;
	}
	data_end = sw_get64(buf + 40) + sw_get64(buf + 48);
	test_robust_one("robust", buf, len, data_end);
	if (!swap_perf_data(buf, len))
		test_robust_one("robust-swapped", buf, len, data_end);
	result("robust-not-perf", exercise((const uint8_t *)"PERFILE2", 8) < 0 &&
	       exercise((const uint8_t *)"", 0) < 0, "accepted");
	free(buf);
}

static int count_dir_entries(const char *prefix)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d)))
		n += !strncmp(e->d_name, prefix, strlen(prefix));
	if (d)
		closedir(d);
	return n;
}

static void test_old_kept(void)
{
	char path[256], old[256], err[256];
	struct pd_file f;
	int ok;

	path_of(path, sizeof(path), "keep.data");
	path_of(old, sizeof(old), "keep.data.old");
	if (write_reference(path, "first") || write_reference(path, "second")) {
		result("old-kept", 0, "write: %s", strerror(errno));
		return;
	}
	ok = !pd_read_file(&f, old, err, sizeof(err)) && f.hostname &&
	     !strcmp(f.hostname, "first");
	pd_file_free(&f);
	ok = ok && !pd_read_file(&f, path, err, sizeof(err)) && f.hostname &&
	     !strcmp(f.hostname, "second");
	pd_file_free(&f);
	result("old-kept", ok, "PATH.old is not the previous file");
	result("no-temp-left", count_dir_entries("keep.data.tmp") == 0, "temp file left");
}

/*
 * A symlink planted at the temporary name is not written through: the
 * random names are made predictable by this getrandom, which overrides
 * libc's for the writer linked into this program.
 */
static int fixed_random;

ssize_t getrandom(void *buf, size_t len, unsigned int flags)
{
	static unsigned int calls;
	uint8_t *b = buf;

	(void)flags;
	calls++;
	for (size_t i = 0; i < len; i++)
		b[i] = fixed_random == 1 ? 0 : (uint8_t)(calls * 131 + i * 17 + getpid());
	if (fixed_random == 1)
		fixed_random = 2;
	return len;
}

static void test_symlink(void)
{
	char path[256], planted[300], target[256];
	struct pd_writer *w;
	struct stat st;

	path_of(path, sizeof(path), "sym.data");
	path_of(target, sizeof(target), "victim");
	/* All-zero random bytes give the suffix "aaaaaa". */
	snprintf(planted, sizeof(planted), "%s.tmp.aaaaaa", path);
	close(open(target, O_CREAT | O_WRONLY, 0644));
	if (symlink(target, planted)) {
		result("symlink-not-followed", 0, "symlink: %s", strerror(errno));
		return;
	}
	fixed_random = 1;
	w = pd_open(path);
	fixed_random = 0;
	if (!w) {
		result("symlink-not-followed", 0, "pd_open: %s", strerror(errno));
		return;
	}
	pd_write(w, (struct perf_event_header *)recs[0]);
	pd_add_event(w, names[1], &attrs[1], ids1, 2);
	pd_close(w);
	result("symlink-not-followed", !lstat(planted, &st) && S_ISLNK(st.st_mode) &&
	       !stat(target, &st) && st.st_size == 0 && !stat(path, &st) && st.st_size > 104,
	       "the planted symlink was written through or replaced");
	unlink(planted);
}

static void test_open_errors(void)
{
	char path[256];
	struct pd_writer *w;

	errno = 0;
	w = pd_open(dir);
	result("open-directory", !w && errno == EISDIR, "errno %d", errno);
	errno = 0;
	w = pd_open("/nonexistent-dir/x.data");
	result("open-missing-dir", !w && errno == ENOENT, "errno %d", errno);
	errno = 0;
	w = pd_open("/proc/version");	/* a directory nobody can create in */
	result("open-unwritable", !w && errno, "accepted");
	errno = 0;
	w = pd_open("/dev/null");
	result("open-device", !w && errno == EINVAL, "errno %d", errno);
	errno = 0;
	w = pd_open("");
	result("open-empty", !w && errno == ENOENT, "errno %d", errno);
	path_of(path, sizeof(path), "abort.data");
	w = pd_open(path);
	if (w) {
		pd_write(w, (struct perf_event_header *)recs[0]);
		pd_abort(w);
	}
	result("abort-removes-temp", w && count_dir_entries("abort.data") == 0, "left files");
	w = pd_open(path);
	if (w) {
		struct perf_event_header h = { PERF_RECORD_COMM, 0, 4 };

		errno = 0;
		result("write-short-record", pd_write(w, &h) == -1 && errno == EINVAL,
		       "accepted a 4-byte record");
		pd_abort(w);
	}
}

/* The writer's fd: the one open on PATH.tmp.*. */
static int writer_fd(const char *path)
{
	char link[300], target[512];
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int fd = -1;

	while (d && (e = readdir(d))) {
		ssize_t n;

		snprintf(link, sizeof(link), "/proc/self/fd/%s", e->d_name);
		n = readlink(link, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = 0;
		if (!strncmp(target, path, strlen(path)) &&
		    !strncmp(target + strlen(path), ".tmp.", 5))
			fd = atoi(e->d_name);
	}
	if (d)
		closedir(d);
	return fd;
}

/* Enough records to pass the 64 KiB buffer a few times. */
static int write_many(struct pd_writer *w, int n, int *first_err)
{
	int failed = 0;

	for (int i = 0; i < n; i++) {
		if (pd_write(w, (struct perf_event_header *)recs[3])) {
			if (!failed)
				*first_err = errno;
			failed++;
		}
		if (i % 1000 == 999 && pd_finish_round(w) && !failed) {
			*first_err = errno;
			failed++;
		}
	}
	return failed;
}

/* Stderr of FN(ARG) into a file; returns its first line in LINE. */
static int with_stderr(char *line, size_t len, int (*fn)(void *), void *arg)
{
	char path[256];
	int saved = dup(2), fd, r;
	FILE *fp;

	path_of(path, sizeof(path), "stderr.txt");
	fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0600);
	dup2(fd, 2);
	close(fd);
	r = fn(arg);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	line[0] = 0;
	fp = fopen(path, "r");
	if (fp) {
		int lines = 0;
		char buf[512];

		while (fgets(buf, sizeof(buf), fp))
			if (lines++ == 0)
				snprintf(line, len, "%s", buf);
		fclose(fp);
		if (lines > 1)
			snprintf(line, len, "%d lines", lines);
	}
	return r;
}

static int close_it(void *w)
{
	int r = pd_close(w);

	if (r)
		r = -errno;
	return r;
}

static void test_dev_full(void)
{
	char path[256], want[300], line[512];
	struct pd_writer *w;
	int fd, full, first_err = 0, failed, r;

	path_of(path, sizeof(path), "full.data");
	w = pd_open(path);
	fd = w ? writer_fd(path) : -1;
	full = open("/dev/full", O_WRONLY);
	if (fd < 0 || full < 0) {
		result("dev-full", 0, "setup (fd %d, /dev/full %d)", fd, full);
		if (w)
			pd_abort(w);
		return;
	}
	dup2(full, fd);
	close(full);
	failed = write_many(w, 2000, &first_err);
	result("dev-full-write-enospc", failed && first_err == ENOSPC,
	       "pd_write: %d failures, errno %d", failed, first_err);
	pd_add_event(w, names[0], &attrs[0], ids0, 1);
	r = with_stderr(line, sizeof(line), close_it, w);
	snprintf(want, sizeof(want), "offcpu: %s: %s\n", path, strerror(ENOSPC));
	result("dev-full-close-enospc", r == -ENOSPC, "pd_close returned %d", r);
	result("dev-full-message", !strcmp(line, want), "stderr '%s'", line);
	result("dev-full-no-file", access(path, F_OK) && count_dir_entries("full.data") == 0,
	       "files left");
}

/* In a child with its own mount namespace: a 64 KiB tmpfs fills up. */
static void tmpfs_child(void)
{
	char mnt[256], path[300], line[512], err[256];
	struct pd_writer *w;
	struct pd_file f;
	int first_err = 0, failed, r;

	path_of(mnt, sizeof(mnt), "mnt");
	mkdir(mnt, 0700);
	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    mount("tmpfs", mnt, "tmpfs", 0, "size=64k")) {
		printf("SKIP full-tmpfs: cannot mount a tmpfs here (%s)\n", strerror(errno));
		return;
	}
	snprintf(path, sizeof(path), "%s/out.data", mnt);
	w = pd_open(path);
	if (!w) {
		result("full-tmpfs", 0, "pd_open: %s", strerror(errno));
		return;
	}
	failed = write_many(w, 20000, &first_err);
	result("full-tmpfs-write-enospc", failed && first_err == ENOSPC,
	       "pd_write: %d failures, errno %d", failed, first_err);
	pd_add_event(w, names[0], &attrs[0], ids0, 1);
	r = with_stderr(line, sizeof(line), close_it, w);
	result("full-tmpfs-close-enospc", r == -ENOSPC, "pd_close returned %d", r);
	result("full-tmpfs-message", !strncmp(line, "offcpu: ", 8) && strstr(line, path) &&
	       strstr(line, strerror(ENOSPC)), "stderr '%s'", line);
	/* What reached the disk is kept as a valid file. */
	r = pd_read_file(&f, path, err, sizeof(err));
	if (!r)
		r = exercise(f.map, f.size);
	result("full-tmpfs-salvaged", !r && f.nr_events == 1, "%s", r ? err : "no events");
	pd_file_free(&f);
	umount(mnt);
}

static void test_full_tmpfs(void)
{
	pid_t pid;
	int status;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		tmpfs_child();
		fflush(stdout);
		_exit(failures ? 1 : 0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		result("full-tmpfs-child", 0, "child died (status %d)", status);
	else if (WEXITSTATUS(status))
		failures++;	/* already reported by the child */
}

/* A file with two events, a COMM, a sample with a callchain, features. */
static int write_sample_file(const char *path)
{
	struct perf_event_attr a = { .type = PERF_TYPE_SOFTWARE, .size = sizeof(a),
		.config = PERF_COUNT_SW_BPF_OUTPUT, .sample_type = PERF_SAMPLE_IDENTIFIER |
		PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
		PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN, .sample_id_all = 1 };
	uint64_t id = 77, dids[2] = { 5, 6 };
	uint64_t s[12] = { 0 };
	struct pd_writer *w = pd_open(path);
	char *argv[] = { "offcpu", "-d", "1" };
	uint8_t bid[20] = { 1, 2, 3 };

	if (!w)
		return -1;
	s[0] = PERF_RECORD_SAMPLE | ((uint64_t)(12 * 8) << 48);
	s[1] = 77;			/* id */
	s[2] = 0x401000;		/* ip */
	s[3] = 42 | (43ull << 32);	/* pid, tid */
	s[4] = 1000;			/* time */
	s[5] = 1;			/* cpu */
	s[6] = 123456789;		/* period */
	s[7] = 4;			/* nr */
	s[8] = PERF_CONTEXT_USER;
	s[9] = 0x401000;
	s[10] = 0x401100;
	s[11] = 0x401200;
	if (pd_write(w, (struct perf_event_header *)s) || pd_finish_round(w))
		return -1;
	pd_add_event(w, "offcpu-time", &a, &id, 1);
	a.config = PERF_COUNT_SW_DUMMY;
	a.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
	pd_add_event(w, "dummy:u", &a, dids, 2);
	pd_set_string(w, PD_FEAT_HOSTNAME, "unit-host");
	pd_set_string(w, PD_FEAT_OSRELEASE, "9.9.9");
	pd_set_string(w, PD_FEAT_ARCH, "x86_64");
	pd_set_nrcpus(w, 4, 2);
	pd_set_cmdline(w, 3, argv);
	pd_add_build_id(w, PERF_RECORD_MISC_USER, -1, bid, 20, "/bin/true");
	return pd_close(w);
}

/* A small file through the reader: events, features, a sample. */
static void test_sample_file(void)
{
	char path[256], err[256];
	struct pd_file f;
	const struct perf_event_header *h;
	static uint64_t scratch[65536 / 8];
	struct pd_sample s;
	uint64_t pos = 0;
	struct stat st;
	int n = 0, ok;

	path_of(path, sizeof(path), "sample.data");
	if (write_sample_file(path)) {
		result("perf-data-write", 0, "%s", strerror(errno));
		return;
	}
	result("perf-data-mode-0600", !stat(path, &st) && (st.st_mode & 0777) == 0600, "mode");
	if (pd_read_file(&f, path, err, sizeof(err))) {
		result("perf-data-read", 0, "%s", err);
		return;
	}
	result("perf-data-events", f.nr_events == 2 && f.events[1].nr_ids == 2 &&
	       f.events[1].ids[1] == 6 && f.events[0].attr.config == PERF_COUNT_SW_BPF_OUTPUT, "events differ");
	result("perf-data-features", f.hostname && !strcmp(f.hostname, "unit-host") &&
	       f.osrelease && !strcmp(f.osrelease, "9.9.9"), "features differ");
	while (pd_next_record(&f, &pos, &h, scratch, err, sizeof(err)) > 0) {
		n++;
		if (h->type != PERF_RECORD_SAMPLE)
			continue;
		ok = !pd_parse_sample(&f, h, &s) && s.pid == 42 && s.tid == 43 &&
		     s.period == 123456789 && s.nr == 4 && s.ips[3] == 0x401200 && s.cpu == 1;
		result("perf-data-sample", ok, "sample fields differ");
	}
	result("perf-data-records", n == 2, "expected a sample and a round");
	pd_file_free(&f);
}

/* Every truncation and many corruptions: an error or success, no crash. */
static void test_sample_file_cuts(void)
{
	char path[256], err[256];
	static uint64_t scratch[65536 / 8];
	uint8_t *buf;
	size_t len;
	FILE *fp;
	int short_accepted = -1, whole_samples = 0;

	path_of(path, sizeof(path), "sample.data");
	fp = fopen(path, "rb");
	if (!fp)
		return;
	buf = malloc(1 << 20);
	len = fread(buf, 1, 1 << 20, fp);
	fclose(fp);
	for (size_t cut = 0; cut <= len; cut++) {
		struct pd_file f;
		const struct perf_event_header *h;
		struct pd_sample s;
		uint64_t pos = 0;
		uint8_t *copy = malloc(cut + 1);

		memcpy(copy, buf, cut);
		/* Flip one byte beyond the header as well, for half the runs. */
		if (cut > 120 && cut % 2)
			copy[cut / 2] ^= 0xff;
		if (!pd_read_mem(&f, copy, cut, err, sizeof(err))) {
			/* Shorter than the file header: must have been refused. */
			if (cut < sizeof(struct perf_event_header) + 96 && short_accepted < 0)
				short_accepted = (int)cut;
			while (pd_next_record(&f, &pos, &h, scratch, err, sizeof(err)) > 0)
				if (h->type == PERF_RECORD_SAMPLE && !pd_parse_sample(&f, h, &s))
					whole_samples += cut == len;
			pd_file_free(&f);
		}
		free(copy);
	}
	free(buf);
	/* No crash (ASan), no header accepted short, the whole file read. */
	result("perf-data-truncated-and-corrupted", short_accepted < 0 && whole_samples > 0,
	       "cut at %d accepted, %d samples in the whole file", short_accepted, whole_samples);
}

static void test_open_refused(void)
{
	char path[256], link[256];
	struct pd_writer *w;

	w = pd_open(dir);
	result("perf-data-open-directory", !w && errno == EISDIR, "directory accepted");
	w = pd_open("/nonexistent/dir/x.data");
	result("perf-data-open-missing-dir", !w, "accepted");
	/* A symlink at the final name is replaced, never written through. */
	path_of(path, sizeof(path), "target");
	path_of(link, sizeof(link), "link.data");
	close(open(path, O_CREAT | O_WRONLY, 0644));
	symlink(path, link);
	write_sample_file(link);
	{
		struct stat st;

		result("perf-data-symlink-not-followed", !stat(path, &st) && st.st_size == 0,
		       "the symlink target was written");
	}
	/* /dev/full: ENOSPC reported, not silently truncated. */
	w = pd_open("/dev/full");
	result("perf-data-dev-full-refused", !w, "a device accepted as output");
	if (w)
		pd_abort(w);
}

/*
 * A sample as the recorder's -F dwarf rings hold it (CALLCHAIN, RAW, then
 * REGS_USER and STACK_USER, perf's order), read by the one sample parser;
 * then every shorter size and a dyn_size past the copy are refused.
 */
static void test_sample_uregs(void)
{
	struct perf_event_attr a = {
		.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_CALLCHAIN |
			       PERF_SAMPLE_RAW | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER,
		.sample_regs_user = (1ull << 7) | (1ull << 16) | (1ull << 3),
	};
	uint64_t r[32] = { 0 };
	struct perf_event_header *h = (void *)r;
	struct pd_sample s;
	size_t i = 1, full;
	bool ok;

	r[i++] = 9;					/* identifier */
	r[i++] = 43ull << 32 | 42;			/* pid, tid */
	r[i++] = 2, r[i++] = 0x1000, r[i++] = 0x2000;	/* callchain */
	r[i++] = 0xaabbccdd00000004ull;			/* raw: size 4, 4 bytes */
	r[i++] = 2;					/* abi */
	r[i++] = 3, r[i++] = 7, r[i++] = 16;		/* regs 3, 7, 16 */
	r[i++] = 16, r[i++] = 0x11, r[i++] = 0x22;	/* stack: size, bytes */
	r[i++] = 8;					/* dyn_size */
	full = i * 8;
	h->type = PERF_RECORD_SAMPLE;
	h->size = full;
	ok = !pd_parse_sample_attr(&a, false, h, &s) && s.id == 9 && s.pid == 42 &&
	     s.tid == 43 && s.nr == 2 && s.ips[1] == 0x2000 && s.raw_size == 4 &&
	     s.uregs_abi == 2 && s.uregs[0] == 3 && s.uregs[2] == 16 &&
	     s.stack_size == 16 && s.stack_dyn == 8 && s.stack[8] == 0x22;
	result("sample-uregs", ok, "fields differ");
	ok = true;
	for (h->size = sizeof(*h); h->size < full; h->size += 8)
		ok &= pd_parse_sample_attr(&a, false, h, &s) == -1;
	result("sample-uregs-short", ok, "a cut sample was read");
	h->size = full;
	r[i - 1] = 24;
	result("sample-uregs-dyn", pd_parse_sample_attr(&a, false, h, &s) == -1, "dyn past copy read");
	r[i - 1] = 8;
	r[7] = 0;	/* abi 0: a kernel thread, no registers; the stack follows */
	memmove(&r[8], &r[11], (i - 11) * 8);
	h->size = full - 24;
	ok = !pd_parse_sample_attr(&a, false, h, &s) && !s.uregs && s.stack_size == 16;
	result("sample-uregs-abi0", ok, "abi 0 misread");
}

int main(void)
{
	char cmd[300];

	if (!mkdtemp(dir))
		return 1;
	setvbuf(stdout, NULL, _IOLBF, 0);
	init_attrs();
	build_records();
	test_round_trip();
	test_layout();
	test_swapped();
	test_robust();
	test_old_kept();
	test_symlink();
	test_open_errors();
	test_dev_full();
	test_full_tmpfs();
	test_sample_file();
	test_sample_file_cuts();
	test_open_refused();
	test_sample_uregs();
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		return 1;
	return failures ? 1 : 0;
}
