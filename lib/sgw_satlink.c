/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * satlink wire format: encoder and bounds-checked parser of the 22-byte
 * header and of the STATUS and HELLO bodies (contract: sgw_satlink.h, every
 * field: docs/satlink.md).
 *
 * Every read is checked against (buf, len) first; nothing here allocates,
 * keeps state or reads a clock.
 */
#include <stddef.h>
#include <stdint.h>

#include "sgw_satlink.h"

#define OFF_VT 0
#define OFF_FLAGS 1
#define OFF_CHANNEL 2
#define OFF_TERMINAL 4
#define OFF_SEPOCH 8
#define OFF_PEPOCH 12
#define OFF_SEQ 16
#define OFF_PLEN 20

_Static_assert(OFF_PLEN + 2 == SGW_SATLINK_HDR_LEN, "header layout");
_Static_assert(SGW_SATLINK_MAX_WINDOW == 8192, "bitmap reach");

static const char *const reason_names[SGW_SL__REASON_COUNT] = {
	[SGW_SL_OK] = "ok",
	[SGW_SL_TRUNC] = "trunc",
	[SGW_SL_BAD_VERSION] = "bad_version",
	[SGW_SL_BAD_TYPE] = "bad_type",
	[SGW_SL_BAD_FLAGS] = "bad_flags",
	[SGW_SL_BAD_LEN] = "bad_len",
	[SGW_SL_BAD_EPOCH] = "bad_epoch",
	[SGW_SL_BAD_CHANNEL] = "bad_channel",
	[SGW_SL_BAD_BODY] = "bad_body",
};

static const char *const type_names[SGW_SL__TYPE_COUNT] = {
	[SGW_SL_DATA] = "data",
	[SGW_SL_STATUS] = "status",
	[SGW_SL_HELLO] = "hello",
	[SGW_SL_HELLO_ACK] = "hello_ack",
};

static inline uint16_t
load_be16(const uint8_t *p)
{
	return (uint16_t)((uint16_t)p[0] << 8 | p[1]);
}

static inline uint32_t
load_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline void
store_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void
store_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

const char *
sgw_satlink_reason_name(int reason)
{
	if (reason < 0 || reason >= SGW_SL__REASON_COUNT)
		return "unknown";
	return reason_names[reason];
}

const char *
sgw_satlink_type_name(int type)
{
	if (type < 0 || type >= SGW_SL__TYPE_COUNT)
		return "unknown";
	return type_names[type];
}

int
sgw_satlink_parse_hdr(const void *buf, size_t len, struct sgw_satlink_hdr *h)
{
	const uint8_t *p = buf;
	int ctrl;

	*h = (struct sgw_satlink_hdr){0};
	if (p == NULL || len < SGW_SATLINK_HDR_LEN)
		return SGW_SL_TRUNC;
	h->version = p[OFF_VT] >> 4;
	h->type = p[OFF_VT] & 0x0f;
	h->flags = p[OFF_FLAGS];
	h->channel = load_be16(p + OFF_CHANNEL);
	h->terminal_id = load_be32(p + OFF_TERMINAL);
	h->sender_epoch = load_be32(p + OFF_SEPOCH);
	h->peer_epoch = load_be32(p + OFF_PEPOCH);
	h->seq = load_be32(p + OFF_SEQ);
	h->payload_len = load_be16(p + OFF_PLEN);

	if (h->version != SGW_SATLINK_VERSION)
		return SGW_SL_BAD_VERSION;
	if (h->type >= SGW_SL__TYPE_COUNT)
		return SGW_SL_BAD_TYPE;
	ctrl = h->type != SGW_SL_DATA;
	if (h->flags & ~(ctrl ? SGW_SL_F_CTRL_MASK : SGW_SL_F_DATA_MASK))
		return SGW_SL_BAD_FLAGS;
	if ((size_t)h->payload_len > len - SGW_SATLINK_HDR_LEN)
		return SGW_SL_BAD_LEN;
	if (h->sender_epoch == 0)
		return SGW_SL_BAD_EPOCH;
	if (h->peer_epoch == 0 && h->type != SGW_SL_HELLO)
		return SGW_SL_BAD_EPOCH;
	if (ctrl && h->channel != 0)
		return SGW_SL_BAD_CHANNEL;

	switch (h->type) {
	case SGW_SL_DATA:
		if (h->payload_len == 0)
			return SGW_SL_BAD_LEN;
		break;
	case SGW_SL_STATUS:
		if (!(h->flags & SGW_SL_F_ENCRYPTED)) {
			const uint8_t *b = p + SGW_SATLINK_HDR_LEN;

			if (h->payload_len < SGW_SATLINK_STATUS_FIXED ||
			    h->payload_len != SGW_SATLINK_STATUS_FIXED +
			    4u * (uint32_t)load_be16(b + 8))
				return SGW_SL_BAD_LEN;
		}
		break;
	default: /* HELLO, HELLO_ACK */
		if (!(h->flags & SGW_SL_F_ENCRYPTED) && h->payload_len != SGW_SATLINK_HELLO_LEN)
			return SGW_SL_BAD_LEN;
		break;
	}
	return SGW_SL_OK;
}

int
sgw_satlink_parse_status(const void *body, size_t len, struct sgw_satlink_status *st)
{
	const uint8_t *p = body;

	*st = (struct sgw_satlink_status){0};
	if (p == NULL || len < SGW_SATLINK_STATUS_FIXED)
		return SGW_SL_TRUNC;
	st->echo_seq = load_be32(p);
	st->echo_delay_us = load_be32(p + 4);
	st->nwords = load_be16(p + 8);
	if (st->nwords > SGW_SATLINK_STATUS_MAX_WORDS)
		return SGW_SL_BAD_BODY;
	if (len != SGW_SATLINK_STATUS_FIXED + 4u * (size_t)st->nwords)
		return SGW_SL_BAD_LEN;
	st->bitmap = p + SGW_SATLINK_STATUS_FIXED;
	return SGW_SL_OK;
}

uint32_t
sgw_satlink_status_word(const struct sgw_satlink_status *st, uint32_t w)
{
	if (w >= st->nwords || st->bitmap == NULL)
		return 0;
	return load_be32(st->bitmap + 4u * w);
}

int
sgw_satlink_parse_hello(const void *body, size_t len, struct sgw_satlink_hello *hb)
{
	const uint8_t *p = body;

	*hb = (struct sgw_satlink_hello){0};
	if (p == NULL || len < SGW_SATLINK_HELLO_LEN)
		return SGW_SL_TRUNC;
	if (len != SGW_SATLINK_HELLO_LEN)
		return SGW_SL_BAD_LEN;
	hb->rx_window = load_be32(p);
	hb->max_frags = load_be16(p + 4);
	hb->frag_size = load_be16(p + 6);
	hb->idle_ms = load_be16(p + 8);
	if (hb->rx_window == 0 || hb->rx_window > SGW_SATLINK_MAX_WINDOW ||
	    hb->max_frags == 0 || hb->frag_size == 0)
		return SGW_SL_BAD_BODY;
	return SGW_SL_OK;
}

size_t
sgw_satlink_write_hdr(void *buf, size_t cap, const struct sgw_satlink_hdr *h)
{
	uint8_t *p = buf;

	if (p == NULL || cap < SGW_SATLINK_HDR_LEN || h->type > 0x0f)
		return 0;
	p[OFF_VT] = (uint8_t)(SGW_SATLINK_VERSION << 4 | h->type);
	p[OFF_FLAGS] = h->flags;
	store_be16(p + OFF_CHANNEL, h->channel);
	store_be32(p + OFF_TERMINAL, h->terminal_id);
	store_be32(p + OFF_SEPOCH, h->sender_epoch);
	store_be32(p + OFF_PEPOCH, h->peer_epoch);
	store_be32(p + OFF_SEQ, h->seq);
	store_be16(p + OFF_PLEN, h->payload_len);
	return SGW_SATLINK_HDR_LEN;
}

size_t
sgw_satlink_write_status(void *buf, size_t cap, const struct sgw_satlink_status *st,
			 const uint32_t *words)
{
	uint8_t *p = buf;
	size_t need;
	uint32_t w;

	if (p == NULL || st->nwords > SGW_SATLINK_STATUS_MAX_WORDS ||
	    (st->nwords > 0 && words == NULL))
		return 0;
	need = SGW_SATLINK_STATUS_FIXED + 4u * (size_t)st->nwords;
	if (cap < need)
		return 0;
	store_be32(p, st->echo_seq);
	store_be32(p + 4, st->echo_delay_us);
	store_be16(p + 8, st->nwords);
	store_be16(p + 10, 0);
	for (w = 0; w < st->nwords; w++)
		store_be32(p + SGW_SATLINK_STATUS_FIXED + 4u * w, words[w]);
	return need;
}

size_t
sgw_satlink_write_hello(void *buf, size_t cap, const struct sgw_satlink_hello *hb)
{
	uint8_t *p = buf;

	if (p == NULL || cap < SGW_SATLINK_HELLO_LEN)
		return 0;
	store_be32(p, hb->rx_window);
	store_be16(p + 4, hb->max_frags);
	store_be16(p + 6, hb->frag_size);
	store_be16(p + 8, hb->idle_ms);
	store_be16(p + 10, 0);
	return SGW_SATLINK_HELLO_LEN;
}
