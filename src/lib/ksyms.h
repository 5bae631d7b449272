/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel symbols (a kallsyms file), read once and looked up by address, by
 * name and by range (libbpf-tools' trace_helpers.c ksyms, without its sort:
 * lookups here are few and linear, see ksyms.c).  The one
 * reader of /proc/kallsyms: the recorder's probe, synthesis, waker and stack
 * cutting share the running kernel's table (ksyms_running), the report
 * loads the file that matches the recording.
 */
#ifndef OFFCPU_KSYMS_H
#define OFFCPU_KSYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct ksym {
	uint64_t addr;		/* 0 when hidden (kptr_restrict) */
	const char *name;
	char type;		/* nm's letter: 't', 'T', 'W', 'd', ... */
};

struct ksyms;

/*
 * The symbols of the kallsyms file PATH (a regular file, or one under /proc/,
 * whose size reads 0), or NULL when it cannot be read.
 */
struct ksyms *ksyms_load(const char *path);
/* The symbols of an open kallsyms text (pure: fuzzed in tests/fuzz/fuzz_proc.c). */
struct ksyms *ksyms_read(FILE *f);
void ksyms_free(struct ksyms *ks);

/*
 * FN on each symbol of the kallsyms file PATH, in the file's order, until it
 * returns non-zero, which is returned (K and its name last only for the
 * call).  -1 when the file cannot be read.
 */
int ksyms_each(const char *path, int (*fn)(void *ctx, const struct ksym *k), void *ctx);

/* The running kernel's /proc/kallsyms, read on first use (NULL: unreadable). */
const struct ksyms *ksyms_running(void);
/*
 * NAME's first address in the running kernel's table (0: hidden); -1 when
 * not listed.  From the table once read, else read only up to NAME: what
 * start-up asks (_text, on the first lines) costs no whole read (about
 * 150 ms for 120,000 symbols, the kernel formatting them).
 */
int ksyms_running_find(const char *name, uint64_t *addr);
void ksyms_running_free(void);

/* Entries, in the file's order. */
size_t ksyms_count(const struct ksyms *ks);
const struct ksym *ksyms_at(const struct ksyms *ks, size_t i);

/* The symbol at or below ADDR (the first of the file at its address), or NULL. */
const struct ksym *ksyms_by_addr(const struct ksyms *ks, uint64_t addr);
/* The first symbol named NAME in the file, or NULL. */
const struct ksym *ksyms_by_name(const struct ksyms *ks, const char *name);
/*
 * [LO, HI) of NAME: its address up to the next higher one of any symbol (the
 * file is not sorted across modules).  -1 when absent, hidden, or the last.
 */
int ksyms_range(const struct ksyms *ks, const char *name, uint64_t *lo, uint64_t *hi);

#endif
