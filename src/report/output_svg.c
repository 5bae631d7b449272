// SPDX-License-Identifier: GPL-2.0
/*
 * Output: the SVG flame graph of the folded stacks (flamegraph.c draws it).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/flamegraph.h"
#include "report/report_int.h"

static int add_flame(struct report *r, struct flame *fl, const struct agg *a)
{
	const char *f[MAX_FRAMES];
	char *copy = strdup(rpt_folded_line(r, a, r->buf[0], sizeof(r->buf[0]))), *save = NULL, *t;
	int n = 0, err;

	if (!copy)
		return -1;
	for (t = strtok_r(copy, ";", &save); t && n < MAX_FRAMES; t = strtok_r(NULL, ";", &save))
		f[n++] = t;
	err = flame_add(fl, f, n, a->total);
	free(copy);
	return err;
}

int rpt_write_svg(struct report *r)
{
	struct flame *fl = flame_new();
	char title[512];
	FILE *out;
	int err = !fl;

	for (size_t i = 0; i < r->n && !err; i++)
		err = add_flame(r, fl, &r->v[i]);
	snprintf(title, sizeof(title), "Off-CPU time: %s%s%s", r->o.input,
		 r->file.hostname ? " on " : "", r->file.hostname ? r->file.hostname : "");
	errno = ENOMEM;
	out = err ? NULL : fopen(r->o.svg, "w");
	err = !out || flame_write_svg(fl, out, title);
	if (out && fclose(out))
		err = 1;
	if (err)
		fprintf(stderr, "offcpu: report: cannot write %s: %s\n", r->o.svg, strerror(errno));
	flame_free(fl);
	return err ? -1 : 0;
}
