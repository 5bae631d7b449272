// SPDX-License-Identifier: GPL-2.0
/* `offcpu report`: placeholder until the reader lands (issue 6). */
#include <stdio.h>

#include "report.h"

int report_main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "offcpu: report is not available in this build\n");
	return 1;
}
