/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * CUBIC congestion control (RFC 9438) as a struct sgw_tcp_cc_ops, for the
 * split's terrestrial and LAN legs (sgw_tcp_set_cc per connection or
 * sgw_tcp_stack_set_cc per core). The generic code in sgw_tcp_input.c keeps
 * loss recovery (RFC 6675 or NewReno); this file decides growth in
 * congestion avoidance and the reduction on loss.
 *
 *   W_cubic(t) = C (t - K)^3 + W_max          (RFC 9438 4.2, eq. 1)
 *   K = cbrt((W_max - cwnd_epoch) / C)        (eq. 2)
 *   target = W_cubic(t + RTT), clamped to [cwnd, 1.5 cwnd]   (4.4 / 4.5)
 *   cwnd += (target - cwnd) / cwnd per segment acknowledged
 *   W_est += alpha * segments_acked / cwnd, alpha = 3 (1 - b) / (1 + b)
 *            until W_est >= cwnd_prior, then 1 (4.3); cwnd = W_est while
 *            W_cubic(t) < W_est (the Reno-friendly region)
 *   on loss: cwnd_prior = cwnd; W_max = cwnd, or cwnd (1 + b) / 2 when cwnd
 *            < W_max (fast convergence, 4.7); ssthresh = max(flight b, 2 MSS)
 * with b = 0.7, C = 0.4 (segments, seconds). Windows are in bytes here and
 * converted to segments of snd_mss for the cubic. Time is the caller's
 * now_ns; RTT is the connection's SRTT.
 *
 * Not done: HyStart / HyStart++ (slow start is RFC 5681's with byte
 * counting, as sgw_tcp_cc_newreno), the application-limited rule of 4.2
 * (an idle period counts into t), and the spurious-loss undo of 4.9.
 */
#include <math.h>
#include <string.h>

#include "sgw_tcp.h"

#define CUBIC_BETA 0.7
#define CUBIC_C 0.4

/* The 32 bytes of c->cc_data. */
struct cubic {
	uint64_t epoch_ns;   /* start of this congestion-avoidance epoch; 0: none yet */
	uint64_t w_est_fp;   /* W_est, bytes << 16 */
	uint32_t w_max;      /* bytes */
	uint32_t k_us;       /* K, microseconds */
	uint32_t cwnd_prior; /* bytes: cwnd before the last reduction */
	uint32_t acc;        /* remainder of (target - cwnd) * acked / cwnd */
};

_Static_assert(sizeof(struct cubic) <= sizeof(((struct sgw_tcp_conn *)0)->cc_data),
	       "CUBIC state fits in cc_data");

static void
cubic_get(const struct sgw_tcp_conn *c, struct cubic *k)
{
	memcpy(k, c->cc_data, sizeof(*k));
}

static void
cubic_put(struct sgw_tcp_conn *c, const struct cubic *k)
{
	memcpy(c->cc_data, k, sizeof(*k));
}

static void
cubic_init(struct sgw_tcp_conn *c)
{
	memset(c->cc_data, 0, sizeof(c->cc_data));
}

/* W_cubic(t) in bytes, t in seconds from the epoch. */
static double
w_cubic(const struct cubic *k, double t, double mss)
{
	double d = t - (double)k->k_us * 1e-6;

	return (CUBIC_C * d * d * d) * mss + (double)k->w_max;
}

static void
cubic_ack(struct sgw_tcp_conn *c, uint32_t acked, uint64_t now_ns)
{
	struct cubic k;
	double mss = c->snd_mss, t, rtt, target, west, wc;
	uint64_t num, inc;
	uint32_t cwnd = c->cwnd;

	if (c->cwnd < c->ssthresh) {
		/* slow start: RFC 5681 with RFC 3465 byte counting, L = 2 SMSS */
		c->cwnd += acked < 2u * c->snd_mss ? acked : 2u * c->snd_mss;
		return;
	}
	cubic_get(c, &k);
	if (k.epoch_ns == 0) {
		/* the first ACK in congestion avoidance: a new epoch (4.2) */
		k.epoch_ns = now_ns ? now_ns : 1;
		if (cwnd < k.w_max) {
			k.k_us = (uint32_t)(cbrt(((double)k.w_max - cwnd) / mss / CUBIC_C) * 1e6);
		} else {
			k.k_us = 0;
			k.w_max = cwnd;
		}
		k.w_est_fp = (uint64_t)cwnd << 16;
		k.acc = 0;
		if (k.cwnd_prior == 0)
			k.cwnd_prior = cwnd;
	}
	t = now_ns > k.epoch_ns ? (double)(now_ns - k.epoch_ns) * 1e-9 : 0.0;
	rtt = (double)c->srtt_us * 1e-6;

	/* W_est, the Reno-friendly estimate (4.3) */
	{
		double alpha = (k.w_est_fp >> 16) >= k.cwnd_prior
				       ? 1.0
				       : 3.0 * (1.0 - CUBIC_BETA) / (1.0 + CUBIC_BETA);

		k.w_est_fp += (uint64_t)(alpha * (double)acked * mss / cwnd * 65536.0);
	}
	west = (double)(k.w_est_fp >> 16);
	wc = w_cubic(&k, t, mss);
	if (wc < west) {
		/* Reno-friendly region: cwnd follows W_est */
		if (west > cwnd)
			c->cwnd = west > (double)UINT32_MAX ? UINT32_MAX : (uint32_t)west;
		cubic_put(c, &k);
		return;
	}
	/* concave or convex region: toward W_cubic(t + RTT) (4.4, 4.5) */
	target = w_cubic(&k, t + rtt, mss);
	if (target < cwnd)
		target = cwnd;
	if (target > 1.5 * cwnd)
		target = 1.5 * cwnd;
	num = (uint64_t)(target - cwnd) * acked + k.acc;
	inc = num / cwnd;
	k.acc = (uint32_t)(num % cwnd);
	if (inc > UINT32_MAX - cwnd)
		inc = UINT32_MAX - cwnd;
	c->cwnd = cwnd + (uint32_t)inc;
	cubic_put(c, &k);
}

static uint32_t
cubic_ssthresh(struct sgw_tcp_conn *c, uint64_t now_ns)
{
	struct cubic k;
	uint32_t flight = c->snd_max - c->snd_una, ss;

	(void)now_ns;
	cubic_get(c, &k);
	/* 4.7 fast convergence: a flow losing below its last W_max yields */
	if (c->cwnd < k.w_max)
		k.w_max = (uint32_t)((uint64_t)c->cwnd * 17 / 20); /* (1 + 0.7) / 2 */
	else
		k.w_max = c->cwnd;
	k.cwnd_prior = c->cwnd;
	k.epoch_ns = 0;
	cubic_put(c, &k);
	/* 4.6: ssthresh = flight_size * beta, at least 2 segments */
	ss = (uint32_t)((uint64_t)flight * 7 / 10); /* CUBIC_BETA, exact */
	return ss > 2u * c->snd_mss ? ss : 2u * c->snd_mss;
}

const struct sgw_tcp_cc_ops sgw_tcp_cc_cubic = {
	.name = "cubic",
	.init = cubic_init,
	.ack = cubic_ack,
	.ssthresh = cubic_ssthresh,
	.recovered = NULL,
};
