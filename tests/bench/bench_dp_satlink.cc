// SPDX-License-Identifier: BSD-3-Clause
// Google Benchmarks for the dataplane's satlink stage (dataplane/satlink.c)
// through the whole pipeline: per IP packet, what the satlink stage adds to a
// hub's forwarding (send: IP packet -> DATA frame, optionally AES-GCM sealed)
// and what a terminal spends turning DATA frames back into IP packets
// (receive: frame -> ARQ -> reassembly -> the pipeline again -> LAN port).
// items_per_second counts IP packets, so 1e9 / items_per_second is ns per
// packet. Two sizes (the benchmark argument ip_len): 1400-byte IPv4/UDP
// packets (one 1400-byte frame each) and 92-byte ones (64 bytes of UDP
// payload), both spread over 64 flows to 10.20.1.5 (terminal 1001).
//
// The rig is tests/pipeline/test_satlink_pair.cc's: dataplanes in this
// process on net_ring ports, one worker each, driven by sgw_worker_iter (then
// sgw_worker_flush) with a synthetic TSC, so time is virtual: it advances
// 20 us per 32-packet burst (1.6 Mpps, 18 Gbit/s of 1400-byte packets).
// Satlink sections: forward and return rates 400 Gbit/s (pacing never holds a
// frame: 32 frames take 1 us of link time), window_max 8192, and
// status_interval_ms 1 so that the terminal acknowledges each millisecond
// (with the default 20 ms an 8192-frame window caps the rate at ~400 kpps).
// GCM variants: a key file "1001 <32 hex>" (mode 0600, temp dir) named by
// `keys:` in both satlink sections.
//
// One benchmark iteration is one burst of 32 packets (or frames). What is
// timed, per iteration: rte_ring_enqueue_burst of 32 ready mbufs on the input
// port's RX ring (the "NIC"), then one sgw_worker_iter + sgw_worker_flush of
// the dataplane under test; its output stays on the TX ring. Every 50
// iterations (1 ms of virtual time) the loop pauses (PauseTiming, ~1 us per
// 1600 packets) for the untimed part:
//  - BM_Forward_Baseline: the hub policy without a satlink section (the
//    same ports, terminals and rules: routed forward terr -> sat). Untimed:
//    the packets it sent are freed (the NIC's TX completion) and 1600 new IP
//    packets are allocated and filled from templates (what the NIC's RX
//    does), exactly as for Send, so both start from the same input state.
//  - BM_Satlink_Send[_GCM]: the hub with satlink. Untimed: new input as for
//    the baseline; the DATA frames the hub sent are moved to the terminal
//    dataplane, which runs until it has taken them all (its delivered IP
//    packets are freed); the terminal's STATUS frames are moved to the hub's
//    sat RX ring, where the next timed iteration takes them. So the timed part
//    includes everything the hub does: classify, flow and rule lookup, the
//    ARQ send, building (and sealing) each frame in a new mbuf, pacing, TX,
//    and the acknowledgements: parsing (and opening) STATUS frames and
//    freeing the acknowledged IP packets. The session stays up with nothing
//    retransmitted; checked after each run.
//  - BM_Satlink_Receive[_GCM]: the terminal. Its input DATA frames are made
//    live by the hub dataplane in the untimed part (1600 IP packets through
//    the hub per pause, its sat TX ring becomes the terminal's next 50
//    bursts), so sequence numbers always advance and every frame is replayed
//    exactly once, however many iterations the benchmark runs (no stored
//    capture, no duplicates). The terminal's STATUS frames are moved to the
//    hub (untimed), which keeps the hub's window open; the terminal's cost is
//    the same as if they were discarded. Timed: parsing (and opening) each
//    frame, the ARQ receive, delivery (an Ethernet header back, the whole
//    pipeline again: classify, flow, rule, next hop) to the LAN TX ring, and
//    the terminal's own STATUS frames (one per ms). Delivered packets are
//    freed untimed (the NIC's TX completion).
// Between runs the pair is settled (untimed) until nothing is outstanding.
// vs_baseline: this run's ns/packet over the baseline's for the same ip_len
// (both measured here with the thread CPU clock, paused parts taken out);
// the medians' ratio is in the report.
//
// EAL: main() initialises it once, without hugepages or devices, before any
// benchmark; the five dataplanes (baseline hub, plain hub + terminal, GCM hub
// + terminal) are created once (each satlink end waits up to 1 s for its
// epoch) and torn down at exit, where every pool's mbufs must be back.
//
// --sgw_iterations=N (ours, taken out before Google Benchmark parses the rest)
// runs every benchmark exactly N iterations instead of 0.2 s, for callgrind:
//   valgrind --tool=callgrind --collect-atstart=no '--toggle-collect=*step(*'
//     bench_dp_satlink --sgw_iterations=2000 --benchmark_filter='Send/ip_len:1400'
// collects only the timed part (step()); divide by N x 32 for instructions
// per packet.

#include <benchmark/benchmark.h>

#include <sys/stat.h>
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
#include "satlink.h"
#include "sgw_dp.h"

namespace {

using Bytes = std::vector<uint8_t>;

constexpr uint32_t kBurst = 32;              // packets per iteration (satgw's RX burst)
constexpr uint32_t kBatch = 50;              // iterations between untimed pauses
constexpr uint32_t kStage = kBurst * kBatch; // packets (frames) per pause
constexpr uint64_t kStepNs = 20000;          // virtual time per burst
constexpr uint32_t kFlows = 64;
constexpr uint32_t kRingSize = 16384;
constexpr double kMinTime = 0.2;             // seconds per run: the binary stays < 60 s

const char *const HUB_SAT_MAC = "02:00:00:00:03:01";
const char *const TERM_SAT_MAC = "02:00:00:00:04:01";
const char *const KEY_HEX = "000102030405060708090a0b0c0d0e0f";

std::string g_keyfile;                       // "" until written
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
	void free_all()
	{
		free_ring(rx);
		free_ring(tx);
	}
	void destroy()
	{
		free_all();
		rte_ring_free(rx);
		rte_ring_free(tx);
		rx = tx = nullptr;
	}
};

// Everything on ring `from` onto ring `to` (a frame crossing the link, no delay).
void
move_ring(rte_ring *from, rte_ring *to)
{
	void *o[64];
	unsigned int n;

	while ((n = rte_ring_dequeue_burst(from, o, 64, nullptr)) > 0) {
		unsigned int k = rte_ring_enqueue_burst(to, o, n, nullptr);

		for (unsigned int i = k; i < n; i++)
			rte_pktmbuf_free(static_cast<rte_mbuf *>(o[i]));
	}
}

// Everything on `from` appended to v.
void
take_ring(rte_ring *from, std::vector<rte_mbuf *> &v)
{
	void *o = nullptr;

	while (rte_ring_dequeue(from, &o) == 0)
		v.push_back(static_cast<rte_mbuf *>(o));
}

struct Dp {
	sgw_dp *dp = nullptr;
	bool up = false;

	bool start(const std::string &yaml, const std::string &inst)
	{
		sgw_policy pol;
		sgw_cfg_errors errs;
		char err[256] = "";
		unsigned int lcores[1] = {0};

		dp = static_cast<sgw_dp *>(std::calloc(1, sizeof(*dp)));
		if (sgw_policy_load_buffer("bench.yaml", yaml.data(), yaml.size(), &pol, &errs) != 0) {
			std::fprintf(stderr, "bench_dp_satlink: policy: %s (line %d)\n%s\n",
				     errs.n ? errs.e[0].msg : "?", errs.n ? int(errs.e[0].line) : 0,
				     yaml.c_str());
			return false;
		}
		int rc = sgw_dp_init(dp, &pol, 1, lcores, false, inst.c_str());
		up = true;
		if (rc != 0 || sgw_dp_publish(dp, &pol, err, sizeof(err)) != 0) {
			std::fprintf(stderr, "bench_dp_satlink: dataplane %s: %s\n", inst.c_str(), err);
			sgw_policy_free(&pol);
			return false;
		}
		sgw_policy_free(&pol);
		return true;
	}
	sgw_worker *w() const { return dp->workers[0]; }
	void iter(uint64_t now_ns)
	{
		sgw_worker *wk = dp->workers[0];

		sgw_worker_iter(wk, wk->ns_base_tsc + uint64_t(double(now_ns) / wk->ns_per_tsc) + 1);
		sgw_worker_flush(wk);
	}
	sgw_sl_sess *sess() const { return &sgw_sl_of(dp)->sess[0]; }
	sgw_arq_stats arq() const
	{
		sgw_arq_stats st;

		sgw_arq_get_stats(sess()->arq, &st);
		return st;
	}
	uint64_t drops() const
	{
		uint64_t d = 0;

		for (uint64_t x : w()->c.drop)
			d += x;
		return d;
	}
	uint64_t sl_ctr(int c) const
	{
		return sgw_sl_of(dp) != nullptr ? sgw_sl_worker_of(w())->ctr[c] : 0;
	}
};

// A hub (with or without satlink) and, with satlink, its terminal.
struct Rig {
	const char *what = "";
	bool satlink = false, gcm = false;
	RingPort terr, hsat, tsat, lan;
	Dp hub, term;
	uint64_t now = 0;
	std::vector<rte_mbuf *> stage;   // ready input of the timed loop
	size_t pos = 0;
};

Rig g_base, g_plain, g_gcm;

std::string
satlink_section(const std::string &extra)
{
	std::string s = "satlink: {port: sat, forward_rate_bps: 400000000000, "
			"return_rate_bps: 400000000000, window_max: 8192, status_interval_ms: 1" +
			extra;
	if (!g_keyfile.empty())
		s += ", keys: " + g_keyfile;
	return s + "}\n";
}

std::string
hub_yaml(const Rig &r)
{
	std::string y = "version: 1\nrole: hub\nports:\n"
			"  - {name: terr, device: " + r.terr.name + ", role: terrestrial, peer: sat}\n"
			"  - {name: sat, device: " + r.hsat.name + ", role: satellite, peer: terr}\n"
			"next_hops:\n"
			"  - {name: to-term, port: sat, mac: \"" + std::string(TERM_SAT_MAC) + "\"}\n"
			"  - {name: to-fh, port: terr, mac: \"02:00:00:00:01:01\"}\n"
			"terminals:\n  - {name: site-a, id: 1001, prefixes: [10.20.1.0/24]}\n"
			"rules:\n"
			"  - {name: to-site, match: {dst: [10.20.1.0/24]}, action: forward, "
			"next_hop: to-term}\n"
			"  - {name: to-core, match: {dst: [198.51.100.0/24]}, action: forward, "
			"next_hop: to-fh}\n"
			"workers: {idle_backoff_us: 0}\n";
	if (r.satlink)
		y += satlink_section(", peer_mac: \"" + std::string(TERM_SAT_MAC) + "\"");
	return y;
}

std::string
term_yaml(const Rig &r)
{
	return "version: 1\nrole: terminal\nports:\n"
	       "  - {name: sat, device: " + r.tsat.name + ", role: satellite, peer: lan}\n"
	       "  - {name: lan, device: " + r.lan.name + ", role: lan, peer: sat}\n"
	       "next_hops:\n"
	       "  - {name: to-hub, port: sat, mac: \"" + std::string(HUB_SAT_MAC) + "\"}\n"
	       "  - {name: to-mh, port: lan, mac: \"02:00:00:00:02:01\"}\n"
	       "terminals:\n  - {name: site-a, id: 1001, prefixes: [10.20.1.0/24]}\n"
	       "rules:\n"
	       "  - {name: to-lan, match: {dst: [10.20.1.0/24]}, action: forward, "
	       "next_hop: to-mh}\n"
	       "  - {name: to-core, match: {dst: [198.51.100.0/24]}, action: forward, "
	       "next_hop: to-hub}\n"
	       "workers: {idle_backoff_us: 0}\n" +
	       satlink_section(", terminal: 1001, peer_mac: \"" + std::string(HUB_SAT_MAC) + "\"");
}

// 64 flows of ip_len-byte IPv4/UDP packets from the core to the site.
const std::vector<Bytes> &
templates(uint32_t ip_len)
{
	static std::map<uint32_t, std::vector<Bytes>> cache;
	std::vector<Bytes> &v = cache[ip_len];

	if (v.empty())
		for (uint32_t i = 0; i < kFlows; i++) {
			sgwtest::Frame f;

			f.proto = 17;
			f.src = "198.51.100.10";
			f.dst = "10.20.1.5";
			f.sport = uint16_t(7000 + i);
			f.dport = 9000;
			f.payload = ip_len - 28;
			f.payload_byte = uint8_t(i);
			v.push_back(sgwtest::build(f));
		}
	return v;
}

// n new packets from the templates, appended to the stage.
bool
alloc_packets(rte_mempool *pool, uint32_t ip_len, uint32_t n, std::vector<rte_mbuf *> &out)
{
	const std::vector<Bytes> &t = templates(ip_len);
	std::vector<rte_mbuf *> m(n);

	if (rte_pktmbuf_alloc_bulk(pool, m.data(), n) != 0)
		return false;
	for (uint32_t i = 0; i < n; i++) {
		const Bytes &b = t[(out.size() + i) % kFlows];

		std::memcpy(rte_pktmbuf_append(m[i], uint16_t(b.size())), b.data(), b.size());
	}
	out.insert(out.end(), m.begin(), m.end());
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

// Timed: one burst from the stage onto `rx`, one loop of `dp`. Returns packets enqueued.
inline uint32_t
step(Rig &r, Dp &dp, rte_ring *rx)
{
	uint32_t n = uint32_t(std::min<size_t>(kBurst, r.stage.size() - r.pos));

	n = rte_ring_enqueue_burst(rx, reinterpret_cast<void **>(&r.stage[r.pos]), n, nullptr);
	r.pos += n;
	r.now += kStepNs;
	dp.iter(r.now);
	return n;
}

// The terminal takes everything on its sat RX ring (at the current time).
void
run_terminal(Rig &r)
{
	for (int i = 0; i < 1024 && rte_ring_count(r.tsat.rx) > 0; i++)
		r.term.iter(r.now);
	r.term.iter(r.now);
}

// Untimed: run the pair with no new input until the link is quiet (both ends
// up, nothing outstanding, held or queued), 1 ms of virtual time per round.
bool
settle(Rig &r)
{
	if (!r.satlink) {
		RingPort::free_ring(r.hsat.tx);
		RingPort::free_ring(r.terr.tx);
		return true;
	}
	for (int round = 0; round < 5000; round++) {
		RingPort::free_ring(r.terr.tx);
		RingPort::free_ring(r.lan.tx);
		move_ring(r.hsat.tx, r.tsat.rx);
		move_ring(r.tsat.tx, r.hsat.rx);
		r.now += 1000000;
		for (int i = 0; i < 1024 && rte_ring_count(r.hsat.rx) > 0; i++)
			r.hub.iter(r.now);
		r.hub.iter(r.now);
		run_terminal(r);
		sgw_arq_stats h = r.hub.arq(), t = r.term.arq();

		if (sgw_arq_get_state(r.hub.sess()->arq) == SGW_ARQ_UP &&
		    sgw_arq_get_state(r.term.sess()->arq) == SGW_ARQ_UP && h.tx_outstanding == 0 &&
		    h.sendq_held == 0 && h.tx_held == 0 && t.rx_held == 0 && t.tx_outstanding == 0 &&
		    r.hub.sess()->pqr.n == 0 && r.term.sess()->pqr.n == 0 &&
		    rte_ring_count(r.hsat.tx) == 0 && rte_ring_count(r.tsat.tx) == 0 && round > 2) {
			RingPort::free_ring(r.lan.tx);
			return true;
		}
	}
	return false;
}

// Thread CPU time in ns (the clock Google Benchmark's CPU time uses).
inline uint64_t
cpu_ns()
{
	timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

// The baseline's ns/packet per ip_len: from its runs with the most iterations.
struct BaseRun {
	int64_t iters;
	double ns;
};
std::map<uint32_t, std::vector<BaseRun>> g_base_runs;

double
baseline_ns(uint32_t ip_len)
{
	auto it = g_base_runs.find(ip_len);
	std::vector<double> v;
	int64_t most = 0;

	if (it == g_base_runs.end())
		return 0;
	for (const BaseRun &b : it->second)
		most = std::max(most, b.iters);
	for (const BaseRun &b : it->second)
		if (b.iters * 2 >= most)
			v.push_back(b.ns);
	std::sort(v.begin(), v.end());
	return v.empty() ? 0 : v[v.size() / 2];
}

// Self-timing of a run: CPU time of the loop minus the paused parts.
struct SelfTime {
	uint64_t t0 = 0, paused = 0, p0 = 0;

	void start() { t0 = cpu_ns(); }
	void pause_begin() { p0 = cpu_ns(); }
	void pause_end() { paused += cpu_ns() - p0; }
	double ns_per(uint64_t items) const
	{
		return items ? double(cpu_ns() - t0 - paused) / double(items) : 0;
	}
};

void
report_ratio(benchmark::State &state, uint32_t ip_len, double ns)
{
	double b = baseline_ns(ip_len);

	if (b > 0)
		state.counters["vs_baseline"] = ns / b;
}

// ------------------------------------------------------------------ baseline

void
BM_Forward_Baseline(benchmark::State &state)
{
	Rig &r = g_base;
	uint32_t ip_len = uint32_t(state.range(0));
	uint64_t items = 0, drops0 = r.hub.drops();
	SelfTime st;

	free_stage(r);
	settle(r);
	if (!alloc_packets(r.hub.dp->pool, ip_len, kStage, r.stage)) {
		state.SkipWithError("no mbufs for the input");
		return;
	}
	st.start();
	for (auto _ : state) {
		if (r.pos == r.stage.size()) {
			state.PauseTiming();
			st.pause_begin();
			// As for Send: the "NIC" frees what was sent, new input is allocated.
			r.stage.clear();
			r.pos = 0;
			RingPort::free_ring(r.hsat.tx);
			if (!alloc_packets(r.hub.dp->pool, ip_len, kStage, r.stage)) {
				state.SkipWithError("no mbufs for the input");
				break;
			}
			st.pause_end();
			state.ResumeTiming();
		}
		items += step(r, r.hub, r.terr.rx);
	}
	double ns = st.ns_per(items);

	free_stage(r);
	settle(r);
	if (r.hub.drops() != drops0)
		state.SkipWithError("the hub dropped packets");
	g_base_runs[ip_len].push_back({int64_t(state.iterations()), ns});
	state.SetItemsProcessed(int64_t(items));
}

// ---------------------------------------------------------------------- send

// Counters that must not move in a clean run (drops, refusals, retransmissions).
uint64_t
trouble(const Rig &r)
{
	sgw_arq_stats h = r.hub.arq(), t = r.term.arq();
	uint64_t x = r.hub.drops() + r.term.drops() + h.tx_retx + h.window_full + h.send_refused +
		     h.link_downs + t.link_downs + h.peer_restarts + t.peer_restarts;

	for (int c = SGW_SLD_BYPASS_NO_TERMINAL; c < SGW_SLD__COUNT; c++)
		x += r.hub.sl_ctr(c) + r.term.sl_ctr(c);
	for (int c = 1; c < SGW_ARQ_RX__COUNT; c++)
		x += t.rx_refused[c] + h.rx_refused[c];
	return x;
}

void
satlink_send(benchmark::State &state, Rig &r)
{
	uint32_t ip_len = uint32_t(state.range(0));
	uint64_t items = 0, bad0, sent0, status0;
	SelfTime st;

	if (r.hub.dp == nullptr) {
		state.SkipWithError("rig not started");
		return;
	}
	free_stage(r);
	if (!settle(r)) {
		state.SkipWithError("satlink session not up / not quiet");
		return;
	}
	bad0 = trouble(r);
	sent0 = r.hub.sess()->c.pkts_sent_reliable;
	status0 = r.hub.arq().status_rx;
	if (!alloc_packets(r.hub.dp->pool, ip_len, kStage, r.stage)) {
		state.SkipWithError("no mbufs for the input");
		return;
	}
	st.start();
	for (auto _ : state) {
		if (r.pos == r.stage.size()) {
			state.PauseTiming();
			st.pause_begin();
			r.stage.clear();
			r.pos = 0;
			// The link: DATA frames to the terminal, its STATUS frames back.
			move_ring(r.hsat.tx, r.tsat.rx);
			run_terminal(r);
			RingPort::free_ring(r.lan.tx);
			move_ring(r.tsat.tx, r.hsat.rx);
			if (!alloc_packets(r.hub.dp->pool, ip_len, kStage, r.stage)) {
				state.SkipWithError("no mbufs for the input");
				break;
			}
			st.pause_end();
			state.ResumeTiming();
		}
		items += step(r, r.hub, r.terr.rx);
	}
	double ns = st.ns_per(items);
	uint64_t pq = r.hub.sess()->pqr.n;
	uint64_t sent = r.hub.sess()->c.pkts_sent_reliable - sent0;
	uint64_t statuses = r.hub.arq().status_rx - status0;

	free_stage(r);
	if (!settle(r))
		state.SkipWithError("the link did not settle after the run");
	else if (trouble(r) != bad0)
		state.SkipWithError("drops, refusals or retransmissions during the run");
	else if (sent != items)
		state.SkipWithError("the satlink stage did not take every packet");
	else if (pq != 0)
		state.SkipWithError("the pacer held frames");
	state.SetItemsProcessed(int64_t(items));
	state.counters["status_per_kpkt"] = items ? 1000.0 * double(statuses) / double(items) : 0;
	report_ratio(state, ip_len, ns);
}

void
BM_Satlink_Send(benchmark::State &state)
{
	satlink_send(state, g_plain);
}

void
BM_Satlink_Send_GCM(benchmark::State &state)
{
	satlink_send(state, g_gcm);
}

// ------------------------------------------------------------------- receive

// Untimed: kStage new IP packets through the hub (50 bursts, 1 ms); its DATA
// frames become the stage.
bool
make_frames(Rig &r, uint32_t ip_len)
{
	std::vector<rte_mbuf *> in;

	r.stage.clear();
	r.pos = 0;
	if (!alloc_packets(r.hub.dp->pool, ip_len, kStage, in))
		return false;
	for (uint32_t b = 0; b < kBatch; b++) {
		rte_ring_enqueue_burst(r.terr.rx, reinterpret_cast<void **>(&in[b * kBurst]), kBurst,
				       nullptr);
		r.now += kStepNs;
		r.hub.iter(r.now);
	}
	take_ring(r.hsat.tx, r.stage);
	return true;
}

void
satlink_receive(benchmark::State &state, Rig &r)
{
	uint32_t ip_len = uint32_t(state.range(0));
	uint64_t items, bad0, deliv0, status0, frames = 0;
	SelfTime st;

	if (r.hub.dp == nullptr) {
		state.SkipWithError("rig not started");
		return;
	}
	free_stage(r);
	if (!settle(r)) {
		state.SkipWithError("satlink session not up / not quiet");
		return;
	}
	bad0 = trouble(r);
	deliv0 = r.term.sess()->c.pkts_delivered;
	status0 = r.term.arq().status_tx;
	if (!make_frames(r, ip_len)) {
		state.SkipWithError("no mbufs for the input");
		return;
	}
	st.start();
	for (auto _ : state) {
		if (r.pos == r.stage.size()) {
			state.PauseTiming();
			st.pause_begin();
			// The LAN "NIC" sends the delivered packets; STATUS frames to the hub.
			RingPort::free_ring(r.lan.tx);
			move_ring(r.tsat.tx, r.hsat.rx);
			if (!make_frames(r, ip_len)) {
				state.SkipWithError("no mbufs for the input");
				break;
			}
			st.pause_end();
			state.ResumeTiming();
		}
		frames += step(r, r.term, r.tsat.rx);
	}
	items = r.term.sess()->c.pkts_delivered - deliv0;
	double ns = st.ns_per(items);
	uint64_t statuses = r.term.arq().status_tx - status0;

	// Frames left in the stage go to the terminal too (no gap in the sequence).
	rte_ring_enqueue_burst(r.tsat.rx, reinterpret_cast<void **>(r.stage.data() + r.pos),
			       unsigned(r.stage.size() - r.pos), nullptr);
	r.stage.clear();
	r.pos = 0;
	if (!settle(r))
		state.SkipWithError("the link did not settle after the run");
	else if (trouble(r) != bad0)
		state.SkipWithError("drops, refusals or retransmissions during the run");
	else if (items + kBatch < frames || items > frames)
		state.SkipWithError("frames in and packets delivered do not match");
	state.SetItemsProcessed(int64_t(items));
	state.counters["status_per_kpkt"] = items ? 1000.0 * double(statuses) / double(items) : 0;
	report_ratio(state, ip_len, ns);
}

void
BM_Satlink_Receive(benchmark::State &state)
{
	satlink_receive(state, g_plain);
}

void
BM_Satlink_Receive_GCM(benchmark::State &state)
{
	satlink_receive(state, g_gcm);
}

// --------------------------------------------------------------------- setup

bool
start_rig(Rig &r, const char *what, bool satlink, bool gcm)
{
	std::string base = "bsl" + std::to_string(++g_rings);

	r.what = what;
	r.satlink = satlink;
	r.gcm = gcm;
	if (!r.terr.make(base + "t") || !r.hsat.make(base + "h") ||
	    (satlink && (!r.tsat.make(base + "s") || !r.lan.make(base + "l")))) {
		std::fprintf(stderr, "bench_dp_satlink: %s: cannot create the ring ports\n", what);
		return false;
	}
	g_keyfile.clear();
	if (gcm) {
		char tmpl[] = "/tmp/sgw_bench_keys_XXXXXX";
		char *d = mkdtemp(tmpl);

		if (d == nullptr)
			return false;
		g_keyfile = std::string(d) + "/satlink.keys";
		FILE *f = std::fopen(g_keyfile.c_str(), "w");
		if (f == nullptr)
			return false;
		std::fprintf(f, "# bench key\n1001 %s\n", KEY_HEX);
		std::fclose(f);
		chmod(g_keyfile.c_str(), 0600);
	}
	std::string inst = std::to_string(g_rings);
	bool ok = r.hub.start(hub_yaml(r), "h" + inst) &&
		  (!satlink || r.term.start(term_yaml(r), "t" + inst));
	if (gcm) {
		// The keys are loaded at start: the file is not needed any more.
		std::string dir = g_keyfile.substr(0, g_keyfile.rfind('/'));

		unlink(g_keyfile.c_str());
		rmdir(dir.c_str());
		g_keyfile.clear();
	}
	if (!ok)
		return false;
	if (satlink && !settle(r)) {
		std::fprintf(stderr, "bench_dp_satlink: %s: the satlink session did not come up\n",
			     what);
		return false;
	}
	return true;
}

// Stop a rig: every mbuf back in its pool (warned about when not), then freed.
void
stop_rig(Rig &r)
{
	Dp *dps[2] = {&r.hub, &r.term};

	free_stage(r);
	for (Dp *d : dps)
		if (d->up)
			sgw_dp_drain(d->dp);
	for (RingPort *p : {&r.terr, &r.hsat, &r.tsat, &r.lan})
		p->free_all();
	for (Dp *d : dps) {
		if (!d->up)
			continue;
		unsigned int in_use = rte_mempool_in_use_count(d->dp->pool);

		if (in_use != 0)
			std::fprintf(stderr, "bench_dp_satlink: WARNING: %s %s: %u mbufs not returned "
				     "to the pool\n", r.what, d == &r.hub ? "hub" : "terminal", in_use);
		sgw_dp_fini(d->dp);
		std::free(d->dp);
		d->dp = nullptr;
		d->up = false;
	}
	for (RingPort *p : {&r.terr, &r.hsat, &r.tsat, &r.lan})
		p->destroy();
}

// Registered in order (the baseline first: the ratios need it). iters > 0: a
// fixed iteration count (for callgrind), else kMinTime seconds per run.
void
register_all(int64_t iters)
{
	struct {
		const char *name;
		void (*fn)(benchmark::State &);
	} const b[] = {
		{"BM_Forward_Baseline", BM_Forward_Baseline},
		{"BM_Satlink_Send", BM_Satlink_Send},
		{"BM_Satlink_Send_GCM", BM_Satlink_Send_GCM},
		{"BM_Satlink_Receive", BM_Satlink_Receive},
		{"BM_Satlink_Receive_GCM", BM_Satlink_Receive_GCM},
	};

	for (const auto &x : b) {
		benchmark::internal::Benchmark *r = benchmark::RegisterBenchmark(x.name, x.fn);

		r->ArgName("ip_len")->Arg(1400)->Arg(92);
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
	std::string prefix = "bench_satlink_" + std::to_string(getpid());
	const char *eal[] = {"bench", "--no-huge", "-m", "1024", "--no-pci", "--file-prefix",
			     prefix.c_str(), "-l", "0", "--log-level", "warning"};
	int eal_argc = static_cast<int>(sizeof(eal) / sizeof(eal[0]));
	int rc = 0;
	int64_t iters = 0;

	// Our own flag, taken out before Google Benchmark sees the arguments.
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
		std::fprintf(stderr, "bench_dp_satlink: EAL initialisation failed: %s\n",
			     rte_strerror(rte_errno));
		return 1;
	}
	if (!start_rig(g_base, "baseline", false, false) ||
	    !start_rig(g_plain, "satlink", true, false) ||
	    !start_rig(g_gcm, "satlink-gcm", true, true))
		rc = 1;
	else
		benchmark::RunSpecifiedBenchmarks();
	benchmark::Shutdown();
	stop_rig(g_base);
	stop_rig(g_plain);
	stop_rig(g_gcm);
	rte_eal_cleanup();
	return rc;
}
