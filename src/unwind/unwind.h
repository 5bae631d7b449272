/* SPDX-License-Identifier: GPL-2.0 */
/*
 * User stacks from copies (--call-graph dwarf): the registers and the top of
 * the stack the BPF program copied at switch-out (struct offcpu_ucopy),
 * unwound here with the CFI tables of the mapped files (cfi.c, cfi_step),
 * falling back to the frame pointer where no FDE covers a pc (x86_64,
 * arm64).  Per process, the executable mappings from /proc/PID/maps at first
 * sight, kept in the one process-map model (lib/procmaps.h) by address-space
 * generation (read again when a pc lies in none of them); per file (device
 * and inode), one table built lazily and kept, within a memory budget.
 */
#ifndef OFFCPU_UNWIND_H
#define OFFCPU_UNWIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "unwind/cfi.h"
#include "offcpu.h"

/* How an unwind ended: complete, or cut short and why. */
enum unwind_end {
	UNWIND_CFI,		/* to the outermost frame by CFI alone */
	UNWIND_FP,		/* to the outermost frame, some frames by frame pointer */
	UNWIND_NO_CFI,		/* cut: a pc with no mapping, no table or no usable row */
	UNWIND_SHORT_COPY,	/* cut: the unwind needed a word beyond the copy */
	UNWIND_UNREADABLE,	/* cut: nothing of the stack could be copied */
	UNWIND_DEPTH,		/* cut: the frame limit */
	UNWIND_BAD,		/* cut: the stack pointer went backwards (a wrong row) */
	UNWIND_GONE,		/* cut: a pc in no mapping, the address space gone unread */
	UNWIND_BUDGET,		/* cut: a row refused, --unwind-tables spent */
	UNWIND_NR,
};

extern const char *const unwind_end_names[UNWIND_NR];

/*
 * The CFI row of a runtime PC, its file address in *VADDR and the file's
 * ELF machine in *MACHINE; *MACHINE stays 0 where no file with CFI maps PC.
 * NULL with a machine: no usable row (a gap).  The unwinder gives one over
 * /proc; the unit tests their own.
 */
typedef const struct cfi_row *(*unwind_row_fn)(void *ctx, uint64_t pc, uint64_t *vaddr,
					       unsigned int *machine);

/*
 * The stack words an unwind read (address, value), in order: with the
 * registers, all it depends on besides the mappings (the stack cache's key).
 */
#define UNWIND_READS_MAX OFFCPU_UCACHE_WORDS

struct unwind_reads {
	uint32_t n;
	bool overflow;		/* more than UNWIND_READS_MAX, or not to be cached */
	bool fp_used, lr_used;	/* the registers' fp and lr mattered */
	uint64_t addr[UNWIND_READS_MAX], val[UNWIND_READS_MAX];
};

/*
 * Unwinds copy C (LEN bytes of stack from C->sp) into IP (at most MAX
 * frames, innermost first: C->pc, then return addresses).  Returns the
 * frames and sets *END; READS (may be NULL) gets the words read.
 * ENDS_STACK: the copy was shortened where the stack mapping ends, so a
 * frame that would lie beyond it does not exist (the stack is complete).
 */
uint32_t unwind_stack(const struct offcpu_ucopy *c, uint32_t len, bool ends_stack,
		      unwind_row_fn rows, void *ctx, uint64_t *ip, uint32_t max,
		      enum unwind_end *end, struct unwind_reads *reads);

/* Whether an unwind that ended so is a function of its registers and reads alone. */
bool unwind_cacheable(enum unwind_end end, const struct unwind_reads *reads);

/* A PT_LOAD segment: where file offsets land in the file's addresses. */
struct unwind_load {
	uint64_t offset, vaddr, filesz;
};

#define UNWIND_MAX_LOADS 16

/* The PT_LOAD segments of the ELF at FD (at most UNWIND_MAX_LOADS) into LOADS. */
size_t unwind_read_loads(int fd, struct unwind_load *loads);

struct proc_map;

/*
 * The file of PID's mapping M, opened: through /proc/PID/map_files (also when
 * deleted or in another mount namespace), else /proc/PID/root.  -1 if neither.
 */
int unwind_open_mapped(uint32_t pid, const struct proc_map *m);

/*
 * The separate debug file of the ELF at FD (mapped by PID as PATH), found
 * as perf and gdb find it: /usr/lib/debug/.build-id/NN/REST.debug
 * (build-id checked), else its .gnu_debuglink, in PID's mount namespace.
 * Its open fd, or -1.
 */
int unwind_open_debug(uint32_t pid, const char *path, int fd);

struct unwinder;

/* TABLE_BUDGET: bytes of CFI rows kept at most (past it, pcs are cut short, counted). */
struct unwinder *unwinder_new(size_t table_budget);

/* unwind_stack for a copy of a live (or remembered) process; counts the end. */
uint32_t unwinder_unwind(struct unwinder *u, const struct offcpu_ucopy *c, bool ends_stack,
			 uint64_t *ip, uint32_t max, enum unwind_end *end,
			 struct unwind_reads *reads);

/* Whether PID's maps are held for address space MM (0: any): its copies need no record first. */
bool unwinder_knows(const struct unwinder *u, uint32_t pid, uint64_t mm);

/* PID exited (or its maps are unreadable): what is kept of it goes at a later sweep. */
void unwinder_forget(struct unwinder *u, uint32_t pid);

/*
 * Process PID forked from PPID at TIME (CLOCK_MONOTONIC, as the copies'
 * time): its copies from then on are unwound with its parent's maps (its
 * own, read now, if the parent's are not known) when it is gone before
 * they are unwound.
 */
void unwinder_fork(struct unwinder *u, uint32_t pid, uint32_t ppid, uint64_t time);

/*
 * Task records (FORK, MMAP2) were lost: a view may lack a mapping, so a
 * process's first copy reads /proc again rather than trust its view.
 */
void unwinder_records_lost(struct unwinder *u);

/* PID exec'ed at TIME: its maps are read again (now, for its copies once it is gone). */
void unwinder_exec(struct unwinder *u, uint32_t pid, uint64_t time);

struct proc_map;

/*
 * PID mapped M at TIME (an MMAP2 record): added to its view of that time
 * (a fork's or an exec's) unless that was read from /proc after it.
 */
void unwinder_mmap(struct unwinder *u, uint32_t pid, uint64_t time, const struct proc_map *m);

/*
 * Frees the maps of pids forgotten before the previous sweep and not read
 * again since (called once per drain: a copy read that far behind its
 * process's end is not expected; it would be cut, counted, not wrong),
 * and gives back the CFI pages lookups faulted in since (cfi_file_drop_pages).
 */
void unwinder_sweep(struct unwinder *u);

/* The processes whose maps it holds (forgotten at exit, exec, pid reuse). */
size_t unwinder_nr_procs(const struct unwinder *u);

struct unwind_counts {
	uint64_t end[UNWIND_NR];
	uint64_t files, table_bytes;	/* files with CFI read, and their rows' bytes */
	uint64_t no_table;		/* files without: no CFI, unreadable */
	uint64_t over_budget;		/* lookups refused: the budget was spent */
	unsigned int machine;		/* ELF machine of the files unwound (0: none yet) */
	uint64_t cut_no_table;		/* UNWIND_NO_CFI at code built without tables */
	uint64_t debug_files;		/* separate debug files whose CFI was read */
	uint64_t debug_rows;		/* steps by a debug file's row (the file's own had none) */
	uint64_t views;			/* maps kept at a fork or exec (unwinder_fork, _exec) */
	uint64_t views_used;		/* processes unwound with those, /proc unread (or gone) */
};

/*
 * What the user can add to their build when stacks were cut for want of
 * tables (UNWIND_NO_CFI) in code of ELF MACHINE.
 */
const char *unwind_cut_hint(unsigned int machine);

const struct unwind_counts *unwinder_counts(const struct unwinder *u);

void unwinder_free(struct unwinder *u);

#endif
