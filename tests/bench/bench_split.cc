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
// items_per_second: connections (SplitLife: one split connection = both
// halves + both model peers on this one core).
// Reproduce: build-h/tests/bench/bench_split --benchmark_repetitions=5
//            --benchmark_report_aggregates_only=true
// Instruction counts: valgrind --tool=callgrind build-h/tests/bench/bench_split
//            --benchmark_filter='SplitLife/16384' --benchmark_min_time=0.01 (and
//            callgrind_annotate --inclusive=yes), divided by the iterations printed.

#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "sgw_split.h"
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
BENCHMARK(Baseline_ParseSyn);

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

	void Expire()
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
					sgw_tcp_conn_init(&sv.st, &p.s, 7000000u + it.slot, kServerPort,
							  uint16_t(it.b[0] << 8 | it.b[1]));
					p.s.user = it.slot;
					sgw_tcp_listen(&sv.st, &p.s);
				}
				PeerInput(sv, &p.s, now, it, &o);
				ApplyTimers(tw, p.s.tw, SGW_TCP_T__COUNT, o, kOwnServer, it.slot, now);
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
				ApplyTimers(tw, p.c.tw, SGW_TCP_T__COUNT, o, kOwnClient, it.slot, now);
			}
		}
		c2s.reset();
		s2c.reset();
	}

	// One connection's life in slot i.
	void Life(uint32_t i)
	{
		TcpPair &p = slot[i];
		if (p.c.state != SGW_TCP_CLOSED || p.s.state != SGW_TCP_CLOSED) {
			bad++;
			return;
		}
		sgw_tcp_out o;
		sgw_tcp_conn_init(&cl.st, &p.c, 1000000u + i * 7919u, uint16_t(1024 + (i & 0x7fff)),
				  kServerPort);
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
BENCHMARK(TcpLife)->Arg(64)->Arg(65536);

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
			if (sgw_split_open(&term.env, &s.term, now, &a, &seg, mode, uint16_t(i + 1),
					   3000000u + i, &b, nullptr, &o) != 0) {
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
			if (sgw_stream_decode(it.b, it.len, &m, hub.env.msg_err) != SGW_STREAM_E_OK ||
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

	void Expire()
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
					sgw_tcp_conn_init(&sv.st, &p.s, 7000000u + it.slot, kServerPort,
							  uint16_t(it.b[0] << 8 | it.b[1]));
					p.s.user = it.slot;
					sgw_tcp_listen(&sv.st, &p.s);
				}
				PeerInput(sv, &p.s, now, it, &o);
				ApplyTimers(tw, p.s.tw, SGW_TCP_T__COUNT, o, kOwnServer, it.slot, now);
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
				ApplyTimers(tw, p.c.tw, SGW_TCP_T__COUNT, o, kOwnClient, it.slot, now);
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

	void Life(uint32_t i)
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
		if (s.peers.c.state != SGW_TCP_ESTABLISHED || s.peers.s.state != SGW_TCP_ESTABLISHED ||
		    s.term.state != SGW_SPLIT_S_OPEN || s.hub.state != SGW_SPLIT_S_OPEN)
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
BENCHMARK(SplitLife)->Arg(64)->Arg(16384);

void
SplitLifeSpoofed(benchmark::State &state)
{
	RunSplit(state, SGW_SPLIT_SPOOFED);
}
BENCHMARK(SplitLifeSpoofed)->Arg(64)->Arg(16384);

}  // namespace

BENCHMARK_MAIN();
