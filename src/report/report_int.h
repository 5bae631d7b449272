/* SPDX-License-Identifier: GPL-2.0 */
/*
 * `offcpu report` inside: the options, the table and the frames shared by
 * its modules (the .c files of src/report/), and what each module gives the others.
 * Not for use outside src/report/ (report.h is the command).
 */
#ifndef OFFCPU_REPORT_INT_H
#define OFFCPU_REPORT_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "format/perf_data_reader.h"
#include "lib/hashset.h"
#include "lib/id_list.h"
#include "symbols/symbolize.h"

#define MAX_FRAMES	512
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
	struct id_list pids;
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
	struct agg *v;		/* n aggregates (cap allocated) */
	size_t n, cap;
	struct key_set aggs;	/* v's aggregates by key (indices + 1), until sorted */
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

/* The kernel and user parts of a callchain (leaf first within each). */
struct chain {
	const uint64_t *k, *u;
	size_t nk, nu;
};

/* options.c */
int rpt_parse_opts(struct report_opts *o, int argc, char **argv);

/* read.c */
int rpt_read_input(struct report *r, size_t i);

/* aggregate.c */
int rpt_add(struct report *r, struct agg *key, const struct pd_sample *s,
	    const char *thread);
void rpt_split_chain(const struct pd_sample *s, struct chain *c);
int rpt_add_frame(struct report *r, size_t n, const char *name, const char *file,
		  bool kernel);
const char *rpt_user_file(struct report *r, uint32_t pid, uint64_t ip);
int rpt_reserve_frames(struct report *r, size_t n);
int rpt_add_sample(struct report *r, const struct pd_sample *s, bool blocked);

/* wakers.c: --wakers */
uint32_t rpt_raw_u32(const struct pd_sample *s);
void rpt_drop_pending(struct report *r);
int rpt_hold_sleeper(struct report *r, const struct agg *key, const struct pd_sample *s,
		     const char *thread);
int rpt_add_still_blocked(struct report *r, const struct agg *key, const struct pd_sample *s,
			  const char *thread);
int rpt_add_waker(struct report *r, const struct pd_sample *s);

/* kernel_syms.c */
bool rpt_is_kernel_id(const struct pd_build_id *b);
int rpt_expect_build_ids(struct report *r);
int rpt_setup_symbols(struct report *r);

/* output.c: text and folded */
const char *rpt_folded_line(const struct report *r, const struct agg *a, char *buf,
			    size_t len);
void rpt_sort_aggs(struct report *r);
void rpt_print_text(struct report *r);
void rpt_print_blocked(struct report *r);
void rpt_print_folded(struct report *r);

/* output_svg.c */
int rpt_write_svg(struct report *r);

/* output_pprof.c */
int rpt_write_pprof(struct report *r);

#endif
