// SPDX-License-Identifier: GPL-2.0
/*
 * The aggregate table: one entry per distinct (process or thread, stack),
 * found by a key set over interned names; the filters (--pid, --comm).
 */
#include <stdlib.h>
#include <string.h>

#include "report/report_int.h"

/* Whether A (a used slot) is the aggregate of KEY. */
static bool same_key(const struct agg *a, const struct agg *key)
{
	if (a->id != key->id || a->comm != key->comm || a->nr_frames != key->nr_frames)
		return false;
	if (a->key_pid != key->key_pid || a->tid != key->tid || a->nr_sleeper != key->nr_sleeper)
		return false;
	for (size_t i = 0; i < a->nr_frames; i++)
		if (a->frames[i].name != key->frames[i].name ||
		    a->frames[i].file != key->frames[i].file ||
		    a->frames[i].kernel != key->frames[i].kernel)
			return false;
	return true;
}

/* Names are interned: their addresses stand for them. */
static uint32_t agg_hash(const struct agg *key)
{
	uint32_t h = fnv1a(FNV1A_INIT, &key->id, sizeof(key->id));

	h = fnv1a(h, &key->key_pid, sizeof(key->key_pid));
	h = fnv1a(h, &key->tid, sizeof(key->tid));
	h = fnv1a(h, &key->comm, sizeof(key->comm));
	for (size_t i = 0; i < key->nr_frames; i++) {
		h = fnv1a(h, &key->frames[i].name, sizeof(key->frames[i].name));
		h = fnv1a(h, &key->frames[i].file, sizeof(key->frames[i].file));
		h = fnv1a(h, &key->frames[i].kernel, sizeof(key->frames[i].kernel));
	}
	return h;
}

/* Whether aggregate REC (an index + 1 into the report's) is the one of KEY. */
static bool agg_match(const void *ctx, uintptr_t rec, const void *key)
{
	const struct report *r = ctx;

	return same_key(&r->v[rec - 1], key);
}

/* Room for one more aggregate in r->v. */
static int reserve_agg(struct report *r)
{
	size_t cap = r->cap ? r->cap * 2 : 1024;
	struct agg *nv;

	if (r->n < r->cap)
		return 0;
	nv = realloc(r->v, cap * sizeof(*nv));
	if (!nv)
		return -1;
	r->v = nv;
	r->cap = cap;
	return 0;
}

/* KEY's aggregate, added (empty, its key copied) if need be; NULL when out of memory. */
static struct agg *find_agg(struct report *r, const struct agg *key, const struct pd_sample *s)
{
	uint32_t h = agg_hash(key);
	uintptr_t i = key_set_get(&r->aggs, h, key, agg_match, r);
	struct agg *a;

	if (i)
		return &r->v[i - 1];
	if (reserve_agg(r))
		return NULL;
	a = &r->v[r->n];
	*a = *key;
	a->pid = s->pid;
	a->frames = malloc(key->nr_frames * sizeof(*a->frames));
	if (!a->frames || key_set_add(&r->aggs, h, r->n + 1)) {
		free(a->frames);
		*a = (struct agg){ 0 };
		return NULL;
	}
	memcpy(a->frames, key->frames, key->nr_frames * sizeof(*a->frames));
	r->n++;
	return a;
}

static bool in_list(const char *list, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = list; p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
		if (!strncmp(p, name, n) && (p[n] == ',' || !p[n]))
			return true;
	return false;
}

static void add_thread(struct agg *a, const char *name)
{
	size_t len = strlen(a->threads);

	if (in_list(a->threads, name))
		return;
	if (len + strlen(name) + 2 > sizeof(a->threads))
		a->more = true;
	else
		snprintf(a->threads + len, sizeof(a->threads) - len, "%s%s", len ? "," : "", name);
}

int rpt_add(struct report *r, struct agg *key, const struct pd_sample *s,
	    const char *thread)
{
	struct agg *a = find_agg(r, key, s);

	if (!a)
		return -1;
	add_thread(a, thread);
	a->total += s->period;
	a->count++;
	return 0;
}


void rpt_split_chain(const struct pd_sample *s, struct chain *c)
{
	size_t *n = NULL;

	memset(c, 0, sizeof(*c));
	for (uint64_t i = 0; i < s->nr; i++) {
		if (s->ips[i] == PERF_CONTEXT_KERNEL && !c->k) {
			c->k = s->ips + i + 1;
			n = &c->nk;
		} else if (s->ips[i] == PERF_CONTEXT_USER && !c->u) {
			c->u = s->ips + i + 1;
			n = &c->nu;
		} else if (s->ips[i] >= PERF_CONTEXT_MAX) {
			n = NULL;	/* guest or unknown context: not ours */
		} else if (n) {
			(*n)++;
		}
	}
}

/* FILE: the frame's file, kept with --pprof only (its mappings). */
int rpt_add_frame(struct report *r, size_t n, const char *name, const char *file,
		  bool kernel)
{
	const char *in = str_set_intern(&r->names, name);
	const char *fin = file && r->o.pprof ? str_set_intern(&r->names, file) : NULL;

	if (!in || (file && r->o.pprof && !fin))
		return -1;
	r->chain[n] = (struct frame){ in, fin, kernel };
	return 0;
}

/* The file of a user frame, looked up only for --pprof. */
const char *rpt_user_file(struct report *r, uint32_t pid, uint64_t ip)
{
	return r->o.pprof ? sym_user_file(r->sym, pid, ip) : NULL;
}

/* Room for N frames in r->chain: 0, or -1 out of memory. */
int rpt_reserve_frames(struct report *r, size_t n)
{
	struct frame *nv;

	if (n <= r->chain_cap)
		return 0;
	nv = realloc(r->chain, n * sizeof(*nv));
	if (!nv)
		return -1;
	r->chain = nv;
	r->chain_cap = n;
	return 0;
}

/* The key of sample S: its command and its frames, perf's order, root first. */
static int sample_key(struct report *r, const struct pd_sample *s, const char *comm,
		      struct agg *key)
{
	size_t n = 0;
	struct chain c;
	int err = 0;

	rpt_split_chain(s, &c);
	if (rpt_reserve_frames(r, c.nu + c.nk + 1))
		return -1;
	for (size_t i = c.nu; i-- > 0 && !err;)
		err = rpt_add_frame(r, n++, sym_user(r->sym, s->pid, c.u[i]),
				    rpt_user_file(r, s->pid, c.u[i]), false);
	for (size_t i = c.nk; i-- > 0 && !err;)
		err = rpt_add_frame(r, n++, sym_kernel(r->sym, c.k[i]), KERNEL_FILE, true);
	if (!n && !err)
		err = rpt_add_frame(r, n++, "[no stack]", NULL, false);
	*key = (struct agg){
		.comm = str_set_intern(&r->names, comm),
		.id = r->o.per_thread ? s->tid : (r->o.folded || r->o.svg) ? 0 : s->pid,
		.key_pid = r->o.per_thread ? s->pid : 0,
		.tid = r->o.per_thread ? s->tid : 0,
		.frames = r->chain,
		.nr_frames = n,
		.nr_sleeper = n,
	};
	return err || !key->comm ? -1 : 0;
}

static bool selected(const struct report *r, const struct pd_sample *s,
		     const char *thread, const char *proc)
{
	bool ok = !r->o.pids.n || id_list_has(&r->o.pids, s->pid);

	if (ok && r->o.comms)
		ok = in_list(r->o.comms, thread) || in_list(r->o.comms, proc);
	return ok;
}

/*
 * A thread still blocked at the end (event offcpu-blocked): kept apart too,
 * for the report's own section.  KEY holds its frames.
 */
static int add_blocked(struct report *r, const struct agg *key, const struct pd_sample *s,
		       const char *thread)
{
	struct agg *nv = realloc(r->blocked, (r->nr_blocked + 1) * sizeof(*nv)), *b;

	if (!nv)
		return -1;
	r->blocked = nv;
	b = &nv[r->nr_blocked];
	*b = (struct agg){
		.comm = str_set_intern(&r->names, thread), .id = s->tid, .pid = s->pid,
		.nr_frames = key->nr_frames, .total = s->period, .count = 1,
	};
	b->frames = malloc(key->nr_frames * sizeof(*b->frames));
	if (!b->comm || !b->frames) {
		free(b->frames);
		return -1;
	}
	memcpy(b->frames, key->frames, key->nr_frames * sizeof(*b->frames));
	r->nr_blocked++;
	r->blocked_total += s->period;
	return 0;
}

int rpt_add_sample(struct report *r, const struct pd_sample *s, bool blocked)
{
	const char *thread = sym_comm_of(r->sym, s->pid, s->tid);
	const char *proc = sym_proc_comm(r->sym, s->pid, s->tid);
	struct agg key;

	rpt_drop_pending(r);
	r->all_total += s->period;
	r->skip_pair = 0;
	if (!selected(r, s, thread, proc)) {
		r->skip_pair = rpt_raw_u32(s);
		return 0;
	}
	if (sample_key(r, s, r->o.per_thread ? thread : proc, &key))
		return -1;
	r->total += s->period;
	if (!r->samples++ || s->time < r->first_time)
		r->first_time = s->time;
	if (s->time > r->last_time)
		r->last_time = s->time;
	if (blocked && add_blocked(r, &key, s, thread))
		return -1;
	if (!r->o.wakers)
		return rpt_add(r, &key, s, thread);
	/* Text lists each stack, then its wakers; folded, SVG and pprof only the pairs. */
	if (!r->o.folded && !r->o.svg && !r->o.pprof && rpt_add(r, &key, s, thread))
		return -1;
	if (blocked)
		return rpt_add_still_blocked(r, &key, s, thread);
	return rpt_hold_sleeper(r, &key, s, thread);
}
