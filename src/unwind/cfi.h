/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Compact unwinding tables built from an ELF file's call-frame information
 * (.eh_frame, else .debug_frame), read with libdw, or on 32-bit ARM from
 * its EHABI tables (.ARM.exidx, ehabi.c; FP is r7 there).  One row says, from its
 * pc on (file virtual address, until the next row's pc), how to find the
 * caller's frame: CFA = SP or FP + offset, and where the return address and
 * the frame pointer were saved relative to the CFA.  What a row cannot
 * express (DWARF expressions, signal frames) is a row of its own kind, so
 * an unwinder can fall back to frame pointers there and count it.
 */
#ifndef OFFCPU_CFI_H
#define OFFCPU_CFI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum cfi_kind {
	CFI_NORMAL,	/* the rules below apply */
	CFI_END,	/* outermost frame: CFA or return address undefined */
	CFI_GAP,	/* no FDE covers this pc */
	CFI_EXPR,	/* CFA or RA/FP given by a DWARF expression */
	CFI_SIGNAL,	/* signal trampoline frame */
};

enum cfi_base { CFI_BASE_SP = 1, CFI_BASE_FP = 2 };

/* How the caller's RA or FP is recovered. */
enum cfi_rule {
	CFI_SAME,	/* unchanged: still in its register */
	CFI_AT_CFA,	/* saved at CFA + off */
	CFI_UNDEF,	/* not recoverable */
};

struct cfi_row {
	uint64_t pc;
	int32_t cfa_off, ra_off, fp_off;
	uint8_t kind, cfa_base, ra_rule, fp_rule;
};

struct cfi_stats {
	size_t fdes;		/* FDEs turned into rows */
	size_t bad_fdes;	/* FDEs unreadable, or whose program fails: gaps */
	size_t expr_rows;	/* rows of kind CFI_EXPR */
	size_t no_unwind;	/* EHABI: entries that cannot unwind (no table there) */
};

struct cfi_table {
	struct cfi_row *rows;	/* sorted by pc; a row ends where the next starts */
	size_t n, cap;
	unsigned int machine;	/* EM_X86_64, EM_AARCH64, EM_S390, EM_RISCV, EM_ARM */
	struct cfi_stats stats;
};

/* DWARF register numbers of one architecture. */
struct cfi_regs {
	int sp, fp, ra;
};

/* 0 and the registers for a supported ELF machine, -1 otherwise. */
int cfi_regs_of(unsigned int machine, struct cfi_regs *regs);

/*
 * The table builders' error (cfi.c, ehabi.c): FMT's message into ERR (LEN
 * bytes); returns -1, their error return.
 */
int cfi_fail(char *err, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/*
 * Builds T from the ELF file at PATH (or FD, an open ELF of any origin, when
 * PATH is NULL).  Returns 0, or -1 with one line in ERR naming the problem.
 * At most MAX_ROWS rows (0: no limit); more is an error, not a cut table.
 */
int cfi_table_build(const char *path, int fd, size_t max_rows, struct cfi_table *t,
		    char *err, size_t errlen);

/*
 * Appends ROW to T unless the last row already says the same (a row at the
 * last row's pc replaces it): 0, -2 past MAX_ROWS (0: no limit), -1 out of
 * memory.
 */
int cfi_table_push(struct cfi_table *t, size_t max_rows, const struct cfi_row *row);

/* The row covering PC, or NULL when PC lies before the first row. */
const struct cfi_row *cfi_table_lookup(const struct cfi_table *t, uint64_t pc);

void cfi_table_free(struct cfi_table *t);

/*
 * One file's CFI for an unwinder: its FDEs are read (and every CFA program
 * checked) at open, the rows of an FDE built when a pc in it is first
 * looked up, so a large file costs only what is used.  FD must stay open
 * while the file is in use.
 */
struct cfi_file;

/* NULL with one line in ERR naming the problem. */
struct cfi_file *cfi_file_open(int fd, char *err, size_t errlen);
unsigned int cfi_file_machine(const struct cfi_file *f);

/* Bytes held (FDE index and rows built so far). */
size_t cfi_file_bytes(const struct cfi_file *f);

/*
 * Whether a pc without table in F is its builder's own mark, not a build
 * without tables: an EHABI file whose other functions have tables marks
 * the ones without CANTUNWIND (Debian's armhf libc: start_thread,
 * epoll_wait; crt1.o's _start).  Adding flags to the profiled program's
 * build changes nothing there.
 */
bool cfi_file_gap_is_marked(const struct cfi_file *f);

/*
 * The row covering PC (a CFI_GAP row where no FDE does), or NULL when its
 * FDE's rows cannot be built within BUDGET more bytes (or are broken).
 */
const struct cfi_row *cfi_file_lookup(struct cfi_file *f, uint64_t pc, size_t budget);
/*
 * Give back the pages of F's CFI section that lookups faulted in since
 * the last call (NULL: nothing); the caller calls it now and then (the
 * unwinder: every drain, once a second), not after each FDE.
 */
void cfi_file_drop_pages(struct cfi_file *f);
/*
 * F's FDEs (sorted by start, overlapping ones dropped; none for EHABI), and
 * the start of the I-th: a large file's rows are built and loaded by parts
 * of consecutive FDEs (src/unwind/ktables.c).
 */
size_t cfi_file_fdes(const struct cfi_file *f);
/* An EHABI file's rows (all built at open), or NULL for a file of FDEs. */
const struct cfi_table *cfi_file_ehabi(const struct cfi_file *f);
uint64_t cfi_file_fde_start(const struct cfi_file *f, size_t i);
uint64_t cfi_file_fde_end(const struct cfi_file *f, size_t i);
/*
 * The rows of F's FDEs [FIRST, FIRST + N) into T, as cfi_table_build's,
 * from LO (a gap row up to the first FDE) on: 0, -2 past MAX_ROWS (0: no
 * limit), -1 otherwise.  T is the caller's to free.
 */
int cfi_file_table(struct cfi_file *f, size_t first, size_t n, uint64_t lo, size_t max_rows,
		   struct cfi_table *t);
void cfi_file_close(struct cfi_file *f);

/*
 * One FDE's CFA program alone, as an .eh_frame of MACHINE holds it (64-bit,
 * little-endian, absolute DW_CFA_set_loc): for tests and fuzzing the
 * interpreter with any bytes (cfi.c scans a file's programs first).
 */
struct cfi_program {
	unsigned int machine;
	const uint8_t *cie, *fde;	/* the CIE's initial instructions, the FDE's */
	size_t cie_len, fde_len;
	uint64_t code_align, ra;	/* the CIE's factors and return address column */
	int64_t data_align;
	bool signal;			/* the CIE's 'S' */
	uint64_t start, end;		/* the FDE's range */
};

/* PROG's rows into T, as cfi_file_table's for one FDE: 0, -2 past MAX_ROWS, -1 otherwise. */
int cfi_program_table(const struct cfi_program *prog, size_t max_rows, struct cfi_table *t);

/*
 * One unwinding step, the reference of what the BPF unwinder does.  The
 * registers of a frame: its pc (a file address: the caller looks up
 * pc - 1 for every frame but the innermost, as a return address points
 * past its call), stack and frame pointers, and the link register, whose
 * value only the innermost frame still holds (arm64 x30, s390x r14).
 */
struct cfi_frame {
	uint64_t pc, sp, fp, lr;
};

enum cfi_step_result {
	CFI_STEP_OK,		/* *F now holds the caller's registers (absolute pc) */
	CFI_STEP_END,		/* the outermost frame: the stack is complete */
	CFI_STEP_GAP,		/* no FDE covers the pc */
	CFI_STEP_UNSUPPORTED,	/* an expression, a signal frame, RA in LR past the top */
	CFI_STEP_UNREADABLE,	/* the stack could not be read */
};

/* Reads one 8-byte word of the unwound thread's memory; 0 on success. */
typedef int (*cfi_read_fn)(void *ctx, uint64_t addr, uint64_t *val);

/* Steps from F (pc already relative to ROW's file) to its caller. */
enum cfi_step_result cfi_step(unsigned int machine, const struct cfi_row *row, bool innermost,
			      struct cfi_frame *f, cfi_read_fn read, void *ctx);

#endif
