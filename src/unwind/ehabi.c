// SPDX-License-Identifier: GPL-2.0
/*
 * ARM EHABI tables as compact rows (see ehabi.h).
 *
 * A small decoder, not a library: libgcc's unwind-arm and libunwind's
 * Gex_tables.c interpret the instructions while unwinding a live context
 * (they execute the pops on registers), they do not describe a frame, and
 * neither builds for the static musl product as a library we could call
 * (libgcc's is the C++ exception runtime itself; libunwind is not in the
 * toolchain).  What is needed is the other direction: the instructions as
 * one row of rules, computed once per function.  The input is untrusted:
 * every offset is checked against its section, every count bounded;
 * tests/fuzz/fuzz_ehabi.c explores it.
 */
#include <elf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unwind/ehabi.h"

#define EXIDX_CANTUNWIND	0x1u
/* Entries in one table: libc.so.6 has ~800, large C++ libraries ~100k. */
#define MAX_ENTRIES		(1u << 21)
/* Unwinding instructions of one entry: 4 bytes a word, at most 255 more words. */
#define MAX_OPS			(4 + 4 * 255)

/* The decoder's state: vsp = base + off; where each register was popped. */
struct vsp_state {
	uint8_t base;		/* CFI_BASE_SP or CFI_BASE_FP (r7) */
	bool bad;		/* something a row cannot express */
	bool refused;		/* "refuse to unwind" */
	int64_t off;
	bool saved[16];
	int64_t at[16];		/* vsp offset where r[i] was popped */
};

static void pop_reg(struct vsp_state *s, unsigned int reg)
{
	/* A popped sp is the caller's sp itself: no offset from a base. */
	if (reg == EHABI_SP)
		s->bad = true;
	if (!s->saved[reg]) {
		s->saved[reg] = true;
		s->at[reg] = s->off;
	}
	s->off += 4;
}

/* Pops the registers of MASK, lowest first (bit i: r[FIRST + i]). */
static void pop_mask(struct vsp_state *s, unsigned int mask, unsigned int first)
{
	for (unsigned int i = 0; i < 16 && first + i < 16; i++)
		if (mask & (1u << i))
			pop_reg(s, first + i);
}

/* "vsp = r[n]": only r7 of this frame (not one popped here) fits a row. */
static void set_vsp(struct vsp_state *s, unsigned int reg)
{
	bool any_saved = false;

	/* Registers popped before it were found from the old vsp: no offset from r7. */
	for (unsigned int i = 0; i < 16; i++)
		any_saved |= s->saved[i];
	if (reg != EHABI_FP || any_saved) {
		s->bad = true;
		return;
	}
	s->base = CFI_BASE_FP;
	s->off = 0;
}

/* Reads one ULEB128 at OPS[*i]; false if it runs past N or is too long. */
static bool uleb(const uint8_t *ops, size_t n, size_t *i, uint64_t *v)
{
	unsigned int shift = 0;
	uint8_t b;

	*v = 0;
	do {
		if (*i >= n || shift > 28)
			return false;
		b = ops[(*i)++];
		*v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	return true;
}

/* One instruction at OPS[*i]; false at "finish" (or the end of the bytes). */
static bool step(struct vsp_state *s, const uint8_t *ops, size_t n, size_t *i)
{
	uint8_t op = ops[(*i)++], op2 = 0;
	uint64_t v;

	if ((op & 0xc0) == 0x00) {		/* 00xxxxxx: vsp += (x << 2) + 4 */
		s->off += ((op & 0x3f) << 2) + 4;
		return true;
	}
	if ((op & 0xc0) == 0x40) {		/* 01xxxxxx: vsp -= (x << 2) + 4 */
		s->off -= ((op & 0x3f) << 2) + 4;
		return true;
	}
	/* The two-byte instructions take their second byte now. */
	if ((op & 0xf0) == 0x80 || op == 0xb1 || op == 0xb3 || (op & 0xf8) == 0xc0 ||
	    op == 0xc8 || op == 0xc9) {
		if (*i >= n) {
			s->bad = true;
			return false;
		}
		op2 = ops[(*i)++];
	}
	if ((op & 0xf0) == 0x80) {		/* 1000iiii iiiiiiii: pop r4-r15 by mask */
		if (op == 0x80 && op2 == 0) {
			s->refused = true;
			return false;
		}
		pop_mask(s, ((unsigned int)(op & 0x0f) << 8) | op2, 4);
	} else if ((op & 0xf0) == 0x90) {	/* 1001nnnn: vsp = r[n] (13, 15 reserved) */
		if ((op & 0x0f) == 13 || (op & 0x0f) == 15)
			s->bad = true;
		else
			set_vsp(s, op & 0x0f);
	} else if ((op & 0xf0) == 0xa0) {	/* 1010Lnnn: pop r4-r[4+n] (+ r14 if L) */
		pop_mask(s, (1u << ((op & 7) + 1)) - 1, 4);
		if (op & 8)
			pop_reg(s, EHABI_LR);
	} else if (op == 0xb0) {		/* finish */
		return false;
	} else if (op == 0xb1) {		/* 10110001 0000iiii: pop r0-r3 by mask */
		if (op2 == 0 || op2 & 0xf0)
			s->bad = true;
		else
			pop_mask(s, op2, 0);
	} else if (op == 0xb2) {		/* vsp += 0x204 + (uleb128 << 2) */
		if (!uleb(ops, n, i, &v)) {
			s->bad = true;
			return false;
		}
		s->off += 0x204 + ((int64_t)v << 2);
	} else if (op == 0xb3) {		/* VFP d[s]-d[s+c] by FSTMFDX */
		s->off += 8 * ((op2 & 0x0f) + 1) + 4;
	} else if ((op & 0xf8) == 0xb8) {	/* VFP d8-d[8+n] by FSTMFDX */
		s->off += 8 * ((op & 7) + 1) + 4;
	} else if (op == 0xc8 || op == 0xc9) {	/* VFP d[16+s].. or d[s].. by VPUSH */
		s->off += 8 * ((op2 & 0x0f) + 1);
	} else if ((op & 0xf8) == 0xd0) {	/* VFP d8-d[8+n] by VPUSH */
		s->off += 8 * ((op & 7) + 1);
	} else {
		/* iWMMXt (0xc0-0xc7), spare (0xb4-0xb7, 0xca-0xcf, 0xd8-0xff). */
		s->bad = true;
	}
	/* Offsets past the row's int32 fields: no frame is that large. */
	if (s->off > INT32_MAX / 2 || s->off < INT32_MIN / 2)
		s->bad = true;
	return !s->bad;
}

enum cfi_kind ehabi_decode(const uint8_t *ops, size_t n, struct cfi_row *row)
{
	struct vsp_state s = { .base = CFI_BASE_SP };
	unsigned int ra;
	size_t i = 0;

	while (i < n && step(&s, ops, n, &i))
		;
	*row = (struct cfi_row){ .pc = row->pc };
	if (s.refused) {
		row->kind = CFI_GAP;
		return CFI_GAP;
	}
	if (s.bad) {
		row->kind = CFI_EXPR;
		return CFI_EXPR;
	}
	/* The caller's pc: a popped r15, else r14 (popped, or still in lr). */
	ra = s.saved[EHABI_PC] ? EHABI_PC : EHABI_LR;
	row->kind = CFI_NORMAL;
	row->cfa_base = s.base;
	row->cfa_off = (int32_t)s.off;
	row->ra_rule = s.saved[ra] ? CFI_AT_CFA : CFI_SAME;
	row->ra_off = s.saved[ra] ? (int32_t)(s.at[ra] - s.off) : 0;
	row->fp_rule = s.saved[EHABI_FP] ? CFI_AT_CFA : CFI_SAME;
	row->fp_off = s.saved[EHABI_FP] ? (int32_t)(s.at[EHABI_FP] - s.off) : 0;
	return CFI_NORMAL;
}

/* ---- the tables ---- */

static uint32_t word_at(const uint8_t *p)
{
	/* EHABI tables are in the file's byte order: armhf is little-endian. */
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* A prel31 offset: bits 0-30 signed, relative to the word's own address. */
static uint64_t prel31(uint32_t w, uint64_t where)
{
	int32_t off = (int32_t)(w << 1) >> 1;

	return (uint64_t)((int64_t)where + off) & 0xffffffffu;
}

/* Appends the 4 bytes of W, most significant first, from byte FIRST. */
static size_t take_bytes(uint8_t *ops, size_t n, uint32_t w, unsigned int first)
{
	for (unsigned int b = first; b < 4; b++)
		ops[n++] = (uint8_t)(w >> (8 * (3 - b)));
	return n;
}

/*
 * The instructions of an .ARM.extab entry at ADDR into OPS; their count,
 * or -1 when the entry is not in the section or of a reserved model.
 */
static long extab_ops(const struct ehabi_section *x, uint64_t addr, uint8_t *ops)
{
	uint64_t off = addr - x->addr;
	unsigned int more, first;
	uint32_t w;
	size_t n;

	if (addr < x->addr || off >= x->size || x->size - off < 4 || (off & 3))
		return -1;
	w = word_at(x->data + off);
	if (w & 0x80000000u) {
		switch ((w >> 24) & 0x0f) {
		case 0:		/* su16: three bytes here */
			return (long)take_bytes(ops, 0, w, 1);
		case 1: case 2:	/* lu16, lu32: a count, two bytes, then words */
			more = (w >> 16) & 0xff;
			first = 2;
			break;
		default:
			return -1;
		}
	} else {
		/* Generic model: the personality, then GCC's layout (ehabi.h). */
		off += 4;
		if (x->size - off < 4)
			return -1;
		w = word_at(x->data + off);
		more = w >> 24;
		first = 1;
	}
	n = take_bytes(ops, 0, w, first);
	if ((x->size - off) / 4 - 1 < more)
		return -1;
	for (unsigned int i = 1; i <= more; i++)
		n = take_bytes(ops, n, word_at(x->data + off + 4 * i), 0);
	return (long)n;
}

/* The row of the entry at index I (its pc set); counts into T's stats. */
static void entry_row(const struct ehabi_section *exidx, const struct ehabi_section *extab,
		      size_t i, struct cfi_row *row, struct cfi_stats *st)
{
	uint64_t where = exidx->addr + 8 * i;
	uint32_t fn = word_at(exidx->data + 8 * i), w = word_at(exidx->data + 8 * i + 4);
	uint8_t ops[MAX_OPS];
	long n;

	*row = (struct cfi_row){ .pc = prel31(fn, where), .kind = CFI_GAP };
	if (w == EXIDX_CANTUNWIND) {
		st->no_unwind++;
		return;
	}
	if (w & 0x80000000u) {
		/* Inline: only model 0 (su16) fits a word. */
		n = (w >> 24) == 0x80 ? (long)take_bytes(ops, 0, w, 1) : -1;
	} else {
		n = extab_ops(extab, prel31(w, where + 4), ops);
	}
	if (n < 0) {
		st->bad_fdes++;
		return;
	}
	st->fdes++;
	if (ehabi_decode(ops, (size_t)n, row) == CFI_GAP)
		st->no_unwind++;
	row->pc = prel31(fn, where);
}

static int cmp_row(const void *a, const void *b)
{
	const struct cfi_row *x = a, *y = b;

	return x->pc < y->pc ? -1 : x->pc > y->pc;
}

int ehabi_table_build(const struct ehabi_section *exidx, const struct ehabi_section *extab,
		      uint64_t text_end, struct cfi_table *t, char *err, size_t errlen)
{
	size_t entries = exidx->size / 8, n = 0;

	memset(t, 0, sizeof(*t));
	t->machine = EM_ARM;
	if (exidx->size % 8)
		return cfi_fail(err, errlen, ".ARM.exidx of %zu bytes, not entries of 8",
				exidx->size);
	if (entries > MAX_ENTRIES)
		return cfi_fail(err, errlen, ".ARM.exidx with %zu entries (at most %u)", entries,
				MAX_ENTRIES);
	t->rows = calloc(entries + 1, sizeof(*t->rows));
	if (!t->rows)
		return cfi_fail(err, errlen, "out of memory reading .ARM.exidx");
	t->cap = entries + 1;
	for (size_t i = 0; i < entries; i++) {
		/* Bit 31 of the function's offset is 0 in every valid entry. */
		if (word_at(exidx->data + 8 * i) & 0x80000000u) {
			t->stats.bad_fdes++;
			continue;
		}
		entry_row(exidx, extab, i, &t->rows[n++], &t->stats);
	}
	/* The linker sorts the table; a hostile one is sorted here, one of equal starts kept. */
	qsort(t->rows, n, sizeof(*t->rows), cmp_row);
	t->n = 0;
	for (size_t i = 0; i < n; i++)
		if (!t->n || t->rows[t->n - 1].pc != t->rows[i].pc)
			t->rows[t->n++] = t->rows[i];
	if (t->n && text_end > t->rows[t->n - 1].pc)
		t->rows[t->n++] = (struct cfi_row){ .pc = text_end, .kind = CFI_GAP };
	for (size_t i = 0; i < t->n; i++)
		t->stats.expr_rows += t->rows[i].kind == CFI_EXPR;
	return 0;
}
