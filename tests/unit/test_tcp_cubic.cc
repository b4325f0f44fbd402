// SPDX-License-Identifier: BSD-3-Clause
// Tests of CUBIC (lib/sgw_tcp_cubic.c, RFC 9438) in virtual time: the ops
// driven directly on a connection, ACKs spread evenly over each round trip,
// the window compared with the RFC's formulas computed here independently.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "sgw_tcp.h"

namespace {

constexpr uint64_t kMs = 1000000ull;
constexpr double kC = 0.4;
constexpr double kBeta = 0.7;
constexpr uint32_t kMss = 1000;

struct Sim {
	alignas(64) sgw_tcp_conn c;
	uint64_t now = 5000 * kMs;

	explicit Sim(uint32_t rtt_ms)
	{
		std::memset(&c, 0, sizeof(c));
		c.snd_mss = kMss;
		c.srtt_us = rtt_ms * 1000;
		sgw_tcp_set_cc(&c, &sgw_tcp_cc_cubic);
	}

	// A loss with flight = cwnd (a cwnd-limited sender); cwnd = ssthresh after (RFC 6675).
	void Loss()
	{
		c.snd_una = 0;
		c.snd_max = c.cwnd;
		c.ssthresh = c.cc->ssthresh(&c, now);
		c.cwnd = c.ssthresh;
	}

	// One round trip of ACKs, one per segment of cwnd, evenly spaced.
	void Rtt()
	{
		uint64_t rtt = (uint64_t)c.srtt_us * 1000;
		uint32_t n = c.cwnd / kMss;
		uint64_t t0 = now;
		for (uint32_t i = 1; i <= n; i++) {
			now = t0 + rtt * i / n;
			c.cc->ack(&c, kMss, now);
		}
		now = t0 + rtt;
	}
};

// RFC 9438 eq. 1, segments.
double
Wcubic(double t, double k, double wmax)
{
	return kC * std::pow(t - k, 3) + wmax;
}

TEST(TcpCubic, LossResponseBetaAndFastConvergence)
{
	// a long RTT keeps W_est (0.53 segment per RTT) below the cubic plateau
	Sim s(500);
	s.c.cwnd = 100 * kMss;
	s.c.ssthresh = 50 * kMss;
	EXPECT_STREQ(s.c.cc->name, "cubic");
	s.Loss();
	EXPECT_EQ(s.c.ssthresh, 70u * kMss) << "ssthresh = flight * 0.7";
	// the plateau is the window before the loss: W_max = 100 segments
	double k = std::cbrt((100.0 - 70.0) / kC);
	uint64_t t0 = s.now;
	while (s.now - t0 < (uint64_t)(k * 1e9))
		s.Rtt();
	EXPECT_NEAR(s.c.cwnd / (double)kMss, 100.0, 2.0);
	// a second loss below W_max: fast convergence, W_max = cwnd (1 + beta) / 2
	s.c.cwnd = 90 * kMss;
	s.Loss();
	EXPECT_EQ(s.c.ssthresh, 63u * kMss);
	double wmax = 90.0 * (1 + kBeta) / 2;  // 76.5
	double k2 = std::cbrt((wmax - 63.0) / kC);
	t0 = s.now;
	while (s.now - t0 < (uint64_t)(k2 * 1e9))
		s.Rtt();
	EXPECT_NEAR(s.c.cwnd / (double)kMss, wmax, 2.0) << "plateau at the lowered W_max";
	// the floor: 2 segments
	s.c.cwnd = 2 * kMss;
	s.Loss();
	EXPECT_EQ(s.c.ssthresh, 2u * kMss);
}

// The window follows W_cubic(t) .. W_cubic(t + RTT): concave to W_max, then convex.
TEST(TcpCubic, WindowCurveFollowsRfc9438)
{
	Sim s(100);
	s.c.cwnd = 100 * kMss;
	s.c.ssthresh = 1000 * kMss;
	s.Loss();
	double k = std::cbrt((100.0 - 70.0) / kC);
	uint64_t t0 = s.now + 1;  // the epoch starts with the first ACK
	std::vector<double> w;
	double west = 70.0, alpha = 3 * (1 - kBeta) / (1 + kBeta);
	int cubic_rtts = 0, reno_rtts = 0;
	for (int r = 0; r < 80; r++) {
		uint32_t n = s.c.cwnd / kMss;
		for (uint32_t i = 0; i < n; i++)
			west += (west >= 100.0 ? 1.0 : alpha) / (s.c.cwnd / (double)kMss);
		s.Rtt();
		double t = (double)(s.now - t0) * 1e-9;
		double cw = s.c.cwnd / (double)kMss;
		w.push_back(cw);
		double lo = Wcubic(t, k, 100.0), hi = Wcubic(t + 0.1, k, 100.0);
		if (lo < west) {
			// Reno-friendly: W_est (it reaches W_max after ~57 RTTs, then 1 per RTT)
			reno_rtts++;
			EXPECT_NEAR(cw, west, 1.0) << "t " << t;
		} else if (t > 0.3) {
			cubic_rtts++;
			EXPECT_GE(cw, lo - 1.0) << "t " << t;
			EXPECT_LE(cw, hi + 1.0) << "t " << t;
		}
	}
	EXPECT_GT(cubic_rtts, 50);
	EXPECT_GT(reno_rtts, 10) << "W_est overtakes the flat cubic near K";
	// concave: growth per RTT shrinks toward K
	int ik = (int)(k / 0.1);
	EXPECT_GT(w[5] - w[4], 4 * (w[ik - 5] - w[ik - 6]));
	EXPECT_NEAR(w[ik], 100.0, 1.5);
}

// A longer RTT (300 ms) keeps the cubic region past K: convex growth after the plateau.
TEST(TcpCubic, ConvexAfterThePlateau)
{
	Sim s(300);
	s.c.cwnd = 100 * kMss;
	s.c.ssthresh = 1000 * kMss;
	s.Loss();
	double k = std::cbrt((100.0 - 70.0) / kC);
	uint64_t t0 = s.now + 1;
	std::vector<double> w;
	for (int r = 0; r < 30; r++) {
		s.Rtt();
		w.push_back(s.c.cwnd / (double)kMss);
	}
	double t = (double)(s.now - t0) * 1e-9;  // 9 s
	EXPECT_GE(w.back(), Wcubic(t, k, 100.0) - 1.0);
	EXPECT_LE(w.back(), Wcubic(t + 0.3, k, 100.0) + 1.0);
	int ik = (int)(k / 0.3);
	EXPECT_GT(w[29] - w[28], 4 * (w[ik + 2] - w[ik + 1])) << "convex: accelerating";
	EXPECT_GT(w.back(), 115.0);
}

// A short RTT: W_est grows faster than W_cubic, cwnd follows W_est (alpha 0.53, then 1).
TEST(TcpCubic, RenoFriendlyRegion)
{
	Sim s(2);
	s.c.cwnd = 100 * kMss;
	s.c.ssthresh = 1000 * kMss;
	s.Loss();
	double k = std::cbrt((100.0 - 70.0) / kC);
	uint64_t t0 = s.now + 1;
	double west = 70.0;  // segments; the RFC's increment per ACK computed here
	double alpha = 3 * (1 - kBeta) / (1 + kBeta);
	int reno_rtts = 0;
	for (int r = 0; r < 150; r++) {
		uint32_t n = s.c.cwnd / kMss;
		for (uint32_t i = 0; i < n; i++)
			west += (west >= 100.0 ? 1.0 : alpha) * 1.0 / (s.c.cwnd / (double)kMss);
		s.Rtt();
		double t = (double)(s.now - t0) * 1e-9;
		if (Wcubic(t, k, 100.0) < west) {
			reno_rtts++;
			EXPECT_NEAR(s.c.cwnd / (double)kMss, west, 0.05 * west + 1) << "rtt " << r;
		}
	}
	EXPECT_EQ(reno_rtts, 150) << "a 2 ms RTT stays Reno-friendly";
	// about 57 RTTs at alpha 0.53 to reach W_max, then one segment per RTT
	EXPECT_NEAR(s.c.cwnd / (double)kMss, 100.0 + (150 - 30.0 / alpha), 6.0);
	EXPECT_GT(s.c.cwnd / (double)kMss,
		  Wcubic((double)(s.now - t0) * 1e-9, k, 100.0) + 50.0);
}

TEST(TcpCubic, SlowStartBelowSsthreshAndNoLossStartsConvex)
{
	Sim s(50);
	s.c.cwnd = 10 * kMss;
	s.c.ssthresh = 40 * kMss;
	s.Rtt();
	EXPECT_EQ(s.c.cwnd, 20u * kMss) << "slow start doubles per RTT";
	s.Rtt();
	s.Rtt();
	// 40 segments reached: congestion avoidance with W_max = cwnd at the epoch, K = 0
	uint32_t at = s.c.cwnd;
	EXPECT_GE(at, 40u * kMss);
	for (int r = 0; r < 20; r++)
		s.Rtt();
	EXPECT_GT(s.c.cwnd, at) << "grows without a loss";
	EXPECT_LT(s.c.cwnd, at + 40 * kMss);
}

TEST(TcpCubic, PerConnectionAndPerStackSelection)
{
	sgw_tcp_conf conf;
	sgw_tcp_conf_default(&conf);
	sgw_tcp_ops ops{};
	ops.tx = [](void *, sgw_tcp_conn *, const uint8_t *, uint32_t, uint32_t, uint32_t) {};
	ops.rx_data = [](void *, sgw_tcp_conn *, uint32_t, const uint8_t *, uint32_t) {};
	ops.rx_advance = [](void *, sgw_tcp_conn *, uint32_t) {};
	ops.rx_space = [](void *, sgw_tcp_conn *) -> uint32_t { return 65535; };
	ops.tx_acked = [](void *, sgw_tcp_conn *, uint32_t) {};
	sgw_tcp_stack st;
	ASSERT_EQ(sgw_tcp_stack_init(&st, &conf, &ops, nullptr), 0);
	alignas(64) sgw_tcp_conn a, b;
	sgw_tcp_conn_init(&st, &a, 1, 1, 2);
	EXPECT_EQ(a.cc, &sgw_tcp_cc_newreno);
	sgw_tcp_stack_set_cc(&st, &sgw_tcp_cc_cubic);
	sgw_tcp_conn_init(&st, &b, 1, 1, 2);
	EXPECT_EQ(b.cc, &sgw_tcp_cc_cubic);
	sgw_tcp_set_cc(&b, nullptr);
	EXPECT_EQ(b.cc, &sgw_tcp_cc_newreno);
}

}  // namespace
