/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MH-LIFT (contract: sgw_lift_mh.h; rules and reasons: docs/lift.md,
 * "MH-LIFT (the mobile host's machine)"; header bytes: sgw_lift.h's codec).
 *
 * Memory, laid out once by sgw_lift_mh_init in the caller's block:
 *
 *   flows  max_flows entries, a free stack of slots, and an open-addressing
 *          index (pow2 >= 2 x max_flows, linear probing, backward-shift
 *          deletion) keyed by the cleartext 4-tuple. A flow's id is
 *          (generation << slot bits) | slot, so an acknowledgement from the
 *          hub finds its flow without a search, and a slot's id changes each
 *          time it is reused.
 *   track  per flow `track` records (TCP end sequence, ESP sequence number)
 *          of downlink packets not yet covered by an ACK the host sent.
 *   sas    max_sas downlink SAs (SPI, highest ESP sequence number): counters
 *          of late and skipped sequence numbers only, a linear scan.
 *
 * TCP and ESP sequence numbers compare in 32-bit serial arithmetic.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "sgw_lift.h"
#include "sgw_lift_mh.h"
#include "sgw_seq.h"

#define TH_FIN 0x01
#define TH_SYN 0x02
#define TH_RST 0x04
#define TH_PSH 0x08
#define TH_ACK 0x10
#define TH_URG 0x20

#define NO_SLOT 0xffffu

enum { INF_NONE = 0, INF_SETUP = 1 + SGW_LIFT_K_SETUP, INF_TEARDOWN = 1 + SGW_LIFT_K_TEARDOWN };

struct trk {
	uint32_t end;  /* TCP sequence number just past the packet */
	uint32_t esp;  /* its downlink ESP sequence number (the highest if merged) */
	uint32_t lo;   /* the lowest ESP sequence number in it */
};

struct mflow {
	uint8_t used;
	uint8_t indexed;      /* found by its 4-tuple (a closing one may not be) */
	uint8_t state;        /* enum sgw_lift_mh_state */
	uint8_t transitory;
	uint8_t dl_proto;
	uint8_t want_entry;   /* the hub should hold an entry */
	uint8_t have_entry;   /* the hub confirmed one */
	uint8_t maybe_entry;  /* a Setup went out and no Teardown-ACK since */
	uint8_t inflight;     /* INF_* */
	uint8_t tries;
	uint8_t irs_valid;
	uint8_t rcv_valid;
	uint8_t ack_valid;
	uint8_t fin_seen;
	uint8_t win_zero;     /* the last ACK the MH sent had window 0 */
	uint8_t ipsec_valid;
	uint16_t id;
	uint16_t gen;
	uint16_t mh_port;
	uint16_t fh_port;
	uint8_t mh[16];
	uint8_t fh[16];
	uint32_t dl_spi;
	uint32_t irs;
	uint32_t rcv_nxt;     /* highest end of FH sequence space seen */
	uint32_t fin_end;
	uint32_t ack_sent;
	uint16_t win_sent;
	uint32_t ipsec_ack;
	uint32_t ntrk;
	uint32_t run_probes;
	uint32_t test_data;
	uint64_t rto;
	uint64_t ctrl_next;
	uint64_t last_seen;
	uint64_t last_data;
	uint64_t state_until;
	uint64_t run_start;
	uint64_t run_last;     /* the run's last probe */
	uint64_t win_start;
	uint64_t win_acc;
	uint64_t win_prev;
};

struct msa {
	uint32_t spi;
	uint32_t highest;
	uint32_t crx;         /* every sequence number <= crx was received */
	uint64_t above;       /* bit i: crx + 1 + i received */
};

struct sgw_lift_mh {
	struct sgw_lift_mh_conf c;
	struct sgw_lift_mh_stats st;
	struct mflow *fl;
	struct trk *trk;
	uint16_t *idx;
	uint16_t *freel;
	struct msa *sa;
	uint32_t imask;
	uint32_t nfree;
	uint32_t slot_bits;
	uint32_t nsa;
	uint64_t deadline;
	uint64_t share_limit;
};

/* ================================================================ names */

static const char *const why_names[SGW_LIFT_MH_W__COUNT] = {
	"malformed", "not_tcp", "fragment", "ip6_ext", "no_flow", "table_full",
	"handshake", "off", "suspended", "closing", "no_ack",
	"pending", "transitory", "dup", "old", "win_zero", "win_open", "win_update",
	"probe_reply", "data", "fin_ack", "rst",
	"new_data", "new_data_piggy",
};

static const char *const rx_names[SGW_LIFT_MH_RX__COUNT] = {
	"malformed", "not_tcp", "no_flow", "table_full", "data", "old", "pure",
	"syn", "fin", "rst", "probe", "rekey",
};

static const char *const ctrl_names[SGW_LIFT_MH_C__COUNT] = {
	"setup_ok", "setup_refused", "teardown_ok", "bad", "unexpected",
};

const char *
sgw_lift_mh_why_name(int why)
{
	return why >= 0 && why < SGW_LIFT_MH_W__COUNT ? why_names[why] : "?";
}

const char *
sgw_lift_mh_rx_name(int why)
{
	return why >= 0 && why < SGW_LIFT_MH_RX__COUNT ? rx_names[why] : "?";
}

const char *
sgw_lift_mh_ctrl_name(int why)
{
	return why >= 0 && why < SGW_LIFT_MH_C__COUNT ? ctrl_names[why] : "?";
}

/* ================================================================= conf */

void
sgw_lift_mh_conf_default(struct sgw_lift_mh_conf *c)
{
	memset(c, 0, sizeof(*c));
	c->max_flows = 256;
	c->track = 64;
	c->max_sas = 16;
	c->next_header = SGW_LIFT_IPPROTO_ESP;
	c->ctrl_rto_ns = 1500000000ull;
	c->ctrl_rto_max_ns = 8000000000ull;
	c->ctrl_tries = 6;
	c->idle_ns = 1800000000000ull;
	c->handshake_ns = 75000000000ull;
	c->probe_run_max = 3;
	c->probe_run_max_ns = 20000000000ull;
	c->probe_quiet_ns = 60000000000ull;
	c->share_window_ns = 60000000000ull;
	c->share_permille = 250;
	c->probe_guard_ns = 30000000000ull;
	c->test_ns = 5000000000ull;
	c->hold_ns = 300000000000ull;
	c->ack_scope = SGW_LIFT_MH_ACK_SA;
}

const char *
sgw_lift_mh_conf_check(const struct sgw_lift_mh_conf *c)
{
	if (c == NULL)
		return "conf";
	if (c->max_flows < 1 || c->max_flows > SGW_LIFT_MH_MAX_FLOWS)
		return "max_flows";
	if (c->track < 4 || c->track > SGW_LIFT_MH_MAX_TRACK)
		return "track";
	if (c->max_sas < 1 || c->max_sas > SGW_LIFT_MH_MAX_SAS)
		return "max_sas";
	if (c->next_header != SGW_LIFT_IPPROTO_ESP && c->next_header != SGW_LIFT_IPPROTO_AH)
		return "next_header";
	if (c->ctrl_rto_ns == 0 || c->ctrl_rto_max_ns < c->ctrl_rto_ns)
		return "ctrl_rto_ns";
	if (c->ctrl_tries < 1 || c->ctrl_tries > 64)
		return "ctrl_tries";
	if (c->idle_ns == 0)
		return "idle_ns";
	if (c->handshake_ns == 0)
		return "handshake_ns";
	if (c->probe_run_max < 1)
		return "probe_run_max";
	if (c->probe_run_max_ns == 0)
		return "probe_run_max_ns";
	if (c->probe_quiet_ns == 0)
		return "probe_quiet_ns";
	/* bounded so the share arithmetic (x 1024) cannot overflow */
	if (c->share_window_ns < 1000000ull || c->share_window_ns > 3600000000000ull)
		return "share_window_ns";
	if (c->share_permille < 1 || c->share_permille > 1000)
		return "share_permille";
	if (c->test_ns == 0)
		return "test_ns";
	if (c->ack_scope > SGW_LIFT_MH_ACK_SA)
		return "ack_scope";
	return NULL;
}

struct layout {
	uint32_t isize;
	size_t off_fl, off_trk, off_idx, off_free, off_sa, total;
};

static size_t
align_up(size_t v)
{
	return (v + 63) & ~(size_t)63;
}

static void
layout_of(const struct sgw_lift_mh_conf *c, struct layout *l)
{
	l->isize = sgw_pow2_at_least(2 * c->max_flows);
	l->off_fl = align_up(sizeof(struct sgw_lift_mh));
	l->off_trk = align_up(l->off_fl + (size_t)c->max_flows * sizeof(struct mflow));
	l->off_idx = align_up(l->off_trk +
			      (size_t)c->max_flows * c->track * sizeof(struct trk));
	l->off_free = align_up(l->off_idx + (size_t)l->isize * sizeof(uint16_t));
	l->off_sa = align_up(l->off_free + (size_t)c->max_flows * sizeof(uint16_t));
	/* + 63: the caller's block may start anywhere */
	l->total = align_up(l->off_sa + (size_t)c->max_sas * sizeof(struct msa)) + 63;
}

size_t
sgw_lift_mh_mem_size(const struct sgw_lift_mh_conf *conf)
{
	struct layout l;

	if (sgw_lift_mh_conf_check(conf) != NULL)
		return 0;
	layout_of(conf, &l);
	return l.total;
}

struct sgw_lift_mh *
sgw_lift_mh_init(void *mem, size_t mem_len, const struct sgw_lift_mh_conf *conf,
		 uint64_t now_ns)
{
	struct layout lo;
	struct sgw_lift_mh *m;
	uint8_t *base;
	uint32_t i;

	(void)now_ns;
	if (mem == NULL || sgw_lift_mh_conf_check(conf) != NULL)
		return NULL;
	layout_of(conf, &lo);
	if (mem_len < lo.total)
		return NULL;
	base = (uint8_t *)(((uintptr_t)mem + 63) & ~(uintptr_t)63);
	memset(base, 0, lo.total - 63);
	m = (struct sgw_lift_mh *)base;
	m->c = *conf;
	m->fl = (struct mflow *)(base + lo.off_fl);
	m->trk = (struct trk *)(base + lo.off_trk);
	m->idx = (uint16_t *)(base + lo.off_idx);
	m->freel = (uint16_t *)(base + lo.off_free);
	m->sa = (struct msa *)(base + lo.off_sa);
	m->imask = lo.isize - 1;
	for (i = 0; i < lo.isize; i++)
		m->idx[i] = NO_SLOT;
	/* the stack pops slot 0 first */
	for (i = 0; i < conf->max_flows; i++)
		m->freel[i] = (uint16_t)(conf->max_flows - 1 - i);
	m->nfree = conf->max_flows;
	m->slot_bits = 0;
	while ((1u << m->slot_bits) < conf->max_flows)
		m->slot_bits++;
	m->deadline = SGW_LIFT_MH_NEVER;
	m->share_limit = conf->share_window_ns / 1000u * conf->share_permille;
	return m;
}

/* ========================================================= byte helpers */

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

/* ============================================================== parsing */

struct seg {
	uint8_t v6;
	uint8_t flags;
	uint16_t sport, dport;
	uint16_t win;
	uint8_t src[16], dst[16];
	uint32_t seq, ack;
	uint32_t iphl;        /* IP header length */
	uint32_t tcphl;       /* TCP header length */
	uint32_t paylen;      /* TCP payload bytes */
};

static void
map_v4(uint8_t out[16], const uint8_t *v4)
{
	memset(out, 0, 10);
	out[10] = 0xff;
	out[11] = 0xff;
	memcpy(out + 12, v4, 4);
}

/*
 * Parse an IPv4 / IPv6 TCP segment. Returns -1 and sets *why (a tx reason,
 * mapped by the rx path) when it is not one LIFT can use.
 */
static int
parse(const uint8_t *p, size_t len, struct seg *s, int *why)
{
	size_t iplen, tl;
	const uint8_t *t;

	memset(s, 0, sizeof(*s));
	if (p == NULL || len < 1) {
		*why = SGW_LIFT_MH_W_MALFORMED;
		return -1;
	}
	if ((p[0] >> 4) == 4) {
		if (len < 20 || (p[0] & 0x0f) < 5) {
			*why = SGW_LIFT_MH_W_MALFORMED;
			return -1;
		}
		s->iphl = (uint32_t)(p[0] & 0x0f) * 4u;
		iplen = get16(p + 2);
		if (iplen < s->iphl || iplen > len) {
			*why = SGW_LIFT_MH_W_MALFORMED;
			return -1;
		}
		if (p[9] != 6) {
			*why = SGW_LIFT_MH_W_NOT_TCP;
			return -1;
		}
		if (get16(p + 6) & 0x3fff) {
			*why = SGW_LIFT_MH_W_FRAGMENT;
			return -1;
		}
		map_v4(s->src, p + 12);
		map_v4(s->dst, p + 16);
	} else if ((p[0] >> 4) == 6) {
		if (len < 40) {
			*why = SGW_LIFT_MH_W_MALFORMED;
			return -1;
		}
		s->v6 = 1;
		s->iphl = 40;
		iplen = 40u + get16(p + 4);
		if (iplen > len) {
			*why = SGW_LIFT_MH_W_MALFORMED;
			return -1;
		}
		if (p[6] != 6) {
			uint8_t nh = p[6];

			*why = (nh == 0 || nh == 43 || nh == 44 || nh == 51 || nh == 60) ?
			       SGW_LIFT_MH_W_IP6_EXT : SGW_LIFT_MH_W_NOT_TCP;
			return -1;
		}
		memcpy(s->src, p + 8, 16);
		memcpy(s->dst, p + 24, 16);
	} else {
		*why = SGW_LIFT_MH_W_MALFORMED;
		return -1;
	}
	tl = iplen - s->iphl;
	t = p + s->iphl;
	if (tl < 20 || (t[12] >> 4) < 5 || (size_t)(t[12] >> 4) * 4u > tl) {
		*why = SGW_LIFT_MH_W_MALFORMED;
		return -1;
	}
	s->tcphl = (uint32_t)(t[12] >> 4) * 4u;
	s->paylen = (uint32_t)(tl - s->tcphl);
	s->sport = get16(t);
	s->dport = get16(t + 2);
	s->seq = get32(t + 4);
	s->ack = get32(t + 8);
	s->flags = t[13];
	s->win = get16(t + 14);
	return 0;
}

/* now - t, or 0 when the caller's clock went backwards */
static inline uint64_t
since(uint64_t now, uint64_t t)
{
	return now > t ? now - t : 0;
}

/* ============================================================ the index */

/* Four 64-bit words and the ports, multiply-xorshift mixed (a byte-wise
 * hash of the 36 bytes is a serial chain of 36 multiplies). */
static uint32_t
hash_tuple(const uint8_t *mh, const uint8_t *fh, uint16_t mp, uint16_t fp)
{
	uint64_t w[4], h = ((uint64_t)mp << 16 | fp) * 0x9E3779B97F4A7C15ull;
	int i;

	memcpy(&w[0], mh, 8);
	memcpy(&w[1], mh + 8, 8);
	memcpy(&w[2], fh, 8);
	memcpy(&w[3], fh + 8, 8);
	for (i = 0; i < 4; i++) {
		h ^= w[i];
		h *= 0xBF58476D1CE4E5B9ull;
		h ^= h >> 29;
	}
	return (uint32_t)(h ^ (h >> 32));
}

static bool
key_eq(const struct mflow *f, const uint8_t *mh, const uint8_t *fh, uint16_t mp, uint16_t fp)
{
	return f->mh_port == mp && f->fh_port == fp && memcmp(f->mh, mh, 16) == 0 &&
	       memcmp(f->fh, fh, 16) == 0;
}

static struct mflow *
lookup(const struct sgw_lift_mh *m, const uint8_t *mh, const uint8_t *fh, uint16_t mp,
       uint16_t fp)
{
	uint32_t i = hash_tuple(mh, fh, mp, fp) & m->imask, n;

	for (n = 0; n <= m->imask; n++, i = (i + 1) & m->imask) {
		uint16_t s = m->idx[i];

		if (s == NO_SLOT)
			return NULL;
		if (key_eq(&m->fl[s], mh, fh, mp, fp))
			return &m->fl[s];
	}
	return NULL;
}

static uint32_t
home_of(const struct sgw_lift_mh *m, const struct mflow *f)
{
	return hash_tuple(f->mh, f->fh, f->mh_port, f->fh_port) & m->imask;
}

static void
idx_insert(struct sgw_lift_mh *m, struct mflow *f)
{
	uint32_t i = home_of(m, f), n;

	for (n = 0; n <= m->imask; n++, i = (i + 1) & m->imask) {
		if (m->idx[i] == NO_SLOT) {
			m->idx[i] = (uint16_t)(f - m->fl);
			f->indexed = 1;
			return;
		}
	}
}

/* Backward-shift deletion: no tombstones, probes stay short. */
static void
idx_remove(struct sgw_lift_mh *m, struct mflow *f)
{
	uint32_t i = home_of(m, f), n, j, h;
	uint16_t me = (uint16_t)(f - m->fl);

	if (!f->indexed)
		return;
	f->indexed = 0;
	for (n = 0; n <= m->imask; n++, i = (i + 1) & m->imask) {
		if (m->idx[i] == me)
			break;
		if (m->idx[i] == NO_SLOT)
			return;
	}
	if (n > m->imask)
		return;
	m->idx[i] = NO_SLOT;
	j = i;
	for (n = 0; n <= m->imask; n++) {
		j = (j + 1) & m->imask;
		if (m->idx[j] == NO_SLOT)
			return;
		h = home_of(m, &m->fl[m->idx[j]]);
		/* move j back to the hole at i unless its home lies in (i, j] */
		if (((j - h) & m->imask) >= ((j - i) & m->imask)) {
			m->idx[i] = m->idx[j];
			m->idx[j] = NO_SLOT;
			i = j;
		}
	}
}

/* ============================================================ flow life */

static void
want_deadline(struct sgw_lift_mh *m, uint64_t at)
{
	if (at < m->deadline)
		m->deadline = at;
}

static struct mflow *
flow_new(struct sgw_lift_mh *m, uint64_t now, const struct seg *s, bool from_mh,
	 uint32_t dl_spi, uint8_t dl_proto)
{
	struct mflow *f;
	uint16_t slot, gen;

	if (m->nfree == 0)
		return NULL;
	slot = m->freel[--m->nfree];
	f = &m->fl[slot];
	gen = (uint16_t)(f->gen + 1);
	memset(f, 0, sizeof(*f));
	f->gen = gen;
	f->used = 1;
	f->id = (uint16_t)(((uint32_t)gen << m->slot_bits) | slot);
	if (from_mh) {
		memcpy(f->mh, s->src, 16);
		memcpy(f->fh, s->dst, 16);
		f->mh_port = s->sport;
		f->fh_port = s->dport;
	} else {
		memcpy(f->mh, s->dst, 16);
		memcpy(f->fh, s->src, 16);
		f->mh_port = s->dport;
		f->fh_port = s->sport;
	}
	f->state = SGW_LIFT_MH_S_HANDSHAKE;
	f->dl_spi = dl_spi;
	f->dl_proto = dl_proto;
	f->last_seen = now;
	f->last_data = now;
	f->ctrl_next = SGW_LIFT_MH_NEVER;
	f->state_until = SGW_LIFT_MH_NEVER;
	f->win_start = now;
	idx_insert(m, f);
	m->st.flows_created++;
	want_deadline(m, sgw_add_sat(now, m->c.handshake_ns));
	return f;
}

static void
flow_free(struct sgw_lift_mh *m, struct mflow *f)
{
	idx_remove(m, f);
	f->used = 0;
	m->freel[m->nfree++] = (uint16_t)(f - m->fl);
	m->st.flows_freed++;
}

/* ----------------------------------------------- probed-time share window */

static void
share_roll(const struct sgw_lift_mh *m, struct mflow *f, uint64_t now)
{
	uint64_t w = m->c.share_window_ns, k;

	if (now < sgw_add_sat(f->win_start, w))
		return;
	k = (now - f->win_start) / w;
	f->win_prev = k == 1 ? f->win_acc : 0;
	f->win_acc = 0;
	f->win_start += k * w;
}

/* Probed time in the last window: this window's plus the overlapping part of
 * the previous one (the older weighted by how much of it still overlaps). */
static uint64_t
share_est(const struct sgw_lift_mh *m, const struct mflow *f, uint64_t now)
{
	uint64_t w = m->c.share_window_ns, el = since(now, f->win_start), frac;

	if (el > w)
		el = w;
	frac = (w - el) * 1024u / w;
	return f->win_acc + f->win_prev * frac / 1024u;
}

/*
 * A run ends: new data came (end = now), or no probe for probe_quiet_ns (the
 * FH is no longer frozen, it only had nothing to send: end = the last probe).
 * Its time counts toward the share, never past the quiet limit.
 */
static void
run_close(struct sgw_lift_mh *m, struct mflow *f, uint64_t now)
{
	uint64_t end = now, cap = sgw_add_sat(f->run_last, m->c.probe_quiet_ns);

	if (f->run_probes == 0)
		return;
	if (end > cap)
		end = f->run_last;
	share_roll(m, f, now);
	f->win_acc += since(end, f->run_start);
	f->run_probes = 0;
}

/* ---------------------------------------------------------- state moves */

/* LIFT goes off for the flow: at the hub too (Teardown). */
static void
go_closing(struct sgw_lift_mh *m, struct mflow *f, uint64_t now)
{
	run_close(m, f, now);
	f->state = SGW_LIFT_MH_S_CLOSING;
	f->want_entry = 0;
	f->transitory = 0;
	f->state_until = SGW_LIFT_MH_NEVER;
	want_deadline(m, now);
}

/* (Re)activation: a Setup; the transitory phase begins when it is acked. */
static void
go_pending(struct sgw_lift_mh *m, struct mflow *f, uint64_t now)
{
	f->state = SGW_LIFT_MH_S_PENDING;
	f->want_entry = 1;
	f->transitory = 1;
	f->state_until = SGW_LIFT_MH_NEVER;
	want_deadline(m, now);
}

/* Section III: LIFT off for the flow, then the test of the cause. */
static void
suspend(struct sgw_lift_mh *m, struct mflow *f, uint64_t now, bool share)
{
	run_close(m, f, now);
	if (share)
		m->st.susp_share++;
	else
		m->st.susp_run++;
	f->state = SGW_LIFT_MH_S_TEST;
	f->want_entry = 0;
	f->transitory = 0;
	f->test_data = 0;
	f->state_until = sgw_add_sat(now, m->c.test_ns);
	want_deadline(m, now);
}

/* ============================================== downlink ESP bookkeeping */

static struct msa *
sa_find(const struct sgw_lift_mh *m, uint32_t spi)
{
	uint32_t i;

	for (i = 0; i < m->nsa; i++)
		if (m->sa[i].spi == spi)
			return &m->sa[i];
	return NULL;
}

/*
 * The SA's highest sequence number received (late and skipped ones counted)
 * and its contiguous point crx: everything up to it received, a 64-bit map
 * above it. A number more than 64 past crx gives the oldest holes up (the
 * packets missing there were lost upstream long ago; TCP resent their data on
 * new numbers).
 */
static void
sa_note(struct sgw_lift_mh *m, uint32_t spi, uint32_t seq)
{
	struct msa *a = sa_find(m, spi);
	int32_t d;
	uint32_t n;

	if (a == NULL) {
		if (m->nsa >= m->c.max_sas) {
			m->st.sa_full++;
			return;
		}
		a = &m->sa[m->nsa++];
		a->spi = spi;
		a->highest = seq;
		a->crx = seq;
		a->above = 0;
		return;
	}
	if (SGW_SEQ_LE(seq, a->highest)) {
		m->st.esp_late++;
	} else {
		if (seq != a->highest + 1)
			m->st.esp_gap++;
		a->highest = seq;
	}
	d = sgw_seq_diff(seq, a->crx);
	if (d <= 0)
		return;
	if (d > 64) {
		n = (uint32_t)d - 64u;
		a->above = n >= 64 ? 0 : a->above >> n;
		a->crx += n;
		d = 64;
	}
	a->above |= UINT64_C(1) << (d - 1);
	for (n = 0; n < 64 && (a->above & 1); n++) {
		a->above >>= 1;
		a->crx++;
	}
}

static void
credit(struct mflow *f, uint32_t esp)
{
	if (!f->ipsec_valid || SGW_SEQ_GT(esp, f->ipsec_ack)) {
		f->ipsec_ack = esp;
		f->ipsec_valid = 1;
	}
}

/*
 * Remember that the ESP packet esp carried FH sequence space ending at end:
 * an ACK >= end acknowledges it. Already covered by an ACK the host sent: it
 * goes in the next one. Records full: merged into the one with the highest
 * end (end and ESP number both the maximum), which only ever delays a credit,
 * never claims one early.
 */
static void
track_add(struct sgw_lift_mh *m, struct mflow *f, uint32_t end, uint32_t esp)
{
	struct trk *t = &m->trk[(size_t)(f - m->fl) * m->c.track];
	uint32_t i, best = 0;

	if (f->ack_valid && SGW_SEQ_LE(end, f->ack_sent)) {
		credit(f, esp);
		return;
	}
	if (f->ntrk < m->c.track) {
		t[f->ntrk].end = end;
		t[f->ntrk].esp = esp;
		t[f->ntrk].lo = esp;
		f->ntrk++;
		return;
	}
	m->st.track_merged++;
	for (i = 1; i < f->ntrk; i++)
		if (SGW_SEQ_GT(t[i].end, t[best].end))
			best = i;
	if (SGW_SEQ_GT(end, t[best].end))
		t[best].end = end;
	if (SGW_SEQ_GT(esp, t[best].esp))
		t[best].esp = esp;
	if (SGW_SEQ_LT(esp, t[best].lo))
		t[best].lo = esp;
}

/*
 * The IPsec ACK Number an ACK of this flow carries. FLOW scope: the seed's,
 * the highest ESP number of the packets this flow's ACKs covered. SA scope:
 * also every packet received on the SA below this flow's first one not yet
 * acknowledged (the other connections' packets, which the hub cannot tell
 * from this one's: without them, an ACK of one connection on a shared SA
 * never covers what the hub forwarded and every flow looks unacknowledged).
 * For one connection per SA both are the same. Monotonic per flow.
 */
static uint32_t
ack_number(const struct sgw_lift_mh *m, struct mflow *f)
{
	const struct trk *t = &m->trk[(size_t)(f - m->fl) * m->c.track];
	const struct msa *a;
	uint32_t cand, i;

	if (m->c.ack_scope == SGW_LIFT_MH_ACK_SA &&
	    (a = sa_find(m, f->dl_spi)) != NULL) {
		cand = a->crx;
		for (i = 0; i < f->ntrk; i++)
			if (SGW_SEQ_LE(t[i].lo, cand))
				cand = t[i].lo - 1;
		credit(f, cand);
	}
	return f->ipsec_valid ? f->ipsec_ack : 0;
}

/* The host sends an ACK for ack: every record it covers is credited. */
static void
track_ack(struct sgw_lift_mh *m, struct mflow *f, uint32_t ack)
{
	struct trk *t = &m->trk[(size_t)(f - m->fl) * m->c.track];
	uint32_t i = 0;

	while (i < f->ntrk) {
		if (SGW_SEQ_LE(t[i].end, ack)) {
			credit(f, t[i].esp);
			t[i] = t[--f->ntrk];
		} else {
			i++;
		}
	}
}

/* ======================================================= the ACK path */

static int
tx_plain(struct sgw_lift_mh *m, struct sgw_lift_mh_tx_out *tx, int why)
{
	tx->verdict = SGW_LIFT_MH_PLAIN;
	tx->why = (uint8_t)why;
	m->st.tx_why[why]++;
	return SGW_LIFT_MH_PLAIN;
}

int
sgw_lift_mh_tx(struct sgw_lift_mh *m, uint64_t now, const void *pkt, size_t len,
	       uint32_t dl_spi, uint8_t dl_proto, struct sgw_lift_mh_tx_out *tx)
{
	struct seg s;
	struct mflow *f;
	int why = SGW_LIFT_MH_W_MALFORMED;
	uint8_t flags = 0;
	bool adv, new_data, payload, fin_ack, pair = false, lift;

	memset(tx, 0, sizeof(*tx));
	if (parse((const uint8_t *)pkt, len, &s, &why) != 0)
		return tx_plain(m, tx, why);
	f = lookup(m, s.src, s.dst, s.sport, s.dport);

	if (s.flags & TH_SYN) {
		if (s.flags & TH_RST)
			return tx_plain(m, tx, SGW_LIFT_MH_W_MALFORMED);
		if (!(s.flags & TH_ACK)) {
			/* The host opens a connection. A leftover entry with the
			 * same 4-tuple is an old connection: it goes. */
			if (f != NULL && f->state != SGW_LIFT_MH_S_HANDSHAKE) {
				if (f->state != SGW_LIFT_MH_S_CLOSING)
					go_closing(m, f, now);
				idx_remove(m, f);
				f = NULL;
			}
			if (f == NULL)
				f = flow_new(m, now, &s, true, dl_spi, dl_proto);
			if (f == NULL)
				return tx_plain(m, tx, SGW_LIFT_MH_W_TABLE_FULL);
			f->last_seen = now;
			return tx_plain(m, tx, SGW_LIFT_MH_W_HANDSHAKE);
		}
		/* SYN-ACK: the host accepts the FH's connection (entry made
		 * when its SYN came; if the table was full then, none now). */
		if (f == NULL)
			return tx_plain(m, tx, SGW_LIFT_MH_W_NO_FLOW);
		f->last_seen = now;
		if (f->state == SGW_LIFT_MH_S_HANDSHAKE) {
			f->ack_sent = s.ack;
			f->ack_valid = 1;
			f->win_sent = s.win;
			f->win_zero = s.win == 0;
			track_ack(m, f, s.ack);
			go_pending(m, f, now);
		}
		return tx_plain(m, tx, SGW_LIFT_MH_W_HANDSHAKE);
	}
	if (f == NULL)
		return tx_plain(m, tx, SGW_LIFT_MH_W_NO_FLOW);
	f->last_seen = now;
	if (!(s.flags & TH_ACK) && !(s.flags & TH_RST))
		return tx_plain(m, tx, SGW_LIFT_MH_W_NO_ACK);

	lift = f->state == SGW_LIFT_MH_S_PENDING || f->state == SGW_LIFT_MH_S_ACTIVE;
	if (s.flags & TH_RST) {
		if (!lift) {
			int w = f->state == SGW_LIFT_MH_S_CLOSING ? SGW_LIFT_MH_W_CLOSING :
				f->state == SGW_LIFT_MH_S_OFF ? SGW_LIFT_MH_W_OFF :
				f->state == SGW_LIFT_MH_S_HANDSHAKE ? SGW_LIFT_MH_W_HANDSHAKE :
				SGW_LIFT_MH_W_SUSPENDED;

			if (f->state != SGW_LIFT_MH_S_CLOSING)
				go_closing(m, f, now);
			return tx_plain(m, tx, w);
		}
		why = SGW_LIFT_MH_W_RST;
		flags = SGW_LIFT_BIT_D | SGW_LIFT_BIT_F;
		go_closing(m, f, now);
		goto build;
	}

	/* The classification, in the seed's terms (section II.B). */
	adv = !f->ack_valid || SGW_SEQ_GT(s.ack, f->ack_sent);
	payload = s.paylen > 0 || (s.flags & TH_FIN);
	fin_ack = f->fin_seen && adv && SGW_SEQ_GE(s.ack, f->fin_end);
	/* New data: the ACK moves past bytes the FH sent, not just its SYN. */
	new_data = adv && f->irs_valid && SGW_SEQ_GT(s.ack, f->irs + 1);
	track_ack(m, f, s.ack);

	if (fin_ack) {
		why = SGW_LIFT_MH_W_FIN_ACK;
	} else if (s.win == 0) {
		why = SGW_LIFT_MH_W_WIN_ZERO;
	} else if (new_data) {
		if (f->state == SGW_LIFT_MH_S_PENDING)
			why = SGW_LIFT_MH_W_PENDING;
		else
			why = payload ? SGW_LIFT_MH_W_NEW_DATA_PIGGY : SGW_LIFT_MH_W_NEW_DATA;
	} else if (f->run_probes > 0) {
		why = SGW_LIFT_MH_W_PROBE_REPLY;
	} else if (f->win_zero) {
		why = SGW_LIFT_MH_W_WIN_OPEN;
	} else if (f->transitory) {
		why = f->state == SGW_LIFT_MH_S_PENDING ? SGW_LIFT_MH_W_PENDING :
		      SGW_LIFT_MH_W_TRANSITORY;
	} else if (payload) {
		why = SGW_LIFT_MH_W_DATA;
	} else if (adv || s.win != f->win_sent) {
		why = SGW_LIFT_MH_W_WIN_UPDATE;
	} else if (s.ack == f->ack_sent) {
		why = SGW_LIFT_MH_W_DUP;
	} else {
		why = SGW_LIFT_MH_W_OLD;
	}
	if (adv) {
		f->ack_sent = s.ack;
		f->ack_valid = 1;
	}
	f->win_sent = s.win;
	f->win_zero = s.win == 0;

	if (!lift) {
		int w = f->state == SGW_LIFT_MH_S_CLOSING ? SGW_LIFT_MH_W_CLOSING :
			f->state == SGW_LIFT_MH_S_OFF ? SGW_LIFT_MH_W_OFF :
			f->state == SGW_LIFT_MH_S_HANDSHAKE ? SGW_LIFT_MH_W_HANDSHAKE :
			SGW_LIFT_MH_W_SUSPENDED;

		if (fin_ack && f->state != SGW_LIFT_MH_S_CLOSING)
			go_closing(m, f, now);
		return tx_plain(m, tx, w);
	}

	switch (why) {
	case SGW_LIFT_MH_W_FIN_ACK:
		/* D: "the TCP ACK confirms a TCP FIN segment"; F: "confirms a
		 * TCP FIN segment". The FH sends no more data: LIFT is done. */
		flags = SGW_LIFT_BIT_D | SGW_LIFT_BIT_F;
		go_closing(m, f, now);
		break;
	case SGW_LIFT_MH_W_NEW_DATA:
		/* "the ACK segment, with the WINDOW field greater than zero,
		 * acknowledges new data": a FrACK, no flag (the hub may hold it). */
		pair = true;
		f->transitory = 0;
		break;
	case SGW_LIFT_MH_W_NEW_DATA_PIGGY:
		/* F: "the TCP ACK is piggybacked"; its FrACK still protects. */
		pair = true;
		f->transitory = 0;
		flags = SGW_LIFT_BIT_F;
		break;
	case SGW_LIFT_MH_W_PENDING:
		/* The hub may not hold the entry yet (a FrACK on the datagram
		 * service can overtake the Setup): no FrACK. An ACK of new data
		 * goes bare, as it would at the end of the hub's transitory
		 * phase; anything else is marked S, as in the transitory phase. */
		flags = new_data ? (payload ? SGW_LIFT_BIT_F : 0) : SGW_LIFT_BIT_S;
		break;
	case SGW_LIFT_MH_W_TRANSITORY:
		/* The seed's transitory phase: the hub forwards every TCP ACK
		 * without starting its timer up to the first that acknowledges
		 * new data. The hub can only tell that from the IPsec ACK Number
		 * moving, which it also does for the first ACK a fresh entry
		 * sees; S says "not new data" (the hub never counts an S ACK as
		 * new data, and with its timer stopped forwards it at once), so
		 * the hub's timer starts on the MH's first ACK of new data. */
	case SGW_LIFT_MH_W_DUP:
	case SGW_LIFT_MH_W_OLD:
		/* S: "TCP ACK forwarding has to be delayed if the correspondent
		 * local timer is running ... when the TCP ACK is a duplicate". */
		flags = SGW_LIFT_BIT_S;
		break;
	default:
		/* F: "not to delay the forwarding": a zero window, an unfreeze
		 * (the MH's window reopens, or the FH is probing a freeze: "the
		 * TCP ACK serves to unfreeze the TCP sender"), data ("the TCP ACK
		 * is piggybacked"), a window update. */
		flags = SGW_LIFT_BIT_F;
		break;
	}

build:
	tx->why = (uint8_t)why;
	tx->flags = flags;
	tx->flow_id = f->id;
	tx->ipsec_ack = ack_number(m, f);
	sgw_lift_build_tcp_ack(tx->ack_hdr, sizeof(tx->ack_hdr), flags, f->id, tx->ipsec_ack,
			       m->c.next_header);
	m->st.tx_why[why]++;
	m->st.flag_d += (flags & SGW_LIFT_BIT_D) != 0;
	m->st.flag_f += (flags & SGW_LIFT_BIT_F) != 0;
	m->st.flag_s += (flags & SGW_LIFT_BIT_S) != 0;
	if (pair) {
		sgw_lift_build_frack(tx->frack_hdr, sizeof(tx->frack_hdr), f->id,
				     m->c.next_header);
		m->st.pairs++;
		tx->verdict = SGW_LIFT_MH_PAIR;
	} else {
		tx->verdict = SGW_LIFT_MH_ACK;
	}
	return tx->verdict;
}

/* ------------------------------------------------------------ the clone */

static uint32_t
sum16(uint32_t sum, const uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i + 1 < n; i += 2)
		sum += get16(p + i);
	if (n & 1)
		sum += (uint32_t)p[n - 1] << 8;
	return sum;
}

static uint16_t
fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

size_t
sgw_lift_mh_frack_clone(const void *pkt, size_t len, void *out, size_t cap)
{
	const uint8_t *p = (const uint8_t *)pkt;
	uint8_t *o = (uint8_t *)out, *t, ph[40];
	struct seg s;
	int why = 0;
	size_t n;
	uint32_t sum;

	if (parse(p, len, &s, &why) != 0 || (s.flags & (TH_SYN | TH_RST)) ||
	    !(s.flags & TH_ACK))
		return 0;
	n = (size_t)s.iphl + s.tcphl;
	if (out == NULL || cap < n)
		return 0;
	memcpy(o, p, n);
	t = o + s.iphl;
	/* past the payload (and FIN) the original carried */
	put32(t + 4, s.seq + s.paylen + ((s.flags & TH_FIN) ? 1u : 0u));
	t[13] = (uint8_t)(s.flags & ~(TH_PSH | TH_URG | TH_FIN));
	put16(t + 14, 0);   /* window */
	put16(t + 16, 0);   /* checksum, below */
	put16(t + 18, 0);   /* urgent pointer */
	if (!s.v6) {
		put16(o + 2, (uint16_t)n);
		put16(o + 10, 0);
		put16(o + 10, fold(sum16(0, o, s.iphl)));
		memset(ph, 0, 12);
		memcpy(ph, o + 12, 8);
		ph[9] = 6;
		put16(ph + 10, (uint16_t)s.tcphl);
		sum = sum16(0, ph, 12);
	} else {
		put16(o + 4, (uint16_t)s.tcphl);
		memset(ph, 0, 40);
		memcpy(ph, o + 8, 32);
		sum = sum16(0, ph, 32);
		sum += s.tcphl;
		sum += 6;
	}
	sum = sum16(sum, t, s.tcphl);
	put16(t + 16, fold(sum));
	return n;
}

/* ========================================================= the downlink */

static int
rx_count(struct sgw_lift_mh *m, int why)
{
	m->st.rx_why[why]++;
	return why;
}

/* Section III's measurement: a zero-window probe the MH never invited. */
static void
probe(struct sgw_lift_mh *m, struct mflow *f, uint64_t now)
{
	m->st.probes++;
	if (f->run_probes == 0) {
		f->run_start = now;
		m->st.probe_runs++;
	}
	f->run_last = now;
	want_deadline(m, sgw_add_sat(now, m->c.probe_quiet_ns));
	f->run_probes++;
	if (f->run_probes >= m->c.probe_run_max ||
	    since(now, f->run_start) >= m->c.probe_run_max_ns) {
		suspend(m, f, now, false);
		return;
	}
	share_roll(m, f, now);
	if (share_est(m, f, now) + since(now, f->run_start) >= m->share_limit)
		suspend(m, f, now, true);
}

int
sgw_lift_mh_rx(struct sgw_lift_mh *m, uint64_t now, uint32_t spi, uint32_t seq,
	       const void *inner, size_t len)
{
	struct seg s;
	struct mflow *f;
	int why = 0, ret;
	uint32_t end;

	if (parse((const uint8_t *)inner, len, &s, &why) != 0)
		return rx_count(m, why == SGW_LIFT_MH_W_MALFORMED ? SGW_LIFT_MH_RX_MALFORMED :
				SGW_LIFT_MH_RX_NOT_TCP);
	sa_note(m, spi, seq);
	f = lookup(m, s.dst, s.src, s.dport, s.sport);

	if (s.flags & TH_SYN) {
		if (s.flags & TH_RST)
			return rx_count(m, SGW_LIFT_MH_RX_MALFORMED);
		if (!(s.flags & TH_ACK)) {
			/* The FH opens a connection to the host. A SYN with the
			 * ISN the entry already holds is that SYN retransmitted
			 * (the SYN-ACK was slow over the satellite: the FH's
			 * SYN timer is 1 s) and keeps the entry; another ISN on
			 * the 4-tuple is a new connection and replaces it. */
			if (f != NULL && f->state != SGW_LIFT_MH_S_HANDSHAKE &&
			    !(f->irs_valid && s.seq == f->irs)) {
				if (f->state != SGW_LIFT_MH_S_CLOSING)
					go_closing(m, f, now);
				idx_remove(m, f);
				f = NULL;
			}
			if (f == NULL)
				f = flow_new(m, now, &s, false, spi, SGW_LIFT_IPPROTO_ESP);
			if (f == NULL)
				return rx_count(m, SGW_LIFT_MH_RX_TABLE_FULL);
		} else if (f == NULL) {
			return rx_count(m, SGW_LIFT_MH_RX_NO_FLOW);
		} else if (f->state == SGW_LIFT_MH_S_HANDSHAKE) {
			/* The FH accepted the host's connection: established,
			 * Setup on the SA it actually came on. */
			f->dl_spi = spi;
			f->dl_proto = SGW_LIFT_IPPROTO_ESP;
			go_pending(m, f, now);
		}
		f->last_seen = now;
		f->irs = s.seq;
		f->irs_valid = 1;
		if (!f->rcv_valid || SGW_SEQ_GT(s.seq + 1, f->rcv_nxt))
			f->rcv_nxt = s.seq + 1;
		f->rcv_valid = 1;
		track_add(m, f, s.seq + 1, seq);
		return rx_count(m, SGW_LIFT_MH_RX_SYN);
	}
	if (f == NULL)
		return rx_count(m, SGW_LIFT_MH_RX_NO_FLOW);
	f->last_seen = now;
	ret = -1;
	if (spi != f->dl_spi && f->state != SGW_LIFT_MH_S_HANDSHAKE) {
		/* Rekeyed: ESP numbers start over on the new SA. Tracking starts
		 * over and the hub learns the new SPI (a Setup replaces its
		 * entry), a (re)activation. */
		f->dl_spi = spi;
		f->ntrk = 0;
		f->ipsec_valid = 0;
		f->ipsec_ack = 0;
		if (f->state == SGW_LIFT_MH_S_ACTIVE || f->state == SGW_LIFT_MH_S_PENDING) {
			f->have_entry = 0;
			go_pending(m, f, now);
		}
		ret = SGW_LIFT_MH_RX_REKEY;
	}
	if (s.flags & TH_RST) {
		/* "the MH-LIFT intercepts a TCP RST segment sent by FH": Teardown. */
		if (f->state != SGW_LIFT_MH_S_CLOSING)
			go_closing(m, f, now);
		return rx_count(m, ret >= 0 ? ret : SGW_LIFT_MH_RX_RST);
	}
	end = s.seq + s.paylen + ((s.flags & TH_FIN) ? 1u : 0u);
	if (s.paylen == 0 && !(s.flags & TH_FIN)) {
		bool uninvited = f->rcv_valid && SGW_SEQ_LT(s.seq, f->rcv_nxt) &&
				 f->ack_valid && !f->win_zero &&
				 f->state == SGW_LIFT_MH_S_ACTIVE &&
				 (f->run_probes > 0 ||
				  since(now, f->last_data) <= m->c.probe_guard_ns);

		/* Covered at once when everything before it is acknowledged
		 * (a probe, an FH ACK with nothing outstanding). */
		track_add(m, f, s.seq, seq);
		if (uninvited) {
			probe(m, f, now);
			return rx_count(m, ret >= 0 ? ret : SGW_LIFT_MH_RX_PROBE);
		}
		return rx_count(m, ret >= 0 ? ret : SGW_LIFT_MH_RX_PURE);
	}
	track_add(m, f, end, seq);
	/* Old: all of it acknowledged already (a retransmission). A segment
	 * that fills a hole is new data even though rcv_nxt is past it. */
	if (f->ack_valid && SGW_SEQ_LE(end, f->ack_sent))
		return rx_count(m, ret >= 0 ? ret : SGW_LIFT_MH_RX_OLD);
	if (!f->rcv_valid || SGW_SEQ_GT(end, f->rcv_nxt))
		f->rcv_nxt = end;
	f->rcv_valid = 1;
	f->last_data = now;
	run_close(m, f, now);
	if (f->state == SGW_LIFT_MH_S_TEST)
		f->test_data++;
	if (s.flags & TH_FIN) {
		f->fin_seen = 1;
		f->fin_end = end;
		return rx_count(m, ret >= 0 ? ret : SGW_LIFT_MH_RX_FIN);
	}
	return rx_count(m, ret >= 0 ? ret : SGW_LIFT_MH_RX_DATA);
}

/* ============================================================ control */

static int
ctrl_count(struct sgw_lift_mh *m, int why)
{
	m->st.ctrl_why[why]++;
	return why;
}

int
sgw_lift_mh_ctrl_rx(struct sgw_lift_mh *m, uint64_t now, const void *buf, size_t len)
{
	struct sgw_lift_msg msg;
	struct mflow *f;
	uint32_t slot;

	if (sgw_lift_decode(buf, len, &msg) != SGW_LIFT_DEC_OK ||
	    (msg.kind != SGW_LIFT_K_SETUP_ACK && msg.kind != SGW_LIFT_K_TEARDOWN_ACK))
		return ctrl_count(m, SGW_LIFT_MH_C_BAD);
	slot = msg.flow_id & ((1u << m->slot_bits) - 1u);
	if (slot >= m->c.max_flows)
		return ctrl_count(m, SGW_LIFT_MH_C_UNEXPECTED);
	f = &m->fl[slot];
	if (!f->used || f->id != msg.flow_id)
		return ctrl_count(m, SGW_LIFT_MH_C_UNEXPECTED);
	want_deadline(m, now);
	if (msg.kind == SGW_LIFT_K_SETUP_ACK) {
		/* The echoed SPI names the request (docs/wire-formats.md). */
		if (f->inflight != INF_SETUP || msg.word != f->dl_spi)
			return ctrl_count(m, SGW_LIFT_MH_C_UNEXPECTED);
		f->inflight = INF_NONE;
		f->ctrl_next = SGW_LIFT_MH_NEVER;
		if (msg.next != SGW_LIFT_ST_OK) {
			if (msg.next == SGW_LIFT_ST_FULL)
				m->st.setup_full++;
			else
				m->st.setup_bad_proto++;
			f->have_entry = 0;
			f->maybe_entry = 0;
			f->want_entry = 0;
			if (f->state == SGW_LIFT_MH_S_PENDING)
				f->state = SGW_LIFT_MH_S_OFF;
			return ctrl_count(m, SGW_LIFT_MH_C_SETUP_REFUSED);
		}
		f->have_entry = 1;
		if (f->state == SGW_LIFT_MH_S_PENDING && f->want_entry) {
			/* Activation: the transitory phase runs until the first
			 * ACK of new data. */
			f->state = SGW_LIFT_MH_S_ACTIVE;
			f->transitory = 1;
		}
		return ctrl_count(m, SGW_LIFT_MH_C_SETUP_OK);
	}
	if (f->inflight != INF_TEARDOWN)
		return ctrl_count(m, SGW_LIFT_MH_C_UNEXPECTED);
	/* Removed, or already gone (status unknown flow: a D flag took it). */
	f->inflight = INF_NONE;
	f->ctrl_next = SGW_LIFT_MH_NEVER;
	f->have_entry = 0;
	f->maybe_entry = 0;
	if (f->state == SGW_LIFT_MH_S_CLOSING)
		flow_free(m, f);
	return ctrl_count(m, SGW_LIFT_MH_C_TEARDOWN_OK);
}

/* =============================================================== timers */

static void
emit(struct sgw_lift_mh *m, struct mflow *f, struct sgw_lift_mh_ctrl *c)
{
	memset(c, 0, sizeof(*c));
	c->kind = f->inflight == INF_SETUP ? SGW_LIFT_K_SETUP : SGW_LIFT_K_TEARDOWN;
	c->flow_id = f->id;
	c->retransmit = f->tries;
	if (c->kind == SGW_LIFT_K_SETUP) {
		sgw_lift_build_setup(c->hdr, sizeof(c->hdr), f->id, f->dl_spi, f->dl_proto);
		f->maybe_entry = 1;
	} else {
		sgw_lift_build_teardown(c->hdr, sizeof(c->hdr), f->id);
	}
	if (f->tries == 0) {
		if (c->kind == SGW_LIFT_K_SETUP)
			m->st.setups_sent++;
		else
			m->st.teardowns_sent++;
	} else {
		m->st.ctrl_retx++;
	}
}

/* One flow's timers; returns false when it wanted to send and had no room. */
static bool
flow_poll(struct sgw_lift_mh *m, struct mflow *f, uint64_t now, struct sgw_lift_mh_ctrl *ctrl,
	  uint32_t cap, uint32_t *n)
{
	if (f->state == SGW_LIFT_MH_S_TEST && now >= f->state_until) {
		/* The seed's test: with LIFT off, did data come? */
		if (f->test_data > 0) {
			m->st.verdict_forced++;
			f->state = SGW_LIFT_MH_S_HOLD;
			f->state_until = m->c.hold_ns ? sgw_add_sat(now, m->c.hold_ns) :
					 SGW_LIFT_MH_NEVER;
		} else {
			m->st.verdict_channel++;
			go_pending(m, f, now);
		}
	} else if (f->state == SGW_LIFT_MH_S_HOLD && now >= f->state_until) {
		m->st.resumed++;
		go_pending(m, f, now);
	}
	/* No probe for a while: the sender is not frozen any more (Linux probes a
	 * zero window without end, backing off to 120 s, but the count rule has
	 * long fired by then); it just had nothing to send after the freeze. */
	if (f->run_probes > 0 && since(now, f->run_last) >= m->c.probe_quiet_ns)
		run_close(m, f, now);
	if (f->state != SGW_LIFT_MH_S_CLOSING &&
	    (since(now, f->last_seen) >= m->c.idle_ns ||
	     (f->state == SGW_LIFT_MH_S_HANDSHAKE &&
	      since(now, f->last_seen) >= m->c.handshake_ns))) {
		m->st.idle_expired++;
		go_closing(m, f, now);
	}

	/* A give-up or an acknowledgement freed the request: the next one. */
	if (f->inflight != INF_NONE && now >= f->ctrl_next && f->tries >= m->c.ctrl_tries) {
		if (f->inflight == INF_SETUP) {
			m->st.setup_gaveup++;
			f->want_entry = 0;
			if (f->state == SGW_LIFT_MH_S_PENDING)
				f->state = SGW_LIFT_MH_S_OFF;
		} else {
			m->st.teardown_gaveup++;
		}
		/* Nothing more is asked of the hub for this flow: an entry it may
		 * hold without LIFT traffic freezes nothing. */
		f->maybe_entry = 0;
		f->inflight = INF_NONE;
		f->ctrl_next = SGW_LIFT_MH_NEVER;
	}
	if (f->inflight == INF_NONE) {
		if (f->want_entry && !f->have_entry) {
			f->inflight = INF_SETUP;
		} else if (!f->want_entry && f->maybe_entry) {
			f->inflight = INF_TEARDOWN;
		}
		if (f->inflight != INF_NONE) {
			f->tries = 0;
			f->rto = m->c.ctrl_rto_ns;
			f->ctrl_next = now;
		}
	}
	if (f->inflight != INF_NONE && now >= f->ctrl_next) {
		if (*n >= cap)
			return false;
		emit(m, f, &ctrl[(*n)++]);
		if (f->tries > 0 && f->rto < m->c.ctrl_rto_max_ns) {
			f->rto *= 2;
			if (f->rto > m->c.ctrl_rto_max_ns)
				f->rto = m->c.ctrl_rto_max_ns;
		}
		f->tries++;
		f->ctrl_next = sgw_add_sat(now, f->rto);
	}
	if (f->state == SGW_LIFT_MH_S_CLOSING && f->inflight == INF_NONE && !f->maybe_entry)
		flow_free(m, f);
	return true;
}

static uint64_t
flow_deadline(const struct sgw_lift_mh *m, const struct mflow *f)
{
	uint64_t d = SGW_LIFT_MH_NEVER;

	if (!f->used)
		return d;
	if (f->inflight != INF_NONE)
		d = f->ctrl_next;
	if ((f->state == SGW_LIFT_MH_S_TEST || f->state == SGW_LIFT_MH_S_HOLD) &&
	    f->state_until < d)
		d = f->state_until;
	if (f->run_probes > 0 && sgw_add_sat(f->run_last, m->c.probe_quiet_ns) < d)
		d = sgw_add_sat(f->run_last, m->c.probe_quiet_ns);
	if (f->state != SGW_LIFT_MH_S_CLOSING && sgw_add_sat(f->last_seen, m->c.idle_ns) < d)
		d = sgw_add_sat(f->last_seen, m->c.idle_ns);
	if (f->state == SGW_LIFT_MH_S_HANDSHAKE &&
	    sgw_add_sat(f->last_seen, m->c.handshake_ns) < d)
		d = sgw_add_sat(f->last_seen, m->c.handshake_ns);
	return d;
}

uint32_t
sgw_lift_mh_poll(struct sgw_lift_mh *m, uint64_t now, struct sgw_lift_mh_ctrl *ctrl,
		 uint32_t cap)
{
	uint32_t i, n = 0;
	uint64_t d = SGW_LIFT_MH_NEVER, fd;
	bool starved = false;

	if (ctrl == NULL)
		cap = 0;
	for (i = 0; i < m->c.max_flows; i++) {
		struct mflow *f = &m->fl[i];

		if (!f->used)
			continue;
		if (!flow_poll(m, f, now, ctrl, cap, &n))
			starved = true;
		fd = flow_deadline(m, f);
		if (fd < d)
			d = fd;
	}
	m->deadline = starved ? now : d;
	return n;
}

uint64_t
sgw_lift_mh_next_deadline(const struct sgw_lift_mh *m)
{
	return m->deadline;
}

/* ========================================================== inspection */

void
sgw_lift_mh_get_stats(const struct sgw_lift_mh *m, struct sgw_lift_mh_stats *st)
{
	*st = m->st;
	st->flows = m->c.max_flows - m->nfree;
	st->sas = m->nsa;
}

int
sgw_lift_mh_flow_get(const struct sgw_lift_mh *m, const void *pkt, size_t len,
		     struct sgw_lift_mh_flow_info *info)
{
	struct seg s;
	const struct mflow *f;
	int why = 0;

	if (parse((const uint8_t *)pkt, len, &s, &why) != 0)
		return -1;
	f = lookup(m, s.src, s.dst, s.sport, s.dport);
	if (f == NULL)
		f = lookup(m, s.dst, s.src, s.dport, s.sport);
	if (f == NULL)
		return -1;
	memset(info, 0, sizeof(*info));
	info->flow_id = f->id;
	info->state = f->state;
	info->transitory = f->transitory;
	info->ctrl_inflight = f->inflight;
	info->ctrl_tries = f->tries;
	info->hub_entry = f->have_entry;
	info->probe_run = (uint8_t)(f->run_probes > 255 ? 255 : f->run_probes);
	info->dl_spi = f->dl_spi;
	info->dl_proto = f->dl_proto;
	info->ipsec_ack = f->ipsec_valid ? f->ipsec_ack : 0;
	info->track_n = f->ntrk;
	info->rcv_nxt = f->rcv_nxt;
	info->ack_sent = f->ack_sent;
	info->ctrl_next = f->inflight != INF_NONE ? f->ctrl_next : SGW_LIFT_MH_NEVER;
	info->state_until = f->state_until;
	return 0;
}
