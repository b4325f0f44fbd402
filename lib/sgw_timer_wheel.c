/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Per-core hierarchical hashed timer wheel (contract: sgw_timer_wheel.h,
 * notes: docs/timer-wheel.md).
 *
 * This file owns the timer pool, the wheel levels, the overflow list for very
 * long delays and the list of due-but-not-yet-returned timers. It is in the
 * shape of VPP's tw_timer, written for satgw: rte_timer is an O(log n) locked
 * skiplist at ~120 bytes per timer, and we need millions of timers per core
 * with O(1) start/stop/update, 24 bytes per timer, exact expiry order and a
 * bound on the expiries returned per call.
 *
 * Geometry: 3 levels of 1024 slots. Wheel time is counted in ticks since
 * sgw_tw_create(). A timer with absolute expiry tick E sits, at wheel time
 * cur, on
 *   level 0 slot E % 1024          if E and cur agree above bit 10,
 *   level 1 slot (E >> 10) % 1024  if they agree above bit 20,
 *   level 2 slot (E >> 20) % 1024  if they agree above bit 30,
 *   the overflow list              otherwise.
 * When cur enters a new 2^10 (2^20, 2^30) block, the level 1 (level 2,
 * overflow) entries for that block are re-placed, each to a lower level.
 * Where a timer sits depends only on E and cur, so all timers with the same E
 * are always on one list, in start order, and cascading moves whole lists in
 * order: FIFO within a tick survives any number of cascades. Level 0 slots
 * are only visited at exactly their tick: nothing fires early or late.
 * The levels cover 2^30 ticks (29.8 h at 100 us); the overflow list holds
 * the rest, exactly, up to the 2^54-tick clamp (TW_MAX_DELAY_TICKS).
 *
 * Lists are intrusive, circular and doubly linked by 32-bit index. The list
 * heads live in the pool array after the timers, so unlinking does not need
 * to know the slot. One occupancy bit per slot lets
 * sgw_tw_expire() jump straight to the next tick with anything to do, so a
 * long idle gap costs O(occupied slots), not O(ticks).
 */
#include <stdint.h>
#include <stdlib.h>

#include "sgw_timer_wheel.h"

#define TW_SLOT_BITS 10
#define TW_SLOTS (1u << TW_SLOT_BITS)
#define TW_SLOT_MASK (TW_SLOTS - 1)
#define TW_LEVELS 3
#define TW_SPAN_BITS (TW_SLOT_BITS * TW_LEVELS)
#define TW_NSLOTS (TW_LEVELS * TW_SLOTS)
#define TW_BM_WORDS (TW_SLOTS / 64)

/* List heads, as offsets after the last timer in the pool array. */
#define TW_HEAD_OVERFLOW TW_NSLOTS
#define TW_HEAD_PENDING (TW_NSLOTS + 1)
#define TW_NHEADS (TW_NSLOTS + 2)

#define TW_IDX_BITS 24
#define TW_IDX_MASK ((1u << TW_IDX_BITS) - 1)
#define TW_GEN_BITS 8
#define TW_GEN_MASK ((1u << TW_GEN_BITS) - 1)
/* Expiry ticks are stored modulo 2^56 and read back relative to cur. */
#define TW_TICK_BITS 56
#define TW_TICK_MASK ((UINT64_C(1) << TW_TICK_BITS) - 1)
#define TW_TICK_SIGN (UINT64_C(1) << (TW_TICK_BITS - 1))
/* Longer delays are clamped to this (57000 years at 100 us, 208 days at 1 ns). */
#define TW_MAX_DELAY_TICKS (UINT64_C(1) << 54)

/* prev of a free timer, and the end of the free list. */
#define TW_NIL UINT32_MAX

_Static_assert(SGW_TW_MAX_TIMERS == (1u << TW_IDX_BITS), "handle layout");
_Static_assert((uint64_t)SGW_TW_MAX_TIMERS + TW_NHEADS < TW_NIL, "index space");

struct tw_node {
	uint64_t user;
	uint32_t next;
	uint32_t prev;		/* TW_NIL while free */
	uint64_t exp_gen;	/* (expiry tick mod 2^56) << 8 | generation */
};

_Static_assert(sizeof(struct tw_node) == 24, "24 bytes per timer");

struct sgw_tw {
	struct tw_node *node;	/* nt timers, then TW_NHEADS list heads */
	uint32_t nt;
	uint32_t free_head;
	uint64_t tick_ns;
	uint64_t t0_ns;
	uint64_t cur;		/* wheel time: ticks since t0_ns, all handled */
	uint64_t target;	/* highest tick asked for by sgw_tw_expire() */
	uint64_t ovf_min;	/* lower bound of expiry ticks on the overflow list */
	uint64_t bm[TW_NSLOTS / 64];	/* slot occupancy, level-major */
	struct sgw_tw_stats st;
};

static inline int
tw_bm_test(const struct sgw_tw *tw, uint32_t s)
{
	return (tw->bm[s >> 6] >> (s & 63)) & 1;
}

static inline void
tw_bm_set(struct sgw_tw *tw, uint32_t s)
{
	tw->bm[s >> 6] |= UINT64_C(1) << (s & 63);
}

static inline void
tw_bm_clear(struct sgw_tw *tw, uint32_t s)
{
	tw->bm[s >> 6] &= ~(UINT64_C(1) << (s & 63));
}

/* First occupied slot of a level strictly after pos, or -1. */
static int
tw_bm_next(const uint64_t *bm, uint32_t pos)
{
	uint32_t p = pos + 1;
	uint32_t w;
	uint64_t word;

	if (p >= TW_SLOTS)
		return -1;
	w = p >> 6;
	word = bm[w] & (~UINT64_C(0) << (p & 63));
	for (;;) {
		if (word != 0)
			return (int)(w * 64 + (uint32_t)__builtin_ctzll(word));
		if (++w == TW_BM_WORDS)
			return -1;
		word = bm[w];
	}
}

static inline uint32_t
tw_head(const struct sgw_tw *tw, uint32_t h)
{
	return tw->nt + h;
}

static inline int
tw_list_empty(const struct sgw_tw *tw, uint32_t head)
{
	return tw->node[head].next == head;
}

static inline void
tw_append(struct tw_node *n, uint32_t head, uint32_t i)
{
	uint32_t tail = n[head].prev;

	n[i].next = head;
	n[i].prev = tail;
	n[tail].next = i;
	n[head].prev = i;
}

/* Unlink from whatever list i is on; keep the occupancy bit right. */
static inline void
tw_unlink(struct sgw_tw *tw, uint32_t i)
{
	struct tw_node *n = tw->node;
	uint32_t p = n[i].prev;
	uint32_t x = n[i].next;

	n[p].next = x;
	n[x].prev = p;
	if (p == x && p >= tw->nt && p - tw->nt < TW_NSLOTS)
		tw_bm_clear(tw, p - tw->nt);
}

/* Full expiry tick of a timer, from its 56 stored bits and the wheel time. */
static inline uint64_t
tw_exp(const struct sgw_tw *tw, uint32_t i)
{
	uint64_t d = ((tw->node[i].exp_gen >> TW_GEN_BITS) - tw->cur) & TW_TICK_MASK;

	if (d & TW_TICK_SIGN)
		d |= ~TW_TICK_MASK;
	return tw->cur + d;
}

static inline void
tw_set_exp(struct tw_node *nd, uint64_t exp)
{
	nd->exp_gen = ((exp & TW_TICK_MASK) << TW_GEN_BITS) | (nd->exp_gen & TW_GEN_MASK);
}

/* Put timer i (expiry exp > cur, or == cur while cascading) on its list. */
static void
tw_place(struct sgw_tw *tw, uint32_t i, uint64_t exp)
{
	uint64_t x = exp ^ tw->cur;
	uint32_t ovf;
	unsigned int l;

	for (l = 0; l < TW_LEVELS; l++) {
		unsigned int sh = l * TW_SLOT_BITS;

		if ((x >> (sh + TW_SLOT_BITS)) == 0) {
			uint32_t s = l * TW_SLOTS + (uint32_t)((exp >> sh) & TW_SLOT_MASK);

			tw_append(tw->node, tw_head(tw, s), i);
			tw_bm_set(tw, s);
			return;
		}
	}
	ovf = tw_head(tw, TW_HEAD_OVERFLOW);
	if (tw_list_empty(tw, ovf) || exp < tw->ovf_min)
		tw->ovf_min = exp;
	tw_append(tw->node, ovf, i);
}

/*
 * Empty list head and return its old first entry (head if it was empty). The
 * old entries stay chained by next, the last one pointing at head.
 */
static uint32_t
tw_detach(struct sgw_tw *tw, uint32_t head)
{
	struct tw_node *n = tw->node;
	uint32_t first = n[head].next;

	n[head].next = head;
	n[head].prev = head;
	return first;
}

/* Re-place every timer of a detached list, in list order. */
static void
tw_replace_all(struct sgw_tw *tw, uint32_t head, uint32_t i)
{
	while (i != head) {
		uint32_t nx = tw->node[i].next;

		tw_place(tw, i, tw_exp(tw, i));
		i = nx;
	}
}

/* Move wheel time to tick t (the next tick with work) and do that work. */
static void
tw_process_tick(struct sgw_tw *tw, uint64_t t)
{
	struct tw_node *n = tw->node;
	uint32_t pend = tw_head(tw, TW_HEAD_PENDING);
	uint32_t head, s;
	int l;

	tw->cur = t;
	if ((t & ((UINT64_C(1) << TW_SPAN_BITS) - 1)) == 0) {
		head = tw_head(tw, TW_HEAD_OVERFLOW);
		if (!tw_list_empty(tw, head))
			tw_replace_all(tw, head, tw_detach(tw, head));
	}
	for (l = TW_LEVELS - 1; l >= 1; l--) {
		unsigned int sh = (unsigned int)l * TW_SLOT_BITS;

		if ((t & ((UINT64_C(1) << sh) - 1)) != 0)
			continue;
		s = (uint32_t)l * TW_SLOTS + (uint32_t)((t >> sh) & TW_SLOT_MASK);
		if (!tw_bm_test(tw, s))
			continue;
		tw_bm_clear(tw, s);
		head = tw_head(tw, s);
		tw_replace_all(tw, head, tw_detach(tw, head));
	}
	/* Level 0 slot of t: exactly the timers due at t. Pending is empty. */
	s = (uint32_t)(t & TW_SLOT_MASK);
	if (!tw_bm_test(tw, s))
		return;
	tw_bm_clear(tw, s);
	head = tw_head(tw, s);
	n[pend].next = n[head].next;
	n[pend].prev = n[head].prev;
	n[n[pend].next].prev = pend;
	n[n[pend].prev].next = pend;
	n[head].next = head;
	n[head].prev = head;
}

/* The next tick after cur with anything to do, or UINT64_MAX. */
static uint64_t
tw_next_event(const struct sgw_tw *tw)
{
	uint64_t cur = tw->cur;
	unsigned int l;

	/* Level l events come before level l + 1 events: check in order. */
	for (l = 0; l < TW_LEVELS; l++) {
		unsigned int sh = l * TW_SLOT_BITS;
		int s = tw_bm_next(&tw->bm[l * TW_BM_WORDS],
				   (uint32_t)((cur >> sh) & TW_SLOT_MASK));

		if (s >= 0)
			return ((cur >> (sh + TW_SLOT_BITS)) << (sh + TW_SLOT_BITS)) |
				((uint64_t)s << sh);
	}
	if (!tw_list_empty(tw, tw_head(tw, TW_HEAD_OVERFLOW)))
		return (tw->ovf_min >> TW_SPAN_BITS) << TW_SPAN_BITS;
	return UINT64_MAX;
}

static inline uint64_t
tw_delay_ticks(const struct sgw_tw *tw, uint64_t delay_ns)
{
	uint64_t t = delay_ns / tw->tick_ns + (delay_ns % tw->tick_ns != 0);

	if (t == 0)
		t = 1;
	if (t > TW_MAX_DELAY_TICKS)
		t = TW_MAX_DELAY_TICKS;
	return t;
}

/* Index of a running (or due, not yet returned) timer, or TW_NIL. */
static inline uint32_t
tw_lookup(const struct sgw_tw *tw, sgw_tw_handle_t h)
{
	uint32_t i = h & TW_IDX_MASK;

	if (i >= tw->nt || tw->node[i].prev == TW_NIL ||
	    (tw->node[i].exp_gen & TW_GEN_MASK) != (h >> TW_IDX_BITS))
		return TW_NIL;
	return i;
}

/* Release timer i (already unlinked) with a new generation. */
static inline void
tw_free(struct sgw_tw *tw, uint32_t i)
{
	struct tw_node *nd = &tw->node[i];
	uint32_t gen = (uint32_t)(nd->exp_gen + 1) & TW_GEN_MASK;

	/* Index 2^24 - 1 with generation 255 would spell SGW_TW_INVALID. */
	if (i == TW_IDX_MASK && gen == TW_GEN_MASK)
		gen = 0;
	nd->exp_gen = gen;
	nd->prev = TW_NIL;
	nd->next = tw->free_head;
	tw->free_head = i;
	tw->st.active--;
}

struct sgw_tw *
sgw_tw_create(uint32_t max_timers, uint64_t tick_ns, uint64_t now_ns)
{
	struct sgw_tw *tw;
	uint32_t i, total;

	if (max_timers == 0 || max_timers > SGW_TW_MAX_TIMERS || tick_ns == 0)
		return NULL;
	tw = calloc(1, sizeof(*tw));
	if (tw == NULL)
		return NULL;
	total = max_timers + TW_NHEADS;
	tw->node = malloc((size_t)total * sizeof(struct tw_node));
	if (tw->node == NULL) {
		free(tw);
		return NULL;
	}
	for (i = 0; i < max_timers; i++) {
		tw->node[i].user = 0;
		tw->node[i].next = i + 1 < max_timers ? i + 1 : TW_NIL;
		tw->node[i].prev = TW_NIL;
		tw->node[i].exp_gen = 0;
	}
	for (; i < total; i++) {
		tw->node[i].user = 0;
		tw->node[i].next = i;
		tw->node[i].prev = i;
		tw->node[i].exp_gen = 0;
	}
	tw->nt = max_timers;
	tw->free_head = 0;
	tw->tick_ns = tick_ns;
	tw->t0_ns = now_ns;
	tw->st.capacity = max_timers;
	return tw;
}

void
sgw_tw_destroy(struct sgw_tw *tw)
{
	if (tw == NULL)
		return;
	free(tw->node);
	free(tw);
}

sgw_tw_handle_t
sgw_tw_start(struct sgw_tw *tw, uint64_t user, uint64_t delay_ns)
{
	struct tw_node *nd;
	uint32_t i = tw->free_head;
	uint64_t exp;

	if (i == TW_NIL) {
		tw->st.start_failed++;
		return SGW_TW_INVALID;
	}
	nd = &tw->node[i];
	tw->free_head = nd->next;
	exp = tw->cur + tw_delay_ticks(tw, delay_ns);
	nd->user = user;
	tw_set_exp(nd, exp);
	tw_place(tw, i, exp);
	tw->st.started++;
	tw->st.active++;
	return (sgw_tw_handle_t)((nd->exp_gen & TW_GEN_MASK) << TW_IDX_BITS) | i;
}

int
sgw_tw_stop(struct sgw_tw *tw, sgw_tw_handle_t h)
{
	uint32_t i = tw_lookup(tw, h);

	if (i == TW_NIL)
		return -1;
	tw_unlink(tw, i);
	tw_free(tw, i);
	tw->st.stopped++;
	return 0;
}

int
sgw_tw_update(struct sgw_tw *tw, sgw_tw_handle_t h, uint64_t delay_ns)
{
	uint32_t i = tw_lookup(tw, h);
	uint64_t exp;

	if (i == TW_NIL)
		return -1;
	tw_unlink(tw, i);
	exp = tw->cur + tw_delay_ticks(tw, delay_ns);
	tw_set_exp(&tw->node[i], exp);
	tw_place(tw, i, exp);
	return 0;
}

uint32_t
sgw_tw_expire(struct sgw_tw *tw, uint64_t now_ns, uint64_t *out, uint32_t max)
{
	struct tw_node *n = tw->node;
	uint32_t pend = tw_head(tw, TW_HEAD_PENDING);
	uint64_t prev_target = tw->target;
	uint32_t cnt = 0;

	/* Time going backwards (or before t0) advances nothing. */
	if (now_ns > tw->t0_ns) {
		uint64_t t = (now_ns - tw->t0_ns) / tw->tick_ns;

		if (t > tw->target)
			tw->target = t;
	}
	for (;;) {
		uint64_t t;

		while (cnt < max && n[pend].next != pend) {
			uint32_t i = n[pend].next;

			/* Due by an earlier call's time: deferred by the bound. */
			if (tw_exp(tw, i) <= prev_target)
				tw->st.carried++;
			out[cnt++] = n[i].user;
			n[pend].next = n[i].next;
			n[n[i].next].prev = pend;
			tw_free(tw, i);
		}
		/* Leftovers stay pending and wheel time stays at their tick. */
		if (n[pend].next != pend)
			break;
		t = tw_next_event(tw);
		if (t > tw->target) {
			tw->cur = tw->target;
			break;
		}
		tw_process_tick(tw, t);
	}
	tw->st.expired += cnt;
	return cnt;
}

void
sgw_tw_get_stats(const struct sgw_tw *tw, struct sgw_tw_stats *st)
{
	*st = tw->st;
}
