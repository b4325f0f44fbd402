/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The flow stage: TCP, UDP and ESP. A bulk lookup of the burst's flow keys in
 * the worker's flow table (flow_table.c), a flow created on a miss (bypassed
 * and counted when the table is full), and the first-match rule cached per
 * flow and direction, re-evaluated after a reload or, when some rule matches
 * on DSCP, when a packet's DSCP differs. Owns the flows' idle timers.
 */
#include <rte_hash.h>
#include <rte_mbuf.h>

#include "emit.h"
#include "flow_table.h"
#include "sgw_dp.h"
#include "stage.h"

#define RULE_UNKNOWN (-2)

static void
flow_burst(struct sgw_worker *w, const struct sgw_snapshot *s, struct rte_mbuf **m,
	   const uint16_t *idx, uint16_t n)
{
	struct sgw_flow_table *ft = w->flows;
	struct sgw_flow_key keys[SGW_BURST_MAX];
	const struct sgw_flow_key *kp[SGW_BURST_MAX];
	int32_t pos[SGW_BURST_MAX];
	uint8_t dir[SGW_BURST_MAX];
	uint16_t j;

	for (j = 0; j < n; j++) {
		dir[j] = (uint8_t)sgw_flow_key_from_info(&w->pm[idx[j]].info, &keys[j]);
		kp[j] = &keys[j];
	}
	sgw_flow_lookup_bulk(ft, kp, n, pos);

	for (j = 0; j < n; j++) {
		uint16_t i = idx[j];
		const struct sgw_pkt_meta *pm = &w->pm[i];
		struct sgw_flow *f;
		int32_t fp = pos[j], *cached;
		uint8_t owner;
		uint8_t d = dir[j];

		/* A miss may be a flow an earlier packet of this burst created. */
		if (fp < 0)
			fp = rte_hash_lookup(ft->h, &keys[j]);
		if (fp >= 0) {
			w->c.flow_hits++;
		} else {
			fp = sgw_flow_add(ft, w->tw, SGW_STAGE_FLOW, &keys[j], w->now_ns);
			if (fp < 0) {
				w->c.flows_bypassed++;
				sgw_emit(w, s, m[i], pm->pidx, &pm->info, pm->term,
					 sgw_rule_for(s, &pm->info, pm->pidx, pm->term));
				continue;
			}
			w->c.flows_created++;
			ft->e[fp].rule_gen = (uint32_t)s->gen - 1;  /* no rule cached yet */
		}
		f = &ft->e[fp];
		f->last_ns = w->now_ns;
		f->pkts[d]++;
		f->bytes[d] += rte_pktmbuf_pkt_len(m[i]);
		if (f->rule_gen != (uint32_t)s->gen) {
			f->rule_gen = (uint32_t)s->gen;
			f->rule[0] = f->rule[1] = RULE_UNKNOWN;
			f->terminal = pm->term;
		}
		cached = &f->rule[d];
		/*
		 * The cache holds while what a rule can match on is constant for the
		 * flow and direction. DSCP may change from packet to packet: when
		 * some rule matches on DSCP, a packet whose DSCP differs from the one
		 * the rule was found with is looked up again.
		 */
		if (*cached == RULE_UNKNOWN ||
		    (s->rules_dscp && f->rule_dscp[d] != pm->info.dscp)) {
			*cached = sgw_rule_for(s, &pm->info, pm->pidx, pm->term);
			f->rule_dscp[d] = pm->info.dscp;
		}
		/* A stage that owns the flow, or implements its rule's action, may take it. */
		owner = f->mech_stage;
		if (owner == SGW_STAGE_FLOW && *cached >= 0)
			owner = sgw_action_stage[s->pol.rules[*cached].action];
		if (owner != SGW_STAGE_FLOW && w->sctx[owner] != NULL &&
		    sgw_stages[owner]->flow_input != NULL &&
		    sgw_stages[owner]->flow_input(w, s, m[i], pm, fp, *cached))
			continue;
		sgw_emit(w, s, m[i], pm->pidx, &pm->info, pm->term, *cached);
	}
}

static void
flow_timer(struct sgw_worker *w, const struct sgw_snapshot *s, uint32_t obj, uint8_t timer)
{
	/* A flow another stage owns and still uses is not idle (that stage times its state). */
	if (timer == SGW_FLOW_T_IDLE && obj < w->flows->cap) {
		uint8_t owner = w->flows->e[obj].mech_stage;

		if (owner != SGW_STAGE_FLOW && owner < SGW_STAGE__COUNT &&
		    sgw_stages[owner]->flow_alive != NULL && sgw_stages[owner]->flow_alive(w, obj))
			w->flows->e[obj].last_ns = w->now_ns;
	}
	if (timer == SGW_FLOW_T_IDLE)
		w->c.flows_expired +=
			(uint64_t)sgw_flow_timer_expired(w->flows, w->tw, SGW_STAGE_FLOW, obj,
							 w->now_ns);
}

const struct sgw_stage_ops sgw_stage_flow = {
	.name = "flow",
	.classes = SGW_CLASS_BIT(SGW_CLASS_TCP) | SGW_CLASS_BIT(SGW_CLASS_UDP) |
		   SGW_CLASS_BIT(SGW_CLASS_ESP),
	.burst = flow_burst,
	.timer = flow_timer,
};
