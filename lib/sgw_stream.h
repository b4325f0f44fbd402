/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Split TCP stream messages: the wire format of one split connection's byte
 * stream carried as satlink channel payloads (one message = one satlink
 * packet on the stream's channel; satlink delivers them reliably and in order
 * per session, and says how long each is). docs/wire-formats.md section
 * "Split TCP streams" has the layout; docs/tcp-split.md the protocol.
 *
 * The TCP/IP headers never cross the satellite: the addresses, ports and the
 * SYN's options travel once in OPEN, and each DATA carries a 5-byte header
 * (type + 32-bit stream offset) in front of the bytes.
 *
 * Plain C11, no globals, no allocation. Decoding never reads past (p, len)
 * and says why it refused (a counter per reason).
 */
#ifndef SGW_STREAM_H
#define SGW_STREAM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Message types (byte 0). */
enum sgw_stream_type {
	SGW_STREAM_OPEN = 1,     /* open a stream: addresses, ports, SYN options, mode, credit */
	SGW_STREAM_OPEN_OK,      /* the far leg is up: the acceptor's credit */
	SGW_STREAM_OPEN_REFUSED, /* the far leg could not be opened: why */
	SGW_STREAM_DATA,         /* stream bytes at an offset */
	SGW_STREAM_FIN,          /* no more bytes after this offset (half-close) */
	SGW_STREAM_RST,          /* the stream is aborted: why */
	SGW_STREAM_CREDIT,       /* the receiver accepts bytes below this offset */
	SGW_STREAM_T__END
};

/* OPEN flags (byte 1). */
#define SGW_STREAM_F_IPV6 0x01    /* 16-byte addresses (else 4) */
#define SGW_STREAM_F_SPOOFED 0x02 /* the opener already answered the SYN (spoofed mode) */
#define SGW_STREAM_F__ALL 0x03

/* SYN options seen (OPEN: the opener's SYN; OPEN_OK: the far peer's SYN-ACK). */
#define SGW_STREAM_O_MSS 0x01
#define SGW_STREAM_O_WS 0x02
#define SGW_STREAM_O_SACK 0x04
#define SGW_STREAM_O_TS 0x08
#define SGW_STREAM_O__ALL 0x0f

/* OPEN_REFUSED reasons: what the opener's TCP peer is shown. */
enum sgw_stream_refuse {
	SGW_STREAM_REFUSE_RST = 1,     /* the far host answered RST: the client gets a RST */
	SGW_STREAM_REFUSE_UNREACHABLE, /* no answer (SYN retries exhausted): the SYN dies */
	SGW_STREAM_REFUSE_NO_RESOURCES,/* the far gateway could not open: RST */
	SGW_STREAM_REFUSE__END
};

/* RST reasons. */
enum sgw_stream_rst {
	SGW_STREAM_RST_PEER = 1,  /* the far TCP peer reset its connection */
	SGW_STREAM_RST_TIMEOUT,   /* the far leg's retransmissions were exhausted */
	SGW_STREAM_RST_IDLE,      /* idle timeout */
	SGW_STREAM_RST_ABORT,     /* the far gateway gave it up (resources, shutdown) */
	SGW_STREAM_RST_PROTOCOL,  /* a stream message made no sense (offset, credit, order) */
	SGW_STREAM_RST__END
};

/* Sizes. */
#define SGW_STREAM_DATA_HDR 5u    /* type + offset: the per-packet cost */
#define SGW_STREAM_OPEN4_LEN 24u
#define SGW_STREAM_OPEN6_LEN 48u
#define SGW_STREAM_OPEN_OK_LEN 12u
#define SGW_STREAM_REFUSED_LEN 2u
#define SGW_STREAM_FIN_LEN 5u
#define SGW_STREAM_RST_LEN 2u
#define SGW_STREAM_CREDIT_LEN 5u
#define SGW_STREAM_MAX_CTRL 48u   /* the largest non-DATA message */
#define SGW_STREAM_MIN_MSS 64u    /* an MSS option below this is refused */

/*
 * One message, decoded or to encode. Host order. Which fields mean something
 * depends on type:
 *   OPEN          flags, opts, wscale, mss, sport/dport (the SYN's source and
 *                 destination), saddr/daddr (4 or 16 bytes used), off = the
 *                 opener's initial credit edge (bytes it accepts from offset 0)
 *   OPEN_OK       opts, wscale, mss (the far peer's SYN-ACK), off = credit edge
 *   OPEN_REFUSED  reason
 *   DATA          off = stream offset (mod 2^32) of data[0]; data/len
 *   FIN           off = the stream's length (mod 2^32): no byte at or after it
 *   RST           reason
 *   CREDIT        off = the edge: the sender may send bytes below it
 */
struct sgw_stream_msg {
	uint8_t type;
	uint8_t flags;
	uint8_t opts;
	uint8_t wscale;
	uint8_t reason;
	uint8_t pad;
	uint16_t mss;
	uint16_t sport;
	uint16_t dport;
	uint32_t off;
	uint8_t saddr[16];
	uint8_t daddr[16];
	const uint8_t *data;
	uint32_t len;
};

/* Why a message was refused. Names: sgw_stream_err_name. */
enum sgw_stream_err {
	SGW_STREAM_E_OK = 0,
	SGW_STREAM_E_EMPTY,      /* zero bytes */
	SGW_STREAM_E_BAD_TYPE,   /* type 0 or >= SGW_STREAM_T__END */
	SGW_STREAM_E_TRUNC,      /* shorter than the type's fixed part */
	SGW_STREAM_E_BAD_LEN,    /* a fixed-size message with bytes after it */
	SGW_STREAM_E_BAD_FLAGS,  /* unknown flag or option bit, reserved byte not 0 */
	SGW_STREAM_E_BAD_WSCALE, /* window scale above 14 */
	SGW_STREAM_E_BAD_MSS,    /* MSS flagged but below SGW_STREAM_MIN_MSS */
	SGW_STREAM_E_BAD_PORT,   /* OPEN with port 0 */
	SGW_STREAM_E_BAD_REASON, /* refuse / RST reason unknown */
	SGW_STREAM_E_NO_PAYLOAD, /* DATA with no bytes */
	SGW_STREAM_E__COUNT
};

const char *sgw_stream_err_name(int err);
const char *sgw_stream_type_name(int type);

/*
 * Decode the message at p (len bytes: the whole channel payload). Never reads
 * past p + len; m->data points into p for DATA. Returns SGW_STREAM_E_OK or
 * the reason; ctr (SGW_STREAM_E__COUNT counters, may be NULL) counts it.
 */
int sgw_stream_decode(const void *p, size_t len, struct sgw_stream_msg *m, uint64_t *ctr);

/* Bytes sgw_stream_encode writes for m (DATA: header + m->len), 0 for a bad type. */
size_t sgw_stream_len(const struct sgw_stream_msg *m);

/*
 * Encode m into buf (cap bytes). DATA: the header then m->len bytes copied
 * from m->data. Returns the length, or 0 when cap is too small or m has a
 * field the decoder would refuse (so everything encoded decodes back).
 */
size_t sgw_stream_encode(void *buf, size_t cap, const struct sgw_stream_msg *m);

/* DATA header alone (5 bytes at buf): the caller places the bytes after it. */
static inline void
sgw_stream_data_hdr(uint8_t *buf, uint32_t off)
{
	buf[0] = SGW_STREAM_DATA;
	buf[1] = (uint8_t)(off >> 24);
	buf[2] = (uint8_t)(off >> 16);
	buf[3] = (uint8_t)(off >> 8);
	buf[4] = (uint8_t)off;
}

#ifdef __cplusplus
}
#endif

#endif /* SGW_STREAM_H */
