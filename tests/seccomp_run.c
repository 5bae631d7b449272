// SPDX-License-Identifier: GPL-2.0
/*
 * seccomp_run nobpf|notp|nolink[,nomount]|nomount CMD [ARG...]: run CMD as
 * if on a kernel without the bpf() system call (nobpf: bpf() fails with ENOSYS) or without the
 * sched_switch tracepoint (notp: attaching a tracepoint, BPF_RAW_TRACEPOINT_OPEN
 * or BPF_LINK_CREATE, fails with ENOENT as the kernel does for an unknown
 * name), or one that refuses the programs' attach after the probe's own
 * (nolink: BPF_LINK_CREATE fails with EPERM, as a security module's refusal;
 * the probe's BPF_RAW_TRACEPOINT_OPEN passes).  nomount, alone or after a
 * comma: mount() fails with EPERM, so that CMD cannot mount a tracefs where
 * the caller hid it (a kernel without event tracing).  A seccomp filter makes
 * the simulation real for everything CMD does.
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/bpf.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdbool.h>
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

/* Every call of another ABI passes; the number of this one's is loaded. */
#define HEAD								\
	LD(arch),							\
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ARCH, 1, 0),		\
	RET(SECCOMP_RET_ALLOW),						\
	LD(nr)

/* nomount: mount() fails with EPERM, as without CAP_SYS_ADMIN. */
#define NO_MOUNT							\
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_mount, 0, 1),		\
	RET(SECCOMP_RET_ERRNO | EPERM)

/* Every call but bpf() passes; bpf(cmd, ...): cmd is args[0]. */
#define BPF_ONLY							\
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_bpf, 1, 0),		\
	RET(SECCOMP_RET_ALLOW)

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* Appends the N instructions F to PROG (room for 64). */
static void append(struct sock_fprog *prog, const struct sock_filter *f, size_t n)
{
	memcpy(prog->filter + prog->len, f, n * sizeof(*f));
	prog->len += n;
}

/* Whether the LEN bytes at MODE are NAME. */
static bool is(const char *mode, size_t len, const char *name)
{
	return strlen(name) == len && !strncmp(mode, name, len);
}

int main(int argc, char **argv)
{
	struct sock_filter head[] = { HEAD }, no_mount[] = { NO_MOUNT };
	struct sock_filter notp[] = {
		BPF_ONLY,
		LD(args[0]),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, BPF_RAW_TRACEPOINT_OPEN, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, BPF_LINK_CREATE, 1, 0),
		RET(SECCOMP_RET_ALLOW),
		RET(SECCOMP_RET_ERRNO | ENOENT),
	};
	struct sock_filter nolink[] = {
		BPF_ONLY,
		LD(args[0]),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, BPF_LINK_CREATE, 1, 0),
		RET(SECCOMP_RET_ALLOW),
		RET(SECCOMP_RET_ERRNO | EPERM),
	};
	struct sock_filter nobpf[] = {
		BPF_ONLY,
		RET(SECCOMP_RET_ERRNO | ENOSYS),
	};
	struct sock_filter allow[] = { RET(SECCOMP_RET_ALLOW) };
	struct sock_filter insns[64];
	struct sock_fprog prog = { 0, insns };
	const char *mode = argc > 2 ? argv[1] : "";
	size_t len = strcspn(mode, ",");
	bool plus_mount = !strcmp(mode + len, ",nomount");
	bool ok = !mode[len] || plus_mount;

	append(&prog, head, N(head));
	if (plus_mount || is(mode, len, "nomount"))
		append(&prog, no_mount, N(no_mount));
	if (is(mode, len, "nobpf"))
		append(&prog, nobpf, N(nobpf));
	else if (is(mode, len, "notp"))
		append(&prog, notp, N(notp));
	else if (is(mode, len, "nolink"))
		append(&prog, nolink, N(nolink));
	else if (is(mode, len, "nomount") && !mode[len])
		append(&prog, allow, N(allow));
	else
		ok = false;
	if (!ok) {
		fprintf(stderr, "usage: seccomp_run nobpf|notp|nolink[,nomount]|nomount CMD [ARG...]\n");
		return 2;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog)) {
		perror("seccomp_run: seccomp");
		return 2;
	}
	execvp(argv[2], argv + 2);
	fprintf(stderr, "seccomp_run: cannot execute %s: %s\n", argv[2], strerror(errno));
	return 127;
}
