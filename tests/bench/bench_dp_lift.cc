// SPDX-License-Identifier: BSD-3-Clause
// Google Benchmarks for the BS-LIFT stage (dataplane/lift.c, docs/lift.md)
// through the whole pipeline of a hub: per packet, what the stage costs
// against forwarding the same packets, in the same run. Four hubs, each one
// worker on net_ring ports, the same policy (terminal site-a 10.20.1.0/24,
// satlink on the satellite port with AES-GCM keys and the bypass service, so
// packets toward the terminals leave as they are and no ARQ or crypto cost is
// in the figures), with and without the lift section; 64 mobile hosts
// (10.20.1.10-73), one flow and one SA pair each:
//   BM_Forward_EspDown  no lift: downlink ESP fixed host -> mobile hosts
//                       (flow stage, satlink bypass)
//   BM_Lift_EspDown     lift on, the 64 flows set up: the same ESP, noted per
//                       SA (sgw_lift_esp_down) before the flow stage
//   BM_Forward_Pairs    no lift: LIFT packets from the mobile hosts, (FrACK,
//                       TCP ACK) pairs behind a 8-byte LIFT header, forwarded
//                       toward the fixed host untouched (96-byte IP packets)
//   BM_Lift_Pairs       lift on: the same pairs, every ACK for new data with
//                       data still unacknowledged: each pair held, the
//                       previous pair's TCP ACK stripped and re-injected
//                       (a second pass through the pipeline as ESP, then
//                       forwarded), its FrACK dropped (the steady state of a
//                       flow being helped; the rig DISABLED_CostLiftPairs of
//                       tests/pipeline/test_lift_stage.cc, at 64 flows)
// The LIFT packets are put on the satellite port's RX ring with satlink's
// authenticated-delivery mbuf flag already set, as the satlink stage sets it
// on what an AES-GCM session delivers: the figures leave out satlink's frame
// reception and decryption, which every uplink packet pays with LIFT or
// without (docs/satlink.md has its cost). vs_forward: ns/packet over the
// matching forward run's, measured here with the thread CPU clock.
//
// As in bench_dp_xcp.cc: one iteration is one burst of 32 packets on the RX
// ring, then one sgw_worker_iter + flush; virtual time advances 20 us per
// burst (the LIFT timer, 0.98 s, never expires: every flow gets a pair each
// 80 us); every 50 iterations (untimed) what the hub sent is freed and 1600
// new packets are built; for the pairs, downlink ESP is sent first (untimed)
// so that every ACK number stays below what was forwarded toward its host.
// --sgw_iterations=N runs every benchmark exactly N iterations, for callgrind
// (collect step() only, divide by N x 32):
//   valgrind --tool=callgrind --collect-atstart=no '--toggle-collect=*step(*'
//     bench_dp_lift --sgw_iterations=2000 --benchmark_filter='Lift_Pairs'

#include <benchmark/benchmark.h>

#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include "../pipeline/pkt_build.h"
#include "lift.h"
#include "policy_yaml.h"
#include "satlink.h"
#include "sgw_dp.h"
#include "sgw_lift.h"

namespace {

using Bytes = std::vector<uint8_t>;

constexpr uint32_t kBurst = 32;
constexpr uint32_t kBatch = 50;
constexpr uint32_t kStage = kBurst * kBatch;
constexpr uint64_t kStepNs = 20000;
constexpr uint32_t kMh = 64;
constexpr uint32_t kRingSize = 16384;
constexpr double kMinTime = 0.2;
constexpr uint32_t kDownLen = 1000;   // downlink ESP: bytes after SPI and sequence
constexpr uint32_t kUpLen = 60;       // uplink ESP of a TCP ACK: IV, TCP, trailer, ICV
constexpr uint16_t kFlow = 1;
const uint8_t kFh[4] = {198, 51, 100, 10};

int g_rings;
std::string g_keys;
uint64_t g_auth;

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
	static uint32_t free_ring(rte_ring *r)
	{
		void *o = nullptr;
		uint32_t n = 0;

		while (r != nullptr && rte_ring_dequeue(r, &o) == 0) {
			rte_pktmbuf_free(static_cast<rte_mbuf *>(o));
			n++;
		}
		return n;
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

// One hub: its ports, its dataplane, its input, the hosts' sequence numbers.
struct Rig {
	const char *what = "";
	bool lift = false, pairs = false;
	RingPort terr, sat;
	sgw_dp *dp = nullptr;
	bool up = false;
	uint64_t now = 0;
	std::vector<rte_mbuf *> stage;
	size_t pos = 0;
	uint32_t down_seq[kMh] = {}, up_seq[kMh] = {}, acked[kMh] = {};
	uint32_t next = 0;

	void iter()
	{
		sgw_worker *w = dp->workers[0];

		sgw_worker_iter(w, w->ns_base_tsc + uint64_t(double(now) / w->ns_per_tsc) + 1);
		sgw_worker_flush(w);
	}
	uint64_t drops() const
	{
		uint64_t d = 0;

		for (uint64_t x : dp->workers[0]->c.drop)
			d += x;
		return d;
	}
};

Rig g_fwd_down, g_lift_down, g_fwd_pairs, g_lift_pairs;

std::string
hub_yaml(const Rig &r)
{
	return "version: 1\nrole: hub\nports:\n"
	       "  - {name: terr, device: " + r.terr.name + ", role: terrestrial, peer: sat}\n"
	       "  - {name: sat, device: " + r.sat.name + ", role: satellite, peer: terr}\n"
	       "next_hops:\n  - {name: to-term, port: sat, mac: \"02:00:00:00:04:01\"}\n"
	       "  - {name: to-fh, port: terr, mac: \"02:00:00:00:01:01\"}\n"
	       "terminals:\n  - {name: site-a, id: 1001, prefixes: [10.20.1.0/24]}\n"
	       "rules:\n  - {name: to-site, match: {dst: [10.20.1.0/24]}, action: forward, "
	       "next_hop: to-term, satlink: bypass}\n"
	       "  - {name: to-core, match: {dst: [198.51.100.0/24]}, action: forward, "
	       "next_hop: to-fh}\n"
	       "workers: {idle_backoff_us: 0}\n"
	       "satlink: {port: sat, forward_rate_bps: 400000000000, return_rate_bps: "
	       "400000000000, peer_mac: \"02:00:00:00:04:01\", default_service: bypass, "
	       "keys: " + g_keys + "}\n" +
	       std::string(r.lift ? "lift: {timer: fixed, timer_ms: 980}\n" : "");
}

void
mh_addr(uint32_t i, uint8_t a[4])
{
	a[0] = 10;
	a[1] = 20;
	a[2] = 1;
	a[3] = uint8_t(10 + i);
}

// Ethernet | IPv4 (proto) | body, checksum right.
Bytes
ip4(const uint8_t src[4], const uint8_t dst[4], uint8_t proto, const Bytes &body)
{
	Bytes b = {0x02, 0, 0, 0, 0, 0x0b, 0x02, 0, 0, 0, 0, 0x0a, 0x08, 0x00};
	size_t tot = 20 + body.size();
	Bytes ip = {0x45, 0, uint8_t(tot >> 8), uint8_t(tot), 0x12, 0x34, 0x40, 0, 64, proto, 0, 0};

	ip.insert(ip.end(), src, src + 4);
	ip.insert(ip.end(), dst, dst + 4);
	uint16_t c = sgwtest::csum(ip.data(), ip.size());
	ip[10] = uint8_t(c >> 8);
	ip[11] = uint8_t(c);
	b.insert(b.end(), ip.begin(), ip.end());
	b.insert(b.end(), body.begin(), body.end());
	return b;
}

Bytes
esp(uint32_t spi, uint32_t seq, uint32_t len)
{
	Bytes e;

	sgwtest::put32(e, spi);
	sgwtest::put32(e, seq);
	e.resize(8 + len, 0x5a);
	return e;
}

uint32_t down_spi(uint32_t i) { return 0x1000 + i; }
uint32_t up_spi(uint32_t i) { return 0x2000 + i; }

Bytes
esp_down(uint32_t i, uint32_t seq)
{
	uint8_t mh[4];

	mh_addr(i, mh);
	return ip4(kFh, mh, 50, esp(down_spi(i), seq, kDownLen));
}

// A LIFT packet from host i: header h (8 bytes) then, for FrACK and TCP ACK, its ESP.
Bytes
lift_pkt(uint32_t i, const uint8_t h[8], bool with_esp, uint32_t up_seq)
{
	uint8_t mh[4];
	Bytes b(h, h + 8);

	mh_addr(i, mh);
	if (with_esp) {
		Bytes e = esp(up_spi(i), up_seq, kUpLen);
		b.insert(b.end(), e.begin(), e.end());
	}
	return ip4(mh, kFh, 253, b);
}

rte_mbuf *
to_mbuf(Rig &r, const Bytes &b, bool auth)
{
	rte_mbuf *m = rte_pktmbuf_alloc(r.dp->pool);

	if (m == nullptr)
		return nullptr;
	std::memcpy(rte_pktmbuf_append(m, uint16_t(b.size())), b.data(), b.size());
	if (auth)
		m->ol_flags |= g_auth;   // as satlink's delivery from an AES-GCM session
	return m;
}

// Offsets in the frames: Ethernet 14, IPv4 20, then ESP (downlink) or LIFT 8 + ESP.
constexpr size_t kL4 = 34;
constexpr size_t kUpEsp = kL4 + 8;

void
put_be32(rte_mbuf *m, size_t off, uint32_t v)
{
	uint8_t *p = rte_pktmbuf_mtod_offset(m, uint8_t *, off);

	p[0] = uint8_t(v >> 24);
	p[1] = uint8_t(v >> 16);
	p[2] = uint8_t(v >> 8);
	p[3] = uint8_t(v);
}

// Per host: its downlink ESP, FrACK and TCP-ACK frames; sequence numbers and the
// IPsec ACK Number are written into each copy (the batches are built untimed,
// but building them costs more than the hub's work on them).
struct Templates {
	Bytes down[kMh], frack[kMh], ack[kMh];

	Templates()
	{
		for (uint32_t i = 0; i < kMh; i++) {
			uint8_t h[8];

			down[i] = esp_down(i, 0);
			sgw_lift_build_frack(h, sizeof(h), kFlow, 50);
			frack[i] = lift_pkt(i, h, true, 0);
			sgw_lift_build_tcp_ack(h, sizeof(h), 0, kFlow, 0, 50);
			ack[i] = lift_pkt(i, h, true, 0);
		}
	}
};

const Templates &
tpl()
{
	static const Templates t;

	return t;
}

rte_mbuf *
down_mbuf(Rig &r, uint32_t i)
{
	rte_mbuf *m = to_mbuf(r, tpl().down[i], false);

	if (m != nullptr)
		put_be32(m, kL4 + 4, ++r.down_seq[i]);
	return m;
}

// Untimed: put mbufs on a port's RX ring and run the hub until it took them all.
bool
feed(Rig &r, rte_ring *rx, std::vector<rte_mbuf *> &ms)
{
	for (size_t i = 0; i < ms.size();) {
		size_t n = 0;

		for (; n < kBurst && i < ms.size(); n++, i++)
			if (ms[i] == nullptr || rte_ring_enqueue(rx, ms[i]) != 0) {
				for (; i < ms.size(); i++)
					rte_pktmbuf_free(ms[i]);
				return false;
			}
		r.now += kStepNs;
		r.iter();
		RingPort::free_ring(r.terr.tx);
		RingPort::free_ring(r.sat.tx);
	}
	return true;
}

// Untimed: enough downlink ESP that every ACK of the next batch leaves data unacknowledged.
bool
esp_ahead(Rig &r)
{
	std::vector<rte_mbuf *> ms;
	uint32_t per = kStage / 2 / kMh + 2;

	for (uint32_t i = 0; i < kMh; i++)
		while (r.down_seq[i] < r.acked[i] + per + 2)
			ms.push_back(down_mbuf(r, i));
	return feed(r, r.terr.rx, ms);
}

// The next batch of kStage packets (sequence numbers move on).
bool
alloc_packets(Rig &r)
{
	std::vector<rte_mbuf *> m;

	m.reserve(kStage);
	if (r.pairs && !esp_ahead(r))
		return false;
	while (m.size() < kStage) {
		uint32_t i = r.next++ % kMh;

		if (r.pairs) {
			// FrACK then the TCP ACK, consecutive uplink ESP sequence numbers.
			rte_mbuf *f = to_mbuf(r, tpl().frack[i], true);
			rte_mbuf *a = to_mbuf(r, tpl().ack[i], true);

			if (f != nullptr)
				put_be32(f, kUpEsp + 4, ++r.up_seq[i]);
			if (a != nullptr) {
				put_be32(a, kUpEsp + 4, ++r.up_seq[i]);
				sgw_lift_build_tcp_ack(rte_pktmbuf_mtod_offset(a, uint8_t *, kL4), 8, 0,
						       kFlow, ++r.acked[i], 50);
			}
			m.push_back(f);
			m.push_back(a);
		} else {
			m.push_back(down_mbuf(r, i));
		}
	}
	for (rte_mbuf *x : m)
		if (x == nullptr) {
			for (rte_mbuf *y : m)
				rte_pktmbuf_free(y);
			return false;
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
	rte_ring *rx = r.pairs ? r.sat.rx : r.terr.rx;

	n = rte_ring_enqueue_burst(rx, reinterpret_cast<void **>(&r.stage[r.pos]), n, nullptr);
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

// The forward runs' ns/packet (the median of the longest runs), per input.
std::vector<std::pair<int64_t, double>> g_fwd_runs[2];

double
forward_ns(bool pairs)
{
	std::vector<double> v;
	int64_t most = 0;

	for (auto &b : g_fwd_runs[pairs])
		most = std::max(most, b.first);
	for (auto &b : g_fwd_runs[pairs])
		if (b.first * 2 >= most)
			v.push_back(b.second);
	std::sort(v.begin(), v.end());
	return v.empty() ? 0 : v[v.size() / 2];
}

sgw_lift_stats
lstats(const Rig &r)
{
	sgw_lift_stats st;

	std::memset(&st, 0, sizeof(st));
	if (r.lift)
		sgw_lift_get_stats(sgw_lift_worker_of(r.dp->workers[0])->l, &st);
	return st;
}

uint64_t
lift_fracks_dropped(const Rig &r)
{
	if (!r.lift)
		return 0;
	return sgw_lift_drop_total(r.dp, SGW_LD_FRACK_SUPERSEDED) +
	       sgw_lift_drop_total(r.dp, SGW_LD_FRACK_STALE) +
	       sgw_lift_drop_total(r.dp, SGW_LD_FRACK_UNUSED);
}

void
run(benchmark::State &state, Rig &r)
{
	uint64_t items = 0, t0, paused = 0, p0, drops0, out = 0, sup0;
	sgw_lift_stats st0, st1;

	if (r.dp == nullptr) {
		state.SkipWithError("rig not started");
		return;
	}
	free_stage(r);
	RingPort::free_ring(r.sat.tx);
	RingPort::free_ring(r.terr.tx);
	if (!alloc_packets(r)) {
		state.SkipWithError("no mbufs for the input");
		return;
	}
	drops0 = r.drops();
	sup0 = lift_fracks_dropped(r);
	st0 = lstats(r);
	t0 = cpu_ns();
	for (auto _ : state) {
		if (r.pos == r.stage.size()) {
			state.PauseTiming();
			p0 = cpu_ns();
			r.stage.clear();
			r.pos = 0;
			// The NIC's TX completion.
			out += RingPort::free_ring(r.pairs ? r.terr.tx : r.sat.tx);
			if (!alloc_packets(r)) {
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
	out += RingPort::free_ring(r.pairs ? r.terr.tx : r.sat.tx);
	st1 = lstats(r);
	// Nothing dropped but FrACKs (superseded by the next pair; the first spare of each flow).
	uint64_t sup = lift_fracks_dropped(r) - sup0;
	if (r.drops() - drops0 != sup)
		state.SkipWithError("the hub dropped packets");
	if (r.lift && r.pairs) {
		// Every pair held (its TCP ACK for new data, data still unacknowledged) but
		// each flow's first, which goes on at once and ends the transitory phase.
		if (st1.acks_held - st0.acks_held + kMh < items / 2 ||
		    st1.fracks_rx - st0.fracks_rx < items / 2)
			state.SkipWithError("the stage did not hold every pair");
		state.counters["held"] = double(st1.acks_held - st0.acks_held);
	}
	if (r.lift && !r.pairs && st1.esp_down - st0.esp_down < items)
		state.SkipWithError("the stage did not note every ESP packet");
	state.counters["out_per_in"] = items ? double(out) / double(items) : 0;
	state.SetItemsProcessed(int64_t(items));
	if (!r.lift) {
		g_fwd_runs[r.pairs].push_back({int64_t(state.iterations()), ns});
	} else {
		double f = forward_ns(r.pairs);

		if (f > 0)
			state.counters["vs_forward"] = ns / f;
	}
}

void BM_Forward_EspDown(benchmark::State &s) { run(s, g_fwd_down); }
void BM_Lift_EspDown(benchmark::State &s) { run(s, g_lift_down); }
void BM_Forward_Pairs(benchmark::State &s) { run(s, g_fwd_pairs); }
void BM_Lift_Pairs(benchmark::State &s) { run(s, g_lift_pairs); }

// The 64 flows: a Setup from each host, as delivered by the session.
bool
setups(Rig &r)
{
	std::vector<rte_mbuf *> ms;

	for (uint32_t i = 0; i < kMh; i++) {
		uint8_t h[8];

		sgw_lift_build_setup(h, sizeof(h), kFlow, down_spi(i), 50);
		ms.push_back(to_mbuf(r, lift_pkt(i, h, false, 0), true));
	}
	if (!feed(r, r.sat.rx, ms))
		return false;
	return lstats(r).setups == kMh && lstats(r).flows == kMh;
}

bool
start_rig(Rig &r, const char *what, bool lift, bool pairs)
{
	std::string base = "blk" + std::to_string(++g_rings);
	sgw_policy pol;
	sgw_cfg_errors errs;
	char err[256] = "";
	unsigned int lcores[1] = {0};

	r.what = what;
	r.lift = lift;
	r.pairs = pairs;
	if (!r.terr.make(base + "t") || !r.sat.make(base + "s"))
		return false;
	std::string y = hub_yaml(r);
	if (sgw_policy_load_buffer("bench.yaml", y.data(), y.size(), &pol, &errs) != 0) {
		std::fprintf(stderr, "bench_dp_lift: policy: %s\n", errs.n ? errs.e[0].msg : "?");
		return false;
	}
	r.dp = static_cast<sgw_dp *>(std::calloc(1, sizeof(*r.dp)));
	int rc = sgw_dp_init(r.dp, &pol, 1, lcores, false, ("l" + base).c_str());
	r.up = true;
	if (rc != 0 || sgw_dp_publish(r.dp, &pol, err, sizeof(err)) != 0) {
		std::fprintf(stderr, "bench_dp_lift: dataplane %s: %s\n", what, err);
		sgw_policy_free(&pol);
		return false;
	}
	sgw_policy_free(&pol);
	if (r.dp->stage_on[SGW_STAGE_LIFT] != lift)
		return false;
	if (g_auth == 0) {
		int bit = rte_mbuf_dynflag_lookup(SGW_SL_AUTH_FLAG_NAME, nullptr);

		if (bit < 0)
			return false;
		g_auth = RTE_BIT64(bit);
	}
	r.iter();
	RingPort::free_ring(r.sat.tx);
	if (lift && !setups(r)) {
		std::fprintf(stderr, "bench_dp_lift: %s: the Setups built no flows\n", what);
		return false;
	}
	return true;
}

void
stop_rig(Rig &r)
{
	free_stage(r);
	if (r.up) {
		sgw_dp_drain(r.dp);
		r.terr.destroy();
		r.sat.destroy();
		unsigned int in_use = rte_mempool_in_use_count(r.dp->pool);
		if (in_use != 0)
			std::fprintf(stderr, "bench_dp_lift: WARNING: %s: %u mbufs not returned\n",
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
		{"BM_Forward_EspDown", BM_Forward_EspDown},
		{"BM_Forward_Pairs", BM_Forward_Pairs},
		{"BM_Lift_EspDown", BM_Lift_EspDown},
		{"BM_Lift_Pairs", BM_Lift_Pairs},
	};
	for (const auto &x : b) {
		benchmark::internal::Benchmark *r = benchmark::RegisterBenchmark(x.name, x.fn);

		if (iters > 0)
			r->Iterations(iters);
		else
			r->MinTime(kMinTime);
	}
}

// satlink's key file (AES-GCM for terminal 1001): lift refuses to start without one.
bool
write_keys()
{
	char tmpl[] = "/tmp/lk_bench_keys_XXXXXX";
	char *d = mkdtemp(tmpl);

	if (d == nullptr)
		return false;
	g_keys = std::string(d) + "/hub.keys";
	FILE *f = std::fopen(g_keys.c_str(), "w");
	if (f == nullptr) {
		rmdir(d);  /* nothing left behind when the file cannot be written */
		g_keys.clear();
		return false;
	}
	std::fprintf(f, "1001 000102030405060708090a0b0c0d0e0f\n");
	std::fclose(f);
	return chmod(g_keys.c_str(), 0600) == 0;
}

void
remove_keys()
{
	if (g_keys.empty())
		return;
	std::remove(g_keys.c_str());
	rmdir(g_keys.substr(0, g_keys.rfind('/')).c_str());
}

} // namespace

int
main(int argc, char **argv)
{
	std::string prefix = "lk_bench_" + std::to_string(getpid());
	const char *eal[] = {"bench", "--no-huge", "-m", "1024", "--no-pci", "--file-prefix",
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
	if (!write_keys()) {
		std::fprintf(stderr, "bench_dp_lift: cannot write the key file\n");
		remove_keys();
		return 1;
	}
	if (rte_eal_init(eal_argc, const_cast<char **>(eal)) < 0) {
		std::fprintf(stderr, "bench_dp_lift: EAL initialisation failed: %s\n",
			     rte_strerror(rte_errno));
		remove_keys();
		return 1;
	}
	if (!start_rig(g_fwd_down, "forward-esp-down", false, false) ||
	    !start_rig(g_lift_down, "lift-esp-down", true, false) ||
	    !start_rig(g_fwd_pairs, "forward-pairs", false, true) ||
	    !start_rig(g_lift_pairs, "lift-pairs", true, true))
		rc = 1;
	else
		benchmark::RunSpecifiedBenchmarks();
	benchmark::Shutdown();
	stop_rig(g_fwd_down);
	stop_rig(g_lift_down);
	stop_rig(g_fwd_pairs);
	stop_rig(g_lift_pairs);
	rte_eal_cleanup();
	remove_keys();
	return rc;
}
