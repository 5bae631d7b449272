// SPDX-License-Identifier: GPL-2.0
/* The feature sections of a perf.data file: what perf report --header shows. */
#include <stdint.h>
#include <sys/sysinfo.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "lib/clock.h"
#include "record/features.h"

void features_set(struct pd_writer *w, const struct offcpu_opts *o)
{
	struct utsname u;
	struct sysinfo si;
	struct timespec res;

	uname(&u);
	pd_set_string(w, PD_FEAT_HOSTNAME, u.nodename);
	pd_set_string(w, PD_FEAT_OSRELEASE, u.release);
	pd_set_string(w, PD_FEAT_VERSION, "offcpu " OFFCPU_VERSION);
	pd_set_string(w, PD_FEAT_ARCH, u.machine);
	pd_set_nrcpus(w, sysconf(_SC_NPROCESSORS_CONF), sysconf(_SC_NPROCESSORS_ONLN));
	if (!sysinfo(&si))
		pd_set_total_mem(w, (uint64_t)si.totalram * si.mem_unit / 1024);
	pd_set_cmdline(w, o->argc, o->argv);
	if (!clock_getres(CLOCK_MONOTONIC, &res))
		pd_set_clock_res(w, res.tv_sec * 1000000000ull + res.tv_nsec);
	pd_set_clock_data(w, CLOCK_MONOTONIC, clock_ns(CLOCK_REALTIME), clock_ns(CLOCK_MONOTONIC));
}
