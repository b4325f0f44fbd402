/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The XCP host agent's logic (issue 9, "Senders"; SatERN, seed 001): CUBIC-XCP
 * on an unmodified Linux host, cwnd = min(cwnd_cubic, cwnd_xcp), realised
 * without touching the kernel's TCP. The agent sits between the host's TCP and
 * the wire (control/agent/xcp_agent.c: a TUN device and raw IP sockets) and
 * sees every packet of the host's flows in both directions:
 *
 *   sender role   out: inserts the XCP header (lib/sgw_xcp.h, v2) between IP
 *                      and TCP: H_rtt = the agent's RTT estimate of the flow,
 *                      H_cwnd = cwnd_xcp, H_feedback = the increase wanted.
 *                 in:  strips the header of the ACKs, cwnd_xcp = max(cwnd_xcp
 *                      + reverse feedback, 1 MSS), and clamps the ACK's
 *                      advertised window to cwnd_xcp (never moving a right
 *                      edge the kernel has seen to the left), so the kernel's
 *                      own CUBIC sends at most min(cwnd_cubic, cwnd_xcp).
 *   receiver role in:  strips the header of data segments, adds up their
 *                      H_feedback per flow.
 *                 out: adds a header to the host's ACKs carrying that sum as
 *                      reverse feedback (then starts the sum again).
 *
 * Also here, for the hub's legacy mode (lib/sgw_xcp_legacy.h) to reuse: the
 * IP/TCP locator, the window clamp (one function for both), the RTT timer.
 *
 * Checksums: the TCP checksum never covers the XCP header (docs/wire-formats.md:
 * its pseudo-header has protocol 6 and the TCP length), so insert and strip
 * leave it as it is; the IPv4 header checksum is recomputed; the window clamp
 * updates the TCP checksum incrementally (RFC 1624).
 *
 * Plain C11: time passed in (ns, monotonic), no clock reads, no globals, no
 * allocation (the flow table is memory the caller gives at init), every loop
 * bounded by local constants. Bad input is counted by reason, never trusted.
 */
#ifndef SGW_XCP_AGENT_H
#define SGW_XCP_AGENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sgw_xcp.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- IP/TCP locator (raw IP packets, no link header) ---- */

enum sgw_xcpa_bad {
	SGW_XCPA_OK = 0,
	SGW_XCPA_B_IP_TRUNC,    /* under 20 (IPv4) / 40 (IPv6) bytes, or no version */
	SGW_XCPA_B_IP_VERSION,  /* version neither 4 nor 6 */
	SGW_XCPA_B_IP4_IHL,     /* IHL < 5 or past the packet */
	SGW_XCPA_B_IP_LEN,      /* total / payload length past the bytes given, or short */
	SGW_XCPA_B_IP6_EXT,     /* extension header cut short, or more than 8 */
	SGW_XCPA_B_FRAG,        /* a fragment (IPv4 MF/offset, IPv6 fragment header) */
	SGW_XCPA_B_IP6_AH,      /* AH or ESP before the transport: not touched */
	SGW_XCPA_B_TCP_TRUNC,   /* under 20 bytes of TCP */
	SGW_XCPA_B_TCP_DOFF,    /* data offset < 5 or past the segment */
	SGW_XCPA_B_XCP,         /* XCP header refused by sgw_xcp_parse */
	SGW_XCPA_B__COUNT
};

const char *
sgw_xcpa_bad_name(enum sgw_xcpa_bad b);

/* Where things are in one IP packet. Offsets from the packet's first byte. */
struct sgw_xcpa_pkt {
	uint8_t ver;        /* 4 or 6 */
	uint8_t proto;      /* the protocol after the IP headers (maybe the XCP number) */
	uint8_t tcp_flags;  /* valid when is_tcp */
	uint8_t is_tcp;     /* TCP follows (directly, or after the XCP header) */
	uint8_t xcp_err;    /* enum sgw_xcp_err: why the XCP header was refused (B_XCP) */
	uint8_t pad[3];
	uint16_t nh_off;    /* the byte holding proto: IPv4 9, IPv6 6 or in the last ext hdr */
	uint16_t l3_len;    /* IP header + options / extension headers */
	uint16_t xcp_len;   /* XCP header bytes (0 when none) */
	uint16_t tcp_off;   /* first byte of TCP (when is_tcp) */
	uint16_t tcp_hlen;  /* doff * 4 */
	uint32_t ip_len;    /* the IP datagram's length from its header (<= bytes given) */
	uint32_t seq, ack;
	uint16_t wnd;
	uint16_t pay_len;   /* TCP payload bytes */
	const uint8_t *src, *dst; /* addresses inside the packet (4 or 16 bytes) */
	uint16_t sport, dport;
	struct sgw_xcp_fields xcp; /* when xcp_len != 0 */
};

/*
 * Locate the IP headers, an XCP header (protocol xcp_proto) and TCP. IPv6
 * extension headers hop-by-hop, routing and destination options are walked
 * (at most 8); a fragment is refused (FRAG), AH/ESP too (IP6_AH). Non-TCP
 * after the headers is OK with is_tcp = 0. *pk is filled on OK (on B_XCP
 * only pk->xcp_err is).
 */
enum sgw_xcpa_bad
sgw_xcpa_locate(const uint8_t *p, size_t len, uint8_t xcp_proto, struct sgw_xcpa_pkt *pk);

/* TCP flags */
#define SGW_XCPA_TH_FIN 0x01
#define SGW_XCPA_TH_SYN 0x02
#define SGW_XCPA_TH_RST 0x04
#define SGW_XCPA_TH_ACK 0x10

/*
 * Insert a version-2 XCP header with fields *f (f->next is overwritten with
 * the packet's protocol) after the IP headers of pk's packet (no XCP header
 * yet): the transport part moves 20 bytes on, the protocol byte becomes
 * xcp_proto, the IPv4 total length / IPv6 payload length grow by 20 and the
 * IPv4 header checksum is recomputed. cap: bytes available at p. Returns the
 * new length, or 0 if cap is too small or the length would pass 65535
 * (nothing touched).
 */
size_t
sgw_xcpa_insert(uint8_t *p, size_t cap, const struct sgw_xcpa_pkt *pk, uint8_t xcp_proto,
		const struct sgw_xcp_fields *f);

/*
 * Remove the XCP header pk found (pk->xcp_len != 0): the rest moves back, the
 * protocol byte takes the header's next header, lengths shrink, the IPv4
 * header checksum is recomputed. Returns the new length (0: nothing to strip).
 * pk's transport offsets are updated.
 */
size_t
sgw_xcpa_strip(uint8_t *p, struct sgw_xcpa_pkt *pk);

/* ---- the window clamp (shared with lib/sgw_xcp_legacy.c) ---- */

/* The right edge (ack + window) last advertised toward a sender. */
struct sgw_xcpa_edge {
	uint32_t redge;
	uint8_t valid;
};

/*
 * Clamp the advertised window of the TCP header at tcp (tcp_len bytes, a
 * segment with the ACK flag) to at most limit bytes: window field =
 * max(1, limit >> shift) but never above the field as it was, and never so
 * small that ack + (field << shift) falls left of e->redge (then the field is
 * raised to hold the edge, up to the original). shift: the window scale in
 * force for this segment (0 on SYN segments). Updates the TCP checksum
 * incrementally and *e. Returns 1 if the field was lowered, 0 if unchanged
 * (also when the never-retract rule alone kept it), -1 if not an ACK or too
 * short (nothing touched). *held (if not NULL) is set when the edge rule
 * raised the field above what limit asked for.
 */
int
sgw_xcpa_clamp_window(uint8_t *tcp, size_t tcp_len, uint8_t shift, uint32_t limit,
		      struct sgw_xcpa_edge *e, bool *held);

/* ---- RTT of a flow from its own segments and ACKs (Karn: one timed segment) ---- */

struct sgw_xcpa_rtt {
	uint32_t snd_max;   /* highest sequence end seen sent */
	uint32_t t_end;     /* the timed segment's end */
	uint64_t t0;        /* when it was sent */
	uint32_t srtt_us;   /* 0 = no sample yet */
	uint8_t on;         /* a segment is being timed */
	uint8_t max_valid;
	uint8_t pad[2];
};

/*
 * A segment of the flow's data direction: seq, len (payload + SYN + FIN).
 * Returns 1 when a timing was abandoned (retransmission over the timed data).
 */
int
sgw_xcpa_rtt_sent(struct sgw_xcpa_rtt *r, uint32_t seq, uint32_t len, uint64_t now);

/* An ACK of the flow's reverse direction. Returns 1 when a sample was taken. */
int
sgw_xcpa_rtt_acked(struct sgw_xcpa_rtt *r, uint32_t ack, uint64_t now);

/* ---- the agent ---- */

enum sgw_xcpa_role {
	SGW_XCPA_SENDER = 0,
	SGW_XCPA_RECEIVER = 1,
};

struct sgw_xcpa_conf {
	uint8_t role;            /* enum sgw_xcpa_role */
	uint8_t xcp_proto;       /* 254 */
	uint8_t echo_fixed;      /* receiver, lab knob: echo echo_value instead of the sum */
	uint8_t pad;
	int32_t echo_value;
	uint32_t mss_default;    /* until the SYNs say: 1460 */
	uint32_t init_cwnd;      /* bytes; 0 = 10 MSS (Linux's initial window) */
	uint32_t cwnd_max;       /* the most the agent asks for and holds: 1 GiB */
	uint64_t idle_ns;        /* a flow not seen for this long is reused: 300 s */
	uint64_t closed_ns;      /* after RST or FIN both ways: 5 s */
};

void
sgw_xcpa_conf_default(struct sgw_xcpa_conf *c);

/* Counters. Names (sgw_xcpa_ctr_name) are the exit JSON's keys. */
enum sgw_xcpa_ctr {
	SGW_XCPA_C_OUT_PKTS = 0,   /* packets from the host */
	SGW_XCPA_C_OUT_INSERTED,   /* XCP header added */
	SGW_XCPA_C_OUT_NON_TCP,    /* passed untouched: not TCP */
	SGW_XCPA_C_OUT_BAD,        /* passed untouched: malformed (by reason below) */
	SGW_XCPA_C_OUT_NO_ROOM,    /* passed untouched: no 20 bytes of room / over 64 KiB */
	SGW_XCPA_C_OUT_HAS_XCP,    /* passed untouched: already carries XCP */
	SGW_XCPA_C_IN_PKTS,        /* packets from the wire */
	SGW_XCPA_C_IN_STRIPPED,    /* XCP header removed */
	SGW_XCPA_C_IN_PLAIN,       /* passed untouched: no XCP header */
	SGW_XCPA_C_IN_BAD,         /* dropped: malformed / XCP refused (by reason below) */
	SGW_XCPA_C_IN_NON_TCP,     /* stripped, not TCP: passed without flow state */
	SGW_XCPA_C_FLOWS_NEW,
	SGW_XCPA_C_FLOWS_REUSED,   /* a slot taken over from an idle or closed flow */
	SGW_XCPA_C_TABLE_FULL,     /* no slot: packet passed without flow state */
	SGW_XCPA_C_FEEDBACK,       /* sender: ACKs whose reverse feedback was applied */
	SGW_XCPA_C_NO_REVERSE,     /* sender: XCP ACKs without the reverse flag */
	SGW_XCPA_C_FB_POS_BYTES,   /* sender: sum of positive reverse feedback */
	SGW_XCPA_C_FB_NEG_BYTES,   /* sender: sum of |negative| reverse feedback */
	SGW_XCPA_C_CWND_FLOOR,     /* sender: cwnd_xcp held at 1 MSS */
	SGW_XCPA_C_CLAMPED,        /* sender: ACK windows lowered */
	SGW_XCPA_C_EDGE_HELD,      /* sender: the never-retract rule raised a clamp */
	SGW_XCPA_C_NO_SCALE,       /* sender: ACKs not clamped, handshake not seen */
	SGW_XCPA_C_RTT_SAMPLES,
	SGW_XCPA_C_RTT_KARN,       /* timings abandoned on retransmission */
	SGW_XCPA_C_ECHOED,         /* receiver: ACKs carrying reverse feedback */
	SGW_XCPA_C_ECHO_SEGS,      /* receiver: data segments whose feedback was summed */
	SGW_XCPA_C_CWND_CAPPED,    /* sender: an increase held at 2 x in flight + 2 MSS */
	SGW_XCPA_C_CWND_CAP_SENT,  /* of those, held by what was sent in a round trip */
	SGW_XCPA_C__COUNT
};

const char *
sgw_xcpa_ctr_name(enum sgw_xcpa_ctr c);

/* One flow as the agent keeps it (local = this host's end). */
struct sgw_xcpa_flow {
	uint8_t laddr[16];
	uint8_t raddr[16];
	uint16_t lport, rport;
	uint8_t family;          /* 0 = free slot, 4, 6 */
	uint8_t state;           /* SGW_XCPA_FS_* bits */
	uint8_t l_ws, r_ws;      /* window scale options of the local / remote SYN */
	uint32_t mss;
	uint64_t last_ns;
	/* sender role */
	uint32_t cwnd_xcp;       /* bytes */
	uint32_t peer_wnd;       /* the remote's last advertised window, bytes, before the clamp */
	struct sgw_xcpa_rtt rtt;
	struct sgw_xcpa_edge edge;
	uint32_t una;            /* highest ACK seen from the remote (FS_UNA) */
	/*
	 * Bytes of data segments sent (retransmissions too) in the current round
	 * of one smoothed RTT, and in the round before it: the window the
	 * sender's kernel is actually using, which the sequence-space flight
	 * overstates during loss recovery (the cumulative ACK stalls).
	 */
	uint32_t rt_bytes;
	uint32_t rt_prev;
	uint64_t rt_start_ns;
	/* receiver role */
	int64_t fb_sum;          /* H_feedback summed since the last ACK sent */
	uint32_t fb_segs;
	int32_t fb_last;
};

/*
 * Count a data segment's payload into f's rounds of one smoothed RTT
 * (nothing before the first RTT sample; a round with nothing sent leaves 0).
 */
void sgw_xcpa_round_sent(struct sgw_xcpa_flow *f, uint32_t bytes, uint64_t now);
/*
 * The flight the caps on increases use (the agent's cwnd_xcp, the legacy
 * mode's share): seq_flight (highest sent - highest ACK), or, once an RTT
 * is known and when it is less, what was sent in the last round trip
 * (*by_sent then true).
 */
uint32_t sgw_xcpa_cap_flight(const struct sgw_xcpa_flow *f, uint32_t seq_flight, bool *by_sent);

#define SGW_XCPA_FS_LSYN 0x01   /* local SYN seen (l_ws valid, 0xff = no option) */
#define SGW_XCPA_FS_RSYN 0x02   /* remote SYN seen */
#define SGW_XCPA_FS_LFIN 0x04
#define SGW_XCPA_FS_RFIN 0x08
#define SGW_XCPA_FS_RST 0x10
#define SGW_XCPA_FS_PEERW 0x20  /* peer_wnd valid */
#define SGW_XCPA_FS_UNA 0x40    /* una valid */

#define SGW_XCPA_PROBE 8u       /* slots looked at per lookup */

struct sgw_xcpa {
	struct sgw_xcpa_conf conf;
	struct sgw_xcpa_flow *flows;
	uint32_t n_flows;        /* a power of two */
	uint32_t active;         /* slots in use (may include idle ones not yet reused) */
	uint64_t ctr[SGW_XCPA_C__COUNT];
	uint64_t bad_out[SGW_XCPA_B__COUNT];
	uint64_t bad_in[SGW_XCPA_B__COUNT];
	uint64_t xcp_err[SGW_XCP_E__COUNT];  /* in: XCP headers refused, by reason */
};

/* Bytes of flow memory for n flows (n rounded down to a power of two, >= 8). */
size_t
sgw_xcpa_mem_size(uint32_t n);

/*
 * Start an agent with the caller's memory (mem_len bytes, aligned for
 * struct sgw_xcpa_flow): as many flows as fit, rounded down to a power of
 * two. Returns 0, or -1 if the memory holds fewer than 8 flows or the
 * configuration is unusable (role, cwnd_max < mss_default, mss_default 0).
 */
int
sgw_xcpa_init(struct sgw_xcpa *a, const struct sgw_xcpa_conf *c, void *mem, size_t mem_len);

enum sgw_xcpa_verdict {
	SGW_XCPA_PASS = 0,   /* send / deliver the packet as it is */
	SGW_XCPA_SEND,       /* send / deliver the rewritten packet (*len) */
	SGW_XCPA_DROP,       /* drop (counted) */
};

/*
 * A packet the host sent (read from the TUN), at p, *len bytes, cap bytes of
 * room at p. Sender: TCP gets the XCP header; receiver: TCP with the ACK flag
 * gets one with the reverse feedback. Anything the agent cannot handle goes
 * on untouched (PASS): the host's own packets are never dropped.
 */
enum sgw_xcpa_verdict
sgw_xcpa_out(struct sgw_xcpa *a, uint8_t *p, size_t *len, size_t cap, uint64_t now);

/*
 * A packet from the wire for the host, at p, *len bytes. A packet with an XCP
 * header loses it (SEND); one whose IP or XCP header is refused is dropped
 * (the host could not use it); one without XCP is PASS (the sender role
 * still clamps the window of a plain TCP ACK then: SEND if it did).
 */
enum sgw_xcpa_verdict
sgw_xcpa_in(struct sgw_xcpa *a, uint8_t *p, size_t *len, uint64_t now);

/*
 * The flow table, for the hub's legacy mode (lib/sgw_xcp_legacy.c), which
 * keeps its flows in a struct sgw_xcpa of its own: "local" is then the data
 * sender's end, "remote" the receiver's. flow_get: the flow, a new one
 * (create; counted), or NULL (table full when create: counted).
 */
struct sgw_xcpa_flow *
sgw_xcpa_flow_get(struct sgw_xcpa *a, uint8_t family, const uint8_t *laddr, uint16_t lport,
		  const uint8_t *raddr, uint16_t rport, uint64_t now, bool create);

/* A segment of the flow sent by the local (local) or the remote end: SYN
 * options (MSS, window scale; at a SYN an initial window of 10 MSS is set
 * again with the MSS now known), FIN, RST; the highest ACK from the remote. */
void
sgw_xcpa_flow_note(const struct sgw_xcpa *a, struct sgw_xcpa_flow *f, const uint8_t *p,
		   const struct sgw_xcpa_pkt *pk, bool local);

/* Window scale of the remote's windows: -1 while the handshake is unseen,
 * 0 if either SYN had no window scale option. */
int
sgw_xcpa_flow_shift(const struct sgw_xcpa_flow *f);

/* The flow of a local/remote address and port pair, or NULL (for reports and tests). */
const struct sgw_xcpa_flow *
sgw_xcpa_find(const struct sgw_xcpa *a, uint8_t family, const uint8_t *laddr,
	      uint16_t lport, const uint8_t *raddr, uint16_t rport, uint64_t now);

/* Visit slot i (0..n_flows): the flow or NULL if free / expired at now. */
const struct sgw_xcpa_flow *
sgw_xcpa_slot(const struct sgw_xcpa *a, uint32_t i, uint64_t now);

#ifdef __cplusplus
}
#endif

#endif /* SGW_XCP_AGENT_H */
