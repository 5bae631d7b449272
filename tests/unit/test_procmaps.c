// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of src/lib/procmaps.c, the process-map model and the one
 * /proc/PID/maps reader: mappings hiding what they overlap (split with the
 * file offset carried), fork copies and exit keeps, this process's own
 * maps read back, a zombie's empty maps leaving the last read, and the
 * paths a live process's mapped files are reached by.  Prints PASS/FAIL lines.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
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

/* One pmap_add, then (NAME set) a check that the shape is WANT. */
struct step {
	uint64_t start, end, pgoff;
	void *file;
	const char *name, *want;
};

static void add_steps(struct pmap *m, const struct step *st, size_t n)
{
	char got[256];

	for (size_t i = 0; i < n; i++) {
		pmap_add(m, st[i].start, st[i].end, st[i].pgoff, st[i].file);
		if (!st[i].name)
			continue;
		shape(m, got, sizeof(got));
		CHECK(st[i].name, !strcmp(got, st[i].want), "%s", got);
	}
}

static void test_overlap(void)
{
	static const struct step steps[] = {
		{ 0x1000, 0x5000, 0, &a_file, NULL, NULL },
		{ 0x8000, 0x9000, 0x3000, &a_file, NULL, NULL },
		/* Inside the first: it splits around the new one. */
		{ 0x2000, 0x3000, 0x10000, &b_file, "split",
		  "1000-2000@0:a 2000-3000@10000:b 3000-5000@2000:a 8000-9000@3000:a " },
		/* Over the tail of one and the head of the next. */
		{ 0x4000, 0x8800, 0, NULL, "punch",
		  "1000-2000@0:a 2000-3000@10000:b 3000-4000@2000:a 4000-8800@0:- 8800-9000@3800:a " },
	};
	struct pmap m = { 0 };

	add_steps(&m, steps, sizeof(steps) / sizeof(steps[0]));
	CHECK("find", pmap_find(&m, 0x2fff) && pmap_find(&m, 0x2fff)->file == &b_file &&
	      !pmap_find(&m, 0x9000) && !pmap_find(&m, 0xfff), "wrong mapping");
	CHECK("mmap-range-kept", pmap_find(&m, 0x3000)->mmap_start == 0x1000 &&
	      pmap_find(&m, 0x3000)->mmap_end == 0x5000, "the added range was lost");
	CHECK("empty-refused", pmap_add(&m, 0x5000, 0x5000, 0, NULL) == -1 && m.n == 5, "added");
	pmap_release(&m);
}

/* In order, as a maps file lists them (each appended), then out of order. */
static void test_in_order(void)
{
	static const struct step steps[] = {
		{ 0x1000, 0x2000, 0, &a_file, NULL, NULL },
		{ 0x2000, 0x3000, 0x1000, &b_file, NULL, NULL },
		{ 0x5000, 0x6000, 0, &a_file, "in-order",
		  "1000-2000@0:a 2000-3000@1000:b 5000-6000@0:a " },
		{ 0x3000, 0x4000, 0, NULL, "below-last",
		  "1000-2000@0:a 2000-3000@1000:b 3000-4000@0:- 5000-6000@0:a " },
		/* Over the last one's tail: not appended as it stands, it cuts. */
		{ 0x5800, 0x7000, 0, &b_file, "over-last",
		  "1000-2000@0:a 2000-3000@1000:b 3000-4000@0:- 5000-5800@0:a 5800-7000@0:b " },
	};
	struct pmap m = { 0 };

	add_steps(&m, steps, sizeof(steps) / sizeof(steps[0]));
	pmap_release(&m);
}

/* Copies share one array; a change to any holder leaves the others as they were. */
static void test_copy_shares(void)
{
	struct pmap a = { 0 }, b = { 0 }, c = { 0 };
	char before[256], got[256];

	pmap_add(&a, 0x1000, 0x2000, 0, &a_file);
	pmap_add(&a, 0x3000, 0x5000, 0x10, &a_file);
	shape(&a, before, sizeof(before));
	pmap_copy(&b, &a);
	pmap_copy(&c, &a);
	CHECK("copy-shares", b.v == a.v && c.v == a.v && b.n == 2, "copied: %p %p", (void *)b.v,
	      (void *)a.v);
	pmap_copy(&b, &a);	/* again: still one holder more, not two */
	pmap_add(&b, 0x3800, 0x4000, 0, &b_file);
	shape(&a, got, sizeof(got));
	CHECK("copy-change-apart", !strcmp(got, before) && b.n == 4 && b.v != a.v, "a: %s", got);
	pmap_add(&a, 0x6000, 0x7000, 0, &b_file);
	shape(&c, got, sizeof(got));
	CHECK("copy-holder-apart", !strcmp(got, before), "c: %s", got);
	pmap_reset(&c);
	pmap_add(&c, 0x1000, 0x1800, 0, &b_file);
	CHECK("copy-reset-apart", a.n == 3 && a.v[0].end == 0x2000 && c.n == 1, "a changed");
	pmap_copy(&c, &b);	/* c's own array freed, b's shared */
	pmap_release(&b);
	CHECK("copy-outlives", c.n == 4 && c.v[2].file == &b_file, "n %zu", c.n);
	pmap_release(&a);
	pmap_release(&c);
}

static void test_set(void)
{
	struct pmap_set s = { 0 };
	struct pmap *parent = pmap_set_get(&s, 10, true), *child;

	pmap_add(parent, 0x1000, 0x2000, 0, &a_file);
	pmap_set_fork(&s, 11, 10);
	child = pmap_set_get(&s, 11, false);
	CHECK("fork-copies", child && child->n == 1 && child->v[0].file == &a_file, "no copy");
	/* A live child's maps (from /proc) stay; an exited pid's are replaced. */
	pmap_add(child, 0x3000, 0x4000, 0, &b_file);
	CHECK("fork-child-apart", parent->n == 1, "the child's mapping reached the parent");
	pmap_set_fork(&s, 11, 10);
	CHECK("fork-keeps-live", child->n == 2, "replaced");
	pmap_set_exit(&s, 11);
	CHECK("exit-keeps", child->dead && child->n == 2, "dropped");
	pmap_set_fork(&s, 11, 10);
	CHECK("fork-after-exit", !child->dead && child->n == 1 && child->v[0].file == &a_file,
	      "n %zu", child->n);
	CHECK("get-absent", !pmap_set_get(&s, 12, false), "created");
	pmap_set_drop(&s, 11);
	pmap_set_drop(&s, 12);	/* absent: nothing to do */
	CHECK("drop", !pmap_set_get(&s, 11, false) && pmap_set_get(&s, 10, false) &&
	      s.by_pid.n == 1, "%zu pids", (size_t)s.by_pid.n);
	pmap_set_free(&s);
}

static void test_file_path(void)
{
	char buf[64];

	CHECK("path-map-files", !pmap_file_path(7, 0x1000, 0x3000, "/x", 0, buf, sizeof(buf)) &&
	      !strcmp(buf, "/proc/7/map_files/1000-3000"), "%s", buf);
	CHECK("path-root", !pmap_file_path(7, 0x1000, 0x3000, "/x", 1, buf, sizeof(buf)) &&
	      !strcmp(buf, "/proc/7/root/x"), "%s", buf);
	CHECK("path-end", pmap_file_path(7, 0x1000, 0x3000, "/x", 2, buf, sizeof(buf)) == -1 &&
	      pmap_file_path(0, 0x1000, 0x3000, "/x", 0, buf, sizeof(buf)) == -1 &&
	      pmap_file_path((uint32_t)-1, 0x1000, 0x3000, "/x", 0, buf, sizeof(buf)) == -1,
	      "a path for no pid or past the last");
	CHECK("path-too-long", pmap_file_path(7, 0, 1, "/x", 1, buf, 10) == -1, "cut path given");
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

/*
 * An exited process not yet reaped lists no maps: those read before are
 * kept (the unwinder's copies queued behind the ring still need them).
 */
static void test_zombie(void)
{
	struct pmap m = { 0 };
	size_t before;
	siginfo_t si;
	pid_t pid = fork();

	if (!pid) {
		pause();
		_exit(0);
	}
	CHECK("read-child", pid > 0 && !pmap_read_proc(&m, pid, NULL, NULL) && m.n, "no maps");
	before = m.n;
	kill(pid, SIGKILL);
	waitid(P_PID, pid, &si, WEXITED | WNOWAIT);
	CHECK("read-zombie-kept", pmap_read_proc(&m, pid, NULL, NULL) == -1 && m.n == before,
	      "%zu mappings, %zu before", m.n, before);
	waitpid(pid, NULL, 0);
	pmap_release(&m);
}

int main(void)
{
	test_overlap();
	test_copy_shares();
	test_set();
	test_in_order();
	test_file_path();
	test_proc();
	test_zombie();
	return failures != 0;
}
