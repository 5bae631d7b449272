// SPDX-License-Identifier: GPL-2.0
/*
 * The floor of any exact kernel-stack off-CPU profiler: one kernel stack walk
 * (bpf_get_stackid) at each switch-out of a sleeping user thread, nothing
 * else.  Whatever offcpu costs above this is its own.
 */
#include "vmlinux_min.h"
#include <bpf/bpf_helpers.h>
#include "offcpu.h"

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, 2048);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, 64 * sizeof(__u64));
} kstacks SEC(".maps");

SEC("tp_btf/sched_switch")
int kstack(unsigned long long *ctx)
{
	struct task_struct *prev = (struct task_struct *)ctx[1];

	/* preempt, prev, next, prev_state (5.18+, as on the bench host) */
	if (ctx[0] || !((__u32)ctx[3] & 3) || (prev->flags & OFFCPU_PF_KTHREAD))
		return 0;
	bpf_get_stackid(ctx, &kstacks, 0);
	return 0;
}
