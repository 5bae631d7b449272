/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The few kernel types the BPF program touches, declared for CO-RE.
 *
 * Hand-written instead of a bpftool-dumped vmlinux.h: these declarations are
 * architecture-neutral (no pt_regs, no arch structs), so one header serves
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

struct task_struct {
	unsigned int __state;	/* 5.14+; older kernels: task_struct___old */
	unsigned int flags;
	pid_t pid;
	pid_t tgid;
	struct mm_struct *mm;
} __attribute__((preserve_access_index));

struct task_struct___old {
	long state;
} __attribute__((preserve_access_index));

#endif
