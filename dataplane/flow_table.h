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
#include "sgw_pool.h"
#include "sgw_timer_wheel.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A flow's timers (lib/sgw_tev.h timer ids, under the flow stage's id). */
enum sgw_flow_timer {
	SGW_FLOW_T_IDLE = 0,       /* idle expiry */
	SGW_FLOW_T__COUNT
};

/*
 * One cache line per flow. The key is not kept here: rte_hash holds it, at
 * the same position (rte_hash_get_key_with_position). A mechanism that takes
 * over a flow (the TCP split, LIFT, XCP) keeps its state in its own
 * per-worker pool (lib/sgw_pool.h) and names it here by 32-bit index.
 */
struct sgw_flow {
	uint64_t last_ns;
	uint64_t bytes[2];
	uint32_t pkts[2];          /* per direction; wraps at 2^32 (inspection only) */
	uint32_t rule_gen;         /* snapshot generation (low 32 bits) of the cached rules */
	int32_t rule[2];           /* cached first-match rule per direction, -1 none */
	int32_t terminal;
	uint32_t mech;             /* the owning mechanism's state in its pool, SGW_POOL_NONE */
	sgw_tw_handle_t timer[SGW_FLOW_T__COUNT];
	uint8_t rule_dscp[2];      /* the DSCP the cached rule was matched with */
	uint8_t mech_stage;        /* which stage's pool mech indexes (enum sgw_stage_id) */
} __attribute__((aligned(64)));

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
/*
 * Insert a new flow and arm its idle timer (timer user values come from
 * sgw_tev_make(stage, SGW_FLOW_T_IDLE, index)); returns its index or -1 when
 * the table (or the timer wheel) is full.
 */
int32_t sgw_flow_add(struct sgw_flow_table *ft, struct sgw_tw *tw, uint8_t stage,
		     const struct sgw_flow_key *key, uint64_t now_ns);
/* A flow's idle timer fired: delete it if idle, else re-arm. Returns 1 if deleted. */
int sgw_flow_timer_expired(struct sgw_flow_table *ft, struct sgw_tw *tw, uint8_t stage,
			   uint32_t idx, uint64_t now_ns);
/* Delete a flow now: every timer stopped, its position free for reuse. */
void sgw_flow_del(struct sgw_flow_table *ft, struct sgw_tw *tw, uint32_t idx);

#ifdef __cplusplus
}
#endif

#endif /* SGW_FLOW_TABLE_H */
