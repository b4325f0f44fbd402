/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * XCP for legacy senders (issue 9): the hub gives an XCP window to TCP flows
 * whose sender runs no agent and sends no XCP header, and enforces it by
 * clamping the window of the ACKs it forwards back to the sender.
 *
 * Per flow (TCP in the clear, IPv4 or IPv6), from what the hub forwards:
 *   cwnd estimate = bytes in flight: highest sequence forwarded toward the
 *                   bottleneck - highest ACK seen coming back;
 *   RTT estimate  = from a data segment to the first ACK covering it (one
 *                   timed segment at a time, Karn), lib/sgw_xcp_agent.h's timer;
 *   share         = the flow's XCP window: each data packet's feedback from
 *                   the controller (sgw_xcp_on_packet with the estimates, as
 *                   if the flow had sent H_cwnd and H_rtt) is added at once,
 *                   share = max(share + feedback, 1 MSS);
 *   enforcement   = the ACKs toward the sender carry min(their window, share)
 *                   (sgw_xcpa_clamp_window, the agent's clamp: never moving a
 *                   right edge the sender has seen to the left).
 * The sender's own congestion control still runs: it sends at most
 * min(cwnd_sender, share), the CUBIC-XCP rule without an agent.
 *
 * What it cannot do: TCP inside ESP (or any tunnel the hub cannot read) has
 * no visible sequence numbers, ACKs or window, and an ICV covers the window
 * field; such traffic is left alone and counts as load without feedback
 * (the caller's sgw_xcp_on_other). Only an agent that puts the XCP header
 * outside ESP gives such flows a share (docs/xcp.md, "Legacy senders").
 *
 * Plain C11, time passed in, no allocation (the flow table is the caller's
 * memory), bounded loops, bad input counted by reason.
 */
#ifndef SGW_XCP_LEGACY_H
#define SGW_XCP_LEGACY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sgw_xcp.h"
#include "sgw_xcp_agent.h"

#ifdef __cplusplus
extern "C" {
#endif

struct sgw_xcpl_conf {
	uint8_t xcp_proto;       /* packets already carrying XCP are not legacy: 254 */
	uint8_t pad[3];
	uint32_t mss_default;    /* until the SYNs say: 1460 */
	uint32_t init_share;     /* bytes; 0 = 10 MSS */
	uint32_t share_max;      /* 1 GiB */
	uint64_t idle_ns;        /* 300 s */
	uint64_t closed_ns;      /* 5 s after RST or FIN both ways */
};

void
sgw_xcpl_conf_default(struct sgw_xcpl_conf *c);

enum sgw_xcpl_ctr {
	SGW_XCPL_C_DATA_PKTS = 0,  /* packets given to sgw_xcpl_data */
	SGW_XCPL_C_DATA_TCP,       /* of those, TCP of a tracked flow (feedback applied) */
	SGW_XCPL_C_DATA_OTHER,     /* not TCP, or already XCP: caller counts it as load */
	SGW_XCPL_C_DATA_BAD,       /* malformed (by reason in bad[]) */
	SGW_XCPL_C_ACK_PKTS,       /* packets given to sgw_xcpl_ack */
	SGW_XCPL_C_ACK_NO_FLOW,    /* reverse TCP of no tracked flow: untouched */
	SGW_XCPL_C_ACK_BAD,
	SGW_XCPL_C_NO_RTT,         /* data before the flow's first RTT sample: feedback 0 */
	SGW_XCPL_C_FB_POS_BYTES,
	SGW_XCPL_C_FB_NEG_BYTES,
	SGW_XCPL_C_SHARE_FLOOR,    /* share held at 1 MSS */
	SGW_XCPL_C_SHARE_CAPPED,   /* share held at 2 x in flight + 2 MSS (sender not using it) */
	SGW_XCPL_C_SHARE_CAP_SENT, /* of those, held by what was sent in a round trip */
	SGW_XCPL_C_CLAMPED,        /* ACK windows lowered */
	SGW_XCPL_C_EDGE_HELD,      /* the never-retract rule raised a clamp */
	SGW_XCPL_C_NO_SCALE,       /* ACKs not clamped: handshake not seen (picked up
				    * mid-connection: the scale is unknown) */
	SGW_XCPL_C_RTT_SAMPLES,
	SGW_XCPL_C__COUNT
};

const char *
sgw_xcpl_ctr_name(enum sgw_xcpl_ctr c);

struct sgw_xcpl {
	struct sgw_xcpl_conf conf;
	struct sgw_xcpa tab;      /* the flow table (the agent's): local = data sender */
	uint64_t ctr[SGW_XCPL_C__COUNT];
	uint64_t bad[SGW_XCPA_B__COUNT];
};

/* Bytes of memory for n flows (as sgw_xcpa_mem_size). */
size_t
sgw_xcpl_mem_size(uint32_t n);

/* 0, or -1 (fewer than 8 flows fit, or an unusable configuration). */
int
sgw_xcpl_init(struct sgw_xcpl *l, const struct sgw_xcpl_conf *c, void *mem, size_t mem_len);

/*
 * A packet in the data direction (toward the bottleneck) as it joins the
 * queue: p, len = the IP packet; size = its length as the queue counts it.
 * acc, par: the controller's accumulator and this worker's parameters
 * (sgw_xcp_on_packet: the packet's terms are added, feedback is limited by
 * the budgets); acc NULL: sgw_xcp_feedback (formula only, nothing added).
 * Returns 1 for TCP of a tracked flow (*fb = the feedback applied to its
 * share), 0 for anything else (not TCP, XCP already, table full: the caller
 * counts it as load with sgw_xcp_on_other), -1 if malformed (also load).
 */
int
sgw_xcpl_data(struct sgw_xcpl *l, struct sgw_xcp_acc *acc, struct sgw_xcp_params *par,
	      const uint8_t *p, size_t len, uint32_t size, uint64_t now, int32_t *fb);

/*
 * A packet of the reverse direction (toward the sender), rewritten in place:
 * 1 if its window was lowered (TCP checksum updated), 0 if untouched, -1 if
 * malformed (untouched).
 */
int
sgw_xcpl_ack(struct sgw_xcpl *l, uint8_t *p, size_t len, uint64_t now);

/* The flow of a data sender / receiver pair, or NULL. */
const struct sgw_xcpa_flow *
sgw_xcpl_find(const struct sgw_xcpl *l, uint8_t family, const uint8_t *saddr,
	      uint16_t sport, const uint8_t *daddr, uint16_t dport, uint64_t now);

/* Bytes in flight of a flow as the hub estimates them (0 before any ACK). */
uint32_t
sgw_xcpl_inflight(const struct sgw_xcpa_flow *f);

#ifdef __cplusplus
}
#endif

#endif /* SGW_XCP_LEGACY_H */
