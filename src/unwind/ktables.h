/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --unwind-in kernel: the CFI rows (cfi.c) of the files a process maps,
 * turned into the BPF walker's compact rows and loaded into its maps, with
 * the process's executable mappings (the design: bpf/offcpu.h, "--unwind-in
 * kernel").  Loaded when a copy arrives for a process the walker missed: the
 * copy is the request.  Rows live in one pool, allocated as a ring: when it
 * is full the files loaded longest ago give their rows back and are loaded
 * again at their next miss.
 */
#ifndef OFFCPU_KTABLES_H
#define OFFCPU_KTABLES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "unwind/cfi.h"
#include "offcpu.h"

/*
 * ROW as the walker's row in OUT, tagged with TAG: OFFCPU_KROW_MISS where
 * the walker cannot follow it (the block is copied and unwound here).
 */
void ktable_row(const struct cfi_row *row, uint16_t tag, struct offcpu_krow *out);

/*
 * T's rows as the walker's, consecutive equal ones merged, into OUT (room for
 * T->n); returns how many, or 0 when T cannot be loaded (a pc past 4 GiB).
 */
size_t ktable_rows(const struct cfi_table *t, uint16_t tag, struct offcpu_krow *out);

struct ktables_counts {
	uint64_t procs;		/* process mappings loaded (and reloaded) */
	uint64_t files, rows;	/* files whose rows were loaded, and the rows */
	uint64_t no_rows;	/* files without usable CFI */
	uint64_t too_large;	/* files with more rows than the whole pool */
	uint64_t evicted;	/* files whose rows were given back */
	uint64_t load_ns;	/* time spent building and loading */
	uint64_t rows_max;	/* the pool */
	uint64_t compared, differed;	/* --unwind-in verify: walked stacks against their copies */
};

struct ktables;

/*
 * The walker's maps (bpf/offcpu_unwind.bpf.h) and ROWS, the pool's entries.
 * NULL when out of memory.
 */
struct ktables *ktables_new(int rows_fd, int files_fd, int procs_fd, uint32_t rows);

/*
 * A copy of PID's stack (address space MM) arrived: the walker missed.
 * Loads PID's mappings and their files' rows, or loads them again when
 * they are another address space's or were loaded over a second ago.
 */
void ktables_request(struct ktables *k, uint32_t pid, uint64_t mm);

/* --unwind-in verify: a walked stack (frames KIP, KN) against its copy's unwinding (UIP, UN). */
void ktables_compare(struct ktables *k, const uint64_t *kip, uint32_t kn, const uint64_t *uip,
		     uint32_t un);

const struct ktables_counts *ktables_counts(const struct ktables *k);
void ktables_free(struct ktables *k);

#endif
