// SPDX-License-Identifier: GPL-2.0
/* ustar entries with GNU long-name records, gzipped through zlib. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "archive/tar_writer.h"

#define BLOCK		512
#define NAME_LEN	100
#define LONG_NAME	"././@LongLink"

struct tar_writer {
	gzFile gz;
	uint64_t content;
	long mtime;
	int err;
};

struct ustar {
	char name[100], mode[8], uid[8], gid[8], size[12], mtime[12], chksum[8];
	char typeflag, linkname[100], magic[6], version[2], uname[32], gname[32];
	char devmajor[8], devminor[8], prefix[155], pad[12];
};

_Static_assert(sizeof(struct ustar) == BLOCK, "ustar header");

struct tar_writer *tar_open(const char *path)
{
	struct tar_writer *t = calloc(1, sizeof(*t));
	int fd;

	if (!t)
		return NULL;
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		free(t);
		return NULL;
	}
	t->gz = gzdopen(fd, "wb9");
	if (!t->gz) {
		close(fd);
		free(t);
		errno = ENOMEM;
		return NULL;
	}
	t->mtime = time(NULL);
	return t;
}

static void put(struct tar_writer *t, const void *buf, size_t len)
{
	if (!t->err && len && gzwrite(t->gz, buf, len) != (int)len)
		t->err = -1;
}

/* Zeros up to the next block boundary after LEN bytes of data. */
static void pad(struct tar_writer *t, uint64_t len)
{
	static const char zeros[BLOCK];

	if (len % BLOCK)
		put(t, zeros, BLOCK - len % BLOCK);
}

/* WIDTH - 1 octal digits and a NUL; a value that does not fit is an error. */
static void octal(struct tar_writer *t, char *field, size_t width, uint64_t v)
{
	field[width - 1] = '\0';
	for (size_t i = width - 1; i-- > 0; v >>= 3)
		field[i] = '0' + (v & 7);
	if (v)
		t->err = -1;
}

static void header(struct tar_writer *t, const char *name, char type, const char *link,
		   uint64_t size, unsigned int mode)
{
	struct ustar h;
	unsigned int sum = 0;

	memset(&h, 0, sizeof(h));
	strncpy(h.name, name, sizeof(h.name));
	if (link)
		strncpy(h.linkname, link, sizeof(h.linkname));
	octal(t, h.mode, sizeof(h.mode), mode);
	octal(t, h.uid, sizeof(h.uid), 0);
	octal(t, h.gid, sizeof(h.gid), 0);
	octal(t, h.size, sizeof(h.size), size);
	octal(t, h.mtime, sizeof(h.mtime), t->mtime);
	h.typeflag = type;
	memcpy(h.magic, "ustar", 6);
	memcpy(h.version, "00", 2);
	memset(h.chksum, ' ', sizeof(h.chksum));
	for (size_t i = 0; i < sizeof(h); i++)
		sum += ((unsigned char *)&h)[i];
	snprintf(h.chksum, sizeof(h.chksum), "%06o", sum);
	put(t, &h, sizeof(h));
}

/* GNU tar's record for a name (L) or link target (K) of 100 bytes or more. */
static void long_name(struct tar_writer *t, char type, const char *name)
{
	size_t len = strlen(name) + 1;

	header(t, LONG_NAME, type, NULL, len, 0644);
	put(t, name, len);
	pad(t, len);
}

/* Names of 100 bytes or more go first in a GNU long-name record. */
static void entry(struct tar_writer *t, const char *name, char type, const char *link,
		  uint64_t size, unsigned int mode)
{
	if (strlen(name) >= NAME_LEN)
		long_name(t, 'L', name);
	if (link && strlen(link) >= NAME_LEN)
		long_name(t, 'K', link);
	header(t, name, type, link, size, mode);
}

int tar_add_dir(struct tar_writer *t, const char *name)
{
	char slash[4096];

	if (snprintf(slash, sizeof(slash), "%s/", name) >= (int)sizeof(slash))
		return -1;
	entry(t, slash, '5', NULL, 0, 0755);
	return t->err;
}

int tar_add_symlink(struct tar_writer *t, const char *name, const char *target)
{
	entry(t, name, '2', target, 0, 0777);
	return t->err;
}

int tar_add_file(struct tar_writer *t, const char *name, int fd, uint64_t size,
		 unsigned int mode)
{
	char buf[65536];
	uint64_t left = size;

	entry(t, name, '0', NULL, size, mode & 07777);
	while (!t->err && left) {
		ssize_t n = read(fd, buf, left < sizeof(buf) ? left : sizeof(buf));

		/* The size is in the header already: a file that shrank is an error. */
		if (n <= 0) {
			t->err = -1;
			break;
		}
		put(t, buf, n);
		left -= n;
	}
	pad(t, size);
	t->content += size;
	return t->err;
}

int tar_add_bytes(struct tar_writer *t, const char *name, const void *buf, uint64_t len,
		  unsigned int mode)
{
	entry(t, name, '0', NULL, len, mode & 07777);
	put(t, buf, len);
	pad(t, len);
	t->content += len;
	return t->err;
}

uint64_t tar_content_bytes(const struct tar_writer *t)
{
	return t->content;
}

int tar_close(struct tar_writer *t)
{
	static const char zeros[2 * BLOCK];
	int err;

	put(t, zeros, sizeof(zeros));
	err = t->err;
	if (gzclose(t->gz) != Z_OK)
		err = -1;
	free(t);
	return err;
}
