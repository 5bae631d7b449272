// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer: the /proc parsers of src/lib/procfs.c and the kallsyms reader
 * of src/lib/ksyms.c.  The input is taken as a maps file (split into lines
 * as fgets does, and read whole into the process-map model of
 * src/lib/procmaps.c, whose invariants are checked), a status file, kallsyms lines and a whole kallsyms file
 * (looked up), a comm and a directory name at once: any of them may be
 * hostile (--kallsyms FILE is the user's).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/ksyms.h"
#include "lib/procfs.h"
#include "lib/procmaps.h"
#include "record/synthesis.h"

volatile unsigned result;	/* keeps the parsers' results live */

static int on_record(void *ctx, const struct perf_event_header *rec, uint64_t time)
{
	const uint8_t *p = (const uint8_t *)rec;
	unsigned sum = 0;

	(void)time;
	/* Touch every byte the record claims, so ASan sees an overread. */
	for (size_t i = 0; i < rec->size; i++)
		sum += p[i];
	*(unsigned *)ctx += sum;
	return 0;
}

/* fgets into a buffer of SIZE: lines longer than that arrive in pieces. */
static void each_line(const char *buf, size_t len, size_t size,
		      void (*fn)(const char *line, void *arg), void *arg)
{
	char *line = malloc(size);

	for (size_t off = 0; line && off < len;) {
		const char *nl = memchr(buf + off, '\n', len - off);
		size_t n = nl ? (size_t)(nl - (buf + off)) + 1 : len - off;

		if (n > size - 1)
			n = size - 1;
		memcpy(line, buf + off, n);
		line[n] = '\0';
		fn(line, arg);
		off += n;
	}
	free(line);
}

static void maps_line(const char *line, void *arg)
{
	proc_maps_line_emit(1, 2, line, on_record, arg);
}

static void kallsyms_line(const char *line, void *arg)
{
	char sym[PROC_SYM_MAX], type;
	uint64_t a;

	if (!proc_parse_kallsyms_line(line, &a, &type, sym))
		*(unsigned *)arg += strlen(sym) + (type == 't');
}

/* Each maps line into one address space, which must stay sorted and disjoint. */
static int maps_add(void *ctx, const struct proc_map *m)
{
	struct pmap *pm = ctx;

	if (pmap_add(pm, m->start, m->end, m->pgoff, NULL) && m->end > m->start)
		return 1;	/* out of memory */
	for (size_t i = 1; i < pm->n; i++)
		if (pm->v[i - 1].end > pm->v[i].start || pm->v[i].start >= pm->v[i].end)
			abort();
	if (m->end > m->start && pmap_find(pm, m->start) != pmap_find(pm, m->end - 1))
		abort();
	return 0;
}

static unsigned maps_file(const char *buf, size_t len)
{
	FILE *f = len ? fmemopen((void *)buf, len, "r") : NULL;
	struct pmap pm = { 0 };
	unsigned n;

	if (!f)
		return 0;
	proc_maps_each(f, maps_add, &pm);
	fclose(f);
	n = pm.n;
	pmap_release(&pm);
	return n;
}

/* The input as a kallsyms file, read up to FIRST's name (if any), then whole. */
static struct ksyms *kallsyms_table(const char *buf, size_t len, const char *first)
{
	FILE *f = fmemopen((void *)buf, len, "r");
	struct ksyms *ks = f ? ksyms_stream(f) : NULL;	/* owns F now */
	uint64_t addr;

	if (first && !ksyms_find(ks, first, &addr) &&
	    (!ksyms_count(ks) || strcmp(ksyms_at(ks, ksyms_count(ks) - 1)->name, first)))
		abort();	/* found, yet not where the reading stopped */
	if (ksyms_finish(ks)) {
		ksyms_free(ks);
		return NULL;
	}
	return ks;
}

/*
 * The whole input as a kallsyms file, each lookup tried; read up to a name
 * first, as the recorder does, it must hold what one whole read holds.
 */
static unsigned kallsyms_file(const char *buf, size_t len)
{
	struct ksyms *ks, *whole;
	const struct ksym *k, *w;
	uint64_t lo, hi;
	unsigned sum = 0;

	if (!len)
		return 0;
	ks = kallsyms_table(buf, len, len > 20 ? buf + len - 8 : "_text");
	whole = kallsyms_table(buf, len, NULL);
	if (ksyms_count(ks) != ksyms_count(whole))
		abort();
	for (size_t i = 0; i < ksyms_count(ks); i++) {
		k = ksyms_at(ks, i);
		w = ksyms_at(whole, i);
		if (k->addr != w->addr || k->type != w->type || strcmp(k->name, w->name))
			abort();
		sum += strlen(k->name);
		if (ksyms_by_name(ks, k->name) && !ksyms_range(ks, k->name, &lo, &hi))
			sum += hi > lo;
		k = ksyms_by_addr(ks, k->addr + 1);
		sum += k ? (unsigned)k->type : 0;
	}
	ksyms_free(ks);
	ksyms_free(whole);
	return sum;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 1);
	unsigned sink = 0;
	uint32_t v;

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	each_line(buf, size, PROC_MAPS_LINE, maps_line, &sink);
	each_line(buf, size, 256, kallsyms_line, &sink);
	sink += kallsyms_file(buf, size);
	sink += maps_file(buf, size);
	if (!proc_parse_status(buf, "Tgid", &v))
		sink += v;
	if (!proc_parse_status(buf, "PPid", &v))
		sink += v;
	sink += proc_parse_id(buf);
	proc_parse_comm(buf);
	free(buf);
	result = sink;
	return 0;
}
