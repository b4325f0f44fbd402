// SPDX-License-Identifier: BSD-3-Clause
// Tests of lib/sgw_xcp.c: the XCP header codec and the router controller, in
// virtual time.
//
// Codec: golden bytes, round trips of random and extreme values, every
// truncation length, each refusal reason, the in-place lowering and its
// patch, the checksum adjustment against a full recomputation.
//
// Controller: the equations of one interval against a hand computation, no
// RTT cap below 10 s, the persistent-queue window, the seqlock, and the
// multi-core property (a stream split over 4 accumulators aggregates to the
// same bits as one accumulator).
//
// Model (class Model): N window-based XCP senders, each pacing cwnd bytes
// per RTT in 1000-byte packets, through one FIFO bottleneck of capacity C
// served in 1 ms steps; the gateway runs sgw_xcp_process on the real header
// bytes of each packet as it joins the queue (the worker chosen round
// robin), samples the queue into sgw_xcp_qest and aggregates when the
// control interval ends; a departing packet's header comes back to its
// sender one base RTT later (the receiver echoes H_feedback as reverse
// feedback), and the sender applies cwnd = max(cwnd + feedback, 1 packet).
// The step (1 ms) is 1/500 to 1/900 of the RTTs used.

#include <gtest/gtest.h>

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <queue>
#include <vector>

#include "sgw_xcp.h"
#include "test_rng.h"

namespace {

constexpr uint8_t kProto = 254;

sgw_xcp_fields
Fields(uint8_t next, uint32_t rtt, uint32_t cwnd, int32_t fb, int32_t rev, uint8_t flags = 0)
{
	sgw_xcp_fields f{};
	f.next = next;
	f.flags = flags;
	f.rtt_us = rtt;
	f.cwnd = cwnd;
	f.feedback = fb;
	f.reverse = rev;
	return f;
}

// ---- codec ----

TEST(XcpCodec, GoldenBytes)
{
	uint8_t b[SGW_XCPW_LEN];
	auto f = Fields(6, 0x01020304u, 0xA0B0C0D0u, -2, 0x7FFFFFFF, SGW_XCPW_F_REVERSE);
	ASSERT_EQ(sgw_xcp_build(b, sizeof(b), kProto, &f), 20u);
	const uint8_t want[20] = {6,    0x21, 5,    0,    1,    2,    3,    4,    0xA0, 0xB0,
				  0xC0, 0xD0, 0xFF, 0xFF, 0xFF, 0xFE, 0x7F, 0xFF, 0xFF, 0xFF};
	EXPECT_EQ(0, memcmp(b, want, sizeof(want)));
}

TEST(XcpCodec, RoundTripRandomAndExtremes)
{
	Rng r(1);
	const int32_t ext[] = {INT32_MIN, INT32_MIN + 1, -1, 0, 1, INT32_MAX};
	for (int i = 0; i < 20000; i++) {
		sgw_xcp_fields f = Fields(static_cast<uint8_t>(r.Next()),
					  static_cast<uint32_t>(r.Next()),
					  static_cast<uint32_t>(r.Next()),
					  static_cast<int32_t>(static_cast<uint32_t>(r.Next())),
					  static_cast<int32_t>(static_cast<uint32_t>(r.Next())),
					  static_cast<uint8_t>(r.Next() & 0xf));
		if (i < 36) {
			f.feedback = ext[i % 6];
			f.reverse = ext[i / 6];
		}
		if (i == 36) {
			f.rtt_us = UINT32_MAX;
			f.cwnd = 0;
		}
		uint8_t b[SGW_XCPW_LEN + 3];
		if (f.next == kProto) {
			EXPECT_EQ(sgw_xcp_build(b, sizeof(b), kProto, &f), 0u);
			continue;
		}
		ASSERT_EQ(sgw_xcp_build(b, sizeof(b), kProto, &f), 20u);
		sgw_xcp_fields g{};
		ASSERT_EQ(sgw_xcp_parse(b, 20, kProto, &g), SGW_XCP_OK);
		EXPECT_EQ(g.next, f.next);
		EXPECT_EQ(g.flags, f.flags);
		EXPECT_EQ(g.hlen, 20);
		EXPECT_EQ(g.rtt_us, f.rtt_us);
		EXPECT_EQ(g.cwnd, f.cwnd);
		EXPECT_EQ(g.feedback, f.feedback);
		EXPECT_EQ(g.reverse, f.reverse);
	}
}

TEST(XcpCodec, EveryTruncationLength)
{
	uint8_t b[32];
	auto f = Fields(50, 600000, 1000000, 100, -100);
	ASSERT_EQ(sgw_xcp_build(b, sizeof(b), kProto, &f), 20u);
	for (size_t len = 0; len < SGW_XCPW_LEN; len++) {
		sgw_xcp_fields g = Fields(1, 2, 3, 4, 5);
		EXPECT_EQ(sgw_xcp_parse(b, len, kProto, &g), SGW_XCP_E_TRUNC) << len;
		EXPECT_EQ(g.rtt_us, 2u);  // untouched on error
		EXPECT_EQ(sgw_xcp_lower_feedback(b, len, -5, nullptr), -1) << len;
		EXPECT_EQ(sgw_xcp_set_reverse(b, len, -5, nullptr), -1) << len;
		EXPECT_EQ(sgw_xcp_build(b, len, kProto, &f), 0u) << len;
	}
	// The header is untouched by the refused writes.
	sgw_xcp_fields g{};
	EXPECT_EQ(sgw_xcp_parse(b, 20, kProto, &g), SGW_XCP_OK);
	EXPECT_EQ(g.feedback, 100);
	EXPECT_EQ(sgw_xcp_parse(nullptr, 20, kProto, &g), SGW_XCP_E_TRUNC);

	// A longer header (hlen 7 words = 28 bytes): every length short of it.
	b[SGW_XCPW_OFF_HLEN] = 7;
	for (size_t len = 20; len < 28; len++)
		EXPECT_EQ(sgw_xcp_parse(b, len, kProto, &g), SGW_XCP_E_HLEN_TRUNC) << len;
	EXPECT_EQ(sgw_xcp_parse(b, 28, kProto, &g), SGW_XCP_OK);
	EXPECT_EQ(g.hlen, 28);
	EXPECT_EQ(g.rtt_us, 600000u);
}

TEST(XcpCodec, RefusalReasons)
{
	uint8_t b[64];
	sgw_xcp_fields g{};
	auto f = Fields(6, 1, 2, 3, 4);
	ASSERT_EQ(sgw_xcp_build(b, sizeof(b), kProto, &f), 20u);
	for (int v = 0; v < 16; v++) {
		b[SGW_XCPW_OFF_VER_FLAGS] = static_cast<uint8_t>(v << 4);
		EXPECT_EQ(sgw_xcp_parse(b, sizeof(b), kProto, &g),
			  v == SGW_XCPW_VERSION ? SGW_XCP_OK : SGW_XCP_E_VERSION)
			<< v;
	}
	b[SGW_XCPW_OFF_VER_FLAGS] = SGW_XCPW_VERSION << 4;
	for (int h = 0; h < 256; h++) {
		b[SGW_XCPW_OFF_HLEN] = static_cast<uint8_t>(h);
		enum sgw_xcp_err want = h < 5 ? SGW_XCP_E_HLEN
					: h * 4 > 64 ? SGW_XCP_E_HLEN_TRUNC
						     : SGW_XCP_OK;
		EXPECT_EQ(sgw_xcp_parse(b, sizeof(b), kProto, &g), want) << h;
	}
	b[SGW_XCPW_OFF_HLEN] = 5;
	// The protocol number is a parameter: nested only under its own number.
	b[SGW_XCPW_OFF_NEXT] = 254;
	EXPECT_EQ(sgw_xcp_parse(b, 20, 254, &g), SGW_XCP_E_NESTED);
	EXPECT_EQ(sgw_xcp_parse(b, 20, 253, &g), SGW_XCP_OK);
	EXPECT_EQ(g.next, 254);
	// Unknown flags and the reserved byte are ignored.
	b[SGW_XCPW_OFF_NEXT] = 6;
	b[SGW_XCPW_OFF_VER_FLAGS] = 0x2f;
	b[SGW_XCPW_OFF_RSVD] = 0x99;
	EXPECT_EQ(sgw_xcp_parse(b, 20, kProto, &g), SGW_XCP_OK);
	EXPECT_EQ(g.flags, 0xf);
}

TEST(XcpCodec, NamesStable)
{
	EXPECT_STREQ(sgw_xcp_err_name(SGW_XCP_OK), "ok");
	EXPECT_STREQ(sgw_xcp_err_name(SGW_XCP_E_TRUNC), "trunc");
	EXPECT_STREQ(sgw_xcp_err_name(SGW_XCP_E_VERSION), "bad_version");
	EXPECT_STREQ(sgw_xcp_err_name(SGW_XCP_E_HLEN), "bad_hlen");
	EXPECT_STREQ(sgw_xcp_err_name(SGW_XCP_E_HLEN_TRUNC), "hlen_trunc");
	EXPECT_STREQ(sgw_xcp_err_name(SGW_XCP_E_NESTED), "nested");
	EXPECT_STREQ(sgw_xcp_err_name(SGW_XCP_E__COUNT), "unknown");
	for (int s = 0; s < SGW_XCP_S__COUNT; s++)
		EXPECT_STRNE(sgw_xcp_sum_name(static_cast<sgw_xcp_sum>(s)), "unknown") << s;
}

TEST(XcpCodec, LowerOnlyLowersAndReportsTheBytes)
{
	uint8_t b[SGW_XCPW_LEN], before[SGW_XCPW_LEN];
	auto f = Fields(6, 600000, 100000, 500, 0);
	ASSERT_EQ(sgw_xcp_build(b, sizeof(b), kProto, &f), 20u);
	memcpy(before, b, sizeof(b));
	sgw_xcp_patch pt{};
	EXPECT_EQ(sgw_xcp_lower_feedback(b, sizeof(b), 500, &pt), 0);
	EXPECT_EQ(sgw_xcp_lower_feedback(b, sizeof(b), 501, &pt), 0);
	EXPECT_EQ(0, memcmp(b, before, sizeof(b)));
	EXPECT_EQ(sgw_xcp_lower_feedback(b, sizeof(b), -70000, &pt), 1);
	EXPECT_EQ(pt.off, SGW_XCPW_OFF_FEEDBACK);
	EXPECT_EQ(pt.len, 4);
	EXPECT_EQ(0, memcmp(pt.old_b, before + 12, 4));
	EXPECT_EQ(0, memcmp(pt.new_b, b + 12, 4));
	for (size_t i = 0; i < sizeof(b); i++)
		if (i < 12 || i >= 16) {
			EXPECT_EQ(b[i], before[i]) << i;
		}
	sgw_xcp_fields g{};
	ASSERT_EQ(sgw_xcp_parse(b, sizeof(b), kProto, &g), SGW_XCP_OK);
	EXPECT_EQ(g.feedback, -70000);
	EXPECT_EQ(sgw_xcp_lower_feedback(b, sizeof(b), INT32_MIN, nullptr), 1);
	ASSERT_EQ(sgw_xcp_parse(b, sizeof(b), kProto, &g), SGW_XCP_OK);
	EXPECT_EQ(g.feedback, INT32_MIN);

	EXPECT_EQ(sgw_xcp_set_reverse(b, sizeof(b), -42, &pt), 1);
	EXPECT_EQ(pt.off, SGW_XCPW_OFF_REVERSE);
	ASSERT_EQ(sgw_xcp_parse(b, sizeof(b), kProto, &g), SGW_XCP_OK);
	EXPECT_EQ(g.reverse, -42);
	EXPECT_EQ(g.flags & SGW_XCPW_F_REVERSE, SGW_XCPW_F_REVERSE);
}

uint16_t
FullCsum(const uint8_t *p, size_t n)
{
	uint32_t s = 0;
	for (size_t i = 0; i + 1 < n; i += 2)
		s += static_cast<uint32_t>(p[i] << 8 | p[i + 1]);
	if (n & 1)
		s += static_cast<uint32_t>(p[n - 1] << 8);
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return static_cast<uint16_t>(~s);
}

TEST(XcpCodec, ChecksumAdjustMatchesRecomputation)
{
	// A caller that carries the header inside a checksummed range (here at
	// offset 8 of 60 bytes) fixes the checksum from the patch alone.
	Rng r(7);
	for (int i = 0; i < 5000; i++) {
		uint8_t buf[60];
		for (auto &c : buf)
			c = static_cast<uint8_t>(r.Next());
		auto f = Fields(17, static_cast<uint32_t>(r.Next()), static_cast<uint32_t>(r.Next()),
				INT32_MAX, static_cast<int32_t>(static_cast<uint32_t>(r.Next())));
		ASSERT_EQ(sgw_xcp_build(buf + 8, 52, kProto, &f), 20u);
		uint16_t c0 = FullCsum(buf, sizeof(buf));
		sgw_xcp_patch pt{};
		int32_t fb = static_cast<int32_t>(static_cast<uint32_t>(r.Next()) >> 1) - (1 << 30);
		ASSERT_EQ(sgw_xcp_lower_feedback(buf + 8, 52, fb, &pt), 1);
		uint16_t want = FullCsum(buf, sizeof(buf));
		uint16_t got = sgw_xcp_csum_adjust(c0, &pt);
		// 0x0000 and 0xffff are the same one's-complement value.
		if (want != got) {
			EXPECT_TRUE((want == 0 && got == 0xffff) || (want == 0xffff && got == 0))
				<< i;
		}
	}
}

// ---- controller: one interval by hand ----

sgw_xcp_conf
Conf()
{
	sgw_xcp_conf c;
	sgw_xcp_conf_default(&c);
	return c;
}

/*
 * A controller's state: a one-worker controller per satlink session (scope
 * session) pays for every worker's base, so a base holds only the two sums
 * a worker's budget share is cut by (16 bytes, not all 13 sums' 104: 6,992
 * bytes a controller before, 1,360 now).
 */
TEST(XcpCtl, StateIsSmall)
{
	EXPECT_EQ(sizeof(sgw_xcp_ctl), 1360u);
	EXPECT_EQ(sizeof(((sgw_xcp_ctl *)nullptr)->wbase), 16u * SGW_XCP_MAX_WORKERS);
}

TEST(XcpCtl, ConfDefaultsAndChecks)
{
	sgw_xcp_conf c = Conf();
	EXPECT_EQ(c.alpha, 0.4);
	EXPECT_EQ(c.beta, 0.226);
	EXPECT_EQ(c.gamma, 0.1);
	EXPECT_EQ(sgw_xcp_conf_check(&c), 0);
	c.rtt_max_ns = 500000000ull;  // the htsim trap: below a GEO round trip
	c.d_init_ns = 100000000ull;
	EXPECT_EQ(sgw_xcp_conf_check(&c), -1);
	c = Conf();
	c.alpha = NAN;
	EXPECT_EQ(sgw_xcp_conf_check(&c), -1);
	c = Conf();
	c.d_min_ns = 0;
	EXPECT_EQ(sgw_xcp_conf_check(&c), -1);
}

struct Pk {
	uint32_t size, rtt_us, cwnd;
};

// One interval of a known stream through one accumulator: the aggregate
// must be the paper's equations evaluated by hand.
TEST(XcpCtl, OneIntervalMatchesTheEquations)
{
	sgw_xcp_conf c = Conf();
	sgw_xcp_acc acc;
	sgw_xcp_acc_init(&acc);
	sgw_xcp_ctl ctl;
	sgw_xcp_params p;
	ASSERT_EQ(sgw_xcp_ctl_init(&c, &ctl, 1000, nullptr, 1, &p), 0);
	EXPECT_EQ(p.xi_p, 0.0);
	EXPECT_EQ(ctl.d_ns, c.d_init_ns);

	// Two flows (rtt 0.6 s / cwnd 300 kB and rtt 0.8 s / cwnd 100 kB), one
	// packet without RTT, non-XCP load.
	std::vector<Pk> st;
	for (int i = 0; i < 300; i++)
		st.push_back({1000, 600000, 300000});
	for (int i = 0; i < 100; i++)
		st.push_back({1500, 800000, 100000});
	double y = 0, xb = 0, rb = 0, rsc = 0, r2sc = 0;
	for (auto &k : st) {
		EXPECT_EQ(sgw_xcp_on_packet(&acc, &p, k.size, k.rtt_us, k.cwnd), 0);
		y += k.size;
		xb += k.size;
		rb += double(k.rtt_us) * k.size;
		rsc += double(k.rtt_us) * k.size / k.cwnd;
		r2sc += double(k.rtt_us) * k.rtt_us * k.size / k.cwnd;
	}
	EXPECT_EQ(sgw_xcp_on_packet(&acc, &p, 100, 0, 5000), 0);
	sgw_xcp_on_other(&acc, 4000);
	y += 4100;

	const double C = 1.25e6, Q = 20000;
	const uint64_t now = 1000 + 700000000ull;  // interval ran 0.7 s
	sgw_xcp_sums snap;
	sgw_xcp_acc_read(&acc, &snap);
	sgw_xcp_ctl nx;
	sgw_xcp_aggregate(&c, &ctl, &snap, 1, C, Q, now, &nx, &p);

	const double dt = 0.7, d = rb / xb / 1e6;  // s
	const double in = y / dt, S = C - in;
	const double phi = 0.4 * d * S - 0.226 * Q;
	const double h = std::max(0.0, 0.1 * in * d - std::fabs(phi));
	const double pos = h + std::max(phi, 0.0), neg = h + std::max(-phi, 0.0);
	const double d_us = d * 1e6, dt_us = dt * 1e6;
	const double xi_p = pos * dt_us / (d_us * d_us * rsc);
	const double xi_n = neg * dt_us / (d_us * d_us * xb);
	EXPECT_EQ(p.epoch, 1u);
	EXPECT_NEAR(double(nx.d_ns), d * 1e9, 1.0);
	EXPECT_NEAR(nx.last.input_Bps, in, in * 1e-12);
	EXPECT_NEAR(nx.last.phi_bytes, phi, std::fabs(phi) * 1e-9);
	EXPECT_NEAR(nx.last.h_bytes, h, 1e-6);
	// rsc is summed with 16 fraction bits per packet: relative error < 2^-16 / term.
	EXPECT_NEAR(p.xi_p, xi_p, xi_p * 1e-6);
	EXPECT_NEAR(p.xi_n, xi_n, xi_n * 1e-9);
	EXPECT_NEAR(p.pos_budget, pos, pos * 1e-9);  // d is rounded to 1 ns
	EXPECT_NEAR(p.neg_budget, neg, neg * 1e-9 + 1e-6);
	EXPECT_NEAR(nx.last.flows, rsc / dt_us, 1e-6);  // 2 flows, 0.7 s of each
	EXPECT_NEAR(nx.last.rtt_flow_ns, r2sc / rsc * 1e3, 1e3);
	EXPECT_EQ(nx.t_start_ns, now);
	EXPECT_EQ(nx.last.delta.v[SGW_XCP_S_NORTT], 1u);
	EXPECT_EQ(nx.last.delta.v[SGW_XCP_S_PKTS], 402u);

	// Per packet: p_i = xi_p rtt^2 s / cwnd, n_i = xi_n rtt s.
	for (auto &k : {st.front(), st.back()}) {
		double r = k.rtt_us, s = k.size;
		double want = p.xi_p * r * r * s / k.cwnd - p.xi_n * r * s;
		EXPECT_NEAR(sgw_xcp_feedback(&p, k.size, k.rtt_us, k.cwnd), want, 0.5 + 1e-9);
	}
	// A sender without an RTT gets no increase.
	EXPECT_EQ(sgw_xcp_feedback(&p, 1000, 0, 1000), 0);
}

// The known trap: no cap on the RTT below 10 s. A 2.5 s path makes a 2.5 s
// interval; 20 s is clamped to rtt_max and counted.
TEST(XcpCtl, NoRttCapBelowTenSeconds)
{
	sgw_xcp_conf c = Conf();
	sgw_xcp_acc acc;
	sgw_xcp_acc_init(&acc);
	sgw_xcp_ctl ctl;
	sgw_xcp_params p;
	ASSERT_EQ(sgw_xcp_ctl_init(&c, &ctl, 0, nullptr, 1, &p), 0);
	for (int i = 0; i < 10; i++)
		sgw_xcp_on_packet(&acc, &p, 1000, 2500000, 100000);
	sgw_xcp_sums s;
	sgw_xcp_acc_read(&acc, &s);
	sgw_xcp_aggregate(&c, &ctl, &s, 1, 1e6, 0, 100000000ull, &ctl, &p);
	EXPECT_EQ(ctl.d_ns, 2500000000ull);
	EXPECT_EQ(ctl.last.delta.v[SGW_XCP_S_CLAMPED], 0u);
	for (int i = 0; i < 10; i++)
		sgw_xcp_on_packet(&acc, &p, 1000, 20000000, 100000);
	sgw_xcp_acc_read(&acc, &s);
	sgw_xcp_aggregate(&c, &ctl, &s, 1, 1e6, 0, 2600000000ull, &ctl, &p);
	EXPECT_EQ(ctl.d_ns, 10000000000ull);
	EXPECT_EQ(ctl.last.delta.v[SGW_XCP_S_CLAMPED], 10u);
	// Feedback of a 20 s packet equals that of a 10 s one.
	EXPECT_EQ(sgw_xcp_feedback(&p, 1000, 20000000, 100000),
		  sgw_xcp_feedback(&p, 1000, 10000000, 100000));
}

// ---- multi-core ----

// A random stream over 12 intervals, each packet to one of 4 workers at
// random; snapshots taken at the interval ends. The controller state and the
// parameters xi_p, xi_n equal, bit for bit, those of one worker seeing the
// whole stream: integer sums are associative and every per-packet term is
// computed and rounded identically on every worker. The budgets are the
// single worker's split four ways: they add up to it within 4 roundings
// (relative 1e-15; 1e-12 asserted).
TEST(XcpCtl, FourWorkersAggregateExactlyLikeOne)
{
	sgw_xcp_conf c = Conf();
	Rng r(42);
	sgw_xcp_acc one, four[4];
	sgw_xcp_acc_init(&one);
	for (auto &a : four)
		sgw_xcp_acc_init(&a);
	static sgw_xcp_ctl c1, c4;
	sgw_xcp_params p1, p4[4];
	ASSERT_EQ(sgw_xcp_ctl_init(&c, &c1, 5, nullptr, 1, &p1), 0);
	ASSERT_EQ(sgw_xcp_ctl_init(&c, &c4, 5, nullptr, 4, p4), 0);
	EXPECT_EQ(sgw_xcp_ctl_init(&c, &c4, 5, nullptr, 0, p4), -1);
	EXPECT_EQ(sgw_xcp_ctl_init(&c, &c4, 5, nullptr, SGW_XCP_MAX_WORKERS + 1, p4), -1);
	uint64_t now = 5;
	int nonzero = 0;
	for (int iv = 0; iv < 12; iv++) {
		int n = static_cast<int>(r.Range(0, 30000));
		for (int i = 0; i < n; i++) {
			uint32_t size = static_cast<uint32_t>(r.Range(40, 9000));
			uint32_t rtt = r.Range(0, 20) == 0 ? 0
				     : static_cast<uint32_t>(r.Range(1000, 12000000));
			uint32_t cwnd = static_cast<uint32_t>(r.Range(0, 400000000));
			int w = static_cast<int>(r.Range(0, 3));
			if (r.Range(0, 50) == 0) {
				sgw_xcp_on_other(&one, size);
				sgw_xcp_on_other(&four[w], size);
				continue;
			}
			ASSERT_EQ(sgw_xcp_feedback(&p1, size, rtt, cwnd),
				  sgw_xcp_feedback(&p4[w], size, rtt, cwnd));
			nonzero += sgw_xcp_on_packet(&one, &p1, size, rtt, cwnd) != 0;
			sgw_xcp_on_packet(&four[w], &p4[w], size, rtt, cwnd);
		}
		now += r.Range(1000000, 2000000000);
		sgw_xcp_sums s1, s4[4];
		sgw_xcp_acc_read(&one, &s1);
		for (int w = 0; w < 4; w++)
			sgw_xcp_acc_read(&four[w], &s4[w]);
		double C = double(r.Range(100000, 1000000000));
		double Q = double(r.Range(0, 1000000));
		sgw_xcp_aggregate(&c, &c1, &s1, 1, C, Q, now, &c1, &p1);
		sgw_xcp_aggregate(&c, &c4, s4, 4, C, Q, now, &c4, p4);
		// The feedback sums are telemetry and depend on how budgets split.
		for (auto k : {SGW_XCP_S_FB_POS, SGW_XCP_S_FB_NEG}) {
			c1.base.v[k] = c4.base.v[k] = 0;
			c1.last.delta.v[k] = c4.last.delta.v[k] = 0;
		}
		ASSERT_EQ(0, memcmp(&c1.base, &c4.base, sizeof(c1.base))) << iv;
		ASSERT_EQ(0, memcmp(&c1.last, &c4.last, sizeof(c1.last))) << iv;
		ASSERT_EQ(c1.d_ns, c4.d_ns);
		ASSERT_EQ(c1.pos_budget, c4.pos_budget);
		ASSERT_EQ(c1.neg_budget, c4.neg_budget);
		double pb = 0, nb = 0;
		for (int w = 0; w < 4; w++) {
			ASSERT_EQ(p4[w].epoch, p1.epoch);
			ASSERT_EQ(0, memcmp(&p4[w].xi_p, &p1.xi_p, sizeof(double)));
			ASSERT_EQ(0, memcmp(&p4[w].xi_n, &p1.xi_n, sizeof(double)));
			pb += p4[w].pos_budget;
			nb += p4[w].neg_budget;
			p4[w].pos_left = p4[w].pos_budget;  // what a refresh does
			p4[w].neg_left = p4[w].neg_budget;
		}
		EXPECT_NEAR(pb, p1.pos_budget, 1e-12 * p1.pos_budget) << iv;
		EXPECT_NEAR(nb, p1.neg_budget, 1e-12 * p1.neg_budget) << iv;
		p1.pos_left = p1.pos_budget;
		p1.neg_left = p1.neg_budget;
	}
	EXPECT_GT(nonzero, 1000);  // the streams did carry feedback
}

TEST(XcpCtl, SeqlockPublication)
{
	sgw_xcp_pub pub;
	sgw_xcp_params p{}, local{};
	sgw_xcp_pub_init(&pub, &p);
	EXPECT_FALSE(sgw_xcp_pub_refresh(&pub, &local));  // seq 0 = local's
	p.epoch = 3;
	p.xi_p = 1.5e-9;
	p.xi_n = -0.0;
	p.rtt_max_us = 10000000;
	p.pos_budget = 12345.5;
	p.neg_budget = 7.25;
	local.pos_left = 1;
	sgw_xcp_pub_write(&pub, &p);
	EXPECT_TRUE(sgw_xcp_pub_refresh(&pub, &local));
	EXPECT_EQ(local.pos_budget, 12345.5);
	EXPECT_EQ(local.pos_left, 12345.5);
	EXPECT_EQ(local.neg_left, 7.25);
	EXPECT_EQ(local.epoch, 3u);
	EXPECT_EQ(local.xi_p, 1.5e-9);
	EXPECT_EQ(local.rtt_max_us, 10000000u);
	EXPECT_FALSE(sgw_xcp_pub_refresh(&pub, &local));  // nothing new
	// A write under way (odd seq): the reader keeps its copy, does not wait.
	p.epoch = 4;
	sgw_xcp_pub_write(&pub, &p);
	pub.seq += 1;
	EXPECT_FALSE(sgw_xcp_pub_refresh(&pub, &local));
	EXPECT_EQ(local.epoch, 3u);
	pub.seq += 1;
	EXPECT_TRUE(sgw_xcp_pub_refresh(&pub, &local));
	EXPECT_EQ(local.epoch, 4u);
}

TEST(XcpCtl, ProcessParsesAccumulatesLowersAndCountsBadHeaders)
{
	sgw_xcp_conf c = Conf();
	sgw_xcp_acc acc;
	sgw_xcp_acc_init(&acc);
	sgw_xcp_params p{};
	p.epoch = 1;
	p.xi_p = 0;
	p.xi_n = 1e-6;  // pure negative feedback: 624 bytes below
	p.neg_left = 1e9;
	p.rtt_max_us = static_cast<uint32_t>(c.rtt_max_ns / 1000);
	uint8_t b[SGW_XCPW_LEN];
	auto f = Fields(6, 600000, 100000, 1000, 0);
	sgw_xcp_build(b, sizeof(b), kProto, &f);
	sgw_xcp_patch pt{};
	sgw_xcp_err e;
	EXPECT_EQ(sgw_xcp_process(&acc, &p, kProto, b, sizeof(b), 1040, &pt, &e), 1);
	EXPECT_EQ(e, SGW_XCP_OK);
	sgw_xcp_fields g{};
	sgw_xcp_parse(b, sizeof(b), kProto, &g);
	EXPECT_EQ(g.feedback, -624);
	EXPECT_EQ(sgw_xcp_process(&acc, &p, kProto, b, 19, 1040, &pt, &e), -1);
	EXPECT_EQ(e, SGW_XCP_E_TRUNC);
	sgw_xcp_sums s;
	sgw_xcp_acc_read(&acc, &s);
	EXPECT_EQ(s.v[SGW_XCP_S_PKTS], 2u);
	EXPECT_EQ(s.v[SGW_XCP_S_BYTES], 2080u);
	EXPECT_EQ(s.v[SGW_XCP_S_XPKTS], 1u);
	EXPECT_EQ(s.v[SGW_XCP_S_BAD], 1u);
	EXPECT_EQ(s.v[SGW_XCP_S_LOWERED], 1u);
	EXPECT_EQ(s.v[SGW_XCP_S_FB_NEG], 624u);
	// The residue: 1000 bytes of negative budget left cover one packet
	// and a bit; then nothing more is taken until the next publication.
	p.neg_left = 1000;
	EXPECT_EQ(sgw_xcp_on_packet(&acc, &p, 1040, 600000, 100000), -624);
	EXPECT_EQ(sgw_xcp_on_packet(&acc, &p, 1040, 600000, 100000), -376);
	EXPECT_EQ(sgw_xcp_on_packet(&acc, &p, 1040, 600000, 100000), 0);
}

// ---- persistent queue ----

TEST(XcpQest, MinimumOverThePropagationDelay)
{
	sgw_xcp_conf c = Conf();
	sgw_xcp_qest q;
	sgw_xcp_qest_init(&q);
	EXPECT_EQ(sgw_xcp_qest_value(&q, 0), 0u);
	const uint64_t ms = 1000000;
	const uint64_t d = 800 * ms;  // window 800 ms (queue delay ~0 at C = 1 GB/s)
	const double C = 1e9;
	// A dip to 100 at t = 100 ms among samples of 5000.
	for (uint64_t t = 0; t <= 2000 * ms; t += ms)
		sgw_xcp_qest_sample(&q, &c, t, t == 100 * ms ? 100 : 5000, d, C);
	// Seen until at least 7/8 of the window later, gone after one window.
	sgw_xcp_qest qq;
	sgw_xcp_qest_init(&qq);
	uint64_t t;
	for (t = 0; t <= 100 * ms + 7 * d / 8; t += ms) {
		sgw_xcp_qest_sample(&qq, &c, t, t == 100 * ms ? 100 : 5000, d, C);
		ASSERT_EQ(sgw_xcp_qest_value(&qq, t), t < 100 * ms ? 5000u : 100u) << t;
	}
	for (; t <= 100 * ms + d + d / 8; t += ms)
		sgw_xcp_qest_sample(&qq, &c, t, 5000, d, C);
	EXPECT_EQ(sgw_xcp_qest_value(&qq, t), 5000u);
	EXPECT_EQ(sgw_xcp_qest_value(&q, 2000 * ms), 5000u);
	// Without samples the last one stands in: the old minimum ages out.
	sgw_xcp_qest_sample(&q, &c, 2001 * ms, 7, d, C);
	sgw_xcp_qest_sample(&q, &c, 2002 * ms, 9000, d, C);
	EXPECT_EQ(sgw_xcp_qest_value(&q, 2002 * ms), 7u);
	EXPECT_EQ(sgw_xcp_qest_value(&q, 2002 * ms + 2 * d), 9000u);
	// The window shrinks by this queue's own delay: 500 kB at 1 MB/s is
	// 500 ms of the 800 ms, leaving 300 ms.
	sgw_xcp_qest q3;
	sgw_xcp_qest_init(&q3);
	sgw_xcp_qest_sample(&q3, &c, 0, 400000, d, 1e6);
	for (t = ms; t <= 400 * ms; t += ms)
		sgw_xcp_qest_sample(&q3, &c, t, 500000, d, 1e6);
	EXPECT_EQ(sgw_xcp_qest_value(&q3, t), 500000u);
}

// ---- the model ----

constexpr uint64_t kMs = 1000000ull;
constexpr uint32_t kPkt = 1000;

class Model {
public:
	struct Flow {
		double base_rtt, start, stop;  // s
		double cwnd = kPkt;            // bytes
		double srtt = 0;               // s, 0 = no sample yet
		double tokens = 0;             // pacing credit, bytes
		uint64_t inflight = 0;         // bytes
		std::vector<double> dep;       // bytes leaving the queue per second
		std::vector<double> cwnd_at;   // cwnd at the end of each second
	};

	Model(double cap_Bps, int workers, uint64_t buf_bytes)
	    : C_(cap_Bps), nw_(workers), buf_(buf_bytes), acc_(workers), local_(workers),
	      pub_(workers)
	{
		sgw_xcp_conf_default(&conf_);
		for (auto &a : acc_)
			sgw_xcp_acc_init(&a);
		EXPECT_EQ(sgw_xcp_ctl_init(&conf_, &ctl_, 0, nullptr,
					   static_cast<uint32_t>(workers), local_.data()),
			  0);
		for (int w = 0; w < workers; w++)
			sgw_xcp_pub_init(&pub_[w], &local_[w]);
		sgw_xcp_qest_init(&qest_);
	}

	void AddFlow(double base_rtt, double start, double stop = 1e9)
	{
		Flow f;
		f.base_rtt = base_rtt;
		f.start = start;
		f.stop = stop;
		flows_.push_back(f);
	}

	void Run(double seconds)
	{
		const uint64_t end = static_cast<uint64_t>(seconds * 1e9);
		const size_t nsec = static_cast<size_t>(seconds) + 1;
		for (auto &f : flows_) {
			f.dep.assign(nsec, 0);
			f.cwnd_at.assign(nsec, 0);
		}
		q_max_.assign(nsec, 0);
		q_sum_.assign(nsec, 0);
		for (uint64_t now = 0; now < end; now += kMs) {
			size_t sec = now / 1000000000ull;
			Acks(now);
			Send(now);
			Serve(now, sec);
			if (now >= sgw_xcp_ctl_deadline(&ctl_))
				Control(now);
			q_max_[sec] = std::max(q_max_[sec], double(qbytes_));
			q_sum_[sec] += double(qbytes_) / 1000.0;  // mean over the 1000 steps
			for (auto &f : flows_)
				f.cwnd_at[sec] = f.cwnd;
		}
	}

	// Mean rates over [t0, t1) seconds, bytes/s.
	double Rate(size_t i, int t0, int t1) const
	{
		double b = 0;
		for (int t = t0; t < t1; t++)
			b += flows_[i].dep[t];
		return b / (t1 - t0);
	}
	double Util(int t0, int t1) const
	{
		double b = 0;
		for (size_t i = 0; i < flows_.size(); i++)
			b += Rate(i, t0, t1);
		return b / C_;
	}
	double QMax(int t0, int t1) const
	{
		return *std::max_element(q_max_.begin() + t0, q_max_.begin() + t1);
	}
	double QMean(int t0, int t1) const
	{
		double s = 0;
		for (int t = t0; t < t1; t++)
			s += q_sum_[t];
		return s / (t1 - t0);
	}
	double UtilSec(int t) const
	{
		double b = 0;
		for (auto &f : flows_)
			b += f.dep[t];
		return b / C_;
	}
	const Flow &F(size_t i) const { return flows_[i]; }
	uint64_t drops() const { return drops_; }
	uint64_t intervals() const { return ctl_.epoch; }
	const sgw_xcp_ctl &ctl() const { return ctl_; }

private:
	struct Pkt {
		int flow;
		uint64_t t_send;
		uint8_t hdr[SGW_XCPW_LEN];
	};
	struct Ack {
		uint64_t t;
		uint64_t order;
		int flow;
		uint64_t t_send;
		uint8_t hdr[SGW_XCPW_LEN];
		bool operator>(const Ack &o) const
		{
			return t != o.t ? t > o.t : order > o.order;
		}
	};

	void Acks(uint64_t now)
	{
		while (!acks_.empty() && acks_.top().t <= now) {
			Ack a = acks_.top();
			acks_.pop();
			Flow &f = flows_[a.flow];
			sgw_xcp_fields h{};
			ASSERT_EQ(sgw_xcp_parse(a.hdr, sizeof(a.hdr), kProto, &h), SGW_XCP_OK);
			ASSERT_TRUE(h.flags & SGW_XCPW_F_REVERSE);
			f.cwnd = std::max(f.cwnd + h.reverse, double(kPkt));
			double sample = double(now - a.t_send) / 1e9;
			f.srtt = f.srtt == 0 ? sample : 0.875 * f.srtt + 0.125 * sample;
			f.inflight -= kPkt;
		}
	}

	void Send(uint64_t now)
	{
		const double t = double(now) / 1e9;
		for (size_t i = 0; i < flows_.size(); i++) {
			Flow &f = flows_[i];
			if (t < f.start || t >= f.stop)
				continue;
			// cwnd bytes per RTT, paced; never more than cwnd outstanding.
			double rtt = f.srtt > 0 ? f.srtt : 1.0;
			f.tokens += f.cwnd / rtt * 1e-3;
			f.tokens = std::min(f.tokens, std::max(2.0 * kPkt, f.cwnd / rtt * 2e-3));
			while (f.tokens >= kPkt && double(f.inflight + kPkt) <= f.cwnd) {
				f.tokens -= kPkt;
				f.inflight += kPkt;
				Pkt p;
				p.flow = static_cast<int>(i);
				p.t_send = now;
				auto h = Fields(6, static_cast<uint32_t>(f.srtt * 1e6 + 0.5),
						static_cast<uint32_t>(f.cwnd), INT32_MAX, 0);
				ASSERT_EQ(sgw_xcp_build(p.hdr, sizeof(p.hdr), kProto, &h), 20u);
				Gateway(now, p);
			}
		}
	}

	// The gateway as the packet joins the queue: any worker.
	void Gateway(uint64_t now, Pkt &p)
	{
		int w = static_cast<int>(rr_++ % static_cast<uint64_t>(nw_));
		sgw_xcp_pub_refresh(&pub_[w], &local_[w]);
		sgw_xcp_qest_sample(&qest_, &conf_, now, qbytes_, ctl_.d_ns, C_);
		if (qbytes_ + kPkt > buf_) {
			drops_++;
			flows_[p.flow].inflight -= kPkt;
			return;
		}
		ASSERT_GE(sgw_xcp_process(&acc_[w], &local_[w], kProto, p.hdr, sizeof(p.hdr), kPkt,
					  nullptr, nullptr),
			  0);
		q_.push_back(p);
		qbytes_ += kPkt;
	}

	void Serve(uint64_t now, size_t sec)
	{
		credit_ += C_ * 1e-3;
		while (!q_.empty() && credit_ >= kPkt) {
			Pkt p = q_.front();
			q_.pop_front();
			qbytes_ -= kPkt;
			credit_ -= kPkt;
			Flow &f = flows_[p.flow];
			f.dep[sec] += kPkt;
			// The receiver echoes H_feedback; the ACK is back one base RTT later.
			sgw_xcp_fields h{};
			ASSERT_EQ(sgw_xcp_parse(p.hdr, sizeof(p.hdr), kProto, &h), SGW_XCP_OK);
			Ack a;
			a.t = now + static_cast<uint64_t>(f.base_rtt * 1e9);
			a.order = order_++;
			a.flow = p.flow;
			a.t_send = p.t_send;
			auto r = Fields(6, 0, 0, INT32_MAX, 0);
			sgw_xcp_build(a.hdr, sizeof(a.hdr), kProto, &r);
			sgw_xcp_set_reverse(a.hdr, sizeof(a.hdr), h.feedback, nullptr);
			acks_.push(a);
		}
		if (q_.empty())
			credit_ = 0;  // an idle link's capacity is lost
	}

	void Control(uint64_t now)
	{
		std::vector<sgw_xcp_sums> snaps(nw_);
		for (int w = 0; w < nw_; w++)
			sgw_xcp_acc_read(&acc_[w], &snaps[w]);
		std::vector<sgw_xcp_params> p(nw_);
		sgw_xcp_aggregate(&conf_, &ctl_, snaps.data(), static_cast<uint32_t>(nw_), C_,
				  double(sgw_xcp_qest_value(&qest_, now)), now, &ctl_, p.data());
		for (int w = 0; w < nw_; w++)
			sgw_xcp_pub_write(&pub_[w], &p[w]);
		if (std::getenv("XCP_TRACE") != nullptr) {
			const sgw_xcp_telem &t = ctl_.last;
			std::printf("T %.3f dt=%.3f d=%.3f in=%.0f Q=%.0f phi=%.0f h=%.0f "
				    "flows=%.2f xip=%.3g xin=%.3g cwnd0=%.0f pkts=%" PRIu64 "\n",
				    double(now) / 1e9, double(t.interval_ns) / 1e9,
				    double(t.d_ns) / 1e9, t.input_Bps, t.queue_bytes, t.phi_bytes,
				    t.h_bytes, t.flows, p[0].xi_p, p[0].xi_n, flows_[0].cwnd,
				    t.delta.v[SGW_XCP_S_XPKTS]);
		}
	}

	double C_;
	int nw_;
	uint64_t buf_;
	sgw_xcp_conf conf_;
	sgw_xcp_ctl ctl_;
	sgw_xcp_qest qest_;
	std::vector<sgw_xcp_acc> acc_;
	std::vector<sgw_xcp_params> local_;
	std::vector<sgw_xcp_pub> pub_;
	std::vector<Flow> flows_;
	std::deque<Pkt> q_;
	uint64_t qbytes_ = 0;
	double credit_ = 0;
	uint64_t rr_ = 0, order_ = 0, drops_ = 0;
	std::priority_queue<Ack, std::vector<Ack>, std::greater<Ack>> acks_;
	std::vector<double> q_max_, q_sum_;
};

[[maybe_unused]] double
Jain(const std::vector<double> &x)
{
	double s = 0, s2 = 0;
	for (double v : x) {
		s += v;
		s2 += v * v;
	}
	return s * s / (double(x.size()) * s2);
}

constexpr double kC = 1.25e6;  // 10 Mbit/s
constexpr uint64_t kBuf = 4000000;  // 4 MB: drops would be the model's failure, not XCP's

void
Print(const Model &m, int nflows, int secs)
{
	for (int t = 0; t < secs; t++) {
		std::printf("t=%3d util=%.3f qmax=%7.0f qmean=%7.0f", t, m.UtilSec(t),
			    m.QMax(t, t + 1), m.QMean(t, t + 1));
		for (int i = 0; i < nflows; i++)
			std::printf(" r%d=%.3f", i, m.F(i).dep[t] / kC);
		std::printf("\n");
	}
}

std::vector<double>
Rates(const Model &m, std::vector<size_t> idx, int t0, int t1)
{
	std::vector<double> r;
	for (size_t i : idx)
		r.push_back(m.Rate(i, t0, t1));
	return r;
}

bool
Verbose()
{
	return std::getenv("XCP_VERBOSE") != nullptr;
}

// (a) One flow, 0.64 s base RTT (the seed's), 10 Mbit/s (BDP 800 kB).
// Bounds: from 20 s (~30 RTTs; the efficiency loop closes the spare
// bandwidth by a factor 1 - alpha = 0.6 per interval, so 0.6^30 of the
// start-up error is left) utilisation >= 0.95 and the mean queue <= 2% of
// the BDP (the beta Q term drives the persistent queue to 0; the packet
// granularity of a 1 ms step leaves ~1 packet). The start-up overshoot is
// bounded by one interval's budget on top of the link: <= 0.5 BDP.
TEST(XcpModel, OneFlowFillsTheLinkWithASmallQueue)
{
	Model m(kC, 1, kBuf);
	m.AddFlow(0.64, 0);
	m.Run(60);
	if (Verbose())
		Print(m, 1, 60);
	double u = m.Util(20, 60), qmax = m.QMax(20, 60), qmean = m.QMean(20, 60);
	std::printf("[a] util[20,60)=%.4f qmax=%.0f qmean=%.0f peak q=%.0f drops=%" PRIu64 "\n",
		    u, qmax, qmean, m.QMax(0, 60), m.drops());
	EXPECT_EQ(m.drops(), 0u);
	EXPECT_GE(u, 0.95);
	EXPECT_LE(qmean, 0.02 * 800000);
	EXPECT_LE(m.QMax(0, 60), 0.5 * 800000);
}

// (b) Four flows, 0.64 s, starting 15 s apart. Bound: Jain >= 0.98 over
// the last 40 s, 65 s (~100 RTTs) after the 4th start; shuffling moves
// gamma = 10% of the traffic per interval, so the unfairness left after k
// intervals is about 0.9^k: 100 intervals leave 3e-5.
TEST(XcpModel, FourFlowsConvergeToFairShares)
{
	Model m(kC, 1, kBuf);
	for (int i = 0; i < 4; i++)
		m.AddFlow(0.64, 15.0 * i);
	m.Run(150);
	if (Verbose())
		Print(m, 4, 150);
	auto r = Rates(m, {0, 1, 2, 3}, 110, 150);
	std::printf("[b] util[110,150)=%.4f jain=%.4f rates %.3f %.3f %.3f %.3f qmax=%.0f\n",
		    m.Util(110, 150), Jain(r), r[0] / kC, r[1] / kC, r[2] / kC, r[3] / kC,
		    m.QMax(110, 150));
	// Convergence: the first second after the last start from which every
	// 1-s window has Jain >= 0.98.
	int conv = -1;
	for (int t = 149; t >= 45; t--) {
		if (Jain(Rates(m, {0, 1, 2, 3}, t, t + 1)) < 0.98)
			break;
		conv = t;
	}
	std::printf("[b] fair (1-s Jain >= 0.98 from then on) %d s after the 4th start\n",
		    conv - 45);
	EXPECT_EQ(m.drops(), 0u);
	EXPECT_GE(Jain(r), 0.98);
	EXPECT_GE(m.Util(110, 150), 0.95);
}

// (c) Five flows with base RTTs 0.5 to 0.9 s. No sustained oscillation:
// over the last 50 s every 1-s window carries >= 95% of C (an oscillating
// aggregate would empty the link in its troughs) and the queue never
// exceeds 5% of the BDP (crests would build it); the peak at start-up stays
// under 0.5 BDP as in (a). Katabi's stability result holds for any mix of
// RTTs with the interval at the mean RTT, which is what d is here.
TEST(XcpModel, StableWithRttsFromHalfToNineTenthsOfASecond)
{
	Model m(kC, 1, kBuf);
	for (int i = 0; i < 5; i++)
		m.AddFlow(0.5 + 0.1 * i, 2.0 * i);
	m.Run(150);
	if (Verbose())
		Print(m, 5, 150);
	double umin = 1;
	for (int t = 100; t < 150; t++)
		umin = std::min(umin, m.UtilSec(t));
	auto r = Rates(m, {0, 1, 2, 3, 4}, 100, 150);
	std::printf("[c] util[100,150)=%.4f min 1-s util=%.4f qmax=%.0f peak q=%.0f jain=%.4f\n",
		    m.Util(100, 150), umin, m.QMax(100, 150), m.QMax(0, 150), Jain(r));
	EXPECT_EQ(m.drops(), 0u);
	EXPECT_GE(umin, 0.95);
	EXPECT_LE(m.QMax(100, 150), 0.05 * 800000);
	EXPECT_LE(m.QMax(0, 150), 0.5 * 800000);
}

// (d) Three flows; one leaves at 60 s. Its third of the link shows up as
// spare bandwidth in the next interval and the positive feedback (equal
// throughput increments) hands it out evenly: from 30 s later the two left
// fill >= 95% of C with Jain >= 0.98.
TEST(XcpModel, ALeavingFlowFreesItsShare)
{
	Model m(kC, 1, kBuf);
	m.AddFlow(0.64, 0);
	m.AddFlow(0.64, 0, 60);
	m.AddFlow(0.64, 5);
	m.Run(120);
	if (Verbose())
		Print(m, 3, 120);
	auto before = Rates(m, {0, 1, 2}, 40, 60);
	auto after = Rates(m, {0, 2}, 90, 120);
	std::printf("[d] before: %.3f %.3f %.3f jain %.4f; after: %.3f %.3f jain %.4f util %.4f\n",
		    before[0] / kC, before[1] / kC, before[2] / kC, Jain(before), after[0] / kC,
		    after[1] / kC, Jain(after), m.Util(90, 120));
	EXPECT_EQ(m.drops(), 0u);
	EXPECT_GE(m.Util(90, 120), 0.95);
	EXPECT_GE(Jain(after), 0.98);
}

// The whole model on 4 workers (packets round robin, as RSS would not even
// do): per-packet results differ from one worker's only where a worker's
// part of the budget runs out at another moment than the whole budget would,
// so the runs are not identical packet for packet, but the outcome is the
// same: full link, fair shares (asserted as for one worker) and per-flow
// rates within 1% of C of the single-worker run.
TEST(XcpModel, FourWorkersRunLikeOne)
{
	Model a(kC, 1, kBuf), b(kC, 4, kBuf);
	for (Model *m : {&a, &b})
		for (int i = 0; i < 4; i++)
			m->AddFlow(0.5 + 0.1 * i, 3.0 * i);
	a.Run(100);
	b.Run(100);
	auto ra = Rates(a, {0, 1, 2, 3}, 70, 100), rb = Rates(b, {0, 1, 2, 3}, 70, 100);
	std::printf("[w] 1 worker %.4f %.4f %.4f %.4f util %.4f; 4 workers %.4f %.4f %.4f %.4f "
		    "util %.4f\n",
		    ra[0] / kC, ra[1] / kC, ra[2] / kC, ra[3] / kC, a.Util(70, 100), rb[0] / kC,
		    rb[1] / kC, rb[2] / kC, rb[3] / kC, b.Util(70, 100));
	EXPECT_EQ(b.drops(), 0u);
	EXPECT_GE(b.Util(70, 100), 0.95);
	EXPECT_GE(Jain(rb), 0.98);
	for (int i = 0; i < 4; i++)
		EXPECT_NEAR(ra[i], rb[i], 0.01 * kC) << i;
}

}  // namespace
