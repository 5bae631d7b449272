// SPDX-License-Identifier: GPL-2.0
/*
 * Compact unwinding tables from .eh_frame/.debug_frame (see cfi.h).
 *
 * libdw reads the entries (dwarf_next_cfi: CIE and FDE headers, the CIE's
 * augmentation); each FDE's initial_location is decoded here (its pointer
 * encoding comes from the CIE's augmentation) as libdw has no call that
 * lists the FDEs.  The CFA programs are interpreted here, in one pass per
 * FDE that emits a row at each advance past the last one (fde_rows): libdw
 * has no call for all the rows of an FDE, only dwarf_cfi_addrframe's one
 * row at a pc, which runs the FDE's program again from its start each time
 * and copies the CIE's frame state first (__libdw_frame_at_address in
 * elfutils' libdw/cfi.c; dwarf_frame_info gives that row's end, the next
 * pc to ask for), so a table cost rows x instructions: most of the kernel
 * tables' loader thread (bench/RESULTS.md, 2026-11-26).  The interpreter
 * gives the rows libdw's frame states gave (tests/unit/test_cfirows.c
 * compares both on real files), as the OpenTelemetry profiler interprets
 * its .eh_frame itself (nativeunwind/elfunwindinfo/elfehframe.go).
 * The input is untrusted: every read is bounded by the section.  Every CIE
 * and FDE program is scanned first and a file with an unknown opcode or a
 * register number beyond MAX_DWARF_REG anywhere is refused whole (libdw,
 * which ran the programs before, grew its frame state to any register
 * number: up to 2 GiB and seconds of memset per row, found by fuzz_cfi,
 * tests/fuzz/corpus/cfi/cfi-slow-unit-*).
 */
#include <elfutils/libdw.h>
#include <dwarf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/sorted.h"
#include "unwind/cfi.h"
#include "unwind/ehabi.h"

/* Rows per FDE: Debian's libc has at most a few hundred; more is broken input. */
#define MAX_FDE_STEPS	4096

/* Above every architecture's DWARF register numbers (x86_64 ~130, arm64 ~100). */
#define MAX_DWARF_REG	1024

/*
 * What one FDE covers, and its CFA program: 24 bytes, one per function of
 * every file read, kept while the file is (a large part of the heap).
 */
struct fde_range {
	uint64_t start;
	uint32_t len;		/* [start, start + len) */
	uint32_t prog_off;	/* from the CFI section's first byte */
	uint32_t prog_len;
	uint32_t cie;		/* index in cfi_src.cies */
};

static uint64_t fde_end(const struct fde_range *f)
{
	return f->start + f->len;
}

/* One CIE, by section offset: how its FDEs are decoded and their programs run. */
struct cie_info {
	uint64_t offset;
	uint8_t enc;		/* the FDE pointer encoding */
	bool aug_z;		/* FDEs carry augmentation data to skip */
	bool signal;		/* 'S': its FDEs describe signal trampolines */
	uint64_t code_align, ra;
	int64_t data_align;
	const uint8_t *prog, *prog_end;	/* the initial instructions */
};

struct cfi_src {
	Elf *elf;
	Elf_Data *data;		/* the CFI section's bytes */
	uint64_t sh_addr;	/* for pc-relative pointers */
	bool eh_frame;
	bool big_endian;
	unsigned int addr_size;
	unsigned int machine;	/* EM_*: the ABI's rules before a CIE's */
	struct cie_info *cies;
	size_t nr_cies, cap_cies;
	struct fde_range *fdes;
	size_t nr_fdes, cap_fdes;
};

int cfi_fail(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return -1;
}

int cfi_regs_of(unsigned int machine, struct cfi_regs *regs)
{
	switch (machine) {
	case EM_X86_64:
		*regs = (struct cfi_regs){ .sp = 7, .fp = 6, .ra = 16 };
		return 0;
	case EM_AARCH64:
		*regs = (struct cfi_regs){ .sp = 31, .fp = 29, .ra = 30 };
		return 0;
	case EM_S390:
		*regs = (struct cfi_regs){ .sp = 15, .fp = 11, .ra = 14 };
		return 0;
	case EM_RISCV:	/* x2 sp, x8 s0/fp, x1 ra */
		*regs = (struct cfi_regs){ .sp = 2, .fp = 8, .ra = 1 };
		return 0;
	case EM_ARM:	/* r13 sp, r7 Thumb-2's fp, r14 lr */
		*regs = (struct cfi_regs){ .sp = EHABI_SP, .fp = EHABI_FP, .ra = EHABI_LR };
		return 0;
	}
	return -1;
}

static void *grow(void *v, size_t *cap, size_t need, size_t size)
{
	size_t n = *cap ? *cap : 64;
	void *p;

	if (need <= *cap)
		return v;
	while (n < need)
		n *= 2;
	p = realloc(v, n * size);
	if (p)
		*cap = n;
	return p;
}

static uint64_t read_uint(const uint8_t *p, unsigned int n, bool big_endian)
{
	uint64_t v = 0;
	unsigned int i;

	for (i = 0; i < n; i++)
		v |= (uint64_t)p[big_endian ? n - 1 - i : i] << (8 * i);
	return v;
}

static bool read_leb(const uint8_t **pp, const uint8_t *end, bool is_signed, uint64_t *out)
{
	const uint8_t *p = *pp;
	uint64_t v = 0;
	unsigned int shift = 0;
	uint8_t b;

	do {
		if (p >= end || shift >= 64)
			return false;
		b = *p++;
		v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	if (is_signed && shift < 64 && (b & 0x40))
		v |= ~0ull << shift;
	*pp = p;
	*out = v;
	return true;
}

/* Decodes one encoded pointer at *PP (advanced); false if unsupported or short. */
static bool read_encoded(const struct cfi_src *s, uint8_t enc, const uint8_t **pp,
			 const uint8_t *end, uint64_t *out)
{
	const uint8_t *p = *pp;
	const uint8_t *base = s->data->d_buf;
	unsigned int n;
	uint64_t v = 0;

	if (enc == DW_EH_PE_omit)
		return false;
	switch (enc & 0x0f) {
	case DW_EH_PE_absptr: n = s->addr_size; break;
	case DW_EH_PE_udata2: case DW_EH_PE_sdata2: n = 2; break;
	case DW_EH_PE_udata4: case DW_EH_PE_sdata4: n = 4; break;
	case DW_EH_PE_udata8: case DW_EH_PE_sdata8: n = 8; break;
	case DW_EH_PE_uleb128: case DW_EH_PE_sleb128:
		if (!read_leb(&p, end, enc & DW_EH_PE_signed, &v))
			return false;
		n = 0;
		break;
	default:
		return false;
	}
	if (n) {
		if ((size_t)(end - p) < n)
			return false;
		v = read_uint(p, n, s->big_endian);
		if ((enc & DW_EH_PE_signed) && n < 8 && (v >> (8 * n - 1)))
			v |= ~0ull << (8 * n);
		p += n;
	}
	switch (enc & 0x70) {
	case DW_EH_PE_absptr:
		break;
	case DW_EH_PE_pcrel:
		v += s->sh_addr + (uint64_t)(*pp - base);
		break;
	default:		/* datarel/textrel/funcrel: not used for FDEs by GNU tools */
		return false;
	}
	*pp = p;
	*out = v;
	return true;
}

/* The FDE pointer encoding from a CIE's augmentation ('zR', 'zPLR', ...). */
static uint8_t cie_fde_encoding(const struct cfi_src *s, const Dwarf_CIE *cie)
{
	const char *aug = cie->augmentation;
	const uint8_t *p = cie->augmentation_data;
	const uint8_t *end = p ? p + cie->augmentation_data_size : NULL;
	uint64_t skip;

	if (!s->eh_frame || !aug || aug[0] != 'z')
		return DW_EH_PE_absptr;
	for (aug++; *aug && p; aug++) {
		switch (*aug) {
		case 'R':
			return p < end ? *p : DW_EH_PE_omit;
		case 'L':
			p++;
			break;
		case 'P':
			if (p >= end)
				return DW_EH_PE_omit;
			{
				uint8_t penc = *p++;

				if (!read_encoded(s, penc & 0x7f, &p, end, &skip))
					return DW_EH_PE_omit;
			}
			break;
		case 'S': case 'B':
			break;
		default:
			return DW_EH_PE_omit;
		}
	}
	return DW_EH_PE_absptr;
}

static bool skip_leb(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	return read_leb(p, end, false, v);
}

/* A register operand (ULEB128) within MAX_DWARF_REG. */
static bool scan_reg(const uint8_t **p, const uint8_t *end)
{
	uint64_t reg;

	return read_leb(p, end, false, &reg) && reg <= MAX_DWARF_REG;
}

/* Skips a DW_FORM_block operand (ULEB128 length, then the bytes). */
static bool skip_block(const uint8_t **p, const uint8_t *end)
{
	uint64_t len;

	if (!read_leb(p, end, false, &len) || len > (uint64_t)(end - *p))
		return false;
	*p += len;
	return true;
}

/*
 * Checks a CFA program: every opcode known and every register number
 * small.  The operands are skipped, not interpreted (libdw does that).
 */
static bool scan_program(const struct cfi_src *s, uint8_t enc, const uint8_t *p,
			 const uint8_t *end)
{
	uint64_t v;

	while (p < end) {
		uint8_t op = *p++;
		bool ok = true;

		switch (op & 0xc0) {
		case DW_CFA_advance_loc: case DW_CFA_restore:
			continue;
		case DW_CFA_offset:
			if (!skip_leb(&p, end, &v))
				return false;
			continue;
		}
		switch (op) {
		case DW_CFA_nop: case DW_CFA_remember_state: case DW_CFA_restore_state:
		case DW_CFA_GNU_window_save:
			break;
		case DW_CFA_set_loc:
			ok = read_encoded(s, enc, &p, end, &v);
			break;
		case DW_CFA_advance_loc1: case DW_CFA_advance_loc2: case DW_CFA_advance_loc4:
			v = op == DW_CFA_advance_loc1 ? 1 : op == DW_CFA_advance_loc2 ? 2 : 4;
			ok = v <= (uint64_t)(end - p);
			p += ok ? v : 0;
			break;
		case DW_CFA_def_cfa_offset: case DW_CFA_def_cfa_offset_sf: case DW_CFA_GNU_args_size:
			ok = skip_leb(&p, end, &v);
			break;
		case DW_CFA_restore_extended: case DW_CFA_undefined: case DW_CFA_same_value:
		case DW_CFA_def_cfa_register:
			ok = scan_reg(&p, end);
			break;
		case DW_CFA_offset_extended: case DW_CFA_def_cfa: case DW_CFA_offset_extended_sf:
		case DW_CFA_def_cfa_sf: case DW_CFA_val_offset: case DW_CFA_val_offset_sf:
		case DW_CFA_GNU_negative_offset_extended:
			ok = scan_reg(&p, end) && skip_leb(&p, end, &v);
			break;
		case DW_CFA_register:
			ok = scan_reg(&p, end) && scan_reg(&p, end);
			break;
		case DW_CFA_def_cfa_expression:
			ok = skip_block(&p, end);
			break;
		case DW_CFA_expression: case DW_CFA_val_expression:
			ok = scan_reg(&p, end) && skip_block(&p, end);
			break;
		default:
			return false;
		}
		if (!ok)
			return false;
	}
	return true;
}

/* Whether a CIE's augmentation marks signal frames ('S'), read as libdw's intern_new_cie does. */
static bool cie_signal(const char *aug)
{
	bool sized = false;

	for (; aug && *aug; aug++) {
		if (*aug == 'S')
			return true;
		if (*aug == 'z')
			sized = true;
		else if (!strchr("LRP", *aug) && !sized)
			return false;	/* libdw stops at an unknown letter without 'z' */
	}
	return false;
}

/* Results of add_cie/add_fde: -1 out of memory, or one of these. */
enum { ENTRY_OK, ENTRY_SKIPPED, ENTRY_REFUSED };

/* A CIE whose program fails the scan refuses the file. */
static int add_cie(struct cfi_src *s, uint64_t offset, const Dwarf_CIE *cie)
{
	struct cie_info *v = grow(s->cies, &s->cap_cies, s->nr_cies + 1, sizeof(*v));
	bool aug_z = cie->augmentation && cie->augmentation[0] == 'z';

	if (!v)
		return -1;
	s->cies = v;
	v[s->nr_cies++] = (struct cie_info){
		.offset = offset, .enc = cie_fde_encoding(s, cie), .aug_z = aug_z && s->eh_frame,
		.signal = cie_signal(cie->augmentation), .code_align = cie->code_alignment_factor,
		.data_align = cie->data_alignment_factor, .ra = cie->return_address_register,
		.prog = cie->initial_instructions, .prog_end = cie->initial_instructions_end,
	};
	if (cie->return_address_register > MAX_DWARF_REG ||
	    !scan_program(s, DW_EH_PE_absptr, cie->initial_instructions,
			  cie->initial_instructions_end))
		return ENTRY_REFUSED;
	return ENTRY_OK;
}

static const struct cie_info *find_cie(const struct cfi_src *s, uint64_t offset)
{
	size_t i;

	/* CIEs come first and are few (one or two per object file). */
	for (i = s->nr_cies; i-- > 0;)
		if (s->cies[i].offset == offset)
			return &s->cies[i];
	return NULL;
}

static int add_fde(struct cfi_src *s, const Dwarf_FDE *fde)
{
	const struct cie_info *cie = find_cie(s, fde->CIE_pointer);
	const uint8_t *p = fde->start;
	uint64_t start, len;
	struct fde_range *v;

	/* What cannot be decoded could not be scanned: it must not be run. */
	if (!cie || !read_encoded(s, cie->enc, &p, fde->end, &start) ||
	    !read_encoded(s, cie->enc & 0x0f, &p, fde->end, &len) ||
	    (cie->aug_z && !skip_block(&p, fde->end)) || !scan_program(s, cie->enc, p, fde->end) ||
	    (uint64_t)((const uint8_t *)fde->end - p) > UINT32_MAX ||
	    (uint64_t)(p - (const uint8_t *)s->data->d_buf) > UINT32_MAX)
		return ENTRY_REFUSED;
	/* An empty FDE (a function the linker dropped) covers nothing. */
	if (len == 0 || start + len < start || len > UINT32_MAX)
		return ENTRY_SKIPPED;
	v = grow(s->fdes, &s->cap_fdes, s->nr_fdes + 1, sizeof(*v));
	if (!v)
		return -1;
	s->fdes = v;
	v[s->nr_fdes++] = (struct fde_range){ start, (uint32_t)len,
					      (uint32_t)(p - (const uint8_t *)s->data->d_buf),
					      (uint32_t)((const uint8_t *)fde->end - p),
					      (uint32_t)(cie - s->cies) };
	return ENTRY_OK;
}

static int cmp_fde(const void *a, const void *b)
{
	const struct fde_range *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* Lists the FDE ranges of the section, sorted. */
static int walk_fdes(struct cfi_src *s, struct cfi_table *t, char *err, size_t len)
{
	const unsigned char *ident = (const unsigned char *)elf_getident(s->elf, NULL);
	Dwarf_Off off = 0, next;
	Dwarf_CFI_Entry entry;
	int rc;

	while (off < s->data->d_size) {
		rc = dwarf_next_cfi(ident, s->data, s->eh_frame, off, &next, &entry);
		if (rc > 0)
			break;
		if (rc < 0) {
			/* A bad entry libdw can step over is counted; else stop. */
			t->stats.bad_fdes++;
			if (next == (Dwarf_Off)-1 || next <= off)
				break;
			off = next;
			continue;
		}
		if (dwarf_cfi_cie_p(&entry))
			rc = add_cie(s, off, &entry.cie);
		else
			rc = add_fde(s, &entry.fde);
		if (rc < 0)
			return cfi_fail(err, len, "out of memory reading CFI");
		if (rc == ENTRY_REFUSED)
			return cfi_fail(err, len,
					"CFI with an unknown opcode or a register number above %d",
					MAX_DWARF_REG);
		t->stats.bad_fdes += rc == ENTRY_SKIPPED;
		if (next <= off)
			break;
		off = next;
	}
	if (s->nr_fdes > 1)
		qsort(s->fdes, s->nr_fdes, sizeof(*s->fdes), cmp_fde);
	return 0;
}

static bool same_rules(const struct cfi_row *a, const struct cfi_row *b)
{
	return a->kind == b->kind && a->cfa_base == b->cfa_base && a->cfa_off == b->cfa_off &&
	       a->ra_rule == b->ra_rule && a->ra_off == b->ra_off &&
	       a->fp_rule == b->fp_rule && a->fp_off == b->fp_off;
}

int cfi_table_push(struct cfi_table *t, size_t max_rows, const struct cfi_row *row)
{
	struct cfi_row *v;

	if (t->n && same_rules(&t->rows[t->n - 1], row))
		return 0;
	if (t->n && t->rows[t->n - 1].pc == row->pc) {
		t->rows[t->n - 1] = *row;	/* an empty range: replaced */
		return 0;
	}
	if (max_rows && t->n >= max_rows)
		return -2;
	v = grow(t->rows, &t->cap, t->n + 1, sizeof(*v));
	if (!v)
		return -1;
	t->rows = v;
	t->rows[t->n++] = *row;
	return 0;
}

/* ---- CFA programs: one pass over an FDE's instructions gives its rows ---- */

/*
 * A saved register's rule as a row says it (CFI_SAME, CFI_AT_CFA,
 * CFI_UNDEF), or RULE_BAD where a row cannot (val_offset, register, an
 * expression but CFA + n): a row of kind CFI_EXPR then.  Each DWARF rule is
 * turned into this when it is set, as reg_rule turned libdw's into it.
 */
#define RULE_BAD	0xff

struct reg_rule {
	uint8_t rule;
	int32_t off;
};

/*
 * The CFA: none (also an empty expression), REG + OFF (by DW_CFA_def_cfa,
 * or an expression of DW_OP_bregx alone, which DW_CFA_def_cfa_offset does
 * not change), or what no row can say (another expression, or an offset
 * changed while the rule was none of REG + OFF: libdw's cfa_invalid).
 */
enum cfa_how { CFA_UNDEF, CFA_OFFSET, CFA_EXPR_REG, CFA_BAD };

/* What a row is made of: the CFA and the rules of the two registers rows name. */
struct cfa_state {
	uint8_t cfa;		/* enum cfa_how */
	uint64_t cfa_reg, cfa_off;
	struct reg_rule ra, fp;
};

/* DW_CFA_remember_state depth: GCC nests one or two; deeper fails the FDE. */
#define CFA_STACK	16

struct cfa_run {
	const struct cfi_src *s;
	const struct cie_info *cie;
	uint64_t ra_reg, fp_reg;
	const struct cfa_state *init;	/* the CIE's state (restore): NULL in the CIE's program */
	struct cfa_state st;
	struct cfa_state saved[CFA_STACK];
	size_t depth;
	uint64_t loc;
};

/* Registers whose rule before any CIE is RULE (from FIRST to LAST). */
struct abi_regs {
	uint16_t first, last;
	uint8_t rule;
};

/*
 * libdw starts every CIE from its backend's ABI rules (backends/<arch>_cfi.c,
 * *_abi_cfi): callee-saved registers keep their value, the stack pointer
 * (and arm's pc) have rules no row can say; every other register is
 * undefined (none of these backends sets default_same_value).
 */
static const struct abi_regs abi_x86_64[] = {
	{ 0, 0, CFI_SAME }, { 6, 6, CFI_SAME }, { 7, 7, RULE_BAD }, { 12, 16, CFI_SAME },
};
static const struct abi_regs abi_aarch64[] = {
	{ 19, 30, CFI_SAME }, { 31, 31, RULE_BAD }, { 72, 79, CFI_SAME },
};
static const struct abi_regs abi_s390[] = {
	{ 6, 15, CFI_SAME }, { 24, 31, CFI_SAME },
};
static const struct abi_regs abi_riscv[] = {
	{ 1, 1, CFI_SAME }, { 2, 2, RULE_BAD }, { 8, 9, CFI_SAME }, { 18, 27, CFI_SAME },
	{ 40, 41, CFI_SAME }, { 50, 59, CFI_SAME },
};
static const struct abi_regs abi_arm[] = {
	{ 4, 8, CFI_SAME }, { 10, 11, CFI_SAME }, { 13, 13, RULE_BAD }, { 14, 14, CFI_SAME },
	{ 15, 15, RULE_BAD }, { 264, 271, CFI_SAME },
};

/* A machine's rules before any CIE: its registers', and CFA = CFA_REG + 0 (none: 0). */
struct abi {
	unsigned int machine;
	const struct abi_regs *regs;
	size_t n;
	uint64_t cfa_reg;
};

#define ABI(m, regs, cfa) { m, regs, sizeof(regs) / sizeof(regs[0]), cfa }

/* arm64's backend says x30 (its comment says sp): a CIE's DW_CFA_def_cfa replaces it. */
static const struct abi abis[] = {
	ABI(EM_X86_64, abi_x86_64, 0), ABI(EM_AARCH64, abi_aarch64, 30), ABI(EM_S390, abi_s390, 0),
	ABI(EM_RISCV, abi_riscv, 2), ABI(EM_ARM, abi_arm, 13),
};

static struct reg_rule abi_rule(const struct abi *a, uint64_t reg)
{
	for (size_t i = 0; a && i < a->n; i++)
		if (reg >= a->regs[i].first && reg <= a->regs[i].last)
			return (struct reg_rule){ a->regs[i].rule, 0 };
	return (struct reg_rule){ CFI_UNDEF, 0 };
}

/* R's state before its CIE's initial instructions. */
static void abi_state(struct cfa_run *r)
{
	const struct abi *a = NULL;

	for (size_t i = 0; i < sizeof(abis) / sizeof(*abis); i++)
		if (abis[i].machine == r->s->machine)
			a = &abis[i];
	r->st = (struct cfa_state){ .cfa = a && a->cfa_reg ? CFA_OFFSET : CFA_UNDEF,
				    .cfa_reg = a ? a->cfa_reg : 0,
				    .ra = abi_rule(a, r->ra_reg), .fp = abi_rule(a, r->fp_reg) };
}

/* REG's rule is now RULE (OFF from the CFA for CFI_AT_CFA), where a row names REG. */
static void set_rule(struct cfa_run *r, uint64_t reg, uint8_t rule, int64_t off)
{
	struct reg_rule v = { rule, 0 };

	if (rule == CFI_AT_CFA && (off < INT32_MIN || off > INT32_MAX))
		v.rule = RULE_BAD;
	else if (rule == CFI_AT_CFA)
		v.off = (int32_t)off;
	if (reg == r->ra_reg)
		r->st.ra = v;
	if (reg == r->fp_reg)
		r->st.fp = v;
}

/*
 * A DW_CFA_expression (VAL: DW_CFA_val_expression) block B of LEN bytes as
 * REG's rule: libdw's ops for it are the CFA pushed, the block's, then (VAL)
 * DW_OP_stack_value, and none at all for an empty block (undefined then).
 */
static void set_expr_rule(struct cfa_run *r, uint64_t reg, const uint8_t *b, uint64_t len, bool val)
{
	const uint8_t *p = b + 1;
	uint64_t n;

	if (!len)
		set_rule(r, reg, CFI_UNDEF, 0);
	else if (!val && b[0] == DW_OP_plus_uconst && read_leb(&p, b + len, false, &n) &&
		 p == b + len)
		set_rule(r, reg, CFI_AT_CFA, (int64_t)n);
	else
		set_rule(r, reg, RULE_BAD, 0);
}

/* DW_CFA_def_cfa_expression's block B (LEN bytes): a row says DW_OP_bregx alone, or none. */
static void set_cfa_expr(struct cfa_run *r, const uint8_t *b, uint64_t len)
{
	const uint8_t *p = b + 1;
	uint64_t reg, off;

	r->st.cfa = CFA_BAD;
	if (!len)
		r->st.cfa = CFA_UNDEF;
	else if (b[0] == DW_OP_bregx && read_leb(&p, b + len, false, &reg) &&
		 read_leb(&p, b + len, true, &off) && p == b + len)
		r->st = (struct cfa_state){ CFA_EXPR_REG, reg, off, r->st.ra, r->st.fp };
}

/* DW_CFA_def_cfa_register/_offset apply to REG + OFF only (libdw's require_cfa_offset). */
static void require_offset(struct cfa_run *r)
{
	if (r->st.cfa != CFA_OFFSET)
		r->st.cfa = CFA_BAD;
}

/* DW_CFA_restore: REG's rule as the CIE left it; none in the CIE's own program. */
static int restore(struct cfa_run *r, uint64_t reg)
{
	if (!r->init || reg > MAX_DWARF_REG)
		return -1;
	if (reg == r->ra_reg)
		r->st.ra = r->init->ra;
	if (reg == r->fp_reg)
		r->st.fp = r->init->fp;
	return 0;
}

/* SPARC's DW_CFA_GNU_window_save as libdw applies it (arm64's negate_ra_state: nothing). */
static void window_save(struct cfa_run *r)
{
	if (r->s->machine == EM_AARCH64)
		return;
	for (uint64_t reg = 8; reg < 16; reg++)
		set_rule(r, reg, RULE_BAD, 0);
	for (uint64_t reg = 16; reg < 32; reg++)
		set_rule(r, reg, CFI_AT_CFA, (int64_t)((reg - 16) * r->s->addr_size));
}

/* A register operand, within MAX_DWARF_REG as every program was scanned to be. */
static bool op_reg(const uint8_t **p, const uint8_t *end, uint64_t *reg)
{
	return read_leb(p, end, false, reg) && *reg <= MAX_DWARF_REG;
}

/* A DW_FORM_block operand: its bytes in *B, *LEN. */
static bool op_block(const uint8_t **p, const uint8_t *end, const uint8_t **b, uint64_t *len)
{
	if (!read_leb(p, end, false, len) || *len > (uint64_t)(end - *p))
		return false;
	*b = *p;
	*p += *len;
	return true;
}

/* The location advances by DELTA code alignment units. */
static void advance(struct cfa_run *r, uint64_t delta, bool *moved)
{
	r->loc += delta * r->cie->code_align;
	*moved = true;
}

/* An advance_loc1/2/4/8 operand of N bytes. */
static int op_advance(struct cfa_run *r, const uint8_t **p, const uint8_t *end, unsigned int n,
		      bool *moved)
{
	if ((size_t)(end - *p) < n)
		return -1;
	advance(r, read_uint(*p, n, r->s->big_endian), moved);
	*p += n;
	return 0;
}

/* Register rules of the extended opcodes (the ones of operand REG); -1 unknown or short. */
static int reg_op(struct cfa_run *r, uint8_t op, const uint8_t **p, const uint8_t *end)
{
	uint64_t daf = (uint64_t)r->cie->data_align, reg, v;
	const uint8_t *b;

	if (!op_reg(p, end, &reg))
		return -1;
	switch (op) {
	case DW_CFA_undefined:
		set_rule(r, reg, CFI_UNDEF, 0);
		return 0;
	case DW_CFA_same_value:
		set_rule(r, reg, CFI_SAME, 0);
		return 0;
	case DW_CFA_restore_extended:
		return restore(r, reg);
	case DW_CFA_offset_extended:
		if (!read_leb(p, end, false, &v))
			return -1;
		set_rule(r, reg, CFI_AT_CFA, (int64_t)(v * daf));
		return 0;
	case DW_CFA_offset_extended_sf:
		if (!read_leb(p, end, true, &v))
			return -1;
		set_rule(r, reg, CFI_AT_CFA, (int64_t)(v * daf));
		return 0;
	case DW_CFA_GNU_negative_offset_extended:
		if (!read_leb(p, end, false, &v))
			return -1;
		set_rule(r, reg, CFI_AT_CFA, (int64_t)(-v * daf));
		return 0;
	case DW_CFA_val_offset: case DW_CFA_val_offset_sf:
		if (!read_leb(p, end, op == DW_CFA_val_offset_sf, &v))
			return -1;
		set_rule(r, reg, RULE_BAD, 0);
		return 0;
	case DW_CFA_register:
		if (!op_reg(p, end, &v))
			return -1;
		set_rule(r, reg, RULE_BAD, 0);
		return 0;
	case DW_CFA_expression: case DW_CFA_val_expression:
		if (!op_block(p, end, &b, &v))
			return -1;
		set_expr_rule(r, reg, b, v, op == DW_CFA_val_expression);
		return 0;
	}
	return -1;
}

/* The CFA's rules. */
static int cfa_op(struct cfa_run *r, uint8_t op, const uint8_t **p, const uint8_t *end)
{
	uint64_t daf = (uint64_t)r->cie->data_align, reg, v;
	const uint8_t *b;

	switch (op) {
	case DW_CFA_def_cfa: case DW_CFA_def_cfa_sf:
		if (!op_reg(p, end, &reg) || !read_leb(p, end, op == DW_CFA_def_cfa_sf, &v))
			return -1;
		r->st.cfa = CFA_OFFSET;
		r->st.cfa_reg = reg;
		r->st.cfa_off = op == DW_CFA_def_cfa_sf ? v * daf : v;
		return 0;
	case DW_CFA_def_cfa_register:
		if (!op_reg(p, end, &reg))
			return -1;
		require_offset(r);
		r->st.cfa_reg = reg;
		return 0;
	case DW_CFA_def_cfa_offset: case DW_CFA_def_cfa_offset_sf:
		if (!read_leb(p, end, op == DW_CFA_def_cfa_offset_sf, &v))
			return -1;
		require_offset(r);
		r->st.cfa_off = op == DW_CFA_def_cfa_offset_sf ? v * daf : v;
		return 0;
	case DW_CFA_def_cfa_expression:
		if (!op_block(p, end, &b, &v))
			return -1;
		set_cfa_expr(r, b, v);
		return 0;
	}
	return reg_op(r, op, p, end);
}

/*
 * Runs the instruction at *PP (advanced past it); *MOVED when it moved the
 * location.  0, or -1 where libdw fails the row (an unknown or short
 * instruction, a restore without a state to restore).
 */
static int cfa_step(struct cfa_run *r, const uint8_t **pp, const uint8_t *end, bool *moved)
{
	const uint8_t *p = *pp;
	uint8_t op = *p++;
	uint64_t v;
	int rc = 0;

	*moved = false;
	switch (op & 0xc0) {
	case DW_CFA_advance_loc:
		advance(r, op & 0x3f, moved);
		break;
	case DW_CFA_offset:
		if (!read_leb(&p, end, false, &v))
			return -1;
		set_rule(r, op & 0x3f, CFI_AT_CFA, (int64_t)(v * (uint64_t)r->cie->data_align));
		break;
	case DW_CFA_restore:
		rc = restore(r, op & 0x3f);
		break;
	default:
		switch (op) {
		case DW_CFA_nop:
			break;
		case DW_CFA_GNU_args_size:
			rc = read_leb(&p, end, false, &v) ? 0 : -1;
			break;
		case DW_CFA_set_loc:
			rc = read_encoded(r->s, r->cie->enc, &p, end, &r->loc) ? 0 : -1;
			*moved = true;
			break;
		case DW_CFA_advance_loc1: rc = op_advance(r, &p, end, 1, moved); break;
		case DW_CFA_advance_loc2: rc = op_advance(r, &p, end, 2, moved); break;
		case DW_CFA_advance_loc4: rc = op_advance(r, &p, end, 4, moved); break;
		case DW_CFA_MIPS_advance_loc8: rc = op_advance(r, &p, end, 8, moved); break;
		case DW_CFA_remember_state:
			if (r->depth == CFA_STACK)
				return -1;
			r->saved[r->depth++] = r->st;
			break;
		case DW_CFA_restore_state:
			if (!r->depth)
				return -1;
			r->st = r->saved[--r->depth];
			break;
		case DW_CFA_GNU_window_save:
			window_save(r);
			break;
		default:
			rc = cfa_op(r, op, &p, end);
		}
	}
	*pp = p;
	return rc;
}

/* The CIE's state its FDEs start from: the ABI's, then its initial instructions. */
static int cie_state(struct cfa_run *r)
{
	const uint8_t *p = r->cie->prog;
	bool moved;

	abi_state(r);
	while (p < r->cie->prog_end)
		/* A CIE describes no address: libdw fails an advance there. */
		if (cfa_step(r, &p, r->cie->prog_end, &moved) || moved)
			return -1;
	r->depth = 0;	/* what it remembered is dropped */
	return 0;
}

/* The row of R's state from PC on (what row_of_frame made of libdw's frame state). */
static void row_of_state(const struct cfa_run *r, const struct cfi_regs *regs, uint64_t pc,
			 struct cfi_row *row)
{
	const struct cfa_state *st = &r->st;
	int64_t off = (int64_t)st->cfa_off;

	*row = (struct cfi_row){ .pc = pc, .kind = CFI_EXPR };
	if (r->cie->signal) {
		row->kind = CFI_SIGNAL;
		return;
	}
	if (st->cfa == CFA_UNDEF) {
		row->kind = CFI_END;
		return;
	}
	if (st->cfa == CFA_BAD || off < INT32_MIN || off > INT32_MAX)
		return;
	if (st->cfa_reg == (uint64_t)regs->sp)
		row->cfa_base = CFI_BASE_SP;
	else if (st->cfa_reg == (uint64_t)regs->fp)
		row->cfa_base = CFI_BASE_FP;
	else
		return;
	row->cfa_off = (int32_t)off;
	if (st->ra.rule == RULE_BAD)
		return;
	row->ra_rule = st->ra.rule;
	row->ra_off = st->ra.off;
	if (st->fp.rule == RULE_BAD)
		return;
	row->fp_rule = st->fp.rule;
	row->fp_off = st->fp.off;
	row->kind = row->ra_rule == CFI_UNDEF ? CFI_END : CFI_NORMAL;
}

/* fde_rows' own result: the FDE's program fails from here on (libdw's error). */
#define FDE_BROKEN	1

/* The row of R's state from PC on; FDE_BROKEN past MAX_FDE_STEPS rows. */
static int emit_row(const struct cfa_run *r, const struct cfi_regs *regs, uint64_t pc,
		    size_t *rows, struct cfi_table *t, size_t max_rows)
{
	struct cfi_row row;

	if (++*rows > MAX_FDE_STEPS)
		return FDE_BROKEN;
	row_of_state(r, regs, pc, &row);
	return cfi_table_push(t, max_rows, &row);
}

/*
 * The rows of the FDE F, then a gap row where it ends: its program run once,
 * a row from PC on ending at the first advance past PC (DW_CFA_set_loc may
 * go back), as libdw's frame state at each row's pc gave them.
 */
static int fde_rows(const struct cfi_src *s, const struct cfi_regs *regs, const struct fde_range *f,
		    struct cfi_table *t, size_t max_rows)
{
	struct cfa_run r = { .s = s, .cie = &s->cies[f->cie], .ra_reg = s->cies[f->cie].ra,
			     .fp_reg = (uint64_t)regs->fp };
	const uint8_t *p = (const uint8_t *)s->data->d_buf + f->prog_off, *end = p + f->prog_len;
	uint64_t f_end = fde_end(f);
	struct cfi_row gap = { .pc = f_end, .kind = CFI_GAP };
	struct cfa_state init;
	uint64_t pc = f->start;
	size_t rows = 0;
	bool moved;
	int rc = cie_state(&r) ? FDE_BROKEN : 0;

	init = r.st;
	r.init = &init;
	r.loc = f->start;
	while (!rc && p < end && pc < f_end) {
		rc = cfa_step(&r, &p, end, &moved) ? FDE_BROKEN : 0;
		if (rc || !moved || r.loc <= pc)
			continue;
		rc = emit_row(&r, regs, pc, &rows, t, max_rows);
		pc = r.loc < f_end ? r.loc : f_end;
	}
	/* The last state holds to the FDE's end. */
	if (!rc && pc < f_end)
		rc = emit_row(&r, regs, pc, &rows, t, max_rows);
	if (rc < 0)
		return rc;
	t->stats.bad_fdes += rc == FDE_BROKEN;
	t->stats.fdes++;
	return cfi_table_push(t, max_rows, &gap);
}

int cfi_program_table(const struct cfi_program *prog, size_t max_rows, struct cfi_table *t)
{
	Elf_Data data = { .d_buf = (void *)prog->fde, .d_size = prog->fde_len };
	struct cie_info cie = {
		.enc = DW_EH_PE_absptr, .signal = prog->signal, .code_align = prog->code_align,
		.data_align = prog->data_align, .ra = prog->ra, .prog = prog->cie,
		.prog_end = prog->cie + prog->cie_len,
	};
	struct cfi_src s = { .data = &data, .addr_size = 8, .machine = prog->machine,
			     .cies = &cie, .nr_cies = 1 };
	struct fde_range f = { prog->start, (uint32_t)(prog->end - prog->start), 0,
			       (uint32_t)prog->fde_len, 0 };
	struct cfi_regs regs;
	int rc;

	memset(t, 0, sizeof(*t));
	t->machine = prog->machine;
	if (cfi_regs_of(prog->machine, &regs) || prog->end <= prog->start ||
	    prog->end - prog->start > UINT32_MAX || prog->fde_len > UINT32_MAX)
		return -1;
	rc = fde_rows(&s, &regs, &f, t, max_rows);
	if (rc)
		cfi_table_free(t);
	return rc;
}

static Elf_Scn *find_section(Elf *elf, const char *want)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	const char *name;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (name && !strcmp(name, want))
			return scn;
	}
	return NULL;
}

/* Picks .eh_frame, else .debug_frame. */
static int open_cfi(struct cfi_src *s, char *err, size_t len)
{
	Elf_Scn *scn = find_section(s->elf, ".eh_frame");
	GElf_Shdr sh;

	s->eh_frame = scn != NULL;
	if (!scn)
		scn = find_section(s->elf, ".debug_frame");
	if (!scn)
		return cfi_fail(err, len, "no .eh_frame or .debug_frame");
	if (!gelf_getshdr(scn, &sh))
		return cfi_fail(err, len, "unreadable CFI section header");
	if ((sh.sh_flags & SHF_COMPRESSED) && elf_compress(scn, 0, 0) < 0)
		return cfi_fail(err, len, "cannot decompress .debug_frame: %s", elf_errmsg(-1));
	s->data = elf_getdata(scn, NULL);
	s->sh_addr = sh.sh_addr;
	if (!s->data || !s->data->d_buf)
		return cfi_fail(err, len, "unreadable CFI section");
	return 0;
}

/* The end of the executable segments: where the last EHABI entry's code ends. */
static uint64_t text_end(Elf *elf)
{
	uint64_t end = 0;
	size_t n = 0;
	GElf_Phdr ph;

	if (elf_getphdrnum(elf, &n))
		return 0;
	for (size_t i = 0; i < n; i++)
		if (gelf_getphdr(elf, i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X) &&
		    ph.p_vaddr + ph.p_memsz > end)
			end = ph.p_vaddr + ph.p_memsz;
	return end;
}

static bool section_bytes(Elf_Scn *scn, struct ehabi_section *sec)
{
	Elf_Data *d = scn ? elf_getdata(scn, NULL) : NULL;
	GElf_Shdr sh;

	if (!d || !d->d_buf || !gelf_getshdr(scn, &sh))
		return false;
	*sec = (struct ehabi_section){ .data = d->d_buf, .addr = sh.sh_addr, .size = d->d_size };
	return true;
}

/*
 * 32-bit ARM: the EHABI tables, where the file has them (GCC emits no
 * .eh_frame there; glibc's libc.so.6 has an empty one).  1: none.
 */
static int ehabi_of_elf(Elf *elf, struct cfi_table *t, char *err, size_t len)
{
	struct ehabi_section exidx, extab = { 0 };
	Elf_Scn *scn = find_section(elf, ".ARM.exidx");

	if (!scn)
		return 1;
	if (!section_bytes(scn, &exidx))
		return cfi_fail(err, len, "unreadable .ARM.exidx");
	section_bytes(find_section(elf, ".ARM.extab"), &extab);
	return ehabi_table_build(&exidx, &extab, text_end(elf), t, err, len);
}

static int build_from_elf(Elf *elf, size_t max_rows, struct cfi_table *t, char *err, size_t len)
{
	struct cfi_src s = { .elf = elf };
	struct cfi_regs regs;
	GElf_Ehdr eh;
	uint64_t last_end = 0;
	size_t i;
	int rc = -1;

	if (!gelf_getehdr(elf, &eh))
		return cfi_fail(err, len, "not an ELF file");
	t->machine = eh.e_machine;
	if (cfi_regs_of(eh.e_machine, &regs))
		return cfi_fail(err, len, "unsupported ELF machine %u", eh.e_machine);
	if (eh.e_machine == EM_ARM && (rc = ehabi_of_elf(elf, t, err, len)) <= 0) {
		if (!rc && max_rows && t->n > max_rows)
			rc = cfi_fail(err, len, "more than %zu EHABI rows", max_rows);
		return rc;
	}
	s.big_endian = eh.e_ident[EI_DATA] == ELFDATA2MSB;
	s.addr_size = eh.e_ident[EI_CLASS] == ELFCLASS64 ? 8 : 4;
	s.machine = eh.e_machine;
	if (open_cfi(&s, err, len) || walk_fdes(&s, t, err, len))
		goto out;
	for (i = 0, rc = 0; i < s.nr_fdes && !rc; i++) {
		/* Overlapping FDEs (broken input): the earlier one wins. */
		if (s.fdes[i].start < last_end) {
			t->stats.bad_fdes++;
			continue;
		}
		rc = fde_rows(&s, &regs, &s.fdes[i], t, max_rows);
		last_end = fde_end(&s.fdes[i]);
	}
	for (i = 0; i < t->n; i++)
		t->stats.expr_rows += t->rows[i].kind == CFI_EXPR;
	if (rc == -2)
		rc = cfi_fail(err, len, "more than %zu CFI rows", max_rows);
	else if (rc)
		rc = cfi_fail(err, len, "out of memory building the CFI table");
out:
	free(s.cies);
	free(s.fdes);
	return rc;
}

int cfi_table_build(const char *path, int fd, size_t max_rows, struct cfi_table *t,
		    char *err, size_t errlen)
{
	bool own_fd = path != NULL;
	Elf *elf;
	int rc;

	memset(t, 0, sizeof(*t));
	if (elf_version(EV_CURRENT) == EV_NONE)
		return cfi_fail(err, errlen, "libelf too old");
	if (own_fd) {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return cfi_fail(err, errlen, "%s: %s", path, strerror(errno));
	}
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		rc = cfi_fail(err, errlen, "not an ELF file");
	} else {
		rc = build_from_elf(elf, max_rows, t, err, errlen);
	}
	elf_end(elf);
	if (own_fd)
		close(fd);
	if (rc)
		cfi_table_free(t);
	return rc;
}

/* ---- one file's CFI, its rows built per FDE on first use ---- */

/* One FDE's rows, built on first use: exactly N, no room to grow. */
struct fde_built {
	struct cfi_row *rows;
	size_t n;
};

/* Bytes of a file: a header table. */
struct file_span {
	uint64_t off, len;
};

struct cfi_file {
	Elf *elf;
	void *map;		/* the file, mapped here (elf_memory), or NULL */
	size_t map_len;
	struct file_span keep[3];	/* the header tables, by offset: never dropped */
	bool touched;		/* pages faulted in by build_fde since the last drop */
	struct cfi_src src;	/* fdes: sorted, overlapping ones dropped */
	struct cfi_regs regs;
	unsigned int machine;
	struct fde_built *rows;	/* per FDE, built by cfi_file_lookup */
	struct cfi_table ehabi;	/* EM_ARM: all rows, built at open (one per function) */
	bool is_ehabi;
	size_t bytes;		/* memory held, for the caller's budget */
};

static void drop_overlaps(struct cfi_src *s)
{
	struct fde_range *v;
	size_t n = 0;

	/* Overlapping FDEs (broken input): the earlier one wins, as in tables. */
	for (size_t i = 0; i < s->nr_fdes; i++)
		if (!n || s->fdes[i].start >= fde_end(&s->fdes[n - 1]))
			s->fdes[n++] = s->fdes[i];
	s->nr_fdes = n;
	/* Kept while the file is: no room left from the doubling. */
	if (n && n < s->cap_fdes && (v = realloc(s->fdes, n * sizeof(*v)))) {
		s->fdes = v;
		s->cap_fdes = n;
	}
}

/*
 * F's ELF from FD: mapped by us, not by libelf (ELF_C_READ_MMAP), so that
 * drop_pages knows the mapping is the file's (libelf's fallback, a malloc'd
 * copy, must not be dropped); read through FD where it cannot be mapped.
 * Writable: elf_memory takes the image as its own (ELF_C_READ), uses the
 * section headers in place and writes them (elf_compress stores a
 * decompressed .debug_frame's size and flags there, as in a debug file of
 * Debian's: a read-only image faults).  Private, so nothing reaches the
 * file.
 */
static Elf *map_elf(struct cfi_file *f, int fd)
{
	struct stat st;
	void *map;

	if (!fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_size > 0 &&
	    (uint64_t)st.st_size <= SIZE_MAX) {
		map = mmap(NULL, st.st_size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
		if (map != MAP_FAILED) {
			f->map = map;
			f->map_len = st.st_size;
			return elf_memory(map, st.st_size);
		}
	}
	return elf_begin(fd, ELF_C_READ, NULL);
}

/*
 * The header tables libelf uses in place in the image, and may write:
 * ELF header, program and section headers, by offset, within the file.
 */
static void note_headers(struct cfi_file *f, const GElf_Ehdr *eh)
{
	size_t nph = 0, nsh = 0;
	struct file_span t, *k = f->keep;

	elf_getphdrnum(f->elf, &nph);
	elf_getshdrnum(f->elf, &nsh);
	k[0] = (struct file_span){ 0, eh->e_ehsize };
	k[1] = (struct file_span){ eh->e_phoff, (uint64_t)nph * eh->e_phentsize };
	k[2] = (struct file_span){ eh->e_shoff, (uint64_t)nsh * eh->e_shentsize };
	for (size_t i = 0; i < 3; i++) {
		if (k[i].off > f->map_len)
			k[i].off = f->map_len;
		if (k[i].len > f->map_len - k[i].off)
			k[i].len = f->map_len - k[i].off;
	}
	for (size_t i = 1; i < 3; i++)
		for (size_t j = i; j && k[j].off < k[j - 1].off; j--) {
			t = k[j];
			k[j] = k[j - 1];
			k[j - 1] = t;
		}
}

/*
 * The scan at open touched the whole CFI section: give its pages back.
 * The mapping stays; the few an FDE's rows need later fault in again from
 * the page cache, and are given back by the next cfi_file_drop_pages (a fault
 * maps 64 KiB around the page, past the section's ends too).  Kept, a
 * large library's section stayed in the RSS for the whole recording (7
 * MiB of the peak under messaging, 2026-11-26).  All pages but those of
 * the header tables: a page libelf wrote would come back as the file's,
 * its copy discarded.
 */
static void drop_pages(struct cfi_file *f)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE), from = 0, to, lo, hi;

	for (size_t i = 0; f->map && i <= 3; i++) {
		to = i < 3 ? f->keep[i].off : f->map_len;
		lo = (from + page - 1) & ~(page - 1);
		hi = to & ~(page - 1);
		if (hi > lo)
			madvise((uint8_t *)f->map + lo, hi - lo, MADV_DONTNEED);
		if (i < 3 && f->keep[i].off + f->keep[i].len > from)
			from = f->keep[i].off + f->keep[i].len;
	}
}

struct cfi_file *cfi_file_open(int fd, char *err, size_t errlen)
{
	struct cfi_file *f = calloc(1, sizeof(*f));
	struct cfi_table stats = { 0 };
	GElf_Ehdr eh;

	if (!f) {
		cfi_fail(err, errlen, "out of memory");
		return NULL;
	}
	if (elf_version(EV_CURRENT) == EV_NONE) {
		cfi_fail(err, errlen, "libelf too old");
		goto bad;
	}
	f->elf = map_elf(f, fd);
	if (!f->elf || elf_kind(f->elf) != ELF_K_ELF || !gelf_getehdr(f->elf, &eh)) {
		cfi_fail(err, errlen, "not an ELF file");
		goto bad;
	}
	f->machine = eh.e_machine;
	note_headers(f, &eh);
	if (cfi_regs_of(eh.e_machine, &f->regs)) {
		cfi_fail(err, errlen, "unsupported ELF machine %u", eh.e_machine);
		goto bad;
	}
	if (eh.e_machine == EM_ARM) {
		int rc = ehabi_of_elf(f->elf, &f->ehabi, err, errlen);

		if (rc < 0)
			goto bad;
		if (!rc) {
			f->is_ehabi = true;
			f->bytes = f->ehabi.cap * sizeof(struct cfi_row);
			drop_pages(f);
			return f;
		}
	}
	f->src.elf = f->elf;
	f->src.big_endian = eh.e_ident[EI_DATA] == ELFDATA2MSB;
	f->src.addr_size = eh.e_ident[EI_CLASS] == ELFCLASS64 ? 8 : 4;
	f->src.machine = eh.e_machine;
	/* Every program is scanned now (walk_fdes): the interpreter runs scanned ones. */
	if (open_cfi(&f->src, err, errlen) ||
	    walk_fdes(&f->src, &stats, err, errlen))
		goto bad;
	drop_overlaps(&f->src);
	f->rows = calloc(f->src.nr_fdes ? f->src.nr_fdes : 1, sizeof(*f->rows));
	if (!f->rows) {
		cfi_fail(err, errlen, "out of memory");
		goto bad;
	}
	/* The CIEs stay: their FDEs' programs start from their initial instructions. */
	f->bytes = f->src.nr_fdes * (sizeof(*f->rows) + sizeof(*f->src.fdes)) +
		   f->src.cap_cies * sizeof(*f->src.cies);
	drop_pages(f);
	return f;
bad:
	cfi_file_close(f);
	return NULL;
}

unsigned int cfi_file_machine(const struct cfi_file *f)
{
	return f->machine;
}

size_t cfi_file_bytes(const struct cfi_file *f)
{
	return f->bytes;
}

bool cfi_file_gap_is_marked(const struct cfi_file *f)
{
	return f->is_ehabi && f->ehabi.stats.fdes > 0;
}

static const struct cfi_row gap_row = { .kind = CFI_GAP };

/*
 * The rows of F's I-th FDE into F->rows[I], trimmed to their number (the
 * table grows by doubling from 64: most FDEs have a few rows).  -1 beyond
 * BUDGET bytes or broken: the FDE stays a gap, and is tried again.
 */
static int build_fde(struct cfi_file *f, size_t i, size_t budget)
{
	size_t max_rows = budget / sizeof(struct cfi_row);
	struct cfi_table t = { 0 };
	struct cfi_row *rows;
	int rc = max_rows ? fde_rows(&f->src, &f->regs, &f->src.fdes[i], &t, max_rows) : -1;

	/*
	 * Its pages are given back later, by cfi_file_drop_pages: each
	 * madvise flushes the TLB of every CPU the recorder ran on (an IPI
	 * into the profiled load), once per FDE built was a fifth of
	 * offcpu's CPU under messaging (2026-11-28).
	 */
	f->touched = true;
	if (rc || t.n < 2) {
		cfi_table_free(&t);
		return -1;
	}
	rows = realloc(t.rows, t.n * sizeof(*rows));
	f->rows[i] = (struct fde_built){ .rows = rows ? rows : t.rows, .n = t.n };
	f->bytes += t.n * sizeof(*rows);
	return 0;
}

void cfi_file_drop_pages(struct cfi_file *f)
{
	if (!f || !f->touched)
		return;
	drop_pages(f);
	f->touched = false;
}

const struct cfi_row *cfi_file_lookup(struct cfi_file *f, uint64_t pc, size_t budget)
{
	size_t lo;
	struct fde_built *fr;
	struct cfi_table t = { 0 };
	const struct cfi_row *row;

	/* EHABI rows are few and built at open; before the first, no table. */
	if (f->is_ehabi) {
		row = cfi_table_lookup(&f->ehabi, pc);
		return row ? row : &gap_row;
	}
	/* The FDE covering PC, by its start. */
	lo = sorted_upper(f->src.fdes, f->src.nr_fdes, sizeof(*f->src.fdes),
			  offsetof(struct fde_range, start), pc);
	if (!lo || pc >= fde_end(&f->src.fdes[lo - 1]))
		return &gap_row;
	fr = &f->rows[lo - 1];
	if (!fr->n && build_fde(f, lo - 1, budget))
		return NULL;
	t.rows = fr->rows;
	t.n = fr->n;
	return cfi_table_lookup(&t, pc);
}

const struct cfi_table *cfi_file_ehabi(const struct cfi_file *f)
{
	return f->is_ehabi ? &f->ehabi : NULL;
}

size_t cfi_file_fdes(const struct cfi_file *f)
{
	return f->is_ehabi ? 0 : f->src.nr_fdes;
}

uint64_t cfi_file_fde_start(const struct cfi_file *f, size_t i)
{
	return f->src.fdes[i].start;
}

uint64_t cfi_file_fde_end(const struct cfi_file *f, size_t i)
{
	return fde_end(&f->src.fdes[i]);
}

int cfi_file_table(struct cfi_file *f, size_t first, size_t n, uint64_t lo, size_t max_rows,
		   struct cfi_table *t)
{
	struct cfi_row gap = { .pc = lo, .kind = CFI_GAP };
	int rc;

	memset(t, 0, sizeof(*t));
	t->machine = f->machine;
	if (first > f->src.nr_fdes || n > f->src.nr_fdes - first)
		return -1;
	/* From LO to the first FDE no pc has a row: a gap, not "before the table". */
	rc = cfi_table_push(t, max_rows, &gap);
	for (size_t i = first; i < first + n && !rc; i++)
		rc = fde_rows(&f->src, &f->regs, &f->src.fdes[i], t, max_rows);
	drop_pages(f);
	for (size_t i = 0; i < t->n; i++)
		t->stats.expr_rows += t->rows[i].kind == CFI_EXPR;
	if (rc)
		cfi_table_free(t);
	return rc;
}

void cfi_file_close(struct cfi_file *f)
{
	if (!f)
		return;
	for (size_t i = 0; f->rows && i < f->src.nr_fdes; i++)
		free(f->rows[i].rows);
	free(f->rows);
	cfi_table_free(&f->ehabi);
	elf_end(f->elf);
	if (f->map)
		munmap(f->map, f->map_len);
	free(f->src.cies);
	free(f->src.fdes);
	free(f);
}

/*
 * libdw's out-of-memory path (__libdw_oom) reports through glibc's error(),
 * which musl lacks; elfutils' own fallback lives in libeu, not in libdw.a.
 * Weak: a libc that has error() keeps its own.
 */
__attribute__((weak)) void error(int status, int errnum, const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fputs("offcpu: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	if (errnum)
		fprintf(stderr, ": %s", strerror(errnum));
	fputc('\n', stderr);
	if (status)
		exit(status);
}

const struct cfi_row *cfi_table_lookup(const struct cfi_table *t, uint64_t pc)
{
	/* The last row whose pc <= PC. */
	size_t n = sorted_upper(t->rows, t->n, sizeof(*t->rows), offsetof(struct cfi_row, pc), pc);

	return n ? &t->rows[n - 1] : NULL;
}

void cfi_table_free(struct cfi_table *t)
{
	free(t->rows);
	memset(t, 0, sizeof(*t));
}

/* The caller's stack pointer is the CFA, but for s390x's 160-byte register save area. */
static int64_t sp_of_cfa(unsigned int machine)
{
	return machine == EM_S390 ? -160 : 0;
}

enum cfi_step_result cfi_step(unsigned int machine, const struct cfi_row *row, bool innermost,
			      struct cfi_frame *f, cfi_read_fn read, void *ctx)
{
	uint64_t cfa, ra, fp = f->fp;

	if (!row || row->kind == CFI_GAP)
		return CFI_STEP_GAP;
	if (row->kind == CFI_END)
		return CFI_STEP_END;
	if (row->kind != CFI_NORMAL)
		return CFI_STEP_UNSUPPORTED;
	cfa = (row->cfa_base == CFI_BASE_SP ? f->sp : f->fp) + (int64_t)row->cfa_off;
	switch (row->ra_rule) {
	case CFI_AT_CFA:
		if (read(ctx, cfa + (int64_t)row->ra_off, &ra))
			return CFI_STEP_UNREADABLE;
		break;
	case CFI_SAME:
		/* Only the innermost frame's link register is still live. */
		if (!innermost)
			return CFI_STEP_UNSUPPORTED;
		ra = f->lr;
		break;
	default:
		return CFI_STEP_END;
	}
	if (row->fp_rule == CFI_AT_CFA && read(ctx, cfa + (int64_t)row->fp_off, &fp))
		return CFI_STEP_UNREADABLE;
	if (ra == 0)
		return CFI_STEP_END;
	*f = (struct cfi_frame){ .pc = ra, .sp = cfa + sp_of_cfa(machine), .fp = fp };
	return CFI_STEP_OK;
}
