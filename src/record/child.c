// SPDX-License-Identifier: GPL-2.0
/* The command offcpu runs, from fork to its exit status. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "record/child.h"

/*
 * Whether PID sleeps (state S): the child's only interruptible sleep before
 * its exec is its read of the go pipe.
 */
static bool asleep(pid_t pid)
{
	char path[32], buf[256], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return true;	/* no /proc: nothing to wait for */
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return true;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	return !p || (p[1] == ' ' && p[2] == 'S');
}

/*
 * Waits (up to 2 s) for the child to sleep on the go pipe before any event
 * is enabled: a child slow to get there (a busy or emulated CPU) blocked
 * after the perf backend's events were on, and that wait, offcpu's own,
 * was recorded as the command's block (259 ms in a QEMU armhf guest).
 */
static void wait_asleep(pid_t pid)
{
	const struct timespec ms = { 0, 1000000 };

	for (int i = 0; i < 2000 && !asleep(pid); i++)
		nanosleep(&ms, NULL);
}

int child_fork(struct child *ch, char **argv)
{
	int go[2], err[2];

	if (pipe2(go, O_CLOEXEC) || pipe2(err, O_CLOEXEC)) {
		fprintf(stderr, "offcpu: pipe: %s\n", strerror(errno));
		return -1;
	}
	ch->pid = fork();
	if (ch->pid < 0) {
		fprintf(stderr, "offcpu: fork: %s\n", strerror(errno));
		return -1;
	}
	if (!ch->pid) {
		char c;
		int e;

		close(go[1]);
		close(err[0]);
		signal(SIGPIPE, SIG_DFL);
		if (read(go[0], &c, 1) != 1)
			_exit(127);	/* the profiler gave up */
		execvp(argv[0], argv);
		e = errno;
		if (write(err[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(err[1]);
	wait_asleep(ch->pid);
	ch->go_fd = go[1];
	ch->err_fd = err[0];
	return 0;
}

int child_start(struct child *ch, const char *name)
{
	int e = 0;
	ssize_t n;

	if (write(ch->go_fd, "g", 1) != 1)
		return -1;
	close(ch->go_fd);
	ch->go_fd = -1;
	n = read(ch->err_fd, &e, sizeof(e));
	close(ch->err_fd);
	ch->err_fd = -1;
	if (n == sizeof(e)) {
		fprintf(stderr, "offcpu: cannot execute '%s': %s\n", name, strerror(e));
		waitpid(ch->pid, NULL, 0);
		ch->exited = true;
		return -1;
	}
	return 0;
}

void child_end(struct child *ch)
{
	if (ch->pid <= 0)
		return;
	if (ch->go_fd >= 0)
		close(ch->go_fd);	/* never started: it exits by itself */
	if (!ch->exited) {
		kill(ch->pid, SIGTERM);
		ch->killed = true;
		if (waitpid(ch->pid, &ch->status, 0) == ch->pid)
			ch->exited = true;
	}
}

bool child_done(struct child *ch)
{
	if (ch->pid > 0 && !ch->exited && waitpid(ch->pid, &ch->status, WNOHANG) == ch->pid)
		ch->exited = true;
	return ch->exited;
}

/*
 * A complete recording exits as the profiled command did, like perf: its
 * exit code, or 128 + the signal that killed it (and main raises that signal
 * again), so a crash under offcpu is not hidden.  A command that offcpu ended
 * itself (-d, a signal sent to offcpu alone) leaves 0.
 */
int child_exit_code(const struct child *ch, int *sig)
{
	if (!ch->exited || ch->killed)
		return 0;
	if (WIFEXITED(ch->status))
		return WEXITSTATUS(ch->status);
	if (WIFSIGNALED(ch->status)) {
		*sig = WTERMSIG(ch->status);
		return 128 + *sig;
	}
	return 0;
}

void child_raise(int sig)
{
	struct rlimit no_core = { 0, 0 };
	sigset_t set;

	if (!sig)
		return;
	setrlimit(RLIMIT_CORE, &no_core);
	signal(sig, SIG_DFL);
	sigemptyset(&set);
	sigaddset(&set, sig);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	raise(sig);
}
