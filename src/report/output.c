// SPDX-License-Identifier: GPL-2.0
/*
 * Output: the table sorted, the text report (with --wakers' shares and the
 * threads still blocked) and folded stacks.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report_int.h"

/* ';' and blanks would break a folded line. */
static char folded_char(unsigned char ch)
{
	return ch == ';' || ch == ' ' ? ':' : ch < 0x20 || ch == 0x7f ? '?' : ch;
}

/* Append ';' NAME SUFFIX. */
static size_t append(char *buf, size_t pos, size_t len, const char *name, const char *suffix)
{
	if (pos + 2 >= len)
		return pos;
	buf[pos++] = ';';
	for (; *name && pos + 8 < len; name++)
		buf[pos++] = folded_char(*name);
	for (; *suffix && pos + 1 < len; suffix++)
		buf[pos++] = *suffix;
	buf[pos] = '\0';
	return pos;
}

/* The command is a folded frame too, with ';' and blanks made ':'. */
static size_t put_comm(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	n = n < 0 ? 0 : (size_t)n < len ? n : (int)len - 1;
	for (int i = 0; i < n; i++)
		if (buf[i] == ';' || buf[i] == ' ')
			buf[i] = ':';
	return n;
}

/* The command as the folded line's first frame ("comm-pid/tid" per thread). */
static size_t folded_comm(const struct report *r, const struct agg *a, char *buf, size_t len)
{
	if (r->o.per_thread)
		return put_comm(buf, len, "%s-%u/%u", a->comm, a->key_pid, a->tid);
	return put_comm(buf, len, "%s", a->comm);
}

/* "comm;user root;...;user leaf;kernel root;...;kernel leaf", perf's order. */
const char *rpt_folded_line(const struct report *r, const struct agg *a, char *buf,
			    size_t len)
{
	size_t pos = folded_comm(r, a, buf, len);

	for (size_t i = 0; i < a->nr_frames; i++)
		pos = append(buf, pos, len, a->frames[i].name,
			     a->frames[i].kernel ? KERNEL_SUFFIX : "");
	return buf;
}

static const struct report *sorting;	/* qsort's comparators have no context */

static int cmp_total(const void *a, const void *b)
{
	const struct agg *x = a, *y = b;
	struct report *r = (struct report *)sorting;

	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return strcmp(rpt_folded_line(r, x, r->buf[0], sizeof(r->buf[0])),
		      rpt_folded_line(r, y, r->buf[1], sizeof(r->buf[1])));
}

static int cmp_count(const void *a, const void *b)
{
	const struct agg *x = a, *y = b;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return cmp_total(a, b);
}

/* The aggregates in the order shown (their key set's indices no longer hold). */
void rpt_sort_aggs(struct report *r)
{
	sorting = r;
	if (r->n)
		qsort(r->v, r->n, sizeof(*r->v), r->o.by_count ? cmp_count : cmp_total);
}

static const char *fmt_time(uint64_t ns, char *buf, size_t len)
{
	if (ns >= 1000000000ull)
		snprintf(buf, len, "%.3f s", ns / 1e9);
	else if (ns >= 1000000ull)
		snprintf(buf, len, "%.3f ms", ns / 1e6);
	else
		snprintf(buf, len, "%.3f us", ns / 1e3);
	return buf;
}

static void put_name(const char *name)
{
	for (; *name; name++)
		putchar(folded_char(*name));
}

/* Frames leaf first, kernel above user, as perf shows a callchain. */
static void print_stack(const struct agg *a)
{
	for (size_t i = a->nr_frames; i-- > 0;) {
		printf("          ");
		put_name(a->frames[i].name);
		printf("%s\n", a->frames[i].kernel ? " [k]" : "");
	}
}

/* "blocker/123 (thread bl-sleep)" or, per thread, "bl-sleep/124 (process blocker/123)". */
static void print_owner(struct report *r, const struct agg *a)
{
	char comm[256];
	int len = put_comm(comm, sizeof(comm), "%s", a->comm);

	if (r->o.per_thread) {
		printf("%s/%u", comm, a->id);
		if (a->id != a->pid)
			printf(" (process %s/%u)", sym_proc_comm(r->sym, a->pid, a->pid), a->pid);
	} else {
		printf("%s/%u", comm, a->pid);
		if (strchr(a->threads, ',') || a->more)
			printf(" (threads %s%s)", a->threads, a->more ? ",..." : "");
		else if ((int)strlen(a->threads) != len || strncmp(a->threads, comm, len))
			printf(" (thread %s)", a->threads);
	}
	printf("\n");
}

/* Entries of the sleepers alone (with --wakers the table also holds the pairs). */
static bool is_sleeper(const struct agg *a)
{
	return a->nr_sleeper == a->nr_frames;
}

static size_t nr_sleepers(const struct report *r)
{
	size_t n = 0;

	for (size_t i = 0; i < r->n; i++)
		n += is_sleeper(&r->v[i]);
	return n;
}

/* Whether P is a pair (sleeper, waker) of the sleeper's entry A. */
static bool waker_of(const struct agg *p, const struct agg *a)
{
	if (is_sleeper(p) || p->nr_sleeper != a->nr_frames || p->comm != a->comm ||
	    p->id != a->id || p->key_pid != a->key_pid || p->tid != a->tid)
		return false;
	for (size_t i = 0; i < a->nr_frames; i++)
		if (p->frames[i].name != a->frames[i].name || p->frames[i].kernel != a->frames[i].kernel)
			return false;
	return true;
}

/* --wakers: under a sleeper's stack A, who woke it, largest share first. */
static void print_wakers(struct report *r, const struct agg *a)
{
	char t[32];

	printf("        woken by:\n");
	for (size_t i = 0; i < r->n; i++) {
		const struct agg *p = &r->v[i];

		if (!waker_of(p, a))
			continue;
		printf("        %7.2f%% %12s %8llu  ", a->total ? 100.0 * p->total / a->total : 0,
		       fmt_time(p->total, t, sizeof(t)), (unsigned long long)p->count);
		put_name(p->frames[p->nr_frames - 1].name);
		printf("\n");
		for (size_t j = p->nr_sleeper + 1; j + 1 < p->nr_frames; j++) {
			printf("                  ");
			put_name(p->frames[j].name);
			printf("%s\n", p->frames[j].kernel ? " [k]" : "");
		}
	}
}

static void print_header(struct report *r)
{
	const struct pd_file *f = &r->file;

	printf("# offcpu report: %s", r->o.input);
	if (f->hostname)
		printf(" (host %s, kernel %s, %s)", f->hostname,
		       f->osrelease ? f->osrelease : "?", f->arch ? f->arch : "?");
	printf("\n# %.3f s off-CPU in %llu samples", r->total / 1e9,
	       (unsigned long long)r->samples);
	if (r->total != r->all_total)
		printf(" (selected from %.3f s)", r->all_total / 1e9);
	printf(", %zu distinct stacks per %s, %llu samples lost\n", nr_sleepers(r),
	       r->o.per_thread ? "thread" : "process", (unsigned long long)r->lost);
	printf("# sorted by %s; frames leaf first, [k]: kernel\n#\n",
	       r->o.by_count ? "samples" : "total off-CPU time");
	printf("#  share        total  samples  %s\n",
	       r->o.per_thread ? "thread/tid" : "process/pid");
}

void rpt_print_text(struct report *r)
{
	uint64_t rest = 0;
	size_t shown = 0, hidden = 0;
	char t[32];

	print_header(r);
	for (size_t i = 0; i < r->n; i++) {
		struct agg *a = &r->v[i];
		double pct = r->total ? 100.0 * a->total / r->total : 0;

		if (!is_sleeper(a))
			continue;
		if (pct < r->o.min_pct || (r->o.top && shown >= (size_t)r->o.top)) {
			hidden++;
			rest += a->total;
			continue;
		}
		printf("%7.2f%% %12s %8llu  ", pct, fmt_time(a->total, t, sizeof(t)),
		       (unsigned long long)a->count);
		print_owner(r, a);
		print_stack(a);
		if (r->o.wakers)
			print_wakers(r, a);
		printf("\n");
		shown++;
	}
	if (hidden)
		printf("# %zu more stacks (%s, %.2f%%) not shown: -n 0 shows all\n", hidden,
		       fmt_time(rest, t, sizeof(t)), r->total ? 100.0 * rest / r->total : 0);
}

/*
 * Threads still blocked at the end have their time in the stacks above too;
 * here each is on its own, with the stack it blocked with.
 */
void rpt_print_blocked(struct report *r)
{
	char t[32];

	if (!r->nr_blocked)
		return;
	printf("# still blocked at the end: %zu threads, %s\n#\n", r->nr_blocked,
	       fmt_time(r->blocked_total, t, sizeof(t)));
	for (size_t i = 0; i < r->nr_blocked; i++) {
		struct agg *b = &r->blocked[i];

		printf("%21s  ", fmt_time(b->total, t, sizeof(t)));
		put_name(b->comm);
		printf("/%u (process %s/%u)\n", b->id, sym_proc_comm(r->sym, b->pid, b->pid),
		       b->pid);
		print_stack(b);
		printf("\n");
	}
}

/* flamegraph.pl's input: one line per stack, value in microseconds. */
void rpt_print_folded(struct report *r)
{
	for (size_t i = 0; i < r->n; i++)
		printf("%s %llu\n", rpt_folded_line(r, &r->v[i], r->buf[0], sizeof(r->buf[0])),
		       (unsigned long long)(r->v[i].total / 1000));
}
