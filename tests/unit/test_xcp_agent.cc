// SPDX-License-Identifier: BSD-3-Clause
// Tests of lib/sgw_xcp_agent.c, the XCP host agent's logic, in virtual time:
// header insert / strip round trips (IPv4 with options, IPv6 with extension
// headers, TCP options), checksums checked by recomputing them, the window
// clamp (never retracts a right edge, window scale from the handshake, the
// checksum), cwnd_xcp following the returned feedback, the receiver's sum
// of feedback per ACK, the RTT timer (Karn), the bounded flow table and
// malformed input counted by reason.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "sgw_xcp_agent.h"
#include "test_rng.h"

namespace {

constexpr uint8_t kProto = 254;
constexpr uint64_t kMs = 1000000ull;
using Bytes = std::vector<uint8_t>;

uint16_t
Get16(const uint8_t *p)
{
	return static_cast<uint16_t>(p[0] << 8 | p[1]);
}

void
Put16(uint8_t *p, uint16_t v)
{
	p[0] = static_cast<uint8_t>(v >> 8);
	p[1] = static_cast<uint8_t>(v);
}

void
Put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = static_cast<uint8_t>(v >> (24 - 8 * i));
}

uint32_t
Get32(const uint8_t *p)
{
	return static_cast<uint32_t>(p[0]) << 24 | static_cast<uint32_t>(p[1]) << 16 |
	       static_cast<uint32_t>(p[2]) << 8 | p[3];
}

uint32_t
SumWords(const uint8_t *p, size_t n, uint32_t s = 0)
{
	for (size_t i = 0; i + 1 < n; i += 2)
		s += Get16(p + i);
	if (n & 1)
		s += static_cast<uint32_t>(p[n - 1]) << 8;
	return s;
}

uint16_t
Fold(uint32_t s)
{
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return static_cast<uint16_t>(~s);
}

// Independent walk of the IP headers (no XCP): where TCP starts.
struct Loc {
	int ver;
	size_t ip_len, tcp_off;
	uint8_t proto;
	size_t ihl;
};

Loc
Walk(const Bytes &b)
{
	Loc l{};
	l.ver = b[0] >> 4;
	if (l.ver == 4) {
		l.ihl = (b[0] & 15) * 4u;
		l.ip_len = Get16(&b[2]);
		l.proto = b[9];
		l.tcp_off = l.ihl;
	} else {
		l.ip_len = 40u + Get16(&b[4]);
		uint8_t nh = b[6];
		size_t off = 40;
		while (nh == 0 || nh == 43 || nh == 60) {
			nh = b[off];
			off += (b[off + 1] + 1u) * 8u;
		}
		l.proto = nh;
		l.tcp_off = off;
	}
	if (l.proto == kProto) {
		l.proto = b[l.tcp_off];
		l.tcp_off += b[l.tcp_off + 2] * 4u;
	}
	return l;
}

bool
Ip4CsumOk(const Bytes &b)
{
	return Fold(SumWords(b.data(), (b[0] & 15) * 4u)) == 0;
}

// The TCP checksum as a receiver checks it: pseudo-header with protocol 6 and
// the TCP length, over TCP only (the XCP header, if any, is skipped).
bool
TcpCsumOk(const Bytes &b)
{
	Loc l = Walk(b);
	size_t tl = l.ip_len - l.tcp_off;
	uint32_t s = 0;
	if (l.ver == 4)
		s = SumWords(&b[12], 8);
	else
		s = SumWords(&b[8], 32);
	s += 6 + static_cast<uint32_t>(tl >> 16) + static_cast<uint32_t>(tl & 0xffff);
	s = SumWords(&b[l.tcp_off], tl, s);
	return Fold(s) == 0;
}

struct Seg {
	int ver = 4;
	uint8_t src = 1, dst = 2;  // last address byte
	uint16_t sport = 40000, dport = 5001;
	uint32_t seq = 1000, ack = 0;
	uint8_t flags = SGW_XCPA_TH_ACK;
	uint16_t wnd = 1000;
	size_t pay = 100;
	size_t ip_opts = 0;        // IPv4 option bytes (multiple of 4)
	size_t ext = 0;            // IPv6: number of 8-byte dest-option headers
	Bytes tcp_opts;            // multiple of 4
	uint8_t fill = 0;
};

void
FixTcpCsum(Bytes &b)
{
	Loc l = Walk(b);
	b[l.tcp_off + 16] = 0;
	b[l.tcp_off + 17] = 0;
	size_t tl = l.ip_len - l.tcp_off;
	uint32_t s = l.ver == 4 ? SumWords(&b[12], 8) : SumWords(&b[8], 32);
	s += 6 + static_cast<uint32_t>(tl);
	s = SumWords(&b[l.tcp_off], tl, s);
	Put16(&b[l.tcp_off + 16], Fold(s));
}

Bytes
Build(const Seg &s)
{
	Bytes b;
	size_t th = 20 + s.tcp_opts.size();
	if (s.ver == 4) {
		size_t ihl = 20 + s.ip_opts;
		b.assign(ihl + th + s.pay, 0);
		b[0] = static_cast<uint8_t>(0x40 | (ihl / 4));
		Put16(&b[2], static_cast<uint16_t>(b.size()));
		Put16(&b[4], 0x1234);
		b[6] = 0x40;  // DF
		b[8] = 64;
		b[9] = 6;
		b[12] = 10;
		b[15] = s.src;
		b[16] = 10;
		b[19] = s.dst;
		for (size_t i = 0; i < s.ip_opts; i++)
			b[20 + i] = 1;  // NOPs
		uint32_t sum = SumWords(b.data(), ihl);
		Put16(&b[10], Fold(sum));
	} else {
		size_t eh = 8 * s.ext;
		b.assign(40 + eh + th + s.pay, 0);
		b[0] = 0x60;
		b[1] = 0x01;
		b[3] = 0x23;
		Put16(&b[4], static_cast<uint16_t>(eh + th + s.pay));
		b[6] = s.ext ? 60 : 6;
		b[7] = 64;
		b[8] = 0xfd;
		b[23] = s.src;
		b[24] = 0xfd;
		b[39] = s.dst;
		for (size_t i = 0; i < s.ext; i++) {
			size_t o = 40 + 8 * i;
			b[o] = i + 1 < s.ext ? 60 : 6;
			b[o + 1] = 0;
			b[o + 2] = 1;  // PadN of 4
			b[o + 3] = 4;
		}
	}
	Loc l = Walk(b);
	uint8_t *t = &b[l.tcp_off];
	Put16(t, s.sport);
	Put16(t + 2, s.dport);
	Put32(t + 4, s.seq);
	Put32(t + 8, s.ack);
	t[12] = static_cast<uint8_t>((th / 4) << 4);
	t[13] = s.flags;
	Put16(t + 14, s.wnd);
	std::copy(s.tcp_opts.begin(), s.tcp_opts.end(), t + 20);
	for (size_t i = 0; i < s.pay; i++)
		t[th + i] = static_cast<uint8_t>(s.fill + i * 7);
	FixTcpCsum(b);
	return b;
}

Bytes
SynOpts(uint16_t mss, int ws)
{
	Bytes o = {2, 4, static_cast<uint8_t>(mss >> 8), static_cast<uint8_t>(mss)};
	if (ws >= 0) {
		o.push_back(1);
		o.push_back(3);
		o.push_back(3);
		o.push_back(static_cast<uint8_t>(ws));
	}
	return o;
}

struct Agent {
	sgw_xcpa a{};
	std::vector<sgw_xcpa_flow> mem;
	explicit Agent(uint8_t role, uint32_t flows = 64, const sgw_xcpa_conf *cc = nullptr)
	{
		sgw_xcpa_conf c;
		sgw_xcpa_conf_default(&c);
		if (cc != nullptr)
			c = *cc;
		c.role = role;
		mem.resize(flows);
		EXPECT_EQ(sgw_xcpa_init(&a, &c, mem.data(), mem.size() * sizeof(mem[0])), 0);
	}
	// Run a packet through out(); the buffer grows by the room given.
	sgw_xcpa_verdict Out(Bytes &b, uint64_t now)
	{
		size_t len = b.size();
		b.resize(len + 64);
		sgw_xcpa_verdict v = sgw_xcpa_out(&a, b.data(), &len, b.size(), now);
		b.resize(len);
		return v;
	}
	sgw_xcpa_verdict In(Bytes &b, uint64_t now)
	{
		size_t len = b.size();
		sgw_xcpa_verdict v = sgw_xcpa_in(&a, b.data(), &len, now);
		b.resize(len);
		return v;
	}
	uint64_t C(sgw_xcpa_ctr c) const { return a.ctr[c]; }
	const sgw_xcpa_flow *Flow(const Seg &out_seg, uint64_t now) const
	{
		uint8_t l[16] = {}, r[16] = {};
		if (out_seg.ver == 4) {
			l[0] = r[0] = 10;
			l[3] = out_seg.src;
			r[3] = out_seg.dst;
		} else {
			l[0] = r[0] = 0xfd;
			l[15] = out_seg.src;
			r[15] = out_seg.dst;
		}
		return sgw_xcpa_find(&a, static_cast<uint8_t>(out_seg.ver), l, out_seg.sport, r,
				     out_seg.dport, now);
	}
};

// The reverse of an outgoing segment's addressing: a segment from the peer.
Seg
Reverse(Seg s)
{
	std::swap(s.src, s.dst);
	std::swap(s.sport, s.dport);
	return s;
}

sgw_xcp_fields
XcpOf(const Bytes &b)
{
	sgw_xcpa_pkt pk{};
	EXPECT_EQ(sgw_xcpa_locate(b.data(), b.size(), kProto, &pk), SGW_XCPA_OK);
	EXPECT_NE(pk.xcp_len, 0);
	return pk.xcp;
}

// ---- insert / strip ----

TEST(XcpAgentCodec, InsertStripRoundTripIsByteExact)
{
	Rng rng(11);
	for (int it = 0; it < 3000; it++) {
		Seg s;
		s.ver = rng.Chance(0.5) ? 4 : 6;
		s.pay = rng.Range(0, 1400);
		s.ip_opts = s.ver == 4 ? 4 * rng.Range(0, 10) : 0;
		s.ext = s.ver == 6 ? rng.Range(0, 3) : 0;
		s.tcp_opts.assign(4 * rng.Range(0, 10), 1);
		s.seq = static_cast<uint32_t>(rng.Next());
		s.flags = static_cast<uint8_t>(rng.Range(0, 63));
		s.fill = static_cast<uint8_t>(rng.Next());
		const Bytes orig = Build(s);
		ASSERT_TRUE(TcpCsumOk(orig));

		Bytes b = orig;
		b.resize(orig.size() + 20);
		sgw_xcpa_pkt pk{};
		ASSERT_EQ(sgw_xcpa_locate(b.data(), orig.size(), kProto, &pk), SGW_XCPA_OK);
		sgw_xcp_fields f{};
		f.rtt_us = static_cast<uint32_t>(rng.Next());
		f.cwnd = static_cast<uint32_t>(rng.Next());
		f.feedback = static_cast<int32_t>(rng.Next());
		size_t n = sgw_xcpa_insert(b.data(), b.size(), &pk, kProto, &f);
		ASSERT_EQ(n, orig.size() + 20);
		b.resize(n);
		// The packet now carries IP | XCP | TCP, valid checksums.
		if (s.ver == 4) {
			EXPECT_EQ(b[9], kProto);
			EXPECT_EQ(Get16(&b[2]), n);
			EXPECT_TRUE(Ip4CsumOk(b));
		} else {
			EXPECT_EQ(Get16(&b[4]) + 40u, n);
		}
		EXPECT_TRUE(TcpCsumOk(b)) << "it " << it;
		sgw_xcpa_pkt pk2{};
		ASSERT_EQ(sgw_xcpa_locate(b.data(), b.size(), kProto, &pk2), SGW_XCPA_OK);
		EXPECT_EQ(pk2.xcp_len, 20);
		EXPECT_EQ(pk2.xcp.next, 6);
		EXPECT_EQ(pk2.xcp.rtt_us, f.rtt_us);
		EXPECT_EQ(pk2.xcp.cwnd, f.cwnd);
		EXPECT_EQ(pk2.xcp.feedback, f.feedback);
		EXPECT_EQ(pk2.seq, s.seq);
		EXPECT_EQ(pk2.pay_len, s.pay);
		// And back.
		EXPECT_EQ(sgw_xcpa_strip(b.data(), &pk2), orig.size());
		b.resize(orig.size());
		ASSERT_EQ(b, orig) << "it " << it;
	}
}

TEST(XcpAgentCodec, InsertNeedsRoomAndLength)
{
	Seg s;
	s.pay = 10;
	Bytes b = Build(s);
	sgw_xcpa_pkt pk{};
	ASSERT_EQ(sgw_xcpa_locate(b.data(), b.size(), kProto, &pk), SGW_XCPA_OK);
	sgw_xcp_fields f{};
	const Bytes orig = b;
	b.resize(b.size() + 19);
	EXPECT_EQ(sgw_xcpa_insert(b.data(), b.size(), &pk, kProto, &f), 0u);
	EXPECT_TRUE(std::equal(orig.begin(), orig.end(), b.begin()));
	// An IPv4 datagram of 65520 bytes cannot grow by 20.
	s.pay = 65520 - 40;
	Bytes big = Build(s);
	ASSERT_EQ(sgw_xcpa_locate(big.data(), big.size(), kProto, &pk), SGW_XCPA_OK);
	big.resize(big.size() + 20);
	EXPECT_EQ(sgw_xcpa_insert(big.data(), big.size(), &pk, kProto, &f), 0u);
}

// ---- the agent pair: sender out -> receiver in, receiver out -> sender in ----

struct Pair {
	Agent snd{SGW_XCPA_SENDER};
	Agent rcv{SGW_XCPA_RECEIVER};
	Seg base;  // the sender's outgoing addressing
	uint32_t iss = 5000, irs = 90000;
	uint64_t now = 0;
	int ws_s = 7, ws_r = 7;

	// Handshake through both agents; returns the SYN-ACK as the sender's kernel sees it.
	Bytes Handshake(uint16_t synack_wnd = 65535)
	{
		Seg syn = base;
		syn.flags = SGW_XCPA_TH_SYN;
		syn.seq = iss;
		syn.pay = 0;
		syn.tcp_opts = SynOpts(1460, ws_s);
		Bytes b = Build(syn);
		EXPECT_EQ(snd.Out(b, now), SGW_XCPA_SEND);
		EXPECT_EQ(rcv.In(b, now), SGW_XCPA_SEND);
		Seg sa = Reverse(base);
		sa.flags = SGW_XCPA_TH_SYN | SGW_XCPA_TH_ACK;
		sa.seq = irs;
		sa.ack = iss + 1;
		sa.pay = 0;
		sa.wnd = synack_wnd;
		sa.tcp_opts = SynOpts(1400, ws_r);
		Bytes r = Build(sa);
		EXPECT_EQ(rcv.Out(r, now), SGW_XCPA_SEND);
		now += 600 * kMs;
		snd.In(r, now);
		return r;
	}
	Bytes Data(uint32_t seq, size_t pay)
	{
		Seg d = base;
		d.seq = seq;
		d.ack = irs + 1;
		d.pay = pay;
		return Build(d);
	}
	Bytes Ack(uint32_t ack, uint16_t wnd)
	{
		Seg a = Reverse(base);
		a.seq = irs + 1;
		a.ack = ack;
		a.wnd = wnd;
		a.pay = 0;
		return Build(a);
	}
};

TEST(XcpAgent, SenderToReceiverRoundTripIsByteExact)
{
	for (int ver : {4, 6}) {
		Pair p;
		p.base.ver = ver;
		p.base.ip_opts = ver == 4 ? 8 : 0;
		p.base.ext = ver == 6 ? 2 : 0;
		p.Handshake();
		for (int i = 0; i < 20; i++) {
			const Bytes orig = p.Data(p.iss + 1 + 1000u * i, 1000);
			Bytes b = orig;
			ASSERT_EQ(p.snd.Out(b, p.now), SGW_XCPA_SEND);
			EXPECT_EQ(b.size(), orig.size() + 20);
			EXPECT_TRUE(TcpCsumOk(b));
			if (ver == 4) {
				EXPECT_TRUE(Ip4CsumOk(b));
			}
			sgw_xcp_fields f = XcpOf(b);
			EXPECT_EQ(f.next, 6);
			EXPECT_EQ(f.rtt_us, 600000u);  // the SYN's round trip
			EXPECT_GT(f.feedback, 0);
			ASSERT_EQ(p.rcv.In(b, p.now), SGW_XCPA_SEND);
			ASSERT_EQ(b, orig) << "v" << ver << " seg " << i;
		}
		// The receiver's ACK: header with the reverse feedback, then back to
		// plain at the sender (window untouched while cwnd_xcp is above it).
		const Bytes ack = p.Ack(p.iss + 1 + 2000, 30);
		Bytes b = ack;
		ASSERT_EQ(p.rcv.Out(b, p.now), SGW_XCPA_SEND);
		EXPECT_TRUE(TcpCsumOk(b));
		sgw_xcp_fields f = XcpOf(b);
		EXPECT_TRUE(f.flags & SGW_XCPW_F_REVERSE);
		EXPECT_GT(f.reverse, 0);
		ASSERT_NE(p.snd.In(b, p.now), SGW_XCPA_DROP);
		EXPECT_EQ(b, ack);
	}
}

TEST(XcpAgent, ReceiverEchoesTheSumOfFeedbackSinceItsLastAck)
{
	Agent rcv(SGW_XCPA_RECEIVER);
	Seg s;
	int32_t fbs[] = {100, 250, -30};
	for (int32_t fb : fbs) {
		Bytes b = Build(s);
		sgw_xcpa_pkt pk{};
		ASSERT_EQ(sgw_xcpa_locate(b.data(), b.size(), kProto, &pk), SGW_XCPA_OK);
		sgw_xcp_fields f{};
		f.feedback = fb;
		f.rtt_us = 1;
		b.resize(b.size() + 20);
		b.resize(sgw_xcpa_insert(b.data(), b.size(), &pk, kProto, &f));
		ASSERT_EQ(rcv.In(b, 0), SGW_XCPA_SEND);
		s.seq += 100;
	}
	Seg a = Reverse(s);
	a.pay = 0;
	Bytes b = Build(a);
	ASSERT_EQ(rcv.Out(b, 0), SGW_XCPA_SEND);
	EXPECT_EQ(XcpOf(b).reverse, 320);
	EXPECT_EQ(rcv.C(SGW_XCPA_C_ECHO_SEGS), 3u);
	// Nothing arrived since: the next ACK returns 0.
	b = Build(a);
	ASSERT_EQ(rcv.Out(b, 0), SGW_XCPA_SEND);
	EXPECT_EQ(XcpOf(b).reverse, 0);
	EXPECT_TRUE(XcpOf(b).flags & SGW_XCPW_F_REVERSE);
	EXPECT_EQ(rcv.C(SGW_XCPA_C_ECHOED), 2u);
}

TEST(XcpAgent, ReceiverEchoKnobOverridesTheSum)
{
	sgw_xcpa_conf c;
	sgw_xcpa_conf_default(&c);
	c.echo_fixed = 1;
	c.echo_value = -5000;
	Agent rcv(SGW_XCPA_RECEIVER, 64, &c);
	Seg a;
	a.pay = 0;
	Bytes b = Build(a);
	ASSERT_EQ(rcv.Out(b, 0), SGW_XCPA_SEND);
	EXPECT_EQ(XcpOf(b).reverse, -5000);
}

// ---- cwnd_xcp and the window clamp ----

Bytes
WithReverse(Bytes b, int32_t rev)
{
	sgw_xcpa_pkt pk{};
	EXPECT_EQ(sgw_xcpa_locate(b.data(), b.size(), kProto, &pk), SGW_XCPA_OK);
	sgw_xcp_fields f{};
	f.flags = SGW_XCPW_F_REVERSE;
	f.reverse = rev;
	b.resize(b.size() + 20);
	b.resize(sgw_xcpa_insert(b.data(), b.size(), &pk, kProto, &f));
	return b;
}

TEST(XcpAgent, CwndXcpFollowsFeedbackWithAnMssFloor)
{
	Pair p;
	p.Handshake();
	const sgw_xcpa_flow *fl = p.snd.Flow(p.base, p.now);
	ASSERT_NE(fl, nullptr);
	EXPECT_EQ(fl->mss, 1400u);  // the smaller of the two SYNs' MSS
	uint32_t c0 = fl->cwnd_xcp;
	EXPECT_EQ(c0, 10u * 1400u);  // 10 MSS, set again at the SYN-ACK's MSS
	// 1 MB sent and in flight: increases stay below the cap (2 x in flight + 2 MSS).
	for (uint32_t o = 0; o < 1000000; o += 1000) {
		Bytes d = p.Data(p.iss + 1 + o, 1000);
		p.snd.Out(d, p.now);
	}
	int64_t want = c0;
	Rng rng(3);
	for (int i = 0; i < 200; i++) {
		int32_t fb = static_cast<int32_t>(rng.Range(0, 4000)) - 2000;
		Bytes b = WithReverse(p.Ack(p.iss + 1, 1000), fb);
		p.snd.In(b, p.now);
		want = std::max<int64_t>(want + fb, 1400);
		ASSERT_EQ(fl->cwnd_xcp, static_cast<uint32_t>(want)) << i;
	}
	Bytes b = WithReverse(p.Ack(p.iss + 1, 1000), -100000000);
	p.snd.In(b, p.now);
	EXPECT_EQ(fl->cwnd_xcp, 1400u);
	EXPECT_GE(p.snd.C(SGW_XCPA_C_CWND_FLOOR), 1u);
	// 200 ACKs, the last one and the SYN-ACK (reverse 0).
	EXPECT_EQ(p.snd.C(SGW_XCPA_C_FEEDBACK), 202u);
}

// A flow held below cwnd_xcp by another bottleneck (scenario (d)): positive
// feedback raises cwnd_xcp to 2 x in flight + 2 MSS at most; the cap never
// lowers it; negative feedback still does.
TEST(XcpAgent, CwndXcpIncreaseCappedAtTwiceInFlight)
{
	Pair p;
	p.Handshake();
	const sgw_xcpa_flow *fl = p.snd.Flow(p.base, p.now);
	ASSERT_NE(fl, nullptr);
	ASSERT_EQ(fl->mss, 1400u);
	uint32_t nxt = p.iss + 1;
	for (int i = 0; i < 10; i++) {
		Bytes d = p.Data(nxt, 1400);
		p.snd.Out(d, p.now);
		nxt += 1400;
	}
	// Nothing acknowledged yet: 14000 in flight, the cap 2 x 14000 + 2 x 1400.
	Bytes b = WithReverse(p.Ack(p.iss + 1, 1000), 1000000);
	p.snd.In(b, p.now);
	EXPECT_EQ(fl->cwnd_xcp, 30800u);
	EXPECT_EQ(p.snd.C(SGW_XCPA_C_CWND_CAPPED), 1u);
	// Below the cap an increase is applied whole.
	b = WithReverse(p.Ack(p.iss + 1, 1000), -10000);
	p.snd.In(b, p.now);
	EXPECT_EQ(fl->cwnd_xcp, 20800u);
	b = WithReverse(p.Ack(p.iss + 1, 1000), 5000);
	p.snd.In(b, p.now);
	EXPECT_EQ(fl->cwnd_xcp, 25800u);
	EXPECT_EQ(p.snd.C(SGW_XCPA_C_CWND_CAPPED), 1u);
	// All acknowledged (nothing in flight, cap 2800 < cwnd_xcp): an increase is
	// refused, cwnd_xcp is not lowered to the cap, a decrease applies.
	b = WithReverse(p.Ack(nxt, 1000), 5000);
	p.snd.In(b, p.now);
	EXPECT_EQ(fl->cwnd_xcp, 25800u);
	EXPECT_EQ(p.snd.C(SGW_XCPA_C_CWND_CAPPED), 2u);
	b = WithReverse(p.Ack(nxt, 1000), -1000);
	p.snd.In(b, p.now);
	EXPECT_EQ(fl->cwnd_xcp, 24800u);
	EXPECT_STREQ(sgw_xcpa_ctr_name(SGW_XCPA_C_CWND_CAPPED), "cwnd_capped");
}

// Loss recovery behind another bottleneck: the cumulative ACK stalls while the
// kernel sends a reduced window per round trip. The cap follows what was sent
// in the last round trip (the kernel's window in use), not the sequence-space
// flight, which keeps growing (scenario (d) in docs/xcp.md).
TEST(XcpAgent, CwndXcpCapFollowsWhatWasSentInARoundTrip)
{
	Pair p;
	p.Handshake();  // the SYN timed: srtt 600 ms, now 600 ms
	const sgw_xcpa_flow *fl = p.snd.Flow(p.base, p.now);
	ASSERT_NE(fl, nullptr);
	ASSERT_EQ(fl->rtt.srtt_us, 600000u);
	ASSERT_EQ(fl->cwnd_xcp, 14000u);
	const uint64_t rtt = 600 * kMs;
	uint32_t nxt = p.iss + 1;
	auto send = [&](int n) {
		for (int i = 0; i < n; i++) {
			Bytes d = p.Data(nxt, 1400);
			p.snd.Out(d, p.now);
			nxt += 1400;
		}
	};
	send(20);  // round 1: 28000 bytes
	p.now += rtt;
	Bytes b = WithReverse(p.Ack(p.iss + 1 + 14000, 1000), 0);  // half acked, then a loss
	p.snd.In(b, p.now);
	send(8);   // round 2: the window cut in recovery, 11200 bytes
	p.now += rtt;
	send(8);   // round 3: 11200 bytes; the cumulative ACK still at the hole
	b = WithReverse(p.Ack(p.iss + 1 + 14000, 1000), 1000000);
	p.snd.In(b, p.now);
	// Flight in sequence space 36400 (cap 75600); sent per round trip 11200.
	EXPECT_EQ(fl->cwnd_xcp, 2u * 11200u + 2u * 1400u);
	EXPECT_EQ(p.snd.C(SGW_XCPA_C_CWND_CAPPED), 1u);
	EXPECT_EQ(p.snd.C(SGW_XCPA_C_CWND_CAP_SENT), 1u);
	// Idle for two round trips, then one segment: the last round sent
	// nothing, so an increase is held; the cap does not lower cwnd_xcp.
	p.now += 3 * rtt;
	send(1);
	b = WithReverse(p.Ack(p.iss + 1 + 14000, 1000), 50000);
	p.snd.In(b, p.now);
	EXPECT_EQ(fl->cwnd_xcp, 25200u);
	EXPECT_EQ(p.snd.C(SGW_XCPA_C_CWND_CAP_SENT), 2u);
	// Negative feedback still applies whole.
	b = WithReverse(p.Ack(p.iss + 1 + 14000, 1000), -5000);
	p.snd.In(b, p.now);
	EXPECT_EQ(fl->cwnd_xcp, 20200u);
	// Everything acknowledged, a full round sent again, half of it
	// acknowledged: the sequence flight is the smaller and binds.
	b = WithReverse(p.Ack(nxt - 1400, 1000), 0);
	p.snd.In(b, p.now);
	p.now += rtt;
	send(20);  // 28000 in the round; half of it acknowledged: 14000 in flight
	b = WithReverse(p.Ack(nxt - 14000, 1000), 1000000);
	p.snd.In(b, p.now);
	EXPECT_EQ(fl->cwnd_xcp, 2u * 14000u + 2u * 1400u);
	EXPECT_EQ(p.snd.C(SGW_XCPA_C_CWND_CAP_SENT), 2u) << "the flight bound, not the round";
	EXPECT_STREQ(sgw_xcpa_ctr_name(SGW_XCPA_C_CWND_CAP_SENT), "cwnd_capped_by_sent");
}

TEST(XcpAgent, ClampUsesTheWindowScaleOfTheHandshake)
{
	Pair p;
	p.ws_s = 2;
	p.ws_r = 9;  // the receiver's windows are in units of 512 bytes
	p.Handshake();
	const sgw_xcpa_flow *fl = p.snd.Flow(p.base, p.now);
	for (uint32_t o = 0; o < 21000; o += 1000) {  // 21000 in flight: room to grow
		Bytes d = p.Data(p.iss + 1 + o, 1000);
		p.snd.Out(d, p.now);
	}
	// Bring cwnd_xcp to 20000 bytes.
	Bytes b = WithReverse(p.Ack(p.iss + 1, 1000), 20000 - static_cast<int32_t>(fl->cwnd_xcp));
	ASSERT_EQ(p.snd.In(b, p.now), SGW_XCPA_SEND);
	ASSERT_EQ(fl->cwnd_xcp, 20000u);
	Loc l = Walk(b);
	EXPECT_EQ(Get16(&b[l.tcp_off + 14]), 20000u >> 9);  // 39 units = 19968 bytes
	EXPECT_TRUE(TcpCsumOk(b));
	EXPECT_EQ(fl->peer_wnd, 1000u << 9);
	// Without a window scale option on one side, windows are not scaled.
	Pair q;
	q.ws_s = -1;
	q.ws_r = 9;
	q.Handshake();
	b = WithReverse(q.Ack(q.iss + 1, 60000), 0);
	q.snd.In(b, q.now);
	const sgw_xcpa_flow *fq = q.snd.Flow(q.base, q.now);
	l = Walk(b);
	EXPECT_EQ(Get16(&b[l.tcp_off + 14]), fq->cwnd_xcp);
}

TEST(XcpAgent, NoHandshakeSeenNoClamp)
{
	Agent snd(SGW_XCPA_SENDER);
	Seg s;
	Bytes d = Build(s);
	snd.Out(d, 0);
	Seg a = Reverse(s);
	a.pay = 0;
	a.wnd = 65535;
	const Bytes plain = Build(a);
	Bytes b = WithReverse(plain, -1000000);
	ASSERT_EQ(snd.In(b, 0), SGW_XCPA_SEND);
	EXPECT_EQ(b, plain);  // stripped only: the scale is unknown
	EXPECT_EQ(snd.C(SGW_XCPA_C_NO_SCALE), 1u);
	EXPECT_EQ(snd.C(SGW_XCPA_C_CLAMPED), 0u);
}

// Random ACK streams against the clamp: the right edge the kernel sees never
// moves left, the field never exceeds the original, checksums stay valid.
TEST(XcpAgentClamp, NeverRetractsAnAdvertisedRightEdge)
{
	Rng rng(7);
	int tot_lowered = 0, tot_held = 0;
	for (int run = 0; run < 200; run++) {
		uint8_t shift = static_cast<uint8_t>(rng.Range(0, 14));
		sgw_xcpa_edge e{};
		uint32_t ack = static_cast<uint32_t>(rng.Next());
		uint32_t max_edge = 0;
		bool have = false;
		int lowered = 0, held = 0;
		for (int i = 0; i < 300; i++) {
			Seg a;
			a.pay = 0;
			a.ack = ack;
			a.wnd = static_cast<uint16_t>(rng.Range(1, 65535));
			Bytes b = Build(a);
			uint32_t limit = static_cast<uint32_t>(rng.Range(1, 4u << 20));
			bool h = false;
			int r = sgw_xcpa_clamp_window(&b[20], b.size() - 20, shift, limit, &e, &h);
			ASSERT_GE(r, 0);
			uint16_t w = Get16(&b[34]);
			ASSERT_LE(w, a.wnd);
			ASSERT_GE(w, 1);
			ASSERT_EQ(r == 1, w != a.wnd);
			ASSERT_TRUE(TcpCsumOk(b));
			uint32_t edge = ack + (static_cast<uint32_t>(w) << shift);
			uint32_t orig_edge = ack + (static_cast<uint32_t>(a.wnd) << shift);
			if (have && static_cast<int32_t>(edge - max_edge) < 0) {
				// Only when the receiver itself offered less: then the
				// original goes through.
				ASSERT_EQ(w, a.wnd) << "run " << run << " i " << i;
				ASSERT_LT(static_cast<int32_t>(orig_edge - max_edge), 0);
			}
			if (!have || static_cast<int32_t>(edge - max_edge) > 0)
				max_edge = edge;
			have = true;
			lowered += r;
			held += h;
			// ACKs mostly advance, sometimes repeat or come late.
			int mv = static_cast<int>(rng.Range(0, 10));
			if (mv < 7)
				ack += static_cast<uint32_t>(rng.Range(0, 3000));
			else if (mv == 7)
				ack -= static_cast<uint32_t>(rng.Range(0, 1000));
		}
		tot_lowered += lowered;
		tot_held += held;
	}
	EXPECT_GT(tot_lowered, 1000);
	EXPECT_GT(tot_held, 100);
}

TEST(XcpAgentClamp, HoldsTheEdgeWhenCwndXcpFalls)
{
	sgw_xcpa_edge e{};
	Seg a;
	a.pay = 0;
	a.ack = 1000;
	a.wnd = 60000;
	Bytes b = Build(a);
	EXPECT_EQ(sgw_xcpa_clamp_window(&b[20], b.size() - 20, 0, 40000, &e, nullptr), 1);
	EXPECT_EQ(Get16(&b[34]), 40000);  // edge 41000
	// cwnd_xcp falls to 5000 at ack 11000: the field holds the edge at 41000.
	a.ack = 11000;
	b = Build(a);
	bool held = false;
	EXPECT_EQ(sgw_xcpa_clamp_window(&b[20], b.size() - 20, 0, 5000, &e, &held), 1);
	EXPECT_EQ(Get16(&b[34]), 30000);
	EXPECT_TRUE(held);
	// At ack 41000 it reaches 5000.
	a.ack = 41000;
	b = Build(a);
	EXPECT_EQ(sgw_xcpa_clamp_window(&b[20], b.size() - 20, 0, 5000, &e, &held), 1);
	EXPECT_EQ(Get16(&b[34]), 5000);
	EXPECT_FALSE(held);
	// Scaled: the edge is rounded up to whole units.
	sgw_xcpa_edge e2{};
	a.ack = 0;
	a.wnd = 1000;
	b = Build(a);
	sgw_xcpa_clamp_window(&b[20], b.size() - 20, 7, 100 * 128, &e2, nullptr);
	EXPECT_EQ(Get16(&b[34]), 100);  // edge 12800
	a.ack = 1;
	b = Build(a);
	sgw_xcpa_clamp_window(&b[20], b.size() - 20, 7, 128, &e2, nullptr);
	EXPECT_EQ(Get16(&b[34]), 100);  // 99 units would end at 12673 < 12800
	// Never zero, never for a non-ACK.
	a.ack = 50000;
	b = Build(a);
	sgw_xcpa_clamp_window(&b[20], b.size() - 20, 14, 1, &e2, nullptr);
	EXPECT_EQ(Get16(&b[34]), 1);
	a.flags = SGW_XCPA_TH_SYN;
	b = Build(a);
	EXPECT_EQ(sgw_xcpa_clamp_window(&b[20], b.size() - 20, 0, 1, &e2, nullptr), -1);
}

// A kernel-like sender that obeys rwnd: bytes in flight stay at most cwnd_xcp
// (after the edge the kernel already had is used up).
TEST(XcpAgent, KernelHeldToCwndXcp)
{
	Pair p;
	const Bytes synack = p.Handshake();
	const sgw_xcpa_flow *fl = p.snd.Flow(p.base, p.now);
	// The SYN-ACK's window (unscaled) was clamped to cwnd_xcp already.
	uint32_t una = p.iss + 1, nxt = una, edge = una + Get16(&synack[34]);
	EXPECT_EQ(edge - una, fl->cwnd_xcp);
	std::vector<uint32_t> inflight;
	Rng rng(5);
	for (int rtt = 0; rtt < 60; rtt++) {
		// Send what the window allows, in 1400-byte segments.
		std::vector<Bytes> wire;
		while (static_cast<int32_t>(edge - (nxt + 1400)) >= 0) {
			Bytes d = p.Data(nxt, 1400);
			p.snd.Out(d, p.now);
			wire.push_back(d);
			nxt += 1400;
		}
		inflight.push_back(nxt - una);
		p.now += 600 * kMs;
		// The receiver ACKs every second segment; the path lowers feedback
		// to drive cwnd_xcp down to 10 segments after 20 RTTs.
		for (size_t i = 0; i < wire.size(); i++) {
			Bytes d = wire[i];
			if (rtt >= 20) {
				Loc l = Walk(d);
				int64_t want = 14000 - static_cast<int64_t>(fl->cwnd_xcp);
				int64_t n = static_cast<int64_t>(std::max<size_t>(wire.size(), 1));
				int32_t fb = static_cast<int32_t>(want / n);
				sgw_xcp_lower_feedback(&d[l.tcp_off - 20], 20, fb, nullptr);
			}
			p.rcv.In(d, p.now);
			if (i % 2 == 1 || i + 1 == wire.size()) {
				una = Get32(&d[Walk(d).tcp_off + 4]) + 1400;
				Bytes a = p.Ack(una, 65535 >> 7);
				p.rcv.Out(a, p.now);
				p.snd.In(a, p.now);
				Loc l = Walk(a);
				uint32_t w = Get16(&a[l.tcp_off + 14]);
				uint32_t e = una + (w << 7);
				ASSERT_GE(static_cast<int32_t>(e - edge), 0) << "edge retracted";
				edge = e;
			}
		}
		(void)rng;
	}
	// Grown at first (no XCP router lowers anything), held to ~10 segments after.
	EXPECT_GT(*std::max_element(inflight.begin(), inflight.begin() + 20), 40000u);
	EXPECT_LE(inflight.back(), fl->cwnd_xcp + 128u);
	EXPECT_LE(fl->cwnd_xcp, 15000u);
	EXPECT_GT(p.snd.C(SGW_XCPA_C_CLAMPED), 0u);
}

// ---- RTT ----

TEST(XcpAgent, RttFromOwnSegmentsAndKarn)
{
	sgw_xcpa_rtt r{};
	EXPECT_EQ(sgw_xcpa_rtt_sent(&r, 100, 10, 0), 0);
	EXPECT_EQ(sgw_xcpa_rtt_sent(&r, 110, 10, 1 * kMs), 0);
	EXPECT_EQ(sgw_xcpa_rtt_acked(&r, 105, 500 * kMs), 0);  // not yet covering
	EXPECT_EQ(sgw_xcpa_rtt_acked(&r, 110, 640 * kMs), 1);
	EXPECT_EQ(r.srtt_us, 640000u);
	// Next timing starts with new data; a retransmission abandons it.
	sgw_xcpa_rtt_sent(&r, 120, 10, 700 * kMs);
	EXPECT_EQ(sgw_xcpa_rtt_sent(&r, 120, 10, 900 * kMs), 1);
	EXPECT_EQ(sgw_xcpa_rtt_acked(&r, 130, 1500 * kMs), 0);
	sgw_xcpa_rtt_sent(&r, 130, 10, 2000 * kMs);
	EXPECT_EQ(sgw_xcpa_rtt_acked(&r, 140, 2560 * kMs), 1);
	EXPECT_EQ(r.srtt_us, 640000u - 10000u);  // 7/8 640 + 1/8 560
	// Across the sequence wrap.
	sgw_xcpa_rtt w{};
	sgw_xcpa_rtt_sent(&w, 0xfffffff0u, 0x20, 0);
	EXPECT_EQ(sgw_xcpa_rtt_acked(&w, 0x10, 5 * kMs), 1);
}

// ---- flow table ----

TEST(XcpAgent, TableFullPassesUntouchedAndCounts)
{
	sgw_xcpa_conf c;
	sgw_xcpa_conf_default(&c);
	c.idle_ns = 10 * 1000 * kMs;
	Agent snd(SGW_XCPA_SENDER, 8, &c);  // 8 slots: one probe window
	ASSERT_EQ(snd.a.n_flows, 8u);
	for (int i = 0; i < 8; i++) {
		Seg s;
		s.sport = static_cast<uint16_t>(1000 + i);
		Bytes b = Build(s);
		ASSERT_EQ(snd.Out(b, 0), SGW_XCPA_SEND);
	}
	Seg s9;
	s9.sport = 2000;
	const Bytes orig = Build(s9);
	Bytes b = orig;
	EXPECT_EQ(snd.Out(b, 1), SGW_XCPA_PASS);
	EXPECT_EQ(b, orig);
	EXPECT_EQ(snd.C(SGW_XCPA_C_TABLE_FULL), 1u);
	// An incoming XCP packet of an unknown flow is still stripped.
	Bytes in = WithReverse(Build(Reverse(s9)), 5);
	EXPECT_EQ(snd.In(in, 2), SGW_XCPA_SEND);
	EXPECT_EQ(in, Build(Reverse(s9)));
	EXPECT_EQ(snd.C(SGW_XCPA_C_TABLE_FULL), 2u);
	// Once the others are idle, the slot is reused.
	b = orig;
	EXPECT_EQ(snd.Out(b, 11 * 1000 * kMs), SGW_XCPA_SEND);
	EXPECT_EQ(snd.C(SGW_XCPA_C_FLOWS_REUSED), 1u);
	// A closed flow (RST) frees its slot after closed_ns.
	Seg r;
	r.sport = 1001;
	r.flags = SGW_XCPA_TH_RST;
	r.pay = 0;
	Bytes rb = Build(r);
	snd.Out(rb, 11 * 1000 * kMs);
	EXPECT_NE(snd.Flow(r, 11 * 1000 * kMs + c.closed_ns - 1), nullptr);
	EXPECT_EQ(snd.Flow(r, 11 * 1000 * kMs + c.closed_ns), nullptr);
}

TEST(XcpAgent, FlowTableSizedFromTheMemoryGiven)
{
	sgw_xcpa_conf c;
	sgw_xcpa_conf_default(&c);
	std::vector<sgw_xcpa_flow> mem(100);
	sgw_xcpa a{};
	ASSERT_EQ(sgw_xcpa_init(&a, &c, mem.data(), mem.size() * sizeof(mem[0])), 0);
	EXPECT_EQ(a.n_flows, 64u);
	EXPECT_EQ(sgw_xcpa_mem_size(100), 64u * sizeof(sgw_xcpa_flow));
	EXPECT_EQ(sgw_xcpa_init(&a, &c, mem.data(), 7 * sizeof(mem[0])), -1);
	c.role = 7;
	EXPECT_EQ(sgw_xcpa_init(&a, &c, mem.data(), mem.size() * sizeof(mem[0])), -1);
}

// ---- malformed input ----

TEST(XcpAgent, TruncationsAreCountedNeverTrusted)
{
	for (int ver : {4, 6}) {
		Seg s;
		s.ver = ver;
		s.pay = 30;
		s.tcp_opts = SynOpts(1000, 3);
		s.ip_opts = ver == 4 ? 4 : 0;
		s.ext = ver == 6 ? 1 : 0;
		const Bytes full = Build(s);
		const Bytes fullx = WithReverse(full, 1);
		for (size_t n = 0; n < full.size(); n++) {
			Agent snd(SGW_XCPA_SENDER);
			Bytes b(full.begin(), full.begin() + static_cast<long>(n));
			const Bytes copy = b;
			EXPECT_EQ(snd.Out(b, 0), SGW_XCPA_PASS) << n;
			EXPECT_EQ(b, copy);
			EXPECT_EQ(snd.C(SGW_XCPA_C_OUT_BAD), 1u) << n;
		}
		for (size_t n = 0; n < fullx.size(); n++) {
			Agent snd(SGW_XCPA_SENDER);
			Bytes b(fullx.begin(), fullx.begin() + static_cast<long>(n));
			EXPECT_EQ(snd.In(b, 0), SGW_XCPA_DROP) << n;
			EXPECT_EQ(snd.C(SGW_XCPA_C_IN_BAD), 1u);
		}
		// A cut that keeps the IP length consistent (shorter IP length):
		// the TCP header is cut instead.
		Bytes b = fullx;
		Loc l = Walk(b);
		b.resize(l.tcp_off + 10);
		if (ver == 4) {
			Put16(&b[2], static_cast<uint16_t>(b.size()));
			b[10] = b[11] = 0;
			Put16(&b[10], Fold(SumWords(b.data(), (b[0] & 15) * 4u)));
		} else {
			Put16(&b[4], static_cast<uint16_t>(b.size() - 40));
		}
		Agent snd(SGW_XCPA_SENDER);
		EXPECT_EQ(snd.In(b, 0), SGW_XCPA_DROP);
		EXPECT_EQ(snd.a.bad_in[SGW_XCPA_B_TCP_TRUNC], 1u);
	}
}

TEST(XcpAgent, BadXcpHeadersDroppedByReason)
{
	Seg s;
	Bytes good = WithReverse(Build(s), 1);
	Loc l = Walk(Build(s));
	size_t x = l.tcp_off;  // XCP header starts where TCP started
	Agent snd(SGW_XCPA_SENDER);
	Bytes b = good;
	b[x + 1] = 0x10;  // version 1
	EXPECT_EQ(snd.In(b, 0), SGW_XCPA_DROP);
	b = good;
	b[x + 2] = 4;  // 16 bytes
	EXPECT_EQ(snd.In(b, 0), SGW_XCPA_DROP);
	b = good;
	b[x] = kProto;  // nested
	EXPECT_EQ(snd.In(b, 0), SGW_XCPA_DROP);
	EXPECT_EQ(snd.a.xcp_err[SGW_XCP_E_VERSION], 1u);
	EXPECT_EQ(snd.a.xcp_err[SGW_XCP_E_HLEN], 1u);
	EXPECT_EQ(snd.a.xcp_err[SGW_XCP_E_NESTED], 1u);
	EXPECT_EQ(snd.a.bad_in[SGW_XCPA_B_XCP], 3u);
	// Version 9 IP, an IPv4 fragment, an IPv6 fragment header.
	b = Build(s);
	b[0] = 0x95;
	EXPECT_EQ(snd.Out(b, 0), SGW_XCPA_PASS);
	EXPECT_EQ(snd.a.bad_out[SGW_XCPA_B_IP_VERSION], 1u);
	b = Build(s);
	b[6] = 0x20;  // MF
	EXPECT_EQ(snd.Out(b, 0), SGW_XCPA_PASS);
	EXPECT_EQ(snd.In(b, 0), SGW_XCPA_PASS);
	EXPECT_EQ(snd.a.bad_out[SGW_XCPA_B_FRAG], 1u);
	Seg s6;
	s6.ver = 6;
	b = Build(s6);
	b[6] = 44;
	EXPECT_EQ(snd.Out(b, 0), SGW_XCPA_PASS);
	EXPECT_EQ(snd.a.bad_out[SGW_XCPA_B_FRAG], 2u);
	// Non-TCP passes untouched both ways.
	b = Build(s);
	b[9] = 17;
	const Bytes udp = b;
	EXPECT_EQ(snd.Out(b, 0), SGW_XCPA_PASS);
	EXPECT_EQ(b, udp);
	EXPECT_EQ(snd.C(SGW_XCPA_C_OUT_NON_TCP), 1u);
}

TEST(XcpAgent, RandomBytesNeverCrash)
{
	Rng rng(99);
	Agent snd(SGW_XCPA_SENDER, 16);
	Agent rcv(SGW_XCPA_RECEIVER, 16);
	Seg s;
	const Bytes base = WithReverse(Build(s), 3);
	for (int it = 0; it < 20000; it++) {
		Bytes b = base;
		int k = static_cast<int>(rng.Range(1, 6));
		for (int j = 0; j < k; j++)
			b[rng.Range(0, b.size() - 1)] = static_cast<uint8_t>(rng.Next());
		b.resize(rng.Range(0, b.size()));
		Bytes c = b;
		snd.In(b, static_cast<uint64_t>(it) * kMs);
		rcv.Out(c, static_cast<uint64_t>(it) * kMs);
	}
	uint64_t bad = 0;
	for (unsigned i = 1; i < SGW_XCPA_B__COUNT; i++)
		bad += snd.a.bad_in[i];
	EXPECT_GT(bad, 0u);
	EXPECT_EQ(snd.C(SGW_XCPA_C_IN_PKTS), 20000u);
}

}  // namespace
