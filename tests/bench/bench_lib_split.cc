// SPDX-License-Identifier: BSD-3-Clause
// Google Benchmarks for lib/sgw_split.c: the cost of one split half per
// packet and per connection, payload copies into the caller's buffers not
// included (the io/sat callbacks only count).
//  - LanToSat:  an in-order 1448-byte segment from the local peer into the
//               leg (delayed ACK every 2nd) and out as DATA messages; a
//               CREDIT from the far half every 64 segments.
//  - SatToLan:  a 1395-byte DATA message from the far half into the tx relay
//               and out as a TCP segment; the local peer ACKs every 2nd.
//  - OpenAbort: one connection's life in the lib: spoofed open (SYN in,
//               SYN-ACK and OPEN out), the client's ACK, OPEN_OK, a RST from
//               the far half (RST to the client, CLOSED): connections per second per
//               core for the half alone.
// Reproduce: build-h/tests/bench/bench_lib_split --benchmark_repetitions=3
//            --benchmark_report_aggregates_only=true

#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "sgw_split.h"
#include "sgw_stream.h"
#include "sgw_tcp.h"

namespace {

constexpr uint32_t kRing = 1u << 20;

struct Bed {
	sgw_tcp_stack st;
	sgw_split_env env;
	std::unique_ptr<sgw_split> sp{new sgw_split()};
	std::vector<uint8_t> rx{std::vector<uint8_t>(kRing)}, tx{std::vector<uint8_t>(kRing)};
	uint64_t now = 1000000000ull;
	uint32_t last_seq = 0, last_len = 0, leg_iss = 0;
	uint8_t last_flags = 0;
	uint64_t msgs = 0, segs = 0;
	sgw_split_bufs b;

	Bed()
	{
		static const sgw_split_io_ops io = {IoTx};
		static const sgw_split_sat_ops sat = {CanSend, Send};
		sgw_tcp_conf tc;
		sgw_tcp_conf_default(&tc);
		sgw_split_conf sc;
		sgw_split_conf_default(&sc);
		sgw_tcp_stack_init(&st, &tc, &sgw_split_tcp_ops, &env);
		sgw_split_env_init(&env, &sc, &st, &io, &sat, this);
		b = {rx.data(), kRing, kRing, tx.data(), kRing, kRing};
	}

	static void IoTx(void *ctx, sgw_split *, const uint8_t *hdr, uint32_t hlen,
			 const sgw_split_iov *d, unsigned n)
	{
		Bed *t = static_cast<Bed *>(ctx);
		t->last_seq = (uint32_t)hdr[4] << 24 | (uint32_t)hdr[5] << 16 |
			      (uint32_t)hdr[6] << 8 | hdr[7];
		t->last_flags = hdr[13];
		t->last_len = 0;
		for (unsigned i = 0; i < n; i++)
			t->last_len += d[i].len;
		if (t->last_flags & SGW_TCP_F_SYN)
			t->leg_iss = t->last_seq;
		t->segs++;
		(void)hlen;
	}
	static uint32_t CanSend(void *, const sgw_split *, uint64_t) { return 1u << 20; }
	static int Send(void *ctx, sgw_split *, uint16_t, const sgw_split_iov *, unsigned)
	{
		static_cast<Bed *>(ctx)->msgs++;
		return 0;
	}

	// Spoofed open for a client SYN (seq 1000) and the client's ACK: established.
	void Open()
	{
		sgw_split_addr a;
		memset(&a, 0, sizeof(a));
		a.sport = 40001;
		a.dport = 80;
		sgw_tcp_seg s;
		memset(&s, 0, sizeof(s));
		s.sport = 40001;
		s.dport = 80;
		s.seq = 1000;
		s.flags = SGW_TCP_F_SYN;
		s.win = 65535;
		s.opts = SGW_TCP_O_MSS | SGW_TCP_O_WS;
		s.mss = 1460;
		s.wscale = 7;
		sgw_split_out o;
		sgw_split_open(&env, sp.get(), now, &a, &s, SGW_SPLIT_SPOOFED, 7, 5000, &b,
			       nullptr, &o);
		memset(&s, 0, sizeof(s));
		s.sport = 40001;
		s.dport = 80;
		s.seq = 1001;
		s.ack = leg_iss + 1;
		s.flags = SGW_TCP_F_ACK;
		s.win = 65535;
		sgw_split_tcp_input(&env, sp.get(), now, &s, &o);
		// the far half's OPEN_OK: the stream is up
		sgw_stream_msg m;
		memset(&m, 0, sizeof(m));
		m.type = SGW_STREAM_OPEN_OK;
		m.off = kRing;
		uint8_t ok[SGW_STREAM_OPEN_OK_LEN];
		sgw_stream_encode(ok, sizeof(ok), &m);
		sgw_split_stream_input(&env, sp.get(), now, ok, sizeof(ok), &o);
	}

	void StreamIn(const uint8_t *m, size_t n)
	{
		sgw_split_out o;
		sgw_split_stream_input(&env, sp.get(), now, m, n, &o);
	}
};

void
LanToSat(benchmark::State &state)
{
	Bed t;
	t.Open();
	std::vector<uint8_t> payload(1448, 0x5a);
	sgw_tcp_seg s;
	memset(&s, 0, sizeof(s));
	s.sport = 40001;
	s.dport = 80;
	s.flags = SGW_TCP_F_ACK;
	s.win = 65535;
	s.ack = t.leg_iss + 1;
	s.data = payload.data();
	s.len = 1448;
	uint32_t seq = 1001;
	uint64_t n = 0;
	uint8_t credit[5];
	for (auto _ : state) {
		s.seq = seq;
		seq += 1448;
		t.now += 1000;
		sgw_split_out o;
		sgw_split_tcp_input(&t.env, t.sp.get(), t.now, &s, &o);
		if ((++n & 63) == 0) {
			sgw_stream_msg m;
			memset(&m, 0, sizeof(m));
			m.type = SGW_STREAM_CREDIT;
			m.off = t.sp->rx.head + (1u << 20);
			sgw_stream_encode(credit, sizeof(credit), &m);
			t.StreamIn(credit, sizeof(credit));
		}
	}
	if (t.sp->state != SGW_SPLIT_S_OPEN)
		state.SkipWithError("stream not open");
	state.SetItemsProcessed(state.iterations());
	state.counters["msgs_per_seg"] = (double)t.msgs / (double)state.iterations();
}
BENCHMARK(LanToSat);

void
SatToLan(benchmark::State &state)
{
	Bed t;
	t.Open();
	std::vector<uint8_t> msg(5 + 1395, 0x33);
	uint64_t off = 0, n = 0;
	sgw_tcp_seg ack;
	memset(&ack, 0, sizeof(ack));
	ack.sport = 40001;
	ack.dport = 80;
	ack.seq = 1001;
	ack.flags = SGW_TCP_F_ACK;
	ack.win = 65535;
	for (auto _ : state) {
		sgw_stream_data_hdr(msg.data(), (uint32_t)off);
		off += 1395;
		t.now += 1000;
		t.StreamIn(msg.data(), msg.size());
		if ((++n & 1) == 0) {
			ack.ack = t.sp->tcp.snd_max;
			sgw_split_out o;
			sgw_split_tcp_input(&t.env, t.sp.get(), t.now, &ack, &o);
		}
	}
	if (t.sp->state != SGW_SPLIT_S_OPEN)
		state.SkipWithError("stream not open");
	state.SetItemsProcessed(state.iterations());
	state.counters["segs_per_msg"] = (double)t.segs / (double)state.iterations();
}
BENCHMARK(SatToLan);

void
OpenAbort(benchmark::State &state)
{
	Bed t;
	const uint8_t rst[2] = {SGW_STREAM_RST, SGW_STREAM_RST_PEER};
	uint64_t closed = 0;
	for (auto _ : state) {
		t.now += 1000;
		t.Open();
		sgw_split_out o;
		sgw_split_stream_input(&t.env, t.sp.get(), t.now, rst, sizeof(rst), &o);
		sgw_split_poll(&t.env, t.sp.get(), t.now, &o);
		closed += t.sp->state == SGW_SPLIT_S_CLOSED;
	}
	if (closed != (uint64_t)state.iterations())
		state.SkipWithError("a connection did not close");
	state.SetItemsProcessed(state.iterations());
}
BENCHMARK(OpenAbort);

}  // namespace

BENCHMARK_MAIN();
