/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Symbols for `offcpu report`, resolved on the device: process maps rebuilt
 * from the recording's COMM/MMAP2/FORK/EXIT records (fed in file order, which
 * is time order, so a sample resolves against the maps valid at its time),
 * ELF .symtab/.dynsym of the mapped files (libelf, each file parsed once),
 * and kallsyms for kernel addresses.  ELF files and the recording are
 * untrusted input.
 */
#ifndef OFFCPU_SYMBOLIZE_H
#define OFFCPU_SYMBOLIZE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define SYM_UNKNOWN "[unknown]"

struct symbolizer;

/* SYMFS prefixes file paths (like perf --symfs); KALLSYMS may be NULL. */
struct symbolizer *sym_new(const char *symfs, const char *kallsyms);
void sym_free(struct symbolizer *s);

/* Mapped files that samples needed but were not found (see --symfs). */
size_t sym_nr_missing(const struct symbolizer *s, const char **first);

/*
 * RAW_NAMES: print mangled names as they are (--no-demangle); LOG (-v, may
 * be NULL): one line per file saying where its symbols came from.
 */
void sym_options(struct symbolizer *s, bool raw_names, FILE *log);

/* The running kernel is the recorded one: [vdso] frames resolve in our vdso. */
void sym_same_kernel(struct symbolizer *s);

/* Kernel symbols loaded from kallsyms (0: kernel frames are [unknown]). */
size_t sym_nr_kernel(const struct symbolizer *s);

/*
 * _text's address in the recording (the kernel MMAP's pgoff): kallsyms of
 * the same kernel booted with another KASLR offset is shifted to match.
 */
void sym_kernel_text(struct symbolizer *s, uint64_t text);

/*
 * The build-id the recording saw for PATH (BUILD_ID feature): a file that
 * differs resolves to [unknown] with one warning instead of wrong names.
 */
int sym_expect_build_id(struct symbolizer *s, const char *path,
			const uint8_t *id, int len);

void sym_comm(struct symbolizer *s, uint32_t pid, uint32_t tid, const char *comm, bool exec);
void sym_mmap(struct symbolizer *s, uint32_t pid, uint64_t start, uint64_t len,
	      uint64_t pgoff, const char *filename);
void sym_fork(struct symbolizer *s, uint32_t pid, uint32_t ppid, uint32_t tid,
	      uint32_t ptid);
void sym_exit(struct symbolizer *s, uint32_t pid, uint32_t tid);

/* The command of thread TID (else of PID), "[unknown]" if never seen. */
const char *sym_comm_of(struct symbolizer *s, uint32_t pid, uint32_t tid);
/* The command of process PID (its main thread), else of TID. */
const char *sym_proc_comm(struct symbolizer *s, uint32_t pid, uint32_t tid);

/* Function name at ADDR in PID's maps, or "[unknown]". */
const char *sym_user(struct symbolizer *s, uint32_t pid, uint64_t addr);
const char *sym_kernel(struct symbolizer *s, uint64_t addr);
/* The file mapped at ADDR in PID's maps, as recorded, or NULL (pprof mappings). */
const char *sym_user_file(struct symbolizer *s, uint32_t pid, uint64_t addr);

#endif
