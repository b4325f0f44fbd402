// SPDX-License-Identifier: BSD-3-Clause
// Google Benchmarks for lib/sgw_tcp_*.c: the TCP endpoint's cost per segment
// in, in virtual time, with the segment already parsed (the codec is measured
// separately by the Parse benchmark).
//  - DataInOrder: 1448-byte in-order data segments with timestamps into an
//    ESTABLISHED connection; every second one makes an ACK (delayed ACKs),
//    whose header is built and handed to the tx callback. The receive
//    callbacks do not copy (the relay buffer's copy is not the endpoint's).
//  - PureAck: ACKs each acknowledging one new 1448-byte segment at a sender
//    with all its data already sent (RTT sample from the timestamp, cwnd
//    growth, RTO restart); nothing new to send.
//  - SackRecovery: the ACKs a SACK receiver sends for a 100-segment window
//    with 5 segments lost (one every 20): duplicate ACKs with up to 3 SACK
//    blocks (the newest first), RFC 6675 recovery entered on the third,
//    scoreboard, pipe and NextSeg (retransmissions built and handed to tx)
//    on each, then the ACK that covers the window. Per ACK. The scoreboard is
//    borrowed from the stack's pool at the first SACK block and given back by
//    the last ACK (counter sb_held_after: boards still held after a window, 0).
//  - SackRecoveryNoBoard: the same ACKs with the stack's scoreboard pool empty:
//    the SACK blocks are ignored and NewReno recovers (the degraded mode).
//  - Parse: sgw_tcp_seg_parse of a data segment header with TS (no SACK).
// items_per_second: segments.
// Reproduce: tests/bench/bench_lib_tcp --benchmark_repetitions=5
//            --benchmark_report_aggregates_only=true

#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "sgw_tcp.h"

namespace {

constexpr uint32_t kMss = 1448;
constexpr uint32_t kPeerIss = 5000;
constexpr uint32_t kIss = 1000;

struct Sink {
	uint64_t tx = 0;
	uint64_t rx = 0;
};

void
Tx(void *ctx, sgw_tcp_conn *, const uint8_t *hdr, uint32_t hlen, uint32_t, uint32_t len)
{
	auto *s = static_cast<Sink *>(ctx);
	s->tx += hlen + len + hdr[13];
}

void
RxData(void *ctx, sgw_tcp_conn *, uint32_t, const uint8_t *, uint32_t len)
{
	static_cast<Sink *>(ctx)->rx += len;
}

void
RxAdvance(void *, sgw_tcp_conn *, uint32_t)
{
}

uint32_t
RxSpace(void *, sgw_tcp_conn *)
{
	return 4u << 20;
}

void
TxAcked(void *, sgw_tcp_conn *, uint32_t)
{
}

const sgw_tcp_ops kOps = {Tx, RxData, RxAdvance, RxSpace, TxAcked};

struct Conn {
	alignas(64) sgw_tcp_conn c;
	sgw_tcp_stack st;
	Sink sink;
	uint64_t now = 1000000000ull;
	uint32_t peer_ts = 100;

	explicit Conn(uint32_t init_cwnd_segs)
	{
		sgw_tcp_conf conf;
		sgw_tcp_conf_default(&conf);
		conf.init_cwnd_segs = init_cwnd_segs;
		conf.mss = kMss + 12;
		sgw_tcp_stack_init(&st, &conf, &kOps, &sink);
		sgw_tcp_conn_init(&st, &c, kIss, 80, 9999);
		sgw_tcp_listen(&st, &c);
		sgw_tcp_seg s{};
		s.seq = kPeerIss;
		s.flags = SGW_TCP_F_SYN;
		s.win = 65535;
		s.opts = SGW_TCP_O_MSS | SGW_TCP_O_WS | SGW_TCP_O_SACK_PERM | SGW_TCP_O_TS;
		s.mss = kMss + 12;
		s.wscale = 9;
		s.tsval = peer_ts;
		In(s);
		s = sgw_tcp_seg{};
		s.seq = kPeerIss + 1;
		s.ack = kIss + 1;
		s.flags = SGW_TCP_F_ACK;
		s.win = 65535;
		s.opts = SGW_TCP_O_TS;
		s.tsval = ++peer_ts;
		In(s);
	}

	void In(const sgw_tcp_seg &s)
	{
		sgw_tcp_out o;
		sgw_tcp_out_reset(&o);
		sgw_tcp_input(&st, &c, now, &s, &o);
	}
};

void
BM_DataInOrder(benchmark::State &state)
{
	Conn k(10);
	std::vector<uint8_t> payload(kMss, 0x5a);
	sgw_tcp_seg s{};
	s.ack = kIss + 1;
	s.flags = SGW_TCP_F_ACK;
	s.win = 65535;
	s.opts = SGW_TCP_O_TS;
	s.data = payload.data();
	s.len = kMss;
	sgw_tcp_out o;
	for (auto _ : state) {
		s.seq = k.c.rcv_nxt;
		s.tsval = ++k.peer_ts;
		k.now += 1000;
		sgw_tcp_out_reset(&o);
		sgw_tcp_input(&k.st, &k.c, k.now, &s, &o);
		benchmark::DoNotOptimize(o);
	}
	state.SetItemsProcessed(state.iterations());
	state.counters["acks_out"] = (double)k.st.ctr[SGW_TCP_C_ACKS_OUT];
	state.counters["bytes_in"] = (double)k.sink.rx;
}
BENCHMARK(BM_DataInOrder);

void
BM_PureAck(benchmark::State &state)
{
	constexpr uint32_t kBatch = 1000;
	Conn k(kBatch);
	sgw_tcp_seg a{};
	a.flags = SGW_TCP_F_ACK;
	a.seq = kPeerIss + 1;
	a.win = 65535;
	a.opts = SGW_TCP_O_TS;
	sgw_tcp_out o;
	uint32_t left = 0;
	for (auto _ : state) {
		if (left == 0) {
			state.PauseTiming();
			// refill: kBatch segments sent, nothing more queued
			sgw_tcp_out_reset(&o);
			sgw_tcp_send(&k.st, &k.c, k.now, kBatch * kMss, &o);
			k.c.cwnd = 2 * kBatch * kMss;  // keep slow start from mattering
			left = (k.c.snd_nxt - k.c.snd_una) / kMss;
			a.tsecr = k.c.ts_offset + (uint32_t)(k.now / 1000000);
			state.ResumeTiming();
		}
		k.now += 1000;
		a.ack = k.c.snd_una + kMss;
		a.tsval = ++k.peer_ts;
		sgw_tcp_out_reset(&o);
		sgw_tcp_input(&k.st, &k.c, k.now, &a, &o);
		benchmark::DoNotOptimize(o);
		left--;
	}
	state.SetItemsProcessed(state.iterations());
	state.counters["rtt_samples"] = (double)k.st.ctr[SGW_TCP_C_RTT_SAMPLES];
}
BENCHMARK(BM_PureAck);

// The ACKs a SACK receiver sends for kWin segments of which every 20th is lost.
std::vector<sgw_tcp_seg>
SackAcks(uint32_t win, uint32_t first)
{
	std::vector<bool> got(win, false);
	std::vector<sgw_tcp_seg> acks;
	for (uint32_t i = 0; i < win; i++) {
		if (i % 20 == 0)
			continue;
		got[i] = true;
		sgw_tcp_seg a{};
		a.flags = SGW_TCP_F_ACK;
		a.seq = kPeerIss + 1;
		a.ack = first;  // segment 0 is lost: the cumulative ACK stays
		a.win = 65535;
		a.opts = SGW_TCP_O_TS | SGW_TCP_O_SACK;
		// the received runs; the one holding segment i first, then the highest
		std::vector<std::pair<uint32_t, uint32_t>> runs;
		for (uint32_t k = 0; k < win;) {
			if (!got[k]) {
				k++;
				continue;
			}
			uint32_t e = k;
			while (e < win && got[e])
				e++;
			runs.push_back({k, e});
			k = e;
		}
		std::vector<std::pair<uint32_t, uint32_t>> order;
		for (auto &r : runs)
			if (r.first <= i && i < r.second)
				order.push_back(r);
		for (auto it = runs.rbegin(); it != runs.rend() && order.size() < 3; ++it)
			if (!(it->first <= i && i < it->second))
				order.push_back(*it);
		for (auto &r : order) {
			a.sack[a.n_sack].left = first + r.first * kMss;
			a.sack[a.n_sack].right = first + r.second * kMss;
			a.n_sack++;
		}
		acks.push_back(a);
	}
	sgw_tcp_seg full{};
	full.flags = SGW_TCP_F_ACK;
	full.seq = kPeerIss + 1;
	full.ack = first + win * kMss;
	full.win = 65535;
	full.opts = SGW_TCP_O_TS;
	acks.push_back(full);
	return acks;
}

void
SackRecovery(benchmark::State &state, bool no_board)
{
	constexpr uint32_t kWin = 100;
	sgw_tcp_sb no_boards[1];
	const std::vector<sgw_tcp_seg> acks = SackAcks(kWin, kIss + 1);
	std::vector<Conn *> pool;
	Conn *k = nullptr;
	size_t next = acks.size();
	uint64_t rounds = 0, retx = 0, recov = 0, nomem = 0, held = 0;
	sgw_tcp_out o;
	for (auto _ : state) {
		if (next == acks.size()) {
			state.PauseTiming();
			if (k != nullptr) {
				retx += k->st.ctr[SGW_TCP_C_RETX_SEGS];
				recov += k->st.ctr[SGW_TCP_C_SACK_RECOVERY];
				nomem += k->st.ctr[SGW_TCP_C_SB_NOMEM_RECOVERY];
				held += k->st.sb_used;
				delete k;
			}
			k = new Conn(kWin);
			if (no_board)
				sgw_tcp_stack_set_sb_pool(&k->st, no_boards, 0);
			sgw_tcp_out_reset(&o);
			sgw_tcp_send(&k->st, &k->c, k->now, kWin * kMss, &o);
			next = 0;
			rounds++;
			state.ResumeTiming();
		}
		sgw_tcp_seg a = acks[next++];
		k->now += 1000;
		a.tsval = ++k->peer_ts;
		a.tsecr = k->c.ts_offset + 1000;
		sgw_tcp_out_reset(&o);
		sgw_tcp_input(&k->st, &k->c, k->now, &a, &o);
		benchmark::DoNotOptimize(o);
	}
	if (k != nullptr) {
		retx += k->st.ctr[SGW_TCP_C_RETX_SEGS];
		recov += k->st.ctr[SGW_TCP_C_SACK_RECOVERY];
		nomem += k->st.ctr[SGW_TCP_C_SB_NOMEM_RECOVERY];
		delete k;
	}
	state.SetItemsProcessed(state.iterations());
	state.counters["retx_per_window"] = rounds ? (double)retx / (double)rounds : 0;
	state.counters["recoveries_per_window"] = rounds ? (double)recov / (double)rounds : 0;
	state.counters["newreno_fallbacks_per_window"] =
		rounds ? (double)nomem / (double)rounds : 0;
	state.counters["sb_held_after"] = (double)held;
}

void
BM_SackRecovery(benchmark::State &state)
{
	SackRecovery(state, false);
}
BENCHMARK(BM_SackRecovery);

void
BM_SackRecoveryNoBoard(benchmark::State &state)
{
	SackRecovery(state, true);
}
BENCHMARK(BM_SackRecoveryNoBoard);

void
BM_Parse(benchmark::State &state)
{
	sgw_tcp_seg s{};
	s.seq = 1;
	s.ack = 2;
	s.flags = SGW_TCP_F_ACK;
	s.opts = SGW_TCP_O_TS;
	std::vector<uint8_t> b(60 + kMss);
	uint32_t h = sgw_tcp_seg_build(b.data(), b.size(), &s);
	b.resize(h + kMss);
	sgw_tcp_seg p;
	for (auto _ : state) {
		int r = sgw_tcp_seg_parse(b.data(), b.size(), &p, nullptr);
		benchmark::DoNotOptimize(r);
		benchmark::DoNotOptimize(p);
	}
	state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Parse);

}  // namespace

BENCHMARK_MAIN();
