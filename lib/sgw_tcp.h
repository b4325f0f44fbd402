/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * TCP endpoint: one connection's protocol machine (RFC 9293) for the split
 * termination, plus the segment codec it speaks (header + options parse and
 * build, the IPv4/IPv6 pseudo-header checksum).
 *
 * Why our own: no packaged userspace TCP stack fits DPDK 22.11 and per-core
 * virtual time (VPP, TLDK, F-Stack, mTCP, Seastar are not packaged; lwIP has
 * globals and no DPDK driver). The shape follows VPP's src/vnet/tcp: a
 * connection struct grouped by cache line, input dispatched by state
 * (sgw_tcp_input.c), output in its own file (sgw_tcp_output.c), several timers
 * per connection by timer id on the caller's per-core wheel.
 *
 * Plain C11, no globals, no clock reads (time is passed in, ns, monotonic),
 * no allocation anywhere: the caller owns the connection memory (256 bytes,
 * 4 cache lines), the per-core stack struct (with its pool of SACK
 * scoreboards, see struct sgw_tcp_sb), the payload storage and the timer
 * wheel. docs/tcp-endpoint.md has the layout, the states and which RFC
 * features are done.
 *
 * Payload never lives here. Received bytes go to the caller's receive buffer
 * through ops->rx_data (at an offset from the in-order point, so out-of-order
 * data lands where it belongs; the endpoint keeps only (seq, len) records of
 * the holes' far side) and ops->rx_advance; the advertised window is
 * ops->rx_space. Sent bytes are the caller's send buffer, addressed by offset
 * from the first unacknowledged byte: the caller appends with sgw_tcp_send(),
 * the endpoint emits segments through ops->tx (header bytes + a byte range of
 * the send buffer) and reports acknowledged bytes through ops->tx_acked.
 *
 * Timers: the endpoint returns "arm timer id X at T" or "cancel X" in
 * struct sgw_tcp_out; the caller keeps them on its wheel (sgw_tev.h; the
 * connection has a handle slot per id for that, c->tw[]) and calls
 * sgw_tcp_timer() when one fires.
 */
#ifndef SGW_TCP_H
#define SGW_TCP_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------ segment codec */

#define SGW_TCP_F_FIN 0x01
#define SGW_TCP_F_SYN 0x02
#define SGW_TCP_F_RST 0x04
#define SGW_TCP_F_PSH 0x08
#define SGW_TCP_F_ACK 0x10
#define SGW_TCP_F_URG 0x20
#define SGW_TCP_F_ECE 0x40
#define SGW_TCP_F_CWR 0x80

#define SGW_TCP_HDR_LEN 20u
#define SGW_TCP_MAX_HDR_LEN 60u
#define SGW_TCP_MAX_SACK 4  /* as lib/sgw_parse.h (token for token, so both may be included) */
#define SGW_TCP_MAX_WSCALE 14u

/* Options present in a segment (struct sgw_tcp_seg.opts). */
#define SGW_TCP_O_MSS 0x01
#define SGW_TCP_O_WS 0x02
#define SGW_TCP_O_SACK_PERM 0x04
#define SGW_TCP_O_SACK 0x08
#define SGW_TCP_O_TS 0x10

struct sgw_tcp_sack {
	uint32_t left;  /* first seq of the block */
	uint32_t right; /* one past its last seq */
};

/*
 * One segment, parsed or to be built. Scalars in host order. win is the raw
 * 16-bit field (unscaled). On parse, data/len are the payload in the buffer
 * given; on build they are ignored (the payload is the caller's).
 */
struct sgw_tcp_seg {
	uint16_t sport;
	uint16_t dport;
	uint32_t seq;
	uint32_t ack;
	uint8_t flags;  /* SGW_TCP_F_* */
	uint8_t opts;   /* SGW_TCP_O_* present */
	uint16_t win;
	uint16_t urp;
	uint16_t mss;
	uint8_t wscale; /* parse: clamped to 14 (RFC 7323 2.3) */
	uint8_t n_sack;
	uint8_t hlen;   /* parse: header length with options */
	uint8_t pad[3];
	uint32_t tsval;
	uint32_t tsecr;
	struct sgw_tcp_sack sack[SGW_TCP_MAX_SACK];
	const uint8_t *data;
	uint32_t len;
};

/* Why a segment could not be parsed. Names: sgw_tcp_parse_reason_name. */
enum sgw_tcp_parse_reason {
	SGW_TCP_PR_OK = 0,
	SGW_TCP_PR_TRUNC,         /* fewer than 20 bytes */
	SGW_TCP_PR_BAD_DOFF,      /* data offset < 5 or past the buffer */
	SGW_TCP_PR_OPT_LEN,       /* option length missing, < 2 or past the header */
	SGW_TCP_PR_OPT_MSS,       /* MSS option not 4 bytes */
	SGW_TCP_PR_OPT_WS,        /* window scale not 3 bytes */
	SGW_TCP_PR_OPT_SACK_PERM, /* SACK-permitted not 2 bytes */
	SGW_TCP_PR_OPT_SACK,      /* SACK not 2 + 8n bytes, n in 1..4 */
	SGW_TCP_PR_OPT_TS,        /* timestamps not 10 bytes */
	SGW_TCP_PR__COUNT
};

const char *sgw_tcp_parse_reason_name(int reason);

/*
 * Parse the TCP header at p (len bytes: header + payload, the IP layer's
 * length). Never reads past p + len. Returns SGW_TCP_PR_OK or the reason;
 * ctr (SGW_TCP_PR__COUNT counters, may be NULL) counts every failure.
 * Unknown options are skipped; a repeated option: the last one counts.
 */
int sgw_tcp_seg_parse(const void *p, size_t len, struct sgw_tcp_seg *s, uint64_t *ctr);

/*
 * Bytes of options sgw_tcp_seg_build writes for s (a multiple of 4, <= 40):
 * MSS, WS, SACK-permitted, TS and SACK blocks as flagged in s->opts, each
 * padded with NOPs; SACK blocks beyond what fits in 40 bytes are left out.
 */
uint32_t sgw_tcp_opts_len(const struct sgw_tcp_seg *s);

/*
 * Write s's header and options into buf (cap bytes), checksum field 0.
 * Returns the header length, or 0 when cap is too small.
 */
uint32_t sgw_tcp_seg_build(void *buf, size_t cap, const struct sgw_tcp_seg *s);

/* Internet checksum pieces: sum 16-bit big-endian words (len even except the last piece). */
uint32_t sgw_tcp_csum_add(uint32_t sum, const void *p, size_t len);
uint16_t sgw_tcp_csum_fold(uint32_t sum);

/*
 * The TCP checksum (the value to store in bytes 16-17, big-endian) of a
 * segment made of hdr (hlen bytes, even, checksum field 0) then data (dlen
 * bytes), with the IPv4 (4-byte) or IPv6 (16-byte) addresses in network order.
 * Verifying: the same call over a received segment gives 0.
 */
uint16_t sgw_tcp_csum_ipv4(const uint8_t src[4], const uint8_t dst[4], const void *hdr,
			   size_t hlen, const void *data, size_t dlen);
uint16_t sgw_tcp_csum_ipv6(const uint8_t src[16], const uint8_t dst[16], const void *hdr,
			   size_t hlen, const void *data, size_t dlen);

/*
 * The RST answering seg when there is no connection for it (RFC 9293 3.10.7.1):
 * ACK set: <SEQ=SEG.ACK><CTL=RST>, else <SEQ=0><ACK=SEG.SEQ+SEG.LEN><CTL=RST,ACK>.
 * Ports swapped. Nothing for a RST. Returns 0 (nothing to send) or 1.
 */
int sgw_tcp_rst_for(const struct sgw_tcp_seg *seg, struct sgw_tcp_seg *rst);

/* ------------------------------------------------------------ connection */

enum sgw_tcp_state {
	SGW_TCP_CLOSED = 0,
	SGW_TCP_LISTEN,
	SGW_TCP_SYN_SENT,
	SGW_TCP_SYN_RCVD,
	SGW_TCP_ESTABLISHED,
	SGW_TCP_FIN_WAIT_1,
	SGW_TCP_FIN_WAIT_2,
	SGW_TCP_CLOSING,
	SGW_TCP_TIME_WAIT,
	SGW_TCP_CLOSE_WAIT,
	SGW_TCP_LAST_ACK,
	SGW_TCP_S__COUNT
};

const char *sgw_tcp_state_name(int state);

/* Timer ids (c->tw[id], struct sgw_tcp_out.timer_at[id]). */
enum sgw_tcp_timer_id {
	SGW_TCP_T_RTX = 0,   /* retransmission (SYN, SYN-ACK, data, FIN) */
	SGW_TCP_T_PERSIST,   /* zero-window probes */
	SGW_TCP_T_DELACK,    /* delayed ACK */
	SGW_TCP_T_WAIT,      /* TIME-WAIT 2MSL, FIN-WAIT-2 timeout; keepalive in the
			      * other synchronized states (conf.keepalive_idle_ns) */
	SGW_TCP_T__COUNT
};

#define SGW_TCP_NEVER UINT64_MAX

/* Events (struct sgw_tcp_out.events). */
#define SGW_TCP_EV_CONNECTED 0x01 /* reached ESTABLISHED */
#define SGW_TCP_EV_PEER_FIN 0x02  /* the peer's FIN: no more bytes will come (half-close) */
#define SGW_TCP_EV_RESET 0x04     /* reset: out->reason says why */
#define SGW_TCP_EV_CLOSED 0x08    /* CLOSED: every timer cancelled, the slot may be freed */
#define SGW_TCP_EV_TW_REUSE 0x10  /* input only: a new SYN for a TIME-WAIT connection;
				   * nothing done: close this one, give the SYN to a new one */

/* Why a connection was reset (out->reason). */
enum sgw_tcp_reset_reason {
	SGW_TCP_RR_NONE = 0,
	SGW_TCP_RR_REFUSED,  /* RST answering our SYN */
	SGW_TCP_RR_PEER,     /* RST from the peer in a synchronized state */
	SGW_TCP_RR_TIMEOUT,  /* retransmissions exhausted (we sent a RST) */
	SGW_TCP_RR_ABORT,    /* sgw_tcp_abort() (we sent a RST) */
	SGW_TCP_RR_PROTOCOL, /* bad ACK to our SYN-ACK in a passive open: RST sent */
};

/*
 * What a call asks of the caller. The caller zeroes it (sgw_tcp_out_reset)
 * before a call or a run of calls for one connection; later settings of a
 * timer override earlier ones.
 */
struct sgw_tcp_out {
	uint64_t timer_at[SGW_TCP_T__COUNT]; /* where timer_set has the bit: the new absolute
					      * deadline, SGW_TCP_NEVER = cancel */
	uint8_t timer_set;                   /* bit (1 << id) */
	uint8_t events;                      /* SGW_TCP_EV_* */
	uint8_t reason;                      /* enum sgw_tcp_reset_reason */
	uint8_t pad;
	uint32_t segs;                       /* segments emitted through ops->tx */
	uint32_t acked;                      /* send-buffer bytes acknowledged (ops->tx_acked) */
};

static inline void
sgw_tcp_out_reset(struct sgw_tcp_out *o)
{
	unsigned int i;

	for (i = 0; i < SGW_TCP_T__COUNT; i++)
		o->timer_at[i] = SGW_TCP_NEVER;
	o->timer_set = 0;
	o->events = 0;
	o->reason = 0;
	o->pad = 0;
	o->segs = 0;
	o->acked = 0;
}

struct sgw_tcp_conn;

/*
 * Congestion control, pluggable (a per-connection pointer). The generic code
 * does NewReno recovery (RFC 6582: cwnd = ssthresh + 3 MSS on the third
 * duplicate ACK, inflation, partial ACKs, exit at min(ssthresh, flight + MSS))
 * and the RTO's loss window (cwnd = 1 MSS); the algorithm decides growth and
 * the new ssthresh. Private state: c->cc_data.
 */
struct sgw_tcp_cc_ops {
	const char *name;
	void (*init)(struct sgw_tcp_conn *c);
	/* acked bytes of new data acknowledged outside recovery: grow cwnd */
	void (*ack)(struct sgw_tcp_conn *c, uint32_t acked, uint64_t now_ns);
	/* a loss (fast retransmit or RTO): the new ssthresh */
	uint32_t (*ssthresh)(struct sgw_tcp_conn *c, uint64_t now_ns);
	/* recovery ended (full ACK); may be NULL */
	void (*recovered)(struct sgw_tcp_conn *c, uint64_t now_ns);
};

/* RFC 5681 slow start (RFC 3465 byte counting, L = 2 MSS) and congestion avoidance. */
extern const struct sgw_tcp_cc_ops sgw_tcp_cc_newreno;

/*
 * CUBIC (RFC 9438: beta 0.7, C 0.4, Reno-friendly region, fast
 * convergence; no HyStart), lib/sgw_tcp_cubic.c.
 */
extern const struct sgw_tcp_cc_ops sgw_tcp_cc_cubic;

/*
 * The caller's side. ctx is struct sgw_tcp_stack.ctx. All may be called from
 * any sgw_tcp_* call on c.
 *   tx        emit a segment: hdr (hlen bytes, built, checksum 0) then
 *             data_len bytes of the send buffer from data_off (an offset from
 *             the first unacknowledged byte). The caller adds the IP header
 *             and the checksum (sgw_tcp_csum_*), and the addresses.
 *   rx_data   store len bytes at off bytes past the in-order point of the
 *             receive buffer (off > 0: out of order). Never beyond rx_space.
 *   rx_advance n more bytes are in order (readable by the application).
 *   rx_space  free bytes of the receive buffer from the in-order point.
 *   tx_acked  the first n bytes of the send buffer are acknowledged: drop
 *             them (data_off of later tx calls counts from after them).
 */
struct sgw_tcp_ops {
	void (*tx)(void *ctx, struct sgw_tcp_conn *c, const uint8_t *hdr, uint32_t hlen,
		   uint32_t data_off, uint32_t data_len);
	void (*rx_data)(void *ctx, struct sgw_tcp_conn *c, uint32_t off, const uint8_t *p,
			uint32_t len);
	void (*rx_advance)(void *ctx, struct sgw_tcp_conn *c, uint32_t n);
	uint32_t (*rx_space)(void *ctx, struct sgw_tcp_conn *c);
	void (*tx_acked)(void *ctx, struct sgw_tcp_conn *c, uint32_t n);
};

struct sgw_tcp_conf {
	uint16_t mss;              /* our MSS (the IP MTU minus 40 or 60): 1460 */
	uint8_t wscale;            /* offer window scaling (1) */
	uint8_t sack;              /* offer SACK-permitted (1) */
	uint8_t timestamps;        /* offer timestamps (1) */
	uint8_t syn_retries;       /* SYN / SYN-ACK retransmissions before giving up (6) */
	uint8_t data_retries;      /* RTO expiries of one segment before giving up (15) */
	uint8_t delack_segs;       /* ACK at once every this many data segments (2) */
	uint32_t rcv_buf;          /* the largest receive buffer: picks our window scale,
				    * and the receiver's SWS threshold (min(MSS, buf/2)) (4 MB) */
	uint32_t init_cwnd_segs;   /* initial window, segments (10, RFC 6928) */
	uint32_t cwnd_max;         /* cwnd cap, bytes: bounds a burst (64 MB) */
	uint64_t rto_init_ns;      /* RFC 6298: 1 s */
	uint64_t rto_min_ns;       /* 200 ms (Linux; RFC 6298 says 1 s) */
	uint64_t rto_max_ns;       /* 60 s */
	uint64_t delack_ns;        /* 40 ms; at most 200 ms */
	uint64_t msl_ns;           /* TIME-WAIT lasts 2 MSL: 30 s (Linux: 60 s TIME-WAIT) */
	uint64_t fin_wait2_ns;     /* FIN-WAIT-2 limit once our FIN is acked; 0: none (0:
				    * a half-closed connection may receive for ever) */
	/*
	 * Keepalive (RFC 9293 3.8.4, RFC 1122 4.2.3.6), off by default: after
	 * keepalive_idle_ns with nothing received and nothing in flight, a probe
	 * <SEQ=SND.UNA-1><ACK> every keepalive_intvl_ns; keepalive_probes
	 * unanswered probes -> RST, reset with SGW_TCP_RR_TIMEOUT.
	 */
	uint64_t keepalive_idle_ns;  /* 0: off (0; RFC 1122: at least 2 h when on) */
	uint64_t keepalive_intvl_ns; /* 75 s */
	uint8_t keepalive_probes;    /* 9 */
};

void sgw_tcp_conf_default(struct sgw_tcp_conf *conf);
/* NULL when valid, else the name of the first bad field. */
const char *sgw_tcp_conf_check(const struct sgw_tcp_conf *conf);

/* Counters (struct sgw_tcp_stack.ctr). Names: sgw_tcp_ctr_name. */
enum sgw_tcp_ctr {
	SGW_TCP_C_SEGS_IN = 0,
	SGW_TCP_C_SEGS_OUT,
	SGW_TCP_C_DATA_SEGS_OUT,
	SGW_TCP_C_RETX_SEGS,      /* data or FIN segments sent again */
	SGW_TCP_C_RTO,            /* retransmission timer expiries with data out */
	SGW_TCP_C_FAST_RETX,      /* fast retransmits (third duplicate ACK) */
	SGW_TCP_C_DUPACKS_IN,
	SGW_TCP_C_PAWS_DROP,      /* RFC 7323 PAWS: older timestamp */
	SGW_TCP_C_OUT_OF_WINDOW,  /* failed the acceptability test */
	SGW_TCP_C_CHALLENGE_ACK,  /* RFC 5961: RST or SYN in window, ACK out of range */
	SGW_TCP_C_RST_IN,         /* RST that reset a connection */
	SGW_TCP_C_RST_IGNORED,    /* RST out of window or not acceptable */
	SGW_TCP_C_RST_OUT,
	SGW_TCP_C_BAD_ACK,        /* ACK of data never sent: ACK sent back, dropped */
	SGW_TCP_C_NO_ACK_FLAG,    /* synchronized state, ACK bit missing: dropped */
	SGW_TCP_C_OOO_SEGS,       /* segments kept out of order */
	SGW_TCP_C_OOO_FULL,       /* out-of-order segment dropped: records full */
	SGW_TCP_C_RX_CLIPPED,     /* bytes beyond rx_space dropped */
	SGW_TCP_C_DUP_DATA,       /* segments with only old bytes */
	SGW_TCP_C_PERSIST_PROBES,
	SGW_TCP_C_DELACK_FIRED,
	SGW_TCP_C_ACKS_OUT,       /* pure ACKs sent */
	SGW_TCP_C_WND_UPDATES,    /* window updates after the application read */
	SGW_TCP_C_LISTEN_DROP,    /* LISTEN: anything but a SYN (an ACK gets a RST) */
	SGW_TCP_C_SYN_SENT_DROP,  /* SYN-SENT: unacceptable ACK or neither SYN nor RST */
	SGW_TCP_C_TIMEOUT_ABORT,
	SGW_TCP_C_TIMER_SPURIOUS, /* sgw_tcp_timer for a timer not armed */
	SGW_TCP_C_CLOSED_DROP,    /* input to a CLOSED connection */
	SGW_TCP_C_URG_IGNORED,    /* URG set: the pointer is ignored, the data kept */
	SGW_TCP_C_RTT_SAMPLES,
	SGW_TCP_C_SACK_RECOVERY,  /* RFC 6675 loss recoveries entered */
	SGW_TCP_C_SACK_RETX,      /* retransmissions chosen by NextSeg (rules 1 and 3) */
	SGW_TCP_C_RESCUE_RETX,    /* RFC 6675 rescue retransmissions (rule 4) */
	SGW_TCP_C_DSACK_IN,       /* RFC 2883 D-SACK blocks: ignored */
	SGW_TCP_C_SACK_BAD,       /* SACK blocks empty or outside (snd_una, snd_max]: ignored */
	SGW_TCP_C_SB_FULL,        /* SACK ranges forgotten: the scoreboard was full */
	SGW_TCP_C_SACK_RENEGE,    /* the ACK stopped at a SACKed range: scoreboard cleared */
	SGW_TCP_C_KEEPALIVE_PROBES,
	SGW_TCP_C_KEEPALIVE_ABORT, /* keepalive probes unanswered: RST sent */
	SGW_TCP_C_SB_NOMEM,       /* ACKs whose SACK blocks were ignored: no scoreboard free */
	SGW_TCP_C_SB_NOMEM_RECOVERY, /* loss recoveries run NewReno: no scoreboard free */
	SGW_TCP_C_ZERO_WND_OUT,   /* segments that advertised a zero window (buffer full) */
	SGW_TCP_C__COUNT
};

const char *sgw_tcp_ctr_name(int ctr);

/*
 * SACKed ranges the sender remembers (RFC 6675 scoreboard). More ranges than
 * this: the highest are forgotten (they are only retransmitted needlessly).
 */
#define SGW_TCP_SB_MAX 6u

/*
 * The sender's RFC 6675 scoreboard, out of line: 64 bytes. A connection
 * holds one only while the peer has SACKed data above snd_una or while it is
 * in SACK loss recovery (c->sb_idx, the board's index in its stack's pool);
 * an idle connection holds none, so that it fits 4 cache lines (the issue's
 * budget: 512 bytes per idle split connection). The boards come from the
 * stack's pool (per core, bounded: sgw_tcp_stack_set_sb_pool, else the
 * SGW_TCP_SB_POOL_DEFAULT built into the stack). When the pool is empty the
 * connection behaves as if the ACKs carried no SACK information: the blocks
 * are ignored (SGW_TCP_C_SB_NOMEM) and a loss is repaired by NewReno
 * (RFC 6582; SGW_TCP_C_SB_NOMEM_RECOVERY) - slower for that connection,
 * never wrong.
 */
struct sgw_tcp_sb {
	struct sgw_tcp_sack r[SGW_TCP_SB_MAX]; /* SACKed ranges above snd_una: seq order,
						* disjoint, not adjacent (c->sb_n of them) */
	uint32_t high_rxt;                     /* RFC 6675 HighRxt: end of the highest
						* retransmission (kept during recovery) */
	uint32_t next;                         /* free list link while free */
	const struct sgw_tcp_conn *owner;      /* the connection holding it, NULL: free */
};

#define SGW_TCP_SB_NONE UINT32_MAX  /* c->sb_idx: no scoreboard */
/* Boards built into struct sgw_tcp_stack (used until sgw_tcp_stack_set_sb_pool). */
#define SGW_TCP_SB_POOL_DEFAULT 64u

/* Per core: configuration, callbacks and counters shared by its connections. */
struct sgw_tcp_stack {
	struct sgw_tcp_conf conf;
	struct sgw_tcp_ops ops;
	void *ctx;
	uint8_t rcv_wscale;        /* from conf.rcv_buf */
	uint8_t isn_key_set;       /* sgw_tcp_stack_set_secret was called */
	uint8_t isn_key[16];       /* RFC 6528 secretkey (SipHash-2-4 key) */
	const struct sgw_tcp_cc_ops *cc; /* for new connections (NULL: NewReno) */
	uint64_t ctr[SGW_TCP_C__COUNT];
	uint64_t parse_ctr[SGW_TCP_PR__COUNT];
	/* the scoreboard pool: read sb_used / sb_used_max, write nothing */
	struct sgw_tcp_sb *sb_pool;  /* the caller's (set_sb_pool), NULL: sb_local */
	uint32_t sb_cap;             /* boards in the pool */
	uint32_t sb_next;            /* boards [sb_next, sb_cap) never used yet */
	uint32_t sb_free;            /* free list head (SGW_TCP_SB_NONE: empty) */
	uint32_t sb_used;            /* boards held by connections now */
	uint32_t sb_used_max;        /* the most ever held at once */
	uint32_t sb_pad;
	struct sgw_tcp_sb sb_local[SGW_TCP_SB_POOL_DEFAULT];
};

/* 0, or -1 when conf is invalid or an op is NULL. */
int sgw_tcp_stack_init(struct sgw_tcp_stack *st, const struct sgw_tcp_conf *conf,
		       const struct sgw_tcp_ops *ops, void *ctx);

/*
 * Use the caller's n scoreboards (pool, n * sizeof(struct sgw_tcp_sb) bytes,
 * best 64-byte aligned; it must outlive the stack) instead of the
 * SGW_TCP_SB_POOL_DEFAULT built in; pool NULL: the built-in ones again. Size
 * it for the connections that may hold SACK ranges or recover at the same
 * time (a few percent of the busy ones), not for all connections. Only while
 * no board is held (after sgw_tcp_stack_init, or once every connection closed):
 * 0, else -1 (nothing changed).
 */
int sgw_tcp_stack_set_sb_pool(struct sgw_tcp_stack *st, struct sgw_tcp_sb *pool, uint32_t n);

/*
 * c's scoreboard ranges (c->sb_n of them, seq order), or NULL when c holds
 * no scoreboard. For tests and diagnostics.
 */
const struct sgw_tcp_sack *sgw_tcp_sb_ranges(const struct sgw_tcp_stack *st,
					     const struct sgw_tcp_conn *c);

/* Starts a cache line (the header is also read by C++ tests). */
#ifdef __cplusplus
#define SGW_TCP_CACHE_LINE alignas(64)
#else
#define SGW_TCP_CACHE_LINE _Alignas(64)
#endif

/* Out-of-order records kept per connection: a peer can open at most this many holes. */
#define SGW_TCP_OOO_MAX 6u

/* Connection flags (c->flags). */
#define SGW_TCP_CF_TS 0x0001         /* timestamps negotiated */
#define SGW_TCP_CF_SACK 0x0002       /* SACK-permitted both ways */
#define SGW_TCP_CF_WS 0x0004         /* window scaling both ways */
#define SGW_TCP_CF_FIN_QUEUED 0x0008 /* the application closed: FIN after snd_end */
#define SGW_TCP_CF_FIN_SENT 0x0010   /* our FIN went out at least once */
#define SGW_TCP_CF_RCV_FIN 0x0020    /* the peer's FIN is in order (rcv_nxt counts it) */
#define SGW_TCP_CF_FIN_OOO 0x0040    /* the peer's FIN is known at rcv_fin_seq, data missing */
#define SGW_TCP_CF_RECOVERY 0x0080   /* NewReno fast recovery */
#define SGW_TCP_CF_RTT_TIMING 0x0100 /* rtt_seq / rtt_ts time a segment (Karn) */
#define SGW_TCP_CF_PASSIVE 0x0200    /* opened from LISTEN */
#define SGW_TCP_CF_ACK_NOW 0x0400    /* an ACK is due at the end of this call */
#define SGW_TCP_CF_DELACK 0x0800     /* an ACK is owed (delayed-ACK timer armed) */
#define SGW_TCP_CF_PEER_TS 0x1000    /* SYN_RCVD: the SYN had timestamps */
#define SGW_TCP_CF_PEER_WS 0x2000    /* SYN_RCVD: the SYN had window scale */
#define SGW_TCP_CF_PEER_SACK 0x4000  /* SYN_RCVD: the SYN had SACK-permitted */
#define SGW_TCP_CF_RESCUED 0x8000    /* RFC 6675: this recovery's rescue retransmission sent */
#define SGW_TCP_CF_KEEPALIVE 0x10000 /* T_WAIT runs as the keepalive timer */
#define SGW_TCP_CF_NOSB 0x20000      /* SACK on, but this recovery is NewReno: no
				      * scoreboard was free (SACK blocks ignored till it ends) */

/*
 * One connection: 256 bytes, 4 cache lines (320 before the SACK scoreboard
 * moved out of line to struct sgw_tcp_sb). Sequence numbers are 32-bit
 * serial. The caller allocates it 64-byte aligned (or anyhow: it works, only
 * slower) and must not write it except tw[] and user. Its memory may be
 * reused only once it is CLOSED (SGW_TCP_EV_CLOSED, or sgw_tcp_abort): that
 * returns its scoreboard, if any, to the stack's pool.
 */
struct sgw_tcp_conn {
	/* line 0: receive side, read by every segment */
	SGW_TCP_CACHE_LINE uint8_t state;  /* enum sgw_tcp_state */
	uint8_t rcv_wscale;          /* shift applied to the windows we advertise */
	uint8_t snd_wscale;          /* shift applied to the peer's windows */
	uint8_t armed;               /* timers running (bit per id) */
	uint32_t flags;              /* SGW_TCP_CF_* */
	uint32_t rcv_nxt;
	uint32_t rcv_adv;            /* right edge advertised (never retracted) */
	uint32_t last_ack_sent;      /* RFC 7323 Last.ACK.sent */
	uint32_t ts_recent;          /* RFC 7323 TS.Recent */
	uint64_t ts_recent_ns;       /* when TS.Recent was set (PAWS 24-day rule) */
	uint32_t irs;
	uint32_t rcv_fin_seq;        /* with CF_FIN_OOO: the peer's FIN */
	uint16_t rcv_mss;            /* the peer's full segment (delayed-ACK count) */
	uint8_t delack_cnt;          /* full segments not yet acknowledged */
	uint8_t ooo_n;               /* records in ooo[] */
	uint8_t ooo_last;            /* ooo[] index of the most recent block (SACK order) */
	uint8_t backoff;             /* RTO doublings since the last sample or new ACK */
	uint8_t retries;             /* RTO expiries of the current head */
	uint8_t persist_backoff;
	uint32_t user;               /* the caller's */
	uint32_t ts_offset;          /* added to our TSval clock (ms) */
	uint32_t iss;
	uint16_t sport;              /* our port (written in sport of our segments) */
	uint16_t dport;              /* the peer's */

	/* line 1: send side, read by every ACK */
	SGW_TCP_CACHE_LINE uint32_t snd_una;
	uint32_t snd_nxt;            /* next seq to send (rewound by an RTO) */
	uint32_t snd_max;            /* highest seq sent + 1 */
	uint32_t snd_end;            /* end of the application's data (FIN goes here) */
	uint32_t snd_wnd;            /* the peer's window, scaled, bytes */
	uint32_t snd_wl1;
	uint32_t snd_wl2;
	uint32_t snd_wnd_max;        /* RFC 5961 MAX.SND.WND */
	uint32_t cwnd;
	uint32_t ssthresh;
	uint32_t recover;            /* RFC 6582: snd_max at the start of recovery */
	uint32_t rtt_seq;            /* with CF_RTT_TIMING: the timed segment's end */
	uint16_t snd_mss;            /* payload bytes per segment (options taken off) */
	uint16_t dupacks;
	uint16_t mss_local;          /* our MSS, clamp (set before connect/listen) */
	uint16_t peer_mss;           /* the MSS option the peer sent (536 if none) */
	uint32_t last_rcv_ms;        /* when the last segment came (ms of now_ns; keepalive) */
	uint8_t sb_n;                /* ranges in the scoreboard (0 without one; here: read
				      * by every ACK, the board is not) */
	uint8_t ka_probes;           /* keepalive probes unanswered */
	uint16_t pad1;

	/* line 2: timers, RTT, congestion control */
	SGW_TCP_CACHE_LINE uint64_t rtt_ts;   /* with CF_RTT_TIMING: when it was sent */
	uint32_t srtt_us;            /* 0: no sample yet */
	uint32_t rttvar_us;
	uint32_t rto_us;             /* current RTO without backoff */
	uint32_t sb_idx;             /* scoreboard in the stack's pool, SGW_TCP_SB_NONE: none */
	const struct sgw_tcp_cc_ops *cc;
	uint8_t cc_data[32];         /* the algorithm's own state */

	/* line 3: out-of-order records (seq order, disjoint, not adjacent), timer handles */
	SGW_TCP_CACHE_LINE struct sgw_tcp_sack ooo[SGW_TCP_OOO_MAX];
	uint32_t tw[SGW_TCP_T__COUNT]; /* the caller's wheel handles, one per timer id */

	/*
	 * The sender's SACK scoreboard (RFC 6675) is not here: struct
	 * sgw_tcp_sb, attached by sb_idx while ranges are held or during SACK
	 * recovery (a fifth cache line every connection would pay for idle).
	 */
};

/*
 * Initialise c in CLOSED with the stack's defaults. iss: the initial send
 * sequence number (RFC 6528: sgw_tcp_isn); ports: ours and the peer's. The timestamp clock offset is derived
 * from iss. tw[] is set to UINT32_MAX (SGW_TW_INVALID).
 */
void sgw_tcp_conn_init(struct sgw_tcp_stack *st, struct sgw_tcp_conn *c, uint32_t iss,
		       uint16_t sport, uint16_t dport);

/*
 * RFC 6528 secretkey for sgw_tcp_isn: 16 bytes the caller draws from a
 * random source at start, after sgw_tcp_stack_init (the lib reads no clock
 * and no entropy).
 */
void sgw_tcp_stack_set_secret(struct sgw_tcp_stack *st, const uint8_t key[16]);

/*
 * RFC 6528 ISN = M + F(localip, localport, remoteip, remoteport, secretkey):
 * M the 4-microsecond timer (now_ns / 4000, modulo 2^32), F the low 32 bits
 * of SipHash-2-4 under the stack's secret of the message
 * localip | localport | remoteip | remoteport (ports big-endian; addresses
 * alen bytes each, 4 or 16, network order). Without a secret set the key is
 * all zeros (predictable: set one).
 */
uint32_t sgw_tcp_isn(const struct sgw_tcp_stack *st, const uint8_t *laddr,
		     const uint8_t *raddr, unsigned int alen, uint16_t lport, uint16_t rport,
		     uint64_t now_ns);

/*
 * The congestion control of the connections sgw_tcp_conn_init initialises
 * from now on (NULL: sgw_tcp_cc_newreno).
 */
void sgw_tcp_stack_set_cc(struct sgw_tcp_stack *st, const struct sgw_tcp_cc_ops *cc);

/*
 * This connection's congestion control (NULL: NewReno). Any time: the
 * algorithm starts from its initial state with the current cwnd and ssthresh.
 */
void sgw_tcp_set_cc(struct sgw_tcp_conn *c, const struct sgw_tcp_cc_ops *cc);

/* CLOSED -> LISTEN: the next SYN opens passively (its addresses are the caller's). */
int sgw_tcp_listen(struct sgw_tcp_stack *st, struct sgw_tcp_conn *c);

/* CLOSED -> SYN-SENT: sends the SYN. 0, or -1 if not CLOSED. */
int sgw_tcp_connect(struct sgw_tcp_stack *st, struct sgw_tcp_conn *c, uint64_t now_ns,
		    struct sgw_tcp_out *out);

/*
 * The application appended n bytes to the send buffer: send what the windows
 * allow. Accepted in every state before our FIN (SYN-SENT and SYN-RECEIVED
 * queue them). 0, or -1 after shutdown or when closed.
 */
int sgw_tcp_send(struct sgw_tcp_stack *st, struct sgw_tcp_conn *c, uint64_t now_ns,
		 uint32_t n, struct sgw_tcp_out *out);

/* The application will send no more (half-close): a FIN follows the data. 0 or -1. */
int sgw_tcp_shutdown(struct sgw_tcp_stack *st, struct sgw_tcp_conn *c, uint64_t now_ns,
		     struct sgw_tcp_out *out);

/* Send a RST (in a synchronized state) and go to CLOSED. */
void sgw_tcp_abort(struct sgw_tcp_stack *st, struct sgw_tcp_conn *c, uint64_t now_ns,
		   struct sgw_tcp_out *out);

/* The application read from the receive buffer: a window update if it opened enough. */
void sgw_tcp_rx_consumed(struct sgw_tcp_stack *st, struct sgw_tcp_conn *c, uint64_t now_ns,
			 struct sgw_tcp_out *out);

/* A parsed segment of this connection arrived (sgw_tcp_seg_parse, ports matched). */
void sgw_tcp_input(struct sgw_tcp_stack *st, struct sgw_tcp_conn *c, uint64_t now_ns,
		   const struct sgw_tcp_seg *seg, struct sgw_tcp_out *out);

/* Timer id fired (the caller cleared its handle, sgw_tev_fired). */
void sgw_tcp_timer(struct sgw_tcp_stack *st, struct sgw_tcp_conn *c, uint64_t now_ns,
		   unsigned int id, struct sgw_tcp_out *out);

/* Bytes in flight (sent, not acknowledged), the FIN and SYN counted. */
static inline uint32_t
sgw_tcp_flight(const struct sgw_tcp_conn *c)
{
	return c->snd_max - c->snd_una;
}

#ifdef __cplusplus
}
#endif

#endif /* SGW_TCP_H */
