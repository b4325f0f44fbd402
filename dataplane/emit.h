/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Rule lookup and the rule's action for one packet, shared by the stages that
 * forward packets on policy (flow, stateless). Inline: it is the per-packet
 * end of those stages. A packet that leaves by a port a stage owns (the
 * satlink port) goes to that stage's action instead of TX.
 */
#ifndef SGW_EMIT_H
#define SGW_EMIT_H

#include <string.h>

#include <rte_ether.h>
#include <rte_mbuf.h>

#include "sgw_dp.h"
#include "tx.h"

static inline void
sgw_match_key(const struct sgw_pkt_info *pi, uint16_t pidx, int32_t term,
	      struct sgw_match_key *k)
{
	k->in_port = (int16_t)pidx;
	k->terminal = term;
	k->family = pi->ip_ver;
	k->proto = pi->esp_in_udp ? 50 : pi->ip_proto;
	k->dscp = pi->dscp;
	k->has_ports = (pi->cls == SGW_CLASS_TCP || pi->cls == SGW_CLASS_UDP ||
			(pi->cls == SGW_CLASS_ESP && pi->esp_in_udp));
	k->has_spi = pi->cls == SGW_CLASS_ESP;
	k->sport = pi->sport;
	k->dport = pi->dport;
	k->spi = pi->esp_spi;
	k->src = pi->src;
	k->dst = pi->dst;
}

/* The first rule that matches the packet, or -1. */
static inline int32_t
sgw_rule_for(const struct sgw_snapshot *s, const struct sgw_pkt_info *pi, uint16_t pidx,
	     int32_t term)
{
	struct sgw_match_key k;

	if (s->pol.n_rules == 0)
		return -1;
	sgw_match_key(pi, pidx, term, &k);
	return sgw_rules_lookup(&s->pol, &k);
}

/* Carry out the matched rule's action (or the default action) on one packet. */
static __rte_always_inline void
sgw_emit(struct sgw_worker *w, const struct sgw_snapshot *s, struct rte_mbuf *m,
	 uint16_t pidx, const struct sgw_pkt_info *pi, int32_t term, int32_t rule)
{
	const struct sgw_policy *p = &s->pol;
	enum sgw_action act;
	int16_t nh = -1, out;
	int8_t owner;

	if (rule >= 0) {
		struct sgw_rule_ctr *rc = &s->rule_ctr[(size_t)w->idx * p->n_rules + rule];

		rc->pkts++;
		rc->bytes += rte_pktmbuf_pkt_len(m);
		act = p->rules[rule].action;
		nh = p->rules[rule].next_hop;
	} else {
		w->c.unmatched++;
		act = p->default_action;
		if (act == SGW_ACT_DROP) {
			sgw_drop(w, m, SGW_DROP_DEFAULT);
			return;
		}
	}
	w->c.act[act]++;
	if (act == SGW_ACT_DROP) {
		sgw_drop(w, m, SGW_DROP_RULE);
		return;
	}
	if (nh >= 0) {
		struct rte_ether_hdr *eh = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);

		out = p->next_hops[nh].port;
		memcpy(&eh->dst_addr, p->next_hops[nh].mac, RTE_ETHER_ADDR_LEN);
		rte_ether_addr_copy(&w->dp->ports[out].mac, &eh->src_addr);
	} else {
		out = p->ports[pidx].peer;
		if (out < 0) {
			sgw_drop(w, m, SGW_DROP_NO_ROUTE);
			return;
		}
	}
	owner = w->dp->stage_of_port[out];
	if (owner >= 0) {
		/* Leaving by a port a stage owns (satlink): the stage carries it. */
		sgw_stages[owner]->action(w, s, m, pi, term, rule);
		return;
	}
	sgw_tx(w, (uint16_t)out, m, p->workers.burst);
}

#endif /* SGW_EMIT_H */
