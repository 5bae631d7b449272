/* SPDX-License-Identifier: GPL-2.0 */
/* Bytes linked into the binary by embed.S: the BPF objects and the BTF archive. */
#ifndef OFFCPU_EMBED_H
#define OFFCPU_EMBED_H

extern const unsigned char offcpu_bpf_obj[], offcpu_bpf_obj_end[];
/* The BTF-free variant (tp,hash): no CO-RE relocation. */
extern const unsigned char offcpu_tp_bpf_obj[], offcpu_tp_bpf_obj_end[];
/* The syscall program that names kernel frames (bpf/offcpu_ksym.bpf.c). */
extern const unsigned char offcpu_ksym_bpf_obj[], offcpu_ksym_bpf_obj_end[];
extern const unsigned char offcpu_btf_archive[], offcpu_btf_archive_end[];

#endif
