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
#include "vmlinux_min.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "offcpu.h"

char LICENSE[] SEC("license") = "GPL";

/* Set by the loader before load (see struct offcpu_config). */
const volatile struct offcpu_config cfg = {
	.thresh_ns = 500000000ull,
	.min_ns = 1,
	.max_ns = ~0ull,
	.state_mask = OFFCPU_TASK_INTERRUPTIBLE | OFFCPU_TASK_UNINTERRUPTIBLE,
	.user_only = 1,
	.want_ustack = 1,
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct offcpu_start);
} task_start SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, struct offcpu_start);
} tid_start SEC(".maps");

/*
 * The loader sizes every map below whose definition names no max_entries
 * (and the stack maps' value_size: max stack depth × 8).  A stack id is a
 * hash bucket, and the kernel keeps the first stack of a
 * bucket: a stack that collides goes to the spill maps below.  User and
 * kernel stacks live apart, which halves the collisions.
 */
struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(key_size, sizeof(__u32));
} stacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(key_size, sizeof(__u32));
} kstacks SEC(".maps");

/* Colliding stacks, keyed by their frames: the kernel compares them in full. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, struct offcpu_spill_key);
	__type(value, __s32);
} ustack_spill SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, struct offcpu_spill_key);
	__type(value, __s32);
} kstack_spill SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct offcpu_spill_scratch);
} spill_scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, struct offcpu_key);
	__type(value, struct offcpu_val);
} sums SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
} events SEC(".maps");

/* Drop counters, then the stack cache's (enum offcpu_drop, offcpu_stat). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, COUNTER_MAX);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

/* Filters: tgids (-p, grown on fork), tids (-t), CPUs (-C). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, __u8);
} pid_filter SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, __u8);
} tid_filter SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, __u8);
} cpu_filter SEC(".maps");

static __always_inline void count(__u32 what)
{
	__u64 *n = bpf_map_lookup_elem(&counters, &what);

	if (n)
		*n += 1;
}

/* The state prev is switched out with, as the kernel's sched_switch computes it. */
static __always_inline __u32 task_state(struct task_struct *t)
{
	if (bpf_core_field_exists(t->__state))
		return BPF_CORE_READ(t, __state);
	return BPF_CORE_READ((struct task_struct___old *)t, state);
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
	__u32 cpu;

	if (cfg.user_only && (flags & OFFCPU_PF_KTHREAD))
		return false;
	/* An exiting thread's last blocks would recreate its hash entry. */
	if (flags & OFFCPU_PF_EXITING)
		return false;
	if (!pid || pid == cfg.self_pid)	/* the idle task, or us */
		return false;
	if (cfg.filter_pid && !bpf_map_lookup_elem(&pid_filter, &pid))
		return false;
	if (cfg.filter_tid && !bpf_map_lookup_elem(&tid_filter, &tid))
		return false;
	if (cfg.filter_cpu) {
		cpu = bpf_get_smp_processor_id();
		if (!bpf_map_lookup_elem(&cpu_filter, &cpu))
			return false;
	}
	return true;
}

static __always_inline struct offcpu_start *
start_of(struct task_struct *t, __u32 tid, bool task_storage, bool create)
{
	static const struct offcpu_start zero;
	struct offcpu_start *s;

	if (task_storage)
		return bpf_task_storage_get(&task_start, t, NULL,
				create ? BPF_LOCAL_STORAGE_GET_F_CREATE : 0);
	s = bpf_map_lookup_elem(&tid_start, &tid);
	if (s || !create)
		return s;
	if (bpf_map_update_elem(&tid_start, &tid, &zero, BPF_NOEXIST) &&
	    !bpf_map_lookup_elem(&tid_start, &tid))
		return NULL;
	return bpf_map_lookup_elem(&tid_start, &tid);
}

/* hash_combine, then splitmix64's finalizer: unequal inputs give unequal keys, in practice. */
static __always_inline __u64 mix(__u64 h, __u64 v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	h ^= h >> 31;
	h *= 0xbf58476d1ce4e5b9ull;
	return h ^ (h >> 29);
}

/*
 * A stack id of the current task: its bucket in STACKS, or, when that
 * bucket holds another stack (-EEXIST) or the map is full (-ENOMEM), its
 * entry in SPILL, keyed by the frames.  Without the spill such a stack would
 * be lost for the whole recording.  Costs a second walk, for those stacks
 * only.  Returns < 0 when neither map can take it.
 */
static __always_inline __s32 stack_id(void *ctx, void *stacks, void *spill,
				      __u64 flags, __u32 stat)
{
	__s32 result = bpf_get_stackid(ctx, stacks, flags), id, *found;
	struct offcpu_spill_scratch *sc;
	__u32 zero = 0, n = cfg.spill_bytes;

	if (result != -17 /* EEXIST */ && result != -12 /* ENOMEM */)
		return result;
	if (!n || n > sizeof(sc->key))
		return result;
	sc = bpf_map_lookup_elem(&spill_scratch, &zero);
	if (!sc || bpf_get_stack(ctx, sc->key.ip, n, flags) <= 0)
		return result;
	found = bpf_map_lookup_elem(spill, &sc->key);
	if (found)
		return *found;
	if (sc->seq >= OFFCPU_SPILL_PER_CPU)
		return result;
	id = OFFCPU_SPILL_ID | bpf_get_smp_processor_id() << OFFCPU_SPILL_CPU_SHIFT | sc->seq;
	if (!bpf_map_update_elem(spill, &sc->key, &id, BPF_NOEXIST)) {
		sc->seq++;
		count(stat);
		return id;
	}
	/* Another CPU stored it first, or the spill map is full. */
	found = bpf_map_lookup_elem(spill, &sc->key);
	return found ? *found : result;
}

static __always_inline void offcpu_frame_rets(__u64 fp, __u64 *r1, __u64 *r2)
{
	__u64 up = 0;

	bpf_probe_read_user(r1, sizeof(*r1), (void *)(fp + 8));
	bpf_probe_read_user(&up, sizeof(up), (void *)fp);
	if (up)
		bpf_probe_read_user(r2, sizeof(*r2), (void *)(up + 8));
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
	OFFCPU_URETS(sp, fp, ret, ret2);
	return mix(mix(mix(mix(mix(mix(ip, sp), fp), lr), ret), ret2), 1) | 1;
}

/* prev's user stack id: the last one if the key says it is the same stack. */
static __always_inline __s32 user_stack(void *ctx, struct task_struct *prev,
					struct offcpu_start *s, bool tp_btf)
{
	__u64 key = 0;
	bool hit;
	__s32 id;

	if (tp_btf && cfg.stack_cache)
		key = user_key(prev);
	hit = key && key == s->ukey && s->ustack >= 0;
	if (hit && !cfg.stack_cache_verify) {
		count(STAT_USTACK_REUSED);
		return s->ustack;
	}
	/* prev is current here, so this is prev's stack. */
	id = stack_id(ctx, &stacks, &ustack_spill, BPF_F_USER_STACK, STAT_USTACK_SPILLED);
	count(STAT_USTACK_WALKED);
	if (hit) {
		count(STAT_USTACK_REUSED);
		if (id >= 0 && id != s->ustack)
			count(STAT_USTACK_WRONG);
	}
	s->ukey = id >= 0 ? key : 0;
	if (id < 0)
		count(DROP_USTACK);
	return id;
}

/* NOW: the time of this switch, read once for both halves (0: not yet). */
static __always_inline void switch_out(void *ctx, struct task_struct *prev,
				       __u32 state, bool task_storage, bool tp_btf,
				       __u64 *now)
{
	struct offcpu_start *s;
	__u64 pid_tgid;
	__u32 pid, tid;

	if (!(state & cfg.state_mask))
		return;
	/* prev is still current at sched_switch: one helper gives both ids. */
	pid_tgid = bpf_get_current_pid_tgid();
	pid = pid_tgid >> 32;
	tid = (__u32)pid_tgid;
	if (!wanted(prev, pid, tid, tp_btf))
		return;
	s = start_of(prev, tid, task_storage, true);
	if (!s) {
		count(DROP_STORAGE);
		return;
	}
	/*
	 * The block starts now, before the stack walks: their time is charged
	 * to the next task, which is on the CPU already (as in perf's
	 * off_cpu.bpf.c).  Read after them, every block came out short by
	 * the walks, a few percent of a 2 ms sleep under QEMU's TCG.
	 */
	*now = bpf_ktime_get_ns();
	s->ustack = cfg.want_ustack ? user_stack(ctx, prev, s, tp_btf) : -1;
	s->kstack = -1;
	if (cfg.want_kstack) {
		s->kstack = stack_id(ctx, &kstacks, &kstack_spill, 0, STAT_KSTACK_SPILLED);
		if (s->kstack < 0)
			count(DROP_KSTACK);
	}
	s->state = state;
	s->ts = *now;
}

static __always_inline void add_sum(__u32 pid, __u32 tid, struct offcpu_start *s,
				    __u64 now, __u64 delta)
{
	struct offcpu_key key = {
		.pid = pid, .tid = tid, .ustack = s->ustack,
		.kstack = s->kstack, .state = s->state,
	};
	struct offcpu_val *v, init = {};

	v = bpf_map_lookup_elem(&sums, &key);
	if (!v) {
		init.total = delta;
		init.count = 1;
		init.last = now;
		init.cpu = bpf_get_smp_processor_id();
		if (!bpf_map_update_elem(&sums, &key, &init, BPF_NOEXIST))
			return;
		/* Lost a race with another CPU, or the map is full. */
		v = bpf_map_lookup_elem(&sums, &key);
		if (!v) {
			count(DROP_SUMS);
			return;
		}
	}
	__sync_fetch_and_add(&v->total, delta);
	__sync_fetch_and_add(&v->count, 1);
	v->last = now;
	v->cpu = bpf_get_smp_processor_id();
}

static __always_inline void send_event(__u32 pid, __u32 tid,
				       struct offcpu_start *s, __u64 now,
				       __u64 delta)
{
	struct offcpu_event *e;

	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		/* User space is behind: keep the time, if not its own timestamp. */
		count(DROP_RINGBUF);
		add_sum(pid, tid, s, now, delta);
		return;
	}
	e->time = now;
	e->delta = delta;
	e->pid = pid;
	e->tid = tid;
	e->cpu = bpf_get_smp_processor_id();
	e->state = s->state;
	e->ustack = s->ustack;
	e->kstack = s->kstack;
	bpf_ringbuf_submit(e, 0);
}

static __always_inline void switch_in(struct task_struct *next, bool task_storage,
				      bool tp_btf, __u64 *now)
{
	struct offcpu_start *s;
	__u32 pid, tid;
	__u64 delta;

	/* Kernel threads and the idle task never have a start: skip the lookup. */
	if (cfg.user_only && (TASK_READ(tp_btf, next, flags) & OFFCPU_PF_KTHREAD))
		return;
	tid = TASK_READ(tp_btf, next, pid);
	s = start_of(next, tid, task_storage, false);
	if (!s || !s->ts)
		return;
	if (!*now)
		*now = bpf_ktime_get_ns();
	delta = *now - s->ts;
	s->ts = 0;
	if (delta < cfg.min_ns || delta > cfg.max_ns)
		return;
	pid = TASK_READ(tp_btf, next, tgid);
	if (delta >= cfg.thresh_ns)
		send_event(pid, tid, s, *now, delta);
	else
		add_sum(pid, tid, s, *now, delta);
}

static __always_inline int on_switch(unsigned long long *ctx, bool task_storage,
				     bool tp_btf)
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
	switch_out(ctx, prev, state & 0xff, task_storage, tp_btf, &now);
	switch_in(next, task_storage, tp_btf, &now);
	return 0;
}

SEC("tp_btf/sched_switch")
int on_switch_task(unsigned long long *ctx)
{
	return on_switch(ctx, true, true);
}

SEC("tp_btf/sched_switch")
int on_switch_hash(unsigned long long *ctx)
{
	return on_switch(ctx, false, true);
}

SEC("raw_tp/sched_switch")
int on_switch_raw(unsigned long long *ctx)
{
	return on_switch(ctx, false, false);
}

/* -p: children forked later are profiled too. */
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
	return 0;
}

/* Hash variants: forget exiting threads so tid_start cannot fill up. */
SEC("raw_tp/sched_process_exit")
int on_exit(unsigned long long *ctx)
{
	struct task_struct *t = (struct task_struct *)ctx[0];
	__u32 tid = BPF_CORE_READ(t, pid);

	bpf_map_delete_elem(&tid_start, &tid);
	return 0;
}
