// SPDX-License-Identifier: GPL-2.0
/*
 * A kernel function's range from the kernel's own naming of a stack's
 * frames: a syscall program (5.14+) prints each frame with %pB, whose
 * "name+0xoff/0xsize" is the function's start and size exactly as
 * /proc/kallsyms's next symbol gives them (the kernel computes both from
 * one table).  Reading /proc/kallsyms instead makes the kernel format its
 * 120,000 lines (45 ms of kernel time, a fifth of a recording's CPU); it
 * stays the fallback wherever the program does not load or run, or names
 * no frame NAME: a range is never guessed.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "lib/ksyms.h"
#include "record/embed.h"
#include "record/kfunc_range.h"
#include "record/plan.h"
#include "offcpu.h"

_Static_assert(OFFCPU_KSYM_FRAMES >= OFFCPU_KSTACK_GLUE, "the glue frames are named in one run");

/* The .bss of bpf/offcpu_ksym.bpf.c. */
struct ksym_bss {
	uint64_t ip[OFFCPU_KSYM_FRAMES];
	char text[OFFCPU_KSYM_FRAMES][OFFCPU_KSYM_TEXT];
};

/* Loads the object with B's frames and runs it once: 0 (B's texts filled), or -errno. */
static int run_names(struct bpf_object *obj, struct ksym_bss *b)
{
	struct bpf_map *bss = bpf_object__find_map_by_name(obj, ".bss");
	struct bpf_program *prog = bpf_object__find_program_by_name(obj, "name_ips");
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
 * The kernel's %pB of each of the N frames IP in TEXT: 0, or -errno (the
 * kernel has no syscall programs or no bpf_snprintf there: 5.10).  libbpf
 * says nothing meanwhile: an old kernel's refusal is expected, not an error.
 */
static int name_frames(const uint64_t *ip, uint32_t n, struct ksym_bss *b)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .object_name = "offcpu_ksym");
	libbpf_print_fn_t print = libbpf_set_print(NULL);
	struct bpf_object *obj;
	int err;

	memset(b, 0, sizeof(*b));
	memcpy(b->ip, ip, (n < OFFCPU_KSYM_FRAMES ? n : OFFCPU_KSYM_FRAMES) * sizeof(*ip));
	obj = bpf_object__open_mem(offcpu_ksym_bpf_obj, offcpu_ksym_bpf_obj_end - offcpu_ksym_bpf_obj,
				   &oo);
	err = obj ? run_names(obj, b) : -errno;
	bpf_object__close(obj);
	libbpf_set_print(print);
	return err;
}

const char *kfunc_range(const char *name, const uint64_t *ip, uint32_t n, uint64_t *lo,
			uint64_t *hi)
{
	static char how[160];
	struct ksym_bss b;
	int err = name_frames(ip, n, &b);

	for (uint32_t i = 0; !err && i < OFFCPU_KSYM_FRAMES && i < n; i++) {
		b.text[i][OFFCPU_KSYM_TEXT - 1] = '\0';
		if (!ksyms_parse_backtrace(b.text[i], ip[i], name, lo, hi)) {
			snprintf(how, sizeof(how), "%s [%#llx, %#llx) from the kernel's %%pB of a frame "
				 "(a syscall program)", name, (unsigned long long)*lo,
				 (unsigned long long)*hi);
			return how;
		}
	}
	if (ksyms_running_range(name, lo, hi)) {
		snprintf(how, sizeof(how), "%s not found (/proc/kallsyms unreadable, or its "
			 "addresses hidden): kernel stacks not cut", name);
		return how;
	}
	snprintf(how, sizeof(how), "%s [%#llx, %#llx) from /proc/kallsyms (%s%s%s)", name,
		 (unsigned long long)*lo, (unsigned long long)*hi,
		 err ? "the syscall program did not run" : "no frame of the first kernel stack named it",
		 err ? ": " : "", err ? strerror(-err) : "");
	return how;
}
