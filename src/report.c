// SPDX-License-Identifier: GPL-2.0
/*
 * `offcpu report`: the top off-CPU stacks of a perf.data we wrote, with
 * symbols resolved on this machine; folded stacks; an SVG flame graph.
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "flamegraph.h"
#include "perf_data.h"
#include "report.h"
#include "symbolize.h"

#define MAX_FRAMES	512

struct report_opts {
	const char *input, *symfs, *kallsyms, *svg, *comm;
	uint32_t pid;
	int top;
	double min_pct;
	bool by_count, per_thread, folded;
};

/* One distinct (process or thread, stack): frames root first, as folded. */
struct agg {
	char *key;		/* "comm;root;...;leaf" */
	uint32_t id;		/* pid, or tid with --per-thread */
	uint64_t total, count;
};

struct report {
	struct report_opts o;
	struct pd_file file;
	struct symbolizer *sym;
	struct agg *v;
	size_t n, cap;		/* open-addressing table of cap slots */
	uint64_t total, samples;
	char buf[65536];
};

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
	{ "symfs", required_argument, NULL, 'y' },
	{ "kallsyms", required_argument, NULL, 'k' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static void usage(FILE *out)
{
	fputs("Usage: offcpu report [-i perf.data] [options]\n"
	      "  -i, --input FILE       recording to read (default perf.data)\n"
	      "  -n, --top N            stacks to show (default 10; 0: all)\n"
	      "  -p, --pid PID          only this process\n"
	      "  -c, --comm NAME        only threads or processes named NAME\n"
	      "  -m, --min-percent P    hide stacks below P %% of the total\n"
	      "  -s, --sort total|count order by off-CPU time (default) or number of blocks\n"
	      "  -T, --per-thread       one entry per thread instead of per process\n"
	      "  -f, --folded           folded stacks (comm;root;...;leaf microseconds) for flamegraph.pl\n"
	      "  -S, --svg FILE         write an off-CPU flame graph (self-contained SVG)\n"
	      "      --symfs DIR        look for the profiled files under DIR\n"
	      "      --kallsyms FILE    kernel symbols (default /proc/kallsyms when the kernel matches)\n",
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
	if (errno || end == s || *end || *v < 0 || *v > max)
		return bad(opt, s);
	return 0;
}

static int parse_opts(struct report_opts *o, int argc, char **argv)
{
	double v;
	int c;

	memset(o, 0, sizeof(*o));
	o->input = "perf.data";
	o->top = 10;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "i:n:p:c:m:s:TfS:h", opts, NULL)) != -1) {
		switch (c) {
		case 'i': o->input = optarg; break;
		case 'c': o->comm = optarg; break;
		case 'S': o->svg = optarg; break;
		case 'y': o->symfs = optarg; break;
		case 'k': o->kallsyms = optarg; break;
		case 'T': o->per_thread = true; break;
		case 'f': o->folded = true; break;
		case 'h': usage(stdout); exit(0);
		case 'n':
			if (parse_num("--top", optarg, 1e6, &v))
				return -1;
			o->top = v;
			break;
		case 'p':
			if (parse_num("--pid", optarg, 4194304, &v) || v < 1)
				return -1;
			o->pid = v;
			break;
		case 'm':
			if (parse_num("--min-percent", optarg, 100, &o->min_pct))
				return -1;
			break;
		case 's':
			if (strcmp(optarg, "total") && strcmp(optarg, "count"))
				return bad("--sort", optarg);
			o->by_count = !strcmp(optarg, "count");
			break;
		default:
			fprintf(stderr, "offcpu: report: unknown option '%s' (try offcpu report --help)\n",
				argv[optind - 1] ? argv[optind - 1] : "?");
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "offcpu: report: unexpected argument '%s'\n", argv[optind]);
		return -1;
	}
	return 0;
}

static uint64_t hash(const char *s, uint32_t id)
{
	uint64_t h = 1469598103934665603ull ^ id;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return h;
}

static int add(struct report *r, const char *key, uint32_t id, uint64_t period)
{
	size_t i;

	if ((r->n + 1) * 2 > r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 1024;
		struct agg *nv = calloc(cap, sizeof(*nv));

		if (!nv)
			return -1;
		for (size_t j = 0; j < r->cap; j++) {
			if (!r->v[j].key)
				continue;
			for (i = hash(r->v[j].key, r->v[j].id) & (cap - 1); nv[i].key; i = (i + 1) & (cap - 1))
				;
			nv[i] = r->v[j];
		}
		free(r->v);
		r->v = nv;
		r->cap = cap;
	}
	for (i = hash(key, id) & (r->cap - 1); r->v[i].key; i = (i + 1) & (r->cap - 1))
		if (r->v[i].id == id && !strcmp(r->v[i].key, key))
			break;
	if (!r->v[i].key) {
		r->v[i].key = strdup(key);
		if (!r->v[i].key)
			return -1;
		r->v[i].id = id;
		r->n++;
	}
	r->v[i].total += period;
	r->v[i].count++;
	return 0;
}

/* Append NAME (';' would split a folded frame) to the key being built. */
static size_t append(char *buf, size_t pos, size_t len, const char *name, const char *suffix)
{
	if (pos + 2 >= len)
		return pos;
	buf[pos++] = ';';
	for (; *name && pos + 8 < len; name++)
		buf[pos++] = *name == ';' || *name == ' ' ? ':' : *name;
	for (; *suffix && pos + 1 < len; suffix++)
		buf[pos++] = *suffix;
	buf[pos] = '\0';
	return pos;
}

/* Folded order: user root .. user leaf, then kernel root .. kernel leaf. */
static int add_sample(struct report *r, const struct pd_sample *s)
{
	const uint64_t *k = NULL, *u = NULL;
	size_t nk = 0, nu = 0, pos;
	const char *comm = sym_comm_of(r->sym, s->pid, s->tid);
	const uint64_t *cur = NULL;
	size_t *ncur = NULL;

	if ((r->o.pid && s->pid != r->o.pid) || (r->o.comm && strcmp(comm, r->o.comm)))
		return 0;
	for (uint64_t i = 0; i < s->nr; i++) {
		if (s->ips[i] == PERF_CONTEXT_KERNEL) {
			k = cur = s->ips + i + 1;
			ncur = &nk;
		} else if (s->ips[i] == PERF_CONTEXT_USER) {
			u = cur = s->ips + i + 1;
			ncur = &nu;
		} else if (s->ips[i] >= PERF_CONTEXT_MAX) {
			ncur = NULL;
		} else if (ncur && cur) {
			(*ncur)++;
		}
	}
	pos = snprintf(r->buf, sizeof(r->buf), "%s", comm);
	for (size_t i = nu; i-- > 0 && nu;)
		pos = append(r->buf, pos, sizeof(r->buf), sym_user(r->sym, s->pid, u[i]), "");
	for (size_t i = nk; i-- > 0 && nk;)
		pos = append(r->buf, pos, sizeof(r->buf), sym_kernel(r->sym, k[i]), "_[k]");
	if (!nu && !nk)
		append(r->buf, pos, sizeof(r->buf), "[no stack]", "");
	r->total += s->period;
	r->samples++;
	return add(r, r->buf, r->o.per_thread ? s->tid : s->pid, s->period);
}

static bool is_offcpu(const struct pd_file *f, const struct pd_sample *s)
{
	const struct pd_event *e = pd_event_by_id(f, s->id);

	return e && e->attr.type == PERF_TYPE_SOFTWARE &&
	       e->attr.config == PERF_COUNT_SW_BPF_OUTPUT;
}

/* A NUL-terminated name at OFF in a record of BODY bytes, or NULL. */
static const char *name_at(const struct perf_event_header *h, size_t off)
{
	const char *p = (const char *)(h + 1) + off;
	size_t body = h->size - sizeof(*h);

	if (off >= body || !memchr(p, '\0', body - off))
		return NULL;
	return p;
}

/* Process bookkeeping records, in file (time) order. */
static void feed(struct report *r, const struct perf_event_header *h)
{
	const uint32_t *u = (const uint32_t *)(h + 1);
	const uint64_t *q = (const uint64_t *)(h + 1);
	size_t body = h->size - sizeof(*h);
	const char *name;

	switch (h->type) {
	case PERF_RECORD_COMM:
		if (body >= 8 && (name = name_at(h, 8)))
			sym_comm(r->sym, u[0], u[1], name, h->misc & PERF_RECORD_MISC_COMM_EXEC);
		break;
	case PERF_RECORD_MMAP:
		if (body >= 32 && (name = name_at(h, 32)))
			sym_mmap(r->sym, u[0], q[1], q[2], q[3], name);
		break;
	case PERF_RECORD_MMAP2:
		if (body >= 64 && (name = name_at(h, 64)))
			sym_mmap(r->sym, u[0], q[1], q[2], q[3], name);
		break;
	case PERF_RECORD_FORK:
		if (body >= 16)
			sym_fork(r->sym, u[0], u[1], u[2]);
		break;
	}
}

static int read_records(struct report *r)
{
	static uint64_t scratch[65536 / 8];
	const struct perf_event_header *h;
	char err[256];
	uint64_t pos = 0;
	int ret;

	while ((ret = pd_next_record(&r->file, &pos, &h, scratch, err, sizeof(err))) > 0) {
		struct pd_sample s;

		if (h->type != PERF_RECORD_SAMPLE) {
			feed(r, h);
			continue;
		}
		if (pd_parse_sample(&r->file, h, &s)) {
			fprintf(stderr, "offcpu: report: %s: malformed sample at offset %llu\n",
				r->o.input, (unsigned long long)(r->file.data_offset + pos - h->size));
			return -1;
		}
		if (is_offcpu(&r->file, &s) && add_sample(r, &s))
			return -1;
	}
	if (ret < 0)
		fprintf(stderr, "offcpu: report: %s: %s\n", r->o.input, err);
	return ret;
}

static int cmp_total(const void *a, const void *b)
{
	const struct agg *x = a, *y = b;

	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	return strcmp(x->key, y->key);
}

static int cmp_count(const void *a, const void *b)
{
	const struct agg *x = a, *y = b;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return cmp_total(a, b);
}

/* Dense, sorted copy of the table. */
static void sort_aggs(struct report *r)
{
	size_t n = 0;

	for (size_t i = 0; i < r->cap; i++)
		if (r->v[i].key)
			r->v[n++] = r->v[i];
	if (n)
		qsort(r->v, n, sizeof(*r->v), r->o.by_count ? cmp_count : cmp_total);
	r->cap = n;
}

static void print_time(uint64_t ns)
{
	if (ns >= 1000000000ull)
		printf("%9.3f s ", ns / 1e9);
	else
		printf("%9.3f ms", ns / 1e6);
}

/* Frames leaf first, kernel above user, as perf shows a callchain. */
static void print_stack(const char *key)
{
	const char *f[MAX_FRAMES];
	char *copy = strdup(key), *save = NULL, *t;
	int n = 0;

	if (!copy)
		return;
	strtok_r(copy, ";", &save);	/* the command */
	while ((t = strtok_r(NULL, ";", &save)) && n < MAX_FRAMES)
		f[n++] = t;
	while (n-- > 0) {
		size_t len = strlen(f[n]);
		bool kernel = len > 4 && !strcmp(f[n] + len - 4, "_[k]");

		printf("                %.*s%s\n", (int)(kernel ? len - 4 : len), f[n],
		       kernel ? " [k]" : "");
	}
	free(copy);
}

static void print_text(struct report *r)
{
	size_t shown = 0;

	printf("# offcpu report: %s", r->o.input);
	if (r->file.hostname)
		printf(" (host %s, kernel %s, %s)", r->file.hostname,
		       r->file.osrelease ? r->file.osrelease : "?", r->file.arch ? r->file.arch : "?");
	printf("\n# %.3f s off-CPU in %llu samples, %zu distinct stacks per %s; sorted by %s\n#\n",
	       r->total / 1e9, (unsigned long long)r->samples, r->cap,
	       r->o.per_thread ? "thread" : "process", r->o.by_count ? "count" : "total time");
	for (size_t i = 0; i < r->cap && (!r->o.top || shown < (size_t)r->o.top); i++) {
		struct agg *a = &r->v[i];
		double pct = r->total ? 100.0 * a->total / r->total : 0;
		const char *semi = strchr(a->key, ';');

		if (pct < r->o.min_pct)
			continue;
		printf("%7.2f%% ", pct);
		print_time(a->total);
		printf(" %7llu  %.*s/%u\n", (unsigned long long)a->count,
		       (int)(semi ? semi - a->key : (long)strlen(a->key)), a->key, a->id);
		print_stack(a->key);
		printf("\n");
		shown++;
	}
}

/* flamegraph.pl's input: one line per stack, value in microseconds. */
static void print_folded(struct report *r)
{
	for (size_t i = 0; i < r->cap; i++)
		printf("%s %llu\n", r->v[i].key, (unsigned long long)(r->v[i].total / 1000));
}

static int write_svg(struct report *r)
{
	struct flame *fl = flame_new();
	const char *f[MAX_FRAMES];
	FILE *out;
	int err = !fl;

	for (size_t i = 0; i < r->cap && !err; i++) {
		char *copy = strdup(r->v[i].key), *save = NULL, *t;
		int n = 0;

		for (t = strtok_r(copy, ";", &save); t && n < MAX_FRAMES; t = strtok_r(NULL, ";", &save))
			f[n++] = t;
		err = !copy || flame_add(fl, f, n, r->v[i].total);
		free(copy);
	}
	out = err ? NULL : fopen(r->o.svg, "w");
	if (!out || flame_write_svg(fl, out, "Off-CPU time") || fclose(out)) {
		fprintf(stderr, "offcpu: report: cannot write %s: %s\n", r->o.svg, strerror(errno));
		flame_free(fl);
		return -1;
	}
	flame_free(fl);
	return 0;
}

/* Kernel symbols only when they belong to the recorded kernel. */
static const char *kallsyms_for(const struct report *r)
{
	struct utsname u;

	if (r->o.kallsyms)
		return r->o.kallsyms;
	if (uname(&u) || !r->file.osrelease || strcmp(u.release, r->file.osrelease))
		return NULL;
	return "/proc/kallsyms";
}

static void cleanup(struct report *r)
{
	for (size_t i = 0; i < r->cap; i++)
		free(r->v[i].key);
	free(r->v);
	sym_free(r->sym);
	pd_file_free(&r->file);
	free(r);
}

int report_main(int argc, char **argv)
{
	struct report *r = calloc(1, sizeof(*r));
	char err[256];
	int ret = 1;

	if (!r || parse_opts(&r->o, argc, argv))
		goto out;
	if (pd_read_file(&r->file, r->o.input, err, sizeof(err))) {
		fprintf(stderr, "offcpu: report: %s\n", err);
		goto out;
	}
	r->sym = sym_new(r->o.symfs, kallsyms_for(r));
	if (!r->sym || read_records(r))
		goto out;
	sort_aggs(r);
	if (r->o.folded)
		print_folded(r);
	else if (!r->o.svg)
		print_text(r);
	ret = r->o.svg && write_svg(r) ? 1 : 0;
out:
	if (r)
		cleanup(r);
	return ret;
}
