// SPDX-License-Identifier: GPL-2.0
/* Command line parsing: perf's option spellings where perf has one. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record/cli.h"
#include "offcpu.h"

enum {
	OPT_THRESH = 256,
	OPT_MIN_BLOCK,
	OPT_MAX_BLOCK,
	OPT_STATE,
	OPT_KTHREADS,
	OPT_MAX_STACK,
	OPT_CALL_GRAPH,
	OPT_BTF,
	OPT_VARIANT,
	OPT_BACKEND,
	OPT_STACK_CACHE,
	OPT_STACK_ENTRIES,
	OPT_DWARF_BUFFER,
	OPT_UNWIND_TABLES,
	OPT_UNWIND_IN,
	OPT_UNWIND_ROWS,
	OPT_NICE,
	OPT_WAKERS,
	OPT_NO_BUILDID_CACHE,
	OPT_SWITCH_OUTPUT,
	OPT_SWITCH_MAX_FILES,
	OPT_MAX_SIZE,
	OPT_FLIGHT,
	OPT_TRIGGER_BLOCK,
	OPT_TRIGGER_AFTER,
	OPT_TRIGGER_COMM,
	OPT_TRIGGER_PID,
	OPT_VERSION,
	OPT_SELFTEST,
};


static const struct option long_opts[] = {
	{ "output", required_argument, NULL, 'o' },
	{ "duration", required_argument, NULL, 'd' },
	{ "all-cpus", no_argument, NULL, 'a' },
	{ "pid", required_argument, NULL, 'p' },
	{ "tid", required_argument, NULL, 't' },
	{ "cpu", required_argument, NULL, 'C' },
	{ "off-cpu-thresh", required_argument, NULL, OPT_THRESH },
	{ "min-block", required_argument, NULL, OPT_MIN_BLOCK },
	{ "max-block", required_argument, NULL, OPT_MAX_BLOCK },
	{ "state", required_argument, NULL, OPT_STATE },
	{ "user-threads-only", no_argument, NULL, 'u' },
	{ "include-kernel-threads", no_argument, NULL, OPT_KTHREADS },
	{ "max-stack", required_argument, NULL, OPT_MAX_STACK },
	{ "call-graph", required_argument, NULL, OPT_CALL_GRAPH },
	{ "btf", required_argument, NULL, OPT_BTF },
	{ "variant", required_argument, NULL, OPT_VARIANT },
	{ "backend", required_argument, NULL, OPT_BACKEND },
	{ "stack-cache", required_argument, NULL, OPT_STACK_CACHE },
	{ "stack-entries", required_argument, NULL, OPT_STACK_ENTRIES },
	{ "dwarf-buffer", required_argument, NULL, OPT_DWARF_BUFFER },
	{ "unwind-tables", required_argument, NULL, OPT_UNWIND_TABLES },
	{ "unwind-in", required_argument, NULL, OPT_UNWIND_IN },
	{ "unwind-rows", required_argument, NULL, OPT_UNWIND_ROWS },
	{ "nice", required_argument, NULL, OPT_NICE },
	{ "wakers", no_argument, NULL, OPT_WAKERS },
	{ "no-buildid-cache", no_argument, NULL, OPT_NO_BUILDID_CACHE },
	{ "switch-output", optional_argument, NULL, OPT_SWITCH_OUTPUT },
	{ "switch-max-files", required_argument, NULL, OPT_SWITCH_MAX_FILES },
	{ "max-size", required_argument, NULL, OPT_MAX_SIZE },
	{ "flight-recorder", required_argument, NULL, OPT_FLIGHT },
	{ "trigger-block", required_argument, NULL, OPT_TRIGGER_BLOCK },
	{ "trigger-after", required_argument, NULL, OPT_TRIGGER_AFTER },
	{ "trigger-comm", required_argument, NULL, OPT_TRIGGER_COMM },
	{ "trigger-pid", required_argument, NULL, OPT_TRIGGER_PID },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ "selftest", no_argument, NULL, OPT_SELFTEST },
	{ "freq", required_argument, NULL, 'F' },
	{ "on-cpu", required_argument, NULL, 'F' },
	{ NULL, 0, NULL, 0 },
};

void cli_usage(FILE *out)
{
	fputs(
"Usage: offcpu [options] [-- command [args]]   record off-CPU time to perf.data\n"
"       offcpu probe [--btf FILE|none] [-v]    what this kernel supports, what would be used\n"
"       offcpu report [-i perf.data] [...]     top off-CPU stacks (see offcpu report --help)\n"
"       offcpu archive [-i perf.data] [-o FILE]  the recorded ELF files by build-id, for perf report elsewhere\n"
"       offcpu selftest                        check the embedded BPF objects and BTF archive\n"
"\n"
"  -o, --output FILE         output file (default perf.data; the old one is kept as FILE.old)\n"
"  -d, --duration SECS       stop after SECS seconds (default: Ctrl-C, or when the command exits)\n"
"  -a, --all-cpus            whole system (the default without -p, -t or a command)\n"
"  -p, --pid PID,...         existing processes, their threads and children forked later\n"
"  -t, --tid TID,...         these threads only\n"
"  -C, --cpu LIST            only blocks that start on these CPUs (e.g. 0-3,6)\n"
"      --off-cpu-thresh MS   blocks of at least MS ms become samples at once with their\n"
"                            own timestamp; shorter ones are summed per stack (default 500)\n"
"      --min-block US        ignore blocks shorter than US microseconds (default 1 ns)\n"
"      --max-block US        ignore blocks longer than US microseconds\n"
"      --state S|D|SD        sleep states to record: S interruptible, D uninterruptible (default SD)\n"
"  -u, --user-threads-only   ignore kernel threads (default)\n"
"      --include-kernel-threads  record kernel threads too\n"
"      --max-stack N         deepest stack recorded, frames (default 64, at most 127)\n"
"      --stack-entries N     distinct stacks kept per stack map, user and kernel (default 2048);\n"
"                            stacks that collide in one go to a spill map an eighth its size\n"
"      --call-graph WHAT     kernel,user (default), user or kernel, and how user stacks are\n"
"                            unwound: dwarf[,SIZE] (copy SIZE bytes of stack, default 8192, and\n"
"                            unwind with the files' CFI; the default where the kernel can) or fp\n"
"                            (frame pointers), e.g. --call-graph user,dwarf,16384\n"
"      --dwarf-buffer MIB    dwarf: ring buffer for the stack copies (default 4, a power of 2)\n"
"      --unwind-tables MIB   dwarf: memory for CFI tables (default 32)\n"
"      --unwind-in user|kernel|verify  dwarf: where user stacks are unwound (default user);\n"
"                            kernel: by the BPF program from CFI rows loaded per file\n"
"                            (x86_64, arm64, riscv64, s390x), a stack it cannot walk\n"
"                            copied as before;\n"
"                            verify: as kernel (samples carry the walked stacks), and\n"
"                            also copy the walked stacks and count those that differ\n"
"                            from their unwinding here (-v prints it)\n"
"      --unwind-rows N       --unwind-in kernel: CFI rows held in the kernel, 16 bytes each\n"
"                            (default 262144: 4 MiB of locked memory)\n"
"      --nice N              the recorder's own threads' nice, -20 to 19 (default -20 when\n"
"                            started at 0, so a busy machine does not starve the reader\n"
"                            of the ring; else the nice it was started with); the command\n"
"                            it runs keeps the caller's\n"
"  -F, --freq, --on-cpu HZ   also sample on-CPU stacks HZ times a second (cpu-clock event)\n"
"      --wakers              also record who woke each block: the waker's stacks go to a\n"
"                            second event, offcpu-waker (see offcpu report --wakers)\n"
"      --btf FILE|none       BTF for kernels without /sys/kernel/btf/vmlinux; none: the BTF-free variant\n"
"      --variant ATTACH,STORE  force a program variant: tp_btf,task | tp_btf,hash | raw_tp,hash | tp,hash\n"
"      --backend bpf|perf|auto  what records the switches: the BPF program, or perf events\n"
"                            alone (sched:sched_switch with stack copies, paired here; for\n"
"                            kernels without bpf() or older than 5.8); auto (default): BPF\n"
"                            where it loads, else perf (-v and offcpu probe say which, why)\n"
"      --stack-cache on|off|verify  reuse a thread's last user stack when it blocks again\n"
"                            with the same registers (default on); verify: walk anyway\n"
"                            and count reuses that would have been wrong (-v prints them)\n"
"      --no-buildid-cache    do not copy the files of other mount namespaces (containers)\n"
"                            into the build-id cache ($PERF_BUILDID_DIR or ~/.debug)\n"
"      --switch-output[=signal|SIZE|TIME]  rotate: end the file and start the next at\n"
"                            SIGUSR2 (signal, the default), when its data reaches SIZE\n"
"                            (B, K, M, G: 100M) or every TIME (s, m, h, d: 10s); files are\n"
"                            named FILE.YYYYmmddHHMMSSCC (when each ended) and each stands\n"
"                            alone: a thread blocked across a switch has its time up to\n"
"                            the switch as an offcpu-blocked sample in the file that\n"
"                            ends, the rest as offcpu-time in the file where it wakes\n"
"      --switch-max-files N  keep only the N newest rotated (or flight recorder) files,\n"
"                            removing the oldest\n"
"      --max-size SIZE       stop cleanly, the file complete, once its data reaches SIZE\n"
"                            (B, K, M, G; with --switch-output: any one file's)\n"
"      --flight-recorder SECS[,SIZE]  keep only the last SECS seconds of records in memory,\n"
"                            at most SIZE bytes of them (default 32M; the oldest go first),\n"
"                            and write them to FILE.YYYYmmddHHMMSSCC, standing alone, at\n"
"                            SIGUSR2 or a trigger (--trigger-block); then go on recording\n"
"      --trigger-block MS    flight recorder: a block of at least MS ms that ends writes\n"
"                            a file (--off-cpu-thresh is lowered to MS if above)\n"
"      --trigger-after SECS  what follows a trigger in its file (default 1)\n"
"      --trigger-comm COMM   only blocks of a thread or process named COMM trigger\n"
"      --trigger-pid PID,...  only blocks of these processes trigger\n"
"  -v, --verbose             print what was chosen and why, and map memory\n"
"  -h, --help                this text\n"
"      --version             version and library versions\n",
		out);
}

/* One line naming the option and the bad value; the caller exits non-zero. */
static int bad(const char *opt, const char *val, const char *why)
{
	fprintf(stderr, "offcpu: invalid %s '%s': %s\n", opt, val, why);
	return -1;
}

static int parse_u64(const char *opt, const char *s, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	if (!*s || *s == '-')
		return bad(opt, s, "expected a non-negative integer");
	v = strtoull(s, &end, 10);
	if (errno || *end)
		return bad(opt, s, "expected a non-negative integer");
	if (v > max)
		return bad(opt, s, "too large");
	*out = v;
	return 0;
}

static int parse_seconds(const char *opt, const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v))
		return bad(opt, s, "expected a number of seconds");
	if (v <= 0)
		return bad(opt, s, "must be greater than 0");
	if (v > 365 * 86400.0)
		return bad(opt, s, "too large");
	*out = v;
	return 0;
}

/*
 * A number with one of TAGS' units (perf's parse_tag_value: "100M", "10s";
 * the unit is case-sensitive, 'm' minutes and 'M' MiB), as *OUT in the
 * smallest unit.  BARE: a number alone is taken in the smallest unit.
 */
struct unit {
	char tag;
	uint64_t mult;
};

static int parse_units(const char *s, const struct unit *tags, bool bare, uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	if (*s < '0' || *s > '9')
		return -1;
	v = strtoull(s, &end, 10);
	if (errno)
		return -1;
	if (!*end && bare) {
		*out = v;
		return 0;
	}
	for (; tags->tag; tags++) {
		if (end[0] != tags->tag || end[1])
			continue;
		if (v > UINT64_MAX / tags->mult)
			return -1;
		*out = v * tags->mult;
		return 0;
	}
	return -1;
}

static const struct unit size_units[] = {
	{ 'B', 1 }, { 'K', 1ull << 10 }, { 'M', 1ull << 20 }, { 'G', 1ull << 30 }, { 0, 0 },
};
static const struct unit time_units[] = {
	{ 's', 1 }, { 'm', 60 }, { 'h', 3600 }, { 'd', 86400 }, { 0, 0 },
};

/* --switch-output[=signal|SIZE|TIME], as perf spells it. */
static int parse_switch_output(struct offcpu_opts *o, const char *s)
{
	uint64_t v;

	if (!s || !strcmp(s, "signal")) {
		o->switch_mode = SWITCH_SIGNAL;
		return 0;
	}
	if (!parse_units(s, size_units, false, &v)) {
		o->switch_mode = SWITCH_SIZE;
		o->switch_bytes = v;
	} else if (!parse_units(s, time_units, false, &v)) {
		o->switch_mode = SWITCH_TIME;
		o->switch_secs = v;
	} else {
		return bad("--switch-output", s,
			   "expected signal, a size (100M: B, K, M, G) or a time (10s: s, m, h, d)");
	}
	return v ? 0 : bad("--switch-output", s, "must be greater than 0");
}

static int parse_size(const char *opt, const char *s, uint64_t *out)
{
	if (parse_units(s, size_units, true, out))
		return bad(opt, s, "expected a size in bytes, or with a unit B, K, M, G (100M)");
	return *out ? 0 : bad(opt, s, "must be greater than 0");
}

/* --flight-recorder SECS[,SIZE]: the window, and the memory cap of its records. */
static int parse_flight(struct offcpu_opts *o, const char *s)
{
	char secs[64];
	const char *comma = strchr(s, ',');
	size_t len = comma ? (size_t)(comma - s) : strlen(s);
	double v;

	if (len >= sizeof(secs))
		return bad("--flight-recorder", s, "expected SECS or SECS,SIZE (10 or 10,64M)");
	memcpy(secs, s, len);
	secs[len] = '\0';
	if (parse_seconds("--flight-recorder", secs, &v))
		return -1;
	o->flight_ns = v * 1e9 > 1 ? (uint64_t)(v * 1e9) : 1;
	if (!comma)
		return 0;
	if (parse_units(comma + 1, size_units, true, &o->flight_bytes))
		return bad("--flight-recorder", s, "expected SECS,SIZE with a size in B, K, M, G (10,64M)");
	/* Below 64 KiB one large stack sample would not fit beside the others. */
	if (o->flight_bytes < FLIGHT_BYTES_MIN || o->flight_bytes > FLIGHT_BYTES_MAX)
		return bad("--flight-recorder", s, "the size must be between 64K and 16G");
	return 0;
}

/* --trigger-after: 0 (the file ends at the trigger) or more seconds. */
static int parse_after(struct offcpu_opts *o, const char *s)
{
	double v;

	char *end;

	o->trigger_after_set = true;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v) || v < 0)
		return bad("--trigger-after", s, "expected a number of seconds, 0 or more");
	if (v > 3600)
		return bad("--trigger-after", s, "too large (at most 3600)");
	o->trigger_after_ns = v * 1e9;
	return 0;
}

/* "1,2,5-7": ranges allowed when RANGES (CPU lists). */
static int parse_list(const char *opt, const char *s, bool ranges, struct id_list *l)
{
	const char *why;

	if (id_list_parse(l, s, ranges ? ID_RANGES : 0, ranges ? 0 : 1,
			  ranges ? ID_CPU_MAX : ID_PID_MAX, &why))
		return bad(opt, s, why);
	return 0;
}

static int parse_state(const char *s, uint32_t *mask)
{
	*mask = 0;
	for (const char *c = s; *c; c++) {
		if (*c == 'S' || *c == 's')
			*mask |= 1;
		else if (*c == 'D' || *c == 'd')
			*mask |= 2;
		else
			return bad("--state", s, "expected S, D or SD");
	}
	return *mask ? 0 : bad("--state", s, "expected S, D or SD");
}

/* One token of --call-graph after dwarf: the copy size, as perf checks it. */
static int parse_copy_size(struct offcpu_opts *o, const char *s, const char *all)
{
	uint64_t v;

	if (parse_u64("--call-graph", s, OFFCPU_COPY_MAX, &v))
		return -1;
	if (v < 8 || v % 8)
		return bad("--call-graph", all, "the dwarf stack size must be a multiple of 8, at least 8");
	o->copy_bytes = v;
	return 0;
}

/* perf's spellings, comma-separated: kernel, user, dwarf[,SIZE], fp. */
static int parse_call_graph(struct offcpu_opts *o, const char *s)
{
	char buf[128], *tok, *save = NULL;
	bool kernel = false, user = false, after_dwarf = false;

	if (strlen(s) >= sizeof(buf) || !*s)
		return bad("--call-graph", s, "expected kernel,user, user or kernel, dwarf[,SIZE] or fp");
	strcpy(buf, s);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		bool was_dwarf = after_dwarf;

		after_dwarf = false;
		if (!strcmp(tok, "kernel")) {
			kernel = true;
		} else if (!strcmp(tok, "user")) {
			user = true;
		} else if (!strcmp(tok, "both")) {
			kernel = user = true;
		} else if (!strcmp(tok, "dwarf")) {
			o->unwind = UNWIND_DWARF;
			after_dwarf = true;
		} else if (!strcmp(tok, "fp")) {
			o->unwind = UNWIND_FPTR;
		} else if (was_dwarf && *tok >= '0' && *tok <= '9') {
			if (parse_copy_size(o, tok, s))
				return -1;
		} else {
			return bad("--call-graph", s,
				   "expected kernel,user, user or kernel, dwarf[,SIZE] or fp");
		}
	}
	/* Only an unwinding method named: both stacks, as by default. */
	if (!kernel && !user)
		kernel = user = true;
	o->kstack = kernel;
	o->ustack = user;
	return 0;
}

static int parse_stack_cache(struct offcpu_opts *o, const char *s)
{
	if (!strcmp(s, "on"))
		o->stack_cache = STACK_CACHE_ON;
	else if (!strcmp(s, "off"))
		o->stack_cache = STACK_CACHE_OFF;
	else if (!strcmp(s, "verify"))
		o->stack_cache = STACK_CACHE_VERIFY;
	else
		return bad("--stack-cache", s, "expected on, off or verify");
	return 0;
}

static int parse_backend(struct offcpu_opts *o, const char *s)
{
	if (!strcmp(s, "auto"))
		o->backend = BACKEND_AUTO;
	else if (!strcmp(s, "bpf"))
		o->backend = BACKEND_BPF;
	else if (!strcmp(s, "perf"))
		o->backend = BACKEND_PERF;
	else
		return bad("--backend", s, "expected bpf, perf or auto");
	return 0;
}

/* --nice: -20 to 19, as nice(1) takes it. */
static int parse_nice(const char *s, int *nice)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < -20 || v > 19)
		return bad("--nice", s, "expected a number from -20 to 19");
	*nice = (int)v;
	return 0;
}

static void defaults(struct offcpu_opts *o, int argc, char **argv)
{
	memset(o, 0, sizeof(*o));
	o->cmd = CMD_RECORD;
	o->output = "perf.data";
	o->thresh_ns = 500ull * 1000000;
	o->min_block_ns = 1;
	o->max_block_ns = UINT64_MAX;
	o->state_mask = 3;
	o->user_only = true;
	o->max_stack = 64;
	o->stack_entries = 2048;
	o->ustack = o->kstack = true;
	o->copy_bytes = 8192;
	o->dwarf_buffer = 4u << 20;
	o->unwind_tables = 32u << 20;
	o->unwind_rows = 262144;
	o->nice = NICE_UNSET;
	o->flight_bytes = 32u << 20;
	o->trigger_after_ns = 1000000000ull;
	o->argc = argc;
	o->argv = argv;
}

static int parse_one(struct offcpu_opts *o, int c, const char *arg)
{
	uint64_t v;

	switch (c) {
	case 'o':
		if (!*arg)
			return bad("-o", arg, "empty file name");
		o->output = arg;
		return 0;
	case 'd':
		return parse_seconds("--duration", arg, &o->duration);
	case 'a':
		o->system_wide = true;
		return 0;
	case 'p':
		return parse_list("--pid", arg, false, &o->pids);
	case 't':
		return parse_list("--tid", arg, false, &o->tids);
	case 'C':
		return parse_list("--cpu", arg, true, &o->cpus);
	case OPT_THRESH:
		if (parse_u64("--off-cpu-thresh", arg, UINT64_MAX / 1000000, &v))
			return -1;
		o->thresh_ns = v * 1000000;
		return 0;
	case OPT_MIN_BLOCK:
		if (parse_u64("--min-block", arg, UINT64_MAX / 1000, &v))
			return -1;
		o->min_block_ns = v ? v * 1000 : 1;
		return 0;
	case OPT_MAX_BLOCK:
		if (parse_u64("--max-block", arg, UINT64_MAX / 1000, &v))
			return -1;
		if (!v)
			return bad("--max-block", arg, "must be greater than 0");
		o->max_block_ns = v * 1000;
		return 0;
	case OPT_STATE:
		return parse_state(arg, &o->state_mask);
	case 'u':
		o->user_only = true;
		return 0;
	case OPT_KTHREADS:
		o->user_only = false;
		return 0;
	case OPT_MAX_STACK:
		if (parse_u64("--max-stack", arg, 127, &v))
			return -1;
		if (!v)
			return bad("--max-stack", arg, "must be at least 1");
		o->max_stack = v;
		return 0;
	case OPT_STACK_ENTRIES:
		if (parse_u64("--stack-entries", arg, 1u << 18, &v))
			return -1;
		if (!v)
			return bad("--stack-entries", arg, "must be at least 1");
		o->stack_entries = v;
		return 0;
	case OPT_CALL_GRAPH:
		return parse_call_graph(o, arg);
	case OPT_DWARF_BUFFER:
		if (parse_u64("--dwarf-buffer", arg, 1024, &v))
			return -1;
		if (!v || (v & (v - 1)))
			return bad("--dwarf-buffer", arg, "expected a power of 2 between 1 and 1024 (MiB)");
		o->dwarf_buffer = v << 20;
		o->dwarf_buffer_given = true;
		return 0;
	case OPT_UNWIND_TABLES:
		if (parse_u64("--unwind-tables", arg, 4096, &v))
			return -1;
		if (!v)
			return bad("--unwind-tables", arg, "must be at least 1 (MiB)");
		o->unwind_tables = v << 20;
		return 0;
	case 'F':
		if (parse_u64("--freq", arg, 100000, &v))
			return -1;
		if (!v)
			return bad("--freq", arg, "must be at least 1");
		o->freq = v;
		return 0;
	case OPT_BTF:
		o->btf_path = arg;
		return 0;
	case OPT_VARIANT:
		o->variant = arg;
		return 0;
	case OPT_BACKEND:
		return parse_backend(o, arg);
	case OPT_STACK_CACHE:
		return parse_stack_cache(o, arg);
	case OPT_UNWIND_IN:
		if (strcmp(arg, "user") && strcmp(arg, "kernel") && strcmp(arg, "verify"))
			return bad("--unwind-in", arg, "expected user, kernel or verify");
		o->unwind_in_kernel = strcmp(arg, "user");
		o->unwind_verify = !strcmp(arg, "verify");
		return 0;
	case OPT_UNWIND_ROWS:
		if (parse_u64("--unwind-rows", arg, 1u << 24, &v))
			return -1;
		if (!v)
			return bad("--unwind-rows", arg, "must be at least 1");
		o->unwind_rows = v;
		return 0;
	case OPT_NICE:
		return parse_nice(arg, &o->nice);
	case OPT_WAKERS:
		o->wakers = true;
		return 0;
	case OPT_NO_BUILDID_CACHE:
		o->no_buildid_cache = true;
		return 0;
	case OPT_SWITCH_OUTPUT:
		return parse_switch_output(o, arg);
	case OPT_SWITCH_MAX_FILES:
		if (parse_u64("--switch-max-files", arg, 1000000, &v))
			return -1;
		if (!v)
			return bad("--switch-max-files", arg, "must be at least 1");
		o->switch_max_files = v;
		return 0;
	case OPT_MAX_SIZE:
		return parse_size("--max-size", arg, &o->max_size);
	case OPT_FLIGHT:
		return parse_flight(o, arg);
	case OPT_TRIGGER_BLOCK:
		if (parse_u64("--trigger-block", arg, UINT64_MAX / 1000000, &v))
			return -1;
		if (!v)
			return bad("--trigger-block", arg, "must be at least 1 (ms)");
		o->trigger_ns = v * 1000000;
		return 0;
	case OPT_TRIGGER_AFTER:
		return parse_after(o, arg);
	case OPT_TRIGGER_COMM:
		/* The kernel keeps 15 characters of a name: a longer one never matches. */
		if (!*arg || strlen(arg) > 15)
			return bad("--trigger-comm", arg, "expected a name of 1 to 15 characters");
		o->trigger_comm = arg;
		return 0;
	case OPT_TRIGGER_PID:
		return parse_list("--trigger-pid", arg, false, &o->trigger_pids);
	case 'v':
		o->verbose++;
		return 0;
	case 'h':
		o->cmd = CMD_HELP;
		return 0;
	case OPT_VERSION:
		o->cmd = CMD_VERSION;
		return 0;
	case OPT_SELFTEST:
		o->cmd = CMD_SELFTEST;
		return 0;
	}
	return -1;
}

/* The first given of the options only a trigger uses, or NULL. */
static const char *trigger_option(const struct offcpu_opts *o)
{
	if (o->trigger_after_set)
		return "--trigger-after";
	if (o->trigger_comm)
		return "--trigger-comm";
	return o->trigger_pids.n ? "--trigger-pid" : NULL;
}

static int check_flight(struct offcpu_opts *o)
{
	const char *opt = trigger_option(o);

	if (o->flight_ns && (o->switch_mode || o->max_size)) {
		fprintf(stderr, "offcpu: --flight-recorder excludes --switch-output and --max-size\n");
		return -1;
	}
	if (o->trigger_ns && !o->flight_ns) {
		fprintf(stderr, "offcpu: --trigger-block needs --flight-recorder\n");
		return -1;
	}
	if (opt && !o->trigger_ns) {
		fprintf(stderr, "offcpu: %s needs --trigger-block\n", opt);
		return -1;
	}
	if (o->trigger_ns > o->max_block_ns) {
		fprintf(stderr, "offcpu: --trigger-block is longer than --max-block: nothing could trigger\n");
		return -1;
	}
	/*
	 * Only a block sent on its own has its length: shorter ones are summed
	 * per stack in the kernel.  Lowering the threshold only sends more
	 * blocks on their own, each with its time: a finer file, never a lost
	 * trigger.
	 */
	if (o->trigger_ns && o->trigger_ns < o->thresh_ns) {
		o->thresh_ns = o->trigger_ns;
		o->thresh_lowered = true;
	}
	return 0;
}

const char *cli_bpf_option(const struct offcpu_opts *o)
{
	if (o->variant)
		return "--variant";
	if (o->btf_path)
		return "--btf";
	if (o->unwind_in_kernel)
		return o->unwind_verify ? "--unwind-in verify" : "--unwind-in kernel";
	return NULL;
}

/* --backend perf loads no BPF program: its options have nothing to act on. */
static int check_backend(const struct offcpu_opts *o)
{
	const char *bpf_only = cli_bpf_option(o);

	if (o->backend == BACKEND_PERF && bpf_only) {
		fprintf(stderr, "offcpu: %s chooses a BPF program: it excludes --backend perf\n",
			bpf_only);
		return -1;
	}
	return 0;
}

static int check(struct offcpu_opts *o)
{
	int modes = !!o->pids.n + !!o->tids.n + !!o->cmdv;

	if (check_backend(o))
		return -1;
	if (o->cmd != CMD_RECORD)
		return 0;
	if (modes > 1) {
		fprintf(stderr, "offcpu: -p, -t and a command exclude each other\n");
		return -1;
	}
	if (o->system_wide && modes) {
		fprintf(stderr, "offcpu: -a excludes -p, -t and a command\n");
		return -1;
	}
	if (o->min_block_ns > o->max_block_ns) {
		fprintf(stderr, "offcpu: --min-block is larger than --max-block\n");
		return -1;
	}
	if (o->switch_max_files && !o->switch_mode && !o->flight_ns) {
		fprintf(stderr, "offcpu: --switch-max-files needs --switch-output or --flight-recorder\n");
		return -1;
	}
	if (check_flight(o))
		return -1;
	if (!modes)
		o->system_wide = true;
	return 0;
}

int cli_parse(struct offcpu_opts *o, int argc, char **argv)
{
	int c, first = 1;

	defaults(o, argc, argv);
	if (argc > 1 && argv[1][0] != '-') {
		if (!strcmp(argv[1], "probe")) {
			o->cmd = CMD_PROBE;
		} else if (!strcmp(argv[1], "report")) {
			/* report parses its own options. */
			o->cmd = CMD_REPORT;
			o->report_argc = argc - 1;
			o->report_argv = argv + 1;
			return 0;
		} else if (!strcmp(argv[1], "archive")) {
			/* archive parses its own options, like report. */
			o->cmd = CMD_ARCHIVE;
			o->report_argc = argc - 1;
			o->report_argv = argv + 1;
			return 0;
		} else if (!strcmp(argv[1], "selftest")) {
			o->cmd = CMD_SELFTEST;
		} else if (!strcmp(argv[1], "record")) {
			o->cmd = CMD_RECORD;
		} else {
			fprintf(stderr, "offcpu: unknown command '%s' (try --help; put a command to run after --)\n",
				argv[1]);
			return -1;
		}
		first = 2;
	}
	optind = first;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+o:d:ap:t:C:uvhF:", long_opts, NULL)) != -1) {
		if (c == '?' || c == ':') {
			const char *what = optind - 1 < argc ? argv[optind - 1] : NULL;
			char buf[3] = { '-', (char)optopt, 0 };

			/* Name the option as typed; a short one may be bundled. */
			if (optopt && optopt < 256 && !(what && !strncmp(what, "--", 2)))
				what = buf;
			if (c == ':' || (optopt && strchr("odptCF", optopt)) ||
			    (!optopt && optind > argc))
				fprintf(stderr, "offcpu: option '%s' needs a value\n", what ? what : "?");
			else
				fprintf(stderr, "offcpu: unknown option '%s' (try --help)\n", what ? what : "?");
			return -1;
		}
		if (parse_one(o, c, optarg))
			return -1;
	}
	if (optind < argc) {
		if (o->cmd != CMD_RECORD) {
			fprintf(stderr, "offcpu: unexpected argument '%s'\n", argv[optind]);
			return -1;
		}
		o->cmdv = argv + optind;
	}
	return check(o);
}

void cli_free(struct offcpu_opts *o)
{
	id_list_free(&o->pids);
	id_list_free(&o->tids);
	id_list_free(&o->cpus);
	id_list_free(&o->trigger_pids);
}
