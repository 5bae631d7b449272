/* SPDX-License-Identifier: GPL-2.0 */
/* GNU build-ids of ELF files (libelf) and of the running kernel. */
#ifndef OFFCPU_BUILD_ID_H
#define OFFCPU_BUILD_ID_H

#include <stddef.h>
#include <stdint.h>

#define BUILD_ID_MAX 20

/* Returns the id length (1..20), 0 if the file has none, -1 if unreadable. */
int build_id_of_file(const char *path, uint8_t id[BUILD_ID_MAX]);

typedef struct Elf Elf;

/* The id in an open ELF's note sections: its length, or 0 when none. */
int build_id_of_elf(Elf *elf, uint8_t id[BUILD_ID_MAX]);

/* Parses an ELF note section's bytes for NT_GNU_BUILD_ID. */
int build_id_from_notes(const void *notes, size_t len, uint8_t id[BUILD_ID_MAX]);

/* The running kernel's, from /sys/kernel/notes. */
int build_id_of_kernel(uint8_t id[BUILD_ID_MAX]);

/* Lower-case hex into BUF (at least 2 * BUILD_ID_MAX + 1 bytes). */
void build_id_hex(const uint8_t *id, int len, char *buf);

#endif
