/* SPDX-License-Identifier: GPL-2.0 */
/*
 * `offcpu archive`: the ELF files a recording mapped, by build-id, in a
 * gzipped tarball laid out as perf's build-id cache (perf-archive's
 * layout), so `tar xf FILE -C ~/.debug` lets perf report and offcpu report
 * resolve them on another machine.
 */
#ifndef OFFCPU_ARCHIVE_H
#define OFFCPU_ARCHIVE_H

/* ARGV[0] is "archive".  Returns the process exit status. */
int archive_main(int argc, char **argv);

#endif
