/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The satlink stage (row SGW_STAGE_SATLINK of the stage table, stage.h): the
 * reliable satellite link protocol (lib/sgw_arq.h) in the dataplane, between
 * a hub's and a terminal's satellite ports. Owns the sessions (one per
 * terminal at the hub, one at a terminal), each on the worker that owns its
 * terminal; builds frames from mbufs (and seals them with lib/sgw_slcrypto.h
 * when the policy names a key file), paces data frames at the link's rate,
 * hands reassembled packets back to the pipeline through the re-inject
 * queue, and keeps one timer-wheel timer per session.
 * docs/satlink.md, "The dataplane stage". Its state hangs off the stage
 * table's slots: dp->sdata[SGW_STAGE_SATLINK] (struct sgw_sl) and each
 * worker's sctx[SGW_STAGE_SATLINK] (struct sgw_sl_worker).
 */
#ifndef SGW_DP_SATLINK_H
#define SGW_DP_SATLINK_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <rte_ether.h>
#include <rte_mbuf.h>

#include "sgw_arq.h"
#include "sgw_dp.h"
#include "sgw_ring.h"
#include "sgw_satlink.h"
#include "sgw_slcrypto.h"

#ifdef __cplusplus
extern "C" {
#endif

struct rte_hash;

/* Why the satlink stage dropped or bypassed something (per worker counters). */
enum sgw_sld_ctr {
	SGW_SLD_BYPASS_NO_TERMINAL = 0, /* IP leaving by the satlink port, no terminal: raw */
	SGW_SLD_BYPASS_NON_IP,          /* non-IP leaving by the satlink port: raw */
	SGW_SLD_BYPASS_RULE,            /* service bypass (rule or default): raw */
	SGW_SLD_NOT_OWNER,              /* terminal's session on another worker (hairpin) */
	SGW_SLD_SEND_QUEUE_FULL,        /* reliable: the session's feed queue full */
	SGW_SLD_SEND_TOO_BIG,           /* more than frame_size x max_frags */
	SGW_SLD_SEND_NOT_CONNECTED,     /* datagram while the session is not up */
	SGW_SLD_SEND_OTHER,             /* resetting, no room, closed */
	SGW_SLD_NO_MBUF,                /* no mbuf for a frame: the ARQ recovers it */
	SGW_SLD_PACER_FULL,             /* pacer queue full: frame dropped, recovered */
	SGW_SLD_RX_WRONG_PORT,          /* a satlink frame on another port */
	SGW_SLD_RX_NO_SESSION,          /* terminal id with no session here */
	SGW_SLD_RX_BAD_HEADER,          /* sgw_satlink_parse_hdr refused it (by reason below) */
	SGW_SLD_RX_CHAINED,             /* a multi-segment frame that could not be linearised */
	SGW_SLD_RX_CRYPTO,              /* refused by the crypto layer (reasons per session) */
	SGW_SLD_RX_NO_KEY_HERE,         /* ENCRYPTED frame but this end has no key file */
	SGW_SLD_RX_REFUSED,             /* refused by the ARQ (reasons per session), not dups */
	SGW_SLD_RX_DUPLICATE,           /* a DATA frame the session already had: no loss */
	SGW_SLD_RELEASED_RX,            /* received fragments released undelivered (incomplete
					 * or late datagrams, reassembly errors, peer restart) */
	SGW_SLD_RELEASED_UNACKED,       /* packets a peer restart released unacknowledged */
	SGW_SLD_DELIVER_NOT_IP,         /* a delivered packet that is not IPv4/IPv6 */
	SGW_SLD_DELIVER_OTHER_CHANNEL,  /* channel != 0: no upper layer for it yet */
	SGW_SLD_DELIVER_CHAIN_FAIL,     /* could not assemble the fragments */
	SGW_SLD_DELIVER_FULL,           /* the delivery queue was full */
	SGW_SLD_RX_OTHER_TERMINAL,      /* a terminal: another terminal's frame: no loss */
	SGW_SLD__COUNT
};

/* What a session's owner publishes for readers (telemetry, exit stats). */
struct sgw_sl_pub {
	uint8_t state;                  /* enum sgw_arq_state */
	uint32_t peer_epoch;
	uint32_t send_window;
	uint32_t pacer_held;
	uint32_t pacer_low;             /* the pacer's low-water mark now, frames */
	uint32_t queue_held;            /* reliable packets in the feed queue */
	struct sgw_arq_stats arq;
	struct sgw_slcrypto_stats crypto;
	uint64_t frames_tx_data;        /* DATA frames put on the wire */
	uint64_t frames_tx_ctrl;
	uint64_t frames_rx;             /* satlink frames taken for this session */
	uint64_t pkts_sent_reliable;    /* IP packets taken by the reliable service */
	uint64_t pkts_sent_datagram;
	uint64_t pkts_delivered;        /* IP packets reassembled and handed on */
	uint64_t bytes_delivered;
};

struct sgw_sl_sess {
	/* owner worker only */
	struct sgw_arq *arq;
	struct sgw_slcrypto_ctx *cc;    /* NULL: frames not protected */
	uint32_t owner;
	uint32_t term_id;
	char name[32];
	uint32_t timer;                 /* sgw_tw_handle_t, SGW_TW_INVALID: none */
	uint64_t timer_at;
	uint64_t ns_per_kbit;           /* pacing: ns per 1000 bits at the rate (x1000) */
	uint64_t pace_next_ns;          /* when the next paced frame may leave */
	bool pace_idle;                 /* pacer and feed queue were empty: nothing owed */
	struct sgw_ring pqr;            /* which slots of pq are held */
	uint32_t pq_low;                /* feed the ARQ while the pacer holds fewer frames */
	uint16_t pq_fs;                 /* the frame size pq_low was computed for */
	struct rte_mbuf **pq;           /* built frames waiting for the line */
	uint64_t *pq_tag;               /* beside pq: reliable DATA's seq << 32 | order, or ~0 */
	struct sgw_ring fqr;            /* which slots of fq are held */
	struct rte_mbuf **fq;           /* reliable packets waiting for the ARQ */
	uint32_t arq_pkts;              /* packets the ARQ holds (taken, not yet released) */
	uint64_t acked_seen;            /* the ARQ's pkts_acked when last looked at */
	bool touched;                   /* in the worker's touched list */
	struct sgw_sl_pub c;            /* the counters the stage keeps (arq/crypto: copies) */
	/* publication (seqlock: odd while the owner writes) */
	uint32_t pub_seq;
	struct sgw_sl_pub pub;
} __rte_cache_aligned;

/* dp->sl when the policy has a satlink section. */
struct sgw_sl {
	int16_t pidx;                   /* the satlink port */
	uint16_t port_id;
	uint32_t epoch;                 /* this end's epoch (unix seconds, see satlink.c) */
	uint32_t n_sess;
	struct sgw_sl_sess *sess;
	struct rte_hash *by_id;         /* terminal id -> session index (read only) */
	struct sgw_slcrypto_engine *eng[SGW_MAX_WORKERS];  /* per worker, with keys only */
	struct rte_ether_addr peer_mac;
	uint32_t tx_window, rx_window;  /* as computed from the rates */
	bool keyed;
	/*
	 * The mbuf dynamic flag (an ol_flags bit named SGW_SL_AUTH_FLAG_NAME)
	 * satlink sets on a packet it delivers from a session with AES-GCM on:
	 * the packet came from the satellite side, authenticated. Stages that
	 * act only on such packets (LIFT) test it with pidx == the satlink port.
	 */
	uint64_t auth_flag;
	/*
	 * The upper layer of the channels other than 0 (the TCP split's
	 * streams), set by its stage's init: it owns m (the message alone, no
	 * Ethernet header, one segment) from the call on. NULL: such deliveries
	 * are counted deliver_other_channel and freed.
	 */
	void (*chan_rx)(struct sgw_worker *w, uint32_t sess, uint16_t channel,
			struct rte_mbuf *m);
	/*
	 * The same upper layer: session sess's peer restarted (a new epoch; what
	 * the session held was released), on its owner worker. NULL: nothing.
	 */
	void (*sess_restart)(struct sgw_worker *w, uint32_t sess);
};

#define SGW_SL_AUTH_FLAG_NAME "sgw_satlink_auth"

#define SGW_SL_TOUCHED_MAX 64       /* sessions serviced once after a burst; more: at once */

/* What the stage makes (originated) and takes in without loss (consumed). */
enum sgw_sl_orig {
	SGW_SL_ORIG_DATA = 0,           /* DATA frames built (first copies, retransmissions) */
	SGW_SL_ORIG_CTRL,               /* control frames built (STATUS, HELLO, HELLO_ACK) */
	SGW_SL_ORIG__COUNT
};

enum sgw_sl_cons {
	SGW_SL_CONS_CARRIED = 0,        /* IP packets released: acknowledged, or sent as datagram */
	SGW_SL_CONS_CTRL_READ,          /* control frames received and taken by the session */
	SGW_SL_CONS_MERGED,             /* received fragments merged into their packet's first */
	SGW_SL_CONS_DUPS,               /* received DATA frames the session already had */
	SGW_SL_CONS_CHANNEL,            /* messages of channels != 0 handed to chan_rx */
	SGW_SL_CONS_OTHER_TERMINAL,     /* a terminal: other terminals' frames, freed unread */
	SGW_SL_CONS__COUNT
};

/* Per-worker scratch and counters (the worker's sctx[SGW_STAGE_SATLINK]). */
struct sgw_sl_worker {
	struct sgw_arq_out out;
	uint32_t act_cap;               /* the action array's size */
	uint32_t min_room;              /* actions a session call needs at least */
	bool started;
	uint32_t ntouched;
	uint32_t touched[SGW_SL_TOUCHED_MAX];
	uint64_t pub_ns;
	uint64_t bad_hdr[SGW_SL__REASON_COUNT];
	uint64_t ctr[SGW_SLD__COUNT];
	uint32_t drop_base;             /* sgw_stage_drop_base(SGW_STAGE_SATLINK) */
	/* The stage's terms of the accounting identity (docs/operations.md). */
	uint64_t orig[SGW_SL_ORIG__COUNT];
	uint64_t cons[SGW_SL_CONS__COUNT];
};

/* The drops.* index of loss why (its stage counter of the same name); -1: not a loss. */
int sgw_sl_drop_index(enum sgw_sld_ctr why);

/* The satlink stage's state, NULL while it is off. */
static inline struct sgw_sl *
sgw_sl_of(const struct sgw_dp *dp)
{
	return (struct sgw_sl *)dp->sdata[SGW_STAGE_SATLINK];
}

static inline struct sgw_sl_worker *
sgw_sl_worker_of(const struct sgw_worker *w)
{
	return (struct sgw_sl_worker *)w->sctx[SGW_STAGE_SATLINK];
}

/* Do two satlink frames name the same terminal id (both at least 8 bytes past l3)? */
static inline bool
sgw_sl_same_terminal(const struct rte_mbuf *a, uint16_t la, const struct rte_mbuf *b,
		     uint16_t lb)
{
	return rte_pktmbuf_data_len(a) >= la + 8u && rte_pktmbuf_data_len(b) >= lb + 8u &&
	       memcmp(rte_pktmbuf_mtod_offset(a, const uint8_t *, la + 4u),
		      rte_pktmbuf_mtod_offset(b, const uint8_t *, lb + 4u), 4) == 0;
}

/* A consistent copy of a session's published counters (any thread). */
void sgw_sl_read(const struct sgw_dp *dp, uint32_t sess, struct sgw_sl_pub *out);
/*
 * Packets and frames the stage holds now: feed queues, pacers, the ARQs (sent
 * packets not yet released, received fragments not yet delivered), delivery
 * queues. Exact only while the workers are stopped (the exit report, tests).
 */
uint64_t sgw_sl_held(const struct sgw_dp *dp);
/*
 * Bytes session sess holds waiting for the line: the IP packets in its feed
 * queue and the built frames in its pacer (read only; the session's owner
 * thread only, or with the workers stopped). Walks both queues.
 */
uint64_t sgw_sl_queued_bytes(const struct sgw_dp *dp, uint32_t sess);
/*
 * What session sess has put on the line so far (sgw_arq_get_tx_totals: first
 * transmissions and datagrams, their payload bytes, frames found lost); the
 * session's owner thread only. Zeros when there is no such session.
 */
void sgw_sl_tx_totals(const struct sgw_dp *dp, uint32_t sess, struct sgw_arq_tx_totals *t);

/*
 * Channels other than 0 (the TCP split's streams): message bytes on the
 * reliable service of session sess, on channel (1..65535). m holds the
 * message alone (one segment, no Ethernet header); the session's feed queue
 * takes it and the ARQ carries it like a reliable packet (released once
 * acknowledged: consumed as satlink_pkts_carried). 0 taken; -1 not taken,
 * the caller keeps m (not this worker's session, channel 0, queue full).
 */
int sgw_sl_send_channel(struct sgw_worker *w, const struct sgw_snapshot *s, uint32_t sess,
			uint16_t channel, struct rte_mbuf *m);
/* Messages the session's feed queue takes now (0: none, or not this worker's). */
uint32_t sgw_sl_channel_room(const struct sgw_worker *w, uint32_t sess);
/* The session's feed queue size (send_queue; 0: not this worker's session). */
uint32_t sgw_sl_channel_cap(const struct sgw_worker *w, uint32_t sess);
/* Messages of msg_bytes the session's pacer sends in ns at its rate (0: not this worker's). */
uint32_t sgw_sl_channel_msgs_in(const struct sgw_worker *w, uint32_t sess, uint64_t ns,
				uint32_t msg_bytes);
/* The session of terminal index term in snapshot s (-1: none). */
int32_t sgw_sl_sess_of_term(const struct sgw_snapshot *s, int32_t term);
/* The terminal index of session sess in snapshot s (-1: none), O(1). */
int32_t sgw_sl_term_of_sess(const struct sgw_snapshot *s, uint32_t sess);

#ifdef __cplusplus
}
#endif

#endif /* SGW_DP_SATLINK_H */
