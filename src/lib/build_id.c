// SPDX-License-Identifier: GPL-2.0
/* Build-ids: ELF notes through libelf, kernel notes from sysfs. */
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "lib/build_id.h"

#ifndef NT_GNU_BUILD_ID
#define NT_GNU_BUILD_ID 3
#endif

/* GNU build-id from the note sections (libelf gives them in host order). */
int build_id_of_elf(Elf *elf, uint8_t id[BUILD_ID_MAX])
{
	Elf_Scn *scn = NULL;
	int len = 0;

	while (!len && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		data = elf_getdata(scn, NULL);
		if (data && data->d_buf)
			len = build_id_from_notes(data->d_buf, data->d_size, id);
	}
	return len;
}

int build_id_of_file(const char *path, uint8_t id[BUILD_ID_MAX])
{
	int fd, len;
	Elf *elf;

	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		elf_end(elf);
		close(fd);
		return -1;
	}
	len = build_id_of_elf(elf, id);
	elf_end(elf);
	close(fd);
	return len;
}

/* Notes in the running kernel's byte order: 4-byte aligned Elf32_Nhdr. */
int build_id_from_notes(const void *notes, size_t len, uint8_t id[BUILD_ID_MAX])
{
	const uint8_t *p = notes;
	size_t off = 0;

	while (off + 12 <= len) {
		uint32_t namesz, descsz, type;
		size_t name, desc, next;

		memcpy(&namesz, p + off, 4);
		memcpy(&descsz, p + off + 4, 4);
		memcpy(&type, p + off + 8, 4);
		name = off + 12;
		desc = name + ((namesz + 3ull) & ~3ull);
		next = desc + ((descsz + 3ull) & ~3ull);
		if (namesz > len || descsz > len || next > len || next <= off)
			return 0;
		if (type == NT_GNU_BUILD_ID && namesz == 4 && !memcmp(p + name, "GNU", 4) &&
		    descsz > 0 && descsz <= BUILD_ID_MAX) {
			memcpy(id, p + desc, descsz);
			return descsz;
		}
		off = next;
	}
	return 0;
}

int build_id_of_kernel(uint8_t id[BUILD_ID_MAX])
{
	uint8_t buf[4096];
	ssize_t n;
	int fd = open("/sys/kernel/notes", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf));
	close(fd);
	return n > 0 ? build_id_from_notes(buf, n, id) : -1;
}

void build_id_hex(const uint8_t *id, int len, char *buf)
{
	for (int i = 0; i < len; i++)
		sprintf(buf + 2 * i, "%02x", id[i]);
	buf[len > 0 ? 2 * len : 0] = '\0';
}
