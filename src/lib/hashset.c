// SPDX-License-Identifier: GPL-2.0
/* Open-addressing sets with linear probing; capacities are powers of two. */
#include <stdlib.h>
#include <string.h>

#include "lib/hashset.h"

static size_t u32_slot(const struct u32_map *m, uint32_t key)
{
	size_t i = hash32(key) & (m->cap - 1);

	while (m->vals[i] && m->keys[i] != key)
		i = (i + 1) & (m->cap - 1);
	return i;
}

void *u32_map_get(const struct u32_map *m, uint32_t key)
{
	return m->cap ? m->vals[u32_slot(m, key)] : NULL;
}

static int u32_map_grow(struct u32_map *m)
{
	struct u32_map n = { .cap = m->cap ? m->cap * 2 : 256 };

	n.keys = calloc(n.cap, sizeof(*n.keys));
	n.vals = calloc(n.cap, sizeof(*n.vals));
	if (!n.keys || !n.vals) {
		free(n.keys);
		free(n.vals);
		return -1;
	}
	for (size_t i = 0; i < m->cap; i++) {
		size_t j;

		if (!m->vals[i])
			continue;
		j = u32_slot(&n, m->keys[i]);
		n.keys[j] = m->keys[i];
		n.vals[j] = m->vals[i];
		n.n++;
	}
	free(m->keys);
	free(m->vals);
	*m = n;
	return 0;
}

int u32_map_put(struct u32_map *m, uint32_t key, void *val)
{
	size_t i;

	if ((m->n + 1) * 2 > m->cap && u32_map_grow(m))
		return -1;
	i = u32_slot(m, key);
	if (!m->vals[i])
		m->n++;
	m->keys[i] = key;
	m->vals[i] = val;
	return 0;
}

/* Linear probing: the entries after the hole that probed past it move back. */
void *u32_map_del(struct u32_map *m, uint32_t key)
{
	size_t mask = m->cap - 1, hole, i;
	void *val;

	if (!m->cap)
		return NULL;
	hole = u32_slot(m, key);
	val = m->vals[hole];
	if (!val)
		return NULL;
	m->vals[hole] = NULL;
	m->n--;
	for (i = (hole + 1) & mask; m->vals[i]; i = (i + 1) & mask) {
		size_t home = hash32(m->keys[i]) & mask;

		/* Stays if its home lies cyclically in (hole, i]. */
		if ((i > hole) ? (home > hole && home <= i) : (home > hole || home <= i))
			continue;
		m->keys[hole] = m->keys[i];
		m->vals[hole] = m->vals[i];
		m->vals[i] = NULL;
		hole = i;
	}
	return val;
}

void u32_map_free(struct u32_map *m, void (*fn)(void *))
{
	for (size_t i = 0; fn && i < m->cap; i++)
		if (m->vals[i])
			fn(m->vals[i]);
	free(m->keys);
	free(m->vals);
	*m = (struct u32_map){ 0 };
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

static size_t strmap_slot(const struct str_map *m, const char *key)
{
	size_t i = fnv1a_str(key) & (m->cap - 1);

	while (m->vals[i] && strcmp(m->keys[i], key))
		i = (i + 1) & (m->cap - 1);
	return i;
}

void *str_map_get(const struct str_map *m, const char *key)
{
	return m->cap ? m->vals[strmap_slot(m, key)] : NULL;
}

static int str_map_grow(struct str_map *m)
{
	struct str_map n = { .cap = m->cap ? m->cap * 2 : 256 };

	n.keys = calloc(n.cap, sizeof(*n.keys));
	n.vals = calloc(n.cap, sizeof(*n.vals));
	if (!n.keys || !n.vals) {
		free(n.keys);
		free(n.vals);
		return -1;
	}
	for (size_t i = 0; i < m->cap; i++) {
		size_t j;

		if (!m->vals[i])
			continue;
		j = strmap_slot(&n, m->keys[i]);
		n.keys[j] = m->keys[i];
		n.vals[j] = m->vals[i];
		n.n++;
	}
	free(m->keys);
	free(m->vals);
	*m = n;
	return 0;
}

int str_map_put(struct str_map *m, const char *key, void *val)
{
	size_t i;

	if ((m->n + 1) * 2 > m->cap && str_map_grow(m))
		return -1;
	i = strmap_slot(m, key);
	if (!m->vals[i])
		m->n++;
	m->keys[i] = key;
	m->vals[i] = val;
	return 0;
}

void str_map_free(struct str_map *m, void (*fn)(void *))
{
	for (size_t i = 0; fn && i < m->cap; i++)
		if (m->vals[i])
			fn(m->vals[i]);
	free(m->keys);
	free(m->vals);
	*m = (struct str_map){ 0 };
}

static size_t u64_slot(const struct u64_map *m, uint64_t key)
{
	size_t i = hash32((uint32_t)key ^ hash32(key >> 32)) & (m->cap - 1);

	while (m->vals[i] && m->keys[i] != key)
		i = (i + 1) & (m->cap - 1);
	return i;
}

uint64_t u64_map_get(const struct u64_map *m, uint64_t key)
{
	return m->cap ? m->vals[u64_slot(m, key)] : 0;
}

static int u64_map_grow(struct u64_map *m)
{
	struct u64_map n = { .cap = m->cap ? m->cap * 2 : 256 };

	n.keys = calloc(n.cap, sizeof(*n.keys));
	n.vals = calloc(n.cap, sizeof(*n.vals));
	if (!n.keys || !n.vals) {
		free(n.keys);
		free(n.vals);
		return -1;
	}
	for (size_t i = 0; i < m->cap; i++) {
		size_t j;

		if (!m->vals[i])
			continue;
		j = u64_slot(&n, m->keys[i]);
		n.keys[j] = m->keys[i];
		n.vals[j] = m->vals[i];
		n.n++;
	}
	free(m->keys);
	free(m->vals);
	*m = n;
	return 0;
}

int u64_map_put(struct u64_map *m, uint64_t key, uint64_t val)
{
	size_t i;

	if (!val)
		return -1;	/* 0 marks an empty slot */
	if ((m->n + 1) * 2 > m->cap && u64_map_grow(m))
		return -1;
	i = u64_slot(m, key);
	if (!m->vals[i])
		m->n++;
	m->keys[i] = key;
	m->vals[i] = val;
	return 0;
}

void u64_map_free(struct u64_map *m)
{
	free(m->keys);
	free(m->vals);
	*m = (struct u64_map){ 0 };
}
