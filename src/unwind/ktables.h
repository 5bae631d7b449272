/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --unwind-in kernel: the CFI rows (cfi.c) of the files a process maps,
 * turned into the BPF walker's compact rows and loaded into its maps, with
 * the process's executable mappings (the design: bpf/offcpu.h, "--unwind-in
 * kernel").  Loaded by a thread of its own when the walker asks (ku_want)
 * or a copied stack shows what was missing (ktables_learn), so the ring's
 * reader never waits for a table: processes' entries first, then the rows
 * of one file per turn; a large file by parts of its FDEs.  Rows live in
 * one pool, allocated as a ring: when it is full the files loaded longest
 * ago give their rows back and are loaded again at their next miss.
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

/*
 * An EHABI file's rows (E) into T, where E has none (a CFI_GAP row: no
 * entry or CANTUNWIND, or before its first row) its debug file's (DBG,
 * may be NULL), as the user-space unwinder picks them (uw_file_row).
 * Only the FDEs over E's gaps are built.  0, -2 past MAX_ROWS (0: no
 * limit), -1 otherwise.
 */
int ktable_ehabi_rows(const struct cfi_table *e, struct cfi_file *dbg, size_t max_rows,
		      struct cfi_table *t);

struct ktables_counts {
	uint64_t procs;		/* process mappings loaded (and reloaded) */
	uint64_t files, rows;	/* files whose rows were loaded, and the rows */
	uint64_t no_rows;	/* files without usable CFI */
	uint64_t too_large;	/* files with more rows than the whole pool */
	uint64_t parted;	/* files loaded by parts instead (each part a file above) */
	uint64_t evicted;	/* files whose rows were given back */
	uint64_t deferred;	/* loads put off: the pool held only files loaded just now */
	uint64_t requests;	/* requests served from ku_want */
	uint64_t learned;	/* copied stacks whose files were looked at */
	uint64_t learn_dropped;	/* ... not: the queue was full */
	uint64_t load_ns;	/* time spent building and loading */
	uint64_t rows_max;	/* the pool */
	uint64_t compared, differed;	/* --unwind-in verify: walked stacks against their copies */
	uint64_t walk_shorter;	/* ... differed: the walk is a prefix of the copy's frames */
	uint64_t copy_shorter;	/* ... the copy's frames are a prefix of the walk */
	/* The first that differed, for the summary: frames, where they part, the two there. */
	uint32_t first_kn, first_un, first_at;
	uint64_t first_kip, first_uip;
};

struct ktables;

/*
 * The walker's maps (bpf/offcpu_unwind.bpf.h) and ROWS, the pool's entries;
 * starts the loader thread.  NULL when out of memory.
 */
struct ktables *ktables_new(int rows_fd, int files_fd, int procs_fd, int want_fd, uint32_t rows);

/* Serves the requests the walker left in ku_want (ktables_request each): the loader thread's step. */
void ktables_poll(struct ktables *k);

/*
 * The walker missed for PID (WANT: its address space, and the file whose
 * rows it lacked, if that was why): loads PID's mappings (every file
 * registered, without rows) when they are another address space's or were
 * loaded over a second ago, and the wanted file's rows.  The loader
 * thread's alone.
 */
void ktables_request(struct ktables *k, uint32_t pid, const struct offcpu_kwant *want);

/*
 * A stack of PID (address space MM) that was copied and unwound here, frames
 * IP (N): the loader thread loads the rows of the files its frames lie in,
 * so the next block through them is walked (a process's first block is
 * copied, and reused from the stack cache after: its walk would never come
 * back to ask for the rest).  Any thread; dropped when the queue is full.
 */
void ktables_learn(struct ktables *k, uint32_t pid, uint64_t mm, const uint64_t *ip, uint32_t n);

/*
 * --unwind-in verify: a walked stack (frames KIP, KN) against its copy's
 * unwinding (UIP, UN).  Any thread (counters of its own).
 */
void ktables_compare(struct ktables *k, const uint64_t *kip, uint32_t kn, const uint64_t *uip,
		     uint32_t un);

const struct ktables_counts *ktables_counts(const struct ktables *k);
/* Stops the loader thread: the counts are final after it. */
void ktables_stop(struct ktables *k);
void ktables_free(struct ktables *k);

#endif
