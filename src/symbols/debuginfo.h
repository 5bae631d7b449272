/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where the symbols of a stripped ELF file are, found as perf and gdb find
 * them: MiniDebugInfo (.gnu_debugdata, an xz-compressed ELF with a .symtab),
 * the build-id path /usr/lib/debug/.build-id/xx/rest.debug, and the file
 * .gnu_debuglink names (beside the file, in .debug/, under /usr/lib/debug),
 * each under --symfs when given.  A debug file is taken only when its
 * build-id equals the file's, or, without build-ids, its CRC the link's.
 * Every file read here is untrusted input.
 */
#ifndef OFFCPU_DEBUGINFO_H
#define OFFCPU_DEBUGINFO_H

#include <stdbool.h>
#include <stddef.h>

#include <gelf.h>

struct debug_file {
	Elf *elf;		/* holds a .symtab */
	int fd;			/* -1 for MiniDebugInfo */
	void *image;		/* MiniDebugInfo: the decompressed ELF */
	bool mini;		/* MiniDebugInfo: symbols of .dynsym are not in it */
	char where[4096];	/* the debug file, or "PATH .gnu_debugdata" */
};

/*
 * The debug symbols of ELF, the file PATH (as recorded) under SYMFS (may be
 * NULL).  0 and DF filled when found; -1 when there are none.
 */
int debuginfo_find(Elf *elf, const char *symfs, const char *path, struct debug_file *df);
/*
 * The separate debug file of ELF alone (build-id path, else .gnu_debuglink),
 * never MiniDebugInfo: what the unwinder wants of it is the .debug_frame a
 * stripped file's debug package carries.  0 and DF filled, or -1.
 */
int debuginfo_find_file(Elf *elf, const char *symfs, const char *path, struct debug_file *df);
void debuginfo_close(struct debug_file *df);

/* The .symtab section of ELF, or NULL. */
Elf_Scn *debuginfo_symtab(Elf *elf, GElf_Shdr *sh);

#endif
