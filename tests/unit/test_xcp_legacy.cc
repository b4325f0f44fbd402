// SPDX-License-Identifier: BSD-3-Clause
// Tests of lib/sgw_xcp_legacy.c, XCP for senders without an agent, in
// virtual time.
//
// Unit: the hub's estimates of a flow (bytes in flight, RTT from a data
// segment to the ACK that covers it), the share following the controller's
// feedback, the clamp on the ACKs toward the sender (window scale from the
// handshake, checksum by recomputation), what is not handled (UDP, ESP,
// XCP-carrying, malformed, ACKs of unknown flows).
//
// Model (class LegacyModel): N TCP-like senders that know nothing of XCP:
// ACK-clocked, own window in slow start without loss (so only the receive
// window limits them), and obeying the advertised window (they never send
// past ack + wnd << 7). Real IPv4/TCP bytes; a handshake with window scale 7
// and MSS 1000. The hub sits 10 ms from the senders at a FIFO bottleneck of
// capacity C served in 1 ms steps: each data packet joining the queue goes
// through sgw_xcpl_data with the controller (sgw_xcp_on_packet, one worker,
// sgw_xcp_aggregate at each deadline, sgw_xcp_qest on each arrival); each
// ACK on its way back through sgw_xcpl_ack. The receiver ACKs every packet
// with a window of 65535 << 7 (8 MiB). Checked: utilisation, fair shares,
// queue, and that no sender ever sees its right edge move left.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <deque>
#include <queue>
#include <vector>

#include "sgw_xcp_legacy.h"
#include "test_rng.h"

namespace {

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

uint16_t
Csum(const uint8_t *p, size_t n, uint32_t s)
{
	for (size_t i = 0; i + 1 < n; i += 2)
		s += Get16(p + i);
	if (n & 1)
		s += static_cast<uint32_t>(p[n - 1]) << 8;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return static_cast<uint16_t>(~s);
}

uint32_t
Pseudo(const Bytes &b)
{
	uint32_t s = 0;
	for (int i = 12; i < 20; i += 2)
		s += Get16(&b[i]);
	return s + 6 + static_cast<uint32_t>(b.size() - 20);
}

bool
TcpOk(const Bytes &b)
{
	return Csum(&b[20], b.size() - 20, Pseudo(b)) == 0;
}

// IPv4 (no options) + TCP (SYN: MSS 1000 and WS 7) + pay bytes.
Bytes
Tcp(uint8_t src, uint8_t dst, uint16_t sp, uint16_t dp, uint32_t seq, uint32_t ack,
    uint8_t flags, uint16_t wnd, size_t pay)
{
	bool syn = flags & SGW_XCPA_TH_SYN;
	size_t th = syn ? 28 : 20;
	Bytes b(20 + th + pay, 0);
	b[0] = 0x45;
	Put16(&b[2], static_cast<uint16_t>(b.size()));
	b[6] = 0x40;
	b[8] = 64;
	b[9] = 6;
	b[12] = 10;
	b[15] = src;
	b[16] = 10;
	b[19] = dst;
	Put16(&b[10], Csum(b.data(), 20, 0));
	uint8_t *t = &b[20];
	Put16(t, sp);
	Put16(t + 2, dp);
	Put32(t + 4, seq);
	Put32(t + 8, ack);
	t[12] = static_cast<uint8_t>((th / 4) << 4);
	t[13] = flags;
	Put16(t + 14, wnd);
	if (syn) {
		const uint8_t o[8] = {2, 4, 0x03, 0xe8, 1, 3, 3, 7};
		memcpy(t + 20, o, 8);
	}
	Put16(t + 16, Csum(t, th + pay, Pseudo(b)));
	return b;
}

struct Hub {
	sgw_xcpl l{};
	std::vector<sgw_xcpa_flow> mem;
	explicit Hub(uint32_t n = 64)
	{
		sgw_xcpl_conf c;
		sgw_xcpl_conf_default(&c);
		mem.resize(n);
		EXPECT_EQ(sgw_xcpl_init(&l, &c, mem.data(), mem.size() * sizeof(mem[0])), 0);
	}
};

sgw_xcp_params
Params(double xi_p, double xi_n)
{
	sgw_xcp_params p{};
	p.xi_p = xi_p;
	p.xi_n = xi_n;
	p.rtt_max_us = 10000000;
	return p;
}

const uint8_t kA[4] = {10, 0, 0, 1}, kB[4] = {10, 0, 0, 2};

TEST(XcpLegacy, EstimatesInflightAndRttAndClampsWithTheScale)
{
	Hub h;
	sgw_xcp_params par = Params(0, 0);
	int32_t fb = 0;
	uint64_t t = 0;
	Bytes syn = Tcp(1, 2, 1000, 80, 100, 0, SGW_XCPA_TH_SYN, 65535, 0);
	EXPECT_EQ(sgw_xcpl_data(&h.l, nullptr, &par, syn.data(), syn.size(), 60, t, &fb), 1);
	t += 550 * kMs;
	Bytes sa = Tcp(2, 1, 80, 1000, 7000, 101, SGW_XCPA_TH_SYN | SGW_XCPA_TH_ACK, 65535, 0);
	EXPECT_EQ(sgw_xcpl_ack(&h.l, sa.data(), sa.size(), t), 1);  // SYN-ACK: unscaled clamp
	EXPECT_EQ(Get16(&sa[34]), 10000);  // 10 MSS of the SYN's 1000
	EXPECT_TRUE(TcpOk(sa));
	const sgw_xcpa_flow *f = sgw_xcpl_find(&h.l, 4, kA, 1000, kB, 80, t);
	ASSERT_NE(f, nullptr);
	EXPECT_EQ(f->rtt.srtt_us, 550000u);
	EXPECT_EQ(f->mss, 1000u);
	// 8 segments of 1000 forwarded, 3 acknowledged: 5000 in flight.
	for (uint32_t i = 0; i < 8; i++) {
		Bytes d = Tcp(1, 2, 1000, 80, 101 + 1000 * i, 7001, SGW_XCPA_TH_ACK, 500, 1000);
		EXPECT_EQ(sgw_xcpl_data(&h.l, nullptr, &par, d.data(), d.size(), 1040, t, &fb), 1);
	}
	Bytes a = Tcp(2, 1, 80, 1000, 7001, 3101, SGW_XCPA_TH_ACK, 65535, 0);
	EXPECT_EQ(sgw_xcpl_ack(&h.l, a.data(), a.size(), t + 600 * kMs), 1);
	EXPECT_EQ(sgw_xcpl_inflight(f), 5000u);
	EXPECT_EQ(Get16(&a[34]), 10000u >> 7);  // the share in units of 128
	EXPECT_TRUE(TcpOk(a));
	EXPECT_EQ(h.l.ctr[SGW_XCPL_C_RTT_SAMPLES], 2u);
}

TEST(XcpLegacy, ShareFollowsTheControllersFeedback)
{
	Hub h;
	// Feedback = xi_p rtt^2 s / cwnd - xi_n rtt s with rtt 0.5 s, s 1040.
	sgw_xcp_params par = Params(1e-9, 0);
	int32_t fb = 0;
	Bytes syn = Tcp(1, 2, 1000, 80, 100, 0, SGW_XCPA_TH_SYN, 65535, 0);
	sgw_xcpl_data(&h.l, nullptr, &par, syn.data(), syn.size(), 60, 0, &fb);
	EXPECT_EQ(fb, 0);  // no RTT yet: no feedback
	Bytes sa = Tcp(2, 1, 80, 1000, 7000, 101, SGW_XCPA_TH_SYN | SGW_XCPA_TH_ACK, 65535, 0);
	sgw_xcpl_ack(&h.l, sa.data(), sa.size(), 500 * kMs);
	const sgw_xcpa_flow *f = sgw_xcpl_find(&h.l, 4, kA, 1000, kB, 80, 500 * kMs);
	uint32_t share = f->cwnd_xcp;
	int64_t sum = 0;
	for (uint32_t i = 0; i < 10; i++) {
		Bytes d = Tcp(1, 2, 1000, 80, 101 + 1000 * i, 7001, SGW_XCPA_TH_ACK, 500, 1000);
		sgw_xcpl_data(&h.l, nullptr, &par, d.data(), d.size(), 1040, 500 * kMs, &fb);
		uint32_t infl = sgw_xcpl_inflight(f);
		EXPECT_EQ(fb, sgw_xcp_feedback(&par, 1040, 500000, infl));
		sum += fb;
	}
	EXPECT_GT(sum, 0);
	// The share is capped at 2 x in flight + 2 MSS while the sender does not use it.
	EXPECT_LE(f->cwnd_xcp, std::max<uint32_t>(share, 2 * 10000 + 2000));
	// Negative feedback takes it down to one MSS, never below.
	sgw_xcp_params neg = Params(0, 1e-3);
	for (uint32_t i = 10; i < 200; i++) {
		Bytes d = Tcp(1, 2, 1000, 80, 101 + 1000 * i, 7001, SGW_XCPA_TH_ACK, 500, 1000);
		sgw_xcpl_data(&h.l, nullptr, &neg, d.data(), d.size(), 1040, 500 * kMs, &fb);
		EXPECT_LT(fb, 0);
	}
	EXPECT_EQ(f->cwnd_xcp, 1000u);
	EXPECT_GT(h.l.ctr[SGW_XCPL_C_SHARE_FLOOR], 0u);
}

// Loss recovery behind another bottleneck: the cumulative ACK stalls while
// the sender sends a cut window per round trip; the share's cap follows what
// was sent in the last round trip, not the sequence flight.
TEST(XcpLegacy, ShareCapFollowsWhatWasSentInARoundTrip)
{
	Hub h;
	sgw_xcp_params none = Params(0, 0), pos = Params(1e-6, 0);
	int32_t fb = 0;
	Bytes syn = Tcp(1, 2, 1000, 80, 100, 0, SGW_XCPA_TH_SYN, 65535, 0);
	sgw_xcpl_data(&h.l, nullptr, &none, syn.data(), syn.size(), 60, 0, &fb);
	Bytes sa = Tcp(2, 1, 80, 1000, 7000, 101, SGW_XCPA_TH_SYN | SGW_XCPA_TH_ACK, 65535, 0);
	sgw_xcpl_ack(&h.l, sa.data(), sa.size(), 500 * kMs);
	const sgw_xcpa_flow *f = sgw_xcpl_find(&h.l, 4, kA, 1000, kB, 80, 500 * kMs);
	ASSERT_NE(f, nullptr);
	ASSERT_EQ(f->rtt.srtt_us, 500000u);
	const uint32_t share0 = f->cwnd_xcp;
	uint32_t seq = 101;
	auto send = [&](int n, sgw_xcp_params p, uint64_t t) {
		for (int i = 0; i < n; i++) {
			Bytes d = Tcp(1, 2, 1000, 80, seq, 7001, SGW_XCPA_TH_ACK, 500, 1000);
			sgw_xcpl_data(&h.l, nullptr, &p, d.data(), d.size(), 1040, t, &fb);
			seq += 1000;
		}
	};
	send(20, none, 500 * kMs);            // round 1: 20000 bytes, no feedback
	Bytes ack = Tcp(2, 1, 80, 1000, 7001, 101 + 10000, SGW_XCPA_TH_ACK, 65535, 0);
	sgw_xcpl_ack(&h.l, ack.data(), ack.size(), 1000 * kMs);
	send(5, none, 1000 * kMs);            // round 2: 5000 (the window cut)
	send(5, pos, 1500 * kMs);             // round 3: 5000, positive feedback
	EXPECT_EQ(sgw_xcpl_inflight(f), 20000u) << "the sequence flight";
	// 2 x 5000 + 2 MSS (1000), where the sequence flight allowed 42000.
	EXPECT_EQ(f->cwnd_xcp, std::max<uint32_t>(share0, 12000u));
	EXPECT_GT(h.l.ctr[SGW_XCPL_C_SHARE_CAP_SENT], 0u);
	EXPECT_EQ(h.l.ctr[SGW_XCPL_C_SHARE_CAP_SENT], h.l.ctr[SGW_XCPL_C_SHARE_CAPPED]);
	EXPECT_STREQ(sgw_xcpl_ctr_name(SGW_XCPL_C_SHARE_CAP_SENT), "share_capped_by_sent");
}

TEST(XcpLegacy, LeavesAloneWhatItCannotRead)
{
	Hub h;
	sgw_xcp_params par = Params(1e-9, 1e-9);
	int32_t fb = 7;
	Bytes esp = Tcp(1, 2, 1000, 80, 100, 0, SGW_XCPA_TH_ACK, 500, 100);
	esp[9] = 50;  // ESP: no TCP to see
	EXPECT_EQ(sgw_xcpl_data(&h.l, nullptr, &par, esp.data(), esp.size(), 140, 0, &fb), 0);
	EXPECT_EQ(fb, 0);
	Bytes udp = esp;
	udp[9] = 17;
	EXPECT_EQ(sgw_xcpl_data(&h.l, nullptr, &par, udp.data(), udp.size(), 140, 0, &fb), 0);
	EXPECT_EQ(h.l.ctr[SGW_XCPL_C_DATA_OTHER], 2u);
	// An ACK of a flow never seen is untouched.
	Bytes a = Tcp(2, 1, 80, 1000, 7001, 3101, SGW_XCPA_TH_ACK, 65535, 0);
	const Bytes a0 = a;
	EXPECT_EQ(sgw_xcpl_ack(&h.l, a.data(), a.size(), 0), 0);
	EXPECT_EQ(a, a0);
	EXPECT_EQ(h.l.ctr[SGW_XCPL_C_ACK_NO_FLOW], 1u);
	// Picked up mid-connection: no handshake, no clamp.
	Bytes d = Tcp(1, 2, 1000, 80, 5000, 7001, SGW_XCPA_TH_ACK, 500, 1000);
	EXPECT_EQ(sgw_xcpl_data(&h.l, nullptr, &par, d.data(), d.size(), 1040, 0, &fb), 1);
	EXPECT_EQ(sgw_xcpl_ack(&h.l, a.data(), a.size(), 0), 0);
	EXPECT_EQ(a, a0);
	EXPECT_EQ(h.l.ctr[SGW_XCPL_C_NO_SCALE], 1u);
	// Every truncation: counted, never trusted.
	for (size_t n = 0; n < d.size(); n++) {
		Bytes c(d.begin(), d.begin() + static_cast<long>(n));
		EXPECT_EQ(sgw_xcpl_data(&h.l, nullptr, &par, c.data(), c.size(), 1040, 0, &fb),
			  -1);
		EXPECT_EQ(sgw_xcpl_ack(&h.l, c.data(), c.size(), 0), -1);
	}
	EXPECT_EQ(h.l.ctr[SGW_XCPL_C_DATA_BAD], d.size());
}

// ---- the model ----

class LegacyModel {
public:
	struct Flow {
		double base_rtt, start, stop;
		uint8_t addr;
		uint32_t iss = 1000, una = 0, nxt = 0, edge = 0;
		uint32_t rcv_nxt = 0;    // the receiver's next expected
		uint32_t rcv_isn = 0;    // the receiver's first sequence + 1
		double cwnd = 10000;     // the sender's own window: slow start, no loss
		bool est = false, syn_sent = false;
		uint64_t retracts = 0;
		std::vector<double> dep;
	};

	LegacyModel(double cap_Bps, uint64_t buf) : C_(cap_Bps), buf_(buf), hub_(256)
	{
		sgw_xcp_conf_default(&conf_);
		sgw_xcp_acc_init(&acc_);
		EXPECT_EQ(sgw_xcp_ctl_init(&conf_, &ctl_, 0, nullptr, 1, &local_), 0);
		sgw_xcp_pub_init(&pub_, &local_);
		sgw_xcp_qest_init(&qest_);
	}
	void AddFlow(double rtt, double start, double stop = 1e9)
	{
		Flow f;
		f.base_rtt = rtt;
		f.start = start;
		f.stop = stop;
		f.addr = static_cast<uint8_t>(10 + flows_.size());
		flows_.push_back(f);
	}
	void Run(double seconds)
	{
		const uint64_t end = static_cast<uint64_t>(seconds * 1e9);
		size_t nsec = static_cast<size_t>(seconds) + 1;
		for (auto &f : flows_)
			f.dep.assign(nsec, 0);
		qmax_.assign(nsec, 0);
		for (uint64_t now = 0; now < end; now += kMs) {
			size_t sec = now / 1000000000ull;
			Deliver(now);
			Send(now);
			Serve(now, sec);
			if (now >= sgw_xcp_ctl_deadline(&ctl_)) {
				sgw_xcp_sums s;
				sgw_xcp_acc_read(&acc_, &s);
				sgw_xcp_params p;
				sgw_xcp_aggregate(&conf_, &ctl_, &s, 1, C_,
						  double(sgw_xcp_qest_value(&qest_, now)), now,
						  &ctl_, &p);
				sgw_xcp_pub_write(&pub_, &p);
			}
			qmax_[sec] = std::max(qmax_[sec], double(qbytes_));
		}
	}
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
	double Jain(int t0, int t1, size_t first, size_t n) const
	{
		double s = 0, s2 = 0;
		for (size_t i = first; i < first + n; i++) {
			double r = Rate(i, t0, t1);
			s += r;
			s2 += r * r;
		}
		return s * s / (static_cast<double>(n) * s2);
	}
	double QMax(int t0, int t1) const
	{
		return *std::max_element(qmax_.begin() + t0, qmax_.begin() + t1);
	}
	const Flow &F(size_t i) const { return flows_[i]; }
	const sgw_xcpl &Legacy() const { return hub_.l; }
	uint64_t drops() const { return drops_; }

private:
	static constexpr uint32_t kPay = 1000;
	static constexpr uint64_t kEdge = 10 * kMs;  // sender <-> hub
	struct Ev {
		uint64_t t, order;
		int flow;
		bool to_sender;  // an ACK reaching the sender (else a packet reaching the hub/rcv)
		Bytes b;
		bool operator>(const Ev &o) const { return t != o.t ? t > o.t : order > o.order; }
	};

	void Push(uint64_t t, int flow, bool to_sender, Bytes b)
	{
		ev_.push(Ev{t, order_++, flow, to_sender, std::move(b)});
	}

	// Events due: packets reaching the hub's queue, the receiver, the sender.
	void Deliver(uint64_t now)
	{
		while (!ev_.empty() && ev_.top().t <= now) {
			Ev e = ev_.top();
			ev_.pop();
			Flow &f = flows_[e.flow];
			if (e.to_sender) {
				Ack(f, e.b);
				continue;
			}
			// A packet reaching the hub: the legacy module, then the queue.
			int32_t fb = 0;
			sgw_xcp_pub_refresh(&pub_, &local_);
			sgw_xcp_qest_sample(&qest_, &conf_, now, qbytes_, ctl_.d_ns, C_);
			int r = sgw_xcpl_data(&hub_.l, &acc_, &local_, e.b.data(), e.b.size(),
					      static_cast<uint32_t>(e.b.size()), now, &fb);
			ASSERT_EQ(r, 1);
			if (qbytes_ + e.b.size() > buf_) {
				drops_++;
				continue;
			}
			qbytes_ += e.b.size();
			q_.push_back({e.flow, std::move(e.b)});
		}
	}

	void Ack(Flow &f, const Bytes &a)
	{
		ASSERT_TRUE(TcpOk(a));
		uint32_t ack = Get32(&a[28]);
		uint16_t w = Get16(&a[34]);
		bool syn = a[33] & SGW_XCPA_TH_SYN;
		uint32_t edge = ack + (static_cast<uint32_t>(w) << (syn ? 0 : 7));
		if (f.est && static_cast<int32_t>(edge - f.edge) < 0)
			f.retracts++;
		if (!f.est || static_cast<int32_t>(edge - f.edge) > 0)
			f.edge = edge;
		if (syn) {
			f.est = true;
			f.una = f.nxt = ack;
			f.rcv_isn = Get32(&a[24]) + 1;
			return;
		}
		if (static_cast<int32_t>(ack - f.una) > 0) {
			f.cwnd += ack - f.una;  // slow start: no loss ever ends it
			f.cwnd = std::min(f.cwnd, 64e6);
			f.una = ack;
		}
	}

	void Send(uint64_t now)
	{
		double t = double(now) / 1e9;
		for (size_t i = 0; i < flows_.size(); i++) {
			Flow &f = flows_[i];
			if (t < f.start || t >= f.stop)
				continue;
			int fi = static_cast<int>(i);
			if (!f.syn_sent) {
				f.syn_sent = true;
				Bytes syn = Tcp(f.addr, 2, 1000, 80, f.iss, 0, SGW_XCPA_TH_SYN,
						65535, 0);
				Push(now + kEdge, fi, false, std::move(syn));
				continue;
			}
			if (!f.est)
				continue;
			// min(own window, advertised window): never past the edge.
			while (true) {
				uint32_t lim_own = f.una + static_cast<uint32_t>(f.cwnd);
				uint32_t end = f.nxt + kPay;
				if (static_cast<int32_t>(end - f.edge) > 0 ||
				    static_cast<int32_t>(end - lim_own) > 0)
					break;
				Push(now + kEdge, fi, false,
				     Tcp(f.addr, 2, 1000, 80, f.nxt, f.rcv_isn, SGW_XCPA_TH_ACK,
					 65535, kPay));
				f.nxt = end;
			}
		}
	}

	// The bottleneck; departed packets reach the receiver, whose ACK passes
	// the hub (sgw_xcpl_ack) and reaches the sender kEdge later.
	void Serve(uint64_t now, size_t sec)
	{
		credit_ += C_ * 1e-3;
		while (!q_.empty() && credit_ >= double(q_.front().b.size())) {
			QP p = std::move(q_.front());
			q_.pop_front();
			qbytes_ -= p.b.size();
			credit_ -= double(p.b.size());
			Flow &f = flows_[p.flow];
			bool syn = p.b[33] & SGW_XCPA_TH_SYN;
			uint32_t seq = Get32(&p.b[24]);
			size_t pay = p.b.size() - 20 - (syn ? 28 : 20);
			Bytes a;
			if (syn) {
				f.rcv_nxt = seq + 1;
				a = Tcp(2, f.addr, 80, 1000, 50000, f.rcv_nxt,
					SGW_XCPA_TH_SYN | SGW_XCPA_TH_ACK, 65535, 0);
			} else {
				f.dep[sec] += double(p.b.size());  // wire bytes, as C counts
				if (seq == f.rcv_nxt)
					f.rcv_nxt += static_cast<uint32_t>(pay);
				a = Tcp(2, f.addr, 80, 1000, 50001, f.rcv_nxt, SGW_XCPA_TH_ACK,
					65535, 0);
			}
			// Receiver and back to the hub: the base RTT less the two edges.
			uint64_t back = static_cast<uint64_t>(f.base_rtt * 1e9) - 2 * kEdge;
			uint64_t at_hub = now + back;
			hub_acks_.push(Ev{at_hub, order_++, p.flow, true, std::move(a)});
		}
		if (q_.empty())
			credit_ = 0;
		while (!hub_acks_.empty() && hub_acks_.top().t <= now) {
			Ev e = hub_acks_.top();
			hub_acks_.pop();
			EXPECT_GE(sgw_xcpl_ack(&hub_.l, e.b.data(), e.b.size(), now), 0);
			Push(now + kEdge, e.flow, true, std::move(e.b));
		}
	}

	struct QP {
		int flow;
		Bytes b;
	};
	double C_;
	uint64_t buf_;
	Hub hub_;
	sgw_xcp_conf conf_{};
	sgw_xcp_ctl ctl_{};
	sgw_xcp_acc acc_{};
	sgw_xcp_params local_{};
	sgw_xcp_pub pub_{};
	sgw_xcp_qest qest_{};
	std::vector<Flow> flows_;
	std::deque<QP> q_;
	uint64_t qbytes_ = 0, order_ = 0, drops_ = 0;
	double credit_ = 0;
	std::vector<double> qmax_;
	std::priority_queue<Ev, std::vector<Ev>, std::greater<Ev>> ev_, hub_acks_;
};

TEST(XcpLegacyModel, OneSenderObeyingRwndFillsTheLinkWithASmallQueue)
{
	const double C = 1.25e6;  // 10 Mbit/s; BDP at 0.6 s = 750 kB
	LegacyModel m(C, 8u << 20);
	m.AddFlow(0.6, 0);
	m.Run(60);
	double u = m.Util(30, 60);
	std::printf("legacy 1 flow: utilisation %.4f, queue max %.0f B (30-60 s), "
		    "clamped %lu, retracts %lu\n", u, m.QMax(30, 60),
		    static_cast<unsigned long>(m.Legacy().ctr[SGW_XCPL_C_CLAMPED]),
		    static_cast<unsigned long>(m.F(0).retracts));
	EXPECT_GT(u, 0.95);
	EXPECT_LT(m.QMax(30, 60), 0.1 * C * 0.6);
	EXPECT_EQ(m.F(0).retracts, 0u);
	EXPECT_EQ(m.drops(), 0u);
	EXPECT_GT(m.Legacy().ctr[SGW_XCPL_C_CLAMPED], 1000u);
}

TEST(XcpLegacyModel, SendersObeyingRwndConvergeToEqualShares)
{
	const double C = 1.25e6;
	LegacyModel m(C, 8u << 20);
	m.AddFlow(0.5, 0);
	m.AddFlow(0.7, 10);
	m.AddFlow(0.9, 20);
	m.Run(120);
	double u = m.Util(80, 120), j = m.Jain(80, 120, 0, 3);
	std::printf("legacy 3 flows (RTT 0.5/0.7/0.9 s): utilisation %.4f, Jain %.4f, "
		    "rates %.3f %.3f %.3f of C, queue max %.0f B\n", u, j,
		    m.Rate(0, 80, 120) / C, m.Rate(1, 80, 120) / C, m.Rate(2, 80, 120) / C,
		    m.QMax(80, 120));
	EXPECT_GT(u, 0.95);
	EXPECT_GT(j, 0.98);
	for (size_t i = 0; i < 3; i++)
		EXPECT_EQ(m.F(i).retracts, 0u);
	EXPECT_EQ(m.drops(), 0u);
}

// A flow that stops leaves its share to the others.
TEST(XcpLegacyModel, AFlowLeavingFreesItsShare)
{
	const double C = 1.25e6;
	LegacyModel m(C, 8u << 20);
	m.AddFlow(0.6, 0);
	m.AddFlow(0.6, 0, 50);
	m.AddFlow(0.8, 5);
	m.Run(100);
	double r0 = m.Rate(0, 30, 50) / C, r2 = m.Rate(2, 30, 50) / C;
	double a0 = m.Rate(0, 80, 100) / C, a2 = m.Rate(2, 80, 100) / C;
	std::printf("legacy, one of 3 leaves at 50 s: before %.3f %.3f %.3f, after %.3f %.3f "
		    "(utilisation %.4f)\n", r0, m.Rate(1, 30, 50) / C, r2, a0, a2,
		    m.Util(80, 100));
	EXPECT_NEAR(r0, 1.0 / 3, 0.02);
	EXPECT_NEAR(r2, 1.0 / 3, 0.02);
	EXPECT_NEAR(a0, 0.5, 0.02);
	EXPECT_NEAR(a2, 0.5, 0.02);
	EXPECT_GT(m.Util(80, 100), 0.95);
	for (size_t i = 0; i < 3; i++)
		EXPECT_EQ(m.F(i).retracts, 0u);
}

// Without the clamp the same senders fill the buffer: the clamp is what holds them.
TEST(XcpLegacyModel, TheClampIsWhatHoldsThem)
{
	const double C = 1.25e6;
	LegacyModel m(C, 8u << 20);
	m.AddFlow(0.6, 0);
	m.Run(30);
	double with_clamp = m.QMax(20, 30);
	EXPECT_LT(with_clamp, 0.1 * C * 0.6);
	// A sender that ignored the window would have grown its own window to
	// far more than the BDP by now (slow start, no loss).
	EXPECT_GT(m.F(0).cwnd, 4 * C * 0.6);
}

}  // namespace
