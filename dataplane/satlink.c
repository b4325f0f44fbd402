/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The satlink stage (see satlink.h): sessions on their owning workers, frames
 * built from and taken apart into mbufs, AES-GCM in the path, pacing, one
 * timer per session, delivered packets fed back into the pipeline.
 *
 * Why each choice (docs/satlink.md, "The dataplane stage"):
 * - Sessions are created at startup, one per terminal of the policy, on the
 *   worker that owns the terminal (sgw_terminal_shard of its id, stable over
 *   reloads): session memory is allocated once, never on the fast path.
 * - Data frames are copies of the packet's bytes, not indirect mbufs: the
 *   session keeps the packet until it is acknowledged, sealing needs a
 *   separate output anyway, and a copy of <= 2 KB costs less than the two
 *   extra mbufs and refcount traffic of a chain on the paths we measured.
 * - Data frames are paced at the direction's rate (a per-session FIFO drained
 *   by the session's timer): the ARQ window is ~2 x the bandwidth-delay
 *   product and would otherwise leave in one burst into the modem's queue.
 *   Control frames are never paced and go out ahead of the data that waits.
 * - Delivered packets get an Ethernet header back and run through the whole
 *   pipeline again (classify, rules, next hops), as if they had arrived on the
 *   satlink port: the far end's routing is its own rules'. They go through
 *   the worker's re-inject queue (tx.h), which the loop drains after the
 *   stages; each call into a session gets no more action room than that
 *   queue has left, so nothing delivered is ever dropped for lack of room.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_byteorder.h>
#include <rte_cycles.h>
#include <rte_ether.h>
#include <rte_hash.h>
#include <rte_jhash.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>

#include <rte_lcore.h>

#include "satlink.h"
#include "sgw_dp.h"
#include "sgw_tev.h"
#include "sgw_timer_wheel.h"
#include "stage.h"
#include "tx.h"

#define SL_MAX_IP_PKT 9216u     /* largest IP packet carried (jumbo frames) */
#define SL_CRYPTO_OVERHEAD SGW_SLC_OVERHEAD
#define SL_FRAME_OVERHEAD (SGW_SATLINK_HDR_LEN + SL_CRYPTO_OVERHEAD)
#define SL_POLLS_PER_CALL 8u    /* carried work done at once before the timer takes over */
#define SL_PUBLISH_NS 50000000ull  /* counters published every 50 ms */
/*
 * Windows are sized for frames of this much payload on average, not for full
 * frames: a mix of small packets (TCP ACKs on the return link) and fragment
 * tails must not close the window while the link has room. The window is not
 * what limits the amount queued (the pacer's low-water mark is), so a larger
 * one costs only session memory.
 */
#define SL_WINDOW_AVG_PAYLOAD 200u
#define SL_ARQ_SENDQ 64u        /* packets the ARQ queues while its window is full */
/*
 * Line time a late wakeup may catch up. A worker on a shared core (several
 * polling processes, the e2e chain's hub and terminal on one lcore) is away
 * for a scheduler slice or more, tens of ms; with 1 ms the line then stayed
 * idle for the rest of the absence (split goodput measured ~8% of the line
 * idle with frames waiting). Catch-up applies only while frames were
 * waiting: after a pace() that left the pacer and the feed queue empty, the
 * next frame starts from now (pace_add), so a link that was idle never bursts.
 */
#define SL_PACE_CREDIT_NS 20000000ull
#define SL_PACER_LOW_NS 2000000ull    /* link time of frames the pacer is kept fed with */

static const char *const ctr_names[SGW_SLD__COUNT] = {
	[SGW_SLD_BYPASS_NO_TERMINAL] = "bypass_no_terminal",
	[SGW_SLD_BYPASS_NON_IP] = "bypass_non_ip",
	[SGW_SLD_BYPASS_RULE] = "bypass_service",
	[SGW_SLD_NOT_OWNER] = "not_owner",
	[SGW_SLD_SEND_QUEUE_FULL] = "send_queue_full",
	[SGW_SLD_SEND_TOO_BIG] = "send_too_big",
	[SGW_SLD_SEND_NOT_CONNECTED] = "send_not_connected",
	[SGW_SLD_SEND_OTHER] = "send_other",
	[SGW_SLD_NO_MBUF] = "no_mbuf",
	[SGW_SLD_PACER_FULL] = "pacer_full",
	[SGW_SLD_RX_WRONG_PORT] = "rx_wrong_port",
	[SGW_SLD_RX_NO_SESSION] = "rx_no_session",
	[SGW_SLD_RX_BAD_HEADER] = "rx_bad_header",
	[SGW_SLD_RX_CHAINED] = "rx_chained",
	[SGW_SLD_RX_CRYPTO] = "rx_crypto",
	[SGW_SLD_RX_NO_KEY_HERE] = "rx_encrypted_no_key",
	[SGW_SLD_RX_REFUSED] = "rx_refused",
	[SGW_SLD_RX_DUPLICATE] = "rx_duplicate",
	[SGW_SLD_RELEASED_RX] = "released_rx",
	[SGW_SLD_RELEASED_UNACKED] = "released_unacked",
	[SGW_SLD_DELIVER_NOT_IP] = "deliver_not_ip",
	[SGW_SLD_DELIVER_OTHER_CHANNEL] = "deliver_other_channel",
	[SGW_SLD_DELIVER_CHAIN_FAIL] = "deliver_chain_fail",
	[SGW_SLD_DELIVER_FULL] = "deliver_full",
	[SGW_SLD_RX_OTHER_TERMINAL] = "rx_other_terminal",
};

#define SL(dp) sgw_sl_of(dp)
#define SLW(w) sgw_sl_worker_of(w)

/*
 * The stage's losses as its own drops.* reasons (stage.h, drop_names): a
 * packet or frame the stage frees without sending it is counted twice, under
 * its stage counter and under drops.satlink_<counter> (docs/operations.md,
 * "Exit report"). drop_of[why] is 1 + its index in sl_drop_names; the other
 * stage counters (bypasses, no_mbuf, rx_duplicate) are no loss: 0.
 */
static const char *const sl_drop_names[] = {
	"satlink_not_owner", "satlink_send_queue_full", "satlink_send_too_big",
	"satlink_send_not_connected", "satlink_send_other", "satlink_pacer_full",
	"satlink_rx_wrong_port", "satlink_rx_no_session", "satlink_rx_bad_header",
	"satlink_rx_chained", "satlink_rx_crypto", "satlink_rx_encrypted_no_key",
	"satlink_rx_refused", "satlink_released_rx", "satlink_released_unacked",
	"satlink_deliver_not_ip", "satlink_deliver_other_channel",
	"satlink_deliver_chain_fail", "satlink_deliver_full",
};

static const uint8_t drop_of[SGW_SLD__COUNT] = {
	[SGW_SLD_NOT_OWNER] = 1,
	[SGW_SLD_SEND_QUEUE_FULL] = 2,
	[SGW_SLD_SEND_TOO_BIG] = 3,
	[SGW_SLD_SEND_NOT_CONNECTED] = 4,
	[SGW_SLD_SEND_OTHER] = 5,
	[SGW_SLD_PACER_FULL] = 6,
	[SGW_SLD_RX_WRONG_PORT] = 7,
	[SGW_SLD_RX_NO_SESSION] = 8,
	[SGW_SLD_RX_BAD_HEADER] = 9,
	[SGW_SLD_RX_CHAINED] = 10,
	[SGW_SLD_RX_CRYPTO] = 11,
	[SGW_SLD_RX_NO_KEY_HERE] = 12,
	[SGW_SLD_RX_REFUSED] = 13,
	[SGW_SLD_RELEASED_RX] = 14,
	[SGW_SLD_RELEASED_UNACKED] = 15,
	[SGW_SLD_DELIVER_NOT_IP] = 16,
	[SGW_SLD_DELIVER_OTHER_CHANNEL] = 17,
	[SGW_SLD_DELIVER_CHAIN_FAIL] = 18,
	[SGW_SLD_DELIVER_FULL] = 19,
};

_Static_assert(RTE_DIM(sl_drop_names) == 19, "one name per loss in drop_of");

static const char *const sl_orig_names[SGW_SL_ORIG__COUNT] = {
	[SGW_SL_ORIG_DATA] = "satlink_data_frames",
	[SGW_SL_ORIG_CTRL] = "satlink_ctrl_frames",
};

static const char *const sl_cons_names[SGW_SL_CONS__COUNT] = {
	[SGW_SL_CONS_CARRIED] = "satlink_pkts_carried",
	[SGW_SL_CONS_CTRL_READ] = "satlink_ctrl_frames_read",
	[SGW_SL_CONS_MERGED] = "satlink_fragments_merged",
	[SGW_SL_CONS_DUPS] = "satlink_duplicates",
	[SGW_SL_CONS_CHANNEL] = "satlink_channel_msgs_delivered",
	[SGW_SL_CONS_OTHER_TERMINAL] = "satlink_other_terminal",
};

int
sgw_sl_drop_index(enum sgw_sld_ctr why)
{
	if ((unsigned int)why >= SGW_SLD__COUNT || drop_of[why] == 0)
		return -1;
	return (int)(sgw_stage_drop_base(SGW_STAGE_SATLINK) + drop_of[why] - 1u);
}

/* n packets or frames lost for reason why (a loss: drop_of[why] != 0). */
static inline void
lost(struct sgw_worker *w, enum sgw_sld_ctr why, uint64_t n)
{
	RTE_ASSERT(drop_of[why] != 0);
	SLW(w)->ctr[why] += n;
	w->c.drop[SLW(w)->drop_base + drop_of[why] - 1u] += n;
}

/* Free m, lost for reason why. */
static inline void
lose(struct sgw_worker *w, enum sgw_sld_ctr why, struct rte_mbuf *m)
{
	lost(w, why, 1);
	rte_pktmbuf_free(m);
}

/*
 * What a handle the ARQ gives back was: the stage marks the packets it hands
 * to the session in their port field (a received frame's is the satlink
 * port's id), so a RELEASE says whether a sent packet is done with or a
 * received fragment was given up.
 */
#define SL_H_RELIABLE UINT16_MAX
#define SL_H_DATAGRAM (UINT16_MAX - 1)
_Static_assert(RTE_MAX_ETHPORTS < SL_H_DATAGRAM, "port ids must not look like handle marks");
/* In the feed queue only: a message of channel m->vlan_tci (sgw_sl_send_channel). */
#define SL_H_CHANNEL (UINT16_MAX - 2)
_Static_assert(RTE_MAX_ETHPORTS < SL_H_CHANNEL, "port ids must not look like channel marks");

/* ------------------------------------------------------------------ setup */

/*
 * Fragments of the largest IP packet carried, at frame_size bytes each. The
 * sessions use the count for the smallest frame any end may send (the
 * policy's floor, 64: adapted frames and probes go down to it), so two ends
 * agree on it whatever their frame_size and adaptation settings.
 */
#define SL_FRAME_SIZE_FLOOR 64u
static uint16_t
max_frags_of(uint16_t frame_size)
{
	return (uint16_t)RTE_MIN((SL_MAX_IP_PKT + frame_size - 1) / frame_size, SGW_ARQ_MAX_FRAGS);
}

/* Frames of a window: 2 x rate x rtt (room to keep sending while a loss is repaired). */
static uint32_t
window_of(uint64_t rate_bps, uint32_t rtt_ms, uint16_t frame_size, uint32_t max)
{
	uint64_t bits = (uint64_t)(RTE_MIN(frame_size, SL_WINDOW_AVG_PAYLOAD) +
				   SL_FRAME_OVERHEAD) * 8u;
	uint64_t w = (2u * rate_bps / 1000u * rtt_ms + bits - 1) / bits;

	return (uint32_t)RTE_MAX(RTE_MIN(w, (uint64_t)max), 64ull);
}

/*
 * This end's epoch: the unix second after a wait for the next whole second.
 * Two starts of one end are then always in different seconds, so the epoch
 * increases across restarts (the AES-GCM nonce's uniqueness rests on it,
 * lib/sgw_slcrypto.h) without state on disk, as long as the clock does not
 * step back; the wait costs at most a second at startup.
 */
static uint32_t
take_epoch(void)
{
	struct timespec ts;
	uint32_t e;

	clock_gettime(CLOCK_REALTIME, &ts);
	usleep((useconds_t)((1000000000L - ts.tv_nsec) / 1000 + 1));
	clock_gettime(CLOCK_REALTIME, &ts);
	if (sgw_slcrypto_next_epoch(0, (uint64_t)ts.tv_sec, &e) != 0)
		e = (uint32_t)ts.tv_sec;
	return e;
}

/*
 * The pacer's low-water mark for frames of fs payload bytes: SL_PACER_LOW_NS
 * of line time (at least 8 frames) kept waiting for the line. pace() redoes
 * it when frame_size_adapt changes the size: the same line time in shorter
 * frames is more of them (at 100 Mbit/s, 17 frames of 1400 bytes or 40 of
 * 560).
 */
static void
pq_low_set(struct sgw_sl_sess *ss, uint16_t fs)
{
	uint64_t frame_ns = (uint64_t)(fs + SL_FRAME_OVERHEAD + RTE_ETHER_HDR_LEN) * 8u *
		ss->ns_per_kbit / 1000000u;

	ss->pq_fs = fs;
	ss->pq_low = (uint32_t)RTE_MAX(8ull, SL_PACER_LOW_NS / RTE_MAX(frame_ns, 1ull));
}

static int
sess_init(struct sgw_dp *dp, struct sgw_sl *sl, const struct sgw_policy *pol,
	  struct sgw_sl_sess *ss, const struct sgw_terminal *t,
	  const struct sgw_slcrypto_keys *keys)
{
	const struct sgw_satlink_conf *sc = &pol->satlink;
	bool hub = pol->role == SGW_ROLE_HUB;
	uint64_t rate = hub ? sc->forward_rate_bps : sc->return_rate_bps;
	struct sgw_arq_conf ac;
	const char *bad;

	ss->term_id = t->id;
	snprintf(ss->name, sizeof(ss->name), "%s", t->name);
	ss->owner = sgw_terminal_shard(t->id, dp->n_workers);
	ss->timer = SGW_TW_INVALID;
	ss->timer_at = SGW_ARQ_NEVER;
	/* ns per 1000 bits, times 1000: 1 ns resolution for rates up to 1 Tbit/s. */
	ss->ns_per_kbit = 1000000000000000ull / rate;

	sgw_arq_conf_default(&ac);
	ac.terminal_id = t->id;
	ac.local_epoch = sl->epoch;
	ac.tx_window = sl->tx_window;
	ac.rx_window = sl->rx_window;
	ac.sendq_pkts = SL_ARQ_SENDQ;
	ac.frag_size = sc->frame_size;
	ac.max_frags = max_frags_of(SL_FRAME_SIZE_FLOOR);
	ac.retx_copies = sc->retx_copies;
	ac.retx_copies_idle = sc->retx_copies_idle;
	/* frame_size is the largest frame; with frame_size_adapt the sender
	 * picks its size from the losses it sees (lib/sgw_fsize.h) */
	ac.frag_adapt = sc->frame_size_adapt;
	ac.frag_min = RTE_MIN(sc->frame_size_min, sc->frame_size);
	ac.frame_overhead = SL_FRAME_OVERHEAD + RTE_ETHER_HDR_LEN;
	ac.retx_spacing_ns = (uint64_t)sc->retx_spacing_us * 1000u;
	ac.status_interval_ns = (uint64_t)sc->status_interval_ms * 1000000u;
	ac.status_min_gap_ns = RTE_MIN(ac.status_min_gap_ns, ac.status_interval_ns);
	ac.rtt_init_ns = (uint64_t)sc->rtt_ms * 1000000u;
	ac.keepalive_ns = (uint64_t)sc->keepalive_ms * 1000000u;
	ac.link_down_ns = (uint64_t)sc->link_down_ms * 1000000u;
	ac.rto_max_ns = (uint64_t)sc->rto_max_ms * 1000000u;
	/*
	 * Retransmission timers run from when a frame leaves the pacer
	 * (pace_send calls sgw_arq_on_wire), bounded by the line time of a full
	 * pacer (2 x tx_window + 64 frames of the largest size) for a frame that
	 * never leaves: after an outage the burst of repairs queues here, and
	 * timed from their emission its tail was sent twice.
	 */
	ac.wire_wait_ns = RTE_MIN(60ull * 1000000000ull,
				  (2ull * sl->tx_window + 64u) *
				  ((sc->frame_size + SL_FRAME_OVERHEAD + RTE_ETHER_HDR_LEN) * 8ull *
				   ss->ns_per_kbit / 1000000u));
	bad = sgw_arq_conf_check(&ac);
	if (bad != NULL) {
		SGW_LOG(ERR, "satlink session '%s': bad ARQ setting %s", ss->name, bad);
		return -1;
	}
	ss->arq = sgw_arq_create(&ac, 0);
	sgw_ring_init(&ss->pqr, 2 * sl->tx_window + 64);
	ss->pq = rte_zmalloc("sgw_sl_pq", sizeof(*ss->pq) * ss->pqr.cap, RTE_CACHE_LINE_SIZE);
	ss->pq_tag = rte_zmalloc("sgw_sl_pqt", sizeof(*ss->pq_tag) * ss->pqr.cap,
				 RTE_CACHE_LINE_SIZE);
	pq_low_set(ss, sc->frame_size);
	sgw_ring_init(&ss->fqr, sc->send_queue);
	ss->fq = rte_zmalloc("sgw_sl_fq", sizeof(*ss->fq) * ss->fqr.cap, RTE_CACHE_LINE_SIZE);
	if (ss->arq == NULL || ss->pq == NULL || ss->pq_tag == NULL || ss->fq == NULL) {
		SGW_LOG(ERR, "satlink session '%s': out of memory (%zu bytes)", ss->name,
			sgw_arq_footprint(&ac));
		return -1;
	}
	if (keys != NULL) {
		struct sgw_slcrypto_conf cc = {
			.role = hub ? SGW_SLC_ROLE_HUB : SGW_SLC_ROLE_TERMINAL,
			.tx_epoch = sl->epoch,
		};
		const struct sgw_slcrypto_key *k = sgw_slcrypto_keys_find(keys, t->id);

		if (k == NULL) {
			SGW_LOG(ERR, "satlink: no key for terminal '%s' (id %u) in %s", ss->name,
				t->id, sc->keys);
			return -1;
		}
		if (sl->eng[ss->owner] == NULL) {
			sl->eng[ss->owner] = sgw_slcrypto_engine_create(SGW_SLC_ARCH_AUTO);
			if (sl->eng[ss->owner] == NULL) {
				SGW_LOG(ERR, "satlink: cannot start the AES-GCM engine (IPsec-MB)");
				return -1;
			}
		}
		ss->cc = sgw_slcrypto_ctx_create(sl->eng[ss->owner], k, &cc);
		if (ss->cc == NULL) {
			SGW_LOG(ERR, "satlink session '%s': cannot create its crypto context",
				ss->name);
			return -1;
		}
	}
	return 0;
}

/*
 * The "delivered by a session with AES-GCM on" bit (satlink.h, auth_flag): an
 * mbuf dynamic flag, so it travels with the packet through the re-inject
 * queue. A PMD or rte_pktmbuf_reset clears ol_flags, so a frame from a port
 * never carries it.
 */
static int
sl_auth_flag_register(struct sgw_sl *sl)
{
	static const struct rte_mbuf_dynflag desc = { .name = SGW_SL_AUTH_FLAG_NAME };
	int bit = rte_mbuf_dynflag_register(&desc);

	if (bit < 0) {
		SGW_LOG(ERR, "satlink: cannot register the mbuf flag %s", SGW_SL_AUTH_FLAG_NAME);
		return -1;
	}
	sl->auth_flag = RTE_BIT64(bit);
	return 0;
}

static int
sl_init(struct sgw_dp *dp, const struct sgw_policy *pol)
{
	const struct sgw_satlink_conf *sc = &pol->satlink;
	struct sgw_slcrypto_keys *keys = NULL;
	struct rte_hash_parameters hp = {0};
	struct sgw_sl *sl;
	char name[RTE_HASH_NAMESIZE];
	uint32_t i, n = 0, act_cap;
	uint16_t mtu = 0;
	bool hub = pol->role == SGW_ROLE_HUB;
	char err[2048];

	if (!sc->enabled || dp->bare_forward)
		return 0;  /* off: satlink frames go to the stateless stage */
	if (dp->n_workers > RTE_DIM(sl->eng)) {
		SGW_LOG(ERR, "satlink: at most %zu workers", RTE_DIM(sl->eng));
		return -1;
	}
	/* A frame must fit the port's MTU and one mbuf. */
	if (rte_eth_dev_get_mtu(dp->ports[sc->port].port_id, &mtu) == 0 &&
	    sc->frame_size + SL_FRAME_OVERHEAD > mtu) {
		SGW_LOG(ERR, "satlink: frame_size %u + %u bytes of headers exceeds port '%s' MTU %u;"
			" lower satlink.frame_size or raise the port's mtu", sc->frame_size,
			SL_FRAME_OVERHEAD, pol->ports[sc->port].name, mtu);
		return -1;
	}
	if (RTE_ETHER_HDR_LEN + sc->frame_size + SL_FRAME_OVERHEAD > RTE_MBUF_DEFAULT_DATAROOM) {
		SGW_LOG(ERR, "satlink: frame_size %u does not fit one mbuf", sc->frame_size);
		return -1;
	}
	sl = rte_zmalloc("sgw_sl", sizeof(*sl), RTE_CACHE_LINE_SIZE);
	if (sl == NULL)
		return -1;
	dp->sdata[SGW_STAGE_SATLINK] = sl;
	sl->pidx = sc->port;
	sl->port_id = dp->ports[sc->port].port_id;
	memcpy(sl->peer_mac.addr_bytes, sc->peer_mac, RTE_ETHER_ADDR_LEN);
	sl->tx_window = window_of(hub ? sc->forward_rate_bps : sc->return_rate_bps, sc->rtt_ms,
				  sc->frame_size, sc->window_max);
	sl->rx_window = window_of(hub ? sc->return_rate_bps : sc->forward_rate_bps, sc->rtt_ms,
				  sc->frame_size, sc->window_max);

	if (sc->keys[0] != '\0') {
		if (sgw_slcrypto_keys_load(sc->keys, &keys, err, sizeof(err)) != 0) {
			SGW_LOG(ERR, "satlink keys: %s", err);
			return -1;
		}
		sl->keyed = true;
	}
	for (i = 0; i < pol->n_terminals; i++)
		if (hub || pol->terminals[i].id == sc->terminal_id)
			n++;
	if (n == 0) {
		SGW_LOG(ERR, "satlink: no terminal to keep a session with");
		goto fail;
	}
	snprintf(name, sizeof(name), "sgwsl_%s", dp->instance);
	hp.name = name;
	hp.entries = RTE_MAX(n, 8u);
	hp.key_len = sizeof(uint32_t);
	hp.hash_func = rte_jhash;
	hp.socket_id = (int)rte_socket_id();
	sl->by_id = rte_hash_create(&hp);
	sl->sess = rte_zmalloc("sgw_sl_sess", sizeof(*sl->sess) * n, RTE_CACHE_LINE_SIZE);
	if (sl->by_id == NULL || sl->sess == NULL) {
		SGW_LOG(ERR, "satlink: out of memory for %u sessions", n);
		goto fail;
	}
	sl->epoch = take_epoch();
	for (i = 0; i < pol->n_terminals; i++) {
		const struct sgw_terminal *t = &pol->terminals[i];

		if (!hub && t->id != sc->terminal_id)
			continue;
		if (sess_init(dp, sl, pol, &sl->sess[sl->n_sess], t, keys) < 0)
			goto fail;
		if (rte_hash_add_key_data(sl->by_id, &t->id,
					  (void *)(uintptr_t)sl->n_sess) < 0)
			goto fail;
		sl->n_sess++;
	}
	sgw_slcrypto_keys_free(keys);
	keys = NULL;

	act_cap = RTE_MAX(512u, 2 * SGW_ARQ_MIN_ROOM(max_frags_of(SL_FRAME_SIZE_FLOOR)));
	for (i = 0; i < dp->n_workers; i++) {
		int socket = (int)rte_lcore_to_socket_id(dp->workers[i]->lcore);
		struct sgw_sl_worker *x;

		x = rte_zmalloc_socket("sgw_sl_worker", sizeof(*x), RTE_CACHE_LINE_SIZE, socket);
		if (x == NULL)
			goto fail;
		dp->workers[i]->sctx[SGW_STAGE_SATLINK] = x;
		x->drop_base = sgw_stage_drop_base(SGW_STAGE_SATLINK);
		x->out.act = rte_zmalloc_socket("sgw_sl_act", sizeof(*x->out.act) * act_cap,
						RTE_CACHE_LINE_SIZE, socket);
		x->act_cap = act_cap;
		x->min_room = SGW_ARQ_MIN_ROOM(max_frags_of(SL_FRAME_SIZE_FLOOR));
		x->out.cap = act_cap;
		if (x->out.act == NULL)
			goto fail;
	}
	/*
	 * Every DELIVER action becomes one packet handed back to the pipeline.
	 * Each call into the session gets no more action room than the re-inject
	 * queue has left (arq_out), so the queue holds a few full arrays' worth
	 * and the session carries the rest to a later call.
	 */
	sgw_stage_reinject_room(dp, 4 * act_cap);
	sgw_stage_own_port(dp, sl->pidx, SGW_STAGE_SATLINK);
	if (sl_auth_flag_register(sl) != 0)
		goto fail;
	SGW_LOG(INFO, "satlink on port '%s': %u session(s), epoch %u, windows %u/%u frames of "
		"%u bytes, pacing at %" PRIu64 " bit/s, %s", pol->ports[sc->port].name,
		sl->n_sess, sl->epoch, sl->tx_window, sl->rx_window, sc->frame_size,
		hub ? sc->forward_rate_bps : sc->return_rate_bps,
		sl->keyed ? "AES-GCM protected" : "frames NOT protected (no keys)");
	return 1;
fail:
	sgw_slcrypto_keys_free(keys);
	return -1;
}

static void
sl_fini(struct sgw_dp *dp)
{
	struct sgw_sl *sl = SL(dp);
	uint32_t i;

	if (sl == NULL)
		return;
	for (i = 0; i < sl->n_sess; i++) {
		sgw_arq_destroy(sl->sess[i].arq);
		sgw_slcrypto_ctx_destroy(sl->sess[i].cc);
		rte_free(sl->sess[i].pq);
		rte_free(sl->sess[i].pq_tag);
		rte_free(sl->sess[i].fq);
	}
	for (i = 0; i < RTE_DIM(sl->eng); i++)
		sgw_slcrypto_engine_destroy(sl->eng[i]);
	for (i = 0; i < dp->n_workers; i++) {
		struct sgw_sl_worker *x;

		if (dp->workers[i] == NULL || dp->workers[i]->sctx[SGW_STAGE_SATLINK] == NULL)
			continue;
		x = SLW(dp->workers[i]);
		rte_free(x->out.act);
		rte_free(x);
		dp->workers[i]->sctx[SGW_STAGE_SATLINK] = NULL;
	}
	rte_hash_free(sl->by_id);
	rte_free(sl->sess);
	rte_free(sl);
	dp->sdata[SGW_STAGE_SATLINK] = NULL;
}

/* ------------------------------------------------------------ publishing */

static void
publish(struct sgw_sl_sess *ss)
{
	struct sgw_sl_pub *p = &ss->c;

	p->state = (uint8_t)sgw_arq_get_state(ss->arq);
	p->peer_epoch = sgw_arq_peer_epoch(ss->arq);
	p->send_window = sgw_arq_send_window(ss->arq);
	p->pacer_held = sgw_ring_count(&ss->pqr);
	p->pacer_low = ss->pq_low;
	p->queue_held = sgw_ring_count(&ss->fqr);
	sgw_arq_get_stats(ss->arq, &p->arq);
	if (ss->cc != NULL)
		sgw_slcrypto_get_stats(ss->cc, &p->crypto);
	__atomic_store_n(&ss->pub_seq, ss->pub_seq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	ss->pub = *p;
	__atomic_store_n(&ss->pub_seq, ss->pub_seq + 1, __ATOMIC_RELEASE);
}

void
sgw_sl_read(const struct sgw_dp *dp, uint32_t i, struct sgw_sl_pub *out)
{
	const struct sgw_sl_sess *ss = &SL(dp)->sess[i];
	uint32_t a, b;

	do {
		a = __atomic_load_n(&ss->pub_seq, __ATOMIC_ACQUIRE);
		*out = ss->pub;
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		b = __atomic_load_n(&ss->pub_seq, __ATOMIC_RELAXED);
	} while ((a & 1u) || a != b);
}

/*
 * The action array for the next call into a session. Every DELIVER action
 * becomes a packet handed back to the pipeline, so a call gets no more room
 * than the re-inject queue has left; NULL when that is less than a session
 * needs for one packet (the caller counts deliver_full; work the session
 * carries waits for the queue to drain, a loop later).
 */
static inline struct sgw_arq_out *
arq_out(struct sgw_worker *w)
{
	struct sgw_sl_worker *x = SLW(w);
	uint32_t room = sgw_reinject_room(w);

	if (room < x->min_room)
		return NULL;
	x->out.cap = RTE_MIN(room, x->act_cap);
	return &x->out;
}

/* ---------------------------------------------------------------- frames */

static inline struct rte_mbuf *
frame_alloc(struct sgw_worker *w, const struct sgw_sl *sl)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(w->dp->pool);
	struct rte_ether_hdr *eh;

	if (unlikely(m == NULL)) {
		SLW(w)->ctr[SGW_SLD_NO_MBUF]++;
		return NULL;
	}
	eh = (struct rte_ether_hdr *)rte_pktmbuf_append(m, RTE_ETHER_HDR_LEN);
	rte_ether_addr_copy(&sl->peer_mac, &eh->dst_addr);
	rte_ether_addr_copy(&w->dp->ports[sl->pidx].mac, &eh->src_addr);
	eh->ether_type = rte_cpu_to_be_16(SGW_SATLINK_ETHERTYPE);
	m->port = sl->port_id;
	return m;
}

/* Mark a written header as carrying a sealed payload of plain_len bytes. */
static inline void
hdr_set_sealed(uint8_t *hdr, uint32_t plain_len)
{
	uint16_t l = rte_cpu_to_be_16((uint16_t)(plain_len + SL_CRYPTO_OVERHEAD));

	hdr[1] |= SGW_SL_F_ENCRYPTED;
	memcpy(hdr + 20, &l, sizeof(l));
}

/* A DATA frame: header + bytes [offset, offset + len) of the packet, sealed or not. */
static struct rte_mbuf *
build_data(struct sgw_worker *w, struct sgw_sl *sl, struct sgw_sl_sess *ss,
	   const struct sgw_arq_act *a)
{
	const struct rte_mbuf *pkt = (const struct rte_mbuf *)(uintptr_t)a->handle;
	uint8_t tmp[RTE_MBUF_DEFAULT_DATAROOM];
	struct rte_mbuf *m;
	const uint8_t *src;
	uint8_t *hdr, *out;

	m = frame_alloc(w, sl);
	if (m == NULL)
		return NULL;
	hdr = (uint8_t *)rte_pktmbuf_append(m, SGW_SATLINK_HDR_LEN);
	if (sgw_arq_write_data_hdr(ss->arq, a, hdr, SGW_SATLINK_HDR_LEN) == 0)
		goto none;  /* stale: the peer restarted since */
	if (ss->cc == NULL) {
		out = (uint8_t *)rte_pktmbuf_append(m, a->len);
		src = out == NULL ? NULL : rte_pktmbuf_read(pkt, a->offset, a->len, out);
		if (src == NULL)
			goto none;
		if (src != out)
			memcpy(out, src, a->len);
	} else {
		src = rte_pktmbuf_read(pkt, a->offset, a->len, tmp);
		hdr_set_sealed(hdr, a->len);
		out = (uint8_t *)rte_pktmbuf_append(m, a->len + SL_CRYPTO_OVERHEAD);
		if (src == NULL || out == NULL ||
		    sgw_slcrypto_seal(ss->cc, hdr, SGW_SATLINK_HDR_LEN, src, a->len, out,
				      a->len + SL_CRYPTO_OVERHEAD) < 0)
			goto none;
	}
	return m;
none:
	rte_pktmbuf_free(m);
	return NULL;
}

static struct rte_mbuf *
build_ctrl(struct sgw_worker *w, struct sgw_sl *sl, struct sgw_sl_sess *ss,
	   const struct sgw_arq_act *a)
{
	uint8_t buf[SGW_SATLINK_STATUS_MAX_LEN];
	struct rte_mbuf *m;
	size_t n;
	uint8_t *out;

	n = sgw_arq_write_ctrl(ss->arq, a, w->now_ns, buf, sizeof(buf));
	if (n == 0)
		return NULL;
	m = frame_alloc(w, sl);
	if (m == NULL)
		return NULL;
	if (ss->cc == NULL) {
		out = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)n);
		memcpy(out, buf, n);
		return m;
	}
	hdr_set_sealed(buf, (uint32_t)(n - SGW_SATLINK_HDR_LEN));
	out = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)(n + SL_CRYPTO_OVERHEAD));
	memcpy(out, buf, SGW_SATLINK_HDR_LEN);
	if (sgw_slcrypto_seal(ss->cc, out, SGW_SATLINK_HDR_LEN, buf + SGW_SATLINK_HDR_LEN,
			      (uint32_t)(n - SGW_SATLINK_HDR_LEN), out + SGW_SATLINK_HDR_LEN,
			      (uint32_t)(n - SGW_SATLINK_HDR_LEN + SL_CRYPTO_OVERHEAD)) < 0) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	return m;
}

/* ----------------------------------------------------------------- pacing */

/* Send the paced frames that are due. */
static void
pace_send(struct sgw_worker *w, const struct sgw_snapshot *s, struct sgw_sl *sl,
	  struct sgw_sl_sess *ss)
{
	uint64_t now = w->now_ns;
	/* A late wakeup (a shared core) may catch up this much line time, no more. */
	uint64_t credit = RTE_MAX(SL_PACE_CREDIT_NS,
				  2ull * s->pol.workers.timer_tick_us * 1000u);

	if (ss->pace_next_ns + credit < now)
		ss->pace_next_ns = now - credit;
	while (!sgw_ring_empty(&ss->pqr) && ss->pace_next_ns <= now) {
		uint32_t k = sgw_ring_pop(&ss->pqr);
		struct rte_mbuf *m = ss->pq[k];

		/* the frame's retransmission clock starts now (sgw_arq_on_wire) */
		if (ss->pq_tag[k] != UINT64_MAX)
			sgw_arq_on_wire(ss->arq, (uint32_t)(ss->pq_tag[k] >> 32),
					(uint32_t)ss->pq_tag[k], now);
		ss->pace_next_ns += (uint64_t)rte_pktmbuf_pkt_len(m) * 8u * ss->ns_per_kbit /
				    1000000u;
		ss->c.frames_tx_data++;
		sgw_tx(w, (uint16_t)sl->pidx, m, s->pol.workers.burst);
	}
}

static void run_actions(struct sgw_worker *w, const struct sgw_snapshot *s,
			struct sgw_sl_sess *ss);

/*
 * Tell the ARQ whether frames wait for the line (in the pacer, or packets in
 * the feed queue): before the calls that find losses (a status, the timers),
 * so a repair's extra copies go out only on an idle line (retx_copies_when).
 */
static inline void
line_state(struct sgw_sl_sess *ss)
{
	sgw_arq_line_busy(ss->arq, !sgw_ring_empty(&ss->pqr) || !sgw_ring_empty(&ss->fqr));
}

/*
 * Reliable packets wait in the session's feed queue and go to the ARQ only
 * while the pacer holds fewer than pq_low frames: a frame the ARQ emits is
 * on its way (its RTT clock runs), so the queue before the line stays a few
 * ms long whatever the window, and the window (sized for small frames) never
 * turns into a standing queue of seconds.
 */
static void
pace(struct sgw_worker *w, const struct sgw_snapshot *s, struct sgw_sl *sl,
     struct sgw_sl_sess *ss)
{
	uint16_t fs = sgw_arq_frag_size(ss->arq);

	if (fs != ss->pq_fs)
		pq_low_set(ss, fs);
	pace_send(w, s, sl, ss);
	while (!sgw_ring_empty(&ss->fqr)) {
		struct sgw_arq_out *out;
		struct rte_mbuf *m;
		uint16_t ch, port;
		int rc;

		if (sgw_ring_count(&ss->pqr) >= ss->pq_low) {
			/* Send what is due (once per pq_low frames, not per packet), then see. */
			pace_send(w, s, sl, ss);
			if (sgw_ring_count(&ss->pqr) >= ss->pq_low)
				break;
		}
		out = arq_out(w);
		if (out == NULL)
			break;  /* the re-inject queue first: later */
		m = ss->fq[sgw_ring_head(&ss->fqr)];
		ch = m->port == SL_H_CHANNEL ? m->vlan_tci : 0;
		port = m->port;
		m->port = SL_H_RELIABLE;
		rc = sgw_arq_send(ss->arq, w->now_ns, ch, (uint64_t)(uintptr_t)m,
				  rte_pktmbuf_pkt_len(m), 0, out);

		if (rc == -ENOBUFS || rc == -EAGAIN) {
			/*
			 * Window and the ARQ's queue full, or resetting: later. The
			 * packet stays queued with its own tag: a stream message keeps
			 * its channel (retagged reliable, it once left on channel 0,
			 * where the far end drops it as not IP). What the refusal
			 * emitted (a reset's releases) is this session's.
			 */
			m->port = port;
			run_actions(w, s, ss);
			break;
		}
		sgw_ring_pop(&ss->fqr);
		if (rc == 0) {
			ss->c.pkts_sent_reliable++;
			ss->arq_pkts++;
		} else {
			lose(w, rc == -EMSGSIZE ? SGW_SLD_SEND_TOO_BIG : SGW_SLD_SEND_OTHER, m);
		}
		run_actions(w, s, ss);
	}
	pace_send(w, s, sl, ss);
	ss->pace_idle = sgw_ring_empty(&ss->pqr) && sgw_ring_empty(&ss->fqr);
}

static void
pace_add(struct sgw_worker *w, struct sgw_sl_sess *ss, struct rte_mbuf *m, uint64_t tag)
{
	uint32_t k;

	if (sgw_ring_full(&ss->pqr)) {
		/* never on the line: its retransmission timer runs from now */
		if (tag != UINT64_MAX)
			sgw_arq_on_wire(ss->arq, (uint32_t)(tag >> 32), (uint32_t)tag, w->now_ns);
		lose(w, SGW_SLD_PACER_FULL, m);
		return;
	}
	/* Nothing was waiting (the link was idle): the line owes nothing. */
	if (ss->pace_idle) {
		ss->pace_idle = false;
		if (ss->pace_next_ns < w->now_ns)
			ss->pace_next_ns = w->now_ns;
	}
	k = sgw_ring_push(&ss->pqr);
	ss->pq[k] = m;
	ss->pq_tag[k] = tag;
}

/* -------------------------------------------------------------- delivery */


static void
free_run(const struct sgw_arq_act *a, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		rte_pktmbuf_free((struct rte_mbuf *)(uintptr_t)a[i].handle);
}

/*
 * A DELIVER run (FIRST..LAST) into one packet with an Ethernet header: later
 * fragments are copied into the first one's tailroom while they fit, chained
 * after that.
 */
static void
deliver_run(struct sgw_worker *w, struct sgw_sl *sl, struct sgw_sl_sess *ss,
	    const struct sgw_arq_act *a, uint32_t n)
{
	struct rte_mbuf *head = (struct rte_mbuf *)(uintptr_t)a[0].handle, *last = head;
	struct rte_ether_hdr *eh;
	uint8_t ver;
	uint32_t i;

	/* n fragments make one packet: n - 1 merge into the first, whatever becomes of it. */
	SLW(w)->cons[SGW_SL_CONS_MERGED] += n - 1;
	if (a[0].channel != 0 && sl->chan_rx == NULL) {
		lost(w, SGW_SLD_DELIVER_OTHER_CHANNEL, 1);
		free_run(a, n);
		return;
	}
	for (i = 1; i < n; i++) {
		struct rte_mbuf *f = (struct rte_mbuf *)(uintptr_t)a[i].handle;
		uint16_t len = rte_pktmbuf_data_len(f);

		if (last == head && rte_pktmbuf_tailroom(head) >= len) {
			memcpy(rte_pktmbuf_append(head, len), rte_pktmbuf_mtod(f, void *), len);
			rte_pktmbuf_free(f);
		} else if (rte_pktmbuf_chain(head, f) == 0) {
			last = f;
		} else {
			lost(w, SGW_SLD_DELIVER_CHAIN_FAIL, 1);
			rte_pktmbuf_free(head);
			free_run(a + i, n - i);
			return;
		}
	}
	if (a[0].channel != 0) {
		/* A stream message: its upper layer takes it, one segment. */
		if (head->nb_segs > 1 && rte_pktmbuf_linearize(head) != 0) {
			lose(w, SGW_SLD_DELIVER_CHAIN_FAIL, head);
			return;
		}
		SLW(w)->cons[SGW_SL_CONS_CHANNEL]++;
		head->ol_flags = 0;
		sl->chan_rx(w, (uint32_t)(ss - sl->sess), a[0].channel, head);
		return;
	}
	ver = *rte_pktmbuf_mtod(head, uint8_t *) >> 4;
	eh = (struct rte_ether_hdr *)rte_pktmbuf_prepend(head, RTE_ETHER_HDR_LEN);
	if ((ver != 4 && ver != 6) || eh == NULL) {
		lose(w, SGW_SLD_DELIVER_NOT_IP, head);
		return;
	}
	/* As if the far end had sent it to us; next hops rewrite both. */
	rte_ether_addr_copy(&w->dp->ports[sl->pidx].mac, &eh->dst_addr);
	if (rte_is_unicast_ether_addr(&sl->peer_mac))
		rte_ether_addr_copy(&sl->peer_mac, &eh->src_addr);
	else
		rte_ether_addr_copy(&w->dp->ports[sl->pidx].mac, &eh->src_addr);
	eh->ether_type = rte_cpu_to_be_16(ver == 4 ? RTE_ETHER_TYPE_IPV4 : RTE_ETHER_TYPE_IPV6);
	head->port = sl->port_id;
	/* Authenticated (AES-GCM on): the flag stages such as LIFT trust (satlink.h). */
	head->ol_flags = ss->cc != NULL ? sl->auth_flag : 0;
	ss->c.pkts_delivered++;
	ss->c.bytes_delivered += rte_pktmbuf_pkt_len(head) - RTE_ETHER_HDR_LEN;
	sgw_reinject(w, head);
}

/* ---------------------------------------------------------------- actions */

static void
event(struct sgw_worker *w, struct sgw_sl_sess *ss, uint8_t code)
{
	static const char *const what[] = {
		[SGW_ARQ_EV_LINK_UP] = "link up",
		[SGW_ARQ_EV_LINK_DOWN] = "LINK DOWN (nothing heard)",
		[SGW_ARQ_EV_PEER_RESTART] =
			"peer restarted or lost the session: held data released",
	};

	if (code < RTE_DIM(what) && what[code] != NULL)
		SGW_LOG(NOTICE, "satlink '%s' (terminal %u, worker %u): %s, peer epoch %u",
			ss->name, ss->term_id, w->idx, what[code], sgw_arq_peer_epoch(ss->arq));
	/* The streams on the session's channels are gone with the peer's state. */
	if (code == SGW_ARQ_EV_PEER_RESTART && SL(w->dp)->sess_restart != NULL)
		SL(w->dp)->sess_restart(w, (uint32_t)(ss - SL(w->dp)->sess));
}

/*
 * Of nrel reliable packets the ARQ just released, those it released after
 * their acknowledgement (its pkts_acked moved by as many) were carried; a
 * peer restart released the others unacknowledged.
 */
static void
settle_reliable(struct sgw_worker *w, struct sgw_sl_sess *ss, uint32_t nrel)
{
	struct sgw_arq_stats st;
	uint64_t acked;

	sgw_arq_get_stats(ss->arq, &st);
	acked = RTE_MIN(st.pkts_acked - ss->acked_seen, (uint64_t)nrel);
	ss->acked_seen = st.pkts_acked;
	SLW(w)->cons[SGW_SL_CONS_CARRIED] += acked;
	if (nrel > acked)
		lost(w, SGW_SLD_RELEASED_UNACKED, nrel - acked);
}

/* A handle the ARQ released: a sent packet it is done with, or a received fragment. */
static inline void
release(struct sgw_worker *w, struct sgw_sl_sess *ss, struct rte_mbuf *m, uint32_t *nrel)
{
	if (m->port == SL_H_DATAGRAM) {
		ss->arq_pkts--;
		SLW(w)->cons[SGW_SL_CONS_CARRIED]++;  /* released once its frames were built */
		rte_pktmbuf_free(m);
	} else if (m->port == SL_H_RELIABLE) {
		ss->arq_pkts--;
		(*nrel)++;
		rte_pktmbuf_free(m);
	} else {
		lose(w, SGW_SLD_RELEASED_RX, m);
	}
}

/* Carry out and empty the worker's action array, for session ss. */
static void
run_actions(struct sgw_worker *w, const struct sgw_snapshot *s, struct sgw_sl_sess *ss)
{
	struct sgw_sl *sl = SL(w->dp);
	struct sgw_arq_out *out = &SLW(w)->out;
	uint16_t burst = s->pol.workers.burst;
	uint32_t i, j, nrel = 0;

	/* Control frames first: ahead of every data frame of this batch. */
	for (i = 0; i < out->n; i++) {
		const struct sgw_arq_act *a = &out->act[i];
		struct rte_mbuf *m;

		if (a->type == SGW_ARQ_ACT_TX_CTRL) {
			m = build_ctrl(w, sl, ss, a);
			if (m != NULL) {
				ss->c.frames_tx_ctrl++;
				SLW(w)->orig[SGW_SL_ORIG_CTRL]++;
				sgw_tx(w, (uint16_t)sl->pidx, m, burst);
			}
		} else if (a->type == SGW_ARQ_ACT_EVENT) {
			event(w, ss, a->code);
		}
	}
	for (i = 0; i < out->n; i++) {
		const struct sgw_arq_act *a = &out->act[i];
		struct rte_mbuf *m;

		switch (a->type) {
		case SGW_ARQ_ACT_TX_DATA:
			m = build_data(w, sl, ss, a);
			if (m != NULL) {
				SLW(w)->orig[SGW_SL_ORIG_DATA]++;
				pace_add(w, ss, m, (a->flags & SGW_SL_F_DATAGRAM) ? UINT64_MAX :
						   (uint64_t)a->seq << 32 | a->order);
			} else if (!(a->flags & SGW_SL_F_DATAGRAM)) {
				/* not sent (no mbuf, stale): its timer runs from now */
				sgw_arq_on_wire(ss->arq, a->seq, a->order, w->now_ns);
			}
			break;
		case SGW_ARQ_ACT_DELIVER:
			for (j = i; j < out->n && out->act[j].type == SGW_ARQ_ACT_DELIVER &&
				    !(out->act[j].flags & SGW_SL_F_LAST); j++)
				;
			if (j == out->n)  /* never split across calls; defensive */
				j--;
			deliver_run(w, sl, ss, a, j - i + 1);
			i = j;
			break;
		case SGW_ARQ_ACT_RELEASE:
			release(w, ss, (struct rte_mbuf *)(uintptr_t)a->handle, &nrel);
			break;
		default:
			break;
		}
	}
	out->n = 0;
	if (nrel > 0)
		settle_reliable(w, ss, nrel);
}

/* Poll carried work, send what the pacer allows, arm the session's one timer. */
static void
service(struct sgw_worker *w, const struct sgw_snapshot *s, struct sgw_sl_sess *ss,
	uint32_t idx)
{
	struct sgw_arq_out *out;
	uint64_t due, delay;
	uint32_t k;

	run_actions(w, s, ss);
	for (k = 0; k < SL_POLLS_PER_CALL; k++) {
		due = sgw_arq_next_deadline(ss->arq);
		if (due > w->now_ns)
			break;
		out = arq_out(w);
		if (out == NULL)
			break;
		line_state(ss);
		sgw_arq_poll(ss->arq, w->now_ns, out);
		run_actions(w, s, ss);
	}
	pace(w, s, SL(w->dp), ss);
	due = sgw_arq_next_deadline(ss->arq);
	if (!sgw_ring_empty(&ss->pqr) && ss->pace_next_ns < due)
		due = ss->pace_next_ns;
	if (due == SGW_ARQ_NEVER) {
		if (ss->timer != SGW_TW_INVALID)
			sgw_tw_stop(w->tw, ss->timer);
		ss->timer = SGW_TW_INVALID;
		ss->timer_at = SGW_ARQ_NEVER;
		return;
	}
	if (ss->timer != SGW_TW_INVALID && ss->timer_at == due)
		return;
	delay = due > w->now_ns ? due - w->now_ns : 0;
	if (ss->timer != SGW_TW_INVALID && sgw_tw_update(w->tw, ss->timer, delay) == 0) {
		ss->timer_at = due;
		return;
	}
	ss->timer = sgw_tw_start(w->tw, sgw_tev_make(SGW_STAGE_SATLINK, 0, idx), delay);
	ss->timer_at = ss->timer == SGW_TW_INVALID ? SGW_ARQ_NEVER : due;
}

/*
 * Sessions a burst sent or received on: their timers, carried work and pacer
 * are seen to once, after the burst (sgw_sl_burst_done), not per packet.
 */
static void
touch(struct sgw_worker *w, const struct sgw_snapshot *s, struct sgw_sl_sess *ss, uint32_t idx)
{
	if (ss->touched)
		return;
	if (SLW(w)->ntouched == RTE_DIM(SLW(w)->touched)) {
		service(w, s, ss, idx);
		return;
	}
	ss->touched = true;
	SLW(w)->touched[SLW(w)->ntouched++] = idx;
}

static void
sl_burst_done(struct sgw_worker *w, const struct sgw_snapshot *s)
{
	struct sgw_sl *sl = SL(w->dp);
	uint32_t t;

	for (t = 0; t < SLW(w)->ntouched; t++) {
		struct sgw_sl_sess *ss = &sl->sess[SLW(w)->touched[t]];

		ss->touched = false;
		service(w, s, ss, SLW(w)->touched[t]);
	}
	SLW(w)->ntouched = 0;
}

static void
sl_timer(struct sgw_worker *w, const struct sgw_snapshot *s, uint32_t idx, uint8_t timer)
{
	struct sgw_sl *sl = SL(w->dp);
	struct sgw_sl_sess *ss;

	if (sl == NULL || idx >= sl->n_sess || timer != 0)
		return;
	ss = &sl->sess[idx];
	ss->timer = SGW_TW_INVALID;  /* an expired timer's handle is gone */
	ss->timer_at = SGW_ARQ_NEVER;
	service(w, s, ss, idx);  /* the session is due: service polls it */
}

/* ------------------------------------------------------------------ send */

/*
 * LIFT packets (issue 8, seed 000 section II): FrACKs (A = 1, T = 1) ride the
 * datagram service, TCP ACKs and control packets (Setup, Teardown and the
 * hub's acknowledgements) the reliable one, unless a rule names a service.
 * The parser saw the 8-byte header in the first segment (else: malformed).
 */
static enum sgw_sl_service
lift_service(const struct rte_mbuf *m, const struct sgw_pkt_info *pi)
{
	uint8_t f;

	if (rte_pktmbuf_data_len(m) <= pi->l4_off)
		return SGW_SL_SVC_RELIABLE;
	f = *rte_pktmbuf_mtod_offset(m, const uint8_t *, pi->l4_off);
	return (f & SGW_LIFT_F_A) && (f & SGW_LIFT_F_T) ? SGW_SL_SVC_DATAGRAM :
							    SGW_SL_SVC_RELIABLE;
}

/* A packet leaving by the satlink port (the stage's action): carried, bypassed or dropped. */
static void
sl_action(struct sgw_worker *w, const struct sgw_snapshot *s, struct rte_mbuf *m,
	  const struct sgw_pkt_info *pi, int32_t term, int32_t rule)
{
	struct sgw_sl *sl = SL(w->dp);
	const struct sgw_policy *p = &s->pol;
	const int32_t *sess_of_term = s->sdata[SGW_STAGE_SATLINK];
	enum sgw_sl_service svc = p->satlink.default_service;
	struct sgw_arq_out *out;
	struct sgw_sl_sess *ss;
	int32_t si;
	uint32_t len;
	int rc;

	if (rule >= 0 && p->rules[rule].sl_service != SGW_SL_SVC_DEFAULT)
		svc = p->rules[rule].sl_service;
	else if (pi->cls == SGW_CLASS_LIFT)
		svc = lift_service(m, pi);
	if (pi->ip_ver == 0 || term < 0 || svc == SGW_SL_SVC_BYPASS) {
		SLW(w)->ctr[pi->ip_ver == 0 ? SGW_SLD_BYPASS_NON_IP :
			  term < 0 ? SGW_SLD_BYPASS_NO_TERMINAL : SGW_SLD_BYPASS_RULE]++;
		sgw_tx(w, (uint16_t)sl->pidx, m, p->workers.burst);
		return;
	}
	si = sess_of_term != NULL ? sess_of_term[term] : -1;
	if (si < 0) {
		SLW(w)->ctr[SGW_SLD_BYPASS_NO_TERMINAL]++;
		sgw_tx(w, (uint16_t)sl->pidx, m, p->workers.burst);
		return;
	}
	ss = &sl->sess[si];
	if (ss->owner != w->idx) {
		lose(w, SGW_SLD_NOT_OWNER, m);
		return;
	}
	/* The IP packet alone: no Ethernet header, no Ethernet padding. */
	rte_pktmbuf_adj(m, pi->l3_off);
	len = rte_pktmbuf_pkt_len(m);
	if (pi->l3_len < len && rte_pktmbuf_trim(m, (uint16_t)(len - pi->l3_len)) == 0)
		len = pi->l3_len;
	if (svc == SGW_SL_SVC_RELIABLE) {
		/* Into the feed queue; the pacer takes it to the ARQ (pace()). */
		if (sgw_ring_full(&ss->fqr))
			lose(w, SGW_SLD_SEND_QUEUE_FULL, m);
		else
			ss->fq[sgw_ring_push(&ss->fqr)] = m;
		touch(w, s, ss, (uint32_t)si);
		return;
	}
	/* Datagrams go straight to the session: they wait behind no repair. */
	out = arq_out(w);
	if (out == NULL) {
		lose(w, SGW_SLD_DELIVER_FULL, m);
		touch(w, s, ss, (uint32_t)si);
		return;
	}
	m->port = SL_H_DATAGRAM;
	rc = sgw_arq_send(ss->arq, w->now_ns, 0, (uint64_t)(uintptr_t)m, len,
			  SGW_ARQ_SEND_DATAGRAM, out);
	if (rc == 0) {
		ss->c.pkts_sent_datagram++;
		ss->arq_pkts++;
	} else {
		lose(w, rc == -EMSGSIZE ? SGW_SLD_SEND_TOO_BIG :
		     rc == -ENOTCONN ? SGW_SLD_SEND_NOT_CONNECTED : SGW_SLD_SEND_OTHER, m);
	}
	run_actions(w, s, ss);
	touch(w, s, ss, (uint32_t)si);
}

/* --------------------------------------------------------------- receive */

static int32_t
sgw_sl_sess_of_frame(const struct sgw_dp *dp, const struct rte_mbuf *m, uint16_t l3_off)
{
	uint32_t id;
	void *data;

	if (rte_pktmbuf_data_len(m) < l3_off + 8u)
		return -1;
	memcpy(&id, rte_pktmbuf_mtod_offset(m, const uint8_t *, l3_off + 4u), sizeof(id));
	id = rte_be_to_cpu_32(id);
	if (rte_hash_lookup_data(SL(dp)->by_id, &id, &data) < 0)
		return -1;
	return (int32_t)(uintptr_t)data;
}

/* One received frame of session ss; consumes m. */
static void
rx_frame(struct sgw_worker *w, const struct sgw_snapshot *s, struct sgw_sl_sess *ss,
	 uint32_t si, struct rte_mbuf *m, uint16_t l3_off)
{
	struct sgw_arq_out *out = arq_out(w);
	struct sgw_satlink_hdr h;
	enum sgw_sld_ctr why;
	uint8_t *hdr, *body;
	int rc;

	if (out == NULL) {
		/* No room to hand back what it may deliver: the peer repeats it. */
		why = SGW_SLD_DELIVER_FULL;
		goto drop;
	}
	if (m->nb_segs > 1 && rte_pktmbuf_linearize(m) != 0) {
		why = SGW_SLD_RX_CHAINED;
		goto drop;
	}
	hdr = rte_pktmbuf_mtod_offset(m, uint8_t *, l3_off);
	rc = sgw_satlink_parse_hdr(hdr, rte_pktmbuf_data_len(m) - l3_off, &h);
	if (rc != SGW_SL_OK) {
		SLW(w)->bad_hdr[rc]++;
		why = SGW_SLD_RX_BAD_HEADER;
		goto drop;
	}
	body = hdr + SGW_SATLINK_HDR_LEN;
	if (ss->cc != NULL) {
		if (!(h.flags & SGW_SL_F_ENCRYPTED)) {
			sgw_slcrypto_refuse_clear(ss->cc);
			why = SGW_SLD_RX_CRYPTO;
			goto drop;
		}
		rc = sgw_slcrypto_open(ss->cc, hdr, SGW_SATLINK_HDR_LEN, body, h.payload_len,
				       body + SGW_SLC_NONCE_LEN);
		if (rc < 0) {
			why = SGW_SLD_RX_CRYPTO;
			goto drop;
		}
		h.payload_len = (uint16_t)rc;
		body += SGW_SLC_NONCE_LEN;
	} else if (h.flags & SGW_SL_F_ENCRYPTED) {
		why = SGW_SLD_RX_NO_KEY_HERE;
		goto drop;
	}
	ss->c.frames_rx++;
	if (h.type == SGW_SL_DATA) {
		uint16_t skip = (uint16_t)(body - rte_pktmbuf_mtod(m, uint8_t *));

		rte_pktmbuf_adj(m, skip);
		rte_pktmbuf_trim(m, (uint16_t)(rte_pktmbuf_data_len(m) - h.payload_len));
		m->port = SL(w->dp)->port_id;  /* a received fragment (see release()) */
		rc = sgw_arq_rx_data(ss->arq, w->now_ns, &h, (uint64_t)(uintptr_t)m, out);
		if (rc == SGW_ARQ_RX_DUP) {
			/* A copy of what the session has (k-fold retransmission): no loss. */
			SLW(w)->ctr[SGW_SLD_RX_DUPLICATE]++;
			SLW(w)->cons[SGW_SL_CONS_DUPS]++;
			rte_pktmbuf_free(m);
		} else if (rc != SGW_ARQ_RX_OK) {
			lose(w, SGW_SLD_RX_REFUSED, m);
		}
	} else {
		line_state(ss);
		rc = sgw_arq_rx_ctrl(ss->arq, w->now_ns, &h, body, h.payload_len, out);
		if (rc == SGW_ARQ_RX_OK) {
			SLW(w)->cons[SGW_SL_CONS_CTRL_READ]++;
			rte_pktmbuf_free(m);
		} else {
			lose(w, SGW_SLD_RX_REFUSED, m);
		}
	}
	/* Timers and pacing once per session and burst (sl_burst_done), actions now. */
	run_actions(w, s, ss);
	return;
drop:
	lose(w, why, m);
}

/*
 * Before hand-off: each satlink frame's session (runs of one session are
 * looked up once) and the worker that owns it.
 */
static void
sl_prepare(struct sgw_worker *w, const struct sgw_snapshot *s, struct rte_mbuf **m,
	   const uint16_t *idx, uint16_t n)
{
	const struct sgw_sl *sl = SL(w->dp);
	uint16_t j;

	for (j = 0; j < n; j++) {
		struct sgw_pkt_meta *pm = &w->pm[idx[j]];
		const struct sgw_pkt_meta *prev = j > 0 ? &w->pm[idx[j - 1]] : NULL;

		if (prev != NULL && sgw_sl_same_terminal(m[idx[j - 1]], prev->info.l3_off,
							 m[idx[j]], pm->info.l3_off))
			pm->obj = prev->obj;
		else
			pm->obj = sgw_sl_sess_of_frame(w->dp, m[idx[j]], pm->info.l3_off);
		pm->owner = (uint8_t)(pm->obj >= 0 ? sl->sess[pm->obj].owner : w->idx);
	}
}

/*
 * A terminal on a shared forward link (the hub's peer_mac broadcast, or a beam
 * that carries every terminal's frames) sees the other terminals' frames: a
 * well-formed header naming another terminal id is not for this end, and no
 * loss (rx_other_terminal, consumed). At a hub a terminal id it does not know
 * stays rx_no_session.
 */
static bool
other_terminal(const struct sgw_snapshot *s, const struct rte_mbuf *m, uint16_t l3_off)
{
	struct sgw_satlink_hdr h;

	if (s->pol.role != SGW_ROLE_TERMINAL || rte_pktmbuf_data_len(m) < l3_off)
		return false;
	return sgw_satlink_parse_hdr(rte_pktmbuf_mtod_offset(m, const uint8_t *, l3_off),
				     rte_pktmbuf_data_len(m) - l3_off, &h) == SGW_SL_OK &&
	       h.terminal_id != s->pol.satlink.terminal_id;
}

/* The satlink class of a burst: frames from the far end, to their sessions. */
static void
sl_burst(struct sgw_worker *w, const struct sgw_snapshot *s, struct rte_mbuf **m,
	 const uint16_t *idx, uint16_t n)
{
	struct sgw_sl *sl = SL(w->dp);
	uint16_t j;

	for (j = 0; j < n; j++) {
		uint16_t i = idx[j];
		const struct sgw_pkt_meta *pm = &w->pm[i];

		if (pm->pidx != sl->pidx) {
			lose(w, SGW_SLD_RX_WRONG_PORT, m[i]);
			continue;
		}
		if (pm->obj < 0 && other_terminal(s, m[i], pm->info.l3_off)) {
			SLW(w)->ctr[SGW_SLD_RX_OTHER_TERMINAL]++;
			SLW(w)->cons[SGW_SL_CONS_OTHER_TERMINAL]++;
			rte_pktmbuf_free(m[i]);
			continue;
		}
		if (pm->obj < 0 || sl->sess[pm->obj].owner != w->idx) {
			lose(w, SGW_SLD_RX_NO_SESSION, m[i]);
			continue;
		}
		/* Delivered packets go to the re-inject queue: the loop runs them. */
		rx_frame(w, s, &sl->sess[pm->obj], (uint32_t)pm->obj, m[i], pm->info.l3_off);
		touch(w, s, &sl->sess[pm->obj], (uint32_t)pm->obj);
	}
}

/* ------------------------------------------------------------- per loop */

static void
sl_loop(struct sgw_worker *w, const struct sgw_snapshot *s)
{
	struct sgw_sl *sl = SL(w->dp);
	uint32_t i;

	sl_burst_done(w, s);  /* nothing left over, normally */
	if (!SLW(w)->started) {
		/* First loop: every session of ours says HELLO and arms its timer. */
		SLW(w)->started = true;
		for (i = 0; i < sl->n_sess; i++)
			if (sl->sess[i].owner == w->idx) {
				struct sgw_arq_out *out = arq_out(w);

				if (out != NULL)
					sgw_arq_poll(sl->sess[i].arq, w->now_ns, out);
				service(w, s, &sl->sess[i], i);
			}
	}
	if (w->now_ns - SLW(w)->pub_ns >= SL_PUBLISH_NS) {
		SLW(w)->pub_ns = w->now_ns;
		for (i = 0; i < sl->n_sess; i++)
			if (sl->sess[i].owner == w->idx)
				publish(&sl->sess[i]);
	}
}

/* ---------------------------------------------------------------- stop */

/*
 * Everything the sessions hold is freed unsent and counted drops.shutdown on
 * the owning worker: built frames in the pacers, packets in the feed queues,
 * and what the ARQs hold (sent packets not yet acknowledged or queued behind
 * the window, received fragments not yet delivered). The published counters
 * keep what was held at the stop.
 */
static void
sl_drain(struct sgw_dp *dp)
{
	struct sgw_sl *sl = SL(dp);
	uint32_t i, k;

	if (sl == NULL)
		return;
	for (i = 0; i < sl->n_sess; i++) {
		struct sgw_sl_sess *ss = &sl->sess[i];
		struct sgw_worker *w = dp->workers[ss->owner];
		struct sgw_arq_out *out = &SLW(w)->out;
		int done;

		publish(ss);
		w->c.drop[SGW_DROP_SHUTDOWN] += sgw_ring_count(&ss->pqr) +
						  sgw_ring_count(&ss->fqr);
		while (!sgw_ring_empty(&ss->pqr))
			rte_pktmbuf_free(ss->pq[sgw_ring_pop(&ss->pqr)]);
		while (!sgw_ring_empty(&ss->fqr))
			rte_pktmbuf_free(ss->fq[sgw_ring_pop(&ss->fqr)]);
		out->cap = SLW(w)->act_cap;  /* nothing is re-injected any more */
		do {
			out->n = 0;
			done = sgw_arq_drain(ss->arq, out);
			for (k = 0; k < out->n; k++) {
				struct rte_mbuf *m;

				if (out->act[k].type != SGW_ARQ_ACT_RELEASE &&
				    out->act[k].type != SGW_ARQ_ACT_DELIVER)
					continue;
				m = (struct rte_mbuf *)(uintptr_t)out->act[k].handle;
				if (m->port == SL_H_RELIABLE || m->port == SL_H_DATAGRAM)
					ss->arq_pkts--;
				rte_pktmbuf_free(m);
				w->c.drop[SGW_DROP_SHUTDOWN]++;
			}
		} while (!done);
		out->n = 0;
	}
}

uint64_t
sgw_sl_held(const struct sgw_dp *dp)
{
	const struct sgw_sl *sl = SL(dp);
	uint64_t n = 0;
	uint32_t i;

	if (sl == NULL)
		return 0;
	for (i = 0; i < sl->n_sess; i++) {
		const struct sgw_sl_sess *ss = &sl->sess[i];
		struct sgw_arq_stats st;

		if (ss->arq == NULL)
			continue;
		sgw_arq_get_stats(ss->arq, &st);
		n += (uint64_t)sgw_ring_count(&ss->pqr) + sgw_ring_count(&ss->fqr) + ss->arq_pkts + st.rx_held + st.dgram_held;
	}
	return n;
}

/* ------------------------------------------------------------- reporting */

static const char *const state_names[] = {
	[SGW_ARQ_CONNECTING] = "connecting",
	[SGW_ARQ_UP] = "up",
	[SGW_ARQ_DOWN] = "down",
	[SGW_ARQ_CLOSED] = "closed",
};

static const char *
sgw_sl_state_name(int st)
{
	return st >= 0 && st < (int)RTE_DIM(state_names) ? state_names[st] : "unknown";
}

static void
sgw_sl_session_fields(const struct sgw_sl_pub *p, sgw_kv_fn fn, void *ctx)
{
	const struct sgw_arq_stats *a = &p->arq;
	const struct sgw_slcrypto_stats *c = &p->crypto;
	int r;

#define F(name, v) fn(ctx, name, (uint64_t)(v))
	F("peer_epoch", p->peer_epoch);
	F("send_window", p->send_window);
	F("pkts_sent_reliable", p->pkts_sent_reliable);
	F("pkts_sent_datagram", p->pkts_sent_datagram);
	F("pkts_delivered", p->pkts_delivered);
	F("bytes_delivered", p->bytes_delivered);
	F("frames_tx_data", p->frames_tx_data);
	F("frames_tx_ctrl", p->frames_tx_ctrl);
	F("frames_rx", p->frames_rx);
	F("pacer_held", p->pacer_held);
	F("pacer_low", p->pacer_low);
	F("queue_held", p->queue_held);
	F("tx_frames", a->tx_frames);
	F("tx_retx", a->tx_retx);
	F("retx_copies_saved", a->retx_copies_saved);
	F("frame_size_now", a->frag_size_now);
	F("frame_size_changes", a->frag_changes);
	F("frame_size_probes", a->frag_probes);
	F("frame_size_decisions", a->frag_decisions);
	F("ber_est_ppb", a->ber_est_ppb);
	F("tx_dgram_frames", a->tx_dgram_frames);
	F("tx_bytes", a->tx_bytes);
	F("loss_status", a->loss_status);
	F("loss_timeout", a->loss_timeout);
	F("pkts_queued", a->pkts_queued);
	F("pkts_acked", a->pkts_acked);
	F("dgrams_sent", a->dgrams_sent);
	F("window_full", a->window_full);
	F("send_refused", a->send_refused);
	F("rx_frames", a->rx_frames);
	F("rx_bytes", a->rx_bytes);
	for (r = 1; r < SGW_ARQ_RX__COUNT; r++) {
		char k[48];

		snprintf(k, sizeof(k), "rx_refused_%s", sgw_arq_rx_reason_name(r));
		F(k, a->rx_refused[r]);
	}
	F("arq_pkts_delivered", a->pkts_delivered);
	F("dgrams_delivered", a->dgrams_delivered);
	F("dgram_expired", a->dgram_expired);
	F("reasm_errors", a->reasm_errors);
	F("status_tx", a->status_tx);
	F("keepalive_tx", a->keepalive_tx);
	F("status_rx", a->status_rx);
	F("hello_tx", a->hello_tx);
	F("hello_ack_tx", a->hello_ack_tx);
	F("hello_rx", a->hello_rx);
	F("link_ups", a->link_ups);
	F("link_downs", a->link_downs);
	F("peer_restarts", a->peer_restarts);
	F("peer_lost", a->peer_lost);
	F("hello_refused_live", a->hello_refused_live);
	F("status_behind", a->status_behind);
	F("rtt_samples", a->rtt_samples);
	F("srtt_us", a->srtt_ns / 1000u);
	F("rto_us", a->rto_ns / 1000u);
	F("tx_outstanding", a->tx_outstanding);
	F("rx_held", a->rx_held);
	F("crypto_sealed", c->sealed);
	F("crypto_opened", c->opened);
	for (r = 1; r < SGW_SLC__NUM; r++) {
		char k[48];

		snprintf(k, sizeof(k), "crypto_drop_%s", sgw_slcrypto_reason_name(r));
		F(k, c->rx_dropped[r]);
	}
#undef F
}

static void
sgw_sl_worker_fields(const struct sgw_dp *dp, sgw_kv_fn fn, void *ctx)
{
	uint64_t v[SGW_SLD__COUNT] = {0}, bad[SGW_SL__REASON_COUNT] = {0};
	uint32_t w;
	int i;

	for (w = 0; w < dp->n_workers; w++) {
		const struct sgw_sl_worker *x;

		if (dp->workers[w] == NULL)
			continue;
		x = SLW(dp->workers[w]);
		for (i = 0; i < SGW_SLD__COUNT; i++)
			v[i] += __atomic_load_n(&x->ctr[i], __ATOMIC_RELAXED);
		for (i = 1; i < SGW_SL__REASON_COUNT; i++)
			bad[i] += __atomic_load_n(&x->bad_hdr[i], __ATOMIC_RELAXED);
	}
	for (i = 0; i < SGW_SLD__COUNT; i++)
		fn(ctx, ctr_names[i], v[i]);
	for (i = 1; i < SGW_SL__REASON_COUNT; i++) {
		char k[48];

		snprintf(k, sizeof(k), "rx_bad_%s", sgw_satlink_reason_name(i));
		fn(ctx, k, bad[i]);
	}
}

struct json_ctx {
	FILE *f;
	int n;
};

static void
json_kv(void *arg, const char *k, uint64_t v)
{
	struct json_ctx *j = arg;

	fprintf(j->f, "%s\"%s\": %" PRIu64, j->n++ ? ", " : "", k, v);
}

static void
sgw_sl_write_json(const struct sgw_dp *dp, FILE *f)
{
	const struct sgw_sl *sl = SL(dp);
	struct json_ctx j = {.f = f};
	uint32_t i;

	fprintf(f, "  \"satlink\": {\"epoch\": %u, \"protected\": %s, \"tx_window\": %u, "
		"\"rx_window\": %u,\n    \"counters\": {", sl->epoch, sl->keyed ? "true" : "false",
		sl->tx_window, sl->rx_window);
	sgw_sl_worker_fields(dp, json_kv, &j);
	fprintf(f, "},\n    \"sessions\": [");
	for (i = 0; i < sl->n_sess; i++) {
		struct sgw_sl_pub p;

		sgw_sl_read(dp, i, &p);
		j.n = 0;
		fprintf(f, "%s\n      {\"name\": \"%s\", \"terminal_id\": %u, \"state\": \"%s\", ",
			i ? "," : "", sl->sess[i].name, sl->sess[i].term_id,
			sgw_sl_state_name(p.state));
		sgw_sl_session_fields(&p, json_kv, &j);
		fprintf(f, "}");
	}
	fprintf(f, "\n    ]\n  },\n");
}

static void
sgw_sl_print_summary(const struct sgw_dp *dp, FILE *f)
{
	const struct sgw_sl *sl = SL(dp);
	uint32_t i;

	for (i = 0; i < sl->n_sess; i++) {
		struct sgw_sl_pub p;

		sgw_sl_read(dp, i, &p);
		fprintf(f, "  satlink %-10s %s: sent %" PRIu64 " pkts (%" PRIu64 " frames, %" PRIu64
			" retransmitted), delivered %" PRIu64 " pkts, %" PRIu64 " link downs%s\n",
			sl->sess[i].name, sgw_sl_state_name(p.state),
			p.pkts_sent_reliable + p.pkts_sent_datagram,
			p.arq.tx_frames + p.arq.tx_dgram_frames, p.arq.tx_retx, p.pkts_delivered,
			p.arq.link_downs, sl->keyed ? ", AES-GCM" : "");
	}
}

/* ------------------------------------------------------------- telemetry */

/* /satgw/satlink [FIRST]: the stage's counters and SATLINK_PAGE sessions from FIRST. */
#define SATLINK_PAGE 4

static void
tel_kv(void *ctx, const char *k, uint64_t v)
{
	rte_tel_data_add_dict_u64(ctx, k, v);
}

static int
sl_telemetry(const struct sgw_dp *dp, const char *params, struct rte_tel_data *d)
{
	const struct sgw_sl *sl = SL(dp);
	struct rte_tel_data *cd;
	uint32_t first = 0, i;

	if (sgw_tel_parse_first(params, &first) != 0)
		return -1;
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "epoch", sl->epoch);
	rte_tel_data_add_dict_u64(d, "protected", sl->keyed);
	rte_tel_data_add_dict_u64(d, "total", sl->n_sess);
	rte_tel_data_add_dict_u64(d, "first", first);
	cd = rte_tel_data_alloc();
	if (cd != NULL) {
		rte_tel_data_start_dict(cd);
		sgw_sl_worker_fields(dp, tel_kv, cd);
		sgw_tel_add_container(d, "counters", cd);
	}
	for (i = first; i < sl->n_sess && i < first + SATLINK_PAGE; i++) {
		struct rte_tel_data *sd = rte_tel_data_alloc();
		struct sgw_sl_pub p;
		char key[16];

		if (sd == NULL)
			break;
		sgw_sl_read(dp, i, &p);
		rte_tel_data_start_dict(sd);
		rte_tel_data_add_dict_string(sd, "name", sl->sess[i].name);
		rte_tel_data_add_dict_u64(sd, "terminal_id", sl->sess[i].term_id);
		rte_tel_data_add_dict_string(sd, "state", sgw_sl_state_name(p.state));
		sgw_sl_session_fields(&p, tel_kv, sd);
		snprintf(key, sizeof(key), "%u", i);
		sgw_tel_add_container(d, key, sd);
	}
	if (i < sl->n_sess)
		rte_tel_data_add_dict_u64(d, "next", i);
	return 0;
}

/* ------------------------------------------------------------- snapshots */

/*
 * Per policy: each terminal's session (the snapshot's terminal indices may
 * change on reload, the sessions do not), each session's terminal (the
 * inverse: a split acceptor finds the terminal of an OPEN in O(1), not by a
 * scan of every terminal per new connection), and at a terminal, its own
 * terminal as the default for IP traffic that matches no terminal prefix.
 * One array: [n_terminals: session of terminal t] [n_sess] [n_sess:
 * terminal of session i, -1 when the policy has none for it].
 */
static int
sl_snapshot(struct sgw_dp *dp, struct sgw_snapshot *s, char *err, size_t errlen)
{
	const struct sgw_sl *sl = SL(dp);
	const uint32_t nt = s->pol.n_terminals;
	int32_t *of_term, *of_sess;
	uint32_t t;

	if (nt == 0)
		return 0;
	of_term = rte_malloc("sgw_sl_of_term", sizeof(*of_term) * (nt + 1u + sl->n_sess), 0);
	if (of_term == NULL) {
		snprintf(err, errlen, "out of memory for the satlink session map");
		return -1;
	}
	of_term[nt] = (int32_t)sl->n_sess;
	of_sess = of_term + nt + 1;
	for (t = 0; t < sl->n_sess; t++)
		of_sess[t] = -1;
	for (t = 0; t < nt; t++) {
		void *d;

		of_term[t] = rte_hash_lookup_data(sl->by_id, &s->pol.terminals[t].id, &d) < 0 ?
			-1 : (int32_t)(uintptr_t)d;
		if (of_term[t] >= 0 && (uint32_t)of_term[t] < sl->n_sess)
			of_sess[of_term[t]] = (int32_t)t;
		if (s->pol.role == SGW_ROLE_TERMINAL &&
		    s->pol.terminals[t].id == s->pol.satlink.terminal_id)
			s->default_term = (int32_t)t;
	}
	s->sdata[SGW_STAGE_SATLINK] = of_term;
	return 0;
}

static void
sl_snapshot_free(struct sgw_snapshot *s)
{
	rte_free(s->sdata[SGW_STAGE_SATLINK]);
	s->sdata[SGW_STAGE_SATLINK] = NULL;
}

/* The stage's accounting terms, summed over the workers. */
static void
sl_account(const struct sgw_dp *dp, uint64_t *orig, uint64_t *cons)
{
	uint32_t i, k;

	for (i = 0; i < dp->n_workers; i++) {
		const struct sgw_sl_worker *x;

		if (dp->workers[i] == NULL || dp->workers[i]->sctx[SGW_STAGE_SATLINK] == NULL)
			continue;
		x = SLW(dp->workers[i]);
		for (k = 0; k < SGW_SL_ORIG__COUNT; k++)
			orig[k] += __atomic_load_n(&x->orig[k], __ATOMIC_RELAXED);
		for (k = 0; k < SGW_SL_CONS__COUNT; k++)
			cons[k] += __atomic_load_n(&x->cons[k], __ATOMIC_RELAXED);
	}
}

/* ------------------------------------------------ channels other than 0 */

int32_t
sgw_sl_sess_of_term(const struct sgw_snapshot *s, int32_t term)
{
	const int32_t *sess_of_term = s->sdata[SGW_STAGE_SATLINK];

	if (sess_of_term == NULL || term < 0 || (uint32_t)term >= s->pol.n_terminals)
		return -1;
	return sess_of_term[term];
}

int32_t
sgw_sl_term_of_sess(const struct sgw_snapshot *s, uint32_t sess)
{
	const int32_t *map = s->sdata[SGW_STAGE_SATLINK];
	const uint32_t nt = s->pol.n_terminals;

	if (map == NULL || sess >= (uint32_t)map[nt])
		return -1;
	return map[nt + 1u + sess];
}

uint32_t
sgw_sl_channel_room(const struct sgw_worker *w, uint32_t sess)
{
	const struct sgw_sl *sl = SL(w->dp);
	const struct sgw_sl_sess *ss;

	if (sl == NULL || sess >= sl->n_sess)
		return 0;
	ss = &sl->sess[sess];
	if (ss->owner != w->idx)
		return 0;
	return sgw_ring_room(&ss->fqr);
}

uint32_t
sgw_sl_channel_cap(const struct sgw_worker *w, uint32_t sess)
{
	const struct sgw_sl *sl = SL(w->dp);

	if (sl == NULL || sess >= sl->n_sess || sl->sess[sess].owner != w->idx)
		return 0;
	return sl->sess[sess].fqr.cap;
}

uint32_t
sgw_sl_channel_msgs_in(const struct sgw_worker *w, uint32_t sess, uint64_t ns,
		       uint32_t msg_bytes)
{
	const struct sgw_sl *sl = SL(w->dp);
	uint64_t bits;

	if (sl == NULL || sess >= sl->n_sess || sl->sess[sess].owner != w->idx || msg_bytes == 0)
		return 0;
	/* ns_per_kbit = 1e15 / rate: bits in ns = ns * 1e6 / ns_per_kbit (ns < 2^44). */
	bits = RTE_MIN(ns, (uint64_t)1 << 44) * 1000000u / sl->sess[sess].ns_per_kbit;
	return (uint32_t)RTE_MIN(bits / 8u / msg_bytes, (uint64_t)UINT32_MAX);
}

int
sgw_sl_send_channel(struct sgw_worker *w, const struct sgw_snapshot *s, uint32_t sess,
		    uint16_t channel, struct rte_mbuf *m)
{
	struct sgw_sl *sl = SL(w->dp);
	struct sgw_sl_sess *ss;

	if (sl == NULL || sess >= sl->n_sess || channel == 0 || m == NULL)
		return -1;
	ss = &sl->sess[sess];
	if (ss->owner != w->idx || sgw_ring_full(&ss->fqr))
		return -1;
	/* pace() reads the channel back when it hands the message to the ARQ. */
	m->port = SL_H_CHANNEL;
	m->vlan_tci = channel;
	ss->fq[sgw_ring_push(&ss->fqr)] = m;
	touch(w, s, ss, sess);
	return 0;
}

const struct sgw_stage_ops sgw_stage_satlink = {
	.name = "satlink",
	.classes = SGW_CLASS_BIT(SGW_CLASS_SATLINK),
	.init = sl_init,
	.snapshot = sl_snapshot,
	.snapshot_free = sl_snapshot_free,
	.drain = sl_drain,
	.fini = sl_fini,
	.held = sgw_sl_held,
	.drop_names = sl_drop_names,
	.n_drops = RTE_DIM(sl_drop_names),
	.orig_names = sl_orig_names,
	.cons_names = sl_cons_names,
	.n_orig = SGW_SL_ORIG__COUNT,
	.n_cons = SGW_SL_CONS__COUNT,
	.account = sl_account,
	.prepare = sl_prepare,
	.burst = sl_burst,
	.action = sl_action,
	.timer = sl_timer,
	.burst_done = sl_burst_done,
	.loop = sl_loop,
	.write_json = sgw_sl_write_json,
	.print_summary = sgw_sl_print_summary,
	.tel_cmd = "/satgw/satlink",
	.tel_help = "satgw satlink: stage counters and sessions. Parameter: first session index",
	.telemetry = sl_telemetry,
};

/* ------------------------------------------------- read-only accessors */

uint64_t
sgw_sl_queued_bytes(const struct sgw_dp *dp, uint32_t sess)
{
	const struct sgw_sl *sl = SL(dp);
	const struct sgw_sl_sess *ss;
	uint64_t b = 0;
	uint32_t k;

	if (sl == NULL || sess >= sl->n_sess)
		return 0;
	ss = &sl->sess[sess];
	for (k = 0; k < sgw_ring_count(&ss->fqr); k++)
		b += rte_pktmbuf_pkt_len(ss->fq[sgw_ring_at(&ss->fqr, k)]);
	for (k = 0; k < sgw_ring_count(&ss->pqr); k++)
		b += rte_pktmbuf_pkt_len(ss->pq[sgw_ring_at(&ss->pqr, k)]);
	return b;
}

void
sgw_sl_tx_totals(const struct sgw_dp *dp, uint32_t sess, struct sgw_arq_tx_totals *t)
{
	const struct sgw_sl *sl = SL(dp);

	memset(t, 0, sizeof(*t));
	if (sl != NULL && sess < sl->n_sess && sl->sess[sess].arq != NULL)
		sgw_arq_get_tx_totals(sl->sess[sess].arq, t);
}
