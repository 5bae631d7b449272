// SPDX-License-Identifier: GPL-2.0
/*
 * `offcpu report`: the top off-CPU stacks of a perf.data we wrote, with
 * symbols resolved on this machine; folded stacks; an SVG flame graph;
 * pprof.  This file runs the steps; each has its module (report_int.h).
 */
#include <stdio.h>
#include <stdlib.h>

#include "report/report.h"
#include "report/report_int.h"

static void warn_missing(const struct report *r)
{
	const char *first;
	size_t n = sym_nr_missing(r->sym, &first);

	if (n)
		fprintf(stderr, "offcpu: report: warning: %s%s not found: %s frames are [unknown]%s\n",
			first, n > 1 ? " and other files" : "", n > 1 ? "their" : "its",
			r->o.symfs ? "" : " (--symfs DIR?)");
}

static void cleanup(struct report *r)
{
	for (size_t i = 0; i < r->n; i++)
		free(r->v[i].frames);
	free(r->v);
	key_set_free(&r->aggs);
	for (size_t i = 0; i < r->nr_blocked; i++)
		free(r->blocked[i].frames);
	free(r->blocked);
	free(r->chain);
	free(r->pend.frames);
	str_set_free(&r->names);
	sym_free(r->sym);
	pd_file_free(&r->file);
	free(r->o.comms);
	id_list_free(&r->o.pids);
	free(r);
}

int report_main(int argc, char **argv)
{
	struct report *r = calloc(1, sizeof(*r));
	int ret = 1;

	if (!r)
		goto out;
	ret = rpt_parse_opts(&r->o, argc, argv);
	if (ret) {
		/* --help, or a bad option or value: 2, as offcpu's own (docs/offcpu.1). */
		ret = ret > 0 ? 0 : 2;
		goto out;
	}
	/* pprof's samples carry their thread: one aggregate per thread. */
	if (r->o.pprof)
		r->o.per_thread = true;
	ret = 1;
	for (size_t i = 0; i < r->o.nr_inputs; i++)
		if (rpt_read_input(r, i))
			goto out;
	r->o.input = r->o.shown;
	rpt_sort_aggs(r);
	warn_missing(r);
	if (r->o.pprof) {
		ret = rpt_write_pprof(r) ? 1 : 0;
		goto out;
	}
	if (r->o.folded)
		rpt_print_folded(r);
	else if (!r->o.svg) {
		rpt_print_text(r);
		rpt_print_blocked(r);
	}
	ret = r->o.svg && rpt_write_svg(r) ? 1 : 0;
out:
	if (r)
		cleanup(r);
	return ret;
}
