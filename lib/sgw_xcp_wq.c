/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The share between the XCP and the other class at the XCP bottleneck (see
 * sgw_xcp_wq.h): a two-class self-clocked fair scheduler and the weight
 * that equalises the average per-flow throughput of the two classes.
 */
#include <math.h>
#include <string.h>

#include "sgw_xcp_wq.h"

void
sgw_xcpq_conf_default(struct sgw_xcpq_conf *c)
{
	c->gain = 0.5;
	c->w_min = 0.02;
	c->w_init = 0.5;
}

int
sgw_xcpq_conf_check(const struct sgw_xcpq_conf *c)
{
	if (!(c->gain > 0.0 && c->gain <= 1.0))
		return -1;
	if (!(c->w_min > 0.0 && c->w_min <= 0.5))
		return -1;
	if (!(c->w_init >= c->w_min && c->w_init <= 1.0 - c->w_min))
		return -1;
	return 0;
}

void
sgw_xcpq_init(struct sgw_xcpq *q, const struct sgw_xcpq_conf *c, uint64_t now)
{
	memset(q, 0, sizeof(*q));
	q->w = c->w_init;
	q->t_start_ns = now;
	q->last.w = q->w;
	q->last.w_target = q->w;
}

/* FNV-1a, then a 32-bit finaliser (murmur3's) so the low bits mix well. */
uint32_t
sgw_xcpq_hash(const uint8_t *key, size_t len)
{
	uint32_t h = 2166136261u;
	size_t i;

	for (i = 0; i < len; i++) {
		h ^= key[i];
		h *= 16777619u;
	}
	h ^= h >> 16;
	h *= 0x85ebca6bu;
	h ^= h >> 13;
	h *= 0xc2b2ae35u;
	h ^= h >> 16;
	return h;
}

void
sgw_xcpq_arrive(struct sgw_xcpq *q, unsigned int cls, uint32_t h, uint32_t size)
{
	uint32_t b = h & (SGW_XCPQ_FC_BITS - 1);

	if (cls >= SGW_XCPQ_N || size <= SGW_XCPQ_FLOW_MIN_BYTES)
		return;
	q->fc[cls][b >> 6] |= 1ull << (b & 63);
}

int
sgw_xcpq_pick(struct sgw_xcpq *q, bool backlog_x, bool backlog_o)
{
	if (!backlog_o)
		q->o_idle = true;
	if (backlog_x && backlog_o)
		return q->vt[SGW_XCPQ_X] <= q->vt[SGW_XCPQ_O] ? SGW_XCPQ_X : SGW_XCPQ_O;
	if (backlog_x) {
		if (q->vt[SGW_XCPQ_O] < q->vt[SGW_XCPQ_X])
			q->vt[SGW_XCPQ_O] = q->vt[SGW_XCPQ_X];
		return SGW_XCPQ_X;
	}
	if (backlog_o) {
		if (q->vt[SGW_XCPQ_X] < q->vt[SGW_XCPQ_O])
			q->vt[SGW_XCPQ_X] = q->vt[SGW_XCPQ_O];
		return SGW_XCPQ_O;
	}
	return -1;
}

void
sgw_xcpq_sent(struct sgw_xcpq *q, unsigned int cls, uint32_t size)
{
	double w;

	if (cls >= SGW_XCPQ_N)
		return;
	w = cls == SGW_XCPQ_X ? q->w : 1.0 - q->w;
	q->vt[cls] += (double)size / w;
	q->sent_iv[cls] += size;
	q->sent_bytes[cls] += size;
	q->sent_pkts[cls]++;
	/*
	 * Keep the two normalised counters small (their difference is all that
	 * matters): a long run does not lose the resolution of a double.
	 */
	if (q->vt[SGW_XCPQ_X] > 1e12 && q->vt[SGW_XCPQ_O] > 1e12) {
		double m = q->vt[SGW_XCPQ_X] < q->vt[SGW_XCPQ_O] ? q->vt[SGW_XCPQ_X] :
			q->vt[SGW_XCPQ_O];

		q->vt[SGW_XCPQ_X] -= m;
		q->vt[SGW_XCPQ_O] -= m;
	}
}

double
sgw_xcpq_count(const uint64_t *bits)
{
	uint32_t zeros = 0, i;
	const double m = (double)SGW_XCPQ_FC_BITS;

	for (i = 0; i < SGW_XCPQ_FC_BITS / 64; i++)
		zeros += 64u - (uint32_t)__builtin_popcountll(bits[i]);
	if (zeros == 0)  /* saturated: the estimate's upper end */
		return m * log(m);
	return -m * log((double)zeros / m);
}

double
sgw_xcpq_interval(struct sgw_xcpq *q, const struct sgw_xcpq_conf *c, uint64_t now,
		  double cap_Bps)
{
	uint64_t dt = now > q->t_start_ns ? now - q->t_start_ns : 0;
	uint64_t seen[SGW_XCPQ_N][SGW_XCPQ_FC_BITS / 64];
	double nx, no;
	double target = q->w, lo = c->w_min, hi = 1.0 - c->w_min, other, cap_x;
	unsigned int k, m, i;

	/* The flows of this interval and of the SGW_XCPQ_FC_MEM - 1 before. */
	memcpy(seen, q->fc, sizeof(seen));
	for (m = 0; m < SGW_XCPQ_FC_MEM - 1; m++)
		for (k = 0; k < SGW_XCPQ_N; k++)
			for (i = 0; i < SGW_XCPQ_FC_BITS / 64; i++)
				seen[k][i] |= q->fc_old[m][k][i];
	nx = sgw_xcpq_count(seen[SGW_XCPQ_X]);
	no = sgw_xcpq_count(seen[SGW_XCPQ_O]);

	if (nx + no > 0.5)
		target = nx / (nx + no);
	if (target < lo)
		target = lo;
	if (target > hi)
		target = hi;
	q->w += c->gain * (target - q->w);
	if (q->w < lo)
		q->w = lo;
	if (q->w > hi)
		q->w = hi;
	for (k = 0; k < SGW_XCPQ_N; k++)
		q->last.sent_Bps[k] = dt > 0 ? (double)q->sent_iv[k] * 1e9 / (double)dt : 0.0;
	/*
	 * The XCP class may count on its weighted share, and on what the other
	 * class left unused (the scheduler is work conserving: an idle share is
	 * the XCP class's to take, and XCP takes it only if told it is there).
	 * Only a class that ran out left something: one with a backlog all
	 * along sent what the line gave it.
	 */
	other = q->last.sent_Bps[SGW_XCPQ_O];
	cap_x = q->w * cap_Bps;
	if (q->o_idle && cap_Bps - other > cap_x)
		cap_x = cap_Bps - other;
	q->last.o_idle = q->o_idle;
	q->o_idle = false;
	q->last.dt_ns = dt;
	q->last.flows[SGW_XCPQ_X] = nx;
	q->last.flows[SGW_XCPQ_O] = no;
	q->last.w_target = target;
	q->last.w = q->w;
	q->last.cap_x_Bps = cap_x;
	/* This interval's bitmaps replace the oldest. */
	memcpy(q->fc_old[q->fc_pos], q->fc, sizeof(q->fc));
	q->fc_pos = (q->fc_pos + 1) % (SGW_XCPQ_FC_MEM - 1);
	memset(q->fc, 0, sizeof(q->fc));
	memset(q->sent_iv, 0, sizeof(q->sent_iv));
	q->t_start_ns = now;
	q->intervals++;
	return cap_x;
}
