/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Frame-size adaptation: two loss bins (long frames, short frames), a
 * straight-line fit of ln(survival) against wire length, and the payload
 * size that the fitted bit error rate makes best. sgw_fsize.h has the model.
 */
#include "sgw_fsize.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

void
sgw_fsize_conf_default(struct sgw_fsize_conf *c, uint16_t max, uint16_t overhead)
{
	memset(c, 0, sizeof(*c));
	c->max = max;
	c->min = max < 256 ? max : 256;
	c->overhead = overhead;
	c->probe_every = 16;
	c->min_samples = 1024;
}

const char *
sgw_fsize_conf_check(const struct sgw_fsize_conf *c)
{
	if (c->max < 64)
		return "max";
	if (c->min < 64 || c->min > c->max)
		return "min";
	if (c->probe_every < 2)
		return "probe_every";
	if (c->min_samples < 16)
		return "min_samples";
	return NULL;
}

void
sgw_fsize_init(struct sgw_fsize *f, const struct sgw_fsize_conf *c)
{
	memset(f, 0, sizeof(*f));
	f->c = *c;
	f->cur = c->max;
	f->skip = 0;
}

uint16_t
sgw_fsize_best(double slope, uint16_t overhead, uint16_t min, uint16_t max)
{
	double h = overhead > 0 ? overhead : 1, k = -slope, s;

	if (!(k > 0))
		return max;
	/* d/ds [ln s - ln(s + h) - k (s + h)] = 0  <=>  s (s + h) = h / k */
	s = (-h + sqrt(h * h + 4.0 * h / k)) / 2.0;
	if (s >= max)
		return max;
	if (s <= min)
		return min;
	return (uint16_t)((uint32_t)s & ~7u); /* a multiple of 8: tidy, within 1 % */
}

/* The piece size that cuts len bytes into n frames of equal length. */
static uint16_t
piece_of(uint32_t len, uint32_t n)
{
	return (uint16_t)((len + n - 1) / n);
}

/*
 * e^x for a cut decision: |x| is about k x size / n, below 0.3 unless the
 * size sits at frame_size_min under a very high error rate. A polynomial
 * (error below 1e-4 for |x| <= 0.5) spares a libm call per packet.
 */
static double
exp_small(double x)
{
	if (x < -0.5 || x > 0.5)
		return exp(x);
	return 1.0 + x * (1.0 + x * (0.5 + x * (1.0 / 6.0 + x / 24.0)));
}

/*
 * How to cut a packet longer than cur: in n equal frames (no short tail: at a
 * bit error rate, equal frames lose fewer bytes than a long and a short one
 * with the same total), n being floor or ceil of len / cur, whichever costs
 * fewer expected wire bytes, (len + n h) e^(k (len / n + h)): its continuous
 * optimum is a piece of exactly the best size, so the two neighbours are the
 * only candidates. A 1400-byte split message at 1e-5 (best 648) goes as two
 * frames of 700 (3.3 % of wire better than 648 + 648 + 104, 0.6 % better
 * than three of 467). Without bit errors (k = 0) the fewest frames that fit
 * max.
 */
static uint16_t
cut_even(const struct sgw_fsize *f, uint32_t len)
{
	uint32_t n1 = len / f->cur, n2 = n1 + 1;
	double h = f->c.overhead, q1, q2;

	if (n1 == 0 || piece_of(len, n1) > f->c.max)
		return piece_of(len, n2);
	q1 = (double)len / n1;
	q2 = (double)len / n2;
	if ((len + n1 * h) < (len + n2 * h) * exp_small(f->k * (q2 - q1)))
		return piece_of(len, n1);
	return piece_of(len, n2);
}

static bool
is_long(const struct sgw_fsize *f, uint32_t len)
{
	return len * 8u > (uint32_t)f->cur * 5u;
}

uint16_t
sgw_fsize_cut(struct sgw_fsize *f, uint32_t len)
{
	uint16_t piece = len <= f->cur ? f->cur : cut_even(f, len);

	/*
	 * Only packets that make long frames are probed (a short frame is a
	 * short sample already), and only those up to max bytes: a probe cuts
	 * the packet in equal frames of at most half the size (at most
	 * 2 max / min + 1 of them: max_frags holds them), one header more per
	 * frame of the normal cut.
	 */
	if (!is_long(f, len < piece ? len : piece) || len > f->c.max)
		return piece;
	if (f->skip > 0) {
		f->skip--;
		return piece;
	}
	f->skip = (uint16_t)(f->c.probe_every - 1);
	/*
	 * Enough short samples already (traffic of mixed sizes, or earlier
	 * probes: twice the frames of a packet cut normally, one probe per
	 * probe_every - 1 other packets): no probe.
	 */
	if ((uint64_t)f->n[1] * (f->c.probe_every - 1u) > 2ull * f->n[0])
		return piece;
	f->st.probes++;
	return piece_of(len, (len + (f->cur + 1) / 2 - 1) / ((f->cur + 1) / 2));
}

/*
 * After a decision keep 3/4 of the counts: an average over about four
 * decisions' worth of frames that follows the channel, and the next decision
 * after a quarter of min_samples new short frames.
 */
static void
bins_scale(struct sgw_fsize *f)
{
	for (int b = 0; b < 2; b++) {
		f->n[b] -= f->n[b] / 4;
		f->lost[b] -= f->lost[b] / 4;
		f->bytes[b] -= f->bytes[b] / 4;
	}
}

/* Goodput share of a payload s: header share times survival. */
static double
eff(double s, double h, double slope)
{
	return s / (s + h) * exp(slope * (s + h));
}

static bool
decide(struct sgw_fsize *f)
{
	double n1 = f->n[0], n2 = f->n[1], h = f->c.overhead;
	double p1 = f->lost[0] / n1, p2 = f->lost[1] / n2;
	double l1 = (double)f->bytes[0] / n1 + h, l2 = (double)f->bytes[1] / n2 + h;
	double y1, y2, var, slope, se, hi;
	uint16_t best, s_short, s_long;

	f->st.decisions++;
	/* Survival 0 has no logarithm: at most all but half a frame lost. */
	if (p1 > 1.0 - 0.5 / n1)
		p1 = 1.0 - 0.5 / n1;
	if (p2 > 1.0 - 0.5 / n2)
		p2 = 1.0 - 0.5 / n2;
	if (l1 - l2 < 32.0) {  /* the bins' lengths too close to give a slope */
		bins_scale(f);
		return false;
	}
	y1 = log1p(-p1);
	y2 = log1p(-p2);
	/* var(ln(1 - p_hat)) ~ p / ((1 - p) n) (delta method) */
	var = p1 / ((1.0 - p1) * n1) + p2 / ((1.0 - p2) * n2);
	slope = (y1 - y2) / (l1 - l2);
	se = sqrt(var) / (l1 - l2);
	/*
	 * Keep the size while it is the best one for some slope within three
	 * standard errors of the estimate: a bin's loss count is noisy (a few
	 * hundred short frames), and a size changed on noise costs goodput
	 * until the next decisions undo it. Length-independent losses give a
	 * slope near 0 (the longest frames); a real bit error rate gives a
	 * slope many standard errors below 0 within seconds.
	 */
	hi = slope + 3.0 * se;
	s_short = sgw_fsize_best(slope - 3.0 * se, f->c.overhead, f->c.min, f->c.max);
	s_long = sgw_fsize_best(hi < 0.0 ? hi : 0.0, f->c.overhead, f->c.min, f->c.max);
	if (slope > 0.0)  /* short frames lost more: no sign of bit errors */
		slope = 0.0;
	f->st.ber_ppb = (uint32_t)(-expm1(slope / 8.0) * 1e9 + 0.5);
	best = sgw_fsize_best(slope, f->c.overhead, f->c.min, f->c.max);
	if ((f->cur < s_short || f->cur > s_long) && best != f->cur &&
	    eff(best, h, slope) > 1.01 * eff(f->cur, h, slope)) {
		f->cur = best;
		f->k = -slope;
		f->st.changes++;
		f->skip = 0;
		memset(f->n, 0, sizeof(f->n));
		memset(f->lost, 0, sizeof(f->lost));
		memset(f->bytes, 0, sizeof(f->bytes));
		return true;
	}
	bins_scale(f);
	return false;
}

bool
sgw_fsize_sample(struct sgw_fsize *f, uint16_t len, bool lost)
{
	int b;

	b = is_long(f, len) ? 0 : 1;
	if (f->n[b] >= (1u << 30))  /* one bin starved for ages: keep counts bounded */
		bins_scale(f);
	f->n[b]++;
	f->lost[b] += lost;
	f->bytes[b] += len;
	if (f->n[0] < f->c.min_samples || f->n[1] < f->c.min_samples)
		return false;
	return decide(f);
}
