/* SPDX-License-Identifier: GPL-2.0 */
/*
 * perf.data (file mode, "PERFILE2") writer; the reader is perf_data_reader.h.
 *
 * The writer knows nothing of BPF: callers hand it complete perf records
 * (struct perf_event_header first) already in time order.  Files are written
 * in the host's byte order; perf swaps when it reads another endianness.
 *
 * Layout written: header | attr section (perf_file_attr[] + id arrays) |
 * data section | feature sections (one perf_file_section index, then data).
 */
#ifndef OFFCPU_PERF_DATA_H
#define OFFCPU_PERF_DATA_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <linux/perf_event.h>

#include "format/perf_records.h"

/* Feature bits (perf's HEADER_* numbering from tools/perf/util/header.h). */
enum pd_feature {
	PD_FEAT_TRACING_DATA = 1,
	PD_FEAT_BUILD_ID = 2,
	PD_FEAT_HOSTNAME = 3,
	PD_FEAT_OSRELEASE = 4,
	PD_FEAT_VERSION = 5,
	PD_FEAT_ARCH = 6,
	PD_FEAT_NRCPUS = 7,
	PD_FEAT_CPUDESC = 8,
	PD_FEAT_CPUID = 9,
	PD_FEAT_TOTAL_MEM = 10,
	PD_FEAT_CMDLINE = 11,
	PD_FEAT_EVENT_DESC = 12,
	PD_FEAT_CLOCKID = 23,
	PD_FEAT_CLOCK_DATA = 29,
};

/* perf's user-space record types (not emitted by the kernel). */
#define PD_RECORD_FINISHED_ROUND 68

/*
 * PD_ATTR_SIZE (perf_records.h) is the perf_event_attr.size written to the
 * file.  perf refuses attrs larger than its own struct (perf 5.10 knows 120
 * bytes, 6.1 128), and it reads the attr section sequentially, so attr_size
 * must be this + 16.  VER5 holds every field we use (clockid included);
 * fields beyond it are dropped.
 */

/* An event as declared to the writer and as read back. */
struct pd_event {
	struct perf_event_attr attr;
	char *name;
	uint64_t *ids;
	size_t nr_ids;
};

struct pd_writer;

/*
 * Whether PATH may become a recording: 0, or ENOENT (empty), EISDIR (a
 * directory, or a link to one), EINVAL (a device or fifo, which the final
 * rename would replace).
 */
int pd_check_output(const char *path);

/*
 * Create PATH's temporary sibling (PATH.tmp.XXXXXX, mode 0600, O_EXCL, never
 * following a symlink).  Returns NULL and sets errno on failure.
 */
struct pd_writer *pd_open(const char *path);

/*
 * Declare an event (in the order perf should list them).  IDS are the sample
 * ids that records of this event carry (PERF_SAMPLE_IDENTIFIER).  NAME goes to
 * the EVENT_DESC feature.  Must be called before pd_close; may be called after
 * records were written (ids of per-CPU events opened later).
 */
int pd_add_event(struct pd_writer *w, const char *name,
		 const struct perf_event_attr *attr, const uint64_t *ids,
		 size_t nr_ids);

/*
 * Append one complete record (header.size bytes) to the data section.  On a
 * write error returns -1 with errno set; the message is printed once, by
 * pd_close.
 */
int pd_write(struct pd_writer *w, const struct perf_event_header *rec);

/* Append a PERF_RECORD_FINISHED_ROUND. */
int pd_finish_round(struct pd_writer *w);

/* String features: HOSTNAME, OSRELEASE, VERSION, ARCH, CPUDESC, CPUID. */
int pd_set_string(struct pd_writer *w, enum pd_feature f, const char *s);
int pd_set_nrcpus(struct pd_writer *w, uint32_t available, uint32_t online);
int pd_set_total_mem(struct pd_writer *w, uint64_t kib);
int pd_set_cmdline(struct pd_writer *w, int argc, char *const argv[]);
/* CLOCKID feature: resolution of the sample clock in ns. */
int pd_set_clock_res(struct pd_writer *w, uint64_t res_ns);
/*
 * CLOCK_DATA feature: a pair of simultaneous readings of the sample clock
 * (CLOCKID) and CLOCK_REALTIME so perf script --ns -F +tod can show wall time.
 */
int pd_set_clock_data(struct pd_writer *w, uint32_t clockid,
		      uint64_t realtime_ns, uint64_t clock_ns);
/*
 * BUILD_ID feature entry.  MISC is PERF_RECORD_MISC_USER or _KERNEL; PID is
 * -1 for the host machine, as perf writes it.
 */
int pd_add_build_id(struct pd_writer *w, uint16_t misc, int32_t pid,
		    const uint8_t *id, size_t id_len, const char *filename);

/*
 * The name pd_close renames the file to, instead of the one given to
 * pd_open (a rotated file is named when it ends); -1 when out of memory.
 */
int pd_set_path(struct pd_writer *w, const char *path);

/* Bytes written so far (header excluded). */
uint64_t pd_data_size(const struct pd_writer *w);

/*
 * Write attrs, features and the final header, fsync, keep an existing PATH as
 * PATH.old (as perf does) and rename the temporary file to PATH.  The writer
 * is freed whatever the outcome; on error errno is set and a message of the
 * form "offcpu: PATH: cause" has been printed to stderr.
 */
int pd_close(struct pd_writer *w);

/* Remove the temporary file and free the writer. */
void pd_abort(struct pd_writer *w);

#endif
