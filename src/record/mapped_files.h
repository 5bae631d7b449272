/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The files a recording mapped, for the BUILD_ID feature.  A path names a
 * file as its process sees it: in another mount namespace (a container)
 * that is /proc/PID/root/PATH, which only exists while the process lives,
 * so each new path is looked at when its MMAP2 arrives.  A file that is not
 * the host's file at that path has its build-id read there and is copied
 * into the build-id cache (perf record does the same), so report and
 * archive find it after the process is gone.  Host files are read at the
 * end, by path, as before.
 */
#ifndef OFFCPU_MAPPED_FILES_H
#define OFFCPU_MAPPED_FILES_H

#include <stdint.h>
#include <stdio.h>

#include "format/perf_data.h"
#include "format/perf_records.h"

struct mapped_files;

struct mapped_files_stats {
	uint64_t private_files;	/* only in another mount namespace */
	uint64_t cached;	/* of which copied into the build-id cache */
	uint64_t cache_failed;	/* could not be copied */
	uint64_t conflicts;	/* paths naming different files in different namespaces */
	uint64_t unchecked;	/* only in another namespace, without a build-id */
};

/* CACHE_DIR: the build-id cache to copy private files into, NULL: none. */
struct mapped_files *mapped_files_new(const char *cache_dir);

/* Looks at the file of an MMAP2 record (other records are ignored); -1: no memory. */
int mapped_files_note(struct mapped_files *mf, const struct perf_event_header *h);

/* One BUILD_ID entry per file that has one. */
void mapped_files_add_build_ids(struct mapped_files *mf, struct pd_writer *w);

/* Prints what went wrong (always) and what was cached (VERBOSE). */
void mapped_files_summary(const struct mapped_files *mf, FILE *out, int verbose);

void mapped_files_stats(const struct mapped_files *mf, struct mapped_files_stats *st);

void mapped_files_free(struct mapped_files *mf);

#endif
