// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer: the ARM EHABI decoder (src/unwind/ehabi.c) over any tables.
 * The input: .ARM.exidx's and .ARM.extab's addresses and exidx's length
 * (three little-endian words), then exidx's bytes, then extab's (seeds:
 * the sections of real files, tests/fuzz/corpus/ehabi).  The rows must be
 * sorted, each of a known kind with known rules, each findable; the same
 * bytes as one entry's instructions must decode to a known kind.
 */
#include <stdint.h>
#include <string.h>

#include "unwind/ehabi.h"

static uint32_t word(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void check_row(const struct cfi_row *r)
{
	if (r->kind != CFI_NORMAL && r->kind != CFI_GAP && r->kind != CFI_EXPR)
		__builtin_trap();
	if (r->kind == CFI_NORMAL &&
	    ((r->cfa_base != CFI_BASE_SP && r->cfa_base != CFI_BASE_FP) ||
	     (r->ra_rule != CFI_SAME && r->ra_rule != CFI_AT_CFA) ||
	     (r->fp_rule != CFI_SAME && r->fp_rule != CFI_AT_CFA)))
		__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ehabi_section exidx, extab;
	struct cfi_row row = { .pc = 0 };
	struct cfi_table t;
	char err[128];
	uint32_t len;

	ehabi_decode(data, size, &row);
	check_row(&row);
	if (size < 12)
		return 0;
	len = word(data + 8);
	if (len > size - 12)
		len = size - 12;
	exidx = (struct ehabi_section){ data + 12, word(data), len };
	extab = (struct ehabi_section){ data + 12 + len, word(data + 4), size - 12 - len };
	if (ehabi_table_build(&exidx, &extab, word(data) + 0x100000, &t, err, sizeof(err)))
		return 0;
	for (size_t i = 0; i < t.n; i++) {
		check_row(&t.rows[i]);
		if ((i && t.rows[i - 1].pc >= t.rows[i].pc) || cfi_table_lookup(&t, t.rows[i].pc) != &t.rows[i])
			__builtin_trap();
	}
	cfi_table_free(&t);
	return 0;
}
