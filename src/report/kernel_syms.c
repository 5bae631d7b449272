// SPDX-License-Identifier: GPL-2.0
/*
 * Kernel symbols: which kallsyms belongs to the recorded kernel (the
 * running one's, --kallsyms, the build-id cache's), and the build-ids the
 * symbolizer checks files against.
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>

#include "lib/build_id.h"
#include "lib/buildid_cache.h"
#include "report/report_int.h"

bool rpt_is_kernel_id(const struct pd_build_id *b)
{
	return (b->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL;
}

/* The running kernel's build-id against the recorded one: 1 same, 0 differs, -1 unknown. */
static int same_kernel_id(const struct pd_file *f)
{
	uint8_t id[BUILD_ID_MAX];
	int len = build_id_of_kernel(id);

	for (size_t i = 0; i < f->nr_build_ids; i++) {
		const struct pd_build_id *b = &f->build_ids[i];

		if (!rpt_is_kernel_id(b))
			continue;
		if (len <= 0)
			return -1;
		return len == b->id_len && !memcmp(id, b->id, len);
	}
	return -1;
}

/* Kernel symbols only when they belong to the recorded kernel. */
static bool same_kernel(const struct report *r)
{
	struct utsname u;
	int same = same_kernel_id(&r->file);

	if (same < 0)
		same = !uname(&u) && r->file.osrelease && !strcmp(u.release, r->file.osrelease);
	return same;
}

/*
 * The recorded kernel's symbols in the build-id cache, where `offcpu
 * archive` puts them ([kernel.kallsyms]/HEX/kallsyms, perf's place).
 */
static bool cached_kallsyms(const struct pd_file *f, char *path, size_t len)
{
	char dir[4096];
	struct stat st;

	for (size_t i = 0; i < f->nr_build_ids; i++) {
		const struct pd_build_id *b = &f->build_ids[i];

		if (rpt_is_kernel_id(b))
			return !bidcache_dir(dir, sizeof(dir)) &&
			       !bidcache_kallsyms_path(dir, b->id, b->id_len, path, len) &&
			       !stat(path, &st) && S_ISREG(st.st_mode);
	}
	return false;
}

static const char *kallsyms_for(struct report *r, bool same)
{
	if (r->o.kallsyms)
		return r->o.kallsyms;
	if (same)
		return "/proc/kallsyms";
	if (cached_kallsyms(&r->file, r->cached_kallsyms, sizeof(r->cached_kallsyms)))
		return r->cached_kallsyms;
	fprintf(stderr, "offcpu: report: warning: recorded on another kernel (%s): kernel frames are [unknown] without --kallsyms\n",
		r->file.osrelease ? r->file.osrelease : "?");
	return NULL;
}

/* The current file's build-ids: a file with another is never used for names. */
int rpt_expect_build_ids(struct report *r)
{
	for (size_t i = 0; i < r->file.nr_build_ids; i++) {
		const struct pd_build_id *b = &r->file.build_ids[i];

		if (!rpt_is_kernel_id(b) && b->filename &&
		    sym_expect_build_id(r->sym, b->filename, b->id, b->id_len))
			return -1;
	}
	return 0;
}

int rpt_setup_symbols(struct report *r)
{
	bool same = same_kernel(r);
	const char *ksyms = kallsyms_for(r, same);

	r->sym = sym_new(r->o.symfs, ksyms);
	if (!r->sym)
		return -1;
	sym_options(r->sym, r->o.raw_names, r->o.verbose ? stderr : NULL);
	if (same)
		sym_same_kernel(r->sym);
	if (ksyms && !sym_nr_kernel(r->sym))
		fprintf(stderr, "offcpu: report: warning: no kernel symbols in %s%s\n", ksyms,
			r->o.kallsyms ? "" : " (kptr_restrict? run as root)");
	return rpt_expect_build_ids(r);
}
