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

/* The .bss of bpf/offcpu_ksym.bpf.c. */
struct ksym_bss {
	char name[OFFCPU_KSYM_NAME];
	int64_t ret;		/* bpf_kallsyms_lookup_name's */
	uint64_t addr;
	char text[OFFCPU_KSYM_TEXT];
};

/* Loads the object with B's name and runs it once: 0 (B's answer filled), or -errno. */
static int run_lookup(struct bpf_object *obj, struct ksym_bss *b)
{
	struct bpf_map *bss = bpf_object__find_map_by_name(obj, ".bss");
	struct bpf_program *prog = bpf_object__find_program_by_name(obj, "name_range");
	LIBBPF_OPTS(bpf_test_run_opts, run);
	uint32_t zero = 0;
	int err;

	if (!bss || !prog || bpf_map__value_size(bss) != sizeof(*b))
		return -ENOENT;
	err = bpf_map__set_initial_value(bss, b, sizeof(*b));
	err = err ? err : bpf_object__load(obj);
	err = err ? err : bpf_prog_test_run_opts(bpf_program__fd(prog), &run);
	if (!err && bpf_map_lookup_elem(bpf_map__fd(bss), &zero, b))
		err = -errno;
	return err;
}

/*
 * NAME's lookup into B: 0 (B->ret the helper's result; B->text NAME's %pS
 * when it is 0), or -errno (no syscall programs or no
 * bpf_kallsyms_lookup_name: before 5.16).  libbpf says nothing meanwhile:
 * an old kernel's refusal is expected, not an error.
 */
static int lookup(const char *name, struct ksym_bss *b)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .object_name = "offcpu_ksym");
	libbpf_print_fn_t print;
	struct bpf_object *obj;
	int err;

	memset(b, 0, sizeof(*b));
	if (strlen(name) >= sizeof(b->name))
		return -ENAMETOOLONG;
	strcpy(b->name, name);
	print = libbpf_set_print(NULL);
	obj = bpf_object__open_mem(offcpu_ksym_bpf_obj, offcpu_ksym_bpf_obj_end - offcpu_ksym_bpf_obj,
				   &oo);
	err = obj ? run_lookup(obj, b) : -errno;
	bpf_object__close(obj);
	libbpf_set_print(print);
	return err;
}

const char *kfunc_range(const char *name, uint64_t *lo, uint64_t *hi)
{
	static char how[320];
	struct ksym_bss b;
	int err = lookup(name, &b);

	b.text[sizeof(b.text) - 1] = '\0';
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

bool kfunc_exists(const char *name)
{
	struct ksym_bss b;

	if (!lookup(name, &b) && (!b.ret || b.ret == -ENOENT))
		return !b.ret;
	return ksyms_running_has(name);
}
