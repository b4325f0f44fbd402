// SPDX-License-Identifier: BSD-3-Clause
// Google Benchmarks for lib/sgw_lift_mh.c (MH-LIFT): the per-packet cost of
// what the mobile host's agent asks the machine, in virtual time.
//  - RxData/<flows>:  a decrypted downlink data segment (parse, flow lookup by
//                     4-tuple, SA bookkeeping, the ESP sequence record), with
//                     the host's ACK every 16 segments (counted as an item).
//  - AckPair/<flows>: a data segment down, then the host's ACK of it
//                     (classified as an ACK of new data: record credited, both
//                     LIFT headers built). One item is one segment seen by the
//                     machine (two per iteration).
//  - Clone:           the FrACK clone of a pure ACK with timestamps (copy,
//                     window 0, IP and TCP checksums).
// <flows> established flows, picked round robin (16 fit in cache, 4096 is the
// table's maximum). Checksums of the input are not verified by the machine,
// so the segments are patched in place without fixing them.
// Reproduce: tests/bench/bench_lib_lift_mh --benchmark_repetitions=5
//            --benchmark_report_aggregates_only=true

#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "sgw_lift.h"
#include "sgw_lift_mh.h"

namespace {

constexpr uint32_t kIssMh = 1000, kIssFh = 500000, kMss = 1224;

void
Put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

// An IPv4 TCP segment host (10.0.x.y, port) <-> FH 192.0.2.1:80.
std::vector<uint8_t>
Seg(uint32_t host, bool from_mh, uint32_t seq, uint32_t ack, uint8_t flags, size_t pay,
    size_t opt = 0)
{
	std::vector<uint8_t> b(20 + 20 + opt + pay, 0);
	size_t tot = b.size();
	uint8_t mh[4] = {10, 0, (uint8_t)(host >> 8), (uint8_t)host};
	uint8_t fh[4] = {192, 0, 2, 1};
	b[0] = 0x45;
	b[2] = (uint8_t)(tot >> 8);
	b[3] = (uint8_t)tot;
	b[8] = 64;
	b[9] = 6;
	memcpy(&b[12], from_mh ? mh : fh, 4);
	memcpy(&b[16], from_mh ? fh : mh, 4);
	uint8_t *t = &b[20];
	uint16_t mp = 40000, fp = 80;
	t[0] = (uint8_t)((from_mh ? mp : fp) >> 8);
	t[1] = (uint8_t)(from_mh ? mp : fp);
	t[2] = (uint8_t)((from_mh ? fp : mp) >> 8);
	t[3] = (uint8_t)(from_mh ? fp : mp);
	Put32(t + 4, seq);
	Put32(t + 8, ack);
	t[12] = (uint8_t)(((20 + opt) / 4) << 4);
	t[13] = flags;
	t[14] = 0xff;
	t[15] = 0xff;
	for (size_t i = 0; i < opt; i++)
		t[20 + i] = 1;
	if (opt >= 12) {
		t[22] = 8;
		t[23] = 10;
	}
	return b;
}

struct Bench {
	std::vector<uint8_t> mem;
	sgw_lift_mh *m = nullptr;
	uint64_t now = 1;
	uint32_t esp = 2;
	std::vector<std::vector<uint8_t>> data, ack;
	std::vector<uint32_t> k;

	explicit Bench(uint32_t flows)
	{
		sgw_lift_mh_conf c;
		sgw_lift_mh_conf_default(&c);
		c.max_flows = flows;
		mem.resize(sgw_lift_mh_mem_size(&c));
		m = sgw_lift_mh_init(mem.data(), mem.size(), &c, 0);
		sgw_lift_mh_tx_out tx;
		for (uint32_t i = 0; i < flows; i++) {
			auto s = Seg(i, true, kIssMh, 0, 0x02, 0);
			sgw_lift_mh_tx(m, now, s.data(), s.size(), 0x1000, 50, &tx);
			s = Seg(i, false, kIssFh, kIssMh + 1, 0x12, 0);
			sgw_lift_mh_rx(m, now, 0x1000, 1, s.data(), s.size());
			data.push_back(Seg(i, false, kIssFh + 1, kIssMh + 1, 0x18, kMss));
			ack.push_back(Seg(i, true, kIssMh + 1, kIssFh + 1, 0x10, 0));
			k.push_back(0);
		}
		std::vector<sgw_lift_mh_ctrl> ctl(flows);
		uint32_t n = sgw_lift_mh_poll(m, now, ctl.data(), flows);
		for (uint32_t i = 0; i < n; i++) {
			sgw_lift_msg msg;
			uint8_t b[8];
			sgw_lift_decode(ctl[i].hdr, 8, &msg);
			sgw_lift_build_ctrl_ack(b, 8, SGW_LIFT_K_SETUP_ACK, msg.flow_id, msg.word, 0);
			sgw_lift_mh_ctrl_rx(m, now, b, 8);
		}
	}
	// Segment k of flow i down, with its ESP sequence number.
	void Down(uint32_t i)
	{
		Put32(&data[i][24], kIssFh + 1 + k[i] * kMss);
		sgw_lift_mh_rx(m, now, 0x1000, esp++, data[i].data(), data[i].size());
		k[i]++;
	}
	int Ack(uint32_t i, sgw_lift_mh_tx_out *tx)
	{
		Put32(&ack[i][28], kIssFh + 1 + k[i] * kMss);
		return sgw_lift_mh_tx(m, now, ack[i].data(), ack[i].size(), 0x1000, 50, tx);
	}
};

void
RxData(benchmark::State &st)
{
	uint32_t flows = static_cast<uint32_t>(st.range(0)), i = 0;
	Bench b(flows);
	sgw_lift_mh_tx_out tx;

	uint64_t acks = 0;

	for (auto _ : st) {
		b.Down(i);
		if ((b.k[i] & 15) == 0) {
			// an ACK per 16 segments keeps the records from filling (a
			// receiver with a large window and delayed ACKs does better)
			b.Ack(i, &tx);
			acks++;
		}
		b.now += 1000;
		i = i + 1 < flows ? i + 1 : 0;
	}
	st.SetItemsProcessed(static_cast<int64_t>(st.iterations() + acks));
}
BENCHMARK(RxData)->Arg(16)->Arg(4096);

void
AckPair(benchmark::State &st)
{
	uint32_t flows = static_cast<uint32_t>(st.range(0)), i = 0;
	Bench b(flows);
	sgw_lift_mh_tx_out tx;
	int pairs = 0;

	for (auto _ : st) {
		b.Down(i);
		pairs += b.Ack(i, &tx) == SGW_LIFT_MH_PAIR;
		benchmark::DoNotOptimize(tx.ack_hdr[0]);
		b.now += 1000;
		i = i + 1 < flows ? i + 1 : 0;
	}
	if (pairs < (int)st.iterations() - (int)flows)
		st.SkipWithError("not every ACK was an ACK of new data");
	st.SetItemsProcessed(2 * st.iterations());
}
BENCHMARK(AckPair)->Arg(16)->Arg(4096);

void
Clone(benchmark::State &st)
{
	auto a = Seg(1, true, kIssMh + 1, kIssFh + 1, 0x10, 0, 12);
	uint8_t out[128];

	for (auto _ : st) {
		size_t n = sgw_lift_mh_frack_clone(a.data(), a.size(), out, sizeof(out));
		benchmark::DoNotOptimize(n);
		benchmark::DoNotOptimize(out[36]);
	}
	st.SetItemsProcessed(st.iterations());
}
BENCHMARK(Clone);

} // namespace

BENCHMARK_MAIN();
