// SPDX-License-Identifier: GPL-2.0
/* Threads that stay blocked: the task iterators, and the hash at the end. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "lib/clock.h"
#include "record/blocked.h"

typedef int (*record_fn)(void *ctx, const struct offcpu_blocked *b);

/* FN for each whole record in BUF (HAVE bytes); the rest moves to the front. */
static int take_records(struct offcpu_blocked *buf, size_t *have, record_fn fn, void *ctx)
{
	size_t whole = *have / sizeof(*buf);
	int err = 0;

	for (size_t i = 0; i < whole && !err; i++)
		err = fn(ctx, &buf[i]);
	*have -= whole * sizeof(*buf);
	memmove(buf, buf + whole, *have);
	return err;
}

/*
 * Runs the task iterator PROG once: FN for each record it writes, POLL (or
 * NULL) after each read.  The dwarf start scan puts a stack copy in the
 * ring per thread, more than the ring holds on a busy machine: each read
 * runs the program over the next few hundred threads, so emptying the ring
 * between reads keeps them all.
 */
static int run_iter(struct bpf_program *prog, record_fn fn, void *ctx, blocked_poll_fn poll,
		    void *poll_ctx)
{
	static struct offcpu_blocked buf[256];
	struct bpf_link *link = bpf_program__attach_iter(prog, NULL);
	size_t have = 0;
	ssize_t n = 0;
	int fd, err = 0;

	fd = link ? bpf_iter_create(bpf_link__fd(link)) : -1;
	while (fd >= 0 && !err) {
		n = read(fd, (char *)buf + have, sizeof(buf) - have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		have += n;
		err = take_records(buf, &have, fn, ctx);
		if (poll)
			poll(poll_ctx);
	}
	if (fd < 0 || n < 0)
		fprintf(stderr, "offcpu: cannot run the task iterator %s: %s\n",
			bpf_program__name(prog), strerror(errno));
	if (fd >= 0)
		close(fd);
	bpf_link__destroy(link);
	return fd < 0 || n < 0 ? -1 : err;
}

static int count_start(void *ctx, const struct offcpu_blocked *b)
{
	struct blocked_start *st = ctx;

	st->threads++;
	if (b->ustack >= 0)
		st->ustacks++;
	return 0;
}

int blocked_scan_start(struct loader *l, struct blocked_start *st, blocked_poll_fn poll,
		       void *poll_ctx)
{
	memset(st, 0, sizeof(*st));
	if (!l->scan_start)
		return 0;
	return run_iter(l->scan_start, count_start, st, poll, poll_ctx);
}

/*
 * The CPU thread TID of process PID last ran on (/proc's "processor", field
 * 39 of stat), or -1 when the thread is gone.
 */
static int thread_cpu(uint32_t pid, uint32_t tid)
{
	char path[64], line[1024], *p, *save = NULL;
	FILE *f;
	int field = 2, cpu = -1;

	snprintf(path, sizeof(path), "/proc/%u/task/%u/stat", pid, tid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	/* The name may hold blanks and ')': the fields follow the last ')'. */
	if (fgets(line, sizeof(line), f) && (p = strrchr(line, ')'))) {
		cpu = 0;
		for (p = strtok_r(p + 1, " ", &save); p; p = strtok_r(NULL, " ", &save))
			if (++field == 39) {
				cpu = atoi(p);
				break;
			}
	}
	fclose(f);
	return cpu;
}

/* Its CPU time in ns (/proc's schedstat), 0 if unknown. */
static uint64_t thread_runtime(uint32_t pid, uint32_t tid)
{
	char path[64];
	unsigned long long ns = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/task/%u/schedstat", pid, tid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	if (fscanf(f, "%llu", &ns) != 1)
		ns = 0;
	fclose(f);
	return ns;
}

/*
 * Whether a thread whose block looks open ran after it, before END: its
 * switch-in had no sched_switch event (see end_unseen in offcpu.bpf.c), so
 * it was not blocked at the end.  It ran longer than the time since END.
 */
static bool ran_before(const struct offcpu_blocked *b, uint64_t end, uint64_t now)
{
	uint64_t runtime = b->runtime ? thread_runtime(b->pid, b->tid) : 0;

	return runtime > b->runtime && runtime - b->runtime > now - end;
}

struct end_walk {
	blocked_fn fn;
	void *ctx;
	uint64_t end;
	uint64_t *ran;
};

static int end_one(void *ctx, const struct offcpu_blocked *b)
{
	struct end_walk *w = ctx;
	int cpu = thread_cpu(b->pid, b->tid);

	if (!b->ts || cpu < 0)	/* not blocked, or exited since */
		return 0;
	if (ran_before(b, w->end, mono_ns())) {
		(*w->ran)++;
		return 0;
	}
	return w->fn(w->ctx, b, cpu);
}

/* Hash variants: every entry of tid_start with a start time. */
static int end_hash(int fd, struct end_walk *w)
{
	uint32_t keys[2];
	struct offcpu_start s;
	void *prev = NULL;
	int i = 0, err = 0;

	for (; !err && !bpf_map_get_next_key(fd, prev, &keys[i]); prev = &keys[i], i ^= 1) {
		struct offcpu_blocked b = { 0 };

		if (bpf_map_lookup_elem(fd, &keys[i], &s) || !s.ts)
			continue;
		b.ts = s.ts;
		b.pid = s.tgid;
		b.tid = keys[i];
		b.ustack = s.ustack;
		b.kstack = s.kstack;
		b.state = s.state;
		b.runtime = s.runtime;
		err = end_one(w, &b);
	}
	return err;
}

int blocked_end_one(const struct offcpu_blocked *b, uint64_t end, blocked_fn fn, void *ctx,
		    uint64_t *ran)
{
	struct end_walk w = { fn, ctx, end, ran };

	return end_one(&w, b);
}

int blocked_scan_end(struct loader *l, uint64_t end, blocked_fn fn, void *ctx,
		     uint64_t *ran)
{
	struct end_walk w = { fn, ctx, end, ran };

	*ran = 0;
	if (l->scan_end)
		return run_iter(l->scan_end, end_one, &w, NULL, NULL);
	if (l->tid_start_fd >= 0)
		return end_hash(l->tid_start_fd, &w);
	return 0;
}
