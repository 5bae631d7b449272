/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The consumer of a BPF ring buffer (BPF_MAP_TYPE_RINGBUF), as libbpf's
 * ring_buffer but with its data mapped once.  libbpf maps the data area
 * twice in a row so that a record crossing its end reads as one piece;
 * every page of both is in the process's RSS from the mmap on (the kernel
 * inserts them all), so a 4 MiB ring cost 8 MiB of RSS, the largest part
 * of the recorder's.  Here a record that wraps is copied into a buffer
 * instead (one in several hundred, for 8 KiB stack copies in 4 MiB).
 */
#ifndef OFFCPU_RINGBUF_H
#define OFFCPU_RINGBUF_H

#include <stddef.h>
#include <stdint.h>

/* Called for each record; a negative return stops the reading (returned). */
typedef int (*ringbuf_fn)(void *ctx, void *data, size_t size);

/*
 * A ring's state as both sides see it: the consumer and producer positions
 * (unsigned long, as the kernel keeps them) and the data area of SIZE
 * bytes (a power of 2), mapped once.  SCRATCH (SCRATCH_CAP bytes, grown as
 * needed) holds a wrapped record.
 */
struct ringbuf_view {
	unsigned long *consumer_pos;
	const unsigned long *producer_pos;
	const uint8_t *data;
	size_t size;
	uint8_t *scratch;
	size_t scratch_cap;
};

/*
 * Hands every committed record of V to FN, in order, up to the first one
 * still being written, and moves the consumer position past them: the
 * records handed, or FN's negative return, or -1 (errno: out of memory, or
 * EIO for a record longer than the ring).
 */
int ringbuf_view_consume(struct ringbuf_view *v, ringbuf_fn fn, void *ctx);

struct ringbuf;

/* The ring of MAP_FD, read by FN; NULL with errno set. */
struct ringbuf *ringbuf_new(int map_fd, ringbuf_fn fn, void *ctx);
/* ringbuf_view_consume of R. */
int ringbuf_consume(struct ringbuf *r);
/*
 * Waits up to TIMEOUT_MS for data (-1: no limit), then consumes it: the
 * records read, or -1 with errno set (EINTR: a signal came).
 */
int ringbuf_poll(struct ringbuf *r, int timeout_ms);
void ringbuf_free(struct ringbuf *r);

#endif
