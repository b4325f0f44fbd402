/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The policy model: what the YAML file says, after validation, as plain C.
 * control/ builds one from YAML; the dataplane reads it through an immutable
 * snapshot. Rule matching (first match wins) lives here too, so it is
 * unit-testable without DPDK.
 */
#ifndef SGW_POLICY_H
#define SGW_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sgw_linkem.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SGW_NAME_MAX          32
#define SGW_DEVICE_MAX        128
#define SGW_MAX_PORTS         8
#define SGW_MAX_NEXT_HOPS     64
#define SGW_MAX_TERMINALS     65536
#define SGW_MAX_RULES         4096
#define SGW_TERM_PREFIX_MAX   16   /* prefixes per terminal */
#define SGW_RULE_PREFIX_MAX   16   /* prefixes per rule side */
#define SGW_RULE_RANGE_MAX    8    /* port / SPI ranges per rule */
#define SGW_RULE_PROTO_MAX    8

enum sgw_role {
	SGW_ROLE_HUB = 0,
	SGW_ROLE_TERMINAL,
	SGW_ROLE_EMULATOR,
};

enum sgw_port_role {
	SGW_PORT_TERRESTRIAL = 0,
	SGW_PORT_SATELLITE,
	SGW_PORT_LAN,
};

/* Every name the policy accepts; only those with built == true run today. */
enum sgw_action {
	SGW_ACT_FORWARD = 0,
	SGW_ACT_DROP,
	SGW_ACT_COUNT,    /* count, then forward like FORWARD */
	SGW_ACT_SPLIT,
	SGW_ACT_LIFT,
	SGW_ACT_XCP,
	SGW_ACT__COUNT
};

struct sgw_prefix {
	uint8_t family;   /* 4 or 6 */
	uint8_t len;      /* prefix length in bits */
	uint8_t addr[16]; /* network order, host bits zero; IPv4 in addr[0..3] */
};

struct sgw_range16 {
	uint16_t lo, hi;  /* inclusive */
};

struct sgw_range32 {
	uint32_t lo, hi;  /* inclusive */
};

struct sgw_port_conf {
	char name[SGW_NAME_MAX];
	char device[SGW_DEVICE_MAX]; /* DPDK device name: net_af_packet0, 0000:3b:00.0, ... */
	enum sgw_port_role role;
	int16_t peer;       /* index of the port transparent forwarding goes to, -1 none */
	uint16_t rx_desc;   /* default 1024 */
	uint16_t tx_desc;   /* default 1024 */
	uint16_t mtu;       /* 0 = leave the device's */
	bool promiscuous;   /* default true */
};

struct sgw_next_hop {
	char name[SGW_NAME_MAX];
	int16_t port;       /* index into ports */
	uint8_t mac[6];     /* destination MAC written on forward */
};

struct sgw_terminal {
	char name[SGW_NAME_MAX];
	uint32_t id;        /* operator's terminal id, unique */
	uint16_t n_prefixes;
	struct sgw_prefix prefixes[SGW_TERM_PREFIX_MAX];
};

/*
 * Which satlink service a packet rides when it leaves through the satlink
 * port (roles hub and terminal with a satlink section).
 */
enum sgw_sl_service {
	SGW_SL_SVC_DEFAULT = 0,  /* rules: the satlink section's default_service */
	SGW_SL_SVC_RELIABLE,     /* ARQ: retransmitted until acknowledged, in order */
	SGW_SL_SVC_DATAGRAM,     /* best effort: fragmented, never retransmitted */
	SGW_SL_SVC_BYPASS,       /* the frame as it is, outside the link layer */
	SGW_SL_SVC__COUNT
};

struct sgw_rule {
	char name[SGW_NAME_MAX];
	/* Match; an empty list (n_* == 0) or -1 means "any". */
	int16_t in_port;
	int32_t terminal;   /* index into terminals */
	uint8_t n_src, n_dst, n_proto, n_sport, n_dport, n_spi;
	struct sgw_prefix src[SGW_RULE_PREFIX_MAX];
	struct sgw_prefix dst[SGW_RULE_PREFIX_MAX];
	uint8_t proto[SGW_RULE_PROTO_MAX];
	struct sgw_range16 sport[SGW_RULE_RANGE_MAX];
	struct sgw_range16 dport[SGW_RULE_RANGE_MAX];
	struct sgw_range32 spi[SGW_RULE_RANGE_MAX];
	uint64_t dscp_mask; /* bit d set: DSCP d matches; 0 = any */
	/* Action */
	enum sgw_action action;
	int16_t next_hop;   /* index into next_hops; -1 = the input port's peer, no MAC rewrite */
	enum sgw_sl_service sl_service; /* satlink service when it leaves by the satlink port */
	uint8_t split_handshake;  /* action split: enum sgw_split_handshake (end-to-end) */
};

enum sgw_malformed_policy {
	SGW_MALFORMED_DROP = 0,     /* default */
	SGW_MALFORMED_FORWARD,      /* forward untouched to the peer port */
};

struct sgw_limits {
	uint32_t flows_per_core;    /* default 65536 */
	uint32_t mbufs;             /* mbufs in the pool, default 16383 */
	uint32_t mbuf_cache;        /* per-lcore mempool cache, default 256 */
	uint32_t ring_size;         /* worker hand-off rings, power of two, default 4096 */
	uint32_t flow_idle_ms;      /* idle flow expiry, default 120000 */
	uint32_t timers_per_core;   /* timer wheel capacity, default flows_per_core */
};

struct sgw_workers_conf {
	uint32_t idle_backoff_us;   /* sleep after this many idle us; 0 = pure busy poll */
	uint32_t idle_sleep_us;     /* sleep length when idle, default 50 */
	uint16_t burst;             /* RX burst, default 32, <= SGW_BURST_MAX */
	uint16_t tx_drain_us;       /* TX buffer drain deadline, default 100 */
	uint32_t timer_tick_us;     /* timer wheel tick, default 100 */
};

/* role: emulator. One direction of the emulated link: frames from one port to the other. */
struct sgw_link_dir {
	int16_t from_port;          /* policy port index */
	int16_t to_port;
	struct sgw_linkem_conf em;
};

enum { SGW_LINK_FORWARD = 0, SGW_LINK_RETURN = 1 };

struct sgw_emulator_conf {
	uint64_t seed;              /* same seed, same run */
	struct sgw_link_dir dir[2]; /* forward (hub -> terminals) and return */
};

/*
 * roles hub and terminal: the reliable satellite link protocol (lib/sgw_arq.h,
 * docs/satlink.md) on one satellite port. The hub keeps one session per
 * terminal of the policy, a terminal one session with the hub. Rates size the
 * windows (rate x rtt) and pace the frames a sender puts on the link.
 */
#define SGW_SL_KEYS_PATH_MAX 256
struct sgw_satlink_conf {
	bool enabled;               /* the section is present */
	int16_t port;               /* policy port index: frames leave and arrive here */
	uint32_t terminal_id;       /* role terminal: this terminal's id (one of terminals) */
	uint8_t peer_mac[6];        /* destination MAC of frames; default ff:ff:ff:ff:ff:ff */
	uint64_t forward_rate_bps;  /* hub -> terminal frame bits/s (required) */
	uint64_t return_rate_bps;   /* terminal -> hub frame bits/s (required) */
	uint32_t rtt_ms;            /* round trip for window sizing and the first RTO: 600 */
	uint16_t frame_size;        /* payload bytes per DATA frame, 64..1960: 1400 */
	uint8_t retx_copies;        /* k, 1..8: 2 */
	bool retx_copies_idle;      /* retx_copies_when: idle (true, default) or always */
	bool frame_size_adapt;      /* reliable frames sized from the losses seen: true */
	uint16_t frame_size_min;    /* smallest adapted frame payload, 64..frame_size: 256 */
	uint32_t retx_spacing_us;   /* between the k copies: 5000 */
	uint32_t status_interval_ms; /* 1..1000: 20 */
	uint32_t keepalive_ms;      /* 10..60000: 500 */
	uint32_t link_down_ms;      /* > keepalive_ms, ..600000: 2000 */
	uint32_t rto_max_ms;        /* ARQ timer backoff ceiling, 200..60000: 1000 */
	uint32_t send_queue;        /* packets queued beyond the window, 1..65536: 1024 */
	uint32_t window_max;        /* cap on the computed windows, 64..8192: 8192 */
	enum sgw_sl_service default_service; /* reliable, datagram or bypass: reliable */
	char keys[SGW_SL_KEYS_PATH_MAX]; /* AES-GCM key file; "" = frames not protected */
};

/*
 * role hub: BS-LIFT (issue 8, docs/lift.md), the stage that freezes TCP
 * senders inside end-to-end IPsec. Needs satlink with AES-GCM keys: LIFT
 * packets are acted on only when an authenticated session delivered them.
 * The IP protocol is sgw_policy.lift_proto (protocols.lift, or lift.protocol).
 */
enum sgw_lift_timer_policy {
	SGW_LIFT_TIMER_POL_FIXED = 0,    /* timer_ms always (the seed: 980) */
	SGW_LIFT_TIMER_POL_ADAPTIVE,     /* from the RTT the hub sees, in [min, max] */
};

struct sgw_lift_policy {
	bool enabled;                /* the section is present and enabled */
	uint8_t timer_mode;          /* enum sgw_lift_timer_policy: fixed */
	uint32_t timer_ms;           /* fixed value; the adaptive one's ceiling: 980 */
	uint32_t timer_min_ms;       /* adaptive floor: 200 */
	uint32_t max_frozen_ms;      /* one freeze at most: 15000 */
	uint32_t share_window_ms;    /* frozen share measured over: 60000 */
	uint32_t max_share_permille; /* frozen share at most: 500 */
	uint32_t suspend_ms;         /* LIFT off for a flow past a bound; 0: for good: 60000 */
	uint32_t max_flows;          /* TCP Flow Table entries per worker: 4096 */
	uint32_t max_sas;            /* downlink SAs per worker; 0: max_flows */
	bool thaw;                   /* a freeze by a held pair lasts one timer period: false */
	bool spare_frack;            /* freeze with a spare FrACK too: true */
};

/*
 * roles hub and terminal: the XCP gateway stage (dataplane/xcp.c, docs/xcp.md)
 * at this end's egress toward the satellite (satlink's queue). Its
 * controller constants default to lib/sgw_xcp.h's (sgw_xcp_conf_default).
 */
/*
 * Which queue one controller watches when satlink carries the link
 * (docs/xcp.md, "One controller per session, or one for the carrier").
 */
enum sgw_xcp_scope {
	SGW_XCP_SCOPE_SESSION = 0,  /* one per satlink session, on its owner (default) */
	SGW_XCP_SCOPE_CARRIER,      /* one for the satlink port, all workers together */
	SGW_XCP_SCOPE__COUNT
};

struct sgw_xcp_policy {
	bool enabled;               /* the section is present, its enabled not false */
	uint8_t protocol;           /* the IP protocol XCP rides: protocols.xcp (254) */
	uint64_t capacity_bps;      /* capacity per controller; 0: from satlink's rate (xcp.md) */
	enum sgw_xcp_scope scope;   /* with satlink: session (default) or carrier */
	double alpha;               /* 0.4 */
	double beta;                /* 0.226 */
	double gamma;               /* 0.1 */
	uint32_t interval_min_us;   /* floor of the control interval: 1000 */
	uint32_t interval_init_ms;  /* control interval before any H_rtt is seen: 100 */
	uint32_t rtt_max_ms;        /* H_rtt above is taken as this, >= 1000 (no GEO cap): 10000 */
	/* Without satlink: the stage's own egress shaper (one worker) owns the queue. */
	int16_t port;               /* the satellite port: satlink's, or given (-1: none) */
	uint32_t shaper_queue;      /* packets the shaper holds at most: 1024 */
	/* XCP for legacy senders: plain TCP's ACKs clamped to the flow's share. */
	bool legacy;                /* false */
	uint32_t legacy_max_flows;  /* flows per worker (rounded down to a power of two): 4096 */
	/* The shaper's two queues, XCP and other (lib/sgw_xcp_wq.h): without satlink only. */
	bool separate_queues;       /* false */
	double queue_weight_gain;   /* 0.5 */
	double queue_weight_min;    /* 0.02 */
};

/*
 * roles hub and terminal: the TCP split (issue 10, docs/tcp-split.md), the
 * `split:` section and the rules with action split. The relay memory bounds
 * and connection caps are per worker (and per terminal) so that one terminal
 * or a SYN flood fills bounded state and then bypasses.
 */
enum sgw_split_handshake {
	SGW_SPLIT_HS_END_TO_END = 0, /* the client is answered once the server answered */
	SGW_SPLIT_HS_SPOOFED,        /* the terminal answers the SYN at once */
	SGW_SPLIT_HS__COUNT
};

enum sgw_split_rwnd_policy {
	SGW_SPLIT_RWND_RWND = 0,     /* window = relay free space, anti-freeze (seed 003) */
	SGW_SPLIT_RWND_PETRA,        /* withhold ACKs above threshold_bytes */
	SGW_SPLIT_RWND_ACKRES,       /* PETRA + one ACK before the sender's RTO */
	SGW_SPLIT_RWND__COUNT
};

struct sgw_split_policy {
	bool present;                /* the section is present */
	uint8_t rwnd;                /* enum sgw_split_rwnd_policy: rwnd */
	uint32_t relay_connection_bytes; /* per connection and direction: 262144 */
	uint64_t relay_terminal_bytes;   /* all of one terminal's connections: 16 MiB */
	uint64_t relay_worker_bytes;     /* all of one worker's connections: 256 MiB */
	uint32_t max_connections_worker;   /* split halves per worker: 16384 */
	uint32_t max_connections_terminal; /* per terminal: 1024 */
	uint32_t idle_timeout_ms;    /* no byte either way for this long: RST; 0 never: 600000 */
	uint32_t threshold_bytes;    /* petra, ackres: B_th; 0: 3/4 of the relay: 0 */
	uint32_t open_credit;        /* bytes the opener may send before OPEN_OK: 65536 */
	uint32_t ackres_rto_min_ms;  /* ackres: the senders' RTO floor its estimate assumes:
				      * 1000 (lib/sgw_relay.c's default) */
	uint8_t leg_retries;         /* a leg's RTO expiries of one segment before it gives
				      * up (RST both ways): 15 (lib/sgw_tcp.h data_retries) */
	uint32_t sat_queue_ms;       /* DATA the split keeps queued in a satlink session, in
				      * ms of the session's send rate; 0: up to send_queue:
				      * 50 */
};

struct sgw_policy {
	enum sgw_role role;
	uint8_t lift_proto;         /* default 253 */
	uint8_t xcp_proto;          /* default 254 */
	enum sgw_malformed_policy malformed;
	enum sgw_action default_action;  /* for unmatched packets: forward (default) or drop */

	uint16_t n_ports;
	struct sgw_port_conf ports[SGW_MAX_PORTS];
	uint16_t n_next_hops;
	struct sgw_next_hop next_hops[SGW_MAX_NEXT_HOPS];

	uint32_t n_terminals;
	struct sgw_terminal *terminals;  /* heap array owned by the policy */
	uint32_t n_rules;
	struct sgw_rule *rules;          /* heap array owned by the policy */

	struct sgw_limits limits;
	struct sgw_workers_conf workers;
	struct sgw_emulator_conf emu;    /* role: emulator only */
	struct sgw_satlink_conf satlink; /* roles hub and terminal */
	struct sgw_lift_policy lift;     /* role hub */
	struct sgw_xcp_policy xcp;       /* roles hub and terminal, with satlink */
	struct sgw_split_policy split;   /* roles hub and terminal */
};

/* What a rule matches on, extracted from one packet. Host order scalars. */
struct sgw_match_key {
	int16_t in_port;
	int32_t terminal;   /* -1 if the packet belongs to no terminal */
	uint8_t family;     /* 4, 6, or 0 (not IP: only rules with no L3 match apply) */
	uint8_t proto;
	uint8_t dscp;
	uint8_t has_ports;  /* TCP/UDP/ESP-in-UDP */
	uint8_t has_spi;
	uint16_t sport, dport;
	uint32_t spi;
	const uint8_t *src; /* 16 bytes, IPv4 in [0..3] */
	const uint8_t *dst;
};

void sgw_policy_init_defaults(struct sgw_policy *p);
void sgw_policy_free(struct sgw_policy *p);   /* frees terminals and rules */

/* True when the action has a dataplane implementation today. */
bool sgw_action_built(enum sgw_action a);
const char *sgw_action_name(enum sgw_action a);
const char *sgw_role_name(enum sgw_role r);
const char *sgw_port_role_name(enum sgw_port_role r);
/* "session", "carrier" (xcp.scope), indexed by enum sgw_xcp_scope. */
extern const char *const sgw_xcp_scope_names[SGW_XCP_SCOPE__COUNT];
/* "end-to-end", "spoofed"; "rwnd", "petra", "ackres" ("?" out of range). */
const char *sgw_split_handshake_name(unsigned int hs);
const char *sgw_split_rwnd_name(unsigned int scheme);

/* Does addr (family 4/6) fall in prefix? */
bool sgw_prefix_contains(const struct sgw_prefix *p, uint8_t family, const uint8_t *addr);
/* Do two prefixes of the same family overlap? */
bool sgw_prefix_overlap(const struct sgw_prefix *a, const struct sgw_prefix *b);
/*
 * Parse "a.b.c.d/n" or "x::y/n" (len = strlen); 0 on success, -1 on error.
 * -2: well formed but host bits are set; *out then holds the prefix with the
 * host bits cleared, so a caller can say "did you mean ...?".
 * The length is mandatory; IPv4 octets and lengths take no leading zeros;
 * IPv6 takes every RFC 4291 text form (::, embedded IPv4), no zone id.
 */
int sgw_prefix_parse(const char *s, size_t len, struct sgw_prefix *out);
/* Same, and *why (if not NULL) gets a static reason on error. */
int sgw_prefix_parse_ex(const char *s, size_t len, struct sgw_prefix *out,
			const char **why);
/* Longest text sgw_prefix_format writes, NUL included. */
#define SGW_PREFIX_STRLEN 44
/*
 * "10.0.0.0/8", "2001:db8::/32" (RFC 5952 canonical). Returns the length
 * written (without the NUL), or -1 if buf is too small or p is not valid.
 */
int sgw_prefix_format(const struct sgw_prefix *p, char *buf, size_t len);

/* Zero a rule and set its "any" markers (in_port, terminal, next_hop = -1). */
void sgw_rule_init(struct sgw_rule *r);

/*
 * All criteria present in r must match k (any-of within a list). Port ranges
 * match only keys with has_ports, SPI ranges only keys with has_spi; a rule
 * with any L3 criterion (src, dst, proto, ports, spi, dscp) never matches a
 * non-IP key (family 0). Prefixes match only addresses of their family.
 */
bool sgw_rule_matches(const struct sgw_rule *r, const struct sgw_match_key *k);
/* Index of the first matching rule, or -1. */
int32_t sgw_rules_lookup(const struct sgw_policy *p, const struct sgw_match_key *k);

#ifdef __cplusplus
}
#endif

#endif /* SGW_POLICY_H */
