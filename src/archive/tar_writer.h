/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A gzipped tar writer (ustar headers, GNU long names), for `offcpu
 * archive`.  Our own because the toolchain has no tar library (libarchive
 * is not in it) and this only writes, from names and files we chose: it
 * never parses a tar.  gzip through zlib.
 */
#ifndef OFFCPU_TAR_WRITER_H
#define OFFCPU_TAR_WRITER_H

#include <stdint.h>

struct tar_writer;

/* Opens PATH for writing (created 0600, O_EXCL); NULL with errno. */
struct tar_writer *tar_open(const char *path);

/* A directory entry NAME (no trailing slash needed). */
int tar_add_dir(struct tar_writer *t, const char *name);

/* A symbolic link NAME -> TARGET. */
int tar_add_symlink(struct tar_writer *t, const char *name, const char *target);

/* The contents of the open file FD as NAME, with MODE; SIZE bytes exactly. */
int tar_add_file(struct tar_writer *t, const char *name, int fd, uint64_t size,
		 unsigned int mode);

/* LEN bytes at BUF as the file NAME. */
int tar_add_bytes(struct tar_writer *t, const char *name, const void *buf, uint64_t len,
		  unsigned int mode);

/* Bytes of file contents added so far. */
uint64_t tar_content_bytes(const struct tar_writer *t);

/* Writes the end blocks and closes; 0, or -1 if anything failed on the way. */
int tar_close(struct tar_writer *t);

#endif
