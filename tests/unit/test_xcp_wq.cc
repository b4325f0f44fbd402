// SPDX-License-Identifier: BSD-3-Clause
// lib/sgw_xcp_wq: the share between the XCP and the other class at the XCP
// bottleneck. Unit tests of the scheduler, the flow count and the weight,
// then a packet model in virtual time: N XCP senders (the real controller,
// lib/sgw_xcp.h) against M CUBIC-like senders through two queues served at
// C by the scheduler; the average per-flow throughput of the classes must
// come out equal.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <deque>
#include <queue>
#include <random>
#include <vector>

extern "C" {
#include "sgw_xcp.h"
#include "sgw_xcp_wq.h"
}

namespace {

TEST(XcpWq, ConfDefaultsAndChecks)
{
	sgw_xcpq_conf c;
	sgw_xcpq_conf_default(&c);
	EXPECT_EQ(c.gain, 0.5);
	EXPECT_EQ(c.w_min, 0.02);
	EXPECT_EQ(c.w_init, 0.5);
	EXPECT_EQ(sgw_xcpq_conf_check(&c), 0);
	sgw_xcpq_conf b = c;
	b.gain = 0;
	EXPECT_NE(sgw_xcpq_conf_check(&b), 0);
	b = c;
	b.gain = 1.5;
	EXPECT_NE(sgw_xcpq_conf_check(&b), 0);
	b = c;
	b.w_min = 0.6;
	EXPECT_NE(sgw_xcpq_conf_check(&b), 0);
	b = c;
	b.w_init = 0.99;
	EXPECT_NE(sgw_xcpq_conf_check(&b), 0);
	b = c;
	b.gain = NAN;
	EXPECT_NE(sgw_xcpq_conf_check(&b), 0);
}

// Both classes backlogged: the bytes sent follow the weight, to within a packet.
TEST(XcpWq, BackloggedSplitFollowsTheWeight)
{
	sgw_xcpq_conf c;
	sgw_xcpq_conf_default(&c);
	for (double w : {0.5, 0.3, 0.8, 0.02}) {
		sgw_xcpq q;
		sgw_xcpq_init(&q, &c, 0);
		q.w = w;
		std::mt19937 rng(7);
		std::uniform_int_distribution<uint32_t> sz(60, 1500);
		uint64_t b[2] = {0, 0};
		for (int i = 0; i < 200000; i++) {
			int k = sgw_xcpq_pick(&q, true, true);
			ASSERT_GE(k, 0);
			uint32_t s = sz(rng);
			sgw_xcpq_sent(&q, static_cast<unsigned>(k), s);
			b[k] += s;
			// The normalised service of the two never drifts apart by more
			// than a packet over the smaller weight.
			ASSERT_LE(std::fabs(q.vt[0] - q.vt[1]), 1500.0 / std::min(w, 1 - w) + 1);
		}
		double share = double(b[0]) / double(b[0] + b[1]);
		EXPECT_NEAR(share, w, 1500.0 * 2 / double(b[0] + b[1]) / std::min(w, 1 - w))
			<< "w " << w;
		EXPECT_EQ(q.sent_bytes[0], b[0]);
		EXPECT_EQ(q.sent_bytes[1], b[1]);
	}
}

// Work conserving, and an idle class cannot bank credit for later.
TEST(XcpWq, IdleClassBanksNoCredit)
{
	sgw_xcpq_conf c;
	sgw_xcpq_conf_default(&c);
	sgw_xcpq q;
	sgw_xcpq_init(&q, &c, 0);
	EXPECT_EQ(sgw_xcpq_pick(&q, false, false), -1);
	// The other class alone for 1000 packets: it gets every slot.
	for (int i = 0; i < 1000; i++) {
		ASSERT_EQ(sgw_xcpq_pick(&q, false, true), SGW_XCPQ_O);
		sgw_xcpq_sent(&q, SGW_XCPQ_O, 1000);
	}
	// Then both: the XCP class does not get 1000 packets in a row, it
	// alternates from the start (weights 0.5).
	int run = 0;
	for (int i = 0; i < 10; i++) {
		int k = sgw_xcpq_pick(&q, true, true);
		sgw_xcpq_sent(&q, static_cast<unsigned>(k), 1000);
		run += k == SGW_XCPQ_X;
	}
	EXPECT_GE(run, 4);
	EXPECT_LE(run, 6);
}

TEST(XcpWq, LinearCountingWithinAFewPercent)
{
	for (uint32_t n : {0u, 1u, 2u, 10u, 100u, 1000u, 4000u}) {
		sgw_xcpq_conf c;
		sgw_xcpq_conf_default(&c);
		sgw_xcpq q;
		sgw_xcpq_init(&q, &c, 0);
		for (uint32_t f = 0; f < n; f++) {
			uint8_t key[13];
			for (int r = 0; r < 3; r++) {  // several packets of each flow
				std::memset(key, 0, sizeof(key));
				std::memcpy(key, &f, sizeof(f));
				key[12] = 6;
				sgw_xcpq_arrive(&q, SGW_XCPQ_O, sgw_xcpq_hash(key, sizeof(key)),
						1500);
			}
		}
		double est = sgw_xcpq_count(q.fc[SGW_XCPQ_O]);
		EXPECT_NEAR(est, double(n), std::max(0.6, 0.05 * n)) << n;
		EXPECT_EQ(sgw_xcpq_count(q.fc[SGW_XCPQ_X]), 0.0);
	}
	// Small packets do not count a flow; a bad class is ignored.
	sgw_xcpq_conf c;
	sgw_xcpq_conf_default(&c);
	sgw_xcpq q;
	sgw_xcpq_init(&q, &c, 0);
	sgw_xcpq_arrive(&q, SGW_XCPQ_X, 1, SGW_XCPQ_FLOW_MIN_BYTES);
	sgw_xcpq_arrive(&q, 7, 1, 1500);
	EXPECT_EQ(sgw_xcpq_count(q.fc[SGW_XCPQ_X]), 0.0);
	// Saturated: finite.
	std::memset(q.fc[SGW_XCPQ_X], 0xff, sizeof(q.fc[SGW_XCPQ_X]));
	EXPECT_TRUE(std::isfinite(sgw_xcpq_count(q.fc[SGW_XCPQ_X])));
}

// The weight moves gain of the way to N_x / (N_x + N_o) each interval,
// within [w_min, 1 - w_min]; the XCP capacity is max(w C, C - other's rate).
TEST(XcpWq, WeightFollowsTheFlowCountsAndCapacityRule)
{
	sgw_xcpq_conf c;
	sgw_xcpq_conf_default(&c);
	sgw_xcpq q;
	sgw_xcpq_init(&q, &c, 0);
	const double C = 1e6;
	uint64_t t = 0;
	auto interval = [&](uint32_t nx, uint32_t no, uint64_t sent_o) {
		for (uint32_t f = 0; f < nx; f++)
			sgw_xcpq_arrive(&q, SGW_XCPQ_X, f * 2654435761u, 1000);
		for (uint32_t f = 0; f < no; f++)
			sgw_xcpq_arrive(&q, SGW_XCPQ_O, (f + 1000) * 2654435761u, 1000);
		sgw_xcpq_sent(&q, SGW_XCPQ_O, static_cast<uint32_t>(sent_o));
		t += 1000000000ull;
		return sgw_xcpq_interval(&q, &c, t, C);
	};
	// 1 XCP, 3 other flows, the other class sending 0.75 C: target 0.25.
	double w = 0.5, cap = 0;
	for (int i = 0; i < 12; i++) {
		cap = interval(1, 3, 750000);
		// The target is the linear-counting estimate's, ~0.25.
		EXPECT_NEAR(q.last.w_target, 0.25, 0.001);
		w += 0.5 * (q.last.w_target - w);
		EXPECT_NEAR(q.w, w, 1e-12);
	}
	EXPECT_NEAR(q.last.flows[SGW_XCPQ_X], 1.0, 0.01);
	EXPECT_NEAR(q.last.flows[SGW_XCPQ_O], 3.0, 0.01);
	EXPECT_NEAR(q.last.w_target, 0.25, 0.01);
	EXPECT_NEAR(cap, 0.25 * C, 0.001 * C);
	EXPECT_NEAR(q.last.sent_Bps[SGW_XCPQ_O], 750000, 1);
	// The other class sends only 0.1 C and ran out at some moment: the XCP
	// class is told of 0.9 C.
	sgw_xcpq_pick(&q, true, false);
	cap = interval(1, 3, 100000);
	EXPECT_NEAR(cap, 0.9 * C, 1);
	EXPECT_TRUE(q.last.o_idle);
	// The same rate with a backlog all along (the line gave less than C):
	// only the weighted share.
	sgw_xcpq_pick(&q, true, true);
	cap = interval(1, 3, 100000);
	EXPECT_NEAR(cap, q.w * C, 1);
	EXPECT_FALSE(q.last.o_idle);
	// A flow is counted for SGW_XCPQ_FC_MEM intervals after its last packet:
	// one TCP flow silent (a timeout) for three intervals still counts.
	for (int i = 0; i < 3; i++) {
		interval(1, 2, 750000);
		EXPECT_NEAR(q.last.flows[SGW_XCPQ_O], 3.0, 0.01) << i;
	}
	interval(1, 2, 750000);
	EXPECT_NEAR(q.last.flows[SGW_XCPQ_O], 2.0, 0.01) << "forgotten after 4";
	// No other flow: the weight goes to 1 - w_min, never 1.
	for (int i = 0; i < 30; i++) {
		sgw_xcpq_pick(&q, true, false);
		cap = interval(5, 0, 0);
	}
	EXPECT_NEAR(q.w, 1 - c.w_min, 1e-6);
	EXPECT_NEAR(cap, C, 1);
	// No XCP flow: w_min, not 0 (a new XCP flow is never shut out).
	for (int i = 0; i < 30; i++)
		interval(0, 5, 1000000);
	EXPECT_NEAR(q.w, c.w_min, 1e-6);
	// No flow at all (after the memory has forgotten them): the weight stays.
	for (unsigned i = 0; i < SGW_XCPQ_FC_MEM; i++)
		interval(0, 0, 0);
	double before = q.w;
	interval(0, 0, 0);
	EXPECT_EQ(q.w, before);
	EXPECT_EQ(q.last.flows[SGW_XCPQ_O], 0.0);
	EXPECT_EQ(q.intervals, 83u);
	// now before the start: dt 0, rates 0, no crash.
	sgw_xcpq_interval(&q, &c, 0, C);
	EXPECT_EQ(q.last.dt_ns, 0u);
}

// ---- the model: N XCP vs M CUBIC-like senders through the two queues ----

constexpr uint64_t kMs = 1000000ull;
constexpr uint32_t kPkt = 1000;

struct MFlow {
	bool xcp;
	double rtt;            // base RTT, s
	double cwnd = 10 * kPkt;  // bytes
	double srtt = 0;
	double tokens = 0;
	uint64_t inflight = 0;
	// CUBIC (packets, seconds)
	bool ss = true;
	double wmax = 0, t_epoch = 0, k = 0;
	double last_cut = -1;
	double bytes_win = 0;  // departed in the measuring window
	uint32_t hash;
};

struct MPkt {
	int f;
	uint64_t t_send;
	int32_t fb;
};

struct MAck {
	uint64_t t;
	int f;
	uint64_t t_send;
	int32_t fb;
	bool lost;
	bool operator>(const MAck &o) const { return t > o.t; }
};

class TwoQueueModel {
public:
	TwoQueueModel(double cap_Bps, uint32_t qx_pkts, uint32_t qo_pkts, double gain = 0.5)
	    : C_(cap_Bps), qx_lim_(qx_pkts), qo_lim_(qo_pkts)
	{
		sgw_xcp_conf_default(&xc_);
		sgw_xcpq_conf_default(&qc_);
		qc_.gain = gain;
		sgw_xcp_acc_init(&acc_);
		sgw_xcp_ctl_init(&xc_, &ctl_, 0, nullptr, 1, &out_);
		sgw_xcp_pub_init(&pub_, &out_);
		local_ = out_;
		local_.pos_left = out_.pos_budget;
		local_.neg_left = out_.neg_budget;
		sgw_xcp_qest_init(&qest_);
		sgw_xcpq_init(&wq_, &qc_, 0);
	}
	void Add(bool xcp, double rtt)
	{
		MFlow f;
		f.xcp = xcp;
		f.rtt = rtt;
		f.hash = static_cast<uint32_t>(fl_.size() + 1) * 2654435761u;
		fl_.push_back(f);
	}
	void Run(double secs, double measure_from)
	{
		uint64_t end = static_cast<uint64_t>(secs * 1e9);
		uint64_t m0 = static_cast<uint64_t>(measure_from * 1e9);
		double credit = 0;
		for (uint64_t now = 0; now < end; now += kMs) {
			double t = double(now) / 1e9;
			Acks(now, t);
			Send(now, t);
			// Serve: C per ms, the scheduler picks the class.
			credit = std::min(credit + C_ / 1000.0, 2.0 * kPkt);
			while (credit >= kPkt) {
				int k = sgw_xcpq_pick(&wq_, !qx_.empty(), !qo_.empty());
				if (k < 0) {
					credit = 0;
					break;
				}
				auto &qq = k == SGW_XCPQ_X ? qx_ : qo_;
				MPkt p = qq.front();
				qq.pop_front();
				sgw_xcpq_sent(&wq_, static_cast<unsigned>(k), kPkt);
				credit -= kPkt;
				MFlow &f = fl_[static_cast<size_t>(p.f)];
				if (now >= m0) {
					f.bytes_win += kPkt;
					sent_win_ += kPkt;
				}
				acks_.push({now + static_cast<uint64_t>(f.rtt * 1e9), p.f,
					    p.t_send, p.fb, false});
			}
			sgw_xcp_qest_sample(&qest_, &xc_, now, qx_.size() * kPkt, ctl_.d_ns,
					    cap_x_);
			if (now >= sgw_xcp_ctl_deadline(&ctl_)) {
				sgw_xcp_sums s;
				sgw_xcp_acc_read(&acc_, &s);
				cap_x_ = sgw_xcpq_interval(&wq_, &qc_, now, C_);
				sgw_xcp_aggregate(&xc_, &ctl_, &s, 1, cap_x_,
						  double(sgw_xcp_qest_value(&qest_, now)), now,
						  &ctl_, &out_);
				sgw_xcp_pub_write(&pub_, &out_);
				sgw_xcp_pub_refresh(&pub_, &local_);
			}
		}
		win_s_ = secs - measure_from;
	}
	// The XCP class's fairness level: its share of what was sent over its
	// share of the flows (the seed's definition).
	double Level() const
	{
		double bx = 0, nx = 0;
		for (auto &f : fl_)
			if (f.xcp) {
				bx += f.bytes_win;
				nx++;
			}
		return (bx / sent_win_) / (nx / double(fl_.size()));
	}
	double Util() const { return sent_win_ / win_s_ / C_; }
	double W() const { return wq_.w; }
	uint64_t DropsX() const { return drops_x_; }
	uint64_t DropsO() const { return drops_o_; }
	double Jain(bool xcp) const
	{
		double s = 0, s2 = 0, n = 0;
		for (auto &f : fl_)
			if (f.xcp == xcp) {
				s += f.bytes_win;
				s2 += f.bytes_win * f.bytes_win;
				n++;
			}
		return s * s / (n * s2);
	}

private:
	void Cut(MFlow &f, double t)
	{
		if (f.last_cut >= 0 && t - f.last_cut < (f.srtt > 0 ? f.srtt : f.rtt))
			return;  // one cut per RTT
		f.last_cut = t;
		double w = f.cwnd / kPkt;
		f.wmax = w;
		f.cwnd = std::max(0.7 * f.cwnd, double(2 * kPkt));
		f.ss = false;
		f.t_epoch = t;
		f.k = std::cbrt(f.wmax * 0.3 / 0.4);
	}
	void Acks(uint64_t now, double t)
	{
		while (!acks_.empty() && acks_.top().t <= now) {
			MAck a = acks_.top();
			acks_.pop();
			MFlow &f = fl_[static_cast<size_t>(a.f)];
			f.inflight -= kPkt;
			if (a.lost) {
				Cut(f, t);
				continue;
			}
			double r = double(now - a.t_send) / 1e9;
			f.srtt = f.srtt == 0 ? r : 0.875 * f.srtt + 0.125 * r;
			if (f.xcp) {
				f.cwnd = std::max(f.cwnd + a.fb, double(kPkt));
			} else if (f.ss) {
				f.cwnd += kPkt;
			} else {
				double target = 0.4 * std::pow(t + f.srtt - f.t_epoch - f.k, 3) +
					f.wmax;
				double w = f.cwnd / kPkt;
				if (target > w)
					f.cwnd += kPkt * std::min((target - w) / w, 0.5);
				else
					f.cwnd += kPkt * 0.01 / w;
			}
		}
	}
	void Send(uint64_t now, double t)
	{
		(void)t;
		for (size_t i = 0; i < fl_.size(); i++) {
			MFlow &f = fl_[i];
			double rtt = f.srtt > 0 ? f.srtt : f.rtt;
			f.tokens = std::min(f.tokens + f.cwnd / rtt / 1000.0, double(4 * kPkt));
			while (f.tokens >= kPkt && f.inflight + kPkt <= f.cwnd) {
				f.tokens -= kPkt;
				f.inflight += kPkt;
				MPkt p{static_cast<int>(i), now, 0};
				auto &qq = f.xcp ? qx_ : qo_;
				uint32_t lim = f.xcp ? qx_lim_ : qo_lim_;
				unsigned cls = f.xcp ? SGW_XCPQ_X : SGW_XCPQ_O;
				sgw_xcpq_arrive(&wq_, cls, f.hash, kPkt);
				if (f.xcp) {
					uint32_t rtt_us = static_cast<uint32_t>(f.srtt * 1e6);
					p.fb = rtt_us == 0 ? 0 :
						sgw_xcp_on_packet(&acc_, &local_, kPkt, rtt_us,
								  static_cast<uint32_t>(f.cwnd));
				}
				if (qq.size() >= lim) {
					(f.xcp ? drops_x_ : drops_o_)++;
					acks_.push({now + static_cast<uint64_t>(f.rtt * 1e9),
						    static_cast<int>(i), now, 0, true});
					continue;
				}
				qq.push_back(p);
			}
		}
	}

	double C_;
	uint32_t qx_lim_, qo_lim_;
	sgw_xcp_conf xc_;
	sgw_xcpq_conf qc_;
	sgw_xcp_acc acc_;
	sgw_xcp_ctl ctl_;
	sgw_xcp_params out_, local_;
	sgw_xcp_pub pub_;
	sgw_xcp_qest qest_;
	sgw_xcpq wq_;
	double cap_x_ = 0;
	std::vector<MFlow> fl_;
	std::deque<MPkt> qx_, qo_;
	std::priority_queue<MAck, std::vector<MAck>, std::greater<MAck>> acks_;
	uint64_t drops_x_ = 0, drops_o_ = 0;
	double sent_win_ = 0, win_s_ = 1;
};

struct Case {
	int nx, no;
};

// k XCP against k CUBIC-like flows, and unequal counts: per-flow throughput
// of the two classes equal within 10% (the seed's "good fairness" band),
// the link full, no XCP drop.
TEST(XcpWqModel, XcpAgainstCubicConvergesToEqualPerFlowThroughput)
{
	for (Case cs : {Case{1, 1}, Case{2, 2}, Case{4, 4}, Case{1, 3}, Case{3, 1}, Case{2, 6}}) {
		TwoQueueModel m(1.25e6, 1000, 300);  // 10 Mbit/s, 1000 B packets
		for (int i = 0; i < cs.nx; i++)
			m.Add(true, 0.6 + 0.05 * i);
		for (int i = 0; i < cs.no; i++)
			m.Add(false, 0.6 + 0.05 * i);
		m.Run(240, 120);
		EXPECT_NEAR(m.Level(), 1.0, 0.1) << cs.nx << " XCP vs " << cs.no << " CUBIC";
		EXPECT_GT(m.Util(), 0.97) << cs.nx << " vs " << cs.no;
		EXPECT_NEAR(m.W(), double(cs.nx) / (cs.nx + cs.no), 0.05);
		EXPECT_EQ(m.DropsX(), 0u);
		EXPECT_GT(m.Jain(true), 0.98);
		std::printf("  %d XCP vs %d CUBIC: level %.3f, util %.4f, w %.3f, drops %llu\n",
			    cs.nx, cs.no, m.Level(), m.Util(), m.W(),
			    static_cast<unsigned long long>(m.DropsO()));
	}
}

// The broken case: a weight that does not adapt (gain 1e-9: ns-2's fixed
// 0.5 / 0.5 split) gives one XCP flow against three CUBIC flows half the
// link, twice its per-flow share; three against one, two thirds of it.
TEST(XcpWqModel, FixedHalfSplitIsNotPerFlowFair)
{
	for (Case cs : {Case{1, 3}, Case{3, 1}}) {
		TwoQueueModel m(1.25e6, 1000, 300, 1e-9);
		for (int i = 0; i < cs.nx; i++)
			m.Add(true, 0.6);
		for (int i = 0; i < cs.no; i++)
			m.Add(false, 0.6);
		m.Run(240, 120);
		EXPECT_NEAR(m.W(), 0.5, 1e-6);
		double want = 0.5 / (double(cs.nx) / (cs.nx + cs.no));
		EXPECT_NEAR(m.Level(), want, 0.05 * want) << cs.nx << " vs " << cs.no;
	}
}

// Without the other class the XCP flows get the whole link (w 0.98 and the
// capacity rule), and XCP alone behaves as before: small queue.
TEST(XcpWqModel, XcpAloneGetsTheWholeLink)
{
	TwoQueueModel m(1.25e6, 1000, 300);
	m.Add(true, 0.6);
	m.Add(true, 0.8);
	m.Run(120, 60);
	EXPECT_GT(m.Util(), 0.98);
	EXPECT_NEAR(m.W(), 0.98, 1e-6);
	EXPECT_GT(m.Jain(true), 0.99);
}

}  // namespace
