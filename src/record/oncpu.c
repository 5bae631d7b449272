// SPDX-License-Identifier: GPL-2.0
/* The on-CPU sampler (-F): per-CPU cpu-clock events, their dwarf unwinding. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "format/perf_data_reader.h"
#include "record/oncpu.h"

/* With dwarf, each sample carries a stack copy (8 KiB by default). */
#define RING_PAGES_COPIES	256
#define UREGS_SAMPLE_TYPE (PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER)

#define CLOCK_SAMPLE_TYPE (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | \
			   PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | \
			   PERF_SAMPLE_CALLCHAIN)

struct oncpu {
	const struct offcpu_opts *o;
	int ncpus;
	int *fds;		/* output into the task events' rings */
	uint64_t *ids;
	/*
	 * With dwarf the samples' stack copies get rings of their own, so
	 * that a burst of them loses samples, never the COMM and MMAP records.
	 */
	void **rings;
	size_t ring_bytes;
	void *scratch;		/* a record that wrapped around its own ring */
	uint64_t lost;
	struct oncpu_unwind uw;	/* fn NULL: the kernel walks user stacks */
	struct perf_event_attr attr;	/* as opened: how its samples read */
	void *rewritten;	/* a sample with its unwound callchain */
	uint64_t *ips;		/* its user frames */
};

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
		a->sample_regs_user = perf_uregs_mask();
		a->sample_stack_user = copy_bytes;
		a->exclude_callchain_user = 1;
	}
}

int oncpu_sample_head(const struct oncpu *on, const struct perf_event_header *h,
		      uint64_t *time, uint32_t *pid)
{
	struct pd_sample s;

	if (!on || pd_parse_sample_attr(&on->attr, false, h, &s))
		return -1;
	*time = s.time;
	*pid = s.pid;
	return 0;
}

/*
 * A sample with REGS_USER and STACK_USER (CLOCK_SAMPLE_TYPE's fields, then
 * those), rewritten without them: its kernel callchain, then the user
 * frames unwound here.  Returns the record to keep, NULL if it is
 * malformed.
 */
static const struct perf_event_header *unwind_sample(struct oncpu *on,
						     const struct perf_event_header *in)
{
	uint64_t mask = on->attr.sample_regs_user, uregs[PERF_UREGS_MAX] = { 0 };
	const uint8_t *chain;
	struct pd_sample s;
	uint32_t nips = 0;
	uint8_t *out, *w;
	size_t head;

	if (pd_parse_sample_attr(&on->attr, false, in, &s) || !s.ips)
		return NULL;
	/* The kernel writes the registers in the order of their indexes. */
	for (int i = 0; s.uregs_abi && i < PERF_UREGS_MAX; i++)
		if (perf_uregs[i] >= 0)
			uregs[i] = s.uregs[__builtin_popcountll(mask & ((1ull << perf_uregs[i]) - 1))];
	/* No user registers (a kernel thread): the kernel callchain alone. */
	if (s.uregs_abi && s.stack && on->o->ustack) {
		nips = on->uw.fn(on->uw.ctx, s.pid, s.tid, uregs, s.stack, s.stack_dyn,
				 s.stack_dyn < on->uw.copy_bytes, on->ips, on->o->max_stack);
	}
	/* Its head up to the callchain (CPU, PERIOD included), the kernel frames, the user ones. */
	chain = (const uint8_t *)s.ips;
	head = chain - 8 - (const uint8_t *)in;
	out = on->rewritten;
	memcpy(out, in, head);
	w = out + head;
	memcpy(w, &(uint64_t){ s.nr + (nips ? nips + 1 : 0) }, 8);
	memcpy(w + 8, chain, s.nr * 8);
	w += 8 + s.nr * 8;
	if (nips) {
		memcpy(w, &(uint64_t){ PERF_CONTEXT_USER }, 8);
		memcpy(w + 8, on->ips, nips * 8);
		w += 8 + nips * 8;
	}
	((struct perf_event_header *)out)->size = (uint16_t)(w - out);
	return (const void *)out;
}

const struct perf_event_header *oncpu_sample(struct oncpu *on, const struct perf_event_header *h)
{
	return on->uw.fn ? unwind_sample(on, h) : h;
}

void oncpu_read(struct oncpu *on, int cpu, perf_ring_fn fn, void *ctx)
{
	if (on->rings[cpu])
		on->lost += perf_ring_read(on->rings[cpu], on->scratch, fn, ctx);
}

static void clocks_ioctl(struct oncpu *on, unsigned long req, const char *what)
{
	for (int cpu = 0; cpu < on->ncpus; cpu++)
		if (on->fds[cpu] >= 0 && ioctl(on->fds[cpu], req, 0))
			fprintf(stderr, "offcpu: warning: cannot %s on-CPU sampling on CPU %d: %s\n",
				what, cpu, strerror(errno));
}

void oncpu_start(struct oncpu *on)
{
	clocks_ioctl(on, PERF_EVENT_IOC_ENABLE, "start");
}

void oncpu_stop(struct oncpu *on)
{
	clocks_ioctl(on, PERF_EVENT_IOC_DISABLE, "stop");
}

uint64_t oncpu_lost(const struct oncpu *on)
{
	return on->lost;
}

/* Samples into each CPU's task events ring (SET_OUTPUT), or with dwarf's stack copies into their own. */
static int open_clocks(struct oncpu *on, const int *dummy_fds)
{
	struct perf_event_attr a;
	bool own = on->uw.fn != NULL;

	clock_attr(&a, on->o, on->uw.copy_bytes);
	on->attr = a;
	/* Enabled when the recording starts: setup's /proc walks would fill the rings. */
	a.disabled = 1;
	on->ring_bytes = (RING_PAGES_COPIES + 1) * sysconf(_SC_PAGESIZE);
	for (int cpu = 0; cpu < on->ncpus; cpu++) {
		int fd;

		if (dummy_fds[cpu] < 0)
			continue;
		fd = syscall(SYS_perf_event_open, &a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd >= 0 && own && !(on->rings[cpu] = perf_ring_map(fd, on->ring_bytes, cpu))) {
			close(fd);
			return -1;
		}
		if (fd < 0 || (!own && ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, dummy_fds[cpu])) ||
		    ioctl(fd, PERF_EVENT_IOC_ID, &on->ids[cpu])) {
			fprintf(stderr, "offcpu: cannot sample on-CPU (cpu-clock) on CPU %d: %s\n",
				cpu, strerror(errno));
			if (fd >= 0)
				close(fd);
			return -1;
		}
		on->fds[cpu] = fd;
	}
	return 0;
}

static int alloc_cpus(struct oncpu *on)
{
	on->fds = calloc(on->ncpus, sizeof(int));
	on->ids = calloc(on->ncpus, sizeof(uint64_t));
	on->rings = calloc(on->ncpus, sizeof(void *));
	if (!on->fds || !on->ids || !on->rings)
		return -1;
	for (int i = 0; i < on->ncpus; i++)
		on->fds[i] = -1;
	return 0;
}

/* With dwarf: a wrapped record, and a record rewritten with its user frames. */
static int alloc_unwind(struct oncpu *on)
{
	on->scratch = malloc(65536);
	/* A record is at most 64 KiB; its callchain grows by the user frames. */
	on->rewritten = malloc(65536 + (on->o->max_stack + 1) * 8);
	on->ips = calloc(on->o->max_stack, 8);
	return on->scratch && on->rewritten && on->ips ? 0 : -1;
}

struct oncpu *oncpu_open(const struct offcpu_opts *o, int ncpus, const int *dummy_fds,
			 const struct oncpu_unwind *uw)
{
	struct oncpu *on = calloc(1, sizeof(*on));

	if (!on) {
		fprintf(stderr, "offcpu: out of memory\n");
		return NULL;
	}
	on->o = o;
	on->ncpus = ncpus;
	if (uw)
		on->uw = *uw;
	if (alloc_cpus(on) || (uw && alloc_unwind(on))) {
		fprintf(stderr, "offcpu: out of memory\n");
		oncpu_free(on);
		return NULL;
	}
	if (open_clocks(on, dummy_fds)) {
		oncpu_free(on);
		return NULL;
	}
	return on;
}

void oncpu_describe(const struct oncpu *on, struct pd_writer *w)
{
	struct perf_event_attr a;

	clock_attr(&a, on->o, 0);
	perf_events_describe(w, "cpu-clock", &a, on->fds, on->ids, on->ncpus);
}

void oncpu_free(struct oncpu *on)
{
	if (!on)
		return;
	perf_events_close(on->fds, on->rings, on->ring_bytes, on->ncpus);
	free(on->scratch);
	free(on->rewritten);
	free(on->ips);
	free(on->fds);
	free(on->ids);
	free(on->rings);
	free(on);
}
