// SPDX-License-Identifier: GPL-2.0
/* Address to function name for `offcpu report`: process maps, ELF, kallsyms. */
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/build_id.h"
#include "lib/buildid_cache.h"
#include "symbols/debuginfo.h"
#include "symbols/demangle.h"
#include "lib/hashset.h"
#include "lib/ksyms.h"
#include "lib/procmaps.h"
#include "lib/sorted.h"
#include "symbols/symbolize.h"

/* Bounds on what one untrusted file may make us allocate. */
#define MAX_SYMS	(8u << 20)
#define MAX_PHDRS	4096
/* How far past the last kernel symbol an address still belongs to it. */
#define KSYM_TAIL	(1u << 20)

struct sym {
	uint64_t addr, size;
	char *name;
	int rank;		/* which alias of an address to show */
	uint32_t seq;		/* order in the file: perf keeps the first of equals */
	bool demangled;		/* name is the readable one (or needs none) */
};

struct symtab {
	struct sym *v;
	size_t n, cap;
};

struct segment {
	uint64_t offset, vaddr, filesz;
};

struct dso {
	char *path;
	struct symtab syms;
	struct segment *segs;
	size_t nr_segs;
	uint8_t want_id[BUILD_ID_MAX];	/* from the recording; len 0: none */
	int want_len;
	bool loaded, pseudo;	/* pseudo: [vdso], named but not a file */
};

struct comm {
	char name[16];
};

struct symbolizer {
	char *symfs;
	struct str_map dsos;	/* by path (the dso's own copy) */
	struct pmap_set procs;	/* maps over time (entries' file: struct dso) */
	struct u32_map comms;	/* by tid */
	struct symtab ksyms;
	uint64_t ktext;		/* _text in kallsyms */
	uint64_t kdelta;	/* added to recorded kernel addresses */
	size_t missing;
	char *first_missing;
	bool own_vdso;		/* the running kernel is the recorded one */
	bool raw_names;		/* --no-demangle */
	FILE *log;		/* -v: where each file's symbols came from */
};

/* ---- symbol tables ---- */

static int add_sym(struct symtab *t, uint64_t addr, uint64_t size, const char *name, int rank)
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
static void symtab_finish(struct symtab *t, uint64_t code_end, uint64_t tail)
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
static struct sym *lookup(const struct symtab *t, uint64_t addr)
{
	size_t n = sorted_upper(t->v, t->n, sizeof(*t->v), offsetof(struct sym, addr), addr);
	struct sym *s;

	if (!n)
		return NULL;
	s = &t->v[n - 1];
	return addr - s->addr < s->size ? s : NULL;
}

static void symtab_free(struct symtab *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->v[i].name);
	free(t->v);
}

/* ---- ELF files ---- */

/*
 * perf's choice among aliases (choose_best_symbol): sized, then not weak,
 * then global; sym_cmp then prefers fewer leading underscores.
 */
static int rank(bool sized, bool weak, bool global)
{
	return sized * 4 + !weak * 2 + global;
}

static int elf_rank(const GElf_Sym *s)
{
	int b = GELF_ST_BIND(s->st_info);

	return rank(s->st_size != 0, b == STB_WEAK, b == STB_GLOBAL);
}

/*
 * An assembly label in a text section (ld.so's _dl_start_user), named by
 * perf too; not ARM's mapping symbols ($x, $d), which name no function.
 */
static bool is_code_label(Elf *elf, const GElf_Sym *s, const char *name)
{
	Elf_Scn *scn = elf_getscn(elf, s->st_shndx);
	const char *sec;
	size_t shstrndx;
	GElf_Shdr sh;

	if (name[0] == '$' && name[1] && strchr("adtx", name[1]) && (!name[2] || name[2] == '.'))
		return false;
	if (!scn || !gelf_getshdr(scn, &sh) || elf_getshdrstrndx(elf, &shstrndx))
		return false;
	sec = elf_strptr(elf, shstrndx, sh.sh_name);
	return sec && strstr(sec, "text");
}

/* FUNC symbols and code labels of one symbol table, every index checked by libelf. */
static void read_symtab(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, struct dso *d)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t esz = gelf_fsize(elf, ELF_T_SYM, 1, EV_CURRENT);
	size_t n;

	if (!data || !data->d_buf || !esz || sh->sh_type == SHT_NOBITS)
		return;
	n = data->d_size / esz;
	for (size_t i = 0; i < n; i++) {
		GElf_Sym s;
		const char *name;
		int type;

		if (!gelf_getsym(data, i, &s))
			break;
		type = GELF_ST_TYPE(s.st_info);
		if ((type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_NOTYPE) ||
		    s.st_shndx == SHN_UNDEF || s.st_shndx >= SHN_LORESERVE || !s.st_value)
			continue;
		name = elf_strptr(elf, sh->sh_link, s.st_name);
		if (!name || !*name || (type == STT_NOTYPE && !is_code_label(elf, &s, name)))
			continue;
		if (add_sym(&d->syms, s.st_value, s.st_size, name, elf_rank(&s)))
			return;
	}
}

static void read_segments(Elf *elf, struct dso *d)
{
	size_t n;

	if (elf_getphdrnum(elf, &n) || !n || n > MAX_PHDRS)
		return;
	d->segs = calloc(n, sizeof(*d->segs));
	for (size_t i = 0; d->segs && i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		d->segs[d->nr_segs++] = (struct segment){ ph.p_offset, ph.p_vaddr, ph.p_filesz };
	}
}

/* Whether the file is the one recorded; GOT: the hex id found (for the warning). */
static bool build_id_matches(const struct dso *d, Elf *elf, char got[2 * BUILD_ID_MAX + 1])
{
	uint8_t id[BUILD_ID_MAX];
	int len;

	if (!d->want_len)
		return true;
	len = build_id_of_elf(elf, id);
	if (len == d->want_len && !memcmp(id, d->want_id, len))
		return true;
	if (len > 0)
		build_id_hex(id, len, got);
	else
		snprintf(got, 2 * BUILD_ID_MAX + 1, "none");
	return false;
}

/*
 * A regular file only: a FIFO or device named by a recording must not hang
 * us, and opening some devices has effects (a watchdog starts), so stat first.
 */
static int open_regular(const char *path)
{
	struct stat st;
	int fd;

	if (stat(path, &st) || !S_ISREG(st.st_mode))
		return -1;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || !st.st_size) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * A stripped file's .symtab from its debug file or MiniDebugInfo (SYMFS:
 * NULL for none).  Returns where it came from (malloc'd) or NULL; *MINI:
 * MiniDebugInfo, which leaves out the symbols .dynsym has.
 */
static char *read_debug_symtab(struct dso *d, Elf *elf, const char *symfs, bool *mini)
{
	struct debug_file df;
	GElf_Shdr sh;
	Elf_Scn *scn;
	char *from = NULL;

	*mini = false;
	if (d->pseudo || debuginfo_find(elf, symfs, d->path, &df))
		return NULL;
	scn = debuginfo_symtab(df.elf, &sh);
	if (scn)
		read_symtab(df.elf, scn, &sh, d);
	if (d->syms.n) {
		from = strdup(df.where);
		*mini = df.mini;
	}
	debuginfo_close(&df);
	return from;
}

static void read_elf(struct symbolizer *s, struct dso *d, Elf *elf, const char *path)
{
	Elf_Scn *scn = NULL, *dyn = NULL;
	GElf_Shdr sh, dynsh;
	char *debug = NULL;
	bool mini = false, own;
	uint64_t code_end = 0;

	if (elf_kind(elf) != ELF_K_ELF)
		return;
	read_segments(elf, d);
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh))
			continue;
		if ((sh.sh_flags & SHF_EXECINSTR) && sh.sh_addr + sh.sh_size > code_end)
			code_end = sh.sh_addr + sh.sh_size;
		if (sh.sh_type == SHT_SYMTAB) {
			read_symtab(elf, scn, &sh, d);
		} else if (sh.sh_type == SHT_DYNSYM) {
			dyn = scn;
			dynsh = sh;
		}
	}
	/* .symtab when present (not stripped), else a debug file's, else .dynsym. */
	own = d->syms.n;
	if (!own)
		debug = read_debug_symtab(d, elf, s->symfs, &mini);
	if (dyn && (!d->syms.n || mini))
		read_symtab(elf, dyn, &dynsh, d);
	symtab_finish(&d->syms, code_end, 0);
	if (s->log)
		fprintf(s->log, "offcpu: report: %s: %zu symbols from %s%s\n", path, d->syms.n,
			debug ? debug : own ? "its .symtab" : d->syms.n ? "its .dynsym" : "nowhere",
			mini ? " and its .dynsym" : "");
	free(debug);
}

static int vdso_line(void *ctx, const struct proc_map *m)
{
	if (strcmp(m->file, "[vdso]"))
		return 0;
	*(size_t *)ctx = m->end - m->start;
	return 1;	/* found: stop */
}

/* Our own vdso's size, from /proc/self/maps. */
static size_t vdso_size(void)
{
	size_t size = 0;

	proc_maps_read(0, vdso_line, &size);
	return size;
}

/*
 * The vdso is no file: as perf does, read the image this process got from
 * the same kernel (only when the recording's kernel is the running one).
 */
static void load_vdso(struct symbolizer *s, struct dso *d)
{
	const void *base = (const void *)getauxval(AT_SYSINFO_EHDR);
	size_t size = base ? vdso_size() : 0;
	char *copy = size && size <= (16u << 20) ? malloc(size) : NULL;
	Elf *elf;

	if (!copy)
		return;
	memcpy(copy, base, size);
	elf = elf_memory(copy, size);
	if (elf)
		read_elf(s, d, elf, d->path);
	elf_end(elf);
	free(copy);
}

/* The first file found at a place but not the recorded one, for the warning. */
struct other_file {
	char path[8192];
	char got[2 * BUILD_ID_MAX + 1];	/* its build-id, hex, or why none */
	bool seen;
};

/* Reads PATH's symbols into D if it is the recorded file; true when it did. */
static bool try_file(struct symbolizer *s, struct dso *d, const char *path,
		     struct other_file *other)
{
	char got[sizeof(other->got)];
	bool ok = false;
	int fd = open_regular(path);
	Elf *elf;

	if (fd < 0)
		return false;
	/* ELF_C_READ, not MMAP: a file truncated under us must not SIGBUS. */
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF)
		snprintf(got, sizeof(got), "none: not ELF");
	else
		ok = build_id_matches(d, elf, got);
	if (ok)
		read_elf(s, d, elf, path);
	else if (!other->seen) {
		other->seen = true;
		snprintf(other->path, sizeof(other->path), "%s", path);
		memcpy(other->got, got, sizeof(got));
	}
	elf_end(elf);
	close(fd);
	return ok;
}

/*
 * Where else the recorded file may be when its path holds another file or
 * none: perf's build-id cache (the record copies the files of other mount
 * namespaces there; `offcpu archive` is extracted there), then, while
 * process PID lives, its mapping's own file (/proc/PID/map_files, which
 * reaches a mount only its namespace has) or the path in its root.  Only
 * for a recording of the running kernel, where the pid is the recorded
 * process's; not under --symfs, which names the one place to look.
 */
static bool try_elsewhere(struct symbolizer *s, struct dso *d, uint32_t pid,
			  const struct pmap_entry *m, struct other_file *other)
{
	char dir[4096], path[8192];

	if (s->symfs)
		return false;
	if (d->want_len && !bidcache_dir(dir, sizeof(dir)) &&
	    !bidcache_lookup_path(dir, d->want_id, d->want_len, path, sizeof(path)) &&
	    try_file(s, d, path, other))
		return true;
	if (!s->own_vdso)
		return false;
	for (int i = 0; !pmap_file_path(pid, m->mmap_start, m->mmap_end, d->path, i, path,
					 sizeof(path)); i++)
		if (try_file(s, d, path, other))
			return true;
	return false;
}

static void load_dso(struct symbolizer *s, struct dso *d, uint32_t pid, const struct pmap_entry *m)
{
	char path[4096], want[2 * BUILD_ID_MAX + 1];
	struct other_file other;

	d->loaded = true;
	if (d->pseudo) {
		if (s->own_vdso && !strcmp(d->path, "[vdso]"))
			load_vdso(s, d);
		return;
	}
	if (snprintf(path, sizeof(path), "%s%s", s->symfs ? s->symfs : "", d->path) >=
	    (int)sizeof(path))
		return;
	other.seen = false;
	if (try_file(s, d, path, &other) || try_elsewhere(s, d, pid, m, &other))
		return;
	if (other.seen) {
		build_id_hex(d->want_id, d->want_len, want);
		fprintf(stderr, "offcpu: report: warning: %s is not the recorded file (build-id %s, recorded %s): its frames are [unknown]\n",
			other.path, other.got, want);
		return;
	}
	/* memfd files are anonymous memory: nowhere to find them. */
	if (strncmp(d->path, "/memfd:", 7) && !s->missing++)
		s->first_missing = strdup(path);
}

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

/* Runtime address to the ELF's link-time address, through PT_LOAD. */
static bool to_vaddr(const struct dso *d, const struct pmap_entry *m, uint64_t addr, uint64_t *va)
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
		load_dso(s, d, pid, m);
	if (d->pseudo && !d->syms.n)
		return d->path;
	if (!to_vaddr(d, m, addr, &va))
		return SYM_UNKNOWN;
	sym = lookup(&d->syms, va);
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
	const struct sym *sym = lookup(&s->ksyms, addr + s->kdelta);

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
	add_sym(&s->ksyms, k->addr, 0, k->name,
		rank(false, k->type == 'w' || k->type == 'W', k->type == 'T'));
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
	if (kallsyms)
		load_kallsyms(s, kallsyms);
	return s;
}

void sym_options(struct symbolizer *s, bool raw_names, FILE *log)
{
	s->raw_names = raw_names;
	s->log = log;
}

void sym_same_kernel(struct symbolizer *s)
{
	s->own_vdso = true;
}

size_t sym_nr_missing(const struct symbolizer *s, const char **first)
{
	*first = s->first_missing ? s->first_missing : "?";
	return s->missing;
}

static void free_dso(void *v)
{
	struct dso *d = v;

	symtab_free(&d->syms);
	free(d->segs);
	free(d->path);
	free(d);
}

void sym_free(struct symbolizer *s)
{
	if (!s)
		return;
	str_map_free(&s->dsos, free_dso);
	pmap_set_free(&s->procs);
	u32_map_free(&s->comms, free);
	symtab_free(&s->ksyms);
	free(s->first_missing);
	free(s->symfs);
	free(s);
}
