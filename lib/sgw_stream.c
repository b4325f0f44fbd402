/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Split TCP stream messages: bounds-checked decoder and encoder (contract:
 * sgw_stream.h; layout: docs/wire-formats.md "Split TCP streams").
 * Big-endian fields read and written byte by byte (no casts of unaligned
 * data). The encoder refuses what the decoder would refuse, so every encoded
 * message decodes back to the same fields.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "sgw_stream.h"

static const char *const err_names[SGW_STREAM_E__COUNT] = {
	[SGW_STREAM_E_OK] = "ok",
	[SGW_STREAM_E_EMPTY] = "empty",
	[SGW_STREAM_E_BAD_TYPE] = "bad_type",
	[SGW_STREAM_E_TRUNC] = "trunc",
	[SGW_STREAM_E_BAD_LEN] = "bad_len",
	[SGW_STREAM_E_BAD_FLAGS] = "bad_flags",
	[SGW_STREAM_E_BAD_WSCALE] = "bad_wscale",
	[SGW_STREAM_E_BAD_MSS] = "bad_mss",
	[SGW_STREAM_E_BAD_PORT] = "bad_port",
	[SGW_STREAM_E_BAD_REASON] = "bad_reason",
	[SGW_STREAM_E_NO_PAYLOAD] = "no_payload",
};

static const char *const type_names[SGW_STREAM_T__END] = {
	[0] = "none",
	[SGW_STREAM_OPEN] = "open",
	[SGW_STREAM_OPEN_OK] = "open_ok",
	[SGW_STREAM_OPEN_REFUSED] = "open_refused",
	[SGW_STREAM_DATA] = "data",
	[SGW_STREAM_FIN] = "fin",
	[SGW_STREAM_RST] = "rst",
	[SGW_STREAM_CREDIT] = "credit",
};

const char *
sgw_stream_err_name(int err)
{
	if (err < 0 || err >= SGW_STREAM_E__COUNT)
		return "unknown";
	return err_names[err];
}

const char *
sgw_stream_type_name(int type)
{
	if (type < 0 || type >= SGW_STREAM_T__END)
		return "unknown";
	return type_names[type];
}

static inline uint16_t
rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t
rd32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline void
wr16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void
wr32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* The option fields shared by OPEN and OPEN_OK: which check fails, or OK. */
static int
check_opts(uint8_t opts, uint8_t wscale, uint16_t mss)
{
	if (opts & ~SGW_STREAM_O__ALL)
		return SGW_STREAM_E_BAD_FLAGS;
	if (!(opts & SGW_STREAM_O_WS) && wscale != 0)
		return SGW_STREAM_E_BAD_FLAGS;
	if (wscale > 14)
		return SGW_STREAM_E_BAD_WSCALE;
	if (!(opts & SGW_STREAM_O_MSS) && mss != 0)
		return SGW_STREAM_E_BAD_FLAGS;
	if ((opts & SGW_STREAM_O_MSS) && mss < SGW_STREAM_MIN_MSS)
		return SGW_STREAM_E_BAD_MSS;
	return SGW_STREAM_E_OK;
}

static size_t
fixed_len(uint8_t type, uint8_t flags)
{
	switch (type) {
	case SGW_STREAM_OPEN:
		return (flags & SGW_STREAM_F_IPV6) ? SGW_STREAM_OPEN6_LEN : SGW_STREAM_OPEN4_LEN;
	case SGW_STREAM_OPEN_OK:
		return SGW_STREAM_OPEN_OK_LEN;
	case SGW_STREAM_OPEN_REFUSED:
		return SGW_STREAM_REFUSED_LEN;
	case SGW_STREAM_DATA:
		return SGW_STREAM_DATA_HDR;
	case SGW_STREAM_FIN:
		return SGW_STREAM_FIN_LEN;
	case SGW_STREAM_RST:
		return SGW_STREAM_RST_LEN;
	case SGW_STREAM_CREDIT:
		return SGW_STREAM_CREDIT_LEN;
	default:
		return 0;
	}
}

static int
decode(const uint8_t *b, size_t len, struct sgw_stream_msg *m)
{
	size_t need, alen;
	int e;

	memset(m, 0, sizeof(*m));
	if (len == 0)
		return SGW_STREAM_E_EMPTY;
	m->type = b[0];
	if (m->type == 0 || m->type >= SGW_STREAM_T__END)
		return SGW_STREAM_E_BAD_TYPE;
	/* OPEN's length depends on its flags byte: read it only when present. */
	if (m->type == SGW_STREAM_OPEN && len >= 2)
		m->flags = b[1];
	need = fixed_len(m->type, m->flags);
	if (len < need)
		return SGW_STREAM_E_TRUNC;
	if (m->type != SGW_STREAM_DATA && len > need)
		return SGW_STREAM_E_BAD_LEN;

	switch (m->type) {
	case SGW_STREAM_OPEN:
		if (m->flags & ~SGW_STREAM_F__ALL)
			return SGW_STREAM_E_BAD_FLAGS;
		m->opts = b[2];
		m->wscale = b[3];
		m->mss = rd16(b + 4);
		m->sport = rd16(b + 6);
		m->dport = rd16(b + 8);
		if (rd16(b + 10) != 0)
			return SGW_STREAM_E_BAD_FLAGS;
		m->off = rd32(b + 12);
		e = check_opts(m->opts, m->wscale, m->mss);
		if (e != SGW_STREAM_E_OK)
			return e;
		if (m->sport == 0 || m->dport == 0)
			return SGW_STREAM_E_BAD_PORT;
		alen = (m->flags & SGW_STREAM_F_IPV6) ? 16 : 4;
		memcpy(m->saddr, b + 16, alen);
		memcpy(m->daddr, b + 16 + alen, alen);
		return SGW_STREAM_E_OK;
	case SGW_STREAM_OPEN_OK:
		m->opts = b[1];
		m->wscale = b[2];
		if (b[3] != 0 || rd16(b + 6) != 0)
			return SGW_STREAM_E_BAD_FLAGS;
		m->mss = rd16(b + 4);
		m->off = rd32(b + 8);
		return check_opts(m->opts, m->wscale, m->mss);
	case SGW_STREAM_OPEN_REFUSED:
		m->reason = b[1];
		if (m->reason == 0 || m->reason >= SGW_STREAM_REFUSE__END)
			return SGW_STREAM_E_BAD_REASON;
		return SGW_STREAM_E_OK;
	case SGW_STREAM_RST:
		m->reason = b[1];
		if (m->reason == 0 || m->reason >= SGW_STREAM_RST__END)
			return SGW_STREAM_E_BAD_REASON;
		return SGW_STREAM_E_OK;
	case SGW_STREAM_DATA:
		m->off = rd32(b + 1);
		if (len == SGW_STREAM_DATA_HDR)
			return SGW_STREAM_E_NO_PAYLOAD;
		m->data = b + SGW_STREAM_DATA_HDR;
		m->len = (uint32_t)(len - SGW_STREAM_DATA_HDR);
		if ((size_t)m->len != len - SGW_STREAM_DATA_HDR)
			return SGW_STREAM_E_BAD_LEN; /* beyond 4 GB: no satlink packet is */
		return SGW_STREAM_E_OK;
	case SGW_STREAM_FIN:
	case SGW_STREAM_CREDIT:
		m->off = rd32(b + 1);
		return SGW_STREAM_E_OK;
	default:
		return SGW_STREAM_E_BAD_TYPE;
	}
}

int
sgw_stream_decode(const void *p, size_t len, struct sgw_stream_msg *m, uint64_t *ctr)
{
	int e = decode(p, p == NULL ? 0 : len, m);

	if (e != SGW_STREAM_E_OK && ctr != NULL)
		ctr[e]++;
	return e;
}

size_t
sgw_stream_len(const struct sgw_stream_msg *m)
{
	if (m->type == SGW_STREAM_DATA)
		return SGW_STREAM_DATA_HDR + (size_t)m->len;
	return fixed_len(m->type, m->flags);
}

/* What the decoder would refuse in m's fields (besides lengths). */
static int
encodable(const struct sgw_stream_msg *m)
{
	switch (m->type) {
	case SGW_STREAM_OPEN:
		if (m->flags & ~SGW_STREAM_F__ALL)
			return 0;
		if (m->sport == 0 || m->dport == 0)
			return 0;
		return check_opts(m->opts, m->wscale, m->mss) == SGW_STREAM_E_OK;
	case SGW_STREAM_OPEN_OK:
		return check_opts(m->opts, m->wscale, m->mss) == SGW_STREAM_E_OK;
	case SGW_STREAM_OPEN_REFUSED:
		return m->reason != 0 && m->reason < SGW_STREAM_REFUSE__END;
	case SGW_STREAM_RST:
		return m->reason != 0 && m->reason < SGW_STREAM_RST__END;
	case SGW_STREAM_DATA:
		return m->len > 0 && m->data != NULL;
	case SGW_STREAM_FIN:
	case SGW_STREAM_CREDIT:
		return 1;
	default:
		return 0;
	}
}

size_t
sgw_stream_encode(void *buf, size_t cap, const struct sgw_stream_msg *m)
{
	uint8_t *b = buf;
	size_t n, alen;

	if (!encodable(m))
		return 0;
	n = sgw_stream_len(m);
	if (n == 0 || n > cap || b == NULL)
		return 0;
	memset(b, 0, n < SGW_STREAM_MAX_CTRL ? n : SGW_STREAM_MAX_CTRL);
	b[0] = m->type;
	switch (m->type) {
	case SGW_STREAM_OPEN:
		b[1] = m->flags;
		b[2] = m->opts;
		b[3] = m->wscale;
		wr16(b + 4, m->mss);
		wr16(b + 6, m->sport);
		wr16(b + 8, m->dport);
		wr32(b + 12, m->off);
		alen = (m->flags & SGW_STREAM_F_IPV6) ? 16 : 4;
		memcpy(b + 16, m->saddr, alen);
		memcpy(b + 16 + alen, m->daddr, alen);
		break;
	case SGW_STREAM_OPEN_OK:
		b[1] = m->opts;
		b[2] = m->wscale;
		wr16(b + 4, m->mss);
		wr32(b + 8, m->off);
		break;
	case SGW_STREAM_OPEN_REFUSED:
	case SGW_STREAM_RST:
		b[1] = m->reason;
		break;
	case SGW_STREAM_DATA:
		sgw_stream_data_hdr(b, m->off);
		memcpy(b + SGW_STREAM_DATA_HDR, m->data, m->len);
		break;
	case SGW_STREAM_FIN:
	case SGW_STREAM_CREDIT:
		wr32(b + 1, m->off);
		break;
	default:
		return 0;
	}
	return n;
}
