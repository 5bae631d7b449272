// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of src/lib/hashset.c's string and u64 maps (the symbolizer's
 * files, the recorder's mapped files, pprof's ids and strings): thousands
 * of keys through several growths, replacement, absent keys, colliding
 * u64 halves, NULL refused.  And its key set (the recorder's unwound
 * stacks, the report's aggregates): clusters of equal hashes, deletions
 * inside them and across the table's end.  Prints PASS/FAIL lines.
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

/* The key set's records: indices + 1 into keys[]; a weak hash piles them up. */
static int set_keys[N];
static int asked_other;		/* match asked of a record of another hash */

static uint32_t weak_hash(int key)
{
	return (uint32_t)key / 4 * 64;	/* four keys a hash, homes 64 slots apart */
}

static bool key_match(const void *ctx, uintptr_t rec, const void *key)
{
	const int *keys = ctx, k = *(const int *)key;

	asked_other += weak_hash(keys[rec - 1]) != weak_hash(k);
	return keys[rec - 1] == k;
}

static uintptr_t set_get(const struct key_set *s, int key)
{
	return key_set_get(s, weak_hash(key), &key, key_match, set_keys);
}

/* How many of keys [0, N) are found wrongly: present ones (not in GONE) as absent, or the converse. */
static int set_wrong(const struct key_set *s, const bool *gone)
{
	int bad = 0;

	for (int i = 0; i < N; i++)
		bad += set_get(s, set_keys[i]) != (gone && gone[i] ? 0 : (uintptr_t)i + 1);
	return bad;
}

static void test_key_set(void)
{
	static bool gone[N];
	struct key_set s = { 0 };
	int bad = 0, again = 0;

	for (int i = 0; i < N; i++) {
		set_keys[i] = 3 * i + 1;
		bad += key_set_add(&s, weak_hash(set_keys[i]), i + 1) != 0;
	}
	CHECK("key-set-get", !bad && s.n == N && !set_wrong(&s, NULL), "n %zu", s.n);
	CHECK("key-set-absent", !set_get(&s, 0) && !set_get(&s, 2) && !set_get(&s, 3 * N + 1),
	      "found");
	CHECK("key-set-asks-same-hash", !asked_other, "%d asked of another hash", asked_other);
	/* Every third, inside the clusters: the rest must still be reached. */
	for (int i = 0; i < N; i += 3)
		gone[i] = key_set_del(&s, weak_hash(set_keys[i]), i + 1);
	CHECK("key-set-del", s.n == N - (N + 2) / 3 && !set_wrong(&s, gone), "n %zu, %d wrong",
	      s.n, set_wrong(&s, gone));
	CHECK("key-set-del-absent", !key_set_del(&s, weak_hash(set_keys[0]), 1) &&
	      !key_set_del(&s, 12345, N + 7), "deleted twice");
	for (int i = 0; i < N; i += 3)
		again += key_set_add(&s, weak_hash(set_keys[i]), i + 1) != 0;
	CHECK("key-set-readd", !again && s.n == N && !set_wrong(&s, NULL), "n %zu", s.n);
	key_set_free(&s);
	CHECK("key-set-free", !s.cap && !s.n && !set_get(&s, 1), "not emptied");
}

/* A cluster that runs past the table's last slot: deleting its head moves the wrapped ones back. */
static void test_key_set_wrap(void)
{
	struct key_set s = { 0 };
	int bad = 0;

	key_set_add(&s, 0, 1);	/* the table's first growth: 256 slots */
	for (uintptr_t r = 2; r <= 6; r++)
		key_set_add(&s, 254, r);	/* 254, 255, then 1, 2, 3 (0 is taken) */
	key_set_add(&s, 1, 7);		/* home 1, pushed to 4 */
	key_set_del(&s, 254, 2);
	key_set_del(&s, 0, 1);
	for (uintptr_t r = 3; r <= 6; r++)
		bad += !key_set_del(&s, 254, r);
	bad += !key_set_del(&s, 1, 7);
	CHECK("key-set-del-wrapped", s.cap == 256 && !bad && !s.n, "%d not found, n %zu", bad, s.n);
	key_set_free(&s);
}

int main(void)
{
	test_str_map();
	test_u64_map();
	test_key_set();
	test_key_set_wrap();
	return failures != 0;
}
