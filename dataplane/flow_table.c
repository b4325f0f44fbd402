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
sgw_flow_add(struct sgw_flow_table *ft, struct sgw_tw *tw, const struct sgw_flow_key *key,
	     uint64_t now_ns)
{
	struct sgw_flow *f;
	int32_t pos;
	sgw_tw_handle_t th;

	pos = rte_hash_add_key(ft->h, key);
	if (pos < 0)
		return -1;
	th = sgw_tw_start(tw, SGW_TEV_USER(SGW_TEV_FLOW_IDLE, pos), ft->idle_ns);
	if (th == SGW_TW_INVALID) {
		/* No timer means the flow could never expire: refuse it instead. */
		rte_hash_del_key(ft->h, key);
		return -1;
	}
	f = &ft->e[pos];
	memset(f, 0, sizeof(*f));
	f->key = *key;
	f->last_ns = now_ns;
	f->rule_gen = UINT64_MAX;
	f->rule[0] = f->rule[1] = -1;
	f->terminal = -1;
	f->timer = th;
	ft->active++;
	return pos;
}

int
sgw_flow_timer_expired(struct sgw_flow_table *ft, struct sgw_tw *tw, int32_t idx, uint64_t now_ns)
{
	struct sgw_flow *f;
	uint64_t idle;

	if (idx < 0 || (uint32_t)idx >= ft->cap)
		return 0;
	f = &ft->e[idx];
	idle = now_ns - f->last_ns;
	if (now_ns >= f->last_ns && idle < ft->idle_ns) {
		/* Seen since the timer was armed: re-arm for the rest of the idle period. */
		f->timer = sgw_tw_start(tw, SGW_TEV_USER(SGW_TEV_FLOW_IDLE, idx), ft->idle_ns - idle);
		if (f->timer != SGW_TW_INVALID)
			return 0;
	}
	rte_hash_del_key(ft->h, &f->key);
	f->timer = SGW_TW_INVALID;
	ft->active--;
	return 1;
}
