/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The TCP split stage (split.h): split halves on the workers, their relay
 * memory in per-worker pools sized at startup, their timers on the worker's
 * wheel (lib/sgw_tev.h: stage SPLIT, the half's timer id, its pool index),
 * their stream messages on satlink channels (sgw_sl_send_channel /
 * sl->chan_rx), their TCP segments built into mbufs with Ethernet and IPv4
 * or IPv6 headers and sent on the normal TX path. An IPv6 SYN with extension
 * headers is not split (bypassed, counted).
 *
 * Accounting (docs/operations.md): a TCP segment a half takes in is consumed
 * (split_segs_consumed); a segment or stream message it builds is originated
 * (split_segs_originated, split_msgs_originated: the messages satlink then
 * consumes as carried once acknowledged). A delivered message is consumed by
 * satlink (satlink_channel_msgs_delivered) before the split reads it. The
 * halves hold bytes in their relays, never mbufs: held is 0.
 */
#include <assert.h>
#include <inttypes.h>
#include <stdalign.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>

#include <rte_byteorder.h>
#include <rte_ether.h>
#include <rte_hash.h>
#include <rte_ip.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_random.h>

#include "emit.h"
#include "flow_table.h"
#include "satlink.h"
#include "sgw_dp.h"
#include "sgw_pool.h"
#include "sgw_split.h"
#include "sgw_tev.h"
#include "split.h"
#include "stage.h"
#include "tx.h"

#define NONE32 UINT32_MAX

/*
 * What the stage keeps beside each half: x->objs[i] for pool slot i. The
 * half itself (struct sgw_split, 448 bytes, seven cache lines) is the pool
 * slot; these 16 bytes live in their own array so that the slot is not
 * rounded up to 512 (docs/tcp-split.md "Scale"). half_of() and obj_of()
 * go between the two by index.
 */
struct sp_obj {
	uint32_t fpos;                  /* the half's flow table position, NONE32: none */
	uint32_t sess;                  /* satlink session */
	uint8_t out_pidx;               /* where its TCP leg's segments leave */
	uint8_t flags;                  /* SP_F_* */
	uint8_t dst_mac[RTE_ETHER_ADDR_LEN];
};
static_assert(sizeof(struct sp_obj) == 16, "sp_obj grew");
#define SP_F_STALLED 0x01u              /* in the worker's stalled list */
#define SP_F_RELEASED 0x02u             /* in TIME-WAIT after a clean end: its relay
					 * budget given back, reclaimable (tw_release) */
/* Slots tw_reclaim looks at per new connection when the pool is full. */
#define SP_TW_PROBES 64u
/* sgw_pool rounds an object of a cache line or more up to whole lines. */
static_assert(sizeof(struct sgw_split) % 64 == 0, "the pool stride would not be the half size");

/* IPv6's fixed header is 20 bytes longer than IPv4's: the leg's MSS is that much smaller. */
#define SP_IPV6_EXTRA 20u

/* The channel map: (session << 16 | channel) -> pool index, linear probing. */
struct sp_chent {
	uint32_t key;
	uint32_t val;                   /* NONE32: empty */
};

struct sp_worker {
	struct sgw_worker *w;
	const struct sgw_snapshot *s;   /* the snapshot of the current call */
	struct sgw_tcp_stack st;
	struct sgw_split_env env;
	struct sgw_pool pool;           /* the halves (struct sgw_split) */
	void *pool_mem;
	struct sp_obj *objs;            /* slot i: what the stage keeps beside half i */
	uint8_t *relay_mem;             /* slot i: rx ring, then tx ring (mmap, see split_init) */
	size_t relay_len;
	struct sgw_tcp_sb *boards;      /* the TCP legs' SACK scoreboards (lib/sgw_tcp.h) */
	uint32_t ring;                  /* one relay's ring size (power of two) */
	struct sp_chent *chmap;
	uint32_t chmask;
	uint32_t *stall;                /* pool indexes waiting for room */
	uint32_t nstall;
	uint32_t *term_conns;           /* per session */
	uint32_t *sess_wait;            /* per session: its halves in the stalled list */
	const struct sp_obj *turn;      /* the stalled half split_loop is polling */
	uint64_t *term_relay;           /* per session: relay bytes */
	uint16_t ch_lo, ch_hi;          /* this box's opener channels (both ends included) */
	uint16_t mss4;                  /* an IPv4 leg's MSS (the stack's conf.mss at init) */
	uint32_t refuse_sess;           /* the session of the message being read (refusals) */
	uint32_t drop_base;
	uint64_t relay_used;            /* bytes of relay memory given to halves */
	uint64_t ctr[SGW_SPD__COUNT];
	uint64_t byp[SGW_SPD_BYP__COUNT];
	uint64_t orig[2];
	uint64_t cons[1];
	uint64_t rwc_done[11];          /* PETRA/ACKRES: freed halves' rwc stats (rwc_fold) */
	uint32_t occ_max_done;          /* the highest relay occupancy of freed halves */
	/*
	 * Scale (docs/tcp-split.md "Scale"): the PETRA / ACKRES controls out of
	 * the half, slot i for half i, allocated only when the section's rwnd
	 * (fixed at startup, control.c split_diff) is not RWND: an RWND half needs
	 * none (184 bytes saved per half). Per session: the opener channels in
	 * use and the next one to try.
	 */
	struct sgw_rwc *rwcs;           /* NULL under RWND */
	uint16_t *sess_next_ch;         /* per session: the next opener channel to try */
	uint16_t *sess_open_ch;         /* per session: opener channels in use (<= 32767) */
	uint32_t tw_hand;               /* tw_reclaim's next slot to look at */
} __rte_cache_aligned;

struct sp_dp {
	uint32_t cap;                   /* halves per worker */
	uint32_t relay_conn;            /* relay_connection_bytes */
	uint64_t relay_term;
	uint32_t max_term;
	uint32_t n_sess;
	int16_t sat_pidx;
};

enum { SP_DROP_BAD_SEGMENT = 0, SP_DROP_BAD_CHECKSUM, SP_DROP__COUNT };
static const char *const sp_drop_names[SP_DROP__COUNT] = {
	"split_bad_segment", "split_bad_checksum",
};
enum { SP_ORIG_SEGS = 0, SP_ORIG_MSGS, SP_ORIG__COUNT };
static const char *const sp_orig_names[SP_ORIG__COUNT] = {
	"split_segs_originated", "split_msgs_originated",
};
enum { SP_CONS_SEGS = 0, SP_CONS__COUNT };
static const char *const sp_cons_names[SP_CONS__COUNT] = { "split_segs_consumed" };

static const char *const sp_ctr_names[SGW_SPD__COUNT] = {
	"opened", "accepted", "closed", "refused", "late_msgs", "no_mbuf", "timer_full",
	"relay_bytes_max", "aborted_restart", "tw_reused", "restart_probes",
	"halves_reset_at_stop", "tw_released", "tw_recycled",
};
static const char *const sp_byp_names[SGW_SPD_BYP__COUNT] = {
	"bypassed_not_syn", "bypassed_ipv6_ext", "bypassed_fragment", "bypassed_no_session",
	"bypassed_not_owner", "bypassed_no_room", "bypassed_pool_full",
	"bypassed_terminal_cap", "bypassed_terminal_relay", "bypassed_from_satellite",
	"bypassed_open_failed",
};

#define SPD(dp) ((struct sp_dp *)(dp)->sdata[SGW_STAGE_SPLIT])
#define SPW(w) ((struct sp_worker *)(w)->sctx[SGW_STAGE_SPLIT])

/*
 * The pool's stride is sizeof(struct sgw_split) (asserted above): a
 * half's index is a pointer difference, a division by a constant.
 */
static inline struct sgw_split *
half_of(const struct sp_worker *x, const struct sp_obj *o)
{
	return (struct sgw_split *)(void *)x->pool.base + (o - x->objs);
}

static inline struct sp_obj *
obj_of(const struct sp_worker *x, const struct sgw_split *sp)
{
	return &x->objs[sp - (const struct sgw_split *)(const void *)x->pool.base];
}

static inline uint32_t
idx_of(const struct sp_worker *x, const struct sp_obj *o)
{
	return (uint32_t)(o - x->objs);
}

/* ---------------------------------------------------------- channel map */

static inline uint32_t
ch_key(uint32_t sess, uint16_t ch)
{
	return (sess << 16) | ch;
}

static inline uint32_t
ch_hash(uint32_t k)
{
	return (k * 2654435761u) >> 7;
}

static uint32_t
ch_find(const struct sp_worker *x, uint32_t key)
{
	uint32_t i = ch_hash(key) & x->chmask, n;

	for (n = 0; n <= x->chmask; n++, i = (i + 1) & x->chmask) {
		if (x->chmap[i].val == NONE32)
			return NONE32;
		if (x->chmap[i].key == key)
			return x->chmap[i].val;
	}
	return NONE32;
}

/* The map holds at most cap entries in 2 x cap slots or more: never full. */
static void
ch_add(struct sp_worker *x, uint32_t key, uint32_t val)
{
	uint32_t i = ch_hash(key) & x->chmask;

	while (x->chmap[i].val != NONE32)
		i = (i + 1) & x->chmask;
	x->chmap[i].key = key;
	x->chmap[i].val = val;
}

/* Linear probing's deletion by backward shift (no tombstones). */
static void
ch_del(struct sp_worker *x, uint32_t key)
{
	uint32_t i = ch_hash(key) & x->chmask, j, n, h;

	for (n = 0; n <= x->chmask; n++, i = (i + 1) & x->chmask) {
		if (x->chmap[i].val == NONE32)
			return;
		if (x->chmap[i].key == key)
			break;
	}
	if (n > x->chmask)
		return;
	j = i;
	for (n = 0; n < x->chmask; n++) {
		j = (j + 1) & x->chmask;
		if (x->chmap[j].val == NONE32)
			break;
		h = ch_hash(x->chmap[j].key) & x->chmask;
		/* Move j's entry to the hole i unless its home lies cyclically in (i, j]. */
		if ((j > i && (h <= i || h > j)) || (j < i && h <= i && h > j)) {
			x->chmap[i] = x->chmap[j];
			i = j;
		}
	}
	x->chmap[i].val = NONE32;
}

/* -------------------------------------------------------- lib callbacks */

static void
stall_mark(struct sp_worker *x, struct sp_obj *o)
{
	if ((o->flags & SP_F_STALLED) || x->nstall >= 2u * x->pool.cap)
		return;
	o->flags |= SP_F_STALLED;
	x->sess_wait[o->sess]++;
	x->stall[x->nstall++] = idx_of(x, o);
}

static void
stall_clear(struct sp_worker *x, struct sp_obj *o)
{
	if (!(o->flags & SP_F_STALLED))
		return;
	o->flags &= (uint8_t)~SP_F_STALLED;
	x->sess_wait[o->sess]--;
}

/*
 * How many DATA messages a session's satlink feed queue takes now.
 *
 * A few slots are kept from DATA for the messages that open and end halves
 * (OPEN, OPEN_OK, REFUSED, RST, FIN, credit), which take any room left.
 * Without them a bulk stream filled the queue, and a new SYN behind it found
 * no room for its OPEN and was forwarded unsplit (bypassed_no_room): nothing
 * new was split while a terminal's uplink was busy (CI's e2e_split_faults).
 * An eighth of the queue, at most 8 slots (none for a queue of fewer than 8).
 *
 * And DATA fills the queue only to sat_queue_ms of the session's rate (at
 * least SP_DATA_MIN messages): the relay holds the rest. Everything else of
 * the session (other streams' OPEN and requests, forwarded reliable packets)
 * waits behind what is queued: a full send_queue of 1024 frames is 0.57 s at
 * 20 Mbit/s, paid by every light stream next to a bulk one
 * (docs/experiments.md "A light stream next to a bulk download").
 */
#define SP_CTRL_RESERVE 8u
#define SP_DATA_MIN 8u

static uint32_t
data_room(const struct sp_worker *x, uint32_t sess)
{
	uint32_t room = sgw_sl_channel_room(x->w, sess);
	uint32_t cap = sgw_sl_channel_cap(x->w, sess);
	uint32_t res = RTE_MIN(cap / 8, SP_CTRL_RESERVE);
	uint32_t ms = x->s->pol.split.sat_queue_ms;
	uint32_t n = room > res ? room - res : 0;

	if (ms != 0 && n != 0) {
		uint32_t lim = RTE_MAX(sgw_sl_channel_msgs_in(x->w, sess, (uint64_t)ms * 1000000u,
							      x->env.conf.max_msg), SP_DATA_MIN);
		uint32_t queued = cap - room;

		n = RTE_MIN(n, queued < lim ? lim - queued : 0u);
	}
	return n;
}

static uint32_t
sat_can_send(void *ctx, const struct sgw_split *sp, uint64_t now)
{
	struct sp_worker *x = ctx;
	struct sp_obj *o = obj_of(x, sp);
	uint32_t room = data_room(x, o->sess);

	RTE_SET_USED(now);
	/*
	 * The session's room goes to its stalled halves first, in the order
	 * they stalled (split_loop), each up to its message budget per turn:
	 * a half that calls because its own peer sent something joins the end
	 * of the line. Without this, the half whose TCP input comes most often
	 * took every slot the pacer freed, and concurrent streams of one
	 * terminal starved (4 downloads at BER 1e-5: 0.003-0.285 of the rate
	 * each, docs/experiments.md "Split goodput").
	 */
	if (room == 0 || (x->sess_wait[o->sess] > 0 && x->turn != o)) {
		stall_mark(x, o);
		return 0;
	}
	return room * x->env.conf.max_msg;
}

static int
sat_send(void *ctx, struct sgw_split *sp, uint16_t channel, const struct sgw_split_iov *iov,
	 unsigned int n)
{
	struct sp_worker *x = ctx;
	uint32_t sess = sp != NULL ? obj_of(x, sp)->sess : x->refuse_sess;
	struct rte_mbuf *m;
	uint32_t len = 0, i;
	uint8_t *p;

	for (i = 0; i < n; i++)
		len += iov[i].len;
	if (sess == NONE32 || len == 0 || len > UINT16_MAX)
		return -1;
	m = rte_pktmbuf_alloc(x->w->dp->pool);
	if (m == NULL || (p = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)len)) == NULL) {
		x->ctr[SGW_SPD_NO_MBUF]++;
		rte_pktmbuf_free(m);
		if (sp != NULL)
			stall_mark(x, obj_of(x, sp));
		return -1;
	}
	for (i = 0; i < n; i++) {
		memcpy(p, iov[i].p, iov[i].len);
		p += iov[i].len;
	}
	if (sgw_sl_send_channel(x->w, x->s, sess, channel, m) != 0) {
		rte_pktmbuf_free(m);
		if (sp != NULL)
			stall_mark(x, obj_of(x, sp));
		return -1;
	}
	x->orig[SP_ORIG_MSGS]++;
	return 0;
}

/*
 * The one's-complement sum of a TCP segment of len bytes and its family's
 * pseudo-header (addresses src and dst, 4 or 16 bytes; protocol; TCP length),
 * folded, in the byte order of the checksum field. Built segments store its
 * complement; a received segment is intact when it is 0xffff. DPDK's raw sum,
 * not the lib's portable sgw_tcp_csum_*: 967 against 2,360 instructions for a
 * 1480-byte segment (callgrind, -O3 -march=corei7), and it runs for every
 * segment either way.
 */
static uint16_t
tcp_sum(const uint8_t *src, const uint8_t *dst, bool v6, const void *tcp, uint32_t len)
{
	uint32_t sum = __rte_raw_cksum(src, v6 ? 16u : 4u, 0);

	sum = __rte_raw_cksum(dst, v6 ? 16u : 4u, sum);
	sum = __rte_raw_cksum(tcp, len, sum);
	sum += rte_cpu_to_be_16(IPPROTO_TCP);
	sum += rte_cpu_to_be_16((uint16_t)(len & 0xffffu)) + rte_cpu_to_be_16((uint16_t)(len >> 16));
	return __rte_raw_cksum_reduce(sum);
}

/*
 * One TCP segment toward a local peer, framed and sent: Ethernet to dst_mac
 * on port pidx, a bare IPv4 (DF, TTL 64) or IPv6 (hop limit 64) header, the
 * TCP header hdr (its checksum filled in here) and the data pieces. No mbuf:
 * counted, and the caller's timers send again. Returns 0 when sent.
 */
static int
seg_send(struct sp_worker *x, uint16_t pidx, const uint8_t *dst_mac, bool v6,
	 const uint8_t *src, const uint8_t *dst, const uint8_t *hdr, uint32_t hlen,
	 const struct sgw_split_iov *data, unsigned int n)
{
	struct sgw_worker *w = x->w;
	const uint32_t iplen = v6 ? (uint32_t)sizeof(struct rte_ipv6_hdr) :
		(uint32_t)sizeof(struct rte_ipv4_hdr);
	struct rte_ether_hdr *eh;
	struct rte_mbuf *m;
	uint32_t dlen = 0, len, i;
	uint8_t *tcp, *p;
	uint16_t csum;

	for (i = 0; i < n; i++)
		dlen += data[i].len;
	len = RTE_ETHER_HDR_LEN + iplen + hlen + dlen;
	m = rte_pktmbuf_alloc(w->dp->pool);
	if (m == NULL || len > rte_pktmbuf_tailroom(m) ||
	    (p = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)len)) == NULL) {
		x->ctr[SGW_SPD_NO_MBUF]++;
		rte_pktmbuf_free(m);
		return -1;
	}
	eh = (struct rte_ether_hdr *)p;
	memcpy(&eh->dst_addr, dst_mac, RTE_ETHER_ADDR_LEN);
	rte_ether_addr_copy(&w->dp->ports[pidx].mac, &eh->src_addr);
	if (v6) {
		struct rte_ipv6_hdr *ip6 = (struct rte_ipv6_hdr *)(p + RTE_ETHER_HDR_LEN);

		eh->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV6);
		/* Version 6, traffic class 0, flow label 0; no extension headers. */
		ip6->vtc_flow = rte_cpu_to_be_32(UINT32_C(6) << 28);
		ip6->payload_len = rte_cpu_to_be_16((uint16_t)(hlen + dlen));
		ip6->proto = 6;
		ip6->hop_limits = 64;
		memcpy(ip6->src_addr, src, 16);
		memcpy(ip6->dst_addr, dst, 16);
	} else {
		struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(p + RTE_ETHER_HDR_LEN);

		eh->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
		memset(ip, 0, sizeof(*ip));
		ip->version_ihl = 0x45;
		ip->total_length = rte_cpu_to_be_16((uint16_t)(sizeof(*ip) + hlen + dlen));
		ip->fragment_offset = rte_cpu_to_be_16(RTE_IPV4_HDR_DF_FLAG);
		ip->time_to_live = 64;
		ip->next_proto_id = 6;
		memcpy(&ip->src_addr, src, 4);
		memcpy(&ip->dst_addr, dst, 4);
		ip->hdr_checksum = rte_ipv4_cksum(ip);
	}
	tcp = p + RTE_ETHER_HDR_LEN + iplen;
	memcpy(tcp, hdr, hlen);
	p = tcp + hlen;
	for (i = 0; i < n; i++) {
		memcpy(p, data[i].p, data[i].len);
		p += data[i].len;
	}
	tcp[16] = tcp[17] = 0;
	csum = (uint16_t)~tcp_sum(src, dst, v6, tcp, hlen + dlen);
	memcpy(tcp + 16, &csum, sizeof(csum));
	x->orig[SP_ORIG_SEGS]++;
	sgw_tx(w, pidx, m, x->s->pol.workers.burst);
	return 0;
}

static void
io_tcp_tx(void *ctx, struct sgw_split *sp, const uint8_t *hdr, uint32_t hlen,
	  const struct sgw_split_iov *data, unsigned int n)
{
	struct sp_worker *x = ctx;
	struct sp_obj *o = obj_of(x, sp);
	const bool opener = sp->role == SGW_SPLIT_OPENER;

	/* No mbuf: the leg's retransmission timer sends it again. */
	(void)seg_send(x, o->out_pidx, o->dst_mac, sp->addr.ipv6 != 0,
		       opener ? sp->addr.daddr : sp->addr.saddr,
		       opener ? sp->addr.saddr : sp->addr.daddr, hdr, hlen, data, n);
}

/* ------------------------------------------------------------ the halves */

/*
 * PETRA/ACKRES window-control counters (lib/sgw_relay.h struct sgw_rwc_stats,
 * per half) exported as rwc_* (docs/telemetry.md): a freed half's are folded
 * into its worker's totals, a live half's read from the pool.
 */
static const struct {
	const char *name;
	size_t off;
} sp_rwc_fields[] = {
	{ "rwc_acks_sent", offsetof(struct sgw_rwc_stats, acks_sent) },
	{ "rwc_zero_windows", offsetof(struct sgw_rwc_stats, zero_windows) },
	{ "rwc_anti_freeze", offsetof(struct sgw_rwc_stats, anti_freeze) },
	{ "rwc_drain_updates", offsetof(struct sgw_rwc_stats, drain_updates) },
	{ "rwc_withheld", offsetof(struct sgw_rwc_stats, withheld) },
	{ "rwc_rto_refreshes", offsetof(struct sgw_rwc_stats, rto_refreshes) },
	{ "rwc_scale_retractions", offsetof(struct sgw_rwc_stats, scale_retractions) },
	{ "rwc_sws_holds", offsetof(struct sgw_rwc_stats, sws_holds) },
	{ "rwc_rtt_samples", offsetof(struct sgw_rwc_stats, rtt_samples) },
	{ "rwc_dup_segments", offsetof(struct sgw_rwc_stats, dup_segments) },
	{ "rwc_bad_input", offsetof(struct sgw_rwc_stats, bad_input) },
};
#define SP_RWC_N RTE_DIM(sp_rwc_fields)

static inline uint32_t
rwc_stat(const struct sgw_rwc *c, unsigned int k)
{
	uint32_t v;

	memcpy(&v, (const uint8_t *)&c->st + sp_rwc_fields[k].off, sizeof(v));
	return v;
}

static void
rwc_fold(struct sp_worker *x, const struct sp_obj *o)
{
	const struct sgw_rwc *c = sgw_split_rwc(half_of(x, o));
	unsigned int k;

	RTE_BUILD_BUG_ON(SP_RWC_N != RTE_DIM(x->rwc_done));
	if (c == NULL)
		return;
	for (k = 0; k < SP_RWC_N; k++)
		x->rwc_done[k] += rwc_stat(c, k);
}

/* The half's relays leave its terminal's and its worker's budget. */
static void
relay_give_back(struct sp_worker *x, const struct sp_obj *o)
{
	const uint64_t two = 2u * (uint64_t)SPD(x->w->dp)->relay_conn;

	if (o->sess < SPD(x->w->dp)->n_sess)
		x->term_relay[o->sess] -= two;
	x->relay_used -= two;
}

static void
half_free(struct sp_worker *x, struct sp_obj *o)
{
	struct sgw_worker *w = x->w;
	struct sgw_flow_table *ft = w->flows;
	struct sgw_split *sp = half_of(x, o);
	uint32_t idx = idx_of(x, o), id;

	rwc_fold(x, o);
	__atomic_store_n(&x->occ_max_done,
			 RTE_MAX(x->occ_max_done, RTE_MAX(sp->rx.occ_max, sp->tx.occ_max)),
			 __ATOMIC_RELAXED);

	for (id = 0; id < SGW_TCP_T__COUNT; id++)
		sgw_tev_stop(w->tw, &sp->tcp.tw[id]);
	for (id = 0; id < 2; id++)
		sgw_tev_stop(w->tw, &sp->tw_split[id]);
	/* A half registered on one of this box's opener channels gives it back. */
	if (sp->channel >= x->ch_lo && sp->channel <= x->ch_hi &&
	    o->sess < SPD(w->dp)->n_sess && ch_find(x, ch_key(o->sess, sp->channel)) == idx)
		x->sess_open_ch[o->sess]--;
	ch_del(x, ch_key(o->sess, sp->channel));
	if (o->fpos != NONE32 && o->fpos < ft->cap && ft->e[o->fpos].mech == idx &&
	    ft->e[o->fpos].mech_stage == SGW_STAGE_SPLIT)
		sgw_flow_del(ft, w->tw, o->fpos);
	if (o->sess < SPD(w->dp)->n_sess)
		x->term_conns[o->sess]--;
	if (!(o->flags & SP_F_RELEASED))
		relay_give_back(x, o);
	sp->state = SGW_SPLIT_S_FREE;
	stall_clear(x, o);  /* a stale entry in the stalled list finds it free */
	x->ctr[SGW_SPD_CLOSED]++;
	sgw_pool_free(&x->pool, idx);
}

/*
 * A half given up at once: its leg aborted (a RST to the local peer unless
 * the leg is closed or in TIME-WAIT; the channel is gone, so nothing to the
 * far half), whatever the abort asked ignored, the half freed with its
 * timers. The leg is CLOSED before its slot is reused, as lib/sgw_tcp.h asks
 * (its scoreboard, if any, back to the stack's pool).
 */
static void
half_drop(struct sp_worker *x, struct sp_obj *o)
{
	struct sgw_split_out out;

	sgw_split_abort(&x->env, half_of(x, o), x->w->now_ns, 0, &out);
	half_free(x, o);
}

/*
 * TIME-WAIT (docs/tcp-split.md "TIME-WAIT"). A leg that closed first waits
 * 2 MSL (60 s) in TIME-WAIT, and its half with it: at the defaults (512
 * halves a worker, 32 a terminal's relay budget) a worker could open about
 * 8 split connections a second, a terminal 32 a minute, before new ones were
 * bypassed. A half whose stream ended cleanly and whose relays are empty
 * (sgw_split_relays_done) needs only its leg's timer: its relay budget goes
 * back to its terminal and worker at once (tw_release), and when the pool (or
 * the terminal's max_connections_per_terminal) is full a new connection takes
 * the place of such a half (tw_reclaim: its
 * TIME-WAIT ends early, as Linux drops TIME-WAIT sockets past
 * tcp_max_tw_buckets; a late FIN from that peer is then forwarded as an
 * unknown flow's segment, the peer's own timers end it).
 */
static void
tw_release(struct sp_worker *x, struct sp_obj *o)
{
	o->flags |= SP_F_RELEASED;
	relay_give_back(x, o);
	x->ctr[SGW_SPD_TW_RELEASED]++;
}

/*
 * A clock hand over the pool, at most SP_TW_PROBES slots per call (work
 * bounded by local state, not by how many halves wait): frees the first
 * released half in TIME-WAIT it meets, of session sess (NONE32: any). 1 when
 * a half was freed.
 */
static int
tw_reclaim(struct sp_worker *x, uint32_t sess)
{
	uint32_t k;

	for (k = 0; k < SP_TW_PROBES && k < x->pool.cap; k++) {
		uint32_t i = x->tw_hand;
		struct sp_obj *o = &x->objs[i];
		const struct sgw_split *sp = half_of(x, o);

		x->tw_hand = i + 1u < x->pool.cap ? i + 1u : 0u;
		if (sgw_pool_in_use(&x->pool, i) && sp->state != SGW_SPLIT_S_FREE &&
		    (o->flags & SP_F_RELEASED) && sp->tcp.state == SGW_TCP_TIME_WAIT &&
		    (sess == NONE32 || o->sess == sess)) {
			half_drop(x, o);
			x->ctr[SGW_SPD_TW_RECYCLED]++;
			return 1;
		}
	}
	return 0;
}

/* Carry out what a lib call asked: timers, then the end of the half. */
static void
half_out(struct sp_worker *x, struct sp_obj *o, const struct sgw_split_out *out)
{
	struct sgw_worker *w = x->w;
	uint32_t idx = idx_of(x, o), id;
	bool timer_full = false;

	for (id = 0; id < SGW_SPLIT_T__COUNT; id++) {
		sgw_tw_handle_t *h;
		uint64_t at;

		if (!(out->timer_set & (1u << id)))
			continue;
		h = id < SGW_TCP_T__COUNT ? &half_of(x, o)->tcp.tw[id] :
			&half_of(x, o)->tw_split[id - SGW_TCP_T__COUNT];
		at = out->timer_at[id];
		if (at == SGW_TCP_NEVER)
			sgw_tev_stop(w->tw, h);
		else if (sgw_tev_arm(w->tw, h, SGW_STAGE_SPLIT, (uint8_t)id, idx,
				     at > w->now_ns ? at - w->now_ns : 0) != 0)
			timer_full = true;
	}
	if (out->events & (SGW_SPLIT_EV_CLOSED | SGW_SPLIT_EV_TW_REUSE)) {
		if (out->events & SGW_SPLIT_EV_TW_REUSE)
			half_drop(x, o);
		else
			half_free(x, o);
		return;
	}
	if (timer_full) {
		/* A half without its timers could hang for ever: give it up. */
		x->ctr[SGW_SPD_TIMER_FULL]++;
		half_drop(x, o);
		return;
	}
	if (!(o->flags & SP_F_RELEASED) && sgw_split_relays_done(half_of(x, o)))
		tw_release(x, o);
	/* Its message budget ran out with more to send: poll it from the loop. */
	if (out->events & SGW_SPLIT_EV_MORE)
		stall_mark(x, o);
}

/* A half's slot and relay budget for session sess, or NULL (*why says why). */
static struct sp_obj *
half_alloc(struct sp_worker *x, uint32_t sess, struct sgw_split_bufs *b, int *why)
{
	const struct sp_dp *d = SPD(x->w->dp);
	uint64_t two = 2u * (uint64_t)d->relay_conn;
	struct sgw_split *sp;
	struct sp_obj *o;
	uint32_t idx, id;

	/* The worker's pool first: with one terminal its cap is the terminal's too. */
	if (x->pool.used >= x->pool.cap && !tw_reclaim(x, NONE32)) {
		*why = SGW_SPD_BYP_POOL_FULL;
		return NULL;
	}
	if (x->term_conns[sess] >= d->max_term && !tw_reclaim(x, sess)) {
		*why = SGW_SPD_BYP_TERMINAL_CAP;
		return NULL;
	}
	if (x->term_relay[sess] + two > d->relay_term) {
		*why = SGW_SPD_BYP_TERMINAL_RELAY;
		return NULL;
	}
	idx = sgw_pool_alloc(&x->pool);
	if (idx == SGW_POOL_NONE) {
		*why = SGW_SPD_BYP_POOL_FULL;
		return NULL;
	}
	o = &x->objs[idx];
	sp = half_of(x, o);
	for (id = 0; id < SGW_TCP_T__COUNT; id++)
		sp->tcp.tw[id] = SGW_TW_INVALID;
	sp->tw_split[0] = sp->tw_split[1] = SGW_TW_INVALID;
	o->fpos = NONE32;
	o->sess = sess;
	o->flags = 0;
	x->term_conns[sess]++;
	x->term_relay[sess] += two;
	x->relay_used += two;
	if (x->relay_used > x->ctr[SGW_SPD_RELAY_MAX])
		x->ctr[SGW_SPD_RELAY_MAX] = x->relay_used;
	b->rx_mem = x->relay_mem + (size_t)idx * 2u * x->ring;
	b->rx_ring = x->ring;
	b->rx_limit = d->relay_conn;
	b->tx_mem = x->relay_mem + ((size_t)idx * 2u + 1u) * x->ring;
	b->tx_ring = x->ring;
	b->tx_limit = d->relay_conn;
	return o;
}

/*
 * PETRA and ACKRES need the half's own control (its slot in x->rwcs, which
 * exists whenever the startup section's rwnd is not RWND, and rwnd cannot
 * change without a restart); RWND is the lib's default (NULL).
 */
static struct sgw_rwc *
rwc_of(const struct sp_worker *x, const struct sgw_snapshot *s, struct sp_obj *o)
{
	if (s->pol.split.rwnd == SGW_SPLIT_RWND_RWND || x->rwcs == NULL)
		return NULL;
	return &x->rwcs[idx_of(x, o)];
}

/*
 * The MSS the next leg offers and clamps to (sgw_tcp_conn_init takes the
 * stack's conf.mss, and sgw_split_open / _accept init and open the leg in one
 * call): an IPv6 leg's is 20 bytes below an IPv4 leg's, so its full segments
 * fit the same MTU. Set before every open and accept.
 */
static void
leg_mss(struct sp_worker *x, bool v6)
{
	x->st.conf.mss = v6 ? (uint16_t)(x->mss4 - SP_IPV6_EXTRA) : x->mss4;
}

/*
 * An IPv4 leg's MSS: the stack's default (1460), lowered to fit the MTU of
 * the ports the legs use (a hub's terrestrial ports, a terminal's LAN ports):
 * a LAN behind a 1400-byte tunnel gets 1360 in the SYN-ACK and segments that
 * fit, rather than 1460 and ICMP "fragmentation needed" (PMTU discovery
 * itself, reacting to that ICMP, is not built). Never raised above the
 * default: jumbo ports keep 1460, which the satellite leg is framed for.
 */
static uint16_t
leg_mss_of_ports(const struct sgw_dp *dp, const struct sgw_policy *pol, uint16_t mss)
{
	const uint8_t role = pol->role == SGW_ROLE_HUB ? SGW_PORT_TERRESTRIAL : SGW_PORT_LAN;
	uint16_t p, mtu;

	for (p = 0; p < pol->n_ports; p++) {
		if (pol->ports[p].role != role ||
		    rte_eth_dev_get_mtu(dp->ports[p].port_id, &mtu) != 0 || mtu <= 40u + 536u)
			continue;
		if ((uint16_t)(mtu - 40u) < mss) {
			mss = (uint16_t)(mtu - 40u);
			SGW_LOG(INFO, "split: legs' MSS %u (IPv4), %u (IPv6): port '%s' MTU %u",
				mss, mss - SP_IPV6_EXTRA, pol->ports[p].name, mtu);
		}
	}
	return mss;
}

static void
bypass(struct sp_worker *x, struct sgw_flow *f, int why)
{
	x->byp[why]++;
	/* Decided for the flow: its later packets go the flow stage's way at once. */
	f->mech_stage = SGW_STAGE_SPLIT;
	f->mech = SGW_POOL_NONE;
}

/*
 * A split ends the connection here, so the end-to-end checksum ends here too:
 * a segment the far host would have discarded must not be acknowledged and
 * relayed. The NIC's verdict where it gave one (RX TCP checksum offload,
 * dp.c), else tcp_sum (IPv6 extension headers are not in the pseudo-header).
 */
static bool
csum_ok(const struct rte_mbuf *m, const struct sgw_pkt_info *pi, uint32_t l4len)
{
	const uint64_t f = m->ol_flags & RTE_MBUF_F_RX_L4_CKSUM_MASK;
	const bool v6 = pi->ip_ver == 6;
	/* the source address: IPv4 bytes 12..15, IPv6 bytes 8..23; the destination follows */
	const uint8_t *src = rte_pktmbuf_mtod_offset(m, const uint8_t *, pi->l3_off + (v6 ? 8 : 12));

	if (f == RTE_MBUF_F_RX_L4_CKSUM_GOOD)
		return true;
	if (f == RTE_MBUF_F_RX_L4_CKSUM_BAD)
		return false;
	return tcp_sum(src, src + (v6 ? 16 : 4), v6,
		       rte_pktmbuf_mtod_offset(m, const void *, pi->l4_off), l4len) == 0xffff;
}

/*
 * The TCP segment at the packet's L4 (IPv4 or IPv6), parsed: 0, -1 when
 * malformed, -2 when its checksum is wrong.
 */
static int
seg_of(const struct rte_mbuf *m, const struct sgw_pkt_info *pi, struct sgw_tcp_seg *seg,
       uint64_t *pctr)
{
	uint32_t l4len;

	if (pi->l3_len < (uint32_t)(pi->l4_off - pi->l3_off))
		return -1;
	l4len = pi->l3_len - (uint32_t)(pi->l4_off - pi->l3_off);
	if ((uint32_t)pi->l4_off + l4len > rte_pktmbuf_data_len(m))
		return -1;
	if (sgw_tcp_seg_parse(rte_pktmbuf_mtod_offset(m, const uint8_t *, pi->l4_off),
			      l4len, seg, pctr) != SGW_TCP_PR_OK)
		return -1;
	return csum_ok(m, pi, l4len) ? 0 : -2;
}

/* A client's SYN at a terminal: the opener half, or a bypass. */
static int
half_open(struct sp_worker *x, const struct sgw_snapshot *s, struct rte_mbuf *m,
	  const struct sgw_pkt_meta *pm, int32_t fp, int32_t rule)
{
	struct sgw_worker *w = x->w;
	struct sgw_flow *f = &w->flows->e[fp];
	const struct sgw_pkt_info *pi = &pm->info;
	struct sgw_split_addr a;
	struct sgw_split_bufs b;
	struct sgw_split_out out;
	struct sgw_tcp_seg seg;
	const struct rte_ether_hdr *eh;
	struct sp_obj *o;
	int32_t sess;
	uint32_t n, iss;
	unsigned int alen = pi->ip_ver == 6 ? 16u : 4u;
	uint16_t ch = 0;
	int why = 0, rc;

	/*
	 * Either box opens: the terminal for a client on its LAN, the hub for a
	 * host on the terrestrial side opening toward a terminal's LAN. A SYN
	 * that arrives from the satellite was bypassed by the far box (a cap,
	 * no session): it is forwarded untouched here too, never split twice.
	 */
	if (pm->pidx == (uint16_t)SPD(w->dp)->sat_pidx) {
		bypass(x, f, SGW_SPD_BYP_FROM_SAT);
		return 0;
	}
	if ((pi->tcp_flags & (SGW_TCP_F_SYN | SGW_TCP_F_ACK | SGW_TCP_F_RST | SGW_TCP_F_FIN)) !=
	    SGW_TCP_F_SYN) {
		bypass(x, f, SGW_SPD_BYP_NOT_SYN);
		return 0;
	}
	if (pi->frag != 0) {
		bypass(x, f, SGW_SPD_BYP_FRAGMENT);
		return 0;
	}
	/*
	 * IPv6 with extension headers (hop-by-hop, routing, destination
	 * options, an atomic fragment header): the legs send bare IPv6 + TCP,
	 * which would drop them, so such a connection is left alone.
	 */
	if (pi->ip_ver == 6 && pi->l4_off - pi->l3_off != (int)sizeof(struct rte_ipv6_hdr)) {
		bypass(x, f, SGW_SPD_BYP_IPV6_EXT);
		return 0;
	}
	sess = sgw_sl_sess_of_term(s, pm->term);
	if (sess < 0) {
		bypass(x, f, SGW_SPD_BYP_NO_SESSION);
		return 0;
	}
	if (sgw_sl_of(w->dp)->sess[sess].owner != w->idx) {
		bypass(x, f, SGW_SPD_BYP_NOT_OWNER);
		return 0;
	}
	if (sgw_sl_channel_room(w, (uint32_t)sess) == 0) {
		bypass(x, f, SGW_SPD_BYP_NO_ROOM);
		return 0;
	}
	rc = seg_of(m, pi, &seg, x->st.parse_ctr);
	if (rc == -2) {
		/* A corrupted SYN: dropped as its server would; the flow stays undecided. */
		w->c.drop[x->drop_base + SP_DROP_BAD_CHECKSUM]++;
		rte_pktmbuf_free(m);
		return 1;
	}
	if (rc != 0) {
		bypass(x, f, SGW_SPD_BYP_OPEN_FAILED);
		return 0;
	}
	/*
	 * The channel space is per satlink session: this box's half of it (the
	 * terminal's openers 1..32767, the hub's 32768..65535) bounds the
	 * session's opener halves, not the worker's (a hub worker serves many
	 * sessions). A session with all of them in use bypasses, counted as its
	 * per-terminal cap (docs/tcp-split.md "Scale").
	 */
	if (x->sess_open_ch[sess] >= (uint32_t)(x->ch_hi - x->ch_lo) + 1u) {
		bypass(x, f, SGW_SPD_BYP_TERMINAL_CAP);
		return 0;
	}
	o = half_alloc(x, (uint32_t)sess, &b, &why);
	if (o == NULL) {
		bypass(x, f, why);
		return 0;
	}
	/*
	 * A channel of this box's half of the space (docs/tcp-split.md: the two
	 * ends never pick the same one) not in use, round robin per session so a
	 * channel just closed is not reused at once. The search is bounded by the
	 * session's own state: of any open + 1 consecutive channels at least one
	 * is free (open < the space, checked above), so it probes at most
	 * open + 1, and usually one: channels are taken in cursor order and
	 * connections mostly end in about the order they began.
	 */
	for (n = 0; n <= x->sess_open_ch[sess]; n++) {
		ch = x->sess_next_ch[sess];
		x->sess_next_ch[sess] = ch >= x->ch_hi ? x->ch_lo : (uint16_t)(ch + 1u);
		if (ch_find(x, ch_key((uint32_t)sess, ch)) == NONE32)
			break;
	}
	memset(&a, 0, sizeof(a));
	a.ipv6 = pi->ip_ver == 6;
	memcpy(a.saddr, pi->src, alen);
	memcpy(a.daddr, pi->dst, alen);
	a.sport = pi->sport;
	a.dport = pi->dport;
	/* Segments to the client go back where its SYN came from. */
	eh = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	memcpy(o->dst_mac, &eh->src_addr, RTE_ETHER_ADDR_LEN);
	o->out_pidx = pm->pidx;
	o->fpos = (uint32_t)fp;
	iss = sgw_tcp_isn(&x->st, pi->dst, pi->src, alen, pi->dport, pi->sport, w->now_ns);
	x->refuse_sess = (uint32_t)sess;
	leg_mss(x, a.ipv6);
	if (sgw_split_open(&x->env, half_of(x, o), w->now_ns, &a, &seg,
			   s->pol.rules[rule].split_handshake == SGW_SPLIT_HS_SPOOFED ?
			   SGW_SPLIT_SPOOFED : SGW_SPLIT_END_TO_END, ch, iss, &b, rwc_of(x, s, o),
			   &out) != 0) {
		o->fpos = NONE32;
		half_free(x, o);
		x->ctr[SGW_SPD_CLOSED]--;
		bypass(x, f, SGW_SPD_BYP_OPEN_FAILED);
		return 0;
	}
	ch_add(x, ch_key((uint32_t)sess, ch), idx_of(x, o));
	x->sess_open_ch[sess]++;
	f->mech = idx_of(x, o);
	f->mech_stage = SGW_STAGE_SPLIT;
	x->ctr[SGW_SPD_OPENED]++;
	x->cons[SP_CONS_SEGS]++;
	rte_pktmbuf_free(m);
	half_out(x, o, &out);
	return 1;
}

int
sgw_split_flow_input(struct sgw_worker *w, const struct sgw_snapshot *s, struct rte_mbuf *m,
		     const struct sgw_pkt_meta *pm, int32_t fp, int32_t rule)
{
	struct sp_worker *x = SPW(w);
	struct sgw_flow *f;
	struct sgw_split_out out;
	struct sgw_tcp_seg seg;
	struct sgw_split *sp;
	struct sp_obj *o;
	int rc;

	if (x == NULL || fp < 0)
		return 0;
	x->s = s;
	f = &w->flows->e[fp];
	if (f->mech_stage != SGW_STAGE_SPLIT) {
		if (rule < 0 || s->pol.rules[rule].action != SGW_ACT_SPLIT)
			return 0;
		return half_open(x, s, m, pm, fp, rule);
	}
	if (f->mech == SGW_POOL_NONE || f->mech >= x->pool.cap)
		return 0;  /* bypassed: counted once, when decided */
	o = &x->objs[f->mech];
	sp = half_of(x, o);
	if (sp->state == SGW_SPLIT_S_FREE)
		return 0;
	rc = pm->info.ip_ver != (sp->addr.ipv6 ? 6 : 4) ? -1 :
		seg_of(m, &pm->info, &seg, x->st.parse_ctr);
	if (rc != 0 ||
	    seg.sport != (sp->role == SGW_SPLIT_OPENER ? sp->addr.sport : sp->addr.dport)) {
		w->c.drop[x->drop_base + (rc == -2 ? SP_DROP_BAD_CHECKSUM :
					  SP_DROP_BAD_SEGMENT)]++;
		rte_pktmbuf_free(m);
		return 1;
	}
	/* The segment's bytes are copied into the relay: the mbuf is done with. */
	sgw_split_tcp_input(&x->env, sp, w->now_ns, &seg, &out);
	x->cons[SP_CONS_SEGS]++;
	rte_pktmbuf_free(m);
	half_out(x, o, &out);
	return 1;
}

int
sgw_split_flow_alive(const struct sgw_worker *w, uint32_t fp)
{
	const struct sp_worker *x = SPW(w);
	const struct sgw_flow *f;
	const struct sp_obj *o;

	if (x == NULL || fp >= w->flows->cap)
		return 0;
	f = &w->flows->e[fp];
	if (f->mech_stage != SGW_STAGE_SPLIT || f->mech >= x->pool.cap)
		return 0;
	o = &x->objs[f->mech];
	return half_of(x, o)->state != SGW_SPLIT_S_FREE && o->fpos == fp;
}

/* Where an acceptor's segments toward the server leave: the rule's next hop. */
static int
accept_route(struct sp_worker *x, const struct sgw_snapshot *s, struct sp_obj *o,
	     int32_t term)
{
	const struct sgw_policy *p = &s->pol;
	const struct sgw_split *sp = half_of(x, o);
	struct sgw_pkt_info pi;
	int32_t rule;
	int16_t nh, out;

	memset(&pi, 0, sizeof(pi));
	pi.cls = SGW_CLASS_TCP;
	pi.ip_ver = sp->addr.ipv6 ? 6 : 4;
	pi.ip_proto = 6;
	memcpy(pi.src, sp->addr.saddr, sp->addr.ipv6 ? 16 : 4);
	memcpy(pi.dst, sp->addr.daddr, sp->addr.ipv6 ? 16 : 4);
	pi.sport = sp->addr.sport;
	pi.dport = sp->addr.dport;
	rule = sgw_rule_for(s, &pi, (uint16_t)SPD(x->w->dp)->sat_pidx, term);
	nh = rule >= 0 ? p->rules[rule].next_hop : -1;
	if (nh >= 0) {
		out = p->next_hops[nh].port;
		memcpy(o->dst_mac, p->next_hops[nh].mac, RTE_ETHER_ADDR_LEN);
	} else {
		/* No next hop: the satlink port's peer, to everyone on it. */
		out = p->ports[SPD(x->w->dp)->sat_pidx].peer;
		memset(o->dst_mac, 0xff, RTE_ETHER_ADDR_LEN);
	}
	if (out < 0 || x->w->dp->stage_of_port[out] >= 0)
		return -1;
	o->out_pidx = (uint8_t)out;
	return 0;
}

/*
 * An OPEN for no half: the acceptor half (at the hub for a terminal's
 * opener, at the terminal for the hub's), or OPEN_REFUSED.
 */
static void
half_accept(struct sp_worker *x, const struct sgw_snapshot *s, uint32_t sess, uint16_t ch,
	    const struct sgw_stream_msg *msg)
{
	struct sgw_worker *w = x->w;
	struct sgw_flow_table *ft = w->flows;
	struct sgw_split_bufs b;
	struct sgw_split_out out;
	struct sgw_flow_key key;
	struct sgw_pkt_info pi;
	struct sgw_split *sp;
	struct sp_obj *o;
	int32_t fp;
	uint32_t iss;
	const bool v6 = (msg->flags & SGW_STREAM_F_IPV6) != 0;
	const unsigned int alen = v6 ? 16u : 4u;
	int why = 0;

	/* The flow key of the server's segments: the family's addresses, zero-padded. */
	memset(&pi, 0, sizeof(pi));
	pi.cls = SGW_CLASS_TCP;
	pi.ip_ver = v6 ? 6 : 4;
	pi.ip_proto = 6;
	memcpy(pi.src, msg->saddr, alen);
	memcpy(pi.dst, msg->daddr, alen);
	pi.sport = msg->sport;
	pi.dport = msg->dport;
	sgw_flow_key_from_info(&pi, &key);
	fp = rte_hash_lookup(ft->h, &key);
	if (fp >= 0 && ft->e[fp].mech_stage == SGW_STAGE_SPLIT && ft->e[fp].mech != SGW_POOL_NONE) {
		struct sp_obj *old = &x->objs[ft->e[fp].mech];

		/*
		 * The client reused its port while this leg of its previous
		 * connection waits out TIME-WAIT (it closed first toward the
		 * server). The server has closed that connection and would accept
		 * the new SYN, as it would without satgw: the old half is given up
		 * (nothing sent) and the OPEN is accepted. A half in any other state
		 * still carries a stream: the OPEN is refused below.
		 */
		if (half_of(x, old)->tcp.state == SGW_TCP_TIME_WAIT) {
			half_drop(x, old);
			x->ctr[SGW_SPD_TW_REUSED]++;
			fp = rte_hash_lookup(ft->h, &key);
		}
	}
	o = half_alloc(x, sess, &b, &why);
	if (o == NULL) {
		x->ctr[SGW_SPD_REFUSED]++;
		sgw_split_refuse(&x->env, ch, SGW_STREAM_REFUSE_NO_RESOURCES);
		return;
	}
	sp = half_of(x, o);
	if (fp >= 0 && ft->e[fp].mech_stage == SGW_STAGE_SPLIT && ft->e[fp].mech != SGW_POOL_NONE)
		fp = -1;  /* another half has it: refused below */
	else if (fp < 0)
		fp = sgw_flow_add(ft, w->tw, SGW_STAGE_FLOW, &key, w->now_ns);
	memset(&sp->addr, 0, sizeof(sp->addr));
	sp->addr.ipv6 = v6;
	memcpy(sp->addr.saddr, msg->saddr, alen);
	memcpy(sp->addr.daddr, msg->daddr, alen);
	sp->addr.sport = msg->sport;
	sp->addr.dport = msg->dport;
	if (fp < 0 || accept_route(x, s, o, sgw_sl_term_of_sess(s, sess)) != 0) {
		half_free(x, o);
		x->ctr[SGW_SPD_CLOSED]--;
		x->ctr[SGW_SPD_REFUSED]++;
		sgw_split_refuse(&x->env, ch, SGW_STREAM_REFUSE_NO_RESOURCES);
		return;
	}
	iss = sgw_tcp_isn(&x->st, msg->saddr, msg->daddr, alen, msg->sport, msg->dport, w->now_ns);
	leg_mss(x, v6);
	if (sgw_split_accept(&x->env, sp, w->now_ns, msg, ch, iss, &b, rwc_of(x, s, o),
			     &out) != 0) {
		half_free(x, o);
		x->ctr[SGW_SPD_CLOSED]--;
		x->ctr[SGW_SPD_REFUSED]++;
		sgw_split_refuse(&x->env, ch, SGW_STREAM_REFUSE_NO_RESOURCES);
		return;
	}
	ft->e[fp].mech = idx_of(x, o);
	ft->e[fp].mech_stage = SGW_STAGE_SPLIT;
	ft->e[fp].rule_gen = (uint32_t)s->gen - 1;
	ft->e[fp].last_ns = w->now_ns;
	o->fpos = (uint32_t)fp;
	ch_add(x, ch_key(sess, ch), idx_of(x, o));
	x->ctr[SGW_SPD_ACCEPTED]++;
	half_out(x, o, &out);
}

/* satlink's delivery of a message on a channel != 0 (sl->chan_rx). */
static void
split_chan_rx(struct sgw_worker *w, uint32_t sess, uint16_t ch, struct rte_mbuf *m)
{
	struct sp_worker *x = SPW(w);
	const struct sgw_snapshot *s = __atomic_load_n(&w->dp->snap, __ATOMIC_ACQUIRE);
	const uint8_t *p = rte_pktmbuf_mtod(m, const uint8_t *);
	uint32_t len = rte_pktmbuf_data_len(m), idx;
	struct sgw_split_out out;
	struct sgw_stream_msg msg;

	x->s = s;
	x->refuse_sess = sess;
	idx = ch_find(x, ch_key(sess, ch));
	if (idx != NONE32) {
		struct sp_obj *o = &x->objs[idx];

		sgw_split_stream_input(&x->env, half_of(x, o), w->now_ns, p, len, &out);
		if (o->fpos != NONE32 && o->fpos < w->flows->cap)
			w->flows->e[o->fpos].last_ns = w->now_ns;
		half_out(x, o, &out);
	} else if (sgw_stream_decode(p, len, &msg, x->env.msg_err) == SGW_STREAM_E_OK &&
		   msg.type == SGW_STREAM_OPEN && (ch < x->ch_lo || ch > x->ch_hi)) {
		/* An OPEN on a channel of the far box's half: its opener's. */
		half_accept(x, s, sess, ch, &msg);
	} else {
		x->ctr[SGW_SPD_LATE_MSG]++;
	}
	x->refuse_sess = NONE32;
	rte_pktmbuf_free(m);
}

/*
 * Before an open half is given up for its satlink peer's restart: a bare SYN
 * toward the far TCP peer (the one across the satellite) as if from the
 * local peer, sent on the satlink port outside the session (as satlink's own
 * bypass sends), to the satlink peer's MAC. The far gateway has lost the
 * connection, and its far peer may have nothing to send (a client waiting
 * for the next byte of a download): without this nothing would ever reach it
 * and it would wait for ever. A SYN inside a live connection is answered by
 * a challenge ACK (RFC 5961 4.2), which crosses both gateways untouched (a
 * flow that does not start with a SYN is bypassed) to the local peer, which
 * the abort has just reset: its RST (seq = the ACK's ack, RFC 9293 3.10.7.1)
 * ends the far peer's connection, as RFC 5961 means a restarted peer's to.
 * Best effort: a lost SYN or ACK leaves the far peer to its own timers.
 */
static void
restart_probe(struct sp_worker *x, struct sp_obj *o)
{
	const struct sgw_split *sp = half_of(x, o);
	const struct sgw_sl *sl = sgw_sl_of(x->w->dp);
	const bool opener = sp->role == SGW_SPLIT_OPENER;
	struct sgw_tcp_seg syn;
	uint8_t hdr[20];
	uint32_t hlen;

	if (sl == NULL || sl->pidx < 0 || sp->state != SGW_SPLIT_S_OPEN)
		return;
	/* The terminal speaks as the client to the server, the hub the other way. */
	memset(&syn, 0, sizeof(syn));
	syn.sport = opener ? sp->addr.sport : sp->addr.dport;
	syn.dport = opener ? sp->addr.dport : sp->addr.sport;
	syn.seq = sp->tcp.iss;  /* any: the far peer challenges a SYN wherever it falls */
	syn.flags = SGW_TCP_F_SYN;
	syn.win = 1024;
	hlen = sgw_tcp_seg_build(hdr, sizeof(hdr), &syn);
	if (hlen == 0)
		return;
	if (seg_send(x, (uint16_t)sl->pidx, sl->peer_mac.addr_bytes, sp->addr.ipv6 != 0,
		     opener ? sp->addr.saddr : sp->addr.daddr,
		     opener ? sp->addr.daddr : sp->addr.saddr, hdr, hlen, NULL, 0) == 0)
		x->ctr[SGW_SPD_RESTART_PROBES]++;
}

/*
 * satlink: the peer of session sess restarted. Every half on it is given up:
 * RST to its local peer (sgw_split_abort), never a stream that silently lost
 * bytes.
 */
static void
split_sess_restart(struct sgw_worker *w, uint32_t sess)
{
	struct sp_worker *x = SPW(w);
	uint32_t k;

	if (x == NULL)
		return;
	x->s = __atomic_load_n(&w->dp->snap, __ATOMIC_ACQUIRE);
	for (k = 0; k < x->pool.cap; k++) {
		struct sp_obj *o = &x->objs[k];

		if (!sgw_pool_in_use(&x->pool, k) || half_of(x, o)->state == SGW_SPLIT_S_FREE ||
		    o->sess != sess)
			continue;
		x->ctr[SGW_SPD_ABORTED_RESTART]++;
		restart_probe(x, o);
		half_drop(x, o);
	}
}

static void
split_timer(struct sgw_worker *w, const struct sgw_snapshot *s, uint32_t obj, uint8_t timer)
{
	struct sp_worker *x = SPW(w);
	struct sgw_split_out out;
	struct sgw_split *sp;
	struct sp_obj *o;

	if (x == NULL || obj >= x->pool.cap || timer >= SGW_SPLIT_T__COUNT)
		return;
	o = &x->objs[obj];
	sp = half_of(x, o);
	x->s = s;
	if (timer < SGW_TCP_T__COUNT)
		sgw_tev_fired(&sp->tcp.tw[timer]);
	else
		sgw_tev_fired(&sp->tw_split[timer - SGW_TCP_T__COUNT]);
	if (sp->state == SGW_SPLIT_S_FREE)
		return;
	sgw_split_timer(&x->env, sp, w->now_ns, timer, &out);
	half_out(x, o, &out);
}

/*
 * Once per loop: the halves that waited for room in their session's queue.
 * The list holds 2 x cap: the entries of this pass, and those marked again.
 */
static void
split_loop(struct sgw_worker *w, const struct sgw_snapshot *s)
{
	struct sp_worker *x = SPW(w);
	uint32_t n, i, k;

	if (x == NULL || x->nstall == 0)
		return;
	x->s = s;
	n = x->nstall;
	/*
	 * In line order. A half whose session has no room keeps its place
	 * (moved to the front part, k); a half that is polled and stalls again
	 * joins the end (stall_mark appends past n), behind those still
	 * waiting: the session's room goes round, one message budget each.
	 */
	for (i = 0, k = 0; i < n; i++) {
		struct sp_obj *o = &x->objs[x->stall[i]];
		struct sgw_split_out out;

		if (!(o->flags & SP_F_STALLED) || half_of(x, o)->state == SGW_SPLIT_S_FREE)
			continue;  /* a stale entry: dropped */
		if (data_room(x, o->sess) == 0) {
			x->stall[k++] = x->stall[i];  /* still waiting, in its place */
			continue;
		}
		stall_clear(x, o);
		x->turn = o;
		sgw_split_poll(&x->env, half_of(x, o), w->now_ns, &out);
		x->turn = NULL;
		half_out(x, o, &out);
	}
	memmove(x->stall + k, x->stall + n, (x->nstall - n) * sizeof(*x->stall));
	x->nstall = k + (x->nstall - n);
}

/*
 * Graceful stop (the table's stop hook, on the worker's lcore before the
 * ports stop): every half whose stream still carries is reset both ways
 * (sgw_split_stop: RST to the local peer with the leg's sequence numbers,
 * RST ABORT to the far half over satlink). A half whose RST message the
 * channel could not take stays stalled: split_loop sends it while the worker
 * lingers (split_stop_busy). One pass over the pool: bounded by its size.
 */
static void
split_stop(struct sgw_worker *w, const struct sgw_snapshot *s)
{
	struct sp_worker *x = SPW(w);
	uint32_t k;

	if (x == NULL || x->pool.base == NULL)
		return;
	x->s = s;
	for (k = 0; k < x->pool.cap; k++) {
		struct sp_obj *o = &x->objs[k];
		struct sgw_split_out out;

		if (!sgw_pool_in_use(&x->pool, k) || half_of(x, o)->state == SGW_SPLIT_S_FREE)
			continue;
		x->refuse_sess = o->sess;
		if (sgw_split_stop(&x->env, half_of(x, o), w->now_ns, &out) != 0)
			x->ctr[SGW_SPD_RESET_AT_STOP]++;
		x->refuse_sess = NONE32;
		half_out(x, o, &out);
	}
}

/* Halves still waiting to send (their RST), and this worker's sessions with frames queued. */
static uint32_t
split_stop_busy(const struct sgw_worker *w)
{
	const struct sp_worker *x = SPW(w);
	const struct sgw_sl *sl = sgw_sl_of(w->dp);
	uint32_t busy = 0, i;

	if (x == NULL || sl == NULL)
		return 0;
	for (i = 0; i < SPD(w->dp)->n_sess && i < sl->n_sess; i++)
		if (sl->sess[i].owner == w->idx &&
		    (x->sess_wait[i] != 0 || sgw_sl_queued_bytes(w->dp, i) != 0))
			busy++;
	return busy;
}

/* ---------------------------------------------------------- init, fini */

static void split_fini(struct sgw_dp *dp);

/*
 * The policy's leg keys: ACKRES's assumed RTO floor of the senders
 * (ackres_rto_min_ms; the estimate before the first sample is never below
 * it) and the legs' retry bound (leg_retries: RTO expiries of one segment).
 */
static void
split_conf_legs(const struct sgw_split_policy *sp, struct sgw_split_conf *sc,
		struct sgw_tcp_conf *tc)
{
	sc->rwc.rto_min_ns = (uint64_t)sp->ackres_rto_min_ms * 1000000u;
	if (sc->rwc.rto_init_ns < sc->rwc.rto_min_ns)
		sc->rwc.rto_init_ns = sc->rwc.rto_min_ns;
	if (sc->rwc.rto_max_ns < sc->rwc.rto_min_ns)
		sc->rwc.rto_max_ns = sc->rwc.rto_min_ns;
	tc->data_retries = sp->leg_retries;
}

static uint32_t
pow2_at_least(uint32_t v)
{
	uint32_t r = 1;

	while (r < v && r < (1u << 31))
		r <<= 1;
	return r;
}

static int
split_init(struct sgw_dp *dp, const struct sgw_policy *pol)
{
	const struct sgw_split_policy *sp = &pol->split;
	struct sgw_sl *sl = sgw_sl_of(dp);
	static const struct sgw_split_io_ops io = { io_tcp_tx };
	static const struct sgw_split_sat_ops sat = { sat_can_send, sat_send };
	struct sgw_split_conf sc;
	struct sgw_tcp_conf tc;
	struct sp_dp *d;
	uint32_t i, ring, cap, chsz, nb;
	bool any = false;

	for (i = 0; i < pol->n_rules; i++)
		any = any || pol->rules[i].action == SGW_ACT_SPLIT;
	if (!any || dp->bare_forward || pol->role == SGW_ROLE_EMULATOR)
		return 0;
	if (sl == NULL) {
		SGW_LOG(ERR, "split: needs the satlink section");
		return -1;
	}
	ring = pow2_at_least(sp->relay_connection_bytes);
	cap = sp->max_connections_worker;
	if ((uint64_t)cap * 2u * ring > sp->relay_worker_bytes)
		cap = (uint32_t)(sp->relay_worker_bytes / (2u * (uint64_t)ring));
	/*
	 * No channel-space cap here: 32,767 opener channels bound one satlink
	 * session's halves (half_open), not a worker's, which at a hub serves
	 * many sessions. What the worker's flow table and timer wheel can carry
	 * does bound it: each half holds a flow entry, and an idle one runs its
	 * idle timer beside its flow's (more while it sends): a pool past
	 * min(flows_per_core, timers_per_core / 2) could only be filled by
	 * halves that fail at open or are aborted for want of a timer, so it
	 * is clamped there, said at startup, and the limits section is the
	 * place to raise it.
	 */
	if (cap > pol->limits.flows_per_core || cap > pol->limits.timers_per_core / 2u) {
		uint32_t was = cap;

		cap = RTE_MIN(pol->limits.flows_per_core, pol->limits.timers_per_core / 2u);
		SGW_LOG(WARNING, "split: %u connections per worker clamped to %u: "
			"limits.flows_per_core %u and timers_per_core %u (two per connection) "
			"hold no more", was, cap, pol->limits.flows_per_core,
			pol->limits.timers_per_core);
	}
	if (cap == 0) {
		SGW_LOG(ERR, "split: relay_worker_bytes holds no connection");
		return -1;
	}
	sgw_split_conf_default(&sc);
	sc.max_msg = RTE_MIN(sc.max_msg, (uint32_t)pol->satlink.frame_size);
	sc.open_credit = sp->open_credit;
	sc.idle_ns = (uint64_t)sp->idle_timeout_ms * 1000000u;
	sc.rwc.scheme = sp->rwnd == SGW_SPLIT_RWND_PETRA ? SGW_RWC_PETRA :
			sp->rwnd == SGW_SPLIT_RWND_ACKRES ? SGW_RWC_ACKRES : SGW_RWC_RWND;
	if (sp->rwnd != SGW_SPLIT_RWND_RWND)
		sc.rwc.b_th = sp->threshold_bytes != 0 ? sp->threshold_bytes :
			sp->relay_connection_bytes / 4u * 3u;
	sgw_tcp_conf_default(&tc);
	tc.rcv_buf = sp->relay_connection_bytes;
	sc.rwc.wscale = 0;
	split_conf_legs(sp, &sc, &tc);
	tc.mss = leg_mss_of_ports(dp, pol, tc.mss);
	d = rte_zmalloc("sgw_split_dp", sizeof(*d), RTE_CACHE_LINE_SIZE);
	if (d == NULL)
		return -1;
	dp->sdata[SGW_STAGE_SPLIT] = d;
	d->cap = cap;
	d->relay_conn = sp->relay_connection_bytes;
	d->relay_term = sp->relay_terminal_bytes;
	d->max_term = sp->max_connections_terminal;
	d->n_sess = sl->n_sess;
	d->sat_pidx = sl->pidx;
	chsz = pow2_at_least(2u * cap);
	for (i = 0; i < dp->n_workers; i++) {
		int socket = (int)rte_lcore_to_socket_id(dp->workers[i]->lcore);
		size_t psz = sgw_pool_mem_size(cap, sizeof(struct sgw_split));
		uint8_t key[16];
		struct sp_worker *x;
		uint32_t k;

		x = rte_zmalloc_socket("sgw_split_worker", sizeof(*x), RTE_CACHE_LINE_SIZE,
				       socket);
		if (x == NULL)
			goto fail;
		dp->workers[i]->sctx[SGW_STAGE_SPLIT] = x;
		x->w = dp->workers[i];
		x->drop_base = sgw_stage_drop_base(SGW_STAGE_SPLIT);
		x->ring = ring;
		x->ch_lo = pol->role == SGW_ROLE_HUB ? 32768u : 1u;
		x->ch_hi = pol->role == SGW_ROLE_HUB ? 65535u : 32767u;
		x->mss4 = tc.mss;
		x->pool_mem = rte_malloc_socket("sgw_split_pool", psz, RTE_CACHE_LINE_SIZE,
						socket);
		/*
		 * The relays are touched by this core only, never by a NIC: plain
		 * anonymous memory (transparent huge pages where the kernel has
		 * them), not the DPDK heap, which is sized for mbufs and which
		 * clears what it frees: rte_free of a 128 MB relay region never
		 * touched faulted in every page at exit (40-120 s seen on a loaded
		 * 2-core VM with --no-huge, past the e2e tests' stop timeout).
		 */
		x->relay_len = (size_t)cap * 2u * ring;
		x->relay_mem = mmap(NULL, x->relay_len, PROT_READ | PROT_WRITE,
				    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (x->relay_mem == MAP_FAILED)
			x->relay_mem = NULL;
		else
			(void)madvise(x->relay_mem, x->relay_len, MADV_HUGEPAGE);
		x->chmap = rte_malloc_socket("sgw_split_ch", sizeof(*x->chmap) * chsz,
					     RTE_CACHE_LINE_SIZE, socket);
		x->stall = rte_malloc_socket("sgw_split_stall", sizeof(*x->stall) * 2u * cap,
					     RTE_CACHE_LINE_SIZE, socket);
		x->sess_wait = rte_zmalloc_socket("sgw_split_sw", sizeof(uint32_t) * sl->n_sess,
						  RTE_CACHE_LINE_SIZE, socket);
		x->term_conns = rte_zmalloc_socket("sgw_split_tc", sizeof(uint32_t) * sl->n_sess,
						   RTE_CACHE_LINE_SIZE, socket);
		x->term_relay = rte_zmalloc_socket("sgw_split_tr", sizeof(uint64_t) * sl->n_sess,
						   RTE_CACHE_LINE_SIZE, socket);
		x->sess_open_ch = rte_zmalloc_socket("sgw_split_so", sizeof(uint16_t) * sl->n_sess,
						     RTE_CACHE_LINE_SIZE, socket);
		x->sess_next_ch = rte_malloc_socket("sgw_split_sn", sizeof(uint16_t) * sl->n_sess,
						    RTE_CACHE_LINE_SIZE, socket);
		if (sp->rwnd != SGW_SPLIT_RWND_RWND)
			x->rwcs = rte_malloc_socket("sgw_split_rwc", sizeof(*x->rwcs) * cap,
						    RTE_CACHE_LINE_SIZE, socket);
		x->objs = rte_zmalloc_socket("sgw_split_obj", sizeof(*x->objs) * cap,
					     RTE_CACHE_LINE_SIZE, socket);
		if (x->pool_mem == NULL || x->objs == NULL || x->relay_mem == NULL || x->chmap == NULL ||
		    x->stall == NULL || x->term_conns == NULL || x->term_relay == NULL ||
		    x->sess_wait == NULL || x->sess_open_ch == NULL || x->sess_next_ch == NULL ||
		    (sp->rwnd != SGW_SPLIT_RWND_RWND && x->rwcs == NULL) ||
		    sgw_pool_init(&x->pool, x->pool_mem, psz, cap, sizeof(struct sgw_split)) != 0)
			goto fail;
		x->chmask = chsz - 1u;
		for (k = 0; k < chsz; k++)
			x->chmap[k].val = NONE32;
		for (k = 0; k < sl->n_sess; k++)
			x->sess_next_ch[k] = x->ch_lo;
		if (sgw_tcp_stack_init(&x->st, &tc, &sgw_split_tcp_ops, &x->env) != 0 ||
		    sgw_split_env_init(&x->env, &sc, &x->st, &io, &sat, x) != 0) {
			SGW_LOG(ERR, "split: invalid settings");
			goto fail;
		}
		/* RFC 6528: the ISN secret from a random source, per worker. */
		for (k = 0; k < 16; k++)
			key[k] = (uint8_t)rte_rand();
		sgw_tcp_stack_set_secret(&x->st, key);
		/*
		 * SACK scoreboards for the legs in loss recovery at the same time: one per four
		 * halves (the stack's built-in 64 at least). Past it a leg recovers NewReno-style
		 * and the stack counts sb_nomem.
		 */
		nb = RTE_MAX(cap / 4u, SGW_TCP_SB_POOL_DEFAULT);
		x->boards = rte_malloc_socket("sgw_split_sb", sizeof(*x->boards) * nb,
					      RTE_CACHE_LINE_SIZE, socket);
		if (x->boards == NULL || sgw_tcp_stack_set_sb_pool(&x->st, x->boards, nb) != 0)
			goto fail;
	}
	sl->chan_rx = split_chan_rx;
	sl->sess_restart = split_sess_restart;
	SGW_LOG(INFO, "split: on, %u connections per worker, relays of %u bytes (rings %u)",
		cap, sp->relay_connection_bytes, ring);
	return 1;
fail:
	split_fini(dp);
	return -1;
}

/* Shutdown: every half given up (RST both ways is not sent: the ports are stopped). */
static void
split_drain(struct sgw_dp *dp)
{
	uint32_t i, k;

	if (SPD(dp) == NULL)
		return;
	for (i = 0; i < dp->n_workers; i++) {
		struct sgw_worker *w = dp->workers[i];
		struct sp_worker *x;

		if (w == NULL || (x = SPW(w)) == NULL || x->pool.base == NULL)
			continue;
		for (k = 0; k < x->pool.cap; k++) {
			struct sp_obj *o = &x->objs[k];

			if (sgw_pool_in_use(&x->pool, k) && half_of(x, o)->state != SGW_SPLIT_S_FREE)
				half_free(x, o);
		}
	}
}

static void
split_fini(struct sgw_dp *dp)
{
	struct sgw_sl *sl = sgw_sl_of(dp);
	uint32_t i;

	if (sl != NULL && sl->chan_rx == split_chan_rx) {
		sl->chan_rx = NULL;
		sl->sess_restart = NULL;
	}
	for (i = 0; i < dp->n_workers; i++) {
		struct sgw_worker *w = dp->workers[i];
		struct sp_worker *x;

		if (w == NULL || (x = SPW(w)) == NULL)
			continue;
		rte_free(x->pool_mem);
		rte_free(x->objs);
		if (x->relay_mem != NULL)
			munmap(x->relay_mem, x->relay_len);
		rte_free(x->boards);
		rte_free(x->chmap);
		rte_free(x->stall);
		rte_free(x->term_conns);
		rte_free(x->sess_wait);
		rte_free(x->term_relay);
		rte_free(x->sess_open_ch);
		rte_free(x->sess_next_ch);
		rte_free(x->rwcs);
		rte_free(x);
		w->sctx[SGW_STAGE_SPLIT] = NULL;
	}
	rte_free(dp->sdata[SGW_STAGE_SPLIT]);
	dp->sdata[SGW_STAGE_SPLIT] = NULL;
}

/* ------------------------------------------------------------- reporting */

uint64_t
sgw_split_dp_ctr(const struct sgw_dp *dp, enum sgw_spd_ctr c)
{
	uint64_t v = 0;
	uint32_t i;

	for (i = 0; i < dp->n_workers; i++) {
		const struct sp_worker *x;

		if (dp->workers[i] == NULL || (x = SPW(dp->workers[i])) == NULL)
			continue;
		if (c == SGW_SPD_RELAY_MAX)
			v = RTE_MAX(v, __atomic_load_n(&x->ctr[c], __ATOMIC_RELAXED));
		else
			v += __atomic_load_n(&x->ctr[c], __ATOMIC_RELAXED);
	}
	return v;
}

uint64_t
sgw_split_dp_bypass(const struct sgw_dp *dp, enum sgw_spd_bypass b)
{
	uint64_t v = 0;
	uint32_t i;

	for (i = 0; i < dp->n_workers; i++)
		if (dp->workers[i] != NULL && SPW(dp->workers[i]) != NULL)
			v += __atomic_load_n(&SPW(dp->workers[i])->byp[b], __ATOMIC_RELAXED);
	return v;
}

uint64_t
sgw_split_dp_lib_ctr(const struct sgw_dp *dp, int c)
{
	uint64_t v = 0;
	uint32_t i;

	if (c < 0 || c >= SGW_SPLIT_C__COUNT)
		return 0;
	for (i = 0; i < dp->n_workers; i++)
		if (dp->workers[i] != NULL && SPW(dp->workers[i]) != NULL)
			v += __atomic_load_n(&SPW(dp->workers[i])->env.ctr[c], __ATOMIC_RELAXED);
	return v;
}

uint64_t
sgw_split_dp_open(const struct sgw_dp *dp)
{
	uint64_t v = 0;
	uint32_t i;

	for (i = 0; i < dp->n_workers; i++)
		if (dp->workers[i] != NULL && SPW(dp->workers[i]) != NULL)
			v += __atomic_load_n(&SPW(dp->workers[i])->pool.used, __ATOMIC_RELAXED);
	return v;
}

/*
 * Scale (docs/tcp-split.md): worker 0's pool size, and the bytes split_init
 * allocated for it apart from the relays (pool, channel map, stalled list,
 * scoreboards, PETRA/ACKRES controls, per-session arrays) and for its relays
 * (reserved address space: pages come as a relay is first written).
 */
uint64_t
sgw_split_dp_cap(const struct sgw_dp *dp, uint64_t *state_bytes, uint64_t *relay_bytes)
{
	const struct sp_worker *x;
	uint64_t st, nb;

	if (SPD(dp) == NULL || dp->n_workers == 0 || dp->workers[0] == NULL ||
	    (x = SPW(dp->workers[0])) == NULL)
		return 0;
	nb = RTE_MAX(x->pool.cap / 4u, SGW_TCP_SB_POOL_DEFAULT);
	st = sgw_pool_mem_size(x->pool.cap, sizeof(struct sgw_split)) +
	     sizeof(*x->objs) * (uint64_t)x->pool.cap +
	     sizeof(*x->chmap) * ((uint64_t)x->chmask + 1u) +
	     sizeof(*x->stall) * 2u * (uint64_t)x->pool.cap + sizeof(*x->boards) * nb +
	     (x->rwcs != NULL ? sizeof(*x->rwcs) * (uint64_t)x->pool.cap : 0) +
	     (sizeof(uint32_t) * 2u + sizeof(uint64_t) + sizeof(uint16_t) * 2u) *
	     (uint64_t)SPD(dp)->n_sess + sizeof(*x);
	if (state_bytes != NULL)
		*state_bytes = st;
	if (relay_bytes != NULL)
		*relay_bytes = x->relay_len;
	return x->pool.cap;
}

static void
split_account(const struct sgw_dp *dp, uint64_t *orig, uint64_t *cons)
{
	uint32_t i, k;

	for (i = 0; i < dp->n_workers; i++) {
		const struct sp_worker *x;

		if (dp->workers[i] == NULL || (x = SPW(dp->workers[i])) == NULL)
			continue;
		for (k = 0; k < SP_ORIG__COUNT; k++)
			orig[k] += __atomic_load_n(&x->orig[k], __ATOMIC_RELAXED);
		for (k = 0; k < SP_CONS__COUNT; k++)
			cons[k] += __atomic_load_n(&x->cons[k], __ATOMIC_RELAXED);
	}
}

/*
 * Bytes the live halves' relays hold now, rx (from the local leg, waiting for
 * the satellite) and tx (from the satellite, waiting for the local peer): a
 * gauge for telemetry (seed 003's buffer traces, tests/e2e/split_seed003.sh).
 * A scan of the pool from the telemetry thread while the worker runs: each
 * relay's head and tail are loaded once, so it is a snapshot of each relay,
 * not of the worker. Only on a telemetry read or the exit report. *occ_max:
 * the highest occupancy one relay has reached, live or freed.
 */
static void
split_occupancy(const struct sgw_dp *dp, uint64_t occ[2], uint32_t *occ_max)
{
	uint32_t i, k;

	occ[0] = occ[1] = 0;
	*occ_max = 0;
	for (i = 0; i < dp->n_workers; i++) {
		const struct sp_worker *x;

		if (dp->workers[i] == NULL || (x = SPW(dp->workers[i])) == NULL)
			continue;
		*occ_max = RTE_MAX(*occ_max, __atomic_load_n(&x->occ_max_done, __ATOMIC_RELAXED));
		for (k = 0; k < x->pool.cap; k++) {
			uint32_t nx = __atomic_load_n(&x->pool.next[k], __ATOMIC_RELAXED);
			const struct sgw_split *sp;

			/* free: a free-list link (< cap) or SGW_POOL_NONE; else in use */
			if (nx < x->pool.cap || nx == SGW_POOL_NONE)
				continue;
			sp = sgw_pool_get(&x->pool, k);
			*occ_max = RTE_MAX(*occ_max,
					   RTE_MAX(__atomic_load_n(&sp->rx.occ_max, __ATOMIC_RELAXED),
						   __atomic_load_n(&sp->tx.occ_max, __ATOMIC_RELAXED)));
			occ[0] += (uint32_t)(__atomic_load_n(&sp->rx.tail, __ATOMIC_RELAXED) -
					     __atomic_load_n(&sp->rx.head, __ATOMIC_RELAXED));
			occ[1] += (uint32_t)(__atomic_load_n(&sp->tx.tail, __ATOMIC_RELAXED) -
					     __atomic_load_n(&sp->tx.head, __ATOMIC_RELAXED));
		}
	}
}

/*
 * The rwc_* counters, all workers: freed halves' totals plus the live
 * halves' (a scan of the pool from the reading thread, as split_occupancy).
 */
static void
split_rwc_sums(const struct sgw_dp *dp, uint64_t v[SP_RWC_N])
{
	uint32_t i, k;
	unsigned int j;

	memset(v, 0, SP_RWC_N * sizeof(v[0]));
	for (i = 0; i < dp->n_workers; i++) {
		const struct sp_worker *x;

		if (dp->workers[i] == NULL || (x = SPW(dp->workers[i])) == NULL)
			continue;
		for (j = 0; j < SP_RWC_N; j++)
			v[j] += __atomic_load_n(&x->rwc_done[j], __ATOMIC_RELAXED);
		for (k = 0; k < x->pool.cap && x->pool.base != NULL; k++) {
			uint32_t nx = __atomic_load_n(&x->pool.next[k], __ATOMIC_RELAXED);
			const struct sgw_split *sp;
			const struct sgw_rwc *c;

			if (nx < x->pool.cap || nx == SGW_POOL_NONE)
				continue;
			sp = sgw_pool_get(&x->pool, k);
			if ((c = sgw_split_rwc(sp)) == NULL)
				continue;
			for (j = 0; j < SP_RWC_N; j++)
				v[j] += rwc_stat(c, j);
		}
	}
}

/* The legs' (lib/sgw_tcp) segments cut at the relay's free space, all workers. */
static uint64_t
split_leg_ctr(const struct sgw_dp *dp, int c)
{
	uint64_t v = 0;
	uint32_t i;

	for (i = 0; i < dp->n_workers; i++)
		if (dp->workers[i] != NULL && SPW(dp->workers[i]) != NULL)
			v += __atomic_load_n(&SPW(dp->workers[i])->st.ctr[c], __ATOMIC_RELAXED);
	return v;
}

/* PETRA/ACKRES's window control, and the legs' segments cut at the relay's edge. */
static void
split_rwc_fields(const struct sgw_dp *dp, sgw_kv_fn fn, void *ctx)
{
	uint64_t v[SP_RWC_N];
	unsigned int j;

	split_rwc_sums(dp, v);
	for (j = 0; j < SP_RWC_N; j++)
		fn(ctx, sp_rwc_fields[j].name, v[j]);
	fn(ctx, "leg_rx_clipped", split_leg_ctr(dp, SGW_TCP_C_RX_CLIPPED));
	fn(ctx, "leg_out_of_window", split_leg_ctr(dp, SGW_TCP_C_OUT_OF_WINDOW));
	fn(ctx, "leg_zero_windows", split_leg_ctr(dp, SGW_TCP_C_ZERO_WND_OUT));
}

/* Every counter by name: the stage's, its bypass reasons, the halves' (lib). */
static void
split_fields(const struct sgw_dp *dp, sgw_kv_fn fn, void *ctx)
{
	uint64_t relay = 0, occ[2];
	uint32_t i, occ_max;
	int k;

	fn(ctx, "connections_open", sgw_split_dp_open(dp));
	for (i = 0; i < dp->n_workers; i++)
		if (dp->workers[i] != NULL && SPW(dp->workers[i]) != NULL)
			relay += __atomic_load_n(&SPW(dp->workers[i])->relay_used,
						 __ATOMIC_RELAXED);
	fn(ctx, "relay_bytes", relay);
	split_occupancy(dp, occ, &occ_max);
	fn(ctx, "relay_occ_rx", occ[0]);
	fn(ctx, "relay_occ_tx", occ[1]);
	fn(ctx, "relay_occ_max", occ_max);
	for (k = 0; k < SGW_SPD__COUNT; k++)
		fn(ctx, sp_ctr_names[k], sgw_split_dp_ctr(dp, (enum sgw_spd_ctr)k));
	for (k = 0; k < SGW_SPD_BYP__COUNT; k++)
		fn(ctx, sp_byp_names[k], sgw_split_dp_bypass(dp, (enum sgw_spd_bypass)k));
	for (k = 0; k < SGW_SPLIT_C__COUNT; k++)
		fn(ctx, sgw_split_ctr_name(k), sgw_split_dp_lib_ctr(dp, k));
	split_rwc_fields(dp, fn, ctx);
}

struct sp_find {
	const char *name;
	uint64_t v;
	int found;
};

static void
sp_find_kv(void *ctx, const char *k, uint64_t v)
{
	struct sp_find *f = ctx;

	if (!f->found && strcmp(k, f->name) == 0) {
		f->v = v;
		f->found = 1;
	}
}

int
sgw_split_dp_field(const struct sgw_dp *dp, const char *name, uint64_t *v)
{
	struct sp_find f = { .name = name, .v = 0, .found = 0 };

	if (SPD(dp) == NULL)
		return -1;
	split_fields(dp, sp_find_kv, &f);
	*v = f.v;
	return f.found ? 0 : -1;
}

struct sp_json {
	FILE *f;
	bool first;
};

static void
sp_json_kv(void *ctx, const char *k, uint64_t v)
{
	struct sp_json *j = ctx;

	fprintf(j->f, "%s\"%s\": %" PRIu64, j->first ? "" : ", ", k, v);
	j->first = false;
}

static void
split_write_json(const struct sgw_dp *dp, FILE *f)
{
	struct sp_json j = { .f = f, .first = true };

	if (SPD(dp) == NULL)
		return;
	fprintf(f, "  \"split\": {\"connections_per_worker\": %u, \"relay_connection_bytes\": %u,"
		"\n    \"counters\": {", SPD(dp)->cap, SPD(dp)->relay_conn);
	split_fields(dp, sp_json_kv, &j);
	fprintf(f, "}\n  },\n");
}

static void
split_print_summary(const struct sgw_dp *dp, FILE *f)
{
	uint64_t byp = 0;
	int k;

	if (SPD(dp) == NULL)
		return;
	for (k = 0; k < SGW_SPD_BYP__COUNT; k++)
		byp += sgw_split_dp_bypass(dp, (enum sgw_spd_bypass)k);
	fprintf(f, "  split: %" PRIu64 " opened, %" PRIu64 " accepted, %" PRIu64 " open, %" PRIu64
		" refused, %" PRIu64 " bypassed, relay max %" PRIu64 " bytes, %" PRIu64
		" clipped\n", sgw_split_dp_ctr(dp, SGW_SPD_OPENED),
		sgw_split_dp_ctr(dp, SGW_SPD_ACCEPTED), sgw_split_dp_open(dp),
		sgw_split_dp_ctr(dp, SGW_SPD_REFUSED), byp,
		sgw_split_dp_ctr(dp, SGW_SPD_RELAY_MAX),
		sgw_split_dp_lib_ctr(dp, SGW_SPLIT_C_RELAY_CLIPPED));
}

static void
sp_tel_kv(void *ctx, const char *k, uint64_t v)
{
	rte_tel_data_add_dict_u64(ctx, k, v);
}

static int
split_telemetry(const struct sgw_dp *dp, const char *params, struct rte_tel_data *d)
{
	RTE_SET_USED(params);
	rte_tel_data_start_dict(d);
	if (SPD(dp) != NULL)
		split_fields(dp, sp_tel_kv, d);
	return 0;
}

/* The table's flow_input: TCP only (a split rule's UDP or ESP flows are forwarded as usual). */
static int
split_flow_input_op(struct sgw_worker *w, const struct sgw_snapshot *s, struct rte_mbuf *m,
		    const struct sgw_pkt_meta *pm, int32_t fp, int32_t rule)
{
	if (pm->info.cls != SGW_CLASS_TCP)
		return 0;
	return sgw_split_flow_input(w, s, m, pm, fp, rule);
}

const struct sgw_stage_ops sgw_stage_split = {
	.name = "split",
	/* No class of its own: the flow stage hands it its flows' TCP packets. */
	.classes = 0,
	.init = split_init,
	.drain = split_drain,
	.fini = split_fini,
	.timer = split_timer,
	.flow_input = split_flow_input_op,
	.flow_alive = sgw_split_flow_alive,
	.loop = split_loop,
	.drop_names = sp_drop_names,
	.n_drops = SP_DROP__COUNT,
	.orig_names = sp_orig_names,
	.cons_names = sp_cons_names,
	.n_orig = SP_ORIG__COUNT,
	.n_cons = SP_CONS__COUNT,
	.account = split_account,
	.write_json = split_write_json,
	.print_summary = split_print_summary,
	.tel_cmd = "/satgw/split",
	.tel_help = "TCP split stage counters",
	.telemetry = split_telemetry,
	.stop = split_stop,
	.stop_busy = split_stop_busy,
};
