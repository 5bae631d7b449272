/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Threads that stay blocked (issue 15): BPF task iterators (kernel BTF,
 * 5.9+) over the per-thread start state of offcpu.bpf.c.
 *
 *   scan_start_*  at the start of a recording, after sched_switch is
 *                 attached: every wanted thread already asleep gets a start
 *                 state as if it had blocked now, with its kernel stack
 *                 (bpf_get_task_stack) and, in the sleepable twins (5.18+),
 *                 its user stack from its saved registers with
 *                 bpf_copy_from_user_task: a copy for user space to unwind
 *                 with CFI (--call-graph dwarf), else walked by frame
 *                 pointers.  Its block then
 *                 ends like any other, at its switch-in or at the end.
 *   scan_end_task at the end, after sched_switch is detached: the start
 *                 states still set (threads still blocked) of the task
 *                 storage variant, which user space cannot list (hash
 *                 variants: user space reads tid_start itself).
 *
 * Each visited thread it reports goes to user space as a struct
 * offcpu_blocked through the iterator's seq_file.  Included by offcpu.bpf.c
 * only: the BTF-free object has no iterators.
 */
#ifndef OFFCPU_BLOCKED_BPF_H
#define OFFCPU_BLOCKED_BPF_H

/* The iterator context, two pointers since 5.8 (no CO-RE: the verifier checks it). */
struct seq_file;
struct bpf_iter_meta {
	struct seq_file *seq;
	__u64 session_id;
	__u64 seq_num;
};

struct bpf_iter__task {
	struct bpf_iter_meta *meta;
	struct task_struct *task;
};

/* Frames of the stack being stored: one scan runs at a time, so one entry. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct offcpu_spill_key);
} scan_frames SEC(".maps");

/* Spill ids handed out by the scans (the per-CPU ones live in spill_scratch). */
__u32 scan_seq;

/*
 * FRAMES (zero after the last one) into SPILL, as stack_id does for the
 * current task; the id's CPU field is OFFCPU_SCAN_CPU, no CPU's.  A stack
 * that finds no room is counted as DROP, like one at switch-out.
 */
static __always_inline __s32 scan_store(void *spill, struct offcpu_spill_key *frames,
					__u32 stat, __u32 drop)
{
	__s32 id, *found;
	__u32 seq;

	found = bpf_map_lookup_elem(spill, frames);
	if (found)
		return *found;
	/* One reader walks the tasks one after the other: no atomics needed. */
	seq = scan_seq;
	if (seq < OFFCPU_SPILL_PER_CPU) {
		scan_seq = seq + 1;
		id = OFFCPU_SPILL_ID | OFFCPU_SCAN_CPU << OFFCPU_SPILL_CPU_SHIFT | seq;
		if (!bpf_map_update_elem(spill, frames, &id, BPF_NOEXIST)) {
			count(stat);
			return id;
		}
		found = bpf_map_lookup_elem(spill, frames);
		if (found)
			return *found;
	}
	count(drop);
	return -1;
}

static __always_inline __s32 scan_kstack(struct task_struct *t)
{
	struct offcpu_spill_key *f;
	__u32 zero = 0, n = cfg.spill_bytes;

	f = bpf_map_lookup_elem(&scan_frames, &zero);
	if (!f || !n || n > sizeof(f->ip))
		return -1;
	if (bpf_get_task_stack(t, f->ip, n, 0) <= 0)
		return -1;
	return scan_store(&kstack_spill, f, STAT_KSTACK_SPILLED, DROP_KSTACK);
}

/*
 * One frame of the user stack above FP: the return address and the
 * caller's frame.  x86_64, arm64 and riscv64: a frame record {caller's fp,
 * return address} at FP + OFFCPU_FRAME_REC; armhf: the APCS {fp, sp, lr}.  s390x: FP is a stack pointer whose back chain leads to the
 * caller's frame, which keeps the return address (r14) at offset 112.
 */
static __always_inline bool scan_user_frame(struct task_struct *t, __u64 fp, __u64 *ret,
					    __u64 *up)
{
#if defined(__TARGET_ARCH_s390)
	if (bpf_copy_from_user_task(up, sizeof(*up), (void *)fp, t, 0) || !*up)
		return false;
	return !bpf_copy_from_user_task(ret, sizeof(*ret), (void *)(*up + 112), t, 0);
#else
	/* {caller's fp, ..., return address}: words of the user's size. */
	OFFCPU_UWORD rec[OFFCPU_FRAME_RET / sizeof(OFFCPU_UWORD) + 1];

	if (bpf_copy_from_user_task(rec, sizeof(rec), (void *)(fp + OFFCPU_FRAME_REC), t, 0))
		return false;
	*up = rec[0];
	*ret = rec[OFFCPU_FRAME_RET / sizeof(OFFCPU_UWORD)];
	return true;
#endif
}

/*
 * The user stack of sleeping T, as the kernel's frame-pointer walk gives it
 * at switch-out: the saved instruction pointer, then one return address per
 * frame, until a frame cannot be read, a null address, or a frame that does
 * not lie above the last (a loop).  Sleepable programs only.
 */
static __always_inline __s32 scan_ustack(struct task_struct *t)
{
	struct offcpu_spill_key *f;
	__u64 ip, sp, fp, lr, ret, up;
	__u32 zero = 0, n = cfg.spill_bytes / 8, i;
	struct pt_regs *r;

	/*
	 * A kernel thread has no user stack.  (Task fields the object reads
	 * anyway only: each new one would have to be in every minimal BTF.)
	 */
	if (t->flags & OFFCPU_PF_KTHREAD)
		return -1;
	f = bpf_map_lookup_elem(&scan_frames, &zero);
	r = (struct pt_regs *)bpf_task_pt_regs(t);
	if (!f || !r || !OFFCPU_UREGS_EXIST((struct pt_regs *)0))
		return -1;
	OFFCPU_UREGS(r, ip, sp, fp, lr);
	(void)lr;
	(void)sp;
#if defined(__TARGET_ARCH_s390)
	fp = sp;
#endif
	if (!ip)
		return -1;
	f->ip[0] = ip;
	/* fp 0: the walk has ended (the rest of the key stays zero). */
	for (i = 1; i < OFFCPU_SPILL_FRAMES; i++) {
		f->ip[i] = 0;
		if (i >= n || !fp)
			continue;
		if (!scan_user_frame(t, fp, &ret, &up) || !ret) {
			fp = 0;
			continue;
		}
		f->ip[i] = ret;
		fp = up > fp ? up : 0;
	}
	return scan_store(&ustack_spill, f, STAT_USTACK_SPILLED, DROP_USTACK);
}

/* Dwarf ids handed out by the scans, as scan_seq for the spill ids. */
__u32 scan_dwarf_seq;

/*
 * --call-graph dwarf: sleeping T's saved user registers and a copy of its
 * stack top go to user space, which unwinds them with CFI as it does a
 * block's (dwarf_stack_id); without them a thread asleep the whole
 * recording would keep the frame-pointer stack, which stops in a libc
 * built without frame pointers.  The ids' CPU field is
 * OFFCPU_DWARF_SCAN_CPU: this program can be preempted, and sched_switch
 * on its CPU owns that CPU's sequence.  The stack cache is neither read
 * nor bypassed (the entry user space writes after the unwind serves the
 * thread's next block).  Falls back to the frame-pointer walk when the ring
 * is full (counted).  Sleepable programs only.
 */
static __always_inline __s32 scan_dwarf(struct task_struct *t, __u32 pid, __u32 tid)
{
	struct offcpu_ucopy *c;
	__u64 ip, sp, fp, lr;
	__u32 seq = scan_dwarf_seq;

	if (t->flags & OFFCPU_PF_KTHREAD)
		return -1;
	if (!OFFCPU_UREGS_EXIST((struct pt_regs *)0) || seq > OFFCPU_DWARF_SEQ_MASK ||
	    !task_uregs(t, true, &ip, &sp, &fp, &lr))
		return scan_ustack(t);
	c = bpf_ringbuf_reserve(&events, sizeof(*c) + cfg.copy_bytes, 0);
	if (!c) {
		count(DROP_UCOPY);
		return scan_ustack(t);
	}
	scan_dwarf_seq = seq + 1;
	seq |= OFFCPU_DWARF_ID | OFFCPU_DWARF_SCAN_CPU << OFFCPU_DWARF_CPU_SHIFT;
	send_ucopy(c, seq, pid, tid, 0, 0, 0, (__u64)t->mm, ip, sp, fp, lr, true, t);
	return seq;
}

static __always_inline void scan_report(struct seq_file *seq, struct task_struct *t,
					struct offcpu_start *s)
{
	struct offcpu_blocked b = {
		.tid = t->pid, .pid = t->tgid, .ts = s->ts,
		.ustack = s->ustack, .kstack = s->kstack, .state = s->state,
		.runtime = s->runtime,
	};

	bpf_seq_write(seq, &b, sizeof(b));
}

/*
 * task_struct::on_cpu, an int before 7.x and a u8 since: read at the
 * kernel's size, zero or not in either byte order.
 */
static __always_inline bool task_on_cpu(struct task_struct *t)
{
	__u32 on = 0;

	if (!bpf_core_field_exists(t->on_cpu))
		return false;
	bpf_core_read(&on, bpf_core_field_size(t->on_cpu), &t->on_cpu);
	return on;
}

/*
 * T asleep now in a wanted state, never seen blocking by sched_switch: its
 * start state as if it had blocked now.  A thread woken meanwhile either
 * finds the state at its switch-in (and counts the block from now), or is
 * seen runnable again below and its start is taken back; one that blocks
 * again first overwrites it at its switch-out.  The state alone tells
 * asleep from runnable (a wake-up sets TASK_RUNNING before it queues the
 * task); a thread between setting its state and its switch-out is still on
 * its CPU (on_cpu) and is left to sched_switch.
 */
static __always_inline void scan_start(struct bpf_iter__task *ctx, bool task_storage,
				       bool ustack)
{
	struct task_struct *t = ctx->task;
	__s32 kstack, ustack_id = -1;
	struct offcpu_start *s;
	__u32 state, pid, tid;
	__u64 now;

	if (!t)
		return;
	pid = t->tgid;
	tid = t->pid;
	state = task_state(t) & 0xff;
	if (!(state & cfg.state_mask) || !wanted(t, pid, tid, true))
		return;
	/*
	 * Still on a CPU though its state says asleep: between setting its
	 * state and its switch-out, which sched_switch sees.  A start made
	 * here would be ended at that switch-out as a block whose switch-in
	 * was missed.
	 */
	if (task_on_cpu(t))
		return;
	s = start_of(t, tid, task_storage, true);
	if (!s) {
		count(DROP_STORAGE);
		return;
	}
	if (s->ts)	/* sched_switch saw it block already */
		return;
	now = bpf_ktime_get_ns();
	/*
	 * The stacks first, the start state after: the user stack's copy can
	 * sleep, and a thread woken meanwhile may have run and blocked again,
	 * its switch-out's start then stands.
	 */
	kstack = cfg.want_kstack ? scan_kstack(t) : -1;
	if (ustack && cfg.want_ustack)
		ustack_id = cfg.dwarf ? scan_dwarf(t, pid, tid) : scan_ustack(t);
	if (s->ts)
		return;
	s->kstack = kstack;
	s->ustack = ustack_id;
	s->ukey = 0;
	s->state = state;
	s->tgid = pid;
	s->runtime = task_runtime(t, true);	/* for end_unseen, as at a switch-out */
	s->ts = now;
	/*
	 * Woken while we looked: no block from now on, unless its switch-in
	 * or a new switch-out took the state over already.  (No atomic
	 * compare-and-swap: 5.10's BPF has none.)
	 */
	if (!(task_state(t) & 0xff & cfg.state_mask)) {
		if (s->ts == now)
			s->ts = 0;
		return;
	}
	scan_report(ctx->meta->seq, t, s);
}

SEC("iter/task")
int scan_start_task(struct bpf_iter__task *ctx)
{
	scan_start(ctx, true, false);
	return 0;
}

SEC("iter/task")
int scan_start_hash(struct bpf_iter__task *ctx)
{
	scan_start(ctx, false, false);
	return 0;
}

SEC("iter.s/task")
int scan_start_task_u(struct bpf_iter__task *ctx)
{
	scan_start(ctx, true, true);
	return 0;
}

SEC("iter.s/task")
int scan_start_hash_u(struct bpf_iter__task *ctx)
{
	scan_start(ctx, false, true);
	return 0;
}

/* The end: sched_switch is detached, so the states no longer move. */
SEC("iter/task")
int scan_end_task(struct bpf_iter__task *ctx)
{
	struct task_struct *t = ctx->task;
	struct offcpu_start *s;

	if (!t)
		return 0;
	s = bpf_task_storage_get(&task_start, t, NULL, 0);
	if (s && s->ts)
		scan_report(ctx->meta->seq, t, s);
	return 0;
}

#endif
