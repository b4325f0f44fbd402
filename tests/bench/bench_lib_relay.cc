// SPDX-License-Identifier: BSD-3-Clause
// Google Benchmarks for lib/sgw_relay.c: the cost of the relay-buffer FIFO
// per segment and of the window control per ACK.
//  - WriteConsume/N:   copy an N-byte segment in at the tail, then peek it
//                      (zero-copy spans) and consume it; the ring wraps.
//  - SpanCommit:       zero-copy write (span + commit of 1448 bytes) + consume.
//  - RwndAck:          one RWND window decision (free space, scale rounding,
//                      SWS, no-retraction books) per ACK, buffer half full.
//  - RwndDataAck:      data bookkeeping + ACK decision, as per received segment.
//  - PetraAck/AckresAck: the withholding decision (alternating above/below b_th).
// Reproduce: build-h/tests/bench/bench_lib_relay --benchmark_repetitions=5
//            --benchmark_report_aggregates_only=true

#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "sgw_relay.h"

namespace {

constexpr uint32_t kRing = 1u << 20;

void
WriteConsume(benchmark::State &state)
{
	const uint32_t n = static_cast<uint32_t>(state.range(0));
	std::vector<uint8_t> mem(kRing);
	std::vector<uint8_t> seg(n, 0x42);
	sgw_relay r;
	sgw_relay_init(&r, mem.data(), kRing, kRing - 4096);
	uint64_t sum = 0;
	for (auto _ : state) {
		sgw_relay_write(&r, seg.data(), n);
		const uint8_t *p;
		uint32_t off = 0;
		for (int i = 0; i < 2 && off < n; i++) {
			uint32_t k = sgw_relay_peek(&r, off, &p);
			sum += p[0];
			off += k;
		}
		sgw_relay_consume(&r, n);
	}
	benchmark::DoNotOptimize(sum);
	state.SetItemsProcessed(state.iterations());
	state.SetBytesProcessed(state.iterations() * n);
}
BENCHMARK(WriteConsume)->Arg(64)->Arg(1448)->Arg(9000);

void
SpanCommit(benchmark::State &state)
{
	std::vector<uint8_t> mem(kRing);
	sgw_relay r;
	sgw_relay_init(&r, mem.data(), kRing, kRing);
	for (auto _ : state) {
		uint8_t *w;
		uint32_t span = sgw_relay_write_span(&r, &w);
		uint32_t n = span < 1448 ? span : 1448;
		w[0] = 1;
		sgw_relay_commit(&r, n);
		sgw_relay_consume(&r, n);
	}
	state.SetItemsProcessed(state.iterations());
}
BENCHMARK(SpanCommit);

struct Setup {
	std::vector<uint8_t> mem;
	sgw_relay r{};
	sgw_rwc c{};
	explicit Setup(int scheme) : mem(1u << 17)
	{
		sgw_relay_init(&r, mem.data(), 1u << 17, 82000);
		sgw_rwc_conf conf;
		sgw_rwc_conf_default(&conf);
		conf.scheme = static_cast<uint8_t>(scheme);
		conf.wscale = 7;
		conf.mss = 1000;
		conf.b_th = 7000;
		sgw_rwc_init(&c, &conf, &r, 12345, 0);
	}
};

void
RwndAck(benchmark::State &state)
{
	Setup s(SGW_RWC_RWND);
	std::vector<uint8_t> junk(41000);
	sgw_relay_write(&s.r, junk.data(), 41000);
	uint32_t rcv_nxt = 12345 + 41000;
	uint64_t now = 0;
	sgw_rwc_out o;
	for (auto _ : state) {
		now += 1000;
		benchmark::DoNotOptimize(sgw_rwc_ack(&s.c, &s.r, now, rcv_nxt, &o));
	}
	state.SetItemsProcessed(state.iterations());
}
BENCHMARK(RwndAck);

void
RwndDataAck(benchmark::State &state)
{
	Setup s(SGW_RWC_RWND);
	uint32_t rcv_nxt = 12345;
	uint64_t now = 0;
	sgw_rwc_out o;
	for (auto _ : state) {
		// Counters only: the relay stays empty, the edge moves every segment.
		now += 1000;
		sgw_rwc_data(&s.c, &s.r, now, rcv_nxt, 1000, now - 100000);
		rcv_nxt += 1000;
		benchmark::DoNotOptimize(sgw_rwc_ack(&s.c, &s.r, now, rcv_nxt, &o));
	}
	state.SetItemsProcessed(state.iterations());
}
BENCHMARK(RwndDataAck);

void
WithholdAck(benchmark::State &state)
{
	Setup s(static_cast<int>(state.range(0)));
	std::vector<uint8_t> junk(8000);
	uint32_t rcv_nxt = 12345;
	uint64_t now = 0;
	sgw_rwc_out o;
	bool full = false;
	for (auto _ : state) {
		now += 1000;
		// Alternate between above and below b_th every 64 ACKs (the write or
		// consume is timed too: one 8000-byte copy per 64 ACKs).
		if ((now / 1000) % 64 == 0) {
			if (full)
				sgw_relay_consume(&s.r, 8000);
			else
				sgw_relay_write(&s.r, junk.data(), 8000);
			full = !full;
		}
		sgw_rwc_data(&s.c, &s.r, now, rcv_nxt, 1000, now - 100000);
		rcv_nxt += 1000;
		benchmark::DoNotOptimize(sgw_rwc_ack(&s.c, &s.r, now, rcv_nxt, &o));
	}
	state.SetItemsProcessed(state.iterations());
	state.SetLabel(sgw_rwc_scheme_name(static_cast<int>(state.range(0))));
}
BENCHMARK(WithholdAck)->Arg(SGW_RWC_PETRA)->Arg(SGW_RWC_ACKRES);

}  // namespace

BENCHMARK_MAIN();
