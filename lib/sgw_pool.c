/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fixed object pool by 32-bit index (contract: sgw_pool.h). Layout in the
 * caller's memory: the objects, each rounded up to a stride (8 bytes, or a
 * whole number of 64-byte lines from 64 bytes up), then one 32-bit link per
 * object: the next free index, or SGW_POOL_IN_USE.
 */
#include <string.h>

#include "sgw_pool.h"

#define LINE 64u

static uint32_t
stride_of(uint32_t obj_size)
{
	if (obj_size >= LINE)
		return (obj_size + LINE - 1) & ~(LINE - 1);
	return (obj_size + 7u) & ~7u;
}

size_t
sgw_pool_mem_size(uint32_t cap, uint32_t obj_size)
{
	if (cap == 0 || cap > SGW_POOL_MAX || obj_size == 0 || obj_size > UINT32_MAX - LINE)
		return 0;
	return (size_t)cap * stride_of(obj_size) + (size_t)cap * sizeof(uint32_t);
}

int
sgw_pool_init(struct sgw_pool *p, void *mem, size_t mem_len, uint32_t cap, uint32_t obj_size)
{
	size_t need = sgw_pool_mem_size(cap, obj_size);
	uint32_t i;

	if (p == NULL || mem == NULL || need == 0 || mem_len < need)
		return -1;
	memset(p, 0, sizeof(*p));
	p->stride = stride_of(obj_size);
	p->obj_size = obj_size;
	p->cap = cap;
	p->base = mem;
	p->next = (uint32_t *)(void *)(p->base + (size_t)cap * p->stride);
	for (i = 0; i < cap; i++)
		p->next[i] = i + 1 < cap ? i + 1 : SGW_POOL_NONE;
	p->free_head = 0;
	return 0;
}

uint32_t
sgw_pool_alloc(struct sgw_pool *p)
{
	uint32_t i = p->free_head;

	if (i == SGW_POOL_NONE) {
		p->alloc_failed++;
		return SGW_POOL_NONE;
	}
	p->free_head = p->next[i];
	p->next[i] = SGW_POOL_IN_USE;
	p->used++;
	if (p->used > p->used_max)
		p->used_max = p->used;
	memset(sgw_pool_get(p, i), 0, p->obj_size);
	return i;
}

int
sgw_pool_free(struct sgw_pool *p, uint32_t idx)
{
	if (idx >= p->cap || p->next[idx] != SGW_POOL_IN_USE) {
		p->bad_free++;
		return -1;
	}
	p->next[idx] = p->free_head;
	p->free_head = idx;
	p->used--;
	return 0;
}
