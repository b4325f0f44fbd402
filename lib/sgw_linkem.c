/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The emulator role's link model, one direction (contract: sgw_linkem.h; the
 * model in words: docs/emulator.md). This file owns the transmitter schedule,
 * the queue in front of it (drop-tail, RED, gentle RED), the channel (BER,
 * i.i.d. loss, Gilbert-Elliott, outages), the release times and the counters.
 *
 * Time. Every call gets now_ns; now is non-decreasing across all calls (an
 * earlier time is taken as the latest seen). "Time zero" (outages, the GE
 * chain) is the now_ns given to sgw_linkem_create.
 *
 * Exact serialisation. The end of the last frame on the wire is kept as
 * tx_ns + tx_rem / rate exactly (tx_rem in [0, rate)): a frame of b bits adds
 * b * 1e9 / rate ns as a quotient and a remainder, and remainders carry. A
 * run of back-to-back frames therefore ends exactly where its total bits say,
 * whatever its length; only the reported end of each frame is rounded, up, to
 * whole ns (a frame is never released before its last bit is out). A frame
 * offered before that rounded end is appended to the busy period (at the exact
 * end, at most 1 ns before it was offered); one offered at or after it starts
 * a new busy period at now.
 *
 * Queue. The queue holds the frames offered but not yet fully serialised (the
 * one on the wire included): a ring of (end, len) sized queue_pkts. Limits are
 * on packets and on frame bytes (overhead not counted). RED and gentle RED
 * decide on the EWMA of the queue bytes, updated at each arrival
 * avg = (1 - wq) avg + wq q, and after an idle period decayed as Floyd and
 * Jacobson do, avg = (1 - wq)^m avg with m the idle time over the arriving
 * frame's transmission time. The drop probability is used as is for each
 * arrival (no "count since the last drop" correction: drops are i.i.d. at a
 * given average, which makes the drop rate equal the curve).
 *
 * Channel. Every frame that enters the queue is transmitted and occupies the
 * transmitter for its full time, lost or not. A frame whose transmission
 * [start, end) overlaps an outage window is lost to the outage; otherwise the
 * channel state at the start of its transmission decides: lost with
 * probability 1 - (1 - p)(1 - ber)^(8 len) (len without overhead). The GE
 * chain is a continuous-time two-state chain with exponential sojourns,
 * starting good at time zero, advanced lazily. Two cursors walk the same chain
 * (same seed, same draws): one at the transmission times of frames, one at
 * now for sgw_linkem_state and the time-in-state counters, since transmission
 * times may lie ahead of now. The chain is walked one sojourn at a time
 * (~10 ns each, bench_lib_linkem): after a long idle the next call catches
 * up, e.g. 1 h at 1 ms means is 3.6M steps, ~35 ms. get_stats and state move
 * the frames' cursor up to now as well (every later frame starts at or after
 * now), so a caller polling the counters spreads that work.
 *
 * Randomness. xoshiro256** (Blackman and Vigna), four independent streams
 * seeded from splitmix64(seed): the GE sojourns, the loss draws, the RED draws
 * and the jitter. So a seed repeats a run exactly, and the loss pattern does
 * not change when only the queue or the jitter does.
 *
 * Plain C11 and libm: no globals, no clock reads, malloc in create only.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sgw_linkem.h"

#define NS_PER_S 1000000000ull
#define MIN_RATE_BPS 1000ull

/* ------------------------------------------------------------ randomness */

static uint64_t
splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static inline uint64_t
rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

/* xoshiro256** 1.0 */
static inline uint64_t
xo_next(uint64_t s[4])
{
	uint64_t r = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return r;
}

static void
xo_seed(uint64_t s[4], uint64_t *sm)
{
	int i;

	for (i = 0; i < 4; i++)
		s[i] = splitmix64(sm);
	if ((s[0] | s[1] | s[2] | s[3]) == 0)
		s[0] = 1; /* the all-zero state is xoshiro's only fixed point */
}

/* [0, 1) with 53 random bits. */
static inline double
u01(uint64_t s[4])
{
	return (double)(xo_next(s) >> 11) * 0x1.0p-53;
}

/* (0, 1], for logarithms. */
static inline double
u01_open0(uint64_t s[4])
{
	return (double)((xo_next(s) >> 11) + 1) * 0x1.0p-53;
}

/* ------------------------------------------------- 64x64 -> 128 arithmetic */

/* High 64 bits of a * b; the low ones in *lo. Portable (no __int128). */
static inline uint64_t
mul_hi(uint64_t a, uint64_t b, uint64_t *lo)
{
	uint64_t a0 = (uint32_t)a, a1 = a >> 32, b0 = (uint32_t)b, b1 = b >> 32;
	uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
	uint64_t mid = (p00 >> 32) + (uint32_t)p01 + (uint32_t)p10;

	*lo = (mid << 32) | (uint32_t)p00;
	return p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
}

/* (hi:lo) / d, remainder in *rem; needs hi < d (the quotient fits 64 bits). */
static uint64_t
div_128(uint64_t hi, uint64_t lo, uint64_t d, uint64_t *rem)
{
	int i;

	for (i = 0; i < 64; i++) {
		uint64_t carry = hi >> 63;

		hi = hi << 1 | lo >> 63;
		lo <<= 1;
		if (carry || hi >= d) {
			hi -= d;
			lo |= 1;
		}
	}
	*rem = hi;
	return lo;
}

/* a * b / d exactly, quotient and remainder; false if the quotient overflows. */
static bool
mul_div(uint64_t a, uint64_t b, uint64_t d, uint64_t *q, uint64_t *r)
{
	uint64_t lo, hi = mul_hi(a, b, &lo);

	if (hi == 0) {
		*q = lo / d;
		*r = lo % d;
		return true;
	}
	if (hi >= d)
		return false;
	*q = div_128(hi, lo, d, r);
	return true;
}

/* ------------------------------------------------------------- the model */

struct qent {
	uint64_t end_ns;    /* rounded-up end of serialisation */
	uint32_t len;
};

/* A cursor on the Gilbert-Elliott chain. */
struct ge_cursor {
	uint64_t rng[4];
	uint64_t entered_ns;  /* start of the current sojourn */
	uint64_t next_ns;     /* its end: the next change */
	uint8_t state;        /* 0 good, 1 bad */
};

/* Loss in one channel state, precomputed. */
struct chan {
	double p;             /* packet loss probability */
	double l1p;           /* log(1 - ber); 0 when ber == 0 */
	bool has_ber;
	uint32_t cache_len;   /* the last frame length and its loss probability */
	double cache_lost;
};

struct sgw_linkem {
	struct sgw_linkem_conf c;
	uint64_t t0;
	uint64_t now;             /* latest now_ns seen */

	/* Transmitter: the exact end of the last frame is tx_ns + tx_rem / rate. */
	uint64_t tx_ns, tx_rem;
	uint64_t dur_bits, dur_q, dur_r;  /* cache: bits -> (ns, remainder) */

	/* Queue: frames not yet fully serialised, oldest at head. */
	struct qent *ring;
	uint32_t head, n, cap;
	uint64_t q_bytes;
	double avg;               /* RED average queue, bytes */

	uint64_t last_release;

	/* Channel. */
	struct chan ch[2];
	double mean_ns[2];
	struct ge_cursor tx;      /* at frames' transmission times */
	struct ge_cursor obs;     /* at now, for the counters */
	uint64_t obs_state_ns[2]; /* completed sojourns seen by obs */
	uint64_t obs_changes;
	bool in_burst;
	uint64_t out_start[SGW_LINKEM_MAX_OUTAGES]; /* absolute */

	uint64_t rng_loss[4], rng_aqm[4], rng_jit[4];

	struct sgw_linkem_stats st;
	struct qent ring_mem[];
};

void
sgw_linkem_conf_init(struct sgw_linkem_conf *conf)
{
	memset(conf, 0, sizeof(*conf));
	conf->queue_pkts = 1000;
	conf->aqm = SGW_AQM_DROPTAIL;
	conf->red_max_p = 0.1;
	conf->red_wq = 0.002;
	conf->loss = SGW_LOSS_NONE;
}

static bool
prob_ok(double x)
{
	return x >= 0.0 && x <= 1.0; /* false for NaN */
}

#define WHY(...) do { \
		if (why != NULL && len > 0) \
			snprintf(why, len, __VA_ARGS__); \
		return -1; \
	} while (0)

static int
check_state(const struct sgw_loss_state *s, const char *name, bool ge, char *why,
	    size_t len)
{
	if (ge && !(s->mean_s >= SGW_LINKEM_GE_MIN_MEAN_S &&
		    s->mean_s <= SGW_LINKEM_GE_MAX_MEAN_S))
		WHY("gilbert-elliott %s state: mean_s %g is out of range %.10g..%.10g s", name,
		    s->mean_s, SGW_LINKEM_GE_MIN_MEAN_S, SGW_LINKEM_GE_MAX_MEAN_S);
	if (!prob_ok(s->ber))
		WHY("%s%sber %g is out of range 0..1", ge ? name : "", ge ? " state: " : "",
		    s->ber);
	if (!prob_ok(s->p))
		WHY("%s%sp %g is out of range 0..1", ge ? name : "", ge ? " state: " : "",
		    s->p);
	return 0;
}

int
sgw_linkem_conf_check(const struct sgw_linkem_conf *c, char *why, size_t len)
{
	uint32_t i;

	if (c == NULL)
		WHY("no configuration");
	if (c->rate_bps != 0 &&
	    (c->rate_bps < MIN_RATE_BPS || c->rate_bps > SGW_LINKEM_MAX_RATE_BPS))
		WHY("rate %llu bit/s is out of range %llu..%llu (or 0: no rate limit)",
		    (unsigned long long)c->rate_bps, (unsigned long long)MIN_RATE_BPS,
		    (unsigned long long)SGW_LINKEM_MAX_RATE_BPS);
	if (c->delay_ns > SGW_LINKEM_MAX_DELAY_NS)
		WHY("delay %llu ns is more than %llu ns", (unsigned long long)c->delay_ns,
		    (unsigned long long)SGW_LINKEM_MAX_DELAY_NS);
	if (c->jitter_ns > SGW_LINKEM_MAX_DELAY_NS)
		WHY("jitter %llu ns is more than %llu ns", (unsigned long long)c->jitter_ns,
		    (unsigned long long)SGW_LINKEM_MAX_DELAY_NS);
	if (c->rate_bps == 0 && (c->delay_ns != 0 || c->jitter_ns != 0))
		WHY("a delay or jitter needs a rate: without one, the frames in flight "
		    "have no bound");
	if (c->overhead_bytes > SGW_LINKEM_MAX_OVERHEAD)
		WHY("overhead %u bytes is more than %u", c->overhead_bytes,
		    SGW_LINKEM_MAX_OVERHEAD);
	if (c->queue_pkts == 0 || c->queue_pkts > SGW_LINKEM_MAX_QUEUE_PKTS)
		WHY("queue limit %u packets is out of range 1..%u", c->queue_pkts,
		    SGW_LINKEM_MAX_QUEUE_PKTS);
	if (c->queue_bytes > SGW_LINKEM_MAX_QUEUE_BYTES)
		WHY("queue limit %u bytes is more than %u", c->queue_bytes,
		    SGW_LINKEM_MAX_QUEUE_BYTES);
	switch (c->aqm) {
	case SGW_AQM_DROPTAIL:
		break;
	case SGW_AQM_RED:
	case SGW_AQM_GRED:
		if (c->rate_bps == 0)
			WHY("%s needs a rate: without one there is no queue",
			    sgw_aqm_name(c->aqm));
		if (c->red_max_bytes == 0 || c->red_max_bytes > SGW_LINKEM_MAX_QUEUE_BYTES)
			WHY("%s max_bytes %u is out of range 1..%u", sgw_aqm_name(c->aqm),
			    c->red_max_bytes, SGW_LINKEM_MAX_QUEUE_BYTES);
		if (c->red_min_bytes >= c->red_max_bytes)
			WHY("%s min_bytes (%u) must be less than max_bytes (%u)",
			    sgw_aqm_name(c->aqm), c->red_min_bytes, c->red_max_bytes);
		if (!prob_ok(c->red_max_p))
			WHY("%s max_p %g is out of range 0..1", sgw_aqm_name(c->aqm),
			    c->red_max_p);
		if (!(c->red_wq > 0.0 && c->red_wq <= 1.0))
			WHY("%s wq %g is out of range (0, 1]", sgw_aqm_name(c->aqm), c->red_wq);
		break;
	default:
		WHY("unknown queue discipline %d", (int)c->aqm);
	}
	switch (c->loss) {
	case SGW_LOSS_NONE:
		break;
	case SGW_LOSS_BER:
		if (!prob_ok(c->good.ber))
			WHY("ber %g is out of range 0..1", c->good.ber);
		break;
	case SGW_LOSS_RANDOM:
		if (!prob_ok(c->good.p))
			WHY("p %g is out of range 0..1", c->good.p);
		break;
	case SGW_LOSS_GE:
		if (check_state(&c->good, "good", true, why, len) != 0 ||
		    check_state(&c->bad, "bad", true, why, len) != 0)
			return -1;
		break;
	default:
		WHY("unknown loss model %d", (int)c->loss);
	}
	if (c->n_outages > SGW_LINKEM_MAX_OUTAGES)
		WHY("%u outages: at most %d", c->n_outages, SGW_LINKEM_MAX_OUTAGES);
	for (i = 0; i < c->n_outages; i++) {
		const struct sgw_outage *o = &c->outages[i];

		if (o->start_ns > SGW_LINKEM_MAX_OUTAGE_NS ||
		    o->dur_ns > SGW_LINKEM_MAX_OUTAGE_NS ||
		    o->period_ns > SGW_LINKEM_MAX_OUTAGE_NS)
			WHY("outage %u: times must be at most %llu ns", i + 1,
			    (unsigned long long)SGW_LINKEM_MAX_OUTAGE_NS);
		if (o->dur_ns == 0)
			WHY("outage %u: its duration must be more than 0", i + 1);
		if (o->period_ns != 0 && o->period_ns <= o->dur_ns)
			WHY("outage %u: every_s (%.9g s) must be longer than for_s (%.9g s)",
			    i + 1, (double)o->period_ns / 1e9, (double)o->dur_ns / 1e9);
	}
	return 0;
}

#undef WHY

uint64_t
sgw_linkem_max_in_flight(const struct sgw_linkem_conf *c, uint32_t min_frame_len)
{
	uint64_t w, bits, q, r, n, total;

	if (c->rate_bps == 0)
		/* No transmitter: released at once unless delayed, and then unbounded. */
		return c->delay_ns == 0 && c->jitter_ns == 0 ? 1 : UINT64_MAX;
	bits = 8 * ((uint64_t)min_frame_len + c->overhead_bytes);
	if (bits == 0)
		return UINT64_MAX;
	/*
	 * A frame is held from its end of serialisation for at most delay + jitter
	 * (the FIFO clamp never pushes it later than that), so the frames in flight
	 * are those whose (rounded-up) end lies in the last delay + jitter ns: +1 ns
	 * for the rounding. Ends are at least bits / rate apart.
	 */
	w = c->delay_ns + c->jitter_ns + 1;
	if (!mul_div(w, c->rate_bps, NS_PER_S, &q, &r))
		return UINT64_MAX;
	/* ceil(w * rate / 1e9 / bits): bits that fit in w, in frames, rounded up */
	n = q / bits + ((q % bits) != 0 || r != 0);
	total = (uint64_t)c->queue_pkts + n + 1;
	return total < n ? UINT64_MAX : total;
}

static void
chan_init(struct chan *ch, double p, double ber)
{
	ch->p = p;
	ch->has_ber = ber > 0.0;
	ch->l1p = ber >= 1.0 ? -INFINITY : log1p(-ber);
	ch->cache_len = 0;
	ch->cache_lost = p; /* no bits, no bit errors */
}

/* Probability that a frame of len bytes is lost in this state. */
static inline double
chan_lost(struct chan *ch, uint32_t len)
{
	if (!ch->has_ber)
		return ch->p;
	if (len != ch->cache_len) {
		/* 1 - (1 - p)(1 - ber)^bits, as p + (1 - p)(1 - e^(bits log(1 - ber))) */
		ch->cache_len = len;
		ch->cache_lost = ch->p - (1.0 - ch->p) * expm1(8.0 * (double)len * ch->l1p);
	}
	return ch->cache_lost;
}

static uint64_t
sojourn(struct ge_cursor *g, double mean_ns)
{
	double d = -mean_ns * log(u01_open0(g->rng)) + 0.5;

	return d < 1.0 ? 1 : (uint64_t)d;
}

static void
ge_start(struct sgw_linkem *lm, struct ge_cursor *g, const uint64_t rng[4])
{
	memcpy(g->rng, rng, sizeof(g->rng));
	g->state = 0;
	g->entered_ns = lm->t0;
	g->next_ns = lm->t0 + sojourn(g, lm->mean_ns[0]);
}

/* Walk the chain up to t; with acc, count the completed sojourns. */
static inline void
ge_advance(struct sgw_linkem *lm, struct ge_cursor *g, uint64_t t, bool acc)
{
	while (g->next_ns <= t) {
		if (acc) {
			lm->obs_state_ns[g->state] += g->next_ns - g->entered_ns;
			lm->obs_changes++;
		}
		g->entered_ns = g->next_ns;
		g->state ^= 1;
		g->next_ns += sojourn(g, lm->mean_ns[g->state]);
	}
}

struct sgw_linkem *
sgw_linkem_create(const struct sgw_linkem_conf *conf, uint64_t seed, uint64_t now_ns)
{
	struct sgw_linkem *lm;
	uint64_t sm = seed, rng_chan[4];
	uint32_t cap, i;

	if (sgw_linkem_conf_check(conf, NULL, 0) != 0)
		return NULL;
	cap = conf->rate_bps != 0 ? conf->queue_pkts : 0;
	lm = calloc(1, sizeof(*lm) + (size_t)cap * sizeof(lm->ring_mem[0]));
	if (lm == NULL)
		return NULL;
	lm->c = *conf;
	lm->t0 = now_ns;
	lm->now = now_ns;
	lm->tx_ns = now_ns;
	lm->ring = lm->ring_mem;
	lm->cap = cap;
	lm->dur_bits = UINT64_MAX;

	xo_seed(rng_chan, &sm);
	xo_seed(lm->rng_loss, &sm);
	xo_seed(lm->rng_aqm, &sm);
	xo_seed(lm->rng_jit, &sm);

	switch (conf->loss) {
	case SGW_LOSS_BER:
		chan_init(&lm->ch[0], 0.0, conf->good.ber);
		break;
	case SGW_LOSS_RANDOM:
		chan_init(&lm->ch[0], conf->good.p, 0.0);
		break;
	case SGW_LOSS_GE:
		chan_init(&lm->ch[0], conf->good.p, conf->good.ber);
		chan_init(&lm->ch[1], conf->bad.p, conf->bad.ber);
		lm->mean_ns[0] = conf->good.mean_s * 1e9;
		lm->mean_ns[1] = conf->bad.mean_s * 1e9;
		ge_start(lm, &lm->tx, rng_chan);
		ge_start(lm, &lm->obs, rng_chan);
		break;
	default:
		chan_init(&lm->ch[0], 0.0, 0.0);
		break;
	}
	for (i = 0; i < conf->n_outages; i++)
		lm->out_start[i] = now_ns + conf->outages[i].start_ns;
	return lm;
}

void
sgw_linkem_destroy(struct sgw_linkem *lm)
{
	free(lm);
}

/* Frames whose serialisation has ended by now leave the queue. */
static inline void
queue_drain(struct sgw_linkem *lm, uint64_t now)
{
	while (lm->n > 0 && lm->ring[lm->head].end_ns <= now) {
		lm->q_bytes -= lm->ring[lm->head].len;
		lm->head = lm->head + 1 == lm->cap ? 0 : lm->head + 1;
		lm->n--;
	}
}

static inline uint64_t
busy_until(const struct sgw_linkem *lm)
{
	return lm->tx_ns + (lm->tx_rem != 0);
}

/* Classic RED / gentle RED drop probability at the average queue avg. */
static inline double
red_prob(const struct sgw_linkem_conf *c, double avg)
{
	double mn = c->red_min_bytes, mx = c->red_max_bytes;

	if (avg < mn)
		return 0.0;
	if (avg < mx)
		return c->red_max_p * (avg - mn) / (mx - mn);
	if (c->aqm == SGW_AQM_GRED && avg < 2.0 * mx)
		return c->red_max_p + (1.0 - c->red_max_p) * (avg - mx) / mx;
	return 1.0;
}

/* Is the transmission [start, end) in an outage window? (end == start: the instant) */
static bool
in_outage(const struct sgw_linkem *lm, uint64_t start, uint64_t end)
{
	uint32_t i;

	if (end == start)
		end = start + 1;
	for (i = 0; i < lm->c.n_outages; i++) {
		const struct sgw_outage *o = &lm->c.outages[i];
		uint64_t a = lm->out_start[i], ws;

		if (end <= a)
			continue;
		if (start < a)
			return true;
		if (o->period_ns == 0) {
			if (start < a + o->dur_ns)
				return true;
			continue;
		}
		/* The last window starting at or before start, and the next one. */
		ws = a + (start - a) / o->period_ns * o->period_ns;
		if (start < ws + o->dur_ns || end > ws + o->period_ns)
			return true;
	}
	return false;
}

/* Serialisation time of b bits as ns + remainder / rate. */
static inline void
duration(struct sgw_linkem *lm, uint64_t bits, uint64_t *q, uint64_t *r)
{
	if (bits != lm->dur_bits) {
		lm->dur_bits = bits;
		/* Cannot overflow: bits < 2^36, rate >= 1000 (conf_check). */
		mul_div(bits, NS_PER_S, lm->c.rate_bps, &lm->dur_q, &lm->dur_r);
	}
	*q = lm->dur_q;
	*r = lm->dur_r;
}

static inline enum sgw_linkem_verdict
count(struct sgw_linkem *lm, enum sgw_linkem_verdict v, uint32_t len)
{
	if (v == SGW_LE_PASS) {
		lm->st.delivered_pkts++;
		lm->st.delivered_bytes += len;
	} else {
		lm->st.drop_pkts[v]++;
		lm->st.drop_bytes[v] += len;
	}
	return v;
}

enum sgw_linkem_verdict
sgw_linkem_offer(struct sgw_linkem *lm, uint64_t now_ns, uint32_t len, uint64_t *release_ns)
{
	const struct sgw_linkem_conf *c = &lm->c;
	uint64_t start, end, rel;
	double pl;

	if (now_ns < lm->now)
		now_ns = lm->now;
	lm->now = now_ns;
	lm->st.offered_pkts++;
	lm->st.offered_bytes += len;

	if (c->rate_bps != 0) {
		uint64_t bits = 8 * ((uint64_t)len + c->overhead_bytes), q, r;

		queue_drain(lm, now_ns);
		if (c->aqm != SGW_AQM_DROPTAIL) {
			if (lm->n > 0) {
				lm->avg += c->red_wq * ((double)lm->q_bytes - lm->avg);
			} else if (lm->avg > 0.0 && now_ns > busy_until(lm)) {
				/* Idle since the last frame ended: m small frames' worth. */
				double s_ns = (double)bits * 1e9 / (double)c->rate_bps;
				double m = (double)(now_ns - busy_until(lm)) /
					(s_ns > 1.0 ? s_ns : 1.0);

				lm->avg *= pow(1.0 - c->red_wq, m);
			}
		}
		if (lm->n >= c->queue_pkts ||
		    (c->queue_bytes != 0 && lm->q_bytes + len > c->queue_bytes))
			return count(lm, SGW_LE_DROP_QUEUE, len);
		if (c->aqm != SGW_AQM_DROPTAIL) {
			double p = red_prob(c, lm->avg);

			if (p >= 1.0 || (p > 0.0 && u01(lm->rng_aqm) < p))
				return count(lm, SGW_LE_DROP_QUEUE, len);
		}
		/* On the wire: after the previous frame, or now if the line is idle. */
		if (now_ns >= busy_until(lm)) {
			lm->tx_ns = now_ns;
			lm->tx_rem = 0;
		}
		start = lm->tx_ns;
		duration(lm, bits, &q, &r);
		lm->tx_ns += q;
		lm->tx_rem += r;
		if (lm->tx_rem >= c->rate_bps) {
			lm->tx_rem -= c->rate_bps;
			lm->tx_ns++;
		}
		end = busy_until(lm);
		{
			uint32_t tail = lm->head + lm->n;

			if (tail >= lm->cap)
				tail -= lm->cap;
			lm->ring[tail].end_ns = end;
			lm->ring[tail].len = len;
		}
		lm->n++;
		lm->q_bytes += len;
		if (lm->n > lm->st.queue_pkts_max)
			lm->st.queue_pkts_max = lm->n;
		if (lm->q_bytes > lm->st.queue_bytes_max)
			lm->st.queue_bytes_max = lm->q_bytes > UINT32_MAX ? UINT32_MAX :
				(uint32_t)lm->q_bytes;
	} else {
		start = end = now_ns;
	}

	/* The channel. */
	if (c->n_outages != 0 && in_outage(lm, start, end)) {
		lm->in_burst = false;
		return count(lm, SGW_LE_DROP_OUTAGE, len);
	}
	switch (c->loss) {
	case SGW_LOSS_NONE:
		pl = 0.0;
		break;
	case SGW_LOSS_GE:
		ge_advance(lm, &lm->tx, start, false);
		pl = chan_lost(&lm->ch[lm->tx.state], len);
		break;
	default:
		pl = chan_lost(&lm->ch[0], len);
		break;
	}
	if (pl > 0.0 && (pl >= 1.0 || u01(lm->rng_loss) < pl)) {
		if (!lm->in_burst)
			lm->st.loss_bursts++;
		lm->in_burst = true;
		return count(lm, SGW_LE_DROP_LOSS, len);
	}
	lm->in_burst = false;

	rel = end + c->delay_ns;
	if (c->jitter_ns != 0) {
		uint64_t lo;

		/* Uniform in [0, jitter]: the high half of x * (jitter + 1). */
		rel += mul_hi(xo_next(lm->rng_jit), c->jitter_ns + 1, &lo);
	}
	if (rel < lm->last_release)
		rel = lm->last_release;
	lm->last_release = rel;
	if (release_ns != NULL)
		*release_ns = rel;
	return count(lm, SGW_LE_PASS, len);
}

void
sgw_linkem_get_stats(struct sgw_linkem *lm, uint64_t now_ns, struct sgw_linkem_stats *st)
{
	if (now_ns < lm->now)
		now_ns = lm->now;
	lm->now = now_ns;
	if (lm->c.rate_bps != 0)
		queue_drain(lm, now_ns);
	*st = lm->st;
	st->queue_pkts = lm->n;
	st->queue_bytes = lm->q_bytes > UINT32_MAX ? UINT32_MAX : (uint32_t)lm->q_bytes;
	st->queue_avg_bytes = lm->avg;
	if (lm->c.loss == SGW_LOSS_GE) {
		ge_advance(lm, &lm->tx, now_ns, false);
		ge_advance(lm, &lm->obs, now_ns, true);
		st->state_ns[0] = lm->obs_state_ns[0];
		st->state_ns[1] = lm->obs_state_ns[1];
		st->state_ns[lm->obs.state] += now_ns - lm->obs.entered_ns;
		st->state_changes = lm->obs_changes;
	} else {
		st->state_ns[0] = now_ns - lm->t0;
		st->state_ns[1] = 0;
		st->state_changes = 0;
	}
}

int
sgw_linkem_state(struct sgw_linkem *lm, uint64_t now_ns)
{
	if (now_ns < lm->now)
		now_ns = lm->now;
	lm->now = now_ns;
	if (lm->c.loss != SGW_LOSS_GE)
		return 0;
	ge_advance(lm, &lm->tx, now_ns, false);
	ge_advance(lm, &lm->obs, now_ns, true);
	return lm->obs.state;
}

const char *
sgw_linkem_verdict_name(enum sgw_linkem_verdict v)
{
	switch (v) {
	case SGW_LE_PASS: return "pass";
	case SGW_LE_DROP_QUEUE: return "queue";
	case SGW_LE_DROP_LOSS: return "loss";
	case SGW_LE_DROP_OUTAGE: return "outage";
	default: return "?";
	}
}

const char *
sgw_aqm_name(enum sgw_aqm a)
{
	switch (a) {
	case SGW_AQM_DROPTAIL: return "droptail";
	case SGW_AQM_RED: return "red";
	case SGW_AQM_GRED: return "gred";
	default: return "?";
	}
}

const char *
sgw_loss_model_name(enum sgw_loss_model m)
{
	switch (m) {
	case SGW_LOSS_NONE: return "none";
	case SGW_LOSS_BER: return "ber";
	case SGW_LOSS_RANDOM: return "random";
	case SGW_LOSS_GE: return "gilbert-elliott";
	default: return "?";
	}
}
