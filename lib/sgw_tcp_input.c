/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * TCP endpoint, input side (contract: sgw_tcp.h): one parsed segment against
 * one connection, dispatched by state as VPP's tcp_input.c does (a table of
 * per-state functions: CLOSED, LISTEN, SYN-SENT, and the synchronized states
 * in RFC 9293 3.10.7.4 order: PAWS, acceptability, RST, SYN, ACK, URG, text,
 * FIN). RST and SYN in the window follow RFC 5961 (challenge ACKs); ACKs
 * outside [snd_una - MAX.SND.WND, snd_max] are answered and dropped.
 *
 * Receive: in-order bytes go to the caller's buffer at once; out-of-order
 * bytes too, at their offset, and the endpoint keeps (left, right) records of
 * them (at most SGW_TCP_OOO_MAX: a peer cannot make it keep more), from which
 * the SACK blocks are cut. Every loop here is bounded by that array or by
 * nothing at all; none by a number taken from a segment.
 */
#include <string.h>

#include "sgw_tcp.h"
#include "sgw_tcp_priv.h"

/* ------------------------------------------------------------ helpers */

static void
set_mss(struct sgw_tcp_stack *st, struct sgw_tcp_conn *c)
{
	uint32_t m = c->peer_mss < c->mss_local ? c->peer_mss : c->mss_local;

	if (c->flags & SGW_TCP_CF_TS)
		m -= 12; /* every segment carries the 12-byte timestamp option */
	if (m < 32)
		m = 32;
	c->snd_mss = (uint16_t)m;
	c->rcv_mss = (uint16_t)m;
	c->cc->init(c);
	c->cwnd = st->conf.init_cwnd_segs * m;
	if (c->cwnd > st->conf.cwnd_max)
		c->cwnd = st->conf.cwnd_max;
	c->ssthresh = INT32_MAX;
	c->recover = c->iss;
}

/* What a SYN (or SYN-ACK) offered; the negotiated flags follow from it. */
static void
syn_options(struct sgw_tcp_stack *st, struct sgw_tcp_conn *c, uint64_t now,
	    const struct sgw_tcp_seg *seg)
{
	c->flags &= ~(uint32_t)(SGW_TCP_CF_TS | SGW_TCP_CF_SACK | SGW_TCP_CF_WS |
				SGW_TCP_CF_PEER_TS | SGW_TCP_CF_PEER_WS |
				SGW_TCP_CF_PEER_SACK);
	c->peer_mss = (seg->opts & SGW_TCP_O_MSS) && seg->mss >= 64 ? seg->mss : 536;
	if (seg->opts & SGW_TCP_O_WS)
		c->flags |= SGW_TCP_CF_PEER_WS;
	if (seg->opts & SGW_TCP_O_SACK_PERM)
		c->flags |= SGW_TCP_CF_PEER_SACK;
	if (seg->opts & SGW_TCP_O_TS)
		c->flags |= SGW_TCP_CF_PEER_TS;
	if (st->conf.wscale && (seg->opts & SGW_TCP_O_WS)) {
		c->flags |= SGW_TCP_CF_WS;
		c->snd_wscale = seg->wscale;
		c->rcv_wscale = st->rcv_wscale;
	} else {
		c->snd_wscale = 0;
		c->rcv_wscale = 0;
	}
	if (st->conf.sack && (seg->opts & SGW_TCP_O_SACK_PERM))
		c->flags |= SGW_TCP_CF_SACK;
	if (st->conf.timestamps && (seg->opts & SGW_TCP_O_TS)) {
		c->flags |= SGW_TCP_CF_TS;
		c->ts_recent = seg->tsval;
		c->ts_recent_ns = now;
	}
	c->irs = seg->seq;
	c->rcv_nxt = seg->seq + 1;
	c->rcv_adv = c->rcv_nxt;
	c->last_ack_sent = c->rcv_nxt;
}

/* RFC 6298 2.2 - 2.3, r in microseconds. */
static void
rtt_update(struct sgw_tcp_stack *st, struct sgw_tcp_conn *c, uint64_t r)
{
	uint64_t rto, var4;

	if (r == 0)
		r = 1;
	if (r > UINT32_MAX / 8)
		r = UINT32_MAX / 8;
	st->ctr[SGW_TCP_C_RTT_SAMPLES]++;
	if (c->srtt_us == 0) {
		c->srtt_us = (uint32_t)r;
		c->rttvar_us = (uint32_t)(r / 2);
	} else {
		uint64_t d = c->srtt_us > r ? c->srtt_us - r : r - c->srtt_us;

		c->rttvar_us = (uint32_t)((3ull * c->rttvar_us + d) / 4);
		c->srtt_us = (uint32_t)((7ull * c->srtt_us + r) / 8);
	}
	var4 = 4ull * c->rttvar_us;
	/* G, the clock granularity: 1 ms (the timestamp clock) */
	rto = c->srtt_us + (var4 > 1000 ? var4 : 1000);
	c->rto_us = rto > UINT32_MAX ? UINT32_MAX : (uint32_t)rto;
	/* Karn: the backed-off RTO stays until a sample from a fresh segment */
	c->backoff = 0;
}

/* An RTT sample from an ACK that advanced snd_una to ack. */
static void
rtt_from_ack(struct sgw_tcp_stack *st, struct sgw_tcp_conn *c, uint64_t now,
	     const struct sgw_tcp_seg *seg, uint32_t ack)
{
	if ((c->flags & SGW_TCP_CF_TS) && (seg->opts & SGW_TCP_O_TS) && seg->tsecr != 0) {
		uint32_t ms = tcp_ts_now(c, now) - seg->tsecr;

		/* an echo from the future or older than a minute is not ours */
		if (ms < 60000u) {
			rtt_update(st, c, (uint64_t)ms * 1000);
			c->flags &= ~(uint32_t)SGW_TCP_CF_RTT_TIMING;
			return;
		}
	}
	if ((c->flags & SGW_TCP_CF_RTT_TIMING) && SGW_SEQ_GE(ack, c->rtt_seq)) {
		c->flags &= ~(uint32_t)SGW_TCP_CF_RTT_TIMING;
		rtt_update(st, c, (now - c->rtt_ts) / TCP_NS_PER_US);
	}
}

static void
established(struct sgw_tcp_conn *c, struct sgw_tcp_out *out)
{
	c->state = (c->flags & SGW_TCP_CF_FIN_QUEUED) ? SGW_TCP_FIN_WAIT_1
						       : SGW_TCP_ESTABLISHED;
	c->retries = 0;
	out->events |= SGW_TCP_EV_CONNECTED;
}

static void
reset_by_peer(struct sgw_tcp_stack *st, struct sgw_tcp_conn *c, uint8_t reason,
	      struct sgw_tcp_out *out)
{
	st->ctr[SGW_TCP_C_RST_IN]++;
	out->events |= SGW_TCP_EV_RESET;
	out->reason = reason;
	tcp_closed(st, c, out);
}

/* ------------------------------------------------------------ out of order */

/*
 * Record [s, e) (s > rcv_nxt) among the disjoint, non-adjacent, sorted
 * records, merging with every record it touches. -1 when it would need a new
 * record and all are used. Loops are bounded by SGW_TCP_OOO_MAX.
 */
static int
ooo_insert(struct sgw_tcp_conn *c, uint32_t s, uint32_t e)
{
	unsigned int n = c->ooo_n, i = 0, j, k;

	while (i < n && SGW_SEQ_LT(c->ooo[i].right, s))
		i++;
	j = i;
	while (j < n && SGW_SEQ_LE(c->ooo[j].left, e))
		j++;
	if (j == i) {
		if (n == SGW_TCP_OOO_MAX)
			return -1;
		for (k = n; k > i; k--)
			c->ooo[k] = c->ooo[k - 1];
		c->ooo[i].left = s;
		c->ooo[i].right = e;
		c->ooo_n = (uint8_t)(n + 1);
	} else {
		if (SGW_SEQ_LT(s, c->ooo[i].left))
			c->ooo[i].left = s;
		c->ooo[i].right = SGW_SEQ_GT(e, c->ooo[j - 1].right) ? e : c->ooo[j - 1].right;
		/* records i+1 .. j-1 are inside the merged one */
		for (k = i + 1; k + (j - i - 1) < n; k++)
			c->ooo[k] = c->ooo[k + (j - i - 1)];
		c->ooo_n = (uint8_t)(n - (j - i - 1));
	}
	c->ooo_last = (uint8_t)i;
	return 0;
}

/* rcv_nxt moved: take in the records it reached. Returns bytes now in order. */
static uint32_t
ooo_pull(struct sgw_tcp_conn *c)
{
	uint32_t adv = 0;
	unsigned int drop = 0, k;

	while (drop < c->ooo_n && SGW_SEQ_LE(c->ooo[drop].left, c->rcv_nxt)) {
		if (SGW_SEQ_GT(c->ooo[drop].right, c->rcv_nxt)) {
			adv += c->ooo[drop].right - c->rcv_nxt;
			c->rcv_nxt = c->ooo[drop].right;
		}
		drop++;
	}
	if (drop) {
		for (k = 0; k + drop < c->ooo_n; k++)
			c->ooo[k] = c->ooo[k + drop];
		c->ooo_n = (uint8_t)(c->ooo_n - drop);
		c->ooo_last = 0;
	}
	return adv;
}

/* ------------------------------------------------------------ text and FIN */

static void
rcv_fin(struct sgw_tcp_stack *st, struct sgw_tcp_conn *c, uint64_t now,
	struct sgw_tcp_out *out)
{
	c->rcv_nxt++;
	c->flags |= SGW_TCP_CF_RCV_FIN | SGW_TCP_CF_ACK_NOW;
	c->flags &= ~(uint32_t)SGW_TCP_CF_FIN_OOO;
	out->events |= SGW_TCP_EV_PEER_FIN;
	switch (c->state) {
	case SGW_TCP_SYN_RCVD:
	case SGW_TCP_ESTABLISHED:
		c->state = SGW_TCP_CLOSE_WAIT;
		break;
	case SGW_TCP_FIN_WAIT_1:
		/* our FIN not acknowledged yet: simultaneous close */
		c->state = SGW_TCP_CLOSING;
		break;
	case SGW_TCP_FIN_WAIT_2:
		tcp_enter_time_wait(st, c, now, out);
		break;
	default:
		break;
	}
}

static void
rcv_text(struct sgw_tcp_stack *st, struct sgw_tcp_conn *c, uint64_t now,
	 const struct sgw_tcp_seg *seg, struct sgw_tcp_out *out)
{
	uint32_t seq = seg->seq, len = seg->len, space, maxend, adv;
	const uint8_t *data = seg->data;
	int fin = !!(seg->flags & SGW_TCP_F_FIN);
	int had_ooo = c->ooo_n != 0;

	if (seg->flags & SGW_TCP_F_SYN)
		seq++; /* a SYN's data starts after it */
	if (len == 0 && !fin)
		return;
	if (c->state != SGW_TCP_ESTABLISHED && c->state != SGW_TCP_FIN_WAIT_1 &&
	    c->state != SGW_TCP_FIN_WAIT_2) {
		/* the peer's FIN is in: anything new is not; a retransmitted FIN is ACKed */
		c->flags |= SGW_TCP_CF_ACK_NOW;
		return;
	}
	if (SGW_SEQ_LT(seq, c->rcv_nxt)) {
		uint32_t skip = c->rcv_nxt - seq;

		if (skip > len || (skip == len && !fin)) {
			st->ctr[SGW_TCP_C_DUP_DATA]++;
			c->flags |= SGW_TCP_CF_ACK_NOW;
			return;
		}
		data += skip;
		len -= skip;
		seq = c->rcv_nxt;
	}
	/* never past the caller's free space (the window we advertised is within it) */
	space = st->ops.rx_space(st->ctx, c);
	maxend = c->rcv_nxt + space;
	if (SGW_SEQ_GT(seq + len, maxend)) {
		st->ctr[SGW_TCP_C_RX_CLIPPED]++;
		len = SGW_SEQ_GT(maxend, seq) ? maxend - seq : 0;
		fin = 0;
		c->flags |= SGW_TCP_CF_ACK_NOW;
	}
	if (seq != c->rcv_nxt) {
		/* out of order: keep it, answer at once (a duplicate ACK with SACK) */
		c->flags |= SGW_TCP_CF_ACK_NOW;
		if (fin) {
			c->flags |= SGW_TCP_CF_FIN_OOO;
			c->rcv_fin_seq = seq + len;
		}
		if (len == 0)
			return;
		if (ooo_insert(c, seq, seq + len) != 0) {
			st->ctr[SGW_TCP_C_OOO_FULL]++;
			return;
		}
		st->ctr[SGW_TCP_C_OOO_SEGS]++;
		st->ops.rx_data(st->ctx, c, seq - c->rcv_nxt, data, len);
		return;
	}
	adv = len;
	if (len) {
		st->ops.rx_data(st->ctx, c, 0, data, len);
		c->rcv_nxt += len;
	}
	if (had_ooo)
		adv += ooo_pull(c);
	if (adv)
		st->ops.rx_advance(st->ctx, c, adv);
	if ((c->flags & SGW_TCP_CF_FIN_OOO) && c->rcv_nxt == c->rcv_fin_seq)
		fin = 1;
	if (had_ooo) {
		/* RFC 5681 4.2: a segment that fills a hole is ACKed at once */
		c->flags |= SGW_TCP_CF_ACK_NOW;
	} else if (len) {
		if (++c->delack_cnt >= st->conf.delack_segs)
			c->flags |= SGW_TCP_CF_ACK_NOW;
		else
			c->flags |= SGW_TCP_CF_DELACK;
	}
	if (fin)
		rcv_fin(st, c, now, out);
}

/* ------------------------------------------------------------ ACK */

/* RFC 6582 3.2 step 2: fast retransmit, cwnd = ssthresh + 3 MSS (inflated) */
static void
newreno_enter(struct sgw_tcp_stack *st, struct sgw_tcp_conn *c, uint64_t now,
	      struct sgw_tcp_out *out)
{
	st->ctr[SGW_TCP_C_FAST_RETX]++;
	c->ssthresh = c->cc->ssthresh(c, now);
	c->recover = c->snd_max;
	c->flags |= SGW_TCP_CF_RECOVERY;
	tcp_retransmit_head(st, c, now, out);
	c->cwnd = c->ssthresh + 3u * c->snd_mss;
}

/*
 * SACK recovery, or NewReno for it when the stack has no scoreboard free
 * (SGW_TCP_CF_NOSB until the recovery ends: the SACK blocks are ignored).
 */
static void
sack_enter(struct sgw_tcp_stack *st, struct sgw_tcp_conn *c, uint64_t now,
	   struct sgw_tcp_out *out)
{
	if (tcp_sack_enter(st, c, now, out) == 0)
		return;
	st->ctr[SGW_TCP_C_SB_NOMEM_RECOVERY]++;
	c->flags |= SGW_TCP_CF_NOSB;
	newreno_enter(st, c, now, out);
}

static void
dupack(struct sgw_tcp_stack *st, struct sgw_tcp_conn *c, uint64_t now, uint32_t ack,
       struct sgw_tcp_out *out)
{
	st->ctr[SGW_TCP_C_DUPACKS_IN]++;
	if (c->dupacks < UINT16_MAX)
		c->dupacks++;
	if (tcp_sack_on(c)) {
		/*
		 * RFC 6675 5: recovery on the DupThresh-th duplicate ACK or as
		 * soon as the scoreboard says the first hole is lost; not for
		 * a window already repaired (HighACK >= RecoveryPoint).
		 */
		if (!(c->flags & SGW_TCP_CF_RECOVERY) && SGW_SEQ_GE(ack, c->recover) &&
		    (c->dupacks >= 3 || tcp_sb_is_lost(st, c, c->snd_una)))
			sack_enter(st, c, now, out);
		return;
	}
	if (c->flags & SGW_TCP_CF_RECOVERY) {
		/* RFC 6582 3.2 step 4: each duplicate ACK is a segment that left */
		if (c->cwnd < st->conf.cwnd_max)
			c->cwnd += c->snd_mss;
		return;
	}
	/* RFC 6582 3.2 step 2: not again for the losses of the window being repaired */
	if (c->dupacks != 3 || !SGW_SEQ_GT(ack, c->recover))
		return;
	newreno_enter(st, c, now, out);
}

/*
 * The ACK field of an acceptable segment in a synchronized state (the range
 * is checked). syn: the ACK may cover our SYN (SYN-SENT, SYN-RECEIVED).
 */
static void
rcv_ack(struct sgw_tcp_stack *st, struct sgw_tcp_conn *c, uint64_t now,
	const struct sgw_tcp_seg *seg, int syn, struct sgw_tcp_out *out)
{
	uint32_t ack = seg->ack;
	uint32_t wnd = (seg->flags & SGW_TCP_F_SYN) ? seg->win
						     : (uint32_t)seg->win << c->snd_wscale;
	uint32_t old_wnd = c->snd_wnd, acked, from, data_end;

	/* RFC 9293 3.10.7.4: the window from the newest segment only */
	if (SGW_SEQ_LT(c->snd_wl1, seg->seq) ||
	    (c->snd_wl1 == seg->seq && SGW_SEQ_LE(c->snd_wl2, ack))) {
		c->snd_wnd = wnd;
		c->snd_wl1 = seg->seq;
		c->snd_wl2 = ack;
		if (wnd > c->snd_wnd_max)
			c->snd_wnd_max = wnd;
	}
	if (!SGW_SEQ_GT(ack, c->snd_una)) {
		int news = 0;

		if (ack == c->snd_una && (seg->opts & SGW_TCP_O_SACK) && tcp_sack_on(c))
			news = tcp_sb_update(st, c, seg);
		/*
		 * RFC 5681 2: the duplicate ACK that counts. With SACK, RFC 6675 2
		 * also asks that it SACK data not SACKed before: a copy the network
		 * made of an ACK is no news of a loss. Without a scoreboard free
		 * (news < 0) the count is RFC 5681's, for the NewReno fallback.
		 */
		if (ack == c->snd_una && seg->len == 0 &&
		    !(seg->flags & (SGW_TCP_F_SYN | SGW_TCP_F_FIN)) && wnd == old_wnd &&
		    c->snd_max != c->snd_una && (news != 0 || !tcp_sack_on(c)))
			dupack(st, c, now, ack, out);
		else if (news > 0 && !(c->flags & SGW_TCP_CF_RECOVERY) &&
			 SGW_SEQ_GE(ack, c->recover) && tcp_sb_is_lost(st, c, c->snd_una))
			/* RFC 6675 5 (2): data riding on the ACK does not hide a loss */
			sack_enter(st, c, now, out);
		return;
	}
	acked = ack - c->snd_una;
	from = syn ? c->snd_una + 1 : c->snd_una;
	data_end = SGW_SEQ_LT(ack, c->snd_end) ? ack : c->snd_end;
	if (SGW_SEQ_GT(data_end, from)) {
		out->acked += data_end - from;
		st->ops.tx_acked(st->ctx, c, data_end - from);
	}
	rtt_from_ack(st, c, now, seg, ack);
	c->snd_una = ack;
	if (SGW_SEQ_LT(c->snd_nxt, ack))
		c->snd_nxt = ack;
	c->retries = 0;
	/* RFC 6298 5.3: restart the timer (tcp_set_timers re-arms it from now) */
	tcp_timer_cancel(c, out, SGW_TCP_T_RTX);
	if (syn)
		acked--;
	if (tcp_sack_on(c)) {
		if (c->sb_n)
			tcp_sb_acked(st, c);
		if (seg->opts & SGW_TCP_O_SACK)
			tcp_sb_update(st, c, seg);
		if (c->flags & SGW_TCP_CF_RECOVERY) {
			/* SACK recovery holds a board (tcp_sack_enter) */
			struct sgw_tcp_sb *b = tcp_sb(st, c);

			if (SGW_SEQ_LT(b->high_rxt, c->snd_una))
				b->high_rxt = c->snd_una;
			if (SGW_SEQ_GE(ack, c->recover)) {
				/* RFC 6675: recovery ends at RecoveryPoint; cwnd is ssthresh */
				c->cwnd = c->ssthresh;
				c->flags &= ~(uint32_t)SGW_TCP_CF_RECOVERY;
				c->dupacks = 0;
				if (c->cc->recovered != NULL)
					c->cc->recovered(c, now);
				tcp_sb_idle(st, c);
			}
			/* else: tcp_output runs step (C) with the new pipe */
			return;
		}
		/* all ranges acknowledged (or reneged): the board goes back */
		tcp_sb_idle(st, c);
	}
	if (c->flags & SGW_TCP_CF_RECOVERY) {
		if (SGW_SEQ_GE(ack, c->recover)) {
			/* full ACK: RFC 6582 3.2 step 3, option 1 */
			uint32_t fl = c->snd_max - c->snd_una + c->snd_mss;

			c->cwnd = c->ssthresh < fl ? c->ssthresh : fl;
			/* a NewReno fallback (CF_NOSB) ends here too: SACK blocks count again */
			c->flags &= ~(uint32_t)(SGW_TCP_CF_RECOVERY | SGW_TCP_CF_NOSB);
			c->dupacks = 0;
			if (c->cc->recovered != NULL)
				c->cc->recovered(c, now);
		} else {
			/* partial ACK: the next hole, deflate by what was acked */
			tcp_retransmit_head(st, c, now, out);
			c->cwnd = c->cwnd > acked ? c->cwnd - acked : 0;
			if (acked >= c->snd_mss)
				c->cwnd += c->snd_mss;
			if (c->cwnd < c->snd_mss)
				c->cwnd = c->snd_mss;
		}
		return;
	}
	c->dupacks = 0;
	if (acked) {
		c->cc->ack(c, acked, now);
		if (c->cwnd > st->conf.cwnd_max)
			c->cwnd = st->conf.cwnd_max;
	}
}

/* ------------------------------------------------------------ by state */

static void
input_closed(struct sgw_tcp_stack *st, struct sgw_tcp_conn *c, uint64_t now,
	     const struct sgw_tcp_seg *seg, struct sgw_tcp_out *out)
{
	(void)c;
	(void)now;
	(void)seg;
	(void)out;
	/* the caller answers a segment with no connection (sgw_tcp_rst_for) */
	st->ctr[SGW_TCP_C_CLOSED_DROP]++;
}

static void
input_listen(struct sgw_tcp_stack *st, struct sgw_tcp_conn *c, uint64_t now,
	     const struct sgw_tcp_seg *seg, struct sgw_tcp_out *out)
{
	uint8_t f = seg->flags;

	if (f & SGW_TCP_F_RST) {
		st->ctr[SGW_TCP_C_LISTEN_DROP]++;
		return;
	}
	if (f & SGW_TCP_F_ACK) {
		st->ctr[SGW_TCP_C_LISTEN_DROP]++;
		tcp_send_rst(st, c, seg->ack, 0, 0, out);
		return;
	}
	if (!(f & SGW_TCP_F_SYN)) {
		st->ctr[SGW_TCP_C_LISTEN_DROP]++;
		return;
	}
	/* passive open; data in the SYN is not kept (the peer sends it again) */
	syn_options(st, c, now, seg);
	c->flags |= SGW_TCP_CF_PASSIVE;
	c->snd_wnd = seg->win;
	c->snd_wnd_max = seg->win;
	c->snd_wl1 = seg->seq;
	c->snd_wl2 = c->iss;
	c->state = SGW_TCP_SYN_RCVD;
	set_mss(st, c);
	tcp_send_syn(st, c, now, out);
}

static void
input_syn_sent(struct sgw_tcp_stack *st, struct sgw_tcp_conn *c, uint64_t now,
	       const struct sgw_tcp_seg *seg, struct sgw_tcp_out *out)
{
	uint8_t f = seg->flags;
	int ack_ok = 0;

	if (f & SGW_TCP_F_ACK) {
		if (SGW_SEQ_LE(seg->ack, c->iss) || SGW_SEQ_GT(seg->ack, c->snd_max)) {
			st->ctr[SGW_TCP_C_SYN_SENT_DROP]++;
			if (!(f & SGW_TCP_F_RST))
				tcp_send_rst(st, c, seg->ack, 0, 0, out);
			return;
		}
		ack_ok = 1;
	}
	if (f & SGW_TCP_F_RST) {
		if (!ack_ok) {
			st->ctr[SGW_TCP_C_RST_IGNORED]++;
			return;
		}
		reset_by_peer(st, c, SGW_TCP_RR_REFUSED, out);
		return;
	}
	if (!(f & SGW_TCP_F_SYN)) {
		st->ctr[SGW_TCP_C_SYN_SENT_DROP]++;
		return;
	}
	syn_options(st, c, now, seg);
	if (!(c->flags & SGW_TCP_CF_WS))
		c->rcv_wscale = 0;
	set_mss(st, c);
	c->snd_wl1 = seg->seq - 1; /* so this segment's window is taken */
	c->snd_wl2 = c->iss;
	if (ack_ok) {
		rcv_ack(st, c, now, seg, 1, out);
		established(c, out);
		c->flags |= SGW_TCP_CF_ACK_NOW;
		/* data or FIN riding on the SYN-ACK */
		rcv_text(st, c, now, seg, out);
		tcp_output(st, c, now, out);
		return;
	}
	/* simultaneous open: our SYN crossed theirs; answer with a SYN-ACK */
	c->snd_wnd = seg->win;
	c->snd_wnd_max = seg->win;
	c->snd_wl1 = seg->seq;
	c->state = SGW_TCP_SYN_RCVD;
	c->retries = 0;
	tcp_timer_cancel(c, out, SGW_TCP_T_RTX);
	tcp_send_syn(st, c, now, out);
}

static int
acceptable(const struct sgw_tcp_conn *c, uint32_t seq, uint32_t seg_len)
{
	uint32_t wnd = SGW_SEQ_GT(c->rcv_adv, c->rcv_nxt) ? c->rcv_adv - c->rcv_nxt : 0;

	/* RFC 9293 3.10.7.4, the four cases */
	if (seg_len == 0) {
		if (wnd == 0)
			return seq == c->rcv_nxt;
		return SGW_SEQ_GE(seq, c->rcv_nxt) && SGW_SEQ_LT(seq, c->rcv_nxt + wnd);
	}
	if (wnd == 0)
		return 0;
	return (SGW_SEQ_GE(seq, c->rcv_nxt) && SGW_SEQ_LT(seq, c->rcv_nxt + wnd)) ||
	       (SGW_SEQ_GE(seq + seg_len - 1, c->rcv_nxt) &&
		SGW_SEQ_LT(seq + seg_len - 1, c->rcv_nxt + wnd));
}

/* SYN-RECEIVED and every synchronized state. */
static void
input_sync(struct sgw_tcp_stack *st, struct sgw_tcp_conn *c, uint64_t now,
	   const struct sgw_tcp_seg *seg, struct sgw_tcp_out *out)
{
	uint8_t f = seg->flags;
	uint32_t seg_len = seg->len + !!(f & SGW_TCP_F_SYN) + !!(f & SGW_TCP_F_FIN);
	int has_ts = (c->flags & SGW_TCP_CF_TS) && (seg->opts & SGW_TCP_O_TS);
	struct sgw_tcp_seg zw;

	if (c->state == SGW_TCP_TIME_WAIT &&
	    (f & (SGW_TCP_F_SYN | SGW_TCP_F_ACK | SGW_TCP_F_RST)) == SGW_TCP_F_SYN &&
	    (SGW_SEQ_GT(seg->seq, c->rcv_nxt) ||
	     (has_ts && SGW_SEQ_GT(seg->tsval, c->ts_recent)))) {
		/* a new incarnation (RFC 6191 with timestamps, RFC 1122 without) */
		out->events |= SGW_TCP_EV_TW_REUSE;
		return;
	}
	if (c->state == SGW_TCP_SYN_RCVD && (c->flags & SGW_TCP_CF_PASSIVE) &&
	    (f & (SGW_TCP_F_SYN | SGW_TCP_F_ACK | SGW_TCP_F_RST)) == SGW_TCP_F_SYN &&
	    seg->seq == c->irs) {
		/* the SYN again: our SYN-ACK was lost */
		tcp_send_syn(st, c, now, out);
		return;
	}
	/* RFC 7323 5.3 PAWS (a RST is exempt) */
	if (has_ts && !(f & SGW_TCP_F_RST) && SGW_SEQ_LT(seg->tsval, c->ts_recent) &&
	    now - c->ts_recent_ns < TCP_PAWS_IDLE_NS) {
		st->ctr[SGW_TCP_C_PAWS_DROP]++;
		c->flags |= SGW_TCP_CF_ACK_NOW;
		return;
	}
	if (!acceptable(c, seg->seq, seg_len)) {
		/*
		 * A zero window still takes the ACK, window and RST of a segment
		 * at rcv_nxt: drop only its text (RFC 9293 3.10.7.4).
		 */
		if (seg->seq == c->rcv_nxt && seg_len > 0 && c->rcv_adv == c->rcv_nxt &&
		    !(f & (SGW_TCP_F_SYN | SGW_TCP_F_RST))) {
			zw = *seg;
			zw.len = 0;
			zw.flags &= (uint8_t)~SGW_TCP_F_FIN;
			seg = &zw;
			f = zw.flags;
			st->ctr[SGW_TCP_C_RX_CLIPPED]++;
			c->flags |= SGW_TCP_CF_ACK_NOW;
		} else {
			st->ctr[SGW_TCP_C_OUT_OF_WINDOW]++;
			if (f & SGW_TCP_F_RST) {
				st->ctr[SGW_TCP_C_RST_IGNORED]++;
				return;
			}
			c->flags |= SGW_TCP_CF_ACK_NOW;
			if (c->state == SGW_TCP_TIME_WAIT && (f & SGW_TCP_F_FIN))
				tcp_timer_arm(c, out, SGW_TCP_T_WAIT, now + 2 * st->conf.msl_ns);
			return;
		}
	}
	/* RFC 7323 4.3: TS.Recent from a segment that covers Last.ACK.sent */
	if (has_ts && SGW_SEQ_LE(seg->seq, c->last_ack_sent) && SGW_SEQ_GE(seg->tsval, c->ts_recent)) {
		c->ts_recent = seg->tsval;
		c->ts_recent_ns = now;
	}
	if (f & SGW_TCP_F_RST) {
		/* RFC 5961 3.2: only the exact sequence number resets */
		if (seg->seq != c->rcv_nxt) {
			st->ctr[SGW_TCP_C_CHALLENGE_ACK]++;
			c->flags |= SGW_TCP_CF_ACK_NOW;
			return;
		}
		reset_by_peer(st, c,
			      c->state == SGW_TCP_SYN_RCVD && !(c->flags & SGW_TCP_CF_PASSIVE)
				      ? SGW_TCP_RR_REFUSED
				      : SGW_TCP_RR_PEER,
			      out);
		return;
	}
	if (f & SGW_TCP_F_SYN) {
		/* RFC 5961 4.2: a SYN in a synchronized state gets a challenge ACK */
		st->ctr[SGW_TCP_C_CHALLENGE_ACK]++;
		c->flags |= SGW_TCP_CF_ACK_NOW;
		return;
	}
	if (!(f & SGW_TCP_F_ACK)) {
		st->ctr[SGW_TCP_C_NO_ACK_FLAG]++;
		return;
	}
	if (c->state == SGW_TCP_SYN_RCVD) {
		if (!SGW_SEQ_GT(seg->ack, c->snd_una) || SGW_SEQ_GT(seg->ack, c->snd_max)) {
			st->ctr[SGW_TCP_C_BAD_ACK]++;
			tcp_send_rst(st, c, seg->ack, 0, 0, out);
			return;
		}
		c->snd_wl1 = seg->seq - 1; /* take this segment's window */
		rcv_ack(st, c, now, seg, 1, out);
		established(c, out);
	} else {
		/* RFC 5961 5.2: SND.UNA - MAX.SND.WND <= SEG.ACK <= SND.NXT (snd_max here) */
		if (SGW_SEQ_GT(seg->ack, c->snd_max)) {
			st->ctr[SGW_TCP_C_BAD_ACK]++;
			c->flags |= SGW_TCP_CF_ACK_NOW;
			return;
		}
		if (SGW_SEQ_LT(seg->ack, c->snd_una - c->snd_wnd_max)) {
			st->ctr[SGW_TCP_C_CHALLENGE_ACK]++;
			c->flags |= SGW_TCP_CF_ACK_NOW;
			return;
		}
		if (c->state != SGW_TCP_TIME_WAIT)
			rcv_ack(st, c, now, seg, 0, out);
	}
	/* our FIN acknowledged? */
	if ((c->flags & SGW_TCP_CF_FIN_SENT) && c->snd_una == c->snd_end + 1) {
		switch (c->state) {
		case SGW_TCP_FIN_WAIT_1:
			c->state = SGW_TCP_FIN_WAIT_2;
			if (st->conf.fin_wait2_ns) {
				c->flags &= ~(uint32_t)SGW_TCP_CF_KEEPALIVE;
				tcp_timer_arm(c, out, SGW_TCP_T_WAIT, now + st->conf.fin_wait2_ns);
			}
			break;
		case SGW_TCP_CLOSING:
			tcp_enter_time_wait(st, c, now, out);
			break;
		case SGW_TCP_LAST_ACK:
			tcp_closed(st, c, out);
			return;
		default:
			break;
		}
	}
	if (f & SGW_TCP_F_URG)
		st->ctr[SGW_TCP_C_URG_IGNORED]++;
	rcv_text(st, c, now, seg, out);
	tcp_output(st, c, now, out);
}

typedef void (*input_fn)(struct sgw_tcp_stack *, struct sgw_tcp_conn *, uint64_t,
			 const struct sgw_tcp_seg *, struct sgw_tcp_out *);

static const input_fn dispatch[SGW_TCP_S__COUNT] = {
	[SGW_TCP_CLOSED] = input_closed,
	[SGW_TCP_LISTEN] = input_listen,
	[SGW_TCP_SYN_SENT] = input_syn_sent,
	[SGW_TCP_SYN_RCVD] = input_sync,
	[SGW_TCP_ESTABLISHED] = input_sync,
	[SGW_TCP_FIN_WAIT_1] = input_sync,
	[SGW_TCP_FIN_WAIT_2] = input_sync,
	[SGW_TCP_CLOSING] = input_sync,
	[SGW_TCP_TIME_WAIT] = input_sync,
	[SGW_TCP_CLOSE_WAIT] = input_sync,
	[SGW_TCP_LAST_ACK] = input_sync,
};

void
sgw_tcp_input(struct sgw_tcp_stack *st, struct sgw_tcp_conn *c, uint64_t now_ns,
	      const struct sgw_tcp_seg *seg, struct sgw_tcp_out *out)
{
	st->ctr[SGW_TCP_C_SEGS_IN]++;
	/* keepalive: the peer is alive (any segment, acceptable or not, as Linux) */
	c->last_rcv_ms = (uint32_t)(now_ns / TCP_NS_PER_MS);
	if (c->state >= SGW_TCP_S__COUNT) {
		st->ctr[SGW_TCP_C_CLOSED_DROP]++;
		return;
	}
	dispatch[c->state](st, c, now_ns, seg, out);
	if (c->state == SGW_TCP_CLOSED || c->state == SGW_TCP_LISTEN)
		return;
	if (c->flags & SGW_TCP_CF_ACK_NOW)
		tcp_send_ack(st, c, now_ns, out);
	tcp_set_timers(st, c, now_ns, out);
}
