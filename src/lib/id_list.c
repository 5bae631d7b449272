// SPDX-License-Identifier: GPL-2.0
/*
 * Id lists.  Hand-written: libbpf parses the kernel's CPU masks only
 * internally (parse_cpu_mask_str is not exported), and the grammar is a
 * dozen lines.
 */
#include <errno.h>
#include <stdlib.h>

#include "lib/id_list.h"

static int add(struct id_list *l, uint32_t v)
{
	uint32_t *n = realloc(l->v, (l->n + 1) * sizeof(*n));

	if (!n)
		return -1;
	n[l->n++] = v;
	l->v = n;
	return 0;
}

/* One decimal number at *P, no sign, advancing *P past it. */
static int number(const char **p, uint64_t *v)
{
	char *end;
	unsigned long long x;

	if (**p < '0' || **p > '9')
		return -1;
	errno = 0;
	x = strtoull(*p, &end, 10);
	if (errno)
		return -1;
	*v = x;
	*p = end;
	return 0;
}

/* One element, "N" or "A-B", ending at ',' or the end of the string. */
static const char *element(const char **p, unsigned flags, uint64_t *a, uint64_t *b)
{
	if (number(p, a))
		return **p == ',' || !**p ? "empty element" : "expected a non-negative integer";
	*b = *a;
	if (**p == '-' && (flags & ID_RANGES)) {
		(*p)++;
		if (number(p, b))
			return "expected a number after '-'";
		if (*b < *a)
			return "bad range";
	}
	if (**p && **p != ',')
		return flags & ID_RANGES ? "expected numbers or ranges, comma-separated" :
					   "expected numbers, comma-separated";
	return NULL;
}

int id_list_parse(struct id_list *l, const char *s, unsigned flags,
		  uint32_t min, uint32_t max, const char **why)
{
	const char *p = s;

	if (!*s) {
		*why = "empty list";
		return -1;
	}
	for (;;) {
		uint64_t a, b;

		*why = element(&p, flags, &a, &b);
		if (*why)
			return -1;
		if (a < min || b > max) {
			*why = a >= min ? "too large" : min == 1 ? "must be positive" : "too small";
			return -1;
		}
		for (uint64_t v = a; v <= b; v++) {
			if (add(l, (uint32_t)v)) {
				*why = "out of memory";
				return -1;
			}
		}
		if (!*p)
			return 0;
		p++;	/* the comma */
	}
}

bool id_list_has(const struct id_list *l, uint32_t id)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i] == id)
			return true;
	return false;
}

void id_list_free(struct id_list *l)
{
	free(l->v);
	*l = (struct id_list){ 0 };
}
