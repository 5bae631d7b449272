/* SPDX-License-Identifier: GPL-2.0 */
/*
 * perf's build-id cache (~/.debug, or $PERF_BUILDID_DIR): a file recorded
 * as PATH with build-id HEX lives in DIR/PATH/HEX/elf, and the link
 * DIR/.build-id/<2 hex>/<rest> points there as ../../PATH/HEX.  The record
 * fills it with the files of other mount namespaces, report looks there
 * when the recorded path holds another file, and `offcpu archive` writes
 * the same layout into a tarball (perf-archive's).
 */
#ifndef OFFCPU_BUILDID_CACHE_H
#define OFFCPU_BUILDID_CACHE_H

#include <stddef.h>
#include <stdint.h>

/* The cache directory: $PERF_BUILDID_DIR, else $HOME/.debug; -1 if neither. */
int bidcache_dir(char *buf, size_t len);

/* ".build-id/xx/rest" for the id (no leading slash); -1 if it does not fit. */
int bidcache_link_name(const uint8_t *id, int id_len, char *buf, size_t len);

/* The kernel's name in the cache (its file is "kallsyms", not "elf"). */
#define BIDCACHE_KERNEL "[kernel.kallsyms]"

/* "PATH/HEX" without PATH's leading slash (the file is its "elf"); PATH may be BIDCACHE_KERNEL. */
int bidcache_entry_dir(const char *path, const uint8_t *id, int id_len,
		       char *buf, size_t len);

/* The link's target, "../../PATH/HEX". */
int bidcache_link_target(const char *path, const uint8_t *id, int id_len,
			 char *buf, size_t len);

/* DIR/.build-id/xx/rest/elf: where a file with this id is looked up. */
int bidcache_lookup_path(const char *dir, const uint8_t *id, int id_len,
			 char *buf, size_t len);

/* DIR/[kernel.kallsyms]/HEX/kallsyms: a kernel's symbols by its build-id. */
int bidcache_kallsyms_path(const char *dir, const uint8_t *id, int id_len,
			   char *buf, size_t len);

/*
 * Copies SRC (the file recorded as PATH, build-id ID) into the cache DIR
 * and links it by id, as `perf buildid-cache --add` does.  An id already
 * there is left alone.  0, or -1 with errno.
 */
int bidcache_add(const char *dir, const char *path, const char *src,
		 const uint8_t *id, int id_len);

#endif
