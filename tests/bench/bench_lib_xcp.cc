// SPDX-License-Identifier: BSD-3-Clause
// Google Benchmarks for lib/sgw_xcp.c: the XCP stage's per-packet cost and
// the controller's per-interval cost.
//  - Feedback:      sgw_xcp_feedback alone (the formula from the parameters).
//  - OnPacket:      sgw_xcp_on_packet: accumulate + budget-limited feedback.
//  - Process:       sgw_xcp_process on header bytes: parse, accumulate,
//                   feedback, lower H_feedback in place (the whole fast path
//                   a worker runs per XCP packet), plus the per-packet
//                   publication check (sgw_xcp_pub_refresh, nothing new).
//  - Aggregate/N:   one control interval's end with N workers' snapshots
//                   (sgw_xcp_acc_read of each, sgw_xcp_aggregate, N
//                   sgw_xcp_pub_write).
// Packets cycle through 1024 precomputed (size, rtt, cwnd) triples (RTT
// 0.5-0.9 s, windows 10 kB-100 MB) so the branch predictor sees a mix.
// Reproduce: tests/bench/bench_lib_xcp --benchmark_repetitions=5
//            --benchmark_report_aggregates_only=true

#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "sgw_xcp.h"

namespace {

struct Trip {
	uint32_t size, rtt_us, cwnd;
};

std::vector<Trip>
Mix()
{
	std::vector<Trip> v(1024);
	uint64_t s = 12345;
	for (auto &t : v) {
		s = s * 6364136223846793005ull + 1442695040888963407ull;
		t.size = 64 + static_cast<uint32_t>((s >> 33) % 1437);
		t.rtt_us = 500000 + static_cast<uint32_t>((s >> 20) % 400000);
		t.cwnd = 10000 + static_cast<uint32_t>((s >> 7) % 100000000);
	}
	return v;
}

sgw_xcp_params
Params()
{
	sgw_xcp_params p{};
	p.epoch = 1;
	p.xi_p = 1e-9;
	p.xi_n = 2e-10;
	p.pos_budget = p.pos_left = 1e300;  // never runs out here
	p.neg_budget = p.neg_left = 1e300;
	p.rtt_max_us = 10000000;
	return p;
}

void
Feedback(benchmark::State &st)
{
	auto mix = Mix();
	sgw_xcp_params p = Params();
	size_t i = 0;
	for (auto _ : st) {
		const Trip &t = mix[i++ & 1023];
		benchmark::DoNotOptimize(sgw_xcp_feedback(&p, t.size, t.rtt_us, t.cwnd));
	}
	st.SetItemsProcessed(static_cast<int64_t>(st.iterations()));
}
BENCHMARK(Feedback);

void
OnPacket(benchmark::State &st)
{
	auto mix = Mix();
	sgw_xcp_params p = Params();
	static sgw_xcp_acc acc;
	sgw_xcp_acc_init(&acc);
	size_t i = 0;
	for (auto _ : st) {
		const Trip &t = mix[i++ & 1023];
		benchmark::DoNotOptimize(sgw_xcp_on_packet(&acc, &p, t.size, t.rtt_us, t.cwnd));
	}
	st.SetItemsProcessed(static_cast<int64_t>(st.iterations()));
}
BENCHMARK(OnPacket);

void
Process(benchmark::State &st)
{
	auto mix = Mix();
	std::vector<uint8_t> hdrs(1024 * SGW_XCPW_LEN);
	for (size_t k = 0; k < 1024; k++) {
		sgw_xcp_fields f{};
		f.next = 6;
		f.rtt_us = mix[k].rtt_us;
		f.cwnd = mix[k].cwnd;
		f.feedback = INT32_MAX;
		sgw_xcp_build(&hdrs[k * SGW_XCPW_LEN], SGW_XCPW_LEN, 254, &f);
	}
	std::vector<uint8_t> orig = hdrs;
	sgw_xcp_params p = Params();
	static sgw_xcp_acc acc;
	static sgw_xcp_pub pub;
	sgw_xcp_acc_init(&acc);
	sgw_xcp_pub_init(&pub, &p);
	sgw_xcp_patch pt;
	size_t i = 0;
	for (auto _ : st) {
		size_t k = i++ & 1023;
		if (k == 0) {  // restore H_feedback so every packet is lowered
			st.PauseTiming();
			hdrs = orig;
			st.ResumeTiming();
		}
		sgw_xcp_pub_refresh(&pub, &p);
		benchmark::DoNotOptimize(sgw_xcp_process(&acc, &p, 254, &hdrs[k * SGW_XCPW_LEN],
							 SGW_XCPW_LEN, mix[k].size, &pt, nullptr));
	}
	st.SetItemsProcessed(static_cast<int64_t>(st.iterations()));
}
BENCHMARK(Process);

void
Aggregate(benchmark::State &st)
{
	const uint32_t n = static_cast<uint32_t>(st.range(0));
	sgw_xcp_conf c;
	sgw_xcp_conf_default(&c);
	std::vector<sgw_xcp_acc> acc(n);
	std::vector<sgw_xcp_pub> pub(n);
	std::vector<sgw_xcp_params> out(n);
	std::vector<sgw_xcp_sums> snaps(n);
	static sgw_xcp_ctl ctl;
	for (auto &a : acc)
		sgw_xcp_acc_init(&a);
	sgw_xcp_ctl_init(&c, &ctl, 0, nullptr, n, out.data());
	for (uint32_t w = 0; w < n; w++)
		sgw_xcp_pub_init(&pub[w], &out[w]);
	auto mix = Mix();
	uint64_t now = 0;
	for (auto _ : st) {
		st.PauseTiming();  // one interval's traffic, outside the timing
		for (uint32_t w = 0; w < n; w++)
			for (size_t k = 0; k < 64; k++)
				sgw_xcp_on_packet(&acc[w], &out[w], mix[k].size, mix[k].rtt_us,
						  mix[k].cwnd);
		now += 600000000ull;
		st.ResumeTiming();
		for (uint32_t w = 0; w < n; w++)
			sgw_xcp_acc_read(&acc[w], &snaps[w]);
		sgw_xcp_aggregate(&c, &ctl, snaps.data(), n, 1.25e8, 10000, now, &ctl, out.data());
		for (uint32_t w = 0; w < n; w++)
			sgw_xcp_pub_write(&pub[w], &out[w]);
	}
	st.SetItemsProcessed(static_cast<int64_t>(st.iterations()));
}
BENCHMARK(Aggregate)->Arg(1)->Arg(4)->Arg(16)->Arg(64);

}  // namespace

BENCHMARK_MAIN();
