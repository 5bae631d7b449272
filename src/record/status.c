// SPDX-License-Identifier: GPL-2.0
/*
 * The status line: "\r" and the new text, padded with blanks over a longer
 * old one.  No terminal escape sequence, so it works on any terminal and a
 * typescript of it holds only the text and carriage returns.
 */
#include <string.h>
#include <unistd.h>

#include "record/status.h"

void status_init(struct status *s, FILE *out, uint64_t start)
{
	*s = (struct status){
		.out = out && isatty(fileno(out)) ? out : NULL,
		.start = start,
		.next = start + STATUS_INTERVAL_NS,
	};
}

static void draw(struct status *s, const char *line)
{
	size_t len = strlen(line);

	fprintf(s->out, "\r%s%*s", line, s->shown > len ? (int)(s->shown - len) : 0, "");
	if (s->shown > len)
		fprintf(s->out, "\r%s", line);
	fflush(s->out);
	s->shown = len;
}

void status_update(struct status *s, struct collector *c, uint64_t now)
{
	struct collector_progress p;
	char line[160];

	if (!s->out || now < s->next)
		return;
	s->next = now + STATUS_INTERVAL_NS;
	collector_progress(c, &p);
	snprintf(line, sizeof(line), "[ offcpu: %.1f s, %llu samples, %llu lost, %.3f MB ]",
		 (now - s->start) / 1e9, (unsigned long long)p.samples,
		 (unsigned long long)p.lost, p.bytes / 1048576.0);
	draw(s, line);
}

void status_end(struct status *s)
{
	if (!s->out || !s->shown)
		return;
	fprintf(s->out, "\r%*s\r", (int)s->shown, "");
	fflush(s->out);
	s->shown = 0;
}
