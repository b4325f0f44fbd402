/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * TX (see tx.h): per-port buffers flushed to the driver, or to the port's TX
 * ring when this worker has no TX queue of its own on the port (single-queue
 * devices: the queue-0 owner drains the ring), and every packet the driver or
 * the ring refuses dropped and counted.
 */
#include <rte_ethdev.h>
#include <rte_ring.h>

#include "tx.h"

void
sgw_tx_flush_port(struct sgw_worker *w, uint16_t pidx)
{
	struct sgw_txbuf *b = &w->tx[pidx];
	struct sgw_dp *dp = w->dp;
	uint64_t bytes = 0;
	uint16_t sent, i;

	if (b->n == 0)
		return;
	if (w->txq[pidx] >= 0) {
		for (i = 0; i < b->n; i++)
			bytes += rte_pktmbuf_pkt_len(b->m[i]);
		sent = rte_eth_tx_burst(dp->ports[pidx].port_id, (uint16_t)w->txq[pidx], b->m,
					b->n);
		for (i = sent; i < b->n; i++)
			bytes -= rte_pktmbuf_pkt_len(b->m[i]);
		w->c.tx_pkts[pidx] += sent;
		w->c.tx_bytes[pidx] += bytes;
	} else {
		/* No TX queue of our own on this port: the queue-0 owner sends for us. */
		sent = (uint16_t)rte_ring_enqueue_burst(dp->txring[pidx], (void **)b->m, b->n,
							NULL);
	}
	for (i = sent; i < b->n; i++)
		sgw_drop(w, b->m[i], SGW_DROP_TX_FULL);
	b->n = 0;
}

void
sgw_worker_flush(struct sgw_worker *w)
{
	uint16_t p;

	for (p = 0; p < w->dp->n_ports; p++)
		sgw_tx_flush_port(w, p);
}

void
sgw_worker_tx(struct sgw_worker *w, uint16_t pidx, struct rte_mbuf *m, uint16_t burst)
{
	sgw_tx(w, pidx, m, burst);
}

/* Send one burst from a port's TX ring on our queue; returns packets taken. */
static uint16_t
drain_txring_burst(struct sgw_worker *w, uint16_t p, bool *driver_full)
{
	struct sgw_dp *dp = w->dp;
	struct rte_mbuf *m[SGW_BURST_MAX];
	uint64_t bytes = 0;
	uint16_t i, n, sent;

	n = (uint16_t)rte_ring_dequeue_burst(dp->txring[p], (void **)m, SGW_BURST_MAX, NULL);
	if (n == 0)
		return 0;
	for (i = 0; i < n; i++)
		bytes += rte_pktmbuf_pkt_len(m[i]);
	sent = rte_eth_tx_burst(dp->ports[p].port_id, (uint16_t)w->txq[p], m, n);
	for (i = sent; i < n; i++) {
		bytes -= rte_pktmbuf_pkt_len(m[i]);
		sgw_drop(w, m[i], SGW_DROP_TX_FULL);
	}
	w->c.tx_pkts[p] += sent;
	w->c.tx_bytes[p] += bytes;
	*driver_full = sent < n;
	return n;
}

/* The queue-0 owner sends what workers without a TX queue on the port queued. */
uint32_t
sgw_worker_drain_txrings(struct sgw_worker *w)
{
	uint32_t total = 0, b;
	uint16_t p, n;

	for (p = 0; p < w->dp->n_ports; p++) {
		bool full = false;

		if (!w->drains_txring[p])
			continue;
		for (b = 0; b < SGW_RING_BURSTS_PER_LOOP && !full; b++) {
			n = drain_txring_burst(w, p, &full);
			if (n == 0)
				break;
			total += n;
		}
	}
	return total;
}
