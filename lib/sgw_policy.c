/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The policy model's functions: defaults, names, prefix text <-> binary,
 * prefix containment and overlap, and rule matching (first match wins).
 * Plain C11; no DPDK, no globals except const tables. sgw_rule_matches is on
 * the per-packet path (behind the dataplane's per-flow cache).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sgw_hex.h"
#include "sgw_policy.h"
#include "sgw_xcp.h"

void
sgw_policy_init_defaults(struct sgw_policy *p)
{
	memset(p, 0, sizeof(*p));
	p->role = SGW_ROLE_HUB;
	p->lift_proto = 253;
	p->xcp_proto = 254;
	p->malformed = SGW_MALFORMED_DROP;
	p->default_action = SGW_ACT_FORWARD;
	p->terminals = NULL;
	p->rules = NULL;

	p->limits.flows_per_core = 65536;
	p->limits.mbufs = 16383;
	p->limits.mbuf_cache = 256;
	p->limits.ring_size = 4096;
	p->limits.flow_idle_ms = 120000;
	p->limits.timers_per_core = 65536;

	p->workers.idle_backoff_us = 100;
	p->workers.idle_sleep_us = 50;
	p->workers.burst = 32;
	p->workers.tx_drain_us = 100;
	p->workers.timer_tick_us = 100;

	p->lift.timer_ms = 980;
	p->lift.timer_min_ms = 200;
	p->lift.max_frozen_ms = 15000;
	p->lift.share_window_ms = 60000;
	p->lift.max_share_permille = 500;
	p->lift.suspend_ms = 60000;
	p->lift.max_flows = 4096;
	p->lift.spare_frack = true;
	p->satlink.port = -1;
	memset(p->satlink.peer_mac, 0xff, sizeof(p->satlink.peer_mac));
	p->satlink.rtt_ms = 600;
	p->satlink.frame_size = 1400;
	p->satlink.retx_copies = 2;
	p->satlink.retx_copies_idle = true;
	p->satlink.frame_size_adapt = true;
	p->satlink.frame_size_min = 256;
	p->satlink.retx_spacing_us = 5000;
	p->satlink.status_interval_ms = 20;
	p->satlink.keepalive_ms = 500;
	p->satlink.link_down_ms = 2000;
	p->satlink.rto_max_ms = 1000;
	p->satlink.send_queue = 1024;
	p->satlink.window_max = 8192;
	p->satlink.default_service = SGW_SL_SVC_RELIABLE;

	{
		struct sgw_xcp_conf xc;

		sgw_xcp_conf_default(&xc);
		p->xcp.protocol = p->xcp_proto;
		p->xcp.alpha = xc.alpha;
		p->xcp.beta = xc.beta;
		p->xcp.gamma = xc.gamma;
		p->xcp.interval_min_us = (uint32_t)(xc.d_min_ns / 1000u);
		p->xcp.interval_init_ms = (uint32_t)(xc.d_init_ns / 1000000u);
		p->xcp.rtt_max_ms = (uint32_t)(xc.rtt_max_ns / 1000000u);
		p->xcp.port = -1;
		p->xcp.shaper_queue = 1024;
		p->xcp.legacy_max_flows = 4096;
		p->xcp.queue_weight_gain = 0.5;
		p->xcp.queue_weight_min = 0.02;
	}
	p->split.relay_connection_bytes = 262144;
	p->split.relay_terminal_bytes = (uint64_t)16 << 20;
	p->split.relay_worker_bytes = (uint64_t)256 << 20;
	p->split.max_connections_worker = 16384;
	p->split.max_connections_terminal = 1024;
	p->split.idle_timeout_ms = 600000;
	p->split.open_credit = 65536;
	p->split.ackres_rto_min_ms = 1000;
	p->split.leg_retries = 15;
	p->split.sat_queue_ms = 50;
}

void
sgw_policy_free(struct sgw_policy *p)
{
	/* Leaves the pointers NULL so a second call (or a zeroed policy) is harmless. */
	free(p->terminals);
	p->terminals = NULL;
	p->n_terminals = 0;
	free(p->rules);
	p->rules = NULL;
	p->n_rules = 0;
}

void
sgw_rule_init(struct sgw_rule *r)
{
	memset(r, 0, sizeof(*r));
	r->in_port = -1;
	r->terminal = -1;
	r->next_hop = -1;
	r->action = SGW_ACT_FORWARD;
}

bool
sgw_action_built(enum sgw_action a)
{
	return a == SGW_ACT_FORWARD || a == SGW_ACT_DROP || a == SGW_ACT_COUNT ||
	       a == SGW_ACT_SPLIT;
}

const char *
sgw_action_name(enum sgw_action a)
{
	static const char *const names[SGW_ACT__COUNT] = {
		[SGW_ACT_FORWARD] = "forward",
		[SGW_ACT_DROP] = "drop",
		[SGW_ACT_COUNT] = "count",
		[SGW_ACT_SPLIT] = "split",
		[SGW_ACT_LIFT] = "lift",
		[SGW_ACT_XCP] = "xcp",
	};

	if ((unsigned int)a >= SGW_ACT__COUNT)
		return "?";
	return names[a];
}

const char *
sgw_role_name(enum sgw_role r)
{
	switch (r) {
	case SGW_ROLE_HUB: return "hub";
	case SGW_ROLE_TERMINAL: return "terminal";
	case SGW_ROLE_EMULATOR: return "emulator";
	}
	return "?";
}

const char *const sgw_xcp_scope_names[SGW_XCP_SCOPE__COUNT] = { "session", "carrier" };

const char *
sgw_port_role_name(enum sgw_port_role r)
{
	switch (r) {
	case SGW_PORT_TERRESTRIAL: return "terrestrial";
	case SGW_PORT_SATELLITE: return "satellite";
	case SGW_PORT_LAN: return "lan";
	}
	return "?";
}

/*
 * Big-endian loads written byte by byte: portable, and GCC/Clang turn them
 * into one load plus bswap.
 */
static inline uint32_t
load_be32(const uint8_t *b)
{
	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 |
		(uint32_t)b[2] << 8 | (uint32_t)b[3];
}

static inline uint64_t
load_be64(const uint8_t *b)
{
	return (uint64_t)load_be32(b) << 32 | load_be32(b + 4);
}

static inline uint32_t
mask32(unsigned int len)
{
	return len == 0 ? 0 : ~(uint32_t)0 << (32 - len);
}

static inline uint64_t
mask64(unsigned int len)
{
	return len == 0 ? 0 : ~(uint64_t)0 << (64 - len);
}

/* Do a and b agree on their first len bits? */
static inline bool
bits_equal(uint8_t family, const uint8_t *a, const uint8_t *b, unsigned int len)
{
	if (family == 4)
		return ((load_be32(a) ^ load_be32(b)) & mask32(len)) == 0;
	if (len <= 64)
		return ((load_be64(a) ^ load_be64(b)) & mask64(len)) == 0;
	return load_be64(a) == load_be64(b) &&
		((load_be64(a + 8) ^ load_be64(b + 8)) & mask64(len - 64)) == 0;
}

bool
sgw_prefix_contains(const struct sgw_prefix *p, uint8_t family, const uint8_t *addr)
{
	if (p->family != family)
		return false;
	return bits_equal(family, p->addr, addr, p->len);
}

bool
sgw_prefix_overlap(const struct sgw_prefix *a, const struct sgw_prefix *b)
{
	/* Two prefixes overlap iff the shorter one contains the longer one. */
	if (a->family != b->family)
		return false;
	return bits_equal(a->family, a->addr, b->addr, a->len < b->len ? a->len : b->len);
}

/* Decimal 0..max, 1..3 digits, no leading zeros; advances *i. */
static bool
parse_dec_small(const char *s, size_t n, size_t *i, unsigned int max, unsigned int *out)
{
	size_t start = *i;
	unsigned int v = 0;

	while (*i < n && s[*i] >= '0' && s[*i] <= '9' && *i - start < 3) {
		v = v * 10 + (unsigned int)(s[*i] - '0');
		(*i)++;
	}
	if (*i == start)
		return false;
	if (*i < n && s[*i] >= '0' && s[*i] <= '9')
		return false; /* four digits or more */
	if (s[start] == '0' && *i - start > 1)
		return false; /* "010" would be octal to inet_aton: refuse it */
	if (v > max)
		return false;
	*out = v;
	return true;
}

/* Exactly "a.b.c.d" filling s[*i..n); advances *i. */
static bool
parse_v4_at(const char *s, size_t n, size_t *i, uint8_t out[4])
{
	unsigned int v;
	int k;

	for (k = 0; k < 4; k++) {
		if (k > 0) {
			if (*i >= n || s[*i] != '.')
				return false;
			(*i)++;
		}
		if (!parse_dec_small(s, n, i, 255, &v))
			return false;
		out[k] = (uint8_t)v;
	}
	return true;
}

/* RFC 4291 section 2.2 text forms, the whole of s[0..n). */
static bool
parse_v6(const char *s, size_t n, uint8_t out[16])
{
	uint16_t g[8];
	int ng = 0, dcolon = -1, k;
	size_t i = 0;

	if (n >= 2 && s[0] == ':' && s[1] == ':') {
		dcolon = 0;
		i = 2;
	} else if (n >= 1 && s[0] == ':') {
		return false;
	}
	while (i < n) {
		size_t start = i;
		unsigned int v = 0;

		if (ng >= 8)
			return false;
		while (i < n && sgw_hexval(s[i]) >= 0 && i - start < 4)
			v = v << 4 | (unsigned int)sgw_hexval(s[i++]);
		if (i < n && s[i] == '.') {
			/* Embedded IPv4 in the last 32 bits. */
			uint8_t v4[4];

			i = start;
			if (ng > 6 || !parse_v4_at(s, n, &i, v4) || i != n)
				return false;
			g[ng++] = (uint16_t)(v4[0] << 8 | v4[1]);
			g[ng++] = (uint16_t)(v4[2] << 8 | v4[3]);
			break;
		}
		if (i == start)
			return false;
		if (i < n && sgw_hexval(s[i]) >= 0)
			return false; /* five hex digits */
		g[ng++] = (uint16_t)v;
		if (i == n)
			break;
		if (s[i] != ':')
			return false;
		i++;
		if (i < n && s[i] == ':') {
			if (dcolon >= 0)
				return false; /* "::" at most once */
			dcolon = ng;
			i++;
		} else if (i == n) {
			return false; /* trailing single ':' */
		}
	}
	if (dcolon < 0 && ng != 8)
		return false;
	if (dcolon >= 0 && ng > 7)
		return false; /* "::" stands for at least one group */
	memset(out, 0, 16);
	for (k = 0; k < ng; k++) {
		int pos = k;

		if (dcolon >= 0 && k >= dcolon)
			pos = 8 - (ng - k);
		out[2 * pos] = (uint8_t)(g[k] >> 8);
		out[2 * pos + 1] = (uint8_t)g[k];
	}
	return true;
}

int
sgw_prefix_parse_ex(const char *s, size_t len, struct sgw_prefix *out, const char **why)
{
	const char *dummy;
	struct sgw_prefix p;
	const char *slash;
	unsigned int plen, max, b;
	size_t i;

	if (why == NULL)
		why = &dummy;
	*why = NULL;
	memset(&p, 0, sizeof(p));
	slash = len ? memchr(s, '/', len) : NULL;
	if (slash == NULL) {
		*why = "missing /length";
		return -1;
	}
	i = 0;
	if (memchr(s, ':', (size_t)(slash - s)) != NULL) {
		p.family = 6;
		max = 128;
		if (!parse_v6(s, (size_t)(slash - s), p.addr)) {
			*why = "bad IPv6 address";
			return -1;
		}
	} else {
		p.family = 4;
		max = 32;
		if (!parse_v4_at(s, (size_t)(slash - s), &i, p.addr) ||
		    i != (size_t)(slash - s)) {
			*why = "bad IPv4 address";
			return -1;
		}
	}
	i = (size_t)(slash - s) + 1;
	if (!parse_dec_small(s, len, &i, max, &plen) || i != len) {
		*why = p.family == 4 ? "prefix length must be 0..32" :
			"prefix length must be 0..128";
		return -1;
	}
	p.len = (uint8_t)plen;

	/* Clear the host bits, remembering whether any were set. */
	{
		int rc = 0;

		for (b = 0; b < (max / 8); b++) {
			uint8_t keep;

			if (b * 8 + 8 <= plen)
				keep = 0xff;
			else if (b * 8 >= plen)
				keep = 0;
			else
				keep = (uint8_t)(0xff << (8 - (plen - b * 8)));
			if (p.addr[b] & (uint8_t)~keep) {
				p.addr[b] &= keep;
				rc = -2;
			}
		}
		*out = p;
		if (rc)
			*why = "host bits set";
		return rc;
	}
}

int
sgw_prefix_parse(const char *s, size_t len, struct sgw_prefix *out)
{
	return sgw_prefix_parse_ex(s, len, out, NULL);
}

int
sgw_prefix_format(const struct sgw_prefix *p, char *buf, size_t len)
{
	char tmp[SGW_PREFIX_STRLEN];
	int n = 0;

	if (p->family == 4 && p->len <= 32) {
		n = snprintf(tmp, sizeof(tmp), "%u.%u.%u.%u/%u", p->addr[0], p->addr[1],
			     p->addr[2], p->addr[3], p->len);
	} else if (p->family == 6 && p->len <= 128) {
		/* RFC 5952: compress the longest run (>= 2) of zero groups, first on a tie. */
		int best = -1, best_len = 1, run = 0, k;
		uint16_t g[8];

		for (k = 0; k < 8; k++) {
			g[k] = (uint16_t)(p->addr[2 * k] << 8 | p->addr[2 * k + 1]);
			run = g[k] == 0 ? run + 1 : 0;
			if (run > best_len) {
				best_len = run;
				best = k - run + 1;
			}
		}
		for (k = 0; k < 8; k++) {
			if (k == best) {
				n += snprintf(tmp + n, sizeof(tmp) - (size_t)n, "::");
				k += best_len - 1;
				continue;
			}
			n += snprintf(tmp + n, sizeof(tmp) - (size_t)n, "%s%x",
				      (k == 0 || k == best + best_len) ? "" : ":", g[k]);
		}
		n += snprintf(tmp + n, sizeof(tmp) - (size_t)n, "/%u", p->len);
	} else {
		return -1;
	}
	if (n < 0 || (size_t)n >= len)
		return -1;
	memcpy(buf, tmp, (size_t)n + 1);
	return n;
}

static inline bool
in_range16(const struct sgw_range16 *r, unsigned int n, uint16_t v)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (v >= r[i].lo && v <= r[i].hi)
			return true;
	return false;
}

static inline bool
any_prefix(const struct sgw_prefix *p, unsigned int n, uint8_t family, const uint8_t *a)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (p[i].family == family && bits_equal(family, p[i].addr, a, p[i].len))
			return true;
	return false;
}

bool
sgw_rule_matches(const struct sgw_rule *r, const struct sgw_match_key *k)
{
	unsigned int i;

	/* Cheapest first: everything up to the L3 guard is in the rule's first cache line. */
	if (r->in_port >= 0 && r->in_port != k->in_port)
		return false;
	if (r->terminal >= 0 && r->terminal != k->terminal)
		return false;
	if ((r->n_src | r->n_dst | r->n_proto | r->n_sport | r->n_dport | r->n_spi) == 0 &&
	    r->dscp_mask == 0)
		return true;
	if (k->family == 0)
		return false;
	if (r->n_proto) {
		for (i = 0; i < r->n_proto; i++)
			if (r->proto[i] == k->proto)
				break;
		if (i == r->n_proto)
			return false;
	}
	if (r->dscp_mask && !(r->dscp_mask >> (k->dscp & 63) & 1))
		return false;
	if (r->n_sport && (!k->has_ports || !in_range16(r->sport, r->n_sport, k->sport)))
		return false;
	if (r->n_dport && (!k->has_ports || !in_range16(r->dport, r->n_dport, k->dport)))
		return false;
	if (r->n_spi) {
		if (!k->has_spi)
			return false;
		for (i = 0; i < r->n_spi; i++)
			if (k->spi >= r->spi[i].lo && k->spi <= r->spi[i].hi)
				break;
		if (i == r->n_spi)
			return false;
	}
	if (r->n_src && !any_prefix(r->src, r->n_src, k->family, k->src))
		return false;
	if (r->n_dst && !any_prefix(r->dst, r->n_dst, k->family, k->dst))
		return false;
	return true;
}

int32_t
sgw_rules_lookup(const struct sgw_policy *p, const struct sgw_match_key *k)
{
	uint32_t i;

	for (i = 0; i < p->n_rules; i++)
		if (sgw_rule_matches(&p->rules[i], k))
			return (int32_t)i;
	return -1;
}

const char *
sgw_split_handshake_name(unsigned int hs)
{
	static const char *const names[SGW_SPLIT_HS__COUNT] = { "end-to-end", "spoofed" };

	return hs < SGW_SPLIT_HS__COUNT ? names[hs] : "?";
}

const char *
sgw_split_rwnd_name(unsigned int scheme)
{
	static const char *const names[SGW_SPLIT_RWND__COUNT] = { "rwnd", "petra", "ackres" };

	return scheme < SGW_SPLIT_RWND__COUNT ? names[scheme] : "?";
}
