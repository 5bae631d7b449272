/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one search of the address-sorted tables (process maps, CFI rows and
 * FDEs, symbols): how many entries start at or below an address.  libc's
 * bsearch finds an equal key only, not the last key at or below one.
 */
#ifndef OFFCPU_SORTED_H
#define OFFCPU_SORTED_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/*
 * The number of the N entries of SIZE bytes at BASE, sorted by the uint64_t
 * at offset KEY_OFF of each, whose key is at most KEY: the entry that may
 * hold KEY is the one before that index.  Inline: it runs for every frame
 * unwound and every address symbolized.
 */
static inline size_t sorted_upper(const void *base, size_t n, size_t size, size_t key_off,
				  uint64_t key)
{
	size_t lo = 0, hi = n;

	/* BASE is only offset inside the loop: an empty table may be NULL. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t k;

		memcpy(&k, (const char *)base + mid * size + key_off, sizeof(k));
		if (k <= key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

#endif
