// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the CFI table builder (src/unwind/cfi.c) against the real libc.so.6
 * of each architecture (Debian's, host and cross packages), and against
 * hostile input.
 *
 *   test_cfi                 run the tests
 *   test_cfi dump FILE       print FILE's rows (tests/t_cfi.sh compares them
 *                            with binutils' readelf --debug-dump=frames-interp)
 *   test_cfi fuzz FILE       build a table from FILE; exit 0 unless it crashes
 *   test_cfi sizes FILE...   table size of each file and the total, and the time
 *                            to build them (bench/cfi_tables.sh)
 *   test_cfi unwind PID      stop each thread of PID (ptrace), unwind its user
 *                            stack with the tables and cfi_step, print one
 *                            line per thread: tid comm: functions... | how it ended
 *                            (x86_64; the user-space reference of the BPF unwinder)
 */
#include <elf.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <dirent.h>

#include "unwind/cfi.h"
#include "symbols/symbolize.h"

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

/* --- unwind: the whole algorithm on a live process, in user space --- */

#define MAX_MAPS	256
#define MAX_DEPTH	64

struct exec_map {
	uint64_t start, end, pgoff;
	uint64_t seg_offset, seg_vaddr;	/* the PT_LOAD holding the mapping */
	char path[256];
	struct cfi_table *table;	/* shared by a file's mappings; NULL: none */
};

/* The PT_LOAD segment whose file range holds OFFSET. */
static int load_segment(const char *path, uint64_t offset, uint64_t *seg_offset,
			uint64_t *seg_vaddr)
{
	int fd = open(path, O_RDONLY), rc = -1;
	Elf *elf = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
	size_t i, n;
	GElf_Phdr ph;

	if (elf && !elf_getphdrnum(elf, &n))
		for (i = 0; i < n && rc; i++)
			if (gelf_getphdr(elf, i, &ph) && ph.p_type == PT_LOAD &&
			    offset >= (ph.p_offset & ~(ph.p_align - 1)) &&
			    offset < ph.p_offset + ph.p_filesz) {
				*seg_offset = ph.p_offset;
				*seg_vaddr = ph.p_vaddr;
				rc = 0;
			}
	elf_end(elf);
	if (fd >= 0)
		close(fd);
	return rc;
}

static size_t read_maps(int pid, struct exec_map *maps, struct symbolizer *sym)
{
	char path[64], line[512], perms[8], file[256];
	unsigned long long start, end, pgoff;
	size_t n = 0, i;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "r");
	while (f && n < MAX_MAPS && fgets(line, sizeof(line), f)) {
		struct exec_map *m = &maps[n];
		char err[256];

		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %255s", &start, &end, perms, &pgoff,
			   file) != 5 || perms[2] != 'x' || file[0] != '/')
			continue;
		*m = (struct exec_map){ .start = start, .end = end, .pgoff = pgoff };
		snprintf(m->path, sizeof(m->path), "%s", file);
		sym_mmap(sym, pid, start, end - start, pgoff, file);
		if (load_segment(file, pgoff, &m->seg_offset, &m->seg_vaddr))
			continue;
		for (i = 0; i < n && !m->table; i++)
			if (!strcmp(maps[i].path, file))
				m->table = maps[i].table;
		if (!m->table) {
			m->table = calloc(1, sizeof(*m->table));
			if (m->table && cfi_table_build(file, -1, 0, m->table, err, sizeof(err))) {
				fprintf(stderr, "%s: %s\n", file, err);
				free(m->table);
				m->table = NULL;
			}
		}
		n++;
	}
	if (f)
		fclose(f);
	return n;
}

static int read_word(void *ctx, uint64_t addr, uint64_t *val)
{
	int pid = *(int *)ctx;
	struct iovec local = { val, 8 }, remote = { (void *)(uintptr_t)addr, 8 };

	return process_vm_readv(pid, &local, 1, &remote, 1, 0) == 8 ? 0 : -1;
}

static const char *const step_names[] = { "ok", "end", "gap", "unsupported", "unreadable" };

#if defined(__x86_64__)
static void unwind_thread(int pid, int tid, struct exec_map *maps, size_t nr_maps,
			  struct symbolizer *sym)
{
	struct user_regs_struct regs;
	struct cfi_frame f;
	enum cfi_step_result res = CFI_STEP_OK;
	const char *how = "depth";
	char comm[64] = "?", path[64];
	int depth, status;
	FILE *cf;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", pid, tid);
	cf = fopen(path, "r");
	if (cf) {
		if (fgets(comm, sizeof(comm), cf))
			comm[strcspn(comm, "\n")] = 0;
		fclose(cf);
	}
	if (ptrace(PTRACE_SEIZE, tid, 0, 0) || ptrace(PTRACE_INTERRUPT, tid, 0, 0) ||
	    waitpid(tid, &status, __WALL) != tid || ptrace(PTRACE_GETREGS, tid, 0, &regs)) {
		printf("%d %s: | cannot stop the thread\n", tid, comm);
		ptrace(PTRACE_DETACH, tid, 0, 0);
		return;
	}
	f = (struct cfi_frame){ .pc = regs.rip, .sp = regs.rsp, .fp = regs.rbp };
	printf("%d %s:", tid, comm);
	for (depth = 0; depth < MAX_DEPTH; depth++) {
		uint64_t pc = f.pc - (depth ? 1 : 0), vaddr;
		const struct exec_map *m = NULL;
		size_t i;

		for (i = 0; i < nr_maps && !m; i++)
			if (pc >= maps[i].start && pc < maps[i].end)
				m = &maps[i];
		printf(" %s", sym_user(sym, pid, pc));
		if (!m || !m->table) {
			how = "no table";
			break;
		}
		vaddr = pc - m->start + m->pgoff - m->seg_offset + m->seg_vaddr;
		f.pc = vaddr + (depth ? 1 : 0);
		res = cfi_step(m->table->machine, cfi_table_lookup(m->table, vaddr), !depth, &f,
			       read_word, &pid);
		if (res != CFI_STEP_OK) {
			how = step_names[res];
			break;
		}
	}
	printf(" | %s\n", how);
	ptrace(PTRACE_DETACH, tid, 0, 0);
}
#endif

static int unwind(int pid)
{
#if defined(__x86_64__)
	static struct exec_map maps[MAX_MAPS];
	struct symbolizer *sym = sym_new(NULL, NULL);
	size_t nr_maps = read_maps(pid, maps, sym), i, j;
	char path[64];
	struct dirent *d;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	while (dir && (d = readdir(dir)))
		if (d->d_name[0] != '.')
			unwind_thread(pid, atoi(d->d_name), maps, nr_maps, sym);
	if (dir)
		closedir(dir);
	for (i = 0; i < nr_maps; i++) {
		struct cfi_table *t = maps[i].table;

		if (!t)
			continue;
		for (j = i; j < nr_maps; j++)
			if (maps[j].table == t)
				maps[j].table = NULL;
		cfi_table_free(t);
		free(t);
	}
	sym_free(sym);
	return dir ? 0 : 1;
#else
	fprintf(stderr, "test_cfi unwind: x86_64 only (PTRACE_GETREGS)\n");
	(void)pid;
	return 1;
#endif
}

static int sizes(int argc, char **argv)
{
	size_t rows = 0, fdes = 0, expr = 0, files = 0, failed = 0;
	struct timespec t0, t1;
	struct cfi_table t;
	char err[256];
	int i;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < argc; i++) {
		if (cfi_table_build(argv[i], -1, 0, &t, err, sizeof(err))) {
			printf("- - - %s: %s\n", argv[i], err);
			failed++;
			continue;
		}
		printf("%zu %zu %zu %s\n", t.stats.fdes, t.n, t.stats.expr_rows, argv[i]);
		files++;
		rows += t.n;
		fdes += t.stats.fdes;
		expr += t.stats.expr_rows;
		cfi_table_free(&t);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("total files %zu failed %zu fdes %zu rows %zu expr %zu row_bytes %zu ms %.0f\n", files,
	       failed, fdes, rows, expr, sizeof(struct cfi_row),
	       (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6);
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
	if (argc >= 2 && !strcmp(argv[1], "sizes"))
		return sizes(argc - 2, argv + 2);
	if (argc == 3 && !strcmp(argv[1], "unwind"))
		return unwind(atoi(argv[2]));
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
