// SPDX-License-Identifier: GPL-2.0
/*
 * Names kernel addresses as the kernel's own backtraces do (%pB:
 * "name+0xoffset/0xsize"), so that user space learns where a function
 * starts and ends without reading /proc/kallsyms (120,000 lines formatted
 * by the kernel, 45 ms of its time: a fifth of a recording's CPU).
 *
 * A BPF_PROG_TYPE_SYSCALL program (5.14+, bpf_snprintf 5.13+), run once by
 * BPF_PROG_TEST_RUN on the frames of the first kernel stack
 * (src/record/kfunc_range.c).  Its own object: loaded only where the probe
 * found the program type and the helper, it can never keep the recording's
 * object from loading, and it reads no kernel structure (no CO-RE, no BTF).
 * %pB, not bpf_kallsyms_lookup_name (5.16+): it gives the size too, it
 * needs no readable kernel addresses (kptr_restrict), and a return address
 * names the function that called, as the stack means it.
 */
#include "vmlinux_min.h"
#include <bpf/bpf_helpers.h>
#include "offcpu.h"

/* In: the frames to name (0: none); out: each one's text, "" when none. */
__u64 ksym_ip[OFFCPU_KSYM_FRAMES];
char ksym_text[OFFCPU_KSYM_FRAMES][OFFCPU_KSYM_TEXT];

SEC("syscall")
int name_ips(void *ctx __attribute__((unused)))
{
	static const char fmt[] = "%pB";

#pragma unroll
	for (int i = 0; i < OFFCPU_KSYM_FRAMES; i++)
		if (ksym_ip[i])
			bpf_snprintf(ksym_text[i], sizeof(ksym_text[i]), fmt, &ksym_ip[i],
				     sizeof(ksym_ip[i]));
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
