// SPDX-License-Identifier: BSD-3-Clause
// Tests of the TCP endpoint (lib/sgw_tcp_*.c) in virtual time.
//
// Two harnesses:
//  - Pair: two endpoints joined by a scripted model link (one-way delay per
//    direction, FIFO, a drop/delay script per segment). Every segment is real
//    bytes: built by the endpoint, copied with its payload from the sender's
//    stream, parsed by sgw_tcp_seg_parse on the way in. Each side's stream
//    is a deterministic byte pattern, so the receiver checks every byte it
//    gets in order. Timers are deadlines kept by the harness per timer id
//    (the wheel's job in the dataplane); the clock jumps to the next event.
//  - Drill: one endpoint against hand-written segments, checking the exact
//    segments it emits (flags, seq, ack, window, options), packetdrill style.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sgw_tcp.h"

namespace {

constexpr uint64_t kUs = 1000;
constexpr uint64_t kMs = 1000 * kUs;
constexpr uint64_t kSec = 1000 * kMs;
constexpr uint64_t kNever = SGW_TCP_NEVER;

uint8_t
Pattern(uint32_t seed, uint64_t pos)
{
	uint64_t x = (pos + 1) * 0x9E3779B97F4A7C15ull ^ seed;
	return (uint8_t)(x >> 29);
}

struct Parsed {
	sgw_tcp_seg s;
	std::vector<uint8_t> bytes;  // header + payload
	uint64_t at;
};

// One side: a connection, its send stream and its receive buffer.
struct Endpoint {
	alignas(64) sgw_tcp_conn c;
	sgw_tcp_stack st;
	uint32_t seed = 0;
	// send side: stream positions [acked, appended) are in the send buffer
	uint64_t appended = 0;
	uint64_t acked = 0;
	// receive side: ring of rx_cap bytes, [read, inorder) readable
	uint32_t rx_cap = 1 << 20;
	std::vector<uint8_t> ring;
	uint64_t inorder = 0;
	uint64_t read = 0;
	bool auto_read = true;
	uint32_t peer_seed = 0;
	uint64_t bad_bytes = 0;
	uint64_t space_violations = 0;
	// timers and events
	uint64_t timer[SGW_TCP_T__COUNT];
	uint32_t events = 0;
	uint8_t reason = 0;
	std::vector<Parsed> sent;  // every segment emitted, in order
	std::function<void(Endpoint *, const uint8_t *, uint32_t)> wire;

	Endpoint() : ring(1 << 20)
	{
		for (auto &t : timer)
			t = kNever;
	}

	void SetRxCap(uint32_t cap)
	{
		rx_cap = cap;
		ring.assign(cap, 0);
	}

	uint32_t Space() const { return rx_cap - (uint32_t)(inorder - read); }

	void Apply(const sgw_tcp_out &o)
	{
		for (unsigned i = 0; i < SGW_TCP_T__COUNT; i++)
			if (o.timer_set & (1u << i))
				timer[i] = o.timer_at[i];
		events |= o.events;
		if (o.reason)
			reason = o.reason;
	}

	uint64_t NextTimer() const
	{
		uint64_t t = kNever;
		for (auto d : timer)
			t = std::min(t, d);
		return t;
	}

	bool Armed(unsigned id) const { return timer[id] != kNever; }
};

// ops: ctx is the Endpoint
void
OpTx(void *ctx, sgw_tcp_conn *, const uint8_t *hdr, uint32_t hlen, uint32_t off, uint32_t len)
{
	auto *e = static_cast<Endpoint *>(ctx);
	std::vector<uint8_t> b(hdr, hdr + hlen);
	EXPECT_LE(e->acked + off + len, e->appended) << "tx beyond the send buffer";
	for (uint32_t i = 0; i < len; i++)
		b.push_back(Pattern(e->seed, e->acked + off + i));
	Parsed p;
	EXPECT_EQ(sgw_tcp_seg_parse(b.data(), b.size(), &p.s, nullptr), SGW_TCP_PR_OK);
	p.bytes = b;
	p.s.data = nullptr;
	p.at = 0;
	e->sent.push_back(p);
	if (e->wire)
		e->wire(e, b.data(), (uint32_t)b.size());
}

void
OpRxData(void *ctx, sgw_tcp_conn *, uint32_t off, const uint8_t *p, uint32_t len)
{
	auto *e = static_cast<Endpoint *>(ctx);
	if ((uint64_t)off + len > e->Space()) {
		e->space_violations++;
		return;
	}
	for (uint32_t i = 0; i < len; i++)
		e->ring[(e->inorder + off + i) % e->rx_cap] = p[i];
}

void
OpRxAdvance(void *ctx, sgw_tcp_conn *, uint32_t n)
{
	auto *e = static_cast<Endpoint *>(ctx);
	for (uint32_t i = 0; i < n; i++) {
		uint64_t pos = e->inorder + i;
		if (e->ring[pos % e->rx_cap] != Pattern(e->peer_seed, pos))
			e->bad_bytes++;
	}
	e->inorder += n;
	if (e->auto_read)
		e->read = e->inorder;
}

uint32_t
OpRxSpace(void *ctx, sgw_tcp_conn *)
{
	return static_cast<Endpoint *>(ctx)->Space();
}

void
OpTxAcked(void *ctx, sgw_tcp_conn *, uint32_t n)
{
	auto *e = static_cast<Endpoint *>(ctx);
	EXPECT_LE(e->acked + n, e->appended);
	e->acked += n;
}

const sgw_tcp_ops kOps = {OpTx, OpRxData, OpRxAdvance, OpRxSpace, OpTxAcked};

void
InitEndpoint(Endpoint *e, const sgw_tcp_conf &conf, uint32_t iss, uint16_t sport,
	     uint16_t dport, uint32_t seed)
{
	ASSERT_EQ(sgw_tcp_stack_init(&e->st, &conf, &kOps, e), 0);
	sgw_tcp_conn_init(&e->st, &e->c, iss, sport, dport);
	e->seed = seed;
}

// What the link does with a segment: deliver after the delay (plus extra), or drop;
// copies: the network duplicates it, each copy arriving that much later again.
struct Verdict {
	bool drop = false;
	uint64_t extra = 0;
	std::vector<uint8_t> then;  // a segment to deliver right after this one
	std::vector<uint64_t> copies;
};

// Two endpoints and a scripted link. A is index 0, B index 1.
class Pair {
 public:
	Endpoint ep[2];
	uint64_t now = 0;
	uint64_t delay[2] = {10 * kMs, 10 * kMs};  // one way, from A and from B
	// script: direction (0: A->B), index of the segment in that direction, the segment
	std::function<Verdict(int, uint32_t, const sgw_tcp_seg &)> script;
	uint32_t count[2] = {0, 0};
	uint64_t dropped[2] = {0, 0};
	uint64_t duplicated[2] = {0, 0};  // copies the link added

	explicit Pair(const sgw_tcp_conf &ca, const sgw_tcp_conf &cb)
	{
		InitEndpoint(&ep[0], ca, 1000000, 40000, 80, 0xA);
		InitEndpoint(&ep[1], cb, 3000000000u, 80, 40000, 0xB);
		ep[0].peer_seed = 0xB;
		ep[1].peer_seed = 0xA;
		for (int i = 0; i < 2; i++)
			ep[i].wire = [this, i](Endpoint *, const uint8_t *b, uint32_t l) {
				Send(i, b, l);
			};
	}

	explicit Pair(const sgw_tcp_conf &c) : Pair(c, c) {}

	struct InFlight {
		uint64_t at;
		uint64_t order;
		int to;
		std::vector<uint8_t> b;
	};
	std::vector<InFlight> q;
	uint64_t order = 0;

	void Send(int from, const uint8_t *b, uint32_t l)
	{
		sgw_tcp_seg s;
		sgw_tcp_seg_parse(b, l, &s, nullptr);
		Verdict v;
		if (script)
			v = script(from, count[from], s);
		count[from]++;
		if (!ep[from].sent.empty())
			ep[from].sent.back().at = now;
		if (v.drop) {
			dropped[from]++;
			return;
		}
		q.push_back({now + delay[from] + v.extra, order++, 1 - from,
			     std::vector<uint8_t>(b, b + l)});
		if (!v.then.empty())
			q.push_back({now + delay[from] + v.extra, order++, 1 - from, v.then});
		for (uint64_t later : v.copies) {
			duplicated[from]++;
			q.push_back({now + delay[from] + v.extra + later, order++, 1 - from,
				     std::vector<uint8_t>(b, b + l)});
		}
	}

	void Deliver(const InFlight &f)
	{
		Endpoint &e = ep[f.to];
		sgw_tcp_seg s;
		ASSERT_EQ(sgw_tcp_seg_parse(f.b.data(), f.b.size(), &s, e.st.parse_ctr),
			  SGW_TCP_PR_OK);
		if (e.c.state == SGW_TCP_CLOSED) {
			// what a caller does with a segment for no connection
			sgw_tcp_seg r;
			uint8_t b[60];
			if (sgw_tcp_rst_for(&s, &r))
				Send(f.to, b, sgw_tcp_seg_build(b, sizeof(b), &r));
			return;
		}
		sgw_tcp_out o;
		sgw_tcp_out_reset(&o);
		sgw_tcp_input(&e.st, &e.c, now, &s, &o);
		e.Apply(o);
	}

	void Fire(int i, unsigned id)
	{
		Endpoint &e = ep[i];
		e.timer[id] = kNever;
		sgw_tcp_out o;
		sgw_tcp_out_reset(&o);
		sgw_tcp_timer(&e.st, &e.c, now, id, &o);
		e.Apply(o);
	}

	// Advance to the next event at or before until; false when there is none.
	bool Step(uint64_t until)
	{
		uint64_t t = kNever;
		size_t qi = SIZE_MAX;
		for (size_t k = 0; k < q.size(); k++)
			if (q[k].at < t || (q[k].at == t && q[k].order < q[qi].order)) {
				t = q[k].at;
				qi = k;
			}
		int ti = -1;
		unsigned tid = 0;
		for (int i = 0; i < 2; i++)
			for (unsigned id = 0; id < SGW_TCP_T__COUNT; id++)
				if (ep[i].timer[id] < t) {
					t = ep[i].timer[id];
					ti = i;
					tid = id;
					qi = SIZE_MAX;
				}
		if (t == kNever || t > until)
			return false;
		now = std::max(now, t);
		if (qi != SIZE_MAX) {
			InFlight f = q[qi];
			q.erase(q.begin() + (long)qi);
			Deliver(f);
		} else {
			Fire(ti, tid);
		}
		return true;
	}

	// Run until nothing is left before until (bounded number of events).
	uint64_t Run(uint64_t until, uint64_t max_events = 2000000)
	{
		uint64_t n = 0;
		while (n < max_events && Step(until))
			n++;
		EXPECT_LT(n, max_events) << "event loop did not settle";
		if (until != kNever && now < until)
			now = until;
		return n;
	}

	// Run until only timers that wait long (TIME-WAIT, idle) remain.
	void RunFor(uint64_t d) { Run(now + d); }

	sgw_tcp_out Call(int i, const std::function<void(Endpoint &, sgw_tcp_out *)> &f)
	{
		sgw_tcp_out o;
		sgw_tcp_out_reset(&o);
		f(ep[i], &o);
		ep[i].Apply(o);
		return o;
	}

	void Listen(int i) { ASSERT_EQ(sgw_tcp_listen(&ep[i].st, &ep[i].c), 0); }

	void Connect(int i)
	{
		Call(i, [this](Endpoint &e, sgw_tcp_out *o) {
			ASSERT_EQ(sgw_tcp_connect(&e.st, &e.c, now, o), 0);
		});
	}

	int Write(int i, uint32_t n)
	{
		int r = 0;
		Call(i, [&](Endpoint &e, sgw_tcp_out *o) {
			e.appended += n;  // in the buffer before the call: it may send at once
			r = sgw_tcp_send(&e.st, &e.c, now, n, o);
			if (r != 0)
				e.appended -= n;
		});
		return r;
	}

	void Shutdown(int i)
	{
		Call(i, [this](Endpoint &e, sgw_tcp_out *o) {
			ASSERT_EQ(sgw_tcp_shutdown(&e.st, &e.c, now, o), 0);
		});
	}

	void Abort(int i)
	{
		Call(i, [this](Endpoint &e, sgw_tcp_out *o) { sgw_tcp_abort(&e.st, &e.c, now, o); });
	}

	void Read(int i, uint64_t n)
	{
		Endpoint &e = ep[i];
		e.read = std::min(e.inorder, e.read + n);
		Call(i, [this](Endpoint &x, sgw_tcp_out *o) {
			sgw_tcp_rx_consumed(&x.st, &x.c, now, o);
		});
	}

	// A opens to B (listening), established both ways.
	void Open()
	{
		Listen(1);
		Connect(0);
		Run(now + 4 * std::max(delay[0], delay[1]) + 100 * kMs);
		ASSERT_EQ(ep[0].c.state, SGW_TCP_ESTABLISHED);
		ASSERT_EQ(ep[1].c.state, SGW_TCP_ESTABLISHED);
	}

	uint64_t Ctr(int i, int c) const { return ep[i].st.ctr[c]; }
};

sgw_tcp_conf
DefConf()
{
	sgw_tcp_conf c;
	sgw_tcp_conf_default(&c);
	return c;
}

sgw_tcp_conf
NoTsConf()
{
	sgw_tcp_conf c = DefConf();
	c.timestamps = 0;
	return c;
}

// ---------------------------------------------------------------- codec

TEST(TcpSeg, BuildParseRoundTrip)
{
	sgw_tcp_seg s{};
	s.sport = 1234;
	s.dport = 80;
	s.seq = 0xdeadbeef;
	s.ack = 0x01020304;
	s.flags = SGW_TCP_F_SYN | SGW_TCP_F_ACK;
	s.win = 29200;
	s.opts = SGW_TCP_O_MSS | SGW_TCP_O_WS | SGW_TCP_O_SACK_PERM | SGW_TCP_O_TS;
	s.mss = 1460;
	s.wscale = 7;
	s.tsval = 111;
	s.tsecr = 222;
	uint8_t b[60];
	uint32_t h = sgw_tcp_seg_build(b, sizeof(b), &s);
	ASSERT_EQ(h, 40u);  // 20 + MSS 4 + SACKOK/TS 12 + WS 4
	// the Linux SYN layout: MSS, SACK-permitted, TS, NOP, WS
	EXPECT_EQ(b[20], 2);
	EXPECT_EQ(b[24], 4);
	EXPECT_EQ(b[26], 8);
	EXPECT_EQ(b[36], 1);
	EXPECT_EQ(b[37], 3);
	sgw_tcp_seg p;
	ASSERT_EQ(sgw_tcp_seg_parse(b, h, &p, nullptr), SGW_TCP_PR_OK);
	EXPECT_EQ(p.sport, 1234);
	EXPECT_EQ(p.dport, 80);
	EXPECT_EQ(p.seq, 0xdeadbeefu);
	EXPECT_EQ(p.ack, 0x01020304u);
	EXPECT_EQ(p.flags, s.flags);
	EXPECT_EQ(p.win, 29200);
	EXPECT_EQ(p.opts, s.opts);
	EXPECT_EQ(p.mss, 1460);
	EXPECT_EQ(p.wscale, 7);
	EXPECT_EQ(p.tsval, 111u);
	EXPECT_EQ(p.tsecr, 222u);
	EXPECT_EQ(p.len, 0u);
	EXPECT_EQ(p.hlen, 40);
}

TEST(TcpSeg, SackBlocksFitIn40Bytes)
{
	sgw_tcp_seg s{};
	s.flags = SGW_TCP_F_ACK;
	s.opts = SGW_TCP_O_TS | SGW_TCP_O_SACK;
	s.n_sack = 4;
	for (uint32_t i = 0; i < 4; i++)
		s.sack[i] = {100 * i + 10, 100 * i + 20};
	EXPECT_EQ(sgw_tcp_opts_len(&s), 40u);  // TS 12 + 3 blocks 28
	uint8_t b[60];
	uint32_t h = sgw_tcp_seg_build(b, sizeof(b), &s);
	sgw_tcp_seg p;
	ASSERT_EQ(sgw_tcp_seg_parse(b, h, &p, nullptr), SGW_TCP_PR_OK);
	ASSERT_EQ(p.n_sack, 3);
	EXPECT_EQ(p.sack[2].left, 210u);
	EXPECT_EQ(p.sack[2].right, 220u);
	s.opts = SGW_TCP_O_SACK;
	EXPECT_EQ(sgw_tcp_opts_len(&s), 36u);  // 4 blocks without TS
	EXPECT_EQ(sgw_tcp_seg_build(b, 30, &s), 0u) << "too small a buffer is refused";
}

TEST(TcpSeg, MalformedCountedByReason)
{
	uint64_t ctr[SGW_TCP_PR__COUNT] = {};
	sgw_tcp_seg p;
	uint8_t b[60] = {};
	EXPECT_EQ(sgw_tcp_seg_parse(b, 19, &p, ctr), SGW_TCP_PR_TRUNC);
	b[12] = 4 << 4;
	EXPECT_EQ(sgw_tcp_seg_parse(b, 20, &p, ctr), SGW_TCP_PR_BAD_DOFF);
	b[12] = 8 << 4;  // 32-byte header in a 24-byte buffer
	EXPECT_EQ(sgw_tcp_seg_parse(b, 24, &p, ctr), SGW_TCP_PR_BAD_DOFF);
	b[12] = 6 << 4;
	b[20] = 2;  // MSS with a length of 3
	b[21] = 3;
	EXPECT_EQ(sgw_tcp_seg_parse(b, 24, &p, ctr), SGW_TCP_PR_OPT_MSS);
	b[20] = 30;  // unknown kind, length 0
	b[21] = 0;
	EXPECT_EQ(sgw_tcp_seg_parse(b, 24, &p, ctr), SGW_TCP_PR_OPT_LEN);
	b[21] = 9;  // past the header
	EXPECT_EQ(sgw_tcp_seg_parse(b, 24, &p, ctr), SGW_TCP_PR_OPT_LEN);
	b[20] = 1;  // NOP NOP NOP then a kind with no length byte
	b[21] = 1;
	b[22] = 1;
	b[23] = 8;
	EXPECT_EQ(sgw_tcp_seg_parse(b, 24, &p, ctr), SGW_TCP_PR_OPT_LEN);
	b[12] = 8 << 4;
	b[20] = 5;  // SACK of 2 + 7
	b[21] = 9;
	EXPECT_EQ(sgw_tcp_seg_parse(b, 32, &p, ctr), SGW_TCP_PR_OPT_SACK);
	b[20] = 8;  // TS of 8
	b[21] = 8;
	EXPECT_EQ(sgw_tcp_seg_parse(b, 32, &p, ctr), SGW_TCP_PR_OPT_TS);
	b[20] = 3;  // WS of 4
	b[21] = 4;
	EXPECT_EQ(sgw_tcp_seg_parse(b, 32, &p, ctr), SGW_TCP_PR_OPT_WS);
	b[20] = 4;  // SACK-permitted of 3
	b[21] = 3;
	EXPECT_EQ(sgw_tcp_seg_parse(b, 32, &p, ctr), SGW_TCP_PR_OPT_SACK_PERM);
	b[20] = 3;  // WS 20 is taken as 14, EOL ends the walk
	b[21] = 3;
	b[22] = 20;
	b[23] = 0;
	b[24] = 99;
	EXPECT_EQ(sgw_tcp_seg_parse(b, 40, &p, ctr), SGW_TCP_PR_OK);
	EXPECT_EQ(p.wscale, 14);
	EXPECT_EQ(p.len, 8u);
	EXPECT_EQ(ctr[SGW_TCP_PR_TRUNC], 1u);
	EXPECT_EQ(ctr[SGW_TCP_PR_BAD_DOFF], 2u);
	EXPECT_EQ(ctr[SGW_TCP_PR_OPT_LEN], 3u);
	EXPECT_EQ(ctr[SGW_TCP_PR_OPT_MSS], 1u);
	EXPECT_EQ(ctr[SGW_TCP_PR_OPT_SACK], 1u);
	EXPECT_EQ(ctr[SGW_TCP_PR_OPT_TS], 1u);
	EXPECT_EQ(ctr[SGW_TCP_PR_OPT_WS], 1u);
	EXPECT_EQ(ctr[SGW_TCP_PR_OPT_SACK_PERM], 1u);
	EXPECT_STREQ(sgw_tcp_parse_reason_name(SGW_TCP_PR_OPT_TS), "opt_ts");
}

// Every truncation of a valid segment parses or fails by reason, never reads past it.
TEST(TcpSeg, EveryPrefixIsSafe)
{
	sgw_tcp_seg s{};
	s.flags = SGW_TCP_F_ACK;
	s.opts = SGW_TCP_O_TS | SGW_TCP_O_SACK;
	s.n_sack = 2;
	uint8_t b[60];
	uint32_t h = sgw_tcp_seg_build(b, sizeof(b), &s);
	for (uint32_t l = 0; l <= h; l++) {
		std::vector<uint8_t> v(b, b + l);  // exact size: ASan catches an over-read
		sgw_tcp_seg p;
		int r = sgw_tcp_seg_parse(v.data(), v.size(), &p, nullptr);
		EXPECT_EQ(r == SGW_TCP_PR_OK, l == h) << l;
	}
}

TEST(TcpSeg, ChecksumKnownAnswer)
{
	// A SYN from 10.0.0.1:1234 to 10.0.0.2:80, seq 1, window 65535, no options.
	sgw_tcp_seg s{};
	s.sport = 1234;
	s.dport = 80;
	s.seq = 1;
	s.flags = SGW_TCP_F_SYN;
	s.win = 65535;
	uint8_t b[20];
	ASSERT_EQ(sgw_tcp_seg_build(b, sizeof(b), &s), 20u);
	const uint8_t src[4] = {10, 0, 0, 1}, dst[4] = {10, 0, 0, 2};
	uint16_t c = sgw_tcp_csum_ipv4(src, dst, b, 20, nullptr, 0);
	// by hand: pseudo 0a00+0001+0a00+0002+0006+0014 = 0x141d; header 04d2+0050+0000+
	// 0001+0000+0000+5002+ffff+0000+0000 = 0x15524 -> 0x5525; sum 0x6942; ~ = 0x96bd
	EXPECT_EQ(c, 0x96bd);
	b[16] = (uint8_t)(c >> 8);
	b[17] = (uint8_t)c;
	EXPECT_EQ(sgw_tcp_csum_ipv4(src, dst, b, 20, nullptr, 0), 0) << "verifies to 0";
	// with an odd-length payload, verified the same way
	const uint8_t data[3] = {1, 2, 3};
	b[16] = b[17] = 0;
	c = sgw_tcp_csum_ipv4(src, dst, b, 20, data, 3);
	b[16] = (uint8_t)(c >> 8);
	b[17] = (uint8_t)c;
	EXPECT_EQ(sgw_tcp_csum_ipv4(src, dst, b, 20, data, 3), 0);
	uint8_t s6[16] = {0x20, 0x01, 0xd, 0xb8}, d6[16] = {0x20, 0x01, 0xd, 0xb8, 0, 0, 0, 1};
	b[16] = b[17] = 0;
	c = sgw_tcp_csum_ipv6(s6, d6, b, 20, data, 3);
	b[16] = (uint8_t)(c >> 8);
	b[17] = (uint8_t)c;
	EXPECT_EQ(sgw_tcp_csum_ipv6(s6, d6, b, 20, data, 3), 0);
}

TEST(TcpSeg, RstForNoConnection)
{
	sgw_tcp_seg in{}, r;
	in.sport = 5;
	in.dport = 6;
	in.seq = 100;
	in.len = 10;
	in.flags = SGW_TCP_F_SYN;
	ASSERT_EQ(sgw_tcp_rst_for(&in, &r), 1);
	EXPECT_EQ(r.flags, SGW_TCP_F_RST | SGW_TCP_F_ACK);
	EXPECT_EQ(r.seq, 0u);
	EXPECT_EQ(r.ack, 111u);
	EXPECT_EQ(r.sport, 6);
	in.flags = SGW_TCP_F_ACK;
	in.ack = 777;
	ASSERT_EQ(sgw_tcp_rst_for(&in, &r), 1);
	EXPECT_EQ(r.flags, SGW_TCP_F_RST);
	EXPECT_EQ(r.seq, 777u);
	in.flags = SGW_TCP_F_RST;
	EXPECT_EQ(sgw_tcp_rst_for(&in, &r), 0);
}

// ---------------------------------------------------------------- pair: core

TEST(TcpPair, HandshakeNegotiatesOptions)
{
	Pair p(DefConf());
	p.Open();
	for (auto &e : p.ep) {
		EXPECT_TRUE(e.c.flags & SGW_TCP_CF_TS);
		EXPECT_TRUE(e.c.flags & SGW_TCP_CF_SACK);
		EXPECT_TRUE(e.c.flags & SGW_TCP_CF_WS);
		EXPECT_EQ(e.c.snd_mss, 1460 - 12);
		EXPECT_EQ(e.c.rcv_wscale, 7);  // 4 MB buffer: 4 MB >> 7 < 65536
		EXPECT_EQ(e.c.snd_wscale, 7);
		EXPECT_TRUE(e.events & SGW_TCP_EV_CONNECTED);
		EXPECT_FALSE(e.Armed(SGW_TCP_T_RTX));
	}
	// SYN, SYN-ACK, ACK
	ASSERT_EQ(p.ep[0].sent.size(), 2u);
	ASSERT_EQ(p.ep[1].sent.size(), 1u);
	EXPECT_EQ(p.ep[0].sent[0].s.flags, SGW_TCP_F_SYN);
	EXPECT_EQ(p.ep[1].sent[0].s.flags, SGW_TCP_F_SYN | SGW_TCP_F_ACK);
	EXPECT_EQ(p.ep[1].sent[0].s.ack, 1000001u);
	EXPECT_EQ(p.ep[0].sent[1].s.flags, SGW_TCP_F_ACK);
	// the handshake gave one RTT sample each way (20 ms)
	EXPECT_NEAR(p.ep[0].c.srtt_us, 20000, 1000);
}

TEST(TcpPair, OptionsOnlyWhenBothOffer)
{
	sgw_tcp_conf a = DefConf(), b = DefConf();
	b.timestamps = 0;
	b.sack = 0;
	b.wscale = 0;
	Pair p(a, b);
	p.Open();
	for (auto &e : p.ep) {
		EXPECT_FALSE(e.c.flags & (SGW_TCP_CF_TS | SGW_TCP_CF_SACK | SGW_TCP_CF_WS));
		EXPECT_EQ(e.c.rcv_wscale, 0);
		EXPECT_EQ(e.c.snd_mss, 1460);
	}
	// the SYN-ACK answered only the MSS
	EXPECT_EQ(p.ep[1].sent[0].s.opts, SGW_TCP_O_MSS);
}

void
TransferAndCheck(Pair &p, uint64_t bytes, uint64_t horizon)
{
	p.Write(0, (uint32_t)bytes);
	p.Run(p.now + horizon);
	EXPECT_EQ(p.ep[1].inorder, bytes);
	EXPECT_EQ(p.ep[1].bad_bytes, 0u);
	EXPECT_EQ(p.ep[1].space_violations, 0u);
	EXPECT_EQ(p.ep[0].acked, bytes);
}

// a bytes from A and b from B at once; both arrive exact within horizon.
void
BothWaysAndCheck(Pair &p, uint32_t a, uint32_t b, uint64_t horizon)
{
	p.Write(0, a);
	p.Write(1, b);
	p.RunFor(horizon);
	EXPECT_EQ(p.ep[1].inorder, a);
	EXPECT_EQ(p.ep[0].inorder, b);
	EXPECT_EQ(p.ep[0].bad_bytes + p.ep[1].bad_bytes, 0u);
	EXPECT_EQ(p.ep[0].space_violations + p.ep[1].space_violations, 0u);
	EXPECT_EQ(p.ep[0].acked, a);
	EXPECT_EQ(p.ep[1].acked, b);
}

TEST(TcpPair, BulkDataByteExact)
{
	Pair p(DefConf());
	p.Open();
	TransferAndCheck(p, 3000000, 20 * kSec);
	EXPECT_EQ(p.Ctr(0, SGW_TCP_C_RETX_SEGS), 0u);
	EXPECT_EQ(p.Ctr(0, SGW_TCP_C_RTO), 0u);
	// delayed ACKs: about one ACK per two segments
	uint64_t data = p.Ctr(0, SGW_TCP_C_DATA_SEGS_OUT);
	EXPECT_GE(data, 3000000u / 1448);
	EXPECT_LE(p.Ctr(1, SGW_TCP_C_SEGS_OUT), data / 2 + 10);
	EXPECT_FALSE(p.ep[0].Armed(SGW_TCP_T_RTX));
}

TEST(TcpPair, BothDirectionsAtOnce)
{
	Pair p(DefConf());
	p.Open();
	p.Write(0, 500000);
	p.Write(1, 700000);
	p.Run(p.now + 10 * kSec);
	EXPECT_EQ(p.ep[1].inorder, 500000u);
	EXPECT_EQ(p.ep[0].inorder, 700000u);
	EXPECT_EQ(p.ep[0].bad_bytes + p.ep[1].bad_bytes, 0u);
}

TEST(TcpPair, SlowStartGrowsCwnd)
{
	Pair p(NoTsConf());
	p.Open();
	uint32_t iw = p.ep[0].c.cwnd;
	EXPECT_EQ(iw, 10u * 1460);
	p.Write(0, 10 * 1460);
	p.RunFor(100 * kMs);
	// RFC 3465 L = 2: each delayed ACK of 2 segments adds 2 MSS
	EXPECT_EQ(p.ep[0].c.cwnd, iw + 10u * 1460);
}

// ---------------------------------------------------------------- close

TEST(TcpPair, OrderlyCloseAndTimeWait)
{
	Pair p(DefConf());
	p.Open();
	p.Write(0, 10000);
	p.Shutdown(0);
	EXPECT_EQ(p.ep[0].c.state, SGW_TCP_FIN_WAIT_1);
	p.RunFor(100 * kMs);
	EXPECT_EQ(p.ep[1].inorder, 10000u);
	EXPECT_TRUE(p.ep[1].events & SGW_TCP_EV_PEER_FIN);
	EXPECT_EQ(p.ep[1].c.state, SGW_TCP_CLOSE_WAIT);
	EXPECT_EQ(p.ep[0].c.state, SGW_TCP_FIN_WAIT_2);
	// half-close: B still sends, A still receives
	p.Write(1, 20000);
	p.RunFor(100 * kMs);
	EXPECT_EQ(p.ep[0].inorder, 20000u);
	EXPECT_EQ(p.ep[0].bad_bytes, 0u);
	p.Shutdown(1);
	EXPECT_EQ(p.ep[1].c.state, SGW_TCP_LAST_ACK);
	p.RunFor(100 * kMs);
	EXPECT_EQ(p.ep[1].c.state, SGW_TCP_CLOSED);
	EXPECT_TRUE(p.ep[1].events & SGW_TCP_EV_CLOSED);
	EXPECT_EQ(p.ep[1].NextTimer(), kNever) << "CLOSED cancels every timer";
	EXPECT_EQ(p.ep[0].c.state, SGW_TCP_TIME_WAIT);
	ASSERT_TRUE(p.ep[0].Armed(SGW_TCP_T_WAIT));
	EXPECT_EQ(p.ep[0].timer[SGW_TCP_T_WAIT], p.now - 100 * kMs + 10 * kMs + 60 * kSec);
	// TIME-WAIT expiry after 2 MSL
	p.RunFor(59 * kSec);
	EXPECT_EQ(p.ep[0].c.state, SGW_TCP_TIME_WAIT);
	p.RunFor(2 * kSec);
	EXPECT_EQ(p.ep[0].c.state, SGW_TCP_CLOSED);
	EXPECT_TRUE(p.ep[0].events & SGW_TCP_EV_CLOSED);
	EXPECT_FALSE(p.ep[0].events & SGW_TCP_EV_RESET);
}

TEST(TcpPair, TimeWaitAcksRetransmittedFinAndRestarts)
{
	Pair p(DefConf());
	p.Open();
	p.Shutdown(0);
	p.RunFor(100 * kMs);
	// B's FIN reaches A; A's ACK of it is lost, B retransmits the FIN
	uint32_t from_a = p.count[0];
	p.script = [from_a](int dir, uint32_t i, const sgw_tcp_seg &) {
		Verdict v;
		v.drop = dir == 0 && i == from_a;
		return v;
	};
	p.Shutdown(1);
	p.RunFor(50 * kMs);
	ASSERT_EQ(p.ep[0].c.state, SGW_TCP_TIME_WAIT);
	uint64_t tw1 = p.ep[0].timer[SGW_TCP_T_WAIT];
	p.RunFor(2 * kSec);
	EXPECT_EQ(p.ep[1].c.state, SGW_TCP_CLOSED) << "the second ACK of the FIN got through";
	EXPECT_GT(p.ep[0].timer[SGW_TCP_T_WAIT], tw1) << "2 MSL restarted";
	EXPECT_EQ(p.dropped[0], 1u);
}

TEST(TcpPair, SimultaneousClose)
{
	Pair p(DefConf());
	p.Open();
	p.Shutdown(0);
	p.Shutdown(1);
	EXPECT_EQ(p.ep[0].c.state, SGW_TCP_FIN_WAIT_1);
	EXPECT_EQ(p.ep[1].c.state, SGW_TCP_FIN_WAIT_1);
	p.RunFor(15 * kMs);  // the FINs crossed: each got the other's before its ACK
	EXPECT_EQ(p.ep[0].c.state, SGW_TCP_CLOSING);
	EXPECT_EQ(p.ep[1].c.state, SGW_TCP_CLOSING);
	p.RunFor(15 * kMs);
	EXPECT_EQ(p.ep[0].c.state, SGW_TCP_TIME_WAIT);
	EXPECT_EQ(p.ep[1].c.state, SGW_TCP_TIME_WAIT);
	p.RunFor(61 * kSec);
	EXPECT_EQ(p.ep[0].c.state, SGW_TCP_CLOSED);
	EXPECT_EQ(p.ep[1].c.state, SGW_TCP_CLOSED);
}

TEST(TcpPair, SimultaneousOpen)
{
	Pair p(DefConf());
	p.Connect(0);
	p.Connect(1);
	p.RunFor(200 * kMs);
	EXPECT_EQ(p.ep[0].c.state, SGW_TCP_ESTABLISHED);
	EXPECT_EQ(p.ep[1].c.state, SGW_TCP_ESTABLISHED);
	EXPECT_TRUE(p.ep[0].c.flags & SGW_TCP_CF_TS);
	TransferAndCheck(p, 100000, 2 * kSec);
}

TEST(TcpPair, FinQueuedDuringHandshake)
{
	Pair p(DefConf());
	p.Listen(1);
	p.Connect(0);
	p.Write(0, 5000);
	p.Shutdown(0);
	EXPECT_EQ(p.ep[0].c.state, SGW_TCP_SYN_SENT);
	p.RunFor(200 * kMs);
	EXPECT_EQ(p.ep[1].inorder, 5000u);
	EXPECT_EQ(p.ep[1].c.state, SGW_TCP_CLOSE_WAIT);
	EXPECT_EQ(p.ep[0].c.state, SGW_TCP_FIN_WAIT_2);
}

// ---------------------------------------------------------------- RST

TEST(TcpPair, ConnectRefused)
{
	Pair p(DefConf());
	// B is CLOSED: the harness answers as a caller with no connection would
	p.ep[1].wire = nullptr;
	p.Connect(0);
	const Parsed &syn = p.ep[0].sent[0];
	sgw_tcp_seg rst;
	ASSERT_EQ(sgw_tcp_rst_for(&syn.s, &rst), 1);
	uint8_t b[60];
	uint32_t h = sgw_tcp_seg_build(b, sizeof(b), &rst);
	p.q.clear();
	p.Send(1, b, h);
	p.RunFor(100 * kMs);
	EXPECT_EQ(p.ep[0].c.state, SGW_TCP_CLOSED);
	EXPECT_TRUE(p.ep[0].events & SGW_TCP_EV_RESET);
	EXPECT_EQ(p.ep[0].reason, SGW_TCP_RR_REFUSED);
	EXPECT_EQ(p.ep[0].NextTimer(), kNever);
}

TEST(TcpPair, AbortResetsPeerInEveryState)
{
	// for each state of B reachable with A still synchronized: A aborts, B resets
	struct Case {
		const char *name;
		std::function<void(Pair &)> setup;
		int state;
	};
	std::vector<Case> cases = {
	    {"established", [](Pair &) {}, SGW_TCP_ESTABLISHED},
	    {"close-wait", [](Pair &p) { p.Shutdown(0); p.RunFor(100 * kMs); },
	     SGW_TCP_CLOSE_WAIT},
	    {"fin-wait-2",
	     [](Pair &p) {
		     p.Shutdown(1);
		     p.RunFor(100 * kMs);
	     },
	     SGW_TCP_FIN_WAIT_2},
	    {"fin-wait-1",
	     [](Pair &p) {
		     p.script = [](int dir, uint32_t, const sgw_tcp_seg &) {
			     Verdict v;
			     v.drop = dir == 1;  // B's FIN and A's ACKs: B stays in FIN-WAIT-1
			     return v;
		     };
		     p.Shutdown(1);
		     p.RunFor(5 * kMs);
		     p.script = nullptr;
	     },
	     SGW_TCP_FIN_WAIT_1},
	    {"last-ack",
	     [](Pair &p) {
		     p.Shutdown(0);
		     p.RunFor(100 * kMs);
		     p.script = [](int dir, uint32_t, const sgw_tcp_seg &) {
			     Verdict v;
			     v.drop = dir == 1;
			     return v;
		     };
		     p.Shutdown(1);
		     p.RunFor(5 * kMs);
		     p.script = nullptr;
	     },
	     SGW_TCP_LAST_ACK},
	};
	for (auto &k : cases) {
		SCOPED_TRACE(k.name);
		Pair p(DefConf());
		p.Open();
		k.setup(p);
		ASSERT_EQ(p.ep[1].c.state, k.state) << sgw_tcp_state_name(p.ep[1].c.state);
		p.Abort(0);
		EXPECT_EQ(p.ep[0].c.state, SGW_TCP_CLOSED);
		p.RunFor(50 * kMs);
		EXPECT_EQ(p.ep[1].c.state, SGW_TCP_CLOSED);
		EXPECT_TRUE(p.ep[1].events & SGW_TCP_EV_RESET);
		EXPECT_EQ(p.ep[1].reason, SGW_TCP_RR_PEER);
		EXPECT_EQ(p.ep[1].NextTimer(), kNever);
	}
}

// ---------------------------------------------------------------- drill

// One endpoint against hand-written segments (packetdrill style).
class Drill {
 public:
	Endpoint e;
	uint64_t now = 1 * kSec;
	size_t seen = 0;
	static constexpr uint32_t kIss = 1000;
	static constexpr uint32_t kPeerIss = 5000;

	explicit Drill(const sgw_tcp_conf &conf) { InitEndpoint(&e, conf, kIss, 80, 9999, 0xD); }

	sgw_tcp_out In(uint8_t flags, uint32_t seq, uint32_t ack, uint16_t win, uint32_t len = 0,
		       uint8_t opts = 0, uint32_t tsval = 0, uint32_t tsecr = 0, uint16_t mss = 0,
		       uint8_t ws = 0)
	{
		sgw_tcp_seg s{};
		s.sport = 9999;
		s.dport = 80;
		s.seq = seq;
		s.ack = ack;
		s.flags = flags;
		s.win = win;
		s.opts = opts;
		s.tsval = tsval;
		s.tsecr = tsecr;
		s.mss = mss;
		s.wscale = ws;
		std::vector<uint8_t> b(60);
		uint32_t h = sgw_tcp_seg_build(b.data(), b.size(), &s);
		b.resize(h);
		for (uint32_t i = 0; i < len; i++)
			b.push_back(Pattern(0xE, seq - kPeerIss - 1 + i));
		sgw_tcp_seg p;
		EXPECT_EQ(sgw_tcp_seg_parse(b.data(), b.size(), &p, nullptr), SGW_TCP_PR_OK);
		sgw_tcp_out o;
		sgw_tcp_out_reset(&o);
		sgw_tcp_input(&e.st, &e.c, now, &p, &o);
		e.Apply(o);
		return o;
	}

	// The next emitted segment must be exactly this.
	void Out(uint8_t flags, uint32_t seq, uint32_t ack, int win = -1, uint32_t len = 0,
		 int opts = -1)
	{
		ASSERT_LT(seen, e.sent.size()) << "expected a segment, none emitted";
		const sgw_tcp_seg &s = e.sent[seen++].s;
		EXPECT_EQ(s.flags, flags);
		EXPECT_EQ(s.seq, seq);
		EXPECT_EQ(s.ack, ack);
		if (win >= 0) {
			EXPECT_EQ(s.win, win);
		}
		EXPECT_EQ(s.len, len);
		if (opts >= 0) {
			EXPECT_EQ(s.opts, opts);
		}
	}

	const sgw_tcp_seg &Last() { return e.sent.back().s; }

	void NoMore() { EXPECT_EQ(seen, e.sent.size()) << "unexpected segment emitted"; }

	void Fire(unsigned id)
	{
		ASSERT_TRUE(e.Armed(id));
		now = std::max(now, e.timer[id]);
		e.timer[id] = kNever;
		sgw_tcp_out o;
		sgw_tcp_out_reset(&o);
		sgw_tcp_timer(&e.st, &e.c, now, id, &o);
		e.Apply(o);
	}

	// passive open without options; after it: rcv_nxt kPeerIss + 1, snd_nxt kIss + 1
	void Establish(uint16_t peer_win = 65535, uint8_t peer_opts = SGW_TCP_O_MSS)
	{
		e.peer_seed = 0xE;
		ASSERT_EQ(sgw_tcp_listen(&e.st, &e.c), 0);
		In(SGW_TCP_F_SYN, kPeerIss, 0, peer_win, 0, peer_opts, 0, 0, 1000);
		Out(SGW_TCP_F_SYN | SGW_TCP_F_ACK, kIss, kPeerIss + 1, 65535, 0, peer_opts);
		In(SGW_TCP_F_ACK, kPeerIss + 1, kIss + 1, peer_win);
		ASSERT_EQ(e.c.state, SGW_TCP_ESTABLISHED);
		NoMore();
	}

	void Write(uint32_t n)
	{
		sgw_tcp_out o;
		sgw_tcp_out_reset(&o);
		e.appended += n;
		ASSERT_EQ(sgw_tcp_send(&e.st, &e.c, now, n, &o), 0);
		e.Apply(o);
	}
};

sgw_tcp_conf
SmallConf()
{
	sgw_tcp_conf c = DefConf();
	c.timestamps = 0;
	c.sack = 1;
	c.wscale = 0;
	c.rcv_buf = 65535;
	return c;
}

TEST(TcpDrill, PassiveOpenAndDataAck)
{
	Drill d(SmallConf());
	d.e.SetRxCap(65535);
	d.Establish();
	// one segment: delayed ACK; the second: ACK at once
	d.In(SGW_TCP_F_ACK | SGW_TCP_F_PSH, 5001, 1001, 65535, 500);
	d.NoMore();
	EXPECT_TRUE(d.e.Armed(SGW_TCP_T_DELACK));
	EXPECT_EQ(d.e.timer[SGW_TCP_T_DELACK], d.now + 40 * kMs);
	// receiver SWS: the right edge moves by min(MSS, buffer / 2) or not at all
	d.In(SGW_TCP_F_ACK, 5501, 1001, 65535, 500);
	d.Out(SGW_TCP_F_ACK, 1001, 6001, 65535 - 1000);
	EXPECT_FALSE(d.e.Armed(SGW_TCP_T_DELACK));
	// a third: the delayed-ACK timer sends it
	d.In(SGW_TCP_F_ACK, 6001, 1001, 65535, 100);
	d.NoMore();
	d.Fire(SGW_TCP_T_DELACK);
	d.Out(SGW_TCP_F_ACK, 1001, 6101, 65535 - 1100);
	// one more full segment moves the edge: all the space is offered again
	d.In(SGW_TCP_F_ACK, 6101, 1001, 65535, 500);
	d.In(SGW_TCP_F_ACK, 6601, 1001, 65535, 500);
	d.Out(SGW_TCP_F_ACK, 1001, 7101, 65535);
	EXPECT_EQ(d.e.inorder, 2100u);
	EXPECT_EQ(d.e.bad_bytes, 0u);
}

TEST(TcpDrill, ListenAnswersAckWithRstAndIgnoresRst)
{
	Drill d(SmallConf());
	ASSERT_EQ(sgw_tcp_listen(&d.e.st, &d.e.c), 0);
	d.In(SGW_TCP_F_ACK, 77, 4242, 100);
	d.Out(SGW_TCP_F_RST, 4242, 0);
	d.In(SGW_TCP_F_RST, 77, 0, 0);
	d.In(SGW_TCP_F_FIN, 77, 0, 0);
	d.NoMore();
	EXPECT_EQ(d.e.c.state, SGW_TCP_LISTEN);
	EXPECT_EQ(d.e.st.ctr[SGW_TCP_C_LISTEN_DROP], 3u);
}

TEST(TcpDrill, SynRcvdRetransmitsSynAckAndAnswersDupSyn)
{
	Drill d(SmallConf());
	ASSERT_EQ(sgw_tcp_listen(&d.e.st, &d.e.c), 0);
	d.In(SGW_TCP_F_SYN, 5000, 0, 65535, 0, SGW_TCP_O_MSS, 0, 0, 1000);
	d.Out(SGW_TCP_F_SYN | SGW_TCP_F_ACK, 1000, 5001);
	EXPECT_EQ(d.e.timer[SGW_TCP_T_RTX], d.now + 1 * kSec);
	d.In(SGW_TCP_F_SYN, 5000, 0, 65535, 0, SGW_TCP_O_MSS, 0, 0, 1000);
	d.Out(SGW_TCP_F_SYN | SGW_TCP_F_ACK, 1000, 5001);
	d.Fire(SGW_TCP_T_RTX);
	d.Out(SGW_TCP_F_SYN | SGW_TCP_F_ACK, 1000, 5001);
	EXPECT_EQ(d.e.timer[SGW_TCP_T_RTX], d.now + 2 * kSec) << "backed off";
	// an ACK for something we never sent: RST, the connection stays
	d.In(SGW_TCP_F_ACK, 5001, 3000, 65535);
	d.Out(SGW_TCP_F_RST, 3000, 0);
	EXPECT_EQ(d.e.c.state, SGW_TCP_SYN_RCVD);
	// RST in window but not at rcv_nxt: challenge ACK; exact: reset
	d.In(SGW_TCP_F_RST, 5100, 0, 0);
	d.Out(SGW_TCP_F_ACK, 1001, 5001);
	EXPECT_EQ(d.e.c.state, SGW_TCP_SYN_RCVD);
	d.In(SGW_TCP_F_RST, 5001, 0, 0);
	EXPECT_EQ(d.e.c.state, SGW_TCP_CLOSED);
	EXPECT_EQ(d.e.reason, SGW_TCP_RR_PEER);
	d.NoMore();
}

TEST(TcpDrill, SynSentGivesUpAfterRetries)
{
	sgw_tcp_conf c = SmallConf();
	c.syn_retries = 2;
	Drill d(c);
	sgw_tcp_out o;
	sgw_tcp_out_reset(&o);
	ASSERT_EQ(sgw_tcp_connect(&d.e.st, &d.e.c, d.now, &o), 0);
	d.e.Apply(o);
	d.Out(SGW_TCP_F_SYN, 1000, 0, 65535, 0, SGW_TCP_O_MSS | SGW_TCP_O_SACK_PERM);
	uint64_t t0 = d.now;
	d.Fire(SGW_TCP_T_RTX);
	d.Out(SGW_TCP_F_SYN, 1000, 0);
	EXPECT_EQ(d.now, t0 + 1 * kSec);
	d.Fire(SGW_TCP_T_RTX);
	d.Out(SGW_TCP_F_SYN, 1000, 0);
	EXPECT_EQ(d.now, t0 + 3 * kSec);
	// an unacceptable SYN-ACK: RST; a RST without an ACK: ignored
	d.In(SGW_TCP_F_SYN | SGW_TCP_F_ACK, 5000, 999, 100);
	d.Out(SGW_TCP_F_RST, 999, 0);
	d.In(SGW_TCP_F_RST, 5000, 0, 0);
	EXPECT_EQ(d.e.c.state, SGW_TCP_SYN_SENT);
	d.Fire(SGW_TCP_T_RTX);
	EXPECT_EQ(d.now, t0 + 7 * kSec);
	EXPECT_EQ(d.e.c.state, SGW_TCP_CLOSED);
	EXPECT_EQ(d.e.reason, SGW_TCP_RR_TIMEOUT);
	d.NoMore();
}

TEST(TcpDrill, Rfc5961ChallengeAcks)
{
	Drill d(SmallConf());
	d.Establish();
	// SYN in a synchronized state: challenge ACK, nothing else
	d.In(SGW_TCP_F_SYN, 5001, 0, 100);
	d.Out(SGW_TCP_F_ACK, 1001, 5001);
	// RST in window, not exact: challenge ACK
	d.In(SGW_TCP_F_RST, 5003, 0, 0);
	d.Out(SGW_TCP_F_ACK, 1001, 5001);
	// RST out of window: silently dropped
	d.In(SGW_TCP_F_RST, 5001 + 70000, 0, 0);
	d.NoMore();
	// ACK of data never sent: ACK back, dropped
	d.In(SGW_TCP_F_ACK, 5001, 1500, 100, 10);
	d.Out(SGW_TCP_F_ACK, 1001, 5001);
	EXPECT_EQ(d.e.inorder, 0u) << "its data was not taken";
	// ACK far below snd_una - MAX.SND.WND: challenge ACK
	d.In(SGW_TCP_F_ACK, 5001, 1001 - 200000, 100, 10);
	d.Out(SGW_TCP_F_ACK, 1001, 5001);
	EXPECT_EQ(d.e.st.ctr[SGW_TCP_C_CHALLENGE_ACK], 3u);
	EXPECT_EQ(d.e.c.state, SGW_TCP_ESTABLISHED);
	// the exact RST resets
	d.In(SGW_TCP_F_RST, 5001, 0, 0);
	EXPECT_EQ(d.e.c.state, SGW_TCP_CLOSED);
	d.NoMore();
}

// RST in CLOSING and TIME-WAIT (the other states are in the pair tests above).
TEST(TcpDrill, RstInClosingAndTimeWait)
{
	for (int tw = 0; tw < 2; tw++) {
		SCOPED_TRACE(tw ? "time-wait" : "closing");
		Drill d(SmallConf());
		d.Establish();
		sgw_tcp_out o;
		sgw_tcp_out_reset(&o);
		ASSERT_EQ(sgw_tcp_shutdown(&d.e.st, &d.e.c, d.now, &o), 0);
		d.e.Apply(o);
		d.Out(SGW_TCP_F_ACK | SGW_TCP_F_FIN, 1001, 5001);
		// the peer's FIN crosses ours: CLOSING; with our FIN acked: TIME-WAIT
		d.In(SGW_TCP_F_ACK | SGW_TCP_F_FIN, 5001, tw ? 1002 : 1001, 65535);
		d.Out(SGW_TCP_F_ACK, 1002, 5002);
		ASSERT_EQ(d.e.c.state, tw ? SGW_TCP_TIME_WAIT : SGW_TCP_CLOSING);
		// in window but not exact: challenge ACK; exact: closed
		d.In(SGW_TCP_F_RST, 5010, 0, 0);
		d.Out(SGW_TCP_F_ACK, 1002, 5002);
		d.In(SGW_TCP_F_RST, 5002, 0, 0);
		EXPECT_EQ(d.e.c.state, SGW_TCP_CLOSED);
		EXPECT_TRUE(d.e.events & SGW_TCP_EV_CLOSED);
		EXPECT_EQ(d.e.NextTimer(), kNever);
		d.NoMore();
	}
}

TEST(TcpDrill, TimeWaitNewSynIsReuse)
{
	Drill d(SmallConf());
	d.Establish();
	sgw_tcp_out o;
	sgw_tcp_out_reset(&o);
	sgw_tcp_shutdown(&d.e.st, &d.e.c, d.now, &o);
	d.e.Apply(o);
	d.In(SGW_TCP_F_ACK | SGW_TCP_F_FIN, 5001, 1002, 65535);
	ASSERT_EQ(d.e.c.state, SGW_TCP_TIME_WAIT);
	// an old SYN (below rcv_nxt): ACKed; a new one: handed back to the caller
	d.seen = d.e.sent.size();
	sgw_tcp_out r = d.In(SGW_TCP_F_SYN, 4000, 0, 65535);
	EXPECT_FALSE(r.events & SGW_TCP_EV_TW_REUSE);
	d.Out(SGW_TCP_F_ACK, 1002, 5002);
	r = d.In(SGW_TCP_F_SYN, 90000, 0, 65535);
	EXPECT_TRUE(r.events & SGW_TCP_EV_TW_REUSE);
	d.NoMore();
}

TEST(TcpDrill, OutOfOrderSackAndFill)
{
	Drill d(SmallConf());
	d.e.SetRxCap(65535);
	d.Establish(65535, SGW_TCP_O_MSS | SGW_TCP_O_SACK_PERM);
	// hole at 5001..5101; two segments beyond it
	d.In(SGW_TCP_F_ACK, 5101, 1001, 65535, 100);
	d.Out(SGW_TCP_F_ACK, 1001, 5001, -1, 0, SGW_TCP_O_SACK);
	EXPECT_EQ(d.Last().n_sack, 1);
	EXPECT_EQ(d.Last().sack[0].left, 5101u);
	EXPECT_EQ(d.Last().sack[0].right, 5201u);
	d.In(SGW_TCP_F_ACK, 5301, 1001, 65535, 100);
	d.Out(SGW_TCP_F_ACK, 1001, 5001, -1, 0, SGW_TCP_O_SACK);
	ASSERT_EQ(d.Last().n_sack, 2);
	EXPECT_EQ(d.Last().sack[0].left, 5301u) << "the newest block first";
	EXPECT_EQ(d.Last().sack[1].left, 5101u);
	// fill the first hole: in order to 5201, one block left, ACK at once
	d.In(SGW_TCP_F_ACK, 5001, 1001, 65535, 100);
	d.Out(SGW_TCP_F_ACK, 1001, 5201, -1, 0, SGW_TCP_O_SACK);
	EXPECT_EQ(d.e.inorder, 200u);
	d.In(SGW_TCP_F_ACK, 5201, 1001, 65535, 100);
	d.Out(SGW_TCP_F_ACK, 1001, 5401, -1, 0, 0);
	EXPECT_EQ(d.e.inorder, 400u);
	EXPECT_EQ(d.e.bad_bytes, 0u);
	EXPECT_EQ(d.e.c.ooo_n, 0);
}

TEST(TcpDrill, OutOfOrderFinWaitsForTheData)
{
	Drill d(SmallConf());
	d.Establish();
	d.In(SGW_TCP_F_ACK | SGW_TCP_F_FIN, 5101, 1001, 65535, 100);
	d.Out(SGW_TCP_F_ACK, 1001, 5001);
	EXPECT_EQ(d.e.c.state, SGW_TCP_ESTABLISHED);
	d.In(SGW_TCP_F_ACK, 5001, 1001, 65535, 100);
	d.Out(SGW_TCP_F_ACK, 1001, 5202);
	EXPECT_EQ(d.e.c.state, SGW_TCP_CLOSE_WAIT);
	EXPECT_TRUE(d.e.events & SGW_TCP_EV_PEER_FIN);
	EXPECT_EQ(d.e.inorder, 200u);
}

// A hostile peer opening holes all over the window: bounded records, no loop.
TEST(TcpDrill, HostileOutOfOrderIsBounded)
{
	Drill d(SmallConf());
	d.e.SetRxCap(65535);
	d.Establish();
	for (uint32_t i = 0; i < 1000; i++)
		d.In(SGW_TCP_F_ACK, 5001 + 2 + 60 * (i % 1000), 1001, 65535, 1);
	EXPECT_EQ(d.e.c.ooo_n, SGW_TCP_OOO_MAX);
	EXPECT_EQ(d.e.st.ctr[SGW_TCP_C_OOO_SEGS], SGW_TCP_OOO_MAX);
	EXPECT_GT(d.e.st.ctr[SGW_TCP_C_OOO_FULL], 900u);
	EXPECT_EQ(d.e.space_violations, 0u);
	// a segment bridging everything merges all the records
	d.In(SGW_TCP_F_ACK, 5001, 1001, 65535, 60 * 6);
	EXPECT_EQ(d.e.c.ooo_n, 0);
	EXPECT_EQ(d.e.inorder, 360u);
	EXPECT_EQ(d.e.bad_bytes, 0u);
	// beyond the window: not acceptable, never stored
	d.In(SGW_TCP_F_ACK, 5001 + 200000, 1001, 65535, 100);
	EXPECT_EQ(d.e.c.ooo_n, 0);
}

TEST(TcpDrill, ZeroWindowAndPersistProbes)
{
	Drill d(SmallConf());
	d.Establish(2000);
	d.Write(5000);
	d.Out(SGW_TCP_F_ACK, 1001, 5001, -1, 1000);
	d.Out(SGW_TCP_F_ACK, 1001 + 1000, 5001, -1, 1000);
	d.NoMore();
	// acked with a zero window: persist timer, no RTO
	d.In(SGW_TCP_F_ACK, 5001, 3001, 0);
	EXPECT_EQ(d.e.acked, 2000u);
	EXPECT_FALSE(d.e.Armed(SGW_TCP_T_RTX));
	ASSERT_TRUE(d.e.Armed(SGW_TCP_T_PERSIST));
	uint64_t t = d.now;
	d.Fire(SGW_TCP_T_PERSIST);
	// the probe: one below the window, no data
	d.Out(SGW_TCP_F_ACK, 3000, 5001, -1, 0);
	uint64_t first = d.now - t;
	d.In(SGW_TCP_F_ACK, 5001, 3001, 0);
	d.Fire(SGW_TCP_T_PERSIST);
	d.Out(SGW_TCP_F_ACK, 3000, 5001, -1, 0);
	d.Fire(SGW_TCP_T_PERSIST);
	d.Out(SGW_TCP_F_ACK, 3000, 5001, -1, 0);
	EXPECT_EQ(d.e.st.ctr[SGW_TCP_C_PERSIST_PROBES], 3u);
	EXPECT_GT(d.e.timer[SGW_TCP_T_PERSIST] - d.now, 3 * first) << "probes back off";
	// the window opens: data flows, persist stops
	d.In(SGW_TCP_F_ACK, 5001, 3001, 3000);
	d.Out(SGW_TCP_F_ACK, 3001, 5001, -1, 1000);
	d.Out(SGW_TCP_F_ACK, 4001, 5001, -1, 1000);
	d.Out(SGW_TCP_F_ACK | SGW_TCP_F_PSH, 5001, 5001, -1, 1000);
	EXPECT_FALSE(d.e.Armed(SGW_TCP_T_PERSIST));
	EXPECT_TRUE(d.e.Armed(SGW_TCP_T_RTX));
}

TEST(TcpDrill, ReceiverZeroWindowThenUpdate)
{
	Drill d(SmallConf());
	d.e.SetRxCap(4000);
	d.e.auto_read = false;
	ASSERT_EQ(sgw_tcp_listen(&d.e.st, &d.e.c), 0);
	d.e.peer_seed = 0xE;
	d.In(SGW_TCP_F_SYN, 5000, 0, 65535, 0, SGW_TCP_O_MSS, 0, 0, 1000);
	d.Out(SGW_TCP_F_SYN | SGW_TCP_F_ACK, 1000, 5001, 4000);
	d.In(SGW_TCP_F_ACK, 5001, 1001, 65535);
	for (uint32_t i = 0; i < 4; i++)
		d.In(SGW_TCP_F_ACK, 5001 + 1000 * i, 1001, 65535, 1000);
	d.Out(SGW_TCP_F_ACK, 1001, 7001, 2000);
	d.Out(SGW_TCP_F_ACK, 1001, 9001, 0);
	// beyond a zero window: not taken, ACKed with the window still 0
	d.In(SGW_TCP_F_ACK, 9001, 1001, 65535, 1000);
	d.Out(SGW_TCP_F_ACK, 1001, 9001, 0);
	EXPECT_EQ(d.e.inorder, 4000u);
	EXPECT_EQ(d.e.st.ctr[SGW_TCP_C_ZERO_WND_OUT], 2u) << "both ACKs with window 0 counted";
	// the application reads 500: below the SWS threshold (min(MSS, buf/2)), no update
	d.e.read += 500;
	sgw_tcp_out o;
	sgw_tcp_out_reset(&o);
	sgw_tcp_rx_consumed(&d.e.st, &d.e.c, d.now, &o);
	d.NoMore();
	d.e.read += 1000;
	sgw_tcp_out_reset(&o);
	sgw_tcp_rx_consumed(&d.e.st, &d.e.c, d.now, &o);
	d.Out(SGW_TCP_F_ACK, 1001, 9001, 1500);
	EXPECT_EQ(d.e.st.ctr[SGW_TCP_C_WND_UPDATES], 1u);
	EXPECT_EQ(d.e.st.ctr[SGW_TCP_C_ZERO_WND_OUT], 2u);
}

TEST(TcpDrill, PawsRejectsOldTimestamp)
{
	sgw_tcp_conf c = SmallConf();
	c.timestamps = 1;
	Drill d(c);
	d.e.peer_seed = 0xE;
	ASSERT_EQ(sgw_tcp_listen(&d.e.st, &d.e.c), 0);
	d.In(SGW_TCP_F_SYN, 5000, 0, 65535, 0, SGW_TCP_O_MSS | SGW_TCP_O_TS, 100000, 0, 1000);
	const sgw_tcp_seg &sa = d.Last();
	EXPECT_TRUE(sa.opts & SGW_TCP_O_TS);
	EXPECT_EQ(sa.tsecr, 100000u);
	uint32_t our_ts = sa.tsval;
	d.seen = d.e.sent.size();
	d.In(SGW_TCP_F_ACK, 5001, 1001, 65535, 0, SGW_TCP_O_TS, 100010, our_ts);
	ASSERT_EQ(d.e.c.state, SGW_TCP_ESTABLISHED);
	d.In(SGW_TCP_F_ACK, 5001, 1001, 65535, 100, SGW_TCP_O_TS, 100020, our_ts);
	d.In(SGW_TCP_F_ACK, 5101, 1001, 65535, 100, SGW_TCP_O_TS, 100030, our_ts);
	d.Out(SGW_TCP_F_ACK, 1001, 5201, -1, 0, SGW_TCP_O_TS);
	// RFC 7323 4.3 (A): a delayed ACK echoes the earliest segment it covers
	EXPECT_EQ(d.Last().tsecr, 100020u);
	// an old segment (wrapped sequence) with an older timestamp: dropped, ACKed
	d.In(SGW_TCP_F_ACK, 5201, 1001, 65535, 100, SGW_TCP_O_TS, 100005, our_ts);
	d.Out(SGW_TCP_F_ACK, 1001, 5201, -1, 0, SGW_TCP_O_TS);
	EXPECT_EQ(d.e.inorder, 200u);
	EXPECT_EQ(d.e.st.ctr[SGW_TCP_C_PAWS_DROP], 1u);
	// a RST is exempt from PAWS
	d.In(SGW_TCP_F_RST, 5201, 0, 0, 0, SGW_TCP_O_TS, 1, 0);
	EXPECT_EQ(d.e.c.state, SGW_TCP_CLOSED);
}

TEST(TcpDrill, FastRetransmitOnThirdDupack)
{
	Drill d(SmallConf());
	d.Establish();
	d.Write(10 * 1000);
	for (uint32_t i = 0; i < 10; i++) {
		d.Out(SGW_TCP_F_ACK | (i == 9 ? SGW_TCP_F_PSH : 0), 1001 + 1000 * i, 5001, -1,
		      1000);
	}
	// the first segment was lost: three duplicate ACKs
	d.In(SGW_TCP_F_ACK, 5001, 1001, 65535);
	d.In(SGW_TCP_F_ACK, 5001, 1001, 65535);
	d.NoMore();
	d.In(SGW_TCP_F_ACK, 5001, 1001, 65535);
	d.Out(SGW_TCP_F_ACK, 1001, 5001, -1, 1000);
	EXPECT_EQ(d.e.st.ctr[SGW_TCP_C_FAST_RETX], 1u);
	EXPECT_TRUE(d.e.c.flags & SGW_TCP_CF_RECOVERY);
	EXPECT_EQ(d.e.c.ssthresh, 5000u);
	EXPECT_EQ(d.e.c.cwnd, 8000u);
	// a partial ACK (segment 4 lost too): retransmit it at once
	d.In(SGW_TCP_F_ACK, 5001, 4001, 65535);
	d.Out(SGW_TCP_F_ACK, 4001, 5001, -1, 1000);
	// full ACK: recovery ends, cwnd = min(ssthresh, flight + MSS)
	d.In(SGW_TCP_F_ACK, 5001, 11001, 65535);
	EXPECT_FALSE(d.e.c.flags & SGW_TCP_CF_RECOVERY);
	EXPECT_EQ(d.e.c.cwnd, 1000u);
	EXPECT_EQ(d.e.acked, 10000u);
}

// ---------------------------------------------------------------- loss in the pair

TEST(TcpPair, RtoBackoffAndKarn)
{
	Pair p(NoTsConf());
	p.Open();
	uint32_t rto0 = p.ep[0].c.rto_us;
	uint32_t srtt0 = p.ep[0].c.srtt_us;
	// the first data segment and its first two retransmissions are lost
	uint32_t first = p.count[0];
	std::vector<uint64_t> at;
	p.script = [&](int dir, uint32_t i, const sgw_tcp_seg &s) {
		Verdict v;
		if (dir == 0 && s.len > 0) {
			at.push_back(p.now);
			v.drop = i < first + 3;
		}
		return v;
	};
	p.Write(0, 1000);
	p.RunFor(5 * kSec);
	ASSERT_EQ(at.size(), 4u);
	uint64_t rto = std::max<uint64_t>(rto0 * kUs, 200 * kMs);
	EXPECT_EQ(at[1] - at[0], rto);
	EXPECT_EQ(at[2] - at[1], 2 * rto) << "exponential backoff";
	EXPECT_EQ(at[3] - at[2], 4 * rto);
	EXPECT_EQ(p.Ctr(0, SGW_TCP_C_RTO), 3u);
	EXPECT_EQ(p.ep[1].inorder, 1000u);
	// Karn: the ACK of a retransmitted segment gave no sample, the backoff stays
	EXPECT_EQ(p.ep[0].c.srtt_us, srtt0);
	EXPECT_EQ(p.ep[0].c.backoff, 3);
	// a fresh segment's ACK is a sample: the backoff is gone
	p.Write(0, 1000);
	p.RunFor(1 * kSec);
	EXPECT_EQ(p.ep[0].c.backoff, 0);
	EXPECT_EQ(p.ep[1].bad_bytes, 0u);
}

TEST(TcpPair, RetriesExhaustedResets)
{
	sgw_tcp_conf c = NoTsConf();
	c.data_retries = 3;
	Pair p(c);
	p.Open();
	p.script = [](int dir, uint32_t, const sgw_tcp_seg &s) {
		Verdict v;
		v.drop = dir == 0 && s.len > 0;
		return v;
	};
	p.Write(0, 1000);
	p.RunFor(30 * kSec);
	EXPECT_EQ(p.ep[0].c.state, SGW_TCP_CLOSED);
	EXPECT_EQ(p.ep[0].reason, SGW_TCP_RR_TIMEOUT);
	EXPECT_EQ(p.ep[1].c.state, SGW_TCP_CLOSED) << "the RST reached the peer";
	EXPECT_EQ(p.ep[1].reason, SGW_TCP_RR_PEER);
}

TEST(TcpPair, FastRetransmitRecoversWithoutRto)
{
	Pair p(DefConf());
	p.Open();
	uint32_t first = p.count[0];
	p.script = [first](int dir, uint32_t i, const sgw_tcp_seg &) {
		Verdict v;
		v.drop = dir == 0 && i == first + 5;
		return v;
	};
	TransferAndCheck(p, 200000, 5 * kSec);
	EXPECT_EQ(p.Ctr(0, SGW_TCP_C_FAST_RETX), 1u);
	EXPECT_EQ(p.Ctr(0, SGW_TCP_C_RTO), 0u);
	EXPECT_EQ(p.Ctr(0, SGW_TCP_C_RETX_SEGS), 1u);
	EXPECT_GE(p.Ctr(1, SGW_TCP_C_OOO_SEGS), 3u);
}

TEST(TcpPair, RandomLossReorderByteExact)
{
	for (uint64_t seed = 1; seed <= 6; seed++) {
		SCOPED_TRACE(seed);
		Pair p(seed % 2 ? DefConf() : NoTsConf());
		p.Open();
		uint64_t s = seed;
		p.script = [&s](int, uint32_t, const sgw_tcp_seg &) {
			s = s * 6364136223846793005ull + 1442695040888963407ull;
			Verdict v;
			uint32_t r = (uint32_t)(s >> 33) % 1000;
			v.drop = r < 30;                   // 3 % loss both ways
			v.extra = r > 950 ? 15 * kMs : 0;  // 5 % reordered
			return v;
		};
		BothWaysAndCheck(p, 400000, 100000, 120 * kSec);
		// close under loss too
		p.Shutdown(0);
		p.Shutdown(1);
		p.RunFor(200 * kSec);
		EXPECT_EQ(p.ep[0].c.state, SGW_TCP_CLOSED);
		EXPECT_EQ(p.ep[1].c.state, SGW_TCP_CLOSED);
	}
}

// The duplication schedule: the network delivers some segments two or three
// times (copies up to 20 ms later, so some overtake later segments), beside
// loss and reordering, both ways, through the close. Duplicates are old bytes
// to the receiver: discarded and re-ACKed, never delivered twice.
TEST(TcpPair, RandomDuplicationLossReorderByteExact)
{
	for (uint64_t seed = 1; seed <= 6; seed++) {
		SCOPED_TRACE(seed);
		Pair p(seed % 2 ? DefConf() : NoTsConf());
		uint64_t s = seed * 7919;
		p.script = [&s](int, uint32_t, const sgw_tcp_seg &) {
			s = s * 6364136223846793005ull + 1442695040888963407ull;
			Verdict v;
			uint32_t r = (uint32_t)(s >> 33) % 1000;
			v.drop = r < 20;                   // 2 % lost
			v.extra = r > 970 ? 15 * kMs : 0;  // 3 % reordered
			if (r >= 20 && r < 120) {          // 10 % duplicated, 1 or 2 copies
				v.copies.push_back((s >> 20) % (20 * kMs));
				if (r < 50)
					v.copies.push_back((s >> 40) % (20 * kMs));
			}
			return v;
		};
		p.Open();
		BothWaysAndCheck(p, 400000, 100000, 120 * kSec);
		EXPECT_GT(p.duplicated[0], 20u);
		EXPECT_GT(p.duplicated[1], 20u);
		// copies of data were seen as old bytes (below rcv_nxt: outside the window)
		EXPECT_GT(p.Ctr(1, SGW_TCP_C_OUT_OF_WINDOW), 0u);
		EXPECT_GT(p.Ctr(0, SGW_TCP_C_OUT_OF_WINDOW), 0u);
		p.Shutdown(0);
		p.Shutdown(1);
		p.RunFor(200 * kSec);
		EXPECT_EQ(p.ep[0].c.state, SGW_TCP_CLOSED);
		EXPECT_EQ(p.ep[1].c.state, SGW_TCP_CLOSED);
		// neither gave up nor reset (a copied FIN reaching a closed peer may
		// still end a TIME-WAIT early: DuplicatedControlSegmentsChangeNothing)
		EXPECT_EQ(p.Ctr(0, SGW_TCP_C_RST_OUT) + p.Ctr(1, SGW_TCP_C_RST_OUT), 0u);
	}
}

// Every SYN, SYN-ACK, FIN and RST delivered three times (copies 1 and 5 ms
// after the first): the handshake, a transfer and both closes end as without
// copies. A copied SYN or SYN-ACK is old and gets an ACK, a copied FIN in
// TIME-WAIT is ACKed again, and no endpoint sends a RST. One RST does come:
// when A closes first, A's ACK of B's copied FIN reaches B after B closed,
// B's host answers it with a RST, and A's TIME-WAIT ends there (RFC 9293
// 3.10.7.4; Linux does the same with its default tcp_rfc1337 0).
TEST(TcpPair, DuplicatedControlSegmentsChangeNothing)
{
	for (int simultaneous = 0; simultaneous <= 1; simultaneous++) {
		SCOPED_TRACE(simultaneous);
		Pair p(DefConf());
		uint32_t ctl_copies = 0;
		p.script = [&](int, uint32_t, const sgw_tcp_seg &s) {
			Verdict v;
			if (s.flags & (SGW_TCP_F_SYN | SGW_TCP_F_FIN | SGW_TCP_F_RST)) {
				v.copies = {1 * kMs, 5 * kMs};
				ctl_copies += 2;
			}
			return v;
		};
		p.Open();
		BothWaysAndCheck(p, 100000, 30000, 5 * kSec);
		p.Shutdown(0);
		if (simultaneous)
			p.Shutdown(1);
		else
			p.RunFor(1 * kSec);
		if (!simultaneous) {
			EXPECT_EQ(p.ep[1].c.state, SGW_TCP_CLOSE_WAIT);
			p.Shutdown(1);
		}
		p.RunFor(200 * kSec);
		EXPECT_EQ(p.ep[0].c.state, SGW_TCP_CLOSED);
		EXPECT_EQ(p.ep[1].c.state, SGW_TCP_CLOSED);
		EXPECT_EQ(p.Ctr(0, SGW_TCP_C_RST_OUT) + p.Ctr(1, SGW_TCP_C_RST_OUT), 0u);
		EXPECT_EQ(p.Ctr(1, SGW_TCP_C_RST_IN), 0u);
		EXPECT_EQ(p.ep[1].reason, SGW_TCP_RR_NONE);
		EXPECT_EQ(p.Ctr(0, SGW_TCP_C_RST_IN), simultaneous ? 0u : 1u);
		EXPECT_EQ(p.ep[0].reason, simultaneous ? SGW_TCP_RR_NONE : SGW_TCP_RR_PEER);
		EXPECT_GE(ctl_copies, 8u);  // SYN, SYN-ACK and two FINs at least
		EXPECT_EQ(p.Ctr(0, SGW_TCP_C_RETX_SEGS) + p.Ctr(1, SGW_TCP_C_RETX_SEGS), 0u);
	}
}

// ---------------------------------------------------------------- windows

TEST(TcpPair, WindowScalingLargeWindow)
{
	// 100 Mbit/s-ish LAN-free: 600 ms RTT, 16 MB buffers; the window must exceed 64 KB
	sgw_tcp_conf c = DefConf();
	c.rcv_buf = 16u << 20;
	c.init_cwnd_segs = 1000;
	Pair p(c);
	p.delay[0] = p.delay[1] = 300 * kMs;
	p.ep[1].SetRxCap(16u << 20);
	p.Open();
	EXPECT_EQ(p.ep[1].c.rcv_wscale, 9);
	p.Write(0, 8u << 20);
	// the first round is limited by the SYN's unscaled 64 KB; the ACKs scale it up
	p.RunFor(3 * 600 * kMs + 50 * kMs);
	EXPECT_GT(p.ep[0].acked, 1000000u);
	EXPECT_GT(p.ep[0].c.snd_wnd, 65535u * 16);
	p.RunFor(20 * kSec);
	EXPECT_EQ(p.ep[1].inorder, 8u << 20);
	EXPECT_EQ(p.ep[1].bad_bytes, 0u);
}

TEST(TcpPair, SlowReaderZeroWindowNeverOverflows)
{
	Pair p(DefConf());
	p.ep[1].SetRxCap(30000);
	p.ep[1].auto_read = false;
	p.Open();
	p.Write(0, 200000);
	for (int round = 0; round < 400 && p.ep[1].inorder < 200000; round++) {
		p.RunFor(300 * kMs);
		p.Read(1, 7000);
	}
	p.RunFor(5 * kSec);
	EXPECT_EQ(p.ep[1].inorder, 200000u);
	EXPECT_EQ(p.ep[1].bad_bytes, 0u);
	EXPECT_EQ(p.ep[1].space_violations, 0u);
	EXPECT_EQ(p.Ctr(1, SGW_TCP_C_RX_CLIPPED), 0u);
	EXPECT_GT(p.Ctr(1, SGW_TCP_C_WND_UPDATES), 0u);
}

TEST(TcpPair, LostWindowUpdateRecoveredByPersist)
{
	Pair p(NoTsConf());
	p.ep[1].SetRxCap(20000);
	p.ep[1].auto_read = false;
	p.Open();
	p.Write(0, 50000);
	p.RunFor(1 * kSec);
	// the last window below the scale's granularity (128 bytes) is never offered
	EXPECT_GE(p.ep[1].inorder, 20000u - 128);
	EXPECT_EQ(p.ep[0].c.snd_wnd, 0u);
	// the window update is lost: only a persist probe gets the flow going again
	uint32_t next = p.count[1];
	p.script = [next](int dir, uint32_t i, const sgw_tcp_seg &) {
		Verdict v;
		v.drop = dir == 1 && i == next;
		return v;
	};
	p.Read(1, 20000);
	p.RunFor(20 * kSec);
	EXPECT_GE(p.Ctr(0, SGW_TCP_C_PERSIST_PROBES), 1u);
	p.Read(1, 20000);
	p.RunFor(5 * kSec);
	p.Read(1, 20000);
	p.RunFor(5 * kSec);
	EXPECT_EQ(p.ep[1].inorder, 50000u);
	EXPECT_EQ(p.ep[1].bad_bytes, 0u);
}

// ---------------------------------------------------------------- SACK loss recovery (RFC 6675)

// Stream offset of A's data segment s (A's ISS is 1000000).
uint32_t
OffA(const sgw_tcp_seg &s)
{
	return s.seq - 1000001u;
}

// Drop A's data at the given stream offsets, the first `times` transmissions each.
struct DropSched {
	std::map<uint32_t, int> times;  // offset -> transmissions still to drop
	std::map<uint32_t, int> sent;   // offset -> transmissions seen
	Verdict operator()(int dir, uint32_t, const sgw_tcp_seg &s)
	{
		Verdict v;
		if (dir != 0 || s.len == 0)
			return v;
		uint32_t off = OffA(s);
		sent[off]++;
		auto it = times.find(off);
		if (it != times.end() && it->second > 0) {
			it->second--;
			v.drop = true;
		}
		return v;
	}
};

// Run until A has every byte acknowledged; the time it took.
uint64_t
TimeToAcked(Pair &p, uint64_t bytes, uint64_t horizon)
{
	uint64_t t0 = p.now;
	p.Write(0, (uint32_t)bytes);
	while (p.ep[0].acked < bytes && p.Step(t0 + horizon)) {
	}
	EXPECT_EQ(p.ep[0].acked, bytes);
	EXPECT_EQ(p.ep[1].inorder, bytes);
	EXPECT_EQ(p.ep[1].bad_bytes, 0u);
	return p.now - t0;
}

TEST(TcpSack, SingleLossOneRetransmission)
{
	Pair p(DefConf());
	p.Open();
	ASSERT_TRUE(p.ep[0].c.flags & SGW_TCP_CF_SACK);
	auto sched = std::make_shared<DropSched>();
	sched->times[10 * 1448] = 1;
	p.script = [sched](int d, uint32_t i, const sgw_tcp_seg &s) { return (*sched)(d, i, s); };
	TimeToAcked(p, 300000, 10 * kSec);
	EXPECT_EQ(p.Ctr(0, SGW_TCP_C_SACK_RECOVERY), 1u);
	EXPECT_EQ(p.Ctr(0, SGW_TCP_C_RTO), 0u);
	EXPECT_EQ(p.Ctr(0, SGW_TCP_C_RETX_SEGS), 1u);
	for (auto &kv : sched->sent)
		EXPECT_EQ(kv.second, kv.first == 10 * 1448 ? 2 : 1) << kv.first;
	EXPECT_FALSE(p.ep[0].c.flags & SGW_TCP_CF_RECOVERY);
	EXPECT_EQ(p.ep[0].c.sb_n, 0);
	// the scoreboard was borrowed for the recovery and is back in the pool
	EXPECT_EQ(p.ep[0].st.sb_used_max, 1u);
	EXPECT_EQ(p.ep[0].st.sb_used, 0u);
	EXPECT_EQ(p.ep[0].c.sb_idx, SGW_TCP_SB_NONE);
	EXPECT_EQ(sgw_tcp_sb_ranges(&p.ep[0].st, &p.ep[0].c), nullptr);
}

// Four losses in one window: SACK repairs them in one round trip, NewReno in four.
TEST(TcpSack, MultipleLossesOneWindowBeatNewReno)
{
	uint64_t took[2];
	for (int sack = 1; sack >= 0; sack--) {
		SCOPED_TRACE(sack);
		sgw_tcp_conf cb = DefConf();
		cb.sack = (uint8_t)sack;
		Pair p(DefConf(), cb);
		p.delay[0] = p.delay[1] = 25 * kMs;
		p.Open();
		ASSERT_EQ(!!(p.ep[0].c.flags & SGW_TCP_CF_SACK), sack);
		// warm up: cwnd grows to well over 30 segments
		TimeToAcked(p, 200000, 10 * kSec);
		ASSERT_GT(p.ep[0].c.cwnd, 40u * 1448);
		uint32_t base = (uint32_t)p.ep[0].acked;
		auto sched = std::make_shared<DropSched>();
		for (uint32_t k : {20u, 23u, 26u, 29u})
			sched->times[base + k * 1448] = 1;
		p.script = [sched](int d, uint32_t i, const sgw_tcp_seg &s) {
			return (*sched)(d, i, s);
		};
		uint64_t rtx0 = p.Ctr(0, SGW_TCP_C_RETX_SEGS);
		// what is acknowledged until the whole window is repaired
		uint64_t t0 = p.now;
		p.Write(0, 120 * 1448);
		while (p.ep[0].acked < base + 30 * 1448 && p.Step(t0 + 10 * kSec)) {
		}
		took[sack] = p.now - t0;
		p.Run(p.now + 5 * kSec);
		EXPECT_EQ(p.ep[1].inorder, base + 120u * 1448);
		EXPECT_EQ(p.ep[1].bad_bytes, 0u);
		EXPECT_EQ(p.Ctr(0, SGW_TCP_C_RTO), 0u);
		EXPECT_EQ(p.Ctr(0, SGW_TCP_C_FAST_RETX), 1u) << "one reduction for the window";
		EXPECT_EQ(p.Ctr(0, SGW_TCP_C_SACK_RECOVERY), (uint64_t)sack);
		if (sack) {
			// the holes, and at most the one rescue retransmission (rule 4)
			uint64_t rescue = p.Ctr(0, SGW_TCP_C_RESCUE_RETX);
			EXPECT_LE(rescue, 1u);
			EXPECT_EQ(p.Ctr(0, SGW_TCP_C_RETX_SEGS) - rtx0, 4u + rescue);
			uint64_t extra = 0;
			for (auto &kv : sched->sent) {
				EXPECT_LE(kv.second, 2);
				if (kv.second > 1 && !sched->times.count(kv.first))
					extra++;
			}
			EXPECT_EQ(extra, rescue);
		}
	}
	// 50 ms RTT: NewReno needs a round trip per hole after the first
	EXPECT_LT(took[1] + 100 * kMs, took[0]) << took[1] << " vs " << took[0];
}

TEST(TcpSack, LostRetransmissionEndsInRtoWithoutResendingSackedData)
{
	Pair p(DefConf());
	p.Open();
	auto sched = std::make_shared<DropSched>();
	sched->times[12 * 1448] = 2;  // the segment and its fast retransmission
	p.script = [sched](int d, uint32_t i, const sgw_tcp_seg &s) { return (*sched)(d, i, s); };
	TimeToAcked(p, 100 * 1448, 10 * kSec);
	EXPECT_EQ(p.Ctr(0, SGW_TCP_C_SACK_RECOVERY), 1u);
	EXPECT_EQ(p.Ctr(0, SGW_TCP_C_RTO), 1u);
	// after the RTO the head went again, and nothing the peer had SACKed; the
	// only other segment sent twice is the rescue (the highest unSACKed one)
	uint64_t extra = 0;
	for (auto &kv : sched->sent) {
		if (kv.first == 12 * 1448) {
			EXPECT_EQ(kv.second, 3);
		} else {
			EXPECT_LE(kv.second, 2) << kv.first;
			extra += kv.second - 1;
		}
	}
	EXPECT_EQ(extra, p.Ctr(0, SGW_TCP_C_RESCUE_RETX));
	EXPECT_LE(extra, 1u);
	EXPECT_EQ(p.ep[0].c.cwnd >= p.ep[0].c.snd_mss, true);
}

// An early loss and a lost last segment: the rescue retransmission repairs the tail.
TEST(TcpSack, RescueRetransmissionRepairsTailWithoutRto)
{
	Pair p(DefConf());
	p.Open();
	auto sched = std::make_shared<DropSched>();
	sched->times[5 * 1448] = 1;
	sched->times[19 * 1448] = 1;  // the last of 20 segments
	p.script = [sched](int d, uint32_t i, const sgw_tcp_seg &s) { return (*sched)(d, i, s); };
	TimeToAcked(p, 20 * 1448, 10 * kSec);
	EXPECT_EQ(p.Ctr(0, SGW_TCP_C_RTO), 0u);
	EXPECT_EQ(p.Ctr(0, SGW_TCP_C_RESCUE_RETX), 1u);
	EXPECT_EQ(p.Ctr(0, SGW_TCP_C_RETX_SEGS), 2u);
}

TEST(TcpSack, RandomLossReorderWithSackAndFin)
{
	for (uint64_t seed = 11; seed <= 16; seed++) {
		SCOPED_TRACE(seed);
		Pair p(DefConf());
		if (seed % 2)
			sgw_tcp_set_cc(&p.ep[0].c, &sgw_tcp_cc_cubic);  // odd seeds: CUBIC
		p.Open();
		uint64_t s = seed;
		p.script = [&s](int, uint32_t, const sgw_tcp_seg &) {
			s = s * 6364136223846793005ull + 1442695040888963407ull;
			Verdict v;
			uint32_t r = (uint32_t)(s >> 33) % 1000;
			v.drop = r < 50;                   // 5 % loss both ways
			v.extra = r > 970 ? 3 * kMs : 0;   // 3 % reordered
			return v;
		};
		p.Write(0, 600000);
		p.Shutdown(0);
		p.RunFor(120 * kSec);
		EXPECT_EQ(p.ep[1].inorder, 600000u);
		EXPECT_EQ(p.ep[1].bad_bytes, 0u);
		EXPECT_EQ(p.ep[0].acked, 600000u);
		EXPECT_GE(p.Ctr(0, SGW_TCP_C_SACK_RECOVERY), 1u);
		EXPECT_TRUE(p.ep[1].events & SGW_TCP_EV_PEER_FIN);
		EXPECT_LE(p.ep[0].c.sb_n, SGW_TCP_SB_MAX);
		// done and idle: no connection holds a scoreboard
		EXPECT_GE(p.ep[0].st.sb_used_max, 1u);
		EXPECT_EQ(p.ep[0].st.sb_used, 0u);
		EXPECT_EQ(p.ep[1].st.sb_used, 0u);
	}
}

sgw_tcp_seg
SackAck(uint32_t ack, std::initializer_list<std::pair<uint32_t, uint32_t>> blocks)
{
	sgw_tcp_seg s{};
	s.sport = 9999;
	s.dport = 80;
	s.seq = Drill::kPeerIss + 1;
	s.ack = ack;
	s.flags = SGW_TCP_F_ACK;
	s.win = 65535;
	for (auto &b : blocks) {
		s.sack[s.n_sack].left = b.first;
		s.sack[s.n_sack].right = b.second;
		s.n_sack++;
	}
	if (s.n_sack)
		s.opts = SGW_TCP_O_SACK;
	return s;
}

// The sender's scoreboard ranges (out of line, in the stack's pool); must exist.
const sgw_tcp_sack *
SbOf(Endpoint &e)
{
	static const sgw_tcp_sack none[SGW_TCP_SB_MAX] = {};
	const sgw_tcp_sack *r = sgw_tcp_sb_ranges(&e.st, &e.c);
	EXPECT_NE(r, nullptr) << "no scoreboard attached";
	return r != nullptr ? r : none;
}

void
DrillIn(Drill &d, const sgw_tcp_seg &s)
{
	uint8_t b[60];
	uint32_t h = sgw_tcp_seg_build(b, sizeof(b), &s);
	sgw_tcp_seg p;
	ASSERT_EQ(sgw_tcp_seg_parse(b, h, &p, nullptr), SGW_TCP_PR_OK);
	sgw_tcp_out o;
	sgw_tcp_out_reset(&o);
	sgw_tcp_input(&d.e.st, &d.e.c, d.now, &p, &o);
	d.e.Apply(o);
}

// DupThresh, two holes, NextSeg rules 1 and 4, exit at RecoveryPoint: exact segments.
TEST(TcpSack, DrillTwoHolesExact)
{
	Drill d(SmallConf());
	d.Establish(65535, SGW_TCP_O_MSS | SGW_TCP_O_SACK_PERM);
	ASSERT_TRUE(d.e.c.flags & SGW_TCP_CF_SACK);
	d.Write(10 * 1000);
	for (uint32_t i = 0; i < 10; i++)
		d.Out(SGW_TCP_F_ACK | (i == 9 ? SGW_TCP_F_PSH : 0), 1001 + 1000 * i, 5001, -1, 1000);
	// segments 1001 and 4001 lost; two dupACKs SACKing two segments: not yet (reordering)
	DrillIn(d, SackAck(1001, {{2001, 3001}}));
	DrillIn(d, SackAck(1001, {{2001, 4001}}));
	d.NoMore();
	EXPECT_FALSE(d.e.c.flags & SGW_TCP_CF_RECOVERY);
	// the third: recovery, the first hole again, ssthresh = cwnd = FlightSize / 2
	DrillIn(d, SackAck(1001, {{5001, 6001}, {2001, 4001}}));
	d.Out(SGW_TCP_F_ACK, 1001, 5001, -1, 1000);
	d.NoMore();
	EXPECT_TRUE(d.e.c.flags & SGW_TCP_CF_RECOVERY);
	EXPECT_EQ(d.e.c.ssthresh, 5000u);
	EXPECT_EQ(d.e.c.cwnd, 5000u);
	EXPECT_EQ(d.e.c.recover, 11001u);
	// pipe = 1000 (retransmitted) + 1000 (4001, not lost yet) + 5000 (above): nothing
	DrillIn(d, SackAck(1001, {{5001, 7001}, {2001, 4001}}));
	d.NoMore();
	// three segments SACKed above 4001: lost; pipe 1000 + 3000 leaves room for it
	DrillIn(d, SackAck(1001, {{5001, 8001}, {2001, 4001}}));
	d.Out(SGW_TCP_F_ACK, 4001, 5001, -1, 1000);
	d.NoMore();
	// the first retransmission arrived: rules 1-3 have nothing, rule 4 the rescue
	DrillIn(d, SackAck(4001, {{5001, 8001}}));
	d.Out(SGW_TCP_F_ACK | SGW_TCP_F_PSH, 10001, 5001, -1, 1000);
	d.NoMore();
	EXPECT_EQ(d.e.st.ctr[SGW_TCP_C_RESCUE_RETX], 1u);
	EXPECT_EQ(d.e.st.ctr[SGW_TCP_C_SACK_RETX], 1u);
	// RecoveryPoint acknowledged: out of recovery, cwnd = ssthresh
	DrillIn(d, SackAck(11001, {}));
	EXPECT_FALSE(d.e.c.flags & SGW_TCP_CF_RECOVERY);
	EXPECT_EQ(d.e.c.cwnd, 5000u);
	EXPECT_EQ(d.e.c.sb_n, 0);
	EXPECT_EQ(d.e.st.sb_used, 0u) << "out of recovery, no range: the board went back";
	EXPECT_EQ(d.e.acked, 10000u);
	d.NoMore();
}

// No scoreboard free in the stack's pool: the ACKs' SACK blocks are ignored (counted) and
// the loss is repaired the NewReno way (RFC 6582), as without SACK.
TEST(TcpSack, PoolEmptyIgnoresSackAndRecoversLikeNewReno)
{
	Drill d(SmallConf());
	sgw_tcp_sb none[1];
	ASSERT_EQ(sgw_tcp_stack_set_sb_pool(&d.e.st, none, 0), 0);
	d.Establish(65535, SGW_TCP_O_MSS | SGW_TCP_O_SACK_PERM);
	ASSERT_TRUE(d.e.c.flags & SGW_TCP_CF_SACK);
	d.Write(10 * 1000);
	d.seen = d.e.sent.size();
	// segments 1001 and 4001 lost, as in DrillTwoHolesExact
	DrillIn(d, SackAck(1001, {{2001, 3001}}));
	DrillIn(d, SackAck(1001, {{2001, 4001}}));
	d.NoMore();
	EXPECT_EQ(d.e.st.ctr[SGW_TCP_C_SB_NOMEM], 2u);
	EXPECT_EQ(d.e.c.sb_n, 0);
	DrillIn(d, SackAck(1001, {{5001, 6001}, {2001, 4001}}));
	d.Out(SGW_TCP_F_ACK, 1001, 5001, -1, 1000);
	d.NoMore();
	EXPECT_EQ(d.e.st.ctr[SGW_TCP_C_SB_NOMEM], 3u);
	EXPECT_EQ(d.e.st.ctr[SGW_TCP_C_SB_NOMEM_RECOVERY], 1u);
	EXPECT_EQ(d.e.st.ctr[SGW_TCP_C_SACK_RECOVERY], 0u);
	EXPECT_EQ(d.e.st.ctr[SGW_TCP_C_FAST_RETX], 1u);
	EXPECT_TRUE(d.e.c.flags & SGW_TCP_CF_RECOVERY);
	EXPECT_TRUE(d.e.c.flags & SGW_TCP_CF_NOSB);
	EXPECT_EQ(d.e.c.ssthresh, 5000u);
	EXPECT_EQ(d.e.c.cwnd, 5000u + 3000u) << "NewReno inflation, not RFC 6675's cwnd";
	// a fourth duplicate ACK inflates; its blocks are not even looked at
	DrillIn(d, SackAck(1001, {{5001, 7001}, {2001, 4001}}));
	d.NoMore();
	EXPECT_EQ(d.e.c.cwnd, 9000u);
	EXPECT_EQ(d.e.st.ctr[SGW_TCP_C_SB_NOMEM], 3u);
	// partial ACK: NewReno retransmits the next head at once (RFC 6582 3.2 step 5)
	DrillIn(d, SackAck(4001, {{5001, 8001}}));
	d.Out(SGW_TCP_F_ACK, 4001, 5001, -1, 1000);
	d.NoMore();
	EXPECT_EQ(d.e.st.ctr[SGW_TCP_C_SACK_RETX], 0u);
	EXPECT_EQ(d.e.st.ctr[SGW_TCP_C_RESCUE_RETX], 0u);
	// full ACK: out of recovery, SACK blocks would count again
	DrillIn(d, SackAck(11001, {}));
	EXPECT_FALSE(d.e.c.flags & (SGW_TCP_CF_RECOVERY | SGW_TCP_CF_NOSB));
	EXPECT_EQ(d.e.acked, 10000u);
	EXPECT_EQ(d.e.st.sb_used, 0u);
	EXPECT_EQ(d.e.st.sb_used_max, 0u);
	d.NoMore();
}

// A board is lent while ranges are held and comes back when they are acknowledged, or
// when the connection closes; the pool can be swapped only while none is lent.
TEST(TcpSack, ScoreboardLentOnlyWhileRangesHeld)
{
	Drill d(SmallConf());
	sgw_tcp_sb pool[1];
	ASSERT_EQ(sgw_tcp_stack_set_sb_pool(&d.e.st, pool, 1), 0);
	d.Establish(65535, SGW_TCP_O_MSS | SGW_TCP_O_SACK_PERM);
	d.Write(10 * 1000);
	d.seen = d.e.sent.size();
	EXPECT_EQ(d.e.c.sb_idx, SGW_TCP_SB_NONE);
	EXPECT_EQ(sgw_tcp_sb_ranges(&d.e.st, &d.e.c), nullptr);
	// a plain ACK needs none
	DrillIn(d, SackAck(2001, {}));
	EXPECT_EQ(d.e.st.sb_used, 0u);
	DrillIn(d, SackAck(2001, {{3001, 4001}}));
	EXPECT_EQ(d.e.st.sb_used, 1u);
	EXPECT_EQ(pool[0].owner, &d.e.c);
	EXPECT_EQ(SbOf(d.e), pool[0].r);
	EXPECT_EQ(d.e.c.sb_n, 1);
	EXPECT_EQ(SbOf(d.e)[0].left, 3001u);
	EXPECT_EQ(sgw_tcp_stack_set_sb_pool(&d.e.st, nullptr, 0), -1) << "a board is lent";
	// the hole is filled: the range is below snd_una, the board goes back
	DrillIn(d, SackAck(4001, {}));
	EXPECT_EQ(d.e.c.sb_n, 0);
	EXPECT_EQ(d.e.st.sb_used, 0u);
	EXPECT_EQ(pool[0].owner, nullptr);
	EXPECT_EQ(sgw_tcp_sb_ranges(&d.e.st, &d.e.c), nullptr);
	// lent again for the next range, and given back by the close
	DrillIn(d, SackAck(4001, {{5001, 6001}}));
	EXPECT_EQ(d.e.st.sb_used, 1u);
	EXPECT_EQ(d.e.st.sb_used_max, 1u);
	sgw_tcp_out o;
	sgw_tcp_out_reset(&o);
	sgw_tcp_abort(&d.e.st, &d.e.c, d.now, &o);
	d.e.Apply(o);
	EXPECT_EQ(d.e.c.state, SGW_TCP_CLOSED);
	EXPECT_EQ(d.e.st.sb_used, 0u);
	EXPECT_EQ(d.e.c.sb_idx, SGW_TCP_SB_NONE);
	EXPECT_EQ(sgw_tcp_stack_set_sb_pool(&d.e.st, nullptr, 0), 0);
	EXPECT_EQ(d.e.st.sb_cap, SGW_TCP_SB_POOL_DEFAULT);
}

// Random loss with no scoreboard at all on the sender: every recovery is NewReno, the
// data arrives intact.
TEST(TcpSack, RandomLossWithEmptyPoolStillDelivers)
{
	Pair p(DefConf());
	sgw_tcp_sb none[1];
	ASSERT_EQ(sgw_tcp_stack_set_sb_pool(&p.ep[0].st, none, 0), 0);
	p.Open();
	ASSERT_TRUE(p.ep[0].c.flags & SGW_TCP_CF_SACK);
	uint64_t s = 13;
	p.script = [&s](int, uint32_t, const sgw_tcp_seg &) {
		s = s * 6364136223846793005ull + 1442695040888963407ull;
		Verdict v;
		uint32_t r = (uint32_t)(s >> 33) % 1000;
		v.drop = r < 50;
		v.extra = r > 970 ? 3 * kMs : 0;
		return v;
	};
	p.Write(0, 600000);
	p.Shutdown(0);
	p.RunFor(120 * kSec);
	EXPECT_EQ(p.ep[1].inorder, 600000u);
	EXPECT_EQ(p.ep[1].bad_bytes, 0u);
	EXPECT_EQ(p.ep[0].acked, 600000u);
	EXPECT_EQ(p.Ctr(0, SGW_TCP_C_SACK_RECOVERY), 0u);
	EXPECT_GE(p.Ctr(0, SGW_TCP_C_SB_NOMEM_RECOVERY), 1u);
	EXPECT_GE(p.Ctr(0, SGW_TCP_C_SB_NOMEM), 1u);
	EXPECT_TRUE(p.ep[1].events & SGW_TCP_EV_PEER_FIN);
}

TEST(TcpSack, DsackAndHostileBlocksIgnoredScoreboardBounded)
{
	Drill d(SmallConf());
	d.Establish(65535, SGW_TCP_O_MSS | SGW_TCP_O_SACK_PERM);
	d.Write(20 * 1000);
	ASSERT_EQ(d.e.sent.size(), 11u);  // SYN-ACK + IW 10
	d.seen = d.e.sent.size();
	// 1001..3001 acknowledged, with a D-SACK of 1001..2001 (below the ACK)
	DrillIn(d, SackAck(3001, {{1001, 2001}}));
	EXPECT_EQ(d.e.st.ctr[SGW_TCP_C_DSACK_IN], 1u);
	EXPECT_EQ(d.e.c.sb_n, 0);
	d.seen = d.e.sent.size();
	// a D-SACK inside the second block
	DrillIn(d, SackAck(3001, {{5001, 6001}, {5001, 7001}}));
	EXPECT_EQ(d.e.st.ctr[SGW_TCP_C_DSACK_IN], 2u);
	EXPECT_EQ(d.e.c.sb_n, 1);
	// blocks beyond what was sent, empty or reversed
	DrillIn(d, SackAck(3001, {{9001, 900001}, {8001, 8001}, {8001, 7501}}));
	EXPECT_EQ(d.e.st.ctr[SGW_TCP_C_SACK_BAD], 3u);
	EXPECT_EQ(d.e.c.sb_n, 1);
	// no usable block: a duplicate ACK the RFC 5681 way (the second)
	EXPECT_EQ(d.e.st.ctr[SGW_TCP_C_DUPACKS_IN], 2u);
	EXPECT_FALSE(d.e.c.flags & SGW_TCP_CF_RECOVERY) << "two duplicate ACKs, 1000 bytes SACKed";
	// blocks starting at or straddling the cumulative ACK (not D-SACKs: a second block)
	DrillIn(d, SackAck(3001, {{9001, 10001}, {3001, 4001}}));
	DrillIn(d, SackAck(3001, {{9001, 10001}, {2501, 3501}}));
	EXPECT_EQ(d.e.st.ctr[SGW_TCP_C_SACK_BAD], 5u);
	EXPECT_EQ(d.e.c.sb_n, 2);
	EXPECT_EQ(SbOf(d.e)[0].left, 5001u);
	EXPECT_EQ(SbOf(d.e)[1].left, 9001u);
	EXPECT_EQ(SbOf(d.e)[1].right, 10001u);
	// a hostile peer SACKs every other 100 bytes: the scoreboard keeps 6 ranges
	for (uint32_t k = 0; k < 40; k++) {
		uint32_t l = 3101 + 200 * k;
		if (l + 100 > d.e.c.snd_max)
			break;
		DrillIn(d, SackAck(3001, {{l, l + 100}}));
	}
	EXPECT_EQ(d.e.c.sb_n, SGW_TCP_SB_MAX);
	EXPECT_GT(d.e.st.ctr[SGW_TCP_C_SB_FULL], 0u);
	for (unsigned k = 1; k < d.e.c.sb_n; k++)
		EXPECT_LT((int32_t)(SbOf(d.e)[k - 1].right - SbOf(d.e)[k].left), 0);
	EXPECT_TRUE(d.e.c.flags & SGW_TCP_CF_RECOVERY);
	// reneging: the ACK stops at the start of a SACKed range
	uint32_t l0 = SbOf(d.e)[0].left;
	DrillIn(d, SackAck(l0, {}));
	EXPECT_EQ(d.e.st.ctr[SGW_TCP_C_SACK_RENEGE], 1u);
	EXPECT_EQ(d.e.c.sb_n, 0);
	// everything acknowledged in the end
	for (int i = 0; i < 4 && d.e.c.snd_una != d.e.c.snd_max; i++)
		DrillIn(d, SackAck(d.e.c.snd_max, {}));
	EXPECT_EQ(d.e.c.snd_una, d.e.c.snd_max);
	EXPECT_EQ(d.e.acked, 20000u);
}

TEST(TcpSack, WithoutSackNegotiatedNewRenoRuns)
{
	Drill d(SmallConf());
	d.Establish();  // no SACK-permitted from the peer
	ASSERT_FALSE(d.e.c.flags & SGW_TCP_CF_SACK);
	d.Write(10 * 1000);
	d.seen = d.e.sent.size();
	// SACK blocks from a peer that never negotiated them change nothing
	for (int i = 0; i < 3; i++)
		DrillIn(d, SackAck(1001, {{2001, 3001 + 1000 * (uint32_t)i}}));
	EXPECT_EQ(d.e.c.sb_n, 0);
	EXPECT_EQ(d.e.st.ctr[SGW_TCP_C_SACK_RECOVERY], 0u);
	EXPECT_EQ(d.e.st.ctr[SGW_TCP_C_FAST_RETX], 1u);
	EXPECT_EQ(d.e.c.cwnd, 5000u + 3000u) << "NewReno inflation";
}

// CUBIC on a real connection: the same single loss, ssthresh 0.7 of the flight, not 0.5.
TEST(TcpSack, CubicSenderBackOffLessThanNewReno)
{
	uint32_t ss[2] = {0, 0}, flight[2] = {0, 0};
	for (int cubic = 0; cubic < 2; cubic++) {
		SCOPED_TRACE(cubic);
		Pair p(DefConf());
		if (cubic)
			sgw_tcp_set_cc(&p.ep[0].c, &sgw_tcp_cc_cubic);
		p.Open();
		EXPECT_STREQ(p.ep[0].c.cc->name, cubic ? "cubic" : "newreno");
		auto sched = std::make_shared<DropSched>();
		sched->times[60 * 1448] = 1;
		p.script = [sched, &p, &flight, cubic](int d, uint32_t i, const sgw_tcp_seg &s) {
			Verdict v = (*sched)(d, i, s);
			if (v.drop)
				flight[cubic] = 0;
			if (d == 0 && s.len && OffA(s) == 60 * 1448 && sched->sent[OffA(s)] == 2)
				flight[cubic] = p.ep[0].c.snd_max - p.ep[0].c.snd_una;  // at the retransmission
			return v;
		};
		TimeToAcked(p, 400000, 10 * kSec);
		EXPECT_EQ(p.Ctr(0, SGW_TCP_C_SACK_RECOVERY), 1u);
		EXPECT_EQ(p.Ctr(0, SGW_TCP_C_RTO), 0u);
		ss[cubic] = p.ep[0].c.ssthresh;
		ASSERT_GT(flight[cubic], 0u);
	}
	EXPECT_EQ(ss[0], flight[0] / 2);
	EXPECT_EQ(ss[1], (uint32_t)((uint64_t)flight[1] * 7 / 10));
}

// ---------------------------------------------------------------- delayed ACKs, keepalive

// RFC 9293 3.8.6.3 / RFC 1122 4.2.3.2 / RFC 5681 4.2: an ACK for at least every
// second segment, never later than delack_ns after the first unacknowledged
// byte, at once for out-of-order data, a hole filled and a FIN.
TEST(TcpDelack, RulesAndCeiling)
{
	Drill d(SmallConf());
	d.e.SetRxCap(65535);
	d.Establish();
	uint32_t seq = 5001;
	// a segment, 30 ms later another small one: the timer is not pushed back
	d.In(SGW_TCP_F_ACK, seq, 1001, 65535, 1000);
	seq += 1000;
	uint64_t first = d.now;
	ASSERT_TRUE(d.e.Armed(SGW_TCP_T_DELACK));
	EXPECT_EQ(d.e.timer[SGW_TCP_T_DELACK], first + 40 * kMs);
	d.now += 30 * kMs;
	d.In(SGW_TCP_F_ACK, seq, 1001, 65535, 1000);
	seq += 1000;
	// the second segment: ACKed at once
	d.Out(SGW_TCP_F_ACK, 1001, seq);
	EXPECT_FALSE(d.e.Armed(SGW_TCP_T_DELACK));
	// out of order: at once, with SACK absent here (not negotiated), a duplicate ACK
	d.In(SGW_TCP_F_ACK, seq + 1000, 1001, 65535, 1000);
	d.Out(SGW_TCP_F_ACK, 1001, seq);
	// the hole filled: at once, even though it is a single segment
	d.In(SGW_TCP_F_ACK, seq, 1001, 65535, 1000);
	d.Out(SGW_TCP_F_ACK, 1001, seq + 2000);
	seq += 2000;
	// one segment then nothing: the timer, delack_ns later
	d.In(SGW_TCP_F_ACK, seq, 1001, 65535, 1000);
	seq += 1000;
	d.NoMore();
	uint64_t t = d.now;
	d.Fire(SGW_TCP_T_DELACK);
	EXPECT_EQ(d.now, t + 40 * kMs);
	d.Out(SGW_TCP_F_ACK, 1001, seq);
	// a FIN: at once
	d.In(SGW_TCP_F_ACK | SGW_TCP_F_FIN, seq, 1001, 65535, 0);
	d.Out(SGW_TCP_F_ACK, 1001, seq + 1);
	d.NoMore();
	EXPECT_EQ(d.e.st.ctr[SGW_TCP_C_DELACK_FIRED], 1u);
	// the ceiling: more than 200 ms is refused
	sgw_tcp_conf c = DefConf();
	c.delack_ns = 200 * kMs;
	EXPECT_EQ(sgw_tcp_conf_check(&c), nullptr);
	c.delack_ns = 201 * kMs;
	EXPECT_STREQ(sgw_tcp_conf_check(&c), "delack_ns");
}

// A bulk transfer: never more than 2 data segments without an ACK, and no ACK
// of the receiver is later than 40 ms after the data it acknowledges.
TEST(TcpDelack, BulkAcksEverySecondSegment)
{
	Pair p(DefConf());
	p.Open();
	size_t n0 = p.ep[1].sent.size();
	TransferAndCheck(p, 200 * 1448 + 700, 10 * kSec);
	uint64_t data = p.Ctr(0, SGW_TCP_C_DATA_SEGS_OUT);
	uint64_t acks = p.ep[1].sent.size() - n0;
	EXPECT_GE(acks, data / 2);
	EXPECT_LE(acks, data / 2 + 10);
	EXPECT_LE(p.Ctr(1, SGW_TCP_C_DELACK_FIRED), 1u) << "only the odd last segment waits";
}

sgw_tcp_conf
KaConf()
{
	sgw_tcp_conf c = DefConf();
	c.keepalive_idle_ns = 10 * kSec;
	c.keepalive_intvl_ns = 1 * kSec;
	c.keepalive_probes = 3;
	return c;
}

TEST(TcpKeepalive, OffByDefault)
{
	sgw_tcp_conf c = DefConf();
	EXPECT_EQ(c.keepalive_idle_ns, 0u);
	Pair p(c);
	p.Open();
	size_t n0 = p.ep[0].sent.size() + p.ep[1].sent.size();
	p.RunFor(4 * 3600 * kSec);
	EXPECT_EQ(p.ep[0].sent.size() + p.ep[1].sent.size(), n0);
	EXPECT_EQ(p.ep[0].NextTimer(), kNever);
	EXPECT_EQ(p.ep[0].c.state, SGW_TCP_ESTABLISHED);
	c.keepalive_idle_ns = kSec;
	c.keepalive_probes = 0;
	EXPECT_STREQ(sgw_tcp_conf_check(&c), "keepalive_intvl_ns");
}

TEST(TcpKeepalive, AnsweredProbesKeepTheConnection)
{
	Pair p(KaConf(), DefConf());
	p.Open();
	uint64_t t0 = p.now;
	uint64_t last_rcv = (uint64_t)p.ep[0].c.last_rcv_ms * kMs;  // the SYN-ACK, at 20 ms
	EXPECT_EQ(last_rcv, 20 * kMs);
	p.RunFor(35 * kSec);
	// idle 10 s, a probe, the answer: 3 probes in 35 s, one every 10 s (+ RTT)
	EXPECT_EQ(p.Ctr(0, SGW_TCP_C_KEEPALIVE_PROBES), 3u);
	EXPECT_EQ(p.ep[0].c.state, SGW_TCP_ESTABLISHED);
	EXPECT_EQ(p.ep[1].c.state, SGW_TCP_ESTABLISHED);
	// the probe: <SEQ=SND.UNA-1><ACK>, no data
	const Parsed *probe = nullptr;
	for (auto &x : p.ep[0].sent)
		if (x.at > t0) {
			probe = &x;
			break;
		}
	ASSERT_NE(probe, nullptr);
	EXPECT_EQ(probe->s.seq, p.ep[0].c.snd_una - 1);
	EXPECT_EQ(probe->s.flags, SGW_TCP_F_ACK);
	EXPECT_EQ(probe->s.len, 0u);
	EXPECT_EQ(probe->at, last_rcv + 10 * kSec) << "idle from the last segment received";
	// traffic postpones probes: data every 5 s, no probe for a minute
	uint64_t probes = p.Ctr(0, SGW_TCP_C_KEEPALIVE_PROBES);
	for (int i = 0; i < 12; i++) {
		p.Write(1, 100);
		p.RunFor(5 * kSec);
	}
	EXPECT_EQ(p.Ctr(0, SGW_TCP_C_KEEPALIVE_PROBES), probes);
}

TEST(TcpKeepalive, DeadPeerResetAfterProbes)
{
	Pair p(KaConf(), DefConf());
	p.Open();
	uint64_t t0 = p.now;
	uint64_t last_rcv = (uint64_t)p.ep[0].c.last_rcv_ms * kMs;
	// the peer vanishes
	p.script = [](int dir, uint32_t, const sgw_tcp_seg &) {
		Verdict v;
		v.drop = dir == 1;
		return v;
	};
	uint64_t end = 0;
	while (p.Step(t0 + 60 * kSec))
		if (p.ep[0].c.state == SGW_TCP_CLOSED && end == 0)
			end = p.now;
	EXPECT_EQ(p.ep[0].c.state, SGW_TCP_CLOSED);
	EXPECT_EQ(p.ep[0].reason, SGW_TCP_RR_TIMEOUT);
	EXPECT_EQ(p.Ctr(0, SGW_TCP_C_KEEPALIVE_PROBES), 3u);
	EXPECT_EQ(p.Ctr(0, SGW_TCP_C_KEEPALIVE_ABORT), 1u);
	// idle (from the last segment received) + 3 intervals
	EXPECT_EQ(end, last_rcv + 10 * kSec + 3 * kSec);
	EXPECT_EQ(p.ep[0].sent.back().s.flags & SGW_TCP_F_RST, SGW_TCP_F_RST);
	EXPECT_EQ(p.ep[0].NextTimer(), kNever);
	// the peer got the RST (A -> B still works)
	EXPECT_EQ(p.ep[1].c.state, SGW_TCP_CLOSED);
}

TEST(TcpKeepalive, HalfClosedReceiverProbesAndTimeWaitUnaffected)
{
	Pair p(KaConf(), KaConf());
	p.Open();
	// A half-closes: FIN-WAIT-2 with no limit keeps keepalive; B in CLOSE-WAIT too
	p.Shutdown(0);
	p.RunFor(25 * kSec);
	EXPECT_EQ(p.ep[0].c.state, SGW_TCP_FIN_WAIT_2);
	EXPECT_EQ(p.ep[1].c.state, SGW_TCP_CLOSE_WAIT);
	EXPECT_GE(p.Ctr(0, SGW_TCP_C_KEEPALIVE_PROBES) + p.Ctr(1, SGW_TCP_C_KEEPALIVE_PROBES), 2u);
	// B closes: A goes to TIME-WAIT and leaves it after 2 MSL, not at a keepalive time
	p.Shutdown(1);
	uint64_t t = p.now;
	uint64_t closed = 0;
	while (p.Step(t + 200 * kSec))
		if (p.ep[0].c.state == SGW_TCP_CLOSED && closed == 0)
			closed = p.now;
	EXPECT_EQ(p.ep[1].c.state, SGW_TCP_CLOSED);
	EXPECT_EQ(p.ep[0].c.state, SGW_TCP_CLOSED);
	EXPECT_EQ(closed, t + 10 * kMs + 60 * kSec) << "2 MSL after the FIN arrived";
	EXPECT_FALSE(p.ep[0].events & SGW_TCP_EV_RESET);
}

// A's segment at offset x held back and delivered right after the k-th
// later one, before the rest of that one's burst.
struct Overtake {
	explicit Overtake(uint32_t k_) : k(k_) {}
	uint32_t k;
	uint32_t x = 30 * 1448;
	uint32_t after = 0;
	std::vector<uint8_t> held;
	bool done = false;

	Verdict operator()(int dir, const sgw_tcp_seg &s)
	{
		Verdict v;
		if (dir != 0 || s.len == 0 || done)
			return v;
		if (held.empty() && OffA(s) == x) {
			held.assign(s.data - s.hlen, s.data + s.len);
			v.drop = true;
			return v;
		}
		if (!held.empty() && OffA(s) > x && ++after == k) {
			v.then = held;
			done = true;
		}
		return v;
	}
};

// Reordering: one segment overtaken by exactly k later ones. Fewer than
// DupThresh (3) overtakers start no recovery and no retransmission; 3 or more
// look like a loss (a spurious retransmission, as RFC 6675 specifies), and the
// data stays exact either way.
TEST(TcpSack, ReorderingBelowDupThreshIsNotALoss)
{
	for (uint32_t k : {1u, 2u, 3u, 5u}) {
		SCOPED_TRACE(k);
		Pair p(DefConf());
		p.Open();
		Overtake o(k);
		p.script = [&](int dir, uint32_t, const sgw_tcp_seg &s) { return o(dir, s); };
		TimeToAcked(p, 200 * 1448, 10 * kSec);
		ASSERT_TRUE(o.done);
		uint64_t want = k >= 3 ? 1 : 0;
		EXPECT_EQ(p.Ctr(0, SGW_TCP_C_SACK_RECOVERY), want);
		EXPECT_EQ(p.Ctr(0, SGW_TCP_C_FAST_RETX), want);
		EXPECT_EQ(p.Ctr(0, SGW_TCP_C_RETX_SEGS), want);
		EXPECT_EQ(p.Ctr(0, SGW_TCP_C_RTO), 0u);
		EXPECT_EQ(p.Ctr(1, SGW_TCP_C_OOO_SEGS), k);
	}
}

// The network sends every ACK of the receiver four times, and loses nothing.
// With SACK a copy carries no new SACK information, so it is not a duplicate
// ACK (RFC 6675 2) and nothing is retransmitted; without SACK, RFC 5681's
// definition counts the copies and the sender repairs a loss that never was
// (the data stays exact), as any Reno sender without SACK would.
TEST(TcpSack, DuplicatedAcksAreNotALoss)
{
	for (int sack = 1; sack >= 0; sack--) {
		SCOPED_TRACE(sack);
		sgw_tcp_conf c = DefConf();
		c.sack = (uint8_t)sack;
		Pair p(c);
		p.Open();
		p.script = [](int dir, uint32_t, const sgw_tcp_seg &s) {
			Verdict v;
			if (dir == 1 && s.len == 0)
				v.copies = {0, 0, 0};
			return v;
		};
		TransferAndCheck(p, 300000, 10 * kSec);
		EXPECT_GT(p.duplicated[1], 30u);
		EXPECT_EQ(p.Ctr(0, SGW_TCP_C_RTO), 0u);
		if (sack) {
			EXPECT_EQ(p.Ctr(0, SGW_TCP_C_SACK_RECOVERY), 0u);
			EXPECT_EQ(p.Ctr(0, SGW_TCP_C_FAST_RETX), 0u);
			EXPECT_EQ(p.Ctr(0, SGW_TCP_C_RETX_SEGS), 0u);
		} else {
			EXPECT_GE(p.Ctr(0, SGW_TCP_C_FAST_RETX), 1u);
		}
	}
}

// RFC 6675's duplicate ACK: one that SACKs new data. One segment overtaken
// by k = 1 or 2 later ones, and every pure ACK of the receiver delivered four
// times: the k ACKs with a new block count, their copies (the same blocks
// again) do not, so nothing is repaired that was not lost. An ACK whose every
// block is bad (outside what was sent) counts the RFC 5681 way, as an ACK
// without SACK would (DsackAndHostileBlocksIgnoredScoreboardBounded).
TEST(TcpSack, CopiedSackAcksAreNotALoss)
{
	for (uint32_t k : {1u, 2u}) {
		SCOPED_TRACE(k);
		Pair p(DefConf());
		p.Open();
		Overtake o(k);
		p.script = [&](int dir, uint32_t, const sgw_tcp_seg &s) {
			if (dir == 1 && s.len == 0) {
				Verdict v;
				v.copies = {0, 0, 0};
				return v;
			}
			return o(dir, s);
		};
		TimeToAcked(p, 200 * 1448, 10 * kSec);
		ASSERT_TRUE(o.done);
		EXPECT_GT(p.duplicated[1], 100u);
		EXPECT_EQ(p.Ctr(0, SGW_TCP_C_DUPACKS_IN), k);
		EXPECT_EQ(p.Ctr(0, SGW_TCP_C_SACK_RECOVERY), 0u);
		EXPECT_EQ(p.Ctr(0, SGW_TCP_C_FAST_RETX), 0u);
		EXPECT_EQ(p.Ctr(0, SGW_TCP_C_RETX_SEGS), 0u);
		EXPECT_EQ(p.Ctr(0, SGW_TCP_C_RTO), 0u);
	}
}

TEST(TcpConf, DefaultsValidAndChecked)
{
	sgw_tcp_conf c = DefConf();
	EXPECT_EQ(sgw_tcp_conf_check(&c), nullptr);
	c.delack_ns = 600 * kMs;
	EXPECT_STREQ(sgw_tcp_conf_check(&c), "delack_ns");
	c = DefConf();
	c.rto_min_ns = 0;
	EXPECT_STREQ(sgw_tcp_conf_check(&c), "rto_min_ns");
	EXPECT_STREQ(sgw_tcp_state_name(SGW_TCP_CLOSE_WAIT), "CLOSE-WAIT");
	EXPECT_STREQ(sgw_tcp_ctr_name(SGW_TCP_C_PAWS_DROP), "paws_drop");
	EXPECT_EQ(sizeof(sgw_tcp_conn), 256u);
	EXPECT_EQ(sizeof(sgw_tcp_sb), 64u);
	EXPECT_STREQ(sgw_tcp_ctr_name(SGW_TCP_C_SB_NOMEM_RECOVERY), "sb_nomem_recovery");
}

}  // namespace
