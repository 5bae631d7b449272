/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The archive of minimal BTF embedded in the binary (format: btf/README.md),
 * keyed by machine (uname -m) and kernel release.  Untrusted input: every
 * size and offset is checked.
 */
#ifndef OFFCPU_BTF_ARCHIVE_H
#define OFFCPU_BTF_ARCHIVE_H

#include <stddef.h>
#include <stdio.h>

/*
 * Find and inflate the BTF for MACHINE/RELEASE ("arm64" and "aarch64" are the
 * same).  Returns 1 with *BTF malloc'ed, 0 if absent, -1 with ERR set when
 * the archive is malformed.
 */
int btf_archive_find(const void *ar, size_t len, const char *machine,
		     const char *release, void **btf, size_t *btf_len,
		     char *err, size_t errlen);

/* One line per entry; returns the count, or -1 when malformed. */
int btf_archive_list(const void *ar, size_t len, FILE *out);

#endif
