// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer: the whole of `offcpu report` (reader, process maps, symbols,
 * aggregation, text, SVG and pprof output) on any bytes given as perf.data.
 */
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include "report/report.h"

static void run(char **argv, int argc)
{
	report_main(argc, argv);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char path[64];
	char *text[] = { "report", "-i", path, "-n", "0", "--kallsyms", "/dev/null", NULL };
	char *svg[] = { "report", "-i", path, "--per-thread", "--kallsyms", "/dev/null",
			"--svg", "/dev/null", NULL };
	char *pprof[] = { "report", "-i", path, "--kallsyms", "/dev/null", "--pprof", "/dev/null",
			  NULL };
	FILE *f;

	if (!path[0]) {
		snprintf(path, sizeof(path), "/tmp/offcpu-fuzz-report.%d", (int)getpid());
		/* Reports go nowhere; its one-line errors: run with -close_fd_mask=2. */
		if (!freopen("/dev/null", "w", stdout))
			return 0;
	}
	f = fopen(path, "wb");
	if (!f)
		return 0;
	fwrite(data, 1, size, f);
	fclose(f);
	run(text, 7);
	run(svg, 8);
	run(pprof, 7);
	return 0;
}
