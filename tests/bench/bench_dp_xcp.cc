// SPDX-License-Identifier: BSD-3-Clause
// Google Benchmarks for the XCP gateway stage (dataplane/xcp.c) through the
// whole pipeline of a hub: per packet, what the stage adds to forwarding, in
// the same run. Four hubs, each one worker on net_ring ports, the same
// policy (terminal site-a, a rule forwarding 10.20.1.0/24 to the satellite
// port, satlink on that port with default_service bypass so that packets
// leave as they are and no ARQ cost is in the figures), with and without the
// xcp section, fed two kinds of input:
//   BM_Forward_Tcp      no xcp section, IPv4/TCP packets (flow stage, satlink
//                       bypass)
//   BM_Xcp_Tcp          xcp on, the same TCP packets: counted as load
//                       (sgw_xcp_on_other) on their way to the link
//   BM_Forward_XcpPkts  no xcp section, the same packets with an XCP header
//                       (class xcp: the stateless stage's rule lookup)
//   BM_Xcp_XcpPkts      xcp on, XCP packets: parse, accumulate, feedback,
//                       H_feedback lowered; worker 0's aggregation every
//                       control interval (600 ms of virtual time) included
//   BM_Legacy_Tcp       xcp legacy mode, the same TCP packets: each is a
//                       legacy flow's data (table lookup, RTT sample, the
//                       flow's share from the controller's feedback)
//   BM_Forward_Acks     no xcp section, pure ACKs (ip_len 52) of the 64 flows
//                       arriving from the satellite port toward the senders
//   BM_Legacy_Acks      legacy mode, the same ACKs: each one's window clamped
//                       to its flow's share (the flows were opened by a SYN
//                       and a SYN-ACK before timing, so the window scale is
//                       known) and its TCP checksum updated
// 64 flows to 10.20.1.5, ip_len 1040 or 92 bytes (benchmark argument; with
// the XCP header the IP packet is 20 bytes longer). vs_forward: ns/packet
// over the matching forward run's (TCP over TCP, XCP packets over XCP
// packets, ACKs over ACKs) of the same ip_len, measured here with the thread
// CPU clock.
//
// As in bench_dp_satlink.cc: one iteration is one burst of 32 packets put on
// the terrestrial port's RX ring, then one sgw_worker_iter + flush; virtual
// time advances 20 us per burst; every 50 iterations (untimed) what the hub
// sent is freed and 1600 new packets are built from templates.
// --sgw_iterations=N runs every benchmark exactly N iterations, for
// callgrind (collect step() only, divide by N x 32):
//   valgrind --tool=callgrind --collect-atstart=no '--toggle-collect=*step(*'
//     bench_dp_xcp --sgw_iterations=2000 --benchmark_filter='Xcp_XcpPkts/ip_len:1040'

#include <benchmark/benchmark.h>

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include "../pipeline/pkt_build.h"
#include "policy_yaml.h"
#include "sgw_dp.h"
#include "xcp.h"

namespace {

using Bytes = std::vector<uint8_t>;

constexpr uint32_t kBurst = 32;
constexpr uint32_t kBatch = 50;
constexpr uint32_t kStage = kBurst * kBatch;
constexpr uint64_t kStepNs = 20000;
constexpr uint32_t kFlows = 64;
constexpr uint32_t kRingSize = 16384;
constexpr double kMinTime = 0.2;

int g_rings;

struct RingPort {
	std::string name;
	rte_ring *rx = nullptr, *tx = nullptr;

	bool make(const std::string &base)
	{
		rx = rte_ring_create((base + "_rx").c_str(), kRingSize, 0,
				     RING_F_SP_ENQ | RING_F_SC_DEQ);
		tx = rte_ring_create((base + "_tx").c_str(), kRingSize, 0,
				     RING_F_SP_ENQ | RING_F_SC_DEQ);
		if (rx == nullptr || tx == nullptr)
			return false;
		int id = rte_eth_from_rings(base.c_str(), &rx, 1, &tx, 1, 0);
		char dev[RTE_ETH_NAME_MAX_LEN];

		if (id < 0 || rte_eth_dev_get_name_by_port(uint16_t(id), dev) != 0)
			return false;
		name = dev;
		return true;
	}
	static void free_ring(rte_ring *r)
	{
		void *o = nullptr;

		while (r != nullptr && rte_ring_dequeue(r, &o) == 0)
			rte_pktmbuf_free(static_cast<rte_mbuf *>(o));
	}
	void destroy()
	{
		free_ring(rx);
		free_ring(tx);
		rte_ring_free(rx);
		rte_ring_free(tx);
		rx = tx = nullptr;
	}
};

// One hub: its ports, its dataplane, its input and virtual time.
// What a rig is fed: TCP data toward the site, the same with an XCP header, or
// the site's pure ACKs coming back from the satellite port.
enum Kind { kTcp, kXcpPkts, kAcks };

struct Rig {
	const char *what = "";
	bool xcp = false, legacy = false;
	bool carrier = false;   // xcp.scope carrier (one controller for the port), else session
	Kind kind = kTcp;
	RingPort terr, sat;
	sgw_dp *dp = nullptr;
	bool up = false;
	uint64_t now = 0;
	std::vector<rte_mbuf *> stage;
	size_t pos = 0;

	void iter()
	{
		sgw_worker *w = dp->workers[0];

		sgw_worker_iter(w, w->ns_base_tsc + uint64_t(double(now) / w->ns_per_tsc) + 1);
		sgw_worker_flush(w);
	}
	// The NIC's TX completion, on both ports.
	void drain_tx()
	{
		RingPort::free_ring(sat.tx);
		RingPort::free_ring(terr.tx);
	}
	uint64_t drops() const
	{
		uint64_t d = 0;

		for (uint64_t x : dp->workers[0]->c.drop)
			d += x;
		return d;
	}
};

Rig g_fwd_tcp, g_xcp_tcp, g_fwd_x, g_xcp_x, g_xcp_x_car, g_leg_tcp, g_fwd_acks, g_leg_acks;

std::string
hub_yaml(const Rig &r)
{
	return "version: 1\nrole: hub\nports:\n"
	       "  - {name: terr, device: " + r.terr.name + ", role: terrestrial, peer: sat}\n"
	       "  - {name: sat, device: " + r.sat.name + ", role: satellite, peer: terr}\n"
	       "next_hops:\n  - {name: to-term, port: sat, mac: \"02:00:00:00:04:01\"}\n"
	       "terminals:\n  - {name: site-a, id: 1001, prefixes: [10.20.1.0/24]}\n"
	       "rules:\n  - {name: to-site, match: {dst: [10.20.1.0/24]}, action: forward, "
	       "next_hop: to-term}\n"
	       "workers: {idle_backoff_us: 0}\n"
	       "satlink: {port: sat, forward_rate_bps: 400000000000, return_rate_bps: "
	       "400000000000, peer_mac: \"02:00:00:00:04:01\", default_service: bypass}\n" +
	       std::string(!r.xcp ? "" : r.legacy ? "xcp: {legacy: true}\n" :
			   r.carrier ? "xcp: {scope: carrier}\n" : "xcp: {}\n");
}

// An XCP v2 header inserted after the IPv4 header (protocol 254), as the sender's agent does.
Bytes
with_xcp(const Bytes &v, uint32_t cwnd)
{
	const size_t l3 = 14;
	size_t iplen = size_t(v[l3 + 2] << 8 | v[l3 + 3]);
	Bytes h = {v[l3 + 9], 0x20, 5, 0};

	sgwtest::put32(h, 600000);
	sgwtest::put32(h, cwnd);
	sgwtest::put32(h, 1000000);
	sgwtest::put32(h, 0);
	Bytes o(v.begin(), v.begin() + long(l3 + 20));
	o.insert(o.end(), h.begin(), h.end());
	o.insert(o.end(), v.begin() + long(l3 + 20), v.begin() + long(l3 + iplen));
	size_t n = iplen + h.size();
	o[l3 + 2] = uint8_t(n >> 8);
	o[l3 + 3] = uint8_t(n);
	o[l3 + 9] = 254;
	o[l3 + 10] = 0;
	o[l3 + 11] = 0;
	uint16_t c = sgwtest::csum(&o[l3], 20);
	o[l3 + 10] = uint8_t(c >> 8);
	o[l3 + 11] = uint8_t(c);
	return o;
}

// Flow i's segment: from the sender (198.51.100.10:7000+i) to the site, or back.
Bytes
segment(uint32_t i, bool back, uint8_t flags, uint32_t payload)
{
	sgwtest::Frame f;

	f.proto = 6;
	f.tcp_flags = flags;
	f.src = back ? "10.20.1.5" : "198.51.100.10";
	f.dst = back ? "198.51.100.10" : "10.20.1.5";
	f.sport = back ? 443 : uint16_t(7000 + i);
	f.dport = back ? uint16_t(7000 + i) : 443;
	f.seq = back ? 5000 + i : 1000 + i;
	f.ack = back ? 1001 + i : 0;
	f.payload = payload;
	return sgwtest::build(f);
}

// 64 flows of ip_len-byte IPv4/TCP packets to the site, with or without the XCP
// header; or the site's pure ACKs (window 65535) of those flows.
const std::vector<Bytes> &
templates(uint32_t ip_len, Kind k)
{
	static std::map<std::pair<uint32_t, Kind>, std::vector<Bytes>> cache;
	std::vector<Bytes> &v = cache[{ip_len, k}];

	if (v.empty())
		for (uint32_t i = 0; i < kFlows; i++) {
			if (k == kAcks) {
				v.push_back(segment(i, true, 0x10, 0));
				continue;
			}
			// 20 IP + 32 TCP with the timestamp option
			Bytes b = segment(i, false, 0x10, ip_len - 52);
			v.push_back(k == kXcpPkts ? with_xcp(b, 64000 + 1000 * i) : b);
		}
	return v;
}

bool
alloc_packets(Rig &r, uint32_t ip_len, uint32_t n)
{
	const std::vector<Bytes> &t = templates(ip_len, r.kind);
	std::vector<rte_mbuf *> m(n);

	if (rte_pktmbuf_alloc_bulk(r.dp->pool, m.data(), n) != 0)
		return false;
	for (uint32_t i = 0; i < n; i++) {
		const Bytes &b = t[(r.stage.size() + i) % kFlows];

		std::memcpy(rte_pktmbuf_append(m[i], uint16_t(b.size())), b.data(), b.size());
	}
	r.stage.insert(r.stage.end(), m.begin(), m.end());
	return true;
}

void
free_stage(Rig &r)
{
	for (size_t i = r.pos; i < r.stage.size(); i++)
		rte_pktmbuf_free(r.stage[i]);
	r.stage.clear();
	r.pos = 0;
}

// Timed: one burst onto the RX ring, one loop of the hub. Returns packets enqueued.
// Not inlined: callgrind collects this function (--toggle-collect='*step(*').
__attribute__((noinline)) uint32_t
step(Rig &r)
{
	uint32_t n = uint32_t(std::min<size_t>(kBurst, r.stage.size() - r.pos));

	n = rte_ring_enqueue_burst(r.kind == kAcks ? r.sat.rx : r.terr.rx,
				   reinterpret_cast<void **>(&r.stage[r.pos]), n, nullptr);
	r.pos += n;
	r.now += kStepNs;
	r.iter();
	return n;
}

inline uint64_t
cpu_ns()
{
	timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

// The forward runs' ns/packet by (ip_len, input): the median of the longest runs.
std::map<std::pair<uint32_t, Kind>, std::vector<std::pair<int64_t, double>>> g_fwd_runs;

double
forward_ns(uint32_t ip_len, Kind k)
{
	auto it = g_fwd_runs.find({ip_len, k});
	std::vector<double> v;
	int64_t most = 0;

	if (it == g_fwd_runs.end())
		return 0;
	for (auto &b : it->second)
		most = std::max(most, b.first);
	for (auto &b : it->second)
		if (b.first * 2 >= most)
			v.push_back(b.second);
	std::sort(v.begin(), v.end());
	return v.empty() ? 0 : v[v.size() / 2];
}

// The stage's count of the packets it handled the way the rig's input needs:
// lowered or load (XCP, TCP), a legacy flow's data or load (legacy TCP), a
// clamped window (legacy ACKs: every one is above its flow's share).
uint64_t
handled(const Rig &r)
{
	uint64_t ctr[SGW_XS__COUNT], bad[SGW_XCP_E__COUNT];
	sgw_xcp_sums sums;

	sgw_xs_counters(r.dp, ctr, bad, &sums);
	if (r.kind == kAcks)
		return ctr[SGW_XS_LEG_CLAMPED];
	if (r.legacy)
		return ctr[SGW_XS_LEG_DATA] + ctr[SGW_XS_LEG_LOAD];
	return ctr[SGW_XS_LOWERED] + ctr[SGW_XS_OTHER_LINK];
}

void
run(benchmark::State &state, Rig &r)
{
	uint32_t ip_len = uint32_t(state.range(0));
	uint64_t items = 0, t0, paused = 0, p0, drops0, handled0 = 0;

	if (r.dp == nullptr) {
		state.SkipWithError("rig not started");
		return;
	}
	free_stage(r);
	r.drain_tx();
	drops0 = r.drops();
	if (r.xcp)
		handled0 = handled(r);
	if (!alloc_packets(r, ip_len, kStage)) {
		state.SkipWithError("no mbufs for the input");
		return;
	}
	t0 = cpu_ns();
	for (auto _ : state) {
		if (r.pos == r.stage.size()) {
			state.PauseTiming();
			p0 = cpu_ns();
			r.stage.clear();
			r.pos = 0;
			r.drain_tx();
			if (!alloc_packets(r, ip_len, kStage)) {
				state.SkipWithError("no mbufs for the input");
				break;
			}
			paused += cpu_ns() - p0;
			state.ResumeTiming();
		}
		items += step(r);
	}
	double ns = items ? double(cpu_ns() - t0 - paused) / double(items) : 0;

	free_stage(r);
	r.iter();
	r.drain_tx();
	if (r.drops() != drops0)
		state.SkipWithError("the hub dropped packets");
	if (r.xcp) {
		// Every packet went through the stage: lowered (XCP, first interval: to 0,
		// then to its share), a legacy flow's data, clamped, or counted as load.
		if (handled(r) - handled0 < items)
			state.SkipWithError("the XCP stage did not handle every packet");
		sgw_xs_tpub t;
		sgw_xs_read(r.dp, &t);
		state.counters["intervals"] = double(t.epoch);
	}
	state.SetItemsProcessed(int64_t(items));
	if (!r.xcp) {
		g_fwd_runs[{ip_len, r.kind}].push_back({int64_t(state.iterations()), ns});
	} else {
		double f = forward_ns(ip_len, r.kind);

		if (f > 0)
			state.counters["vs_forward"] = ns / f;
	}
}

void BM_Forward_Tcp(benchmark::State &s) { run(s, g_fwd_tcp); }
void BM_Xcp_Tcp(benchmark::State &s) { run(s, g_xcp_tcp); }
void BM_Forward_XcpPkts(benchmark::State &s) { run(s, g_fwd_x); }
void BM_Xcp_XcpPkts(benchmark::State &s) { run(s, g_xcp_x); }
void BM_XcpCarrier_XcpPkts(benchmark::State &s) { run(s, g_xcp_x_car); }
void BM_Legacy_Tcp(benchmark::State &s) { run(s, g_leg_tcp); }
void BM_Forward_Acks(benchmark::State &s) { run(s, g_fwd_acks); }
void BM_Legacy_Acks(benchmark::State &s) { run(s, g_leg_acks); }

// Opens the 64 flows on the hub before timing: each sender's SYN toward the
// site, then the site's SYN-ACK from the satellite port (legacy mode learns
// both SYNs' window scale: none here, so the clamp's shift is 0).
bool
open_flows(Rig &r)
{
	for (int back = 0; back < 2; back++) {
		std::vector<rte_mbuf *> m(kFlows);

		if (rte_pktmbuf_alloc_bulk(r.dp->pool, m.data(), kFlows) != 0)
			return false;
		for (uint32_t i = 0; i < kFlows; i++) {
			Bytes b = segment(i, back != 0, back ? 0x12 : 0x02, 0);

			std::memcpy(rte_pktmbuf_append(m[i], uint16_t(b.size())), b.data(),
				    b.size());
		}
		if (rte_ring_enqueue_bulk(back ? r.sat.rx : r.terr.rx,
					  reinterpret_cast<void **>(m.data()), kFlows,
					  nullptr) != kFlows) {
			for (rte_mbuf *x : m)
				rte_pktmbuf_free(x);
			return false;
		}
		for (int i = 0; i < 4; i++) {
			r.now += kStepNs;
			r.iter();
		}
		r.drain_tx();
	}
	return r.drops() == 0;
}

bool
start_rig(Rig &r, const char *what, bool xcp, bool legacy, Kind kind)
{
	std::string base = "bxs" + std::to_string(++g_rings);
	sgw_policy pol;
	sgw_cfg_errors errs;
	char err[256] = "";
	unsigned int lcores[1] = {0};

	r.what = what;
	r.xcp = xcp;
	r.legacy = legacy;
	r.kind = kind;
	if (!r.terr.make(base + "t") || !r.sat.make(base + "s"))
		return false;
	std::string y = hub_yaml(r);
	if (sgw_policy_load_buffer("bench.yaml", y.data(), y.size(), &pol, &errs) != 0) {
		std::fprintf(stderr, "bench_dp_xcp: policy: %s\n", errs.n ? errs.e[0].msg : "?");
		return false;
	}
	r.dp = static_cast<sgw_dp *>(std::calloc(1, sizeof(*r.dp)));
	int rc = sgw_dp_init(r.dp, &pol, 1, lcores, false, ("x" + base).c_str());
	r.up = true;
	if (rc != 0 || sgw_dp_publish(r.dp, &pol, err, sizeof(err)) != 0) {
		std::fprintf(stderr, "bench_dp_xcp: dataplane %s: %s\n", what, err);
		sgw_policy_free(&pol);
		return false;
	}
	sgw_policy_free(&pol);
	if (r.dp->stage_on[SGW_STAGE_XCP] != xcp)
		return false;
	r.iter();
	r.drain_tx();
	return kind != kAcks || open_flows(r);
}

void
stop_rig(Rig &r)
{
	free_stage(r);
	if (r.up) {
		sgw_dp_drain(r.dp);
		r.terr.destroy();
		r.sat.destroy();
		unsigned int in_use = r.dp->pool ? rte_mempool_in_use_count(r.dp->pool) : 0;
		if (in_use != 0)
			std::fprintf(stderr, "bench_dp_xcp: WARNING: %s: %u mbufs not returned\n",
				     r.what, in_use);
		sgw_dp_fini(r.dp);
		r.up = false;
	}
	std::free(r.dp);
	r.dp = nullptr;
}

// The forward runs first (the ratios need them).
void
register_all(int64_t iters)
{
	struct {
		const char *name;
		void (*fn)(benchmark::State &);
	} const b[] = {
		{"BM_Forward_Tcp", BM_Forward_Tcp},
		{"BM_Forward_XcpPkts", BM_Forward_XcpPkts},
		{"BM_Xcp_Tcp", BM_Xcp_Tcp},
		{"BM_Xcp_XcpPkts", BM_Xcp_XcpPkts},
		{"BM_XcpCarrier_XcpPkts", BM_XcpCarrier_XcpPkts},
		{"BM_Legacy_Tcp", BM_Legacy_Tcp},
		{"BM_Forward_Acks", BM_Forward_Acks},
		{"BM_Legacy_Acks", BM_Legacy_Acks},
	};
	for (const auto &x : b) {
		benchmark::internal::Benchmark *r = benchmark::RegisterBenchmark(x.name, x.fn);

		if (std::strstr(x.name, "Acks") != nullptr)
			r->ArgName("ip_len")->Arg(52);
		else
			r->ArgName("ip_len")->Arg(1040)->Arg(92);
		if (iters > 0)
			r->Iterations(iters);
		else
			r->MinTime(kMinTime);
	}
}

} // namespace

int
main(int argc, char **argv)
{
	std::string prefix = "xs_bench_" + std::to_string(getpid());
	const char *eal[] = {"bench", "--no-huge", "-m", "2048", "--no-pci", "--file-prefix",
			     prefix.c_str(), "-l", "0", "--log-level", "warning"};
	int eal_argc = static_cast<int>(sizeof(eal) / sizeof(eal[0]));
	int rc = 0;
	int64_t iters = 0;

	for (int i = 1; i < argc; i++)
		if (std::strncmp(argv[i], "--sgw_iterations=", 17) == 0) {
			iters = std::atoll(argv[i] + 17);
			for (int j = i; j < argc; j++)
				argv[j] = argv[j + 1];
			argc--;
			i--;
		}
	register_all(iters);
	benchmark::Initialize(&argc, argv);
	if (benchmark::ReportUnrecognizedArguments(argc, argv))
		return 1;
	if (rte_eal_init(eal_argc, const_cast<char **>(eal)) < 0) {
		std::fprintf(stderr, "bench_dp_xcp: EAL initialisation failed: %s\n",
			     rte_strerror(rte_errno));
		return 1;
	}
	g_xcp_x_car.carrier = true;
	if (!start_rig(g_fwd_tcp, "forward-tcp", false, false, kTcp) ||
	    !start_rig(g_xcp_tcp, "xcp-tcp", true, false, kTcp) ||
	    !start_rig(g_fwd_x, "forward-xcp-pkts", false, false, kXcpPkts) ||
	    !start_rig(g_xcp_x, "xcp-xcp-pkts", true, false, kXcpPkts) ||
	    !start_rig(g_xcp_x_car, "xcp-carrier-xcp-pkts", true, false, kXcpPkts) ||
	    !start_rig(g_leg_tcp, "legacy-tcp", true, true, kTcp) ||
	    !start_rig(g_fwd_acks, "forward-acks", false, false, kAcks) ||
	    !start_rig(g_leg_acks, "legacy-acks", true, true, kAcks))
		rc = 1;
	else
		benchmark::RunSpecifiedBenchmarks();
	benchmark::Shutdown();
	stop_rig(g_fwd_tcp);
	stop_rig(g_xcp_x_car);
	stop_rig(g_xcp_tcp);
	stop_rig(g_fwd_x);
	stop_rig(g_xcp_x);
	stop_rig(g_leg_tcp);
	stop_rig(g_fwd_acks);
	stop_rig(g_leg_acks);
	rte_eal_cleanup();
	return rc;
}
