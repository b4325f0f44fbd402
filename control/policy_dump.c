/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The policy dumper: sgw_policy_dump_yaml writes a struct sgw_policy back as
 * canonical version 1 YAML (every key, defaults included, in the schema's
 * order), which the loader reads back as the same policy.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "policy_load.h"

static const char *
sl_service_name(enum sgw_sl_service s)
{
	if (s < SGW_SL_SVC_RELIABLE || s >= SGW_SL_SVC__COUNT)
		return "?";
	return sl_service_names[s - SGW_SL_SVC_RELIABLE];
}

/* Names are [A-Za-z0-9_.-]: plain unless they start with what YAML reads as syntax. */
static void
put_name(FILE *f, const char *s)
{
	bool plain = (s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z') ||
		(s[0] >= '0' && s[0] <= '9') || s[0] == '_';

	fprintf(f, plain ? "%s" : "\"%s\"", s);
}

static void
put_quoted(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

static void
put_prefixes(FILE *f, const struct sgw_prefix *p, unsigned int n)
{
	char buf[SGW_PREFIX_STRLEN];
	unsigned int i;

	fputc('[', f);
	for (i = 0; i < n; i++) {
		if (sgw_prefix_format(&p[i], buf, sizeof(buf)) < 0)
			snprintf(buf, sizeof(buf), "?");
		fprintf(f, "%s\"%s\"", i ? ", " : "", buf);
	}
	fputs("]\n", f);
}

static void
put_ranges16(FILE *f, const char *key, const struct sgw_range16 *r, unsigned int n)
{
	unsigned int i;

	fprintf(f, "      %s: [", key);
	for (i = 0; i < n; i++) {
		if (r[i].lo == r[i].hi)
			fprintf(f, "%s%u", i ? ", " : "", r[i].lo);
		else
			fprintf(f, "%s\"%u-%u\"", i ? ", " : "", r[i].lo, r[i].hi);
	}
	fputs("]\n", f);
}

static void
put_match(FILE *f, const struct sgw_policy *p, const struct sgw_rule *r)
{
	unsigned int i, k, n;

	if (r->in_port < 0 && r->terminal < 0 && !r->n_src && !r->n_dst && !r->n_proto &&
	    !r->n_sport && !r->n_dport && !r->n_spi && !r->dscp_mask)
		return;
	fputs("    match:\n", f);
	if (r->in_port >= 0 && r->in_port < p->n_ports) {
		fputs("      in_port: ", f);
		put_name(f, p->ports[r->in_port].name);
		fputc('\n', f);
	}
	if (r->terminal >= 0 && (uint32_t)r->terminal < p->n_terminals) {
		fputs("      terminal: ", f);
		put_name(f, p->terminals[r->terminal].name);
		fputc('\n', f);
	}
	if (r->n_src) {
		fputs("      src: ", f);
		put_prefixes(f, r->src, r->n_src);
	}
	if (r->n_dst) {
		fputs("      dst: ", f);
		put_prefixes(f, r->dst, r->n_dst);
	}
	if (r->n_proto) {
		fputs("      proto: [", f);
		for (i = 0; i < r->n_proto; i++) {
			const char *nm = NULL;

			for (k = 0; k < N_PROTO_NAMES; k++)
				if (proto_names[k].num == r->proto[i])
					nm = proto_names[k].name;
			if (nm != NULL)
				fprintf(f, "%s%s", i ? ", " : "", nm);
			else
				fprintf(f, "%s%u", i ? ", " : "", r->proto[i]);
		}
		fputs("]\n", f);
	}
	if (r->n_sport)
		put_ranges16(f, "src_ports", r->sport, r->n_sport);
	if (r->n_dport)
		put_ranges16(f, "dst_ports", r->dport, r->n_dport);
	if (r->dscp_mask) {
		/* The mask back as the shortest list of values and runs. */
		fputs("      dscp: [", f);
		for (i = 0, n = 0; i < 64; i++) {
			if (!(r->dscp_mask >> i & 1))
				continue;
			for (k = i; k + 1 < 64 && (r->dscp_mask >> (k + 1) & 1); k++)
				;
			if (k == i)
				fprintf(f, "%s%u", n++ ? ", " : "", i);
			else
				fprintf(f, "%s\"%u-%u\"", n++ ? ", " : "", i, k);
			i = k;
		}
		fputs("]\n", f);
	}
	if (r->n_spi) {
		fputs("      esp_spi: [", f);
		for (i = 0; i < r->n_spi; i++) {
			if (r->spi[i].lo == r->spi[i].hi)
				fprintf(f, "%s0x%" PRIx32, i ? ", " : "", r->spi[i].lo);
			else
				fprintf(f, "%s\"0x%" PRIx32 "-0x%" PRIx32 "\"", i ? ", " : "",
					r->spi[i].lo, r->spi[i].hi);
		}
		fputs("]\n", f);
	}
}

/* The shortest text strtod reads back as the same double. */
static void
put_real(FILE *f, double x)
{
	char buf[40];
	int prec;

	for (prec = 1; prec <= 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*g", prec, x);
		if (strtod(buf, NULL) == x)
			break;
	}
	fputs(buf, f);
}

static void
put_units(FILE *f, uint64_t ns, int k)
{
	char buf[40];

	units_text(buf, sizeof(buf), ns, k);
	fputs(buf, f);
}

static void
put_loss_state(FILE *f, const char *name, const struct sgw_loss_state *s)
{
	fprintf(f, "      %s: {mean_s: ", name);
	put_real(f, s->mean_s);
	fputs(", ber: ", f);
	put_real(f, s->ber);
	fputs(", p: ", f);
	put_real(f, s->p);
	fputs("}\n", f);
}

static void
put_link_dir(FILE *f, const struct sgw_policy *p, const char *name,
	     const struct sgw_link_dir *d)
{
	const struct sgw_linkem_conf *c = &d->em;
	uint32_t i;

	fprintf(f, "  %s:\n    from: ", name);
	put_name(f, d->from_port >= 0 && d->from_port < p->n_ports ?
		 p->ports[d->from_port].name : "?");
	fputs("\n    to: ", f);
	put_name(f, d->to_port >= 0 && d->to_port < p->n_ports ? p->ports[d->to_port].name : "?");
	fprintf(f, "\n    rate_bps: %" PRIu64 "\n    delay_ms: ", c->rate_bps);
	put_units(f, c->delay_ns, 6);
	fputs("\n    jitter_ms: ", f);
	put_units(f, c->jitter_ns, 6);
	fprintf(f, "\n    overhead_bytes: %" PRIu32 "\n", c->overhead_bytes);
	fprintf(f, "    queue:\n      limit_packets: %" PRIu32 "\n      limit_bytes: %" PRIu32
		"\n      aqm: %s\n", c->queue_pkts, c->queue_bytes, sgw_aqm_name(c->aqm));
	if (c->aqm != SGW_AQM_DROPTAIL) {
		fprintf(f, "      min_bytes: %" PRIu32 "\n      max_bytes: %" PRIu32
			"\n      max_p: ", c->red_min_bytes, c->red_max_bytes);
		put_real(f, c->red_max_p);
		fputs("\n      wq: ", f);
		put_real(f, c->red_wq);
		fputc('\n', f);
	}
	fprintf(f, "    loss:\n      model: %s\n", sgw_loss_model_name(c->loss));
	if (c->loss == SGW_LOSS_BER) {
		fputs("      ber: ", f);
		put_real(f, c->good.ber);
		fputc('\n', f);
	} else if (c->loss == SGW_LOSS_RANDOM) {
		fputs("      p: ", f);
		put_real(f, c->good.p);
		fputc('\n', f);
	} else if (c->loss == SGW_LOSS_GE) {
		put_loss_state(f, "good", &c->good);
		put_loss_state(f, "bad", &c->bad);
	}
	fputs(c->n_outages ? "    outages:\n" : "    outages: []\n", f);
	for (i = 0; i < c->n_outages && i < SGW_LINKEM_MAX_OUTAGES; i++) {
		const struct sgw_outage *o = &c->outages[i];

		fputs("      - {at_s: ", f);
		put_units(f, o->start_ns, 9);
		fputs(", for_s: ", f);
		put_units(f, o->dur_ns, 9);
		if (o->period_ns != 0) {
			fputs(", every_s: ", f);
			put_units(f, o->period_ns, 9);
		}
		fputs("}\n", f);
	}
}

static void
put_satlink(FILE *f, const struct sgw_policy *p)
{
	const struct sgw_satlink_conf *sl = &p->satlink;

	fputs("satlink:\n  port: ", f);
	put_name(f, sl->port >= 0 && sl->port < p->n_ports ? p->ports[sl->port].name : "?");
	fputc('\n', f);
	if (p->role == SGW_ROLE_TERMINAL)
		fprintf(f, "  terminal: %" PRIu32 "\n", sl->terminal_id);
	fprintf(f, "  peer_mac: \"%02x:%02x:%02x:%02x:%02x:%02x\"\n", sl->peer_mac[0],
		sl->peer_mac[1], sl->peer_mac[2], sl->peer_mac[3], sl->peer_mac[4],
		sl->peer_mac[5]);
	fprintf(f, "  forward_rate_bps: %" PRIu64 "\n  return_rate_bps: %" PRIu64
		"\n  rtt_ms: %" PRIu32 "\n  frame_size: %u\n  retx_copies: %u\n"
		"  retx_spacing_us: %" PRIu32 "\n  status_interval_ms: %" PRIu32
		"\n  keepalive_ms: %" PRIu32 "\n  link_down_ms: %" PRIu32
		"\n  rto_max_ms: %" PRIu32
		"\n  send_queue: %" PRIu32 "\n  window_max: %" PRIu32
		"\n  default_service: %s\n  retx_copies_when: %s\n"
		"  frame_size_adapt: %s\n  frame_size_min: %u\n",
		sl->forward_rate_bps, sl->return_rate_bps, sl->rtt_ms, sl->frame_size,
		sl->retx_copies, sl->retx_spacing_us, sl->status_interval_ms, sl->keepalive_ms,
		sl->link_down_ms, sl->rto_max_ms, sl->send_queue, sl->window_max,
		sl_service_name(sl->default_service), sl->retx_copies_idle ? "idle" : "always",
		sl->frame_size_adapt ? "true" : "false", sl->frame_size_min);
	if (sl->keys[0] != '\0') {
		fputs("  keys: ", f);
		put_quoted(f, sl->keys);
		fputc('\n', f);
	}
}

static void
put_lift(FILE *f, const struct sgw_policy *p)
{
	const struct sgw_lift_policy *lp = &p->lift;
	bool adaptive = lp->timer_mode == SGW_LIFT_TIMER_POL_ADAPTIVE;

	/* The protocol number is protocols.lift (written above): lift.protocol is its alias. */
	fprintf(f, "lift:\n  enabled: true\n  timer: %s\n  timer_ms: %" PRIu32 "\n",
		adaptive ? "adaptive" : "fixed", lp->timer_ms);
	if (adaptive)
		fprintf(f, "  timer_min_ms: %" PRIu32 "\n", lp->timer_min_ms);
	fprintf(f, "  max_frozen_ms: %" PRIu32 "\n  share_window_ms: %" PRIu32
		"\n  max_share_permille: %" PRIu32 "\n  suspend_ms: %" PRIu32
		"\n  max_flows: %" PRIu32 "\n  max_sas: %" PRIu32 "\n  thaw: %s\n"
		"  spare_frack: %s\n",
		lp->max_frozen_ms, lp->share_window_ms, lp->max_share_permille, lp->suspend_ms,
		lp->max_flows, lp->max_sas, lp->thaw ? "true" : "false",
		lp->spare_frack ? "true" : "false");
}

/*
 * The split section: only the keys that differ from their defaults. The
 * loader checks some keys against others only when they are written
 * (relay_terminal_bytes against 2 x relay_connection_bytes): a default
 * left out reloads as the same default, so the dump stays a fixed point.
 */
static int
put_split(FILE *f, const struct sgw_policy *p)
{
	const struct sgw_split_policy *sp = &p->split;
	struct sgw_policy *d = calloc(1, sizeof(*d));
	const struct sgw_split_policy *ds;
	bool any = false;

	if (d == NULL)
		return -1;
	sgw_policy_init_defaults(d);
	ds = &d->split;
#define SPLIT_KEY(field, name, fmt)							\
	do {										\
		if (sp->field != ds->field) {						\
			fprintf(f, "%s  " name ": %" fmt "\n", any ? "" : "split:\n",	\
				sp->field);						\
			any = true;							\
		}									\
	} while (0)
	SPLIT_KEY(relay_connection_bytes, "relay_connection_bytes", PRIu32);
	SPLIT_KEY(relay_terminal_bytes, "relay_terminal_bytes", PRIu64);
	SPLIT_KEY(relay_worker_bytes, "relay_worker_bytes", PRIu64);
	SPLIT_KEY(max_connections_worker, "max_connections_per_worker", PRIu32);
	SPLIT_KEY(max_connections_terminal, "max_connections_per_terminal", PRIu32);
	SPLIT_KEY(idle_timeout_ms, "idle_timeout_ms", PRIu32);
	SPLIT_KEY(open_credit, "open_credit", PRIu32);
	SPLIT_KEY(leg_retries, "leg_retries", "u");
	SPLIT_KEY(sat_queue_ms, "sat_queue_ms", PRIu32);
#undef SPLIT_KEY
	if (sp->rwnd != ds->rwnd) {
		fprintf(f, "%s  rwnd: %s\n", any ? "" : "split:\n", sgw_split_rwnd_name(sp->rwnd));
		any = true;
		if (sp->threshold_bytes != 0)
			fprintf(f, "  threshold_bytes: %" PRIu32 "\n", sp->threshold_bytes);
		/* Allowed with ackres only (the loader refuses it otherwise). */
		if (sp->rwnd == SGW_SPLIT_RWND_ACKRES &&
		    sp->ackres_rto_min_ms != ds->ackres_rto_min_ms)
			fprintf(f, "  ackres_rto_min_ms: %" PRIu32 "\n", sp->ackres_rto_min_ms);
	}
	if (!any)
		fputs("split: {}\n", f);
	free(d);
	return 0;
}

/*
 * A plain decimal (digits and one point, no exponent: what the xcp section's reals take),
 * the shortest that strtod reads back as the same double.
 */
static void
put_plain_real(FILE *f, double x)
{
	char buf[400];
	int prec;

	for (prec = 1; prec <= 340; prec++) {
		snprintf(buf, sizeof(buf), "%.*f", prec, x);
		if (strtod(buf, NULL) == x)
			break;
	}
	fputs(buf, f);
}

static void
put_xcp(FILE *f, const struct sgw_policy *p)
{
	const struct sgw_xcp_policy *xp = &p->xcp;

	/* The protocol number is protocols.xcp (written above): xcp.protocol may only repeat it. */
	fputs("xcp:\n  enabled: true\n", f);
	if (xp->port >= 0 && xp->port < p->n_ports) {
		fputs("  port: ", f);
		put_name(f, p->ports[xp->port].name);
		fputc('\n', f);
	}
	if (xp->capacity_bps != 0)  /* 0: from satlink's rate (docs/configuration.md) */
		fprintf(f, "  capacity_bps: %" PRIu64 "\n", xp->capacity_bps);
	if (!p->satlink.enabled)
		fprintf(f, "  shaper_queue: %" PRIu32 "\n", xp->shaper_queue);
	else
		fprintf(f, "  scope: %s\n", sgw_xcp_scope_names[xp->scope]);
	fputs("  alpha: ", f);
	put_plain_real(f, xp->alpha);
	fputs("\n  beta: ", f);
	put_plain_real(f, xp->beta);
	fputs("\n  gamma: ", f);
	put_plain_real(f, xp->gamma);
	fprintf(f, "\n  interval_min_us: %" PRIu32 "\n  interval_init_ms: %" PRIu32
		"\n  rtt_max_ms: %" PRIu32 "\n  legacy: %s\n  legacy_max_flows: %" PRIu32 "\n",
		xp->interval_min_us, xp->interval_init_ms, xp->rtt_max_ms,
		xp->legacy ? "true" : "false", xp->legacy_max_flows);
	if (!p->satlink.enabled) {
		fprintf(f, "  separate_queues: %s\n  queue_weight_gain: ",
			xp->separate_queues ? "true" : "false");
		put_plain_real(f, xp->queue_weight_gain);
		fputs("\n  queue_weight_min: ", f);
		put_plain_real(f, xp->queue_weight_min);
		fputc('\n', f);
	}
}

int
sgw_policy_dump_yaml(const struct sgw_policy *p, FILE *f)
{
	uint32_t i;

	fputs("# satgw policy, canonical form\n", f);
	fputs("version: 1\n", f);
	fprintf(f, "role: %s\n", sgw_role_name(p->role));

	fputs("ports:\n", f);
	for (i = 0; i < p->n_ports; i++) {
		const struct sgw_port_conf *pc = &p->ports[i];

		fputs("  - name: ", f);
		put_name(f, pc->name);
		fputs("\n    device: ", f);
		put_quoted(f, pc->device);
		fprintf(f, "\n    role: %s\n", sgw_port_role_name(pc->role));
		if (pc->peer >= 0 && pc->peer < p->n_ports) {
			fputs("    peer: ", f);
			put_name(f, p->ports[pc->peer].name);
			fputc('\n', f);
		}
		fprintf(f, "    rx_desc: %u\n    tx_desc: %u\n    mtu: %u\n    promiscuous: %s\n",
			pc->rx_desc, pc->tx_desc, pc->mtu, pc->promiscuous ? "true" : "false");
	}

	fputs(p->n_next_hops ? "next_hops:\n" : "next_hops: []\n", f);
	for (i = 0; i < p->n_next_hops; i++) {
		const struct sgw_next_hop *nh = &p->next_hops[i];

		fputs("  - name: ", f);
		put_name(f, nh->name);
		fputs("\n    port: ", f);
		put_name(f, nh->port >= 0 && nh->port < p->n_ports ?
			 p->ports[nh->port].name : "?");
		fprintf(f, "\n    mac: \"%02x:%02x:%02x:%02x:%02x:%02x\"\n", nh->mac[0],
			nh->mac[1], nh->mac[2], nh->mac[3], nh->mac[4], nh->mac[5]);
	}

	fputs(p->n_terminals ? "terminals:\n" : "terminals: []\n", f);
	for (i = 0; i < p->n_terminals; i++) {
		const struct sgw_terminal *t = &p->terminals[i];

		fputs("  - name: ", f);
		put_name(f, t->name);
		fprintf(f, "\n    id: %" PRIu32 "\n    prefixes: ", t->id);
		put_prefixes(f, t->prefixes, t->n_prefixes);
	}

	fputs(p->n_rules ? "rules:\n" : "rules: []\n", f);
	for (i = 0; i < p->n_rules; i++) {
		const struct sgw_rule *r = &p->rules[i];

		fputs("  - name: ", f);
		put_name(f, r->name);
		fputc('\n', f);
		put_match(f, p, r);
		fprintf(f, "    action: %s\n", sgw_action_name(r->action));
		if (r->next_hop >= 0 && r->next_hop < p->n_next_hops) {
			fputs("    next_hop: ", f);
			put_name(f, p->next_hops[r->next_hop].name);
			fputc('\n', f);
		}
		if (r->sl_service != SGW_SL_SVC_DEFAULT)
			fprintf(f, "    satlink: %s\n", sl_service_name(r->sl_service));
		if (r->action == SGW_ACT_SPLIT && r->split_handshake != SGW_SPLIT_HS_END_TO_END)
			fprintf(f, "    handshake: %s\n", sgw_split_handshake_name(r->split_handshake));
	}

	fprintf(f, "limits:\n  flows_per_core: %" PRIu32 "\n  mbufs: %" PRIu32
		"\n  mbuf_cache: %" PRIu32 "\n  ring_size: %" PRIu32 "\n  flow_idle_ms: %"
		PRIu32 "\n  timers_per_core: %" PRIu32 "\n",
		p->limits.flows_per_core, p->limits.mbufs, p->limits.mbuf_cache,
		p->limits.ring_size, p->limits.flow_idle_ms, p->limits.timers_per_core);
	fprintf(f, "workers:\n  idle_backoff_us: %" PRIu32 "\n  idle_sleep_us: %" PRIu32
		"\n  burst: %u\n  tx_drain_us: %u\n  timer_tick_us: %" PRIu32 "\n",
		p->workers.idle_backoff_us, p->workers.idle_sleep_us, p->workers.burst,
		p->workers.tx_drain_us, p->workers.timer_tick_us);
	fprintf(f, "protocols:\n  lift: %u\n  xcp: %u\n", p->lift_proto, p->xcp_proto);
	fprintf(f, "malformed: %s\n", p->malformed == SGW_MALFORMED_FORWARD ? "forward" : "drop");
	fprintf(f, "default_action: %s\n", sgw_action_name(p->default_action));
	if (p->role == SGW_ROLE_EMULATOR) {
		fprintf(f, "link:\n  seed: %" PRIu64 "\n", p->emu.seed);
		put_link_dir(f, p, "forward", &p->emu.dir[SGW_LINK_FORWARD]);
		put_link_dir(f, p, "return", &p->emu.dir[SGW_LINK_RETURN]);
	}
	if (p->satlink.enabled)
		put_satlink(f, p);
	if (p->lift.enabled)
		put_lift(f, p);
	if (p->xcp.enabled)
		put_xcp(f, p);
	if (p->split.present && put_split(f, p) != 0)
		return -1;
	return ferror(f) ? -1 : 0;
}
