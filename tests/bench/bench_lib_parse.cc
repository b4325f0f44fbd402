// SPDX-License-Identifier: BSD-3-Clause
// Google Benchmarks for lib/sgw_parse.c: one frame of each common shape, and
// a 32-frame burst of a hub's traffic mix through sgw_classify_burst().
// items_per_second counts packets, so 1e9 / items_per_second is ns/packet.

#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "sgw_parse.h"

namespace {

using Bytes = std::vector<uint8_t>;

void
put16(Bytes &b, uint16_t v)
{
	b.push_back(static_cast<uint8_t>(v >> 8));
	b.push_back(static_cast<uint8_t>(v));
}

void
put32(Bytes &b, uint32_t v)
{
	put16(b, static_cast<uint16_t>(v >> 16));
	put16(b, static_cast<uint16_t>(v));
}

Bytes
eth(uint16_t et, const Bytes &l3, uint16_t vlan = 0)
{
	Bytes b = {0x02, 0, 0, 0, 0, 1, 0x02, 0, 0, 0, 0, 2};
	if (vlan) {
		put16(b, 0x8100);
		put16(b, vlan);
	}
	put16(b, et);
	b.insert(b.end(), l3.begin(), l3.end());
	return b;
}

Bytes
ip4(uint8_t proto, const Bytes &l4)
{
	Bytes b = {0x45, 0};
	put16(b, static_cast<uint16_t>(20 + l4.size()));
	put16(b, 1);
	put16(b, 0x4000);
	b.push_back(64);
	b.push_back(proto);
	put16(b, 0);
	put32(b, 0x0a000001);
	put32(b, 0xc0a80102);
	b.insert(b.end(), l4.begin(), l4.end());
	return b;
}

Bytes
ip6(uint8_t nh, const Bytes &rest)
{
	Bytes b = {0x60, 0, 0, 0};
	put16(b, static_cast<uint16_t>(rest.size()));
	b.push_back(nh);
	b.push_back(64);
	b.resize(b.size() + 32, 0x20);
	b.insert(b.end(), rest.begin(), rest.end());
	return b;
}

// TCP with NOP NOP TS, or no options; payload_len bytes of data.
Bytes
tcp(bool ts, size_t payload_len)
{
	Bytes b;
	put16(b, 443);
	put16(b, 51000);
	put32(b, 0x01020304);
	put32(b, 0x05060708);
	b.push_back(ts ? 0x80 : 0x50);
	b.push_back(0x10);
	put16(b, 512);
	put32(b, 0);
	if (ts) {
		b.insert(b.end(), {1, 1, 8, 10});
		put32(b, 0x11223344);
		put32(b, 0x55667788);
	}
	b.resize(b.size() + payload_len, 0x61);
	return b;
}

Bytes
udp(uint16_t sport, uint16_t dport, const Bytes &payload)
{
	Bytes b;
	put16(b, sport);
	put16(b, dport);
	put16(b, static_cast<uint16_t>(8 + payload.size()));
	put16(b, 0);
	b.insert(b.end(), payload.begin(), payload.end());
	return b;
}

Bytes
esp(size_t payload_len)
{
	Bytes b;
	put32(b, 0x0000c001);
	put32(b, 12345);
	b.resize(b.size() + payload_len, 0x3c);
	return b;
}

void
run_one(benchmark::State &state, const Bytes &frame)
{
	sgw_parse_conf conf;
	sgw_pkt_info info;
	sgw_parse_conf_default(&conf);
	if (sgw_parse_frame(&conf, frame.data(), frame.size(), &info) != SGW_PR_OK) {
		state.SkipWithError("frame does not parse");
		return;
	}
	for (auto _ : state) {
		benchmark::DoNotOptimize(
			sgw_parse_frame(&conf, frame.data(), frame.size(), &info));
		benchmark::ClobberMemory();
	}
	state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}

void
BM_parse_tcp4_ts(benchmark::State &state)
{
	run_one(state, eth(0x0800, ip4(6, tcp(true, 1448))));
}
BENCHMARK(BM_parse_tcp4_ts);

void
BM_parse_tcp4_ack(benchmark::State &state)
{
	run_one(state, eth(0x0800, ip4(6, tcp(false, 0))));
}
BENCHMARK(BM_parse_tcp4_ack);

void
BM_parse_tcp6_ts(benchmark::State &state)
{
	run_one(state, eth(0x86dd, ip6(6, tcp(true, 1428))));
}
BENCHMARK(BM_parse_tcp6_ts);

void
BM_parse_udp4(benchmark::State &state)
{
	run_one(state, eth(0x0800, ip4(17, udp(5353, 53, Bytes(64, 1)))));
}
BENCHMARK(BM_parse_udp4);

void
BM_parse_esp4(benchmark::State &state)
{
	run_one(state, eth(0x0800, ip4(50, esp(1400))));
}
BENCHMARK(BM_parse_esp4);

void
BM_parse_esp_in_udp4(benchmark::State &state)
{
	run_one(state, eth(0x0800, ip4(17, udp(4500, 4500, esp(1400)))));
}
BENCHMARK(BM_parse_esp_in_udp4);

void
BM_parse_vlan_tcp4_ts(benchmark::State &state)
{
	run_one(state, eth(0x0800, ip4(6, tcp(true, 1448)), 100));
}
BENCHMARK(BM_parse_vlan_tcp4_ts);

// A hub's mix: mostly TCP data and ACKs, some IPsec, UDP, a little ICMP/ARP.
void
BM_classify_burst32_hub_mix(benchmark::State &state)
{
	std::vector<Bytes> kinds = {
		eth(0x0800, ip4(6, tcp(true, 1448))),
		eth(0x0800, ip4(6, tcp(true, 0))),
		eth(0x0800, ip4(6, tcp(true, 1448))),
		eth(0x86dd, ip6(6, tcp(true, 1428))),
		eth(0x0800, ip4(6, tcp(false, 0))),
		eth(0x0800, ip4(50, esp(1400))),
		eth(0x0800, ip4(17, udp(4500, 4500, esp(1400)))),
		eth(0x0800, ip4(17, udp(40000, 443, Bytes(1200, 2)))),  // QUIC
		eth(0x0800, ip4(6, tcp(true, 1448)), 100),
		eth(0x0800, ip4(6, tcp(true, 0))),
		eth(0x0800, ip4(1, {8, 0, 0, 0, 0, 1, 0, 1})),
		eth(0x0806, Bytes(28, 0)),
	};
	const int n = 32;
	std::vector<Bytes> frames;
	std::vector<const uint8_t *> ptrs;
	std::vector<uint16_t> lens;
	for (int i = 0; i < n; i++)
		frames.push_back(kinds[static_cast<size_t>(i * 7) % kinds.size()]);
	for (const Bytes &f : frames) {
		ptrs.push_back(f.data());
		lens.push_back(static_cast<uint16_t>(f.size()));
	}
	sgw_parse_conf conf;
	sgw_parse_conf_default(&conf);
	std::vector<sgw_pkt_info> info(n);
	sgw_burst_classes out;

	for (auto _ : state) {
		sgw_classify_burst(&conf, ptrs.data(), lens.data(), n, info.data(), &out);
		benchmark::ClobberMemory();
	}
	if (out.n[SGW_CLASS_MALFORMED] != 0)
		state.SkipWithError("a frame of the mix is malformed");
	state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * n);
}
BENCHMARK(BM_classify_burst32_hub_mix);

}  // namespace

BENCHMARK_MAIN();
