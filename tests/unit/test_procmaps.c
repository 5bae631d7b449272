// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of src/lib/procmaps.c, the process-map model and the one
 * /proc/PID/maps reader: mappings hiding what they overlap (split with the
 * file offset carried), fork copies and exit keeps, and this process's own
 * maps read back.  Prints PASS/FAIL lines.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "lib/procmaps.h"

static char a_file, b_file;

/* "start-end@pgoff:f " per mapping, f the file's letter. */
static void shape(const struct pmap *m, char *out, size_t size)
{
	size_t len = 0;

	out[0] = '\0';
	for (size_t i = 0; i < m->n && len < size; i++) {
		const struct pmap_entry *e = &m->v[i];

		len += snprintf(out + len, size - len, "%llx-%llx@%llx:%c ",
				(unsigned long long)e->start, (unsigned long long)e->end,
				(unsigned long long)e->pgoff,
				e->file == &a_file ? 'a' : e->file == &b_file ? 'b' : '-');
	}
}

static void test_overlap(void)
{
	struct pmap m = { 0 };
	char got[256];

	pmap_add(&m, 0x1000, 0x5000, 0, &a_file);
	pmap_add(&m, 0x8000, 0x9000, 0x3000, &a_file);
	/* Inside the first: it splits around the new one. */
	pmap_add(&m, 0x2000, 0x3000, 0x10000, &b_file);
	shape(&m, got, sizeof(got));
	CHECK("split", !strcmp(got, "1000-2000@0:a 2000-3000@10000:b 3000-5000@2000:a 8000-9000@3000:a "),
	      "%s", got);
	/* Over the tail of one and the head of the next. */
	pmap_add(&m, 0x4000, 0x8800, 0, NULL);
	shape(&m, got, sizeof(got));
	CHECK("punch", !strcmp(got, "1000-2000@0:a 2000-3000@10000:b 3000-4000@2000:a 4000-8800@0:- 8800-9000@3800:a "),
	      "%s", got);
	CHECK("find", pmap_find(&m, 0x2fff) && pmap_find(&m, 0x2fff)->file == &b_file &&
	      !pmap_find(&m, 0x9000) && !pmap_find(&m, 0xfff), "wrong mapping");
	CHECK("mmap-range-kept", pmap_find(&m, 0x3000)->mmap_start == 0x1000 &&
	      pmap_find(&m, 0x3000)->mmap_end == 0x5000, "the added range was lost");
	CHECK("empty-refused", pmap_add(&m, 0x5000, 0x5000, 0, NULL) == -1 && m.n == 5, "added");
	pmap_release(&m);
}

static void test_set(void)
{
	struct pmap_set s = { 0 };
	struct pmap *parent = pmap_set_get(&s, 10, true), *child;

	pmap_add(parent, 0x1000, 0x2000, 0, &a_file);
	pmap_set_fork(&s, 11, 10);
	child = pmap_set_get(&s, 11, false);
	CHECK("fork-copies", child && child->n == 1 && child->v != parent->v, "no copy");
	/* A live child's maps (from /proc) stay; an exited pid's are replaced. */
	pmap_add(child, 0x3000, 0x4000, 0, &b_file);
	pmap_set_fork(&s, 11, 10);
	CHECK("fork-keeps-live", child->n == 2, "replaced");
	pmap_set_exit(&s, 11);
	CHECK("exit-keeps", child->dead && child->n == 2, "dropped");
	pmap_set_fork(&s, 11, 10);
	CHECK("fork-after-exit", !child->dead && child->n == 1 && child->v[0].file == &a_file,
	      "n %zu", child->n);
	CHECK("get-absent", !pmap_set_get(&s, 12, false), "created");
	pmap_set_free(&s);
}

static int count_line(void *ctx, const struct proc_map *m)
{
	(void)m;
	++*(int *)ctx;
	return 0;
}

static void *file_name(void *ctx, const struct proc_map *pm)
{
	(void)ctx;
	return strdup(pm->file);
}

static void test_proc(void)
{
	static const char text[] =
		"00400000-00401000 r-xp 00000000 08:01 12 /bin/x\n"
		"garbage\n"
		"00600000-00601000 rw-p 00000000 00:00 0\n";
	FILE *f = fmemopen((void *)text, sizeof(text) - 1, "r");
	const struct pmap_entry *e;
	struct pmap m = { .gen = 7 };
	int n = 0;

	CHECK("each", f && !proc_maps_each(f, count_line, &n) && n == 2, "%d lines", n);
	if (f)
		fclose(f);
	/* This function's own code is an executable file mapping. */
	CHECK("read-self", !pmap_read_proc(&m, getpid(), file_name, NULL) &&
	      (e = pmap_find(&m, (uintptr_t)test_proc)) && e->file &&
	      strstr(e->file, "test_procmaps") && m.gen == 7, "own code not found");
	n = 0;
	for (size_t i = 0; i < m.n; i++) {
		n += ((char *)m.v[i].file)[0] != '/';
		free(m.v[i].file);
	}
	CHECK("read-exec-files-only", !n, "%d mappings not of a file", n);
	CHECK("read-gone", pmap_read_proc(&m, 0x7fffffff, NULL, NULL) == -1 && m.n, "read");
	pmap_release(&m);
}

int main(void)
{
	test_overlap();
	test_set();
	test_proc();
	return failures != 0;
}
