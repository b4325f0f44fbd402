/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The XCP gateway stage (see xcp.h): lib/sgw_xcp.h's router controller at
 * this end's egress toward the satellite, on every worker.
 *
 * Why each choice (docs/xcp.md, "The dataplane stage"):
 * - The queue XCP controls is the bottleneck's, satlink's feed queues and
 *   pacers (paced at the link's rate). The stage claims the satlink port
 *   after satlink did (its row is later in the table) and runs before
 *   satlink's action on every packet that leaves by it: XCP packets are
 *   parsed, accumulated and their H_feedback lowered, the rest counted as
 *   load (sgw_xcp_on_other), then satlink's action carries the packet as it
 *   would have. So the controller sees all input bytes of the link, XCP or
 *   not, at the moment they join its queue.
 * - The class burst (packets of class xcp) is the stateless stage's rule
 *   lookup and emit: XCP packets that do not leave toward the satellite
 *   (returning ACKs at a hub) pass untouched.
 * - xcp.scope session (the default with satlink): each satlink session's
 *   pacer is a bottleneck of its own (paced at its share of the carrier),
 *   so each session has its own controller (struct sgw_xs_sess). The
 *   terminal is the unit of sharding: every packet toward a session is on
 *   the session's owner, which runs the controller alone (accumulator,
 *   parameters, queue samples, interval), nothing shared between workers.
 * - xcp.scope carrier: one controller for the port, and several workers
 *   carry that link (each owns the sessions of its terminals):
 *   per-worker accumulators (relaxed stores, no locked instruction), one
 *   aggregation per control interval by worker 0 in its loop hook (it needs
 *   no packet and runs every loop, so the interval ends on time), parameters
 *   to each worker through its own seqlock, each worker refreshing its copy
 *   once per loop. The queue: each worker samples its own sessions' bytes
 *   (only the owner may look at them) every SGW_XS_QSAMPLE_NS and stores the
 *   sum in its slot; worker 0 adds the slots up into the persistent-queue
 *   estimator, which stays single-writer.
 * - The control interval is the bytes-weighted mean H_rtt (lib), never capped
 *   below rtt_max_ms (>= 1 s: no cap under a GEO round trip).
 * - Without satlink the stage owns the satellite port and its queue: an
 *   egress shaper sending at the configured capacity (a FIFO of packets on
 *   worker 0, the only worker then: a shaper shared by several workers would
 *   need a shared queue or a rate split, neither built).
 * - No checksum covers H_feedback (docs/wire-formats.md): lowering it changes
 *   4 bytes no IPv4 header, transport or ESP checksum covers, so nothing is
 *   recomputed and nothing past the XCP header is read or written (ESP
 *   behind it stays byte for byte as it came).
 * - Separate queues (xcp.separate_queues, the shaper only; lib/sgw_xcp_wq.h):
 *   packets the controller steers (XCP with a good header, legacy flows'
 *   data) join the XCP class's queue, the rest the other class's; the
 *   shaper serves the two by a weight moved each control interval toward
 *   the XCP class's share of the flows (equal per-flow throughput, Katabi
 *   et al. 2002, "XCP and TCP"), and the controller sees only its class: its
 *   input, its queue, and the capacity the class gets (max(w C, C - the
 *   other class's rate)). Without them one queue holds both and plain TCP
 *   filling it drives the XCP flows down (docs/xcp.md, scenario (c)).
 * - Legacy mode (xcp.legacy, lib/sgw_xcp_legacy.h; docs/xcp.md, "Legacy mode
 *   in the stage"): plain TCP leaving toward the satellite is given to the
 *   legacy table in the action (window and RTT estimated, feedback from the
 *   controller as if the flow had sent H_cwnd and H_rtt), and the stage takes
 *   class tcp to see what comes back from the satellite side: those packets'
 *   window is clamped to the flow's share (never retracting a right edge,
 *   incremental TCP checksum) and the burst goes on to the flow stage as it
 *   came, the way lift.c notes esp. The terminal is the unit of sharding, so
 *   both directions of a terminal's flows are on its worker: one table per
 *   worker, no sharing. TCP inside ESP is not visible: load only.
 */
#include <inttypes.h>
#include <string.h>

#include <rte_malloc.h>
#include <rte_mbuf.h>

#include "emit.h"
#include "satlink.h"
#include "seqlock.h"
#include "sgw_dp.h"
#include "sgw_satlink.h"
#include "sgw_slcrypto.h"
#include "stage.h"
#include "tx.h"
#include "xcp.h"

/*
 * Line time a late loop may catch up at once: 5 ms (5.6 kB at 9 Mbit/s). With
 * 1 ms the shaper lost up to 6% of its rate on a loaded 2-core host whose loops
 * came several ms late (measured: two backlogged classes sent 8.4 of 9 Mbit/s).
 */
#define XS_SHAPER_CREDIT_NS 5000000ull

#define XS(dp) sgw_xs_of(dp)
#define XSW(w) sgw_xs_worker_of(w)

static const char *const xs_ctr_names[SGW_XS__COUNT] = {
	[SGW_XS_XCP_SEEN] = "xcp_seen",
	[SGW_XS_XCP_LINK] = "xcp_to_link",
	[SGW_XS_OTHER_LINK] = "other_to_link",
	[SGW_XS_LOWERED] = "feedback_lowered",
	[SGW_XS_BAD] = "bad_header",
	[SGW_XS_CHAINED] = "header_not_in_first_segment",
	[SGW_XS_SHAPED] = "shaper_sent",
	[SGW_XS_LEG_DATA] = "legacy_data",
	[SGW_XS_LEG_LOAD] = "legacy_data_load_only",
	[SGW_XS_LEG_ACKS] = "legacy_acks_seen",
	[SGW_XS_LEG_CLAMPED] = "legacy_acks_clamped",
	[SGW_XS_LEG_CHAINED] = "legacy_chained",
	[SGW_XS_LEG_PURE_ACK] = "legacy_pure_acks_load",
	[SGW_XS_QX_IN] = "q_xcp_in",
	[SGW_XS_QO_IN] = "q_other_in",
	[SGW_XS_QX_SENT] = "q_xcp_sent",
	[SGW_XS_QO_SENT] = "q_other_sent",
	[SGW_XS_QX_SENT_BYTES] = "q_xcp_sent_bytes",
	[SGW_XS_QO_SENT_BYTES] = "q_other_sent_bytes",
	[SGW_XS_QX_DROP] = "q_xcp_drops",
	[SGW_XS_QO_DROP] = "q_other_drops",
	[SGW_XS_NO_SESSION] = "no_session",
};

/* The stage's own drop reasons (drops.*, from sgw_stage_drop_base(SGW_STAGE_XCP)). */
enum { XS_DROP_SHAPER_FULL = 0, XS_DROP_SHAPER_OTHER_FULL };
static const char *const xs_drop_names[] = { "xcp_shaper_full", "xcp_shaper_other_full" };

const char *
sgw_xs_ctr_name(enum sgw_xs_ctr c)
{
	return (unsigned int)c < SGW_XS__COUNT ? xs_ctr_names[c] : "?";
}

/* The controller's constants from a policy. */
static void
conf_of(const struct sgw_policy *pol, struct sgw_xcp_conf *c)
{
	sgw_xcp_conf_default(c);
	c->alpha = pol->xcp.alpha;
	c->beta = pol->xcp.beta;
	c->gamma = pol->xcp.gamma;
	c->d_min_ns = (uint64_t)pol->xcp.interval_min_us * 1000u;
	c->d_init_ns = (uint64_t)pol->xcp.interval_init_ms * 1000000u;
	c->rtt_max_ns = (uint64_t)pol->xcp.rtt_max_ms * 1000000u;
}

/* The constants of the next interval from the running policy (the lib's if it refuses them). */
static void
conf_take(const struct sgw_policy *pol, struct sgw_xcp_conf *c)
{
	conf_of(pol, c);
	if (sgw_xcp_conf_check(c) != 0)
		sgw_xcp_conf_default(c);
}

/* The share's constants between the two classes (separate queues). */
static void
wq_conf_of(const struct sgw_policy *pol, struct sgw_xcpq_conf *c)
{
	sgw_xcpq_conf_default(c);
	c->gain = pol->xcp.queue_weight_gain;
	c->w_min = pol->xcp.queue_weight_min;
	if (sgw_xcpq_conf_check(c) != 0)
		sgw_xcpq_conf_default(c);
}

/* New frames an interval must have carried before its IP share counts. */
#define XS_EFF_MIN_FRAMES 32u

/*
 * The share of the line a full frame of frame_size gives its IP packet
 * (satlink paces whole Ethernet frames): a controller's capacity until its
 * session has carried traffic (eff_carried).
 */
static double
frame_eff(const struct sgw_xs *xs)
{
	if (xs->frame_size == 0)  /* the egress shaper: capacity_bps is the capacity */
		return 1.0;
	return (double)xs->frame_size / (double)(xs->frame_size + xs->frame_ovh);
}

/* The efficiency sum of the configured frame size: startup, logs, the shaper. */
static double
eff_configured(const struct sgw_xs *xs)
{
	return frame_eff(xs) * (xs->per_sess ? 1.0 : (double)xs->n_sess);
}

/*
 * A controller's capacity in IP bytes/s: xcp.capacity_bps, else what its
 * queue may send: the pacing rate of this end (hub: forward, terminal:
 * return; each session is paced at it, the terminals' shares of one
 * carrier) times eff_sum, the share of a frame that is IP packet summed over
 * the sessions the controller watches (one for scope session, all for scope
 * carrier).
 */
static double
capacity_of(const struct sgw_xs *xs, const struct sgw_policy *pol, double eff_sum)
{
	uint64_t bps;

	if (pol->xcp.capacity_bps != 0 || xs->shaper)
		return (double)pol->xcp.capacity_bps / 8.0;
	bps = pol->role == SGW_ROLE_HUB ? pol->satlink.forward_rate_bps :
		pol->satlink.return_rate_bps;
	return (double)bps / 8.0 * eff_sum;
}

/*
 * The IP share of the line from what a session (or all of them) carried
 * between two totals: the new IP bytes (first transmissions, datagrams) over
 * their wire bytes with headers, plus one repair of the same size for every
 * frame found lost. So the capacity counts what the line can take of new
 * input: packets cut in several frames (a 1500-byte packet is two frames of
 * 750 at frame_size 1400: 0.954 of the line, not 1400 / 1436 = 0.975),
 * frames frame_size_adapt shortened, and the line time the repairs a bit
 * error rate forces take. Not the extra copies of a repair (retx_copies):
 * satlink sends those only on an idle line, and counted they would lower the
 * capacity of a link XCP keeps below it, which would then stay below it.
 * Averaged over intervals (half the last estimate, half the new one); an
 * interval with fewer than XS_EFF_MIN_FRAMES new frames keeps prev (an idle
 * link keeps its last estimate).
 */
static double
eff_carried(const struct sgw_xs *xs, const struct sgw_arq_tx_totals *a,
	    const struct sgw_arq_tx_totals *b, double prev)
{
	uint64_t nf = b->new_frames - a->new_frames;
	double nb = (double)(b->new_bytes - a->new_bytes), wire, now;

	if (nf < XS_EFF_MIN_FRAMES)
		return prev;
	wire = nb + (double)nf * (double)xs->frame_ovh;
	now = nb / (wire * (1.0 + (double)(b->lost - a->lost) / (double)nf));
	return (prev + now) / 2.0;
}

/* Scope carrier, worker 0: every worker's sessions' totals at its last sample. */
static void
carrier_totals(const struct sgw_xs *xs, struct sgw_arq_tx_totals *t)
{
	uint32_t i;

	memset(t, 0, sizeof(*t));
	for (i = 0; i < xs->n_workers; i++) {
		t->new_frames += __atomic_load_n(&xs->q[i].tx_new_frames, __ATOMIC_RELAXED);
		t->new_bytes += __atomic_load_n(&xs->q[i].tx_new_bytes, __ATOMIC_RELAXED);
		t->lost += __atomic_load_n(&xs->q[i].tx_lost, __ATOMIC_RELAXED);
	}
}

/* A session's controller takes new parameters: its budgets start whole. */
static void
sess_take(struct sgw_xs_sess *ss, const struct sgw_xcp_params *out)
{
	ss->par = *out;
	ss->par.pos_left = out->pos_budget;
	ss->par.neg_left = out->neg_budget;
}

/* A session's controller (re)started at now with its constants (ss->conf). */
static void
sess_start(struct sgw_xs_sess *ss, uint64_t now)
{
	struct sgw_xcp_params out;

	sgw_xcp_acc_read(&ss->acc, &ss->snap);
	sgw_xcp_ctl_init(&ss->conf, &ss->ctl, now, &ss->snap, 1, &out);
	sess_take(ss, &out);
	sgw_xcp_qest_init(&ss->qest);
}

static int
xs_init(struct sgw_dp *dp, const struct sgw_policy *pol)
{
	const struct sgw_sl *sl = sgw_sl_of(dp);
	struct sgw_xs *xs;
	uint32_t i;

	if (!pol->xcp.enabled || dp->bare_forward)
		return 0;  /* off: class xcp goes to the stateless stage */
	if ((!dp->stage_on[SGW_STAGE_SATLINK] || sl == NULL) &&
	    (pol->xcp.port < 0 || pol->xcp.capacity_bps == 0)) {
		/* The loader refuses this; a policy built some other way gets it here. */
		SGW_LOG(ERR, "xcp: without satlink the egress shaper needs a port and a "
			"capacity");
		return -1;
	}
	if (sl == NULL && dp->n_workers != 1) {
		SGW_LOG(ERR, "xcp: the egress shaper (xcp without satlink) runs on one worker, "
			"not %u", dp->n_workers);
		return -1;
	}
	if (dp->n_workers > SGW_XCP_MAX_WORKERS) {
		SGW_LOG(ERR, "xcp: at most %u workers", SGW_XCP_MAX_WORKERS);
		return -1;
	}
	xs = rte_zmalloc("sgw_xs", sizeof(*xs), RTE_CACHE_LINE_SIZE);
	if (xs == NULL)
		return -1;
	dp->sdata[SGW_STAGE_XCP] = xs;
	xs->proto = pol->xcp_proto;
	xs->n_workers = dp->n_workers;
	xs->legacy = pol->xcp.legacy;
	xs->legacy_max_flows = pol->xcp.legacy_max_flows;
	if (sl != NULL) {
		xs->pidx = sl->pidx;
		xs->n_sess = sl->n_sess;
		xs->per_sess = pol->xcp.scope == SGW_XCP_SCOPE_SESSION;
		xs->frame_size = pol->satlink.frame_size;
		xs->frame_ovh = RTE_ETHER_HDR_LEN + SGW_SATLINK_HDR_LEN +
			(sl->keyed ? SGW_SLC_OVERHEAD : 0);
	} else {
		xs->shaper = true;
		xs->pidx = pol->xcp.port;
		sgw_ring_init(&xs->fr, pol->xcp.shaper_queue);
		xs->fq = rte_zmalloc("sgw_xs_fq", sizeof(*xs->fq) * xs->fr.cap,
				     RTE_CACHE_LINE_SIZE);
		xs->fsz = rte_zmalloc("sgw_xs_fsz", sizeof(*xs->fsz) * xs->fr.cap,
				      RTE_CACHE_LINE_SIZE);
		if (xs->fq == NULL || xs->fsz == NULL)
			return -1;
		if (pol->xcp.separate_queues) {
			/* The other class's queue, as long as the XCP class's. */
			xs->twoq = true;
			sgw_ring_init(&xs->fro, pol->xcp.shaper_queue);
			xs->foq = rte_zmalloc("sgw_xs_foq", sizeof(*xs->foq) * xs->fro.cap,
					      RTE_CACHE_LINE_SIZE);
			xs->fosz = rte_zmalloc("sgw_xs_fosz", sizeof(*xs->fosz) * xs->fro.cap,
					       RTE_CACHE_LINE_SIZE);
			if (xs->foq == NULL || xs->fosz == NULL)
				return -1;
			wq_conf_of(pol, &xs->wqc);
			sgw_xcpq_init(&xs->wq, &xs->wqc, 0);
			xs->cap_x = capacity_of(xs, pol, eff_configured(xs)) * xs->wq.w;
		}
	}
	conf_of(pol, &xs->conf);
	if (sgw_xcp_conf_check(&xs->conf) != 0) {
		SGW_LOG(ERR, "xcp: the controller refuses the policy's constants");
		return -1;
	}
	/*
	 * The parameters before the first interval (no feedback, but rtt_max set:
	 * the accumulators clamp H_rtt with it) in every worker's copy and
	 * publication; worker 0 starts the controller again at its first loop.
	 */
	if (sgw_xcp_ctl_init(&xs->conf, &xs->ctl, 0, NULL, dp->n_workers, xs->out) != 0)
		return -1;
	if (xs->per_sess) {
		/* Each session's controller, as the carrier's above (its owner restarts it). */
		xs->ss = rte_zmalloc("sgw_xs_sess", sizeof(*xs->ss) * RTE_MAX(sl->n_sess, 1u),
				     RTE_CACHE_LINE_SIZE);
		if (xs->ss == NULL)
			return -1;
		for (i = 0; i < sl->n_sess; i++) {
			xs->ss[i].conf = xs->conf;
			sgw_xcp_acc_init(&xs->ss[i].acc);
			sess_start(&xs->ss[i], 0);
		}
	}
	for (i = 0; i < dp->n_workers; i++) {
		int socket = (int)rte_lcore_to_socket_id(dp->workers[i]->lcore);
		struct sgw_xs_worker *x;
		uint32_t k;

		x = rte_zmalloc_socket("sgw_xs_worker", sizeof(*x), RTE_CACHE_LINE_SIZE, socket);
		if (x == NULL)
			return -1;
		dp->workers[i]->sctx[SGW_STAGE_XCP] = x;
		if (xs->per_sess) {
			x->own = rte_zmalloc_socket("sgw_xs_own", sizeof(*x->own) *
						    RTE_MAX(sl->n_sess, 1u), 0, socket);
			if (x->own == NULL)
				return -1;
			for (k = 0; k < sl->n_sess; k++)
				if (sl->sess[k].owner == i)
					x->own[x->n_own++] = k;
		}
		sgw_xcp_acc_init(&xs->acc[i]);
		sgw_xcp_pub_init(&xs->pub[i], &xs->out[i]);
		x->local = xs->out[i];
		x->local.pos_left = xs->out[i].pos_budget;
		x->local.neg_left = xs->out[i].neg_budget;
		if (xs->legacy) {
			struct sgw_xcpl_conf lc;
			size_t ml = sgw_xcpl_mem_size(xs->legacy_max_flows);

			sgw_xcpl_conf_default(&lc);
			lc.xcp_proto = xs->proto;
			x->leg = rte_zmalloc_socket("sgw_xs_leg", sizeof(*x->leg),
						    RTE_CACHE_LINE_SIZE, socket);
			x->leg_mem = rte_zmalloc_socket("sgw_xs_legf", ml, RTE_CACHE_LINE_SIZE,
							socket);
			if (x->leg == NULL || x->leg_mem == NULL ||
			    sgw_xcpl_init(x->leg, &lc, x->leg_mem, ml) != 0) {
				SGW_LOG(ERR, "xcp: no memory for %u legacy flows on worker %u",
					xs->legacy_max_flows, i);
				return -1;
			}
		}
	}
	/* After satlink (a later row): packets leaving by its port come here first. */
	sgw_stage_own_port(dp, xs->pidx, SGW_STAGE_XCP);
	SGW_LOG(INFO, "xcp on port '%s' (protocol %u, %s): capacity %.0f bit/s%s, alpha %g "
		"beta %g gamma %g, interval %" PRIu64 " ms until H_rtt is seen, rtt_max %u ms",
		pol->ports[xs->pidx].name, xs->proto,
		xs->shaper ? "its own egress shaper" :
		xs->per_sess ? "one controller per satlink session" :
		"one controller for satlink's carrier",
		capacity_of(xs, pol, eff_configured(xs)) * 8.0,
		xs->per_sess ? " per session" : "",
		xs->conf.alpha, xs->conf.beta, xs->conf.gamma, xs->conf.d_init_ns / 1000000u,
		pol->xcp.rtt_max_ms);
	if (xs->twoq)
		SGW_LOG(INFO, "xcp: separate XCP and other queues of %u packets each, weight "
			"adapted each control interval (gain %g, floor %g)", xs->fr.cap,
			xs->wqc.gain, xs->wqc.w_min);
	if (xs->legacy)
		SGW_LOG(INFO, "xcp legacy mode: plain TCP's ACKs from the satellite side clamped "
			"to the flow's share, %u flows per worker",
			XSW(dp->workers[0])->leg->tab.n_flows);
	return 1;
}

static void
xs_fini(struct sgw_dp *dp)
{
	uint32_t i;

	for (i = 0; i < dp->n_workers; i++) {
		struct sgw_xs_worker *x;

		if (dp->workers[i] == NULL)
			continue;
		x = dp->workers[i]->sctx[SGW_STAGE_XCP];
		if (x != NULL) {
			rte_free(x->leg_mem);
			rte_free(x->leg);
			rte_free(x->own);
		}
		rte_free(dp->workers[i]->sctx[SGW_STAGE_XCP]);
		dp->workers[i]->sctx[SGW_STAGE_XCP] = NULL;
	}
	if (XS(dp) != NULL) {
		rte_free(XS(dp)->fq);
		rte_free(XS(dp)->fsz);
		rte_free(XS(dp)->foq);
		rte_free(XS(dp)->fosz);
		rte_free(XS(dp)->ss);
	}
	rte_free(dp->sdata[SGW_STAGE_XCP]);
	dp->sdata[SGW_STAGE_XCP] = NULL;
}

/* The workers have stopped: what the shaper holds is freed unsent (drops.shutdown). */
static void
xs_drain(struct sgw_dp *dp)
{
	struct sgw_xs *xs = XS(dp);

	if (xs == NULL || !xs->shaper)
		return;
	while (!sgw_ring_empty(&xs->fr)) {
		dp->workers[0]->c.drop[SGW_DROP_SHUTDOWN]++;
		rte_pktmbuf_free(xs->fq[sgw_ring_pop(&xs->fr)]);
	}
	xs->fbytes = 0;
	while (xs->twoq && !sgw_ring_empty(&xs->fro)) {
		dp->workers[0]->c.drop[SGW_DROP_SHUTDOWN]++;
		rte_pktmbuf_free(xs->foq[sgw_ring_pop(&xs->fro)]);
	}
	xs->fobytes = 0;
}

static uint64_t
xs_held(const struct sgw_dp *dp)
{
	const struct sgw_xs *xs = XS(dp);

	if (xs == NULL || !xs->shaper)
		return 0;
	return sgw_ring_count(&xs->fr) + (xs->twoq ? sgw_ring_count(&xs->fro) : 0);
}

/*
 * Separate queues: the two classes share the line by the weight
 * (lib/sgw_xcp_wq.h: the class with the smaller service / weight goes; an
 * empty class's share goes to the other).
 */
static void
shaper_pump2(struct sgw_worker *w, const struct sgw_snapshot *s, struct sgw_xs *xs,
	     uint64_t now, double ns_per_byte)
{
	struct sgw_xs_worker *x = XSW(w);

	while (xs->next_ns <= now) {
		int k = sgw_xcpq_pick(&xs->wq, !sgw_ring_empty(&xs->fr),
				      !sgw_ring_empty(&xs->fro));
		struct rte_mbuf *m;
		uint32_t i, sz;

		if (k < 0)
			break;
		if (k == SGW_XCPQ_X) {
			i = sgw_ring_pop(&xs->fr);
			m = xs->fq[i];
			sz = xs->fsz[i];
			xs->fbytes -= sz;
			x->ctr[SGW_XS_QX_SENT]++;
			x->ctr[SGW_XS_QX_SENT_BYTES] += sz;
		} else {
			i = sgw_ring_pop(&xs->fro);
			m = xs->foq[i];
			sz = xs->fosz[i];
			xs->fobytes -= sz;
			x->ctr[SGW_XS_QO_SENT]++;
			x->ctr[SGW_XS_QO_SENT_BYTES] += sz;
		}
		sgw_xcpq_sent(&xs->wq, (unsigned int)k, sz);
		xs->next_ns += (uint64_t)((double)sz * ns_per_byte + 0.5);
		x->ctr[SGW_XS_SHAPED]++;
		sgw_tx(w, (uint16_t)xs->pidx, m, s->pol.workers.burst);
	}
}

/* Send what the shaper may send by now, at the capacity (worker 0). */
static void
shaper_pump(struct sgw_worker *w, const struct sgw_snapshot *s, struct sgw_xs *xs)
{
	uint64_t now = w->now_ns;
	double ns_per_byte = 1e9 / capacity_of(xs, &s->pol, eff_configured(xs));

	if (xs->next_ns + XS_SHAPER_CREDIT_NS < now)
		xs->next_ns = now - XS_SHAPER_CREDIT_NS;
	if (xs->twoq) {
		shaper_pump2(w, s, xs, now, ns_per_byte);
		return;
	}
	while (!sgw_ring_empty(&xs->fr) && xs->next_ns <= now) {
		uint32_t k = sgw_ring_pop(&xs->fr);

		xs->fbytes -= xs->fsz[k];
		xs->next_ns += (uint64_t)((double)xs->fsz[k] * ns_per_byte + 0.5);
		XSW(w)->ctr[SGW_XS_SHAPED]++;
		sgw_tx(w, (uint16_t)xs->pidx, xs->fq[k], s->pol.workers.burst);
	}
}

/*
 * enabled, the protocol number, legacy mode (legacy, legacy_max_flows: the
 * tables are allocated at startup) and the shaper's port and queue are fixed at
 * startup: a reload that turns the stage off or changes them is refused (one
 * that would turn it on is refused by the control thread's restart check, since
 * the stage table calls only stages that are on).
 */
static int
xs_snapshot(struct sgw_dp *dp, struct sgw_snapshot *s, char *err, size_t errlen)
{
	const struct sgw_xs *xs = XS(dp);

	if (!s->pol.xcp.enabled || (xs != NULL && s->pol.xcp_proto != xs->proto)) {
		snprintf(err, errlen, "xcp: 'enabled' and the XCP protocol number need a restart");
		return -1;
	}
	if (xs != NULL && !xs->shaper &&
	    (s->pol.xcp.scope == SGW_XCP_SCOPE_SESSION) != xs->per_sess) {
		snprintf(err, errlen, "xcp: 'scope' needs a restart");
		return -1;
	}
	if (xs != NULL && (s->pol.xcp.legacy != xs->legacy ||
			   (xs->legacy && s->pol.xcp.legacy_max_flows != xs->legacy_max_flows))) {
		snprintf(err, errlen, "xcp: 'legacy' and 'legacy_max_flows' need a restart");
		return -1;
	}
	if (xs != NULL && xs->shaper &&
	    (s->pol.xcp.port != xs->pidx || s->pol.xcp.shaper_queue != xs->fr.cap ||
	     s->pol.satlink.enabled || s->pol.xcp.separate_queues != xs->twoq)) {
		snprintf(err, errlen, "xcp: the shaper's 'port', 'shaper_queue' and "
			 "'separate_queues' need a restart");
		return -1;
	}
	return 0;
}

/*
 * The IP packet of m for the legacy table: its first segment must hold all of
 * it (the lib checks lengths against the IP header). NULL otherwise (counted).
 */
static inline uint8_t *
legacy_ip(struct sgw_xs_worker *x, struct rte_mbuf *m, const struct sgw_pkt_info *pi)
{
	if (unlikely((uint32_t)pi->l3_off + pi->l3_len > rte_pktmbuf_data_len(m))) {
		x->ctr[SGW_XS_LEG_CHAINED]++;
		return NULL;
	}
	return rte_pktmbuf_mtod_offset(m, uint8_t *, pi->l3_off);
}

/* A TCP segment that carries data, SYN, FIN or RST (not a pure ACK). */
static inline bool
legacy_segment(const struct sgw_pkt_info *pi)
{
	return (pi->tcp_flags & (SGW_XCPA_TH_SYN | SGW_XCPA_TH_FIN | SGW_XCPA_TH_RST)) != 0 ||
	       (uint32_t)pi->l3_off + pi->l3_len > pi->payload_off;
}

/*
 * Legacy mode, class tcp: what comes from the satellite side (received on the
 * link's port, or re-injected by satlink as if it were) toward a tracked
 * flow's sender gets its window clamped to the flow's share; every packet
 * then goes to the flow stage, which forwards it as if this stage were not
 * there (the clamp changes the window and the checksum, nothing the parser
 * recorded).
 */
static void
legacy_acks(struct sgw_worker *w, const struct sgw_xs *xs, const uint16_t *idx, uint16_t n,
	    struct rte_mbuf **m)
{
	struct sgw_xs_worker *x = XSW(w);
	uint16_t j;

	for (j = 0; j < n; j++) {
		const struct sgw_pkt_meta *pm = &w->pm[idx[j]];
		uint8_t *p;

		if (pm->pidx != xs->pidx || pm->info.ip_ver == 0)
			continue;
		p = legacy_ip(x, m[idx[j]], &pm->info);
		if (p == NULL)
			continue;
		x->ctr[SGW_XS_LEG_ACKS]++;
		if (sgw_xcpl_ack(x->leg, p, pm->info.l3_len, w->now_ns) == 1)
			x->ctr[SGW_XS_LEG_CLAMPED]++;
	}
}

/*
 * Class xcp: the rule's action, like the stateless stage (the link's packets
 * come back through xs_action). Class tcp (the stage takes it for legacy
 * mode): looked at when legacy is on, then the flow stage's, unchanged.
 */
static void
xs_burst(struct sgw_worker *w, const struct sgw_snapshot *s, struct rte_mbuf **m,
	 const uint16_t *idx, uint16_t n)
{
	uint16_t j;

	/* A class burst is one class. */
	if (w->pm[idx[0]].info.cls != SGW_CLASS_XCP) {
		if (XSW(w)->leg != NULL)
			legacy_acks(w, XS(w->dp), idx, n, m);
		sgw_stages[SGW_STAGE_FLOW]->burst(w, s, m, idx, n);
		return;
	}
	XSW(w)->ctr[SGW_XS_XCP_SEEN] += n;
	for (j = 0; j < n; j++) {
		const struct sgw_pkt_meta *pm = &w->pm[idx[j]];

		sgw_emit(w, s, m[idx[j]], pm->pidx, &pm->info, pm->term,
			 sgw_rule_for(s, &pm->info, pm->pidx, pm->term));
	}
}

/*
 * Separate queues: the flow key of a packet for the share's flow count
 * (addresses, protocol, and the transport's ports or ESP's SPI; behind an
 * XCP header, the 4 bytes after it).
 */
static uint32_t
flow_hash(const struct rte_mbuf *m, const struct sgw_pkt_info *pi)
{
	uint8_t key[37];
	uint32_t alen = pi->ip_ver == 6 ? 16u : 4u;

	memset(key, 0, sizeof(key));
	if (pi->ip_ver == 0)
		return 0;
	memcpy(key, pi->src, alen);
	memcpy(key + 16, pi->dst, alen);
	key[32] = pi->ip_proto;
	if (pi->cls == SGW_CLASS_XCP) {
		if ((uint32_t)pi->payload_off + 4 <= rte_pktmbuf_data_len(m))
			memcpy(key + 33, rte_pktmbuf_mtod_offset(m, const uint8_t *,
								 pi->payload_off), 4);
	} else if (pi->ip_proto == 50) {
		memcpy(key + 33, &pi->esp_spi, 4);
	} else {
		memcpy(key + 33, &pi->sport, 2);
		memcpy(key + 35, &pi->dport, 2);
	}
	return sgw_xcpq_hash(key, sizeof(key));
}

/* Load the controller cannot steer: its input with one queue, the other class's with two. */
static inline void
load_only(const struct sgw_xs *xs, struct sgw_xcp_acc *acc, uint32_t size)
{
	if (!xs->twoq)
		sgw_xcp_on_other(acc, size);
}

/* A packet leaving toward the satellite: count it into the link, then satlink carries it. */
static void
xs_action(struct sgw_worker *w, const struct sgw_snapshot *s, struct rte_mbuf *m,
	  const struct sgw_pkt_info *pi, int32_t term, int32_t rule)
{
	struct sgw_xs *xs = XS(w->dp);
	struct sgw_xs_worker *x = XSW(w);
	struct sgw_xcp_acc *acc = &xs->acc[w->idx];
	struct sgw_xcp_params *par = &x->local;
	uint32_t size = pi->ip_ver != 0 ? pi->l3_len : rte_pktmbuf_pkt_len(m);
	bool steered = false;  /* given to the controller as a flow's packet */

	if (xs->per_sess) {
		/*
		 * The controller of the session whose queue the packet joins. No
		 * session of this worker's (no terminal, a terminal without one,
		 * another worker's): satlink sends it raw, counts it or drops it,
		 * and no controller of ours owns the queue it takes.
		 */
		int32_t si = sgw_sl_sess_of_term(s, term);

		if (si < 0 || sgw_sl_of(w->dp)->sess[si].owner != w->idx) {
			x->ctr[SGW_XS_NO_SESSION]++;
			sgw_stages[SGW_STAGE_SATLINK]->action(w, s, m, pi, term, rule);
			return;
		}
		acc = &xs->ss[si].acc;
		par = &xs->ss[si].par;
	}

	if (pi->cls == SGW_CLASS_TCP && x->leg != NULL && !legacy_segment(pi)) {
		/*
		 * A pure ACK toward the link (at a hub: a terrestrial server's
		 * ACK of an uplink flow) sends no window of data: with H_cwnd =
		 * its own size it would count as a whole flow in the controller's
		 * sum of rtt s / cwnd and dilute everyone's positive feedback.
		 */
		x->ctr[SGW_XS_LEG_PURE_ACK]++;
		load_only(xs, acc, size);
	} else if (pi->cls == SGW_CLASS_TCP && x->leg != NULL) {
		/* Legacy mode: plain TCP is a flow of the controller's, or load. */
		uint8_t *p = legacy_ip(x, m, pi);
		int32_t fb;

		if (p != NULL && sgw_xcpl_data(x->leg, acc, par, p, pi->l3_len, size,
					       w->now_ns, &fb) == 1) {
			x->ctr[SGW_XS_LEG_DATA]++;
			steered = true;
		} else {
			x->ctr[SGW_XS_LEG_LOAD]++;
			load_only(xs, acc, size);
		}
	} else if (pi->cls != SGW_CLASS_XCP) {
		x->ctr[SGW_XS_OTHER_LINK]++;
		load_only(xs, acc, size);
	} else if (unlikely((uint32_t)pi->l4_off + SGW_XCPW_LEN > rte_pktmbuf_data_len(m))) {
		/* A chained mbuf whose first segment ends inside the header: load only. */
		x->ctr[SGW_XS_CHAINED]++;
		load_only(xs, acc, size);
	} else {
		uint32_t end = RTE_MIN((uint32_t)pi->l3_off + pi->l3_len,
				       (uint32_t)rte_pktmbuf_data_len(m));
		uint8_t *hdr = rte_pktmbuf_mtod_offset(m, uint8_t *, pi->l4_off);
		enum sgw_xcp_err e = SGW_XCP_OK;
		int rc;

		x->ctr[SGW_XS_XCP_LINK]++;
		if (xs->twoq) {
			/*
			 * A refused header must not count as XCP input of the
			 * XCP class: parse first (sgw_xcp_process counts a
			 * refused one as load, which with two queues belongs to
			 * the other class).
			 */
			struct sgw_xcp_fields f;

			e = sgw_xcp_parse(hdr, end - pi->l4_off, xs->proto, &f);
		}
		if (e == SGW_XCP_OK) {
			rc = sgw_xcp_process(acc, par, xs->proto, hdr, end - pi->l4_off,
					     size, NULL, &e);
			steered = rc >= 0;
		} else {
			rc = -1;
		}
		if (rc > 0) {
			x->ctr[SGW_XS_LOWERED]++;
		} else if (rc < 0) {
			x->ctr[SGW_XS_BAD]++;
			x->bad[(unsigned int)e < SGW_XCP_E__COUNT ? e : SGW_XCP_E_TRUNC]++;
		}
	}
	if (!xs->shaper) {
		sgw_stages[SGW_STAGE_SATLINK]->action(w, s, m, pi, term, rule);
		return;
	}
	if (xs->twoq && !steered) {
		/* The other class's queue (separate queues). */
		sgw_xcpq_arrive(&xs->wq, SGW_XCPQ_O, flow_hash(m, pi), size);
		if (sgw_ring_full(&xs->fro)) {
			x->ctr[SGW_XS_QO_DROP]++;
			sgw_drop(w, m, (enum sgw_drop)(sgw_stage_drop_base(SGW_STAGE_XCP) +
						       XS_DROP_SHAPER_OTHER_FULL));
			return;
		}
		{
			uint32_t k = sgw_ring_push(&xs->fro);

			xs->foq[k] = m;
			xs->fosz[k] = size;
			xs->fobytes += size;
		}
		x->ctr[SGW_XS_QO_IN]++;
		shaper_pump(w, s, xs);
		return;
	}
	if (xs->twoq)
		sgw_xcpq_arrive(&xs->wq, SGW_XCPQ_X, flow_hash(m, pi), size);
	/* The egress shaper's queue (worker 0 is the only worker then). */
	if (sgw_ring_full(&xs->fr)) {
		if (xs->twoq)
			x->ctr[SGW_XS_QX_DROP]++;
		sgw_drop(w, m, (enum sgw_drop)(sgw_stage_drop_base(SGW_STAGE_XCP) +
					       XS_DROP_SHAPER_FULL));
		return;
	}
	{
		uint32_t k = sgw_ring_push(&xs->fr);

		xs->fq[k] = m;
		xs->fsz[k] = size;
		xs->fbytes += size;
	}
	if (xs->twoq)
		x->ctr[SGW_XS_QX_IN]++;
	shaper_pump(w, s, xs);
}

/*
 * Bytes waiting for the line in the sessions this worker owns, and in *t
 * what they have carried (scope carrier: worker 0 turns the totals into the
 * IP share of the line, eff_carried).
 */
static uint64_t
own_queue(const struct sgw_worker *w, struct sgw_arq_tx_totals *t)
{
	const struct sgw_sl *sl = sgw_sl_of(w->dp);
	struct sgw_arq_tx_totals one;
	uint64_t b = 0;
	uint32_t i;

	memset(t, 0, sizeof(*t));
	if (sl == NULL)  /* the egress shaper's */
		return XS(w->dp)->fbytes;
	for (i = 0; i < sl->n_sess; i++) {
		if (sl->sess[i].owner != w->idx)
			continue;
		b += sgw_sl_queued_bytes(w->dp, i);
		sgw_sl_tx_totals(w->dp, i, &one);
		t->new_frames += one.new_frames;
		t->new_bytes += one.new_bytes;
		t->lost += one.lost;
	}
	return b;
}

/* A controller's telemetry (the writer holds its seqlock). */
static void
tpub_fill(struct sgw_xs_tpub *t, const struct sgw_xcp_ctl *ctl, const struct sgw_xcp_params *p,
	  double cap, uint64_t qnow, uint64_t qp)
{
	t->epoch = ctl->epoch;
	t->d_ns = ctl->d_ns;
	t->t_start_ns = ctl->t_start_ns;
	t->capacity_Bps = cap;
	t->queue_bytes = qnow;
	t->queue_persistent = qp;
	t->last = ctl->last;
	t->xi_p = p->xi_p;
	t->xi_n = p->xi_n;
}

static void
publish_telemetry(struct sgw_xs *xs, double cap, uint64_t qnow, uint64_t qp)
{
	sgw_seq_write_begin(&xs->tseq);
	tpub_fill(&xs->tpub, &xs->ctl, &xs->out[0], cap, qnow, qp);
	xs->tpub.wq = xs->wq.last;
	sgw_seq_write_end(&xs->tseq);
}

/* Worker 0: sample the link's queue, end the interval when it is due. */
static void
aggregate(struct sgw_worker *w, const struct sgw_snapshot *s, struct sgw_xs *xs)
{
	uint64_t now = w->now_ns, q = 0;
	struct sgw_arq_tx_totals t;
	double cap;
	uint32_t i;

	/* Every loop: nothing to do between a queue sample and the interval's end. */
	if (xs->started && now < xs->next_qsample_ns && now < sgw_xcp_ctl_deadline(&xs->ctl))
		return;
	if (!xs->started) {
		carrier_totals(xs, &xs->car_tx);
		xs->car_eff = frame_eff(xs);
	}
	cap = capacity_of(xs, &s->pol, xs->car_eff * (double)xs->n_sess);

	if (!xs->started) {
		xs->started = true;
		conf_of(&s->pol, &xs->conf);
		for (i = 0; i < xs->n_workers; i++)
			sgw_xcp_acc_read(&xs->acc[i], &xs->snaps[i]);
		sgw_xcp_ctl_init(&xs->conf, &xs->ctl, now, xs->snaps, xs->n_workers, xs->out);
		for (i = 0; i < xs->n_workers; i++)
			sgw_xcp_pub_write(&xs->pub[i], &xs->out[i]);
		sgw_xcp_qest_init(&xs->qest);
		if (xs->twoq) {
			wq_conf_of(&s->pol, &xs->wqc);
			sgw_xcpq_init(&xs->wq, &xs->wqc, now);
			xs->cap_x = cap * xs->wq.w;
		}
		xs->next_qsample_ns = now;
		publish_telemetry(xs, cap, 0, 0);
	}
	if (now >= xs->next_qsample_ns) {
		xs->next_qsample_ns = now + SGW_XS_QSAMPLE_NS;
		for (i = 0; i < xs->n_workers; i++)
			q += __atomic_load_n(&xs->q[i].bytes, __ATOMIC_RELAXED);
		sgw_xcp_qest_sample(&xs->qest, &xs->conf, now, q, xs->ctl.d_ns,
				    xs->twoq ? xs->cap_x : cap);
		/* Between intervals: the queue now, for telemetry. */
		__atomic_store_n(&xs->tpub.queue_bytes, q, __ATOMIC_RELAXED);
	}
	if (now < sgw_xcp_ctl_deadline(&xs->ctl))
		return;
	/* The interval's capacity: what the sessions carried in it. */
	carrier_totals(xs, &t);
	xs->car_eff = eff_carried(xs, &xs->car_tx, &t, xs->car_eff);
	xs->car_tx = t;
	cap = capacity_of(xs, &s->pol, xs->car_eff * (double)xs->n_sess);
	/* A reload may have changed the constants: the next interval runs with them. */
	for (i = 0; i < xs->n_workers; i++)
		sgw_xcp_acc_read(&xs->acc[i], &xs->snaps[i]);
	q = sgw_xcp_qest_value(&xs->qest, now);
	if (xs->twoq) {
		/*
		 * Separate queues: the share moves toward equal per-flow throughput
		 * and the controller is given the XCP class's capacity; its input
		 * and queue are the XCP class's already (the other class is not
		 * counted into the accumulators then).
		 */
		wq_conf_of(&s->pol, &xs->wqc);
		xs->cap_x = sgw_xcpq_interval(&xs->wq, &xs->wqc, now, cap);
	}
	sgw_xcp_aggregate(&xs->conf, &xs->ctl, xs->snaps, xs->n_workers,
			  xs->twoq ? xs->cap_x : cap, (double)q, now, &xs->ctl, xs->out);
	conf_take(&s->pol, &xs->conf);
	for (i = 0; i < xs->n_workers; i++)
		sgw_xcp_pub_write(&xs->pub[i], &xs->out[i]);
	publish_telemetry(xs, cap, __atomic_load_n(&xs->tpub.queue_bytes, __ATOMIC_RELAXED), q);
}

static void
sess_publish(struct sgw_xs_sess *ss, double cap, uint64_t qnow, uint64_t qp)
{
	sgw_seq_write_begin(&ss->tseq);
	tpub_fill(&ss->tpub, &ss->ctl, &ss->par, cap, qnow, qp);
	sgw_seq_write_end(&ss->tseq);
}

/*
 * Scope session, on the owner every SGW_XS_QSAMPLE_NS: each of its sessions'
 * queue into its persistent-queue estimator, and the interval ended where it
 * is due (the interval is a mean RTT, hundreds of ms: a 1 ms grain is fine).
 * The aggregation is the carrier's with one worker: the owner's accumulator
 * is the session's.
 */
static void
sess_loop(struct sgw_worker *w, const struct sgw_snapshot *s, struct sgw_xs *xs,
	  struct sgw_xs_worker *x)
{
	uint64_t now = w->now_ns;
	uint32_t k;

	for (k = 0; k < x->n_own; k++) {
		uint32_t si = x->own[k];
		struct sgw_xs_sess *ss = &xs->ss[si];
		struct sgw_xcp_params out;
		uint64_t q = sgw_sl_queued_bytes(w->dp, si), qp;
		struct sgw_arq_tx_totals t;
		double cap;

		if (!x->started) {
			conf_take(&s->pol, &ss->conf);
			sess_start(ss, now);
			sgw_sl_tx_totals(w->dp, si, &ss->tx);
			ss->eff = frame_eff(xs);
		}
		cap = capacity_of(xs, &s->pol, ss->eff);
		sgw_xcp_qest_sample(&ss->qest, &ss->conf, now, q, ss->ctl.d_ns, cap);
		if (now < sgw_xcp_ctl_deadline(&ss->ctl)) {
			__atomic_store_n(&ss->tpub.queue_bytes, q, __ATOMIC_RELAXED);
			if (!x->started)
				sess_publish(ss, cap, q, 0);
			continue;
		}
		/* The interval's capacity: what the session carried in it. */
		sgw_sl_tx_totals(w->dp, si, &t);
		ss->eff = eff_carried(xs, &ss->tx, &t, ss->eff);
		ss->tx = t;
		cap = capacity_of(xs, &s->pol, ss->eff);
		sgw_xcp_acc_read(&ss->acc, &ss->snap);
		qp = sgw_xcp_qest_value(&ss->qest, now);
		sgw_xcp_aggregate(&ss->conf, &ss->ctl, &ss->snap, 1, cap, (double)qp, now,
				  &ss->ctl, &out);
		sess_take(ss, &out);
		/* A reload may have changed the constants: the next interval runs with them. */
		conf_take(&s->pol, &ss->conf);
		sess_publish(ss, cap, q, qp);
	}
	x->started = true;
}

static void
xs_loop(struct sgw_worker *w, const struct sgw_snapshot *s)
{
	struct sgw_xs *xs = XS(w->dp);
	struct sgw_xs_worker *x = XSW(w);

	if (xs->per_sess) {
		if (w->now_ns >= x->next_qsample_ns) {
			x->next_qsample_ns = w->now_ns + SGW_XS_QSAMPLE_NS;
			sess_loop(w, s, xs, x);
		}
		return;
	}
	if (xs->shaper)
		shaper_pump(w, s, xs);
	if (w->now_ns >= x->next_qsample_ns) {
		struct sgw_arq_tx_totals t;
		uint64_t b = own_queue(w, &t);

		x->next_qsample_ns = w->now_ns + SGW_XS_QSAMPLE_NS;
		__atomic_store_n(&xs->q[w->idx].bytes, b, __ATOMIC_RELAXED);
		__atomic_store_n(&xs->q[w->idx].tx_new_frames, t.new_frames, __ATOMIC_RELAXED);
		__atomic_store_n(&xs->q[w->idx].tx_new_bytes, t.new_bytes, __ATOMIC_RELAXED);
		__atomic_store_n(&xs->q[w->idx].tx_lost, t.lost, __ATOMIC_RELAXED);
	}
	if (w->idx == 0)
		aggregate(w, s, xs);
	sgw_xcp_pub_refresh(&xs->pub[w->idx], &x->local);
}

/* ------------------------------------------------------------- reporting */

int
sgw_xs_sess_read(const struct sgw_dp *dp, uint32_t si, struct sgw_xs_tpub *out,
		 struct sgw_xcp_sums *sums)
{
	const struct sgw_xs *xs = XS(dp);

	memset(out, 0, sizeof(*out));
	if (sums != NULL)
		memset(sums, 0, sizeof(*sums));
	if (xs == NULL || !xs->per_sess || si >= xs->n_sess)
		return -1;
	sgw_seq_read(&xs->ss[si].tseq, out, &xs->ss[si].tpub, sizeof(*out));
	if (sums != NULL)
		sgw_xcp_acc_read(&xs->ss[si].acc, sums);
	return 0;
}

void
sgw_xs_read(const struct sgw_dp *dp, struct sgw_xs_tpub *out)
{
	const struct sgw_xs *xs = XS(dp);
	struct sgw_xs_tpub one;
	uint32_t i;

	memset(out, 0, sizeof(*out));
	if (xs == NULL)
		return;
	if (!xs->per_sess) {
		sgw_seq_read(&xs->tseq, out, &xs->tpub, sizeof(*out));
		return;
	}
	/* Scope session: the sessions' sums (xi_p, xi_n are per session only). */
	for (i = 0; i < xs->n_sess; i++) {
		sgw_xs_sess_read(dp, i, &one, NULL);
		out->epoch += one.epoch;
		out->d_ns = RTE_MAX(out->d_ns, one.d_ns);
		out->t_start_ns = RTE_MAX(out->t_start_ns, one.t_start_ns);
		out->capacity_Bps += one.capacity_Bps;
		out->queue_bytes += __atomic_load_n(&xs->ss[i].tpub.queue_bytes,
						    __ATOMIC_RELAXED);
		out->queue_persistent += one.queue_persistent;
		out->last.interval_ns = RTE_MAX(out->last.interval_ns, one.last.interval_ns);
		out->last.d_ns = RTE_MAX(out->last.d_ns, one.last.d_ns);
		out->last.capacity_Bps += one.last.capacity_Bps;
		out->last.input_Bps += one.last.input_Bps;
		out->last.spare_Bps += one.last.spare_Bps;
		out->last.queue_bytes += one.last.queue_bytes;
		out->last.phi_bytes += one.last.phi_bytes;
		out->last.h_bytes += one.last.h_bytes;
		out->last.flows += one.last.flows;
		out->last.rtt_flow_ns = RTE_MAX(out->last.rtt_flow_ns, one.last.rtt_flow_ns);
	}
}

void
sgw_xs_counters(const struct sgw_dp *dp, uint64_t ctr[SGW_XS__COUNT],
		uint64_t bad[SGW_XCP_E__COUNT], struct sgw_xcp_sums *sums)
{
	const struct sgw_xs *xs = XS(dp);
	uint32_t i, k;

	memset(ctr, 0, sizeof(uint64_t) * SGW_XS__COUNT);
	memset(bad, 0, sizeof(uint64_t) * SGW_XCP_E__COUNT);
	memset(sums, 0, sizeof(*sums));
	if (xs == NULL)
		return;
	for (i = 0; i < dp->n_workers; i++) {
		const struct sgw_xs_worker *x;
		struct sgw_xcp_sums one;

		if (dp->workers[i] == NULL || dp->workers[i]->sctx[SGW_STAGE_XCP] == NULL)
			continue;
		x = XSW(dp->workers[i]);
		for (k = 0; k < SGW_XS__COUNT; k++)
			ctr[k] += __atomic_load_n(&x->ctr[k], __ATOMIC_RELAXED);
		for (k = 0; k < SGW_XCP_E__COUNT; k++)
			bad[k] += __atomic_load_n(&x->bad[k], __ATOMIC_RELAXED);
		if (xs->per_sess)
			continue;
		sgw_xcp_acc_read(&xs->acc[i], &one);
		for (k = 0; k < SGW_XCP_S__COUNT; k++)
			sums->v[k] += one.v[k];
	}
	for (i = 0; xs->per_sess && i < xs->n_sess; i++) {
		struct sgw_xcp_sums one;

		sgw_xcp_acc_read(&xs->ss[i].acc, &one);
		for (k = 0; k < SGW_XCP_S__COUNT; k++)
			sums->v[k] += one.v[k];
	}
}

void
sgw_xs_legacy_read(const struct sgw_dp *dp, struct sgw_xs_legacy_stats *out)
{
	uint32_t i, k;

	memset(out, 0, sizeof(*out));
	if (XS(dp) == NULL)
		return;
	for (i = 0; i < dp->n_workers; i++) {
		const struct sgw_xs_worker *x;
		const struct sgw_xcpl *l;

		if (dp->workers[i] == NULL || dp->workers[i]->sctx[SGW_STAGE_XCP] == NULL)
			continue;
		x = XSW(dp->workers[i]);
		l = x->leg;
		if (l == NULL)
			continue;
		out->active += __atomic_load_n(&l->tab.active, __ATOMIC_RELAXED);
		for (k = 0; k < SGW_XCPL_C__COUNT; k++)
			out->ctr[k] += __atomic_load_n(&l->ctr[k], __ATOMIC_RELAXED);
		out->flows_new += __atomic_load_n(&l->tab.ctr[SGW_XCPA_C_FLOWS_NEW],
						  __ATOMIC_RELAXED);
		out->flows_reused += __atomic_load_n(&l->tab.ctr[SGW_XCPA_C_FLOWS_REUSED],
						     __ATOMIC_RELAXED);
		out->table_full += __atomic_load_n(&l->tab.ctr[SGW_XCPA_C_TABLE_FULL],
						   __ATOMIC_RELAXED);
	}
}

/* One controller's numbers (the link's, or a session's): its telemetry, queue now, sums. */
static void
ctl_fields(const struct sgw_xs_tpub *t, uint64_t qnow, const struct sgw_xcp_sums *sums,
	   sgw_kv_fn fn, void (*fd)(void *, const char *, double), void *ctx)
{
	fd(ctx, "capacity_bps", t->capacity_Bps * 8.0);
	fd(ctx, "input_bps", t->last.input_Bps * 8.0);
	fd(ctx, "spare_bps", t->last.spare_Bps * 8.0);
	fn(ctx, "queue_bytes", qnow);
	fn(ctx, "queue_persistent_bytes", t->queue_persistent);
	fn(ctx, "control_intervals", t->epoch);
	fn(ctx, "control_interval_ns", t->d_ns);
	fd(ctx, "phi_bytes", t->last.phi_bytes);
	fd(ctx, "shuffled_bytes", t->last.h_bytes);
	fd(ctx, "flows", t->last.flows);
	fn(ctx, "rtt_flow_ns", (uint64_t)t->last.rtt_flow_ns);
	fd(ctx, "xi_p", t->xi_p);
	fd(ctx, "xi_n", t->xi_n);
	fn(ctx, "feedback_positive_bytes", sums->v[SGW_XCP_S_FB_POS]);
	fn(ctx, "feedback_negative_bytes", sums->v[SGW_XCP_S_FB_NEG]);
	fn(ctx, "input_bytes", sums->v[SGW_XCP_S_BYTES]);
	fn(ctx, "input_pkts", sums->v[SGW_XCP_S_PKTS]);
	fn(ctx, "xcp_bytes_with_rtt", sums->v[SGW_XCP_S_XBYTES]);
	fn(ctx, "xcp_pkts_with_rtt", sums->v[SGW_XCP_S_XPKTS]);
	fn(ctx, "xcp_pkts_no_rtt", sums->v[SGW_XCP_S_NORTT]);
	fn(ctx, "xcp_rtt_clamped", sums->v[SGW_XCP_S_CLAMPED]);
}

/* Every number the stage reports, through fn (u64) and fd (reals). */
static void
xs_fields(const struct sgw_dp *dp, sgw_kv_fn fn, void (*fd)(void *, const char *, double),
	  void *ctx)
{
	uint64_t ctr[SGW_XS__COUNT], bad[SGW_XCP_E__COUNT];
	struct sgw_xs_legacy_stats ls;
	struct sgw_xcp_sums sums;
	struct sgw_xs_tpub t;
	char name[48];
	unsigned int k;

	sgw_xs_counters(dp, ctr, bad, &sums);
	sgw_xs_read(dp, &t);
	/* Scope session: the link's fields below are its sessions' sums. */
	fn(ctx, "per_session", XS(dp)->per_sess);
	fn(ctx, "controllers", XS(dp)->per_sess ? XS(dp)->n_sess : 1u);
	ctl_fields(&t, t.queue_bytes, &sums, fn, fd, ctx);
	for (k = 0; k < SGW_XS__COUNT; k++)
		fn(ctx, xs_ctr_names[k], ctr[k]);
	for (k = 1; k < SGW_XCP_E__COUNT; k++) {
		snprintf(name, sizeof(name), "bad_%s", sgw_xcp_err_name((enum sgw_xcp_err)k));
		fn(ctx, name, bad[k]);
	}
	/* Separate queues (zeros when off): the share's last interval, the queues now. */
	fn(ctx, "separate_queues", XS(dp)->twoq);
	fd(ctx, "q_xcp_weight", t.wq.w);
	fd(ctx, "q_xcp_weight_target", t.wq.w_target);
	fd(ctx, "q_xcp_capacity_bps", t.wq.cap_x_Bps * 8.0);
	fd(ctx, "q_xcp_flows", t.wq.flows[SGW_XCPQ_X]);
	fd(ctx, "q_other_flows", t.wq.flows[SGW_XCPQ_O]);
	fd(ctx, "q_xcp_sent_bps", t.wq.sent_Bps[SGW_XCPQ_X] * 8.0);
	fd(ctx, "q_other_sent_bps", t.wq.sent_Bps[SGW_XCPQ_O] * 8.0);
	fn(ctx, "q_xcp_queue_bytes", __atomic_load_n(&XS(dp)->fbytes, __ATOMIC_RELAXED));
	fn(ctx, "q_other_queue_bytes", __atomic_load_n(&XS(dp)->fobytes, __ATOMIC_RELAXED));
	/* Legacy mode (zeros when off). */
	sgw_xs_legacy_read(dp, &ls);
	fn(ctx, "legacy", XS(dp)->legacy);
	fn(ctx, "legacy_flows_active", ls.active);
	fn(ctx, "legacy_flows_new", ls.flows_new);
	fn(ctx, "legacy_flows_reused", ls.flows_reused);
	fn(ctx, "legacy_table_full", ls.table_full);
	for (k = 0; k < SGW_XCPL_C__COUNT; k++) {
		snprintf(name, sizeof(name), "legacy_%s", sgw_xcpl_ctr_name((enum sgw_xcpl_ctr)k));
		fn(ctx, name, ls.ctr[k]);
	}
}

/* Scope session: one session's controller (sgw_xs_sess_read). */
static void
sess_fields(const struct sgw_dp *dp, uint32_t si, sgw_kv_fn fn,
	    void (*fd)(void *, const char *, double), void *ctx)
{
	struct sgw_xcp_sums sums;
	struct sgw_xs_tpub t;

	sgw_xs_sess_read(dp, si, &t, &sums);
	fn(ctx, "terminal_id", sgw_sl_of(dp)->sess[si].term_id);
	fn(ctx, "worker", sgw_sl_of(dp)->sess[si].owner);
	ctl_fields(&t, __atomic_load_n(&XS(dp)->ss[si].tpub.queue_bytes, __ATOMIC_RELAXED),
		   &sums, fn, fd, ctx);
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
json_kd(void *arg, const char *k, double v)
{
	struct json_ctx *j = arg;

	fprintf(j->f, "%s\"%s\": %.12g", j->n++ ? ", " : "", k, v);
}

static void
xs_write_json(const struct sgw_dp *dp, FILE *f)
{
	const struct sgw_xs *xs = XS(dp);
	struct json_ctx j = {.f = f};
	uint32_t i;

	fprintf(f, "  \"xcp\": {\"protocol\": %u, \"link_port\": %d, \"queue\": \"%s\",\n"
		"    \"scope\": \"%s\",\n    \"link\": {", xs->proto, xs->pidx,
		xs->shaper ? "shaper" : "satlink", xs->shaper ? "shaper" :
		sgw_xcp_scope_names[xs->per_sess ? SGW_XCP_SCOPE_SESSION : SGW_XCP_SCOPE_CARRIER]);
	xs_fields(dp, json_kv, json_kd, &j);
	fprintf(f, "},\n    \"sessions\": [");
	for (i = 0; xs->per_sess && i < xs->n_sess; i++) {
		j.n = 0;
		fprintf(f, "%s\n      {", i ? "," : "");
		sess_fields(dp, i, json_kv, json_kd, &j);
		fputc('}', f);
	}
	fprintf(f, "]\n  },\n");
}

static void
xs_print_summary(const struct sgw_dp *dp, FILE *f)
{
	uint64_t ctr[SGW_XS__COUNT], bad[SGW_XCP_E__COUNT];
	struct sgw_xcp_sums sums;
	struct sgw_xs_tpub t;

	sgw_xs_counters(dp, ctr, bad, &sums);
	sgw_xs_read(dp, &t);
	fprintf(f, "  xcp link: capacity %.0f bit/s, input %.0f bit/s, queue %" PRIu64
		" B (persistent %" PRIu64 "), %" PRIu64 " intervals of %.1f ms, ~%.1f flows\n",
		t.capacity_Bps * 8.0, t.last.input_Bps * 8.0, t.queue_bytes, t.queue_persistent,
		t.epoch, (double)t.d_ns / 1e6, t.last.flows);
	fprintf(f, "  xcp packets: %" PRIu64 " XCP to the link (%" PRIu64 " lowered, %" PRIu64
		" bad header), %" PRIu64 " other to the link; feedback +%" PRIu64 " / -%" PRIu64
		" bytes\n", ctr[SGW_XS_XCP_LINK], ctr[SGW_XS_LOWERED], ctr[SGW_XS_BAD],
		ctr[SGW_XS_OTHER_LINK], sums.v[SGW_XCP_S_FB_POS], sums.v[SGW_XCP_S_FB_NEG]);
	if (XS(dp)->per_sess)
		fprintf(f, "  xcp: one controller per satlink session (%u; the line above sums "
			"them: exit JSON xcp.sessions has each)\n", XS(dp)->n_sess);
	if (XS(dp)->twoq)
		fprintf(f, "  xcp queues: weight %.3f (target %.3f; flows %.1f XCP, %.1f other), "
			"XCP capacity %.0f bit/s; sent %" PRIu64 " / %" PRIu64
			" packets, dropped %" PRIu64 " / %" PRIu64 " (XCP / other)\n",
			t.wq.w, t.wq.w_target,
			t.wq.flows[SGW_XCPQ_X], t.wq.flows[SGW_XCPQ_O], t.wq.cap_x_Bps * 8.0,
			ctr[SGW_XS_QX_SENT], ctr[SGW_XS_QO_SENT], ctr[SGW_XS_QX_DROP],
			ctr[SGW_XS_QO_DROP]);
	if (XS(dp)->legacy) {
		struct sgw_xs_legacy_stats ls;

		sgw_xs_legacy_read(dp, &ls);
		fprintf(f, "  xcp legacy: %" PRIu64 " flows (%" PRIu64 " new, %" PRIu64
			" table full), %" PRIu64 " TCP to the link with feedback (%" PRIu64
			" load only, %" PRIu64 " pure ACKs), %" PRIu64 " of %" PRIu64
			" returning TCP clamped\n",
			ls.active, ls.flows_new, ls.table_full, ctr[SGW_XS_LEG_DATA],
			ctr[SGW_XS_LEG_LOAD], ctr[SGW_XS_LEG_PURE_ACK], ctr[SGW_XS_LEG_CLAMPED],
			ctr[SGW_XS_LEG_ACKS]);
	}
}

static void
tel_kv(void *ctx, const char *k, uint64_t v)
{
	rte_tel_data_add_dict_u64(ctx, k, v);
}

/* DPDK 22.11 telemetry has no reals: "%.12g" as a string (a capacity to the byte). */
static void
tel_kd(void *ctx, const char *k, double v)
{
	char b[32];

	snprintf(b, sizeof(b), "%.12g", v);
	rte_tel_data_add_dict_string(ctx, k, b);
}

/* Sessions per telemetry answer (scope session): ~700 bytes each. */
#define XS_TEL_PAGE 4

/*
 * /satgw/xcp[,first]: the link's fields, and with scope session the
 * controllers of sessions first.. first + XS_TEL_PAGE - 1 under their
 * session index ("next": the first of the next page), as /satgw/satlink
 * pages its sessions.
 */
static int
xs_telemetry(const struct sgw_dp *dp, const char *params, struct rte_tel_data *d)
{
	const struct sgw_xs *xs = XS(dp);
	uint32_t first = 0, i;

	if (sgw_tel_parse_first(params, &first) != 0)
		return -1;
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "protocol", xs->proto);
	xs_fields(dp, tel_kv, tel_kd, d);
	if (!xs->per_sess)
		return 0;
	rte_tel_data_add_dict_u64(d, "first", first);
	for (i = first; i < xs->n_sess && i < first + XS_TEL_PAGE; i++) {
		struct rte_tel_data *sd = rte_tel_data_alloc();
		char key[16];

		if (sd == NULL)
			break;
		rte_tel_data_start_dict(sd);
		sess_fields(dp, i, tel_kv, tel_kd, sd);
		snprintf(key, sizeof(key), "%u", i);
		sgw_tel_add_container(d, key, sd);
	}
	if (i < xs->n_sess)
		rte_tel_data_add_dict_u64(d, "next", i);
	return 0;
}

const struct sgw_stage_ops sgw_stage_xcp = {
	.name = "xcp",
	/* tcp: for legacy mode (returning ACKs), then the flow stage's (xs_burst). */
	.classes = SGW_CLASS_BIT(SGW_CLASS_XCP) | SGW_CLASS_BIT(SGW_CLASS_TCP),
	.init = xs_init,
	.snapshot = xs_snapshot,
	.fini = xs_fini,
	.drain = xs_drain,
	.held = xs_held,
	.drop_names = xs_drop_names,
	.n_drops = RTE_DIM(xs_drop_names),
	.burst = xs_burst,
	.action = xs_action,
	.loop = xs_loop,
	.write_json = xs_write_json,
	.print_summary = xs_print_summary,
	.tel_cmd = "/satgw/xcp",
	/* At most 127 characters (RTE_TEL_MAX_STRING_LEN), or registration fails. */
	.tel_help = "satgw xcp: the link's controller and the stage's counters. Parameter: "
		    "first session (scope session)",
	.telemetry = xs_telemetry,
};
