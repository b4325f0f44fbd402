/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A fixed pool of equal-sized objects named by 32-bit indices: the state a
 * mechanism keeps per connection (a split connection, a LIFT flow, an XCP
 * flow), referenced from the flow entry by index rather than by pointer, so
 * the entry stays small and the pool can be sized and placed per worker.
 *
 * The caller gives the memory (the dataplane allocates it on the worker's
 * NUMA socket; tests use malloc): sgw_pool_mem_size() says how much. Objects
 * start on 64-byte boundaries when the memory does, so two never share a
 * cache line once they are 64 bytes or more. Alloc and free are O(1) through
 * an intrusive free list of indices; nothing allocates after init, and an
 * exhausted pool answers SGW_POOL_NONE (counted), never blocks.
 * Single owner (one worker): no atomics.
 */
#ifndef SGW_POOL_H
#define SGW_POOL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SGW_POOL_NONE UINT32_MAX
#define SGW_POOL_IN_USE (UINT32_MAX - 1) /* next[i] of a live object */
#define SGW_POOL_MAX  (UINT32_MAX - 2)   /* objects; two index values are markers */

struct sgw_pool {
	uint8_t *base;        /* object i at base + i * stride */
	uint32_t *next;       /* free list links; SGW_POOL_IN_USE for live objects */
	uint32_t stride;
	uint32_t obj_size;
	uint32_t cap;
	uint32_t used;
	uint32_t free_head;
	uint32_t used_max;    /* high-water mark */
	uint64_t alloc_failed;
	uint64_t bad_free;    /* frees of an index not in use (refused) */
};

/* Bytes of memory a pool of cap objects of obj_size bytes needs; 0 if invalid. */
size_t sgw_pool_mem_size(uint32_t cap, uint32_t obj_size);

/*
 * Lay a pool out in mem (mem_len >= sgw_pool_mem_size(cap, obj_size)).
 * Objects are zeroed when allocated. Returns 0, or -1 on bad arguments.
 */
int sgw_pool_init(struct sgw_pool *p, void *mem, size_t mem_len, uint32_t cap,
		  uint32_t obj_size);

/* A zeroed object's index, or SGW_POOL_NONE when the pool is exhausted. */
uint32_t sgw_pool_alloc(struct sgw_pool *p);

/* Return an object. 0, or -1 (counted, nothing changed) if idx is not in use. */
int sgw_pool_free(struct sgw_pool *p, uint32_t idx);

/* The object at idx (idx < cap; no check: the hot path). */
static inline void *
sgw_pool_get(const struct sgw_pool *p, uint32_t idx)
{
	return p->base + (size_t)idx * p->stride;
}

/* 1 when the object at idx (idx < cap) is allocated. */
static inline int
sgw_pool_in_use(const struct sgw_pool *p, uint32_t idx)
{
	return p->next[idx] == SGW_POOL_IN_USE;
}

#ifdef __cplusplus
}
#endif

#endif /* SGW_POOL_H */
