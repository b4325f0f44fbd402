/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The TCP split stage's faults (dataplane/split.c) in one process and in
 * virtual time, with tests/pipeline/test_split_stage.cc's rig (copied: that
 * file is another's; a hub and a terminal dataplane on net_ring ports with
 * satlink between them, a client and a server that are lib/sgw_tcp
 * endpoints). The peers here also answer a segment of a connection they no
 * longer have with a RST, as a host's kernel does (host_rst).
 *
 * TerminalRestartResetsTheWaitingClient: a client waiting for the next byte
 * of a download sends nothing; when the terminal restarts, the hub gives its
 * half up (RST to the server) and nothing else would ever reach the client.
 * The hub's SYN toward the client (split.c restart_probe) draws the client's
 * challenge ACK (RFC 5961), which crosses to the server's host, whose RST
 * ends the client's connection. Found end to end (tests/e2e/test_split_faults.sh).
 */
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "dp_harness.h"
#include "policy_yaml.h"
#include "satlink.h"
#include "sgw_dp.h"
/* lib/sgw_parse.h and lib/sgw_tcp.h both define it (4 and 4u). */
#undef SGW_TCP_MAX_SACK
#include "sgw_split.h"
#include "sgw_tcp.h"
#include "split.h"

using Bytes = std::vector<uint8_t>;

namespace {

/* The EAL with a file prefix of this test's own ("sp..."). */
class SpEal : public ::testing::Environment {
public:
	void SetUp() override
	{
		std::string prefix = "sfpipe_" + std::to_string(getpid());
		const char *argv[] = {"sfpipe", "--no-huge", "-m", "1024", "--no-pci",
				      "--file-prefix", prefix.c_str(), "-l", "0-1",
				      "--log-level", "warning"};
		int argc = sizeof(argv) / sizeof(argv[0]);
		ASSERT_GE(rte_eal_init(argc, const_cast<char **>(argv)), 0)
			<< "EAL init failed: " << rte_strerror(rte_errno);
	}
	void TearDown() override { rte_eal_cleanup(); }
};

const ::testing::Environment *const eal_env = ::testing::AddGlobalTestEnvironment(new SpEal);

int g_seq;

using sgwtest::RingPort;
using sgwtest::bytes_of;

const char *const HUB_SAT_MAC = "02:00:00:00:03:01";
const char *const TERM_SAT_MAC = "02:00:00:00:04:01";
const uint8_t CLIENT_IP[4] = {10, 20, 1, 5};
const uint8_t SERVER_IP[4] = {198, 51, 100, 10};

struct InFlight {
	uint64_t at;
	struct rte_mbuf *m;
};

uint8_t
Pattern(uint32_t seed, uint64_t i)
{
	return uint8_t((i * 131u + seed * 7u + (i >> 9)) & 0xff);
}

/*
 * One TCP endpoint of the test (client or server): lib/sgw_tcp.h with a
 * send buffer of `to_send` pattern bytes and a receive buffer that the
 * application reads at once.
 */
struct Peer {
	alignas(64) sgw_tcp_conn c;
	sgw_tcp_stack st;
	uint64_t timer[SGW_TCP_T__COUNT];
	bool is_client = false;
	bool open = false;
	bool shut = false;
	uint8_t laddr[4], raddr[4];
	uint32_t tx_seed = 1, rx_seed = 2;
	uint64_t to_send = 0, appended = 0, acked = 0;
	Bytes rx;            /* bytes received in order */
	Bytes ooo;           /* rx_data's out-of-order staging (offset from rx.size()) */
	uint8_t events = 0;
	std::vector<Bytes> *wire = nullptr; /* where its frames go (IP + TCP) */
	std::vector<Bytes> syns_seen;      /* the server: the SYNs it got (IP + TCP) */
	bool host_rst = false;             /* answer segments of its closed connection with
					    * a RST, as the host's kernel does */
	unsigned rsts_sent = 0;
};

void
PeerTx(void *ctx, sgw_tcp_conn *c, const uint8_t *hdr, uint32_t hlen, uint32_t off,
       uint32_t len)
{
	Peer *p = static_cast<Peer *>(ctx);
	Bytes ip(20 + hlen + len, 0);

	(void)c;
	ip[0] = 0x45;
	ip[2] = uint8_t(ip.size() >> 8);
	ip[3] = uint8_t(ip.size());
	ip[6] = 0x40;
	ip[8] = 64;
	ip[9] = 6;
	memcpy(&ip[12], p->laddr, 4);
	memcpy(&ip[16], p->raddr, 4);
	uint32_t sum = 0;
	for (int i = 0; i < 20; i += 2)
		sum += uint32_t(ip[i] << 8 | ip[i + 1]);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	ip[10] = uint8_t(~sum >> 8);
	ip[11] = uint8_t(~sum);
	memcpy(&ip[20], hdr, hlen);
	for (uint32_t i = 0; i < len; i++)
		ip[20 + hlen + i] = Pattern(p->tx_seed, p->acked + off + i);
	ip[20 + 16] = ip[20 + 17] = 0;
	uint16_t cs = sgw_tcp_csum_ipv4(p->laddr, p->raddr, &ip[20], hlen, &ip[20 + hlen], len);
	ip[20 + 16] = uint8_t(cs >> 8);
	ip[20 + 17] = uint8_t(cs);
	p->wire->push_back(ip);
}

void
PeerRxData(void *ctx, sgw_tcp_conn *, uint32_t off, const uint8_t *d, uint32_t len)
{
	Peer *p = static_cast<Peer *>(ctx);

	if (p->ooo.size() < off + len)
		p->ooo.resize(off + len);
	memcpy(p->ooo.data() + off, d, len);
}

void
PeerRxAdvance(void *ctx, sgw_tcp_conn *, uint32_t n)
{
	Peer *p = static_cast<Peer *>(ctx);

	p->rx.insert(p->rx.end(), p->ooo.begin(), p->ooo.begin() + n);
	p->ooo.erase(p->ooo.begin(), p->ooo.begin() + n);
}

uint32_t
PeerRxSpace(void *, sgw_tcp_conn *)
{
	return 1u << 20;  /* the application reads at once */
}

void
PeerTxAcked(void *ctx, sgw_tcp_conn *, uint32_t n)
{
	static_cast<Peer *>(ctx)->acked += n;
}

const sgw_tcp_ops kPeerOps = {PeerTx, PeerRxData, PeerRxAdvance, PeerRxSpace, PeerTxAcked};

class SplitFaults : public ::testing::Test {
protected:
	RingPort terr, hsat, tsat, lan;
	std::unique_ptr<sgw_dp> hub{new sgw_dp()}, term{new sgw_dp()};
	bool hub_up = false, term_up = false;
	/* A terminal replaced by a restarted one (restart_terminal): finished last. */
	RingPort tsat_old, lan_old;
	std::unique_ptr<sgw_dp> term_old;
	bool term_old_up = false;
	uint64_t now = 0;
	uint64_t delay_ns = 50000000;   /* one way on the satellite link */
	std::deque<InFlight> fwd, ret;
	std::string term_split = "split: {relay_connection_bytes: 65536, "
				 "relay_terminal_bytes: 1048576, relay_worker_bytes: 1048576}\n";
	std::string hub_split = term_split;
	Peer client, server;
	std::vector<Bytes> client_out, server_out;   /* IP packets the peers send */
	std::vector<Bytes> at_server;                /* IP packets the hub sent toward the core */
	bool server_listens = true;
	uint8_t handshake = SGW_SPLIT_HS_END_TO_END;  /* the web rule's */

	void SetUp() override
	{
		int n = ++g_seq;
		terr.make("spt" + std::to_string(n), 16384);
		hsat.make("sph" + std::to_string(n), 16384);
		tsat.make("sps" + std::to_string(n), 16384);
		lan.make("spl" + std::to_string(n), 16384);
		memset(hub.get(), 0, sizeof(*hub));
		memset(term.get(), 0, sizeof(*term));
		InitPeer(client, true);
		InitPeer(server, false);
	}

	void TearDown() override
	{
		for (auto &f : fwd)
			rte_pktmbuf_free(f.m);
		for (auto &f : ret)
			rte_pktmbuf_free(f.m);
		if (hub_up) {
			sgwtest::expect_accounted(hub.get(), false, "hub");
			sgw_dp_drain(hub.get());
			sgwtest::expect_accounted(hub.get(), true, "hub");
		}
		if (term_up) {
			sgwtest::expect_accounted(term.get(), false, "terminal");
			sgw_dp_drain(term.get());
			sgwtest::expect_accounted(term.get(), true, "terminal");
		}
		if (term_old_up) {
			sgwtest::expect_accounted(term_old.get(), false, "restarted terminal");
			sgw_dp_drain(term_old.get());
			sgwtest::expect_accounted(term_old.get(), true, "restarted terminal");
		}
		terr.free_all();
		hsat.free_all();
		tsat.free_all();
		lan.free_all();
		if (term_old != nullptr) {
			tsat_old.free_all();
			lan_old.free_all();
		}
		if (term_old_up) {
			EXPECT_EQ(sgw_dp_fini(term_old.get()), 0u) << "old terminal mbufs";
		}
		if (hub_up) {
			EXPECT_EQ(sgw_dp_fini(hub.get()), 0u) << "hub mbufs not returned";
		}
		if (term_up) {
			EXPECT_EQ(sgw_dp_fini(term.get()), 0u) << "terminal mbufs not returned";
		}
	}

	void InitPeer(Peer &p, bool is_client)
	{
		sgw_tcp_conf conf;
		sgw_tcp_conf_default(&conf);
		conf.rcv_buf = 1u << 20;
		ASSERT_EQ(sgw_tcp_stack_init(&p.st, &conf, &kPeerOps, &p), 0);
		p.is_client = is_client;
		memcpy(p.laddr, is_client ? CLIENT_IP : SERVER_IP, 4);
		memcpy(p.raddr, is_client ? SERVER_IP : CLIENT_IP, 4);
		p.tx_seed = is_client ? 11 : 22;
		p.rx_seed = is_client ? 22 : 11;
		p.wire = is_client ? &client_out : &server_out;
		for (auto &t : p.timer)
			t = SGW_TCP_NEVER;
	}

	void PeerOut(Peer &p, const sgw_tcp_out &o)
	{
		for (unsigned id = 0; id < SGW_TCP_T__COUNT; id++)
			if (o.timer_set & (1u << id))
				p.timer[id] = o.timer_at[id];
		p.events |= o.events;
	}

	void PeerPump(Peer &p)
	{
		if (!p.open || p.c.state == SGW_TCP_CLOSED)
			return;
		/* Keep up to 64 KB appended beyond what is acknowledged. */
		while (p.appended < p.to_send && p.appended - p.acked < 65536) {
			uint32_t n = uint32_t(std::min<uint64_t>(p.to_send - p.appended, 16384));
			sgw_tcp_out o;
			sgw_tcp_out_reset(&o);
			if (sgw_tcp_send(&p.st, &p.c, now, n, &o) != 0)
				break;
			p.appended += n;
			PeerOut(p, o);
		}
		if (!p.shut && p.to_send == p.appended && p.acked == p.to_send &&
		    (p.is_client || (p.events & SGW_TCP_EV_PEER_FIN))) {
			/* The client closes once all it sent is acked; the server after it. */
			p.shut = true;
			sgw_tcp_out o;
			sgw_tcp_out_reset(&o);
			sgw_tcp_shutdown(&p.st, &p.c, now, &o);
			PeerOut(p, o);
		}
	}

	void PeerTimers(Peer &p)
	{
		for (unsigned id = 0; id < SGW_TCP_T__COUNT; id++) {
			if (p.timer[id] == SGW_TCP_NEVER || p.timer[id] > now)
				continue;
			p.timer[id] = SGW_TCP_NEVER;
			sgw_tcp_out o;
			sgw_tcp_out_reset(&o);
			sgw_tcp_timer(&p.st, &p.c, now, id, &o);
			PeerOut(p, o);
		}
	}

	void ClientConnect(uint16_t sport, uint64_t to_send, uint32_t isn_off = 0)
	{
		sgw_tcp_conn_init(&client.st, &client.c, 1000000u + sport + isn_off, sport, 80);
		client.open = true;
		client.to_send = to_send;
		sgw_tcp_out o;
		sgw_tcp_out_reset(&o);
		ASSERT_EQ(sgw_tcp_connect(&client.st, &client.c, now, &o), 0);
		PeerOut(client, o);
		PeerPump(client);
	}

	/* A segment (IP packet) to a peer: parse, check addresses, input. */
	void Deliver(Peer &p, const Bytes &ip)
	{
		ASSERT_GE(ip.size(), 40u);
		ASSERT_EQ(ip[0], 0x45);
		ASSERT_EQ(memcmp(&ip[12], p.raddr, 4), 0) << "source address";
		ASSERT_EQ(memcmp(&ip[16], p.laddr, 4), 0) << "destination address";
		uint16_t tot = uint16_t(ip[2] << 8 | ip[3]);
		ASSERT_LE(tot, ip.size());
		EXPECT_EQ(sgw_tcp_csum_ipv4(&ip[12], &ip[16], &ip[20], tot - 20u, nullptr, 0), 0)
			<< "TCP checksum";
		sgw_tcp_seg s;
		ASSERT_EQ(sgw_tcp_seg_parse(&ip[20], tot - 20u, &s, nullptr), SGW_TCP_PR_OK);
		if (!p.open) {
			if (p.is_client || !server_listens ||
			    (s.flags & (SGW_TCP_F_SYN | SGW_TCP_F_ACK)) != SGW_TCP_F_SYN)
				return;
			p.syns_seen.push_back(ip);
			sgw_tcp_conn_init(&p.st, &p.c, 7000000u + s.sport, s.dport, s.sport);
			ASSERT_EQ(sgw_tcp_listen(&p.st, &p.c), 0);
			p.open = true;
		}
		if (p.host_rst && p.c.state == SGW_TCP_CLOSED &&
		    s.dport == p.c.sport && s.sport == p.c.dport) {
			/* The host's kernel: no socket for it any more (RFC 9293 3.10.7.1). */
			sgw_tcp_seg r;
			uint8_t h[60];
			if (sgw_tcp_rst_for(&s, &r) == 1) {
				uint32_t hl = sgw_tcp_seg_build(h, sizeof(h), &r);
				ASSERT_GT(hl, 0u);
				PeerTx(&p, &p.c, h, hl, 0, 0);
				p.rsts_sent++;
			}
			return;
		}
		if (s.dport != p.c.sport || s.sport != p.c.dport) {
			if ((s.flags & (SGW_TCP_F_SYN | SGW_TCP_F_ACK)) == SGW_TCP_F_SYN)
				p.syns_seen.push_back(ip);
			return;  /* another connection: seen, not answered */
		}
		sgw_tcp_out o;
		sgw_tcp_out_reset(&o);
		sgw_tcp_input(&p.st, &p.c, now, &s, &o);
		PeerOut(p, o);
		PeerPump(p);
	}

	std::string satlink(const std::string &extra) const
	{
		return "satlink: {port: sat, forward_rate_bps: 20000000, "
		       "return_rate_bps: 20000000, rtt_ms: 110" + extra + "}\n";
	}

	std::string hub_yaml()
	{
		return "version: 1\nrole: hub\nports:\n"
		       "  - {name: terr, device: " + terr.name +
		       ", role: terrestrial, peer: sat}\n"
		       "  - {name: sat, device: " + hsat.name + ", role: satellite, peer: terr}\n"
		       "next_hops:\n"
		       "  - {name: to-term, port: sat, mac: \"" + std::string(TERM_SAT_MAC) +
		       "\"}\n"
		       "  - {name: to-fh, port: terr, mac: \"02:00:00:00:01:01\"}\n"
		       "terminals:\n  - {name: site-a, id: 1001, prefixes: [10.20.1.0/24]}\n"
		       "rules:\n"
		       "  - {name: web, match: {proto: tcp, dst_ports: [80]}, action: count, "
		       "next_hop: to-fh}\n"
		       "  - {name: to-site, match: {dst: [10.20.1.0/24]}, action: forward, "
		       "next_hop: to-term}\n"
		       "  - {name: to-core, match: {dst: [198.51.100.0/24]}, action: forward, "
		       "next_hop: to-fh}\n"
		       "workers: {idle_backoff_us: 0}\n" + hub_split +
		       satlink(", peer_mac: \"" + std::string(TERM_SAT_MAC) + "\"");
	}

	std::string term_yaml()
	{
		return "version: 1\nrole: terminal\nports:\n"
		       "  - {name: sat, device: " + tsat.name + ", role: satellite, peer: lan}\n"
		       "  - {name: lan, device: " + lan.name + ", role: lan, peer: sat}\n"
		       "next_hops:\n"
		       "  - {name: to-hub, port: sat, mac: \"" + std::string(HUB_SAT_MAC) + "\"}\n"
		       "  - {name: to-mh, port: lan, mac: \"02:00:00:00:02:01\"}\n"
		       "terminals:\n  - {name: site-a, id: 1001, prefixes: [10.20.1.0/24]}\n"
		       "rules:\n"
		       "  - {name: web, match: {proto: tcp, dst_ports: [80]}, action: count, "
		       "next_hop: to-hub}\n"
		       "  - {name: to-lan, match: {dst: [10.20.1.0/24]}, action: forward, "
		       "next_hop: to-mh}\n"
		       "  - {name: to-core, match: {dst: [198.51.100.0/24]}, action: forward, "
		       "next_hop: to-hub}\n"
		       "workers: {idle_backoff_us: 0}\n" + term_split +
		       satlink(", terminal: 1001, peer_mac: \"" + std::string(HUB_SAT_MAC) + "\"");
	}

	void start_one(sgw_dp *dp, const std::string &yaml, const std::string &inst, bool &up)
	{
		struct sgw_policy pol;
		struct sgw_cfg_errors errs;
		char err[256] = "";
		unsigned int lcores[2] = {0, 1};

		ASSERT_EQ(sgw_policy_load_buffer("test.yaml", yaml.data(), yaml.size(), &pol,
						 &errs), 0)
			<< (errs.n ? errs.e[0].msg : "?") << "\n" << yaml;
		/* The rule named web is the split rule, with the test's handshake. */
		for (uint32_t i = 0; i < pol.n_rules; i++)
			if (strcmp(pol.rules[i].name, "web") == 0) {
				pol.rules[i].action = SGW_ACT_SPLIT;
				pol.rules[i].split_handshake = handshake;
			}
		int rc = sgw_dp_init(dp, &pol, 1, lcores, false, inst.c_str());
		up = true;
		ASSERT_EQ(rc, 0);
		ASSERT_EQ(sgw_dp_publish(dp, &pol, err, sizeof(err)), 0) << err;
		sgw_policy_free(&pol);
	}

	void start()
	{
		start_one(hub.get(), hub_yaml(), "sph" + std::to_string(g_seq), hub_up);
		start_one(term.get(), term_yaml(), "spt" + std::to_string(g_seq), term_up);
	}

	static uint64_t tsc_at(sgw_dp *dp, uint64_t ns)
	{
		sgw_worker *w = dp->workers[0];
		return w->ns_base_tsc + uint64_t(double(ns) / w->ns_per_tsc) + 1;
	}

	void move(RingPort &from, std::deque<InFlight> &q, RingPort &to)
	{
		for (auto *m : from.take())
			q.push_back({now + delay_ns, m});
		while (!q.empty() && q.front().at <= now) {
			ASSERT_EQ(rte_ring_enqueue(to.rx, q.front().m), 0);
			q.pop_front();
		}
	}

	void inject(sgw_dp *dp, RingPort &p, const Bytes &ip, const char *dst_mac)
	{
		struct rte_mbuf *m = rte_pktmbuf_alloc(dp->pool);
		ASSERT_NE(m, nullptr);
		uint8_t *d = (uint8_t *)rte_pktmbuf_append(m, uint16_t(14 + ip.size()));
		ASSERT_NE(d, nullptr);
		unsigned int b[6];
		ASSERT_EQ(sscanf(dst_mac, "%x:%x:%x:%x:%x:%x", &b[0], &b[1], &b[2], &b[3], &b[4],
				 &b[5]), 6);
		for (int i = 0; i < 6; i++)
			d[i] = uint8_t(b[i]);
		const uint8_t src[6] = {0x02, 0, 0, 0, 0, 0x77};
		memcpy(d + 6, src, 6);
		d[12] = 0x08;
		d[13] = 0x00;
		memcpy(d + 14, ip.data(), ip.size());
		ASSERT_EQ(rte_ring_enqueue(p.rx, m), 0);
	}

	/* Frames out of a port as IP packets (the Ethernet header checked and cut). */
	std::vector<Bytes> take_ip(RingPort &p)
	{
		std::vector<Bytes> out;
		for (auto *m : p.take()) {
			Bytes b = bytes_of(m);
			rte_pktmbuf_free(m);
			if (b.size() < 34 || b[12] != 0x08 || b[13] != 0x00)
				continue;
			uint16_t tot = uint16_t(b[16] << 8 | b[17]);
			size_t n = std::min<size_t>(tot, b.size() - 14);
			out.emplace_back(b.begin() + 14, b.begin() + 14 + long(n));
		}
		return out;
	}

	void run_until(uint64_t until, uint64_t step_ns = 200000)
	{
		for (; now <= until; now += step_ns) {
			move(hsat, fwd, tsat);
			move(tsat, ret, hsat);
			/* The peers' frames enter the dataplanes. */
			for (auto &ip : client_out)
				inject(term.get(), lan, ip, "02:00:00:00:05:01");
			client_out.clear();
			for (auto &ip : server_out)
				inject(hub.get(), terr, ip, "02:00:00:00:06:01");
			server_out.clear();
			sgw_worker_iter(hub->workers[0], tsc_at(hub.get(), now));
			sgw_worker_flush(hub->workers[0]);
			sgw_worker_drain_txrings(hub->workers[0]);
			sgw_worker_iter(term->workers[0], tsc_at(term.get(), now));
			sgw_worker_flush(term->workers[0]);
			/* What the dataplanes sent toward the peers. */
			for (auto &ip : take_ip(lan))
				if (client.open && ip.size() >= 40 && ip[9] == 6)
					Deliver(client, ip);
			for (auto &ip : take_ip(terr)) {
				at_server.push_back(ip);
				if (ip[9] == 6)
					Deliver(server, ip);
			}
			PeerTimers(client);
			PeerTimers(server);
			PeerPump(client);
			PeerPump(server);
		}
	}

	void session_up()
	{
		run_until(now + 400000000ull);
		sgw_sl_pub p;
		sgw_sl_read(term.get(), 0, &p);
		ASSERT_EQ(p.state, SGW_ARQ_UP) << "satlink session not up";
	}

	void BothWays();

	/* The terminal restarts: a new dataplane (a new epoch) on new ports. */
	void restart_terminal()
	{
		tsat_old = tsat;
		lan_old = lan;
		term_old = std::move(term);
		term_old_up = term_up;
		term_up = false;
		int n = ++g_seq;
		tsat.make("sps" + std::to_string(n), 16384);
		lan.make("spl" + std::to_string(n), 16384);
		term.reset(new sgw_dp());
		memset(term.get(), 0, sizeof(*term));
		start_one(term.get(), term_yaml(), "spt" + std::to_string(n), term_up);
	}

	bool Bytewise(const Bytes &got, uint32_t seed, uint64_t n)
	{
		if (got.size() != n)
			return false;
		for (uint64_t i = 0; i < n; i++)
			if (got[i] != Pattern(seed, i))
				return false;
		return true;
	}
};

TEST_F(SplitFaults, TerminalRestartResetsTheWaitingClient)
{
	start();
	session_up();
	server.to_send = 1ull << 40;   /* an endless download */
	server.host_rst = true;
	ClientConnect(40000, 100);
	client.shut = true;            /* the client never closes: it waits for data */
	run_until(now + 2000000000ull);
	ASSERT_EQ(sgw_split_dp_open(hub.get()), 1u);
	ASSERT_GT(client.rx.size(), 10000u);
	ASSERT_EQ(client.c.state, SGW_TCP_ESTABLISHED);
	ASSERT_TRUE(Bytewise(server.rx, 11, 100));

	/* A new epoch: the new terminal knows nothing of the connection. */
	restart_terminal();
	size_t before = client.rx.size();
	run_until(now + 3000000000ull);
	EXPECT_EQ(sgw_split_dp_ctr(hub.get(), SGW_SPD_ABORTED_RESTART), 1u);
	EXPECT_EQ(sgw_split_dp_ctr(hub.get(), SGW_SPD_RESTART_PROBES), 1u);
	EXPECT_EQ(sgw_split_dp_open(hub.get()), 0u);
	EXPECT_TRUE(server.events & SGW_TCP_EV_RESET) << "the server got the hub's RST";
	EXPECT_GE(server.rsts_sent, 1u) << "the client's challenge ACK reached the server's host";
	EXPECT_TRUE(client.events & SGW_TCP_EV_RESET) << "the waiting client got a RST";
	EXPECT_EQ(client.c.state, SGW_TCP_CLOSED);
	/* What it got is the download's beginning, nothing after the restart. */
	EXPECT_EQ(client.rx.size(), before);
	EXPECT_TRUE(Bytewise(client.rx, 22, client.rx.size()));
	EXPECT_EQ(sgw_split_dp_open(term.get()), 0u) << "the new terminal split nothing";
}

}  // namespace
