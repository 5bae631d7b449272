// SPDX-License-Identifier: GPL-2.0
/* The recorder's perf events: their shared attr, their rings mapped and read. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "format/perf_records.h"
#include "record/perf_events.h"

const int perf_uregs[PERF_UREGS_MAX] = { OFFCPU_PERF_UREGS };

uint64_t perf_uregs_mask(void)
{
	uint64_t mask = 0;

	for (int i = 0; i < PERF_UREGS_MAX; i++)
		if (perf_uregs[i] >= 0)
			mask |= 1ull << perf_uregs[i];
	return mask;
}

void sw_event_attr(struct perf_event_attr *a, uint64_t config, uint64_t sample_type)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = PERF_TYPE_SOFTWARE;
	a->config = config;
	a->sample_type = sample_type;
	a->sample_id_all = 1;
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
}

void *perf_ring_map(int fd, size_t bytes, int cpu)
{
	void *ring = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	if (ring != MAP_FAILED)
		return ring;
	fprintf(stderr, "offcpu: cannot map the perf events of CPU %d: %s\n", cpu, strerror(errno));
	return NULL;
}

uint64_t perf_ring_read(struct perf_event_mmap_page *meta, void *scratch,
			perf_ring_fn fn, void *ctx)
{
	uint8_t *data = (uint8_t *)meta + meta->data_offset;
	uint64_t size = meta->data_size, lost = 0;
	uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = meta->data_tail;

	while (tail < head) {
		struct perf_event_header *h = (void *)(data + tail % size);
		uint64_t off = tail % size;

		if (off + h->size > size) {
			/* Wrapped record: reassemble it. */
			memcpy(scratch, data + off, size - off);
			memcpy((uint8_t *)scratch + size - off, data, h->size - (size - off));
			h = scratch;
		}
		if (h->size < sizeof(*h))
			break;
		if (h->type == PERF_RECORD_LOST)
			lost += ((const struct perf_record_lost *)h)->lost;
		fn(ctx, h);
		tail += h->size;
	}
	__atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
	return lost;
}

void perf_events_describe(struct pd_writer *w, const char *name, const struct perf_event_attr *a,
			  const int *fds, const uint64_t *ids, int ncpus)
{
	uint64_t *out = calloc(ncpus ? ncpus : 1, sizeof(*out));
	size_t n = 0;

	if (!out)
		return;
	for (int i = 0; i < ncpus; i++)
		if (fds[i] >= 0)
			out[n++] = ids[i];
	pd_add_event(w, name, a, out, n);
	free(out);
}

void perf_events_close(const int *fds, void *const *rings, size_t bytes, int ncpus)
{
	for (int i = 0; fds && i < ncpus; i++) {
		if (rings && rings[i])
			munmap(rings[i], bytes);
		if (fds[i] >= 0)
			close(fds[i]);
	}
}
