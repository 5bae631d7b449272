/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The few kernel types the BPF program touches, declared for CO-RE.
 *
 * Hand-written instead of a bpftool-dumped vmlinux.h: these declarations are
 * architecture-neutral but for the user registers below, so one header serves
 * every board, and CO-RE relocations fix offsets against the running kernel's
 * BTF (or the embedded minimal BTF) at load time.
 */
#ifndef OFFCPU_VMLINUX_MIN_H
#define OFFCPU_VMLINUX_MIN_H

typedef signed char __s8;
typedef unsigned char __u8;
typedef short __s16;
typedef unsigned short __u16;
typedef int __s32;
typedef unsigned int __u32;
typedef long long __s64;
typedef unsigned long long __u64;
typedef __u8 u8;
typedef __u16 u16;
typedef __u32 u32;
typedef __u64 u64;
typedef __s32 s32;
typedef __s64 s64;
typedef _Bool bool;
typedef int pid_t;
typedef __u16 __be16;
typedef __u32 __be32;
typedef __u32 __wsum;

enum {
	false = 0,
	true = 1,
};

enum bpf_map_type {
	BPF_MAP_TYPE_HASH = 1,
	BPF_MAP_TYPE_ARRAY = 2,
	BPF_MAP_TYPE_PERCPU_ARRAY = 6,
	BPF_MAP_TYPE_STACK_TRACE = 7,
	BPF_MAP_TYPE_TASK_STORAGE = 29,
	BPF_MAP_TYPE_RINGBUF = 27,
};

enum {
	BPF_ANY = 0,
	BPF_NOEXIST = 1,
	BPF_EXIST = 2,
};

enum {
	BPF_F_NO_PREALLOC = 1,
};

enum {
	BPF_F_USER_STACK = 256,
	BPF_F_FAST_STACK_CMP = 512,
	BPF_F_REUSE_STACKID = 1024,
};

enum {
	BPF_LOCAL_STORAGE_GET_F_CREATE = 1,
};

struct mm_struct;

struct sched_entity {
	__u64 sum_exec_runtime;	/* ns on the CPU, up to date at sched_switch */
} __attribute__((preserve_access_index));

struct task_struct {
	unsigned int __state;	/* 5.14+; older kernels: task_struct___old */
	void *stack;		/* its kernel stack: the user registers at its top */
	unsigned int flags;
	pid_t pid;
	pid_t tgid;
	struct mm_struct *mm;
	struct sched_entity se;
	int on_cpu;		/* SMP kernels: running, or switching out (u8 in 7.x) */
} __attribute__((preserve_access_index));

struct task_struct___old {
	long state;
} __attribute__((preserve_access_index));

/*
 * User registers saved at kernel entry (bpf_task_pt_regs, 5.15+), for the
 * user stack cache: instruction pointer, stack pointer, frame pointer, link
 * register (0 where the return address is on the stack), and the return
 * addresses of the two innermost frames that keep one (OFFCPU_URETS): with
 * only the first, two functions calling one helper from equal depths
 * (blocker's blocker_holder_hold and blocker_holder_pause) had equal keys
 * on arm64, where libc's syscall() keeps a frame record of its own, and on
 * s390x, where the back chain is a stack address, not a return address.  Fields are matched by name
 * through the kernel's anonymous unions.  OFFCPU_UREGS_EXIST guards every
 * access, so a BTF without them (a minimal BTF given with --btf) only turns
 * the cache off.
 */
#if defined(__TARGET_ARCH_x86)
struct pt_regs {
	unsigned long bp;
	unsigned long sp;
	unsigned long ip;
	unsigned short cs;	/* u16 in FRED's union (6.9+), unsigned long before */
} __attribute__((preserve_access_index));
#define OFFCPU_UREGS_EXIST(r) (bpf_core_field_exists((r)->ip) && \
	bpf_core_field_exists((r)->sp) && bpf_core_field_exists((r)->bp))
#define OFFCPU_UREGS(r, ip_, sp_, fp_, lr_) \
	({ ip_ = (r)->ip; sp_ = (r)->sp; fp_ = (r)->bp; lr_ = 0; })
#define OFFCPU_UREGS_READ(r, ip_, sp_, fp_, lr_) \
	({ ip_ = BPF_CORE_READ(r, ip); sp_ = BPF_CORE_READ(r, sp); fp_ = BPF_CORE_READ(r, bp); lr_ = 0; })
/* Entered from user mode: CPL 3 in the saved cs. */
#define OFFCPU_UREGS_USER(r) (bpf_core_field_exists((r)->cs) && (BPF_CORE_READ(r, cs) & 3) == 3)
/* Frame records: [fp] the caller's fp, [fp + 8] the return address. */
#define OFFCPU_FRAME_REC 0
#define OFFCPU_URETS(sp_, fp_, r1_, r2_) offcpu_frame_rets(fp_, &(r1_), &(r2_))
#elif defined(__TARGET_ARCH_arm64)
struct pt_regs {
	__u64 regs[31];
	__u64 sp;
	__u64 pc;
	__u64 pstate;
} __attribute__((preserve_access_index));
#define OFFCPU_UREGS_EXIST(r) (bpf_core_field_exists((r)->pc) && \
	bpf_core_field_exists((r)->sp) && bpf_core_field_exists((r)->regs[29]) && \
	bpf_core_field_exists((r)->regs[30]))
#define OFFCPU_UREGS(r, ip_, sp_, fp_, lr_) \
	({ ip_ = (r)->pc; sp_ = (r)->sp; fp_ = (r)->regs[29]; lr_ = (r)->regs[30]; })
#define OFFCPU_UREGS_READ(r, ip_, sp_, fp_, lr_) \
	({ ip_ = BPF_CORE_READ(r, pc); sp_ = BPF_CORE_READ(r, sp); \
	   fp_ = BPF_CORE_READ(r, regs[29]); lr_ = BPF_CORE_READ(r, regs[30]); })
/* Entered from EL0: the mode bits of the saved pstate (EL0t, AArch64 or AArch32). */
#define OFFCPU_UREGS_USER(r) (bpf_core_field_exists((r)->pstate) && (BPF_CORE_READ(r, pstate) & 0xf) == 0)
/* Frame records: [fp] the caller's x29, [fp + 8] the saved x30. */
#define OFFCPU_FRAME_REC 0
#define OFFCPU_URETS(sp_, fp_, r1_, r2_) offcpu_frame_rets(fp_, &(r1_), &(r2_))
#elif defined(__TARGET_ARCH_riscv)
struct pt_regs {
	unsigned long epc;
	unsigned long ra;
	unsigned long sp;
	unsigned long s0;
	unsigned long status;
} __attribute__((preserve_access_index));
#define OFFCPU_UREGS_EXIST(r) (bpf_core_field_exists((r)->epc) && \
	bpf_core_field_exists((r)->sp) && bpf_core_field_exists((r)->s0) && \
	bpf_core_field_exists((r)->ra))
#define OFFCPU_UREGS(r, ip_, sp_, fp_, lr_) \
	({ ip_ = (r)->epc; sp_ = (r)->sp; fp_ = (r)->s0; lr_ = (r)->ra; })
#define OFFCPU_UREGS_READ(r, ip_, sp_, fp_, lr_) \
	({ ip_ = BPF_CORE_READ(r, epc); sp_ = BPF_CORE_READ(r, sp); \
	   fp_ = BPF_CORE_READ(r, s0); lr_ = BPF_CORE_READ(r, ra); })
/* Entered from U-mode: SPP (bit 8) of the saved sstatus clear. */
#define OFFCPU_UREGS_USER(r) (bpf_core_field_exists((r)->status) && (BPF_CORE_READ(r, status) & 0x100) == 0)
/*
 * Frame records just below the CFA, where s0 points: [fp - 16] the caller's
 * s0, [fp - 8] the saved ra (as the kernel's user stack walk reads them).
 */
#define OFFCPU_FRAME_REC (-16)
#define OFFCPU_URETS(sp_, fp_, r1_, r2_) offcpu_frame_rets(fp_, &(r1_), &(r2_))
#elif defined(__TARGET_ARCH_s390)
struct offcpu_psw {
	unsigned long mask;
	unsigned long addr;
} __attribute__((preserve_access_index));
struct pt_regs {
	struct offcpu_psw psw;
	unsigned long gprs[16];
} __attribute__((preserve_access_index));
#define OFFCPU_UREGS_EXIST(r) (bpf_core_field_exists((r)->psw.addr) && \
	bpf_core_field_exists((r)->gprs[15]) && bpf_core_field_exists((r)->gprs[11]) && \
	bpf_core_field_exists((r)->gprs[14]))
#define OFFCPU_UREGS(r, ip_, sp_, fp_, lr_) \
	({ ip_ = (r)->psw.addr; sp_ = (r)->gprs[15]; fp_ = (r)->gprs[11]; lr_ = (r)->gprs[14]; })
#define OFFCPU_UREGS_READ(r, ip_, sp_, fp_, lr_) \
	({ ip_ = BPF_CORE_READ(r, psw.addr); sp_ = BPF_CORE_READ(r, gprs[15]); \
	   fp_ = BPF_CORE_READ(r, gprs[11]); lr_ = BPF_CORE_READ(r, gprs[14]); })
/* Entered from user mode: the problem-state bit of the saved PSW. */
#define OFFCPU_UREGS_USER(r) ((BPF_CORE_READ(r, psw.mask) & 0x0001000000000000UL) != 0)
/*
 * Back chain: [sp] the caller's frame, where a function saves its r14 (its
 * return address) at offset 112 of the register save area.
 */
#define OFFCPU_URETS(sp_, fp_, r1_, r2_) offcpu_chain_rets(sp_, &(r1_), &(r2_))
#define OFFCPU_FRAME_REC 0	/* no frame records: the back chain */
#elif defined(__TARGET_ARCH_arm)
/*
 * 32-bit ARM: uregs[18] of the kernel's 4-byte longs, declared as __u32 so
 * the sizes agree and no read is wider than the field.  The copy's frame
 * pointer is Thumb's r7, which EHABI rows and the Thumb frame step use
 * (Debian's armhf is Thumb-2); r11 starts the APCS chain the kernel's
 * user walk reads, and the stack cache's key walks that chain the same
 * way (OFFCPU_UCHAIN_FP; board/armhf.mk).
 */
struct pt_regs {
	__u32 uregs[18];
} __attribute__((preserve_access_index));
#define OFFCPU_UREGS_EXIST(r) (bpf_core_field_exists((r)->uregs[16]))
#define OFFCPU_UREGS(r, ip_, sp_, fp_, lr_) \
	({ ip_ = (r)->uregs[15]; sp_ = (r)->uregs[13]; fp_ = (r)->uregs[7]; lr_ = (r)->uregs[14]; })
#define OFFCPU_UREGS_READ(r, ip_, sp_, fp_, lr_) \
	({ ip_ = BPF_CORE_READ(r, uregs[15]); sp_ = BPF_CORE_READ(r, uregs[13]); \
	   fp_ = BPF_CORE_READ(r, uregs[7]); lr_ = BPF_CORE_READ(r, uregs[14]); })
/* Where the APCS frame chain starts (r11), for OFFCPU_URETS. */
#define OFFCPU_UCHAIN_FP(r) ((r)->uregs[11])
/* Entered from user mode: the mode bits of the saved cpsr (uregs[16]) are USR_MODE. */
#define OFFCPU_UREGS_USER(r) ((BPF_CORE_READ(r, uregs[16]) & 0x1f) == 0x10)
/*
 * APCS frames (-mapcs-frame), as arch/arm/kernel/perf_callchain.c walks
 * them: fp points just above {caller's fp, sp, lr}, 4-byte words.
 */
#define OFFCPU_UWORD __u32
/*
 * A raw_tp program's kernel stacks end in the program here (the kernel's
 * unwinder starts from its helper's caller, which it has no tables for), so
 * the wakers' interrupt context is read from preempt_count instead: in
 * task_struct::thread_info (THREAD_INFO_IN_TASK, 6.x) or at the base of
 * the kernel stack (5.10).
 */
#define OFFCPU_PREEMPT_COUNT 1
struct thread_info {
	int preempt_count;
} __attribute__((preserve_access_index));
struct task_struct___ti {
	struct thread_info thread_info;
} __attribute__((preserve_access_index));
#define OFFCPU_FRAME_REC (-12)
#define OFFCPU_FRAME_RET 8
#define OFFCPU_URETS(sp_, fp_, r1_, r2_) offcpu_frame_rets(fp_, &(r1_), &(r2_))
#else
#error "user registers: unknown __TARGET_ARCH"
#endif

/* A word of user memory (a saved frame pointer or return address). */
#ifndef OFFCPU_UWORD
#define OFFCPU_UWORD __u64
#endif
/* The return address's offset in a frame record, from its saved frame pointer. */
#ifndef OFFCPU_FRAME_RET
#define OFFCPU_FRAME_RET 8
#endif

#endif
