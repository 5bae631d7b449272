/* SPDX-License-Identifier: GPL-2.0 */
/*
 * perf.data (file mode, "PERFILE2") writer and reader.
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
 * perf_event_attr.size written to the file.  perf refuses attrs larger than
 * its own struct (perf 5.10 knows 120 bytes, 6.1 128), and it reads the
 * attr section sequentially, so attr_size must be this + 16.  VER5 holds
 * every field we use (clockid included); fields beyond it are dropped.
 */
#define PD_ATTR_SIZE PERF_ATTR_SIZE_VER5

struct pd_writer;

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

/* ---- reader: for `offcpu report`, the tests and the fuzzers ---- */

struct pd_event {
	struct perf_event_attr attr;
	char *name;
	uint64_t *ids;
	size_t nr_ids;
};

struct pd_build_id {
	uint16_t misc;		/* PERF_RECORD_MISC_USER/KERNEL */
	int32_t pid;
	uint8_t id[20];
	uint8_t id_len;
	char *filename;
};

struct pd_file {
	const uint8_t *map;	/* whole file (mmap'ed or borrowed buffer) */
	size_t size;
	int needs_swap;		/* written in the other byte order */
	struct pd_event *events;	/* names from EVENT_DESC, else NULL */
	size_t nr_events;
	uint64_t data_offset, data_size;
	uint64_t features[4];	/* adds_features bitmap */
	char *hostname, *osrelease, *arch, *version;
	int owns_map;
	/* Optional features; zero/NULL when absent or malformed. */
	uint32_t nr_cpus_avail, nr_cpus_online;
	uint64_t total_mem;	/* kB */
	char **cmdline;
	uint32_t nr_cmdline;
	uint64_t clock_res_ns;
	int has_clock_data;
	uint32_t clockid;
	uint64_t tod_ns, clockid_ns;
	struct pd_build_id *build_ids;
	size_t nr_build_ids;
};

/*
 * Parse a perf.data file we wrote (PERFILE2, file mode).  Untrusted input:
 * every offset and size is checked.  Returns 0, or -1 with a one-line message
 * in ERR (e.g. "not a perf.data file", "truncated data section").
 */
int pd_read_file(struct pd_file *f, const char *path, char *err, size_t errlen);
int pd_read_mem(struct pd_file *f, const void *buf, size_t len, char *err,
		size_t errlen);
void pd_file_free(struct pd_file *f);

/* Whether the file has feature F (adds_features bit). */
int pd_has_feature(const struct pd_file *f, enum pd_feature feat);

/*
 * Iterate records of the data section.  *POS starts at 0.  On success points
 * *REC at the next record (copied into SCRATCH, which must hold 65536 bytes)
 * and returns 1; returns 0 at the end, -1 on a malformed record (message in
 * ERR).  When needs_swap the header and the fixed fields of SAMPLE, MMAP,
 * MMAP2, COMM, FORK, EXIT, LOST, LOST_SAMPLES are in host order, except that
 * a sample's words and the sample_id trailer are swapped as u64 (perf's
 * convention): pd_parse_sample undoes that for its u32 pairs.
 */
int pd_next_record(const struct pd_file *f, uint64_t *pos,
		   const struct perf_event_header **rec, void *scratch,
		   char *err, size_t errlen);

/* The event whose ids contain ID, or NULL. */
const struct pd_event *pd_event_by_id(const struct pd_file *f, uint64_t id);

/*
 * Parsed PERF_RECORD_SAMPLE.  Handles sample_type IDENTIFIER, IP, TID, TIME,
 * ADDR, ID, STREAM_ID, CPU, PERIOD, CALLCHAIN, RAW (perf's order); the event
 * is the one whose ids hold the IDENTIFIER (or the only event of the file).
 * Other bits are refused (-1).  IPS and RAW point into REC (RAW's bytes are
 * meaningful only when !needs_swap).
 *
 * perf before 5.19 (e.g. 5.10) adds RAW|TIME|CPU|PERIOD to the sample_type of
 * every BPF-output event it reads: such an event's samples must carry a RAW
 * field (at least {u32 size = 4, 4 bytes}) for old perf to parse them.
 */
struct pd_sample {
	uint64_t id, ip, time, period;
	uint32_t pid, tid, cpu;
	uint64_t nr;		/* callchain length, context markers included */
	const uint64_t *ips;
	uint64_t addr, stream_id;
	uint32_t raw_size;
	const void *raw;
};
int pd_parse_sample(const struct pd_file *f,
		    const struct perf_event_header *rec, struct pd_sample *s);

#endif
