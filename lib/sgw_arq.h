/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * satlink session machine: the reliable satellite link protocol of one
 * hub-terminal pair, in the spirit of WISE's LLLL (seed 002): fragmentation
 * and reassembly, selective-repeat ARQ with timer-driven status frames
 * (cumulative ack + bitmap), k-fold retransmission of missing frames,
 * in-order delivery, a best-effort datagram service beside it, session setup
 * with epochs, keepalives and link-down detection. docs/satlink.md has the
 * wire format, the state machines and the reasons for each choice.
 *
 * Zero-copy and handle-based: the lib never touches payload bytes. Packets
 * come in as (uint64_t handle, length) and received frames as (parsed header,
 * handle); the lib answers with actions written into a caller-provided array
 * (struct sgw_arq_out): transmit this frame (a byte range of a packet, or a
 * control frame), deliver these received buffers, release this handle, or an
 * event. Handles are opaque (mbuf pointers in the dataplane).
 *
 * Time is passed in (ns, monotonic; a smaller value than before is taken as
 * the last one). sgw_arq_next_deadline() says when to call sgw_arq_poll()
 * next, so the caller arms one timer per session. Memory is allocated by
 * sgw_arq_create() only; no globals, no clock reads, plain C11.
 *
 * The action array: every call appends at out->act[out->n] and never writes
 * past out->cap. The array must hold at least SGW_ARQ_MIN_ROOM(max_frags)
 * actions (max_frags + 2: the largest packet's DELIVER run, which is never
 * split across calls); a smaller one is refused (-EINVAL, SGW_ARQ_RX_BAD_CALL,
 * poll does nothing). When the free part fills, the call stops where it is
 * and the work left is carried: sgw_arq_next_deadline() then returns the
 * current time and the next call (any of them, typically sgw_arq_poll with an
 * emptied array) continues. Process actions in array order (a TX_DATA may
 * precede the RELEASE of its handle). Only the datagram service needs free
 * room at once: sending a datagram of n fragments needs n + 1 free slots
 * (else -ENOSPC), delivering one n (else it is refused, SGW_ARQ_RX_NO_ROOM);
 * with an emptied array of SGW_ARQ_MIN_ROOM neither ever happens.
 */
#ifndef SGW_ARQ_H
#define SGW_ARQ_H

#include <stddef.h>
#include <stdint.h>

#include "sgw_fsize.h"
#include "sgw_satlink.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SGW_ARQ_MAX_WINDOW SGW_SATLINK_MAX_WINDOW  /* 8192 frames */
#define SGW_ARQ_MAX_FRAGS 1024u
#define SGW_ARQ_MAX_COPIES 8u
#define SGW_ARQ_MAX_SENDQ 65536u
#define SGW_ARQ_MAX_DGRAM_SLOTS 65536u
#define SGW_ARQ_NEVER UINT64_MAX
/* Smallest action array a call accepts (see "The action array" above). */
#define SGW_ARQ_MIN_ROOM(max_frags) ((uint32_t)(max_frags) + 2u)

struct sgw_arq_conf {
	uint32_t terminal_id;        /* written in every frame, checked on receive */
	uint32_t local_epoch;        /* != 0, unique per start of this end */
	uint32_t isn;                /* first seq of this end's spaces (0) */
	uint32_t tx_window;          /* frames outstanding, 1..8192 (rate x RTT / frame) */
	uint32_t rx_window;          /* frames this end accepts above its cum ack, 1..8192;
				      * announced in HELLO: the peer sends at most
				      * min(its tx_window, this) */
	uint32_t sendq_pkts;         /* packets queued beyond the window, 1..65536 */
	uint16_t frag_size;          /* payload bytes per frame (1400) */
	uint16_t max_frags;          /* fragments per packet, 1..1024 (64) */
	uint8_t retx_copies;         /* k: copies per retransmission, 1..8 (2) */
	uint64_t retx_spacing_ns;    /* between the k copies of a frame (5 ms) */
	uint8_t retx_copies_idle;    /* 1: copies 2..k of a repair only while the line
				      * is idle (sgw_arq_line_busy); 0: always (0) */
	uint8_t frag_adapt;          /* 1: reliable frames sized from the losses seen
				      * (lib/sgw_fsize.h), frag_min..frag_size; 0 (0) */
	uint16_t frag_min;           /* smallest adapted frame payload, 64..frag_size (256);
				      * adapting, max_frags >= 2 frag_size / frag_min + 2
				      * and packets up to frag_min x max_frags bytes */
	uint16_t frame_overhead;     /* wire bytes per frame besides payload, for the
				      * adaptation's model (22 + 14 = 36) */
	uint64_t status_interval_ns; /* status timer (20 ms) */
	uint64_t status_min_gap_ns;  /* at most one status per this (5 ms) */
	uint64_t rtt_init_ns;        /* RTT before the first sample (600 ms) */
	uint64_t rtt_fixed_ns;       /* != 0: use this RTT, no estimation (0) */
	uint64_t rto_min_ns;         /* the RTO's floor (200 ms) */
	uint64_t rto_max_ns;         /* the backoff's ceiling (10 s); an RTO the RTT
				      * gives above it is kept (at most 60 s) */
	uint64_t keepalive_ns;       /* a status when nothing was sent for this (500 ms) */
	uint64_t link_down_ns;       /* link down when nothing heard for this (2 s) */
	uint64_t hello_interval_ns;  /* HELLO repeat while connecting (1 s) */
	uint32_t dgram_slots;        /* datagram fragments held for reassembly (256) */
	uint64_t dgram_timeout_ns;   /* an incomplete datagram is dropped after (200 ms) */
	uint64_t wire_wait_ns;       /* 0: a frame's retransmission timer runs from its
				      * emission (0); else from sgw_arq_on_wire, and
				      * from emission + this if that never comes */
};

/* Fill *conf with the defaults above (terminal_id 0, local_epoch 1). */
void sgw_arq_conf_default(struct sgw_arq_conf *conf);
/* NULL when conf is valid, else the name of the first bad field. */
const char *sgw_arq_conf_check(const struct sgw_arq_conf *conf);
/* Bytes sgw_arq_create() allocates for conf (0 if invalid): the whole footprint. */
size_t sgw_arq_footprint(const struct sgw_arq_conf *conf);

struct sgw_arq;

/* NULL on an invalid conf or no memory. The session starts connecting. */
struct sgw_arq *sgw_arq_create(const struct sgw_arq_conf *conf, uint64_t now_ns);
/* Frees the session. Handles still held are not released: drain first. */
void sgw_arq_destroy(struct sgw_arq *arq);

/* ---------------------------------------------------------------- actions */

enum sgw_arq_act_type {
	SGW_ARQ_ACT_TX_DATA = 1, /* send a DATA frame: header from sgw_arq_write_data_hdr,
				  * then bytes [offset, offset + len) of handle */
	SGW_ARQ_ACT_TX_CTRL,     /* send a control frame: sgw_arq_write_ctrl builds it */
	SGW_ARQ_ACT_DELIVER,     /* one received fragment, in order; a packet is the run
				  * from a FIRST to a LAST fragment, never split across
				  * calls; the handle is the caller's again */
	SGW_ARQ_ACT_RELEASE,     /* the caller may free handle */
	SGW_ARQ_ACT_EVENT,       /* code: enum sgw_arq_event */
};

enum sgw_arq_event {
	SGW_ARQ_EV_LINK_UP = 1,   /* session established, or the link heard again */
	SGW_ARQ_EV_LINK_DOWN,     /* nothing heard for link_down_ns */
	SGW_ARQ_EV_PEER_RESTART,  /* the peer has a new epoch: everything held was
				   * released, sequence spaces start over */
};

struct sgw_arq_act {
	uint8_t type;        /* enum sgw_arq_act_type */
	uint8_t flags;       /* TX_DATA, DELIVER: SGW_SL_F_FIRST/LAST/RETX/DATAGRAM */
	uint8_t code;        /* TX_CTRL: SGW_SL_STATUS/HELLO/HELLO_ACK; EVENT: event */
	uint8_t retx;        /* TX_DATA: 0 first transmission, i: i-th retransmitted copy */
	uint16_t channel;    /* TX_DATA, DELIVER */
	uint16_t len;        /* TX_DATA, DELIVER: payload bytes of the frame */
	uint32_t seq;        /* TX_DATA, DELIVER: seq (datagram seq with DATAGRAM) */
	uint32_t offset;     /* TX_DATA: first byte of the frame within the packet */
	uint32_t peer_epoch; /* TX_DATA, TX_CTRL: the peer epoch the frame was made for */
	uint32_t order;      /* TX_DATA: this transmission's number (sgw_arq_on_wire) */
	uint64_t handle;     /* TX_DATA: packet; DELIVER: received buffer; RELEASE */
};

/* Where a call appends actions: act[n .. cap). The caller resets n. */
struct sgw_arq_out {
	struct sgw_arq_act *act;
	uint32_t n;
	uint32_t cap;
};

/* ------------------------------------------------------------------ calls */

#define SGW_ARQ_SEND_DATAGRAM 0x1u  /* best-effort service: never retransmitted */

/*
 * Hand a packet (handle, len bytes) to the session for channel. Reliable:
 * queued (bounded by sendq_pkts), sent within the window, retransmitted until
 * acknowledged, released (RELEASE) once acknowledged; queued also while
 * connecting or while the link is down. Datagram: sent now as n = ceil(len /
 * frag_size) frames and released at once (TX_DATA x n, then RELEASE).
 * Returns 0 when the session took the handle, else (the caller keeps it):
 *   -ENOBUFS   reliable: window and send queue full (counted window_full)
 *   -EMSGSIZE  len 0, or more than frag_size * max_frags bytes (frag_min *
 *              max_frags with frag_adapt)
 *   -ENOTCONN  datagram while the session is not up or the link is down
 *   -ENOSPC    datagram: fewer than n + 1 free action slots
 *   -EAGAIN    the session is releasing a reset's handles; retry after a poll
 *   -ESHUTDOWN drained
 *   -EINVAL    out is NULL or its array is below SGW_ARQ_MIN_ROOM(max_frags)
 */
int sgw_arq_send(struct sgw_arq *arq, uint64_t now_ns, uint16_t channel, uint64_t handle,
		 uint32_t len, unsigned int flags, struct sgw_arq_out *out);

/* Why a received frame was not taken. Names: sgw_arq_rx_reason_name. */
enum sgw_arq_rx_reason {
	SGW_ARQ_RX_OK = 0,         /* taken (DATA: the session holds the handle) */
	SGW_ARQ_RX_DUP,            /* already received */
	SGW_ARQ_RX_OUT_OF_WINDOW,  /* beyond the receive ring */
	SGW_ARQ_RX_STALE_EPOCH,    /* epochs are not this session's */
	SGW_ARQ_RX_BAD_TERMINAL,   /* terminal id is not this session's */
	SGW_ARQ_RX_BAD_FRAME,      /* bad body, wrong type for the call, impossible ack */
	SGW_ARQ_RX_DGRAM_LATE,     /* datagram older than one already delivered */
	SGW_ARQ_RX_NO_ROOM,        /* datagram: no room in the actions or the table */
	SGW_ARQ_RX_RESETTING,      /* releasing a reset's handles */
	SGW_ARQ_RX_CLOSED,         /* drained */
	SGW_ARQ_RX_BAD_CALL,       /* no header, or an action array below the minimum */
	SGW_ARQ_RX__COUNT
};

const char *sgw_arq_rx_reason_name(int reason);

/*
 * A DATA frame arrived: h parsed by sgw_satlink_parse_hdr (h->payload_len is
 * the plaintext payload length: the caller sets it after decryption), handle
 * the buffer holding it. SGW_ARQ_RX_OK: the session holds the handle (it comes
 * back in a DELIVER or a RELEASE, possibly in this call's actions). Any other
 * value: the frame was refused (counted by reason) and the caller frees it.
 */
int sgw_arq_rx_data(struct sgw_arq *arq, uint64_t now_ns, const struct sgw_satlink_hdr *h,
		    uint64_t handle, struct sgw_arq_out *out);

/*
 * A control frame arrived (STATUS, HELLO, HELLO_ACK): h parsed, body the
 * (plaintext) body of body_len bytes. The bytes stay the caller's. Returns
 * SGW_ARQ_RX_OK or why it was refused (counted).
 */
int sgw_arq_rx_ctrl(struct sgw_arq *arq, uint64_t now_ns, const struct sgw_satlink_hdr *h,
		    const void *body, size_t body_len, struct sgw_arq_out *out);

/* Run the timers and any carried work. */
void sgw_arq_poll(struct sgw_arq *arq, uint64_t now_ns, struct sgw_arq_out *out);

/*
 * The TX_DATA action (seq, order) left for the line at now_ns: its
 * retransmission timer and RTT sample run from then, not from when the
 * action was emitted. For a caller whose frames wait before the line (a
 * pacer): with conf.wire_wait_ns set, a frame's timer starts only here (or
 * wire_wait_ns after its emission, if the caller never says: a frame it
 * dropped), and the caller calls it as each frame leaves, or is dropped. A
 * burst of repairs after an outage waits up to its own length in the pacer;
 * timed from the emission, the later ones timed out while still waiting and
 * were sent twice. An action that is no longer the frame's latest
 * transmission, or no longer in flight, is ignored.
 */
void sgw_arq_on_wire(struct sgw_arq *arq, uint32_t seq, uint32_t order, uint64_t now_ns);

/*
 * Whether frames wait before the line now (a pacer's queue, packets not yet
 * given to the session). With conf.retx_copies_idle, a repair found by a
 * status gets its k - 1 extra copies only when the line is idle: then they
 * take line time nothing else wanted and save a round trip if the first copy
 * is lost too; on a busy line each copy displaces a frame of new data, and
 * goodput pays for every repair twice. Frames the session can send at once
 * (window open, packets queued) count as busy without this call. Stays as
 * set until the next call (initially idle).
 */
void sgw_arq_line_busy(struct sgw_arq *arq, int busy);

/*
 * When to call sgw_arq_poll next: an absolute time in ns (<= the last now
 * when work is carried), or SGW_ARQ_NEVER. Valid until the next call.
 */
uint64_t sgw_arq_next_deadline(const struct sgw_arq *arq);

/*
 * Shut the session down: release every handle it holds (RELEASE actions; any
 * array size >= 1 will do). Returns 1 when nothing is held any more (the
 * session is then closed: every further call refuses), 0 when out filled
 * first (call again).
 */
int sgw_arq_drain(struct sgw_arq *arq, struct sgw_arq_out *out);

/*
 * Write the 22-byte header of a TX_DATA action's frame into buf. Returns its
 * length, or 0 when cap < 22 or the action is stale (made for a peer epoch
 * the session no longer has): then send nothing (the handle stays the
 * session's).
 */
size_t sgw_arq_write_data_hdr(const struct sgw_arq *arq, const struct sgw_arq_act *act,
			      void *buf, size_t cap);

/*
 * Build a TX_CTRL action's whole frame (header and body) into buf from the
 * session's state at now_ns. Returns the frame length (at most
 * SGW_SATLINK_STATUS_MAX_LEN), or 0 when cap is too small or the action is
 * stale: then send nothing. A STATUS needs at most 22 + 12 + 4 *
 * ceil(rx_window / 32) bytes.
 */
size_t sgw_arq_write_ctrl(const struct sgw_arq *arq, const struct sgw_arq_act *act,
			  uint64_t now_ns, void *buf, size_t cap);

/* ------------------------------------------------------------ inspection */

enum sgw_arq_state {
	SGW_ARQ_CONNECTING = 0,  /* HELLO exchange in progress */
	SGW_ARQ_UP,              /* established, link heard within link_down_ns */
	SGW_ARQ_DOWN,            /* established, nothing heard for link_down_ns */
	SGW_ARQ_CLOSED,          /* drained */
};

struct sgw_arq_stats {
	/* sender */
	uint64_t tx_frames;        /* reliable DATA frames, first transmissions */
	uint64_t tx_retx;          /* retransmitted copies */
	uint64_t retx_copies_saved; /* extra copies not sent: the line was busy */
	uint64_t frag_probes;      /* frag_adapt: packets cut in two to measure short frames */
	uint64_t frag_decisions;   /* frag_adapt: estimates made */
	uint64_t frag_changes;     /* frag_adapt: estimates that changed the frame size */
	uint32_t frag_size_now;    /* payload bytes per reliable frame now */
	uint32_t ber_est_ppb;      /* frag_adapt: last bit error estimate, per 10^9 bits */
	uint64_t tx_dgram_frames;  /* datagram DATA frames */
	uint64_t tx_bytes;         /* payload bytes of every DATA frame sent */
	uint64_t tx_new_bytes;     /* payload bytes of first transmissions and datagrams */
	uint64_t loss_status;      /* frames found missing from a status */
	uint64_t loss_timeout;     /* frames found missing by the retransmission timer */
	uint64_t pkts_queued;      /* reliable packets taken by sgw_arq_send */
	uint64_t pkts_acked;       /* reliable packets released after acknowledgement */
	uint64_t dgrams_sent;
	uint64_t window_full;      /* sends refused: window and send queue full */
	uint64_t send_refused;     /* other refusals (size, not connected, room, reset) */
	/* receiver */
	uint64_t rx_frames;        /* DATA frames taken or refused after the epoch check */
	uint64_t rx_bytes;         /* payload bytes of the DATA frames taken */
	uint64_t rx_refused[SGW_ARQ_RX__COUNT]; /* by reason: dup, out_of_window, stale_epoch.. */
	uint64_t pkts_delivered;
	uint64_t bytes_delivered;
	uint64_t dgrams_delivered;
	uint64_t dgram_expired;    /* datagram fragments released incomplete or late */
	uint64_t reasm_errors;     /* fragment runs that did not form a packet (released) */
	/* control */
	uint64_t status_tx;        /* includes keepalives */
	uint64_t keepalive_tx;
	uint64_t status_rx;
	uint64_t hello_tx;
	uint64_t hello_ack_tx;
	uint64_t hello_rx;         /* HELLO and HELLO_ACK */
	uint64_t bad_acks;         /* status bits for frames never sent (ignored) */
	uint64_t status_behind;    /* statuses whose cumulative ack is below snd_una */
	/* session */
	uint64_t link_ups;
	uint64_t link_downs;
	uint64_t peer_restarts;     /* a new peer epoch replaced a silent one */
	uint64_t peer_lost;         /* the silent peer showed it lost our session: reset */
	uint64_t hello_refused_live; /* HELLOs refused because the known peer is live */
	uint64_t events_dropped;   /* events lost because 16 were already waiting */
	/* RTT */
	uint64_t rtt_samples;
	uint64_t srtt_ns;
	uint64_t rttvar_ns;
	uint64_t rto_ns;           /* current, with backoff */
	/* occupancy now (handles held) */
	uint32_t tx_held;          /* frames in the ring (window + acked awaiting RELEASE) */
	uint32_t tx_outstanding;   /* frames sent and not acknowledged (<= send window) */
	uint32_t sendq_held;       /* packets in the send queue */
	uint32_t rx_held;          /* frames in the receive ring */
	uint32_t dgram_held;       /* datagram fragments held */
};

void sgw_arq_get_stats(const struct sgw_arq *arq, struct sgw_arq_stats *st);
enum sgw_arq_state sgw_arq_get_state(const struct sgw_arq *arq);
/* The peer epoch the session is paired with (0: none yet). */
uint32_t sgw_arq_peer_epoch(const struct sgw_arq *arq);
/* The send window in use: min(tx_window, the peer's rx_window); 0 before HELLO. */
uint32_t sgw_arq_send_window(const struct sgw_arq *arq);
/* Payload bytes per reliable frame now: frag_size, or the adapted size (frag_adapt). */
uint16_t sgw_arq_frag_size(const struct sgw_arq *arq);

/* What the sender has put on the line so far (cumulative, never reset). */
struct sgw_arq_tx_totals {
	uint64_t new_frames; /* DATA frames sent the first time, and datagrams */
	uint64_t new_bytes;  /* their payload bytes */
	uint64_t lost;       /* frames found lost (loss_status + loss_timeout): repairs owed */
};
/* Without copying the whole sgw_arq_stats: a per-session poll may call it often. */
void sgw_arq_get_tx_totals(const struct sgw_arq *arq, struct sgw_arq_tx_totals *t);

#ifdef __cplusplus
}
#endif

#endif /* SGW_ARQ_H */
