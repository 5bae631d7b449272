/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --unwind-in kernel: the thread's user stack walked here with the CFI rows
 * user space loaded (the design: bpf/offcpu.h, "--unwind-in kernel").  Per
 * frame: the mapping of its pc (binary search in the process's entry), the
 * row of its file address (binary search in the file's run of rows), then
 * the CFA, return address and frame pointer read with bpf_probe_read_user,
 * as cfi_step() does in user space.  Two walkers of the same frame step
 * (kwalk_frame), chosen at load time (plan.c): with bpf_loop (5.17+) the
 * step is its callback, which the verifier checks once whatever the frame
 * count; without it a chain of tail calls (KU_TAIL_FRAMES frames per call,
 * as the OpenTelemetry eBPF profiler walks), and where that cannot load a
 * bounded loop (5.3+), all inlined, which the verifier checks frame by
 * frame (0.5 to 1 s of start-up).  Any miss returns < 0 (counted) and the
 * caller copies the stack as before.
 */
#ifndef OFFCPU_UNWIND_BPF_H
#define OFFCPU_UNWIND_BPF_H

#include "offcpu_common.bpf.h"
#include <bpf/bpf_core_read.h>

#ifndef KU_FRAMES
#define KU_FRAMES OFFCPU_SPILL_FRAMES
#endif

/*
 * Which walker a sched_switch program has: bpf_loop's callback, a program
 * of its own (a constant per program), else the bounded loop or, where
 * cfg.kwalk_tail says so, tail-called steps (one program: the verifier
 * drops the walker not chosen as dead code, and the binary has no third
 * copy of the sched_switch programs).  Not plan.h's KWALK_* (the walker
 * chosen): which code a program carries, so a name of its own.
 */
#define PROG_WALK_INLINE	0
#define PROG_WALK_CALLBACK	1

static __always_inline bool kwalk_is_tail(int walker)
{
	return walker != PROG_WALK_CALLBACK && cfg.kwalk_tail;
}

/*
 * Frames per tail-called step: the verifier checks these frame by frame.
 * A chain is at most 32 tail calls (MAX_TAIL_CALL_CNT before 5.17, 33
 * since): one to the first step, one back to the sched_switch program, the
 * rest steps.  Fewer frames per step verify faster and cost a tail call
 * more per KU_TAIL_FRAMES frames walked.
 */
#define KU_TAIL_FRAMES	3
_Static_assert(KU_TAIL_FRAMES * (32 - 2) >= KU_FRAMES, "a walk needs more tail calls than allowed");

/*
 * Sized by the loader (1 entry each without --unwind-in kernel).  Rows are
 * written by user space in place: BPF_F_MMAPABLE (5.5+).
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, 1u << 10 /* BPF_F_MMAPABLE */);
	__type(key, __u32);
	__type(value, struct offcpu_krow);
} ku_rows SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct offcpu_kfile);
} ku_files SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, struct offcpu_kproc);
} ku_procs SEC(".maps");

/*
 * V through memory the verifier does not track (SC's pad): an index into a
 * map value must be bounded, and the verifier would otherwise mark every
 * value it came from as precise, keep each search path apart and give up
 * (a million instructions) long before the last frame.
 */
static __always_inline __u32 untracked(struct offcpu_spill_scratch *sc, __u32 v)
{
	*(volatile __u32 *)&sc->pad = v;
	return *(volatile __u32 *)&sc->pad;
}

/*
 * Requests: a walk that missed for want of rows or mappings names its
 * process here (pid -> mm), whatever room the ring has; user space polls
 * the map, loads what the process needs and deletes the request.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, struct offcpu_kwant);
} ku_want SEC(".maps");

/*
 * The stack cache entry a walk builds (per CPU): the registers it used and
 * every stack word it read, as user space writes one after unwinding a
 * copy (struct offcpu_ucache); offcpu.bpf.c stores it under the thread.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct offcpu_ucache);
} ku_cache SEC(".maps");

/* In ku_cache's flags while walking: a frame restored the frame pointer from the stack. */
#define KU_FP_RESTORED	0x100

/* The stack word VAL at ADDR was read: the cache entry's key gets it (n past the end: not cacheable). */
static __always_inline void kread_note(struct offcpu_spill_scratch *sc, struct offcpu_ucache *uc,
				       __u64 addr, __u64 val)
{
	__u32 i = untracked(sc, uc->n);

	if (i < OFFCPU_UCACHE_WORDS) {
		uc->addr[i] = addr;
		uc->val[i] = val;
	}
	uc->n = i + 1;
}

/*
 * The user word at ADDR into *VAL, noted for the cache key: OFFCPU_UWORD
 * wide (4 bytes on armhf, where 8 would take the next word as the upper
 * half), as ucache_hit reads it back.  0, or < 0 where unreadable.
 */
static __always_inline int kread_word(struct offcpu_spill_scratch *sc, struct offcpu_ucache *uc,
				      __u64 addr, __u64 *val)
{
	OFFCPU_UWORD w = 0;

	if (bpf_probe_read_user(&w, sizeof(w), (void *)addr))
		return -1;
	*val = w;
	kread_note(sc, uc, addr, w);
	return 0;
}

/*
 * Bit 0 of a 32-bit ARM return address (and of lr) says Thumb state, not
 * an address: cleared before lookup and in the key, as unwind_frames().
 */
#if defined(__TARGET_ARCH_arm)
#define KU_PC_MASK	(~1ull)
#else
#define KU_PC_MASK	(~0ull)
#endif

/* The mapping of P holding PC, or NULL. */
static __always_inline const struct offcpu_kmap *kmap_of(struct offcpu_spill_scratch *sc,
							 const struct offcpu_kproc *p, __u64 pc)
{
	__u32 lo = 0, hi = p->n, mid;

	if (hi > OFFCPU_KMAPS)
		return NULL;
	/* The first mapping starting above pc: its predecessor may hold it. */
	for (int i = 0; i < OFFCPU_KMAP_SEARCH + 1 && lo < hi; i++) {
		mid = untracked(sc, (lo + hi) / 2) & (OFFCPU_KMAPS - 1);
		if (p->maps[mid].start <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	mid = untracked(sc, lo - 1);
	if (!lo || mid >= OFFCPU_KMAPS || pc >= p->maps[mid].end)
		return NULL;
	return &p->maps[mid];
}

/* The row of file F (id ID) covering file address VADDR, or NULL. */
static __always_inline const struct offcpu_krow *krow_of(struct offcpu_spill_scratch *sc,
							 const struct offcpu_kfile *f, __u32 id,
							 __u64 vaddr)
{
	const struct offcpu_krow *r;
	__u32 lo = 0, hi = f->n, mid, idx;

	if (vaddr >> 32 || hi > (1u << OFFCPU_KROW_SEARCH))
		return NULL;
	for (int i = 0; i < OFFCPU_KROW_SEARCH + 1 && lo < hi; i++) {
		mid = untracked(sc, (lo + hi) / 2);
		idx = f->first + mid;
		r = bpf_map_lookup_elem(&ku_rows, &idx);
		if (!r)
			return NULL;
		if (r->pc <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	idx = f->first + lo - 1;
	r = bpf_map_lookup_elem(&ku_rows, &idx);
	/* A run given to another file since the slot was read. */
	if (!r || r->tag != (__u16)id)
		return NULL;
	return r;
}

/*
 * The caller's stack pointer from the CFA, as cfi.c's sp_of_cfa(): s390x's
 * CFA is the caller's sp plus the 160-byte register save area it keeps for
 * its callees (the CFA is r15 + 160 at a function's entry).
 */
#if defined(__TARGET_ARCH_s390)
#define KU_SP_OF_CFA	(-160)
#else
#define KU_SP_OF_CFA	0
#endif

/* The user registers of one frame while walking. */
struct kframe {
	__u64 pc, sp, fp;
};

/*
 * One step from frame F (pc looked up at LOOKUP) to its caller, as
 * cfi_step(): 1 stepped, 0 the outermost frame, < 0 a miss (its counter).
 */
static __always_inline int kstep(struct offcpu_spill_scratch *sc, const struct offcpu_kproc *p,
				 struct kframe *f, __u64 lookup, __u64 lr, bool innermost,
				 struct offcpu_kwant *want, struct offcpu_ucache *uc)
{
	const struct offcpu_kmap *m = kmap_of(sc, p, lookup);
	const struct offcpu_kfile *file;
	const struct offcpu_krow *r;
	__u64 cfa, sp, ra, fp = f->fp;
	__u32 slot;

	if (!m)
		return -STAT_KUNWIND_NO_MAP;
	slot = m->slot;
	file = bpf_map_lookup_elem(&ku_files, &slot);
	if (!file || !file->id || file->id != m->id)
		return -STAT_KUNWIND_NO_ROWS;
	r = krow_of(sc, file, m->id, lookup - m->bias);
	if (!r) {
		want->slot = slot;
		want->id = m->id;
		want->addr = lookup - m->bias;
		return -STAT_KUNWIND_NO_ROWS;
	}
	if (r->kind == OFFCPU_KROW_END)
		return 0;
	if (r->kind == OFFCPU_KROW_GAP) {
		/* thumb_fp_step's first test, on the frame pointer register's value. */
		if (!(uc->flags & KU_FP_RESTORED))
			uc->flags |= OFFCPU_UCACHE_FP;
		if (!fp || (fp & 3) || fp < f->sp)
			return 0;
		return -STAT_KUNWIND_MISS_ROW;
	}
	if (r->kind != OFFCPU_KROW_NORMAL)
		return -STAT_KUNWIND_MISS_ROW;
	/*
	 * The frame pointer register matters while no frame has restored it
	 * (a flag kept in the map value: on the stack the verifier would
	 * explore each frame twice over).
	 */
	if (r->cfa_base == OFFCPU_KROW_FP && !(uc->flags & KU_FP_RESTORED))
		uc->flags |= OFFCPU_UCACHE_FP;
	cfa = (r->cfa_base == OFFCPU_KROW_SP ? f->sp : f->fp) + (__s64)r->cfa_off;
	if (r->ra_rule == OFFCPU_KROW_AT_CFA) {
		if (kread_word(sc, uc, cfa + (__s64)r->ra_off, &ra))
			return -STAT_KUNWIND_UNREADABLE;
	} else if (innermost) {
		ra = lr;	/* only the innermost frame's link register is live */
		uc->flags |= OFFCPU_UCACHE_LR;
	} else {
		return -STAT_KUNWIND_MISS_ROW;
	}
	if (r->fp_rule == OFFCPU_KROW_AT_CFA) {
		/* Every word read is in the key: more than needed costs hits, never a wrong reuse. */
		if (kread_word(sc, uc, cfa + (__s64)r->fp_off, &fp))
			return -STAT_KUNWIND_UNREADABLE;
		uc->flags |= KU_FP_RESTORED;
	}
	if (!ra)
		return 0;
	/*
	 * Callers' frames lie above (a leaf may share its caller's sp: arm64's,
	 * and s390x's every frameless one).
	 */
	sp = cfa + KU_SP_OF_CFA;
	if (sp < f->sp || (sp == f->sp && !innermost))
		return -STAT_KUNWIND_BAD;
	f->pc = ra & KU_PC_MASK;
	f->sp = sp;
	f->fp = fp;
	return 1;
}

/* What a walk changes as it goes. */
struct kwalk_vars {
	struct kframe f;
	__u32 n;	/* frames in the key so far */
	int ret;	/* once done: the frames, or < 0 (never 0) */
	/* The tail-call walker's: its state, next frame, the walk's inputs. */
	__u32 state;	/* KT_* */
	__u32 i, pid, max;
	__u64 mm, ip, sp, fp, lr;
	struct offcpu_kwant want;
};

/*
 * The tail-call walker's states.  The sched_switch program starts a walk
 * (PENDING) and tail-calls the steps, the last of which marks it DONE and
 * tail-calls the sched_switch program again; that program, run from the
 * top, finds the switch-out's work before the walk already done (the block
 * ended, its start created) and the walk's result READY.  A result not
 * taken in that run is dropped at the next (IDLE): it cannot name a later
 * switch's stack.
 */
enum { KT_IDLE, KT_PENDING, KT_DONE, KT_READY };

/*
 * The bpf_loop and tail-call walkers' vars (per CPU).  A map value's
 * contents are not part of the verifier's state: on the caller's stack each
 * new value (a frame count, a miss's counter) would be a state the loop has
 * not seen, and a 6.8+ verifier would check the callback again for it, up
 * to the 64 iterations, where here the second pass matches the first.  The
 * tail-call walker keeps here all a step needs, since a tail call passes
 * only the context on.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct kwalk_vars);
} ku_walk SEC(".maps");

/* One walk, so a bpf_loop callback can reach it. */
struct kwalk {
	struct offcpu_spill_scratch *sc;
	const struct offcpu_kproc *p;
	struct offcpu_kwant *want;
	struct offcpu_ucache *uc;
	struct kwalk_vars *v;	/* on the stack (bounded loop: registers) or ku_walk */
	__u64 lr;
	__u32 max;
};

/* Frame I of walk K to its caller: 1 to go on, 0 done (K->v->ret set). */
static __always_inline int kwalk_frame(struct kwalk *k, __u32 i)
{
	struct kwalk_vars *v = k->v;
	/* A return address points past its call: look up the call. */
	int r = kstep(k->sc, k->p, &v->f, v->f.pc - (i > 0), k->lr, i == 0, k->want, k->uc);

	if (r <= 0) {
		v->ret = r < 0 ? r : (int)v->n;
		return 0;
	}
	if (v->n >= k->max) {
		v->ret = v->n;	/* the depth limit, as the user-space unwinder cuts */
		return 0;
	}
	k->sc->key.ip[untracked(k->sc, v->n) & (OFFCPU_SPILL_FRAMES - 1)] = v->f.pc;
	v->n++;
	return 1;
}

/* bpf_loop's callback: verified once, not once per frame; 1 stops the loop. */
static long kwalk_step(__u32 i, void *ctx)
{
	return kwalk_frame(ctx, i) ? 0 : 1;
}

/*
 * The tail-call walker's programs: the step (offcpu.bpf.c's kwalk_step_*)
 * and the sched_switch program it returns to, filled in by the loader.
 */
struct {
	__uint(type, 3 /* BPF_MAP_TYPE_PROG_ARRAY */);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u32);
} ku_tail SEC(".maps");

#define KU_TAIL_STEP	0
#define KU_TAIL_SWITCH	1

/* A walk that could not run (a tail call failed): copied, counted nowhere. */
#define KU_UNWALKED	(-0x7fff)

static __always_inline struct kwalk_vars *kwalk_vars(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&ku_walk, &zero);
}

/* At the top of a sched_switch program with the tail-call walker: see KT_*. */
static __always_inline void kwalk_tail_enter(void)
{
	struct kwalk_vars *v = kwalk_vars();

	if (v)
		v->state = v->state == KT_DONE ? KT_READY : KT_IDLE;
}

/*
 * The tail-call walker, in the sched_switch program: the result of the walk
 * the steps just made for these registers, else a new walk started (the
 * program runs again from the top when it is done).
 */
static __always_inline int kwalk_tail(void *ctx, struct offcpu_spill_scratch *sc, __u32 pid,
				      __u64 mm, __u64 ip, __u64 sp, __u64 fp, __u64 lr, __u32 max,
				      struct offcpu_kwant *want, struct offcpu_ucache *uc)
{
	struct kwalk_vars *v = kwalk_vars();
	const struct offcpu_kproc *p;

	if (!v)
		return KU_UNWALKED;	/* cannot happen: one entry per CPU */
	if (v->state == KT_READY) {
		v->state = KT_IDLE;
		if (v->pid == pid && v->mm == mm && v->ip == ip && v->sp == sp && v->fp == fp &&
		    v->lr == lr) {
			*want = v->want;
			return v->ret;
		}
	}
	/* Not loaded: no tail call for a walk that would miss at once. */
	p = bpf_map_lookup_elem(&ku_procs, &pid);
	if (!p || p->mm != mm)
		return -STAT_KUNWIND_NO_PROC;
	uc->n = 0;
	uc->flags = 0;
	sc->key.ip[0] = ip;
	*v = (struct kwalk_vars){ .f = { .pc = ip, .sp = sp, .fp = fp }, .n = 1,
				  .state = KT_PENDING, .pid = pid, .max = max, .mm = mm, .ip = ip,
				  .sp = sp, .fp = fp, .lr = lr, .want = *want };
	bpf_tail_call(ctx, &ku_tail, KU_TAIL_STEP);
	v->state = KT_IDLE;
	return KU_UNWALKED;
}

/*
 * A tail-called step: KU_TAIL_FRAMES frames of the walk kwalk_tail started,
 * then the next step, or the sched_switch program again once it is done.
 * The verifier checks these few frames once, not the whole walk.
 */
static __always_inline int kwalk_tail_step(void *ctx)
{
	struct kwalk_vars *v = kwalk_vars();
	__u32 zero = 0;
	struct kwalk k = { .v = v };

	k.sc = bpf_map_lookup_elem(&spill_scratch, &zero);
	k.uc = bpf_map_lookup_elem(&ku_cache, &zero);
	if (!v || !k.sc || !k.uc || v->state != KT_PENDING)
		return 0;
	k.want = &v->want;
	k.lr = v->lr;
	k.max = v->max;
	k.p = bpf_map_lookup_elem(&ku_procs, &v->pid);
	if (!k.p || k.p->mm != v->mm) {
		v->ret = -STAT_KUNWIND_NO_PROC;	/* the process exited meanwhile */
		goto done;
	}
	for (int j = 0; j < KU_TAIL_FRAMES; j++) {
		__u32 i = v->i;

		if (!kwalk_frame(&k, i))
			goto done;
		v->i = i + 1;
		if (i + 1 >= KU_FRAMES) {
			v->ret = v->n;	/* the bounded loop's end */
			goto done;
		}
	}
	bpf_tail_call(ctx, &ku_tail, KU_TAIL_STEP);
	v->ret = KU_UNWALKED;
done:
	v->state = KT_DONE;
	bpf_tail_call(ctx, &ku_tail, KU_TAIL_SWITCH);
	/* The switch is lost (the loader fills both slots before attaching): said, not silent. */
	count(DROP_SWITCH);
	v->state = KT_IDLE;
	return 0;
}

/*
 * The frames of thread PID (address space MM, user registers IP SP FP LR)
 * into SC's key (at most MAX): the innermost pc, then the return addresses.
 * WALKER: KWALK_* (a constant: each program has one walker; the tail-call
 * walker is kwalk_tail).  Returns how many, or < 0 (minus the counter of
 * the miss).
 */
static __always_inline int kwalk(struct offcpu_spill_scratch *sc, __u32 pid, __u64 mm, __u64 ip,
				 __u64 sp, __u64 fp, __u64 lr, __u32 max, struct offcpu_kwant *want,
				 struct offcpu_ucache *uc, int walker)
{
	struct kwalk_vars vars = { .f = { .pc = ip, .sp = sp, .fp = fp }, .n = 1 };
	struct kwalk k = { .sc = sc, .want = want, .uc = uc, .v = &vars, .lr = lr, .max = max };

	k.p = bpf_map_lookup_elem(&ku_procs, &pid);
	if (!k.p || k.p->mm != mm)
		return -STAT_KUNWIND_NO_PROC;
	uc->n = 0;
	uc->flags = 0;
	sc->key.ip[0] = ip;
	if (walker == PROG_WALK_CALLBACK) {
		k.v = kwalk_vars();
		if (!k.v)
			return -STAT_KUNWIND_NO_PROC;	/* cannot happen: one entry per CPU */
		*k.v = vars;
		bpf_loop(KU_FRAMES, kwalk_step, &k, 0);
		return k.v->ret ? k.v->ret : (int)k.v->n;
	}
	for (int i = 0; i < KU_FRAMES; i++)
		if (!kwalk_frame(&k, i))
			return vars.ret;
	return vars.n;
}

/*
 * The stack id of the current thread's user stack walked here: a spill id
 * (its frames are the key), or < 0 after counting why it was not (the
 * caller copies the stack instead).  *CACHE: the stack cache entry for it,
 * or NULL where it cannot have one.  WALKER: KWALK_*; CTX: the program's,
 * for the tail-call walker's tail calls.
 */
static __always_inline __s32 kunwind_stack_id(void *ctx, __u32 pid, __u64 mm, __u64 ip,
					      __u64 sp, __u64 fp, __u64 lr,
					      struct offcpu_ucache **cache, int walker)
{
	struct offcpu_ucache *uc;
	__u32 zero = 0, max = cfg.spill_bytes / sizeof(__u64);
	struct offcpu_spill_scratch *sc;
	struct offcpu_kwant want = { .mm = mm };
	__s32 id;
	int n;

	if (!max || max > OFFCPU_SPILL_FRAMES)
		return -1;
	sc = bpf_map_lookup_elem(&spill_scratch, &zero);
	uc = bpf_map_lookup_elem(&ku_cache, &zero);
	if (!sc || !uc)
		return -1;
	if (kwalk_is_tail(walker))
		n = kwalk_tail(ctx, sc, pid, mm, ip, sp, fp, lr, max, &want, uc);
	else
		n = kwalk(sc, pid, mm, ip, sp, fp, lr, max, &want, uc, walker);
	if (n == KU_UNWALKED)
		return -1;
	if (n < 0) {
		count(-n);
		if (n == -STAT_KUNWIND_NO_PROC || n == -STAT_KUNWIND_NO_MAP ||
		    n == -STAT_KUNWIND_NO_ROWS)
			bpf_map_update_elem(&ku_want, &pid, &want, BPF_NOEXIST);
		return -1;
	}
	/* The key's frames past the stack are zero, as bpf_get_stack leaves them. */
	for (int i = 0; i < OFFCPU_SPILL_FRAMES; i++)
		if (i >= n && i < (int)max)
			sc->key.ip[i] = 0;
	id = spill_store(&ustack_spill, sc, STAT_USTACK_SPILLED);
	if (id < 0) {
		count(STAT_KUNWIND_NO_ID);
		return -1;
	}
	count(STAT_KUNWIND_OK);
	count(STAT_USTACK_WALKED);
	/* The cache entry for this stack, when its key holds every word read. */
	if (uc->n <= OFFCPU_UCACHE_WORDS) {
		uc->pc = ip;
		uc->sp = sp;
		uc->fp = fp;
		uc->lr = lr;
		uc->pid = pid;
		uc->id = id;
		uc->flags &= ~KU_FP_RESTORED;
		*cache = uc;
	}
	return id;
}

/*
 * A process forked from one whose entry is loaded maps what its parent
 * maps until it execs (another mm: the copy no longer matches) or maps
 * something new (a pc in no mapping: the walk misses and asks for its own
 * entry): it gets the parent's entry under its own mm, so its first blocks
 * are walked rather than copied (perf bench sched messaging's 160
 * processes, a server's workers).  Runs before the child does.
 */
static __always_inline void kunwind_fork(struct task_struct *parent, struct task_struct *child)
{
	__u32 ppid = BPF_CORE_READ(parent, tgid), pid = BPF_CORE_READ(child, tgid);
	__u64 mm = (__u64)BPF_CORE_READ(child, mm);
	struct offcpu_kproc *p;

	if (!cfg.kunwind || pid == ppid || !mm)
		return;
	p = bpf_map_lookup_elem(&ku_procs, &ppid);
	if (!p || p->mm != (__u64)BPF_CORE_READ(parent, mm)) {
		/*
		 * A parent forking before its own first block (perf bench
		 * sched messaging forks its 400 processes at once): asked for
		 * now, so the children it forks once it is loaded inherit.
		 */
		struct offcpu_kwant want = { .mm = (__u64)BPF_CORE_READ(parent, mm) };

		/* Only a process recorded (-p, -- cmd: its pid filter; -t: none forked). */
		if (want.mm && ppid != cfg.self_pid && !cfg.filter_tid &&
		    (!cfg.filter_pid || bpf_map_lookup_elem(&pid_filter, &ppid)))
			bpf_map_update_elem(&ku_want, &ppid, &want, BPF_NOEXIST);
		return;
	}
	/* ku_procs full: the child asks for its own at its first block. */
	if (bpf_map_update_elem(&ku_procs, &pid, p, BPF_ANY))
		return;
	p = bpf_map_lookup_elem(&ku_procs, &pid);
	if (!p)
		return;
	/* Until now the copy names the parent's mm: no thread of pid walks with it. */
	p->mm = mm;
	count(STAT_KUNWIND_FORKED);
}

/* The process's entry leaves with its leader (a lone leader's exit costs one reload). */
SEC("raw_tp/sched_process_exit")
int on_exit_ku(unsigned long long *ctx)
{
	struct task_struct *t = (struct task_struct *)ctx[0];
	__u32 tgid = BPF_CORE_READ(t, tgid);

	if ((__u32)BPF_CORE_READ(t, pid) == tgid)
		bpf_map_delete_elem(&ku_procs, &tgid);
	return 0;
}

#endif
