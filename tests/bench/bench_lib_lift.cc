// SPDX-License-Identifier: BSD-3-Clause
// Google Benchmarks for lib/sgw_lift.c (BS-LIFT): the per-packet cost of the
// two paths the hub's LIFT stage runs, in virtual time.
//  - EspDown/<flows>:  a downlink ESP packet on a known SA (SA lookup by MH
//                      address + SPI, highest-sequence bookkeeping, RTT timing).
//  - EspDownOther:     a downlink ESP packet on an SA the table does not name.
//  - AckPath/<flows>:  one (FrACK, TCP ACK) pair from the MH, decoded from real
//                      LIFT bytes (sgw_lift_rx) and run through the machine:
//                      flow lookup, pairing by uplink ESP sequence, hold and
//                      replace, timer re-arm; actions consumed. One item is one
//                      packet (a pair is two).
//  - Decode:           the codec alone on a TCP ACK header + ESP header.
// <flows> flows share the table (one SA each), picked round robin, so lookups
// miss the cache as a loaded hub's would.
// Reproduce: tests/bench/bench_lib_lift --benchmark_repetitions=5
//            --benchmark_report_aggregates_only=true

#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "sgw_lift.h"

namespace {

struct Bench {
	std::vector<uint8_t> mem;
	sgw_lift *l = nullptr;
	std::vector<sgw_lift_addr> mh;
	sgw_lift_act act[16];
	sgw_lift_out out{act, 0, 16};
	uint64_t now = 1;

	explicit Bench(uint32_t flows)
	{
		sgw_lift_conf c;
		sgw_lift_conf_default(&c);
		c.max_flows = flows;
		mem.resize(sgw_lift_mem_size(&c));
		l = sgw_lift_init(mem.data(), mem.size(), &c, 0);
		for (uint32_t i = 0; i < flows; i++) {
			uint8_t a[4] = {10, static_cast<uint8_t>(i >> 16),
					static_cast<uint8_t>(i >> 8), static_cast<uint8_t>(i)};
			mh.push_back(sgw_lift_addr_v4(a));
			uint8_t b[8];
			sgw_lift_build_setup(b, 8, static_cast<uint16_t>(i), 0x1000 + i, 50);
			out.n = 0;
			sgw_lift_rx(l, now, &mh[i], b, 8, 1, 1, &out);
		}
		out.n = 0;
	}
};

void
EspDown(benchmark::State &st)
{
	uint32_t flows = static_cast<uint32_t>(st.range(0));
	Bench b(flows);
	uint32_t i = 0, seq = 1;
	for (auto _ : st) {
		benchmark::DoNotOptimize(sgw_lift_esp_down(b.l, b.now, &b.mh[i], 0x1000 + i, seq));
		b.now += 1000;
		if (++i == flows) {
			i = 0;
			seq++;
		}
	}
	st.SetItemsProcessed(st.iterations());
}
BENCHMARK(EspDown)->Arg(16)->Arg(65536);

void
EspDownOther(benchmark::State &st)
{
	Bench b(65536);
	uint32_t seq = 1;
	for (auto _ : st) {
		benchmark::DoNotOptimize(sgw_lift_esp_down(b.l, b.now, &b.mh[7], 0x9999, seq++));
		b.now += 1000;
	}
	st.SetItemsProcessed(st.iterations());
}
BENCHMARK(EspDownOther);

void
AckPath(benchmark::State &st)
{
	uint32_t flows = static_cast<uint32_t>(st.range(0));
	Bench b(flows);
	uint8_t fr[40], ak[40];
	memset(fr, 0, sizeof(fr));
	memset(ak, 0, sizeof(ak));
	std::vector<uint32_t> up(flows, 1), dn(flows, 1);
	uint32_t i = 0;
	uint64_t h = 10;
	for (auto _ : st) {
		// data toward the MH first, so every ACK is for new data and is held
		sgw_lift_esp_down(b.l, b.now, &b.mh[i], 0x1000 + i, dn[i]++);
		sgw_lift_esp_down(b.l, b.now, &b.mh[i], 0x1000 + i, dn[i]++);
		sgw_lift_build_frack(fr, 8, static_cast<uint16_t>(i), 50);
		fr[12] = static_cast<uint8_t>(up[i] >> 24);
		fr[13] = static_cast<uint8_t>(up[i] >> 16);
		fr[14] = static_cast<uint8_t>(up[i] >> 8);
		fr[15] = static_cast<uint8_t>(up[i]);
		up[i]++;
		sgw_lift_build_tcp_ack(ak, 8, 0, static_cast<uint16_t>(i), dn[i] - 2, 50);
		ak[12] = static_cast<uint8_t>(up[i] >> 24);
		ak[13] = static_cast<uint8_t>(up[i] >> 16);
		ak[14] = static_cast<uint8_t>(up[i] >> 8);
		ak[15] = static_cast<uint8_t>(up[i]);
		up[i]++;
		sgw_lift_rx(b.l, b.now, &b.mh[i], fr, sizeof(fr), h++, 1, &b.out);
		sgw_lift_rx(b.l, b.now, &b.mh[i], ak, sizeof(ak), h++, 1, &b.out);
		benchmark::DoNotOptimize(b.act[0]);
		b.out.n = 0;
		b.now += 1000;
		if (++i == flows)
			i = 0;
	}
	st.SetItemsProcessed(2 * st.iterations());
	sgw_lift_stats s;
	sgw_lift_get_stats(b.l, &s);
	st.counters["held_share"] = s.acks_rx ? static_cast<double>(s.acks_held) /
						static_cast<double>(s.acks_rx) : 0;
}
BENCHMARK(AckPath)->Arg(16)->Arg(65536);

void
Decode(benchmark::State &st)
{
	uint8_t p[40] = {};
	sgw_lift_build_tcp_ack(p, 8, SGW_LIFT_BIT_S, 3, 12345, 50);
	sgw_lift_msg m;
	for (auto _ : st) {
		benchmark::DoNotOptimize(sgw_lift_decode(p, sizeof(p), &m));
		benchmark::DoNotOptimize(m);
	}
	st.SetItemsProcessed(st.iterations());
}
BENCHMARK(Decode);

}  // namespace

BENCHMARK_MAIN();
