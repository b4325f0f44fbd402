/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Pipeline tests: the real dataplane (sgw_dp) in-process. The EAL is
 * initialised once per binary with --no-huge --no-pci; each test makes two
 * net_ring ports (rte_eth_from_rings), loads a YAML policy naming them, feeds
 * crafted frames into the RX rings, runs worker iterations and checks what
 * comes out of the TX rings byte for byte, the counters, and that every mbuf
 * is back in the pool at the end.
 */
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_eth_ring.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_ring.h>
#include <rte_telemetry.h>

#include "control.h"
#include "dp_harness.h"
#include "flow_table.h"
#include "pkt_build.h"
#include "policy_yaml.h"
#include "sgw_dp.h"
#include "stage.h"

using sgwtest::Frame;
using Bytes = std::vector<uint8_t>;

namespace {

const ::testing::Environment *const eal_env =
	::testing::AddGlobalTestEnvironment(new sgwtest::EalEnv("pipeline"));

int g_seq;

using sgwtest::RingPort;

class Pipeline : public ::testing::Test {
protected:
	RingPort a, b;
	std::unique_ptr<sgw_dp> dp{new sgw_dp()};
	uint32_t nworkers = 1;
	bool inited = false;

	void SetUp() override
	{
		int n = ++g_seq;
		a.make("pa" + std::to_string(n));
		b.make("pb" + std::to_string(n));
		memset(dp.get(), 0, sizeof(*dp));
	}

	void TearDown() override
	{
		if (inited) {
			sgwtest::expect_accounted(dp.get(), false);
			sgw_dp_drain(dp.get());
			sgwtest::expect_accounted(dp.get(), true);
			drain_tx(a);
			drain_tx(b);
			unsigned int in_use = sgw_dp_fini(dp.get());
			EXPECT_EQ(in_use, 0u) << "mbufs not returned to the pool";
		}
		a.free_rings();
		b.free_rings();
	}

	std::string ports_yaml(const char *peer_a = "sat", const char *peer_b = "terr")
	{
		return "version: 1\nrole: hub\nports:\n"
		       "  - {name: terr, device: " + a.name + ", role: terrestrial, peer: " +
		       peer_a + "}\n"
		       "  - {name: sat, device: " + b.name + ", role: satellite, peer: " + peer_b +
		       "}\n";
	}

	void start(const std::string &yaml, uint32_t workers = 1)
	{
		struct sgw_policy pol;
		struct sgw_cfg_errors errs;
		char err[256] = "";
		unsigned int lcores[2] = {0, 1};

		nworkers = workers;
		ASSERT_EQ(sgw_policy_load_buffer("test.yaml", yaml.data(), yaml.size(), &pol, &errs),
			  0) << (errs.n ? errs.e[0].msg : "?") << " at " << (errs.n ? errs.e[0].line : 0)
			     << "\n" << yaml;
		ASSERT_EQ(sgw_dp_init(dp.get(), &pol, workers, lcores, false,
				      std::to_string(g_seq).c_str()), 0);
		inited = true;
		ASSERT_EQ(sgw_dp_publish(dp.get(), &pol, err, sizeof(err)), 0) << err;
		sgw_policy_free(&pol);
	}

	void reload(const std::string &yaml)
	{
		struct sgw_policy pol;
		struct sgw_cfg_errors errs;
		char err[256] = "";

		ASSERT_EQ(sgw_policy_load_buffer("r.yaml", yaml.data(), yaml.size(), &pol, &errs), 0);
		ASSERT_EQ(sgw_dp_publish(dp.get(), &pol, err, sizeof(err)), 0) << err;
		sgw_policy_free(&pol);
	}

	void send(RingPort &p, const Bytes &frame)
	{
		struct rte_mbuf *m = rte_pktmbuf_alloc(dp->pool);
		ASSERT_NE(m, nullptr);
		char *d = rte_pktmbuf_append(m, uint16_t(frame.size()));
		ASSERT_NE(d, nullptr);
		memcpy(d, frame.data(), frame.size());
		ASSERT_EQ(rte_ring_enqueue(p.rx, m), 0);
	}

	/* frame as a chain of mbufs cut at the given offsets (ascending, inside it). */
	void send_segs(RingPort &p, const Bytes &frame, const std::vector<size_t> &cuts)
	{
		struct rte_mbuf *head = nullptr;
		size_t from = 0;

		for (size_t k = 0; k <= cuts.size(); k++) {
			size_t to = k < cuts.size() ? cuts[k] : frame.size();
			struct rte_mbuf *m = rte_pktmbuf_alloc(dp->pool);
			ASSERT_NE(m, nullptr);
			ASSERT_GT(to, from);
			char *d = rte_pktmbuf_append(m, uint16_t(to - from));
			ASSERT_NE(d, nullptr);
			memcpy(d, &frame[from], to - from);
			if (head == nullptr)
				head = m;
			else
				ASSERT_EQ(rte_pktmbuf_chain(head, m), 0);
			from = to;
		}
		ASSERT_EQ(head->nb_segs, cuts.size() + 1);
		ASSERT_EQ(rte_ring_enqueue(p.rx, head), 0);
	}

	/* Run every worker until the RX rings are empty (and a few more rounds, for
	 * hand-offs), then flush TX. */
	void run(int rounds = 3)
	{
		for (int r = 0; r < rounds || !rte_ring_empty(a.rx) || !rte_ring_empty(b.rx); r++)
			for (uint32_t w = 0; w < nworkers; w++)
				sgw_worker_iter(dp->workers[w], rte_rdtsc());
		for (uint32_t w = 0; w < nworkers; w++)
			sgw_worker_flush(dp->workers[w]);
		for (uint32_t w = 0; w < nworkers; w++)
			sgw_worker_drain_txrings(dp->workers[w]);
	}

	std::vector<Bytes> recv(RingPort &p)
	{
		std::vector<Bytes> out;
		void *o = nullptr;

		while (rte_ring_dequeue(p.tx, &o) == 0) {
			struct rte_mbuf *m = static_cast<struct rte_mbuf *>(o);
			out.push_back(sgwtest::bytes_of(m));
			rte_pktmbuf_free(m);
		}
		return out;
	}

	void drain_tx(RingPort &p) { recv(p); }

	sgw_counters sum()
	{
		sgw_counters c;
		sgw_counters_sum(dp.get(), &c);
		return c;
	}

	uint64_t rule_pkts(uint32_t r)
	{
		uint64_t pk, by;
		sgw_rule_totals(dp->snap, r, &pk, &by);
		return pk;
	}
};

TEST_F(Pipeline, TransparentForwardIsByteExactBothWays)
{
	start(ports_yaml());
	Frame f;
	Bytes down = sgwtest::build(f);
	std::swap(f.src, f.dst);
	std::swap(f.sport, f.dport);
	f.payload = 100;
	Bytes up = sgwtest::build(f);

	send(a, down);
	send(b, up);
	run();
	auto out_b = recv(b), out_a = recv(a);
	ASSERT_EQ(out_b.size(), 1u);
	ASSERT_EQ(out_a.size(), 1u);
	EXPECT_EQ(out_b[0], down);
	EXPECT_EQ(out_a[0], up);
	sgw_counters c = sum();
	EXPECT_EQ(c.rx_pkts[0], 1u);
	EXPECT_EQ(c.tx_pkts[1], 1u);
	EXPECT_EQ(c.rx_pkts[1], 1u);
	EXPECT_EQ(c.tx_pkts[0], 1u);
	EXPECT_EQ(c.tx_bytes[1], down.size());
	EXPECT_EQ(c.cls_pkts[SGW_CLASS_TCP], 2u);
	/* Both directions are one flow. */
	EXPECT_EQ(c.flows_created, 1u);
	EXPECT_EQ(c.flow_hits, 1u);
	EXPECT_EQ(c.unmatched, 2u);
	EXPECT_EQ(c.act[SGW_ACT_FORWARD], 2u);
}

TEST_F(Pipeline, NextHopRewritesOnlyTheMacs)
{
	start(ports_yaml() +
	      "next_hops:\n  - {name: modem, port: sat, mac: \"02:11:22:33:44:55\"}\n"
	      "rules:\n  - {name: to-modem, match: {dst: [10.20.0.0/16]}, action: forward, "
	      "next_hop: modem}\n");
	Frame f;
	Bytes in = sgwtest::build(f);
	send(a, in);
	run();
	auto out = recv(b);
	ASSERT_EQ(out.size(), 1u);
	Bytes want = in;
	const uint8_t nh[6] = {0x02, 0x11, 0x22, 0x33, 0x44, 0x55};
	memcpy(&want[0], nh, 6);
	memcpy(&want[6], dp->ports[1].mac.addr_bytes, 6);
	EXPECT_EQ(out[0], want);
	EXPECT_EQ(rule_pkts(0), 1u);
}

TEST_F(Pipeline, DropRuleDropsAndCounts)
{
	start(ports_yaml() +
	      "rules:\n  - {name: no-telnet, match: {proto: [tcp], dst_ports: [23]}, action: drop}\n"
	      "  - {name: rest, action: count}\n");
	Frame f;
	f.dport = 23;
	send(a, sgwtest::build(f));
	f.dport = 22;
	Bytes ssh = sgwtest::build(f);
	send(a, ssh);
	run();
	auto out = recv(b);
	ASSERT_EQ(out.size(), 1u);
	EXPECT_EQ(out[0], ssh);
	sgw_counters c = sum();
	EXPECT_EQ(c.drop[SGW_DROP_RULE], 1u);
	EXPECT_EQ(c.act[SGW_ACT_DROP], 1u);
	EXPECT_EQ(c.act[SGW_ACT_COUNT], 1u);
	EXPECT_EQ(rule_pkts(0), 1u);
	EXPECT_EQ(rule_pkts(1), 1u);
}

TEST_F(Pipeline, DefaultActionDropAppliesToUnmatchedOnly)
{
	start(ports_yaml() + "default_action: drop\n"
	      "rules:\n  - {name: esp, match: {proto: [esp]}, action: forward}\n");
	Frame f;
	send(a, sgwtest::build(f)); /* TCP: unmatched, dropped */
	f.proto = 50;
	Bytes esp = sgwtest::build(f);
	send(a, esp);
	f.esp_in_udp = true; /* ESP in UDP 4500 matches proto esp too */
	Bytes natt = sgwtest::build(f);
	send(a, natt);
	run();
	auto out = recv(b);
	ASSERT_EQ(out.size(), 2u);
	EXPECT_EQ(out[0], esp);
	EXPECT_EQ(out[1], natt);
	sgw_counters c = sum();
	EXPECT_EQ(c.drop[SGW_DROP_DEFAULT], 1u);
	EXPECT_EQ(c.cls_pkts[SGW_CLASS_ESP], 2u);
}

TEST_F(Pipeline, MalformedDroppedAndCountedByReason)
{
	start(ports_yaml());
	Frame f;
	Bytes good = sgwtest::build(f);
	Bytes bad_ihl = good;
	bad_ihl[14] = 0x44; /* IHL 4 */
	Bytes trunc(good.begin(), good.begin() + 20); /* 6 bytes of IPv4 header */
	send(a, bad_ihl);
	send(a, trunc);
	send(a, good);
	run();
	auto out = recv(b);
	ASSERT_EQ(out.size(), 1u);
	EXPECT_EQ(out[0], good);
	sgw_counters c = sum();
	EXPECT_EQ(c.malformed[SGW_PR_IP4_BAD_IHL], 1u);
	EXPECT_EQ(c.malformed[SGW_PR_IP4_TRUNC], 1u);
	EXPECT_EQ(c.drop[SGW_DROP_MALFORMED], 2u);
	EXPECT_EQ(c.cls_pkts[SGW_CLASS_MALFORMED], 2u);
}

TEST_F(Pipeline, MalformedForwardedUntouchedWhenPolicySaysSo)
{
	start(ports_yaml() + "malformed: forward\n");
	Frame f;
	Bytes bad = sgwtest::build(f);
	bad[14] = 0x4f; /* IHL 15: 60 bytes, past the frame's IPv4 total length */
	bad[16] = 0;
	bad[17] = 30;
	send(a, bad);
	run();
	auto out = recv(b);
	ASSERT_EQ(out.size(), 1u);
	EXPECT_EQ(out[0], bad);
	sgw_counters c = sum();
	EXPECT_EQ(c.cls_pkts[SGW_CLASS_MALFORMED], 1u);
	EXPECT_EQ(c.drop[SGW_DROP_MALFORMED], 0u);
}

TEST_F(Pipeline, JumboFrameInChainedMbufsIsForwardedWhole)
{
	start(ports_yaml() + "rules:\n  - {name: web, match: {proto: [tcp], dst_ports: [80]}, "
	      "action: count}\n");
	Frame f;
	f.payload = 8000;
	Bytes frame = sgwtest::build(f);
	/* Three segments of at most 2048 bytes, as a PMD with scattered RX gives them. */
	struct rte_mbuf *head = nullptr;
	for (size_t off = 0; off < frame.size(); off += 2048) {
		struct rte_mbuf *m = rte_pktmbuf_alloc(dp->pool);
		ASSERT_NE(m, nullptr);
		size_t n = std::min<size_t>(2048, frame.size() - off);
		memcpy(rte_pktmbuf_append(m, uint16_t(n)), &frame[off], n);
		if (head == nullptr)
			head = m;
		else
			ASSERT_EQ(rte_pktmbuf_chain(head, m), 0);
	}
	ASSERT_GT(head->nb_segs, 1);
	ASSERT_EQ(rte_ring_enqueue(a.rx, head), 0);
	run();
	auto out = recv(b);
	ASSERT_EQ(out.size(), 1u);
	EXPECT_EQ(out[0], frame);
	sgw_counters c = sum();
	EXPECT_EQ(c.cls_pkts[SGW_CLASS_TCP], 1u);
	EXPECT_EQ(c.cls_bytes[SGW_CLASS_TCP], frame.size());
	EXPECT_EQ(rule_pkts(0), 1u);
}

/*
 * Issue 11, defect 3: headers that run past the first segment of a chained
 * mbuf are read across segments. The frame of the report: a valid 250-byte
 * hop-by-hop option in a 2,082-byte IPv6/TCP frame, cut inside the chain (and
 * inside the fixed IPv6 header, the TCP header, its options; and in three).
 */
TEST_F(Pipeline, Ip6ExtensionChainAcrossSegmentsIsForwarded)
{
	start(ports_yaml() + "rules:\n  - {name: web, match: {proto: [tcp], dst_ports: [80]}, "
	      "action: count}\n");
	Frame f;
	f.ip_ver = 6;
	f.src = "2001:db8::10";
	f.dst = "2001:db8:1::5";
	f.payload = 1740;
	ASSERT_EQ(sgwtest::with_ip6_hbh(sgwtest::build(f), 250).size(), 2082u);
	/* hop-by-hop at 54..310, TCP at 310..342 (options from 330) */
	const std::vector<std::vector<size_t>> cuts = {
		{154}, {40}, {300}, {320}, {335}, {60, 200}};
	std::vector<Bytes> sent;
	/* Each split frame followed by a whole one of the same flow: order is kept. */
	for (size_t k = 0; k < cuts.size(); k++) {
		f.seq = uint32_t(1000 + 2 * k);
		sent.push_back(sgwtest::with_ip6_hbh(sgwtest::build(f), 250));
		send_segs(a, sent.back(), cuts[k]);
		f.seq++;
		f.payload = 1000; /* in one 2 KB mbuf */
		sent.push_back(sgwtest::with_ip6_hbh(sgwtest::build(f), 250));
		send(a, sent.back());
		f.payload = 1740;
	}
	/* A 1,000-byte option: a chain of 1,008 bytes, cut past the first 512. */
	f.payload = 900;
	sent.push_back(sgwtest::with_ip6_hbh(sgwtest::build(f), 1000));
	send_segs(a, sent.back(), {600});
	run();
	auto out = recv(b);
	ASSERT_EQ(out.size(), sent.size());
	for (size_t k = 0; k < sent.size(); k++)
		EXPECT_EQ(out[k], sent[k]) << "frame " << k;
	sgw_counters c = sum();
	EXPECT_EQ(c.cls_pkts[SGW_CLASS_TCP], sent.size());
	EXPECT_EQ(c.cls_pkts[SGW_CLASS_MALFORMED], 0u);
	EXPECT_EQ(c.malformed[SGW_PR_IP6_EXT_TRUNC], 0u);
	EXPECT_EQ(c.flows_created, 1u);
	EXPECT_EQ(rule_pkts(0), sent.size());
}

/* The same for IPv4 options and TCP options cut across segments. */
TEST_F(Pipeline, Ip4AndTcpOptionsAcrossSegmentsAreForwarded)
{
	start(ports_yaml() + "rules:\n  - {name: web, match: {proto: [tcp], dst_ports: [80]}, "
	      "action: count}\n");
	Frame f;
	f.payload = 1400;
	Bytes plain = sgwtest::build(f); /* TCP at 34..66, options from 54 */
	Bytes opts = sgwtest::with_ip4_options(plain, 40); /* options 34..74, TCP 74..106 */
	send_segs(a, plain, {40});  /* in the TCP header */
	send_segs(a, plain, {60});  /* in the TCP options */
	send_segs(a, opts, {30});   /* in the fixed IPv4 header */
	send_segs(a, opts, {50});   /* in the IPv4 options */
	send_segs(a, opts, {100});  /* in the TCP options after them */
	run();
	auto out = recv(b);
	ASSERT_EQ(out.size(), 5u);
	EXPECT_EQ(out[0], plain);
	EXPECT_EQ(out[1], plain);
	EXPECT_EQ(out[2], opts);
	EXPECT_EQ(out[3], opts);
	EXPECT_EQ(out[4], opts);
	sgw_counters c = sum();
	EXPECT_EQ(c.cls_pkts[SGW_CLASS_TCP], 5u);
	EXPECT_EQ(c.cls_pkts[SGW_CLASS_MALFORMED], 0u);
	EXPECT_EQ(rule_pkts(0), 5u);
}

/*
 * ESP-in-UDP cut one byte into the UDP payload, that byte 0xff: not a
 * NAT-keepalive (that is a 1-byte datagram), ESP with SPI 0xff000001.
 */
TEST_F(Pipeline, EspInUdpAcrossSegmentsIsEsp)
{
	start(ports_yaml());
	Frame f;
	f.proto = 50;
	f.esp_in_udp = true;
	f.spi = 0xff000001;
	f.payload = 1000;
	Bytes frame = sgwtest::build(f); /* UDP at 34, ESP at 42 */
	send_segs(a, frame, {43});
	send_segs(a, frame, {45});
	run();
	auto out = recv(b);
	ASSERT_EQ(out.size(), 2u);
	EXPECT_EQ(out[0], frame);
	EXPECT_EQ(out[1], frame);
	sgw_counters c = sum();
	EXPECT_EQ(c.cls_pkts[SGW_CLASS_ESP], 2u);
	EXPECT_EQ(c.cls_pkts[SGW_CLASS_UDP], 0u);
	EXPECT_EQ(c.cls_pkts[SGW_CLASS_MALFORMED], 0u);
}

/* Real truncations in chained mbufs keep their reason. */
TEST_F(Pipeline, TruncatedHeadersAcrossSegmentsKeepTheirReason)
{
	start(ports_yaml());
	Frame f;
	f.ip_ver = 6;
	f.src = "2001:db8::10";
	f.dst = "2001:db8:1::5";
	f.payload = 1740;
	Bytes full = sgwtest::with_ip6_hbh(sgwtest::build(f), 250);
	/* The payload length ends inside the 256-byte hop-by-hop header. */
	Bytes ext_cut(full.begin(), full.begin() + 14 + 40 + 200);
	ext_cut[18] = 0;
	ext_cut[19] = 200;
	/* ... inside the TCP header (10 of its 32 bytes). */
	Bytes tcp_cut(full.begin(), full.begin() + 14 + 40 + 256 + 10);
	tcp_cut[18] = 1;
	tcp_cut[19] = 10;
	/* IPv4: TCP data offset 15 (60 bytes) past the 40 bytes of IP payload. */
	Frame f4;
	Bytes doff = sgwtest::build(f4);
	doff.resize(14 + 20 + 40, 0);
	doff[16] = 0;
	doff[17] = 60;
	doff[14 + 20 + 12] = 0xf0;
	/* A 1,008-byte hop-by-hop header in a 754-byte frame: past both reads. */
	f.payload = 900;
	Bytes long_cut = sgwtest::with_ip6_hbh(sgwtest::build(f), 1000);
	long_cut.resize(14 + 40 + 700);
	long_cut[18] = 700 >> 8;
	long_cut[19] = 700 & 0xff;
	send_segs(a, ext_cut, {154});
	send_segs(a, tcp_cut, {154});
	send_segs(a, doff, {40});
	send_segs(a, long_cut, {154});
	run();
	EXPECT_EQ(recv(b).size(), 0u);
	sgw_counters c = sum();
	EXPECT_EQ(c.malformed[SGW_PR_IP6_EXT_TRUNC], 2u);
	EXPECT_EQ(c.malformed[SGW_PR_TCP_TRUNC], 1u);
	EXPECT_EQ(c.malformed[SGW_PR_TCP_BAD_DOFF], 1u);
	EXPECT_EQ(c.drop[SGW_DROP_MALFORMED], 4u);
	EXPECT_EQ(c.cls_pkts[SGW_CLASS_MALFORMED], 4u);
}

TEST_F(Pipeline, ClassesOfAMixedBurst)
{
	start(ports_yaml());
	std::vector<Bytes> sent;
	Frame f;
	sent.push_back(sgwtest::build(f)); /* tcp */
	f.proto = 17;
	f.dport = 53;
	sent.push_back(sgwtest::build(f)); /* udp */
	f.proto = 50;
	sent.push_back(sgwtest::build(f)); /* esp */
	f.proto = 1;
	sent.push_back(sgwtest::build(f)); /* icmp */
	f = Frame();
	f.ip_ver = 6;
	f.src = "2001:db8::1";
	f.dst = "2001:db8:1::5";
	sent.push_back(sgwtest::build(f)); /* tcp over v6 */
	f = Frame();
	f.vlans = {100, 200};
	f.proto = 17;
	sent.push_back(sgwtest::build(f)); /* udp in QinQ */
	sent.push_back(sgwtest::arp_request()); /* non-ip */
	f = Frame();
	f.proto = 253; /* LIFT: 8-byte header present */
	f.payload = 8;
	sent.push_back(sgwtest::build(f));
	for (auto &p : sent)
		send(a, p);
	run();
	auto out = recv(b);
	ASSERT_EQ(out.size(), sent.size());
	/* Stages run class by class, so order may differ: compare as sets. */
	std::multiset<Bytes> want(sent.begin(), sent.end()), got(out.begin(), out.end());
	EXPECT_EQ(got, want);
	sgw_counters c = sum();
	EXPECT_EQ(c.cls_pkts[SGW_CLASS_TCP], 2u);
	EXPECT_EQ(c.cls_pkts[SGW_CLASS_UDP], 2u);
	EXPECT_EQ(c.cls_pkts[SGW_CLASS_ESP], 1u);
	EXPECT_EQ(c.cls_pkts[SGW_CLASS_ICMP], 1u);
	EXPECT_EQ(c.cls_pkts[SGW_CLASS_NON_IP], 1u);
	EXPECT_EQ(c.cls_pkts[SGW_CLASS_LIFT], 1u);
	EXPECT_EQ(c.flows_created, 5u); /* tcp, udp/53, esp, v6 tcp, QinQ udp/80 */
}

TEST_F(Pipeline, RuleMatchesTerminalAndDscp)
{
	start(ports_yaml() +
	      "terminals:\n  - {name: site-a, id: 7, prefixes: [10.20.1.0/24]}\n"
	      "  - {name: site-b, id: 8, prefixes: [10.20.2.0/24]}\n"
	      "rules:\n  - {name: ef-b, match: {terminal: site-b, dscp: [46]}, action: drop}\n"
	      "  - {name: site-a, match: {terminal: site-a}, action: count}\n");
	Frame f;
	f.dst = "10.20.2.9";
	f.dscp = 46;
	send(a, sgwtest::build(f)); /* site-b EF: dropped */
	f.dscp = 0;
	Bytes be = sgwtest::build(f);
	send(a, be); /* same flow, best effort: not dropped (DSCP is per packet) */
	f.dst = "10.20.1.9";
	f.dscp = 46;
	Bytes sa = sgwtest::build(f);
	send(a, sa);
	/* From the satellite side the terminal is the source. */
	f = Frame();
	f.src = "10.20.2.9";
	f.dst = "198.51.100.10";
	f.dscp = 46;
	send(b, sgwtest::build(f));
	run();
	auto out = recv(b);
	ASSERT_EQ(out.size(), 2u);
	EXPECT_EQ(recv(a).size(), 0u);
	EXPECT_EQ(rule_pkts(0), 2u);
	EXPECT_EQ(rule_pkts(1), 1u);
}

TEST_F(Pipeline, IdleFlowsExpireOnTheTimerWheel)
{
	start(ports_yaml() + "limits: {flow_idle_ms: 1000}\n");
	Frame f;
	for (int i = 0; i < 10; i++) {
		f.sport = uint16_t(1000 + i);
		send(a, sgwtest::build(f));
	}
	run();
	EXPECT_EQ(recv(b).size(), 10u);
	EXPECT_EQ(dp->workers[0]->flows->active, 10u);
	sgw_worker *w = dp->workers[0];
	uint64_t hz = rte_get_tsc_hz();
	/* 0.5 s later: still there. */
	sgw_worker_iter(w, rte_rdtsc() + hz / 2);
	EXPECT_EQ(w->flows->active, 10u);
	/* Two seconds later (in virtual time, in bounded batches): all gone. */
	for (int i = 0; i < 10; i++)
		sgw_worker_iter(w, rte_rdtsc() + 2 * hz);
	EXPECT_EQ(w->flows->active, 0u);
	EXPECT_EQ(sum().flows_expired, 10u);
}

TEST_F(Pipeline, FullFlowTableBypassesButForwardsEverything)
{
	start(ports_yaml() + "limits: {flows_per_core: 1024, timers_per_core: 1024}\n");
	Frame f;
	const int n = 1500;
	int sent = 0;
	for (int i = 0; i < n; i++) {
		f.sport = uint16_t(2000 + i);
		send(a, sgwtest::build(f));
		sent++;
		if (sent % 64 == 0) {
			run(1);
			recv(b);
		}
	}
	run();
	recv(b);
	sgw_counters c = sum();
	EXPECT_EQ(c.tx_pkts[1], uint64_t(n));
	EXPECT_GT(c.flows_bypassed, 0u);
	EXPECT_EQ(c.flows_created + c.flows_bypassed, uint64_t(n));
	EXPECT_LE(dp->workers[0]->flows->active, 1024u + 64u);
}

TEST_F(Pipeline, TwoWorkersHandOffByTerminalAndShareOneTxQueue)
{
	/* One RX and one TX queue per port, two workers: worker 0 reads, hands off. */
	std::string y = ports_yaml() + "terminals:\n";
	for (int t = 0; t < 16; t++)
		y += "  - {name: t" + std::to_string(t) + ", id: " + std::to_string(100 + t) +
		     ", prefixes: [10.20." + std::to_string(t) + ".0/24]}\n";
	start(y, 2);
	std::vector<Bytes> sent;
	Frame f;
	for (int t = 0; t < 16; t++) {
		f.dst = "10.20." + std::to_string(t) + ".1";
		sent.push_back(sgwtest::build(f));
		send(a, sent.back());
	}
	run(4);
	auto out = recv(b);
	std::multiset<Bytes> want(sent.begin(), sent.end()), got(out.begin(), out.end());
	EXPECT_EQ(got, want);
	sgw_counters c = sum();
	EXPECT_GT(c.handoff_out, 0u);
	EXPECT_EQ(c.handoff_out, c.handoff_in);
	EXPECT_EQ(dp->workers[0]->c.handoff_out + dp->workers[0]->c.flows_created, 16u);
	EXPECT_EQ(dp->workers[1]->c.flows_created, dp->workers[0]->c.handoff_out);
	/* Each terminal's flows live on the worker the shard function names. */
	for (int t = 0; t < 16; t++)
		EXPECT_LT(sgw_terminal_shard(uint32_t(100 + t), 2), 2u);
}

/* Packets still in hand-off and TX rings at shutdown are sent, not silently lost. */
TEST_F(Pipeline, ShutdownDrainSendsEveryQueuedPacket)
{
	std::string y = ports_yaml() + "terminals:\n";
	uint32_t id = 0;
	/* A terminal that worker 1 owns: its packets all go through the hand-off ring. */
	for (id = 1; sgw_terminal_shard(id, 2) != 1; id++)
		;
	y += "  - {name: t1, id: " + std::to_string(id) + ", prefixes: [10.20.1.0/24]}\n";
	start(y, 2);
	Frame f;
	const int n = 1000;
	for (int i = 0; i < n; i++) {
		f.sport = uint16_t(3000 + i);
		send(a, sgwtest::build(f));
	}
	/* Only worker 0 runs: it reads everything and hands it all to worker 1. */
	while (!rte_ring_empty(a.rx))
		sgw_worker_iter(dp->workers[0], rte_rdtsc());
	EXPECT_EQ(dp->workers[0]->c.handoff_out, uint64_t(n));
	EXPECT_EQ(rte_ring_count(dp->inring[1]), unsigned(n));
	sgw_dp_drain(dp.get());
	EXPECT_EQ(recv(b).size(), size_t(n));
	sgw_counters c = sum();
	EXPECT_EQ(c.tx_pkts[1], uint64_t(n));
	EXPECT_EQ(c.drop[SGW_DROP_SHUTDOWN], 0u);
	EXPECT_EQ(c.drop[SGW_DROP_TX_FULL], 0u);
}

/* A worker on lcore 1 forwards while the main thread reloads the policy 100 times. */
TEST_F(Pipeline, HundredReloadsWhileForwardingLoseNothing)
{
	const std::string base = ports_yaml() + "workers: {idle_backoff_us: 0}\n";
	const std::string v1 = base + "rules:\n  - {name: web, match: {dst_ports: [80]}, action: count}\n";
	const std::string v2 = base + "rules:\n  - {name: other, match: {dst_ports: [443]}, "
				      "action: drop}\n  - {name: web, match: {dst_ports: [80]}, action: count}\n";
	start(v1);
	ASSERT_EQ(rte_eal_remote_launch(sgw_worker_main, dp->workers[0], 1), 0);

	const uint64_t total = 200000;
	uint64_t sent = 0, got = 0;
	int reloads = 0;
	Frame f;
	Bytes frame = sgwtest::build(f);
	uint64_t deadline = rte_rdtsc() + 60 * rte_get_tsc_hz();
	while ((sent < total || got < total) && rte_rdtsc() < deadline) {
		struct rte_mbuf *m[32];
		unsigned int n = 0;
		/*
		 * Keep at most 2048 packets in flight: while this thread waits out an
		 * RCU grace period it does not drain the TX ring, and a full TX ring
		 * is a (counted) drop, like a NIC's full TX queue.
		 */
		unsigned int want = unsigned(std::min<uint64_t>(32, total - sent));
		if (sent - got > 2048)
			want = 0;
		if (want > 0 && rte_pktmbuf_alloc_bulk(dp->pool, m, want) == 0) {
			for (n = 0; n < want; n++) {
				char *d = rte_pktmbuf_append(m[n], uint16_t(frame.size()));
				memcpy(d, frame.data(), frame.size());
			}
			unsigned int q = rte_ring_enqueue_burst(a.rx, (void **)m, want, nullptr);
			for (unsigned int i = q; i < want; i++)
				rte_pktmbuf_free(m[i]);
			sent += q;
		}
		void *o[64];
		unsigned int k = rte_ring_dequeue_burst(b.tx, o, 64, nullptr);
		for (unsigned int i = 0; i < k; i++)
			rte_pktmbuf_free(static_cast<rte_mbuf *>(o[i]));
		got += k;
		if (reloads < 100 && sent >= uint64_t(reloads + 1) * (total / 101)) {
			reload(reloads % 2 ? v1 : v2);
			reloads++;
		}
	}
	__atomic_store_n(&dp->quit, 1, __ATOMIC_RELAXED);
	rte_eal_wait_lcore(1);
	EXPECT_EQ(reloads, 100);
	EXPECT_EQ(got, total);
	sgw_counters c = sum();
	for (unsigned int d = 0; d < sgw_drop_count(); d++)
		EXPECT_EQ(c.drop[d], 0u) << sgw_drop_name(d);
	EXPECT_EQ(c.rx_pkts[0], total);
	EXPECT_EQ(c.tx_pkts[1], total);
	EXPECT_EQ(dp->snap->gen, 101u);
	/* Rule 'web' counters survive every swap: every packet was counted once. */
	uint32_t web = dp->snap->pol.n_rules - 1;
	EXPECT_STREQ(dp->snap->pol.rules[web].name, "web");
	EXPECT_EQ(rule_pkts(web), total);
}

TEST_F(Pipeline, ReloadRefusesRestartOnlyChanges)
{
	start(ports_yaml());
	struct sgw_policy cur, next;
	struct sgw_cfg_errors errs;
	std::string y1 = ports_yaml(), y2 = ports_yaml() + "limits: {mbufs: 4095}\n";
	char why[256] = "";
	ASSERT_EQ(sgw_policy_load_buffer("a", y1.data(), y1.size(), &cur, &errs), 0);
	ASSERT_EQ(sgw_policy_load_buffer("b", y2.data(), y2.size(), &next, &errs), 0);
	EXPECT_EQ(sgw_policy_restart_diff(&cur, &cur, why, sizeof(why)), 0);
	EXPECT_EQ(sgw_policy_restart_diff(&cur, &next, why, sizeof(why)), 1);
	EXPECT_NE(std::string(why).find("limits"), std::string::npos);
	sgw_policy_free(&cur);
	sgw_policy_free(&next);
}

/* The whole satlink section and, with it, the set of terminal ids need a restart. */
std::string
satlink_policy(const std::string &satlink, const std::string &terminals,
	       const std::string &rules = "")
{
	return "version: 1\nrole: hub\nports:\n"
	       "  - {name: terr, device: d0, role: terrestrial, peer: sat}\n"
	       "  - {name: sat, device: d1, role: satellite, peer: terr}\n"
	       "terminals:\n" + terminals + (satlink.empty() ? "" : "satlink:\n" + satlink) +
	       rules;
}

/* 1 and the message, or 0. */
int
restart_diff(const std::string &a, const std::string &b, std::string *why)
{
	struct sgw_policy cur, next;
	struct sgw_cfg_errors errs;
	char buf[256] = "";
	int rc;

	EXPECT_EQ(sgw_policy_load_buffer("a", a.data(), a.size(), &cur, &errs), 0) << a;
	EXPECT_EQ(sgw_policy_load_buffer("b", b.data(), b.size(), &next, &errs), 0) << b;
	rc = sgw_policy_restart_diff(&cur, &next, buf, sizeof(buf));
	*why = buf;
	sgw_policy_free(&cur);
	sgw_policy_free(&next);
	return rc;
}

/* A temporary directory removed with its files when the test ends, even when an
 * ASSERT returns early. */
struct ScopedTmpDir {
	char path[32] = "/tmp/sgw_rd_XXXXXX";
	std::vector<std::string> files;
	bool ok = mkdtemp(path) != nullptr;
	std::string add(const char *name)
	{
		files.push_back(std::string(path) + "/" + name);
		return files.back();
	}
	~ScopedTmpDir()
	{
		for (const auto &f : files)
			unlink(f.c_str());
		if (ok)
			rmdir(path);
	}
};

TEST(RestartDiff, SatlinkSectionIsRestartOnly)
{
	const std::string terms = "  - {name: a, id: 1, prefixes: [10.1.0.0/16]}\n"
				  "  - {name: b, id: 2, prefixes: [10.2.0.0/16]}\n";
	const std::string base = "  port: sat\n  forward_rate_bps: 20000000\n"
				 "  return_rate_bps: 2000000\n";
	const std::string sl = satlink_policy(base, terms);
	std::string why;

	EXPECT_EQ(restart_diff(sl, sl, &why), 0) << why;
	EXPECT_EQ(restart_diff(satlink_policy("", terms), sl, &why), 1);
	EXPECT_EQ(why, "satlink added");
	EXPECT_EQ(restart_diff(sl, satlink_policy("", terms), &why), 1);
	EXPECT_EQ(why, "satlink removed");

	/* Each key, named. */
	const struct {
		const char *yaml, *key;
	} keys[] = {
		{ "  peer_mac: \"02:00:00:00:04:01\"\n", "peer_mac" },
		{ "  rtt_ms: 560\n", "rtt_ms" },
		{ "  frame_size: 1200\n", "frame_size" },
		{ "  retx_copies: 3\n", "retx_copies" },
		{ "  retx_copies_when: always\n", "retx_copies_when" },
		{ "  frame_size_adapt: false\n", "frame_size_adapt" },
		{ "  frame_size_min: 512\n", "frame_size_min" },
		{ "  retx_spacing_us: 0\n", "retx_spacing_us" },
		{ "  status_interval_ms: 10\n", "status_interval_ms" },
		{ "  keepalive_ms: 400\n", "keepalive_ms" },
		{ "  link_down_ms: 3000\n", "link_down_ms" },
		{ "  rto_max_ms: 2000\n", "rto_max_ms" },
		{ "  send_queue: 512\n", "send_queue" },
		{ "  window_max: 4096\n", "window_max" },
		{ "  default_service: datagram\n", "default_service" },
	};
	for (const auto &k : keys) {
		EXPECT_EQ(restart_diff(sl, satlink_policy(base + k.yaml, terms), &why), 1) << k.key;
		EXPECT_EQ(why, std::string("satlink.") + k.key + " changed");
	}
	EXPECT_EQ(restart_diff(sl, satlink_policy("  port: sat\n  forward_rate_bps: 20000001\n"
						  "  return_rate_bps: 2000000\n", terms), &why), 1);
	EXPECT_EQ(why, "satlink.forward_rate_bps changed");
	EXPECT_EQ(restart_diff(sl, satlink_policy("  port: sat\n  forward_rate_bps: 20000000\n"
						  "  return_rate_bps: 1000000\n", terms), &why), 1);
	EXPECT_EQ(why, "satlink.return_rate_bps changed");

	/* A terminal: which terminal this box is. */
	auto term = [&](const char *id) {
		std::string s = satlink_policy(base + "  terminal: " + id + "\n", terms);
		s.replace(s.find("role: hub"), 9, "role: terminal");
		return s;
	};
	EXPECT_EQ(restart_diff(term("1"), term("1"), &why), 0) << why;
	EXPECT_EQ(restart_diff(term("1"), term("2"), &why), 1);
	EXPECT_EQ(why, "satlink.terminal changed");

	/* The key file (its path: the dataplane reads it at startup). */
	ScopedTmpDir dir;
	ASSERT_TRUE(dir.ok);
	std::vector<std::string> &files = dir.files;
	for (const char *name : { "/k1", "/k2" }) {
		dir.add(name + 1);
		FILE *f = fopen(files.back().c_str(), "w");
		ASSERT_NE(f, nullptr);
		fprintf(f, "1 000102030405060708090a0b0c0d0e0f\n2 %s\n",
			name[2] == '1' ? "101112131415161718191a1b1c1d1e1f" :
					 "202122232425262728292a2b2c2d2e2f");
		fclose(f);
		ASSERT_EQ(chmod(files.back().c_str(), 0600), 0);
	}
	const std::string k1 = satlink_policy(base + "  keys: " + files[0] + "\n", terms);
	EXPECT_EQ(restart_diff(k1, k1, &why), 0) << why;
	EXPECT_EQ(restart_diff(sl, k1, &why), 1);
	EXPECT_EQ(why, "satlink.keys changed");
	EXPECT_EQ(restart_diff(k1, satlink_policy(base + "  keys: " + files[1] + "\n", terms),
			       &why), 1);
	EXPECT_EQ(why, "satlink.keys changed");
}

/* The lift section sizes each worker's machine at startup: every key needs a restart. */
TEST(RestartDiff, LiftSectionIsRestartOnly)
{
	ScopedTmpDir dir;
	ASSERT_TRUE(dir.ok);
	const std::string kp = dir.add("hub.keys");
	FILE *f = fopen(kp.c_str(), "w");
	ASSERT_NE(f, nullptr);
	fputs("1 000102030405060708090a0b0c0d0e0f\n", f);
	fclose(f);
	ASSERT_EQ(chmod(kp.c_str(), 0600), 0);
	const std::string terms = "  - {name: a, id: 1, prefixes: [10.1.0.0/16]}\n";
	const std::string sl = "  port: sat\n  forward_rate_bps: 20000000\n"
			       "  return_rate_bps: 2000000\n  keys: " + kp + "\n";
	auto lift = [&](const std::string &keys) {
		return satlink_policy(sl, terms) + (keys.empty() ? "" : "lift:\n" + keys);
	};
	const std::string on = "  enabled: true\n";
	std::string why;

	EXPECT_EQ(restart_diff(lift(on), lift(on), &why), 0) << why;
	EXPECT_EQ(restart_diff(lift(""), lift(on), &why), 1);
	EXPECT_EQ(why, "lift added");
	EXPECT_EQ(restart_diff(lift(on), lift(""), &why), 1);
	EXPECT_EQ(why, "lift removed");
	EXPECT_EQ(restart_diff(lift(on), lift("  enabled: false\n"), &why), 1);
	EXPECT_EQ(why, "lift removed");
	const struct {
		const char *yaml, *key;
	} keys[] = {
		{ "  timer: adaptive\n", "timer" },
		{ "  timer_ms: 900\n", "timer_ms" },
		{ "  max_frozen_ms: 9000\n", "max_frozen_ms" },
		{ "  share_window_ms: 30000\n", "share_window_ms" },
		{ "  max_share_permille: 250\n", "max_share_permille" },
		{ "  suspend_ms: 0\n", "suspend_ms" },
		{ "  max_flows: 1024\n", "max_flows" },
		{ "  max_sas: 64\n", "max_sas" },
		{ "  thaw: true\n", "thaw" },
		{ "  spare_frack: false\n", "spare_frack" },
	};
	for (const auto &k : keys) {
		EXPECT_EQ(restart_diff(lift(on), lift(on + k.yaml), &why), 1) << k.key;
		EXPECT_EQ(why, std::string("lift.") + k.key + " changed");
	}
	EXPECT_EQ(restart_diff(lift(on + "  timer: adaptive\n"),
			       lift(on + "  timer: adaptive\n  timer_min_ms: 300\n"), &why), 1);
	EXPECT_EQ(why, "lift.timer_min_ms changed");
}

/*
 * xcp: turning the stage on or off and its shaper's port and queue need a restart (a stage
 * that is off is never asked about a snapshot, so only this check can refuse turning it on);
 * its controller constants and capacity are reloadable.
 */
TEST(RestartDiff, XcpOnOffAndShaperAreRestartOnlyConstantsAreNot)
{
	const std::string terms = "  - {name: a, id: 1, prefixes: [10.1.0.0/16]}\n";
	const std::string sl = "  port: sat\n  forward_rate_bps: 20000000\n"
			       "  return_rate_bps: 2000000\n";
	auto with = [&](const std::string &xcp) { return satlink_policy(sl, terms) + xcp; };
	auto shaper = [&](const std::string &xcp) { return satlink_policy("", terms) + xcp; };
	std::string why;

	EXPECT_EQ(restart_diff(with(""), with("xcp: {}\n"), &why), 1);
	EXPECT_EQ(why, "xcp added");
	EXPECT_EQ(restart_diff(with("xcp: {}\n"), with("xcp: {enabled: false}\n"), &why), 1);
	EXPECT_EQ(why, "xcp removed");
	EXPECT_EQ(restart_diff(with("xcp: {}\n"),
			       with("xcp: {capacity_bps: 5000000, alpha: 0.3, beta: 0.2, "
				    "gamma: 0.05, rtt_max_ms: 2000}\n"), &why), 0) << why;
	EXPECT_EQ(restart_diff(with("xcp: {}\n"), with("xcp: {scope: session}\n"), &why), 0)
		<< why << ": session is the default";
	EXPECT_EQ(restart_diff(with("xcp: {}\n"), with("xcp: {scope: carrier}\n"), &why), 1);
	EXPECT_EQ(why, "xcp.scope changed");
	const std::string s1 = "xcp: {port: sat, capacity_bps: 10000000}\n";
	EXPECT_EQ(restart_diff(shaper(s1), shaper(s1), &why), 0) << why;
	EXPECT_EQ(restart_diff(shaper(s1), shaper("xcp: {port: sat, capacity_bps: 10000000, "
						  "shaper_queue: 64}\n"), &why), 1);
	EXPECT_EQ(why, "xcp.shaper_queue changed");
	EXPECT_EQ(restart_diff(shaper(s1), shaper("xcp: {port: sat, capacity_bps: 8000000}\n"),
			       &why), 0) << why;
}

TEST(RestartDiff, SatlinkTerminalIdsAreRestartOnlyRulesAreNot)
{
	const std::string base = "  port: sat\n  forward_rate_bps: 20000000\n"
				 "  return_rate_bps: 2000000\n";
	const std::string ab = "  - {name: a, id: 1, prefixes: [10.1.0.0/16]}\n"
			       "  - {name: b, id: 2, prefixes: [10.2.0.0/16]}\n";
	/* Same ids in another order, other names and prefixes: still the same sessions. */
	const std::string ba = "  - {name: bee, id: 2, prefixes: [10.22.0.0/16]}\n"
			       "  - {name: a, id: 1, prefixes: [10.1.0.0/16, 10.11.0.0/16]}\n";
	const std::string ac = "  - {name: a, id: 1, prefixes: [10.1.0.0/16]}\n"
			       "  - {name: b, id: 3, prefixes: [10.2.0.0/16]}\n";
	const std::string abc = ab + "  - {name: c, id: 3, prefixes: [10.3.0.0/16]}\n";
	const std::string msg = "terminals (ids) changed with satlink: sessions are created "
				"at startup";
	std::string why;

	EXPECT_EQ(restart_diff(satlink_policy(base, ab), satlink_policy(base, ba), &why), 0)
		<< why;
	EXPECT_EQ(restart_diff(satlink_policy(base, ab), satlink_policy(base, ac), &why), 1);
	EXPECT_EQ(why, msg);
	EXPECT_EQ(restart_diff(satlink_policy(base, ab), satlink_policy(base, abc), &why), 1);
	EXPECT_EQ(why, msg);
	EXPECT_EQ(restart_diff(satlink_policy(base, abc), satlink_policy(base, ab), &why), 1);
	EXPECT_EQ(why, msg);
	/* Without satlink, terminals stay reloadable. */
	EXPECT_EQ(restart_diff(satlink_policy("", ab), satlink_policy("", abc), &why), 0) << why;

	/* Rules' satlink services are reloadable. */
	const std::string r1 = "rules:\n  - {name: web, action: forward, satlink: datagram}\n";
	const std::string r2 = "rules:\n  - {name: web, action: forward, satlink: bypass}\n"
			       "  - {name: ssh, action: count, satlink: reliable}\n";
	EXPECT_EQ(restart_diff(satlink_policy(base, ab), satlink_policy(base, ab, r1), &why), 0)
		<< why;
	EXPECT_EQ(restart_diff(satlink_policy(base, ab, r1), satlink_policy(base, ab, r2), &why),
		  0) << why;
}

/*
 * split: each worker's pool and relays are sized, and the flow-control scheme
 * fixed, at startup: every key of the section needs a restart, and so does
 * turning the stage on or off (the first rule that splits, or the last).
 * Which connections a rule splits, and with which handshake, is reloadable.
 */
TEST(RestartDiff, SplitSectionAndStageAreRestartOnlyRulesAreNot)
{
	const std::string terms = "  - {name: a, id: 1, prefixes: [10.1.0.0/16]}\n";
	const std::string sl = "  port: sat\n  forward_rate_bps: 20000000\n"
			       "  return_rate_bps: 2000000\n";
	const std::string fwd = "rules:\n  - {name: web, match: {proto: tcp}, action: forward}\n";
	const std::string r1 = "rules:\n  - {name: web, match: {proto: tcp}, action: split}\n";
	const std::string r2 = "rules:\n  - {name: fast, match: {proto: tcp, dst_ports: [9000]}, "
			       "action: split, handshake: spoofed}\n"
			       "  - {name: web, match: {proto: tcp, dst_ports: [80]}, "
			       "action: split}\n";
	auto pol = [&](const std::string &split, const std::string &rules) {
		return satlink_policy(sl, terms, split + rules);
	};
	std::string why;

	EXPECT_EQ(restart_diff(pol("", r1), pol("", r2), &why), 0) << why;
	EXPECT_EQ(restart_diff(pol("", fwd), pol("", r1), &why), 1);
	EXPECT_EQ(why, "action split added: the split stage is set up at startup");
	EXPECT_EQ(restart_diff(pol("", r1), pol("", fwd), &why), 1);
	EXPECT_EQ(why, "action split removed (the last rule): the split stage is set up at "
		       "startup");
	/* An absent section is its defaults. */
	EXPECT_EQ(restart_diff(pol("", r1), pol("split: {}\n", r1), &why), 0) << why;
	EXPECT_EQ(restart_diff(pol("", r1), pol("split: {relay_connection_bytes: 262144}\n", r1),
			       &why), 0) << why;
	/* The stage reads sat_queue_ms per call: a reload takes it. */
	EXPECT_EQ(restart_diff(pol("split: {}\n", r1), pol("split: {sat_queue_ms: 5}\n", r1), &why),
		  0) << why;
	const struct {
		const char *yaml, *key;
	} keys[] = {
		{ "split: {relay_connection_bytes: 1048576}\n", "relay_connection_bytes" },
		{ "split: {relay_terminal_bytes: 33554432}\n", "relay_terminal_bytes" },
		{ "split: {relay_worker_bytes: 536870912}\n", "relay_worker_bytes" },
		{ "split: {max_connections_per_worker: 2048}\n", "max_connections_per_worker" },
		{ "split: {max_connections_per_terminal: 512}\n", "max_connections_per_terminal" },
		{ "split: {idle_timeout_ms: 1000}\n", "idle_timeout_ms" },
		{ "split: {rwnd: ackres}\n", "rwnd" },
		{ "split: {open_credit: 32768}\n", "open_credit" },
		{ "split: {leg_retries: 8}\n", "leg_retries" },
	};
	for (const auto &k : keys) {
		EXPECT_EQ(restart_diff(pol("split: {}\n", r1), pol(k.yaml, r1), &why), 1) << k.key;
		EXPECT_EQ(why, std::string("split.") + k.key + " changed");
	}
	EXPECT_EQ(restart_diff(pol("split: {rwnd: petra}\n", r1),
			       pol("split: {rwnd: petra, threshold_bytes: 100000}\n", r1), &why), 1);
	EXPECT_EQ(why, "split.threshold_bytes changed");
	EXPECT_EQ(restart_diff(pol("split: {rwnd: ackres}\n", r1),
			       pol("split: {rwnd: ackres, ackres_rto_min_ms: 2000}\n", r1), &why), 1);
	EXPECT_EQ(why, "split.ackres_rto_min_ms changed");
}

/* ---- role: emulator ---------------------------------------------------------- */

class Emulator : public Pipeline {
protected:
	std::string emu_yaml(const std::string &fwd, const std::string &ret,
			     const std::string &extra = "")
	{
		return "version: 1\nrole: emulator\nports:\n"
		       "  - {name: hub-side, device: " + a.name + ", role: satellite}\n"
		       "  - {name: term-side, device: " + b.name + ", role: satellite}\n"
		       "link:\n  seed: 7\n"
		       "  forward: {from: hub-side, to: term-side, " + fwd + "}\n"
		       "  return: {from: term-side, to: hub-side, " + ret + "}\n" + extra;
	}

	/* The worker's TSC for a virtual time (ns since the worker's time zero). */
	uint64_t tsc_at(uint64_t ns)
	{
		sgw_worker *w = dp->workers[0];
		return w->ns_base_tsc + uint64_t(double(ns) / w->ns_per_tsc) + 1;
	}

	void step(uint64_t ns)
	{
		sgw_worker_iter(dp->workers[0], tsc_at(ns));
		sgw_worker_flush(dp->workers[0]);
	}
};

TEST_F(Emulator, HoldsSerialisationAndDelayExactly)
{
	start(emu_yaml("rate_bps: 1000000, delay_ms: 100", "rate_bps: 1000000, delay_ms: 100",
		       "limits: {mbufs: 16383}\n"));
	Frame f;
	f.payload = 1500 - 14 - 20 - 32; /* 1500-byte frames */
	std::vector<Bytes> sent;
	for (int i = 0; i < 10; i++) {
		f.sport = uint16_t(100 + i);
		sent.push_back(sgwtest::build(f));
		ASSERT_EQ(sent.back().size(), 1500u);
		send(a, sent.back());
	}
	step(0); /* all ten offered at t = 0 */
	std::vector<uint64_t> seen;
	std::vector<Bytes> got;
	for (uint64_t t = 0; t <= 300000000ull; t += 500000ull) {
		step(t);
		for (auto &fr : recv(b)) {
			got.push_back(fr);
			seen.push_back(t);
		}
	}
	ASSERT_EQ(got.size(), 10u);
	for (int i = 0; i < 10; i++) {
		/* 1500 bytes at 1 Mbit/s take 12 ms each; then 100 ms of propagation. */
		uint64_t want = uint64_t(i + 1) * 12000000ull + 100000000ull;
		EXPECT_GE(seen[i], want) << "frame " << i;
		EXPECT_LT(seen[i], want + 500000ull) << "frame " << i;
		EXPECT_EQ(got[i], sent[i]);
	}
	EXPECT_EQ(recv(a).size(), 0u);
}

TEST_F(Emulator, AsymmetricDirectionsAndLossCounted)
{
	start(emu_yaml("rate_bps: 100000000, delay_ms: 10, loss: {model: random, p: 0.5}",
		       "rate_bps: 1000000, delay_ms: 10",
		       "limits: {mbufs: 32767}\n"));
	Frame f;
	const int n = 2000;
	for (int i = 0; i < n; i++) {
		f.sport = uint16_t(i);
		send(a, sgwtest::build(f));
		if (i % 64 == 63)
			step(0);
	}
	step(0);
	for (uint64_t t = 0; t <= 50000000ull; t += 1000000ull)
		step(t);
	size_t got = recv(b).size();
	EXPECT_GT(got, 800u);
	EXPECT_LT(got, 1200u);
	sgw_linkem_stats st;
	sgw_linkem_get_stats(dp->emu[0].lm, 50000000ull, &st);
	EXPECT_EQ(st.offered_pkts, uint64_t(n));
	EXPECT_EQ(st.delivered_pkts, got);
	/* 2000 frames offered at one instant also overflow the 1000-packet queue. */
	EXPECT_EQ(st.drop_pkts[SGW_LE_DROP_LOSS] + st.drop_pkts[SGW_LE_DROP_QUEUE],
		  uint64_t(n) - got);
	EXPECT_GT(st.drop_pkts[SGW_LE_DROP_LOSS], 800u);
	EXPECT_EQ(dp->emu[0].hold_full, 0u);
	/* The slow return direction: 60-byte frames at 1 Mbit/s, 0.48 ms each. */
	for (int i = 0; i < 10; i++)
		send(b, sgwtest::arp_request());
	step(60000000ull);
	step(60000000ull + 10000000ull + 10 * 480000ull + 1000ull);
	EXPECT_EQ(recv(a).size(), 10u);
}

TEST_F(Emulator, RefusesToStartWithoutMbufsForRateTimesDelay)
{
	struct sgw_policy pol;
	struct sgw_cfg_errors errs;
	unsigned int lcores[1] = {0};
	/* 10 Gbit/s x 280 ms at 60-byte frames is ~5.8M frames in flight. */
	std::string y = emu_yaml("rate_bps: 10000000000, delay_ms: 280", "rate_bps: 1000000",
				 "limits: {mbufs: 16383}\n");
	ASSERT_EQ(sgw_policy_load_buffer("e.yaml", y.data(), y.size(), &pol, &errs), 0)
		<< (errs.n ? errs.e[0].msg : "");
	EXPECT_LT(sgw_dp_init(dp.get(), &pol, 1, lcores, false, "emuref"), 0);
	inited = true; /* free what init made */
	sgw_policy_free(&pol);
}

} // namespace

/*
 * drops.* is the core reasons, then each stage's own (its ops' drop_names, in
 * table order): every reason has one name, no two share it, they fit the
 * counters' array, and a stage's base is where its names start.
 */
/*
 * Every telemetry command satgw registers is taken by DPDK (a help text of
 * 128 characters or more, or a command name too long, makes
 * rte_telemetry_register_cmd refuse it and the command is missing at run
 * time): the stages' texts checked by length, then the real registration.
 */
TEST(Telemetry, EveryCommandRegisters)
{
	static sgw_ctl ctl;   /* the callbacks keep a pointer to it */

	for (unsigned int id = 0; id < SGW_STAGE__COUNT; id++) {
		if (sgw_stages[id]->tel_cmd == NULL)
			continue;
		EXPECT_LT(strlen(sgw_stages[id]->tel_help), size_t(RTE_TEL_MAX_STRING_LEN))
			<< sgw_stages[id]->tel_cmd;
		EXPECT_LT(strlen(sgw_stages[id]->tel_cmd), 56u) << sgw_stages[id]->tel_cmd;
	}
	EXPECT_EQ(sgw_telemetry_register(&ctl), 0);
}

TEST(DropReasons, CoreThenEachStagesOwnUniqueAndInBounds)
{
	std::set<std::string> seen;

	ASSERT_LE(sgw_drop_count(), unsigned(SGW_DROP_MAX));
	EXPECT_STREQ(sgw_drop_name(SGW_DROP_SHUTDOWN), "shutdown");
	for (unsigned int d = 0; d < sgw_drop_count(); d++) {
		std::string n = sgw_drop_name(d);
		EXPECT_NE(n, "unknown") << d;
		EXPECT_TRUE(seen.insert(n).second) << "two reasons named " << n;
	}
	EXPECT_STREQ(sgw_drop_name(sgw_drop_count()), "unknown");
	unsigned int base = SGW_DROP__CORE;
	for (unsigned int id = 0; id < SGW_STAGE__COUNT; id++) {
		EXPECT_EQ(sgw_stage_drop_base(sgw_stage_id(id)), base) << sgw_stages[id]->name;
		for (unsigned int r = 0; r < sgw_stages[id]->n_drops; r++)
			EXPECT_STREQ(sgw_drop_name(base + r), sgw_stages[id]->drop_names[r]);
		base += sgw_stages[id]->n_drops;
	}
	EXPECT_EQ(base, sgw_drop_count());
}
