// SPDX-License-Identifier: GPL-2.0
/*
 * Writes a perf.data with our writer for tests/t_perf_data_perf.sh, which
 * checks that stock perf reads it: an offcpu-time event (BPF output, as the
 * profiler writes) and a dummy event, a COMM and an MMAP2 of this very
 * binary's text (from /proc/self/maps), and samples whose user callchains
 * hold the addresses of gen_leaf_a/gen_leaf_b/gen_middle/main with known
 * periods.  Prints "pid N" for the script.  Both events exclude the kernel
 * (user stacks only), so perf does not look for kernel maps.
 *   gen_perf_data [--raw] OUT [extra argv for the CMDLINE feature...]
 *                  --raw: samples also carry an empty PERF_SAMPLE_RAW field,
 *                  which perf < 5.19 needs to parse a BPF-output event
 *   gen_perf_data --swap IN OUT    IN in the other byte order (big-endian
 *                                  on x86_64), as an s390x writer makes it
 *   gen_perf_data --fixed OUT      the same records from fixed values only
 *                                  (pid, features, and an MMAP2 of the
 *                                  committed tests/fuzz/corpus/cfi/small-x86_64.so),
 *                                  the same bytes on every host: t_behaviour
 *                                  compares them and the report of them
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <elf.h>
#include <link.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "format/perf_data.h"
#include "swap_perf_data.h"

#define OFFCPU_ID	1000
#define DUMMY_ID	2000
#define COMM_NAME	"offcpu-gen"

static int with_raw;

int main(int argc, char **argv);

/* The symbols perf must find; bodies big enough for an offset of 4. */
__attribute__((noinline)) int gen_leaf_a(int x)
{
	return x * 3 + 1;
}

__attribute__((noinline)) int gen_leaf_b(int x)
{
	return x * 5 + 2;
}

__attribute__((noinline)) int gen_middle(int x)
{
	return gen_leaf_a(x) + gen_leaf_b(x);
}

struct text_map {
	uint64_t start, end, pgoff, ino;
	uint32_t maj, min;
	char path[PATH_MAX];
};

/* The executable mapping of this binary, as the kernel reports it. */
static int find_text(struct text_map *m)
{
	char exe[PATH_MAX], line[PATH_MAX + 128], perms[8];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	FILE *fp = fopen("/proc/self/maps", "r");
	int found = 0;

	if (n < 0 || !fp)
		return -1;
	exe[n] = 0;
	while (!found && fgets(line, sizeof(line), fp)) {
		unsigned long long s, e, off, ino;
		unsigned int maj, min;
		int pos = 0;

		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &s, &e, perms, &off,
			   &maj, &min, &ino, &pos) < 7 || !pos || perms[2] != 'x')
			continue;
		line[strcspn(line, "\n")] = 0;
		if (strcmp(line + pos, exe))
			continue;
		*m = (struct text_map){ s, e, off, ino, maj, min, "" };
		snprintf(m->path, sizeof(m->path), "%s", exe);
		found = 1;
	}
	fclose(fp);
	return found ? 0 : -1;
}

/* sample_id trailer of the dummy event: TID, TIME, CPU, IDENTIFIER. */
static uint64_t *put_sample_id(uint64_t *p, uint32_t pid, uint64_t time)
{
	*p++ = pid | (uint64_t)pid << 32;
	*p++ = time;
	*p++ = 0;		/* cpu 0, res */
	*p++ = DUMMY_ID;
	return p;
}

static int write_comm(struct pd_writer *w, uint32_t pid, uint64_t time)
{
	uint64_t buf[32] = { 0 }, *p = buf + 1;
	struct perf_event_header *h = (void *)buf;

	*p++ = pid | (uint64_t)pid << 32;
	memcpy(p, COMM_NAME, sizeof(COMM_NAME));
	p += (sizeof(COMM_NAME) + 7) / 8;
	p = put_sample_id(p, pid, time);
	*h = (struct perf_event_header){ PERF_RECORD_COMM, PERF_RECORD_MISC_USER,
		(p - buf) * 8 };
	return pd_write(w, h);
}

static int write_mmap2(struct pd_writer *w, uint32_t pid, uint64_t time,
		       const struct text_map *m)
{
	static uint64_t buf[(PATH_MAX + 256) / 8];
	struct perf_event_header *h = (void *)buf;
	uint64_t *p = buf + 1;
	size_t len = strlen(m->path) + 1;

	memset(buf, 0, sizeof(buf));
	*p++ = pid | (uint64_t)pid << 32;
	*p++ = m->start;
	*p++ = m->end - m->start;
	*p++ = m->pgoff;
	*p++ = m->maj | (uint64_t)m->min << 32;
	*p++ = m->ino;
	*p++ = 0;		/* ino_generation */
	*p++ = (PROT_READ | PROT_EXEC) | (uint64_t)MAP_PRIVATE << 32;
	memcpy(p, m->path, len);
	p += (len + 7) / 8;
	p = put_sample_id(p, pid, time);
	*h = (struct perf_event_header){ PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER,
		(p - buf) * 8 };
	return pd_write(w, h);
}

/* The user stack's callers of every sample: gen_middle and main, or fixed ones. */
static uint64_t caller[2];

/* IDENTIFIER IP TID TIME CPU PERIOD CALLCHAIN, a user stack LEAF < caller[0] < caller[1]. */
static int write_sample(struct pd_writer *w, uint32_t pid, uint64_t time,
			uint64_t leaf, uint64_t period)
{
	uint64_t buf[16], *p = buf + 1;
	struct perf_event_header *h = (void *)buf;

	*p++ = OFFCPU_ID;
	*p++ = leaf;
	*p++ = pid | (uint64_t)pid << 32;
	*p++ = time;
	*p++ = 1;		/* cpu 1 */
	*p++ = period;
	*p++ = 4;
	*p++ = PERF_CONTEXT_USER;
	*p++ = leaf;
	*p++ = caller[0];
	*p++ = caller[1];
	if (with_raw) {
		uint32_t raw[2] = { 4, 0 };	/* size, 4 bytes of data */

		memcpy(p++, raw, 8);
	}
	*h = (struct perf_event_header){ PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER,
		(p - buf) * 8 };
	return pd_write(w, h);
}

struct note_search {
	uint8_t id[20];
	int len;
};

/* The GNU build id note of the main program. */
static int find_build_id(struct dl_phdr_info *info, size_t size, void *data)
{
	struct note_search *ns = data;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const uint8_t *p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
		const uint8_t *end = p + ph->p_memsz;

		if (ph->p_type != PT_NOTE)
			continue;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *n = (const void *)p;
			const uint8_t *desc = p + sizeof(*n) + ((n->n_namesz + 3) & ~3u);

			if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 &&
			    !memcmp(p + sizeof(*n), "GNU", 4) && n->n_descsz <= 20) {
				memcpy(ns->id, desc, n->n_descsz);
				ns->len = n->n_descsz;
				return 1;
			}
			p = desc + ((n->n_descsz + 3) & ~3u);
		}
	}
	return 1;	/* the first object is the main program */
}

static void fill_attrs(struct perf_event_attr *a, struct perf_event_attr *d)
{
	memset(a, 0, sizeof(*a));
	a->type = PERF_TYPE_SOFTWARE;
	a->size = sizeof(*a);
	a->config = PERF_COUNT_SW_BPF_OUTPUT;
	a->sample_period = 1;
	a->sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
		PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN;
	if (with_raw)
		a->sample_type |= PERF_SAMPLE_RAW;
	a->sample_id_all = 1;
	a->exclude_kernel = 1;
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
	*d = *a;
	d->config = PERF_COUNT_SW_DUMMY;
	d->sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
		PERF_SAMPLE_CPU;
	d->comm = d->mmap = d->mmap2 = d->task = 1;
}

static void set_features(struct pd_writer *w, int argc, char **argv, struct text_map *m,
			 const struct utsname *u, struct note_search ns)
{
	pd_set_string(w, PD_FEAT_HOSTNAME, u->nodename);
	pd_set_string(w, PD_FEAT_OSRELEASE, u->release);
	pd_set_string(w, PD_FEAT_VERSION, "offcpu test");
	pd_set_string(w, PD_FEAT_ARCH, u->machine);
	pd_set_nrcpus(w, 7, 5);
	pd_set_total_mem(w, 123456);
	pd_set_cmdline(w, argc, argv);
	pd_set_clock_res(w, 1);
	pd_set_clock_data(w, CLOCK_MONOTONIC, 1700000000000000000ull, 1000000000ull);
	if (ns.len)
		pd_add_build_id(w, PERF_RECORD_MISC_USER, -1, ns.id, ns.len, m->path);
}

static int swap_copy(const char *in, const char *out)
{
	static uint8_t buf[1 << 20];
	FILE *fp = fopen(in, "rb");
	size_t len;

	if (!fp)
		return -1;
	len = fread(buf, 1, sizeof(buf), fp);
	fclose(fp);
	if (len == sizeof(buf) || swap_perf_data(buf, len))
		return -1;
	fp = fopen(out, "wb");
	if (!fp)
		return -1;
	len = fwrite(buf, 1, len, fp) != len;
	return fclose(fp) || len ? -1 : 0;
}

/*
 * --fixed: tests/fuzz/corpus/cfi/small-x86_64.so (leaf at 0x340, mid at
 * 0x370, top at 0x3d0, build-id 0d58e241...) mapped at 0x7f0000000000.
 */
#define FIXED_BASE 0x7f0000000000ull

static const struct text_map fixed_map = {
	FIXED_BASE, FIXED_BASE + 0x1000, 0, 77, 8, 1, "/tests/fuzz/corpus/cfi/small-x86_64.so"
};

static const struct note_search fixed_id = {
	{ 0x0d, 0x58, 0xe2, 0x41, 0xa7, 0x13, 0xa2, 0x23, 0xd4, 0x7e,
	  0xd7, 0xb1, 0x52, 0x2e, 0xe3, 0x2b, 0xbc, 0x7d, 0x54, 0xf4 }, 20
};

static const struct utsname fixed_uts = {
	.nodename = "fixed-host", .release = "6.1.0-fixed", .machine = "x86_64"
};

int main(int argc, char **argv)
{
	struct perf_event_attr a, d;
	uint64_t oid = OFFCPU_ID, did = DUMMY_ID, t = 1000000000ull;
	uint64_t leaf_a = (uint64_t)(uintptr_t)gen_leaf_a + 4;
	uint64_t leaf_b = (uint64_t)(uintptr_t)gen_leaf_b + 4;
	uint32_t pid = getpid();
	struct note_search ns = { .len = 0 };
	struct utsname u;
	struct text_map m;
	struct pd_writer *w;
	static char *fixed_argv[] = { "gen_perf_data", "--fixed", "fixed.data", NULL };
	const char *out;
	int err, fixed = 0;

	if (argc == 4 && !strcmp(argv[1], "--swap")) {
		if (!swap_copy(argv[2], argv[3]))
			return 0;
		fprintf(stderr, "gen_perf_data: cannot swap %s into %s\n", argv[2], argv[3]);
		return 1;
	}
	if (argc > 1 && !strcmp(argv[1], "--raw")) {
		with_raw = 1;
		argv[1] = argv[0];
		argv++;
		argc--;
	}
	if (argc == 3 && !strcmp(argv[1], "--fixed")) {
		fixed = 1;
		out = argv[2];
		argv = fixed_argv;	/* the CMDLINE feature */
		argc = 3;
		m = fixed_map;
		ns = fixed_id;
		u = fixed_uts;
		pid = 4242;
		leaf_a = FIXED_BASE + 0x344;
		leaf_b = FIXED_BASE + 0x374;
		caller[0] = FIXED_BASE + 0x384;
		caller[1] = FIXED_BASE + 0x3d4;
	} else if (argc < 2 || find_text(&m)) {
		fprintf(stderr, "usage: gen_perf_data OUT (needs /proc/self/maps)\n");
		return 2;
	} else {
		out = argv[1];
		uname(&u);
		dl_iterate_phdr(find_build_id, &ns);
		caller[0] = (uint64_t)(uintptr_t)gen_middle + 4;
		caller[1] = (uint64_t)(uintptr_t)main + 4;
	}
	w = pd_open(out);
	if (!w) {
		perror(out);
		return 1;
	}
	err = write_comm(w, pid, t) || write_mmap2(w, pid, t + 1, &m) ||
	      write_sample(w, pid, t + 1000, leaf_a, 1000000) ||
	      write_sample(w, pid, t + 2000, leaf_b, 3000000) ||
	      write_sample(w, pid, t + 3000, leaf_a, 5000000) || pd_finish_round(w);
	fill_attrs(&a, &d);
	err = err || pd_add_event(w, "offcpu-time", &a, &oid, 1) ||
	      pd_add_event(w, "dummy:u", &d, &did, 1);
	set_features(w, argc, argv, &m, &u, ns);
	if (err) {
		pd_abort(w);
		return 1;
	}
	if (pd_close(w))
		return 1;
	if (!fixed)
		printf("pid %u\n", pid);
	return gen_middle(0) == 3 ? 0 : 1;
}
