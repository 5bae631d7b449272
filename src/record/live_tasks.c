// SPDX-License-Identifier: GPL-2.0
/* The live processes of a recording, kept from its records (rotated files). */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "format/perf_records.h"
#include "lib/hashset.h"
#include "record/live_tasks.h"

struct live_thread {
	uint32_t pid;
	char comm[16];
};

/* A process's executable mappings: copies of their MMAP/MMAP2 records. */
struct live_proc {
	struct perf_event_header **maps;
	size_t n, cap;
	uint32_t threads;	/* live threads: the process goes with the last */
};

struct live_tasks {
	struct u32_map threads;	/* tid -> live_thread */
	struct u32_map procs;	/* pid -> live_proc (pid -1: the kernel's maps) */
};

struct live_tasks *live_tasks_new(void)
{
	return calloc(1, sizeof(struct live_tasks));
}

static void proc_clear(struct live_proc *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->maps[i]);
	p->n = 0;
}

static void proc_free(void *v)
{
	struct live_proc *p = v;

	proc_clear(p);
	free(p->maps);
	free(p);
}

static struct live_proc *proc_of(struct live_tasks *lt, uint32_t pid)
{
	struct live_proc *p = u32_map_get(&lt->procs, pid);

	if (p)
		return p;
	p = calloc(1, sizeof(*p));
	if (p && u32_map_put(&lt->procs, pid, p)) {
		free(p);
		return NULL;
	}
	return p;
}

/* The mapping [START, START + LEN) of map record H. */
static void map_range(const struct perf_event_header *h, uint64_t *start, uint64_t *len)
{
	const struct perf_record_mmap *m = (const void *)h;

	*start = m->start;
	*len = m->len;
}

/* Adds a copy of H; mappings it covers are gone (a JIT remapping one range). */
static int proc_add_map(struct live_proc *p, const struct perf_event_header *h)
{
	uint64_t start, len, s, l;
	size_t keep = 0;
	void *copy;

	map_range(h, &start, &len);
	for (size_t i = 0; i < p->n; i++) {
		map_range(p->maps[i], &s, &l);
		if (s >= start && s + l <= start + len)
			free(p->maps[i]);
		else
			p->maps[keep++] = p->maps[i];
	}
	p->n = keep;
	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 16;
		void *n = realloc(p->maps, cap * sizeof(*p->maps));

		if (!n)
			return -1;
		p->maps = n;
		p->cap = cap;
	}
	copy = malloc(h->size);
	if (!copy)
		return -1;
	memcpy(copy, h, h->size);
	p->maps[p->n++] = copy;
	return 0;
}

/* Thread TID of process PID is alive, named COMM. */
static int thread_set(struct live_tasks *lt, uint32_t pid, uint32_t tid, const char *comm)
{
	struct live_thread *t = u32_map_get(&lt->threads, tid);
	struct live_proc *p;

	if (!t) {
		p = proc_of(lt, pid);
		t = calloc(1, sizeof(*t));
		if (!p || !t || u32_map_put(&lt->threads, tid, t)) {
			free(t);
			return -1;
		}
		p->threads++;
		t->pid = pid;
	}
	strncpy(t->comm, comm, sizeof(t->comm) - 1);
	return 0;
}

static int note_comm(struct live_tasks *lt, const struct perf_event_header *h)
{
	const struct perf_record_comm *c = (const void *)h;
	char comm[16] = "";
	size_t room = h->size - sizeof(*c);
	struct live_proc *p;

	memcpy(comm, c->comm, room < sizeof(comm) - 1 ? room : sizeof(comm) - 1);
	/* An exec replaces the address space: the MMAP2s that follow are all of it. */
	if ((h->misc & PERF_RECORD_MISC_COMM_EXEC) && (p = u32_map_get(&lt->procs, c->pid)))
		proc_clear(p);
	return thread_set(lt, c->pid, c->tid, comm);
}

/* A new process starts with its parent's maps, as perf's machine__process_fork_event. */
static int copy_maps(struct live_tasks *lt, uint32_t pid, uint32_t ppid)
{
	struct live_proc *parent = u32_map_get(&lt->procs, ppid), *child;

	if (!parent)
		return 0;
	child = proc_of(lt, pid);
	if (!child)
		return -1;
	proc_clear(child);
	for (size_t i = 0; i < parent->n; i++)
		if (proc_add_map(child, parent->maps[i]))
			return -1;
	return 0;
}

static int note_fork(struct live_tasks *lt, const struct perf_event_header *h)
{
	const struct perf_record_fork *f = (const void *)h;
	const struct live_thread *parent = u32_map_get(&lt->threads, f->ptid);

	if (f->pid != f->ppid && copy_maps(lt, f->pid, f->ppid))
		return -1;
	return thread_set(lt, f->pid, f->tid, parent ? parent->comm : "");
}

static void note_exit(struct live_tasks *lt, const struct perf_event_header *h)
{
	const struct perf_record_fork *f = (const void *)h;
	struct live_thread *t = u32_map_del(&lt->threads, f->tid);
	struct live_proc *p = t ? u32_map_get(&lt->procs, t->pid) : NULL;

	if (p && !--p->threads)
		proc_free(u32_map_del(&lt->procs, t->pid));
	free(t);
}

int live_tasks_note(struct live_tasks *lt, const struct perf_event_header *h)
{
	const struct perf_record_mmap *m = (const void *)h;
	struct live_proc *p;

	switch (h->type) {
	case PERF_RECORD_COMM:
		return h->size > sizeof(struct perf_record_comm) ? note_comm(lt, h) : 0;
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		if (h->size < sizeof(*m))
			return 0;
		p = proc_of(lt, m->pid);
		return p ? proc_add_map(p, h) : -1;
	case PERF_RECORD_FORK:
		return h->size >= sizeof(struct perf_record_fork) ? note_fork(lt, h) : 0;
	case PERF_RECORD_EXIT:
		if (h->size >= sizeof(struct perf_record_fork))
			note_exit(lt, h);
		return 0;
	}
	return 0;
}

/* Map record H again, for process PID at time 0 (its copy may be the parent's). */
static int emit_map(const struct perf_event_header *h, uint32_t pid, record_fn fn, void *ctx)
{
	uint64_t buf[(sizeof(struct perf_record_mmap2) + 4096 + sizeof(struct perf_sample_id_all)) / 8 + 1];
	struct perf_record_mmap *m = (void *)buf;
	struct perf_sample_id_all sid;

	if (h->size > sizeof(buf) || h->size < sizeof(*m) + sizeof(sid))
		return 0;
	memcpy(buf, h, h->size);
	memcpy(&sid, (uint8_t *)buf + h->size - sizeof(sid), sizeof(sid));
	if (m->pid != (uint32_t)-1)
		m->pid = m->tid = sid.pid = sid.tid = pid;
	sid.time = 0;
	memcpy((uint8_t *)buf + h->size - sizeof(sid), &sid, sizeof(sid));
	return fn(ctx, &m->header, 0);
}

int live_tasks_emit(const struct live_tasks *lt, uint64_t id, record_fn fn, void *ctx)
{
	const struct u32_map *th = &lt->threads, *pr = &lt->procs;
	int err = 0;

	for (size_t i = 0; i < th->cap && !err; i++) {
		const struct live_thread *t = th->vals[i];

		if (t)
			err = proc_comm_emit(t->pid, th->keys[i], t->comm, id, fn, ctx);
	}
	for (size_t i = 0; i < pr->cap && !err; i++) {
		const struct live_proc *p = pr->vals[i];

		for (size_t j = 0; p && j < p->n && !err; j++)
			err = emit_map(p->maps[j], pr->keys[i], fn, ctx);
	}
	return err;
}

void live_tasks_count(const struct live_tasks *lt, size_t *threads, size_t *procs)
{
	*threads = lt->threads.n;
	*procs = lt->procs.n;
}

void live_tasks_free(struct live_tasks *lt)
{
	if (!lt)
		return;
	u32_map_free(&lt->threads, free);
	u32_map_free(&lt->procs, proc_free);
	free(lt);
}
