/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The unit tests' one result printer: a "PASS name" or "FAIL name: why" line
 * per check, read by tests/t_unit.sh; main returns failures != 0.
 */
#ifndef OFFCPU_CHECK_H
#define OFFCPU_CHECK_H

#include <stdarg.h>
#include <stdio.h>

static int failures;

__attribute__((format(printf, 3, 4), unused))
static void result(const char *name, int ok, const char *fmt, ...)
{
	va_list ap;

	if (ok) {
		printf("PASS %s\n", name);
		return;
	}
	failures++;
	printf("FAIL %s: ", name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

#define CHECK(name, cond, ...) result(name, !!(cond), __VA_ARGS__)

#endif
