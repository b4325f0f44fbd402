// SPDX-License-Identifier: BSD-3-Clause
// Issue 10's "Scale" figures: what one core does per new split connection in
// lib/ (tests/bench/bench_lib_split.cc has the per-packet costs). Virtual
// time, real segments (every one built by its sender and parsed by its
// receiver), timers on a real lib/sgw_timer_wheel (tick 100 us) that expires
// them, connection slots cycled through a ring so that slot memory is not
// always hot and TIME-WAIT runs out on the wheel before a slot is reused.
//  - Baseline_ParseSyn: sgw_tcp_seg_parse of a SYN with MSS, WS, SACK-perm,
//    TS (the unit the other two are quoted against, measured in the same run).
//  - TcpLife/N: one connection's whole life between two sgw_tcp endpoints
//    (client active open, server passive): SYN, SYN-ACK, ACK, client FIN,
//    ACK, server FIN, ACK; the client's TIME-WAIT expires on the wheel. N
//    slots cycled, 1 ms of virtual time per connection, 2 MSL = N/2 ms.
//  - SplitLife/N: one split connection through both halves, end-to-end
//    handshake: the client's SYN to the terminal half (opener: OPEN), the hub
//    half (acceptor) connects to the server, OPEN_OK back, the held SYN
//    replayed, SYN-ACK to the client, its ACK; then the client's FIN, FIN
//    across the stream, the hub's FIN to the server, the server's FIN back
//    the same way, every half CLOSED (the hub leg's TIME-WAIT on the wheel).
//    Stream messages are encoded by one half and decoded by the other by
//    hand (no satlink). Relays at the configured minimum (4096 bytes per
//    direction, open_credit 4096). Client and server are sgw_tcp endpoints
//    too: their share is in the time (callgrind separates it, see
//    docs/tcp-split.md "Scale").
//  - SplitLifeSpoofed/N: the same with the spoofed handshake.
//  - StageForwardLife / StageSplitLife / StageSplitLifeSpoofed: the same
//    life through the dataplane stage (hub + terminal, satlink), the split
//    one against the same connection forwarded untouched (header of the
//    stage section below).
// items_per_second: connections (SplitLife: one split connection = both
// halves + both model peers on this one core; Stage*: both dataplanes).
// Reproduce: build-h/tests/bench/bench_dp_split --benchmark_repetitions=5
//            --benchmark_report_aggregates_only=true
// Instruction counts per connection (SGW_BENCH_ITERS=n: exactly n iterations):
//   SGW_BENCH_ITERS=20000 valgrind --tool=callgrind build-h/tests/bench/bench_dp_split
//       --benchmark_filter='^SplitLife/64/'; callgrind_annotate --inclusive=yes:
//       (Life + Expire) / 20000
//   SGW_BENCH_ITERS=3000 valgrind --tool=callgrind --collect-atstart=no
//       '--toggle-collect=*StageRig::Life*' build-h/tests/bench/bench_dp_split
//       --benchmark_filter='^StageSplitLife/': totals / 3000

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

#include <unistd.h>

#include <rte_eal.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_memory.h>
#include <rte_ring.h>

#include "policy_yaml.h"
#include "satlink.h"
#include "sgw_dp.h"
/* lib/sgw_parse.h and lib/sgw_tcp.h both define it (4 and 4u). */
#undef SGW_TCP_MAX_SACK
#include "sgw_split.h"
#include "split.h"
#include "sgw_stream.h"
#include "sgw_tcp.h"
#include "sgw_tev.h"
#include "sgw_timer_wheel.h"

namespace {

constexpr uint64_t kMs = 1000000ull;
constexpr uint64_t kTick = 100000ull;       // the dataplane's default wheel tick
constexpr uint32_t kRelay = 4096;           // relay_connection_bytes' minimum
constexpr uint16_t kServerPort = 80;

const uint8_t kClientIp[4] = {10, 20, 1, 5};
const uint8_t kServerIp[4] = {198, 51, 100, 10};

// Timer owners (the stage byte of the wheel's user value).
enum : uint8_t { kOwnClient = 1, kOwnServer, kOwnTerm, kOwnHub };

// One packet or message in flight: small fixed buffers, no allocation.
struct Item {
	uint32_t slot;
	uint32_t len;
	uint8_t b[128];
};

// A FIFO of Items that never shrinks (no allocation after warm-up).
struct Queue {
	std::vector<Item> v;
	size_t head = 0, tail = 0;
	Queue() : v(64) {}
	Item &push()
	{
		if (tail == v.size())
			v.resize(v.size() * 2);
		return v[tail++];
	}
	bool empty() const { return head == tail; }
	Item &pop() { return v[head++]; }
	void reset() { head = tail = 0; }
};

// Apply a TCP endpoint's timer requests to the wheel.
template <typename Out>
void
ApplyTimers(sgw_tw *tw, sgw_tw_handle_t *h, unsigned n, const Out &o, uint8_t owner,
	    uint32_t obj, uint64_t now)
{
	for (unsigned id = 0; id < n; id++) {
		if (!(o.timer_set & (1u << id)))
			continue;
		if (o.timer_at[id] == SGW_TCP_NEVER)
			sgw_tev_stop(tw, &h[id]);
		else
			sgw_tev_arm(tw, &h[id], owner, uint8_t(id), obj,
				    o.timer_at[id] > now ? o.timer_at[id] - now : 0);
	}
}

// ------------------------------------------------------------ baseline

void
Baseline_ParseSyn(benchmark::State &state)
{
	sgw_tcp_seg s{};
	s.sport = 40000;
	s.dport = kServerPort;
	s.seq = 12345;
	s.flags = SGW_TCP_F_SYN;
	s.win = 64240;
	s.opts = SGW_TCP_O_MSS | SGW_TCP_O_WS | SGW_TCP_O_SACK_PERM | SGW_TCP_O_TS;
	s.mss = 1460;
	s.wscale = 7;
	s.tsval = 1000;
	uint8_t hdr[60];
	uint32_t hl = sgw_tcp_seg_build(hdr, sizeof(hdr), &s);
	sgw_tcp_seg p;
	for (auto _ : state) {
		benchmark::DoNotOptimize(hdr);
		int rc = sgw_tcp_seg_parse(hdr, hl, &p, nullptr);
		benchmark::DoNotOptimize(rc);
		benchmark::DoNotOptimize(p);
	}
	state.SetItemsProcessed(state.iterations());
}

// ------------------------------------------------------------ sgw_tcp endpoints

// One endpoint stack of the bench (client side or server side): its tx
// callback queues the segment's header toward the other side.
struct Ep {
	sgw_tcp_stack st;
	Queue *out = nullptr;
	uint64_t segs = 0;
};

// The slot of a connection: the conn is the first member of a struct whose
// slot index is in c->user.
void
EpTx(void *ctx, sgw_tcp_conn *c, const uint8_t *hdr, uint32_t hlen, uint32_t, uint32_t len)
{
	Ep *e = static_cast<Ep *>(ctx);
	Item &it = e->out->push();
	it.slot = c->user;
	it.len = hlen;   // no payload in these lives
	memcpy(it.b, hdr, hlen);
	e->segs++;
	(void)len;
}
void
EpRxData(void *, sgw_tcp_conn *, uint32_t, const uint8_t *, uint32_t)
{
}
void
EpRxAdvance(void *, sgw_tcp_conn *, uint32_t)
{
}
uint32_t
EpRxSpace(void *, sgw_tcp_conn *)
{
	return 1u << 20;
}
void
EpTxAcked(void *, sgw_tcp_conn *, uint32_t)
{
}
const sgw_tcp_ops kEpOps = {EpTx, EpRxData, EpRxAdvance, EpRxSpace, EpTxAcked};

void
EpInit(Ep &e, Queue *out, uint64_t msl_ns)
{
	sgw_tcp_conf conf;
	sgw_tcp_conf_default(&conf);
	conf.msl_ns = msl_ns;
	sgw_tcp_stack_init(&e.st, &conf, &kEpOps, &e);
	e.out = out;
}

struct alignas(64) TcpPair {
	sgw_tcp_conn c;  // client
	sgw_tcp_conn s;  // server
};

// The model peers' input, kept out of line so that callgrind's inclusive
// counts separate it from the halves'.
__attribute__((noinline)) void
PeerInput(Ep &e, sgw_tcp_conn *c, uint64_t now, const Item &it, sgw_tcp_out *o)
{
	sgw_tcp_seg s;
	sgw_tcp_out_reset(o);
	if (sgw_tcp_seg_parse(it.b, it.len, &s, e.st.parse_ctr) != SGW_TCP_PR_OK)
		return;
	sgw_tcp_input(&e.st, c, now, &s, o);
}

struct TcpBed {
	Queue c2s, s2c;
	Ep cl, sv;
	sgw_tw *tw;
	std::unique_ptr<TcpPair[]> slot;
	uint32_t n;
	uint64_t now = 1000 * kMs;
	uint64_t bad = 0;

	explicit TcpBed(uint32_t nslots) : slot(new TcpPair[nslots]), n(nslots)
	{
		// TIME-WAIT (2 MSL) = half the time a slot takes to come round again
		uint64_t msl = uint64_t(nslots) * kMs / 4;
		EpInit(cl, &c2s, msl);
		EpInit(sv, &s2c, msl);
		tw = sgw_tw_create(8 * nslots + 64, kTick, now);
		for (uint32_t i = 0; i < nslots; i++) {
			memset(&slot[i], 0, sizeof(slot[i]));
			for (auto &h : slot[i].c.tw)
				h = SGW_TW_INVALID;
			for (auto &h : slot[i].s.tw)
				h = SGW_TW_INVALID;
		}
	}
	~TcpBed() { sgw_tw_destroy(tw); }

	__attribute__((noinline)) void Expire()
	{
		uint64_t ev[64];
		uint32_t k;
		while ((k = sgw_tw_expire(tw, now, ev, 64)) > 0) {
			for (uint32_t i = 0; i < k; i++) {
				uint32_t obj = sgw_tev_obj(ev[i]);
				unsigned id = sgw_tev_timer(ev[i]);
				bool client = sgw_tev_stage(ev[i]) == kOwnClient;
				sgw_tcp_conn *c = client ? &slot[obj].c : &slot[obj].s;
				Ep &e = client ? cl : sv;
				sgw_tev_fired(&c->tw[id]);
				sgw_tcp_out o;
				sgw_tcp_out_reset(&o);
				sgw_tcp_timer(&e.st, c, now, id, &o);
				ApplyTimers(tw, c->tw, SGW_TCP_T__COUNT, o,
					    client ? kOwnClient : kOwnServer, obj, now);
			}
		}
	}

	void Pump()
	{
		sgw_tcp_out o;
		while (!c2s.empty() || !s2c.empty()) {
			while (!c2s.empty()) {
				Item &it = c2s.pop();
				TcpPair &p = slot[it.slot];
				if (p.s.state == SGW_TCP_CLOSED) {
					// the server's listener: a SYN opens it
					sgw_tcp_conn_init(&sv.st, &p.s, 7000000u + it.slot,
							  kServerPort,
							  uint16_t(it.b[0] << 8 | it.b[1]));
					p.s.user = it.slot;
					sgw_tcp_listen(&sv.st, &p.s);
				}
				PeerInput(sv, &p.s, now, it, &o);
				ApplyTimers(tw, p.s.tw, SGW_TCP_T__COUNT, o, kOwnServer, it.slot,
					    now);
				if ((o.events & SGW_TCP_EV_PEER_FIN)) {
					sgw_tcp_out_reset(&o);
					sgw_tcp_shutdown(&sv.st, &p.s, now, &o);
					ApplyTimers(tw, p.s.tw, SGW_TCP_T__COUNT, o, kOwnServer,
						    it.slot, now);
				}
			}
			while (!s2c.empty()) {
				Item &it = s2c.pop();
				TcpPair &p = slot[it.slot];
				PeerInput(cl, &p.c, now, it, &o);
				ApplyTimers(tw, p.c.tw, SGW_TCP_T__COUNT, o, kOwnClient, it.slot,
					    now);
			}
		}
		c2s.reset();
		s2c.reset();
	}

	// One connection's life in slot i.
	__attribute__((noinline)) void Life(uint32_t i)
	{
		TcpPair &p = slot[i];
		if (p.c.state != SGW_TCP_CLOSED || p.s.state != SGW_TCP_CLOSED) {
			bad++;
			return;
		}
		sgw_tcp_out o;
		sgw_tcp_conn_init(&cl.st, &p.c, 1000000u + i * 7919u,
				  uint16_t(1024 + (i & 0x7fff)), kServerPort);
		p.c.user = i;
		sgw_tcp_out_reset(&o);
		sgw_tcp_connect(&cl.st, &p.c, now, &o);
		ApplyTimers(tw, p.c.tw, SGW_TCP_T__COUNT, o, kOwnClient, i, now);
		Pump();
		if (p.c.state != SGW_TCP_ESTABLISHED || p.s.state != SGW_TCP_ESTABLISHED)
			bad++;
		sgw_tcp_out_reset(&o);
		sgw_tcp_shutdown(&cl.st, &p.c, now, &o);
		ApplyTimers(tw, p.c.tw, SGW_TCP_T__COUNT, o, kOwnClient, i, now);
		Pump();
		if (p.c.state != SGW_TCP_TIME_WAIT || p.s.state != SGW_TCP_CLOSED)
			bad++;
	}
};

void
TcpLife(benchmark::State &state)
{
	TcpBed b(uint32_t(state.range(0)));
	uint32_t i = 0;
	uint64_t conns = 0;
	for (auto _ : state) {
		b.now += kMs;
		b.Expire();
		b.Life(i);
		i = i + 1 == b.n ? 0 : i + 1;
		conns++;
	}
	if (b.bad != 0)
		state.SkipWithError("a connection did not go through its states");
	state.SetItemsProcessed(state.iterations());
	state.counters["segs_per_conn"] =
		double(b.cl.segs + b.sv.segs) / double(conns ? conns : 1);
}

// ------------------------------------------------------------ split halves

struct SplitSlot {
	sgw_split term;          // opener (terminal)
	sgw_split hub;           // acceptor (hub)
	TcpPair peers;           // client (c) and server (s)
};

struct SplitBed;

// One gateway (the terminal's or the hub's worker): its TCP stack and env.
struct Gw {
	sgw_tcp_stack st;
	sgw_split_env env;
	SplitBed *bed = nullptr;
	bool terminal = false;
	uint64_t msgs = 0, segs = 0;
};

struct SplitBed {
	Queue c2t, t2c, t2h, h2t, h2s, s2h;
	Ep cl, sv;
	Gw term, hub;
	sgw_tw *tw;
	std::unique_ptr<SplitSlot[]> slot;
	std::vector<uint8_t> relay;   // 4 relays per slot
	uint32_t n;
	uint8_t mode;
	uint64_t now = 1000 * kMs;
	uint64_t bad = 0, closed_t = 0, closed_h = 0;

	// The slot of a half (sp->user is cleared by open/accept before their first segment).
	uint32_t SlotOf(const sgw_split *sp, bool terminal) const
	{
		const uint8_t *base = reinterpret_cast<const uint8_t *>(
			terminal ? &slot[0].term : &slot[0].hub);
		return uint32_t(size_t(reinterpret_cast<const uint8_t *>(sp) - base) /
				sizeof(SplitSlot));
	}

	static void GwTcpTx(void *ctx, sgw_split *sp, const uint8_t *hdr, uint32_t hlen,
			    const sgw_split_iov *, unsigned)
	{
		Gw *g = static_cast<Gw *>(ctx);
		Item &it = (g->terminal ? g->bed->t2c : g->bed->h2s).push();
		it.slot = g->bed->SlotOf(sp, g->terminal);
		it.len = hlen;
		memcpy(it.b, hdr, hlen);
		g->segs++;
	}
	static uint32_t GwCanSend(void *, const sgw_split *, uint64_t) { return 1u << 20; }
	static int GwSend(void *ctx, sgw_split *sp, uint16_t channel, const sgw_split_iov *iov,
			  unsigned n)
	{
		Gw *g = static_cast<Gw *>(ctx);
		Item &it = (g->terminal ? g->bed->t2h : g->bed->h2t).push();
		it.slot = sp != nullptr ? g->bed->SlotOf(sp, g->terminal) : uint32_t(channel - 1u);
		it.len = 0;
		for (unsigned k = 0; k < n; k++) {
			if (it.len + iov[k].len > sizeof(it.b))
				return -1;
			memcpy(it.b + it.len, iov[k].p, iov[k].len);
			it.len += iov[k].len;
		}
		g->msgs++;
		return 0;
	}

	void GwInit(Gw &g, bool terminal, uint64_t msl)
	{
		static const sgw_split_io_ops io = {GwTcpTx};
		static const sgw_split_sat_ops sat = {GwCanSend, GwSend};
		sgw_tcp_conf tc;
		sgw_tcp_conf_default(&tc);
		tc.rcv_buf = kRelay;
		tc.msl_ns = msl;
		sgw_split_conf sc;
		sgw_split_conf_default(&sc);
		sc.open_credit = kRelay;
		g.bed = this;
		g.terminal = terminal;
		sgw_tcp_stack_init(&g.st, &tc, &sgw_split_tcp_ops, &g.env);
		if (sgw_split_env_init(&g.env, &sc, &g.st, &io, &sat, &g) != 0)
			bad++;
	}

	SplitBed(uint32_t nslots, uint8_t m)
		: slot(new SplitSlot[nslots]), relay(size_t(nslots) * 4u * kRelay), n(nslots),
		  mode(m)
	{
		uint64_t msl = uint64_t(nslots) * kMs / 4;
		EpInit(cl, &c2t, msl);
		EpInit(sv, &s2h, msl);
		GwInit(term, true, msl);
		GwInit(hub, false, msl);
		tw = sgw_tw_create(16 * nslots + 64, kTick, now);
		for (uint32_t i = 0; i < nslots; i++) {
			SplitSlot &s = slot[i];
			memset(&s, 0, sizeof(s));
			for (auto *c : {&s.term.tcp, &s.hub.tcp, &s.peers.c, &s.peers.s})
				for (auto &h : c->tw)
					h = SGW_TW_INVALID;
			for (auto *sp : {&s.term, &s.hub})
				for (auto &h : sp->tw_split)
					h = SGW_TW_INVALID;
		}
	}
	~SplitBed() { sgw_tw_destroy(tw); }

	sgw_split_bufs Bufs(uint32_t i, bool terminal)
	{
		uint8_t *m = relay.data() + (size_t(i) * 4u + (terminal ? 0u : 2u)) * kRelay;
		return {m, kRelay, kRelay, m + kRelay, kRelay, kRelay};
	}

	// Carry out what a half's call asked: timers, then its end.
	void HalfOut(Gw &g, sgw_split *sp, uint32_t i, const sgw_split_out &o)
	{
		uint8_t own = g.terminal ? kOwnTerm : kOwnHub;
		for (unsigned id = 0; id < SGW_SPLIT_T__COUNT; id++) {
			if (!(o.timer_set & (1u << id)))
				continue;
			sgw_tw_handle_t *h = id < SGW_TCP_T__COUNT ? &sp->tcp.tw[id] :
					     &sp->tw_split[id - SGW_TCP_T__COUNT];
			if (o.timer_at[id] == SGW_TCP_NEVER)
				sgw_tev_stop(tw, h);
			else
				sgw_tev_arm(tw, h, own, uint8_t(id), i,
					    o.timer_at[id] > now ? o.timer_at[id] - now : 0);
		}
		if (o.events & SGW_SPLIT_EV_CLOSED) {
			sgw_tev_stop_all(tw, sp->tcp.tw, SGW_TCP_T__COUNT);
			sgw_tev_stop_all(tw, sp->tw_split, 2);
			sp->state = SGW_SPLIT_S_FREE;
			(g.terminal ? closed_t : closed_h)++;
		}
	}

	__attribute__((noinline)) void TermSegment(SplitSlot &s, uint32_t i, const Item &it)
	{
		sgw_tcp_seg seg;
		sgw_split_out o;
		if (sgw_tcp_seg_parse(it.b, it.len, &seg, term.st.parse_ctr) != SGW_TCP_PR_OK)
			return;
		if (s.term.state == SGW_SPLIT_S_FREE) {
			// what the stage does for a SYN of a split rule
			sgw_split_addr a;
			memset(&a, 0, sizeof(a));
			memcpy(a.saddr, kClientIp, 4);
			memcpy(a.daddr, kServerIp, 4);
			a.sport = seg.sport;
			a.dport = seg.dport;
			sgw_split_bufs b = Bufs(i, true);
			s.term.user = i;
			if (sgw_split_open(&term.env, &s.term, now, &a, &seg, mode,
					   uint16_t(i + 1), 3000000u + i, &b, nullptr, &o) != 0) {
				bad++;
				return;
			}
			s.term.user = i;
		} else {
			sgw_split_tcp_input(&term.env, &s.term, now, &seg, &o);
		}
		HalfOut(term, &s.term, i, o);
	}

	__attribute__((noinline)) void HubMessage(SplitSlot &s, uint32_t i, const Item &it)
	{
		sgw_split_out o;
		if (s.hub.state == SGW_SPLIT_S_FREE) {
			sgw_stream_msg m;
			if (sgw_stream_decode(it.b, it.len, &m, hub.env.msg_err) !=
				    SGW_STREAM_E_OK ||
			    m.type != SGW_STREAM_OPEN) {
				bad++;
				return;
			}
			sgw_split_bufs b = Bufs(i, false);
			s.hub.user = i;
			if (sgw_split_accept(&hub.env, &s.hub, now, &m, uint16_t(i + 1),
					     9000000u + i, &b, nullptr, &o) != 0) {
				bad++;
				return;
			}
			s.hub.user = i;
		} else {
			sgw_split_stream_input(&hub.env, &s.hub, now, it.b, it.len, &o);
		}
		HalfOut(hub, &s.hub, i, o);
	}

	__attribute__((noinline)) void HubSegment(SplitSlot &s, uint32_t i, const Item &it)
	{
		sgw_tcp_seg seg;
		sgw_split_out o;
		if (sgw_tcp_seg_parse(it.b, it.len, &seg, hub.st.parse_ctr) != SGW_TCP_PR_OK)
			return;
		sgw_split_tcp_input(&hub.env, &s.hub, now, &seg, &o);
		HalfOut(hub, &s.hub, i, o);
	}

	__attribute__((noinline)) void TermMessage(SplitSlot &s, uint32_t i, const Item &it)
	{
		sgw_split_out o;
		sgw_split_stream_input(&term.env, &s.term, now, it.b, it.len, &o);
		HalfOut(term, &s.term, i, o);
	}

	__attribute__((noinline)) void Expire()
	{
		uint64_t ev[64];
		uint32_t k;
		while ((k = sgw_tw_expire(tw, now, ev, 64)) > 0) {
			for (uint32_t j = 0; j < k; j++) {
				uint32_t i = sgw_tev_obj(ev[j]);
				unsigned id = sgw_tev_timer(ev[j]);
				uint8_t own = sgw_tev_stage(ev[j]);
				SplitSlot &s = slot[i];
				if (own == kOwnClient || own == kOwnServer) {
					bool client = own == kOwnClient;
					sgw_tcp_conn *c = client ? &s.peers.c : &s.peers.s;
					sgw_tev_fired(&c->tw[id]);
					sgw_tcp_out o;
					sgw_tcp_out_reset(&o);
					sgw_tcp_timer(&(client ? cl : sv).st, c, now, id, &o);
					ApplyTimers(tw, c->tw, SGW_TCP_T__COUNT, o, own, i, now);
					continue;
				}
				bool t = own == kOwnTerm;
				sgw_split *sp = t ? &s.term : &s.hub;
				sgw_tev_fired(id < SGW_TCP_T__COUNT ? &sp->tcp.tw[id] :
					      &sp->tw_split[id - SGW_TCP_T__COUNT]);
				sgw_split_out o;
				sgw_split_timer(&(t ? term : hub).env, sp, now, id, &o);
				HalfOut(t ? term : hub, sp, i, o);
			}
			Pump();
		}
	}

	void Pump()
	{
		sgw_tcp_out o;
		bool more = true;
		while (more) {
			while (!c2t.empty()) {
				Item &it = c2t.pop();
				TermSegment(slot[it.slot], it.slot, it);
			}
			while (!t2h.empty()) {
				Item &it = t2h.pop();
				HubMessage(slot[it.slot], it.slot, it);
			}
			while (!h2s.empty()) {
				Item &it = h2s.pop();
				TcpPair &p = slot[it.slot].peers;
				if (p.s.state == SGW_TCP_CLOSED) {
					sgw_tcp_conn_init(&sv.st, &p.s, 7000000u + it.slot,
							  kServerPort,
							  uint16_t(it.b[0] << 8 | it.b[1]));
					p.s.user = it.slot;
					sgw_tcp_listen(&sv.st, &p.s);
				}
				PeerInput(sv, &p.s, now, it, &o);
				ApplyTimers(tw, p.s.tw, SGW_TCP_T__COUNT, o, kOwnServer, it.slot,
					    now);
				if (o.events & SGW_TCP_EV_PEER_FIN) {
					sgw_tcp_out_reset(&o);
					sgw_tcp_shutdown(&sv.st, &p.s, now, &o);
					ApplyTimers(tw, p.s.tw, SGW_TCP_T__COUNT, o, kOwnServer,
						    it.slot, now);
				}
			}
			while (!s2h.empty()) {
				Item &it = s2h.pop();
				HubSegment(slot[it.slot], it.slot, it);
			}
			while (!h2t.empty()) {
				Item &it = h2t.pop();
				TermMessage(slot[it.slot], it.slot, it);
			}
			while (!t2c.empty()) {
				Item &it = t2c.pop();
				TcpPair &p = slot[it.slot].peers;
				PeerInput(cl, &p.c, now, it, &o);
				ApplyTimers(tw, p.c.tw, SGW_TCP_T__COUNT, o, kOwnClient, it.slot,
					    now);
			}
			more = !c2t.empty() || !t2h.empty() || !h2s.empty() || !s2h.empty() ||
			       !h2t.empty() || !t2c.empty();
		}
		c2t.reset();
		t2c.reset();
		t2h.reset();
		h2t.reset();
		h2s.reset();
		s2h.reset();
	}

	__attribute__((noinline)) void Life(uint32_t i)
	{
		SplitSlot &s = slot[i];
		if (s.term.state != SGW_SPLIT_S_FREE || s.hub.state != SGW_SPLIT_S_FREE ||
		    s.peers.c.state != SGW_TCP_CLOSED || s.peers.s.state != SGW_TCP_CLOSED) {
			bad++;
			return;
		}
		sgw_tcp_out o;
		sgw_tcp_conn_init(&cl.st, &s.peers.c, 1000000u + i * 7919u,
				  uint16_t(1024 + (i & 0x7fff)), kServerPort);
		s.peers.c.user = i;
		sgw_tcp_out_reset(&o);
		sgw_tcp_connect(&cl.st, &s.peers.c, now, &o);
		ApplyTimers(tw, s.peers.c.tw, SGW_TCP_T__COUNT, o, kOwnClient, i, now);
		Pump();
		if (s.peers.c.state != SGW_TCP_ESTABLISHED ||
		    s.peers.s.state != SGW_TCP_ESTABLISHED || s.term.state != SGW_SPLIT_S_OPEN ||
		    s.hub.state != SGW_SPLIT_S_OPEN)
			bad++;
		sgw_tcp_out_reset(&o);
		sgw_tcp_shutdown(&cl.st, &s.peers.c, now, &o);
		ApplyTimers(tw, s.peers.c.tw, SGW_TCP_T__COUNT, o, kOwnClient, i, now);
		Pump();
		// the terminal half is over; the hub's leg closed first toward the
		// server: TIME-WAIT, on the wheel
		if (s.peers.c.state != SGW_TCP_TIME_WAIT || s.peers.s.state != SGW_TCP_CLOSED ||
		    s.term.state != SGW_SPLIT_S_FREE || s.hub.tcp.state != SGW_TCP_TIME_WAIT)
			bad++;
	}
};

void
RunSplit(benchmark::State &state, uint8_t mode)
{
	SplitBed b(uint32_t(state.range(0)), mode);
	uint32_t i = 0;
	uint64_t conns = 0;
	for (auto _ : state) {
		b.now += kMs;
		b.Expire();
		b.Life(i);
		i = i + 1 == b.n ? 0 : i + 1;
		conns++;
	}
	if (b.bad != 0)
		state.SkipWithError("a split connection did not go through its states");
	double n = double(conns ? conns : 1);
	state.SetItemsProcessed(state.iterations());
	state.counters["segs_per_conn"] = double(b.term.segs + b.hub.segs + b.cl.segs +
						  b.sv.segs) / n;
	state.counters["msgs_per_conn"] = double(b.term.msgs + b.hub.msgs) / n;
	// halves freed per connection (the hub's after its leg's TIME-WAIT): ~1 each
	state.counters["term_freed"] = double(b.closed_t) / n;
	state.counters["hub_freed"] = double(b.closed_h) / n;
}

void
SplitLife(benchmark::State &state)
{
	RunSplit(state, SGW_SPLIT_END_TO_END);
}

void
SplitLifeSpoofed(benchmark::State &state)
{
	RunSplit(state, SGW_SPLIT_SPOOFED);
}


// ------------------------------------------------------------ the stage (dataplane/split.c)
//
// StageSplitLife / StageForwardLife: a hub and a terminal dataplane in this
// process (tests/pipeline/test_split_stage.cc's rig: net_ring ports, one
// worker each, sgw_worker_iter with a synthetic TSC), satlink between their
// satellite ports (frames moved at once, rates 400 Gbit/s, status every
// 1 ms), a client on the terminal's LAN and a server on the hub's
// terrestrial side that are sgw_tcp endpoints exchanging real Ethernet/IPv4/
// TCP frames (built into mbufs of the receiving dataplane's pool). One
// iteration is one connection's life as in SplitLife (connect, client FIN,
// server FIN) to port 80 (rule `split`, end to end; StageSplitLifeSpoofed:
// spoofed) or, for the baseline, the same life to port 8080, which the rules
// forward through both dataplanes and satlink untouched (StageForwardLife).
// Virtual time: 20 us per step (each step: frames across, both workers
// once, the peers' frames in and out), and 5 ms more after each connection so
// that the hub's halves in TIME-WAIT (60 s) stay below the pool (16384).
// Timed: everything (the peers and the frame moving too): the ratio of the
// two lives is the figure; callgrind's inclusive count of sgw_worker_iter per
// connection is the dataplanes' share.

struct DpPort {
	std::string name;
	rte_ring *rx = nullptr, *tx = nullptr;
	bool Make(const std::string &base)
	{
		const unsigned f = RING_F_SP_ENQ | RING_F_SC_DEQ;
		rx = rte_ring_create((base + "_rx").c_str(), 16384, 0, f);
		tx = rte_ring_create((base + "_tx").c_str(), 16384, 0, f);
		if (rx == nullptr || tx == nullptr)
			return false;
		int id = rte_eth_from_rings(base.c_str(), &rx, 1, &tx, 1, 0);
		char dev[RTE_ETH_NAME_MAX_LEN];
		if (id < 0 || rte_eth_dev_get_name_by_port(uint16_t(id), dev) != 0)
			return false;
		name = dev;
		return true;
	}
	static void Drain(rte_ring *r)
	{
		void *o = nullptr;
		while (r != nullptr && rte_ring_dequeue(r, &o) == 0)
			rte_pktmbuf_free(static_cast<rte_mbuf *>(o));
	}
};

const char *const kHubSatMac = "02:00:00:00:03:01";
const char *const kTermSatMac = "02:00:00:00:04:01";
// Client ports cycled: one comes back after 84 s, past the hub leg's TIME-WAIT (60 s).
// SGW_BENCH_STAGE_SLOTS=n (fewer) brings a 4-tuple back while its hub half is in TIME-WAIT.
constexpr uint32_t kStageSlots = 16384;
constexpr uint64_t kStepNs = 20000;
constexpr uint64_t kGapNs = 5 * kMs;
// StageIdleHalves: the server opens toward the LAN host's port 8081 (the hub's opener)
constexpr uint16_t kLanPort = 8081;

// A model host of the stage rig: its segments become frames on a port's RX ring.
struct Host {
	sgw_tcp_stack st;
	rte_mempool *pool = nullptr;
	rte_ring *ring = nullptr;
	uint8_t laddr[4], raddr[4];
	uint64_t segs = 0, nombuf = 0;
	// the server with several terminals: its peer is the client of the slot's
	// terminal k (10.20.k+1.5), slot i = k * per_term + port - 1024
	const TcpPair *slots = nullptr;
	uint32_t per_term = 0;
};

void
HostTx(void *ctx, sgw_tcp_conn *c, const uint8_t *hdr, uint32_t hlen, uint32_t, uint32_t)
{
	Host *h = static_cast<Host *>(ctx);
	uint8_t raddr[4];
	memcpy(raddr, h->raddr, 4);
	if (h->slots != nullptr && h->per_term != 0) {
		size_t i = size_t(reinterpret_cast<const char *>(c) -
				  reinterpret_cast<const char *>(h->slots)) / sizeof(TcpPair);
		raddr[2] = uint8_t(1u + i / h->per_term);
	}
	rte_mbuf *m = rte_pktmbuf_alloc(h->pool);
	uint8_t *d = m != nullptr ? reinterpret_cast<uint8_t *>(
					    rte_pktmbuf_append(m, uint16_t(14 + 20 + hlen))) :
				    nullptr;
	if (d == nullptr) {
		rte_pktmbuf_free(m);
		h->nombuf++;
		return;
	}
	static const uint8_t dst[6] = {0x02, 0, 0, 0, 0x05, 0x01};
	static const uint8_t src[6] = {0x02, 0, 0, 0, 0, 0x77};
	memcpy(d, dst, 6);
	memcpy(d + 6, src, 6);
	d[12] = 0x08;
	d[13] = 0x00;
	uint8_t *ip = d + 14;
	memset(ip, 0, 20);
	ip[0] = 0x45;
	ip[2] = uint8_t((20 + hlen) >> 8);
	ip[3] = uint8_t(20 + hlen);
	ip[6] = 0x40;
	ip[8] = 64;
	ip[9] = 6;
	memcpy(ip + 12, h->laddr, 4);
	memcpy(ip + 16, raddr, 4);
	uint32_t sum = 0;
	for (int i = 0; i < 20; i += 2)
		sum += uint32_t(ip[i] << 8 | ip[i + 1]);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	ip[10] = uint8_t(~sum >> 8);
	ip[11] = uint8_t(~sum);
	memcpy(ip + 20, hdr, hlen);
	uint16_t cs = sgw_tcp_csum_ipv4(h->laddr, raddr, ip + 20, hlen, nullptr, 0);
	ip[36] = uint8_t(cs >> 8);
	ip[37] = uint8_t(cs);
	if (rte_ring_enqueue(h->ring, m) != 0)
		rte_pktmbuf_free(m);
	h->segs++;
}
const sgw_tcp_ops kHostOps = {HostTx, EpRxData, EpRxAdvance,
			      EpRxSpace, EpTxAcked};

// One terminal of the stage rig: its satellite and LAN ports, its dataplane,
// its client host (10.20.k+1.5 behind terminal 1001 + k).
struct Site {
	DpPort tsat, lan;
	sgw_dp *dp = nullptr;
	Host cl;
};

struct StageRig {
	bool ok = false;
	DpPort terr, hsat;
	sgw_dp *hub = nullptr, *term = nullptr;   // term: site[0]'s (the life benches')
	Host sv;
	// Terminals: one for the life benches; StageIdleHalves takes as many as its
	// connections need (a session carries at most 65,535 halves: its channels).
	uint32_t nterm = 1;
	std::vector<std::unique_ptr<Site>> site;
	std::unique_ptr<TcpPair[]> slot;
	uint32_t nslots = kStageSlots;
	uint32_t nalloc = kStageSlots;   // slots (client ports 1024 + i); the idle rig's more
	uint32_t per_term = kStageSlots; // slot i belongs to terminal i / per_term
	// StageIdleHalves: per terminal, slots j < n_cl are client-opened (client
	// port 1024 + j), the rest server-opened (server port 1024 + j - n_cl)
	uint32_t n_cl = 0;
	uint64_t now = 0;
	uint8_t handshake = SGW_SPLIT_HS_END_TO_END;
	// StageIdleHalves: the split section and limits, per role (empty: the life benches')
	std::string split_yaml, limits_yaml, hub_split_yaml, hub_limits_yaml;
	std::string hub_web_ports = "[80]";  // the idle rig adds kLanPort
	uint16_t client_dport = kServerPort; // where client-opened connections go
	// Each gateway's thread CPU time in its own loop (HubIter / TermIter), when timing.
	bool timing = false;
	uint64_t hub_ns = 0, term_ns = 0, timed_calls = 0;

	static std::string Satlink(const std::string &extra)
	{
		return "satlink: {port: sat, forward_rate_bps: 400000000000, "
		       "return_rate_bps: 400000000000, window_max: 8192, status_interval_ms: 1, "
		       "rtt_ms: 110" + extra + "}\n";
	}
	std::string Split(bool hub_role) const
	{
		if (hub_role && !hub_split_yaml.empty())
			return hub_split_yaml + hub_limits_yaml;
		if (!split_yaml.empty())
			return split_yaml + limits_yaml;
		return "split: {relay_connection_bytes: 4096, open_credit: 4096, "
		       "relay_terminal_bytes: 134217728, relay_worker_bytes: 134217728, "
		       "max_connections_per_worker: 16384, max_connections_per_terminal: 16384}\n";
	}
	static std::string Prefix(uint32_t k)
	{
		return "10.20." + std::to_string(k + 1) + ".0/24";
	}
	std::string HubYaml() const
	{
		std::string terms, prefixes;
		for (uint32_t k = 0; k < nterm; k++) {
			terms += "  - {name: site-" + std::to_string(k) + ", id: " +
				 std::to_string(1001 + k) + ", prefixes: [" + Prefix(k) + "]}\n";
			prefixes += (k ? ", " : "") + Prefix(k);
		}
		return "version: 1\nrole: hub\nports:\n"
		       "  - {name: terr, device: " + terr.name +
		       ", role: terrestrial, peer: sat}\n"
		       "  - {name: sat, device: " + hsat.name + ", role: satellite, peer: terr}\n"
		       "next_hops:\n"
		       "  - {name: to-term, port: sat, mac: \"" + std::string(kTermSatMac) +
		       "\"}\n"
		       "  - {name: to-fh, port: terr, mac: \"02:00:00:00:01:01\"}\n"
		       "terminals:\n" + terms +
		       "rules:\n"
		       "  - {name: web, match: {proto: tcp, dst_ports: " + hub_web_ports +
		       "}, action: count, next_hop: to-fh}\n"
		       "  - {name: to-site, match: {dst: [" + prefixes + "]}, action: forward, "
		       "next_hop: to-term}\n"
		       "  - {name: to-core, match: {dst: [198.51.100.0/24]}, action: forward, "
		       "next_hop: to-fh}\n"
		       "workers: {idle_backoff_us: 0}\n" + Split(true) +
		       Satlink(", peer_mac: \"" + std::string(kTermSatMac) + "\"");
	}
	std::string TermYaml(uint32_t k) const
	{
		const Site &t = *site[k];
		return "version: 1\nrole: terminal\nports:\n"
		       "  - {name: sat, device: " + t.tsat.name + ", role: satellite, peer: lan}\n"
		       "  - {name: lan, device: " + t.lan.name + ", role: lan, peer: sat}\n"
		       "next_hops:\n"
		       "  - {name: to-hub, port: sat, mac: \"" + std::string(kHubSatMac) + "\"}\n"
		       "  - {name: to-mh, port: lan, mac: \"02:00:00:00:02:01\"}\n"
		       "terminals:\n  - {name: site, id: " + std::to_string(1001 + k) +
		       ", prefixes: [" + Prefix(k) + "]}\n"
		       "rules:\n"
		       "  - {name: web, match: {proto: tcp, dst_ports: [80]}, action: count, "
		       "next_hop: to-hub}\n"
		       "  - {name: to-lan, match: {dst: [" + Prefix(k) + "]}, action: forward, "
		       "next_hop: to-mh}\n"
		       "  - {name: to-core, match: {dst: [198.51.100.0/24]}, action: forward, "
		       "next_hop: to-hub}\n"
		       "workers: {idle_backoff_us: 0}\n" + Split(false) +
		       Satlink(", terminal: " + std::to_string(1001 + k) + ", peer_mac: \"" +
			       std::string(kHubSatMac) + "\"");
	}
	bool StartOne(sgw_dp **dpp, const std::string &yaml, const std::string &inst)
	{
		sgw_policy pol;
		sgw_cfg_errors errs;
		char err[256] = "";
		unsigned int lcores[1] = {0};
		*dpp = static_cast<sgw_dp *>(calloc(1, sizeof(sgw_dp)));
		if (sgw_policy_load_buffer("bench.yaml", yaml.data(), yaml.size(), &pol, &errs) !=
		    0) {
			fprintf(stderr, "bench_dp_split: policy: %s\n", errs.n ? errs.e[0].msg : "?");
			return false;
		}
		// the loader refuses `split` still (docs/tcp-split.md): the rule web becomes one
		for (uint32_t i = 0; i < pol.n_rules; i++)
			if (strcmp(pol.rules[i].name, "web") == 0) {
				pol.rules[i].action = SGW_ACT_SPLIT;
				pol.rules[i].split_handshake = handshake;
			}
		int rc = sgw_dp_init(*dpp, &pol, 1, lcores, false, inst.c_str());
		if (rc != 0 || sgw_dp_publish(*dpp, &pol, err, sizeof(err)) != 0) {
			fprintf(stderr, "bench_dp_split: dataplane %s: %s\n", inst.c_str(), err);
			sgw_policy_free(&pol);
			return false;
		}
		sgw_policy_free(&pol);
		return true;
	}
	static void Iter(sgw_dp *dp, uint64_t ns)
	{
		sgw_worker *w = dp->workers[0];
		sgw_worker_iter(w, w->ns_base_tsc + uint64_t(double(ns) / w->ns_per_tsc) + 1);
		sgw_worker_flush(w);
		sgw_worker_drain_txrings(w);
	}
	// One name per gateway (noipa: not folded into one as identical code), so
	// that callgrind counts each alone (callgrind_annotate --inclusive=yes:
	// StageRig::HubIter, StageRig::TermIter).
	__attribute__((noipa)) static void HubIter(sgw_dp *dp, uint64_t ns) { Iter(dp, ns); }
	__attribute__((noipa)) static void TermIter(sgw_dp *dp, uint64_t ns) { Iter(dp, ns); }
	static void Move(rte_ring *from, rte_ring *to)
	{
		void *o[64];
		unsigned n;
		while ((n = rte_ring_dequeue_burst(from, o, 64, nullptr)) > 0) {
			unsigned k = rte_ring_enqueue_burst(to, o, n, nullptr);
			for (unsigned j = k; j < n; j++)
				rte_pktmbuf_free(static_cast<rte_mbuf *>(o[j]));
		}
	}
	// The hub's satellite frames to the terminal their satlink header names
	// (terminal id, bytes 4..7 after Ethernet); one terminal: all of them.
	void MoveFromHub()
	{
		if (nterm == 1) {
			Move(hsat.tx, site[0]->tsat.rx);
			return;
		}
		void *o = nullptr;
		while (rte_ring_dequeue(hsat.tx, &o) == 0) {
			rte_mbuf *m = static_cast<rte_mbuf *>(o);
			const uint8_t *d = rte_pktmbuf_mtod(m, const uint8_t *);
			uint32_t k = nterm;
			if (rte_pktmbuf_data_len(m) >= 14 + 22)
				k = (uint32_t(d[18]) << 24 | uint32_t(d[19]) << 16 |
				     uint32_t(d[20]) << 8 | d[21]) - 1001u;
			if (k >= nterm || rte_ring_enqueue(site[k]->tsat.rx, m) != 0)
				rte_pktmbuf_free(m);
		}
	}
	// Frames a dataplane sent toward a host: into its endpoints (slot by
	// terminal and port). The server's side names the terminal by the client's
	// address (source of what it receives); a client host k is terminal k.
	void Deliver(rte_ring *r, Host &h, bool server, uint32_t kc)
	{
		void *o = nullptr;
		while (rte_ring_dequeue(r, &o) == 0) {
			rte_mbuf *m = static_cast<rte_mbuf *>(o);
			const uint8_t *d = rte_pktmbuf_mtod(m, const uint8_t *);
			uint32_t len = rte_pktmbuf_data_len(m);
			sgw_tcp_seg s;
			if (len >= 54 && d[12] == 0x08 && d[13] == 0 && d[23] == 6) {
				uint32_t ihl = (d[14] & 15u) * 4u;
				uint32_t tot = uint32_t(d[16] << 8 | d[17]);
				uint32_t k = server ? uint32_t(d[14 + 12 + 2]) - 1u : kc;
				if (tot <= len - 14 && tot > ihl && k < nterm &&
				    sgw_tcp_seg_parse(d + 14 + ihl, tot - ihl, &s, nullptr) ==
					    SGW_TCP_PR_OK) {
					uint16_t port = server ? s.sport : s.dport;
					// StageIdleHalves' server-opened connections (to
					// kLanPort): the slot is the server's port (a client's
					// own port 8081 toward port 80 is not one)
					bool rev = port == kLanPort &&
						   (server ? s.dport : s.sport) != client_dport;
					if (rev)
						port = server ? s.dport : s.sport;
					uint32_t j = uint32_t(port - 1024u) + (rev ? n_cl : 0u);
					uint32_t i = k * per_term + j;
					if (port >= 1024 && j < per_term && i < nslots) {
						sgw_tcp_conn *c = server ? &slot[i].s : &slot[i].c;
						if ((server || rev) && c->state == SGW_TCP_CLOSED &&
						    (s.flags & SGW_TCP_F_SYN)) {
							sgw_tcp_conn_init(&h.st, c, 7000000u + i,
									  s.dport, s.sport);
							sgw_tcp_listen(&h.st, c);
						}
						sgw_tcp_out out;
						sgw_tcp_out_reset(&out);
						sgw_tcp_input(&h.st, c, now, &s, &out);
						if (server && (out.events & SGW_TCP_EV_PEER_FIN)) {
							sgw_tcp_out_reset(&out);
							sgw_tcp_shutdown(&h.st, c, now, &out);
						}
					}
				}
			}
			rte_pktmbuf_free(m);
		}
	}
	static uint64_t ThreadNs()
	{
		timespec t;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
		return uint64_t(t.tv_sec) * 1000000000ull + uint64_t(t.tv_nsec);
	}
	uint64_t steps = 0;
	void Step()
	{
		steps++;
		now += kStepNs;
		MoveFromHub();
		for (auto &t : site)
			Move(t->tsat.tx, hsat.rx);
		if (!timing) {
			HubIter(hub, now);
			for (auto &t : site)
				TermIter(t->dp, now);
		} else {
			// each interval holds one clock read's cost: timed_calls says
			// how many to take off (StageIdleHalves measures one)
			uint64_t t0 = ThreadNs();
			HubIter(hub, now);
			uint64_t t1 = ThreadNs();
			for (auto &t : site)
				TermIter(t->dp, now);
			uint64_t t2 = ThreadNs();
			hub_ns += t1 - t0;
			term_ns += t2 - t1;
			timed_calls++;
		}
		for (uint32_t k = 0; k < nterm; k++)
			Deliver(site[k]->lan.tx, site[k]->cl, false, k);
		Deliver(terr.tx, sv, true, 0);
	}
	void HostInit(Host &h, bool client, uint32_t k)
	{
		sgw_tcp_conf conf;
		sgw_tcp_conf_default(&conf);
		sgw_tcp_stack_init(&h.st, &conf, &kHostOps, &h);
		const uint8_t cip[4] = {10, 20, uint8_t(k + 1), 5};
		static const uint8_t sip[4] = {198, 51, 100, 10};
		memcpy(h.laddr, client ? cip : sip, 4);
		memcpy(h.raddr, client ? sip : cip, 4);
		h.pool = client ? site[k]->dp->pool : hub->pool;
		h.ring = client ? site[k]->lan.rx : terr.rx;
	}
	bool Start(uint8_t hs, const std::string &tag)
	{
		handshake = hs;
		std::string b = "sb" + tag + std::to_string(getpid() % 100000);
		if (!terr.Make(b + "t") || !hsat.Make(b + "h"))
			return false;
		for (uint32_t k = 0; k < nterm; k++) {
			site.emplace_back(new Site());
			std::string tb = b + std::to_string(k);
			if (!site[k]->tsat.Make(tb + "s") || !site[k]->lan.Make(tb + "l"))
				return false;
		}
		if (!StartOne(&hub, HubYaml(), b + "H"))
			return false;
		for (uint32_t k = 0; k < nterm; k++)
			if (!StartOne(&site[k]->dp, TermYaml(k), b + "T" + std::to_string(k)))
				return false;
		term = site[0]->dp;
		for (uint32_t k = 0; k < nterm; k++)
			HostInit(site[k]->cl, true, k);
		HostInit(sv, false, 0);
		slot.reset(new TcpPair[nalloc]);
		nslots = nalloc;
		if (nterm == 1)
			per_term = nalloc;
		sv.slots = slot.get();
		sv.per_term = per_term;
		const char *e = getenv("SGW_BENCH_STAGE_SLOTS");
		if (e != nullptr && atoi(e) > 0 && uint32_t(atoi(e)) < nalloc)
			nslots = uint32_t(atoi(e));
		for (uint32_t i = 0; i < nalloc; i++)
			memset(&slot[i], 0, sizeof(slot[i]));
		// satlink up: both ends wait for their epoch (up to 1 s of virtual time)
		for (int k = 0; k < 100000 && !SessionsUp(); k++)
			Step();
		return ok = SessionsUp();
	}
	bool SessionsUp() const
	{
		for (const auto &t : site) {
			sgw_sl_pub p;
			sgw_sl_read(t->dp, 0, &p);
			if (p.state != SGW_ARQ_UP)
				return false;
		}
		return true;
	}
	// The halves the terminals hold, and a terminal counter summed.
	uint64_t TermOpen() const
	{
		uint64_t n = 0;
		for (const auto &t : site)
			n += sgw_split_dp_open(t->dp);
		return n;
	}
	uint64_t TermCtr(sgw_spd_ctr c) const
	{
		uint64_t n = 0;
		for (const auto &t : site)
			n += sgw_split_dp_ctr(t->dp, c);
		return n;
	}
	uint64_t TermBypass(sgw_spd_bypass c) const
	{
		uint64_t n = 0;
		for (const auto &t : site)
			n += sgw_split_dp_bypass(t->dp, c);
		return n;
	}
	// One connection's life in slot i toward port dport; false if it got stuck.
	__attribute__((noinline)) bool Life(uint32_t i, uint16_t dport)
	{
		TcpPair &p = slot[i];
		Host &cl = site[0]->cl;
		sgw_tcp_out o;
		// Deliver tells a client's port 8081 (slot 7057) from a server-opened
		// connection by it (before, the forward bench stuck at slot 7057)
		client_dport = dport;
		sgw_tcp_conn_init(&cl.st, &p.c, 1000000u + i * 7919u, uint16_t(1024 + i), dport);
		memset(&p.s, 0, sizeof(p.s));
		sgw_tcp_out_reset(&o);
		sgw_tcp_connect(&cl.st, &p.c, now, &o);
		int k;
		for (k = 0; k < 2000 && p.c.state != SGW_TCP_ESTABLISHED; k++)
			Step();
		if (p.c.state != SGW_TCP_ESTABLISHED) {
			if (getenv("SGW_BENCH_DEBUG"))
				fprintf(stderr, "slot %u: client %s server %s opened %lu "
					"accepted %lu open t %lu h %lu\n", i,
					sgw_tcp_state_name(p.c.state),
					sgw_tcp_state_name(p.s.state),
					(unsigned long)sgw_split_dp_ctr(term, SGW_SPD_OPENED),
					(unsigned long)sgw_split_dp_ctr(hub, SGW_SPD_ACCEPTED),
					(unsigned long)sgw_split_dp_open(term),
					(unsigned long)sgw_split_dp_open(hub));
			return false;
		}
		sgw_tcp_out_reset(&o);
		sgw_tcp_shutdown(&cl.st, &p.c, now, &o);
		for (k = 0; k < 2000 && !(p.c.state == SGW_TCP_TIME_WAIT &&
					  p.s.state == SGW_TCP_CLOSED); k++)
			Step();
		// the rest of the connection's time slot: timers, satlink status
		now += kGapNs;
		Step();
		return p.c.state == SGW_TCP_TIME_WAIT && p.s.state == SGW_TCP_CLOSED;
	}
	void Stop()
	{
		std::vector<sgw_dp *> dps{hub};
		std::vector<DpPort *> ports{&terr, &hsat};
		for (auto &t : site) {
			dps.push_back(t->dp);
			ports.push_back(&t->tsat);
			ports.push_back(&t->lan);
		}
		for (sgw_dp *dp : dps)
			if (dp != nullptr && dp->workers[0] != nullptr)
				sgw_dp_drain(dp);
		for (DpPort *pt : ports) {
			DpPort::Drain(pt->rx);
			DpPort::Drain(pt->tx);
		}
		for (sgw_dp *dp : dps)
			if (dp != nullptr)
				sgw_dp_fini(dp);
	}
};

bool g_eal;

bool
EalUp()
{
	static bool tried;
	if (!tried) {
		tried = true;
		std::string prefix = "bench_split_" + std::to_string(getpid());
		// SGW_BENCH_EAL_MB: StageIdleHalves with a million connections needs
		// more (the pools and flow tables of one hub and 16 terminals)
		const char *mb = getenv("SGW_BENCH_EAL_MB");
		std::string mem = mb != nullptr && atoi(mb) > 0 ? mb : "2048";
		const char *eal[] = {"bench_dp_split", "--no-huge", "-m", mem.c_str(), "--no-pci",
				     "--file-prefix", prefix.c_str(), "-l", "0", "--log-level",
				     "warning"};
		int argc = int(sizeof(eal) / sizeof(eal[0]));
		g_eal = rte_eal_init(argc, const_cast<char **>(eal)) >= 0;
	}
	return g_eal;
}

std::unique_ptr<StageRig> g_rig[2];   // [0] end to end, [1] spoofed

void
RunStage(benchmark::State &state, int which, uint16_t dport)
{
	if (!EalUp()) {
		state.SkipWithError("EAL initialisation failed");
		return;
	}
	if (g_rig[which] == nullptr) {
		g_rig[which].reset(new StageRig());
		if (!g_rig[which]->Start(which == 0 ? SGW_SPLIT_HS_END_TO_END :
					 SGW_SPLIT_HS_SPOOFED, which == 0 ? "e" : "s"))
			fprintf(stderr, "bench_dp_split: stage rig did not start\n");
	}
	StageRig &r = *g_rig[which];
	if (!r.ok) {
		state.SkipWithError("stage rig not up");
		return;
	}
	static uint32_t next;
	uint64_t stuck = 0, conns = 0;
	uint64_t opened0 = sgw_split_dp_ctr(r.term, SGW_SPD_OPENED);
	uint64_t accepted0 = sgw_split_dp_ctr(r.hub, SGW_SPD_ACCEPTED);
	uint64_t byp0 = 0;
	for (int b = 0; b < SGW_SPD_BYP__COUNT; b++)
		byp0 += sgw_split_dp_bypass(r.term, sgw_spd_bypass(b)) +
			sgw_split_dp_bypass(r.hub, sgw_spd_bypass(b));
	uint64_t segs0 = r.site[0]->cl.segs + r.sv.segs, steps0 = r.steps;
	for (auto _ : state) {
		stuck += !r.Life(next, dport);
		next = next + 1 >= r.nslots ? 0 : next + 1;
		conns++;
	}
	uint64_t byp = 0;
	for (int b = 0; b < SGW_SPD_BYP__COUNT; b++)
		byp += sgw_split_dp_bypass(r.term, sgw_spd_bypass(b)) +
		       sgw_split_dp_bypass(r.hub, sgw_spd_bypass(b));
	double n = double(conns ? conns : 1);
	uint64_t opened = sgw_split_dp_ctr(r.term, SGW_SPD_OPENED) - opened0;
	uint64_t accepted = sgw_split_dp_ctr(r.hub, SGW_SPD_ACCEPTED) - accepted0;
	if (stuck != 0)
		state.SkipWithError("a connection did not complete");
	else if (dport == kServerPort && (opened != conns || accepted != conns || byp != byp0))
		state.SkipWithError("a connection was not split");
	else if (dport != kServerPort && opened != 0)
		state.SkipWithError("the baseline was split");
	state.SetItemsProcessed(state.iterations());
	state.counters["host_segs_per_conn"] = double(r.site[0]->cl.segs + r.sv.segs - segs0) / n;
	state.counters["steps_per_conn"] = double(r.steps - steps0) / n;
	state.counters["halves_open"] =
		double(sgw_split_dp_open(r.hub) + sgw_split_dp_open(r.term));
}

void
StageForwardLife(benchmark::State &state)
{
	RunStage(state, 0, 8080);
}

void
StageSplitLife(benchmark::State &state)
{
	RunStage(state, 0, kServerPort);
}

void
StageSplitLifeSpoofed(benchmark::State &state)
{
	RunStage(state, 1, kServerPort);
}

// Every page of a segment read and written back unchanged: resident, contents
// kept (single-threaded, before the timed loops).
int
TouchSeg(const rte_memseg_list *, const rte_memseg *ms, void *)
{
	volatile uint8_t *p = static_cast<volatile uint8_t *>(ms->addr);
	for (size_t o = 0; o < ms->len; o += 4096)
		p[o] = p[o];
	return 0;
}

uint64_t
RssBytes()
{
	FILE *f = fopen("/proc/self/statm", "r");
	unsigned long pages = 0, rss = 0;
	if (f == nullptr)
		return 0;
	if (fscanf(f, "%lu %lu", &pages, &rss) != 2)
		rss = 0;
	fclose(f);
	return uint64_t(rss) * uint64_t(sysconf(_SC_PAGESIZE));
}

// Scale (docs/tcp-split.md "Scale"): SGW_SCALE_N (default 2000) connections
// opened for real through the dataplanes (spoofed handshake), ESTABLISHED at
// both hosts and left idle: the halves each worker holds, the stage's
// allocations per half of its pool (relays apart), and the process's RSS
// growth per idle connection. Relays are 4096 (the loader's minimum); an idle
// connection's relays were never written.
//
// One satlink session carries at most 32,767 halves opened at the terminal
// and 32,768 opened at the hub (its channels): past 65,535 connections the
// rig has one terminal per 65,535 (terminal 1001 + k, client 10.20.k+1.5, one
// dataplane each, all on the one hub worker), the connections spread evenly;
// per terminal the first 32,767 are opened by its client (ports 1024..), the
// rest by the server (from ports 1024..) toward the client's port 8081 (the
// hub's openers). DPDK's RTE_MAX_ETHPORTS (32 in Debian's build) and two
// ports per terminal allow 15 terminals: at most 983,025 connections
// (SGW_SCALE_N=983025, SGW_BENCH_EAL_MB=6144). SGW_SCALE_TERMINALS=t spreads
// fewer connections over t terminals. The forwarding baseline (/1) opens
// every connection from the client: 64,511 per terminal.
//
// StageIdleHalves/1: the same connections to port 8080, which the rules
// forward through both dataplanes untouched: the baseline of the opening cost
// (no half, no split check). Batches of 256 SYNs: the dataplanes' cost per
// new connection with many opening at once, the loop's polling shared by the
// batch (the Life benches pay it per connection).
//
// Timed per gateway: each gateway's loop (HubIter, TermIter) runs between two
// reads of the thread's CPU clock while the connections open (the cost of one
// read, measured here, is taken off each interval): hub_open_cpu_ns_per_conn
// is the hub's core alone, open_per_s_hub_core what that core opens per second.
// With several terminals term_open_cpu_ns_per_conn counts every terminal's
// loop, the idle ones' polling included. callgrind_annotate --inclusive=yes
// gives each gateway's instruction count (StageRig::HubIter, TermIter): the
// difference between two n, divided by the difference of n, is the cost per
// new connection (the rig's start-up cancels out).
void
StageIdleHalves(benchmark::State &state)
{
	const bool fwd = state.range(0) == 1;
	if (!EalUp()) {
		state.SkipWithError("EAL initialisation failed");
		return;
	}
	// a session's channels (split), a client address's ports (forwarded)
	const uint32_t kPerTerm = fwd ? 65535u - 1024u : 65535u;
	const uint32_t kMaxTerm = (RTE_MAX_ETHPORTS - 2) / 2;
	const char *e = getenv("SGW_SCALE_N");
	uint32_t n = e != nullptr && atoi(e) > 0 ? uint32_t(atoi(e)) : 2000u;
	n = std::min(n, kPerTerm * kMaxTerm);
	// SGW_SCALE_TERMINALS: more terminals than the connections need
	const char *et = getenv("SGW_SCALE_TERMINALS");
	const uint32_t nterm = std::max(std::min(et != nullptr ? uint32_t(atoi(et)) : 0u, kMaxTerm),
					(n + kPerTerm - 1) / kPerTerm);
	const uint32_t per = (n + nterm - 1) / nterm;   // connections per terminal
	const uint32_t n_cl = fwd ? per : std::min(per, 32767u);   // client-opened, each
	const uint16_t cl_port = fwd ? 8080 : kServerPort;
	uint32_t hub_cap = 65536;
	while (hub_cap < n + n / 32)
		hub_cap *= 2;
	for (auto _ : state) {
		StageRig r;
		r.nalloc = n;
		r.nterm = nterm;
		r.per_term = per;
		r.n_cl = n_cl;
		r.hub_web_ports = fwd ? "[80]" : "[80, 8081]";
		r.client_dport = cl_port;
		r.split_yaml = "split: {relay_connection_bytes: 4096, open_credit: 4096, "
			       "relay_terminal_bytes: 549755813888, "
			       "relay_worker_bytes: 549755813888, "
			       "max_connections_per_worker: 65536, "
			       "max_connections_per_terminal: 65536}\n";
		r.limits_yaml = "limits: {flows_per_core: 131072, timers_per_core: 262144}\n";
		r.hub_split_yaml = "split: {relay_connection_bytes: 4096, open_credit: 4096, "
				   "relay_terminal_bytes: 549755813888, "
				   "relay_worker_bytes: 549755813888, "
				   "max_connections_per_worker: " + std::to_string(hub_cap) +
				   ", max_connections_per_terminal: 65536}\n";
		r.hub_limits_yaml = "limits: {flows_per_core: " + std::to_string(hub_cap) +
				    ", timers_per_core: " + std::to_string(2 * hub_cap) + "}\n";
		if (!r.Start(SGW_SPLIT_HS_SPOOFED, fwd ? "f" : "i")) {
			state.SkipWithError("idle rig not up");
			r.Stop();
			return;
		}
		// SGW_BENCH_PREFAULT=1: every page of DPDK's memory made resident
		// first (as hugepages would be), so that the timed loops do not pay
		// the first touch of 4 KB pages (--no-huge) of the pools and tables
		const char *pf = getenv("SGW_BENCH_PREFAULT");
		if (pf != nullptr && atoi(pf) > 0)
			rte_memseg_walk(TouchSeg, nullptr);
		uint64_t rss0 = RssBytes();
		uint32_t up = 0;
		// one read of the thread's CPU clock, to take off each timed interval
		uint64_t q0 = StageRig::ThreadNs(), q1 = q0;
		for (int k = 0; k < 1000; k++)
			q1 = StageRig::ThreadNs();
		const double read_ns = double(q1 - q0) / 1000.0;
		timespec c0, c1;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
		r.timing = true;
		// Batches of 256 SYNs, each batch stepped until its clients are ESTABLISHED.
		for (uint32_t b = 0; b < n; b += 256) {
			uint32_t end = std::min(n, b + 256);
			for (uint32_t i = b; i < end; i++) {
				TcpPair &p = r.slot[i];
				const uint32_t k = i / per, j = i % per;
				sgw_tcp_out o;
				sgw_tcp_out_reset(&o);
				if (j < n_cl) {
					Host &cl = r.site[k]->cl;
					sgw_tcp_conn_init(&cl.st, &p.c, 1000000u + i * 7919u,
							  uint16_t(1024 + j), cl_port);
					memset(&p.s, 0, sizeof(p.s));
					sgw_tcp_connect(&cl.st, &p.c, r.now, &o);
				} else {
					sgw_tcp_conn_init(&r.sv.st, &p.s, 3000000u + i * 7919u,
							  uint16_t(1024 + j - n_cl), kLanPort);
					memset(&p.c, 0, sizeof(p.c));
					sgw_tcp_connect(&r.sv.st, &p.s, r.now, &o);
				}
			}
			for (int k = 0; k < 4000; k++) {
				uint32_t ok = 0;
				for (uint32_t i = b; i < end; i++)
					ok += r.slot[i].c.state == SGW_TCP_ESTABLISHED &&
					      r.slot[i].s.state == SGW_TCP_ESTABLISHED;
				if (ok == end - b)
					break;
				r.Step();
			}
		}
		r.timing = false;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
		for (uint32_t i = 0; i < n; i++)
			up += r.slot[i].c.state == SGW_TCP_ESTABLISHED &&
			      r.slot[i].s.state == SGW_TCP_ESTABLISHED;
		// a little idle time: acknowledgements and satlink status settle
		for (int k = 0; k < 100; k++)
			r.Step();
		uint64_t rss1 = RssBytes();
		uint64_t th = r.TermOpen(), hh = sgw_split_dp_open(r.hub);
		uint64_t st = 0, rl = 0;
		uint64_t cap = sgw_split_dp_cap(r.hub, &st, &rl);
		const double calls = double(r.timed_calls);
		const double hub_ns = std::max(0.0, double(r.hub_ns) - calls * read_ns) / double(n);
		const double term_ns =
			std::max(0.0, double(r.term_ns) - calls * read_ns) / double(n);
		state.counters["connections"] = double(n);
		state.counters["terminals"] = double(nterm);
		// the opening loop's CPU time per connection: both dataplanes, both
		// model hosts and the harness on this one core
		state.counters["open_cpu_ns_per_conn"] =
			(double(c1.tv_sec - c0.tv_sec) * 1e9 + double(c1.tv_nsec - c0.tv_nsec)) /
			double(n);
		state.counters["hub_open_cpu_ns_per_conn"] = hub_ns;
		state.counters["term_open_cpu_ns_per_conn"] = term_ns;
		state.counters["open_per_s_hub_core"] = hub_ns > 0 ? 1e9 / hub_ns : 0;
		state.counters["open_per_s_term_core"] = term_ns > 0 ? 1e9 / term_ns : 0;
		state.counters["clock_read_ns"] = read_ns;
		state.counters["steps"] = calls;
		state.counters["client_opened"] = double(std::min(n_cl, per)) * nterm;
		state.counters["established"] = double(up);
		state.counters["halves_terminal"] = double(th);
		state.counters["halves_hub"] = double(hh);
		state.counters["pool_cap"] = double(cap);
		state.counters["state_alloc_per_half"] = cap ? double(st) / double(cap) : 0;
		state.counters["relay_reserved_per_half"] = cap ? double(rl) / double(cap) : 0;
		state.counters["rss_growth_per_conn"] =
			double(rss1 > rss0 ? rss1 - rss0 : 0) / double(n);
		state.counters["bypassed"] = double(r.TermBypass(SGW_SPD_BYP_POOL_FULL) +
						    r.TermBypass(SGW_SPD_BYP_TERMINAL_CAP));
		if (up != n || th != (fwd ? 0 : n) || hh != (fwd ? 0 : n)) {
			uint32_t cl_up = 0;
			for (uint32_t i = 0; i < n; i++)
				cl_up += i % per < n_cl &&
					 r.slot[i].c.state == SGW_TCP_ESTABLISHED &&
					 r.slot[i].s.state == SGW_TCP_ESTABLISHED;
			fprintf(stderr, "StageIdleHalves: %u of %u established (%u "
				"client-opened), halves terminals %lu hub %lu, opened t %lu h %lu, "
				"accepted t %lu h %lu, refused t %lu h %lu\n", up, n, cl_up,
				(unsigned long)th, (unsigned long)hh,
				(unsigned long)r.TermCtr(SGW_SPD_OPENED),
				(unsigned long)sgw_split_dp_ctr(r.hub, SGW_SPD_OPENED),
				(unsigned long)r.TermCtr(SGW_SPD_ACCEPTED),
				(unsigned long)sgw_split_dp_ctr(r.hub, SGW_SPD_ACCEPTED),
				(unsigned long)r.TermCtr(SGW_SPD_REFUSED),
				(unsigned long)sgw_split_dp_ctr(r.hub, SGW_SPD_REFUSED));
			for (int k = 0; k < SGW_SPD_BYP__COUNT; k++)
				fprintf(stderr, "  bypass %d: t %lu h %lu\n", k,
					(unsigned long)r.TermBypass(sgw_spd_bypass(k)),
					(unsigned long)sgw_split_dp_bypass(r.hub, sgw_spd_bypass(k)));
			state.SkipWithError("not every connection split and established");
		}
		r.Stop();
	}
}

}  // namespace

// SGW_BENCH_ITERS=n runs every benchmark for exactly n iterations (no
// estimation runs): for callgrind, whose counts are then per n connections.
int
main(int argc, char **argv)
{
	const char *it = getenv("SGW_BENCH_ITERS");
	benchmark::IterationCount n = it != nullptr ? benchmark::IterationCount(atoll(it)) : 0;
	std::vector<benchmark::internal::Benchmark *> b;
	b.push_back(benchmark::RegisterBenchmark("Baseline_ParseSyn", Baseline_ParseSyn));
	b.push_back(benchmark::RegisterBenchmark("TcpLife", TcpLife)->Arg(64)->Arg(65536));
	b.push_back(benchmark::RegisterBenchmark("SplitLife", SplitLife)->Arg(64)->Arg(16384));
	b.push_back(benchmark::RegisterBenchmark("SplitLifeSpoofed", SplitLifeSpoofed)
			    ->Arg(64)
			    ->Arg(16384));
	b.push_back(benchmark::RegisterBenchmark("StageForwardLife", StageForwardLife));
	b.push_back(benchmark::RegisterBenchmark("StageSplitLife", StageSplitLife));
	b.push_back(benchmark::RegisterBenchmark("StageSplitLifeSpoofed", StageSplitLifeSpoofed));
	// one iteration: it builds its own two dataplanes (SGW_SCALE_N connections)
	benchmark::RegisterBenchmark("StageIdleHalves", StageIdleHalves)
		->Arg(0)
		->Arg(1)
		->Iterations(1);
	if (n > 0)
		for (auto *x : b)
			x->Iterations(n);
	benchmark::Initialize(&argc, argv);
	if (benchmark::ReportUnrecognizedArguments(argc, argv))
		return 1;
	benchmark::RunSpecifiedBenchmarks();
	benchmark::Shutdown();
	for (auto &r : g_rig)
		if (r != nullptr)
			r->Stop();
	if (g_eal)
		rte_eal_cleanup();
	return 0;
}
