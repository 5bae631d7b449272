// SPDX-License-Identifier: GPL-2.0
/*
 * `offcpu report`: the top off-CPU stacks of a perf.data we wrote, with
 * symbols resolved on this machine; folded stacks; an SVG flame graph.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>

#include "lib/build_id.h"
#include "lib/buildid_cache.h"
#include "report/flamegraph.h"
#include "lib/hashset.h"
#include "format/perf_data_reader.h"
#include "report/pprof.h"
#include "report/report.h"
#include "symbols/symbolize.h"
#include "format/waker_record.h"

#define MAX_FRAMES	512
#define MAX_PIDS	1024
#define KERNEL_SUFFIX	"_[k]"
#define KERNEL_FILE	"[kernel.kallsyms]"
#define WAKER_SEP	"--"	/* between a sleeper's frames and its waker's */

#define MAX_INPUTS	4096

struct report_opts {
	const char *input;	/* the file being read, then the name output shows */
	const char *inputs[MAX_INPUTS];	/* -i, in order: read as one recording */
	size_t nr_inputs;
	char shown[512];	/* "a", or "a .. b (N files)" */
	const char *symfs, *kallsyms, *svg, *pprof;
	char *comms;		/* "a,b,c" */
	uint32_t pids[MAX_PIDS];
	size_t nr_pids;
	long top;
	double min_pct;
	bool by_count, per_thread, folded, raw_names, verbose, wakers;
};

/* A frame's function name (interned in struct report's names). */
struct frame {
	const char *name;
	const char *file;	/* with --pprof only (interned; NULL: not known) */
	bool kernel;
};

/*
 * One distinct (process or thread, stack).  The folded line
 * "comm;root;...;leaf" is built only to print folded output (and to break
 * ties in the same order as that line).
 */
struct agg {
	const char *comm;	/* process name, thread name with --per-thread; NULL: free slot */
	uint32_t id;		/* pid, tid with --per-thread, 0 when merged by name */
	uint32_t pid;		/* of the first sample */
	uint32_t key_pid, tid;	/* with --per-thread (else 0): part of the key */
	struct frame *frames;	/* root first: user root ... leaf, kernel root ... leaf */
	size_t nr_frames;
	size_t nr_sleeper;	/* --wakers: frames before WAKER_SEP (nr_frames: no waker part) */
	char threads[80];	/* "name,name": the threads' names, per process */
	bool more;		/* names that did not fit */
	uint64_t total, count;
};

struct report {
	struct report_opts o;
	struct pd_file file;
	struct symbolizer *sym;
	struct agg *v;
	size_t n, cap;		/* open-addressing table of cap slots */
	struct str_set names;	/* commands and function names, each once */
	struct frame *chain;	/* the sample being added */
	size_t chain_cap;
	uint64_t total, samples, all_total, lost;
	uint64_t first_time, last_time;	/* of the selected samples */
	/* --wakers: the sleeper's sample waiting for its waker's (pend_pair != 0) */
	struct agg pend;
	struct pd_sample pend_sample;
	char pend_thread[64];
	uint32_t pend_pair;
	uint32_t skip_pair;	/* a sleeper not selected: its waker is skipped too */
	uint64_t unpaired;	/* samples of one half of a pair without the other */
	struct agg *blocked;	/* offcpu-blocked samples, one per thread, file order */
	size_t nr_blocked;
	uint64_t blocked_total;
	char buf[2][65536];	/* folded lines */
	char cached_kallsyms[4200];	/* the recorded kernel's, from the build-id cache */
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
	const char *p = arg;

	while (*p) {
		char *end;
		unsigned long v;

		errno = 0;
		v = strtoul(p, &end, 10);
		if (errno || end == p || !v || v > 4194304 || (*end && *end != ',') ||
		    o->nr_pids == MAX_PIDS)
			return bad("--pid", arg);
		o->pids[o->nr_pids++] = v;
		p = *end ? end + 1 : end;
	}
	return o->nr_pids ? 0 : bad("--pid", arg);
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
static int parse_opts(struct report_opts *o, int argc, char **argv)
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

/* ---- aggregation ---- */

/* Whether A (a used slot) is the aggregate of KEY. */
static bool same_key(const struct agg *a, const struct agg *key)
{
	if (a->id != key->id || a->comm != key->comm || a->nr_frames != key->nr_frames)
		return false;
	if (a->key_pid != key->key_pid || a->tid != key->tid || a->nr_sleeper != key->nr_sleeper)
		return false;
	for (size_t i = 0; i < a->nr_frames; i++)
		if (a->frames[i].name != key->frames[i].name ||
		    a->frames[i].file != key->frames[i].file ||
		    a->frames[i].kernel != key->frames[i].kernel)
			return false;
	return true;
}

/* Names are interned: their addresses stand for them. */
static uint32_t agg_hash(const struct agg *key)
{
	uint32_t h = fnv1a(FNV1A_INIT, &key->id, sizeof(key->id));

	h = fnv1a(h, &key->key_pid, sizeof(key->key_pid));
	h = fnv1a(h, &key->tid, sizeof(key->tid));
	h = fnv1a(h, &key->comm, sizeof(key->comm));
	for (size_t i = 0; i < key->nr_frames; i++) {
		h = fnv1a(h, &key->frames[i].name, sizeof(key->frames[i].name));
		h = fnv1a(h, &key->frames[i].file, sizeof(key->frames[i].file));
		h = fnv1a(h, &key->frames[i].kernel, sizeof(key->frames[i].kernel));
	}
	return h;
}

static size_t slot(const struct agg *v, size_t cap, const struct agg *key)
{
	size_t i = agg_hash(key) & (cap - 1);

	while (v[i].comm && !same_key(&v[i], key))
		i = (i + 1) & (cap - 1);
	return i;
}

static int grow(struct report *r)
{
	size_t cap = r->cap ? r->cap * 2 : 1024;
	struct agg *nv = calloc(cap, sizeof(*nv));

	if (!nv)
		return -1;
	for (size_t j = 0; j < r->cap; j++)
		if (r->v[j].comm)
			nv[slot(nv, cap, &r->v[j])] = r->v[j];
	free(r->v);
	r->v = nv;
	r->cap = cap;
	return 0;
}

static bool in_list(const char *list, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = list; p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
		if (!strncmp(p, name, n) && (p[n] == ',' || !p[n]))
			return true;
	return false;
}

static void add_thread(struct agg *a, const char *name)
{
	size_t len = strlen(a->threads);

	if (in_list(a->threads, name))
		return;
	if (len + strlen(name) + 2 > sizeof(a->threads))
		a->more = true;
	else
		snprintf(a->threads + len, sizeof(a->threads) - len, "%s%s", len ? "," : "", name);
}

static int add(struct report *r, struct agg *key, const struct pd_sample *s,
	       const char *thread)
{
	struct agg *a;

	if ((r->n + 1) * 2 > r->cap && grow(r))
		return -1;
	a = &r->v[slot(r->v, r->cap, key)];
	if (!a->comm) {
		*a = *key;
		a->pid = s->pid;
		a->frames = malloc(key->nr_frames * sizeof(*a->frames));
		if (!a->frames) {
			a->comm = NULL;
			return -1;
		}
		memcpy(a->frames, key->frames, key->nr_frames * sizeof(*a->frames));
		r->n++;
	}
	add_thread(a, thread);
	a->total += s->period;
	a->count++;
	return 0;
}

/* The kernel and user parts of a callchain (leaf first within each). */
struct chain {
	const uint64_t *k, *u;
	size_t nk, nu;
};

static void split_chain(const struct pd_sample *s, struct chain *c)
{
	size_t *n = NULL;

	memset(c, 0, sizeof(*c));
	for (uint64_t i = 0; i < s->nr; i++) {
		if (s->ips[i] == PERF_CONTEXT_KERNEL && !c->k) {
			c->k = s->ips + i + 1;
			n = &c->nk;
		} else if (s->ips[i] == PERF_CONTEXT_USER && !c->u) {
			c->u = s->ips + i + 1;
			n = &c->nu;
		} else if (s->ips[i] >= PERF_CONTEXT_MAX) {
			n = NULL;	/* guest or unknown context: not ours */
		} else if (n) {
			(*n)++;
		}
	}
}

/* FILE: the frame's file, kept with --pprof only (its mappings). */
static int add_frame(struct report *r, size_t n, const char *name, const char *file,
		     bool kernel)
{
	const char *in = str_set_intern(&r->names, name);
	const char *fin = file && r->o.pprof ? str_set_intern(&r->names, file) : NULL;

	if (!in || (file && r->o.pprof && !fin))
		return -1;
	r->chain[n] = (struct frame){ in, fin, kernel };
	return 0;
}

/* The file of a user frame, looked up only for --pprof. */
static const char *user_file(struct report *r, uint32_t pid, uint64_t ip)
{
	return r->o.pprof ? sym_user_file(r->sym, pid, ip) : NULL;
}

/* Room for N frames in r->chain: 0, or -1 out of memory. */
static int reserve_frames(struct report *r, size_t n)
{
	struct frame *nv;

	if (n <= r->chain_cap)
		return 0;
	nv = realloc(r->chain, n * sizeof(*nv));
	if (!nv)
		return -1;
	r->chain = nv;
	r->chain_cap = n;
	return 0;
}

/* The key of sample S: its command and its frames, perf's order, root first. */
static int sample_key(struct report *r, const struct pd_sample *s, const char *comm,
		      struct agg *key)
{
	size_t n = 0;
	struct chain c;
	int err = 0;

	split_chain(s, &c);
	if (reserve_frames(r, c.nu + c.nk + 1))
		return -1;
	for (size_t i = c.nu; i-- > 0 && !err;)
		err = add_frame(r, n++, sym_user(r->sym, s->pid, c.u[i]),
				user_file(r, s->pid, c.u[i]), false);
	for (size_t i = c.nk; i-- > 0 && !err;)
		err = add_frame(r, n++, sym_kernel(r->sym, c.k[i]), KERNEL_FILE, true);
	if (!n && !err)
		err = add_frame(r, n++, "[no stack]", NULL, false);
	*key = (struct agg){
		.comm = str_set_intern(&r->names, comm),
		.id = r->o.per_thread ? s->tid : (r->o.folded || r->o.svg) ? 0 : s->pid,
		.key_pid = r->o.per_thread ? s->pid : 0,
		.tid = r->o.per_thread ? s->tid : 0,
		.frames = r->chain,
		.nr_frames = n,
		.nr_sleeper = n,
	};
	return err || !key->comm ? -1 : 0;
}

static bool selected(const struct report *r, const struct pd_sample *s,
		     const char *thread, const char *proc)
{
	bool ok = !r->o.nr_pids;

	for (size_t i = 0; i < r->o.nr_pids && !ok; i++)
		ok = r->o.pids[i] == s->pid;
	if (ok && r->o.comms)
		ok = in_list(r->o.comms, thread) || in_list(r->o.comms, proc);
	return ok;
}

/* ---- --wakers: a sleeper's sample, then its waker's ---- */

static uint32_t raw_u32(const struct pd_sample *s)
{
	uint32_t v = 0;

	if (s->raw && s->raw_size >= sizeof(v))
		memcpy(&v, s->raw, sizeof(v));
	return v;
}

/* KEY's frames, then WAKER_SEP and N frames W (NULL: just the separator). */
static int add_joined(struct report *r, const struct agg *key, const struct frame *w, size_t n,
		      const struct pd_sample *s, const char *thread)
{
	struct agg j = *key;
	int err;

	j.frames = malloc((key->nr_frames + 1 + n) * sizeof(*j.frames));
	if (!j.frames)
		return -1;
	memcpy(j.frames, key->frames, key->nr_frames * sizeof(*j.frames));
	j.frames[key->nr_frames] = (struct frame){ str_set_intern(&r->names, WAKER_SEP), NULL, false };
	if (n)
		memcpy(j.frames + key->nr_frames + 1, w, n * sizeof(*w));
	j.nr_frames = key->nr_frames + 1 + n;
	j.nr_sleeper = key->nr_frames;
	err = !j.frames[key->nr_frames].name || add(r, &j, s, thread);
	free(j.frames);
	return err ? -1 : 0;
}

static void drop_pending(struct report *r)
{
	if (r->pend_pair)
		r->unpaired++;
	r->pend_pair = 0;
	free(r->pend.frames);
	r->pend.frames = NULL;
}

/* Holds the sleeper's KEY until the waker's sample with the same pair id. */
static int hold_sleeper(struct report *r, const struct agg *key, const struct pd_sample *s,
			const char *thread)
{
	const struct frame none = { str_set_intern(&r->names, waker_kind_frame(WAKER_UNKNOWN)),
				    NULL, false };
	uint32_t pair = raw_u32(s);

	if (!pair)
		return none.name ? add_joined(r, key, &none, 1, s, thread) : -1;
	r->pend = *key;
	r->pend.frames = malloc(key->nr_frames * sizeof(*key->frames));
	if (!r->pend.frames)
		return -1;
	memcpy(r->pend.frames, key->frames, key->nr_frames * sizeof(*key->frames));
	r->pend_sample = *s;
	snprintf(r->pend_thread, sizeof(r->pend_thread), "%s", thread);
	r->pend_pair = pair;
	return 0;
}

/* --wakers: a thread still blocked at the end has no waker yet. */
static int add_still_blocked(struct report *r, const struct agg *key, const struct pd_sample *s,
			     const char *thread)
{
	const struct frame none = { str_set_intern(&r->names, "[still-blocked]"), NULL, false };

	return none.name ? add_joined(r, key, &none, 1, s, thread) : -1;
}

/* The waker's frames as offwaketime folds them: kernel leaf ... root, user leaf ... root, name. */
static int waker_frames(struct report *r, const struct pd_sample *s, const struct waker_raw *w,
			size_t *n)
{
	const char *kind = waker_kind_frame(w->kind);
	char comm[sizeof(w->comm) + 1] = "";
	struct chain c;
	int err = 0;

	split_chain(s, &c);
	if (reserve_frames(r, c.nu + c.nk + 1))
		return -1;
	*n = 0;
	for (size_t i = 0; i < c.nk && !err; i++)
		err = add_frame(r, (*n)++, sym_kernel(r->sym, c.k[i]), KERNEL_FILE, true);
	for (size_t i = 0; i < c.nu && !err; i++)
		err = add_frame(r, (*n)++, sym_user(r->sym, s->pid, c.u[i]),
				user_file(r, s->pid, c.u[i]), false);
	memcpy(comm, w->comm, sizeof(w->comm));
	if (!err)
		err = add_frame(r, (*n)++, kind ? kind : comm[0] ? comm : "[unknown]", NULL, false);
	return err;
}

static int add_waker(struct report *r, const struct pd_sample *s)
{
	struct waker_raw w;
	size_t n;
	int err;

	if (!r->o.wakers)
		return 0;
	if (s->raw && s->raw_size >= sizeof(w.pair) && r->skip_pair && raw_u32(s) == r->skip_pair)
		return 0;
	if (!s->raw || s->raw_size < sizeof(w) || !r->pend_pair) {
		r->unpaired++;
		return 0;
	}
	memcpy(&w, s->raw, sizeof(w));
	if (w.pair != r->pend_pair) {
		drop_pending(r);
		r->unpaired++;
		return 0;
	}
	err = waker_frames(r, s, &w, &n) ||
	      add_joined(r, &r->pend, r->chain, n, &r->pend_sample, r->pend_thread);
	r->pend_pair = 0;
	drop_pending(r);
	return err;
}

/*
 * A thread still blocked at the end (event offcpu-blocked): kept apart too,
 * for the report's own section.  KEY holds its frames.
 */
static int add_blocked(struct report *r, const struct agg *key, const struct pd_sample *s,
		       const char *thread)
{
	struct agg *nv = realloc(r->blocked, (r->nr_blocked + 1) * sizeof(*nv)), *b;

	if (!nv)
		return -1;
	r->blocked = nv;
	b = &nv[r->nr_blocked];
	*b = (struct agg){
		.comm = str_set_intern(&r->names, thread), .id = s->tid, .pid = s->pid,
		.nr_frames = key->nr_frames, .total = s->period, .count = 1,
	};
	b->frames = malloc(key->nr_frames * sizeof(*b->frames));
	if (!b->comm || !b->frames) {
		free(b->frames);
		return -1;
	}
	memcpy(b->frames, key->frames, key->nr_frames * sizeof(*b->frames));
	r->nr_blocked++;
	r->blocked_total += s->period;
	return 0;
}

static int add_sample(struct report *r, const struct pd_sample *s, bool blocked)
{
	const char *thread = sym_comm_of(r->sym, s->pid, s->tid);
	const char *proc = sym_proc_comm(r->sym, s->pid, s->tid);
	struct agg key;

	drop_pending(r);
	r->all_total += s->period;
	r->skip_pair = 0;
	if (!selected(r, s, thread, proc)) {
		r->skip_pair = raw_u32(s);
		return 0;
	}
	if (sample_key(r, s, r->o.per_thread ? thread : proc, &key))
		return -1;
	r->total += s->period;
	if (!r->samples++ || s->time < r->first_time)
		r->first_time = s->time;
	if (s->time > r->last_time)
		r->last_time = s->time;
	if (blocked && add_blocked(r, &key, s, thread))
		return -1;
	if (!r->o.wakers)
		return add(r, &key, s, thread);
	/* Text lists each stack, then its wakers; folded, SVG and pprof only the pairs. */
	if (!r->o.folded && !r->o.svg && !r->o.pprof && add(r, &key, s, thread))
		return -1;
	if (blocked)
		return add_still_blocked(r, &key, s, thread);
	return hold_sleeper(r, &key, s, thread);
}

/* ---- reading ---- */

static bool is_offcpu(const struct pd_file *f, const struct pd_sample *s)
{
	const struct pd_event *e = pd_event_by_id(f, s->id);

	return e && e->attr.type == PERF_TYPE_SOFTWARE &&
	       e->attr.config == PERF_COUNT_SW_BPF_OUTPUT && s->id != OFFCPU_WAKER_ID;
}

/* A sample of a thread still blocked at the end of the recording. */
static bool is_blocked(const struct pd_file *f, const struct pd_sample *s)
{
	const struct pd_event *e = pd_event_by_id(f, s->id);

	return e && e->name && !strcmp(e->name, "offcpu-blocked");
}

/* A NUL-terminated name at OFF in the record's body, or NULL. */
static const char *name_at(const struct perf_event_header *h, size_t off)
{
	const char *p = (const char *)(h + 1) + off;
	size_t body = h->size - sizeof(*h);

	if (off >= body || !memchr(p, '\0', body - off))
		return NULL;
	return p;
}

/* MMAP2 starts with MMAP's fields; its name comes after more of them. */
static void feed_mmap(struct report *r, const struct perf_record_mmap *m, size_t fixed)
{
	const char *name = name_at(&m->header, fixed - sizeof(m->header));

	if (!name)
		return;
	if (m->pid == (uint32_t)-1 && !strncmp(name, "[kernel.kallsyms]", 17))
		sym_kernel_text(r->sym, m->pgoff);	/* pgoff: _text's address */
	else
		sym_mmap(r->sym, m->pid, m->start, m->len, m->pgoff, name);
}

/* Process bookkeeping records, in file (time) order. */
static void feed(struct report *r, const struct perf_event_header *h)
{
	const struct perf_record_comm *comm = (const void *)h;
	const struct perf_record_fork *fork = (const void *)h;
	const struct perf_record_lost *lost = (const void *)h;
	const struct perf_record_lost_samples *lost_samples = (const void *)h;
	const char *name;

	switch (h->type) {
	case PERF_RECORD_COMM:
		if (h->size >= sizeof(*comm) && (name = name_at(h, sizeof(*comm) - sizeof(*h))))
			sym_comm(r->sym, comm->pid, comm->tid, name,
				 h->misc & PERF_RECORD_MISC_COMM_EXEC);
		break;
	case PERF_RECORD_MMAP:
		if (h->size >= sizeof(struct perf_record_mmap))
			feed_mmap(r, (const void *)h, sizeof(struct perf_record_mmap));
		break;
	case PERF_RECORD_MMAP2:
		if (h->size >= sizeof(struct perf_record_mmap2))
			feed_mmap(r, (const void *)h, sizeof(struct perf_record_mmap2));
		break;
	case PERF_RECORD_FORK:
		if (h->size >= sizeof(*fork) - sizeof(fork->time))
			sym_fork(r->sym, fork->pid, fork->ppid, fork->tid, fork->ptid);
		break;
	case PERF_RECORD_EXIT:
		if (h->size >= sizeof(*fork) - sizeof(fork->time))
			sym_exit(r->sym, fork->pid, fork->tid);
		break;
	case PERF_RECORD_LOST:
		if (h->size >= sizeof(*lost))
			r->lost += lost->lost;
		break;
	case PERF_RECORD_LOST_SAMPLES:
		if (h->size >= sizeof(*lost_samples))
			r->lost += lost_samples->lost;
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
		if (s.id == OFFCPU_WAKER_ID && add_waker(r, &s))
			return -1;
		if (is_offcpu(&r->file, &s) && add_sample(r, &s, is_blocked(&r->file, &s)))
			return -1;
	}
	drop_pending(r);
	if (r->unpaired)
		fprintf(stderr, "offcpu: report: warning: %llu samples of a sleeper and its waker without the other (not counted under any waker)\n",
			(unsigned long long)r->unpaired);
	if (ret < 0)
		fprintf(stderr, "offcpu: report: %s: %s\n", r->o.input, err);
	return ret;
}

/* ---- symbols ---- */

static bool is_kernel_id(const struct pd_build_id *b)
{
	return (b->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL;
}

/* The running kernel's build-id against the recorded one: 1 same, 0 differs, -1 unknown. */
static int same_kernel_id(const struct pd_file *f)
{
	uint8_t id[BUILD_ID_MAX];
	int len = build_id_of_kernel(id);

	for (size_t i = 0; i < f->nr_build_ids; i++) {
		const struct pd_build_id *b = &f->build_ids[i];

		if (!is_kernel_id(b))
			continue;
		if (len <= 0)
			return -1;
		return len == b->id_len && !memcmp(id, b->id, len);
	}
	return -1;
}

/* Kernel symbols only when they belong to the recorded kernel. */
static bool same_kernel(const struct report *r)
{
	struct utsname u;
	int same = same_kernel_id(&r->file);

	if (same < 0)
		same = !uname(&u) && r->file.osrelease && !strcmp(u.release, r->file.osrelease);
	return same;
}

/*
 * The recorded kernel's symbols in the build-id cache, where `offcpu
 * archive` puts them ([kernel.kallsyms]/HEX/kallsyms, perf's place).
 */
static bool cached_kallsyms(const struct pd_file *f, char *path, size_t len)
{
	char dir[4096];
	struct stat st;

	for (size_t i = 0; i < f->nr_build_ids; i++) {
		const struct pd_build_id *b = &f->build_ids[i];

		if (is_kernel_id(b))
			return !bidcache_dir(dir, sizeof(dir)) &&
			       !bidcache_kallsyms_path(dir, b->id, b->id_len, path, len) &&
			       !stat(path, &st) && S_ISREG(st.st_mode);
	}
	return false;
}

static const char *kallsyms_for(struct report *r, bool same)
{
	if (r->o.kallsyms)
		return r->o.kallsyms;
	if (same)
		return "/proc/kallsyms";
	if (cached_kallsyms(&r->file, r->cached_kallsyms, sizeof(r->cached_kallsyms)))
		return r->cached_kallsyms;
	fprintf(stderr, "offcpu: report: warning: recorded on another kernel (%s): kernel frames are [unknown] without --kallsyms\n",
		r->file.osrelease ? r->file.osrelease : "?");
	return NULL;
}

/* The current file's build-ids: a file with another is never used for names. */
static int expect_build_ids(struct report *r)
{
	for (size_t i = 0; i < r->file.nr_build_ids; i++) {
		const struct pd_build_id *b = &r->file.build_ids[i];

		if (!is_kernel_id(b) && b->filename &&
		    sym_expect_build_id(r->sym, b->filename, b->id, b->id_len))
			return -1;
	}
	return 0;
}

static int setup_symbols(struct report *r)
{
	bool same = same_kernel(r);
	const char *ksyms = kallsyms_for(r, same);

	r->sym = sym_new(r->o.symfs, ksyms);
	if (!r->sym)
		return -1;
	sym_options(r->sym, r->o.raw_names, r->o.verbose ? stderr : NULL);
	if (same)
		sym_same_kernel(r->sym);
	if (ksyms && !sym_nr_kernel(r->sym))
		fprintf(stderr, "offcpu: report: warning: no kernel symbols in %s%s\n", ksyms,
			r->o.kallsyms ? "" : " (kptr_restrict? run as root)");
	return expect_build_ids(r);
}

/* ---- output ---- */

/* ';' and blanks would break a folded line. */
static char folded_char(unsigned char ch)
{
	return ch == ';' || ch == ' ' ? ':' : ch < 0x20 || ch == 0x7f ? '?' : ch;
}

/* Append ';' NAME SUFFIX. */
static size_t append(char *buf, size_t pos, size_t len, const char *name, const char *suffix)
{
	if (pos + 2 >= len)
		return pos;
	buf[pos++] = ';';
	for (; *name && pos + 8 < len; name++)
		buf[pos++] = folded_char(*name);
	for (; *suffix && pos + 1 < len; suffix++)
		buf[pos++] = *suffix;
	buf[pos] = '\0';
	return pos;
}

/* The command is a folded frame too, with ';' and blanks made ':'. */
static size_t put_comm(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	n = n < 0 ? 0 : (size_t)n < len ? n : (int)len - 1;
	for (int i = 0; i < n; i++)
		if (buf[i] == ';' || buf[i] == ' ')
			buf[i] = ':';
	return n;
}

/* The command as the folded line's first frame ("comm-pid/tid" per thread). */
static size_t folded_comm(const struct report *r, const struct agg *a, char *buf, size_t len)
{
	if (r->o.per_thread)
		return put_comm(buf, len, "%s-%u/%u", a->comm, a->key_pid, a->tid);
	return put_comm(buf, len, "%s", a->comm);
}

/* "comm;user root;...;user leaf;kernel root;...;kernel leaf", perf's order. */
static const char *folded_line(const struct report *r, const struct agg *a, char *buf,
			       size_t len)
{
	size_t pos = folded_comm(r, a, buf, len);

	for (size_t i = 0; i < a->nr_frames; i++)
		pos = append(buf, pos, len, a->frames[i].name,
			     a->frames[i].kernel ? KERNEL_SUFFIX : "");
	return buf;
}

static const struct report *sorting;	/* qsort's comparators have no context */

static int cmp_total(const void *a, const void *b)
{
	const struct agg *x = a, *y = b;
	struct report *r = (struct report *)sorting;

	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return strcmp(folded_line(r, x, r->buf[0], sizeof(r->buf[0])),
		      folded_line(r, y, r->buf[1], sizeof(r->buf[1])));
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
		if (r->v[i].comm)
			r->v[n++] = r->v[i];
	sorting = r;
	if (n)
		qsort(r->v, n, sizeof(*r->v), r->o.by_count ? cmp_count : cmp_total);
	r->cap = n;
}

static const char *fmt_time(uint64_t ns, char *buf, size_t len)
{
	if (ns >= 1000000000ull)
		snprintf(buf, len, "%.3f s", ns / 1e9);
	else if (ns >= 1000000ull)
		snprintf(buf, len, "%.3f ms", ns / 1e6);
	else
		snprintf(buf, len, "%.3f us", ns / 1e3);
	return buf;
}

static void put_name(const char *name)
{
	for (; *name; name++)
		putchar(folded_char(*name));
}

/* Frames leaf first, kernel above user, as perf shows a callchain. */
static void print_stack(const struct agg *a)
{
	for (size_t i = a->nr_frames; i-- > 0;) {
		printf("          ");
		put_name(a->frames[i].name);
		printf("%s\n", a->frames[i].kernel ? " [k]" : "");
	}
}

/* "blocker/123 (thread bl-sleep)" or, per thread, "bl-sleep/124 (process blocker/123)". */
static void print_owner(struct report *r, const struct agg *a)
{
	char comm[256];
	int len = put_comm(comm, sizeof(comm), "%s", a->comm);

	if (r->o.per_thread) {
		printf("%s/%u", comm, a->id);
		if (a->id != a->pid)
			printf(" (process %s/%u)", sym_proc_comm(r->sym, a->pid, a->pid), a->pid);
	} else {
		printf("%s/%u", comm, a->pid);
		if (strchr(a->threads, ',') || a->more)
			printf(" (threads %s%s)", a->threads, a->more ? ",..." : "");
		else if ((int)strlen(a->threads) != len || strncmp(a->threads, comm, len))
			printf(" (thread %s)", a->threads);
	}
	printf("\n");
}

/* Entries of the sleepers alone (with --wakers the table also holds the pairs). */
static bool is_sleeper(const struct agg *a)
{
	return a->nr_sleeper == a->nr_frames;
}

static size_t nr_sleepers(const struct report *r)
{
	size_t n = 0;

	for (size_t i = 0; i < r->cap; i++)
		n += is_sleeper(&r->v[i]);
	return n;
}

/* Whether P is a pair (sleeper, waker) of the sleeper's entry A. */
static bool waker_of(const struct agg *p, const struct agg *a)
{
	if (is_sleeper(p) || p->nr_sleeper != a->nr_frames || p->comm != a->comm ||
	    p->id != a->id || p->key_pid != a->key_pid || p->tid != a->tid)
		return false;
	for (size_t i = 0; i < a->nr_frames; i++)
		if (p->frames[i].name != a->frames[i].name || p->frames[i].kernel != a->frames[i].kernel)
			return false;
	return true;
}

/* --wakers: under a sleeper's stack A, who woke it, largest share first. */
static void print_wakers(struct report *r, const struct agg *a)
{
	char t[32];

	printf("        woken by:\n");
	for (size_t i = 0; i < r->cap; i++) {
		const struct agg *p = &r->v[i];

		if (!waker_of(p, a))
			continue;
		printf("        %7.2f%% %12s %8llu  ", a->total ? 100.0 * p->total / a->total : 0,
		       fmt_time(p->total, t, sizeof(t)), (unsigned long long)p->count);
		put_name(p->frames[p->nr_frames - 1].name);
		printf("\n");
		for (size_t j = p->nr_sleeper + 1; j + 1 < p->nr_frames; j++) {
			printf("                  ");
			put_name(p->frames[j].name);
			printf("%s\n", p->frames[j].kernel ? " [k]" : "");
		}
	}
}

static void print_header(struct report *r)
{
	const struct pd_file *f = &r->file;

	printf("# offcpu report: %s", r->o.input);
	if (f->hostname)
		printf(" (host %s, kernel %s, %s)", f->hostname,
		       f->osrelease ? f->osrelease : "?", f->arch ? f->arch : "?");
	printf("\n# %.3f s off-CPU in %llu samples", r->total / 1e9,
	       (unsigned long long)r->samples);
	if (r->total != r->all_total)
		printf(" (selected from %.3f s)", r->all_total / 1e9);
	printf(", %zu distinct stacks per %s, %llu samples lost\n", nr_sleepers(r),
	       r->o.per_thread ? "thread" : "process", (unsigned long long)r->lost);
	printf("# sorted by %s; frames leaf first, [k]: kernel\n#\n",
	       r->o.by_count ? "samples" : "total off-CPU time");
	printf("#  share        total  samples  %s\n",
	       r->o.per_thread ? "thread/tid" : "process/pid");
}

static void print_text(struct report *r)
{
	uint64_t rest = 0;
	size_t shown = 0, hidden = 0;
	char t[32];

	print_header(r);
	for (size_t i = 0; i < r->cap; i++) {
		struct agg *a = &r->v[i];
		double pct = r->total ? 100.0 * a->total / r->total : 0;

		if (!is_sleeper(a))
			continue;
		if (pct < r->o.min_pct || (r->o.top && shown >= (size_t)r->o.top)) {
			hidden++;
			rest += a->total;
			continue;
		}
		printf("%7.2f%% %12s %8llu  ", pct, fmt_time(a->total, t, sizeof(t)),
		       (unsigned long long)a->count);
		print_owner(r, a);
		print_stack(a);
		if (r->o.wakers)
			print_wakers(r, a);
		printf("\n");
		shown++;
	}
	if (hidden)
		printf("# %zu more stacks (%s, %.2f%%) not shown: -n 0 shows all\n", hidden,
		       fmt_time(rest, t, sizeof(t)), r->total ? 100.0 * rest / r->total : 0);
}

/*
 * Threads still blocked at the end have their time in the stacks above too;
 * here each is on its own, with the stack it blocked with.
 */
static void print_blocked(struct report *r)
{
	char t[32];

	if (!r->nr_blocked)
		return;
	printf("# still blocked at the end: %zu threads, %s\n#\n", r->nr_blocked,
	       fmt_time(r->blocked_total, t, sizeof(t)));
	for (size_t i = 0; i < r->nr_blocked; i++) {
		struct agg *b = &r->blocked[i];

		printf("%21s  ", fmt_time(b->total, t, sizeof(t)));
		put_name(b->comm);
		printf("/%u (process %s/%u)\n", b->id, sym_proc_comm(r->sym, b->pid, b->pid),
		       b->pid);
		print_stack(b);
		printf("\n");
	}
}

/* flamegraph.pl's input: one line per stack, value in microseconds. */
static void print_folded(struct report *r)
{
	for (size_t i = 0; i < r->cap; i++)
		printf("%s %llu\n", folded_line(r, &r->v[i], r->buf[0], sizeof(r->buf[0])),
		       (unsigned long long)(r->v[i].total / 1000));
}

static int add_flame(struct report *r, struct flame *fl, const struct agg *a)
{
	const char *f[MAX_FRAMES];
	char *copy = strdup(folded_line(r, a, r->buf[0], sizeof(r->buf[0]))), *save = NULL, *t;
	int n = 0, err;

	if (!copy)
		return -1;
	for (t = strtok_r(copy, ";", &save); t && n < MAX_FRAMES; t = strtok_r(NULL, ";", &save))
		f[n++] = t;
	err = flame_add(fl, f, n, a->total);
	free(copy);
	return err;
}

static int write_svg(struct report *r)
{
	struct flame *fl = flame_new();
	char title[512];
	FILE *out;
	int err = !fl;

	for (size_t i = 0; i < r->cap && !err; i++)
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

/* The recording's build-ids, hex, on the mappings of their files. */
static int pprof_build_ids(struct report *r, struct pprof *p)
{
	char hex[2 * BUILD_ID_MAX + 1];

	for (size_t i = 0; i < r->file.nr_build_ids; i++) {
		const struct pd_build_id *b = &r->file.build_ids[i];
		const char *file = is_kernel_id(b) ? KERNEL_FILE : b->filename;

		if (!file || !b->id_len || b->id_len > BUILD_ID_MAX)
			continue;
		build_id_hex(b->id, b->id_len, hex);
		if (pprof_build_id(p, file, hex))
			return -1;
	}
	return 0;
}

/* What pprof shows above its tables: where from, and what was lost. */
static int pprof_comments(struct report *r, struct pprof *p)
{
	char line[512];

	snprintf(line, sizeof(line), "offcpu report: %s (host %s, kernel %s, %s)", r->o.input,
		 r->file.hostname ? r->file.hostname : "?",
		 r->file.osrelease ? r->file.osrelease : "?", r->file.arch ? r->file.arch : "?");
	if (pprof_comment(p, line))
		return -1;
	snprintf(line, sizeof(line), "%llu samples lost", (unsigned long long)r->lost);
	return pprof_comment(p, line);
}

/* The wall-clock time of sample time T, from CLOCK_DATA (0: unknown). */
static uint64_t wall_time(const struct report *r, uint64_t t)
{
	const struct pd_file *f = &r->file;

	if (!f->has_clock_data || f->clockid != CLOCK_MONOTONIC || !r->samples ||
	    t > f->clockid_ns || f->clockid_ns - t > f->tod_ns)
		return 0;
	return f->tod_ns - (f->clockid_ns - t);
}

/* One pprof sample per (thread, stack): frames leaf first. */
static int pprof_agg(struct report *r, struct pprof *p, const struct agg *a,
		     struct pprof_frame *frames)
{
	struct pprof_owner owner = {
		.pid = a->key_pid,
		.tid = a->tid,
		.thread = a->comm,
		.process = sym_proc_comm(r->sym, a->key_pid, a->key_pid),
	};

	for (size_t i = 0; i < a->nr_frames; i++) {
		const struct frame *f = &a->frames[a->nr_frames - 1 - i];

		frames[i] = (struct pprof_frame){ f->name, f->file };
	}
	return pprof_add(p, frames, a->nr_frames, &owner, a->total, a->count);
}

static int write_pprof(struct report *r)
{
	struct pprof *p = pprof_new();
	struct pprof_frame *frames = NULL;
	size_t cap = 0;
	int err = !p || pprof_build_ids(r, p) || pprof_comments(r, p);

	for (size_t i = 0; i < r->cap && !err; i++) {
		if (r->v[i].nr_frames > cap) {
			free(frames);
			cap = r->v[i].nr_frames;
			frames = malloc(cap * sizeof(*frames));
		}
		err = !frames || pprof_agg(r, p, &r->v[i], frames);
	}
	free(frames);
	if (!err)
		pprof_time(p, wall_time(r, r->first_time), r->last_time - r->first_time);
	errno = ENOMEM;
	err = err || pprof_write(p, r->o.pprof);
	if (err)
		fprintf(stderr, "offcpu: report: cannot write %s: %s\n", r->o.pprof, strerror(errno));
	pprof_free(p);
	return err ? -1 : 0;
}

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
	for (size_t i = 0; i < r->cap; i++)
		free(r->v[i].frames);
	free(r->v);
	for (size_t i = 0; i < r->nr_blocked; i++)
		free(r->blocked[i].frames);
	free(r->blocked);
	free(r->chain);
	free(r->pend.frames);
	str_set_free(&r->names);
	sym_free(r->sym);
	pd_file_free(&r->file);
	free(r->o.comms);
	free(r);
}

/* Whether F has the offcpu-waker event of a recording made with --wakers. */
static bool has_waker_event(const struct pd_file *f)
{
	for (size_t i = 0; i < f->nr_events; i++)
		for (size_t j = 0; j < f->events[i].nr_ids; j++)
			if (f->events[i].ids[j] == OFFCPU_WAKER_ID)
				return true;
	return false;
}

/*
 * Threads blocked at the end of an earlier file were blocked at a switch:
 * their time stays in the stacks, but only the last file's end is the end.
 */
static void forget_blocked(struct report *r)
{
	for (size_t i = 0; i < r->nr_blocked; i++)
		free(r->blocked[i].frames);
	r->nr_blocked = 0;
	r->blocked_total = 0;
}

/* Reads input I: its file, then its records into the one aggregation. */
static int read_input(struct report *r, size_t i)
{
	char err[256];

	r->o.input = r->o.inputs[i];
	/* The last file stays for the header, the build-ids of pprof and wall time. */
	pd_file_free(&r->file);
	if (pd_read_file(&r->file, r->o.input, err, sizeof(err))) {
		fprintf(stderr, "offcpu: report: %s\n", err);
		return -1;
	}
	if (r->o.wakers && !has_waker_event(&r->file)) {
		fprintf(stderr, "offcpu: report: %s: recorded without --wakers (no offcpu-waker event)\n",
			r->o.input);
		return -1;
	}
	if (r->o.wakers && r->file.needs_swap) {
		fprintf(stderr, "offcpu: report: %s: --wakers needs a file of this machine's byte order\n",
			r->o.input);
		return -1;
	}
	/*
	 * One symbolizer for all: a rotated file goes on where the one before
	 * ended (its processes re-announced), so names and maps carry over.
	 */
	if (!r->sym && setup_symbols(r))
		return -1;
	if (i && expect_build_ids(r))
		return -1;
	forget_blocked(r);
	return read_records(r);
}

int report_main(int argc, char **argv)
{
	struct report *r = calloc(1, sizeof(*r));
	int ret = 1;

	if (!r)
		goto out;
	ret = parse_opts(&r->o, argc, argv);
	if (ret) {
		ret = ret > 0 ? 0 : 1;
		goto out;
	}
	/* pprof's samples carry their thread: one aggregate per thread. */
	if (r->o.pprof)
		r->o.per_thread = true;
	ret = 1;
	for (size_t i = 0; i < r->o.nr_inputs; i++)
		if (read_input(r, i))
			goto out;
	r->o.input = r->o.shown;
	sort_aggs(r);
	warn_missing(r);
	if (r->o.pprof) {
		ret = write_pprof(r) ? 1 : 0;
		goto out;
	}
	if (r->o.folded)
		print_folded(r);
	else if (!r->o.svg) {
		print_text(r);
		print_blocked(r);
	}
	ret = r->o.svg && write_svg(r) ? 1 : 0;
out:
	if (r)
		cleanup(r);
	return ret;
}
