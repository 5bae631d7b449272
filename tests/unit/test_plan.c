// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of src/record/plan.c: what the options and the probe decide
 * together, resolved once.  Each reason a CFI unwinding (or the kernel's)
 * is off, as -v and the summary print it; the stack cache; the frame
 * counts and map sizes that follow.  Prints PASS/FAIL lines.
 */
#include <string.h>

#include "check.h"
#include "offcpu.h"
#include "record/plan.h"

/* cli.c's defaults, --call-graph kernel,user. */
static struct offcpu_opts opts(void)
{
	return (struct offcpu_opts){
		.ustack = true, .kstack = true, .max_stack = 64, .stack_entries = 2048,
		.dwarf_buffer = 4u << 20, .unwind_rows = 262144, .unwind = UNWIND_DWARF,
	};
}

/* A kernel with bpf_task_pt_regs (5.15+, BTF). */
static struct probe probe(void)
{
	return (struct probe){ .tp_btf = true, .task_pt_regs = true };
}

static bool is(const char *got, const char *want)
{
	return got && !strcmp(got, want);
}

static void test_why_not_dwarf(void)
{
	struct offcpu_opts o = opts();
	struct probe p = probe();
	struct plan pl;

	plan_resolve(&pl, &o, &p);
	CHECK("plan-dwarf", pl.dwarf && !pl.no_dwarf && pl.stack_cache, "no dwarf: %s", pl.no_dwarf);
	o.unwind = UNWIND_FPTR;
	plan_resolve(&pl, &o, &p);
	CHECK("plan-fp", !pl.dwarf && is(pl.no_dwarf, "--call-graph fp") && pl.stack_cache,
	      "%s", pl.no_dwarf);
	o.ustack = false;
	plan_resolve(&pl, &o, &p);
	CHECK("plan-no-ustack", is(pl.no_dwarf, "no user stacks recorded") && !pl.stack_cache &&
	      pl.ustack_spill_entries == 1, "%s", pl.no_dwarf);
	/* The BTF-free variant: no registers, no cache, no kernel walk. */
	o = opts();
	o.unwind_in_kernel = true;
	p = (struct probe){ .classic_tp = true };
	plan_resolve(&pl, &o, &p);
	CHECK("plan-btf-free", !pl.dwarf && !pl.stack_cache && !pl.kunwind &&
	      is(pl.no_dwarf, "the user registers need the kernel's task layout (BTF: the "
		 "BTF-free variant has none)") &&
	      is(pl.no_kunwind, "user stacks are not unwound with CFI"), "%s / %s",
	      pl.no_dwarf, pl.no_kunwind);
	/* Registers from the top of the task's stack: the cache with dwarf only. */
	p = (struct probe){ .thread_size = 16384 };
	o.unwind = UNWIND_FPTR;
	plan_resolve(&pl, &o, &p);
	CHECK("plan-fp-no-regs-no-cache", !pl.stack_cache && pl.ucache_entries == 1, "cache on");
}

static void test_why_not_kunwind(void)
{
	struct offcpu_opts o = opts();
	struct probe p = probe();
	struct plan pl;

	plan_resolve(&pl, &o, &p);
	CHECK("plan-kunwind-off", !pl.kunwind && is(pl.no_kunwind, "--unwind-in user (the default)"),
	      "%s", pl.no_kunwind);
	o.unwind_in_kernel = true;
	plan_resolve(&pl, &o, &p);
	CHECK("plan-kunwind", OFFCPU_KUNWIND ? pl.kunwind && pl.ku_rows == o.unwind_rows :
	      !pl.kunwind && pl.ku_rows == 1, "%d %s", pl.kunwind, pl.no_kunwind);
	o.max_stack = 65;
	plan_resolve(&pl, &o, &p);
	CHECK("plan-kunwind-max-stack", !pl.spill && !pl.kunwind && (!OFFCPU_KUNWIND ||
	      is(pl.no_kunwind, "--max-stack above 64 (walked stacks are spill map keys)")),
	      "%s", pl.no_kunwind);
}

static void test_sizes(void)
{
	struct offcpu_opts o = opts();
	struct probe p = probe();
	struct plan pl;

	o.max_stack = 20;
	o.stack_entries = 16;
	plan_resolve(&pl, &o, &p);
	/* Spilled: the stack maps unused, the spill maps at least 64. */
	CHECK("plan-spill-sizes", pl.spill && pl.kstack_frames == 20 + OFFCPU_KSTACK_GLUE &&
	      pl.kspill_frames == pl.kstack_frames && pl.ustack_entries == 1 &&
	      pl.kstack_entries == 1 && pl.ustack_spill_entries == 64 &&
	      pl.kstack_spill_entries == 64 && pl.stack_ids == 1,
	      "frames %u/%u, entries %u %u %u %u, ids %zu", pl.kstack_frames, pl.kspill_frames,
	      pl.ustack_entries, pl.kstack_entries, pl.ustack_spill_entries,
	      pl.kstack_spill_entries, pl.stack_ids);
	o.max_stack = OFFCPU_MAX_STACK;
	o.stack_entries = 3000;
	o.kstack = false;
	plan_resolve(&pl, &o, &p);
	CHECK("plan-map-sizes", !pl.spill && pl.kstack_frames == OFFCPU_MAX_STACK &&
	      pl.kspill_frames == OFFCPU_SPILL_FRAMES && pl.ustack_entries == 3000 &&
	      pl.kstack_entries == 1 && pl.stack_ids == 4096 && pl.ustack_spill_entries == 1,
	      "frames %u/%u, entries %u %u, ids %zu", pl.kstack_frames, pl.kspill_frames,
	      pl.ustack_entries, pl.kstack_entries, pl.stack_ids);
	/* --wakers walks kernel stacks even with --call-graph user. */
	o.wakers = true;
	plan_resolve(&pl, &o, &p);
	CHECK("plan-wakers-kstack", pl.kstack && pl.kstack_entries == 3000, "%u", pl.kstack_entries);
	/* The ring: --dwarf-buffer with dwarf only, never below 256 KiB. */
	CHECK("plan-ring-dwarf", pl.dwarf && pl.ring_bytes == o.dwarf_buffer, "%u", pl.ring_bytes);
	o.dwarf_buffer = 4096;
	plan_resolve(&pl, &o, &p);
	CHECK("plan-ring-min", pl.ring_bytes == 256 * 1024, "%u", pl.ring_bytes);
	o.dwarf_buffer = 8u << 20;
	o.unwind = UNWIND_FPTR;
	plan_resolve(&pl, &o, &p);
	CHECK("plan-ring-fp", pl.ring_bytes == 256 * 1024, "%u", pl.ring_bytes);
}

int main(void)
{
	test_why_not_dwarf();
	test_why_not_kunwind();
	test_sizes();
	return failures != 0;
}
