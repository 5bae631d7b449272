/* SPDX-License-Identifier: GPL-2.0 */
/* perf.data reader: for `offcpu report`, the tests and the fuzzers. */
#ifndef OFFCPU_PERF_DATA_READER_H
#define OFFCPU_PERF_DATA_READER_H

#include <stdbool.h>

#include "format/perf_data.h"

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
 * ADDR, ID, STREAM_ID, CPU, PERIOD, CALLCHAIN, RAW, REGS_USER, STACK_USER
 * (perf's order); the event is the one whose ids hold the IDENTIFIER (or the
 * only event of the file).  Other bits are refused (-1).  IPS, RAW, UREGS and
 * STACK point into REC (RAW's and STACK's bytes are meaningful only when
 * !needs_swap).
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
	uint64_t uregs_abi;	/* 0: no user registers (a kernel thread) */
	const uint64_t *uregs;	/* one per bit of sample_regs_user, by index */
	uint64_t stack_size, stack_dyn;	/* the user stack copy, and how much is real */
	const uint8_t *stack;
};
int pd_parse_sample(const struct pd_file *f,
		    const struct perf_event_header *rec, struct pd_sample *s);

/*
 * The same for a sample of the event ATTR, read where no file is (the
 * recorder's own ring buffers); SWAPPED as pd_file.needs_swap.  REC must be
 * 8-byte aligned.
 */
int pd_parse_sample_attr(const struct perf_event_attr *attr, bool swapped,
			 const struct perf_event_header *rec, struct pd_sample *s);

#endif
