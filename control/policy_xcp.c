/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The policy's xcp section (roles hub and terminal): it fills sgw_policy.xcp,
 * the XCP gateway stage's settings (dataplane/xcp.c, docs/xcp.md). The
 * controller constants default to lib/sgw_xcp.h's.
 *
 * The stage's queue is satlink's (this end's egress toward the satellite)
 * when the policy has satlink; without it the stage's own egress shaper on
 * the given satellite port, at capacity_bps, owns the queue.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy_load.h"
#include "sgw_xcp.h"

enum {
	XCK_ENABLED, XCK_PROTOCOL, XCK_CAPACITY, XCK_ALPHA, XCK_BETA, XCK_GAMMA,
	XCK_INTERVAL_MIN, XCK_INTERVAL_INIT, XCK_RTT_MAX, XCK_PORT, XCK_SHAPER_QUEUE,
	XCK_LEGACY, XCK_LEGACY_MAX_FLOWS, XCK_SEPARATE, XCK_QW_GAIN, XCK_QW_MIN, XCK_SCOPE,
};
static const struct keyspec xcp_keys[] = {
	[XCK_ENABLED] = { "enabled", false },
	[XCK_PROTOCOL] = { "protocol", false },
	[XCK_CAPACITY] = { "capacity_bps", false },
	[XCK_ALPHA] = { "alpha", false },
	[XCK_BETA] = { "beta", false },
	[XCK_GAMMA] = { "gamma", false },
	[XCK_INTERVAL_MIN] = { "interval_min_us", false },
	[XCK_INTERVAL_INIT] = { "interval_init_ms", false },
	[XCK_RTT_MAX] = { "rtt_max_ms", false },
	[XCK_PORT] = { "port", false },
	[XCK_SHAPER_QUEUE] = { "shaper_queue", false },
	[XCK_LEGACY] = { "legacy", false },
	[XCK_LEGACY_MAX_FLOWS] = { "legacy_max_flows", false },
	[XCK_SEPARATE] = { "separate_queues", false },
	[XCK_QW_GAIN] = { "queue_weight_gain", false },
	[XCK_QW_MIN] = { "queue_weight_min", false },
	[XCK_SCOPE] = { "scope", false },
};

/* Top-level keys that belong under 'xcp:' (the unambiguous ones). */
const struct keyset xcp_keyset = {
	&xcp_keys[XCK_CAPACITY], XCK_PORT - XCK_CAPACITY
};

#define XCP_RATE_MIN 1000ull
#define XCP_RATE_MAX 400000000000ull
/* Legacy flows per worker: lib/sgw_xcp_legacy.h needs 8; 2^20 slots are ~100 MB a worker. */
#define XCP_LEGACY_FLOWS_MIN 8u
#define XCP_LEGACY_FLOWS_MAX 1048576u

/*
 * A plain decimal real: digits, at most one '.', at least one digit, no sign,
 * exponent, hex or nan (these constants are small positive numbers), in
 * (lo, hi] when lo_open, else [lo, hi].
 */
static bool
get_real(struct ld *ld, const struct ynode *v, const char *key, double lo, double hi,
	 bool lo_open, double *out)
{
	char sb[SHOW_MAX + 8];
	unsigned int digits = 0, points = 0;
	char *end;
	uint32_t i;
	double x;

	if (v == NULL)
		return false;
	if (!want_scalar(ld, v, key, "a number"))
		return false;
	for (i = 0; i < v->n; i++) {
		if (v->u.s[i] >= '0' && v->u.s[i] <= '9')
			digits++;
		else if (v->u.s[i] == '.')
			points++;
		else
			break;
	}
	if (i < v->n || digits == 0 || points > 1 || v->n > 32) {
		ERR(ld, v, "'%s' must be a decimal number like 0.4 (got %s)", key,
		    show(v, sb, sizeof(sb)));
		return false;
	}
	x = strtod(v->u.s, &end);
	if (end != v->u.s + v->n || !(lo_open ? x > lo : x >= lo) || !(x <= hi)) {
		ERR(ld, v, "'%s' %s is out of range (must be %s %.6g and at most %.6g)", key,
		    v->u.s, lo_open ? "more than" : "at least", lo, hi);
		return false;
	}
	*out = x;
	return true;
}

/* Was key given in the protocols section? */
static const struct ynode *
protocols_key(const struct ld *ld, const char *key)
{
	const struct ynode *m = section_value(ld, "protocols");
	uint32_t i;

	if (m == NULL || m->kind != YN_MAP)
		return NULL;
	for (i = 0; i < m->n; i++)
		if (seq(m->u.kids[2 * i], key))
			return m->u.kids[2 * i + 1];
	return NULL;
}

/* xcp: optional for roles hub and terminal; needs satlink (its queue). */
void
load_xcp(struct ld *ld, const struct ynode *key, const struct ynode *v)
{
	const struct ynode *vals[NKEYS(xcp_keys)], *keys[NKEYS(xcp_keys)];
	struct sgw_policy *p = ld->p;
	struct sgw_xcp_policy *xp = &p->xcp;
	struct sgw_xcp_conf c;
	bool init_ok = true, rtt_ok = true, min_ok = true, order_ok = true, en = true;
	uint32_t x;

	xp->protocol = p->xcp_proto;
	if (v == NULL || is_null(v))
		return;
	if (ld->role_known && p->role == SGW_ROLE_EMULATOR) {
		ERR(ld, key, "'xcp' is only used by roles hub and terminal (this policy's role "
		    "is %s)", sgw_role_name(p->role));
		return;
	}
	v = get_map(ld, v, "xcp");
	if (v == NULL)
		return;
	map_fields(ld, v, "xcp", xcp_keys, NKEYS(xcp_keys), vals, keys, false);
	if (vals[XCK_ENABLED] != NULL && !get_bool(ld, vals[XCK_ENABLED], "enabled", &en))
		en = false;
	xp->enabled = en;

	if (vals[XCK_PROTOCOL] != NULL &&
	    get_u32(ld, vals[XCK_PROTOCOL], "protocol", 1, 255, &x) && x != p->xcp_proto) {
		/* One number: the parser classifies XCP by protocols.xcp. */
		if (protocols_key(ld, "xcp") != NULL)
			ERR(ld, vals[XCK_PROTOCOL], "xcp 'protocol' %" PRIu32 " differs from "
			    "'protocols: xcp' (%u): the parser classifies XCP by that one; give "
			    "one number", x, p->xcp_proto);
		else
			ERR(ld, vals[XCK_PROTOCOL], "xcp 'protocol' %" PRIu32 " differs from "
			    "the number the parser reserves for XCP (%u): set 'protocols: xcp' "
			    "to %" PRIu32 " instead", x, p->xcp_proto, x);
	}
	if (vals[XCK_CAPACITY] != NULL)
		get_uint(ld, vals[XCK_CAPACITY], "capacity_bps", XCP_RATE_MIN, XCP_RATE_MAX,
			 &xp->capacity_bps);
	/* Katabi's stability condition: 0 < alpha < pi / (4 sqrt 2) = 0.555. */
	get_real(ld, vals[XCK_ALPHA], "alpha", 0.0, 0.55, true, &xp->alpha);
	get_real(ld, vals[XCK_BETA], "beta", 0.0, 1.0, true, &xp->beta);
	get_real(ld, vals[XCK_GAMMA], "gamma", 0.0, 1.0, false, &xp->gamma);
	if (vals[XCK_INTERVAL_MIN] != NULL)
		min_ok = get_u32(ld, vals[XCK_INTERVAL_MIN], "interval_min_us", 1, 1000000,
				 &xp->interval_min_us);
	if (vals[XCK_INTERVAL_INIT] != NULL)
		init_ok = get_u32(ld, vals[XCK_INTERVAL_INIT], "interval_init_ms", 1, 60000,
				  &xp->interval_init_ms);
	/* Never below 1 s: a GEO round trip (0.55-0.9 s, more under load) is not cut. */
	if (vals[XCK_RTT_MAX] != NULL)
		rtt_ok = get_u32(ld, vals[XCK_RTT_MAX], "rtt_max_ms", 1000, 60000,
				 &xp->rtt_max_ms);
	if (min_ok && init_ok && (uint64_t)xp->interval_min_us > 1000ull * xp->interval_init_ms) {
		order_ok = false;
		ERR(ld, vals[XCK_INTERVAL_MIN] ? vals[XCK_INTERVAL_MIN] : vals[XCK_INTERVAL_INIT],
		    "'interval_min_us' %" PRIu32 " must be at most 'interval_init_ms' (%" PRIu32
		    " ms)", xp->interval_min_us, xp->interval_init_ms);
	} else if (init_ok && rtt_ok && xp->interval_init_ms > xp->rtt_max_ms) {
		order_ok = false;
		ERR(ld, vals[XCK_INTERVAL_INIT] ? vals[XCK_INTERVAL_INIT] : vals[XCK_RTT_MAX],
		    "'interval_init_ms' %" PRIu32 " must be at most 'rtt_max_ms' (%" PRIu32 ")",
		    xp->interval_init_ms, xp->rtt_max_ms);
	}

	/*
	 * The queue the controller watches: satlink's on satlink's port, else the
	 * stage's own shaper on the port given, at the capacity given.
	 */
	if (vals[XCK_PORT] != NULL) {
		int64_t idx = resolve(ld, &ld->ports, vals[XCK_PORT], "port", "port");

		if (idx >= 0 && idx < SGW_MAX_PORTS) {
			if (p->ports[idx].role != SGW_PORT_SATELLITE)
				ERR(ld, vals[XCK_PORT], "xcp port '%s' has role %s: the XCP "
				    "controller runs at a port whose role is satellite",
				    p->ports[idx].name, sgw_port_role_name(p->ports[idx].role));
			else if (p->satlink.enabled && p->satlink.port >= 0 &&
				 idx != p->satlink.port)
				ERR(ld, vals[XCK_PORT], "xcp port '%s' is not satlink's port "
				    "'%s': with satlink the queue XCP controls is satlink's",
				    p->ports[idx].name, p->ports[p->satlink.port].name);
			else
				xp->port = (int16_t)idx;
		}
	} else if (p->satlink.enabled) {
		xp->port = p->satlink.port;
	}
	/*
	 * One controller per satlink session (each session's pacer is its own
	 * bottleneck, at its share of the carrier) or one for the carrier.
	 * Without satlink the egress shaper is the one queue: nothing to choose.
	 */
	if (vals[XCK_SCOPE] != NULL) {
		unsigned int en_s;

		if (ld->role_known && !p->satlink.enabled)
			ERR(ld, vals[XCK_SCOPE], "'scope' chooses between satlink's sessions and "
			    "its carrier; without satlink the egress shaper is the one queue");
		else if (get_enum(ld, vals[XCK_SCOPE], "scope", sgw_xcp_scope_names,
				  SGW_XCP_SCOPE__COUNT, &en_s))
			xp->scope = (enum sgw_xcp_scope)en_s;
	}
	if (vals[XCK_SHAPER_QUEUE] != NULL) {
		if (p->satlink.enabled)
			ERR(ld, vals[XCK_SHAPER_QUEUE], "'shaper_queue' is for the egress "
			    "shaper, which runs without satlink (with it, satlink's send_queue "
			    "holds the packets)");
		else
			get_u32(ld, vals[XCK_SHAPER_QUEUE], "shaper_queue", 1, 65536,
				&xp->shaper_queue);
	}
	/*
	 * Legacy senders (docs/xcp.md, "Legacy mode in the stage"): the stage
	 * estimates plain TCP flows and clamps their ACKs' window to the share.
	 */
	if (vals[XCK_LEGACY] != NULL)
		get_bool(ld, vals[XCK_LEGACY], "legacy", &xp->legacy);
	if (vals[XCK_LEGACY_MAX_FLOWS] != NULL)
		get_u32(ld, vals[XCK_LEGACY_MAX_FLOWS], "legacy_max_flows", XCP_LEGACY_FLOWS_MIN,
			XCP_LEGACY_FLOWS_MAX, &xp->legacy_max_flows);
	/*
	 * Separate XCP and other queues at the shaper, their share adapted to
	 * equal per-flow throughput (docs/xcp.md): built for the egress shaper
	 * only, not for satlink's queues.
	 */
	if (vals[XCK_SEPARATE] != NULL &&
	    get_bool(ld, vals[XCK_SEPARATE], "separate_queues", &xp->separate_queues) &&
	    xp->separate_queues && p->satlink.enabled) {
		ERR(ld, vals[XCK_SEPARATE], "'separate_queues' is built for the egress shaper "
		    "(xcp without satlink) only, not for satlink's queues");
		xp->separate_queues = false;
	}
	get_real(ld, vals[XCK_QW_GAIN], "queue_weight_gain", 0.0, 1.0, true,
		 &xp->queue_weight_gain);
	get_real(ld, vals[XCK_QW_MIN], "queue_weight_min", 0.0, 0.5, true,
		 &xp->queue_weight_min);
	if (xp->enabled && ld->role_known && !p->satlink.enabled) {
		if (vals[XCK_PORT] == NULL)
			ERR(ld, key, "'xcp' without 'satlink' needs 'port': the satellite port "
			    "whose egress its shaper owns");
		if (vals[XCK_CAPACITY] == NULL)
			ERR(ld, key, "'xcp' without 'satlink' needs 'capacity_bps': the rate "
			    "its egress shaper sends at");
	}
	/* Whatever passed the checks above, the lib must take. */
	sgw_xcp_conf_default(&c);
	c.alpha = xp->alpha;
	c.beta = xp->beta;
	c.gamma = xp->gamma;
	c.d_min_ns = (uint64_t)xp->interval_min_us * 1000u;
	c.d_init_ns = (uint64_t)xp->interval_init_ms * 1000000u;
	c.rtt_max_ns = (uint64_t)xp->rtt_max_ms * 1000000u;
	if (order_ok && sgw_xcp_conf_check(&c) != 0)
		ERR(ld, v, "xcp: the controller refuses these settings");
}
