// SPDX-License-Identifier: GPL-2.0
/* Rotated files (--switch-output, --max-size) and the flight recorder's files. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/clock.h"
#include "record/features.h"
#include "record/rotation.h"
#include "record/summary.h"

/* SIGUSR2 with --switch-output(=signal) or --flight-recorder: end the file, start the next. */
static volatile sig_atomic_t switch_signal;

void rotation_on_signal(int sig)
{
	(void)sig;
	switch_signal = 1;
}

void rotation_start(struct rotation *r, const struct offcpu_opts *o, struct collector *c,
		    uint64_t start, uint64_t end)
{
	r->o = o;
	r->c = c;
	r->next_time = start + o->switch_secs * 1000000000ull;
	r->end = end;
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
static int keep_file(struct rotation *r, const char *name)
{
	char **n = realloc(r->kept, (r->nr_kept + 1) * sizeof(*n));

	if (!n || !(n[r->nr_kept] = strdup(name))) {
		r->kept = n ? n : r->kept;
		return -1;
	}
	r->kept = n;
	r->nr_kept++;
	while (r->o->switch_max_files && r->nr_kept > r->o->switch_max_files) {
		if (unlink(r->kept[0]) && errno != ENOENT)
			fprintf(stderr, "offcpu: cannot remove %s: %s\n", r->kept[0], strerror(errno));
		else if (r->o->verbose)
			fprintf(stderr, "[ offcpu: removed %s (--switch-max-files %u) ]\n", r->kept[0],
				r->o->switch_max_files);
		free(r->kept[0]);
		memmove(r->kept, r->kept + 1, --r->nr_kept * sizeof(*r->kept));
		r->removed++;
	}
	return 0;
}

int rotation_close(struct rotation *r, struct pd_writer *w, const struct collector_file *f,
		   const char *why)
{
	char name[sizeof(r->last)];

	features_set(w, r->o);
	rotated_name(r->o->output, r->last, name, sizeof(name));
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
	if (r->o->verbose)
		summary_file(name, f, why);
	return keep_file(r, name);
}

/* End the current file *W and go on in a new one; -1 stops the recording. */
static int rotate(struct rotation *r, struct pd_writer **w)
{
	struct collector_file f;
	struct pd_writer *next = pd_open(r->o->output), *done;

	if (!next) {
		fprintf(stderr, "offcpu: cannot create %s: %s (the recording goes on in the current file until it stops)\n",
			r->o->output, strerror(errno));
		return -1;
	}
	done = collector_switch(r->c, next, &f);
	*w = next;
	return rotation_close(r, done, &f, NULL);
}

/* Whether the current file should end now (--switch-output's mode). */
static bool switch_due(struct rotation *r, uint64_t now, uint64_t bytes)
{
	switch (r->o->switch_mode) {
	case SWITCH_SIGNAL:
		if (!switch_signal)
			return false;
		switch_signal = 0;
		return true;
	case SWITCH_SIZE:
		return bytes >= r->o->switch_bytes;
	case SWITCH_TIME:
		/* Not at -d's end: that file would hold nothing. */
		if (now < r->next_time || now >= r->end)
			return false;
		r->next_time += r->o->switch_secs * 1000000000ull;
		return true;
	default:
		return false;
	}
}

bool rotation_go_on(struct rotation *r, struct pd_writer **w, struct status *line)
{
	struct collector_progress p;
	uint64_t now = clock_ns(CLOCK_MONOTONIC), size;

	collector_progress(r->c, &p);
	/* The records held back for time order are the file's too. */
	size = p.bytes + p.queued;
	if (r->o->max_size && size >= r->o->max_size) {
		r->max_size_hit = true;
		return false;
	}
	if (!switch_due(r, now, size))
		return true;
	status_end(line);
	if (rotate(r, w)) {
		r->err = -1;
		return false;
	}
	return true;
}

int rotation_flight_dump(struct rotation *r, struct collector_file *f)
{
	struct collector_trigger t;
	struct pd_writer *w = pd_open(r->o->output);
	char why[128];

	if (!w) {
		fprintf(stderr, "offcpu: cannot create %s: %s\n", r->o->output, strerror(errno));
		return -1;
	}
	if (collector_flight_dump(r->c, w, f, &t)) {
		pd_abort(w);
		return -1;
	}
	if (t.time) {
		snprintf(why, sizeof(why), "trigger: %s (tid %u) blocked %.3f s, up to %.6f",
			 t.comm[0] ? t.comm : "?", t.tid, t.block_ns / 1e9, t.time / 1e9);
		r->triggered++;
	} else {
		snprintf(why, sizeof(why), "SIGUSR2");
		r->signalled++;
	}
	return rotation_close(r, w, f, why);
}

bool rotation_flight_go_on(struct rotation *r, struct status *line)
{
	bool signalled = switch_signal;
	struct collector_file f;

	if (!signalled && !collector_flight_due(r->c, clock_ns(CLOCK_MONOTONIC)))
		return true;
	status_end(line);
	if (rotation_flight_dump(r, &f)) {
		r->err = -1;
		return false;
	}
	if (signalled)
		switch_signal = 0;
	return true;
}

void rotation_free(struct rotation *r)
{
	for (size_t i = 0; i < r->nr_kept; i++)
		free(r->kept[i]);
	free(r->kept);
	r->kept = NULL;
	r->nr_kept = 0;
}
