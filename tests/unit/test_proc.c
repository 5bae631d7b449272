// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the /proc parsers of src/lib/procfs.c: every line of this
 * process's real maps (its executable, [vdso], anonymous maps, a file whose
 * name has spaces, the same file deleted), real status, and malformed lines.
 * Prints PASS/FAIL lines.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "check.h"
#include "lib/procfs.h"
#include "record/synthesis.h"


/* The line of /proc/self/maps that contains ADDR ("" if none). */
static int maps_line_of(uintptr_t addr, char *line, size_t size)
{
	FILE *f = fopen("/proc/self/maps", "r");
	unsigned long long lo, hi;
	int found = -1;

	while (f && fgets(line, size, f))
		if (sscanf(line, "%llx-%llx", &lo, &hi) == 2 && addr >= lo && addr < hi) {
			found = 0;
			break;
		}
	if (f)
		fclose(f);
	return found;
}

static void test_self_maps(void)
{
	char line[PROC_MAPS_LINE], self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	static struct proc_map m;
	int lines = 0, bad = 0, vdso = 0, anon = 0;
	FILE *f;

	f = fopen("/proc/self/maps", "r");
	while (f && fgets(line, sizeof(line), f)) {
		lines++;
		if (proc_parse_maps_line(line, &m)) {
			bad++;
			printf("# unparsed: %s", line);
			continue;
		}
		if (!strcmp(m.file, "[vdso]"))
			vdso = m.prot == 5;
		if (!strcmp(m.file, "//anon") && m.ino == 0 && m.maj == 0)
			anon++;
	}
	if (f)
		fclose(f);
	CHECK("maps-self-all-lines", lines > 5 && !bad, "%d of %d lines rejected", bad, lines);
	CHECK("maps-vdso", vdso, "no r-xp [vdso] line");
	CHECK("maps-anon", anon > 0, "no anonymous mapping named //anon");

	self[n > 0 ? n : 0] = '\0';
	m.file[0] = '\0';
	if (!maps_line_of((uintptr_t)&test_self_maps, line, sizeof(line)))
		proc_parse_maps_line(line, &m);
	CHECK("maps-own-text", !strcmp(m.file, self) && m.prot == 5 && m.ino &&
	      m.start <= (uintptr_t)&test_self_maps && (uintptr_t)&test_self_maps < m.end,
	      "file '%s' prot %u in %s", m.file, m.prot, line);
}

/* A real mapping of a file named with spaces, then the same file deleted. */
static void test_spaces_deleted(void)
{
	char dir[] = "/tmp/offcpu-test-proc.XXXXXX", path[128], want[160], line[PROC_MAPS_LINE];
	static struct proc_map m;
	void *p = MAP_FAILED;
	int fd;

	if (!mkdtemp(dir)) {
		CHECK("maps-spaces", 0, "mkdtemp failed");
		return;
	}
	snprintf(path, sizeof(path), "%s/a file  with spaces ", dir);
	fd = open(path, O_RDWR | O_CREAT, 0600);
	if (fd >= 0 && !ftruncate(fd, 4096))
		p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
	if (fd >= 0)
		close(fd);
	m.file[0] = '\0';
	if (p != MAP_FAILED && !maps_line_of((uintptr_t)p, line, sizeof(line)))
		proc_parse_maps_line(line, &m);
	CHECK("maps-spaces", !strcmp(m.file, path) && m.prot == 1 && m.start == (uintptr_t)p,
	      "got '%s' prot %u, want '%s'", m.file, m.prot, path);

	unlink(path);
	snprintf(want, sizeof(want), "%s (deleted)", path);
	m.file[0] = '\0';
	if (p != MAP_FAILED && !maps_line_of((uintptr_t)p, line, sizeof(line)))
		proc_parse_maps_line(line, &m);
	CHECK("maps-deleted", !strcmp(m.file, want), "got '%s', want '%s'", m.file, want);
	if (p != MAP_FAILED)
		munmap(p, 4096);
	rmdir(dir);
}

static int emitted;
static char emitted_name[4096];

static int on_record(void *ctx, const struct perf_event_header *rec, uint64_t time)
{
	const char *name = (const char *)rec + 72;	/* MMAP2's filename */

	(void)ctx;
	(void)time;
	if (rec->type == PERF_RECORD_MMAP2)
		snprintf(emitted_name, sizeof(emitted_name), "%s", name);
	emitted++;
	return 0;
}

static void test_bad_lines(void)
{
	static const char *const bad[] = {
		"", "\n", "garbage\n", "1000-2000\n", "1000-2000 r-xp\n",
		"1000-2000 r-xp 0 08:01\n",		/* no inode */
		"zz-2000 r-xp 0 08:01 5 /x\n",
		"1000-2000 r-xp 0 0801 5 /x\n",		/* no maj:min */
	};
	static struct proc_map m;
	int rejected = 0;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		rejected += proc_parse_maps_line(bad[i], &m) == -1;
	CHECK("maps-bad-lines-rejected", rejected == sizeof(bad) / sizeof(bad[0]),
	      "%d of %zu rejected", rejected, sizeof(bad) / sizeof(bad[0]));

	/* Short permissions: never read past them. */
	CHECK("maps-short-perms", !proc_parse_maps_line("1000-2000 r 0 08:01 5 /x\n", &m) &&
	      m.prot == 1, "prot %u", m.prot);
	CHECK("maps-fields", !proc_parse_maps_line("7f00-7f80 r-xp 0001a000 fd:02 123456  /lib/x.so\n", &m) &&
	      m.start == 0x7f00 && m.end == 0x7f80 && m.pgoff == 0x1a000 && m.maj == 0xfd &&
	      m.min == 2 && m.ino == 123456 && !strcmp(m.file, "/lib/x.so"),
	      "got %llx-%llx %llx %x:%x %llu '%s'", (unsigned long long)m.start,
	      (unsigned long long)m.end, (unsigned long long)m.pgoff, m.maj, m.min,
	      (unsigned long long)m.ino, m.file);

	emitted = 0;
	proc_maps_line_emit(1, 7, "1000-2000 r--p 0 08:01 5 /data\n", on_record, NULL);
	proc_maps_line_emit(1, 7, "bad\n", on_record, NULL);
	CHECK("maps-emit-skips", emitted == 0, "%d records", emitted);
	proc_maps_line_emit(1, 7, "1000-2000 r-xp 0 00:00 0 \n", on_record, NULL);
	CHECK("maps-emit-anon", emitted == 1 && !strcmp(emitted_name, "//anon"),
	      "%d records, name '%s'", emitted, emitted_name);
}

static void test_long_name(void)
{
	static char line[PROC_MAPS_LINE];
	static struct proc_map m;
	int n = snprintf(line, sizeof(line), "1000-2000 r-xp 0 08:01 5 /");

	memset(line + n, 'a', sizeof(line) - n - 2);
	line[sizeof(line) - 2] = '\n';
	emitted = 0;
	CHECK("maps-long-name", !proc_parse_maps_line(line, &m) && strlen(m.file) == 4095 &&
	      !proc_maps_line_emit(1, 7, line, on_record, NULL) && emitted == 1 &&
	      strlen(emitted_name) == 4095, "name of %zu bytes", strlen(m.file));
}

static void *thread_main(void *arg)
{
	*(uint32_t *)arg = proc_tgid(syscall(SYS_gettid));
	return NULL;
}

static void test_status(void)
{
	char buf[4096];
	uint32_t tgid = 0, ppid = 0, v = 0, from_thread = 0;
	FILE *f = fopen("/proc/self/status", "r");
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
	pthread_t t;

	if (f)
		fclose(f);
	buf[n] = '\0';
	CHECK("status-self", !proc_parse_status(buf, "Tgid", &tgid) &&
	      !proc_parse_status(buf, "PPid", &ppid) && tgid == (uint32_t)getpid() &&
	      ppid == (uint32_t)getppid(), "Tgid %u PPid %u", tgid, ppid);
	if (!pthread_create(&t, NULL, thread_main, &from_thread))
		pthread_join(t, NULL);
	CHECK("status-thread-tgid", from_thread == (uint32_t)getpid(), "%u", from_thread);
	CHECK("status-gone", proc_tgid(0x7ffffff0) == 0, "non-zero");

	CHECK("status-tab", !proc_parse_status("Name:\tx\nTgid:\t\t42\n", "Tgid", &v) && v == 42,
	      "got %u", v);
	CHECK("status-not-across-lines", proc_parse_status("Tgid:\n5\n", "Tgid", &v) == -1, "accepted");
	CHECK("status-prefix", proc_parse_status("TgidX: 5\nNTgid: 6\n", "Tgid", &v) == -1,
	      "accepted");
	CHECK("status-no-number", proc_parse_status("Tgid: -5\nTgid:\n", "Tgid", &v) == -1,
	      "accepted");
	CHECK("status-empty", proc_parse_status("", "Tgid", &v) == -1, "accepted");
}

static void test_misc(void)
{
	char sym[PROC_SYM_MAX], comm[32] = "worker 1\nrest";
	static char line[512];
	uint64_t a = 0;
	char type = 0;

	CHECK("kallsyms-line", !proc_parse_kallsyms_line("ffffffff81000000 T _text\n", &a, &type, sym) &&
	      a == 0xffffffff81000000ull && type == 'T' && !strcmp(sym, "_text"), "%llx %c %s",
	      (unsigned long long)a, type, sym);
	CHECK("kallsyms-bad", proc_parse_kallsyms_line("_text\n", &a, NULL, sym) == -1 &&
	      proc_parse_kallsyms_line("", &a, NULL, sym) == -1, "accepted");
	memset(line, 'x', sizeof(line) - 1);
	memcpy(line, "1 t ", 4);
	CHECK("kallsyms-long-name", !proc_parse_kallsyms_line(line, &a, NULL, sym) &&
	      strlen(sym) == PROC_SYM_MAX - 1, "%zu", strlen(sym));
	proc_parse_comm(comm);
	CHECK("comm", !strcmp(comm, "worker 1"), "'%s'", comm);
	CHECK("ids", proc_parse_id("1234") == 1234 && proc_parse_id("self") == 0 &&
	      proc_parse_id(".") == 0, "wrong");
}

int main(void)
{
	test_self_maps();
	test_spaces_deleted();
	test_bad_lines();
	test_long_name();
	test_status();
	test_misc();
	return failures != 0;
}
