/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One half of a split TCP connection (terminal or hub): the local TCP leg
 * (lib/sgw_tcp.h) <-> two relay buffers (lib/sgw_relay.h) <-> the byte
 * stream over the satlink channel (lib/sgw_stream.h messages).
 *
 *   local peer <-TCP-> [ tcp | rx relay -> stream out ]  ~~satlink~~> far half
 *                      [     | tx relay <- stream in  ]  <~~satlink~~
 *
 * The rx relay is the TCP leg's receive buffer (its free space is the window
 * the leg advertises: RWND) and drains onto the satellite as far as the far
 * half's credit and the channel's room allow. The tx relay is the leg's send
 * buffer, filled by DATA from the far half, emptied as the local peer
 * acknowledges; its drain is the credit this half grants.
 *
 * Roles: the OPENER is the half the SYN arrived at (it terminates the SYN's
 * sender), the ACCEPTOR the far half, which opens toward the SYN's
 * destination with the SYN's source address and port. Either end (terminal
 * or hub) can be either. docs/tcp-split.md has the protocol.
 *
 * Plain C11, no globals, no clock reads (now in ns passed in), no allocation:
 * the caller owns struct sgw_split (64-byte aligned), the relay memory (from
 * its pool), the per-worker env and the timer wheel. The TCP stack of the
 * worker must have been initialised with sgw_split_tcp_ops and ctx = the env.
 * Every loop is bounded by local state.
 */
#ifndef SGW_SPLIT_H
#define SGW_SPLIT_H

#include <stddef.h>
#include <stdint.h>

#include "sgw_relay.h"
#include "sgw_stream.h"
#include "sgw_tcp.h"

#ifdef __cplusplus
extern "C" {
#endif

struct sgw_split;

enum sgw_split_role {
	SGW_SPLIT_OPENER = 0,   /* the SYN arrived here: the local leg is passive */
	SGW_SPLIT_ACCEPTOR,     /* OPEN arrived here: the local leg connects out */
};

enum sgw_split_mode {
	SGW_SPLIT_END_TO_END = 0, /* answer the SYN only once the far host answered */
	SGW_SPLIT_SPOOFED,        /* answer the SYN at once */
};

/* Stream state (sp->state). */
enum sgw_split_state {
	SGW_SPLIT_S_FREE = 0,
	SGW_SPLIT_S_OPENING,    /* opener: OPEN sent, no OPEN_OK; acceptor: connecting */
	SGW_SPLIT_S_OPEN,       /* stream up (FINs may have crossed) */
	SGW_SPLIT_S_DONE,       /* stream over; the TCP leg finishes (TIME-WAIT, last ACK) */
	SGW_SPLIT_S_CLOSED,     /* everything over: EV_CLOSED given, the caller frees it */
};

/* Timer ids: the TCP leg's 0..3 (enum sgw_tcp_timer_id), then the split's. */
#define SGW_SPLIT_T_RWC (SGW_TCP_T__COUNT)      /* anti-freeze check / PETRA, ACKRES */
#define SGW_SPLIT_T_IDLE (SGW_TCP_T__COUNT + 1) /* idle timeout */
#define SGW_SPLIT_T__COUNT (SGW_TCP_T__COUNT + 2)

/* Events (struct sgw_split_out.events). */
#define SGW_SPLIT_EV_CONNECTED 0x01 /* the stream is up (OPEN_OK sent or received) */
#define SGW_SPLIT_EV_CLOSED 0x02    /* all over, every timer cancelled: free it */
#define SGW_SPLIT_EV_TW_REUSE 0x04  /* a new SYN for this leg in TIME-WAIT (nothing done):
				     * free this one (sgw_split_abort(0)), open anew */
#define SGW_SPLIT_EV_MORE 0x08      /* the call's message budget (burst_msgs) ran out with
				     * messages still sendable (bytes with credit, or the
				     * FIN): call sgw_split_poll again soon (no other event
				     * may come: a local peer that has sent everything) */

/* What a call asks of the caller; zeroed by the call itself (sgw_split_out_reset). */
struct sgw_split_out {
	uint64_t timer_at[SGW_SPLIT_T__COUNT]; /* where timer_set has the bit: deadline or
						* SGW_TCP_NEVER (cancel) */
	uint8_t timer_set;
	uint8_t events;
};

/* Reset o (every call does it to its out first). */
void sgw_split_out_reset(struct sgw_split_out *o);

/* The connection as its SYN named it (network-order addresses). */
struct sgw_split_addr {
	uint8_t ipv6;
	uint8_t saddr[16]; /* the SYN's source (the client) */
	uint8_t daddr[16]; /* its destination (the server) */
	uint16_t sport;
	uint16_t dport;
};

/* A span of bytes. */
struct sgw_split_iov {
	const uint8_t *p;
	uint32_t len;
};

/*
 * The satellite leg's sending decision, one small interface (a later issue
 * plugs adaptive congestion control in here). The split sends at most
 * min(credit, can_send) bytes of messages per call.
 *   can_send  message bytes the stream's channel takes now (0: none)
 *   send      hand one message (iov[0..n), n <= 3, concatenated) to the
 *             satlink channel `channel` (sp NULL for a refusal without a
 *             split); 0 when taken, else nothing was taken (retried later)
 */
struct sgw_split_sat_ops {
	uint32_t (*can_send)(void *ctx, const struct sgw_split *sp, uint64_t now);
	int (*send)(void *ctx, struct sgw_split *sp, uint16_t channel,
		    const struct sgw_split_iov *iov, unsigned int n);
};

/*
 * The local side. tcp_tx: one TCP segment of sp's leg toward the local peer:
 * hdr (hlen bytes, checksum 0) then the data spans. The caller adds the IP
 * header: opener: from daddr to saddr; acceptor: from saddr to daddr (both
 * transparent), and the checksum.
 */
struct sgw_split_io_ops {
	void (*tcp_tx)(void *ctx, struct sgw_split *sp, const uint8_t *hdr, uint32_t hlen,
		       const struct sgw_split_iov *data, unsigned int n);
};

struct sgw_split_conf {
	uint32_t max_msg;          /* largest stream message, bytes (1400: one satlink frame) */
	uint32_t open_credit;      /* credit implied by OPEN: bytes the opener may send
				    * before OPEN_OK; an acceptor's tx relay holds at least
				    * this (65536; both ends must agree) */
	uint64_t idle_ns;          /* no segment and no message for this long: RST both
				    * ways (600 s; 0: never) */
	uint32_t burst_msgs;       /* messages sent per call at most (64) */
	struct sgw_rwc_conf rwc;   /* scheme for the local leg's ACKs: RWND default */
};

void sgw_split_conf_default(struct sgw_split_conf *conf);
/* NULL when valid, else the name of the first bad field. */
const char *sgw_split_conf_check(const struct sgw_split_conf *conf);

/* Counters (env->ctr). Names: sgw_split_ctr_name. */
enum sgw_split_ctr {
	SGW_SPLIT_C_OPENS = 0,       /* streams opened (OPEN sent) */
	SGW_SPLIT_C_ACCEPTS,         /* OPEN accepted */
	SGW_SPLIT_C_CONNECTED,       /* streams up */
	SGW_SPLIT_C_REFUSED_OUT,     /* OPEN_REFUSED sent */
	SGW_SPLIT_C_REFUSED_IN,      /* OPEN_REFUSED received */
	SGW_SPLIT_C_DATA_MSGS_OUT,
	SGW_SPLIT_C_DATA_BYTES_OUT,
	SGW_SPLIT_C_DATA_MSGS_IN,
	SGW_SPLIT_C_DATA_BYTES_IN,
	SGW_SPLIT_C_CREDIT_OUT,
	SGW_SPLIT_C_CREDIT_IN,
	SGW_SPLIT_C_FIN_OUT,
	SGW_SPLIT_C_FIN_IN,
	SGW_SPLIT_C_RST_OUT,
	SGW_SPLIT_C_RST_IN,
	SGW_SPLIT_C_CREDIT_STALL,    /* bytes waiting, no credit: the far relay is full */
	SGW_SPLIT_C_SAT_STALL,       /* bytes waiting, credit, no room in the channel */
	SGW_SPLIT_C_SEND_REFUSED,    /* sat send refused a message (kept, retried) */
	SGW_SPLIT_C_BAD_MSG,         /* undecodable (env->msg_err by reason) */
	SGW_SPLIT_C_PROTO_ERR,       /* bad offset, over the credit, credit too far, bad FIN,
				      * a message the state does not allow: stream reset */
	SGW_SPLIT_C_LATE_MSG,        /* a message after the stream was over: dropped */
	SGW_SPLIT_C_SYN_HELD_DUP,    /* a retransmitted SYN while the far leg opens */
	SGW_SPLIT_C_IDLE_TIMEOUT,
	SGW_SPLIT_C_ACKS_WITHHELD,   /* PETRA/ACKRES: pure ACKs not sent */
	SGW_SPLIT_C_ANTI_FREEZE,     /* RWND: forced window updates after a zero window */
	SGW_SPLIT_C_RELAY_CLIPPED,   /* bytes a TCP leg could not place in its relay */
	SGW_SPLIT_C_OPENS_SPOOFED,   /* of the opens, SYNs answered at once (spoofed) */
	SGW_SPLIT_C__COUNT
};

const char *sgw_split_ctr_name(int ctr);

/* Per worker. */
struct sgw_split_env {
	struct sgw_split_conf conf;
	struct sgw_tcp_stack *tcp;          /* ops = sgw_split_tcp_ops, ctx = this env */
	struct sgw_split_io_ops io;
	struct sgw_split_sat_ops sat;
	void *ctx;                          /* passed to io and sat */
	uint64_t now;                       /* the current call's time (callbacks read it) */
	uint64_t echo_ns;                   /* the segment in input: when we sent the ACK
					     * its TSecr echoes (0: unknown), for ACKRES */
	uint64_t ctr[SGW_SPLIT_C__COUNT];
	uint64_t msg_err[SGW_STREAM_E__COUNT];
};

/* The TCP stack's ops for split legs (ctx must be the env). */
extern const struct sgw_tcp_ops sgw_split_tcp_ops;

/* 0, or -1 when conf is invalid, an op is NULL, or tcp's ops are not the split's. */
int sgw_split_env_init(struct sgw_split_env *env, const struct sgw_split_conf *conf,
		       struct sgw_tcp_stack *tcp, const struct sgw_split_io_ops *io,
		       const struct sgw_split_sat_ops *sat, void *ctx);

/* Relay memory for one connection (the caller's pool): rings of a power-of-two size. */
struct sgw_split_bufs {
	void *rx_mem;      /* local leg's receive buffer -> satellite */
	uint32_t rx_ring;
	uint32_t rx_limit; /* B_size of that direction */
	void *tx_mem;      /* satellite -> local leg's send buffer */
	uint32_t tx_ring;
	uint32_t tx_limit;
};

/* Held SYN of an end-to-end open: what is needed to replay it into the leg. */
struct sgw_split_syn {
	uint32_t seq;
	uint32_t tsval;
	uint16_t win;
	uint16_t mss;
	uint8_t opts;   /* SGW_TCP_O_* */
	uint8_t wscale;
	uint8_t pad[2];
};

/*
 * One split connection half. 64-byte aligned (the TCP connection is first).
 * The caller reads it, writes only tw_split[] and user.
 */
struct sgw_split {
	struct sgw_tcp_conn tcp;        /* the local leg, 256 bytes */
	struct sgw_relay rx;            /* local peer -> satellite */
	struct sgw_relay tx;            /* satellite -> local peer */
	struct sgw_rwc *rwc;            /* PETRA/ACKRES only: the caller's, else NULL */
	uint32_t snd_edge;              /* far credit edge: stream bytes below it may go */
	uint32_t adv_edge;              /* credit edge we granted last */
	uint32_t freeze_nxt;            /* RWND anti-freeze: rcv_nxt when frozen */
	uint32_t rx_fin_off;            /* stream length the far side announced (FIN) */
	uint64_t last_active;
	uint64_t idle_at;               /* idle timer deadline armed (SGW_TCP_NEVER: none) */
	uint64_t freeze_at;             /* RWC timer deadline armed (SGW_TCP_NEVER: none) */
	uint32_t tw_split[2];           /* the caller's wheel handles for T_RWC, T_IDLE */
	uint32_t user;
	uint16_t channel;
	uint8_t state;                  /* enum sgw_split_state */
	uint8_t role;
	uint8_t mode;
	uint8_t flags;                  /* SGW_SPLIT_F_* (sgw_split.c) */
	uint8_t pending;                /* control messages not yet taken by the channel */
	uint8_t reason;                 /* refusal / RST reason pending or seen */
	uint8_t freeze_tries;           /* RWND anti-freeze updates sent in this freeze */
	uint8_t pad[3];
	struct sgw_split_syn syn;       /* end-to-end opener: the held SYN */
	struct sgw_split_addr addr;
};

/*
 * Opener: a SYN (parsed, its addresses in a) for a connection the rule splits.
 * Initialises sp with iss for the local leg, sends OPEN on channel; spoofed:
 * answers the SYN now; end-to-end: holds it until OPEN_OK. 0, or -1 (bad
 * arguments, bufs invalid, not a SYN: nothing sent, sp untouched but state).
 */
int sgw_split_open(struct sgw_split_env *env, struct sgw_split *sp, uint64_t now,
		   const struct sgw_split_addr *a, const struct sgw_tcp_seg *syn, uint8_t mode,
		   uint16_t channel, uint32_t iss, const struct sgw_split_bufs *bufs,
		   struct sgw_rwc *rwc, struct sgw_split_out *out);

/*
 * Acceptor: an OPEN arrived on channel (decoded). Initialises sp and connects
 * the local leg toward the destination (ports from the OPEN). 0, or -1
 * (bad arguments, tx relay below conf.open_credit): the caller then refuses
 * with sgw_split_refuse(NO_RESOURCES).
 */
int sgw_split_accept(struct sgw_split_env *env, struct sgw_split *sp, uint64_t now,
		     const struct sgw_stream_msg *open, uint16_t channel, uint32_t iss,
		     const struct sgw_split_bufs *bufs, struct sgw_rwc *rwc,
		     struct sgw_split_out *out);

/* Answer an OPEN we will not accept (no resources, table full): OPEN_REFUSED. 0 or -1. */
int sgw_split_refuse(struct sgw_split_env *env, uint16_t channel, uint8_t reason);

/* A TCP segment of sp's local leg (parsed, ports matched). */
void sgw_split_tcp_input(struct sgw_split_env *env, struct sgw_split *sp, uint64_t now,
			 const struct sgw_tcp_seg *seg, struct sgw_split_out *out);

/* A message on sp's channel (the whole channel payload). */
void sgw_split_stream_input(struct sgw_split_env *env, struct sgw_split *sp, uint64_t now,
			    const void *msg, size_t len, struct sgw_split_out *out);

/* Timer id (0 .. SGW_SPLIT_T__COUNT - 1) fired. */
void sgw_split_timer(struct sgw_split_env *env, struct sgw_split *sp, uint64_t now,
		     unsigned int id, struct sgw_split_out *out);

/* The channel has room again (or anything changed): send what may go. */
void sgw_split_poll(struct sgw_split_env *env, struct sgw_split *sp, uint64_t now,
		    struct sgw_split_out *out);

/* Give the connection up (satlink session lost, shutdown): RST both ways. */
void sgw_split_abort(struct sgw_split_env *env, struct sgw_split *sp, uint64_t now,
		     uint8_t rst_reason, struct sgw_split_out *out);

/*
 * The box is stopping (SIGINT/SIGTERM, before its ports stop): a half whose
 * stream still carries (not reset, not ended by FINs both ways) is reset both
 * ways as sgw_split_abort(SGW_STREAM_RST_ABORT) does: RST on the leg with its
 * sequence numbers (none to a leg still in SYN-SENT or LISTEN), RST ABORT to
 * the far half when the channel takes it (else pending: sgw_split_poll sends
 * it, EV_CLOSED once it went). 1 when it reset the half, 0 when there was
 * nothing to reset (ended cleanly or already reset; out as sgw_split_poll).
 */
int sgw_split_stop(struct sgw_split_env *env, struct sgw_split *sp, uint64_t now,
		   struct sgw_split_out *out);

/*
 * PETRA/ACKRES: the half's window control once its leg is established and
 * the control initialised (its stats, struct sgw_rwc_stats, are its own),
 * else NULL (RWND, or a leg not yet up: the memory may hold a previous
 * occupant's). For counters (the stage sums them into telemetry).
 */
const struct sgw_rwc *sgw_split_rwc(const struct sgw_split *sp);

/*
 * 1 when the half will never again touch its relays: the stream ended
 * cleanly (both FINs crossed, no RST), the leg is in TIME-WAIT (everything
 * it sent was acknowledged, nothing more can arrive) and both relays are
 * empty. Only the leg's TIME-WAIT is left: the caller may give the relays'
 * budget back, or reclaim the half when it needs the slot (a TIME-WAIT
 * dropped early, as Linux does past tcp_max_tw_buckets).
 */
int sgw_split_relays_done(const struct sgw_split *sp);

#ifdef __cplusplus
}
#endif

#endif /* SGW_SPLIT_H */
