/* SPDX-License-Identifier: GPL-2.0 */
/* Opens the embedded BPF object, configures it from the options, loads it
 * with the variant the probe chose, and attaches it. */
#ifndef OFFCPU_LOADER_H
#define OFFCPU_LOADER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "record/cli.h"
#include "record/plan.h"
#include "record/probe.h"
#include "record/target.h"

struct bpf_object;
struct bpf_link;
struct bpf_map;
struct bpf_program;

/*
 * Every map and program of the two objects (see loader.c's name tables):
 * the CO-RE object's, or the BTF-free one's (tp,hash); those of the other
 * object are NULL.
 */
struct loader_maps {
	struct bpf_map *task_start, *tid_start, *stacks, *kstacks, *ustack_spill,
		*kstack_spill, *sums, *events, *counters, *pid_filter, *tid_filter,
		*cpu_filter, *kthreads, *dwarf_seq, *dwarf_wrap, *ucache, *wsums, *ku_rows,
		*ku_files, *ku_procs, *ku_want, *ku_cache, *ku_tail;
};

struct loader_progs {
	struct bpf_program *on_switch_task, *on_switch_hash, *on_switch_raw, *on_fork,
		*on_switch_task_loop, *on_switch_hash_loop, *on_switch_raw_loop,
		*kwalk_step_btf, *kwalk_step_raw,
		*on_exit, *on_switch_tp, *on_fork_tp, *on_free_tp, *scan_start_task,
		*scan_start_hash, *scan_start_task_u, *scan_start_hash_u, *scan_end_task,
		*on_waking_task, *on_waking_hash, *on_waking_raw, *on_exit_ku,
		/* --wakers: interrupt work marked (bpf/offcpu.bpf.c, in_irq) */
		*on_hrtimer_entry, *on_hrtimer_exit, *on_softirq_entry, *on_softirq_exit;
};

struct loader {
	struct bpf_object *obj;
	struct loader_maps maps;
	struct loader_progs progs;
	struct bpf_link *links[8];
	int nr_links;
	int events_fd, sums_fd, stacks_fd, kstacks_fd, counters_fd, pid_filter_fd;
	int ustack_spill_fd, kstack_spill_fd;	/* stacks that collided, by frames */
	int wsums_fd;		/* --wakers: sums keyed by the waker too, else -1 */
	int kthreads_fd;	/* tp,hash with -u: kernel threads by tid, else -1 */
	int tid_start_fd;	/* hash variants: per-thread start state, else -1 */
	/* Task iterators (src/record/blocked.c), NULL where the kernel or options exclude them. */
	struct bpf_program *scan_start;	/* threads asleep at the start */
	struct bpf_program *scan_end;	/* task storage at the end */
	bool scan_ustack;	/* scan_start walks user stacks too */
	bool classic_tp;	/* tp,hash: attached by the tracepoint ids in tp */
	struct tracefs_sched tp;
	const struct plan *plan;	/* what it was loaded for (the session's) */
	int ucache_fd;		/* dwarf with the stack cache: its per-thread entries, else -1 */
	/* --unwind-in kernel: the walker's maps (bpf/offcpu.h), else -1 */
	int ku_rows_fd, ku_files_fd, ku_procs_fd, ku_want_fd;
	int kwalk;		/* the walker loaded (plan.h's KWALK_*) */
	uint64_t memlock;	/* bytes locked by our maps (fdinfo) */
	bool perf_backend;	/* no object: perf events record (src/record/switch_events.c) */
	bool swevent;		/* ... with the context-switch software event, tp unused */
};

/* Returns 0, or -1 after one line on stderr naming what failed. */
/* libbpf's own messages: warnings with -v, info with -vv, debug with -vvv. */
void loader_set_verbosity(int verbose);
/*
 * 0 when the libbpf linked in is the one --version names (OFFCPU_LIBBPF_VERSION,
 * the toolchain's libbpf.version; libbpf tells only its major and minor),
 * else -1 after one line on stderr.
 */
int loader_libbpf_matches(void);
/* PL: the plan resolved from O and P, read for the loader's life. */
int loader_load(struct loader *l, const struct offcpu_opts *o, const struct target *t,
		const struct probe *p, const struct plan *pl);
int loader_attach(struct loader *l);

/*
 * The perf backend's session: no BPF object, every fd -1, the probe's
 * sched_switch layout in tp.  Refuses (-1, one line) what needs BPF
 * (--wakers) and, with the software event, what needs the sleep state (--state).
 */
int loader_none(struct loader *l, const struct offcpu_opts *o, const struct probe *p,
		const struct plan *pl);
void loader_print_maps(const struct loader *l, FILE *out);

/*
 * Runs of the attached programs the kernel skipped because a BPF program
 * (or, for classic tracepoints, a BPF map syscall) held the CPU: blocks
 * that may be lost.  0 where the kernel does not count them.
 */
uint64_t loader_missed(const struct loader *l);
void loader_detach(struct loader *l);
void loader_close(struct loader *l);

/* `offcpu selftest`: open the embedded object without the bpf() syscall. */
int loader_selftest(FILE *out);

#endif
