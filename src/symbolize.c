// SPDX-License-Identifier: GPL-2.0
/* Address to function name for `offcpu report`: process maps, ELF, kallsyms. */
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbolize.h"

#define UNKNOWN "[unknown]"

struct sym {
	uint64_t addr, size;
	char *name;
};

struct segment {
	uint64_t offset, vaddr, filesz;
};

struct dso {
	char *path;
	struct sym *syms;
	size_t nr_syms;
	struct segment *segs;
	size_t nr_segs;
	bool loaded;
};

struct map {
	uint64_t start, end, pgoff;
	struct dso *dso;
};

struct proc {
	uint32_t pid;
	struct map *maps;
	size_t nr_maps;
};

struct comm {
	uint32_t tid;
	char name[16];
};

struct symbolizer {
	char *symfs;
	struct dso **dsos;
	size_t nr_dsos;
	struct proc *procs;
	size_t nr_procs;
	struct comm *comms;
	size_t nr_comms;
	struct sym *ksyms;
	size_t nr_ksyms;
};

static int sym_cmp(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* The symbol containing ADDR, or the nearest one below when sizes are 0. */
static const struct sym *lookup(const struct sym *v, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	if (v[lo - 1].size && addr >= v[lo - 1].addr + v[lo - 1].size)
		return NULL;
	return &v[lo - 1];
}

static int add_sym(struct sym **v, size_t *n, size_t *cap, uint64_t addr,
		   uint64_t size, const char *name)
{
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 256;
		struct sym *nv = realloc(*v, c * sizeof(*nv));

		if (!nv)
			return -1;
		*v = nv;
		*cap = c;
	}
	(*v)[*n].name = strdup(name);
	if (!(*v)[*n].name)
		return -1;
	(*v)[*n].addr = addr;
	(*v)[(*n)++].size = size;
	return 0;
}

/* FUNC symbols of one symbol table section. */
static void read_symtab(Elf *elf, Elf_Scn *scn, GElf_Shdr *sh, struct dso *d, size_t *cap)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t n;

	if (!data || !sh->sh_entsize)
		return;
	n = sh->sh_size / sh->sh_entsize;
	for (size_t i = 0; i < n; i++) {
		GElf_Sym s;
		const char *name;

		if (!gelf_getsym(data, i, &s) || GELF_ST_TYPE(s.st_info) != STT_FUNC ||
		    !s.st_value)
			continue;
		name = elf_strptr(elf, sh->sh_link, s.st_name);
		if (name && *name && add_sym(&d->syms, &d->nr_syms, cap, s.st_value, s.st_size, name))
			return;
	}
}

static void read_segments(Elf *elf, struct dso *d)
{
	size_t n;

	if (elf_getphdrnum(elf, &n) || n > 4096)
		return;
	d->segs = calloc(n ? n : 1, sizeof(*d->segs));
	for (size_t i = 0; d->segs && i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		d->segs[d->nr_segs++] = (struct segment){ ph.p_offset, ph.p_vaddr, ph.p_filesz };
	}
}

/* .symtab when present (not stripped), else .dynsym. */
static void load_dso(struct symbolizer *s, struct dso *d)
{
	char path[4096];
	Elf_Scn *scn = NULL, *dyn = NULL;
	GElf_Shdr sh, dynsh;
	size_t cap = 0;
	Elf *elf;
	int fd;

	d->loaded = true;
	snprintf(path, sizeof(path), "%s%s", s->symfs ? s->symfs : "", d->path);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf && elf_kind(elf) == ELF_K_ELF) {
		read_segments(elf, d);
		while ((scn = elf_nextscn(elf, scn))) {
			if (!gelf_getshdr(scn, &sh))
				continue;
			if (sh.sh_type == SHT_SYMTAB)
				read_symtab(elf, scn, &sh, d, &cap);
			else if (sh.sh_type == SHT_DYNSYM) {
				dyn = scn;
				dynsh = sh;
			}
		}
		if (!d->nr_syms && dyn)
			read_symtab(elf, dyn, &dynsh, d, &cap);
		if (d->nr_syms)
			qsort(d->syms, d->nr_syms, sizeof(*d->syms), sym_cmp);
	}
	elf_end(elf);
	close(fd);
}

static struct dso *get_dso(struct symbolizer *s, const char *path)
{
	struct dso **nv, *d;

	for (size_t i = 0; i < s->nr_dsos; i++)
		if (!strcmp(s->dsos[i]->path, path))
			return s->dsos[i];
	nv = realloc(s->dsos, (s->nr_dsos + 1) * sizeof(*nv));
	d = calloc(1, sizeof(*d));
	if (!nv || !d || !(d->path = strdup(path))) {
		free(d);
		if (nv)
			s->dsos = nv;
		return NULL;
	}
	s->dsos = nv;
	s->dsos[s->nr_dsos++] = d;
	return d;
}

static struct proc *get_proc(struct symbolizer *s, uint32_t pid, bool create)
{
	struct proc *nv;

	for (size_t i = 0; i < s->nr_procs; i++)
		if (s->procs[i].pid == pid)
			return &s->procs[i];
	if (!create)
		return NULL;
	nv = realloc(s->procs, (s->nr_procs + 1) * sizeof(*nv));
	if (!nv)
		return NULL;
	s->procs = nv;
	memset(&nv[s->nr_procs], 0, sizeof(*nv));
	nv[s->nr_procs].pid = pid;
	return &nv[s->nr_procs++];
}

static int add_map(struct proc *p, struct map m)
{
	struct map *nv = realloc(p->maps, (p->nr_maps + 1) * sizeof(*nv));

	if (!nv)
		return -1;
	p->maps = nv;
	/* A new mapping hides what it overlaps. */
	for (size_t i = 0; i < p->nr_maps; i++)
		if (nv[i].start < m.end && m.start < nv[i].end)
			nv[i].end = nv[i].start;
	nv[p->nr_maps++] = m;
	return 0;
}

void sym_mmap(struct symbolizer *s, uint32_t pid, uint64_t start, uint64_t len,
	      uint64_t pgoff, const char *filename)
{
	struct proc *p = get_proc(s, pid, true);
	struct dso *d = filename[0] == '/' ? get_dso(s, filename) : NULL;

	if (p && len && start + len > start)
		add_map(p, (struct map){ start, start + len, pgoff, d });
}

void sym_fork(struct symbolizer *s, uint32_t pid, uint32_t ppid, uint32_t tid)
{
	struct proc *parent, *child;

	(void)tid;
	if (pid == ppid || get_proc(s, pid, false))
		return;
	child = get_proc(s, pid, true);
	parent = get_proc(s, ppid, false);	/* after the realloc above */
	if (!child || !parent || !parent->nr_maps)
		return;
	child->maps = malloc(parent->nr_maps * sizeof(struct map));
	if (child->maps) {
		memcpy(child->maps, parent->maps, parent->nr_maps * sizeof(struct map));
		child->nr_maps = parent->nr_maps;
	}
}

void sym_comm(struct symbolizer *s, uint32_t pid, uint32_t tid, const char *comm, bool exec)
{
	struct comm *c = NULL, *nv;

	if (exec) {
		struct proc *p = get_proc(s, pid, false);

		if (p)
			p->nr_maps = 0;	/* exec replaces the address space */
	}
	for (size_t i = 0; i < s->nr_comms && !c; i++)
		if (s->comms[i].tid == tid)
			c = &s->comms[i];
	if (!c) {
		nv = realloc(s->comms, (s->nr_comms + 1) * sizeof(*nv));
		if (!nv)
			return;
		s->comms = nv;
		c = &nv[s->nr_comms++];
		c->tid = tid;
	}
	snprintf(c->name, sizeof(c->name), "%s", comm);
}

const char *sym_comm_of(struct symbolizer *s, uint32_t pid, uint32_t tid)
{
	const char *by_pid = NULL;

	for (size_t i = 0; i < s->nr_comms; i++) {
		if (s->comms[i].tid == tid)
			return s->comms[i].name;
		if (s->comms[i].tid == pid)
			by_pid = s->comms[i].name;
	}
	return by_pid ? by_pid : UNKNOWN;
}

/* Runtime address to the ELF's link-time address, through PT_LOAD. */
static bool to_vaddr(const struct dso *d, const struct map *m, uint64_t addr, uint64_t *va)
{
	uint64_t off = addr - m->start + m->pgoff;

	for (size_t i = 0; i < d->nr_segs; i++) {
		const struct segment *g = &d->segs[i];

		if (off >= g->offset && off - g->offset < g->filesz) {
			*va = off - g->offset + g->vaddr;
			return true;
		}
	}
	return false;
}

const char *sym_user(struct symbolizer *s, uint32_t pid, uint64_t addr)
{
	struct proc *p = get_proc(s, pid, false);
	const struct sym *sym;
	uint64_t va;

	for (size_t i = 0; p && i < p->nr_maps; i++) {
		struct map *m = &p->maps[p->nr_maps - 1 - i];	/* newest first */

		if (addr < m->start || addr >= m->end || !m->dso)
			continue;
		if (!m->dso->loaded)
			load_dso(s, m->dso);
		if (!to_vaddr(m->dso, m, addr, &va))
			return UNKNOWN;
		sym = lookup(m->dso->syms, m->dso->nr_syms, va);
		return sym ? sym->name : UNKNOWN;
	}
	return UNKNOWN;
}

const char *sym_kernel(struct symbolizer *s, uint64_t addr)
{
	const struct sym *sym = lookup(s->ksyms, s->nr_ksyms, addr);

	return sym ? sym->name : UNKNOWN;
}

static void load_kallsyms(struct symbolizer *s, const char *path)
{
	FILE *f = fopen(path, "r");
	char line[512], name[256], type;
	unsigned long long a;
	size_t cap = 0;

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s", &a, &type, name) != 3 || !a)
			continue;
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		/* Section markers share an address with a real function. */
		if (strstr(name, "_text_start") || strstr(name, "_text_end"))
			continue;
		if (add_sym(&s->ksyms, &s->nr_ksyms, &cap, a, 0, name))
			break;
	}
	fclose(f);
	if (s->nr_ksyms)
		qsort(s->ksyms, s->nr_ksyms, sizeof(*s->ksyms), sym_cmp);
}

struct symbolizer *sym_new(const char *symfs, const char *kallsyms)
{
	struct symbolizer *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->symfs = symfs ? strdup(symfs) : NULL;
	if (kallsyms)
		load_kallsyms(s, kallsyms);
	return s;
}

static void free_syms(struct sym *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].name);
	free(v);
}

void sym_free(struct symbolizer *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nr_dsos; i++) {
		free_syms(s->dsos[i]->syms, s->dsos[i]->nr_syms);
		free(s->dsos[i]->segs);
		free(s->dsos[i]->path);
		free(s->dsos[i]);
	}
	for (size_t i = 0; i < s->nr_procs; i++)
		free(s->procs[i].maps);
	free_syms(s->ksyms, s->nr_ksyms);
	free(s->dsos);
	free(s->procs);
	free(s->comms);
	free(s->symfs);
	free(s);
}
