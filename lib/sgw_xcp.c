/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * XCP header codec and router controller (contract: sgw_xcp.h; equations,
 * units and the multi-core scheme: docs/xcp.md; wire layout:
 * docs/wire-formats.md).
 *
 * Why integer sums: each packet's terms are computed in double (the same
 * IEEE operations whichever worker sees the packet), rounded once to an
 * integer, and only integers are added. Integer addition is associative, so
 * the totals over N workers equal those of one worker seeing the whole
 * stream bit for bit, and the aggregate, a function of the totals only, is
 * identical too.
 */
#include <math.h>
#include <stdatomic.h>
#include <string.h>

#include "sgw_xcp.h"

#define NS_PER_US 1000.0
#define NS_PER_S 1e9
#define RSC_ONE 65536.0  /* SGW_XCP_S_RSC fixed point: 16 fraction bits */

/* ---- byte order ---- */

static inline uint32_t
get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline void
put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* Two's complement without implementation-defined conversions. */
static inline int32_t
u2s32(uint32_t v)
{
	return v <= INT32_MAX ? (int32_t)v : (int32_t)(v - 0x80000000u) + INT32_MIN;
}

static inline uint32_t
s2u32(int32_t v)
{
	return (uint32_t)v;  /* well defined: modulo 2^32 */
}

/* ---- codec ---- */

static const char *const err_names[SGW_XCP_E__COUNT] = {
	[SGW_XCP_OK] = "ok",
	[SGW_XCP_E_TRUNC] = "trunc",
	[SGW_XCP_E_VERSION] = "bad_version",
	[SGW_XCP_E_HLEN] = "bad_hlen",
	[SGW_XCP_E_HLEN_TRUNC] = "hlen_trunc",
	[SGW_XCP_E_NESTED] = "nested",
};

const char *
sgw_xcp_err_name(enum sgw_xcp_err e)
{
	if ((unsigned)e >= SGW_XCP_E__COUNT)
		return "unknown";
	return err_names[e];
}

enum sgw_xcp_err
sgw_xcp_parse(const uint8_t *p, size_t len, uint8_t xcp_proto, struct sgw_xcp_fields *f)
{
	size_t hlen;

	if (p == NULL || len < SGW_XCPW_LEN)
		return SGW_XCP_E_TRUNC;
	if ((p[SGW_XCPW_OFF_VER_FLAGS] >> 4) != SGW_XCPW_VERSION)
		return SGW_XCP_E_VERSION;
	/* Longer headers (later fields) are skipped whole: the length says where
	 * the next header starts. */
	hlen = (size_t)p[SGW_XCPW_OFF_HLEN] * 4u;
	if (hlen < SGW_XCPW_LEN)
		return SGW_XCP_E_HLEN;
	if (hlen > len)
		return SGW_XCP_E_HLEN_TRUNC;
	/* XCP in XCP would let a sender stack headers for a gateway to walk. */
	if (p[SGW_XCPW_OFF_NEXT] == xcp_proto)
		return SGW_XCP_E_NESTED;
	f->next = p[SGW_XCPW_OFF_NEXT];
	f->flags = p[SGW_XCPW_OFF_VER_FLAGS] & SGW_XCPW_F_MASK;
	f->hlen = (uint16_t)hlen;
	f->rtt_us = get_be32(p + SGW_XCPW_OFF_RTT);
	f->cwnd = get_be32(p + SGW_XCPW_OFF_CWND);
	f->feedback = u2s32(get_be32(p + SGW_XCPW_OFF_FEEDBACK));
	f->reverse = u2s32(get_be32(p + SGW_XCPW_OFF_REVERSE));
	return SGW_XCP_OK;
}

size_t
sgw_xcp_build(uint8_t *p, size_t cap, uint8_t xcp_proto, const struct sgw_xcp_fields *f)
{
	if (p == NULL || cap < SGW_XCPW_LEN || f->next == xcp_proto)
		return 0;
	p[SGW_XCPW_OFF_NEXT] = f->next;
	p[SGW_XCPW_OFF_VER_FLAGS] =
		(uint8_t)(SGW_XCPW_VERSION << 4 | (f->flags & SGW_XCPW_F_MASK));
	p[SGW_XCPW_OFF_HLEN] = SGW_XCPW_LEN / 4;
	p[SGW_XCPW_OFF_RSVD] = 0;
	put_be32(p + SGW_XCPW_OFF_RTT, f->rtt_us);
	put_be32(p + SGW_XCPW_OFF_CWND, f->cwnd);
	put_be32(p + SGW_XCPW_OFF_FEEDBACK, s2u32(f->feedback));
	put_be32(p + SGW_XCPW_OFF_REVERSE, s2u32(f->reverse));
	return SGW_XCPW_LEN;
}

static void
patch32(uint8_t *p, uint16_t off, uint32_t v, struct sgw_xcp_patch *patch)
{
	if (patch != NULL) {
		patch->off = off;
		patch->len = 4;
		memcpy(patch->old_b, p + off, 4);
	}
	put_be32(p + off, v);
	if (patch != NULL)
		memcpy(patch->new_b, p + off, 4);
}

int
sgw_xcp_lower_feedback(uint8_t *p, size_t len, int32_t fb, struct sgw_xcp_patch *patch)
{
	if (p == NULL || len < SGW_XCPW_LEN)
		return -1;
	/* Routers only lower: the smallest feedback on the path wins. */
	if (fb >= u2s32(get_be32(p + SGW_XCPW_OFF_FEEDBACK)))
		return 0;
	patch32(p, SGW_XCPW_OFF_FEEDBACK, s2u32(fb), patch);
	return 1;
}

int
sgw_xcp_set_reverse(uint8_t *p, size_t len, int32_t rev, struct sgw_xcp_patch *patch)
{
	if (p == NULL || len < SGW_XCPW_LEN)
		return -1;
	/* The flag byte changes too: the patch covers only the field, so a
	 * caller that checksums the header must recompute (the receiver builds
	 * this header anyway). */
	p[SGW_XCPW_OFF_VER_FLAGS] |= SGW_XCPW_F_REVERSE;
	patch32(p, SGW_XCPW_OFF_REVERSE, s2u32(rev), patch);
	return 1;
}

static uint32_t
csum_word(uint32_t sum, uint16_t old_w, uint16_t new_w)
{
	/* RFC 1624 eqn. 3: HC' = ~(~HC + ~m + m') */
	sum += (uint16_t)~old_w;
	sum += new_w;
	return sum;
}

uint16_t
sgw_xcp_csum_adjust(uint16_t csum, const struct sgw_xcp_patch *patch)
{
	uint32_t sum = (uint16_t)~csum;
	unsigned i;

	for (i = 0; i + 1 < patch->len && i + 1 < sizeof(patch->old_b); i += 2) {
		uint16_t o = (uint16_t)(patch->old_b[i] << 8 | patch->old_b[i + 1]);
		uint16_t n = (uint16_t)(patch->new_b[i] << 8 | patch->new_b[i + 1]);

		sum = csum_word(sum, o, n);
	}
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/* ---- accumulators ---- */

static const char *const sum_names[SGW_XCP_S__COUNT] = {
	[SGW_XCP_S_BYTES] = "bytes",
	[SGW_XCP_S_PKTS] = "pkts",
	[SGW_XCP_S_XBYTES] = "xcp_bytes",
	[SGW_XCP_S_XPKTS] = "xcp_pkts",
	[SGW_XCP_S_RTT_B] = "rtt_us_bytes",
	[SGW_XCP_S_RSC] = "rtt_size_per_cwnd_q16",
	[SGW_XCP_S_R2SC] = "rtt2_size_per_cwnd",
	[SGW_XCP_S_NORTT] = "no_rtt",
	[SGW_XCP_S_CLAMPED] = "rtt_clamped",
	[SGW_XCP_S_FB_POS] = "fb_pos_bytes",
	[SGW_XCP_S_FB_NEG] = "fb_neg_bytes",
	[SGW_XCP_S_LOWERED] = "lowered",
	[SGW_XCP_S_BAD] = "bad_header",
};

const char *
sgw_xcp_sum_name(enum sgw_xcp_sum s)
{
	if ((unsigned)s >= SGW_XCP_S__COUNT)
		return "unknown";
	return sum_names[s];
}

void
sgw_xcp_acc_init(struct sgw_xcp_acc *a)
{
	unsigned i;

	for (i = 0; i < SGW_XCP_S__COUNT; i++)
		atomic_init(&a->v[i], 0);
}

void
sgw_xcp_acc_read(const struct sgw_xcp_acc *a, struct sgw_xcp_sums *out)
{
	unsigned i;

	for (i = 0; i < SGW_XCP_S__COUNT; i++)
		out->v[i] = atomic_load_explicit(&a->v[i], memory_order_relaxed);
}

static inline void
bump(struct sgw_xcp_acc *a, enum sgw_xcp_sum s, uint64_t v)
{
	/* One writer: no read-modify-write instruction needed. */
	uint64_t x = atomic_load_explicit(&a->v[s], memory_order_relaxed);

	atomic_store_explicit(&a->v[s], x + v, memory_order_relaxed);
}

void
sgw_xcp_acc_bump(struct sgw_xcp_acc *a, enum sgw_xcp_sum s, uint64_t v)
{
	if ((unsigned)s < SGW_XCP_S__COUNT)
		bump(a, s, v);
}

void
sgw_xcp_on_other(struct sgw_xcp_acc *a, uint32_t size)
{
	bump(a, SGW_XCP_S_BYTES, size);
	bump(a, SGW_XCP_S_PKTS, 1);
}

/* ---- controller ---- */

void
sgw_xcp_conf_default(struct sgw_xcp_conf *c)
{
	c->alpha = 0.4;
	c->beta = 0.226;
	c->gamma = 0.1;
	c->d_init_ns = 100000000ull;
	c->d_min_ns = 1000000ull;
	c->rtt_max_ns = 10000000000ull;
	c->qwin_min_ns = 2000000ull;
}

int
sgw_xcp_conf_check(const struct sgw_xcp_conf *c)
{
	/* The negations catch NaN too. */
	if (!(c->alpha > 0 && c->alpha < 1) || !(c->beta > 0 && c->beta < 1) ||
	    !(c->gamma >= 0 && c->gamma <= 1))
		return -1;
	if (c->d_min_ns == 0 || c->d_min_ns > c->d_init_ns || c->d_init_ns > c->rtt_max_ns)
		return -1;
	/* 1 s at least: a GEO round trip is ~0.55-0.9 s and must not be cut;
	 * 60 s at most keeps rtt_us^2 * size within 64 bits. */
	if (c->rtt_max_ns < 1000000000ull || c->rtt_max_ns > 60000000000ull)
		return -1;
	return 0;
}

static uint64_t
sums_total(const struct sgw_xcp_sums *snaps, uint32_t n, struct sgw_xcp_sums *tot)
{
	uint32_t i, k;

	memset(tot, 0, sizeof(*tot));
	for (i = 0; i < n; i++)
		for (k = 0; k < SGW_XCP_S__COUNT; k++)
			tot->v[k] += snaps[i].v[k];  /* modulo 2^64, like the sums */
	return tot->v[SGW_XCP_S_BYTES];
}

/* Each worker's budget-share sums at the start of an interval. */
static void
wbase_take(struct sgw_xcp_ctl *ctl, const struct sgw_xcp_sums *snaps, uint32_t n)
{
	uint32_t w;

	for (w = 0; w < n; w++) {
		ctl->wbase[w].rsc = snaps[w].v[SGW_XCP_S_RSC];
		ctl->wbase[w].xbytes = snaps[w].v[SGW_XCP_S_XBYTES];
	}
}

int
sgw_xcp_ctl_init(const struct sgw_xcp_conf *c, struct sgw_xcp_ctl *ctl, uint64_t now,
		 const struct sgw_xcp_sums *snaps, uint32_t n, struct sgw_xcp_params *out)
{
	uint32_t w;

	if (n == 0 || n > SGW_XCP_MAX_WORKERS)
		return -1;
	memset(ctl, 0, sizeof(*ctl));
	ctl->t_start_ns = now;
	ctl->d_ns = c->d_init_ns;
	ctl->n_workers = n;
	if (snaps != NULL) {
		sums_total(snaps, n, &ctl->base);
		wbase_take(ctl, snaps, n);
	}
	for (w = 0; w < n; w++) {
		memset(&out[w], 0, sizeof(out[w]));
		out[w].rtt_max_us = (uint32_t)(c->rtt_max_ns / 1000u);
	}
	return 0;
}

void
sgw_xcp_aggregate(const struct sgw_xcp_conf *c, const struct sgw_xcp_ctl *prev,
		  const struct sgw_xcp_sums *snaps, uint32_t n, double capacity_Bps,
		  double queue_bytes, uint64_t now, struct sgw_xcp_ctl *next,
		  struct sgw_xcp_params *out)
{
	struct sgw_xcp_sums tot, dl;
	struct sgw_xcp_telem t;
	double dt_us, d_us, y, xb, rsc_us, phi, h, pos, neg, xi_p = 0, xi_n = 0;
	uint64_t d_ns;
	uint32_t k, w;

	if (n == 0 || n > SGW_XCP_MAX_WORKERS)
		return;
	sums_total(snaps, n, &tot);
	for (w = 0; w < n; w++) {
		memset(&out[w], 0, sizeof(out[w]));
		out[w].rtt_max_us = (uint32_t)(c->rtt_max_ns / 1000u);
		out[w].epoch = prev->epoch;
	}
	if (now <= prev->t_start_ns || n != prev->n_workers) {
		if (next != prev)
			*next = *prev;
		return;
	}
	if (!(capacity_Bps >= 0))
		capacity_Bps = 0;
	if (!(queue_bytes >= 0))
		queue_bytes = 0;
	for (k = 0; k < SGW_XCP_S__COUNT; k++)
		dl.v[k] = tot.v[k] - prev->base.v[k];
	dt_us = (double)(now - prev->t_start_ns) / NS_PER_US;

	/* d: bytes-weighted mean of H_rtt; the last one when no RTT was seen. */
	d_ns = prev->d_ns;
	xb = (double)dl.v[SGW_XCP_S_XBYTES];
	if (dl.v[SGW_XCP_S_XBYTES] != 0) {
		double m = (double)dl.v[SGW_XCP_S_RTT_B] / xb * NS_PER_US;

		d_ns = m >= (double)c->rtt_max_ns ? c->rtt_max_ns : (uint64_t)(m + 0.5);
		if (d_ns < c->d_min_ns)
			d_ns = c->d_min_ns;
	}
	d_us = (double)d_ns / NS_PER_US;

	/* Efficiency: phi = alpha d S - beta Q (bytes), S = C - y / interval. */
	y = (double)dl.v[SGW_XCP_S_BYTES];
	memset(&t, 0, sizeof(t));
	t.interval_ns = now - prev->t_start_ns;
	t.d_ns = d_ns;
	t.capacity_Bps = capacity_Bps;
	t.input_Bps = y / (dt_us / 1e6);
	t.spare_Bps = capacity_Bps - t.input_Bps;
	t.queue_bytes = queue_bytes;
	phi = c->alpha * (d_us / 1e6) * t.spare_Bps - c->beta * queue_bytes;
	/* Fairness: shuffle gamma of the traffic of one mean RTT. */
	h = c->gamma * t.input_Bps * (d_us / 1e6) - fabs(phi);
	if (h < 0)
		h = 0;
	pos = h + (phi > 0 ? phi : 0);
	neg = h + (phi < 0 ? -phi : 0);

	/*
	 * Katabi: xi_p = pos / (d sum(rtt s / cwnd)), xi_n = neg / (d sum s),
	 * the sums over one control interval. The sums here are over the
	 * interval as it ran (dt, which the caller may end late) and the
	 * feedback is handed out over the next one (d), so each sum is scaled
	 * to d: sum * d / dt. With dt = d this is the paper's formula.
	 */
	rsc_us = (double)dl.v[SGW_XCP_S_RSC] / RSC_ONE;
	if (rsc_us > 0)
		xi_p = pos * dt_us / (d_us * d_us * rsc_us);
	if (xb > 0)
		xi_n = neg * dt_us / (d_us * d_us * xb);

	t.phi_bytes = phi;
	t.h_bytes = h;
	t.flows = rsc_us / dt_us;
	t.rtt_flow_ns = rsc_us > 0 ? (double)dl.v[SGW_XCP_S_R2SC] / rsc_us * NS_PER_US : 0;
	t.delta = dl;

	/*
	 * Budgets per worker, in proportion to its part of the sums the
	 * budgets are spread over. Read each worker's delta before *next is
	 * written (next may be prev).
	 */
	for (w = 0; w < n; w++) {
		double rw = (double)(snaps[w].v[SGW_XCP_S_RSC] - prev->wbase[w].rsc) / RSC_ONE;
		double sw = (double)(snaps[w].v[SGW_XCP_S_XBYTES] - prev->wbase[w].xbytes);

		out[w].epoch = prev->epoch + 1;
		out[w].xi_p = xi_p;
		out[w].xi_n = xi_n;
		out[w].pos_budget = rsc_us > 0 ? pos * (rw / rsc_us) : 0;
		out[w].neg_budget = xb > 0 ? neg * (sw / xb) : 0;
	}

	next->t_start_ns = now;
	next->d_ns = d_ns;
	next->epoch = prev->epoch + 1;
	next->n_workers = n;
	next->base = tot;
	next->last = t;
	next->pos_budget = rsc_us > 0 ? pos : 0;
	next->neg_budget = xb > 0 ? neg : 0;
	wbase_take(next, snaps, n);
}

/* The header values as the controller uses them (both the sums and the
 * feedback apply the same clamps). */
static inline void
norm(const struct sgw_xcp_params *p, uint32_t size, uint32_t *rtt_us, uint32_t *cwnd,
     bool *clamped)
{
	*clamped = false;
	if (*rtt_us > p->rtt_max_us) {
		*rtt_us = p->rtt_max_us;
		*clamped = true;
	}
	if (*cwnd < size)
		*cwnd = size;
	if (*cwnd == 0)
		*cwnd = 1;
}

static inline int32_t
fb_round(double fb)
{
	fb = floor(fb + 0.5);
	if (fb >= (double)INT32_MAX)
		return INT32_MAX;
	if (fb <= (double)INT32_MIN)
		return INT32_MIN;
	if (fb != fb)
		return 0;
	return (int32_t)fb;
}

int32_t
sgw_xcp_feedback(const struct sgw_xcp_params *p, uint32_t size, uint32_t rtt_us,
		 uint32_t cwnd)
{
	bool clamped;

	if (rtt_us == 0)
		return 0;
	norm(p, size, &rtt_us, &cwnd, &clamped);
	return fb_round(p->xi_p * (double)rtt_us * rtt_us * size / (double)cwnd -
			p->xi_n * (double)rtt_us * size);
}

int32_t
sgw_xcp_on_packet(struct sgw_xcp_acc *a, struct sgw_xcp_params *p, uint32_t size,
		  uint32_t rtt_us, uint32_t cwnd)
{
	double r, s, pos, neg;
	bool clamped;
	int32_t fb;

	bump(a, SGW_XCP_S_BYTES, size);
	bump(a, SGW_XCP_S_PKTS, 1);
	if (rtt_us == 0) {
		/* The sender has no RTT yet: no increase until it has one. */
		bump(a, SGW_XCP_S_NORTT, 1);
		return 0;
	}
	norm(p, size, &rtt_us, &cwnd, &clamped);
	if (clamped)
		bump(a, SGW_XCP_S_CLAMPED, 1);
	r = rtt_us;
	s = size;
	bump(a, SGW_XCP_S_XBYTES, size);
	bump(a, SGW_XCP_S_XPKTS, 1);
	bump(a, SGW_XCP_S_RTT_B, (uint64_t)rtt_us * size);
	/* Each term rounded once, the same way on every worker: < 2^42 and
	 * < 2^52 (rtt <= 60 s), exact in a double. */
	bump(a, SGW_XCP_S_RSC, (uint64_t)(r * s * RSC_ONE / (double)cwnd + 0.5));
	bump(a, SGW_XCP_S_R2SC, (uint64_t)(r * r * s / (double)cwnd + 0.5));
	/* The residues keep an interval from handing out more than its budget
	 * when the traffic grows faster than last interval's sums foresaw. */
	pos = p->xi_p * r * r * s / (double)cwnd;
	neg = p->xi_n * r * s;
	if (pos > p->pos_left)
		pos = p->pos_left;
	if (neg > p->neg_left)
		neg = p->neg_left;
	p->pos_left -= pos;
	p->neg_left -= neg;
	fb = fb_round(pos - neg);
	if (fb > 0)
		bump(a, SGW_XCP_S_FB_POS, (uint64_t)fb);
	else if (fb < 0)
		bump(a, SGW_XCP_S_FB_NEG, (uint64_t)(-(int64_t)fb));
	return fb;
}

int
sgw_xcp_process(struct sgw_xcp_acc *a, struct sgw_xcp_params *p, uint8_t xcp_proto,
		uint8_t *hdr, size_t len, uint32_t size, struct sgw_xcp_patch *patch,
		enum sgw_xcp_err *err)
{
	struct sgw_xcp_fields f;
	enum sgw_xcp_err e;
	int32_t fb;
	int r;

	e = sgw_xcp_parse(hdr, len, xcp_proto, &f);
	if (err != NULL)
		*err = e;
	if (e != SGW_XCP_OK) {
		/* It still takes its place in the queue. */
		bump(a, SGW_XCP_S_BAD, 1);
		sgw_xcp_on_other(a, size);
		return -1;
	}
	fb = sgw_xcp_on_packet(a, p, size, f.rtt_us, f.cwnd);
	r = sgw_xcp_lower_feedback(hdr, len, fb, patch);
	if (r == 1)
		bump(a, SGW_XCP_S_LOWERED, 1);
	return r;
}

/* ---- publication ---- */

static void
params_to_words(const struct sgw_xcp_params *p, uint64_t w[SGW_XCP_PUB_WORDS])
{
	w[0] = p->epoch;
	memcpy(&w[1], &p->xi_p, sizeof(double));
	memcpy(&w[2], &p->xi_n, sizeof(double));
	w[3] = p->rtt_max_us;
	memcpy(&w[4], &p->pos_budget, sizeof(double));
	memcpy(&w[5], &p->neg_budget, sizeof(double));
}

void
sgw_xcp_pub_init(struct sgw_xcp_pub *pub, const struct sgw_xcp_params *p)
{
	uint64_t w[SGW_XCP_PUB_WORDS];
	unsigned i;

	params_to_words(p, w);
	atomic_init(&pub->seq, 0);
	for (i = 0; i < SGW_XCP_PUB_WORDS; i++)
		atomic_init(&pub->w[i], w[i]);
}

void
sgw_xcp_pub_write(struct sgw_xcp_pub *pub, const struct sgw_xcp_params *p)
{
	uint64_t w[SGW_XCP_PUB_WORDS];
	uint64_t s = atomic_load_explicit(&pub->seq, memory_order_relaxed);
	unsigned i;

	params_to_words(p, w);
	atomic_store_explicit(&pub->seq, s + 1, memory_order_relaxed);
	/* The odd seq is visible before any word changes. */
	atomic_thread_fence(memory_order_release);
	for (i = 0; i < SGW_XCP_PUB_WORDS; i++)
		atomic_store_explicit(&pub->w[i], w[i], memory_order_relaxed);
	atomic_store_explicit(&pub->seq, s + 2, memory_order_release);
}

bool
sgw_xcp_pub_refresh(const struct sgw_xcp_pub *pub, struct sgw_xcp_params *local)
{
	uint64_t w[SGW_XCP_PUB_WORDS];
	uint64_t s1, s2;
	unsigned i;

	s1 = atomic_load_explicit(&pub->seq, memory_order_acquire);
	if ((s1 & 1) != 0 || s1 == local->seq)
		return false;
	for (i = 0; i < SGW_XCP_PUB_WORDS; i++)
		w[i] = atomic_load_explicit(&pub->w[i], memory_order_relaxed);
	/* The words are read before seq is read again. */
	atomic_thread_fence(memory_order_acquire);
	s2 = atomic_load_explicit(&pub->seq, memory_order_relaxed);
	if (s1 != s2)
		return false;  /* torn: keep the old copy, try at the next packet */
	local->epoch = w[0];
	memcpy(&local->xi_p, &w[1], sizeof(double));
	memcpy(&local->xi_n, &w[2], sizeof(double));
	local->rtt_max_us = (uint32_t)w[3];
	memcpy(&local->pos_budget, &w[4], sizeof(double));
	memcpy(&local->neg_budget, &w[5], sizeof(double));
	local->pos_left = local->pos_budget;
	local->neg_left = local->neg_budget;
	local->seq = s1;
	return true;
}

/* ---- persistent queue ---- */

void
sgw_xcp_qest_init(struct sgw_xcp_qest *q)
{
	memset(q, 0, sizeof(*q));
}

void
sgw_xcp_qest_sample(struct sgw_xcp_qest *q, const struct sgw_xcp_conf *c, uint64_t now,
		    uint64_t queue_bytes, uint64_t d_ns, double capacity_Bps)
{
	uint64_t win = d_ns, qdelay, sub;
	uint32_t i;

	/* Propagation delay = mean RTT - this queue's own delay. */
	if (capacity_Bps > 0) {
		double qd = (double)queue_bytes / capacity_Bps * NS_PER_S;

		qdelay = qd >= (double)d_ns ? d_ns : (uint64_t)qd;
		win = d_ns - qdelay;
	}
	if (win < c->qwin_min_ns)
		win = c->qwin_min_ns;
	sub = win / SGW_XCP_QEST_SUBS;
	if (sub == 0)
		sub = 1;
	if (!q->started) {
		for (i = 0; i < SGW_XCP_QEST_SUBS; i++)
			q->sub_min[i] = queue_bytes;
		q->cur = 0;
		q->sub_end_ns = now + sub;
		q->sub_len_ns = sub;
		q->last = queue_bytes;
		q->started = 1;
		return;
	}
	/* Open the sub-windows that began since the last sample; those with no
	 * sample hold the last one. At most SUBS: all are replaced by then. */
	for (i = 0; i < SGW_XCP_QEST_SUBS && now >= q->sub_end_ns; i++) {
		q->cur = (q->cur + 1) % SGW_XCP_QEST_SUBS;
		q->sub_min[q->cur] = q->last;
		q->sub_end_ns += sub;
	}
	if (now >= q->sub_end_ns)
		q->sub_end_ns = now + sub;
	q->sub_len_ns = sub;
	if (queue_bytes < q->sub_min[q->cur])
		q->sub_min[q->cur] = queue_bytes;
	q->last = queue_bytes;
}

uint64_t
sgw_xcp_qest_value(const struct sgw_xcp_qest *q, uint64_t now)
{
	uint64_t m = q->last, gone = 0;
	uint32_t i;

	if (!q->started)
		return 0;
	/* Sub-windows that have ended since the last sample: the oldest ones
	 * fall out of the window and the new ones hold the last sample. */
	if (now >= q->sub_end_ns)
		gone = (now - q->sub_end_ns) / q->sub_len_ns + 1;
	for (i = 0; i < SGW_XCP_QEST_SUBS; i++) {
		/* age 0 = current sub-window, SUBS - 1 = oldest */
		uint32_t age = (q->cur + SGW_XCP_QEST_SUBS - i) % SGW_XCP_QEST_SUBS;

		if ((uint64_t)age + gone >= SGW_XCP_QEST_SUBS)
			continue;
		if (q->sub_min[i] < m)
			m = q->sub_min[i];
	}
	return m;
}
