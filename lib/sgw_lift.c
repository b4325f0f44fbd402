/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * BS-LIFT (contract: sgw_lift.h; state machine and design notes:
 * docs/lift.md; wire format: docs/wire-formats.md).
 *
 * Memory, laid out once by sgw_lift_init in the caller's block:
 *
 *   flows   max_flows entries (the TCP Flow Table: key MH address + flow id,
 *           the SA index, the held handles and the timer state), a free list
 *           through them, and an open-addressing index of pow2 >= 2 x max_flows
 *           slots (linear probing, backward-shift deletion: no tombstones, so
 *           a probe never walks more than the index and stays short at load
 *           <= 1/2);
 *   sas     max_sas downlink SAs (key MH address + SPI: SPIs are chosen by the
 *           receiver, so two MHs may pick the same one), each with the highest
 *           ESP sequence number forwarded toward the MH, the out-of-order
 *           state, the RTT estimator and how many flows name it; same index.
 *
 * "Freezing disabled on an SA" is applied to its flows lazily: the SA's epoch
 * moves, and each flow, at its next packet or timer, sees an epoch it has not
 * seen and starts over in the transitory phase. Nothing walks an SA's flows.
 *
 * Sequence numbers (ESP, IPsec ACK numbers) compare in 32-bit serial
 * arithmetic: with extended sequence numbers only the low 32 bits travel.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "sgw_lift.h"
#include "sgw_seq.h"

#define NIL UINT32_MAX
#define EMPTY UINT32_MAX

/* ================================================================== codec */

static const char *const dec_names[SGW_LIFT_DEC__COUNT] = {
	[SGW_LIFT_DEC_OK] = "ok",
	[SGW_LIFT_DEC_TRUNC] = "trunc",
	[SGW_LIFT_DEC_RESERVED] = "reserved",
	[SGW_LIFT_DEC_CTRL_PAYLOAD] = "ctrl_payload",
	[SGW_LIFT_DEC_NO_PAYLOAD] = "no_payload",
	[SGW_LIFT_DEC_ESP_TRUNC] = "esp_trunc",
	[SGW_LIFT_DEC_BAD_STATUS] = "bad_status",
};

const char *
sgw_lift_dec_name(int reason)
{
	if (reason < 0 || reason >= SGW_LIFT_DEC__COUNT)
		return "unknown";
	return dec_names[reason];
}

static inline uint16_t
get16(const uint8_t *p)
{
	return (uint16_t)((p[0] << 8) | p[1]);
}

static inline uint32_t
get32(const uint8_t *p)
{
	return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

static inline void
put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void
put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

int
sgw_lift_decode(const void *buf, size_t len, struct sgw_lift_msg *m)
{
	const uint8_t *p = buf;
	uint8_t f;

	memset(m, 0, sizeof(*m));
	if (p == NULL || len < SGW_LIFT_LEN)
		return SGW_LIFT_DEC_TRUNC;
	f = p[0];
	m->flags = f;
	m->flow_id = get16(p + 1);
	m->payload_len = (uint32_t)(len - SGW_LIFT_LEN);
	if (f & SGW_LIFT_BIT_A) {
		/* TCP ACK (D F S) or FrACK (no flags); the protected packet follows. */
		m->kind = (f & SGW_LIFT_BIT_T) ? SGW_LIFT_K_FRACK : SGW_LIFT_K_TCP_ACK;
		if (m->kind == SGW_LIFT_K_TCP_ACK) {
			if (f & 0x07)
				return SGW_LIFT_DEC_RESERVED;
			m->word = get32(p + 3);
		} else if ((f & 0x3f) != 0 || get32(p + 3) != 0) {
			return SGW_LIFT_DEC_RESERVED;
		}
		m->next = p[7];
		if (len == SGW_LIFT_LEN)
			return SGW_LIFT_DEC_NO_PAYLOAD;
		if (m->next == SGW_LIFT_IPPROTO_ESP) {
			if (len < SGW_LIFT_LEN + SGW_LIFT_ESP_HDR_LEN)
				return SGW_LIFT_DEC_ESP_TRUNC;
			m->has_esp = 1;
			m->esp_spi = get32(p + 8);
			m->esp_seq = get32(p + 12);
		}
		return SGW_LIFT_DEC_OK;
	}
	/* Control class: setup / teardown, or satgw's acknowledgement of one (K). */
	if (f & 0x1f)
		return SGW_LIFT_DEC_RESERVED;
	if (f & SGW_LIFT_BIT_K) {
		m->kind = (f & SGW_LIFT_BIT_T) ? SGW_LIFT_K_TEARDOWN_ACK : SGW_LIFT_K_SETUP_ACK;
		m->word = get32(p + 3);
		m->next = p[7];
		if (m->next >= SGW_LIFT_ST__COUNT)
			return SGW_LIFT_DEC_BAD_STATUS;
	} else if (f & SGW_LIFT_BIT_T) {
		m->kind = SGW_LIFT_K_TEARDOWN;
		if (get32(p + 3) != 0 || p[7] != 0)
			return SGW_LIFT_DEC_RESERVED;
	} else {
		m->kind = SGW_LIFT_K_SETUP;
		m->word = get32(p + 3);
		m->next = p[7];
	}
	if (len > SGW_LIFT_LEN)
		return SGW_LIFT_DEC_CTRL_PAYLOAD;
	return SGW_LIFT_DEC_OK;
}

static size_t
build(void *buf, size_t cap, uint8_t flags, uint16_t flow_id, uint32_t word, uint8_t last)
{
	uint8_t *p = buf;

	if (p == NULL || cap < SGW_LIFT_LEN)
		return 0;
	p[0] = flags;
	put16(p + 1, flow_id);
	put32(p + 3, word);
	p[7] = last;
	return SGW_LIFT_LEN;
}

size_t
sgw_lift_build_setup(void *buf, size_t cap, uint16_t flow_id, uint32_t spi, uint8_t proto)
{
	return build(buf, cap, 0, flow_id, spi, proto);
}

size_t
sgw_lift_build_teardown(void *buf, size_t cap, uint16_t flow_id)
{
	return build(buf, cap, SGW_LIFT_BIT_T, flow_id, 0, 0);
}

size_t
sgw_lift_build_tcp_ack(void *buf, size_t cap, uint8_t flags, uint16_t flow_id, uint32_t ack_num,
		       uint8_t next)
{
	flags &= SGW_LIFT_BIT_D | SGW_LIFT_BIT_F | SGW_LIFT_BIT_S;
	return build(buf, cap, (uint8_t)(SGW_LIFT_BIT_A | flags), flow_id, ack_num, next);
}

size_t
sgw_lift_build_frack(void *buf, size_t cap, uint16_t flow_id, uint8_t next)
{
	return build(buf, cap, SGW_LIFT_BIT_A | SGW_LIFT_BIT_T, flow_id, 0, next);
}

size_t
sgw_lift_build_ctrl_ack(void *buf, size_t cap, uint8_t kind, uint16_t flow_id, uint32_t spi,
			uint8_t status)
{
	uint8_t f;

	if (kind == SGW_LIFT_K_SETUP_ACK)
		f = SGW_LIFT_BIT_K;
	else if (kind == SGW_LIFT_K_TEARDOWN_ACK)
		f = SGW_LIFT_BIT_K | SGW_LIFT_BIT_T;
	else
		return 0;
	if (status >= SGW_LIFT_ST__COUNT)
		return 0;
	return build(buf, cap, f, flow_id, spi, status);
}

/* RFC 1624 incremental update of a 16-bit one's-complement checksum. */
static uint16_t
csum_update16(uint16_t csum, uint16_t old, uint16_t new_)
{
	uint32_t s = (uint16_t)~csum;

	s += (uint16_t)~old;
	s += new_;
	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

size_t
sgw_lift_strip_ipv4(uint8_t *pkt, size_t len, uint8_t lift_proto)
{
	size_t ihl;
	uint16_t tot, ck, w_old, w_new;
	uint8_t next;

	if (pkt == NULL || len < 20 || (pkt[0] >> 4) != 4)
		return 0;
	ihl = (size_t)(pkt[0] & 0x0f) * 4;
	tot = get16(pkt + 2);
	if (ihl < 20 || pkt[9] != lift_proto || tot > len || tot < ihl + SGW_LIFT_LEN)
		return 0;
	if (!(pkt[ihl] & SGW_LIFT_BIT_A))
		return 0;  /* control packets end at the hub */
	next = pkt[ihl + 7];
	ck = get16(pkt + 10);
	/* total length */
	ck = csum_update16(ck, tot, (uint16_t)(tot - SGW_LIFT_LEN));
	put16(pkt + 2, (uint16_t)(tot - SGW_LIFT_LEN));
	/* protocol shares a 16-bit word with TTL */
	w_old = get16(pkt + 8);
	w_new = (uint16_t)((pkt[8] << 8) | next);
	ck = csum_update16(ck, w_old, w_new);
	pkt[9] = next;
	put16(pkt + 10, ck);
	memmove(pkt + SGW_LIFT_LEN, pkt, ihl);
	return SGW_LIFT_LEN;
}

size_t
sgw_lift_strip_ipv6(uint8_t *pkt, size_t len, uint8_t lift_proto)
{
	uint16_t plen;

	if (pkt == NULL || len < 40 + SGW_LIFT_LEN || (pkt[0] >> 4) != 6 || pkt[6] != lift_proto)
		return 0;
	plen = get16(pkt + 4);
	if (plen < SGW_LIFT_LEN || (size_t)plen + 40 > len)
		return 0;
	if (!(pkt[40] & SGW_LIFT_BIT_A))
		return 0;
	pkt[6] = pkt[40 + 7];
	put16(pkt + 4, (uint16_t)(plen - SGW_LIFT_LEN));
	memmove(pkt + SGW_LIFT_LEN, pkt, 40);
	return SGW_LIFT_LEN;
}

/* ================================================================ machine */

struct lflow {
	struct sgw_lift_addr mh;
	uint16_t flow_id;
	uint8_t in_use;
	uint8_t proto;
	uint32_t sa;           /* SA index */
	uint32_t gen;          /* bumped on free: stale timers are refused */
	uint32_t sa_epoch;     /* the SA epoch this flow last acted under */
	uint32_t next_free;
	uint8_t timer_running; /* local timer; 0 = transitory phase */
	uint8_t frozen;        /* FrACK forwarded, TCP ACK held */
	uint8_t has_pair;      /* pair_ack held (with pair_frack unless frozen) */
	uint8_t has_dup;
	uint8_t has_pend;
	uint8_t pend_esp;
	uint8_t ack_valid;
	uint8_t fh_valid;
	uint8_t suspended;
	uint8_t has_spare;     /* the FrACK of the last TCP ACK that went on at once */
	uint32_t ack_rx;       /* highest IPsec ACK number received */
	uint32_t fh_ack;       /* highest IPsec ACK number forwarded to the FH */
	uint32_t pair_num;     /* IPsec ACK number of the held TCP ACK */
	uint32_t pend_spi;
	uint32_t pend_seq;
	uint64_t timer_at;
	uint64_t armed_at;     /* the caller's timer, or NEVER */
	uint64_t pair_ack;
	uint64_t pair_frack;
	uint64_t dup;
	uint64_t pend;
	uint64_t spare;
	uint64_t freeze_start;
	uint64_t thaw_at;      /* frozen by a held pair with conf thaw: its end, else NEVER */
	uint64_t acc_t;        /* frozen time counted up to here */
	uint64_t susp_until;
	uint64_t ws;           /* share window start */
	uint64_t cur;          /* frozen ns in [ws, ws + W) */
	uint64_t prev;         /* frozen ns in the window before */
};

struct lsa {
	struct sgw_lift_addr mh;
	uint32_t spi;
	uint8_t in_use;
	uint8_t hi_valid;
	uint8_t ooo;
	uint8_t rtt_pending;
	uint8_t have_rtt;
	uint8_t acked_valid;
	uint32_t nflows;
	uint32_t hi;           /* highest ESP seq forwarded toward the MH */
	uint32_t acked;        /* highest IPsec ACK number over its flows */
	uint32_t ooo_mark;     /* freezing back on once acked reaches this */
	uint32_t epoch;
	uint32_t rtt_seq;
	uint32_t next_free;
	uint64_t rtt_t;
	uint64_t srtt;
	uint64_t rttvar;
};

struct hidx {
	uint32_t *slot;
	uint32_t mask;
};

struct sgw_lift {
	struct sgw_lift_conf c;
	uint64_t now;
	struct lflow *fl;
	struct lsa *sa;
	struct hidx fidx;
	struct hidx sidx;
	uint32_t fl_free;
	uint32_t sa_free;
	uint64_t share_limit;  /* ns of the window that may be frozen */
	uint32_t n_frozen;     /* flows frozen now (kept, so stats never scan the table) */
	struct sgw_lift_act scratch;
	struct sgw_lift_stats st;
};

/* ------------------------------------------------------- configuration */

void
sgw_lift_conf_default(struct sgw_lift_conf *c)
{
	*c = (struct sgw_lift_conf){
		.max_flows = 4096,
		.max_sas = 0,
		.timer_mode = SGW_LIFT_TIMER_FIXED,
		.timer_fixed_ns = 980000000ull,
		.var_floor_ns = 200000000ull,
		.margin_ns = 20000000ull,
		.timer_min_ns = 200000000ull,
		.timer_max_ns = 980000000ull,
		.rtt_sample_max_ns = 10000000000ull,
		.max_frozen_ns = 15000000000ull,
		.share_window_ns = 60000000000ull,
		.max_share_permille = 500,
		.suspend_ns = 60000000000ull,
		.max_seq_jump = 1u << 20,
		.spare_frack = 1,
	};
}

const char *
sgw_lift_conf_check(const struct sgw_lift_conf *c)
{
	if (c == NULL)
		return "conf";
	if (c->max_flows == 0 || c->max_flows > SGW_LIFT_MAX_ENTRIES)
		return "max_flows";
	if (c->max_sas > SGW_LIFT_MAX_ENTRIES)
		return "max_sas";
	if (c->timer_mode > SGW_LIFT_TIMER_ADAPTIVE)
		return "timer_mode";
	if (c->timer_fixed_ns == 0)
		return "timer_fixed_ns";
	if (c->timer_min_ns == 0 || c->timer_max_ns < c->timer_min_ns)
		return "timer_min_ns";
	if (c->rtt_sample_max_ns == 0)
		return "rtt_sample_max_ns";
	if (c->max_frozen_ns == 0)
		return "max_frozen_ns";
	if (c->share_window_ns == 0 || c->share_window_ns > (1ull << 53))
		return "share_window_ns";
	if (c->max_share_permille == 0 || c->max_share_permille > 1000)
		return "max_share_permille";
	if (c->max_seq_jump == 0 || c->max_seq_jump > (1u << 30))
		return "max_seq_jump";
	if (c->paper_hold > 1)
		return "paper_hold";
	if (c->thaw > 1)
		return "thaw";
	if (c->spare_frack > 1)
		return "spare_frack";
	return NULL;
}

struct layout {
	uint32_t nf, ns, fi, si;
	size_t off_fl, off_sa, off_fi, off_si, total;
};

static size_t
align_up(size_t v)
{
	return (v + 63) & ~(size_t)63;
}

static void
layout_of(const struct sgw_lift_conf *c, struct layout *l)
{
	l->nf = c->max_flows;
	l->ns = c->max_sas ? c->max_sas : c->max_flows;
	l->fi = sgw_pow2_at_least(2 * l->nf);
	l->si = sgw_pow2_at_least(2 * l->ns);
	l->off_fl = align_up(sizeof(struct sgw_lift));
	l->off_sa = align_up(l->off_fl + (size_t)l->nf * sizeof(struct lflow));
	l->off_fi = align_up(l->off_sa + (size_t)l->ns * sizeof(struct lsa));
	l->off_si = align_up(l->off_fi + (size_t)l->fi * sizeof(uint32_t));
	/* + 63: the caller's block may start anywhere */
	l->total = align_up(l->off_si + (size_t)l->si * sizeof(uint32_t)) + 63;
}

size_t
sgw_lift_mem_size(const struct sgw_lift_conf *conf)
{
	struct layout l;

	if (sgw_lift_conf_check(conf) != NULL)
		return 0;
	layout_of(conf, &l);
	return l.total;
}

struct sgw_lift *
sgw_lift_init(void *mem, size_t mem_len, const struct sgw_lift_conf *conf, uint64_t now_ns)
{
	struct layout lo;
	struct sgw_lift *l;
	uint8_t *base;
	uint32_t i;

	if (mem == NULL || sgw_lift_conf_check(conf) != NULL)
		return NULL;
	layout_of(conf, &lo);
	if (mem_len < lo.total)
		return NULL;
	base = (uint8_t *)(((uintptr_t)mem + 63) & ~(uintptr_t)63);
	memset(base, 0, lo.total - 63);
	l = (struct sgw_lift *)base;
	l->c = *conf;
	l->c.max_sas = lo.ns;
	l->now = now_ns;
	l->fl = (struct lflow *)(base + lo.off_fl);
	l->sa = (struct lsa *)(base + lo.off_sa);
	l->fidx.slot = (uint32_t *)(base + lo.off_fi);
	l->fidx.mask = lo.fi - 1;
	l->sidx.slot = (uint32_t *)(base + lo.off_si);
	l->sidx.mask = lo.si - 1;
	for (i = 0; i < lo.fi; i++)
		l->fidx.slot[i] = EMPTY;
	for (i = 0; i < lo.si; i++)
		l->sidx.slot[i] = EMPTY;
	for (i = 0; i < lo.nf; i++)
		l->fl[i].next_free = i + 1 < lo.nf ? i + 1 : NIL;
	for (i = 0; i < lo.ns; i++)
		l->sa[i].next_free = i + 1 < lo.ns ? i + 1 : NIL;
	l->fl_free = 0;
	l->sa_free = 0;
	l->share_limit = (uint64_t)((double)conf->share_window_ns *
				    (double)conf->max_share_permille / 1000.0);
	return l;
}

/* ------------------------------------------------------------ the index */

static uint32_t
hash_key(const struct sgw_lift_addr *a, uint32_t key)
{
	uint64_t x, y;

	memcpy(&x, a->b, 8);
	memcpy(&y, a->b + 8, 8);
	x = x * 0x9E3779B97F4A7C15ull ^ (y + key) * 0xC2B2AE3D27D4EB4Full;
	x ^= x >> 31;
	x *= 0xBF58476D1CE4E5B9ull;
	x ^= x >> 29;
	return (uint32_t)x;
}

static inline bool
addr_eq(const struct sgw_lift_addr *a, const struct sgw_lift_addr *b)
{
	return memcmp(a->b, b->b, 16) == 0;
}

static uint32_t
home_of(const struct sgw_lift *l, const struct hidx *ix, uint32_t e)
{
	if (ix == &l->fidx)
		return hash_key(&l->fl[e].mh, l->fl[e].flow_id) & ix->mask;
	return hash_key(&l->sa[e].mh, l->sa[e].spi) & ix->mask;
}

static uint32_t
flow_find(const struct sgw_lift *l, const struct sgw_lift_addr *mh, uint16_t id)
{
	const struct hidx *ix = &l->fidx;
	uint32_t h = hash_key(mh, id), i, e;

	for (i = 0; i <= ix->mask; i++) {
		e = ix->slot[(h + i) & ix->mask];
		if (e == EMPTY)
			return NIL;
		if (l->fl[e].flow_id == id && addr_eq(&l->fl[e].mh, mh))
			return e;
	}
	return NIL;
}

static uint32_t
sa_find(const struct sgw_lift *l, const struct sgw_lift_addr *mh, uint32_t spi)
{
	const struct hidx *ix = &l->sidx;
	uint32_t h = hash_key(mh, spi), i, e;

	for (i = 0; i <= ix->mask; i++) {
		e = ix->slot[(h + i) & ix->mask];
		if (e == EMPTY)
			return NIL;
		if (l->sa[e].spi == spi && addr_eq(&l->sa[e].mh, mh))
			return e;
	}
	return NIL;
}

/* The index has twice the entries' slots: there is always an empty one. */
static void
idx_insert(struct hidx *ix, uint32_t home, uint32_t e)
{
	uint32_t i;

	for (i = 0; i <= ix->mask; i++) {
		uint32_t s = (home + i) & ix->mask;

		if (ix->slot[s] == EMPTY) {
			ix->slot[s] = e;
			return;
		}
	}
}

/* Backward-shift deletion: later members of the run move up over the hole. */
static void
idx_remove(const struct sgw_lift *l, struct hidx *ix, uint32_t home, uint32_t e)
{
	uint32_t p = NIL, i, j, k;

	for (i = 0; i <= ix->mask; i++) {
		uint32_t s = (home + i) & ix->mask;

		if (ix->slot[s] == EMPTY)
			return;
		if (ix->slot[s] == e) {
			p = s;
			break;
		}
	}
	if (p == NIL)
		return;
	j = p;
	for (i = 0; i <= ix->mask; i++) {
		j = (j + 1) & ix->mask;
		if (ix->slot[j] == EMPTY)
			break;
		k = home_of(l, ix, ix->slot[j]);
		/* Move slot j into the hole p unless its home lies in (p, j]. */
		if (((j - k) & ix->mask) >= ((j - p) & ix->mask)) {
			ix->slot[p] = ix->slot[j];
			p = j;
		}
	}
	ix->slot[p] = EMPTY;
}

/* ------------------------------------------------------------- actions */

static struct sgw_lift_act *
push(struct sgw_lift *l, struct sgw_lift_out *o, uint8_t type)
{
	struct sgw_lift_act *a;

	/* Callers checked SGW_LIFT_MIN_ROOM, which covers every call's worst case. */
	if (o->n >= o->cap) {
		a = &l->scratch;
		l->st.act_overflow++;   /* a bug: the fuzz harness aborts on it */
	} else
		a = &o->act[o->n++];
	memset(a, 0, sizeof(*a));
	a->type = type;
	return a;
}

static void
act_fwd(struct sgw_lift *l, struct sgw_lift_out *o, const struct lflow *f, uint64_t h,
	uint8_t code)
{
	struct sgw_lift_act *a = push(l, o, SGW_LIFT_ACT_FORWARD);

	a->code = code;
	a->handle = h;
	a->flow_id = f ? f->flow_id : 0;
}

static void
act_drop(struct sgw_lift *l, struct sgw_lift_out *o, uint16_t flow_id, uint64_t h, uint8_t why)
{
	struct sgw_lift_act *a = push(l, o, SGW_LIFT_ACT_DROP);

	a->code = why;
	a->handle = h;
	a->flow_id = flow_id;
}

static void
act_ctrl(struct sgw_lift *l, struct sgw_lift_out *o, const struct sgw_lift_addr *mh,
	 uint8_t kind, uint16_t flow_id, uint32_t spi, uint8_t status)
{
	struct sgw_lift_act *a = push(l, o, SGW_LIFT_ACT_CTRL_ACK);

	a->code = status;
	a->code2 = kind;
	a->flow_id = flow_id;
	a->spi = spi;
	a->mh = *mh;
	l->st.ctrl_acks++;
}

/* --------------------------------------------------------- flow helpers */

static uint64_t
timer_ns(const struct sgw_lift *l, const struct lsa *s)
{
	const struct sgw_lift_conf *c = &l->c;
	uint64_t v, var;

	if (c->timer_mode != SGW_LIFT_TIMER_ADAPTIVE || !s->have_rtt)
		return c->timer_fixed_ns;
	var = 4 * s->rttvar;
	if (var < c->var_floor_ns)
		var = c->var_floor_ns;
	v = sgw_add_sat(s->srtt, var);
	v = v > c->margin_ns ? v - c->margin_ns : 0;
	if (v < c->timer_min_ns)
		v = c->timer_min_ns;
	if (v > c->timer_max_ns)
		v = c->timer_max_ns;
	return v;
}

static void
timer_start(struct sgw_lift *l, struct lflow *f, uint64_t now)
{
	f->timer_running = 1;
	f->timer_at = sgw_add_sat(now, timer_ns(l, &l->sa[f->sa]));
}

/* A TCP ACK with IPsec ACK number num went to the FH: did it acknowledge new data? */
static bool
note_fh(struct lflow *f, uint32_t num)
{
	if (f->fh_valid && !SGW_SEQ_GT(num, f->fh_ack))
		return false;
	f->fh_valid = 1;
	f->fh_ack = num;
	return true;
}

/* Sliding-window frozen share: two fixed windows, the older weighted down. */
static void
share_roll(const struct sgw_lift *l, struct lflow *f, uint64_t t)
{
	uint64_t w = l->c.share_window_ns;

	if (t < f->ws + w)
		return;
	if (t < f->ws + 2 * w) {
		f->prev = f->cur;
		f->ws += w;
	} else {
		f->prev = 0;
		f->ws = t - (t - f->ws) % w;
	}
	f->cur = 0;
}

static void
share_accrue(const struct sgw_lift *l, struct lflow *f, uint64_t now)
{
	uint64_t w = l->c.share_window_ns, t, end;
	int i;

	if (!f->frozen || now <= f->acc_t) {
		share_roll(l, f, now);
		return;
	}
	t = f->acc_t;
	for (i = 0; i < 3 && t < now; i++) {
		share_roll(l, f, t);
		end = f->ws + w < now ? f->ws + w : now;
		f->cur += end - t;
		t = end;
	}
	if (t < now) {
		/* Frozen over more than two windows: all of the last one was. */
		share_roll(l, f, now);
		f->prev = w;
		f->cur = now - f->ws;
	}
	f->acc_t = now;
}

static uint64_t
share_est(const struct sgw_lift *l, const struct lflow *f, uint64_t now)
{
	double w = (double)l->c.share_window_ns;
	double el = (double)(now - f->ws);

	if (el > w)
		el = w;
	return f->cur + (uint64_t)((double)f->prev * (w - el) / w);
}

static void
freeze_end(struct sgw_lift *l, struct lflow *f, uint64_t now)
{
	if (!f->frozen)
		return;
	share_accrue(l, f, now);
	l->st.frozen_ns += now - f->freeze_start;
	f->frozen = 0;
	l->n_frozen--;
	l->st.unfreezes++;
}

/*
 * Forward the held TCP ACK (and the duplicate stored behind it), drop the held
 * FrACK. Unfreezes a frozen sender. Returns true when what went out
 * acknowledged new data (the local timer restarts then).
 */
static bool
release_held(struct sgw_lift *l, struct lflow *f, struct sgw_lift_out *o, uint64_t now)
{
	bool newd = false;

	if (f->has_pair) {
		act_fwd(l, o, f, f->pair_ack, SGW_LIFT_FWD_HELD_ACK);
		l->st.acks_released++;
		l->st.held--;
		if (f->frozen) {
			freeze_end(l, f, now);
			/* The window reopens: the sender's RTO starts over from here. */
			newd = true;
		} else {
			act_drop(l, o, f->flow_id, f->pair_frack, SGW_LIFT_DROP_FRACK_SUPERSEDED);
			l->st.fracks_dropped++;
			l->st.held--;
		}
		if (note_fh(f, f->pair_num))
			newd = true;
		f->has_pair = 0;
	}
	if (f->has_dup) {
		act_fwd(l, o, f, f->dup, SGW_LIFT_FWD_DUP);
		l->st.dups_released++;
		l->st.held--;
		f->has_dup = 0;
	}
	return newd;
}

static void
drop_pending(struct sgw_lift *l, struct lflow *f, struct sgw_lift_out *o, uint8_t why)
{
	if (!f->has_pend)
		return;
	act_drop(l, o, f->flow_id, f->pend, why);
	l->st.fracks_dropped++;
	l->st.held--;
	f->has_pend = 0;
}

static void
drop_spare(struct sgw_lift *l, struct lflow *f, struct sgw_lift_out *o, uint8_t why)
{
	if (!f->has_spare)
		return;
	act_drop(l, o, f->flow_id, f->spare, why);
	l->st.fracks_dropped++;
	l->st.held--;
	f->has_spare = 0;
}

/* Keep cand as the spare FrACK (its TCP ACK went on at once). */
static void
keep_spare(struct sgw_lift *l, struct lflow *f, struct sgw_lift_out *o, uint64_t cand)
{
	drop_spare(l, f, o, SGW_LIFT_DROP_FRACK_SUPERSEDED);
	f->spare = cand;
	f->has_spare = 1;
	l->st.held++;
}

/* Freezing off for this flow: release everything, back to the transitory phase. */
static void
lift_stop(struct sgw_lift *l, struct lflow *f, struct sgw_lift_out *o, uint64_t now)
{
	if (f->timer_running || f->has_pair || f->frozen)
		l->st.transitory++;
	release_held(l, f, o, now);
	freeze_end(l, f, now);   /* frozen by the spare FrACK: the next ACK reopens */
	drop_pending(l, f, o, SGW_LIFT_DROP_FRACK_UNUSED);
	drop_spare(l, f, o, SGW_LIFT_DROP_FRACK_UNUSED);
	f->timer_running = 0;
}

/* What the caller's timer for f should be set to; ARM / CANCEL when it changes. */
static void
timer_sync(struct sgw_lift *l, struct lflow *f, struct sgw_lift_out *o, uint64_t now)
{
	uint64_t d = SGW_LIFT_NEVER;
	struct sgw_lift_act *a;

	if (f->in_use && f->frozen) {
		uint64_t est, s;

		share_accrue(l, f, now);
		est = share_est(l, f, now);

		d = sgw_add_sat(f->freeze_start, l->c.max_frozen_ns);
		/* Frozen share grows at most 1 ns per ns: check again when it could
		 * reach the limit (at least 1 ms on). */
		s = est < l->share_limit ? l->share_limit - est : 0;
		if (s < 1000000)
			s = 1000000;
		s = sgw_add_sat(now, s);
		if (s < d)
			d = s;
		if (f->has_pair && f->thaw_at < d)
			d = f->thaw_at;
	} else if (f->in_use && f->timer_running) {
		d = f->timer_at;
	}
	if (d == f->armed_at)
		return;
	if (d == SGW_LIFT_NEVER) {
		a = push(l, o, SGW_LIFT_ACT_TIMER_CANCEL);
	} else {
		a = push(l, o, SGW_LIFT_ACT_TIMER_ARM);
		a->at = d;
	}
	a->flow = (uint32_t)(f - l->fl);
	a->gen = f->gen;
	a->flow_id = f->flow_id;
	f->armed_at = d;
}

static void
suspend(struct sgw_lift *l, struct lflow *f, struct sgw_lift_out *o, uint64_t now, bool share)
{
	lift_stop(l, f, o, now);
	f->suspended = 1;
	f->susp_until = l->c.suspend_ns ? sgw_add_sat(now, l->c.suspend_ns) : SGW_LIFT_NEVER;
	if (share)
		l->st.susp_share++;
	else
		l->st.susp_frozen++;
}

/* Apply what changed since the flow last acted: a suspension over, its SA's epoch. */
static void
flow_sync(struct sgw_lift *l, struct lflow *f, struct sgw_lift_out *o, uint64_t now)
{
	struct lsa *s = &l->sa[f->sa];

	if (f->suspended && now >= f->susp_until) {
		f->suspended = 0;
		l->st.susp_end++;
	}
	if (f->sa_epoch != s->epoch) {
		f->sa_epoch = s->epoch;
		lift_stop(l, f, o, now);
	}
}

static bool
lift_on(const struct sgw_lift *l, const struct lflow *f)
{
	return !f->suspended && !l->sa[f->sa].ooo;
}

static void
sa_put(struct sgw_lift *l, uint32_t si)
{
	struct lsa *s = &l->sa[si];

	if (--s->nflows > 0)
		return;
	idx_remove(l, &l->sidx, hash_key(&s->mh, s->spi) & l->sidx.mask, si);
	s->in_use = 0;
	s->next_free = l->sa_free;
	l->sa_free = si;
	l->st.sas--;
}

static void
flow_delete(struct sgw_lift *l, struct lflow *f, struct sgw_lift_out *o, uint64_t now)
{
	uint32_t fi = (uint32_t)(f - l->fl);

	release_held(l, f, o, now);
	freeze_end(l, f, now);
	drop_pending(l, f, o, SGW_LIFT_DROP_FLOW_GONE);
	drop_spare(l, f, o, SGW_LIFT_DROP_FLOW_GONE);
	f->timer_running = 0;
	f->in_use = 0;
	timer_sync(l, f, o, now);   /* CANCEL if armed */
	idx_remove(l, &l->fidx, hash_key(&f->mh, f->flow_id) & l->fidx.mask, fi);
	sa_put(l, f->sa);
	f->gen++;
	f->next_free = l->fl_free;
	l->fl_free = fi;
	l->st.flows--;
}

/* ---------------------------------------------------------- control path */

static void
rx_setup(struct sgw_lift *l, uint64_t now, const struct sgw_lift_addr *mh,
	 const struct sgw_lift_msg *m, struct sgw_lift_out *o)
{
	uint32_t fi, si;
	struct lflow *f;
	struct lsa *s;
	uint32_t gen;
	bool new_sa = false;

	if (m->next != SGW_LIFT_IPPROTO_ESP && m->next != SGW_LIFT_IPPROTO_AH) {
		l->st.setup_bad_proto++;
		act_ctrl(l, o, mh, SGW_LIFT_K_SETUP_ACK, m->flow_id, m->word,
			 SGW_LIFT_ST_BAD_PROTO);
		return;
	}
	fi = flow_find(l, mh, m->flow_id);
	if (fi != NIL) {
		f = &l->fl[fi];
		if (l->sa[f->sa].spi == m->word && f->proto == m->next) {
			/* A repeat (the agent did not see our answer): same answer. */
			l->st.setup_dup++;
			act_ctrl(l, o, mh, SGW_LIFT_K_SETUP_ACK, m->flow_id, m->word,
				 SGW_LIFT_ST_OK);
			return;
		}
		/* The flow id is reused for another SA: the agent restarted or its
		 * teardown never came. The new binding wins. */
		l->st.setup_replaced++;
		flow_delete(l, f, o, now);
	}
	si = sa_find(l, mh, m->word);
	if (si == NIL) {
		if (l->sa_free == NIL || l->fl_free == NIL)
			goto full;
		si = l->sa_free;
		s = &l->sa[si];
		l->sa_free = s->next_free;
		memset(s, 0, sizeof(*s));
		s->in_use = 1;
		s->mh = *mh;
		s->spi = m->word;
		idx_insert(&l->sidx, hash_key(mh, s->spi) & l->sidx.mask, si);
		l->st.sas++;
		new_sa = true;
	}
	s = &l->sa[si];
	if (l->fl_free == NIL)
		goto full;
	fi = l->fl_free;
	f = &l->fl[fi];
	l->fl_free = f->next_free;
	gen = f->gen;
	memset(f, 0, sizeof(*f));
	f->gen = gen;
	f->in_use = 1;
	f->mh = *mh;
	f->flow_id = m->flow_id;
	f->proto = m->next;
	f->sa = si;
	f->sa_epoch = s->epoch;
	f->armed_at = SGW_LIFT_NEVER;
	f->ws = now;
	s->nflows++;
	idx_insert(&l->fidx, hash_key(mh, f->flow_id) & l->fidx.mask, fi);
	l->st.flows++;
	l->st.setups++;
	act_ctrl(l, o, mh, SGW_LIFT_K_SETUP_ACK, m->flow_id, m->word, SGW_LIFT_ST_OK);
	return;
full:
	(void)new_sa;
	l->st.setup_full++;
	act_ctrl(l, o, mh, SGW_LIFT_K_SETUP_ACK, m->flow_id, m->word, SGW_LIFT_ST_FULL);
}

static void
rx_teardown(struct sgw_lift *l, uint64_t now, const struct sgw_lift_addr *mh,
	    const struct sgw_lift_msg *m, struct sgw_lift_out *o)
{
	uint32_t fi = flow_find(l, mh, m->flow_id);
	uint32_t spi;

	if (fi == NIL) {
		l->st.teardown_unknown++;
		act_ctrl(l, o, mh, SGW_LIFT_K_TEARDOWN_ACK, m->flow_id, 0,
			 SGW_LIFT_ST_UNKNOWN_FLOW);
		return;
	}
	spi = l->sa[l->fl[fi].sa].spi;
	flow_delete(l, &l->fl[fi], o, now);
	l->st.teardowns++;
	act_ctrl(l, o, mh, SGW_LIFT_K_TEARDOWN_ACK, m->flow_id, spi, SGW_LIFT_ST_OK);
}

/* -------------------------------------------------------------- ACK path */

static bool
next_is_ipsec(uint8_t next)
{
	return next == SGW_LIFT_IPPROTO_ESP || next == SGW_LIFT_IPPROTO_AH;
}

static void
rtt_sample(struct sgw_lift *l, struct lsa *s, uint64_t now)
{
	uint64_t r = now - s->rtt_t, d;

	s->rtt_pending = 0;
	if (now < s->rtt_t || r > l->c.rtt_sample_max_ns) {
		l->st.rtt_discarded++;
		return;
	}
	l->st.rtt_samples++;
	if (!s->have_rtt) {
		s->have_rtt = 1;
		s->srtt = r;
		s->rttvar = r / 2;
		return;
	}
	/* RFC 6298: beta 1/4, alpha 1/8 */
	d = s->srtt > r ? s->srtt - r : r - s->srtt;
	s->rttvar = s->rttvar - s->rttvar / 4 + d / 4;
	s->srtt = s->srtt - s->srtt / 8 + r / 8;
}

/* Record an IPsec ACK number; returns whether it advanced the flow's. */
static bool
note_ack(struct sgw_lift *l, struct lflow *f, struct lsa *s, uint32_t num, uint64_t now)
{
	bool adv;

	if (!s->hi_valid) {
		/* Nothing forwarded toward the MH yet: the number means nothing here. */
		l->st.ack_beyond++;
		return false;
	}
	if (SGW_SEQ_GT(num, s->hi)) {
		l->st.ack_beyond++;
		num = s->hi;
	}
	adv = !f->ack_valid || SGW_SEQ_GT(num, f->ack_rx);
	if (adv) {
		f->ack_rx = num;
		f->ack_valid = 1;
	}
	if (!s->acked_valid || SGW_SEQ_GT(num, s->acked)) {
		s->acked = num;
		s->acked_valid = 1;
	}
	if (s->rtt_pending && SGW_SEQ_GE(num, s->rtt_seq))
		rtt_sample(l, s, now);
	if (s->ooo && SGW_SEQ_GE(s->acked, s->ooo_mark)) {
		/* Every out-of-order packet is acknowledged: freezing back on. Flows
		 * come back through the transitory phase (they stopped when they saw
		 * the epoch move). */
		s->ooo = 0;
		l->st.ooo_enable++;
	}
	return adv;
}

enum pairing { PAIR_NONE, PAIR_YES, PAIR_STALE, PAIR_NEWER };

/*
 * Does the pending FrACK belong to this TCP ACK? MH-LIFT sends the FrACK just
 * before its TCP ACK on the same uplink SA, so their ESP sequence numbers are
 * consecutive. A FrACK can arrive after the TCP ACK of an earlier pair (the
 * datagram service does not wait behind a reliable retransmission): that one
 * is newer and waits for its own ACK.
 */
static enum pairing
pairing(const struct lflow *f, const struct sgw_lift_msg *m)
{
	int32_t d;

	if (!f->has_pend)
		return PAIR_NONE;
	if (!f->pend_esp || !m->has_esp)
		return PAIR_YES;
	if (f->pend_spi != m->esp_spi)
		return PAIR_STALE;
	d = sgw_seq_diff(m->esp_seq, f->pend_seq);
	if (d == 1)
		return PAIR_YES;
	return d > 1 ? PAIR_STALE : PAIR_NEWER;
}

static void
rx_tcp_ack(struct sgw_lift *l, uint64_t now, struct lflow *f, const struct sgw_lift_msg *m,
	   uint64_t h, struct sgw_lift_out *o)
{
	struct lsa *s = &l->sa[f->sa];
	bool new_data, valid, fwd_new, restart = false, covers_all, force = false;
	bool fl_d = m->flags & SGW_LIFT_BIT_D, fl_f = m->flags & SGW_LIFT_BIT_F;
	bool fl_s = m->flags & SGW_LIFT_BIT_S;
	uint64_t cand = 0;
	bool have_cand = false;
	uint32_t num;

	l->st.acks_rx++;
	l->st.flag_d += fl_d;
	l->st.flag_f += fl_f;
	l->st.flag_s += fl_s;
	valid = s->hi_valid;
	new_data = note_ack(l, f, s, m->word, now);
	num = f->ack_rx;
	if (fl_s) {
		/* A duplicate (the MH says so): its IPsec ACK number may still move
		 * (it covers a retransmitted copy with a newer ESP sequence number),
		 * but the sender sees no new data: no timer restart from it. */
		new_data = false;
		valid = false;
	}

	switch (pairing(f, m)) {
	case PAIR_YES:
		cand = f->pend;
		have_cand = true;
		f->has_pend = 0;
		l->st.held--;
		break;
	case PAIR_STALE:
		drop_pending(l, f, o, SGW_LIFT_DROP_FRACK_STALE);
		break;
	default:
		break;
	}

	if (!lift_on(l, f) || !next_is_ipsec(m->next)) {
		/* Suspended, SA out of order, or CLEAR mode: LIFT not applied. */
		lift_stop(l, f, o, now);
		act_fwd(l, o, f, h, SGW_LIFT_FWD_UNTOUCHED);
		if (!next_is_ipsec(m->next))
			l->st.clear_pkts++;
		l->st.untouched++;
		if (valid)
			note_fh(f, num);
		if (have_cand) {
			act_drop(l, o, f->flow_id, cand, SGW_LIFT_DROP_FRACK_UNUSED);
			l->st.fracks_dropped++;
		}
		if (fl_d) {
			l->st.d_deletes++;
			flow_delete(l, f, o, now);
		}
		return;
	}

	if (f->frozen) {
		if (f->has_pair) {
			/* A fresher TCP ACK: the held one unfreezes the sender first. */
			if (release_held(l, f, o, now))
				timer_start(l, f, now);
		} else {
			/* Frozen by the spare FrACK: this ACK is the one that reopens
			 * the window, so it goes on now. */
			freeze_end(l, f, now);
			force = true;
		}
	}

	if (fl_d) {
		/* ACK of a FIN or an RST: everything goes on, the entry goes. */
		release_held(l, f, o, now);
		act_fwd(l, o, f, h, SGW_LIFT_FWD_ACK);
		l->st.acks_fwd_now++;
		if (have_cand) {
			act_drop(l, o, f->flow_id, cand, SGW_LIFT_DROP_FRACK_SUPERSEDED);
			l->st.fracks_dropped++;
		}
		l->st.d_deletes++;
		flow_delete(l, f, o, now);
		return;
	}

	if (fl_s && f->timer_running && f->has_pair) {
		/* The held FrACK can still freeze: the duplicate waits behind the
		 * held TCP ACK (the newest one kept). */
		if (f->has_dup) {
			act_drop(l, o, f->flow_id, f->dup, SGW_LIFT_DROP_DUP_SUPERSEDED);
			l->st.dups_superseded++;
			l->st.held--;
		}
		f->dup = h;
		f->has_dup = 1;
		l->st.held++;
		l->st.dups_stored++;
		if (have_cand) {
			act_drop(l, o, f->flow_id, cand, SGW_LIFT_DROP_FRACK_UNUSED);
			l->st.fracks_dropped++;
		}
		timer_sync(l, f, o, now);
		return;
	}

	/*
	 * Hold the new pair only when the timer runs (else: transitory phase), the
	 * ACK is for new data and not to be forwarded at once (F), its FrACK is
	 * here, and something forwarded toward the MH is still unacknowledged: an
	 * ACK that covers everything may be what a window-limited sender waits
	 * for, and with nothing in flight there is nothing a freeze would save.
	 */
	covers_all = !l->c.paper_hold && valid && f->ack_valid && SGW_SEQ_GE(f->ack_rx, s->hi);
	if (f->timer_running && new_data && !fl_f && have_cand && !covers_all && !force) {
		if (f->has_pair && release_held(l, f, o, now))
			restart = true;
		drop_spare(l, f, o, SGW_LIFT_DROP_FRACK_SUPERSEDED);
		f->pair_ack = h;
		f->pair_frack = cand;
		f->pair_num = num;
		f->has_pair = 1;
		l->st.held += 2;
		l->st.acks_held++;
	} else {
		if (release_held(l, f, o, now))
			restart = true;
		act_fwd(l, o, f, h, SGW_LIFT_FWD_ACK);
		l->st.acks_fwd_now++;
		fwd_new = valid && f->ack_valid && note_fh(f, num);
		if (fwd_new || force)
			restart = true;
		if (have_cand && fwd_new && l->c.spare_frack) {
			/* Its ACK went on, but a zero window with an unchanged ACK
			 * number still freezes (RFC 793's window update rule, Linux's
			 * tcp_may_update_window): kept for the timer. */
			keep_spare(l, f, o, cand);
		} else {
			if (have_cand) {
				act_drop(l, o, f->flow_id, cand, SGW_LIFT_DROP_FRACK_SUPERSEDED);
				l->st.fracks_dropped++;
			}
			/* A spare older than what the FH now has is worthless: a zero
			 * window on an old ACK number is ignored (RFC 793, Linux). */
			if (fwd_new)
				drop_spare(l, f, o, SGW_LIFT_DROP_FRACK_SUPERSEDED);
		}
	}
	if (restart)
		timer_start(l, f, now);  /* also ends the transitory phase */
	timer_sync(l, f, o, now);
}

static void
rx_frack(struct sgw_lift *l, struct lflow *f, const struct sgw_lift_msg *m, uint64_t h,
	 struct sgw_lift_out *o)
{
	l->st.fracks_rx++;
	if (!lift_on(l, f) || !next_is_ipsec(m->next)) {
		act_drop(l, o, f->flow_id, h, SGW_LIFT_DROP_FRACK_UNUSED);
		l->st.fracks_dropped++;
		return;
	}
	if (f->has_pend) {
		if (f->pend_esp && m->has_esp && f->pend_spi == m->esp_spi &&
		    SGW_SEQ_LT(m->esp_seq, f->pend_seq)) {
			/* Older than the one waiting: it lost its ACK's race. */
			act_drop(l, o, f->flow_id, h, SGW_LIFT_DROP_FRACK_STALE);
			l->st.fracks_dropped++;
			return;
		}
		drop_pending(l, f, o, SGW_LIFT_DROP_FRACK_STALE);
	}
	f->pend = h;
	f->has_pend = 1;
	f->pend_esp = m->has_esp;
	f->pend_spi = m->esp_spi;
	f->pend_seq = m->esp_seq;
	l->st.held++;
}

static bool
room_ok(struct sgw_lift *l, const struct sgw_lift_out *o)
{
	if (o == NULL || o->act == NULL || o->n > o->cap || o->cap - o->n < SGW_LIFT_MIN_ROOM) {
		l->st.no_room++;
		return false;
	}
	return true;
}

int
sgw_lift_rx_msg(struct sgw_lift *l, uint64_t now, const struct sgw_lift_addr *mh,
		const struct sgw_lift_msg *m, uint64_t h, int trusted, struct sgw_lift_out *o)
{
	uint32_t fi;
	struct lflow *f;

	if (!room_ok(l, o))
		return -ENOSPC;
	if (now > l->now)
		l->now = now;
	if (!trusted) {
		/* LIFT control from the terrestrial side, or an unauthenticated
		 * satlink session: never acted on. */
		l->st.untrusted++;
		act_drop(l, o, m->flow_id, h, SGW_LIFT_DROP_UNTRUSTED);
		return 0;
	}
	switch (m->kind) {
	case SGW_LIFT_K_SETUP:
		rx_setup(l, now, mh, m, o);
		act_drop(l, o, m->flow_id, h, SGW_LIFT_DROP_CONSUMED);
		return 0;
	case SGW_LIFT_K_TEARDOWN:
		rx_teardown(l, now, mh, m, o);
		act_drop(l, o, m->flow_id, h, SGW_LIFT_DROP_CONSUMED);
		return 0;
	case SGW_LIFT_K_TCP_ACK:
	case SGW_LIFT_K_FRACK:
		break;
	default:
		act_drop(l, o, m->flow_id, h, SGW_LIFT_DROP_UNEXPECTED);
		return 0;
	}
	fi = flow_find(l, mh, m->flow_id);
	if (fi == NIL) {
		l->st.unknown_flow++;
		if (m->kind == SGW_LIFT_K_FRACK) {
			/* A FrACK must never reach the FH outside a freeze. */
			act_drop(l, o, m->flow_id, h, SGW_LIFT_DROP_UNKNOWN_FLOW);
		} else {
			act_fwd(l, o, NULL, h, SGW_LIFT_FWD_UNTOUCHED);
			l->st.untouched++;
		}
		return 0;
	}
	f = &l->fl[fi];
	flow_sync(l, f, o, now);
	if (m->kind == SGW_LIFT_K_TCP_ACK)
		rx_tcp_ack(l, now, f, m, h, o);
	else
		rx_frack(l, f, m, h, o);
	if (f->in_use)
		timer_sync(l, f, o, now);
	return 0;
}

int
sgw_lift_rx(struct sgw_lift *l, uint64_t now, const struct sgw_lift_addr *mh, const void *buf,
	    size_t len, uint64_t h, int trusted, struct sgw_lift_out *o)
{
	struct sgw_lift_msg m;
	int rc;

	if (!room_ok(l, o))
		return -ENOSPC;
	rc = sgw_lift_decode(buf, len, &m);
	if (rc != SGW_LIFT_DEC_OK) {
		l->st.rx_refused[rc]++;
		act_drop(l, o, m.flow_id, h, SGW_LIFT_DROP_BAD);
		return 0;
	}
	return sgw_lift_rx_msg(l, now, mh, &m, h, trusted, o);
}

/* ------------------------------------------------------------- downlink */

static void
mark_ooo(struct sgw_lift *l, struct lsa *s, uint32_t mark)
{
	if (!s->ooo) {
		s->ooo = 1;
		s->ooo_mark = mark;
		s->epoch++;
		l->st.ooo_disable++;
	} else if (SGW_SEQ_GT(mark, s->ooo_mark)) {
		s->ooo_mark = mark;
	}
}

int
sgw_lift_esp_down(struct sgw_lift *l, uint64_t now, const struct sgw_lift_addr *mh,
		  uint32_t spi, uint32_t seq)
{
	uint32_t si = sa_find(l, mh, spi);
	struct lsa *s;
	int32_t d;

	if (si == NIL) {
		l->st.esp_other++;
		return 0;
	}
	if (now > l->now)
		l->now = now;
	s = &l->sa[si];
	l->st.esp_down++;
	if (!s->hi_valid) {
		s->hi_valid = 1;
		s->hi = seq;
	} else {
		d = sgw_seq_diff(seq, s->hi);
		if (d <= 0) {
			/* Behind (or equal to) one already forwarded: reordered or
			 * repeated upstream. */
			l->st.esp_late++;
			mark_ooo(l, s, s->hi);
			return 1;
		}
		if ((uint32_t)d > l->c.max_seq_jump) {
			/* Not believed: a forged packet could otherwise make every
			 * flow of the SA look unacknowledged for ever. */
			l->st.esp_jump++;
			return 1;
		}
		if (d > 1) {
			/* A hole: a packet lost (or late) between the FH and us; TCP's
			 * own recovery must run unhindered until it is repaired. */
			l->st.esp_gap++;
			mark_ooo(l, s, seq);
		}
		s->hi = seq;
	}
	if (!s->rtt_pending) {
		s->rtt_pending = 1;
		s->rtt_seq = seq;
		s->rtt_t = now;
	}
	return 1;
}

/* ---------------------------------------------------------------- timer */

int
sgw_lift_timer(struct sgw_lift *l, uint64_t now, uint32_t fi, uint32_t gen,
	       struct sgw_lift_out *o)
{
	struct lflow *f;
	struct lsa *s;
	bool unacked;

	if (!room_ok(l, o))
		return -ENOSPC;
	if (now > l->now)
		l->now = now;
	if (fi >= l->c.max_flows || !l->fl[fi].in_use || l->fl[fi].gen != gen ||
	    l->fl[fi].armed_at == SGW_LIFT_NEVER) {
		l->st.timer_stale++;
		return 0;
	}
	f = &l->fl[fi];
	if (now < f->armed_at) {
		l->st.timer_early++;
		f->armed_at = SGW_LIFT_NEVER;
		timer_sync(l, f, o, now);
		return 0;
	}
	f->armed_at = SGW_LIFT_NEVER;   /* the caller's timer is spent */
	flow_sync(l, f, o, now);
	s = &l->sa[f->sa];
	if (f->frozen) {
		share_accrue(l, f, now);
		if (now >= sgw_add_sat(f->freeze_start, l->c.max_frozen_ns)) {
			suspend(l, f, o, now, false);
		} else if (share_est(l, f, now) >= l->share_limit) {
			suspend(l, f, o, now, true);
		} else if (f->has_pair && now >= f->thaw_at) {
			/*
			 * Thaw: the FrACK restarted the sender's timer (it acknowledged
			 * the held ACK's data); reopen the window before that timer runs
			 * out, so a timeout, if it comes, finds an open window. Linux's
			 * timer runs under a zero window, and its second timeout there
			 * takes ssthresh to 2 (docs/lift.md).
			 */
			l->st.thaws++;
			if (release_held(l, f, o, now))
				timer_start(l, f, now);
		}
	} else if (f->timer_running && now >= f->timer_at) {
		l->st.expiries++;
		f->timer_running = 0;
		unacked = s->hi_valid && (!f->ack_valid || SGW_SEQ_LT(f->ack_rx, s->hi));
		if (!f->has_pair && !(f->has_spare && unacked)) {
			l->st.expiry_idle++;
		} else if (unacked) {
			/* Data forwarded toward the MH is still unacknowledged: the ACK
			 * is late. Freeze the sender with the held FrACK (the spare one
			 * when no pair is held: the next TCP ACK then reopens). */
			share_accrue(l, f, now);
			if (share_est(l, f, now) >= l->share_limit) {
				suspend(l, f, o, now, true);
			} else {
				if (f->has_pair) {
					act_fwd(l, o, f, f->pair_frack, SGW_LIFT_FWD_FRACK);
					note_fh(f, f->pair_num);
					drop_spare(l, f, o, SGW_LIFT_DROP_FRACK_SUPERSEDED);
					f->thaw_at = l->c.thaw ?
						sgw_add_sat(now, timer_ns(l, s)) : SGW_LIFT_NEVER;
				} else {
					act_fwd(l, o, f, f->spare, SGW_LIFT_FWD_FRACK);
					f->has_spare = 0;
					l->st.freezes_spare++;
				}
				l->st.held--;
				l->st.freezes++;
				l->st.expiry_freeze++;
				f->frozen = 1;
				l->n_frozen++;
				f->freeze_start = now;
				f->acc_t = now;
			}
		} else {
			/* Everything acknowledged: no freeze; the held ACK goes on. */
			l->st.expiry_acked++;
			if (release_held(l, f, o, now))
				timer_start(l, f, now);
		}
	}
	timer_sync(l, f, o, now);
	return 0;
}

int
sgw_lift_drain(struct sgw_lift *l, uint64_t now, struct sgw_lift_out *o)
{
	uint32_t fi;

	if (o->cap < o->n || o->cap - o->n < SGW_LIFT_MIN_ROOM) {
		l->st.no_room++;
		return -ENOSPC;
	}
	for (fi = 0; fi < l->c.max_flows; fi++) {
		if (!l->fl[fi].in_use)
			continue;
		if (o->cap - o->n < SGW_LIFT_MIN_ROOM)
			return 1;
		flow_delete(l, &l->fl[fi], o, now);
	}
	return 0;
}

void
sgw_lift_note_clear(struct sgw_lift *l, uint32_t pkts)
{
	l->st.clear_pkts += pkts;
}

/* ----------------------------------------------------------- inspection */

void
sgw_lift_get_stats(const struct sgw_lift *l, struct sgw_lift_stats *st)
{
	/* O(1): the dataplane publishes these every 10 ms, whatever the table size. */
	*st = l->st;
	st->frozen = l->n_frozen;
}

int
sgw_lift_flow_get(const struct sgw_lift *l, uint64_t now, const struct sgw_lift_addr *mh,
		  uint16_t flow_id, struct sgw_lift_flow_info *in)
{
	uint32_t fi = flow_find(l, mh, flow_id);
	const struct lflow *f;
	const struct lsa *s;
	struct lflow tmp;

	if (fi == NIL)
		return -1;
	f = &l->fl[fi];
	s = &l->sa[f->sa];
	memset(in, 0, sizeof(*in));
	in->index = fi;
	in->gen = f->gen;
	in->spi = s->spi;
	in->proto = f->proto;
	in->timer_running = f->timer_running;
	in->frozen = f->frozen;
	in->suspended = f->suspended && now < f->susp_until;
	in->held_pair = f->has_pair;
	in->held_dup = f->has_dup;
	in->pending_frack = f->has_pend;
	in->sa_ooo = s->ooo;
	in->timer_at = f->timer_at;
	in->armed_at = f->armed_at;
	in->timer_ns = timer_ns(l, s);
	in->ack_num = f->ack_rx;
	in->sa_highest = s->hi;
	in->held_ack = f->has_pair ? f->pair_ack : 0;
	in->held_frack = f->has_pair && !f->frozen ? f->pair_frack : 0;
	in->spare_frack = f->has_spare;
	tmp = *f;
	share_accrue(l, &tmp, now);
	in->frozen_share_ns = share_est(l, &tmp, now);
	return 0;
}
