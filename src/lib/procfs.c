// SPDX-License-Identifier: GPL-2.0
/* Parsers of /proc and /proc/kallsyms lines, and a thread's process. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/procfs.h"

void proc_parse_comm(char *buf)
{
	char *nl = strchr(buf, '\n');

	if (nl)
		*nl = '\0';
}

uint32_t proc_parse_id(const char *name)
{
	return strtoul(name, NULL, 10);
}

int proc_parse_maps_line(const char *line, struct proc_map *m)
{
	unsigned long long start, end, pgoff, ino;
	char perms[8];
	int n = 0;

	m->file[0] = '\0';
	if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, perms,
		   &pgoff, &m->maj, &m->min, &ino, &n) < 7)
		return -1;
	m->start = start;
	m->end = end;
	m->pgoff = pgoff;
	m->ino = ino;
	/* perms may be shorter than "rwxp" on a hostile line. */
	m->prot = (perms[0] == 'r' ? 1 : 0) |
		  (perms[0] && perms[1] == 'w' ? 2 : 0) |
		  (perms[0] && perms[1] && perms[2] == 'x' ? 4 : 0);
	sscanf(line + n, "%4095[^\n]", m->file);
	if (!m->file[0])
		snprintf(m->file, sizeof(m->file), "//anon");
	return 0;
}

int proc_parse_kallsyms_line(const char *line, uint64_t *addr, char *type, char *sym)
{
	unsigned long long a;
	char t;

	if (sscanf(line, "%llx %c " PROC_SYM_FMT, &a, &t, sym) != 3)
		return -1;
	*addr = a;
	if (type)
		*type = t;
	return 0;
}

int proc_parse_status(const char *buf, const char *key, uint32_t *val)
{
	size_t klen = strlen(key);

	for (const char *l = buf; *l; l = strchrnul(l, '\n'), l += *l == '\n') {
		const char *p = l + klen;

		if (strncmp(l, key, klen) || *p != ':')
			continue;
		/* Within this line only: "Tgid:\n5" is not a Tgid of 5. */
		p += strspn(p + 1, " \t") + 1;
		if (*p < '0' || *p > '9')
			continue;
		*val = strtoul(p, NULL, 10);
		return 0;
	}
	return -1;
}

uint32_t proc_tgid(uint32_t tid)
{
	char path[64], buf[4096];
	uint32_t tgid = 0;
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/status", tid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	/* Tgid is near the top; a long Groups: line may be cut off. */
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	proc_parse_status(buf, "Tgid", &tgid);
	return tgid;
}
