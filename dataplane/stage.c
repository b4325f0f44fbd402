/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The stage table (see stage.h): one row per mechanism, in the order their
 * init runs and their classes are claimed (a later row that is on takes a
 * class from an earlier one: satlink takes its frames from the stateless
 * stage, which carries them when satlink is off).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_lcore.h>
#include <rte_malloc.h>

#include "sgw_dp.h"
#include "stage.h"

extern const struct sgw_stage_ops sgw_stage_flow;
extern const struct sgw_stage_ops sgw_stage_stateless;
extern const struct sgw_stage_ops sgw_stage_malformed;
extern const struct sgw_stage_ops sgw_stage_satlink;
extern const struct sgw_stage_ops sgw_stage_lift;
extern const struct sgw_stage_ops sgw_stage_xcp;
extern const struct sgw_stage_ops sgw_stage_split;

const struct sgw_stage_ops *const sgw_stages[SGW_STAGE__COUNT] = {
	[SGW_STAGE_FLOW] = &sgw_stage_flow,
	[SGW_STAGE_STATELESS] = &sgw_stage_stateless,
	[SGW_STAGE_MALFORMED] = &sgw_stage_malformed,
	[SGW_STAGE_SATLINK] = &sgw_stage_satlink,
	[SGW_STAGE_LIFT] = &sgw_stage_lift,
	[SGW_STAGE_XCP] = &sgw_stage_xcp,
	[SGW_STAGE_SPLIT] = &sgw_stage_split,
};

const uint8_t sgw_action_stage[SGW_ACT__COUNT] = {
	[SGW_ACT_SPLIT] = SGW_STAGE_SPLIT,
};

void
sgw_stage_own_port(struct sgw_dp *dp, int16_t pidx, enum sgw_stage_id id)
{
	if (pidx >= 0 && pidx < SGW_MAX_PORTS)
		dp->stage_of_port[pidx] = (int8_t)id;
}

void
sgw_stage_reinject_room(struct sgw_dp *dp, uint32_t n)
{
	if (n > dp->reinj_cap)
		dp->reinj_cap = n;
}

unsigned int
sgw_stage_drop_base(enum sgw_stage_id id)
{
	unsigned int base = SGW_DROP__CORE, k;

	for (k = 0; k < (unsigned int)id && k < SGW_STAGE__COUNT; k++)
		base += sgw_stages[k]->n_drops;
	return base;
}

unsigned int
sgw_drop_count(void)
{
	return sgw_stage_drop_base(SGW_STAGE__COUNT);
}

int
sgw_stages_init(struct sgw_dp *dp, const struct sgw_policy *pol)
{
	unsigned int id, c;
	uint32_t i;

	if (sgw_drop_count() > SGW_DROP_MAX) {
		SGW_LOG(ERR, "the stages' drop reasons (%u) exceed SGW_DROP_MAX (%u)",
			sgw_drop_count(), SGW_DROP_MAX);
		return -1;
	}
	memset(dp->stage_of_port, -1, sizeof(dp->stage_of_port));
	dp->reinj_cap = SGW_REINJECT_MIN;
	for (c = 0; c < SGW_CLASS__COUNT; c++)
		dp->stage_of_class[c] = SGW_STAGE_STATELESS;
	for (id = 0; id < SGW_STAGE__COUNT; id++) {
		const struct sgw_stage_ops *ops = sgw_stages[id];
		int on = ops->init != NULL ? ops->init(dp, pol) : 1;

		if (on < 0) {
			SGW_LOG(ERR, "stage %s: setup failed", ops->name);
			return -1;
		}
		dp->stage_on[id] = on > 0;
		if (on == 0)
			continue;
		for (c = 0; c < SGW_CLASS__COUNT; c++)
			if (ops->classes & SGW_CLASS_BIT(c))
				dp->stage_of_class[c] = (uint8_t)id;
	}
	/* The re-inject queues, sized for the stages that are on, on each worker's socket. */
	for (i = 0; i < dp->n_workers; i++) {
		struct sgw_worker *w = dp->workers[i];

		w->reinj = rte_zmalloc_socket("sgw_reinject", sizeof(*w->reinj) * dp->reinj_cap,
					      RTE_CACHE_LINE_SIZE, (int)rte_lcore_to_socket_id(w->lcore));
		if (w->reinj == NULL) {
			SGW_LOG(ERR, "no memory for worker %u's re-inject queue (%u)", i,
				dp->reinj_cap);
			return -1;
		}
		w->reinj_cap = dp->reinj_cap;
		w->reinj_n = 0;
	}
	return 0;
}

void
sgw_stages_drain(struct sgw_dp *dp)
{
	unsigned int id;
	uint32_t i;

	for (id = 0; id < SGW_STAGE__COUNT; id++)
		if (dp->stage_on[id] && sgw_stages[id]->drain != NULL)
			sgw_stages[id]->drain(dp);
	/* The workers drained their re-inject queues each loop: normally empty. */
	for (i = 0; i < dp->n_workers; i++) {
		struct sgw_worker *w = dp->workers[i];

		for (; w != NULL && w->reinj_n > 0; w->reinj_n--) {
			w->c.drop[SGW_DROP_SHUTDOWN]++;
			rte_pktmbuf_free(w->reinj[w->reinj_n - 1]);
		}
	}
}

void
sgw_stages_fini(struct sgw_dp *dp)
{
	unsigned int id;

	uint32_t i;

	/* Also for a stage whose init failed half way: fini copes with partial state. */
	for (id = SGW_STAGE__COUNT; id-- > 0;)
		if (sgw_stages[id]->fini != NULL)
			sgw_stages[id]->fini(dp);
	memset(dp->stage_on, 0, sizeof(dp->stage_on));
	for (i = 0; i < dp->n_workers; i++) {
		if (dp->workers[i] == NULL)
			continue;
		rte_free(dp->workers[i]->reinj);
		dp->workers[i]->reinj = NULL;
		dp->workers[i]->reinj_cap = 0;
	}
}

void
sgw_stages_write_json(const struct sgw_dp *dp, FILE *f)
{
	unsigned int id;

	for (id = 0; id < SGW_STAGE__COUNT; id++)
		if (dp->stage_on[id] && sgw_stages[id]->write_json != NULL)
			sgw_stages[id]->write_json(dp, f);
}

void
sgw_stages_print_summary(const struct sgw_dp *dp, FILE *f)
{
	unsigned int id;

	for (id = 0; id < SGW_STAGE__COUNT; id++)
		if (dp->stage_on[id] && sgw_stages[id]->print_summary != NULL)
			sgw_stages[id]->print_summary(dp, f);
}

void
sgw_tel_add_container(struct rte_tel_data *d, const char *key, struct rte_tel_data *c)
{
	static bool logged;

	if (c == NULL)
		return;
	if (rte_tel_data_add_dict_container(d, key, c, 0) != 0) {
		rte_tel_data_free(c);
		if (!logged) {
			logged = true;
			SGW_LOG(WARNING, "telemetry refused entry '%s' (answer too large?)", key);
		}
	}
}

int
sgw_tel_parse_first(const char *params, uint32_t *first)
{
	unsigned long v;
	char *end;

	*first = 0;
	if (params == NULL || params[0] == '\0')
		return 0;
	errno = 0;
	v = strtoul(params, &end, 10);
	if (*end != '\0' || errno != 0 || v > UINT32_MAX)
		return -1;
	*first = (uint32_t)v;
	return 0;
}
