/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * BS-LIFT: the hub's half of LIFT, the Local IPsec-aware Freezing proTocol
 * (seed 000; docs/lift.md has the state machine and the reasons for each
 * choice, docs/wire-formats.md the header).
 *
 * Two parts:
 *
 *   codec     the LIFT header (Fig. 3 and 5 of the seed, padded to 8 bytes as
 *             lib/sgw_parse.h reserves it): a bounds-checked decoder that
 *             answers one reason per refusal, builders for every type, the
 *             Setup-ACK / Teardown-ACK satgw adds (the seed leaves the
 *             acknowledgement of control packets open), and the in-place
 *             strip that turns an IP | LIFT | ESP packet into IP | ESP.
 *   machine   the TCP Flow Table (flow id + MH address -> downlink SA), per
 *             downlink SA the highest ESP sequence number forwarded toward
 *             the MH and the out-of-order rule, per flow the held (FrACK, TCP
 *             ACK) pair, the local timer, the transitory phase, the D/F/S
 *             flags, and the security bounds on freezing (section III).
 *
 * Zero-copy and handle-based, like lib/sgw_arq.h: packets are opaque 64-bit
 * handles (mbuf pointers in the dataplane); the machine answers with actions
 * appended to a caller-provided array: forward this handle toward the fixed
 * host (LIFT header stripped), drop it (reason), (re)arm or cancel this
 * flow's timer, send this control acknowledgement. The caller owns the timer
 * wheel: one timer per flow, named by (flow index, generation).
 *
 * Time is passed in (ns, monotonic). All memory is the caller's, laid out by
 * sgw_lift_init(); nothing allocates, no globals, no clock reads, plain C11.
 * Every loop is bounded by the table sizes given at init.
 */
#ifndef SGW_LIFT_H
#define SGW_LIFT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ codec */

#define SGW_LIFT_LEN 8u            /* every LIFT header (Table I) */
#define SGW_LIFT_PROTO_DEFAULT 253 /* IP protocol (RFC 3692 experimental) */
#define SGW_LIFT_ESP_HDR_LEN 8u    /* SPI + sequence number */
#define SGW_LIFT_IPPROTO_ESP 50
#define SGW_LIFT_IPPROTO_AH 51

/* Byte 0 (bit 0 of the figures is the most significant bit). */
#define SGW_LIFT_BIT_A 0x80  /* 1: carries a TCP ACK or a FrACK; 0: control */
#define SGW_LIFT_BIT_T 0x40  /* type within the class */
#define SGW_LIFT_BIT_D 0x20  /* TCP ACK: delete the flow-table entry */
#define SGW_LIFT_BIT_F 0x10  /* TCP ACK: forward without delay */
#define SGW_LIFT_BIT_S 0x08  /* TCP ACK: store while the local timer runs */
#define SGW_LIFT_BIT_K 0x20  /* control class (A = 0): an acknowledgement (satgw) */

enum sgw_lift_kind {
	SGW_LIFT_K_SETUP = 0,     /* A=0 T=0: MH -> hub (Fig. 3A) */
	SGW_LIFT_K_TEARDOWN,      /* A=0 T=1: MH -> hub (Fig. 3B) */
	SGW_LIFT_K_TCP_ACK,       /* A=1 T=0: MH -> hub, ESP follows (Fig. 5A) */
	SGW_LIFT_K_FRACK,         /* A=1 T=1: MH -> hub, ESP follows (Fig. 5B) */
	SGW_LIFT_K_SETUP_ACK,     /* A=0 T=0 K=1: hub -> MH (satgw) */
	SGW_LIFT_K_TEARDOWN_ACK,  /* A=0 T=1 K=1: hub -> MH (satgw) */
};

/* Status of a Setup-ACK / Teardown-ACK (byte 7). */
enum sgw_lift_status {
	SGW_LIFT_ST_OK = 0,        /* entry built / removed */
	SGW_LIFT_ST_FULL,          /* flow table or SA table full: LIFT off for the flow */
	SGW_LIFT_ST_BAD_PROTO,     /* downlink protocol neither ESP nor AH */
	SGW_LIFT_ST_UNKNOWN_FLOW,  /* teardown of a flow the table does not hold */
	SGW_LIFT_ST__COUNT
};

/* Why sgw_lift_decode refused. Names: sgw_lift_dec_name. */
enum sgw_lift_dec {
	SGW_LIFT_DEC_OK = 0,
	SGW_LIFT_DEC_TRUNC,         /* fewer than 8 bytes */
	SGW_LIFT_DEC_RESERVED,      /* a reserved bit or field is not zero */
	SGW_LIFT_DEC_CTRL_PAYLOAD,  /* a control packet with bytes after its header */
	SGW_LIFT_DEC_NO_PAYLOAD,    /* a TCP ACK / FrACK header with nothing after it */
	SGW_LIFT_DEC_ESP_TRUNC,     /* next header ESP, fewer than 8 bytes of ESP header */
	SGW_LIFT_DEC_BAD_STATUS,    /* acknowledgement: unknown status */
	SGW_LIFT_DEC__COUNT
};

const char *sgw_lift_dec_name(int reason);

/* A decoded LIFT header (host byte order). */
struct sgw_lift_msg {
	uint8_t kind;        /* enum sgw_lift_kind */
	uint8_t flags;       /* byte 0 as received */
	uint16_t flow_id;
	uint32_t word;       /* setup: downlink SPI; TCP ACK: IPsec ACK number;
			      * acknowledgements: the SPI echoed; else 0 */
	uint8_t next;        /* ACK class: next header; setup: downlink protocol;
			      * acknowledgements: status; else 0 */
	uint8_t has_esp;     /* ACK class with next header ESP: esp_* are valid */
	uint16_t reserved;
	uint32_t esp_spi;    /* the uplink ESP header after the LIFT header */
	uint32_t esp_seq;
	uint32_t payload_len; /* bytes after the LIFT header */
};

/*
 * Decode the LIFT header at buf (the bytes after the IP header: LIFT header
 * then, for the ACK class, the protected packet), len bytes. Fills *m as far
 * as it got; returns SGW_LIFT_DEC_OK or the first reason it failed.
 */
int sgw_lift_decode(const void *buf, size_t len, struct sgw_lift_msg *m);

/* Builders: write the 8-byte header into buf; 8, or 0 when cap < 8. */
size_t sgw_lift_build_setup(void *buf, size_t cap, uint16_t flow_id, uint32_t spi,
			    uint8_t proto);
size_t sgw_lift_build_teardown(void *buf, size_t cap, uint16_t flow_id);
/* flags: any of SGW_LIFT_BIT_D/F/S (others ignored). */
size_t sgw_lift_build_tcp_ack(void *buf, size_t cap, uint8_t flags, uint16_t flow_id,
			      uint32_t ack_num, uint8_t next);
size_t sgw_lift_build_frack(void *buf, size_t cap, uint16_t flow_id, uint8_t next);
/* kind SGW_LIFT_K_SETUP_ACK or SGW_LIFT_K_TEARDOWN_ACK, else 0. */
size_t sgw_lift_build_ctrl_ack(void *buf, size_t cap, uint8_t kind, uint16_t flow_id,
			       uint32_t spi, uint8_t status);

/*
 * Strip the LIFT header of an IPv4 packet in place: pkt[0 .. len) holds IPv4
 * header (with options) | LIFT | rest; the IP header is moved 8 bytes up, its
 * protocol set to the LIFT header's next header, total length lowered by 8 and
 * the checksum updated. Returns the new start offset (8; the packet is then
 * pkt[8 .. len)), or 0 when the packet is not IPv4 with protocol lift_proto,
 * is short, or its LIFT header is not of the ACK class.
 */
size_t sgw_lift_strip_ipv4(uint8_t *pkt, size_t len, uint8_t lift_proto);
/* The same for IPv6 when LIFT directly follows the 40-byte fixed header. */
size_t sgw_lift_strip_ipv6(uint8_t *pkt, size_t len, uint8_t lift_proto);

/* ---------------------------------------------------------------- machine */

#define SGW_LIFT_NEVER UINT64_MAX
#define SGW_LIFT_MAX_ENTRIES (1u << 24)
/* Free action slots every call needs (else -ENOSPC, nothing done). */
#define SGW_LIFT_MIN_ROOM 12u

enum sgw_lift_timer_mode {
	SGW_LIFT_TIMER_FIXED = 0,    /* timer_fixed_ns, always (the seed: 0.98 s) */
	SGW_LIFT_TIMER_ADAPTIVE,     /* from the RTT the hub observes, per SA */
};

struct sgw_lift_conf {
	uint32_t max_flows;          /* TCP Flow Table capacity, 1..2^24 */
	uint32_t max_sas;            /* downlink SAs, 1..2^24 (0: max_flows) */
	uint8_t timer_mode;          /* enum sgw_lift_timer_mode (FIXED) */
	uint64_t timer_fixed_ns;     /* 980 ms: Reno's 1 s minimum RTO minus 20 ms */
	/* adaptive: T = srtt + max(4 rttvar, var_floor) - margin, in [min, max];
	 * timer_fixed_ns until the SA's first RTT sample */
	uint64_t var_floor_ns;       /* 200 ms: Linux's floor (TCP_RTO_MIN) */
	uint64_t margin_ns;          /* 20 ms */
	uint64_t timer_min_ns;       /* 200 ms */
	uint64_t timer_max_ns;       /* 980 ms: adaptive only ever shortens the
				      * seed's value (docs/lift.md says why) */
	uint64_t rtt_sample_max_ns;  /* longer samples are discarded (10 s) */
	/* security bounds (section III) */
	uint64_t max_frozen_ns;      /* one freeze at most this long (15 s) */
	uint64_t share_window_ns;    /* frozen share measured over this (60 s) */
	uint32_t max_share_permille; /* at most this share frozen (500) */
	uint64_t suspend_ns;         /* a flow past a bound: LIFT off this long;
				      * 0: for the rest of the flow's life (60 s) */
	uint32_t max_seq_jump;       /* a downlink ESP sequence number further ahead
				      * than this is not believed (2^20) */
	uint8_t paper_hold;          /* 1: also hold a TCP ACK that acknowledges all
				      * data forwarded toward the MH, as the seed
				      * does (0: forward it at once) */
	/* For senders whose retransmission timer runs under a zero window
	 * (Linux): docs/lift.md, "Thaw and spare FrACKs". */
	uint8_t thaw;                /* 1: a freeze by a held pair lasts one timer
				      * period (the flow's value when it froze),
				      * then the held TCP ACK goes on; 0: frozen
				      * until the next TCP ACK or a bound, as the
				      * seed (0) */
	uint8_t spare_frack;         /* 1: keep the FrACK of a TCP ACK that went on
				      * at once, to freeze with at expiry; 0: drop
				      * it, freezes only by held pairs (1) */
};

void sgw_lift_conf_default(struct sgw_lift_conf *conf);
/* NULL when conf is valid, else the name of the first bad field. */
const char *sgw_lift_conf_check(const struct sgw_lift_conf *conf);
/* Bytes of memory sgw_lift_init needs for conf (0 if invalid). */
size_t sgw_lift_mem_size(const struct sgw_lift_conf *conf);

struct sgw_lift;

/*
 * Lay the machine out in mem (mem_len >= sgw_lift_mem_size(conf); any
 * alignment: the machine aligns itself). Returns it, or NULL on a bad conf or
 * too little memory. The memory stays the caller's; nothing to destroy.
 */
struct sgw_lift *sgw_lift_init(void *mem, size_t mem_len, const struct sgw_lift_conf *conf,
			       uint64_t now_ns);

/* An address: IPv6, or IPv4 mapped (::ffff:a.b.c.d). */
struct sgw_lift_addr {
	uint8_t b[16];
};

static inline struct sgw_lift_addr
sgw_lift_addr_v4(const uint8_t v4[4])
{
	struct sgw_lift_addr a = {{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff,
				   v4[0], v4[1], v4[2], v4[3]}};
	return a;
}

enum sgw_lift_act_type {
	SGW_LIFT_ACT_FORWARD = 1, /* send handle toward the FH, LIFT header stripped */
	SGW_LIFT_ACT_DROP,        /* free handle; code: enum sgw_lift_drop */
	SGW_LIFT_ACT_TIMER_ARM,   /* (re)arm the flow's one timer to fire at `at` */
	SGW_LIFT_ACT_TIMER_CANCEL, /* stop the flow's timer */
	SGW_LIFT_ACT_CTRL_ACK,    /* send a Setup-ACK / Teardown-ACK to mh: kind in
				   * code2, status in code, flow_id, spi (build it with
				   * sgw_lift_build_ctrl_ack) */
};

/* FORWARD: what the forwarded packet is (code). */
enum sgw_lift_fwd {
	SGW_LIFT_FWD_ACK = 0,     /* a TCP ACK, at once */
	SGW_LIFT_FWD_HELD_ACK,    /* a held TCP ACK, released */
	SGW_LIFT_FWD_DUP,         /* a stored duplicate (S) ACK, released */
	SGW_LIFT_FWD_FRACK,       /* a FrACK: the sender is being frozen */
	SGW_LIFT_FWD_UNTOUCHED,   /* LIFT not applied (unknown flow, suspended, CLEAR) */
};

/* DROP: why (code). */
enum sgw_lift_drop {
	SGW_LIFT_DROP_FRACK_SUPERSEDED = 0, /* its pair's TCP ACK went on; a newer came */
	SGW_LIFT_DROP_FRACK_STALE,          /* older than the TCP ACK that came after it */
	SGW_LIFT_DROP_FRACK_UNUSED,         /* freezing off (transitory, ooo, suspended) */
	SGW_LIFT_DROP_DUP_SUPERSEDED,       /* a newer duplicate ACK replaced it */
	SGW_LIFT_DROP_UNKNOWN_FLOW,         /* FrACK of a flow not in the table */
	SGW_LIFT_DROP_UNTRUSTED,            /* not from the authenticated satellite side */
	SGW_LIFT_DROP_BAD,                  /* refused by the decoder (reason counted) */
	SGW_LIFT_DROP_FLOW_GONE,            /* FrACK held when its flow was removed */
	SGW_LIFT_DROP_CONSUMED,             /* a control packet, answered (CTRL_ACK) */
	SGW_LIFT_DROP_UNEXPECTED,           /* an acknowledgement sent to the hub */
	SGW_LIFT_DROP__COUNT
};

struct sgw_lift_act {
	uint8_t type;        /* enum sgw_lift_act_type */
	uint8_t code;        /* FORWARD: sgw_lift_fwd; DROP: sgw_lift_drop; CTRL_ACK: status */
	uint8_t code2;       /* CTRL_ACK: kind */
	uint8_t reserved;
	uint16_t flow_id;    /* the LIFT flow id (CTRL_ACK, and informative) */
	uint16_t reserved2;
	uint32_t flow;       /* TIMER_*: flow index (the timer's object) */
	uint32_t gen;        /* TIMER_*: flow generation (pass back to sgw_lift_timer) */
	uint32_t spi;        /* CTRL_ACK */
	uint32_t reserved3;
	uint64_t handle;     /* FORWARD, DROP */
	uint64_t at;         /* TIMER_ARM: absolute ns */
	struct sgw_lift_addr mh; /* CTRL_ACK: destination */
};

/* Where a call appends actions: act[n .. cap). The caller resets n. */
struct sgw_lift_out {
	struct sgw_lift_act *act;
	uint32_t n;
	uint32_t cap;
};

/*
 * A LIFT packet from the MH side. buf/len: the bytes after the IP header
 * (LIFT header onward); mh: the IP source; handle: the packet; trusted: it
 * came from the satellite side over an authenticated satlink session (AES-GCM
 * on). The machine takes the handle: it comes back in exactly one FORWARD or
 * DROP, in this call or a later one (a control packet in this call's DROP
 * CONSUMED, after its CTRL_ACK). Returns 0, or
 * -ENOSPC (fewer than SGW_LIFT_MIN_ROOM free actions: nothing done, the
 * handle is the caller's; counted). A refused packet (decode error, untrusted)
 * comes back as a DROP in this call.
 */
int sgw_lift_rx(struct sgw_lift *l, uint64_t now_ns, const struct sgw_lift_addr *mh,
		const void *buf, size_t len, uint64_t handle, int trusted,
		struct sgw_lift_out *out);

/* The same with the header already decoded (sgw_lift_rx decodes, then this). */
int sgw_lift_rx_msg(struct sgw_lift *l, uint64_t now_ns, const struct sgw_lift_addr *mh,
		    const struct sgw_lift_msg *m, uint64_t handle, int trusted,
		    struct sgw_lift_out *out);

/*
 * A downlink ESP packet toward mh (its destination) on SA spi with sequence
 * number seq is being forwarded to the satellite: the local-acknowledgement
 * bookkeeping. Never holds or changes the packet. Returns 1 when the SA is
 * one the Flow Table names, 0 otherwise.
 */
int sgw_lift_esp_down(struct sgw_lift *l, uint64_t now_ns, const struct sgw_lift_addr *mh,
		      uint32_t spi, uint32_t seq);

/*
 * The flow's timer fired (flow, gen from its TIMER_ARM). Stale or early
 * expiries are counted and answered correctly (an early one re-arms).
 * Returns 0 or -ENOSPC as sgw_lift_rx.
 */
int sgw_lift_timer(struct sgw_lift *l, uint64_t now_ns, uint32_t flow, uint32_t gen,
		   struct sgw_lift_out *out);

/*
 * Shutdown: remove every flow, giving back every handle the machine holds
 * (held TCP ACKs come back as FORWARD, the rest as DROP; the caller frees
 * them all) and cancelling the timers. 0 when the table is empty, 1 when the
 * action array filled first (call again), -ENOSPC as sgw_lift_rx.
 */
int sgw_lift_drain(struct sgw_lift *l, uint64_t now_ns, struct sgw_lift_out *out);

/* CLEAR mode (TCP not under IPsec): satgw forwards it untouched; counted here. */
void sgw_lift_note_clear(struct sgw_lift *l, uint32_t pkts);

/* ------------------------------------------------------------ inspection */

struct sgw_lift_stats {
	uint64_t rx_refused[SGW_LIFT_DEC__COUNT]; /* by decode reason */
	uint64_t untrusted;        /* LIFT packets not from the authenticated side */
	uint64_t no_room;          /* calls refused: action array too full */
	uint64_t act_overflow;     /* actions lost past the array (never: a bug) */
	/* control */
	uint64_t setups;           /* entries built */
	uint64_t setup_dup;        /* setup of an entry already there (same SA): acked */
	uint64_t setup_replaced;   /* setup of a flow id in use with another SA */
	uint64_t setup_full;
	uint64_t setup_bad_proto;
	uint64_t teardowns;        /* entries removed by a Teardown */
	uint64_t teardown_unknown;
	uint64_t d_deletes;        /* entries removed by a D flag */
	uint64_t ctrl_acks;        /* acknowledgements asked for */
	/* ACK path */
	uint64_t acks_rx;
	uint64_t fracks_rx;
	uint64_t acks_fwd_now;     /* forwarded on arrival */
	uint64_t acks_held;        /* held with their FrACK */
	uint64_t acks_released;    /* held ones forwarded */
	uint64_t dups_stored;      /* S ACKs stored behind a held pair */
	uint64_t dups_released;
	uint64_t dups_superseded;
	uint64_t freezes;          /* FrACKs forwarded */
	uint64_t freezes_spare;    /* ... of them the spare one (no TCP ACK held) */
	uint64_t unfreezes;        /* held TCP ACKs forwarded after a freeze */
	uint64_t thaws;            /* ... of them at the thaw time (conf thaw) */
	uint64_t fracks_dropped;   /* superseded, stale or unused */
	uint64_t unknown_flow;     /* ACK-class packets of flows not in the table */
	uint64_t untouched;        /* TCP ACKs forwarded with LIFT not applied */
	uint64_t clear_pkts;       /* CLEAR mode (non-IPsec TCP), forwarded untouched */
	uint64_t ack_beyond;       /* IPsec ACK numbers beyond anything forwarded */
	uint64_t flag_f;           /* TCP ACKs with F */
	uint64_t flag_s;           /* with S */
	uint64_t flag_d;           /* with D */
	uint64_t transitory;       /* (re)activations: the transitory phase began */
	/* timer */
	uint64_t expiries;         /* local timer expiries */
	uint64_t expiry_freeze;    /* -> FrACK forwarded */
	uint64_t expiry_acked;     /* -> nothing unacknowledged: held TCP ACK forwarded */
	uint64_t expiry_idle;      /* -> nothing held */
	uint64_t timer_stale;      /* fired for a flow gone, rearmed or cancelled */
	uint64_t timer_early;      /* fired before its time: re-armed */
	/* downlink */
	uint64_t esp_down;         /* on SAs the table names */
	uint64_t esp_other;        /* on other SAs */
	uint64_t esp_late;         /* behind the SA's highest: out of order */
	uint64_t esp_gap;          /* ahead by more than one: a loss or reordering upstream */
	uint64_t esp_jump;         /* ahead by more than max_seq_jump: ignored */
	uint64_t ooo_disable;      /* SAs whose freezing was disabled */
	uint64_t ooo_enable;       /* ... and re-enabled */
	uint64_t rtt_samples;
	uint64_t rtt_discarded;
	/* security bounds */
	uint64_t susp_frozen;      /* suspensions: a freeze lasted max_frozen_ns */
	uint64_t susp_share;       /* suspensions: frozen share over the window */
	uint64_t susp_end;         /* suspensions over: LIFT back on */
	uint64_t frozen_ns;        /* total time flows spent frozen (ended freezes) */
	/* now */
	uint32_t flows;
	uint32_t sas;
	uint32_t held;             /* handles held (pairs, stored dups, pending FrACKs) */
	uint32_t frozen;           /* flows frozen now */
};

void sgw_lift_get_stats(const struct sgw_lift *l, struct sgw_lift_stats *st);

/* One flow's state, for tests and telemetry. */
struct sgw_lift_flow_info {
	uint32_t index;
	uint32_t gen;
	uint32_t spi;
	uint8_t proto;
	uint8_t timer_running;     /* the local timer: 0 = transitory phase */
	uint8_t frozen;            /* a FrACK went out, its TCP ACK is held */
	uint8_t suspended;         /* past a security bound */
	uint8_t held_pair;         /* (FrACK, TCP ACK) held */
	uint8_t held_dup;
	uint8_t pending_frack;     /* a FrACK waiting for its TCP ACK */
	uint8_t spare_frack;       /* the FrACK of the last TCP ACK forwarded at once */
	uint8_t sa_ooo;            /* freezing disabled on its SA (out of order) */
	uint64_t timer_at;         /* local timer expiry (if running) */
	uint64_t armed_at;         /* what the caller's timer is armed to, or NEVER */
	uint64_t timer_ns;         /* the timer value this flow uses now */
	uint32_t ack_num;          /* highest IPsec ACK number received */
	uint32_t sa_highest;       /* the SA's highest ESP sequence number forwarded */
	uint64_t held_ack;         /* handles, when held */
	uint64_t held_frack;
	uint64_t frozen_share_ns;  /* frozen time counted in the sliding window */
};

/* 0 and *info filled, or -1 when the table has no such flow. */
int sgw_lift_flow_get(const struct sgw_lift *l, uint64_t now_ns, const struct sgw_lift_addr *mh,
		      uint16_t flow_id, struct sgw_lift_flow_info *info);

#ifdef __cplusplus
}
#endif

#endif /* SGW_LIFT_H */
