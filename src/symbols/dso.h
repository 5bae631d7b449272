/* SPDX-License-Identifier: GPL-2.0 */
/* A mapped file's symbols, loaded at its first lookup (dso_load). */
#ifndef OFFCPU_DSO_H
#define OFFCPU_DSO_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "lib/build_id.h"
#include "symbols/symtab.h"

struct pmap_entry;

struct segment {
	uint64_t offset, vaddr, filesz;
};

struct dso {
	char *path;
	struct symtab syms;
	struct segment *segs;
	size_t nr_segs;
	uint8_t want_id[BUILD_ID_MAX];	/* from the recording; len 0: none */
	int want_len;
	bool loaded, pseudo;	/* pseudo: [vdso], named but not a file */
};

/* Where files are looked for, and the first one found nowhere. */
struct dso_finder {
	const char *symfs;	/* --symfs: the one place to look; NULL: none */
	FILE *log;		/* -v: where each file's symbols came from */
	bool own_vdso;		/* the running kernel is the recorded one */
	size_t missing;
	char *first_missing;
};

/* Reads D's symbols (D->loaded set), mapped at M in PID's maps. */
void dso_load(struct dso_finder *f, struct dso *d, uint32_t pid, const struct pmap_entry *m);
/* Runtime ADDR in mapping M to D's link-time address *VA; false: in no PT_LOAD. */
bool dso_vaddr(const struct dso *d, const struct pmap_entry *m, uint64_t addr, uint64_t *va);
void dso_free(struct dso *d);

#endif
