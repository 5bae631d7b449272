// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the modules that need no kernel: perf.data writer/reader
 * round trip and robustness, the BTF archive reader, the command line.
 * Prints "PASS name" / "FAIL name: why" lines for tests/t_unit.sh.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "btf_archive.h"
#include "cli.h"
#include "check.h"
#include "perf_data_reader.h"

static char dir[] = "/tmp/offcpu-unit.XXXXXX";

static void path_of(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", dir, name);
}

/* A file with two events, a COMM, a sample with a callchain, features. */
static int write_sample_file(const char *path)
{
	struct perf_event_attr a = { .type = PERF_TYPE_SOFTWARE, .size = sizeof(a),
		.config = PERF_COUNT_SW_BPF_OUTPUT, .sample_type = PERF_SAMPLE_IDENTIFIER |
		PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
		PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN, .sample_id_all = 1 };
	uint64_t id = 77, dids[2] = { 5, 6 };
	uint64_t s[12] = { 0 };
	struct pd_writer *w = pd_open(path);
	char *argv[] = { "offcpu", "-d", "1" };
	uint8_t bid[20] = { 1, 2, 3 };

	if (!w)
		return -1;
	s[0] = PERF_RECORD_SAMPLE | ((uint64_t)(12 * 8) << 48);
	s[1] = 77;			/* id */
	s[2] = 0x401000;		/* ip */
	s[3] = 42 | (43ull << 32);	/* pid, tid */
	s[4] = 1000;			/* time */
	s[5] = 1;			/* cpu */
	s[6] = 123456789;		/* period */
	s[7] = 4;			/* nr */
	s[8] = PERF_CONTEXT_USER;
	s[9] = 0x401000;
	s[10] = 0x401100;
	s[11] = 0x401200;
	if (pd_write(w, (struct perf_event_header *)s) || pd_finish_round(w))
		return -1;
	pd_add_event(w, "offcpu-time", &a, &id, 1);
	a.config = PERF_COUNT_SW_DUMMY;
	a.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
	pd_add_event(w, "dummy:u", &a, dids, 2);
	pd_set_string(w, PD_FEAT_HOSTNAME, "unit-host");
	pd_set_string(w, PD_FEAT_OSRELEASE, "9.9.9");
	pd_set_string(w, PD_FEAT_ARCH, "x86_64");
	pd_set_nrcpus(w, 4, 2);
	pd_set_cmdline(w, 3, argv);
	pd_add_build_id(w, PERF_RECORD_MISC_USER, -1, bid, 20, "/bin/true");
	return pd_close(w);
}

static void test_round_trip(void)
{
	char path[256], err[256];
	struct pd_file f;
	const struct perf_event_header *h;
	static uint64_t scratch[65536 / 8];
	struct pd_sample s;
	uint64_t pos = 0;
	struct stat st;
	int n = 0, ok;

	path_of(path, sizeof(path), "rt.data");
	if (write_sample_file(path)) {
		result("perf-data-write", 0, "%s", strerror(errno));
		return;
	}
	result("perf-data-mode-0600", !stat(path, &st) && (st.st_mode & 0777) == 0600, "mode");
	if (pd_read_file(&f, path, err, sizeof(err))) {
		result("perf-data-read", 0, "%s", err);
		return;
	}
	result("perf-data-events", f.nr_events == 2 && f.events[1].nr_ids == 2 &&
	       f.events[1].ids[1] == 6 && f.events[0].attr.config == PERF_COUNT_SW_BPF_OUTPUT, "events differ");
	result("perf-data-features", f.hostname && !strcmp(f.hostname, "unit-host") &&
	       f.osrelease && !strcmp(f.osrelease, "9.9.9"), "features differ");
	while (pd_next_record(&f, &pos, &h, scratch, err, sizeof(err)) > 0) {
		n++;
		if (h->type != PERF_RECORD_SAMPLE)
			continue;
		ok = !pd_parse_sample(&f, h, &s) && s.pid == 42 && s.tid == 43 &&
		     s.period == 123456789 && s.nr == 4 && s.ips[3] == 0x401200 && s.cpu == 1;
		result("perf-data-sample", ok, "sample fields differ");
	}
	result("perf-data-records", n == 2, "expected a sample and a round");
	pd_file_free(&f);
}

/* Every truncation and many corruptions: an error or success, no crash. */
static void test_robust(void)
{
	char path[256], err[256];
	static uint64_t scratch[65536 / 8];
	uint8_t *buf;
	size_t len;
	FILE *fp;
	int short_accepted = -1, whole_samples = 0;

	path_of(path, sizeof(path), "rt.data");
	fp = fopen(path, "rb");
	if (!fp)
		return;
	buf = malloc(1 << 20);
	len = fread(buf, 1, 1 << 20, fp);
	fclose(fp);
	for (size_t cut = 0; cut <= len; cut++) {
		struct pd_file f;
		const struct perf_event_header *h;
		struct pd_sample s;
		uint64_t pos = 0;
		uint8_t *copy = malloc(cut + 1);

		memcpy(copy, buf, cut);
		/* Flip one byte beyond the header as well, for half the runs. */
		if (cut > 120 && cut % 2)
			copy[cut / 2] ^= 0xff;
		if (!pd_read_mem(&f, copy, cut, err, sizeof(err))) {
			/* Shorter than the file header: must have been refused. */
			if (cut < sizeof(struct perf_event_header) + 96 && short_accepted < 0)
				short_accepted = (int)cut;
			while (pd_next_record(&f, &pos, &h, scratch, err, sizeof(err)) > 0)
				if (h->type == PERF_RECORD_SAMPLE && !pd_parse_sample(&f, h, &s))
					whole_samples += cut == len;
			pd_file_free(&f);
		}
		free(copy);
	}
	free(buf);
	/* No crash (ASan), no header accepted short, the whole file read. */
	result("perf-data-truncated-and-corrupted", short_accepted < 0 && whole_samples > 0,
	       "cut at %d accepted, %d samples in the whole file", short_accepted, whole_samples);
}

static void test_open_errors(void)
{
	char path[256], link[256];
	struct pd_writer *w;

	w = pd_open(dir);
	result("perf-data-open-directory", !w && errno == EISDIR, "directory accepted");
	w = pd_open("/nonexistent/dir/x.data");
	result("perf-data-open-missing-dir", !w, "accepted");
	/* A symlink at the final name is replaced, never written through. */
	path_of(path, sizeof(path), "target");
	path_of(link, sizeof(link), "link.data");
	close(open(path, O_CREAT | O_WRONLY, 0644));
	symlink(path, link);
	write_sample_file(link);
	{
		struct stat st;

		result("perf-data-symlink-not-followed", !stat(path, &st) && st.st_size == 0,
		       "the symlink target was written");
	}
	/* /dev/full: ENOSPC reported, not silently truncated. */
	w = pd_open("/dev/full");
	result("perf-data-dev-full-refused", !w, "a device accepted as output");
	if (w)
		pd_abort(w);
}

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
	test_round_trip();
	test_robust();
	test_open_errors();
	test_btf_archive();
	test_cli();
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) || failures ? 1 : 0;
}
