// SPDX-License-Identifier: GPL-2.0
/*
 * The ARM EHABI decoder (src/unwind/ehabi.c): each class of unwinding
 * instruction by hand, tables of every entry kind from synthetic sections,
 * hostile tables, and Debian's armhf libc.so.6.
 *
 *   test_ehabi               run the tests
 *   test_ehabi dump FILE     print FILE's rows, one a line (t_ehabi.sh
 *                            compares them with readelf -u)
 *   test_ehabi unwind DIR NAME
 *                            unwind DIR/NAME.snap, a snapshot of a blocked
 *                            armhf thread (tests/workload/ehabi_snap.c), with
 *                            the tables of the files DIR/maps lists, through
 *                            unwind_stack's row callback; print one line per
 *                            frame (its function) and one with how it ended
 */
#include <elf.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "lib/procfs.h"
#include "unwind/ehabi.h"
#include "unwind/unwind.h"

#define LIBC_ARMHF "/usr/arm-linux-gnueabihf/lib/libc.so.6"

static bool row_is(const struct cfi_row *r, int kind, int base, int cfa, int ra_rule, int ra,
		   int fp_rule, int fp)
{
	if (r->kind != kind)
		return false;
	if (kind != CFI_NORMAL)
		return true;
	return r->cfa_base == base && r->cfa_off == cfa && r->ra_rule == ra_rule &&
	       r->ra_off == ra && r->fp_rule == fp_rule && r->fp_off == fp;
}

struct decode_case {
	const char *name;
	uint8_t ops[8];
	size_t n;
	int kind, base, cfa, ra_rule, ra, fp_rule, fp;
};

enum { N = CFI_NORMAL, SP = CFI_BASE_SP, FP = CFI_BASE_FP, AT = CFI_AT_CFA, SAME = CFI_SAME };

static const struct decode_case decode_cases[] = {
	/* A leaf: nothing pushed, the return address still in lr. */
	{ "leaf", { 0xb0 }, 1, N, SP, 0, SAME, 0, SAME, 0 },
	{ "empty", { 0 }, 0, N, SP, 0, SAME, 0, SAME, 0 },
	/* pop {r4, r14} */
	{ "pop-r4-r14", { 0xa8, 0xb0, 0xb0 }, 3, N, SP, 8, AT, -4, SAME, 0 },
	/* vsp += 12; pop {r4-r11, r14}: r7 at 12 + 12 */
	{ "add-pop-r4-r11-r14", { 0x02, 0xaf, 0xb0 }, 3, N, SP, 48, AT, -4, AT, -24 },
	/* pop {r7, r14} by mask (1000 0100 0000 1000) */
	{ "pop-mask-r7-r14", { 0x84, 0x08, 0xb0 }, 3, N, SP, 8, AT, -4, AT, -8 },
	/* vsp = r7; pop {r7, r14}: a Thumb-2 frame-pointer function */
	{ "vsp-r7", { 0x97, 0x84, 0x08, 0xb0 }, 4, N, FP, 8, AT, -4, AT, -8 },
	/* vsp -= 8 */
	{ "sub", { 0x41 }, 1, N, SP, -8, SAME, 0, SAME, 0 },
	/* vsp += 0x204 + (1 << 2) */
	{ "add-uleb", { 0xb2, 0x01 }, 2, N, SP, 0x208, SAME, 0, SAME, 0 },
	/* vpush {d8-d12} (5 registers), then pop {r4, r14} */
	{ "vfp-vpush", { 0xc9, 0x84, 0xa8 }, 3, N, SP, 48, AT, -4, SAME, 0 },
	/* vpush {d8-d9}; FSTMFDX d8-d9 (8 * 2 + 4); VFP d16-d16 by VPUSH */
	{ "vfp-other", { 0xd1, 0xb9, 0xc8, 0x00 }, 4, N, SP, 16 + 20 + 8, SAME, 0, SAME, 0 },
	/* FSTMFDX d0-d1 (0xb3 0x01) */
	{ "vfp-fstmfdx", { 0xb3, 0x01 }, 2, N, SP, 20, SAME, 0, SAME, 0 },
	/* pop {r3} by mask, then pop {r14} */
	{ "pop-r0-r3", { 0xb1, 0x08, 0x84, 0x00 }, 4, N, SP, 8, AT, -4, SAME, 0 },
	/* pop {r15}: the return address is the popped pc */
	{ "pop-pc", { 0x88, 0x00 }, 2, N, SP, 4, AT, -4, SAME, 0 },
	/* pop {r14, r15}: pc wins over lr */
	{ "pop-lr-pc", { 0x8c, 0x00 }, 2, N, SP, 8, AT, -4, SAME, 0 },
	/* pop {r4, r14}, implicit finish at the end of the bytes */
	{ "no-finish", { 0xa8 }, 1, N, SP, 8, AT, -4, SAME, 0 },
	/* Cuts: what one row cannot express. */
	{ "refuse", { 0x80, 0x00 }, 2, CFI_GAP, 0, 0, 0, 0, 0, 0 },
	{ "pop-sp", { 0x82, 0x00 }, 2, CFI_EXPR, 0, 0, 0, 0, 0, 0 },
	{ "pop-then-vsp-r7", { 0xa8, 0x97 }, 2, CFI_EXPR, 0, 0, 0, 0, 0, 0 },
	{ "vsp-r11", { 0x9b }, 1, CFI_EXPR, 0, 0, 0, 0, 0, 0 },
	{ "reserved-9d", { 0x9d }, 1, CFI_EXPR, 0, 0, 0, 0, 0, 0 },
	{ "wmmx", { 0xc0 }, 1, CFI_EXPR, 0, 0, 0, 0, 0, 0 },
	{ "spare-b4", { 0xb4 }, 1, CFI_EXPR, 0, 0, 0, 0, 0, 0 },
	{ "spare-b1-0", { 0xb1, 0x00 }, 2, CFI_EXPR, 0, 0, 0, 0, 0, 0 },
	{ "spare-b1-10", { 0xb1, 0x10 }, 2, CFI_EXPR, 0, 0, 0, 0, 0, 0 },
	{ "truncated", { 0x84 }, 1, CFI_EXPR, 0, 0, 0, 0, 0, 0 },
	{ "uleb-truncated", { 0xb2, 0x80 }, 2, CFI_EXPR, 0, 0, 0, 0, 0, 0 },
	{ "spare-ff", { 0xff }, 1, CFI_EXPR, 0, 0, 0, 0, 0, 0 },
};

static void test_decode(void)
{
	for (size_t i = 0; i < sizeof(decode_cases) / sizeof(decode_cases[0]); i++) {
		const struct decode_case *c = &decode_cases[i];
		struct cfi_row row = { .pc = 0x1234 };
		char name[64];

		ehabi_decode(c->ops, c->n, &row);
		snprintf(name, sizeof(name), "decode-%s", c->name);
		CHECK(name, row.pc == 0x1234 && row_is(&row, c->kind, c->base, c->cfa, c->ra_rule,
						       c->ra, c->fp_rule, c->fp),
		      "kind %u base %u cfa %d ra %u/%d fp %u/%d", row.kind, row.cfa_base, row.cfa_off,
		      row.ra_rule, row.ra_off, row.fp_rule, row.fp_off);
	}
}

/* ---- tables from synthetic sections ---- */

#define EXIDX_ADDR	0x10000u
#define EXTAB_ADDR	0x20000u

static void put(uint8_t *p, uint32_t w)
{
	p[0] = w;
	p[1] = w >> 8;
	p[2] = w >> 16;
	p[3] = w >> 24;
}

static uint32_t prel31_to(uint64_t from, uint64_t to)
{
	return (uint32_t)(to - from) & 0x7fffffffu;
}

/* Entry I of EXIDX: the function at FN, then WORD (or a prel31 to EXTAB + OFF if WORD is 0). */
static void entry(uint8_t *exidx, int i, uint64_t fn, uint32_t word, uint32_t extab_off)
{
	uint64_t at = EXIDX_ADDR + 8 * i;

	put(exidx + 8 * i, prel31_to(at, fn));
	put(exidx + 8 * i + 4, word ? word : prel31_to(at + 4, EXTAB_ADDR + extab_off));
}

static void test_tables(void)
{
	uint8_t exidx[8 * 7], extab[32];
	struct ehabi_section x = { exidx, EXIDX_ADDR, sizeof(exidx) };
	struct ehabi_section e = { extab, EXTAB_ADDR, sizeof(extab) };
	struct cfi_table t;
	char err[128];
	int rc;

	/* extab 0: model 1 (lu16), one more word: vsp += 8; pop {r4, r14}; finish. */
	put(extab + 0, 0x810101a8);		/* 0x81: model 1; 1 word; ops 01 a8 */
	put(extab + 4, 0xb0b0b0b0);
	/* extab 8: generic model, GCC's layout: personality, count 0, 3 ops: vsp = r7; pop {r7, r14}. */
	put(extab + 8, prel31_to(EXTAB_ADDR + 8, 0x3000));
	put(extab + 12, 0x00978408);
	/* extab 16: reserved model 3. */
	put(extab + 16, 0x83000000);
	/* extab 20: model 2 claiming 200 more words past the section. */
	put(extab + 20, 0x82c8b0b0);
	entry(exidx, 0, 0x1000, 0x80a8b0b0, 0);	/* inline su16: pop {r4, r14} */
	entry(exidx, 1, 0x1100, 0x1, 0);		/* CANTUNWIND */
	entry(exidx, 2, 0x1200, 0, 0);			/* extab model 1 */
	entry(exidx, 3, 0x1300, 0, 8);			/* generic model */
	entry(exidx, 4, 0x1400, 0, 16);			/* reserved model: bad */
	entry(exidx, 5, 0x1500, 0, 20);			/* past the section: bad */
	entry(exidx, 6, 0x1600, 0, 0x1000);		/* outside .ARM.extab: bad */
	rc = ehabi_table_build(&x, &e, 0x2000, &t, err, sizeof(err));
	CHECK("table-build", rc == 0 && t.machine == EM_ARM && t.n == 8, "rc %d n %zu: %s", rc, t.n,
	      rc ? err : "");
	if (rc || t.n != 8) {
		cfi_table_free(&t);
		return;
	}
	CHECK("table-inline", t.rows[0].pc == 0x1000 &&
	      row_is(&t.rows[0], N, SP, 8, AT, -4, SAME, 0), "pc %llx kind %u cfa %d",
	      (unsigned long long)t.rows[0].pc, t.rows[0].kind, t.rows[0].cfa_off);
	CHECK("table-cantunwind", t.rows[1].pc == 0x1100 && t.rows[1].kind == CFI_GAP,
	      "kind %u", t.rows[1].kind);
	CHECK("table-model1", t.rows[2].pc == 0x1200 && row_is(&t.rows[2], N, SP, 16, AT, -4, SAME, 0),
	      "cfa %d ra %d", t.rows[2].cfa_off, t.rows[2].ra_off);
	CHECK("table-generic", t.rows[3].pc == 0x1300 && row_is(&t.rows[3], N, FP, 8, AT, -4, AT, -8),
	      "kind %u base %u cfa %d", t.rows[3].kind, t.rows[3].cfa_base, t.rows[3].cfa_off);
	CHECK("table-bad-entries", t.rows[4].kind == CFI_GAP && t.rows[5].kind == CFI_GAP &&
	      t.rows[6].kind == CFI_GAP && t.stats.bad_fdes == 3 && t.stats.fdes == 3 &&
	      t.stats.no_unwind == 1, "bad %zu fdes %zu no_unwind %zu", t.stats.bad_fdes,
	      t.stats.fdes, t.stats.no_unwind);
	CHECK("table-text-end", t.rows[7].pc == 0x2000 && t.rows[7].kind == CFI_GAP &&
	      cfi_table_lookup(&t, 0x1fff) == &t.rows[6] && !cfi_table_lookup(&t, 0xfff),
	      "last pc %llx", (unsigned long long)t.rows[7].pc);
	cfi_table_free(&t);

	/* Hostile: not whole entries; a function offset with bit 31 set; unsorted. */
	x.size = 12;
	rc = ehabi_table_build(&x, &e, 0, &t, err, sizeof(err));
	CHECK("table-bad-size", rc == -1 && strstr(err, "not entries of 8"), "rc %d %s", rc, err);
	x.size = 16;
	put(exidx, 0x80000000);
	entry(exidx, 1, 0x0800, 0x80a8b0b0, 0);
	rc = ehabi_table_build(&x, &e, 0, &t, err, sizeof(err));
	CHECK("table-bad-fn", rc == 0 && t.n == 1 && t.stats.bad_fdes == 1 && t.rows[0].pc == 0x800,
	      "rc %d n %zu", rc, t.n);
	cfi_table_free(&t);
	entry(exidx, 0, 0x0900, 0x1, 0);
	rc = ehabi_table_build(&x, &e, 0, &t, err, sizeof(err));
	CHECK("table-unsorted", rc == 0 && t.n == 2 && t.rows[0].pc == 0x800 && t.rows[1].pc == 0x900,
	      "rc %d n %zu", rc, t.n);
	cfi_table_free(&t);
}

/*
 * An .ARM.extab entry whose word count reaches exactly the section's last
 * word is read; one claiming a single word more is refused (the bound at
 * its edge, not far past it).  The buffer is larger than the section said,
 * so a decoder reading that word would not fault: the verdict must tell.
 * Both models with a count: lu16 (count in the first word) and the generic
 * one (personality, then GCC's count word).
 */
static void extab_edge(const char *name, bool generic, unsigned int more, size_t size, bool ok)
{
	uint8_t exidx[8], extab[64];
	struct ehabi_section x = { exidx, EXIDX_ADDR, sizeof(exidx) };
	struct ehabi_section e = { extab, EXTAB_ADDR, size };
	struct cfi_table t;
	char err[128];
	size_t at = 0;
	int rc;

	for (size_t i = 0; i < sizeof(extab); i += 4)
		put(extab + i, 0xb0b0b0b0);	/* finish */
	if (generic) {
		put(extab, prel31_to(EXTAB_ADDR, 0x3000));
		at = 4;
		put(extab + at, more << 24 | 0xa8b0b0);	/* pop {r4, r14}; finish */
	} else {
		put(extab, 0x8100a8b0 | more << 16);		/* lu16: pop {r4, r14}; finish */
	}
	entry(exidx, 0, 0x1000, 0, 0);
	rc = ehabi_table_build(&x, &e, 0x2000, &t, err, sizeof(err));
	CHECK(name, rc == 0 && t.stats.fdes == (size_t)ok && t.stats.bad_fdes == (size_t)!ok &&
	      (!ok || row_is(&t.rows[0], N, SP, 8, AT, -4, SAME, 0)),
	      "%u more words after word %zu of a %zu-byte section: rc %d, fdes %zu, bad %zu",
	      more, at / 4, size, rc, t.stats.fdes, t.stats.bad_fdes);
	cfi_table_free(&t);
}

static void test_extab_bounds(void)
{
	/* 16 bytes: the count's word and 3 more. */
	extab_edge("table-extab-last-word", false, 3, 16, true);
	extab_edge("table-extab-one-word-past", false, 4, 16, false);
	extab_edge("table-extab-generic-last-word", true, 2, 16, true);
	extab_edge("table-extab-generic-one-word-past", true, 3, 16, false);
}

/* ---- Debian's armhf libc ---- */

static bool dynsym_addr(const char *path, const char *want, uint64_t *addr)
{
	int fd = open(path, O_RDONLY);
	Elf *elf = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
	Elf_Scn *scn = NULL;
	bool found = false;
	GElf_Shdr sh;
	GElf_Sym s;

	while (elf && !found && (scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_DYNSYM) {
			Elf_Data *d = elf_getdata(scn, NULL);

			for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize && !found; i++)
				if (gelf_getsym(d, i, &s) && s.st_value &&
				    !strcmp(elf_strptr(elf, sh.sh_link, s.st_name), want)) {
					*addr = s.st_value & ~1ull;	/* the Thumb bit */
					found = true;
				}
		}
	elf_end(elf);
	if (fd >= 0)
		close(fd);
	return found;
}

static void test_libc(void)
{
	static const char *const fns[] = { "read", "nanosleep", "pthread_join", "fgets" };
	struct cfi_table t;
	char err[256];
	uint64_t a;

	if (access(LIBC_ARMHF, R_OK)) {
		printf("SKIP libc-armhf: no %s (libc6-armhf-cross)\n", LIBC_ARMHF);
		return;
	}
	if (cfi_table_build(LIBC_ARMHF, -1, 0, &t, err, sizeof(err))) {
		CHECK("libc-armhf", 0, "%s", err);
		return;
	}
	CHECK("libc-armhf", t.machine == EM_ARM && t.n >= 700 && t.stats.fdes >= 300 &&
	      t.stats.no_unwind > 0 && t.stats.bad_fdes == 0, "n %zu fdes %zu no_unwind %zu bad %zu",
	      t.n, t.stats.fdes, t.stats.no_unwind, t.stats.bad_fdes);
	/* Blocking calls a profile shows: each saved lr just below its CFA. */
	for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
		const struct cfi_row *r = dynsym_addr(LIBC_ARMHF, fns[i], &a) ? cfi_table_lookup(&t, a) : NULL;
		char name[64];

		snprintf(name, sizeof(name), "libc-armhf-%s", fns[i]);
		CHECK(name, r && r->pc == a && r->kind == CFI_NORMAL && r->cfa_base == CFI_BASE_SP &&
		      r->cfa_off > 0 && r->ra_rule == CFI_AT_CFA && r->ra_off == -4,
		      "row %s", r ? "of another kind" : "missing");
	}
	printf("%s: %zu rows, %zu decoded, %zu cannot unwind, %zu cut rows\n", LIBC_ARMHF, t.n,
	       t.stats.fdes, t.stats.no_unwind, t.stats.expr_rows);
	cfi_table_free(&t);
}

/*
 * A gap in a file with tables is its builder's mark (libc), a gap in one
 * without is the build's (the hint applies); CFI files: always the build's.
 */
static void test_marked(void)
{
	static const struct { const char *path; bool marked; } files[] = {
		{ LIBC_ARMHF, true },
		{ "/lib/x86_64-linux-gnu/libc.so.6", false },
	};
	char err[256];

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		int fd = open(files[i].path, O_RDONLY);
		struct cfi_file *f = fd >= 0 ? cfi_file_open(fd, err, sizeof(err)) : NULL;
		char name[64];

		snprintf(name, sizeof(name), "gap-marked-%s", i ? "x86_64" : "armhf");
		CHECK(name, f && cfi_file_gap_is_marked(f) == files[i].marked, "%s: %s",
		      files[i].path, f ? "wrong" : err);
		cfi_file_close(f);
		if (fd >= 0)
			close(fd);
	}
	/* A program built without tables: crt1.o's CANTUNWIND alone. */
	if (getenv("EHABI_NO_TABLES")) {
		int fd = open(getenv("EHABI_NO_TABLES"), O_RDONLY);
		struct cfi_file *f = fd >= 0 ? cfi_file_open(fd, err, sizeof(err)) : NULL;

		CHECK("gap-marked-no-tables", f && !cfi_file_gap_is_marked(f), "%s",
		      f ? "marked" : err);
		cfi_file_close(f);
		if (fd >= 0)
			close(fd);
	}
}

/* ---- dump ---- */

static const char *const kind_names[] = { "normal", "end", "gap", "expr", "signal" };
static const char *const rule_names[] = { "same", "cfa", "undef" };

static int dump(const char *path)
{
	struct cfi_table t;
	char err[256];

	if (cfi_table_build(path, -1, 0, &t, err, sizeof(err))) {
		fprintf(stderr, "%s: %s\n", path, err);
		return 1;
	}
	for (size_t i = 0; i < t.n; i++) {
		const struct cfi_row *r = &t.rows[i];

		printf("%llx %s", (unsigned long long)r->pc, kind_names[r->kind]);
		if (r->kind == CFI_NORMAL)
			printf(" %s%+d ra=%s%+d fp=%s%+d", r->cfa_base == CFI_BASE_SP ? "sp" : "r7",
			       r->cfa_off, rule_names[r->ra_rule], r->ra_off, rule_names[r->fp_rule],
			       r->fp_off);
		printf("\n");
	}
	cfi_table_free(&t);
	return 0;
}

/* ---- unwinding a snapshot ---- */

struct snap_hdr {
	uint32_t magic, pc, sp, r7, r11, lr, cpsr, len;
};

#define MAX_MAPS 64

struct snap_file {
	char path[4096];
	int fd;
	struct cfi_file *cfi;
	GElf_Phdr loads[8];
	size_t nr_loads;
};

struct snap_map {
	uint64_t start, end, pgoff;
	struct snap_file *file;
};

struct snap_maps {
	struct snap_map map[MAX_MAPS];
	struct snap_file file[MAX_MAPS];
	size_t n, nr_files;
};

static struct snap_file *snap_file(struct snap_maps *m, const char *path)
{
	struct snap_file *f;
	Elf *elf;
	size_t n = 0;

	for (size_t i = 0; i < m->nr_files; i++)
		if (!strcmp(m->file[i].path, path))
			return &m->file[i];
	f = &m->file[m->nr_files++];
	snprintf(f->path, sizeof(f->path), "%s", path);
	f->fd = open(path, O_RDONLY);
	if (f->fd < 0)
		return f;
	elf = elf_begin(f->fd, ELF_C_READ, NULL);
	if (elf && !elf_getphdrnum(elf, &n))
		for (size_t i = 0; i < n && f->nr_loads < 8; i++)
			if (gelf_getphdr(elf, i, &f->loads[f->nr_loads]) &&
			    f->loads[f->nr_loads].p_type == PT_LOAD)
				f->nr_loads++;
	elf_end(elf);
	f->cfi = cfi_file_open(f->fd, (char[256]){ 0 }, 256);
	return f;
}

static int read_maps(const char *path, struct snap_maps *m)
{
	char line[PROC_MAPS_LINE];
	struct proc_map pm;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f) && m->n < MAX_MAPS) {
		line[strcspn(line, "\n")] = 0;
		if (proc_parse_maps_line(line, &pm) || !(pm.prot & 4) || pm.file[0] != '/')
			continue;
		m->map[m->n++] = (struct snap_map){ pm.start, pm.end, pm.pgoff,
						    snap_file(m, pm.file) };
	}
	fclose(f);
	return 0;
}

/* The file and file address of PC. */
static const struct snap_map *map_at(const struct snap_maps *m, uint64_t pc, uint64_t *vaddr)
{
	for (size_t i = 0; i < m->n; i++) {
		const struct snap_file *f = m->map[i].file;
		uint64_t off = pc - m->map[i].start + m->map[i].pgoff;

		if (pc < m->map[i].start || pc >= m->map[i].end)
			continue;
		for (size_t j = 0; j < f->nr_loads; j++)
			if (off >= f->loads[j].p_offset &&
			    off - f->loads[j].p_offset < f->loads[j].p_filesz) {
				*vaddr = off - f->loads[j].p_offset + f->loads[j].p_vaddr;
				return &m->map[i];
			}
	}
	return NULL;
}

/* unwind_stack's row callback: the mapped file's EHABI rows. */
static const struct cfi_row *snap_row(void *ctx, uint64_t pc, uint64_t *vaddr, unsigned int *machine)
{
	const struct snap_map *m = map_at(ctx, pc, vaddr);

	if (!m || !m->file->cfi)
		return NULL;
	*machine = cfi_file_machine(m->file->cfi);
	return cfi_file_lookup(m->file->cfi, *vaddr, 1u << 20);
}

/* The function symbol (.symtab, else .dynsym) holding file address ADDR. */
static void symbol_at(const char *path, uint64_t addr, char *out, size_t len)
{
	int fd = open(path, O_RDONLY);
	Elf *elf = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
	uint64_t best = 0, size = 0;
	const char *name = NULL;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	GElf_Sym s;

	for (int pass = 0; elf && pass < 2 && !name; pass++)
		while ((scn = elf_nextscn(elf, scn))) {
			Elf_Data *d;

			if (!gelf_getshdr(scn, &sh) ||
			    sh.sh_type != (pass ? SHT_DYNSYM : SHT_SYMTAB) || !sh.sh_entsize)
				continue;
			d = elf_getdata(scn, NULL);
			for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
				uint64_t v;

				if (!gelf_getsym(d, i, &s) || GELF_ST_TYPE(s.st_info) != STT_FUNC)
					continue;
				v = s.st_value & ~1ull;
				if (v <= addr && v >= best && (addr - v < s.st_size || !s.st_size)) {
					best = v;
					size = s.st_size;
					name = elf_strptr(elf, sh.sh_link, s.st_name);
				}
			}
		}
	/* A symbol without size (_start) names only its first bytes. */
	if (name && (size || addr - best < 64))
		snprintf(out, len, "%s", name);
	else
		snprintf(out, len, "%s+0x%llx", strrchr(path, '/') ? strrchr(path, '/') + 1 : path,
			 (unsigned long long)addr);
	elf_end(elf);
	if (fd >= 0)
		close(fd);
}

static int unwind_snap(const char *dir, const char *name)
{
	struct snap_maps *m = calloc(1, sizeof(*m));
	struct offcpu_ucopy *c = NULL;
	struct snap_hdr h;
	enum unwind_end end;
	uint64_t ip[128];
	char path[4200];
	uint32_t n;
	FILE *f;
	int rc = 1;

	snprintf(path, sizeof(path), "%s/maps", dir);
	if (!m || read_maps(path, m)) {
		fprintf(stderr, "%s: cannot read\n", path);
		goto out;
	}
	snprintf(path, sizeof(path), "%s/%s.snap", dir, name);
	f = fopen(path, "r");
	if (!f || fread(&h, sizeof(h), 1, f) != 1 || h.magic != 0x50414e53u ||
	    !(c = calloc(1, sizeof(*c) + h.len)) || fread(c->bytes, 1, h.len, f) != h.len) {
		fprintf(stderr, "%s: not a snapshot\n", path);
		if (f)
			fclose(f);
		goto out;
	}
	fclose(f);
	/* As the BPF side copies them: the copy's fp is r7 on ARM. */
	*c = (struct offcpu_ucopy){ .magic = OFFCPU_UCOPY_MAGIC, .len = h.len, .pc = h.pc,
				    .sp = h.sp, .fp = h.r7, .lr = h.lr };
	n = unwind_stack(c, h.len, true, snap_row, m, ip, 128, &end, NULL);
	for (uint32_t i = 0; i < n; i++) {
		uint64_t vaddr;
		const struct snap_map *sm = map_at(m, ip[i] - (i > 0), &vaddr);
		char sym[4200] = "?";

		if (sm)
			symbol_at(sm->file->path, vaddr, sym, sizeof(sym));
		printf("%s\n", sym);
	}
	printf("end: %s\n", unwind_end_names[end]);
	rc = 0;
out:
	for (size_t i = 0; m && i < m->nr_files; i++) {
		cfi_file_close(m->file[i].cfi);
		if (m->file[i].fd >= 0)
			close(m->file[i].fd);
	}
	free(m);
	free(c);
	return rc;
}

int main(int argc, char **argv)
{
	elf_version(EV_CURRENT);
	if (argc == 3 && !strcmp(argv[1], "dump"))
		return dump(argv[2]);
	if (argc == 4 && !strcmp(argv[1], "unwind"))
		return unwind_snap(argv[2], argv[3]);
	if (argc != 1) {
		fprintf(stderr, "usage: test_ehabi [dump FILE | unwind DIR NAME]\n");
		return 2;
	}
	test_decode();
	test_tables();
	test_extab_bounds();
	test_libc();
	test_marked();
	CHECK("hint-armhf", strstr(unwind_cut_hint(EM_ARM), "-funwind-tables") &&
	      !strstr(unwind_cut_hint(EM_ARM), "-fasynchronous"), "%s", unwind_cut_hint(EM_ARM));
	return failures != 0;
}
