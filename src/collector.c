// SPDX-License-Identifier: GPL-2.0
/* The recording's data path: BPF and task events in, time-ordered records out. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "build_id.h"
#include "collector.h"
#include "proc_sync.h"

/*
 * A record may only be written once nothing older can still arrive: the
 * sums map is drained every DRAIN_NS, so keep twice that back.
 */
#define DRAIN_NS	(1000ull * 1000000)
#define LAG_NS		(2 * DRAIN_NS)
#define RING_PAGES	64
/* Our synthetic sample ids, far from the kernel's small counters. */
#define OFFCPU_ID	(1ull << 62)

#define SAMPLE_TYPE (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | \
		     PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | \
		     PERF_SAMPLE_CALLCHAIN)
/*
 * perf before 5.19 adds PERF_SAMPLE_RAW to every bpf-output event it reads;
 * declaring it (with an empty payload) lets perf 5.x parse our samples.
 */
#define OFFCPU_SAMPLE_TYPE (SAMPLE_TYPE | PERF_SAMPLE_RAW)
#define DUMMY_SAMPLE_TYPE (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | \
			   PERF_SAMPLE_TIME | PERF_SAMPLE_CPU)

struct qrec {
	uint64_t time, seq;
	struct perf_event_header *rec;
};

struct stack {
	uint32_t nr;
	uint64_t ip[];
};

/* Open-addressing sets: tracked tgids and mapped file names. */
struct u32_set {
	uint32_t *v;
	size_t cap, n;
};

struct str_set {
	char **v;
	size_t cap, n;
};

/* Stacks of the spill maps by id, sorted (user, kernel). */
struct spilled {
	int32_t id;
	struct stack *s;
};

struct spill_cache {
	struct spilled *v;
	size_t n;
};

struct collector {
	struct pd_writer *w;
	struct loader *ld;
	const struct offcpu_opts *o;
	int ncpus;
	int *fds;
	void **rings;
	uint64_t *dummy_ids;
	int *clock_fds;		/* -F: cpu-clock events, output into the dummy rings */
	uint64_t *clock_ids;
	size_t ring_bytes;
	struct ring_buffer *rb;
	struct qrec *q;
	size_t nq, capq;
	uint64_t seq, last_drain;
	struct stack **stacks;
	size_t nr_stacks;
	struct spill_cache spilled[2];
	uint64_t *stack_buf;
	bool filter;
	int sched_known;	/* 0: not looked up, 1: found, -1: unknown */
	uint64_t sched_lo, sched_hi;
	struct u32_set pids;
	struct str_set files;
	void *scratch;
	struct collector_stats st;
	int err;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static uint32_t hash32(uint32_t x)
{
	x ^= x >> 16;
	x *= 0x7feb352d;
	x ^= x >> 15;
	return x;
}

static bool u32_set_has(const struct u32_set *s, uint32_t v)
{
	if (!s->cap)
		return false;
	for (size_t i = hash32(v) & (s->cap - 1);; i = (i + 1) & (s->cap - 1)) {
		if (s->v[i] == v)
			return true;
		if (!s->v[i])
			return false;
	}
}

static int u32_set_add(struct u32_set *s, uint32_t v)
{
	if (!v || u32_set_has(s, v))
		return 0;
	if ((s->n + 1) * 2 > s->cap) {
		struct u32_set n = { calloc(s->cap ? s->cap * 2 : 64, 4), s->cap ? s->cap * 2 : 64, 0 };

		if (!n.v)
			return -1;
		for (size_t i = 0; i < s->cap; i++)
			if (s->v[i])
				u32_set_add(&n, s->v[i]);
		free(s->v);
		*s = n;
	}
	for (size_t i = hash32(v) & (s->cap - 1);; i = (i + 1) & (s->cap - 1)) {
		if (!s->v[i]) {
			s->v[i] = v;
			s->n++;
			return 0;
		}
	}
}

static uint32_t hash_str(const char *s)
{
	uint32_t h = 2166136261u;

	while (*s)
		h = (h ^ (uint8_t)*s++) * 16777619u;
	return h;
}

static int str_set_add(struct str_set *s, const char *str)
{
	size_t i;

	if ((s->n + 1) * 2 > s->cap) {
		struct str_set n = { calloc(s->cap ? s->cap * 2 : 256, sizeof(char *)),
				     s->cap ? s->cap * 2 : 256, 0 };

		if (!n.v)
			return -1;
		for (i = 0; i < s->cap; i++) {
			if (!s->v[i])
				continue;
			size_t j = hash_str(s->v[i]) & (n.cap - 1);

			while (n.v[j])
				j = (j + 1) & (n.cap - 1);
			n.v[j] = s->v[i];
			n.n++;
		}
		free(s->v);
		*s = n;
	}
	for (i = hash_str(str) & (s->cap - 1); s->v[i]; i = (i + 1) & (s->cap - 1))
		if (!strcmp(s->v[i], str))
			return 0;
	s->v[i] = strdup(str);
	if (!s->v[i])
		return -1;
	s->n++;
	return 0;
}

/* ---- the time-ordered queue ---- */

static int queue(struct collector *c, const struct perf_event_header *rec, uint64_t time)
{
	struct qrec *r;

	if (c->nq == c->capq) {
		size_t cap = c->capq ? c->capq * 2 : 1024;
		struct qrec *n = realloc(c->q, cap * sizeof(*n));

		if (!n)
			return -1;
		c->q = n;
		c->capq = cap;
	}
	r = &c->q[c->nq];
	r->rec = malloc(rec->size);
	if (!r->rec)
		return -1;
	memcpy(r->rec, rec, rec->size);
	r->time = time;
	r->seq = c->seq++;
	c->nq++;
	return 0;
}

static int qrec_cmp(const void *a, const void *b)
{
	const struct qrec *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void note_file(struct collector *c, const struct perf_event_header *h)
{
	const char *name;

	if (h->type != PERF_RECORD_MMAP2)
		return;
	name = (const char *)h + 8 + 8 + 8 * 3 + 4 * 2 + 8 * 2 + 4 * 2;
	if (name[0] == '/' && str_set_add(&c->files, name))
		c->err = -1;
}

/* Write every queued record older than CUTOFF, then a round marker. */
static int flush(struct collector *c, uint64_t cutoff)
{
	size_t i;

	if (c->nq)
		qsort(c->q, c->nq, sizeof(*c->q), qrec_cmp);
	for (i = 0; i < c->nq && c->q[i].time <= cutoff; i++) {
		if (!c->err && pd_write(c->w, c->q[i].rec))
			c->err = -1;
		if (c->q[i].rec->type == PERF_RECORD_SAMPLE)
			c->st.samples++;
		note_file(c, c->q[i].rec);
		c->st.records++;
		free(c->q[i].rec);
	}
	if (!i)
		return c->err;
	memmove(c->q, c->q + i, (c->nq - i) * sizeof(*c->q));
	c->nq -= i;
	if (!c->err && pd_finish_round(c->w))
		c->err = -1;
	return c->err;
}

/* ---- samples from BPF records ---- */

/*
 * Kernel stacks taken in the BPF program start with the program itself and
 * the tracepoint glue (bpf_trace_run4, ...); cut them so the chain starts at
 * __schedule, where the thread really stopped.  Looked up once, lazily, so
 * start-up does not pay for reading kallsyms.
 */
static uint32_t sched_skip(struct collector *c, const uint64_t *ip, uint32_t n)
{
	if (!c->sched_known)
		c->sched_known = proc_kallsyms_range("__schedule", &c->sched_lo,
						     &c->sched_hi) ? -1 : 1;
	if (c->sched_known < 0)
		return 0;
	for (uint32_t i = 0; i < n && i < 8; i++)
		if (ip[i] >= c->sched_lo && ip[i] < c->sched_hi)
			return i;
	return 0;
}

/* A stack from a map value: frames up to the first zero, kernel ones from __schedule. */
static struct stack *new_stack(struct collector *c, const uint64_t *ip, bool kernel)
{
	uint32_t n = 0, skip;
	struct stack *s;

	while (n < c->ld->max_stack && ip[n])
		n++;
	skip = kernel ? sched_skip(c, ip, n) : 0;
	s = malloc(sizeof(*s) + (n - skip) * sizeof(uint64_t));
	if (!s)
		return NULL;
	s->nr = n - skip;
	memcpy(s->ip, ip + skip, s->nr * sizeof(uint64_t));
	return s;
}

static int cmp_spilled(const void *a, const void *b)
{
	const struct spilled *x = a, *y = b;

	return (x->id > y->id) - (x->id < y->id);
}

static struct stack *find_spilled(const struct spill_cache *sc, size_t n, int32_t id)
{
	struct spilled key = { .id = id }, *f;

	if (!n)
		return NULL;
	f = bsearch(&key, sc->v, n, sizeof(*sc->v), cmp_spilled);
	return f ? f->s : NULL;
}

/* Adds the spill map's entry KEY to the cache unless its id is known. */
static int cache_spilled(struct collector *c, struct spill_cache *sc, size_t sorted,
			 int fd, const struct offcpu_spill_key *key, bool kernel)
{
	struct spilled *v;
	int32_t id;

	if (bpf_map_lookup_elem(fd, key, &id) || find_spilled(sc, sorted, id))
		return 0;
	v = realloc(sc->v, (sc->n + 1) * sizeof(*v));
	if (!v)
		return -1;
	sc->v = v;
	v[sc->n].id = id;
	v[sc->n].s = new_stack(c, (const uint64_t *)key->ip, kernel);
	if (!v[sc->n].s)
		return -1;
	sc->n++;
	return 0;
}

/*
 * A spill id does not lead to its stack (the map is keyed by the frames), so
 * an unknown one reads the whole spill map (a few hundred entries at most)
 * and caches every stack in it.  Entries are never deleted.
 */
static const struct stack *get_spilled(struct collector *c, int32_t id, bool kernel)
{
	struct spill_cache *sc = &c->spilled[kernel];
	int fd = kernel ? c->ld->kstack_spill_fd : c->ld->ustack_spill_fd;
	struct offcpu_spill_key keys[2];
	size_t sorted = sc->n;
	struct stack *s;
	int i = 0;

	s = find_spilled(sc, sc->n, id);
	if (s)
		return s;
	for (void *prev = NULL; !bpf_map_get_next_key(fd, prev, &keys[i]); prev = &keys[i], i ^= 1)
		if (cache_spilled(c, sc, sorted, fd, &keys[i], kernel))
			break;
	if (sc->n)
		qsort(sc->v, sc->n, sizeof(*sc->v), cmp_spilled);
	return find_spilled(sc, sc->n, id);
}

static const struct stack *get_stack(struct collector *c, int32_t id, bool kernel)
{
	size_t slot = (size_t)id + (kernel ? c->nr_stacks : 0);

	if (id >= 0 && (id & OFFCPU_SPILL_ID))
		return get_spilled(c, id, kernel);
	if (id < 0 || (size_t)id >= c->nr_stacks)
		return NULL;
	if (c->stacks[slot])
		return c->stacks[slot];
	/* Stack ids stay valid for the whole run: nothing deletes them. */
	if (bpf_map_lookup_elem(kernel ? c->ld->kstacks_fd : c->ld->stacks_fd, &id, c->stack_buf))
		return NULL;
	c->stacks[slot] = new_stack(c, c->stack_buf, kernel);
	return c->stacks[slot];
}

static int add_sample(struct collector *c, uint32_t pid, uint32_t tid, uint32_t cpu,
		      uint64_t time, uint64_t period, int32_t kstack, int32_t ustack)
{
	const struct stack *k = get_stack(c, kstack, true), *u = get_stack(c, ustack, false);
	uint64_t *p = c->scratch;
	struct perf_event_header *h = c->scratch;
	uint64_t *ip, *chain;

	h->type = PERF_RECORD_SAMPLE;
	h->misc = u ? PERF_RECORD_MISC_USER : k ? PERF_RECORD_MISC_KERNEL
						: PERF_RECORD_MISC_USER;
	p[1] = OFFCPU_ID;
	ip = &p[2];
	((uint32_t *)&p[3])[0] = pid;
	((uint32_t *)&p[3])[1] = tid;
	p[4] = time;
	((uint32_t *)&p[5])[0] = cpu;
	((uint32_t *)&p[5])[1] = 0;
	p[6] = period;
	chain = &p[8];
	if (k) {
		*chain++ = PERF_CONTEXT_KERNEL;
		memcpy(chain, k->ip, k->nr * 8);
		chain += k->nr;
	}
	if (u) {
		*chain++ = PERF_CONTEXT_USER;
		memcpy(chain, u->ip, u->nr * 8);
		chain += u->nr;
	}
	p[7] = chain - &p[8];
	*ip = u && u->nr ? u->ip[0] : k && k->nr ? k->ip[0] : 0;
	/* RAW: u32 size 4, then 4 zero bytes (see OFFCPU_SAMPLE_TYPE). */
	memset(chain, 0, 8);
	*(uint32_t *)chain = 4;
	chain++;
	h->size = (chain - p) * 8;
	return queue(c, h, time);
}

static int on_event(void *ctx, void *data, size_t size)
{
	struct collector *c = ctx;
	const struct offcpu_event *e = data;

	if (size < sizeof(*e))
		return 0;
	c->st.direct++;
	return add_sample(c, e->pid, e->tid, e->cpu, e->time, e->delta, e->kstack, e->ustack);
}

static int add_sum(struct collector *c, const struct offcpu_key *k, const struct offcpu_val *v)
{
	return add_sample(c, k->pid, k->tid, v->cpu, v->last, v->total, k->kstack, k->ustack);
}

/* Fallback for kernels without batch operations on hash maps. */
static int drain_one_by_one(struct collector *c)
{
	struct offcpu_key key, next;
	struct offcpu_val val;
	int fd = c->ld->sums_fd;
	void *prev = NULL;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		if (!bpf_map_lookup_elem(fd, &next, &val)) {
			bpf_map_delete_elem(fd, &next);
			if (add_sum(c, &next, &val))
				return -1;
		}
		key = next;
		prev = &key;
	}
	return 0;
}

/* Move the in-kernel sums of short blocks into samples. */
static int drain_sums(struct collector *c)
{
	enum { BATCH = 512 };
	static struct offcpu_key keys[BATCH];
	static struct offcpu_val vals[BATCH];
	uint32_t out_batch, *in = NULL;
	int fd = c->ld->sums_fd;

	for (;;) {
		uint32_t n = BATCH;
		int err = bpf_map_lookup_and_delete_batch(fd, in, &out_batch, keys, vals, &n, NULL);

		for (uint32_t i = 0; i < n && !err; i++)
			if (add_sum(c, &keys[i], &vals[i]))
				return -1;
		if (err && errno == ENOENT) {
			for (uint32_t i = 0; i < n; i++)
				if (add_sum(c, &keys[i], &vals[i]))
					return -1;
			return 0;
		}
		if (err && (errno == EINVAL || errno == ENOTSUP || errno == EOPNOTSUPP ||
			    errno == ENOSPC) && !in)
			return drain_one_by_one(c);
		if (err)
			return drain_one_by_one(c);
		in = &out_batch;
	}
}

/* ---- task events from the per-CPU dummy perf events ---- */

static uint64_t rec_time(const struct perf_event_header *h)
{
	/* cpu-clock samples: IDENTIFIER, IP, TID, TIME. */
	if (h->type == PERF_RECORD_SAMPLE)
		return h->size >= sizeof(*h) + 32 ? ((const uint64_t *)(h + 1))[3] : 0;

	const uint8_t *id = (const uint8_t *)h + h->size - SAMPLE_ID_SIZE;
	uint64_t t;

	if (h->size < sizeof(*h) + SAMPLE_ID_SIZE)
		return 0;
	memcpy(&t, id + 8, 8);
	return t;
}

/* In -p/-t/command mode keep only records of the tracked processes. */
static bool keep(struct collector *c, const struct perf_event_header *h)
{
	const uint32_t *u = (const uint32_t *)(h + 1);

	if (!c->filter)
		return true;
	switch (h->type) {
	case PERF_RECORD_FORK:
		if (u32_set_has(&c->pids, u[1]) && u32_set_add(&c->pids, u[0]))
			c->err = -1;
		return u32_set_has(&c->pids, u[0]);
	case PERF_RECORD_SAMPLE:
		return h->size >= sizeof(*h) + 24 && u32_set_has(&c->pids, u[4]);
	case PERF_RECORD_EXIT:
	case PERF_RECORD_COMM:
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		return u32_set_has(&c->pids, u[0]);
	default:
		return true;
	}
}

static void read_ring(struct collector *c, int cpu)
{
	struct perf_event_mmap_page *meta = c->rings[cpu];
	uint8_t *data = (uint8_t *)meta + meta->data_offset;
	uint64_t size = meta->data_size;
	uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = meta->data_tail;

	while (tail < head) {
		struct perf_event_header *h = (void *)(data + tail % size);
		uint64_t off = tail % size;

		if (off + h->size > size) {
			/* Wrapped record: reassemble it. */
			memcpy(c->scratch, data + off, size - off);
			memcpy((uint8_t *)c->scratch + size - off, data, h->size - (size - off));
			h = c->scratch;
		}
		if (h->size < sizeof(*h))
			break;
		if (h->type == PERF_RECORD_LOST)
			c->st.lost_task_events += ((uint64_t *)(h + 1))[1];
		if (keep(c, h) && queue(c, h, rec_time(h)))
			c->err = -1;
		tail += h->size;
	}
	__atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
}

/* Every event of the file: software, sample ids, CLOCK_MONOTONIC like BPF. */
static void sw_attr(struct perf_event_attr *a, uint64_t config, uint64_t sample_type)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = PERF_TYPE_SOFTWARE;
	a->config = config;
	a->sample_type = sample_type;
	a->sample_id_all = 1;
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
}

static void dummy_attr(struct perf_event_attr *a)
{
	sw_attr(a, PERF_COUNT_SW_DUMMY, DUMMY_SAMPLE_TYPE);
	a->comm = 1;
	a->comm_exec = 1;
	a->mmap = 1;
	a->mmap2 = 1;
	a->task = 1;
	a->exclude_kernel = 1;
	a->exclude_hv = 1;
}

static void offcpu_attr(struct perf_event_attr *a, const struct offcpu_opts *o)
{
	sw_attr(a, PERF_COUNT_SW_BPF_OUTPUT, OFFCPU_SAMPLE_TYPE);
	a->sample_period = 1;
	a->exclude_kernel = !o->kstack;
	a->exclude_user = !o->ustack;
	a->sample_max_stack = o->max_stack;
}

static void clock_attr(struct perf_event_attr *a, const struct offcpu_opts *o)
{
	sw_attr(a, PERF_COUNT_SW_CPU_CLOCK, SAMPLE_TYPE);
	a->freq = 1;
	a->sample_freq = o->freq;
	a->exclude_callchain_kernel = !o->kstack;
	a->exclude_callchain_user = !o->ustack;
	a->exclude_idle = 1;
	a->sample_max_stack = o->max_stack;
}

/* -F: on-CPU samples, written into each CPU's dummy ring (SET_OUTPUT). */
static int open_clocks(struct collector *c)
{
	struct perf_event_attr a;

	clock_attr(&a, c->o);
	for (int cpu = 0; cpu < c->ncpus; cpu++) {
		int fd;

		c->clock_fds[cpu] = -1;
		if (c->fds[cpu] < 0)
			continue;
		fd = syscall(SYS_perf_event_open, &a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd < 0 || ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, c->fds[cpu]) ||
		    ioctl(fd, PERF_EVENT_IOC_ID, &c->clock_ids[cpu])) {
			fprintf(stderr, "offcpu: cannot sample on-CPU (cpu-clock) on CPU %d: %s\n",
				cpu, strerror(errno));
			if (fd >= 0)
				close(fd);
			return -1;
		}
		c->clock_fds[cpu] = fd;
	}
	return 0;
}

static int open_dummies(struct collector *c)
{
	struct perf_event_attr a;
	long page = sysconf(_SC_PAGESIZE);

	dummy_attr(&a);
	c->ring_bytes = (RING_PAGES + 1) * page;
	for (int cpu = 0; cpu < c->ncpus; cpu++) {
		int fd = syscall(SYS_perf_event_open, &a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);

		c->fds[cpu] = fd;
		if (fd < 0) {
			if (errno == ENODEV || errno == EINVAL)
				continue;	/* CPU offline or not present */
			fprintf(stderr, "offcpu: cannot open task events on CPU %d: %s\n", cpu,
				strerror(errno));
			return -1;
		}
		c->rings[cpu] = mmap(NULL, c->ring_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (c->rings[cpu] == MAP_FAILED) {
			c->rings[cpu] = NULL;
			fprintf(stderr, "offcpu: cannot map task events of CPU %d: %s\n", cpu,
				strerror(errno));
			return -1;
		}
		if (ioctl(fd, PERF_EVENT_IOC_ID, &c->dummy_ids[cpu])) {
			fprintf(stderr, "offcpu: cannot read a perf event id: %s\n", strerror(errno));
			return -1;
		}
	}
	return 0;
}

static uint64_t first_dummy_id(const struct collector *c)
{
	for (int i = 0; i < c->ncpus; i++)
		if (c->fds[i] >= 0)
			return c->dummy_ids[i];
	return 0;
}

static int synth(void *ctx, const struct perf_event_header *rec, uint64_t time)
{
	return queue(ctx, rec, time);
}

static int synthesize(struct collector *c, const uint32_t *pids, size_t nr_pids)
{
	uint64_t id = first_dummy_id(c);
	int err = 0;

	if (c->o->kstack)
		err = proc_sync_kernel(id, synth, c);
	if (!nr_pids)
		return err ? err : proc_sync_all(id, synth, c);
	for (size_t i = 0; i < nr_pids && !err; i++)
		err = proc_sync_pid(pids[i], id, synth, c);
	return err;
}

static size_t max_entries(const struct loader *ld, const char *name)
{
	return bpf_map__max_entries(bpf_object__find_map_by_name(ld->obj, name));
}

/* A stack id is a bucket: the kernel rounds the entries up to a power of two. */
static size_t buckets(size_t entries)
{
	size_t n = 1;

	while (n < entries)
		n <<= 1;
	return n;
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
	c->ncpus = libbpf_num_possible_cpus();
	c->fds = calloc(c->ncpus, sizeof(int));
	c->rings = calloc(c->ncpus, sizeof(void *));
	c->dummy_ids = calloc(c->ncpus, sizeof(uint64_t));
	c->clock_fds = calloc(c->ncpus, sizeof(int));
	c->clock_ids = calloc(c->ncpus, sizeof(uint64_t));
	/* One cache for both maps: user ids first, kernel ids after them. */
	c->nr_stacks = buckets(max_entries(ld, "stacks"));
	if (buckets(max_entries(ld, "kstacks")) > c->nr_stacks)
		c->nr_stacks = buckets(max_entries(ld, "kstacks"));
	c->stacks = calloc(2 * c->nr_stacks, sizeof(*c->stacks));
	c->stack_buf = calloc(ld->max_stack, sizeof(uint64_t));
	c->scratch = malloc(65536);
	c->last_drain = now_ns();
	if (!c->fds || !c->rings || !c->dummy_ids || !c->stacks || !c->stack_buf || !c->scratch ||
	    !c->clock_fds || !c->clock_ids)
		goto nomem;
	c->filter = nr_pids > 0;
	for (size_t i = 0; i < nr_pids; i++)
		if (u32_set_add(&c->pids, pids[i]))
			goto nomem;
	for (int i = 0; i < c->ncpus; i++)
		c->clock_fds[i] = -1;
	if (open_dummies(c) || (o->freq && open_clocks(c)))
		goto fail;
	c->rb = ring_buffer__new(ld->events_fd, on_event, c, NULL);
	if (!c->rb) {
		fprintf(stderr, "offcpu: cannot read the BPF ring buffer: %s\n", strerror(errno));
		goto fail;
	}
	if (synthesize(c, pids, nr_pids))
		goto nomem;
	return c;
nomem:
	fprintf(stderr, "offcpu: out of memory\n");
fail:
	collector_free(c);
	return NULL;
}

static void read_all(struct collector *c)
{
	for (int cpu = 0; cpu < c->ncpus; cpu++)
		if (c->rings[cpu])
			read_ring(c, cpu);
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

/* Samples dropped in the kernel, so perf report shows "lost samples". */
static int write_lost(struct collector *c)
{
	uint64_t lost = collector_lost(&c->st);
	struct {
		struct perf_event_header h;
		uint64_t lost;
		uint8_t sid[SAMPLE_ID_SIZE];
	} r = { { PERF_RECORD_LOST_SAMPLES, 0, sizeof(r) }, lost, {} };
	struct sample_id sid = { 0, 0, now_ns(), 0, OFFCPU_ID };

	if (!lost)
		return 0;
	/* offcpu-time's sample_id trailer has the same layout as the dummy's. */
	put_sample_id(r.sid, &sid);
	return queue(c, &r.h, sid.time);
}

static void add_build_ids(struct collector *c)
{
	uint8_t id[BUILD_ID_MAX];
	int n;

	if (c->o->kstack && (n = build_id_of_kernel(id)) > 0)
		pd_add_build_id(c->w, PERF_RECORD_MISC_KERNEL, -1, id, n, "[kernel.kallsyms]");
	for (size_t i = 0; i < c->files.cap; i++) {
		if (!c->files.v[i])
			continue;
		n = build_id_of_file(c->files.v[i], id);
		if (n > 0)
			pd_add_build_id(c->w, PERF_RECORD_MISC_USER, -1, id, n, c->files.v[i]);
	}
}

int collector_finish(struct collector *c, struct collector_stats *st)
{
	struct perf_event_attr a;
	uint64_t id = OFFCPU_ID;
	size_t n = 0;

	while (ring_buffer__consume(c->rb) > 0)
		;
	read_all(c);
	if (drain_sums(c))
		c->err = -1;
	read_counters(c);
	write_lost(c);
	flush(c, UINT64_MAX);
	offcpu_attr(&a, c->o);
	pd_add_event(c->w, "offcpu-time", &a, &id, 1);
	for (int i = 0; i < c->ncpus; i++)
		if (c->fds[i] >= 0)
			c->dummy_ids[n++] = c->dummy_ids[i];
	dummy_attr(&a);
	pd_add_event(c->w, "dummy:u", &a, c->dummy_ids, n);
	if (c->o->freq) {
		n = 0;
		for (int i = 0; i < c->ncpus; i++)
			if (c->clock_fds[i] >= 0)
				c->clock_ids[n++] = c->clock_ids[i];
		clock_attr(&a, c->o);
		pd_add_event(c->w, "cpu-clock", &a, c->clock_ids, n);
	}
	add_build_ids(c);
	c->st.bytes = pd_data_size(c->w);
	*st = c->st;
	return c->err;
}

void collector_free(struct collector *c)
{
	if (!c)
		return;
	ring_buffer__free(c->rb);
	for (int i = 0; c->clock_fds && i < c->ncpus; i++)
		if (c->clock_fds[i] >= 0)
			close(c->clock_fds[i]);
	for (int i = 0; c->fds && i < c->ncpus; i++) {
		if (c->rings && c->rings[i])
			munmap(c->rings[i], c->ring_bytes);
		if (c->fds[i] > 0)
			close(c->fds[i]);
	}
	for (size_t i = 0; i < c->nq; i++)
		free(c->q[i].rec);
	for (size_t i = 0; c->stacks && i < 2 * c->nr_stacks; i++)
		free(c->stacks[i]);
	for (int k = 0; k < 2; k++) {
		for (size_t i = 0; i < c->spilled[k].n; i++)
			free(c->spilled[k].v[i].s);
		free(c->spilled[k].v);
	}
	for (size_t i = 0; i < c->files.cap; i++)
		free(c->files.v[i]);
	free(c->files.v);
	free(c->pids.v);
	free(c->q);
	free(c->stacks);
	free(c->stack_buf);
	free(c->scratch);
	free(c->fds);
	free(c->rings);
	free(c->dummy_ids);
	free(c->clock_fds);
	free(c->clock_ids);
	free(c);
}
