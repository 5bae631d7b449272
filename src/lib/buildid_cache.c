// SPDX-License-Identifier: GPL-2.0
/* perf's build-id cache layout: names, lookup and adding a file. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/build_id.h"
#include "lib/buildid_cache.h"

static int fits(int n, size_t len)
{
	if (n < 0 || (size_t)n >= len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

int bidcache_dir(char *buf, size_t len)
{
	const char *dir = getenv("PERF_BUILDID_DIR");
	const char *home = getenv("HOME");

	if (dir && *dir)
		return fits(snprintf(buf, len, "%s", dir), len);
	if (!home || !*home)
		return -1;
	return fits(snprintf(buf, len, "%s/.debug", home), len);
}

int bidcache_link_name(const uint8_t *id, int id_len, char *buf, size_t len)
{
	char hex[2 * BUILD_ID_MAX + 1];

	if (id_len < 2 || id_len > BUILD_ID_MAX)
		return -1;
	build_id_hex(id, id_len, hex);
	return fits(snprintf(buf, len, ".build-id/%.2s/%s", hex, hex + 2), len);
}

int bidcache_entry_dir(const char *path, const uint8_t *id, int id_len, char *buf, size_t len)
{
	char hex[2 * BUILD_ID_MAX + 1];
	bool kernel = !strcmp(path, BIDCACHE_KERNEL);

	if (id_len < 2 || id_len > BUILD_ID_MAX || (path[0] != '/' && !kernel))
		return -1;
	build_id_hex(id, id_len, hex);
	return fits(snprintf(buf, len, "%s/%s", kernel ? path : path + 1, hex), len);
}

int bidcache_kallsyms_path(const char *dir, const uint8_t *id, int id_len, char *buf, size_t len)
{
	char entry[128];

	if (bidcache_entry_dir(BIDCACHE_KERNEL, id, id_len, entry, sizeof(entry)))
		return -1;
	return fits(snprintf(buf, len, "%s/%s/kallsyms", dir, entry), len);
}

int bidcache_link_target(const char *path, const uint8_t *id, int id_len, char *buf, size_t len)
{
	char entry[4096];

	if (bidcache_entry_dir(path, id, id_len, entry, sizeof(entry)))
		return -1;
	return fits(snprintf(buf, len, "../../%s", entry), len);
}

int bidcache_lookup_path(const char *dir, const uint8_t *id, int id_len, char *buf, size_t len)
{
	char link[64];

	if (bidcache_link_name(id, id_len, link, sizeof(link)))
		return -1;
	return fits(snprintf(buf, len, "%s/%s/elf", dir, link), len);
}

/* mkdir -p of every directory in PATH up to its last '/'. */
static int make_parents(char *path)
{
	for (char *p = strchr(path + 1, '/'); p; p = strchr(p + 1, '/')) {
		*p = '\0';
		if (mkdir(path, 0755) && errno != EEXIST) {
			*p = '/';
			return -1;
		}
		*p = '/';
	}
	return 0;
}

/* SRC to DST through a temporary name, so a reader never sees half a file. */
static int copy_file(const char *src, const char *dst)
{
	char tmp[4200], buf[65536];
	int in, out, err = 0;
	struct stat st;
	ssize_t n;

	if (fits(snprintf(tmp, sizeof(tmp), "%s.tmp.%d", dst, (int)getpid()), sizeof(tmp)))
		return -1;
	in = open(src, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (in < 0)
		return -1;
	if (fstat(in, &st) || !S_ISREG(st.st_mode)) {
		close(in);
		errno = EINVAL;
		return -1;
	}
	out = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, st.st_mode & 0755);
	if (out < 0) {
		close(in);
		return -1;
	}
	while (!err && (n = read(in, buf, sizeof(buf))) != 0) {
		if (n < 0 || write(out, buf, n) != n)
			err = -1;
	}
	close(in);
	if (close(out) || err || rename(tmp, dst)) {
		int e = errno;

		unlink(tmp);
		errno = e ? e : EIO;
		return -1;
	}
	return 0;
}

int bidcache_add(const char *dir, const char *path, const char *src,
		 const uint8_t *id, int id_len)
{
	char entry[4096], file[8192], link[4200], target[4200], rel[64];
	struct stat st;

	if (bidcache_entry_dir(path, id, id_len, entry, sizeof(entry)) ||
	    bidcache_link_name(id, id_len, rel, sizeof(rel)) ||
	    bidcache_link_target(path, id, id_len, target, sizeof(target)) ||
	    fits(snprintf(link, sizeof(link), "%s/%s", dir, rel), sizeof(link)) ||
	    fits(snprintf(file, sizeof(file), "%s/%s/elf", dir, entry), sizeof(file)))
		return -1;
	if (!stat(link, &st))
		return 0;	/* this id is cached already */
	if (make_parents(file) || copy_file(src, file) || make_parents(link))
		return -1;
	if (symlink(target, link) && errno != EEXIST)
		return -1;
	return 0;
}
