/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the in-process dataplane tests (and bench_dp_satlink) share: the EAL,
 * initialised once per binary without hugepages or devices, and net_ring
 * ports the test feeds and drains (rte_eth_from_rings).
 */
#ifndef SGW_TEST_DP_HARNESS_H
#define SGW_TEST_DP_HARNESS_H

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "sgw_dp.h"

namespace sgwtest {

/* The EAL once per binary: --no-huge --no-pci, lcores 0-1, its own file prefix. */
class EalEnv : public ::testing::Environment {
public:
	explicit EalEnv(std::string name) : name_(std::move(name)) {}
	void SetUp() override
	{
		std::string prefix = "sgw_" + name_ + "_" + std::to_string(getpid());
		const char *argv[] = {name_.c_str(), "--no-huge", "-m", "1024", "--no-pci",
				      "--file-prefix", prefix.c_str(), "-l", "0-1",
				      "--log-level", "warning"};
		int argc = sizeof(argv) / sizeof(argv[0]);
		ASSERT_GE(rte_eal_init(argc, const_cast<char **>(argv)), 0)
			<< "EAL init failed: " << rte_strerror(rte_errno);
	}
	void TearDown() override { rte_eal_cleanup(); }

private:
	std::string name_;
};

/* All of a packet's bytes, whatever its segments. */
static inline std::vector<uint8_t>
bytes_of(const struct rte_mbuf *m)
{
	std::vector<uint8_t> b(rte_pktmbuf_pkt_len(m));
	const void *d = rte_pktmbuf_read(m, 0, uint32_t(b.size()), b.data());

	if (d != b.data())
		memcpy(b.data(), d, b.size());
	return b;
}

/* One net_ring port: the test writes to rx, reads from tx. */
struct RingPort {
	std::string name;  /* the device name a policy uses (net_ring_<base>) */
	struct rte_ring *rx = nullptr, *tx = nullptr;
	uint16_t port_id = 0;

	void make(const std::string &base, unsigned int size = 4096)
	{
		rx = rte_ring_create((base + "_rx").c_str(), size, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
		tx = rte_ring_create((base + "_tx").c_str(), size, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
		ASSERT_NE(rx, nullptr);
		ASSERT_NE(tx, nullptr);
		int id = rte_eth_from_rings(base.c_str(), &rx, 1, &tx, 1, 0);
		ASSERT_GE(id, 0);
		port_id = uint16_t(id);
		char dev[RTE_ETH_NAME_MAX_LEN];
		ASSERT_EQ(rte_eth_dev_get_name_by_port(port_id, dev), 0);
		name = dev;
	}
	/* Everything the port sent (the caller owns the mbufs). */
	std::vector<struct rte_mbuf *> take()
	{
		std::vector<struct rte_mbuf *> v;
		void *o = nullptr;

		while (rte_ring_dequeue(tx, &o) == 0)
			v.push_back(static_cast<struct rte_mbuf *>(o));
		return v;
	}
	/* The rings only (their mbufs' pools may be gone already). */
	void free_rings()
	{
		rte_ring_free(rx);
		rte_ring_free(tx);
	}
	/* Free what is left on both rings, then the rings: while the pools live. */
	void free_all()
	{
		void *o = nullptr;

		for (auto *m : take())
			rte_pktmbuf_free(m);
		while (rte_ring_dequeue(rx, &o) == 0)
			rte_pktmbuf_free(static_cast<struct rte_mbuf *>(o));
		free_rings();
	}
};

/*
 * The accounting identity of the exit report (docs/operations.md, "Exit
 * report"), exactly: rx + originated == tx + dropped + consumed + held. With
 * at_exit (after sgw_dp_drain), nothing may be held any more. Call it with
 * the workers stopped, at the end of every test that ran a dataplane.
 */
static inline void
expect_accounted(const struct sgw_dp *dp, bool at_exit, const std::string &who = "")
{
	struct sgw_account a;

	if (dp->snap == NULL)
		return; /* never published: no worker ever ran */
	sgw_dp_account(dp, &a);
	uint64_t held = a.held_tx_buffers + a.held_rings + a.held_link + a.held_stages;
	std::string made, consumed, staged;
	for (uint16_t k = 0; k < a.n_orig; k++)
		made += std::string(" + ") + a.orig[k].name + " " + std::to_string(a.orig[k].v);
	for (uint16_t k = 0; k < a.n_cons; k++)
		consumed += std::string(" + ") + a.cons[k].name + " " + std::to_string(a.cons[k].v);
	for (uint16_t k = 0; k < a.n_held; k++)
		staged += std::string(", ") + a.held[k].name + " " + std::to_string(a.held[k].v);
	EXPECT_EQ(a.in, a.out)
		<< who << (at_exit ? " at exit" : " before the drain")
		<< ": rx " << a.rx << made << " != tx " << a.tx << " + drops " << a.drops
		<< " + link drops " << a.link_drops << consumed << " + held " << held
		<< " (tx buffers " << a.held_tx_buffers << ", rings " << a.held_rings << ", link "
		<< a.held_link << staged << ")";
	if (at_exit) {
		EXPECT_EQ(held, 0u) << who << ": still held after the shutdown drain";
	}
}

} // namespace sgwtest

#endif /* SGW_TEST_DP_HARNESS_H */
