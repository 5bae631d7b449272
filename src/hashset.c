// SPDX-License-Identifier: GPL-2.0
/* Open-addressing sets with linear probing; capacities are powers of two. */
#include <stdlib.h>
#include <string.h>

#include "hashset.h"

bool u32_set_has(const struct u32_set *s, uint32_t v)
{
	if (!s->cap)
		return false;
	for (size_t i = hash32(v) & (s->cap - 1);; i = (i + 1) & (s->cap - 1)) {
		if (s->v[i] == v)
			return true;
		if (!s->v[i])
			return false;
	}
}

int u32_set_add(struct u32_set *s, uint32_t v)
{
	if (!v || u32_set_has(s, v))
		return 0;
	if ((s->n + 1) * 2 > s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		struct u32_set n = { calloc(cap, sizeof(uint32_t)), cap, 0 };

		if (!n.v)
			return -1;
		for (size_t i = 0; i < s->cap; i++)
			if (s->v[i])
				u32_set_add(&n, s->v[i]);
		free(s->v);
		*s = n;
	}
	for (size_t i = hash32(v) & (s->cap - 1);; i = (i + 1) & (s->cap - 1)) {
		if (!s->v[i]) {
			s->v[i] = v;
			s->n++;
			return 0;
		}
	}
}

void u32_set_free(struct u32_set *s)
{
	free(s->v);
	*s = (struct u32_set){ 0 };
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

int str_set_add(struct str_set *s, const char *str)
{
	size_t i;

	if ((s->n + 1) * 2 > s->cap && str_set_grow(s))
		return -1;
	i = str_slot(s, str);
	if (s->v[i])
		return 0;
	s->v[i] = strdup(str);
	if (!s->v[i])
		return -1;
	s->n++;
	return 0;
}

void str_set_free(struct str_set *s)
{
	for (size_t i = 0; i < s->cap; i++)
		free(s->v[i]);
	free(s->v);
	*s = (struct str_set){ 0 };
}
