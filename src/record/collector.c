// SPDX-License-Identifier: GPL-2.0
/*
 * The recording's data path, orchestrated: BPF records (ring buffer and the
 * drained sums map) become samples (stacks, sample_writer), task events and
 * -F's on-CPU samples come from their own rings (task_events, oncpu), and
 * everything leaves in time order
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
#include "record/flight.h"
#include "lib/buildid_cache.h"
#include "lib/clock.h"
#include "lib/hashset.h"
#include "lib/ringbuf.h"
#include "record/live_tasks.h"
#include "record/mapped_files.h"
#include "record/oncpu.h"
#include "record/ordered.h"
#include "record/synthesis.h"
#include "record/sample_writer.h"
#include "record/stacks.h"
#include "record/switch_events.h"
#include "record/task_events.h"
#include "record/wakers.h"

/*
 * A record may only be written once nothing older can still arrive: the
 * sums map is drained every DRAIN_NS, so keep twice that back.
 */
#define DRAIN_NS	(1000ull * 1000000)
#define LAG_NS		(2 * DRAIN_NS)
/* The perf backend pairs a switch once every CPU's ring holds that time: read later than this. */
#define PAIR_LAG_NS	(50ull * 1000000)

struct collector {
	struct pd_writer *w;
	struct loader *ld;
	const struct offcpu_opts *o;
	struct task_events *te;
	struct oncpu *on;	/* -F, else NULL */
	struct ringbuf *rb;	/* the BPF backend's records, else NULL */
	struct switch_events *sw;	/* the perf backend's, else NULL */
	struct ordered_events q;
	uint64_t last_drain;
	uint64_t records_read_at;	/* the task records emitted before this are read */
	uint64_t end;		/* the end of the recording (CLOCK_MONOTONIC ns) */
	struct stacks *stacks;
	uint64_t unknown_ustacks;	/* samples whose user stack id named nothing known */
	struct ktables *kt;	/* --unwind-in kernel, else NULL */
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
	/*
	 * --flight-recorder: the records of the last seconds (in time order,
	 * after the queue) instead of a file; live describes the window's start.
	 */
	struct flight fl;		/* fl.buf NULL: off */
	uint64_t fl_after;		/* the last file's end: nothing older is written again */
	struct collector_trigger trig;	/* the file waited for (trig.time 0: none) */
	bool finished;			/* collector_finish ran: a file takes what it left */
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
	 * address space key catches what the BPF ring delivers first), and
	 * keeps them for its copies unwound once it is gone.
	 */
	if (rec->type == PERF_RECORD_COMM && (rec->misc & PERF_RECORD_MISC_COMM_EXEC))
		stacks_exec_pid(c->stacks, ((const struct perf_record_comm *)rec)->pid, time);
	if (rec->type == PERF_RECORD_FORK && fork->pid == fork->tid)
		stacks_fork_pid(c->stacks, fork->pid, fork->ppid, fork->time);
	stacks_note_mmap(c->stacks, rec, time);
	if (rec->type == PERF_RECORD_EXIT && rec->size >= sizeof(*fork)) {
		/*
		 * Its last thread: the kernel's pid filter lets it go too, or
		 * after PID_FILTER_ENTRIES forks no new process is followed
		 * (the tp variant's sched_process_free does this in BPF).
		 */
		if (c->ld->pid_filter_fd >= 0 && !task_events_follows(c->te, fork->pid))
			bpf_map_delete_elem(c->ld->pid_filter_fd, &fork->pid);
	}
	return ordered_queue(&c->q, rec, time);
}

static void window_push(struct collector *c, const struct perf_event_header *rec, uint64_t time);

static void deliver(void *ctx, const struct perf_event_header *rec, uint64_t time)
{
	struct collector *c = ctx;
	const struct perf_record_fork *exit = (const void *)rec;

	/*
	 * An exit: what the stacks keep of the thread (its stack cache
	 * entries) and of a process (its maps) goes in time order, not when
	 * the exit is read.  Its last stack copies can still wait in the BPF
	 * ring then (a slow consumer: 7.x under TCG lost the last 0.75 s of a
	 * recording's user stacks; task records read before a copy of an
	 * unknown process, see on_event), and would find no maps to unwind
	 * by, or cache the thread again for good.
	 */
	if (rec->type == PERF_RECORD_EXIT && rec->size >= sizeof(*exit)) {
		if (stacks_forget_tid(c->stacks, exit->tid))
			c->err = -1;
		if (exit->pid == exit->tid)
			stacks_forget_pid(c->stacks, exit->pid);
	}
	if (c->fl.buf) {
		window_push(c, rec, time);
		return;
	}
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

	if (c->fl.buf)
		return;	/* a file's one round is written with it */
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

	c->unknown_ustacks += ustack >= 0 && !s.user;
	if (w && c->wakers)
		err = wakers_add(c->wakers, &s, w, c->scratch, queue, c);
	else
		err = queue(c, sample_write(c->scratch, &s), time);
	stacks_done(c->stacks, ustack);
	/* The waker's copy (dwarf) named this one block too. */
	if (w && (w->flags & OFFCPU_WAKER_SEEN))
		stacks_done(c->stacks, w->ustack);
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
static void credits_purge(struct collector *c, uint64_t since)
{
	struct u32_map *m = &c->credits;
	uint32_t *stale = m->n ? calloc(m->n, sizeof(*stale)) : NULL;
	size_t n = 0;

	/* Gathered first: a deletion moves later entries back into its hole. */
	for (size_t i = 0; stale && i < m->cap; i++) {
		const struct credit *cr = m->vals[i];

		if (cr && cr->upto < since)
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
	uint64_t period;
	struct offcpu_sample s;

	/* A flight recorder's file starts at its window: the block's time inside it. */
	if (c->fl.buf && from < c->file_start)
		from = c->file_start;
	period = c->end > from ? c->end - from : 0;
	s = (struct offcpu_sample){
		.id = OFFCPU_BLOCKED_ID, .pid = b->pid, .tid = b->tid, .cpu = cpu,
		.time = c->end, .period = period,
		.kernel = stacks_get(c->stacks, b->kstack, true),
		.user = stacks_get(c->stacks, b->ustack, false),
	};
	int err;

	if (!period || period < c->o->min_block_ns || period > c->o->max_block_ns)
		return 0;
	c->unknown_ustacks += b->ustack >= 0 && !s.user;
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

/* ---- --flight-recorder: the window ---- */

/* A record leaves the window unwritten: the live processes follow it. */
static void evict_aged(void *ctx, const struct perf_event_header *rec)
{
	struct collector *c = ctx;

	if (rec->type != PERF_RECORD_SAMPLE && live_tasks_note(c->live, rec))
		c->err = -1;
}

/* Pushed out by the memory cap before its time is up: counted. */
static void evict_capped(void *ctx, const struct perf_event_header *rec)
{
	struct collector *c = ctx;

	if (rec->type == PERF_RECORD_SAMPLE)
		c->st.flight_capped++;
	evict_aged(ctx, rec);
}

/*
 * The records in memory stay within the cap: the window's buffer is the
 * cap, and the queue's records (held ~2 s for time order) count against
 * it too, so the window gives way to them.
 */
static void window_push(struct collector *c, const struct perf_event_header *rec, uint64_t time)
{
	if (rec->type == PERF_RECORD_SAMPLE)
		c->st.flight_seen++;
	if (flight_push(&c->fl, rec, time, evict_capped, c)) {
		/* Larger than the cap: never the case of a sample under 64 KiB. */
		if (rec->type == PERF_RECORD_SAMPLE)
			c->st.flight_capped++;
		evict_aged(c, rec);
		return;
	}
	while (c->fl.nr > 1 && c->fl.bytes + c->q.bytes > c->o->flight_bytes)
		flight_pop(&c->fl, evict_capped, c);
}

/* Where the window starts when it ends at a trigger or dump at REF. */
static uint64_t window_start(const struct collector *c, uint64_t ref)
{
	uint64_t start = ref > c->o->flight_ns ? ref - c->o->flight_ns : 0;

	return start > c->fl_after ? start : c->fl_after;
}

/* Only the last seconds stay (before the trigger, while one waits for its file). */
static void window_trim(struct collector *c, uint64_t ref)
{
	uint64_t start = window_start(c, ref), t;

	while (flight_oldest(&c->fl, &t) && t < start)
		flight_pop(&c->fl, evict_aged, c);
}

/* Whether the name in /proc/PID[/task/TID]/comm is COMM. */
static bool comm_is(uint32_t pid, uint32_t tid, const char *comm)
{
	char path[64], name[32] = "";
	FILE *f;

	if (tid)
		snprintf(path, sizeof(path), "/proc/%u/task/%u/comm", pid, tid);
	else
		snprintf(path, sizeof(path), "/proc/%u/comm", pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	if (!fgets(name, sizeof(name), f))
		name[0] = '\0';
	fclose(f);
	name[strcspn(name, "\n")] = '\0';
	return !strcmp(name, comm);
}

/*
 * --trigger-pid, --trigger-comm: the thread's name or its process's (the
 * block just ended, so the thread is there to be asked; a name changed
 * meanwhile is the new one).
 */
static bool trigger_wanted(const struct collector *c, uint32_t pid, uint32_t tid)
{
	const struct id_list *pids = &c->o->trigger_pids;
	bool in = !pids->n || id_list_has(pids, pid);

	if (!in || !c->o->trigger_comm)
		return in;
	return comm_is(pid, tid, c->o->trigger_comm) || comm_is(pid, 0, c->o->trigger_comm);
}

/* A block of at least --trigger-block ended: its file is due a little later. */
static void flight_trigger(struct collector *c, const struct offcpu_event *e)
{
	struct collector_trigger *t = &c->trig;
	char path[64];
	FILE *f;

	if (!trigger_wanted(c, e->pid, e->tid))
		return;
	c->st.flight_triggers++;
	if (t->time) {
		c->st.flight_merged++;	/* in the file already waited for */
		return;
	}
	*t = (struct collector_trigger){
		.time = e->time, .due = e->time + c->o->trigger_after_ns,
		.block_ns = e->delta, .pid = e->pid, .tid = e->tid,
	};
	snprintf(path, sizeof(path), "/proc/%u/task/%u/comm", e->pid, e->tid);
	if ((f = fopen(path, "re"))) {
		if (fgets(t->comm, sizeof(t->comm), f))
			t->comm[strcspn(t->comm, "\n")] = '\0';
		fclose(f);
	}
}

/*
 * --unwind-in kernel: copy C's stack was walked in the kernel too (verify:
 * the same frames?), or the walk missed: the loader loads the rows of the
 * files the unwound frames lie in.  Not for the copies of threads asleep
 * at the start (offcpu_blocked.bpf.h's scan, its own CPU field): most
 * sleep on (a whole system's idle daemons), their next block where they
 * slept reuses the copy from the stack cache, and a block elsewhere asks
 * for its files when its walk misses; loading every file they lie in
 * was most of the loader's work at start-up.
 */
static void kernel_walk_copied(struct collector *c, const struct offcpu_ucopy *copy)
{
	const struct stack *k, *u = stacks_get(c->stacks, copy->id, false);
	uint32_t cpu = copy->id >> OFFCPU_DWARF_CPU_SHIFT & (OFFCPU_DWARF_CPUS - 1);

	/* Its block carries the walked stack: this copy is not a miss. */
	if (copy->kernel_id)
		c->st.verify_copies++;
	if (!u)
		return;
	if (!copy->kernel_id) {
		if (cpu == OFFCPU_DWARF_SCAN_CPU)
			return;
		ktables_learn(c->kt, copy->pid, copy->mm, u->ip, u->nr);
		return;
	}
	k = stacks_get(c->stacks, copy->kernel_id, false);
	if (k)
		ktables_compare(c->kt, k->ip, k->nr, u->ip, u->nr);
}

static void read_all(struct collector *c);

/* A long block sent at once (W: its waker, --wakers, else NULL). */
static int add_event(struct collector *c, const struct offcpu_event *e,
		     const struct offcpu_waker *w)
{
	c->st.direct++;
	if (c->o->trigger_ns && e->delta >= c->o->trigger_ns)
		flight_trigger(c, e);
	return add_sample(c, e->pid, e->tid, e->cpu, e->time, uncredited(c, e), e->kstack,
			  e->ustack, w);
}

static int on_event(void *ctx, void *data, size_t size)
{
	struct collector *c = ctx;
	const struct offcpu_event *e = data;
	const struct offcpu_wevent *we = data;

	/* A user stack copy (dwarf): reserved before the block that names it ends. */
	if (size >= sizeof(uint64_t) && *(const uint64_t *)data == OFFCPU_UCOPY_MAGIC) {
		/*
		 * The FORK and exec records before the copy first: a process
		 * forked, blocked and gone before its copy is unwound has only
		 * its parent's maps to be unwound with.
		 */
		if (size >= sizeof(struct offcpu_ucopy) &&
		    ((const struct offcpu_ucopy *)data)->time >= c->records_read_at &&
		    !stacks_knows_copy(c->stacks, data))
			read_all(c);
		if (stacks_add_copy(c->stacks, data, size))
			c->err = -1;
		if (c->kt && size >= sizeof(struct offcpu_ucopy))
			kernel_walk_copied(c, data);
		return 0;
	}
	if (size < sizeof(*e))
		return 0;
	return add_event(c, e, size >= sizeof(*we) ? &we->w : NULL);
}

/* The perf backend's long block (switch_events.c), as the ring would have sent it. */
static int sw_block(void *ctx, const struct offcpu_event *e, const struct offcpu_waker *w)
{
	return add_event(ctx, e, w);
}

/*
 * A sum of one block of --trigger-block or more: a long block the full
 * ring sent to the sums (the threshold is at most --trigger-block), which
 * triggers as it would have from the ring.  One summed with other blocks
 * of its thread and stacks is not told apart: lost as a trigger, counted
 * (STAT_TRIGGER_SUMMED less these).
 */
static void sum_trigger(struct collector *c, const struct offcpu_key *k, const struct offcpu_val *v)
{
	struct offcpu_event e = {
		.time = v->last, .delta = v->total, .pid = k->pid, .tid = k->tid,
	};

	if (!c->o->trigger_ns || v->count != 1 || v->total < c->o->trigger_ns)
		return;
	c->st.flight_from_sums++;
	flight_trigger(c, &e);
}

static int add_sum(struct collector *c, const void *key, const struct offcpu_val *v)
{
	const struct offcpu_key *k = key;

	sum_trigger(c, k, v);
	return add_sample(c, k->pid, k->tid, v->cpu, v->last, sum_uncredited(c, k, v->total),
			  k->kstack, k->ustack, NULL);
}

static int add_wsum(struct collector *c, const void *key, const struct offcpu_val *v)
{
	const struct offcpu_wkey *k = key;

	sum_trigger(c, &k->k, v);
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
	if (c->ld->plan->dwarf && c->rb && ringbuf_consume(c->rb) < 0)
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

/* The perf backend's sums are keyed as the wsums map (the waker zero without --wakers). */
static int sw_sum(void *ctx, const void *key, const struct offcpu_val *v)
{
	struct collector *c = ctx;

	if (c->wakers)
		return add_wsum(c, key, v);
	return add_sum(c, &((const struct offcpu_wkey *)key)->k, v);
}

static int drain_sums(struct collector *c)
{
	stacks_drain_begin(c->stacks);
	if (c->sw && switch_events_drain(c->sw, sw_sum, c))
		return -1;
	if (!c->sw && drain_map(c, c->ld->sums_fd, sizeof(struct offcpu_key), add_sum))
		return -1;
	if (c->wakers && !c->sw &&
	    drain_map(c, c->ld->wsums_fd, sizeof(struct offcpu_wkey), add_wsum))
		return -1;
	stacks_drain_end(c->stacks);
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

/*
 * The task events, and -F's sampler, whose samples they read (with dwarf,
 * its user stacks unwound by the stacks' unwinder).
 */
static int open_events(struct collector *c, const uint32_t *pids, size_t nr_pids)
{
	const struct oncpu_unwind uw = { stacks_unwind_regs, c->stacks, c->o->copy_bytes };
	int ncpus = libbpf_num_possible_cpus();

	c->te = task_events_open(c->o, ncpus, pids, nr_pids);
	if (!c->te)
		return -1;
	if (!c->o->freq)
		return 0;
	c->on = oncpu_open(c->o, ncpus, task_events_fds(c->te), c->ld->plan->dwarf ? &uw : NULL);
	if (!c->on)
		return -1;
	task_events_add_oncpu(c->te, c->on);
	return 0;
}

static bool sw_follows(void *ctx, uint32_t pid)
{
	struct collector *c = ctx;

	return task_events_follows(c->te, pid);
}

static void sw_refresh(void *ctx)
{
	read_all(ctx);
}

/*
 * The perf backend's switch events (sched_switch, or the context-switch
 * software event where tracefs has none), opened before the task records
 * are synthesized.
 */
static int open_switches(struct collector *c)
{
	const struct switch_sink sink = { sw_block, sw_follows, sw_refresh, c };

	c->sw = switch_events_open(c->o, c->ld->plan, c->ld->swevent ? NULL : &c->ld->tp,
				   c->stacks, libbpf_num_possible_cpus(), &sink);
	return c->sw ? 0 : -1;
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
	c->scratch = malloc(SAMPLE_MAX_SIZE(ld->plan->max_stack));
	c->last_drain = mono_ns();
	c->files = open_mapped_files(o);
	if (!c->stacks || !c->scratch || !c->files)
		goto nomem;
	if (ld->perf_backend && open_switches(c))
		goto fail;
	if (ld->ku_rows_fd >= 0 && !(c->kt = ktables_new(ld->ku_rows_fd, ld->ku_files_fd,
							   ld->ku_procs_fd, ld->ku_want_fd,
							   ld->plan->ku_rows)))
		goto nomem;
	if ((o->switch_mode || o->flight_ns) && !(c->live = live_tasks_new()))
		goto nomem;
	if (o->flight_ns && flight_init(&c->fl, o->flight_bytes))
		goto nomem;
	if (o->wakers && !(c->wakers = wakers_new(c->stacks, ld->plan->max_stack)))
		goto nomem;
	if (open_events(c, pids, nr_pids))
		goto fail;
	c->rb = c->sw ? NULL : ringbuf_new(ld->events_fd, on_event, c);
	if (!c->rb && !c->sw) {
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
	c->file_start = mono_ns();	/* the first file's window starts with the recording */
	c->fl_after = c->file_start;
	if (c->on)
		oncpu_start(c->on);
}

static void read_all(struct collector *c)
{
	c->records_read_at = mono_ns();
	if (task_events_read(c->te, queue, c))
		c->err = -1;
	if (task_events_lost(c->te))
		stacks_records_lost(c->stacks);
}

int collector_poll(struct collector *c, int timeout_ms)
{
	uint64_t now, read_at = mono_ns();

	if (c->rb && ringbuf_poll(c->rb, timeout_ms) < 0 && errno != EINTR)
		return -1;
	if (c->sw && switch_events_poll(c->sw, timeout_ms) < 0 && errno != EINTR)
		return -1;
	read_at = mono_ns();
	read_all(c);
	/* Switches wait for the other CPUs' of their time to be in their rings. */
	if (c->sw && switch_events_read(c->sw, read_at > PAIR_LAG_NS ? read_at - PAIR_LAG_NS : 0))
		c->err = -1;
	now = mono_ns();
	if (now - c->last_drain >= DRAIN_NS) {
		if (drain_sums(c))
			c->err = -1;
		c->last_drain = now;
		flush(c, now > LAG_NS ? now - LAG_NS : 0);
		if (c->fl.buf)
			window_trim(c, c->trig.time ? c->trig.time : now - LAG_NS);
	}
	return c->err;
}

static void read_counters(struct collector *c)
{
	int n = libbpf_num_possible_cpus();
	uint64_t *v;

	if (c->sw) {
		for (uint32_t i = 0; i < COUNTER_MAX; i++)
			c->st.counters[i] += switch_events_counters(c->sw)[i];
		return;
	}
	v = calloc(n, sizeof(uint64_t));
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
	uint64_t *v, sum = 0;

	if (c->sw)
		return switch_events_counters(c->sw)[idx];
	v = n > 0 ? calloc(n, sizeof(uint64_t)) : NULL;
	if (v && !bpf_map_lookup_elem(c->ld->counters_fd, &idx, v))
		for (int cpu = 0; cpu < n; cpu++)
			sum += v[cpu];
	free(v);
	return sum;
}

void collector_progress(struct collector *c, struct collector_progress *p)
{
	p->samples = c->st.samples;
	p->lost = counter_now(c, DROP_SUMS) + counter_now(c, STAT_PERF_LOST);
	p->bytes = c->fl.buf ? c->fl.bytes : pd_data_size(c->w);
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
	if (c->on)
		oncpu_describe(c->on, c->w);
	add_build_ids(c);
	c->file.bytes = pd_data_size(c->w);
	c->st.bytes += c->file.bytes;
}

/* Samples lost in the kernel so far (as collector_lost counts them at the end). */
static uint64_t lost_now(struct collector *c)
{
	return counter_now(c, DROP_SUMS) + counter_now(c, DROP_UNSEEN) +
	       counter_now(c, STAT_PERF_LOST);
}

/* Every record up to T is in the queue: the ring, the task events, the sums. */
static void take_all(struct collector *c)
{
	while (c->rb && ringbuf_consume(c->rb) > 0)
		;
	read_all(c);
	if (c->sw && switch_events_read(c->sw, c->end))
		c->err = -1;
	if (drain_sums(c))
		c->err = -1;
	c->last_drain = mono_ns();
}

/* Threads still blocked at c->end, from the kernel's state or the perf backend's. */
static int scan_end(struct collector *c, uint64_t *ran)
{
	if (c->sw)
		return switch_events_blocked(c->sw, c->end, add_blocked, c, ran);
	return blocked_scan_end(c->ld, c->end, add_blocked, c, ran);
}

/* Queue a record of the live processes for the new file (no side effects). */
static int queue_live(void *ctx, const struct perf_event_header *rec, uint64_t time)
{
	struct collector *c = ctx;

	return ordered_queue(&c->q, rec, time);
}

/*
 * A file ends at c->end: every record up to it is delivered, the threads
 * blocked then with their time inside it, split as at a switch (the rest
 * of each block goes where it ends).  SINCE: the previous file's end.
 */
static void end_file(struct collector *c, uint64_t since)
{
	uint64_t ran, lost;

	c->switching = true;
	take_all(c);
	credits_purge(c, since);
	if (scan_end(c, &ran))
		c->err = -1;
	lost = lost_now(c);
	write_lost(c, lost - c->lost_before, c->end);
	c->file.lost = lost - c->lost_before;
	c->lost_before = lost;
	flush(c, c->end);
	c->switching = false;
}

struct pd_writer *collector_switch(struct collector *c, struct pd_writer *next,
				   struct collector_file *done)
{
	struct pd_writer *old = c->w;

	c->end = mono_ns();
	end_file(c, c->file_start);
	describe_file(c);
	*done = c->file;
	done->start = c->file_start;
	done->end = c->end;
	c->w = next;
	c->file = (struct collector_file){ 0 };
	c->file_start = c->end;
	c->end = 0;
	if (live_tasks_emit(c->live, task_events_id(c->te), queue_live, c))
		c->err = -1;
	return old;
}

bool collector_flight_due(const struct collector *c, uint64_t now)
{
	return c->trig.time && now >= c->trig.due;
}

bool collector_flight_waiting(const struct collector *c)
{
	return c->trig.time;
}

/* live_tasks_emit's records go straight into the file, before the window's. */
static int write_now(void *ctx, const struct perf_event_header *rec, uint64_t time)
{
	struct collector *c = ctx;

	(void)time;
	return pd_write(c->w, rec);
}

static int write_windowed(void *ctx, const struct perf_event_header *rec)
{
	struct collector *c = ctx;

	if (rec->type == PERF_RECORD_SAMPLE) {
		c->st.samples++;
		c->file.samples++;
	}
	c->st.records++;
	return pd_write(c->w, rec);
}

int collector_flight_dump(struct collector *c, struct pd_writer *w, struct collector_file *done,
			  struct collector_trigger *why)
{
	uint64_t ref;

	/* After collector_finish everything is in the window already. */
	if (!c->finished) {
		c->end = mono_ns();
		c->file_start = window_start(c, c->trig.time ? c->trig.time : c->end);
		end_file(c, c->fl_after);
	}
	ref = c->trig.time ? c->trig.time : c->end;
	window_trim(c, ref);
	c->w = w;
	/* The processes alive at the window's start, then the window. */
	if (live_tasks_emit(c->live, task_events_id(c->te), write_now, c) ||
	    flight_each(&c->fl, write_windowed, c) || pd_finish_round(w))
		c->err = -1;
	describe_file(c);
	*done = c->file;
	done->start = c->file_start;
	done->end = c->end;
	*why = c->trig;
	/* Each record goes into one file at most: the next window starts here. */
	while (c->fl.nr)
		flight_pop(&c->fl, evict_aged, c);
	c->fl_after = c->file_start = c->end;
	c->file = (struct collector_file){ 0 };
	c->trig = (struct collector_trigger){ 0 };
	c->w = NULL;
	if (!c->finished)
		c->end = 0;
	return c->err;
}

void collector_end(struct collector *c)
{
	c->end = mono_ns();
	if (c->on)
		oncpu_stop(c->on);
	if (c->sw)
		switch_events_stop(c->sw);
}

int collector_finish(struct collector *c, struct collector_stats *st)
{
	if (!c->end)
		collector_end(c);
	/* A file still waited for ends here: its window, and blocks inside it. */
	if (c->fl.buf)
		c->file_start = window_start(c, c->trig.time ? c->trig.time : c->end);
	while (c->rb && ringbuf_consume(c->rb) > 0)
		;
	read_all(c);
	if (c->sw && switch_events_read(c->sw, UINT64_MAX))
		c->err = -1;
	if (drain_sums(c) || scan_end(c, &c->st.blocked_ran))
		c->err = -1;
	read_counters(c);
	c->st.unwind = stacks_unwind_counts(c->stacks);
	c->st.tables = *stacks_tables(c->stacks);
	c->st.kernel_cut = stacks_kernel_cut(c->stacks);
	c->st.waker_ranges = wakers_ranges_how(c->wakers);
	c->st.followed = task_events_followed(c->te);
	if (c->live)
		live_tasks_count(c->live, &c->st.live_threads, &c->st.live_procs);
	if (c->kt)
		ktables_stop(c->kt);
	c->st.ktables = c->kt ? ktables_counts(c->kt) : NULL;
	if (c->st.unwind)
		c->st.counters[STAT_USTACK_WRONG] += stacks_wrong_reuses(c->stacks);
	c->st.counters[STAT_USTACK_UNKNOWN] += c->unknown_ustacks;
	c->unknown_ustacks = 0;
	if (c->wakers)
		wakers_take_counts(c->wakers, &c->st.counters[STAT_WAKER_MARKED_TASK],
				   &c->st.counters[STAT_USTACK_UNKNOWN]);
	c->file.lost = collector_lost(&c->st) - c->lost_before;
	if (c->file.lost)
		write_lost(c, c->file.lost, mono_ns());
	flush(c, UINT64_MAX);
	if (c->fl.buf)
		c->finished = true;
	else
		describe_file(c);
	mapped_files_summary(c->files, stderr, c->o->verbose);
	c->st.lost_task_events = task_events_lost(c->te);
	c->st.lost_oncpu = c->on ? oncpu_lost(c->on) : 0;
	/* The flight recorder's are in a file only if one is written now (-v says). */
	if (!c->fl.buf) {
		c->st.blocked_threads = c->file.blocked_threads;
		c->st.blocked_ns = c->file.blocked_ns;
	}
	c->st.flight_peak = c->fl.peak;
	c->st.flight_left = c->fl.bytes;
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
	ringbuf_free(c->rb);
	switch_events_free(c->sw);
	oncpu_free(c->on);
	task_events_free(c->te);
	ordered_free(&c->q);
	wakers_free(c->wakers);
	stacks_free(c->stacks);
	ktables_free(c->kt);
	mapped_files_free(c->files);
	live_tasks_free(c->live);
	flight_free(&c->fl);
	u32_map_free(&c->credits, free);
	free(c->scratch);
	free(c);
}
