// SPDX-License-Identifier: GPL-2.0
/*
 * The recording session: set-up in order, the poll loop (its rotated and
 * flight recorder files: rotation.c), and the end.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "format/perf_data.h"
#include "lib/clock.h"
#include "record/blocked.h"
#include "record/child.h"
#include "record/collector.h"
#include "record/features.h"
#include "record/loader.h"
#include "record/plan.h"
#include "record/probe.h"
#include "record/rotation.h"
#include "record/session.h"
#include "record/status.h"
#include "record/summary.h"
#include "record/target.h"

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

static void set_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct sigaction usr2 = { .sa_handler = rotation_on_signal };

	/* No SA_RESTART: the poll loop must wake up. */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	/* Caught in every mode: a stray SIGUSR2 must not lose the recording. */
	sigaction(SIGUSR2, &usr2, NULL);
	signal(SIGPIPE, SIG_IGN);
}

/* Refused before anything starts, with the reason pd_open would give. */
static int check_output(const char *path)
{
	int e = pd_check_output(path);

	if (e == EISDIR || e == EINVAL) {
		fprintf(stderr, "offcpu: cannot write %s: %s\n", path,
			e == EISDIR ? "is a directory" : "not a regular file");
		return -1;
	}
	return 0;
}

#define DEFAULT_NICE	(-20)

struct session {
	const struct offcpu_opts *o;
	struct rotation rot;
	struct target target;
	struct probe probe;
	struct plan plan;	/* resolved once, read by the loader, collector, summary */
	struct loader ld;
	struct pd_writer *w;
	struct collector *c;
	struct child ch;
};

/* Between the start scan's reads: its stack copies leave the ring. */
static void scan_poll(void *ctx)
{
	struct session *s = ctx;

	collector_poll(s->c, 0);
}

/*
 * Threads asleep now get their start (src/record/blocked.c): last of the set-up,
 * so their window is the recording's, and after the command left its wait
 * for the go (offcpu's own doing, not the command's).
 */
static int scan_start(struct session *s)
{
	struct blocked_start st;

	if (blocked_scan_start(&s->ld, &st, scan_poll, s))
		return -1;
	if (s->o->verbose && s->ld.scan_start)
		fprintf(stderr, "offcpu: asleep at the start: %llu threads (%llu with a user stack%s)\n",
			(unsigned long long)st.threads, (unsigned long long)st.ustacks,
			s->ld.scan_ustack ? "" : ": not walked on this kernel");
	return 0;
}

/*
 * The recorder's threads run at --nice (threads started later inherit it),
 * -20 by default: under a load of many runnable tasks the scheduler's fair
 * share leaves the ring's reader too little time, the ring fills and user
 * stacks fall back to frame pointers.  A nice the caller chose is kept.
 * Called after the command's fork, which keeps the caller's.
 */
static int set_nice(const struct offcpu_opts *o)
{
	const char *why = "--nice";
	int started, want = o->nice;

	errno = 0;
	started = getpriority(PRIO_PROCESS, 0);
	if (o->nice == NICE_UNSET) {
		bool kept = errno || started != 0;

		want = kept ? started : DEFAULT_NICE;
		why = kept ? "as started" : "the default";
	}
	if (want != started && setpriority(PRIO_PROCESS, 0, want)) {
		if (o->nice != NICE_UNSET) {
			fprintf(stderr, "offcpu: --nice %d: %s\n", want, strerror(errno));
			return -1;
		}
		want = started;
		why = "as started: not allowed to lower it";
	}
	if (o->verbose)
		fprintf(stderr, "nice: %d (%s)\n", want, why);
	return 0;
}

/*
 * The BPF program loaded and attached, or the perf backend: chosen by the
 * probe, or taken when the kernel refuses the program (--backend auto, no
 * BPF option given: the refusal was said above).
 */
static int load_backend(struct session *s)
{
	const struct offcpu_opts *o = s->o;

	if (s->probe.perf_backend)
		return loader_none(&s->ld, o, &s->probe, &s->plan);
	if (!loader_load(&s->ld, o, &s->target, &s->probe, &s->plan) && !loader_attach(&s->ld))
		return 0;
	if (o->backend != BACKEND_AUTO || cli_bpf_option(o))
		return -1;
	loader_close(&s->ld);
	if (probe_fall_back(&s->probe, "the BPF program was refused at load or attach"))
		return -1;
	fprintf(stderr, "offcpu: recording with the perf backend instead (--backend bpf "
		"refuses)\n");
	plan_resolve(&s->plan, o, &s->probe);
	if (o->verbose)
		probe_print(&s->probe, stderr);
	return loader_none(&s->ld, o, &s->probe, &s->plan);
}

static int session_setup(struct session *s)
{
	const struct offcpu_opts *o = s->o;

	if (target_check_cpus(o) || target_init(&s->target, o) || check_output(o->output))
		return -1;
	if (probe_kernel(&s->probe, o->btf_path, o->variant, o->backend,
			 cli_bpf_option(o) != NULL))
		return -1;
	plan_resolve(&s->plan, o, &s->probe);
	if (o->verbose)
		probe_print(&s->probe, stderr);
	/* The flight recorder writes a file only when a trigger asks for one. */
	s->w = o->flight_ns ? NULL : pd_open(o->output);
	if (!s->w && !o->flight_ns) {
		fprintf(stderr, "offcpu: cannot create %s: %s\n", o->output, strerror(errno));
		return -1;
	}
	if (o->verbose && o->flight_ns)
		summary_flight(o);
	if (o->cmdv) {
		if (child_fork(&s->ch, o->cmdv))
			return -1;
		target_add_child(&s->target, s->ch.pid);
	}
	if (set_nice(o))
		return -1;
	if (load_backend(s))
		return -1;
	summary_unwinding(o, &s->plan);
	probe_cleanup(&s->probe);
	if (o->verbose)
		loader_print_maps(&s->ld, stderr);
	s->c = collector_start(s->w, &s->ld, o, s->target.track.v, s->target.track.n);
	if (!s->c)
		return -1;
	if (o->cmdv && child_start(&s->ch, o->cmdv[0]))
		return -1;
	return scan_start(s);
}

static void session_loop(struct session *s)
{
	uint64_t start = clock_ns(CLOCK_MONOTONIC);
	uint64_t end = s->o->duration > 0 ? start + (uint64_t)(s->o->duration * 1e9) : UINT64_MAX;
	uint64_t next_check = 0;
	struct status line;

	collector_sample(s->c);
	if (s->o->verbose)
		fprintf(stderr, "offcpu: recording\n");
	status_init(&line, stderr, start);
	rotation_start(&s->rot, s->o, s->c, start, end);
	while (!stop_signal && clock_ns(CLOCK_MONOTONIC) < end) {
		status_update(&line, s->c, clock_ns(CLOCK_MONOTONIC));
		if (collector_poll(s->c, 100))
			break;
		if ((s->o->switch_mode || s->o->max_size) && !rotation_go_on(&s->rot, &s->w, &line))
			break;
		if (s->o->flight_ns && !rotation_flight_go_on(&s->rot, &line))
			break;
		if (s->o->cmdv && child_done(&s->ch))
			break;
		if (!s->o->cmdv && s->target.track.n && clock_ns(CLOCK_MONOTONIC) > next_check) {
			if (target_gone(&s->target))
				break;
			next_check = clock_ns(CLOCK_MONOTONIC) + 500000000ull;
		}
	}
	status_end(&line);
}

int session_run(const struct offcpu_opts *o, int *sig)
{
	struct session s = { .o = o, .ch = { .go_fd = -1, .err_fd = -1 } };
	struct collector_stats st;
	uint64_t missed = 0;
	int err = -1;

	set_signals();
	if (session_setup(&s))
		goto out;
	session_loop(&s);
	collector_end(s.c);
	missed = loader_missed(&s.ld);
	/* Detach first: nothing may arrive after the final drain. */
	loader_detach(&s.ld);
	err = collector_finish(s.c, &st);
	if (o->flight_ns) {
		/* A file waited for is written with what the end left. */
		struct collector_file f;

		s.rot.ended_unwritten = collector_flight_waiting(s.c) ? 0 : st.flight_left;
		if (!err && collector_flight_waiting(s.c)) {
			if (rotation_flight_dump(&s.rot, &f))
				err = -1;
			st.samples += f.samples;
			st.bytes += f.bytes;
		}
	} else if (o->switch_mode) {
		if (rotation_close(&s.rot, s.w, &st.last, NULL))
			err = -1;
	} else {
		features_set(s.w, o);
		if (pd_close(s.w))
			err = -1;
	}
	s.w = NULL;
	if (s.rot.err)
		err = -1;
	if (!err)
		summary_print(o, &s.plan, &st, missed, &s.rot);
	if (stop_signal && o->verbose)
		fprintf(stderr, "offcpu: stopped by signal %d\n", (int)stop_signal);
out:
	if (s.w)
		pd_abort(s.w);
	child_end(&s.ch);
	collector_free(s.c);
	loader_close(&s.ld);
	probe_cleanup(&s.probe);
	target_free(&s.target);
	rotation_free(&s.rot);
	if (err)
		return 1;
	return o->cmdv ? child_exit_code(&s.ch, sig) : 0;
}
