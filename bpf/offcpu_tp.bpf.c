// SPDX-License-Identifier: GPL-2.0
/*
 * The BTF-free variant (tp,hash): off-CPU time on the classic
 * sched/sched_switch tracepoint, for kernels with no BTF that matches.
 *
 * A separate object because libbpf loads vmlinux BTF for any object that
 * carries CO-RE relocations, even in programs it does not load.  This one
 * reads no kernel structure: the fields it needs come from the tracepoint
 * records, at offsets user space reads from tracefs's format files
 * (src/record/tracefs.c); the thread ids at switch-out from
 * bpf_get_current_pid_tgid (prev is current there); the tgid at switch-in
 * from the start state stored at switch-out.
 *
 * Kernel threads are recognised without task flags: user space seeds the
 * kthreads map with the threads that carry PF_KTHREAD in /proc at start,
 * and every thread forked by kthreadd (pid 2, the parent of all kernel
 * threads) is added as it is created.
 *
 * Per-thread state is the tid_start hash; entries are removed when the task
 * is freed (sched_process_free), after its last block, since without task
 * flags an exiting thread cannot be told apart at switch-out.
 */
#include "offcpu_common.bpf.h"

#define KTHREADD_PID	2	/* forks every kernel thread (kernel/kthread.c) */

/* sched_switch's prev_state as __trace_sched_switch_state reports it. */
#define REPORT_IDLE	0x80	/* TASK_IDLE: D that does not count as load */

/* Kernel threads (tids), filled by user space and by on_fork_tp. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, __u8);
} kthreads SEC(".maps");

/* The time of the last sched_switch this program saw on this CPU. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} cpu_last_switch SEC(".maps");

/* A field of a tracepoint record at OFF (a constant of .rodata). */
static __always_inline __u32 rec_u32(void *ctx, __u32 off)
{
	__u32 v = 0;

	bpf_probe_read_kernel(&v, sizeof(v), (char *)ctx + off);
	return v;
}

static __always_inline __u64 rec_long(void *ctx, __u32 off, __u32 size)
{
	__u64 v = 0;

	if (size != sizeof(v))
		return rec_u32(ctx, off);
	bpf_probe_read_kernel(&v, sizeof(v), (char *)ctx + off);
	return v;
}

/*
 * The current thread TID switches out with its last block S still open: it
 * was switched in without an event this program saw (the kernel skips
 * classic tracepoint programs while the CPU's bpf_prog_active is held; some
 * kernels emit no event while certain tasks are current).  It has run on
 * this CPU since, and every switch-out of it is seen, so that switch-in came
 * after LAST, the last switch seen here: the block ends there, short by what
 * ran in between (without task fields, its CPU time is not readable).
 */
static __always_inline void end_unseen(__u32 tid, struct offcpu_start *s, __u64 last,
				       __u64 *now)
{
	if (!*now)
		*now = bpf_ktime_get_ns();
	if (!last || last < s->ts || last > *now) {
		s->ts = 0;
		count(DROP_UNSEEN);
		return;
	}
	count(STAT_UNSEEN_ENDED);
	end_block(s->tgid, tid, s, &last);
}

static __always_inline void switch_out(void *ctx, __u32 state, __u64 last, __u64 *now)
{
	struct offcpu_start *s;
	__u32 pid, tid;

	current_ids(&pid, &tid);
	if (!(state & cfg.state_mask)) {
		/* prev ran: a start it still has is from a switch-in not seen. */
		s = tid_start_of(tid, false);
		if (s && s->ts)
			end_unseen(tid, s, last, now);
		return;
	}
	if (cfg.user_only && bpf_map_lookup_elem(&kthreads, &tid))
		return;
	if (!filters_pass(pid, tid))
		return;
	s = tid_start_of(tid, true);
	if (!s) {
		count(DROP_STORAGE);
		return;
	}
	if (s->ts)	/* as above: a switch-in not seen */
		end_unseen(tid, s, last, now);
	/* No task registers without BTF: no key, the user stack is always walked. */
	start_block(ctx, s, pid, state, 0, now);
}

static __always_inline void switch_in(void *ctx, __u64 *now)
{
	__u32 tid = rec_u32(ctx, cfg.tp_next_pid_off);
	struct offcpu_start *s;

	if (!tid)	/* the idle task */
		return;
	s = tid_start_of(tid, false);
	if (!s || !s->ts)
		return;
	end_block(s->tgid, tid, s, now);
}

SEC("tracepoint/sched/sched_switch")
int on_switch_tp(void *ctx)
{
	__u64 state = rec_long(ctx, cfg.tp_prev_state_off, cfg.tp_prev_state_size);
	__u64 now = 0;

	/*
	 * The record holds the reported state: S is 0x1 and D 0x2 as in the
	 * task, a preempted task has a bit above 0xff (runnable, not blocked),
	 * and TASK_IDLE, a D in the task (0x402 & 0xff), is reported as 0x80:
	 * counted as D here as the other variants count it.
	 */
	__u32 zero = 0;
	__u64 *last = bpf_map_lookup_elem(&cpu_last_switch, &zero);

	if (state & REPORT_IDLE)
		state = OFFCPU_TASK_UNINTERRUPTIBLE;
	switch_out(ctx, state & 0xff, last ? *last : 0, &now);
	switch_in(ctx, &now);
	if (last) {
		if (!now)
			now = bpf_ktime_get_ns();
		*last = now;
	}
	return 0;
}

/*
 * Kernel threads forked by kthreadd; and with -p, new processes of a
 * profiled one.  The record has tids only: a new thread's tid enters the
 * pid filter too, where it is never looked up as a tgid while it lives, and
 * on_free_tp removes it.
 */
SEC("tracepoint/sched/sched_process_fork")
int on_fork_tp(void *ctx)
{
	__u32 parent = rec_u32(ctx, cfg.tp_parent_pid_off);
	__u32 child = rec_u32(ctx, cfg.tp_child_pid_off);
	__u32 ppid = bpf_get_current_pid_tgid() >> 32;	/* current is the parent */
	__u8 one = 1;

	if (cfg.user_only && parent == KTHREADD_PID &&
	    bpf_map_update_elem(&kthreads, &child, &one, BPF_ANY))
		count(DROP_KTHREADS);
	if (cfg.filter_pid && bpf_map_lookup_elem(&pid_filter, &ppid) &&
	    bpf_map_update_elem(&pid_filter, &child, &one, BPF_ANY))
		count(DROP_FILTER);
	return 0;
}

/*
 * A task is freed after its last switch: forget its tid everywhere.  Its
 * pid could only have been handed out again if the pid space wrapped
 * around within an RCU grace period.
 */
SEC("tracepoint/sched/sched_process_free")
int on_free_tp(void *ctx)
{
	__u32 tid = rec_u32(ctx, cfg.tp_free_pid_off);

	bpf_map_delete_elem(&tid_start, &tid);
	if (cfg.user_only)
		bpf_map_delete_elem(&kthreads, &tid);
	if (cfg.filter_pid)
		bpf_map_delete_elem(&pid_filter, &tid);
	return 0;
}
