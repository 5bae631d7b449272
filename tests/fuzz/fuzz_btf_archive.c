// SPDX-License-Identifier: GPL-2.0
/* libFuzzer: the embedded BTF archive reader. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "record/btf_archive.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *null;
	char err[128];
	void *btf = NULL;
	size_t len;

	if (!null)
		null = fopen("/dev/null", "w");
	if (btf_archive_find(data, size, "s390x", "6.1.0-50-s390x", &btf, &len, err, sizeof(err)) > 0)
		free(btf);
	btf_archive_list(data, size, null);
	return 0;
}
