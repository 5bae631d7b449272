// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of src/lib/id_list.c, the one parser of pid, tid and CPU lists
 * (record's -p/-t/-C/--trigger-pid, report's --pid, the kernel's online CPU
 * list): what each spelling gives, and the reason given for each bad one.
 * Prints PASS/FAIL lines.
 */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "lib/id_list.h"

/* "ok:1,2,3" for a list parsed, "bad:why" for one refused. */
static void parsed(const char *s, unsigned flags, uint32_t min, uint32_t max,
		   char *out, size_t size)
{
	struct id_list l = { 0 };
	const char *why;
	size_t len;

	if (id_list_parse(&l, s, flags, min, max, &why)) {
		snprintf(out, size, "bad:%s", why);
		id_list_free(&l);
		return;
	}
	len = snprintf(out, size, "ok:");
	for (size_t i = 0; i < l.n && len < size; i++)
		len += snprintf(out + len, size - len, "%s%u", i ? "," : "", l.v[i]);
	id_list_free(&l);
}

struct want {
	const char *in;
	unsigned flags;
	uint32_t min, max;
	const char *out;
};

static const struct want cases[] = {
	{ "1", 0, 1, ID_PID_MAX, "ok:1" },
	{ "12,7,12", 0, 1, ID_PID_MAX, "ok:12,7,12" },
	{ "4194304", 0, 1, ID_PID_MAX, "ok:4194304" },
	{ "0-3,6", ID_RANGES, 0, ID_CPU_MAX, "ok:0,1,2,3,6" },
	{ "5-5", ID_RANGES, 0, ID_CPU_MAX, "ok:5" },
	{ "0", ID_RANGES, 0, ID_CPU_MAX, "ok:0" },
	{ "", 0, 1, ID_PID_MAX, "bad:empty list" },
	{ "1,", 0, 1, ID_PID_MAX, "bad:empty element" },
	{ ",1", 0, 1, ID_PID_MAX, "bad:empty element" },
	{ "1,,2", 0, 1, ID_PID_MAX, "bad:empty element" },
	{ "foo", 0, 1, ID_PID_MAX, "bad:expected a non-negative integer" },
	{ "-1", 0, 1, ID_PID_MAX, "bad:expected a non-negative integer" },
	{ "+1", 0, 1, ID_PID_MAX, "bad:expected a non-negative integer" },
	{ " 1", 0, 1, ID_PID_MAX, "bad:expected a non-negative integer" },
	{ "0", 0, 1, ID_PID_MAX, "bad:must be positive" },
	{ "4194305", 0, 1, ID_PID_MAX, "bad:too large" },
	{ "99999999999999999999", 0, 1, ID_PID_MAX, "bad:expected a non-negative integer" },
	{ "1x", 0, 1, ID_PID_MAX, "bad:expected numbers, comma-separated" },
	{ "1-3", 0, 1, ID_PID_MAX, "bad:expected numbers, comma-separated" },
	{ "3-1", ID_RANGES, 0, ID_CPU_MAX, "bad:bad range" },
	{ "1-", ID_RANGES, 0, ID_CPU_MAX, "bad:expected a number after '-'" },
	{ "1-2-3", ID_RANGES, 0, ID_CPU_MAX, "bad:expected numbers or ranges, comma-separated" },
	{ "0-8192", ID_RANGES, 0, ID_CPU_MAX, "bad:too large" },
	{ "2", ID_RANGES, 3, 9, "bad:too small" },
};

static void test_cases(void)
{
	char out[256], name[64];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct want *w = &cases[i];

		parsed(w->in, w->flags, w->min, w->max, out, sizeof(out));
		snprintf(name, sizeof(name), "parse-%zu", i);
		CHECK(name, !strcmp(out, w->out), "'%s' gave '%s', want '%s'", w->in, out, w->out);
	}
}

/* A second list appends: record's -p given twice keeps both. */
static void test_append_has(void)
{
	struct id_list l = { 0 };
	const char *why;
	int err = id_list_parse(&l, "3,4", 0, 1, 10, &why) ||
		  id_list_parse(&l, "9", 0, 1, 10, &why);

	CHECK("append", !err && l.n == 3 && l.v[2] == 9, "n %zu", l.n);
	CHECK("has", id_list_has(&l, 4) && id_list_has(&l, 9) && !id_list_has(&l, 5),
	      "membership wrong");
	id_list_free(&l);
	CHECK("free", !l.v && !l.n && !id_list_has(&l, 4), "not emptied");
}

int main(void)
{
	test_cases();
	test_append_has();
	return failures != 0;
}
