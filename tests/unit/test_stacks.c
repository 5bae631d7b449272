// SPDX-License-Identifier: GPL-2.0
/*
 * Stack ids to frames (src/record/stacks.c) with --call-graph dwarf, on
 * copies given by hand: --stack-cache verify's count of wrong reuses.  A
 * copy carries the id the stack cache would have reused (reuse_id); where
 * that id names another stack than the one unwound from the copy, the count
 * goes up, and only there.  The live checks (t_record, t_wakers) see none
 * wrong, so this is the control that the count can see one at all.
 *
 * The copies are of this process with nothing of the stack copied: each
 * unwinds to its pc alone, so two pcs are two stacks.  No BPF map is
 * opened (the stack cache map's fd is -1: nothing is cached).
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "record/kfunc_range.h"
#include "record/stacks.h"

/* Kernel stacks are not read here: __schedule is nowhere. */
const char *kfunc_range(const char *name, uint64_t *lo, uint64_t *hi)
{
	(void)name;
	*lo = *hi = 0;
	return "not looked up (test_stacks)";
}

__attribute__((noinline)) static void fn_a(void)
{
	__asm__ volatile("");
}

__attribute__((noinline)) static void fn_b(void)
{
	__asm__ volatile("");
}

#define ID(n)	(OFFCPU_DWARF_ID | (n))
#define COPY_BYTES 64

/* A copy of dwarf id ID at PC (nothing of the stack read), REUSE as verify sent it. */
static int add(struct stacks *s, uint32_t id, void (*pc)(void), uint32_t reuse)
{
	struct offcpu_ucopy *c = calloc(1, sizeof(*c) + COPY_BYTES);
	int rc;

	if (!c)
		return -1;
	*c = (struct offcpu_ucopy){
		.magic = OFFCPU_UCOPY_MAGIC, .id = id, .pid = getpid(), .tid = getpid(),
		.reuse_id = reuse, .mm = 1, .time = 1, .pc = (uint64_t)(uintptr_t)pc,
		.sp = (uint64_t)(uintptr_t)&c, .len = 0,
	};
	rc = stacks_add_copy(s, c, sizeof(*c) + COPY_BYTES);
	free(c);
	return rc;
}

static bool is_at(const struct stack *st, void (*pc)(void))
{
	return st && st->nr >= 1 && st->ip[0] == (uint64_t)(uintptr_t)pc;
}

static void test_verify_counts_wrong_reuses(void)
{
	struct plan pl = { .dwarf = true, .max_stack = 16, .kstack_frames = 16, .stack_ids = 64 };
	struct loader ld = { .plan = &pl, .ucache_fd = -1, .stacks_fd = -1, .kstacks_fd = -1,
			     .ustack_spill_fd = -1, .kstack_spill_fd = -1 };
	struct stacks *s = stacks_new(&ld, 1 << 20, COPY_BYTES);
	int rc;

	if (!s) {
		CHECK("stacks-new", 0, "stacks_new failed");
		return;
	}
	rc = add(s, ID(1), fn_a, 0);
	CHECK("stacks-copy-unwound", !rc && is_at(stacks_get(s, ID(1), false), fn_a) &&
	      stacks_wrong_reuses(s) == 0, "rc %d, wrong %llu", rc,
	      (unsigned long long)stacks_wrong_reuses(s));
	/* The cache would have reused id 1 (fn_a) for a block whose stack is fn_b's. */
	rc = add(s, ID(2), fn_b, ID(1));
	CHECK("stacks-verify-wrong-reuse-counted", !rc && is_at(stacks_get(s, ID(2), false), fn_b) &&
	      stacks_wrong_reuses(s) == 1, "rc %d, wrong %llu after a reuse of another stack", rc,
	      (unsigned long long)stacks_wrong_reuses(s));
	/* ... and id 1 for a block of fn_a again: right, not counted. */
	rc = add(s, ID(3), fn_a, ID(1));
	CHECK("stacks-verify-right-reuse-not-counted", !rc && stacks_wrong_reuses(s) == 1,
	      "rc %d, wrong %llu after a reuse of the same stack", rc,
	      (unsigned long long)stacks_wrong_reuses(s));
	/* A second wrong one: the count goes on. */
	rc = add(s, ID(4), fn_a, ID(2));
	CHECK("stacks-verify-wrong-reuses-summed", !rc && stacks_wrong_reuses(s) == 2,
	      "rc %d, wrong %llu after two wrong reuses", rc,
	      (unsigned long long)stacks_wrong_reuses(s));
	for (uint32_t i = 1; i <= 4; i++)
		stacks_done(s, ID(i));
	CHECK("stacks-ids-let-go", stacks_tables(s)->ids == 0 && stacks_tables(s)->stacks == 0,
	      "%zu ids, %zu stacks left", stacks_tables(s)->ids, stacks_tables(s)->stacks);
	stacks_free(s);
}

int main(void)
{
	fn_a();
	fn_b();
	test_verify_counts_wrong_reuses();
	return failures != 0;
}
