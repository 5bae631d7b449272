// SPDX-License-Identifier: GPL-2.0
/*
 * Compact unwinding tables from .eh_frame/.debug_frame (see cfi.h).
 *
 * libdw interprets the CFI (dwarf_cfi_addrframe gives the register rules
 * and the pc range of each row).  libdw has no call that lists the FDEs, so
 * they are walked with dwarf_next_cfi and only each FDE's initial_location
 * is decoded here (its pointer encoding comes from the CIE's augmentation).
 * The input is untrusted: every read is bounded by the section.  libdw
 * accepts register numbers up to 2^27 in CFA instructions and grows its
 * frame state to match (up to 2 GiB and seconds of memset per row: found by
 * fuzz_cfi, tests/fuzz/corpus/cfi/cfi-slow-unit-*), so every CIE and FDE
 * program is scanned first and a file with a register number beyond
 * MAX_DWARF_REG anywhere is refused whole.  Not covered: a hostile
 * .eh_frame_hdr can point libdw's FDE search into the middle of an entry.
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
#include <unistd.h>

#include "lib/sorted.h"
#include "unwind/cfi.h"
#include "unwind/ehabi.h"

/* Rows per FDE: Debian's libc has at most a few hundred. */
#define MAX_FDE_STEPS	4096

/* Above every architecture's DWARF register numbers (x86_64 ~130, arm64 ~100). */
#define MAX_DWARF_REG	1024

/* What one FDE covers. */
struct fde_range {
	uint64_t start, end;
};

/* The FDE pointer encoding of one CIE, by section offset. */
struct cie_enc {
	uint64_t offset;
	uint8_t enc;
	bool aug_z;	/* FDEs carry augmentation data to skip */
};

struct cfi_src {
	Elf *elf;
	Elf_Data *data;		/* the CFI section's bytes */
	uint64_t sh_addr;	/* for pc-relative pointers */
	bool eh_frame;
	bool big_endian;
	unsigned int addr_size;
	struct cie_enc *cies;
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

/* Results of add_cie/add_fde: -1 out of memory, or one of these. */
enum { ENTRY_OK, ENTRY_SKIPPED, ENTRY_REFUSED };

/* A CIE whose program fails the scan refuses the file. */
static int add_cie(struct cfi_src *s, uint64_t offset, const Dwarf_CIE *cie)
{
	struct cie_enc *v = grow(s->cies, &s->cap_cies, s->nr_cies + 1, sizeof(*v));
	bool aug_z = cie->augmentation && cie->augmentation[0] == 'z';

	if (!v)
		return -1;
	s->cies = v;
	v[s->nr_cies++] = (struct cie_enc){ offset, cie_fde_encoding(s, cie), aug_z && s->eh_frame };
	if (cie->return_address_register > MAX_DWARF_REG ||
	    !scan_program(s, DW_EH_PE_absptr, cie->initial_instructions,
			  cie->initial_instructions_end))
		return ENTRY_REFUSED;
	return ENTRY_OK;
}

static const struct cie_enc *find_cie(const struct cfi_src *s, uint64_t offset)
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
	const struct cie_enc *cie = find_cie(s, fde->CIE_pointer);
	const uint8_t *p = fde->start;
	uint64_t start, len;
	struct fde_range *v;

	/* What cannot be decoded could not be scanned: libdw must not run it. */
	if (!cie || !read_encoded(s, cie->enc, &p, fde->end, &start) ||
	    !read_encoded(s, cie->enc & 0x0f, &p, fde->end, &len) ||
	    (cie->aug_z && !skip_block(&p, fde->end)) || !scan_program(s, cie->enc, p, fde->end))
		return ENTRY_REFUSED;
	/* An empty FDE (a function the linker dropped) covers nothing. */
	if (len == 0 || start + len < start)
		return ENTRY_SKIPPED;
	v = grow(s->fdes, &s->cap_fdes, s->nr_fdes + 1, sizeof(*v));
	if (!v)
		return -1;
	s->fdes = v;
	v[s->nr_fdes++] = (struct fde_range){ start, start + len };
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

/* A saved register's rule: where the caller's value of REGNO is. */
static int reg_rule(Dwarf_Frame *f, int regno, uint8_t *rule, int32_t *off)
{
	Dwarf_Op mem[3], *ops;
	size_t nops;
	int64_t v = 0;

	*off = 0;
	if (dwarf_frame_register(f, regno, mem, &ops, &nops) != 0)
		return -1;	/* error, or a value expression */
	if (nops == 0) {
		*rule = ops ? CFI_UNDEF : CFI_SAME;
		return 0;
	}
	if (ops[0].atom != DW_OP_call_frame_cfa || nops > 2)
		return -1;
	if (nops == 2) {
		if (ops[1].atom != DW_OP_plus_uconst)
			return -1;
		v = (int64_t)ops[1].number;
	}
	if (v < INT32_MIN || v > INT32_MAX)
		return -1;
	*rule = CFI_AT_CFA;
	*off = (int32_t)v;
	return 0;
}

/* One row from libdw's frame state; its range in *START, *END. */
static void row_of_frame(Dwarf_Frame *f, const struct cfi_regs *regs, struct cfi_row *row,
			 Dwarf_Addr *start, Dwarf_Addr *end)
{
	Dwarf_Op *ops;
	size_t nops;
	bool signalp = false;
	int ra;

	memset(row, 0, sizeof(*row));
	ra = dwarf_frame_info(f, start, end, &signalp);
	row->pc = *start;
	row->kind = CFI_EXPR;
	if (signalp) {
		row->kind = CFI_SIGNAL;
		return;
	}
	if (dwarf_frame_cfa(f, &ops, &nops) != 0)
		return;
	if (nops == 0) {
		row->kind = CFI_END;
		return;
	}
	if (nops != 1 || ops[0].atom != DW_OP_bregx ||
	    (int64_t)ops[0].number2 < INT32_MIN || (int64_t)ops[0].number2 > INT32_MAX)
		return;
	if (ops[0].number == (Dwarf_Word)regs->sp)
		row->cfa_base = CFI_BASE_SP;
	else if (ops[0].number == (Dwarf_Word)regs->fp)
		row->cfa_base = CFI_BASE_FP;
	else
		return;
	row->cfa_off = (int32_t)ops[0].number2;
	if (reg_rule(f, ra >= 0 ? ra : regs->ra, &row->ra_rule, &row->ra_off) ||
	    reg_rule(f, regs->fp, &row->fp_rule, &row->fp_off))
		return;
	row->kind = row->ra_rule == CFI_UNDEF ? CFI_END : CFI_NORMAL;
}

static bool same_rules(const struct cfi_row *a, const struct cfi_row *b)
{
	return a->kind == b->kind && a->cfa_base == b->cfa_base && a->cfa_off == b->cfa_off &&
	       a->ra_rule == b->ra_rule && a->ra_off == b->ra_off &&
	       a->fp_rule == b->fp_rule && a->fp_off == b->fp_off;
}

/* Appends ROW unless the previous row already says the same. */
static int push_row(struct cfi_table *t, size_t max_rows, const struct cfi_row *row)
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

/* The rows of one FDE, then a gap row where it ends. */
static int fde_rows(Dwarf_CFI *cfi, const struct cfi_regs *regs, const struct fde_range *r,
		    struct cfi_table *t, size_t max_rows)
{
	struct cfi_row row;
	Dwarf_Frame *f;
	Dwarf_Addr pc = r->start, start, end;
	size_t steps = 0;
	int rc;

	while (pc < r->end) {
		/* Each step re-runs the FDE's program: bound the quadratic cost. */
		if (++steps > MAX_FDE_STEPS || dwarf_cfi_addrframe(cfi, pc, &f) != 0) {
			t->stats.bad_fdes++;
			break;
		}
		row_of_frame(f, regs, &row, &start, &end);
		free(f);
		if (end <= pc)
			break;	/* no progress: malformed */
		/* libdw may have found another FDE (bad input): stay in ours. */
		if (end > r->end)
			end = r->end;
		row.pc = pc;
		rc = push_row(t, max_rows, &row);
		if (rc)
			return rc;
		pc = end;
	}
	t->stats.fdes++;
	row = (struct cfi_row){ .pc = r->end, .kind = CFI_GAP };
	return push_row(t, max_rows, &row);
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

/* Picks .eh_frame, else .debug_frame; opens libdw's reader of the same. */
static int open_cfi(struct cfi_src *s, Dwarf **dw, Dwarf_CFI **cfi, char *err, size_t len)
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
	if (s->eh_frame) {
		*cfi = dwarf_getcfi_elf(s->elf);
	} else {
		*dw = dwarf_begin_elf(s->elf, DWARF_C_READ, NULL);
		*cfi = *dw ? dwarf_getcfi(*dw) : NULL;
	}
	if (!*cfi)
		return cfi_fail(err, len, "libdw cannot read the CFI: %s", dwarf_errmsg(-1));
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
	Dwarf *dw = NULL;
	Dwarf_CFI *cfi = NULL;
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
	if (open_cfi(&s, &dw, &cfi, err, len) || walk_fdes(&s, t, err, len))
		goto out;
	for (i = 0, rc = 0; i < s.nr_fdes && !rc; i++) {
		/* Overlapping FDEs (broken input): the earlier one wins. */
		if (s.fdes[i].start < last_end) {
			t->stats.bad_fdes++;
			continue;
		}
		rc = fde_rows(cfi, &regs, &s.fdes[i], t, max_rows);
		last_end = s.fdes[i].end;
	}
	for (i = 0; i < t->n; i++)
		t->stats.expr_rows += t->rows[i].kind == CFI_EXPR;
	if (rc == -2)
		rc = cfi_fail(err, len, "more than %zu CFI rows", max_rows);
	else if (rc)
		rc = cfi_fail(err, len, "out of memory building the CFI table");
out:
	if (dw)
		dwarf_end(dw);
	/* dwarf_getcfi_elf's handle is the caller's to end; dwarf_end ends dwarf_getcfi's. */
	else if (cfi)
		dwarf_cfi_end(cfi);
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

struct cfi_file {
	Elf *elf;
	Dwarf *dw;		/* .debug_frame only */
	Dwarf_CFI *cfi;
	struct cfi_src src;	/* fdes: sorted, overlapping ones dropped */
	struct cfi_regs regs;
	unsigned int machine;
	struct cfi_table *rows;	/* per FDE, built by cfi_file_lookup */
	struct cfi_table ehabi;	/* EM_ARM: all rows, built at open (one per function) */
	bool is_ehabi;
	size_t bytes;		/* memory held, for the caller's budget */
};

static void drop_overlaps(struct cfi_src *s)
{
	size_t n = 0;

	/* Overlapping FDEs (broken input): the earlier one wins, as in tables. */
	for (size_t i = 0; i < s->nr_fdes; i++)
		if (!n || s->fdes[i].start >= s->fdes[n - 1].end)
			s->fdes[n++] = s->fdes[i];
	s->nr_fdes = n;
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
	f->elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!f->elf || elf_kind(f->elf) != ELF_K_ELF || !gelf_getehdr(f->elf, &eh)) {
		cfi_fail(err, errlen, "not an ELF file");
		goto bad;
	}
	f->machine = eh.e_machine;
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
			return f;
		}
	}
	f->src.elf = f->elf;
	f->src.big_endian = eh.e_ident[EI_DATA] == ELFDATA2MSB;
	f->src.addr_size = eh.e_ident[EI_CLASS] == ELFCLASS64 ? 8 : 4;
	/* Every program is scanned now (walk_fdes): libdw never sees a hostile one. */
	if (open_cfi(&f->src, &f->dw, &f->cfi, err, errlen) ||
	    walk_fdes(&f->src, &stats, err, errlen))
		goto bad;
	drop_overlaps(&f->src);
	f->rows = calloc(f->src.nr_fdes ? f->src.nr_fdes : 1, sizeof(*f->rows));
	if (!f->rows) {
		cfi_fail(err, errlen, "out of memory");
		goto bad;
	}
	f->bytes = f->src.nr_fdes * (sizeof(*f->rows) + sizeof(*f->src.fdes));
	free(f->src.cies);
	f->src.cies = NULL;
	f->src.nr_cies = f->src.cap_cies = 0;
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

const struct cfi_row *cfi_file_lookup(struct cfi_file *f, uint64_t pc, size_t budget)
{
	size_t lo;
	struct cfi_table *t;
	const struct cfi_row *row;

	/* EHABI rows are few and built at open; before the first, no table. */
	if (f->is_ehabi) {
		row = cfi_table_lookup(&f->ehabi, pc);
		return row ? row : &gap_row;
	}
	/* The FDE covering PC, by its start. */
	lo = sorted_upper(f->src.fdes, f->src.nr_fdes, sizeof(*f->src.fdes),
			  offsetof(struct fde_range, start), pc);
	if (!lo || pc >= f->src.fdes[lo - 1].end)
		return &gap_row;
	t = &f->rows[lo - 1];
	if (!t->n) {
		size_t max_rows = budget / sizeof(struct cfi_row);

		/* Beyond the budget (or broken): the FDE stays a gap, and is tried again. */
		if (!max_rows || fde_rows(f->cfi, &f->regs, &f->src.fdes[lo - 1], t, max_rows) ||
		    t->n < 2) {
			cfi_table_free(t);
			return NULL;
		}
		t->machine = f->machine;
		f->bytes += t->cap * sizeof(struct cfi_row);
	}
	return cfi_table_lookup(t, pc);
}

size_t cfi_file_fdes(const struct cfi_file *f)
{
	return f->is_ehabi ? 0 : f->src.nr_fdes;
}

uint64_t cfi_file_fde_start(const struct cfi_file *f, size_t i)
{
	return f->src.fdes[i].start;
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
	rc = push_row(t, max_rows, &gap);
	for (size_t i = first; i < first + n && !rc; i++)
		rc = fde_rows(f->cfi, &f->regs, &f->src.fdes[i], t, max_rows);
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
		cfi_table_free(&f->rows[i]);
	free(f->rows);
	cfi_table_free(&f->ehabi);
	if (f->dw)
		dwarf_end(f->dw);
	else if (f->cfi)
		dwarf_cfi_end(f->cfi);
	elf_end(f->elf);
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
