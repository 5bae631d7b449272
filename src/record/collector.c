// SPDX-License-Identifier: GPL-2.0
/*
 * The recording's data path, orchestrated: BPF records (ring buffer and the
 * drained sums map) become samples (stacks, sample_writer), task events come
 * from their own rings (task_events), and everything leaves in time order
 * (ordered) for the perf.data writer.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "lib/build_id.h"
#include "record/collector.h"
#include "lib/buildid_cache.h"
#include "lib/hashset.h"
#include "record/live_tasks.h"
#include "record/mapped_files.h"
#include "record/ordered.h"
#include "record/synthesis.h"
#include "record/sample_writer.h"
#include "record/stacks.h"
#include "record/task_events.h"
#include "record/wakers.h"

/*
 * A record may only be written once nothing older can still arrive: the
 * sums map is drained every DRAIN_NS, so keep twice that back.
 */
#define DRAIN_NS	(1000ull * 1000000)
#define LAG_NS		(2 * DRAIN_NS)

struct collector {
	struct pd_writer *w;
	struct loader *ld;
	const struct offcpu_opts *o;
	struct task_events *te;
	struct ring_buffer *rb;
	struct ordered_events q;
	uint64_t last_drain;
	uint64_t end;		/* the end of the recording (CLOCK_MONOTONIC ns) */
	struct stacks *stacks;
	struct wakers *wakers;	/* --wakers, else NULL */
	struct mapped_files *files;	/* for their build ids */
	void *scratch;		/* one sample */
	struct collector_stats st;
	/* --switch-output: the file being written, and what crossed into it */
	struct live_tasks *live;	/* what a new file must name */
	struct u32_map credits;		/* tid -> struct credit */
	struct collector_file file;	/* the current file's figures */
	uint64_t file_start;		/* when it started (0: the recording's start) */
	uint64_t lost_before;		/* samples lost before it */
	bool switching;			/* the blocked scan splits blocks, not ends them */
	int err;
};

/*
 * A thread blocked across a switch (--switch-output): its time up to the
 * switch went into the file that ended, as an offcpu-blocked sample.  When
 * the block ends, its sample (a long block's own, or the sum holding it)
 * carries the whole block: the part already written comes off, so each
 * file has the part inside its window and no time is counted twice.
 */
struct credit {
	uint64_t ts;		/* the block's start */
	uint64_t upto;		/* written up to here (the last switch that found it) */
	int32_t ustack, kstack;	/* its sums key, with the tid and state */
	uint32_t state;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static int queue(void *ctx, const struct perf_event_header *rec, uint64_t time)
{
	struct collector *c = ctx;
	const struct perf_record_fork *fork = (const void *)rec;

	/* Now, not when written: a container's files are there while it lives. */
	if (mapped_files_note(c->files, rec))
		c->err = -1;
	/*
	 * An exec, or a new process (not a thread) under a pid: the unwinder
	 * reads its new maps (in time order with the -F samples; the copies'
	 * address space key catches what the BPF ring delivers first).
	 */
	if (rec->type == PERF_RECORD_COMM && (rec->misc & PERF_RECORD_MISC_COMM_EXEC))
		stacks_forget_pid(c->stacks, ((const struct perf_record_comm *)rec)->pid);
	if (rec->type == PERF_RECORD_FORK && fork->pid == fork->tid)
		stacks_forget_pid(c->stacks, fork->pid);
	return ordered_queue(&c->q, rec, time);
}

static void deliver(void *ctx, const struct perf_event_header *rec)
{
	struct collector *c = ctx;

	if (!c->err && pd_write(c->w, rec))
		c->err = -1;
	if (c->live && live_tasks_note(c->live, rec))
		c->err = -1;
	if (rec->type == PERF_RECORD_SAMPLE) {
		c->st.samples++;
		c->file.samples++;
	}
	c->st.records++;
}

static void end_round(void *ctx)
{
	struct collector *c = ctx;

	if (!c->err && pd_finish_round(c->w))
		c->err = -1;
}

/* Write every queued record older than CUTOFF, then a round marker. */
static int flush(struct collector *c, uint64_t cutoff)
{
	const struct ordered_sink sink = { deliver, end_round, c };

	ordered_flush(&c->q, cutoff, &sink);
	return c->err;
}

/* ---- samples from BPF records ---- */

/* W: who woke the block (--wakers), else NULL. */
static int add_sample(struct collector *c, uint32_t pid, uint32_t tid, uint32_t cpu,
		      uint64_t time, uint64_t period, int32_t kstack, int32_t ustack,
		      const struct offcpu_waker *w)
{
	struct offcpu_sample s = {
		.pid = pid, .tid = tid, .cpu = cpu, .time = time, .period = period,
		.kernel = stacks_get(c->stacks, kstack, true),
		.user = stacks_get(c->stacks, ustack, false),
	};

	int err;

	if (w && c->wakers)
		err = wakers_add(c->wakers, &s, w, c->scratch, queue, c);
	else
		err = queue(c, sample_write(c->scratch, &s), time);
	stacks_done(c->stacks, ustack);
	return err;
}

/* The credit of TID's block that started at TS, or NULL. */
static struct credit *credit_of(struct collector *c, uint32_t tid, uint64_t ts)
{
	struct credit *cr = u32_map_get(&c->credits, tid);

	return cr && cr->ts == ts ? cr : NULL;
}

/* A split block's time up to the switch at c->end is written: remember it. */
static int credit_block(struct collector *c, const struct offcpu_blocked *b)
{
	struct credit *cr = u32_map_get(&c->credits, b->tid);

	if (!cr) {
		cr = malloc(sizeof(*cr));
		if (!cr || u32_map_put(&c->credits, b->tid, cr)) {
			free(cr);
			return -1;
		}
	}
	*cr = (struct credit){ b->ts, c->end, b->ustack, b->kstack, b->state };
	return 0;
}

/*
 * Credits of blocks that ended before the last switch's scan: the drain
 * just done holds their samples if they were ever to come, so none is
 * left to take one off (a block --max-block left out in BPF).
 */
static void credits_purge(struct collector *c)
{
	struct u32_map *m = &c->credits;
	uint32_t *stale = m->n ? calloc(m->n, sizeof(*stale)) : NULL;
	size_t n = 0;

	/* Gathered first: a deletion moves later entries back into its hole. */
	for (size_t i = 0; stale && i < m->cap; i++) {
		const struct credit *cr = m->vals[i];

		if (cr && cr->upto < c->file_start)
			stale[n++] = m->keys[i];
	}
	for (size_t i = 0; i < n; i++)
		free(u32_map_del(m, stale[i]));
	free(stale);
}

/*
 * A thread still blocked at c->end (the end of the recording, or of a
 * rotated file): one offcpu-blocked sample for its time inside the file.
 */
static int add_blocked(void *ctx, const struct offcpu_blocked *b, uint32_t cpu)
{
	struct collector *c = ctx;
	const struct credit *cr = credit_of(c, b->tid, b->ts);
	uint64_t from = cr ? cr->upto : b->ts;
	uint64_t period = c->end > from ? c->end - from : 0;
	const struct offcpu_sample s = {
		.id = OFFCPU_BLOCKED_ID, .pid = b->pid, .tid = b->tid, .cpu = cpu,
		.time = c->end, .period = period,
		.kernel = stacks_get(c->stacks, b->kstack, true),
		.user = stacks_get(c->stacks, b->ustack, false),
	};

	int err;

	if (!period || period < c->o->min_block_ns || period > c->o->max_block_ns)
		return 0;
	c->file.blocked_threads++;
	c->file.blocked_ns += period;
	err = queue(c, sample_write(c->scratch, &s), s.time);
	/* Split at a switch: the block's stacks name its end too. */
	if (c->switching)
		return err ? err : credit_block(c, b);
	stacks_done(c->stacks, b->ustack);
	return err;
}

/* A long block's time less what files before this one had of it. */
static uint64_t uncredited(struct collector *c, const struct offcpu_event *e)
{
	struct credit *cr = credit_of(c, e->tid, e->time - e->delta);
	uint64_t period = e->delta;

	if (!cr)
		return period;
	period = e->time > cr->upto ? e->time - cr->upto : 0;
	free(u32_map_del(&c->credits, e->tid));
	return period;
}

/*
 * A sum's time less the written part of a split block in it: the thread's
 * first block to end after the switch is the split one, with its key.
 */
static uint64_t sum_uncredited(struct collector *c, const struct offcpu_key *k, uint64_t total)
{
	struct credit *cr = u32_map_get(&c->credits, k->tid);
	uint64_t done;

	if (!cr || cr->ustack != k->ustack || cr->kstack != k->kstack || cr->state != k->state)
		return total;
	done = cr->upto - cr->ts;
	free(u32_map_del(&c->credits, k->tid));
	return total > done ? total - done : 0;
}

static int on_event(void *ctx, void *data, size_t size)
{
	struct collector *c = ctx;
	const struct offcpu_event *e = data;
	const struct offcpu_wevent *we = data;

	/* A user stack copy (dwarf): reserved before the block that names it ends. */
	if (size >= sizeof(uint64_t) && *(const uint64_t *)data == OFFCPU_UCOPY_MAGIC) {
		if (stacks_add_copy(c->stacks, data, size))
			c->err = -1;
		return 0;
	}
	if (size < sizeof(*e))
		return 0;
	c->st.direct++;
	return add_sample(c, e->pid, e->tid, e->cpu, e->time, uncredited(c, e), e->kstack,
			  e->ustack, size >= sizeof(*we) ? &we->w : NULL);
}

static int add_sum(struct collector *c, const void *key, const struct offcpu_val *v)
{
	const struct offcpu_key *k = key;

	return add_sample(c, k->pid, k->tid, v->cpu, v->last, sum_uncredited(c, k, v->total),
			  k->kstack, k->ustack, NULL);
}

static int add_wsum(struct collector *c, const void *key, const struct offcpu_val *v)
{
	const struct offcpu_wkey *k = key;

	return add_sample(c, k->k.pid, k->k.tid, v->cpu, v->last,
			  sum_uncredited(c, &k->k, v->total), k->k.kstack, k->k.ustack, &k->w);
}

typedef int (*sum_fn)(struct collector *c, const void *key, const struct offcpu_val *v);

/* The largest sums key: the buffers below hold either. */
#define SUM_KEY_MAX	sizeof(struct offcpu_wkey)

/* Fallback for kernels without batch operations on hash maps. */
static int drain_one_by_one(struct collector *c, int fd, sum_fn add)
{
	uint64_t key[SUM_KEY_MAX / 8], next[SUM_KEY_MAX / 8];
	struct offcpu_val val;
	void *prev = NULL;

	while (!bpf_map_get_next_key(fd, prev, next)) {
		if (!bpf_map_lookup_elem(fd, next, &val)) {
			bpf_map_delete_elem(fd, next);
			if (add(c, next, &val))
				return -1;
		}
		memcpy(key, next, sizeof(key));
		prev = key;
	}
	return 0;
}

/* Move the in-kernel sums of short blocks (map FD, keys of KEY_SIZE) into samples. */
static int drain_map(struct collector *c, int fd, size_t key_size, sum_fn add)
{
	enum { BATCH = 512 };
	static uint64_t keys[BATCH * SUM_KEY_MAX / 8];
	static struct offcpu_val vals[BATCH];
	uint32_t out_batch, *in = NULL;
	const char *k = (const char *)keys;

	/* The copies of the stacks these blocks name are in the ring: unwind them first. */
	if (c->ld->dwarf && ring_buffer__consume(c->rb) < 0)
		return -1;

	for (;;) {
		uint32_t n = BATCH;
		int err = bpf_map_lookup_and_delete_batch(fd, in, &out_batch, keys, vals, &n, NULL);

		for (uint32_t i = 0; i < n && !err; i++)
			if (add(c, k + i * key_size, &vals[i]))
				return -1;
		if (err && errno == ENOENT) {
			for (uint32_t i = 0; i < n; i++)
				if (add(c, k + i * key_size, &vals[i]))
					return -1;
			return 0;
		}
		/* No batch operations on this kernel, or a failure mid-way. */
		if (err)
			return drain_one_by_one(c, fd, add);
		in = &out_batch;
	}
}

static int drain_sums(struct collector *c)
{
	if (drain_map(c, c->ld->sums_fd, sizeof(struct offcpu_key), add_sum))
		return -1;
	if (c->wakers && drain_map(c, c->ld->wsums_fd, sizeof(struct offcpu_wkey), add_wsum))
		return -1;
	return 0;
}

/* The build-id cache that files of other mount namespaces are copied into. */
static struct mapped_files *open_mapped_files(const struct offcpu_opts *o)
{
	char dir[4096];

	if (o->no_buildid_cache || bidcache_dir(dir, sizeof(dir)))
		return mapped_files_new(NULL);
	return mapped_files_new(dir);
}

struct collector *collector_start(struct pd_writer *w, struct loader *ld,
				  const struct offcpu_opts *o,
				  const uint32_t *pids, size_t nr_pids)
{
	struct collector *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->w = w;
	c->ld = ld;
	c->o = o;
	c->stacks = stacks_new(ld, o->unwind_tables, o->copy_bytes);
	c->scratch = malloc(SAMPLE_MAX_SIZE(ld->max_stack));
	c->last_drain = now_ns();
	c->files = open_mapped_files(o);
	if (!c->stacks || !c->scratch || !c->files)
		goto nomem;
	if (o->switch_mode && !(c->live = live_tasks_new()))
		goto nomem;
	if (o->wakers && !(c->wakers = wakers_new(c->stacks, ld->max_stack)))
		goto nomem;
	c->te = task_events_open(o, libbpf_num_possible_cpus(), pids, nr_pids,
				 ld->dwarf ? &(struct task_events_unwind){ stacks_unwind_regs, c->stacks,
									   o->copy_bytes } : NULL);
	if (!c->te)
		goto fail;
	c->rb = ring_buffer__new(ld->events_fd, on_event, c, NULL);
	if (!c->rb) {
		fprintf(stderr, "offcpu: cannot read the BPF ring buffer: %s\n", strerror(errno));
		goto fail;
	}
	if (task_events_synthesize(c->te, pids, nr_pids, queue, c))
		goto nomem;
	return c;
nomem:
	fprintf(stderr, "offcpu: out of memory\n");
fail:
	collector_free(c);
	return NULL;
}

void collector_sample(struct collector *c)
{
	c->file_start = now_ns();	/* the first file's window starts with the recording */
	task_events_sample(c->te);
}

static void read_all(struct collector *c)
{
	if (task_events_read(c->te, queue, c))
		c->err = -1;
}

int collector_poll(struct collector *c, int timeout_ms)
{
	uint64_t now;

	if (ring_buffer__poll(c->rb, timeout_ms) < 0 && errno != EINTR)
		return -1;
	read_all(c);
	now = now_ns();
	if (now - c->last_drain >= DRAIN_NS) {
		if (drain_sums(c))
			c->err = -1;
		c->last_drain = now;
		flush(c, now > LAG_NS ? now - LAG_NS : 0);
	}
	return c->err;
}

static void read_counters(struct collector *c)
{
	int n = libbpf_num_possible_cpus();
	uint64_t *v = calloc(n, sizeof(uint64_t));

	if (!v)
		return;
	for (uint32_t i = 0; i < COUNTER_MAX; i++) {
		if (bpf_map_lookup_elem(c->ld->counters_fd, &i, v))
			continue;
		for (int cpu = 0; cpu < n; cpu++)
			c->st.counters[i] += v[cpu];
	}
	free(v);
}

/* One counter summed over the CPUs now (the final counts are read once, at the end). */
static uint64_t counter_now(struct collector *c, uint32_t idx)
{
	int n = libbpf_num_possible_cpus();
	uint64_t *v = n > 0 ? calloc(n, sizeof(uint64_t)) : NULL, sum = 0;

	if (v && !bpf_map_lookup_elem(c->ld->counters_fd, &idx, v))
		for (int cpu = 0; cpu < n; cpu++)
			sum += v[cpu];
	free(v);
	return sum;
}

void collector_progress(struct collector *c, struct collector_progress *p)
{
	p->samples = c->st.samples;
	p->lost = counter_now(c, DROP_SUMS);
	p->bytes = pd_data_size(c->w);
	p->queued = c->q.bytes;
}

/* LOST samples dropped in the kernel, so perf report shows "lost samples". */
static int write_lost(struct collector *c, uint64_t lost, uint64_t time)
{
	/* offcpu-time's sample_id trailer has the same layout as the dummy's. */
	struct {
		struct perf_record_lost_samples r;
		struct perf_sample_id_all sid;
	} r = {
		{ { PERF_RECORD_LOST_SAMPLES, 0, sizeof(r) }, lost },
		{ .time = time, .id = OFFCPU_ID },
	};

	if (!lost)
		return 0;
	return queue(c, &r.r.header, r.sid.time);
}

static void add_build_ids(struct collector *c)
{
	uint8_t id[BUILD_ID_MAX];
	int n;

	if (c->o->kstack && (n = build_id_of_kernel(id)) > 0)
		pd_add_build_id(c->w, PERF_RECORD_MISC_KERNEL, -1, id, n, "[kernel.kallsyms]");
	/* Every file seen so far: a superset of what a rotated file maps. */
	mapped_files_add_build_ids(c->files, c->w);
}

/* The events, the ids of the task events and the build-ids of the current file. */
static void describe_file(struct collector *c)
{
	struct perf_event_attr a;
	uint64_t id = OFFCPU_ID, blocked_id = OFFCPU_BLOCKED_ID;

	offcpu_event_attr(&a, c->o);
	pd_add_event(c->w, "offcpu-time", &a, &id, 1);
	if (c->wakers) {
		id = OFFCPU_WAKER_ID;
		pd_add_event(c->w, "offcpu-waker", &a, &id, 1);
	}
	/* Its own event, so perf script names it and perf report lists it apart. */
	if (c->file.blocked_threads)
		pd_add_event(c->w, "offcpu-blocked", &a, &blocked_id, 1);
	task_events_describe(c->te, c->w);
	add_build_ids(c);
	c->file.bytes = pd_data_size(c->w);
	c->st.bytes += c->file.bytes;
}

/* Samples lost in the kernel so far (as collector_lost counts them at the end). */
static uint64_t lost_now(struct collector *c)
{
	return counter_now(c, DROP_SUMS) + counter_now(c, DROP_UNSEEN);
}

/* Every record up to T is in the queue: the ring, the task events, the sums. */
static void take_all(struct collector *c)
{
	while (ring_buffer__consume(c->rb) > 0)
		;
	read_all(c);
	if (drain_sums(c))
		c->err = -1;
	c->last_drain = now_ns();
}

/* Queue a record of the live processes for the new file (no side effects). */
static int queue_live(void *ctx, const struct perf_event_header *rec, uint64_t time)
{
	struct collector *c = ctx;

	return ordered_queue(&c->q, rec, time);
}

struct pd_writer *collector_switch(struct collector *c, struct pd_writer *next,
				   struct collector_file *done)
{
	struct pd_writer *old = c->w;
	uint64_t ran, lost;

	c->end = now_ns();
	c->switching = true;
	take_all(c);
	credits_purge(c);
	if (blocked_scan_end(c->ld, c->end, add_blocked, c, &ran))
		c->err = -1;
	lost = lost_now(c);
	write_lost(c, lost - c->lost_before, c->end);
	c->file.lost = lost - c->lost_before;
	c->lost_before = lost;
	flush(c, c->end);
	describe_file(c);
	*done = c->file;
	done->start = c->file_start;
	done->end = c->end;
	c->w = next;
	c->file = (struct collector_file){ 0 };
	c->file_start = c->end;
	c->end = 0;
	c->switching = false;
	if (live_tasks_emit(c->live, task_events_id(c->te), queue_live, c))
		c->err = -1;
	return old;
}

void collector_end(struct collector *c)
{
	c->end = now_ns();
	task_events_sample_stop(c->te);
}

int collector_finish(struct collector *c, struct collector_stats *st)
{
	if (!c->end)
		collector_end(c);
	while (ring_buffer__consume(c->rb) > 0)
		;
	read_all(c);
	if (drain_sums(c) ||
	    blocked_scan_end(c->ld, c->end, add_blocked, c, &c->st.blocked_ran))
		c->err = -1;
	read_counters(c);
	c->st.unwind = stacks_unwind_counts(c->stacks);
	if (c->st.unwind)
		c->st.counters[STAT_USTACK_WRONG] += stacks_wrong_reuses(c->stacks);
	c->file.lost = collector_lost(&c->st) - c->lost_before;
	if (c->file.lost)
		write_lost(c, c->file.lost, now_ns());
	flush(c, UINT64_MAX);
	describe_file(c);
	mapped_files_summary(c->files, stderr, c->o->verbose);
	c->st.lost_task_events = task_events_lost(c->te);
	c->st.lost_oncpu = task_events_lost_samples(c->te);
	c->st.blocked_threads = c->file.blocked_threads;
	c->st.blocked_ns = c->file.blocked_ns;
	c->st.last = c->file;
	c->st.last.start = c->file_start;
	c->st.last.end = c->end;
	*st = c->st;
	return c->err;
}

void collector_free(struct collector *c)
{
	if (!c)
		return;
	ring_buffer__free(c->rb);
	task_events_free(c->te);
	ordered_free(&c->q);
	wakers_free(c->wakers);
	stacks_free(c->stacks);
	mapped_files_free(c->files);
	live_tasks_free(c->live);
	u32_map_free(&c->credits, free);
	free(c->scratch);
	free(c);
}
