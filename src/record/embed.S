/*
 * The BPF objects (built for this board's endianness: CO-RE, the
 * BTF-free variant's, and the one that names kernel frames) and the minimal BTF
 * archive, linked in as read-only data.  No bpftool skeleton: bpftool before
 * 7.6 refuses big-endian objects, and libbpf opens the bytes directly.
 */
	.section .rodata.offcpu_embed, "a"
	.balign 8
	.global offcpu_bpf_obj
offcpu_bpf_obj:
	.incbin BPF_OBJ
	.global offcpu_bpf_obj_end
offcpu_bpf_obj_end:
	.balign 8
	.global offcpu_tp_bpf_obj
offcpu_tp_bpf_obj:
	.incbin BPF_TP_OBJ
	.global offcpu_tp_bpf_obj_end
offcpu_tp_bpf_obj_end:
	.balign 8
	.global offcpu_ksym_bpf_obj
offcpu_ksym_bpf_obj:
	.incbin BPF_KSYM_OBJ
	.global offcpu_ksym_bpf_obj_end
offcpu_ksym_bpf_obj_end:
	.balign 8
	.global offcpu_btf_archive
offcpu_btf_archive:
	.incbin BTF_ARCHIVE
	.global offcpu_btf_archive_end
offcpu_btf_archive_end:
	.section .note.GNU-stack, "", %progbits
