// SPDX-License-Identifier: GPL-2.0
/*
 * Kernel symbols, read once.  The names live in one buffer (a kernel has
 * some 100,000 to 250,000 of them); entries stay in the file's order, so
 * that "the first one in the file" stays what every former reader meant.
 * Lookups are linear, on purpose: the table serves a few of them (the
 * recorder's ranges, about 20), and sorting it cost more than they do
 * (seconds in an emulated guest, where the recorder stalled); the report
 * builds its own sorted symbol table from the entries.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/ksyms.h"
#include "lib/procfs.h"

struct ksyms {
	struct ksym *v;		/* in the file's order */
	size_t n, cap;
	char *names;		/* NUL-separated, v[i].name points in */
	size_t names_len, names_cap;
};

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
	size_t c = *cap ? *cap : 4096;
	void *n;

	if (need <= *cap)
		return 0;
	while (c < need)
		c *= 2;
	n = realloc(*p, c * size);
	if (!n)
		return -1;
	*p = n;
	*cap = c;
	return 0;
}

/* Names are kept as offsets until the buffer stops moving (ksyms_index). */
static int add(struct ksyms *ks, uint64_t addr, char type, const char *name)
{
	size_t len = strlen(name) + 1;

	if (ks->n >= UINT32_MAX - 1 ||
	    grow((void **)&ks->v, &ks->cap, ks->n + 1, sizeof(*ks->v)) ||
	    grow((void **)&ks->names, &ks->names_cap, ks->names_len + len, 1))
		return -1;
	memcpy(ks->names + ks->names_len, name, len);
	ks->v[ks->n++] = (struct ksym){ addr, (const char *)(uintptr_t)ks->names_len, type };
	ks->names_len += len;
	return 0;
}

/* The names' buffer stopped moving: offsets become pointers. */
static void fix_names(struct ksyms *ks)
{
	for (size_t i = 0; i < ks->n; i++)
		ks->v[i].name = ks->names + (uintptr_t)ks->v[i].name;
}

/* The one reading loop: FN on each symbol of F until it returns non-zero. */
static int each_line(FILE *f, int (*fn)(void *ctx, const struct ksym *k), void *ctx)
{
	char line[PROC_KSYMS_LINE], sym[PROC_SYM_MAX], type;
	struct ksym k = { .name = sym };
	int ret = 0;

	while (!ret && fgets(line, sizeof(line), f)) {
		/* The rest of a line longer than the buffer is not a line. */
		bool whole = strchr(line, '\n') || feof(f);

		if (!proc_parse_kallsyms_line(line, &k.addr, &type, sym)) {
			k.type = type;
			ret = fn(ctx, &k);
		}
		while (!whole && fgets(line, sizeof(line), f))
			whole = strchr(line, '\n');
	}
	return ret;
}

static int add_line(void *ctx, const struct ksym *k)
{
	return add(ctx, k->addr, k->type, k->name);
}

struct ksyms *ksyms_read(FILE *f)
{
	struct ksyms *ks = calloc(1, sizeof(*ks));

	if (ks && !each_line(f, add_line, ks)) {
		fix_names(ks);
		return ks;
	}
	ksyms_free(ks);
	return NULL;
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

struct ksyms *ksyms_load(const char *path)
{
	FILE *f = open_kallsyms(path);
	struct ksyms *ks;

	if (!f)
		return NULL;
	ks = ksyms_read(f);
	fclose(f);
	return ks;
}

int ksyms_each(const char *path, int (*fn)(void *ctx, const struct ksym *k), void *ctx)
{
	FILE *f = open_kallsyms(path);
	int ret;

	if (!f)
		return -1;
	ret = each_line(f, fn, ctx);
	fclose(f);
	return ret;
}

void ksyms_free(struct ksyms *ks)
{
	if (!ks)
		return;
	free(ks->v);
	free(ks->names);
	free(ks);
}

static struct ksyms *running;
static bool running_tried;

const struct ksyms *ksyms_running(void)
{
	if (!running_tried) {
		running_tried = true;
		running = ksyms_load("/proc/kallsyms");
	}
	return running;
}

struct first {
	const char *name;
	uint64_t addr;
};

static int is_first(void *ctx, const struct ksym *k)
{
	struct first *want = ctx;

	if (strcmp(k->name, want->name))
		return 0;
	want->addr = k->addr;
	return 1;
}

int ksyms_running_find(const char *name, uint64_t *addr)
{
	struct first want = { name, 0 };
	const struct ksym *k;

	if (running_tried) {
		k = ksyms_by_name(running, name);
		*addr = k ? k->addr : 0;
		return k ? 0 : -1;
	}
	*addr = 0;
	if (ksyms_each("/proc/kallsyms", is_first, &want) != 1)
		return -1;
	*addr = want.addr;
	return 0;
}

void ksyms_running_free(void)
{
	ksyms_free(running);
	running = NULL;
	running_tried = false;
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
