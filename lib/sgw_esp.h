/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ESP (RFC 4303) in transport mode with AES-GCM as RFC 4106 defines it, for
 * IPv4 and IPv6: what the MH-LIFT agent uses to talk to a fixed host whose
 * ESP is the Linux kernel's (ip xfrm ... aead 'rfc4106(gcm(aes))' KEYSALT 128).
 *
 * One SA object is one direction's state: encrypt uses its send sequence
 * number and IV counter, decrypt its anti-replay window. A host pairs an
 * outbound SA (the peer's inbound SPI) with an inbound one.
 *
 * Wire format (transport mode, the IP header stays in front):
 *
 *   | IP header | SPI (4) | seq (4) | IV (8) | ciphertext ... | ICV (16) |
 *   ciphertext = encrypt(payload | pad 1,2,3.. | pad len (1) | next hdr (1))
 *   GCM nonce  = salt (4, from the key material) | IV (8)
 *   GCM AAD    = SPI | seq (8 bytes: 32-bit sequence numbers, no ESN)
 *
 * Padding aligns payload + 2 to 4 bytes with the RFC's pad bytes 1, 2, 3
 * (as Linux does: GCM's block size is 1, ESP's alignment 4); no TFC padding.
 * The IV is a 64-bit counter per SA that never repeats (RFC 4106 section 3.1
 * asks for uniqueness only; Linux uses seqiv, seq XOR a random per-SA value,
 * so the two ends' IVs differ but either decrypts the other).
 *
 * IPv4: any header length (options are kept in front of ESP, unauthenticated
 * as in transport mode). Fragments are refused (reassemble first). IPv6: a
 * packet whose fixed header is directly followed by the payload (or, on
 * decrypt, by ESP); extension headers are not supported and such packets
 * are refused and counted (SGW_ESP_UNSUPPORTED).
 *
 * Receive order (RFC 4303 3.4): lengths, SPI, sequence number against the
 * window (no crypto), then GCM; the window moves only after the ICV checks
 * out; then the trailer. Sequence number overflow: without ESN a sender
 * refuses to send after 2^32 - 1 (RFC 4303 3.3.3); the SA must be rekeyed.
 *
 * lib/ rules: plain C11, no globals, no clock reads; memory only in the
 * create functions; encrypt and decrypt work in place in caller buffers.
 * AES-GCM through Intel IPsec-MB's direct GCM API (as lib/sgw_slcrypto.c):
 * one engine (IMB_MGR) per thread, the SAs made with it belong to that thread.
 */
#ifndef SGW_ESP_H
#define SGW_ESP_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SGW_ESP_HDR_LEN 8u       /* SPI + sequence number */
#define SGW_ESP_IV_LEN 8u        /* explicit IV */
#define SGW_ESP_ICV_LEN 16u      /* GCM tag ('... 128' in ip xfrm) */
#define SGW_ESP_SALT_LEN 4u
/* Bytes inserted after the IP header by encrypt. */
#define SGW_ESP_HEADROOM (SGW_ESP_HDR_LEN + SGW_ESP_IV_LEN)
/* Bytes at most appended by encrypt: pad (<= 3) + pad len + next hdr + ICV. */
#define SGW_ESP_TAILROOM (3u + 2u + SGW_ESP_ICV_LEN)
#define SGW_ESP_MAX_PKT 65535u

/* Anti-replay window, in packets (RFC 4303 3.4.3: 32 at least, 64 default). */
#define SGW_ESP_WINDOW_MIN 32u
#define SGW_ESP_WINDOW_MAX 1024u
#define SGW_ESP_WINDOW_DEFAULT 64u

#define SGW_ESP_PROTO 50u
#define SGW_ESP_NH_NONE 59u      /* next header of a dummy packet */

/*
 * Result codes: encrypt and decrypt return a length (>= 0) or the negated
 * code. The names (sgw_esp_reason_name) are counter names and stay.
 */
enum sgw_esp_reason {
	SGW_ESP_OK = 0,
	SGW_ESP_BAD_LEN,      /* truncated or inconsistent lengths (IP or ESP) */
	SGW_ESP_BAD_IP,       /* not IPv4/IPv6, bad IHL, or a fragment */
	SGW_ESP_UNSUPPORTED,  /* IPv6 extension headers */
	SGW_ESP_NOT_ESP,      /* decrypt: the IP protocol is not 50 */
	SGW_ESP_BAD_SPI,      /* decrypt: SPI is not this SA's */
	SGW_ESP_BAD_SEQ,      /* decrypt: sequence number 0 (never sent) */
	SGW_ESP_REPLAY,       /* decrypt: sequence number already received */
	SGW_ESP_TOO_OLD,      /* decrypt: behind the window */
	SGW_ESP_AUTH_FAIL,    /* decrypt: ICV mismatch (forged, corrupt, wrong key) */
	SGW_ESP_BAD_PAD,      /* decrypt: pad length too long or pad bytes not 1,2,.. */
	SGW_ESP_DUMMY,        /* decrypt: next header 59, a dummy packet: discard */
	SGW_ESP_NO_ROOM,      /* encrypt: not enough headroom or tailroom */
	SGW_ESP_SEQ_OVERFLOW, /* encrypt: sequence number would cycle (no ESN) */
	SGW_ESP_BAD_ARG,      /* NULL pointers */
	SGW_ESP__NUM
};

/* "bad_len", "auth_fail", ...; "unknown" when out of range. Sign ignored. */
const char *sgw_esp_reason_name(int reason);

struct sgw_esp_engine;

/* One IPsec-MB manager (best arch this CPU has), for one thread. NULL when
 * the CPU has no AES-NI path or on no memory. */
struct sgw_esp_engine *sgw_esp_engine_create(void);
void sgw_esp_engine_destroy(struct sgw_esp_engine *eng);

struct sgw_esp_sa_conf {
	uint32_t spi;              /* this SA's SPI (network value, not 0) */
	uint8_t key[32];           /* AES key: key_len bytes used */
	uint32_t key_len;          /* 16 or 32 */
	uint8_t salt[SGW_ESP_SALT_LEN];
	uint32_t replay_window;    /* 0: default; else 32..1024 */
	/* Send state for a resumed SA and for tests; 0 means 1 (a fresh SA). */
	uint32_t tx_seq_next;
	uint64_t tx_iv_next;
};

/*
 * Parse the key material as `ip xfrm state ... aead 'rfc4106(gcm(aes))' KEY
 * 128` takes it: "0x" then hex of key || salt, 40 hex digits (AES-128) or
 * 72 (AES-256); the 0x is optional. Fills key, key_len, salt. 0 or -1.
 */
int sgw_esp_parse_key(const char *text, struct sgw_esp_sa_conf *conf);

struct sgw_esp_stats {
	uint64_t encrypted, enc_bytes;   /* packets and their IP lengths (before) */
	uint64_t decrypted, dec_bytes;   /* packets and their IP lengths (after) */
	uint64_t tx_refused[SGW_ESP__NUM];
	uint64_t rx_dropped[SGW_ESP__NUM];
};

struct sgw_esp_sa;

/* NULL on a bad conf (key length, window, SPI 0) or no memory. */
struct sgw_esp_sa *sgw_esp_sa_create(struct sgw_esp_engine *eng,
				     const struct sgw_esp_sa_conf *conf);
/* Wipes the key schedule, then frees. NULL is fine. */
void sgw_esp_sa_destroy(struct sgw_esp_sa *sa);

/*
 * Encrypt the IP packet at buf + off (len bytes, its IP length must equal
 * len) in place. The packet grows by SGW_ESP_HEADROOM at the front (the IP
 * header moves back: off must be >= SGW_ESP_HEADROOM) and by the trailer and
 * ICV at the back (buf_cap - off - len >= padding + 2 + 16; SGW_ESP_TAILROOM
 * always suffices). On success the ESP packet starts at buf + *out_off and
 * its length is returned; the IP header's protocol / next header is 50, its
 * length updated and (IPv4) its checksum recomputed; TTL, ID, DF, TOS, flow
 * label and options are kept. Errors (negated, counted in tx_refused):
 * BAD_ARG, BAD_LEN, BAD_IP, UNSUPPORTED, NO_ROOM, SEQ_OVERFLOW; nothing is
 * written and no sequence number or IV is used.
 */
int sgw_esp_encrypt(struct sgw_esp_sa *sa, uint8_t *buf, uint32_t buf_cap, uint32_t off,
		    uint32_t len, uint32_t *out_off);

/*
 * As sgw_esp_encrypt, with the sequence number and IV given and the SA's
 * send state untouched. FOR KNOWN-ANSWER TESTS AND THE AGENT'S
 * RE-ENCRYPTION CHECK ONLY: reusing an IV under a key breaks GCM.
 */
int sgw_esp_encrypt_at(struct sgw_esp_sa *sa, uint32_t seq, uint64_t iv, uint8_t *buf,
		       uint32_t buf_cap, uint32_t off, uint32_t len, uint32_t *out_off);

/*
 * Decrypt and verify the ESP packet pkt (len bytes; bytes past the IP length
 * are ignored) in place. On success the cleartext IP packet (protocol / next
 * header restored, length and IPv4 checksum fixed) starts at pkt + *out_off
 * and its length is returned. Errors (negated, counted in rx_dropped): every
 * reason except NO_ROOM and SEQ_OVERFLOW. DUMMY is a success of sorts: the
 * packet authenticated but is to be discarded. After AUTH_FAIL the
 * ciphertext area is zeroed; plaintext is never exposed from a packet that
 * did not authenticate. The window moves only for authenticated packets.
 * *seq_out (may be NULL) receives the ESP sequence number of an
 * authenticated packet (MH-LIFT's local acknowledgement needs it).
 */
int sgw_esp_decrypt(struct sgw_esp_sa *sa, uint8_t *pkt, uint32_t len, uint32_t *out_off,
		    uint32_t *seq_out);

void sgw_esp_get_stats(const struct sgw_esp_sa *sa, struct sgw_esp_stats *st);
/* The next sequence number encrypt uses (0: exhausted) and the highest
 * authenticated one received (0: none). */
uint32_t sgw_esp_tx_seq_next(const struct sgw_esp_sa *sa);
uint32_t sgw_esp_rx_top(const struct sgw_esp_sa *sa);
uint32_t sgw_esp_spi(const struct sgw_esp_sa *sa);

#ifdef __cplusplus
}
#endif

#endif /* SGW_ESP_H */
