// SPDX-License-Identifier: GPL-2.0
/* Reader of the embedded minimal-BTF archive (writer: btf/archive.py). */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "record/btf_archive.h"

#define MAGIC		"OCBTFAR1"
#define HDR_SIZE	16
#define ENTRY_SIZE	96	/* arch[16] release[64] raw u32 comp u32 offset u64 */
#define MAX_RAW		(64u << 20)

struct entry {
	char arch[17], release[65];
	uint32_t raw, comp;
	uint64_t off;
};

/* Little-endian on every target, so one archive format serves all boards. */
static uint64_t le(const uint8_t *p, int n)
{
	uint64_t v = 0;

	for (int i = n - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static int count_of(const uint8_t *ar, size_t len, char *err, size_t errlen)
{
	uint64_t n;

	if (len == 0)
		return 0;	/* built without any BTF */
	if (len < HDR_SIZE || memcmp(ar, MAGIC, 8) || le(ar + 8, 4) != 1) {
		snprintf(err, errlen, "bad archive header");
		return -1;
	}
	n = le(ar + 12, 4);
	if (n > (len - HDR_SIZE) / ENTRY_SIZE || n > INT_MAX) {
		snprintf(err, errlen, "entry table larger than the archive");
		return -1;
	}
	return (int)n;
}

static int entry_at(const uint8_t *ar, size_t len, int i, struct entry *e,
		    char *err, size_t errlen)
{
	const uint8_t *p = ar + HDR_SIZE + (size_t)i * ENTRY_SIZE;

	memcpy(e->arch, p, 16);
	e->arch[16] = '\0';
	memcpy(e->release, p + 16, 64);
	e->release[64] = '\0';
	e->raw = le(p + 80, 4);
	e->comp = le(p + 84, 4);
	e->off = le(p + 88, 8);
	if (e->off > len || e->comp > len - e->off || e->raw > MAX_RAW) {
		snprintf(err, errlen, "entry %d (%s) out of bounds", i, e->release);
		return -1;
	}
	return 0;
}

static const char *canon_arch(const char *m)
{
	return !strcmp(m, "arm64") ? "aarch64" : m;
}

static int inflate_entry(const uint8_t *ar, const struct entry *e, void **btf,
			 size_t *btf_len, char *err, size_t errlen)
{
	uLongf n = e->raw;
	void *buf = malloc(n ? n : 1);

	if (!buf) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (uncompress(buf, &n, ar + e->off, e->comp) != Z_OK || n != e->raw) {
		free(buf);
		snprintf(err, errlen, "corrupt BTF for %s", e->release);
		return -1;
	}
	*btf = buf;
	*btf_len = n;
	return 1;
}

int btf_archive_find(const void *ar, size_t len, const char *machine,
		     const char *release, void **btf, size_t *btf_len,
		     char *err, size_t errlen)
{
	int n = count_of(ar, len, err, errlen);
	struct entry e;

	for (int i = 0; i < n; i++) {
		if (entry_at(ar, len, i, &e, err, errlen))
			return -1;
		if (!strcmp(canon_arch(e.arch), canon_arch(machine)) &&
		    !strcmp(e.release, release))
			return inflate_entry(ar, &e, btf, btf_len, err, errlen);
	}
	return n < 0 ? -1 : 0;
}

int btf_archive_list(const void *ar, size_t len, FILE *out)
{
	char err[128];
	int n = count_of(ar, len, err, sizeof(err));
	struct entry e;

	if (n < 0) {
		fprintf(stderr, "offcpu: embedded BTF archive: %s\n", err);
		return -1;
	}
	for (int i = 0; i < n; i++) {
		if (entry_at(ar, len, i, &e, err, sizeof(err))) {
			fprintf(stderr, "offcpu: embedded BTF archive: %s\n", err);
			return -1;
		}
		fprintf(out, "btf: %s %s (%u bytes, %u compressed)\n", e.arch, e.release,
			e.raw, e.comp);
	}
	return n;
}
