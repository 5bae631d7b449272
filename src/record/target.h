/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What a recording watches, after perf's util/target.c: the whole system, or
 * the processes named by -p and -t, or the command offcpu runs.  Built once
 * from the (const) options; the command's pid joins when it is forked.
 */
#ifndef OFFCPU_TARGET_H
#define OFFCPU_TARGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "record/cli.h"

struct target {
	bool pid_filter;	/* the BPF program keeps only pids: -p or a command */
	struct id_list pids;	/* its pids: -p's, or the command's */
	struct id_list track;	/* tgids whose task events are kept (-p, -t, command) */
	bool command;		/* a command is run */
};

/* Resolves -p and -t; returns -1 after one line naming a missing process. */
int target_init(struct target *t, const struct offcpu_opts *o);

/* The command's process, once forked. */
void target_add_child(struct target *t, uint32_t pid);

void target_free(struct target *t);

/* -C: -1 after one line when a CPU asked for is not online. */
int target_check_cpus(const struct offcpu_opts *o);

/* Whether every tracked process (-p, -t) has exited. */
bool target_gone(const struct target *t);

#endif
