// SPDX-License-Identifier: GPL-2.0
/* COMM / MMAP2 / kernel MMAP synthesis from /proc, as perf record does. */
#include <dirent.h>
#include <stddef.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/ksyms.h"
#include "lib/procfs.h"
#include "lib/procmaps.h"
#include "record/synthesis.h"

#define ALIGN8(x) (((x) + 7) & ~(size_t)7)

/* The dummy event's sample_id trailer of a synthesized record (time 0). */
static void put_sample_id(void *dst, uint32_t pid, uint32_t tid, uint64_t id)
{
	const struct perf_sample_id_all sid = { .pid = pid, .tid = tid, .id = id };

	memcpy(dst, &sid, sizeof(sid));
}

int proc_comm_emit(uint32_t pid, uint32_t tid, const char *comm, uint64_t id,
		     record_fn fn, void *ctx)
{
	struct {
		struct perf_record_comm c;
		char rest[16 + sizeof(struct perf_sample_id_all)];
	} r;
	size_t n = ALIGN8(strnlen(comm, 15) + 1);

	memset(&r, 0, sizeof(r));
	r.c.header.type = PERF_RECORD_COMM;
	r.c.header.size = sizeof(r.c) + n + sizeof(struct perf_sample_id_all);
	r.c.pid = pid;
	r.c.tid = tid;
	memcpy(r.rest, comm, strnlen(comm, 15));
	put_sample_id(r.rest + n, pid, tid, id);
	return fn(ctx, &r.c.header, 0);
}

static int emit_mmap2(uint32_t pid, uint64_t start, uint64_t end, uint64_t pgoff,
		      unsigned maj, unsigned min, uint64_t ino, uint32_t prot,
		      const char *file, uint64_t id, record_fn fn, void *ctx)
{
	struct {
		struct perf_record_mmap2 m;
		char rest[4096 + sizeof(struct perf_sample_id_all)];
	} r;
	size_t len = strnlen(file, 4095), n = ALIGN8(len + 1);

	memset(&r, 0, sizeof(r.m) + n);
	r.m.header.type = PERF_RECORD_MMAP2;
	r.m.header.misc = PERF_RECORD_MISC_USER;
	r.m.header.size = sizeof(r.m) + n + sizeof(struct perf_sample_id_all);
	r.m.pid = r.m.tid = pid;
	r.m.start = start;
	r.m.len = end - start;
	r.m.pgoff = pgoff;
	r.m.maj = maj;
	r.m.min = min;
	r.m.ino = ino;
	r.m.prot = prot;
	r.m.flags = 2;	/* MAP_PRIVATE, as perf synthesizes file maps */
	memcpy(r.rest, file, len);
	put_sample_id(r.rest + n, pid, pid, id);
	return fn(ctx, &r.m.header, 0);
}

static int read_line(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	if (!fgets(buf, size, f)) {
		fclose(f);
		return -1;
	}
	fclose(f);
	proc_parse_comm(buf);
	return 0;
}

struct sync_maps {
	uint32_t pid;
	uint64_t id;
	record_fn fn;
	void *ctx;
	int err;	/* the writer's, apart from "no maps file" */
};

/* Executable mappings only, as perf synthesizes them by default. */
static int sync_map(void *ctx, const struct proc_map *m)
{
	struct sync_maps *sm = ctx;

	if (!(m->prot & 4))
		return 0;
	sm->err = emit_mmap2(sm->pid, m->start, m->end, m->pgoff, m->maj, m->min, m->ino,
			     m->prot, m->file, sm->id, sm->fn, sm->ctx);
	return sm->err;
}

int proc_maps_line_emit(uint32_t pid, uint64_t id, const char *line, record_fn fn, void *ctx)
{
	struct sync_maps sm = { pid, id, fn, ctx, 0 };
	struct proc_map m;

	return proc_parse_maps_line(line, &m) ? 0 : sync_map(&sm, &m);
}

static int sync_maps(uint32_t pid, uint64_t id, record_fn fn, void *ctx)
{
	struct sync_maps sm = { pid, id, fn, ctx, 0 };

	/* No maps file: gone meanwhile, or a kernel thread. */
	proc_maps_read(pid, sync_map, &sm);
	return sm.err;
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
		uint32_t tid = proc_parse_id(d->d_name);

		if (!tid)
			continue;
		snprintf(path, sizeof(path), "/proc/%u/task/%u/comm", pid, tid);
		if (read_line(path, comm, sizeof(comm)))
			continue;
		err = proc_comm_emit(pid, tid, comm, id, fn, ctx);
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
		uint32_t pid = proc_parse_id(d->d_name);

		if (pid)
			err = proc_sync_pid(pid, id, fn, ctx);
	}
	closedir(dir);
	return err;
}

static uint64_t kallsyms_addr(const char *name)
{
	uint64_t addr;

	return ksyms_running_find(name, &addr) ? 0 : addr;
}

int proc_sync_kernel(uint64_t id, record_fn fn, void *ctx)
{
	static const char name[] = "[kernel.kallsyms]_text";
	struct {
		struct perf_record_mmap m;
		char rest[ALIGN8(sizeof(name)) + sizeof(struct perf_sample_id_all)];
	} r;
	uint64_t text = kallsyms_addr("_text");

	if (!text)
		text = kallsyms_addr("_stext");
	if (!text)
		return 0;	/* addresses hidden (kptr_restrict): perf shows raw ips */
	memset(&r, 0, sizeof(r));
	r.m.header.type = PERF_RECORD_MMAP;
	r.m.header.misc = PERF_RECORD_MISC_KERNEL;
	r.m.header.size = sizeof(r);
	r.m.pid = (uint32_t)-1;	/* perf's HOST_KERNEL_ID */
	r.m.start = text;
	r.m.len = ~0ull - text;
	r.m.pgoff = text;		/* perf's ref_reloc_sym: _text's address */
	memcpy(r.rest, name, sizeof(name));
	put_sample_id(r.rest + ALIGN8(sizeof(name)), (uint32_t)-1, 0, id);
	return fn(ctx, &r.m.header, 0);
}
