/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The BS-LIFT stage (lift.h; issue 8, docs/lift.md "The dataplane stage").
 * Owns, per worker, one lib/sgw_lift.h machine (the TCP Flow Table of the
 * terminals the worker owns, their downlink SAs and held ACK pairs) and one
 * timer-wheel timer per flow; carries out the machine's actions on mbufs.
 *
 * The path of a LIFT packet: the mobile host's agent sends it through the
 * terminal, whose satlink stage carries FrACKs as datagrams and the rest
 * reliably (satlink.c, lift_service); the hub's satlink session delivers the
 * IP packet into the pipeline through the re-inject queue as if received on
 * the satlink port, with satlink's authenticated-delivery flag set when the
 * session has AES-GCM on. Only such packets reach the machine (section III of
 * the seed); anything else of class lift is dropped by reason.
 *
 * What the stage sends on re-enters the pipeline through the re-inject queue,
 * so the policy (rules, next hops, the flow table, satlink) treats it like any
 * other packet: a stripped TCP ACK or FrACK is plain ESP from the satlink port
 * (to the fixed host by the rules), a Setup-/Teardown-ACK is a LIFT packet from
 * the terrestrial side that the stage itself marked (its own mbuf flag) and
 * sends by the rules toward the terminal, where satlink carries it reliably.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>

#include "emit.h"
#include "lift.h"
#include "satlink.h"
#include "seqlock.h"
#include "sgw_dp.h"
#include "sgw_tev.h"
#include "stage.h"
#include "tx.h"

#define LD(dp) ((struct sgw_lift_dp *)(dp)->sdata[SGW_STAGE_LIFT])
#define LW(w) sgw_lift_worker_of(w)

#define LIFT_SELF_FLAG_NAME "sgw_lift_self"
#define LIFT_PUB_NS 10000000ull     /* publish the machine's counters every 10 ms */
#define LIFT_DEFER_NS 1000ull       /* an expiry put off: the next tick */
#define MS ((uint64_t)1000000)

static const char *const lift_drop_names[SGW_LD__COUNT] = {
	[SGW_LD_NOT_FROM_SATELLITE] = "lift_not_from_satellite",
	[SGW_LD_UNAUTHENTICATED] = "lift_unauthenticated",
	[SGW_LD_BAD] = "lift_bad",
	[SGW_LD_FRACK_SUPERSEDED] = "lift_frack_superseded",
	[SGW_LD_FRACK_STALE] = "lift_frack_stale",
	[SGW_LD_FRACK_UNUSED] = "lift_frack_unused",
	[SGW_LD_DUP_SUPERSEDED] = "lift_dup_superseded",
	[SGW_LD_UNKNOWN_FLOW] = "lift_unknown_flow",
	[SGW_LD_FLOW_GONE] = "lift_flow_gone",
	[SGW_LD_UNEXPECTED] = "lift_unexpected",
	[SGW_LD_NO_ROOM] = "lift_no_room",
	[SGW_LD_CHAINED] = "lift_chained",
	[SGW_LD_STRIP] = "lift_strip",
};

static const char *const lift_ctr_names[SGW_LC__COUNT] = {
	[SGW_LC_RX] = "rx",
	[SGW_LC_TO_FH] = "to_fixed_host",
	[SGW_LC_ESP_DOWN] = "esp_down_noted",
	[SGW_LC_ESP_SEEN] = "esp_down_seen",
	[SGW_LC_CTRL_ACKS] = "ctrl_acks_sent",
	[SGW_LC_CTRL_ACK_NO_MBUF] = "ctrl_ack_no_mbuf",
	[SGW_LC_TIMER_FAIL] = "timer_no_room",
	[SGW_LC_TIMER_DEFER] = "timer_deferred",
};

static const char *const lift_orig_names[SGW_LIFT_ORIG__COUNT] = { "lift_ctrl_acks" };
static const char *const lift_cons_names[SGW_LIFT_CONS__COUNT] = { "lift_ctrl_taken" };

/* The machine's drop codes -> the stage's reasons (CONSUMED is not a loss). */
static const uint8_t drop_of_lib[SGW_LIFT_DROP__COUNT] = {
	[SGW_LIFT_DROP_FRACK_SUPERSEDED] = SGW_LD_FRACK_SUPERSEDED,
	[SGW_LIFT_DROP_FRACK_STALE] = SGW_LD_FRACK_STALE,
	[SGW_LIFT_DROP_FRACK_UNUSED] = SGW_LD_FRACK_UNUSED,
	[SGW_LIFT_DROP_DUP_SUPERSEDED] = SGW_LD_DUP_SUPERSEDED,
	[SGW_LIFT_DROP_UNKNOWN_FLOW] = SGW_LD_UNKNOWN_FLOW,
	[SGW_LIFT_DROP_UNTRUSTED] = SGW_LD_UNAUTHENTICATED,
	[SGW_LIFT_DROP_BAD] = SGW_LD_BAD,
	[SGW_LIFT_DROP_FLOW_GONE] = SGW_LD_FLOW_GONE,
	[SGW_LIFT_DROP_CONSUMED] = SGW_LD_BAD,   /* not used: consumed */
	[SGW_LIFT_DROP_UNEXPECTED] = SGW_LD_UNEXPECTED,
};

/* The stage's own mark on the acknowledgements it builds (see the file comment). */
static inline uint64_t
self_flag(const struct sgw_dp *dp)
{
	return LD(dp)->self;
}

/* One of the stage's drop reasons, summed over workers. */
uint64_t
sgw_lift_drop_total(const struct sgw_dp *dp, enum sgw_ld_drop why)
{
	unsigned int d = sgw_stage_drop_base(SGW_STAGE_LIFT) + why;
	uint64_t v = 0;
	uint32_t i;

	for (i = 0; i < dp->n_workers; i++)
		if (dp->workers[i] != NULL)
			v += __atomic_load_n(&dp->workers[i]->c.drop[d], __ATOMIC_RELAXED);
	return v;
}

/* ---------------------------------------------------------------- helpers */

static inline void
addr_of(const struct sgw_pkt_info *pi, const uint8_t *a, struct sgw_lift_addr *out)
{
	if (pi->ip_ver == 4)
		*out = sgw_lift_addr_v4(a);
	else
		memcpy(out->b, a, sizeof(out->b));
}

static inline void
lift_drop(struct sgw_worker *w, struct rte_mbuf *m, enum sgw_ld_drop why)
{
	sgw_drop(w, m, (enum sgw_drop)(LW(w)->drop_base + why));
}

static void
publish(struct sgw_lift_worker *lw, uint64_t now)
{
	sgw_seq_write_begin(&lw->pub_seq);
	sgw_lift_get_stats(lw->l, &lw->pub);
	sgw_seq_write_end(&lw->pub_seq);
	lw->pub_ns = now;
}

/*
 * A TCP ACK or FrACK the machine forwards: strip its LIFT header in place (IP
 * header moved 8 bytes up, protocol := next header; the Ethernet header
 * follows it) and hand it back to the pipeline: plain ESP from the satlink
 * port, which the rules send to the fixed host. Satlink delivered it with a
 * bare Ethernet header (no VLAN), which is all this accepts.
 */
static void
to_fh(struct sgw_worker *w, const struct sgw_lift_dp *ld, uint8_t proto, struct rte_mbuf *m)
{
	uint8_t *d = rte_pktmbuf_mtod(m, uint8_t *);
	uint32_t len = rte_pktmbuf_data_len(m);
	size_t k = 0;

	if (len > RTE_ETHER_HDR_LEN) {
		uint16_t et = (uint16_t)(d[12] << 8 | d[13]);

		if (et == RTE_ETHER_TYPE_IPV4)
			k = sgw_lift_strip_ipv4(d + RTE_ETHER_HDR_LEN, len - RTE_ETHER_HDR_LEN,
						proto);
		else if (et == RTE_ETHER_TYPE_IPV6)
			k = sgw_lift_strip_ipv6(d + RTE_ETHER_HDR_LEN, len - RTE_ETHER_HDR_LEN,
						proto);
	}
	if (k == 0) {
		lift_drop(w, m, SGW_LD_STRIP);
		return;
	}
	memmove(d + k, d, RTE_ETHER_HDR_LEN);
	rte_pktmbuf_adj(m, (uint16_t)k);
	/* What it is now is plain ESP: nothing downstream may take it for LIFT. */
	m->ol_flags &= ~ld->auth_flag;
	LW(w)->ctr[SGW_LC_TO_FH]++;
	sgw_reinject(w, m);
}

/*
 * A Setup-/Teardown-ACK to the mobile host (wire-formats.md): IP from the
 * address the request was sent to, LIFT protocol, the 8-byte header. It
 * enters the pipeline as if from the terrestrial side (so the terminal is
 * looked up by destination and the rules route it to the satlink port),
 * marked with the stage's own flag, which no port can set.
 */
static void
send_ctrl_ack(struct sgw_worker *w, const struct sgw_lift_dp *ld, uint8_t proto,
	      const struct sgw_lift_act *a, const struct sgw_pkt_info *req)
{
	struct sgw_lift_worker *lw = LW(w);
	uint16_t l3 = req != NULL && req->ip_ver == 6 ? 40 : 20;
	struct rte_ether_hdr *eh;
	struct rte_mbuf *m;
	uint8_t *ip;

	if (req == NULL || (req->ip_ver != 4 && req->ip_ver != 6))
		return;
	m = rte_pktmbuf_alloc(w->dp->pool);
	if (m == NULL) {
		lw->ctr[SGW_LC_CTRL_ACK_NO_MBUF]++;
		return;
	}
	eh = (struct rte_ether_hdr *)rte_pktmbuf_append(m, RTE_ETHER_HDR_LEN + l3 +
							   SGW_LIFT_LEN);
	if (eh == NULL) {
		lw->ctr[SGW_LC_CTRL_ACK_NO_MBUF]++;
		rte_pktmbuf_free(m);
		return;
	}
	rte_ether_addr_copy(&w->dp->ports[ld->ack_pidx].mac, &eh->dst_addr);
	rte_ether_addr_copy(&w->dp->ports[ld->ack_pidx].mac, &eh->src_addr);
	ip = (uint8_t *)(eh + 1);
	memset(ip, 0, l3);
	if (l3 == 20) {
		struct rte_ipv4_hdr *h = (struct rte_ipv4_hdr *)ip;

		eh->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
		h->version_ihl = 0x45;
		h->total_length = rte_cpu_to_be_16(20 + SGW_LIFT_LEN);
		h->time_to_live = 64;
		h->next_proto_id = proto;
		memcpy(&h->src_addr, req->dst, 4);
		memcpy(&h->dst_addr, &a->mh.b[12], 4);
		h->hdr_checksum = rte_ipv4_cksum(h);
	} else {
		eh->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV6);
		ip[0] = 0x60;
		ip[4] = 0;
		ip[5] = SGW_LIFT_LEN;
		ip[6] = proto;
		ip[7] = 64;
		memcpy(ip + 8, req->dst, 16);
		memcpy(ip + 24, a->mh.b, 16);
	}
	sgw_lift_build_ctrl_ack(ip + l3, SGW_LIFT_LEN, a->code2, a->flow_id, a->spi, a->code);
	m->port = ld->ack_port_id;
	m->ol_flags |= self_flag(w->dp);
	lw->orig[SGW_LIFT_ORIG_CTRL_ACK]++;
	lw->ctr[SGW_LC_CTRL_ACKS]++;
	sgw_reinject(w, m);
}

/*
 * Carry out the machine's actions; req: the packet of this call (NULL: a
 * timer). The LIFT protocol number is the snapshot's (protocols.lift is
 * reloadable: the parser and the strip must agree).
 */
static void
run_actions(struct sgw_worker *w, const struct sgw_snapshot *s, const struct sgw_lift_dp *ld,
	    const struct sgw_lift_out *o, const struct sgw_pkt_info *req)
{
	uint8_t proto = s->pol.lift_proto;
	struct sgw_lift_worker *lw = LW(w);
	uint32_t i;

	for (i = 0; i < o->n; i++) {
		const struct sgw_lift_act *a = &o->act[i];
		struct rte_mbuf *m = (struct rte_mbuf *)(uintptr_t)a->handle;

		switch (a->type) {
		case SGW_LIFT_ACT_FORWARD:
			to_fh(w, ld, proto, m);
			break;
		case SGW_LIFT_ACT_DROP:
			if (a->code == SGW_LIFT_DROP_CONSUMED) {
				lw->cons[SGW_LIFT_CONS_CTRL]++;
				rte_pktmbuf_free(m);
			} else {
				lift_drop(w, m, a->code < SGW_LIFT_DROP__COUNT ?
					  (enum sgw_ld_drop)drop_of_lib[a->code] : SGW_LD_BAD);
			}
			break;
		case SGW_LIFT_ACT_TIMER_ARM:
			if (a->flow >= ld->conf.max_flows)
				break;
			lw->tgen[a->flow] = a->gen;
			if (sgw_tev_arm(w->tw, &lw->th[a->flow], SGW_STAGE_LIFT, 0, a->flow,
					a->at > w->now_ns ? a->at - w->now_ns : 0) != 0)
				lw->ctr[SGW_LC_TIMER_FAIL]++;
			break;
		case SGW_LIFT_ACT_TIMER_CANCEL:
			if (a->flow < ld->conf.max_flows)
				sgw_tev_stop(w->tw, &lw->th[a->flow]);
			break;
		case SGW_LIFT_ACT_CTRL_ACK:
			send_ctrl_ack(w, ld, proto, a, req);
			break;
		default:
			break;
		}
	}
}

/* ------------------------------------------------------------ the stage */

/* One LIFT packet: trusted only from the satlink port with the authenticated flag. */
static void
lift_one(struct sgw_worker *w, const struct sgw_snapshot *s, const struct sgw_lift_dp *ld,
	 struct rte_mbuf *m, const struct sgw_pkt_meta *pm)
{
	struct sgw_lift_worker *lw = LW(w);
	const struct sgw_pkt_info *pi = &pm->info;
	struct sgw_lift_out o = { .act = lw->act, .n = 0, .cap = SGW_LIFT_ACT_CAP };
	uint64_t self = self_flag(w->dp);
	struct sgw_lift_addr mh;
	uint32_t len;

	if (m->ol_flags & self) {
		/* One of our acknowledgements: by the rules, toward its terminal. */
		m->ol_flags &= ~self;
		sgw_emit(w, s, m, pm->pidx, pi, pm->term,
			 sgw_rule_for(s, pi, pm->pidx, pm->term));
		return;
	}
	lw->ctr[SGW_LC_RX]++;
	if (pm->pidx != ld->sat_pidx) {
		lift_drop(w, m, SGW_LD_NOT_FROM_SATELLITE);
		return;
	}
	if (!(m->ol_flags & ld->auth_flag)) {
		lift_drop(w, m, SGW_LD_UNAUTHENTICATED);
		return;
	}
	if (m->nb_segs > 1 && rte_pktmbuf_linearize(m) != 0) {
		lift_drop(w, m, SGW_LD_CHAINED);
		return;
	}
	/* Everything a call may hand back (forwards, an acknowledgement) must fit. */
	if (sgw_reinject_room(w) < SGW_LIFT_MIN_ROOM) {
		lift_drop(w, m, SGW_LD_NO_ROOM);
		return;
	}
	len = pi->l3_len - (uint32_t)(pi->l4_off - pi->l3_off);
	if ((uint32_t)pi->l4_off + len > rte_pktmbuf_data_len(m)) {
		lift_drop(w, m, SGW_LD_BAD);
		return;
	}
	addr_of(pi, pi->src, &mh);
	if (sgw_lift_rx(lw->l, w->now_ns, &mh, rte_pktmbuf_mtod_offset(m, uint8_t *, pi->l4_off),
			len, (uint64_t)(uintptr_t)m, 1, &o) != 0) {
		lift_drop(w, m, SGW_LD_NO_ROOM);
		return;
	}
	run_actions(w, s, ld, &o, pi);
}

/*
 * The local acknowledgement's input: ESP from the terrestrial side toward a
 * mobile host (downlink SA, sequence number). Noted before the flow stage
 * forwards it, which it then does as if this stage were not there.
 */
static void
esp_note(struct sgw_worker *w, const struct sgw_lift_dp *ld, const uint16_t *idx, uint16_t n)
{
	struct sgw_lift_worker *lw = LW(w);
	uint16_t j;

	for (j = 0; j < n; j++) {
		const struct sgw_pkt_meta *pm = &w->pm[idx[j]];
		struct sgw_lift_addr mh;

		if (pm->pidx == ld->sat_pidx || pm->info.ip_ver == 0)
			continue;
		lw->ctr[SGW_LC_ESP_SEEN]++;
		addr_of(&pm->info, pm->info.dst, &mh);
		if (sgw_lift_esp_down(lw->l, w->now_ns, &mh, pm->info.esp_spi, pm->info.esp_seq))
			lw->ctr[SGW_LC_ESP_DOWN]++;
	}
}

static void
lift_burst(struct sgw_worker *w, const struct sgw_snapshot *s, struct rte_mbuf **m,
	   const uint16_t *idx, uint16_t n)
{
	const struct sgw_lift_dp *ld = LD(w->dp);
	uint16_t j;

	/* A class burst is one class: ESP (note, then the flow stage) or LIFT. */
	if (w->pm[idx[0]].info.cls == SGW_CLASS_ESP) {
		esp_note(w, ld, idx, n);
		sgw_stages[SGW_STAGE_FLOW]->burst(w, s, m, idx, n);
		return;
	}
	for (j = 0; j < n; j++)
		lift_one(w, s, ld, m[idx[j]], &w->pm[idx[j]]);
}

static void
lift_timer(struct sgw_worker *w, const struct sgw_snapshot *s, uint32_t obj, uint8_t timer)
{
	const struct sgw_lift_dp *ld = LD(w->dp);
	struct sgw_lift_worker *lw = LW(w);
	struct sgw_lift_out o = { .act = lw->act, .n = 0, .cap = SGW_LIFT_ACT_CAP };

	RTE_SET_USED(timer);
	if (obj >= ld->conf.max_flows)
		return;
	sgw_tev_fired(&lw->th[obj]);
	if (sgw_reinject_room(w) < SGW_LIFT_MIN_ROOM) {
		/* No room for what it may forward now: the next tick. */
		lw->ctr[SGW_LC_TIMER_DEFER]++;
		if (sgw_tev_arm(w->tw, &lw->th[obj], SGW_STAGE_LIFT, 0, obj, LIFT_DEFER_NS) != 0)
			lw->ctr[SGW_LC_TIMER_FAIL]++;
		return;
	}
	if (sgw_lift_timer(lw->l, w->now_ns, obj, lw->tgen[obj], &o) == 0)
		run_actions(w, s, ld, &o, NULL);
}

static void
lift_loop(struct sgw_worker *w, const struct sgw_snapshot *s)
{
	struct sgw_lift_worker *lw = LW(w);

	RTE_SET_USED(s);
	if (w->now_ns - lw->pub_ns >= LIFT_PUB_NS)
		publish(lw, w->now_ns);
}

/* ----------------------------------------------------- setup and teardown */

static void
conf_of(const struct sgw_lift_policy *p, struct sgw_lift_conf *c)
{
	sgw_lift_conf_default(c);
	c->max_flows = p->max_flows;
	c->max_sas = p->max_sas;
	c->timer_mode = p->timer_mode == SGW_LIFT_TIMER_POL_ADAPTIVE ? SGW_LIFT_TIMER_ADAPTIVE :
								       SGW_LIFT_TIMER_FIXED;
	/* Fixed: this value. Adaptive: this value until the first RTT sample, and its ceiling. */
	c->timer_fixed_ns = p->timer_ms * MS;
	c->timer_max_ns = p->timer_ms * MS;
	c->timer_min_ns = p->timer_min_ms * MS;
	c->max_frozen_ns = p->max_frozen_ms * MS;
	c->share_window_ns = p->share_window_ms * MS;
	c->max_share_permille = p->max_share_permille;
	c->suspend_ns = p->suspend_ms * MS;
	c->thaw = p->thaw;
	c->spare_frack = p->spare_frack;
}

static int
lift_init(struct sgw_dp *dp, const struct sgw_policy *pol)
{
	static const struct rte_mbuf_dynflag self_desc = { .name = LIFT_SELF_FLAG_NAME };
	const struct sgw_sl *sl = sgw_sl_of(dp);
	struct sgw_lift_dp *ld;
	const char *bad;
	int16_t ack = -1;
	size_t sz;
	uint32_t i;
	int bit;

	if (!pol->lift.enabled || dp->bare_forward || pol->role != SGW_ROLE_HUB)
		return 0;
	/* The policy loader refuses this too: without keys LIFT could never be trusted. */
	if (sl == NULL || !sl->keyed || sl->auth_flag == 0) {
		SGW_LOG(ERR, "lift: needs satlink with AES-GCM keys (LIFT is accepted only from "
			"an authenticated satlink session)");
		return -1;
	}
	/* Acknowledgements enter from the satlink port's peer, else any other port. */
	ack = pol->ports[sl->pidx].peer;
	for (i = 0; ack < 0 && i < pol->n_ports; i++)
		if ((int16_t)i != sl->pidx && pol->ports[i].role != SGW_PORT_SATELLITE)
			ack = (int16_t)i;
	if (ack < 0) {
		SGW_LOG(ERR, "lift: no port besides the satlink port");
		return -1;
	}
	ld = rte_zmalloc("sgw_lift_dp", sizeof(*ld), RTE_CACHE_LINE_SIZE);
	if (ld == NULL)
		return -1;
	dp->sdata[SGW_STAGE_LIFT] = ld;
	ld->sat_pidx = sl->pidx;
	ld->ack_pidx = ack;
	ld->ack_port_id = dp->ports[ack].port_id;
	ld->proto = pol->lift_proto;
	ld->auth_flag = sl->auth_flag;
	conf_of(&pol->lift, &ld->conf);
	bad = sgw_lift_conf_check(&ld->conf);
	if (bad != NULL) {
		SGW_LOG(ERR, "lift: invalid setting (%s)", bad);
		return -1;
	}
	bit = rte_mbuf_dynflag_register(&self_desc);
	if (bit < 0) {
		SGW_LOG(ERR, "lift: cannot register the mbuf flag %s", LIFT_SELF_FLAG_NAME);
		return -1;
	}
	ld->self = RTE_BIT64(bit);
	sz = sgw_lift_mem_size(&ld->conf);
	for (i = 0; i < dp->n_workers; i++) {
		int socket = (int)rte_lcore_to_socket_id(dp->workers[i]->lcore);
		struct sgw_lift_worker *x;
		uint32_t f;

		x = rte_zmalloc_socket("sgw_lift_worker", sizeof(*x), RTE_CACHE_LINE_SIZE, socket);
		if (x == NULL)
			return -1;
		dp->workers[i]->sctx[SGW_STAGE_LIFT] = x;
		x->drop_base = sgw_stage_drop_base(SGW_STAGE_LIFT);
		x->mem = rte_malloc_socket("sgw_lift_mem", sz, RTE_CACHE_LINE_SIZE, socket);
		x->th = rte_malloc_socket("sgw_lift_th", sizeof(*x->th) * ld->conf.max_flows,
					  RTE_CACHE_LINE_SIZE, socket);
		x->tgen = rte_zmalloc_socket("sgw_lift_tgen", sizeof(*x->tgen) * ld->conf.max_flows,
					     RTE_CACHE_LINE_SIZE, socket);
		if (x->mem == NULL || x->th == NULL || x->tgen == NULL)
			return -1;
		for (f = 0; f < ld->conf.max_flows; f++)
			x->th[f] = SGW_TW_INVALID;
		x->l = sgw_lift_init(x->mem, sz, &ld->conf, 0);
		if (x->l == NULL)
			return -1;
		publish(x, 0);
	}
	/* Per LIFT packet at most a few forwards and an acknowledgement; per expiry two. */
	sgw_stage_reinject_room(dp, SGW_BURST_MAX * SGW_LIFT_MIN_ROOM + SGW_TW_BATCH * 4);
	SGW_LOG(INFO, "lift: BS-LIFT on, IP protocol %u, timer %s %u ms, %u flows per worker",
		ld->proto, pol->lift.timer_mode == SGW_LIFT_TIMER_POL_ADAPTIVE ? "adaptive" :
		"fixed", pol->lift.timer_ms, ld->conf.max_flows);
	return 1;
}

/* Shutdown: every flow removed; what the machines held is dropped (shutdown). */
static void
lift_drain(struct sgw_dp *dp)
{
	uint32_t i, k;

	for (i = 0; i < dp->n_workers; i++) {
		struct sgw_worker *w = dp->workers[i];
		struct sgw_lift_worker *lw;
		struct sgw_lift_out o;
		int rc;

		if (w == NULL || (lw = LW(w)) == NULL || lw->l == NULL)
			continue;
		do {
			o = (struct sgw_lift_out){ .act = lw->act, .n = 0, .cap = SGW_LIFT_ACT_CAP };
			rc = sgw_lift_drain(lw->l, w->now_ns, &o);
			for (k = 0; k < o.n; k++) {
				const struct sgw_lift_act *a = &o.act[k];

				if (a->type == SGW_LIFT_ACT_FORWARD || a->type == SGW_LIFT_ACT_DROP)
					sgw_drop(w, (struct rte_mbuf *)(uintptr_t)a->handle,
						 SGW_DROP_SHUTDOWN);
				else if (a->type == SGW_LIFT_ACT_TIMER_CANCEL &&
					 a->flow < LD(dp)->conf.max_flows)
					sgw_tev_stop(w->tw, &lw->th[a->flow]);
			}
		} while (rc == 1);
		publish(lw, w->now_ns);
	}
}

static void
lift_fini(struct sgw_dp *dp)
{
	uint32_t i;

	for (i = 0; i < dp->n_workers; i++) {
		struct sgw_worker *w = dp->workers[i];
		struct sgw_lift_worker *lw;

		if (w == NULL || (lw = LW(w)) == NULL)
			continue;
		rte_free(lw->mem);
		rte_free(lw->th);
		rte_free(lw->tgen);
		rte_free(lw);
		w->sctx[SGW_STAGE_LIFT] = NULL;
	}
	rte_free(dp->sdata[SGW_STAGE_LIFT]);
	dp->sdata[SGW_STAGE_LIFT] = NULL;
}

/* ------------------------------------------------------------- reporting */

/* Exact while the workers are stopped (the exit report, tests). */
static uint64_t
lift_held(const struct sgw_dp *dp)
{
	uint64_t n = 0;
	uint32_t i;

	for (i = 0; i < dp->n_workers; i++) {
		const struct sgw_lift_worker *lw;
		struct sgw_lift_stats st;

		if (dp->workers[i] == NULL || (lw = LW(dp->workers[i])) == NULL || lw->l == NULL)
			continue;
		sgw_lift_get_stats(lw->l, &st);
		n += st.held;
	}
	return n;
}

static void
lift_account(const struct sgw_dp *dp, uint64_t *orig, uint64_t *cons)
{
	uint32_t i;

	for (i = 0; i < dp->n_workers; i++) {
		const struct sgw_lift_worker *lw;

		if (dp->workers[i] == NULL || (lw = LW(dp->workers[i])) == NULL)
			continue;
		orig[0] += __atomic_load_n(&lw->orig[0], __ATOMIC_RELAXED);
		cons[0] += __atomic_load_n(&lw->cons[0], __ATOMIC_RELAXED);
	}
}

uint64_t
sgw_lift_dp_ctr(const struct sgw_dp *dp, enum sgw_lc_ctr c)
{
	uint64_t v = 0;
	uint32_t i;

	for (i = 0; i < dp->n_workers; i++)
		if (dp->workers[i] != NULL && LW(dp->workers[i]) != NULL)
			v += __atomic_load_n(&LW(dp->workers[i])->ctr[c], __ATOMIC_RELAXED);
	return v;
}

void
sgw_lift_dp_stats(const struct sgw_dp *dp, struct sgw_lift_stats *st)
{
	uint32_t i;
	size_t k;

	memset(st, 0, sizeof(*st));
	for (i = 0; i < dp->n_workers; i++) {
		const struct sgw_lift_worker *lw;
		struct sgw_lift_stats one;
		const uint64_t *src = (const uint64_t *)&one;
		uint64_t *dst = (uint64_t *)st;

		if (dp->workers[i] == NULL || (lw = LW(dp->workers[i])) == NULL)
			continue;
		sgw_seq_read(&lw->pub_seq, &one, &lw->pub, sizeof(one));
		/* The 64-bit counters add up; the four 32-bit gauges after them too. */
		for (k = 0; k < offsetof(struct sgw_lift_stats, flows) / sizeof(uint64_t); k++)
			dst[k] += src[k];
		st->flows += one.flows;
		st->sas += one.sas;
		st->held += one.held;
		st->frozen += one.frozen;
	}
}

/* The counters by name: the stage's, then the machine's. */
static void
lift_fields(const struct sgw_dp *dp, sgw_kv_fn fn, void *ctx)
{
	struct sgw_lift_stats st;
	char k[48];
	int i;

	for (i = 0; i < SGW_LC__COUNT; i++)
		fn(ctx, lift_ctr_names[i], sgw_lift_dp_ctr(dp, (enum sgw_lc_ctr)i));
	sgw_lift_dp_stats(dp, &st);
	for (i = 1; i < SGW_LIFT_DEC__COUNT; i++) {
		snprintf(k, sizeof(k), "rx_refused_%s", sgw_lift_dec_name(i));
		fn(ctx, k, st.rx_refused[i]);
	}
#define F(x) fn(ctx, #x, st.x)
	F(setups); F(setup_dup); F(setup_replaced); F(setup_full); F(setup_bad_proto);
	F(teardowns); F(teardown_unknown); F(d_deletes); F(ctrl_acks);
	F(acks_rx); F(fracks_rx); F(acks_fwd_now); F(acks_held); F(acks_released);
	F(dups_stored); F(dups_released); F(dups_superseded);
	F(freezes); F(freezes_spare); F(unfreezes); F(thaws); F(fracks_dropped); F(unknown_flow);
	F(untouched); F(clear_pkts); F(ack_beyond); F(flag_f); F(flag_s); F(flag_d);
	F(transitory); F(expiries); F(expiry_freeze); F(expiry_acked); F(expiry_idle);
	F(timer_stale); F(timer_early); F(esp_down); F(esp_other); F(esp_late); F(esp_gap);
	F(esp_jump); F(ooo_disable); F(ooo_enable); F(rtt_samples); F(rtt_discarded);
	F(susp_frozen); F(susp_share); F(susp_end); F(frozen_ns); F(no_room);
	F(flows); F(sas); F(held); F(frozen);
#undef F
}

struct lift_json {
	FILE *f;
	int n;
};

static void
lift_json_kv(void *arg, const char *k, uint64_t v)
{
	struct lift_json *j = arg;

	fprintf(j->f, "%s\"%s\": %" PRIu64, j->n++ ? ", " : "", k, v);
}

static void
lift_write_json(const struct sgw_dp *dp, FILE *f)
{
	const struct sgw_lift_dp *ld = LD(dp);
	struct lift_json j = { .f = f };

	fprintf(f, "  \"lift\": {\"protocol\": %u, \"timer\": \"%s\", \"timer_ms\": %" PRIu64
		", \"max_flows\": %u,\n    \"counters\": {", ld->proto,
		ld->conf.timer_mode == SGW_LIFT_TIMER_ADAPTIVE ? "adaptive" : "fixed",
		ld->conf.timer_fixed_ns / MS, ld->conf.max_flows);
	lift_fields(dp, lift_json_kv, &j);
	fprintf(f, "}\n  },\n");
}

static void
lift_print_summary(const struct sgw_dp *dp, FILE *f)
{
	struct sgw_lift_stats st;

	sgw_lift_dp_stats(dp, &st);
	fprintf(f, "  lift: %" PRIu64 " setups, %" PRIu64 " ACKs (%" PRIu64 " held), %" PRIu64
		" FrACKs, %" PRIu64 " freezes, %" PRIu64 " suspensions, refused %" PRIu64
		" not from satellite / %" PRIu64 " unauthenticated\n", st.setups, st.acks_rx,
		st.acks_held, st.fracks_rx, st.freezes, st.susp_frozen + st.susp_share,
		sgw_lift_drop_total(dp, SGW_LD_NOT_FROM_SATELLITE),
		sgw_lift_drop_total(dp, SGW_LD_UNAUTHENTICATED));
}

static void
lift_tel_kv(void *ctx, const char *k, uint64_t v)
{
	rte_tel_data_add_dict_u64(ctx, k, v);
}

static int
lift_telemetry(const struct sgw_dp *dp, const char *params, struct rte_tel_data *d)
{
	RTE_SET_USED(params);
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "protocol", LD(dp)->proto);
	lift_fields(dp, lift_tel_kv, d);
	return 0;
}

const struct sgw_stage_ops sgw_stage_lift = {
	.name = "lift",
	/* esp: noted toward the mobile hosts, then handed to the flow stage. */
	.classes = SGW_CLASS_BIT(SGW_CLASS_LIFT) | SGW_CLASS_BIT(SGW_CLASS_ESP),
	.init = lift_init,
	.drain = lift_drain,
	.fini = lift_fini,
	.burst = lift_burst,
	.timer = lift_timer,
	.loop = lift_loop,
	.held = lift_held,
	.drop_names = lift_drop_names,
	.n_drops = SGW_LD__COUNT,
	.orig_names = lift_orig_names,
	.cons_names = lift_cons_names,
	.n_orig = SGW_LIFT_ORIG__COUNT,
	.n_cons = SGW_LIFT_CONS__COUNT,
	.account = lift_account,
	.write_json = lift_write_json,
	.print_summary = lift_print_summary,
	.tel_cmd = "/satgw/lift",
	.tel_help = "satgw BS-LIFT: stage and flow-table counters",
	.telemetry = lift_telemetry,
};
