// SPDX-License-Identifier: GPL-2.0
/*
 * perf's build-id cache names, adding a file to a cache, and the tar
 * writer's bytes (ustar fields, checksum, GNU long names, end blocks), read
 * back through zlib.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "lib/buildid_cache.h"
#include "check.h"
#include "archive/tar_writer.h"

static const uint8_t id[20] = { 0xef, 0x01, 0x06, 0xf6, 0xa0, 0xb2, 0xf7, 0xbd, 0xd1, 0xfc,
				0xe2, 0x0e, 0x57, 0x27, 0xc8, 0xdc, 0x05, 0xde, 0xc6, 0x7d };
#define HEX "ef0106f6a0b2f7bdd1fce20e5727c8dc05dec67d"

static void names(void)
{
	char buf[256];

	CHECK("bidcache-link", !bidcache_link_name(id, 20, buf, sizeof(buf)) &&
	      !strcmp(buf, ".build-id/ef/0106f6a0b2f7bdd1fce20e5727c8dc05dec67d"), "%s", buf);
	CHECK("bidcache-entry", !bidcache_entry_dir("/app/prog", id, 20, buf, sizeof(buf)) &&
	      !strcmp(buf, "app/prog/" HEX), "%s", buf);
	CHECK("bidcache-target", !bidcache_link_target("/app/prog", id, 20, buf, sizeof(buf)) &&
	      !strcmp(buf, "../../app/prog/" HEX), "%s", buf);
	CHECK("bidcache-lookup", !bidcache_lookup_path("/h/.debug", id, 20, buf, sizeof(buf)) &&
	      !strcmp(buf, "/h/.debug/.build-id/ef/0106f6a0b2f7bdd1fce20e5727c8dc05dec67d/elf"),
	      "%s", buf);
	CHECK("bidcache-refuses", bidcache_entry_dir("app/prog", id, 20, buf, sizeof(buf)) &&
	      bidcache_link_name(id, 1, buf, sizeof(buf)) &&
	      bidcache_lookup_path("/h", id, 20, buf, 10), "relative path, 1-byte id or no room accepted");
}

static void add(const char *dir)
{
	char src[512], cache[512], file[1024], link[1024], target[512];
	ssize_t n;
	int fd;

	snprintf(src, sizeof(src), "%s/src", dir);
	snprintf(cache, sizeof(cache), "%s/cache", dir);
	fd = open(src, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	n = write(fd, "ELF?", 4);
	close(fd);
	CHECK("bidcache-add", n == 4 && !bidcache_add(cache, "/app/prog", src, id, 20) &&
	      !bidcache_add(cache, "/app/prog", src, id, 20), "add failed");
	snprintf(file, sizeof(file), "%s/.build-id/ef/0106f6a0b2f7bdd1fce20e5727c8dc05dec67d/elf", cache);
	snprintf(link, sizeof(link), "%s/.build-id/ef/0106f6a0b2f7bdd1fce20e5727c8dc05dec67d", cache);
	n = readlink(link, target, sizeof(target) - 1);
	target[n > 0 ? n : 0] = '\0';
	fd = open(file, O_RDONLY);
	CHECK("bidcache-add-layout", fd >= 0 && !strcmp(target, "../../app/prog/" HEX),
	      "link %s, file %s", target, fd >= 0 ? "there" : "missing");
	if (fd >= 0)
		close(fd);
}

/* The header's checksum as tar computes it (chksum field as spaces). */
static unsigned int checksum(const unsigned char *h)
{
	unsigned int sum = 0;

	for (int i = 0; i < 512; i++)
		sum += (i >= 148 && i < 156) ? ' ' : h[i];
	return sum;
}

static void tar(const char *dir)
{
	static unsigned char buf[1 << 16];
	char path[512], data[512], longname[300];
	int fd, len, ok;
	gzFile gz;

	snprintf(path, sizeof(path), "%s/t.tar.gz", dir);
	snprintf(data, sizeof(data), "%s/src", dir);
	memset(longname, 'n', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	struct tar_writer *t = tar_open(path);
	fd = open(data, O_RDONLY);
	ok = t && !tar_add_symlink(t, "l", "../../target") && !tar_add_dir(t, "d") &&
	     !tar_add_file(t, longname, fd, 4, 0755);
	close(fd);
	ok = !tar_close(t) && ok;
	CHECK("tar-writes", ok && !tar_open(path), "write failed, or an existing file was overwritten");
	gz = gzopen(path, "rb");
	len = gz ? gzread(gz, buf, sizeof(buf)) : -1;
	if (gz)
		gzclose(gz);
	/* link, dir, long-name record + its block, file header + data, 2 end blocks. */
	CHECK("tar-size", len == 512 * 8, "%d bytes", len);
	if (len != 512 * 8)
		return;
	CHECK("tar-symlink", buf[156] == '2' && !strcmp((char *)buf, "l") &&
	      !strcmp((char *)buf + 157, "../../target") && !memcmp(buf + 257, "ustar", 6) &&
	      strtoul((char *)buf + 148, NULL, 8) == checksum(buf), "bad symlink header");
	CHECK("tar-dir", buf[512 + 156] == '5' && !strcmp((char *)buf + 512, "d/"), "bad dir header");
	CHECK("tar-long-name", buf[1024 + 156] == 'L' && strtoul((char *)buf + 1024 + 124, NULL, 8) == 300 &&
	      !strcmp((char *)buf + 1536, longname), "bad long-name record");
	CHECK("tar-file", buf[2048 + 156] == '0' && strtoul((char *)buf + 2048 + 124, NULL, 8) == 4 &&
	      strtoul((char *)buf + 2048 + 100, NULL, 8) == 0755 && !memcmp(buf + 2560, "ELF?", 4) &&
	      strtoul((char *)buf + 2048 + 148, NULL, 8) == checksum(buf + 2048), "bad file entry");
	for (int i = 3072; i < len; i++)
		if (buf[i]) {
			CHECK("tar-end", 0, "byte %d of the end blocks is not zero", i);
			return;
		}
	CHECK("tar-end", 1, "%s", "");
}

int main(void)
{
	char dir[] = "/tmp/offcpu-unit-archive.XXXXXX";
	char cmd[128];

	if (!mkdtemp(dir))
		return 1;
	names();
	add(dir);
	tar(dir);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		return 1;
	return failures != 0;
}
