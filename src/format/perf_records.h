/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The on-disk layouts offcpu writes and reads, in one place: the perf.data
 * file header and attr entries (perf's util/header.h) and the fixed part of
 * each record type (perf's perf/event.h), so no module reaches a field by
 * index or byte offset.
 */
#ifndef OFFCPU_PERF_RECORDS_H
#define OFFCPU_PERF_RECORDS_H

#include <stdint.h>
#include <linux/perf_event.h>

/* perf_event_attr.size written (see perf_data.h). */
#define PD_ATTR_SIZE PERF_ATTR_SIZE_VER5
#define MAX_FEAT	256

static const uint64_t PERF_MAGIC2 = 0x32454c4946524550ULL;	/* "PERFILE2" */

struct pd_section {
	uint64_t offset, size;
};

struct pd_file_header {
	uint64_t magic;
	uint64_t size;
	uint64_t attr_size;
	struct pd_section attrs, data, event_types;
	uint64_t adds_features[MAX_FEAT / 64];
};

/* perf_file_attr as written: PD_ATTR_SIZE bytes of attr, then the ids. */
struct pd_file_attr {
	uint8_t attr[PD_ATTR_SIZE];
	struct pd_section ids;
};

_Static_assert(sizeof(struct pd_file_header) == 104, "perf_file_header");
_Static_assert(sizeof(struct pd_file_attr) == PD_ATTR_SIZE + 16, "perf_file_attr");

/*
 * The sample_id trailer of every non-sample record (sample_id_all) for
 * sample_type IDENTIFIER|TID|TIME|CPU, in perf's order.
 */
struct perf_sample_id_all {
	uint32_t pid, tid;
	uint64_t time;
	uint32_t cpu, res;
	uint64_t id;
};

_Static_assert(sizeof(struct perf_sample_id_all) == 32, "sample_id trailer");

struct perf_record_mmap {
	struct perf_event_header header;
	uint32_t pid, tid;
	uint64_t start, len, pgoff;
	char filename[];
};

struct perf_record_mmap2 {
	struct perf_event_header header;
	uint32_t pid, tid;
	uint64_t start, len, pgoff;
	uint32_t maj, min;
	uint64_t ino, ino_generation;
	uint32_t prot, flags;
	char filename[];
};

_Static_assert(sizeof(struct perf_record_mmap2) == 72, "perf_record_mmap2");

struct perf_record_comm {
	struct perf_event_header header;
	uint32_t pid, tid;
	char comm[];
};

/* FORK and EXIT. */
struct perf_record_fork {
	struct perf_event_header header;
	uint32_t pid, ppid;
	uint32_t tid, ptid;
	uint64_t time;
};

/*
 * One entry of the BUILD_ID feature section (perf's
 * perf_record_header_build_id), then its file name, NUL-padded.
 */
#ifndef PERF_RECORD_MISC_BUILD_ID_SIZE
#define PERF_RECORD_MISC_BUILD_ID_SIZE	(1 << 15)	/* SIZE is set */
#endif
struct perf_record_build_id {
	struct perf_event_header header;	/* type 0, misc: kernel or user */
	int32_t pid;
	uint8_t build_id[20];
	uint8_t size;		/* of the id, with PERF_RECORD_MISC_BUILD_ID_SIZE */
	uint8_t reserved[3];
	char filename[];
};

_Static_assert(sizeof(struct perf_record_build_id) == 36, "build_id_event");

struct perf_record_lost {
	struct perf_event_header header;
	uint64_t id, lost;
};

struct perf_record_lost_samples {
	struct perf_event_header header;
	uint64_t lost;
};

#endif
