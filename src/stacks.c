// SPDX-License-Identifier: GPL-2.0
/* Stack ids to frames: the stack maps, the spill maps and their caches. */
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>

#include "offcpu.h"
#include "proc_sync.h"
#include "stacks.h"

/* Stacks of the spill maps by id, sorted (user, kernel). */
struct spilled {
	int32_t id;
	struct stack *s;
};

struct spill_cache {
	struct spilled *v;
	size_t n;
};

struct stacks {
	const struct loader *ld;
	struct stack **by_id;	/* user ids first, kernel ids after them */
	size_t nr_ids;
	struct spill_cache spilled[2];
	uint64_t *buf;		/* one stack map value */
	int sched_known;	/* 0: not looked up, 1: found, -1: unknown */
	uint64_t sched_lo, sched_hi;
};

/*
 * Kernel stacks taken in the BPF program start with the program itself and
 * the tracepoint glue (bpf_trace_run4, ...); cut them so the chain starts at
 * __schedule, where the thread really stopped.  Looked up once, lazily, so
 * start-up does not pay for reading kallsyms.
 */
static uint32_t sched_skip(struct stacks *s, const uint64_t *ip, uint32_t n)
{
	if (!s->sched_known)
		s->sched_known = proc_kallsyms_range("__schedule", &s->sched_lo,
						     &s->sched_hi) ? -1 : 1;
	if (s->sched_known < 0)
		return 0;
	for (uint32_t i = 0; i < n && i < 8; i++)
		if (ip[i] >= s->sched_lo && ip[i] < s->sched_hi)
			return i;
	return 0;
}

/* A stack from a map value: frames up to the first zero, kernel ones from __schedule. */
static struct stack *new_stack(struct stacks *s, const uint64_t *ip, bool kernel)
{
	uint32_t n = 0, skip;
	struct stack *st;

	while (n < s->ld->max_stack && ip[n])
		n++;
	skip = kernel ? sched_skip(s, ip, n) : 0;
	st = malloc(sizeof(*st) + (n - skip) * sizeof(uint64_t));
	if (!st)
		return NULL;
	st->nr = n - skip;
	memcpy(st->ip, ip + skip, st->nr * sizeof(uint64_t));
	return st;
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
static int cache_spilled(struct stacks *s, struct spill_cache *sc, size_t sorted,
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
	v[sc->n].s = new_stack(s, (const uint64_t *)key->ip, kernel);
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
static const struct stack *get_spilled(struct stacks *s, int32_t id, bool kernel)
{
	struct spill_cache *sc = &s->spilled[kernel];
	int fd = kernel ? s->ld->kstack_spill_fd : s->ld->ustack_spill_fd;
	struct offcpu_spill_key keys[2];
	size_t sorted = sc->n;
	struct stack *st;
	int i = 0;

	st = find_spilled(sc, sc->n, id);
	if (st)
		return st;
	for (void *prev = NULL; !bpf_map_get_next_key(fd, prev, &keys[i]); prev = &keys[i], i ^= 1)
		if (cache_spilled(s, sc, sorted, fd, &keys[i], kernel))
			break;
	if (sc->n)
		qsort(sc->v, sc->n, sizeof(*sc->v), cmp_spilled);
	return find_spilled(sc, sc->n, id);
}

const struct stack *stacks_get(struct stacks *s, int32_t id, bool kernel)
{
	size_t slot = (size_t)id + (kernel ? s->nr_ids : 0);

	if (id >= 0 && (id & OFFCPU_SPILL_ID))
		return get_spilled(s, id, kernel);
	if (id < 0 || (size_t)id >= s->nr_ids)
		return NULL;
	if (s->by_id[slot])
		return s->by_id[slot];
	/* Stack ids stay valid for the whole run: nothing deletes them. */
	if (bpf_map_lookup_elem(kernel ? s->ld->kstacks_fd : s->ld->stacks_fd, &id, s->buf))
		return NULL;
	s->by_id[slot] = new_stack(s, s->buf, kernel);
	return s->by_id[slot];
}

struct stacks *stacks_new(const struct loader *ld)
{
	struct stacks *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->ld = ld;
	s->nr_ids = ld->stack_ids;
	s->by_id = calloc(2 * s->nr_ids, sizeof(*s->by_id));
	s->buf = calloc(ld->max_stack, sizeof(uint64_t));
	if (!s->by_id || !s->buf) {
		stacks_free(s);
		return NULL;
	}
	return s;
}

void stacks_free(struct stacks *s)
{
	if (!s)
		return;
	for (size_t i = 0; s->by_id && i < 2 * s->nr_ids; i++)
		free(s->by_id[i]);
	for (int k = 0; k < 2; k++) {
		for (size_t i = 0; i < s->spilled[k].n; i++)
			free(s->spilled[k].v[i].s);
		free(s->spilled[k].v);
	}
	free(s->by_id);
	free(s->buf);
	free(s);
}
