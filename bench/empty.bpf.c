// SPDX-License-Identifier: GPL-2.0
/* The floor: an empty sched_switch program, the cost of being attached. */
#include "vmlinux_min.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

SEC("tp_btf/sched_switch")
int empty(unsigned long long *ctx)
{
	return 0;
}
