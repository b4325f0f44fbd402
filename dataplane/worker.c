/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The per-lcore poll loop: RX burst -> parse and sort the burst into
 * per-class arrays -> hand packets of other workers' terminals to their
 * owners -> one stage per class -> buffered TX drained on a TSC deadline.
 * Timers fire from the core's wheel once per loop, a bounded batch at a time.
 * No locks, no allocation; the policy is read from the RCU snapshot once per
 * loop and the worker reports a quiescent state after each loop.
 */
#include <string.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_hash.h>
#include <rte_lpm.h>
#include <rte_lpm6.h>
#include <rte_mbuf.h>
#include <rte_prefetch.h>
#include <rte_rcu_qsbr.h>
#include <rte_ring.h>

#include "flow_table.h"
#include "sgw_dp.h"
#include "sgw_timer_wheel.h"

#define RULE_UNKNOWN (-2)

static inline void
drop(struct sgw_worker *w, struct rte_mbuf *m, enum sgw_drop why)
{
	w->c.drop[why]++;
	rte_pktmbuf_free(m);
}

static void
tx_flush_port(struct sgw_worker *w, uint16_t pidx)
{
	struct sgw_txbuf *b = &w->tx[pidx];
	struct sgw_dp *dp = w->dp;
	uint64_t bytes = 0;
	uint16_t sent, i;

	if (b->n == 0)
		return;
	if (w->txq[pidx] >= 0) {
		for (i = 0; i < b->n; i++)
			bytes += rte_pktmbuf_pkt_len(b->m[i]);
		sent = rte_eth_tx_burst(dp->ports[pidx].port_id, (uint16_t)w->txq[pidx], b->m,
					b->n);
		for (i = sent; i < b->n; i++)
			bytes -= rte_pktmbuf_pkt_len(b->m[i]);
		w->c.tx_pkts[pidx] += sent;
		w->c.tx_bytes[pidx] += bytes;
	} else {
		/* No TX queue of our own on this port: the queue-0 owner sends for us. */
		sent = (uint16_t)rte_ring_enqueue_burst(dp->txring[pidx], (void **)b->m, b->n,
							NULL);
	}
	for (i = sent; i < b->n; i++)
		drop(w, b->m[i], SGW_DROP_TX_FULL);
	b->n = 0;
}

void
sgw_worker_flush(struct sgw_worker *w)
{
	uint16_t p;

	for (p = 0; p < w->dp->n_ports; p++)
		tx_flush_port(w, p);
}

static inline void
tx_add(struct sgw_worker *w, uint16_t pidx, struct rte_mbuf *m, uint16_t burst)
{
	struct sgw_txbuf *b = &w->tx[pidx];

	b->m[b->n++] = m;
	if (b->n >= burst)
		tx_flush_port(w, pidx);
}

/* Send one burst from a port's TX ring on our queue; returns packets taken. */
static uint16_t
drain_txring_burst(struct sgw_worker *w, uint16_t p, bool *driver_full)
{
	struct sgw_dp *dp = w->dp;
	struct rte_mbuf *m[SGW_BURST_MAX];
	uint64_t bytes = 0;
	uint16_t i, n, sent;

	n = (uint16_t)rte_ring_dequeue_burst(dp->txring[p], (void **)m, SGW_BURST_MAX, NULL);
	if (n == 0)
		return 0;
	for (i = 0; i < n; i++)
		bytes += rte_pktmbuf_pkt_len(m[i]);
	sent = rte_eth_tx_burst(dp->ports[p].port_id, (uint16_t)w->txq[p], m, n);
	for (i = sent; i < n; i++) {
		bytes -= rte_pktmbuf_pkt_len(m[i]);
		drop(w, m[i], SGW_DROP_TX_FULL);
	}
	w->c.tx_pkts[p] += sent;
	w->c.tx_bytes[p] += bytes;
	*driver_full = sent < n;
	return n;
}

void
sgw_worker_tx(struct sgw_worker *w, uint16_t pidx, struct rte_mbuf *m, uint16_t burst)
{
	tx_add(w, pidx, m, burst);
}

/* The queue-0 owner sends what workers without a TX queue on the port queued. */
uint32_t
sgw_worker_drain_txrings(struct sgw_worker *w)
{
	uint32_t total = 0, b;
	uint16_t p, n;

	for (p = 0; p < w->dp->n_ports; p++) {
		bool full = false;

		if (!w->drains_txring[p])
			continue;
		for (b = 0; b < SGW_RING_BURSTS_PER_LOOP && !full; b++) {
			n = drain_txring_burst(w, p, &full);
			if (n == 0)
				break;
			total += n;
		}
	}
	return total;
}

/*
 * Which side of a packet is the terminal: packets entering from where the
 * terminals live (the hub's satellite port, a terminal's LAN port) carry the
 * terminal's address as source; all others as destination. Looking up that
 * side first keeps both directions of a flow on the same terminal.
 */
static inline bool
terminal_is_src(const struct sgw_policy *p, uint16_t pidx)
{
	enum sgw_port_role r = p->ports[pidx].role;

	return (p->role == SGW_ROLE_HUB && r == SGW_PORT_SATELLITE) ||
	       (p->role == SGW_ROLE_TERMINAL && r == SGW_PORT_LAN);
}

static inline int32_t
lookup_addr(const struct sgw_snapshot *s, uint8_t ver, const uint8_t *a)
{
	uint32_t nh;

	if (ver == 4) {
		uint32_t ip;

		if (s->lpm4 == NULL)
			return -1;
		ip = ((uint32_t)a[0] << 24) | ((uint32_t)a[1] << 16) | ((uint32_t)a[2] << 8) | a[3];
		return rte_lpm_lookup(s->lpm4, ip, &nh) == 0 ? (int32_t)nh : -1;
	}
	if (s->lpm6 == NULL)
		return -1;
	return rte_lpm6_lookup(s->lpm6, a, &nh) == 0 ? (int32_t)nh : -1;
}

static inline int32_t
terminal_of(const struct sgw_snapshot *s, const struct sgw_pkt_info *pi, uint16_t pidx)
{
	const uint8_t *first = pi->dst, *second = pi->src;
	int32_t t;

	if (s->pol.n_terminals == 0)
		return -1;
	if (terminal_is_src(&s->pol, pidx)) {
		first = pi->src;
		second = pi->dst;
	}
	t = lookup_addr(s, pi->ip_ver, first);
	return t >= 0 ? t : lookup_addr(s, pi->ip_ver, second);
}

static inline void
match_key(const struct sgw_pkt_info *pi, uint16_t pidx, int32_t term, struct sgw_match_key *k)
{
	k->in_port = (int16_t)pidx;
	k->terminal = term;
	k->family = pi->ip_ver;
	k->proto = pi->esp_in_udp ? 50 : pi->ip_proto;
	k->dscp = pi->dscp;
	k->has_ports = (pi->cls == SGW_CLASS_TCP || pi->cls == SGW_CLASS_UDP ||
			(pi->cls == SGW_CLASS_ESP && pi->esp_in_udp));
	k->has_spi = pi->cls == SGW_CLASS_ESP;
	k->sport = pi->sport;
	k->dport = pi->dport;
	k->spi = pi->esp_spi;
	k->src = pi->src;
	k->dst = pi->dst;
}

static inline int32_t
rule_for(const struct sgw_snapshot *s, const struct sgw_pkt_info *pi, uint16_t pidx, int32_t term)
{
	struct sgw_match_key k;

	if (s->pol.n_rules == 0)
		return -1;
	match_key(pi, pidx, term, &k);
	return sgw_rules_lookup(&s->pol, &k);
}

/* Carry out the matched rule's action (or the default action) on one packet. */
static __rte_always_inline void
emit(struct sgw_worker *w, const struct sgw_snapshot *s, struct rte_mbuf *m, uint16_t pidx,
     const struct sgw_pkt_info *pi, int32_t term, int32_t rule)
{
	const struct sgw_policy *p = &s->pol;
	enum sgw_action act;
	int16_t nh = -1, out;

	if (rule >= 0) {
		struct sgw_rule_ctr *rc = &s->rule_ctr[(size_t)w->idx * p->n_rules + rule];

		rc->pkts++;
		rc->bytes += rte_pktmbuf_pkt_len(m);
		act = p->rules[rule].action;
		nh = p->rules[rule].next_hop;
	} else {
		w->c.unmatched++;
		act = p->default_action;
		if (act == SGW_ACT_DROP) {
			drop(w, m, SGW_DROP_DEFAULT);
			return;
		}
	}
	w->c.act[act]++;
	if (act == SGW_ACT_DROP) {
		drop(w, m, SGW_DROP_RULE);
		return;
	}
	if (nh >= 0) {
		struct rte_ether_hdr *eh = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);

		out = p->next_hops[nh].port;
		memcpy(&eh->dst_addr, p->next_hops[nh].mac, RTE_ETHER_ADDR_LEN);
		rte_ether_addr_copy(&w->dp->ports[out].mac, &eh->src_addr);
	} else {
		out = p->ports[pidx].peer;
		if (out < 0) {
			drop(w, m, SGW_DROP_NO_ROUTE);
			return;
		}
	}
	if (w->dp->sl != NULL && out == w->dp->sl->pidx) {
		/* Leaving by the satlink port: the link layer carries it (or bypasses it). */
		sgw_sl_emit(w, s, m, pi, term, rule);
		return;
	}
	tx_add(w, (uint16_t)out, m, p->workers.burst);
}

/* TCP, UDP and ESP: bulk flow lookup, create on miss, rule cached per flow and direction. */
static void
stage_flows(struct sgw_worker *w, const struct sgw_snapshot *s, struct rte_mbuf **m,
	    const uint16_t *idx, uint16_t n)
{
	struct sgw_flow_table *ft = w->flows;
	struct sgw_flow_key keys[SGW_BURST_MAX];
	const struct sgw_flow_key *kp[SGW_BURST_MAX];
	int32_t pos[SGW_BURST_MAX];
	uint8_t dir[SGW_BURST_MAX];
	uint16_t j;

	if (n == 0)
		return;
	for (j = 0; j < n; j++) {
		dir[j] = (uint8_t)sgw_flow_key_from_info(&w->info[idx[j]], &keys[j]);
		kp[j] = &keys[j];
	}
	sgw_flow_lookup_bulk(ft, kp, n, pos);

	for (j = 0; j < n; j++) {
		uint16_t i = idx[j];
		const struct sgw_pkt_info *pi = &w->info[i];
		uint16_t pidx = w->pidx[i];
		struct sgw_flow *f;
		int32_t fp = pos[j], *cached;
		uint8_t d = dir[j];

		/* A miss may be a flow an earlier packet of this burst created. */
		if (fp < 0)
			fp = rte_hash_lookup(ft->h, &keys[j]);
		if (fp >= 0) {
			w->c.flow_hits++;
		} else {
			fp = sgw_flow_add(ft, w->tw, &keys[j], w->now_ns);
			if (fp < 0) {
				w->c.flows_bypassed++;
				emit(w, s, m[i], pidx, pi, w->term[i],
				     rule_for(s, pi, pidx, w->term[i]));
				continue;
			}
			w->c.flows_created++;
		}
		f = &ft->e[fp];
		f->last_ns = w->now_ns;
		f->pkts[d]++;
		f->bytes[d] += rte_pktmbuf_pkt_len(m[i]);
		if (f->rule_gen != s->gen) {
			f->rule_gen = s->gen;
			f->rule[0] = f->rule[1] = RULE_UNKNOWN;
			f->terminal = w->term[i];
		}
		cached = &f->rule[d];
		/*
		 * The cache holds while what a rule can match on is constant for the
		 * flow and direction. DSCP may change from packet to packet: when
		 * some rule matches on DSCP, a packet whose DSCP differs from the one
		 * the rule was found with is looked up again.
		 */
		if (*cached == RULE_UNKNOWN || (s->rules_dscp && f->rule_dscp[d] != pi->dscp)) {
			*cached = rule_for(s, pi, pidx, w->term[i]);
			f->rule_dscp[d] = pi->dscp;
		}
		emit(w, s, m[i], pidx, pi, w->term[i], *cached);
	}
}

/* ICMP, LIFT, XCP, other IP, non-IP (and satlink frames without a satlink section): no flow state. */
static void
stage_stateless(struct sgw_worker *w, const struct sgw_snapshot *s, struct rte_mbuf **m,
		const uint16_t *idx, uint16_t n)
{
	uint16_t j;

	for (j = 0; j < n; j++) {
		uint16_t i = idx[j];

		emit(w, s, m[i], w->pidx[i], &w->info[i], w->term[i],
		     rule_for(s, &w->info[i], w->pidx[i], w->term[i]));
	}
}

static void
stage_malformed(struct sgw_worker *w, const struct sgw_snapshot *s, struct rte_mbuf **m,
		const uint16_t *idx, uint16_t n)
{
	uint16_t j;

	for (j = 0; j < n; j++) {
		uint16_t i = idx[j];
		int16_t out = s->pol.ports[w->pidx[i]].peer;

		w->c.malformed[w->info[i].reason]++;
		if (s->pol.malformed == SGW_MALFORMED_FORWARD && out >= 0)
			tx_add(w, (uint16_t)out, m[i], s->pol.workers.burst);
		else
			drop(w, m[i], SGW_DROP_MALFORMED);
	}
}

/*
 * Send packets owned by other workers to them. The owner is the terminal's
 * shard, or for traffic of no terminal a symmetric hash of the addresses, so
 * both directions of a flow meet on one worker. Removes handed-off packets
 * from the class arrays.
 */
static void
handoff(struct sgw_worker *w, const struct sgw_snapshot *s, struct rte_mbuf **m, uint16_t n)
{
	struct sgw_dp *dp = w->dp;
	uint8_t owner[SGW_BURST_MAX];
	uint64_t others = 0;
	uint16_t c, i, j, k;

	for (i = 0; i < n; i++)
		owner[i] = (uint8_t)w->idx;
	for (c = 0; c < SGW_CLASS_NON_IP; c++) {
		uint16_t *idx = w->cls.idx[c];

		for (j = 0, k = 0; j < w->cls.n[c]; j++) {
			uint32_t o;

			i = idx[j];
			if (c == SGW_CLASS_SATLINK)
				o = w->sl_sess[i] >= 0 ? dp->sl->sess[w->sl_sess[i]].owner : w->idx;
			else if (w->term[i] >= 0)
				o = s->term_owner[w->term[i]];
			else
				o = (uint32_t)(((uint64_t)sgw_sym_addr_hash(&w->info[i]) *
						dp->n_workers) >> 32);
			owner[i] = (uint8_t)o;
			if (o == w->idx)
				idx[k++] = i;
			else
				others |= 1ull << o;
		}
		w->cls.n[c] = k;
	}
	while (others != 0) {
		uint32_t o = (uint32_t)__builtin_ctzll(others);
		struct rte_mbuf *out[SGW_BURST_MAX];
		uint16_t cnt = 0, sent;

		others &= others - 1;
		for (i = 0; i < n; i++)
			if (owner[i] == o)
				out[cnt++] = m[i];
		sent = (uint16_t)rte_ring_enqueue_burst(dp->inring[o], (void **)out, cnt, NULL);
		w->c.handoff_out += sent;
		for (j = sent; j < cnt; j++)
			drop(w, out[j], SGW_DROP_HANDOFF_FULL);
	}
}

uint32_t
sgw_worker_process(struct sgw_worker *w, const struct sgw_snapshot *s, struct rte_mbuf **m,
		   uint16_t n, bool may_handoff)
{
	const uint8_t *data[SGW_BURST_MAX];
	uint16_t len[SGW_BURST_MAX];
	uint32_t flen[SGW_BURST_MAX];
	uint16_t i, j, c;

	for (i = 0; i < n; i++) {
		data[i] = rte_pktmbuf_mtod(m[i], const uint8_t *);
		len[i] = rte_pktmbuf_data_len(m[i]);
		flen[i] = rte_pktmbuf_pkt_len(m[i]);
		w->pidx[i] = (uint8_t)w->dp->pidx_of[m[i]->port];
		rte_prefetch0(data[i]);
	}
	/* Multi-segment frames (jumbo): headers in the first segment, lengths from pkt_len. */
	sgw_classify_burst_seg(&s->parse, data, len, flen, n, w->info, &w->cls);

	for (c = 0; c < SGW_CLASS_SATLINK; c++)
		for (j = 0; j < w->cls.n[c]; j++) {
			int32_t t;

			i = w->cls.idx[c][j];
			t = terminal_of(s, &w->info[i], w->pidx[i]);
			/* At a terminal with satlink, all of its IP traffic is its own. */
			w->term[i] = t >= 0 ? t : s->sl_own_term;
		}
	for (c = SGW_CLASS_SATLINK; c < SGW_CLASS__COUNT; c++)
		for (j = 0; j < w->cls.n[c]; j++)
			w->term[w->cls.idx[c][j]] = -1;
	for (j = 0; j < w->cls.n[SGW_CLASS_SATLINK]; j++) {
		i = w->cls.idx[SGW_CLASS_SATLINK][j];
		w->sl_sess[i] = -1;
		if (w->dp->sl != NULL) {
			/* Frames of one session come in runs: look a run up once. */
			uint32_t k = j > 0 ? w->cls.idx[SGW_CLASS_SATLINK][j - 1] : i;

			w->sl_sess[i] = j > 0 && sgw_sl_same_terminal(m[k], w->info[k].l3_off, m[i],
								      w->info[i].l3_off) ?
				w->sl_sess[k] :
				sgw_sl_sess_of_frame(w->dp, m[i], w->info[i].l3_off);
		}
	}
	if (may_handoff && w->dp->n_workers > 1)
		handoff(w, s, m, n);

	for (c = 0; c < SGW_CLASS__COUNT; c++)
		for (j = 0; j < w->cls.n[c]; j++) {
			w->c.cls_pkts[c]++;
			w->c.cls_bytes[c] += flen[w->cls.idx[c][j]];
		}

	stage_flows(w, s, m, w->cls.idx[SGW_CLASS_TCP], w->cls.n[SGW_CLASS_TCP]);
	stage_flows(w, s, m, w->cls.idx[SGW_CLASS_UDP], w->cls.n[SGW_CLASS_UDP]);
	stage_flows(w, s, m, w->cls.idx[SGW_CLASS_ESP], w->cls.n[SGW_CLASS_ESP]);
	for (c = SGW_CLASS_ICMP; c <= SGW_CLASS_NON_IP; c++)
		if (c != SGW_CLASS_SATLINK || w->dp->sl == NULL)
			stage_stateless(w, s, m, w->cls.idx[c], w->cls.n[c]);
	stage_malformed(w, s, m, w->cls.idx[SGW_CLASS_MALFORMED], w->cls.n[SGW_CLASS_MALFORMED]);
	/* Last: delivering reassembled packets runs this function again on the same scratch. */
	if (w->dp->sl != NULL) {
		sgw_sl_stage(w, s, m, w->cls.idx[SGW_CLASS_SATLINK], w->cls.n[SGW_CLASS_SATLINK]);
		sgw_sl_burst_done(w, s);
	}
	return n;
}

static void
run_timers(struct sgw_worker *w, const struct sgw_snapshot *s)
{
	uint64_t ev[SGW_TW_BATCH];
	uint32_t k, i;

	k = sgw_tw_expire(w->tw, w->now_ns, ev, SGW_TW_BATCH);
	w->c.timers_expired += k;
	for (i = 0; i < k; i++) {
		uint64_t type = ev[i] >> SGW_TEV_SHIFT;
		int32_t obj = (int32_t)(ev[i] & ((1ull << SGW_TEV_SHIFT) - 1));

		if (type == SGW_TEV_FLOW_IDLE)
			w->c.flows_expired += (uint64_t)sgw_flow_timer_expired(w->flows, w->tw, obj,
									       w->now_ns);
		else if (type == SGW_TEV_SATLINK)
			sgw_sl_timer(w, s, (uint32_t)obj);
	}
}

/* Baseline mode: RX burst straight to the peer port's TX buffer, no parse. */
static uint32_t
iter_bare(struct sgw_worker *w, const struct sgw_snapshot *s)
{
	struct rte_mbuf *m[SGW_BURST_MAX];
	uint32_t total = 0;
	uint16_t q, i, n;

	for (q = 0; q < w->n_rxq; q++) {
		const struct sgw_rxq *rq = &w->rxq[q];
		int16_t out = s->pol.ports[rq->pidx].peer;
		uint64_t bytes = 0;

		n = rte_eth_rx_burst(rq->port_id, rq->queue, m, s->pol.workers.burst);
		if (n == 0)
			continue;
		for (i = 0; i < n; i++)
			bytes += rte_pktmbuf_pkt_len(m[i]);
		w->c.rx_pkts[rq->pidx] += n;
		w->c.rx_bytes[rq->pidx] += bytes;
		total += n;
		for (i = 0; i < n; i++) {
			if (out < 0)
				drop(w, m[i], SGW_DROP_NO_ROUTE);
			else
				tx_add(w, (uint16_t)out, m[i], s->pol.workers.burst);
		}
	}
	return total;
}

uint32_t
sgw_worker_iter(struct sgw_worker *w, uint64_t now_tsc)
{
	struct sgw_dp *dp = w->dp;
	const struct sgw_snapshot *s = __atomic_load_n(&dp->snap, __ATOMIC_ACQUIRE);
	const struct sgw_workers_conf *wc = &s->pol.workers;
	struct rte_mbuf *m[SGW_BURST_MAX];
	uint32_t total = 0;
	uint16_t q, i, n;

	w->now_ns = (uint64_t)((double)(now_tsc - w->ns_base_tsc) * w->ns_per_tsc);
	w->drain_tsc = dp->tsc_hz / 1000000 * wc->tx_drain_us;
	w->backoff_tsc = dp->tsc_hz / 1000000 * wc->idle_backoff_us;
	w->sleep_us = wc->idle_sleep_us;
	w->c.snapshot_gen = s->gen;
	w->c.loops++;

	if (dp->bare_forward) {
		total = iter_bare(w, s);
	} else if (dp->emulator) {
		if (w->idx == 0)
			total = sgw_emu_iter(w, s);
	} else {
		/*
		 * Packets other workers already received come first, several bursts
		 * of them: under overload the backlog stays in the NIC's queues
		 * (counted there) rather than in the hand-off rings.
		 */
		for (q = 0; q < SGW_RING_BURSTS_PER_LOOP && dp->inring[w->idx] != NULL; q++) {
			n = (uint16_t)rte_ring_dequeue_burst(dp->inring[w->idx], (void **)m,
							     wc->burst, NULL);
			if (n == 0)
				break;
			w->c.handoff_in += n;
			total += n;
			sgw_worker_process(w, s, m, n, false);
		}
		for (q = 0; q < w->n_rxq; q++) {
			const struct sgw_rxq *rq = &w->rxq[q];
			uint64_t bytes = 0;

			n = rte_eth_rx_burst(rq->port_id, rq->queue, m, wc->burst);
			if (n == 0)
				continue;
			for (i = 0; i < n; i++) {
				/* Not every PMD sets it (net_ring does not); stages rely on it. */
				m[i]->port = rq->port_id;
				bytes += rte_pktmbuf_pkt_len(m[i]);
			}
			w->c.rx_pkts[rq->pidx] += n;
			w->c.rx_bytes[rq->pidx] += bytes;
			total += n;
			sgw_worker_process(w, s, m, n, true);
		}
		run_timers(w, s);
		if (dp->sl != NULL)
			sgw_sl_iter(w, s);
	}
	/* Sending for others is work too: the drainer must not doze off while they feed it. */
	total += sgw_worker_drain_txrings(w);
	if (now_tsc >= w->tx_deadline) {
		sgw_worker_flush(w);
		w->tx_deadline = now_tsc + w->drain_tsc;
	}
	return total;
}

int
sgw_worker_main(void *arg)
{
	struct sgw_worker *w = arg;
	struct sgw_dp *dp = w->dp;

	rte_rcu_qsbr_thread_online(dp->rcu, w->idx);
	w->last_busy_tsc = rte_rdtsc();
	SGW_LOG(INFO, "worker %u on lcore %u: %u RX queue(s)", w->idx, w->lcore, w->n_rxq);
	while (!__atomic_load_n(&dp->quit, __ATOMIC_RELAXED)) {
		uint64_t now = rte_rdtsc();
		uint32_t n = sgw_worker_iter(w, now);

		rte_rcu_qsbr_quiescent(dp->rcu, w->idx);
		if (n > 0) {
			w->last_busy_tsc = now;
		} else if (w->backoff_tsc > 0 && now - w->last_busy_tsc > w->backoff_tsc &&
			   (!dp->emulator ||
			    sgw_emu_next_release(dp, w->now_ns) > (uint64_t)w->sleep_us * 1000)) {
			/* (An emulator holding a frame due sooner than a nap stays awake.) */
			/* Idle: let other processes have the core. Offline so reloads need not wait. */
			sgw_worker_flush(w);
			rte_rcu_qsbr_thread_offline(dp->rcu, w->idx);
			rte_delay_us_sleep(w->sleep_us);
			rte_rcu_qsbr_thread_online(dp->rcu, w->idx);
			w->c.idle_sleeps++;
		}
	}
	sgw_worker_flush(w);
	rte_rcu_qsbr_thread_offline(dp->rcu, w->idx);
	return 0;
}
