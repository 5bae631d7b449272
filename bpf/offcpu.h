/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The contract between the BPF program and user space: map value layouts and
 * the record sent for each long block.  Included by both sides, so only
 * fixed-size types.  Byte order is the running kernel's (user space runs on
 * the same machine).
 */
#ifndef OFFCPU_H
#define OFFCPU_H

#ifndef OFFCPU_VMLINUX_MIN_H
#include <linux/types.h>
#endif

/* Task states as the kernel defines them (include/linux/sched.h). */
#define OFFCPU_TASK_INTERRUPTIBLE	0x1
#define OFFCPU_TASK_UNINTERRUPTIBLE	0x2
#define OFFCPU_PF_EXITING		0x00000004
#define OFFCPU_PF_KTHREAD		0x00200000

/*
 * Run-time configuration, fixed at load time: one `const volatile` global
 * of .rodata (kernels 5.2+), written by the loader with one copy.  Flags are
 * __u8 so both sides agree on the layout.
 */
struct offcpu_config {
	__u64 thresh_ns;	/* blocks this long go through the ring buffer */
	__u64 min_ns, max_ns;	/* blocks outside are not recorded */
	__u32 state_mask;	/* OFFCPU_TASK_* states recorded */
	__u32 self_pid;		/* offcpu itself: its waits are not the user's */
	__u32 spill_bytes;	/* frames kept in the spill maps × 8; 0: no spill */
	__u32 kspill_bytes;	/* kernel stacks': with the glue above __schedule (cut later) */
	__u8 user_only;		/* skip kernel threads */
	__u8 want_ustack, want_kstack;
	__u8 filter_pid, filter_tid, filter_cpu;	/* look up the filter maps */
	__u8 has_prev_state_arg;	/* sched_switch passes prev_state (5.18+) */
	__u8 stack_cache;	/* reuse user stack ids (tp_btf, 5.15+) */
	__u8 stack_cache_verify;	/* walk anyway and count wrong reuses */
	__u8 dwarf;		/* copy user stacks for CFI unwinding (OFFCPU_DWARF_ID) */
	__u8 wakers;		/* --wakers: sched_waking records who woke a block */
	__u8 task_pt_regs;	/* bpf_task_pt_regs (5.15+, tp_btf) finds the user registers */
	__u8 kunwind;		/* --unwind-in kernel: walk with ku_* first (offcpu_unwind.bpf.h) */
	__u8 kunwind_verify;	/* --unwind-in verify: copy the walked stacks too, to compare */
	__u8 kwalk_tail;	/* the walk in tail-called steps, not the bounded loop */
	/*
	 * Without it (older kernels, raw_tp): task_pt_regs() computed as the
	 * kernel does, the top of the task's stack (task->stack + thread_size,
	 * less uregs_pad) minus sizeof(struct pt_regs).
	 */
	__u32 thread_size, uregs_pad;
	__u32 copy_bytes;	/* --call-graph dwarf,SIZE: bytes copied from the user sp */
	/* tp,hash: record offsets from tracefs's format files (src/record/tracefs.c). */
	__u32 tp_prev_state_off, tp_prev_state_size;	/* sched_switch: long */
	__u32 tp_next_pid_off;
	__u32 tp_parent_pid_off, tp_child_pid_off;	/* sched_process_fork */
	__u32 tp_free_pid_off;				/* sched_process_free */
	/* --trigger-block: such a block that finds the ring full is counted */
	__u64 trigger_ns;
};

/*
 * --wakers: the task that woke a blocked thread (sched_waking), or the task
 * an interrupt happened to interrupt (user space tells them apart by the
 * kernel stack, see src/record/wakers.c).
 */
#define OFFCPU_WAKER_SEEN	0x1	/* a wakeup ended this block */
#define OFFCPU_WAKER_KTHREAD	0x2	/* the current task was a kernel thread */
/* In interrupt context by the waker's preempt_count (armhf only, see OFFCPU_PREEMPT_COUNT). */
#define OFFCPU_WAKER_HARDIRQ	0x4
#define OFFCPU_WAKER_SOFTIRQ	0x8
#define OFFCPU_WAKER_TASKCTX	0x10	/* preempt_count read: neither */

struct offcpu_waker {
	__u32 pid;		/* tgid of the current task at sched_waking */
	__u32 tid;
	__s32 ustack;		/* its stack ids, < 0 if none */
	__s32 kstack;
	__u32 flags;		/* OFFCPU_WAKER_* */
	__u32 pad;
	char comm[16];
};

/* Per-thread state kept between switch-out and switch-in. */
struct offcpu_start {
	__u64 ts;		/* switch-out time, 0 when not blocked */
	__s32 ustack;		/* stack ids in the stacks map, < 0 if none */
	__s32 kstack;
	__u32 state;
	__u32 tgid;		/* of the thread, taken at switch-out */
	__u64 ukey;		/* user registers of the last block, hashed (0: none) */
	__u64 runtime;		/* its CPU time at switch-out (se.sum_exec_runtime) */
	struct offcpu_waker waker;	/* --wakers: who ended this block */
};

/* One block of at least the threshold, sent at once through the ring buffer. */
struct offcpu_event {
	__u64 time;		/* switch-in time (CLOCK_MONOTONIC ns) */
	__u64 delta;		/* off-CPU ns */
	__u32 pid;		/* tgid */
	__u32 tid;
	__u32 cpu;
	__u32 state;
	__s32 ustack;
	__s32 kstack;
};

/* Short blocks are summed in the kernel per (pid, tid, stacks, state). */
struct offcpu_key {
	__u32 pid;
	__u32 tid;
	__s32 ustack;
	__s32 kstack;
	__u32 state;
	__u32 pad;
};

/* --wakers: a block sent at once, and sums keyed by the waker too. */
struct offcpu_wevent {
	struct offcpu_event e;
	struct offcpu_waker w;
};

struct offcpu_wkey {
	struct offcpu_key k;
	struct offcpu_waker w;
};

struct offcpu_val {
	__u64 total;		/* ns */
	__u64 count;
	__u64 last;		/* switch-in time of the latest block */
	__u32 cpu;		/* CPU of the latest block */
	__u32 pad;
};

/*
 * Stacks whose bucket in their stack map holds another stack go to a spill
 * map keyed by all their frames.  Their ids carry OFFCPU_SPILL_ID, the CPU
 * that stored them and a per-CPU sequence number.
 */
#define OFFCPU_SPILL_ID		0x40000000
#define OFFCPU_SPILL_CPU_SHIFT	12
#define OFFCPU_SPILL_PER_CPU	(1u << OFFCPU_SPILL_CPU_SHIFT)
#define OFFCPU_SPILL_FRAMES	64	/* the key: a BPF map key is at most 512 bytes */

struct offcpu_spill_key {
	__u64 ip[OFFCPU_SPILL_FRAMES];	/* zero after the last frame */
};

/* Per-CPU scratch of the spill path: the key under construction. */
struct offcpu_spill_scratch {
	struct offcpu_spill_key key;
	__u32 seq;			/* ids handed out by this CPU */
	__u32 pad;
};

/*
 * --call-graph dwarf: at switch-out the program copies the user registers and
 * the top of the user stack into the ring buffer (struct offcpu_ucopy) and
 * names the stack with a fresh id: OFFCPU_DWARF_ID, the CPU and a per-CPU
 * sequence.
 * User space unwinds the copy with the files' CFI (src/unwind/unwind.c) before any
 * sample naming the id: the copy is reserved in the same ring before the
 * block ends.  Copies start with OFFCPU_UCOPY_MAGIC where an offcpu_event
 * has its time.
 */
#define OFFCPU_DWARF_ID		0x20000000
#define OFFCPU_DWARF_CPU_SHIFT	20	/* ids: flag, CPU (9 bits), per-CPU sequence */
#define OFFCPU_DWARF_SEQ_MASK	((1u << OFFCPU_DWARF_CPU_SHIFT) - 1)
#define OFFCPU_DWARF_CPUS	(1u << (29 - OFFCPU_DWARF_CPU_SHIFT))
/* The start scan's ids: a CPU field no CPU has (CPUs are fewer, see loader.c). */
#define OFFCPU_DWARF_SCAN_CPU	(OFFCPU_DWARF_CPUS - 1)
/* A CPU this close to wrapping stops all reuse first (see dwarf_stack_id). */
#define OFFCPU_DWARF_WRAP_MARGIN	65536
#define OFFCPU_UCOPY_MAGIC	(~0ull)
/* --wakers: the stack of a waker at sched_waking, not of a block (see OFFCPU_UCACHE_WAKER). */
#define OFFCPU_UCOPY_WAKER	1
#define OFFCPU_COPY_MAX		65528	/* perf's limit for dwarf,SIZE */

struct offcpu_ucopy {
	__u64 magic;		/* OFFCPU_UCOPY_MAGIC */
	__u32 id;		/* the stack id the block carries */
	__u32 pid, tid;
	__u32 len;		/* bytes of the stack copied from sp (0: unreadable) */
	__u32 reuse_id;		/* --stack-cache verify: the id the cache would reuse, or 0 */
	__u32 kernel_id;	/* --unwind-in verify: the id of the kernel's walk, or 0 */
	__u32 flags;		/* OFFCPU_UCOPY_* */
	__u32 pad;
	__u64 mm;		/* its address space (task->mm): another after exec or pid reuse */
	__u64 time;		/* when it was taken (bpf_ktime_get_ns): its block started before */
	__u64 pc, sp, fp, lr;	/* user registers at kernel entry */
	__u8 bytes[];		/* cfg.copy_bytes, the first len valid */
};

/*
 * Per CPU: the sequence of its dwarf ids (no atomic fetch-and-add: kernels
 * before 5.12 refuse the instruction even in code they never run).
 */
struct offcpu_dwarf_seq {
	__u32 seq;
	__u32 pad;
};

/*
 * The dwarf stack cache, per thread, written by user space after it
 * unwound a copy: the registers of that block and every stack word the
 * unwinding read (address, value).  An unwind is a function of the
 * registers, those words and the process's mappings, so a block with the
 * same registers and the same words at those addresses has the same
 * stack: the program rereads the words and reuses the id.
 */
#define OFFCPU_UCACHE_WORDS	32

/*
 * --wakers: a thread's entry for the stacks it wakes others from is keyed
 * by its tid with this bit (tids are below 2^22, PID_MAX_LIMIT), apart
 * from the entry for its own blocks: the two places differ.
 */
#define OFFCPU_UCACHE_WAKER	0x80000000u

#define OFFCPU_UCACHE_FP	1	/* the unwinding used the frame pointer register */
#define OFFCPU_UCACHE_LR	2	/* ... the link register */

struct offcpu_ucache {
	__u64 pc, sp, fp, lr;	/* fp, lr: compared only with their flag */
	__u32 pid;
	__u32 id;
	__u32 n;		/* words below */
	__u32 flags;		/* OFFCPU_UCACHE_* */
	__u64 addr[OFFCPU_UCACHE_WORDS];
	__u64 val[OFFCPU_UCACHE_WORDS];
};

/*
 * --unwind-in kernel: CFI user stacks unwound by the BPF program itself
 * (bpf/offcpu_unwind.bpf.h), from compact per-file tables that user space
 * builds from struct cfi_row (src/unwind/ktables.c), as the OpenTelemetry
 * eBPF profiler walks with its "stack deltas".  The copy path above stays
 * the fallback: a block the walker cannot finish is copied and unwound in
 * user space as before, so nothing is lost while tables load.
 *
 * Rows (struct offcpu_krow, one type): from pc on (a file address, until the
 * next row), CFA = SP or FP + cfa_off; the return address is at CFA + ra_off
 * (or still in the link register: the innermost frame only); the caller's
 * frame pointer at CFA + fp_off or unchanged.  Exactly cfi_step()'s rules
 * (src/unwind/cfi.c) for rows of kind CFI_NORMAL with offsets that fit 16
 * bits; CFI_END and an undefined return address become OFFCPU_KROW_END; all
 * else (no FDE, DWARF expressions, signal frames, wider offsets) is
 * OFFCPU_KROW_MISS, where the walker gives up and the block is copied (the
 * user-space unwinder then takes its frame-pointer steps as before).
 *
 * Maps, all filled by user space only:
 *   ku_rows   ARRAY of rows: one pool shared by all processes; a file's
 *             rows are one sorted run [first, first + n) found by binary
 *             search (at most OFFCPU_KROW_SEARCH steps, 2^20 rows a file).
 *   ku_files  ARRAY by file slot: {first, n, id}.  Ids are never reused; a
 *             row carries its file id's low 16 bits (tag), so a slot or a
 *             run of rows given to another file is never read as the old one.
 *   ku_procs  HASH by tgid, not preallocated: the process's executable file
 *             mappings (struct offcpu_kproc) sorted by address, each with its
 *             file slot, id and bias (file address = pc - bias), and the
 *             address space (task->mm) they were read for: after an exec or
 *             under a reused pid the entry is another mm's and is not used.
 *             An entry is replaced whole (RCU-freed), never torn.
 *
 * Filling: a block whose walk misses (no entry for the process, a pc in no
 * mapping, a file without rows, a MISS row, an unreadable word) is copied.
 * A miss for want of an entry, a mapping or rows also names the process in
 * ku_want (HASH pid -> struct offcpu_kwant: a request that needs no room in
 * the ring, which may be full), which a user-space thread polls: it loads
 * the process's mappings (again at most once a second, e.g. after a dlopen),
 * registering each file (slot, id) without rows, and the rows of the one
 * file the walk lacked, and deletes the request.  A copied block teaches
 * the same thread too: once user space has unwound it, the files its frames
 * lie in get their rows (a process whose first block was copied reuses it
 * from the stack cache after, and its walks would never come back to ask
 * for the rest; not the start-up scan's copies of threads asleep, which
 * mostly sleep on).  So only files that stacks pass through are built and
 * loaded.  A process forked from one with an
 * entry gets a copy of it at fork, under its own mm (its mappings are the
 * parent's until it execs, which changes mm, or maps something new, where
 * a pc in no mapping asks for its own); the entry leaves with the process.
 * A parent without an entry at a fork is asked for then (ku_want).
 * A file of more than a quarter of the pool's rows is loaded by parts of
 * consecutive FDEs (2048, or a sixteenth of its FDEs if more), each a file
 * of its own with its own mappings in the process's entry, loaded as walks
 * need them (OpenTelemetry loads by 64 KiB buckets); a part still too
 * large is never loaded (its stacks are copied).
 *
 * Budget (locked memory, preallocated): rows 16 bytes each, 262144 of them
 * by default (4 MiB, --unwind-rows); files 4096 slots (64 KiB); processes
 * 2 KiB each as used, 2048 at most (4 MiB).  Eviction: the pool is a ring;
 * when it wraps, the files loaded longest ago give their rows back (their
 * slot cleared first, the rows rewritten 2 ms later, long after any walk
 * that read the old slot has ended: a walk runs with the CPU's runqueue
 * locked and lasts microseconds; the tag catches the rest), but never a
 * file loaded less than 2 s ago: a working set larger than the pool leaves
 * the newcomers copied rather than thrashing (put off before their rows
 * are built, until the head's file is 2 s old).  A file given back is loaded
 * again at its next miss.  A process's entry is deleted when its leader
 * exits; any left over (the map was created before) leave when it fills.
 *
 * Results: the walked frames (innermost pc, then return addresses, as the
 * copy path's unwinder gives them) go where stacks keyed by their frames go,
 * the ustack_spill map, and the block carries that spill id: user space
 * reads it as any spilled stack (src/record/stacks.c), no new path.
 *
 * The stack cache stays provably right: a walk, like the unwinding of a
 * copy, is a function of the registers, the stack words it read and the
 * mappings, so after a walk the program writes the thread's ucache entry
 * itself (above: the registers it used, every word it read, the spill id),
 * and the next block with the same registers and words reuses the id, as
 * for copies; --stack-cache verify compares such reuses by frames.  A spill
 * id names its frames (the key), so it never names another stack later.
 * Like the copies' entries, a reuse assumes the mappings at those pcs did
 * not change in place (munmap then mmap at the same address).
 *
 * Boards: every board with KUNWIND in a board/ file (all five; armhf walks
 * EHABI rows too).  A board without it stays on the copy path (-v says so).
 */
#define OFFCPU_KROW_NORMAL	0
#define OFFCPU_KROW_END		1	/* the outermost frame: the stack is complete */
#define OFFCPU_KROW_MISS	2	/* the walker gives up: copy the block */
/*
 * 32-bit ARM, no table for the pc (EHABI CANTUNWIND and no debug FDE):
 * user space tries a Thumb frame record there (thumb_fp_step), which fails
 * at once where r7 cannot point at one (0, unaligned, below sp): there the
 * stack ends as user space ends it; elsewhere the walker gives up.
 */
#define OFFCPU_KROW_GAP		3

#define OFFCPU_KROW_SP		1	/* cfa_base, as enum cfi_base */
#define OFFCPU_KROW_FP		2
#define OFFCPU_KROW_SAME	0	/* ra_rule, fp_rule, as enum cfi_rule */
#define OFFCPU_KROW_AT_CFA	1

#define OFFCPU_KROW_SEARCH	20	/* binary search steps: rows a file < 2^20 */
#define OFFCPU_KMAPS		64	/* executable mappings of a process */
#define OFFCPU_KMAP_SEARCH	7	/* steps over OFFCPU_KMAPS */
#define OFFCPU_KFILES		4096	/* file slots */
#define OFFCPU_KPROCS		2048
#define OFFCPU_KWANT		1024	/* requests not yet served */

struct offcpu_krow {
	__u32 pc;		/* file address (files whose text ends past 4 GiB: not loaded) */
	__u16 tag;		/* its file id's low 16 bits */
	__u8 kind;		/* OFFCPU_KROW_* */
	__u8 cfa_base;		/* OFFCPU_KROW_SP or _FP */
	__s16 cfa_off, ra_off, fp_off;
	__u8 ra_rule, fp_rule;	/* OFFCPU_KROW_SAME or _AT_CFA */
};

struct offcpu_kfile {
	__u32 first, n;		/* rows [first, first + n) of ku_rows */
	__u32 id;		/* 0: empty */
	__u32 pad;
};

struct offcpu_kmap {
	__u64 start, end;	/* runtime addresses */
	__u64 bias;		/* file address = pc - bias */
	__u32 slot, id;		/* ku_files[slot], valid while its id is id */
};

/*
 * A request in ku_want: the process's address space, and the file it lacked
 * rows of (id 0: none) with the file address looked up (a file loaded by
 * parts loads the part holding it).
 */
struct offcpu_kwant {
	__u64 mm;
	__u32 slot, id;
	__u64 addr;
};

struct offcpu_kproc {
	__u64 mm;		/* the address space the mappings were read for */
	__u32 n;		/* mappings, sorted by start */
	__u32 pad;
	struct offcpu_kmap maps[OFFCPU_KMAPS];
};

/*
 * Spill ids of the task iterators' stacks carry this CPU number, no CPU's
 * (and without OFFCPU_DWARF_ID's bit).
 */
#define OFFCPU_SCAN_CPU		0x1ffff

/*
 * A thread the task iterators report (bpf/offcpu_blocked.bpf.h): asleep at
 * the start (its start state set then), or still blocked at the end.
 */
struct offcpu_blocked {
	__u64 ts;		/* start of the block, or of the recording */
	__u32 pid;		/* tgid */
	__u32 tid;
	__s32 ustack;
	__s32 kstack;
	__u32 state;
	__u32 pad;
	__u64 runtime;		/* its CPU time at the start of the block (0: unknown) */
};

/* Per-CPU drop counters, indexes of the drops map. */
enum offcpu_drop {
	DROP_USTACK,		/* user stack not recorded (maps full, fault) */
	DROP_KSTACK,		/* kernel stack not recorded */
	DROP_SUMS,		/* sums map full */
	DROP_RINGBUF,		/* ring buffer full: a long block summed instead (not lost) */
	DROP_STORAGE,		/* per-thread start state not stored */
	DROP_FILTER,		/* pid filter map full (fork tracking) */
	DROP_KTHREADS,		/* tp,hash: kthreads map full, a kernel thread not recognised */
	DROP_UNSEEN,		/* a block whose switch-in no sched_switch event showed */
	DROP_UCOPY,		/* dwarf: ring buffer full, the user stack walked by frame pointer */
	DROP_UREGS,		/* dwarf: no user registers where task_pt_regs() keeps them: walked by frame pointer */
	DROP_SWITCH,		/* the tail-call walker could not call the switch program back: a switch lost */
	DROP_MAX,
};

/* Counters after the drops in the same per-CPU array: the user stack cache. */
enum offcpu_stat {
	STAT_USTACK_WALKED = DROP_MAX,	/* user stacks walked */
	STAT_USTACK_REUSED,		/* same registers as the last block: id reused */
	STAT_USTACK_WRONG,		/* --stack-cache verify: a reuse that would be wrong */
	STAT_USTACK_SPILLED,		/* user stacks stored in the spill map */
	STAT_KSTACK_SPILLED,		/* kernel stacks stored in the spill map */
	STAT_UNSEEN_ENDED,		/* such a block, ended from the thread's CPU time or the CPU's last switch */
	STAT_UCOPY_SENT,		/* dwarf: user stack copies sent */
	STAT_UCOPY_SHORT,		/* of which shortened at the end of the stack mapping */
	STAT_UCOPY_UNREADABLE,		/* of which nothing could be read at sp */
	STAT_WAKER_NONE,		/* --wakers: a block ended with no wakeup seen */
	STAT_WAKER_NO_USTACK,		/* --wakers: a waker's user stack not recorded */
	STAT_TRIGGER_SUMMED,		/* a block of --trigger-block summed: the ring was full */
	STAT_KUNWIND_OK,		/* --unwind-in kernel: user stacks unwound in the kernel */
	STAT_KUNWIND_NO_PROC,		/* ... copied instead: the process's mappings not loaded */
	STAT_KUNWIND_NO_MAP,		/* ... a pc in no loaded mapping */
	STAT_KUNWIND_NO_ROWS,		/* ... its file's rows not loaded (or evicted) */
	STAT_KUNWIND_MISS_ROW,		/* ... a row the walker cannot follow */
	STAT_KUNWIND_UNREADABLE,	/* ... a stack word unreadable */
	STAT_KUNWIND_BAD,		/* ... the stack pointer went backwards */
	STAT_KUNWIND_NO_ID,		/* ... the spill map (or this CPU's ids) full */
	STAT_USTACK_UNKNOWN,		/* user space: a sample's user stack id named nothing it knew */
	STAT_KUNWIND_FORKED,		/* processes given their parent's ku_procs entry at fork */
	STAT_WAKER_MARKED_TASK,		/* user space: a task waker (by its kernel stack) that an
					 * interrupt marker kept from its user stack */
	STAT_PERF_LOST,			/* perf backend: records its rings lost (PERF_RECORD_LOST) */
	COUNTER_MAX,
};

/*
 * bpf/offcpu_ksym.bpf.c: the longest name it looks up (with its NUL), and
 * the room for %pS's "name+0x0/0xsize" (a longer text does not parse).
 */
#define OFFCPU_KSYM_NAME	64
#define OFFCPU_KSYM_TEXT	128

/*
 * bpf/offcpu_ksym.bpf.c's one global (its .bss, set and read by
 * src/record/kfunc_range.c).  In: the name, NUL-padded; out: the lookup's
 * result (0, -ENOENT: no such symbol, -EPERM: addresses hidden from us),
 * the address and its %pS.
 */
struct offcpu_ksym {
	char name[OFFCPU_KSYM_NAME];
	__s64 ret;		/* bpf_kallsyms_lookup_name's */
	__u64 addr;
	char text[OFFCPU_KSYM_TEXT];
};

#endif
