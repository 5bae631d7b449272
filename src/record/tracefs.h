/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The record layouts of the classic sched tracepoints, read from tracefs's
 * format files, for the BTF-free variant (tp,hash).  The format text is
 * untrusted input (a tracefs can be anything mounted there): the parser is
 * strict, bounded, and fuzzed (tests/fuzz/fuzz_tracefs.c).
 */
#ifndef OFFCPU_TRACEFS_H
#define OFFCPU_TRACEFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Records are at most a page here (perf's buffer is 8 KiB); ours are < 100 bytes. */
#define TRACEFS_MAX_RECORD	4096

struct tracefs_field {
	uint32_t offset;
	uint32_t size;
};

/* What the BTF-free program reads from the three records. */
struct tracefs_sched {
	struct tracefs_field switch_prev_state;	/* long: 4 or 8 bytes */
	struct tracefs_field switch_next_pid;
	struct tracefs_field fork_parent_pid;
	struct tracefs_field fork_child_pid;
	struct tracefs_field free_pid;
	/* perf_event_open's config for each: tracefs need not stay mounted. */
	uint32_t switch_id, fork_id, free_id;
	/*
	 * The perf backend's --wakers: sched_waking, else sched_wakeup
	 * (waking_event names which; "": neither, waking_err says why).
	 * common_type tells its samples from sched_switch's in one ring,
	 * common_flags says hard or soft interrupt context, pid is the wakee.
	 */
	char waking_event[16];
	char waking_err[96];
	uint32_t waking_id;
	struct tracefs_field waking_type, waking_flags, waking_pid;
	char dir[64];		/* the tracefs the formats came from */
	bool mounted;		/* offcpu mounted it (and unmounted it again) */
};

/*
 * Find field NAME in the format text FMT (LEN bytes, need not end in NUL).
 * Returns 0, or -1 with a reason in ERR: missing, given twice, a malformed
 * line, or an offset/size outside a record.
 */
int tracefs_field(const char *fmt, size_t len, const char *name,
		  struct tracefs_field *f, char *err, size_t errlen);

/* The event's "ID: N" line (PERF_TYPE_TRACEPOINT's config).  0 or -1 with ERR. */
int tracefs_event_id(const char *fmt, size_t len, uint32_t *id, char *err, size_t errlen);

/*
 * The fields and ids of sched_switch, sched_process_fork and sched_process_free
 * from their format texts, with the sizes the program can read (pids 4
 * bytes, prev_state 4 or 8).  Returns 0, or -1 with a reason in ERR.
 */
int tracefs_sched_parse(struct tracefs_sched *t,
			const char *sw, size_t sw_len,
			const char *fork, size_t fork_len,
			const char *free_, size_t free_len,
			char *err, size_t errlen);

/*
 * The waking event's id and fields from its format text FMT (LEN bytes),
 * named EVENT in errors.  Returns 0, or -1 with a reason in ERR.
 */
int tracefs_waking_parse(struct tracefs_sched *t, const char *event, const char *fmt,
			 size_t len, char *err, size_t errlen);

/*
 * The same from the running kernel (the waking event where there is one,
 * its absence not an error): /sys/kernel/tracing, then
 * /sys/kernel/debug/tracing; when neither has the events, tracefs is mounted
 * on /sys/kernel/tracing for the reading and unmounted after.  Returns 0, or
 * -1 with a reason in ERR.
 */
int tracefs_sched_read(struct tracefs_sched *t, char *err, size_t errlen);

#endif
