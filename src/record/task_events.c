// SPDX-License-Identifier: GPL-2.0
/* Task events from per-CPU dummy perf events, and the -p/-t/command filter. */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "format/perf_data_reader.h"
#include "lib/hashset.h"
#include "record/ordered.h"
#include "record/synthesis.h"
#include "record/task_events.h"

#define RING_PAGES	64
/* -F with dwarf: each sample carries a stack copy (8 KiB by default). */
#define RING_PAGES_COPIES	256
#define UREGS_SAMPLE_TYPE (PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER)

/* perf_regs indexes of pc, sp, frame pointer, link register (-1: none), from board/. */
static const int perf_uregs[4] = { OFFCPU_PERF_UREGS };
#define UREGS_MAX 4
#define DUMMY_SAMPLE_TYPE (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | \
			   PERF_SAMPLE_TIME | PERF_SAMPLE_CPU)
#define CLOCK_SAMPLE_TYPE (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | \
			   PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | \
			   PERF_SAMPLE_CALLCHAIN)

struct task_events {
	const struct offcpu_opts *o;
	int ncpus;
	int *fds;
	void **rings;
	uint64_t *dummy_ids;
	int *clock_fds;		/* -F: cpu-clock events, output into the dummy rings */
	uint64_t *clock_ids;
	/*
	 * -F with dwarf: the samples' stack copies get rings of their own, so
	 * that a burst of them loses samples, never the COMM and MMAP records.
	 */
	void **clock_rings;
	size_t ring_bytes, clock_ring_bytes;
	uint64_t lost_samples;
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
	struct task_events_unwind uw;	/* fn NULL: the kernel walks -F user stacks */
	struct perf_event_attr sample_attr;	/* -F with dwarf: how its samples read */
	void *rewritten;	/* a -F sample with its unwound callchain */
	uint64_t *ips;		/* its user frames */
	uint64_t lost;
	int err;
};

void sw_event_attr(struct perf_event_attr *a, uint64_t config, uint64_t sample_type)
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
	sw_event_attr(a, PERF_COUNT_SW_DUMMY, DUMMY_SAMPLE_TYPE);
	a->comm = 1;
	a->comm_exec = 1;
	a->mmap = 1;
	a->mmap2 = 1;
	a->task = 1;
	a->exclude_kernel = 1;
	a->exclude_hv = 1;
}

static uint64_t uregs_mask(void)
{
	uint64_t mask = 0;

	for (int i = 0; i < UREGS_MAX; i++)
		if (perf_uregs[i] >= 0)
			mask |= 1ull << perf_uregs[i];
	return mask;
}

/* The event opened (COPIES: with dwarf's register and stack copies), or as the file says. */
static void clock_attr(struct perf_event_attr *a, const struct offcpu_opts *o,
		       uint32_t copy_bytes)
{
	sw_event_attr(a, PERF_COUNT_SW_CPU_CLOCK, CLOCK_SAMPLE_TYPE);
	a->freq = 1;
	a->sample_freq = o->freq;
	a->exclude_callchain_kernel = !o->kstack;
	a->exclude_callchain_user = !o->ustack;
	a->exclude_idle = 1;
	a->sample_max_stack = o->max_stack;
	if (copy_bytes) {
		a->sample_type |= UREGS_SAMPLE_TYPE;
		a->sample_regs_user = uregs_mask();
		a->sample_stack_user = copy_bytes;
		a->exclude_callchain_user = 1;
	}
}

/*
 * A -F sample with REGS_USER and STACK_USER (CLOCK_SAMPLE_TYPE's fields,
 * then those), rewritten without them: its kernel callchain, then the user
 * frames unwound here.  Returns the record to keep, NULL if it is
 * malformed (dropped, counted as lost).
 */
static const struct perf_event_header *unwind_sample(struct task_events *te,
						     const struct perf_event_header *in)
{
	uint64_t mask = te->sample_attr.sample_regs_user, uregs[UREGS_MAX] = { 0 };
	const uint8_t *chain;
	struct pd_sample s;
	uint32_t nips = 0;
	uint8_t *out, *w;
	size_t head;

	if (pd_parse_sample_attr(&te->sample_attr, false, in, &s) || !s.ips)
		return NULL;
	/* The kernel writes the registers in the order of their indexes. */
	for (int i = 0; s.uregs_abi && i < UREGS_MAX; i++)
		if (perf_uregs[i] >= 0)
			uregs[i] = s.uregs[__builtin_popcountll(mask & ((1ull << perf_uregs[i]) - 1))];
	/* No user registers (a kernel thread): the kernel callchain alone. */
	if (s.uregs_abi && s.stack && te->o->ustack) {
		nips = te->uw.fn(te->uw.ctx, s.pid, s.tid, uregs, s.stack, s.stack_dyn,
				 s.stack_dyn < te->uw.copy_bytes, te->ips, te->o->max_stack);
	}
	/* Its head up to the callchain (CPU, PERIOD included), the kernel frames, the user ones. */
	chain = (const uint8_t *)s.ips;
	head = chain - 8 - (const uint8_t *)in;
	out = te->rewritten;
	memcpy(out, in, head);
	w = out + head;
	memcpy(w, &(uint64_t){ s.nr + (nips ? nips + 1 : 0) }, 8);
	memcpy(w + 8, chain, s.nr * 8);
	w += 8 + s.nr * 8;
	if (nips) {
		memcpy(w, &(uint64_t){ PERF_CONTEXT_USER }, 8);
		memcpy(w + 8, te->ips, nips * 8);
		w += 8 + nips * 8;
	}
	((struct perf_event_header *)out)->size = (uint16_t)(w - out);
	return (const void *)out;
}

static uint64_t rec_time(const struct perf_event_header *h)
{
	const struct perf_record_sample_head *sample = (const void *)h;
	struct perf_sample_id_all sid;

	/* cpu-clock samples: IDENTIFIER, IP, TID, TIME. */
	if (h->type == PERF_RECORD_SAMPLE)
		return h->size >= sizeof(*sample) ? sample->time : 0;
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
	const struct perf_record_sample_head *sample = (const void *)h;
	const struct perf_record_comm *task = (const void *)h;	/* pid first, as in EXIT, MMAP */

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
		return h->size >= offsetof(struct perf_record_sample_head, time) &&
		       u32_set_has(&te->pids, sample->pid);
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

/* Copies every record of a ring into the batch; LOST counts what it lost. */
static void read_ring(struct task_events *te, struct perf_event_mmap_page *meta, uint64_t *lost)
{
	uint8_t *data = (uint8_t *)meta + meta->data_offset;
	uint64_t size = meta->data_size;
	uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = meta->data_tail;

	while (tail < head) {
		struct perf_event_header *h = (void *)(data + tail % size);
		uint64_t off = tail % size;

		if (off + h->size > size) {
			/* Wrapped record: reassemble it. */
			memcpy(te->scratch, data + off, size - off);
			memcpy((uint8_t *)te->scratch + size - off, data, h->size - (size - off));
			h = te->scratch;
		}
		if (h->size < sizeof(*h))
			break;
		if (h->type == PERF_RECORD_LOST)
			*lost += ((const struct perf_record_lost *)h)->lost;
		if (ordered_queue(&te->batch, h, rec_time(h)))
			te->err = -1;
		tail += h->size;
	}
	__atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
}

struct batch_sink {
	struct task_events *te;
	record_fn fn;
	void *ctx;
};

static void deliver(void *ctx, const struct perf_event_header *h, uint64_t time)
{
	struct batch_sink *b = ctx;

	(void)time;	/* read again from the record: an unwound sample is a new one */
	if (!keep(b->te, h))
		return;
	if (b->te->uw.fn && h->type == PERF_RECORD_SAMPLE && !(h = unwind_sample(b->te, h))) {
		b->te->lost++;
		return;
	}
	if (b->fn(b->ctx, h, rec_time(h)))
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
			read_ring(te, te->rings[cpu], &te->lost);
		if (te->clock_rings[cpu])
			read_ring(te, te->clock_rings[cpu], &te->lost_samples);
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

static void clocks_ioctl(struct task_events *te, unsigned long req, const char *what)
{
	for (int cpu = 0; cpu < te->ncpus; cpu++)
		if (te->clock_fds[cpu] >= 0 && ioctl(te->clock_fds[cpu], req, 0))
			fprintf(stderr, "offcpu: warning: cannot %s on-CPU sampling on CPU %d: %s\n",
				what, cpu, strerror(errno));
}

void task_events_sample(struct task_events *te)
{
	clocks_ioctl(te, PERF_EVENT_IOC_ENABLE, "start");
}

void task_events_sample_stop(struct task_events *te)
{
	clocks_ioctl(te, PERF_EVENT_IOC_DISABLE, "stop");
}

uint64_t task_events_lost_samples(const struct task_events *te)
{
	return te->lost_samples;
}

/* A ring of BYTES (a power of two pages and one) for event FD; NULL after a message. */
static void *map_ring(int fd, size_t bytes, int cpu)
{
	void *ring = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	if (ring != MAP_FAILED)
		return ring;
	fprintf(stderr, "offcpu: cannot map the perf events of CPU %d: %s\n", cpu, strerror(errno));
	return NULL;
}

/*
 * -F: on-CPU samples, written into each CPU's dummy ring (SET_OUTPUT), or
 * with dwarf's stack copies into rings of their own.
 */
static int open_clocks(struct task_events *te)
{
	struct perf_event_attr a;
	bool own = te->uw.fn != NULL;

	clock_attr(&a, te->o, te->uw.copy_bytes);
	te->sample_attr = a;
	/* Enabled when the recording starts: setup's /proc walks would fill the rings. */
	a.disabled = 1;
	te->clock_ring_bytes = (RING_PAGES_COPIES + 1) * sysconf(_SC_PAGESIZE);
	for (int cpu = 0; cpu < te->ncpus; cpu++) {
		int fd;

		if (te->fds[cpu] < 0)
			continue;
		fd = syscall(SYS_perf_event_open, &a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd >= 0 && own && !(te->clock_rings[cpu] = map_ring(fd, te->clock_ring_bytes, cpu))) {
			close(fd);
			return -1;
		}
		if (fd < 0 || (!own && ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, te->fds[cpu])) ||
		    ioctl(fd, PERF_EVENT_IOC_ID, &te->clock_ids[cpu])) {
			fprintf(stderr, "offcpu: cannot sample on-CPU (cpu-clock) on CPU %d: %s\n",
				cpu, strerror(errno));
			if (fd >= 0)
				close(fd);
			return -1;
		}
		te->clock_fds[cpu] = fd;
	}
	return 0;
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
		te->rings[cpu] = map_ring(fd, te->ring_bytes, cpu);
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
	te->clock_fds = calloc(te->ncpus, sizeof(int));
	te->clock_ids = calloc(te->ncpus, sizeof(uint64_t));
	te->clock_rings = calloc(te->ncpus, sizeof(void *));
	te->scratch = malloc(65536);
	if (!te->fds || !te->rings || !te->dummy_ids || !te->clock_fds || !te->clock_ids ||
	    !te->clock_rings || !te->scratch)
		return -1;
	for (int i = 0; i < te->ncpus; i++)
		te->clock_fds[i] = -1;
	return 0;
}

struct task_events *task_events_open(const struct offcpu_opts *o, int ncpus,
				     const uint32_t *pids, size_t nr_pids,
				     const struct task_events_unwind *uw)
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
	if (uw && o->freq) {
		te->uw = *uw;
		/* A record is at most 64 KiB; its callchain grows by the user frames. */
		te->rewritten = malloc(65536 + (o->max_stack + 1) * 8);
		te->ips = calloc(o->max_stack, 8);
		if (!te->rewritten || !te->ips)
			goto nomem;
	}
	for (size_t i = 0; i < nr_pids; i++)
		if (u32_set_add(&te->pids, pids[i]))
			goto nomem;
	if (open_dummies(te) || (o->freq && open_clocks(te)))
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

/*
 * The ids of the CPUs whose event opened, packed into OUT (IDS untouched:
 * each rotated file declares them again).
 */
static size_t opened_ids(const int *fds, const uint64_t *ids, uint64_t *out, int ncpus)
{
	size_t n = 0;

	for (int i = 0; i < ncpus; i++)
		if (fds[i] >= 0)
			out[n++] = ids[i];
	return n;
}

void task_events_describe(struct task_events *te, struct pd_writer *w)
{
	uint64_t *ids = calloc(te->ncpus ? te->ncpus : 1, sizeof(*ids));
	struct perf_event_attr a;
	size_t n;

	if (!ids)
		return;
	n = opened_ids(te->fds, te->dummy_ids, ids, te->ncpus);
	dummy_attr(&a);
	pd_add_event(w, "dummy:u", &a, ids, n);
	if (te->o->freq) {
		n = opened_ids(te->clock_fds, te->clock_ids, ids, te->ncpus);
		clock_attr(&a, te->o, 0);
		pd_add_event(w, "cpu-clock", &a, ids, n);
	}
	free(ids);
}

void task_events_free(struct task_events *te)
{
	if (!te)
		return;
	for (int i = 0; te->clock_fds && i < te->ncpus; i++) {
		if (te->clock_rings && te->clock_rings[i])
			munmap(te->clock_rings[i], te->clock_ring_bytes);
		if (te->clock_fds[i] >= 0)
			close(te->clock_fds[i]);
	}
	for (int i = 0; te->fds && i < te->ncpus; i++) {
		if (te->rings && te->rings[i])
			munmap(te->rings[i], te->ring_bytes);
		if (te->fds[i] > 0)
			close(te->fds[i]);
	}
	u32_set_free(&te->pids);
	u32_map_free(&te->born, NULL);
	ordered_free(&te->batch);
	free(te->scratch);
	free(te->rewritten);
	free(te->ips);
	free(te->fds);
	free(te->rings);
	free(te->dummy_ids);
	free(te->clock_fds);
	free(te->clock_ids);
	free(te->clock_rings);
	free(te);
}
