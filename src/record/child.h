/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The command offcpu runs: forked before the profiler attaches, held on a
 * pipe until it is, then exec'd; its exit status becomes offcpu's, as perf's
 * does.
 */
#ifndef OFFCPU_CHILD_H
#define OFFCPU_CHILD_H

#include <stdbool.h>
#include <sys/types.h>

/* A command forked now and held until the profiler is attached. */
struct child {
	pid_t pid;
	int go_fd, err_fd;
	int status;
	bool exited;
	bool killed;	/* ended by offcpu (-d, a signal to offcpu alone) */
};

/* Forks ARGV, held until child_start; -1 after one line. */
int child_fork(struct child *ch, char **argv);

/* Let the command exec; -1 after one line naming NAME when exec fails. */
int child_start(struct child *ch, const char *name);

/* Whether the command has exited (reaped without blocking). */
bool child_done(struct child *ch);

/* Ends a command still running (SIGTERM) and reaps it. */
void child_end(struct child *ch);

/*
 * offcpu's exit code for the command's end: its exit code, or 128 + the
 * signal that killed it (in *SIG); 0 when offcpu ended it itself.
 */
int child_exit_code(const struct child *ch, int *sig);

/* Die of SIG (the command's), without a core dump of our own; 0: nothing. */
void child_raise(int sig);

#endif
