// SPDX-License-Identifier: GPL-2.0
/* Load and attach the embedded BPF object as the probe decided. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "embed.h"
#include "loader.h"
#include "offcpu.h"

/* Map sizes, chosen to keep locked memory under 4 MiB by default. */
/*
 * A spill map per stack map, an eighth of its size: 2048 buckets fill with
 * ~1100 distinct stacks before 256 of them have collided.
 */
#define SPILL_SHARE	8
#define SPILL_MIN	64
#define SUMS_ENTRIES	4096
#define TID_ENTRIES	8192
#define RINGBUF_BYTES	(256 * 1024)

static int libbpf_verbosity;

static int print_libbpf(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if ((level == LIBBPF_WARN && libbpf_verbosity >= 1) ||
	    (level == LIBBPF_INFO && libbpf_verbosity >= 2) ||
	    libbpf_verbosity >= 3)
		return vfprintf(stderr, fmt, ap);
	return 0;
}

void loader_set_verbosity(int verbose)
{
	libbpf_verbosity = verbose;
	libbpf_set_print(print_libbpf);
}

/* Set a `const volatile` global of .rodata by name, checking its size. */
static int set_rodata(struct bpf_object *obj, const char *name, const void *val, size_t size)
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
		return -ENOENT;
	data = bpf_map__initial_value(map, &map_size);
	sec = btf__type_by_id(btf, id);
	vs = btf_var_secinfos(sec);
	for (int i = 0; i < btf_vlen(sec); i++, vs++) {
		const struct btf_type *var = btf__type_by_id(btf, vs->type);

		if (strcmp(btf__name_by_offset(btf, var->name_off), name))
			continue;
		if (vs->size != size || vs->offset + size > map_size)
			return -EINVAL;
		memcpy(data + vs->offset, val, size);
		return 0;
	}
	return -ENOENT;
}

#define SET(obj, var, val) ({ __typeof__(val) __v = (val); \
	set_rodata(obj, var, &__v, sizeof(__v)); })

static int configure(struct bpf_object *obj, const struct offcpu_opts *o,
		     const struct probe *p)
{
	int err = 0;

	err |= SET(obj, "thresh_ns", (uint64_t)o->thresh_ns);
	err |= SET(obj, "min_ns", (uint64_t)o->min_block_ns);
	err |= SET(obj, "max_ns", (uint64_t)o->max_block_ns);
	err |= SET(obj, "state_mask", (uint32_t)o->state_mask);
	err |= SET(obj, "user_only", (_Bool)o->user_only);
	err |= SET(obj, "want_ustack", (_Bool)o->ustack);
	err |= SET(obj, "want_kstack", (_Bool)o->kstack);
	err |= SET(obj, "filter_pid", (_Bool)(o->pids.n || o->cmdv));
	err |= SET(obj, "filter_tid", (_Bool)(o->tids.n != 0));
	err |= SET(obj, "filter_cpu", (_Bool)(o->cpus.n != 0));
	err |= SET(obj, "has_prev_state_arg", (_Bool)p->prev_state_arg);
	err |= SET(obj, "self_pid", (uint32_t)getpid());
	err |= SET(obj, "stack_cache", (_Bool)loader_stack_cache(o, p));
	err |= SET(obj, "stack_cache_verify", (_Bool)(o->stack_cache == STACK_CACHE_VERIFY));
	err |= SET(obj, "spill_bytes", (uint32_t)(loader_spill(o) ? o->max_stack * sizeof(uint64_t) : 0));
	return err ? -1 : 0;
}

bool loader_stack_cache(const struct offcpu_opts *o, const struct probe *p)
{
	return o->ustack && o->stack_cache != STACK_CACHE_OFF && p->task_pt_regs;
}

/* Spilled stacks are map keys, and a key holds at most OFFCPU_SPILL_FRAMES. */
bool loader_spill(const struct offcpu_opts *o)
{
	return o->max_stack <= OFFCPU_SPILL_FRAMES;
}

static struct bpf_program *prog(struct bpf_object *obj, const char *name)
{
	return bpf_object__find_program_by_name(obj, name);
}

static struct bpf_map *map(struct bpf_object *obj, const char *name)
{
	return bpf_object__find_map_by_name(obj, name);
}

/* Only the chosen variant's program and storage are loaded and created. */
static int select_variant(struct bpf_object *obj, const struct offcpu_opts *o,
			  const struct probe *p, uint32_t max_stack)
{
	const char *want = p->use_task_storage ? "on_switch_task" :
			   p->tp_btf ? "on_switch_hash" : "on_switch_raw";
	bool filter_pid = o->pids.n || o->cmdv;
	uint32_t spill = o->stack_entries / SPILL_SHARE;
	struct bpf_program *pr;
	int err = 0;

	if (spill < SPILL_MIN)
		spill = SPILL_MIN;
	bpf_object__for_each_program(pr, obj)
		bpf_program__set_autoload(pr, false);
	err |= bpf_program__set_autoload(prog(obj, want), true);
	if (filter_pid)
		err |= bpf_program__set_autoload(prog(obj, "on_fork"), true);
	if (!p->use_task_storage)
		err |= bpf_program__set_autoload(prog(obj, "on_exit"), true);
	err |= bpf_map__set_autocreate(map(obj, "task_start"), p->use_task_storage);
	err |= bpf_map__set_autocreate(map(obj, "tid_start"), !p->use_task_storage);
	err |= bpf_map__set_max_entries(map(obj, "tid_start"), TID_ENTRIES);
	err |= bpf_map__set_value_size(map(obj, "stacks"), max_stack * sizeof(uint64_t));
	err |= bpf_map__set_max_entries(map(obj, "stacks"), o->ustack ? o->stack_entries : 1);
	err |= bpf_map__set_value_size(map(obj, "kstacks"), max_stack * sizeof(uint64_t));
	err |= bpf_map__set_max_entries(map(obj, "kstacks"), o->kstack ? o->stack_entries : 1);
	err |= bpf_map__set_max_entries(map(obj, "ustack_spill"),
					o->ustack && loader_spill(o) ? spill : 1);
	err |= bpf_map__set_max_entries(map(obj, "kstack_spill"),
					o->kstack && loader_spill(o) ? spill : 1);
	err |= bpf_map__set_max_entries(map(obj, "sums"), SUMS_ENTRIES);
	err |= bpf_map__set_max_entries(map(obj, "events"), RINGBUF_BYTES);
	/* Unused filters still exist (the code refers to them): keep them tiny. */
	err |= bpf_map__set_max_entries(map(obj, "pid_filter"), filter_pid ? 1024 : 1);
	err |= bpf_map__set_max_entries(map(obj, "tid_filter"), o->tids.n ? o->tids.n : 1);
	err |= bpf_map__set_max_entries(map(obj, "cpu_filter"), o->cpus.n ? o->cpus.n : 1);
	return err ? -1 : 0;
}

static int fill_filter(struct bpf_object *obj, const char *name, const struct id_list *l)
{
	int fd = bpf_map__fd(map(obj, name));
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
	fprintf(stderr, "offcpu: cannot load the BPF program (variant %s,%s, kernel %s): %s%s\n",
		p->tp_btf ? "tp_btf" : "raw_tp", p->use_task_storage ? "task" : "hash",
		p->release, strerror(-err),
		libbpf_verbosity < 2 ? " (-vv shows libbpf's and the verifier's log)" : "");
}

int loader_load(struct loader *l, const struct offcpu_opts *o, const struct probe *p)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .object_name = "offcpu",
		    .btf_custom_path = p->btf_path[0] ? p->btf_path : NULL);
	struct bpf_map *m;
	int err;

	memset(l, 0, sizeof(*l));
	loader_set_verbosity(o->verbose);
	l->max_stack = o->max_stack;
	l->obj = bpf_object__open_mem(offcpu_bpf_obj, offcpu_bpf_obj_end - offcpu_bpf_obj, &oo);
	if (!l->obj) {
		fprintf(stderr, "offcpu: cannot open the embedded BPF object: %s\n", strerror(errno));
		return -1;
	}
	if (configure(l->obj, o, p) || select_variant(l->obj, o, p, o->max_stack)) {
		fprintf(stderr, "offcpu: the embedded BPF object does not match this build\n");
		return -1;
	}
	err = bpf_object__load(l->obj);
	if (err) {
		load_error(p, err);
		return -1;
	}
	l->events_fd = bpf_map__fd(map(l->obj, "events"));
	l->sums_fd = bpf_map__fd(map(l->obj, "sums"));
	l->stacks_fd = bpf_map__fd(map(l->obj, "stacks"));
	l->kstacks_fd = bpf_map__fd(map(l->obj, "kstacks"));
	l->ustack_spill_fd = bpf_map__fd(map(l->obj, "ustack_spill"));
	l->kstack_spill_fd = bpf_map__fd(map(l->obj, "kstack_spill"));
	l->counters_fd = bpf_map__fd(map(l->obj, "counters"));
	l->pid_filter_fd = bpf_map__fd(map(l->obj, "pid_filter"));
	if (fill_filter(l->obj, "pid_filter", &o->pids) ||
	    fill_filter(l->obj, "tid_filter", &o->tids) ||
	    fill_filter(l->obj, "cpu_filter", &o->cpus)) {
		fprintf(stderr, "offcpu: cannot set up the filters: %s\n", strerror(errno));
		return -1;
	}
	bpf_object__for_each_map(m, l->obj)
		if (bpf_map__fd(m) >= 0)
			l->memlock += fd_memlock(bpf_map__fd(m));
	return 0;
}

int loader_attach(struct loader *l)
{
	struct bpf_program *pr;

	bpf_object__for_each_program(pr, l->obj) {
		struct bpf_link *link;

		if (!bpf_program__autoload(pr))
			continue;
		link = bpf_program__attach(pr);
		if (!link) {
			fprintf(stderr, "offcpu: cannot attach %s (%s): %s\n",
				bpf_program__name(pr), bpf_program__section_name(pr),
				strerror(errno));
			return -1;
		}
		l->links[l->nr_links++] = link;
	}
	return 0;
}

void loader_print_maps(const struct loader *l, FILE *out)
{
	struct bpf_map *m;

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

int loader_selftest(FILE *out)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .object_name = "offcpu");
	struct bpf_object *obj;
	struct bpf_program *pr;
	struct bpf_map *m;

	libbpf_set_print(print_libbpf);
	obj = bpf_object__open_mem(offcpu_bpf_obj, offcpu_bpf_obj_end - offcpu_bpf_obj, &oo);
	if (!obj) {
		fprintf(stderr, "offcpu: cannot open the embedded BPF object: %s\n", strerror(errno));
		return -1;
	}
	fprintf(out, "bpf object: %zu bytes\n", (size_t)(offcpu_bpf_obj_end - offcpu_bpf_obj));
	bpf_object__for_each_program(pr, obj)
		fprintf(out, "program: %s %s\n", bpf_program__name(pr), bpf_program__section_name(pr));
	bpf_object__for_each_map(m, obj)
		fprintf(out, "map: %s type %d\n", bpf_map__name(m), bpf_map__type(m));
	bpf_object__close(obj);
	return 0;
}
