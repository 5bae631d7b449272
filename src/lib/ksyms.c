// SPDX-License-Identifier: GPL-2.0
/*
 * Kernel symbols, read once.  Entries stay in the file's order, so that
 * "the first one in the file" stays what every former reader meant, and the
 * file is read only as far as the lookups so far needed: the recorder asks
 * for _text at start-up and for ranges at its first kernel stack, from one
 * open of /proc/kallsyms.  Lookups are linear, on purpose: the table serves
 * a few of them (the recorder's ranges, about 20), and sorting it cost more
 * than they do (seconds in an emulated guest, where the recorder stalled);
 * the report builds its own sorted symbol table from the entries.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/ksyms.h"
#include "lib/procfs.h"

/*
 * Names are copied into blocks that never move: entries read later must
 * not move the names of those a caller already holds.  (A realloc'd buffer
 * would, and the table grows while it is being looked up.  glibc's obstack
 * is this; musl has none, and a per-name malloc costs 120,000 calls.)
 */
#define NAME_BLOCK	65536

struct name_block {
	struct name_block *next;
	size_t used;
	char buf[NAME_BLOCK];
};

struct ksyms {
	struct ksym *v;		/* in the file's order */
	size_t n, cap;
	struct name_block *names;	/* the newest first */
	FILE *rest;		/* not read to its end yet, or NULL */
	bool failed;		/* out of memory: the table is short */
};

static int grow(struct ksyms *ks)
{
	size_t c = ks->cap ? ks->cap * 2 : 4096;
	struct ksym *v;

	if (ks->n < ks->cap)
		return 0;
	if (c > SIZE_MAX / 2 / sizeof(*v))
		return -1;
	v = realloc(ks->v, c * sizeof(*v));
	if (!v)
		return -1;
	ks->v = v;
	ks->cap = c;
	return 0;
}

/* NAME (at most PROC_SYM_MAX with its NUL) kept for the table's life. */
static const char *keep_name(struct ksyms *ks, const char *name)
{
	size_t len = strlen(name) + 1;
	struct name_block *b = ks->names;
	char *p;

	if (!b || sizeof(b->buf) - b->used < len) {
		b = malloc(sizeof(*b));
		if (!b)
			return NULL;
		b->next = ks->names;
		b->used = 0;
		ks->names = b;
	}
	p = memcpy(b->buf + b->used, name, len);
	b->used += len;
	return p;
}

static int add(struct ksyms *ks, const struct ksym *k)
{
	const char *name;

	if (grow(ks) || !(name = keep_name(ks, k->name)))
		return -1;
	ks->v[ks->n++] = (struct ksym){ k->addr, name, k->type };
	return 0;
}

/*
 * The next symbol of F into K (its name in SYM, PROC_SYM_MAX): 1, or 0 at
 * the end.  Lines that do not parse are skipped.  *MOD (unless NULL): the
 * line names a module ("[ext4]", also "[bpf]"), not the kernel image.
 */
static int next_line(FILE *f, struct ksym *k, char *sym, bool *mod)
{
	char line[PROC_KSYMS_LINE];

	k->name = sym;
	while (fgets(line, sizeof(line), f)) {
		/* The rest of a line longer than the buffer is not a line. */
		bool whole = strchr(line, '\n') || feof(f);
		bool ok = !proc_parse_kallsyms_line(line, &k->addr, &k->type, sym);

		if (mod)
			*mod = strchr(line, '[');
		while (!whole && fgets(line, sizeof(line), f))
			whole = strchr(line, '\n');
		if (ok)
			return 1;
	}
	return 0;
}

static void close_rest(struct ksyms *ks)
{
	if (ks->rest)
		fclose(ks->rest);
	ks->rest = NULL;
}

/*
 * Read on (the one reading loop) up to the first symbol named STOP, or to
 * the end when STOP is NULL: its entry, or NULL.
 */
static const struct ksym *read_on(struct ksyms *ks, const char *stop)
{
	char sym[PROC_SYM_MAX];
	struct ksym k;

	while (ks->rest && next_line(ks->rest, &k, sym, NULL)) {
		if (add(ks, &k)) {
			ks->failed = true;
			break;
		}
		if (stop && !strcmp(sym, stop))
			return &ks->v[ks->n - 1];
	}
	close_rest(ks);
	return NULL;
}

struct ksyms *ksyms_stream(FILE *f)
{
	struct ksyms *ks = calloc(1, sizeof(*ks));

	if (!ks) {
		fclose(f);
		return NULL;
	}
	ks->rest = f;
	return ks;
}

/*
 * Only a regular file, or a /proc file (its size reads 0): --kallsyms
 * naming a FIFO or a device must not hang the report.
 */
static FILE *open_kallsyms(const char *path)
{
	struct stat st;
	bool proc = !strncmp(path, "/proc/", 6);
	FILE *f;
	int fd;

	/* stat first: opening a device can do something by itself. */
	if (stat(path, &st) || !S_ISREG(st.st_mode))
		return NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || (!st.st_size && !proc) ||
	    !(f = fdopen(fd, "r"))) {
		close(fd);
		return NULL;
	}
	return f;
}

struct ksyms *ksyms_open(const char *path)
{
	FILE *f = open_kallsyms(path);

	return f ? ksyms_stream(f) : NULL;
}

int ksyms_find(struct ksyms *ks, const char *name, uint64_t *addr)
{
	const struct ksym *k = ksyms_by_name(ks, name);

	if (!k && ks)
		k = read_on(ks, name);
	*addr = k ? k->addr : 0;
	return k ? 0 : -1;
}

int ksyms_finish(struct ksyms *ks)
{
	if (!ks)
		return -1;
	read_on(ks, NULL);
	return ks->failed ? -1 : 0;
}

struct ksyms *ksyms_load(const char *path)
{
	struct ksyms *ks = ksyms_open(path);

	if (ksyms_finish(ks)) {
		ksyms_free(ks);
		return NULL;
	}
	return ks;
}

void ksyms_free(struct ksyms *ks)
{
	struct name_block *b;

	if (!ks)
		return;
	close_rest(ks);
	while ((b = ks->names)) {
		ks->names = b->next;
		free(b);
	}
	free(ks->v);
	free(ks);
}

/*
 * The running kernel's table is not kept: read whole it is 120,000 entries
 * and 6 MiB of names, most of the recorder's peak RSS besides its CFI
 * tables (bench/RESULTS.md, 2026-11-26), for about 20 questions.  Each
 * question streams /proc/kallsyms once instead, keeping only what it asks
 * (and, for ranges, the addresses until the answer is known).
 */
/* The lowest address of any symbol above each ADDR[i] != 0 into HI[i] (0: none). */
static void next_higher(const uint64_t *all, size_t n_all, const uint64_t *addr, uint64_t *hi,
			size_t n)
{
	for (size_t i = 0; i < n; i++) {
		hi[i] = 0;
		for (size_t j = 0; addr[i] && j < n_all; j++)
			if (all[j] > addr[i] && (!hi[i] || all[j] < hi[i]))
				hi[i] = all[j];
	}
}

/*
 * Whether the ends of the names found so far are known without reading on:
 * the kernel image's symbols come first and sorted by address
 * (scripts/kallsyms), modules' and BPF's after them, and those live outside
 * the image.  So once every name is found in that sorted part and a symbol
 * above the highest of them has been read there, nothing later in the file
 * can end one of them sooner.
 */
struct scan_order {
	uint64_t last, top;	/* the last address read; the highest found */
	bool unsorted;		/* the image's part went down, or a module came */
};

static bool ends_known(struct scan_order *o, const struct ksym *k, bool mod, bool found)
{
	o->unsorted |= mod || k->addr < o->last;
	o->last = k->addr;
	if (found && k->addr > o->top)
		o->top = k->addr;
	return !o->unsorted && o->last > o->top;
}

static int keep_addr(uint64_t **all, size_t *n_all, size_t *cap, uint64_t addr)
{
	if (*n_all == *cap) {
		size_t c = *cap ? *cap * 2 : 4096;
		uint64_t *v = realloc(*all, c * sizeof(*v));

		if (!v)
			return -1;
		*all = v;
		*cap = c;
	}
	(*all)[(*n_all)++] = addr;
	return 0;
}

/*
 * One pass over the running kernel's symbols: the first address of each of
 * the N NAMES into ADDR (FOUND[i] says whether listed), and with HI their
 * ends (the next higher address of any symbol), reading only as far as
 * they are certain.  0, or -1 when unreadable or out of memory.
 */
static int running_scan(const char *const *names, size_t n, bool *found, uint64_t *addr,
			uint64_t *hi)
{
	FILE *f = open_kallsyms("/proc/kallsyms");
	char sym[PROC_SYM_MAX];
	uint64_t *all = NULL;
	size_t n_all = 0, cap = 0, left = n;
	struct scan_order order = { 0 };
	struct ksym k;
	bool mod, known = false;
	int rc = 0;

	if (!f)
		return -1;
	for (size_t i = 0; i < n; i++)
		found[i] = false, addr[i] = 0;
	while ((left || (hi && !known)) && next_line(f, &k, sym, &mod)) {
		bool hit = false;

		for (size_t i = 0; i < n; i++)
			if (!found[i] && !strcmp(names[i], sym))
				found[i] = hit = true, addr[i] = k.addr, left--;
		if (!hi)
			continue;
		known = ends_known(&order, &k, mod, hit) && !left;
		if (keep_addr(&all, &n_all, &cap, k.addr)) {
			rc = -1;
			break;
		}
	}
	fclose(f);
	if (hi && !rc)
		next_higher(all, n_all, addr, hi, n);
	free(all);
	return rc;
}

int ksyms_running_find(const char *name, uint64_t *addr)
{
	bool found;

	if (running_scan(&name, 1, &found, addr, NULL) || !found) {
		*addr = 0;
		return -1;
	}
	return 0;
}

bool ksyms_running_has(const char *name)
{
	uint64_t addr;

	return !ksyms_running_find(name, &addr);
}

int ksyms_running_ranges(const char *const *names, size_t n, uint64_t *lo, uint64_t *hi)
{
	bool *found = calloc(n ? n : 1, sizeof(*found));
	int nr = 0;

	if (!found || running_scan(names, n, found, lo, hi))
		n = 0;
	for (size_t i = 0; i < n; i++) {
		/* Absent, hidden or the last: where it ends is not known. */
		if (!found[i] || !lo[i] || !hi[i])
			lo[i] = hi[i] = 0;
		nr += lo[i] != 0;
	}
	free(found);
	return nr;
}

int ksyms_running_range(const char *name, uint64_t *lo, uint64_t *hi)
{
	return ksyms_running_ranges(&name, 1, lo, hi) ? 0 : -1;
}

int ksyms_parse_symbol(const char *text, uint64_t addr, const char *name, uint64_t *lo,
			  uint64_t *hi)
{
	size_t len = strlen(name);
	unsigned long long off, size;
	char *end;

	*lo = *hi = 0;
	if (strncmp(text, name, len) || text[len] != '+')
		return -1;
	/* "+%#lx/%#lx", as the kernel's __sprint_symbol writes them, and nothing after. */
	errno = 0;
	off = strtoull(text + len + 1, &end, 16);
	if (end == text + len + 1 || *end != '/' || errno)
		return -1;
	size = strtoull(end + 1, &end, 16);
	if (*end || errno || end[-1] == '/' || !size || off > size || off > addr ||
	    addr - off > UINT64_MAX - size)
		return -1;
	*lo = addr - off;
	*hi = *lo + size;
	return 0;
}

size_t ksyms_count(const struct ksyms *ks)
{
	return ks ? ks->n : 0;
}

const struct ksym *ksyms_at(const struct ksyms *ks, size_t i)
{
	return ks && i < ks->n ? &ks->v[i] : NULL;
}

const struct ksym *ksyms_by_addr(const struct ksyms *ks, uint64_t addr)
{
	const struct ksym *best = NULL;

	for (size_t i = 0; i < ksyms_count(ks); i++)
		if (ks->v[i].addr <= addr && (!best || ks->v[i].addr > best->addr))
			best = &ks->v[i];
	return best;
}

const struct ksym *ksyms_by_name(const struct ksyms *ks, const char *name)
{
	for (size_t i = 0; i < ksyms_count(ks); i++)
		if (!strcmp(ks->v[i].name, name))
			return &ks->v[i];
	return NULL;
}

int ksyms_range(const struct ksyms *ks, const char *name, uint64_t *lo, uint64_t *hi)
{
	const struct ksym *s = ksyms_by_name(ks, name);
	uint64_t next = UINT64_MAX;

	*lo = *hi = 0;
	if (!s || !s->addr)
		return -1;
	for (size_t i = 0; i < ks->n; i++)
		if (ks->v[i].addr > s->addr && ks->v[i].addr < next)
			next = ks->v[i].addr;
	if (next == UINT64_MAX)
		return -1;	/* the last: where it ends is not known */
	*lo = s->addr;
	*hi = next;
	return 0;
}
