// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel walker's rows (src/unwind/ktables.c): each kind of struct
 * cfi_row as the walker's struct offcpu_krow (what it follows, what ends a
 * stack, what it must leave to the copy), and a table's rows merged and
 * refused as the loader does; a large file's rows built by parts of its
 * FDEs (cfi_file_table) as the whole table has them.
 */
#include <elf.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "unwind/ktables.h"

static void test_row_kinds(void)
{
	struct cfi_row normal = { .pc = 0x1234, .kind = CFI_NORMAL, .cfa_base = CFI_BASE_SP,
				  .cfa_off = 16, .ra_rule = CFI_AT_CFA, .ra_off = -8,
				  .fp_rule = CFI_AT_CFA, .fp_off = -16 };
	struct cfi_row r;
	struct offcpu_krow k;

	ktable_row(&normal, 7, &k);
	result("ktables-row-normal", k.kind == OFFCPU_KROW_NORMAL && k.pc == 0x1234 && k.tag == 7 &&
	       k.cfa_base == OFFCPU_KROW_SP && k.cfa_off == 16 && k.ra_rule == OFFCPU_KROW_AT_CFA &&
	       k.ra_off == -8 && k.fp_rule == OFFCPU_KROW_AT_CFA && k.fp_off == -16,
	       "kind %u base %u cfa %d ra %u/%d fp %u/%d", k.kind, k.cfa_base, k.cfa_off, k.ra_rule,
	       k.ra_off, k.fp_rule, k.fp_off);
	r = normal;
	r.cfa_base = CFI_BASE_FP;
	r.ra_rule = CFI_SAME;	/* arm64's innermost frame: the return address in x30 */
	r.fp_rule = CFI_UNDEF;	/* cfi_step keeps the frame pointer then */
	ktable_row(&r, 7, &k);
	result("ktables-row-fp-base-lr", k.kind == OFFCPU_KROW_NORMAL && k.cfa_base == OFFCPU_KROW_FP &&
	       k.ra_rule == OFFCPU_KROW_SAME && k.fp_rule == OFFCPU_KROW_SAME,
	       "kind %u base %u ra %u fp %u", k.kind, k.cfa_base, k.ra_rule, k.fp_rule);
	r = normal;
	r.kind = CFI_END;
	ktable_row(&r, 7, &k);
	result("ktables-row-end", k.kind == OFFCPU_KROW_END, "kind %u", k.kind);
	r = normal;
	r.ra_rule = CFI_UNDEF;	/* the outermost frame */
	ktable_row(&r, 7, &k);
	result("ktables-row-ra-undefined-ends", k.kind == OFFCPU_KROW_END, "kind %u", k.kind);
	for (int kind = CFI_GAP; kind <= CFI_SIGNAL; kind++) {
		r = normal;
		r.kind = kind;
		ktable_row(&r, 7, &k);
		result("ktables-row-not-followed", k.kind == OFFCPU_KROW_MISS, "cfi kind %d: %u",
		       kind, k.kind);
	}
	r = normal;
	r.cfa_off = 40000;	/* wider than the walker's 16 bits */
	ktable_row(&r, 7, &k);
	result("ktables-row-wide-offset", k.kind == OFFCPU_KROW_MISS, "kind %u", k.kind);
	r = normal;
	r.fp_off = -40000;
	ktable_row(&r, 7, &k);
	result("ktables-row-wide-fp-offset", k.kind == OFFCPU_KROW_MISS, "kind %u", k.kind);
}

static void test_rows(void)
{
	struct cfi_row rows[] = {
		{ .pc = 0x1000, .kind = CFI_NORMAL, .cfa_base = CFI_BASE_SP, .cfa_off = 8,
		  .ra_rule = CFI_AT_CFA, .ra_off = -8 },
		/* the same rule again: merged into the row before */
		{ .pc = 0x1010, .kind = CFI_NORMAL, .cfa_base = CFI_BASE_SP, .cfa_off = 8,
		  .ra_rule = CFI_AT_CFA, .ra_off = -8 },
		{ .pc = 0x1020, .kind = CFI_NORMAL, .cfa_base = CFI_BASE_SP, .cfa_off = 16,
		  .ra_rule = CFI_AT_CFA, .ra_off = -8 },
		/* an empty range: the later row at the same pc holds */
		{ .pc = 0x1030, .kind = CFI_GAP },
		{ .pc = 0x1030, .kind = CFI_END },
	};
	struct cfi_table t = { .rows = rows, .n = 5, .machine = 62 };
	struct offcpu_krow out[5];
	size_t n = ktable_rows(&t, 3, out);

	result("ktables-rows-merged", n == 3 && out[0].pc == 0x1000 && out[1].pc == 0x1020 &&
	       out[1].cfa_off == 16 && out[2].pc == 0x1030 && out[2].kind == OFFCPU_KROW_END,
	       "%zu rows: %#x %#x %#x", n, out[0].pc, n > 1 ? out[1].pc : 0, n > 2 ? out[2].pc : 0);
	rows[4].pc = 0x100000000ull;	/* a file address the walker's 32 bits cannot hold */
	result("ktables-rows-past-4g-refused", ktable_rows(&t, 3, out) == 0, "loaded anyway");
	/* 32-bit ARM: a gap is the walker's to judge against r7 (thumb_fp_step's test). */
	rows[4].pc = 0x1040;
	t.machine = EM_ARM;
	n = ktable_rows(&t, 3, out);
	result("ktables-rows-arm-gap", n == 4 && out[2].kind == OFFCPU_KROW_GAP &&
	       out[3].kind == OFFCPU_KROW_END, "%zu rows, kind %u", n, n > 2 ? out[2].kind : 0);
	t.machine = EM_X86_64;
	n = ktable_rows(&t, 3, out);
	result("ktables-rows-gap-misses", n == 4 && out[2].kind == OFFCPU_KROW_MISS,
	       "%zu rows, kind %u", n, n > 2 ? out[2].kind : 0);
}

/* Whether A and B unwind alike. */
static bool same_row(const struct cfi_row *a, const struct cfi_row *b)
{
	return a->kind == b->kind && (a->kind != CFI_NORMAL ||
	       (a->cfa_base == b->cfa_base && a->cfa_off == b->cfa_off && a->ra_rule == b->ra_rule &&
		a->ra_off == b->ra_off && a->fp_rule == b->fp_rule && a->fp_off == b->fp_off));
}

/*
 * FILE's rows by parts of PER FDEs (each from its first FDE's start, a gap
 * before it): at every pc where the whole table has a row, the part holding
 * that pc has the same one.
 */
static void test_parts(const char *file, size_t per)
{
	struct cfi_table whole, part = { 0 };
	struct cfi_file *cf;
	char err[256], name[64];
	size_t nf, bad = 0, checked = 0, next = 0;
	uint64_t hi = 0;
	int fd = open(file, O_RDONLY);

	snprintf(name, sizeof(name), "ktables-parts-%zu", per);
	if (fd < 0 || cfi_table_build(NULL, fd, 0, &whole, err, sizeof(err))) {
		result(name, false, "%s: cannot build its table", file);
		return;
	}
	cf = cfi_file_open(fd, err, sizeof(err));
	nf = cf ? cfi_file_fdes(cf) : 0;
	for (size_t i = 0; i < whole.n && nf; i++) {
		const struct cfi_row *r;

		/* The part holding this pc: parts in order, as the loader cuts them. */
		while (whole.rows[i].pc >= hi && next < nf) {
			cfi_table_free(&part);
			if (cfi_file_table(cf, next, nf - next < per ? nf - next : per,
					   next ? cfi_file_fde_start(cf, next) : 0, 0, &part))
				break;
			next += per;
			hi = next < nf ? cfi_file_fde_start(cf, next) : UINT64_MAX;
		}
		r = cfi_table_lookup(&part, whole.rows[i].pc);
		checked++;
		bad += !r || !same_row(r, &whole.rows[i]);
	}
	result(name, nf > per && checked == whole.n && !bad,
	       "%s: %zu FDEs, %zu of %zu rows checked, %zu differ", file, nf, checked, whole.n, bad);
	cfi_table_free(&part);
	cfi_table_free(&whole);
	cfi_file_close(cf);
	close(fd);
}

/*
 * An EHABI table over FILE's FDEs, with gaps (before its first row, a
 * CANTUNWIND run, the end), merged with FILE as its debug file: at every
 * pc where either has a row, the merged table has the EHABI row where it
 * is not a gap, else the debug file's (as uw_file_row picks them).
 */
static void test_ehabi_merge(const char *file)
{
	struct cfi_row x = { .kind = CFI_NORMAL, .cfa_base = CFI_BASE_FP, .cfa_off = 24,
			     .ra_rule = CFI_AT_CFA, .ra_off = -4, .fp_rule = CFI_AT_CFA,
			     .fp_off = -8 };
	struct cfi_table whole, merged, e = { .machine = EM_ARM };
	struct cfi_row erows[4];
	struct cfi_file *cf;
	char err[256];
	size_t bad = 0, checked = 0;
	int fd = open(file, O_RDONLY);

	if (fd < 0 || cfi_table_build(NULL, fd, 0, &whole, err, sizeof(err))) {
		result("ktables-ehabi-merge", false, "%s: cannot build its table", file);
		return;
	}
	cf = cfi_file_open(fd, err, sizeof(err));
	if (!cf || cfi_file_fdes(cf) < 30) {
		result("ktables-ehabi-merge", false, "%s: too few FDEs", file);
		goto out;
	}
	erows[0] = x;
	erows[0].pc = cfi_file_fde_start(cf, 5);
	erows[1] = (struct cfi_row){ .pc = cfi_file_fde_start(cf, 10) + 2, .kind = CFI_GAP };
	erows[2] = x;
	erows[2].pc = cfi_file_fde_end(cf, 12);
	erows[3] = (struct cfi_row){ .pc = cfi_file_fde_start(cf, 20), .kind = CFI_GAP };
	e.rows = erows;
	e.n = 4;
	if (ktable_ehabi_rows(&e, cf, 0, &merged)) {
		result("ktables-ehabi-merge", false, "merge failed");
		goto out;
	}
	for (size_t i = 0; i < whole.n + e.n; i++) {
		uint64_t pc = i < whole.n ? whole.rows[i].pc : erows[i - whole.n].pc;
		const struct cfi_row *er = cfi_table_lookup(&e, pc), *m = cfi_table_lookup(&merged, pc);
		const struct cfi_row *want = er && er->kind != CFI_GAP ? er :
					     cfi_table_lookup(&whole, pc);

		checked++;
		if (!m || !same_row(m, want ? want : &(struct cfi_row){ .kind = CFI_GAP }))
			bad++;
	}
	result("ktables-ehabi-merge", !bad && merged.n > e.n,
	       "%s: %zu of %zu pcs differ, %zu rows", file, bad, checked, merged.n);
	cfi_table_free(&merged);
out:
	cfi_file_close(cf);
	cfi_table_free(&whole);
	close(fd);
}

int main(int argc, char **argv)
{
	test_row_kinds();
	test_rows();
	/* A file of many FDEs (the system's libc by default). */
	test_parts(argc > 1 ? argv[1] : "/lib/x86_64-linux-gnu/libc.so.6", 512);
	test_parts(argc > 1 ? argv[1] : "/lib/x86_64-linux-gnu/libc.so.6", 1000);
	test_ehabi_merge(argc > 1 ? argv[1] : "/lib/x86_64-linux-gnu/libc.so.6");
	return failures != 0;
}
