/* SPDX-License-Identifier: GPL-2.0 */
/*
 * /proc and /proc/kallsyms: the parsers of their lines (lib/ksyms reads
 * kallsyms with the one here), and a thread's process.
 */
#ifndef OFFCPU_PROCFS_H
#define OFFCPU_PROCFS_H

#include <stdint.h>

/* The process a thread belongs to (Tgid of /proc/TID/status), 0 if gone. */
uint32_t proc_tgid(uint32_t tid);

/*
 * Parsers of /proc file contents, pure so that they can be fuzzed
 * (tests/fuzz/fuzz_proc.c): /proc is untrusted input, e.g. a file name
 * chosen by the profiled process appears in its maps.
 */
#define PROC_MAPS_LINE	(4096 + 256)	/* longest maps line read at once */
#define PROC_SYM_MAX	256	/* longest kallsyms name kept, with its NUL */
#define PROC_SYM_FMT	"%255s"	/* scanf width: PROC_SYM_MAX - 1 */
#define PROC_KSYMS_LINE	1024	/* longest kallsyms line read at once */

struct proc_map {
	uint64_t start, end, pgoff, ino;
	unsigned maj, min;
	uint32_t prot;		/* 1 read, 2 write, 4 exec */
	char file[4096];	/* "//anon" when the mapping has no name */
};

/* One line of /proc/PID/maps (NUL-terminated); 0, or -1 if malformed. */
int proc_parse_maps_line(const char *line, struct proc_map *m);

/* "NAME: VALUE" of /proc/PID/status in BUF (NUL-terminated); 0 or -1. */
int proc_parse_status(const char *buf, const char *key, uint32_t *val);

/* /proc/PID/comm: cut at the first newline, in place. */
void proc_parse_comm(char *buf);

/* A /proc or task directory entry's pid/tid, 0 if it is not one. */
uint32_t proc_parse_id(const char *name);

/*
 * "ADDR TYPE NAME..." of /proc/kallsyms (or a copy); SYM holds PROC_SYM_MAX,
 * TYPE may be NULL; 0 or -1.  The one kallsyms parser, report's included.
 */
int proc_parse_kallsyms_line(const char *line, uint64_t *addr, char *type, char *sym);

#endif
