// SPDX-License-Identifier: BSD-3-Clause
// Tests of lib/sgw_relay.c: the relay-buffer FIFO and the receive-window
// control schemes (RWND, PETRA, ACKRES; seed 003), in virtual time.
//
// Part 1: the FIFO (wrap, zero-copy spans, refusals) against a reference
// deque. Part 2: the window rules one at a time (scale rounding, no
// retraction, SWS, anti-freeze, PETRA withholding, the ACKRES estimator).
// Part 3 (RelayModel*): a model of the whole seed-003 path: a Reno sender
// over a 2 Mbit/s, 100 ms RTT wired leg into the relay, drained by a
// selective-repeat ARQ over a 512 kbit/s, 500 ms RTT satellite leg with
// losses and outages; run over many seeds per scheme.

#include <gtest/gtest.h>

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <queue>
#include <string>
#include <vector>

#include "sgw_relay.h"

namespace {

constexpr uint64_t kUs = 1000;
constexpr uint64_t kMs = 1000 * kUs;
constexpr uint64_t kSec = 1000 * kMs;

struct Rng {
	uint64_t s;
	explicit Rng(uint64_t seed) : s(seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull) {}
	uint64_t Next()
	{
		uint64_t z = (s += 0x9E3779B97F4A7C15ull);
		z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
		z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
		return z ^ (z >> 31);
	}
	double Uni() { return static_cast<double>(Next() >> 11) * (1.0 / 9007199254740992.0); }
	uint64_t Range(uint64_t lo, uint64_t hi) { return lo + Next() % (hi - lo + 1); }
	bool Chance(double p) { return p > 0 && Uni() < p; }
};

uint8_t
StreamByte(uint64_t i)
{
	return static_cast<uint8_t>(i * 131u + (i >> 8) + 7u);
}

// ------------------------------------------------------------------ FIFO

TEST(RelayFifo, InitRejectsBadGeometry)
{
	std::vector<uint8_t> mem(1024);
	sgw_relay r;
	EXPECT_EQ(sgw_relay_init(&r, mem.data(), 1000, 1000), -EINVAL);  // not a power of 2
	EXPECT_EQ(sgw_relay_init(&r, mem.data(), 32, 32), -EINVAL);      // below the minimum
	EXPECT_EQ(sgw_relay_init(&r, mem.data(), 1024, 0), -EINVAL);
	EXPECT_EQ(sgw_relay_init(&r, mem.data(), 1024, 1025), -EINVAL);
	EXPECT_EQ(sgw_relay_init(&r, nullptr, 1024, 1024), -EINVAL);
	EXPECT_EQ(sgw_relay_init(&r, mem.data(), 1024, 1000), 0);
	EXPECT_EQ(sgw_relay_used(&r), 0u);
	EXPECT_EQ(sgw_relay_free(&r), 1000u);
}

TEST(RelayFifo, WrapSpansAndContent)
{
	std::vector<uint8_t> mem(64, 0xEE);
	sgw_relay r;
	ASSERT_EQ(sgw_relay_init(&r, mem.data(), 64, 64), 0);
	uint8_t src[64];
	for (int i = 0; i < 64; i++)
		src[i] = StreamByte(i);
	ASSERT_EQ(sgw_relay_write(&r, src, 40), 0);
	EXPECT_EQ(sgw_relay_consume(&r, 30), 30u);
	// 50 more bytes: 24 to the ring's end, 26 from its start.
	uint8_t src2[50];
	for (int i = 0; i < 50; i++)
		src2[i] = StreamByte(40 + i);
	ASSERT_EQ(sgw_relay_write(&r, src2, 50), 0);
	EXPECT_EQ(sgw_relay_used(&r), 60u);
	EXPECT_EQ(sgw_relay_free(&r), 4u);
	EXPECT_EQ(r.occ_max, 60u);
	const uint8_t *p;
	uint32_t n1 = sgw_relay_peek(&r, 0, &p);
	EXPECT_EQ(n1, 34u);  // head at 30: bytes 30..63 of the ring
	EXPECT_EQ(p, mem.data() + 30);
	for (uint32_t i = 0; i < n1; i++)
		EXPECT_EQ(p[i], StreamByte(30 + i));
	uint32_t n2 = sgw_relay_peek(&r, n1, &p);
	EXPECT_EQ(n2, 26u);
	EXPECT_EQ(p, mem.data());
	for (uint32_t i = 0; i < n2; i++)
		EXPECT_EQ(p[i], StreamByte(30 + n1 + i));
	EXPECT_EQ(sgw_relay_peek(&r, 60, &p), 0u);
	uint8_t out[64];
	EXPECT_EQ(sgw_relay_read(&r, 10, out, 64), 50u);
	for (int i = 0; i < 50; i++)
		EXPECT_EQ(out[i], StreamByte(40 + i));
}

TEST(RelayFifo, RefusalIsWholeAndCounted)
{
	std::vector<uint8_t> mem(128);
	sgw_relay r;
	ASSERT_EQ(sgw_relay_init(&r, mem.data(), 128, 100), 0);  // limit below the ring
	std::vector<uint8_t> src(200, 1);
	ASSERT_EQ(sgw_relay_write(&r, src.data(), 60), 0);
	EXPECT_EQ(sgw_relay_write(&r, src.data(), 41), -ENOSPC);
	EXPECT_EQ(r.overflows, 1u);
	EXPECT_EQ(sgw_relay_used(&r), 60u);  // nothing of it was written
	EXPECT_EQ(sgw_relay_write(&r, src.data(), 40), 0);
	EXPECT_EQ(sgw_relay_free(&r), 0u);
	EXPECT_EQ(sgw_relay_write(&r, src.data(), 1), -ENOSPC);
	EXPECT_EQ(r.overflows, 2u);
	EXPECT_EQ(sgw_relay_write(&r, src.data(), 0), 0);  // empty write fits
	EXPECT_EQ(r.in_bytes, 100u);
}

TEST(RelayFifo, WriteSpanCommitAndBadCalls)
{
	std::vector<uint8_t> mem(64);
	sgw_relay r;
	ASSERT_EQ(sgw_relay_init(&r, mem.data(), 64, 64), 0);
	uint8_t *w;
	EXPECT_EQ(sgw_relay_write_span(&r, &w), 64u);
	EXPECT_EQ(w, mem.data());
	memset(w, 0xAB, 50);
	ASSERT_EQ(sgw_relay_commit(&r, 50), 0);
	EXPECT_EQ(sgw_relay_commit(&r, 15), -ENOSPC);  // only 14 free
	EXPECT_EQ(r.bad_calls, 1u);
	EXPECT_EQ(sgw_relay_consume(&r, 40), 40u);
	// Free: 14 bytes at the end of the ring, then 40 at its start.
	EXPECT_EQ(sgw_relay_write_span(&r, &w), 14u);
	EXPECT_EQ(w, mem.data() + 50);
	ASSERT_EQ(sgw_relay_commit(&r, 14), 0);
	EXPECT_EQ(sgw_relay_write_span(&r, &w), 40u);
	EXPECT_EQ(w, mem.data());
	EXPECT_EQ(sgw_relay_consume(&r, 100), 24u);  // clamped to what is held
	EXPECT_EQ(r.bad_calls, 2u);
	EXPECT_EQ(sgw_relay_used(&r), 0u);
}

// The FIFO against a reference deque: random writes (some too big), span
// writes, consumes and reads, across many wraps of a ring with limit < size.
TEST(RelayFifo, RandomAgainstReference)
{
	for (uint64_t seed = 1; seed <= 50; seed++) {
		Rng rng(seed);
		const uint32_t ring = 256;
		const uint32_t limit = static_cast<uint32_t>(rng.Range(1, ring));
		std::vector<uint8_t> mem(ring);
		sgw_relay r;
		ASSERT_EQ(sgw_relay_init(&r, mem.data(), ring, limit), 0);
		std::deque<uint8_t> ref;
		uint64_t wr = 0, refused = 0, maxocc = 0;
		for (int op = 0; op < 5000; op++) {
			uint32_t k = static_cast<uint32_t>(rng.Range(0, 3));
			if (k == 0) {
				uint32_t len = static_cast<uint32_t>(rng.Range(0, limit + 10));
				std::vector<uint8_t> b(len);
				for (uint32_t i = 0; i < len; i++)
					b[i] = StreamByte(wr + i);
				int rc = sgw_relay_write(&r, b.data(), len);
				if (len > limit - ref.size()) {
					ASSERT_EQ(rc, -ENOSPC);
					refused++;
				} else {
					ASSERT_EQ(rc, 0);
					ref.insert(ref.end(), b.begin(), b.end());
					wr += len;
				}
			} else if (k == 1) {
				uint8_t *w;
				uint32_t span = sgw_relay_write_span(&r, &w);
				ASSERT_LE(span, limit - ref.size());
				uint32_t n = static_cast<uint32_t>(rng.Range(0, span));
				for (uint32_t i = 0; i < n; i++)
					w[i] = StreamByte(wr + i);
				ASSERT_EQ(sgw_relay_commit(&r, n), 0);
				for (uint32_t i = 0; i < n; i++)
					ref.push_back(StreamByte(wr + i));
				wr += n;
			} else if (k == 2) {
				uint32_t n = static_cast<uint32_t>(rng.Range(0, ref.size()));
				ASSERT_EQ(sgw_relay_consume(&r, n), n);
				ref.erase(ref.begin(), ref.begin() + n);
			} else {
				uint32_t off = static_cast<uint32_t>(rng.Range(0, ref.size()));
				uint8_t out[300];
				uint32_t n = sgw_relay_read(&r, off, out, sizeof(out));
				ASSERT_EQ(n, ref.size() - off);
				for (uint32_t i = 0; i < n; i++)
					ASSERT_EQ(out[i], ref[off + i]);
			}
			maxocc = std::max<uint64_t>(maxocc, ref.size());
			ASSERT_EQ(sgw_relay_used(&r), ref.size());
		}
		EXPECT_EQ(r.overflows, refused);
		EXPECT_EQ(r.occ_max, maxocc);
		EXPECT_EQ(r.bad_calls, 0u);
	}
}

// --------------------------------------------------------- window rules

struct Ctl {
	std::vector<uint8_t> mem;
	sgw_relay r{};
	sgw_rwc c{};
	uint32_t rcv_nxt;
	std::vector<uint8_t> junk;

	Ctl(const sgw_rwc_conf &conf, uint32_t ring, uint32_t limit, uint32_t isn = 1000)
	    : mem(ring), rcv_nxt(isn), junk(ring, 0x5A)
	{
		EXPECT_EQ(sgw_relay_init(&r, mem.data(), ring, limit), 0);
		EXPECT_EQ(sgw_rwc_init(&c, &conf, &r, isn, 0), 0);
	}
	// In-order data in, in segments of at most 1000 bytes: written, then
	// the control told.
	bool Data(uint32_t len, uint64_t now, uint64_t echo = 0)
	{
		while (len > 0) {
			uint32_t n = std::min<uint32_t>(len, 1000);
			if (sgw_relay_write(&r, junk.data(), n) != 0)
				return false;
			sgw_rwc_data(&c, &r, now, rcv_nxt, n, echo);
			rcv_nxt += n;
			len -= n;
		}
		return true;
	}
	int Ack(uint64_t now, sgw_rwc_out *a) { return sgw_rwc_ack(&c, &r, now, rcv_nxt, a); }
	int Drain(uint32_t n, uint64_t now, sgw_rwc_out *a)
	{
		sgw_relay_consume(&r, n);
		return sgw_rwc_drain(&c, &r, now, rcv_nxt, a);
	}
	int Timer(uint64_t now, sgw_rwc_out *a) { return sgw_rwc_timer(&c, &r, now, rcv_nxt, a); }
};

sgw_rwc_conf
Conf(int scheme, uint8_t wscale = 0, uint16_t mss = 1000)
{
	sgw_rwc_conf c;
	sgw_rwc_conf_default(&c);
	c.scheme = static_cast<uint8_t>(scheme);
	c.wscale = wscale;
	c.mss = mss;
	return c;
}

TEST(RelayWindow, ConfCheckAndInit)
{
	sgw_rwc_conf c = Conf(SGW_RWC_RWND);
	EXPECT_EQ(sgw_rwc_conf_check(&c), nullptr);
	c.wscale = 15;
	EXPECT_STREQ(sgw_rwc_conf_check(&c), "wscale");
	c = Conf(SGW_RWC_RWND);
	c.scheme = 9;
	EXPECT_STREQ(sgw_rwc_conf_check(&c), "scheme");
	c = Conf(SGW_RWC_RWND);
	c.rto_init_ns = 10;
	EXPECT_STREQ(sgw_rwc_conf_check(&c), "rto_init_ns");

	std::vector<uint8_t> mem(1 << 17);
	sgw_relay r;
	sgw_rwc w;
	ASSERT_EQ(sgw_relay_init(&r, mem.data(), 1 << 17, 82000), 0);
	c = Conf(SGW_RWC_RWND, 0);
	EXPECT_EQ(sgw_rwc_init(&w, &c, &r, 0, 0), -EINVAL);  // 82000 > 65535 << 0
	c.wscale = 1;
	EXPECT_EQ(sgw_rwc_init(&w, &c, &r, 0, 0), 0);
	c = Conf(SGW_RWC_PETRA, 1);
	c.b_th = 82000;  // threshold must be below the buffer
	EXPECT_EQ(sgw_rwc_init(&w, &c, &r, 0, 0), -EINVAL);
	c.b_th = 7000;
	EXPECT_EQ(sgw_rwc_init(&w, &c, &r, 0, 0), 0);
	EXPECT_STREQ(w.ops->name, "petra");
	EXPECT_STREQ(sgw_rwc_scheme_name(SGW_RWC_ACKRES), "ackres");
	EXPECT_STREQ(sgw_rwc_scheme_name(7), "?");
}

TEST(RelayWindow, RwndAdvertisesFreeSpace)
{
	Ctl t(Conf(SGW_RWC_RWND, 0), 1 << 14, 10000);
	sgw_rwc_out a;
	ASSERT_EQ(t.Ack(0, &a), 1);
	EXPECT_EQ(a.ack, 1000u);
	EXPECT_EQ(a.wnd, 10000u);
	ASSERT_TRUE(t.Data(3000, 1));
	ASSERT_EQ(t.Ack(1, &a), 1);
	EXPECT_EQ(a.ack, 4000u);
	EXPECT_EQ(a.wnd, 7000u);  // right edge stays at 11000
	EXPECT_EQ(t.c.st.acks_sent, 2u);
	EXPECT_EQ(t.c.st.zero_windows, 0u);
}

TEST(RelayWindow, ScaleRoundsDown)
{
	Ctl t(Conf(SGW_RWC_RWND, 7), 1 << 17, 82000);
	sgw_rwc_out a;
	ASSERT_EQ(t.Ack(0, &a), 1);
	EXPECT_EQ(a.wnd, 82000u >> 7);  // 640 units = 81920 bytes: never above free space
	EXPECT_LE(static_cast<uint32_t>(a.wnd) << 7, sgw_relay_free(&t.r));
	ASSERT_TRUE(t.Data(1000, 1));
	ASSERT_EQ(t.Ack(1, &a), 1);
	// Free 81000: 632 units (80896). The edge 1000+1000+80896 = 82896 is below the
	// 82920 advertised before: a rounding retraction of 24 bytes (< 128), counted.
	EXPECT_EQ(a.wnd, 632u);
	EXPECT_EQ(t.c.st.scale_retractions, 1u);
}

// Property: over random traffic, the advertised edge never passes the true
// edge (every allowed byte fits) and never moves left by a whole scale unit;
// without scaling it never moves left at all.
TEST(RelayWindow, EdgeNeverPassesFreeSpaceNorRetracts)
{
	for (uint8_t ws : {0, 2, 7}) {
		for (uint64_t seed = 1; seed <= 30; seed++) {
			Rng rng(seed * 31 + ws);
			uint32_t limit = ws == 0 ? 60000 : 82000;
			Ctl t(Conf(SGW_RWC_RWND, ws, 1000), 1 << 17, limit,
			      static_cast<uint32_t>(rng.Next()));
			sgw_rwc_out a;
			ASSERT_EQ(t.Ack(0, &a), 1);
			uint32_t edge = a.ack + (static_cast<uint32_t>(a.wnd) << ws);
			uint64_t now = 0;
			for (int op = 0; op < 3000; op++) {
				now += rng.Range(1, 5) * kMs;
				int k = static_cast<int>(rng.Range(0, 2));
				if (k == 0) {
					// The sender sends what the window allows, in pieces.
					uint32_t room = edge - t.rcv_nxt;
					uint32_t len = static_cast<uint32_t>(
					    rng.Range(0, std::min<uint32_t>(room, 1500)));
					ASSERT_TRUE(t.Data(len, now)) << "allowed data did not fit";
				} else if (k == 1) {
					t.Drain(static_cast<uint32_t>(rng.Range(0, 3000)), now, &a);
				}
				if (t.Ack(now, &a) != 1)
					continue;
				uint32_t ne = a.ack + (static_cast<uint32_t>(a.wnd) << ws);
				uint32_t h = t.rcv_nxt + sgw_relay_free(&t.r);
				ASSERT_LE(static_cast<int32_t>(ne - h), 0);
				int32_t back = static_cast<int32_t>(edge - ne);
				if (ws == 0) {
					ASSERT_LE(back, 0);
				} else {
					ASSERT_LT(back, 1 << ws);
				}
				if (static_cast<int32_t>(ne - edge) > 0)
					edge = ne;
			}
			if (ws == 0) {
				EXPECT_EQ(t.c.st.scale_retractions, 0u);
			}
			EXPECT_EQ(t.r.overflows, 0u);
		}
	}
}

TEST(RelayWindow, SwsAndAntiFreeze)
{
	sgw_rwc_conf conf = Conf(SGW_RWC_RWND, 0, 1000);
	conf.update_on_drain = 0;  // the seed's scheme: the periodic check only
	conf.freeze_check_ns = 200 * kMs;
	Ctl t(conf, 1 << 14, 10000);
	sgw_rwc_out a;
	ASSERT_EQ(t.Ack(0, &a), 1);
	ASSERT_TRUE(t.Data(10000, 10 * kMs));
	ASSERT_EQ(t.Ack(10 * kMs, &a), 1);
	EXPECT_EQ(a.wnd, 0u);
	EXPECT_EQ(t.c.st.zero_windows, 1u);
	EXPECT_EQ(sgw_rwc_timer_at(&t.c), 210 * kMs);  // freeze: "arm at T"
	// Early fire: nothing.
	EXPECT_EQ(t.Timer(100 * kMs, &a), 0);
	// Due, still full: nothing sent, checked again one period later.
	EXPECT_EQ(t.Timer(210 * kMs, &a), 0);
	EXPECT_EQ(sgw_rwc_timer_at(&t.c), 410 * kMs);
	// 500 bytes free: below min(MSS, limit / 2) = 1000, still a zero window.
	EXPECT_EQ(t.Drain(500, 300 * kMs, &a), 0);
	EXPECT_EQ(t.Timer(410 * kMs, &a), 0);
	ASSERT_EQ(t.Ack(420 * kMs, &a), 1);  // e.g. answering a zero-window probe
	EXPECT_EQ(a.wnd, 0u);
	EXPECT_EQ(t.c.st.sws_holds, 1u);
	// 1200 free: the check sends a window update and keeps checking.
	EXPECT_EQ(t.Drain(700, 500 * kMs, &a), 0);  // update_on_drain off
	ASSERT_EQ(t.Timer(610 * kMs, &a), 1);
	EXPECT_EQ(a.ack, 11000u);
	EXPECT_EQ(a.wnd, 1200u);
	EXPECT_EQ(t.c.st.anti_freeze, 1u);
	EXPECT_EQ(sgw_rwc_timer_at(&t.c), 810 * kMs);
	// Update lost: the next check sends it again (a forced duplicate ACK).
	ASSERT_EQ(t.Timer(810 * kMs, &a), 1);
	EXPECT_EQ(t.c.st.anti_freeze, 2u);
	// New data ends the freeze state: no more timer.
	ASSERT_TRUE(t.Data(1000, 900 * kMs));
	EXPECT_EQ(sgw_rwc_timer_at(&t.c), SGW_RWC_NEVER);
	EXPECT_EQ(t.Timer(1010 * kMs, &a), 0);
	EXPECT_EQ(t.c.st.anti_freeze, 2u);
}

TEST(RelayWindow, DrainReopensZeroWindowOnce)
{
	Ctl t(Conf(SGW_RWC_RWND, 0, 1000), 1 << 14, 10000);
	sgw_rwc_out a;
	ASSERT_TRUE(t.Data(10000, 1));
	ASSERT_EQ(t.Ack(1, &a), 1);
	ASSERT_EQ(a.wnd, 0u);
	EXPECT_EQ(t.Drain(999, 2, &a), 0);  // below the SWS unit
	ASSERT_EQ(t.Drain(1, 3, &a), 1);
	EXPECT_EQ(a.wnd, 1000u);
	EXPECT_EQ(t.c.st.drain_updates, 1u);
	EXPECT_EQ(t.Drain(4000, 4, &a), 0);  // the window is open: ACKs carry the rest
	EXPECT_EQ(t.c.st.drain_updates, 1u);
	// Still frozen (no data yet): the periodic check stays armed as the safety net.
	EXPECT_NE(sgw_rwc_timer_at(&t.c), SGW_RWC_NEVER);
}

TEST(RelayWindow, BadInputCounted)
{
	Ctl t(Conf(SGW_RWC_RWND, 0, 1000), 1 << 14, 10000);
	sgw_rwc_out a;
	ASSERT_EQ(t.Ack(0, &a), 1);
	ASSERT_EQ(sgw_rwc_ack(&t.c, &t.r, 1, 500, &a), 1);  // rcv_nxt backwards
	EXPECT_EQ(t.c.st.bad_input, 1u);
	EXPECT_EQ(a.ack, 1000u);  // the last good value is used
	ASSERT_EQ(sgw_rwc_ack(&t.c, &t.r, 1, 1000u + (1u << 31), &a), 1);
	EXPECT_EQ(t.c.st.bad_input, 2u);
}

TEST(RelayWindow, PetraWithholdsAboveThreshold)
{
	sgw_rwc_conf conf = Conf(SGW_RWC_PETRA, 0, 1000);
	conf.b_th = 3000;
	Ctl t(conf, 1 << 14, 10000);
	sgw_rwc_out a;
	ASSERT_TRUE(t.Data(3000, 1));
	ASSERT_EQ(t.Ack(1, &a), 1);
	EXPECT_EQ(a.wnd, 10000u);  // static window, whatever the occupancy
	ASSERT_TRUE(t.Data(1000, 2));
	EXPECT_EQ(t.Ack(2, &a), 0);
	ASSERT_TRUE(t.Data(1000, 3));
	EXPECT_EQ(t.Ack(3, &a), 0);
	EXPECT_EQ(t.c.st.withheld, 2u);
	EXPECT_EQ(sgw_rwc_timer_at(&t.c), SGW_RWC_NEVER);  // PETRA has no timer
	EXPECT_EQ(t.Drain(1000, 4, &a), 0);                // 4000 > b_th
	ASSERT_EQ(t.Drain(1000, 5, &a), 1);                // back at b_th: restored
	EXPECT_EQ(a.ack, 6000u);
	EXPECT_EQ(t.Drain(1000, 6, &a), 0);  // once
	EXPECT_EQ(t.c.st.acks_sent, 2u);
}

TEST(RelayWindow, AckresEstimatorAndRefresh)
{
	sgw_rwc_conf conf = Conf(SGW_RWC_ACKRES, 0, 1000);
	conf.b_th = 1500;
	conf.rto_min_ns = 200 * kMs;
	conf.rto_init_ns = 1 * kSec;
	Ctl t(conf, 1 << 15, 20000);
	sgw_rwc_out a;
	EXPECT_EQ(sgw_rwc_rto_estimate(&t.c), 1 * kSec);
	// RTT samples of 100 ms from timestamp echoes, one per SRTT.
	uint64_t now = 1 * kSec;
	for (int i = 0; i < 3; i++) {
		ASSERT_TRUE(t.Data(1000, now + 100 * kMs, now));
		now += 100 * kMs;
		ASSERT_EQ(t.Ack(now, &a), 1);
		t.Drain(1000, now, &a);
	}
	EXPECT_EQ(t.c.st.rtt_samples, 3u);
	// RFC 6298: srtt 100 ms, rttvar 50 -> 37.5 -> 28.125 ms; rto = 100 + 4 * 28.125.
	EXPECT_EQ(t.c.srtt, 100 * kMs);
	EXPECT_EQ(t.c.rttvar, 28125 * kUs);
	EXPECT_EQ(sgw_rwc_rto_estimate(&t.c), 100 * kMs + 4 * 28125 * kUs);
	// A sample inside the same SRTT is not taken.
	ASSERT_TRUE(t.Data(1000, now + 50 * kMs, now));
	EXPECT_EQ(t.c.st.rtt_samples, 3u);
	now += 50 * kMs;
	ASSERT_EQ(t.Ack(now, &a), 1);  // 1000 held: not above b_th
	uint64_t t_adv = now;
	uint32_t x = a.ack;
	// Fill above b_th: ACKs stop; the refresh is due at t_adv + rto - srtt / 2.
	for (int i = 0; i < 4; i++) {
		ASSERT_TRUE(t.Data(1000, now + kMs, now));
		now += kMs;
		EXPECT_EQ(t.Ack(now, &a), 0);
	}
	uint64_t due = t_adv + 100 * kMs + 4 * 28125 * kUs - 50 * kMs;
	EXPECT_EQ(sgw_rwc_timer_at(&t.c), due);
	EXPECT_EQ(t.Timer(due - 1, &a), 0);
	ASSERT_EQ(t.Timer(due, &a), 1);
	EXPECT_EQ(a.ack, x + 1000);  // "ACK x + 1": one segment
	EXPECT_EQ(a.wnd, 20000u);
	EXPECT_EQ(t.c.st.rto_refreshes, 1u);
	EXPECT_EQ(sgw_rwc_timer_at(&t.c), due + 100 * kMs + 4 * 28125 * kUs - 50 * kMs);
	// A retransmission seen while withholding: the sender backed off, RTO doubled.
	uint64_t before = sgw_rwc_rto_estimate(&t.c);
	sgw_rwc_data(&t.c, &t.r, due + 1, x, 1000, 0);
	EXPECT_EQ(t.c.st.dup_segments, 1u);
	EXPECT_EQ(sgw_rwc_rto_estimate(&t.c), 2 * before);
	// Drained to b_th: flow restored, timer off.
	EXPECT_EQ(t.Drain(3000, due + 2, &a), 0);  // 2000 held: still above b_th
	ASSERT_EQ(t.Drain(1000, due + 3, &a), 1);
	EXPECT_EQ(a.ack, t.rcv_nxt);
	EXPECT_EQ(sgw_rwc_timer_at(&t.c), SGW_RWC_NEVER);
}

TEST(RelayWindow, AckresBiasShiftsRefresh)
{
	sgw_rwc_conf conf = Conf(SGW_RWC_ACKRES, 0, 1000);
	conf.b_th = 1000;
	conf.rto_bias_ns = -300 * static_cast<int64_t>(kMs);
	Ctl t(conf, 1 << 15, 20000);
	EXPECT_EQ(sgw_rwc_rto_estimate(&t.c), 700 * kMs);
	conf.rto_bias_ns = -2 * static_cast<int64_t>(kSec);
	Ctl u(conf, 1 << 15, 20000);
	EXPECT_EQ(sgw_rwc_rto_estimate(&u.c), 0u);  // clamped, never negative
}

}  // namespace
