/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel symbols (a kallsyms file), read once and looked up by address, by
 * name and by range (libbpf-tools' trace_helpers.c ksyms, without its sort:
 * lookups here are few and linear, see ksyms.c).  The one reader of
 * /proc/kallsyms: the recorder's probe, synthesis, waker and stack cutting
 * ask the running kernel's (ksyms_running*), which is not kept; the report
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
 * whose size reads 0), read as lookups need them: ksyms_find reads up to
 * its name, ksyms_finish the rest.  NULL when PATH cannot be opened.
 */
struct ksyms *ksyms_open(const char *path);
/* The same from F, an open kallsyms text the table then owns (closes). */
struct ksyms *ksyms_stream(FILE *f);
/*
 * The first symbol named NAME (*ADDR 0: hidden), reading on only as far as
 * it: 0, or -1 when not listed (or KS is NULL, or out of memory before it).
 */
int ksyms_find(struct ksyms *ks, const char *name, uint64_t *addr);
/* Read the rest of the file: 0, or -1 (no table or out of memory). */
int ksyms_finish(struct ksyms *ks);
/* ksyms_open and ksyms_finish: the whole file, or NULL. */
struct ksyms *ksyms_load(const char *path);
void ksyms_free(struct ksyms *ks);

/*
 * The running kernel's /proc/kallsyms, streamed once per question and not
 * kept (the whole table is 6 MiB): a name's question reads only up to it
 * (_text, on the first lines, costs no whole read; the kernel formats
 * 120,000 symbols in 50 to 150 ms, seconds in an emulated guest), a range
 * up to the symbol after it in the kernel image's sorted part (the whole
 * file for a module's), so ask for all the ranges needed at once.
 */
int ksyms_running_find(const char *name, uint64_t *addr);
/* Whether NAME is listed (names are, even when addresses are hidden). */
bool ksyms_running_has(const char *name);
/*
 * ksyms_range of each of the N NAMES in the running table, from one read
 * (LO[i] = HI[i] = 0 where it has none): how many have one.
 */
int ksyms_running_ranges(const char *const *names, size_t n, uint64_t *lo, uint64_t *hi);
/* The same for one NAME: 0, or -1. */
int ksyms_running_range(const char *name, uint64_t *lo, uint64_t *hi);

/*
 * [LO, HI) of the function NAME from TEXT, the kernel's %pS (or %pB, for a
 * return address) of ADDR: "name+0xoff/0xsize", off counted from the
 * function's start to ADDR.  0, or -1 (LO = HI = 0) when TEXT is another
 * function's, a module's, or does not parse.
 */
int ksyms_parse_symbol(const char *text, uint64_t addr, const char *name, uint64_t *lo,
			  uint64_t *hi);

/*
 * The lookups below see the entries read so far: the whole file after
 * ksyms_load or ksyms_finish.
 */
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
