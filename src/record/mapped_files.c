// SPDX-License-Identifier: GPL-2.0
/* Mapped files and their build-ids, through /proc/PID/root while the process lives. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lib/build_id.h"
#include "lib/buildid_cache.h"
#include "lib/hashset.h"
#include "lib/procmaps.h"
#include "record/mapped_files.h"

/* Different files seen at one path before we stop comparing (bounds the reads). */
#define MAX_SEEN	8

struct inode_id {
	uint32_t maj, min;
	uint64_t ino;
};

struct file_entry {
	struct file_entry *next;	/* in the order first mapped */
	char *path;
	struct inode_id seen[MAX_SEEN];	/* the files mapped at this path */
	int nr_seen;
	uint8_t id[BUILD_ID_MAX];
	int id_len;			/* 0: none, -1: not read yet */
	bool conflict;
};

struct mapped_files {
	struct str_map by_path;		/* path -> struct file_entry */
	struct file_entry *first, **last;	/* every entry, in the order first mapped */
	struct stat root, mnt_ns;	/* ours: a process with both sees our files */
	char *cache_dir;
	struct mapped_files_stats st;
	char *first_conflict, *first_failed, *first_unchecked;
	int failed_errno;
};

struct mapped_files *mapped_files_new(const char *cache_dir)
{
	struct mapped_files *mf = calloc(1, sizeof(*mf));

	if (mf && cache_dir && !(mf->cache_dir = strdup(cache_dir))) {
		free(mf);
		return NULL;
	}
	if (mf)
		mf->last = &mf->first;
	if (mf && (stat("/", &mf->root) || stat("/proc/self/ns/mnt", &mf->mnt_ns)))
		mf->root.st_ino = mf->mnt_ns.st_ino = 0;	/* compare every file then */
	return mf;
}

static bool same_inode(const struct inode_id *a, const struct inode_id *b)
{
	return a->maj == b->maj && a->min == b->min && a->ino == b->ino;
}

/* The host's file at the entry's path, read once. */
static int host_id(struct file_entry *e)
{
	if (e->id_len < 0) {
		e->id_len = build_id_of_file(e->path, e->id);
		if (e->id_len < 0)
			e->id_len = 0;
	}
	return e->id_len;
}

/*
 * The mapped file as its process sees it, while the process lives:
 * /proc/PID/map_files/START-END is the mapping's own file wherever it is
 * mounted (the only way to a file of a mount that exists only in the
 * process's namespace, which /proc/PID/maps names by a path of that
 * namespace), else /proc/PID/root/PATH (the mapping was split or merged since).
 */
static bool ns_path(const struct perf_record_mmap2 *m, char *buf, size_t len, struct stat *st)
{
	for (int i = 0; !pmap_file_path(m->pid, m->start, m->start + m->len, m->filename, i,
					buf, len); i++)
		if (!stat(buf, st))
			return true;
	return false;
}

static void cache_private(struct mapped_files *mf, struct file_entry *e, const char *src)
{
	if (!mf->cache_dir)
		return;
	if (!bidcache_add(mf->cache_dir, e->path, src, e->id, e->id_len)) {
		mf->st.cached++;
		return;
	}
	if (!mf->st.cache_failed++) {
		mf->first_failed = strdup(e->path);
		mf->failed_errno = errno;
	}
}

static bool same_node(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/*
 * Whether process PID has our root in our mount namespace: then its paths
 * are ours, and its mappings need no look through /proc/PID/map_files
 * (which takes the process's mmap lock, perturbing a starting workload).
 */
static bool sees_our_files(const struct mapped_files *mf, uint32_t pid)
{
	char path[64];
	struct stat st;

	if (!mf->root.st_ino)
		return false;
	snprintf(path, sizeof(path), "/proc/%u/ns/mnt", pid);
	if (stat(path, &st) || !same_node(&st, &mf->mnt_ns))
		return false;
	snprintf(path, sizeof(path), "/proc/%u/root", pid);
	return !stat(path, &st) && same_node(&st, &mf->root);
}

/*
 * A new path: the same file as the host's (same inode, or same build-id),
 * or one only the process's mount namespace has.
 */
static void classify(struct mapped_files *mf, struct file_entry *e,
		     const struct perf_record_mmap2 *m)
{
	char nsp[4200];
	uint8_t id[BUILD_ID_MAX];
	struct stat in_ns, on_host;
	int len;

	if (sees_our_files(mf, m->pid) || !ns_path(m, nsp, sizeof(nsp), &in_ns))
		return;		/* the host's path is all there is */
	if (!stat(e->path, &on_host) && same_node(&in_ns, &on_host))
		return;
	len = build_id_of_file(nsp, id);
	if (len <= 0) {
		/* Another file than the host's, or none there, and nothing to check it by. */
		if (len == 0 && !mf->st.unchecked++)
			mf->first_unchecked = strdup(e->path);
		return;
	}
	if (host_id(e) == len && !memcmp(e->id, id, len))
		return;
	memcpy(e->id, id, len);
	e->id_len = len;
	mf->st.private_files++;
	cache_private(mf, e, nsp);
}

/* Another file at a known path: a different build-id is a conflict. */
static void compare(struct mapped_files *mf, struct file_entry *e,
		    const struct perf_record_mmap2 *m)
{
	char nsp[4200];
	uint8_t id[BUILD_ID_MAX];
	struct stat st;
	int len;

	if (e->conflict)
		return;
	len = build_id_of_file(!sees_our_files(mf, m->pid) && ns_path(m, nsp, sizeof(nsp), &st) ?
			       nsp : e->path, id);
	if (len <= 0 || (host_id(e) == len && !memcmp(e->id, id, len)))
		return;
	e->conflict = true;
	if (!mf->st.conflicts++)
		mf->first_conflict = strdup(e->path);
}

static struct file_entry *add_entry(struct mapped_files *mf, const char *path)
{
	struct file_entry *e = calloc(1, sizeof(*e));

	if (!e || !(e->path = strdup(path)) || str_map_put(&mf->by_path, e->path, e)) {
		if (e)
			free(e->path);
		free(e);
		return NULL;
	}
	e->id_len = -1;
	*mf->last = e;
	mf->last = &e->next;
	return e;
}

int mapped_files_note(struct mapped_files *mf, const struct perf_event_header *h)
{
	const struct perf_record_mmap2 *m = (const void *)h;
	struct inode_id ino;
	struct file_entry *e;

	if (h->type != PERF_RECORD_MMAP2 || m->filename[0] != '/' || m->filename[1] == '/')
		return 0;
	ino = (struct inode_id){ m->maj, m->min, m->ino };
	e = str_map_get(&mf->by_path, m->filename);
	if (!e) {
		e = add_entry(mf, m->filename);
		if (!e)
			return -1;
		e->seen[e->nr_seen++] = ino;
		classify(mf, e, m);
		return 0;
	}
	for (int i = 0; i < e->nr_seen; i++)
		if (same_inode(&e->seen[i], &ino))
			return 0;
	if (e->nr_seen < MAX_SEEN) {
		e->seen[e->nr_seen++] = ino;
		compare(mf, e, m);
	}
	return 0;
}

void mapped_files_add_build_ids(struct mapped_files *mf, struct pd_writer *w)
{
	for (struct file_entry *e = mf->first; e; e = e->next)
		if (host_id(e) > 0)
			pd_add_build_id(w, PERF_RECORD_MISC_USER, -1, e->id, e->id_len, e->path);
}

void mapped_files_summary(const struct mapped_files *mf, FILE *out, int verbose)
{
	const struct mapped_files_stats *st = &mf->st;

	if (st->conflicts)
		fprintf(out, "offcpu: warning: %llu path%s named different files in different mount namespaces (first: %s): the recording keeps one build-id per path, so report may name the others' frames from the first's symbols\n",
			(unsigned long long)st->conflicts, st->conflicts > 1 ? "s" : "",
			mf->first_conflict ? mf->first_conflict : "?");
	if (st->cache_failed)
		fprintf(out, "offcpu: warning: %llu file%s of other mount namespaces not copied into the build-id cache %s (first: %s: %s): report and archive find them only while their process lives\n",
			(unsigned long long)st->cache_failed, st->cache_failed > 1 ? "s" : "",
			mf->cache_dir, mf->first_failed ? mf->first_failed : "?",
			strerror(mf->failed_errno));
	if (st->unchecked)
		fprintf(out, "offcpu: warning: %llu file%s of other mount namespaces without a build-id (first: %s): report cannot tell %s from the host's file at that path\n",
			(unsigned long long)st->unchecked, st->unchecked > 1 ? "s" : "",
			mf->first_unchecked ? mf->first_unchecked : "?", st->unchecked > 1 ? "them" : "it");
	if (verbose && st->private_files)
		fprintf(out, "offcpu: %llu file%s only in other mount namespaces (build-ids read through /proc/PID/root), %llu copied into the build-id cache %s\n",
			(unsigned long long)st->private_files, st->private_files > 1 ? "s" : "",
			(unsigned long long)st->cached, mf->cache_dir ? mf->cache_dir : "(none)");
}

void mapped_files_stats(const struct mapped_files *mf, struct mapped_files_stats *st)
{
	*st = mf->st;
}

void mapped_files_free(struct mapped_files *mf)
{
	if (!mf)
		return;
	for (struct file_entry *e = mf->first, *next; e; e = next) {
		next = e->next;
		free(e->path);
		free(e);
	}
	str_map_free(&mf->by_path, NULL);
	free(mf->first_conflict);
	free(mf->first_failed);
	free(mf->first_unchecked);
	free(mf->cache_dir);
	free(mf);
}
