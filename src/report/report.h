/* SPDX-License-Identifier: GPL-2.0 */
/* `offcpu report`: top off-CPU stacks of a perf.data, symbolized on the device. */
#ifndef OFFCPU_REPORT_H
#define OFFCPU_REPORT_H

/* ARGV[0] is "report".  Returns the process exit status. */
int report_main(int argc, char **argv);

#endif
