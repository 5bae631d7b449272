// SPDX-License-Identifier: GPL-2.0
/* The perf backend's --wakers: the waking event, and the wakers' names. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "format/perf_records.h"
#include "lib/hashset.h"
#include "record/switch_wakers.h"

/* The tracing flags of a record's common_flags (kernel/trace/trace.h). */
#define TRACE_FLAG_HARDIRQ	0x08
#define TRACE_FLAG_SOFTIRQ	0x10	/* serving a softirq, not only bh disabled */
#define TRACE_FLAG_NMI		0x40

/* What the pairing knows of a thread's blocks, as the last switch-out read said. */
#define BLOCKS_WANTED	((void *)1)
#define BLOCKS_NOT	((void *)2)

/* The sample_id trailer of the ring's other records (TID, TIME, CPU: the switch attr's). */
struct sid_tail {
	uint32_t pid, tid;
	uint64_t time;
	uint32_t cpu, res;
};

struct switch_wakers {
	struct tracefs_sched tp;
	int ncpus;
	int *fds;
	/*
	 * tid -> char[16], in time order; at most pid_max of them (an exited
	 * thread's stays until a FORK reuses its tid).
	 */
	struct u32_map names;
	struct u32_map blocks;		/* tid -> BLOCKS_*, as read */
};

static uint64_t raw_uint(const struct pd_sample *s, const struct tracefs_field *f)
{
	uint32_t v4 = 0;
	uint16_t v2 = 0;
	uint8_t v1 = 0;

	if (!f->size || (uint64_t)f->offset + f->size > s->raw_size)
		return 0;
	if (f->size == 1) {
		memcpy(&v1, (const char *)s->raw + f->offset, 1);
		return v1;
	}
	if (f->size == 2) {
		memcpy(&v2, (const char *)s->raw + f->offset, 2);
		return v2;
	}
	memcpy(&v4, (const char *)s->raw + f->offset, 4);
	return v4;
}

bool switch_wakers_is_waking(const struct switch_wakers *wk, const struct pd_sample *s)
{
	return s->raw && raw_uint(s, &wk->tp.waking_type) == wk->tp.waking_id;
}

/* OFFCPU_WAKER_{HARDIRQ,SOFTIRQ,TASKCTX} from the record's tracing flags. */
static uint32_t irq_context(const struct switch_wakers *wk, const struct pd_sample *s)
{
	uint64_t flags = raw_uint(s, &wk->tp.waking_flags);

	if (flags & (TRACE_FLAG_HARDIRQ | TRACE_FLAG_NMI))
		return OFFCPU_WAKER_HARDIRQ;
	return flags & TRACE_FLAG_SOFTIRQ ? OFFCPU_WAKER_SOFTIRQ : OFFCPU_WAKER_TASKCTX;
}

bool switch_wakers_sample(struct switch_wakers *wk, const struct pd_sample *s,
			  struct waking_rec *r, bool *user)
{
	uint32_t irq = irq_context(wk, s);

	*r = (struct waking_rec){
		.h = { REC_WAKING, 0, sizeof(*r) },
		.wakee = (uint32_t)raw_uint(s, &wk->tp.waking_pid), .cpu = s->cpu,
		.w = { .pid = s->pid, .tid = s->tid, .ustack = -1, .kstack = -1 },
	};
	/* perf gives a kernel thread (PF_KTHREAD) no user registers. */
	r->w.flags = OFFCPU_WAKER_SEEN | irq | (s->uregs_abi ? 0 : OFFCPU_WAKER_KTHREAD);
	/* In an interrupt the user registers are the interrupted task's: not the waker's. */
	*user = s->pid && s->uregs_abi && irq == OFFCPU_WAKER_TASKCTX;
	/*
	 * Not unwound for a thread whose last switch-out read was a block
	 * left out (another process, a filter): its wakings end nothing
	 * recorded.  One not known yet may have switched out on a CPU whose
	 * ring is read after this one's: unwound.
	 */
	return r->wakee && u32_map_get(&wk->blocks, r->wakee) != BLOCKS_NOT;
}

void switch_wakers_blocks(struct switch_wakers *wk, uint32_t tid, bool wanted)
{
	/* Out of memory: not known, unwound (a cost, no loss). */
	u32_map_put(&wk->blocks, tid, wanted ? BLOCKS_WANTED : BLOCKS_NOT);
}

static uint64_t tail_time(const struct perf_event_header *h, size_t body)
{
	struct sid_tail t;

	if (h->size < body + sizeof(t))
		return 0;
	memcpy(&t, (const char *)h + h->size - sizeof(t), sizeof(t));
	return t.time;
}

int switch_wakers_task_record(struct switch_wakers *wk, const struct perf_event_header *h,
			      struct ordered_events *q)
{
	const struct perf_record_comm *c = (const void *)h;
	const struct perf_record_fork *f = (const void *)h;
	struct name_rec n = { .h = { REC_COMM, 0, sizeof(n) } };
	uint64_t time;

	if (h->type == PERF_RECORD_COMM) {
		time = tail_time(h, sizeof(*c) + 1);
		n.tid = c->tid;
		/* The name ends with its NUL, before the padding and the trailer. */
		snprintf(n.comm, sizeof(n.comm), "%.*s", (int)(h->size - sizeof(*c) > 15 ? 15 : h->size - sizeof(*c)), c->comm);
	} else if (h->type == PERF_RECORD_FORK && h->size >= sizeof(*f)) {
		time = f->time;
		n.h.type = REC_FORK;
		n.tid = f->tid;
		n.ptid = f->ptid;
	} else {
		/*
		 * An exit: a later thread under its tid is not known yet.  Its
		 * name stays (a FORK replaces it): an exiting thread wakes its
		 * parent after its EXIT record.
		 */
		if (h->type == PERF_RECORD_EXIT && h->size >= sizeof(*f))
			u32_map_del(&wk->blocks, f->tid);
		return 0;
	}
	return time ? ordered_queue(q, &n.h, time) : 0;
}

/* TID's name is COMM from now on; forgotten when out of memory (read from /proc). */
static void name(struct switch_wakers *wk, uint32_t tid, const char *comm)
{
	char *p = u32_map_get(&wk->names, tid);

	if (!p && (p = malloc(16)) && u32_map_put(&wk->names, tid, p)) {
		free(p);
		p = NULL;
	}
	if (p)
		snprintf(p, 16, "%.15s", comm);
}

void switch_wakers_rename(struct switch_wakers *wk, const struct perf_event_header *h)
{
	const struct name_rec *n = (const void *)h;
	const char *parent;

	if (h->type == REC_COMM) {
		name(wk, n->tid, n->comm);
		return;
	}
	parent = u32_map_get(&wk->names, n->ptid);
	if (parent)
		name(wk, n->tid, parent);
	else
		free(u32_map_del(&wk->names, n->tid));
}

/*
 * A thread older than the recording: its name now in /proc (as the kernel
 * holds it: a kworker's workqueue after '-' or '+' is /proc's addition).
 */
static void proc_name(uint32_t pid, uint32_t tid, char comm[16])
{
	char path[64], buf[64] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/task/%u/comm", pid, tid);
	f = fopen(path, "re");
	if (f) {
		if (!fgets(buf, sizeof(buf), f))
			buf[0] = '\0';
		fclose(f);
	}
	buf[strcspn(buf, "\n")] = '\0';
	if (!strncmp(buf, "kworker/", 8))
		buf[8 + strcspn(buf + 8, "-+")] = '\0';
	snprintf(comm, 16, "%.15s", buf);
}

void switch_wakers_comm(struct switch_wakers *wk, struct offcpu_waker *w, uint32_t cpu)
{
	const char *known;

	if (!w->tid) {
		snprintf(w->comm, sizeof(w->comm), "swapper/%u", cpu % 10000000);
		return;
	}
	known = u32_map_get(&wk->names, w->tid);
	if (known) {
		memcpy(w->comm, known, sizeof(w->comm));
		return;
	}
	proc_name(w->pid, w->tid, w->comm);
	if (w->comm[0])
		name(wk, w->tid, w->comm);
}

/*
 * The waking event of CPU: the switch event's sample layout (one parser
 * for the shared ring), the kernel callchain always (the interrupt
 * functions on it name interrupt wakers), its own switch records not
 * (the switch event writes them), the task records for the names.
 */
static void waking_attr(struct perf_event_attr *a, const struct perf_event_attr *sw,
			const struct tracefs_sched *tp)
{
	*a = *sw;
	a->config = tp->waking_id;
	a->exclude_callchain_kernel = 0;
	a->context_switch = 0;
	a->comm = 1;
	a->comm_exec = 1;
	a->task = 1;
	a->watermark = 0;
	a->wakeup_events = 0;
}

static int open_cpu(struct switch_wakers *wk, const struct perf_event_attr *a, int cpu, int out)
{
	int fd = syscall(SYS_perf_event_open, a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);

	if (fd < 0 || ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, out)) {
		fprintf(stderr, "offcpu: cannot %s the %s perf event on CPU %d: %s\n",
			fd < 0 ? "open" : "redirect", wk->tp.waking_event, cpu, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	wk->fds[cpu] = fd;
	return 0;
}

struct switch_wakers *switch_wakers_open(const struct tracefs_sched *tp,
					 const struct perf_event_attr *switch_attr,
					 const int *fds, int ncpus)
{
	struct switch_wakers *wk = calloc(1, sizeof(*wk));
	struct perf_event_attr a;

	if (wk && !(wk->fds = calloc(ncpus, sizeof(int)))) {
		free(wk);
		wk = NULL;
	}
	if (!wk) {
		fprintf(stderr, "offcpu: out of memory\n");
		return NULL;
	}
	wk->tp = *tp;
	wk->ncpus = ncpus;
	for (int cpu = 0; cpu < ncpus; cpu++)
		wk->fds[cpu] = -1;
	waking_attr(&a, switch_attr, tp);
	for (int cpu = 0; cpu < ncpus; cpu++)
		if (fds[cpu] >= 0 && open_cpu(wk, &a, cpu, fds[cpu])) {
			switch_wakers_free(wk);
			return NULL;
		}
	return wk;
}

void switch_wakers_stop(struct switch_wakers *wk)
{
	for (int cpu = 0; wk && cpu < wk->ncpus; cpu++)
		if (wk->fds[cpu] >= 0)
			ioctl(wk->fds[cpu], PERF_EVENT_IOC_DISABLE, 0);
}

void switch_wakers_free(struct switch_wakers *wk)
{
	if (!wk)
		return;
	for (int cpu = 0; cpu < wk->ncpus; cpu++)
		if (wk->fds[cpu] >= 0)
			close(wk->fds[cpu]);
	u32_map_free(&wk->names, free);
	u32_map_free(&wk->blocks, NULL);
	free(wk->fds);
	free(wk);
}
