// SPDX-License-Identifier: GPL-2.0
/* A file's (or the kernel's) function symbols, sorted, one name per address. */
#include <stdlib.h>
#include <string.h>

#include "lib/sorted.h"
#include "symbols/symtab.h"

/* Bounds on what one untrusted file may make us allocate. */
#define MAX_SYMS	(8u << 20)

/*
 * perf's choice among aliases (choose_best_symbol): sized, then not weak,
 * then global; sym_cmp then prefers fewer leading underscores.
 */
int symtab_rank(bool sized, bool weak, bool global)
{
	return sized * 4 + !weak * 2 + global;
}

int symtab_add(struct symtab *t, uint64_t addr, uint64_t size, const char *name, int rank)
{
	if (t->n >= MAX_SYMS)
		return -1;
	if (t->n == t->cap) {
		size_t c = t->cap ? t->cap * 2 : 256;
		struct sym *nv = realloc(t->v, c * sizeof(*nv));

		if (!nv)
			return -1;
		t->v = nv;
		t->cap = c;
	}
	t->v[t->n].name = strdup(name);
	if (!t->v[t->n].name)
		return -1;
	t->v[t->n].seq = t->n;
	t->v[t->n].demangled = false;
	t->v[t->n].addr = addr;
	t->v[t->n].size = size;
	t->v[t->n++].rank = rank;
	return 0;
}

static size_t underscores(const char *name)
{
	return strspn(name, "_");
}

/* By address; at one address the best alias first. */
static int sym_cmp(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;
	size_t ux, uy, lx, ly;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->rank != y->rank)
		return y->rank - x->rank;
	ux = underscores(x->name);
	uy = underscores(y->name);
	if (ux != uy)
		return ux < uy ? -1 : 1;
	lx = strlen(x->name);
	ly = strlen(y->name);
	if (lx != ly)
		return lx > ly ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/*
 * Sort, keep one name per address, and give unsized symbols (assembly,
 * kallsyms) the room up to the next symbol, as perf does.  The last one
 * (libm's _fini) gets the room up to CODE_END, the end of its file's code,
 * when that lies above it, else TAIL bytes.
 */
void symtab_finish(struct symtab *t, uint64_t code_end, uint64_t tail)
{
	size_t n = 0;

	if (!t->n)
		return;
	qsort(t->v, t->n, sizeof(*t->v), sym_cmp);
	for (size_t i = 0; i < t->n; i++) {
		if (n && t->v[n - 1].addr == t->v[i].addr) {
			free(t->v[i].name);
			continue;
		}
		t->v[n++] = t->v[i];
	}
	t->n = n;
	for (size_t i = 0; i < n; i++) {
		if (t->v[i].size)
			continue;
		if (i + 1 < n)
			t->v[i].size = t->v[i + 1].addr - t->v[i].addr;
		else
			t->v[i].size = code_end > t->v[i].addr ? code_end - t->v[i].addr : tail;
	}
}

/* The symbol containing ADDR. */
struct sym *symtab_lookup(const struct symtab *t, uint64_t addr)
{
	size_t n = sorted_upper(t->v, t->n, sizeof(*t->v), offsetof(struct sym, addr), addr);
	struct sym *s;

	if (!n)
		return NULL;
	s = &t->v[n - 1];
	return addr - s->addr < s->size ? s : NULL;
}

void symtab_free(struct symtab *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->v[i].name);
	free(t->v);
}
