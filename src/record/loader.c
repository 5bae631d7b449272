// SPDX-License-Identifier: GPL-2.0
/* Load and attach the embedded BPF object as the probe decided. */
#include <dirent.h>
#include <errno.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/perf_event.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "record/embed.h"
#include "record/loader.h"
#include "offcpu.h"

/* Fixed map sizes (those the options size: plan.c), under 4 MiB locked by default. */
#define SUMS_ENTRIES	4096
#define TID_ENTRIES	8192
#define PID_FILTER_ENTRIES 1024	/* tracked processes, grown on fork */
#define KTHREAD_ENTRIES	4096	/* a few hundred on a server, a 64-CPU one ~1000 */

static int libbpf_verbosity;

static int print_libbpf(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if ((level == LIBBPF_WARN && libbpf_verbosity >= 1) ||
	    (level == LIBBPF_INFO && libbpf_verbosity >= 2) ||
	    libbpf_verbosity >= 3)
		return vfprintf(stderr, fmt, ap);
	return 0;
}

int loader_libbpf_matches(void)
{
	unsigned int major, minor;

	if (sscanf(OFFCPU_LIBBPF_VERSION, "%u.%u", &major, &minor) == 2 &&
	    major == libbpf_major_version() && minor == libbpf_minor_version())
		return 0;
	fprintf(stderr, "offcpu: built as libbpf %s, but the libbpf linked in is %u.%u\n",
		OFFCPU_LIBBPF_VERSION, libbpf_major_version(), libbpf_minor_version());
	return -1;
}

void loader_set_verbosity(int verbose)
{
	libbpf_verbosity = verbose;
	libbpf_set_print(print_libbpf);
}

/*
 * The object is reached through these tables, its only names: a skeleton by
 * hand.  bpftool's generated skeleton is not used because the object is
 * built per board and s390x's is big-endian: bpftool before 7.6 cannot
 * generate a skeleton for an object of the other byte order, and the
 * toolchain's (Debian's) is older.
 */
enum { IN_CORE = 1, IN_TP = 2, IN_BOTH = 3 };	/* which object has it */
#define MAP(name, in) { #name, offsetof(struct loader_maps, name), in }
static const struct { const char *name; size_t off; int in; } map_names[] = {
	MAP(task_start, IN_CORE), MAP(tid_start, IN_BOTH), MAP(stacks, IN_BOTH),
	MAP(kstacks, IN_BOTH), MAP(ustack_spill, IN_BOTH), MAP(kstack_spill, IN_BOTH),
	MAP(sums, IN_BOTH), MAP(events, IN_BOTH), MAP(counters, IN_BOTH),
	MAP(pid_filter, IN_BOTH), MAP(tid_filter, IN_BOTH), MAP(cpu_filter, IN_BOTH),
	MAP(kthreads, IN_TP), MAP(dwarf_seq, IN_CORE), MAP(dwarf_wrap, IN_CORE), MAP(ucache, IN_CORE),
	MAP(kthreads, IN_TP), MAP(wsums, IN_CORE),
	MAP(ku_rows, IN_CORE), MAP(ku_files, IN_CORE), MAP(ku_procs, IN_CORE), MAP(ku_want, IN_CORE),
	MAP(ku_cache, IN_CORE), MAP(ku_tail, IN_CORE),
};
#undef MAP
#define PROG(name, in) { #name, offsetof(struct loader_progs, name), in }
static const struct { const char *name; size_t off; int in; } prog_names[] = {
	PROG(on_switch_task, IN_CORE), PROG(on_switch_hash, IN_CORE),
	PROG(on_switch_raw, IN_CORE), PROG(on_switch_task_loop, IN_CORE),
	PROG(on_switch_hash_loop, IN_CORE), PROG(on_switch_raw_loop, IN_CORE),
	PROG(kwalk_step_btf, IN_CORE), PROG(kwalk_step_raw, IN_CORE),
	PROG(on_fork, IN_CORE), PROG(on_exit, IN_CORE),
	PROG(on_switch_tp, IN_TP), PROG(on_fork_tp, IN_TP), PROG(on_free_tp, IN_TP),
	PROG(on_waking_task, IN_CORE), PROG(on_waking_hash, IN_CORE),
	PROG(on_waking_raw, IN_CORE), PROG(on_hrtimer_entry, IN_CORE),
	PROG(on_hrtimer_exit, IN_CORE), PROG(on_softirq_entry, IN_CORE),
	PROG(on_softirq_exit, IN_CORE), PROG(on_exit_ku, IN_CORE),
	PROG(scan_start_task, IN_CORE), PROG(scan_start_hash, IN_CORE),
	PROG(scan_start_task_u, IN_CORE), PROG(scan_start_hash_u, IN_CORE),
	PROG(scan_end_task, IN_CORE),
};
#undef PROG

/* Fills L's map and program pointers; -1 if the object lacks one of its own. */
static int find_objects(struct loader *l, bool tp)
{
	int in = tp ? IN_TP : IN_CORE;

	for (size_t i = 0; i < sizeof(map_names) / sizeof(map_names[0]); i++) {
		struct bpf_map **m = (void *)((char *)&l->maps + map_names[i].off);

		if (!(map_names[i].in & in))
			continue;
		*m = bpf_object__find_map_by_name(l->obj, map_names[i].name);
		if (!*m)
			return -1;
	}
	for (size_t i = 0; i < sizeof(prog_names) / sizeof(prog_names[0]); i++) {
		struct bpf_program **p = (void *)((char *)&l->progs + prog_names[i].off);

		if (!(prog_names[i].in & in))
			continue;
		*p = bpf_object__find_program_by_name(l->obj, prog_names[i].name);
		if (!*p)
			return -1;
	}
	return 0;
}

/* Where .rodata's global NAME of SIZE bytes starts, or NULL. */
static void *rodata_var(struct bpf_object *obj, const char *name, size_t size)
{
	const struct btf *btf = bpf_object__btf(obj);
	const struct btf_var_secinfo *vs;
	const struct btf_type *sec;
	struct bpf_map *map;
	size_t map_size;
	char *data;
	int id;

	map = bpf_object__find_map_by_name(obj, ".rodata");
	id = btf ? btf__find_by_name_kind(btf, ".rodata", BTF_KIND_DATASEC) : -1;
	if (!map || id < 0)
		return NULL;
	data = bpf_map__initial_value(map, &map_size);
	sec = btf__type_by_id(btf, id);
	vs = btf_var_secinfos(sec);
	for (int i = 0; i < btf_vlen(sec); i++, vs++) {
		const struct btf_type *var = btf__type_by_id(btf, vs->type);

		if (strcmp(btf__name_by_offset(btf, var->name_off), name))
			continue;
		if (vs->size != size || vs->offset + size > map_size)
			return NULL;
		return data + vs->offset;
	}
	return NULL;
}

/* KWALK: the kernel walker to load (plan.h's KWALK_*). */
static int configure(struct bpf_object *obj, const struct offcpu_opts *o,
		     const struct target *t, const struct probe *p, const struct plan *pl,
		     int kwalk)
{
	const struct offcpu_config cfg = {
		.thresh_ns = o->thresh_ns,
		.trigger_ns = o->trigger_ns,
		.min_ns = o->min_block_ns,
		.max_ns = o->max_block_ns,
		.state_mask = o->state_mask,
		.self_pid = getpid(),
		.spill_bytes = pl->spill ? pl->max_stack * sizeof(uint64_t) : 0,
		.kspill_bytes = pl->spill ? pl->kspill_frames * sizeof(uint64_t) : 0,
		.user_only = o->user_only,
		.want_ustack = o->ustack,
		.want_kstack = o->kstack,
		.filter_pid = t->pid_filter,
		.filter_tid = o->tids.n != 0,
		.filter_cpu = o->cpus.n != 0,
		.has_prev_state_arg = p->prev_state_arg,
		.stack_cache = pl->stack_cache,
		.stack_cache_verify = o->stack_cache == STACK_CACHE_VERIFY,
		.dwarf = pl->dwarf,
		.copy_bytes = o->copy_bytes,
		.kunwind = pl->kunwind,
		.kunwind_verify = pl->kunwind && o->unwind_verify,
		.kwalk_tail = pl->kunwind && kwalk == KWALK_TAIL,
		.wakers = o->wakers,
		.task_pt_regs = p->task_pt_regs,
		.thread_size = p->thread_size,
		.uregs_pad = p->uregs_pad,
		/* The BTF-free object reads its records at the offsets tracefs gave. */
		.tp_prev_state_off = p->tp.switch_prev_state.offset,
		.tp_prev_state_size = p->tp.switch_prev_state.size,
		.tp_next_pid_off = p->tp.switch_next_pid.offset,
		.tp_parent_pid_off = p->tp.fork_parent_pid.offset,
		.tp_child_pid_off = p->tp.fork_child_pid.offset,
		.tp_free_pid_off = p->tp.free_pid.offset,
	};
	void *dst = rodata_var(obj, "cfg", sizeof(cfg));

	if (!dst)
		return -1;
	memcpy(dst, &cfg, sizeof(cfg));
	return 0;
}

/*
 * The task iterators of bpf/offcpu_blocked.bpf.h: threads asleep at the start
 * (their stacks go to the spill maps: none with --max-stack above 64; and
 * -C cannot know where they fell asleep), and the task storage at the end.
 */
static int select_scans(struct loader *l, const struct offcpu_opts *o,
			const struct probe *p, const struct plan *pl)
{
	const struct loader_progs *pg = &l->progs;
	bool user = p->scan_ustack && o->ustack;
	int err = 0;

	l->scan_start = NULL;
	if (p->classic_tp)
		return 0;
	if (p->scan_start && pl->spill && !o->cpus.n)
		l->scan_start = p->use_task_storage ? (user ? pg->scan_start_task_u : pg->scan_start_task) :
					(user ? pg->scan_start_hash_u : pg->scan_start_hash);
	l->scan_end = p->use_task_storage ? pg->scan_end_task : NULL;
	l->scan_ustack = l->scan_start && user;
	if (l->scan_start)
		err |= bpf_program__set_autoload(l->scan_start, true);
	if (l->scan_end)
		err |= bpf_program__set_autoload(l->scan_end, true);
	return err;
}

/*
 * The variant's sched_switch program, with the kernel walker WALKER (plan.h's
 * KWALK_*): bpf_loop's in programs of their own, the tail-call walker in the
 * bounded loop's (cfg.kwalk_tail).
 */
static struct bpf_program *switch_program(const struct loader_progs *pg, const struct probe *p,
					  int walker)
{
	bool loop = walker == KWALK_LOOP;

	if (p->classic_tp)
		return pg->on_switch_tp;
	if (p->use_task_storage)
		return loop ? pg->on_switch_task_loop : pg->on_switch_task;
	if (p->tp_btf)
		return loop ? pg->on_switch_hash_loop : pg->on_switch_hash;
	return loop ? pg->on_switch_raw_loop : pg->on_switch_raw;
}

/* The tail-call walker's step: of the sched_switch program's type, as a tail call needs. */
static struct bpf_program *kwalk_step(const struct loader *l, const struct probe *p)
{
	return p->tp_btf ? l->progs.kwalk_step_btf : l->progs.kwalk_step_raw;
}

/* Only the chosen variant's program and storage are loaded and created. */
static int select_variant(struct loader *l, const struct offcpu_opts *o,
			  const struct target *t, const struct probe *p, const struct plan *pl)
{
	const struct loader_progs *pg = &l->progs;
	const struct loader_maps *m = &l->maps;
	struct bpf_program *want = switch_program(pg, p, l->kwalk);
	struct bpf_program *pr;
	int err = 0;

	bpf_object__for_each_program(pr, l->obj)
		bpf_program__set_autoload(pr, false);
	err |= bpf_program__set_autoload(want, true);
	if (l->kwalk == KWALK_TAIL && !p->classic_tp)
		err |= bpf_program__set_autoload(kwalk_step(l, p), true);
	if (p->classic_tp) {
		/* Forks: kernel threads (-u) and -p; frees: every tid's entries. */
		if (t->pid_filter || o->user_only)
			err |= bpf_program__set_autoload(pg->on_fork_tp, true);
		err |= bpf_program__set_autoload(pg->on_free_tp, true);
		err |= bpf_map__set_max_entries(m->kthreads, o->user_only ? KTHREAD_ENTRIES : 1);
	} else {
		/* Forks: -p; --unwind-in kernel (the parent's mappings). */
		if (t->pid_filter || pl->kunwind)
			err |= bpf_program__set_autoload(pg->on_fork, true);
		if (pl->kunwind)
			err |= bpf_program__set_autoload(pg->on_exit_ku, true);
		if (!p->use_task_storage)
			err |= bpf_program__set_autoload(pg->on_exit, true);
		err |= bpf_map__set_autocreate(m->task_start, p->use_task_storage);
		err |= bpf_map__set_max_entries(m->ucache, pl->ucache_entries);
		if (o->wakers)
			err |= bpf_program__set_autoload(p->use_task_storage ? pg->on_waking_task :
							 p->tp_btf ? pg->on_waking_hash :
							 pg->on_waking_raw, true);
		/* Interrupt work marked for the wakers (offcpu.bpf.c, in_irq). */
		if (o->wakers) {
			err |= bpf_program__set_autoload(pg->on_hrtimer_entry, true);
			err |= bpf_program__set_autoload(pg->on_hrtimer_exit, true);
			err |= bpf_program__set_autoload(pg->on_softirq_entry, true);
			err |= bpf_program__set_autoload(pg->on_softirq_exit, true);
		}
		err |= bpf_map__set_max_entries(m->wsums, o->wakers ? SUMS_ENTRIES : 1);
		err |= bpf_map__set_max_entries(m->ku_rows, pl->ku_rows);
		err |= bpf_map__set_max_entries(m->ku_files, pl->kunwind ? OFFCPU_KFILES : 1);
		err |= bpf_map__set_max_entries(m->ku_procs, pl->kunwind ? OFFCPU_KPROCS : 1);
		err |= bpf_map__set_max_entries(m->ku_want, pl->kunwind ? OFFCPU_KWANT : 1);
	}
	err |= select_scans(l, o, p, pl);
	err |= bpf_map__set_autocreate(m->tid_start, !p->use_task_storage);
	err |= bpf_map__set_max_entries(m->tid_start, TID_ENTRIES);
	err |= bpf_map__set_value_size(m->stacks, pl->max_stack * sizeof(uint64_t));
	err |= bpf_map__set_max_entries(m->stacks, pl->ustack_entries);
	err |= bpf_map__set_value_size(m->kstacks, pl->kstack_frames * sizeof(uint64_t));
	err |= bpf_map__set_max_entries(m->kstacks, pl->kstack_entries);
	err |= bpf_map__set_max_entries(m->ustack_spill, pl->ustack_spill_entries);
	err |= bpf_map__set_max_entries(m->kstack_spill, pl->kstack_spill_entries);
	err |= bpf_map__set_max_entries(m->sums, SUMS_ENTRIES);
	err |= bpf_map__set_max_entries(m->events, pl->ring_bytes);
	/* Unused filters still exist (the code refers to them): keep them tiny. */
	err |= bpf_map__set_max_entries(m->pid_filter, t->pid_filter ? PID_FILTER_ENTRIES : 1);
	err |= bpf_map__set_max_entries(m->tid_filter, o->tids.n ? o->tids.n : 1);
	err |= bpf_map__set_max_entries(m->cpu_filter, o->cpus.n ? o->cpus.n : 1);
	return err ? -1 : 0;
}

static int fill_filter(struct bpf_map *m, const struct id_list *l)
{
	int fd = bpf_map__fd(m);
	uint8_t one = 1;

	for (size_t i = 0; i < l->n; i++)
		if (bpf_map_update_elem(fd, &l->v[i], &one, BPF_ANY))
			return -1;
	return 0;
}

static uint64_t fd_memlock(int fd)
{
	char path[64], line[128];
	unsigned long long v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "memlock: %llu", &v) == 1)
			break;
	fclose(f);
	return v;
}

static void load_error(const struct probe *p, int err)
{
	fprintf(stderr, "offcpu: cannot load the BPF program (variant %s, kernel %s): %s%s\n",
		probe_variant(p), p->release, strerror(-err),
		libbpf_verbosity < 2 ? " (-vv shows libbpf's and the verifier's log)" : "");
	/* The verifier refuses these programs to the interpreter where a JIT exists. */
	if (p->jit_off)
		fprintf(stderr, "offcpu: this kernel's BPF JIT is off; turn it on: "
			"sysctl -w net.core.bpf_jit_enable=1\n");
}

/* Opens the embedded object and loads it with L's walker: 0, 1 (said), or a libbpf error. */
static int open_load(struct loader *l, const struct offcpu_opts *o, const struct target *t,
		     const struct probe *p, const struct plan *pl)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .object_name = "offcpu",
		    .btf_custom_path = p->btf_path[0] ? p->btf_path : NULL);

	/* The BTF-free variant is its own object: libbpf would want vmlinux BTF for the other. */
	if (p->classic_tp)
		l->obj = bpf_object__open_mem(offcpu_tp_bpf_obj, offcpu_tp_bpf_obj_end - offcpu_tp_bpf_obj, &oo);
	else
		l->obj = bpf_object__open_mem(offcpu_bpf_obj, offcpu_bpf_obj_end - offcpu_bpf_obj, &oo);
	if (!l->obj) {
		fprintf(stderr, "offcpu: cannot open the embedded BPF object: %s\n", strerror(errno));
		return 1;
	}
	if (find_objects(l, p->classic_tp) || configure(l->obj, o, t, p, pl, l->kwalk) || select_variant(l, o, t, p, pl)) {
		fprintf(stderr, "offcpu: the embedded BPF object does not match this build\n");
		return 1;
	}
	return bpf_object__load(l->obj);
}

/* The tail-call walker's programs in its prog array (offcpu_unwind.bpf.h, ku_tail). */
static int fill_tail(struct loader *l, const struct probe *p)
{
	int fd = bpf_map__fd(l->maps.ku_tail);
	uint32_t step = 0, sw = 1;	/* KU_TAIL_STEP, KU_TAIL_SWITCH */
	int step_fd = bpf_program__fd(kwalk_step(l, p));
	int sw_fd = bpf_program__fd(switch_program(&l->progs, p, KWALK_TAIL));

	if (bpf_map_update_elem(fd, &step, &step_fd, BPF_ANY) ||
	    bpf_map_update_elem(fd, &sw, &sw_fd, BPF_ANY)) {
		fprintf(stderr, "offcpu: cannot set up the kernel walker's tail calls: %s\n",
			strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * The planned walker, or where the tail-call walker does not load (a JIT
 * that refuses tail calls beside bpf-to-bpf calls, arm64's before 6.0) the
 * bounded loop: only loading tells, the verifier's rules differing by JIT.
 */
static int load_walker(struct loader *l, const struct offcpu_opts *o, const struct target *t,
		       const struct probe *p, const struct plan *pl)
{
	static char why[160];
	const char *said = pl->kwalk_why;
	int err;

	l->kwalk = pl->kunwind ? pl->kwalk : KWALK_BOUNDED;
	err = open_load(l, o, t, p, pl);
	if (err >= 0 || l->kwalk != KWALK_TAIL || pl->kwalk_forced)
		goto out;
	snprintf(why, sizeof(why), "bounded loop, verified frame by frame (the tail-call walker "
		 "did not load: %s)", strerror(-err));
	said = why;
	bpf_object__close(l->obj);
	l->obj = NULL;
	memset(&l->maps, 0, sizeof(l->maps));
	memset(&l->progs, 0, sizeof(l->progs));
	l->kwalk = KWALK_BOUNDED;
	err = open_load(l, o, t, p, pl);
out:
	if (o->verbose && pl->kunwind)
		fprintf(stderr, "kernel walker: %s\n", said);
	if (err < 0)
		load_error(p, err);
	if (!err && l->kwalk == KWALK_TAIL && fill_tail(l, p))
		return -1;
	return err ? -1 : 0;
}

int loader_load(struct loader *l, const struct offcpu_opts *o, const struct target *t,
		const struct probe *p, const struct plan *pl)
{
	struct bpf_map *m;

	memset(l, 0, sizeof(*l));
	loader_set_verbosity(o->verbose);
	if (o->wakers && p->classic_tp) {
		fprintf(stderr, "offcpu: --wakers is not supported by the %s variant (no BTF: the "
			"classic sched_waking record names no task to look up)\n", probe_variant(p));
		return -1;
	}
	if (pl->kunwind && pl->kwalk_bad) {
		fprintf(stderr, "offcpu: OFFCPU_KWALKER=%s names no kernel walker (bpf_loop, tail "
			"or bounded)\n", pl->kwalk_bad);
		return -1;
	}
	l->plan = pl;
	l->kthreads_fd = -1;
	l->ku_rows_fd = l->ku_files_fd = l->ku_procs_fd = l->ku_want_fd = -1;
	l->classic_tp = p->classic_tp;
	l->tp = p->tp;
	if (load_walker(l, o, t, p, pl))
		return -1;
	l->events_fd = bpf_map__fd(l->maps.events);
	l->sums_fd = bpf_map__fd(l->maps.sums);
	l->wsums_fd = o->wakers ? bpf_map__fd(l->maps.wsums) : -1;
	l->stacks_fd = bpf_map__fd(l->maps.stacks);
	l->kstacks_fd = bpf_map__fd(l->maps.kstacks);
	l->ustack_spill_fd = bpf_map__fd(l->maps.ustack_spill);
	l->kstack_spill_fd = bpf_map__fd(l->maps.kstack_spill);
	l->counters_fd = bpf_map__fd(l->maps.counters);
	l->tid_start_fd = p->use_task_storage ? -1 : bpf_map__fd(l->maps.tid_start);
	l->pid_filter_fd = bpf_map__fd(l->maps.pid_filter);
	l->ucache_fd = pl->dwarf && pl->stack_cache ? bpf_map__fd(l->maps.ucache) : -1;
	if (pl->kunwind) {
		l->ku_rows_fd = bpf_map__fd(l->maps.ku_rows);
		l->ku_files_fd = bpf_map__fd(l->maps.ku_files);
		l->ku_procs_fd = bpf_map__fd(l->maps.ku_procs);
		l->ku_want_fd = bpf_map__fd(l->maps.ku_want);
	}
	if (p->classic_tp && o->user_only)
		l->kthreads_fd = bpf_map__fd(l->maps.kthreads);
	if (fill_filter(l->maps.pid_filter, &t->pids) ||
	    fill_filter(l->maps.tid_filter, &o->tids) ||
	    fill_filter(l->maps.cpu_filter, &o->cpus)) {
		fprintf(stderr, "offcpu: cannot set up the filters: %s\n", strerror(errno));
		return -1;
	}
	bpf_object__for_each_map(m, l->obj)
		if (bpf_map__fd(m) >= 0)
			l->memlock += fd_memlock(bpf_map__fd(m));
	return 0;
}

/*
 * The context-switch software event tells a block from a preemption, not S
 * from D: every block is recorded, its state unknown, so a --state that
 * keeps one of them cannot be honoured.
 */
static int check_state(const struct offcpu_opts *o, const struct probe *p)
{
	uint32_t both = OFFCPU_TASK_INTERRUPTIBLE | OFFCPU_TASK_UNINTERRUPTIBLE;

	if (!p->swevent || o->state_mask == both)
		return 0;
	fprintf(stderr, "offcpu: --state %s needs the sleep state, which the context-switch "
		"software event does not give (tracefs has no sched_switch: %s)\n",
		o->state_mask & OFFCPU_TASK_INTERRUPTIBLE ? "S" : "D", p->swevent_why);
	return -1;
}

/*
 * --wakers on the perf backend needs a waking tracepoint from tracefs
 * (switch_wakers.c); the software event stands in where tracefs has none.
 */
static int check_wakers(const struct offcpu_opts *o, const struct probe *p)
{
	if (!o->wakers)
		return 0;
	if (p->swevent) {
		fprintf(stderr, "offcpu: --wakers needs sched:sched_waking from tracefs, which the "
			"context-switch software event does not replace (tracefs has no "
			"sched_switch: %s)\n", p->swevent_why);
		return -1;
	}
	if (!p->tp.waking_event[0]) {
		fprintf(stderr, "offcpu: --wakers needs sched:sched_waking or sched_wakeup from "
			"tracefs (%s)\n", p->tp.waking_err);
		return -1;
	}
	if (strcmp(p->tp.waking_event, "sched_waking"))
		fprintf(stderr, "offcpu: --wakers: tracefs has no sched_waking, recording %s "
			"(a remote wakeup's waker is the interrupt that ran it: [irq])\n",
			p->tp.waking_event);
	return 0;
}

int loader_none(struct loader *l, const struct offcpu_opts *o, const struct probe *p,
		const struct plan *pl)
{
	memset(l, 0, sizeof(*l));
	if (check_wakers(o, p) || check_state(o, p))
		return -1;
	l->plan = pl;
	l->perf_backend = true;
	l->swevent = p->swevent;
	l->tp = p->tp;
	l->events_fd = l->sums_fd = l->stacks_fd = l->kstacks_fd = l->counters_fd = -1;
	l->pid_filter_fd = l->ustack_spill_fd = l->kstack_spill_fd = l->wsums_fd = -1;
	l->kthreads_fd = l->tid_start_fd = l->ucache_fd = -1;
	l->ku_rows_fd = l->ku_files_fd = l->ku_procs_fd = l->ku_want_fd = -1;
	return 0;
}

/* Whether /proc/TID/stat's flags have PF_KTHREAD. */
static bool is_kthread(const char *stat_path)
{
	char line[512], *p;
	unsigned int flags;
	FILE *f = fopen(stat_path, "r");
	bool kthread = false;

	if (!f)
		return false;
	/* The name may hold ") ": the fields follow the last one. */
	if (fgets(line, sizeof(line), f) && (p = strrchr(line, ')')) &&
	    sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %u", &flags) == 1)
		kthread = flags & OFFCPU_PF_KTHREAD;
	fclose(f);
	return kthread;
}

/*
 * The kernel threads that exist now (kthreadd's later children are added by
 * on_fork_tp, attached before this).  Kernel threads have no other threads,
 * so /proc's process entries list them all.  A full map is counted by the
 * program's DROP_KTHREADS for forks; here it is one warning.
 */
static int seed_kthreads(int fd)
{
	char path[64];
	struct dirent *d;
	DIR *dir = opendir("/proc");
	uint8_t one = 1;
	int full = 0;

	if (!dir) {
		fprintf(stderr, "offcpu: cannot list /proc to recognise kernel threads: %s\n",
			strerror(errno));
		return -1;
	}
	while ((d = readdir(dir))) {
		uint32_t tid = (uint32_t)strtoul(d->d_name, NULL, 10);

		if (!tid)
			continue;
		snprintf(path, sizeof(path), "/proc/%u/stat", tid);
		if (is_kthread(path) && bpf_map_update_elem(fd, &tid, &one, BPF_ANY))
			full++;
	}
	closedir(dir);
	if (full)
		fprintf(stderr, "offcpu: %d kernel threads not recognised (kthreads map full): "
			"their blocks are recorded\n", full);
	return 0;
}

/*
 * A classic tracepoint by the id read from its format (libbpf would look it
 * up in a tracefs that offcpu may have mounted only for the reading).  One
 * event on CPU 0 is enough: the program runs for the tracepoint on every CPU.
 */
static struct bpf_link *attach_tracepoint(struct bpf_program *pr, uint32_t id)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_TRACEPOINT, .size = sizeof(attr), .config = id,
	};
	struct bpf_link *link;
	int fd, err;

	fd = syscall(__NR_perf_event_open, &attr, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return NULL;
	link = bpf_program__attach_perf_event(pr, fd);
	if (!link) {
		err = errno;
		close(fd);
		errno = err;
	}
	return link;
}

static uint32_t tracepoint_id(const struct loader *l, struct bpf_program *pr)
{
	const char *name = bpf_program__name(pr);

	if (!l->classic_tp)
		return 0;
	return !strcmp(name, "on_switch_tp") ? l->tp.switch_id :
	       !strcmp(name, "on_fork_tp") ? l->tp.fork_id :
	       !strcmp(name, "on_free_tp") ? l->tp.free_id : 0;
}

static int attach_one(struct loader *l, struct bpf_program *pr)
{
	uint32_t id = tracepoint_id(l, pr);
	struct bpf_link *link;

	if (l->nr_links == (int)(sizeof(l->links) / sizeof(l->links[0]))) {
		fprintf(stderr, "offcpu: cannot attach %s: more programs than links\n",
			bpf_program__name(pr));
		return -1;
	}
	link = id ? attach_tracepoint(pr, id) : bpf_program__attach(pr);
	if (!link) {
		fprintf(stderr, "offcpu: cannot attach %s (%s): %s\n",
			bpf_program__name(pr), bpf_program__section_name(pr),
			strerror(errno));
		return -1;
	}
	l->links[l->nr_links++] = link;
	return 0;
}

/* Task iterators run on demand (bpf/offcpu_blocked.bpf.h), not attached here. */
static bool is_iter(struct bpf_program *pr)
{
	return !strncmp(bpf_program__section_name(pr), "iter", 4);
}

static bool is_switch(struct bpf_program *pr)
{
	return strstr(bpf_program__section_name(pr), "sched_switch") != NULL;
}

/* The tail-call walker's steps: reached by tail call only. */
static bool is_kwalk_step(const struct loader *l, const struct bpf_program *pr)
{
	return pr == l->progs.kwalk_step_btf || pr == l->progs.kwalk_step_raw;
}

/* An interrupt marker's entry (--wakers), attached after its exit: see mark_irq. */
static bool is_mark_entry(struct bpf_program *pr)
{
	const char *sec = bpf_program__section_name(pr);

	return !strcmp(sec, "raw_tp/hrtimer_expire_entry") || !strcmp(sec, "raw_tp/softirq_entry");
}

/*
 * Fork and exit hooks first, then the kernel threads of now, then
 * sched_switch: no thread is created unseen between the /proc scan and the
 * first recorded block.  Interrupt markers' exits before their entries: an
 * entry seen without its exit would leave a marker set.
 */
int loader_attach(struct loader *l)
{
	struct bpf_program *pr;

	bpf_object__for_each_program(pr, l->obj)
		if (bpf_program__autoload(pr) && !is_switch(pr) && !is_iter(pr) &&
		    !is_mark_entry(pr) && attach_one(l, pr))
			return -1;
	bpf_object__for_each_program(pr, l->obj)
		if (bpf_program__autoload(pr) && is_mark_entry(pr) && attach_one(l, pr))
			return -1;
	if (l->kthreads_fd >= 0 && seed_kthreads(l->kthreads_fd))
		return -1;
	bpf_object__for_each_program(pr, l->obj)
		if (bpf_program__autoload(pr) && is_switch(pr) && !is_kwalk_step(l, pr) &&
		    attach_one(l, pr))
			return -1;
	return 0;
}

uint64_t loader_missed(const struct loader *l)
{
	uint64_t missed = 0;

	for (int i = 0; i < l->nr_links; i++) {
		struct bpf_prog_info info = { 0 };
		uint32_t len = sizeof(info);
		int fd = bpf_link__fd(l->links[i]);
		struct bpf_link_info link = { 0 };
		uint32_t link_len = sizeof(link);
		int prog_fd;

		/* A perf-event link has no program fd of its own: find it by id. */
		if (bpf_link_get_info_by_fd(fd, &link, &link_len))
			continue;
		prog_fd = bpf_prog_get_fd_by_id(link.prog_id);
		if (prog_fd < 0)
			continue;
		if (!bpf_prog_get_info_by_fd(prog_fd, &info, &len))
			missed += info.recursion_misses;
		close(prog_fd);
	}
	return missed;
}

void loader_print_maps(const struct loader *l, FILE *out)
{
	struct bpf_map *m;

	if (!l->obj)
		return;
	bpf_object__for_each_map(m, l->obj) {
		if (bpf_map__fd(m) < 0)
			continue;
		fprintf(out, "map %-12s entries %-7u locked %7llu KiB\n", bpf_map__name(m),
			bpf_map__max_entries(m),
			(unsigned long long)fd_memlock(bpf_map__fd(m)) / 1024);
	}
	fprintf(out, "locked map memory: %.2f MiB\n", l->memlock / 1048576.0);
}

void loader_detach(struct loader *l)
{
	for (int i = 0; i < l->nr_links; i++)
		bpf_link__destroy(l->links[i]);
	l->nr_links = 0;
}

void loader_close(struct loader *l)
{
	loader_detach(l);
	bpf_object__close(l->obj);
	l->obj = NULL;
}

static int selftest_object(FILE *out, const char *what, const unsigned char *bytes,
			   const unsigned char *end)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .object_name = "offcpu");
	struct bpf_object *obj;
	struct bpf_program *pr;
	struct bpf_map *m;

	obj = bpf_object__open_mem(bytes, end - bytes, &oo);
	if (!obj) {
		fprintf(stderr, "offcpu: cannot open the embedded %s BPF object: %s\n", what,
			strerror(errno));
		return -1;
	}
	fprintf(out, "bpf object %s: %zu bytes\n", what, (size_t)(end - bytes));
	bpf_object__for_each_program(pr, obj)
		fprintf(out, "program: %s %s\n", bpf_program__name(pr), bpf_program__section_name(pr));
	bpf_object__for_each_map(m, obj)
		fprintf(out, "map: %s type %d\n", bpf_map__name(m), bpf_map__type(m));
	bpf_object__close(obj);
	return 0;
}

int loader_selftest(FILE *out)
{
	libbpf_set_print(print_libbpf);
	if (selftest_object(out, "CO-RE", offcpu_bpf_obj, offcpu_bpf_obj_end) ||
	    selftest_object(out, "BTF-free", offcpu_tp_bpf_obj, offcpu_tp_bpf_obj_end))
		return -1;
	return 0;
}
