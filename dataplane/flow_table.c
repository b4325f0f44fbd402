/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Per-core flow table (see flow_table.h). rte_hash gives O(1) bulk lookups;
 * the entry array is preallocated so nothing is allocated per flow.
 */
#include <errno.h>
#include <string.h>

#include <rte_hash.h>
#include <rte_hash_crc.h>
#ifdef __SSE4_2__
#include <nmmintrin.h>
#endif
#include <rte_malloc.h>

#include "flow_table.h"
#include "sgw_tev.h"

_Static_assert(sizeof(struct sgw_flow) == 64, "a flow entry is one cache line");

/*
 * Flow keys are 48 bytes: six CRC32-C steps. rte_hash_crc gives the same
 * values but checks the CPU's CRC support through a global on every 8-byte
 * step; DPDK's x86 builds assume SSE4.2 anyway.
 */
static uint32_t
flow_hash(const void *key, uint32_t len, uint32_t init)
{
#ifdef __SSE4_2__
	const uint8_t *k = key;
	uint64_t h = init, w;
	uint32_t i;

	if (len == sizeof(struct sgw_flow_key)) {
		/* The table's only key size: unrolled by the compiler. */
		for (i = 0; i < sizeof(struct sgw_flow_key); i += 8) {
			memcpy(&w, k + i, 8);
			h = _mm_crc32_u64(h, w);
		}
		return (uint32_t)h;
	}
	for (i = 0; i + 8 <= len; i += 8) {
		memcpy(&w, k + i, 8);
		h = _mm_crc32_u64(h, w);
	}
	return len == i ? (uint32_t)h : rte_hash_crc(k + i, len - i, (uint32_t)h);
#else
	return rte_hash_crc(key, len, init);
#endif
}

struct sgw_flow_table *
sgw_flow_table_create(const char *name, uint32_t max_flows, uint64_t idle_ns, int socket)
{
	struct rte_hash_parameters hp = {
		.name = name,
		.entries = max_flows,
		.key_len = sizeof(struct sgw_flow_key),
		.hash_func = flow_hash,
		.hash_func_init_val = 0x5a7c0de,
		.socket_id = socket,
		/* Extendable buckets: the table holds max_flows keys whatever the hash spread. */
		.extra_flag = RTE_HASH_EXTRA_FLAGS_EXT_TABLE,
	};
	struct sgw_flow_table *ft;
	int32_t max_key;

	ft = rte_zmalloc_socket("sgw_flow_table", sizeof(*ft), RTE_CACHE_LINE_SIZE, socket);
	if (ft == NULL)
		return NULL;
	ft->h = rte_hash_create(&hp);
	if (ft->h == NULL)
		goto fail;
	max_key = rte_hash_max_key_id(ft->h);
	if (max_key < 0)
		goto fail;
	ft->cap = (uint32_t)max_key + 1;
	ft->e = rte_zmalloc_socket("sgw_flows", sizeof(*ft->e) * ft->cap, RTE_CACHE_LINE_SIZE,
				   socket);
	if (ft->e == NULL)
		goto fail;
	ft->idle_ns = idle_ns;
	return ft;
fail:
	sgw_flow_table_free(ft);
	return NULL;
}

void
sgw_flow_table_free(struct sgw_flow_table *ft)
{
	if (ft == NULL)
		return;
	rte_hash_free(ft->h);
	rte_free(ft->e);
	rte_free(ft);
}

void
sgw_flow_lookup_bulk(struct sgw_flow_table *ft, const struct sgw_flow_key **keys, uint32_t n,
		     int32_t *pos)
{
	if (n == 0)
		return;
	if (rte_hash_lookup_bulk(ft->h, (const void **)keys, n, pos) < 0) {
		uint32_t i;

		for (i = 0; i < n; i++)
			pos[i] = -ENOENT;
	}
}

int32_t
sgw_flow_add(struct sgw_flow_table *ft, struct sgw_tw *tw, uint8_t stage,
	     const struct sgw_flow_key *key, uint64_t now_ns)
{
	struct sgw_flow *f;
	int32_t pos;
	unsigned int t;

	pos = rte_hash_add_key(ft->h, key);
	if (pos < 0)
		return -1;
	f = &ft->e[pos];
	memset(f, 0, sizeof(*f));
	for (t = 0; t < SGW_FLOW_T__COUNT; t++)
		f->timer[t] = SGW_TW_INVALID;
	if (sgw_tev_arm(tw, &f->timer[SGW_FLOW_T_IDLE], stage, SGW_FLOW_T_IDLE, (uint32_t)pos,
			ft->idle_ns) != 0) {
		/* No timer means the flow could never expire: refuse it instead. */
		rte_hash_del_key(ft->h, key);
		return -1;
	}
	f->last_ns = now_ns;
	f->rule[0] = f->rule[1] = -1;
	f->terminal = -1;
	f->mech = SGW_POOL_NONE;
	ft->active++;
	return pos;
}

void
sgw_flow_del(struct sgw_flow_table *ft, struct sgw_tw *tw, uint32_t idx)
{
	void *key;

	sgw_tev_stop_all(tw, ft->e[idx].timer, SGW_FLOW_T__COUNT);
	if (rte_hash_get_key_with_position(ft->h, (int32_t)idx, &key) == 0 &&
	    rte_hash_del_key(ft->h, key) >= 0)
		ft->active--;
}

int
sgw_flow_timer_expired(struct sgw_flow_table *ft, struct sgw_tw *tw, uint8_t stage,
		       uint32_t idx, uint64_t now_ns)
{
	struct sgw_flow *f;
	uint64_t idle;

	if (idx >= ft->cap)
		return 0;
	f = &ft->e[idx];
	sgw_tev_fired(&f->timer[SGW_FLOW_T_IDLE]);
	idle = now_ns - f->last_ns;
	if (now_ns >= f->last_ns && idle < ft->idle_ns &&
	    sgw_tev_arm(tw, &f->timer[SGW_FLOW_T_IDLE], stage, SGW_FLOW_T_IDLE, idx,
			ft->idle_ns - idle) == 0)
		return 0;  /* seen since the timer was armed: the rest of the idle period */
	sgw_flow_del(ft, tw, idx);
	return 1;
}
