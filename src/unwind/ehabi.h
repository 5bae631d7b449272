/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ARM EHABI unwinding tables (.ARM.exidx, .ARM.extab; ARM IHI 0038) as the
 * compact rows of cfi.h.  32-bit ARM code has no .eh_frame: GCC describes
 * each function once, by the instructions that undo its prologue (pops,
 * stack adjustments), valid from the end of the prologue to the start of
 * the epilogue -- which is where a blocked thread's return addresses
 * point.  Each function becomes one row, valid from its start to the next
 * entry's:
 *
 *   CFA = sp or r7 (Thumb-2's frame pointer, "vsp = r7") + off,
 *   RA  = lr saved at CFA + off, or SAME (a leaf: still in lr),
 *   FP  = r7 saved at CFA + off, or SAME.
 *
 * The frame register of an ARM row is r7 (what the copy's fp must hold);
 * ARM-state code that bases its frame on r11 ("vsp = r11") is not
 * supported.  Kinds:
 *   CFI_GAP:    EXIDX_CANTUNWIND, "refuse to unwind", or no entry: no
 *               table (the linker marks code without tables so), the
 *               unwinder may try a frame record there;
 *   CFI_EXPR:   instructions a row cannot express (a popped sp, vsp from
 *               another register, iWMMXt, spare opcodes): a cut, counted.
 * Generic-model entries (a personality routine's address) are decoded as
 * GCC lays them out (its __gcc_personality_v0 and __gxx_personality_v0
 * read their unwinding instructions through __gnu_unwind_frame, as
 * libunwind does too): glibc's stdio functions have them.
 */
#ifndef OFFCPU_EHABI_H
#define OFFCPU_EHABI_H

#include <stddef.h>
#include <stdint.h>

#include "unwind/cfi.h"

/* ARM registers as EHABI (and DWARF) number them. */
#define EHABI_FP	7	/* Thumb-2 frame pointer */
#define EHABI_SP	13
#define EHABI_LR	14
#define EHABI_PC	15

/*
 * Decodes unwinding instructions OPS (N bytes, in order) into ROW's rules
 * (its pc is left alone).  Returns the row's kind, also stored in ROW.
 */
enum cfi_kind ehabi_decode(const uint8_t *ops, size_t n, struct cfi_row *row);

/* One section's bytes at its file address. */
struct ehabi_section {
	const uint8_t *data;
	uint64_t addr;
	size_t size;
};

/*
 * Builds T from an .ARM.exidx section and its .ARM.extab (EXTAB->size may
 * be 0); TEXT_END: where the last entry's function ends (the end of its
 * executable segment), 0 if unknown.  T->machine is set to EM_ARM.
 * Returns 0, or -1 with one line in ERR (out of memory, a table too big,
 * not a table).
 */
int ehabi_table_build(const struct ehabi_section *exidx, const struct ehabi_section *extab,
		      uint64_t text_end, struct cfi_table *t, char *err, size_t errlen);

#endif
