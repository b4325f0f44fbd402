/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Packet header parsing: Ethernet (up to two VLAN tags), IPv4 (options,
 * fragments), IPv6 (extension-header chain), TCP (all options), UDP, ESP
 * (direct and UDP-encapsulated on port 4500, RFC 3948), ICMP/ICMPv6, and the
 * outer framing of the LIFT and XCP headers that later issues fill in.
 *
 * Plain C11: every function takes (pointer, length) and never reads past
 * data + len. A packet that cannot be parsed gets exactly one reason code.
 */
#ifndef SGW_PARSE_H
#define SGW_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sgw_xcp.h" /* SGW_XCPW_LEN: the one definition of the XCP header's length */

#ifdef __cplusplus
extern "C" {
#endif

/* Why a packet could not be parsed. SGW_PR_OK is 0; every other value is counted. */
enum sgw_parse_reason {
	SGW_PR_OK = 0,
	SGW_PR_ETH_TRUNC,        /* shorter than an Ethernet header */
	SGW_PR_VLAN_TRUNC,       /* VLAN tag cut short */
	SGW_PR_VLAN_TOO_MANY,    /* more than two VLAN tags */
	SGW_PR_IP4_TRUNC,        /* shorter than the fixed IPv4 header */
	SGW_PR_IP4_BAD_VERSION,  /* ethertype IPv4 but version != 4 */
	SGW_PR_IP4_BAD_IHL,      /* IHL < 5 or header beyond the buffer */
	SGW_PR_IP4_BAD_TOTLEN,   /* total length < IHL*4 or > bytes present */
	SGW_PR_IP4_BAD_OPTION,   /* IPv4 option with a bad length */
	SGW_PR_IP6_TRUNC,        /* shorter than the fixed IPv6 header */
	SGW_PR_IP6_BAD_VERSION,
	SGW_PR_IP6_BAD_PAYLEN,   /* payload length > bytes present */
	SGW_PR_IP6_EXT_TRUNC,    /* extension header cut short */
	SGW_PR_IP6_EXT_TOO_MANY, /* longer chain than SGW_IP6_MAX_EXT */
	SGW_PR_TCP_TRUNC,        /* shorter than 20 bytes */
	SGW_PR_TCP_BAD_DOFF,     /* data offset < 5 or beyond the segment */
	SGW_PR_TCP_BAD_OPTION,   /* option length 0/1, past the header, or wrong for its kind */
	SGW_PR_UDP_TRUNC,
	SGW_PR_UDP_BAD_LEN,      /* UDP length < 8 or > bytes present */
	SGW_PR_ESP_TRUNC,        /* fewer than 8 bytes of SPI + sequence number */
	SGW_PR_ICMP_TRUNC,
	SGW_PR_LIFT_TRUNC,       /* shorter than the fixed LIFT header */
	SGW_PR_XCP_TRUNC,        /* shorter than the fixed XCP header */
	SGW_PR__COUNT
};

/* Classes a burst is sorted into; each later stage runs over one class. */
enum sgw_class {
	SGW_CLASS_TCP = 0,   /* TCP over IPv4/IPv6, first fragment or unfragmented */
	SGW_CLASS_UDP,       /* UDP that is not ESP-in-UDP */
	SGW_CLASS_ESP,       /* ESP, direct (proto 50) or UDP-encapsulated (4500) */
	SGW_CLASS_ICMP,      /* ICMP and ICMPv6 */
	SGW_CLASS_LIFT,      /* LIFT (IP protocol conf->lift_proto, default 253) */
	SGW_CLASS_XCP,       /* XCP (IP protocol conf->xcp_proto, default 254) */
	SGW_CLASS_IP_OTHER,  /* other IP protocols and non-first fragments */
	SGW_CLASS_SATLINK,   /* satlink frames (EtherType 0x88B5, lib/sgw_satlink.h) */
	SGW_CLASS_NON_IP,    /* ARP, LLDP, ...: forwarded untouched by default */
	SGW_CLASS_MALFORMED, /* reason != SGW_PR_OK */
	SGW_CLASS__COUNT
};

#define SGW_IP6_MAX_EXT   8   /* longest IPv6 extension chain we walk */

/*
 * The most bytes from the start of a frame the parser ever reads: Ethernet
 * with two VLAN tags (22), the IPv6 header (40), SGW_IP6_MAX_EXT extension
 * headers of the longest length one can state ((255 + 1) * 8 = 2,048 each),
 * then TCP with 40 bytes of options (60): 16,506. An IPv4 walk is at most
 * 22 + 60 + 60. Given min(frame length, SGW_PARSE_HDR_MAX) bytes, the parser
 * never stops short for want of bytes that the frame has.
 */
#define SGW_PARSE_HDR_MAX (22 + 40 + SGW_IP6_MAX_EXT * 2048 + 60)
#define SGW_TCP_MAX_SACK  4   /* SACK blocks that fit in 40 bytes of options */
#define SGW_ESP_UDP_PORT  4500
#define SGW_LIFT_HDR_LEN  8   /* LIFT paper, Table I */
#define SGW_XCP_HDR_LEN   SGW_XCPW_LEN /* XCP v2 (lib/sgw_xcp.h, docs/wire-formats.md): 20 */

/* Which TCP options were present (bit set in sgw_tcp_opts.present). */
enum sgw_tcp_opt_bit {
	SGW_TCPOPT_MSS       = 1u << 0,
	SGW_TCPOPT_WSCALE    = 1u << 1,
	SGW_TCPOPT_SACK_PERM = 1u << 2,
	SGW_TCPOPT_SACK      = 1u << 3,
	SGW_TCPOPT_TS        = 1u << 4,
	SGW_TCPOPT_UNKNOWN   = 1u << 7, /* well-formed option of another kind */
};

struct sgw_tcp_opts {
	uint8_t present;    /* enum sgw_tcp_opt_bit */
	uint8_t wscale;
	uint8_t n_sack;
	uint8_t mss_off;    /* offset of MSS option from TCP header start, 0 if none */
	uint16_t mss;
	uint8_t ts_off;     /* offset of the timestamp option from TCP header start */
	uint8_t pad;
	uint32_t ts_val;
	uint32_t ts_ecr;
	struct {
		uint32_t left;
		uint32_t right;
	} sack[SGW_TCP_MAX_SACK];
};

/*
 * IP fragment flags (sgw_pkt_info.frag). frag == 0 for a packet that is not a
 * fragment; FIRST and MORE are only ever set together with IS_FRAGMENT.
 */
enum sgw_frag_bit {
	SGW_FRAG_IS_FRAGMENT = 1u << 0, /* MF set or offset != 0 */
	SGW_FRAG_FIRST       = 1u << 1, /* offset == 0 (L4 header present) */
	SGW_FRAG_MORE        = 1u << 2, /* MF set */
};

/*
 * Result of parsing one packet. Offsets are from the start of the buffer.
 * Addresses are in network byte order; an IPv4 address sits in addr[0..3].
 * Multi-byte scalar fields (ports, seq, spi, ...) are in host byte order.
 */
struct sgw_pkt_info {
	uint8_t cls;            /* enum sgw_class */
	uint8_t reason;         /* enum sgw_parse_reason */
	uint8_t ip_ver;         /* 4, 6, or 0 when not IP */
	uint8_t n_vlan;
	uint16_t vlan_tci[2];   /* outer first */
	uint16_t ethertype;     /* innermost ethertype, host order */
	uint16_t l3_off;
	uint16_t l4_off;        /* first byte after IP header + extension headers */
	uint16_t l4_hlen;       /* TCP: doff*4; UDP: 8; ESP: 8; ICMP: 4 */
	uint16_t payload_off;   /* l4_off + l4_hlen (ESP-in-UDP: after the UDP header) */
	uint32_t l3_len;        /* IP total length (v4) or 40 + payload length (v6) */
	uint8_t ip_proto;       /* upper-layer protocol after the extension chain */
	uint8_t dscp;
	uint8_t ecn;
	uint8_t ttl;            /* TTL or hop limit */
	uint8_t frag;           /* enum sgw_frag_bit */
	uint8_t esp_in_udp;     /* 1 when ESP came inside UDP port 4500 */
	uint8_t tcp_flags;
	uint8_t icmp_type;
	uint8_t icmp_code;
	uint8_t lift_next;      /* LIFT header's Next Header field */
	uint16_t sport;
	uint16_t dport;
	uint16_t tcp_win;
	uint32_t tcp_seq;
	uint32_t tcp_ack;
	uint32_t esp_spi;
	uint32_t esp_seq;
	uint8_t src[16];
	uint8_t dst[16];
	struct sgw_tcp_opts tcp_opts;
};

/*
 * LIFT header (seed 000 section II, Fig. 3 and Fig. 5; 8 bytes per its Table I).
 * It sits between the IP header and ESP. Byte 0 carries the flags, bit 0 of
 * the figures being the most significant bit. Every LIFT packet has the same
 * 8-byte fixed part; what bytes 3-7 mean depends on the type:
 *
 *   type (A,T)        bytes 1-2      bytes 3-6           byte 7
 *   setup (0,0)       flow id        downlink SPI        downlink protocol
 *   teardown (0,1)    flow id        reserved (0)        reserved (0)
 *   TCP ACK (1,0)     flow id        IPsec ACK number    next header
 *   FrACK (1,1)       flow id        reserved (0)        next header
 *
 * The paper draws the teardown header as 3 bytes; we pad it to the fixed 8 so
 * every LIFT header has one length. Multi-byte fields are big-endian.
 */
#define SGW_LIFT_F_A 0x80 /* 1: carries a TCP ACK or FrACK; 0: control packet */
#define SGW_LIFT_F_T 0x40 /* type within the class chosen by A */
#define SGW_LIFT_F_D 0x20 /* TCP ACK only: delete the flow-table entry */
#define SGW_LIFT_F_F 0x10 /* TCP ACK only: forward without delay */
#define SGW_LIFT_F_S 0x08 /* TCP ACK only: store (delay) while the timer runs */
#define SGW_LIFT_F_RESERVED 0x07

#define SGW_LIFT_OFF_FLAGS   0
#define SGW_LIFT_OFF_FLOW_ID 1 /* 16 bits */
#define SGW_LIFT_OFF_WORD    3 /* 32 bits: IPsec ACK number or downlink SPI */
#define SGW_LIFT_OFF_NEXT    7 /* next header or downlink protocol */

/* Values of (flags >> 6), i.e. A*2 + T. */
enum sgw_lift_type {
	SGW_LIFT_SETUP = 0,
	SGW_LIFT_TEARDOWN = 1,
	SGW_LIFT_TCP_ACK = 2,
	SGW_LIFT_FRACK = 3,
};

/* Byte layout only (alignment 1, no bitfields): overlay on packet bytes. */
struct sgw_lift_hdr {
	uint8_t flags;      /* A T D F S + 3 reserved bits */
	uint8_t flow_id[2]; /* TCP Flow Identifier, chosen by MH-LIFT */
	uint8_t word[4];    /* IPsec ACK number / downlink SPI / reserved */
	uint8_t next;       /* next header / downlink protocol / reserved */
};

static inline enum sgw_lift_type
sgw_lift_type(uint8_t flags)
{
	return (enum sgw_lift_type)((flags >> 6) & 3);
}

/*
 * XCP congestion header (SatERN, seed 001): version 2, 20 bytes between the
 * IP header and the transport header or ESP. Its layout, codec and checks
 * are lib/sgw_xcp.h's (SGW_XCPW_*); the parser only frames it: class xcp,
 * l4_hlen SGW_XCP_HDR_LEN, and xcp_trunc when fewer bytes follow the IP
 * header. The version-1 layout (16 bytes) is gone.
 */

struct sgw_parse_conf {
	uint8_t lift_proto;     /* default 253 (RFC 3692 experimental) */
	uint8_t xcp_proto;      /* default 254 */
	uint16_t esp_udp_port;  /* default 4500 */
};

void sgw_parse_conf_default(struct sgw_parse_conf *conf);

/*
 * Parse one frame starting at its Ethernet header. Always fills info->cls and
 * info->reason; other fields are valid as far as parsing got. Returns reason.
 */
enum sgw_parse_reason sgw_parse_frame(const struct sgw_parse_conf *conf, const uint8_t *data,
				      size_t len, struct sgw_pkt_info *info);

/*
 * The same for a frame whose first len bytes are contiguous and whose whole
 * length is frame_len (a multi-segment mbuf: data_len and pkt_len). IP and
 * UDP length fields are checked against frame_len; nothing past data + len is
 * read. A header that runs past data + len fails with a truncation reason
 * (ip4_trunc, ip4_bad_ihl, ip6_trunc, ip6_ext_trunc, tcp_trunc, tcp_bad_doff,
 * ...), as does ESP-in-UDP with fewer than 8 bytes given of a datagram that
 * goes on past them: when len < frame_len, that reason is final only once
 * the parse was given min(frame_len, SGW_PARSE_HDR_MAX) bytes (the worker
 * parses a copy of them when the first segment's bytes were not enough).
 */
enum sgw_parse_reason sgw_parse_frame_seg(const struct sgw_parse_conf *conf,
					  const uint8_t *data, size_t len, size_t frame_len,
					  struct sgw_pkt_info *info);

/* Parse TCP options in opts[0..len) (the bytes after the 20-byte header). */
enum sgw_parse_reason sgw_parse_tcp_options(const uint8_t *opts, size_t len,
					    struct sgw_tcp_opts *out);

const char *sgw_parse_reason_name(enum sgw_parse_reason r);
const char *sgw_class_name(enum sgw_class c);

/*
 * Burst sort (the shape of DPDK ipsec-secgw's prepare_traffic): parse n frames
 * and append the index of each to the array of its class, in arrival order.
 */
#define SGW_BURST_MAX 64

struct sgw_burst_classes {
	uint16_t n[SGW_CLASS__COUNT];
	uint16_t idx[SGW_CLASS__COUNT][SGW_BURST_MAX];
};

void sgw_classify_burst(const struct sgw_parse_conf *conf, const uint8_t *const *data,
			const uint16_t *len, uint16_t n, struct sgw_pkt_info *info,
			struct sgw_burst_classes *out);

/* The same with each frame's whole length (frame_len NULL: len). */
void sgw_classify_burst_seg(const struct sgw_parse_conf *conf, const uint8_t *const *data,
			    const uint16_t *len, const uint32_t *frame_len, uint16_t n,
			    struct sgw_pkt_info *info, struct sgw_burst_classes *out);

/*
 * The same, writing frame i's result at (char *)info + i * stride (stride >=
 * sizeof(struct sgw_pkt_info)): the caller's per-packet struct holds the
 * parse result among its own fields.
 */
void sgw_classify_burst_stride(const struct sgw_parse_conf *conf, const uint8_t *const *data,
			       const uint16_t *len, const uint32_t *frame_len, uint16_t n,
			       struct sgw_pkt_info *info, size_t stride,
			       struct sgw_burst_classes *out);

#ifdef __cplusplus
}
#endif

#endif /* SGW_PARSE_H */
