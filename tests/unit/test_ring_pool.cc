// SPDX-License-Identifier: BSD-3-Clause
// Tests of lib/sgw_ring.h (the bounded index FIFO every queue uses),
// lib/sgw_pool.[ch] (per-worker object pools by 32-bit index) and
// lib/sgw_tev.h (an object's timers by id on the timer wheel).

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <deque>
#include <map>
#include <random>
#include <set>
#include <vector>

#include "sgw_pool.h"
#include "sgw_ring.h"
#include "sgw_tev.h"
#include "sgw_timer_wheel.h"

namespace {

// ---------------------------------------------------------------- ring

TEST(Ring, FifoOrderAcrossWrapAtEveryCapacity)
{
	for (uint32_t cap : {1u, 2u, 3u, 7u, 64u, 1000u}) {
		std::vector<int> slots(cap, -1);
		sgw_ring r;
		sgw_ring_init(&r, cap);
		std::deque<int> model;
		std::mt19937 rng(cap);
		int next = 0;
		for (int step = 0; step < 20000; step++) {
			bool push = (rng() & 1) != 0;
			if (push && !sgw_ring_full(&r)) {
				slots[sgw_ring_push(&r)] = next;
				model.push_back(next++);
			} else if (!sgw_ring_empty(&r)) {
				ASSERT_EQ(slots[sgw_ring_head(&r)], model.front());
				ASSERT_EQ(slots[sgw_ring_pop(&r)], model.front());
				model.pop_front();
			}
			ASSERT_EQ(sgw_ring_count(&r), model.size());
			ASSERT_EQ(sgw_ring_room(&r), cap - model.size());
			ASSERT_EQ(sgw_ring_full(&r), model.size() == cap);
			for (uint32_t k = 0; k < sgw_ring_count(&r); k++)
				ASSERT_EQ(slots[sgw_ring_at(&r, k)], model[k]) << cap;
		}
	}
}

TEST(Ring, SlotsStayInsideTheCallersArray)
{
	sgw_ring r;
	sgw_ring_init(&r, 5);
	for (int round = 0; round < 12; round++) {
		while (!sgw_ring_full(&r))
			EXPECT_LT(sgw_ring_push(&r), 5u);
		EXPECT_EQ(sgw_ring_room(&r), 0u);
		EXPECT_LT(sgw_ring_pop(&r), 5u);
		EXPECT_LT(sgw_ring_pop(&r), 5u);
	}
}

// ---------------------------------------------------------------- pool

struct Obj {
	uint64_t a;
	uint8_t pad[100];
};

TEST(Pool, RefusesBadArguments)
{
	sgw_pool p;
	std::vector<uint8_t> mem(1 << 16);
	EXPECT_EQ(sgw_pool_mem_size(0, 8), 0u);
	EXPECT_EQ(sgw_pool_mem_size(8, 0), 0u);
	EXPECT_EQ(sgw_pool_init(&p, mem.data(), mem.size(), 0, 8), -1);
	EXPECT_EQ(sgw_pool_init(&p, nullptr, mem.size(), 4, 8), -1);
	size_t need = sgw_pool_mem_size(100, sizeof(Obj));
	EXPECT_EQ(sgw_pool_init(&p, mem.data(), need - 1, 100, sizeof(Obj)), -1);
	EXPECT_EQ(sgw_pool_init(&p, mem.data(), need, 100, sizeof(Obj)), 0);
}

TEST(Pool, AllocFreeExhaustAndReuseByIndex)
{
	const uint32_t cap = 300;
	size_t need = sgw_pool_mem_size(cap, sizeof(Obj));
	void *mem = aligned_alloc(64, (need + 63) & ~size_t(63));
	ASSERT_NE(mem, nullptr);
	sgw_pool p;
	ASSERT_EQ(sgw_pool_init(&p, mem, need, cap, sizeof(Obj)), 0);
	EXPECT_EQ(p.stride % 64, 0u);  // 108-byte objects: two whole lines each
	std::set<uint32_t> live;
	std::mt19937 rng(7);
	for (int step = 0; step < 100000; step++) {
		if ((rng() % 3) != 0) {
			uint32_t i = sgw_pool_alloc(&p);
			if (live.size() == cap) {
				ASSERT_EQ(i, SGW_POOL_NONE);
				continue;
			}
			ASSERT_LT(i, cap);
			ASSERT_TRUE(live.insert(i).second) << "index handed out twice";
			auto *o = static_cast<Obj *>(sgw_pool_get(&p, i));
			ASSERT_EQ(reinterpret_cast<uintptr_t>(o) % 64, 0u);
			ASSERT_EQ(o->a, 0u) << "not zeroed";
			o->a = 0xdeadbeef;
		} else if (!live.empty()) {
			auto it = live.begin();
			std::advance(it, rng() % live.size());
			ASSERT_EQ(sgw_pool_free(&p, *it), 0);
			live.erase(it);
		}
		ASSERT_EQ(p.used, live.size());
	}
	EXPECT_GT(p.alloc_failed, 0u);
	EXPECT_EQ(p.used_max, cap);
	// A double free and a free out of range are refused and counted.
	uint32_t i = sgw_pool_alloc(&p);
	if (i == SGW_POOL_NONE) {
		ASSERT_EQ(sgw_pool_free(&p, *live.begin()), 0);
		i = *live.begin();
		live.erase(live.begin());
	} else {
		ASSERT_EQ(sgw_pool_free(&p, i), 0);
	}
	uint32_t used = p.used;
	EXPECT_EQ(sgw_pool_free(&p, i), -1);
	EXPECT_EQ(sgw_pool_free(&p, cap), -1);
	EXPECT_EQ(p.bad_free, 2u);
	EXPECT_EQ(p.used, used);
	free(mem);
}

// --------------------------------------------------------- timers by id

// Objects in slots, four timers each, on the real wheel. Slots are deleted
// and reused many times (past the wheel handle's 8-bit generation); every
// expiry must belong to the slot's current occupant, timer and deadline.
TEST(TimerIds, AReusedSlotNeverSeesAPreviousOccupantsExpiry)
{
	const uint64_t tick = 100000;  // 100 us
	const uint32_t nslots = 16, ntimers = 4;
	const uint8_t stage = 3;
	sgw_tw *tw = sgw_tw_create(nslots * ntimers, tick, 0);
	ASSERT_NE(tw, nullptr);
	struct Slot {
		uint64_t gen = 0;  // occupant
		sgw_tw_handle_t h[4] = {SGW_TW_INVALID, SGW_TW_INVALID, SGW_TW_INVALID,
					SGW_TW_INVALID};
		uint64_t due[4] = {0, 0, 0, 0};  // 0: not running
	};
	std::vector<Slot> slots(nslots);
	std::mt19937_64 rng(11);
	uint64_t now = 0, fired = 0, reused = 0;
	for (int step = 0; step < 200000; step++) {
		uint32_t s = static_cast<uint32_t>(rng() % nslots);
		Slot &o = slots[s];
		switch (rng() % 4) {
		case 0:
		case 1: {  // arm (or re-arm) a timer
			uint8_t t = static_cast<uint8_t>(rng() % ntimers);
			uint64_t d = (1 + rng() % 50) * tick;
			ASSERT_EQ(sgw_tev_arm(tw, &o.h[t], stage, t, s, d), 0);
			o.due[t] = now + d;
			break;
		}
		case 2: {  // stop one
			uint8_t t = static_cast<uint8_t>(rng() % ntimers);
			sgw_tev_stop(tw, &o.h[t]);
			o.due[t] = 0;
			break;
		}
		default:  // delete the object, a new one takes the slot
			sgw_tev_stop_all(tw, o.h, ntimers);
			for (auto &d : o.due)
				d = 0;
			o.gen++;
			reused++;
			break;
		}
		now += tick * (rng() % 3);
		uint64_t ev[64];
		uint32_t k;
		while ((k = sgw_tw_expire(tw, now, ev, 64)) > 0) {
			for (uint32_t i = 0; i < k; i++) {
				ASSERT_EQ(sgw_tev_stage(ev[i]), stage);
				uint32_t so = sgw_tev_obj(ev[i]);
				uint8_t t = sgw_tev_timer(ev[i]);
				ASSERT_LT(so, nslots);
				ASSERT_LT(t, ntimers);
				Slot &x = slots[so];
				ASSERT_NE(x.due[t], 0u) << "expiry of a timer not running: stale";
				ASSERT_LE(x.due[t], now);
				ASSERT_GE(x.due[t] + tick, now - tick * 3) << "fired late";
				sgw_tev_fired(&x.h[t]);
				x.due[t] = 0;
				fired++;
			}
		}
	}
	EXPECT_GT(reused, 256u * nslots / 4);  // generations wrapped on many slots
	EXPECT_GT(fired, 10000u);
	sgw_tw_destroy(tw);
}

TEST(TimerIds, EventFieldsRoundTrip)
{
	uint64_t ev = sgw_tev_make(255, 7, 0xfffffffeu);
	EXPECT_EQ(sgw_tev_stage(ev), 255);
	EXPECT_EQ(sgw_tev_timer(ev), 7);
	EXPECT_EQ(sgw_tev_obj(ev), 0xfffffffeu);
	ev = sgw_tev_make(1, 0, 0);
	EXPECT_EQ(sgw_tev_stage(ev), 1);
	EXPECT_EQ(sgw_tev_timer(ev), 0);
	EXPECT_EQ(sgw_tev_obj(ev), 0u);
}

}  // namespace
