/* SPDX-License-Identifier: GPL-2.0 */
/* Bytes linked into the binary by embed.S: the BPF object and the BTF archive. */
#ifndef OFFCPU_EMBED_H
#define OFFCPU_EMBED_H

extern const unsigned char offcpu_bpf_obj[], offcpu_bpf_obj_end[];
extern const unsigned char offcpu_btf_archive[], offcpu_btf_archive_end[];

#endif
