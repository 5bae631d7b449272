/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The hashes and open-addressing tables every module shares: one FNV-1a for
 * strings and bytes, one integer mixer, maps from u32, u64 and strings, a
 * set of non-zero u32, a set of strings (owned copies), and a set of the
 * caller's records under keys of its own.
 */
#ifndef OFFCPU_HASHSET_H
#define OFFCPU_HASHSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FNV1A_INIT 2166136261u

/* FNV-1a over N bytes, continuing from H (FNV1A_INIT to start). */
static inline uint32_t fnv1a(uint32_t h, const void *p, size_t n)
{
	const uint8_t *b = p;

	while (n--)
		h = (h ^ *b++) * 16777619u;
	return h;
}

static inline uint32_t fnv1a_str(const char *s)
{
	uint32_t h = FNV1A_INIT;

	while (*s)
		h = (h ^ (uint8_t)*s++) * 16777619u;
	return h;
}

/* Spreads the bits of small integers (pids, tids) over a table (lowbias32). */
static inline uint32_t hash32(uint32_t x)
{
	x ^= x >> 16;
	x *= 0x7feb352d;
	x ^= x >> 15;
	x *= 0x846ca68b;
	return x ^ (x >> 16);
}

/* u32 -> non-NULL pointer. */
struct u32_map {
	uint32_t *keys;
	void **vals;	/* NULL: an empty slot */
	size_t cap, n;
};

void *u32_map_get(const struct u32_map *m, uint32_t key);
/* Adds or replaces; -1 when out of memory (or VAL is NULL). */
int u32_map_put(struct u32_map *m, uint32_t key, void *val);
/* Removes KEY; its value, or NULL when absent. */
void *u32_map_del(struct u32_map *m, uint32_t key);
/* Calls FN (if any) on every value, then frees the table. */
void u32_map_free(struct u32_map *m, void (*fn)(void *));

/* A set of non-zero u32: a map whose values are only there. */
struct u32_set {
	struct u32_map m;
};

bool u32_set_has(const struct u32_set *s, uint32_t v);
int u32_set_add(struct u32_set *s, uint32_t v);
void u32_set_free(struct u32_set *s);

/*
 * const char * -> non-NULL pointer.  The keys are borrowed: each must live
 * as long as its entry (usually it is the value's own copy, as a dso's path).
 * Iterate with for (i < cap) if (vals[i]).
 */
struct str_map {
	const char **keys;
	void **vals;	/* NULL: an empty slot */
	size_t cap, n;
};

void *str_map_get(const struct str_map *m, const char *key);
/* Adds or replaces; -1 when out of memory (or VAL is NULL). */
int str_map_put(struct str_map *m, const char *key, void *val);
/* Calls FN (if any) on every value, then frees the table. */
void str_map_free(struct str_map *m, void (*fn)(void *));

/* u64 -> non-NULL pointer. */
struct u64_map {
	uint64_t *keys;
	void **vals;	/* NULL: an empty slot */
	size_t cap, n;
};

void *u64_map_get(const struct u64_map *m, uint64_t key);
/* Adds or replaces; -1 when out of memory (or VAL is NULL). */
int u64_map_put(struct u64_map *m, uint64_t key, void *val);
void u64_map_free(struct u64_map *m, void (*fn)(void *));

struct str_set {
	char **v;	/* cap slots, NULL when empty */
	size_t cap, n;
};

/* Adds a copy of STR unless present; -1 when out of memory. */
int str_set_add(struct str_set *s, const char *str);
/* The set's copy of STR (added if need be; stable until freed), or NULL. */
const char *str_set_intern(struct str_set *s, const char *str);
void str_set_free(struct str_set *s);

/*
 * The caller's records under keys of its own (a stack's frames, a report's
 * aggregate): the caller hashes a key and says whether a record has it; the
 * set keeps each record's hash, so it grows and deletes without asking, and
 * asks only of records whose hash is the key's.  Records are non-zero
 * uintptr_t: pointers, or indices + 1 into the caller's array.  Iterate
 * with for (i < cap) if (v[i]).
 */
struct key_set {
	uintptr_t *v;		/* 0: an empty slot */
	uint32_t *hash;		/* of v[i] */
	size_t cap, n;
};

/* Whether record REC has key KEY (CTX: the caller's, as given to key_set_get). */
typedef bool key_set_match(const void *ctx, uintptr_t rec, const void *key);

/* The record with KEY, whose hash is H, or 0. */
uintptr_t key_set_get(const struct key_set *s, uint32_t h, const void *key,
		      key_set_match *match, const void *ctx);
/* Adds REC (hash H), whose key the set does not hold yet; -1 when out of memory. */
int key_set_add(struct key_set *s, uint32_t h, uintptr_t rec);
/* Removes REC (hash H), found by identity; false when it is not there. */
bool key_set_del(struct key_set *s, uint32_t h, uintptr_t rec);
void key_set_free(struct key_set *s);

#endif
