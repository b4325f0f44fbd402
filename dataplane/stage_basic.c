/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The two stages without state: stateless (ICMP, LIFT, XCP, other IP,
 * non-IP, and satlink frames while satlink is off: the rule is looked up per
 * packet) and malformed (counted by parse reason, then dropped, or forwarded
 * untouched when the policy says `malformed: forward`).
 */
#include <rte_mbuf.h>

#include "emit.h"
#include "sgw_dp.h"
#include "stage.h"
#include "tx.h"

static void
stateless_burst(struct sgw_worker *w, const struct sgw_snapshot *s, struct rte_mbuf **m,
		const uint16_t *idx, uint16_t n)
{
	uint16_t j;

	for (j = 0; j < n; j++) {
		const struct sgw_pkt_meta *pm = &w->pm[idx[j]];

		sgw_emit(w, s, m[idx[j]], pm->pidx, &pm->info, pm->term,
			 sgw_rule_for(s, &pm->info, pm->pidx, pm->term));
	}
}

static void
malformed_burst(struct sgw_worker *w, const struct sgw_snapshot *s, struct rte_mbuf **m,
		const uint16_t *idx, uint16_t n)
{
	uint16_t j;

	for (j = 0; j < n; j++) {
		uint16_t i = idx[j];
		int16_t out = s->pol.ports[w->pm[i].pidx].peer;

		w->c.malformed[w->pm[i].info.reason]++;
		if (s->pol.malformed == SGW_MALFORMED_FORWARD && out >= 0)
			sgw_tx(w, (uint16_t)out, m[i], s->pol.workers.burst);
		else
			sgw_drop(w, m[i], SGW_DROP_MALFORMED);
	}
}

const struct sgw_stage_ops sgw_stage_stateless = {
	.name = "stateless",
	.classes = SGW_CLASS_BIT(SGW_CLASS_ICMP) | SGW_CLASS_BIT(SGW_CLASS_LIFT) |
		   SGW_CLASS_BIT(SGW_CLASS_XCP) | SGW_CLASS_BIT(SGW_CLASS_IP_OTHER) |
		   SGW_CLASS_BIT(SGW_CLASS_SATLINK) | SGW_CLASS_BIT(SGW_CLASS_NON_IP),
	.burst = stateless_burst,
};

const struct sgw_stage_ops sgw_stage_malformed = {
	.name = "malformed",
	.classes = SGW_CLASS_BIT(SGW_CLASS_MALFORMED),
	.burst = malformed_burst,
};
