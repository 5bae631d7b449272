// SPDX-License-Identifier: GPL-2.0
/* Tracepoint record layouts from tracefs's format files. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#include "record/tracefs.h"

#define FORMAT_MAX	16384	/* sched_switch's is ~2 KiB; longer is not a format */

/* A decimal number of at most 9 digits at *P, then ';'.  Advances P. */
static int number(const char **p, const char *end, uint32_t *v)
{
	const char *s = *p;
	uint32_t n = 0;
	int digits = 0;

	while (s < end && *s >= '0' && *s <= '9' && digits < 9) {
		n = n * 10 + (uint32_t)(*s++ - '0');
		digits++;
	}
	if (!digits || s >= end || *s != ';')
		return -1;
	*p = s + 1;
	*v = n;
	return 0;
}

/* Skip blanks, then expect KEY ("offset:"). */
static int key(const char **p, const char *end, const char *k)
{
	const char *s = *p;
	size_t n = strlen(k);

	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	if ((size_t)(end - s) < n || memcmp(s, k, n))
		return -1;
	*p = s + n;
	return 0;
}

/*
 * The name in a declaration "TYPE NAME", "TYPE NAME[N]" or
 * "__data_loc TYPE[] NAME" (D to E): the last identifier, before a trailing
 * [N].  Returns its start and length in *N.
 */
static const char *decl_name(const char *d, const char *e, size_t *n)
{
	const char *name_end = e, *s;

	while (name_end > d && name_end[-1] == ' ')
		name_end--;
	if (name_end > d && name_end[-1] == ']') {
		while (name_end > d && name_end[-1] != '[')
			name_end--;
		if (name_end > d)
			name_end--;
		while (name_end > d && name_end[-1] == ' ')
			name_end--;
	}
	s = name_end;
	while (s > d && (s[-1] == '_' || (s[-1] >= 'a' && s[-1] <= 'z') ||
			 (s[-1] >= 'A' && s[-1] <= 'Z') || (s[-1] >= '0' && s[-1] <= '9')))
		s--;
	*n = (size_t)(name_end - s);
	return s;
}

/*
 * One line "\tfield:DECL;\toffset:N;\tsize:N;\tsigned:N;" from P to END
 * (the newline or the end).  Returns 0 and the field's name and place, 1
 * for a line that is not a field, -1 for a malformed field line.
 */
static int field_line(const char *p, const char *end, const char **name,
		      size_t *name_len, struct tracefs_field *f)
{
	const char *decl, *semi;

	if (key(&p, end, "field:"))
		return 1;
	decl = p;
	semi = memchr(p, ';', (size_t)(end - p));
	if (!semi)
		return -1;
	*name = decl_name(decl, semi, name_len);
	if (!*name_len)
		return -1;
	p = semi + 1;
	if (key(&p, end, "offset:") || number(&p, end, &f->offset) ||
	    key(&p, end, "size:") || number(&p, end, &f->size))
		return -1;
	return 0;
}

/* Field NAME of FMT wherever it lies (tracefs_field's search). */
static int find_field(const char *fmt, size_t len, const char *name,
		      struct tracefs_field *f, char *err, size_t errlen)
{
	const char *p = fmt, *end = fmt + len;
	size_t want = strlen(name);
	int found = 0;

	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		const char *line_end = eol ? eol : end;
		struct tracefs_field cur;
		const char *n;
		size_t n_len;
		int r = field_line(p, line_end, &n, &n_len, &cur);

		if (r < 0) {
			snprintf(err, errlen, "malformed field line %.*s",
				 (int)(line_end - p > 60 ? 60 : line_end - p), p);
			return -1;
		}
		if (!r && n_len == want && !memcmp(n, name, want)) {
			if (found++) {
				snprintf(err, errlen, "field %s given twice", name);
				return -1;
			}
			*f = cur;
		}
		p = line_end + (eol != NULL);
	}
	if (!found) {
		snprintf(err, errlen, "no field %s", name);
		return -1;
	}
	return 0;
}

int tracefs_field(const char *fmt, size_t len, const char *name,
		  struct tracefs_field *f, char *err, size_t errlen)
{
	if (find_field(fmt, len, name, f, err, errlen))
		return -1;
	/* Below 8 is the common header (and the program's pt_regs pointer). */
	if (f->offset < 8 || f->size == 0 || f->offset + f->size > TRACEFS_MAX_RECORD) {
		snprintf(err, errlen, "field %s at offset %u size %u is outside a record",
			 name, f->offset, f->size);
		return -1;
	}
	return 0;
}

/* "ID: N" alone on a line from P to END: 1 and *ID, 0 for another line, -1 malformed. */
static int id_line(const char *p, const char *end, uint32_t *id)
{
	uint32_t v = 0;
	int digits = 0;

	if (key(&p, end, "ID:"))
		return 0;
	while (p < end && *p == ' ')
		p++;
	while (p < end && *p >= '0' && *p <= '9' && digits < 9) {
		v = v * 10 + (uint32_t)(*p++ - '0');
		digits++;
	}
	if (!digits || p != end || !v)
		return -1;
	*id = v;
	return 1;
}

int tracefs_event_id(const char *fmt, size_t len, uint32_t *id, char *err, size_t errlen)
{
	const char *p = fmt, *end = fmt + len;

	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		const char *line_end = eol ? eol : end;
		int r = id_line(p, line_end, id);

		if (r) {
			if (r < 0)
				snprintf(err, errlen, "malformed ID line");
			return r < 0 ? -1 : 0;
		}
		p = line_end + (eol != NULL);
	}
	snprintf(err, errlen, "no ID line");
	return -1;
}

static int event_id(const char *event, const char *fmt, size_t len, uint32_t *id,
		    char *err, size_t errlen)
{
	char why[64];

	if (tracefs_event_id(fmt, len, id, why, sizeof(why))) {
		snprintf(err, errlen, "%s: %s", event, why);
		return -1;
	}
	return 0;
}

static int field_sized(const char *event, const char *fmt, size_t len, const char *name,
		       struct tracefs_field *f, uint32_t size, uint32_t alt_size,
		       char *err, size_t errlen)
{
	char why[128];

	if (tracefs_field(fmt, len, name, f, why, sizeof(why))) {
		snprintf(err, errlen, "%s: %s", event, why);
		return -1;
	}
	if (f->size != size && f->size != alt_size) {
		snprintf(err, errlen, "%s: field %s has size %u, expected %u",
			 event, name, f->size, size);
		return -1;
	}
	return 0;
}

int tracefs_sched_parse(struct tracefs_sched *t,
			const char *sw, size_t sw_len,
			const char *fork, size_t fork_len,
			const char *free_, size_t free_len,
			char *err, size_t errlen)
{
	return event_id("sched_switch", sw, sw_len, &t->switch_id, err, errlen) ||
	       event_id("sched_process_fork", fork, fork_len, &t->fork_id, err, errlen) ||
	       event_id("sched_process_free", free_, free_len, &t->free_id, err, errlen) ||
	       field_sized("sched_switch", sw, sw_len, "prev_state",
			   &t->switch_prev_state, 8, 4, err, errlen) ||
	       field_sized("sched_switch", sw, sw_len, "next_pid",
			   &t->switch_next_pid, 4, 4, err, errlen) ||
	       field_sized("sched_process_fork", fork, fork_len, "parent_pid",
			   &t->fork_parent_pid, 4, 4, err, errlen) ||
	       field_sized("sched_process_fork", fork, fork_len, "child_pid",
			   &t->fork_child_pid, 4, 4, err, errlen) ||
	       field_sized("sched_process_free", free_, free_len, "pid",
			   &t->free_pid, 4, 4, err, errlen) ? -1 : 0;
}

/* Common field NAME of SIZE bytes, in the record's first 8 (a perf raw record's header). */
static int common_field(const char *event, const char *fmt, size_t len, const char *name,
			struct tracefs_field *f, uint32_t size, char *err, size_t errlen)
{
	char why[128];

	if (find_field(fmt, len, name, f, why, sizeof(why))) {
		snprintf(err, errlen, "%s: %s", event, why);
		return -1;
	}
	if (f->size != size || f->offset + f->size > 8) {
		snprintf(err, errlen, "%s: field %s at offset %u size %u, expected %u bytes "
			 "in the first 8", event, name, f->offset, f->size, size);
		return -1;
	}
	return 0;
}

int tracefs_waking_parse(struct tracefs_sched *t, const char *event, const char *fmt,
			 size_t len, char *err, size_t errlen)
{
	if (event_id(event, fmt, len, &t->waking_id, err, errlen) ||
	    common_field(event, fmt, len, "common_type", &t->waking_type, 2, err, errlen) ||
	    common_field(event, fmt, len, "common_flags", &t->waking_flags, 1, err, errlen) ||
	    field_sized(event, fmt, len, "pid", &t->waking_pid, 4, 4, err, errlen))
		return -1;
	snprintf(t->waking_event, sizeof(t->waking_event), "%s", event);
	return 0;
}

/* DIR/events/sched/EVENT/format into BUF; returns its length or -1 (errno). */
static ssize_t read_format(const char *dir, const char *event, char *buf, size_t cap)
{
	char path[128];
	size_t len = 0;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/events/sched/%s/format", dir, event);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	while (len < cap && (n = read(fd, buf + len, cap - len)) > 0)
		len += (size_t)n;
	close(fd);
	if (len == cap) {
		errno = EFBIG;
		return -1;
	}
	return (ssize_t)len;
}

/*
 * sched_waking (4.3+: in the waker's context, at the start of the wakeup),
 * else sched_wakeup (where the wakee is put on its runqueue: on another CPU
 * in an IPI for a remote wakeup); neither is no error but for --wakers.
 */
static void read_waking(struct tracefs_sched *t, const char *dir)
{
	static const char *const events[] = { "sched_waking", "sched_wakeup" };
	static char fmt[FORMAT_MAX];
	char why[sizeof(t->waking_err)] = "";

	for (size_t i = 0; i < sizeof(events) / sizeof(events[0]); i++) {
		ssize_t n = read_format(dir, events[i], fmt, sizeof(fmt));

		if (n < 0 && !why[0])
			snprintf(why, sizeof(why), "%s/events/sched/%s/format: %s", dir,
				 events[i], strerror(errno));
		if (n >= 0 && !tracefs_waking_parse(t, events[i], fmt, (size_t)n, why, sizeof(why)))
			return;
		t->waking_event[0] = '\0';
	}
	snprintf(t->waking_err, sizeof(t->waking_err), "%s", why);
}

static int read_all(struct tracefs_sched *t, const char *dir, char *err, size_t errlen)
{
	static char sw[FORMAT_MAX], fork[FORMAT_MAX], fr[FORMAT_MAX];
	ssize_t a = read_format(dir, "sched_switch", sw, sizeof(sw));
	ssize_t b = a < 0 ? -1 : read_format(dir, "sched_process_fork", fork, sizeof(fork));
	ssize_t c = b < 0 ? -1 : read_format(dir, "sched_process_free", fr, sizeof(fr));

	if (c < 0) {
		snprintf(err, errlen, "%s/events/sched/%s/format: %s", dir,
			 a < 0 ? "sched_switch" : b < 0 ? "sched_process_fork" :
			 "sched_process_free", strerror(errno));
		return -1;
	}
	snprintf(t->dir, sizeof(t->dir), "%s", dir);
	read_waking(t, dir);
	return tracefs_sched_parse(t, sw, (size_t)a, fork, (size_t)b, fr, (size_t)c,
				   err, errlen);
}

int tracefs_sched_read(struct tracefs_sched *t, char *err, size_t errlen)
{
	static const char *const dirs[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	char mount_err[96];
	int r;

	memset(t, 0, sizeof(*t));
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		char path[96];

		snprintf(path, sizeof(path), "%s/events/sched", dirs[i]);
		if (!access(path, F_OK))
			return read_all(t, dirs[i], err, errlen);
	}
	/* Not mounted (the usual case outside debugging): mount it for a moment. */
	if (mount("tracefs", dirs[0], "tracefs", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL)) {
		snprintf(mount_err, sizeof(mount_err), "%s", strerror(errno));
		snprintf(err, errlen, "no tracefs with sched events (mounting tracefs on %s: %s)",
			 dirs[0], mount_err);
		return -1;
	}
	t->mounted = true;
	r = read_all(t, dirs[0], err, errlen);
	umount2(dirs[0], MNT_DETACH);
	return r;
}
