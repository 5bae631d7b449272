// SPDX-License-Identifier: GPL-2.0
/* Open-addressing sets with linear probing; capacities are powers of two. */
#include <stdlib.h>
#include <string.h>

#include "lib/hashset.h"

/*
 * The three maps differ only in their key: one implementation, stamped out
 * per key type (C has no generics; function pointers would cost a call per
 * probe on the recorder's hot paths).  Values are non-NULL pointers, NULL
 * marking an empty slot; the table doubles at half full.
 */
#define DEFINE_MAP(map, key_t, HASH, EQ)					\
static size_t map##_slot(const struct map *m, key_t key)			\
{										\
	size_t i = (HASH(key)) & (m->cap - 1);					\
										\
	while (m->vals[i] && !(EQ(m->keys[i], key)))				\
		i = (i + 1) & (m->cap - 1);					\
	return i;								\
}										\
										\
void *map##_get(const struct map *m, key_t key)				\
{										\
	return m->cap ? m->vals[map##_slot(m, key)] : NULL;			\
}										\
										\
static int map##_grow(struct map *m)						\
{										\
	struct map n = { .cap = m->cap ? m->cap * 2 : 256 };			\
										\
	n.keys = calloc(n.cap, sizeof(*n.keys));				\
	n.vals = calloc(n.cap, sizeof(*n.vals));				\
	if (!n.keys || !n.vals) {						\
		free(n.keys);							\
		free(n.vals);							\
		return -1;							\
	}									\
	for (size_t i = 0; i < m->cap; i++) {					\
		size_t j;							\
										\
		if (!m->vals[i])						\
			continue;						\
		j = map##_slot(&n, m->keys[i]);					\
		n.keys[j] = m->keys[i];						\
		n.vals[j] = m->vals[i];						\
		n.n++;								\
	}									\
	free(m->keys);								\
	free(m->vals);								\
	*m = n;									\
	return 0;								\
}										\
										\
int map##_put(struct map *m, key_t key, void *val)				\
{										\
	size_t i;								\
										\
	if (!val || ((m->n + 1) * 2 > m->cap && map##_grow(m)))			\
		return -1;							\
	i = map##_slot(m, key);							\
	if (!m->vals[i])							\
		m->n++;								\
	m->keys[i] = key;							\
	m->vals[i] = val;							\
	return 0;								\
}										\
										\
void map##_free(struct map *m, void (*fn)(void *))				\
{										\
	for (size_t i = 0; fn && i < m->cap; i++)				\
		if (m->vals[i])							\
			fn(m->vals[i]);						\
	free(m->keys);								\
	free(m->vals);								\
	*m = (struct map){ 0 };							\
}

#define EQ_INT(a, b)	((a) == (b))
#define EQ_STR(a, b)	(!strcmp((a), (b)))
#define HASH_U64(k)	hash32((uint32_t)(k) ^ hash32((k) >> 32))

DEFINE_MAP(u32_map, uint32_t, hash32, EQ_INT)
DEFINE_MAP(u64_map, uint64_t, HASH_U64, EQ_INT)
DEFINE_MAP(str_map, const char *, fnv1a_str, EQ_STR)

/*
 * Linear probing's deletion: the entries after the hole that probed past it
 * move back.  The one at I, whose home is HOME, stays if that home lies
 * cyclically in (hole, i].
 */
static bool stays(size_t home, size_t hole, size_t i)
{
	return i > hole ? home > hole && home <= i : home > hole || home <= i;
}

void *u32_map_del(struct u32_map *m, uint32_t key)
{
	size_t mask = m->cap - 1, hole, i;
	void *val;

	if (!m->cap)
		return NULL;
	hole = u32_map_slot(m, key);
	val = m->vals[hole];
	if (!val)
		return NULL;
	m->vals[hole] = NULL;
	m->n--;
	for (i = (hole + 1) & mask; m->vals[i]; i = (i + 1) & mask) {
		if (stays(hash32(m->keys[i]) & mask, hole, i))
			continue;
		m->keys[hole] = m->keys[i];
		m->vals[hole] = m->vals[i];
		m->vals[i] = NULL;
		hole = i;
	}
	return val;
}

bool u32_set_has(const struct u32_set *s, uint32_t v)
{
	return u32_map_get(&s->m, v) != NULL;
}

int u32_set_add(struct u32_set *s, uint32_t v)
{
	static char present;

	return v ? u32_map_put(&s->m, v, &present) : 0;	/* zero is never a member */
}

void u32_set_free(struct u32_set *s)
{
	u32_map_free(&s->m, NULL);
}

static size_t str_slot(const struct str_set *s, const char *str)
{
	size_t i = fnv1a_str(str) & (s->cap - 1);

	while (s->v[i] && strcmp(s->v[i], str))
		i = (i + 1) & (s->cap - 1);
	return i;
}

static int str_set_grow(struct str_set *s)
{
	size_t cap = s->cap ? s->cap * 2 : 256;
	struct str_set n = { calloc(cap, sizeof(char *)), cap, 0 };

	if (!n.v)
		return -1;
	for (size_t i = 0; i < s->cap; i++) {
		if (s->v[i]) {
			n.v[str_slot(&n, s->v[i])] = s->v[i];
			n.n++;
		}
	}
	free(s->v);
	*s = n;
	return 0;
}

const char *str_set_intern(struct str_set *s, const char *str)
{
	size_t i;

	if ((s->n + 1) * 2 > s->cap && str_set_grow(s))
		return NULL;
	i = str_slot(s, str);
	if (s->v[i])
		return s->v[i];
	s->v[i] = strdup(str);
	if (!s->v[i])
		return NULL;
	s->n++;
	return s->v[i];
}

int str_set_add(struct str_set *s, const char *str)
{
	return str_set_intern(s, str) ? 0 : -1;
}

void str_set_free(struct str_set *s)
{
	for (size_t i = 0; i < s->cap; i++)
		free(s->v[i]);
	free(s->v);
	*s = (struct str_set){ 0 };
}


uintptr_t key_set_get(const struct key_set *s, uint32_t h, const void *key,
		      key_set_match *match, const void *ctx)
{
	size_t mask = s->cap - 1;

	if (!s->cap)
		return 0;
	for (size_t i = h & mask; s->v[i]; i = (i + 1) & mask)
		if (s->hash[i] == h && match(ctx, s->v[i], key))
			return s->v[i];
	return 0;
}

/* The empty slot where a record of hash H goes. */
static size_t key_slot(const struct key_set *s, uint32_t h)
{
	size_t i = h & (s->cap - 1);

	while (s->v[i])
		i = (i + 1) & (s->cap - 1);
	return i;
}

static int key_set_grow(struct key_set *s)
{
	struct key_set n = { .cap = s->cap ? s->cap * 2 : 256, .n = s->n };

	n.v = calloc(n.cap, sizeof(*n.v));
	n.hash = calloc(n.cap, sizeof(*n.hash));
	if (!n.v || !n.hash) {
		free(n.v);
		free(n.hash);
		return -1;
	}
	for (size_t i = 0; i < s->cap; i++) {
		size_t j;

		if (!s->v[i])
			continue;
		j = key_slot(&n, s->hash[i]);
		n.v[j] = s->v[i];
		n.hash[j] = s->hash[i];
	}
	free(s->v);
	free(s->hash);
	*s = n;
	return 0;
}

int key_set_add(struct key_set *s, uint32_t h, uintptr_t rec)
{
	size_t i;

	if (!rec || ((s->n + 1) * 2 > s->cap && key_set_grow(s)))
		return -1;
	i = key_slot(s, h);
	s->v[i] = rec;
	s->hash[i] = h;
	s->n++;
	return 0;
}

bool key_set_del(struct key_set *s, uint32_t h, uintptr_t rec)
{
	size_t mask = s->cap - 1, hole, i;

	if (!s->cap)
		return false;
	for (hole = h & mask; s->v[hole] != rec; hole = (hole + 1) & mask)
		if (!s->v[hole])
			return false;
	s->v[hole] = 0;
	s->n--;
	for (i = (hole + 1) & mask; s->v[i]; i = (i + 1) & mask) {
		if (stays(s->hash[i] & mask, hole, i))
			continue;
		s->v[hole] = s->v[i];
		s->hash[hole] = s->hash[i];
		s->v[i] = 0;
		hole = i;
	}
	return true;
}

void key_set_free(struct key_set *s)
{
	free(s->v);
	free(s->hash);
	*s = (struct key_set){ 0 };
}
