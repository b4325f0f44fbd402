/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The policy sections every role reads (docs/configuration.md): ports,
 * next_hops, terminals, rules (their match and satlink service), limits,
 * workers and protocols. References between them (peer, next_hop, terminal,
 * in_port) are resolved through the loader's sorted name tables, and the
 * terminal-prefix overlap check sorts all prefixes once: O(n log n) for
 * 65536 terminals x 16 prefixes.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy_load.h"

/* ---------------------------------------------------------------- ports */

enum { PK_NAME, PK_DEVICE, PK_ROLE, PK_PEER, PK_RX, PK_TX, PK_MTU, PK_PROMISC };
static const struct keyspec port_keys[] = {
	[PK_NAME] = { "name", true },
	[PK_DEVICE] = { "device", true },
	[PK_ROLE] = { "role", true },
	[PK_PEER] = { "peer", false },
	[PK_RX] = { "rx_desc", false },
	[PK_TX] = { "tx_desc", false },
	[PK_MTU] = { "mtu", false },
	[PK_PROMISC] = { "promiscuous", false },
};

static const char *const port_role_names[] = { "terrestrial", "satellite", "lan" };

/* Entry i's "name" value, or NULL. */
static const struct ynode *
entry_name(const struct ynode *e)
{
	uint32_t i;

	if (e->kind != YN_MAP)
		return NULL;
	for (i = 0; i < e->n; i++)
		if (seq(e->u.kids[2 * i], "name"))
			return e->u.kids[2 * i + 1];
	return NULL;
}

static const char *
name_or_null(const struct ynode *v)
{
	return v != NULL && v->kind == YN_SCALAR && !is_null(v) ? v->u.s : NULL;
}

/* Names of a section's entries, for ntab_build; NULL on OOM. */
static const struct ynode **
collect_names(struct ld *ld, const struct list *l)
{
	const struct ynode **names;
	uint32_t i;

	names = calloc(l->n ? l->n : 1, sizeof(*names));
	if (names == NULL) {
		oom(ld);
		return NULL;
	}
	for (i = 0; i < l->n; i++)
		names[i] = entry_name(l->items[i]);
	return names;
}

void
load_ports(struct ld *ld, const struct ynode *key, const struct ynode *v)
{
	struct sgw_policy *p = ld->p;
	const struct ynode *vals[NKEYS(port_keys)], *keys[NKEYS(port_keys)];
	const struct ynode **names, *peers[SGW_MAX_PORTS] = { NULL };
	const struct ynode *devs[SGW_MAX_PORTS] = { NULL };
	struct sgw_port_conf scratch;
	struct list l;
	uint32_t i, j;

	ld->ports.usable = false;
	if (v == NULL)
		return; /* reported as a missing required key */
	if (!get_section(ld, v, "ports", 1, SGW_MAX_PORTS, &l))
		return;
	names = collect_names(ld, &l);
	if (names == NULL)
		return;
	ntab_build(ld, &ld->ports, names, l.n, "port");
	free(names);
	p->n_ports = (uint16_t)(l.n < SGW_MAX_PORTS ? l.n : SGW_MAX_PORTS);

	for (i = 0; i < l.n; i++) {
		const struct ynode *e = l.items[i];
		struct sgw_port_conf *pc = i < SGW_MAX_PORTS ? &p->ports[i] : &scratch;
		uint32_t x;
		unsigned int en;
		bool b;

		memset(pc, 0, sizeof(*pc));
		pc->peer = -1;
		pc->rx_desc = 1024;
		pc->tx_desc = 1024;
		pc->promiscuous = true;
		if (!entry_is_map(ld, e, "ports"))
			continue;
		map_fields(ld, e, "port", port_keys, NKEYS(port_keys), vals, keys, false);
		check_required(ld, e, "port", name_or_null(vals[PK_NAME]), port_keys,
			       NKEYS(port_keys), vals);
		if (vals[PK_NAME])
			get_name(ld, vals[PK_NAME], "name", pc->name);
		if (vals[PK_DEVICE] && want_scalar(ld, vals[PK_DEVICE], "device",
						   "a DPDK device name")) {
			const struct ynode *d = vals[PK_DEVICE];
			char sb[SHOW_MAX + 8];

			for (j = 0; j < d->n; j++)
				if (d->u.s[j] <= ' ' || d->u.s[j] > '~')
					break;
			if (d->n >= SGW_DEVICE_MAX || j < d->n)
				ERR(ld, d, "'device' %s must be 1..%d printable characters "
				    "without spaces", show(d, sb, sizeof(sb)),
				    SGW_DEVICE_MAX - 1);
			else if (i < SGW_MAX_PORTS) {
				memcpy(pc->device, d->u.s, d->n + 1);
				devs[i] = d;
			}
		}
		if (vals[PK_ROLE] && get_enum(ld, vals[PK_ROLE], "role", port_role_names, 3, &en))
			pc->role = (enum sgw_port_role)en;
		if (i < SGW_MAX_PORTS)
			peers[i] = vals[PK_PEER];
		if (get_u32(ld, vals[PK_RX], "rx_desc", 64, 16384, &x))
			pc->rx_desc = (uint16_t)x;
		if (get_u32(ld, vals[PK_TX], "tx_desc", 64, 16384, &x))
			pc->tx_desc = (uint16_t)x;
		if (get_u32(ld, vals[PK_MTU], "mtu", 0, 9600, &x)) {
			if (x != 0 && x < 68)
				ERR(ld, vals[PK_MTU], "'mtu' %" PRIu32 " is out of range "
				    "(0 keeps the device's MTU, else 68..9600)", x);
			else
				pc->mtu = (uint16_t)x;
		}
		if (vals[PK_PROMISC] && get_bool(ld, vals[PK_PROMISC], "promiscuous", &b))
			pc->promiscuous = b;
	}

	/* Two ports on one device cannot both be opened. */
	for (i = 0; i < p->n_ports; i++) {
		for (j = 0; j < i; j++) {
			if (devs[i] == NULL || devs[j] == NULL ||
			    strcmp(p->ports[i].device, p->ports[j].device) != 0)
				continue;
			ERR(ld, devs[i], "device '%s' is already used by port '%s' (line %" PRIu32
			    ")", p->ports[i].device, p->ports[j].name, devs[j]->line);
			break;
		}
	}

	ld->ports.usable = true;
	for (i = 0; i < p->n_ports; i++) {
		int64_t idx;

		if (peers[i] == NULL)
			continue;
		idx = resolve(ld, &ld->ports, peers[i], "peer", "port");
		if (idx == (int64_t)i)
			ERR(ld, peers[i], "port '%s' cannot be its own peer", peers[i]->u.s);
		else if (idx >= 0 && idx < SGW_MAX_PORTS)
			p->ports[i].peer = (int16_t)idx;
	}
}

/* ------------------------------------------------------------ next hops */

enum { NK_NAME, NK_PORT, NK_MAC };
static const struct keyspec nh_keys[] = {
	[NK_NAME] = { "name", true },
	[NK_PORT] = { "port", true },
	[NK_MAC] = { "mac", true },
};

void
load_next_hops(struct ld *ld, const struct ynode *key, const struct ynode *v)
{
	struct sgw_policy *p = ld->p;
	const struct ynode *vals[NKEYS(nh_keys)], *keys[NKEYS(nh_keys)];
	const struct ynode **names;
	struct sgw_next_hop scratch;
	struct list l;
	uint32_t i;

	ld->nhops.usable = false;
	if (!get_section(ld, v, "next_hops", 0, SGW_MAX_NEXT_HOPS, &l))
		return;
	names = collect_names(ld, &l);
	if (names == NULL)
		return;
	ntab_build(ld, &ld->nhops, names, l.n, "next_hop");
	free(names);
	p->n_next_hops = (uint16_t)(l.n < SGW_MAX_NEXT_HOPS ? l.n : SGW_MAX_NEXT_HOPS);

	for (i = 0; i < l.n; i++) {
		const struct ynode *e = l.items[i];
		struct sgw_next_hop *nh = i < SGW_MAX_NEXT_HOPS ? &p->next_hops[i] : &scratch;
		int64_t idx;

		memset(nh, 0, sizeof(*nh));
		nh->port = -1;
		if (!entry_is_map(ld, e, "next_hops"))
			continue;
		map_fields(ld, e, "next_hop", nh_keys, NKEYS(nh_keys), vals, keys, false);
		check_required(ld, e, "next_hop", name_or_null(vals[NK_NAME]), nh_keys,
			       NKEYS(nh_keys), vals);
		if (vals[NK_NAME])
			get_name(ld, vals[NK_NAME], "name", nh->name);
		if (vals[NK_PORT]) {
			idx = resolve(ld, &ld->ports, vals[NK_PORT], "port", "port");
			if (idx >= 0 && idx < SGW_MAX_PORTS)
				nh->port = (int16_t)idx;
		}
		if (vals[NK_MAC])
			get_mac(ld, vals[NK_MAC], "mac", true, nh->mac);
	}
	ld->nhops.usable = true;
}

/* ------------------------------------------------------------ terminals */

enum { TMK_NAME, TMK_ID, TMK_PREFIXES };
static const struct keyspec term_keys[] = {
	[TMK_NAME] = { "name", true },
	[TMK_ID] = { "id", true },
	[TMK_PREFIXES] = { "prefixes", true },
};

/* One terminal prefix, for the overlap check. */
struct pfx_rec {
	struct sgw_prefix p;
	uint32_t term;
	uint32_t line, col;
};

static int
pfx_rec_cmp(const void *a, const void *b)
{
	const struct pfx_rec *x = a, *y = b;
	int c;

	if (x->p.family != y->p.family)
		return x->p.family < y->p.family ? -1 : 1;
	c = memcmp(x->p.addr, y->p.addr, sizeof(x->p.addr));
	if (c != 0)
		return c;
	if (x->p.len != y->p.len)
		return x->p.len < y->p.len ? -1 : 1;
	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	return x->col < y->col ? -1 : x->col > y->col;
}

static bool
rec_before(const struct pfx_rec *a, const struct pfx_rec *b)
{
	return a->line < b->line || (a->line == b->line && a->col < b->col);
}

/*
 * Terminal prefixes must not overlap. Sorted by (family, address, length),
 * prefixes nest or are disjoint, so the earlier prefix reaching furthest is
 * the only one a new prefix can fall into: one pass after the sort.
 */
static void
check_overlaps(struct ld *ld, struct pfx_rec *r, size_t n, const struct ynode *const *tnames)
{
	const struct pfx_rec *m = NULL;
	size_t i;

	qsort(r, n, sizeof(*r), pfx_rec_cmp);
	for (i = 0; i < n; i++) {
		const struct pfx_rec *first, *second;
		char a[SGW_PREFIX_STRLEN], b[SGW_PREFIX_STRLEN], tn[64];
		const struct ynode *name;

		if (m == NULL || m->p.family != r[i].p.family ||
		    !sgw_prefix_overlap(&m->p, &r[i].p)) {
			m = &r[i];
			continue;
		}
		/* Report at whichever comes later in the file. */
		first = rec_before(m, &r[i]) ? m : &r[i];
		second = first == m ? &r[i] : m;
		sgw_prefix_format(&second->p, a, sizeof(a));
		sgw_prefix_format(&first->p, b, sizeof(b));
		name = tnames[first->term];
		if (name != NULL && name->kind == YN_SCALAR)
			snprintf(tn, sizeof(tn), "'%s'", name->u.s);
		else
			snprintf(tn, sizeof(tn), "#%" PRIu32, first->term + 1);
		err_at(ld, second->line, second->col,
		       "%s overlaps %s of terminal %s (line %" PRIu32 ")", a, b, tn,
		       first->line);
	}
}

struct id_rec {
	uint32_t id;
	uint32_t term;
	uint32_t line, col;
};

static int
id_rec_cmp(const void *a, const void *b)
{
	const struct id_rec *x = a, *y = b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->term < y->term ? -1 : x->term > y->term;
}

static void
check_ids(struct ld *ld, struct id_rec *r, size_t n, const struct ynode *const *tnames)
{
	size_t i, first = 0;

	qsort(r, n, sizeof(*r), id_rec_cmp);
	for (i = 1; i < n; i++) {
		const char *fn;

		if (r[i].id != r[first].id) {
			first = i;
			continue;
		}
		fn = name_or_null(tnames[r[first].term]);
		err_at(ld, r[i].line, r[i].col, "duplicate terminal id %" PRIu32
		       " (first used by terminal '%s' at line %" PRIu32 ")", r[i].id,
		       fn ? fn : "?", r[first].line);
	}
}

void
load_terminals(struct ld *ld, const struct ynode *key, const struct ynode *v)
{
	struct sgw_policy *p = ld->p;
	const struct ynode *vals[NKEYS(term_keys)], *keys[NKEYS(term_keys)];
	const struct ynode **names = NULL;
	struct pfx_rec *prefixes = NULL;
	struct id_rec *ids = NULL;
	size_t n_prefixes = 0, cap_prefixes = 0, n_ids = 0;
	struct list l;
	uint32_t i, k;

	ld->terms.usable = false;
	if (!get_section(ld, v, "terminals", 0, SGW_MAX_TERMINALS, &l))
		return;
	if (l.n == 0) {
		ld->terms.usable = true;
		return;
	}
	names = collect_names(ld, &l);
	p->terminals = calloc(l.n, sizeof(*p->terminals));
	ids = malloc(sizeof(*ids) * l.n);
	if (names == NULL || p->terminals == NULL || ids == NULL) {
		oom(ld);
		goto out;
	}
	p->n_terminals = l.n;
	ntab_build(ld, &ld->terms, names, l.n, "terminal");

	for (i = 0; i < l.n; i++) {
		const struct ynode *e = l.items[i];
		struct sgw_terminal *t = &p->terminals[i];
		struct list pl;

		if (!entry_is_map(ld, e, "terminals"))
			continue;
		map_fields(ld, e, "terminal", term_keys, NKEYS(term_keys), vals, keys, false);
		check_required(ld, e, "terminal", name_or_null(vals[TMK_NAME]), term_keys,
			       NKEYS(term_keys), vals);
		if (vals[TMK_NAME])
			get_name(ld, vals[TMK_NAME], "name", t->name);
		if (get_u32(ld, vals[TMK_ID], "id", 0, UINT32_MAX, &t->id)) {
			ids[n_ids].id = t->id;
			ids[n_ids].term = i;
			ids[n_ids].line = vals[TMK_ID]->line;
			ids[n_ids].col = vals[TMK_ID]->col;
			n_ids++;
		}
		if (vals[TMK_PREFIXES] == NULL ||
		    !get_list(ld, vals[TMK_PREFIXES], "prefixes", 1, SGW_TERM_PREFIX_MAX, &pl))
			continue;
		for (k = 0; k < pl.n; k++) {
			struct sgw_prefix pf;

			if (!get_prefix(ld, pl.items[k], "prefixes", &pf))
				continue;
			t->prefixes[t->n_prefixes++] = pf;
			if (n_prefixes == cap_prefixes) {
				size_t nc = cap_prefixes ? cap_prefixes * 2 : 1024;
				struct pfx_rec *np = realloc(prefixes, nc * sizeof(*np));

				if (np == NULL) {
					oom(ld);
					goto out;
				}
				prefixes = np;
				cap_prefixes = nc;
			}
			prefixes[n_prefixes].p = pf;
			prefixes[n_prefixes].term = i;
			prefixes[n_prefixes].line = pl.items[k]->line;
			prefixes[n_prefixes].col = pl.items[k]->col;
			n_prefixes++;
		}
	}
	check_ids(ld, ids, n_ids, names);
	check_overlaps(ld, prefixes, n_prefixes, names);
	ld->terms.usable = true;
out:
	free(prefixes);
	free(ids);
	free(names);
}

/* ---------------------------------------------------------------- rules */

enum { RK_NAME, RK_MATCH, RK_ACTION, RK_NEXT_HOP, RK_SATLINK, RK_HANDSHAKE };
static const struct keyspec rule_keys[] = {
	[RK_NAME] = { "name", true },
	[RK_MATCH] = { "match", false },
	[RK_ACTION] = { "action", true },
	[RK_NEXT_HOP] = { "next_hop", false },
	[RK_SATLINK] = { "satlink", false },  /* a service; needs the satlink section */
	[RK_HANDSHAKE] = { "handshake", false },  /* action split (policy_split.c) */
};

enum {
	MK_IN_PORT, MK_TERMINAL, MK_SRC, MK_DST, MK_PROTO, MK_SPORTS, MK_DPORTS,
	MK_DSCP, MK_SPI,
};
static const struct keyspec match_keys[] = {
	[MK_IN_PORT] = { "in_port", false },
	[MK_TERMINAL] = { "terminal", false },
	[MK_SRC] = { "src", false },
	[MK_DST] = { "dst", false },
	[MK_PROTO] = { "proto", false },
	[MK_SPORTS] = { "src_ports", false },
	[MK_DPORTS] = { "dst_ports", false },
	[MK_DSCP] = { "dscp", false },
	[MK_SPI] = { "esp_spi", false },
};

/* Names match.proto takes, and the dump writes back (policy_dump.c). */
const struct proto_name proto_names[] = {
	{ "tcp", 6 }, { "udp", 17 }, { "esp", 50 }, { "ah", 51 }, { "icmp", 1 },
	{ "icmpv6", 58 }, { "gre", 47 }, { "sctp", 132 },
};

static bool
get_proto(struct ld *ld, const struct ynode *v, uint8_t *out)
{
	char sb[SHOW_MAX + 8], hb[96];
	struct suggest sg;
	uint64_t x;
	unsigned int i;

	if (!want_scalar(ld, v, "proto", "a protocol name or number"))
		return false;
	if (v->u.s[0] >= '0' && v->u.s[0] <= '9') {
		if (!get_uint(ld, v, "proto", 0, 255, &x))
			return false;
		*out = (uint8_t)x;
		return true;
	}
	for (i = 0; i < N_PROTO_NAMES; i++) {
		if (seq(v, proto_names[i].name)) {
			*out = proto_names[i].num;
			return true;
		}
	}
	suggest_init(&sg, v->u.s, v->n);
	for (i = 0; i < N_PROTO_NAMES; i++)
		suggest_try(&sg, proto_names[i].name);
	ERR(ld, v, "unknown protocol %s%s; use tcp, udp, esp, ah, icmp, icmpv6, gre, sctp "
	    "or a number 0..255", show(v, sb, sizeof(sb)), suggest_text(&sg, hb, sizeof(hb)));
	return false;
}

static uint8_t
prefix_list(struct ld *ld, const struct ynode *v, const char *key, struct sgw_prefix *dst,
	    unsigned int *families)
{
	struct list l;
	uint8_t n = 0;
	uint32_t i;

	*families = 0;
	if (v == NULL || !get_list(ld, v, key, 1, SGW_RULE_PREFIX_MAX, &l))
		return 0;
	for (i = 0; i < l.n; i++) {
		if (get_prefix(ld, l.items[i], key, &dst[n])) {
			*families |= dst[n].family == 4 ? 1u : 2u;
			n++;
		}
	}
	return n;
}

static uint8_t
range16_list(struct ld *ld, const struct ynode *v, const char *key, struct sgw_range16 *dst)
{
	struct list l;
	uint64_t lo, hi;
	uint8_t n = 0;
	uint32_t i;

	if (v == NULL || !get_list(ld, v, key, 1, SGW_RULE_RANGE_MAX, &l))
		return 0;
	for (i = 0; i < l.n; i++) {
		if (get_range(ld, l.items[i], key, "port", 65535, &lo, &hi)) {
			dst[n].lo = (uint16_t)lo;
			dst[n].hi = (uint16_t)hi;
			n++;
		}
	}
	return n;
}

static void
load_match(struct ld *ld, const struct ynode *m, struct sgw_rule *r)
{
	const struct ynode *vals[NKEYS(match_keys)], *keys[NKEYS(match_keys)];
	unsigned int fam_src = 0, fam_dst = 0;
	struct list l;
	uint64_t lo, hi;
	int64_t idx;
	uint32_t i;

	m = get_map(ld, m, "match");
	if (m == NULL)
		return;
	map_fields(ld, m, "rule match", match_keys, NKEYS(match_keys), vals, keys, false);
	if (vals[MK_IN_PORT]) {
		idx = resolve(ld, &ld->ports, vals[MK_IN_PORT], "in_port", "port");
		if (idx >= 0 && idx < SGW_MAX_PORTS)
			r->in_port = (int16_t)idx;
	}
	if (vals[MK_TERMINAL]) {
		idx = resolve(ld, &ld->terms, vals[MK_TERMINAL], "terminal", "terminal");
		if (idx >= 0)
			r->terminal = (int32_t)idx;
	}
	r->n_src = prefix_list(ld, vals[MK_SRC], "src", r->src, &fam_src);
	r->n_dst = prefix_list(ld, vals[MK_DST], "dst", r->dst, &fam_dst);
	/* fam_*: bit 0 IPv4, bit 1 IPv6. A packet has one family for both addresses. */
	if (r->n_src && r->n_dst && (fam_src & fam_dst) == 0)
		ERR(ld, vals[MK_DST], "this rule can never match: its src prefixes are all "
		    "IPv%u and its dst prefixes all IPv%u", fam_src == 1 ? 4 : 6,
		    fam_dst == 1 ? 4 : 6);
	if (vals[MK_PROTO] && get_list(ld, vals[MK_PROTO], "proto", 1, SGW_RULE_PROTO_MAX, &l))
		for (i = 0; i < l.n; i++)
			if (get_proto(ld, l.items[i], &r->proto[r->n_proto]))
				r->n_proto++;
	r->n_sport = range16_list(ld, vals[MK_SPORTS], "src_ports", r->sport);
	r->n_dport = range16_list(ld, vals[MK_DPORTS], "dst_ports", r->dport);
	if (vals[MK_DSCP] && get_list(ld, vals[MK_DSCP], "dscp", 1, 64, &l)) {
		for (i = 0; i < l.n; i++) {
			if (!get_range(ld, l.items[i], "dscp", "DSCP", 63, &lo, &hi))
				continue;
			for (; lo <= hi; lo++)
				r->dscp_mask |= (uint64_t)1 << lo;
		}
	}
	if (vals[MK_SPI] && get_list(ld, vals[MK_SPI], "esp_spi", 1, SGW_RULE_RANGE_MAX, &l)) {
		for (i = 0; i < l.n; i++) {
			if (!get_range(ld, l.items[i], "esp_spi", "SPI", UINT32_MAX, &lo, &hi))
				continue;
			r->spi[r->n_spi].lo = (uint32_t)lo;
			r->spi[r->n_spi].hi = (uint32_t)hi;
			r->n_spi++;
		}
	}
}

void
load_rules(struct ld *ld, const struct ynode *key, const struct ynode *v)
{
	/* A rule may name a satlink service when the policy has a satlink section. */
	const struct ynode *slv = section_value(ld, "satlink");
	bool has_satlink = slv != NULL && slv->kind != YN_BAD && !is_null(slv);
	struct sgw_policy *p = ld->p;
	const struct ynode *vals[NKEYS(rule_keys)], *keys[NKEYS(rule_keys)];
	const struct ynode **names;
	struct ntab rt = { NULL, 0, false };
	/* The action names come from lib (sgw_action_name): one list, never two. */
	const char *action_names[SGW_ACT__COUNT];
	struct list l;
	uint32_t i;

	for (i = 0; i < SGW_ACT__COUNT; i++)
		action_names[i] = sgw_action_name((enum sgw_action)i);
	if (!get_section(ld, v, "rules", 0, SGW_MAX_RULES, &l) || l.n == 0)
		return;
	names = collect_names(ld, &l);
	p->rules = malloc(sizeof(*p->rules) * l.n);
	if (names == NULL || p->rules == NULL) {
		free(names);
		oom(ld);
		return;
	}
	p->n_rules = l.n;
	ntab_build(ld, &rt, names, l.n, "rule");
	free(rt.e);
	free(names);

	for (i = 0; i < l.n; i++) {
		const struct ynode *e = l.items[i];
		struct sgw_rule *r = &p->rules[i];
		unsigned int en;
		int64_t idx;

		sgw_rule_init(r);
		if (!entry_is_map(ld, e, "rules"))
			continue;
		map_fields(ld, e, "rule", rule_keys, NKEYS(rule_keys), vals, keys, false);
		check_required(ld, e, "rule", name_or_null(vals[RK_NAME]), rule_keys,
			       NKEYS(rule_keys), vals);
		if (vals[RK_NAME])
			get_name(ld, vals[RK_NAME], "name", r->name);
		if (vals[RK_MATCH])
			load_match(ld, vals[RK_MATCH], r);
		if (vals[RK_ACTION] &&
		    get_enum(ld, vals[RK_ACTION], "action", action_names, SGW_ACT__COUNT, &en)) {
			r->action = (enum sgw_action)en;
			if (!sgw_action_built(r->action))
				ERR(ld, vals[RK_ACTION], "action '%s' is not built yet in this "
				    "version of satgw", action_names[en]);
		}
		load_rule_split(ld, r, keys[RK_HANDSHAKE], vals[RK_HANDSHAKE], vals[RK_ACTION]);
		if (vals[RK_NEXT_HOP]) {
			idx = resolve(ld, &ld->nhops, vals[RK_NEXT_HOP], "next_hop", "next_hop");
			if (idx >= 0 && idx < SGW_MAX_NEXT_HOPS)
				r->next_hop = (int16_t)idx;
			if (vals[RK_ACTION] && r->action == SGW_ACT_DROP)
				ERR(ld, keys[RK_NEXT_HOP], "'next_hop' is only allowed with "
				    "action forward or count (this rule drops)");
		}
		if (vals[RK_SATLINK]) {
			if (get_enum(ld, vals[RK_SATLINK], "satlink", sl_service_names,
				     N_SL_SERVICES, &en))
				r->sl_service = (enum sgw_sl_service)(en + SGW_SL_SVC_RELIABLE);
			if (!has_satlink)
				ERR(ld, keys[RK_SATLINK], "rule '%s' names a satlink service but "
				    "the policy has no satlink section",
				    name_or_null(vals[RK_NAME]) ?
				    name_or_null(vals[RK_NAME]) : "?");
			else if (vals[RK_ACTION] && r->action == SGW_ACT_DROP)
				ERR(ld, keys[RK_SATLINK], "'satlink' is only allowed with "
				    "action forward or count (this rule drops)");
		}
	}
}

/* -------------------------------------------------- limits and friends */

enum { LK_FLOWS, LK_MBUFS, LK_CACHE, LK_RING, LK_IDLE, LK_TIMERS };
static const struct keyspec limit_keys[] = {
	[LK_FLOWS] = { "flows_per_core", false },
	[LK_MBUFS] = { "mbufs", false },
	[LK_CACHE] = { "mbuf_cache", false },
	[LK_RING] = { "ring_size", false },
	[LK_IDLE] = { "flow_idle_ms", false },
	[LK_TIMERS] = { "timers_per_core", false },
};

enum { WK_BACKOFF, WK_SLEEP, WK_BURST, WK_DRAIN, WK_TICK };
static const struct keyspec worker_keys[] = {
	[WK_BACKOFF] = { "idle_backoff_us", false },
	[WK_SLEEP] = { "idle_sleep_us", false },
	[WK_BURST] = { "burst", false },
	[WK_DRAIN] = { "tx_drain_us", false },
	[WK_TICK] = { "timer_tick_us", false },
};

enum { XK_LIFT, XK_XCP };
static const struct keyspec proto_keys[] = {
	[XK_LIFT] = { "lift", false },
	[XK_XCP] = { "xcp", false },
};

/* Met at the top level, these keys get "belongs under 'limits:'" (or 'workers:'). */
const struct keyset limits_keyset = { limit_keys, NKEYS(limit_keys) };
const struct keyset workers_keyset = { worker_keys, NKEYS(worker_keys) };

void
load_limits(struct ld *ld, const struct ynode *key, const struct ynode *v)
{
	const struct ynode *vals[NKEYS(limit_keys)], *keys[NKEYS(limit_keys)];
	struct sgw_limits *lim = &ld->p->limits;
	uint32_t x;

	v = get_map(ld, v, "limits");
	if (v == NULL)
		return;
	map_fields(ld, v, "limits", limit_keys, NKEYS(limit_keys), vals, keys, false);
	get_u32(ld, vals[LK_FLOWS], "flows_per_core", 1024, 16777216, &lim->flows_per_core);
	get_u32(ld, vals[LK_MBUFS], "mbufs", 1023, 16777215, &lim->mbufs);
	get_u32(ld, vals[LK_CACHE], "mbuf_cache", 0, 512, &lim->mbuf_cache);
	if (get_u32(ld, vals[LK_RING], "ring_size", 256, 1048576, &x)) {
		/* rte_ring sizes are powers of two; better to say so than round. */
		if (x & (x - 1))
			ERR(ld, vals[LK_RING], "'ring_size' %" PRIu32 " is not a power of two",
			    x);
		else
			lim->ring_size = x;
	}
	get_u32(ld, vals[LK_IDLE], "flow_idle_ms", 1000, 86400000, &lim->flow_idle_ms);
	/* Every flow may hold a timer: the wheel defaults to one slot per flow. */
	if (vals[LK_TIMERS] == NULL)
		lim->timers_per_core = lim->flows_per_core;
	else
		get_u32(ld, vals[LK_TIMERS], "timers_per_core", 1024, 16777216,
			&lim->timers_per_core);
}

void
load_workers(struct ld *ld, const struct ynode *key, const struct ynode *v)
{
	const struct ynode *vals[NKEYS(worker_keys)], *keys[NKEYS(worker_keys)];
	struct sgw_workers_conf *w = &ld->p->workers;
	uint32_t x;

	v = get_map(ld, v, "workers");
	if (v == NULL)
		return;
	map_fields(ld, v, "workers", worker_keys, NKEYS(worker_keys), vals, keys, false);
	get_u32(ld, vals[WK_BACKOFF], "idle_backoff_us", 0, 1000000, &w->idle_backoff_us);
	get_u32(ld, vals[WK_SLEEP], "idle_sleep_us", 1, 100000, &w->idle_sleep_us);
	if (get_u32(ld, vals[WK_BURST], "burst", 1, 64, &x))
		w->burst = (uint16_t)x;
	if (get_u32(ld, vals[WK_DRAIN], "tx_drain_us", 1, 10000, &x))
		w->tx_drain_us = (uint16_t)x;
	get_u32(ld, vals[WK_TICK], "timer_tick_us", 10, 100000, &w->timer_tick_us);
}

/* Protocol numbers LIFT and XCP must not take from traffic satgw classifies. */
static const char *
proto_taken(uint32_t x)
{
	unsigned int i;

	for (i = 0; i < N_PROTO_NAMES; i++)
		if (proto_names[i].num == x && x != 51 && x != 47 && x != 132)
			return proto_names[i].name;
	return NULL;
}

void
load_protocols(struct ld *ld, const struct ynode *key, const struct ynode *v)
{
	const struct ynode *vals[NKEYS(proto_keys)], *keys[NKEYS(proto_keys)];
	struct sgw_policy *p = ld->p;
	bool lift_ok = false;
	const char *taken;
	uint32_t x;

	v = get_map(ld, v, "protocols");
	if (v == NULL)
		return;
	map_fields(ld, v, "protocols", proto_keys, NKEYS(proto_keys), vals, keys, false);
	if (get_u32(ld, vals[XK_LIFT], "lift", 1, 255, &x)) {
		taken = proto_taken(x);
		if (taken != NULL) {
			ERR(ld, vals[XK_LIFT], "'lift' %" PRIu32 " is the protocol number of %s",
			    x, taken);
		} else {
			p->lift_proto = (uint8_t)x;
			lift_ok = true;
		}
	}
	if (get_u32(ld, vals[XK_XCP], "xcp", 1, 255, &x)) {
		taken = proto_taken(x);
		if (taken != NULL)
			ERR(ld, vals[XK_XCP], "'xcp' %" PRIu32 " is the protocol number of %s",
			    x, taken);
		else if (x == p->lift_proto && (lift_ok || vals[XK_LIFT] == NULL))
			ERR(ld, vals[XK_XCP], "'xcp' %" PRIu32 " is the same protocol number "
			    "as 'lift'", x);
		else
			p->xcp_proto = (uint8_t)x;
	}
	/* lift moved onto the default xcp number without xcp moving away. */
	if (lift_ok && vals[XK_XCP] == NULL && p->lift_proto == p->xcp_proto)
		ERR(ld, vals[XK_LIFT], "'lift' %u is the same protocol number as 'xcp' "
		    "(default %u): move 'xcp' too", p->lift_proto, p->xcp_proto);
}
