/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Packet parser and burst classifier: turns the bytes of one Ethernet frame
 * into a struct sgw_pkt_info (class, reason, offsets, L3/L4 fields) and sorts
 * a burst into per-class index arrays. The wire rules are in
 * docs/wire-formats.md ("Parsed headers").
 *
 * Every read is checked against (data, len) first; nothing here allocates,
 * keeps state or reads a clock.
 */
#include <stddef.h>
#include <string.h>

#include "sgw_parse.h"
#include "sgw_satlink.h"

#if defined(__GNUC__) || defined(__clang__)
#define SGW_LIKELY(x)   __builtin_expect(!!(x), 1)
#define SGW_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define SGW_LIKELY(x)   (x)
#define SGW_UNLIKELY(x) (x)
#endif

#define ETH_HLEN      14
#define VLAN_HLEN     4
#define ET_IPV4       0x0800
#define ET_IPV6       0x86dd
#define ET_VLAN       0x8100
#define ET_QINQ       0x88a8
#define IP4_HLEN      20
#define IP6_HLEN      40
#define TCP_HLEN      20
#define UDP_HLEN      8
#define ESP_HLEN      8   /* SPI + sequence number */
#define ICMP_HLEN     4
#define TCP_OPT_MAX   40  /* doff 15 leaves 40 bytes of options */

#define PROTO_HOPOPT  0
#define PROTO_ICMP    1
#define PROTO_TCP     6
#define PROTO_UDP     17
#define PROTO_ROUTING 43
#define PROTO_FRAG    44
#define PROTO_ESP     50
#define PROTO_AH      51
#define PROTO_ICMPV6  58
#define PROTO_NONE    59
#define PROTO_DSTOPTS 60
#define PROTO_MOBILITY 135
#define PROTO_HIP     139
#define PROTO_SHIM6   140

_Static_assert(sizeof(struct sgw_lift_hdr) == SGW_LIFT_HDR_LEN, "LIFT header is 8 bytes");
_Static_assert(SGW_XCP_HDR_LEN == 20, "the XCP v2 header (lib/sgw_xcp.h) is 20 bytes");
_Static_assert(offsetof(struct sgw_lift_hdr, next) == SGW_LIFT_OFF_NEXT, "LIFT layout");
_Static_assert(SGW_BURST_MAX <= UINT16_MAX, "burst indices are uint16_t");
/* The longest walk: two VLAN tags, IPv6, SGW_IP6_MAX_EXT headers of (255 + 1) * 8, TCP 60. */
_Static_assert(SGW_PARSE_HDR_MAX ==
	       ETH_HLEN + 2 * VLAN_HLEN + IP6_HLEN + SGW_IP6_MAX_EXT * 256 * 8 + TCP_HLEN +
	       TCP_OPT_MAX, "SGW_PARSE_HDR_MAX is the parser's longest header walk");
_Static_assert(SGW_PARSE_HDR_MAX >= ETH_HLEN + 2 * VLAN_HLEN + 60 + TCP_HLEN + TCP_OPT_MAX,
	       "and longer than any IPv4 walk");

static const struct sgw_parse_conf conf_default = {
	.lift_proto = 253,
	.xcp_proto = 254,
	.esp_udp_port = SGW_ESP_UDP_PORT,
};

static const char *const reason_names[SGW_PR__COUNT] = {
	[SGW_PR_OK] = "ok",
	[SGW_PR_ETH_TRUNC] = "eth_trunc",
	[SGW_PR_VLAN_TRUNC] = "vlan_trunc",
	[SGW_PR_VLAN_TOO_MANY] = "vlan_too_many",
	[SGW_PR_IP4_TRUNC] = "ip4_trunc",
	[SGW_PR_IP4_BAD_VERSION] = "ip4_bad_version",
	[SGW_PR_IP4_BAD_IHL] = "ip4_bad_ihl",
	[SGW_PR_IP4_BAD_TOTLEN] = "ip4_bad_totlen",
	[SGW_PR_IP4_BAD_OPTION] = "ip4_bad_option",
	[SGW_PR_IP6_TRUNC] = "ip6_trunc",
	[SGW_PR_IP6_BAD_VERSION] = "ip6_bad_version",
	[SGW_PR_IP6_BAD_PAYLEN] = "ip6_bad_paylen",
	[SGW_PR_IP6_EXT_TRUNC] = "ip6_ext_trunc",
	[SGW_PR_IP6_EXT_TOO_MANY] = "ip6_ext_too_many",
	[SGW_PR_TCP_TRUNC] = "tcp_trunc",
	[SGW_PR_TCP_BAD_DOFF] = "tcp_bad_doff",
	[SGW_PR_TCP_BAD_OPTION] = "tcp_bad_option",
	[SGW_PR_UDP_TRUNC] = "udp_trunc",
	[SGW_PR_UDP_BAD_LEN] = "udp_bad_len",
	[SGW_PR_ESP_TRUNC] = "esp_trunc",
	[SGW_PR_ICMP_TRUNC] = "icmp_trunc",
	[SGW_PR_LIFT_TRUNC] = "lift_trunc",
	[SGW_PR_XCP_TRUNC] = "xcp_trunc",
};

static const char *const class_names[SGW_CLASS__COUNT] = {
	[SGW_CLASS_TCP] = "tcp",
	[SGW_CLASS_UDP] = "udp",
	[SGW_CLASS_ESP] = "esp",
	[SGW_CLASS_ICMP] = "icmp",
	[SGW_CLASS_LIFT] = "lift",
	[SGW_CLASS_XCP] = "xcp",
	[SGW_CLASS_IP_OTHER] = "ip_other",
	[SGW_CLASS_SATLINK] = "satlink",
	[SGW_CLASS_NON_IP] = "non_ip",
	[SGW_CLASS_MALFORMED] = "malformed",
};

static inline uint16_t
load_be16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	return v;
#elif defined(__GNUC__) || defined(__clang__)
	return __builtin_bswap16(v);
#else
	return (uint16_t)((p[0] << 8) | p[1]);
#endif
}

static inline uint32_t
load_be32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	return v;
#elif defined(__GNUC__) || defined(__clang__)
	return __builtin_bswap32(v);
#else
	return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
#endif
}

static inline enum sgw_parse_reason
fail(struct sgw_pkt_info *info, enum sgw_parse_reason r)
{
	info->cls = SGW_CLASS_MALFORMED;
	info->reason = (uint8_t)r;
	return r;
}

/* For failures before the addresses were read: later stages may still hash them. */
static inline enum sgw_parse_reason
fail_noaddr(struct sgw_pkt_info *info, enum sgw_parse_reason r)
{
	memset(info->src, 0, sizeof(info->src) + sizeof(info->dst));
	return fail(info, r);
}

/*
 * TCP options in o[0..len), len <= TCP_OPT_MAX; out's scalars are zero on entry.
 * A duplicated option overwrites the earlier one, as Linux does.
 */
static inline enum sgw_parse_reason
tcp_opts_walk(const uint8_t *o, size_t len, struct sgw_tcp_opts *out)
{
	size_t i = 0;

	/* NOP NOP TS: what Linux and most stacks send on every data segment. */
	if (SGW_LIKELY(len == 12) && load_be32(o) == 0x0101080aU) {
		out->present = SGW_TCPOPT_TS;
		out->ts_off = TCP_HLEN + 2;
		out->ts_val = load_be32(o + 4);
		out->ts_ecr = load_be32(o + 8);
		return SGW_PR_OK;
	}

	while (i < len) {
		uint8_t kind = o[i];
		uint8_t olen;

		if (kind == 0)
			break;  /* EOL: the rest is padding */
		if (kind == 1) {
			i++;
			continue;
		}
		if (i + 1 >= len)
			return SGW_PR_TCP_BAD_OPTION;
		olen = o[i + 1];
		if (olen < 2 || olen > len - i)
			return SGW_PR_TCP_BAD_OPTION;
		switch (kind) {
		case 2:
			if (olen != 4)
				return SGW_PR_TCP_BAD_OPTION;
			out->present |= SGW_TCPOPT_MSS;
			out->mss_off = (uint8_t)(TCP_HLEN + i);
			out->mss = load_be16(o + i + 2);
			break;
		case 3:
			if (olen != 3)
				return SGW_PR_TCP_BAD_OPTION;
			out->present |= SGW_TCPOPT_WSCALE;
			out->wscale = o[i + 2];
			break;
		case 4:
			if (olen != 2)
				return SGW_PR_TCP_BAD_OPTION;
			out->present |= SGW_TCPOPT_SACK_PERM;
			break;
		case 5: {
			unsigned int n, k;

			if (olen < 10 || olen > 2 + 8 * SGW_TCP_MAX_SACK || (olen - 2) % 8 != 0)
				return SGW_PR_TCP_BAD_OPTION;
			n = (olen - 2u) / 8u;
			for (k = 0; k < n; k++) {
				out->sack[k].left = load_be32(o + i + 2 + 8 * k);
				out->sack[k].right = load_be32(o + i + 6 + 8 * k);
			}
			out->present |= SGW_TCPOPT_SACK;
			out->n_sack = (uint8_t)n;
			break;
		}
		case 8:
			if (olen != 10)
				return SGW_PR_TCP_BAD_OPTION;
			out->present |= SGW_TCPOPT_TS;
			out->ts_off = (uint8_t)(TCP_HLEN + i);
			out->ts_val = load_be32(o + i + 2);
			out->ts_ecr = load_be32(o + i + 6);
			break;
		default:
			out->present |= SGW_TCPOPT_UNKNOWN;
			break;
		}
		i += olen;
	}
	return SGW_PR_OK;
}

/* IPv4 options in o[0..len): true when one has a bad length. */
static int
ip4_opts_bad(const uint8_t *o, size_t len)
{
	size_t i = 0;

	while (i < len) {
		uint8_t kind = o[i];
		uint8_t olen;

		if (kind == 0)
			return 0;
		if (kind == 1) {
			i++;
			continue;
		}
		if (i + 1 >= len)
			return 1;
		olen = o[i + 1];
		if (olen < 2 || olen > len - i)
			return 1;
		i += olen;
	}
	return 0;
}

/*
 * UDP on conf->esp_udp_port: RFC 3948 section 2.2 and 2.3 tell ESP from the
 * rest. cut: the datagram goes on past p + plen, in later mbuf segments.
 */
static inline enum sgw_parse_reason
parse_udp_encap(const uint8_t *p, size_t plen, bool cut, struct sgw_pkt_info *info)
{
	uint32_t spi;

	/* Too few bytes to tell (one 0xff is a keepalive only if it is all there is). */
	if (SGW_UNLIKELY(cut && plen < ESP_HLEN))
		return fail(info, SGW_PR_ESP_TRUNC);
	if (plen == 1 && p[0] == 0xff)
		return SGW_PR_OK;  /* NAT-keepalive */
	if (plen >= 4) {
		spi = load_be32(p);
		if (spi == 0)
			return SGW_PR_OK;  /* non-ESP marker: IKE; SPI 0 is never ESP */
	}
	if (plen < ESP_HLEN)
		return fail(info, SGW_PR_ESP_TRUNC);
	info->cls = SGW_CLASS_ESP;
	info->esp_in_udp = 1;
	info->esp_spi = load_be32(p);
	info->esp_seq = load_be32(p + 4);
	return SGW_PR_OK;
}

/*
 * Upper layer at data[l4, end), end <= len. For a first fragment the bytes
 * after l4 are only the first piece of the datagram.
 */
static inline enum sgw_parse_reason
parse_l4(const struct sgw_parse_conf *conf, const uint8_t *data, size_t l4, size_t end,
	 bool partial, struct sgw_pkt_info *info)
{
	const uint8_t *p = data + l4;
	size_t avail = end - l4;
	uint8_t proto = info->ip_proto;

	info->l4_off = (uint16_t)l4;
	info->payload_off = (uint16_t)l4;

	switch (proto) {
	case PROTO_TCP: {
		size_t hlen;
		enum sgw_parse_reason r;

		if (SGW_UNLIKELY(avail < TCP_HLEN))
			return fail(info, SGW_PR_TCP_TRUNC);
		hlen = (size_t)(p[12] >> 4) * 4;
		if (SGW_UNLIKELY(hlen < TCP_HLEN || hlen > avail))
			return fail(info, SGW_PR_TCP_BAD_DOFF);
		info->sport = load_be16(p);
		info->dport = load_be16(p + 2);
		info->tcp_seq = load_be32(p + 4);
		info->tcp_ack = load_be32(p + 8);
		info->tcp_flags = p[13];
		info->tcp_win = load_be16(p + 14);
		if (hlen > TCP_HLEN) {
			r = tcp_opts_walk(p + TCP_HLEN, hlen - TCP_HLEN, &info->tcp_opts);
			if (SGW_UNLIKELY(r != SGW_PR_OK))
				return fail(info, r);
		}
		info->l4_hlen = (uint16_t)hlen;
		info->payload_off = (uint16_t)(l4 + hlen);
		info->cls = SGW_CLASS_TCP;
		return SGW_PR_OK;
	}
	case PROTO_UDP: {
		size_t ulen;
		bool cut = false;
		enum sgw_parse_reason r;

		if (SGW_UNLIKELY(avail < UDP_HLEN))
			return fail(info, SGW_PR_UDP_TRUNC);
		ulen = load_be16(p + 4);
		info->sport = load_be16(p);
		info->dport = load_be16(p + 2);
		if (SGW_UNLIKELY(ulen < UDP_HLEN))
			return fail(info, SGW_PR_UDP_BAD_LEN);
		/*
		 * A first fragment's UDP length counts bytes still to come, and so
		 * does a datagram whose tail is in later mbuf segments.
		 */
		if (ulen > avail) {
			if (SGW_UNLIKELY(!(info->frag & SGW_FRAG_IS_FRAGMENT) && !partial))
				return fail(info, SGW_PR_UDP_BAD_LEN);
			cut = partial;
			ulen = avail;
		}
		info->l4_hlen = UDP_HLEN;
		info->payload_off = (uint16_t)(l4 + UDP_HLEN);
		info->cls = SGW_CLASS_UDP;
		if (conf->esp_udp_port != 0 &&
		    (info->sport == conf->esp_udp_port || info->dport == conf->esp_udp_port)) {
			r = parse_udp_encap(p + UDP_HLEN, ulen - UDP_HLEN, cut, info);
			if (r != SGW_PR_OK)
				return r;
		}
		return SGW_PR_OK;
	}
	case PROTO_ESP:
		if (SGW_UNLIKELY(avail < ESP_HLEN))
			return fail(info, SGW_PR_ESP_TRUNC);
		info->esp_spi = load_be32(p);
		info->esp_seq = load_be32(p + 4);
		info->l4_hlen = ESP_HLEN;
		info->payload_off = (uint16_t)(l4 + ESP_HLEN);
		info->cls = SGW_CLASS_ESP;
		return SGW_PR_OK;
	case PROTO_ICMP:
	case PROTO_ICMPV6:
		/* ICMPv4 only counts in IPv4 and ICMPv6 only in IPv6. */
		if ((proto == PROTO_ICMP) != (info->ip_ver == 4))
			break;
		if (SGW_UNLIKELY(avail < ICMP_HLEN))
			return fail(info, SGW_PR_ICMP_TRUNC);
		info->icmp_type = p[0];
		info->icmp_code = p[1];
		info->l4_hlen = ICMP_HLEN;
		info->payload_off = (uint16_t)(l4 + ICMP_HLEN);
		info->cls = SGW_CLASS_ICMP;
		return SGW_PR_OK;
	case PROTO_NONE:
		break;
	default:
		if (proto == conf->lift_proto) {
			if (avail < SGW_LIFT_HDR_LEN)
				return fail(info, SGW_PR_LIFT_TRUNC);
			/* Control packets carry no payload: byte 7 is the downlink protocol. */
			info->lift_next = (p[SGW_LIFT_OFF_FLAGS] & SGW_LIFT_F_A) ?
				p[SGW_LIFT_OFF_NEXT] : PROTO_NONE;
			info->l4_hlen = SGW_LIFT_HDR_LEN;
			info->payload_off = (uint16_t)(l4 + SGW_LIFT_HDR_LEN);
			info->cls = SGW_CLASS_LIFT;
			return SGW_PR_OK;
		}
		if (proto == conf->xcp_proto) {
			if (avail < SGW_XCP_HDR_LEN)
				return fail(info, SGW_PR_XCP_TRUNC);
			info->l4_hlen = SGW_XCP_HDR_LEN;
			info->payload_off = (uint16_t)(l4 + SGW_XCP_HDR_LEN);
			info->cls = SGW_CLASS_XCP;
			return SGW_PR_OK;
		}
		break;
	}
	info->cls = SGW_CLASS_IP_OTHER;
	return SGW_PR_OK;
}

static inline enum sgw_parse_reason
parse_ip4(const struct sgw_parse_conf *conf, const uint8_t *data, size_t len, size_t flen,
	  size_t off, struct sgw_pkt_info *info)
{
	const uint8_t *ip = data + off;
	size_t avail = len - off;
	size_t favail = flen - off;
	size_t hlen, tot;
	uint16_t ff;

	if (SGW_UNLIKELY(avail < IP4_HLEN))
		return fail_noaddr(info, SGW_PR_IP4_TRUNC);
	if (SGW_UNLIKELY((ip[0] >> 4) != 4))
		return fail_noaddr(info, SGW_PR_IP4_BAD_VERSION);
	hlen = (size_t)(ip[0] & 0x0f) * 4;
	if (SGW_UNLIKELY(hlen < IP4_HLEN || hlen > avail))
		return fail_noaddr(info, SGW_PR_IP4_BAD_IHL);

	info->ip_ver = 4;
	info->dscp = ip[1] >> 2;
	info->ecn = ip[1] & 3;
	info->ttl = ip[8];
	info->ip_proto = ip[9];
	memcpy(info->src, ip + 12, 4);
	memset(info->src + 4, 0, sizeof(info->src) - 4);
	memcpy(info->dst, ip + 16, 4);
	memset(info->dst + 4, 0, sizeof(info->dst) - 4);

	tot = load_be16(ip + 2);
	if (SGW_UNLIKELY(tot < hlen || tot > favail))
		return fail(info, SGW_PR_IP4_BAD_TOTLEN);
	info->l3_len = (uint32_t)tot;
	if (SGW_UNLIKELY(hlen > IP4_HLEN) && ip4_opts_bad(ip + IP4_HLEN, hlen - IP4_HLEN))
		return fail(info, SGW_PR_IP4_BAD_OPTION);

	ff = load_be16(ip + 6);
	if (SGW_UNLIKELY(ff & 0x3fff)) {
		info->frag = SGW_FRAG_IS_FRAGMENT;
		if (ff & 0x2000)
			info->frag |= SGW_FRAG_MORE;
		if ((ff & 0x1fff) == 0) {
			info->frag |= SGW_FRAG_FIRST;
		} else {
			/* No L4 header here: forward it as opaque IP. */
			info->l4_off = (uint16_t)(off + hlen);
			info->payload_off = info->l4_off;
			info->cls = SGW_CLASS_IP_OTHER;
			return SGW_PR_OK;
		}
	}
	/* Headers must sit in the contiguous bytes; the tail may be in later segments. */
	if (SGW_UNLIKELY(tot > avail))
		return parse_l4(conf, data, off + hlen, len, true, info);
	return parse_l4(conf, data, off + hlen, off + tot, false, info);
}

static inline enum sgw_parse_reason
parse_ip6(const struct sgw_parse_conf *conf, const uint8_t *data, size_t len, size_t flen,
	  size_t off, struct sgw_pkt_info *info)
{
	const uint8_t *ip = data + off;
	size_t avail = len - off;
	bool partial = false;
	size_t p, end;
	unsigned int n_ext = 0;
	uint8_t nh;

	if (SGW_UNLIKELY(avail < IP6_HLEN))
		return fail_noaddr(info, SGW_PR_IP6_TRUNC);
	if (SGW_UNLIKELY((ip[0] >> 4) != 6))
		return fail_noaddr(info, SGW_PR_IP6_BAD_VERSION);

	info->ip_ver = 6;
	info->dscp = (uint8_t)(((ip[0] & 0x0f) << 2) | (ip[1] >> 6));
	info->ecn = (ip[1] >> 4) & 3;
	info->ttl = ip[7];
	memcpy(info->src, ip + 8, 16);
	memcpy(info->dst, ip + 24, 16);

	end = IP6_HLEN + (size_t)load_be16(ip + 4);
	info->l3_len = (uint32_t)end;
	if (SGW_UNLIKELY(end > flen - off))
		return fail(info, SGW_PR_IP6_BAD_PAYLEN);
	if (SGW_UNLIKELY(end > avail)) {
		/* The tail is in later mbuf segments: walk headers in what is contiguous. */
		end = avail;
		partial = true;
	}
	end += off;
	p = off + IP6_HLEN;
	nh = ip[6];

	for (;;) {
		size_t hl;

		switch (nh) {
		case PROTO_HOPOPT:
		case PROTO_ROUTING:
		case PROTO_FRAG:
		case PROTO_AH:
		case PROTO_DSTOPTS:
		case PROTO_MOBILITY:
		case PROTO_HIP:
		case PROTO_SHIM6:
			break;
		default:
			goto done;
		}
		info->ip_proto = nh;
		info->l4_off = (uint16_t)p;
		if (SGW_UNLIKELY(n_ext == SGW_IP6_MAX_EXT))
			return fail(info, SGW_PR_IP6_EXT_TOO_MANY);
		n_ext++;
		if (end - p < 2)
			return fail(info, SGW_PR_IP6_EXT_TRUNC);
		if (nh == PROTO_FRAG)
			hl = 8;
		else if (nh == PROTO_AH)
			hl = ((size_t)data[p + 1] + 2) * 4;  /* RFC 4302: 32-bit words minus 2 */
		else
			hl = ((size_t)data[p + 1] + 1) * 8;
		if (hl > end - p)
			return fail(info, SGW_PR_IP6_EXT_TRUNC);
		if (nh == PROTO_FRAG) {
			uint16_t fo = load_be16(data + p + 2);

			info->frag = 0;
			if (fo & 0xfff9) {
				info->frag = SGW_FRAG_IS_FRAGMENT;
				if (fo & 1)
					info->frag |= SGW_FRAG_MORE;
				if ((fo & 0xfff8) == 0)
					info->frag |= SGW_FRAG_FIRST;
			}
			if (fo & 0xfff8) {
				/* Non-first fragment: what follows is not a header. */
				info->ip_proto = data[p];
				info->l4_off = (uint16_t)(p + hl);
				info->payload_off = info->l4_off;
				info->cls = SGW_CLASS_IP_OTHER;
				return SGW_PR_OK;
			}
		}
		nh = data[p];
		p += hl;
	}
done:
	info->ip_proto = nh;
	return parse_l4(conf, data, p, end, partial, info);
}

/*
 * Zero n bytes (a multiple of 8, known at compile time) with 8-byte stores:
 * GCC calls the library memset for these sizes, which costs a call and a
 * size dispatch per packet on the hottest path.
 */
static inline void
zero8(void *p, size_t n)
{
	static const uint64_t z;
	size_t i;

	for (i = 0; i < n; i += 8)
		memcpy((uint8_t *)p + i, &z, 8);
}

_Static_assert(offsetof(struct sgw_pkt_info, src) % 8 == 0 &&
	       offsetof(struct sgw_tcp_opts, sack) % 8 == 0 &&
	       offsetof(struct sgw_pkt_info, tcp_opts) % 8 == 0,
	       "zero8 clears whole 8-byte words");

static inline enum sgw_parse_reason
parse_frame(const struct sgw_parse_conf *conf, const uint8_t *data, size_t len, size_t flen,
	    struct sgw_pkt_info *info)
{
	size_t off = ETH_HLEN;
	uint16_t et;

	/* Scalars up to the addresses and the TCP option scalars; SACK blocks
	 * past n_sack are never read, so they are not cleared.
	 */
	zero8(info, offsetof(struct sgw_pkt_info, src));
	zero8(&info->tcp_opts, offsetof(struct sgw_tcp_opts, sack));

	if (SGW_UNLIKELY(len < ETH_HLEN))
		return fail_noaddr(info, SGW_PR_ETH_TRUNC);
	et = load_be16(data + 12);
	while (SGW_UNLIKELY(et == ET_VLAN || et == ET_QINQ)) {
		if (info->n_vlan == 2)
			return fail_noaddr(info, SGW_PR_VLAN_TOO_MANY);
		if (len - off < VLAN_HLEN)
			return fail_noaddr(info, SGW_PR_VLAN_TRUNC);
		info->vlan_tci[info->n_vlan++] = load_be16(data + off);
		et = load_be16(data + off + 2);
		off += VLAN_HLEN;
	}
	info->ethertype = et;
	info->l3_off = (uint16_t)off;
	if (SGW_LIKELY(et == ET_IPV4))
		return parse_ip4(conf, data, len, flen, off, info);
	if (et == ET_IPV6)
		return parse_ip6(conf, data, len, flen, off, info);
	memset(info->src, 0, sizeof(info->src) + sizeof(info->dst));
	/* The satlink stage parses (and counts) the frame itself. */
	info->cls = et == SGW_SATLINK_ETHERTYPE ? SGW_CLASS_SATLINK : SGW_CLASS_NON_IP;
	return SGW_PR_OK;
}

void
sgw_parse_conf_default(struct sgw_parse_conf *conf)
{
	*conf = conf_default;
}

enum sgw_parse_reason
sgw_parse_frame(const struct sgw_parse_conf *conf, const uint8_t *data, size_t len,
		struct sgw_pkt_info *info)
{
	if (conf == NULL)
		conf = &conf_default;
	return parse_frame(conf, data, len, len, info);
}

enum sgw_parse_reason
sgw_parse_frame_seg(const struct sgw_parse_conf *conf, const uint8_t *data, size_t len,
		    size_t frame_len, struct sgw_pkt_info *info)
{
	if (conf == NULL)
		conf = &conf_default;
	if (frame_len < len)
		frame_len = len;
	return parse_frame(conf, data, len, frame_len, info);
}

enum sgw_parse_reason
sgw_parse_tcp_options(const uint8_t *opts, size_t len, struct sgw_tcp_opts *out)
{
	memset(out, 0, offsetof(struct sgw_tcp_opts, sack));
	/* Offsets are uint8_t from the TCP header and doff caps options at 40. */
	if (len > TCP_OPT_MAX)
		return SGW_PR_TCP_BAD_OPTION;
	return tcp_opts_walk(opts, len, out);
}

const char *
sgw_parse_reason_name(enum sgw_parse_reason r)
{
	if ((unsigned int)r >= SGW_PR__COUNT)
		return "unknown";
	return reason_names[r];
}

const char *
sgw_class_name(enum sgw_class c)
{
	if ((unsigned int)c >= SGW_CLASS__COUNT)
		return "unknown";
	return class_names[c];
}

void
sgw_classify_burst(const struct sgw_parse_conf *conf, const uint8_t *const *data,
		   const uint16_t *len, uint16_t n, struct sgw_pkt_info *info,
		   struct sgw_burst_classes *out)
{
	sgw_classify_burst_seg(conf, data, len, NULL, n, info, out);
}

void
sgw_classify_burst_seg(const struct sgw_parse_conf *conf, const uint8_t *const *data,
		       const uint16_t *len, const uint32_t *frame_len, uint16_t n,
		       struct sgw_pkt_info *info, struct sgw_burst_classes *out)
{
	sgw_classify_burst_stride(conf, data, len, frame_len, n, info, sizeof(*info), out);
}

void
sgw_classify_burst_stride(const struct sgw_parse_conf *conf, const uint8_t *const *data,
			  const uint16_t *len, const uint32_t *frame_len, uint16_t n,
			  struct sgw_pkt_info *info, size_t stride, struct sgw_burst_classes *out)
{
	uint16_t i;

	if (conf == NULL)
		conf = &conf_default;
	memset(out->n, 0, sizeof(out->n));
	/* idx[] has SGW_BURST_MAX slots per class; frames past that are left out. */
	if (n > SGW_BURST_MAX)
		n = SGW_BURST_MAX;
	for (i = 0; i < n; i++) {
		struct sgw_pkt_info *pi =
			(struct sgw_pkt_info *)(void *)((char *)info + (size_t)i * stride);
		size_t flen = len[i];
		uint8_t c;

		if (frame_len != NULL && frame_len[i] > flen)
			flen = frame_len[i];
		parse_frame(conf, data[i], len[i], flen, pi);
		c = pi->cls;
		out->idx[c][out->n[c]++] = i;
	}
}
