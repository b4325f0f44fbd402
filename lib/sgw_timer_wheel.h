/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Per-core hierarchical hashed timer wheel (the shape of VPP's tw_timer).
 *
 * Why our own and not rte_timer: rte_timer is a per-core skiplist with a
 * spinlock, O(log n) per insert and ~120 bytes per timer; satgw hangs millions
 * of per-flow and per-held-packet timers on each core and needs O(1) start,
 * stop and update with small handles, and a bound on the work done per call.
 *
 * Time is passed in (nanoseconds); nothing here reads a clock. All memory is
 * allocated by sgw_tw_create(); start/stop/update/expire never allocate.
 */
#ifndef SGW_TIMER_WHEEL_H
#define SGW_TIMER_WHEEL_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 32-bit handle: a pool index plus a generation, so a stale handle is refused. */
typedef uint32_t sgw_tw_handle_t;
#define SGW_TW_INVALID UINT32_MAX
#define SGW_TW_MAX_TIMERS (1u << 24)

struct sgw_tw;

struct sgw_tw_stats {
	uint32_t active;
	uint32_t capacity;
	uint64_t started;
	uint64_t stopped;
	uint64_t expired;
	uint64_t start_failed;   /* pool full */
	uint64_t carried;        /* expiries deferred to a later call by the bound */
};

/*
 * Semantics (details in docs/timer-wheel.md): 3 levels x 1024 slots plus an
 * overflow list, 24 bytes per timer. Delays are exact up to 2^54 ticks and
 * clamped beyond (57000 years at 100 us). A timer started at wheel time T
 * fires on the first expire call with now_ns >= T + max(1, ceil(d / tick))
 * ticks; timers come out in expiry-tick order, FIFO (by last start/update)
 * within a tick. A due timer not yet returned by sgw_tw_expire() can still be
 * stopped or updated; once returned, its handle is stale.
 */

/*
 * max_timers <= SGW_TW_MAX_TIMERS; tick_ns > 0 (satgw default 100 us).
 * now_ns is the wheel's time zero. Returns NULL on bad arguments or no memory.
 */
struct sgw_tw *sgw_tw_create(uint32_t max_timers, uint64_t tick_ns, uint64_t now_ns);
void sgw_tw_destroy(struct sgw_tw *tw);

/*
 * Start a timer that fires delay_ns from the wheel's current time (rounded up
 * to whole ticks, at least one tick), carrying the caller's opaque 64-bit
 * user value. Returns SGW_TW_INVALID when the pool is full (counted).
 */
sgw_tw_handle_t sgw_tw_start(struct sgw_tw *tw, uint64_t user, uint64_t delay_ns);
/* Stop a running timer. 0, or -1 if the handle is stale / not running. */
int sgw_tw_stop(struct sgw_tw *tw, sgw_tw_handle_t h);
/* Re-arm a running timer delay_ns from now, keeping its handle. 0 or -1. */
int sgw_tw_update(struct sgw_tw *tw, sgw_tw_handle_t h, uint64_t delay_ns);

/*
 * Advance the wheel to now_ns and return up to max expired timers' user values
 * in out[] (in expiry-tick order; FIFO within a tick). Expired timers are
 * released. Any further due timers are carried to the next call.
 */
uint32_t sgw_tw_expire(struct sgw_tw *tw, uint64_t now_ns, uint64_t *out, uint32_t max);

void sgw_tw_get_stats(const struct sgw_tw *tw, struct sgw_tw_stats *st);

#ifdef __cplusplus
}
#endif

#endif /* SGW_TIMER_WHEEL_H */
