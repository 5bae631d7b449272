// SPDX-License-Identifier: GPL-2.0
/* libFuzzer: symbolization of a mapped ELF file (libelf) from any bytes. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "symbols/symbolize.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char path[64];
	struct symbolizer *s;
	FILE *f;

	if (!path[0])
		snprintf(path, sizeof(path), "/tmp/offcpu-fuzz-elf.%d", (int)getpid());
	f = fopen(path, "wb");
	if (!f)
		return 0;
	fwrite(data, 1, size, f);
	fclose(f);
	s = sym_new(NULL, NULL);
	sym_mmap(s, 1, 0x400000, 0x100000, 0, path);
	for (uint64_t a = 0x400000; a < 0x500000; a += 0x3001)
		sym_user(s, 1, a);
	sym_free(s);
	return 0;
}
