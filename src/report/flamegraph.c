// SPDX-License-Identifier: GPL-2.0
/*
 * Flame graph as one SVG file, no scripts: a frame's width is its share of
 * the off-CPU time, roots at the bottom, tooltips in <title>.  Kernel frames
 * (suffix "_[k]") are drawn blue, user frames in warm colours.
 */
#include <stdlib.h>
#include <string.h>

#include "report/flamegraph.h"
#include "lib/hashset.h"

#define WIDTH		1200.0
#define ROW		17
#define PAD		10
#define FONT_W		6.6

struct node {
	char *name;
	uint64_t value;
	struct node **kids;
	size_t nr_kids;
};

struct flame {
	struct node root;
	int depth;
};

struct flame *flame_new(void)
{
	struct flame *f = calloc(1, sizeof(*f));

	if (f)
		f->root.name = strdup("all");
	return f;
}

static struct node *child(struct node *n, const char *name)
{
	struct node **nv, *c;

	for (size_t i = 0; i < n->nr_kids; i++)
		if (!strcmp(n->kids[i]->name, name))
			return n->kids[i];
	nv = realloc(n->kids, (n->nr_kids + 1) * sizeof(*nv));
	c = calloc(1, sizeof(*c));
	if (!nv || !c || !(c->name = strdup(name))) {
		free(c);
		if (nv)
			n->kids = nv;
		return NULL;
	}
	n->kids = nv;
	n->kids[n->nr_kids++] = c;
	return c;
}

int flame_add(struct flame *f, const char *const *frames, int n, uint64_t value)
{
	struct node *cur = &f->root;

	cur->value += value;
	for (int i = 0; i < n; i++) {
		cur = child(cur, frames[i]);
		if (!cur)
			return -1;
		cur->value += value;
	}
	if (n > f->depth)
		f->depth = n;
	return 0;
}

static void put_escaped(FILE *out, const char *s, size_t max)
{
	for (size_t i = 0; s[i] && i < max; i++) {
		switch (s[i]) {
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '&': fputs("&amp;", out); break;
		case '"': fputs("&quot;", out); break;
		default:
			fputc((unsigned char)s[i] < 0x20 ? '?' : s[i], out);
		}
	}
}

/* The name, cut to FIT characters with ".." as flamegraph.pl does. */
static void put_label(FILE *out, const char *name, double x, int y, size_t fit)
{
	size_t len = strlen(name);

	fprintf(out, "<text x=\"%.1f\" y=\"%d\">", x, y);
	if (len <= fit) {
		put_escaped(out, name, len);
	} else {
		put_escaped(out, name, fit - 2);
		fputs("..", out);
	}
	fputs("</text>", out);
}

static void color(const char *name, char *buf, size_t len)
{
	unsigned h = fnv1a_str(name);
	size_t n = strlen(name);

	if (n > 4 && !strcmp(name + n - 4, "_[k]"))
		snprintf(buf, len, "rgb(%u,%u,%u)", 80 + h % 40, 130 + h % 50, 220 + h % 35);
	else
		snprintf(buf, len, "rgb(%u,%u,%u)", 220 + h % 35, 90 + h % 110, 40 + h % 40);
}

static void draw(const struct flame *f, const struct node *n, FILE *out, double x,
		 int level, double scale)
{
	double w = n->value * scale;
	int y = PAD + 30 + (f->depth - level) * ROW;
	char fill[32];

	if (w < 0.3)
		return;
	color(n->name, fill, sizeof(fill));
	fprintf(out, "<g><title>");
	put_escaped(out, n->name, 512);
	fprintf(out, " (%.2f ms, %.2f%%)</title><rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" "
		"fill=\"%s\" rx=\"2\"/>", n->value / 1e6, 100.0 * n->value / f->root.value,
		x, y, w, ROW - 1, fill);
	if (w > 3 * FONT_W)
		put_label(out, n->name, x + 3, y + ROW - 5, (size_t)((w - 6) / FONT_W));
	fputs("</g>\n", out);
	for (size_t i = 0; i < n->nr_kids; i++) {
		draw(f, n->kids[i], out, x, level + 1, scale);
		x += n->kids[i]->value * scale;
	}
}

int flame_write_svg(const struct flame *f, FILE *out, const char *title)
{
	int height = (f->depth + 1) * ROW + 2 * PAD + 40;
	double scale = f->root.value ? (WIDTH - 2 * PAD) / f->root.value : 0;

	fprintf(out, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		"viewBox=\"0 0 %d %d\">\n<style>text { font: 11px monospace; fill: #000; }"
		" .t { font: 15px sans-serif; }</style>\n"
		"<rect width=\"100%%\" height=\"100%%\" fill=\"#f8f8f0\"/>\n"
		"<text class=\"t\" x=\"%d\" y=\"24\">", (int)WIDTH, height, (int)WIDTH, height, PAD);
	put_escaped(out, title, 200);
	fprintf(out, " (%.3f s off-CPU)</text>\n", f->root.value / 1e9);
	draw(f, &f->root, out, PAD, 0, scale);
	fputs("</svg>\n", out);
	return ferror(out) ? -1 : 0;
}

static void free_node(struct node *n)
{
	for (size_t i = 0; i < n->nr_kids; i++) {
		free_node(n->kids[i]);
		free(n->kids[i]);
	}
	free(n->kids);
	free(n->name);
}

void flame_free(struct flame *f)
{
	if (!f)
		return;
	free_node(&f->root);
	free(f);
}
