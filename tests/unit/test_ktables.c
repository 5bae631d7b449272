// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel walker's rows (src/unwind/ktables.c): each kind of struct
 * cfi_row as the walker's struct offcpu_krow (what it follows, what ends a
 * stack, what it must leave to the copy), and a table's rows merged and
 * refused as the loader does.
 */
#include <stdint.h>
#include <string.h>

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
}

int main(void)
{
	test_row_kinds();
	test_rows();
	return failures != 0;
}
