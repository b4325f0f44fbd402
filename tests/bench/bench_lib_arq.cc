// SPDX-License-Identifier: BSD-3-Clause
// Google Benchmarks for lib/sgw_arq.c and lib/sgw_satlink.c: the cost of the
// satlink session machine per DATA frame, sender and receiver together, in
// virtual time. Two sessions are joined by a 1 ms one-way delay line in each
// direction (FIFO); one frame slot is 1 us of virtual time (1400-byte frames:
// ~11 Gbit/s), so ~2000 frames are in flight per round trip and the window
// is 4096 (twice that, so recovering a loss does not stall the sender). Every
// iteration is one frame slot: the sender takes one packet, the due frames
// cross the line (header written with the session's encoder, parsed by the
// real parser, handed to the peer), and both sessions are polled when due.
// Statuses flow back on the other line. Payload bytes are never touched
// (zero-copy: handles only), as in the dataplane.
//  - NoLoss:      1-frame packets, no loss.
//  - Loss1pct:    1-frame packets, 1% of DATA frames lost (k = 2 copies).
//  - Frag4:       5600-byte packets in 4 frames, no loss.
//  - Datagram:    1-frame datagrams (no window, no acks).
// items_per_second: DATA frames sent (first transmissions + copies); the time
// per item is the sender's plus the receiver's cost per frame, including the
// header encode and parse and this harness's delay line.
// Reproduce: tests/bench/bench_lib_arq --benchmark_repetitions=5
//            --benchmark_report_aggregates_only=true

#include <benchmark/benchmark.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <deque>
#include <vector>

#include "sgw_arq.h"
#include "sgw_satlink.h"

namespace {

constexpr uint64_t kSlot = 1000;          // 1 us per frame slot
constexpr uint64_t kDelay = 1000 * 1000;  // 1 ms one way
constexpr uint32_t kCap = 256;

struct Frame {
	uint64_t at;
	uint16_t len;  // DATA payload length (0: control frame in ctrl[])
	std::array<uint8_t, SGW_SATLINK_HDR_LEN> h;
	std::vector<uint8_t> ctrl;
};

uint64_t
Splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

class Link2 {
 public:
	Link2(uint32_t loss_ppm, uint32_t pkt_len, bool adapt = false)
	    : loss_ppm_(loss_ppm), pkt_len_(pkt_len), acts_(kCap),
	      ctrl_(SGW_SATLINK_STATUS_MAX_LEN)
	{
		for (int i = 0; i < 2; i++) {
			sgw_arq_conf c;
			sgw_arq_conf_default(&c);
			c.terminal_id = 1;
			c.local_epoch = 100 + i;
			c.tx_window = 4096;  // 2 x BDP: room to recover losses
			c.rx_window = 4096;
			c.sendq_pkts = 64;
			c.rtt_init_ns = 2 * kDelay;
			c.rto_min_ns = 5 * kDelay;
			c.status_interval_ns = 200 * 1000;  // 200 us: ~5 per RTT
			c.status_min_gap_ns = 50 * 1000;
			c.retx_spacing_ns = 20 * 1000;
			c.frag_adapt = adapt;
			a_[i] = sgw_arq_create(&c, 0);
		}
		// Connect: run until both are up.
		while (sgw_arq_get_state(a_[0]) != SGW_ARQ_UP ||
		       sgw_arq_get_state(a_[1]) != SGW_ARQ_UP)
			Slot(false, false);
	}
	~Link2()
	{
		for (auto *a : a_)
			sgw_arq_destroy(a);
	}
	Link2(const Link2 &) = delete;
	Link2 &operator=(const Link2 &) = delete;

	// One frame slot. send: offer one packet (reliable or datagram).
	void Slot(bool send, bool dgram)
	{
		now_ += kSlot;
		if (send) {
			sgw_arq_out o{acts_.data(), 0, kCap};
			int r = sgw_arq_send(a_[0], now_, 0, 1, pkt_len_,
					     dgram ? SGW_ARQ_SEND_DATAGRAM : 0, &o);
			refused_ += r != 0;
			Process(0, o);
		}
		for (int d = 0; d < 2; d++) {
			while (!line_[d].empty() && line_[d].front().at <= now_) {
				Arrive(1 - d, line_[d].front());
				line_[d].pop_front();
			}
		}
		for (int i = 0; i < 2; i++) {
			while (sgw_arq_next_deadline(a_[i]) <= now_) {
				sgw_arq_out o{acts_.data(), 0, kCap};
				sgw_arq_poll(a_[i], now_, &o);
				Process(i, o);
			}
		}
	}

	uint64_t data_frames() const { return data_frames_; }
	uint64_t delivered() const { return delivered_; }
	uint64_t refused() const { return refused_; }

 private:
	void Process(int i, const sgw_arq_out &o)
	{
		for (uint32_t k = 0; k < o.n; k++) {
			const sgw_arq_act &x = o.act[k];
			if (x.type == SGW_ARQ_ACT_TX_DATA) {
				Frame f;
				f.len = x.len;
				if (sgw_arq_write_data_hdr(a_[i], &x, f.h.data(), f.h.size()) == 0)
					continue;
				data_frames_++;
				if (loss_ppm_ && Splitmix(&rng_) % 1000000 < loss_ppm_)
					continue;
				f.at = now_ + kDelay;
				line_[i].push_back(std::move(f));
			} else if (x.type == SGW_ARQ_ACT_TX_CTRL) {
				size_t n = sgw_arq_write_ctrl(a_[i], &x, now_, ctrl_.data(),
							      ctrl_.size());
				if (n == 0)
					continue;
				Frame f;
				f.len = 0;
				f.ctrl.assign(ctrl_.begin(), ctrl_.begin() + static_cast<long>(n));
				f.at = now_ + kDelay;
				line_[i].push_back(std::move(f));
			} else if (x.type == SGW_ARQ_ACT_DELIVER && (x.flags & SGW_SL_F_LAST)) {
				delivered_++;
			}
		}
	}

	void Arrive(int i, const Frame &f)
	{
		sgw_satlink_hdr h;
		sgw_arq_out o{acts_.data(), 0, kCap};
		if (f.len) {
			// The payload bytes are never looked at: a zeroed buffer stands
			// for them behind the header.
			memcpy(rxbuf_.data(), f.h.data(), SGW_SATLINK_HDR_LEN);
			if (sgw_satlink_parse_hdr(rxbuf_.data(), SGW_SATLINK_HDR_LEN + f.len,
						  &h) != SGW_SL_OK)
				return;
			sgw_arq_rx_data(a_[i], now_, &h, 2, &o);
		} else {
			if (sgw_satlink_parse_hdr(f.ctrl.data(), f.ctrl.size(), &h) != SGW_SL_OK)
				return;
			sgw_arq_rx_ctrl(a_[i], now_, &h, f.ctrl.data() + SGW_SATLINK_HDR_LEN,
					h.payload_len, &o);
		}
		Process(i, o);
	}

	sgw_arq *a_[2];
	std::deque<Frame> line_[2];
	uint64_t now_ = 0;
	uint64_t rng_ = 42;
	uint32_t loss_ppm_;
	uint32_t pkt_len_;
	uint64_t data_frames_ = 0, delivered_ = 0, refused_ = 0;
	std::vector<sgw_arq_act> acts_;
	std::vector<uint8_t> ctrl_;
	std::vector<uint8_t> rxbuf_ = std::vector<uint8_t>(SGW_SATLINK_HDR_LEN + 65536);
};

void
Run(benchmark::State &state, uint32_t loss_ppm, uint32_t pkt_len, bool dgram, bool adapt = false)
{
	Link2 l(loss_ppm, pkt_len, adapt);
	// Warm up to the steady state (window full, statuses flowing).
	for (int k = 0; k < 20000; k++)
		l.Slot(true, dgram);
	uint64_t f0 = l.data_frames(), d0 = l.delivered();
	for (auto _ : state)
		l.Slot(true, dgram);
	uint64_t frames = l.data_frames() - f0;
	state.SetItemsProcessed(static_cast<int64_t>(frames));
	state.counters["frames_per_slot"] =
		static_cast<double>(frames) / static_cast<double>(state.iterations());
	state.counters["pkts_delivered"] = static_cast<double>(l.delivered() - d0);
}

void
BM_Arq_NoLoss(benchmark::State &state)
{
	Run(state, 0, 1400, false);
}
BENCHMARK(BM_Arq_NoLoss);

void
BM_Arq_Loss1pct(benchmark::State &state)
{
	Run(state, 10000, 1400, false);
}
BENCHMARK(BM_Arq_Loss1pct);

// The same with frame_size_adapt: the estimator's cost per frame (a sample at
// each acknowledgement, a cut per packet, a decision per ~256 short frames).
// 1 % loss that does not depend on length: the size stays 1400, about one
// packet in 16 is probed (two frames), so compare per frame.
void
BM_Arq_Loss1pct_Adapt(benchmark::State &state)
{
	Run(state, 10000, 1400, false, true);
}
BENCHMARK(BM_Arq_Loss1pct_Adapt);

void
BM_Arq_Frag4(benchmark::State &state)
{
	Run(state, 0, 5600, false);
}
BENCHMARK(BM_Arq_Frag4);

void
BM_Arq_Datagram(benchmark::State &state)
{
	Run(state, 0, 1400, true);
}
BENCHMARK(BM_Arq_Datagram);

// The wire format alone: encode and parse one DATA header.
void
BM_Satlink_HdrRoundTrip(benchmark::State &state)
{
	sgw_satlink_hdr h{};
	h.version = 1;
	h.type = SGW_SL_DATA;
	h.flags = SGW_SL_F_FIRST;
	h.terminal_id = 7;
	h.sender_epoch = 1;
	h.peer_epoch = 2;
	h.payload_len = 1400;
	uint8_t buf[SGW_SATLINK_HDR_LEN + 1400] = {0};
	sgw_satlink_hdr g;
	for (auto _ : state) {
		h.seq++;
		sgw_satlink_write_hdr(buf, sizeof(buf), &h);
		benchmark::DoNotOptimize(buf);
		benchmark::DoNotOptimize(sgw_satlink_parse_hdr(buf, sizeof(buf), &g));
	}
	state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}
BENCHMARK(BM_Satlink_HdrRoundTrip);

}  // namespace

BENCHMARK_MAIN();
