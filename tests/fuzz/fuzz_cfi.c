// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer: the CFI table builder (src/unwind/cfi.c) from any bytes: as an
 * ELF file (libdw reads its entries, cfi.c scans and interprets their
 * programs), and as a CIE's and an FDE's CFA programs given straight to the
 * interpreter, unscanned.
 */
#include <elf.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "unwind/cfi.h"

/* The boards' machines (cfi_regs_of): each ABI's initial rules. */
static const unsigned int machines[] = { EM_X86_64, EM_AARCH64, EM_S390, EM_RISCV, EM_ARM };

/*
 * Every row within the FDE [START, END), in order, and a gap at its end (a
 * gap from START alone when no row could be built).
 */
static void check_rows(const struct cfi_table *t, uint64_t start, uint64_t end)
{
	const struct cfi_row *last = t->n ? &t->rows[t->n - 1] : NULL;

	for (size_t i = 0; i < t->n; i++)
		if (t->rows[i].pc < start || t->rows[i].pc > end ||
		    (i && t->rows[i].pc <= t->rows[i - 1].pc))
			__builtin_trap();
	if (!last || last->kind != CFI_GAP || (last->pc != end && t->n > 1))
		__builtin_trap();
}

/*
 * DATA as programs: byte 0 the machine and factors, byte 1 the CIE's
 * program length, the CIE's program, then the FDE's.
 */
static void run_programs(const uint8_t *data, size_t size)
{
	struct cfi_program p = { 0 };
	struct cfi_table t;

	if (size < 2)
		return;
	p.machine = machines[data[0] % 5];
	p.code_align = 1 + (data[0] >> 3 & 3);
	p.data_align = data[0] & 0x20 ? -8 : 4;
	p.signal = data[0] & 0x40;
	p.ra = data[0] & 0x80 ? 30 : 16;
	p.cie = data + 2;
	p.cie_len = data[1] < size - 2 ? data[1] : size - 2;
	p.fde = p.cie + p.cie_len;
	p.fde_len = size - 2 - p.cie_len;
	p.start = 0x1000;
	p.end = 0x1000 + 4096;
	if (!cfi_program_table(&p, 1u << 16, &t)) {
		check_rows(&t, p.start, p.end);
		cfi_table_free(&t);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	struct cfi_table t;
	struct cfi_file *f;
	char err[256];

	if (fd < 0)
		fd = memfd_create("fuzz-cfi", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, 0) || pwrite(fd, data, size, 0) != (ssize_t)size)
		return 0;
	if (!cfi_table_build(NULL, fd, 1u << 16, &t, err, sizeof(err))) {
		/* Every row must be findable: lookups walk the whole table. */
		for (size_t i = 0; i < t.n; i++)
			if (cfi_table_lookup(&t, t.rows[i].pc) != &t.rows[i])
				__builtin_trap();
		cfi_table_free(&t);
	}
	/* The unwinder's reader: FDE rows built on demand, within a budget. */
	f = cfi_file_open(fd, err, sizeof(err));
	for (size_t i = 0; f && i < 64 && i < size / 8; i++) {
		uint64_t pc;

		memcpy(&pc, data + 8 * i, 8);
		cfi_file_lookup(f, pc % 0x100000, 1u << 20);
	}
	/* The kernel tables' builder: every FDE's rows, by parts as ktables.c asks. */
	for (size_t i = 0; f && i < cfi_file_fdes(f) && i < 256; i++)
		if (!cfi_file_table(f, i, 1, cfi_file_fde_start(f, i), 1u << 16, &t)) {
			check_rows(&t, cfi_file_fde_start(f, i), cfi_file_fde_end(f, i));
			cfi_table_free(&t);
		}
	cfi_file_close(f);
	run_programs(data, size);
	return 0;
}
