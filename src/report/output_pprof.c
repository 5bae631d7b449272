// SPDX-License-Identifier: GPL-2.0
/*
 * Output: the gzipped pprof profile of the table (pprof.c encodes it).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/build_id.h"
#include "report/pprof.h"
#include "report/report_int.h"

/* The recording's build-ids, hex, on the mappings of their files. */
static int pprof_build_ids(struct report *r, struct pprof *p)
{
	char hex[2 * BUILD_ID_MAX + 1];

	for (size_t i = 0; i < r->file.nr_build_ids; i++) {
		const struct pd_build_id *b = &r->file.build_ids[i];
		const char *file = rpt_is_kernel_id(b) ? KERNEL_FILE : b->filename;

		if (!file || !b->id_len || b->id_len > BUILD_ID_MAX)
			continue;
		build_id_hex(b->id, b->id_len, hex);
		if (pprof_build_id(p, file, hex))
			return -1;
	}
	return 0;
}

/* What pprof shows above its tables: where from, and what was lost. */
static int pprof_comments(struct report *r, struct pprof *p)
{
	char line[512];

	snprintf(line, sizeof(line), "offcpu report: %s (host %s, kernel %s, %s)", r->o.input,
		 r->file.hostname ? r->file.hostname : "?",
		 r->file.osrelease ? r->file.osrelease : "?", r->file.arch ? r->file.arch : "?");
	if (pprof_comment(p, line))
		return -1;
	snprintf(line, sizeof(line), "%llu samples lost", (unsigned long long)r->lost);
	return pprof_comment(p, line);
}

/* The wall-clock time of sample time T, from CLOCK_DATA (0: unknown). */
static uint64_t wall_time(const struct report *r, uint64_t t)
{
	const struct pd_file *f = &r->file;

	if (!f->has_clock_data || f->clockid != CLOCK_MONOTONIC || !r->samples ||
	    t > f->clockid_ns || f->clockid_ns - t > f->tod_ns)
		return 0;
	return f->tod_ns - (f->clockid_ns - t);
}

/* One pprof sample per (thread, stack): frames leaf first. */
static int pprof_agg(struct report *r, struct pprof *p, const struct agg *a,
		     struct pprof_frame *frames)
{
	struct pprof_owner owner = {
		.pid = a->key_pid,
		.tid = a->tid,
		.thread = a->comm,
		.process = sym_proc_comm(r->sym, a->key_pid, a->key_pid),
	};

	for (size_t i = 0; i < a->nr_frames; i++) {
		const struct frame *f = &a->frames[a->nr_frames - 1 - i];

		frames[i] = (struct pprof_frame){ f->name, f->file };
	}
	return pprof_add(p, frames, a->nr_frames, &owner, a->total, a->count);
}

int rpt_write_pprof(struct report *r)
{
	struct pprof *p = pprof_new();
	struct pprof_frame *frames = NULL;
	size_t cap = 0;
	int err = !p || pprof_build_ids(r, p) || pprof_comments(r, p);

	for (size_t i = 0; i < r->n && !err; i++) {
		if (r->v[i].nr_frames > cap) {
			free(frames);
			cap = r->v[i].nr_frames;
			frames = malloc(cap * sizeof(*frames));
		}
		err = !frames || pprof_agg(r, p, &r->v[i], frames);
	}
	free(frames);
	if (!err)
		pprof_time(p, wall_time(r, r->first_time), r->last_time - r->first_time);
	errno = ENOMEM;
	err = err || pprof_write(p, r->o.pprof);
	if (err)
		fprintf(stderr, "offcpu: report: cannot write %s: %s\n", r->o.pprof, strerror(errno));
	pprof_free(p);
	return err ? -1 : 0;
}
