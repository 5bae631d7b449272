// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the small modules that need no kernel: the BTF archive
 * reader and the command line (perf.data: test_perf_data.c).
 * Prints "PASS name" / "FAIL name: why" lines for tests/t_unit.sh.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "record/btf_archive.h"
#include "record/cli.h"
#include "check.h"

static char dir[] = "/tmp/offcpu-unit.XXXXXX";

static void test_btf_archive(void)
{
	static const uint8_t bad[] = "OCBTFAR1\x01\0\0\0\xff\xff\0\0";
	char err[128];
	void *btf = NULL;
	size_t len;
	int r;

	r = btf_archive_find(bad, sizeof(bad) - 1, "x86_64", "1", &btf, &len, err, sizeof(err));
	result("btf-archive-bad-count", r == -1, "accepted");
	r = btf_archive_find("garbage!garbage!", 16, "x86_64", "1", &btf, &len, err, sizeof(err));
	result("btf-archive-bad-magic", r == -1, "accepted");
	r = btf_archive_find("", 0, "x86_64", "1", &btf, &len, err, sizeof(err));
	result("btf-archive-empty", r == 0, "empty archive not 'not found'");
}

static int parse(const char *line)
{
	char buf[256], *argv[32];
	struct offcpu_opts o;
	int argc = 0, r;

	snprintf(buf, sizeof(buf), "%s", line);
	for (char *t = strtok(buf, " "); t && argc < 31; t = strtok(NULL, " "))
		argv[argc++] = t;
	argv[argc] = NULL;
	r = cli_parse(&o, argc, argv);
	cli_free(&o);
	return r;
}

static void test_cli(void)
{
	struct offcpu_opts o;
	char *argv[] = { "offcpu", "-C", "0-2,5", "--off-cpu-thresh", "10", "--state", "D",
			 "--min-block", "5", NULL };

	result("cli-parse", !cli_parse(&o, 9, argv) && o.cpus.n == 4 && o.cpus.v[3] == 5 &&
	       o.thresh_ns == 10000000 && o.state_mask == 2 && o.min_block_ns == 5000 &&
	       o.system_wide, "values differ");
	cli_free(&o);
	result("cli-reject-zero-duration", parse("offcpu -d 0") == -1, "accepted");
	result("cli-reject-min-over-max", parse("offcpu --min-block 10 --max-block 5") == -1, "accepted");
	result("cli-reject-overflow", parse("offcpu --off-cpu-thresh 99999999999999999999") == -1, "accepted");
	result("cli-command", parse("offcpu -o x -- sleep 1") == 0, "rejected");
}

int main(void)
{
	char cmd[300];

	if (!mkdtemp(dir))
		return 1;
	setvbuf(stdout, NULL, _IOLBF, 0);
	freopen("/dev/null", "w", stderr);	/* the expected error lines */
	test_btf_archive();
	test_cli();
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) || failures ? 1 : 0;
}
