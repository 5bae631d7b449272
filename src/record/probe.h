/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the running kernel supports, where BTF comes from, and which program
 * variant to load.  All kernel-version knowledge lives here: the loader only
 * obeys the choice.
 */
#ifndef OFFCPU_PROBE_H
#define OFFCPU_PROBE_H

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>

#include "record/cli.h"
#include "record/tracefs.h"

enum btf_source {
	BTF_NONE,
	BTF_KERNEL,	/* /sys/kernel/btf/vmlinux */
	BTF_FILE,	/* --btf FILE */
	BTF_EMBEDDED,	/* minimal BTF from the archive in the binary */
};

struct probe {
	char release[65];
	char machine[65];
	int kver;		/* KERNEL_VERSION(a, b, c) parsed from release */
	enum btf_source btf;
	char btf_path[PATH_MAX];	/* custom BTF for libbpf, "" for the kernel's */
	bool btf_tmp;		/* btf_path is our temporary file */
	bool kernel_btf;
	bool task_storage;
	/* Task local storage exists but bpf_task_storage_get() creates none
	 * (check_task_storage): the variant keeps a hash by tid instead. */
	bool task_storage_broken;
	bool ringbuf;
	bool prev_state_arg;
	const char *prev_state_why;
	bool state_new;		/* task_struct::__state (5.14+) vs ::state */
	bool jit;
	/* The kernel has a BPF JIT, switched off (net.core.bpf_jit_enable = 0:
	 * riscv64's default), which the verifier needs for these programs. */
	bool jit_off;
	bool task_pt_regs;	/* bpf_task_pt_regs (5.15+, tp_btf): the user stack cache */
	bool bpf_loop;		/* the bpf_loop helper (5.17+): the kernel walker's frame step */
	/* Else the user registers at the top of the task's stack (probe_uregs). */
	uint32_t thread_size, uregs_pad;
	bool scan_start;	/* task iterators (kernel BTF, 5.9+): threads asleep at the start */
	bool scan_ustack;	/* sleepable ones with bpf_copy_from_user_task (5.18+): their user stacks */
	bool tp_btf;		/* variant: tp_btf (else raw_tp) */
	bool use_task_storage;	/* variant: task local storage (else hash) */
	bool classic_tp;	/* variant tp,hash: no BTF, classic tracepoints */
	struct tracefs_sched tp;	/* their record layouts (classic_tp) */
	char chain[512];	/* where BTF was looked for, and why the search stopped */
	char why[256];		/* why the variant was chosen */
	/* No BPF: perf events alone (src/record/switch_events.c), tp holds sched_switch's layout. */
	bool perf_backend;
	char backend_why[256];	/* why this backend (-v, offcpu probe) */
	/*
	 * The perf backend without sched_switch in tracefs: the context-switch
	 * software event (4.17+), which gives no sleep state; why (tracefs's answer).
	 */
	bool swevent;
	char swevent_why[160];
};

/*
 * Probe the kernel.  BACKEND: --backend; auto takes the perf backend when a
 * BPF check fails (unless an option asked for BPF: BPF_ASKED).  BTF_FILE is --btf (a file, or "none" for the BTF-free
 * variant) or NULL; VARIANT forces a variant ("tp_btf,task", "tp_btf,hash",
 * "raw_tp,hash", "tp,hash") or is NULL.  Returns 0, or -1 after printing one
 * line that says what is missing and what to do.
 */
int probe_kernel(struct probe *p, const char *btf_file, const char *variant,
		 enum backend backend, bool bpf_asked);

/*
 * --backend auto: the BPF program was refused at load or attach (WHY):
 * the probe turns to the perf backend.  0, or -1 after one line.
 */
int probe_fall_back(struct probe *p, const char *why);

/* "tp_btf,task", "tp_btf,hash", "raw_tp,hash" or "tp,hash". */
const char *probe_variant(const struct probe *p);

/* `offcpu probe` and -v: one "key: value" line per fact. */
void probe_print(const struct probe *p, FILE *out);

/*
 * The facts probe_kernel takes from BTF (a --btf file is untrusted: fuzzed
 * by tests/fuzz/fuzz_btf_file.c): task_struct::__state, sched_switch's
 * prev_state.  BTF may be NULL; p->kver must be set.
 */
struct btf;
void probe_btf_read(struct probe *p, const struct btf *btf);

/* btf__parse of a --btf FILE, refusing what libbpf would misread; errno. */
struct btf *probe_btf_parse(const char *path);

/* Remove the temporary BTF file, if any. */
void probe_cleanup(struct probe *p);

#endif
