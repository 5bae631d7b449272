// SPDX-License-Identifier: GPL-2.0
/* `offcpu archive`: a recording's ELF files into a perf-archive tarball. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "archive/archive.h"
#include "lib/build_id.h"
#include "lib/buildid_cache.h"
#include "lib/procmaps.h"
#include "format/perf_data_reader.h"
#include "format/perf_records.h"
#include "archive/tar_writer.h"

/* Mappings remembered per file, whose process may still hold it. */
#define MAX_MAPS	4

struct mapping {
	uint32_t pid;
	uint64_t start, end;
};

struct archived {
	const struct pd_build_id *b;
	struct mapping maps[MAX_MAPS];
	int nr_maps;
	bool dup;		/* same build-id as an earlier entry: archived once */
};

struct archive {
	const char *input, *output;
	const char *symfs;	/* another machine's files under this root (--symfs) */
	bool verbose;
	struct pd_file file;
	struct archived *files;
	size_t nr_files;
	size_t added, missing, tar_entries;
	const char *first_missing;
	const char *kernel_note;	/* why the kernel's symbols are not in it, or NULL */
	char cache_dir[4096];
	bool has_cache;
};

static const struct option opts[] = {
	{ "input", required_argument, NULL, 'i' },
	{ "output", required_argument, NULL, 'o' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "symfs", required_argument, NULL, 'S' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static void usage(FILE *out)
{
	fputs("Usage: offcpu archive [-i perf.data] [-o FILE]\n"
	      "The ELF files the recording mapped, by build-id, in perf's ~/.debug layout\n"
	      "(as perf-archive makes it).  On another machine:\n"
	      "    mkdir -p ~/.debug && tar xf FILE -C ~/.debug && perf report -i perf.data\n"
	      "Each file is taken from the build-id cache, from its process's mount\n"
	      "namespace (/proc/PID/map_files, /proc/PID/root) while it lives, or from\n"
	      "its recorded path, and only with the recorded build-id; the kernel's\n"
	      "/proc/kallsyms too when the running kernel is the recorded one.\n"
	      "  -i, --input FILE       recording (default perf.data)\n"
	      "  -o, --output FILE      tarball (default INPUT.tar.gz)\n"
	      "  -v, --verbose          where each file was taken from\n"
	      "      --symfs DIR        the recorded paths under DIR first (a copy of the\n"
	      "                         device's files, e.g. on the host)\n",
	      out);
}

static int parse_opts(struct archive *a, int argc, char **argv)
{
	int c;

	a->input = "perf.data";
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "i:o:vh", opts, NULL)) != -1) {
		switch (c) {
		case 'i': a->input = optarg; break;
		case 'o': a->output = optarg; break;
		case 'v': a->verbose = true; break;
		case 'S': a->symfs = optarg; break;
		case 'h': usage(stdout); return 1;
		default:
			fprintf(stderr, "offcpu: archive: bad option '%s' (try offcpu archive --help)\n",
				argv[optind - 1] ? argv[optind - 1] : "?");
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "offcpu: archive: unexpected argument '%s'\n", argv[optind]);
		return -1;
	}
	return 0;
}

static bool same_id(const struct pd_build_id *x, const struct pd_build_id *y)
{
	return x->id_len == y->id_len && !memcmp(x->id, y->id, x->id_len);
}

/* The user-space files with a build-id, each id once. */
static int collect_files(struct archive *a)
{
	a->files = calloc(a->file.nr_build_ids + 1, sizeof(*a->files));
	if (!a->files)
		return -1;
	for (size_t i = 0; i < a->file.nr_build_ids; i++) {
		const struct pd_build_id *b = &a->file.build_ids[i];
		struct archived *f;

		if (!b->filename || b->filename[0] != '/' || b->id_len < 2)
			continue;
		f = &a->files[a->nr_files++];
		f->b = b;
		for (size_t j = 0; j + 1 < a->nr_files && !f->dup; j++)
			f->dup = same_id(a->files[j].b, b);
	}
	return 0;
}

static void note_map(struct archive *a, const struct perf_record_mmap2 *m)
{
	for (size_t i = 0; i < a->nr_files; i++) {
		struct archived *f = &a->files[i];

		if (strcmp(f->b->filename, m->filename))
			continue;
		for (int k = 0; k < f->nr_maps; k++)
			if (f->maps[k].pid == m->pid)
				return;
		if (f->nr_maps < MAX_MAPS)
			f->maps[f->nr_maps++] = (struct mapping){ m->pid, m->start, m->start + m->len };
	}
}

/* Which processes mapped each file, and where (they may still hold it). */
static int read_pids(struct archive *a)
{
	static uint64_t scratch[65536 / 8];
	const struct perf_event_header *h;
	char err[256];
	uint64_t pos = 0;
	int ret;

	while ((ret = pd_next_record(&a->file, &pos, &h, scratch, err, sizeof(err))) > 0) {
		const struct perf_record_mmap2 *m = (const void *)h;
		size_t body = h->size - sizeof(*m);

		if (h->type != PERF_RECORD_MMAP2 || h->size <= sizeof(*m) ||
		    !memchr(m->filename, '\0', body))
			continue;
		note_map(a, m);
	}
	if (ret < 0)
		fprintf(stderr, "offcpu: archive: %s: %s\n", a->input, err);
	return ret;
}

/* PATH opened if it is a regular file with the recorded build-id; -1 otherwise. */
static int open_checked(const char *path, const struct pd_build_id *b, struct stat *st)
{
	uint8_t id[BUILD_ID_MAX];
	int fd;

	if (stat(path, st) || !S_ISREG(st->st_mode))
		return -1;
	if (build_id_of_file(path, id) != b->id_len || memcmp(id, b->id, b->id_len))
		return -1;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd >= 0 && (fstat(fd, st) || !S_ISREG(st->st_mode))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* The recorded file from wherever it still is, checked by build-id. */
static int find_file(struct archive *a, const struct archived *f, struct stat *st,
		     char *from, size_t len)
{
	const char *path = f->b->filename;
	int fd;

	if (a->has_cache &&
	    !bidcache_lookup_path(a->cache_dir, f->b->id, f->b->id_len, from, len) &&
	    (fd = open_checked(from, f->b, st)) >= 0)
		return fd;
	/* The mapping's own file, else the path in the process's root. */
	for (int i = 0; i < f->nr_maps; i++) {
		const struct mapping *m = &f->maps[i];

		for (int w = 0; !pmap_file_path(m->pid, m->start, m->end, path, w, from, len); w++)
			if ((fd = open_checked(from, f->b, st)) >= 0)
				return fd;
	}
	/* A copy of the device's files (checked by build-id like the rest). */
	if (a->symfs && snprintf(from, len, "%s%s", a->symfs, path) < (int)len &&
	    (fd = open_checked(from, f->b, st)) >= 0)
		return fd;
	snprintf(from, len, "%s", path);
	return open_checked(from, f->b, st);
}

/* .build-id/xx/rest -> ../../PATH/HEX and PATH/HEX/elf, as perf-archive packs them. */
static int add_file(struct archive *a, struct tar_writer *t, const struct archived *f)
{
	char from[8192], link[64], target[4200], entry[4096], name[4200];
	const struct pd_build_id *b = f->b;
	struct stat st;
	int fd, err;

	if (bidcache_link_name(b->id, b->id_len, link, sizeof(link)) ||
	    bidcache_link_target(b->filename, b->id, b->id_len, target, sizeof(target)) ||
	    bidcache_entry_dir(b->filename, b->id, b->id_len, entry, sizeof(entry)) ||
	    snprintf(name, sizeof(name), "%s/elf", entry) >= (int)sizeof(name))
		return 1;
	fd = find_file(a, f, &st, from, sizeof(from));
	if (fd < 0)
		return 1;
	if (a->verbose)
		fprintf(stderr, "offcpu: archive: %s from %s\n", b->filename, from);
	err = tar_add_symlink(t, link, target) || tar_add_dir(t, entry) ||
	      tar_add_file(t, name, fd, st.st_size, st.st_mode);
	close(fd);
	a->tar_entries += 3;
	return err ? -1 : 0;
}

/* All of /proc/kallsyms (its size is 0 until read); NULL if unreadable. */
static char *read_kallsyms(size_t *len)
{
	size_t cap = 1u << 20, n = 0;
	char *buf = NULL, *nb;
	ssize_t r;
	int fd = open("/proc/kallsyms", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	for (;;) {
		if (!buf || n == cap) {
			if (buf)
				cap *= 2;
			nb = cap <= (256u << 20) ? realloc(buf, cap) : NULL;
			if (!nb)
				break;
			buf = nb;
		}
		r = read(fd, buf + n, cap - n);
		if (r <= 0) {
			nb = r ? NULL : buf;
			break;
		}
		n += r;
	}
	close(fd);
	if (!nb) {
		free(buf);
		return NULL;
	}
	*len = n;
	return buf;
}

/*
 * The running kernel's /proc/kallsyms as [kernel.kallsyms]/HEX/kallsyms,
 * where perf (and offcpu report) look for a kernel's symbols by build-id;
 * only when the running kernel is the recorded one.
 */
static int add_kallsyms(struct archive *a, struct tar_writer *t, const struct pd_build_id *b)
{
	char link[64], entry[128], target[160], name[160];
	uint8_t id[BUILD_ID_MAX];
	int n = build_id_of_kernel(id), err;
	size_t len;
	char *syms;

	if (n != b->id_len || memcmp(id, b->id, n)) {
		a->kernel_note = "the running kernel is not the recorded one";
		return 0;
	}
	if (bidcache_link_name(b->id, b->id_len, link, sizeof(link)) ||
	    bidcache_entry_dir(BIDCACHE_KERNEL, b->id, b->id_len, entry, sizeof(entry)) ||
	    snprintf(target, sizeof(target), "../../%s", entry) >= (int)sizeof(target) ||
	    snprintf(name, sizeof(name), "%s/kallsyms", entry) >= (int)sizeof(name))
		return 0;
	syms = read_kallsyms(&len);
	/* Addresses read as 0 (kptr_restrict, not root) name nothing. */
	if (!syms || !len || !strncmp(syms, "0000000000000000 ", 17)) {
		a->kernel_note = "/proc/kallsyms unreadable or its addresses hidden (kptr_restrict; run as root)";
		free(syms);
		return 0;
	}
	err = tar_add_symlink(t, link, target) || tar_add_dir(t, entry) ||
	      tar_add_bytes(t, name, syms, len, 0644);
	free(syms);
	a->added += !err;
	return err ? -1 : 0;
}

static const struct pd_build_id *kernel_build_id(const struct pd_file *f)
{
	for (size_t i = 0; i < f->nr_build_ids; i++) {
		const struct pd_build_id *b = &f->build_ids[i];

		if ((b->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL &&
		    b->id_len >= 2)
			return b;
	}
	return NULL;
}

static int write_tar(struct archive *a, const char *tmp, uint64_t *content)
{
	struct tar_writer *t = tar_open(tmp);
	int err = 0;

	if (!t) {
		fprintf(stderr, "offcpu: archive: cannot create %s: %s\n", tmp, strerror(errno));
		return -1;
	}
	for (size_t i = 0; i < a->nr_files && !err; i++) {
		int r;

		if (a->files[i].dup)
			continue;
		r = add_file(a, t, &a->files[i]);
		if (r > 0 && !a->missing++)
			a->first_missing = a->files[i].b->filename;
		a->added += !r;
		err = r < 0;
	}
	if (!err && kernel_build_id(&a->file))
		err = add_kallsyms(a, t, kernel_build_id(&a->file));
	*content = tar_content_bytes(t);
	if (tar_close(t) || err) {
		fprintf(stderr, "offcpu: archive: writing %s failed: %s\n", tmp,
			errno ? strerror(errno) : "I/O error");
		return -1;
	}
	return 0;
}

static void summary(const struct archive *a, const char *out, uint64_t content)
{
	struct stat st;
	double packed = stat(out, &st) ? 0 : st.st_size / 1048576.0;

	printf("offcpu: archive: %s: %zu file%s, %.2f MiB (%.2f MiB gzipped); elsewhere: mkdir -p ~/.debug && tar xf %s -C ~/.debug\n",
	       out, a->added, a->added == 1 ? "" : "s", content / 1048576.0, packed, out);
	if (a->kernel_note)
		fprintf(stderr, "offcpu: archive: warning: kernel symbols not archived: %s\n",
			a->kernel_note);
	if (a->missing)
		fprintf(stderr, "offcpu: archive: warning: %zu recorded file%s not found with the recorded build-id (first: %s): %s frames stay [unknown]\n",
			a->missing, a->missing == 1 ? "" : "s", a->first_missing,
			a->missing == 1 ? "its" : "their");
}

static int run(struct archive *a)
{
	char err[256], out[4096], tmp[4200];
	uint64_t content = 0;

	if (pd_read_file(&a->file, a->input, err, sizeof(err))) {
		fprintf(stderr, "offcpu: archive: %s\n", err);
		return 1;
	}
	if (snprintf(out, sizeof(out), "%s", a->output ? a->output : a->input) >= (int)sizeof(out) ||
	    (!a->output && strlen(out) + 7 >= sizeof(out))) {
		fprintf(stderr, "offcpu: archive: output name too long\n");
		return 1;
	}
	if (!a->output)
		strcat(out, ".tar.gz");
	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", out, (int)getpid());
	a->has_cache = !bidcache_dir(a->cache_dir, sizeof(a->cache_dir));
	if (collect_files(a) || read_pids(a) < 0)
		return 1;
	if (write_tar(a, tmp, &content) || rename(tmp, out)) {
		if (errno)
			fprintf(stderr, "offcpu: archive: %s: %s\n", out, strerror(errno));
		unlink(tmp);
		return 1;
	}
	summary(a, out, content);
	return 0;
}

int archive_main(int argc, char **argv)
{
	struct archive a = { 0 };
	int ret = parse_opts(&a, argc, argv);

	if (ret)
		return ret > 0 ? 0 : 2;
	ret = run(&a);
	pd_file_free(&a.file);
	free(a.files);
	return ret;
}
