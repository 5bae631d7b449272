// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer: arbitrary bytes as the --btf FILE, through what probe_kernel
 * does with it: probe_btf_parse (raw BTF, else ELF with .BTF), then the facts
 * read from it.  libbpf is built from source with the same sanitizers
 * (tests/fuzz/run.sh), since it is the parser under test.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "record/probe.h"

/* probe.c links the embedded archive; the harness needs none. */
const unsigned char offcpu_btf_archive[1], offcpu_btf_archive_end[1];
const unsigned char offcpu_bpf_obj[1], offcpu_bpf_obj_end[1];
const unsigned char offcpu_ksym_bpf_obj[1], offcpu_ksym_bpf_obj_end[1];

static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	static char path[64];
	struct probe p;
	struct btf *btf;

	if (fd < 0) {
		libbpf_set_print(quiet);
		/* A file, as --btf names one; no disk traffic. */
		fd = memfd_create("btf", 0);
		if (fd < 0)
			return 0;
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0) || pwrite(fd, data, size, 0) != (ssize_t)size)
		return 0;
	btf = probe_btf_parse(path);
	if (!btf)
		return 0;
	memset(&p, 0, sizeof(p));
	p.kver = 6 << 16;
	probe_btf_read(&p, btf);
	btf__free(btf);
	return 0;
}
