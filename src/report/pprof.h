/* SPDX-License-Identifier: GPL-2.0 */
/*
 * `offcpu report --pprof FILE`: the report's stacks as a gzipped pprof
 * profile (google/pprof's profile.proto, encoded by protobuf-c), for `go
 * tool pprof`, Pyroscope or Parca.  Two sample types: off-CPU nanoseconds
 * and samples (a sample is one long block or a thread's sum of short blocks
 * with one stack; the recording does not keep how many blocks a sum holds).
 * Each sample carries the labels thread, tid, process and pid.  Frames are
 * names already resolved by the report: one location per (function, file),
 * no addresses, so pprof needs no binaries to show them.
 */
#ifndef OFFCPU_PPROF_H
#define OFFCPU_PPROF_H

#include <stddef.h>
#include <stdint.h>

struct pprof;

/* A frame: its function, and the file it is in (NULL: not known). */
struct pprof_frame {
	const char *name;
	const char *file;
};

/* Whose sample it is: the labels. */
struct pprof_owner {
	uint32_t pid, tid;
	const char *process, *thread;
};

struct pprof *pprof_new(void);
void pprof_free(struct pprof *p);

/* The build-id (hex) the recording saw for FILE, shown on its mapping. */
int pprof_build_id(struct pprof *p, const char *file, const char *hex);

/* One sample: FRAMES leaf first, NS off-CPU in COUNT samples.  -1: no memory. */
int pprof_add(struct pprof *p, const struct pprof_frame *frames, size_t n,
	      const struct pprof_owner *owner, uint64_t ns, uint64_t count);

/* Informational: when the first sample was taken (ns since the epoch), the
 * time the samples span, and a line for pprof to show. */
void pprof_time(struct pprof *p, uint64_t epoch_ns, uint64_t duration_ns);
int pprof_comment(struct pprof *p, const char *text);

/* Writes the gzipped profile to PATH; -1 with errno set. */
int pprof_write(struct pprof *p, const char *path);

#endif
