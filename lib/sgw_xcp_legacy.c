/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * XCP for legacy senders (contract: sgw_xcp_legacy.h; docs/xcp.md, "Legacy
 * senders"): per-flow window and RTT estimates at the hub, the flow's share
 * from the controller's per-packet feedback, enforced with the agent's window
 * clamp. The flow table, the IP/TCP locator, the RTT timer and the clamp are
 * lib/sgw_xcp_agent.c's: one of each.
 */
#include <string.h>

#include "sgw_seq.h"
#include "sgw_xcp_legacy.h"

static const char *const ctr_names[SGW_XCPL_C__COUNT] = {
	[SGW_XCPL_C_DATA_PKTS] = "data_pkts",
	[SGW_XCPL_C_DATA_TCP] = "data_tcp",
	[SGW_XCPL_C_DATA_OTHER] = "data_other",
	[SGW_XCPL_C_DATA_BAD] = "data_malformed",
	[SGW_XCPL_C_ACK_PKTS] = "ack_pkts",
	[SGW_XCPL_C_ACK_NO_FLOW] = "ack_no_flow",
	[SGW_XCPL_C_ACK_BAD] = "ack_malformed",
	[SGW_XCPL_C_NO_RTT] = "data_no_rtt",
	[SGW_XCPL_C_FB_POS_BYTES] = "feedback_pos_bytes",
	[SGW_XCPL_C_FB_NEG_BYTES] = "feedback_neg_bytes",
	[SGW_XCPL_C_SHARE_FLOOR] = "share_at_floor",
	[SGW_XCPL_C_SHARE_CAPPED] = "share_capped",
	[SGW_XCPL_C_SHARE_CAP_SENT] = "share_capped_by_sent",
	[SGW_XCPL_C_CLAMPED] = "rwnd_clamped",
	[SGW_XCPL_C_EDGE_HELD] = "rwnd_edge_held",
	[SGW_XCPL_C_NO_SCALE] = "rwnd_no_scale",
	[SGW_XCPL_C_RTT_SAMPLES] = "rtt_samples",
};

const char *
sgw_xcpl_ctr_name(enum sgw_xcpl_ctr c)
{
	if ((unsigned)c >= SGW_XCPL_C__COUNT)
		return "unknown";
	return ctr_names[c];
}

void
sgw_xcpl_conf_default(struct sgw_xcpl_conf *c)
{
	memset(c, 0, sizeof(*c));
	c->xcp_proto = 254;
	c->mss_default = 1460;
	c->share_max = 1u << 30;
	c->idle_ns = 300ull * 1000000000ull;
	c->closed_ns = 5ull * 1000000000ull;
}

size_t
sgw_xcpl_mem_size(uint32_t n)
{
	return sgw_xcpa_mem_size(n);
}

int
sgw_xcpl_init(struct sgw_xcpl *l, const struct sgw_xcpl_conf *c, void *mem, size_t mem_len)
{
	struct sgw_xcpa_conf ac;

	sgw_xcpa_conf_default(&ac);
	ac.role = SGW_XCPA_SENDER;
	ac.xcp_proto = c->xcp_proto;
	ac.mss_default = c->mss_default;
	ac.init_cwnd = c->init_share;
	ac.cwnd_max = c->share_max;
	ac.idle_ns = c->idle_ns;
	ac.closed_ns = c->closed_ns;
	memset(l, 0, sizeof(*l));
	if (sgw_xcpa_init(&l->tab, &ac, mem, mem_len) < 0)
		return -1;
	l->conf = *c;
	return 0;
}

uint32_t
sgw_xcpl_inflight(const struct sgw_xcpa_flow *f)
{
	int32_t d;

	if (!(f->state & SGW_XCPA_FS_UNA) || !f->rtt.max_valid)
		return 0;
	d = sgw_seq_diff(f->rtt.snd_max, f->una);
	return d > 0 ? (uint32_t)d : 0;
}

int
sgw_xcpl_data(struct sgw_xcpl *l, struct sgw_xcp_acc *acc, struct sgw_xcp_params *par,
	      const uint8_t *p, size_t len, uint32_t size, uint64_t now, int32_t *fb)
{
	struct sgw_xcpa_flow *f;
	struct sgw_xcpa_pkt pk;
	enum sgw_xcpa_bad b;
	uint32_t seg, infl, cap, cfl;
	bool by_sent;
	int64_t share;
	int32_t x;

	*fb = 0;
	l->ctr[SGW_XCPL_C_DATA_PKTS]++;
	b = sgw_xcpa_locate(p, len, l->conf.xcp_proto, &pk);
	if (b != SGW_XCPA_OK) {
		l->bad[b]++;
		l->ctr[SGW_XCPL_C_DATA_BAD]++;
		return -1;
	}
	if (!pk.is_tcp || pk.xcp_len != 0) {
		/* An XCP sender's own header is the XCP stage's to handle. */
		l->ctr[SGW_XCPL_C_DATA_OTHER]++;
		return 0;
	}
	f = sgw_xcpa_flow_get(&l->tab, pk.ver, pk.src, pk.sport, pk.dst, pk.dport, now, true);
	if (f == NULL) {
		l->ctr[SGW_XCPL_C_DATA_OTHER]++;
		return 0;
	}
	f->last_ns = now;
	sgw_xcpa_flow_note(&l->tab, f, p, &pk, true);
	seg = pk.pay_len + !!(pk.tcp_flags & SGW_XCPA_TH_SYN) + !!(pk.tcp_flags & SGW_XCPA_TH_FIN);
	sgw_xcpa_rtt_sent(&f->rtt, pk.seq, seg, now);
	sgw_xcpa_round_sent(f, pk.pay_len, now);
	infl = sgw_xcpl_inflight(f);
	l->ctr[SGW_XCPL_C_DATA_TCP]++;
	if (f->rtt.srtt_us == 0)
		l->ctr[SGW_XCPL_C_NO_RTT]++;
	/*
	 * H_cwnd = what the flow has in flight: the controller's sum of
	 * rtt * s / cwnd counts each flow once per RTT only if cwnd is the
	 * window it actually uses. (sgw_xcp_* raise it to the packet's size.)
	 */
	if (acc != NULL)
		x = sgw_xcp_on_packet(acc, par, size, f->rtt.srtt_us, infl);
	else
		x = sgw_xcp_feedback(par, size, f->rtt.srtt_us, infl);
	*fb = x;
	if (x > 0)
		l->ctr[SGW_XCPL_C_FB_POS_BYTES] += (uint64_t)x;
	else if (x < 0)
		l->ctr[SGW_XCPL_C_FB_NEG_BYTES] += (uint64_t)(-(int64_t)x);
	share = (int64_t)f->cwnd_xcp + x;
	if (share <= (int64_t)f->mss) {
		share = f->mss;
		l->ctr[SGW_XCPL_C_SHARE_FLOOR]++;
	}
	/*
	 * A sender held below its share by its own congestion control (or by
	 * the application) would otherwise collect positive feedback without
	 * end and then burst: the share stays within 2 x in flight + 2 MSS,
	 * room for slow start's doubling per RTT. In flight for the cap: what
	 * was sent in the last round trip when that is less than the sequence
	 * flight (loss recovery behind another bottleneck; sgw_xcpa_cap_flight).
	 */
	cfl = sgw_xcpa_cap_flight(f, infl, &by_sent);
	cap = (uint32_t)((uint64_t)cfl * 2u + 2u * f->mss > l->conf.share_max ?
			 l->conf.share_max : (uint64_t)cfl * 2u + 2u * f->mss);
	if (infl != 0 && share > (int64_t)cap && x > 0) {
		share = cap > f->cwnd_xcp ? cap : f->cwnd_xcp;
		l->ctr[SGW_XCPL_C_SHARE_CAPPED]++;
		if (by_sent)
			l->ctr[SGW_XCPL_C_SHARE_CAP_SENT]++;
	}
	if (share > (int64_t)l->conf.share_max)
		share = l->conf.share_max;
	f->cwnd_xcp = (uint32_t)share;
	return 1;
}

int
sgw_xcpl_ack(struct sgw_xcpl *l, uint8_t *p, size_t len, uint64_t now)
{
	struct sgw_xcpa_flow *f;
	struct sgw_xcpa_pkt pk;
	enum sgw_xcpa_bad b;
	bool held = false;
	int shift, r;

	l->ctr[SGW_XCPL_C_ACK_PKTS]++;
	b = sgw_xcpa_locate(p, len, l->conf.xcp_proto, &pk);
	if (b != SGW_XCPA_OK) {
		l->bad[b]++;
		l->ctr[SGW_XCPL_C_ACK_BAD]++;
		return -1;
	}
	if (!pk.is_tcp || pk.xcp_len != 0)
		return 0;
	f = sgw_xcpa_flow_get(&l->tab, pk.ver, pk.dst, pk.dport, pk.src, pk.sport, now, false);
	if (f == NULL) {
		l->ctr[SGW_XCPL_C_ACK_NO_FLOW]++;
		return 0;
	}
	f->last_ns = now;
	sgw_xcpa_flow_note(&l->tab, f, p, &pk, false);
	if (!(pk.tcp_flags & SGW_XCPA_TH_ACK))
		return 0;
	if (sgw_xcpa_rtt_acked(&f->rtt, pk.ack, now))
		l->ctr[SGW_XCPL_C_RTT_SAMPLES]++;
	shift = sgw_xcpa_flow_shift(f);
	if (shift < 0) {
		l->ctr[SGW_XCPL_C_NO_SCALE]++;
		return 0;
	}
	if (pk.tcp_flags & SGW_XCPA_TH_SYN)
		shift = 0;
	f->peer_wnd = (uint32_t)((uint64_t)pk.wnd << shift > UINT32_MAX ?
				 UINT32_MAX : (uint64_t)pk.wnd << shift);
	f->state |= SGW_XCPA_FS_PEERW;
	r = sgw_xcpa_clamp_window(p + pk.tcp_off, pk.ip_len - pk.tcp_off, (uint8_t)shift,
				  f->cwnd_xcp, &f->edge, &held);
	if (held)
		l->ctr[SGW_XCPL_C_EDGE_HELD]++;
	if (r == 1)
		l->ctr[SGW_XCPL_C_CLAMPED]++;
	return r == 1 ? 1 : 0;
}

const struct sgw_xcpa_flow *
sgw_xcpl_find(const struct sgw_xcpl *l, uint8_t family, const uint8_t *saddr,
	      uint16_t sport, const uint8_t *daddr, uint16_t dport, uint64_t now)
{
	return sgw_xcpa_find(&l->tab, family, saddr, sport, daddr, dport, now);
}
