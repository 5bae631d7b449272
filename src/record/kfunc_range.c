// SPDX-License-Identifier: GPL-2.0
/*
 * A kernel function's range from a syscall program (5.16+), which looks its
 * address up and prints it with %pS: "name+0x0/0xsize", the size being the
 * distance to the next higher symbol, as /proc/kallsyms's reader computes
 * it (the kernel takes both from one table).  Reading /proc/kallsyms makes
 * the kernel format its 120,000 lines (45 ms of kernel time, a fifth of a
 * recording's CPU); it stays the fallback wherever the program does not
 * load or run (older kernels) or names another symbol: never a guess.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "lib/ksyms.h"
#include "record/embed.h"
#include "record/kfunc_range.h"
#include "offcpu.h"

/* bpf/offcpu_ksym.bpf.c loaded once, run once per name. */
struct lookup {
	struct bpf_object *obj;
	int bss, prog;		/* fds */
	libbpf_print_fn_t print;
};

static void lookup_close(struct lookup *l)
{
	bpf_object__close(l->obj);
	libbpf_set_print(l->print);
}

/*
 * Opens and loads the object into L: 0, or -errno (no syscall programs or
 * no bpf_kallsyms_lookup_name: before 5.16).  libbpf says nothing until
 * lookup_close: an old kernel's refusal is expected, not an error.
 */
static int lookup_open(struct lookup *l)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .object_name = "offcpu_ksym");
	struct bpf_program *prog;
	struct bpf_map *bss;
	int err;

	l->print = libbpf_set_print(NULL);
	l->obj = bpf_object__open_mem(offcpu_ksym_bpf_obj,
				      offcpu_ksym_bpf_obj_end - offcpu_ksym_bpf_obj, &oo);
	if (!l->obj)
		return -errno;
	bss = bpf_object__find_map_by_name(l->obj, ".bss");
	prog = bpf_object__find_program_by_name(l->obj, "name_range");
	if (!bss || !prog || bpf_map__value_size(bss) != sizeof(struct offcpu_ksym))
		return -ENOENT;
	err = bpf_object__load(l->obj);
	if (err)
		return err;
	l->bss = bpf_map__fd(bss);
	l->prog = bpf_program__fd(prog);
	return 0;
}

/*
 * NAME's lookup into K: 0 (K->ret the helper's result; K->text NAME's %pS
 * when it is 0), or -errno.
 */
static int lookup_run(const struct lookup *l, const char *name, struct offcpu_ksym *k)
{
	LIBBPF_OPTS(bpf_test_run_opts, run);
	uint32_t zero = 0;

	memset(k, 0, sizeof(*k));
	if (strlen(name) >= sizeof(k->name))
		return -ENAMETOOLONG;
	strcpy(k->name, name);
	if (bpf_map_update_elem(l->bss, &zero, k, BPF_ANY) ||
	    bpf_prog_test_run_opts(l->prog, &run) ||
	    bpf_map_lookup_elem(l->bss, &zero, k))
		return -errno;
	k->text[sizeof(k->text) - 1] = '\0';
	return 0;
}

/* One name's lookup: 0 (K filled, as lookup_run), or -errno. */
static int lookup(const char *name, struct offcpu_ksym *k)
{
	struct lookup l = { 0 };
	int err = lookup_open(&l);

	err = err ? err : lookup_run(&l, name, k);
	lookup_close(&l);
	return err;
}

const char *kfunc_range(const char *name, uint64_t *lo, uint64_t *hi)
{
	static char how[320];
	struct offcpu_ksym b;
	int err = lookup(name, &b);

	if (!err && !b.ret && !ksyms_parse_symbol(b.text, b.addr, name, lo, hi)) {
		snprintf(how, sizeof(how), "%s [%#llx, %#llx) from a syscall program "
			 "(bpf_kallsyms_lookup_name, %%pS)", name, (unsigned long long)*lo,
			 (unsigned long long)*hi);
		return how;
	}
	if (ksyms_running_range(name, lo, hi)) {
		snprintf(how, sizeof(how), "%s not found (/proc/kallsyms unreadable, or its "
			 "addresses hidden): kernel stacks not cut", name);
		return how;
	}
	snprintf(how, sizeof(how), "%s [%#llx, %#llx) from /proc/kallsyms (the syscall program %s%s)",
		 name, (unsigned long long)*lo, (unsigned long long)*hi,
		 err ? "did not run: " : b.ret ? "could not look it up: " : "named another symbol: ",
		 err ? strerror(-err) : b.ret ? strerror((int)-b.ret) : b.text);
	return how;
}

/*
 * NAMES[I] by the program into LO[I], HI[I]: 1 found, 0 absent (-ENOENT),
 * -1 left to /proc/kallsyms (not run, addresses hidden, another symbol).
 */
static int range_by_program(const struct lookup *l, const char *name, uint64_t *lo,
			    uint64_t *hi)
{
	struct offcpu_ksym k;

	*lo = *hi = 0;
	if (lookup_run(l, name, &k))
		return -1;
	if (k.ret == -ENOENT)
		return 0;
	if (k.ret || ksyms_parse_symbol(k.text, k.addr, name, lo, hi))
		return -1;
	return 1;
}

const char *kfunc_ranges(const char *const *names, size_t n, uint64_t *lo, uint64_t *hi)
{
	static char how[256];
	const char *rest[KFUNC_RANGES_MAX];
	uint64_t rlo[KFUNC_RANGES_MAX], rhi[KFUNC_RANGES_MAX];
	size_t idx[KFUNC_RANGES_MAX], nrest = 0, found = 0, absent = 0;
	struct lookup l = { 0 };
	int err = lookup_open(&l);

	for (size_t i = 0; i < n && i < KFUNC_RANGES_MAX; i++) {
		int r = err ? -1 : range_by_program(&l, names[i], &lo[i], &hi[i]);

		found += r == 1;
		absent += r == 0;
		if (r < 0) {
			idx[nrest] = i;
			rest[nrest++] = names[i];
		}
	}
	lookup_close(&l);
	if (nrest)
		ksyms_running_ranges(rest, nrest, rlo, rhi);
	for (size_t j = 0; j < nrest; j++) {
		lo[idx[j]] = rlo[j];
		hi[idx[j]] = rhi[j];
	}
	if (err)
		snprintf(how, sizeof(how), "from /proc/kallsyms (the syscall program did not run: %s)",
			 strerror(-err));
	else
		snprintf(how, sizeof(how), "%zu from a syscall program (bpf_kallsyms_lookup_name, "
			 "%%pS), %zu absent there, %zu from /proc/kallsyms", found, absent, nrest);
	return how;
}

bool kfunc_exists(const char *name)
{
	struct offcpu_ksym b;

	if (!lookup(name, &b) && (!b.ret || b.ret == -ENOENT))
		return !b.ret;
	return ksyms_running_has(name);
}
