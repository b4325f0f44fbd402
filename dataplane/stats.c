/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Counters: sum the per-worker counters and write them as JSON (at exit,
 * --stats-json) or as a readable summary. Telemetry (control/telemetry.c)
 * reads the same sums.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <rte_ethdev.h>
#include <rte_mempool.h>

#include "flow_table.h"
#include "sgw_dp.h"
#include "stage.h"
#include "sgw_timer_wheel.h"
#include "sgw_linkem.h"

static const char *const drop_names[SGW_DROP__CORE] = {
	[SGW_DROP_MALFORMED] = "malformed",
	[SGW_DROP_RULE] = "rule",
	[SGW_DROP_DEFAULT] = "default_action",
	[SGW_DROP_NO_ROUTE] = "no_route",
	[SGW_DROP_HANDOFF_FULL] = "handoff_ring_full",
	[SGW_DROP_TX_FULL] = "tx_full",
	[SGW_DROP_SHUTDOWN] = "shutdown",
	[SGW_DROP_REINJECT_FULL] = "reinject_full",
};

const char *
sgw_dp_mode_name(const struct sgw_dp *dp)
{
	return dp->bare_forward ? "bare-forward" : dp->emulator ? "emulator" : "pipeline";
}

const char *
sgw_drop_name(unsigned int d)
{
	unsigned int id, base;

	if (d < SGW_DROP__CORE)
		return drop_names[d];
	for (id = 0; id < SGW_STAGE__COUNT; id++) {
		base = sgw_stage_drop_base(id);
		if (d - base < sgw_stages[id]->n_drops)
			return sgw_stages[id]->drop_names[d - base];
	}
	return "unknown";
}

void
sgw_counters_sum(const struct sgw_dp *dp, struct sgw_counters *sum)
{
	const uint64_t *src;
	uint64_t *dst;
	size_t i, n = sizeof(*sum) / sizeof(uint64_t);
	uint32_t w;

	memset(sum, 0, sizeof(*sum));
	dst = (uint64_t *)sum;
	for (w = 0; w < dp->n_workers; w++) {
		if (dp->workers[w] == NULL)
			continue;
		src = (const uint64_t *)&dp->workers[w]->c;
		for (i = 0; i < n; i++)
			dst[i] += __atomic_load_n(&src[i], __ATOMIC_RELAXED);
	}
	/* A generation is not a sum: report the oldest any worker runs. */
	sum->snapshot_gen = UINT64_MAX;
	for (w = 0; w < dp->n_workers; w++)
		if (dp->workers[w] != NULL && dp->workers[w]->c.snapshot_gen < sum->snapshot_gen)
			sum->snapshot_gen = dp->workers[w]->c.snapshot_gen;
	if (sum->snapshot_gen == UINT64_MAX)
		sum->snapshot_gen = 0;
}

void
sgw_rule_totals(const struct sgw_snapshot *s, uint32_t r, uint64_t *pkts, uint64_t *bytes)
{
	uint32_t w;

	*pkts = s->rule_base[r].pkts;
	*bytes = s->rule_base[r].bytes;
	for (w = 0; w < s->n_workers; w++) {
		*pkts += __atomic_load_n(&s->rule_ctr[(size_t)w * s->pol.n_rules + r].pkts,
					 __ATOMIC_RELAXED);
		*bytes += __atomic_load_n(&s->rule_ctr[(size_t)w * s->pol.n_rules + r].bytes,
					  __ATOMIC_RELAXED);
	}
}

/* Every row's terms, named, 0 for a stage that is off (the report's keys do not move). */
static void
account_stages(const struct sgw_dp *dp, struct sgw_account *a)
{
	unsigned int id, k;

	for (id = 0; id < SGW_STAGE__COUNT; id++) {
		const struct sgw_stage_ops *ops = sgw_stages[id];
		uint64_t orig[SGW_ACCT_TERMS_MAX] = {0}, cons[SGW_ACCT_TERMS_MAX] = {0};

		if (ops->account != NULL && dp->stage_on[id] &&
		    ops->n_orig <= SGW_ACCT_TERMS_MAX && ops->n_cons <= SGW_ACCT_TERMS_MAX)
			ops->account(dp, orig, cons);
		for (k = 0; k < ops->n_orig && a->n_orig < SGW_ACCT_TERMS_MAX; k++) {
			a->orig[a->n_orig++] = (struct sgw_acct_term){ops->orig_names[k], orig[k]};
			a->originated += orig[k];
		}
		for (k = 0; k < ops->n_cons && a->n_cons < SGW_ACCT_TERMS_MAX; k++) {
			a->cons[a->n_cons++] = (struct sgw_acct_term){ops->cons_names[k], cons[k]};
			a->consumed += cons[k];
		}
		if (ops->held != NULL && a->n_held < SGW_ACCT_TERMS_MAX) {
			uint64_t h = dp->stage_on[id] ? ops->held(dp) : 0;

			a->held[a->n_held++] = (struct sgw_acct_term){ops->name, h};
			a->held_stages += h;
		}
	}
}

int
sgw_dp_account(const struct sgw_dp *dp, struct sgw_account *a)
{
	struct sgw_counters c;
	uint32_t i, w;
	uint16_t p;

	memset(a, 0, sizeof(*a));
	sgw_counters_sum(dp, &c);
	for (p = 0; p < dp->n_ports; p++) {
		a->rx += c.rx_pkts[p];
		a->tx += c.tx_pkts[p];
	}
	for (i = 0; i < SGW_DROP_MAX; i++)
		a->drops += c.drop[i];
	account_stages(dp, a);
	for (w = 0; w < dp->n_workers; w++) {
		if (dp->workers[w] != NULL) {
			for (p = 0; p < dp->n_ports; p++)
				a->held_tx_buffers += dp->workers[w]->tx[p].n;
			a->held_tx_buffers += dp->workers[w]->reinj_n;  /* handed back, not run */
		}
		if (dp->inring[w] != NULL)
			a->held_rings += rte_ring_count(dp->inring[w]);
	}
	for (p = 0; p < dp->n_ports; p++)
		if (dp->txring[p] != NULL)
			a->held_rings += rte_ring_count(dp->txring[p]);
	if (dp->emulator) {
		int d;

		for (d = 0; d < 2; d++) {
			struct sgw_linkem_stats ls;
			uint64_t now = dp->workers[0] != NULL ? dp->workers[0]->now_ns : 0;

			if (dp->emu[d].lm == NULL)
				continue;
			sgw_linkem_get_stats(dp->emu[d].lm, now, &ls);
			a->link_drops += ls.drop_pkts[SGW_LE_DROP_QUEUE] +
					 ls.drop_pkts[SGW_LE_DROP_LOSS] +
					 ls.drop_pkts[SGW_LE_DROP_OUTAGE];
			a->held_link += sgw_ring_count(&dp->emu[d].r);
		}
	}
	a->in = a->rx + a->originated;
	a->out = a->tx + a->drops + a->link_drops + a->consumed + a->held_tx_buffers +
		 a->held_rings + a->held_link + a->held_stages;
	return a->in == a->out ? 0 : -1;
}

uint32_t
sgw_flows_active(const struct sgw_dp *dp)
{
	uint32_t w, n = 0;

	for (w = 0; w < dp->n_workers; w++)
		if (dp->workers[w] != NULL && dp->workers[w]->flows != NULL)
			n += __atomic_load_n(&dp->workers[w]->flows->active, __ATOMIC_RELAXED);
	return n;
}

/* Names are validated by the loader, devices are not: escape every string. */
static void
json_str(FILE *f, const char *key, const char *v)
{
	fprintf(f, "\"%s\": \"", key);
	for (; *v != '\0'; v++) {
		unsigned char ch = (unsigned char)*v;

		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch < 0x20)
			fprintf(f, "\\u%04x", ch);
		else
			fputc(ch, f);
	}
	fputc('"', f);
}

/*
 * The workers' timer wheels summed: start_failed (a wheel full, so a timer
 * was refused) and carried (expiries deferred by the per-loop bound) say
 * when limits.timers_per_core or the loop is too small. Read from another
 * thread like the other counters: one writer, aligned 64-bit words.
 */
void
sgw_timer_stats_sum(const struct sgw_dp *dp, struct sgw_tw_stats *sum)
{
	uint32_t i;

	memset(sum, 0, sizeof(*sum));
	for (i = 0; i < dp->n_workers; i++) {
		struct sgw_tw_stats st;

		if (dp->workers[i] == NULL || dp->workers[i]->tw == NULL)
			continue;
		sgw_tw_get_stats(dp->workers[i]->tw, &st);
		sum->active += st.active;
		sum->capacity += st.capacity;
		sum->started += st.started;
		sum->stopped += st.stopped;
		sum->expired += st.expired;
		sum->start_failed += st.start_failed;
		sum->carried += st.carried;
	}
}

static void
write_terms(FILE *f, const struct sgw_acct_term *t, uint16_t n)
{
	uint16_t k;

	for (k = 0; k < n; k++)
		fprintf(f, "%s\"%s\": %" PRIu64, k ? ", " : "", t[k].name, t[k].v);
}

int
sgw_stats_write_json(const struct sgw_dp *dp, FILE *f, double elapsed_s)
{
	struct sgw_tw_stats tws;
	const struct sgw_snapshot *s = dp->snap;
	struct sgw_account a;
	struct sgw_counters c;
	uint32_t i, r;
	uint16_t p;

	sgw_counters_sum(dp, &c);
	fprintf(f, "{\n  \"version\": \"%s\",\n  \"mode\": \"%s\",\n  \"elapsed_s\": %.3f,\n",
		SGW_VERSION, sgw_dp_mode_name(dp), elapsed_s);
	fprintf(f, "  \"workers\": %u,\n  \"policy_generation\": %" PRIu64 ",\n", dp->n_workers,
		s != NULL ? s->gen : 0);
	fprintf(f, "  \"ports\": [");
	for (p = 0; p < dp->n_ports; p++) {
		struct rte_eth_stats es;

		es = dp->ports[p].final;
		if (dp->ports[p].opened)
			rte_eth_stats_get(dp->ports[p].port_id, &es);
		fprintf(f, "%s\n    {", p ? "," : "");
		json_str(f, "name", s ? s->pol.ports[p].name : "?");
		fprintf(f, ", ");
		json_str(f, "device", s ? s->pol.ports[p].device : "?");
		fprintf(f, ", \"port_id\": %u, "
			"\"rx_packets\": %" PRIu64 ", \"rx_bytes\": %" PRIu64 ", "
			"\"tx_packets\": %" PRIu64 ", \"tx_bytes\": %" PRIu64 ", "
			"\"dev_ipackets\": %" PRIu64 ", \"dev_opackets\": %" PRIu64 ", "
			"\"dev_imissed\": %" PRIu64 ", \"dev_ierrors\": %" PRIu64 ", "
			"\"dev_oerrors\": %" PRIu64 "}",
			dp->ports[p].port_id,
			c.rx_pkts[p], c.rx_bytes[p], c.tx_pkts[p], c.tx_bytes[p], es.ipackets,
			es.opackets, es.imissed, es.ierrors, es.oerrors);
	}
	fprintf(f, "\n  ],\n  \"classes\": {");
	for (i = 0; i < SGW_CLASS__COUNT; i++)
		fprintf(f, "%s\n    \"%s\": {\"packets\": %" PRIu64 ", \"bytes\": %" PRIu64 "}",
			i ? "," : "", sgw_class_name(i), c.cls_pkts[i], c.cls_bytes[i]);
	fprintf(f, "\n  },\n  \"malformed\": {");
	for (i = 1; i < SGW_PR__COUNT; i++)
		fprintf(f, "%s\"%s\": %" PRIu64, i > 1 ? ", " : "", sgw_parse_reason_name(i),
			c.malformed[i]);
	fprintf(f, "},\n  \"actions\": {");
	for (i = 0; i < SGW_ACT__COUNT; i++)
		fprintf(f, "%s\"%s\": %" PRIu64, i ? ", " : "", sgw_action_name(i), c.act[i]);
	fprintf(f, "},\n  \"unmatched\": %" PRIu64 ",\n  \"drops\": {", c.unmatched);
	for (i = 0; i < sgw_drop_count(); i++)
		fprintf(f, "%s\"%s\": %" PRIu64, i ? ", " : "", sgw_drop_name(i), c.drop[i]);
	fprintf(f, "},\n  \"rules\": [");
	for (r = 0; s != NULL && r < s->pol.n_rules; r++) {
		uint64_t pk, by;

		sgw_rule_totals(s, r, &pk, &by);
		fprintf(f, "%s\n    {", r ? "," : "");
		json_str(f, "name", s->pol.rules[r].name);
		fprintf(f, ", \"action\": \"%s\", \"packets\": %" PRIu64 ", \"bytes\": %" PRIu64 "}",
			sgw_action_name(s->pol.rules[r].action), pk, by);
	}
	fprintf(f, "\n  ],\n  \"flows\": {\"active\": %u, \"created\": %" PRIu64
		", \"expired\": %" PRIu64 ", \"bypassed_table_full\": %" PRIu64
		", \"hits\": %" PRIu64 "},\n", sgw_flows_active(dp), c.flows_created,
		c.flows_expired, c.flows_bypassed, c.flow_hits);
	fprintf(f, "  \"handoff\": {\"out\": %" PRIu64 ", \"in\": %" PRIu64 "},\n",
		c.handoff_out, c.handoff_in);
	fprintf(f, "  \"loops\": %" PRIu64 ",\n  \"idle_sleeps\": %" PRIu64
		",\n  \"timers_expired\": %" PRIu64 ",\n", c.loops, c.idle_sleeps,
		c.timers_expired);
	sgw_timer_stats_sum(dp, &tws);
	fprintf(f, "  \"timers\": {\"active\": %u, \"capacity\": %u, \"started\": %" PRIu64
		", \"stopped\": %" PRIu64 ", \"expired\": %" PRIu64 ", \"start_failed\": %" PRIu64
		", \"carried\": %" PRIu64 "},\n", tws.active, tws.capacity, tws.started,
		tws.stopped, tws.expired, tws.start_failed, tws.carried);
	if (dp->emulator) {
		int d;

		fprintf(f, "  \"link\": {");
		for (d = 0; d < 2; d++) {
			struct sgw_linkem_stats ls;
			uint64_t now = dp->workers[0] != NULL ? dp->workers[0]->now_ns : 0;

			sgw_linkem_get_stats(dp->emu[d].lm, now, &ls);
			fprintf(f, "%s\n    \"%s\": {\"offered_packets\": %" PRIu64
				", \"offered_bytes\": %" PRIu64 ", \"delivered_packets\": %" PRIu64
				", \"delivered_bytes\": %" PRIu64 ", \"dropped_queue\": %" PRIu64
				", \"dropped_loss\": %" PRIu64 ", \"dropped_outage\": %" PRIu64
				", \"queue_packets_max\": %u, \"queue_bytes_max\": %u"
				", \"held_now\": %u, \"good_ns\": %" PRIu64 ", \"bad_ns\": %" PRIu64
				", \"state_changes\": %" PRIu64 ", \"loss_bursts\": %" PRIu64 "}",
				d ? "," : "", sgw_emu_dir_name(d), ls.offered_pkts, ls.offered_bytes,
				ls.delivered_pkts, ls.delivered_bytes, ls.drop_pkts[SGW_LE_DROP_QUEUE],
				ls.drop_pkts[SGW_LE_DROP_LOSS], ls.drop_pkts[SGW_LE_DROP_OUTAGE],
				ls.queue_pkts_max, ls.queue_bytes_max, sgw_ring_count(&dp->emu[d].r), ls.state_ns[0],
				ls.state_ns[1], ls.state_changes, ls.loss_bursts);
		}
		fprintf(f, "\n  },\n");
	}
	sgw_stages_write_json(dp, f);
	sgw_dp_account(dp, &a);
	fprintf(f, "  \"accounting\": {\"rx\": %" PRIu64 ", \"originated\": {", a.rx);
	write_terms(f, a.orig, a.n_orig);
	fprintf(f, "},\n    \"tx\": %" PRIu64 ", \"dropped\": {\"drops\": %" PRIu64
		", \"link\": %" PRIu64 "},\n    \"consumed\": {", a.tx, a.drops, a.link_drops);
	write_terms(f, a.cons, a.n_cons);
	fprintf(f, "},\n    \"held\": {\"tx_buffers\": %" PRIu64 ", \"rings\": %" PRIu64
		", \"link\": %" PRIu64, a.held_tx_buffers, a.held_rings, a.held_link);
	if (a.n_held > 0)
		fprintf(f, ", ");
	write_terms(f, a.held, a.n_held);
	fprintf(f, "},\n    \"in\": %" PRIu64 ", \"out\": %" PRIu64 "},\n", a.in, a.out);
	fprintf(f, "  \"mempool\": {\"size\": %u, \"in_use\": %u}\n}\n",
		dp->pool ? dp->pool->size : 0, dp->pool ? rte_mempool_in_use_count(dp->pool) : 0);
	return ferror(f) ? -1 : 0;
}

static void
human(double v, char *buf, size_t len, const char *unit)
{
	const char *pfx[] = {"", "k", "M", "G", "T"};
	unsigned int i = 0;

	while (v >= 1000.0 && i < 4) {
		v /= 1000.0;
		i++;
	}
	snprintf(buf, len, "%.2f %s%s", v, pfx[i], unit);
}

void
sgw_stats_print_summary(const struct sgw_dp *dp, FILE *f, double elapsed_s)
{
	const struct sgw_snapshot *s = dp->snap;
	struct sgw_account acc;
	struct sgw_counters c;
	char a[32], b[32];
	uint32_t i;
	uint16_t p;

	sgw_counters_sum(dp, &c);
	fprintf(f, "satgw %s: %s, %u worker(s), %.1f s\n", SGW_VERSION,
		sgw_dp_mode_name(dp), dp->n_workers, elapsed_s);
	fprintf(f, "  %-10s %14s %14s %14s %14s\n", "port", "rx pkts", "rx bytes", "tx pkts",
		"tx bytes");
	for (p = 0; p < dp->n_ports; p++)
		fprintf(f, "  %-10s %14" PRIu64 " %14" PRIu64 " %14" PRIu64 " %14" PRIu64 "\n",
			s ? s->pol.ports[p].name : "?", c.rx_pkts[p], c.rx_bytes[p], c.tx_pkts[p],
			c.tx_bytes[p]);
	fprintf(f, "  %-10s %14s %14s\n", "class", "packets", "bytes");
	for (i = 0; i < SGW_CLASS__COUNT; i++)
		if (c.cls_pkts[i] != 0)
			fprintf(f, "  %-10s %14" PRIu64 " %14" PRIu64 "\n", sgw_class_name(i),
				c.cls_pkts[i], c.cls_bytes[i]);
	for (i = 1; i < SGW_PR__COUNT; i++)
		if (c.malformed[i] != 0)
			fprintf(f, "  malformed %-16s %" PRIu64 "\n", sgw_parse_reason_name(i),
				c.malformed[i]);
	for (i = 0; i < sgw_drop_count(); i++)
		if (c.drop[i] != 0)
			fprintf(f, "  dropped   %-16s %" PRIu64 "\n", sgw_drop_name(i), c.drop[i]);
	if (dp->emulator) {
		int d;

		for (d = 0; d < 2; d++) {
			struct sgw_linkem_stats ls;

			sgw_linkem_get_stats(dp->emu[d].lm, dp->workers[0]->now_ns, &ls);
			fprintf(f, "  link %-7s offered %" PRIu64 ", delivered %" PRIu64 ", lost %"
				PRIu64 " (channel) + %" PRIu64 " (outage), queue drops %" PRIu64 "\n",
				sgw_emu_dir_name(d), ls.offered_pkts, ls.delivered_pkts,
				ls.drop_pkts[SGW_LE_DROP_LOSS], ls.drop_pkts[SGW_LE_DROP_OUTAGE],
				ls.drop_pkts[SGW_LE_DROP_QUEUE]);
		}
	} else {
		fprintf(f, "  flows: %" PRIu64 " created, %" PRIu64 " expired, %" PRIu64
			" bypassed (table full)\n", c.flows_created, c.flows_expired,
			c.flows_bypassed);
	}
	sgw_stages_print_summary(dp, f);
	if (sgw_dp_account(dp, &acc) != 0 || acc.originated != 0)
		fprintf(f, "  accounted: %" PRIu64 " in (received + made), %" PRIu64
			" out (sent + dropped + consumed + held)%s\n", acc.in, acc.out,
			acc.in == acc.out ? "" : "  <-- MISMATCH");
	if (elapsed_s > 0) {
		uint64_t tx = 0, txb = 0;

		for (p = 0; p < dp->n_ports; p++) {
			tx += c.tx_pkts[p];
			txb += c.tx_bytes[p];
		}
		human((double)tx / elapsed_s, a, sizeof(a), "pps");
		human((double)txb * 8.0 / elapsed_s, b, sizeof(b), "bit/s");
		fprintf(f, "  forwarded: %s, %s (average over the run)\n", a, b);
	}
}
