// SPDX-License-Identifier: GPL-2.0
#include <stdbool.h>
#include <string.h>

#include <libiberty/demangle.h>

#include "symbols/demangle.h"

/*
 * Symbol names are untrusted (they come from any mapped file), and
 * libiberty's demangler recurses: names far longer than any real one are
 * left as they are rather than risk its stack.
 */
#define MAX_MANGLED	4096

static bool mangled(const char *name)
{
	/* _Z: Itanium C++ and legacy Rust; _R: Rust v0 (also __Z, __R on some). */
	if (name[0] == '_' && name[1] == '_')
		name++;
	return name[0] == '_' && (name[1] == 'Z' || name[1] == 'R');
}

char *demangle(const char *name)
{
	if (!mangled(name) || strnlen(name, MAX_MANGLED) == MAX_MANGLED)
		return NULL;
	/*
	 * No DMGL_PARAMS, as perf without -v: "app::Worker::wait_for", not
	 * "app::Worker::wait_for(std::vector<int, ...>&, int)".  AUTO tries
	 * Rust first (legacy Rust names are valid C++ names too), then C++.
	 */
	return cplus_demangle(name, DMGL_NO_OPTS | DMGL_AUTO);
}
