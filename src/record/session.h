/* SPDX-License-Identifier: GPL-2.0 */
/*
 * `offcpu record`: one recording from set-up to summary, its files written
 * (one, rotated ones, or the flight recorder's) and the command run.
 */
#ifndef OFFCPU_SESSION_H
#define OFFCPU_SESSION_H

#include "record/cli.h"

/*
 * Records until -d, a signal, the command's or the targets' end.  Returns
 * offcpu's exit code: 1 on failure, else the command's (perf's way); *SIG
 * gets the signal that killed the command, for main to raise at the very end.
 */
int session_run(const struct offcpu_opts *o, int *sig);

#endif
