// SPDX-License-Identifier: GPL-2.0
/* Address to function name for `offcpu report`: process maps, ELF, kallsyms. */
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/hashset.h"
#include "lib/ksyms.h"
#include "lib/procmaps.h"
#include "symbols/demangle.h"
#include "symbols/dso.h"
#include "symbols/symbolize.h"
#include "symbols/symtab.h"

/* How far past the last kernel symbol an address still belongs to it. */
#define KSYM_TAIL	(1u << 20)

struct comm {
	char name[16];
};

struct symbolizer {
	char *symfs;		/* owned; find.symfs points here */
	struct dso_finder find;
	struct str_map dsos;	/* by path (the dso's own copy) */
	struct pmap_set procs;	/* maps over time (entries' file: struct dso) */
	struct u32_map comms;	/* by tid */
	struct symtab ksyms;
	uint64_t ktext;		/* _text in kallsyms */
	uint64_t kdelta;	/* added to recorded kernel addresses */
	bool raw_names;		/* --no-demangle */
};

/* ---- files ---- */

static struct dso *get_dso(struct symbolizer *s, const char *path)
{
	struct dso *d = str_map_get(&s->dsos, path);

	if (d)
		return d;
	d = calloc(1, sizeof(*d));
	if (!d || !(d->path = strdup(path)) || str_map_put(&s->dsos, d->path, d)) {
		if (d)
			free(d->path);
		free(d);
		return NULL;
	}
	d->pseudo = path[0] != '/';
	return d;
}

int sym_expect_build_id(struct symbolizer *s, const char *path, const uint8_t *id, int len)
{
	struct dso *d;

	if (len <= 0 || len > BUILD_ID_MAX || path[0] != '/')
		return 0;
	d = get_dso(s, path);
	if (!d)
		return -1;
	memcpy(d->want_id, id, len);
	d->want_len = len;
	return 0;
}

/* ---- processes ---- */

/* "/usr/lib/x.so (deleted)" is still the file to look for (under --symfs). */
static struct dso *map_dso(struct symbolizer *s, const char *filename)
{
	static const char del[] = " (deleted)";
	char path[4096];
	size_t len = strnlen(filename, sizeof(path) - 1);

	/* perf names anonymous executable memory "//anon". */
	if ((filename[0] != '/' && strcmp(filename, "[vdso]")) || filename[1] == '/')
		return NULL;
	memcpy(path, filename, len);
	path[len] = '\0';
	if (len > sizeof(del) - 1 && !strcmp(path + len - (sizeof(del) - 1), del))
		path[len - (sizeof(del) - 1)] = '\0';
	return get_dso(s, path);
}

void sym_mmap(struct symbolizer *s, uint32_t pid, uint64_t start, uint64_t len,
	      uint64_t pgoff, const char *filename)
{
	struct pmap *p = pmap_set_get(&s->procs, pid, true);

	if (p && len && start + len > start)
		pmap_add(p, start, start + len, pgoff, map_dso(s, filename));
}

static void copy_comm(struct symbolizer *s, uint32_t from, uint32_t to)
{
	const struct comm *c = u32_map_get(&s->comms, from);

	if (c && from != to)
		sym_comm(s, to, to, c->name, false);
}

void sym_fork(struct symbolizer *s, uint32_t pid, uint32_t ppid, uint32_t tid,
	      uint32_t ptid)
{
	copy_comm(s, ptid, tid);
	if (pid != ppid)	/* a new thread shares the maps */
		pmap_set_fork(&s->procs, pid, ppid);
}

/* Keep an exited process's maps: its last samples may still follow. */
void sym_exit(struct symbolizer *s, uint32_t pid, uint32_t tid)
{
	if (pid == tid)
		pmap_set_exit(&s->procs, pid);
}

void sym_comm(struct symbolizer *s, uint32_t pid, uint32_t tid, const char *comm, bool exec)
{
	struct comm *c = u32_map_get(&s->comms, tid);

	/*
	 * exec keeps the old maps, as perf does: the new image's MMAP2s replace
	 * what they overlap, and a thread that blocked inside execve (its
	 * sample stamped after the exec) still resolves in the old image.
	 */
	(void)exec;
	(void)pid;
	if (!c) {
		c = calloc(1, sizeof(*c));
		if (!c || u32_map_put(&s->comms, tid, c)) {
			free(c);
			return;
		}
	}
	snprintf(c->name, sizeof(c->name), "%s", comm);
}

const char *sym_comm_of(struct symbolizer *s, uint32_t pid, uint32_t tid)
{
	const struct comm *c = u32_map_get(&s->comms, tid);

	if (!c)
		c = u32_map_get(&s->comms, pid);
	return c ? c->name : SYM_UNKNOWN;
}

const char *sym_proc_comm(struct symbolizer *s, uint32_t pid, uint32_t tid)
{
	const struct comm *c = u32_map_get(&s->comms, pid);

	return c ? c->name : sym_comm_of(s, pid, tid);
}

/* The name to print: demangled once, when first shown (perf's choice of alias is on raw names). */
static const char *shown_name(const struct symbolizer *s, struct sym *sym)
{
	char *readable;

	if (sym->demangled || s->raw_names)
		return sym->name;
	sym->demangled = true;
	readable = demangle(sym->name);
	if (readable) {
		free(sym->name);
		sym->name = readable;
	}
	return sym->name;
}

static const struct pmap_entry *map_at(struct symbolizer *s, uint32_t pid, uint64_t addr)
{
	const struct pmap *p = pmap_set_get(&s->procs, pid, false);

	return p ? pmap_find(p, addr) : NULL;
}

const char *sym_user(struct symbolizer *s, uint32_t pid, uint64_t addr)
{
	const struct pmap_entry *m = map_at(s, pid, addr);
	struct dso *d = m ? m->file : NULL;
	struct sym *sym;
	uint64_t va;

	if (!d)
		return SYM_UNKNOWN;
	if (!d->loaded)
		dso_load(&s->find, d, pid, m);
	if (d->pseudo && !d->syms.n)
		return d->path;
	if (!dso_vaddr(d, m, addr, &va))
		return SYM_UNKNOWN;
	sym = symtab_lookup(&d->syms, va);
	return sym ? shown_name(s, sym) : SYM_UNKNOWN;
}

/* The file mapped at ADDR in PID's maps (its recorded path), or NULL. */
const char *sym_user_file(struct symbolizer *s, uint32_t pid, uint64_t addr)
{
	const struct pmap_entry *m = map_at(s, pid, addr);

	return m && m->file ? ((struct dso *)m->file)->path : NULL;
}

/* ---- kernel ---- */

const char *sym_kernel(struct symbolizer *s, uint64_t addr)
{
	const struct sym *sym = symtab_lookup(&s->ksyms, addr + s->kdelta);

	return sym ? sym->name : SYM_UNKNOWN;
}

void sym_kernel_text(struct symbolizer *s, uint64_t text)
{
	if (s->ktext && text)
		s->kdelta = s->ktext - text;
}

size_t sym_nr_kernel(const struct symbolizer *s)
{
	return s->ksyms.n;
}

static void add_ksym(struct symbolizer *s, const struct ksym *k)
{
	if (!k->addr)
		return;
	if (!strcmp(k->name, "_text") || (!s->ktext && !strcmp(k->name, "_stext")))
		s->ktext = k->addr;
	if (k->type != 't' && k->type != 'T' && k->type != 'w' && k->type != 'W')
		return;
	/* Section markers share an address with a real function. */
	if (strstr(k->name, "_text_start") || strstr(k->name, "_text_end"))
		return;
	symtab_add(&s->ksyms, k->addr, 0, k->name,
		   symtab_rank(false, k->type == 'w' || k->type == 'W', k->type == 'T'));
}

/* The table lib/ksyms reads, in the symbol table ELF files use (aliases ranked). */
static void load_kallsyms(struct symbolizer *s, const char *path)
{
	struct ksyms *ks = ksyms_load(path);

	for (size_t i = 0; i < ksyms_count(ks); i++)
		add_ksym(s, ksyms_at(ks, i));
	ksyms_free(ks);
	symtab_finish(&s->ksyms, 0, KSYM_TAIL);
}

struct symbolizer *sym_new(const char *symfs, const char *kallsyms)
{
	struct symbolizer *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	elf_version(EV_CURRENT);
	if (symfs && !(s->symfs = strdup(symfs))) {
		free(s);
		return NULL;
	}
	s->find.symfs = s->symfs;
	if (kallsyms)
		load_kallsyms(s, kallsyms);
	return s;
}

void sym_options(struct symbolizer *s, bool raw_names, FILE *log)
{
	s->raw_names = raw_names;
	s->find.log = log;
}

void sym_same_kernel(struct symbolizer *s)
{
	s->find.own_vdso = true;
}

size_t sym_nr_missing(const struct symbolizer *s, const char **first)
{
	*first = s->find.first_missing ? s->find.first_missing : "?";
	return s->find.missing;
}

static void free_dso(void *v)
{
	dso_free(v);
}

void sym_free(struct symbolizer *s)
{
	if (!s)
		return;
	str_map_free(&s->dsos, free_dso);
	pmap_set_free(&s->procs);
	u32_map_free(&s->comms, free);
	symtab_free(&s->ksyms);
	free(s->find.first_missing);
	free(s->symfs);
	free(s);
}
