/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Timer events for the stage interface: what the 64-bit user value of a
 * timer-wheel timer says, and an object's timers by id.
 *
 *   bits 63..56  stage id (the row of the stage table that owns the timer)
 *   bits 55..48  timer id (which of the object's timers: a TCP connection
 *                has retransmit, persist, delayed ACK / keepalive, time-wait)
 *   bits 31..0   object index (a flow table position, a pool index, a session)
 *
 * An object keeps one wheel handle per timer id, SGW_TW_INVALID when that
 * timer is not running. The rules that keep a reused object slot from ever
 * seeing a previous occupant's expiry:
 *   - arm through sgw_tev_arm (restarts a running timer in place);
 *   - when a timer fires, the owner marks it with sgw_tev_fired before
 *     anything else (its handle is stale from then on);
 *   - on delete, sgw_tev_stop_all stops every timer of the object.
 * The wheel's handles carry a generation, so stopping a handle that already
 * fired is refused rather than stopping someone else's timer; clearing on
 * fire keeps that from depending on the generation not having wrapped.
 */
#ifndef SGW_TEV_H
#define SGW_TEV_H

#include <stdint.h>

#include "sgw_timer_wheel.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SGW_TEV_STAGE_SHIFT 56
#define SGW_TEV_TIMER_SHIFT 48

static inline uint64_t
sgw_tev_make(uint8_t stage, uint8_t timer, uint32_t obj)
{
	return ((uint64_t)stage << SGW_TEV_STAGE_SHIFT) |
	       ((uint64_t)timer << SGW_TEV_TIMER_SHIFT) | obj;
}

static inline uint8_t
sgw_tev_stage(uint64_t ev)
{
	return (uint8_t)(ev >> SGW_TEV_STAGE_SHIFT);
}

static inline uint8_t
sgw_tev_timer(uint64_t ev)
{
	return (uint8_t)(ev >> SGW_TEV_TIMER_SHIFT);
}

static inline uint32_t
sgw_tev_obj(uint64_t ev)
{
	return (uint32_t)ev;
}

/*
 * (Re)arm one of an object's timers delay_ns from now: restarts it in place
 * if it runs, else starts it. 0, or -1 when the wheel is full (counted by the
 * wheel; *h is then SGW_TW_INVALID).
 */
static inline int
sgw_tev_arm(struct sgw_tw *tw, sgw_tw_handle_t *h, uint8_t stage, uint8_t timer,
	    uint32_t obj, uint64_t delay_ns)
{
	if (*h != SGW_TW_INVALID && sgw_tw_update(tw, *h, delay_ns) == 0)
		return 0;
	*h = sgw_tw_start(tw, sgw_tev_make(stage, timer, obj), delay_ns);
	return *h == SGW_TW_INVALID ? -1 : 0;
}

/* Stop one timer if it runs. */
static inline void
sgw_tev_stop(struct sgw_tw *tw, sgw_tw_handle_t *h)
{
	if (*h != SGW_TW_INVALID) {
		sgw_tw_stop(tw, *h);
		*h = SGW_TW_INVALID;
	}
}

/* The timer fired: its handle is stale. */
static inline void
sgw_tev_fired(sgw_tw_handle_t *h)
{
	*h = SGW_TW_INVALID;
}

/* Stop every timer of an object (on delete), n handles from h. */
static inline void
sgw_tev_stop_all(struct sgw_tw *tw, sgw_tw_handle_t *h, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		sgw_tev_stop(tw, &h[i]);
}

#ifdef __cplusplus
}
#endif

#endif /* SGW_TEV_H */
