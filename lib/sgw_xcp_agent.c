/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The XCP host agent's logic (contract: sgw_xcp_agent.h; how it is run:
 * docs/xcp.md, "The sender agent"). Owns the IP/TCP locator, header insert
 * and strip, the window clamp the legacy mode reuses, the one-segment RTT
 * timer and the agent's bounded flow table.
 */
#include <string.h>

#include "sgw_seq.h"
#include "sgw_xcp_agent.h"

#define MAX_EXT 8u          /* IPv6 extension headers walked at most */
#define MAX_SHIFT 14u       /* RFC 7323: a larger window scale is taken as 14 */
#define NO_WS 0xffu         /* SYN without a window scale option */

/* ---- byte order ---- */

static inline uint16_t
get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline void
put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline uint32_t
get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* ---- names ---- */

static const char *const bad_names[SGW_XCPA_B__COUNT] = {
	[SGW_XCPA_OK] = "ok",
	[SGW_XCPA_B_IP_TRUNC] = "ip_trunc",
	[SGW_XCPA_B_IP_VERSION] = "ip_version",
	[SGW_XCPA_B_IP4_IHL] = "ip4_ihl",
	[SGW_XCPA_B_IP_LEN] = "ip_len",
	[SGW_XCPA_B_IP6_EXT] = "ip6_ext",
	[SGW_XCPA_B_FRAG] = "fragment",
	[SGW_XCPA_B_IP6_AH] = "ip6_ah_esp",
	[SGW_XCPA_B_TCP_TRUNC] = "tcp_trunc",
	[SGW_XCPA_B_TCP_DOFF] = "tcp_doff",
	[SGW_XCPA_B_XCP] = "xcp_refused",
};

const char *
sgw_xcpa_bad_name(enum sgw_xcpa_bad b)
{
	if ((unsigned)b >= SGW_XCPA_B__COUNT)
		return "unknown";
	return bad_names[b];
}

static const char *const ctr_names[SGW_XCPA_C__COUNT] = {
	[SGW_XCPA_C_OUT_PKTS] = "out_pkts",
	[SGW_XCPA_C_OUT_INSERTED] = "out_inserted",
	[SGW_XCPA_C_OUT_NON_TCP] = "out_non_tcp",
	[SGW_XCPA_C_OUT_BAD] = "out_malformed",
	[SGW_XCPA_C_OUT_NO_ROOM] = "out_no_room",
	[SGW_XCPA_C_OUT_HAS_XCP] = "out_has_xcp",
	[SGW_XCPA_C_IN_PKTS] = "in_pkts",
	[SGW_XCPA_C_IN_STRIPPED] = "in_stripped",
	[SGW_XCPA_C_IN_PLAIN] = "in_plain",
	[SGW_XCPA_C_IN_BAD] = "in_dropped_malformed",
	[SGW_XCPA_C_IN_NON_TCP] = "in_non_tcp",
	[SGW_XCPA_C_FLOWS_NEW] = "flows_new",
	[SGW_XCPA_C_FLOWS_REUSED] = "flows_reused_slot",
	[SGW_XCPA_C_TABLE_FULL] = "table_full_bypass",
	[SGW_XCPA_C_FEEDBACK] = "feedback_applied",
	[SGW_XCPA_C_NO_REVERSE] = "ack_no_reverse",
	[SGW_XCPA_C_FB_POS_BYTES] = "feedback_pos_bytes",
	[SGW_XCPA_C_FB_NEG_BYTES] = "feedback_neg_bytes",
	[SGW_XCPA_C_CWND_FLOOR] = "cwnd_at_floor",
	[SGW_XCPA_C_CWND_CAPPED] = "cwnd_capped",
	[SGW_XCPA_C_CWND_CAP_SENT] = "cwnd_capped_by_sent",
	[SGW_XCPA_C_CLAMPED] = "rwnd_clamped",
	[SGW_XCPA_C_EDGE_HELD] = "rwnd_edge_held",
	[SGW_XCPA_C_NO_SCALE] = "rwnd_no_scale",
	[SGW_XCPA_C_RTT_SAMPLES] = "rtt_samples",
	[SGW_XCPA_C_RTT_KARN] = "rtt_karn_abandoned",
	[SGW_XCPA_C_ECHOED] = "acks_echoed",
	[SGW_XCPA_C_ECHO_SEGS] = "data_segs_summed",
};

const char *
sgw_xcpa_ctr_name(enum sgw_xcpa_ctr c)
{
	if ((unsigned)c >= SGW_XCPA_C__COUNT)
		return "unknown";
	return ctr_names[c];
}

/* ---- locator ---- */

enum sgw_xcpa_bad
sgw_xcpa_locate(const uint8_t *p, size_t len, uint8_t xcp_proto, struct sgw_xcpa_pkt *pk)
{
	struct sgw_xcpa_pkt k;
	size_t off, iplen;
	uint8_t proto;

	memset(&k, 0, sizeof(k));
	if (p == NULL || len < 1)
		return SGW_XCPA_B_IP_TRUNC;
	k.ver = p[0] >> 4;
	if (k.ver == 4) {
		size_t ihl = (size_t)(p[0] & 0x0f) * 4u;

		if (len < 20)
			return SGW_XCPA_B_IP_TRUNC;
		if (ihl < 20 || ihl > len)
			return SGW_XCPA_B_IP4_IHL;
		iplen = get16(p + 2);
		if (iplen < ihl || iplen > len)
			return SGW_XCPA_B_IP_LEN;
		if ((get16(p + 6) & 0x3fff) != 0)  /* MF or a fragment offset */
			return SGW_XCPA_B_FRAG;
		proto = p[9];
		k.nh_off = 9;
		off = ihl;
		k.src = p + 12;
		k.dst = p + 16;
	} else if (k.ver == 6) {
		unsigned i;

		if (len < 40)
			return SGW_XCPA_B_IP_TRUNC;
		iplen = 40u + get16(p + 4);
		if (iplen > len)
			return SGW_XCPA_B_IP_LEN;
		proto = p[6];
		k.nh_off = 6;
		off = 40;
		for (i = 0; i < MAX_EXT && (proto == 0 || proto == 43 || proto == 60); i++) {
			size_t hl;

			if (off + 8 > iplen)
				return SGW_XCPA_B_IP6_EXT;
			hl = ((size_t)p[off + 1] + 1) * 8u;
			if (off + hl > iplen)
				return SGW_XCPA_B_IP6_EXT;
			k.nh_off = (uint16_t)off;
			proto = p[off];
			off += hl;
		}
		if (proto == 0 || proto == 43 || proto == 60)
			return SGW_XCPA_B_IP6_EXT;
		if (proto == 44)
			return SGW_XCPA_B_FRAG;
		if (proto == 50 || proto == 51)
			return SGW_XCPA_B_IP6_AH;
		k.src = p + 8;
		k.dst = p + 24;
	} else {
		return SGW_XCPA_B_IP_VERSION;
	}
	k.proto = proto;
	k.l3_len = (uint16_t)off;
	k.ip_len = (uint32_t)iplen;
	if (proto == xcp_proto) {
		enum sgw_xcp_err e = sgw_xcp_parse(p + off, iplen - off, xcp_proto, &k.xcp);

		if (e != SGW_XCP_OK) {
			pk->xcp_err = (uint8_t)e;
			return SGW_XCPA_B_XCP;
		}
		k.xcp_len = k.xcp.hlen;
		off += k.xcp_len;
		proto = k.xcp.next;
	}
	if (proto == 6) {
		size_t doff;

		if (iplen - off < 20)
			return SGW_XCPA_B_TCP_TRUNC;
		doff = (size_t)(p[off + 12] >> 4) * 4u;
		if (doff < 20 || doff > iplen - off)
			return SGW_XCPA_B_TCP_DOFF;
		k.is_tcp = 1;
		k.tcp_off = (uint16_t)off;
		k.tcp_hlen = (uint16_t)doff;
		k.sport = get16(p + off);
		k.dport = get16(p + off + 2);
		k.seq = get32(p + off + 4);
		k.ack = get32(p + off + 8);
		k.tcp_flags = p[off + 13];
		k.wnd = get16(p + off + 14);
		k.pay_len = (uint16_t)(iplen - off - doff);
	}
	*pk = k;
	return SGW_XCPA_OK;
}

/* ---- insert / strip ---- */

static void
ip4_csum(uint8_t *p, size_t ihl)
{
	uint32_t s = 0;
	size_t i;

	p[10] = 0;
	p[11] = 0;
	for (i = 0; i + 1 < ihl; i += 2)
		s += get16(p + i);
	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	put16(p + 10, (uint16_t)~s);
}

static void
set_ip_len(uint8_t *p, const struct sgw_xcpa_pkt *pk, uint32_t ip_len)
{
	if (pk->ver == 4) {
		put16(p + 2, (uint16_t)ip_len);
		ip4_csum(p, (size_t)(p[0] & 0x0f) * 4u);
	} else {
		put16(p + 4, (uint16_t)(ip_len - 40));
	}
}

size_t
sgw_xcpa_insert(uint8_t *p, size_t cap, const struct sgw_xcpa_pkt *pk, uint8_t xcp_proto,
		const struct sgw_xcp_fields *f)
{
	struct sgw_xcp_fields h = *f;
	size_t nlen = (size_t)pk->ip_len + SGW_XCPW_LEN;

	if (pk->xcp_len != 0 || nlen > cap || pk->proto == xcp_proto)
		return 0;
	if ((pk->ver == 4 && nlen > 65535) || (pk->ver == 6 && nlen - 40 > 65535))
		return 0;
	h.next = pk->proto;
	memmove(p + pk->l3_len + SGW_XCPW_LEN, p + pk->l3_len, pk->ip_len - pk->l3_len);
	if (sgw_xcp_build(p + pk->l3_len, SGW_XCPW_LEN, xcp_proto, &h) != SGW_XCPW_LEN)
		return 0;  /* not reached: room and next were checked */
	/* IPv4: protocol byte and length change, then the checksum is redone. */
	p[pk->nh_off] = xcp_proto;
	set_ip_len(p, pk, (uint32_t)nlen);
	return nlen;
}

size_t
sgw_xcpa_strip(uint8_t *p, struct sgw_xcpa_pkt *pk)
{
	size_t hl = pk->xcp_len;

	if (hl == 0 || pk->ip_len < (uint32_t)pk->l3_len + hl)
		return 0;
	memmove(p + pk->l3_len, p + pk->l3_len + hl, pk->ip_len - pk->l3_len - hl);
	p[pk->nh_off] = pk->xcp.next;
	pk->ip_len -= (uint32_t)hl;
	set_ip_len(p, pk, pk->ip_len);
	pk->proto = pk->xcp.next;
	pk->xcp_len = 0;
	if (pk->is_tcp)
		pk->tcp_off = (uint16_t)(pk->tcp_off - hl);
	return pk->ip_len;
}

/* ---- window clamp ---- */

int
sgw_xcpa_clamp_window(uint8_t *tcp, size_t tcp_len, uint8_t shift, uint32_t limit,
		      struct sgw_xcpa_edge *e, bool *held)
{
	struct sgw_xcp_patch pt;
	uint32_t ack, field, lim_units, wnd;
	uint16_t ck;

	if (held != NULL)
		*held = false;
	if (tcp == NULL || tcp_len < 20 || !(tcp[13] & SGW_XCPA_TH_ACK))
		return -1;
	if (shift > MAX_SHIFT)
		shift = MAX_SHIFT;
	ack = get32(tcp + 8);
	wnd = get16(tcp + 14);
	/* A clamp never advertises zero: that would put Linux in persist
	 * mode, probing once per RTO, instead of holding it to a window. */
	lim_units = limit >> shift;
	if (lim_units == 0)
		lim_units = 1;
	field = wnd < lim_units ? wnd : lim_units;
	if (e->valid) {
		int32_t d = sgw_seq_diff(e->redge, ack);

		if (d > 0 && ((uint64_t)field << shift) < (uint64_t)d) {
			/* Never retract: raise to the edge (rounded up), but
			 * never above what the receiver itself offers. */
			uint64_t need = ((uint64_t)d + ((1ull << shift) - 1)) >> shift;

			field = need < wnd ? (uint32_t)need : wnd;
			if (held != NULL && field > lim_units)
				*held = true;
		}
	}
	{
		uint32_t re = ack + (field << shift);

		if (!e->valid || SGW_SEQ_GT(re, e->redge))
			e->redge = re;
		e->valid = 1;
	}
	if (field == wnd)
		return 0;
	/* Words 12-15 of TCP (offset/flags, window): an even offset. */
	pt.off = 12;
	pt.len = 4;
	memcpy(pt.old_b, tcp + 12, 4);
	put16(tcp + 14, (uint16_t)field);
	memcpy(pt.new_b, tcp + 12, 4);
	ck = sgw_xcp_csum_adjust(get16(tcp + 16), &pt);
	put16(tcp + 16, ck);
	return 1;
}

/* ---- RTT timer ---- */

int
sgw_xcpa_rtt_sent(struct sgw_xcpa_rtt *r, uint32_t seq, uint32_t len, uint64_t now)
{
	uint32_t end = seq + len;
	int karn = 0;

	if (len == 0)
		return 0;
	if (!r->max_valid) {
		r->snd_max = end;
		r->max_valid = 1;
		r->on = 1;
		r->t_end = end;
		r->t0 = now;
		return 0;
	}
	/* Data below snd_max is sent again: an ACK for it would time the
	 * retransmission or the original, nobody knows which (Karn). */
	if (SGW_SEQ_LT(seq, r->snd_max) && r->on && SGW_SEQ_LT(seq, r->t_end)) {
		r->on = 0;
		karn = 1;
	}
	if (SGW_SEQ_GT(end, r->snd_max)) {
		if (!r->on && !SGW_SEQ_LT(seq, r->snd_max)) {
			r->on = 1;
			r->t_end = end;
			r->t0 = now;
		}
		r->snd_max = end;
	}
	return karn;
}

int
sgw_xcpa_rtt_acked(struct sgw_xcpa_rtt *r, uint32_t ack, uint64_t now)
{
	uint64_t us;

	if (!r->on || SGW_SEQ_LT(ack, r->t_end) || now < r->t0)
		return 0;
	r->on = 0;
	us = (now - r->t0) / 1000u;
	if (us == 0)
		us = 1;
	if (us > UINT32_MAX / 2)
		us = UINT32_MAX / 2;
	/* RFC 6298's gain of 1/8. */
	if (r->srtt_us == 0)
		r->srtt_us = (uint32_t)us;
	else
		r->srtt_us = (uint32_t)((int64_t)r->srtt_us +
					((int64_t)us - (int64_t)r->srtt_us) / 8);
	if (r->srtt_us == 0)
		r->srtt_us = 1;
	return 1;
}

/* ---- flow table ---- */

void
sgw_xcpa_conf_default(struct sgw_xcpa_conf *c)
{
	memset(c, 0, sizeof(*c));
	c->role = SGW_XCPA_SENDER;
	c->xcp_proto = 254;
	c->mss_default = 1460;
	c->init_cwnd = 0;
	c->cwnd_max = 1u << 30;
	c->idle_ns = 300ull * 1000000000ull;
	c->closed_ns = 5ull * 1000000000ull;
}

size_t
sgw_xcpa_mem_size(uint32_t n)
{
	uint32_t p = 8;

	while (p <= n / 2 && p < (1u << 30))
		p <<= 1;
	return (size_t)p * sizeof(struct sgw_xcpa_flow);
}

int
sgw_xcpa_init(struct sgw_xcpa *a, const struct sgw_xcpa_conf *c, void *mem, size_t mem_len)
{
	size_t n = mem_len / sizeof(struct sgw_xcpa_flow);
	uint32_t p = 8;

	if (mem == NULL || n < 8 || c->role > SGW_XCPA_RECEIVER || c->mss_default == 0 ||
	    c->cwnd_max < c->mss_default)
		return -1;
	while ((size_t)p * 2 <= n && p < (1u << 30))
		p <<= 1;
	memset(a, 0, sizeof(*a));
	a->conf = *c;
	a->flows = mem;
	a->n_flows = p;
	memset(mem, 0, (size_t)p * sizeof(struct sgw_xcpa_flow));
	return 0;
}

static uint32_t
key_hash(uint8_t family, const uint8_t *l, uint16_t lp, const uint8_t *r, uint16_t rp)
{
	size_t alen = family == 4 ? 4 : 16, i;
	uint32_t h = 2166136261u ^ family;

	/* FNV-1a over the key, then a murmur3 finaliser to spread it. */
	for (i = 0; i < alen; i++)
		h = (h ^ l[i]) * 16777619u;
	for (i = 0; i < alen; i++)
		h = (h ^ r[i]) * 16777619u;
	h = (h ^ lp) * 16777619u;
	h = (h ^ rp) * 16777619u;
	h ^= h >> 16;
	h *= 0x85ebca6bu;
	h ^= h >> 13;
	h *= 0xc2b2ae35u;
	h ^= h >> 16;
	return h;
}

static bool
key_eq(const struct sgw_xcpa_flow *f, uint8_t family, const uint8_t *l, uint16_t lp,
       const uint8_t *r, uint16_t rp)
{
	size_t alen = family == 4 ? 4 : 16;

	return f->family == family && f->lport == lp && f->rport == rp &&
	       memcmp(f->laddr, l, alen) == 0 && memcmp(f->raddr, r, alen) == 0;
}

static bool
expired(const struct sgw_xcpa *a, const struct sgw_xcpa_flow *f, uint64_t now)
{
	bool closed = (f->state & SGW_XCPA_FS_RST) ||
		      ((f->state & SGW_XCPA_FS_LFIN) && (f->state & SGW_XCPA_FS_RFIN));
	uint64_t lim = closed ? a->conf.closed_ns : a->conf.idle_ns;

	return now >= f->last_ns && now - f->last_ns >= lim;
}

static void
flow_start(struct sgw_xcpa *a, struct sgw_xcpa_flow *f, uint8_t family, const uint8_t *l,
	   uint16_t lp, const uint8_t *r, uint16_t rp, uint64_t now)
{
	size_t alen = family == 4 ? 4 : 16;

	memset(f, 0, sizeof(*f));
	f->family = family;
	memcpy(f->laddr, l, alen);
	memcpy(f->raddr, r, alen);
	f->lport = lp;
	f->rport = rp;
	f->l_ws = NO_WS;
	f->r_ws = NO_WS;
	f->mss = a->conf.mss_default;
	f->cwnd_xcp = a->conf.init_cwnd != 0 ? a->conf.init_cwnd : 10u * f->mss;
	if (f->cwnd_xcp > a->conf.cwnd_max)
		f->cwnd_xcp = a->conf.cwnd_max;
	f->last_ns = now;
}

/* At a SYN the MSS is known: "10 MSS" becomes the real one (before any feedback). */
static void
syn_init_cwnd(const struct sgw_xcpa *a, struct sgw_xcpa_flow *f, uint8_t tcp_flags)
{
	if (!(tcp_flags & SGW_XCPA_TH_SYN) || a->conf.init_cwnd != 0)
		return;
	f->cwnd_xcp = 10u * f->mss;
	if (f->cwnd_xcp > a->conf.cwnd_max)
		f->cwnd_xcp = a->conf.cwnd_max;
}

/* The flow's slot, or a new one (create), or NULL: at most SGW_XCPA_PROBE slots. */
struct sgw_xcpa_flow *
sgw_xcpa_flow_get(struct sgw_xcpa *a, uint8_t family, const uint8_t *l, uint16_t lp,
		  const uint8_t *r, uint16_t rp, uint64_t now, bool create)
{
	uint32_t mask = a->n_flows - 1, h = key_hash(family, l, lp, r, rp), i;
	struct sgw_xcpa_flow *spare = NULL;

	for (i = 0; i < SGW_XCPA_PROBE; i++) {
		struct sgw_xcpa_flow *f = &a->flows[(h + i) & mask];

		if (f->family == 0) {
			if (spare == NULL)
				spare = f;
			continue;
		}
		if (key_eq(f, family, l, lp, r, rp)) {
			if (!expired(a, f, now))
				return f;
			if (!create)
				return NULL;
			/* Same ports again after the old one ended: a new flow. */
			flow_start(a, f, family, l, lp, r, rp, now);
			a->ctr[SGW_XCPA_C_FLOWS_NEW]++;
			return f;
		}
		if (spare == NULL && expired(a, f, now))
			spare = f;
	}
	if (!create)
		return NULL;
	if (spare == NULL) {
		a->ctr[SGW_XCPA_C_TABLE_FULL]++;
		return NULL;
	}
	if (spare->family != 0)
		a->ctr[SGW_XCPA_C_FLOWS_REUSED]++;
	else
		a->active++;
	flow_start(a, spare, family, l, lp, r, rp, now);
	a->ctr[SGW_XCPA_C_FLOWS_NEW]++;
	return spare;
}

const struct sgw_xcpa_flow *
sgw_xcpa_find(const struct sgw_xcpa *a, uint8_t family, const uint8_t *laddr,
	      uint16_t lport, const uint8_t *raddr, uint16_t rport, uint64_t now)
{
	/* create = false writes nothing */
	return sgw_xcpa_flow_get((struct sgw_xcpa *)(uintptr_t)a, family, laddr, lport, raddr,
				 rport, now, false);
}

const struct sgw_xcpa_flow *
sgw_xcpa_slot(const struct sgw_xcpa *a, uint32_t i, uint64_t now)
{
	const struct sgw_xcpa_flow *f;

	if (i >= a->n_flows)
		return NULL;
	f = &a->flows[i];
	if (f->family == 0 || expired(a, f, now))
		return NULL;
	return f;
}

/* ---- per packet ---- */

/* MSS and window scale options of a SYN; bounded by the option area (40 bytes). */
static void
syn_options(const uint8_t *tcp, size_t hlen, uint32_t *mss, uint8_t *ws)
{
	size_t i = 20;

	*mss = 0;
	*ws = NO_WS;
	while (i < hlen) {
		uint8_t kind = tcp[i], ol;

		if (kind == 0)
			break;
		if (kind == 1) {
			i++;
			continue;
		}
		if (i + 1 >= hlen)
			break;
		ol = tcp[i + 1];
		if (ol < 2 || i + ol > hlen)
			break;
		if (kind == 2 && ol == 4)
			*mss = get16(tcp + i + 2);
		else if (kind == 3 && ol == 3)
			*ws = tcp[i + 2] > MAX_SHIFT ? MAX_SHIFT : tcp[i + 2];
		i += ol;
	}
}

void
sgw_xcpa_flow_note(const struct sgw_xcpa *a, struct sgw_xcpa_flow *f, const uint8_t *p,
		   const struct sgw_xcpa_pkt *pk, bool local)
{
	/* SYN options, FIN, RST and the highest ACK: the flow's handshake state. */
	if (pk->tcp_flags & SGW_XCPA_TH_SYN) {
		uint32_t mss;
		uint8_t ws;

		syn_options(p + pk->tcp_off, pk->tcp_hlen, &mss, &ws);
		if (local) {
			f->l_ws = ws;
			f->state |= SGW_XCPA_FS_LSYN;
		} else {
			f->r_ws = ws;
			f->state |= SGW_XCPA_FS_RSYN;
		}
		if (mss >= 64 && mss < f->mss)
			f->mss = mss;
		syn_init_cwnd(a, f, pk->tcp_flags);
	}
	if (pk->tcp_flags & SGW_XCPA_TH_FIN)
		f->state |= local ? SGW_XCPA_FS_LFIN : SGW_XCPA_FS_RFIN;
	if (pk->tcp_flags & SGW_XCPA_TH_RST)
		f->state |= SGW_XCPA_FS_RST;
	if (!local && (pk->tcp_flags & SGW_XCPA_TH_ACK) &&
	    (!(f->state & SGW_XCPA_FS_UNA) || SGW_SEQ_GT(pk->ack, f->una))) {
		f->una = pk->ack;
		f->state |= SGW_XCPA_FS_UNA;
	}
}

int
sgw_xcpa_flow_shift(const struct sgw_xcpa_flow *f)
{
	if ((f->state & (SGW_XCPA_FS_LSYN | SGW_XCPA_FS_RSYN)) !=
	    (SGW_XCPA_FS_LSYN | SGW_XCPA_FS_RSYN))
		return -1;
	/* RFC 7323: scaling is on only if both SYNs carried the option. */
	if (f->l_ws == NO_WS || f->r_ws == NO_WS)
		return 0;
	return f->r_ws;
}

static int32_t
sat32(int64_t v)
{
	if (v > INT32_MAX)
		return INT32_MAX;
	if (v < INT32_MIN)
		return INT32_MIN;
	return (int32_t)v;
}

/* Katabi's sender: the window change wanted, spread over the window's packets. */
static int32_t
wanted(const struct sgw_xcpa *a, const struct sgw_xcpa_flow *f, uint32_t pay_len)
{
	uint64_t want = a->conf.cwnd_max, fb;

	/* No use asking for more than the receiver offers. */
	if ((f->state & SGW_XCPA_FS_PEERW) && f->peer_wnd < want)
		want = f->peer_wnd;
	if (pay_len == 0 || want <= f->cwnd_xcp || f->cwnd_xcp == 0)
		return 0;
	fb = (want - f->cwnd_xcp) * pay_len / f->cwnd_xcp;
	return fb > INT32_MAX ? INT32_MAX : (int32_t)fb;
}

/* The smaller of the two flights (contract: sgw_xcp_agent.h). */
uint32_t
sgw_xcpa_cap_flight(const struct sgw_xcpa_flow *f, uint32_t seq_flight, bool *by_sent)
{
	uint32_t r = f->rt_prev > f->rt_bytes ? f->rt_prev : f->rt_bytes;

	*by_sent = f->rtt.srtt_us != 0 && r < seq_flight;
	return *by_sent ? r : seq_flight;
}

/*
 * Count a data segment into the flow's rounds of one smoothed RTT (none
 * before the first RTT sample). A round that ends with nothing sent in the
 * one after it leaves 0 as the last round's count: an idle flow has no
 * window to show.
 */
void
sgw_xcpa_round_sent(struct sgw_xcpa_flow *f, uint32_t bytes, uint64_t now)
{
	uint64_t rtt_ns = (uint64_t)f->rtt.srtt_us * 1000u;

	if (bytes == 0 || rtt_ns == 0)
		return;
	if (now - f->rt_start_ns >= rtt_ns) {
		f->rt_prev = now - f->rt_start_ns >= 2 * rtt_ns ? 0 : f->rt_bytes;
		f->rt_bytes = 0;
		f->rt_start_ns = now;
	}
	f->rt_bytes = f->rt_bytes > UINT32_MAX - bytes ? UINT32_MAX : f->rt_bytes + bytes;
}

enum sgw_xcpa_verdict
sgw_xcpa_out(struct sgw_xcpa *a, uint8_t *p, size_t *len, size_t cap, uint64_t now)
{
	struct sgw_xcp_fields h;
	struct sgw_xcpa_pkt pk;
	struct sgw_xcpa_flow *f;
	enum sgw_xcpa_bad b;
	size_t nlen;

	a->ctr[SGW_XCPA_C_OUT_PKTS]++;
	b = sgw_xcpa_locate(p, *len, a->conf.xcp_proto, &pk);
	if (b != SGW_XCPA_OK) {
		a->ctr[SGW_XCPA_C_OUT_BAD]++;
		a->bad_out[b]++;
		return SGW_XCPA_PASS;
	}
	if (pk.xcp_len != 0 || pk.proto == a->conf.xcp_proto) {
		a->ctr[SGW_XCPA_C_OUT_HAS_XCP]++;
		return SGW_XCPA_PASS;
	}
	if (!pk.is_tcp) {
		a->ctr[SGW_XCPA_C_OUT_NON_TCP]++;
		return SGW_XCPA_PASS;
	}
	f = sgw_xcpa_flow_get(a, pk.ver, pk.src, pk.sport, pk.dst, pk.dport, now, true);
	if (f == NULL)
		return SGW_XCPA_PASS;  /* counted: table full, the flow stays plain TCP */
	f->last_ns = now;
	sgw_xcpa_flow_note(a, f, p, &pk, true);
	memset(&h, 0, sizeof(h));
	if (a->conf.role == SGW_XCPA_SENDER) {
		uint32_t seg = pk.pay_len + !!(pk.tcp_flags & SGW_XCPA_TH_SYN) +
			       !!(pk.tcp_flags & SGW_XCPA_TH_FIN);

		if (sgw_xcpa_rtt_sent(&f->rtt, pk.seq, seg, now))
			a->ctr[SGW_XCPA_C_RTT_KARN]++;
		sgw_xcpa_round_sent(f, pk.pay_len, now);
		h.rtt_us = f->rtt.srtt_us;
		h.cwnd = f->cwnd_xcp;
		h.feedback = wanted(a, f, pk.pay_len);
	} else if (pk.tcp_flags & SGW_XCPA_TH_ACK) {
		h.flags = SGW_XCPW_F_REVERSE;
		h.reverse = a->conf.echo_fixed ? a->conf.echo_value : sat32(f->fb_sum);
	}
	nlen = sgw_xcpa_insert(p, cap, &pk, a->conf.xcp_proto, &h);
	if (nlen == 0) {
		a->ctr[SGW_XCPA_C_OUT_NO_ROOM]++;
		return SGW_XCPA_PASS;
	}
	if (h.flags & SGW_XCPW_F_REVERSE) {
		/* The sum went out: the next ACK returns what arrives after it. */
		f->fb_sum = 0;
		f->fb_segs = 0;
		a->ctr[SGW_XCPA_C_ECHOED]++;
	}
	*len = nlen;
	a->ctr[SGW_XCPA_C_OUT_INSERTED]++;
	return SGW_XCPA_SEND;
}

static void
apply_feedback(struct sgw_xcpa *a, struct sgw_xcpa_flow *f, int32_t rev)
{
	int64_t c = (int64_t)f->cwnd_xcp + rev;

	if (rev > 0)
		a->ctr[SGW_XCPA_C_FB_POS_BYTES] += (uint64_t)rev;
	else if (rev < 0)
		a->ctr[SGW_XCPA_C_FB_NEG_BYTES] += (uint64_t)(-(int64_t)rev);
	/*
	 * An increase goes no higher than 2 x bytes in flight + 2 MSS (room for
	 * slow start's doubling per RTT; the legacy mode's cap). A flow held
	 * below cwnd_xcp by another bottleneck (its CUBIC window rules) would
	 * otherwise collect the XCP router's positive feedback without end: its
	 * cwnd_xcp grew to ~8 BDP in the dynamic-bottleneck run (docs/xcp.md,
	 * scenario (d)) and, when the XCP router became the bottleneck, never
	 * came down to the share in time, so min(cwnd_cubic, cwnd_xcp) never
	 * switched to XCP. The cap never lowers cwnd_xcp: only feedback does.
	 *
	 * In flight: the sequence-space flight (highest sent - highest
	 * cumulative ACK), or, once an RTT is known, what was sent in the last
	 * round trip when that is less. During loss recovery behind another
	 * bottleneck (SACK: the cumulative ACK stalls while new data goes out)
	 * the first overstates the kernel's window and each recovery let
	 * cwnd_xcp step up to ~3.4 x the kernel's window in scenario (d); what
	 * the kernel sends per round trip is its window in use.
	 */
	if (rev > 0 && (f->state & SGW_XCPA_FS_UNA) && f->rtt.max_valid) {
		int32_t d = sgw_seq_diff(f->rtt.snd_max, f->una);
		bool by_sent = false;
		int64_t cap = 2 * (int64_t)sgw_xcpa_cap_flight(f, d > 0 ? (uint32_t)d : 0,
								&by_sent) +
			      2 * (int64_t)f->mss;

		if (cap < (int64_t)f->cwnd_xcp)
			cap = f->cwnd_xcp;
		if (c > cap) {
			c = cap;
			a->ctr[SGW_XCPA_C_CWND_CAPPED]++;
			if (by_sent)
				a->ctr[SGW_XCPA_C_CWND_CAP_SENT]++;
		}
	}
	/* cwnd_xcp = max(cwnd_xcp + feedback, 1 MSS) */
	if (c <= (int64_t)f->mss) {
		c = f->mss;
		a->ctr[SGW_XCPA_C_CWND_FLOOR]++;
	}
	if (c > (int64_t)a->conf.cwnd_max)
		c = a->conf.cwnd_max;
	f->cwnd_xcp = (uint32_t)c;
	a->ctr[SGW_XCPA_C_FEEDBACK]++;
}

/* Sender: what an ACK from the remote does (after the header is gone). */
static bool
sender_ack(struct sgw_xcpa *a, struct sgw_xcpa_flow *f, uint8_t *p,
	   const struct sgw_xcpa_pkt *pk, uint64_t now)
{
	int shift = sgw_xcpa_flow_shift(f);
	bool held = false;
	int r;

	if (!(pk->tcp_flags & SGW_XCPA_TH_ACK))
		return false;
	if (sgw_xcpa_rtt_acked(&f->rtt, pk->ack, now))
		a->ctr[SGW_XCPA_C_RTT_SAMPLES]++;
	if (shift < 0) {
		/* Picked up mid-connection: the scale is unknown, and a
		 * guessed one could retract an edge the kernel has. */
		a->ctr[SGW_XCPA_C_NO_SCALE]++;
		return false;
	}
	if (pk->tcp_flags & SGW_XCPA_TH_SYN)
		shift = 0;  /* windows in SYN segments are never scaled */
	f->peer_wnd = (uint32_t)((uint64_t)pk->wnd << shift > UINT32_MAX ?
				 UINT32_MAX : (uint64_t)pk->wnd << shift);
	f->state |= SGW_XCPA_FS_PEERW;
	r = sgw_xcpa_clamp_window(p + pk->tcp_off, pk->ip_len - pk->tcp_off, (uint8_t)shift,
				  f->cwnd_xcp, &f->edge, &held);
	if (held)
		a->ctr[SGW_XCPA_C_EDGE_HELD]++;
	if (r == 1)
		a->ctr[SGW_XCPA_C_CLAMPED]++;
	return r == 1;
}

enum sgw_xcpa_verdict
sgw_xcpa_in(struct sgw_xcpa *a, uint8_t *p, size_t *len, uint64_t now)
{
	struct sgw_xcpa_pkt pk;
	struct sgw_xcpa_flow *f;
	enum sgw_xcpa_bad b;
	bool had_xcp, changed = false;

	a->ctr[SGW_XCPA_C_IN_PKTS]++;
	b = sgw_xcpa_locate(p, *len, a->conf.xcp_proto, &pk);
	if (b != SGW_XCPA_OK) {
		a->bad_in[b]++;
		if (b == SGW_XCPA_B_FRAG || b == SGW_XCPA_B_IP6_AH) {
			/* Not the agent's to judge: the host reassembles / owns SA. */
			a->ctr[SGW_XCPA_C_IN_PLAIN]++;
			return SGW_XCPA_PASS;
		}
		if (b == SGW_XCPA_B_XCP && pk.xcp_err < SGW_XCP_E__COUNT)
			a->xcp_err[pk.xcp_err]++;
		a->ctr[SGW_XCPA_C_IN_BAD]++;
		return SGW_XCPA_DROP;
	}
	had_xcp = pk.xcp_len != 0;
	if (had_xcp) {
		*len = sgw_xcpa_strip(p, &pk);
		a->ctr[SGW_XCPA_C_IN_STRIPPED]++;
		changed = true;
	} else {
		a->ctr[SGW_XCPA_C_IN_PLAIN]++;
	}
	if (!pk.is_tcp) {
		if (had_xcp)
			a->ctr[SGW_XCPA_C_IN_NON_TCP]++;
		return changed ? SGW_XCPA_SEND : SGW_XCPA_PASS;
	}
	if (!had_xcp && a->conf.role == SGW_XCPA_RECEIVER)
		return SGW_XCPA_PASS;  /* nothing to sum */
	f = sgw_xcpa_flow_get(a, pk.ver, pk.dst, pk.dport, pk.src, pk.sport, now, true);
	if (f == NULL)
		return changed ? SGW_XCPA_SEND : SGW_XCPA_PASS;
	f->last_ns = now;
	sgw_xcpa_flow_note(a, f, p, &pk, false);
	if (a->conf.role == SGW_XCPA_SENDER) {
		if (had_xcp) {
			if (pk.xcp.flags & SGW_XCPW_F_REVERSE)
				apply_feedback(a, f, pk.xcp.reverse);
			else
				a->ctr[SGW_XCPA_C_NO_REVERSE]++;
		}
		if (sender_ack(a, f, p, &pk, now))
			changed = true;
	} else {
		/* Delayed ACKs acknowledge two segments or more: the ACK must
		 * return the feedback of all of them, so it is summed. */
		f->fb_sum += pk.xcp.feedback;
		/* Bounded whatever the peer sends; sat32() cuts it at the echo. */
		if (f->fb_sum > ((int64_t)1 << 40))
			f->fb_sum = (int64_t)1 << 40;
		else if (f->fb_sum < -((int64_t)1 << 40))
			f->fb_sum = -((int64_t)1 << 40);
		f->fb_last = pk.xcp.feedback;
		if (pk.pay_len != 0) {
			f->fb_segs++;
			a->ctr[SGW_XCPA_C_ECHO_SEGS]++;
		}
	}
	return changed ? SGW_XCPA_SEND : SGW_XCPA_PASS;
}
