// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer: the tracefs format parser of src/record/tracefs.c.  The input is
 * taken as one format file looked up for every field the BTF-free variant
 * reads, and, split at its first two NUL bytes, as the three formats of
 * sched_switch, sched_process_fork and sched_process_free.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "record/tracefs.h"

volatile unsigned result;	/* keeps the parser's results live */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const names[] = {
		"prev_state", "next_pid", "parent_pid", "child_pid", "pid", "",
	};
	const char *text = (const char *)data, *end = text + size, *part[3];
	size_t len[3];
	struct tracefs_sched t;
	struct tracefs_field f;
	char err[256];
	uint32_t id;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!tracefs_field(text, size, names[i], &f, err, sizeof(err)))
			result += f.offset + f.size;
	if (!tracefs_event_id(text, size, &id, err, sizeof(err)))
		result += id;
	for (int i = 0; i < 3; i++) {
		const char *nul = memchr(text, 0, (size_t)(end - text));

		part[i] = text;
		len[i] = (size_t)((nul && i < 2 ? nul : end) - text);
		text = nul && i < 2 ? nul + 1 : end;
	}
	if (!tracefs_sched_parse(&t, part[0], len[0], part[1], len[1], part[2], len[2],
				 err, sizeof(err)))
		result += t.switch_id;
	result += (unsigned)strlen(err);
	return 0;
}
