// SPDX-License-Identifier: BSD-3-Clause
// Unit tests for lib/sgw_linkem.c, the emulator's link model, in virtual time:
// exact serialisation and no drift over 10^6 back-to-back frames; delay,
// jitter and FIFO order; drop-tail on packets and bytes; the RED and gentle
// RED curves; BER and i.i.d. loss against their formulas; Gilbert-Elliott
// loss rate, burst length and sojourn times against the analytic values;
// outages (one-shot, periodic, lost frames still occupying the line); seeds;
// the in-flight bound; conf_check's refusals.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <string>
#include <vector>

#include "sgw_linkem.h"

namespace {

constexpr uint64_t kUs = 1000;
constexpr uint64_t kMs = 1000 * kUs;
constexpr uint64_t kSec = 1000 * kMs;

using u128 = unsigned __int128;

sgw_linkem_conf Conf(uint64_t rate_bps = 0) {
  sgw_linkem_conf c;
  sgw_linkem_conf_init(&c);
  c.rate_bps = rate_bps;
  return c;
}

// Owns one model.
class Link {
 public:
  explicit Link(const sgw_linkem_conf &c, uint64_t seed = 1, uint64_t t0 = 0)
      : lm_(sgw_linkem_create(&c, seed, t0)) {}
  ~Link() { sgw_linkem_destroy(lm_); }
  Link(const Link &) = delete;
  Link &operator=(const Link &) = delete;

  bool ok() const { return lm_ != nullptr; }
  sgw_linkem_verdict Offer(uint64_t now, uint32_t len, uint64_t *rel = nullptr) {
    uint64_t r = UINT64_MAX;
    sgw_linkem_verdict v = sgw_linkem_offer(lm_, now, len, &r);
    if (rel != nullptr)
      *rel = r;
    return v;
  }
  sgw_linkem_stats Stats(uint64_t now) {
    sgw_linkem_stats st;
    sgw_linkem_get_stats(lm_, now, &st);
    return st;
  }
  int State(uint64_t now) { return sgw_linkem_state(lm_, now); }

 private:
  sgw_linkem *lm_;
};

// ceil(a / b) and floor(a / b) in 128 bits.
uint64_t CeilDiv(u128 a, u128 b) { return uint64_t((a + b - 1) / b); }
uint64_t FloorDiv(u128 a, u128 b) { return uint64_t(a / b); }

// ------------------------------------------------------------ serialisation

TEST(LinkemSerialisation, A1500ByteFrameAt1MbitTakes12ms) {
  Link l(Conf(1000000));
  ASSERT_TRUE(l.ok());
  uint64_t rel;
  ASSERT_EQ(l.Offer(0, 1500, &rel), SGW_LE_PASS);
  EXPECT_EQ(rel, 12 * kMs);
  // A second one offered at the same time waits for the first.
  ASSERT_EQ(l.Offer(0, 1500, &rel), SGW_LE_PASS);
  EXPECT_EQ(rel, 24 * kMs);
  // The line is idle again at 24 ms: a frame offered later starts at once.
  ASSERT_EQ(l.Offer(100 * kMs, 1500, &rel), SGW_LE_PASS);
  EXPECT_EQ(rel, 112 * kMs);

  // Time zero elsewhere, and per-frame overhead on the wire: 1524 bytes.
  sgw_linkem_conf c = Conf(1000000);
  c.overhead_bytes = 24;
  Link o(c, 1, 5 * kSec);
  ASSERT_EQ(o.Offer(5 * kSec, 1500, &rel), SGW_LE_PASS);
  EXPECT_EQ(rel, 5 * kSec + 12192 * kUs);
}

TEST(LinkemSerialisation, FractionalTimesRoundUpPerFrame) {
  // 100 bytes at 3 Mbit/s: 266666.67 ns, reported as 266667 (never early).
  Link l(Conf(3000000));
  uint64_t rel;
  ASSERT_EQ(l.Offer(0, 100, &rel), SGW_LE_PASS);
  EXPECT_EQ(rel, 266667u);
  // Back to back: the second ends at exactly 533333.33, so 533334.
  ASSERT_EQ(l.Offer(0, 100, &rel), SGW_LE_PASS);
  EXPECT_EQ(rel, 533334u);
  // Third: 800000 exactly.
  ASSERT_EQ(l.Offer(0, 100, &rel), SGW_LE_PASS);
  EXPECT_EQ(rel, 800000u);
}

// Back-to-back frames over 10^6 frames end exactly where the total bits say:
// frame k ends at ceil(B_k * 1e9 / rate), B_k the bits of frames 0..k. Each
// frame is offered at the floor of its exact start, so the line never idles.
void ExpectNoDrift(uint64_t rate, const std::vector<uint32_t> &sizes, uint32_t n) {
  sgw_linkem_conf c = Conf(rate);
  c.delay_ns = 250 * kMs;
  Link l(c);
  u128 bits = 0;
  uint64_t bad = 0, first_bad = UINT64_MAX, last = 0;
  for (uint32_t k = 0; k < n; k++) {
    uint32_t len = sizes[k % sizes.size()];
    uint64_t now = FloorDiv(bits * kSec, rate), rel;
    bits += 8u * len;
    uint64_t want = CeilDiv(bits * kSec, rate) + c.delay_ns;
    if (l.Offer(now, len, &rel) != SGW_LE_PASS || rel != want) {
      if (bad++ == 0)
        first_bad = k;
    }
    last = rel;
  }
  EXPECT_EQ(bad, 0u) << "first wrong frame " << first_bad;
  // The whole run: exactly its bits at the line rate, plus the delay.
  EXPECT_EQ(last, CeilDiv(bits * kSec, rate) + c.delay_ns);
  sgw_linkem_stats st = l.Stats(last);
  EXPECT_EQ(st.delivered_pkts, n);
  EXPECT_EQ(st.queue_pkts, 0u);
  EXPECT_LE(st.queue_pkts_max, 2u);
}

TEST(LinkemSerialisation, NoDriftOverAMillionFramesAtLineRate) {
  // 1500 bytes at 7 Mbit/s: 1714285.714... ns per frame.
  ExpectNoDrift(7000000, {1500}, 1000000);
  // Mixed sizes at an odd rate (no size divides evenly).
  ExpectNoDrift(20000003, {64, 576, 1500, 9000, 1, 1499}, 1000000);
}

TEST(LinkemSerialisation, AllOfferedAtOnceQueueExactly) {
  // 1000 frames offered at t = 0 to a 1000-packet queue: frame k ends at
  // (k + 1) * 12000 bits / 7 Mbit/s, exactly, rounded up.
  sgw_linkem_conf c = Conf(7000000);
  Link l(c);
  for (uint64_t k = 0; k < 1000; k++) {
    uint64_t rel;
    ASSERT_EQ(l.Offer(0, 1500, &rel), SGW_LE_PASS);
    ASSERT_EQ(rel, CeilDiv(u128(k + 1) * 12000 * kSec, 7000000)) << k;
  }
  sgw_linkem_stats st = l.Stats(0);
  EXPECT_EQ(st.queue_pkts, 1000u);
  EXPECT_EQ(st.queue_bytes, 1500000u);
  // Half-way through, half have left.
  st = l.Stats(CeilDiv(u128(500) * 12000 * kSec, 7000000));
  EXPECT_EQ(st.queue_pkts, 500u);
  EXPECT_EQ(st.queue_pkts_max, 1000u);
  EXPECT_EQ(st.queue_bytes_max, 1500000u);
}

TEST(LinkemSerialisation, NoRateMeansNoQueueAndNoDelay) {
  sgw_linkem_conf c = Conf(0);
  c.queue_pkts = 10;
  Link l(c);
  for (int i = 0; i < 5000; i++) {
    uint64_t rel;
    ASSERT_EQ(l.Offer(7 * kMs, 1500, &rel), SGW_LE_PASS);
    ASSERT_EQ(rel, 7 * kMs);
  }
  EXPECT_EQ(l.Stats(7 * kMs).queue_pkts, 0u);
}

TEST(LinkemSerialisation, TimeGoingBackIsTakenAsTheLatest) {
  Link l(Conf(1000000));
  uint64_t rel;
  ASSERT_EQ(l.Offer(100 * kMs, 1500, &rel), SGW_LE_PASS);
  EXPECT_EQ(rel, 112 * kMs);
  ASSERT_EQ(l.Offer(50 * kMs, 1500, &rel), SGW_LE_PASS);  // as if at 100 ms
  EXPECT_EQ(rel, 124 * kMs);
}

// ------------------------------------------------------------ delay, jitter

TEST(LinkemDelay, DelayAndJitterWithinBoundsAndOrderKept) {
  sgw_linkem_conf c = Conf(10000000);
  c.delay_ns = 270 * kMs;
  c.jitter_ns = 20 * kMs;
  c.queue_pkts = 100000;
  Link l(c, 99);
  // A reference transmitter: the exact end of the last frame, in bit-ns / rate.
  u128 end_num = 0;  // end * rate, exact
  uint64_t now = 0, prev_rel = 0, x = 12345, clamped = 0, n = 200000;
  double sum_off = 0;
  uint64_t n_free = 0, max_off = 0;
  for (uint64_t i = 0; i < n; i++) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    uint32_t len = 60 + uint32_t(x >> 33) % 1441;
    now += (x >> 20) % (2 * kMs);  // mean 1 ms gaps: the queue comes and goes
    u128 start_num = u128(now) * c.rate_bps;
    if (CeilDiv(end_num, c.rate_bps) > now)  // busy: append at the exact end
      start_num = end_num;
    end_num = start_num + u128(8 * len) * kSec;
    uint64_t end = CeilDiv(end_num, c.rate_bps), rel;
    ASSERT_EQ(l.Offer(now, len, &rel), SGW_LE_PASS) << i;
    ASSERT_GE(rel, end + c.delay_ns) << i;
    ASSERT_LE(rel, end + c.delay_ns + c.jitter_ns) << i;
    ASSERT_GE(rel, prev_rel) << i;  // FIFO
    uint64_t off = rel - end - c.delay_ns;
    if (rel == prev_rel) {
      clamped++;
    } else {
      sum_off += double(off);
      n_free++;
      max_off = std::max(max_off, off);
    }
    prev_rel = rel;
  }
  // Jitter spans its range; clamping (order kept) happens but not always.
  // (Uniformity: the next test, where nothing clamps.)
  EXPECT_GT(max_off, 19 * kMs);
  EXPECT_GT(clamped, 0u);
  EXPECT_GT(n_free, n / 100);
  std::printf("[ jitter ] %llu of %llu releases clamped to the previous one, "
              "mean offset of the others %.2f ms\n", (unsigned long long)clamped,
              (unsigned long long)n, sum_off / double(n_free) / 1e6);
}

TEST(LinkemDelay, JitterIsUniformWhenFramesAreFarApart) {
  // Frames 1 s apart never clamp: the offset is uniform in [0, jitter].
  sgw_linkem_conf c = Conf(100000000);
  c.delay_ns = 250 * kMs;
  c.jitter_ns = 1000;
  Link l(c, 5);
  std::vector<uint64_t> hist(1001, 0);
  const uint64_t n = 500000;
  for (uint64_t i = 0; i < n; i++) {
    uint64_t now = i * kSec, rel;
    ASSERT_EQ(l.Offer(now, 125, &rel), SGW_LE_PASS);  // 10 us on the wire
    uint64_t off = rel - now - 10 * kUs - c.delay_ns;
    ASSERT_LE(off, 1000u);
    hist[off]++;
  }
  // Chi-square over 1001 cells: mean 1000, sd ~45; 1300 is > 6 sd out.
  double chi = 0, e = double(n) / 1001;
  for (uint64_t h : hist)
    chi += (double(h) - e) * (double(h) - e) / e;
  EXPECT_LT(chi, 1300.0);
  EXPECT_GT(hist[0], 0u);
  EXPECT_GT(hist[1000], 0u);
}

// -------------------------------------------------------------- the queue

TEST(LinkemQueue, DropTailOnPackets) {
  sgw_linkem_conf c = Conf(1000000);
  c.queue_pkts = 10;
  Link l(c);
  for (int i = 0; i < 10; i++)
    ASSERT_EQ(l.Offer(0, 1500), SGW_LE_PASS) << i;
  for (int i = 0; i < 5; i++)
    ASSERT_EQ(l.Offer(0, 64), SGW_LE_DROP_QUEUE) << i;
  // The first frame leaves at 12 ms: room for exactly one.
  EXPECT_EQ(l.Offer(12 * kMs - 1, 64), SGW_LE_DROP_QUEUE);
  EXPECT_EQ(l.Offer(12 * kMs, 64), SGW_LE_PASS);
  EXPECT_EQ(l.Offer(12 * kMs, 64), SGW_LE_DROP_QUEUE);
  sgw_linkem_stats st = l.Stats(12 * kMs);
  EXPECT_EQ(st.queue_pkts, 10u);
  EXPECT_EQ(st.queue_pkts_max, 10u);
  EXPECT_EQ(st.drop_pkts[SGW_LE_DROP_QUEUE], 7u);
  EXPECT_EQ(st.drop_bytes[SGW_LE_DROP_QUEUE], 7u * 64);
  EXPECT_EQ(st.delivered_pkts, 11u);
  EXPECT_EQ(st.offered_pkts, 18u);
}

TEST(LinkemQueue, DropTailOnBytes) {
  sgw_linkem_conf c = Conf(1000000);
  c.queue_bytes = 4000;
  Link l(c);
  EXPECT_EQ(l.Offer(0, 1500), SGW_LE_PASS);
  EXPECT_EQ(l.Offer(0, 1500), SGW_LE_PASS);
  EXPECT_EQ(l.Offer(0, 1500), SGW_LE_DROP_QUEUE);  // 4500 > 4000
  EXPECT_EQ(l.Offer(0, 1000), SGW_LE_PASS);        // 4000 fits exactly
  EXPECT_EQ(l.Offer(0, 1), SGW_LE_DROP_QUEUE);
  EXPECT_EQ(l.Stats(0).queue_bytes, 4000u);
  // 12 ms later the first 1500 have left.
  EXPECT_EQ(l.Offer(12 * kMs, 1500), SGW_LE_PASS);
  EXPECT_EQ(l.Stats(12 * kMs).queue_bytes_max, 4000u);
}

// Drop fraction when every arrival finds the queue at k frames of 1500 bytes.
// wq = 1 makes the RED average the queue at the arrival. The queue is held at
// k: an accepted frame adds one, and the next offer comes when the head
// leaves (12 ms at 1 Mbit/s); a dropped frame is retried at the same time.
double RedDropFraction(sgw_aqm aqm, uint32_t k, uint32_t offers, uint64_t seed) {
  sgw_linkem_conf c = Conf(1000000);
  c.aqm = aqm;
  c.red_min_bytes = 15000;
  c.red_max_bytes = 45000;
  c.red_max_p = 0.1;
  c.red_wq = 1.0;
  Link l(c, seed);
  uint32_t level = 0;
  while (level < k)
    if (l.Offer(0, 1500) == SGW_LE_PASS)
      level++;
  uint64_t t = 0, drops = 0;
  for (uint32_t i = 0; i < offers; i++) {
    if (l.Offer(t, 1500) == SGW_LE_PASS) {
      t += 12 * kMs;
    } else {
      drops++;
    }
  }
  // The queue was held at k throughout (at t the last accepted frame's
  // predecessor has left).
  EXPECT_EQ(l.Stats(t).queue_pkts, k);
  return double(drops) / offers;
}

TEST(LinkemQueue, RedCurveRisesBetweenThresholds) {
  const uint32_t n = 40000;
  struct {
    uint32_t k;
    double p;
  } pts[] = {
      {5, 0.0}, {10, 0.0}, {14, 0.1 * 6000 / 30000}, {20, 0.05}, {25, 0.075}, {29, 0.095},
  };
  double prev = -1;
  for (auto &pt : pts) {
    double f = RedDropFraction(SGW_AQM_RED, pt.k, n, pt.k);
    double sd = std::sqrt(pt.p * (1 - pt.p) / n);
    EXPECT_NEAR(f, pt.p, 5 * sd + 1e-12) << "level " << pt.k;
    EXPECT_GE(f, prev) << "level " << pt.k;
    prev = f;
  }
  // At max_th and above, classic RED drops every arrival.
  EXPECT_EQ(RedDropFraction(SGW_AQM_RED, 30, 1000, 1), 1.0);
}

TEST(LinkemQueue, GentleRedRisesToOneAtTwiceMax) {
  const uint32_t n = 40000;
  struct {
    uint32_t k;
    double p;
  } pts[] = {
      {20, 0.05},                              // between thresholds: as RED
      {30, 0.1},                               // max_th: max_p
      {40, 0.1 + 0.9 * 15000.0 / 45000.0},     // 0.4
      {50, 0.1 + 0.9 * 30000.0 / 45000.0},     // 0.7
      {59, 0.1 + 0.9 * 43500.0 / 45000.0},     // 0.97
  };
  double prev = -1;
  for (auto &pt : pts) {
    double f = RedDropFraction(SGW_AQM_GRED, pt.k, n, pt.k + 100);
    double sd = std::sqrt(pt.p * (1 - pt.p) / n);
    EXPECT_NEAR(f, pt.p, 5 * sd) << "level " << pt.k;
    EXPECT_GT(f, prev) << "level " << pt.k;
    prev = f;
  }
}

TEST(LinkemQueue, GentleRedDropsAllAtTwiceMax) {
  sgw_linkem_conf c = Conf(1000000);
  c.aqm = SGW_AQM_GRED;
  c.red_min_bytes = 15000;
  c.red_max_bytes = 45000;
  c.red_wq = 1.0;
  Link l(c);
  uint32_t level = 0;
  while (level < 60)
    if (l.Offer(0, 1500) == SGW_LE_PASS)
      level++;
  for (int i = 0; i < 1000; i++)
    ASSERT_EQ(l.Offer(0, 1500), SGW_LE_DROP_QUEUE);
}

TEST(LinkemQueue, RedAverageIsAnEwmaAndDecaysWhenIdle) {
  sgw_linkem_conf c = Conf(1000000);
  c.aqm = SGW_AQM_RED;
  c.red_min_bytes = 100000000;  // never reached: no drops
  c.red_max_bytes = 200000000;
  c.red_wq = 0.002;
  c.queue_pkts = 100;
  Link l(c);
  // Fill to 20 frames (30000 bytes) at t = 0: the average creeps up.
  for (int i = 0; i < 20; i++)
    ASSERT_EQ(l.Offer(0, 1500), SGW_LE_PASS);
  double avg = 0;
  for (int q = 1; q < 20; q++)  // arrival i sees q = i frames (the first sees none)
    avg += 0.002 * (1500.0 * q - avg);
  EXPECT_NEAR(l.Stats(0).queue_avg_bytes, avg, 1e-6);
  // Hold the queue at 20 frames for 5000 arrivals; each arrives as the head
  // leaves, so it sees 19: avg -> 28500.
  uint64_t t = 0;
  for (int i = 0; i < 5000; i++) {
    t += 12 * kMs;
    ASSERT_EQ(l.Offer(t, 1500), SGW_LE_PASS);
    avg += 0.002 * (28500.0 - avg);
  }
  double held = l.Stats(t).queue_avg_bytes;
  EXPECT_NEAR(held, avg, 1e-9 * avg);
  EXPECT_NEAR(held, 28500.0, 28500.0 * std::pow(0.998, 5000));
  // Let it drain (20 frames, 240 ms), then idle for 1000 frame times (12 s):
  // the next arrival decays the average by 0.998^1000.
  uint64_t idle_from = t + 20 * 12 * kMs;
  ASSERT_EQ(l.Offer(idle_from + 1000 * 12 * kMs, 1500), SGW_LE_PASS);
  EXPECT_NEAR(l.Stats(idle_from + 1000 * 12 * kMs).queue_avg_bytes,
              held * std::pow(0.998, 1000), 1e-6 * held);
}

// -------------------------------------------------------------- loss models

// Frames of len bytes, far enough apart that the line is idle for each.
double LossFraction(const sgw_linkem_conf &c, uint32_t len, uint32_t n, uint64_t seed) {
  Link l(c, seed);
  uint64_t lost = 0;
  for (uint32_t i = 0; i < n; i++) {
    sgw_linkem_verdict v = l.Offer(uint64_t(i) * 10 * kMs, len);
    EXPECT_TRUE(v == SGW_LE_PASS || v == SGW_LE_DROP_LOSS);
    lost += v == SGW_LE_DROP_LOSS;
  }
  sgw_linkem_stats st = l.Stats(uint64_t(n) * 10 * kMs);
  EXPECT_EQ(st.drop_pkts[SGW_LE_DROP_LOSS], lost);
  EXPECT_EQ(st.delivered_pkts + lost, n);
  return double(lost) / n;
}

TEST(LinkemLoss, BitErrorsLoseFramesByLength) {
  sgw_linkem_conf c = Conf(10000000);
  c.loss = SGW_LOSS_BER;
  c.good.ber = 1e-5;
  const uint32_t n = 200000;
  for (uint32_t len : {64u, 512u, 1500u, 9000u}) {
    double p = 1 - std::pow(1 - c.good.ber, 8.0 * len);
    double f = LossFraction(c, len, n, len);
    EXPECT_NEAR(f, p, 5 * std::sqrt(p * (1 - p) / n)) << len << " bytes";
  }
  c.good.ber = 0;
  EXPECT_EQ(LossFraction(c, 1500, 1000, 1), 0.0);
  c.good.ber = 1;
  EXPECT_EQ(LossFraction(c, 1500, 1000, 1), 1.0);
}

TEST(LinkemLoss, RandomLossAtItsProbability) {
  sgw_linkem_conf c = Conf(10000000);
  c.loss = SGW_LOSS_RANDOM;
  const uint32_t n = 200000;
  for (double p : {0.001, 0.01, 0.3}) {
    c.good.p = p;
    double f = LossFraction(c, 1500, n, uint64_t(p * 1000));
    EXPECT_NEAR(f, p, 5 * std::sqrt(p * (1 - p) / n)) << "p " << p;
  }
  c.good.p = 0;
  EXPECT_EQ(LossFraction(c, 1500, 1000, 1), 0.0);
  c.good.p = 1;
  EXPECT_EQ(LossFraction(c, 1500, 1000, 1), 1.0);
}

TEST(LinkemLoss, NoneLosesNothing) {
  EXPECT_EQ(LossFraction(Conf(10000000), 1500, 10000, 1), 0.0);
}

TEST(LinkemLoss, BurstsCountRunsOfChannelLosses) {
  // p = 1 then p = 0 by switching models is not possible; use RANDOM p = 0.5
  // and count runs in the verdicts ourselves.
  sgw_linkem_conf c = Conf(10000000);
  c.loss = SGW_LOSS_RANDOM;
  c.good.p = 0.5;
  Link l(c, 3);
  uint64_t runs = 0;
  bool prev = false;
  for (int i = 0; i < 10000; i++) {
    bool lost = l.Offer(uint64_t(i) * kMs, 100) == SGW_LE_DROP_LOSS;
    runs += lost && !prev;
    prev = lost;
  }
  EXPECT_EQ(l.Stats(10 * kSec).loss_bursts, runs);
  EXPECT_GT(runs, 2000u);
}

// Gilbert-Elliott, analytically. The chain has rates a = 1/mean_good (good ->
// bad) and b = 1/mean_bad; stationary pi_g = mean_g / (mean_g + mean_b),
// pi_b = mean_b / (mean_g + mean_b). Frames start every T; the states seen by
// consecutive frames follow the chain's transition matrix over T:
//   P_gg = pi_g + pi_b e^(-(a+b)T)   P_gb = pi_b (1 - e^(-(a+b)T))
//   P_bb = pi_b + pi_g e^(-(a+b)T)   P_bg = pi_g (1 - e^(-(a+b)T))
// With l_s the loss probability of a frame in state s (1 - (1-p)(1-ber)^(8L)),
// losses are independent given the states, so
//   P(lost)             = pi_g l_g + pi_b l_b                (mean loss rate)
//   P(lost, next lost)  = sum_{s,s'} pi_s l_s P_ss' l_s'.
// A burst starts at every lost frame whose predecessor was not lost; per frame
// that happens with probability P(lost) - P(lost, next lost). The mean burst
// length is lost frames over bursts:
//   E[burst] = P(lost) / (P(lost) - P(lost, next lost)).
// For l_b = 1, l_g = 0 this is 1 / (pi_g (1 - e^(-(a+b)T))) ~ mean_b / T for T
// much shorter than the sojourns: a bad period of mean_b seconds seen by
// frames T apart.
struct GeAnalytic {
  double loss, burst, pi_b;
};

GeAnalytic Analytic(double mg, double mb, double lg, double lb, double T) {
  double pg = mg / (mg + mb), pb = mb / (mg + mb);
  double e = std::exp(-(1 / mg + 1 / mb) * T);
  double Pgg = pg + pb * e, Pgb = pb * (1 - e), Pbb = pb + pg * e, Pbg = pg * (1 - e);
  double pl = pg * lg + pb * lb;
  double pll = pg * lg * (Pgg * lg + Pgb * lb) + pb * lb * (Pbg * lg + Pbb * lb);
  return {pl, pl / (pl - pll), pb};
}

struct GeMeasured {
  double loss, burst, pi_b, mean_good_s, mean_bad_s;
  uint64_t changes;
};

// n frames of 1500 bytes at 1.2 Mbit/s: one every T = 10 ms, each on an idle
// line (start = offer time), so the model samples the chain every 10 ms.
GeMeasured RunGe(const sgw_linkem_conf &c, uint64_t n, uint64_t seed, bool check_state) {
  Link l(c, seed);
  uint64_t lost = 0, mismatch = 0;
  for (uint64_t i = 0; i < n; i++) {
    uint64_t now = i * 10 * kMs;
    sgw_linkem_verdict v = l.Offer(now, 1500);
    lost += v == SGW_LE_DROP_LOSS;
    // With l_b = 1 and l_g = 0, a frame is lost exactly when the chain is bad
    // at its start: the counters' cursor must agree with the frames' one.
    if (check_state && i < 1000000)
      mismatch += (v == SGW_LE_DROP_LOSS) != (l.State(now) == 1);
  }
  EXPECT_EQ(mismatch, 0u);
  uint64_t end = n * 10 * kMs;
  sgw_linkem_stats st = l.Stats(end);
  EXPECT_EQ(st.state_ns[0] + st.state_ns[1], end);
  EXPECT_EQ(st.drop_pkts[SGW_LE_DROP_LOSS], lost);
  GeMeasured m;
  m.loss = double(lost) / n;
  m.burst = double(lost) / double(st.loss_bursts);
  m.pi_b = double(st.state_ns[1]) / end;
  // Sojourns in good: changes/2 + 1 (the chain starts good), bad: changes/2 (+-1).
  m.mean_good_s = double(st.state_ns[0]) / 1e9 / double(st.state_changes / 2 + 1);
  m.mean_bad_s = double(st.state_ns[1]) / 1e9 / double((st.state_changes + 1) / 2);
  m.changes = st.state_changes;
  return m;
}

void ExpectGe(const char *what, const sgw_linkem_conf &c, double lg, double lb,
              bool check_state) {
  const uint64_t n = 10000000;  // 10^5 s of virtual time: ~20000 good/bad cycles
  GeAnalytic a = Analytic(c.good.mean_s, c.bad.mean_s, lg, lb, 0.010);
  GeMeasured m = RunGe(c, n, 2024, check_state);
  std::printf("[ GE %s ] mean_good %.3f s (%.3f) mean_bad %.3f s (%.3f) pi_bad %.4f (%.4f) "
              "loss %.5f (%.5f) burst %.2f frames (%.2f), %llu state changes\n",
              what, m.mean_good_s, c.good.mean_s, m.mean_bad_s, c.bad.mean_s, m.pi_b, a.pi_b,
              m.loss, a.loss, m.burst, a.burst, (unsigned long long)m.changes);
  EXPECT_NEAR(m.loss, a.loss, 0.05 * a.loss) << what;
  EXPECT_NEAR(m.burst, a.burst, 0.05 * a.burst) << what;
  EXPECT_NEAR(m.pi_b, a.pi_b, 0.05 * a.pi_b) << what;
  EXPECT_NEAR(m.mean_good_s, c.good.mean_s, 0.05 * c.good.mean_s) << what;
  EXPECT_NEAR(m.mean_bad_s, c.bad.mean_s, 0.05 * c.bad.mean_s) << what;
}

TEST(LinkemGilbertElliott, AllOrNothingMatchesTheChain) {
  sgw_linkem_conf c = Conf(1200000);  // 1500 bytes: 10 ms
  c.loss = SGW_LOSS_GE;
  c.good = {4.0, 0.0, 0.0};
  c.bad = {1.0, 0.0, 1.0};
  ExpectGe("T_good 4 s, T_bad 1 s, p_bad 1", c, 0.0, 1.0, true);
}

TEST(LinkemGilbertElliott, LossyStatesMatchTheAnalyticValues) {
  sgw_linkem_conf c = Conf(1200000);
  c.loss = SGW_LOSS_GE;
  c.good = {2.5, 0.0, 0.002};   // p only
  c.bad = {0.5, 1e-4, 0.1};     // BER and p together
  double lb = 1 - 0.9 * std::pow(1 - 1e-4, 8.0 * 1500);
  ExpectGe("T_good 2.5 s, T_bad 0.5 s, p_good 0.002, bad ber 1e-4 + p 0.1", c, 0.002, lb,
           false);
}

TEST(LinkemGilbertElliott, StartsGoodAndStateIsZeroForOtherModels) {
  sgw_linkem_conf c = Conf(1200000);
  c.loss = SGW_LOSS_GE;
  c.good = {8.5, 0.0, 0.0};
  c.bad = {0.5, 0.0, 1.0};
  Link l(c, 77);
  EXPECT_EQ(l.State(0), 0);
  Link r(Conf(1200000));
  EXPECT_EQ(r.State(100 * kSec), 0);
  sgw_linkem_stats st = r.Stats(100 * kSec);
  EXPECT_EQ(st.state_ns[0], 100 * kSec);
  EXPECT_EQ(st.state_ns[1], 0u);
  EXPECT_EQ(st.state_changes, 0u);
}

// ------------------------------------------------------------------ outages

bool Overlaps(uint64_t s, uint64_t e, const sgw_outage &o, uint64_t t0, uint64_t horizon) {
  for (uint64_t ws = t0 + o.start_ns; ws < horizon; ws += o.period_ns) {
    if (s < ws + o.dur_ns && e > ws)
      return true;
    if (o.period_ns == 0)
      break;
  }
  return false;
}

TEST(LinkemOutage, DropsExactlyTheFramesWhoseTransmissionOverlaps) {
  const uint64_t t0 = 3 * kSec;
  sgw_linkem_conf c = Conf(1200000);
  c.n_outages = 4;
  c.outages[0] = {10 * kSec, 2 * kSec, 0};                 // once
  c.outages[1] = {30 * kSec, 1 * kSec, 7 * kSec};          // periodic
  c.outages[2] = {5 * kSec + 5 * kMs, 1 * kMs, 0};         // inside one frame
  c.outages[3] = {2 * kSec + 333 * kUs, 10 * kMs, 15 * kSec};  // straddles two
  Link l(c, 1, t0);
  // Frames of random size at random times, each on an idle line.
  uint64_t x = 7, now = t0, horizon = t0 + 200 * kSec, wrong = 0, dropped = 0;
  while (now < horizon - kSec) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    uint32_t len = 60 + uint32_t(x >> 33) % 1441;
    uint64_t end = now + CeilDiv(u128(8 * len) * kSec, c.rate_bps);
    bool want = false;
    for (uint32_t i = 0; i < c.n_outages; i++)
      want = want || Overlaps(now, end, c.outages[i], t0, horizon);
    sgw_linkem_verdict v = l.Offer(now, len);
    wrong += (v == SGW_LE_DROP_OUTAGE) != want;
    dropped += want;
    now = end + (x >> 20) % (3 * kMs);
  }
  EXPECT_EQ(wrong, 0u);
  EXPECT_GT(dropped, 1000u);
  EXPECT_EQ(l.Stats(now).drop_pkts[SGW_LE_DROP_OUTAGE], dropped);
}

TEST(LinkemOutage, LostFramesStillOccupyTheLine) {
  // 1500-byte frames back to back at 1.2 Mbit/s: frame k is on the wire over
  // [10k, 10k + 10) ms. An outage over [10 s, 12 s) takes frames 1000..1199
  // (999 ends at 10 s sharp, 1200 starts at 12 s sharp); every other frame
  // keeps the release time it would have had.
  sgw_linkem_conf c = Conf(1200000);
  c.delay_ns = 270 * kMs;
  c.queue_pkts = 3000;
  c.n_outages = 1;
  c.outages[0] = {10 * kSec, 2 * kSec, 0};
  Link l(c);
  for (uint64_t k = 0; k < 3000; k++) {
    uint64_t rel;
    sgw_linkem_verdict v = l.Offer(0, 1500, &rel);
    if (k >= 1000 && k < 1200) {
      ASSERT_EQ(v, SGW_LE_DROP_OUTAGE) << k;
    } else {
      ASSERT_EQ(v, SGW_LE_PASS) << k;
      ASSERT_EQ(rel, (k + 1) * 10 * kMs + 270 * kMs) << k;
    }
  }
  sgw_linkem_stats st = l.Stats(0);
  EXPECT_EQ(st.drop_pkts[SGW_LE_DROP_OUTAGE], 200u);
  EXPECT_EQ(st.queue_pkts, 3000u);  // the lost ones are in the queue too
}

TEST(LinkemOutage, PeriodicWindowsRepeat) {
  sgw_linkem_conf c = Conf(1200000);
  c.n_outages = 1;
  c.outages[0] = {30 * kSec, 1 * kSec, 60 * kSec};
  Link l(c);
  // One 10 ms frame every 100 ms for 10 minutes: 10 per window, 10 windows.
  uint64_t lost = 0;
  for (uint64_t t = 0; t < 600 * kSec; t += 100 * kMs) {
    bool in = (t >= 30 * kSec) && ((t - 30 * kSec) % (60 * kSec)) < kSec;
    sgw_linkem_verdict v = l.Offer(t, 1500);
    ASSERT_EQ(v == SGW_LE_DROP_OUTAGE, in) << t;
    lost += in;
  }
  EXPECT_EQ(lost, 100u);
}

// -------------------------------------------------------------------- seeds

std::vector<uint64_t> Trace(uint64_t seed, uint64_t jitter_ns) {
  sgw_linkem_conf c = Conf(20000000);
  c.delay_ns = 270 * kMs;
  c.jitter_ns = jitter_ns;
  c.aqm = SGW_AQM_GRED;
  c.red_min_bytes = 30000;
  c.red_max_bytes = 90000;
  c.queue_pkts = 200;
  c.loss = SGW_LOSS_GE;
  c.good = {0.5, 1e-6, 0.001};
  c.bad = {0.1, 1e-4, 0.05};
  Link l(c, seed);
  std::vector<uint64_t> out;
  uint64_t now = 0, x = 1;
  for (int i = 0; i < 100000; i++) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    uint32_t len = 60 + uint32_t(x >> 33) % 1441;
    now += (x >> 24) % (500 * kUs);
    uint64_t rel = 0;
    sgw_linkem_verdict v = l.Offer(now, len, &rel);
    out.push_back(uint64_t(v) << 60 | (v == SGW_LE_PASS ? rel & ((1ull << 60) - 1) : 0));
  }
  return out;
}

TEST(LinkemSeed, SameSeedSameRunOtherSeedOtherRun) {
  std::vector<uint64_t> a = Trace(42, 5 * kMs), b = Trace(42, 5 * kMs), c = Trace(43, 5 * kMs);
  EXPECT_EQ(a, b);
  ASSERT_EQ(a.size(), c.size());
  size_t differ = 0, queue = 0;
  for (size_t i = 0; i < a.size(); i++) {
    differ += a[i] != c[i];
    queue += (a[i] >> 60) == SGW_LE_DROP_QUEUE;
  }
  EXPECT_GT(differ, a.size() / 2);
  EXPECT_GT(queue, 0u);  // the trace exercises the queue too
}

TEST(LinkemSeed, JitterDoesNotChangeTheLossPattern) {
  // Separate random streams: the same seed loses the same frames with or
  // without jitter (the queue and channel do not depend on release times).
  std::vector<uint64_t> a = Trace(9, 0), b = Trace(9, 20 * kMs);
  ASSERT_EQ(a.size(), b.size());
  size_t same_verdicts = 0, same_release = 0;
  for (size_t i = 0; i < a.size(); i++) {
    same_verdicts += (a[i] >> 60) == (b[i] >> 60);
    same_release += a[i] == b[i];
  }
  EXPECT_EQ(same_verdicts, a.size());
  EXPECT_LT(same_release, a.size() / 2);
}

// ------------------------------------------------------- bound, conf, names

TEST(LinkemBound, MaxInFlightFormula) {
  sgw_linkem_conf c = Conf(20000000);
  c.delay_ns = 270 * kMs;
  // 1000 queued + ceil((0.27 s + 1 ns) x 20 Mbit/s / 480 bits) + 1
  EXPECT_EQ(sgw_linkem_max_in_flight(&c, 60), 1000u + 11251u + 1u);
  c.delay_ns = 0;
  EXPECT_EQ(sgw_linkem_max_in_flight(&c, 60), 1000u + 1u + 1u);
  c.rate_bps = 0;
  EXPECT_EQ(sgw_linkem_max_in_flight(&c, 60), 1u);
  c.delay_ns = 1;
  EXPECT_EQ(sgw_linkem_max_in_flight(&c, 60), UINT64_MAX);  // no bound without a rate
  c = Conf(100000000000ull);
  c.delay_ns = c.jitter_ns = SGW_LINKEM_MAX_DELAY_NS;
  c.queue_pkts = SGW_LINKEM_MAX_QUEUE_PKTS;
  // 20 s at 100 Gbit/s in 8-bit frames: 2.5e11 frames, no overflow.
  EXPECT_EQ(sgw_linkem_max_in_flight(&c, 1), 1000000u + 250000000013u + 1u);
  c.overhead_bytes = 0;
  EXPECT_EQ(sgw_linkem_max_in_flight(&c, 0), UINT64_MAX);
}

TEST(LinkemBound, MaxInFlightHoldsInASaturatedRun) {
  sgw_linkem_conf c = Conf(10000000);
  c.delay_ns = 30 * kMs;
  c.jitter_ns = 5 * kMs;
  c.queue_pkts = 500;
  const uint32_t len = 60;
  uint64_t bound = sgw_linkem_max_in_flight(&c, len);
  Link l(c, 8);
  std::deque<uint64_t> held;  // release times of frames between offer and release
  uint64_t most = 0;
  for (uint64_t i = 0; i < 300000; i++) {
    uint64_t now = i * 40 * kUs;  // 48 us on the wire, offered every 40 us: 1.2x
    while (!held.empty() && held.front() <= now)
      held.pop_front();
    uint64_t rel;
    if (l.Offer(now, len, &rel) == SGW_LE_PASS)
      held.push_back(rel);
    most = std::max<uint64_t>(most, held.size());
  }
  EXPECT_LE(most, bound);
  EXPECT_GE(most, bound * 9 / 10);
}

struct BadConf {
  const char *what;
  void (*edit)(sgw_linkem_conf *c);
  const char *reason;  // a word the reason must contain
};

TEST(LinkemConf, CheckRefusesBadConfigsWithAReason) {
  const BadConf bad[] = {
      {"rate too low", [](sgw_linkem_conf *c) { c->rate_bps = 999; }, "rate"},
      {"rate too high", [](sgw_linkem_conf *c) { c->rate_bps = 100000000001ull; }, "rate"},
      {"delay without rate",
       [](sgw_linkem_conf *c) {
         c->rate_bps = 0;
         c->delay_ns = 1;
       },
       "needs a rate"},
      {"jitter without rate",
       [](sgw_linkem_conf *c) {
         c->rate_bps = 0;
         c->jitter_ns = 1;
       },
       "needs a rate"},
      {"delay too long", [](sgw_linkem_conf *c) { c->delay_ns = 10 * kSec + 1; }, "delay"},
      {"jitter too long", [](sgw_linkem_conf *c) { c->jitter_ns = 10 * kSec + 1; }, "jitter"},
      {"overhead", [](sgw_linkem_conf *c) { c->overhead_bytes = 257; }, "overhead"},
      {"queue 0 packets", [](sgw_linkem_conf *c) { c->queue_pkts = 0; }, "packets"},
      {"queue too long", [](sgw_linkem_conf *c) { c->queue_pkts = 1000001; }, "packets"},
      {"queue bytes", [](sgw_linkem_conf *c) { c->queue_bytes = 1000000001; }, "bytes"},
      {"red min >= max",
       [](sgw_linkem_conf *c) {
         c->aqm = SGW_AQM_RED;
         c->red_min_bytes = c->red_max_bytes = 3000;
       },
       "min_bytes"},
      {"red no thresholds", [](sgw_linkem_conf *c) { c->aqm = SGW_AQM_GRED; }, "max_bytes"},
      {"red max_p",
       [](sgw_linkem_conf *c) {
         c->aqm = SGW_AQM_RED;
         c->red_max_bytes = 3000;
         c->red_max_p = 1.5;
       },
       "max_p"},
      {"red wq 0",
       [](sgw_linkem_conf *c) {
         c->aqm = SGW_AQM_RED;
         c->red_max_bytes = 3000;
         c->red_wq = 0;
       },
       "wq"},
      {"red wq nan",
       [](sgw_linkem_conf *c) {
         c->aqm = SGW_AQM_RED;
         c->red_max_bytes = 3000;
         c->red_wq = NAN;
       },
       "wq"},
      {"red without a rate",
       [](sgw_linkem_conf *c) {
         c->rate_bps = 0;
         c->aqm = SGW_AQM_RED;
         c->red_max_bytes = 3000;
       },
       "needs a rate"},
      {"aqm enum", [](sgw_linkem_conf *c) { c->aqm = (sgw_aqm)7; }, "discipline"},
      {"loss enum", [](sgw_linkem_conf *c) { c->loss = (sgw_loss_model)9; }, "loss model"},
      {"ber > 1",
       [](sgw_linkem_conf *c) {
         c->loss = SGW_LOSS_BER;
         c->good.ber = 1.01;
       },
       "ber"},
      {"ber nan",
       [](sgw_linkem_conf *c) {
         c->loss = SGW_LOSS_BER;
         c->good.ber = NAN;
       },
       "ber"},
      {"p < 0",
       [](sgw_linkem_conf *c) {
         c->loss = SGW_LOSS_RANDOM;
         c->good.p = -0.1;
       },
       "p "},
      {"GE without means", [](sgw_linkem_conf *c) { c->loss = SGW_LOSS_GE; }, "mean_s"},
      {"GE bad mean too short",
       [](sgw_linkem_conf *c) {
         c->loss = SGW_LOSS_GE;
         c->good.mean_s = 1;
         c->bad.mean_s = 1e-5;
       },
       "bad state"},
      {"GE bad ber",
       [](sgw_linkem_conf *c) {
         c->loss = SGW_LOSS_GE;
         c->good.mean_s = c->bad.mean_s = 1;
         c->bad.ber = 2;
       },
       "bad state: ber"},
      {"too many outages", [](sgw_linkem_conf *c) { c->n_outages = 17; }, "outages"},
      {"outage of 0 s",
       [](sgw_linkem_conf *c) {
         c->n_outages = 1;
         c->outages[0] = {1, 0, 0};
       },
       "duration"},
      {"period <= duration",
       [](sgw_linkem_conf *c) {
         c->n_outages = 2;
         c->outages[0] = {1, 1, 0};
         c->outages[1] = {kSec, kSec, kSec};
       },
       "outage 2: every_s"},
      {"outage too late",
       [](sgw_linkem_conf *c) {
         c->n_outages = 1;
         c->outages[0] = {SGW_LINKEM_MAX_OUTAGE_NS + 1, 1, 0};
       },
       "at most"},
  };
  sgw_linkem_conf good = Conf(1000000);
  char why[200] = "untouched";
  EXPECT_EQ(sgw_linkem_conf_check(&good, why, sizeof(why)), 0);
  EXPECT_STREQ(why, "untouched");
  for (const BadConf &b : bad) {
    sgw_linkem_conf c = Conf(1000000);
    b.edit(&c);
    why[0] = '\0';
    EXPECT_EQ(sgw_linkem_conf_check(&c, why, sizeof(why)), -1) << b.what;
    EXPECT_NE(std::string(why).find(b.reason), std::string::npos)
        << b.what << ": '" << why << "' lacks '" << b.reason << "'";
    EXPECT_EQ(sgw_linkem_create(&c, 1, 0), nullptr) << b.what;
    // A NULL or short buffer is fine.
    EXPECT_EQ(sgw_linkem_conf_check(&c, nullptr, 0), -1);
    char tiny[4];
    EXPECT_EQ(sgw_linkem_conf_check(&c, tiny, sizeof(tiny)), -1);
    EXPECT_EQ(std::string(tiny).size(), 3u);
  }
  EXPECT_EQ(sgw_linkem_conf_check(nullptr, why, sizeof(why)), -1);
}

TEST(LinkemConf, DefaultsAndNames) {
  sgw_linkem_conf c;
  sgw_linkem_conf_init(&c);
  EXPECT_EQ(c.rate_bps, 0u);
  EXPECT_EQ(c.queue_pkts, 1000u);
  EXPECT_EQ(c.aqm, SGW_AQM_DROPTAIL);
  EXPECT_EQ(c.red_wq, 0.002);
  EXPECT_EQ(c.red_max_p, 0.1);
  EXPECT_EQ(c.loss, SGW_LOSS_NONE);
  EXPECT_EQ(sgw_linkem_conf_check(&c, nullptr, 0), 0);
  EXPECT_STREQ(sgw_linkem_verdict_name(SGW_LE_PASS), "pass");
  EXPECT_STREQ(sgw_linkem_verdict_name(SGW_LE_DROP_QUEUE), "queue");
  EXPECT_STREQ(sgw_linkem_verdict_name(SGW_LE_DROP_LOSS), "loss");
  EXPECT_STREQ(sgw_linkem_verdict_name(SGW_LE_DROP_OUTAGE), "outage");
  EXPECT_STREQ(sgw_linkem_verdict_name(SGW_LE__COUNT), "?");
  EXPECT_STREQ(sgw_aqm_name(SGW_AQM_GRED), "gred");
  EXPECT_STREQ(sgw_loss_model_name(SGW_LOSS_GE), "gilbert-elliott");
  EXPECT_STREQ(sgw_loss_model_name(SGW_LOSS_BER), "ber");
}

TEST(LinkemStats, CountersAddUp) {
  sgw_linkem_conf c = Conf(5000000);
  c.queue_pkts = 50;
  c.loss = SGW_LOSS_RANDOM;
  c.good.p = 0.1;
  c.n_outages = 1;
  c.outages[0] = {1 * kSec, 100 * kMs, 2 * kSec};
  Link l(c, 11);
  uint64_t now = 0, x = 3, bytes = 0, n = 0;
  for (int i = 0; i < 50000; i++) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    uint32_t len = 60 + uint32_t(x >> 33) % 1441;
    now += (x >> 24) % (2 * kMs);
    l.Offer(now, len);
    bytes += len;
    n++;
  }
  sgw_linkem_stats st = l.Stats(now);
  EXPECT_EQ(st.offered_pkts, n);
  EXPECT_EQ(st.offered_bytes, bytes);
  EXPECT_EQ(st.delivered_pkts + st.drop_pkts[SGW_LE_DROP_QUEUE] +
                st.drop_pkts[SGW_LE_DROP_LOSS] + st.drop_pkts[SGW_LE_DROP_OUTAGE],
            n);
  EXPECT_EQ(st.delivered_bytes + st.drop_bytes[SGW_LE_DROP_QUEUE] +
                st.drop_bytes[SGW_LE_DROP_LOSS] + st.drop_bytes[SGW_LE_DROP_OUTAGE],
            bytes);
  EXPECT_GT(st.drop_pkts[SGW_LE_DROP_QUEUE], 0u);
  EXPECT_GT(st.drop_pkts[SGW_LE_DROP_LOSS], 0u);
  EXPECT_GT(st.drop_pkts[SGW_LE_DROP_OUTAGE], 0u);
  EXPECT_EQ(st.drop_pkts[SGW_LE_PASS], 0u);
  EXPECT_EQ(st.queue_pkts_max, 50u);
  EXPECT_EQ(st.state_ns[0], now);
  // Long after, the queue is empty.
  st = l.Stats(now + 10 * kSec);
  EXPECT_EQ(st.queue_pkts, 0u);
  EXPECT_EQ(st.queue_bytes, 0u);
}

}  // namespace
