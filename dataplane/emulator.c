/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The emulator role's dataplane: every frame from one port is offered to the
 * link model of its direction (lib/sgw_linkem.c), and a frame that passes is
 * held in that direction's FIFO until its release time, then sent out of the
 * other port. The model decides fates and times; this file owns the mbufs.
 *
 * Held frames need no timer wheel: release times are non-decreasing per
 * direction, so a FIFO checked once per loop is exact to a loop's length.
 * The emulator runs on worker 0 (the link model is sequential per direction);
 * other lcores, if given, stay idle.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <rte_ethdev.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>

#include "sgw_dp.h"
#include "seqlock.h"
#include "sgw_linkem.h"

/* Smallest frame the model can be offered (Ethernet minimum without FCS). */
#define EMU_MIN_FRAME 60

static const char *const dir_names[2] = {"forward", "return"};

const char *
sgw_emu_dir_name(int d)
{
	return dir_names[d & 1];
}

static uint64_t
port_descriptors(const struct sgw_policy *pol)
{
	uint64_t n = 0;
	uint16_t p;

	for (p = 0; p < pol->n_ports; p++)
		n += (uint64_t)pol->ports[p].rx_desc + pol->ports[p].tx_desc;
	return n;
}

int
sgw_emu_init(struct sgw_dp *dp, const struct sgw_policy *pol)
{
	uint64_t need[2], total;
	int d;

	memset(dp->emu, 0, sizeof(dp->emu));
	for (d = 0; d < 2; d++) {
		need[d] = sgw_linkem_max_in_flight(&pol->emu.dir[d].em, EMU_MIN_FRAME);
		if (need[d] == UINT64_MAX) {
			SGW_LOG(ERR, "link %s: no bound on frames in flight (delay without a rate)",
				dir_names[d]);
			return -1;
		}
	}
	/*
	 * Every held frame is an mbuf: the pool must cover both directions' frames
	 * in flight (rate x delay at the smallest frame, plus the queues) and the
	 * ports' descriptors, or the emulator would lose frames it was told to
	 * deliver. Refuse to start instead.
	 */
	total = need[0] + need[1] + port_descriptors(pol) + 2 * SGW_BURST_MAX * SGW_MAX_PORTS;
	if (total > pol->limits.mbufs) {
		SGW_LOG(ERR, "link needs up to %" PRIu64 " mbufs (forward %" PRIu64 " + return %"
			PRIu64 " frames in flight at %u bytes, + port descriptors), limits.mbufs "
			"is %u: raise limits.mbufs and the EAL memory (-m; without hugepages each "
			"mbuf takes a 4 KB page)", total, need[0],
			need[1], EMU_MIN_FRAME, pol->limits.mbufs);
		return -1;
	}
	for (d = 0; d < 2; d++) {
		struct sgw_emu_dir *e = &dp->emu[d];

		e->in_pidx = pol->emu.dir[d].from_port;
		e->out_pidx = pol->emu.dir[d].to_port;
		sgw_ring_init(&e->r,
			      (uint32_t)RTE_MIN(need[d] + SGW_BURST_MAX, (uint64_t)pol->limits.mbufs));
		e->q = rte_zmalloc("sgw_emu_hold", sizeof(*e->q) * e->r.cap, RTE_CACHE_LINE_SIZE);
		e->pub = rte_zmalloc("sgw_emu_pub", sizeof(*e->pub), RTE_CACHE_LINE_SIZE);
		e->lm = sgw_linkem_create(&pol->emu.dir[d].em, pol->emu.seed + (uint64_t)d, 0);
		if (e->q == NULL || e->lm == NULL || e->pub == NULL) {
			SGW_LOG(ERR, "link %s: out of memory for %u held frames", dir_names[d],
				e->r.cap);
			return -1;
		}
		dp->emu_dir_of[e->in_pidx] = (int8_t)d;
	}
	dp->emulator = true;
	return 0;
}

void
sgw_emu_fini(struct sgw_dp *dp)
{
	int d;

	for (d = 0; d < 2; d++) {
		struct sgw_emu_dir *e = &dp->emu[d];

		while (!sgw_ring_empty(&e->r))
			rte_pktmbuf_free(e->q[sgw_ring_pop(&e->r)].m);
		rte_free(e->q);
		e->q = NULL;
		rte_free(e->pub);
		e->pub = NULL;
		sgw_linkem_destroy(e->lm);
		e->lm = NULL;
	}
}

/* Frames still held at exit were on the emulated link when it was switched off. */
void
sgw_emu_drop_held(struct sgw_dp *dp)
{
	int d;

	for (d = 0; d < 2; d++) {
		struct sgw_emu_dir *e = &dp->emu[d];

		if (dp->workers[0] != NULL)
			dp->workers[0]->c.drop[SGW_DROP_SHUTDOWN] += sgw_ring_count(&e->r);
		while (!sgw_ring_empty(&e->r))
			rte_pktmbuf_free(e->q[sgw_ring_pop(&e->r)].m);
	}
}

static inline void
hold(struct sgw_worker *w, struct sgw_emu_dir *e, struct rte_mbuf *m, uint64_t release_ns)
{
	uint32_t tail;

	if (unlikely(sgw_ring_full(&e->r))) {
		/* Sized from the model's bound at startup: this is a bug if it ever counts. */
		e->hold_full++;
		w->c.drop[SGW_DROP_TX_FULL]++;
		rte_pktmbuf_free(m);
		return;
	}
	tail = sgw_ring_push(&e->r);
	e->q[tail].m = m;
	e->q[tail].release_ns = release_ns;
}

#define EMU_PUB_NS 10000000ull

/* Worker 0 only: copy the models' counters where other threads may read them. */
static void
publish_stats(struct sgw_dp *dp, uint64_t now_ns)
{
	int d;

	for (d = 0; d < 2; d++) {
		struct sgw_emu_dir *e = &dp->emu[d];

		sgw_seq_write_begin(&e->pub_seq);
		sgw_linkem_get_stats(e->lm, now_ns, e->pub);
		sgw_seq_write_end(&e->pub_seq);
	}
	dp->emu_pub_ns = now_ns;
}

void
sgw_emu_read_stats(const struct sgw_dp *dp, int d, struct sgw_linkem_stats *st)
{
	const struct sgw_emu_dir *e = &dp->emu[d];

	sgw_seq_read(&e->pub_seq, st, e->pub, sizeof(*st));
}

uint32_t
sgw_emu_iter(struct sgw_worker *w, const struct sgw_snapshot *s)
{
	struct sgw_dp *dp = w->dp;
	struct rte_mbuf *m[SGW_BURST_MAX];
	uint16_t burst = s->pol.workers.burst;
	uint32_t total = 0;
	uint16_t q, i, n;
	int d;

	for (q = 0; q < w->n_rxq; q++) {
		const struct sgw_rxq *rq = &w->rxq[q];
		struct sgw_emu_dir *e;
		uint64_t bytes = 0;

		n = rte_eth_rx_burst(rq->port_id, rq->queue, m, burst);
		if (n == 0)
			continue;
		total += n;
		d = dp->emu_dir_of[rq->pidx];
		if (d < 0) {
			/* A port that is no direction's input (cannot happen: validated). */
			for (i = 0; i < n; i++)
				rte_pktmbuf_free(m[i]);
			continue;
		}
		e = &dp->emu[d];
		for (i = 0; i < n; i++) {
			uint32_t len = rte_pktmbuf_pkt_len(m[i]);
			uint64_t rel;

			bytes += len;
			if (sgw_linkem_offer(e->lm, w->now_ns, len, &rel) == SGW_LE_PASS)
				hold(w, e, m[i], rel);
			else
				rte_pktmbuf_free(m[i]);
		}
		w->c.rx_pkts[rq->pidx] += n;
		w->c.rx_bytes[rq->pidx] += bytes;
	}
	/* Release what has arrived at the far end. */
	for (d = 0; d < 2; d++) {
		struct sgw_emu_dir *e = &dp->emu[d];

		while (!sgw_ring_empty(&e->r) &&
		       e->q[sgw_ring_head(&e->r)].release_ns <= w->now_ns) {
			struct rte_mbuf *mb = e->q[sgw_ring_pop(&e->r)].m;

			sgw_worker_tx(w, e->out_pidx, mb, burst);
			total++;
		}
	}
	if (w->now_ns - dp->emu_pub_ns >= EMU_PUB_NS)
		publish_stats(dp, w->now_ns);
	return total;
}

/* Nanoseconds until the next held frame is due (UINT64_MAX: none held). */
uint64_t
sgw_emu_next_release(const struct sgw_dp *dp, uint64_t now_ns)
{
	uint64_t next = UINT64_MAX;
	int d;

	for (d = 0; d < 2; d++) {
		const struct sgw_emu_dir *e = &dp->emu[d];

		if (!sgw_ring_empty(&e->r) && e->q[sgw_ring_head(&e->r)].release_ns < next)
			next = e->q[sgw_ring_head(&e->r)].release_ns;
	}
	return next == UINT64_MAX ? next : (next > now_ns ? next - now_ns : 0);
}
