// SPDX-License-Identifier: GPL-2.0
/*
 * --wakers: a sleeper's sample held until its waker's, then the pair
 * aggregated as one stack: the sleeper's frames, "--", the waker's.
 */
#include <stdlib.h>
#include <string.h>

#include "format/waker_record.h"
#include "report/report_int.h"

uint32_t rpt_raw_u32(const struct pd_sample *s)
{
	uint32_t v = 0;

	if (s->raw && s->raw_size >= sizeof(v))
		memcpy(&v, s->raw, sizeof(v));
	return v;
}

/* KEY's frames, then WAKER_SEP and N frames W (NULL: just the separator). */
static int add_joined(struct report *r, const struct agg *key, const struct frame *w, size_t n,
		      const struct pd_sample *s, const char *thread)
{
	struct agg j = *key;
	int err;

	j.frames = malloc((key->nr_frames + 1 + n) * sizeof(*j.frames));
	if (!j.frames)
		return -1;
	memcpy(j.frames, key->frames, key->nr_frames * sizeof(*j.frames));
	j.frames[key->nr_frames] = (struct frame){ str_set_intern(&r->names, WAKER_SEP), NULL, false };
	if (n)
		memcpy(j.frames + key->nr_frames + 1, w, n * sizeof(*w));
	j.nr_frames = key->nr_frames + 1 + n;
	j.nr_sleeper = key->nr_frames;
	err = !j.frames[key->nr_frames].name || rpt_add(r, &j, s, thread);
	free(j.frames);
	return err ? -1 : 0;
}

void rpt_drop_pending(struct report *r)
{
	if (r->pend_pair)
		r->unpaired++;
	r->pend_pair = 0;
	free(r->pend.frames);
	r->pend.frames = NULL;
}

/* Holds the sleeper's KEY until the waker's sample with the same pair id. */
int rpt_hold_sleeper(struct report *r, const struct agg *key, const struct pd_sample *s,
		     const char *thread)
{
	const struct frame none = { str_set_intern(&r->names, waker_kind_frame(WAKER_UNKNOWN)),
				    NULL, false };
	uint32_t pair = rpt_raw_u32(s);

	if (!pair)
		return none.name ? add_joined(r, key, &none, 1, s, thread) : -1;
	r->pend = *key;
	r->pend.frames = malloc(key->nr_frames * sizeof(*key->frames));
	if (!r->pend.frames)
		return -1;
	memcpy(r->pend.frames, key->frames, key->nr_frames * sizeof(*key->frames));
	r->pend_sample = *s;
	snprintf(r->pend_thread, sizeof(r->pend_thread), "%s", thread);
	r->pend_pair = pair;
	return 0;
}

/* --wakers: a thread still blocked at the end has no waker yet. */
int rpt_add_still_blocked(struct report *r, const struct agg *key, const struct pd_sample *s,
			  const char *thread)
{
	const struct frame none = { str_set_intern(&r->names, "[still-blocked]"), NULL, false };

	return none.name ? add_joined(r, key, &none, 1, s, thread) : -1;
}

/* The waker's frames as offwaketime folds them: kernel leaf ... root, user leaf ... root, name. */
static int waker_frames(struct report *r, const struct pd_sample *s, const struct waker_raw *w,
			size_t *n)
{
	const char *kind = waker_kind_frame(w->kind);
	char comm[sizeof(w->comm) + 1] = "";
	struct chain c;
	int err = 0;

	rpt_split_chain(s, &c);
	if (rpt_reserve_frames(r, c.nu + c.nk + 1))
		return -1;
	*n = 0;
	for (size_t i = 0; i < c.nk && !err; i++)
		err = rpt_add_frame(r, (*n)++, sym_kernel(r->sym, c.k[i]), KERNEL_FILE, true);
	for (size_t i = 0; i < c.nu && !err; i++)
		err = rpt_add_frame(r, (*n)++, sym_user(r->sym, s->pid, c.u[i]),
				    rpt_user_file(r, s->pid, c.u[i]), false);
	memcpy(comm, w->comm, sizeof(w->comm));
	if (!err)
		err = rpt_add_frame(r, (*n)++, kind ? kind : comm[0] ? comm : "[unknown]", NULL, false);
	return err;
}

int rpt_add_waker(struct report *r, const struct pd_sample *s)
{
	struct waker_raw w;
	size_t n;
	int err;

	if (!r->o.wakers)
		return 0;
	if (s->raw && s->raw_size >= sizeof(w.pair) && r->skip_pair && rpt_raw_u32(s) == r->skip_pair)
		return 0;
	if (!s->raw || s->raw_size < sizeof(w) || !r->pend_pair) {
		r->unpaired++;
		return 0;
	}
	memcpy(&w, s->raw, sizeof(w));
	if (w.pair != r->pend_pair) {
		rpt_drop_pending(r);
		r->unpaired++;
		return 0;
	}
	err = waker_frames(r, s, &w, &n) ||
	      add_joined(r, &r->pend, r->chain, n, &r->pend_sample, r->pend_thread);
	r->pend_pair = 0;
	rpt_drop_pending(r);
	return err;
}
