// SPDX-License-Identifier: GPL-2.0
/*
 * `offcpu report`'s own option parser: -i, -n, -p, --folded, ...
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report_int.h"

static const struct option opts[] = {
	{ "input", required_argument, NULL, 'i' },
	{ "top", required_argument, NULL, 'n' },
	{ "pid", required_argument, NULL, 'p' },
	{ "comm", required_argument, NULL, 'c' },
	{ "min-percent", required_argument, NULL, 'm' },
	{ "sort", required_argument, NULL, 's' },
	{ "per-thread", no_argument, NULL, 'T' },
	{ "folded", no_argument, NULL, 'f' },
	{ "svg", required_argument, NULL, 'S' },
	{ "pprof", required_argument, NULL, 'P' },
	{ "symfs", required_argument, NULL, 'y' },
	{ "kallsyms", required_argument, NULL, 'k' },
	{ "no-demangle", no_argument, NULL, 'D' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "wakers", no_argument, NULL, 'W' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static void usage(FILE *out)
{
	fputs("Usage: offcpu report [-i perf.data] [options]\n"
	      "Top off-CPU stacks of an offcpu recording, symbols resolved on this machine.\n"
	      "  -i, --input FILE       recording to read (default perf.data); again for\n"
	      "                         more files, read as one recording in the order given\n"
	      "                         (the rotated files of offcpu --switch-output)\n"
	      "  -n, --top N            stacks to show (default 10; 0: all)\n"
	      "  -p, --pid PID,...      only these processes\n"
	      "  -c, --comm NAME,...    only threads or processes with these names\n"
	      "  -m, --min-percent P    hide stacks below P % of the shown total\n"
	      "  -s, --sort total|count order by off-CPU time (default) or by samples\n"
	      "  -T, --per-thread       one entry per thread instead of per process\n"
	      "  -f, --folded           folded stacks for flamegraph.pl, inferno, speedscope:\n"
	      "                         'comm;root;...;leaf MICROSECONDS', user frames then\n"
	      "                         kernel frames (suffix _[k]); all stacks, no -n/-m\n"
	      "  -S, --svg FILE         write a self-contained off-CPU flame graph (SVG)\n"
	      "      --pprof FILE       write a gzipped pprof profile (go tool pprof, Pyroscope,\n"
	      "                         Parca): off-CPU ns and samples, thread/process labels;\n"
	      "                         all stacks, no -n/-m, no other output\n"
	      "      --symfs DIR        look for the recorded files under DIR (like perf)\n"
	      "                         (without it: the recorded path, then the build-id\n"
	      "                         cache $PERF_BUILDID_DIR or ~/.debug, then /proc/PID of\n"
	      "                         the live process; always checked by build-id)\n"
	      "      --kallsyms FILE    kernel symbols (default /proc/kallsyms when the\n"
	      "                         running kernel is the recorded one)\n"
	      "      --no-demangle      C++ and Rust names as they are in the file\n"
	      "  -v, --verbose          say where each file's symbols came from (its .symtab,\n"
	      "                         a debug file, .gnu_debugdata or .dynsym)\n"
	      "      --wakers           who woke the threads (a recording made with --wakers):\n"
	      "                         text: each stack, then its wakers and their shares;\n"
	      "                         folded/SVG: 'comm;sleeper root;...;leaf;--;waker leaf;\n"
	      "                         ...;waker root;waker' (interrupts: [timer], [softirq], [irq])\n"
	      "Text output: frames leaf first, [k] marks kernel frames.  A sample is one long\n"
	      "block, or the sum of a thread's short blocks with one stack (see offcpu -h).\n",
	      out);
}

static int bad(const char *opt, const char *val)
{
	fprintf(stderr, "offcpu: report: invalid %s '%s'\n", opt, val);
	return -1;
}

static int parse_num(const char *opt, const char *s, double max, double *v)
{
	char *end;

	errno = 0;
	*v = strtod(s, &end);
	if (errno || end == s || *end || !(*v >= 0) || *v > max)
		return bad(opt, s);
	return 0;
}

static int parse_pids(struct report_opts *o, const char *arg)
{
	const char *why;

	if (id_list_parse(&o->pids, arg, 0, 1, ID_PID_MAX, &why)) {
		fprintf(stderr, "offcpu: report: invalid --pid '%s': %s\n", arg, why);
		return -1;
	}
	return 0;
}

static int parse_value(struct report_opts *o, int c, const char *arg)
{
	double v;

	switch (c) {
	case 'n':
		if (parse_num("--top", arg, 1e6, &v))
			return -1;
		o->top = v;
		return 0;
	case 'p':
		return parse_pids(o, arg);
	case 'm':
		return parse_num("--min-percent", arg, 100, &o->min_pct);
	case 's':
		if (strcmp(arg, "total") && strcmp(arg, "count"))
			return bad("--sort", arg);
		o->by_count = !strcmp(arg, "count");
		return 0;
	case 'c':
		free(o->comms);
		o->comms = strdup(arg);
		return o->comms ? 0 : -1;
	}
	return -1;
}

/* 0 to go on, 1 after --help, -1 on a bad option (message printed). */
int rpt_parse_opts(struct report_opts *o, int argc, char **argv)
{
	int c;

	o->input = "perf.data";
	o->top = 10;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "i:n:p:c:m:s:TfS:vh", opts, NULL)) != -1) {
		switch (c) {
		case 'i':
			if (o->nr_inputs == MAX_INPUTS) {
				fprintf(stderr, "offcpu: report: more than %d files\n", MAX_INPUTS);
				return -1;
			}
			o->inputs[o->nr_inputs++] = optarg;
			break;
		case 'S': o->svg = optarg; break;
		case 'P': o->pprof = optarg; break;
		case 'y': o->symfs = optarg; break;
		case 'k': o->kallsyms = optarg; break;
		case 'T': o->per_thread = true; break;
		case 'f': o->folded = true; break;
		case 'D': o->raw_names = true; break;
		case 'v': o->verbose = true; break;
		case 'W': o->wakers = true; break;
		case 'h': usage(stdout); return 1;
		case '?':
		case ':':
			fprintf(stderr, "offcpu: report: bad option '%s' (try offcpu report --help)\n",
				argv[optind - 1] ? argv[optind - 1] : "?");
			return -1;
		default:
			if (parse_value(o, c, optarg))
				return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "offcpu: report: unexpected argument '%s'\n", argv[optind]);
		return -1;
	}
	if (!o->nr_inputs)
		o->inputs[o->nr_inputs++] = o->input;
	if (o->nr_inputs == 1)
		snprintf(o->shown, sizeof(o->shown), "%s", o->inputs[0]);
	else
		snprintf(o->shown, sizeof(o->shown), "%s .. %s (%zu files)", o->inputs[0],
			 o->inputs[o->nr_inputs - 1], o->nr_inputs);
	if (o->pprof && (o->svg || o->folded)) {
		fprintf(stderr, "offcpu: report: --pprof writes no other output: drop --svg/--folded\n");
		return -1;
	}
	return 0;
}
