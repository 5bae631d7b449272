// SPDX-License-Identifier: GPL-2.0
/* Loads and attaches a bench program (OBJ [PROG], default "empty") until killed. */
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
	const char *prog = argc > 2 ? argv[2] : "empty";
	struct bpf_object *obj;

	signal(SIGINT, on_signal);	/* pause() returns; exit cleanly */

	if (argc != 2 && argc != 3)
		return 2;
	obj = bpf_object__open_file(argv[1], NULL);
	if (!obj || bpf_object__load(obj) ||
	    !bpf_program__attach(bpf_object__find_program_by_name(obj, prog))) {
		fprintf(stderr, "empty_loader: cannot load %s\n", argv[1]);
		return 1;
	}
	fprintf(stderr, "recording\n");
	pause();
	return 0;
}
