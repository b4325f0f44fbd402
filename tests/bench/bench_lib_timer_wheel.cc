// SPDX-License-Identifier: BSD-3-Clause
// Google Benchmarks for lib/sgw_timer_wheel.c (100 us ticks, as in satgw):
//  - start+stop pairs, stop+start churn and updates with 1M timers already
//    on the wheel (random delays 1 ms - 100 s, so mostly on level 1 and 2);
//  - expire throughput through a dense wheel, with one or two cascades per
//    timer, timers started in random or in expiry order.
// items_per_second: start+stop pairs, updates, or timers expired.
// Reproduce: tests/bench/bench_lib_timer_wheel --benchmark_repetitions=5
//            --benchmark_report_aggregates_only=true (see docs/timer-wheel.md).

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "sgw_timer_wheel.h"

namespace {

constexpr uint64_t kTick = 100 * 1000;  // 100 us
constexpr uint64_t kMs = 1000 * 1000;
constexpr uint64_t kSec = 1000 * kMs;
constexpr uint32_t kActive = 1000000;
constexpr size_t kDelays = 1 << 16;

uint64_t Splitmix(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// Random delays in [1 ms, 100 s].
std::vector<uint64_t> Delays(uint64_t seed, size_t n) {
  std::vector<uint64_t> d(n);
  for (auto &x : d)
    x = 1 * kMs + Splitmix(&seed) % (100 * kSec - 1 * kMs + 1);
  return d;
}

// A wheel with 1M running timers (handles returned) and room for more.
sgw_tw *Populated(uint32_t cap, std::vector<sgw_tw_handle_t> *hs) {
  sgw_tw *tw = sgw_tw_create(cap, kTick, 0);
  std::vector<uint64_t> d = Delays(1, kActive);
  hs->resize(kActive);
  for (uint32_t i = 0; i < kActive; i++)
    (*hs)[i] = sgw_tw_start(tw, i, d[i]);
  return tw;
}

void BM_StartStop_1M(benchmark::State &state) {
  std::vector<sgw_tw_handle_t> hs;
  sgw_tw *tw = Populated(kActive + 1024, &hs);
  std::vector<uint64_t> d = Delays(2, kDelays);
  size_t k = 0;
  for (auto _ : state) {
    sgw_tw_handle_t h = sgw_tw_start(tw, k, d[k & (kDelays - 1)]);
    benchmark::DoNotOptimize(sgw_tw_stop(tw, h));
    k++;
  }
  state.SetItemsProcessed(state.iterations());
  sgw_tw_destroy(tw);
}
BENCHMARK(BM_StartStop_1M);

// Churn: stop a random one of the 1M (a cold timer) and start a new one in
// its place; the pool entry freed is the one reused.
void BM_StopStartRandom_1M(benchmark::State &state) {
  std::vector<sgw_tw_handle_t> hs;
  sgw_tw *tw = Populated(kActive, &hs);
  std::vector<uint64_t> d = Delays(2, kDelays);
  std::vector<uint32_t> idx(kDelays);
  uint64_t seed = 6;
  for (auto &x : idx)
    x = static_cast<uint32_t>(Splitmix(&seed) % kActive);
  size_t k = 0;
  for (auto _ : state) {
    size_t j = k & (kDelays - 1);
    sgw_tw_stop(tw, hs[idx[j]]);
    hs[idx[j]] = sgw_tw_start(tw, k, d[j]);
    k++;
  }
  state.SetItemsProcessed(state.iterations());
  sgw_tw_destroy(tw);
}
BENCHMARK(BM_StopStartRandom_1M);

// Random handles among the 1M: each update touches a cold timer, as flow
// timers re-armed by traffic do.
void BM_Update_1M(benchmark::State &state) {
  std::vector<sgw_tw_handle_t> hs;
  sgw_tw *tw = Populated(kActive, &hs);
  std::vector<uint64_t> d = Delays(3, kDelays);
  std::vector<uint32_t> idx(kDelays);
  uint64_t seed = 4;
  for (auto &x : idx)
    x = static_cast<uint32_t>(Splitmix(&seed) % kActive);
  size_t k = 0;
  for (auto _ : state) {
    size_t j = k & (kDelays - 1);
    benchmark::DoNotOptimize(sgw_tw_update(tw, hs[idx[j]], d[j]));
    k++;
  }
  state.SetItemsProcessed(state.iterations());
  sgw_tw_destroy(tw);
}
BENCHMARK(BM_Update_1M);

// Expire throughput: 1M timers spread over range(0) ticks, drained by a poll
// loop advancing 1 ms (10 ticks) per call, at most 256 expiries per call.
// range(0) = 10000 ticks (1 s: 100 timers per tick, mostly one cascade);
// range(0) = 1000000 ticks (100 s: 1 per tick, mostly cascading twice).
// range(1) = 0: started in random order, so the lists walked hop around the
// 24 MB pool (a cache miss per timer per walk); 1: started in expiry order
// (as fixed-delay timers are), so the walks are nearly sequential.
void BM_Expire(benchmark::State &state) {
  const uint64_t span = static_cast<uint64_t>(state.range(0));
  const bool in_order = state.range(1) != 0;
  std::vector<uint64_t> out(256), delay(kActive);
  uint64_t expired = 0, seed = 5;
  sgw_tw *tw = sgw_tw_create(kActive, kTick, 0);
  uint64_t now = 0;
  for (auto _ : state) {
    state.PauseTiming();
    for (auto &x : delay)
      x = (1 + Splitmix(&seed) % span) * kTick;
    if (in_order)
      std::sort(delay.begin(), delay.end());
    for (uint32_t i = 0; i < kActive; i++)
      sgw_tw_start(tw, i, delay[i]);
    state.ResumeTiming();
    uint64_t n = 0;
    while (n < kActive) {
      now += 10 * kTick;
      uint32_t k;
      do {
        k = sgw_tw_expire(tw, now, out.data(), 256);
        n += k;
      } while (k == 256);
    }
    benchmark::DoNotOptimize(out.data());
    expired += n;
  }
  state.SetItemsProcessed(static_cast<int64_t>(expired));
  sgw_tw_destroy(tw);
}
BENCHMARK(BM_Expire)
    ->Args({10000, 0})
    ->Args({10000, 1})
    ->Args({1000000, 0})
    ->Args({1000000, 1})
    ->ArgNames({"span_ticks", "in_order"})
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
