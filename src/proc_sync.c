// SPDX-License-Identifier: GPL-2.0
/* COMM / MMAP2 / kernel MMAP synthesis from /proc, as perf record does. */
#include <dirent.h>
#include <stddef.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proc_sync.h"

#define ALIGN8(x) (((x) + 7) & ~(size_t)7)

void put_sample_id(void *dst, const struct sample_id *s)
{
	/* Layout for IDENTIFIER|TID|TIME|CPU: pid, tid, time, cpu, res, id. */
	uint32_t *u32 = dst;
	uint64_t *u64 = dst;

	u32[0] = s->pid;
	u32[1] = s->tid;
	u64[1] = s->time;
	u32[4] = s->cpu;
	u32[5] = 0;
	u64[3] = s->id;
}

static int emit_comm(uint32_t pid, uint32_t tid, const char *comm, uint64_t id,
		     record_fn fn, void *ctx)
{
	struct {
		struct perf_event_header h;
		uint32_t pid, tid;
		char rest[16 + 8 + SAMPLE_ID_SIZE];
	} r;
	size_t n = ALIGN8(strnlen(comm, 15) + 1);
	struct sample_id sid = { pid, tid, 0, 0, id };

	memset(&r, 0, sizeof(r));
	r.h.type = PERF_RECORD_COMM;
	r.h.size = sizeof(r.h) + 8 + n + SAMPLE_ID_SIZE;
	r.pid = pid;
	r.tid = tid;
	memcpy(r.rest, comm, strnlen(comm, 15));
	put_sample_id(r.rest + n, &sid);
	return fn(ctx, &r.h, 0);
}

static int emit_mmap2(uint32_t pid, uint64_t start, uint64_t end, uint64_t pgoff,
		      unsigned maj, unsigned min, uint64_t ino, uint32_t prot,
		      const char *file, uint64_t id, record_fn fn, void *ctx)
{
	struct {
		struct perf_event_header h;
		uint32_t pid, tid;
		uint64_t start, len, pgoff;
		uint32_t maj, min;
		uint64_t ino, ino_generation;
		uint32_t prot, flags;
		char rest[4096 + 8 + SAMPLE_ID_SIZE];
	} r;
	size_t len = strnlen(file, 4095), n = ALIGN8(len + 1);
	struct sample_id sid = { pid, pid, 0, 0, id };

	memset(&r, 0, offsetof(__typeof__(r), rest) + n);
	r.h.type = PERF_RECORD_MMAP2;
	r.h.misc = PERF_RECORD_MISC_USER;
	r.h.size = offsetof(__typeof__(r), rest) + n + SAMPLE_ID_SIZE;
	r.pid = r.tid = pid;
	r.start = start;
	r.len = end - start;
	r.pgoff = pgoff;
	r.maj = maj;
	r.min = min;
	r.ino = ino;
	r.prot = prot;
	r.flags = 2;	/* MAP_PRIVATE, as perf synthesizes file maps */
	memcpy(r.rest, file, len);
	put_sample_id(r.rest + n, &sid);
	return fn(ctx, &r.h, 0);
}

static int read_line(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");
	char *nl;

	if (!f)
		return -1;
	if (!fgets(buf, size, f)) {
		fclose(f);
		return -1;
	}
	fclose(f);
	nl = strchr(buf, '\n');
	if (nl)
		*nl = '\0';
	return 0;
}

/* Executable mappings only, as perf synthesizes them by default. */
static int sync_maps(uint32_t pid, uint64_t id, record_fn fn, void *ctx)
{
	char path[64], line[4096 + 256];
	FILE *f;
	int err = 0;

	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	f = fopen(path, "r");
	if (!f)
		return 0;	/* gone meanwhile, or a kernel thread */
	while (!err && fgets(line, sizeof(line), f)) {
		unsigned long long start, end, pgoff, ino;
		unsigned maj, min;
		char perms[8], file[4096];
		int n = 0;
		uint32_t prot = 0;

		file[0] = '\0';
		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, perms,
			   &pgoff, &maj, &min, &ino, &n) < 7)
			continue;
		if (perms[2] != 'x')
			continue;
		sscanf(line + n, "%4095[^\n]", file);
		if (!file[0])
			snprintf(file, sizeof(file), "//anon");
		prot = (perms[0] == 'r' ? 1 : 0) | (perms[1] == 'w' ? 2 : 0) | 4;
		err = emit_mmap2(pid, start, end, pgoff, maj, min, ino, prot, file, id, fn, ctx);
	}
	fclose(f);
	return err;
}

int proc_sync_pid(uint32_t pid, uint64_t id, record_fn fn, void *ctx)
{
	char path[96], comm[32];
	struct dirent *d;
	DIR *dir;
	int err = 0;

	snprintf(path, sizeof(path), "/proc/%u/task", pid);
	dir = opendir(path);
	if (!dir)
		return 0;
	while (!err && (d = readdir(dir))) {
		uint32_t tid = strtoul(d->d_name, NULL, 10);

		if (!tid)
			continue;
		snprintf(path, sizeof(path), "/proc/%u/task/%u/comm", pid, tid);
		if (read_line(path, comm, sizeof(comm)))
			continue;
		err = emit_comm(pid, tid, comm, id, fn, ctx);
	}
	closedir(dir);
	return err ? err : sync_maps(pid, id, fn, ctx);
}

int proc_sync_all(uint64_t id, record_fn fn, void *ctx)
{
	struct dirent *d;
	DIR *dir = opendir("/proc");
	int err = 0;

	if (!dir)
		return -1;
	while (!err && (d = readdir(dir))) {
		uint32_t pid = strtoul(d->d_name, NULL, 10);

		if (pid)
			err = proc_sync_pid(pid, id, fn, ctx);
	}
	closedir(dir);
	return err;
}

static uint64_t kallsyms_addr(const char *name)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[256], sym[128], type;
	unsigned long long a;
	uint64_t found = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %127s", &a, &type, sym) == 3 && !strcmp(sym, name)) {
			found = a;
			break;
		}
	}
	fclose(f);
	return found;
}

int proc_kallsyms_range(const char *name, uint64_t *lo, uint64_t *hi)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[256], sym[128], type;
	unsigned long long a;

	*lo = 0;
	*hi = ~0ull;
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %127s", &a, &type, sym) != 3)
			continue;
		if (!*lo && !strcmp(sym, name))
			*lo = a;
		else if (*lo && a > *lo && a < *hi)
			*hi = a;
	}
	fclose(f);
	/* Without the whole table we cannot tell where it ends. */
	if (!*lo || *hi == ~0ull) {
		*lo = *hi = 0;
		return -1;
	}
	return 0;
}

int proc_sync_kernel(uint64_t id, record_fn fn, void *ctx)
{
	static const char name[] = "[kernel.kallsyms]_text";
	struct {
		struct perf_event_header h;
		uint32_t pid, tid;
		uint64_t start, len, pgoff;
		char rest[ALIGN8(sizeof(name)) + SAMPLE_ID_SIZE];
	} r;
	struct sample_id sid = { (uint32_t)-1, 0, 0, 0, id };
	uint64_t text = kallsyms_addr("_text");

	if (!text)
		text = kallsyms_addr("_stext");
	if (!text)
		return 0;	/* addresses hidden (kptr_restrict): perf shows raw ips */
	memset(&r, 0, sizeof(r));
	r.h.type = PERF_RECORD_MMAP;
	r.h.misc = PERF_RECORD_MISC_KERNEL;
	r.h.size = sizeof(r);
	r.pid = (uint32_t)-1;	/* perf's HOST_KERNEL_ID */
	r.start = text;
	r.len = ~0ull - text;
	r.pgoff = text;		/* perf's ref_reloc_sym: _text's address */
	memcpy(r.rest, name, sizeof(name));
	put_sample_id(r.rest + ALIGN8(sizeof(name)), &sid);
	return fn(ctx, &r.h, 0);
}

uint32_t proc_tgid(uint32_t tid)
{
	char path[64], line[128];
	unsigned tgid = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/status", tid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %u", &tgid) == 1)
			break;
	fclose(f);
	return tgid;
}
