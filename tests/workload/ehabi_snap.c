// SPDX-License-Identifier: GPL-2.0
/*
 * Real register and stack snapshots of blocked threads, for the EHABI
 * unwinder's tests (tests/t_ehabi.sh): built for armhf with Debian's cross
 * compiler and run under qemu-arm.  Three threads block in libc, as a
 * profiled program's do -- the main thread in poll, one in nanosleep,
 * one in read -- each under two functions of its own; a fourth
 * sends each a signal, whose handler writes what the kernel would show
 * at switch-out: the interrupted pc, sp, r7, r11 and lr (ucontext) and the
 * stack from sp to the end of its mapping (the copy offcpu takes).
 *
 *   ehabi_snap DIR   writes DIR/main.snap, DIR/sleeper.snap,
 *                    DIR/reader.snap and DIR/maps (its /proc/self/maps)
 *
 * A snapshot: struct snap_hdr (little-endian words), then LEN stack bytes.
 */
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#define SNAP_MAGIC	0x50414e53u	/* "SNAP" */
#define COPY_MAX	65528u		/* offcpu's largest copy */

struct snap_hdr {
	uint32_t magic, pc, sp, r7, r11, lr, cpsr, len;
};

static const char *dir;
static const char *volatile target;	/* the thread the next signal is for */
static int done[2], never[2];
static volatile int sink;		/* keeps calls from being tail calls */

/* The end of the mapping holding ADDR: the top of that thread's stack. */
static uintptr_t mapping_end(uintptr_t addr)
{
	unsigned long lo, hi;
	char line[512];
	uintptr_t end = 0;
	FILE *f = fopen("/proc/self/maps", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && addr >= lo && addr < hi)
			end = hi;
	if (f)
		fclose(f);
	return end;
}

static void on_signal(int sig, siginfo_t *si, void *ucv)
{
	const mcontext_t *m = &((const ucontext_t *)ucv)->uc_mcontext;
	struct snap_hdr h = { SNAP_MAGIC, m->arm_pc, m->arm_sp, m->arm_r7, m->arm_fp, m->arm_lr,
			      m->arm_cpsr, 0 };
	uintptr_t end = mapping_end(m->arm_sp);
	char path[4096];
	int fd;

	(void)sig;
	(void)si;
	/* stdio in a handler: each thread it interrupts is blocked in a syscall, holding no lock. */
	h.len = end > h.sp ? (uint32_t)(end - h.sp) : 0;
	if (h.len > COPY_MAX)
		h.len = COPY_MAX;
	snprintf(path, sizeof(path), "%s/%s.snap", dir, target);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, &h, sizeof(h)) != sizeof(h) ||
	    write(fd, (const void *)(uintptr_t)h.sp, h.len) != (ssize_t)h.len)
		_exit(3);
	close(fd);
	if (write(done[1], "x", 1) != 1)
		_exit(3);
}

__attribute__((noinline)) static void sleeper_wait(void)
{
	struct timespec ts = { 30, 0 };

	nanosleep(&ts, NULL);
	sink++;
}

__attribute__((noinline)) static void sleeper_loop(void)
{
	sleeper_wait();
	sink++;
}

static void *sleeper(void *arg)
{
	sleeper_loop();
	return arg;
}

__attribute__((noinline)) static void reader_wait(void)
{
	char c;

	sink += (int)read(never[0], &c, 1);
}

__attribute__((noinline)) static void reader_loop(void)
{
	reader_wait();
	sink++;
}

static void *reader(void *arg)
{
	reader_loop();
	return arg;
}

/* Signals each blocked thread in turn, waits for its snapshot, then ends all. */
static void *controller(void *arg)
{
	pthread_t *threads = arg;
	static const char *const names[] = { "main", "sleeper", "reader" };
	struct timespec settle = { 0, 300 * 1000 * 1000 };
	char c;

	nanosleep(&settle, NULL);
	for (int i = 0; i < 3; i++) {
		target = names[i];
		if (pthread_kill(threads[i], SIGUSR1) || read(done[0], &c, 1) != 1)
			_exit(4);
	}
	_exit(0);
}

__attribute__((noinline)) static void main_poll(void)
{
	struct pollfd p = { .fd = never[0], .events = POLLIN };

	sink += poll(&p, 1, -1);
}

__attribute__((noinline)) static void main_wait(void)
{
	main_poll();
	sink++;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_sigaction = on_signal, .sa_flags = SA_SIGINFO };
	pthread_t threads[3], ctl;
	char cmd[4200];

	if (argc != 2) {
		fprintf(stderr, "usage: ehabi_snap DIR\n");
		return 2;
	}
	dir = argv[1];
	if (pipe(done) || pipe(never) || sigaction(SIGUSR1, &sa, NULL))
		return 1;
	threads[0] = pthread_self();
	if (pthread_create(&threads[1], NULL, sleeper, NULL) ||
	    pthread_create(&threads[2], NULL, reader, NULL) ||
	    pthread_create(&ctl, NULL, controller, threads))
		return 1;
	{
		/* The maps of this process, its libraries and thread stacks. */
		FILE *in = fopen("/proc/self/maps", "r"), *out;
		char line[512];

		snprintf(cmd, sizeof(cmd), "%s/maps", dir);
		out = fopen(cmd, "w");
		while (in && out && fgets(line, sizeof(line), in))
			fputs(line, out);
		if (in)
			fclose(in);
		if (!out || fclose(out))
			return 1;
	}
	/* poll ends with the signal: block again until the controller ends all. */
	for (;;)
		main_wait();
}
