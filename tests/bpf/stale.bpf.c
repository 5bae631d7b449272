// SPDX-License-Identifier: GPL-2.0
/*
 * Touches only task_struct::pid.  Minimal BTF reduced against this object
 * lacks what offcpu.bpf.c needs, standing in for a stale embedded archive.
 */
#include "vmlinux_min.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

char LICENSE[] SEC("license") = "GPL";

SEC("raw_tp/sched_switch")
int stale(unsigned long long *ctx)
{
	struct task_struct *t = (struct task_struct *)ctx[1];

	return BPF_CORE_READ(t, pid) == 0;
}
