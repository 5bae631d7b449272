// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of src/lib/hashset.c's string and u64 maps (the symbolizer's
 * files, the recorder's mapped files, pprof's ids and strings): thousands
 * of keys through several growths, replacement, absent keys, colliding
 * u64 halves, NULL refused.  Prints PASS/FAIL lines.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "lib/hashset.h"

#define N 5000

static int freed;

static void count_free(void *v)
{
	(void)v;
	freed++;
}

static void test_str_map(void)
{
	static char keys[N][16];
	struct str_map m = { 0 };
	int bad = 0;
	char probe[16];

	for (int i = 0; i < N; i++) {
		snprintf(keys[i], sizeof(keys[i]), "/lib/%d.so", i);
		bad += str_map_put(&m, keys[i], &keys[i]) != 0;
	}
	for (int i = 0; i < N; i++) {
		/* Another copy of the text: looked up by content, not by pointer. */
		snprintf(probe, sizeof(probe), "/lib/%d.so", i);
		bad += str_map_get(&m, probe) != &keys[i];
	}
	CHECK("str-map-get", !bad && m.n == N, "%d wrong, n %zu", bad, m.n);
	CHECK("str-map-absent", !str_map_get(&m, "/lib/5000.so") && !str_map_get(&m, ""),
	      "found");
	str_map_put(&m, keys[7], &keys[8]);
	CHECK("str-map-replace", str_map_get(&m, "/lib/7.so") == &keys[8] && m.n == N,
	      "n %zu", m.n);
	str_map_free(&m, count_free);
	CHECK("str-map-free", freed == N && !m.cap && !str_map_get(&m, "/lib/1.so"),
	      "freed %d", freed);
}

static void test_u64_map(void)
{
	static char vals[N + 1];
	struct u64_map m = { 0 };
	int bad = 0;

	/* Keys whose halves are alike, so that a weak mix would pile them up. */
	for (uint64_t i = 1; i <= N; i++)
		bad += u64_map_put(&m, i << 32 | i, &vals[i]) != 0;
	for (uint64_t i = 1; i <= N; i++)
		bad += u64_map_get(&m, i << 32 | i) != &vals[i];
	CHECK("u64-map-get", !bad && m.n == N, "%d wrong", bad);
	CHECK("u64-map-absent", !u64_map_get(&m, 1) && !u64_map_get(&m, 1ull << 32), "found");
	CHECK("u64-map-null-refused", u64_map_put(&m, 9, NULL) == -1 && !u64_map_get(&m, 9),
	      "NULL stored");
	u64_map_put(&m, 1ull << 32 | 1, &vals[0]);
	CHECK("u64-map-replace", u64_map_get(&m, 1ull << 32 | 1) == &vals[0] && m.n == N,
	      "n %zu", m.n);
	u64_map_free(&m, NULL);
	CHECK("u64-map-free", !m.cap && !u64_map_get(&m, 5), "not emptied");
}

int main(void)
{
	test_str_map();
	test_u64_map();
	return failures != 0;
}
