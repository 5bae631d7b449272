// SPDX-License-Identifier: GPL-2.0
/*
 * A BPF ring buffer's consumer, its data mapped once (see ringbuf.h).  The
 * protocol is the kernel's (kernel/bpf/ringbuf.c) as libbpf's ringbuf.c
 * reads it: an 8-byte header before each record, its length with the BUSY
 * bit while the producer writes and the DISCARD bit for a dropped one, the
 * record padded to 8 bytes; positions only grow, the data offset is the
 * position modulo the size.
 */
#include <bpf/bpf.h>
#include <errno.h>
#include <linux/bpf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <unistd.h>

#include "lib/ringbuf.h"

struct ringbuf {
	struct ringbuf_view v;
	ringbuf_fn fn;
	void *ctx;
	int epoll_fd;
	size_t page;
	void *cons_map, *prod_map;
};

/* A record's room in the ring: header and data, padded to 8 bytes. */
static unsigned long room(uint32_t len)
{
	len &= ~(BPF_RINGBUF_BUSY_BIT | BPF_RINGBUF_DISCARD_BIT);
	return (len + BPF_RINGBUF_HDR_SZ + 7) & ~7ul;
}

/* The LEN bytes at offset OFF of V's data, in one piece: wrapped ones copied. */
static void *record_at(struct ringbuf_view *v, size_t off, size_t len)
{
	size_t first = v->size - off;
	uint8_t *p;

	if (len <= first)
		return (void *)(v->data + off);
	if (len > v->scratch_cap) {
		p = realloc(v->scratch, len);
		if (!p)
			return NULL;
		v->scratch = p;
		v->scratch_cap = len;
	}
	memcpy(v->scratch, v->data + off, first);
	memcpy(v->scratch + first, v->data, len - first);
	return v->scratch;
}

int ringbuf_view_consume(struct ringbuf_view *v, ringbuf_fn fn, void *ctx)
{
	unsigned long cons = __atomic_load_n(v->consumer_pos, __ATOMIC_ACQUIRE), prod;
	size_t mask = v->size - 1;
	int n = 0, rc;

	do {
		prod = __atomic_load_n(v->producer_pos, __ATOMIC_ACQUIRE);
		while (cons < prod) {
			const uint32_t *hdr = (const uint32_t *)(v->data + (cons & mask));
			uint32_t len = __atomic_load_n(hdr, __ATOMIC_ACQUIRE);
			void *rec;

			if (len & BPF_RINGBUF_BUSY_BIT)
				return n;
			if (room(len) > v->size) {	/* not the kernel's writing */
				errno = EIO;
				return -1;
			}
			if (!(len & BPF_RINGBUF_DISCARD_BIT)) {
				rec = record_at(v, (cons + BPF_RINGBUF_HDR_SZ) & mask, len);
				if (!rec)
					return -1;
				rc = fn(ctx, rec, len);
				if (rc < 0) {
					__atomic_store_n(v->consumer_pos, cons + room(len),
							 __ATOMIC_RELEASE);
					return rc;
				}
				n++;
			}
			cons += room(len);
			__atomic_store_n(v->consumer_pos, cons, __ATOMIC_RELEASE);
		}
		/* The producer may have gone on while we read: look again. */
	} while (prod != __atomic_load_n(v->producer_pos, __ATOMIC_ACQUIRE));
	return n;
}

struct ringbuf *ringbuf_new(int map_fd, ringbuf_fn fn, void *ctx)
{
	struct bpf_map_info info = { 0 };
	uint32_t len = sizeof(info);
	struct epoll_event ev = { .events = EPOLLIN };
	struct ringbuf *r;
	int err;

	if (bpf_map_get_info_by_fd(map_fd, &info, &len))
		return NULL;
	if (info.type != BPF_MAP_TYPE_RINGBUF || !info.max_entries ||
	    (info.max_entries & (info.max_entries - 1))) {
		errno = EINVAL;
		return NULL;
	}
	r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->fn = fn;
	r->ctx = ctx;
	r->page = sysconf(_SC_PAGESIZE);
	r->v.size = info.max_entries;
	r->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	/* The consumer page, writable; the producer page and the data, once. */
	r->cons_map = mmap(NULL, r->page, PROT_READ | PROT_WRITE, MAP_SHARED, map_fd, 0);
	r->prod_map = mmap(NULL, r->page + r->v.size, PROT_READ, MAP_SHARED, map_fd, r->page);
	if (r->epoll_fd < 0 || r->cons_map == MAP_FAILED || r->prod_map == MAP_FAILED ||
	    epoll_ctl(r->epoll_fd, EPOLL_CTL_ADD, map_fd, &ev)) {
		err = errno;
		ringbuf_free(r);
		errno = err;
		return NULL;
	}
	r->v.consumer_pos = r->cons_map;
	r->v.producer_pos = r->prod_map;
	r->v.data = (const uint8_t *)r->prod_map + r->page;
	return r;
}

int ringbuf_consume(struct ringbuf *r)
{
	return ringbuf_view_consume(&r->v, r->fn, r->ctx);
}

int ringbuf_poll(struct ringbuf *r, int timeout_ms)
{
	struct epoll_event ev;

	if (epoll_wait(r->epoll_fd, &ev, 1, timeout_ms) < 0)
		return -1;
	return ringbuf_consume(r);
}

void ringbuf_free(struct ringbuf *r)
{
	if (!r)
		return;
	if (r->cons_map && r->cons_map != MAP_FAILED)
		munmap(r->cons_map, r->page);
	if (r->prod_map && r->prod_map != MAP_FAILED)
		munmap(r->prod_map, r->page + r->v.size);
	if (r->epoll_fd >= 0)
		close(r->epoll_fd);
	free(r->v.scratch);
	free(r);
}
