/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One bounded FIFO of slot indices, for every queue in satgw: the caller owns
 * an array of cap elements of whatever type the queue holds (mbuf pointers,
 * (mbuf, release time) pairs) and this ring says which
 * slot is the oldest, where the next element goes and how many are held.
 *
 * Any capacity, not only powers of two (queues are sized from configured
 * rates and times, and rounding them up would hide the configured bound);
 * wrap-around is a compare, not a division. Header only: it sits on
 * per-packet paths. Single owner (one worker): no atomics. rte_ring is the
 * tool between cores; this is the tool inside one.
 */
#ifndef SGW_RING_H
#define SGW_RING_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct sgw_ring {
	uint32_t head;   /* slot of the oldest element */
	uint32_t n;      /* elements held */
	uint32_t cap;    /* slots in the caller's array, >= 1 */
};

static inline void
sgw_ring_init(struct sgw_ring *r, uint32_t cap)
{
	r->head = 0;
	r->n = 0;
	r->cap = cap;
}

static inline uint32_t
sgw_ring_count(const struct sgw_ring *r)
{
	return r->n;
}

static inline uint32_t
sgw_ring_room(const struct sgw_ring *r)
{
	return r->cap - r->n;
}

static inline bool
sgw_ring_empty(const struct sgw_ring *r)
{
	return r->n == 0;
}

static inline bool
sgw_ring_full(const struct sgw_ring *r)
{
	return r->n == r->cap;
}

/* Slot of the k-th oldest element (k < n; k == n: the next free slot). */
static inline uint32_t
sgw_ring_at(const struct sgw_ring *r, uint32_t k)
{
	uint32_t s = r->head + k;

	return s >= r->cap ? s - r->cap : s;
}

/* Slot of the oldest element (the ring must not be empty). */
static inline uint32_t
sgw_ring_head(const struct sgw_ring *r)
{
	return r->head;
}

/* Take a slot at the tail for a new element (the ring must not be full). */
static inline uint32_t
sgw_ring_push(struct sgw_ring *r)
{
	uint32_t s = sgw_ring_at(r, r->n);

	r->n++;
	return s;
}

/* Remove the oldest element; returns its slot (the ring must not be empty). */
static inline uint32_t
sgw_ring_pop(struct sgw_ring *r)
{
	uint32_t s = r->head;

	r->head = s + 1 == r->cap ? 0 : s + 1;
	r->n--;
	return s;
}

#ifdef __cplusplus
}
#endif

#endif /* SGW_RING_H */
