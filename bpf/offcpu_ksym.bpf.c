// SPDX-License-Identifier: GPL-2.0
/*
 * Where a kernel function starts and ends, without reading /proc/kallsyms
 * (120,000 lines formatted by the kernel, 45 ms of its time: a fifth of a
 * recording's CPU): its address from bpf_kallsyms_lookup_name, then %pS of
 * it, "name+0x0/0xsize", whose size the kernel takes from the next higher
 * symbol, as the kallsyms stream's reader does (src/lib/ksyms.c).
 *
 * A BPF_PROG_TYPE_SYSCALL program run once by BPF_PROG_TEST_RUN
 * (src/record/kfunc_range.c): the helper is a syscall program's only
 * (5.16+; bpf_snprintf 5.13+).  Not the first stack's frames named by %pB:
 * that stack need not hold the function (a thread found asleep at the start
 * is walked from the frame above __schedule).  Its own object: it can never
 * keep the recording's object from loading, and it reads no kernel
 * structure (no CO-RE, no BTF).
 */
#include "vmlinux_min.h"
#include <bpf/bpf_helpers.h>
#include "offcpu.h"

struct offcpu_ksym ksym;

SEC("syscall")
int name_range(void *ctx __attribute__((unused)))
{
	static const char fmt[] = "%pS";
	__u64 addr;

	ksym.name[OFFCPU_KSYM_NAME - 1] = '\0';
	ksym.ret = bpf_kallsyms_lookup_name(ksym.name, sizeof(ksym.name), 0, &addr);
	if (ksym.ret)
		return 0;
	ksym.addr = addr;
	bpf_snprintf(ksym.text, sizeof(ksym.text), fmt, &ksym.addr, sizeof(ksym.addr));
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
