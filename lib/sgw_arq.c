/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * satlink session machine (contract: sgw_arq.h; wire format, state machines
 * and design notes: docs/satlink.md).
 *
 * One struct per hub-terminal session, one allocation made at create:
 *
 *   sender    ring of S = pow2 >= tx_window slots indexed by seq, holding
 *             (packet handle, offset, len) of every frame in the window, and
 *             one acknowledged-bit per seq (bitmap words of a status are
 *             compared a word at a time); three intrusive lists through the
 *             slots: INFLIGHT (sent, awaiting a status, in transmission
 *             order), LOST (waiting for its first retransmitted copy) and
 *             SPACED (waiting for its next copy, in due-time order); a FIFO
 *             of packets not yet in the window (the send queue).
 *   receiver  ring of R = pow2 >= rx_window + max_frags slots indexed by
 *             seq (handle, len, channel, flags), plus one bit per slot from
 *             which the status bitmap is cut.
 *   datagrams table of D = pow2 >= max(dgram_slots, max_frags) slots indexed
 *             by datagram seq.
 *
 * Sender invariants (serial arithmetic, 32-bit): snd_rel <= snd_una <=
 * snd_nxt, snd_nxt - snd_rel <= S; [snd_rel, snd_una) is acknowledged and
 * waits for its RELEASE (of the packet, at the LAST fragment); snd_una is the
 * first frame not acknowledged. Receiver: rcv_dlv <= rcv_scan <= rcv_nxt <=
 * rcv_high; every frame below rcv_nxt is received; [rcv_dlv, rcv_nxt) is
 * received but not delivered (a packet whose LAST is missing, or carried
 * work); rcv_high is one past the highest received.
 *
 * Every public call ends in pump(), which does what is due in a fixed order
 * (events, a reset's releases, HELLO/HELLO_ACK, link-down check, deliveries,
 * datagram expiry, sender releases, timeouts, status, retransmissions, new
 * frames, keepalive) and stops where the action array fills.
 *
 * Loss detection is by transmission order: each transmission of a reliable
 * frame gets the next 32-bit order number; when a status acknowledges a frame
 * that was sent only once, every frame still INFLIGHT whose last transmission
 * came before it is lost (on a FIFO link it should have arrived first). A
 * retransmitted frame is thus found lost again only when something sent after
 * its last copy got through: never before a round trip. Frames nothing later
 * has overtaken (tail loss, outages) are found by the retransmission timer.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sgw_arq.h"
#include "sgw_seq.h"

#define NIL UINT32_MAX
#define EV_RING 16u
#define RTT_GRANULARITY_NS 1000000u  /* G of RFC 6298: 1 ms */
#define RTO_HARD_MAX_NS 60000000000ull /* an RTO from the RTT is never longer */
#define RTO_SHIFT_MAX 16u

enum tx_state {
	TX_FREE = 0,
	TX_INFLIGHT,
	TX_LOST,
	TX_SPACED,
	TX_ACKED,
};

enum sess_state {
	SESS_CONNECTING = 0,
	SESS_UP,
	SESS_CLOSED,
};

enum sweep_phase {
	SW_NONE = 0,
	SW_SENDQ,
	SW_TX,
	SW_RX,
	SW_DGRAM,
};

struct tx_slot {
	uint64_t handle;     /* the packet */
	uint64_t t;          /* INFLIGHT/LOST/ACKED: last transmission; SPACED: next copy due */
	uint32_t seq;
	uint32_t offset;
	uint32_t next;       /* list links (slot indices) */
	uint32_t prev;
	uint32_t order;      /* transmission order of the last transmission */
	uint16_t len;
	uint16_t channel;
	uint8_t flags;       /* SGW_SL_F_FIRST / LAST */
	uint8_t state;       /* enum tx_state */
	uint8_t tx_count;    /* transmissions so far, saturating */
	uint8_t copies_left; /* retransmitted copies still to send */
	uint8_t copy;        /* copies sent since it was last found lost */
};

struct sq_ent {
	uint64_t handle;
	uint32_t len;
	uint16_t channel;
};

struct rx_slot {
	uint64_t handle;
	uint16_t len;
	uint16_t channel;
	uint8_t flags;
	uint8_t present;
};

struct dg_slot {
	uint64_t handle;
	uint64_t t;          /* arrival */
	uint32_t seq;
	uint16_t len;
	uint16_t channel;
	uint8_t flags;
	uint8_t used;
};

struct list {
	uint32_t head;
	uint32_t tail;
};

/* Per-slot memory, as docs/satlink.md counts it. */
_Static_assert(sizeof(struct tx_slot) == 48, "48 bytes per window frame");
_Static_assert(sizeof(struct sq_ent) == 16, "16 bytes per queued packet");
_Static_assert(sizeof(struct rx_slot) == 16, "16 bytes per receive slot");
_Static_assert(sizeof(struct dg_slot) == 32, "32 bytes per datagram slot");
_Static_assert(sizeof(struct sgw_arq_act) == 32, "32-byte actions");

struct sgw_arq {
	struct sgw_arq_conf c;
	uint64_t now;
	size_t footprint;

	/* session */
	uint8_t state;            /* enum sess_state */
	uint8_t link_up;
	uint8_t ack_hello;        /* a HELLO_ACK is owed */
	uint8_t force_status;     /* a status now (confirms the session to the peer) */
	uint8_t pending;          /* the last call ran out of action room */
	uint8_t sweep;            /* enum sweep_phase; != SW_NONE: releasing all */
	uint8_t drain;            /* the sweep is a drain: close when done */
	uint32_t sweep_pos;
	uint32_t peer_epoch;
	uint32_t peer_isn;
	uint32_t peer_rx_window;
	uint32_t wnd;             /* send window in use */
	uint64_t keepalive_ns;    /* in use: min(conf, what the peer asked for) */
	uint64_t last_rx_ns;      /* last valid frame heard */
	uint64_t last_tx_ns;      /* last frame sent */
	uint64_t link_up_ns;      /* when the link was last (re)established */
	uint64_t hello_next_ns;
	uint8_t ev[EV_RING];
	uint32_t ev_head;
	uint32_t ev_n;

	/* sender */
	struct tx_slot *tx;
	uint32_t tx_mask;
	uint64_t *tx_bm;          /* 1 bit per seq (mod tx_bm_bits): acknowledged */
	uint32_t tx_bm_bits;      /* max(S, 64) */
	uint32_t snd_rel;
	uint32_t snd_una;
	uint32_t snd_nxt;
	uint32_t tx_order;
	uint32_t rack_order;      /* latest order known delivered (first transmissions) */
	uint8_t rack_valid;
	uint8_t line_busy;        /* sgw_arq_line_busy */
	uint8_t rtt_seq_valid;
	uint8_t have_rtt;
	uint32_t rtt_seq;         /* last seq sampled */
	uint64_t misfit_ns;       /* since when statuses fit no [snd_una, snd_nxt], or NEVER */
	uint64_t srtt;
	uint64_t rttvar;
	uint32_t rto_shift;
	uint64_t rto_shift_ns;
	struct list inflight;
	struct list lost;
	struct list spaced;
	struct sq_ent *sq;
	uint32_t sq_head;
	uint32_t sq_n;
	uint32_t sq_off;          /* bytes of the head packet already in the window */
	uint16_t sq_cut;          /* fragment size of the head packet (chosen at its start) */
	uint16_t frag_now;        /* fragment size in use: c.frag_size or the adapted one */
	struct sgw_fsize fs;      /* frag_adapt */
	uint32_t fs_from;         /* frag_adapt: frames from this seq on are sampled */
	uint32_t dg_seq;          /* next datagram seq to send */

	/* receiver */
	struct rx_slot *rx;
	uint64_t *rx_bm;
	uint32_t rx_mask;
	uint32_t rx_bm_words;
	uint32_t rcv_dlv;
	uint32_t rcv_scan;
	uint32_t rcv_drop;        /* frames below this (and >= rcv_dlv) are released */
	uint32_t rcv_nxt;
	uint32_t rcv_high;
	uint32_t rx_held;
	uint32_t echo_seq;
	uint64_t echo_ns;
	uint8_t echo_valid;
	uint8_t rx_dirty;         /* DATA arrived since the last status */
	uint64_t st_next_ns;      /* next status, or SGW_ARQ_NEVER */
	uint64_t last_status_ns;

	/* datagram receiver */
	struct dg_slot *dg;
	uint32_t dg_mask;
	uint32_t dg_next;         /* smallest datagram seq still deliverable */
	uint32_t dg_held;
	uint64_t dg_check_ns;     /* next expiry scan */

	struct sgw_arq_stats st;
};

/* ------------------------------------------------------------ helpers */

static inline uint64_t
min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static inline uint64_t
max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

static inline uint32_t
room(const struct sgw_arq_out *o)
{
	return o->n < o->cap ? o->cap - o->n : 0;
}

/* The next free action, or NULL (and the call is marked as carrying work). */
static inline struct sgw_arq_act *
out_push(struct sgw_arq *a, struct sgw_arq_out *o, uint8_t type)
{
	struct sgw_arq_act *x;

	if (o->n >= o->cap) {
		a->pending = 1;
		return NULL;
	}
	x = &o->act[o->n++];
	memset(x, 0, sizeof(*x));
	x->type = type;
	return x;
}

/* The array must be able to hold the largest packet's DELIVER run. */
static inline bool
out_ok(const struct sgw_arq *a, const struct sgw_arq_out *o)
{
	return o != NULL && o->act != NULL && o->n <= o->cap &&
	       o->cap >= SGW_ARQ_MIN_ROOM(a->c.max_frags);
}

static void
touch_time(struct sgw_arq *a, uint64_t now)
{
	if (now > a->now)
		a->now = now;
}

static void
event_push(struct sgw_arq *a, uint8_t ev)
{
	if (a->ev_n == EV_RING) {
		a->st.events_dropped++;
		return;
	}
	a->ev[(a->ev_head + a->ev_n) % EV_RING] = ev;
	a->ev_n++;
}

/* ------------------------------------------------------- configuration */

void
sgw_arq_conf_default(struct sgw_arq_conf *conf)
{
	*conf = (struct sgw_arq_conf){
		.terminal_id = 0,
		.local_epoch = 1,
		.isn = 0,
		.tx_window = 1024,
		.rx_window = 1024,
		.sendq_pkts = 256,
		.frag_size = 1400,
		.max_frags = 64,
		.frag_min = 256,
		.frame_overhead = 36,
		.retx_copies = 2,
		.retx_spacing_ns = 5000000,
		.status_interval_ns = 20000000,
		.status_min_gap_ns = 5000000,
		.rtt_init_ns = 600000000,
		.rtt_fixed_ns = 0,
		.rto_min_ns = 200000000,
		.rto_max_ns = 10000000000ull,
		.keepalive_ns = 500000000,
		.link_down_ns = 2000000000,
		.hello_interval_ns = 1000000000,
		.dgram_slots = 256,
		.dgram_timeout_ns = 200000000,
	};
}

const char *
sgw_arq_conf_check(const struct sgw_arq_conf *c)
{
	if (c == NULL)
		return "conf";
	if (c->local_epoch == 0)
		return "local_epoch";
	if (c->tx_window == 0 || c->tx_window > SGW_ARQ_MAX_WINDOW)
		return "tx_window";
	if (c->rx_window == 0 || c->rx_window > SGW_ARQ_MAX_WINDOW)
		return "rx_window";
	if (c->sendq_pkts == 0 || c->sendq_pkts > SGW_ARQ_MAX_SENDQ)
		return "sendq_pkts";
	if (c->frag_size == 0)
		return "frag_size";
	if (c->max_frags == 0 || c->max_frags > SGW_ARQ_MAX_FRAGS)
		return "max_frags";
	if (c->retx_copies == 0 || c->retx_copies > SGW_ARQ_MAX_COPIES)
		return "retx_copies";
	if (c->retx_copies_idle > 1)
		return "retx_copies_idle";
	if (c->frag_adapt > 1)
		return "frag_adapt";
	if (c->frag_adapt && (c->frag_min < 64 || c->frag_min > c->frag_size))
		return "frag_min";
	/* adapting: a frag_size packet probed (frames of half the smallest size)
	 * must fit max_frags; sgw_arq_send bounds packets by frag_min frames */
	if (c->frag_adapt &&
	    c->max_frags < 2u * c->frag_size / c->frag_min + 2u)
		return "max_frags";
	if (c->status_interval_ns == 0)
		return "status_interval_ns";
	if (c->status_min_gap_ns > c->status_interval_ns)
		return "status_min_gap_ns";
	if (c->rtt_init_ns == 0)
		return "rtt_init_ns";
	if (c->rto_min_ns == 0 || c->rto_max_ns < c->rto_min_ns ||
	    c->rto_min_ns > RTO_HARD_MAX_NS)
		return "rto_min_ns";
	if (c->keepalive_ns == 0)
		return "keepalive_ns";
	if (c->link_down_ns <= c->keepalive_ns)
		return "link_down_ns";
	if (c->hello_interval_ns == 0)
		return "hello_interval_ns";
	if (c->dgram_slots == 0 || c->dgram_slots > SGW_ARQ_MAX_DGRAM_SLOTS)
		return "dgram_slots";
	if (c->dgram_timeout_ns == 0)
		return "dgram_timeout_ns";
	if (c->wire_wait_ns > 60ull * 1000000000ull)
		return "wire_wait_ns";
	return NULL;
}

struct layout {
	uint32_t s, sb, q, r, d;
	size_t off_tx, off_txbm, off_sq, off_rx, off_bm, off_dg, total;
};

static size_t
align_up(size_t v)
{
	return (v + 63) & ~(size_t)63;
}

static void
layout_of(const struct sgw_arq_conf *c, struct layout *l)
{
	l->s = sgw_pow2_at_least(c->tx_window);
	l->sb = l->s < 64 ? 64 : l->s;
	l->q = c->sendq_pkts;
	l->r = sgw_pow2_at_least(c->rx_window + c->max_frags);
	if (l->r < 64)
		l->r = 64;
	l->d = sgw_pow2_at_least(c->dgram_slots > c->max_frags ? c->dgram_slots : c->max_frags);
	l->off_tx = align_up(sizeof(struct sgw_arq));
	l->off_txbm = align_up(l->off_tx + (size_t)l->s * sizeof(struct tx_slot));
	l->off_sq = align_up(l->off_txbm + (size_t)(l->sb / 64) * sizeof(uint64_t));
	l->off_rx = align_up(l->off_sq + (size_t)l->q * sizeof(struct sq_ent));
	l->off_bm = align_up(l->off_rx + (size_t)l->r * sizeof(struct rx_slot));
	l->off_dg = align_up(l->off_bm + (size_t)(l->r / 64) * sizeof(uint64_t));
	l->total = align_up(l->off_dg + (size_t)l->d * sizeof(struct dg_slot));
}

size_t
sgw_arq_footprint(const struct sgw_arq_conf *conf)
{
	struct layout l;

	if (sgw_arq_conf_check(conf) != NULL)
		return 0;
	layout_of(conf, &l);
	return l.total;
}

/* ------------------------------------------------ sequence space (re)init */

static void
list_init(struct list *l)
{
	l->head = NIL;
	l->tail = NIL;
}

static void
tx_space_init(struct sgw_arq *a)
{
	a->snd_rel = a->c.isn;
	a->snd_una = a->c.isn;
	a->snd_nxt = a->c.isn;
	a->dg_seq = a->c.isn;
	a->rack_valid = 0;
	a->rtt_seq_valid = 0;
	a->rto_shift = 0;
	a->misfit_ns = SGW_ARQ_NEVER;
	list_init(&a->inflight);
	list_init(&a->lost);
	list_init(&a->spaced);
	a->sq_head = 0;
	a->sq_n = 0;
	a->sq_off = 0;
	a->fs_from = a->c.isn;
}

static void
rx_space_init(struct sgw_arq *a, uint32_t isn)
{
	a->rcv_dlv = isn;
	a->rcv_scan = isn;
	a->rcv_drop = isn;
	a->rcv_nxt = isn;
	a->rcv_high = isn;
	a->rx_held = 0;
	a->echo_valid = 0;
	a->rx_dirty = 0;
	a->st_next_ns = SGW_ARQ_NEVER;
	a->dg_next = isn;
	a->dg_held = 0;
	a->dg_check_ns = SGW_ARQ_NEVER;
}

struct sgw_arq *
sgw_arq_create(const struct sgw_arq_conf *conf, uint64_t now_ns)
{
	struct sgw_arq *a;
	struct layout l;
	uint8_t *mem;

	if (sgw_arq_conf_check(conf) != NULL)
		return NULL;
	layout_of(conf, &l);
	mem = calloc(1, l.total);
	if (mem == NULL)
		return NULL;
	a = (struct sgw_arq *)mem;
	a->c = *conf;
	a->footprint = l.total;
	a->now = now_ns;
	a->tx = (struct tx_slot *)(mem + l.off_tx);
	a->tx_mask = l.s - 1;
	a->tx_bm = (uint64_t *)(mem + l.off_txbm);
	a->tx_bm_bits = l.sb;
	a->sq = (struct sq_ent *)(mem + l.off_sq);
	a->rx = (struct rx_slot *)(mem + l.off_rx);
	a->rx_mask = l.r - 1;
	a->rx_bm = (uint64_t *)(mem + l.off_bm);
	a->rx_bm_words = l.r / 64;
	a->dg = (struct dg_slot *)(mem + l.off_dg);
	a->dg_mask = l.d - 1;

	a->frag_now = conf->frag_size;
	if (conf->frag_adapt) {
		struct sgw_fsize_conf fc;

		sgw_fsize_conf_default(&fc, conf->frag_size, conf->frame_overhead);
		fc.min = conf->frag_min;
		sgw_fsize_init(&a->fs, &fc);
	}
	a->state = SESS_CONNECTING;
	a->keepalive_ns = conf->keepalive_ns;
	a->hello_next_ns = now_ns;
	a->last_tx_ns = now_ns;
	a->last_rx_ns = now_ns;
	a->last_status_ns = 0;
	if (conf->rtt_fixed_ns) {
		a->srtt = conf->rtt_fixed_ns;
		a->rttvar = 0;
	} else {
		a->srtt = conf->rtt_init_ns;
		a->rttvar = conf->rtt_init_ns / 2;
	}
	tx_space_init(a);
	rx_space_init(a, 0);
	return a;
}

void
sgw_arq_destroy(struct sgw_arq *arq)
{
	free(arq);
}

/* ---------------------------------------------------------------- lists */

static struct list *
list_of(struct sgw_arq *a, uint8_t state)
{
	switch (state) {
	case TX_INFLIGHT:
		return &a->inflight;
	case TX_LOST:
		return &a->lost;
	case TX_SPACED:
		return &a->spaced;
	default:
		return NULL;
	}
}

static void
list_append(struct sgw_arq *a, struct list *l, uint32_t i)
{
	struct tx_slot *s = &a->tx[i];

	s->next = NIL;
	s->prev = l->tail;
	if (l->tail == NIL)
		l->head = i;
	else
		a->tx[l->tail].next = i;
	l->tail = i;
}

static void
list_unlink(struct sgw_arq *a, struct list *l, uint32_t i)
{
	struct tx_slot *s = &a->tx[i];

	if (s->prev == NIL)
		l->head = s->next;
	else
		a->tx[s->prev].next = s->next;
	if (s->next == NIL)
		l->tail = s->prev;
	else
		a->tx[s->next].prev = s->prev;
	s->next = NIL;
	s->prev = NIL;
}

/* Move slot i to state st (and its list). */
static void
tx_set_state(struct sgw_arq *a, uint32_t i, uint8_t st)
{
	struct tx_slot *s = &a->tx[i];
	struct list *l = list_of(a, s->state);

	if (l != NULL)
		list_unlink(a, l, i);
	s->state = st;
	l = list_of(a, st);
	if (l != NULL)
		list_append(a, l, i);
}

/* The acknowledged-bit of seq in the sender's bitmap. */
static inline void
tx_bit(struct sgw_arq *a, uint32_t seq, bool on)
{
	uint32_t i = seq & (a->tx_bm_bits - 1);

	if (on)
		a->tx_bm[i >> 6] |= UINT64_C(1) << (i & 63);
	else
		a->tx_bm[i >> 6] &= ~(UINT64_C(1) << (i & 63));
}

/* 32 acknowledged-bits from seq on (bit b: seq + b). */
static inline uint32_t
tx_bits32(const struct sgw_arq *a, uint32_t seq)
{
	uint32_t pos = seq & (a->tx_bm_bits - 1);
	uint32_t nw = a->tx_bm_bits / 64;
	uint32_t w = pos >> 6, sh = pos & 63;
	uint64_t v = a->tx_bm[w] >> sh;

	if (sh > 32)
		v |= a->tx_bm[(w + 1) & (nw - 1)] << (64 - sh);
	return (uint32_t)v;
}

/* ----------------------------------------------------------------- RTT */

static uint64_t
rto_base(const struct sgw_arq *a)
{
	uint64_t var = a->rttvar * 4;
	uint64_t rto;

	if (var < RTT_GRANULARITY_NS)
		var = RTT_GRANULARITY_NS;
	/* The receiver holds a status up to one status interval. */
	rto = sgw_add_sat(sgw_add_sat(a->srtt, var), a->c.status_interval_ns);
	if (rto < a->c.rto_min_ns)
		rto = a->c.rto_min_ns;
	if (rto > RTO_HARD_MAX_NS)
		rto = RTO_HARD_MAX_NS;
	return rto;
}

/*
 * The RTO with its backoff. rto_max_ns caps the backoff, never the RTO the
 * RTT gives: a ceiling below what the line measures would make every
 * timer-found repair spurious, so there the backoff is simply off. After an
 * outage that nothing new follows, this timer is what starts the repair.
 */
static uint64_t
rto_cur(const struct sgw_arq *a)
{
	uint64_t rto = rto_base(a);
	uint64_t top = rto > a->c.rto_max_ns ? rto : a->c.rto_max_ns;
	uint32_t sh = a->rto_shift;

	while (sh-- > 0 && rto < top)
		rto <<= 1;
	return rto > top ? top : rto;
}

static void
rtt_sample(struct sgw_arq *a, uint64_t r)
{
	uint64_t d;

	a->st.rtt_samples++;
	/* Karn: the backed-off timer stays until a frame sent once is timed */
	a->rto_shift = 0;
	if (a->c.rtt_fixed_ns)
		return;
	if (!a->have_rtt) {
		a->srtt = r;
		a->rttvar = r / 2;
		a->have_rtt = 1;
		return;
	}
	d = a->srtt > r ? a->srtt - r : r - a->srtt;
	a->rttvar = (3 * a->rttvar + d) / 4;
	a->srtt = (7 * a->srtt + r) / 8;
}

/* ------------------------------------------------------------- session */

/* The link is (again) up: tell the peer at once what we have received. */
static void
sess_link_up(struct sgw_arq *a)
{
	a->link_up = 1;
	a->link_up_ns = a->now;
	a->rto_shift = 0;
	a->force_status = 1;
	a->st.link_ups++;
	event_push(a, SGW_ARQ_EV_LINK_UP);
}

static void
sess_go_up(struct sgw_arq *a)
{
	uint32_t w = a->c.tx_window;

	if (a->peer_rx_window < w)
		w = a->peer_rx_window;
	a->wnd = w;
	a->state = SESS_UP;
	a->last_rx_ns = a->now;
	sess_link_up(a);
}

/* A valid frame of the current session was heard. */
static void
sess_heard(struct sgw_arq *a)
{
	a->last_rx_ns = a->now;
	if (a->state == SESS_UP && !a->link_up)
		sess_link_up(a);
}

/*
 * The known peer was heard within link_down: a frame of the session, or a
 * HELLO it sent us. While it is, nothing but its own frames can change the
 * session: a HELLO from another epoch is refused, and a frame of its epoch
 * that denies knowing ours is ignored. This is what keeps a single forged
 * frame (no keys: the link is unauthenticated) from ending a live session;
 * a real restart is seen once the old incarnation has been silent that long.
 */
static bool
peer_live(const struct sgw_arq *a)
{
	return a->peer_epoch != 0 && a->now - a->last_rx_ns < a->c.link_down_ns;
}

static void
dg_free(struct sgw_arq *a, struct dg_slot *d)
{
	d->used = 0;
	a->dg_held--;
}

/* Start releasing everything held; sequence spaces restart when done. */
static void
sweep_start(struct sgw_arq *a, bool drain)
{
	if (a->sweep == SW_NONE) {
		a->sweep = SW_SENDQ;
		a->sweep_pos = 0;
	}
	if (drain)
		a->drain = 1;
}

/*
 * Nothing of the session with the known peer survives: everything held is
 * released, both sequence spaces start over (ours at our ISN, the peer's at
 * the ISN of the HELLO it is learned from next), CONNECTING. PEER_RESTART
 * tells the upper layer that what it handed over is gone.
 */
static void
sess_reset(struct sgw_arq *a)
{
	event_push(a, SGW_ARQ_EV_PEER_RESTART);
	a->state = SESS_CONNECTING;
	a->link_up = 0;
	a->force_status = 0;
	a->hello_next_ns = a->now;
	sweep_start(a, false);
}

/*
 * The known peer, silent for link_down, shows that it no longer has a session
 * with us: a frame of its epoch names another epoch of ours, or (a HELLO
 * while we are up) none. Its state and ours can no longer match, so both go
 * back to first contact: we release everything and forget its epoch, our
 * HELLOs name no peer, and its next HELLO is learned afresh; the peer, seeing
 * a HELLO of our epoch naming none of its own, does the same.
 */
static void
sess_forget(struct sgw_arq *a)
{
	a->st.peer_lost++;
	a->peer_epoch = 0;
	a->ack_hello = 0;
	sess_reset(a);
}

/* Sweep step; returns true when done. */
static bool
sweep_run(struct sgw_arq *a, struct sgw_arq_out *o)
{
	struct sgw_arq_act *x;

	if (a->sweep == SW_SENDQ) {
		while (a->sq_n > 0) {
			struct sq_ent *q = &a->sq[a->sq_head];

			x = out_push(a, o, SGW_ARQ_ACT_RELEASE);
			if (x == NULL)
				return false;
			x->handle = q->handle;
			a->sq_head = (a->sq_head + 1) % a->c.sendq_pkts;
			a->sq_n--;
		}
		a->sq_off = 0;
		a->sweep = SW_TX;
	}
	if (a->sweep == SW_TX) {
		while (a->snd_rel != a->snd_nxt) {
			struct tx_slot *s = &a->tx[a->snd_rel & a->tx_mask];

			if (s->flags & SGW_SL_F_LAST) {
				x = out_push(a, o, SGW_ARQ_ACT_RELEASE);
				if (x == NULL)
					return false;
				x->handle = s->handle;
			}
			s->state = TX_FREE;
			tx_bit(a, a->snd_rel, false);
			a->snd_rel++;
		}
		a->sweep = SW_RX;
	}
	if (a->sweep == SW_RX) {
		while (a->rcv_dlv != a->rcv_high) {
			uint32_t i = a->rcv_dlv & a->rx_mask;
			struct rx_slot *r = &a->rx[i];

			if (r->present) {
				x = out_push(a, o, SGW_ARQ_ACT_RELEASE);
				if (x == NULL)
					return false;
				x->handle = r->handle;
				r->present = 0;
				a->rx_bm[i >> 6] &= ~(UINT64_C(1) << (i & 63));
				a->rx_held--;
			}
			a->rcv_dlv++;
		}
		a->sweep = SW_DGRAM;
		a->sweep_pos = 0;
	}
	if (a->sweep == SW_DGRAM) {
		while (a->sweep_pos <= a->dg_mask) {
			struct dg_slot *d = &a->dg[a->sweep_pos];

			if (d->used) {
				x = out_push(a, o, SGW_ARQ_ACT_RELEASE);
				if (x == NULL)
					return false;
				x->handle = d->handle;
				dg_free(a, d);
			}
			a->sweep_pos++;
		}
	}
	a->sweep = SW_NONE;
	tx_space_init(a);
	rx_space_init(a, a->peer_isn);
	if (a->drain)
		a->state = SESS_CLOSED;
	return true;
}

/* ------------------------------------------------------------- receiver */

static inline void
rx_bit(struct sgw_arq *a, uint32_t seq, bool on)
{
	uint32_t i = seq & a->rx_mask;

	if (on)
		a->rx_bm[i >> 6] |= UINT64_C(1) << (i & 63);
	else
		a->rx_bm[i >> 6] &= ~(UINT64_C(1) << (i & 63));
}

/* 32 bits of the receive ring's bitmap starting at ring position pos. */
static inline uint32_t
rx_bits32(const struct sgw_arq *a, uint32_t pos)
{
	uint32_t w = (pos >> 6) & (a->rx_bm_words - 1);
	uint32_t sh = pos & 63;
	uint64_t v = a->rx_bm[w] >> sh;

	if (sh > 32)
		v |= a->rx_bm[(w + 1) & (a->rx_bm_words - 1)] << (64 - sh);
	return (uint32_t)v;
}

/* Data arrived: a status at the next tick of the status timer, which runs
 * one interval after the last status (at once when that is past). */
static void
status_schedule(struct sgw_arq *a)
{
	if (a->st_next_ns == SGW_ARQ_NEVER)
		a->st_next_ns = max_u64(a->now,
					sgw_add_sat(a->last_status_ns, a->c.status_interval_ns));
}

/* A gap was first seen: a status promptly, at most one per min gap. */
static void
status_prompt(struct sgw_arq *a)
{
	uint64_t t = max_u64(a->now, sgw_add_sat(a->last_status_ns, a->c.status_min_gap_ns));

	if (t < a->st_next_ns)
		a->st_next_ns = t;
}

static int
rx_reliable(struct sgw_arq *a, const struct sgw_satlink_hdr *h, uint64_t handle)
{
	uint32_t seq = h->seq;
	struct rx_slot *r;
	bool new_gap;

	if (SGW_SEQ_LT(seq, a->rcv_nxt)) {
		a->rx_dirty = 1;
		status_schedule(a);
		return SGW_ARQ_RX_DUP;
	}
	if (seq - a->rcv_dlv > a->rx_mask) {
		a->rx_dirty = 1;
		status_schedule(a);
		return SGW_ARQ_RX_OUT_OF_WINDOW;
	}
	r = &a->rx[seq & a->rx_mask];
	if (r->present) {
		a->rx_dirty = 1;
		status_schedule(a);
		return SGW_ARQ_RX_DUP;
	}
	r->handle = handle;
	r->len = h->payload_len;
	r->channel = h->channel;
	r->flags = h->flags & (SGW_SL_F_FIRST | SGW_SL_F_LAST);
	r->present = 1;
	rx_bit(a, seq, true);
	a->rx_held++;
	a->st.rx_bytes += h->payload_len;
	a->echo_seq = seq;
	a->echo_ns = a->now;
	a->echo_valid = 1;

	/* frames [rcv_high, seq) never seen: a new gap */
	new_gap = SGW_SEQ_GT(seq, a->rcv_high);
	if (SGW_SEQ_GE(seq, a->rcv_high))
		a->rcv_high = seq + 1;
	if (seq == a->rcv_nxt) {
		do
			a->rcv_nxt++;
		while (a->rcv_nxt != a->rcv_high && a->rx[a->rcv_nxt & a->rx_mask].present);
	} else if (new_gap) {
		status_prompt(a);
	}
	a->rx_dirty = 1;
	status_schedule(a);
	return SGW_ARQ_RX_OK;
}

static void
rx_free_slot(struct sgw_arq *a, uint32_t seq)
{
	a->rx[seq & a->rx_mask].present = 0;
	rx_bit(a, seq, false);
	a->rx_held--;
}

/* Deliver complete packets in order; release runs that are not packets. */
static void
rx_deliver(struct sgw_arq *a, struct sgw_arq_out *o)
{
	for (;;) {
		struct rx_slot *s;
		struct sgw_arq_act *x;
		bool found = false, bad = false;
		uint32_t n, q;

		while (SGW_SEQ_LT(a->rcv_dlv, a->rcv_drop)) {
			x = out_push(a, o, SGW_ARQ_ACT_RELEASE);
			if (x == NULL)
				return;
			x->handle = a->rx[a->rcv_dlv & a->rx_mask].handle;
			rx_free_slot(a, a->rcv_dlv);
			a->rcv_dlv++;
		}
		if (a->rcv_dlv == a->rcv_nxt)
			return;
		if (SGW_SEQ_LT(a->rcv_scan, a->rcv_dlv))
			a->rcv_scan = a->rcv_dlv;
		s = &a->rx[a->rcv_dlv & a->rx_mask];
		if (!(s->flags & SGW_SL_F_FIRST)) {
			a->st.reasm_errors++;
			a->rcv_drop = a->rcv_dlv + 1;
			continue;
		}
		while (a->rcv_scan != a->rcv_nxt) {
			const struct rx_slot *f = &a->rx[a->rcv_scan & a->rx_mask];

			if (a->rcv_scan != a->rcv_dlv &&
			    ((f->flags & SGW_SL_F_FIRST) || f->channel != s->channel ||
			     a->rcv_scan - a->rcv_dlv >= a->c.max_frags)) {
				bad = true;
				break;
			}
			if (f->flags & SGW_SL_F_LAST) {
				found = true;
				break;
			}
			a->rcv_scan++;
		}
		if (bad) {
			a->st.reasm_errors++;
			a->rcv_drop = a->rcv_scan;
			continue;
		}
		if (!found)
			return;
		n = a->rcv_scan - a->rcv_dlv + 1;
		if (room(o) < n) {
			a->pending = 1;
			return;
		}
		for (q = 0; q < n; q++) {
			uint32_t seq = a->rcv_dlv + q;
			const struct rx_slot *f = &a->rx[seq & a->rx_mask];

			x = out_push(a, o, SGW_ARQ_ACT_DELIVER);
			x->flags = f->flags;
			x->channel = f->channel;
			x->len = f->len;
			x->seq = seq;
			x->handle = f->handle;
			a->st.bytes_delivered += f->len;
			rx_free_slot(a, seq);
		}
		a->st.pkts_delivered++;
		a->rcv_dlv += n;
		a->rcv_scan = a->rcv_dlv;
		a->rcv_drop = a->rcv_dlv;
	}
}

static inline struct dg_slot *
dg_at(struct sgw_arq *a, uint32_t seq, uint16_t channel)
{
	struct dg_slot *d = &a->dg[seq & a->dg_mask];

	return d->used && d->seq == seq && d->channel == channel ? d : NULL;
}

static int
rx_datagram(struct sgw_arq *a, const struct sgw_satlink_hdr *h, uint64_t handle,
	    struct sgw_arq_out *o)
{
	uint32_t seq = h->seq, first, last, n, q;
	struct sgw_arq_act *x;
	struct dg_slot *d;

	if (SGW_SEQ_LT(seq, a->dg_next))
		return SGW_ARQ_RX_DGRAM_LATE;
	if ((h->flags & (SGW_SL_F_FIRST | SGW_SL_F_LAST)) ==
	    (SGW_SL_F_FIRST | SGW_SL_F_LAST)) {
		x = out_push(a, o, SGW_ARQ_ACT_DELIVER);
		if (x == NULL)
			return SGW_ARQ_RX_NO_ROOM;
		x->flags = h->flags & (SGW_SL_F_FIRST | SGW_SL_F_LAST | SGW_SL_F_DATAGRAM);
		x->channel = h->channel;
		x->len = h->payload_len;
		x->seq = seq;
		x->handle = handle;
		a->st.rx_bytes += h->payload_len;
		a->st.bytes_delivered += h->payload_len;
		a->st.dgrams_delivered++;
		a->dg_next = seq + 1;
		if (a->dg_held > 0)
			a->dg_check_ns = a->now;  /* older fragments are late now */
		return SGW_ARQ_RX_OK;
	}
	d = &a->dg[seq & a->dg_mask];
	if (d->used) {
		if (d->seq == seq)
			return SGW_ARQ_RX_DUP;
		if (SGW_SEQ_GT(d->seq, seq))
			return SGW_ARQ_RX_NO_ROOM;
		/* an older fragment holds the slot: it goes */
		x = out_push(a, o, SGW_ARQ_ACT_RELEASE);
		if (x == NULL)
			return SGW_ARQ_RX_NO_ROOM;
		x->handle = d->handle;
		a->st.dgram_expired++;
		dg_free(a, d);
	}
	d->handle = handle;
	d->t = a->now;
	d->seq = seq;
	d->len = h->payload_len;
	d->channel = h->channel;
	d->flags = h->flags & (SGW_SL_F_FIRST | SGW_SL_F_LAST | SGW_SL_F_DATAGRAM);
	d->used = 1;
	a->dg_held++;
	a->st.rx_bytes += h->payload_len;
	a->dg_check_ns = min_u64(a->dg_check_ns, sgw_add_sat(a->now, a->c.dgram_timeout_ns));

	/* complete? walk to its FIRST and its LAST */
	first = seq;
	n = 1;
	while (!(a->dg[first & a->dg_mask].flags & SGW_SL_F_FIRST)) {
		if (n >= a->c.max_frags || dg_at(a, first - 1, h->channel) == NULL ||
		    (a->dg[(first - 1) & a->dg_mask].flags & SGW_SL_F_LAST))
			return SGW_ARQ_RX_OK;
		first--;
		n++;
	}
	last = seq;
	while (!(a->dg[last & a->dg_mask].flags & SGW_SL_F_LAST)) {
		if (n >= a->c.max_frags || dg_at(a, last + 1, h->channel) == NULL ||
		    (a->dg[(last + 1) & a->dg_mask].flags & SGW_SL_F_FIRST))
			return SGW_ARQ_RX_OK;
		last++;
		n++;
	}
	if (SGW_SEQ_LT(first, a->dg_next) || room(o) < n)
		return SGW_ARQ_RX_OK;  /* late, or no room: expires */
	for (q = 0; q < n; q++) {
		d = &a->dg[(first + q) & a->dg_mask];
		x = out_push(a, o, SGW_ARQ_ACT_DELIVER);
		x->flags = d->flags;
		x->channel = d->channel;
		x->len = d->len;
		x->seq = first + q;
		x->handle = d->handle;
		a->st.bytes_delivered += d->len;
		dg_free(a, d);
	}
	a->st.dgrams_delivered++;
	a->dg_next = last + 1;
	if (a->dg_held > 0)
		a->dg_check_ns = a->now;
	return SGW_ARQ_RX_OK;
}

/* Release datagram fragments that timed out or can no longer be delivered. */
static void
dg_expire(struct sgw_arq *a, struct sgw_arq_out *o)
{
	uint64_t next = SGW_ARQ_NEVER;
	uint32_t i;

	if (a->dg_held == 0) {
		a->dg_check_ns = SGW_ARQ_NEVER;
		return;
	}
	if (a->now < a->dg_check_ns)
		return;
	for (i = 0; i <= a->dg_mask; i++) {
		struct dg_slot *d = &a->dg[i];
		uint64_t due;

		if (!d->used)
			continue;
		due = sgw_add_sat(d->t, a->c.dgram_timeout_ns);
		if (SGW_SEQ_LT(d->seq, a->dg_next) || due <= a->now) {
			struct sgw_arq_act *x = out_push(a, o, SGW_ARQ_ACT_RELEASE);

			if (x == NULL) {
				a->dg_check_ns = a->now;
				return;
			}
			x->handle = d->handle;
			a->st.dgram_expired++;
			dg_free(a, d);
			continue;
		}
		next = min_u64(next, due);
	}
	a->dg_check_ns = next;
}

/* ---------------------------------------------------------------- sender */

/*
 * frag_adapt: the outcome of a frame's first transmission, taken when it is
 * known (acknowledged, or found lost), so that lost and delivered frames sent
 * at the same time are counted at the same time: counted at the repair's
 * acknowledgement, a loss would come a round trip late, and for a round trip
 * after each size change the old size's losses would outweigh the new one's.
 * Frames sent before the last change are not counted.
 */
static void
fs_outcome(struct sgw_arq *a, const struct tx_slot *s, bool lost)
{
	if (!a->c.frag_adapt || s->tx_count != 1 || SGW_SEQ_LT(s->seq, a->fs_from))
		return;
	if (sgw_fsize_sample(&a->fs, s->len, lost)) {
		a->frag_now = sgw_fsize_now(&a->fs);
		a->fs_from = a->snd_nxt;
	}
}

static void
tx_ack(struct sgw_arq *a, uint32_t seq)
{
	uint32_t i = seq & a->tx_mask;
	struct tx_slot *s = &a->tx[i];

	if (s->state == TX_ACKED || s->state == TX_FREE)
		return;
	if (s->tx_count == 1 && (!a->rack_valid || SGW_SEQ_GT(s->order, a->rack_order))) {
		a->rack_order = s->order;
		a->rack_valid = 1;
	}
	if (s->state != TX_LOST)  /* a lost one was counted when found */
		fs_outcome(a, s, false);
	tx_set_state(a, i, TX_ACKED);
	tx_bit(a, seq, true);
}

/* Lost: k copies when a status proved it, one when only the timer says so. */
static void
tx_mark_lost(struct sgw_arq *a, uint32_t i, uint8_t copies)
{
	fs_outcome(a, &a->tx[i], true);
	a->tx[i].copies_left = copies;
	a->tx[i].copy = 0;
	tx_set_state(a, i, TX_LOST);
}

/*
 * A status of the peer's epoch whose cumulative ack is outside [snd_una,
 * snd_nxt]. The peer's cumulative ack never goes back, so one a little behind
 * is a late (reordered) status, and one that acks frames never sent is a
 * forgery. A consistent peer sends a fitting status at least every keepalive
 * (< link_down), so statuses that stay outside for link_down with none
 * fitting mean the two ends' sequence spaces have parted (without keys):
 * - behind: the peer lacks frames that this end was told had arrived (a
 *   forged ack) and has released; they can never be sent again;
 * - ahead: the peer took forged DATA frames for ours, and every frame we send
 *   now reads to it as a duplicate, while its statuses read to us as
 *   forgeries: both ends would stay link-down for good.
 * Both ends start over then. Returns true when they do.
 */
static bool
status_misfit(struct sgw_arq *a)
{
	if (a->misfit_ns == SGW_ARQ_NEVER) {
		a->misfit_ns = a->now;
		return false;
	}
	if (a->now - a->misfit_ns < a->c.link_down_ns)
		return false;
	sess_forget(a);
	return true;
}

static int
rx_status(struct sgw_arq *a, const struct sgw_satlink_hdr *h, const void *body, size_t len)
{
	struct sgw_satlink_status sb;
	uint32_t cum = h->seq, w, nw, fwd, span;

	if (sgw_satlink_parse_status(body, len, &sb) != SGW_SL_OK)
		return SGW_ARQ_RX_BAD_FRAME;
	/*
	 * The cumulative ack must lie in [snd_una, snd_nxt], or be an older one
	 * (a reordered status, which still tells which frames arrived) at most
	 * a ring behind. Both tests are unsigned distances bounded by the
	 * window, so no value a peer sends can read as "ahead" by wrapping
	 * (cum = snd_nxt + 2^31 did, and the ack loop below then walked 2^32
	 * sequence numbers).
	 */
	fwd = cum - a->snd_una;
	if (fwd > a->snd_nxt - a->snd_una) {
		bool late = a->snd_una - cum <= a->tx_mask + 1;

		if (late)
			a->st.status_behind++;
		if (status_misfit(a))
			return SGW_ARQ_RX_OK;
		if (!late)
			return SGW_ARQ_RX_BAD_FRAME;
		fwd = 0;
	} else {
		a->misfit_ns = SGW_ARQ_NEVER;
	}
	sess_heard(a);
	a->st.status_rx++;

	/* RTT from the echo: the frame's first (only) transmission to now,
	 * minus the time the receiver held the status back. */
	if (sb.echo_delay_us != SGW_SATLINK_NO_ECHO &&
	    sb.echo_seq - a->snd_una < a->snd_nxt - a->snd_una &&
	    (!a->rtt_seq_valid || SGW_SEQ_GT(sb.echo_seq, a->rtt_seq))) {
		const struct tx_slot *s = &a->tx[sb.echo_seq & a->tx_mask];
		uint64_t hold = (uint64_t)sb.echo_delay_us * 1000;

		if (s->tx_count == 1 && a->now >= s->t + hold) {
			rtt_sample(a, a->now - s->t - hold);
			a->rtt_seq = sb.echo_seq;
			a->rtt_seq_valid = 1;
		}
	}

	for (; fwd > 0; fwd--) {
		tx_ack(a, a->snd_una);
		a->snd_una++;
	}
	/* Words past snd_nxt name frames never sent: the loop stops at the
	 * window (a local bound), not at the peer's word count. */
	span = a->snd_nxt - cum;  /* <= window + ring: cum was checked above */
	nw = (span + 30) / 32;    /* words covering cum + 1 .. snd_nxt - 1 */
	if (nw < sb.nwords) {
		/* at most SGW_SATLINK_STATUS_MAX_WORDS, the parser's bound */
		for (w = nw; w < sb.nwords; w++)
			a->st.bad_acks +=
				(uint32_t)__builtin_popcount(sgw_satlink_status_word(&sb, w));
	} else {
		nw = sb.nwords;
	}
	for (w = 0; w < nw; w++) {
		uint32_t bits = sgw_satlink_status_word(&sb, w);
		uint32_t seq0 = cum + 1 + 32 * w;

		if (bits == 0)
			continue;
		if (SGW_SEQ_GE(seq0, a->snd_una) && SGW_SEQ_LE(seq0 + 32, a->snd_nxt)) {
			/* a word inside the window: only the news, a word at a time
			 * (statuses repeat what they acknowledged while a gap is open) */
			bits &= ~tx_bits32(a, seq0);
			while (bits) {
				uint32_t b = (uint32_t)__builtin_ctz(bits);

				bits &= bits - 1;
				tx_ack(a, seq0 + b);
			}
			continue;
		}
		while (bits) {
			uint32_t b = (uint32_t)__builtin_ctz(bits);
			uint32_t seq = seq0 + b;

			bits &= bits - 1;
			if (SGW_SEQ_GE(seq, a->snd_nxt)) {
				a->st.bad_acks++;
				continue;
			}
			if (SGW_SEQ_LT(seq, a->snd_una))
				continue;
			tx_ack(a, seq);
		}
	}
	while (a->snd_una != a->snd_nxt && a->tx[a->snd_una & a->tx_mask].state == TX_ACKED)
		a->snd_una++;

	/* Everything sent before a frame that arrived, and still unacked, is lost. */
	if (a->rack_valid) {
		while (a->inflight.head != NIL &&
		       SGW_SEQ_LT(a->tx[a->inflight.head].order, a->rack_order)) {
			a->st.loss_status++;
			tx_mark_lost(a, a->inflight.head, a->c.retx_copies);
		}
	}
	return SGW_ARQ_RX_OK;
}

/* Release acknowledged packets, in order, at their LAST fragment. */
static void
tx_release(struct sgw_arq *a, struct sgw_arq_out *o)
{
	while (a->snd_rel != a->snd_una) {
		struct tx_slot *s = &a->tx[a->snd_rel & a->tx_mask];

		if (s->flags & SGW_SL_F_LAST) {
			struct sgw_arq_act *x = out_push(a, o, SGW_ARQ_ACT_RELEASE);

			if (x == NULL)
				return;
			x->handle = s->handle;
			a->st.pkts_acked++;
		}
		s->state = TX_FREE;
		tx_bit(a, a->snd_rel, false);
		a->snd_rel++;
	}
}

static uint64_t
rto_deadline(const struct sgw_arq *a)
{
	const struct tx_slot *s;

	if (a->inflight.head == NIL)
		return SGW_ARQ_NEVER;
	s = &a->tx[a->inflight.head];
	return sgw_add_sat(max_u64(s->t, a->link_up_ns), rto_cur(a));
}

static void
tx_timeouts(struct sgw_arq *a)
{
	bool fired = false;

	while (a->inflight.head != NIL && rto_deadline(a) <= a->now) {
		a->st.loss_timeout++;
		tx_mark_lost(a, a->inflight.head, 1);
		fired = true;
	}
	/* back off at most once per timeout period (RFC 6298 5.5) */
	if (fired && a->now >= sgw_add_sat(a->rto_shift_ns, rto_cur(a)) &&
	    a->rto_shift < RTO_SHIFT_MAX) {
		a->rto_shift++;
		a->rto_shift_ns = a->now;
	}
}

static void
tx_emit_data(struct sgw_arq *a, struct sgw_arq_act *x, const struct tx_slot *s, uint8_t copy)
{
	x->flags = s->flags | (copy ? SGW_SL_F_RETX : 0);
	x->retx = copy;
	x->channel = s->channel;
	x->len = s->len;
	x->seq = s->seq;
	x->offset = s->offset;
	x->peer_epoch = a->peer_epoch;
	x->order = s->order;
	x->handle = s->handle;
	a->st.tx_bytes += s->len;
	a->last_tx_ns = a->now;
}

static bool tx_can_send_new(const struct sgw_arq *a);

/* Send one retransmitted copy of slot i. */
static bool
tx_copy(struct sgw_arq *a, uint32_t i, struct sgw_arq_out *o)
{
	struct tx_slot *s = &a->tx[i];
	struct sgw_arq_act *x = out_push(a, o, SGW_ARQ_ACT_TX_DATA);

	if (x == NULL)
		return false;
	s->copies_left--;
	if (s->tx_count < UINT8_MAX)
		s->tx_count++;
	s->order = a->tx_order++;
	s->copy++;
	tx_emit_data(a, x, s, s->copy);
	a->st.tx_retx++;
	/* extra copies are for an idle line only (sgw_arq_line_busy) */
	if (s->copy == 1 && s->copies_left > 0 && a->c.retx_copies_idle &&
	    (a->line_busy || tx_can_send_new(a))) {
		a->st.retx_copies_saved += s->copies_left;
		s->copies_left = 0;
	}
	if (s->copies_left > 0) {
		s->t = sgw_add_sat(a->now, a->c.retx_spacing_ns);
		tx_set_state(a, i, TX_SPACED);
	} else {
		s->t = sgw_add_sat(a->now, a->c.wire_wait_ns);
		tx_set_state(a, i, TX_INFLIGHT);
	}
	return true;
}

static void
tx_retransmit(struct sgw_arq *a, struct sgw_arq_out *o)
{
	while (a->lost.head != NIL)
		if (!tx_copy(a, a->lost.head, o))
			return;
	while (a->spaced.head != NIL && a->tx[a->spaced.head].t <= a->now)
		if (!tx_copy(a, a->spaced.head, o))
			return;
}

static bool
tx_can_send_new(const struct sgw_arq *a)
{
	return a->sq_n > 0 && a->snd_nxt - a->snd_una < a->wnd &&
	       a->snd_nxt - a->snd_rel <= a->tx_mask;
}

static void
tx_new(struct sgw_arq *a, struct sgw_arq_out *o)
{
	while (tx_can_send_new(a)) {
		struct sq_ent *q = &a->sq[a->sq_head];
		uint32_t i = a->snd_nxt & a->tx_mask;
		struct tx_slot *s = &a->tx[i];
		struct sgw_arq_act *x = out_push(a, o, SGW_ARQ_ACT_TX_DATA);
		uint32_t flen = q->len - a->sq_off;

		if (x == NULL)
			return;
		if (a->sq_off == 0)
			a->sq_cut = a->c.frag_adapt ? sgw_fsize_cut(&a->fs, q->len) : a->frag_now;
		if (flen > a->sq_cut)
			flen = a->sq_cut;
		s->handle = q->handle;
		s->seq = a->snd_nxt;
		s->offset = a->sq_off;
		s->len = (uint16_t)flen;
		s->channel = q->channel;
		s->flags = (a->sq_off == 0 ? SGW_SL_F_FIRST : 0) |
			   (a->sq_off + flen == q->len ? SGW_SL_F_LAST : 0);
		s->tx_count = 1;
		s->copies_left = 0;
		s->order = a->tx_order++;
		s->t = sgw_add_sat(a->now, a->c.wire_wait_ns);
		s->state = TX_FREE;
		tx_set_state(a, i, TX_INFLIGHT);
		tx_emit_data(a, x, s, 0);
		a->st.tx_frames++;
		a->st.tx_new_bytes += s->len;
		a->snd_nxt++;
		a->sq_off += flen;
		if (a->sq_off == q->len) {
			a->sq_head = (a->sq_head + 1) % a->c.sendq_pkts;
			a->sq_n--;
			a->sq_off = 0;
		}
	}
}

/* ---------------------------------------------------------------- control */

static bool
ctrl_emit(struct sgw_arq *a, struct sgw_arq_out *o, uint8_t type)
{
	struct sgw_arq_act *x = out_push(a, o, SGW_ARQ_ACT_TX_CTRL);

	if (x == NULL)
		return false;
	x->code = type;
	x->peer_epoch = a->peer_epoch;
	a->last_tx_ns = a->now;
	return true;
}

static bool
status_emit(struct sgw_arq *a, struct sgw_arq_out *o, bool keepalive)
{
	if (!ctrl_emit(a, o, SGW_SL_STATUS))
		return false;
	a->st.status_tx++;
	if (keepalive)
		a->st.keepalive_tx++;
	a->last_status_ns = a->now;
	a->rx_dirty = 0;
	a->force_status = 0;
	a->st_next_ns = a->rcv_high != a->rcv_nxt ?
			sgw_add_sat(a->now, a->c.status_interval_ns) : SGW_ARQ_NEVER;
	return true;
}

static bool
status_due(const struct sgw_arq *a)
{
	if (a->force_status)
		return true;
	return a->st_next_ns <= a->now && (a->rx_dirty || a->rcv_high != a->rcv_nxt);
}

/* ------------------------------------------------------------------ pump */

static bool
events_flush(struct sgw_arq *a, struct sgw_arq_out *o)
{
	while (a->ev_n > 0) {
		struct sgw_arq_act *x = out_push(a, o, SGW_ARQ_ACT_EVENT);

		if (x == NULL)
			return false;
		x->code = a->ev[a->ev_head];
		a->ev_head = (a->ev_head + 1) % EV_RING;
		a->ev_n--;
	}
	return true;
}

static void
pump(struct sgw_arq *a, struct sgw_arq_out *o)
{
	bool up;

	a->pending = 0;
	if (a->state == SESS_CLOSED)
		return;
	if (!events_flush(a, o))
		return;
	if (a->sweep != SW_NONE && !sweep_run(a, o))
		return;
	if (a->state == SESS_CLOSED)
		return;

	if (a->ack_hello) {
		if (!ctrl_emit(a, o, SGW_SL_HELLO_ACK))
			return;
		a->ack_hello = 0;
		a->st.hello_ack_tx++;
	}
	if (a->state != SESS_UP) {
		if (a->now >= a->hello_next_ns) {
			if (!ctrl_emit(a, o, SGW_SL_HELLO))
				return;
			a->hello_next_ns = sgw_add_sat(a->now, a->c.hello_interval_ns);
			a->st.hello_tx++;
		}
		dg_expire(a, o);
		return;
	}

	if (a->link_up && a->now - a->last_rx_ns >= a->c.link_down_ns) {
		a->link_up = 0;
		a->st.link_downs++;
		event_push(a, SGW_ARQ_EV_LINK_DOWN);
		if (!events_flush(a, o))
			return;
	}
	up = a->link_up;

	rx_deliver(a, o);
	dg_expire(a, o);
	tx_release(a, o);
	if (up) {
		tx_timeouts(a);
		if (status_due(a) && !status_emit(a, o, false))
			return;
		tx_retransmit(a, o);
		tx_new(a, o);
	} else if (a->st_next_ns <= a->now) {
		/* no statuses into a dead link: the keepalive probes carry them */
		a->st_next_ns = SGW_ARQ_NEVER;
	}
	if (a->now - a->last_tx_ns >= a->keepalive_ns)
		status_emit(a, o, true);
}

void
sgw_arq_on_wire(struct sgw_arq *a, uint32_t seq, uint32_t order, uint64_t now_ns)
{
	struct tx_slot *s;

	/* only a frame still in the window: a stale or foreign pair does nothing */
	if (a->state != SESS_UP || seq - a->snd_una >= a->snd_nxt - a->snd_una)
		return;
	s = &a->tx[seq & a->tx_mask];
	/*
	 * The inflight list stays in transmission order: the pacer is FIFO, so
	 * wire times grow along it as emission times did.
	 */
	if (s->seq == seq && s->order == order && s->state == TX_INFLIGHT)
		s->t = now_ns;
}

void
sgw_arq_line_busy(struct sgw_arq *a, int busy)
{
	a->line_busy = busy != 0;
}

uint64_t
sgw_arq_next_deadline(const struct sgw_arq *a)
{
	uint64_t d = SGW_ARQ_NEVER;

	if (a->state == SESS_CLOSED)
		return SGW_ARQ_NEVER;
	if (a->pending || a->ev_n > 0 || a->sweep != SW_NONE || a->ack_hello)
		return a->now;
	if (a->dg_held > 0)
		d = a->dg_check_ns;
	if (a->state != SESS_UP)
		return min_u64(d, a->hello_next_ns);
	d = min_u64(d, sgw_add_sat(a->last_tx_ns, a->keepalive_ns));
	if (!a->link_up)
		return d;
	d = min_u64(d, sgw_add_sat(a->last_rx_ns, a->c.link_down_ns));
	if (a->force_status)
		return a->now;
	if (a->rx_dirty || a->rcv_high != a->rcv_nxt)
		d = min_u64(d, a->st_next_ns);
	if (a->lost.head != NIL || tx_can_send_new(a))
		return a->now;
	if (a->spaced.head != NIL)
		d = min_u64(d, a->tx[a->spaced.head].t);
	d = min_u64(d, rto_deadline(a));
	return d;
}

/* ------------------------------------------------------------ public calls */

int
sgw_arq_send(struct sgw_arq *a, uint64_t now_ns, uint16_t channel, uint64_t handle,
	     uint32_t len, unsigned int flags, struct sgw_arq_out *o)
{
	uint32_t nfr, i;

	if (!out_ok(a, o))
		return -EINVAL;
	touch_time(a, now_ns);
	if (a->state == SESS_CLOSED) {
		a->st.send_refused++;
		return -ESHUTDOWN;
	}
	/*
	 * A packet taken must be cuttable at any size the sender may use until
	 * it goes out: with frag_adapt, down to frag_min (the size may shrink
	 * while it waits), so the bound does not move with the adapted size.
	 */
	if (len == 0 || len > (uint32_t)(a->c.frag_adapt ? a->c.frag_min : a->c.frag_size) *
				      a->c.max_frags) {
		a->st.send_refused++;
		pump(a, o);
		return -EMSGSIZE;
	}
	if (a->sweep != SW_NONE) {
		a->st.send_refused++;
		pump(a, o);
		return -EAGAIN;
	}
	if (flags & SGW_ARQ_SEND_DATAGRAM) {
		uint32_t off = 0;

		if (a->state != SESS_UP || !a->link_up) {
			a->st.send_refused++;
			pump(a, o);
			return -ENOTCONN;
		}
		nfr = (len + a->frag_now - 1) / a->frag_now;
		if (room(o) < nfr + 1) {
			a->st.send_refused++;
			return -ENOSPC;
		}
		for (i = 0; i < nfr; i++) {
			struct sgw_arq_act *x = out_push(a, o, SGW_ARQ_ACT_TX_DATA);
			uint32_t flen = len - off;

			if (flen > a->frag_now)
				flen = a->frag_now;
			x->flags = SGW_SL_F_DATAGRAM | (i == 0 ? SGW_SL_F_FIRST : 0) |
				   (i + 1 == nfr ? SGW_SL_F_LAST : 0);
			x->channel = channel;
			x->len = (uint16_t)flen;
			x->seq = a->dg_seq++;
			x->offset = off;
			x->peer_epoch = a->peer_epoch;
			x->handle = handle;
			off += flen;
			a->st.tx_dgram_frames++;
			a->st.tx_bytes += flen;
			a->st.tx_new_bytes += flen;
		}
		{
			struct sgw_arq_act *x = out_push(a, o, SGW_ARQ_ACT_RELEASE);

			x->handle = handle;
		}
		a->last_tx_ns = a->now;
		a->st.dgrams_sent++;
		pump(a, o);
		return 0;
	}
	if (a->sq_n == a->c.sendq_pkts) {
		a->st.window_full++;
		pump(a, o);
		return -ENOBUFS;
	}
	i = (a->sq_head + a->sq_n) % a->c.sendq_pkts;
	a->sq[i].handle = handle;
	a->sq[i].len = len;
	a->sq[i].channel = channel;
	a->sq_n++;
	a->st.pkts_queued++;
	pump(a, o);
	return 0;
}

/* Common receive checks; returns a refusal reason or SGW_ARQ_RX_OK. */
static int
rx_check(struct sgw_arq *a, const struct sgw_satlink_hdr *h)
{
	if (a->state == SESS_CLOSED)
		return SGW_ARQ_RX_CLOSED;
	if (h->terminal_id != a->c.terminal_id)
		return SGW_ARQ_RX_BAD_TERMINAL;
	return SGW_ARQ_RX_OK;
}

/* DATA and STATUS belong to the session only with both epochs right. */
static bool
epochs_match(const struct sgw_arq *a, const struct sgw_satlink_hdr *h)
{
	return a->peer_epoch != 0 && h->sender_epoch == a->peer_epoch &&
	       h->peer_epoch == a->c.local_epoch;
}

/*
 * A DATA or STATUS frame that failed the epoch check: from the known peer
 * but to another epoch of ours, while the peer has been silent for link_down,
 * it shows the peer has a session with someone else in our place (it adopted
 * a forged epoch during an outage, say): both go back to first contact.
 */
static int
stale_from_peer(struct sgw_arq *a, const struct sgw_satlink_hdr *h)
{
	if (a->peer_epoch != 0 && h->sender_epoch == a->peer_epoch && !peer_live(a))
		sess_forget(a);
	return SGW_ARQ_RX_STALE_EPOCH;
}

static int
rx_refuse(struct sgw_arq *a, int r)
{
	a->st.rx_refused[r]++;
	return r;
}

int
sgw_arq_rx_data(struct sgw_arq *a, uint64_t now_ns, const struct sgw_satlink_hdr *h,
		uint64_t handle, struct sgw_arq_out *o)
{
	int r;

	if (!out_ok(a, o) || h == NULL)
		return rx_refuse(a, SGW_ARQ_RX_BAD_CALL);
	touch_time(a, now_ns);
	r = rx_check(a, h);
	if (r == SGW_ARQ_RX_OK && (h->type != SGW_SL_DATA || h->payload_len == 0))
		r = SGW_ARQ_RX_BAD_FRAME;
	if (r == SGW_ARQ_RX_OK && !epochs_match(a, h))
		r = stale_from_peer(a, h);
	if (r != SGW_ARQ_RX_OK) {
		pump(a, o);
		return rx_refuse(a, r);
	}
	if (a->state != SESS_UP)
		sess_go_up(a);  /* the peer is up with our epoch: so are we */
	sess_heard(a);
	a->st.rx_frames++;
	if (a->sweep != SW_NONE)
		r = SGW_ARQ_RX_RESETTING;
	else if (h->flags & SGW_SL_F_DATAGRAM)
		r = rx_datagram(a, h, handle, o);
	else
		r = rx_reliable(a, h, handle);
	pump(a, o);
	return r == SGW_ARQ_RX_OK ? r : rx_refuse(a, r);
}

static int
rx_hello(struct sgw_arq *a, const struct sgw_satlink_hdr *h, const void *body, size_t len)
{
	struct sgw_satlink_hello hb;
	uint32_t e = h->sender_epoch;

	if (sgw_satlink_parse_hello(body, len, &hb) != SGW_SL_OK)
		return SGW_ARQ_RX_BAD_FRAME;
	if (e != a->peer_epoch) {
		if (peer_live(a)) {
			/* a delayed HELLO of a previous incarnation, or a forgery */
			a->st.hello_refused_live++;
			return SGW_ARQ_RX_STALE_EPOCH;
		}
		if (a->peer_epoch != 0) {
			/* the peer restarted (its old epoch is silent): nothing of
			 * the old session survives */
			a->st.peer_restarts++;
			sess_reset(a);
		}
		a->peer_epoch = e;
		a->peer_isn = h->seq;
		if (a->sweep == SW_NONE)
			rx_space_init(a, h->seq);
	} else if (h->seq != a->peer_isn) {
		return SGW_ARQ_RX_BAD_FRAME;
	} else if (h->peer_epoch != a->c.local_epoch &&
		   (h->peer_epoch != 0 || a->state == SESS_UP)) {
		/* our peer does not (or no longer) know our epoch */
		if (peer_live(a)) {
			a->st.hello_refused_live++;
			return SGW_ARQ_RX_STALE_EPOCH;
		}
		sess_forget(a);
		return SGW_ARQ_RX_OK;
	}
	a->peer_rx_window = hb.rx_window;
	a->keepalive_ns = a->c.keepalive_ns;
	if (hb.idle_ms != 0 && (uint64_t)hb.idle_ms * 1000000 < a->keepalive_ns)
		a->keepalive_ns = (uint64_t)hb.idle_ms * 1000000;
	a->st.hello_rx++;
	a->last_rx_ns = a->now;
	if (h->type == SGW_SL_HELLO)
		a->ack_hello = 1;
	if (h->peer_epoch == a->c.local_epoch) {
		if (a->state != SESS_UP) {
			sess_go_up(a);  /* its status tells the peer we are up */
		} else {
			sess_heard(a);
		}
	}
	return SGW_ARQ_RX_OK;
}

int
sgw_arq_rx_ctrl(struct sgw_arq *a, uint64_t now_ns, const struct sgw_satlink_hdr *h,
		const void *body, size_t body_len, struct sgw_arq_out *o)
{
	int r;

	if (!out_ok(a, o) || h == NULL)
		return rx_refuse(a, SGW_ARQ_RX_BAD_CALL);
	touch_time(a, now_ns);
	r = rx_check(a, h);
	if (r == SGW_ARQ_RX_OK) {
		switch (h->type) {
		case SGW_SL_HELLO:
		case SGW_SL_HELLO_ACK:
			r = rx_hello(a, h, body, body_len);
			break;
		case SGW_SL_STATUS:
			if (!epochs_match(a, h)) {
				r = stale_from_peer(a, h);
				break;
			}
			if (a->state != SESS_UP)
				sess_go_up(a);
			if (a->sweep != SW_NONE) {
				sess_heard(a);
				r = SGW_ARQ_RX_RESETTING;
				break;
			}
			r = rx_status(a, h, body, body_len);
			break;
		default:
			r = SGW_ARQ_RX_BAD_FRAME;
			break;
		}
	}
	pump(a, o);
	return r == SGW_ARQ_RX_OK ? r : rx_refuse(a, r);
}

void
sgw_arq_poll(struct sgw_arq *a, uint64_t now_ns, struct sgw_arq_out *o)
{
	if (!out_ok(a, o))
		return;
	touch_time(a, now_ns);
	pump(a, o);
}

int
sgw_arq_drain(struct sgw_arq *a, struct sgw_arq_out *o)
{
	if (o == NULL || o->act == NULL || o->n >= o->cap)
		return 0;
	if (a->state == SESS_CLOSED)
		return 1;
	a->ev_n = 0;
	sweep_start(a, true);
	a->pending = 0;
	if (!sweep_run(a, o)) {
		a->pending = 1;
		return 0;
	}
	return 1;
}

/* -------------------------------------------------------------- encoders */

size_t
sgw_arq_write_data_hdr(const struct sgw_arq *a, const struct sgw_arq_act *x, void *buf,
		       size_t cap)
{
	struct sgw_satlink_hdr h;

	if (x->type != SGW_ARQ_ACT_TX_DATA || x->peer_epoch != a->peer_epoch ||
	    a->peer_epoch == 0 || a->sweep != SW_NONE || a->state == SESS_CLOSED)
		return 0;
	h = (struct sgw_satlink_hdr){
		.version = SGW_SATLINK_VERSION,
		.type = SGW_SL_DATA,
		.flags = x->flags,
		.channel = x->channel,
		.terminal_id = a->c.terminal_id,
		.sender_epoch = a->c.local_epoch,
		.peer_epoch = a->peer_epoch,
		.seq = x->seq,
		.payload_len = x->len,
	};
	return sgw_satlink_write_hdr(buf, cap, &h);
}

static size_t
write_status(const struct sgw_arq *a, uint64_t now, uint8_t *p, size_t cap)
{
	uint32_t words[SGW_SATLINK_STATUS_MAX_WORDS];
	struct sgw_satlink_status sb = {0};
	struct sgw_satlink_hdr h;
	uint32_t nbits = 0, nw, w;
	size_t body;

	if (a->rcv_high != a->rcv_nxt)
		nbits = a->rcv_high - a->rcv_nxt - 1;
	nw = (nbits + 31) / 32;
	if (nw > SGW_SATLINK_STATUS_MAX_WORDS) {
		nw = SGW_SATLINK_STATUS_MAX_WORDS;
		nbits = 32 * nw;
	}
	for (w = 0; w < nw; w++) {
		uint32_t v = rx_bits32(a, (a->rcv_nxt + 1 + 32 * w) & a->rx_mask);
		uint32_t left = nbits - 32 * w;

		if (left < 32)
			v &= (UINT32_C(1) << left) - 1;
		words[w] = v;
	}
	sb.nwords = (uint16_t)nw;
	if (a->echo_valid) {
		uint64_t us = (now > a->echo_ns ? now - a->echo_ns : 0) / 1000;

		sb.echo_seq = a->echo_seq;
		sb.echo_delay_us = us >= SGW_SATLINK_NO_ECHO ?
				   SGW_SATLINK_NO_ECHO - 1 : (uint32_t)us;
	} else {
		sb.echo_delay_us = SGW_SATLINK_NO_ECHO;
	}
	if (cap < SGW_SATLINK_HDR_LEN)
		return 0;
	body = sgw_satlink_write_status(p + SGW_SATLINK_HDR_LEN, cap - SGW_SATLINK_HDR_LEN,
					&sb, words);
	if (body == 0)
		return 0;
	h = (struct sgw_satlink_hdr){
		.version = SGW_SATLINK_VERSION,
		.type = SGW_SL_STATUS,
		.terminal_id = a->c.terminal_id,
		.sender_epoch = a->c.local_epoch,
		.peer_epoch = a->peer_epoch,
		.seq = a->rcv_nxt,
		.payload_len = (uint16_t)body,
	};
	sgw_satlink_write_hdr(p, cap, &h);
	return SGW_SATLINK_HDR_LEN + body;
}

/* What this end asks of the peer: a frame at least every link_down / 4. */
static uint16_t
idle_ms(const struct sgw_arq *a)
{
	uint64_t ms = a->c.link_down_ns / 4 / 1000000;

	if (ms == 0)
		ms = 1;
	return ms > UINT16_MAX ? UINT16_MAX : (uint16_t)ms;
}

size_t
sgw_arq_write_ctrl(const struct sgw_arq *a, const struct sgw_arq_act *x, uint64_t now_ns,
		   void *buf, size_t cap)
{
	struct sgw_satlink_hello hb;
	struct sgw_satlink_hdr h;
	uint8_t *p = buf;

	if (x->type != SGW_ARQ_ACT_TX_CTRL || p == NULL || a->state == SESS_CLOSED)
		return 0;
	switch (x->code) {
	case SGW_SL_STATUS:
		if (x->peer_epoch != a->peer_epoch || a->peer_epoch == 0 ||
		    a->sweep != SW_NONE)
			return 0;
		return write_status(a, now_ns, p, cap);
	case SGW_SL_HELLO_ACK:
		if (a->peer_epoch == 0)
			return 0;
		/* fall through */
	case SGW_SL_HELLO:
		if (cap < SGW_SATLINK_HELLO_FRAME_LEN)
			return 0;
		h = (struct sgw_satlink_hdr){
			.version = SGW_SATLINK_VERSION,
			.type = x->code,
			.terminal_id = a->c.terminal_id,
			.sender_epoch = a->c.local_epoch,
			.peer_epoch = a->peer_epoch,
			.seq = a->c.isn,
			.payload_len = SGW_SATLINK_HELLO_LEN,
		};
		hb = (struct sgw_satlink_hello){
			.rx_window = a->c.rx_window,
			.max_frags = a->c.max_frags,
			.frag_size = a->c.frag_size,
			.idle_ms = idle_ms(a),
		};
		sgw_satlink_write_hdr(p, cap, &h);
		sgw_satlink_write_hello(p + SGW_SATLINK_HDR_LEN, cap - SGW_SATLINK_HDR_LEN, &hb);
		return SGW_SATLINK_HELLO_FRAME_LEN;
	default:
		return 0;
	}
}

/* ------------------------------------------------------------ inspection */

static const char *const rx_reason_names[SGW_ARQ_RX__COUNT] = {
	[SGW_ARQ_RX_OK] = "ok",
	[SGW_ARQ_RX_DUP] = "dup",
	[SGW_ARQ_RX_OUT_OF_WINDOW] = "out_of_window",
	[SGW_ARQ_RX_STALE_EPOCH] = "stale_epoch",
	[SGW_ARQ_RX_BAD_TERMINAL] = "bad_terminal",
	[SGW_ARQ_RX_BAD_FRAME] = "bad_frame",
	[SGW_ARQ_RX_DGRAM_LATE] = "dgram_late",
	[SGW_ARQ_RX_NO_ROOM] = "no_room",
	[SGW_ARQ_RX_RESETTING] = "resetting",
	[SGW_ARQ_RX_CLOSED] = "closed",
	[SGW_ARQ_RX_BAD_CALL] = "bad_call",
};

const char *
sgw_arq_rx_reason_name(int reason)
{
	if (reason < 0 || reason >= SGW_ARQ_RX__COUNT)
		return "unknown";
	return rx_reason_names[reason];
}

void
sgw_arq_get_stats(const struct sgw_arq *a, struct sgw_arq_stats *st)
{
	*st = a->st;
	if (a->c.frag_adapt) {
		st->frag_probes = a->fs.st.probes;
		st->frag_decisions = a->fs.st.decisions;
		st->frag_changes = a->fs.st.changes;
		st->ber_est_ppb = a->fs.st.ber_ppb;
	}
	st->frag_size_now = a->frag_now;
	st->srtt_ns = a->srtt;
	st->rttvar_ns = a->rttvar;
	st->rto_ns = rto_cur(a);
	st->tx_held = a->snd_nxt - a->snd_rel;
	st->tx_outstanding = a->snd_nxt - a->snd_una;
	st->sendq_held = a->sq_n;
	st->rx_held = a->rx_held;
	st->dgram_held = a->dg_held;
}

enum sgw_arq_state
sgw_arq_get_state(const struct sgw_arq *a)
{
	if (a->state == SESS_CLOSED)
		return SGW_ARQ_CLOSED;
	if (a->state != SESS_UP)
		return SGW_ARQ_CONNECTING;
	return a->link_up ? SGW_ARQ_UP : SGW_ARQ_DOWN;
}

uint32_t
sgw_arq_peer_epoch(const struct sgw_arq *a)
{
	return a->peer_epoch;
}

uint32_t
sgw_arq_send_window(const struct sgw_arq *a)
{
	return a->state == SESS_UP ? a->wnd : 0;
}

uint16_t
sgw_arq_frag_size(const struct sgw_arq *a)
{
	return a->frag_now;
}

void
sgw_arq_get_tx_totals(const struct sgw_arq *a, struct sgw_arq_tx_totals *t)
{
	t->new_frames = a->st.tx_frames + a->st.tx_dgram_frames;
	t->new_bytes = a->st.tx_new_bytes;
	t->lost = a->st.loss_status + a->st.loss_timeout;
}
