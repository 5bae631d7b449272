// SPDX-License-Identifier: GPL-2.0
/* Stack ids to frames: the stack maps, the spill maps and their caches. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "format/perf_records.h"
#include "lib/clock.h"
#include "lib/hashset.h"
#include "lib/procfs.h"
#include "offcpu.h"
#include "record/kfunc_range.h"
#include "record/stacks.h"
#include "unwind/unwind.h"

/*
 * An interned stack's header, just before it: the dwarf ids naming it
 * (it goes with the last) and its frames' hash (for the set's deletions).
 */
struct interned {
	uint32_t refs;
	uint32_t hash;
	int32_t table_id;	/* its perf backend id (STACKS_TABLE_ID), 0: none */
	uint32_t pad;		/* the stack after it is 8-byte aligned */
};

/*
 * A dwarf id's value in stacks->unwound: its interned stack, bit 0 set
 * once the id went into the stack cache (blocks may reuse it until the
 * thread's entry names another id, see retire).
 */
#define UNWOUND_CACHED	((uintptr_t)1)

/*
 * A cached id its thread's entry no longer holds.  The thread's block in
 * progress when the entry changed may have reused it (the program read the
 * entry before user space replaced it: user space runs behind), and that
 * block's sample comes at its end, however late: the id waits for a copy
 * of the thread taken after the change (its block then ended), then for a
 * drain of the sums (where that block may be summed).
 */
struct retired {
	uint32_t id, tid;
	uint64_t at;		/* when the entry changed (CLOCK_MONOTONIC, as bpf_ktime_get_ns) */
	enum { RETIRED_WAIT, RETIRED_ENDED, RETIRED_DRAINING } state;
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

struct stacks {
	const struct loader *ld;
	struct stack **by_id;	/* user ids first, kernel ids after them */
	size_t nr_ids;
	struct spill_cache spilled[2];
	uint64_t *buf;		/* one stack map value */
	struct unwinder *unwinder;	/* --call-graph dwarf, else NULL */
	struct u32_map unwound;		/* dwarf id -> its stack in interned (UNWOUND_CACHED) */
	struct key_set interned;	/* every distinct stack the ids name, once (by frames) */
	struct u32_map cached;		/* tid -> the id its stack cache entry holds */
	struct retired *retired;	/* cached ids no longer in the cache */
	size_t nr_retired, retired_cap;
	struct stacks_tables tables;	/* their sizes, for -v */
	uint64_t wrong_reuses;		/* --stack-cache verify, dwarf */
	uint64_t cache_cleared;		/* the dwarf stack cache map was full */
	struct offcpu_ucopy *sample_copy;	/* a -F sample's registers and stack */
	uint32_t sample_copy_bytes;
	const struct stack **table;	/* the perf backend's stacks by id, each interned */
	size_t table_n, table_cap;
	const char *sched_how;	/* NULL: not looked up yet (-v says how it was) */
	uint64_t sched_lo, sched_hi;	/* __schedule, or 0, 0: unknown */
};

/*
 * Kernel stacks taken in the BPF program start with the program itself and
 * the tracepoint glue (bpf_trace_run4, ...); cut them so the chain starts at
 * __schedule, where the thread really stopped.  Looked up once, lazily
 * (kfunc_range.c): start-up, and recordings without kernel stacks, pay nothing.
 */
static uint32_t sched_skip(struct stacks *s, const uint64_t *ip, uint32_t n)
{
	if (!s->sched_how)
		s->sched_how = kfunc_range("__schedule", &s->sched_lo, &s->sched_hi);
	for (uint32_t i = 0; i < n && i < OFFCPU_KSTACK_GLUE; i++)
		if (ip[i] >= s->sched_lo && ip[i] < s->sched_hi)
			return i;
	return 0;
}

const char *stacks_kernel_cut(const struct stacks *s)
{
	return s->sched_how;
}

/*
 * A stack from a map value of MAX frames: frames up to the first zero,
 * kernel ones from __schedule, at most --max-stack of them.
 */
static struct stack *new_stack(struct stacks *s, const uint64_t *ip, uint32_t max, bool kernel)
{
	uint32_t n = 0, skip;
	struct stack *st;

	while (n < max && ip[n])
		n++;
	skip = kernel ? sched_skip(s, ip, n) : 0;
	if (n - skip > s->ld->plan->max_stack)
		n = skip + s->ld->plan->max_stack;
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
	v[sc->n].s = new_stack(s, (const uint64_t *)key->ip,
			       kernel ? s->ld->plan->kspill_frames : s->ld->plan->max_stack, kernel);
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

static const struct stack *unwound_get(const struct stacks *s, uint32_t id)
{
	return (const void *)((uintptr_t)u32_map_get(&s->unwound, id) & ~UNWOUND_CACHED);
}

static struct interned *hdr_of(const struct stack *st)
{
	return (struct interned *)st - 1;
}

const struct stack *stacks_get(struct stacks *s, int32_t id, bool kernel)
{
	size_t slot = (size_t)id + (kernel ? s->nr_ids : 0);

	if (id >= 0 && (id & OFFCPU_SPILL_ID))
		return get_spilled(s, id, kernel);
	if (id >= 0 && (id & STACKS_TABLE_ID) && !(id & OFFCPU_DWARF_ID))
		return (size_t)(id & ~STACKS_TABLE_ID) < s->table_n ?
		       s->table[id & ~STACKS_TABLE_ID] : NULL;
	if (id >= 0 && (id & OFFCPU_DWARF_ID) && !kernel)
		return unwound_get(s, id);
	if (id < 0 || (size_t)id >= s->nr_ids)
		return NULL;
	if (s->by_id[slot])
		return s->by_id[slot];
	/* Stack ids stay valid for the whole run: nothing deletes them. */
	if (bpf_map_lookup_elem(kernel ? s->ld->kstacks_fd : s->ld->stacks_fd, &id, s->buf))
		return NULL;
	s->by_id[slot] = new_stack(s, s->buf, kernel ? s->ld->plan->kstack_frames : s->ld->plan->max_stack,
				   kernel);
	return s->by_id[slot];
}

/* Frames searched for in the interned set. */
struct frames {
	const uint64_t *ip;
	uint32_t n;
};

static bool same_stack(const void *ctx, uintptr_t rec, const void *key)
{
	const struct stack *st = (const struct stack *)rec;
	const struct frames *f = key;

	(void)ctx;
	return st->nr == f->n && !memcmp(st->ip, f->ip, f->n * sizeof(*f->ip));
}

/* The one copy of stack ST (frames N of IP) in the set, added if need be. */
static const struct stack *intern(struct stacks *s, const uint64_t *ip, uint32_t n)
{
	const struct frames key = { ip, n };
	uint32_t h = fnv1a(FNV1A_INIT, ip, n * sizeof(*ip));
	struct interned *hdr;
	struct stack *st;

	st = (struct stack *)key_set_get(&s->interned, h, &key, same_stack, NULL);
	if (st)
		return st;
	hdr = malloc(sizeof(*hdr) + sizeof(*st) + n * sizeof(*ip));
	if (!hdr)
		return NULL;
	*hdr = (struct interned){ 0, h, 0, 0 };
	st = (struct stack *)(hdr + 1);
	st->nr = n;
	memcpy(st->ip, ip, n * sizeof(*ip));
	if (key_set_add(&s->interned, h, (uintptr_t)st)) {
		free(hdr);
		return NULL;
	}
	if (s->interned.n > s->tables.stacks_peak)
		s->tables.stacks_peak = s->interned.n;
	return st;
}

/* One id less names ST: the last takes it out of the set. */
static void unintern(struct stacks *s, const struct stack *st)
{
	struct interned *hdr = hdr_of(st);

	if (--hdr->refs)
		return;
	key_set_del(&s->interned, hdr->hash, (uintptr_t)st);
	free(hdr);
}

/* Forgets dwarf ID (its value V in unwound). */
static void unwound_del(struct stacks *s, uint32_t id, void *v)
{
	u32_map_del(&s->unwound, id);
	unintern(s, (const void *)((uintptr_t)v & ~UNWOUND_CACHED));
}

/*
 * Cached ID of TID will not be reused: see struct retired.  GONE: the
 * thread has no block in progress (it exited), only the drain is waited for.
 */
static int retire(struct stacks *s, uint32_t id, uint32_t tid, bool gone)
{
	if (s->nr_retired == s->retired_cap) {
		size_t cap = s->retired_cap ? 2 * s->retired_cap : 256;
		struct retired *v = realloc(s->retired, cap * sizeof(*v));

		if (!v)
			return -1;
		s->retired = v;
		s->retired_cap = cap;
	}
	s->retired[s->nr_retired++] = (struct retired){
		id, tid, mono_ns(), gone ? RETIRED_ENDED : RETIRED_WAIT
	};
	return 0;
}

/* A copy of TID taken at TIME: its blocks that began before have ended. */
static void retired_thread_moved_on(struct stacks *s, uint32_t tid, uint64_t time)
{
	for (size_t i = 0; i < s->nr_retired; i++) {
		struct retired *r = &s->retired[i];

		if (r->tid == tid && r->state == RETIRED_WAIT && time >= r->at)
			r->state = RETIRED_ENDED;
	}
}

/*
 * TID's stack cache entry holds ID now (0: none, the thread is gone); the id
 * it held retires.  TID: a key of the cache map (a waker's with
 * OFFCPU_UCACHE_WAKER).
 */
static int cache_holds(struct stacks *s, uint32_t tid, uint32_t id)
{
	uint32_t old = (uintptr_t)(id ? u32_map_get(&s->cached, tid) : u32_map_del(&s->cached, tid));

	if (id && u32_map_put(&s->cached, tid, (void *)(uintptr_t)id))
		return -1;
	if (s->cached.n > s->tables.cached_peak)
		s->tables.cached_peak = s->cached.n;
	/* Gone: no block of it is in progress, its ids retired earlier wait no more. */
	if (!id)
		retired_thread_moved_on(s, tid, UINT64_MAX);
	return old && old != id ? retire(s, old, tid, !id) : 0;
}

/*
 * The cache map was emptied: the threads gone meanwhile (whose exit was
 * not seen) let their ids go; a live thread's id may still name the block
 * it is in.
 */
static int cache_sweep(struct stacks *s)
{
	struct u32_map *m = &s->cached;
	uint32_t *gone = m->n ? calloc(m->n, sizeof(*gone)) : NULL;
	size_t n = 0;
	char path[32];
	int err = 0;

	/* Gathered first: a deletion moves later entries back into its hole. */
	for (size_t i = 0; gone && i < m->cap; i++) {
		if (!m->vals[i])
			continue;
		snprintf(path, sizeof(path), "/proc/%u", m->keys[i] & ~OFFCPU_UCACHE_WAKER);
		if (access(path, F_OK))
			gone[n++] = m->keys[i];
	}
	for (size_t i = 0; i < n && !err; i++)
		err = cache_holds(s, gone[i], 0);
	free(gone);
	return err;
}

/*
 * The stack cache's entry KEY (the copy's thread, or its waker entry): its
 * registers and the words its unwinding read.  A full map is emptied (entries of exited threads
 * linger when their exit was not seen): only reuses are lost, never a
 * wrong one made.  False when the entry could not be written.
 */
static bool install_cache(struct stacks *s, const struct offcpu_ucopy *c, uint32_t key,
			  const struct unwind_reads *r)
{
	struct offcpu_ucache e = {
		.pc = c->pc, .sp = c->sp, .fp = c->fp, .lr = c->lr,
		.pid = c->pid, .id = c->id, .n = r->n,
		.flags = (r->fp_used ? OFFCPU_UCACHE_FP : 0) | (r->lr_used ? OFFCPU_UCACHE_LR : 0),
	};
	uint32_t old, next;

	memcpy(e.addr, r->addr, r->n * sizeof(*e.addr));
	memcpy(e.val, r->val, r->n * sizeof(*e.val));
	if (!bpf_map_update_elem(s->ld->ucache_fd, &key, &e, BPF_ANY))
		return true;
	while (!bpf_map_get_next_key(s->ld->ucache_fd, NULL, &next)) {
		old = next;
		bpf_map_delete_elem(s->ld->ucache_fd, &old);
	}
	s->cache_cleared++;
	if (cache_sweep(s))
		return false;
	return !bpf_map_update_elem(s->ld->ucache_fd, &key, &e, BPF_ANY);
}

/* Dwarf id ID names ST now (its cache entry: CACHED); an old value goes. */
static int unwound_put(struct stacks *s, uint32_t id, const struct stack *st, bool cached)
{
	void *old = u32_map_get(&s->unwound, id);

	/* Counted first: the id's old stack (the ids wrapped) may be ST. */
	hdr_of(st)->refs++;
	if (old)
		unwound_del(s, id, old);
	if (u32_map_put(&s->unwound, id, (void *)((uintptr_t)st | (cached ? UNWOUND_CACHED : 0)))) {
		unintern(s, st);
		return -1;
	}
	if (s->unwound.n > s->tables.ids_peak)
		s->tables.ids_peak = s->unwound.n;
	return 0;
}

static bool same_frames(const struct stack *a, const struct stack *b)
{
	return a == b || (a && b && a->nr == b->nr && !memcmp(a->ip, b->ip, a->nr * sizeof(*a->ip)));
}

int stacks_add_copy(struct stacks *s, const struct offcpu_ucopy *c, size_t size)
{
	struct unwind_reads reads;
	enum unwind_end end;
	const struct stack *st;
	uint32_t n, key;
	bool cached;

	if (!s->unwinder || size < sizeof(*c) || c->len > size - sizeof(*c))
		return 0;
	/* Shorter than asked: the copy reached the end of the stack mapping. */
	n = unwinder_unwind(s->unwinder, c, c->len < size - sizeof(*c), s->buf, s->ld->plan->max_stack,
			    &end, &reads);
	st = intern(s, s->buf, n);
	if (!st)
		return -1;
	/*
	 * --stack-cache verify: the stack the cache would have reused, compared
	 * (a spill id's: a kernel walk's entry, --unwind-in kernel).
	 */
	if (c->reuse_id && !same_frames(stacks_get(s, c->reuse_id, false), st))
		s->wrong_reuses++;
	key = c->flags & OFFCPU_UCOPY_WAKER ? c->tid | OFFCPU_UCACHE_WAKER : c->tid;
	/*
	 * A waker's id is carried by the block it woke, until that thread runs:
	 * a later wakeup by the same thread is taken as its end (the wakee runs
	 * within a moment; a drain of the sums, a second, comes after).
	 */
	retired_thread_moved_on(s, key, c->time);
	cached = s->ld->ucache_fd >= 0 && unwind_cacheable(end, &reads) &&
		 install_cache(s, c, key, &reads);
	if (unwound_put(s, c->id, st, cached))
		return -1;
	return cached ? cache_holds(s, key, c->id) : 0;
}

/* A new id of the table for interned stack ST (held for the whole run). */
static int32_t table_add(struct stacks *s, const struct stack *st)
{
	if (s->table_n == s->table_cap) {
		size_t cap = s->table_cap ? 2 * s->table_cap : 1024;
		const struct stack **v = realloc(s->table, cap * sizeof(*v));

		if (!v)
			return -1;
		s->table = v;
		s->table_cap = cap;
	}
	if (s->table_n >= STACKS_TABLE_ID)
		return -1;
	s->table[s->table_n] = st;
	hdr_of(st)->refs++;
	hdr_of(st)->table_id = STACKS_TABLE_ID | (int32_t)s->table_n;
	return STACKS_TABLE_ID | (int32_t)s->table_n++;
}

int32_t stacks_table_put(struct stacks *s, const uint64_t *ip, uint32_t n, bool kernel)
{
	uint32_t skip = kernel ? sched_skip(s, ip, n) : 0;
	const struct stack *st;

	if (n - skip > s->ld->plan->max_stack)
		n = skip + s->ld->plan->max_stack;
	st = intern(s, ip + skip, n - skip);
	if (!st)
		return -1;
	if (hdr_of(st)->table_id)
		return hdr_of(st)->table_id;
	return table_add(s, st);
}

void stacks_forget_pid(struct stacks *s, uint32_t pid)
{
	if (s->unwinder)
		unwinder_forget(s->unwinder, pid);
}

void stacks_fork_pid(struct stacks *s, uint32_t pid, uint32_t ppid, uint64_t time)
{
	if (s->unwinder)
		unwinder_fork(s->unwinder, pid, ppid, time);
}

void stacks_exec_pid(struct stacks *s, uint32_t pid, uint64_t time)
{
	if (s->unwinder)
		unwinder_exec(s->unwinder, pid, time);
}

void stacks_records_lost(struct stacks *s)
{
	if (s->unwinder)
		unwinder_records_lost(s->unwinder);
}

bool stacks_knows_copy(const struct stacks *s, const struct offcpu_ucopy *c)
{
	return !s->unwinder || unwinder_knows(s->unwinder, c->pid, c->mm);
}

void stacks_note_mmap(struct stacks *s, const struct perf_event_header *rec, uint64_t time)
{
	const struct perf_record_mmap2 *r = (const void *)rec;
	struct proc_map m;
	size_t len;

	if (!s->unwinder || rec->type != PERF_RECORD_MMAP2 || rec->size <= sizeof(*r))
		return;
	len = strnlen(r->filename, rec->size - sizeof(*r));
	if (len >= sizeof(m.file))
		return;
	m = (struct proc_map){ .start = r->start, .end = r->start + r->len, .pgoff = r->pgoff,
			       .ino = r->ino, .maj = r->maj, .min = r->min, .prot = r->prot };
	memcpy(m.file, r->filename, len);
	m.file[len] = '\0';
	unwinder_mmap(s->unwinder, r->pid, time, &m);
}

/* The cache entry KEY goes, and the id it held retires. */
static int cache_forget(struct stacks *s, uint32_t key)
{
	if (!u32_map_get(&s->cached, key))
		return 0;
	/* Its entry in the cache map too: it would linger until the map fills. */
	bpf_map_delete_elem(s->ld->ucache_fd, &key);
	return cache_holds(s, key, 0);
}

int stacks_forget_tid(struct stacks *s, uint32_t tid)
{
	if (!s->unwinder)
		return 0;
	/* Its own blocks' entry, and the one of the stacks it woke others from. */
	return cache_forget(s, tid) | cache_forget(s, tid | OFFCPU_UCACHE_WAKER);
}

void stacks_drain_begin(struct stacks *s)
{
	for (size_t i = 0; i < s->nr_retired; i++)
		if (s->retired[i].state == RETIRED_ENDED)
			s->retired[i].state = RETIRED_DRAINING;
}

void stacks_drain_end(struct stacks *s)
{
	size_t kept = 0;
	void *v;

	if (s->unwinder)
		unwinder_sweep(s->unwinder);
	for (size_t i = 0; i < s->nr_retired; i++) {
		struct retired *r = &s->retired[i];

		if (r->state != RETIRED_DRAINING) {
			s->retired[kept++] = *r;
			continue;
		}
		if ((v = u32_map_get(&s->unwound, r->id)) && ((uintptr_t)v & UNWOUND_CACHED))
			unwound_del(s, r->id, v);
	}
	s->nr_retired = kept;
}

const struct stacks_tables *stacks_tables(struct stacks *s)
{
	s->tables.ids = s->unwound.n;
	s->tables.stacks = s->interned.n;
	s->tables.cached = s->cached.n;
	s->tables.procs = s->unwinder ? unwinder_nr_procs(s->unwinder) : 0;
	return &s->tables;
}

uint32_t stacks_unwind_regs(void *ctx, uint32_t pid, uint32_t tid, const uint64_t regs[4],
			    const uint8_t *stack, uint32_t len, bool ends_stack, uint64_t *ip,
			    uint32_t max)
{
	struct stacks *s = ctx;
	struct offcpu_ucopy *c = s->sample_copy;
	enum unwind_end end;

	if (!s->unwinder || !c || len > s->sample_copy_bytes)
		return 0;
	*c = (struct offcpu_ucopy){ .magic = OFFCPU_UCOPY_MAGIC, .pid = pid, .tid = tid,
				    .len = len, .pc = regs[0], .sp = regs[1], .fp = regs[2],
				    .lr = regs[3] };
	memcpy(c->bytes, stack, len);
	return unwinder_unwind(s->unwinder, c, ends_stack, ip, max, &end, NULL);
}

void stacks_done(struct stacks *s, int32_t id)
{
	void *v;

	/* An id never cached names one block: forget it (ids repeat). */
	if (id >= 0 && (id & OFFCPU_DWARF_ID) && (v = u32_map_get(&s->unwound, id)) &&
	    !((uintptr_t)v & UNWOUND_CACHED))
		unwound_del(s, id, v);
}

uint64_t stacks_wrong_reuses(const struct stacks *s)
{
	return s->wrong_reuses;
}

const struct unwind_counts *stacks_unwind_counts(const struct stacks *s)
{
	return s->unwinder ? unwinder_counts(s->unwinder) : NULL;
}

struct stacks *stacks_new(const struct loader *ld, size_t table_budget, uint32_t copy_bytes)
{
	const struct plan *pl = ld->plan;
	struct stacks *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->ld = ld;
	if (pl->dwarf) {
		s->unwinder = unwinder_new(table_budget);
		s->sample_copy = malloc(sizeof(*s->sample_copy) + copy_bytes);
		s->sample_copy_bytes = copy_bytes;
	}
	s->nr_ids = pl->stack_ids;
	s->by_id = calloc(2 * s->nr_ids, sizeof(*s->by_id));
	s->buf = calloc(pl->kstack_frames > pl->max_stack ? pl->kstack_frames : pl->max_stack,
			sizeof(uint64_t));
	if (!s->by_id || !s->buf || (pl->dwarf && (!s->unwinder || !s->sample_copy))) {
		stacks_free(s);
		return NULL;
	}
	return s;
}

void stacks_free(struct stacks *s)
{
	if (!s)
		return;
	free(s->sample_copy);
	free(s->table);
	for (size_t i = 0; s->by_id && i < 2 * s->nr_ids; i++)
		free(s->by_id[i]);
	for (int k = 0; k < 2; k++) {
		for (size_t i = 0; i < s->spilled[k].n; i++)
			free(s->spilled[k].v[i].s);
		free(s->spilled[k].v);
	}
	free(s->by_id);
	free(s->buf);
	u32_map_free(&s->unwound, NULL);
	u32_map_free(&s->cached, NULL);
	free(s->retired);
	for (size_t i = 0; i < s->interned.cap; i++)
		if (s->interned.v[i])
			free(hdr_of((const struct stack *)s->interned.v[i]));
	key_set_free(&s->interned);
	unwinder_free(s->unwinder);
	free(s);
}
