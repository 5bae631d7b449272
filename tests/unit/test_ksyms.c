// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of src/lib/ksyms.c, the one kallsyms reader: lookups by
 * address, by name and by range on a made-up file with the shapes real ones
 * have (modules after the core and out of order, one name twice, aliases at
 * one address, hidden addresses, an overlong line), and the running
 * kernel's own table when it can be read; a table read only as far as
 * the names asked for, from one open.  Prints PASS/FAIL lines.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "lib/ksyms.h"
#include "lib/procfs.h"

static const char text[] =
	"ffffffff81000000 T _text\n"
	"ffffffff81000000 T _stext\n"
	"ffffffff81000100 t dup\n"
	"ffffffff81000200 T __schedule\n"
	"ffffffff81000300 T schedule\n"
	"ffffffff81000400 t dup\n"
	"ffffffff81000500 D some_data\n"
	"ffffffffc0002000 t mod_b_fn\t[mod_b]\n"
	"ffffffffc0001000 t mod_a_fn\t[mod_a]\n"
	"ffffffffc0001800 t mod_a_end\t[mod_a]\n"
	"garbage line\n"
	"ffffffffc0003000 t last\n";

/* T in a new temporary file named from the template PATH: 0, or -1. */
static int write_temp(const char *t, char *path)
{
	int fd = mkstemp(path);
	FILE *f = fd < 0 ? NULL : fdopen(fd, "w");

	if (!f) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (fputs(t, f) < 0 || fclose(f)) {
		unlink(path);
		return -1;
	}
	return 0;
}

/* The table of a kallsyms file holding T, as ksyms_load() reads it. */
static struct ksyms *from_text(const char *t)
{
	char path[] = "/tmp/offcpu-ksyms.XXXXXX";
	struct ksyms *ks;

	if (write_temp(t, path))
		return NULL;
	ks = ksyms_load(path);
	unlink(path);
	return ks;
}

static void test_lookups(void)
{
	struct ksyms *ks = from_text(text);
	const struct ksym *k;
	uint64_t lo, hi;

	CHECK("read", ks && ksyms_count(ks) == 11, "%zu entries", ksyms_count(ks));
	k = ksyms_by_addr(ks, 0xffffffff81000250);
	CHECK("by-addr-inside", k && !strcmp(k->name, "__schedule"), "%s", k ? k->name : "none");
	k = ksyms_by_addr(ks, 0xffffffff81000000);
	CHECK("by-addr-first-alias", k && !strcmp(k->name, "_text"), "%s", k ? k->name : "none");
	CHECK("by-addr-below", !ksyms_by_addr(ks, 0x1000), "found one");
	k = ksyms_by_addr(ks, 0xffffffffc0001900);
	CHECK("by-addr-module-unsorted", k && !strcmp(k->name, "mod_a_end"), "%s", k ? k->name : "none");
	k = ksyms_by_name(ks, "dup");
	CHECK("by-name-first-in-file", k && k->addr == 0xffffffff81000100 && k->type == 't',
	      "%llx", k ? (unsigned long long)k->addr : 0ull);
	CHECK("by-name-absent", !ksyms_by_name(ks, "nope") && !ksyms_by_name(ks, "dupe"), "found");
	CHECK("range", !ksyms_range(ks, "__schedule", &lo, &hi) &&
	      lo == 0xffffffff81000200 && hi == 0xffffffff81000300, "%llx-%llx",
	      (unsigned long long)lo, (unsigned long long)hi);
	/* The next module in address order, not in the file's. */
	CHECK("range-across-modules", !ksyms_range(ks, "mod_b_fn", &lo, &hi) &&
	      hi == 0xffffffffc0003000, "hi %llx", (unsigned long long)hi);
	CHECK("range-last", ksyms_range(ks, "last", &lo, &hi) == -1 && !lo && !hi, "found");
	CHECK("range-absent", ksyms_range(ks, "nope", &lo, &hi) == -1, "found");
	ksyms_free(ks);
}

/* kptr_restrict: names listed, addresses zero. */
static void test_hidden(void)
{
	struct ksyms *ks = from_text("0000000000000000 T _text\n0000000000000000 T __schedule\n");
	uint64_t lo, hi;

	CHECK("hidden-name", ks && ksyms_by_name(ks, "__schedule"), "not found");
	CHECK("hidden-range", ksyms_range(ks, "__schedule", &lo, &hi) == -1, "a range");
	ksyms_free(ks);
}

/*
 * The tail of a line longer than the line buffer is not a symbol of its
 * own, even when it reads like one: the buffer's worth, then "ADDR T tail".
 */
static void test_long_line(void)
{
	size_t first = PROC_KSYMS_LINE - 1;
	char *t = malloc(first + 64);
	struct ksyms *ks;

	if (!t)
		return;
	memset(t, 'x', first);
	memcpy(t, "ffffffff81000000 T long", 23);
	strcpy(t + first, "ffffffff81000010 T tail\nffffffff81000020 T ok\n");
	ks = from_text(t);
	CHECK("long-line", ks && !ksyms_by_name(ks, "tail") && ksyms_by_name(ks, "ok"),
	      "tail taken or ok lost");
	ksyms_free(ks);
	free(t);
}

/*
 * An opened table reads only as far as the names asked for, answers from
 * what it read, and ends holding what one whole read holds.
 */
static void test_find(void)
{
	char path[] = "/tmp/offcpu-ksyms.XXXXXX";
	struct ksyms *ks, *whole;
	uint64_t addr = 1;
	size_t same = 0;
	int ret;

	if (write_temp(text, path)) {
		CHECK("find", 0, "cannot write %s", path);
		return;
	}
	ks = ksyms_open(path);
	whole = ksyms_load(path);
	unlink(path);
	/* (check's arguments are evaluated in no set order: find first.) */
	ret = ksyms_find(ks, "__schedule", &addr);
	CHECK("find-stops", ks && !ret && addr == 0xffffffff81000200 && ksyms_count(ks) == 4,
	      "%d, %llx after %zu entries", ret, (unsigned long long)addr, ksyms_count(ks));
	ret = ksyms_find(ks, "dup", &addr);
	CHECK("find-read-part", !ret && addr == 0xffffffff81000100 && ksyms_count(ks) == 4,
	      "%d, %llx after %zu entries", ret, (unsigned long long)addr, ksyms_count(ks));
	ret = ksyms_find(ks, "mod_a_fn", &addr);
	CHECK("find-on", !ret && addr == 0xffffffffc0001000 && ksyms_count(ks) == 9,
	      "%d, %llx after %zu entries", ret, (unsigned long long)addr, ksyms_count(ks));
	ret = ksyms_find(ks, "nope", &addr);
	CHECK("find-absent", ret == -1 && !addr && ksyms_count(ks) == 11,
	      "%d after %zu entries", ret, ksyms_count(ks));
	ret = ksyms_find(NULL, "_text", &addr) + ksyms_finish(NULL);
	CHECK("find-null", ret == -2, "%d", ret);
	ret = ksyms_finish(ks);
	CHECK("finish", !ret && ksyms_count(ks) == ksyms_count(whole),
	      "%zu of %zu", ksyms_count(ks), ksyms_count(whole));
	for (size_t i = 0; i < ksyms_count(ks) && i < ksyms_count(whole); i++) {
		const struct ksym *a = ksyms_at(ks, i), *b = ksyms_at(whole, i);

		same += a->addr == b->addr && a->type == b->type && !strcmp(a->name, b->name);
	}
	CHECK("find-then-finish-whole", same == ksyms_count(whole), "%zu of %zu the same",
	      same, ksyms_count(whole));
	ksyms_free(ks);
	ksyms_free(whole);
}

/* Descriptors open on /proc/kallsyms in this process. */
static int kallsyms_fds(void)
{
	char link[64], target[64];
	int n = 0;

	for (int fd = 0; fd < 1024; fd++) {
		ssize_t len;

		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		len = readlink(link, target, sizeof(target) - 1);
		if (len <= 0)
			continue;
		target[len] = '\0';
		n += !strcmp(target, "/proc/kallsyms");
	}
	return n;
}

/*
 * The running kernel's symbols: each question streamed, nothing kept open,
 * the answers those of the whole table.
 */
static void test_running(void)
{
	const char *names[] = { "schedule", "no_such_symbol_x", "_text" };
	uint64_t addr = 1, lo = 0, hi = 0, lo2 = 0, hi2 = 0, los[3], his[3];
	int found = ksyms_running_find("_text", &addr);
	bool has = ksyms_running_has("schedule");
	struct ksyms *run = ksyms_load("/proc/kallsyms");
	const struct ksym *k;
	int ret, nr;

	CHECK("load-not-regular", !ksyms_load("/dev/null") && !ksyms_load("/nonexistent"),
	      "loaded");
	if (!run || !ksyms_by_name(run, "_text")) {
		printf("SKIP running: /proc/kallsyms unreadable or without _text\n");
		ksyms_free(run);
		return;
	}
	CHECK("running-none-open", !kallsyms_fds(), "%d open", kallsyms_fds());
	CHECK("running-find", !found && addr == ksyms_by_name(run, "_text")->addr,
	      "%llx", (unsigned long long)addr);
	ret = ksyms_running_find("no_such_symbol_x", &addr);
	CHECK("running-find-absent", ret == -1 && !addr && !ksyms_running_has("no_such_symbol_x"),
	      "found");
	k = ksyms_by_name(run, "schedule");
	CHECK("running-has", has && k, "no schedule");
	ret = ksyms_running_range("schedule", &lo, &hi);
	nr = ksyms_running_ranges(names, 3, los, his);
	if (k && k->addr)
		CHECK("running-range", !ret && !ksyms_range(run, "schedule", &lo2, &hi2) &&
		      lo == lo2 && hi == hi2 && lo == k->addr && hi > lo &&
		      los[0] == lo && his[0] == hi && !los[1] && !his[1] &&
		      nr == 1 + !ksyms_range(run, "_text", &lo2, &hi2) &&
		      los[2] == lo2 && his[2] == hi2,
		      "%llx-%llx, %d ranges", (unsigned long long)lo, (unsigned long long)hi, nr);
	else
		CHECK("running-range-hidden", ret == -1 && !nr, "a range of hidden addresses");
	CHECK("running-none-left-open", !kallsyms_fds(), "%d open", kallsyms_fds());
	ksyms_free(run);
}

/* The kernel's %pS or %pB of an address: "name+0xoff/0xsize", nothing else. */
static void test_symbol_text(void)
{
	static const struct {
		const char *text;
		uint64_t addr, lo, hi;	/* lo = hi = 0: refused */
	} cases[] = {
		{ "__schedule+0x3ab/0xa40", 0xffffffff81000fabull, 0xffffffff81000c00ull,
		  0xffffffff81001640ull },
		{ "__schedule+0xa40/0xa40", 0x2000, 0x15c0, 0x2000 },	/* a call ending it */
		{ "__schedule+0x0/0xa40", 0x2000, 0x2000, 0x2a40 },	/* %pS of its start */
		{ "__schedule+0/0xa40", 0x2000, 0x2000, 0x2a40 },
		{ "__schedule+0x3ab/0xa40 [mod]", 0x1000, 0, 0 },	/* a module's */
		{ "__schedule.cold+0x3/0x10", 0x1000, 0, 0 },
		{ "x__schedule+0x3/0x10", 0x1000, 0, 0 },
		{ "__schedule+0x3ab", 0x1000, 0, 0 },			/* cut short */
		{ "__schedule+0x3ab/", 0x1000, 0, 0 },
		{ "__schedule+/0x10", 0x1000, 0, 0 },
		{ "__schedule+0x/0x10", 0x1000, 0, 0 },
		{ "__schedule+0xb00/0xa40", 0x1000, 0, 0 },		/* past its end */
		{ "__schedule+0x3/0", 0x1000, 0, 0 },
		{ "__schedule+0x3ab/0xa40", 0x100, 0, 0 },		/* below address 0 */
		{ "__schedule+0x1/0xffffffffffffffff", 0x10, 0, 0 },	/* past the top */
		{ "0xffffffff81000fab", 0xffffffff81000fabull, 0, 0 },	/* no symbol */
		{ "", 0x1000, 0, 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t lo = 1, hi = 1;
		int ret = ksyms_parse_symbol(cases[i].text, cases[i].addr, "__schedule", &lo, &hi);

		CHECK("symbol-text", lo == cases[i].lo && hi == cases[i].hi && ret == (cases[i].hi ? 0 : -1),
		      "'%s': %d, %llx-%llx", cases[i].text, ret, (unsigned long long)lo,
		      (unsigned long long)hi);
	}
}

int main(void)
{
	test_symbol_text();
	test_lookups();
	test_hidden();
	test_long_line();
	test_find();
	test_running();
	return failures != 0;
}
