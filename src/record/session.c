// SPDX-License-Identifier: GPL-2.0
/*
 * The recording session: set-up in order, the poll loop with its file
 * rotation and flight recorder dumps, and the end.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "format/perf_data.h"
#include "lib/clock.h"
#include "record/blocked.h"
#include "record/child.h"
#include "record/collector.h"
#include "record/features.h"
#include "record/loader.h"
#include "record/probe.h"
#include "record/session.h"
#include "record/status.h"
#include "record/summary.h"
#include "record/target.h"

static volatile sig_atomic_t stop_signal;
/* SIGUSR2 with --switch-output(=signal): end the file, start the next. */
static volatile sig_atomic_t switch_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

static void on_switch_signal(int sig)
{
	(void)sig;
	switch_signal = 1;
}

static void set_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct sigaction usr2 = { .sa_handler = on_switch_signal };

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

struct session {
	const struct offcpu_opts *o;
	struct rotation rot;
	struct target target;
	struct probe probe;
	struct loader ld;
	struct pd_writer *w;
	struct collector *c;
	struct child ch;
	int err;		/* a rotated file could not be written */
	uint64_t end;		/* -d: when the recording ends (CLOCK_MONOTONIC ns) */
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

static int session_setup(struct session *s)
{
	const struct offcpu_opts *o = s->o;

	if (target_check_cpus(o) || target_init(&s->target, o) || check_output(o->output))
		return -1;
	if (probe_kernel(&s->probe, o->btf_path, o->variant))
		return -1;
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
	if (loader_load(&s->ld, o, &s->target, &s->probe) || loader_attach(&s->ld))
		return -1;
	summary_unwinding(o, &s->probe);
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

/* perf's rotated name: FILE.YYYYmmddHHMMSSCC, local time and centiseconds (perf's fetch_current_timestamp). */
static void rotated_name(const char *base, const char *last, char *buf, size_t len)
{
	struct timespec ts;
	struct tm tm;
	char dt[32];

	for (int tries = 0; tries < 3; tries++) {
		clock_gettime(CLOCK_REALTIME, &ts);
		localtime_r(&ts.tv_sec, &tm);
		strftime(dt, sizeof(dt), "%Y%m%d%H%M%S", &tm);
		snprintf(buf, len, "%s.%s%02u", base, dt, (unsigned)(ts.tv_nsec / 10000000));
		/* Two files in one centisecond (tiny sizes): wait for the next. */
		if (strcmp(buf, last))
			return;
		usleep(10000);
	}
}

/* --switch-max-files: the newest N stay; the oldest of this run are removed. */
static int keep_file(struct session *s, const char *name)
{
	struct rotation *r = &s->rot;
	char **n = realloc(r->kept, (r->nr_kept + 1) * sizeof(*n));

	if (!n || !(n[r->nr_kept] = strdup(name))) {
		r->kept = n ? n : r->kept;
		return -1;
	}
	r->kept = n;
	r->nr_kept++;
	while (s->o->switch_max_files && r->nr_kept > s->o->switch_max_files) {
		if (unlink(r->kept[0]) && errno != ENOENT)
			fprintf(stderr, "offcpu: cannot remove %s: %s\n", r->kept[0], strerror(errno));
		else if (s->o->verbose)
			fprintf(stderr, "[ offcpu: removed %s (--switch-max-files %u) ]\n", r->kept[0],
				s->o->switch_max_files);
		free(r->kept[0]);
		memmove(r->kept, r->kept + 1, --r->nr_kept * sizeof(*r->kept));
		r->removed++;
	}
	return 0;
}

/* Features, its name, close: a finished file of a rotated recording (W is freed). */
static int close_rotated(struct session *s, struct pd_writer *w, const struct collector_file *f,
			 const char *why)
{
	struct rotation *r = &s->rot;
	char name[sizeof(r->last)];

	features_set(w, s->o);
	rotated_name(s->o->output, r->last, name, sizeof(name));
	if (pd_set_path(w, name)) {
		pd_abort(w);
		fprintf(stderr, "offcpu: out of memory\n");
		return -1;
	}
	if (pd_close(w))
		return -1;
	if (!r->files++)
		snprintf(r->first, sizeof(r->first), "%s", name);
	snprintf(r->last, sizeof(r->last), "%s", name);
	if (s->o->verbose)
		summary_file(name, f, why);
	return keep_file(s, name);
}

/* End the current file and go on in a new one; -1 stops the recording. */
static int rotate(struct session *s)
{
	struct collector_file f;
	struct pd_writer *next = pd_open(s->o->output), *done;

	if (!next) {
		fprintf(stderr, "offcpu: cannot create %s: %s (the recording goes on in the current file until it stops)\n",
			s->o->output, strerror(errno));
		return -1;
	}
	done = collector_switch(s->c, next, &f);
	s->w = next;
	return close_rotated(s, done, &f, NULL);
}

/* Whether the current file should end now (--switch-output's mode). */
static bool switch_due(struct session *s, uint64_t now, uint64_t bytes)
{
	switch (s->o->switch_mode) {
	case SWITCH_SIGNAL:
		if (!switch_signal)
			return false;
		switch_signal = 0;
		return true;
	case SWITCH_SIZE:
		return bytes >= s->o->switch_bytes;
	case SWITCH_TIME:
		/* Not at -d's end: that file would hold nothing. */
		if (now < s->rot.next_time || now >= s->end)
			return false;
		s->rot.next_time += s->o->switch_secs * 1000000000ull;
		return true;
	default:
		return false;
	}
}

/* --switch-output and --max-size, between two polls: false ends the recording. */
static bool files_go_on(struct session *s, struct status *line)
{
	struct collector_progress p;
	uint64_t now = clock_ns(CLOCK_MONOTONIC), size;

	collector_progress(s->c, &p);
	/* The records held back for time order are the file's too. */
	size = p.bytes + p.queued;
	if (s->o->max_size && size >= s->o->max_size) {
		s->rot.max_size_hit = true;
		return false;
	}
	if (!switch_due(s, now, size))
		return true;
	status_end(line);
	if (rotate(s)) {
		s->err = -1;
		return false;
	}
	return true;
}

/* A flight recorder's file, now; -1 stops the recording. */
static int flight_dump(struct session *s, struct collector_file *f)
{
	struct collector_trigger t;
	struct pd_writer *w = pd_open(s->o->output);
	char why[128];

	if (!w) {
		fprintf(stderr, "offcpu: cannot create %s: %s\n", s->o->output, strerror(errno));
		return -1;
	}
	if (collector_flight_dump(s->c, w, f, &t)) {
		pd_abort(w);
		return -1;
	}
	if (t.time) {
		snprintf(why, sizeof(why), "trigger: %s (tid %u) blocked %.3f s, up to %.6f",
			 t.comm[0] ? t.comm : "?", t.tid, t.block_ns / 1e9, t.time / 1e9);
		s->rot.triggered++;
	} else {
		snprintf(why, sizeof(why), "SIGUSR2");
		s->rot.signalled++;
	}
	return close_rotated(s, w, f, why);
}

/* --flight-recorder, between two polls: a file at SIGUSR2 or when one is due. */
static bool flight_go_on(struct session *s, struct status *line)
{
	bool signalled = switch_signal;
	struct collector_file f;

	if (!signalled && !collector_flight_due(s->c, clock_ns(CLOCK_MONOTONIC)))
		return true;
	status_end(line);
	if (flight_dump(s, &f)) {
		s->err = -1;
		return false;
	}
	if (signalled)
		switch_signal = 0;
	return true;
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
	s->rot.next_time = start + s->o->switch_secs * 1000000000ull;
	s->end = end;
	while (!stop_signal && clock_ns(CLOCK_MONOTONIC) < end) {
		status_update(&line, s->c, clock_ns(CLOCK_MONOTONIC));
		if (collector_poll(s->c, 100))
			break;
		if ((s->o->switch_mode || s->o->max_size) && !files_go_on(s, &line))
			break;
		if (s->o->flight_ns && !flight_go_on(s, &line))
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
			if (flight_dump(&s, &f))
				err = -1;
			st.samples += f.samples;
			st.bytes += f.bytes;
		}
	} else if (o->switch_mode) {
		if (close_rotated(&s, s.w, &st.last, NULL))
			err = -1;
	} else {
		features_set(s.w, o);
		if (pd_close(s.w))
			err = -1;
	}
	s.w = NULL;
	if (s.err)
		err = -1;
	if (!err)
		summary_print(o, &s.probe, &st, missed, &s.rot);
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
	for (size_t i = 0; i < s.rot.nr_kept; i++)
		free(s.rot.kept[i]);
	free(s.rot.kept);
	if (err)
		return 1;
	return o->cmdv ? child_exit_code(&s.ch, sig) : 0;
}
