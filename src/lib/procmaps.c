// SPDX-License-Identifier: GPL-2.0
/* The process-map model (procmaps.h) and the one /proc/PID/maps reader. */
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "lib/procmaps.h"
#include "lib/sorted.h"

/*
 * A mappings array and how many pmaps hold it: a copy shares the array and
 * the first change to a shared one copies it.  A forked process's view and
 * its maps each held a copy of the parent's (perf bench messaging: 400
 * processes, four allocations each), and musl unmapped their groups as the
 * processes went: TLB-flush IPIs in the recorder while the load ran.
 */
struct pmap_block {
	size_t holders;
	struct pmap_entry v[];
};

static struct pmap_block *block_of(const struct pmap *m)
{
	return m->v ? (struct pmap_block *)((char *)m->v - offsetof(struct pmap_block, v)) : NULL;
}

/* Room for EXTRA more mappings in an array M holds alone. */
static int reserve(struct pmap *m, size_t extra)
{
	struct pmap_block *b = block_of(m), *nb;
	bool shared = b && b->holders > 1;
	size_t cap = m->cap;

	if (!shared && m->n + extra <= m->cap)
		return 0;
	if (m->n + extra > cap) {
		cap = cap ? cap * 2 : 16;
		while (cap < m->n + extra)
			cap *= 2;
	}
	nb = shared ? malloc(sizeof(*nb) + cap * sizeof(nb->v[0])) :
		      realloc(b, sizeof(*nb) + cap * sizeof(nb->v[0]));
	if (!nb)
		return -1;
	if (shared) {
		memcpy(nb->v, b->v, m->n * sizeof(nb->v[0]));
		b->holders--;
	}
	nb->holders = 1;
	m->v = nb->v;
	m->cap = cap;
	return 0;
}

/* M holds no array (its mappings gone; gen and dead kept). */
static void drop_array(struct pmap *m)
{
	struct pmap_block *b = block_of(m);

	if (b && !--b->holders)
		free(b);
	m->v = NULL;
	m->n = m->cap = 0;
}

/* The number of mappings starting at or below ADDR. */
static size_t upper(const struct pmap *m, uint64_t addr)
{
	return sorted_upper(m->v, m->n, sizeof(*m->v), offsetof(struct pmap_entry, start), addr);
}

const struct pmap_entry *pmap_find(const struct pmap *m, uint64_t addr)
{
	size_t i = upper(m, addr);

	return i && addr < m->v[i - 1].end ? &m->v[i - 1] : NULL;
}

/* Split the mapping holding AT in two there; the caller reserved a slot. */
static void split(struct pmap *m, uint64_t at)
{
	const struct pmap_entry *found = pmap_find(m, at);
	struct pmap_entry e;
	size_t i;

	if (!found || found->start == at)
		return;
	i = found - m->v;
	e = m->v[i];
	memmove(&m->v[i + 2], &m->v[i + 1], (m->n - i - 1) * sizeof(e));
	m->v[i].end = at;
	m->v[i + 1] = e;
	m->v[i + 1].start = at;
	m->v[i + 1].pgoff = e.pgoff + (at - e.start);
	m->n++;
}

int pmap_add(struct pmap *m, uint64_t start, uint64_t end, uint64_t pgoff, void *file)
{
	size_t n = 0, i;

	if (end <= start || reserve(m, 2))
		return -1;
	/* Above every mapping (a maps file is read in order): nothing to cut. */
	if (!m->n || m->v[m->n - 1].end <= start) {
		m->v[m->n++] = (struct pmap_entry){ start, end, pgoff, file, start, end };
		return 0;
	}
	/* Cut [start, end) out: the new mapping hides what it overlaps. */
	split(m, start);
	split(m, end);
	for (i = 0; i < m->n; i++)
		if (m->v[i].start < start || m->v[i].end > end)
			m->v[n++] = m->v[i];
	m->n = n;
	i = upper(m, start);
	memmove(&m->v[i + 1], &m->v[i], (m->n - i) * sizeof(*m->v));
	m->v[i] = (struct pmap_entry){ start, end, pgoff, file, start, end };
	m->n++;
	return 0;
}

void pmap_copy(struct pmap *dst, const struct pmap *src)
{
	struct pmap_block *b = block_of(src);

	if (dst->v != src->v) {
		drop_array(dst);
		if (b)
			b->holders++;
		dst->v = src->v;
		dst->cap = src->cap;
	}
	dst->n = src->n;
}

void pmap_reset(struct pmap *m)
{
	m->n = 0;
}

void pmap_release(struct pmap *m)
{
	drop_array(m);
	*m = (struct pmap){ 0 };
}

struct pmap *pmap_set_get(struct pmap_set *s, uint32_t pid, bool create)
{
	struct pmap *m = u32_map_get(&s->by_pid, pid);

	if (m || !create)
		return m;
	m = calloc(1, sizeof(*m));
	if (m && u32_map_put(&s->by_pid, pid, m)) {
		free(m);
		m = NULL;
	}
	return m;
}

void pmap_set_fork(struct pmap_set *s, uint32_t pid, uint32_t ppid)
{
	struct pmap *child = pmap_set_get(s, pid, true), *parent;

	if (!child || (child->n && !child->dead))
		return;
	child->n = 0;
	child->dead = false;
	parent = pmap_set_get(s, ppid, false);
	if (parent && parent->n)
		pmap_copy(child, parent);
}

void pmap_set_drop(struct pmap_set *s, uint32_t pid)
{
	struct pmap *m = u32_map_del(&s->by_pid, pid);

	if (m)
		pmap_release(m);
	free(m);
}

void pmap_set_exit(struct pmap_set *s, uint32_t pid)
{
	struct pmap *m = pmap_set_get(s, pid, false);

	if (m)
		m->dead = true;
}

static void free_pmap(void *v)
{
	pmap_release(v);
	free(v);
}

void pmap_set_free(struct pmap_set *s)
{
	u32_map_free(&s->by_pid, free_pmap);
}

int proc_maps_each(FILE *f, proc_maps_fn fn, void *ctx)
{
	char line[PROC_MAPS_LINE];
	struct proc_map *m = malloc(sizeof(*m));	/* 4 KiB of name: not on the stack */
	int err = 0;

	if (!m)
		return -1;
	while (!err && fgets(line, sizeof(line), f)) {
		bool whole = strchr(line, '\n') || feof(f);

		if (!proc_parse_maps_line(line, m))
			err = fn(ctx, m);
		/* The rest of an overlong line is not a line of its own. */
		while (!whole && fgets(line, sizeof(line), f))
			whole = strchr(line, '\n');
	}
	free(m);
	return err;
}

int proc_maps_read(uint32_t pid, proc_maps_fn fn, void *ctx)
{
	char path[64];
	FILE *f;
	int err;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	else
		snprintf(path, sizeof(path), "/proc/self/maps");
	f = fopen(path, "re");
	if (!f)
		return -1;
	err = proc_maps_each(f, fn, ctx);
	fclose(f);
	return err;
}

struct read_proc {
	struct pmap *m;
	void *(*file_of)(void *ctx, const struct proc_map *pm);
	void *ctx;
};

static int add_exec_file(void *ctx, const struct proc_map *pm)
{
	struct read_proc *r = ctx;

	if (!(pm->prot & 4) || pm->file[0] != '/' || pm->end <= pm->start)
		return 0;
	return pmap_add(r->m, pm->start, pm->end, pm->pgoff,
			r->file_of ? r->file_of(r->ctx, pm) : NULL);
}

int pmap_read_proc(struct pmap *m, uint32_t pid,
		   void *(*file_of)(void *ctx, const struct proc_map *pm), void *ctx)
{
	struct pmap fresh = { 0 };
	struct read_proc r = { &fresh, file_of, ctx };

	if (proc_maps_read(pid, add_exec_file, &r) || !fresh.n) {
		pmap_release(&fresh);
		return -1;
	}
	fresh.gen = m->gen;
	fresh.dead = m->dead;
	pmap_release(m);
	*m = fresh;
	return 0;
}

int pmap_file_path(uint32_t pid, uint64_t start, uint64_t end, const char *name, int which,
		   char *buf, size_t len)
{
	int n;

	if (!pid || pid == (uint32_t)-1)
		return -1;
	if (which == 0)
		n = snprintf(buf, len, "/proc/%u/map_files/%llx-%llx", pid,
			     (unsigned long long)start, (unsigned long long)end);
	else if (which == 1)
		n = snprintf(buf, len, "/proc/%u/root%s", pid, name);
	else
		return -1;
	return n > 0 && (size_t)n < len ? 0 : -1;
}
