/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Readable names for mangled symbols: C++ (Itanium ABI) and Rust (legacy
 * and v0), with libiberty's demangler, the one perf uses.  Names come out
 * as perf prints them by default: no parameter lists, no Rust hashes.
 */
#ifndef OFFCPU_DEMANGLE_H
#define OFFCPU_DEMANGLE_H

/* A malloc'd readable name, or NULL when NAME is not mangled (or bad). */
char *demangle(const char *name);

#endif
