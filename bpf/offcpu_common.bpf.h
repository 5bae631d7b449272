/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What both BPF objects share: the configuration user space sets, the maps
 * it reads (same names and layouts in both objects), and the steps of a
 * block that need no kernel type: filters, stack walks, sums, ring buffer.
 * Included once by offcpu.bpf.c (CO-RE) and once by offcpu_tp.bpf.c (no
 * BTF): nothing here may read a kernel structure, so the BTF-free object
 * carries no CO-RE relocation.
 */
#ifndef OFFCPU_COMMON_BPF_H
#define OFFCPU_COMMON_BPF_H

#include "vmlinux_min.h"
#include <bpf/bpf_helpers.h>
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
	__uint(max_entries, 2);	/* user, kernel: each always filled to its own length */
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

/* The current task's tgid (PID) and thread id (TID): one helper call gives both. */
static __always_inline void current_ids(__u32 *pid, __u32 *tid)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();

	*pid = pid_tgid >> 32;
	*tid = (__u32)pid_tgid;
}

/*
 * Filters that need no task field: offcpu itself, the idle task, -p, -t, -C.
 * PID is the tgid, TID the thread.
 */
static __always_inline bool filters_pass(__u32 pid, __u32 tid)
{
	__u32 cpu;

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

/* The start state of TID in the hash, created at switch-out. */
static __always_inline struct offcpu_start *tid_start_of(__u32 tid, bool create)
{
	static const struct offcpu_start zero;
	struct offcpu_start *s;

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
 * The id of the stack in scratch SC's key in SPILL: its entry, or a new one
 * (counted in STAT).  < 0 when the map or this CPU's ids are full.
 */
static __always_inline __s32 spill_store(void *spill, struct offcpu_spill_scratch *sc, __u32 stat)
{
	__s32 id, *found;

	found = bpf_map_lookup_elem(spill, &sc->key);
	if (found)
		return *found;
	if (sc->seq >= OFFCPU_SPILL_PER_CPU)
		return -17 /* EEXIST */;
	id = OFFCPU_SPILL_ID | bpf_get_smp_processor_id() << OFFCPU_SPILL_CPU_SHIFT | sc->seq;
	if (!bpf_map_update_elem(spill, &sc->key, &id, BPF_NOEXIST)) {
		sc->seq++;
		count(stat);
		return id;
	}
	/* Another CPU stored it first, or the spill map is full. */
	found = bpf_map_lookup_elem(spill, &sc->key);
	return found ? *found : -17;
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
	__s32 result = -17 /* EEXIST */;
	struct offcpu_spill_scratch *sc;
	/* A key's frames past its stack are zero only if its scratch always gets the same length. */
	__u32 kernel = !(flags & BPF_F_USER_STACK), n = kernel ? cfg.kspill_bytes : cfg.spill_bytes;

	/* With a spill map, stacks go nowhere else (see loader.c, SPILL_MIN). */
	if (!n)
		return bpf_get_stackid(ctx, stacks, flags);
	if (n > sizeof(sc->key))
		return result;
	sc = bpf_map_lookup_elem(&spill_scratch, &kernel);
	if (!sc || bpf_get_stack(ctx, sc->key.ip, n, flags) <= 0)
		return result;
	return spill_store(spill, sc, stat);
}

/*
 * The current task's user stack id.  KEY hashes its user registers (0: no
 * key, always walk); when it equals the last block's, the last id is reused
 * (see user_key in offcpu.bpf.c).
 */
static __always_inline __s32 user_stack_id(void *ctx, struct offcpu_start *s, __u64 key)
{
	bool hit = key && key == s->ukey && s->ustack >= 0;
	__s32 id;

	if (hit && !cfg.stack_cache_verify) {
		count(STAT_USTACK_REUSED);
		return s->ustack;
	}
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

/*
 * Switch-out, after the user stack: the kernel stack, the state, and the
 * start time, read into NOW for both halves of the switch.  The block
 * starts after the stack walks: until then the thread runs them (perf's
 * task clock, which the workloads' truth reads, stops after this
 * tracepoint), and a profiler's own work is not its target's off-CPU
 * time.  Read before them (as perf's off_cpu.bpf.c does), a block held
 * its walks (0.2-0.4 ms a block in riscv64 guests under TCG), and the
 * next thread's block lost them.
 */
static __always_inline void start_block_rest(void *ctx, struct offcpu_start *s, __u32 pid,
					     __u32 state, __u64 *now)
{
	s->kstack = -1;
	if (cfg.want_kstack) {
		s->kstack = stack_id(ctx, &kstacks, &kstack_spill, 0, STAT_KSTACK_SPILLED);
		if (s->kstack < 0)
			count(DROP_KSTACK);
	}
	s->state = state;
	s->tgid = pid;
	s->ts = *now = bpf_ktime_get_ns();
}

/*
 * Switch-out of the current task (thread PID/TID, STATE wanted): its stacks
 * and the time.  UKEY as for user_stack_id.  NOW: the time of this switch,
 * read once for both halves.
 */
static __always_inline void start_block(void *ctx, struct offcpu_start *s, __u32 pid,
					__u32 state, __u64 ukey, __u64 *now)
{
	s->ustack = cfg.want_ustack ? user_stack_id(ctx, s, ukey) : -1;
	start_block_rest(ctx, s, pid, state, now);
}

/* Adds one block of DELTA ns ending at NOW to KEY's sum in the sums map MAP. */
static __always_inline void sum_into(void *map, const void *key, __u64 now, __u64 delta)
{
	struct offcpu_val *v, init = {};

	v = bpf_map_lookup_elem(map, key);
	if (!v) {
		init.total = delta;
		init.count = 1;
		init.last = now;
		init.cpu = bpf_get_smp_processor_id();
		if (!bpf_map_update_elem(map, key, &init, BPF_NOEXIST))
			return;
		/* Lost a race with another CPU, or the map is full. */
		v = bpf_map_lookup_elem(map, key);
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

/* The sums key of PID/TID's block with start S (its stacks and state). */
static __always_inline struct offcpu_key block_key(__u32 pid, __u32 tid,
						   const struct offcpu_start *s)
{
	return (struct offcpu_key){
		.pid = pid, .tid = tid, .ustack = s->ustack,
		.kstack = s->kstack, .state = s->state,
	};
}

static __always_inline void add_sum(__u32 pid, __u32 tid, struct offcpu_start *s,
				    __u64 now, __u64 delta)
{
	struct offcpu_key key = block_key(pid, tid, s);

	sum_into(&sums, &key, now, delta);
}

/* A long block of DELTA ns ending at NOW, as the ring buffer carries it. */
static __always_inline void fill_event(struct offcpu_event *e, __u32 pid, __u32 tid,
				       const struct offcpu_start *s, __u64 now, __u64 delta)
{
	e->time = now;
	e->delta = delta;
	e->pid = pid;
	e->tid = tid;
	e->cpu = bpf_get_smp_processor_id();
	e->state = s->state;
	e->ustack = s->ustack;
	e->kstack = s->kstack;
}

/*
 * The block with start S ends at *NOW (read here if 0): S no longer holds
 * one; its length in *DELTA.  False when --min/--max leave it out.
 */
static __always_inline bool block_ends(struct offcpu_start *s, __u64 *now, __u64 *delta)
{
	if (!*now)
		*now = bpf_ktime_get_ns();
	*delta = *now - s->ts;
	s->ts = 0;
	return *delta >= cfg.min_ns && *delta <= cfg.max_ns;
}

/*
 * A block of DELTA summed because the ring was full: one long enough to
 * trigger the flight recorder is counted (user space finds it in the sums
 * only when it is alone under its key).
 */
static __always_inline void count_trigger_summed(__u64 delta)
{
	if (cfg.trigger_ns && delta >= cfg.trigger_ns)
		count(STAT_TRIGGER_SUMMED);
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
		count_trigger_summed(delta);
		add_sum(pid, tid, s, now, delta);
		return;
	}
	fill_event(e, pid, tid, s, now, delta);
	bpf_ringbuf_submit(e, 0);
}

/* Switch-in of thread PID/TID that blocked with start S: count the block once. */
static __always_inline void end_block(__u32 pid, __u32 tid, struct offcpu_start *s, __u64 *now)
{
	__u64 delta;

	if (!block_ends(s, now, &delta))
		return;
	if (delta >= cfg.thresh_ns)
		send_event(pid, tid, s, *now, delta);
	else
		add_sum(pid, tid, s, *now, delta);
}

#endif
