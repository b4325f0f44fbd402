/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * satlink wire format: the frames of the reliable satellite link protocol
 * between a hub's and a terminal's satellite ports (docs/satlink.md), carried
 * directly over Ethernet with the IEEE local experimental EtherType 0x88B5.
 *
 * Every frame starts with the same 22-byte header (big-endian):
 *
 *    0   version (4 bits, high) | type (4 bits, low)
 *    1   flags
 *    2   channel (16)
 *    4   terminal id (32)
 *    8   sender epoch (32)
 *   12   peer epoch (32): the epoch the sender believes the receiver has
 *   16   seq (32): DATA: sequence number (reliable) or datagram sequence
 *        number (DATAGRAM); STATUS: cumulative ack (every seq below it has
 *        been received); HELLO / HELLO_ACK: the sender's initial seq
 *   20   payload length (16): bytes after the header that belong to the frame
 *   22   payload (DATA) or body (STATUS, HELLO, HELLO_ACK)
 *
 * Bytes after header + payload length (Ethernet padding) are ignored. With
 * ENCRYPTED set the payload is the crypto layer's (nonce || ciphertext ||
 * tag, lib/sgw_slcrypto.h) and the length counts all of it; the header is the
 * AAD, and the body checks run on the plaintext after it is opened.
 *
 * This file only encodes and parses. Every parse is bounds-checked against
 * (buf, len) and never reads past buf + len; nothing allocates or keeps state.
 */
#ifndef SGW_SATLINK_H
#define SGW_SATLINK_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SGW_SATLINK_ETHERTYPE 0x88B5  /* IEEE 802 local experimental 1 */
#define SGW_SATLINK_VERSION 1
#define SGW_SATLINK_HDR_LEN 22u

/* Frame types (4 bits; 4..15 are refused). */
enum sgw_satlink_type {
	SGW_SL_DATA = 0,       /* a fragment of a packet, reliable or datagram */
	SGW_SL_STATUS = 1,     /* receiver state: cumulative ack + bitmap (+ keepalive) */
	SGW_SL_HELLO = 2,      /* session setup: my epoch, what I believe yours is */
	SGW_SL_HELLO_ACK = 3,  /* answer to a HELLO */
	SGW_SL__TYPE_COUNT
};

/* Flags (byte 1). Bits 4-6 are reserved: a frame with one set is refused. */
#define SGW_SL_F_FIRST 0x01u      /* DATA: first fragment of a packet */
#define SGW_SL_F_LAST 0x02u       /* DATA: last fragment of a packet */
#define SGW_SL_F_RETX 0x04u       /* DATA: a retransmitted copy (informational) */
#define SGW_SL_F_DATAGRAM 0x08u   /* DATA: best-effort datagram service */
#define SGW_SL_F_ENCRYPTED 0x80u  /* any type: payload sealed by the crypto layer */
#define SGW_SL_F_DATA_MASK \
	(SGW_SL_F_FIRST | SGW_SL_F_LAST | SGW_SL_F_RETX | SGW_SL_F_DATAGRAM | \
	 SGW_SL_F_ENCRYPTED)
#define SGW_SL_F_CTRL_MASK SGW_SL_F_ENCRYPTED

/* STATUS body: echo seq (4), echo delay us (4), bitmap words (2), reserved (2). */
#define SGW_SATLINK_STATUS_FIXED 12u
/* At most 256 bitmap words of 32 bits: 8192 frames above the cumulative ack. */
#define SGW_SATLINK_STATUS_MAX_WORDS 256u
#define SGW_SATLINK_STATUS_MAX_LEN \
	(SGW_SATLINK_HDR_LEN + SGW_SATLINK_STATUS_FIXED + 4u * SGW_SATLINK_STATUS_MAX_WORDS)
/* echo_delay_us value meaning "nothing received yet: no echo". */
#define SGW_SATLINK_NO_ECHO UINT32_MAX

/* HELLO / HELLO_ACK body: rx window (4), max fragments (2), fragment size (2),
 * idle ms (2), reserved (2). */
#define SGW_SATLINK_HELLO_LEN 12u
#define SGW_SATLINK_HELLO_FRAME_LEN (SGW_SATLINK_HDR_LEN + SGW_SATLINK_HELLO_LEN)
/* Largest rx window a HELLO may announce (= the bitmap's reach + 1). */
#define SGW_SATLINK_MAX_WINDOW (32u * SGW_SATLINK_STATUS_MAX_WORDS)

/*
 * Parse results. The names (sgw_satlink_reason_name) are counter names and
 * do not change.
 */
enum sgw_satlink_reason {
	SGW_SL_OK = 0,
	SGW_SL_TRUNC,        /* fewer than 22 bytes */
	SGW_SL_BAD_VERSION,  /* version != 1 */
	SGW_SL_BAD_TYPE,     /* type 4..15 */
	SGW_SL_BAD_FLAGS,    /* a reserved bit, or a DATA-only bit on a control frame */
	SGW_SL_BAD_LEN,      /* payload length past the frame, DATA with none, or a
			      * clear control body of the wrong size */
	SGW_SL_BAD_EPOCH,    /* sender epoch 0; peer epoch 0 on DATA/STATUS/HELLO_ACK */
	SGW_SL_BAD_CHANNEL,  /* a control frame with channel != 0 */
	SGW_SL_BAD_BODY,     /* STATUS / HELLO body fields out of range */
	SGW_SL__REASON_COUNT
};

/* The header, in host order. */
struct sgw_satlink_hdr {
	uint8_t version;
	uint8_t type;          /* enum sgw_satlink_type */
	uint8_t flags;         /* SGW_SL_F_* */
	uint16_t channel;
	uint32_t terminal_id;
	uint32_t sender_epoch;
	uint32_t peer_epoch;
	uint32_t seq;
	uint16_t payload_len;
};

/* A STATUS body. The bitmap stays in the frame (not copied): nwords 32-bit
 * big-endian words; bit b (LSB = 0) of word w stands for seq cum + 1 + 32w + b. */
struct sgw_satlink_status {
	uint32_t echo_seq;       /* the last new DATA frame received */
	uint32_t echo_delay_us;  /* time since it arrived; SGW_SATLINK_NO_ECHO: none */
	uint16_t nwords;         /* 0..SGW_SATLINK_STATUS_MAX_WORDS */
	const uint8_t *bitmap;   /* parse: points into the body (unused by the writer) */
};

/* A HELLO / HELLO_ACK body: what the sender of the frame can receive. */
struct sgw_satlink_hello {
	uint32_t rx_window;   /* frames above the cumulative ack it accepts, 1..8192 */
	uint16_t max_frags;   /* fragments per packet it reassembles, >= 1 */
	uint16_t frag_size;   /* its largest fragment payload, >= 1 (informational) */
	uint16_t idle_ms;     /* send it a frame at least this often (0: no wish) */
};

/* Counter name of a reason ("bad_flags", ...); "unknown" when out of range. */
const char *sgw_satlink_reason_name(int reason);
/* "data", "status", "hello", "hello_ack"; "unknown" otherwise. */
const char *sgw_satlink_type_name(int type);

/*
 * Parse the header at buf (the first byte after the Ethernet header and any
 * VLAN tags). Checks version, type, flags for the type, epochs, the channel of
 * control frames, that the payload fits in len, that DATA has a payload and
 * that a clear (not ENCRYPTED) HELLO/HELLO_ACK body is 12 bytes and a clear
 * STATUS body is 12 + 4 * nwords bytes. Fills *h (on failure: the fields read
 * so far). Returns SGW_SL_OK or a reason.
 */
int sgw_satlink_parse_hdr(const void *buf, size_t len, struct sgw_satlink_hdr *h);

/*
 * Parse a STATUS body (len bytes; for an encrypted frame, the plaintext).
 * len must be exactly 12 + 4 * nwords and nwords <= 256 (SGW_SL_BAD_LEN /
 * SGW_SL_BAD_BODY; a short body is SGW_SL_TRUNC). Reserved bytes are ignored.
 */
int sgw_satlink_parse_status(const void *body, size_t len, struct sgw_satlink_status *st);
/* Word w (< nwords) of a parsed status bitmap, in host order. */
uint32_t sgw_satlink_status_word(const struct sgw_satlink_status *st, uint32_t w);

/* Parse a HELLO / HELLO_ACK body: exactly 12 bytes, fields in range. */
int sgw_satlink_parse_hello(const void *body, size_t len, struct sgw_satlink_hello *hb);

/*
 * Write the 22-byte header (version forced to SGW_SATLINK_VERSION). Returns
 * SGW_SATLINK_HDR_LEN, or 0 when cap is too small or a field cannot be
 * encoded (type > 15). No other check: the writer trusts its caller.
 */
size_t sgw_satlink_write_hdr(void *buf, size_t cap, const struct sgw_satlink_hdr *h);

/*
 * Write a STATUS body: the fixed 12 bytes, then st->nwords host-order words
 * from words[] (may be NULL when nwords is 0). Returns the body length, or 0
 * when cap is too small or nwords > 256.
 */
size_t sgw_satlink_write_status(void *buf, size_t cap, const struct sgw_satlink_status *st,
				const uint32_t *words);

/* Write a HELLO / HELLO_ACK body. Returns 12, or 0 when cap < 12. */
size_t sgw_satlink_write_hello(void *buf, size_t cap, const struct sgw_satlink_hello *hb);

#ifdef __cplusplus
}
#endif

#endif /* SGW_SATLINK_H */
