// SPDX-License-Identifier: GPL-2.0
/* PERF_RECORD_SAMPLEs of offcpu-time, one field per sample_type bit. */
#include <string.h>

#include "record/perf_events.h"
#include "record/sample_writer.h"

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

static uint64_t *put_raw(uint64_t *p, const struct offcpu_sample *s)
{
	uint32_t size = s->raw ? s->raw_size : 4;

	if (size > SAMPLE_RAW_MAX || size % 8 != 4)
		size = 4;	/* a caller's bug: keep the file valid */
	memset(p, 0, 4 + size);
	memcpy(p, &size, 4);
	if (s->raw && size == s->raw_size)
		memcpy((char *)p + 4, s->raw, size);
	return p + (4 + size) / 8;
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
	/* RAW: u32 size, then the payload, 4 zero bytes by default (see OFFCPU_SAMPLE_TYPE). */
	if (type & PERF_SAMPLE_RAW)
		p = put_raw(p, s);
	h->size = (uint8_t *)p - (uint8_t *)buf;
	return h;
}
