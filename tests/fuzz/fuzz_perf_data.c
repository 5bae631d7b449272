// SPDX-License-Identifier: GPL-2.0
/* libFuzzer: the perf.data reader (offcpu report's input) on any bytes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "format/perf_data_reader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint64_t scratch[65536 / 8];
	const struct perf_event_header *h;
	struct pd_sample s;
	struct pd_file f;
	char err[256];
	uint64_t pos = 0;
	void *copy = malloc(size ? size : 1);

	memcpy(copy, data, size);
	if (!pd_read_mem(&f, copy, size, err, sizeof(err))) {
		while (pd_next_record(&f, &pos, &h, scratch, err, sizeof(err)) > 0)
			if (h->type == PERF_RECORD_SAMPLE && !pd_parse_sample(&f, h, &s))
				for (uint64_t i = 0; i < s.nr; i++)
					scratch[0] ^= s.ips[i];
		pd_file_free(&f);
	}
	free(copy);
	return 0;
}
