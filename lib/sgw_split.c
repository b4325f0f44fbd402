/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One half of a split TCP connection: the local TCP leg, its two relay
 * buffers and the stream over the satlink channel (contract: sgw_split.h;
 * protocol: docs/tcp-split.md; messages: sgw_stream.h).
 *
 * Every public call does its work, then post(): grant credit if the tx relay
 * drained enough, send what may go (control messages first, then DATA
 * bounded by the far credit and the channel's room, then FIN), keep the
 * anti-freeze / rwc and idle timers, and decide whether the half is over.
 * Offsets on the stream are the relays' free-running byte counters
 * (rx.head: next byte to send; tx.tail: next byte expected), mod 2^32 as
 * on the wire.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "sgw_seq.h"
#include "sgw_split.h"

/* sp->flags */
#define F_SYN_HELD 0x01  /* end-to-end opener: the client's SYN waits for OPEN_OK */
#define F_LOCAL_FIN 0x02 /* the local peer's FIN: a FIN message once rx drained */
#define F_FIN_SENT 0x04
#define F_FIN_RCVD 0x08
#define F_RST 0x10       /* RST / refusal sent or received: the stream is over */
#define F_FROZEN 0x20    /* RWND: a zero window went out, anti-freeze checks run */
#define F_UP 0x40        /* OPEN_OK sent or received */
#define F_RWC 0x80       /* PETRA/ACKRES: sp->rwc initialised (leg established) */

/* sp->pending: control messages the channel has not taken yet */
#define P_OPEN 0x01
#define P_OPEN_OK 0x02
#define P_CREDIT 0x04
#define P_RST 0x08
#define P_REFUSED 0x10

/* Anti-freeze updates per freeze (period doubling): the peer's persist probes
 * are the net after that, and an idle peer with an open window is not pinged
 * for ever. */
#define FREEZE_MAX_TRIES 6u

static const char *const ctr_names[SGW_SPLIT_C__COUNT] = {
	[SGW_SPLIT_C_OPENS] = "opens",
	[SGW_SPLIT_C_ACCEPTS] = "accepts",
	[SGW_SPLIT_C_CONNECTED] = "connected",
	[SGW_SPLIT_C_REFUSED_OUT] = "refused_out",
	[SGW_SPLIT_C_REFUSED_IN] = "refused_in",
	[SGW_SPLIT_C_DATA_MSGS_OUT] = "data_msgs_out",
	[SGW_SPLIT_C_DATA_BYTES_OUT] = "data_bytes_out",
	[SGW_SPLIT_C_DATA_MSGS_IN] = "data_msgs_in",
	[SGW_SPLIT_C_DATA_BYTES_IN] = "data_bytes_in",
	[SGW_SPLIT_C_CREDIT_OUT] = "credit_out",
	[SGW_SPLIT_C_CREDIT_IN] = "credit_in",
	[SGW_SPLIT_C_FIN_OUT] = "fin_out",
	[SGW_SPLIT_C_FIN_IN] = "fin_in",
	[SGW_SPLIT_C_RST_OUT] = "rst_out",
	[SGW_SPLIT_C_RST_IN] = "rst_in",
	[SGW_SPLIT_C_CREDIT_STALL] = "credit_stall",
	[SGW_SPLIT_C_SAT_STALL] = "sat_stall",
	[SGW_SPLIT_C_SEND_REFUSED] = "send_refused",
	[SGW_SPLIT_C_BAD_MSG] = "bad_msg",
	[SGW_SPLIT_C_PROTO_ERR] = "proto_err",
	[SGW_SPLIT_C_LATE_MSG] = "late_msg",
	[SGW_SPLIT_C_SYN_HELD_DUP] = "syn_held_dup",
	[SGW_SPLIT_C_IDLE_TIMEOUT] = "idle_timeout",
	[SGW_SPLIT_C_ACKS_WITHHELD] = "acks_withheld",
	[SGW_SPLIT_C_ANTI_FREEZE] = "anti_freeze",
	[SGW_SPLIT_C_RELAY_CLIPPED] = "relay_clipped",
	[SGW_SPLIT_C_OPENS_SPOOFED] = "opens_spoofed",
};

const char *
sgw_split_ctr_name(int ctr)
{
	if (ctr < 0 || ctr >= SGW_SPLIT_C__COUNT)
		return "unknown";
	return ctr_names[ctr];
}

void
sgw_split_conf_default(struct sgw_split_conf *conf)
{
	memset(conf, 0, sizeof(*conf));
	conf->max_msg = 1400;
	conf->open_credit = 65536;
	conf->idle_ns = 600ull * 1000000000ull;
	conf->burst_msgs = 64;
	sgw_rwc_conf_default(&conf->rwc);
}

const char *
sgw_split_conf_check(const struct sgw_split_conf *conf)
{
	if (conf->max_msg <= SGW_STREAM_DATA_HDR || conf->max_msg > 65535)
		return "max_msg";
	if (conf->open_credit == 0 || conf->open_credit > SGW_RELAY_MAX_RING)
		return "open_credit";
	if (conf->burst_msgs == 0 || conf->burst_msgs > 4096)
		return "burst_msgs";
	return sgw_rwc_conf_check(&conf->rwc);
}

/* ------------------------------------------------------------ helpers */

static inline struct sgw_split *
split_of(struct sgw_tcp_conn *c)
{
	return (struct sgw_split *)(void *)((char *)c - offsetof(struct sgw_split, tcp));
}

void
sgw_split_out_reset(struct sgw_split_out *o)
{
	unsigned int i;

	for (i = 0; i < SGW_SPLIT_T__COUNT; i++)
		o->timer_at[i] = SGW_TCP_NEVER;
	o->timer_set = 0;
	o->events = 0;
}

static inline void
set_timer(struct sgw_split_out *o, unsigned int id, uint64_t at)
{
	o->timer_at[id] = at;
	o->timer_set |= (uint8_t)(1u << id);
}

static inline int
rwc_on(const struct sgw_split *sp)
{
	return sp->rwc != NULL && (sp->flags & F_RWC);
}

/* The leg's states where it receives data. */
static inline int
tcp_receiving(const struct sgw_tcp_conn *c)
{
	return c->state == SGW_TCP_ESTABLISHED || c->state == SGW_TCP_FIN_WAIT_1 ||
	       c->state == SGW_TCP_FIN_WAIT_2;
}

static inline int
tcp_done(const struct sgw_tcp_conn *c)
{
	return c->state == SGW_TCP_CLOSED || c->state == SGW_TCP_LISTEN;
}

/* Both FINs crossed (the stream ended cleanly, no RST): only the leg's own close is left. */
static inline int
clean_over(const struct sgw_split *sp)
{
	return !(sp->flags & F_RST) &&
	       (sp->flags & (F_FIN_SENT | F_FIN_RCVD)) == (F_FIN_SENT | F_FIN_RCVD);
}

int
sgw_split_relays_done(const struct sgw_split *sp)
{
	return clean_over(sp) && sp->tcp.state == SGW_TCP_TIME_WAIT &&
	       sgw_relay_used(&sp->rx) == 0 && sgw_relay_used(&sp->tx) == 0;
}

static int
sat_send(struct sgw_split_env *env, struct sgw_split *sp, const uint8_t *m, size_t len)
{
	struct sgw_split_iov iov = {m, (uint32_t)len};

	if (len == 0)
		return -1;
	if (env->sat.send(env->ctx, sp, sp->channel, &iov, 1) != 0) {
		env->ctr[SGW_SPLIT_C_SEND_REFUSED]++;
		return -1;
	}
	return 0;
}

/* A segment built here (forced ACK, RST for a held SYN), no data. */
static void
emit_seg(struct sgw_split_env *env, struct sgw_split *sp, struct sgw_tcp_seg *s)
{
	uint8_t hdr[SGW_TCP_MAX_HDR_LEN];
	uint32_t hlen = sgw_tcp_seg_build(hdr, sizeof(hdr), s);

	if (hlen != 0)
		env->io.tcp_tx(env->ctx, sp, hdr, hlen, NULL, 0);
}

/*
 * An ACK of the leg that sgw_tcp would not send by itself (a forced duplicate
 * for the anti-freeze, an rwc ACK): seq = snd_nxt, timestamps as the leg
 * (sgw_tcp_priv.h's clock: ms + ts_offset). sgw_tcp has no "send an ACK
 * with this window" call; this mirrors its emit().
 */
static void
craft_ack(struct sgw_split_env *env, struct sgw_split *sp, uint32_t ack, uint16_t wnd)
{
	const struct sgw_tcp_conn *c = &sp->tcp;
	struct sgw_tcp_seg s;

	memset(&s, 0, sizeof(s));
	s.sport = c->sport;
	s.dport = c->dport;
	s.seq = c->snd_nxt;
	s.ack = ack;
	s.flags = SGW_TCP_F_ACK;
	s.win = wnd;
	if (c->flags & SGW_TCP_CF_TS) {
		s.opts |= SGW_TCP_O_TS;
		s.tsval = (uint32_t)(env->now / 1000000ull) + c->ts_offset;
		s.tsecr = c->ts_recent;
	}
	emit_seg(env, sp, &s);
}

/* RST answering the held SYN (RFC 9293: <SEQ=0><ACK=SYN+1><CTL=RST,ACK>). */
static void
rst_held_syn(struct sgw_split_env *env, struct sgw_split *sp)
{
	struct sgw_tcp_seg syn, rst;

	memset(&syn, 0, sizeof(syn));
	syn.sport = sp->addr.sport;
	syn.dport = sp->addr.dport;
	syn.seq = sp->syn.seq;
	syn.flags = SGW_TCP_F_SYN;
	if (sgw_tcp_rst_for(&syn, &rst) == 1)
		emit_seg(env, sp, &rst);
}

/* ------------------------------------------------------------ TCP leg */

static void on_tcp_events(struct sgw_split_env *env, struct sgw_split *sp,
			  const struct sgw_tcp_out *to, struct sgw_split_out *out);

static void
merge_tcp(struct sgw_split_env *env, struct sgw_split *sp, const struct sgw_tcp_out *to,
	  struct sgw_split_out *out)
{
	unsigned int id;

	for (id = 0; id < SGW_TCP_T__COUNT; id++)
		if (to->timer_set & (1u << id))
			set_timer(out, id, to->timer_at[id]);
	if (to->events)
		on_tcp_events(env, sp, to, out);
}

static void
leg_rx_consumed(struct sgw_split_env *env, struct sgw_split *sp, struct sgw_split_out *out)
{
	struct sgw_tcp_out to;

	sgw_tcp_out_reset(&to);
	sgw_tcp_rx_consumed(env->tcp, &sp->tcp, env->now, &to);
	merge_tcp(env, sp, &to, out);
}

static void
leg_abort(struct sgw_split_env *env, struct sgw_split *sp, struct sgw_split_out *out)
{
	struct sgw_tcp_out to;

	if (tcp_done(&sp->tcp)) {
		/* a passive leg that never got its SYN: nothing to tell anyone */
		if (sp->tcp.state == SGW_TCP_LISTEN)
			sp->tcp.state = SGW_TCP_CLOSED;
		return;
	}
	sgw_tcp_out_reset(&to);
	sgw_tcp_abort(env->tcp, &sp->tcp, env->now, &to);
	merge_tcp(env, sp, &to, out);
}

/* Stream over by RST: tell the far half (unless it told us) and the local peer. */
static void
reset_both(struct sgw_split_env *env, struct sgw_split *sp, uint8_t reason, int tell_far,
	   struct sgw_split_out *out)
{
	if (sp->flags & F_RST)
		return;
	sp->flags |= F_RST;
	sp->reason = reason;
	if (tell_far)
		sp->pending |= P_RST;
	/* nothing else goes once a RST is queued */
	sp->pending &= (uint8_t)~(P_CREDIT | P_OPEN_OK);
	if (sp->state != SGW_SPLIT_S_CLOSED)
		sp->state = SGW_SPLIT_S_DONE;
	if (sp->flags & F_SYN_HELD) {
		sp->flags &= (uint8_t)~F_SYN_HELD;
		rst_held_syn(env, sp);
		sp->tcp.state = SGW_TCP_CLOSED;
		return;
	}
	leg_abort(env, sp, out);
}

static void
rwc_start(struct sgw_split_env *env, struct sgw_split *sp)
{
	struct sgw_rwc_conf rc = env->conf.rwc;

	if (sp->rwc == NULL)
		return;
	rc.wscale = (sp->tcp.flags & SGW_TCP_CF_WS) ? sp->tcp.rcv_wscale : 0;
	if (sgw_rwc_init(sp->rwc, &rc, &sp->rx, sp->tcp.rcv_nxt, env->now) != 0)
		sp->rwc = NULL; /* b_th not below the relay: plain RWND */
	else
		sp->flags |= F_RWC;
}

static void
on_tcp_events(struct sgw_split_env *env, struct sgw_split *sp, const struct sgw_tcp_out *to,
	      struct sgw_split_out *out)
{
	uint8_t r;

	if (to->events & SGW_TCP_EV_CONNECTED) {
		rwc_start(env, sp);
		if (sp->role == SGW_SPLIT_ACCEPTOR && sp->state == SGW_SPLIT_S_OPENING) {
			sp->state = SGW_SPLIT_S_OPEN;
			sp->flags |= F_UP;
			sp->pending |= P_OPEN_OK;
			env->ctr[SGW_SPLIT_C_CONNECTED]++;
			out->events |= SGW_SPLIT_EV_CONNECTED;
		}
	}
	if (to->events & SGW_TCP_EV_PEER_FIN)
		sp->flags |= F_LOCAL_FIN;
	if (to->events & SGW_TCP_EV_TW_REUSE)
		out->events |= SGW_SPLIT_EV_TW_REUSE;
	if ((to->events & SGW_TCP_EV_RESET) && !(sp->flags & F_RST)) {
		if (sp->role == SGW_SPLIT_ACCEPTOR && sp->state == SGW_SPLIT_S_OPENING) {
			/* the far host refused or never answered: what the client sees */
			if (to->reason == SGW_TCP_RR_REFUSED)
				r = SGW_STREAM_REFUSE_RST;
			else if (to->reason == SGW_TCP_RR_TIMEOUT)
				r = SGW_STREAM_REFUSE_UNREACHABLE;
			else
				r = SGW_STREAM_REFUSE_NO_RESOURCES;
			sp->flags |= F_RST;
			sp->reason = r;
			sp->pending = P_REFUSED;
			sp->state = SGW_SPLIT_S_DONE;
			return;
		}
		if (to->reason == SGW_TCP_RR_PEER || to->reason == SGW_TCP_RR_REFUSED ||
		    to->reason == SGW_TCP_RR_PROTOCOL)
			r = SGW_STREAM_RST_PEER;
		else if (to->reason == SGW_TCP_RR_TIMEOUT)
			r = SGW_STREAM_RST_TIMEOUT;
		else
			r = SGW_STREAM_RST_ABORT;
		reset_both(env, sp, r, 1, out);
	}
}

/* --- the TCP stack's ops: payload lives in the relays */

static void
op_tx(void *ctx, struct sgw_tcp_conn *c, const uint8_t *hdr, uint32_t hlen, uint32_t data_off,
      uint32_t data_len)
{
	struct sgw_split_env *env = ctx;
	struct sgw_split *sp = split_of(c);
	struct sgw_split_iov iov[2];
	uint8_t copy[SGW_TCP_MAX_HDR_LEN];
	struct sgw_rwc_out ro;
	unsigned int n = 0;
	uint32_t l;
	uint8_t fl;

	if (hlen < SGW_TCP_HDR_LEN || hlen > sizeof(copy))
		return;
	fl = hdr[13];
	/*
	 * PETRA / ACKRES: every ACK of the receiving leg asks the window
	 * control; a pure ACK it withholds is not sent, one carrying data or
	 * a FIN goes with the ack number and window of the last ACK let out.
	 */
	if (rwc_on(sp) && tcp_receiving(c) && (fl & SGW_TCP_F_ACK) &&
	    !(fl & (SGW_TCP_F_SYN | SGW_TCP_F_RST))) {
		memcpy(copy, hdr, hlen);
		if (sgw_rwc_ack(sp->rwc, &sp->rx, env->now, c->rcv_nxt, &ro) == 0) {
			if (data_len == 0 && !(fl & SGW_TCP_F_FIN)) {
				env->ctr[SGW_SPLIT_C_ACKS_WITHHELD]++;
				return;
			}
			ro.ack = sp->rwc->last_ack;
			ro.wnd = sp->rwc->last_wnd;
		}
		copy[8] = (uint8_t)(ro.ack >> 24);
		copy[9] = (uint8_t)(ro.ack >> 16);
		copy[10] = (uint8_t)(ro.ack >> 8);
		copy[11] = (uint8_t)ro.ack;
		copy[14] = (uint8_t)(ro.wnd >> 8);
		copy[15] = (uint8_t)ro.wnd;
		hdr = copy;
	}
	/* the bytes: a range of the tx relay, at most two spans across the wrap */
	while (data_len > 0 && n < 2) {
		l = sgw_relay_peek(&sp->tx, data_off, &iov[n].p);
		if (l == 0)
			break;
		if (l > data_len)
			l = data_len;
		iov[n].len = l;
		data_off += l;
		data_len -= l;
		n++;
	}
	if (data_len > 0) {
		/* the endpoint asked for bytes the relay does not hold: never expected */
		env->ctr[SGW_SPLIT_C_RELAY_CLIPPED] += data_len;
	}
	env->io.tcp_tx(env->ctx, sp, hdr, hlen, iov, n);
}

static void
op_rx_data(void *ctx, struct sgw_tcp_conn *c, uint32_t off, const uint8_t *p, uint32_t len)
{
	struct sgw_split_env *env = ctx;
	struct sgw_split *sp = split_of(c);
	struct sgw_relay *r = &sp->rx;
	uint32_t fr = sgw_relay_free(r), pos, first;

	/* sgw_tcp writes only within rx_space; clip anyway, the ring is the bound */
	if (off >= fr) {
		env->ctr[SGW_SPLIT_C_RELAY_CLIPPED] += len;
		return;
	}
	if (len > fr - off) {
		env->ctr[SGW_SPLIT_C_RELAY_CLIPPED] += len - (fr - off);
		len = fr - off;
	}
	/* out-of-order bytes land at their offset beyond the tail (not yet committed) */
	pos = (r->tail + off) & sgw_relay_mask(r);
	first = sgw_relay_mask(r) + 1 - pos;
	if (first > len)
		first = len;
	memcpy(r->mem + pos, p, first);
	if (len > first)
		memcpy(r->mem, p + first, len - first);
}

static void
op_rx_advance(void *ctx, struct sgw_tcp_conn *c, uint32_t n)
{
	struct sgw_split_env *env = ctx;
	struct sgw_split *sp = split_of(c);
	uint32_t seq = c->irs + 1 + sp->rx.tail;

	if (sgw_relay_commit(&sp->rx, n) != 0) {
		env->ctr[SGW_SPLIT_C_RELAY_CLIPPED] += n;
		return;
	}
	if (rwc_on(sp))
		sgw_rwc_data(sp->rwc, &sp->rx, env->now, seq, n, env->echo_ns);
}

static uint32_t
op_rx_space(void *ctx, struct sgw_tcp_conn *c)
{
	(void)ctx;
	return sgw_relay_free(&split_of(c)->rx);
}

static void
op_tx_acked(void *ctx, struct sgw_tcp_conn *c, uint32_t n)
{
	(void)ctx;
	sgw_relay_consume(&split_of(c)->tx, n);
}

const struct sgw_tcp_ops sgw_split_tcp_ops = {
	.tx = op_tx,
	.rx_data = op_rx_data,
	.rx_advance = op_rx_advance,
	.rx_space = op_rx_space,
	.tx_acked = op_tx_acked,
};

int
sgw_split_env_init(struct sgw_split_env *env, const struct sgw_split_conf *conf,
		   struct sgw_tcp_stack *tcp, const struct sgw_split_io_ops *io,
		   const struct sgw_split_sat_ops *sat, void *ctx)
{
	if (env == NULL || conf == NULL || tcp == NULL || io == NULL || sat == NULL ||
	    io->tcp_tx == NULL || sat->can_send == NULL || sat->send == NULL ||
	    sgw_split_conf_check(conf) != NULL || tcp->ops.tx != op_tx || tcp->ctx != env)
		return -1;
	memset(env, 0, sizeof(*env));
	env->conf = *conf;
	env->tcp = tcp;
	env->io = *io;
	env->sat = *sat;
	env->ctx = ctx;
	return 0;
}

/* ------------------------------------------------------------ stream out */

static void
build_open(const struct sgw_split *sp, struct sgw_stream_msg *m)
{
	memset(m, 0, sizeof(*m));
	m->type = SGW_STREAM_OPEN;
	m->flags = (uint8_t)((sp->addr.ipv6 ? SGW_STREAM_F_IPV6 : 0) |
			     (sp->mode == SGW_SPLIT_SPOOFED ? SGW_STREAM_F_SPOOFED : 0));
	if (sp->syn.opts & SGW_TCP_O_MSS) {
		m->opts |= SGW_STREAM_O_MSS;
		m->mss = sp->syn.mss < SGW_STREAM_MIN_MSS ? SGW_STREAM_MIN_MSS : sp->syn.mss;
	}
	if (sp->syn.opts & SGW_TCP_O_WS) {
		m->opts |= SGW_STREAM_O_WS;
		m->wscale = sp->syn.wscale > 14 ? 14 : sp->syn.wscale;
	}
	if (sp->syn.opts & SGW_TCP_O_SACK_PERM)
		m->opts |= SGW_STREAM_O_SACK;
	if (sp->syn.opts & SGW_TCP_O_TS)
		m->opts |= SGW_STREAM_O_TS;
	m->sport = sp->addr.sport;
	m->dport = sp->addr.dport;
	m->off = sp->adv_edge;
	memcpy(m->saddr, sp->addr.saddr, 16);
	memcpy(m->daddr, sp->addr.daddr, 16);
}

static void
build_open_ok(const struct sgw_split *sp, struct sgw_stream_msg *m)
{
	const struct sgw_tcp_conn *c = &sp->tcp;

	memset(m, 0, sizeof(*m));
	m->type = SGW_STREAM_OPEN_OK;
	m->opts = SGW_STREAM_O_MSS;
	m->mss = c->peer_mss < SGW_STREAM_MIN_MSS ? SGW_STREAM_MIN_MSS : c->peer_mss;
	if (c->flags & SGW_TCP_CF_WS) {
		m->opts |= SGW_STREAM_O_WS;
		m->wscale = c->snd_wscale > 14 ? 14 : c->snd_wscale;
	}
	if (c->flags & SGW_TCP_CF_SACK)
		m->opts |= SGW_STREAM_O_SACK;
	if (c->flags & SGW_TCP_CF_TS)
		m->opts |= SGW_STREAM_O_TS;
	m->off = sp->adv_edge;
}

/* One control message from pending; 0 sent (or nothing to send), -1 refused. */
static int
send_ctrl(struct sgw_split_env *env, struct sgw_split *sp, uint8_t bit)
{
	uint8_t buf[SGW_STREAM_MAX_CTRL];
	struct sgw_stream_msg m;
	size_t n;

	switch (bit) {
	case P_OPEN:
		build_open(sp, &m);
		break;
	case P_OPEN_OK:
		sp->adv_edge = (uint32_t)(sp->tx.head + sp->tx.limit);
		build_open_ok(sp, &m);
		break;
	case P_CREDIT:
		memset(&m, 0, sizeof(m));
		m.type = SGW_STREAM_CREDIT;
		m.off = (uint32_t)(sp->tx.head + sp->tx.limit);
		break;
	case P_RST:
		memset(&m, 0, sizeof(m));
		m.type = SGW_STREAM_RST;
		m.reason = sp->reason;
		break;
	case P_REFUSED:
		memset(&m, 0, sizeof(m));
		m.type = SGW_STREAM_OPEN_REFUSED;
		m.reason = sp->reason;
		break;
	default:
		return 0;
	}
	n = sgw_stream_encode(buf, sizeof(buf), &m);
	if (sat_send(env, sp, buf, n) != 0)
		return -1;
	sp->pending &= (uint8_t)~bit;
	switch (bit) {
	case P_CREDIT:
		sp->adv_edge = m.off;
		env->ctr[SGW_SPLIT_C_CREDIT_OUT]++;
		break;
	case P_RST:
		env->ctr[SGW_SPLIT_C_RST_OUT]++;
		break;
	case P_REFUSED:
		env->ctr[SGW_SPLIT_C_REFUSED_OUT]++;
		break;
	default:
		break;
	}
	return 0;
}

/* Credit: the tx relay drained a quarter of its size since the last grant. */
static void
maybe_credit(struct sgw_split *sp)
{
	uint32_t edge = (uint32_t)(sp->tx.head + sp->tx.limit);
	uint32_t step = sp->tx.limit / 4 ? sp->tx.limit / 4 : 1;

	if (sp->state != SGW_SPLIT_S_OPEN || (sp->flags & (F_RST | F_FIN_RCVD)))
		return;
	if (sgw_seq_diff(edge, sp->adv_edge) >= (int32_t)step)
		sp->pending |= P_CREDIT;
}

/* DATA while credit and the channel allow; returns the bytes sent. */
static uint32_t
send_data(struct sgw_split_env *env, struct sgw_split *sp, unsigned int *budget)
{
	struct sgw_split_iov iov[3];
	uint8_t hdr[SGW_STREAM_DATA_HDR];
	uint32_t used, credit, room, n, l, sent = 0, off;
	uint32_t maxpay = env->conf.max_msg - SGW_STREAM_DATA_HDR;
	int32_t cr;
	unsigned int k;

	while (*budget > 0) {
		used = sgw_relay_used(&sp->rx);
		if (used == 0)
			break;
		off = sp->rx.head;
		cr = sgw_seq_diff(sp->snd_edge, off);
		if (cr <= 0) {
			env->ctr[SGW_SPLIT_C_CREDIT_STALL]++;
			break;
		}
		credit = (uint32_t)cr;
		room = env->sat.can_send(env->ctx, sp, env->now);
		if (room <= SGW_STREAM_DATA_HDR) {
			env->ctr[SGW_SPLIT_C_SAT_STALL]++;
			break;
		}
		n = used;
		if (n > credit)
			n = credit;
		if (n > room - SGW_STREAM_DATA_HDR)
			n = room - SGW_STREAM_DATA_HDR;
		if (n > maxpay)
			n = maxpay;
		/*
		 * Packing: after full messages, a short tail of a burst waits while
		 * the leg holds a delayed ACK (the peer's next segment is due; at the
		 * latest the delayed-ACK timer calls us back, 40 ms). A lone short
		 * write (a request) is never held.
		 */
		if (n == used && n < maxpay && sent > 0 && (sp->tcp.flags & SGW_TCP_CF_DELACK) &&
		    !(sp->flags & F_LOCAL_FIN))
			break;
		sgw_stream_data_hdr(hdr, off);
		iov[0].p = hdr;
		iov[0].len = SGW_STREAM_DATA_HDR;
		k = 1;
		l = sgw_relay_peek(&sp->rx, 0, &iov[1].p);
		iov[1].len = l < n ? l : n;
		k++;
		if (iov[1].len < n) {
			l = sgw_relay_peek(&sp->rx, iov[1].len, &iov[2].p);
			iov[2].len = n - iov[1].len < l ? n - iov[1].len : l;
			k++;
			n = iov[1].len + iov[2].len;
		}
		if (env->sat.send(env->ctx, sp, sp->channel, iov, k) != 0) {
			env->ctr[SGW_SPLIT_C_SEND_REFUSED]++;
			break;
		}
		/* satlink now owns a copy and delivers it reliably: free it here */
		sgw_relay_consume(&sp->rx, n);
		env->ctr[SGW_SPLIT_C_DATA_MSGS_OUT]++;
		env->ctr[SGW_SPLIT_C_DATA_BYTES_OUT] += n;
		sent += n;
		(*budget)--;
	}
	return sent;
}

static void
flush(struct sgw_split_env *env, struct sgw_split *sp, struct sgw_split_out *out)
{
	static const uint8_t order[] = {P_OPEN, P_OPEN_OK, P_REFUSED, P_RST, P_CREDIT};
	unsigned int budget = env->conf.burst_msgs, i;
	struct sgw_rwc_out ro;
	uint8_t buf[SGW_STREAM_FIN_LEN];
	struct sgw_stream_msg m;

	for (i = 0; i < sizeof(order); i++) {
		if (!(sp->pending & order[i]))
			continue;
		if (send_ctrl(env, sp, order[i]) != 0)
			return;
		if (order[i] == P_REFUSED || order[i] == P_RST)
			return; /* nothing follows them */
	}
	if (sp->flags & F_RST)
		return;
	if (sp->state != SGW_SPLIT_S_OPEN &&
	    !(sp->state == SGW_SPLIT_S_OPENING && sp->role == SGW_SPLIT_OPENER))
		return;
	if (!(sp->flags & F_FIN_SENT) && send_data(env, sp, &budget) > 0) {
		/* the rx relay drained: the leg's window opens (RWND), or the rwc decides */
		if (rwc_on(sp)) {
			if (sgw_rwc_drain(sp->rwc, &sp->rx, env->now, sp->tcp.rcv_nxt, &ro))
				craft_ack(env, sp, ro.ack, ro.wnd);
		} else {
			leg_rx_consumed(env, sp, out);
		}
	}
	/*
	 * The budget ran out with bytes left that have credit (or the FIN after
	 * them): nothing else may call us back (the local peer may be done
	 * sending, the far half has no reason to grant more), so say so.
	 */
	if (budget == 0 && !(sp->flags & F_FIN_SENT) &&
	    ((sgw_relay_used(&sp->rx) > 0 &&
	      sgw_seq_diff(sp->snd_edge, sp->rx.head) > 0) ||
	     (sp->flags & F_LOCAL_FIN)))
		out->events |= SGW_SPLIT_EV_MORE;
	if ((sp->flags & (F_LOCAL_FIN | F_FIN_SENT)) == F_LOCAL_FIN &&
	    sgw_relay_used(&sp->rx) == 0 && sp->state == SGW_SPLIT_S_OPEN && budget > 0) {
		memset(&m, 0, sizeof(m));
		m.type = SGW_STREAM_FIN;
		m.off = sp->rx.head;
		if (sat_send(env, sp, buf, sgw_stream_encode(buf, sizeof(buf), &m)) == 0) {
			sp->flags |= F_FIN_SENT;
			env->ctr[SGW_SPLIT_C_FIN_OUT]++;
		}
	}
}

/* The window field the leg's last ACK carried (rounded down to its scale). */
static uint32_t
adv_field(const struct sgw_tcp_conn *c)
{
	uint32_t w = (c->rcv_adv - c->rcv_nxt) >> c->rcv_wscale;

	if (SGW_SEQ_LT(c->rcv_adv, c->rcv_nxt))
		return 0;
	return w > 65535 ? 65535 : w;
}

/*
 * The sender is frozen: the window it was given is zero or below one full
 * segment (it then waits: sender SWS avoidance), and the relay being full is
 * why (the leg's own edge does not move until an MSS is free).
 */
static int
adv_below_mss(const struct sgw_tcp_conn *c)
{
	uint32_t mss = c->rcv_mss ? c->rcv_mss : 536;

	return SGW_SEQ_LT(c->rcv_adv, c->rcv_nxt) || c->rcv_adv - c->rcv_nxt < mss;
}

/*
 * RWND anti-freeze (seed 003): once the leg advertised a zero window (or one
 * below a segment: the sender waits the same), check the relay periodically
 * (period doubling, FREEZE_MAX_TRIES) until new data arrives; freeze_check
 * sends the update.
 */
static void
freeze_track(struct sgw_split_env *env, struct sgw_split *sp, struct sgw_split_out *out)
{
	const struct sgw_tcp_conn *c = &sp->tcp;
	uint64_t at = SGW_TCP_NEVER;

	if (sp->rwc != NULL || (sp->flags & F_RST))
		return;
	if ((sp->flags & F_FROZEN) && (c->rcv_nxt != sp->freeze_nxt || !tcp_receiving(c)))
		sp->flags &= (uint8_t)~F_FROZEN; /* new data: the sender is out of it */
	if (!(sp->flags & F_FROZEN) && tcp_receiving(c) && adv_below_mss(c)) {
		sp->flags |= F_FROZEN;
		sp->freeze_nxt = c->rcv_nxt;
		sp->freeze_tries = 0;
	}
	if ((sp->flags & F_FROZEN) && sp->freeze_tries < FREEZE_MAX_TRIES) {
		if (sp->freeze_at != SGW_TCP_NEVER)
			return; /* a check is armed */
		at = sgw_add_sat(env->now, env->conf.rwc.freeze_check_ns << sp->freeze_tries);
	}
	if (at != sp->freeze_at) {
		sp->freeze_at = at;
		set_timer(out, SGW_SPLIT_T_RWC, at);
	}
}

static void
freeze_check(struct sgw_split_env *env, struct sgw_split *sp, struct sgw_split_out *out)
{
	struct sgw_tcp_conn *c = &sp->tcp;
	uint32_t adv_before = c->rcv_adv, wnd;

	if (!(sp->flags & F_FROZEN) || !tcp_receiving(c))
		return;
	sp->freeze_tries++;
	/* the leg's own window update when the edge can move by its SWS step ... */
	leg_rx_consumed(env, sp, out);
	if (c->rcv_adv != adv_before)
		return;
	/* ... else a forced duplicate ACK repeating an open window (lost update) */
	wnd = adv_field(c);
	if (wnd != 0) {
		craft_ack(env, sp, c->rcv_nxt, (uint16_t)wnd);
		env->ctr[SGW_SPLIT_C_ANTI_FREEZE]++;
	}
}

static void
rwc_timer_sync(struct sgw_split *sp, struct sgw_split_out *out)
{
	uint64_t at;

	if (!rwc_on(sp) || (sp->flags & F_RST))
		return;
	at = sgw_rwc_timer_at(sp->rwc);
	if (at == SGW_RWC_NEVER)
		at = SGW_TCP_NEVER;
	if (at != sp->freeze_at) {
		sp->freeze_at = at;
		set_timer(out, SGW_SPLIT_T_RWC, at);
	}
}

/* After every call: credit, send, timers, the end. */
static void
post(struct sgw_split_env *env, struct sgw_split *sp, struct sgw_split_out *out)
{
	int over;

	if (sp->state == SGW_SPLIT_S_CLOSED)
		return;
	maybe_credit(sp);
	flush(env, sp, out);
	freeze_track(env, sp, out);
	rwc_timer_sync(sp, out);
	over = (sp->flags & F_RST) ||
	       (sp->flags & (F_FIN_SENT | F_FIN_RCVD)) == (F_FIN_SENT | F_FIN_RCVD);
	if (over && sp->pending == 0 && tcp_done(&sp->tcp)) {
		sp->state = SGW_SPLIT_S_CLOSED;
		out->events |= SGW_SPLIT_EV_CLOSED;
		if (sp->freeze_at != SGW_TCP_NEVER) {
			sp->freeze_at = SGW_TCP_NEVER;
			set_timer(out, SGW_SPLIT_T_RWC, SGW_TCP_NEVER);
		}
		if (sp->idle_at != SGW_TCP_NEVER) {
			sp->idle_at = SGW_TCP_NEVER;
			set_timer(out, SGW_SPLIT_T_IDLE, SGW_TCP_NEVER);
		}
		return;
	}
	if (over && sp->state == SGW_SPLIT_S_OPEN)
		sp->state = SGW_SPLIT_S_DONE;
	/*
	 * idle: armed once, re-armed lazily from last_active when it fires; not
	 * for a stream that is over (its FINs crossed, or a RST): the leg's own
	 * timers end it (TIME-WAIT, retransmission), never an idle reset.
	 */
	if (over) {
		if (sp->idle_at != SGW_TCP_NEVER) {
			sp->idle_at = SGW_TCP_NEVER;
			set_timer(out, SGW_SPLIT_T_IDLE, SGW_TCP_NEVER);
		}
		return;
	}
	if (env->conf.idle_ns != 0 && sp->idle_at == SGW_TCP_NEVER) {
		sp->idle_at = sgw_add_sat(sp->last_active, env->conf.idle_ns);
		set_timer(out, SGW_SPLIT_T_IDLE, sp->idle_at);
	}
}

/* ------------------------------------------------------------ calls */

static int
relays_init(struct sgw_split *sp, const struct sgw_split_bufs *b)
{
	if (b == NULL)
		return -1;
	if (sgw_relay_init(&sp->rx, b->rx_mem, b->rx_ring, b->rx_limit) != 0 ||
	    sgw_relay_init(&sp->tx, b->tx_mem, b->tx_ring, b->tx_limit) != 0)
		return -1;
	return 0;
}

static void
split_reset(struct sgw_split *sp)
{
	/* everything after the TCP connection (sgw_tcp_conn_init does that one) */
	memset((char *)sp + sizeof(sp->tcp), 0, sizeof(*sp) - sizeof(sp->tcp));
	sp->idle_at = SGW_TCP_NEVER;
	sp->freeze_at = SGW_TCP_NEVER;
	sp->tw_split[0] = UINT32_MAX;
	sp->tw_split[1] = UINT32_MAX;
}

int
sgw_split_open(struct sgw_split_env *env, struct sgw_split *sp, uint64_t now,
	       const struct sgw_split_addr *a, const struct sgw_tcp_seg *syn, uint8_t mode,
	       uint16_t channel, uint32_t iss, const struct sgw_split_bufs *bufs,
	       struct sgw_rwc *rwc, struct sgw_split_out *out)
{
	struct sgw_tcp_out to;

	sgw_split_out_reset(out);
	if (env == NULL || sp == NULL || a == NULL || syn == NULL || mode > SGW_SPLIT_SPOOFED ||
	    (syn->flags & (SGW_TCP_F_SYN | SGW_TCP_F_ACK | SGW_TCP_F_RST)) != SGW_TCP_F_SYN ||
	    a->sport == 0 || a->dport == 0)
		return -1;
	split_reset(sp);
	if (relays_init(sp, bufs) != 0)
		return -1;
	env->now = now;
	sgw_tcp_conn_init(env->tcp, &sp->tcp, iss, a->dport, a->sport);
	sgw_tcp_listen(env->tcp, &sp->tcp);
	sp->addr = *a;
	sp->role = SGW_SPLIT_OPENER;
	sp->mode = mode;
	sp->channel = channel;
	sp->rwc = (env->conf.rwc.scheme != SGW_RWC_RWND) ? rwc : NULL;
	sp->state = SGW_SPLIT_S_OPENING;
	sp->last_active = now;
	sp->snd_edge = env->conf.open_credit;
	sp->adv_edge = sp->tx.limit;
	sp->syn.seq = syn->seq;
	sp->syn.tsval = syn->tsval;
	sp->syn.win = syn->win;
	sp->syn.mss = syn->mss;
	sp->syn.opts = syn->opts;
	sp->syn.wscale = syn->wscale;
	sp->pending = P_OPEN;
	env->ctr[SGW_SPLIT_C_OPENS]++;
	if (mode == SGW_SPLIT_SPOOFED) {
		env->ctr[SGW_SPLIT_C_OPENS_SPOOFED]++;
		sgw_tcp_out_reset(&to);
		sgw_tcp_input(env->tcp, &sp->tcp, now, syn, &to);
		merge_tcp(env, sp, &to, out);
	} else {
		sp->flags |= F_SYN_HELD;
	}
	post(env, sp, out);
	return 0;
}

int
sgw_split_accept(struct sgw_split_env *env, struct sgw_split *sp, uint64_t now,
		 const struct sgw_stream_msg *open, uint16_t channel, uint32_t iss,
		 const struct sgw_split_bufs *bufs, struct sgw_rwc *rwc,
		 struct sgw_split_out *out)
{
	struct sgw_tcp_out to;

	sgw_split_out_reset(out);
	if (env == NULL || sp == NULL || open == NULL || open->type != SGW_STREAM_OPEN ||
	    open->sport == 0 || open->dport == 0)
		return -1;
	split_reset(sp);
	if (relays_init(sp, bufs) != 0 || sp->tx.limit < env->conf.open_credit)
		return -1;
	env->now = now;
	sp->addr.ipv6 = (open->flags & SGW_STREAM_F_IPV6) ? 1 : 0;
	memcpy(sp->addr.saddr, open->saddr, 16);
	memcpy(sp->addr.daddr, open->daddr, 16);
	sp->addr.sport = open->sport;
	sp->addr.dport = open->dport;
	/* the leg toward the destination speaks as the SYN's source */
	sgw_tcp_conn_init(env->tcp, &sp->tcp, iss, open->sport, open->dport);
	sp->role = SGW_SPLIT_ACCEPTOR;
	sp->mode = (open->flags & SGW_STREAM_F_SPOOFED) ? SGW_SPLIT_SPOOFED
							 : SGW_SPLIT_END_TO_END;
	sp->channel = channel;
	sp->rwc = (env->conf.rwc.scheme != SGW_RWC_RWND) ? rwc : NULL;
	sp->state = SGW_SPLIT_S_OPENING;
	sp->last_active = now;
	sp->snd_edge = open->off;
	sp->adv_edge = env->conf.open_credit; /* what OPEN let the opener assume */
	env->ctr[SGW_SPLIT_C_ACCEPTS]++;
	sgw_tcp_out_reset(&to);
	sgw_tcp_connect(env->tcp, &sp->tcp, now, &to);
	merge_tcp(env, sp, &to, out);
	post(env, sp, out);
	return 0;
}

int
sgw_split_refuse(struct sgw_split_env *env, uint16_t channel, uint8_t reason)
{
	struct sgw_stream_msg m;
	struct sgw_split_iov iov;
	uint8_t buf[SGW_STREAM_REFUSED_LEN];

	memset(&m, 0, sizeof(m));
	m.type = SGW_STREAM_OPEN_REFUSED;
	m.reason = reason;
	iov.p = buf;
	iov.len = (uint32_t)sgw_stream_encode(buf, sizeof(buf), &m);
	if (iov.len == 0 || env->sat.send(env->ctx, NULL, channel, &iov, 1) != 0)
		return -1;
	env->ctr[SGW_SPLIT_C_REFUSED_OUT]++;
	return 0;
}

/*
 * When we sent the ACK a segment's TSecr echoes: the leg's TSval is its
 * millisecond clock plus ts_offset (sgw_tcp_priv.h), so the echo names its
 * own send time, to the millisecond. 0 when unknown or implausible (more than
 * 60 s back, or ahead).
 */
static uint64_t
echo_time(const struct sgw_split *sp, uint64_t now, const struct sgw_tcp_seg *seg)
{
	uint32_t now_ms = (uint32_t)(now / 1000000ull), age;

	if (!(sp->tcp.flags & SGW_TCP_CF_TS) || !(seg->opts & SGW_TCP_O_TS) || seg->tsecr == 0)
		return 0;
	age = now_ms + sp->tcp.ts_offset - seg->tsecr;
	if (age > 60000u || (uint64_t)age * 1000000ull > now)
		return 0;
	return now - (uint64_t)age * 1000000ull;
}

void
sgw_split_tcp_input(struct sgw_split_env *env, struct sgw_split *sp, uint64_t now,
		    const struct sgw_tcp_seg *seg, struct sgw_split_out *out)
{
	struct sgw_tcp_out to;

	sgw_split_out_reset(out);
	env->now = now;
	if (sp->state == SGW_SPLIT_S_CLOSED || sp->state == SGW_SPLIT_S_FREE)
		return;
	sp->last_active = now;
	if (sp->flags & F_SYN_HELD) {
		/* the far leg is opening: the client's SYN retries wait with it */
		if ((seg->flags & (SGW_TCP_F_SYN | SGW_TCP_F_ACK | SGW_TCP_F_RST)) ==
		    SGW_TCP_F_SYN) {
			env->ctr[SGW_SPLIT_C_SYN_HELD_DUP]++;
			sp->syn.tsval = seg->tsval;
		} else if ((seg->flags & SGW_TCP_F_RST) && seg->seq == sp->syn.seq + 1) {
			sp->flags &= (uint8_t)~F_SYN_HELD; /* the client gave up */
			sp->tcp.state = SGW_TCP_CLOSED;
			reset_both(env, sp, SGW_STREAM_RST_PEER, 1, out);
		}
		post(env, sp, out);
		return;
	}
	env->echo_ns = echo_time(sp, now, seg);
	sgw_tcp_out_reset(&to);
	sgw_tcp_input(env->tcp, &sp->tcp, now, seg, &to);
	env->echo_ns = 0;
	merge_tcp(env, sp, &to, out);
	post(env, sp, out);
}

static void
replay_syn(struct sgw_split_env *env, struct sgw_split *sp, struct sgw_split_out *out)
{
	struct sgw_tcp_seg s;
	struct sgw_tcp_out to;

	memset(&s, 0, sizeof(s));
	s.sport = sp->addr.sport;
	s.dport = sp->addr.dport;
	s.seq = sp->syn.seq;
	s.flags = SGW_TCP_F_SYN;
	s.win = sp->syn.win;
	s.opts = sp->syn.opts;
	s.mss = sp->syn.mss;
	s.wscale = sp->syn.wscale;
	s.tsval = sp->syn.tsval;
	sp->flags &= (uint8_t)~F_SYN_HELD;
	sgw_tcp_out_reset(&to);
	sgw_tcp_input(env->tcp, &sp->tcp, env->now, &s, &to);
	merge_tcp(env, sp, &to, out);
}

static void
proto_err(struct sgw_split_env *env, struct sgw_split *sp, struct sgw_split_out *out)
{
	env->ctr[SGW_SPLIT_C_PROTO_ERR]++;
	reset_both(env, sp, SGW_STREAM_RST_PROTOCOL, 1, out);
}

/* DATA and FIN are taken while the stream is up; an acceptor takes them while
 * its leg is still connecting (spoofed: the opener sends at once). */
static int
may_receive(const struct sgw_split *sp)
{
	if (sp->flags & (F_RST | F_FIN_RCVD))
		return 0;
	return sp->state == SGW_SPLIT_S_OPEN ||
	       (sp->state == SGW_SPLIT_S_OPENING && sp->role == SGW_SPLIT_ACCEPTOR);
}

static void
on_data(struct sgw_split_env *env, struct sgw_split *sp, const struct sgw_stream_msg *m,
	struct sgw_split_out *out)
{
	struct sgw_tcp_out to;

	if (!may_receive(sp) || m->off != sp->tx.tail ||
	    m->len > sgw_relay_free(&sp->tx)) {
		/* out of order, or beyond the credit we granted: never place it */
		proto_err(env, sp, out);
		return;
	}
	if (sgw_relay_write(&sp->tx, m->data, m->len) != 0) {
		proto_err(env, sp, out);
		return;
	}
	env->ctr[SGW_SPLIT_C_DATA_MSGS_IN]++;
	env->ctr[SGW_SPLIT_C_DATA_BYTES_IN] += m->len;
	sgw_tcp_out_reset(&to);
	if (sgw_tcp_send(env->tcp, &sp->tcp, env->now, m->len, &to) != 0) {
		/* the local leg is gone or shut: the bytes cannot be delivered */
		merge_tcp(env, sp, &to, out);
		reset_both(env, sp, SGW_STREAM_RST_ABORT, 1, out);
		return;
	}
	merge_tcp(env, sp, &to, out);
}

void
sgw_split_stream_input(struct sgw_split_env *env, struct sgw_split *sp, uint64_t now,
		       const void *msg, size_t len, struct sgw_split_out *out)
{
	struct sgw_stream_msg m;
	struct sgw_tcp_out to;
	int32_t d;

	sgw_split_out_reset(out);
	env->now = now;
	if (sp->state == SGW_SPLIT_S_CLOSED || sp->state == SGW_SPLIT_S_FREE ||
	    (sp->flags & F_RST)) {
		env->ctr[SGW_SPLIT_C_LATE_MSG]++;
		return;
	}
	if (sgw_stream_decode(msg, len, &m, env->msg_err) != SGW_STREAM_E_OK) {
		env->ctr[SGW_SPLIT_C_BAD_MSG]++;
		proto_err(env, sp, out);
		post(env, sp, out);
		return;
	}
	sp->last_active = now;
	switch (m.type) {
	case SGW_STREAM_OPEN_OK:
		if (sp->role != SGW_SPLIT_OPENER || sp->state != SGW_SPLIT_S_OPENING) {
			proto_err(env, sp, out);
			break;
		}
		sp->state = SGW_SPLIT_S_OPEN;
		sp->flags |= F_UP;
		if (sgw_seq_diff(m.off, sp->snd_edge) > 0)
			sp->snd_edge = m.off;
		env->ctr[SGW_SPLIT_C_CONNECTED]++;
		out->events |= SGW_SPLIT_EV_CONNECTED;
		if (sp->flags & F_SYN_HELD)
			replay_syn(env, sp, out);
		break;
	case SGW_STREAM_OPEN_REFUSED:
		if (sp->role != SGW_SPLIT_OPENER || sp->state != SGW_SPLIT_S_OPENING) {
			proto_err(env, sp, out);
			break;
		}
		env->ctr[SGW_SPLIT_C_REFUSED_IN]++;
		sp->flags |= F_RST;
		sp->reason = m.reason;
		sp->state = SGW_SPLIT_S_DONE;
		if (sp->flags & F_SYN_HELD) {
			/* end to end: what the far host did; no answer stays no answer */
			sp->flags &= (uint8_t)~F_SYN_HELD;
			if (m.reason != SGW_STREAM_REFUSE_UNREACHABLE)
				rst_held_syn(env, sp);
			sp->tcp.state = SGW_TCP_CLOSED;
		} else {
			leg_abort(env, sp, out); /* spoofed: the answered client gets a RST */
		}
		break;
	case SGW_STREAM_DATA:
		on_data(env, sp, &m, out);
		break;
	case SGW_STREAM_FIN:
		if (!may_receive(sp) || m.off != sp->tx.tail) {
			proto_err(env, sp, out);
			break;
		}
		sp->flags |= F_FIN_RCVD;
		sp->rx_fin_off = m.off;
		env->ctr[SGW_SPLIT_C_FIN_IN]++;
		sgw_tcp_out_reset(&to);
		sgw_tcp_shutdown(env->tcp, &sp->tcp, now, &to);
		merge_tcp(env, sp, &to, out);
		break;
	case SGW_STREAM_RST:
		env->ctr[SGW_SPLIT_C_RST_IN]++;
		reset_both(env, sp, m.reason, 0, out);
		break;
	case SGW_STREAM_CREDIT:
		env->ctr[SGW_SPLIT_C_CREDIT_IN]++;
		d = sgw_seq_diff(m.off, sp->snd_edge);
		if (d <= 0)
			break; /* an old edge: never move it back */
		if ((uint32_t)(m.off - sp->rx.head) > SGW_RELAY_MAX_RING) {
			proto_err(env, sp, out); /* beyond any relay the peer can have */
			break;
		}
		sp->snd_edge = m.off;
		break;
	default: /* OPEN on a channel in use */
		proto_err(env, sp, out);
		break;
	}
	post(env, sp, out);
}

void
sgw_split_timer(struct sgw_split_env *env, struct sgw_split *sp, uint64_t now, unsigned int id,
		struct sgw_split_out *out)
{
	struct sgw_tcp_out to;
	struct sgw_rwc_out ro;

	sgw_split_out_reset(out);
	env->now = now;
	if (sp->state == SGW_SPLIT_S_CLOSED || sp->state == SGW_SPLIT_S_FREE)
		return;
	if (id < SGW_TCP_T__COUNT) {
		sgw_tcp_out_reset(&to);
		sgw_tcp_timer(env->tcp, &sp->tcp, now, id, &to);
		merge_tcp(env, sp, &to, out);
	} else if (id == SGW_SPLIT_T_RWC) {
		sp->freeze_at = SGW_TCP_NEVER;
		if (rwc_on(sp)) {
			if (tcp_receiving(&sp->tcp) &&
			    sgw_rwc_timer(sp->rwc, &sp->rx, now, sp->tcp.rcv_nxt, &ro))
				craft_ack(env, sp, ro.ack, ro.wnd);
		} else {
			freeze_check(env, sp, out);
		}
	} else if (id == SGW_SPLIT_T_IDLE) {
		sp->idle_at = SGW_TCP_NEVER;
		/* Over cleanly (both FINs; the leg in TIME-WAIT or LAST-ACK): not idle. */
		if (env->conf.idle_ns != 0 && now - sp->last_active >= env->conf.idle_ns &&
		    !(sp->flags & F_RST) && !clean_over(sp)) {
			env->ctr[SGW_SPLIT_C_IDLE_TIMEOUT]++;
			reset_both(env, sp, SGW_STREAM_RST_IDLE, 1, out);
		}
	}
	post(env, sp, out);
}

void
sgw_split_poll(struct sgw_split_env *env, struct sgw_split *sp, uint64_t now,
	       struct sgw_split_out *out)
{
	sgw_split_out_reset(out);
	env->now = now;
	post(env, sp, out);
}

void
sgw_split_abort(struct sgw_split_env *env, struct sgw_split *sp, uint64_t now,
		uint8_t rst_reason, struct sgw_split_out *out)
{
	sgw_split_out_reset(out);
	env->now = now;
	if (sp->state == SGW_SPLIT_S_CLOSED || sp->state == SGW_SPLIT_S_FREE)
		return;
	if (sp->flags & F_RST) {
		/* already over: drop what is still queued for the far half */
		sp->pending = 0;
	} else {
		reset_both(env, sp, rst_reason ? rst_reason : SGW_STREAM_RST_ABORT,
			   rst_reason != 0, out);
	}
	if (rst_reason == 0)
		sp->pending = 0; /* the channel is gone: tell only the local peer */
	post(env, sp, out);
}

int
sgw_split_stop(struct sgw_split_env *env, struct sgw_split *sp, uint64_t now,
	       struct sgw_split_out *out)
{
	sgw_split_out_reset(out);
	env->now = now;
	if (sp->state == SGW_SPLIT_S_CLOSED || sp->state == SGW_SPLIT_S_FREE)
		return 0;
	/* Already reset, or ended cleanly: nobody waits for anything from this half. */
	if ((sp->flags & F_RST) || clean_over(sp)) {
		post(env, sp, out);
		return 0;
	}
	reset_both(env, sp, SGW_STREAM_RST_ABORT, 1, out);
	post(env, sp, out);
	return 1;
}

const struct sgw_rwc *
sgw_split_rwc(const struct sgw_split *sp)
{
	return (sp->flags & F_RWC) ? sp->rwc : NULL;
}
