/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * TCP segment codec (contract: sgw_tcp.h): header and options parsed from
 * (pointer, length) with a reason per failure, header and options built into
 * a caller buffer, the Internet checksum with the IPv4/IPv6 pseudo-header,
 * and the RST that answers a segment with no connection.
 *
 * Byte loads and stores only: segments sit at any alignment in packet
 * buffers, so no struct is ever cast onto them.
 */
#include <string.h>

#include "sgw_tcp.h"

#define OPT_EOL 0
#define OPT_NOP 1
#define OPT_MSS 2
#define OPT_WS 3
#define OPT_SACK_PERM 4
#define OPT_SACK 5
#define OPT_TS 8

static inline uint16_t
ld16(const uint8_t *p)
{
	return (uint16_t)((p[0] << 8) | p[1]);
}

static inline uint32_t
ld32(const uint8_t *p)
{
	return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

static inline void
st16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void
st32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static const char *const parse_names[SGW_TCP_PR__COUNT] = {
	[SGW_TCP_PR_OK] = "ok",
	[SGW_TCP_PR_TRUNC] = "trunc",
	[SGW_TCP_PR_BAD_DOFF] = "bad_doff",
	[SGW_TCP_PR_OPT_LEN] = "opt_len",
	[SGW_TCP_PR_OPT_MSS] = "opt_mss",
	[SGW_TCP_PR_OPT_WS] = "opt_ws",
	[SGW_TCP_PR_OPT_SACK_PERM] = "opt_sack_perm",
	[SGW_TCP_PR_OPT_SACK] = "opt_sack",
	[SGW_TCP_PR_OPT_TS] = "opt_ts",
};

const char *
sgw_tcp_parse_reason_name(int reason)
{
	if (reason < 0 || reason >= SGW_TCP_PR__COUNT)
		return "?";
	return parse_names[reason];
}

/* Walk the options (o, n bytes, n <= 40): the loop advances at least 1 byte a turn. */
static int
opts_parse(const uint8_t *o, uint32_t n, struct sgw_tcp_seg *s)
{
	uint32_t i = 0;

	while (i < n) {
		uint8_t kind = o[i];
		uint32_t l, k;

		if (kind == OPT_EOL)
			break;
		if (kind == OPT_NOP) {
			i++;
			continue;
		}
		if (i + 1 >= n)
			return SGW_TCP_PR_OPT_LEN;
		l = o[i + 1];
		if (l < 2 || i + l > n)
			return SGW_TCP_PR_OPT_LEN;
		switch (kind) {
		case OPT_MSS:
			if (l != 4)
				return SGW_TCP_PR_OPT_MSS;
			s->mss = ld16(o + i + 2);
			s->opts |= SGW_TCP_O_MSS;
			break;
		case OPT_WS:
			if (l != 3)
				return SGW_TCP_PR_OPT_WS;
			/* RFC 7323 2.3: a shift above 14 is used as 14 */
			s->wscale = o[i + 2] > SGW_TCP_MAX_WSCALE ? SGW_TCP_MAX_WSCALE : o[i + 2];
			s->opts |= SGW_TCP_O_WS;
			break;
		case OPT_SACK_PERM:
			if (l != 2)
				return SGW_TCP_PR_OPT_SACK_PERM;
			s->opts |= SGW_TCP_O_SACK_PERM;
			break;
		case OPT_SACK:
			if (l < 10 || (l - 2) % 8 != 0 || (l - 2) / 8 > SGW_TCP_MAX_SACK)
				return SGW_TCP_PR_OPT_SACK;
			s->n_sack = (uint8_t)((l - 2) / 8);
			for (k = 0; k < s->n_sack; k++) {
				s->sack[k].left = ld32(o + i + 2 + 8 * k);
				s->sack[k].right = ld32(o + i + 6 + 8 * k);
			}
			s->opts |= SGW_TCP_O_SACK;
			break;
		case OPT_TS:
			if (l != 10)
				return SGW_TCP_PR_OPT_TS;
			s->tsval = ld32(o + i + 2);
			s->tsecr = ld32(o + i + 6);
			s->opts |= SGW_TCP_O_TS;
			break;
		default:
			break;
		}
		i += l;
	}
	return SGW_TCP_PR_OK;
}

int
sgw_tcp_seg_parse(const void *p, size_t len, struct sgw_tcp_seg *s, uint64_t *ctr)
{
	const uint8_t *b = p;
	uint32_t hlen;
	int r;

	memset(s, 0, sizeof(*s));
	if (b == NULL || len < SGW_TCP_HDR_LEN) {
		r = SGW_TCP_PR_TRUNC;
		goto bad;
	}
	hlen = (uint32_t)(b[12] >> 4) * 4;
	if (hlen < SGW_TCP_HDR_LEN || hlen > len) {
		r = SGW_TCP_PR_BAD_DOFF;
		goto bad;
	}
	s->sport = ld16(b);
	s->dport = ld16(b + 2);
	s->seq = ld32(b + 4);
	s->ack = ld32(b + 8);
	s->flags = b[13];
	s->win = ld16(b + 14);
	s->urp = ld16(b + 18);
	s->hlen = (uint8_t)hlen;
	r = opts_parse(b + SGW_TCP_HDR_LEN, hlen - SGW_TCP_HDR_LEN, s);
	if (r != SGW_TCP_PR_OK)
		goto bad;
	s->data = b + hlen;
	/* len is the IP layer's: a segment longer than 4 GB cannot exist */
	s->len = (uint32_t)(len - hlen);
	return SGW_TCP_PR_OK;
bad:
	if (ctr != NULL)
		ctr[r]++;
	return r;
}

/* SACK blocks that fit beside the other options in 40 bytes. */
static uint32_t
sack_fit(const struct sgw_tcp_seg *s, uint32_t fixed)
{
	uint32_t n = s->n_sack > SGW_TCP_MAX_SACK ? SGW_TCP_MAX_SACK : s->n_sack;

	if (!(s->opts & SGW_TCP_O_SACK) || n == 0)
		return 0;
	while (n > 0 && fixed + 4 + 8 * n > 40)
		n--;
	return n;
}

static uint32_t
fixed_opts_len(const struct sgw_tcp_seg *s)
{
	uint32_t l = 0;

	if (s->opts & SGW_TCP_O_MSS)
		l += 4;
	if (s->opts & SGW_TCP_O_WS)
		l += 4;
	if (s->opts & SGW_TCP_O_TS)
		l += 12; /* SACK-permitted shares the TS option's two pad bytes */
	else if (s->opts & SGW_TCP_O_SACK_PERM)
		l += 4;
	return l;
}

uint32_t
sgw_tcp_opts_len(const struct sgw_tcp_seg *s)
{
	uint32_t l = fixed_opts_len(s);
	uint32_t n = sack_fit(s, l);

	return n ? l + 4 + 8 * n : l;
}

uint32_t
sgw_tcp_seg_build(void *buf, size_t cap, const struct sgw_tcp_seg *s)
{
	uint8_t *b = buf;
	uint32_t fixed = fixed_opts_len(s);
	uint32_t n_sack = sack_fit(s, fixed);
	uint32_t hlen = SGW_TCP_HDR_LEN + fixed + (n_sack ? 4 + 8 * n_sack : 0);
	uint8_t *o;
	uint32_t k;

	if (b == NULL || cap < hlen)
		return 0;
	st16(b, s->sport);
	st16(b + 2, s->dport);
	st32(b + 4, s->seq);
	st32(b + 8, s->ack);
	b[12] = (uint8_t)((hlen / 4) << 4);
	b[13] = s->flags;
	st16(b + 14, s->win);
	st16(b + 16, 0);
	st16(b + 18, s->urp);
	o = b + SGW_TCP_HDR_LEN;
	/* The order Linux uses in a SYN: MSS, SACK-permitted, TS, NOP, WS. */
	if (s->opts & SGW_TCP_O_MSS) {
		o[0] = OPT_MSS;
		o[1] = 4;
		st16(o + 2, s->mss);
		o += 4;
	}
	if (s->opts & SGW_TCP_O_TS) {
		if (s->opts & SGW_TCP_O_SACK_PERM) {
			o[0] = OPT_SACK_PERM;
			o[1] = 2;
		} else {
			o[0] = OPT_NOP;
			o[1] = OPT_NOP;
		}
		o[2] = OPT_TS;
		o[3] = 10;
		st32(o + 4, s->tsval);
		st32(o + 8, s->tsecr);
		o += 12;
	} else if (s->opts & SGW_TCP_O_SACK_PERM) {
		o[0] = OPT_NOP;
		o[1] = OPT_NOP;
		o[2] = OPT_SACK_PERM;
		o[3] = 2;
		o += 4;
	}
	if (s->opts & SGW_TCP_O_WS) {
		o[0] = OPT_NOP;
		o[1] = OPT_WS;
		o[2] = 3;
		o[3] = s->wscale;
		o += 4;
	}
	if (n_sack) {
		o[0] = OPT_NOP;
		o[1] = OPT_NOP;
		o[2] = OPT_SACK;
		o[3] = (uint8_t)(2 + 8 * n_sack);
		o += 4;
		for (k = 0; k < n_sack; k++) {
			st32(o, s->sack[k].left);
			st32(o + 4, s->sack[k].right);
			o += 8;
		}
	}
	return hlen;
}

uint32_t
sgw_tcp_csum_add(uint32_t sum, const void *p, size_t len)
{
	const uint8_t *b = p;
	uint64_t acc = sum;
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		acc += (uint32_t)((b[i] << 8) | b[i + 1]);
	if (len & 1)
		acc += (uint32_t)b[len - 1] << 8;
	while (acc >> 32)
		acc = (acc & 0xffffffffu) + (acc >> 32);
	return (uint32_t)acc;
}

uint16_t
sgw_tcp_csum_fold(uint32_t sum)
{
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

static uint16_t
csum_finish(uint32_t sum, const void *hdr, size_t hlen, const void *data, size_t dlen)
{
	sum = sgw_tcp_csum_add(sum, hdr, hlen);
	if (dlen)
		sum = sgw_tcp_csum_add(sum, data, dlen);
	return (uint16_t)~sgw_tcp_csum_fold(sum);
}

uint16_t
sgw_tcp_csum_ipv4(const uint8_t src[4], const uint8_t dst[4], const void *hdr, size_t hlen,
		  const void *data, size_t dlen)
{
	uint32_t sum = 0;
	uint32_t l = (uint32_t)(hlen + dlen);

	sum = sgw_tcp_csum_add(sum, src, 4);
	sum = sgw_tcp_csum_add(sum, dst, 4);
	sum += 6; /* zero byte, protocol 6 */
	sum += l >> 16;
	sum += l & 0xffff;
	return csum_finish(sum, hdr, hlen, data, dlen);
}

uint16_t
sgw_tcp_csum_ipv6(const uint8_t src[16], const uint8_t dst[16], const void *hdr, size_t hlen,
		  const void *data, size_t dlen)
{
	uint32_t sum = 0;
	uint32_t l = (uint32_t)(hlen + dlen);

	sum = sgw_tcp_csum_add(sum, src, 16);
	sum = sgw_tcp_csum_add(sum, dst, 16);
	sum += l >> 16;
	sum += l & 0xffff;
	sum += 6; /* next header */
	return csum_finish(sum, hdr, hlen, data, dlen);
}

int
sgw_tcp_rst_for(const struct sgw_tcp_seg *seg, struct sgw_tcp_seg *rst)
{
	if (seg->flags & SGW_TCP_F_RST)
		return 0;
	memset(rst, 0, sizeof(*rst));
	rst->sport = seg->dport;
	rst->dport = seg->sport;
	if (seg->flags & SGW_TCP_F_ACK) {
		rst->seq = seg->ack;
		rst->flags = SGW_TCP_F_RST;
	} else {
		rst->seq = 0;
		rst->ack = seg->seq + seg->len + !!(seg->flags & SGW_TCP_F_SYN) +
			   !!(seg->flags & SGW_TCP_F_FIN);
		rst->flags = SGW_TCP_F_RST | SGW_TCP_F_ACK;
	}
	return 1;
}
