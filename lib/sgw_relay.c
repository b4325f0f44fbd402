/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Relay buffer FIFO and receive-window control schemes (contract:
 * sgw_relay.h; rules and the no-overflow argument: docs/relay-buffer.md).
 *
 * Sequence numbers are compared in serial arithmetic (32-bit, RFC 1982
 * style): every window here is below 2^30, so a - b as int32 is exact.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "sgw_relay.h"

/* ------------------------------------------------------------ relay FIFO */

int
sgw_relay_init(struct sgw_relay *r, void *mem, uint32_t ring_size, uint32_t limit)
{
	if (r == NULL || mem == NULL || ring_size < SGW_RELAY_MIN_RING ||
	    ring_size > SGW_RELAY_MAX_RING || (ring_size & (ring_size - 1)) != 0 ||
	    limit == 0 || limit > ring_size)
		return -EINVAL;
	memset(r, 0, sizeof(*r));
	r->mem = mem;
	r->shift = (uint8_t)__builtin_ctz(ring_size);
	r->limit = limit;
	return 0;
}

static inline void
bad_call(struct sgw_relay *r)
{
	if (r->bad_calls < UINT16_MAX)
		r->bad_calls++;
}

static inline void
note_occ(struct sgw_relay *r)
{
	uint32_t used = r->tail - r->head;

	if (used > r->occ_max)
		r->occ_max = used;
}

int
sgw_relay_write(struct sgw_relay *r, const void *src, uint32_t len)
{
	uint32_t pos, first;

	if (len > sgw_relay_free(r)) {
		r->overflows++;
		return -ENOSPC;
	}
	if (len == 0)
		return 0;
	pos = r->tail & sgw_relay_mask(r);
	first = sgw_relay_mask(r) + 1 - pos;
	if (first > len)
		first = len;
	memcpy(r->mem + pos, src, first);
	if (len > first)
		memcpy(r->mem, (const uint8_t *)src + first, len - first);
	r->tail += len;
	note_occ(r);
	return 0;
}

uint32_t
sgw_relay_write_span(struct sgw_relay *r, uint8_t **p)
{
	uint32_t pos = r->tail & sgw_relay_mask(r);
	uint32_t room = sgw_relay_free(r);
	uint32_t run = sgw_relay_mask(r) + 1 - pos;

	*p = r->mem + pos;
	return run < room ? run : room;
}

int
sgw_relay_commit(struct sgw_relay *r, uint32_t n)
{
	if (n > sgw_relay_free(r)) {
		bad_call(r);
		return -ENOSPC;
	}
	r->tail += n;
	note_occ(r);
	return 0;
}

uint32_t
sgw_relay_peek(const struct sgw_relay *r, uint32_t off, const uint8_t **p)
{
	uint32_t used = r->tail - r->head;
	uint32_t pos, run;

	if (off >= used) {
		*p = NULL;
		return 0;
	}
	pos = (r->head + off) & sgw_relay_mask(r);
	run = sgw_relay_mask(r) + 1 - pos;
	*p = r->mem + pos;
	return run < used - off ? run : used - off;
}

uint32_t
sgw_relay_read(const struct sgw_relay *r, uint32_t off, void *dst, uint32_t len)
{
	uint32_t done = 0;

	/* At most two spans: the ring wraps once. */
	for (int i = 0; i < 2 && done < len; i++) {
		const uint8_t *p;
		uint32_t n = sgw_relay_peek(r, off + done, &p);

		if (n == 0)
			break;
		if (n > len - done)
			n = len - done;
		memcpy((uint8_t *)dst + done, p, n);
		done += n;
	}
	return done;
}

uint32_t
sgw_relay_consume(struct sgw_relay *r, uint32_t n)
{
	uint32_t used = r->tail - r->head;

	if (n > used) {
		bad_call(r);
		n = used;
	}
	r->head += n;
	return n;
}

/* ----------------------------------------------------- window control */

#define RWC_F_ADV_VALID 0x01u  /* rcv_adv holds an advertised edge */
#define RWC_F_FROZEN    0x02u  /* RWND: a zero window went out, no data since */
#define RWC_F_ZERO_SENT 0x04u  /* RWND: the last ACK let out had a zero window */
#define RWC_F_WITHHOLD  0x08u  /* PETRA/ACKRES: the ACK flow is stopped */
#define RWC_F_UPD_DRAIN 0x10u  /* conf update_on_drain */
#define RWC_F_HOLD      0x20u  /* conf ackres_hold */

#define RTT_G_NS 1000000ull    /* clock granularity G of RFC 6298: 1 ms */
#define RTO_SHIFT_MAX 6u
#define WIN_MAX (1u << 30)     /* RFC 7323: windows stay below 2^30 */

static inline int
seq_lt(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) < 0;
}

static inline int
seq_gt(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) > 0;
}

static const char *const scheme_names[SGW_RWC__COUNT] = {
	[SGW_RWC_RWND] = "rwnd",
	[SGW_RWC_PETRA] = "petra",
	[SGW_RWC_ACKRES] = "ackres",
};

const char *
sgw_rwc_scheme_name(int scheme)
{
	if (scheme < 0 || scheme >= SGW_RWC__COUNT)
		return "?";
	return scheme_names[scheme];
}

void
sgw_rwc_conf_default(struct sgw_rwc_conf *conf)
{
	memset(conf, 0, sizeof(*conf));
	conf->scheme = SGW_RWC_RWND;
	conf->wscale = 0;
	conf->update_on_drain = 1;
	conf->mss = 1460;
	conf->b_th = 0;
	conf->static_wnd = 0;
	conf->freeze_check_ns = 100ull * 1000 * 1000;
	conf->rto_min_ns = 1000ull * 1000 * 1000;
	conf->rto_max_ns = 60ull * 1000 * 1000 * 1000;
	conf->rto_init_ns = 1000ull * 1000 * 1000;
	conf->rto_bias_ns = 0;
}

const char *
sgw_rwc_conf_check(const struct sgw_rwc_conf *conf)
{
	if (conf->scheme >= SGW_RWC__COUNT)
		return "scheme";
	if (conf->wscale > SGW_RWC_MAX_WSCALE)
		return "wscale";
	if (conf->mss == 0)
		return "mss";
	if (conf->freeze_check_ns == 0)
		return "freeze_check_ns";
	if (conf->rto_min_ns == 0 || conf->rto_max_ns < conf->rto_min_ns)
		return "rto_min_ns";
	if (conf->rto_init_ns < conf->rto_min_ns || conf->rto_init_ns > conf->rto_max_ns)
		return "rto_init_ns";
	if (conf->static_wnd >= WIN_MAX)
		return "static_wnd";
	return NULL;
}

/* rcv_nxt never moves backwards; a caller that says otherwise is counted and
 * ignored (the last good value is used). */
static inline uint32_t
note_rcv_nxt(struct sgw_rwc *c, uint32_t rcv_nxt)
{
	if (seq_lt(rcv_nxt, c->rcv_nxt) || rcv_nxt - c->rcv_nxt >= WIN_MAX) {
		c->st.bad_input++;
		return c->rcv_nxt;
	}
	c->rcv_nxt = rcv_nxt;
	return rcv_nxt;
}

static int ackres_sample(struct sgw_rwc *c, uint64_t now);

/* Let an ACK out: fill *out and keep the books. */
static int
emit(struct sgw_rwc *c, uint64_t now, uint32_t rcv_nxt, uint16_t field,
     struct sgw_rwc_out *out)
{
	uint32_t edge = rcv_nxt + ((uint32_t)field << c->wscale);

	if (!(c->flags & RWC_F_ADV_VALID) || seq_gt(edge, c->rcv_adv))
		c->rcv_adv = edge;
	c->flags |= RWC_F_ADV_VALID;
	out->ack = rcv_nxt;
	out->wnd = field;
	c->st.acks_sent++;
	if (seq_gt(rcv_nxt, c->last_ack)) {
		c->t_last_adv = now;
		if (c->scheme == SGW_RWC_ACKRES && (c->flags & RWC_F_HOLD)) {
			ackres_sample(c, now);
			/* What stays unacknowledged arrived before now: taking now
			 * errs toward a shorter hold, an earlier refresh. */
			c->t_unacked = seq_lt(rcv_nxt, c->rcv_nxt) ? now : 0;
		}
	}
	c->last_ack = rcv_nxt;
	c->last_wnd = field;
	return 1;
}

/* Segment bookkeeping every scheme shares: the largest segment seen (the
 * sender's MSS as it uses it) and retransmissions (data below the highest). */
static int
note_data(struct sgw_rwc *c, uint32_t seq, uint32_t len)
{
	int dup = 0;

	if (len == 0)
		return 0;
	if (len > c->mss)
		c->mss = len > UINT16_MAX ? UINT16_MAX : (uint16_t)len;
	if (seq_lt(seq, c->rcv_high)) {
		c->st.dup_segments++;
		dup = 1;
	}
	if (seq_gt(seq + len, c->rcv_high))
		c->rcv_high = seq + len;
	return dup;
}

/* ---------------------------------------------------------------- RWND */

/*
 * The window field for an ACK at rcv_nxt. The true right edge H = rcv_nxt +
 * free space: every byte below H fits in the relay, and H never moves left
 * (it is the consumed count plus the limit, in sequence space). The target
 * edge T is H, or the edge already advertised when H is less than one SWS
 * unit (min(MSS, limit / 2), RFC 9293 3.8.6.2.2) beyond it; the field is
 * (T - rcv_nxt) >> wscale, rounded DOWN so the edge never passes H. The only
 * way it moves left is that rounding (< 2^wscale bytes, RFC 7323 2.4); *held
 * says an SWS hold applied.
 */
static uint16_t
rwnd_field(struct sgw_rwc *c, const struct sgw_relay *r, uint32_t rcv_nxt, int *held)
{
	uint32_t fr = sgw_relay_free(r);
	uint32_t h = rcv_nxt + fr;
	uint32_t sws = r->limit / 2;
	uint32_t t = h;
	uint32_t w;

	if (c->mss < sws)
		sws = c->mss;
	*held = 0;
	if ((c->flags & RWC_F_ADV_VALID) && seq_lt(c->rcv_adv, h) && h - c->rcv_adv < sws) {
		t = c->rcv_adv;
		*held = 1;
	}
	if (seq_lt(t, rcv_nxt))
		t = rcv_nxt;
	w = (t - rcv_nxt) >> c->wscale;
	return w > UINT16_MAX ? UINT16_MAX : (uint16_t)w;
}

static int
rwnd_emit(struct sgw_rwc *c, uint64_t now, uint32_t rcv_nxt, uint16_t field, int held,
	  struct sgw_rwc_out *out)
{
	uint32_t edge = rcv_nxt + ((uint32_t)field << c->wscale);

	if (held)
		c->st.sws_holds++;
	if ((c->flags & RWC_F_ADV_VALID) && seq_lt(edge, c->rcv_adv))
		c->st.scale_retractions++;
	if (field == 0) {
		c->st.zero_windows++;
		c->flags |= RWC_F_FROZEN | RWC_F_ZERO_SENT;
		if (c->timer_at == SGW_RWC_NEVER)
			c->timer_at = now + c->freeze_check_ns;
	} else {
		c->flags &= ~RWC_F_ZERO_SENT;
	}
	return emit(c, now, rcv_nxt, field, out);
}

static int
rwnd_ack(struct sgw_rwc *c, const struct sgw_relay *r, uint64_t now, uint32_t rcv_nxt,
	 struct sgw_rwc_out *out)
{
	int held;
	uint16_t field;

	rcv_nxt = note_rcv_nxt(c, rcv_nxt);
	field = rwnd_field(c, r, rcv_nxt, &held);
	return rwnd_emit(c, now, rcv_nxt, field, held, out);
}

static void
rwnd_data(struct sgw_rwc *c, const struct sgw_relay *r, uint64_t now, uint32_t seq,
	  uint32_t len, uint64_t echo_ns)
{
	(void)r;
	(void)now;
	(void)echo_ns;
	note_data(c, seq, len);
	/* Seed 003: the freeze state ends when new data arrives. */
	if (len > 0 && (c->flags & RWC_F_FROZEN)) {
		c->flags &= ~RWC_F_FROZEN;
		c->timer_at = SGW_RWC_NEVER;
	}
}

static int
rwnd_drain(struct sgw_rwc *c, const struct sgw_relay *r, uint64_t now, uint32_t rcv_nxt,
	   struct sgw_rwc_out *out)
{
	int held;
	uint16_t field;

	/* Only a zero window needs an update: any other window still lets the
	 * sender send, and the ACKs for what it sends carry the new edge. */
	if ((c->flags & (RWC_F_UPD_DRAIN | RWC_F_ZERO_SENT)) !=
	    (RWC_F_UPD_DRAIN | RWC_F_ZERO_SENT))
		return 0;
	rcv_nxt = note_rcv_nxt(c, rcv_nxt);
	field = rwnd_field(c, r, rcv_nxt, &held);
	if (field == 0)
		return 0;
	c->st.drain_updates++;
	return rwnd_emit(c, now, rcv_nxt, field, held, out);
}

static int
rwnd_timer(struct sgw_rwc *c, const struct sgw_relay *r, uint64_t now, uint32_t rcv_nxt,
	   struct sgw_rwc_out *out)
{
	int held;
	uint16_t field;

	if (!(c->flags & RWC_F_FROZEN)) {
		c->timer_at = SGW_RWC_NEVER;
		return 0;
	}
	if (now < c->timer_at)
		return 0;
	/* Anti-freeze: check again one period from now whatever we find (an
	 * update can be lost; the state ends only when data arrives). */
	c->timer_at = now + c->freeze_check_ns;
	rcv_nxt = note_rcv_nxt(c, rcv_nxt);
	field = rwnd_field(c, r, rcv_nxt, &held);
	if (field == 0)
		return 0;
	c->st.anti_freeze++;
	return rwnd_emit(c, now, rcv_nxt, field, held, out);
}

/* -------------------------------------------------------- PETRA, ACKRES */

/* The static window: the edge is rcv_nxt + static_wnd, monotonic with
 * rcv_nxt, so it never retracts (static_wnd is a multiple of 2^wscale). */
static int
static_emit(struct sgw_rwc *c, uint64_t now, uint32_t rcv_nxt, struct sgw_rwc_out *out)
{
	uint32_t w = c->static_wnd >> c->wscale;

	return emit(c, now, rcv_nxt, w > UINT16_MAX ? UINT16_MAX : (uint16_t)w, out);
}

uint64_t
sgw_rwc_rto_estimate(const struct sgw_rwc *c)
{
	uint64_t rto = c->rto;
	int64_t v;

	for (unsigned int i = 0; i < c->rto_shift && rto < c->rto_max; i++)
		rto <<= 1;
	if (rto > c->rto_max)
		rto = c->rto_max;
	v = (int64_t)rto + c->rto_bias;
	return v < 0 ? 0 : (uint64_t)v;
}

/*
 * When to send the refreshing ACK: the sender restarted its RTO timer when
 * our last advancing ACK reached it, so it expires at t_last_adv + one-way
 * delay + RTO; a refresh sent before t_last_adv + RTO arrives in time (the
 * one-way delays cancel). Seed 003 sends it RTT/2 early for safety.
 */
static uint64_t
ackres_refresh_at(const struct sgw_rwc *c)
{
	uint64_t rto = sgw_rwc_rto_estimate(c);
	uint64_t margin = c->srtt != 0 ? c->srtt / 2 : c->rto / 4;
	uint64_t at = c->t_last_adv + rto;

	return at > margin ? at - margin : 0;
}

static int
petra_ack(struct sgw_rwc *c, const struct sgw_relay *r, uint64_t now, uint32_t rcv_nxt,
	  struct sgw_rwc_out *out)
{
	rcv_nxt = note_rcv_nxt(c, rcv_nxt);
	if (sgw_relay_used(r) > c->b_th) {
		c->st.withheld++;
		if (!(c->flags & RWC_F_WITHHOLD)) {
			c->flags |= RWC_F_WITHHOLD;
			if (c->scheme == SGW_RWC_ACKRES) {
				uint64_t at = ackres_refresh_at(c);

				c->timer_at = at > now ? at : now;
			}
		}
		return 0;
	}
	c->flags &= ~RWC_F_WITHHOLD;
	c->timer_at = SGW_RWC_NEVER;
	return static_emit(c, now, rcv_nxt, out);
}

static void
petra_data(struct sgw_rwc *c, const struct sgw_relay *r, uint64_t now, uint32_t seq,
	   uint32_t len, uint64_t echo_ns)
{
	(void)r;
	(void)now;
	(void)echo_ns;
	note_data(c, seq, len);
}

static int
petra_drain(struct sgw_rwc *c, const struct sgw_relay *r, uint64_t now, uint32_t rcv_nxt,
	    struct sgw_rwc_out *out)
{
	/* The flow is restored as soon as the occupancy is back at b_th. */
	if (!(c->flags & RWC_F_WITHHOLD) || sgw_relay_used(r) > c->b_th)
		return 0;
	c->flags &= ~RWC_F_WITHHOLD;
	c->timer_at = SGW_RWC_NEVER;
	rcv_nxt = note_rcv_nxt(c, rcv_nxt);
	return static_emit(c, now, rcv_nxt, out);
}

static int
petra_timer(struct sgw_rwc *c, const struct sgw_relay *r, uint64_t now, uint32_t rcv_nxt,
	    struct sgw_rwc_out *out)
{
	(void)r;
	(void)now;
	(void)rcv_nxt;
	(void)out;
	c->timer_at = SGW_RWC_NEVER;
	return 0;
}

/*
 * ACKRES estimator of the sender's RTO (RFC 6298 on what the relay sees).
 * The sender times a segment from sending it to the ACK covering it; that
 * is the path round trip plus the time the relay held the ACK back, and the
 * relay sees both:
 *   path P: time from sending an ACK to the arrival of a segment echoing its
 *           timestamp (RFC 7323 TSecr; the caller passes the ACK's send
 *           time), from in-order new data only (a retransmission or a probe
 *           sent by a timer echoes an old ACK); the latest value is kept;
 *   hold H: when an ACK advances the ack number, the time since the oldest
 *           byte it newly covers arrived.
 * Each advancing ACK gives a sample R = P + H (conf ackres_hold) or R = P
 * (default), at most one per SRTT as a classic sender times one segment per
 * round trip. Whether the sender's own samples include our hold depends on
 * which segment it happened to time (or, with timestamps, on every ACK):
 * R = P errs toward early refreshes (more ACKs, the seed's instability when
 * far off), R = P + H toward late ones (PETRA's timeouts). Then
 *   first:  SRTT = R, RTTVAR = R / 2
 *   next:   RTTVAR = 3/4 RTTVAR + 1/4 |SRTT - R|, SRTT = 7/8 SRTT + 1/8 R
 *   RTO  =  clamp(SRTT + max(G, 4 RTTVAR), rto_min, rto_max)
 * A retransmission seen while withholding means the sender timed out: its
 * RTO doubled (backoff shift + 1, cleared by the next sample).
 */
static int
ackres_sample(struct sgw_rwc *c, uint64_t now)
{
	uint64_t rs, k;

	if (c->rtt_path == 0)
		return 0;
	if ((c->flags & RWC_F_HOLD) && (c->t_unacked == 0 || now < c->t_unacked))
		return 0;
	if (c->srtt != 0 && now - c->t_sample < c->srtt)
		return 0;
	rs = c->rtt_path;
	if (c->flags & RWC_F_HOLD)
		rs += now - c->t_unacked;
	if (c->srtt == 0) {
		c->srtt = rs;
		c->rttvar = rs / 2;
	} else {
		uint64_t d = c->srtt > rs ? c->srtt - rs : rs - c->srtt;

		c->rttvar = (3 * c->rttvar + d) / 4;
		c->srtt = (7 * c->srtt + rs) / 8;
	}
	k = 4 * c->rttvar;
	c->rto = c->srtt + (k > RTT_G_NS ? k : RTT_G_NS);
	if (c->rto < c->rto_min)
		c->rto = c->rto_min;
	if (c->rto > c->rto_max)
		c->rto = c->rto_max;
	c->rto_shift = 0;
	c->t_sample = now;
	c->st.rtt_samples++;
	return 1;
}

static void
ackres_data(struct sgw_rwc *c, const struct sgw_relay *r, uint64_t now, uint32_t seq,
	    uint32_t len, uint64_t echo_ns)
{
	uint32_t high = c->rcv_high;
	int dup = note_data(c, seq, len);

	(void)r;
	if (dup && (c->flags & RWC_F_WITHHOLD) && c->rto_shift < RTO_SHIFT_MAX)
		c->rto_shift++;
	if (dup || len == 0 || seq != high)
		return;
	/* The oldest byte not yet acknowledged arrives now. */
	if (seq == c->last_ack)
		c->t_unacked = now;
	if (echo_ns == 0 || echo_ns > now)
		return;
	c->rtt_path = now - echo_ns;
	if (c->flags & RWC_F_HOLD)
		return;  /* sampled when the ACK goes out */
	/* R = P: sampled now, also while withholding (these segments were
	 * released by ACKs sent before); a planned refresh follows. */
	if (ackres_sample(c, now) && (c->flags & RWC_F_WITHHOLD)) {
		uint64_t at = ackres_refresh_at(c);

		c->timer_at = at > now ? at : now;
	}
}

static int
ackres_timer(struct sgw_rwc *c, const struct sgw_relay *r, uint64_t now, uint32_t rcv_nxt,
	     struct sgw_rwc_out *out)
{
	uint32_t step;
	uint32_t ack;
	uint64_t at;

	(void)r;
	if (!(c->flags & RWC_F_WITHHOLD)) {
		c->timer_at = SGW_RWC_NEVER;
		return 0;
	}
	if (now < c->timer_at)
		return 0;
	rcv_nxt = note_rcv_nxt(c, rcv_nxt);
	/* One segment past the last ACK ("ACK x + 1"): enough to restart the
	 * sender's timer, as little as possible to release. */
	step = c->mss;
	ack = rcv_nxt - c->last_ack > step ? c->last_ack + step : rcv_nxt;
	if (!seq_gt(ack, c->last_ack)) {
		/* Nothing new to acknowledge: what the sender has outstanding is
		 * still on its way; look again in a quarter of its RTO. */
		c->timer_at = now + sgw_rwc_rto_estimate(c) / 4 + 1;
		return 0;
	}
	c->st.rto_refreshes++;
	static_emit(c, now, ack, out);
	/* static_emit recorded rcv_nxt = ack as last_ack; c->rcv_nxt is kept. */
	at = ackres_refresh_at(c);
	c->timer_at = at > now ? at : now + 1;
	return 1;
}

static const struct sgw_rwc_ops rwc_ops[SGW_RWC__COUNT] = {
	[SGW_RWC_RWND] = {
		.name = "rwnd",
		.ack = rwnd_ack,
		.data = rwnd_data,
		.drain = rwnd_drain,
		.timer = rwnd_timer,
	},
	[SGW_RWC_PETRA] = {
		.name = "petra",
		.ack = petra_ack,
		.data = petra_data,
		.drain = petra_drain,
		.timer = petra_timer,
	},
	[SGW_RWC_ACKRES] = {
		.name = "ackres",
		.ack = petra_ack,
		.data = ackres_data,
		.drain = petra_drain,
		.timer = ackres_timer,
	},
};

int
sgw_rwc_init(struct sgw_rwc *c, const struct sgw_rwc_conf *conf, const struct sgw_relay *r,
	     uint32_t rcv_nxt, uint64_t now)
{
	uint32_t unit;
	uint32_t sw;

	if (c == NULL || conf == NULL || r == NULL || sgw_rwc_conf_check(conf) != NULL)
		return -EINVAL;
	unit = 1u << conf->wscale;
	/* The whole buffer must be expressible in the 16-bit field. */
	if ((uint64_t)r->limit > ((uint64_t)UINT16_MAX << conf->wscale))
		return -EINVAL;
	sw = conf->static_wnd != 0 ? conf->static_wnd : r->limit;
	sw &= ~(unit - 1);
	if (conf->scheme != SGW_RWC_RWND && (conf->b_th >= r->limit || sw == 0 ||
					     (uint64_t)sw > ((uint64_t)UINT16_MAX << conf->wscale)))
		return -EINVAL;
	memset(c, 0, sizeof(*c));
	c->ops = &rwc_ops[conf->scheme];
	c->scheme = conf->scheme;
	c->timer_at = SGW_RWC_NEVER;
	c->rcv_nxt = rcv_nxt;
	c->rcv_adv = rcv_nxt;
	c->last_ack = rcv_nxt;
	c->rcv_high = rcv_nxt;
	c->static_wnd = sw;
	c->b_th = conf->b_th;
	c->mss = conf->mss;
	c->wscale = conf->wscale;
	c->flags = (conf->update_on_drain ? RWC_F_UPD_DRAIN : 0) |
		   (conf->ackres_hold ? RWC_F_HOLD : 0);
	c->freeze_check_ns = conf->freeze_check_ns;
	c->rto_min = conf->rto_min_ns;
	c->rto_max = conf->rto_max_ns;
	c->rto = conf->rto_init_ns;
	c->rto_bias = conf->rto_bias_ns;
	c->t_last_adv = now;
	return 0;
}
