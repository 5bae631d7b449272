/* SPDX-License-Identifier: GPL-2.0 */
/* A symbol table: built by symtab_add, then symtab_finish, then looked up. */
#ifndef OFFCPU_SYMTAB_H
#define OFFCPU_SYMTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sym {
	uint64_t addr, size;
	char *name;
	int rank;		/* which alias of an address to show */
	uint32_t seq;		/* order in the file: perf keeps the first of equals */
	bool demangled;		/* name is the readable one (or needs none) */
};

struct symtab {
	struct sym *v;
	size_t n, cap;
};

/* perf's choice among aliases at one address, as a rank (higher: shown). */
int symtab_rank(bool sized, bool weak, bool global);
/* 0, or -1 when full (MAX_SYMS) or out of memory. */
int symtab_add(struct symtab *t, uint64_t addr, uint64_t size, const char *name, int rank);
void symtab_finish(struct symtab *t, uint64_t code_end, uint64_t tail);
struct sym *symtab_lookup(const struct symtab *t, uint64_t addr);
void symtab_free(struct symtab *t);

#endif
