// SPDX-License-Identifier: GPL-2.0
/*
 * The user-space unwinder (src/unwind/unwind.c) on synthetic stack copies: rows
 * given by hand for three x86_64 functions, a stack built to match, and
 * every way an unwind ends: complete by CFI, by a frame-pointer step over a
 * gap, a copy too short, the depth limit, nothing copied, a pc without CFI,
 * a stack pointer going backwards.  Also which stack words are the stack
 * cache's key (a saved frame pointer only once something uses it), and
 * u32_map_del, which the unwound-stack map relies on.  And a process gone
 * before its copies are unwound: the maps last read still serve them.
 *
 *   test_unwind debuglib LIB  (x86_64) unwinds its own stack through LIB's
 *                             dl_fn, a library whose own CFI is gone and whose
 *                             separate debug file has it (tests/t_debugframe.sh)
 */
#include <dlfcn.h>
#include <elf.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "lib/hashset.h"
#include "lib/procfs.h"
#include "unwind/unwind.h"

#define SP0	0x7000ull

/* Address ranges of the synthetic file and their rows (x86_64 rules). */
struct fn_rows {
	uint64_t lo, hi;
	struct cfi_row row;
};

static const struct fn_rows fns[] = {
	/* leaf: after push rbp; CFA = SP + 16, RA at CFA - 8 */
	{ 0x1000, 0x1100, { .kind = CFI_NORMAL, .cfa_base = CFI_BASE_SP, .cfa_off = 16,
			    .ra_rule = CFI_AT_CFA, .ra_off = -8, .fp_rule = CFI_SAME } },
	/* mid: CFA = SP + 32, RA at CFA - 8, caller's rbp saved at CFA - 16 */
	{ 0x2000, 0x2100, { .kind = CFI_NORMAL, .cfa_base = CFI_BASE_SP, .cfa_off = 32,
			    .ra_rule = CFI_AT_CFA, .ra_off = -8, .fp_rule = CFI_AT_CFA,
			    .fp_off = -16 } },
	/* root: the outermost frame (RA undefined) */
	{ 0x3000, 0x3100, { .kind = CFI_END } },
	/* mid2: CFA = FP + 16: uses the frame pointer mid restored */
	{ 0x5000, 0x5100, { .kind = CFI_NORMAL, .cfa_base = CFI_BASE_FP, .cfa_off = 16,
			    .ra_rule = CFI_AT_CFA, .ra_off = -8, .fp_rule = CFI_AT_CFA,
			    .fp_off = -16 } },
	/* bad: CFA below SP, its RA readable */
	{ 0x6000, 0x6100, { .kind = CFI_NORMAL, .cfa_base = CFI_BASE_SP, .cfa_off = -8,
			    .ra_rule = CFI_AT_CFA, .ra_off = 8, .fp_rule = CFI_SAME } },
};

/* 0x4000-0x4100 is in the file but no FDE covers it; above 0x8000 no file. */
static const struct cfi_row *rows(void *ctx, uint64_t pc, uint64_t *vaddr, unsigned int *machine)
{
	static struct cfi_row row;

	(void)ctx;
	if (pc >= 0x8000)
		return NULL;
	*machine = EM_X86_64;
	*vaddr = pc;
	for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++)
		if (pc >= fns[i].lo && pc < fns[i].hi) {
			row = fns[i].row;
			row.pc = fns[i].lo;
			return &row;
		}
	return NULL;
}

/* A copy of LEN bytes from SP0 with 8-byte WORDS at offsets OFF[i]. */
static struct offcpu_ucopy *copy_of(uint64_t pc, uint64_t fp, uint32_t len, const uint32_t *off,
				    const uint64_t *words, size_t n)
{
	struct offcpu_ucopy *c = calloc(1, sizeof(*c) + 256);

	c->magic = OFFCPU_UCOPY_MAGIC;
	c->pc = pc;
	c->sp = SP0;
	c->fp = fp;
	c->len = len;
	for (size_t i = 0; i < n; i++)
		memcpy(c->bytes + off[i], &words[i], 8);
	return c;
}

/* leaf (0x1050) <- mid (RA 0x2010 at 0x7008) <- root (RA 0x3010 at 0x7028). */
static const uint32_t offs[] = { 0x08, 0x20, 0x28 };
static const uint64_t words[] = { 0x2010, 0x7040, 0x3010 };

static void test_complete(void)
{
	struct offcpu_ucopy *c = copy_of(0x1050, 0x1234, 256, offs, words, 3);
	struct unwind_reads r;
	enum unwind_end end;
	uint64_t ip[8];
	uint32_t n = unwind_stack(c, c->len, false, rows, NULL, ip, 8, &end, &r);

	CHECK("unwind-complete", n == 3 && ip[0] == 0x1050 && ip[1] == 0x2010 && ip[2] == 0x3010 &&
	      end == UNWIND_CFI, "n %u end %d ip %llx %llx %llx", n, end,
	      (unsigned long long)ip[0], (unsigned long long)ip[1], (unsigned long long)ip[2]);
	/* The saved rbp read at 0x7020 is used by no frame: not part of the key. */
	CHECK("unwind-reads-key", r.n == 2 && r.addr[0] == SP0 + 0x08 && r.val[0] == 0x2010 &&
	      r.addr[1] == SP0 + 0x28 && r.val[1] == 0x3010 && !r.fp_used && !r.overflow &&
	      unwind_cacheable(end, &r), "n %u fp_used %d", r.n, r.fp_used);
	CHECK("unwind-depth", unwind_stack(c, c->len, false, rows, NULL, ip, 2, &end, &r) == 2 &&
	      end == UNWIND_DEPTH, "end %d", end);
	/* RA of mid lies beyond a 0x20-byte copy. */
	n = unwind_stack(c, 0x20, false, rows, NULL, ip, 8, &end, &r);
	CHECK("unwind-short-copy", n == 2 && end == UNWIND_SHORT_COPY &&
	      !unwind_cacheable(end, &r), "n %u end %d", n, end);
	/* The same copy shortened at the end of the stack mapping: nothing lies beyond. */
	n = unwind_stack(c, 0x20, true, rows, NULL, ip, 8, &end, &r);
	CHECK("unwind-stack-end", n == 2 && end == UNWIND_CFI && unwind_cacheable(end, &r),
	      "n %u end %d", n, end);
	n = unwind_stack(c, 0, false, rows, NULL, ip, 8, &end, &r);
	CHECK("unwind-unreadable", n == 1 && end == UNWIND_UNREADABLE, "n %u end %d", n, end);
	free(c);
}

/* mid's caller at 0x5010 bases its CFA on the rbp mid restored: that word is key. */
static void test_fp_based_cfa(void)
{
	static const uint32_t o[] = { 0x08, 0x20, 0x28, 0x48 };
	static const uint64_t w[] = { 0x2010, 0x7040, 0x5010, 0x3010 };
	struct offcpu_ucopy *c = copy_of(0x1050, 0, 256, o, w, 4);
	struct unwind_reads r;
	enum unwind_end end;
	uint64_t ip[8];
	uint32_t n = unwind_stack(c, c->len, false, rows, NULL, ip, 8, &end, &r);

	CHECK("unwind-fp-cfa", n == 4 && ip[2] == 0x5010 && ip[3] == 0x3010 && end == UNWIND_CFI,
	      "n %u end %d", n, end);
	/* Reads: RA 0x08, RA 0x28, rbp 0x20 (mid2's CFA), RA 0x48; not mid2's rbp at 0x40. */
	CHECK("unwind-fp-cfa-key", r.n == 4 && r.addr[2] == SP0 + 0x20 && r.val[2] == 0x7040 &&
	      r.addr[3] == SP0 + 0x48, "n %u addr2 %llx", r.n, (unsigned long long)r.addr[2]);
	free(c);
}

/* A pc no FDE covers (0x4010): one frame-pointer step from the saved rbp. */
static void test_fp_fallback(void)
{
	static const uint32_t o[] = { 0x08, 0x20, 0x28, 0x40, 0x48 };
	static const uint64_t w[] = { 0x2010, 0x7040, 0x4010, 0, 0x3010 };
	struct offcpu_ucopy *c = copy_of(0x1050, 0, 256, o, w, 5);
	struct unwind_reads r;
	enum unwind_end end;
	uint64_t ip[8];
	uint32_t n = unwind_stack(c, c->len, false, rows, NULL, ip, 8, &end, &r);

	CHECK("unwind-fp-fallback", n == 4 && ip[2] == 0x4010 && ip[3] == 0x3010 &&
	      end == UNWIND_FP, "n %u end %d", n, end);
	free(c);
}

static void test_cut(void)
{
	static const uint32_t o[] = { 0x08, 0x10 };
	static const uint64_t nofile[] = { 0x9010 }, bad[] = { 0x6010, 0x3010 };
	/* A frame pointer below the stack: no frame-pointer step either. */
	struct offcpu_ucopy *c = copy_of(0x1050, 0x10, 256, o, nofile, 1);
	struct unwind_reads r;
	enum unwind_end end;
	uint64_t ip[8];
	uint32_t n = unwind_stack(c, c->len, false, rows, NULL, ip, 8, &end, &r);

	CHECK("unwind-no-cfi", n == 2 && ip[1] == 0x9010 && end == UNWIND_NO_CFI, "n %u end %d",
	      n, end);
	free(c);
	c = copy_of(0x1050, 0x10, 256, o, bad, 2);
	n = unwind_stack(c, c->len, false, rows, NULL, ip, 8, &end, &r);
	CHECK("unwind-sp-backwards", n == 2 && end == UNWIND_BAD && !unwind_cacheable(end, &r),
	      "n %u end %d", n, end);
	free(c);
}

/*
 * 32-bit ARM (EHABI rows, 4-byte words, Thumb return addresses): a leaf
 * with its return address still in lr, a function that pushed {r7, lr}, one
 * whose CFA is r7-based (vsp = r7), a pc without table crossed by the Thumb
 * frame record {r7, lr} at r7, and the outermost frame (lr 0).
 */
static const struct fn_rows arm_fns[] = {
	{ 0x1000, 0x1100, { .kind = CFI_NORMAL, .cfa_base = CFI_BASE_SP, .cfa_off = 0,
			    .ra_rule = CFI_SAME, .fp_rule = CFI_SAME } },
	/* mid: push {r7, lr}; the call returns to 0x2011 (Thumb), the last of mid */
	{ 0x2000, 0x2010, { .kind = CFI_NORMAL, .cfa_base = CFI_BASE_SP, .cfa_off = 8,
			    .ra_rule = CFI_AT_CFA, .ra_off = -4, .fp_rule = CFI_AT_CFA,
			    .fp_off = -8 } },
	/* after mid: a row that would send sp backwards (looked up at 0x2010 by mistake) */
	{ 0x2010, 0x2100, { .kind = CFI_NORMAL, .cfa_base = CFI_BASE_SP, .cfa_off = -8,
			    .ra_rule = CFI_AT_CFA, .ra_off = 4, .fp_rule = CFI_SAME } },
	{ 0x3000, 0x3100, { .kind = CFI_NORMAL, .cfa_base = CFI_BASE_FP, .cfa_off = 8,
			    .ra_rule = CFI_AT_CFA, .ra_off = -4, .fp_rule = CFI_AT_CFA,
			    .fp_off = -8 } },
	{ 0x4000, 0x4100, { .kind = CFI_GAP } },
	/* top: push {r7, lr} */
	{ 0x5000, 0x5100, { .kind = CFI_NORMAL, .cfa_base = CFI_BASE_SP, .cfa_off = 8,
			    .ra_rule = CFI_AT_CFA, .ra_off = -4, .fp_rule = CFI_AT_CFA,
			    .fp_off = -8 } },
};

static const struct cfi_row *arm_rows(void *ctx, uint64_t pc, uint64_t *vaddr,
				      unsigned int *machine)
{
	static struct cfi_row row;

	(void)ctx;
	if (pc >= 0x8000)
		return NULL;
	*machine = EM_ARM;
	*vaddr = pc;
	for (size_t i = 0; i < sizeof(arm_fns) / sizeof(arm_fns[0]); i++)
		if (pc >= arm_fns[i].lo && pc < arm_fns[i].hi) {
			row = arm_fns[i].row;
			row.pc = arm_fns[i].lo;
			return &row;
		}
	return NULL;
}

static void put32(struct offcpu_ucopy *c, uint32_t off, uint32_t w)
{
	memcpy(c->bytes + off, &w, 4);
}

static void test_arm(void)
{
	struct offcpu_ucopy *c = calloc(1, sizeof(*c) + 64);
	struct unwind_reads r;
	enum unwind_end end;
	uint64_t ip[8];
	uint32_t n;

	/* leaf 0x1050, lr 0x2011: mid's frame at sp (r7 0x7010, lr 0x3021). */
	*c = (struct offcpu_ucopy){ .pc = 0x1050, .sp = SP0, .fp = 0x1234, .lr = 0x2011, .len = 0x30 };
	put32(c, 0x00, 0x7010);
	put32(c, 0x04, 0x3021);
	put32(c, 0x08, 0x7020);
	/* r7-based 0x3020: r7 = 0x7010, CFA 0x7018: saved r7 0x7020, lr 0x4031 (no table). */
	put32(c, 0x10, 0x7020);
	put32(c, 0x14, 0x4031);
	/* Thumb record at r7 0x7020: {0, lr 0x5041}; top's frame above it: lr 0. */
	put32(c, 0x20, 0);
	put32(c, 0x24, 0x5041);
	put32(c, 0x28, 0);
	put32(c, 0x2c, 0);
	n = unwind_stack(c, c->len, false, arm_rows, NULL, ip, 8, &end, &r);
	CHECK("unwind-arm", n == 5 && ip[0] == 0x1050 && ip[1] == 0x2010 && ip[2] == 0x3020 &&
	      ip[3] == 0x4030 && ip[4] == 0x5040 && end == UNWIND_FP && r.lr_used,
	      "n %u end %d ip %llx %llx %llx %llx %llx", n, end, (unsigned long long)ip[0],
	      (unsigned long long)ip[1], (unsigned long long)ip[2], (unsigned long long)ip[3],
	      (unsigned long long)ip[4]);
	/*
	 * Words read are 4 bytes (the last of the copy too), keyed for the
	 * stack cache with the word after them (BPF compares 8 bytes): the
	 * lr at 0x7004 with the 0x7008 word, top's lr at the copy's end
	 * makes the unwind uncacheable.
	 */
	CHECK("unwind-arm-words", r.n >= 4 && r.addr[0] == SP0 + 4 &&
	      r.val[0] == (0x7020ull << 32 | 0x3021) && r.overflow,
	      "n %u addr0 %llx val0 %llx overflow %d", r.n, (unsigned long long)r.addr[0],
	      (unsigned long long)r.val[0], r.overflow);
	/* A record whose return address lies in no file is no frame: a cut. */
	put32(c, 0x24, 0x9001);
	n = unwind_stack(c, c->len, false, arm_rows, NULL, ip, 8, &end, &r);
	CHECK("unwind-arm-record-nowhere", n == 4 && end == UNWIND_NO_CFI, "n %u end %d", n, end);
	/* r7 = 0 at a pc without table says nothing of the outermost frame. */
	put32(c, 0x10, 0);
	n = unwind_stack(c, c->len, false, arm_rows, NULL, ip, 8, &end, &r);
	CHECK("unwind-arm-r7-zero", n == 4 && end == UNWIND_NO_CFI, "n %u end %d", n, end);
	free(c);
}

static void test_u32_map_del(void)
{
	struct u32_map m = { 0 };
	int ok = 1;

	for (uint32_t k = 1; k <= 5000; k++)
		ok &= !u32_map_put(&m, k * 7919, (void *)(uintptr_t)k);
	for (uint32_t k = 1; k <= 5000; k += 2)
		ok &= u32_map_del(&m, k * 7919) == (void *)(uintptr_t)k;
	for (uint32_t k = 1; k <= 5000; k++)
		ok &= u32_map_get(&m, k * 7919) == (k % 2 ? NULL : (void *)(uintptr_t)k);
	ok &= m.n == 2500 && !u32_map_del(&m, 1);
	CHECK("u32-map-del", ok, "entries lost or kept after deletions (n %zu)", m.n);
	u32_map_free(&m, NULL);
}

/* A copy of 256 zero bytes from PID at PC (address space 1). */
static void unwind_pid(struct unwinder *u, pid_t pid, uint64_t pc, enum unwind_end *end)
{
	struct offcpu_ucopy *c = calloc(1, sizeof(*c) + 256);
	uint64_t ip[8];

	c->magic = OFFCPU_UCOPY_MAGIC;
	c->pid = c->tid = pid;
	c->mm = 1;
	c->pc = pc;
	c->sp = SP0;
	c->len = 256;
	unwinder_unwind(u, c, false, ip, 8, end, NULL);
	free(c);
}

/*
 * A child's copies unwound while it lives, then once it exited (a zombie
 * lists no maps) after a pc in no mapping made the unwinder read its maps
 * again: this function's CFI must still be found (riscv64 under a busy
 * host cut a third of a thread's stacks at their first frame without it).
 */
static void test_gone_process(void)
{
	struct unwinder *u = unwinder_new(1 << 20);
	uint64_t pc = (uint64_t)(uintptr_t)test_gone_process;
	enum unwind_end alive, miss, gone;
	siginfo_t si;
	pid_t pid = fork();

	if (!pid) {
		pause();
		_exit(0);
	}
	unwind_pid(u, pid, pc, &alive);
	kill(pid, SIGKILL);
	waitid(P_PID, pid, &si, WEXITED | WNOWAIT);
	unwind_pid(u, pid, 1, &miss);
	unwind_pid(u, pid, pc, &gone);
	waitpid(pid, NULL, 0);
	CHECK("unwind-gone-process", alive == UNWIND_CFI && gone == alive,
	      "alive %d, gone %d (%d: no CFI)", alive, gone, UNWIND_NO_CFI);
	unwinder_free(u);
}

/*
 * A process's maps outlive its forgetting (exit, exec) by one sweep, so a
 * copy read behind the ring still unwinds, and are freed at the second:
 * a day's recording of short-lived processes must not keep them all.
 */
static void test_forget_sweep(void)
{
	struct unwinder *u = unwinder_new(1 << 20);
	uint64_t pc = (uint64_t)(uintptr_t)test_forget_sweep;
	enum unwind_end before, late;
	size_t live, after_one, after_two;

	unwind_pid(u, getpid(), pc, &before);
	live = unwinder_nr_procs(u);
	unwinder_forget(u, getpid());
	unwinder_sweep(u);
	after_one = unwinder_nr_procs(u);
	unwinder_sweep(u);
	after_two = unwinder_nr_procs(u);
	CHECK("unwind-forget-sweep", before == UNWIND_CFI && live == 1 && after_one == 1 &&
	      after_two == 0, "end %d, procs %zu -> %zu after one sweep -> %zu after two",
	      before, live, after_one, after_two);
	/* Read again between the sweeps: a live process, kept. */
	unwind_pid(u, getpid(), pc, &before);
	unwinder_forget(u, getpid());
	unwinder_sweep(u);
	unwind_pid(u, getpid(), pc, &late);
	unwinder_sweep(u);
	unwinder_sweep(u);
	CHECK("unwind-forget-reread-kept", late == UNWIND_CFI && unwinder_nr_procs(u) == 1,
	      "end %d, procs %zu", late, unwinder_nr_procs(u));
	unwinder_free(u);
}

/* ---- debuglib: the unwinder's debug-file CFI on a live stack ---- */

#define DL_BYTES 32768
#define DL_FRAMES 32

static struct offcpu_ucopy *dl_copy;
static uint64_t dl_stack_end;

/* ASan would take the other frames' redzones for overflows: a plain copy. */
__attribute__((no_sanitize_address, noinline))
static void copy_stack(uint8_t *dst, uint64_t src, size_t n)
{
	for (size_t i = 0; i < n; i++)
		dst[i] = ((volatile const uint8_t *)(uintptr_t)src)[i];
}

/* dl_fn's callback: this thread's registers and stack, as BPF copies them. */
__attribute__((noinline)) static void capture(void)
{
#if defined(__x86_64__)
	uint64_t pc, sp, fp, len;

	asm volatile("lea (%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2"
		     : "=r"(pc), "=r"(sp), "=r"(fp));
	len = dl_stack_end - sp < DL_BYTES ? dl_stack_end - sp : DL_BYTES;
	dl_copy->pc = pc;
	dl_copy->sp = sp;
	dl_copy->fp = fp;
	dl_copy->len = len;
	copy_stack(dl_copy->bytes, sp, len);
#endif
}

/* The caller of the library's function: its return address must be found. */
__attribute__((noinline)) static int dl_call(int (*fn)(void (*)(void)))
{
	int r = fn(capture);

	asm volatile("" ::: "memory");
	return r + 1;
}

static uint64_t stack_end(void)
{
	char line[PROC_MAPS_LINE];
	unsigned long long lo, hi;
	FILE *f = fopen("/proc/self/maps", "r");

	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, "[stack]") && sscanf(line, "%llx-%llx", &lo, &hi) == 2) {
			fclose(f);
			return hi;
		}
	if (f)
		fclose(f);
	return 0;
}

/* Prints what the shell test judges: the frame after dl_fn, the counts. */
static int debuglib(const char *lib)
{
	void *h = dlopen(lib, RTLD_NOW);
	int (*fn)(void (*)(void)) = h ? (int (*)(void (*)(void)))dlsym(h, "dl_fn") : NULL;
	struct unwinder *u = unwinder_new(64 << 20);
	uint64_t ip[DL_FRAMES], lib_lo = (uint64_t)(uintptr_t)fn, call = (uintptr_t)dl_call;
	enum unwind_end end;
	uint32_t n;

	dl_copy = calloc(1, sizeof(*dl_copy) + DL_BYTES);
	dl_stack_end = stack_end();
	if (!fn || !u || !dl_copy || !dl_stack_end) {
		fprintf(stderr, "test_unwind debuglib: cannot load %s: %s\n", lib, dlerror());
		return 2;
	}
	dl_copy->pid = dl_copy->tid = getpid();
	dl_call(fn);
	n = unwinder_unwind(u, dl_copy, dl_copy->len < DL_BYTES, ip, DL_FRAMES, &end, NULL);
	/* ip[1]: the return into dl_fn; ip[2]: into dl_call, only by dl_fn's row. */
	printf("frames %u end %s\n", n, unwind_end_names[end]);
	printf("in_lib %d\n", n > 1 && ip[1] - lib_lo < 256);
	printf("caller_found %d\n", n > 2 && ip[2] - call < 256);
	printf("debug_files %llu debug_rows %llu\n",
	       (unsigned long long)unwinder_counts(u)->debug_files,
	       (unsigned long long)unwinder_counts(u)->debug_rows);
	unwinder_free(u);
	free(dl_copy);
	dlclose(h);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "debuglib"))
		return debuglib(argv[2]);
	test_complete();
	test_fp_based_cfa();
	test_fp_fallback();
	test_cut();
	test_arm();
	test_u32_map_del();
	test_gone_process();
	test_forget_sweep();
	return failures != 0;
}
