/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * DPDK telemetry commands for satgw, read with dpdk-telemetry.py:
 *   /satgw/stats    every dataplane counter (sums over workers)
 *   /satgw/ports    per-port counters, satgw's and the device's
 *   /satgw/workers  per-worker counters
 *   /satgw/rules    per-rule counters; parameter: first rule index (pages of 128)
 *   /satgw/config   the running policy's summary and generation
 *   /satgw/reload   re-read the policy file; answers ok or the errors
 * Telemetry callbacks take no user argument, so the control context is kept
 * in a file-local pointer set once at registration.
 *
 * DPDK 22.11 telemetry refuses dict keys outside [A-Za-z0-9_/] (it drops the
 * entry), while policy names may hold '-' and '.': rules are keyed by their
 * index (their first-match order), ports by their name with other characters
 * made '_', and every entry carries the real name in "name".
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_ethdev.h>
#include <rte_mempool.h>
#include <rte_telemetry.h>

#include "control.h"
#include "sgw_timer_wheel.h"
#include "flow_table.h"
#include "sgw_linkem.h"

#define RULES_PAGE 128

_Static_assert(SGW_PR__COUNT <= 64 && SGW_CLASS__COUNT <= 64 && SGW_DROP_MAX <= 64,
	       "name table size");

static struct sgw_ctl *tel_ctl;

static void
tel_key(const char *name, char *key, size_t len)
{
	size_t i;

	for (i = 0; name[i] != '\0' && i + 1 < len; i++)
		key[i] = (isalnum((unsigned char)name[i]) || name[i] == '_') ? name[i] : '_';
	key[i] = '\0';
}

#define add_container sgw_tel_add_container
#define parse_first sgw_tel_parse_first

static struct rte_tel_data *
u64_dict(const char *const *names, const uint64_t *v, uint32_t n, uint32_t first)
{
	struct rte_tel_data *d = rte_tel_data_alloc();
	uint32_t i;

	if (d == NULL)
		return NULL;
	rte_tel_data_start_dict(d);
	for (i = first; i < n; i++)
		rte_tel_data_add_dict_u64(d, names[i], v[i]);
	return d;
}

static int
tel_stats_body(const char *params __rte_unused, struct rte_tel_data *d)
{
	struct sgw_dp *dp = tel_ctl->dp;
	const char *names[64];
	uint64_t rx = 0, tx = 0, rxb = 0, txb = 0;
	struct sgw_tw_stats tws;
	struct sgw_counters c;
	uint32_t i;

	sgw_counters_sum(dp, &c);
	for (i = 0; i < SGW_MAX_PORTS; i++) {
		rx += c.rx_pkts[i];
		tx += c.tx_pkts[i];
		rxb += c.rx_bytes[i];
		txb += c.tx_bytes[i];
	}
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "rx_packets", rx);
	rte_tel_data_add_dict_u64(d, "rx_bytes", rxb);
	rte_tel_data_add_dict_u64(d, "tx_packets", tx);
	rte_tel_data_add_dict_u64(d, "tx_bytes", txb);
	for (i = 0; i < SGW_CLASS__COUNT; i++)
		names[i] = sgw_class_name(i);
	add_container(d, "class_packets", u64_dict(names, c.cls_pkts, SGW_CLASS__COUNT, 0));
	add_container(d, "class_bytes", u64_dict(names, c.cls_bytes, SGW_CLASS__COUNT, 0));
	for (i = 0; i < SGW_PR__COUNT; i++)
		names[i] = sgw_parse_reason_name(i);
	add_container(d, "malformed", u64_dict(names, c.malformed, SGW_PR__COUNT, 1));
	for (i = 0; i < SGW_ACT__COUNT; i++)
		names[i] = sgw_action_name(i);
	add_container(d, "actions", u64_dict(names, c.act, SGW_ACT__COUNT, 0));
	for (i = 0; i < sgw_drop_count(); i++)
		names[i] = sgw_drop_name(i);
	add_container(d, "drops", u64_dict(names, c.drop, sgw_drop_count(), 0));
	rte_tel_data_add_dict_u64(d, "unmatched", c.unmatched);
	rte_tel_data_add_dict_u64(d, "flows_active", sgw_flows_active(dp));
	rte_tel_data_add_dict_u64(d, "flows_created", c.flows_created);
	rte_tel_data_add_dict_u64(d, "flows_expired", c.flows_expired);
	rte_tel_data_add_dict_u64(d, "flows_bypassed_table_full", c.flows_bypassed);
	rte_tel_data_add_dict_u64(d, "handoff_out", c.handoff_out);
	rte_tel_data_add_dict_u64(d, "handoff_in", c.handoff_in);
	rte_tel_data_add_dict_u64(d, "timers_expired", c.timers_expired);
	sgw_timer_stats_sum(tel_ctl->dp, &tws);
	rte_tel_data_add_dict_u64(d, "timers_active", tws.active);
	rte_tel_data_add_dict_u64(d, "timers_start_failed", tws.start_failed);
	rte_tel_data_add_dict_u64(d, "timers_carried", tws.carried);
	rte_tel_data_add_dict_u64(d, "loops", c.loops);
	rte_tel_data_add_dict_u64(d, "idle_sleeps", c.idle_sleeps);
	rte_tel_data_add_dict_u64(d, "mbufs_in_use", rte_mempool_in_use_count(dp->pool));
	rte_tel_data_add_dict_u64(d, "mbufs_total", dp->pool->size);
	rte_tel_data_add_dict_u64(d, "reloads_ok", tel_ctl->reloads_ok);
	rte_tel_data_add_dict_u64(d, "reloads_failed", tel_ctl->reloads_failed);
	rte_tel_data_add_dict_u64(d, "policy_generation", c.snapshot_gen);
	return 0;
}

static int
tel_ports_body(const char *params __rte_unused, struct rte_tel_data *d)
{
	struct sgw_dp *dp = tel_ctl->dp;
	struct sgw_counters c;
	uint16_t p;

	sgw_counters_sum(dp, &c);
	rte_tel_data_start_dict(d);
	for (p = 0; p < dp->n_ports; p++) {
		const struct sgw_port_conf *pc = &dp->snap->pol.ports[p];
		struct rte_tel_data *pd = rte_tel_data_alloc();
		struct rte_eth_stats es;
		char key[SGW_NAME_MAX + 8];
		uint16_t q;

		if (pd == NULL)
			break;
		tel_key(pc->name, key, sizeof(key));
		/* Two names may map to one key ("a-b", "a_b"): keep both. */
		for (q = 0; q < p; q++) {
			char other[SGW_NAME_MAX];

			tel_key(dp->snap->pol.ports[q].name, other, sizeof(other));
			if (strcmp(other, key) == 0) {
				snprintf(key + strlen(key), 8, "_%u", p);
				break;
			}
		}
		memset(&es, 0, sizeof(es));
		rte_eth_stats_get(dp->ports[p].port_id, &es);
		rte_tel_data_start_dict(pd);
		rte_tel_data_add_dict_string(pd, "name", pc->name);
		rte_tel_data_add_dict_int(pd, "port_id", dp->ports[p].port_id);
		rte_tel_data_add_dict_string(pd, "device", pc->device);
		rte_tel_data_add_dict_string(pd, "driver", dp->ports[p].driver);
		rte_tel_data_add_dict_string(pd, "role", sgw_port_role_name(pc->role));
		rte_tel_data_add_dict_string(pd, "peer", pc->peer >= 0 ?
					     dp->snap->pol.ports[pc->peer].name : "");
		rte_tel_data_add_dict_int(pd, "rx_queues", dp->ports[p].n_rxq);
		rte_tel_data_add_dict_int(pd, "tx_queues", dp->ports[p].n_txq);
		rte_tel_data_add_dict_u64(pd, "rx_packets", c.rx_pkts[p]);
		rte_tel_data_add_dict_u64(pd, "rx_bytes", c.rx_bytes[p]);
		rte_tel_data_add_dict_u64(pd, "tx_packets", c.tx_pkts[p]);
		rte_tel_data_add_dict_u64(pd, "tx_bytes", c.tx_bytes[p]);
		rte_tel_data_add_dict_u64(pd, "dev_ipackets", es.ipackets);
		rte_tel_data_add_dict_u64(pd, "dev_opackets", es.opackets);
		rte_tel_data_add_dict_u64(pd, "dev_imissed", es.imissed);
		rte_tel_data_add_dict_u64(pd, "dev_ierrors", es.ierrors);
		rte_tel_data_add_dict_u64(pd, "dev_oerrors", es.oerrors);
		rte_tel_data_add_dict_u64(pd, "dev_rx_nombuf", es.rx_nombuf);
		add_container(d, key, pd);
	}
	return 0;
}

static int
tel_workers_body(const char *params __rte_unused,
	    struct rte_tel_data *d)
{
	struct sgw_dp *dp = tel_ctl->dp;
	uint32_t w;

	rte_tel_data_start_dict(d);
	for (w = 0; w < dp->n_workers; w++) {
		const struct sgw_worker *wk = dp->workers[w];
		struct rte_tel_data *wd = rte_tel_data_alloc();
		uint64_t rx = 0, tx = 0;
		char name[32];
		uint32_t p;

		if (wd == NULL)
			break;
		for (p = 0; p < SGW_MAX_PORTS; p++) {
			rx += wk->c.rx_pkts[p];
			tx += wk->c.tx_pkts[p];
		}
		rte_tel_data_start_dict(wd);
		rte_tel_data_add_dict_int(wd, "lcore", (int)wk->lcore);
		rte_tel_data_add_dict_int(wd, "rx_queues", wk->n_rxq);
		rte_tel_data_add_dict_u64(wd, "rx_packets", rx);
		rte_tel_data_add_dict_u64(wd, "tx_packets", tx);
		rte_tel_data_add_dict_u64(wd, "handoff_out", wk->c.handoff_out);
		rte_tel_data_add_dict_u64(wd, "handoff_in", wk->c.handoff_in);
		rte_tel_data_add_dict_u64(wd, "flows_active", wk->flows->active);
		rte_tel_data_add_dict_u64(wd, "loops", wk->c.loops);
		rte_tel_data_add_dict_u64(wd, "idle_sleeps", wk->c.idle_sleeps);
		rte_tel_data_add_dict_u64(wd, "policy_generation", wk->c.snapshot_gen);
		snprintf(name, sizeof(name), "worker%u", w);
		add_container(d, name, wd);
	}
	return 0;
}

static int
tel_rules_body(const char *params, struct rte_tel_data *d)
{
	const struct sgw_snapshot *s;
	uint32_t first = 0, r;

	if (parse_first(params, &first) != 0)
		return -1;
	rte_tel_data_start_dict(d);
	s = tel_ctl->dp->snap;
	rte_tel_data_add_dict_u64(d, "total", s->pol.n_rules);
	rte_tel_data_add_dict_u64(d, "first", first);
	for (r = first; r < s->pol.n_rules && r < first + RULES_PAGE; r++) {
		struct rte_tel_data *rd = rte_tel_data_alloc();
		uint64_t pk, by;
		char key[16];

		if (rd == NULL)
			break;
		sgw_rule_totals(s, r, &pk, &by);
		rte_tel_data_start_dict(rd);
		rte_tel_data_add_dict_string(rd, "name", s->pol.rules[r].name);
		rte_tel_data_add_dict_int(rd, "index", (int)r);
		rte_tel_data_add_dict_string(rd, "action", sgw_action_name(s->pol.rules[r].action));
		rte_tel_data_add_dict_u64(rd, "packets", pk);
		rte_tel_data_add_dict_u64(rd, "bytes", by);
		snprintf(key, sizeof(key), "%u", r);
		add_container(d, key, rd);
	}
	if (r < s->pol.n_rules)
		rte_tel_data_add_dict_u64(d, "next", r);
	return 0;
}

static int
tel_config_body(const char *params __rte_unused, struct rte_tel_data *d)
{
	const struct sgw_policy *p;

	rte_tel_data_start_dict(d);
	p = &tel_ctl->dp->snap->pol;
	rte_tel_data_add_dict_string(d, "file", tel_ctl->config_path);
	rte_tel_data_add_dict_u64(d, "generation", tel_ctl->dp->snap->gen);
	rte_tel_data_add_dict_string(d, "role", sgw_role_name(p->role));
	rte_tel_data_add_dict_string(d, "mode", sgw_dp_mode_name(tel_ctl->dp));
	rte_tel_data_add_dict_u64(d, "workers", tel_ctl->dp->n_workers);
	rte_tel_data_add_dict_u64(d, "ports", p->n_ports);
	rte_tel_data_add_dict_u64(d, "next_hops", p->n_next_hops);
	rte_tel_data_add_dict_u64(d, "terminals", p->n_terminals);
	rte_tel_data_add_dict_u64(d, "rules", p->n_rules);
	rte_tel_data_add_dict_string(d, "default_action", sgw_action_name(p->default_action));
	rte_tel_data_add_dict_string(d, "malformed",
				     p->malformed == SGW_MALFORMED_DROP ? "drop" : "forward");
	rte_tel_data_add_dict_u64(d, "flows_per_core", p->limits.flows_per_core);
	rte_tel_data_add_dict_u64(d, "mbufs", p->limits.mbufs);
	rte_tel_data_add_dict_u64(d, "ring_size", p->limits.ring_size);
	rte_tel_data_add_dict_u64(d, "flow_idle_ms", p->limits.flow_idle_ms);
	rte_tel_data_add_dict_u64(d, "idle_backoff_us", p->workers.idle_backoff_us);
	rte_tel_data_add_dict_u64(d, "burst", p->workers.burst);
	rte_tel_data_add_dict_u64(d, "tx_drain_us", p->workers.tx_drain_us);
	rte_tel_data_add_dict_u64(d, "timer_tick_us", p->workers.timer_tick_us);
	rte_tel_data_add_dict_u64(d, "lift_proto", p->lift_proto);
	rte_tel_data_add_dict_u64(d, "xcp_proto", p->xcp_proto);
	rte_tel_data_add_dict_string(d, "last_reload_error", tel_ctl->last_error);
	rte_tel_data_add_dict_u64(d, "last_reload_error_unix_s", tel_ctl->last_error_unix_s);
	return 0;
}

static int
tel_reload(const char *cmd __rte_unused, const char *params __rte_unused, struct rte_tel_data *d)
{
	struct sgw_cfg_errors errs;
	struct rte_tel_data *ed;
	char msg[512], line[600];
	uint32_t i;
	int rc;

	rc = sgw_ctl_reload(tel_ctl, &errs, msg, sizeof(msg));
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_int(d, "ok", rc == 0);
	rte_tel_data_add_dict_string(d, "message", msg);
	if (rc == 0 || errs.n == 0)
		return 0;
	ed = rte_tel_data_alloc();
	if (ed == NULL)
		return 0;
	rte_tel_data_start_array(ed, RTE_TEL_STRING_VAL);
	/*
	 * Telemetry strings hold 127 characters: the file is named once in
	 * "message", each error is LINE:COLUMN: message (the log has them whole).
	 */
	for (i = 0; i < errs.n && i < 32; i++) {
		snprintf(line, sizeof(line), "%u:%u: %s", errs.e[i].line, errs.e[i].col,
			 errs.e[i].msg);
		if (strlen(line) > RTE_TEL_MAX_STRING_LEN - 1)
			memcpy(line + RTE_TEL_MAX_STRING_LEN - 4, "...", 4);
		rte_tel_data_add_array_string(ed, line);
	}
	for (i = 0; i < errs.n; i++) {
		sgw_cfg_error_format(&errs.e[i], line, sizeof(line));
		SGW_CLOG(ERR, "reload: %s", line);
	}
	add_container(d, "errors", ed);
	return 0;
}

/* role emulator: each direction's link counters, as worker 0 last published them. */
static int
tel_link_body(const char *params __rte_unused, struct rte_tel_data *d)
{
	struct sgw_dp *dp = tel_ctl->dp;
	int k;

	rte_tel_data_start_dict(d);
	if (!dp->emulator)
		return 0;
	for (k = 0; k < 2; k++) {
		struct rte_tel_data *ld = rte_tel_data_alloc();
		struct sgw_linkem_stats ls;

		if (ld == NULL)
			break;
		/* Published by worker 0 every 10 ms (reading the model would advance it). */
		sgw_emu_read_stats(dp, k, &ls);
		rte_tel_data_start_dict(ld);
		rte_tel_data_add_dict_u64(ld, "offered_packets", ls.offered_pkts);
		rte_tel_data_add_dict_u64(ld, "offered_bytes", ls.offered_bytes);
		rte_tel_data_add_dict_u64(ld, "delivered_packets", ls.delivered_pkts);
		rte_tel_data_add_dict_u64(ld, "delivered_bytes", ls.delivered_bytes);
		rte_tel_data_add_dict_u64(ld, "dropped_queue", ls.drop_pkts[SGW_LE_DROP_QUEUE]);
		rte_tel_data_add_dict_u64(ld, "dropped_loss", ls.drop_pkts[SGW_LE_DROP_LOSS]);
		rte_tel_data_add_dict_u64(ld, "dropped_outage", ls.drop_pkts[SGW_LE_DROP_OUTAGE]);
		rte_tel_data_add_dict_u64(ld, "queue_packets", ls.queue_pkts);
		rte_tel_data_add_dict_u64(ld, "queue_bytes", ls.queue_bytes);
		rte_tel_data_add_dict_u64(ld, "queue_packets_max", ls.queue_pkts_max);
		rte_tel_data_add_dict_u64(ld, "queue_bytes_max", ls.queue_bytes_max);
		rte_tel_data_add_dict_u64(ld, "held_now", sgw_ring_count(&dp->emu[k].r));
		rte_tel_data_add_dict_u64(ld, "good_ns", ls.state_ns[0]);
		rte_tel_data_add_dict_u64(ld, "bad_ns", ls.state_ns[1]);
		rte_tel_data_add_dict_u64(ld, "state_changes", ls.state_changes);
		rte_tel_data_add_dict_u64(ld, "loss_bursts", ls.loss_bursts);
		add_container(d, sgw_emu_dir_name(k), ld);
	}
	return 0;
}

/*
 * Every read runs under the control lock and not at all once shutdown has
 * begun: the telemetry thread outlives the dataplane (22.11 cannot
 * unregister commands), so a late request must not touch freed state.
 */
#define TEL_LOCKED(name)							\
static int									\
tel_##name(const char *cmd __rte_unused, const char *params, struct rte_tel_data *d) \
{										\
	int rc = -1;								\
										\
	pthread_mutex_lock(&tel_ctl->lock);					\
	if (!tel_ctl->closing)							\
		rc = tel_##name##_body(params, d);				\
	pthread_mutex_unlock(&tel_ctl->lock);					\
	return rc;								\
}

TEL_LOCKED(stats)
TEL_LOCKED(ports)
TEL_LOCKED(workers)
TEL_LOCKED(rules)
TEL_LOCKED(config)
TEL_LOCKED(link)

/* A stage's own command (its tel_cmd): the stage answers, or an empty dict while it is off. */
static int
tel_stage(const char *cmd, const char *params, struct rte_tel_data *d)
{
	unsigned int id;
	int rc = -1;

	pthread_mutex_lock(&tel_ctl->lock);
	for (id = 0; id < SGW_STAGE__COUNT && !tel_ctl->closing; id++) {
		const struct sgw_stage_ops *ops = sgw_stages[id];

		if (ops->tel_cmd == NULL || strcmp(ops->tel_cmd, cmd) != 0)
			continue;
		if (tel_ctl->dp->stage_on[id]) {
			rc = ops->telemetry(tel_ctl->dp, params, d);
		} else {
			rte_tel_data_start_dict(d);
			rc = 0;
		}
		break;
	}
	pthread_mutex_unlock(&tel_ctl->lock);
	return rc;
}

int
sgw_telemetry_register(struct sgw_ctl *ctl)
{
	unsigned int id;

	tel_ctl = ctl;
	if (rte_telemetry_register_cmd("/satgw/stats", tel_stats,
				       "satgw dataplane counters, summed over workers") != 0 ||
	    rte_telemetry_register_cmd("/satgw/ports", tel_ports,
				       "satgw per-port counters. No parameters") != 0 ||
	    rte_telemetry_register_cmd("/satgw/workers", tel_workers,
				       "satgw per-worker counters. No parameters") != 0 ||
	    rte_telemetry_register_cmd("/satgw/rules", tel_rules,
				       "satgw rule counters. Parameter: first rule index") != 0 ||
	    rte_telemetry_register_cmd("/satgw/config", tel_config,
				       "satgw running policy summary. No parameters") != 0 ||
	    rte_telemetry_register_cmd("/satgw/link", tel_link,
				       "satgw emulator: per-direction link counters") != 0 ||
	    rte_telemetry_register_cmd("/satgw/reload", tel_reload,
				       "satgw: re-read and apply the policy file") != 0) {
		SGW_CLOG(WARNING, "cannot register telemetry commands");
		return -1;
	}
	for (id = 0; id < SGW_STAGE__COUNT; id++)
		if (sgw_stages[id]->tel_cmd != NULL &&
		    rte_telemetry_register_cmd(sgw_stages[id]->tel_cmd, tel_stage,
					       sgw_stages[id]->tel_help) != 0) {
			SGW_CLOG(WARNING, "cannot register telemetry command %s",
				 sgw_stages[id]->tel_cmd);
			return -1;
		}
	return 0;
}
