/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MH-LIFT: the mobile host's half of LIFT (seed 000, section II; the
 * self-protection of section III). docs/lift.md, "MH-LIFT (the mobile host's
 * machine)", has the rules and the reasons for each choice; the header bytes
 * are lib/sgw_lift.h's codec (docs/wire-formats.md).
 *
 * What it owns, per mobile host (one machine per agent):
 *
 *   flow table  bounded (max_flows), caller's memory: flow id, the TCP
 *               4-tuple of the cleartext connection, downlink SPI and
 *               protocol, the connection's sequence state as the MH sees it.
 *   control     Setup when a connection is established (a SYN-ACK seen in
 *               either direction), Teardown when it ends (the MH ACKs the
 *               FH's FIN, an RST either way, idle expiry, self-protection),
 *               each retransmitted with backoff until the hub's Setup-ACK /
 *               Teardown-ACK (bit K) comes back, bounded tries.
 *   ACK path    each cleartext segment the host sends, before encryption, is
 *               classified (ACK of new data, duplicate, data, ...): the
 *               answer says send it plain, with a TCP-ACK LIFT header, or as
 *               a (FrACK, TCP ACK) pair, with both 8-byte headers built (D, F,
 *               S flags, the IPsec ACK Number).
 *   local ack   the downlink ESP sequence number of every received packet,
 *               per flow against its TCP sequence space: the IPsec ACK Number
 *               of an ACK is the highest ESP sequence number of the packets
 *               whose data that ACK acknowledges (the seed's rule).
 *   protection  uninvited zero-window probes from the FH (it was frozen
 *               although the MH's window is open) measured per flow: a run
 *               the MH's own replies do not end, or too large a share of time
 *               frozen, suspends LIFT for the flow, then the seed's test:
 *               data arriving with LIFT off means the freezes were forced.
 *
 * Not here: ESP itself, the TUN device, sockets, the clock. Time is passed in
 * (ns, monotonic); the caller asks sgw_lift_mh_next_deadline() when to call
 * sgw_lift_mh_poll(), which hands out the control packets that are due. Plain
 * C11, no globals, no allocation after init, every loop bounded by the
 * table sizes given at init.
 */
#ifndef SGW_LIFT_MH_H
#define SGW_LIFT_MH_H

#include <stddef.h>
#include <stdint.h>

#include "sgw_lift.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SGW_LIFT_MH_NEVER UINT64_MAX
#define SGW_LIFT_MH_MAX_FLOWS 4096u  /* flow ids are (generation, slot) in 16 bits */
#define SGW_LIFT_MH_MAX_TRACK 1024u  /* per-flow (TCP end, ESP seq) records */
#define SGW_LIFT_MH_MAX_SAS 256u

struct sgw_lift_mh_conf {
	uint32_t max_flows;          /* flow table capacity, 1..4096 (256) */
	uint32_t track;              /* downlink data records per flow, 4..1024 (64) */
	uint32_t max_sas;            /* downlink SAs counted, 1..256 (16) */
	uint8_t next_header;         /* uplink protection after the LIFT header (50 ESP) */
	/* Setup / Teardown retransmission */
	uint64_t ctrl_rto_ns;        /* first retransmission after this (1.5 s: a GEO
				      * round trip plus satlink's repair) */
	uint64_t ctrl_rto_max_ns;    /* backoff doubles up to this (8 s) */
	uint32_t ctrl_tries;         /* transmissions before giving up (6) */
	uint64_t idle_ns;            /* a flow silent this long is torn down (30 min) */
	uint64_t handshake_ns;       /* a SYN not answered this long: entry freed (75 s) */
	/* self-protection (section III) */
	uint32_t probe_run_max;      /* uninvited probes in one run: suspend (3) */
	uint64_t probe_run_max_ns;   /* a run whose probes span this: suspend (20 s) */
	uint64_t probe_quiet_ns;     /* no probe this long: the run is over (60 s) */
	uint64_t share_window_ns;    /* probed share measured over this (60 s) */
	uint32_t share_permille;     /* at most this share in probe runs (250) */
	uint64_t probe_guard_ns;     /* a probe counts only if data came this recently
				      * before its run began: keepalives excluded (30 s) */
	uint64_t test_ns;            /* LIFT off this long to find the cause (5 s) */
	uint64_t hold_ns;            /* forced: LIFT off this long, then tried
				      * again (300 s; 0: for the flow's life) */
	uint8_t ack_scope;           /* enum sgw_lift_mh_ack_scope (SA) */
};

/* What the IPsec ACK Number of a flow's ACK covers (docs/lift.md). */
enum sgw_lift_mh_ack_scope {
	SGW_LIFT_MH_ACK_FLOW = 0, /* the seed's: the packets of data this flow's
				   * ACKs acknowledged */
	SGW_LIFT_MH_ACK_SA,       /* also every packet received on the SA below
				   * this flow's first unacknowledged one (the
				   * same for one connection per SA) */
};

void sgw_lift_mh_conf_default(struct sgw_lift_mh_conf *conf);
/* NULL when conf is valid, else the name of the first bad field. */
const char *sgw_lift_mh_conf_check(const struct sgw_lift_mh_conf *conf);
/* Bytes sgw_lift_mh_init needs for conf (0 if invalid). */
size_t sgw_lift_mh_mem_size(const struct sgw_lift_mh_conf *conf);

struct sgw_lift_mh;

/* Lay the machine out in mem (any alignment). NULL on a bad conf / short mem. */
struct sgw_lift_mh *sgw_lift_mh_init(void *mem, size_t mem_len,
				     const struct sgw_lift_mh_conf *conf, uint64_t now_ns);

/* ------------------------------------------------------------- ACK path */

enum sgw_lift_mh_verdict {
	SGW_LIFT_MH_PLAIN = 0, /* send as plain ESP, no LIFT header */
	SGW_LIFT_MH_ACK,       /* one packet: ack_hdr | ESP(segment) */
	SGW_LIFT_MH_PAIR,      /* two packets, in this order, on the same SA with
				* consecutive ESP sequence numbers (the hub pairs
				* them by that): frack_hdr | ESP(sgw_lift_mh_frack_clone
				* of the segment), then ack_hdr | ESP(segment) */
};

/* Why: the classification of a segment (counted in tx_why[]). */
enum sgw_lift_mh_why {
	/* PLAIN */
	SGW_LIFT_MH_W_MALFORMED = 0, /* not a whole IPv4/IPv6 TCP segment */
	SGW_LIFT_MH_W_NOT_TCP,       /* another protocol */
	SGW_LIFT_MH_W_FRAGMENT,      /* an IPv4 fragment */
	SGW_LIFT_MH_W_IP6_EXT,       /* IPv6 extension headers (not walked) */
	SGW_LIFT_MH_W_NO_FLOW,       /* not a connection the table holds */
	SGW_LIFT_MH_W_TABLE_FULL,    /* a new connection, no free entry */
	SGW_LIFT_MH_W_HANDSHAKE,     /* SYN / SYN-ACK: before the Setup */
	SGW_LIFT_MH_W_OFF,           /* the hub refused the Setup, or it gave up */
	SGW_LIFT_MH_W_SUSPENDED,     /* self-protection: LIFT off for the flow */
	SGW_LIFT_MH_W_CLOSING,       /* after D / Teardown */
	SGW_LIFT_MH_W_NO_ACK,        /* no ACK flag */
	/* ACK (a TCP-ACK header) */
	SGW_LIFT_MH_W_PENDING,       /* Setup not acknowledged yet: no FrACK; S
				      * unless new data (then bare, F if data) */
	SGW_LIFT_MH_W_TRANSITORY,    /* (re)activated, no ACK of new data yet: S */
	SGW_LIFT_MH_W_DUP,           /* duplicate ACK: S */
	SGW_LIFT_MH_W_OLD,           /* an ACK behind one already sent: S */
	SGW_LIFT_MH_W_WIN_ZERO,      /* the MH's own window is zero: F */
	SGW_LIFT_MH_W_WIN_OPEN,      /* the window reopens after zero: F (unfreeze) */
	SGW_LIFT_MH_W_WIN_UPDATE,    /* same ACK, another window: F */
	SGW_LIFT_MH_W_PROBE_REPLY,   /* answers while the FH probes a freeze: F */
	SGW_LIFT_MH_W_DATA,          /* data or FIN, no new ACK: F */
	SGW_LIFT_MH_W_FIN_ACK,       /* acknowledges the FH's FIN: D F */
	SGW_LIFT_MH_W_RST,           /* an RST: D F */
	/* PAIR */
	SGW_LIFT_MH_W_NEW_DATA,      /* ACK of new data: FrACK + TCP ACK */
	SGW_LIFT_MH_W_NEW_DATA_PIGGY, /* ACK of new data with data or FIN: pair, F */
	SGW_LIFT_MH_W__COUNT
};

const char *sgw_lift_mh_why_name(int why);

struct sgw_lift_mh_tx_out {
	uint8_t verdict;       /* enum sgw_lift_mh_verdict */
	uint8_t why;           /* enum sgw_lift_mh_why */
	uint8_t flags;         /* D/F/S of the TCP-ACK header (SGW_LIFT_BIT_*) */
	uint8_t reserved;
	uint16_t flow_id;
	uint16_t reserved2;
	uint32_t ipsec_ack;    /* the IPsec ACK Number written in ack_hdr */
	uint8_t ack_hdr[SGW_LIFT_LEN];   /* ACK, PAIR */
	uint8_t frack_hdr[SGW_LIFT_LEN]; /* PAIR */
};

/*
 * A cleartext IP packet the host sends (read from the TUN device, before
 * encryption): pkt[0 .. len). dl_spi / dl_proto: the downlink SA the fixed
 * host uses toward this host for the packet's peer (the agent's SA config);
 * used when the packet opens a connection. Fills *tx and returns its verdict.
 * Never fails: what it cannot use is PLAIN, counted by reason.
 */
int sgw_lift_mh_tx(struct sgw_lift_mh *m, uint64_t now_ns, const void *pkt, size_t len,
		   uint32_t dl_spi, uint8_t dl_proto, struct sgw_lift_mh_tx_out *tx);

/*
 * Build the FrACK of a cleartext TCP/IP segment (IPv4 or IPv6 without
 * extension headers): the same IP and TCP headers (options kept), window 0,
 * no payload, sequence number advanced past the payload (and a FIN) it had so
 * that the fixed host accepts it after the original (a zero-length segment
 * with an old sequence number is outside RFC 793's acceptance test), PSH,
 * URG and FIN cleared, IP length, IPv4 header checksum and TCP checksum
 * recomputed. Returns the clone's length, or 0 if pkt is not such a segment
 * or cap is too small.
 */
size_t sgw_lift_mh_frack_clone(const void *pkt, size_t len, void *out, size_t cap);

/* ------------------------------------------------------------- downlink */

enum sgw_lift_mh_rx_why {
	SGW_LIFT_MH_RX_MALFORMED = 0, /* the inner packet is not a whole TCP segment */
	SGW_LIFT_MH_RX_NOT_TCP,
	SGW_LIFT_MH_RX_NO_FLOW,       /* not a connection the table holds */
	SGW_LIFT_MH_RX_TABLE_FULL,    /* a SYN, no free entry */
	SGW_LIFT_MH_RX_DATA,          /* new data tracked */
	SGW_LIFT_MH_RX_OLD,           /* data already received (a retransmission) */
	SGW_LIFT_MH_RX_PURE,          /* no data (an ACK from the FH) */
	SGW_LIFT_MH_RX_SYN,           /* SYN or SYN-ACK */
	SGW_LIFT_MH_RX_FIN,           /* the FH's FIN */
	SGW_LIFT_MH_RX_RST,           /* the FH's RST: Teardown */
	SGW_LIFT_MH_RX_PROBE,         /* an uninvited zero-window probe */
	SGW_LIFT_MH_RX_REKEY,         /* the flow's data came on another SPI */
	SGW_LIFT_MH_RX__COUNT
};

const char *sgw_lift_mh_rx_name(int why);

/*
 * A downlink ESP packet was received and decrypted: spi and seq from its ESP
 * header, inner[0 .. len) the cleartext IP packet (FH -> MH) as it goes to
 * the TUN device. Returns enum sgw_lift_mh_rx_why (counted).
 */
int sgw_lift_mh_rx(struct sgw_lift_mh *m, uint64_t now_ns, uint32_t spi, uint32_t seq,
		   const void *inner, size_t len);

/* ------------------------------------------------------------- control */

enum sgw_lift_mh_ctrl_why {
	SGW_LIFT_MH_C_SETUP_OK = 0,   /* the hub built the entry: LIFT on */
	SGW_LIFT_MH_C_SETUP_REFUSED,  /* full / bad protocol: LIFT off for the flow */
	SGW_LIFT_MH_C_TEARDOWN_OK,    /* removed (or already gone: status unknown flow) */
	SGW_LIFT_MH_C_BAD,            /* not a decodable acknowledgement */
	SGW_LIFT_MH_C_UNEXPECTED,     /* no such request outstanding (late, repeated) */
	SGW_LIFT_MH_C__COUNT
};

const char *sgw_lift_mh_ctrl_name(int why);

/*
 * A LIFT control packet from the hub (the bytes after the IP header): a
 * Setup-ACK or Teardown-ACK. Returns enum sgw_lift_mh_ctrl_why (counted).
 */
int sgw_lift_mh_ctrl_rx(struct sgw_lift_mh *m, uint64_t now_ns, const void *buf, size_t len);

/* A control packet to send: hdr[0..8) after an IP header with protocol lift_proto. */
struct sgw_lift_mh_ctrl {
	uint8_t hdr[SGW_LIFT_LEN];
	uint8_t kind;          /* SGW_LIFT_K_SETUP or SGW_LIFT_K_TEARDOWN */
	uint8_t retransmit;    /* 0 first transmission, else the try number - 1 */
	uint16_t flow_id;
};

/*
 * Timers: control packets due (first sends and retransmissions, up to cap of
 * them; more stay due), give-ups, the end of a self-protection test or hold,
 * idle expiry. Returns how many control packets it wrote to ctrl.
 */
uint32_t sgw_lift_mh_poll(struct sgw_lift_mh *m, uint64_t now_ns, struct sgw_lift_mh_ctrl *ctrl,
			  uint32_t cap);

/* When sgw_lift_mh_poll next has work (may be early, never late), or NEVER. */
uint64_t sgw_lift_mh_next_deadline(const struct sgw_lift_mh *m);

/* ------------------------------------------------------------ inspection */

struct sgw_lift_mh_stats {
	uint64_t tx_why[SGW_LIFT_MH_W__COUNT];
	uint64_t rx_why[SGW_LIFT_MH_RX__COUNT];
	uint64_t ctrl_why[SGW_LIFT_MH_C__COUNT];
	uint64_t pairs;              /* (FrACK, TCP ACK) pairs asked for */
	uint64_t flag_d, flag_f, flag_s;
	uint64_t flows_created;
	uint64_t flows_freed;
	uint64_t setups_sent;        /* first transmissions */
	uint64_t teardowns_sent;
	uint64_t ctrl_retx;          /* retransmissions */
	uint64_t setup_gaveup;       /* no Setup-ACK after ctrl_tries: LIFT off */
	uint64_t teardown_gaveup;    /* no Teardown-ACK: entry freed anyway */
	uint64_t setup_full;         /* Setup-ACK status full */
	uint64_t setup_bad_proto;    /* Setup-ACK status bad protocol */
	uint64_t idle_expired;
	uint64_t track_merged;       /* data records merged: the table was full */
	uint64_t esp_late;           /* downlink ESP behind the SA's highest */
	uint64_t esp_gap;            /* ahead by more than one */
	uint64_t sa_full;            /* SAs not counted: the SA table is full */
	/* self-protection */
	uint64_t probes;             /* uninvited zero-window probes */
	uint64_t probe_runs;         /* runs of them (freezes the MH saw) */
	uint64_t susp_run;           /* suspended: a run too long (probes or age) */
	uint64_t susp_share;         /* suspended: too large a share probed */
	uint64_t verdict_forced;     /* test: data came with LIFT off -> hold */
	uint64_t verdict_channel;    /* test: nothing came -> the channel: LIFT on again */
	uint64_t resumed;            /* hold over: LIFT tried again */
	uint32_t flows;              /* now */
	uint32_t sas;
};

void sgw_lift_mh_get_stats(const struct sgw_lift_mh *m, struct sgw_lift_mh_stats *st);

enum sgw_lift_mh_state {
	SGW_LIFT_MH_S_HANDSHAKE = 0, /* SYN seen, no SYN-ACK yet */
	SGW_LIFT_MH_S_PENDING,       /* Setup sent, not acknowledged */
	SGW_LIFT_MH_S_ACTIVE,        /* LIFT on */
	SGW_LIFT_MH_S_TEST,          /* suspended, finding the cause (section III) */
	SGW_LIFT_MH_S_HOLD,          /* suspended: the freezes looked forced */
	SGW_LIFT_MH_S_OFF,           /* Setup refused or given up */
	SGW_LIFT_MH_S_CLOSING,       /* D sent / Teardown pending */
};

struct sgw_lift_mh_flow_info {
	uint16_t flow_id;
	uint8_t state;             /* enum sgw_lift_mh_state */
	uint8_t transitory;        /* active, no ACK of new data since (re)activation */
	uint8_t ctrl_inflight;     /* 0 none, else 1 + SGW_LIFT_K_SETUP / _TEARDOWN */
	uint8_t ctrl_tries;
	uint8_t hub_entry;         /* the hub confirmed an entry */
	uint8_t probe_run;         /* uninvited probes in the open run (0: none) */
	uint32_t dl_spi;
	uint8_t dl_proto;
	uint32_t ipsec_ack;        /* highest IPsec ACK Number credited */
	uint32_t track_n;          /* data records waiting for an ACK */
	uint32_t rcv_nxt;          /* the highest in-order end of FH data seen */
	uint32_t ack_sent;         /* the highest ACK number the MH sent */
	uint64_t ctrl_next;        /* next (re)transmission, or NEVER */
	uint64_t state_until;      /* TEST / HOLD end, or NEVER */
};

/*
 * Look a flow up by the 4-tuple of a cleartext packet in either direction
 * (pkt as given to tx or rx). 0 and *info, or -1.
 */
int sgw_lift_mh_flow_get(const struct sgw_lift_mh *m, const void *pkt, size_t len,
			 struct sgw_lift_mh_flow_info *info);

#ifdef __cplusplus
}
#endif

#endif /* SGW_LIFT_MH_H */
