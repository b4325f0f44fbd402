/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Policy snapshots: turn a validated sgw_policy into the immutable structure
 * the workers read (LPM tables from terminal prefixes to terminals, the
 * terminal -> worker shard map, per-worker rule counters). Runs on the control
 * thread, never on a worker.
 */
#include <stdio.h>
#include <string.h>

#include <rte_hash.h>
#include <rte_lpm.h>
#include <rte_lpm6.h>
#include <rte_malloc.h>

#include "sgw_dp.h"

static int
build_lpm(struct sgw_dp *dp, struct sgw_snapshot *s, char *err, size_t errlen)
{
	const struct sgw_policy *p = &s->pol;
	uint32_t n4 = 0, n6 = 0, tbl8_6 = 0, t, k;
	/* Only the running and the next snapshot coexist: gen mod 2^16 is unique. */
	char name[RTE_LPM_NAMESIZE];

	for (t = 0; t < p->n_terminals; t++)
		for (k = 0; k < p->terminals[t].n_prefixes; k++) {
			const struct sgw_prefix *pf = &p->terminals[t].prefixes[k];

			if (pf->family == 4) {
				n4++;
			} else {
				n6++;
				/* rte_lpm6: 24 bits in tbl24, one tbl8 group per further byte. */
				if (pf->len > 24)
					tbl8_6 += (pf->len - 24 + 7) / 8u;
			}
		}
	if (n4 > 0) {
		struct rte_lpm_config c = {
			.max_rules = n4,
			.number_tbl8s = RTE_MIN(n4 + 256, 1u << 16),
		};

		snprintf(name, sizeof(name), "sgw4_%s_%u", dp->instance, (unsigned int)(s->gen & 0xffff));
		s->lpm4 = rte_lpm_create(name, SOCKET_ID_ANY, &c);
		if (s->lpm4 == NULL) {
			snprintf(err, errlen, "cannot create IPv4 terminal table (%u prefixes): %s",
				 n4, rte_strerror(rte_errno));
			return -1;
		}
	}
	if (n6 > 0) {
		struct rte_lpm6_config c = {
			.max_rules = n6,
			.number_tbl8s = tbl8_6 + 256,
		};

		snprintf(name, sizeof(name), "sgw6_%s_%u", dp->instance, (unsigned int)(s->gen & 0xffff));
		s->lpm6 = rte_lpm6_create(name, SOCKET_ID_ANY, &c);
		if (s->lpm6 == NULL) {
			snprintf(err, errlen, "cannot create IPv6 terminal table (%u prefixes): %s",
				 n6, rte_strerror(rte_errno));
			return -1;
		}
	}
	for (t = 0; t < p->n_terminals; t++) {
		for (k = 0; k < p->terminals[t].n_prefixes; k++) {
			const struct sgw_prefix *pf = &p->terminals[t].prefixes[k];
			int rc;

			if (pf->family == 4) {
				uint32_t ip = ((uint32_t)pf->addr[0] << 24) |
					      ((uint32_t)pf->addr[1] << 16) |
					      ((uint32_t)pf->addr[2] << 8) | pf->addr[3];

				rc = rte_lpm_add(s->lpm4, ip, pf->len, t);
			} else {
				rc = rte_lpm6_add(s->lpm6, pf->addr, pf->len, t);
			}
			if (rc < 0) {
				snprintf(err, errlen, "terminal '%s': cannot add prefix %u: %s",
					 p->terminals[t].name, k, rte_strerror(-rc));
				return -1;
			}
		}
	}
	return 0;
}

struct sgw_snapshot *
sgw_snapshot_build(struct sgw_dp *dp, struct sgw_policy *pol, char *err, size_t errlen)
{
	struct sgw_snapshot *s;
	uint32_t t, nr;

	s = rte_zmalloc("sgw_snapshot", sizeof(*s), RTE_CACHE_LINE_SIZE);
	if (s == NULL) {
		snprintf(err, errlen, "out of memory for a policy snapshot");
		return NULL;
	}
	s->gen = ++dp->next_gen;
	/* Take ownership of the policy's heap arrays. */
	s->pol = *pol;
	pol->terminals = NULL;
	pol->rules = NULL;
	pol->n_terminals = 0;
	pol->n_rules = 0;

	sgw_parse_conf_default(&s->parse);
	s->parse.lift_proto = s->pol.lift_proto;
	s->parse.xcp_proto = s->pol.xcp_proto;
	s->n_workers = dp->n_workers;

	if (build_lpm(dp, s, err, errlen) < 0)
		goto fail;
	if (s->pol.n_terminals > 0) {
		s->term_owner = rte_malloc("sgw_term_owner",
					   sizeof(*s->term_owner) * s->pol.n_terminals, 0);
		if (s->term_owner == NULL) {
			snprintf(err, errlen, "out of memory for the terminal shard map");
			goto fail;
		}
		for (t = 0; t < s->pol.n_terminals; t++)
			s->term_owner[t] = (uint16_t)sgw_terminal_shard(s->pol.terminals[t].id,
									dp->n_workers);
	}
	/* Each stage that is on adds what it keeps per policy. */
	s->default_term = -1;
	for (t = 0; t < SGW_STAGE__COUNT; t++)
		if (dp->stage_on[t] && sgw_stages[t]->snapshot != NULL &&
		    sgw_stages[t]->snapshot(dp, s, err, errlen) < 0)
			goto fail;
	for (t = 0; t < s->pol.n_rules; t++)
		if (s->pol.rules[t].dscp_mask != 0)
			s->rules_dscp = true;
	nr = s->pol.n_rules > 0 ? s->pol.n_rules : 1;
	s->rule_ctr = rte_zmalloc("sgw_rule_ctr", sizeof(*s->rule_ctr) * nr * dp->n_workers,
				  RTE_CACHE_LINE_SIZE);
	s->rule_base = rte_zmalloc("sgw_rule_base", sizeof(*s->rule_base) * nr, 0);
	if (s->rule_ctr == NULL || s->rule_base == NULL) {
		snprintf(err, errlen, "out of memory for rule counters");
		goto fail;
	}
	return s;
fail:
	sgw_snapshot_free(s);
	return NULL;
}

void
sgw_snapshot_free(struct sgw_snapshot *s)
{
	unsigned int t;

	if (s == NULL)
		return;
	rte_lpm_free(s->lpm4);
	rte_lpm6_free(s->lpm6);
	rte_free(s->term_owner);
	for (t = 0; t < SGW_STAGE__COUNT; t++)
		if (s->sdata[t] != NULL && sgw_stages[t]->snapshot_free != NULL)
			sgw_stages[t]->snapshot_free(s);
	rte_free(s->rule_ctr);
	rte_free(s->rule_base);
	sgw_policy_free(&s->pol);
	rte_free(s);
}
