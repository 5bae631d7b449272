// SPDX-License-Identifier: GPL-2.0
/* PERF_RECORD_SAMPLEs of offcpu-time, one field per sample_type bit. */
#include <string.h>

#include "sample_writer.h"
#include "task_events.h"

void offcpu_event_attr(struct perf_event_attr *a, const struct offcpu_opts *o)
{
	sw_event_attr(a, PERF_COUNT_SW_BPF_OUTPUT, OFFCPU_SAMPLE_TYPE);
	a->sample_period = 1;
	a->exclude_kernel = !o->kstack;
	a->exclude_user = !o->ustack;
	a->sample_max_stack = o->max_stack;
}

/* Two u32 in one u64 word, in memory order (perf's TID and CPU fields). */
static uint64_t u32_pair(uint32_t first, uint32_t second)
{
	uint32_t v[2] = { first, second };
	uint64_t w;

	memcpy(&w, v, sizeof(w));
	return w;
}

static uint64_t *put_chain(uint64_t *p, uint64_t context, const struct stack *s)
{
	if (!s)
		return p;
	*p++ = context;
	memcpy(p, s->ip, s->nr * sizeof(uint64_t));
	return p + s->nr;
}

/* The first frame of the chain: where the thread was when it stopped. */
static uint64_t sample_ip(const struct offcpu_sample *s)
{
	if (s->user && s->user->nr)
		return s->user->ip[0];
	return s->kernel && s->kernel->nr ? s->kernel->ip[0] : 0;
}

struct perf_event_header *sample_write(void *buf, const struct offcpu_sample *s)
{
	const uint64_t type = OFFCPU_SAMPLE_TYPE;
	struct perf_event_header *h = buf;
	uint64_t *p = (uint64_t *)(h + 1);

	h->type = PERF_RECORD_SAMPLE;
	h->misc = s->user ? PERF_RECORD_MISC_USER : s->kernel ? PERF_RECORD_MISC_KERNEL
							       : PERF_RECORD_MISC_USER;
	if (type & PERF_SAMPLE_IDENTIFIER)
		*p++ = s->id ? s->id : OFFCPU_ID;
	if (type & PERF_SAMPLE_IP)
		*p++ = sample_ip(s);
	if (type & PERF_SAMPLE_TID)
		*p++ = u32_pair(s->pid, s->tid);
	if (type & PERF_SAMPLE_TIME)
		*p++ = s->time;
	if (type & PERF_SAMPLE_CPU)
		*p++ = u32_pair(s->cpu, 0);
	if (type & PERF_SAMPLE_PERIOD)
		*p++ = s->period;
	if (type & PERF_SAMPLE_CALLCHAIN) {
		uint64_t *nr = p++;

		p = put_chain(p, PERF_CONTEXT_KERNEL, s->kernel);
		p = put_chain(p, PERF_CONTEXT_USER, s->user);
		*nr = p - (nr + 1);
	}
	/* RAW: u32 size 4, then 4 zero bytes (see OFFCPU_SAMPLE_TYPE). */
	if (type & PERF_SAMPLE_RAW)
		*p++ = u32_pair(4, 0);
	h->size = (uint8_t *)p - (uint8_t *)buf;
	return h;
}
