// SPDX-License-Identifier: GPL-2.0
/*
 * The rows of src/unwind/cfi.c's CFA interpreter (one pass per FDE) against
 * libdw's frame states, the builder before it (kept here as the reference:
 * dwarf_cfi_addrframe at each row's pc), every FDE of real files row for
 * row: the host's libc.so.6 and programs Debian built, Debian's cross libcs
 * (arm64, s390x, riscv64: the other ABIs' rules), the test workloads
 * (distribution-built, static musl) and offcpu itself where built; and
 * DW_CFA_remember/restore_state on a program of our own.
 *   test_cfirows [FILE...]   those files instead
 */
#include <elfutils/libdw.h>
#include <dwarf.h>
#include <fcntl.h>
#include <gelf.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "check.h"
#include "unwind/cfi.h"

/* cfi.c's MAX_FDE_STEPS: the rows of one FDE, at most. */
#define REF_MAX_ROWS	4096

/* A saved register's rule from libdw's frame state: where the caller's REGNO is. */
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

/*
 * The reference: the rows of the FDE [START, END) as cfi_file_table gives
 * one FDE's (a gap row at START first), libdw running the FDE's program
 * again for each row.
 */
static int ref_rows(Dwarf_CFI *cfi, const struct cfi_regs *regs, uint64_t start, uint64_t end,
		    struct cfi_table *t)
{
	struct cfi_row gap = { .pc = start, .kind = CFI_GAP }, row;
	Dwarf_Addr pc = start, s, e;
	size_t steps = 0;
	Dwarf_Frame *f;

	memset(t, 0, sizeof(*t));
	if (cfi_table_push(t, 0, &gap))
		return -1;
	while (pc < end) {
		if (++steps > REF_MAX_ROWS || dwarf_cfi_addrframe(cfi, pc, &f) != 0) {
			t->stats.bad_fdes++;
			break;
		}
		row_of_frame(f, regs, &row, &s, &e);
		free(f);
		if (e <= pc)
			break;
		row.pc = pc;
		if (cfi_table_push(t, 0, &row))
			return -1;
		pc = e < end ? e : end;
	}
	gap.pc = end;
	return cfi_table_push(t, 0, &gap);
}

static bool same_row(const struct cfi_row *a, const struct cfi_row *b)
{
	return a->pc == b->pc && a->kind == b->kind && a->cfa_base == b->cfa_base &&
	       a->cfa_off == b->cfa_off && a->ra_rule == b->ra_rule && a->ra_off == b->ra_off &&
	       a->fp_rule == b->fp_rule && a->fp_off == b->fp_off;
}

static void show_row(const char *who, const struct cfi_row *r)
{
	printf("  %s: pc %#llx kind %u cfa %u%+d ra %u%+d fp %u%+d\n", who,
	       (unsigned long long)r->pc, r->kind, r->cfa_base, r->cfa_off, r->ra_rule, r->ra_off,
	       r->fp_rule, r->fp_off);
}

/* Whether NEW and REF (FDE I) hold the same rows; the first difference shown. */
static bool same_table(const struct cfi_table *new, const struct cfi_table *ref, size_t i)
{
	size_t j = 0;

	while (j < new->n && j < ref->n && same_row(&new->rows[j], &ref->rows[j]))
		j++;
	if (j == new->n && j == ref->n && new->stats.bad_fdes == ref->stats.bad_fdes)
		return true;
	printf("  FDE %zu: %zu rows (%zu broken) against libdw's %zu (%zu), first apart: row %zu\n",
	       i, new->n, new->stats.bad_fdes, ref->n, ref->stats.bad_fdes, j);
	if (j < new->n)
		show_row("interpreter", &new->rows[j]);
	if (j < ref->n)
		show_row("libdw", &ref->rows[j]);
	return false;
}

/* Counts of one file's comparison. */
struct tally {
	size_t fdes, rows, differ, broken;
};

/* Every FDE of F (libdw's CFI, registers REGS) both ways into N. */
static void compare_fdes(struct cfi_file *f, Dwarf_CFI *cfi, const struct cfi_regs *regs,
			 struct tally *n)
{
	for (size_t i = 0; i < cfi_file_fdes(f); i++) {
		uint64_t start = cfi_file_fde_start(f, i), end = cfi_file_fde_end(f, i);
		struct cfi_table new, ref;
		bool built = !cfi_file_table(f, i, 1, start, 0, &new);

		/* Out of memory only (no row limit): counted apart. */
		if (ref_rows(cfi, regs, start, end, &ref) || !built) {
			n->differ++;
			cfi_table_free(&ref);
			if (built)
				cfi_table_free(&new);
			continue;
		}
		n->fdes++;
		n->rows += new.n;
		n->broken += new.stats.bad_fdes;
		if (!same_table(&new, &ref, i) && ++n->differ >= 5)
			i = cfi_file_fdes(f);	/* enough shown */
		cfi_table_free(&new);
		cfi_table_free(&ref);
	}
}

/* PATH's rows both ways: one result (rows-LABEL), or a skip where it is not there. */
static void compare_file(const char *path, const char *label)
{
	struct tally n = { 0 };
	struct cfi_regs regs;
	struct cfi_file *f;
	Dwarf_CFI *cfi;
	char name[160], err[256];
	Elf *elf;
	int fd;

	snprintf(name, sizeof(name), "rows-%s", label);
	for (char *c = name; *c; c++)
		if (*c == '/')
			*c = '-';
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		printf("SKIP %s: no %s here\n", name, path);
		return;
	}
	f = cfi_file_open(fd, err, sizeof(err));
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	cfi = elf ? dwarf_getcfi_elf(elf) : NULL;
	if (!f || !cfi || cfi_regs_of(cfi_file_machine(f), &regs)) {
		result(name, 0, "cannot read its CFI: %s", f ? dwarf_errmsg(-1) : err);
	} else {
		compare_fdes(f, cfi, &regs, &n);
		result(name, n.fdes > 0 && !n.differ,
		       "%zu of %zu FDEs apart from libdw's rows", n.differ, n.fdes);
		printf("  %s: %zu FDEs, %zu rows alike (%zu FDEs broken both ways)\n", path, n.fdes,
		       n.rows, n.broken);
	}
	if (cfi)
		dwarf_cfi_end(cfi);
	elf_end(elf);
	cfi_file_close(f);
	close(fd);
}

/*
 * remember/restore_state (x86_64: CFA = rsp + 8, return address at CFA - 8;
 * rbp saved at CFA - 16 in the body): the epilogue's rows, then the body's
 * again where restore_state brings them back.
 */
static void test_restore_state(void)
{
	static const uint8_t cie[] = { DW_CFA_def_cfa, 7, 8, DW_CFA_offset | 16, 1 };
	static const uint8_t fde[] = {
		DW_CFA_advance_loc | 1, DW_CFA_def_cfa_offset, 16, DW_CFA_offset | 6, 2,
		DW_CFA_advance_loc | 1, DW_CFA_remember_state, DW_CFA_def_cfa_offset, 8,
		DW_CFA_restore | 6,
		DW_CFA_advance_loc | 1, DW_CFA_restore_state,
	};
	struct cfi_program p = { .machine = EM_X86_64, .cie = cie, .cie_len = sizeof(cie),
				 .fde = fde, .fde_len = sizeof(fde), .code_align = 1,
				 .data_align = -8, .ra = 16, .start = 0x1000, .end = 0x1010 };
	struct cfi_table t;
	const struct cfi_row *r;
	int rc = cfi_program_table(&p, 0, &t);

	r = rc ? NULL : t.rows;
	result("restore-state", r && t.n == 5 && r[2].cfa_off == 8 && r[2].fp_rule == CFI_SAME &&
	       r[3].pc == 0x1003 && r[3].cfa_off == 16 && r[3].fp_rule == CFI_AT_CFA &&
	       r[3].fp_off == -16 && r[4].kind == CFI_GAP && !t.stats.bad_fdes,
	       "rc %d, %zu rows, row 3: cfa %+d fp %u%+d", rc, rc ? 0 : t.n, r ? r[3].cfa_off : 0,
	       r ? r[3].fp_rule : 0, r ? r[3].fp_off : 0);
	cfi_table_free(&t);
	/* A restore_state with nothing remembered: libdw fails the rows from there. */
	p.fde_len = 3;
	p.fde = (const uint8_t[]){ DW_CFA_advance_loc | 1, DW_CFA_restore_state, DW_CFA_nop };
	rc = cfi_program_table(&p, 0, &t);
	result("restore-state-unbalanced", !rc && t.n == 2 && t.stats.bad_fdes == 1 &&
	       t.rows[1].kind == CFI_GAP && t.rows[1].pc == 0x1010,
	       "rc %d, %zu rows, %zu broken", rc, rc ? 0 : t.n, rc ? 0 : t.stats.bad_fdes);
	cfi_table_free(&t);
}

/*
 * A file whose only CFI is a zlib-compressed .debug_frame (as in Debian's
 * debug files), written here: ELF header, the section, .shstrtab, the
 * section headers.  Its CIE: CFA = rsp + 8, return address at CFA - 8; its
 * FDE [0x1000, 0x1010): CFA = rsp + 16 from 0x1001.
 */
static int write_zdebug_frame(int fd)
{
	static const uint8_t frame[] = {
		/* CIE: length, id, version 1, "", code 1, data -8, ra 16, program */
		20, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 1, 0, 1, 0x78, 16,
		DW_CFA_def_cfa, 7, 8, DW_CFA_offset | 16, 1,
		DW_CFA_nop, DW_CFA_nop, DW_CFA_nop, DW_CFA_nop, DW_CFA_nop, DW_CFA_nop,
		/* FDE: length, CIE at 0, start 0x1000, range 0x10, program */
		28, 0, 0, 0, 0, 0, 0, 0,
		0x00, 0x10, 0, 0, 0, 0, 0, 0, 0x10, 0, 0, 0, 0, 0, 0, 0,
		DW_CFA_advance_loc | 1, DW_CFA_def_cfa_offset, 16,
		DW_CFA_nop, DW_CFA_nop, DW_CFA_nop, DW_CFA_nop, DW_CFA_nop,
	};
	static const char names[] = "\0.debug_frame\0.shstrtab";
	uint8_t z[256];
	uLongf zlen = sizeof(z) - sizeof(Elf64_Chdr);
	Elf64_Chdr ch = { .ch_type = ELFCOMPRESS_ZLIB, .ch_size = sizeof(frame),
			  .ch_addralign = 8 };
	Elf64_Ehdr eh = { .e_ident = { ELFMAG0, ELFMAG1, ELFMAG2, ELFMAG3, ELFCLASS64,
				       ELFDATA2LSB, EV_CURRENT },
			  .e_type = ET_DYN, .e_machine = EM_X86_64, .e_version = EV_CURRENT,
			  .e_ehsize = sizeof(eh), .e_shentsize = sizeof(Elf64_Shdr),
			  .e_shnum = 3, .e_shstrndx = 2 };
	Elf64_Shdr sh[3] = { { 0 } };
	size_t off = sizeof(eh);

	if (compress(z + sizeof(ch), &zlen, frame, sizeof(frame)) != Z_OK)
		return -1;
	memcpy(z, &ch, sizeof(ch));
	sh[1] = (Elf64_Shdr){ .sh_name = 1, .sh_type = SHT_PROGBITS, .sh_flags = SHF_COMPRESSED,
			      .sh_offset = off, .sh_size = sizeof(ch) + zlen, .sh_addralign = 8 };
	off += sh[1].sh_size;
	sh[2] = (Elf64_Shdr){ .sh_name = 14, .sh_type = SHT_STRTAB, .sh_offset = off,
			      .sh_size = sizeof(names), .sh_addralign = 1 };
	eh.e_shoff = (off + sizeof(names) + 7) & ~(size_t)7;
	if (pwrite(fd, &eh, sizeof(eh), 0) != sizeof(eh) ||
	    pwrite(fd, z, sh[1].sh_size, sh[1].sh_offset) != (ssize_t)sh[1].sh_size ||
	    pwrite(fd, names, sizeof(names), sh[2].sh_offset) != sizeof(names) ||
	    pwrite(fd, sh, sizeof(sh), eh.e_shoff) != sizeof(sh))
		return -1;
	return 0;
}

/*
 * cfi_file_open maps the file itself and hands it to libelf, which writes
 * the decompressed section's size into its header in the image: the rows
 * must come out, and the file stay as it was.
 */
static void test_compressed_debug_frame(void)
{
	char path[] = "/tmp/test_cfirows.XXXXXX", err[256] = "";
	const struct cfi_row *a = NULL, *b = NULL;
	struct cfi_file *f = NULL;
	uint8_t before[512], after[512];
	ssize_t n = -1, m = -1;
	int fd = mkstemp(path);

	if (fd >= 0 && !write_zdebug_frame(fd)) {
		n = pread(fd, before, sizeof(before), 0);
		f = cfi_file_open(fd, err, sizeof(err));
	}
	if (f) {
		a = cfi_file_lookup(f, 0x1000, 1 << 20);
		b = cfi_file_lookup(f, 0x100f, 1 << 20);
		m = pread(fd, after, sizeof(after), 0);
	}
	result("zdebug-frame", a && b && a->kind == CFI_NORMAL && a->cfa_off == 8 &&
	       a->ra_rule == CFI_AT_CFA && a->ra_off == -8 && b->kind == CFI_NORMAL &&
	       b->cfa_off == 16 && n > 0 && n == m && !memcmp(before, after, n),
	       "%s; cfa %+d %+d, file %zd then %zd bytes%s", f ? "opened" : err,
	       a ? a->cfa_off : 0, b ? b->cfa_off : 0, n, m,
	       n > 0 && n == m && memcmp(before, after, n) ? ", changed" : "");
	cfi_file_close(f);
	if (fd >= 0) {
		close(fd);
		unlink(path);
	}
}

/* RssFile of this process, kB (the CFI section's pages in the mapping). */
static long rss_file_kb(void)
{
	char line[128];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "RssFile: %ld", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb;
}

/*
 * Lookups keep the CFI pages they fault in until cfi_file_drop_pages (a
 * madvise per FDE built flushed the TLB of every CPU each time), which
 * gives them back.
 */
static void test_drop_pages(const char *path)
{
	char err[256] = "";
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct cfi_file *f = fd >= 0 ? cfi_file_open(fd, err, sizeof(err)) : NULL;
	long opened, looked, dropped;
	size_t n = f ? cfi_file_fdes(f) : 0;

	if (!f || n < 1000) {
		printf("SKIP drop-pages: %s: %s\n", path, f ? "too few FDEs" : err);
		goto out;
	}
	opened = rss_file_kb();
	for (size_t i = 0; i < n; i++)
		cfi_file_lookup(f, cfi_file_fde_start(f, i), 64 << 20);
	looked = rss_file_kb();
	cfi_file_drop_pages(f);
	dropped = rss_file_kb();
	result("drop-pages", looked - opened >= 64 && looked - dropped >= 64,
	       "RssFile %ld kB at open, %ld after %zu lookups, %ld after the drop",
	       opened, looked, n, dropped);
out:
	cfi_file_close(f);
	if (fd >= 0)
		close(fd);
}

/* NAME of the x86_64 build beside this binary (build/x86_64/NAME), if made. */
static void built_path(const char *name, char *out, size_t len)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	self[n > 0 ? n : 0] = '\0';
	snprintf(out, len, "%s/../x86_64/%s", dirname(self), name);
}

int main(int argc, char **argv)
{
	static const char *const files[] = {
		"/lib/x86_64-linux-gnu/libc.so.6", "/usr/bin/bash", "/usr/bin/perl",
		"/usr/bin/python3", "/usr/bin/gdb",
		"/usr/aarch64-linux-gnu/lib/libc.so.6", "/usr/s390x-linux-gnu/lib/libc.so.6",
		"/usr/riscv64-linux-gnu/lib/libc.so.6",
	};
	/* The distribution-built workload, the static one (musl), offcpu itself. */
	static const char *const built[] = { "distro", "blocker", "offcpu" };
	char path[PATH_MAX + 32];

	elf_version(EV_CURRENT);
	test_restore_state();
	test_compressed_debug_frame();
	test_drop_pages("/lib/x86_64-linux-gnu/libc.so.6");
	if (argc > 1) {
		for (int i = 1; i < argc; i++)
			compare_file(argv[i], argv[i]);
		return failures != 0;
	}
	for (size_t i = 0; i < sizeof(files) / sizeof(*files); i++)
		compare_file(files[i], files[i] + 1);
	for (size_t i = 0; i < sizeof(built) / sizeof(*built); i++) {
		built_path(built[i], path, sizeof(path));
		compare_file(path, built[i]);
	}
	return failures != 0;
}
