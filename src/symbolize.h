/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Symbols for `offcpu report`, resolved on the device: process maps rebuilt
 * from the recording's COMM/MMAP2/FORK records (fed in file order, which is
 * time order), ELF .symtab/.dynsym of the mapped files (libelf), and
 * kallsyms for kernel addresses.  ELF files are untrusted input.
 */
#ifndef OFFCPU_SYMBOLIZE_H
#define OFFCPU_SYMBOLIZE_H

#include <stdbool.h>
#include <stdint.h>

struct symbolizer;

/* SYMFS prefixes file paths (like perf --symfs); KALLSYMS may be NULL. */
struct symbolizer *sym_new(const char *symfs, const char *kallsyms);
void sym_free(struct symbolizer *s);

void sym_comm(struct symbolizer *s, uint32_t pid, uint32_t tid, const char *comm, bool exec);
void sym_mmap(struct symbolizer *s, uint32_t pid, uint64_t start, uint64_t len,
	      uint64_t pgoff, const char *filename);
void sym_fork(struct symbolizer *s, uint32_t pid, uint32_t ppid, uint32_t tid);

/* The command of TID (or of PID), "[unknown]" if never seen. */
const char *sym_comm_of(struct symbolizer *s, uint32_t pid, uint32_t tid);

/* Function name at ADDR in PID's maps, or "[unknown]". */
const char *sym_user(struct symbolizer *s, uint32_t pid, uint64_t addr);
const char *sym_kernel(struct symbolizer *s, uint64_t addr);

#endif
