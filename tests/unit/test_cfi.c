// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the CFI table builder (src/cfi.c) against the real libc.so.6
 * of each architecture (Debian's, host and cross packages), and against
 * hostile input.
 *
 *   test_cfi                 run the tests
 *   test_cfi dump FILE       print FILE's rows (tests/t_cfi.sh compares them
 *                            with binutils' readelf --debug-dump=frames-interp)
 *   test_cfi fuzz FILE       build a table from FILE; exit 0 unless it crashes
 */
#include <elf.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cfi.h"

static int failures, case_failures;
static char first_failure[512];

/* A failed check is logged; the case's PASS/FAIL line quotes the first. */
#define CHECK(cond, ...)                                                      \
	do {                                                                  \
		if (!(cond)) {                                                \
			char msg_[384];                                       \
			snprintf(msg_, sizeof(msg_), __VA_ARGS__);            \
			fprintf(stderr, "  line %d: %s: %s\n", __LINE__, #cond, msg_); \
			if (!case_failures++)                                 \
				snprintf(first_failure, sizeof(first_failure), \
					 "line %d: %s", __LINE__, msg_);      \
		}                                                             \
	} while (0)

static void run_case(const char *name, void (*fn)(const void *), const void *arg)
{
	case_failures = 0;
	fn(arg);
	if (case_failures) {
		failures++;
		printf("FAIL %s: %d checks failed, first %s\n", name, case_failures, first_failure);
	} else {
		printf("PASS %s\n", name);
	}
}

/* What every function's first instruction looks like on one architecture. */
struct arch_case {
	const char *name, *libc;
	unsigned int machine;
	int32_t entry_cfa;	/* CFA = SP + this at a function's entry */
	uint8_t entry_ra_rule;	/* on the stack (x86_64) or in the link register */
	int32_t entry_ra_off;
};

static const struct arch_case cases[] = {
	{ "libc-x86_64", "/lib/x86_64-linux-gnu/libc.so.6", EM_X86_64, 8, CFI_AT_CFA, -8 },
	{ "libc-arm64", "/usr/aarch64-linux-gnu/lib/libc.so.6", EM_AARCH64, 0, CFI_SAME, 0 },
	{ "libc-s390x", "/usr/s390x-linux-gnu/lib/libc.so.6", EM_S390, 160, CFI_SAME, 0 },
};

/* Address and size of a dynamic symbol, by libelf (independent of cfi.c). */
static int dynsym(const char *path, const char *want, uint64_t *addr, uint64_t *size)
{
	int fd = open(path, O_RDONLY), found = -1;
	Elf *elf;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	GElf_Sym sym;

	if (fd < 0)
		return -1;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	while (elf && found && (scn = elf_nextscn(elf, scn))) {
		Elf_Data *d;
		size_t i;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM)
			continue;
		d = elf_getdata(scn, NULL);
		for (i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			const char *name;

			if (!gelf_getsym(d, i, &sym) || !sym.st_value)
				continue;
			name = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (name && !strcmp(name, want)) {
				*addr = sym.st_value;
				*size = sym.st_size;
				found = 0;
				break;
			}
		}
	}
	elf_end(elf);
	close(fd);
	return found;
}

static void check_function(const struct arch_case *c, const struct cfi_table *t, const char *fn)
{
	const struct cfi_row *r;
	uint64_t addr, size, pc;

	if (dynsym(c->libc, fn, &addr, &size)) {
		CHECK(0, "%s: no symbol %s", c->libc, fn);
		return;
	}
	r = cfi_table_lookup(t, addr);
	CHECK(r && r->pc <= addr, "%s %s: no row at 0x%llx", c->libc, fn, (unsigned long long)addr);
	if (!r)
		return;
	CHECK(r->kind == CFI_NORMAL && r->cfa_base == CFI_BASE_SP && r->cfa_off == c->entry_cfa &&
	      r->ra_rule == c->entry_ra_rule && r->ra_off == c->entry_ra_off,
	      "%s %s entry: kind %u base %u cfa %d ra %u/%d", c->libc, fn, r->kind, r->cfa_base,
	      r->cfa_off, r->ra_rule, r->ra_off);
	/* Every instruction of the function is covered by rules, none a gap. */
	for (pc = addr; pc < addr + size; pc++) {
		r = cfi_table_lookup(t, pc);
		if (!r || r->kind == CFI_GAP) {
			CHECK(0, "%s %s: gap at 0x%llx", c->libc, fn, (unsigned long long)pc);
			break;
		}
	}
}

static void test_libc(const void *arg)
{
	const struct arch_case *c = arg;
	static const char *const fns[] = { "read", "clock_nanosleep", "poll", "epoll_wait",
					   "pthread_mutex_lock", "pthread_cond_wait", "nanosleep" };
	struct cfi_table t;
	char err[256] = "";
	size_t i, end_rows = 0;

	if (cfi_table_build(c->libc, -1, 0, &t, err, sizeof(err))) {
		CHECK(0, "%s: %s", c->libc, err);
		return;
	}
	CHECK(t.machine == c->machine, "%s: machine %u", c->libc, t.machine);
	/* Debian's libc has some 3,000 FDEs per architecture. */
	CHECK(t.stats.fdes > 2000 && t.n > t.stats.fdes, "%s: %zu FDEs, %zu rows", c->libc,
	      t.stats.fdes, t.n);
	CHECK(t.stats.bad_fdes == 0, "%s: %zu bad FDEs", c->libc, t.stats.bad_fdes);
	for (i = 1; i < t.n; i++)
		if (t.rows[i].pc <= t.rows[i - 1].pc) {
			CHECK(0, "%s: rows not sorted at %zu", c->libc, i);
			break;
		}
	for (i = 0; i < t.n; i++)
		end_rows += t.rows[i].kind == CFI_END;
	/* The thread start (clone) marks the outermost frame. */
	CHECK(end_rows > 0, "%s: no outermost-frame row", c->libc);
	for (i = 0; i < sizeof(fns) / sizeof(fns[0]); i++)
		check_function(c, &t, fns[i]);
	fprintf(stderr, "%s: %zu FDEs, %zu rows (%zu bytes), %zu expression rows, %zu end rows\n", c->libc,
	       t.stats.fdes, t.n, t.n * sizeof(*t.rows), t.stats.expr_rows, end_rows);
	cfi_table_free(&t);
}

/* Hostile or useless input: one error line, no crash, no table. */
static void test_bad_input(const void *unused)
{
	char path[] = "/tmp/test_cfi.XXXXXX", err[256];
	struct cfi_table t;
	unsigned char buf[4096];
	int fd = mkstemp(path), in;
	ssize_t n;

	CHECK(fd >= 0, "mkstemp");
	CHECK(cfi_table_build("/nonexistent/x", -1, 0, &t, err, sizeof(err)) == -1 &&
	      strstr(err, "No such file"), "missing file: %s", err);
	CHECK(write(fd, "hello", 5) == 5, "write");
	CHECK(cfi_table_build(path, -1, 0, &t, err, sizeof(err)) == -1 &&
	      !strcmp(err, "not an ELF file"), "text file: %s", err);
	/* libc's first 4 KiB: headers whose section table points past the end. */
	in = open(cases[0].libc, O_RDONLY);
	n = in >= 0 ? read(in, buf, sizeof(buf)) : -1;
	CHECK(n == (ssize_t)sizeof(buf), "read libc");
	CHECK(ftruncate(fd, 0) == 0 && pwrite(fd, buf, sizeof(buf), 0) == (ssize_t)sizeof(buf),
	      "write");
	CHECK(cfi_table_build(path, -1, 0, &t, err, sizeof(err)) == -1 && err[0],
	      "truncated ELF built a table");
	/* A row limit is an error, never a silently cut table. */
	CHECK(cfi_table_build(cases[0].libc, -1, 100, &t, err, sizeof(err)) == -1 &&
	      !strcmp(err, "more than 100 CFI rows"), "row limit: %s", err);
	if (in >= 0)
		close(in);
	close(fd);
	unlink(path);
	(void)unused;
}

static const char *const kind_names[] = { "normal", "end", "gap", "expr", "signal" };
static const char *const rule_names[] = { "same", "cfa", "undef" };

static int dump(const char *path)
{
	struct cfi_table t;
	char err[256];
	size_t i;

	if (cfi_table_build(path, -1, 0, &t, err, sizeof(err))) {
		fprintf(stderr, "%s: %s\n", path, err);
		return 1;
	}
	printf("# machine %u fdes %zu rows %zu bad %zu\n", t.machine, t.stats.fdes, t.n,
	       t.stats.bad_fdes);
	for (i = 0; i < t.n; i++) {
		const struct cfi_row *r = &t.rows[i];

		printf("%llx %s %s %d %s %d %s %d\n", (unsigned long long)r->pc, kind_names[r->kind],
		       r->cfa_base == CFI_BASE_SP ? "sp" : r->cfa_base == CFI_BASE_FP ? "fp" : "-",
		       r->cfa_off, rule_names[r->ra_rule], r->ra_off, rule_names[r->fp_rule],
		       r->fp_off);
	}
	cfi_table_free(&t);
	return 0;
}

int main(int argc, char **argv)
{
	struct cfi_table t;
	char err[256];
	size_t i;

	elf_version(EV_CURRENT);
	if (argc == 3 && !strcmp(argv[1], "dump"))
		return dump(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "fuzz")) {
		if (!cfi_table_build(argv[2], -1, 1u << 20, &t, err, sizeof(err)))
			cfi_table_free(&t);
		return 0;
	}
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		run_case(cases[i].name, test_libc, &cases[i]);
	run_case("bad-input", test_bad_input, NULL);
	return failures ? 1 : 0;
}
