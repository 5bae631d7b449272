// SPDX-License-Identifier: GPL-2.0
/*
 * seccomp_run nobpf|notp|nolink CMD [ARG...]: run CMD as if on a kernel without
 * the bpf() system call (nobpf: bpf() fails with ENOSYS) or without the
 * sched_switch tracepoint (notp: attaching a tracepoint, BPF_RAW_TRACEPOINT_OPEN
 * or BPF_LINK_CREATE, fails with ENOENT as the kernel does for an unknown
 * name), or one that refuses the programs' attach after the probe's own
 * (nolink: BPF_LINK_CREATE fails with EPERM, as a security module's refusal;
 * the probe's BPF_RAW_TRACEPOINT_OPEN passes).  A seccomp filter makes the
 * simulation real for everything CMD does.
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/bpf.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)
#define ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define ARCH AUDIT_ARCH_AARCH64
#elif defined(__s390x__)
#define ARCH AUDIT_ARCH_S390X
#elif defined(__riscv) && __riscv_xlen == 64
#define ARCH AUDIT_ARCH_RISCV64
#elif defined(__arm__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define ARCH AUDIT_ARCH_ARM
#else
#error "add this architecture's AUDIT_ARCH"
#endif

/* The low 32 bits of a 64-bit seccomp_data field. */
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define LO 4
#else
#define LO 0
#endif
#define LD(field) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, field) + \
			     (sizeof(((struct seccomp_data *)0)->field) == 8 ? LO : 0))
#define RET(v) BPF_STMT(BPF_RET | BPF_K, (v))

/* The filters' start: calls of another ABI and every call but bpf() pass. */
#define PASS_ALL_BUT_BPF							\
	LD(arch),								\
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ARCH, 1, 0),			\
	RET(SECCOMP_RET_ALLOW),							\
	LD(nr),									\
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_bpf, 1, 0),			\
	RET(SECCOMP_RET_ALLOW)

int main(int argc, char **argv)
{
	/* bpf(cmd, ...): cmd is args[0]. */
	struct sock_filter notp[] = {
		PASS_ALL_BUT_BPF,
		LD(args[0]),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, BPF_RAW_TRACEPOINT_OPEN, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, BPF_LINK_CREATE, 1, 0),
		RET(SECCOMP_RET_ALLOW),
		RET(SECCOMP_RET_ERRNO | ENOENT),
	};
	struct sock_filter nolink[] = {
		PASS_ALL_BUT_BPF,
		LD(args[0]),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, BPF_LINK_CREATE, 1, 0),
		RET(SECCOMP_RET_ALLOW),
		RET(SECCOMP_RET_ERRNO | EPERM),
	};
	struct sock_filter nobpf[] = {
		PASS_ALL_BUT_BPF,
		RET(SECCOMP_RET_ERRNO | ENOSYS),
	};
	struct sock_fprog prog;

	if (argc < 3 || (strcmp(argv[1], "nobpf") && strcmp(argv[1], "notp") &&
			 strcmp(argv[1], "nolink"))) {
		fprintf(stderr, "usage: seccomp_run nobpf|notp|nolink CMD [ARG...]\n");
		return 2;
	}
	if (!strcmp(argv[1], "nobpf"))
		prog = (struct sock_fprog){ sizeof(nobpf) / sizeof(nobpf[0]), nobpf };
	else if (!strcmp(argv[1], "nolink"))
		prog = (struct sock_fprog){ sizeof(nolink) / sizeof(nolink[0]), nolink };
	else
		prog = (struct sock_fprog){ sizeof(notp) / sizeof(notp[0]), notp };
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog)) {
		perror("seccomp_run: seccomp");
		return 2;
	}
	execvp(argv[2], argv + 2);
	fprintf(stderr, "seccomp_run: cannot execute %s: %s\n", argv[2], strerror(errno));
	return 127;
}
