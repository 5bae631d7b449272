// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the tracefs format parser (src/record/tracefs.c): the formats of
 * Linux 6.18 (x86_64, as read on the build host) and of 5.10 (fork's names
 * inline, so other offsets), every prefix of a real format, and malformed
 * or hostile files.  Each input sits in a buffer of its exact length, so
 * ASan sees any read past it.  Prints PASS/FAIL lines.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "record/tracefs.h"

#define HDR "format:\n" \
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n" \
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n" \
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n" \
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"

static const char switch_618[] = "name: sched_switch\nID: 372\n" HDR
	"\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
	"\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n"
	"\tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;\n"
	"\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n"
	"\tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:0;\n"
	"\tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;\n"
	"\tfield:int next_prio;\toffset:60;\tsize:4;\tsigned:1;\n\n"
	"print fmt: \"prev_comm=%s prev_pid=%d next_pid=%d\", REC->prev_comm, REC->prev_pid, REC->next_pid\n";
static const char fork_618[] = "name: sched_process_fork\nID: 366\n" HDR
	"\tfield:__data_loc char[] parent_comm;\toffset:8;\tsize:4;\tsigned:0;\n"
	"\tfield:pid_t parent_pid;\toffset:12;\tsize:4;\tsigned:1;\n"
	"\tfield:__data_loc char[] child_comm;\toffset:16;\tsize:4;\tsigned:0;\n"
	"\tfield:pid_t child_pid;\toffset:20;\tsize:4;\tsigned:1;\n\n"
	"print fmt: \"comm=%s pid=%d child_comm=%s child_pid=%d\", __get_str(parent_comm), REC->parent_pid, __get_str(child_comm), REC->child_pid\n";
static const char free_618[] = "name: sched_process_free\nID: 370\n" HDR
	"\tfield:__data_loc char[] comm;\toffset:8;\tsize:4;\tsigned:0;\n"
	"\tfield:pid_t pid;\toffset:12;\tsize:4;\tsigned:1;\n"
	"\tfield:int prio;\toffset:16;\tsize:4;\tsigned:1;\n\n"
	"print fmt: \"comm=%s pid=%d prio=%d\", __get_str(comm), REC->pid, REC->prio\n";
/* 5.10: the names are inline arrays, so the pids sit elsewhere. */
static const char fork_510[] = "name: sched_process_fork\nID: 300\n" HDR
	"\tfield:char parent_comm[16];\toffset:8;\tsize:16;\tsigned:1;\n"
	"\tfield:pid_t parent_pid;\toffset:24;\tsize:4;\tsigned:1;\n"
	"\tfield:char child_comm[16];\toffset:28;\tsize:16;\tsigned:1;\n"
	"\tfield:pid_t child_pid;\toffset:44;\tsize:4;\tsigned:1;\n\n"
	"print fmt: \"comm=%s pid=%d child_comm=%s child_pid=%d\", REC->parent_comm, REC->parent_pid, REC->child_comm, REC->child_pid\n";
static const char free_510[] = "name: sched_process_free\nID: 302\n" HDR
	"\tfield:char comm[16];\toffset:8;\tsize:16;\tsigned:1;\n"
	"\tfield:pid_t pid;\toffset:24;\tsize:4;\tsigned:1;\n"
	"\tfield:int prio;\toffset:28;\tsize:4;\tsigned:1;\n\n";

/* TEXT in a heap buffer of exactly LEN bytes (no NUL after it). */
static char *exact(const char *text, size_t len)
{
	char *b = malloc(len ? len : 1);

	memcpy(b, text, len);
	return b;
}

static int parse(struct tracefs_sched *t, const char *sw, const char *fork,
		 const char *fr, char *err, size_t errlen)
{
	size_t a = strlen(sw), b = strlen(fork), c = strlen(fr);
	char *x = exact(sw, a), *y = exact(fork, b), *z = exact(fr, c);
	int r = tracefs_sched_parse(t, x, a, y, b, z, c, err, errlen);

	free(x);
	free(y);
	free(z);
	return r;
}

static void test_real_formats(void)
{
	struct tracefs_sched t = { 0 };
	char err[256] = "";
	int r = parse(&t, switch_618, fork_618, free_618, err, sizeof(err));

	CHECK("linux-6.18", !r && t.switch_prev_state.offset == 32 &&
	      t.switch_prev_state.size == 8 && t.switch_next_pid.offset == 56 &&
	      t.fork_parent_pid.offset == 12 && t.fork_child_pid.offset == 20 &&
	      t.free_pid.offset == 12 && t.switch_id == 372 && t.fork_id == 366 &&
	      t.free_id == 370, "r %d (%s): state +%u/%u next +%u fork +%u +%u free +%u ids %u %u %u",
	      r, err, t.switch_prev_state.offset, t.switch_prev_state.size,
	      t.switch_next_pid.offset, t.fork_parent_pid.offset, t.fork_child_pid.offset,
	      t.free_pid.offset, t.switch_id, t.fork_id, t.free_id);
	memset(&t, 0, sizeof(t));
	r = parse(&t, switch_618, fork_510, free_510, err, sizeof(err));
	CHECK("linux-5.10-inline-names", !r && t.fork_parent_pid.offset == 24 &&
	      t.fork_child_pid.offset == 44 && t.free_pid.offset == 24 && t.fork_id == 300,
	      "r %d (%s): fork +%u +%u free +%u", r, err, t.fork_parent_pid.offset,
	      t.fork_child_pid.offset, t.free_pid.offset);
}

/* A field line of the real format replaced by REPL must fail with WHY in err. */
static void expect_bad(const char *name, const char *from, const char *repl, const char *why)
{
	char text[sizeof(switch_618) + 256], err[256] = "";
	const char *at = strstr(switch_618, from);
	struct tracefs_sched t;
	int r;

	snprintf(text, sizeof(text), "%.*s%s%s", (int)(at - switch_618), switch_618, repl,
		 at + strlen(from));
	r = parse(&t, text, fork_618, free_618, err, sizeof(err));
	CHECK(name, r && strstr(err, why), "r %d, err '%s', want '%s'", r, err, why);
}

static void test_bad_formats(void)
{
	const char *state = "\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n";

	expect_bad("missing-field", state, "", "no field prev_state");
	expect_bad("field-twice", state,
		   "\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n"
		   "\tfield:long prev_state;\toffset:64;\tsize:8;\tsigned:1;\n", "given twice");
	expect_bad("offset-in-header", state,
		   "\tfield:long prev_state;\toffset:4;\tsize:8;\tsigned:1;\n", "outside a record");
	expect_bad("offset-beyond-record", state,
		   "\tfield:long prev_state;\toffset:4095;\tsize:8;\tsigned:1;\n", "outside a record");
	expect_bad("huge-offset", state,
		   "\tfield:long prev_state;\toffset:999999999;\tsize:8;\tsigned:1;\n", "outside a record");
	expect_bad("too-many-digits", state,
		   "\tfield:long prev_state;\toffset:0000000000032;\tsize:8;\tsigned:1;\n", "malformed");
	expect_bad("wrong-size", state,
		   "\tfield:long prev_state;\toffset:32;\tsize:2;\tsigned:1;\n", "size 2");
	expect_bad("pid-size", "\tfield:pid_t next_pid;\toffset:56;\tsize:4;",
		   "\tfield:pid_t next_pid;\toffset:56;\tsize:8;", "size 8");
	expect_bad("no-semicolon", state, "\tfield:long prev_state\n", "malformed");
	expect_bad("no-offset", state, "\tfield:long prev_state;\tsize:8;\n", "malformed");
	expect_bad("negative", state, "\tfield:long prev_state;\toffset:-32;\tsize:8;\n", "malformed");
	expect_bad("no-name", state, "\tfield:;\toffset:32;\tsize:8;\n", "malformed");
	expect_bad("no-id", "ID: 372\n", "", "no ID line");
	expect_bad("bad-id", "ID: 372\n", "ID: 37x\n", "malformed ID");
	expect_bad("zero-id", "ID: 372\n", "ID: 0\n", "malformed ID");
}

/* Every prefix of the real format: parsed or refused, never a read past it. */
static void test_prefixes(void)
{
	size_t len = strlen(switch_618), refused = 0;
	struct tracefs_field f;
	char err[256];

	for (size_t n = 0; n <= len; n++) {
		char *b = exact(switch_618, n);

		refused += tracefs_field(b, n, "next_pid", &f, err, sizeof(err)) != 0;
		free(b);
	}
	/* The field's line is whole from its "size:4;" on. */
	CHECK("every-prefix", refused > 0 && refused < len,
	      "%zu of %zu prefixes refused", refused, len + 1);
}

int main(void)
{
	test_real_formats();
	test_bad_formats();
	test_prefixes();
	return failures != 0;
}
