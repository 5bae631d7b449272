// SPDX-License-Identifier: GPL-2.0
/* The recording's target, resolved once from the options. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/procfs.h"
#include "record/target.h"

static bool pid_exists(uint32_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%u", pid);
	return !access(path, F_OK);
}

static int add_pids(struct target *t, const struct id_list *pids)
{
	for (size_t i = 0; i < pids->n; i++) {
		if (!pid_exists(pids->v[i])) {
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

/*
 * -C: CPUs that are not online would record nothing without a word (perf
 * refuses them too).  The online list is the kernel's own, e.g. "0-1,4".
 */
int target_check_cpus(const struct offcpu_opts *o)
{
	char text[256] = "";
	struct id_list online = { 0 };
	const char *why;
	FILE *f;
	int err = 0;

	if (!o->cpus.n)
		return 0;
	f = fopen("/sys/devices/system/cpu/online", "re");
	if (!f || !fgets(text, sizeof(text), f)) {
		if (f)
			fclose(f);
		return 0;	/* no sysfs: the BPF filter still works */
	}
	fclose(f);
	text[strcspn(text, "\n")] = '\0';
	if (id_list_parse(&online, text, ID_RANGES, 0, ID_CPU_MAX, &why)) {
		id_list_free(&online);
		return 0;	/* a list this kernel spells otherwise: the filter still works */
	}
	for (size_t i = 0; i < o->cpus.n && !err; i++) {
		if (!id_list_has(&online, o->cpus.v[i])) {
			fprintf(stderr, "offcpu: --cpu: CPU %u does not exist or is offline (online: %s)\n",
				o->cpus.v[i], text);
			err = -1;
		}
	}
	id_list_free(&online);
	return err;
}

bool target_gone(const struct target *t)
{
	for (size_t i = 0; i < t->track.n; i++)
		if (pid_exists(t->track.v[i]))
			return false;
	return true;
}
