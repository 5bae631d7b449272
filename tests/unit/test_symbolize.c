// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of src/symbols/symbolize.c: this PIE's own functions through its real
 * mappings, maps over time (fork, exec, exit, pid reuse, a mapping punched
 * into another), kallsyms (aliases, KASLR shift), build-id mismatch,
 * hostile files (truncated ELF, FIFO), and mangled names: C++, Rust legacy
 * and Rust v0 functions of this ELF.  Prints PASS/FAIL lines.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/build_id.h"
#include "check.h"
#include "symbols/symbolize.h"

static char self[4096];
static char dir[] = "/tmp/offcpu-test-sym.XXXXXX";

__attribute__((noinline, used)) int sym_test_marker(int x)
{
	return x * 3 + 1;
}

/* Functions of this ELF under mangled names, as g++ and rustc emit them. */
#define MANGLED(fn, name) \
	__attribute__((noinline, used)) int fn(int x) __asm__(name); \
	int fn(int x) { return x * 5 + 2; }
MANGLED(cxx_fn, "_ZN3app6Worker8wait_forERSt6vectorIiSaIiEEi")
MANGLED(rust_legacy_fn, "_ZN3std6thread5sleep17h5c1e0d2f3a4b6978E")
MANGLED(rust_v0_fn, "_RNvNtCs1234_7mycrate6module4wait")

/* Feed this process's mappings of its own executable as MMAP2 of PID. */
static int map_self(struct symbolizer *s, uint32_t pid, const char *as)
{
	FILE *f = fopen("/proc/self/maps", "r");
	unsigned long long lo, hi, off;
	char line[4096], path[4096];
	int n = 0;

	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx-%llx %*s %llx %*s %*s %4095s", &lo, &hi, &off, path) == 4 &&
		    !strcmp(path, self)) {
			sym_mmap(s, pid, lo, hi - lo, off, as);
			n++;
		}
	}
	if (f)
		fclose(f);
	return n;
}

static const char *at_marker(struct symbolizer *s, uint32_t pid)
{
	return sym_user(s, pid, (uint64_t)(uintptr_t)&sym_test_marker + 4);
}

static void test_self(void)
{
	struct symbolizer *s = sym_new(NULL, NULL);

	CHECK("self-mapped", map_self(s, 10, self) > 0, "no mapping of %s", self);
	CHECK("self-pie", !strcmp(at_marker(s, 10), "sym_test_marker"), "got %s", at_marker(s, 10));
	CHECK("other-pid-unknown", !strcmp(at_marker(s, 11), SYM_UNKNOWN), "got %s", at_marker(s, 11));
	sym_free(s);
}

/*
 * crti's _fini: unsized and, in .fini after .text, the file's last function
 * (libm's blocked in exit handlers): named, as perf names it.
 */
extern void _fini(void);

static void test_last_unsized(void)
{
	struct symbolizer *s = sym_new(NULL, NULL);
	const char *got;

	map_self(s, 13, self);
	got = sym_user(s, 13, (uint64_t)(uintptr_t)&_fini + 4);
	CHECK("last-unsized-symbol", !strcmp(got, "_fini"), "got %s", got);
	sym_free(s);
}

static void check_name(struct symbolizer *s, const char *test, int (*fn)(int),
		       const char *want)
{
	const char *got = sym_user(s, 12, (uint64_t)(uintptr_t)fn + 4);

	CHECK(test, !strcmp(got, want), "got %s, want %s", got, want);
}

static void test_demangle(void)
{
	struct symbolizer *s = sym_new(NULL, NULL);

	map_self(s, 12, self);
	check_name(s, "demangle-cxx", cxx_fn, "app::Worker::wait_for");
	check_name(s, "demangle-rust-legacy", rust_legacy_fn, "std::thread::sleep");
	check_name(s, "demangle-rust-v0", rust_v0_fn, "mycrate::module::wait");
	check_name(s, "demangle-plain", sym_test_marker, "sym_test_marker");
	sym_free(s);
	s = sym_new(NULL, NULL);
	sym_options(s, true, NULL);
	map_self(s, 12, self);
	check_name(s, "no-demangle", cxx_fn, "_ZN3app6Worker8wait_forERSt6vectorIiSaIiEEi");
	check_name(s, "no-demangle-rust", rust_v0_fn, "_RNvNtCs1234_7mycrate6module4wait");
	sym_free(s);
}

static void test_lifecycle(void)
{
	struct symbolizer *s = sym_new(NULL, NULL);

	map_self(s, 20, self);
	sym_comm(s, 20, 20, "parent", false);
	sym_fork(s, 21, 20, 21, 20);
	CHECK("fork-inherits-maps", !strcmp(at_marker(s, 21), "sym_test_marker"), "got %s", at_marker(s, 21));
	CHECK("fork-inherits-comm", !strcmp(sym_comm_of(s, 21, 21), "parent"), "got %s", sym_comm_of(s, 21, 21));
	sym_comm(s, 21, 21, "child", true);
	CHECK("exec-keeps-old-maps", !strcmp(at_marker(s, 21), "sym_test_marker"), "got %s", at_marker(s, 21));
	/* The new image's mapping over the same addresses replaces the old one. */
	sym_mmap(s, 21, (uint64_t)(uintptr_t)&sym_test_marker & ~0xfffull, 0x2000, 0, "/nonexistent/new");
	CHECK("exec-new-map-replaces", !strcmp(at_marker(s, 21), SYM_UNKNOWN), "got %s", at_marker(s, 21));
	CHECK("exec-keeps-parent", !strcmp(at_marker(s, 20), "sym_test_marker"), "got %s", at_marker(s, 20));
	CHECK("exec-comm", !strcmp(sym_comm_of(s, 21, 21), "child"), "got %s", sym_comm_of(s, 21, 21));
	sym_fork(s, 20, 20, 22, 20);	/* a thread */
	CHECK("thread-proc-comm", !strcmp(sym_proc_comm(s, 20, 22), "parent"), "got %s", sym_proc_comm(s, 20, 22));
	sym_exit(s, 21, 21);
	CHECK("exit-keeps-maps", !strcmp(at_marker(s, 20), "sym_test_marker"), "got %s", at_marker(s, 20));
	/* pid 21 reused by a fork of 20: the parent's maps, not the old ones. */
	sym_fork(s, 21, 20, 21, 20);
	CHECK("pid-reuse", !strcmp(at_marker(s, 21), "sym_test_marker"), "got %s", at_marker(s, 21));
	sym_free(s);
}

static void test_punch(void)
{
	struct symbolizer *s = sym_new(NULL, NULL);
	uint64_t a = (uint64_t)(uintptr_t)&sym_test_marker;
	uint64_t page = a & ~4095ull;

	map_self(s, 30, self);
	/* An anonymous page over the function's page, the rest stays. */
	sym_mmap(s, 30, page, 4096, 0, "//anon");
	CHECK("punch-hides", !strcmp(at_marker(s, 30), SYM_UNKNOWN), "got %s", at_marker(s, 30));
	CHECK("punch-keeps-rest", strcmp(sym_user(s, 30, (uint64_t)(uintptr_t)&test_self), SYM_UNKNOWN) ||
	      ((uint64_t)(uintptr_t)&test_self & ~4095ull) == page, "test_self unresolved");
	/* The file mapped again over the hole, at the right offset: resolves. */
	map_self(s, 30, self);
	CHECK("remap", !strcmp(at_marker(s, 30), "sym_test_marker"), "got %s", at_marker(s, 30));
	sym_free(s);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static void test_kallsyms(void)
{
	char path[256];
	struct symbolizer *s;

	snprintf(path, sizeof(path), "%s/kallsyms", dir);
	write_file(path, "ffffffff81000000 T _text\n"
		   "ffffffff81000000 T startup_64\n"
		   "ffffffff81001000 t __pfx_do_thing\n"
		   "ffffffff81001010 T do_thing\n"
		   "ffffffff81001010 W do_thing_alias\n"
		   "ffffffff81002000 T other\n"
		   "ffffffff81003000 D some_data\n"
		   "0000000000000000 T hidden\n"
		   "garbage line\n");
	s = sym_new(NULL, path);
	CHECK("kallsyms-count", sym_nr_kernel(s) == 4, "%zu symbols (aliases merged)", sym_nr_kernel(s));
	CHECK("kallsyms-lookup", !strcmp(sym_kernel(s, 0xffffffff81001020), "do_thing"),
	      "got %s", sym_kernel(s, 0xffffffff81001020));
	CHECK("kallsyms-below", !strcmp(sym_kernel(s, 0xffffffff80000000), SYM_UNKNOWN),
	      "got %s", sym_kernel(s, 0xffffffff80000000));
	/* Recorded with _text 0x1000000 higher (another boot, KASLR). */
	sym_kernel_text(s, 0xffffffff82000000);
	CHECK("kallsyms-kaslr", !strcmp(sym_kernel(s, 0xffffffff82001020), "do_thing"),
	      "got %s", sym_kernel(s, 0xffffffff82001020));
	sym_free(s);
	s = sym_new(NULL, "/nonexistent/kallsyms");
	CHECK("kallsyms-missing", !sym_nr_kernel(s) && !strcmp(sym_kernel(s, 1), SYM_UNKNOWN), "?");
	sym_free(s);
}

static void test_build_id(void)
{
	uint8_t id[BUILD_ID_MAX];
	int len = build_id_of_file(self, id);
	struct symbolizer *s;

	if (len <= 0) {
		printf("SKIP build-id: %s has no build-id\n", self);
		return;
	}
	s = sym_new(NULL, NULL);
	sym_expect_build_id(s, self, id, len);
	map_self(s, 40, self);
	CHECK("build-id-match", !strcmp(at_marker(s, 40), "sym_test_marker"), "got %s", at_marker(s, 40));
	sym_free(s);
	id[0] ^= 0xff;
	s = sym_new(NULL, NULL);
	sym_expect_build_id(s, self, id, len);
	map_self(s, 40, self);
	CHECK("build-id-mismatch", !strcmp(at_marker(s, 40), SYM_UNKNOWN), "got %s", at_marker(s, 40));
	sym_free(s);
}

/* A copy of this executable cut at N bytes, mapped as if it were us. */
static void test_truncated(size_t n)
{
	char path[256], name[64], buf[65536];
	int in = open(self, O_RDONLY), out;
	struct symbolizer *s;
	const char *got;
	size_t done = 0;
	ssize_t r;

	snprintf(path, sizeof(path), "%s/cut", dir);
	out = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	while (in >= 0 && out >= 0 && done < n &&
	       (r = read(in, buf, n - done < sizeof(buf) ? n - done : sizeof(buf))) > 0)
		done += write(out, buf, r) == r ? (size_t)r : n;
	close(in);
	close(out);
	s = sym_new(NULL, NULL);
	map_self(s, 50, path);
	snprintf(name, sizeof(name), "truncated-elf-%zu", n);
	/* No crash (ASan), and never a wrong name: the marker or unknown. */
	got = at_marker(s, 50);
	CHECK(name, got && (!strcmp(got, "sym_test_marker") || !strcmp(got, SYM_UNKNOWN)),
	      "got %s", got ? got : "NULL");
	sym_free(s);
}

static void test_fifo(void)
{
	char path[256];
	struct symbolizer *s = sym_new(NULL, NULL);

	snprintf(path, sizeof(path), "%s/fifo", dir);
	mkfifo(path, 0600);
	sym_mmap(s, 60, 0x400000, 0x1000, 0, path);
	/* Opening a FIFO for reading would block forever. */
	alarm(10);
	CHECK("fifo-no-hang", !strcmp(sym_user(s, 60, 0x400010), SYM_UNKNOWN), "resolved");
	alarm(0);
	sym_free(s);
}

static void test_symfs(void)
{
	char path[8192];
	struct symbolizer *s;

	snprintf(path, sizeof(path), "%s%s", dir, self);
	for (char *p = strchr(path + strlen(dir) + 1, '/'); p; p = strchr(p + 1, '/')) {
		*p = '\0';
		mkdir(path, 0700);
		*p = '/';
	}
	if (symlink(self, path)) {
		printf("SKIP symfs: cannot link %s\n", path);
		return;
	}
	s = sym_new(dir, NULL);
	map_self(s, 70, self);
	CHECK("symfs", !strcmp(at_marker(s, 70), "sym_test_marker"), "got %s", at_marker(s, 70));
	sym_free(s);
}

int main(void)
{
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char cmd[128];

	if (n <= 0 || !mkdtemp(dir))
		return 1;
	self[n] = '\0';
	test_self();
	test_demangle();
	test_last_unsized();
	test_lifecycle();
	test_punch();
	test_kallsyms();
	test_build_id();
	test_truncated(64);
	test_truncated(4096);
	test_truncated(100000);
	test_fifo();
	test_symfs();
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		return 1;
	return failures != 0;
}
