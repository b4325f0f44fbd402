/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ESP transport mode with AES-GCM (RFC 4303 + RFC 4106), IPv4 and IPv6
 * (contract: sgw_esp.h; the agent that uses it: control/agent/mh_lift.c;
 * docs/lift.md, "The mobile host's ESP").
 *
 * AES-GCM from Intel IPsec-MB's direct GCM API, on a manager from
 * sgw_gcm.h (shared with lib/sgw_slcrypto.c, known answers checked): IMB_AES{128,256}_GCM_PRE once per SA, one-shot _ENC / _DEC per packet,
 * in place. The replay window is RFC 6479's ring of 64-bit words (32 words,
 * so any window up to 1024 fits with a word to spare and moving the top only
 * clears whole words).
 *
 * Plain C11, no globals (const tables only), no clock reads; allocation only
 * in the create functions.
 */
#include <stdlib.h>
#include <string.h>

#include <intel-ipsec-mb.h>

#include "sgw_esp.h"
#include "sgw_gcm.h"
#include "sgw_hex.h"

#define ESP_WORDS 32u                   /* replay ring: 2048 bits */
#define ESP_SEQ_LIMIT UINT64_C(0xffffffff)

static const char *const esp_reason_names[SGW_ESP__NUM] = {
	[SGW_ESP_OK] = "ok",
	[SGW_ESP_BAD_LEN] = "bad_len",
	[SGW_ESP_BAD_IP] = "bad_ip",
	[SGW_ESP_UNSUPPORTED] = "unsupported",
	[SGW_ESP_NOT_ESP] = "not_esp",
	[SGW_ESP_BAD_SPI] = "bad_spi",
	[SGW_ESP_BAD_SEQ] = "bad_seq",
	[SGW_ESP_REPLAY] = "replay",
	[SGW_ESP_TOO_OLD] = "too_old",
	[SGW_ESP_AUTH_FAIL] = "auth_fail",
	[SGW_ESP_BAD_PAD] = "bad_pad",
	[SGW_ESP_DUMMY] = "dummy",
	[SGW_ESP_NO_ROOM] = "no_room",
	[SGW_ESP_SEQ_OVERFLOW] = "seq_overflow",
	[SGW_ESP_BAD_ARG] = "bad_arg",
};

const char *
sgw_esp_reason_name(int reason)
{
	if (reason < 0)
		reason = -reason;
	if (reason >= SGW_ESP__NUM)
		return "unknown";
	return esp_reason_names[reason];
}

/* --------------------------------------------------------------- helpers */

static inline void
esp_put_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void
esp_put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static inline uint16_t
esp_get_be16(const uint8_t *p)
{
	return (uint16_t)((unsigned int)p[0] << 8 | p[1]);
}

static inline uint32_t
esp_get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* The IPv4 header checksum over hl bytes (the checksum field included as 0). */
static void
esp_ip4_csum(uint8_t *h, uint32_t hl)
{
	uint32_t s = 0, i;

	h[10] = 0;
	h[11] = 0;
	for (i = 0; i + 1 < hl; i += 2)
		s += esp_get_be16(h + i);
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	esp_put_be16(h + 10, (uint16_t)~s);
}

/* IPv6 extension headers (and AH) that would have to stay in front of ESP. */
static int
esp_ip6_is_ext(uint8_t nh)
{
	switch (nh) {
	case 0:     /* hop-by-hop */
	case 43:    /* routing */
	case 44:    /* fragment */
	case 51:    /* AH */
	case 60:    /* destination options */
	case 135:   /* mobility */
	case 139:   /* HIP */
	case 140:   /* shim6 */
		return 1;
	default:
		return 0;
	}
}

/* The IP layout of a packet: header length, IP length, protocol. */
struct esp_ip {
	uint32_t hl;        /* bytes in front of the payload (or ESP) */
	uint32_t ip_len;    /* the IP header's idea of the packet's length */
	uint8_t proto;
	uint8_t v6;
};

/* Parse the IP header of pkt (len bytes); 0 or a reason. */
static enum sgw_esp_reason
esp_ip_parse(const uint8_t *pkt, uint32_t len, struct esp_ip *ip)
{
	if (len < 1)
		return SGW_ESP_BAD_LEN;
	switch (pkt[0] >> 4) {
	case 4:
		if (len < 20)
			return SGW_ESP_BAD_LEN;
		ip->hl = (uint32_t)(pkt[0] & 0x0f) * 4;
		if (ip->hl < 20)
			return SGW_ESP_BAD_IP;
		ip->ip_len = esp_get_be16(pkt + 2);
		if (ip->hl > len || ip->ip_len < ip->hl || ip->ip_len > len)
			return SGW_ESP_BAD_LEN;
		if ((esp_get_be16(pkt + 6) & 0x3fff) != 0)
			return SGW_ESP_BAD_IP;          /* MF or an offset: a fragment */
		ip->proto = pkt[9];
		ip->v6 = 0;
		return SGW_ESP_OK;
	case 6:
		if (len < 40)
			return SGW_ESP_BAD_LEN;
		ip->hl = 40;
		ip->ip_len = 40u + esp_get_be16(pkt + 4);
		if (ip->ip_len > len)
			return SGW_ESP_BAD_LEN;
		ip->proto = pkt[6];
		ip->v6 = 1;
		return SGW_ESP_OK;
	default:
		return SGW_ESP_BAD_IP;
	}
}

/* Write protocol and length into the IP header h after a transform. */
static void
esp_ip_fix(uint8_t *h, const struct esp_ip *ip, uint8_t proto, uint32_t new_len)
{
	if (ip->v6) {
		h[6] = proto;
		esp_put_be16(h + 4, (uint16_t)(new_len - 40));
	} else {
		h[9] = proto;
		esp_put_be16(h + 2, (uint16_t)new_len);
		esp_ip4_csum(h, ip->hl);
	}
}

/* Constant time: 0 when equal. */
static inline unsigned int
esp_tag_diff(const uint8_t *a, const uint8_t *b)
{
	unsigned int d = 0, i;

	for (i = 0; i < SGW_ESP_ICV_LEN; i++)
		d |= (unsigned int)(a[i] ^ b[i]);
	return d;
}

/* ---------------------------------------------------------------- engine */

struct sgw_esp_engine {
	IMB_MGR *mgr;
};

struct sgw_esp_engine *
sgw_esp_engine_create(void)
{
	struct sgw_esp_engine *eng;

	eng = calloc(1, sizeof(*eng));
	if (eng == NULL)
		return NULL;
	/* the best arch the CPU has, checked against GCM's known answers */
	eng->mgr = sgw_gcm_mgr_create(SGW_GCM_ARCH_AUTO, NULL);
	if (eng->mgr == NULL) {
		free(eng);
		return NULL;
	}
	return eng;
}

void
sgw_esp_engine_destroy(struct sgw_esp_engine *eng)
{
	if (eng == NULL)
		return;
	sgw_gcm_mgr_destroy(eng->mgr);
	free(eng);
}

/* ------------------------------------------------------------------- key */

int
sgw_esp_parse_key(const char *text, struct sgw_esp_sa_conf *conf)
{
	uint8_t b[36];
	size_t n, i;
	int hi, lo;

	if (text == NULL || conf == NULL)
		return -1;
	if (text[0] == '0' && (text[1] == 'x' || text[1] == 'X'))
		text += 2;
	n = strlen(text);
	if (n != 40 && n != 72)
		return -1;
	for (i = 0; i < n / 2; i++) {
		hi = sgw_hexval(text[2 * i]);
		lo = sgw_hexval(text[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return -1;
		b[i] = (uint8_t)(hi << 4 | lo);
	}
	conf->key_len = (uint32_t)(n / 2 - SGW_ESP_SALT_LEN);
	memcpy(conf->key, b, conf->key_len);
	memcpy(conf->salt, b + conf->key_len, SGW_ESP_SALT_LEN);
	imb_clear_mem(b, sizeof(b));
	return 0;
}

/* -------------------------------------------------------------------- SA */

struct sgw_esp_sa {
	struct gcm_key_data kd;         /* first: 64-byte aligned allocation */
	IMB_MGR *mgr;
	uint32_t key_len;
	uint32_t spi;
	uint8_t salt[SGW_ESP_SALT_LEN];

	uint64_t tx_seq;                /* next; > 2^32 - 1: exhausted */
	uint64_t tx_iv;                 /* next IV counter value */

	uint32_t win;
	uint32_t rx_top;                /* highest authenticated; 0: none */
	uint64_t bm[ESP_WORDS];

	struct sgw_esp_stats st;
};

struct sgw_esp_sa *
sgw_esp_sa_create(struct sgw_esp_engine *eng, const struct sgw_esp_sa_conf *conf)
{
	struct sgw_esp_sa *sa;
	size_t size;
	uint32_t win;

	if (eng == NULL || conf == NULL || conf->spi == 0)
		return NULL;
	if (conf->key_len != 16 && conf->key_len != 32)
		return NULL;
	win = conf->replay_window != 0 ? conf->replay_window : SGW_ESP_WINDOW_DEFAULT;
	if (win < SGW_ESP_WINDOW_MIN || win > SGW_ESP_WINDOW_MAX)
		return NULL;
	size = (sizeof(*sa) + 63) & ~(size_t)63;
	sa = aligned_alloc(64, size);
	if (sa == NULL)
		return NULL;
	memset(sa, 0, size);
	sa->mgr = eng->mgr;
	sa->key_len = conf->key_len;
	if (conf->key_len == 16)
		IMB_AES128_GCM_PRE(eng->mgr, conf->key, &sa->kd);
	else
		IMB_AES256_GCM_PRE(eng->mgr, conf->key, &sa->kd);
	sa->spi = conf->spi;
	memcpy(sa->salt, conf->salt, SGW_ESP_SALT_LEN);
	sa->tx_seq = conf->tx_seq_next != 0 ? conf->tx_seq_next : 1;
	sa->tx_iv = conf->tx_iv_next != 0 ? conf->tx_iv_next : 1;
	sa->win = win;
	return sa;
}

void
sgw_esp_sa_destroy(struct sgw_esp_sa *sa)
{
	if (sa == NULL)
		return;
	imb_clear_mem(&sa->kd, sizeof(sa->kd));
	free(sa);
}

static inline int
esp_tx_fail(struct sgw_esp_sa *sa, enum sgw_esp_reason r)
{
	sa->st.tx_refused[r]++;
	return -(int)r;
}

static inline int
esp_rx_fail(struct sgw_esp_sa *sa, enum sgw_esp_reason r)
{
	sa->st.rx_dropped[r]++;
	return -(int)r;
}

static void
esp_gcm_enc(struct sgw_esp_sa *sa, uint8_t *data, uint32_t n, const uint8_t *nonce,
	    const uint8_t *aad, uint8_t *tag)
{
	struct gcm_context_data gc;

	if (sa->key_len == 16)
		IMB_AES128_GCM_ENC(sa->mgr, &sa->kd, &gc, data, data, n, nonce, aad,
				   SGW_ESP_HDR_LEN, tag, SGW_ESP_ICV_LEN);
	else
		IMB_AES256_GCM_ENC(sa->mgr, &sa->kd, &gc, data, data, n, nonce, aad,
				   SGW_ESP_HDR_LEN, tag, SGW_ESP_ICV_LEN);
}

static void
esp_gcm_dec(struct sgw_esp_sa *sa, uint8_t *data, uint32_t n, const uint8_t *nonce,
	    const uint8_t *aad, uint8_t *tag)
{
	struct gcm_context_data gc;

	if (sa->key_len == 16)
		IMB_AES128_GCM_DEC(sa->mgr, &sa->kd, &gc, data, data, n, nonce, aad,
				   SGW_ESP_HDR_LEN, tag, SGW_ESP_ICV_LEN);
	else
		IMB_AES256_GCM_DEC(sa->mgr, &sa->kd, &gc, data, data, n, nonce, aad,
				   SGW_ESP_HDR_LEN, tag, SGW_ESP_ICV_LEN);
}

/* The common body of encrypt and encrypt_at: checks, then the transform. */
static int
esp_encrypt(struct sgw_esp_sa *sa, int use_state, uint32_t seq, uint64_t iv, uint8_t *buf,
	    uint32_t buf_cap, uint32_t off, uint32_t len, uint32_t *out_off)
{
	struct esp_ip ip;
	enum sgw_esp_reason r;
	uint8_t nonce[12];
	uint8_t *h, *esp, *ct;
	uint32_t plen, padlen, ct_len, new_len, i;

	if (sa == NULL)
		return -SGW_ESP_BAD_ARG;
	if (buf == NULL || out_off == NULL || off > buf_cap || len > buf_cap - off)
		return esp_tx_fail(sa, SGW_ESP_BAD_ARG);
	r = esp_ip_parse(buf + off, len, &ip);
	if (r != SGW_ESP_OK)
		return esp_tx_fail(sa, r);
	if (ip.ip_len != len)
		return esp_tx_fail(sa, SGW_ESP_BAD_LEN);
	if (ip.v6 && esp_ip6_is_ext(ip.proto))
		return esp_tx_fail(sa, SGW_ESP_UNSUPPORTED);
	plen = len - ip.hl;
	padlen = (4u - ((plen + 2u) & 3u)) & 3u;
	ct_len = plen + padlen + 2u;
	new_len = ip.hl + SGW_ESP_HEADROOM + ct_len + SGW_ESP_ICV_LEN;
	if (new_len > SGW_ESP_MAX_PKT + (ip.v6 ? 40u : 0u))
		return esp_tx_fail(sa, SGW_ESP_BAD_LEN);
	if (off < SGW_ESP_HEADROOM || buf_cap - off - len < padlen + 2u + SGW_ESP_ICV_LEN)
		return esp_tx_fail(sa, SGW_ESP_NO_ROOM);
	if (use_state) {
		if (sa->tx_seq > ESP_SEQ_LIMIT)
			return esp_tx_fail(sa, SGW_ESP_SEQ_OVERFLOW);
		seq = (uint32_t)sa->tx_seq++;
		iv = sa->tx_iv++;
	}

	/* The IP header moves back; the payload stays where it is. */
	h = buf + off - SGW_ESP_HEADROOM;
	memmove(h, buf + off, ip.hl);
	esp = h + ip.hl;
	ct = esp + SGW_ESP_HEADROOM;
	esp_put_be32(esp, sa->spi);
	esp_put_be32(esp + 4, seq);
	esp_put_be32(esp + 8, (uint32_t)(iv >> 32));
	esp_put_be32(esp + 12, (uint32_t)iv);
	for (i = 0; i < padlen; i++)
		ct[plen + i] = (uint8_t)(i + 1);
	ct[plen + padlen] = (uint8_t)padlen;
	ct[plen + padlen + 1] = ip.proto;
	memcpy(nonce, sa->salt, SGW_ESP_SALT_LEN);
	memcpy(nonce + SGW_ESP_SALT_LEN, esp + 8, SGW_ESP_IV_LEN);
	esp_gcm_enc(sa, ct, ct_len, nonce, esp, ct + ct_len);
	esp_ip_fix(h, &ip, SGW_ESP_PROTO, new_len);

	sa->st.encrypted++;
	sa->st.enc_bytes += len;
	*out_off = off - SGW_ESP_HEADROOM;
	return (int)new_len;
}

int
sgw_esp_encrypt(struct sgw_esp_sa *sa, uint8_t *buf, uint32_t buf_cap, uint32_t off,
		uint32_t len, uint32_t *out_off)
{
	return esp_encrypt(sa, 1, 0, 0, buf, buf_cap, off, len, out_off);
}

int
sgw_esp_encrypt_at(struct sgw_esp_sa *sa, uint32_t seq, uint64_t iv, uint8_t *buf,
		   uint32_t buf_cap, uint32_t off, uint32_t len, uint32_t *out_off)
{
	return esp_encrypt(sa, 0, seq, iv, buf, buf_cap, off, len, out_off);
}

/* Window check (RFC 4303 3.4.3) for seq != 0, before any crypto. */
static enum sgw_esp_reason
esp_window_check(const struct sgw_esp_sa *sa, uint32_t seq)
{
	uint64_t w;

	if (sa->rx_top == 0 || seq > sa->rx_top)
		return SGW_ESP_OK;
	if (sa->rx_top - seq >= sa->win)
		return SGW_ESP_TOO_OLD;
	w = sa->bm[(seq >> 6) & (ESP_WORDS - 1)];
	if ((w >> (seq & 63)) & 1)
		return SGW_ESP_REPLAY;
	return SGW_ESP_OK;
}

/* Record an authenticated seq that passed esp_window_check. */
static void
esp_window_update(struct sgw_esp_sa *sa, uint32_t seq)
{
	uint32_t cur, nw, i, n;

	if (seq > sa->rx_top) {
		/* Clear the words the top moves into, at most the whole ring. */
		cur = sa->rx_top >> 6;
		nw = seq >> 6;
		n = nw - cur;
		if (n > ESP_WORDS)
			n = ESP_WORDS;
		for (i = 1; i <= n; i++)
			sa->bm[(cur + i) & (ESP_WORDS - 1)] = 0;
		sa->rx_top = seq;
	}
	sa->bm[(seq >> 6) & (ESP_WORDS - 1)] |= UINT64_C(1) << (seq & 63);
}

int
sgw_esp_decrypt(struct sgw_esp_sa *sa, uint8_t *pkt, uint32_t len, uint32_t *out_off,
		uint32_t *seq_out)
{
	struct esp_ip ip;
	enum sgw_esp_reason r;
	uint8_t nonce[12], tag[SGW_ESP_ICV_LEN];
	uint8_t *esp, *ct;
	uint32_t esp_len, ct_len, seq, padlen, inner, i;
	uint8_t nh;

	if (sa == NULL)
		return -SGW_ESP_BAD_ARG;
	if (pkt == NULL || out_off == NULL)
		return esp_rx_fail(sa, SGW_ESP_BAD_ARG);
	r = esp_ip_parse(pkt, len, &ip);
	if (r != SGW_ESP_OK)
		return esp_rx_fail(sa, r);
	if (ip.proto != SGW_ESP_PROTO)
		return esp_rx_fail(sa, ip.v6 && esp_ip6_is_ext(ip.proto) ?
				   SGW_ESP_UNSUPPORTED : SGW_ESP_NOT_ESP);
	esp_len = ip.ip_len - ip.hl;
	/* SPI, seq, IV, at least pad length + next header, ICV. */
	if (esp_len < SGW_ESP_HEADROOM + 2u + SGW_ESP_ICV_LEN)
		return esp_rx_fail(sa, SGW_ESP_BAD_LEN);
	esp = pkt + ip.hl;
	if (esp_get_be32(esp) != sa->spi)
		return esp_rx_fail(sa, SGW_ESP_BAD_SPI);
	seq = esp_get_be32(esp + 4);
	if (seq == 0)
		return esp_rx_fail(sa, SGW_ESP_BAD_SEQ);
	r = esp_window_check(sa, seq);
	if (r != SGW_ESP_OK)
		return esp_rx_fail(sa, r);

	ct = esp + SGW_ESP_HEADROOM;
	ct_len = esp_len - SGW_ESP_HEADROOM - SGW_ESP_ICV_LEN;
	memcpy(nonce, sa->salt, SGW_ESP_SALT_LEN);
	memcpy(nonce + SGW_ESP_SALT_LEN, esp + 8, SGW_ESP_IV_LEN);
	esp_gcm_dec(sa, ct, ct_len, nonce, esp, tag);
	if (esp_tag_diff(tag, ct + ct_len) != 0) {
		memset(ct, 0, ct_len);
		return esp_rx_fail(sa, SGW_ESP_AUTH_FAIL);
	}
	esp_window_update(sa, seq);
	if (seq_out != NULL)
		*seq_out = seq;

	padlen = ct[ct_len - 2];
	nh = ct[ct_len - 1];
	if (padlen + 2u > ct_len)
		return esp_rx_fail(sa, SGW_ESP_BAD_PAD);
	inner = ct_len - 2u - padlen;
	for (i = 0; i < padlen; i++)
		if (ct[inner + i] != (uint8_t)(i + 1))
			return esp_rx_fail(sa, SGW_ESP_BAD_PAD);
	if (nh == SGW_ESP_NH_NONE)
		return esp_rx_fail(sa, SGW_ESP_DUMMY);

	/* The IP header moves forward onto the ESP header and IV. */
	memmove(pkt + SGW_ESP_HEADROOM, pkt, ip.hl);
	esp_ip_fix(pkt + SGW_ESP_HEADROOM, &ip, nh, ip.hl + inner);
	sa->st.decrypted++;
	sa->st.dec_bytes += ip.hl + inner;
	*out_off = SGW_ESP_HEADROOM;
	return (int)(ip.hl + inner);
}

void
sgw_esp_get_stats(const struct sgw_esp_sa *sa, struct sgw_esp_stats *st)
{
	if (sa == NULL || st == NULL)
		return;
	*st = sa->st;
}

uint32_t
sgw_esp_tx_seq_next(const struct sgw_esp_sa *sa)
{
	return sa->tx_seq > ESP_SEQ_LIMIT ? 0 : (uint32_t)sa->tx_seq;
}

uint32_t
sgw_esp_rx_top(const struct sgw_esp_sa *sa)
{
	return sa->rx_top;
}

uint32_t
sgw_esp_spi(const struct sgw_esp_sa *sa)
{
	return sa->spi;
}
