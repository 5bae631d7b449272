// SPDX-License-Identifier: GPL-2.0
/* The recording's target, resolved once from the options. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "lib/procfs.h"
#include "record/target.h"

static int add_pids(struct target *t, const struct id_list *pids)
{
	char path[64];

	for (size_t i = 0; i < pids->n; i++) {
		snprintf(path, sizeof(path), "/proc/%u", pids->v[i]);
		if (access(path, F_OK)) {
			fprintf(stderr, "offcpu: no such process: %u\n", pids->v[i]);
			return -1;
		}
		t->pids.v[t->pids.n++] = pids->v[i];
		t->track.v[t->track.n++] = pids->v[i];
	}
	return 0;
}

static int add_tids(struct target *t, const struct id_list *tids)
{
	for (size_t i = 0; i < tids->n; i++) {
		uint32_t tgid = proc_tgid(tids->v[i]);

		if (!tgid) {
			fprintf(stderr, "offcpu: no such thread: %u\n", tids->v[i]);
			return -1;
		}
		t->track.v[t->track.n++] = tgid;
	}
	return 0;
}

int target_init(struct target *t, const struct offcpu_opts *o)
{
	*t = (struct target){ 0 };
	t->command = o->cmdv != NULL;
	t->pid_filter = o->pids.n || t->command;
	/* One more slot each for the command's pid. */
	t->pids.v = calloc(o->pids.n + 1, sizeof(uint32_t));
	t->track.v = calloc(o->pids.n + o->tids.n + 1, sizeof(uint32_t));
	if (!t->pids.v || !t->track.v) {
		fprintf(stderr, "offcpu: out of memory\n");
		return -1;
	}
	return add_pids(t, &o->pids) || add_tids(t, &o->tids) ? -1 : 0;
}

void target_add_child(struct target *t, uint32_t pid)
{
	t->pids.v[t->pids.n++] = pid;
	t->track.v[t->track.n++] = pid;
}

void target_free(struct target *t)
{
	free(t->pids.v);
	free(t->track.v);
	*t = (struct target){ 0 };
}
