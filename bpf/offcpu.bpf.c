// SPDX-License-Identifier: GPL-2.0
/*
 * Off-CPU time on sched_switch.
 *
 * At switch-out of prev (sleeping in a state the user asked for): remember
 * the time and the stack ids.  At switch-in of next: delta = now - then.
 * Blocks of at least thresh_ns go straight to user space through the ring
 * buffer with their real time; shorter ones are summed in the sums map, which
 * user space drains periodically.  Each delta is counted exactly once: the
 * start state is cleared at switch-in.
 *
 * Three entry points share one body; the loader picks one per kernel:
 *   on_switch_task  tp_btf + task local storage (5.11+, kernel BTF)
 *   on_switch_hash  tp_btf + hash keyed by tid   (kernel BTF)
 *   on_switch_raw   raw_tp + hash keyed by tid   (no kernel BTF: CO-RE
 *                   against external BTF; task pointers read with probe_read)
 * Everything is inlined: Debian's s390x kernels only have the interpreter.
 */
#include "offcpu_common.bpf.h"
#include "offcpu_wakers.bpf.h"
#include "offcpu_unwind.bpf.h"
#include <bpf/bpf_core_read.h>

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct offcpu_start);
} task_start SEC(".maps");

/*
 * A kernel long or pointer field of S, read at the size the kernel's BTF
 * gives it: 4 bytes on a 32-bit kernel (armhf), where BPF's are 8 and
 * BPF_CORE_READ would read the next field into the high half.  Direct
 * loads need none of this: libbpf resizes them.
 */
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define OFFCPU_LOW_BYTES(sz) (8 - (sz))	/* where a narrower value's bytes go */
#else
#define OFFCPU_LOW_BYTES(sz) 0
#endif
/*
 * The size in one register, so either byte order has one size relocation
 * (t_btf compares s390x's with its bpfel twin's).
 */
#define CORE_READ_LONG(s, field) ({ __u64 __v = 0; \
	__u32 __sz = bpf_core_field_size((s)->field); \
	asm volatile("" : "+r"(__sz)); \
	bpf_core_read((void *)&__v + OFFCPU_LOW_BYTES(__sz), __sz, &(s)->field); __v; })

/* The state prev is switched out with, as the kernel's sched_switch computes it. */
static __always_inline __u32 task_state(struct task_struct *t)
{
	if (bpf_core_field_exists(t->__state))
		return BPF_CORE_READ(t, __state);
	return CORE_READ_LONG((struct task_struct___old *)t, state);
}

/*
 * A field of a task: a plain load through the BTF pointer of tp_btf programs
 * (CO-RE relocated, no helper call), bpf_probe_read_kernel for raw_tp.
 */
#define TASK_READ(tp_btf, t, field) ((tp_btf) ? (t)->field : BPF_CORE_READ(t, field))

static __always_inline bool wanted(struct task_struct *t, __u32 pid, __u32 tid,
				   bool tp_btf)
{
	__u32 flags = TASK_READ(tp_btf, t, flags);

	if (cfg.user_only && (flags & OFFCPU_PF_KTHREAD))
		return false;
	/* An exiting thread's last blocks would recreate its hash entry. */
	if (flags & OFFCPU_PF_EXITING)
		return false;
	return filters_pass(pid, tid);
}

static __always_inline struct offcpu_start *
start_of(struct task_struct *t, __u32 tid, bool task_storage, bool create)
{
	if (task_storage)
		return bpf_task_storage_get(&task_start, t, NULL,
				create ? BPF_LOCAL_STORAGE_GET_F_CREATE : 0);
	return tid_start_of(tid, create);
}

/* A user word at ADDR (OFFCPU_UWORD: 4 bytes on armhf), 0 where unreadable. */
static __always_inline __u64 offcpu_uword(__u64 addr)
{
	OFFCPU_UWORD w = 0;

	bpf_probe_read_user(&w, sizeof(w), (void *)addr);
	return w;
}

/*
 * The frame records at FP + OFFCPU_FRAME_REC: the caller's fp, and the
 * return address OFFCPU_FRAME_RET above it.
 */
static __always_inline void offcpu_frame_rets(__u64 fp, __u64 *r1, __u64 *r2)
{
	__u64 up;

	*r1 = offcpu_uword(fp + OFFCPU_FRAME_REC + OFFCPU_FRAME_RET);
	up = offcpu_uword(fp + OFFCPU_FRAME_REC);
	if (up)
		*r2 = offcpu_uword(up + OFFCPU_FRAME_REC + OFFCPU_FRAME_RET);
}

static __always_inline void offcpu_chain_rets(__u64 sp, __u64 *r1, __u64 *r2)
{
	__u64 up = 0, up2 = 0;

	bpf_probe_read_user(&up, sizeof(up), (void *)sp);
	if (!up)
		return;
	bpf_probe_read_user(r1, sizeof(*r1), (void *)(up + 112));
	bpf_probe_read_user(&up2, sizeof(up2), (void *)up);
	if (up2)
		bpf_probe_read_user(r2, sizeof(*r2), (void *)(up2 + 112));
}

/*
 * The user stack cache.  A thread that blocks again with the same user
 * registers (ip, sp, frame pointer, link register) and the same two
 * innermost return addresses as at its last block almost always has the
 * same user stack: bench/ measures how often that happens and, with
 * --stack-cache verify, how often a reuse would be wrong.  Reusing the last
 * stack id skips the walk, the largest cost per switch.  Ids stay valid:
 * user space never deletes stack map entries.  The address space is not in
 * the key (a helper call less, -60 ns): after an exec every one of these
 * values would have to repeat in the new image.  Returns 0 where there is no
 * key.
 */
static __always_inline __u64 user_key(struct task_struct *t)
{
	struct pt_regs *r;
	__u64 ip, sp, fp, lr, ret = 0, ret2 = 0;

	if (!OFFCPU_UREGS_EXIST((struct pt_regs *)0))
		return 0;
	r = (struct pt_regs *)bpf_task_pt_regs(t);
	if (!r)
		return 0;
	OFFCPU_UREGS(r, ip, sp, fp, lr);
#ifdef OFFCPU_UCHAIN_FP
	/* 32-bit ARM: the chain the kernel walks starts at r11, not the copied r7. */
	{
		__u64 chain = OFFCPU_UCHAIN_FP(r);

		OFFCPU_URETS(sp, chain, ret, ret2);
		fp = mix(fp, chain);
	}
#else
	OFFCPU_URETS(sp, fp, ret, ret2);
#endif
	return mix(mix(mix(mix(mix(mix(ip, sp), fp), lr), ret), ret2), 1) | 1;
}

/* end_block, or with --wakers the block under its waker. */
static __always_inline void end_any_block(__u32 pid, __u32 tid, struct offcpu_start *s,
					  __u64 *now)
{
	if (cfg.wakers)
		end_block_waker(pid, tid, s, now);
	else
		end_block(pid, tid, s, now);
}

/* Its CPU time; 0 where the BTF lacks the field (a minimal BTF given with --btf). */
static __always_inline __u64 task_runtime(struct task_struct *t, bool tp_btf)
{
	if (!bpf_core_field_exists(t->se.sum_exec_runtime))
		return 0;
	return TASK_READ(tp_btf, t, se.sum_exec_runtime);
}

/*
 * PREV switches out with its last block still open: the kernel switched it
 * in without a sched_switch event this program saw (some kernels emit none
 * while certain tasks are current: seen on a sandbox's kernel for its agent's
 * threads, for perf as well).  Every switch-out of PREV since is seen, so it
 * has run without a break since that switch-in, which was its new CPU time
 * ago.  Without that time the block is dropped, and counted.
 */
static __always_inline void end_unseen(struct task_struct *prev, __u32 tid,
				       struct offcpu_start *s, bool tp_btf, __u64 *now)
{
	__u64 runtime = task_runtime(prev, tp_btf), ran = runtime - s->runtime, end;

	if (!*now)
		*now = bpf_ktime_get_ns();
	if (!runtime || !s->runtime || runtime < s->runtime || ran > *now - s->ts) {
		s->ts = 0;
		count(DROP_UNSEEN);
		return;
	}
	end = *now - ran;
	count(STAT_UNSEEN_ENDED);
	end_any_block(s->tgid, tid, s, &end);
}

/* The per-CPU sequence of dwarf stack ids (see OFFCPU_DWARF_ID). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct offcpu_dwarf_seq);
} dwarf_seq SEC(".maps");

/* Set once any CPU nears the end of its ids: no stack id is reused after. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} dwarf_wrap SEC(".maps");

/*
 * The dwarf stack cache by tid (struct offcpu_ucache), written by user
 * space.  Not preallocated: an entry replaced from user space is freed
 * after an RCU grace period, so the program never reads a torn entry.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, struct offcpu_ucache);
} ucache SEC(".maps");

#define OFFCPU_PAGE	4096	/* the boards' page size; a larger one only shortens copies more */

/*
 * Copies cfg.copy_bytes of the user stack from SP to DST, or less where the
 * stack mapping ends first (a main thread blocked near its stack top):
 * the reads copy all or nothing, so each failure retries up to the page
 * boundary below.  The current task's stack, or with OTHER that of task T
 * (sleepable programs only: the copy may fault pages in).  Returns the
 * bytes copied, 0 if none.
 */
static __always_inline __u32 copy_user_stack(__u8 *dst, __u64 sp, bool other,
					     struct task_struct *t)
{
	__u64 len = cfg.copy_bytes, end;
	long err;

	for (int i = 0; i < OFFCPU_COPY_MAX / OFFCPU_PAGE + 2; i++) {
		/* One register checked and passed: the verifier bounds the size. */
		asm volatile("" : "+r"(len));
		if (!len || len > cfg.copy_bytes)
			return 0;
		if (other)
			err = bpf_copy_from_user_task(dst, len, (void *)sp, t, 0);
		else
			err = bpf_probe_read_user(dst, len, (void *)sp);
		if (!err)
			return len;
		end = (sp + len - 1) & ~(__u64)(OFFCPU_PAGE - 1);
		len = end > sp ? end - sp : 0;
	}
	return 0;
}

/*
 * Fills and sends ucopy C: stack ID of thread PID/TID of address space MM,
 * its user registers and the copy of its stack top (the current task's, or
 * with OTHER task T's).  REUSE: the id the stack cache would have reused;
 * KID: the kernel walk's id (--unwind-in verify), or 0; FLAGS:
 * OFFCPU_UCOPY_*.
 */
static __always_inline void send_ucopy(struct offcpu_ucopy *c, __s32 id, __u32 pid, __u32 tid,
				       __u32 reuse, __u32 kid, __u32 flags, __u64 mm, __u64 ip,
				       __u64 sp, __u64 fp, __u64 lr, bool other, struct task_struct *t)
{
	c->magic = OFFCPU_UCOPY_MAGIC;
	c->id = id;
	c->pid = pid;
	c->tid = tid;
	c->reuse_id = reuse;
	c->kernel_id = kid;
	c->flags = flags;
	c->pad = 0;
	c->mm = mm;
	c->time = bpf_ktime_get_ns();
	c->pc = ip;
	c->sp = sp;
	c->fp = fp;
	c->lr = lr;
	c->len = copy_user_stack(c->bytes, sp, other, t);
	if (!c->len)
		count(STAT_UCOPY_UNREADABLE);
	else if (c->len < cfg.copy_bytes)
		count(STAT_UCOPY_SHORT);
	bpf_ringbuf_submit(c, 0);
	count(STAT_UCOPY_SENT);
	count(STAT_USTACK_WALKED);
}

/*
 * Whether the thread's cache entry E names this block's stack: the same
 * process and registers (those the unwinding used), and every stack word
 * its unwinding read unchanged.
 */
static __always_inline bool ucache_hit(const struct offcpu_ucache *e, __u32 pid, __u64 ip,
				       __u64 sp, __u64 fp, __u64 lr)
{
	if (e->pid != pid || e->pc != ip || e->sp != sp)
		return false;
	if (((e->flags & OFFCPU_UCACHE_FP) && e->fp != fp) ||
	    ((e->flags & OFFCPU_UCACHE_LR) && e->lr != lr))
		return false;
	for (__u32 i = 0; i < OFFCPU_UCACHE_WORDS; i++) {
		if (i >= e->n)
			return true;
		if (offcpu_uword(e->addr[i]) != e->val[i])
			return false;
	}
	return true;
}

/*
 * The user registers T (current) saved at kernel entry: bpf_task_pt_regs
 * where the kernel has it (5.15+, tp_btf), else task_pt_regs() computed as
 * the kernel does (older kernels, raw_tp), taken only when the saved mode
 * says user (a kernel configured otherwise than user space assumed, KASAN's
 * larger stacks for one, must not give another frame's registers).
 */
static __always_inline bool task_uregs(struct task_struct *t, bool tp_btf,
				       __u64 *ip, __u64 *sp, __u64 *fp, __u64 *lr)
{
	struct pt_regs *r;
	void *stack;

	if (tp_btf && cfg.task_pt_regs) {
		r = (struct pt_regs *)bpf_task_pt_regs(t);
		if (!r)
			return false;
		OFFCPU_UREGS(r, *ip, *sp, *fp, *lr);
		return true;
	}
	if (!cfg.thread_size || !bpf_core_field_exists(t->stack))
		return false;
	stack = tp_btf ? t->stack : (void *)CORE_READ_LONG(t, stack);
	if (!stack)
		return false;
	r = (struct pt_regs *)(stack + cfg.thread_size - cfg.uregs_pad -
			       bpf_core_type_size(struct pt_regs));
	if (!OFFCPU_UREGS_USER(r))
		return false;
	OFFCPU_UREGS_READ(r, *ip, *sp, *fp, *lr);
	return true;
}

/*
 * The current task's user stack walked by frame pointer instead: for a
 * block with start S (its frame-pointer cache unused), or for a WAKER.
 */
static __always_inline __s32 fp_stack_id(void *ctx, struct offcpu_start *s, bool waker)
{
	if (waker)
		return stack_id(ctx, &stacks, &ustack_spill, BPF_F_USER_STACK, STAT_USTACK_SPILLED);
	return user_stack_id(ctx, s, 0);
}

/*
 * --call-graph dwarf: the user registers saved at kernel entry and the top
 * of the user stack go to user space, which unwinds them with the CFI of
 * the mapped files (src/unwind/unwind.c); the block carries a fresh id for that
 * stack, or the cached one (ucache) when the stack is provably the same.
 * T is current (a BTF pointer where TP_BTF); WAKER: it wakes a blocked
 * thread (sched_waking), S is NULL, and its cache entry is its own waker
 * one.  KWALKER: the kernel walker, KWALK_* (offcpu_unwind.bpf.h).
 * Returns the id; when the ring buffer is full, the frame-pointer stack's
 * (counted), or -1.
 */
static __always_inline __s32 dwarf_stack_id(void *ctx, struct offcpu_start *s,
					    struct task_struct *t, __u32 pid, __u32 tid,
					    bool tp_btf, bool waker, int kwalker)
{
	struct offcpu_dwarf_seq *q;
	struct offcpu_ucache *e;
	struct offcpu_ucopy *c;
	__u32 zero = 0, reuse = 0, kid = 0, *wrap, cpu = bpf_get_smp_processor_id();
	__u32 key = waker ? tid | OFFCPU_UCACHE_WAKER : tid;
	__u64 ip, sp, fp, lr, mm;
	__s32 id;

	q = bpf_map_lookup_elem(&dwarf_seq, &zero);
	wrap = bpf_map_lookup_elem(&dwarf_wrap, &zero);
	if (!q || !wrap || !OFFCPU_UREGS_EXIST((struct pt_regs *)0))
		return -1;
	if (!task_uregs(t, tp_btf, &ip, &sp, &fp, &lr)) {
		/* A kernel thread has none; elsewhere the layout was not the kernel's. */
		if (TASK_READ(tp_btf, t, flags) & OFFCPU_PF_KTHREAD)
			return -1;
		count(DROP_UREGS);
		return fp_stack_id(ctx, s, waker);
	}
	/*
	 * Once ids repeat, a cached one may name a newer stack: every CPU stops
	 * reusing OFFCPU_DWARF_WRAP_MARGIN ids before the first one wraps.
	 */
	e = cfg.stack_cache && !*wrap ? bpf_map_lookup_elem(&ucache, &key) : NULL;
	if (e && ucache_hit(e, pid, ip, sp, fp, lr)) {
		count(STAT_USTACK_REUSED);
		if (!cfg.stack_cache_verify)
			return e->id;
		reuse = e->id;
	}
	mm = CORE_READ_LONG(t, mm);
	/*
	 * --unwind-in kernel: walked here; a miss is copied (the copy asks for
	 * the rows).  verify: the walked stack is copied too, and compared.
	 * A waker's stack is copied: the walker in the sched_waking programs
	 * too doubled the verifier's start-up (+2.6 s on the build host).
	 */
	if (cfg.kunwind && !reuse && !waker) {
		struct offcpu_ucache *walked = NULL;

		id = kunwind_stack_id(ctx, pid, mm, ip, sp, fp, lr, &walked, kwalker);
		/*
		 * A walk, like an unwind, is a function of the registers, the
		 * words it read and the mappings: its entry makes the next
		 * block with the same ones reuse the id (checked as any entry).
		 */
		if (walked && cfg.stack_cache && !*wrap)
			bpf_map_update_elem(&ucache, &key, walked, BPF_ANY);
		if (id >= 0 && !cfg.kunwind_verify)
			return id;
		kid = id >= 0 ? id : 0;
	}
	c = bpf_ringbuf_reserve(&events, sizeof(*c) + cfg.copy_bytes, 0);
	if (!c) {
		if (kid)
			return kid;
		/* User space is behind: the frame-pointer stack rather than none. */
		count(DROP_UCOPY);
		return fp_stack_id(ctx, s, waker);
	}
	if (q->seq >= OFFCPU_DWARF_SEQ_MASK - OFFCPU_DWARF_WRAP_MARGIN)
		*wrap = 1;
	id = OFFCPU_DWARF_ID | cpu << OFFCPU_DWARF_CPU_SHIFT |
	     (q->seq++ & OFFCPU_DWARF_SEQ_MASK);
	send_ucopy(c, id, pid, tid, reuse, kid, waker ? OFFCPU_UCOPY_WAKER : 0, mm, ip, sp, fp, lr,
		   false, NULL);
	return kid ? kid : id;
}

/* NOW: the time of this switch, read once for both halves (0: not yet). */
static __always_inline void switch_out(void *ctx, struct task_struct *prev,
				       __u32 state, bool task_storage, bool tp_btf,
				       __u64 *now, int kwalker)
{
	struct offcpu_start *s;
	__u32 pid, tid;

	/* prev is still current at sched_switch. */
	current_ids(&pid, &tid);
	if (!(state & cfg.state_mask)) {
		/* Preempted or exiting: only a block still open needs ending. */
		if (cfg.user_only && (TASK_READ(tp_btf, prev, flags) & OFFCPU_PF_KTHREAD))
			return;
		s = start_of(prev, tid, task_storage, false);
		if (!s || !s->ts)
			return;
		end_unseen(prev, tid, s, tp_btf, now);
		/* on_exit kept the entry for this, the thread's last switch-out. */
		if (!task_storage && (TASK_READ(tp_btf, prev, flags) & OFFCPU_PF_EXITING))
			bpf_map_delete_elem(&tid_start, &tid);
		return;
	}
	if (!wanted(prev, pid, tid, tp_btf))
		return;
	s = start_of(prev, tid, task_storage, true);
	if (!s) {
		count(DROP_STORAGE);
		return;
	}
	if (s->ts)
		end_unseen(prev, tid, s, tp_btf, now);
	/* A wakeup that ended an earlier block is not this one's. */
	if (cfg.wakers)
		s->waker.flags = 0;
	/* prev is current here, so the stacks walked are prev's. */
	if (cfg.dwarf && cfg.want_ustack) {
		s->ustack = dwarf_stack_id(ctx, s, prev, pid, tid, tp_btf, false, kwalker);
		start_block_rest(ctx, s, pid, state, now);
	} else {
		start_block(ctx, s, pid, state, tp_btf && cfg.stack_cache ? user_key(prev) : 0, now);
	}
	s->runtime = task_runtime(prev, tp_btf);
}

static __always_inline void switch_in(struct task_struct *next, bool task_storage,
				      bool tp_btf, __u64 *now)
{
	struct offcpu_start *s;
	__u32 tid;

	/* Kernel threads and the idle task never have a start: skip the lookup. */
	if (cfg.user_only && (TASK_READ(tp_btf, next, flags) & OFFCPU_PF_KTHREAD))
		return;
	tid = TASK_READ(tp_btf, next, pid);
	s = start_of(next, tid, task_storage, false);
	if (!s || !s->ts)
		return;
	end_any_block(TASK_READ(tp_btf, next, tgid), tid, s, now);
}

/* KWALKER: the kernel walker, KWALK_* (the *_loop programs). */
static __always_inline int on_switch(unsigned long long *ctx, bool task_storage,
				     bool tp_btf, int kwalker)
{
	bool preempt = (bool)ctx[0];
	struct task_struct *prev = (struct task_struct *)ctx[1];
	struct task_struct *next = (struct task_struct *)ctx[2];
	__u64 now = 0;
	__u32 state;

	/*
	 * A preempted task is runnable, not blocked.  Since 5.18 the tracepoint
	 * passes the state sampled at the start of __schedule(); reading it from
	 * the task instead can race with a wake-up.  The branch on the rodata
	 * flag is removed by the verifier on older kernels, so ctx[3] is never
	 * touched where it does not exist.
	 */
	if (preempt)
		state = 0;
	else if (cfg.has_prev_state_arg)
		state = (__u32)ctx[3];
	else
		state = task_state(prev);
	switch_out(ctx, prev, state & 0xff, task_storage, tp_btf, &now, kwalker);
	switch_in(next, task_storage, tp_btf, &now);
	return 0;
}

/*
 * A sched_switch program: its attach point, storage and walker.  With the
 * tail-call walker a walked block runs it twice, the second time from the
 * top once the steps are done: what it does before the walk must have no
 * one-time effect (a count, a ring reservation), or it happens twice.
 */
#define SWITCH_PROG(name, sec, task_storage, tp_btf, kwalker)	\
	SEC(sec)						\
	int name(unsigned long long *ctx)			\
	{							\
		if (kwalk_is_tail(kwalker))			\
			kwalk_tail_enter();			\
		return on_switch(ctx, task_storage, tp_btf, kwalker);	\
	}

SWITCH_PROG(on_switch_task, "tp_btf/sched_switch", true, true, PROG_WALK_INLINE)
SWITCH_PROG(on_switch_hash, "tp_btf/sched_switch", false, true, PROG_WALK_INLINE)
SWITCH_PROG(on_switch_raw, "raw_tp/sched_switch", false, false, PROG_WALK_INLINE)
/*
 * The same with the kernel walker's frame step a bpf_loop callback (5.17+,
 * --unwind-in kernel): a kernel without bpf_loop refuses a program that
 * names a callback even where it would never run, so these are programs of
 * their own, loaded instead of the above (loader.c).
 */
SWITCH_PROG(on_switch_task_loop, "tp_btf/sched_switch", true, true, PROG_WALK_CALLBACK)
SWITCH_PROG(on_switch_hash_loop, "tp_btf/sched_switch", false, true, PROG_WALK_CALLBACK)
SWITCH_PROG(on_switch_raw_loop, "raw_tp/sched_switch", false, false, PROG_WALK_CALLBACK)
/*
 * The tail-call walker's steps (kwalk_tail; the sched_switch programs of
 * the bounded loop with cfg.kwalk_tail): programs of the sched_switch
 * program's own type and attach point (a tail call needs both), loaded
 * with it and never attached (loader.c).
 */
SEC("tp_btf/sched_switch")
int kwalk_step_btf(unsigned long long *ctx)
{
	return kwalk_tail_step(ctx);
}

SEC("raw_tp/sched_switch")
int kwalk_step_raw(unsigned long long *ctx)
{
	return kwalk_tail_step(ctx);
}

/*
 * Per CPU, the interrupt work running now (--wakers): an hrtimer's callback
 * (between hrtimer_expire_entry and _exit) or a softirq (softirq_entry and
 * _exit).  A wakeup inside is the interrupt's, and the current task only
 * the one it found: its user stack is not taken (irq_known).  7.x runs
 * some hrtimer expiries in task context (the idle task, the task the timer
 * fired under), where preempt_count has no interrupt bits: a wakeup inside
 * a callback is the timer's all the same.  Device interrupts are not
 * marked: user space tells them by the kernel stack, as before.
 *
 * Each kind is a depth (a hard hrtimer can interrupt a soft one's
 * callback).  A marker must not stay set when its exit went unseen: an
 * arm64 6.1 guest under TCG once lost every task waker's user stack for a
 * whole recording that way, likely a vCPU running an exit tracepoint's
 * unpatched site as it was attached (user space attaches the exits
 * first).  So a CPU whose marked work has lasted IRQ_STALE_NS (an exit
 * missed), or whose depth passes IRQ_DEPTH_MAX (exits not running), stops
 * trusting its markers for the recording.  A real softirq that long costs
 * that CPU the saving only: unmarked wakeups are told apart by the kernel
 * stack, or by preempt_count on armhf (copies more, nothing wrong).  A marker wrongly trusted (PREEMPT_RT
 * preempts softirqs) only costs a task waker its user stack, never gives
 * it another's.
 */
#define IRQ_DEPTH_MAX	4
#define IRQ_STALE_NS	(10 * 1000 * 1000ULL)

struct irq_marks {
	__u64 since;		/* when the depths left 0 */
	__u32 hrtimer, softirq;	/* depths */
	__u32 lost;		/* exits never seen: markers ignored */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct irq_marks);
} in_irq SEC(".maps");

static __always_inline int mark_irq(bool hrtimer, bool on)
{
	__u32 zero = 0;
	struct irq_marks *m = bpf_map_lookup_elem(&in_irq, &zero);
	__u32 *depth;

	if (!m)
		return 0;
	depth = hrtimer ? &m->hrtimer : &m->softirq;
	if (on) {
		if (!m->hrtimer && !m->softirq)
			m->since = bpf_ktime_get_ns();
		if (++*depth > IRQ_DEPTH_MAX)
			m->lost = 1;
	} else if (*depth) {
		--*depth;
	}
	return 0;
}

SEC("raw_tp/hrtimer_expire_entry")
int on_hrtimer_entry(void *ctx __attribute__((unused)))
{
	return mark_irq(true, true);
}

SEC("raw_tp/hrtimer_expire_exit")
int on_hrtimer_exit(void *ctx __attribute__((unused)))
{
	return mark_irq(true, false);
}

SEC("raw_tp/softirq_entry")
int on_softirq_entry(void *ctx __attribute__((unused)))
{
	return mark_irq(false, true);
}

SEC("raw_tp/softirq_exit")
int on_softirq_exit(void *ctx __attribute__((unused)))
{
	return mark_irq(false, false);
}

/* OFFCPU_WAKER_HARDIRQ or _SOFTIRQ where a trusted marker above is set, else 0. */
static __always_inline __u32 irq_marked(void)
{
	__u32 zero = 0;
	struct irq_marks *m = bpf_map_lookup_elem(&in_irq, &zero);

	if (!m || m->lost || (!m->hrtimer && !m->softirq))
		return 0;
	if (bpf_ktime_get_ns() - m->since > IRQ_STALE_NS) {
		m->lost = 1;
		return 0;
	}
	return m->hrtimer ? OFFCPU_WAKER_HARDIRQ : OFFCPU_WAKER_SOFTIRQ;
}

#ifdef OFFCPU_PREEMPT_COUNT
/*
 * Whether CUR, the current task, runs an interrupt: the markers, else its
 * preempt_count's hardirq bits (0xf0000) or serving-softirq bit (0x100), as
 * in_hardirq() and in_serving_softirq() read them.  Only where the waker's
 * kernel stack cannot tell (vmlinux_min.h).
 */
static __always_inline __u32 waker_irqctx(struct task_struct *cur)
{
	struct task_struct___ti *t = (void *)cur;
	__u32 marked = irq_marked();
	struct thread_info *ti;
	int pc = 0;

	if (marked)
		return marked;
	if (bpf_core_field_exists(t->thread_info))
		ti = __builtin_preserve_access_index(&t->thread_info);
	else
		ti = (void *)CORE_READ_LONG(cur, stack);
	if (!ti || !bpf_core_field_exists(ti->preempt_count) ||
	    bpf_core_read(&pc, sizeof(pc), &ti->preempt_count))
		return 0;
	if (pc & 0xf0000)
		return OFFCPU_WAKER_HARDIRQ;
	return pc & 0x100 ? OFFCPU_WAKER_SOFTIRQ : OFFCPU_WAKER_TASKCTX;
}
#else
/* Elsewhere the markers only (x86_64's preempt_count is a per-CPU variable). */
static __always_inline __u32 waker_irqctx(struct task_struct *cur __attribute__((unused)))
{
	return irq_marked();
}
#endif

/*
 * The user stack of CUR, the current task (PID/TID), waking a thread: as
 * a block's is taken (copied for CFI with --call-graph dwarf, also under
 * --unwind-in kernel), for the same frames through code without frame
 * pointers.  In an interrupt no marker saw it is the interrupted task's,
 * which user space leaves out by the kernel stack (src/record/wakers.c).
 */
static __always_inline __s32 waker_ustack(void *ctx, struct task_struct *cur, __u32 pid,
					  __u32 tid, bool tp_btf)
{
	struct task_struct *t = cur;
	bool btf = false;

	if (!cfg.dwarf)
		return fp_stack_id(ctx, NULL, true);
	/* bpf_task_pt_regs takes the task's BTF pointer: the helper's (5.11+) where it runs. */
	if (tp_btf && cfg.task_pt_regs) {
		t = bpf_get_current_task_btf();
		btf = true;
	}
	return dwarf_stack_id(ctx, NULL, t, pid, tid, btf, true, false);
}

/*
 * In an interrupt the current task did not wake anyone: its user stack is
 * not taken.  Where the kernel stack can tell (all boards but armhf), user
 * space would drop that stack anyway; not copying it is the saving.  A
 * marker wrongly set costs a task waker its user stack (counted by user
 * space by its kernel stack), never gives it another's.
 */
static __always_inline bool irq_known(__u32 irqctx)
{
	return irqctx & (OFFCPU_WAKER_HARDIRQ | OFFCPU_WAKER_SOFTIRQ);
}

/*
 * --wakers: P is being woken by the current task (or by an interrupt).  Only
 * a thread with a block in progress (start time set) is of interest, so the
 * filters were passed at its switch-out.
 */
static __always_inline int on_waking(void *ctx, struct task_struct *p, bool task_storage,
				     bool tp_btf)
{
	struct task_struct *cur = (struct task_struct *)bpf_get_current_task();
	struct offcpu_start *s;
	__u32 irqctx;
	bool kthread;

	s = start_of(p, TASK_READ(tp_btf, p, pid), task_storage, false);
	if (!s || !s->ts)
		return 0;
	kthread = BPF_CORE_READ(cur, flags) & OFFCPU_PF_KTHREAD;
	irqctx = waker_irqctx(cur);
	note_waker(ctx, s, kthread, irqctx);
	if (cfg.want_ustack && !kthread && s->waker.pid && !irq_known(irqctx)) {
		s->waker.ustack = waker_ustack(ctx, cur, s->waker.pid, s->waker.tid, tp_btf);
		/* Also an interrupted task without user registers: not a drop of a stack. */
		if (s->waker.ustack < 0)
			count(STAT_WAKER_NO_USTACK);
	}
	return 0;
}

SEC("tp_btf/sched_waking")
int on_waking_task(unsigned long long *ctx)
{
	return on_waking(ctx, (struct task_struct *)ctx[0], true, true);
}

SEC("tp_btf/sched_waking")
int on_waking_hash(unsigned long long *ctx)
{
	return on_waking(ctx, (struct task_struct *)ctx[0], false, true);
}

SEC("raw_tp/sched_waking")
int on_waking_raw(unsigned long long *ctx)
{
	return on_waking(ctx, (struct task_struct *)ctx[0], false, false);
}

/*
 * -p: children forked later are profiled too; --unwind-in kernel: they
 * inherit their parent's mappings.
 */
SEC("raw_tp/sched_process_fork")
int on_fork(unsigned long long *ctx)
{
	struct task_struct *parent = (struct task_struct *)ctx[0];
	struct task_struct *child = (struct task_struct *)ctx[1];
	__u32 ppid = BPF_CORE_READ(parent, tgid);
	__u32 pid = BPF_CORE_READ(child, tgid);
	__u8 one = 1;

	if (pid != ppid && bpf_map_lookup_elem(&pid_filter, &ppid) &&
	    bpf_map_update_elem(&pid_filter, &pid, &one, BPF_ANY))
		count(DROP_FILTER);
	kunwind_fork(parent, child);
	return 0;
}

/*
 * Hash variants: forget exiting threads so tid_start cannot fill up; but a
 * block still open (its switch-in not seen) is ended at the thread's last
 * switch-out, where its CPU time is up to date, which removes it then.
 */
SEC("raw_tp/sched_process_exit")
int on_exit(unsigned long long *ctx)
{
	struct task_struct *t = (struct task_struct *)ctx[0];
	__u32 tid = BPF_CORE_READ(t, pid);
	struct offcpu_start *s = bpf_map_lookup_elem(&tid_start, &tid);

	if (s && s->ts)
		return 0;
	bpf_map_delete_elem(&tid_start, &tid);
	return 0;
}
#include "offcpu_blocked.bpf.h"
