// SPDX-License-Identifier: GPL-2.0
/* Task events from per-CPU dummy perf events, and the -p/-t/command filter. */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lib/hashset.h"
#include "record/oncpu.h"
#include "record/ordered.h"
#include "record/perf_events.h"
#include "record/synthesis.h"
#include "record/task_events.h"

#define RING_PAGES	64
#define DUMMY_SAMPLE_TYPE (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | \
			   PERF_SAMPLE_TIME | PERF_SAMPLE_CPU)

struct task_events {
	const struct offcpu_opts *o;
	int ncpus;
	int *fds;
	void **rings;
	uint64_t *dummy_ids;
	size_t ring_bytes;
	struct oncpu *on;	/* -F: its samples are read here, else NULL */
	bool filter;
	struct u32_set pids;
	/*
	 * Processes born during the recording: pid -> its live threads (each
	 * was seen forking).  The last one's exit takes the pid out of pids:
	 * the set follows the live processes over a long recording, and a
	 * pid handed out again is not followed.  Those alive at the start
	 * stay (their threads were never counted).
	 */
	struct u32_map born;
	struct ordered_events batch;	/* one read of all rings, sorted for the filter */
	void *scratch;		/* a record that wrapped around its ring */
	uint64_t lost;
	int err;
};

static void dummy_attr(struct perf_event_attr *a)
{
	sw_event_attr(a, PERF_COUNT_SW_DUMMY, DUMMY_SAMPLE_TYPE);
	a->comm = 1;
	a->comm_exec = 1;
	a->mmap = 1;
	a->mmap2 = 1;
	a->task = 1;
	a->exclude_kernel = 1;
	a->exclude_hv = 1;
}

static uint64_t rec_time(const struct task_events *te, const struct perf_event_header *h)
{
	struct perf_sample_id_all sid;
	uint64_t time;
	uint32_t pid;

	/* -F's samples, read as the sampler opened them. */
	if (h->type == PERF_RECORD_SAMPLE)
		return oncpu_sample_head(te->on, h, &time, &pid) ? 0 : time;
	if (h->size < sizeof(*h) + sizeof(sid))
		return 0;
	memcpy(&sid, (const uint8_t *)h + h->size - sizeof(sid), sizeof(sid));
	return sid.time;
}

/* A tracked FORK: a new process, or a thread of one born while recording. */
static void born_fork(struct task_events *te, const struct perf_record_fork *f)
{
	uintptr_t n = f->pid != f->ppid ? 0 : (uintptr_t)u32_map_get(&te->born, f->pid);

	if ((f->pid != f->ppid || n) && u32_map_put(&te->born, f->pid, (void *)(n + 1)))
		te->err = -1;
}

/* A tracked EXIT: the last thread of a process born while recording. */
static void born_exit(struct task_events *te, const struct perf_record_fork *f)
{
	uintptr_t n = (uintptr_t)u32_map_get(&te->born, f->pid);

	if (n > 1 && u32_map_put(&te->born, f->pid, (void *)(n - 1)))
		te->err = -1;
	if (n == 1) {
		u32_map_del(&te->born, f->pid);
		u32_map_del(&te->pids.m, f->pid);
	}
}

/* Whether the record of a tracked process P, following forks (-p/-t/command). */
static bool keep(struct task_events *te, const struct perf_event_header *h)
{
	const struct perf_record_fork *fork = (const void *)h;
	const struct perf_record_comm *task = (const void *)h;	/* pid first, as in EXIT, MMAP */
	uint64_t time;
	uint32_t pid;

	if (!te->filter)
		return true;
	switch (h->type) {
	case PERF_RECORD_FORK:
		if (u32_set_has(&te->pids, fork->ppid) && u32_set_add(&te->pids, fork->pid))
			te->err = -1;
		if (!u32_set_has(&te->pids, fork->pid))
			return false;
		born_fork(te, fork);
		return true;
	case PERF_RECORD_SAMPLE:
		return !oncpu_sample_head(te->on, h, &time, &pid) && u32_set_has(&te->pids, pid);
	case PERF_RECORD_EXIT:
		if (!u32_set_has(&te->pids, fork->pid))
			return false;
		born_exit(te, fork);
		return true;
	case PERF_RECORD_COMM:
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		return u32_set_has(&te->pids, task->pid);
	default:
		return true;
	}
}

/* Into the batch, for the filter's time order. */
static void batch_queue(void *ctx, const struct perf_event_header *h)
{
	struct task_events *te = ctx;

	if (ordered_queue(&te->batch, h, rec_time(te, h)))
		te->err = -1;
}

struct batch_sink {
	struct task_events *te;
	record_fn fn;
	void *ctx;
};

static void deliver(void *ctx, const struct perf_event_header *h, uint64_t time)
{
	struct batch_sink *b = ctx;

	if (!keep(b->te, h))
		return;
	/* An unwound -F sample is a new record, its head (and time) copied. */
	if (b->te->on && h->type == PERF_RECORD_SAMPLE && !(h = oncpu_sample(b->te->on, h))) {
		b->te->lost++;
		return;
	}
	if (b->fn(b->ctx, h, time))
		b->te->err = -1;
}

static void no_round(void *ctx)
{
	(void)ctx;
}

/*
 * The filter follows FORKs, so it sees the records of all CPUs in time
 * order: a child's COMM on one CPU must not be judged before the FORK that
 * another CPU's ring reported first.
 */
int task_events_read(struct task_events *te, record_fn fn, void *ctx)
{
	struct batch_sink b = { te, fn, ctx };
	const struct ordered_sink sink = { deliver, no_round, &b };

	te->err = 0;
	for (int cpu = 0; cpu < te->ncpus; cpu++) {
		if (te->rings[cpu])
			te->lost += perf_ring_read(te->rings[cpu], te->scratch, batch_queue, te);
		if (te->on)
			oncpu_read(te->on, cpu, batch_queue, te);
	}
	ordered_flush(&te->batch, UINT64_MAX, &sink);
	return te->err;
}

bool task_events_follows(const struct task_events *te, uint32_t pid)
{
	return !te->filter || u32_set_has(&te->pids, pid);
}

size_t task_events_followed(const struct task_events *te)
{
	return te->pids.m.n;
}

uint64_t task_events_lost(const struct task_events *te)
{
	return te->lost;
}

static int open_dummies(struct task_events *te)
{
	struct perf_event_attr a;
	long page = sysconf(_SC_PAGESIZE);

	dummy_attr(&a);
	te->ring_bytes = (RING_PAGES + 1) * page;
	for (int cpu = 0; cpu < te->ncpus; cpu++) {
		int fd = syscall(SYS_perf_event_open, &a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);

		te->fds[cpu] = fd;
		if (fd < 0) {
			if (errno == ENODEV || errno == EINVAL)
				continue;	/* CPU offline or not present */
			fprintf(stderr, "offcpu: cannot open task events on CPU %d: %s\n", cpu,
				strerror(errno));
			return -1;
		}
		te->rings[cpu] = perf_ring_map(fd, te->ring_bytes, cpu);
		if (!te->rings[cpu])
			return -1;
		if (ioctl(fd, PERF_EVENT_IOC_ID, &te->dummy_ids[cpu])) {
			fprintf(stderr, "offcpu: cannot read a perf event id: %s\n", strerror(errno));
			return -1;
		}
	}
	return 0;
}

static int alloc_cpus(struct task_events *te)
{
	te->fds = calloc(te->ncpus, sizeof(int));
	te->rings = calloc(te->ncpus, sizeof(void *));
	te->dummy_ids = calloc(te->ncpus, sizeof(uint64_t));
	te->scratch = malloc(65536);
	if (!te->fds || !te->rings || !te->dummy_ids || !te->scratch)
		return -1;
	for (int i = 0; i < te->ncpus; i++)
		te->fds[i] = -1;
	return 0;
}

struct task_events *task_events_open(const struct offcpu_opts *o, int ncpus,
				     const uint32_t *pids, size_t nr_pids)
{
	struct task_events *te = calloc(1, sizeof(*te));

	if (!te) {
		fprintf(stderr, "offcpu: out of memory\n");
		return NULL;
	}
	te->o = o;
	te->ncpus = ncpus;
	te->filter = nr_pids > 0;
	if (alloc_cpus(te))
		goto nomem;
	for (size_t i = 0; i < nr_pids; i++)
		if (u32_set_add(&te->pids, pids[i]))
			goto nomem;
	if (open_dummies(te))
		goto fail;
	return te;
nomem:
	fprintf(stderr, "offcpu: out of memory\n");
fail:
	task_events_free(te);
	return NULL;
}

static uint64_t first_dummy_id(const struct task_events *te)
{
	for (int i = 0; i < te->ncpus; i++)
		if (te->fds[i] >= 0)
			return te->dummy_ids[i];
	return 0;
}

uint64_t task_events_id(const struct task_events *te)
{
	return first_dummy_id(te);
}

int task_events_synthesize(struct task_events *te, const uint32_t *pids, size_t nr_pids,
			   record_fn fn, void *ctx)
{
	uint64_t id = first_dummy_id(te);
	int err = 0;

	if (te->o->kstack)
		err = proc_sync_kernel(id, fn, ctx);
	if (!nr_pids)
		return err ? err : proc_sync_all(id, fn, ctx);
	for (size_t i = 0; i < nr_pids && !err; i++)
		err = proc_sync_pid(pids[i], id, fn, ctx);
	return err;
}

const int *task_events_fds(const struct task_events *te)
{
	return te->fds;
}

void task_events_add_oncpu(struct task_events *te, struct oncpu *on)
{
	te->on = on;
}

void task_events_describe(const struct task_events *te, struct pd_writer *w)
{
	struct perf_event_attr a;

	dummy_attr(&a);
	perf_events_describe(w, "dummy:u", &a, te->fds, te->dummy_ids, te->ncpus);
}

void task_events_free(struct task_events *te)
{
	if (!te)
		return;
	perf_events_close(te->fds, te->rings, te->ring_bytes, te->ncpus);
	u32_set_free(&te->pids);
	u32_map_free(&te->born, NULL);
	ordered_free(&te->batch);
	free(te->scratch);
	free(te->fds);
	free(te->rings);
	free(te->dummy_ids);
	free(te);
}
