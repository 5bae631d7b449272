/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The offcpu-time event: its attr and the PERF_RECORD_SAMPLE of one off-CPU
 * block, laid out field by field from the sample_type bits, as perf's
 * off_cpu_write() does (and as pd_parse_sample reads them back).
 */
#ifndef OFFCPU_SAMPLE_WRITER_H
#define OFFCPU_SAMPLE_WRITER_H

#include <stdint.h>
#include <linux/perf_event.h>

#include "record/cli.h"
#include "record/stacks.h"

/* Our synthetic sample ids, far from the kernel's small counters. */
#define OFFCPU_ID	(1ull << 62)

/*
 * perf before 5.19 adds PERF_SAMPLE_RAW to every bpf-output event it reads;
 * declaring it (with an empty payload) lets perf 5.x parse our samples.
 */
#define OFFCPU_SAMPLE_TYPE (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | \
			    PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | \
			    PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW)

/* Bytes a sample's RAW payload may take (its u32 size not included). */
#define SAMPLE_RAW_MAX	60

/* Bytes a sample may take: the header, fixed fields, two full chains, RAW. */
#define SAMPLE_MAX_SIZE(max_stack) (8 * (16 + 2 * ((size_t)(max_stack) + 1)) + SAMPLE_RAW_MAX)

struct offcpu_sample {
	uint64_t id;		/* the event's sample id; 0: offcpu-time's (OFFCPU_ID) */
	uint32_t pid, tid, cpu;
	uint64_t time, period;
	const struct stack *kernel, *user;	/* NULL when not recorded */
	const void *raw;	/* RAW payload, NULL: 4 zero bytes */
	uint32_t raw_size;	/* 4 + 8 n bytes (perf pads RAW to 8 with its u32 size) */
};

void offcpu_event_attr(struct perf_event_attr *a, const struct offcpu_opts *o);

/*
 * Writes S as a PERF_RECORD_SAMPLE of sample_type OFFCPU_SAMPLE_TYPE into BUF
 * (SAMPLE_MAX_SIZE bytes, 8-aligned) and returns its header.
 */
struct perf_event_header *sample_write(void *buf, const struct offcpu_sample *s);

#endif
