/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Relay buffer of a split TCP connection and the receive-window control that
 * keeps it from overflowing (seed 003: RWND, PETRA, ACKRES).
 *
 * The relay buffer is one byte FIFO per direction of a split connection: the
 * receive buffer of the leg the bytes come in on and the send buffer of the
 * leg they go out on (VPP's hs_apps/proxy.c shape: the rx FIFO of one
 * session is the tx FIFO of the other, so there is no copy and no second
 * bound between the two legs). In-order bytes are written at the tail; the
 * outgoing leg peeks contiguous spans (zero-copy) and consumes from the head
 * when it no longer needs them. A write that does not fit is refused whole
 * and counted, never truncated. It is a byte ring, not lib/sgw_ring.h (which
 * hands out one slot per element): a TCP leg writes and reads arbitrary byte
 * spans, and the power-of-two mask is what makes a span at most two pieces.
 *
 * The window control (struct sgw_rwc) decides, for each ACK the receiving
 * leg is about to send toward its sender, whether to send it and with which
 * window, from the relay buffer's state and the time. One ops table per
 * scheme, chosen at init; the calls below are one indirect call each, no
 * switch on the fast path. docs/relay-buffer.md has the rules and the
 * no-overflow argument.
 *
 * Plain C11: no globals, no clock reads, no allocation (the caller gives the
 * ring memory and the structs). Single owner (one worker).
 */
#ifndef SGW_RELAY_H
#define SGW_RELAY_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------ relay FIFO */

#define SGW_RELAY_MIN_RING 64u
#define SGW_RELAY_MAX_RING (1u << 30)

/*
 * head and tail are free-running byte counters (mod 2^32), both 0 at init:
 * they are also the stream offsets of the next byte to consume and to write
 * (a split half uses them so). The ring holds [head, tail), tail - head <=
 * limit <= ring size <= 2^30, so the difference is always exact. limit is
 * the buffer size B_size: any byte count up to the ring size (82 segments of
 * 1000 bytes sit in a 128 KB ring).
 */
struct sgw_relay {
	uint8_t *mem;           /* ring of 1 << shift bytes, the caller's */
	uint32_t limit;         /* bytes the buffer may hold (B_size) */
	uint32_t head;          /* first byte not consumed: bytes consumed since init, mod 2^32 */
	uint32_t tail;          /* one past the last byte written: bytes written, mod 2^32 */
	uint32_t occ_max;       /* highest occupancy seen */
	uint32_t overflows;     /* writes refused: did not fit */
	uint16_t bad_calls;     /* commit/consume of more than possible (clamped/refused);
				 * saturates at UINT16_MAX: it counts caller bugs */
	uint8_t shift;          /* log2 of the ring size */
	uint8_t pad;
};

/* 32 bytes: a split half holds two (docs/tcp-split.md, "State per idle connection"). */
#if defined(__cplusplus)
static_assert(sizeof(struct sgw_relay) == 32, "sgw_relay grew");
#else
_Static_assert(sizeof(struct sgw_relay) == 32, "sgw_relay grew");
#endif

static inline uint32_t
sgw_relay_mask(const struct sgw_relay *r)
{
	return (1u << r->shift) - 1u;
}

/*
 * mem: ring_size bytes, ring_size a power of two in [64, 2^30]; limit in
 * [1, ring_size]. Returns 0 or -EINVAL (r untouched).
 */
int sgw_relay_init(struct sgw_relay *r, void *mem, uint32_t ring_size, uint32_t limit);

static inline uint32_t
sgw_relay_used(const struct sgw_relay *r)
{
	return r->tail - r->head;
}

static inline uint32_t
sgw_relay_free(const struct sgw_relay *r)
{
	return r->limit - (r->tail - r->head);
}

/* Copy len bytes in at the tail: 0, or -ENOSPC when they do not all fit
 * (nothing written, counted in overflows). len 0 is a no-op. */
int sgw_relay_write(struct sgw_relay *r, const void *src, uint32_t len);

/*
 * Zero-copy write: *p = the contiguous free span at the tail; returns its
 * length (<= free space; 0 when full). Fill some of it, then commit.
 */
uint32_t sgw_relay_write_span(struct sgw_relay *r, uint8_t **p);
/* Make n bytes written through write_span part of the FIFO. 0, or -ENOSPC
 * when n exceeds the free space (nothing committed, counted in bad_calls). */
int sgw_relay_commit(struct sgw_relay *r, uint32_t n);

/*
 * Zero-copy read: *p = the contiguous run of held bytes starting off bytes
 * after the head; returns its length (0 when off >= used). A second call at
 * off + returned length gives the part after the ring's wrap.
 */
uint32_t sgw_relay_peek(const struct sgw_relay *r, uint32_t off, const uint8_t **p);
/* Copy up to len held bytes starting off bytes after the head into dst;
 * returns the number copied (both spans across the wrap). */
uint32_t sgw_relay_read(const struct sgw_relay *r, uint32_t off, void *dst, uint32_t len);
/* Free n bytes at the head. More than held frees all held and counts a
 * bad call. Returns the bytes freed. */
uint32_t sgw_relay_consume(struct sgw_relay *r, uint32_t n);

/* ----------------------------------------------------- window control */

#define SGW_RWC_NEVER UINT64_MAX
#define SGW_RWC_MAX_WSCALE 14u

enum sgw_rwc_scheme {
	SGW_RWC_RWND = 0,   /* window = relay free space, anti-freeze (default) */
	SGW_RWC_PETRA,      /* withhold ACKs while occupancy > b_th */
	SGW_RWC_ACKRES,     /* PETRA + one ACK before the sender's RTO expires */
	SGW_RWC__COUNT
};

const char *sgw_rwc_scheme_name(int scheme);

struct sgw_rwc_conf {
	uint8_t scheme;            /* enum sgw_rwc_scheme (RWND) */
	uint8_t wscale;            /* our receive window scale, as announced: 0..14 (0) */
	uint8_t update_on_drain;   /* RWND: window update as soon as draining reopens a
				    * zero window, besides the periodic check (1) */
	uint8_t ackres_hold;       /* ACKRES: RTT samples include how long we held the ACK
				    * (0: path RTT only; sgw_relay.c says why) */
	uint16_t mss;              /* the sender's MSS: SWS threshold, ACKRES step (1460) */
	uint32_t b_th;             /* PETRA, ACKRES: withhold while occupancy > b_th bytes */
	uint32_t static_wnd;       /* PETRA, ACKRES: window advertised, bytes (0: limit) */
	uint64_t freeze_check_ns;  /* RWND anti-freeze period (100 ms) */
	uint64_t rto_min_ns;       /* ACKRES: the sender's RTO floor assumed (1 s) */
	uint64_t rto_max_ns;       /* ACKRES: and its ceiling (60 s) */
	uint64_t rto_init_ns;      /* ACKRES: before the first RTT sample (1 s) */
	int64_t rto_bias_ns;       /* ACKRES: added to the estimate (seed's delta T0) (0) */
};

void sgw_rwc_conf_default(struct sgw_rwc_conf *conf);
/* NULL when valid, else the name of the first bad field. */
const char *sgw_rwc_conf_check(const struct sgw_rwc_conf *conf);

/* The ACK to send: ack number and the 16-bit window field (already scaled). */
struct sgw_rwc_out {
	uint32_t ack;
	uint16_t wnd;
};

struct sgw_rwc_stats {
	uint32_t acks_sent;         /* ACKs the control let out (any call) */
	uint32_t zero_windows;      /* ACKs sent with a zero window */
	uint32_t anti_freeze;       /* window updates sent by the anti-freeze check */
	uint32_t drain_updates;     /* window updates sent because draining reopened it */
	uint32_t withheld;          /* ACKs withheld (PETRA, ACKRES) */
	uint32_t rto_refreshes;     /* ACKRES single ACKs sent to refresh the sender's RTO */
	uint32_t scale_retractions; /* right edge moved left by < 2^wscale (rounding) */
	uint32_t sws_holds;         /* right edge held back: opening below the SWS threshold */
	uint32_t rtt_samples;       /* ACKRES estimator samples */
	uint32_t dup_segments;      /* data below the highest seen: the sender retransmitted */
	uint32_t bad_input;         /* rcv_nxt moving backwards, window beyond 2^30 */
};

struct sgw_rwc;

struct sgw_rwc_ops {
	const char *name;
	/* The receiving leg is about to send an ACK for rcv_nxt: 1 and *out to send
	 * it, 0 to withhold it. */
	int (*ack)(struct sgw_rwc *c, const struct sgw_relay *r, uint64_t now,
		   uint32_t rcv_nxt, struct sgw_rwc_out *out);
	/* A data segment [seq, seq + len) was accepted into the relay; echo_ns is
	 * when we sent the ACK whose timestamp it echoes (0: unknown). */
	void (*data)(struct sgw_rwc *c, const struct sgw_relay *r, uint64_t now,
		     uint32_t seq, uint32_t len, uint64_t echo_ns);
	/* The outgoing leg consumed bytes: 1 and *out when an ACK must go now. */
	int (*drain)(struct sgw_rwc *c, const struct sgw_relay *r, uint64_t now,
		     uint32_t rcv_nxt, struct sgw_rwc_out *out);
	/* The timer armed at sgw_rwc_timer_at() fired: 1 and *out to send. */
	int (*timer)(struct sgw_rwc *c, const struct sgw_relay *r, uint64_t now,
		     uint32_t rcv_nxt, struct sgw_rwc_out *out);
};

/* Per connection and direction; the fields are the module's (the struct is
 * public so the caller can embed it). */
struct sgw_rwc {
	const struct sgw_rwc_ops *ops;
	uint64_t timer_at;        /* absolute; SGW_RWC_NEVER: no timer wanted */
	uint32_t rcv_nxt;         /* highest rcv_nxt seen in a call */
	uint32_t rcv_adv;         /* highest right edge ever advertised */
	uint32_t last_ack;        /* ack number of the last ACK let out */
	uint32_t rcv_high;        /* one past the highest data byte received */
	uint32_t static_wnd;
	uint32_t b_th;
	uint16_t mss;             /* conf mss, raised to the largest segment seen */
	uint16_t last_wnd;        /* window field of the last ACK let out */
	uint8_t wscale;
	uint8_t flags;            /* RWC_F_* (sgw_relay.c) */
	uint8_t rto_shift;        /* ACKRES: sender's backoff inferred */
	uint8_t scheme;
	uint64_t freeze_check_ns;
	/* ACKRES: RFC 6298 estimator of the sender's RTO from what we observe */
	uint64_t t_last_adv;      /* when the last ACK advancing the ack number went out */
	uint64_t t_sample;        /* last RTT sample */
	uint64_t t_unacked;       /* arrival of the oldest byte not acknowledged (0: none) */
	uint64_t rtt_path;        /* latest path RTT from a timestamp echo (0: none) */
	uint64_t srtt;
	uint64_t rttvar;
	uint64_t rto_min;
	uint64_t rto_max;
	uint64_t rto;
	int64_t rto_bias;
	struct sgw_rwc_stats st;
};

/*
 * Initialise c for a connection whose receiving leg starts at rcv_nxt (the
 * first ack number it will send) with relay r (only its limit is read).
 * 0 or -EINVAL (conf invalid, or PETRA/ACKRES b_th not below the limit).
 */
int sgw_rwc_init(struct sgw_rwc *c, const struct sgw_rwc_conf *conf,
		 const struct sgw_relay *r, uint32_t rcv_nxt, uint64_t now);

static inline int
sgw_rwc_ack(struct sgw_rwc *c, const struct sgw_relay *r, uint64_t now, uint32_t rcv_nxt,
	    struct sgw_rwc_out *out)
{
	return c->ops->ack(c, r, now, rcv_nxt, out);
}

static inline void
sgw_rwc_data(struct sgw_rwc *c, const struct sgw_relay *r, uint64_t now, uint32_t seq,
	     uint32_t len, uint64_t echo_ns)
{
	c->ops->data(c, r, now, seq, len, echo_ns);
}

static inline int
sgw_rwc_drain(struct sgw_rwc *c, const struct sgw_relay *r, uint64_t now, uint32_t rcv_nxt,
	      struct sgw_rwc_out *out)
{
	return c->ops->drain(c, r, now, rcv_nxt, out);
}

static inline int
sgw_rwc_timer(struct sgw_rwc *c, const struct sgw_relay *r, uint64_t now, uint32_t rcv_nxt,
	      struct sgw_rwc_out *out)
{
	return c->ops->timer(c, r, now, rcv_nxt, out);
}

/* When the caller's timer for c should fire (absolute ns), or SGW_RWC_NEVER.
 * Read it after every call; a timer that fires early or late is harmless. */
static inline uint64_t
sgw_rwc_timer_at(const struct sgw_rwc *c)
{
	return c->timer_at;
}

/* ACKRES: the sender's RTO as currently estimated (bias and backoff applied). */
uint64_t sgw_rwc_rto_estimate(const struct sgw_rwc *c);

#ifdef __cplusplus
}
#endif

#endif /* SGW_RELAY_H */
