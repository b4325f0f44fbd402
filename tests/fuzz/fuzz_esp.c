/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer harness for lib/sgw_esp.c, the MH-LIFT agent's ESP receive path
 * (and its send path as the source of genuine packets). The input is a
 * sequence of records [op (1)][len (2, big-endian)][bytes]:
 *
 *   op % 4 == 0  the bytes are a packet from the network: decrypt it
 *   op % 4 == 1  the bytes are the host's cleartext: encrypt, then decrypt;
 *                if encrypt took it, decrypt must give it back unchanged
 *   op % 4 == 2  [seq (4)][plaintext]: an authenticated ESP packet with any
 *                plaintext trailer (bad padding, dummy, empty), sealed here
 *                with IPsec-MB directly: decrypt must never call it forged
 *   op % 4 == 3  [seq (4)]: a genuine packet at that sequence number: the
 *                window's verdict must match a model of it
 *
 * Aborts on: a decrypt result outside the buffer, a success with the wrong
 * offset or length fields, a round trip that differs, an authenticated
 * packet refused as forged, a window verdict the model disagrees with, or
 * counters that do not add up.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <intel-ipsec-mb.h>

#include "sgw_esp.h"

#define FZ_SPI 0x1e5a0002u
#define FZ_WIN 64u
#define FZ_RING 4096u

static const char fz_key[] = "0x000102030405060708090a0b0c0d0e0f10111213";

struct fz {
	struct sgw_esp_engine *eng;
	struct sgw_esp_sa *tx, *rx;
	IMB_MGR *mgr;
	struct gcm_key_data kd __attribute__((aligned(64)));
	uint8_t salt[4];
	/* the window model: accepted sequence numbers (the recent ones) */
	uint32_t top, acc[FZ_RING];
	uint32_t nacc;
	uint64_t calls_rx;
};

static uint8_t fz_buf[70000];

static void
fz_check(int ok)
{
	if (!ok)
		abort();
}

static int
fz_model_seen(const struct fz *f, uint32_t s)
{
	uint32_t i, n = f->nacc < FZ_RING ? f->nacc : FZ_RING;

	for (i = 0; i < n; i++)
		if (f->acc[i] == s)
			return 1;
	return 0;
}

static void
fz_model_accept(struct fz *f, uint32_t s)
{
	f->acc[f->nacc++ % FZ_RING] = s;
	if (s > f->top)
		f->top = s;
}

/* Decrypt len bytes at fz_buf; check what can be checked of any result. */
static int
fz_decrypt(struct fz *f, uint32_t len, uint32_t *seq)
{
	uint32_t off = 0;
	int r;

	f->calls_rx++;
	r = sgw_esp_decrypt(f->rx, fz_buf, len, &off, seq);
	fz_check(r < (int)len);
	if (r >= 0) {
		fz_check(off == SGW_ESP_HEADROOM);
		fz_check(off + (uint32_t)r <= len);
		if ((fz_buf[off] >> 4) == 4)
			fz_check(((uint32_t)fz_buf[off + 2] << 8 | fz_buf[off + 3]) == (uint32_t)r);
		else
			fz_check(((uint32_t)fz_buf[off + 4] << 8 | fz_buf[off + 5]) + 40 ==
				 (uint32_t)r);
		fz_model_accept(f, *seq);
	} else if (r == -SGW_ESP_BAD_PAD || r == -SGW_ESP_DUMMY) {
		fz_model_accept(f, *seq);   /* authenticated: the window took it */
	}
	return r;
}

/* An IPv4 header (20 bytes, protocol 50) for an ESP packet of total length n. */
static void
fz_ip4(uint8_t *p, uint32_t n)
{
	memset(p, 0, 20);
	p[0] = 0x45;
	p[2] = (uint8_t)(n >> 8);
	p[3] = (uint8_t)n;
	p[8] = 64;
	p[9] = 50;
	p[12] = 10;
	p[15] = 1;
	p[16] = 10;
	p[19] = 2;
}

static struct fz *
fz_get(void)
{
	static struct fz *f;
	struct sgw_esp_sa_conf c;

	if (f != NULL)
		return f;
	f = aligned_alloc(64, (sizeof(*f) + 63) & ~(size_t)63);
	memset(f, 0, sizeof(*f));
	f->eng = sgw_esp_engine_create();
	fz_check(f->eng != NULL);
	memset(&c, 0, sizeof(c));
	fz_check(sgw_esp_parse_key(fz_key, &c) == 0);
	c.spi = FZ_SPI;
	c.replay_window = FZ_WIN;
	memcpy(f->salt, c.salt, 4);
	f->mgr = alloc_mb_mgr(0);
	init_mb_mgr_auto(f->mgr, NULL);
	IMB_AES128_GCM_PRE(f->mgr, c.key, &f->kd);
	f->tx = sgw_esp_sa_create(f->eng, &c);
	f->rx = sgw_esp_sa_create(f->eng, &c);
	fz_check(f->tx != NULL && f->rx != NULL);
	return f;
}

static void
fz_reset(struct fz *f)
{
	struct sgw_esp_sa_conf c;

	sgw_esp_sa_destroy(f->tx);
	sgw_esp_sa_destroy(f->rx);
	memset(&c, 0, sizeof(c));
	fz_check(sgw_esp_parse_key(fz_key, &c) == 0);
	c.spi = FZ_SPI;
	c.replay_window = FZ_WIN;
	f->tx = sgw_esp_sa_create(f->eng, &c);
	f->rx = sgw_esp_sa_create(f->eng, &c);
	fz_check(f->tx != NULL && f->rx != NULL);
	f->top = 0;
	f->nacc = 0;
	f->calls_rx = 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t clear[70000];
	struct fz *f = fz_get();
	struct sgw_esp_stats st;
	size_t pos = 0;
	uint64_t sum;
	int r, i;

	fz_reset(f);
	while (pos + 3 <= size) {
		uint8_t op = data[pos];
		uint32_t len = (uint32_t)data[pos + 1] << 8 | data[pos + 2];
		const uint8_t *b = data + pos + 3;
		uint32_t seq = 0, off = 0;

		pos += 3;
		if (len > size - pos)
			len = (uint32_t)(size - pos);
		pos += len;
		switch (op & 3) {
		case 0:
			memcpy(fz_buf, b, len);
			r = fz_decrypt(f, len, &seq);
			break;
		case 1:
			memcpy(fz_buf + 64, b, len);
			memcpy(clear, b, len);
			r = sgw_esp_encrypt(f->tx, fz_buf, sizeof(fz_buf), 64, len, &off);
			if (r < 0)
				break;
			memmove(fz_buf, fz_buf + off, (size_t)r);
			r = fz_decrypt(f, (uint32_t)r, &seq);
			/* the tx SA's numbers only grow: the window never refuses them,
			 * unless op 3 has put the top ahead of them */
			if (r >= 0 && (clear[0] >> 4) == 4) {
				/* IPv4: all but the checksum, which both ways recompute
				 * (the input's may have been wrong); the output's is right */
				uint8_t *o = fz_buf + SGW_ESP_HEADROOM;
				uint32_t hl = (uint32_t)(o[0] & 15) * 4, c = 0, k;

				fz_check((uint32_t)r == len);
				fz_check(memcmp(o, clear, 10) == 0);
				fz_check(memcmp(o + 12, clear + 12, len - 12) == 0);
				for (k = 0; k + 1 < hl; k += 2)
					c += (uint32_t)o[k] << 8 | o[k + 1];
				while (c >> 16)
					c = (c & 0xffff) + (c >> 16);
				fz_check(c == 0xffff);
			} else if (r >= 0) {
				fz_check((uint32_t)r == len);
				fz_check(memcmp(fz_buf + SGW_ESP_HEADROOM, clear, len) == 0);
			}
			else
				fz_check(r == -SGW_ESP_TOO_OLD || r == -SGW_ESP_REPLAY ||
					 r == -SGW_ESP_DUMMY);
			break;
		case 2: {
			struct gcm_context_data gc;
			uint8_t nonce[12], *e = fz_buf + 20;
			uint32_t pl;

			if (len < 4 || len - 4 > 60000)
				break;
			pl = len - 4;
			fz_ip4(fz_buf, 20 + 16 + pl + 16);
			e[0] = (uint8_t)(FZ_SPI >> 24);
			e[1] = (uint8_t)(FZ_SPI >> 16);
			e[2] = (uint8_t)(FZ_SPI >> 8);
			e[3] = (uint8_t)FZ_SPI;
			memcpy(e + 4, b, 4);
			memset(e + 8, 0xa5, 8);
			memcpy(e + 16, b + 4, pl);
			memcpy(nonce, f->salt, 4);
			memcpy(nonce + 4, e + 8, 8);
			IMB_AES128_GCM_ENC(f->mgr, &f->kd, &gc, e + 16, e + 16, pl, nonce, e, 8,
					   e + 16 + pl, 16);
			r = fz_decrypt(f, 20 + 16 + pl + 16, &seq);
			fz_check(r != -SGW_ESP_AUTH_FAIL);
			break;
		}
		default: {
			uint32_t s, want_old, want_replay;
			uint8_t pkt[28];

			if (len < 4)
				break;
			s = (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
			memset(pkt, 0, sizeof(pkt));
			pkt[0] = 0x45;
			pkt[3] = sizeof(pkt);
			pkt[8] = 64;
			pkt[9] = 17;
			memcpy(fz_buf + 64, pkt, sizeof(pkt));
			r = sgw_esp_encrypt_at(f->tx, s, (uint64_t)s << 8 | 1, fz_buf, sizeof(fz_buf),
					       64, sizeof(pkt), &off);
			fz_check(r > 0);
			memmove(fz_buf, fz_buf + off, (size_t)r);
			want_old = f->top != 0 && s <= f->top && f->top - s >= FZ_WIN;
			want_replay = !want_old && fz_model_seen(f, s);
			r = fz_decrypt(f, (uint32_t)r, &seq);
			if (s == 0)
				fz_check(r == -SGW_ESP_BAD_SEQ);
			else if (want_old)
				fz_check(r == -SGW_ESP_TOO_OLD);
			else if (want_replay)
				fz_check(r == -SGW_ESP_REPLAY);
			else
				fz_check(r > 0);
			break;
		}
		}
	}
	/* every decrypt counted exactly once: a success or one reason */
	sgw_esp_get_stats(f->rx, &st);
	sum = st.decrypted;
	for (i = 1; i < SGW_ESP__NUM; i++)
		sum += st.rx_dropped[i];
	fz_check(sum == f->calls_rx);
	fz_check(sgw_esp_rx_top(f->rx) == f->top);
	return 0;
}
