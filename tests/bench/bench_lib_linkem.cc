// SPDX-License-Identifier: BSD-3-Clause
// Google Benchmarks for lib/sgw_linkem.c: sgw_linkem_offer() per frame, for
// each loss model, on a 20 Mbit/s link with 270 ms of delay (a GEO forward
// link). Frames of IMIX-like sizes (64, 576, 1500 bytes in 7:4:1) are offered
// at 95% of the line rate, so the queue stays short and most frames pass:
// the figure is the cost the emulator's worker pays per frame.
// items_per_second: frames offered.
// Reproduce: tests/bench/bench_lib_linkem --benchmark_repetitions=5
//            --benchmark_report_aggregates_only=true (see docs/emulator.md).

#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "sgw_linkem.h"

namespace {

constexpr uint64_t kMs = 1000 * 1000;
constexpr uint64_t kRate = 20000000;

enum Model { kNone, kBer, kRandom, kGe, kGeBer, kGredOutages };

sgw_linkem_conf MakeConf(Model m) {
  sgw_linkem_conf c;
  sgw_linkem_conf_init(&c);
  c.rate_bps = kRate;
  c.delay_ns = 270 * kMs;
  switch (m) {
    case kNone:
      break;
    case kBer:
      c.loss = SGW_LOSS_BER;
      c.good.ber = 1e-6;
      break;
    case kRandom:
      c.loss = SGW_LOSS_RANDOM;
      c.good.p = 0.01;
      break;
    case kGe:  // per-state packet loss
      c.loss = SGW_LOSS_GE;
      c.good = {4.0, 0.0, 0.001};
      c.bad = {1.0, 0.0, 0.5};
      break;
    case kGeBer:  // per-state bit errors: a pow per new frame length
      c.loss = SGW_LOSS_GE;
      c.good = {4.0, 1e-7, 0.0};
      c.bad = {1.0, 1e-4, 0.0};
      break;
    case kGredOutages:  // gentle RED, jitter and two outage schedules
      c.aqm = SGW_AQM_GRED;
      c.red_min_bytes = 30000;
      c.red_max_bytes = 90000;
      c.jitter_ns = 5 * kMs;
      c.n_outages = 2;
      c.outages[0] = {10ull * 1000 * kMs, 2000 * kMs, 0};
      c.outages[1] = {30ull * 1000 * kMs, 1000 * kMs, 60ull * 1000 * kMs};
      break;
  }
  return c;
}

void BM_Offer(benchmark::State &state) {
  const Model m = Model(state.range(0));
  sgw_linkem_conf c = MakeConf(m);
  sgw_linkem *lm = sgw_linkem_create(&c, 42, 0);
  // 12 frames: 7 x 64, 4 x 576, 1 x 1500 bytes, interleaved.
  const uint32_t sizes[12] = {64, 576, 64, 1500, 64, 576, 64, 64, 576, 64, 576, 64};
  // Offer times: each frame's wire time / 0.95.
  uint64_t gap[12];
  for (int i = 0; i < 12; i++)
    gap[i] = uint64_t(double(sizes[i]) * 8e9 / double(kRate) / 0.95);
  uint64_t now = 0, rel = 0, passed = 0;
  unsigned k = 0;
  for (auto _ : state) {
    passed += sgw_linkem_offer(lm, now, sizes[k], &rel) == SGW_LE_PASS;
    benchmark::DoNotOptimize(rel);
    now += gap[k];
    k = k + 1 == 12 ? 0 : k + 1;
  }
  state.SetItemsProcessed(int64_t(state.iterations()));
  state.counters["pass_ratio"] = double(passed) / double(state.iterations());
  sgw_linkem_destroy(lm);
}

BENCHMARK(BM_Offer)
    ->ArgName("model")
    ->Arg(kNone)
    ->Arg(kBer)
    ->Arg(kRandom)
    ->Arg(kGe)
    ->Arg(kGeBer)
    ->Arg(kGredOutages);

// The channel alone: no rate (no queue, no transmitter), Gilbert-Elliott.
void BM_OfferNoRateGe(benchmark::State &state) {
  sgw_linkem_conf c;
  sgw_linkem_conf_init(&c);
  c.loss = SGW_LOSS_GE;
  c.good = {4.0, 0.0, 0.001};
  c.bad = {1.0, 0.0, 0.5};
  sgw_linkem *lm = sgw_linkem_create(&c, 42, 0);
  uint64_t now = 0, rel = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(sgw_linkem_offer(lm, now, 1500, &rel));
    now += 100000;  // 100 us
  }
  state.SetItemsProcessed(int64_t(state.iterations()));
  sgw_linkem_destroy(lm);
}
BENCHMARK(BM_OfferNoRateGe);

// Catching up on the GE chain after idle time: 1 ms mean sojourns, one frame
// a second, so ~1000 state changes per frame. items_per_second: state changes.
void BM_GeCatchUp(benchmark::State &state) {
  sgw_linkem_conf c;
  sgw_linkem_conf_init(&c);
  c.rate_bps = kRate;
  c.loss = SGW_LOSS_GE;
  c.good = {0.001, 0.0, 0.0};
  c.bad = {0.001, 0.0, 0.5};
  sgw_linkem *lm = sgw_linkem_create(&c, 42, 0);
  uint64_t now = 0, rel = 0;
  for (auto _ : state) {
    now += 1000 * kMs;
    benchmark::DoNotOptimize(sgw_linkem_offer(lm, now, 64, &rel));
  }
  sgw_linkem_stats st;
  sgw_linkem_get_stats(lm, now, &st);
  state.SetItemsProcessed(int64_t(st.state_changes));
  sgw_linkem_destroy(lm);
}
BENCHMARK(BM_GeCatchUp);

}  // namespace

BENCHMARK_MAIN();
