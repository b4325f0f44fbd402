// SPDX-License-Identifier: BSD-3-Clause
// Google Benchmarks for the per-core flow table (dataplane/flow_table.c): the
// rte_hash bulk lookup of a 32-packet burst against a table holding 1M flows
// (all hits, all misses), and a flow's whole life in the table: insert (hash
// add + idle timer start on the core's timer wheel) then delete (timer stop +
// hash delete). items_per_second counts keys (packets, or flows for
// insert+delete), so 1e9 / items_per_second is ns per packet (per flow).
//
// The table needs EAL memory (rte_hash, rte_zmalloc): main() initialises the
// EAL without hugepages or devices before any benchmark runs, then fills one
// shared table once; filling 1M flows takes a second or two and is not timed.

#include <benchmark/benchmark.h>

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_hash.h>

#include "flow_table.h"
#include "sgw_flow_key.h"
#include "sgw_parse.h"
#include "sgw_timer_wheel.h"
#include "stage.h"

namespace {

constexpr uint32_t kFlows = 1u << 20;        // flows in the table during the runs
constexpr uint32_t kCapacity = 1u << 21;     // table size: a core sized for 2M flows, half full
constexpr uint32_t kBurst = 32;              // satgw's RX burst
constexpr uint32_t kQueryBursts = 4096;      // distinct bursts cycled by the lookup runs
constexpr uint64_t kIdleNs = 120ull * 1000 * 1000 * 1000;   // limits.flow_idle_ms default
constexpr uint64_t kTickNs = 100 * 1000;                    // workers.timer_tick_us default

struct Fixture {
	sgw_flow_table *ft = nullptr;
	sgw_tw *tw = nullptr;
	std::vector<sgw_flow_key> in_table;      // kFlows keys present in the table
	std::vector<sgw_flow_key> hit_q;         // kQueryBursts * kBurst keys, all present
	std::vector<sgw_flow_key> miss_q;        // same shape, none present
	std::vector<sgw_flow_key> fresh;         // keys for insert+delete, none present
};

Fixture g;

// A TCP or UDP flow between a terrestrial server and a terminal host in
// 10.20.0.0/16, keyed the way the dataplane keys it (sgw_flow_key_from_info).
sgw_flow_key
random_key(std::mt19937_64 &rng, uint8_t salt)
{
	sgw_pkt_info pi;
	uint64_t r = rng();
	uint32_t term = 0x0a140000u | static_cast<uint32_t>(r & 0xffff);
	uint32_t srv = 0xc6336400u ^ static_cast<uint32_t>((r >> 16) & 0x3ffff) ^
		       (static_cast<uint32_t>(salt) << 24);
	sgw_flow_key k;

	std::memset(&pi, 0, sizeof(pi));
	pi.ip_ver = 4;
	pi.ip_proto = (r >> 40) % 10 == 0 ? 17 : 6;
	for (int i = 0; i < 4; i++) {
		pi.src[i] = static_cast<uint8_t>(term >> (24 - 8 * i));
		pi.dst[i] = static_cast<uint8_t>(srv >> (24 - 8 * i));
	}
	pi.sport = static_cast<uint16_t>(32768 + ((r >> 34) % 28232));
	pi.dport = static_cast<uint16_t>((r >> 50) % 3 == 0 ? 80 : 443);
	sgw_flow_key_from_info(&pi, &k);
	return k;
}

// Distinct keys: a key already drawn (or already in the table) is drawn again.
void
fill_unique(std::mt19937_64 &rng, std::vector<sgw_flow_key> &out, size_t n, uint8_t salt,
	    rte_hash *seen)
{
	out.reserve(n);
	while (out.size() < n) {
		sgw_flow_key k = random_key(rng, salt);

		if (rte_hash_lookup(seen, &k) >= 0)
			continue;
		if (rte_hash_add_key(seen, &k) < 0) {
			std::fprintf(stderr, "bench_dp_flow: key set full\n");
			std::exit(1);
		}
		out.push_back(k);
	}
}

bool
setup()
{
	std::mt19937_64 rng(20240601);
	rte_hash_parameters hp = {};
	rte_hash *seen;

	g.ft = sgw_flow_table_create("bench_flows", kCapacity, kIdleNs, 0);
	g.tw = sgw_tw_create(kCapacity, kTickNs, 0);
	if (g.ft == nullptr || g.tw == nullptr) {
		std::fprintf(stderr, "bench_dp_flow: cannot create the flow table / timer wheel: %s\n",
			     rte_strerror(rte_errno));
		return false;
	}
	// Uniqueness of all generated keys (table, misses, fresh) through a scratch hash.
	hp.name = "bench_seen";
	hp.entries = 2 * kFlows + kQueryBursts * kBurst + 8;
	hp.key_len = sizeof(sgw_flow_key);
	hp.socket_id = 0;
	hp.extra_flag = RTE_HASH_EXTRA_FLAGS_EXT_TABLE;
	seen = rte_hash_create(&hp);
	if (seen == nullptr) {
		std::fprintf(stderr, "bench_dp_flow: scratch hash: %s\n", rte_strerror(rte_errno));
		return false;
	}
	fill_unique(rng, g.in_table, kFlows, 0, seen);
	fill_unique(rng, g.miss_q, kQueryBursts * kBurst, 1, seen);
	fill_unique(rng, g.fresh, kFlows / 2, 2, seen);
	rte_hash_free(seen);

	for (const sgw_flow_key &k : g.in_table)
		if (sgw_flow_add(g.ft, g.tw, SGW_STAGE_FLOW, &k, 0) < 0) {
			std::fprintf(stderr, "bench_dp_flow: table refused flow %u of %u\n",
				     g.ft->active, kFlows);
			return false;
		}
	// Hits in random order, so consecutive lookups touch unrelated buckets.
	g.hit_q.reserve(kQueryBursts * kBurst);
	std::uniform_int_distribution<uint32_t> pick(0, kFlows - 1);
	for (uint32_t i = 0; i < kQueryBursts * kBurst; i++)
		g.hit_q.push_back(g.in_table[pick(rng)]);
	return true;
}

void
lookup_bursts(benchmark::State &state, const std::vector<sgw_flow_key> &q, bool expect_hit)
{
	const sgw_flow_key *kp[kBurst];
	int32_t pos[kBurst];
	uint32_t b = 0, bad = 0;

	for (auto _ : state) {
		const sgw_flow_key *base = &q[static_cast<size_t>(b) * kBurst];

		for (uint32_t i = 0; i < kBurst; i++)
			kp[i] = &base[i];
		sgw_flow_lookup_bulk(g.ft, kp, kBurst, pos);
		benchmark::DoNotOptimize(pos);
		bad += (pos[0] >= 0) != expect_hit;
		b = (b + 1) % kQueryBursts;
	}
	if (bad != 0)
		state.SkipWithError("lookup result not what the key set says");
	state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * kBurst);
	state.counters["flows"] = g.ft->active;
}

void
BM_FlowLookupBulk32_Hit(benchmark::State &state)
{
	lookup_bursts(state, g.hit_q, true);
}
BENCHMARK(BM_FlowLookupBulk32_Hit);

void
BM_FlowLookupBulk32_Miss(benchmark::State &state)
{
	lookup_bursts(state, g.miss_q, false);
}
BENCHMARK(BM_FlowLookupBulk32_Miss);

// A new flow arrives (hash add + timer start) and leaves (timer stop + hash
// delete), with 1M other flows in the table: the table stays at 1M.
void
BM_FlowInsertDelete(benchmark::State &state)
{
	size_t i = 0, n = g.fresh.size();
	uint64_t failed = 0;

	for (auto _ : state) {
		const sgw_flow_key &k = g.fresh[i];
		int32_t pos = sgw_flow_add(g.ft, g.tw, SGW_STAGE_FLOW, &k, 0);

		if (pos < 0) {
			failed++;
		} else {
			// The delete path of a closed or expired flow: its timers stopped,
			// its key out of the hash.
			sgw_flow_del(g.ft, g.tw, uint32_t(pos));
		}
		i = i + 1 == n ? 0 : i + 1;
	}
	if (failed != 0)
		state.SkipWithError("sgw_flow_add refused a flow");
	state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
	state.counters["flows"] = g.ft->active;
}
BENCHMARK(BM_FlowInsertDelete);

} // namespace

int
main(int argc, char **argv)
{
	std::string prefix = "bench_flow_" + std::to_string(getpid());
	const char *eal[] = {"bench", "--no-huge", "-m", "2048", "--no-pci", "--file-prefix",
			     prefix.c_str(), "-l", "0", "--log-level", "warning"};
	int eal_argc = static_cast<int>(sizeof(eal) / sizeof(eal[0]));

	benchmark::Initialize(&argc, argv);
	if (benchmark::ReportUnrecognizedArguments(argc, argv))
		return 1;
	if (rte_eal_init(eal_argc, const_cast<char **>(eal)) < 0) {
		std::fprintf(stderr, "bench_dp_flow: EAL initialisation failed: %s\n",
			     rte_strerror(rte_errno));
		return 1;
	}
	if (!setup())
		return 1;
	benchmark::RunSpecifiedBenchmarks();
	benchmark::Shutdown();
	sgw_flow_table_free(g.ft);
	sgw_tw_destroy(g.tw);
	rte_eal_cleanup();
	return 0;
}
