// SPDX-License-Identifier: GPL-2.0
/* One mapped file's symbols for the report: found, checked by build-id, read. */
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
#include "lib/procmaps.h"
#include "symbols/debuginfo.h"
#include "symbols/dso.h"

/* Bounds on what one untrusted file may make us allocate. */
#define MAX_PHDRS	4096

static int elf_rank(const GElf_Sym *s)
{
	int b = GELF_ST_BIND(s->st_info);

	return symtab_rank(s->st_size != 0, b == STB_WEAK, b == STB_GLOBAL);
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
		if (symtab_add(&d->syms, s.st_value, s.st_size, name, elf_rank(&s)))
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

static void read_elf(struct dso_finder *f, struct dso *d, Elf *elf, const char *path)
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
		debug = read_debug_symtab(d, elf, f->symfs, &mini);
	if (dyn && (!d->syms.n || mini))
		read_symtab(elf, dyn, &dynsh, d);
	symtab_finish(&d->syms, code_end, 0);
	if (f->log)
		fprintf(f->log, "offcpu: report: %s: %zu symbols from %s%s\n", path, d->syms.n,
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
static void load_vdso(struct dso_finder *f, struct dso *d)
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
		read_elf(f, d, elf, d->path);
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
static bool try_file(struct dso_finder *f, struct dso *d, const char *path,
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
		read_elf(f, d, elf, path);
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
static bool try_elsewhere(struct dso_finder *f, struct dso *d, uint32_t pid,
			  const struct pmap_entry *m, struct other_file *other)
{
	char dir[4096], path[8192];

	if (f->symfs)
		return false;
	if (d->want_len && !bidcache_dir(dir, sizeof(dir)) &&
	    !bidcache_lookup_path(dir, d->want_id, d->want_len, path, sizeof(path)) &&
	    try_file(f, d, path, other))
		return true;
	if (!f->own_vdso)
		return false;
	for (int i = 0; !pmap_file_path(pid, m->mmap_start, m->mmap_end, d->path, i, path,
					 sizeof(path)); i++)
		if (try_file(f, d, path, other))
			return true;
	return false;
}

void dso_load(struct dso_finder *f, struct dso *d, uint32_t pid, const struct pmap_entry *m)
{
	char path[4096], want[2 * BUILD_ID_MAX + 1];
	struct other_file other;

	d->loaded = true;
	if (d->pseudo) {
		if (f->own_vdso && !strcmp(d->path, "[vdso]"))
			load_vdso(f, d);
		return;
	}
	if (snprintf(path, sizeof(path), "%s%s", f->symfs ? f->symfs : "", d->path) >=
	    (int)sizeof(path))
		return;
	other.seen = false;
	if (try_file(f, d, path, &other) || try_elsewhere(f, d, pid, m, &other))
		return;
	if (other.seen) {
		build_id_hex(d->want_id, d->want_len, want);
		fprintf(stderr, "offcpu: report: warning: %s is not the recorded file (build-id %s, recorded %s): its frames are [unknown]\n",
			other.path, other.got, want);
		return;
	}
	/* memfd files are anonymous memory: nowhere to find them. */
	if (strncmp(d->path, "/memfd:", 7) && !f->missing++)
		f->first_missing = strdup(path);
}

/* Runtime address to the ELF's link-time address, through PT_LOAD. */
bool dso_vaddr(const struct dso *d, const struct pmap_entry *m, uint64_t addr, uint64_t *va)
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

void dso_free(struct dso *d)
{
	if (!d)
		return;

	symtab_free(&d->syms);
	free(d->segs);
	free(d->path);
	free(d);
}
