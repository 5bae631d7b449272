/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The process-map model: a process's address space as sorted,
 * non-overlapping mappings, kept by pid, changed by mmap (a new mapping
 * hides what it overlaps), fork (the child starts with a copy) and exit
 * (kept: the last samples may follow), and read from /proc/PID/maps.  The
 * report's symbolizer keeps maps over a recording's time with it; the
 * recorder's unwinder keeps each live process's maps, by address-space
 * generation, read from /proc; the recorder's /proc synthesis reads maps
 * through it; and where a mapping's file is while its process lives
 * (pmap_file_path) is said here once for all of them.
 */
#ifndef OFFCPU_PROCMAPS_H
#define OFFCPU_PROCMAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "lib/hashset.h"
#include "lib/procfs.h"

/* [start, end) at offset PGOFF of FILE, the caller's object (NULL: none). */
struct pmap_entry {
	uint64_t start, end, pgoff;
	void *file;
	uint64_t mmap_start, mmap_end;	/* the mapping as added, before any cut */
};

/* One address space: sorted by start, never overlapping. */
struct pmap {
	struct pmap_entry *v;
	size_t n, cap;
	uint64_t gen;	/* which address space it is, the caller's id (0: unknown) */
	/*
	 * The address space ended (exit; the unwinder: exec too), its maps
	 * kept for samples that follow: a later fork of the pid (or a new
	 * read, the unwinder's) replaces them.
	 */
	bool dead;
};

/* Adds [START, END); what it overlaps is cut away.  -1: no memory or END <= START. */
int pmap_add(struct pmap *m, uint64_t start, uint64_t end, uint64_t pgoff, void *file);
/* The mapping holding ADDR, or NULL. */
const struct pmap_entry *pmap_find(const struct pmap *m, uint64_t addr);
/*
 * DST becomes a copy of SRC (its old mappings dropped): the two share one
 * array until either changes (then it copies, the only step that can fail).
 */
void pmap_copy(struct pmap *dst, const struct pmap *src);
void pmap_reset(struct pmap *m);	/* no mappings */
void pmap_release(struct pmap *m);	/* frees the mappings' array */

/* Address spaces by pid. */
struct pmap_set {
	struct u32_map by_pid;
};

struct pmap *pmap_set_get(struct pmap_set *s, uint32_t pid, bool create);
/*
 * A new process PID forked from PPID: a copy of its parent's maps, unless
 * PID already has live maps (read from /proc at the start: kept).
 */
void pmap_set_fork(struct pmap_set *s, uint32_t pid, uint32_t ppid);
void pmap_set_exit(struct pmap_set *s, uint32_t pid);
void pmap_set_drop(struct pmap_set *s, uint32_t pid);	/* forgets PID's maps */
void pmap_set_free(struct pmap_set *s);

/*
 * /proc/PID/maps (PID 0: this process), FN called on each line parsed
 * (proc_parse_maps_line; malformed lines are skipped), until it returns
 * non-zero, which is returned.  -1 when the file cannot be opened (gone).
 */
typedef int (*proc_maps_fn)(void *ctx, const struct proc_map *m);
int proc_maps_read(uint32_t pid, proc_maps_fn fn, void *ctx);
/* The same over an open maps text (pure: fuzzed in tests/fuzz/fuzz_proc.c). */
int proc_maps_each(FILE *f, proc_maps_fn fn, void *ctx);

/*
 * M := PID's executable mappings of files ("/..."), each FILE from FILE_OF
 * (may return NULL).  -1 when the maps cannot be read, or list none (an
 * exited process not yet reaped has an empty maps file, and the maps last
 * read still describe its queued samples): M unchanged then.
 */
int pmap_read_proc(struct pmap *m, uint32_t pid,
		   void *(*file_of)(void *ctx, const struct proc_map *pm), void *ctx);

/*
 * Where process PID sees the file NAME it maps at [START, END), while it
 * lives: WHICH 0, /proc/PID/map_files/START-END, the mapping's own file
 * (also when deleted, or on a mount only its namespace has); WHICH 1,
 * /proc/PID/root/NAME (the mapping was split or merged since).  Into BUF;
 * -1 past the last, for no pid (0, -1) or when it does not fit.
 */
int pmap_file_path(uint32_t pid, uint64_t start, uint64_t end, const char *name, int which,
		   char *buf, size_t len);

#endif
