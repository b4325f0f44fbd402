/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The XCP gateway stage (dataplane/xcp.c) in one process and in virtual time:
 * a hub with satlink on its satellite port and the xcp section. Packets enter
 * the terrestrial port; those of the satellite link leave by the satellite
 * port (satlink service bypass: as raw frames, so the test reads the XCP
 * header the hub rewrote; reliable: they wait in satlink's feed queue, which
 * is the queue XCP controls). Checks: H_feedback lowered as the controller
 * says and only lowered, only those 4 bytes changed (checksums stay valid,
 * ESP untouched), non-XCP packets counted as load, refused headers counted
 * by reason and forwarded, the accounting identity, and two workers sharing
 * the link giving what one worker gives. Legacy mode (xcp.legacy): plain TCP
 * toward the satellite gets a share, the ACKs coming back have their window
 * clamped to it (never retracting an edge, checksums right), and with legacy
 * off they pass byte for byte.
 */
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <rte_mbuf.h>
#include <rte_ring.h>

#include "dp_harness.h"
#include "pkt_build.h"
#include "policy_yaml.h"
#include "satlink.h"
#include "sgw_dp.h"
#include "sgw_flow_key.h"
#include "sgw_xcp.h"
#include "xcp.h"

using sgwtest::Frame;
using sgwtest::RingPort;
using Bytes = std::vector<uint8_t>;

namespace {

const ::testing::Environment *const eal_env =
	::testing::AddGlobalTestEnvironment(new sgwtest::EalEnv("xsstage"));

int g_seq;

const uint32_t RTT_US = 600000;   /* every sender's H_rtt: d = 600 ms */
const uint64_t MS = 1000000ull;

/* Header fields a test packet carries. */
struct X {
	uint8_t ver_flags = 0x20;
	uint8_t hlen_words = 5;
	uint32_t rtt_us = RTT_US;
	uint32_t cwnd = 100000;
	int32_t fb = 1000000;
	int16_t next = -1;      /* -1: the transport's protocol */
};

/*
 * f's frame (untagged, IPv4 without options or IPv6 without extensions) with
 * an XCP v2 header between IP and the transport: protocol 254, lengths and
 * the IPv4 header checksum redone. The transport checksum is the sender's,
 * computed without the XCP header (docs/wire-formats.md), so it stays right.
 */
Bytes
with_xcp(const Frame &f, const X &x)
{
	Bytes v = sgwtest::build(f);
	const size_t l3 = 14, ihl = f.ip_ver == 4 ? 20 : 40;
	uint8_t proto = v[l3 + (f.ip_ver == 4 ? 9 : 6)];
	/* The IP packet's own length (build() pads short frames to 60 bytes). */
	size_t iplen = f.ip_ver == 4 ? size_t(v[l3 + 2] << 8 | v[l3 + 3])
				     : 40 + size_t(v[l3 + 4] << 8 | v[l3 + 5]);
	Bytes h = {uint8_t(x.next >= 0 ? x.next : proto), x.ver_flags, x.hlen_words, 0};

	v.resize(l3 + iplen);
	sgwtest::put32(h, x.rtt_us);
	sgwtest::put32(h, x.cwnd);
	sgwtest::put32(h, uint32_t(x.fb));
	sgwtest::put32(h, 0);
	Bytes o(v.begin(), v.begin() + long(l3 + ihl));
	o.insert(o.end(), h.begin(), h.end());
	o.insert(o.end(), v.begin() + long(l3 + ihl), v.end());
	size_t n = iplen + h.size();
	if (f.ip_ver == 4) {
		o[l3 + 2] = uint8_t(n >> 8);
		o[l3 + 3] = uint8_t(n);
		o[l3 + 9] = 254;
		o[l3 + 10] = 0;
		o[l3 + 11] = 0;
		uint16_t c = sgwtest::csum(&o[l3], 20);
		o[l3 + 10] = uint8_t(c >> 8);
		o[l3 + 11] = uint8_t(c);
	} else {
		o[l3 + 4] = uint8_t((n - 40) >> 8);
		o[l3 + 5] = uint8_t(n - 40);
		o[l3 + 6] = 254;
	}
	while (o.size() < 60)
		o.push_back(0);
	return o;
}

int32_t
fb_of(const Bytes &b, size_t l4)
{
	return int32_t(uint32_t(b[l4 + 12]) << 24 | uint32_t(b[l4 + 13]) << 16 |
		       uint32_t(b[l4 + 14]) << 8 | b[l4 + 15]);
}

/* Is the TCP checksum behind the XCP header right (pseudo-header protocol 6)? */
bool
tcp_csum_ok(const Bytes &b, int ip_ver)
{
	const size_t l3 = 14, ihl = ip_ver == 4 ? 20 : 40, l4 = l3 + ihl + 20;
	size_t iplen = ip_ver == 4 ? size_t(b[l3 + 2] << 8 | b[l3 + 3])
				   : 40 + size_t(b[l3 + 4] << 8 | b[l3 + 5]);
	size_t tlen = iplen - ihl - 20;
	Bytes ph;
	size_t alen = ip_ver == 4 ? 4 : 16;

	ph.insert(ph.end(), b.begin() + long(l3 + (ip_ver == 4 ? 12 : 8)),
		  b.begin() + long(l3 + (ip_ver == 4 ? 12 : 8) + 2 * alen));
	if (ip_ver == 4) {
		ph.push_back(0);
		ph.push_back(6);
		sgwtest::put16(ph, uint16_t(tlen));
	} else {
		sgwtest::put32(ph, uint32_t(tlen));
		ph.insert(ph.end(), {0, 0, 0, 6});
	}
	ph.insert(ph.end(), b.begin() + long(l4), b.begin() + long(l4 + tlen));
	return sgwtest::csum(ph.data(), ph.size()) == 0;
}

/* Two terminal ids that land on different workers of two. */
void
two_shards(uint32_t &a, uint32_t &b)
{
	a = 1001;
	for (b = 1002; sgw_terminal_shard(b, 2) == sgw_terminal_shard(a, 2); b++)
		;
}

/* One hub dataplane, its two ports, and virtual time. */
struct Hub {
	RingPort terr, sat;
	std::unique_ptr<sgw_dp> dp{new sgw_dp()};
	bool up = false;
	uint32_t workers = 1;
	uint64_t now = 0;

	~Hub()
	{
		if (up) {
			sgwtest::expect_accounted(dp.get(), false, "hub");
			sgw_dp_drain(dp.get());
			sgwtest::expect_accounted(dp.get(), true, "hub");
		}
		terr.free_all();
		sat.free_all();
		if (up) {
			EXPECT_EQ(sgw_dp_fini(dp.get()), 0u) << "mbufs not returned";
		}
	}

	/*
	 * With satlink, xcp.scope for an xcp section that does not give one: the
	 * tests of one link's controller (most below) run the carrier's, whose
	 * telemetry is that one controller's; the session scope's tests set
	 * "session" (or give the key themselves).
	 */
	std::string scope = "carrier";

	std::string yaml(uint32_t ida, uint32_t idb, const std::string &service,
			 const std::string &xcp_in) const
	{
		std::string xcp = xcp_in;
		if (!service.empty() && xcp.rfind("xcp: {", 0) == 0 &&
		    xcp.find("scope") == std::string::npos)
			xcp.insert(6, "scope: " + scope + (xcp[6] == '}' ? "" : ", "));
		return "version: 1\nrole: hub\nports:\n"
		       "  - {name: terr, device: " + terr.name +
		       ", role: terrestrial, peer: sat}\n"
		       "  - {name: sat, device: " + sat.name + ", role: satellite, peer: terr}\n"
		       "next_hops:\n"
		       "  - {name: to-term, port: sat, mac: \"02:00:00:00:04:01\"}\n"
		       "terminals:\n"
		       "  - {name: site-a, id: " + std::to_string(ida) +
		       ", prefixes: [10.20.1.0/24]}\n"
		       "  - {name: site-b, id: " + std::to_string(idb) +
		       ", prefixes: [10.20.2.0/24]}\n"
		       "rules:\n"
		       "  - {name: to-sites, match: {dst: [10.20.0.0/16]}, action: forward, "
		       "next_hop: to-term}\n"
		       "workers: {idle_backoff_us: 0}\n" +
		       (service.empty() ? std::string() :
			"satlink: {port: sat, forward_rate_bps: 20000000, "
			"return_rate_bps: 2000000, rtt_ms: 600, "
			"peer_mac: \"02:00:00:00:04:01\", default_service: " + service + "}\n") +
		       xcp;
	}

	void start(uint32_t nw, const std::string &service, const std::string &xcp)
	{
		int n = ++g_seq;
		uint32_t a, b;
		struct sgw_policy pol;
		struct sgw_cfg_errors errs;
		char err[256] = "";
		unsigned int lcores[2] = {0, 1};

		workers = nw;
		terr.make("xst" + std::to_string(n), 16384);
		sat.make("xss" + std::to_string(n), 16384);
		memset(dp.get(), 0, sizeof(*dp));
		two_shards(a, b);
		std::string y = yaml(a, b, service, xcp);
		ASSERT_EQ(sgw_policy_load_buffer("xs.yaml", y.data(), y.size(), &pol, &errs), 0)
			<< (errs.n ? errs.e[0].msg : "?") << " at "
			<< (errs.n ? errs.e[0].line : 0)
			<< "\n" << y;
		int rc = sgw_dp_init(dp.get(), &pol, nw, lcores, false,
				     ("xs" + std::to_string(n)).c_str());
		up = true;
		ASSERT_EQ(rc, 0);
		ASSERT_EQ(sgw_dp_publish(dp.get(), &pol, err, sizeof(err)), 0) << err;
		sgw_policy_free(&pol);
		ASSERT_TRUE(dp->stage_on[SGW_STAGE_XCP]);
	}

	uint64_t tsc_at(uint64_t ns, uint32_t wi) const
	{
		sgw_worker *w = dp->workers[wi];
		return w->ns_base_tsc + uint64_t(double(ns) / w->ns_per_tsc) + 1;
	}

	void run_until(uint64_t until, uint64_t step = MS)
	{
		for (; now <= until; now += step) {
			for (uint32_t w = 0; w < workers; w++) {
				sgw_worker_iter(dp->workers[w], tsc_at(now, w));
				sgw_worker_flush(dp->workers[w]);
			}
			for (uint32_t w = 0; w < workers; w++)
				sgw_worker_drain_txrings(dp->workers[w]);
		}
	}

	void inject(const Bytes &frame)
	{
		struct rte_mbuf *m = rte_pktmbuf_alloc(dp->pool);
		ASSERT_NE(m, nullptr);
		memcpy(rte_pktmbuf_append(m, uint16_t(frame.size())), frame.data(), frame.size());
		ASSERT_EQ(rte_ring_enqueue(terr.rx, m), 0);
	}

	std::vector<Bytes> recv_sat()
	{
		std::vector<Bytes> out;
		for (auto *m : sat.take()) {
			Bytes b = sgwtest::bytes_of(m);
			/* Not the session's own frames (HELLO: no terminal answers here). */
			if (b.size() < 14 || b[12] != 0x88 || b[13] != 0xb5)
				out.push_back(b);
			rte_pktmbuf_free(m);
		}
		return out;
	}
};

/* A TCP frame toward site a (ip 10.20.1.x) or b, its sequence number naming it. */
Frame
tcp_to(bool site_b, uint32_t seq, int ip_ver = 4, size_t payload = 1000)
{
	Frame f;
	f.ip_ver = ip_ver;
	if (ip_ver == 6) {
		f.src = "2001:db8::10";
		f.dst = "2001:db8:20::5";
	}
	f.dst = ip_ver == 4 ? (site_b ? "10.20.2.5" : "10.20.1.5") : f.dst;
	f.proto = 6;
	f.tcp_flags = 0x10;
	f.seq = seq;
	f.sport = uint16_t(40000 + (seq >> 16));
	f.payload = payload;
	return f;
}

const size_t L4 = 14 + 20;  /* the XCP header of an IPv4 frame */

TEST(XcpStage, FeedbackLoweredOnlyThereAndCounted)
{
	Hub h;
	ASSERT_NO_FATAL_FAILURE(h.start(1, "bypass", "xcp: {capacity_bps: 10000000}\n"));
	h.run_until(0);

	/* Interval 1 (0-100 ms, the initial interval): parameters are zero. */
	std::map<uint32_t, Bytes> sent;
	for (uint32_t i = 0; i < 10; i++) {
		Bytes b = with_xcp(tcp_to(false, 100 + i), X{});
		sent[100 + i] = b;
		h.inject(b);
	}
	X neg;
	neg.fb = -500;   /* asks for a decrease: 0 is not lower, untouched */
	Bytes bneg = with_xcp(tcp_to(false, 200), neg);
	h.inject(bneg);
	/* ESP behind the header (encrypted payload: never read, never written). */
	Frame fe;
	fe.proto = 50;
	fe.spi = 0xabcd;
	fe.esp_seq = 7;
	fe.payload = 300;
	fe.payload_byte = 0x77;
	Bytes besp = with_xcp(fe, X{});
	h.inject(besp);
	/* Not XCP: load only. */
	Frame fu;
	fu.proto = 17;
	fu.payload = 500;
	for (int i = 0; i < 3; i++)
		h.inject(sgwtest::build(fu));
	/* Refused headers, one of each reason the stage can meet. */
	X v1;
	v1.ver_flags = 0x10;
	X hl;
	hl.hlen_words = 4;
	X nest;
	nest.next = 254;
	X htr;
	htr.hlen_words = 200;
	std::vector<Bytes> bad = {with_xcp(tcp_to(false, 300), v1),
				  with_xcp(tcp_to(false, 301), hl),
				  with_xcp(tcp_to(false, 302), nest),
				  with_xcp(tcp_to(false, 303, 4, 10), htr)};
	for (auto &b : bad)
		h.inject(b);
	h.run_until(20 * MS);

	std::vector<Bytes> out = h.recv_sat();
	ASSERT_EQ(out.size(), 10u + 1 + 1 + 3 + 4);
	size_t n_lowered = 0;
	for (auto &o : out) {
		ASSERT_GE(o.size(), L4 + 20);
		if (o[14 + 9] != 254)
			continue;
		uint32_t seq = uint32_t(o[L4 + 20 + 4]) << 24 | uint32_t(o[L4 + 20 + 5]) << 16 |
			       uint32_t(o[L4 + 20 + 6]) << 8 | o[L4 + 20 + 7];
		const Bytes *in = nullptr;
		if (sent.count(seq) != 0)
			in = &sent[seq];
		if (in == nullptr)
			continue;
		/* Parameters zero: no increase. Only H_feedback changed (from IP on). */
		EXPECT_EQ(fb_of(o, L4), 0);
		n_lowered++;
		ASSERT_EQ(o.size(), in->size());
		for (size_t k = 14; k < o.size(); k++) {
			if (k < L4 + 12 || k >= L4 + 16) {
				EXPECT_EQ(o[k], (*in)[k]) << "byte " << k;
			}
		}
		EXPECT_EQ(sgwtest::csum(&o[14], 20), 0) << "IPv4 header checksum";
		EXPECT_TRUE(tcp_csum_ok(o, 4));
	}
	EXPECT_EQ(n_lowered, 10u);
	for (auto &o : out) {
		if (o.size() == bneg.size() && memcmp(&o[14], &bneg[14], 20) == 0 &&
		    o[L4 + 20 + 7] == 200) {
			EXPECT_EQ(fb_of(o, L4), -500) << "a lower H_feedback is kept";
		}
		if (o.size() == besp.size() && o[L4] == 50) {
			EXPECT_EQ(fb_of(o, L4), 0);
			EXPECT_EQ(0, memcmp(&o[L4 + 20], &besp[L4 + 20], besp.size() - L4 - 20))
				<< "ESP untouched";
		}
	}
	/* Refused headers: forwarded byte for byte (from IP on). */
	for (auto &b : bad) {
		bool found = false;
		for (auto &o : out)
			if (o.size() == b.size() && memcmp(&o[14], &b[14], b.size() - 14) == 0)
				found = true;
		EXPECT_TRUE(found);
	}

	uint64_t ctr[SGW_XS__COUNT], badr[SGW_XCP_E__COUNT];
	sgw_xcp_sums sums;
	sgw_xs_counters(h.dp.get(), ctr, badr, &sums);
	EXPECT_EQ(ctr[SGW_XS_XCP_SEEN], 10u + 1 + 1 + 4);
	EXPECT_EQ(ctr[SGW_XS_XCP_LINK], 10u + 1 + 1 + 4);
	EXPECT_EQ(ctr[SGW_XS_OTHER_LINK], 3u);
	EXPECT_EQ(ctr[SGW_XS_LOWERED], 11u);  /* the 10 TCP and the ESP packet */
	EXPECT_EQ(ctr[SGW_XS_BAD], 4u);
	EXPECT_EQ(badr[SGW_XCP_E_VERSION], 1u);
	EXPECT_EQ(badr[SGW_XCP_E_HLEN], 1u);
	EXPECT_EQ(badr[SGW_XCP_E_NESTED], 1u);
	EXPECT_EQ(badr[SGW_XCP_E_HLEN_TRUNC], 1u);
	EXPECT_EQ(sums.v[SGW_XCP_S_PKTS], 10u + 1 + 1 + 4 + 3);
	EXPECT_EQ(sums.v[SGW_XCP_S_XPKTS], 12u);
	EXPECT_EQ(sums.v[SGW_XCP_S_BAD], 4u);
	uint64_t bytes = 0;
	for (auto &o : out)
		bytes += size_t(o[16] << 8 | o[17]);
	EXPECT_EQ(sums.v[SGW_XCP_S_BYTES], bytes) << "every IP byte toward the link";

	/* The first interval ends at 100 ms: d becomes the mean H_rtt, 600 ms. */
	h.run_until(150 * MS);
	sgw_xs_tpub t;
	sgw_xs_read(h.dp.get(), &t);
	EXPECT_EQ(t.epoch, 1u);
	EXPECT_EQ(t.d_ns, 600 * MS);
	EXPECT_DOUBLE_EQ(t.capacity_Bps, 10000000.0 / 8);
	EXPECT_EQ(t.queue_bytes, 0u);
	EXPECT_GT(t.last.phi_bytes, 0.0);   /* nearly all of 10 Mbit/s spare */
	EXPECT_GT(t.xi_p, 0.0);

	/* Interval 2: fewer packets than the last (the budget does not bind). */
	std::map<uint32_t, Bytes> sent2;
	for (uint32_t i = 0; i < 4; i++) {
		Bytes b = with_xcp(tcp_to(false, 400 + i), X{});
		sent2[400 + i] = b;
		h.inject(b);
	}
	h.run_until(300 * MS);
	out = h.recv_sat();
	ASSERT_EQ(out.size(), 4u);
	/* Katabi's p_i from the interval's published telemetry, recomputed here. */
	const sgw_xcp_telem &L = t.last;
	double d_us = double(t.d_ns) / 1000.0, dt_us = double(L.interval_ns) / 1000.0;
	double pos = L.h_bytes + std::max(L.phi_bytes, 0.0);
	double rsc = double(L.delta.v[SGW_XCP_S_RSC]) / 65536.0;
	double xi_p = pos * dt_us / (d_us * d_us * rsc);
	EXPECT_NEAR(t.xi_p, xi_p, xi_p * 1e-9);
	for (auto &o : out) {
		uint32_t size = uint32_t(o[16] << 8 | o[17]);
		double p = xi_p * double(RTT_US) * double(RTT_US) * size / 100000.0;
		EXPECT_GT(fb_of(o, L4), 0);
		EXPECT_LT(fb_of(o, L4), 1000000);
		EXPECT_NEAR(fb_of(o, L4), p, 1.0) << "feedback = xi_p rtt^2 s / cwnd";
		EXPECT_EQ(sgwtest::csum(&o[14], 20), 0);
		EXPECT_TRUE(tcp_csum_ok(o, 4));
	}
	sgw_xs_counters(h.dp.get(), ctr, badr, &sums);
	EXPECT_GT(sums.v[SGW_XCP_S_FB_POS], 0u);
	EXPECT_EQ(sums.v[SGW_XCP_S_FB_NEG], 0u);
}

TEST(XcpStage, OverloadGivesNegativeFeedbackIPv6)
{
	Hub h;
	/* 100 kbit/s: 12.5 kB/s, far below what arrives. */
	ASSERT_NO_FATAL_FAILURE(h.start(1, "bypass", "xcp: {capacity_bps: 100000}\n"));
	h.run_until(0);
	for (uint32_t i = 0; i < 20; i++)
		h.inject(with_xcp(tcp_to(false, 10 + i, 6), X{}));
	h.run_until(650 * MS);  /* past the first interval (100 ms) */
	h.recv_sat();
	sgw_xs_tpub t;
	sgw_xs_read(h.dp.get(), &t);
	ASSERT_EQ(t.epoch, 1u);
	EXPECT_LT(t.last.phi_bytes, 0.0);
	EXPECT_GT(t.xi_n, 0.0);
	for (uint32_t i = 0; i < 5; i++)
		h.inject(with_xcp(tcp_to(false, 50 + i, 6), X{}));
	h.run_until(660 * MS);
	auto out = h.recv_sat();
	ASSERT_EQ(out.size(), 5u);
	for (auto &o : out) {
		EXPECT_EQ(o[14 + 6], 254);
		EXPECT_LT(fb_of(o, 14 + 40), 0) << "a decrease";
		EXPECT_TRUE(tcp_csum_ok(o, 6));
	}
	uint64_t ctr[SGW_XS__COUNT], badr[SGW_XCP_E__COUNT];
	sgw_xcp_sums sums;
	sgw_xs_counters(h.dp.get(), ctr, badr, &sums);
	EXPECT_GT(sums.v[SGW_XCP_S_FB_NEG], 0u);
	EXPECT_EQ(ctr[SGW_XS_LOWERED], 25u);
}

TEST(XcpStage, QueueIsSatlinksFeedQueue)
{
	Hub h;
	/* Reliable service and no terminal answering: packets wait in satlink's queues. */
	ASSERT_NO_FATAL_FAILURE(h.start(1, "reliable", "xcp: {}\n"));
	h.run_until(0);
	const uint32_t n = 200;
	for (uint32_t i = 0; i < n; i++)
		h.inject(with_xcp(tcp_to(false, 1000 + i), X{}));
	h.run_until(10 * MS);
	const sgw_sl *sl = sgw_sl_of(h.dp.get());
	ASSERT_NE(sl, nullptr);
	uint64_t q = 0, fq = 0, pq = 0;
	for (uint32_t s = 0; s < sl->n_sess; s++) {
		q += sgw_sl_queued_bytes(h.dp.get(), s);
		fq += sgw_ring_count(&sl->sess[s].fqr);
		pq += sgw_ring_count(&sl->sess[s].pqr);
	}
	EXPECT_GT(fq, 0u);
	EXPECT_EQ(pq, 0u);  /* no data frame before the session is up */
	uint32_t iplen = uint32_t(with_xcp(tcp_to(false, 1), X{}).size() - 14);
	EXPECT_EQ(q, fq * iplen);
	sgw_xs_tpub t;
	sgw_xs_read(h.dp.get(), &t);
	EXPECT_EQ(t.queue_bytes, q) << "the stage samples the same queue";
	/* Default capacity: satlink's 20 Mbit/s pacing rate per session (two terminals),
	 * less its framing. */
	EXPECT_NEAR(t.capacity_Bps, 2 * 20000000.0 / 8 * 1400 / (1400 + 14 + 22), 1e-6);
	/* The persistent queue ends up in the controller: decrease, not increase. */
	h.run_until(120 * MS);
	sgw_xs_read(h.dp.get(), &t);
	EXPECT_EQ(t.epoch, 1u);
	EXPECT_EQ(t.last.queue_bytes, double(q));
	EXPECT_EQ(t.queue_persistent, q);
}

/* Without satlink: the stage's own egress shaper on the satellite port owns the queue. */
TEST(XcpStage, ShaperWithoutSatlinkPacesAndControls)
{
	Hub h;
	/* 8 Mbit/s: 1 byte per us; a 1072-byte packet every 1.072 ms. */
	ASSERT_NO_FATAL_FAILURE(h.start(1, "", "xcp: {port: sat, capacity_bps: 8000000, "
				 "shaper_queue: 64}\n"));
	ASSERT_TRUE(h.dp->stage_on[SGW_STAGE_XCP]);
	ASSERT_FALSE(h.dp->stage_on[SGW_STAGE_SATLINK]);
	const sgw_xs *xs = sgw_xs_of(h.dp.get());
	ASSERT_TRUE(xs->shaper);
	h.run_until(0);
	const uint32_t n = 100;
	Bytes one = with_xcp(tcp_to(false, 1), X{});
	const uint32_t iplen = uint32_t(one.size() - 14);
	ASSERT_EQ(iplen, 1072u);
	for (uint32_t i = 0; i < n; i++)
		h.inject(with_xcp(tcp_to(false, 1000 + i), X{}));
	h.run_until(30 * MS);
	/* Packets arrive from 1 ms (32 a loop); the first leaves at once (1 ms of credit). */
	size_t sent = h.recv_sat().size();
	uint64_t expect = uint64_t((30 * MS - 1 * MS) / (iplen * 1000ull)) + 1;
	EXPECT_GE(sent + 1, expect);
	EXPECT_LE(sent, expect + 1);
	uint32_t held = sgw_ring_count(&xs->fr);
	EXPECT_EQ(xs->fbytes, uint64_t(held) * iplen);
	uint64_t full = h.dp->workers[0]->c.drop[sgw_stage_drop_base(SGW_STAGE_XCP)];
	EXPECT_GT(full, 0u) << "64 packets fit, 100 came at once";
	EXPECT_EQ(sent + held + full, n);
	EXPECT_STREQ(sgw_drop_name(sgw_stage_drop_base(SGW_STAGE_XCP)), "xcp_shaper_full");
	sgw_xs_tpub t;
	sgw_xs_read(h.dp.get(), &t);
	EXPECT_GT(t.queue_bytes, 0u);
	EXPECT_EQ(t.queue_bytes % iplen, 0u);
	EXPECT_DOUBLE_EQ(t.capacity_Bps, 1e6);

	/* The first interval (to 100 ms) saw 100 packets (107 kB) in 100 ms: more than
	 * the 100 kB the link carries. Its queue drained at ~70 ms, so the persistent
	 * queue (the minimum over the last propagation delay) is 0. */
	h.run_until(150 * MS);
	sent += h.recv_sat().size();
	EXPECT_EQ(sent + full, n) << "all sent by now";
	sgw_xs_read(h.dp.get(), &t);
	EXPECT_EQ(t.epoch, 1u);
	EXPECT_EQ(t.last.queue_bytes, 0.0);
	EXPECT_GT(t.last.input_Bps, t.capacity_Bps);
	EXPECT_LT(t.last.phi_bytes, 0.0);
	/* The shaper's port and queue need a restart; its rate does not. */
	{
		uint32_t a, b;
		two_shards(a, b);
		std::string y = h.yaml(a, b, "", "xcp: {port: sat, capacity_bps: 8000000, "
				       "shaper_queue: 65}\n");
		struct sgw_policy pol;
		struct sgw_cfg_errors errs;
		char e[256] = "";
		ASSERT_EQ(sgw_policy_load_buffer("xs.yaml", y.data(), y.size(), &pol, &errs), 0);
		EXPECT_NE(sgw_dp_publish(h.dp.get(), &pol, e, sizeof(e)), 0);
		EXPECT_STREQ(e, "xcp: the shaper's 'port', 'shaper_queue' and 'separate_queues' "
			     "need a restart");
		sgw_policy_free(&pol);
	}
	for (uint32_t i = 0; i < 5; i++)
		h.inject(with_xcp(tcp_to(false, 2000 + i), X{}));
	h.run_until(160 * MS);
	auto out = h.recv_sat();
	ASSERT_EQ(out.size(), 5u);
	for (auto &o : out) {
		EXPECT_LT(fb_of(o, L4), 0) << "a decrease";
		EXPECT_TRUE(tcp_csum_ok(o, 4));
	}
	/* Some left in the queue for the accounting check (held) and the drain (shutdown). */
	for (uint32_t i = 0; i < 10; i++)
		h.inject(with_xcp(tcp_to(false, 3000 + i), X{}));
	h.run_until(162 * MS);
	EXPECT_GT(sgw_ring_count(&xs->fr), 0u);
	uint64_t ctr[SGW_XS__COUNT], badr[SGW_XCP_E__COUNT];
	sgw_xcp_sums sums;
	sgw_xs_counters(h.dp.get(), ctr, badr, &sums);
	EXPECT_EQ(ctr[SGW_XS_XCP_LINK], n + 15);
	EXPECT_EQ(ctr[SGW_XS_SHAPED], sent + 5 + (10 - sgw_ring_count(&xs->fr)));
}

/*
 * Separate queues at the shaper (xcp.separate_queues): XCP packets and plain
 * TCP wait in two queues, served by a weight that moves each control interval
 * toward the XCP class's share of the flows; the controller sees only the XCP
 * class (its input, its queue) and the capacity the class gets.
 */
TEST(XcpStage, SeparateQueuesSplitByTheWeightAndAccount)
{
	Hub h;
	/* 8 Mbit/s = 1e6 B/s; H_rtt 100 ms, so every control interval is 100 ms. */
	ASSERT_NO_FATAL_FAILURE(h.start(1, "", "xcp: {port: sat, capacity_bps: 8000000, "
				 "shaper_queue: 64, separate_queues: true}\n"));
	const sgw_xs *xs = sgw_xs_of(h.dp.get());
	ASSERT_TRUE(xs->shaper);
	ASSERT_TRUE(xs->twoq);
	const double C = 1e6;
	h.run_until(0);
	X x;
	x.rtt_us = 100000;
	/* Both classes 1072-byte IP packets: one XCP flow, three TCP flows. */
	ASSERT_EQ(with_xcp(tcp_to(false, 1), x).size() - 14, 1072u);
	ASSERT_EQ(sgwtest::build(tcp_to(false, 1, 4, 1020)).size() - 14, 1072u);
	uint64_t in_x = 0, in_o = 0, out_x = 0, out_o = 0;
	uint32_t seq = 0;
	/* Bytes each class sent in each 100 ms window (ms 1-100 is window 0). */
	std::vector<std::pair<uint64_t, uint64_t>> win(11);
	std::vector<double> w_at(11, 0.5), target_at(11, 0.5);
	auto tally = [&](uint64_t t_ms) {
		for (auto &o : h.recv_sat()) {
			size_t k = size_t((t_ms - 1) / 100);
			bool isx = o[14 + 9] == 254;
			(isx ? out_x : out_o)++;
			if (k < win.size())
				(isx ? win[k].first : win[k].second) += o.size() - 14;
		}
	};
	sgw_xs_tpub t;
	uint64_t epoch = 0;
	for (uint64_t ms = 1; ms <= 1100; ms++) {
		/* Every 10 ms (until 600 ms for TCP): 8 XCP and 8 TCP packets, 1.7x the link. */
		if (ms % 10 == 1) {
			for (int i = 0; i < 8; i++, in_x++)
				h.inject(with_xcp(tcp_to(false, (1u << 16) | seq++), x));
			for (int i = 0; ms <= 600 && i < 8; i++, in_o++)
				h.inject(sgwtest::build(tcp_to(false, uint32_t(2 + i % 3) << 16 |
							       seq++, 4, 1020)));
		}
		h.run_until(ms * MS);
		tally(ms);
		sgw_xs_read(h.dp.get(), &t);
		if (t.epoch != epoch) {
			epoch = t.epoch;
			size_t k = size_t(ms / 100);
			ASSERT_EQ(ms % 100, 0u) << "intervals of 100 ms";
			if (k < w_at.size()) {
				w_at[k] = t.wq.w;
				target_at[k] = t.wq.w_target;
			}
			/* The controller is given the XCP class's capacity; the
			 * link's is published as before. */
			EXPECT_DOUBLE_EQ(t.last.capacity_Bps, t.wq.cap_x_Bps);
			EXPECT_DOUBLE_EQ(t.capacity_Bps, C);
			EXPECT_DOUBLE_EQ(t.wq.cap_x_Bps,
					 t.wq.o_idle ? std::max(t.wq.w * C,
								C - t.wq.sent_Bps[SGW_XCPQ_O])
						     : t.wq.w * C);
			/* TCP had a backlog from the first ms to 600 ms. */
			if (ms >= 200 && ms <= 600) {
				EXPECT_FALSE(t.wq.o_idle) << ms;
			}
		}
	}
	/* Intervals 1-6 (ends 100..600 ms): one XCP and three TCP flows: target 0.25, the
	 * weight half-way there each time. */
	double w = 0.5;
	for (size_t k = 1; k <= 6; k++) {
		EXPECT_NEAR(target_at[k], 0.25, 0.01) << k;
		w += 0.5 * (target_at[k] - w);
		EXPECT_NEAR(w_at[k], w, 1e-9) << k;
	}
	EXPECT_NEAR(w_at[6], 0.25, 0.01);
	/* Window 0 ran at 0.5 (both backlogged from the first ms): the bytes split half
	 * and half; windows 1-5 by the weight in force, within 3 packets. */
	for (size_t k = 0; k <= 5; k++) {
		double tot = double(win[k].first + win[k].second);
		EXPECT_NEAR(tot, C * 0.1, 2 * 1072.0) << "the link is full, window " << k;
		EXPECT_NEAR(double(win[k].first) / tot, w_at[k], 3 * 1072.0 / tot) << k;
	}
	/* From 600 ms no TCP: the XCP class gets the whole link (work conserving) and is
	 * told so (capacity C - the other class's rate). The TCP flows stay counted for
	 * four intervals after their last packet (to 900 ms), then the target is
	 * 1 - floor. */
	EXPECT_NEAR(double(win[7].first), C * 0.1, 2 * 1072.0);
	EXPECT_EQ(win[7].second, 0u);
	EXPECT_NEAR(target_at[9], 0.25, 0.01);
	EXPECT_NEAR(target_at[10], 0.98, 1e-9);
	EXPECT_NEAR(t.wq.cap_x_Bps, C, 0.02 * C);
	/* The controller's input is the XCP class's alone: 8 x 1072 B per 10 ms. */
	EXPECT_NEAR(t.last.input_Bps, 857600.0, 0.02 * 857600.0);
	EXPECT_NEAR(t.wq.flows[SGW_XCPQ_X], 1.0, 0.01);
	EXPECT_NEAR(t.wq.flows[SGW_XCPQ_O], 0.0, 0.01);

	/* Every packet accounted: sent, dropped at its class's full queue, or held. */
	uint64_t ctr[SGW_XS__COUNT], badr[SGW_XCP_E__COUNT];
	sgw_xcp_sums sums;
	sgw_xs_counters(h.dp.get(), ctr, badr, &sums);
	const unsigned base = sgw_stage_drop_base(SGW_STAGE_XCP);
	uint64_t dx = h.dp->workers[0]->c.drop[base], dox = h.dp->workers[0]->c.drop[base + 1];
	EXPECT_STREQ(sgw_drop_name(base + 1), "xcp_shaper_other_full");
	EXPECT_GT(dx, 0u);
	EXPECT_GT(dox, 0u);
	EXPECT_EQ(ctr[SGW_XS_QX_DROP], dx);
	EXPECT_EQ(ctr[SGW_XS_QO_DROP], dox);
	EXPECT_EQ(in_x, out_x + dx + sgw_ring_count(&xs->fr));
	EXPECT_EQ(in_o, out_o + dox + sgw_ring_count(&xs->fro));
	EXPECT_EQ(ctr[SGW_XS_QX_IN], in_x - dx);
	EXPECT_EQ(ctr[SGW_XS_QO_IN], in_o - dox);
	EXPECT_EQ(ctr[SGW_XS_QX_SENT], out_x);
	EXPECT_EQ(ctr[SGW_XS_QO_SENT], out_o);
	EXPECT_EQ(ctr[SGW_XS_QX_SENT_BYTES], out_x * 1072);
	EXPECT_EQ(ctr[SGW_XS_QO_SENT_BYTES], out_o * 1072);
	EXPECT_EQ(ctr[SGW_XS_SHAPED], out_x + out_o);
	EXPECT_EQ(ctr[SGW_XS_OTHER_LINK], in_o);
	EXPECT_EQ(sums.v[SGW_XCP_S_BYTES], in_x * 1072) << "TCP is not the controller's input";
	EXPECT_EQ(xs->fbytes, uint64_t(sgw_ring_count(&xs->fr)) * 1072);
	EXPECT_GT(sgw_ring_count(&xs->fr), 0u) << "some held for the identity and the drain";

	/* The exit JSON and the summary carry the classes. */
	char *buf = nullptr;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	ASSERT_NE(f, nullptr);
	sgw_stages[SGW_STAGE_XCP]->write_json(h.dp.get(), f);
	sgw_stages[SGW_STAGE_XCP]->print_summary(h.dp.get(), f);
	fclose(f);
	std::string js(buf, len);
	free(buf);
	EXPECT_NE(js.find("\"separate_queues\": 1"), std::string::npos) << js;
	EXPECT_NE(js.find("\"q_xcp_drops\": " + std::to_string(dx)), std::string::npos);
	EXPECT_NE(js.find("\"q_other_sent\": " + std::to_string(out_o)), std::string::npos);
	EXPECT_NE(js.find("\"q_xcp_weight\": "), std::string::npos);
	EXPECT_NE(js.find("xcp queues: weight"), std::string::npos) << js;

	/* separate_queues needs a restart; the gain does not. */
	uint32_t a, b;
	two_shards(a, b);
	for (const char *tail : {"separate_queues: false", "separate_queues: true, "
				 "queue_weight_gain: 0.25"}) {
		std::string y = h.yaml(a, b, "", std::string("xcp: {port: sat, capacity_bps: "
				       "8000000, shaper_queue: 64, ") + tail + "}\n");
		struct sgw_policy pol;
		struct sgw_cfg_errors errs;
		char e[256] = "";
		ASSERT_EQ(sgw_policy_load_buffer("xs.yaml", y.data(), y.size(), &pol, &errs), 0);
		int rc = sgw_dp_publish(h.dp.get(), &pol, e, sizeof(e));
		if (std::string(tail) == "separate_queues: false")
			EXPECT_NE(rc, 0);
		else
			EXPECT_EQ(rc, 0) << e;
		sgw_policy_free(&pol);
	}
}

/* One queue (separate_queues off): TCP is load of the one controller, as before. */
TEST(XcpStage, OneQueueCountsTcpAsLoad)
{
	Hub h;
	ASSERT_NO_FATAL_FAILURE(h.start(1, "", "xcp: {port: sat, capacity_bps: 8000000, "
				 "shaper_queue: 64}\n"));
	const sgw_xs *xs = sgw_xs_of(h.dp.get());
	ASSERT_FALSE(xs->twoq);
	h.run_until(0);
	X x;
	x.rtt_us = 100000;
	for (int i = 0; i < 8; i++) {
		h.inject(with_xcp(tcp_to(false, uint32_t(i)), x));
		h.inject(sgwtest::build(tcp_to(false, uint32_t(100 + i), 4, 1020)));
	}
	h.run_until(50 * MS);
	uint64_t ctr[SGW_XS__COUNT], badr[SGW_XCP_E__COUNT];
	sgw_xcp_sums sums;
	sgw_xs_counters(h.dp.get(), ctr, badr, &sums);
	EXPECT_EQ(sums.v[SGW_XCP_S_BYTES], 16u * 1072);
	EXPECT_EQ(ctr[SGW_XS_QX_IN] + ctr[SGW_XS_QO_IN], 0u);
	EXPECT_EQ(h.recv_sat().size(), 16u);
}

TEST(XcpStage, ReloadTakesConstantsRefusesTurningOff)
{
	Hub h;
	ASSERT_NO_FATAL_FAILURE(h.start(1, "bypass", "xcp: {capacity_bps: 10000000}\n"));
	h.run_until(0);
	uint32_t a, b;
	two_shards(a, b);
	auto publish = [&](const std::string &xcp, std::string &err) {
		std::string y = h.yaml(a, b, "bypass", xcp);
		struct sgw_policy pol;
		struct sgw_cfg_errors errs;
		char e[256] = "";
		EXPECT_EQ(sgw_policy_load_buffer("xs.yaml", y.data(), y.size(), &pol, &errs), 0);
		int rc = sgw_dp_publish(h.dp.get(), &pol, e, sizeof(e));
		sgw_policy_free(&pol);
		err = e;
		return rc;
	};
	std::string err;
	EXPECT_NE(publish("xcp: {enabled: false}\n", err), 0);
	EXPECT_NE(err.find("xcp: 'enabled' and the XCP protocol number need a restart"),
		  std::string::npos) << err;
	EXPECT_NE(publish("", err), 0);
	/* A new capacity is taken at the end of the running interval. */
	ASSERT_EQ(publish("xcp: {capacity_bps: 4000000}\n", err), 0) << err;
	h.run_until(50 * MS);
	sgw_xs_tpub t;
	sgw_xs_read(h.dp.get(), &t);
	EXPECT_EQ(t.epoch, 0u);
	EXPECT_DOUBLE_EQ(t.capacity_Bps, 10000000.0 / 8);
	h.run_until(120 * MS);
	sgw_xs_read(h.dp.get(), &t);
	EXPECT_EQ(t.epoch, 1u);
	EXPECT_DOUBLE_EQ(t.capacity_Bps, 4000000.0 / 8);
	EXPECT_DOUBLE_EQ(t.last.capacity_Bps, 4000000.0 / 8);
}

TEST(XcpStage, ExitJsonSummaryAndTelemetry)
{
	Hub h;
	ASSERT_NO_FATAL_FAILURE(h.start(1, "bypass", "xcp: {capacity_bps: 10000000}\n"));
	h.run_until(0);
	for (uint32_t i = 0; i < 8; i++)
		h.inject(with_xcp(tcp_to(false, 10 + i), X{}));
	X v1;
	v1.ver_flags = 0x10;
	h.inject(with_xcp(tcp_to(false, 99), v1));
	h.run_until(150 * MS);
	h.recv_sat();

	std::string path = "/tmp/xs_exit_" + std::to_string(getpid()) + ".json";
	FILE *f = fopen(path.c_str(), "w");
	ASSERT_NE(f, nullptr);
	ASSERT_EQ(sgw_stats_write_json(h.dp.get(), f, 1.0), 0);
	fclose(f);
	std::string json;
	{
		FILE *r = fopen(path.c_str(), "r");
		ASSERT_NE(r, nullptr);
		char buf[4096];
		size_t n;
		while ((n = fread(buf, 1, sizeof(buf), r)) > 0)
			json.append(buf, n);
		fclose(r);
	}
	EXPECT_NE(json.find("\"xcp\": {\"protocol\": 254"), std::string::npos) << json;
	EXPECT_NE(json.find("\"queue\": \"satlink\""), std::string::npos) << json;
	EXPECT_NE(json.find("\"xcp_to_link\": 9"), std::string::npos) << json;
	EXPECT_NE(json.find("\"bad_bad_version\": 1"), std::string::npos) << json;
	EXPECT_NE(json.find("\"control_intervals\": 1"), std::string::npos) << json;
	/* Well-formed JSON, when Debian's Python is there to say so. */
	if (access("/usr/bin/python3", X_OK) == 0) {
		std::string cmd = "/usr/bin/python3 -c "
				  "'import json,sys; json.load(open(sys.argv[1]))' " + path;
		EXPECT_EQ(system(cmd.c_str()), 0) << json;
	}
	unlink(path.c_str());

	char *mem = nullptr;
	size_t len = 0;
	FILE *m = open_memstream(&mem, &len);
	ASSERT_NE(m, nullptr);
	sgw_stages_print_summary(h.dp.get(), m);
	fclose(m);
	std::string sum(mem, len);
	free(mem);
	EXPECT_NE(sum.find("xcp link: capacity 10000000 bit/s"), std::string::npos) << sum;
	EXPECT_NE(sum.find("9 XCP to the link (8 lowered, 1 bad header)"), std::string::npos)
		<< sum;

	struct rte_tel_data *d = rte_tel_data_alloc();
	ASSERT_NE(d, nullptr);
	EXPECT_EQ(sgw_stages[SGW_STAGE_XCP]->telemetry(h.dp.get(), "", d), 0);
	rte_tel_data_free(d);
	EXPECT_STREQ(sgw_stages[SGW_STAGE_XCP]->tel_cmd, "/satgw/xcp");
}

/*
 * Scope session against scope carrier on the same traffic. Each session is
 * paced at 20 Mbit/s (C = 20 M x 1400/1436 IP bits/s); site a is sent about
 * 1.4 C, site b about 0.1 C, for the first interval (100 ms). The carrier's
 * controller sees 1.5 C of input against 2 C of capacity and tells both to
 * speed up; per session, a's controller sees its own pacer overloaded and
 * tells a to slow down, while b's tells b to speed up. A packet toward the
 * link that has no session (no terminal owns its destination) reaches no
 * controller in scope session and keeps its header.
 */
struct ScopeRun {
	sgw_xs_tpub sum{}, a{}, b{};
	int32_t fb_a = 0, fb_b = 0, fb_none = 0;     /* the second batch's, per site */
	uint64_t no_session = 0, lowered = 0;
	sgw_xcp_sums sums{};
	uint32_t workers_of_ab[2] = {0, 0};
};

const uint32_t SC_PAYLOAD = 1400;       /* IP packet: 20 + 16 + 20 + 1400 = 1456 bytes */

ScopeRun
run_scope(const std::string &scope, uint32_t workers)
{
	ScopeRun r;
	Hub h;
	h.scope = scope;
	h.start(workers, "bypass", "xcp: {}\n");
	if (::testing::Test::HasFatalFailure())
		return r;
	h.run_until(0);
	Frame none = tcp_to(false, 90000, 4, 100);
	none.dst = "10.20.3.5";   /* inside the rule, no terminal's prefix */
	h.inject(with_xcp(none, X{}));
	for (uint32_t i = 0; i < 240; i++)
		h.inject(with_xcp(tcp_to(false, 1000 + i, 4, SC_PAYLOAD), X{}));
	for (uint32_t i = 0; i < 20; i++)
		h.inject(with_xcp(tcp_to(true, 5000 + i, 4, SC_PAYLOAD), X{}));
	h.run_until(150 * MS);
	h.recv_sat();
	sgw_xs_read(h.dp.get(), &r.sum);
	sgw_xs_sess_read(h.dp.get(), 0, &r.a, nullptr);
	sgw_xs_sess_read(h.dp.get(), 1, &r.b, nullptr);
	const sgw_sl *sl = sgw_sl_of(h.dp.get());
	if (sl != nullptr && sl->n_sess == 2) {
		r.workers_of_ab[0] = sl->sess[0].owner;
		r.workers_of_ab[1] = sl->sess[1].owner;
	}
	h.inject(with_xcp(tcp_to(false, 2000, 4, SC_PAYLOAD), X{}));
	h.inject(with_xcp(tcp_to(true, 6000, 4, SC_PAYLOAD), X{}));
	h.inject(with_xcp(none, X{}));
	h.run_until(160 * MS);
	for (auto &o : h.recv_sat()) {
		uint32_t seq = uint32_t(o[L4 + 20 + 4]) << 24 | uint32_t(o[L4 + 20 + 5]) << 16 |
			       uint32_t(o[L4 + 20 + 6]) << 8 | o[L4 + 20 + 7];
		(seq == 2000 ? r.fb_a : seq == 6000 ? r.fb_b : r.fb_none) = fb_of(o, L4);
	}
	uint64_t ctr[SGW_XS__COUNT], badr[SGW_XCP_E__COUNT];
	sgw_xs_counters(h.dp.get(), ctr, badr, &r.sums);
	r.no_session = ctr[SGW_XS_NO_SESSION];
	r.lowered = ctr[SGW_XS_LOWERED];
	return r;
}

TEST(XcpStage, SessionScopeEachPacerItsOwnController)
{
	const double C = 20000000.0 / 8 * 1400 / (1400 + 14 + 22);   /* bytes/s, one session */
	const double in_a = 240.0 * 1456 / 0.1, in_b = 20.0 * 1456 / 0.1;

	ScopeRun car = run_scope("carrier", 1);
	ASSERT_FALSE(HasFatalFailure());
	EXPECT_NEAR(car.sum.capacity_Bps, 2 * C, 1e-6);
	EXPECT_EQ(car.sum.epoch, 1u);
	EXPECT_GT(car.sum.last.spare_Bps, 0.0) << "1.5 C of 2 C";
	EXPECT_GT(car.fb_a, 0) << "the carrier tells the overloaded site to speed up";
	EXPECT_GT(car.fb_b, 0);
	EXPECT_GT(car.fb_none, 0) << "carrier: every packet toward the port is its input";
	EXPECT_LT(car.fb_none, 1000000);
	EXPECT_EQ(car.no_session, 0u);
	EXPECT_EQ(car.a.epoch, 0u) << "no session controllers in scope carrier";

	for (uint32_t workers : {1u, 2u}) {
		SCOPED_TRACE("workers " + std::to_string(workers));
		ScopeRun ses = run_scope("session", workers);
		ASSERT_FALSE(HasFatalFailure());
		if (workers == 2) {
			EXPECT_NE(ses.workers_of_ab[0], ses.workers_of_ab[1])
				<< "the two sessions' controllers run on different workers";
		}
		EXPECT_DOUBLE_EQ(ses.a.capacity_Bps, C);
		EXPECT_DOUBLE_EQ(ses.b.capacity_Bps, C);
		EXPECT_EQ(ses.a.epoch, 1u);
		EXPECT_EQ(ses.b.epoch, 1u);
		EXPECT_EQ(ses.a.d_ns, 600 * MS) << "the mean H_rtt of its own traffic";
		/* Each controller measured its own session's input only. */
		EXPECT_NEAR(ses.a.last.input_Bps, in_a, in_a * 0.02);
		EXPECT_NEAR(ses.b.last.input_Bps, in_b, in_b * 0.02);
		EXPECT_LT(ses.a.last.phi_bytes, 0.0) << "a's pacer is overloaded";
		EXPECT_GT(ses.a.xi_n, 0.0);
		EXPECT_GT(ses.b.last.phi_bytes, 0.0) << "b's pacer has room";
		EXPECT_GT(ses.b.xi_p, 0.0);
		EXPECT_LT(ses.fb_a, 0) << "site a is told to slow down";
		EXPECT_GT(ses.fb_b, 0) << "site b to speed up";
		EXPECT_LT(ses.fb_b, 1000000);
		EXPECT_EQ(ses.fb_none, 1000000) << "no session, no controller: header untouched";
		EXPECT_EQ(ses.no_session, 2u);
		EXPECT_EQ(ses.lowered, 240u + 20 + 2);
		/* The link's telemetry in scope session: the sessions' sums. */
		EXPECT_DOUBLE_EQ(ses.sum.capacity_Bps, 2 * C);
		EXPECT_EQ(ses.sum.epoch, 2u);
		EXPECT_DOUBLE_EQ(ses.sum.last.input_Bps,
				 ses.a.last.input_Bps + ses.b.last.input_Bps);
		EXPECT_EQ(ses.sums.v[SGW_XCP_S_XPKTS], 240u + 20 + 2);
		EXPECT_GT(ses.sums.v[SGW_XCP_S_FB_NEG], 0u);
		EXPECT_GT(ses.sums.v[SGW_XCP_S_FB_POS], 0u);
	}
}

/* Scope session with satlink's queue: each controller samples its own session's. */
TEST(XcpStage, SessionScopeQueueIsTheSessionsOwn)
{
	Hub h;
	h.scope = "session";
	ASSERT_NO_FATAL_FAILURE(h.start(1, "reliable", "xcp: {}\n"));
	h.run_until(0);
	for (uint32_t i = 0; i < 200; i++)
		h.inject(with_xcp(tcp_to(false, 1000 + i), X{}));
	for (uint32_t i = 0; i < 100; i++)
		h.inject(with_xcp(tcp_to(true, 3000 + i), X{}));
	h.run_until(60 * MS);
	const sgw_sl *sl = sgw_sl_of(h.dp.get());
	ASSERT_NE(sl, nullptr);
	ASSERT_EQ(sl->n_sess, 2u);
	uint64_t q0 = sgw_sl_queued_bytes(h.dp.get(), 0), q1 = sgw_sl_queued_bytes(h.dp.get(), 1);
	uint32_t iplen = uint32_t(with_xcp(tcp_to(false, 1), X{}).size() - 14);
	/*
	 * What each session's feed queue holds (the ARQ took the first packets
	 * into its window, which the controller does not count: docs/xcp.md).
	 */
	EXPECT_EQ(q0, uint64_t(sgw_ring_count(&sl->sess[0].fqr)) * iplen);
	EXPECT_EQ(q1, uint64_t(sgw_ring_count(&sl->sess[1].fqr)) * iplen);
	EXPECT_EQ(sl->sess[0].term_id, 1001u) << "session 0 is site a's (the policy's order)";
	EXPECT_GT(q1, 0u);
	EXPECT_EQ(q0 - q1, 100u * iplen) << "site a was sent 100 packets more";
	sgw_xs_tpub t0, t1, sum;
	ASSERT_EQ(sgw_xs_sess_read(h.dp.get(), 0, &t0, nullptr), 0);
	ASSERT_EQ(sgw_xs_sess_read(h.dp.get(), 1, &t1, nullptr), 0);
	EXPECT_EQ(sgw_xs_sess_read(h.dp.get(), 2, &t1, nullptr), -1);
	sgw_xs_read(h.dp.get(), &sum);
	EXPECT_EQ(sum.queue_bytes, q0 + q1);
	h.run_until(120 * MS);
	ASSERT_EQ(sgw_xs_sess_read(h.dp.get(), 0, &t0, nullptr), 0);
	ASSERT_EQ(sgw_xs_sess_read(h.dp.get(), 1, &t1, nullptr), 0);
	EXPECT_EQ(t0.epoch, 1u);
	EXPECT_EQ(t0.last.queue_bytes, double(q0)) << "its persistent queue: its own session's";
	EXPECT_EQ(t1.last.queue_bytes, double(q1));
	EXPECT_EQ(t0.queue_persistent, q0);

	/* The exit JSON lists each session's controller; a reload may not change the scope. */
	std::string path = "/tmp/xs_sess_" + std::to_string(getpid()) + ".json";
	FILE *f = fopen(path.c_str(), "w");
	ASSERT_NE(f, nullptr);
	ASSERT_EQ(sgw_stats_write_json(h.dp.get(), f, 1.0), 0);
	fclose(f);
	if (access("/usr/bin/python3", X_OK) == 0) {
		std::string cmd = "/usr/bin/python3 -c 'import json,sys; x = json.load("
				  "open(sys.argv[1]))[\"xcp\"]; s = x[\"sessions\"]; "
				  "assert x[\"scope\"] == \"session\" and len(s) == 2, x; "
				  "assert x[\"link\"][\"controllers\"] == 2, x; "
				  "assert sorted(e[\"terminal_id\"] for e in s)[0] == 1001, s; "
				  "assert sum(e[\"queue_bytes\"] for e in s) == " +
				  std::to_string(q0 + q1) + ", s' " + path;
		EXPECT_EQ(system(cmd.c_str()), 0);
	} else {
		ADD_FAILURE() << "/usr/bin/python3 is needed to read the exit JSON";
	}
	unlink(path.c_str());
	struct rte_tel_data *d = rte_tel_data_alloc();
	ASSERT_NE(d, nullptr);
	EXPECT_EQ(sgw_stages[SGW_STAGE_XCP]->telemetry(h.dp.get(), "1", d), 0);
	rte_tel_data_free(d);
	uint32_t a, b;
	two_shards(a, b);
	std::string y = h.yaml(a, b, "reliable", "xcp: {scope: carrier}\n");
	struct sgw_policy pol;
	struct sgw_cfg_errors errs;
	char e[256] = "";
	ASSERT_EQ(sgw_policy_load_buffer("xs.yaml", y.data(), y.size(), &pol, &errs), 0);
	EXPECT_NE(sgw_dp_publish(h.dp.get(), &pol, e, sizeof(e)), 0);
	sgw_policy_free(&pol);
	EXPECT_STREQ(e, "xcp: 'scope' needs a restart");
}

/*
 * The same packets at the same virtual times through a hub with one worker and
 * one with two, the two terminals on different workers: the controller's
 * aggregate, its parameters and every packet's feedback are the same.
 */
struct RunResult {
	std::vector<sgw_xs_tpub> tp;          /* after each interval */
	std::map<uint32_t, Bytes> out;        /* by TCP sequence number, from IP on */
	double pos_budget = 0, neg_budget = 0;
	sgw_xcp_sums sums{};
};

RunResult
run_scenario(uint32_t workers)
{
	RunResult r;
	Hub h;
	h.start(workers, "bypass", "xcp: {capacity_bps: 8000000}\n");
	if (::testing::Test::HasFatalFailure())
		return r;
	/* Batches well inside the intervals (ends at 100, 700, 1300, 1900 ms). */
	const uint64_t at[] = {20 * MS, 300 * MS, 900 * MS, 1500 * MS};
	const uint32_t per_flow[] = {12, 6, 3, 2};
	h.run_until(0);
	uint32_t seq = 1;
	for (unsigned int k = 0; k < 4; k++) {
		h.run_until(at[k] - MS);
		for (uint32_t fl = 0; fl < 6; fl++)
			for (uint32_t i = 0; i < per_flow[k]; i++) {
				X x;
				/* One H_rtt (d stays 600 ms, the batches stay inside intervals);
				 * windows and sizes differ per flow. */
				x.cwnd = 20000 + 15000 * fl;
				h.inject(with_xcp(tcp_to(fl % 2 == 1, (fl << 16) | seq++, 4,
							 200 + 150 * fl), x));
			}
		h.run_until(at[k] + 200 * MS);
		sgw_xs_tpub t;
		sgw_xs_read(h.dp.get(), &t);
		r.tp.push_back(t);
		for (auto &o : h.recv_sat()) {
			uint32_t s = uint32_t(o[L4 + 20 + 4]) << 24 |
				     uint32_t(o[L4 + 20 + 5]) << 16 |
				     uint32_t(o[L4 + 20 + 6]) << 8 | o[L4 + 20 + 7];
			r.out[s] = Bytes(o.begin() + 14, o.end());
		}
	}
	h.run_until(2000 * MS);
	sgw_xs_tpub t;
	sgw_xs_read(h.dp.get(), &t);
	r.tp.push_back(t);
	const sgw_xs *xs = sgw_xs_of(h.dp.get());
	for (uint32_t w = 0; w < workers; w++) {
		r.pos_budget += xs->out[w].pos_budget;
		r.neg_budget += xs->out[w].neg_budget;
	}
	uint64_t ctr[SGW_XS__COUNT], badr[SGW_XCP_E__COUNT];
	sgw_xs_counters(h.dp.get(), ctr, badr, &r.sums);
	/* Both workers carried part of the link. */
	if (workers == 2) {
		sgw_xcp_sums a, b;
		sgw_xcp_acc_read(&xs->acc[0], &a);
		sgw_xcp_acc_read(&xs->acc[1], &b);
		EXPECT_GT(a.v[SGW_XCP_S_XPKTS], 0u);
		EXPECT_GT(b.v[SGW_XCP_S_XPKTS], 0u);
	}
	return r;
}

TEST(XcpStage, TwoWorkersSharingTheLinkMatchOne)
{
	RunResult one = run_scenario(1);
	ASSERT_FALSE(HasFatalFailure());
	RunResult two = run_scenario(2);
	ASSERT_FALSE(HasFatalFailure());

	ASSERT_EQ(one.tp.size(), 5u);
	ASSERT_EQ(two.tp.size(), 5u);
	/* Read at 220, 500, 1100, 1700 and 2000 ms; intervals end at 100, 700, 1300, 1900. */
	const uint64_t epochs[] = {1, 1, 2, 3, 4};
	for (size_t k = 0; k < one.tp.size(); k++) {
		const sgw_xs_tpub &a = one.tp[k], &b = two.tp[k];
		EXPECT_EQ(a.epoch, epochs[k]);
		EXPECT_EQ(a.d_ns, 600 * MS);
		EXPECT_EQ(a.epoch, b.epoch);
		EXPECT_EQ(a.d_ns, b.d_ns);
		EXPECT_EQ(a.t_start_ns, b.t_start_ns);
		EXPECT_EQ(a.last.interval_ns, b.last.interval_ns);
		EXPECT_EQ(0, memcmp(&a.last.delta, &b.last.delta, sizeof(a.last.delta)))
			<< "interval " << k << ": the sums over all workers";
		/* Bit for bit: integer sums in, the same arithmetic out. */
		EXPECT_EQ(a.last.input_Bps, b.last.input_Bps);
		EXPECT_EQ(a.last.phi_bytes, b.last.phi_bytes);
		EXPECT_EQ(a.last.h_bytes, b.last.h_bytes);
		EXPECT_EQ(a.last.flows, b.last.flows);
		EXPECT_EQ(a.xi_p, b.xi_p);
		EXPECT_EQ(a.xi_n, b.xi_n);
	}
	EXPECT_GT(one.tp[1].xi_p, 0.0);
	EXPECT_NEAR(one.pos_budget, two.pos_budget, one.pos_budget * 1e-12 + 1e-9);
	EXPECT_NEAR(one.neg_budget, two.neg_budget, one.neg_budget * 1e-12 + 1e-9);
	EXPECT_EQ(0, memcmp(&one.sums, &two.sums, sizeof(one.sums)));
	ASSERT_EQ(one.out.size(), 6u * (12 + 6 + 3 + 2));
	ASSERT_EQ(one.out.size(), two.out.size());
	size_t positive = 0;
	for (auto &kv : one.out) {
		ASSERT_EQ(two.out.count(kv.first), 1u) << kv.first;
		EXPECT_EQ(kv.second, two.out[kv.first]) << "packet " << kv.first;
		positive += fb_of(kv.second, 20) > 0;
	}
	EXPECT_GT(positive, 0u);
}

} // namespace

/* ------------------------------------------------------------ legacy mode */

namespace legacy {

const char *const S_ADDR = "198.51.100.10";  /* the terrestrial sender, no agent */
const char *const R_ADDR = "10.20.1.5";      /* its receiver behind site a */
const uint32_t S_ISN = 1000, R_ISN = 5000;
const size_t TCP_OFF = 14 + 20;               /* the TCP header of an IPv4 frame */

/* A plain TCP frame of the flow: from the sender (terrestrial side) or the receiver. */
Bytes
seg(bool from_r, uint32_t seq, uint32_t ack, uint8_t flags, size_t payload,
    const char *raddr = R_ADDR)
{
	Frame f;
	f.src = from_r ? raddr : S_ADDR;
	f.dst = from_r ? S_ADDR : raddr;
	f.sport = from_r ? 80 : 40000;
	f.dport = from_r ? 40000 : 80;
	f.seq = seq;
	f.ack = ack;
	f.tcp_flags = flags;
	f.payload = payload;
	return sgwtest::build(f);
}

uint32_t
get32(const Bytes &b, size_t o)
{
	return uint32_t(b[o]) << 24 | uint32_t(b[o + 1]) << 16 | uint32_t(b[o + 2]) << 8 |
	       b[o + 3];
}

uint16_t
wnd_of(const Bytes &b)
{
	return uint16_t(b[TCP_OFF + 14] << 8 | b[TCP_OFF + 15]);
}

/* Is the TCP checksum of a plain IPv4 TCP frame right? */
bool
plain_csum_ok(const Bytes &b)
{
	size_t iplen = size_t(b[14 + 2] << 8 | b[14 + 3]), tlen = iplen - 20;
	Bytes ph(b.begin() + 14 + 12, b.begin() + 14 + 20);
	ph.push_back(0);
	ph.push_back(6);
	sgwtest::put16(ph, uint16_t(tlen));
	ph.insert(ph.end(), b.begin() + long(TCP_OFF), b.begin() + long(TCP_OFF + tlen));
	return sgwtest::csum(ph.data(), ph.size()) == 0;
}

struct LegRun {
	std::vector<Bytes> acks_in;    /* what the receiver sent, in order */
	std::vector<Bytes> acks_out;   /* what the hub forwarded toward the sender */
	uint32_t share = 0;            /* the flow's share at the end (legacy on) */
	uint64_t ctr[SGW_XS__COUNT] = {};
	sgw_xs_legacy_stats ls{};
	sgw_xs_tpub t{};
	size_t data_pkts = 0;
};

const uint32_t ROUNDS = 24, PER_ROUND = 20;  /* 20 x 1000 B every 100 ms: 1.6 Mbit/s */

/*
 * A legacy sender through a hub whose link carries 100 kbit/s: the SYN, the
 * receiver's SYN-ACK 600 ms later (an RTT sample), then every 100 ms 20 data
 * segments toward the satellite and the receiver's ACK of the round sent
 * 600 ms before. The sender is a model that does not slow down: the
 * controller sees overload every interval, the flow gets negative feedback.
 */
void
run(Hub &h, bool legacy, LegRun &r)
{
	std::string x = std::string("xcp: {capacity_bps: 100000") +
			(legacy ? ", legacy: true, legacy_max_flows: 64}\n" : "}\n");
	ASSERT_NO_FATAL_FAILURE(h.start(1, "bypass", x));
	auto inject_sat = [&](const Bytes &b) {
		struct rte_mbuf *m = rte_pktmbuf_alloc(h.dp->pool);
		ASSERT_NE(m, nullptr);
		memcpy(rte_pktmbuf_append(m, uint16_t(b.size())), b.data(), b.size());
		ASSERT_EQ(rte_ring_enqueue(h.sat.rx, m), 0);
		r.acks_in.push_back(b);
	};
	auto take_terr = [&]() {
		for (auto *m : h.terr.take()) {
			r.acks_out.push_back(sgwtest::bytes_of(m));
			rte_pktmbuf_free(m);
		}
	};
	h.run_until(0);
	h.inject(seg(false, S_ISN, 0, 0x02, 0));
	r.data_pkts++;
	/* ESP toward the same host: the TCP inside is not visible, load only. */
	Frame esp;
	esp.proto = 50;
	esp.dst = R_ADDR;
	esp.payload = 500;
	h.inject(sgwtest::build(esp));
	h.run_until(600 * MS);
	inject_sat(seg(true, R_ISN, S_ISN + 1, 0x12, 0));
	h.run_until(601 * MS);
	/* The handshake's third packet: a pure ACK, load only (no flow-sized term). */
	h.inject(seg(false, S_ISN + 1, R_ISN + 1, 0x10, 0));
	for (uint32_t k = 0; k < ROUNDS; k++) {
		h.run_until(600 * MS + k * 100 * MS);
		for (uint32_t i = 0; i < PER_ROUND; i++) {
			uint32_t sq = S_ISN + 1 + (k * PER_ROUND + i) * 1000;
			h.inject(seg(false, sq, R_ISN + 1, 0x10, 1000));
			r.data_pkts++;
		}
		/* A duplicate of the handshake's ACK: its right edge was advertised. */
		if (k == 6)
			inject_sat(seg(true, R_ISN + 1, S_ISN + 1, 0x10, 0));
		if (k >= 6)
			inject_sat(seg(true, R_ISN + 1,
				       S_ISN + 1 + (k - 5) * PER_ROUND * 1000, 0x10, 0));
		h.run_until(600 * MS + k * 100 * MS + 2 * MS);
		h.recv_sat();
		take_terr();
	}
	uint64_t badr[SGW_XCP_E__COUNT];
	sgw_xcp_sums sums;
	sgw_xs_counters(h.dp.get(), r.ctr, badr, &sums);
	sgw_xs_legacy_read(h.dp.get(), &r.ls);
	if (h.scope == "session")
		sgw_xs_sess_read(h.dp.get(), 0, &r.t, nullptr);   /* site a's session */
	else
		sgw_xs_read(h.dp.get(), &r.t);
	if (legacy) {
		uint8_t s[4] = {198, 51, 100, 10}, d[4] = {10, 20, 1, 5};
		const sgw_xcpa_flow *f = sgw_xcpl_find(sgw_xs_worker_of(h.dp->workers[0])->leg,
						       4, s, 40000, d, 80, h.now);
		ASSERT_NE(f, nullptr);
		r.share = f->cwnd_xcp;
	}
}

} // namespace legacy

/*
 * Legacy mode under overload, with the one controller of the carrier (the
 * test hub's default) or site a's session's own (scope session).
 */
void
legacy_clamps(const std::string &scope)
{
	using namespace legacy;
	Hub h;
	LegRun r;
	h.scope = scope;
	ASSERT_NO_FATAL_FAILURE(run(h, true, r));
	EXPECT_EQ(r.ctr[SGW_XS_NO_SESSION], 0u) << "every packet toward the link had its session";

	/* The controller (site a's session's) ran intervals under overload: negative feedback. */
	EXPECT_GE(r.t.epoch, 2u);
	EXPECT_LT(r.t.last.phi_bytes, 0.0);
	EXPECT_EQ(r.ls.flows_new, 1u);
	EXPECT_EQ(r.ls.active, 1u);
	EXPECT_EQ(r.ls.table_full, 0u);
	EXPECT_EQ(r.ctr[SGW_XS_LEG_DATA], r.data_pkts);
	EXPECT_EQ(r.ctr[SGW_XS_LEG_LOAD], 0u);
	EXPECT_EQ(r.ctr[SGW_XS_OTHER_LINK], 1u) << "the ESP packet: load only";
	EXPECT_EQ(r.ctr[SGW_XS_LEG_PURE_ACK], 1u);
	EXPECT_GT(r.ls.ctr[SGW_XCPL_C_RTT_SAMPLES], 0u);
	EXPECT_GT(r.ls.ctr[SGW_XCPL_C_FB_NEG_BYTES], 0u);
	/* The share went down from the initial 10 MSS. */
	EXPECT_LT(r.share, 10u * 1460u);
	EXPECT_GE(r.share, 1460u);

	/* Every ACK came back toward the sender, in order, checksums right. */
	ASSERT_EQ(r.acks_out.size(), r.acks_in.size());
	EXPECT_EQ(r.ctr[SGW_XS_LEG_ACKS], r.acks_in.size());
	uint64_t edge = 0, clamped = 0;
	for (size_t i = 0; i < r.acks_out.size(); i++) {
		const Bytes &in = r.acks_in[i], &out = r.acks_out[i];
		ASSERT_EQ(out.size(), in.size());
		EXPECT_TRUE(plain_csum_ok(out)) << i;
		/* Only the window and the TCP checksum may differ. */
		for (size_t o = 14; o < out.size(); o++) {
			if (o < TCP_OFF + 14 || o > TCP_OFF + 17) {
				EXPECT_EQ(out[o], in[o]) << "ack " << i << " byte " << o;
			}
		}
		uint32_t ack = get32(out, TCP_OFF + 8);
		uint16_t w = wnd_of(out);
		EXPECT_LE(w, wnd_of(in));
		if (w < wnd_of(in))
			clamped++;
		/* Never a right edge moved to the left (no wrap in this run). */
		EXPECT_GE(uint64_t(ack) + w, edge) << "ack " << i;
		if (i + 1 == r.acks_out.size()) {
			/* The last: the share, or the edge already advertised if that is more. */
			uint64_t want = std::max<uint64_t>(r.share, edge > ack ? edge - ack : 0);
			EXPECT_EQ(w, std::min<uint64_t>(want, 65535)) << r.share;
			EXPECT_LT(w, 65535);
		}
		edge = std::max<uint64_t>(edge, uint64_t(ack) + w);
	}
	EXPECT_EQ(r.ctr[SGW_XS_LEG_CLAMPED], clamped);
	EXPECT_GT(clamped, 0u);
	/*
	 * The duplicate ACK (the second) after the share fell: held at the edge
	 * the SYN-ACK advertised (its window, the initial share), not the share.
	 */
	ASSERT_GE(r.acks_out.size(), 2u);
	EXPECT_EQ(wnd_of(r.acks_out[1]), wnd_of(r.acks_out[0]));
	EXPECT_GT(wnd_of(r.acks_out[1]), r.share);
	EXPECT_GE(r.ls.ctr[SGW_XCPL_C_EDGE_HELD], 1u);
	/* The summary line says the same. */
	char *mem = nullptr;
	size_t len = 0;
	FILE *m = open_memstream(&mem, &len);
	ASSERT_NE(m, nullptr);
	sgw_stages_print_summary(h.dp.get(), m);
	fclose(m);
	std::string sum(mem, len);
	free(mem);
	EXPECT_NE(sum.find("xcp legacy: 1 flows (1 new, 0 table full), " +
			   std::to_string(r.data_pkts) + " TCP to the link with feedback (0 "
			   "load only, 1 pure ACKs), " + std::to_string(clamped) + " of " +
			   std::to_string(r.acks_in.size()) + " returning TCP clamped"),
		  std::string::npos) << sum;
	/* Shown for the record: the windows the sender was given. */
	std::string ws;
	for (const Bytes &o : r.acks_out)
		ws += std::to_string(wnd_of(o)) + " ";
	printf("legacy: share %u, epochs %llu, phi %.0f, %llu of %zu ACKs clamped: %s\n",
	       r.share, (unsigned long long)r.t.epoch, r.t.last.phi_bytes,
	       (unsigned long long)clamped, r.acks_out.size(), ws.c_str());
	EXPECT_EQ(r.ls.ctr[SGW_XCPL_C_CLAMPED], clamped);
	/* The Hub's destructor checks the accounting identity. */
}

TEST(XcpStage, LegacyClampsAcksToTheShareUnderOverload)
{
	legacy_clamps("carrier");
}

TEST(XcpStage, LegacyClampsAcksToTheSessionsShareUnderOverload)
{
	legacy_clamps("session");
}

TEST(XcpStage, LegacyOffLeavesAcksByteExact)
{
	using namespace legacy;
	Hub h;
	LegRun r;
	ASSERT_NO_FATAL_FAILURE(run(h, false, r));
	ASSERT_EQ(r.acks_out.size(), r.acks_in.size());
	for (size_t i = 0; i < r.acks_out.size(); i++)
		EXPECT_EQ(r.acks_out[i], r.acks_in[i]) << "ack " << i;
	EXPECT_EQ(r.ctr[SGW_XS_LEG_ACKS], 0u);
	EXPECT_EQ(r.ctr[SGW_XS_LEG_DATA], 0u);
	EXPECT_EQ(r.ctr[SGW_XS_OTHER_LINK], r.data_pkts + 2);
	EXPECT_EQ(r.ctr[SGW_XS_LEG_PURE_ACK], 0u);
	EXPECT_EQ(r.ls.flows_new, 0u);
}

namespace legacy {

/* One flow per site of the two-worker run: its receiver, and what came back. */
struct SiteRun {
	std::vector<Bytes> acks_out;   /* toward the sender, in order */
	uint32_t share = 0;            /* the flow's share at the end */
	uint32_t worker = 0;           /* the worker whose table holds the flow */
};

/*
 * Two legacy senders, one toward each site, 1.6 Mbit/s each into an 8 Mbit/s
 * link (the shape of run() above, for two flows at once). With two workers
 * the sites' terminals are on different workers, so each flow's data and the
 * ACKs coming back from the satellite are on its terminal's worker, while the
 * controller aggregates the link across both. The ACKs come 637 ms after the
 * data (not 600): with an RTT of exactly six 100 ms rounds every control
 * interval would end in a step that also carries a batch, and this harness
 * steps worker 0 (which aggregates, after its burst) before worker 1, so
 * worker 1's batch would always fall into the next interval: a bias of the
 * sequential harness, not of concurrent workers (docs/xcp.md).
 */
void
run_two_sites(uint32_t workers, SiteRun site[2], uint64_t ack_no_flow[2])
{
	Hub h;
	ASSERT_NO_FATAL_FAILURE(h.start(workers, "bypass",
					"xcp: {capacity_bps: 8000000, legacy: true, "
					"legacy_max_flows: 64}\n"));
	const char *raddr[2] = {R_ADDR, "10.20.2.5"};
	auto mk = [&](int k, bool from_r, uint32_t seq, uint32_t ack, uint8_t flags,
		      size_t payload) { return seg(from_r, seq, ack, flags, payload, raddr[k]); };
	auto inject_sat = [&](const Bytes &b) {
		struct rte_mbuf *m = rte_pktmbuf_alloc(h.dp->pool);
		ASSERT_NE(m, nullptr);
		memcpy(rte_pktmbuf_append(m, uint16_t(b.size())), b.data(), b.size());
		ASSERT_EQ(rte_ring_enqueue(h.sat.rx, m), 0);
	};
	auto take_terr = [&]() {
		for (auto *m : h.terr.take()) {
			Bytes b = sgwtest::bytes_of(m);
			/* Toward the sender: which site's receiver sent it (its source). */
			site[b[14 + 12 + 2] == 2 ? 1 : 0].acks_out.push_back(b);
			rte_pktmbuf_free(m);
		}
	};
	h.run_until(0);
	for (int k = 0; k < 2; k++)
		h.inject(mk(k, false, S_ISN, 0, 0x02, 0));
	h.run_until(637 * MS);
	for (int k = 0; k < 2; k++)
		inject_sat(mk(k, true, R_ISN, S_ISN + 1, 0x12, 0));
	h.run_until(638 * MS);
	for (uint32_t r = 0; r < ROUNDS; r++) {
		h.run_until(650 * MS + r * 100 * MS);
		for (uint32_t i = 0; i < PER_ROUND; i++)
			for (int k = 0; k < 2; k++)
				h.inject(mk(k, false, S_ISN + 1 + (r * PER_ROUND + i) * 1000,
					    R_ISN + 1, 0x10, 1000));
		h.run_until(650 * MS + r * 100 * MS + 37 * MS);  /* RTT 637 ms */
		if (r >= 6)
			for (int k = 0; k < 2; k++)
				inject_sat(mk(k, true, R_ISN + 1,
					      S_ISN + 1 + (r - 5) * PER_ROUND * 1000, 0x10, 0));
		h.run_until(650 * MS + r * 100 * MS + 39 * MS);
		h.recv_sat();
		take_terr();
	}
	uint8_t sa[4] = {198, 51, 100, 10};
	for (int k = 0; k < 2; k++) {
		uint8_t d[4] = {10, 20, uint8_t(k + 1), 5};
		int found = 0;
		for (uint32_t w = 0; w < workers; w++) {
			const sgw_xcpa_flow *f =
				sgw_xcpl_find(sgw_xs_worker_of(h.dp->workers[w])->leg, 4, sa,
					      40000, d, 80, h.now);
			if (f != nullptr) {
				site[k].share = f->cwnd_xcp;
				site[k].worker = w;
				found++;
			}
		}
		EXPECT_EQ(found, 1) << "site " << k << ": one worker's table holds the flow";
	}
	for (uint32_t w = 0; w < 2; w++)
		ack_no_flow[w] = w < workers ?
			sgw_xs_worker_of(h.dp->workers[w])->leg->ctr[SGW_XCPL_C_ACK_NO_FLOW] : 0;
	/* The Hub's destructor checks the accounting identity. */
}

} // namespace legacy

/*
 * Legacy mode on two workers: each flow lives on its terminal's worker (its
 * ACKs from the satellite find it there, none is lost to the other worker's
 * table), the controller sums the link over both, and the two equal senders
 * get equal windows that add up to what one worker gives them (measured:
 * the same 173,808 bytes for both flows on one worker and on two). Checked
 * within 1%: which packets fall into the interval a boundary step ends
 * depends on the order the workers run, not on the controller.
 */
TEST(XcpStage, LegacyTwoWorkersShareTheLink)
{
	using namespace legacy;
	SiteRun one[2], two[2];
	uint64_t nf1[2], nf2[2];
	ASSERT_NO_FATAL_FAILURE(run_two_sites(1, one, nf1));
	ASSERT_NO_FATAL_FAILURE(run_two_sites(2, two, nf2));
	uint32_t a, b;
	two_shards(a, b);
	EXPECT_EQ(two[0].worker, sgw_terminal_shard(a, 2));
	EXPECT_EQ(two[1].worker, sgw_terminal_shard(b, 2));
	EXPECT_NE(two[0].worker, two[1].worker);
	for (uint32_t w = 0; w < 2; w++) {
		EXPECT_EQ(nf1[w], 0u);
		EXPECT_EQ(nf2[w], 0u) << "worker " << w << ": an ACK found no flow";
	}
	uint64_t sum1 = 0, sum2 = 0;
	for (int k = 0; k < 2; k++) {
		/* 3.2 Mbit/s into 8: positive feedback, the shares grew past 10 MSS. */
		EXPECT_GT(two[k].share, 10u * 1460u) << k;
		EXPECT_GT(one[k].share, 10u * 1460u) << k;
		sum1 += one[k].share;
		sum2 += two[k].share;
		/* 1 SYN-ACK + 18 ACKs per site, every one back toward its sender. */
		ASSERT_EQ(one[k].acks_out.size(), 1u + ROUNDS - 6) << k;
		ASSERT_EQ(two[k].acks_out.size(), one[k].acks_out.size()) << k;
		size_t clamped = 0;
		for (size_t i = 0; i < two[k].acks_out.size(); i++) {
			EXPECT_TRUE(plain_csum_ok(two[k].acks_out[i])) << k << " " << i;
			clamped += wnd_of(two[k].acks_out[i]) < 65535;
		}
		EXPECT_GT(clamped, 0u) << k;
	}
	/* Equal senders, equal shares (1%), on one worker and on two. */
	EXPECT_NEAR(double(one[0].share), double(one[1].share), 0.01 * double(one[0].share));
	EXPECT_NEAR(double(two[0].share), double(two[1].share), 0.01 * double(two[0].share));
	/* Two workers give together what one worker gives (1%). */
	EXPECT_NEAR(double(sum2), double(sum1), 0.01 * double(sum1));
	printf("legacy: shares on one worker %u %u, on two %u %u\n", one[0].share, one[1].share,
	       two[0].share, two[1].share);
}

TEST(XcpStage, LegacyReloadNeedsRestart)
{
	Hub h;
	ASSERT_NO_FATAL_FAILURE(h.start(1, "bypass", "xcp: {capacity_bps: 100000, legacy: true, "
					"legacy_max_flows: 64}\n"));
	h.run_until(0);
	uint32_t a, b;
	two_shards(a, b);
	auto publish = [&](const std::string &xcp, std::string &err) {
		std::string y = h.yaml(a, b, "bypass", xcp);
		struct sgw_policy pol;
		struct sgw_cfg_errors errs;
		char e[256] = "";
		EXPECT_EQ(sgw_policy_load_buffer("xs.yaml", y.data(), y.size(), &pol, &errs), 0);
		int rc = sgw_dp_publish(h.dp.get(), &pol, e, sizeof(e));
		sgw_policy_free(&pol);
		err = e;
		return rc;
	};
	std::string err;
	EXPECT_NE(publish("xcp: {capacity_bps: 100000}\n", err), 0);
	EXPECT_NE(err.find("xcp: 'legacy' and 'legacy_max_flows' need a restart"),
		  std::string::npos) << err;
	EXPECT_NE(publish("xcp: {capacity_bps: 100000, legacy: true, legacy_max_flows: 128}\n",
			  err), 0);
	EXPECT_NE(err.find("legacy_max_flows"), std::string::npos) << err;
	EXPECT_EQ(publish("xcp: {capacity_bps: 200000, legacy: true, legacy_max_flows: 64}\n",
			  err), 0) << err;
	EXPECT_NE(sgw_xs_worker_of(h.dp->workers[0])->leg, nullptr);
}
