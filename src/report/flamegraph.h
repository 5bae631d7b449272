/* SPDX-License-Identifier: GPL-2.0 */
/* A self-contained SVG off-CPU flame graph from folded stacks. */
#ifndef OFFCPU_FLAMEGRAPH_H
#define OFFCPU_FLAMEGRAPH_H

#include <stdint.h>
#include <stdio.h>

struct flame;

struct flame *flame_new(void);
/* FRAMES root first; VALUE in ns. */
int flame_add(struct flame *f, const char *const *frames, int n, uint64_t value);
int flame_write_svg(const struct flame *f, FILE *out, const char *title);
void flame_free(struct flame *f);

#endif
