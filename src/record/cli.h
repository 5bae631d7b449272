/* SPDX-License-Identifier: GPL-2.0 */
/* Command line: options of a recording and the subcommands. */
#ifndef OFFCPU_CLI_H
#define OFFCPU_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "lib/id_list.h"

enum offcpu_cmd {
	CMD_RECORD,
	CMD_PROBE,
	CMD_REPORT,
	CMD_ARCHIVE,
	CMD_SELFTEST,
	CMD_HELP,
	CMD_VERSION,
};

enum stack_cache {
	STACK_CACHE_ON,		/* reuse a user stack id when the registers repeat */
	STACK_CACHE_OFF,	/* walk every user stack */
	STACK_CACHE_VERIFY,	/* walk every stack and count reuses that would be wrong */
};

enum unwind_mode {
	UNWIND_DEFAULT,		/* dwarf where the kernel can, else frame pointers */
	UNWIND_DWARF,		/* --call-graph dwarf[,SIZE] */
	UNWIND_FPTR,		/* --call-graph fp */
};

/* --backend: what records the switches (see docs/recording.md, "Without BPF"). */
enum backend {
	BACKEND_AUTO,		/* BPF where the kernel loads it, else perf events */
	BACKEND_BPF,		/* the BPF program only (refused where it cannot load) */
	BACKEND_PERF,		/* perf events only: sched_switch tracepoint, no bpf() */
};

/* --switch-output: what ends one file and starts the next (perf's modes). */
enum switch_mode {
	SWITCH_NONE,
	SWITCH_SIGNAL,		/* SIGUSR2 */
	SWITCH_SIZE,		/* the file's data reaches switch_bytes */
	SWITCH_TIME,		/* every switch_secs seconds */
};

/* --flight-recorder's memory cap, bounds included. */
#define NICE_UNSET		100	/* no --nice: -20 if started at nice 0 */
#define FLIGHT_BYTES_MIN	(64ull << 10)
#define FLIGHT_BYTES_MAX	(16ull << 30)

struct offcpu_opts {
	enum offcpu_cmd cmd;
	const char *output;
	double duration;	/* seconds; 0: until Ctrl-C or the command exits */
	bool system_wide;
	struct id_list pids, tids, cpus;
	uint64_t thresh_ns;
	uint64_t min_block_ns, max_block_ns;
	uint32_t state_mask;
	bool user_only;
	uint32_t max_stack;
	uint32_t stack_entries;	/* per stack map */
	uint32_t freq;		/* -F: on-CPU samples per second, 0: off */
	bool ustack, kstack;
	enum unwind_mode unwind;
	uint32_t copy_bytes;	/* dwarf: user stack bytes copied at each block */
	uint32_t dwarf_buffer;	/* dwarf: ring buffer bytes for the copies */
	bool dwarf_buffer_given;	/* --dwarf-buffer given (the perf backend's default is its own) */
	uint32_t unwind_tables;	/* dwarf: bytes of CFI tables kept at most */
	bool unwind_in_kernel;	/* --unwind-in kernel: the BPF program walks with CFI rows */
	bool unwind_verify;	/* --unwind-in verify: and its stacks are copied and compared */
	uint32_t unwind_rows;	/* --unwind-rows: entries of its row pool */
	int nice;		/* --nice, or NICE_UNSET: -20 if started at 0 */
	bool wakers;		/* --wakers: record who woke each block */
	enum stack_cache stack_cache;
	bool no_buildid_cache;	/* files of other mount namespaces stay uncopied */
	enum switch_mode switch_mode;
	uint64_t switch_bytes;	/* SWITCH_SIZE */
	uint64_t switch_secs;	/* SWITCH_TIME */
	uint32_t switch_max_files;	/* 0: keep them all */
	uint64_t max_size;	/* --max-size: stop once a file's data reaches it, 0: no limit */
	/* --flight-recorder: keep the last flight_ns in flight_bytes, dump on a trigger */
	uint64_t flight_ns;	/* 0: off */
	uint64_t flight_bytes;	/* the cap of the records held in memory */
	uint64_t trigger_ns;	/* --trigger-block: a block this long dumps, 0: none */
	uint64_t trigger_after_ns;	/* what follows a trigger in its file */
	const char *trigger_comm;	/* only blocks of threads or processes so named */
	struct id_list trigger_pids;	/* only blocks of these processes */
	bool trigger_after_set;		/* given: it needs --trigger-block */
	bool thresh_lowered;	/* --off-cpu-thresh lowered to --trigger-block */
	int verbose;
	const char *btf_path;
	const char *variant;	/* forced variant, e.g. "raw_tp,hash" */
	enum backend backend;	/* --backend */
	char **cmdv;		/* -- command to run */
	int argc;		/* the whole command line, for the CMDLINE feature */
	char **argv;
	/* report and archive: their own arguments */
	int report_argc;
	char **report_argv;
};

/* Parses argv into O; prints one clear line and returns -1 on bad input. */
int cli_parse(struct offcpu_opts *o, int argc, char **argv);

/*
 * The option that asks for the BPF program (--variant, --btf, --unwind-in
 * kernel|verify), or NULL: --backend auto then never falls back to perf
 * events, and --backend perf refuses it.
 */
const char *cli_bpf_option(const struct offcpu_opts *o);
void cli_usage(FILE *out);
void cli_free(struct offcpu_opts *o);

#endif
