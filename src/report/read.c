// SPDX-License-Identifier: GPL-2.0
/*
 * Reading: the input files one after the other, their bookkeeping records
 * (COMM, MMAP2, FORK, EXIT) to the symbolizer and their samples to the table.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/waker_record.h"
#include "report/report_int.h"

static bool is_offcpu(const struct pd_file *f, const struct pd_sample *s)
{
	const struct pd_event *e = pd_event_by_id(f, s->id);

	return e && e->attr.type == PERF_TYPE_SOFTWARE &&
	       e->attr.config == PERF_COUNT_SW_BPF_OUTPUT && s->id != OFFCPU_WAKER_ID;
}

/* A sample of a thread still blocked at the end of the recording. */
static bool is_blocked(const struct pd_file *f, const struct pd_sample *s)
{
	const struct pd_event *e = pd_event_by_id(f, s->id);

	return e && e->name && !strcmp(e->name, "offcpu-blocked");
}

/* A NUL-terminated name at OFF in the record's body, or NULL. */
static const char *name_at(const struct perf_event_header *h, size_t off)
{
	const char *p = (const char *)(h + 1) + off;
	size_t body = h->size - sizeof(*h);

	if (off >= body || !memchr(p, '\0', body - off))
		return NULL;
	return p;
}

/* MMAP2 starts with MMAP's fields; its name comes after more of them. */
static void feed_mmap(struct report *r, const struct perf_record_mmap *m, size_t fixed)
{
	const char *name = name_at(&m->header, fixed - sizeof(m->header));

	if (!name)
		return;
	if (m->pid == (uint32_t)-1 && !strncmp(name, "[kernel.kallsyms]", 17))
		sym_kernel_text(r->sym, m->pgoff);	/* pgoff: _text's address */
	else
		sym_mmap(r->sym, m->pid, m->start, m->len, m->pgoff, name);
}

/* Process bookkeeping records, in file (time) order. */
static void feed(struct report *r, const struct perf_event_header *h)
{
	const struct perf_record_comm *comm = (const void *)h;
	const struct perf_record_fork *fork = (const void *)h;
	const struct perf_record_lost *lost = (const void *)h;
	const struct perf_record_lost_samples *lost_samples = (const void *)h;
	const char *name;

	switch (h->type) {
	case PERF_RECORD_COMM:
		if (h->size >= sizeof(*comm) && (name = name_at(h, sizeof(*comm) - sizeof(*h))))
			sym_comm(r->sym, comm->pid, comm->tid, name,
				 h->misc & PERF_RECORD_MISC_COMM_EXEC);
		break;
	case PERF_RECORD_MMAP:
		if (h->size >= sizeof(struct perf_record_mmap))
			feed_mmap(r, (const void *)h, sizeof(struct perf_record_mmap));
		break;
	case PERF_RECORD_MMAP2:
		if (h->size >= sizeof(struct perf_record_mmap2))
			feed_mmap(r, (const void *)h, sizeof(struct perf_record_mmap2));
		break;
	case PERF_RECORD_FORK:
		if (h->size >= sizeof(*fork) - sizeof(fork->time))
			sym_fork(r->sym, fork->pid, fork->ppid, fork->tid, fork->ptid);
		break;
	case PERF_RECORD_EXIT:
		if (h->size >= sizeof(*fork) - sizeof(fork->time))
			sym_exit(r->sym, fork->pid, fork->tid);
		break;
	case PERF_RECORD_LOST:
		if (h->size >= sizeof(*lost))
			r->lost += lost->lost;
		break;
	case PERF_RECORD_LOST_SAMPLES:
		if (h->size >= sizeof(*lost_samples))
			r->lost += lost_samples->lost;
		break;
	}
}

static int read_records(struct report *r)
{
	static uint64_t scratch[65536 / 8];
	const struct perf_event_header *h;
	char err[256];
	uint64_t pos = 0;
	int ret;

	while ((ret = pd_next_record(&r->file, &pos, &h, scratch, err, sizeof(err))) > 0) {
		struct pd_sample s;

		if (h->type != PERF_RECORD_SAMPLE) {
			feed(r, h);
			continue;
		}
		if (pd_parse_sample(&r->file, h, &s)) {
			fprintf(stderr, "offcpu: report: %s: malformed sample at offset %llu\n",
				r->o.input, (unsigned long long)(r->file.data_offset + pos - h->size));
			return -1;
		}
		if (s.id == OFFCPU_WAKER_ID && rpt_add_waker(r, &s))
			return -1;
		if (is_offcpu(&r->file, &s) && rpt_add_sample(r, &s, is_blocked(&r->file, &s)))
			return -1;
	}
	rpt_drop_pending(r);
	if (r->unpaired)
		fprintf(stderr, "offcpu: report: warning: %llu samples of a sleeper and its waker without the other (not counted under any waker)\n",
			(unsigned long long)r->unpaired);
	if (ret < 0)
		fprintf(stderr, "offcpu: report: %s: %s\n", r->o.input, err);
	return ret;
}

/* Whether F has the offcpu-waker event of a recording made with --wakers. */
static bool has_waker_event(const struct pd_file *f)
{
	for (size_t i = 0; i < f->nr_events; i++)
		for (size_t j = 0; j < f->events[i].nr_ids; j++)
			if (f->events[i].ids[j] == OFFCPU_WAKER_ID)
				return true;
	return false;
}

/*
 * Threads blocked at the end of an earlier file were blocked at a switch:
 * their time stays in the stacks, but only the last file's end is the end.
 */
static void forget_blocked(struct report *r)
{
	for (size_t i = 0; i < r->nr_blocked; i++)
		free(r->blocked[i].frames);
	r->nr_blocked = 0;
	r->blocked_total = 0;
}

/* Reads input I: its file, then its records into the one aggregation. */
int rpt_read_input(struct report *r, size_t i)
{
	char err[256];

	r->o.input = r->o.inputs[i];
	/* The last file stays for the header, the build-ids of pprof and wall time. */
	pd_file_free(&r->file);
	if (pd_read_file(&r->file, r->o.input, err, sizeof(err))) {
		fprintf(stderr, "offcpu: report: %s\n", err);
		return -1;
	}
	if (r->o.wakers && !has_waker_event(&r->file)) {
		fprintf(stderr, "offcpu: report: %s: recorded without --wakers (no offcpu-waker event)\n",
			r->o.input);
		return -1;
	}
	if (r->o.wakers && r->file.needs_swap) {
		fprintf(stderr, "offcpu: report: %s: --wakers needs a file of this machine's byte order\n",
			r->o.input);
		return -1;
	}
	/*
	 * One symbolizer for all: a rotated file goes on where the one before
	 * ended (its processes re-announced), so names and maps carry over.
	 */
	if (!r->sym && rpt_setup_symbols(r))
		return -1;
	if (i && rpt_expect_build_ids(r))
		return -1;
	forget_blocked(r);
	return read_records(r);
}
