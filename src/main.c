// SPDX-License-Identifier: GPL-2.0
/* offcpu: the entry point, dispatching to each subcommand. */
#include <stdio.h>
#include <time.h>

#include "archive/archive.h"
#include "lib/clock.h"
#include "record/btf_archive.h"
#include "record/child.h"
#include "record/cli.h"
#include "record/embed.h"
#include "record/loader.h"
#include "record/probe.h"
#include "record/session.h"
#include "record/target.h"
#include "report/report.h"

static int selftest(void)
{
	if (loader_selftest(stdout))
		return 1;
	printf("btf archive: %zu bytes\n", (size_t)(offcpu_btf_archive_end - offcpu_btf_archive));
	return btf_archive_list(offcpu_btf_archive, offcpu_btf_archive_end - offcpu_btf_archive,
				stdout) < 0;
}

/* Probe, then load the chosen variant (without attaching) to prove it. */
static int probe_cmd(const struct offcpu_opts *o)
{
	struct loader ld = { 0 };
	struct target t = { 0 };
	struct probe p;
	struct plan pl;
	uint64_t t0;
	int err = probe_kernel(&p, o->btf_path, o->variant, o->backend,
			      cli_bpf_option(o) != NULL);

	if (!err && p.perf_backend) {
		probe_print(&p, stdout);
		printf("load: nothing to load (perf events are opened when recording)\n");
	} else if (!err) {
		probe_print(&p, stdout);
		fflush(stdout);
		t0 = clock_ns(CLOCK_MONOTONIC);
		plan_resolve(&pl, o, &p);
		err = target_init(&t, o) || loader_load(&ld, o, &t, &p, &pl);
		if (!err)
			printf("load: ok (%.1f ms, %.2f MiB locked)\n",
			       (clock_ns(CLOCK_MONOTONIC) - t0) / 1e6, ld.memlock / 1048576.0);
		loader_close(&ld);
	}
	target_free(&t);
	probe_cleanup(&p);
	return err ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct offcpu_opts o;
	int ret, sig = 0;

	if (cli_parse(&o, argc, argv)) {
		cli_free(&o);
		return 2;
	}
	/* Before the probe parses --btf: libbpf speaks only through -v. */
	loader_set_verbosity(o.verbose);
	switch (o.cmd) {
	case CMD_HELP:
		cli_usage(stdout);
		ret = 0;
		break;
	case CMD_VERSION:
		printf("offcpu %s (%s; %s)\n", OFFCPU_VERSION, OFFCPU_TARGET, OFFCPU_LIBS);
		ret = loader_libbpf_matches() ? 1 : 0;
		break;
	case CMD_SELFTEST:
		ret = selftest();
		break;
	case CMD_PROBE:
		ret = probe_cmd(&o);
		break;
	case CMD_REPORT:
		ret = report_main(o.report_argc, o.report_argv);
		break;
	case CMD_ARCHIVE:
		ret = archive_main(o.report_argc, o.report_argv);
		break;
	default:
		ret = session_run(&o, &sig);
		break;
	}
	cli_free(&o);
	fflush(NULL);
	child_raise(sig);	/* returns for signals that do not kill */
	return ret;
}
