// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <lzma.h>
#include <zlib.h>

#include "lib/build_id.h"
#include "symbols/debuginfo.h"

#define DEBUG_DIR	"/usr/lib/debug"
/* Bounds on what one untrusted file may make us allocate. */
#define MAX_MINI	(256u << 20)	/* decompressed .gnu_debugdata */
#define LZMA_MEMLIMIT	(64u << 20)

Elf_Scn *debuginfo_symtab(Elf *elf, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, sh) && sh->sh_type == SHT_SYMTAB)
			return scn;
	return NULL;
}

static Elf_Data *section_data(Elf *elf, const char *want)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (name && !strcmp(name, want))
			return elf_getdata(scn, NULL);
	}
	return NULL;
}

/* ---- MiniDebugInfo ---- */

static void *unxz(const uint8_t *in, size_t n, size_t *out_len)
{
	lzma_stream st = LZMA_STREAM_INIT;
	size_t cap = n < MAX_MINI / 4 ? (n < 1024 ? 4096 : n * 4) : MAX_MINI;
	uint8_t *out = malloc(cap), *nv;
	lzma_ret r;

	if (!out || lzma_stream_decoder(&st, LZMA_MEMLIMIT, 0) != LZMA_OK) {
		free(out);
		return NULL;
	}
	st.next_in = in;
	st.avail_in = n;
	st.next_out = out;
	st.avail_out = cap;
	while ((r = lzma_code(&st, LZMA_FINISH)) == LZMA_OK) {
		if (st.avail_out)
			continue;
		if (cap >= MAX_MINI || !(nv = realloc(out, cap * 2)))
			break;
		out = nv;
		st.next_out = out + cap;
		st.avail_out = cap;
		cap *= 2;
	}
	*out_len = st.total_out;
	lzma_end(&st);
	if (r != LZMA_STREAM_END) {
		free(out);
		return NULL;
	}
	return out;
}

static int find_mini(Elf *elf, const char *path, struct debug_file *df)
{
	Elf_Data *data = section_data(elf, ".gnu_debugdata");
	GElf_Shdr sh;
	size_t len;

	if (!data || !data->d_buf || !data->d_size)
		return -1;
	df->image = unxz(data->d_buf, data->d_size, &len);
	if (!df->image)
		return -1;
	df->elf = elf_memory(df->image, len);
	if (!df->elf || elf_kind(df->elf) != ELF_K_ELF || !debuginfo_symtab(df->elf, &sh)) {
		debuginfo_close(df);
		return -1;
	}
	df->mini = true;
	snprintf(df->where, sizeof(df->where), "%s .gnu_debugdata", path);
	return 0;
}

/* ---- separate debug files ---- */

/* A regular file only (see open_regular in symbolize.c). */
static int open_file(const char *path)
{
	struct stat st;
	int fd;

	if (stat(path, &st) || !S_ISREG(st.st_mode) || !st.st_size)
		return -1;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd >= 0 && (fstat(fd, &st) || !S_ISREG(st.st_mode))) {
		close(fd);
		return -1;
	}
	return fd;
}

static uint32_t file_crc(int fd)
{
	unsigned char buf[65536];
	uLong crc = crc32(0, Z_NULL, 0);
	ssize_t n;
	off_t off = 0;

	while ((n = pread(fd, buf, sizeof(buf), off)) > 0) {
		crc = crc32(crc, buf, n);
		off += n;
	}
	return crc;
}

/*
 * Take PATH as the debug file when it is one of ours: same build-id, or
 * (no build-id to compare) the CRC .gnu_debuglink gave (HAVE_CRC).
 */
static int try_file(const char *path, const uint8_t *id, int id_len, bool have_crc,
		    uint32_t crc, struct debug_file *df)
{
	uint8_t got[BUILD_ID_MAX];
	GElf_Shdr sh;
	int len;

	df->fd = open_file(path);
	if (df->fd < 0)
		return -1;
	df->elf = elf_begin(df->fd, ELF_C_READ, NULL);
	if (!df->elf || elf_kind(df->elf) != ELF_K_ELF || !debuginfo_symtab(df->elf, &sh))
		goto no;
	len = build_id_of_elf(df->elf, got);
	if (id_len > 0 && len > 0) {
		if (len != id_len || memcmp(got, id, len))
			goto no;
	} else if (!have_crc || file_crc(df->fd) != crc) {
		goto no;
	}
	snprintf(df->where, sizeof(df->where), "%s", path);
	return 0;
no:
	debuginfo_close(df);
	return -1;
}

static int find_by_build_id(const char *symfs, const uint8_t *id, int id_len,
			    struct debug_file *df)
{
	char hex[2 * BUILD_ID_MAX + 1], path[PATH_MAX];

	if (id_len < 2)
		return -1;
	build_id_hex(id, id_len, hex);
	if (snprintf(path, sizeof(path), "%s" DEBUG_DIR "/.build-id/%.2s/%s.debug",
		     symfs, hex, hex + 2) >= (int)sizeof(path))
		return -1;
	return try_file(path, id, id_len, false, 0, df);
}

/* .gnu_debuglink: a file name, NUL, padding to 4, the CRC in file byte order. */
static int read_debuglink(Elf *elf, char *name, size_t size, uint32_t *crc)
{
	Elf_Data *data = section_data(elf, ".gnu_debuglink");
	Elf_Data src, dst;
	size_t len, off;

	if (!data || !data->d_buf)
		return -1;
	len = strnlen(data->d_buf, data->d_size);
	off = (len + 4) & ~(size_t)3;
	if (!len || len >= size || off + 4 > data->d_size || memchr(data->d_buf, '/', len))
		return -1;
	memcpy(name, data->d_buf, len + 1);
	src = (Elf_Data){ .d_buf = (char *)data->d_buf + off, .d_size = 4,
			  .d_type = ELF_T_WORD, .d_version = EV_CURRENT };
	dst = (Elf_Data){ .d_buf = crc, .d_size = 4, .d_version = EV_CURRENT };
	return gelf_xlatetom(elf, &dst, &src, elf_getident(elf, NULL)[EI_DATA]) ? 0 : -1;
}

static int find_by_link(Elf *elf, const char *symfs, const char *path, const uint8_t *id,
			int id_len, struct debug_file *df)
{
	char name[256], dir[PATH_MAX], cand[PATH_MAX];
	const char *slash = strrchr(path, '/');
	const char *fmts[] = { "%s%s/%s", "%s%s/.debug/%s", "%s" DEBUG_DIR "%s/%s" };
	uint32_t crc;

	if (read_debuglink(elf, name, sizeof(name), &crc) || !slash ||
	    (size_t)(slash - path) >= sizeof(dir))
		return -1;
	memcpy(dir, path, slash - path);
	dir[slash - path] = '\0';
	for (size_t i = 0; i < sizeof(fmts) / sizeof(*fmts); i++) {
		if (snprintf(cand, sizeof(cand), fmts[i], symfs, dir, name) >= (int)sizeof(cand))
			continue;
		/* The file itself can carry its own name as link: not a debug file. */
		if (!strcmp(cand + strlen(symfs), path))
			continue;
		if (!try_file(cand, id, id_len, true, crc, df))
			return 0;
	}
	return -1;
}

static int find_debug(Elf *elf, const char *symfs, const char *path, bool mini,
		      struct debug_file *df)
{
	uint8_t id[BUILD_ID_MAX];
	int id_len = build_id_of_elf(elf, id);

	memset(df, 0, sizeof(*df));
	df->fd = -1;
	if (!symfs)
		symfs = "";
	if ((mini && !find_mini(elf, path, df)) || !find_by_build_id(symfs, id, id_len, df) ||
	    !find_by_link(elf, symfs, path, id, id_len, df))
		return 0;
	return -1;
}

int debuginfo_find(Elf *elf, const char *symfs, const char *path, struct debug_file *df)
{
	return find_debug(elf, symfs, path, true, df);
}

int debuginfo_find_file(Elf *elf, const char *symfs, const char *path, struct debug_file *df)
{
	return find_debug(elf, symfs, path, false, df);
}

void debuginfo_close(struct debug_file *df)
{
	elf_end(df->elf);
	df->elf = NULL;
	if (df->fd >= 0)
		close(df->fd);
	df->fd = -1;
	free(df->image);
	df->image = NULL;
}
