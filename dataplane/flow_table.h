/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Per-core flow table: an rte_hash (single writer, no locks) of bidirectional
 * flow keys, an entry array indexed by the hash's key position, and idle
 * expiry on the core's timer wheel. Bounded by limits.flows_per_core; when full
 * new flows are bypassed (forwarded without state) and counted.
 */
#ifndef SGW_FLOW_TABLE_H
#define SGW_FLOW_TABLE_H

#include <stdint.h>

#include "sgw_flow_key.h"
#include "sgw_timer_wheel.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Timer user values: the event type in the top byte, its object below. */
#define SGW_TEV_SHIFT     56
#define SGW_TEV_FLOW_IDLE 1ull
#define SGW_TEV_SATLINK   2ull  /* a satlink session's timer (dataplane/satlink.c) */
#define SGW_TEV_USER(type, obj) (((uint64_t)(type) << SGW_TEV_SHIFT) | (uint64_t)(obj))

struct sgw_flow {
	struct sgw_flow_key key;
	uint64_t last_ns;
	uint64_t pkts[2];
	uint64_t bytes[2];
	uint64_t rule_gen;         /* snapshot generation the cached rules belong to */
	int32_t rule[2];           /* cached first-match rule per direction, -1 none */
	uint8_t rule_dscp[2];      /* the DSCP the cached rule was matched with */
	int32_t terminal;
	sgw_tw_handle_t timer;
};

struct sgw_flow_table {
	struct rte_hash *h;
	struct sgw_flow *e;        /* indexed by rte_hash key position */
	uint32_t cap;
	uint32_t active;
	uint64_t idle_ns;
};

struct sgw_flow_table *sgw_flow_table_create(const char *name, uint32_t max_flows,
					     uint64_t idle_ns, int socket);
void sgw_flow_table_free(struct sgw_flow_table *ft);

/* Look up n keys (n <= 64). pos[i] >= 0 is the flow's index, < 0 a miss. */
void sgw_flow_lookup_bulk(struct sgw_flow_table *ft, const struct sgw_flow_key **keys,
			  uint32_t n, int32_t *pos);
/* Insert a new flow; returns its index or -1 when the table is full. */
int32_t sgw_flow_add(struct sgw_flow_table *ft, struct sgw_tw *tw,
		     const struct sgw_flow_key *key, uint64_t now_ns);
/* A flow's idle timer fired: delete it if idle, else re-arm. Returns 1 if deleted. */
int sgw_flow_timer_expired(struct sgw_flow_table *ft, struct sgw_tw *tw, int32_t idx,
			   uint64_t now_ns);

#ifdef __cplusplus
}
#endif

#endif /* SGW_FLOW_TABLE_H */
