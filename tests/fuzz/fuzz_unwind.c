// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer: the user-space unwinder (src/unwind/unwind.c) over any stack copy and
 * any rows, of x86_64, arm64 and 32-bit ARM files.  The input: a row count and rows (each for 256 bytes of
 * addresses), the registers, then the copied stack bytes.  The unwind must
 * end within its frame limit, read only inside the copy (ASan) and keep
 * only words it read.
 */
#include <elf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "unwind/unwind.h"

#define MAX_ROWS 8

struct fuzz_rows {
	size_t n;
	struct cfi_row row[MAX_ROWS];
};

static const struct cfi_row *rows(void *ctx, uint64_t pc, uint64_t *vaddr, unsigned int *machine)
{
	const struct fuzz_rows *r = ctx;
	size_t i = (pc >> 8) & 15;

	if (i >= r->n + 2)
		return NULL;	/* no file */
	*machine = pc & 0x20000 ? EM_ARM : pc & 0x10000 ? EM_AARCH64 : EM_X86_64;
	*vaddr = pc;
	return i < r->n ? &r->row[i] : NULL;	/* else a gap */
}

/* A word of the copy at ADDR: 8 bytes, or 4 zero-extended (32-bit ARM). */
static bool read_of_copy(const struct offcpu_ucopy *c, uint64_t addr, uint64_t val)
{
	uint64_t off = addr - c->sp;
	uint32_t w32;

	if (addr < c->sp || off > c->len || c->len - off < 4)
		return false;
	memcpy(&w32, c->bytes + off, 4);
	if (val == w32)
		return true;
	return c->len - off >= 8 && !memcmp(&val, c->bytes + off, 8);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_rows r = { 0 };
	struct offcpu_ucopy *c;
	struct unwind_reads reads;
	enum unwind_end end;
	uint64_t ip[127];
	size_t need;
	uint32_t n;

	if (size < 1)
		return 0;
	r.n = data[0] % (MAX_ROWS + 1);
	need = 1 + r.n * sizeof(struct cfi_row) + 4 * sizeof(uint64_t);
	if (size < need)
		return 0;
	memcpy(r.row, data + 1, r.n * sizeof(struct cfi_row));
	c = malloc(sizeof(*c) + (size - need));
	if (!c)
		return 0;
	memset(c, 0, sizeof(*c));
	memcpy(&c->pc, data + 1 + r.n * sizeof(struct cfi_row), 4 * sizeof(uint64_t));
	c->len = size - need;
	memcpy(c->bytes, data + need, c->len);
	n = unwind_stack(c, c->len, data[0] & 0x80, rows, &r, ip, 127, &end, &reads);
	if (n > 127 || end >= UNWIND_NR || reads.n > UNWIND_READS_MAX)
		__builtin_trap();
	for (uint32_t i = 0; i < reads.n; i++)
		if (!read_of_copy(c, reads.addr[i], reads.val[i]))
			__builtin_trap();
	free(c);
	return 0;
}
