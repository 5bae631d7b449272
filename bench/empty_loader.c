// SPDX-License-Identifier: GPL-2.0
/* Loads and attaches bench/empty.bpf.o until killed. */
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include <bpf/libbpf.h>

static void on_signal(int sig)
{
	(void)sig;
}

int main(int argc, char **argv)
{
	struct bpf_object *obj;

	signal(SIGINT, on_signal);	/* pause() returns; exit cleanly */

	if (argc != 2)
		return 2;
	obj = bpf_object__open_file(argv[1], NULL);
	if (!obj || bpf_object__load(obj) ||
	    !bpf_program__attach(bpf_object__find_program_by_name(obj, "empty"))) {
		fprintf(stderr, "empty_loader: cannot load %s\n", argv[1]);
		return 1;
	}
	fprintf(stderr, "recording\n");
	pause();
	return 0;
}
