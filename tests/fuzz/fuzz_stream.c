/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer harness for the split TCP streams: the message codec
 * (lib/sgw_stream.c) and one split half (lib/sgw_split.c) driven by a
 * hostile satlink peer.
 *
 * Setup (every input), by the first byte: bit 0 clear: a hub-side half
 * ACCEPTS a fixed OPEN (spoofed), its TCP leg connects and the scripted local
 * peer (the server) answers, so the stream is up; bit 0 set: a terminal-side
 * half OPENS for a client's SYN, spoofed (bit 1: the client's ACK follows at
 * once) or end to end (the SYN is held until the input sends OPEN_OK); bit 2:
 * the TCP stack has no SACK scoreboard free (the NewReno fallback). The
 * local peer is called "the server" below in both cases. Then records
 * [op (1)][len (1)] followed, for op 0 only, by len bytes (the last one takes
 * what is left):
 *   op % 4 == 0  the bytes are one channel payload from the far half: first
 *                the codec (an accepted message must encode back to the same
 *                bytes; a refusal is counted once under a known reason),
 *                then into the half
 *   op % 4 == 1  len x 10 ms pass; due timers fire in deadline order
 *   op % 4 == 2  the server sends len bytes of its pattern and ACKs all the
 *                half sent it (window (op >> 2) KB)
 *   op % 4 == 3  the satlink channel's room becomes len x 64 bytes
 * Aborts on: a relay beyond its size or a refused relay write; a byte the
 * leg sends the server that is not the stream byte the far half sent at that
 * offset; a message the half sends that does not decode, DATA out of order or
 * not the server's bytes; DATA sent beyond the far half's credit; activity
 * after the half said CLOSED, or a SACK scoreboard still lent then. ASan
 * catches reads past each record (copied to an exact-size heap buffer).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sgw_split.h"
#include "sgw_stream.h"
#include "sgw_tcp.h"

#define RING 4096u
#define SHADOW (1u << 16) /* stream bytes remembered from the far half */
#define SRV_ISS 555000u

struct h {
	struct sgw_tcp_stack st;
	struct sgw_split_env env;
	struct sgw_split sp __attribute__((aligned(64)));
	uint8_t rx_mem[RING];
	uint8_t tx_mem[RING];
	uint64_t now;
	uint64_t tm[SGW_SPLIT_T__COUNT];
	uint32_t room;
	int closed;
	/* far half -> server: accepted DATA bytes by stream offset */
	uint8_t shadow[SHADOW];
	uint64_t in_off;         /* next far-half offset accepted (mirror) */
	uint32_t leg_iss;        /* the leg's ISS (client side of the server) */
	int leg_iss_known;
	/* server -> far half */
	uint32_t srv_nxt;        /* server's next seq */
	uint32_t srv_ack;        /* highest seq the leg sent + 1 */
	uint64_t srv_sent;       /* pattern bytes the server put out (as stream offset) */
	uint64_t out_off;        /* next DATA offset expected from the half */
	uint32_t far_edge;       /* credit the far half granted (OPEN's) */
	uint16_t peer_port;      /* the local peer's port */
	uint16_t leg_port;       /* the leg's own port */
};

static struct h H;

static uint8_t
pat(uint64_t i)
{
	return (uint8_t)((i * 2654435761u) >> 13);
}

static uint32_t
rd32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void
out_apply(const struct sgw_split_out *o)
{
	unsigned int id;

	for (id = 0; id < SGW_SPLIT_T__COUNT; id++)
		if (o->timer_set & (1u << id))
			H.tm[id] = o->timer_at[id];
	if (o->events & SGW_SPLIT_EV_CLOSED) {
		for (id = 0; id < SGW_SPLIT_T__COUNT; id++)
			if (H.tm[id] != SGW_TCP_NEVER)
				abort(); /* CLOSED with a timer left */
		if (H.st.sb_used != 0)
			abort(); /* the leg's scoreboard outlived it */
		H.closed = 1;
	}
	if (H.sp.rx.tail - H.sp.rx.head > H.sp.rx.limit ||
	    H.sp.tx.tail - H.sp.tx.head > H.sp.tx.limit || H.sp.tx.overflows != 0)
		abort();
}

/* The leg's segments toward the server. */
static void
io_tx(void *ctx, struct sgw_split *sp, const uint8_t *hdr, uint32_t hlen,
      const struct sgw_split_iov *d, unsigned int n)
{
	struct sgw_tcp_seg s;
	uint64_t off;
	unsigned int i;
	uint32_t k;

	(void)ctx;
	(void)sp;
	if (H.closed)
		abort();
	if (sgw_tcp_seg_parse(hdr, hlen, &s, NULL) != SGW_TCP_PR_OK)
		abort();
	if (s.flags & SGW_TCP_F_SYN) {
		H.leg_iss = s.seq;
		H.leg_iss_known = 1;
		if ((int32_t)(s.seq + 1 - H.srv_ack) > 0 || H.srv_ack == 0)
			H.srv_ack = s.seq + 1;
		return;
	}
	if (!H.leg_iss_known)
		return;
	off = (uint32_t)(s.seq - H.leg_iss - 1);
	for (i = 0; i < n; i++) {
		for (k = 0; k < d[i].len; k++, off++) {
			if (off >= H.in_off)
				abort(); /* a byte the far half never sent */
			if (off < SHADOW && d[i].p[k] != H.shadow[off])
				abort();
		}
	}
	{
		uint32_t end = s.seq;

		for (i = 0; i < n; i++)
			end += d[i].len;
		if (s.flags & SGW_TCP_F_FIN)
			end++;
		if ((int32_t)(end - H.srv_ack) > 0)
			H.srv_ack = end;
	}
}

static uint32_t
sat_can(void *ctx, const struct sgw_split *sp, uint64_t now)
{
	(void)ctx;
	(void)sp;
	(void)now;
	return H.room;
}

/* Messages the half sends to the far half. */
static int
sat_send(void *ctx, struct sgw_split *sp, uint16_t ch, const struct sgw_split_iov *iov,
	 unsigned int n)
{
	uint8_t buf[2048];
	struct sgw_stream_msg m;
	size_t len = 0;
	unsigned int i;
	uint32_t k;

	(void)ctx;
	(void)sp;
	if (H.closed || ch != 7 || n == 0 || n > 3)
		abort();
	for (i = 0; i < n; i++) {
		if (len + iov[i].len > sizeof(buf))
			abort();
		memcpy(buf + len, iov[i].p, iov[i].len);
		len += iov[i].len;
	}
	if (len > H.room && buf[0] == SGW_STREAM_DATA)
		abort();
	if (sgw_stream_decode(buf, len, &m, NULL) != SGW_STREAM_E_OK)
		abort();
	if (m.type == SGW_STREAM_DATA) {
		if (m.off != (uint32_t)H.out_off)
			abort();
		if ((int32_t)(H.far_edge - (m.off + m.len)) < 0)
			abort(); /* beyond the credit */
		for (k = 0; k < m.len; k++)
			if (m.data[k] != pat(H.out_off + k))
				abort();
		H.out_off += m.len;
	}
	H.room = H.room > len ? H.room - (uint32_t)len : 0;
	return 0;
}

static void
server_seg(uint32_t nbytes, uint16_t wnd_kb)
{
	uint8_t pkt[SGW_TCP_MAX_HDR_LEN + 256];
	struct sgw_tcp_seg s;
	struct sgw_split_out o;
	uint32_t hl, i;

	memset(&s, 0, sizeof(s));
	s.sport = H.peer_port;
	s.dport = H.leg_port;
	s.seq = H.srv_nxt;
	s.ack = H.srv_ack;
	s.flags = SGW_TCP_F_ACK | (nbytes ? SGW_TCP_F_PSH : 0);
	s.win = wnd_kb ? (uint16_t)(wnd_kb * 1024u > 65535 ? 65535 : wnd_kb * 1024u) : 0;
	hl = sgw_tcp_seg_build(pkt, sizeof(pkt), &s);
	if (nbytes > sizeof(pkt) - hl)
		nbytes = (uint32_t)(sizeof(pkt) - hl);
	for (i = 0; i < nbytes; i++)
		pkt[hl + i] = pat(H.srv_sent + i);
	if (sgw_tcp_seg_parse(pkt, hl + nbytes, &s, NULL) != SGW_TCP_PR_OK)
		abort();
	sgw_split_tcp_input(&H.env, &H.sp, H.now, &s, &o);
	out_apply(&o);
	/* the server goes on from what the leg took (it retransmits the rest) */
	if (H.sp.tcp.state >= SGW_TCP_ESTABLISHED && H.leg_iss_known) {
		uint32_t took = H.sp.tcp.rcv_nxt - (SRV_ISS + 1);

		if ((uint64_t)took > H.srv_sent) {
			H.srv_sent = took;
			H.srv_nxt = H.sp.tcp.rcv_nxt;
		}
	}
}

static void
fire_due(void)
{
	struct sgw_split_out o;
	unsigned int id, best, rounds;
	uint64_t t;

	for (rounds = 0; rounds < 64 && !H.closed; rounds++) {
		best = SGW_SPLIT_T__COUNT;
		t = H.now;
		for (id = 0; id < SGW_SPLIT_T__COUNT; id++)
			if (H.tm[id] <= t) {
				t = H.tm[id];
				best = id;
			}
		if (best == SGW_SPLIT_T__COUNT)
			return;
		H.tm[best] = SGW_TCP_NEVER;
		sgw_split_timer(&H.env, &H.sp, H.now, best, &o);
		out_apply(&o);
	}
}

static void
codec_check(const uint8_t *copy, size_t n)
{
	uint64_t ctr[SGW_STREAM_E__COUNT] = {0};
	uint8_t out[512];
	struct sgw_stream_msg m;
	uint64_t sum = 0;
	size_t i, len;
	int e;

	e = sgw_stream_decode(copy, n, &m, ctr);
	for (i = 0; i < SGW_STREAM_E__COUNT; i++)
		sum += ctr[i];
	if (e < 0 || e >= SGW_STREAM_E__COUNT)
		abort();
	if (e != SGW_STREAM_E_OK) {
		if (sum != 1 || ctr[e] != 1)
			abort();
		return;
	}
	if (sum != 0 || sgw_stream_len(&m) != n)
		abort();
	if (m.type == SGW_STREAM_DATA &&
	    (m.data != copy + SGW_STREAM_DATA_HDR || m.len != n - SGW_STREAM_DATA_HDR))
		abort();
	len = sgw_stream_encode(out, sizeof(out), &m);
	if (n <= sizeof(out) && (len != n || memcmp(out, copy, n) != 0))
		abort();
	/* mirror what the half will accept: DATA at the expected offset within credit */
	if (m.type == SGW_STREAM_DATA && m.off == (uint32_t)H.in_off &&
	    m.len <= H.sp.tx.limit - (H.sp.tx.tail - H.sp.tx.head)) {
		for (i = 0; i < m.len; i++)
			if (H.in_off + i < SHADOW)
				H.shadow[H.in_off + i] = m.data[i];
		/* provisional: the leg may send them within the call; resynced after */
		H.in_off += m.len;
	}
}

static void
setup(uint8_t cfg)
{
	static struct sgw_tcp_sb no_boards[1];
	static const struct sgw_split_io_ops io = {io_tx};
	static const struct sgw_split_sat_ops sat = {sat_can, sat_send};
	struct sgw_split_conf sc;
	struct sgw_tcp_conf tc;
	struct sgw_stream_msg open;
	struct sgw_split_bufs b;
	struct sgw_split_out o;
	struct sgw_tcp_seg s;
	unsigned int i;

	memset(&H, 0, sizeof(H));
	for (i = 0; i < SGW_SPLIT_T__COUNT; i++)
		H.tm[i] = SGW_TCP_NEVER;
	H.now = 1000000000ull;
	H.room = 1 << 20;
	sgw_tcp_conf_default(&tc);
	tc.rcv_buf = 65536;
	sgw_split_conf_default(&sc);
	sc.open_credit = RING;
	sc.idle_ns = 30ull * 1000000000ull;
	if (sgw_tcp_stack_init(&H.st, &tc, &sgw_split_tcp_ops, &H.env) != 0 ||
	    sgw_split_env_init(&H.env, &sc, &H.st, &io, &sat, NULL) != 0)
		abort();
	if ((cfg & 4) && sgw_tcp_stack_set_sb_pool(&H.st, no_boards, 0) != 0)
		abort();
	b.rx_mem = H.rx_mem;
	b.rx_ring = RING;
	b.rx_limit = RING;
	b.tx_mem = H.tx_mem;
	b.tx_ring = RING;
	b.tx_limit = RING;
	H.far_edge = RING;
	if (cfg & 1) {
		struct sgw_split_addr a;

		/* opener: the client's SYN (the "server" of the records is the client) */
		memset(&a, 0, sizeof(a));
		a.sport = 40001;
		a.dport = 80;
		H.peer_port = 40001;
		H.leg_port = 80;
		memset(&s, 0, sizeof(s));
		s.sport = 40001;
		s.dport = 80;
		s.seq = SRV_ISS;
		s.flags = SGW_TCP_F_SYN;
		s.win = 65535;
		s.opts = SGW_TCP_O_MSS | SGW_TCP_O_SACK_PERM;
		s.mss = 1460;
		if (sgw_split_open(&H.env, &H.sp, H.now, &a, &s,
				   (cfg & 2) ? SGW_SPLIT_SPOOFED : SGW_SPLIT_END_TO_END, 7, 66000,
				   &b, NULL, &o) != 0)
			abort();
		out_apply(&o);
		H.srv_nxt = SRV_ISS + 1;
		H.srv_ack = H.leg_iss + 1;
		if (cfg & 2) {
			if (!H.leg_iss_known)
				abort();
			H.srv_ack = H.leg_iss + 1;
			server_seg(0, 60);
			if (H.sp.tcp.state != SGW_TCP_ESTABLISHED)
				abort();
		}
		return;
	}
	H.peer_port = 80;
	H.leg_port = 40001;
	memset(&open, 0, sizeof(open));
	open.type = SGW_STREAM_OPEN;
	open.flags = SGW_STREAM_F_SPOOFED;
	open.sport = 40001;
	open.dport = 80;
	open.off = RING; /* the far half's relay */
	if (sgw_split_accept(&H.env, &H.sp, H.now, &open, 7, 77000, &b, NULL, &o) != 0)
		abort();
	out_apply(&o);
	if (!H.leg_iss_known)
		abort();
	/* the server's SYN-ACK */
	memset(&s, 0, sizeof(s));
	s.sport = 80;
	s.dport = 40001;
	s.seq = SRV_ISS;
	s.ack = H.leg_iss + 1;
	s.flags = SGW_TCP_F_SYN | SGW_TCP_F_ACK;
	s.win = 65535;
	s.opts = SGW_TCP_O_MSS;
	s.mss = 1460;
	H.now += 20000000ull;
	sgw_split_tcp_input(&H.env, &H.sp, H.now, &s, &o);
	out_apply(&o);
	H.srv_nxt = SRV_ISS + 1;
	H.srv_ack = H.leg_iss + 1;
	if (H.sp.state != SGW_SPLIT_S_OPEN)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sgw_split_out o;
	struct sgw_stream_msg m;
	size_t pos = 0, n;
	unsigned int rec;
	uint8_t op, *copy;

	if (size == 0)
		return 0;
	setup(data[0]);
	pos = 1;
	/* at most 256 records per input: bounded by the input and this */
	for (rec = 0; rec < 256 && pos + 2 <= size; rec++) {
		op = data[pos];
		n = data[pos + 1];
		pos += 2;
		if ((op & 3) == 0 && n > size - pos)
			n = size - pos;
		switch (op & 3) {
		case 0:
			copy = malloc(n ? n : 1);
			if (copy == NULL)
				return 0;
			memcpy(copy, data + pos, n);
			if (!H.closed) {
				codec_check(copy, n);
				/* CREDIT / OPEN_OK the half takes: the edge it may send to */
				if (n == SGW_STREAM_CREDIT_LEN && copy[0] == SGW_STREAM_CREDIT &&
				    (int32_t)(rd32(copy + 1) - H.far_edge) > 0 &&
				    rd32(copy + 1) - H.sp.rx.head <= (1u << 30))
					H.far_edge = rd32(copy + 1);
				if (sgw_stream_decode(copy, n, &m, NULL) == SGW_STREAM_E_OK &&
				    m.type == SGW_STREAM_OPEN_OK &&
				    H.sp.role == SGW_SPLIT_OPENER &&
				    H.sp.state == SGW_SPLIT_S_OPENING &&
				    (int32_t)(m.off - H.far_edge) > 0)
					H.far_edge = m.off;
				sgw_split_stream_input(&H.env, &H.sp, H.now, copy, n, &o);
				out_apply(&o);
				H.in_off = H.sp.tx.tail;
			} else {
				codec_check(copy, n);
			}
			free(copy);
			break;
		case 1:
			H.now += (uint64_t)n * 10000000ull;
			fire_due();
			break;
		case 2:
			if (!H.closed)
				server_seg((uint32_t)n, (uint16_t)(op >> 2));
			break;
		default:
			H.room = (uint32_t)n * 64u;
			if (!H.closed) {
				sgw_split_poll(&H.env, &H.sp, H.now, &o);
				out_apply(&o);
			}
			break;
		}
		if ((op & 3) == 0)
			pos += n;
	}
	return 0;
}
