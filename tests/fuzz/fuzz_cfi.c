// SPDX-License-Identifier: GPL-2.0
/* libFuzzer: the CFI table builder (src/unwind/cfi.c, libdw) from any bytes. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "unwind/cfi.h"

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
	cfi_file_close(f);
	return 0;
}
