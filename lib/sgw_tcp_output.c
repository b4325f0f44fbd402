/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * TCP endpoint, output side (contract: sgw_tcp.h): what goes out and when.
 * Building SYN, ACK, RST, data and FIN segments; the send loop limited by
 * min(cwnd, peer window) in MSS-sized segments; retransmission of the head;
 * the advertised window (scaled, never retracted, receiver SWS avoidance);
 * the timers (RTO with backoff, persist, delayed ACK, TIME-WAIT); the
 * application's calls (connect, send, shutdown, abort, read) and NewReno.
 * Also the configuration, the names and the connection's initial values.
 */
#include <string.h>

#include "sgw_siphash.h"
#include "sgw_tcp.h"
#include "sgw_tcp_priv.h"

_Static_assert(sizeof(struct sgw_tcp_conn) == 256, "sgw_tcp_conn is 4 cache lines");
_Static_assert(sizeof(struct sgw_tcp_sb) == 64, "a SACK scoreboard is one cache line");
_Static_assert(offsetof(struct sgw_tcp_conn, snd_una) == 64, "line 1 is the send side");
_Static_assert(offsetof(struct sgw_tcp_conn, rtt_ts) == 128, "line 2 is timers and RTT");
_Static_assert(offsetof(struct sgw_tcp_conn, ooo) == 192, "line 3 is the ooo records");
_Static_assert(offsetof(struct sgw_tcp_conn, sb_n) < 128, "sb_n is read by every ACK");

static const char *const state_names[SGW_TCP_S__COUNT] = {
	[SGW_TCP_CLOSED] = "CLOSED",
	[SGW_TCP_LISTEN] = "LISTEN",
	[SGW_TCP_SYN_SENT] = "SYN-SENT",
	[SGW_TCP_SYN_RCVD] = "SYN-RECEIVED",
	[SGW_TCP_ESTABLISHED] = "ESTABLISHED",
	[SGW_TCP_FIN_WAIT_1] = "FIN-WAIT-1",
	[SGW_TCP_FIN_WAIT_2] = "FIN-WAIT-2",
	[SGW_TCP_CLOSING] = "CLOSING",
	[SGW_TCP_TIME_WAIT] = "TIME-WAIT",
	[SGW_TCP_CLOSE_WAIT] = "CLOSE-WAIT",
	[SGW_TCP_LAST_ACK] = "LAST-ACK",
};

const char *
sgw_tcp_state_name(int state)
{
	if (state < 0 || state >= SGW_TCP_S__COUNT)
		return "?";
	return state_names[state];
}

static const char *const ctr_names[SGW_TCP_C__COUNT] = {
	[SGW_TCP_C_SEGS_IN] = "segs_in",
	[SGW_TCP_C_SEGS_OUT] = "segs_out",
	[SGW_TCP_C_DATA_SEGS_OUT] = "data_segs_out",
	[SGW_TCP_C_RETX_SEGS] = "retx_segs",
	[SGW_TCP_C_RTO] = "rto",
	[SGW_TCP_C_FAST_RETX] = "fast_retx",
	[SGW_TCP_C_DUPACKS_IN] = "dupacks_in",
	[SGW_TCP_C_PAWS_DROP] = "paws_drop",
	[SGW_TCP_C_OUT_OF_WINDOW] = "out_of_window",
	[SGW_TCP_C_CHALLENGE_ACK] = "challenge_ack",
	[SGW_TCP_C_RST_IN] = "rst_in",
	[SGW_TCP_C_RST_IGNORED] = "rst_ignored",
	[SGW_TCP_C_RST_OUT] = "rst_out",
	[SGW_TCP_C_BAD_ACK] = "bad_ack",
	[SGW_TCP_C_NO_ACK_FLAG] = "no_ack_flag",
	[SGW_TCP_C_OOO_SEGS] = "ooo_segs",
	[SGW_TCP_C_OOO_FULL] = "ooo_full",
	[SGW_TCP_C_RX_CLIPPED] = "rx_clipped",
	[SGW_TCP_C_DUP_DATA] = "dup_data",
	[SGW_TCP_C_PERSIST_PROBES] = "persist_probes",
	[SGW_TCP_C_DELACK_FIRED] = "delack_fired",
	[SGW_TCP_C_ACKS_OUT] = "acks_out",
	[SGW_TCP_C_WND_UPDATES] = "wnd_updates",
	[SGW_TCP_C_LISTEN_DROP] = "listen_drop",
	[SGW_TCP_C_SYN_SENT_DROP] = "syn_sent_drop",
	[SGW_TCP_C_TIMEOUT_ABORT] = "timeout_abort",
	[SGW_TCP_C_TIMER_SPURIOUS] = "timer_spurious",
	[SGW_TCP_C_CLOSED_DROP] = "closed_drop",
	[SGW_TCP_C_URG_IGNORED] = "urg_ignored",
	[SGW_TCP_C_RTT_SAMPLES] = "rtt_samples",
	[SGW_TCP_C_SACK_RECOVERY] = "sack_recovery",
	[SGW_TCP_C_SACK_RETX] = "sack_retx",
	[SGW_TCP_C_RESCUE_RETX] = "rescue_retx",
	[SGW_TCP_C_DSACK_IN] = "dsack_in",
	[SGW_TCP_C_SACK_BAD] = "sack_bad",
	[SGW_TCP_C_SB_FULL] = "sb_full",
	[SGW_TCP_C_SACK_RENEGE] = "sack_renege",
	[SGW_TCP_C_KEEPALIVE_PROBES] = "keepalive_probes",
	[SGW_TCP_C_KEEPALIVE_ABORT] = "keepalive_abort",
	[SGW_TCP_C_SB_NOMEM] = "sb_nomem",
	[SGW_TCP_C_SB_NOMEM_RECOVERY] = "sb_nomem_recovery",
	[SGW_TCP_C_ZERO_WND_OUT] = "zero_windows_out",
};

const char *
sgw_tcp_ctr_name(int ctr)
{
	if (ctr < 0 || ctr >= SGW_TCP_C__COUNT)
		return "?";
	return ctr_names[ctr];
}

void
sgw_tcp_conf_default(struct sgw_tcp_conf *conf)
{
	memset(conf, 0, sizeof(*conf));
	conf->mss = 1460;
	conf->wscale = 1;
	conf->sack = 1;
	conf->timestamps = 1;
	conf->syn_retries = 6;
	conf->data_retries = 15;
	conf->delack_segs = 2;
	conf->rcv_buf = 4u << 20;
	conf->init_cwnd_segs = 10;
	conf->cwnd_max = 64u << 20;
	conf->rto_init_ns = 1000 * TCP_NS_PER_MS;
	conf->rto_min_ns = 200 * TCP_NS_PER_MS;
	conf->rto_max_ns = 60000 * TCP_NS_PER_MS;
	conf->delack_ns = 40 * TCP_NS_PER_MS;
	conf->msl_ns = 30000 * TCP_NS_PER_MS;
	conf->keepalive_idle_ns = 0;
	conf->keepalive_intvl_ns = 75000 * TCP_NS_PER_MS;
	conf->keepalive_probes = 9;
}

const char *
sgw_tcp_conf_check(const struct sgw_tcp_conf *conf)
{
	if (conf->mss < 64 || conf->mss > 65495)
		return "mss";
	if (conf->delack_segs < 1)
		return "delack_segs";
	if (conf->rcv_buf < conf->mss || conf->rcv_buf > (1u << 30))
		return "rcv_buf";
	if (conf->init_cwnd_segs < 1 || conf->init_cwnd_segs > 1000)
		return "init_cwnd_segs";
	if (conf->cwnd_max < 2u * conf->mss || conf->cwnd_max > (1u << 30))
		return "cwnd_max";
	if (conf->rto_min_ns < TCP_NS_PER_MS || conf->rto_min_ns > conf->rto_max_ns)
		return "rto_min_ns";
	/* RTOs are kept in microseconds in 32 bits */
	if (conf->rto_max_ns > 3600000ull * TCP_NS_PER_MS)
		return "rto_max_ns";
	if (conf->rto_init_ns < conf->rto_min_ns || conf->rto_init_ns > conf->rto_max_ns)
		return "rto_init_ns";
	/* RFC 9293 3.8.6.3 / RFC 1122 4.2.3.2: under 0.5 s; we hold 200 ms as the ceiling */
	if (conf->delack_ns == 0 || conf->delack_ns > 200 * TCP_NS_PER_MS)
		return "delack_ns";
	if (conf->msl_ns == 0)
		return "msl_ns";
	if (conf->keepalive_idle_ns &&
	    (conf->keepalive_intvl_ns == 0 || conf->keepalive_probes == 0))
		return "keepalive_intvl_ns";
	return NULL;
}

int
sgw_tcp_stack_init(struct sgw_tcp_stack *st, const struct sgw_tcp_conf *conf,
		   const struct sgw_tcp_ops *ops, void *ctx)
{
	uint8_t ws = 0;

	if (st == NULL || conf == NULL || ops == NULL || sgw_tcp_conf_check(conf) != NULL)
		return -1;
	if (ops->tx == NULL || ops->rx_data == NULL || ops->rx_advance == NULL ||
	    ops->rx_space == NULL || ops->tx_acked == NULL)
		return -1;
	memset(st, 0, sizeof(*st));
	st->conf = *conf;
	st->ops = *ops;
	st->ctx = ctx;
	/* the smallest shift that lets the whole buffer be advertised */
	while (ws < SGW_TCP_MAX_WSCALE && (conf->rcv_buf >> ws) > 65535)
		ws++;
	st->rcv_wscale = conf->wscale ? ws : 0;
	/* the built-in scoreboards until sgw_tcp_stack_set_sb_pool */
	st->sb_cap = SGW_TCP_SB_POOL_DEFAULT;
	st->sb_free = SGW_TCP_SB_NONE;
	return 0;
}

void
sgw_tcp_conn_init(struct sgw_tcp_stack *st, struct sgw_tcp_conn *c, uint32_t iss,
		  uint16_t sport, uint16_t dport)
{
	unsigned int i;

	memset(c, 0, sizeof(*c));
	c->state = SGW_TCP_CLOSED;
	c->iss = iss;
	c->snd_una = iss;
	c->snd_nxt = iss;
	c->snd_max = iss;
	c->snd_end = iss + 1;
	c->sport = sport;
	c->dport = dport;
	c->mss_local = st->conf.mss;
	c->peer_mss = TCP_DEFAULT_MSS;
	c->snd_mss = TCP_DEFAULT_MSS;
	c->rcv_mss = TCP_DEFAULT_MSS;
	/* RFC 7323 5.4 wants a per-connection random offset: iss is one (RFC 6528) */
	c->ts_offset = iss * 2654435761u;
	c->rto_us = (uint32_t)(st->conf.rto_init_ns / TCP_NS_PER_US);
	c->sb_idx = SGW_TCP_SB_NONE;
	for (i = 0; i < SGW_TCP_T__COUNT; i++)
		c->tw[i] = UINT32_MAX;
	c->cc = st->cc != NULL ? st->cc : &sgw_tcp_cc_newreno;
	c->cc->init(c);
}

void
sgw_tcp_stack_set_secret(struct sgw_tcp_stack *st, const uint8_t key[16])
{
	memcpy(st->isn_key, key, sizeof(st->isn_key));
	st->isn_key_set = 1;
}

uint32_t
sgw_tcp_isn(const struct sgw_tcp_stack *st, const uint8_t *laddr, const uint8_t *raddr,
	    unsigned int alen, uint16_t lport, uint16_t rport, uint64_t now_ns)
{
	uint8_t m[2 * 16 + 4];
	uint32_t n = 0;

	if (alen > 16)
		alen = 16;
	memcpy(m, laddr, alen);
	n = alen;
	m[n++] = (uint8_t)(lport >> 8);
	m[n++] = (uint8_t)lport;
	memcpy(m + n, raddr, alen);
	n += alen;
	m[n++] = (uint8_t)(rport >> 8);
	m[n++] = (uint8_t)rport;
	return (uint32_t)(now_ns / 4000u) + (uint32_t)sgw_siphash24(st->isn_key, m, n);
}

void
sgw_tcp_stack_set_cc(struct sgw_tcp_stack *st, const struct sgw_tcp_cc_ops *cc)
{
	st->cc = cc;
}

void
sgw_tcp_set_cc(struct sgw_tcp_conn *c, const struct sgw_tcp_cc_ops *cc)
{
	c->cc = cc != NULL ? cc : &sgw_tcp_cc_newreno;
	c->cc->init(c);
}

/* ------------------------------------------------------------ NewReno */

static uint32_t
newreno_ssthresh(struct sgw_tcp_conn *c, uint64_t now_ns)
{
	uint32_t flight = c->snd_max - c->snd_una;
	uint32_t half = flight / 2;

	(void)now_ns;
	/* RFC 5681 (4): max(FlightSize / 2, 2 * SMSS) */
	return half > 2u * c->snd_mss ? half : 2u * c->snd_mss;
}

static void
newreno_init(struct sgw_tcp_conn *c)
{
	memset(c->cc_data, 0, sizeof(c->cc_data));
}

static void
newreno_ack(struct sgw_tcp_conn *c, uint32_t acked, uint64_t now_ns)
{
	uint32_t acc;

	(void)now_ns;
	if (c->cwnd < c->ssthresh) {
		/* RFC 3465 byte counting with L = 2 SMSS */
		c->cwnd += acked < 2u * c->snd_mss ? acked : 2u * c->snd_mss;
		return;
	}
	/* congestion avoidance: one SMSS per cwnd of bytes acknowledged */
	memcpy(&acc, c->cc_data, sizeof(acc));
	acc += acked;
	if (acc >= c->cwnd) {
		acc -= c->cwnd;
		c->cwnd += c->snd_mss;
	}
	memcpy(c->cc_data, &acc, sizeof(acc));
}

const struct sgw_tcp_cc_ops sgw_tcp_cc_newreno = {
	.name = "newreno",
	.init = newreno_init,
	.ack = newreno_ack,
	.ssthresh = newreno_ssthresh,
	.recovered = NULL,
};

/* ------------------------------------------------------------ segments */

/* The right edge we could advertise now (not retracting), and the SWS threshold. */
static uint32_t
rcv_right_edge(struct sgw_tcp_stack *st, struct sgw_tcp_conn *c, uint32_t *thresh)
{
	uint32_t space = st->ops.rx_space(st->ctx, c);
	uint32_t maxw = 65535u << c->rcv_wscale;
	uint32_t t = st->conf.rcv_buf / 2;

	if (space > maxw)
		space = maxw;
	if (t > c->mss_local)
		t = c->mss_local;
	*thresh = t;
	return c->rcv_nxt + space;
}

uint32_t
tcp_rcv_window(struct sgw_tcp_stack *st, struct sgw_tcp_conn *c, int syn)
{
	uint32_t thresh, right, wnd, field;

	right = rcv_right_edge(st, c, &thresh);
	if (syn) {
		/* RFC 7323 2.2: the window in a SYN is never scaled */
		wnd = right - c->rcv_nxt;
		if (wnd > 65535)
			wnd = 65535;
		c->rcv_adv = c->rcv_nxt + wnd;
		return wnd;
	}
	/*
	 * Receiver SWS avoidance (RFC 9293 3.8.6.2.2): move the right edge
	 * only by at least min(MSS, buffer / 2); never move it left.
	 */
	if (SGW_SEQ_GT(right, c->rcv_adv) && right - c->rcv_adv >= thresh)
		c->rcv_adv = right;
	if (SGW_SEQ_LT(c->rcv_adv, c->rcv_nxt))
		c->rcv_adv = c->rcv_nxt;
	wnd = c->rcv_adv - c->rcv_nxt;
	/*
	 * Round down: the edge the peer sees may step back by less than the
	 * scale's granularity (RFC 7323 2.4 expects it), but never past what
	 * the caller's buffer holds; rounding up would invite bytes it has no
	 * room for.
	 */
	field = wnd >> c->rcv_wscale;
	if (field > 65535)
		field = 65535;
	return field;
}

static void
fill_sack(const struct sgw_tcp_conn *c, struct sgw_tcp_seg *s)
{
	unsigned int i, n = 0;

	if (!(c->flags & SGW_TCP_CF_SACK) || c->ooo_n == 0)
		return;
	/* RFC 2018: the first block holds the most recently received segment */
	s->sack[n++] = c->ooo[c->ooo_last];
	for (i = 0; i < c->ooo_n && n < SGW_TCP_MAX_SACK; i++)
		if (i != c->ooo_last)
			s->sack[n++] = c->ooo[i];
	s->n_sack = (uint8_t)n;
	s->opts |= SGW_TCP_O_SACK;
}

/* Build and emit one segment: data_len bytes of the send buffer from seq. */
static void
emit(struct sgw_tcp_stack *st, struct sgw_tcp_conn *c, uint64_t now, struct sgw_tcp_seg *s,
     uint32_t data_len, struct sgw_tcp_out *out)
{
	uint8_t hdr[SGW_TCP_MAX_HDR_LEN];
	uint32_t hlen;

	s->sport = c->sport;
	s->dport = c->dport;
	if (s->flags & SGW_TCP_F_ACK) {
		s->ack = c->rcv_nxt;
		if (!(s->flags & SGW_TCP_F_SYN)) {
			s->win = (uint16_t)tcp_rcv_window(st, c, 0);
			if (s->win == 0 && !(s->flags & SGW_TCP_F_RST))
				st->ctr[SGW_TCP_C_ZERO_WND_OUT]++;
		}
		c->last_ack_sent = c->rcv_nxt;
		/* every ACK carries what a delayed one would have said */
		c->flags &= ~(uint32_t)(SGW_TCP_CF_ACK_NOW | SGW_TCP_CF_DELACK);
		c->delack_cnt = 0;
		tcp_timer_cancel(c, out, SGW_TCP_T_DELACK);
	}
	if ((c->flags & SGW_TCP_CF_TS) && !(s->flags & SGW_TCP_F_RST)) {
		s->opts |= SGW_TCP_O_TS;
		s->tsval = tcp_ts_now(c, now);
		s->tsecr = (s->flags & SGW_TCP_F_ACK) ? c->ts_recent : 0;
	}
	if (!(s->flags & (SGW_TCP_F_SYN | SGW_TCP_F_RST)))
		fill_sack(c, s);
	hlen = sgw_tcp_seg_build(hdr, sizeof(hdr), s);
	st->ops.tx(st->ctx, c, hdr, hlen, data_len ? s->seq - c->snd_una : 0, data_len);
	st->ctr[SGW_TCP_C_SEGS_OUT]++;
	out->segs++;
}

void
tcp_send_syn(struct sgw_tcp_stack *st, struct sgw_tcp_conn *c, uint64_t now,
	     struct sgw_tcp_out *out)
{
	struct sgw_tcp_seg s;
	int passive = c->state == SGW_TCP_SYN_RCVD;
	uint32_t fl = c->flags;

	memset(&s, 0, sizeof(s));
	s.seq = c->iss;
	s.flags = SGW_TCP_F_SYN | (passive ? SGW_TCP_F_ACK : 0);
	s.opts = SGW_TCP_O_MSS;
	s.mss = c->mss_local;
	/* a SYN-ACK answers only the options the SYN offered (RFC 7323, 2018) */
	if (st->conf.wscale && (!passive || (fl & SGW_TCP_CF_PEER_WS))) {
		s.opts |= SGW_TCP_O_WS;
		s.wscale = c->rcv_wscale;
	}
	if (st->conf.sack && (!passive || (fl & SGW_TCP_CF_PEER_SACK)))
		s.opts |= SGW_TCP_O_SACK_PERM;
	if (st->conf.timestamps && (!passive || (fl & SGW_TCP_CF_PEER_TS))) {
		s.opts |= SGW_TCP_O_TS;
		s.tsval = tcp_ts_now(c, now);
		s.tsecr = passive ? c->ts_recent : 0;
	}
	s.win = (uint16_t)tcp_rcv_window(st, c, 1);
	/* emit() adds TS only once negotiated: keep the SYN's own */
	c->flags &= ~(uint32_t)SGW_TCP_CF_TS;
	emit(st, c, now, &s, 0, out);
	c->flags |= fl & SGW_TCP_CF_TS;
	/* time the handshake unless the SYN was sent before (Karn) */
	if (c->retries == 0) {
		c->flags |= SGW_TCP_CF_RTT_TIMING;
		c->rtt_seq = c->iss + 1;
		c->rtt_ts = now;
	} else {
		c->flags &= ~(uint32_t)SGW_TCP_CF_RTT_TIMING;
	}
	if (SGW_SEQ_LT(c->snd_max, c->iss + 1))
		c->snd_max = c->iss + 1;
	c->snd_nxt = c->iss + 1;
}

void
tcp_send_ack(struct sgw_tcp_stack *st, struct sgw_tcp_conn *c, uint64_t now,
	     struct sgw_tcp_out *out)
{
	struct sgw_tcp_seg s;

	memset(&s, 0, sizeof(s));
	s.seq = c->snd_nxt;
	s.flags = SGW_TCP_F_ACK;
	emit(st, c, now, &s, 0, out);
	st->ctr[SGW_TCP_C_ACKS_OUT]++;
}

void
tcp_send_rst(struct sgw_tcp_stack *st, struct sgw_tcp_conn *c, uint32_t seq, uint32_t ack,
	     uint8_t flags, struct sgw_tcp_out *out)
{
	struct sgw_tcp_seg s;
	uint8_t hdr[SGW_TCP_MAX_HDR_LEN];
	uint32_t hlen;

	memset(&s, 0, sizeof(s));
	s.sport = c->sport;
	s.dport = c->dport;
	s.seq = seq;
	s.ack = ack;
	s.flags = (uint8_t)(SGW_TCP_F_RST | flags);
	hlen = sgw_tcp_seg_build(hdr, sizeof(hdr), &s);
	st->ops.tx(st->ctx, c, hdr, hlen, 0, 0);
	st->ctr[SGW_TCP_C_SEGS_OUT]++;
	st->ctr[SGW_TCP_C_RST_OUT]++;
	out->segs++;
}

/* Send [seq, seq + len) of the send buffer, and the FIN after it if fin. */
void
tcp_send_data(struct sgw_tcp_stack *st, struct sgw_tcp_conn *c, uint64_t now, uint32_t seq,
	  uint32_t len, int fin, struct sgw_tcp_out *out)
{
	struct sgw_tcp_seg s;
	uint32_t end = seq + len + (fin ? 1 : 0);

	memset(&s, 0, sizeof(s));
	s.seq = seq;
	s.flags = SGW_TCP_F_ACK;
	if (fin)
		s.flags |= SGW_TCP_F_FIN;
	if (len && seq + len == c->snd_end)
		s.flags |= SGW_TCP_F_PSH;
	if (SGW_SEQ_LT(seq, c->snd_max)) {
		st->ctr[SGW_TCP_C_RETX_SEGS]++;
		/* Karn: a segment sent twice gives no RTT sample */
		c->flags &= ~(uint32_t)SGW_TCP_CF_RTT_TIMING;
	} else if (!(c->flags & (SGW_TCP_CF_RTT_TIMING | SGW_TCP_CF_TS))) {
		c->flags |= SGW_TCP_CF_RTT_TIMING;
		c->rtt_seq = end;
		c->rtt_ts = now;
	}
	if (len)
		st->ctr[SGW_TCP_C_DATA_SEGS_OUT]++;
	emit(st, c, now, &s, len, out);
	if (SGW_SEQ_GT(end, c->snd_max))
		c->snd_max = end;
	if (fin)
		c->flags |= SGW_TCP_CF_FIN_SENT;
}

static int
can_send_data(const struct sgw_tcp_conn *c)
{
	switch (c->state) {
	case SGW_TCP_ESTABLISHED:
	case SGW_TCP_CLOSE_WAIT:
	case SGW_TCP_FIN_WAIT_1:
	case SGW_TCP_CLOSING:
	case SGW_TCP_LAST_ACK:
		return 1;
	default:
		return 0;
	}
}

void
tcp_output(struct sgw_tcp_stack *st, struct sgw_tcp_conn *c, uint64_t now,
	   struct sgw_tcp_out *out)
{
	if (!can_send_data(c))
		return;
	if (tcp_sack_recovery(c)) {
		/* RFC 6675: pipe and NextSeg decide, not snd_nxt */
		tcp_sack_output(st, c, now, out);
		return;
	}
	/*
	 * Each turn sends a segment of at least one byte, or the FIN once, or
	 * stops: at most cwnd / 1 + 1 turns, and cwnd is capped by cwnd_max.
	 */
	for (;;) {
		uint32_t wnd = c->cwnd < c->snd_wnd ? c->cwnd : c->snd_wnd;
		uint32_t inflight = c->snd_nxt - c->snd_una;
		int32_t left;
		uint32_t room, len;
		int fin;

		if (c->sb_n && SGW_SEQ_LT(c->snd_nxt, c->snd_max)) {
			/*
			 * Going back after an RTO: skip what the peer SACKed,
			 * and do not count it as in flight (RFC 6675 5.1).
			 */
			const struct sgw_tcp_sack *sb = tcp_sb(st, c)->r;
			uint32_t k, stop = c->snd_max;

			for (k = 0; k < c->sb_n; k++) {
				if (SGW_SEQ_LE(sb[k].left, c->snd_nxt) &&
				    SGW_SEQ_GT(sb[k].right, c->snd_nxt))
					c->snd_nxt = sb[k].right;
				else if (SGW_SEQ_GT(sb[k].left, c->snd_nxt) &&
					 SGW_SEQ_LT(sb[k].left, stop))
					stop = sb[k].left;
			}
			inflight = c->snd_nxt - c->snd_una -
				   tcp_sb_sacked_below(st, c, c->snd_nxt);
			left = (int32_t)(c->snd_end - c->snd_nxt);
			if (left > 0 && SGW_SEQ_LT(c->snd_nxt, stop) &&
			    (int32_t)(stop - c->snd_nxt) < left)
				left = (int32_t)(stop - c->snd_nxt);
		} else {
			left = (int32_t)(c->snd_end - c->snd_nxt);
		}
		if (left > 0) {
			room = wnd > inflight ? wnd - inflight : 0;
			len = (uint32_t)left;
			if (len > c->snd_mss)
				len = c->snd_mss;
			if (len > room)
				len = room;
			if (len == 0)
				break;
			/* sender SWS avoidance (RFC 9293 3.8.6.2.1); no Nagle */
			if (len < c->snd_mss && len < (uint32_t)left && len < c->snd_wnd_max / 2)
				break;
			fin = (c->flags & SGW_TCP_CF_FIN_QUEUED) && c->snd_nxt + len == c->snd_end;
			tcp_send_data(st, c, now, c->snd_nxt, len, fin, out);
			c->snd_nxt += len + (fin ? 1 : 0);
			continue;
		}
		if (left == 0 && (c->flags & SGW_TCP_CF_FIN_QUEUED)) {
			/* the FIN alone needs no window */
			tcp_send_data(st, c, now, c->snd_nxt, 0, 1, out);
			c->snd_nxt++;
		}
		break;
	}
}

void
tcp_retransmit_head(struct sgw_tcp_stack *st, struct sgw_tcp_conn *c, uint64_t now,
		    struct sgw_tcp_out *out)
{
	int32_t left = (int32_t)(c->snd_end - c->snd_una);
	uint32_t len = left > 0 ? (uint32_t)left : 0;
	uint32_t end;
	int fin;

	if (len > c->snd_mss)
		len = c->snd_mss;
	fin = (c->flags & SGW_TCP_CF_FIN_QUEUED) && left >= 0 && len == (uint32_t)left;
	if (c->sb_n != 0) {
		uint32_t l0 = tcp_sb(st, c)->r[0].left;

		if (SGW_SEQ_LT(l0, c->snd_una + len + (fin ? 1u : 0u))) {
			/* not into what the peer SACKed */
			len = l0 - c->snd_una;
			fin = 0;
		}
	}
	if (len == 0 && !fin)
		return;
	tcp_send_data(st, c, now, c->snd_una, len, fin, out);
	end = c->snd_una + len + (fin ? 1 : 0);
	if (SGW_SEQ_LT(c->snd_nxt, end))
		c->snd_nxt = end;
}

void
tcp_closed(struct sgw_tcp_stack *st, struct sgw_tcp_conn *c, struct sgw_tcp_out *out)
{
	unsigned int i;

	/* the scoreboard goes back to the pool: the slot may be freed after this */
	tcp_sb_drop(st, c);
	c->flags &= ~(uint32_t)(SGW_TCP_CF_RECOVERY | SGW_TCP_CF_NOSB);
	c->state = SGW_TCP_CLOSED;
	for (i = 0; i < SGW_TCP_T__COUNT; i++)
		tcp_timer_cancel(c, out, i);
	c->flags &= ~(uint32_t)(SGW_TCP_CF_ACK_NOW | SGW_TCP_CF_DELACK);
	out->events |= SGW_TCP_EV_CLOSED;
}

void
tcp_enter_time_wait(struct sgw_tcp_stack *st, struct sgw_tcp_conn *c, uint64_t now,
		    struct sgw_tcp_out *out)
{
	c->state = SGW_TCP_TIME_WAIT;
	c->flags &= ~(uint32_t)SGW_TCP_CF_KEEPALIVE;
	tcp_timer_cancel(c, out, SGW_TCP_T_RTX);
	tcp_timer_cancel(c, out, SGW_TCP_T_PERSIST);
	tcp_timer_arm(c, out, SGW_TCP_T_WAIT, now + 2 * st->conf.msl_ns);
}

static int
data_pending(const struct sgw_tcp_conn *c)
{
	return SGW_SEQ_LT(c->snd_nxt, c->snd_end) ||
	       ((c->flags & SGW_TCP_CF_FIN_QUEUED) && c->snd_nxt == c->snd_end);
}

/* States where keepalive runs: the connection may sit idle there for long. */
static int
keepalive_state(const struct sgw_tcp_stack *st, const struct sgw_tcp_conn *c)
{
	return c->state == SGW_TCP_ESTABLISHED || c->state == SGW_TCP_CLOSE_WAIT ||
	       (c->state == SGW_TCP_FIN_WAIT_2 && st->conf.fin_wait2_ns == 0);
}

/*
 * Bring the retransmission, persist and delayed-ACK timers in line with the
 * connection after a call. A running RTO is left alone (RFC 6298 5.1: it is
 * restarted only when new data is acknowledged, by cancelling it first).
 */
void
tcp_set_timers(struct sgw_tcp_stack *st, struct sgw_tcp_conn *c, uint64_t now,
	       struct sgw_tcp_out *out)
{
	int syn_wait = c->state == SGW_TCP_SYN_SENT || c->state == SGW_TCP_SYN_RCVD;

	if (c->state == SGW_TCP_CLOSED || c->state == SGW_TCP_LISTEN ||
	    c->state == SGW_TCP_TIME_WAIT)
		return;
	if (c->snd_una != c->snd_max || syn_wait) {
		if (!tcp_timer_armed(c, SGW_TCP_T_RTX))
			tcp_timer_arm(c, out, SGW_TCP_T_RTX, now + tcp_cur_rto_ns(st, c));
		tcp_timer_cancel(c, out, SGW_TCP_T_PERSIST);
		c->persist_backoff = 0;
	} else {
		tcp_timer_cancel(c, out, SGW_TCP_T_RTX);
		/*
		 * Nothing in flight and data waiting: the peer's window is shut
		 * or too small for the sender's SWS rule. The persist timer
		 * probes a zero window and overrides SWS (RFC 9293 3.8.6.2.1).
		 */
		if (data_pending(c) && can_send_data(c)) {
			if (!tcp_timer_armed(c, SGW_TCP_T_PERSIST)) {
				uint64_t d = tcp_cur_rto_ns(st, c);
				unsigned int b = c->persist_backoff;

				while (b-- > 0 && d < st->conf.rto_max_ns)
					d <<= 1;
				if (d > st->conf.rto_max_ns)
					d = st->conf.rto_max_ns;
				tcp_timer_arm(c, out, SGW_TCP_T_PERSIST, now + d);
			}
		} else {
			tcp_timer_cancel(c, out, SGW_TCP_T_PERSIST);
			c->persist_backoff = 0;
		}
	}
	if ((c->flags & SGW_TCP_CF_DELACK) && !tcp_timer_armed(c, SGW_TCP_T_DELACK))
		tcp_timer_arm(c, out, SGW_TCP_T_DELACK, now + st->conf.delack_ns);
	/* keepalive shares T_WAIT: TIME-WAIT and the FIN-WAIT-2 limit never run with it */
	if (st->conf.keepalive_idle_ns && keepalive_state(st, c) &&
	    !tcp_timer_armed(c, SGW_TCP_T_WAIT)) {
		c->flags |= SGW_TCP_CF_KEEPALIVE;
		c->ka_probes = 0;
		tcp_timer_arm(c, out, SGW_TCP_T_WAIT, now + st->conf.keepalive_idle_ns);
	}
}

/* ------------------------------------------------------------ application calls */

int
sgw_tcp_listen(struct sgw_tcp_stack *st, struct sgw_tcp_conn *c)
{
	(void)st;
	if (c->state != SGW_TCP_CLOSED)
		return -1;
	c->state = SGW_TCP_LISTEN;
	return 0;
}

int
sgw_tcp_connect(struct sgw_tcp_stack *st, struct sgw_tcp_conn *c, uint64_t now_ns,
		struct sgw_tcp_out *out)
{
	if (c->state != SGW_TCP_CLOSED)
		return -1;
	c->state = SGW_TCP_SYN_SENT;
	c->rcv_wscale = st->rcv_wscale;
	tcp_send_syn(st, c, now_ns, out);
	tcp_set_timers(st, c, now_ns, out);
	return 0;
}

int
sgw_tcp_send(struct sgw_tcp_stack *st, struct sgw_tcp_conn *c, uint64_t now_ns, uint32_t n,
	     struct sgw_tcp_out *out)
{
	switch (c->state) {
	case SGW_TCP_SYN_SENT:
	case SGW_TCP_SYN_RCVD:
	case SGW_TCP_ESTABLISHED:
	case SGW_TCP_CLOSE_WAIT:
		break;
	default:
		return -1;
	}
	if (c->flags & SGW_TCP_CF_FIN_QUEUED)
		return -1;
	/* the send buffer holds less than 2^31 bytes past snd_una */
	if ((uint64_t)(c->snd_end - c->snd_una) + n >= (1ull << 31))
		return -1;
	c->snd_end += n;
	tcp_output(st, c, now_ns, out);
	tcp_set_timers(st, c, now_ns, out);
	return 0;
}

int
sgw_tcp_shutdown(struct sgw_tcp_stack *st, struct sgw_tcp_conn *c, uint64_t now_ns,
		 struct sgw_tcp_out *out)
{
	if (c->flags & SGW_TCP_CF_FIN_QUEUED)
		return -1;
	switch (c->state) {
	case SGW_TCP_LISTEN:
		tcp_closed(st, c, out);
		return 0;
	case SGW_TCP_SYN_SENT:
	case SGW_TCP_SYN_RCVD:
		/* queued: the FIN goes out once established */
		c->flags |= SGW_TCP_CF_FIN_QUEUED;
		return 0;
	case SGW_TCP_ESTABLISHED:
		c->state = SGW_TCP_FIN_WAIT_1;
		break;
	case SGW_TCP_CLOSE_WAIT:
		c->state = SGW_TCP_LAST_ACK;
		break;
	default:
		return -1;
	}
	c->flags |= SGW_TCP_CF_FIN_QUEUED;
	tcp_output(st, c, now_ns, out);
	tcp_set_timers(st, c, now_ns, out);
	return 0;
}

void
sgw_tcp_abort(struct sgw_tcp_stack *st, struct sgw_tcp_conn *c, uint64_t now_ns,
	      struct sgw_tcp_out *out)
{
	(void)now_ns;
	switch (c->state) {
	case SGW_TCP_CLOSED:
		return;
	case SGW_TCP_LISTEN:
	case SGW_TCP_SYN_SENT:
	case SGW_TCP_TIME_WAIT:
		break;
	default:
		tcp_send_rst(st, c, c->snd_max, 0, 0, out);
		break;
	}
	out->events |= SGW_TCP_EV_RESET;
	out->reason = SGW_TCP_RR_ABORT;
	tcp_closed(st, c, out);
}

void
sgw_tcp_rx_consumed(struct sgw_tcp_stack *st, struct sgw_tcp_conn *c, uint64_t now_ns,
		    struct sgw_tcp_out *out)
{
	uint32_t thresh, right;

	if (c->state != SGW_TCP_ESTABLISHED && c->state != SGW_TCP_FIN_WAIT_1 &&
	    c->state != SGW_TCP_FIN_WAIT_2)
		return;
	right = rcv_right_edge(st, c, &thresh);
	if (SGW_SEQ_GT(right, c->rcv_adv) && right - c->rcv_adv >= thresh) {
		st->ctr[SGW_TCP_C_WND_UPDATES]++;
		tcp_send_ack(st, c, now_ns, out);
		tcp_set_timers(st, c, now_ns, out);
	}
}

/* ------------------------------------------------------------ timers */

static void
timer_rtx(struct sgw_tcp_stack *st, struct sgw_tcp_conn *c, uint64_t now,
	  struct sgw_tcp_out *out)
{
	if (c->state == SGW_TCP_SYN_SENT || c->state == SGW_TCP_SYN_RCVD) {
		if (++c->retries > st->conf.syn_retries) {
			st->ctr[SGW_TCP_C_TIMEOUT_ABORT]++;
			out->events |= SGW_TCP_EV_RESET;
			out->reason = SGW_TCP_RR_TIMEOUT;
			tcp_closed(st, c, out);
			return;
		}
		if (c->backoff < 30)
			c->backoff++;
		tcp_send_syn(st, c, now, out);
		tcp_timer_arm(c, out, SGW_TCP_T_RTX, now + tcp_cur_rto_ns(st, c));
		return;
	}
	if (c->snd_una == c->snd_max || !can_send_data(c)) {
		st->ctr[SGW_TCP_C_TIMER_SPURIOUS]++;
		return;
	}
	if (++c->retries > st->conf.data_retries) {
		st->ctr[SGW_TCP_C_TIMEOUT_ABORT]++;
		/* nothing got through: the peer's rcv_nxt is most likely snd_una */
		tcp_send_rst(st, c, c->snd_una, 0, 0, out);
		out->events |= SGW_TCP_EV_RESET;
		out->reason = SGW_TCP_RR_TIMEOUT;
		tcp_closed(st, c, out);
		return;
	}
	st->ctr[SGW_TCP_C_RTO]++;
	/* RFC 5681 (4) and the loss window; RFC 6582: no fast retransmit below snd_max */
	c->ssthresh = c->cc->ssthresh(c, now);
	c->cwnd = c->snd_mss;
	c->flags &= ~(uint32_t)(SGW_TCP_CF_RECOVERY | SGW_TCP_CF_RTT_TIMING | SGW_TCP_CF_NOSB);
	c->dupacks = 0;
	/*
	 * RFC 6675 5.1: RecoveryPoint = HighData, no new recovery before it is
	 * acknowledged. The scoreboard is kept (as Linux; reneging is caught
	 * by tcp_sb_acked), so going back N skips what the peer holds.
	 */
	c->recover = c->snd_max;
	if (c->sb_idx != SGW_TCP_SB_NONE)
		tcp_sb(st, c)->high_rxt = c->snd_una;
	/* out of recovery with no range: the board goes back */
	tcp_sb_idle(st, c);
	/* RFC 6298 5.5: back off */
	if (c->backoff < 30)
		c->backoff++;
	/* go back to snd_una: what follows the head is sent again as cwnd grows */
	c->snd_nxt = c->snd_una;
	/* the head goes out even into a zero window (as Linux: it is also a probe) */
	tcp_retransmit_head(st, c, now, out);
	tcp_timer_arm(c, out, SGW_TCP_T_RTX, now + tcp_cur_rto_ns(st, c));
	tcp_output(st, c, now, out);
}

static void
timer_persist(struct sgw_tcp_stack *st, struct sgw_tcp_conn *c, uint64_t now,
	      struct sgw_tcp_out *out)
{
	struct sgw_tcp_seg s;

	if (!can_send_data(c) || !data_pending(c) || c->snd_una != c->snd_max)
		return;
	if (c->snd_wnd != 0) {
		/* a small window the SWS rule would not use: send what fits */
		int32_t left = (int32_t)(c->snd_end - c->snd_nxt);
		uint32_t len = left > 0 ? (uint32_t)left : 0;
		int fin;

		if (len > c->snd_wnd)
			len = c->snd_wnd;
		if (len > c->snd_mss)
			len = c->snd_mss;
		fin = (c->flags & SGW_TCP_CF_FIN_QUEUED) && left >= 0 && len == (uint32_t)left;
		tcp_send_data(st, c, now, c->snd_nxt, len, fin, out);
		c->snd_nxt += len + (fin ? 1 : 0);
		return;
	}
	/* a probe below the window (as Linux): the peer answers with an ACK and its window */
	memset(&s, 0, sizeof(s));
	s.seq = c->snd_una - 1;
	s.flags = SGW_TCP_F_ACK;
	emit(st, c, now, &s, 0, out);
	st->ctr[SGW_TCP_C_PERSIST_PROBES]++;
	if (c->persist_backoff < 30)
		c->persist_backoff++;
}

/*
 * Keepalive (RFC 1122 4.2.3.6, T_WAIT with CF_KEEPALIVE): after idle_ns with
 * nothing received, a probe <SEQ=SND.UNA-1><ACK> (the peer answers with an
 * ACK) every intvl_ns; probes unanswered -> RST and reset. Returns 1 when
 * the connection was closed.
 */
static int
timer_keepalive(struct sgw_tcp_stack *st, struct sgw_tcp_conn *c, uint64_t now,
		struct sgw_tcp_out *out)
{
	uint64_t since = (uint64_t)(uint32_t)((uint32_t)(now / TCP_NS_PER_MS) - c->last_rcv_ms) *
			 TCP_NS_PER_MS;
	struct sgw_tcp_seg s;

	c->flags &= ~(uint32_t)SGW_TCP_CF_KEEPALIVE;
	if (!keepalive_state(st, c))
		return 0;
	/* something came after the last probe: alive */
	if (c->ka_probes > 0 && since < st->conf.keepalive_intvl_ns)
		c->ka_probes = 0;
	if (c->ka_probes == 0 && since < st->conf.keepalive_idle_ns) {
		c->flags |= SGW_TCP_CF_KEEPALIVE;
		tcp_timer_arm(c, out, SGW_TCP_T_WAIT, now + st->conf.keepalive_idle_ns - since);
		return 0;
	}
	if (c->snd_una != c->snd_max || tcp_timer_armed(c, SGW_TCP_T_PERSIST)) {
		/* data in flight or a zero window: the RTO or persist timer watches the peer */
		c->ka_probes = 0;
		c->flags |= SGW_TCP_CF_KEEPALIVE;
		tcp_timer_arm(c, out, SGW_TCP_T_WAIT, now + st->conf.keepalive_idle_ns);
		return 0;
	}
	if (c->ka_probes >= st->conf.keepalive_probes) {
		st->ctr[SGW_TCP_C_KEEPALIVE_ABORT]++;
		tcp_send_rst(st, c, c->snd_max, 0, 0, out);
		out->events |= SGW_TCP_EV_RESET;
		out->reason = SGW_TCP_RR_TIMEOUT;
		tcp_closed(st, c, out);
		return 1;
	}
	memset(&s, 0, sizeof(s));
	s.seq = c->snd_una - 1;
	s.flags = SGW_TCP_F_ACK;
	emit(st, c, now, &s, 0, out);
	st->ctr[SGW_TCP_C_KEEPALIVE_PROBES]++;
	c->ka_probes++;
	c->flags |= SGW_TCP_CF_KEEPALIVE;
	tcp_timer_arm(c, out, SGW_TCP_T_WAIT, now + st->conf.keepalive_intvl_ns);
	return 0;
}

void
sgw_tcp_timer(struct sgw_tcp_stack *st, struct sgw_tcp_conn *c, uint64_t now_ns,
	      unsigned int id, struct sgw_tcp_out *out)
{
	if (id >= SGW_TCP_T__COUNT || !tcp_timer_armed(c, id)) {
		st->ctr[SGW_TCP_C_TIMER_SPURIOUS]++;
		return;
	}
	c->armed &= (uint8_t)~(1u << id);
	switch (id) {
	case SGW_TCP_T_RTX:
		timer_rtx(st, c, now_ns, out);
		break;
	case SGW_TCP_T_PERSIST:
		timer_persist(st, c, now_ns, out);
		break;
	case SGW_TCP_T_DELACK:
		if (c->flags & SGW_TCP_CF_DELACK) {
			st->ctr[SGW_TCP_C_DELACK_FIRED]++;
			tcp_send_ack(st, c, now_ns, out);
		}
		break;
	case SGW_TCP_T_WAIT:
		if (c->flags & SGW_TCP_CF_KEEPALIVE) {
			if (timer_keepalive(st, c, now_ns, out))
				return;
			break;
		}
		if (c->state == SGW_TCP_TIME_WAIT || c->state == SGW_TCP_FIN_WAIT_2) {
			tcp_closed(st, c, out);
			return;
		}
		break;
	}
	tcp_set_timers(st, c, now_ns, out);
}
