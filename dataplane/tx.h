/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What every stage may do with a packet besides keeping it: send it out of a
 * port (buffered per port, flushed at workers.burst packets or at the TX
 * deadline), drop it with a reason, or hand it back to the pipeline through
 * the worker's re-inject queue (a packet a stage produced: a reassembled
 * packet, one a split endpoint emits), which the loop drains after the
 * stages. Stages depend on this file, never on the worker loop.
 *
 * tx_add and drop sit on the per-packet path: inline here; the flushes and
 * the TX-ring drain are in tx.c.
 */
#ifndef SGW_TX_H
#define SGW_TX_H

#include <rte_mbuf.h>

#include "sgw_dp.h"

/* Send a worker's buffered packets of one port (driver or TX ring). */
void sgw_tx_flush_port(struct sgw_worker *w, uint16_t pidx);

static inline void
sgw_drop(struct sgw_worker *w, struct rte_mbuf *m, enum sgw_drop why)
{
	w->c.drop[why]++;
	rte_pktmbuf_free(m);
}

/* Queue a packet for TX on a policy port. */
static inline void
sgw_tx(struct sgw_worker *w, uint16_t pidx, struct rte_mbuf *m, uint16_t burst)
{
	struct sgw_txbuf *b = &w->tx[pidx];

	b->m[b->n++] = m;
	if (b->n >= burst)
		sgw_tx_flush_port(w, pidx);
}

/*
 * Hand a packet back to the pipeline, as if received on port m->port: it runs
 * through classification and the stages once the current burst's stages are
 * done. Bounded (w->reinj_cap, the most a stage asked for with
 * sgw_stage_reinject_room): a stage keeps within sgw_reinject_room(); past
 * the bound a packet is dropped and counted.
 */
static inline uint32_t
sgw_reinject_room(const struct sgw_worker *w)
{
	return w->reinj_cap - w->reinj_n;
}

static inline void
sgw_reinject(struct sgw_worker *w, struct rte_mbuf *m)
{
	if (unlikely(w->reinj_n == w->reinj_cap)) {
		sgw_drop(w, m, SGW_DROP_REINJECT_FULL);
		return;
	}
	w->reinj[w->reinj_n++] = m;
}

#endif /* SGW_TX_H */
