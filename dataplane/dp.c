/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Dataplane setup and teardown: the mbuf pool, the ports (queues, symmetric
 * RSS where the device has it), the hand-off and TX rings, the workers with
 * their flow tables and timer wheels, RCU, and publishing policy snapshots.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mempool.h>
#include <rte_rcu_qsbr.h>
#include <rte_ring.h>

#include "flow_table.h"
#include "sgw_dp.h"
#include "sgw_timer_wheel.h"

RTE_LOG_REGISTER(sgw_logtype_dp, satgw.dataplane, INFO);
RTE_LOG_REGISTER(sgw_logtype_ctl, satgw.control, INFO);

/* A symmetric Toeplitz key (0x6d5a repeated): both directions hash alike. */
static uint8_t sym_rss_key[40] = {
	0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a,
	0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a,
	0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a,
	0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a,
};

/* Largest frame an MTU gives: Ethernet header, two VLAN tags, CRC. */
static uint32_t
frame_len_of_mtu(uint32_t mtu)
{
	return mtu + RTE_ETHER_HDR_LEN + 2 * RTE_VLAN_HLEN + RTE_ETHER_CRC_LEN;
}

/*
 * When any port's MTU needs frames longer than one mbuf, frames arrive as mbuf
 * chains and any port may have to send them: every port then needs
 * multi-segment TX (drivers' simple TX paths send only the first segment).
 */
static bool
policy_needs_chains(const struct sgw_policy *pol)
{
	uint16_t p;

	for (p = 0; p < pol->n_ports; p++)
		if (pol->ports[p].mtu != 0 &&
		    frame_len_of_mtu(pol->ports[p].mtu) > RTE_MBUF_DEFAULT_DATAROOM)
			return true;
	return false;
}

static int
port_init(struct sgw_dp *dp, const struct sgw_policy *pol, uint16_t pidx, bool chains)
{
	const struct sgw_port_conf *pc = &pol->ports[pidx];
	struct sgw_port_state *ps = &dp->ports[pidx];
	struct rte_eth_conf conf;
	struct rte_eth_dev_info info;
	uint16_t port_id, q, nrxd = pc->rx_desc, ntxd = pc->tx_desc;
	int rc;

	if (rte_eth_dev_get_port_by_name(pc->device, &port_id) != 0) {
		SGW_LOG(ERR, "port '%s': device '%s' not found (give it with --vdev or -a)",
			pc->name, pc->device);
		return -1;
	}
	if (dp->pidx_of[port_id] >= 0) {
		SGW_LOG(ERR, "port '%s': device '%s' is already port '%s'", pc->name, pc->device,
			pol->ports[dp->pidx_of[port_id]].name);
		return -1;
	}
	rc = rte_eth_dev_info_get(port_id, &info);
	if (rc != 0) {
		SGW_LOG(ERR, "port '%s': cannot read device info: %s", pc->name, rte_strerror(-rc));
		return -1;
	}
	ps->port_id = port_id;
	ps->opened = true;
	dp->pidx_of[port_id] = (int16_t)pidx;
	snprintf(ps->driver, sizeof(ps->driver), "%s", info.driver_name);

	memset(&conf, 0, sizeof(conf));
	ps->n_rxq = (uint16_t)RTE_MIN(dp->n_workers, info.max_rx_queues);
	ps->n_txq = (uint16_t)RTE_MIN(dp->n_workers, info.max_tx_queues);
	if (ps->n_rxq > 1 && (info.flow_type_rss_offloads & RTE_ETH_RSS_IP) != 0) {
		conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
		conf.rx_adv_conf.rss_conf.rss_key = sym_rss_key;
		conf.rx_adv_conf.rss_conf.rss_key_len = sizeof(sym_rss_key);
		conf.rx_adv_conf.rss_conf.rss_hf = (RTE_ETH_RSS_IP | RTE_ETH_RSS_TCP |
						    RTE_ETH_RSS_UDP) & info.flow_type_rss_offloads;
	} else if (ps->n_rxq > 1 && strcmp(info.driver_name, "net_af_packet") != 0) {
		/* No RSS: one queue, workers get their share through the hand-off rings. */
		ps->n_rxq = 1;
	}
	/* The NIC checks TCP checksums where it can (the split relies on them, split.c). */
	conf.rxmode.offloads |= info.rx_offload_capa & RTE_ETH_RX_OFFLOAD_TCP_CKSUM;
	if (pc->mtu != 0) {
		conf.rxmode.mtu = pc->mtu;
		if (frame_len_of_mtu(pc->mtu) > RTE_MBUF_DEFAULT_DATAROOM) {
			if (!(info.rx_offload_capa & RTE_ETH_RX_OFFLOAD_SCATTER)) {
				SGW_LOG(ERR, "port '%s': MTU %u needs frames in several mbufs and "
					"the device cannot scatter RX", pc->name, pc->mtu);
				return -1;
			}
			conf.rxmode.offloads |= RTE_ETH_RX_OFFLOAD_SCATTER;
		}
	}
	if (chains) {
		if (!(info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_MULTI_SEGS)) {
			SGW_LOG(ERR, "port '%s': jumbo MTU in this policy, but the device cannot "
				"send multi-segment frames", pc->name);
			return -1;
		}
		conf.txmode.offloads |= RTE_ETH_TX_OFFLOAD_MULTI_SEGS;
	} else if (info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE) {
		conf.txmode.offloads |= RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE;
	}

	rc = rte_eth_dev_configure(port_id, ps->n_rxq, ps->n_txq, &conf);
	if (rc != 0 && ps->n_rxq > 1) {
		SGW_LOG(WARNING, "port '%s': %u RX queues refused (%s), using one",
			pc->name, ps->n_rxq, rte_strerror(-rc));
		ps->n_rxq = 1;
		conf.rxmode.mq_mode = RTE_ETH_MQ_RX_NONE;
		rc = rte_eth_dev_configure(port_id, ps->n_rxq, ps->n_txq, &conf);
	}
	if (rc != 0) {
		SGW_LOG(ERR, "port '%s': configure failed: %s", pc->name, rte_strerror(-rc));
		return -1;
	}
	rc = rte_eth_dev_adjust_nb_rx_tx_desc(port_id, &nrxd, &ntxd);
	if (rc != 0) {
		SGW_LOG(ERR, "port '%s': descriptor counts: %s", pc->name, rte_strerror(-rc));
		return -1;
	}
	for (q = 0; q < ps->n_rxq; q++) {
		rc = rte_eth_rx_queue_setup(port_id, q, nrxd, rte_eth_dev_socket_id(port_id),
					    NULL, dp->pool);
		if (rc != 0) {
			SGW_LOG(ERR, "port '%s': RX queue %u: %s", pc->name, q, rte_strerror(-rc));
			return -1;
		}
	}
	for (q = 0; q < ps->n_txq; q++) {
		rc = rte_eth_tx_queue_setup(port_id, q, ntxd, rte_eth_dev_socket_id(port_id),
					    NULL);
		if (rc != 0) {
			SGW_LOG(ERR, "port '%s': TX queue %u: %s", pc->name, q, rte_strerror(-rc));
			return -1;
		}
	}
	rc = rte_eth_dev_start(port_id);
	if (rc != 0) {
		SGW_LOG(ERR, "port '%s': start failed: %s", pc->name, rte_strerror(-rc));
		return -1;
	}
	ps->started = true;
	if (pc->promiscuous) {
		rc = rte_eth_promiscuous_enable(port_id);
		if (rc != 0 && rc != -ENOTSUP)
			SGW_LOG(WARNING, "port '%s': promiscuous mode: %s", pc->name,
				rte_strerror(-rc));
	}
	rte_eth_macaddr_get(port_id, &ps->mac);
	SGW_LOG(INFO, "port '%s' (%s, %s): port %u, %u RX / %u TX queues, " RTE_ETHER_ADDR_PRT_FMT,
		pc->name, pc->device, ps->driver, port_id, ps->n_rxq, ps->n_txq,
		RTE_ETHER_ADDR_BYTES(&ps->mac));
	return 0;
}

static struct sgw_worker *
worker_create(struct sgw_dp *dp, const struct sgw_policy *pol, uint32_t idx, unsigned int lcore)
{
	int socket = (int)rte_lcore_to_socket_id(lcore);
	struct sgw_worker *w;
	char name[64];
	uint16_t p;

	w = rte_zmalloc_socket("sgw_worker", sizeof(*w), RTE_CACHE_LINE_SIZE, socket);
	if (w == NULL)
		return NULL;
	w->dp = dp;
	w->idx = idx;
	w->lcore = lcore;
	for (p = 0; p < dp->n_ports; p++) {
		const struct sgw_port_state *ps = &dp->ports[p];

		if (idx < ps->n_rxq) {
			w->rxq[w->n_rxq].port_id = ps->port_id;
			w->rxq[w->n_rxq].queue = (uint16_t)idx;
			w->rxq[w->n_rxq].pidx = p;
			w->n_rxq++;
		}
		w->txq[p] = idx < ps->n_txq ? (int32_t)idx : -1;
		w->drains_txring[p] = dp->txring[p] != NULL && idx == 0;
	}
	snprintf(name, sizeof(name), "sgwft_%s_%u", dp->instance, idx);
	w->flows = sgw_flow_table_create(name, pol->limits.flows_per_core,
					 (uint64_t)pol->limits.flow_idle_ms * 1000000ull, socket);
	if (w->flows == NULL) {
		SGW_LOG(ERR, "worker %u: cannot create a flow table of %u flows: %s", idx,
			pol->limits.flows_per_core, rte_strerror(rte_errno));
		goto fail;
	}
	w->tw = sgw_tw_create(pol->limits.timers_per_core,
			      (uint64_t)pol->workers.timer_tick_us * 1000ull, 0);
	if (w->tw == NULL) {
		SGW_LOG(ERR, "worker %u: cannot create a timer wheel of %u timers", idx,
			pol->limits.timers_per_core);
		goto fail;
	}
	w->ns_base_tsc = rte_rdtsc();
	w->ns_per_tsc = 1e9 / (double)dp->tsc_hz;
	return w;
fail:
	sgw_flow_table_free(w->flows);
	rte_free(w);
	return NULL;
}

/*
 * The TSC's rate, measured against CLOCK_MONOTONIC over 100 ms. DPDK's own
 * figure can be a rounded guess on a VM (seen: 2600 MHz for a TSC the kernel
 * measured at 2596.156 MHz), and every time the emulator and the timer wheel
 * derive from this: 0.15% off is 0.4 ms on a GEO round trip. Kept only when
 * it is within 5% of DPDK's (a wildly different figure means the clock or the
 * measurement is wrong, not the TSC).
 */
static uint64_t
measured_tsc_hz(void)
{
	uint64_t dpdk_hz = rte_get_tsc_hz(), t0, t1, hz;
	struct timespec a, b;
	double ns;

	if (clock_gettime(CLOCK_MONOTONIC, &a) != 0)
		return dpdk_hz;
	t0 = rte_rdtsc();
	rte_delay_us_sleep(100000);
	if (clock_gettime(CLOCK_MONOTONIC, &b) != 0)
		return dpdk_hz;
	t1 = rte_rdtsc();
	ns = (double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec);
	if (ns <= 0)
		return dpdk_hz;
	hz = (uint64_t)((double)(t1 - t0) * 1e9 / ns);
	if (hz < dpdk_hz - dpdk_hz / 20 || hz > dpdk_hz + dpdk_hz / 20) {
		SGW_LOG(WARNING, "TSC measured at %" PRIu64 " Hz, DPDK says %" PRIu64
			" Hz: using DPDK's", hz, dpdk_hz);
		return dpdk_hz;
	}
	SGW_LOG(INFO, "TSC %" PRIu64 " Hz (measured; DPDK says %" PRIu64 ")", hz, dpdk_hz);
	return hz;
}

int
sgw_dp_init(struct sgw_dp *dp, const struct sgw_policy *pol, uint32_t n_workers,
	    const unsigned int *lcores, bool bare_forward, const char *instance)
{
	char name[RTE_MEMPOOL_NAMESIZE];
	uint32_t i, cache;
	uint16_t p;
	bool chains;
	size_t sz;

	if (n_workers == 0 || n_workers > SGW_MAX_WORKERS) {
		SGW_LOG(ERR, "%u workers: must be 1..%u", n_workers, SGW_MAX_WORKERS);
		return -1;
	}
	dp->tsc_hz = measured_tsc_hz();
	dp->n_workers = n_workers;
	dp->bare_forward = bare_forward;
	snprintf(dp->instance, sizeof(dp->instance), "%s", instance);
	for (i = 0; i < RTE_MAX_ETHPORTS; i++)
		dp->pidx_of[i] = -1;
	for (i = 0; i < SGW_MAX_PORTS; i++)
		dp->emu_dir_of[i] = -1;

	cache = RTE_MIN(pol->limits.mbuf_cache, (uint32_t)RTE_MEMPOOL_CACHE_MAX_SIZE);
	cache = RTE_MIN(cache, pol->limits.mbufs / 2);
	snprintf(name, sizeof(name), "sgwmb_%s", dp->instance);
	dp->pool = rte_pktmbuf_pool_create(name, pol->limits.mbufs, cache, 0,
					   RTE_MBUF_DEFAULT_BUF_SIZE, (int)rte_socket_id());
	if (dp->pool == NULL) {
		SGW_LOG(ERR, "cannot create a pool of %u mbufs (%s): give the EAL more memory "
			"(-m) or lower limits.mbufs", pol->limits.mbufs, rte_strerror(rte_errno));
		return -1;
	}

	dp->n_ports = pol->n_ports;
	chains = policy_needs_chains(pol);
	for (p = 0; p < pol->n_ports; p++)
		if (port_init(dp, pol, p, chains) < 0)
			return -1;
	for (p = 0; p < pol->n_ports; p++) {
		if (dp->ports[p].n_txq >= n_workers)
			continue;
		snprintf(name, sizeof(name), "sgwtx_%s_%u", dp->instance, p);
		dp->txring[p] = rte_ring_create(name, pol->limits.ring_size, (int)rte_socket_id(),
						RING_F_SC_DEQ);
		if (dp->txring[p] == NULL) {
			SGW_LOG(ERR, "cannot create TX ring for port '%s': %s", pol->ports[p].name,
				rte_strerror(rte_errno));
			return -1;
		}
	}
	if (n_workers > 1) {
		for (i = 0; i < n_workers; i++) {
			snprintf(name, sizeof(name), "sgwin_%s_%u", dp->instance, i);
			dp->inring[i] = rte_ring_create(name, pol->limits.ring_size,
							(int)rte_socket_id(), RING_F_SC_DEQ);
			if (dp->inring[i] == NULL) {
				SGW_LOG(ERR, "cannot create hand-off ring %u: %s", i,
					rte_strerror(rte_errno));
				return -1;
			}
		}
	}
	for (i = 0; i < n_workers; i++) {
		dp->workers[i] = worker_create(dp, pol, i, lcores[i]);
		if (dp->workers[i] == NULL)
			return -1;
	}

	if (sgw_stages_init(dp, pol) < 0)
		return -1;
	if (pol->role == SGW_ROLE_EMULATOR) {
		if (n_workers > 1)
			SGW_LOG(WARNING, "role emulator runs on one worker; %u lcores idle",
				n_workers - 1);
		if (sgw_emu_init(dp, pol) < 0)
			return -1;
	}

	sz = rte_rcu_qsbr_get_memsize(n_workers);
	dp->rcu = rte_zmalloc("sgw_rcu", sz, RTE_CACHE_LINE_SIZE);
	if (dp->rcu == NULL || rte_rcu_qsbr_init(dp->rcu, n_workers) != 0) {
		SGW_LOG(ERR, "cannot set up RCU for %u workers", n_workers);
		return -1;
	}
	for (i = 0; i < n_workers; i++)
		rte_rcu_qsbr_thread_register(dp->rcu, i);
	return 0;
}

/* Fold an old snapshot's rule counters into the new one, by rule name. */
static void
carry_rule_counters(const struct sgw_snapshot *old, struct sgw_snapshot *cur)
{
	uint32_t r, q, w;

	for (r = 0; r < old->pol.n_rules; r++) {
		uint64_t pk = old->rule_base[r].pkts, by = old->rule_base[r].bytes;

		for (w = 0; w < old->n_workers; w++) {
			pk += old->rule_ctr[(size_t)w * old->pol.n_rules + r].pkts;
			by += old->rule_ctr[(size_t)w * old->pol.n_rules + r].bytes;
		}
		for (q = 0; q < cur->pol.n_rules; q++)
			if (strcmp(old->pol.rules[r].name, cur->pol.rules[q].name) == 0) {
				cur->rule_base[q].pkts += pk;
				cur->rule_base[q].bytes += by;
				break;
			}
	}
}

int
sgw_dp_publish(struct sgw_dp *dp, struct sgw_policy *pol, char *err, size_t errlen)
{
	struct sgw_snapshot *s, *old;

	s = sgw_snapshot_build(dp, pol, err, errlen);
	if (s == NULL)
		return -1;
	old = __atomic_exchange_n(&dp->snap, s, __ATOMIC_ACQ_REL);
	if (old != NULL) {
		/* Wait until no worker can still be reading the old snapshot. */
		rte_rcu_qsbr_synchronize(dp->rcu, RTE_QSBR_THRID_INVALID);
		carry_rule_counters(old, s);
		sgw_snapshot_free(old);
	}
	return 0;
}

/* Free what is left in a ring at exit, counted as shutdown drops. */
static void
free_ring(struct rte_ring *r, struct sgw_worker *w)
{
	struct rte_mbuf *m[64];
	unsigned int n, i;

	if (r == NULL)
		return;
	while ((n = rte_ring_dequeue_burst(r, (void **)m, RTE_DIM(m), NULL)) > 0) {
		for (i = 0; i < n; i++)
			rte_pktmbuf_free(m[i]);
		if (w != NULL)
			w->c.drop[SGW_DROP_SHUTDOWN] += n;
	}
}

void
sgw_dp_drain(struct sgw_dp *dp)
{
	uint32_t i;
	uint16_t p;

	/* Hand-off rings first: their packets are sent, not lost, on shutdown. */
	for (i = 0; i < dp->n_workers; i++) {
		struct sgw_worker *w = dp->workers[i];
		struct rte_mbuf *m[SGW_BURST_MAX];
		uint16_t n;

		if (w == NULL || dp->inring[i] == NULL || dp->snap == NULL)
			continue;
		while ((n = (uint16_t)rte_ring_dequeue_burst(dp->inring[i], (void **)m,
							     SGW_BURST_MAX, NULL)) > 0) {
			w->c.handoff_in += n;
			sgw_worker_process(w, dp->snap, m, n, false);
			sgw_worker_reinject_drain(w, dp->snap);
		}
	}
	/* Stages stop: counters published, what they hold freed (not sent). */
	sgw_stages_drain(dp);
	for (i = 0; i < dp->n_workers; i++)
		if (dp->workers[i] != NULL)
			sgw_worker_flush(dp->workers[i]);
	/* Send what the TX rings hold until they are empty or the drivers stop taking it. */
	for (i = 0; i < dp->n_workers; i++)
		if (dp->workers[i] != NULL)
			while (sgw_worker_drain_txrings(dp->workers[i]) > 0)
				;
	if (dp->emulator)
		sgw_emu_drop_held(dp);
	for (i = 0; i < dp->n_workers; i++)
		free_ring(dp->inring[i], dp->workers[i]);
	for (p = 0; p < dp->n_ports; p++)
		free_ring(dp->txring[p], dp->workers[0]);
}

void
sgw_dp_close_ports(struct sgw_dp *dp)
{
	uint16_t p;

	for (p = 0; p < dp->n_ports; p++) {
		struct sgw_port_state *ps = &dp->ports[p];

		if (!ps->opened)
			continue;
		/* Keep the device's last counters: they are reported after close. */
		rte_eth_stats_get(ps->port_id, &ps->final);
		if (ps->started)
			rte_eth_dev_stop(ps->port_id);
		ps->started = false;
		rte_eth_dev_close(ps->port_id);
		ps->opened = false;
	}
}

unsigned int
sgw_dp_fini(struct sgw_dp *dp)
{
	unsigned int in_use = 0;
	uint32_t i;
	uint16_t p;

	sgw_dp_close_ports(dp);
	sgw_emu_fini(dp);
	sgw_stages_fini(dp);
	for (p = 0; p < dp->n_ports; p++) {
		rte_ring_free(dp->txring[p]);
		dp->txring[p] = NULL;
	}
	for (i = 0; i < dp->n_workers; i++) {
		struct sgw_worker *w = dp->workers[i];

		rte_ring_free(dp->inring[i]);
		dp->inring[i] = NULL;
		if (w == NULL)
			continue;
		sgw_flow_table_free(w->flows);
		sgw_tw_destroy(w->tw);
		rte_free(w);
		dp->workers[i] = NULL;
	}
	sgw_snapshot_free(dp->snap);
	dp->snap = NULL;
	rte_free(dp->rcu);
	dp->rcu = NULL;
	if (dp->pool != NULL) {
		in_use = rte_mempool_in_use_count(dp->pool);
		rte_mempool_free(dp->pool);
		dp->pool = NULL;
	}
	return in_use;
}
