// SPDX-License-Identifier: GPL-2.0
/*
 * What offcpu.bpf.c touches plus one field more (mm_struct::total_vm): a
 * minimal BTF reduced against offcpu.bpf.c lacks it, standing in for an
 * object that grew past its embedded archive.
 */
#include "vmlinux_min.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

char LICENSE[] SEC("license") = "GPL";

struct mm_struct {
	unsigned long total_vm;
} __attribute__((preserve_access_index));

SEC("raw_tp/sched_switch")
int extra(unsigned long long *ctx)
{
	struct task_struct *t = (struct task_struct *)ctx[1];
	unsigned int state;

	if (bpf_core_field_exists(t->__state))
		state = BPF_CORE_READ(t, __state);
	else
		state = BPF_CORE_READ((struct task_struct___old *)t, state);
	return state + BPF_CORE_READ(t, flags) + BPF_CORE_READ(t, pid) +
	       BPF_CORE_READ(t, tgid) + BPF_CORE_READ(t, mm, total_vm);
}
