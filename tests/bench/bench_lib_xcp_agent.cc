// SPDX-License-Identifier: BSD-3-Clause
// Google Benchmarks for lib/sgw_xcp_agent.c (the XCP host agent) and
// lib/sgw_xcp_legacy.c (the hub's legacy mode): per-packet cost, virtual time.
//  - SenderOut/<flows>: a 1400-byte IPv4 data segment from the host: flow
//                       lookup, RTT timer, header insert (the payload moves
//                       20 bytes), IPv4 checksum.
//  - SenderIn/<flows>:  an XCP ACK from the wire: strip, feedback applied, RTT,
//                       window clamp with the incremental checksum.
//  - ReceiverIn:        a 1400-byte XCP data segment: strip, feedback summed.
//  - Clamp:             sgw_xcpa_clamp_window alone.
//  - LegacyData/LegacyAck: sgw_xcpl_data (with sgw_xcp_feedback) / sgw_xcpl_ack.
// Each iteration first copies the packet back into the buffer (memcpy of the
// packet, included in the time). <flows> flows are visited round robin.
// Reproduce: tests/bench/bench_lib_xcp_agent --benchmark_repetitions=5
//            --benchmark_report_aggregates_only=true

#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "sgw_xcp_legacy.h"

namespace {

using Bytes = std::vector<uint8_t>;

void
Put16(uint8_t *p, uint16_t v)
{
	p[0] = static_cast<uint8_t>(v >> 8);
	p[1] = static_cast<uint8_t>(v);
}

void
Put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = static_cast<uint8_t>(v >> (24 - 8 * i));
}

// IPv4 + TCP (SYN: WS 7), checksums not needed by the code measured.
Bytes
Tcp(uint32_t src, uint32_t dst, uint16_t sp, uint16_t dp, uint32_t seq, uint32_t ack,
    uint8_t flags, size_t pay)
{
	bool syn = flags & SGW_XCPA_TH_SYN;
	size_t th = syn ? 24 : 20;
	Bytes b(20 + th + pay, 0);
	b[0] = 0x45;
	Put16(&b[2], static_cast<uint16_t>(b.size()));
	b[6] = 0x40;
	b[8] = 64;
	b[9] = 6;
	Put32(&b[12], src);
	Put32(&b[16], dst);
	Put16(&b[20], sp);
	Put16(&b[22], dp);
	Put32(&b[24], seq);
	Put32(&b[28], ack);
	b[32] = static_cast<uint8_t>((th / 4) << 4);
	b[33] = flags;
	Put16(&b[34], 4000);
	if (syn) {
		const uint8_t o[4] = {1, 3, 3, 7};
		memcpy(&b[40], o, 4);
	}
	return b;
}

Bytes
WithXcp(Bytes b, int32_t fb, int32_t rev, bool reverse)
{
	sgw_xcpa_pkt pk{};
	sgw_xcpa_locate(b.data(), b.size(), 254, &pk);
	sgw_xcp_fields f{};
	f.rtt_us = 600000;
	f.cwnd = 100000;
	f.feedback = fb;
	f.reverse = rev;
	f.flags = reverse ? SGW_XCPW_F_REVERSE : 0;
	b.resize(b.size() + 20);
	b.resize(sgw_xcpa_insert(b.data(), b.size(), &pk, 254, &f));
	return b;
}

struct Agents {
	sgw_xcpa snd{}, rcv{};
	std::vector<sgw_xcpa_flow> ms, mr;
	std::vector<Bytes> data, xack, xdata;
	uint64_t now = 1;
	explicit Agents(uint32_t flows)
	{
		sgw_xcpa_conf c;
		sgw_xcpa_conf_default(&c);
		ms.resize(flows * 2 + 8);
		mr.resize(flows * 2 + 8);
		if (sgw_xcpa_init(&snd, &c, ms.data(), ms.size() * sizeof(ms[0])) < 0)
			abort();
		c.role = SGW_XCPA_RECEIVER;
		if (sgw_xcpa_init(&rcv, &c, mr.data(), mr.size() * sizeof(mr[0])) < 0)
			abort();
		for (uint32_t i = 0; i < flows; i++) {
			uint16_t sp = static_cast<uint16_t>(10000 + i);
			Bytes syn = Tcp(0x0a000001, 0x0a000002, sp, 80, 0, 0, SGW_XCPA_TH_SYN, 0);
			size_t len = syn.size();
			syn.resize(len + 20);
			sgw_xcpa_out(&snd, syn.data(), &len, syn.size(), now);
			Bytes sa = WithXcp(Tcp(0x0a000002, 0x0a000001, 80, sp, 0, 1,
					       SGW_XCPA_TH_SYN | SGW_XCPA_TH_ACK, 0), 0, 0, true);
			len = sa.size();
			sgw_xcpa_in(&snd, sa.data(), &len, now);
			data.push_back(Tcp(0x0a000001, 0x0a000002, sp, 80, 1, 1, SGW_XCPA_TH_ACK,
					   1400));
			xack.push_back(WithXcp(Tcp(0x0a000002, 0x0a000001, 80, sp, 1, 1,
						   SGW_XCPA_TH_ACK, 0), 0, 10, true));
			xdata.push_back(WithXcp(data.back(), 50, 0, false));
		}
	}
};

void
SenderOut(benchmark::State &st)
{
	Agents a(static_cast<uint32_t>(st.range(0)));
	uint8_t buf[2048];
	size_t i = 0;
	for (auto _ : st) {
		const Bytes &p = a.data[i];
		memcpy(buf, p.data(), p.size());
		size_t len = p.size();
		benchmark::DoNotOptimize(sgw_xcpa_out(&a.snd, buf, &len, sizeof(buf), a.now++));
		if (++i == a.data.size())
			i = 0;
	}
	st.SetItemsProcessed(st.iterations());
}
BENCHMARK(SenderOut)->Arg(1)->Arg(1024);

void
SenderIn(benchmark::State &st)
{
	Agents a(static_cast<uint32_t>(st.range(0)));
	uint8_t buf[2048];
	size_t i = 0;
	for (auto _ : st) {
		const Bytes &p = a.xack[i];
		memcpy(buf, p.data(), p.size());
		size_t len = p.size();
		benchmark::DoNotOptimize(sgw_xcpa_in(&a.snd, buf, &len, a.now++));
		if (++i == a.xack.size())
			i = 0;
	}
	st.SetItemsProcessed(st.iterations());
}
BENCHMARK(SenderIn)->Arg(1)->Arg(1024);

void
ReceiverIn(benchmark::State &st)
{
	Agents a(1);
	uint8_t buf[2048];
	for (auto _ : st) {
		const Bytes &p = a.xdata[0];
		memcpy(buf, p.data(), p.size());
		size_t len = p.size();
		benchmark::DoNotOptimize(sgw_xcpa_in(&a.rcv, buf, &len, a.now++));
	}
	st.SetItemsProcessed(st.iterations());
}
BENCHMARK(ReceiverIn);

void
Clamp(benchmark::State &st)
{
	Bytes a = Tcp(1, 2, 80, 1000, 1, 1, SGW_XCPA_TH_ACK, 0);
	sgw_xcpa_edge e{};
	uint32_t ack = 1;
	for (auto _ : st) {
		Put32(&a[28], ack);
		Put16(&a[34], 4000);
		ack += 1000;
		benchmark::DoNotOptimize(
			sgw_xcpa_clamp_window(&a[20], a.size() - 20, 7, 50000, &e, nullptr));
	}
	st.SetItemsProcessed(st.iterations());
}
BENCHMARK(Clamp);

struct Legacy {
	sgw_xcpl l{};
	std::vector<sgw_xcpa_flow> mem;
	sgw_xcp_params par{};
	Bytes data, ack;
	Legacy()
	{
		sgw_xcpl_conf c;
		sgw_xcpl_conf_default(&c);
		mem.resize(64);
		sgw_xcpl_init(&l, &c, mem.data(), mem.size() * sizeof(mem[0]));
		par.xi_p = 1e-9;
		par.xi_n = 1e-9;
		par.rtt_max_us = 10000000;
		int32_t fb;
		Bytes syn = Tcp(0x0a000001, 0x0a000002, 1000, 80, 0, 0, SGW_XCPA_TH_SYN, 0);
		sgw_xcpl_data(&l, nullptr, &par, syn.data(), syn.size(), 64, 1, &fb);
		Bytes sa = Tcp(0x0a000002, 0x0a000001, 80, 1000, 0, 1,
			       SGW_XCPA_TH_SYN | SGW_XCPA_TH_ACK, 0);
		sgw_xcpl_ack(&l, sa.data(), sa.size(), 500000000);
		data = Tcp(0x0a000001, 0x0a000002, 1000, 80, 1, 1, SGW_XCPA_TH_ACK, 1400);
		ack = Tcp(0x0a000002, 0x0a000001, 80, 1000, 1, 1, SGW_XCPA_TH_ACK, 0);
	}
};

void
LegacyData(benchmark::State &st)
{
	Legacy g;
	uint32_t seq = 1;
	uint64_t now = 600000000;
	int32_t fb;
	for (auto _ : st) {
		Put32(&g.data[24], seq);
		seq += 1400;
		benchmark::DoNotOptimize(sgw_xcpl_data(&g.l, nullptr, &g.par, g.data.data(),
						       g.data.size(), 1440, now++, &fb));
	}
	st.SetItemsProcessed(st.iterations());
}
BENCHMARK(LegacyData);

void
LegacyAck(benchmark::State &st)
{
	Legacy g;
	uint32_t ack = 1;
	uint64_t now = 600000000;
	for (auto _ : st) {
		Put32(&g.ack[28], ack);
		Put16(&g.ack[34], 4000);
		ack += 100;
		benchmark::DoNotOptimize(sgw_xcpl_ack(&g.l, g.ack.data(), g.ack.size(), now++));
	}
	st.SetItemsProcessed(st.iterations());
}
BENCHMARK(LegacyAck);

}  // namespace

BENCHMARK_MAIN();
