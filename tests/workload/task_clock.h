/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A thread's CPU time for the workloads' own measure of their blocks (wall
 * time less CPU time): perf's per-thread task clock where the kernel lets
 * us open it, else CLOCK_THREAD_CPUTIME_ID.
 *
 * Not CLOCK_THREAD_CPUTIME_ID first: the scheduler's CPU time of a thread
 * woken onto a CPU whose current task it preempts (the idle task, mostly)
 * starts at the wakeup, not at the switch-in: the wakeup asks the next
 * __schedule() to skip its runqueue clock update (rq_clock_skip_update), so
 * the thread's exec_start is the clock the wakeup read.  Its wait for that
 * CPU (the idle exit, an IPI to a halted CPU) is then its CPU time, and a
 * block measured as wall minus that time comes out short by it: 0.1-0.5 ms
 * a wakeup under QEMU's TCG on 5.10 (issue 24), where the host wakes the
 * other vCPU's thread.  The task clock runs from perf's own switch-in hook,
 * at the real switch.
 */
#ifndef TASK_CLOCK_H
#define TASK_CLOCK_H

#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/*
 * A task clock of the calling thread: its fd, -1 where refused.  Not
 * inlined: libc's syscall() keeps no frame, so a frame-pointer walk loses
 * its caller, which must be this and not the blocker_* function timing the
 * open (the first one blocks: blocker_main_clock).
 */
static __attribute__((noinline)) int task_clock_open(void)
{
	struct perf_event_attr a = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(a),
		.config = PERF_COUNT_SW_TASK_CLOCK,
		/* Counting ignores these; they let perf_event_paranoid 2 open it. */
		.exclude_kernel = 1,
		.exclude_hv = 1,
	};

	return syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

/*
 * The calling thread's CPU time so far in ns: by its task clock FD, or by
 * CLOCK_THREAD_CPUTIME_ID where FD < 0.  A task clock that cannot be read
 * ends the program, after perror(WHAT): the measure would be wrong.
 */
static inline uint64_t task_clock_ns(int fd, const char *what)
{
	struct timespec ts;
	uint64_t v;

	if (fd < 0) {
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
		return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
	}
	if (read(fd, &v, sizeof(v)) != sizeof(v)) {
		perror(what);
		exit(2);
	}
	return v;
}

#endif
