// SPDX-License-Identifier: BSD-3-Clause
// Tests of lib/sgw_split.c (one half of a split TCP connection) in virtual
// time, end to end through both halves:
//
//   client (sgw_tcp) <-LAN-> terminal half (opener) <~~ model satlink ~~>
//       hub half (acceptor) <-LAN-> server (sgw_tcp)
//
// The client and the server are the real TCP endpoint with plain buffers;
// every segment is real bytes (built, carried with its IPv4 addresses,
// parsed by sgw_tcp_seg_parse). The model satlink is one reliable in-order
// pipe per direction shared by all streams: a send queue of a fixed size
// drained at a fixed rate, a one-way delay, and optional pauses (outages)
// during which nothing arrives (satlink's ARQ holds and repairs: the stream
// layer only sees a later, still in-order, delivery). Every stream message is
// encoded and decoded. Each direction of each connection carries a
// deterministic byte pattern checked byte by byte by its receiver. Timers are
// deadlines per (object, id); the clock jumps to the next event.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <set>
#include <memory>
#include <vector>

#include "sgw_relay.h"
#include "sgw_split.h"
#include "sgw_stream.h"
#include "sgw_tcp.h"

namespace {

constexpr uint64_t kUs = 1000;
constexpr uint64_t kMs = 1000 * kUs;
constexpr uint64_t kSec = 1000 * kMs;
constexpr uint64_t kNever = SGW_TCP_NEVER;

const uint8_t kClientIp[4] = {192, 168, 7, 2};
const uint8_t kServerIp[4] = {203, 0, 113, 10};
constexpr uint16_t kServerPort = 80;

uint8_t
Pattern(uint32_t seed, uint64_t pos)
{
	uint64_t x = (pos + 1) * 0x9E3779B97F4A7C15ull ^ (seed * 0xD1B54A32D192ED03ull);
	return static_cast<uint8_t>(x >> 29);
}

struct Pkt {
	uint8_t src[4];
	uint8_t dst[4];
	std::vector<uint8_t> bytes;  // TCP header + payload
};

// ------------------------------------------------------------------ hosts

// An application on a plain TCP endpoint: sends `to_send` bytes of its
// pattern, checks what it receives against the peer's pattern.
struct App {
	alignas(64) sgw_tcp_conn c;
	uint32_t tx_seed = 0, rx_seed = 0;
	uint64_t to_send = 0;          // total the app writes
	uint64_t appended = 0, acked = 0;
	bool shutdown_after_send = false;
	bool shut = false;
	// receive: ring; [read, inorder) readable
	uint32_t rx_cap = 256 * 1024;
	std::vector<uint8_t> ring;
	uint64_t inorder = 0, read = 0;
	uint64_t read_rate = 0;        // bytes per tick; 0: reads at once
	uint64_t read_every = 10 * kMs;  // the tick
	uint64_t rx_bad = 0;           // bytes not matching the pattern
	uint64_t tm[SGW_TCP_T__COUNT];
	uint8_t events = 0;            // SGW_TCP_EV_* seen
	uint8_t reset_reason = 0;
	uint64_t abort_after = UINT64_MAX;  // abort once this many bytes acked
	bool aborted = false;
	App() { ring.resize(rx_cap); for (auto &t : tm) t = kNever; }
};

struct Sim;

// A host: one TCP stack, its apps by local port.
struct Host {
	Sim *sim = nullptr;
	bool is_client = false;
	sgw_tcp_stack st;
	std::map<uint32_t, std::unique_ptr<App>> apps;  // key: peer port << 16 | local port
	// server behaviour
	bool listen = true;        // false: a SYN gets a RST (refused)
	bool drop_syn = false;     // unreachable: SYNs vanish
	uint64_t srv_send = 0;     // bytes a new server connection sends
	bool srv_close_after = true;
	uint64_t srv_read_rate = 0;
	uint64_t srv_read_every = 10 * kMs;
	uint64_t srv_abort_after = UINT64_MAX;
	uint32_t rst_sent = 0;
	uint32_t syn_seen = 0;
	// what the server saw: the addresses of its peers
	std::vector<std::vector<uint8_t>> peer_addrs;
	std::vector<uint16_t> peer_ports;
};

// The model satlink, one direction.
struct SatDir {
	uint64_t rate_bps = 20000000;  // 20 Mbit/s
	uint64_t delay = 270 * kMs;
	uint32_t queue_cap = 256 * 1024;  // send queue, bytes
	uint64_t free_at = 0;
	uint64_t last_arrival = 0;
	std::deque<std::pair<uint64_t, uint32_t>> inq;  // (tx done, bytes) in the send queue
	uint64_t pause_from = kNever, pause_to = kNever;
	uint64_t msgs = 0, bytes = 0;

	uint32_t Queued(uint64_t now)
	{
		uint32_t q = 0;
		while (!inq.empty() && inq.front().first <= now)
			inq.pop_front();
		for (auto &e : inq)
			q += e.second;
		return q;
	}
};

// A gateway half: env + splits by channel.
struct Gw {
	Sim *sim = nullptr;
	bool terminal = false;
	sgw_tcp_stack st;
	sgw_split_env env;
	std::map<uint16_t, std::unique_ptr<sgw_split>> splits;
	std::map<uint16_t, std::vector<uint8_t>> mem;  // relay memory per channel (rx then tx)
	std::map<uint16_t, std::unique_ptr<sgw_rwc>> rwcs;
	std::map<uint16_t, std::array<uint64_t, SGW_SPLIT_T__COUNT>> tm;
	std::vector<uint16_t> closed;  // channels whose split reported CLOSED
	uint16_t next_channel = 1;
	// tx relay: the credit window of the satellite leg, so at least its BDP
	// (20 Mbit/s x 540 ms = 1.35 MB) for full rate
	uint32_t rx_ring = 262144, rx_limit = 262144, tx_ring = 2u << 20, tx_limit = 2u << 20;
	uint8_t mode = SGW_SPLIT_END_TO_END;
	bool refuse_all = false;       // acceptor: no resources
	uint64_t late = 0;
	uint32_t max_tx_used = 0;
	std::set<uint16_t> stalled;  // stage polling: channels to poll when the queue drains
};

struct Ev {
	std::function<void()> fn;
};

struct Sim {
	uint64_t now = 0;
	std::multimap<uint64_t, Ev> q;
	Host client, server;
	Gw term, hub;
	SatDir up, down;   // up: terminal -> hub
	uint64_t lan_delay = 1 * kMs, wan_delay = 10 * kMs;
	// a segment from the terminal to the client is dropped when this says so
	std::function<bool(const Pkt &)> drop_to_client;
	uint64_t dropped_to_client = 0;
	// false: every half is polled whenever its send queue drains (a generous
	// caller); true: as dataplane/split.c does, only the halves that found no
	// room, whose send was refused, or that asked for it (SGW_SPLIT_EV_MORE)
	bool stage_polling = false;

	void At(uint64_t t, std::function<void()> fn) { q.emplace(t, Ev{std::move(fn)}); }

	// ---- hosts

	static uint32_t Key(uint16_t local, uint16_t peer) { return (uint32_t)peer << 16 | local; }

	void AppOut(Host &h, App &a, const sgw_tcp_out &o)
	{
		for (unsigned id = 0; id < SGW_TCP_T__COUNT; id++)
			if (o.timer_set & (1u << id))
				a.tm[id] = o.timer_at[id];
		a.events |= o.events;
		if (o.events & SGW_TCP_EV_RESET)
			a.reset_reason = o.reason;
		if (o.events & SGW_TCP_EV_PEER_FIN)
			MaybeShut(h, a);
	}

	void Pump(Host &h, App &a)
	{
		if (a.aborted || a.c.state == SGW_TCP_CLOSED)
			return;
		if (a.appended < a.to_send) {
			uint64_t n = a.to_send - a.appended;
			uint64_t room = 1u << 20;  // app send buffer 1 MB
			if (a.appended - a.acked < room) {
				n = std::min<uint64_t>(n, room - (a.appended - a.acked));
				sgw_tcp_out o;
				sgw_tcp_out_reset(&o);
				a.appended += n;
				sgw_tcp_send(&h.st, &a.c, now, (uint32_t)n, &o);
				AppOut(h, a, o);
			}
		}
		MaybeShut(h, a);
	}

	void MaybeShut(Host &h, App &a)
	{
		if (a.shut || !a.shutdown_after_send || a.appended < a.to_send || a.aborted)
			return;
		// the server closes after its answer once the client finished (half-close)
		if (!h.is_client && !(a.events & SGW_TCP_EV_PEER_FIN) && a.to_send == 0)
			return;
		a.shut = true;
		sgw_tcp_out o;
		sgw_tcp_out_reset(&o);
		sgw_tcp_shutdown(&h.st, &a.c, now, &o);
		AppOut(h, a, o);
	}

	void ReadTick(Host &h, App &a)
	{
		if (a.read_rate == 0 || a.c.state == SGW_TCP_CLOSED)
			return;
		uint64_t n = std::min<uint64_t>(a.read_rate, a.inorder - a.read);
		if (n > 0) {
			a.read += n;
			sgw_tcp_out o;
			sgw_tcp_out_reset(&o);
			sgw_tcp_rx_consumed(&h.st, &a.c, now, &o);
			AppOut(h, a, o);
		}
		App *ap = &a;
		Host *hp = &h;
		At(now + a.read_every, [this, hp, ap] { ReadTick(*hp, *ap); });
	}

	void HostRecv(Host &h, const Pkt &p)
	{
		sgw_tcp_seg s;
		ASSERT_EQ(sgw_tcp_seg_parse(p.bytes.data(), p.bytes.size(), &s, nullptr),
			  SGW_TCP_PR_OK);
		uint32_t k = Key(s.dport, s.sport);
		auto it = h.apps.find(k);
		if (it == h.apps.end()) {
			if (h.is_client ||
			    (s.flags & (SGW_TCP_F_SYN | SGW_TCP_F_ACK)) != SGW_TCP_F_SYN)
				return;  // stray segment: the test does not need the RST
			h.syn_seen++;
			if (h.drop_syn)
				return;
			if (!h.listen) {
				sgw_tcp_seg r;
				if (sgw_tcp_rst_for(&s, &r) == 1) {
					h.rst_sent++;
					SendSeg(h, p.dst, p.src, r);
				}
				return;
			}
			h.peer_addrs.emplace_back(p.src, p.src + 4);
			h.peer_ports.push_back(s.sport);
			auto a = std::make_unique<App>();
			sgw_tcp_conn_init(&h.st, &a->c, 7000000u + s.sport, s.dport, s.sport);
			a->c.user = k;
			sgw_tcp_listen(&h.st, &a->c);
			a->tx_seed = 2000u + s.sport;
			a->rx_seed = 1000u + s.sport;
			a->to_send = h.srv_send;
			a->shutdown_after_send = h.srv_close_after;
			a->read_rate = h.srv_read_rate;
			a->read_every = h.srv_read_every;
			a->abort_after = h.srv_abort_after;
			App *ap = a.get();
			h.apps[k] = std::move(a);
			if (ap->read_rate)
				At(now + ap->read_every,
				   [this, hp = &h, ap] { ReadTick(*hp, *ap); });
			it = h.apps.find(k);
		}
		App &a = *it->second;
		sgw_tcp_out o;
		sgw_tcp_out_reset(&o);
		sgw_tcp_input(&h.st, &a.c, now, &s, &o);
		AppOut(h, a, o);
		if (o.events & SGW_TCP_EV_CONNECTED)
			Pump(h, a);
	}

	// Send a segment not tied to a connection (RST); src/dst as given.
	void SendSeg(Host &h, const uint8_t *src, const uint8_t *dst, const sgw_tcp_seg &s)
	{
		Pkt p;
		memcpy(p.src, src, 4);
		memcpy(p.dst, dst, 4);
		p.bytes.resize(SGW_TCP_MAX_HDR_LEN);
		uint32_t hl = sgw_tcp_seg_build(p.bytes.data(), p.bytes.size(), &s);
		p.bytes.resize(hl);
		Route(&h, p);
	}

	// Where a packet from a host goes.
	void Route(Host *from, const Pkt &p)
	{
		if (from == &client)
			At(now + lan_delay, [this, p] { GwFromLan(term, p); });
		else
			At(now + wan_delay, [this, p] { GwFromLan(hub, p); });
	}

	// ---- gateways

	void GwOut(Gw &g, uint16_t ch, const sgw_split_out &o)
	{
		auto &t = g.tm[ch];
		for (unsigned id = 0; id < SGW_SPLIT_T__COUNT; id++)
			if (o.timer_set & (1u << id))
				t[id] = o.timer_at[id];
		if (o.events & SGW_SPLIT_EV_CLOSED) {
			g.closed.push_back(ch);
			for (unsigned id = 0; id < SGW_SPLIT_T__COUNT; id++)
				EXPECT_EQ(t[id], kNever) << "timer " << id << " left after CLOSED";
		}
		auto it = g.splits.find(ch);
		if (it != g.splits.end())
			g.max_tx_used = std::max(g.max_tx_used, sgw_relay_used(&it->second->tx));
		if ((o.events & SGW_SPLIT_EV_MORE) && !(o.events & SGW_SPLIT_EV_CLOSED) &&
		    stage_polling) {
			g.stalled.insert(ch);
			Gw *self = &g;
			At(now, [this, self] { PollStalled(*self); });  // the worker's next loop
		}
	}

	void PollStalled(Gw &g)
	{
		std::set<uint16_t> st;
		st.swap(g.stalled);
		for (uint16_t ch : st) {
			auto it = g.splits.find(ch);
			if (it == g.splits.end() || it->second->state == SGW_SPLIT_S_CLOSED)
				continue;
			if (CanSend(g) == 0) {
				g.stalled.insert(ch);
				continue;
			}
			sgw_split_out o;
			sgw_split_poll(&g.env, it->second.get(), now, &o);
			GwOut(g, ch, o);
		}
	}

	sgw_split *NewSplit(Gw &g, uint16_t ch, sgw_split_bufs *b)
	{
		auto &m = g.mem[ch];
		m.assign(g.rx_ring + g.tx_ring, 0);
		b->rx_mem = m.data();
		b->rx_ring = g.rx_ring;
		b->rx_limit = g.rx_limit;
		b->tx_mem = m.data() + g.rx_ring;
		b->tx_ring = g.tx_ring;
		b->tx_limit = g.tx_limit;
		g.splits[ch] = std::make_unique<sgw_split>();
		g.rwcs[ch] = std::make_unique<sgw_rwc>();
		auto &t = g.tm[ch];
		for (auto &x : t)
			x = kNever;
		return g.splits[ch].get();
	}

	void GwFromLan(Gw &g, const Pkt &p)
	{
		sgw_tcp_seg s;
		ASSERT_EQ(sgw_tcp_seg_parse(p.bytes.data(), p.bytes.size(), &s, nullptr),
			  SGW_TCP_PR_OK);
		// find the split: terminal by the client's port (source), hub by destination
		uint16_t cport = g.terminal ? s.sport : s.dport;
		for (auto &kv : g.splits) {
			sgw_split *sp = kv.second.get();
			if (sp->state != SGW_SPLIT_S_CLOSED && sp->addr.sport == cport) {
				sgw_split_out o;
				sgw_split_tcp_input(&g.env, sp, now, &s, &o);
				GwOut(g, kv.first, o);
				return;
			}
		}
		if (!g.terminal ||
		    (s.flags & (SGW_TCP_F_SYN | SGW_TCP_F_ACK | SGW_TCP_F_RST)) != SGW_TCP_F_SYN)
			return;
		sgw_split_addr a;
		memset(&a, 0, sizeof(a));
		memcpy(a.saddr, p.src, 4);
		memcpy(a.daddr, p.dst, 4);
		a.sport = s.sport;
		a.dport = s.dport;
		uint16_t ch = g.next_channel++;
		sgw_split_bufs b;
		sgw_split *sp = NewSplit(g, ch, &b);
		sgw_split_out o;
		ASSERT_EQ(sgw_split_open(&g.env, sp, now, &a, &s, g.mode, ch, 5000000u + s.sport,
					 &b, g.rwcs[ch].get(), &o), 0);
		GwOut(g, ch, o);
	}

	SatDir &DirOf(Gw &g) { return g.terminal ? up : down; }

	uint32_t CanSend(Gw &g, uint16_t ch = 0)
	{
		SatDir &d = DirOf(g);
		uint32_t used = d.Queued(now);
		if (used >= d.queue_cap && ch != 0)
			g.stalled.insert(ch);
		return used >= d.queue_cap ? 0 : d.queue_cap - used;
	}

	int SatSend(Gw &g, uint16_t ch, const sgw_split_iov *iov, unsigned n)
	{
		std::vector<uint8_t> m;
		for (unsigned i = 0; i < n; i++)
			m.insert(m.end(), iov[i].p, iov[i].p + iov[i].len);
		SatDir &d = DirOf(g);
		if (d.Queued(now) + m.size() > d.queue_cap + 0u) {
			g.stalled.insert(ch);
			return -1;
		}
		uint64_t start = std::max(now, d.free_at);
		uint64_t done = start + (uint64_t)(m.size() + 22) * 8 * kSec / d.rate_bps;
		d.free_at = done;
		d.inq.emplace_back(done, (uint32_t)m.size());
		uint64_t arr = done + d.delay;
		if (arr >= d.pause_from && arr < d.pause_to + d.delay)
			arr = d.pause_to + d.delay;  // the outage: held, then repaired in order
		arr = std::max(arr, d.last_arrival);
		d.last_arrival = arr;
		d.msgs++;
		d.bytes += m.size();
		Gw *other = g.terminal ? &hub : &term;
		Gw *self = &g;
		At(arr, [this, other, ch, m] { SatDeliver(*other, ch, m); });
		// the queue drains: let this side's streams send again
		if (stage_polling)
			At(done, [this, self] { PollStalled(*self); });
		else
			At(done, [this, self] { PollAll(*self); });
		return 0;
	}

	void PollAll(Gw &g)
	{
		for (auto &kv : g.splits) {
			if (kv.second->state == SGW_SPLIT_S_CLOSED)
				continue;
			sgw_split_out o;
			sgw_split_poll(&g.env, kv.second.get(), now, &o);
			GwOut(g, kv.first, o);
		}
	}

	void SatDeliver(Gw &g, uint16_t ch, const std::vector<uint8_t> &m)
	{
		auto it = g.splits.find(ch);
		if (it != g.splits.end() && it->second->state != SGW_SPLIT_S_CLOSED) {
			sgw_split_out o;
			sgw_split_stream_input(&g.env, it->second.get(), now, m.data(), m.size(),
					       &o);
			GwOut(g, ch, o);
			return;
		}
		sgw_stream_msg msg;
		if (sgw_stream_decode(m.data(), m.size(), &msg, nullptr) != SGW_STREAM_E_OK ||
		    msg.type != SGW_STREAM_OPEN || g.terminal) {
			g.late++;
			return;
		}
		if (g.refuse_all) {
			EXPECT_EQ(sgw_split_refuse(&g.env, ch, SGW_STREAM_REFUSE_NO_RESOURCES), 0);
			return;
		}
		sgw_split_bufs b;
		sgw_split *sp = NewSplit(g, ch, &b);
		sgw_split_out o;
		ASSERT_EQ(sgw_split_accept(&g.env, sp, now, &msg, ch, 9000000u + msg.sport, &b,
					   g.rwcs[ch].get(), &o), 0);
		GwOut(g, ch, o);
	}

	// io: a segment of a split's leg toward its local peer
	void GwTcpTx(Gw &g, sgw_split *sp, const uint8_t *hdr, uint32_t hlen,
		     const sgw_split_iov *d, unsigned n)
	{
		Pkt p;
		if (g.terminal) {  // toward the client, as the server
			memcpy(p.src, sp->addr.daddr, 4);
			memcpy(p.dst, sp->addr.saddr, 4);
		} else {  // toward the server, as the client
			memcpy(p.src, sp->addr.saddr, 4);
			memcpy(p.dst, sp->addr.daddr, 4);
		}
		p.bytes.assign(hdr, hdr + hlen);
		for (unsigned i = 0; i < n; i++)
			p.bytes.insert(p.bytes.end(), d[i].p, d[i].p + d[i].len);
		Host *h = g.terminal ? &client : &server;
		uint64_t dl = g.terminal ? lan_delay : wan_delay;
		if (g.terminal && drop_to_client && drop_to_client(p)) {
			dropped_to_client++;
			return;
		}
		At(now + dl, [this, h, p] {
			if (h == &client) {
				EXPECT_EQ(memcmp(p.src, kServerIp, 4), 0);
				EXPECT_EQ(memcmp(p.dst, kClientIp, 4), 0);
			} else {
				EXPECT_EQ(memcmp(p.src, kClientIp, 4), 0);
				EXPECT_EQ(memcmp(p.dst, kServerIp, 4), 0);
			}
			HostRecv(*h, p);
		});
	}

	// ---- the clock

	// The next timer deadline over everything; *fire set to run it.
	uint64_t NextTimer(std::function<void()> *fire)
	{
		uint64_t best = kNever;
		auto consider_host = [&](Host &h) {
			for (auto &kv : h.apps) {
				App *a = kv.second.get();
				for (unsigned id = 0; id < SGW_TCP_T__COUNT; id++)
					if (a->tm[id] < best) {
						best = a->tm[id];
						Host *hp = &h;
						*fire = [this, hp, a, id] {
							a->tm[id] = kNever;
							sgw_tcp_out o;
							sgw_tcp_out_reset(&o);
							sgw_tcp_timer(&hp->st, &a->c, now, id, &o);
							AppOut(*hp, *a, o);
						};
					}
			}
		};
		consider_host(client);
		consider_host(server);
		auto consider_gw = [&](Gw &g) {
			for (auto &kv : g.tm)
				for (unsigned id = 0; id < SGW_SPLIT_T__COUNT; id++)
					if (kv.second[id] < best) {
						best = kv.second[id];
						Gw *gp = &g;
						uint16_t ch = kv.first;
						*fire = [this, gp, ch, id] {
							gp->tm[ch][id] = kNever;
							sgw_split_out o;
							sgw_split_timer(&gp->env,
									gp->splits[ch].get(), now,
									id, &o);
							GwOut(*gp, ch, o);
						};
					}
		};
		consider_gw(term);
		consider_gw(hub);
		return best;
	}

	// Run until pred() or the deadline; returns pred()'s value.
	bool RunUntil(uint64_t deadline, const std::function<bool()> &pred)
	{
		for (uint64_t steps = 0; steps < 50000000; steps++) {
			if (pred && pred())
				return true;
			std::function<void()> tfire;
			uint64_t tt = NextTimer(&tfire);
			uint64_t et = q.empty() ? kNever : q.begin()->first;
			uint64_t t = std::min(tt, et);
			if (t == kNever || t > deadline) {
				now = std::max(now, deadline);
				return pred ? pred() : false;
			}
			now = std::max(now, t);
			if (et <= tt) {
				auto it = q.begin();
				Ev e = std::move(it->second);
				q.erase(it);
				e.fn();
			} else {
				tfire();
			}
			for (auto *h : {&client, &server})
				for (auto &kv : h->apps)
					if (kv.second->abort_after != UINT64_MAX &&
					    !kv.second->aborted &&
					    kv.second->acked >= kv.second->abort_after) {
						kv.second->aborted = true;
						sgw_tcp_out o;
						sgw_tcp_out_reset(&o);
						sgw_tcp_abort(&h->st, &kv.second->c, now, &o);
						AppOut(*h, *kv.second, o);
					}
		}
		return false;
	}

	// ---- setup

	void InitHost(Host &h, bool is_client);
	void InitGw(Gw &g, bool terminal, const sgw_split_conf &sc);

	Sim(const sgw_split_conf *sc_in = nullptr)
	{
		sgw_split_conf sc;
		sgw_split_conf_default(&sc);
		if (sc_in)
			sc = *sc_in;
		InitHost(client, true);
		InitHost(server, false);
		InitGw(term, true, sc);
		InitGw(hub, false, sc);
	}

	// A client connection from port cport: sends `up` bytes (then shuts down
	// if close), expects the server's bytes.
	App *Connect(uint16_t cport, uint64_t upload, bool close)
	{
		auto a = std::make_unique<App>();
		sgw_tcp_conn_init(&client.st, &a->c, 3000000u + cport, cport, kServerPort);
		a->c.user = Key(cport, kServerPort);
		a->tx_seed = 1000u + cport;
		a->rx_seed = 2000u + cport;
		a->to_send = upload;
		a->shutdown_after_send = close;
		App *ap = a.get();
		client.apps[Key(cport, kServerPort)] = std::move(a);
		sgw_tcp_out o;
		sgw_tcp_out_reset(&o);
		EXPECT_EQ(sgw_tcp_connect(&client.st, &ap->c, now, &o), 0);
		AppOut(client, *ap, o);
		Pump(client, *ap);
		return ap;
	}

	App *ServerApp(uint16_t cport)
	{
		auto it = server.apps.find(Key(kServerPort, cport));
		return it == server.apps.end() ? nullptr : it->second.get();
	}

	sgw_split *Split(Gw &g, uint16_t cport)
	{
		for (auto &kv : g.splits)
			if (kv.second->addr.sport == cport)
				return kv.second.get();
		return nullptr;
	}
};

// ---- host ops: a plain application on sgw_tcp
void
HostTx(void *ctx, sgw_tcp_conn *c, const uint8_t *hdr, uint32_t hlen, uint32_t off, uint32_t len)
{
	Host *h = static_cast<Host *>(ctx);
	App *a = h->apps[c->user].get();
	Pkt p;
	if (h->is_client) {
		memcpy(p.src, kClientIp, 4);
		memcpy(p.dst, kServerIp, 4);
	} else {
		memcpy(p.src, kServerIp, 4);
		memcpy(p.dst, kClientIp, 4);
	}
	p.bytes.assign(hdr, hdr + hlen);
	for (uint32_t i = 0; i < len; i++)
		p.bytes.push_back(Pattern(a->tx_seed, a->acked + off + i));
	EXPECT_LE(a->acked + off + len, a->appended);
	h->sim->Route(h, p);
}

void
HostRxData(void *ctx, sgw_tcp_conn *c, uint32_t off, const uint8_t *p, uint32_t len)
{
	Host *h = static_cast<Host *>(ctx);
	App *a = h->apps[c->user].get();
	EXPECT_LE((a->inorder - a->read) + off + len, a->rx_cap);
	for (uint32_t i = 0; i < len; i++)
		a->ring[(a->inorder + off + i) % a->rx_cap] = p[i];
}

void
HostRxAdvance(void *ctx, sgw_tcp_conn *c, uint32_t n)
{
	Host *h = static_cast<Host *>(ctx);
	App *a = h->apps[c->user].get();
	for (uint32_t i = 0; i < n; i++)
		if (a->ring[(a->inorder + i) % a->rx_cap] != Pattern(a->rx_seed, a->inorder + i))
			a->rx_bad++;
	a->inorder += n;
	if (a->read_rate == 0)
		a->read = a->inorder;
}

uint32_t
HostRxSpace(void *ctx, sgw_tcp_conn *c)
{
	Host *h = static_cast<Host *>(ctx);
	App *a = h->apps[c->user].get();
	return a->rx_cap - (uint32_t)(a->inorder - a->read);
}

void
HostTxAcked(void *ctx, sgw_tcp_conn *c, uint32_t n)
{
	Host *h = static_cast<Host *>(ctx);
	App *a = h->apps[c->user].get();
	a->acked += n;
	// more room in the app's send buffer: write on (scheduled: not inside the endpoint)
	if (a->appended < a->to_send)
		h->sim->At(h->sim->now, [h, a] { h->sim->Pump(*h, *a); });
}

void
Sim::InitHost(Host &h, bool is_client)
{
	static const sgw_tcp_ops ops = {HostTx, HostRxData, HostRxAdvance, HostRxSpace,
					HostTxAcked};
	h.sim = this;
	h.is_client = is_client;
	sgw_tcp_conf conf;
	sgw_tcp_conf_default(&conf);
	conf.rcv_buf = 256 * 1024;
	conf.syn_retries = 3;
	ASSERT_EQ(sgw_tcp_stack_init(&h.st, &conf, &ops, &h), 0);
}

// ---- gateway ops
uint32_t
GwCanSend(void *ctx, const sgw_split *sp, uint64_t)
{
	Gw *g = static_cast<Gw *>(ctx);
	return g->sim->CanSend(*g, sp->channel);
}

int
GwSatSend(void *ctx, sgw_split *, uint16_t ch, const sgw_split_iov *iov, unsigned n)
{
	Gw *g = static_cast<Gw *>(ctx);
	return g->sim->SatSend(*g, ch, iov, n);
}

void
GwTcpTxOp(void *ctx, sgw_split *sp, const uint8_t *hdr, uint32_t hlen, const sgw_split_iov *d,
	  unsigned n)
{
	Gw *g = static_cast<Gw *>(ctx);
	g->sim->GwTcpTx(*g, sp, hdr, hlen, d, n);
}

void
Sim::InitGw(Gw &g, bool terminal, const sgw_split_conf &sc)
{
	static const sgw_split_io_ops io = {GwTcpTxOp};
	static const sgw_split_sat_ops sat = {GwCanSend, GwSatSend};
	g.sim = this;
	g.terminal = terminal;
	sgw_tcp_conf conf;
	sgw_tcp_conf_default(&conf);
	conf.syn_retries = 2;  // the hub's leg gives up on an unreachable server in 7 s
	ASSERT_EQ(sgw_tcp_stack_init(&g.st, &conf, &sgw_split_tcp_ops, &g.env), 0);
	ASSERT_EQ(sgw_split_env_init(&g.env, &sc, &g.st, &io, &sat, &g), 0);
}

bool
RxDone(const App *a, uint64_t n)
{
	return a != nullptr && a->inorder >= n;
}

// ------------------------------------------------------------------ tests

TEST(SplitEnv, InitChecks)
{
	sgw_split_conf sc;
	sgw_split_conf_default(&sc);
	EXPECT_EQ(sgw_split_conf_check(&sc), nullptr);
	sc.max_msg = 5;
	EXPECT_STREQ(sgw_split_conf_check(&sc), "max_msg");
	sgw_split_conf_default(&sc);
	sgw_tcp_stack st;
	sgw_tcp_conf tc;
	sgw_tcp_conf_default(&tc);
	sgw_split_env env;
	static const sgw_split_io_ops io = {GwTcpTxOp};
	static const sgw_split_sat_ops sat = {GwCanSend, GwSatSend};
	// the stack's ctx must be the env
	ASSERT_EQ(sgw_tcp_stack_init(&st, &tc, &sgw_split_tcp_ops, nullptr), 0);
	EXPECT_EQ(sgw_split_env_init(&env, &sc, &st, &io, &sat, nullptr), -1);
	ASSERT_EQ(sgw_tcp_stack_init(&st, &tc, &sgw_split_tcp_ops, &env), 0);
	EXPECT_EQ(sgw_split_env_init(&env, &sc, &st, &io, &sat, nullptr), 0);
	for (int i = 0; i < SGW_SPLIT_C__COUNT; i++)
		EXPECT_STRNE(sgw_split_ctr_name(i), "unknown");
}

struct Transfer {
	uint8_t mode;
	bool download;
};

class SplitTransfer : public ::testing::TestWithParam<Transfer> {};

// Byte-exact transfers through both halves, both directions, both modes,
// then an orderly close that frees both halves.
TEST_P(SplitTransfer, ByteExactAndCloses)
{
	const Transfer tp = GetParam();
	Sim sim;
	sim.term.mode = tp.mode;
	const uint64_t big = 3u << 20;  // 3 MB
	const uint64_t small = 200;
	sim.server.srv_send = tp.download ? big : small;
	App *c = sim.Connect(40001, tp.download ? small : big, true);
	bool ok = sim.RunUntil(120 * kSec, [&] {
		App *s = sim.ServerApp(40001);
		auto ended = [](const App *a) {
			return a->c.state == SGW_TCP_TIME_WAIT || a->c.state == SGW_TCP_CLOSED;
		};
		return s && RxDone(c, sim.server.srv_send) &&
		       RxDone(s, tp.download ? small : big) && ended(c) && ended(s);
	});
	App *s = sim.ServerApp(40001);
	printf("t=%.3f s client rx %llu state %s, server rx %llu state %s\n",
	       (double)sim.now / kSec,
	       (unsigned long long)c->inorder, sgw_tcp_state_name(c->c.state),
	       (unsigned long long)(s ? s->inorder : 0), s ? sgw_tcp_state_name(s->c.state) : "-");
	ASSERT_TRUE(ok);
	EXPECT_EQ(c->rx_bad, 0u);
	EXPECT_EQ(s->rx_bad, 0u);
	EXPECT_EQ(c->inorder, sim.server.srv_send);
	EXPECT_EQ(s->inorder, tp.download ? small : big);
	// transparency: the server saw the client's address and port
	ASSERT_EQ(sim.server.peer_addrs.size(), 1u);
	EXPECT_EQ(memcmp(sim.server.peer_addrs[0].data(), kClientIp, 4), 0);
	EXPECT_EQ(sim.server.peer_ports[0], 40001);
	EXPECT_EQ(c->events & SGW_TCP_EV_RESET, 0);
	EXPECT_EQ(s->events & SGW_TCP_EV_RESET, 0);
	// both halves end (the hub's leg closed actively: TIME-WAIT, 2 MSL = 60 s)
	ASSERT_TRUE(sim.RunUntil(sim.now + 70 * kSec, [&] {
		return sim.term.closed.size() == 1 && sim.hub.closed.size() == 1;
	}));
	const uint64_t *tc = sim.term.env.ctr, *hc = sim.hub.env.ctr;
	uint64_t up = tp.download ? small : big, down = sim.server.srv_send;
	EXPECT_EQ(tc[SGW_SPLIT_C_DATA_BYTES_OUT], up);
	EXPECT_EQ(hc[SGW_SPLIT_C_DATA_BYTES_IN], up);
	EXPECT_EQ(hc[SGW_SPLIT_C_DATA_BYTES_OUT], down);
	EXPECT_EQ(tc[SGW_SPLIT_C_DATA_BYTES_IN], down);
	EXPECT_EQ(tc[SGW_SPLIT_C_FIN_OUT], 1u);
	EXPECT_EQ(hc[SGW_SPLIT_C_FIN_OUT], 1u);
	EXPECT_EQ(tc[SGW_SPLIT_C_PROTO_ERR] + hc[SGW_SPLIT_C_PROTO_ERR], 0u);
	EXPECT_EQ(tc[SGW_SPLIT_C_RST_OUT] + hc[SGW_SPLIT_C_RST_OUT], 0u);
	EXPECT_EQ(sim.term.late + sim.hub.late, 0u);
	// no relay overflowed; the hub's tx relay never held more than its size
	for (Gw *g : {&sim.term, &sim.hub}) {
		sgw_split *sp = g->splits.begin()->second.get();
		EXPECT_EQ(sp->rx.overflows + sp->tx.overflows, 0u);
		EXPECT_LE(sp->tx.occ_max, sp->tx.limit);
		EXPECT_LE(sp->rx.occ_max, sp->rx.limit);
		EXPECT_EQ(g->env.ctr[SGW_SPLIT_C_RELAY_CLIPPED], 0u);
	}
	// what the header elimination saved: the bytes as 1448-byte TCP/IPv4
	// segments with timestamps (52 header bytes each) against the DATA
	// messages' 5-byte headers
	uint64_t msgs = tc[SGW_SPLIT_C_DATA_MSGS_OUT] + hc[SGW_SPLIT_C_DATA_MSGS_OUT];
	uint64_t segs = (up + 1447) / 1448 + (down + 1447) / 1448;
	printf("mode %s %s: %llu bytes in %llu DATA messages (%llu header bytes), as TCP "
	       "%llu segments (%llu header bytes); %llu CREDITs; sat bytes up %llu down %llu\n",
	       tp.mode == SGW_SPLIT_SPOOFED ? "spoofed" : "end-to-end",
	       tp.download ? "download" : "upload", (unsigned long long)(up + down),
	       (unsigned long long)msgs, (unsigned long long)(msgs * 5),
	       (unsigned long long)segs, (unsigned long long)(segs * 52),
	       (unsigned long long)(tc[SGW_SPLIT_C_CREDIT_OUT] + hc[SGW_SPLIT_C_CREDIT_OUT]),
	       (unsigned long long)sim.up.bytes, (unsigned long long)sim.down.bytes);
}

INSTANTIATE_TEST_SUITE_P(
	Modes, SplitTransfer,
	::testing::Values(Transfer{SGW_SPLIT_END_TO_END, true},
			  Transfer{SGW_SPLIT_END_TO_END, false},
			  Transfer{SGW_SPLIT_SPOOFED, true}, Transfer{SGW_SPLIT_SPOOFED, false}),
	[](const ::testing::TestParamInfo<Transfer> &i) {
		return std::string(i.param.mode == SGW_SPLIT_SPOOFED ? "Spoofed" : "EndToEnd") +
		       (i.param.download ? "Download" : "Upload");
	});

// Found end to end with Linux peers: a half whose server has sent everything
// drains its rx relay burst_msgs messages per call; with a caller that polls
// only when asked (dataplane/split.c: no room, a refused send), the rest stayed
// in the relay with credit to spare and the download hung. The half now says
// SGW_SPLIT_EV_MORE when its budget ran out with more to send.
TEST(SplitTransfer, StagePollingDrainsTheRelay)
{
	for (bool download : {true, false}) {
		Sim sim;
		sim.stage_polling = true;
		// relays of 1 MB toward the satellite and 4 messages per call: many
		// calls' worth in the relay when the sender is done (the e2e test had
		// 1 MB relays and the default 64)
		for (Gw *g : {&sim.term, &sim.hub}) {
			g->rx_ring = g->rx_limit = 1u << 20;
			g->env.conf.burst_msgs = 4;
		}
		const uint64_t big = 3u << 20, small = 200;
		sim.server.srv_send = download ? big : small;
		App *c = sim.Connect(40002, download ? small : big, true);
		bool ok = sim.RunUntil(60 * kSec, [&] {
			App *s = sim.ServerApp(40002);
			return s && RxDone(c, sim.server.srv_send) &&
			       RxDone(s, download ? small : big);
		});
		App *s = sim.ServerApp(40002);
		printf("%s: t=%.3f s client rx %llu, server rx %llu\n",
		       download ? "download" : "upload", (double)sim.now / kSec,
		       (unsigned long long)c->inorder, (unsigned long long)(s ? s->inorder : 0));
		ASSERT_TRUE(ok);
		EXPECT_EQ(c->rx_bad, 0u);
		EXPECT_EQ(s->rx_bad, 0u);
		EXPECT_EQ(c->events & SGW_TCP_EV_RESET, 0);
	}
}

// End to end: the client's SYN-ACK comes only after the server answered (one
// satellite round trip later); spoofed: at once.
TEST(SplitHandshake, EndToEndWaitsSpoofedAnswersAtOnce)
{
	for (uint8_t mode : {SGW_SPLIT_END_TO_END, SGW_SPLIT_SPOOFED}) {
		Sim sim;
		sim.term.mode = mode;
		App *c = sim.Connect(40002, 0, false);
		ASSERT_TRUE(sim.RunUntil(5 * kSec,
					 [&] { return c->c.state == SGW_TCP_ESTABLISHED; }));
		uint64_t t = sim.now;
		if (mode == SGW_SPLIT_END_TO_END) {
			// client -> terminal 1 ms, OPEN 270 ms, hub -> server -> hub 20 ms,
			// OPEN_OK 270 ms, terminal -> client 1 ms
			EXPECT_GE(t, 560 * kMs);
			EXPECT_LE(t, 600 * kMs);
			EXPECT_NE(sim.ServerApp(40002), nullptr);
		} else {
			EXPECT_LE(t, 5 * kMs);
			// the server has not seen it yet
			EXPECT_EQ(sim.ServerApp(40002), nullptr);
		}
		EXPECT_EQ(sim.term.env.ctr[SGW_SPLIT_C_OPENS], 1u);
		EXPECT_EQ(sim.term.env.ctr[SGW_SPLIT_C_OPENS_SPOOFED],
			  mode == SGW_SPLIT_SPOOFED ? 1u : 0u);
	}
}

// Spoofed: the client's request goes right behind OPEN and is never held for
// packing: the server has it one satellite hop plus its own handshake later.
TEST(SplitHandshake, SpoofedRequestNotDelayed)
{
	Sim sim;
	sim.term.mode = SGW_SPLIT_SPOOFED;
	sim.Connect(40014, 200, false);
	ASSERT_TRUE(sim.RunUntil(2 * kSec, [&] { return RxDone(sim.ServerApp(40014), 200); }));
	// SYN/SYN-ACK/ACK on the LAN 3 ms, OPEN + DATA 270 ms (+ serialisation),
	// the hub's handshake with the server 20 ms, the data 10 ms
	EXPECT_LE(sim.now, 310 * kMs);
	EXPECT_GE(sim.now, 300 * kMs);
}

// A server that refuses (RST to the SYN). End to end: the client gets a RST
// to its SYN (ECONNREFUSED), as without satgw. Spoofed: connected, then RST.
TEST(SplitHandshake, RefusedLooksLikeRefused)
{
	for (uint8_t mode : {SGW_SPLIT_END_TO_END, SGW_SPLIT_SPOOFED}) {
		Sim sim;
		sim.term.mode = mode;
		sim.server.listen = false;
		App *c = sim.Connect(40003, 100, false);
		ASSERT_TRUE(sim.RunUntil(10 * kSec, [&] { return c->c.state == SGW_TCP_CLOSED; }));
		EXPECT_TRUE(c->events & SGW_TCP_EV_RESET);
		if (mode == SGW_SPLIT_END_TO_END) {
			EXPECT_EQ(c->reset_reason, SGW_TCP_RR_REFUSED);
			EXPECT_EQ(c->events & SGW_TCP_EV_CONNECTED, 0);
		} else {
			EXPECT_EQ(c->reset_reason, SGW_TCP_RR_PEER);
			EXPECT_TRUE(c->events & SGW_TCP_EV_CONNECTED);
		}
		EXPECT_EQ(sim.server.rst_sent, 1u);
		EXPECT_EQ(sim.hub.env.ctr[SGW_SPLIT_C_REFUSED_OUT], 1u);
		EXPECT_EQ(sim.term.env.ctr[SGW_SPLIT_C_REFUSED_IN], 1u);
		ASSERT_TRUE(sim.RunUntil(sim.now + 5 * kSec, [&] {
			return sim.term.closed.size() == 1 && sim.hub.closed.size() == 1;
		}));
	}
}

// No resources at the hub: OPEN_REFUSED without a split; the client gets a RST.
TEST(SplitHandshake, NoResourcesAtTheHub)
{
	Sim sim;
	sim.hub.refuse_all = true;
	App *c = sim.Connect(40004, 100, false);
	ASSERT_TRUE(sim.RunUntil(10 * kSec, [&] { return c->c.state == SGW_TCP_CLOSED; }));
	EXPECT_EQ(c->reset_reason, SGW_TCP_RR_REFUSED);
	EXPECT_EQ(sim.server.syn_seen, 0u);
	EXPECT_EQ(sim.term.closed.size(), 1u);
}

// An unreachable server (SYNs vanish). End to end: the client's SYN is never
// answered, neither SYN-ACK nor RST, as without satgw; its own retries run out.
TEST(SplitHandshake, UnreachableStaysUnanswered)
{
	Sim sim;
	sim.server.drop_syn = true;
	App *c = sim.Connect(40005, 100, false);
	// the hub's leg gives up after 1 + 2 + 4 s
	ASSERT_TRUE(sim.RunUntil(20 * kSec, [&] {
		return sim.term.env.ctr[SGW_SPLIT_C_REFUSED_IN] == 1;
	}));
	EXPECT_EQ(sim.hub.env.ctr[SGW_SPLIT_C_REFUSED_OUT], 1u);
	EXPECT_EQ(c->c.state, SGW_TCP_SYN_SENT);
	EXPECT_EQ(c->events, 0);
	EXPECT_EQ(sim.server.syn_seen, 3u);  // the hub's SYN and its 2 retries
	EXPECT_GE(sim.term.env.ctr[SGW_SPLIT_C_SYN_HELD_DUP], 1u);  // the client retried meanwhile
	// the client's later SYN retries open new attempts; they fail the same way,
	// and the client ends by itself with a timeout, never a RST
	ASSERT_TRUE(sim.RunUntil(sim.now + 60 * kSec,
				 [&] { return c->c.state == SGW_TCP_CLOSED; }));
	EXPECT_EQ(c->reset_reason, SGW_TCP_RR_TIMEOUT);
}

// The server resets mid-download: the client gets a RST; every byte it got
// before is right (a prefix, never corrupted).
TEST(SplitReset, ServerDisappearsMidTransfer)
{
	Sim sim;
	sim.server.srv_send = 4u << 20;
	sim.server.srv_abort_after = 300000;
	App *c = sim.Connect(40006, 100, false);
	ASSERT_TRUE(sim.RunUntil(60 * kSec, [&] { return c->c.state == SGW_TCP_CLOSED; }));
	EXPECT_EQ(c->reset_reason, SGW_TCP_RR_PEER);
	EXPECT_EQ(c->rx_bad, 0u);
	EXPECT_GT(c->inorder, 0u);
	EXPECT_LT(c->inorder, 4u << 20);
	EXPECT_EQ(sim.hub.env.ctr[SGW_SPLIT_C_RST_OUT], 1u);
	EXPECT_EQ(sim.term.env.ctr[SGW_SPLIT_C_RST_IN], 1u);
	ASSERT_TRUE(sim.RunUntil(sim.now + 5 * kSec, [&] {
		return sim.term.closed.size() == 1 && sim.hub.closed.size() == 1;
	}));
}

// The client aborts mid-upload: the server gets the RST.
TEST(SplitReset, ClientAbortReachesServer)
{
	Sim sim;
	App *c = sim.Connect(40007, 4u << 20, false);
	c->abort_after = 200000;
	ASSERT_TRUE(sim.RunUntil(60 * kSec, [&] {
		App *s = sim.ServerApp(40007);
		return s && s->c.state == SGW_TCP_CLOSED;
	}));
	App *s = sim.ServerApp(40007);
	EXPECT_EQ(s->reset_reason, SGW_TCP_RR_PEER);
	EXPECT_EQ(s->rx_bad, 0u);
	EXPECT_EQ(sim.term.env.ctr[SGW_SPLIT_C_RST_OUT], 1u);
}

// Half-close: the client sends its request and FIN at once; the server sees
// the FIN after the request, then answers 1 MB and closes; all of it arrives.
TEST(SplitClose, HalfCloseCarriedInOrder)
{
	Sim sim;
	sim.server.srv_send = 1u << 20;
	App *c = sim.Connect(40008, 5000, true);
	ASSERT_TRUE(sim.RunUntil(60 * kSec, [&] {
		App *s = sim.ServerApp(40008);
		return s && (s->events & SGW_TCP_EV_PEER_FIN);
	}));
	App *s = sim.ServerApp(40008);
	EXPECT_EQ(s->inorder, 5000u);  // every byte before the FIN
	EXPECT_EQ(s->rx_bad, 0u);
	ASSERT_TRUE(sim.RunUntil(sim.now + 60 * kSec, [&] {
		return (c->events & SGW_TCP_EV_PEER_FIN) && c->inorder == (1u << 20);
	}));
	EXPECT_EQ(c->rx_bad, 0u);
	EXPECT_EQ(c->events & SGW_TCP_EV_RESET, 0);
}

// Credit: a slow server behind the hub. Its relay buffer fills, the terminal
// stops sending on that stream (credit stalls), nothing overflows; a second
// stream keeps flowing at full speed meanwhile.
TEST(SplitFlowControl, SlowServerStallsOnlyItsStream)
{
	Sim sim;
	sim.server.srv_read_rate = 500;  // 50 KB/s at the application
	sim.server.srv_send = 0;
	// the slow stream's relay at the hub: 128 KB; the terminal's: 64 KB
	sim.hub.tx_ring = sim.hub.tx_limit = 131072;
	sim.term.rx_ring = sim.term.rx_limit = 65536;
	const uint64_t slow_len = 600000;
	App *slow = sim.Connect(40009, slow_len, true);
	ASSERT_TRUE(sim.RunUntil(5 * kSec, [&] { return sim.ServerApp(40009) != nullptr; }));
	// the second one: 2 MB relays, its server reads at once
	sim.server.srv_read_rate = 0;
	sim.hub.tx_ring = sim.hub.tx_limit = 2u << 20;
	sim.term.rx_ring = sim.term.rx_limit = 262144;
	App *fast = sim.Connect(40010, 2u << 20, true);
	ASSERT_TRUE(sim.RunUntil(60 * kSec,
				 [&] { return RxDone(sim.ServerApp(40010), 2u << 20); }));
	uint64_t t_fast = sim.now;
	App *s_slow = sim.ServerApp(40009);
	// the slow one is far from done: its bytes are held back by credit, not lost
	EXPECT_LT(s_slow->inorder, slow_len);
	sgw_split *hub_slow = sim.Split(sim.hub, 40009);
	sgw_split *term_slow = sim.Split(sim.term, 40009);
	ASSERT_NE(hub_slow, nullptr);
	EXPECT_GT(sim.term.env.ctr[SGW_SPLIT_C_CREDIT_STALL], 0u);
	EXPECT_LE(hub_slow->tx.occ_max, hub_slow->tx.limit);
	EXPECT_EQ(hub_slow->tx.overflows, 0u);
	// the terminal's relay for it filled: the client was held by its window
	// (to within the window's rounding: scale 7, SWS steps of one MSS)
	EXPECT_GE(term_slow->rx.occ_max, term_slow->rx.limit - 1460);
	EXPECT_EQ(term_slow->rx.overflows, 0u);
	printf("fast stream: 2 MB in %.2f s while the slow one moved %llu bytes\n",
	       (double)t_fast / kSec, (unsigned long long)s_slow->inorder);
	// at 50 KB/s the slow one needs ~12 s: it completes, exact
	ASSERT_TRUE(sim.RunUntil(sim.now + 60 * kSec, [&] { return RxDone(s_slow, slow_len); }));
	EXPECT_EQ(s_slow->rx_bad, 0u);
	EXPECT_EQ(sim.hub.env.ctr[SGW_SPLIT_C_PROTO_ERR], 0u);
	EXPECT_EQ(slow->rx_bad, 0u);
	EXPECT_EQ(fast->rx_bad, 0u);
	// the hub's relay for it did fill (to within the 32 KB credit step and
	// what the server read while the credit crossed), never beyond
	EXPECT_GE(hub_slow->tx.occ_max, hub_slow->tx.limit - 32768 - 30000);
	EXPECT_LE(hub_slow->tx.occ_max, hub_slow->tx.limit);
}

// An outage of 10 s on the satellite mid-download: held, then delivered in
// order; byte-exact, no reset.
TEST(SplitOutage, TenSecondPause)
{
	Sim sim;
	sim.server.srv_send = 4u << 20;
	sim.down.pause_from = 1 * kSec;
	sim.down.pause_to = 11 * kSec;
	sim.up.pause_from = 1 * kSec;
	sim.up.pause_to = 11 * kSec;
	App *c = sim.Connect(40011, 100, true);
	ASSERT_TRUE(sim.RunUntil(120 * kSec, [&] { return RxDone(c, 4u << 20); }));
	EXPECT_GT(sim.now, 11 * kSec);
	EXPECT_EQ(c->rx_bad, 0u);
	EXPECT_EQ(c->events & SGW_TCP_EV_RESET, 0);
	App *s = sim.ServerApp(40011);
	EXPECT_EQ(s->events & SGW_TCP_EV_RESET, 0);
}

// Idle timeout: an established connection with no traffic is reset both ways.
TEST(SplitIdle, ResetsBothEnds)
{
	sgw_split_conf sc;
	sgw_split_conf_default(&sc);
	sc.idle_ns = 20 * kSec;
	Sim sim(&sc);
	App *c = sim.Connect(40012, 100, false);
	ASSERT_TRUE(sim.RunUntil(5 * kSec, [&] {
		App *s = sim.ServerApp(40012);
		return s && RxDone(s, 100);
	}));
	EXPECT_EQ(c->c.state, SGW_TCP_ESTABLISHED);
	ASSERT_TRUE(sim.RunUntil(60 * kSec, [&] {
		App *s = sim.ServerApp(40012);
		return c->c.state == SGW_TCP_CLOSED && s->c.state == SGW_TCP_CLOSED;
	}));
	EXPECT_GE(sim.now, 20 * kSec);
	EXPECT_LE(sim.now, 22 * kSec);
	EXPECT_EQ(c->reset_reason, SGW_TCP_RR_PEER);
	EXPECT_EQ(sim.ServerApp(40012)->reset_reason, SGW_TCP_RR_PEER);
	EXPECT_GE(sim.term.env.ctr[SGW_SPLIT_C_IDLE_TIMEOUT] +
		      sim.hub.env.ctr[SGW_SPLIT_C_IDLE_TIMEOUT], 1u);
	ASSERT_TRUE(sim.RunUntil(sim.now + 5 * kSec, [&] {
		return sim.term.closed.size() == 1 && sim.hub.closed.size() == 1;
	}));
}

// A hostile or broken peer on the channel: bad messages reset the stream
// (RST both ways), never place a byte at a wrong offset.
TEST(SplitProtocol, BadMessagesReset)
{
	const std::vector<std::vector<uint8_t>> bad = {
		{4, 0, 0, 0, 9, 'x'},         // DATA at the wrong offset
		{5, 0, 0, 0, 7},              // FIN at the wrong offset
		{9},                          // undecodable
		{2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1},  // OPEN_OK twice
		{7, 0x7f, 0xff, 0xff, 0xff},  // credit far beyond any relay
	};
	for (size_t i = 0; i < bad.size(); i++) {
		SCOPED_TRACE(i);
		Sim sim;
		App *c = sim.Connect(40013, 0, false);
		ASSERT_TRUE(sim.RunUntil(5 * kSec,
					 [&] { return c->c.state == SGW_TCP_ESTABLISHED; }));
		sgw_split *sp = sim.Split(sim.term, 40013);
		ASSERT_NE(sp, nullptr);
		sgw_split_out o;
		sgw_split_stream_input(&sim.term.env, sp, sim.now, bad[i].data(), bad[i].size(),
				       &o);
		sim.GwOut(sim.term, sp->channel, o);
		EXPECT_EQ(sim.term.env.ctr[SGW_SPLIT_C_PROTO_ERR], 1u);
		ASSERT_TRUE(sim.RunUntil(sim.now + 5 * kSec, [&] {
			App *s = sim.ServerApp(40013);
			return c->c.state == SGW_TCP_CLOSED && s && s->c.state == SGW_TCP_CLOSED;
		}));
		EXPECT_EQ(c->inorder, 0u);
		// later messages on the dead stream are dropped and counted
		const uint8_t data[6] = {4, 0, 0, 0, 0, 'y'};
		sgw_split_stream_input(&sim.term.env, sp, sim.now, data, sizeof(data), &o);
		EXPECT_GE(sim.term.env.ctr[SGW_SPLIT_C_LATE_MSG], 1u);
	}
}

// Many connections at once (download each), all byte exact, through one
// session's shared send queue.
TEST(SplitMany, TwentyConcurrentDownloads)
{
	Sim sim;
	sim.server.srv_send = 300000;
	sim.term.tx_ring = sim.term.tx_limit = 262144;
	sim.hub.tx_ring = sim.hub.tx_limit = 262144;
	std::vector<App *> cs;
	for (uint16_t i = 0; i < 20; i++)
		cs.push_back(sim.Connect(41000 + i, 50, true));
	ASSERT_TRUE(sim.RunUntil(120 * kSec, [&] {
		for (App *c : cs)
			if (!RxDone(c, 300000))
				return false;
		return true;
	}));
	for (App *c : cs)
		EXPECT_EQ(c->rx_bad, 0u);
	EXPECT_EQ(sim.hub.env.ctr[SGW_SPLIT_C_PROTO_ERR] + sim.term.env.ctr[SGW_SPLIT_C_PROTO_ERR],
		  0u);
}

// RWND anti-freeze (seed 003): the client's window is closed by a full
// relay (slow satellite); the window update that reopens it is lost; the
// periodic check sends a forced duplicate ACK and the upload goes on.
TEST(SplitRelay, AntiFreezeRecoversLostWindowUpdate)
{
	Sim sim;
	// the server reads 32 KB every 2 s: the hub's relay (64 KB) is full, the
	// terminal's (64 KB) too; each read lets one credit and one drain through
	sim.server.srv_read_rate = 32768;
	sim.server.srv_read_every = 2 * kSec;
	sim.hub.tx_ring = sim.hub.tx_limit = 65536;
	sim.term.rx_ring = sim.term.rx_limit = 65536;
	uint16_t last_win = 1;
	int drops = 0;
	sim.drop_to_client = [&](const Pkt &p) {
		sgw_tcp_seg s;
		if (sgw_tcp_seg_parse(p.bytes.data(), p.bytes.size(), &s, nullptr) !=
		    SGW_TCP_PR_OK)
			return false;
		bool drop = last_win == 0 && s.win > 0 && s.len == 0 && drops < 3;
		last_win = s.win;
		if (drop) {
			drops++;
			last_win = 0;  // the client still believes the window is zero
		}
		return drop;
	};
	const uint64_t len = 700000;
	App *c = sim.Connect(40020, len, true);
	ASSERT_TRUE(sim.RunUntil(120 * kSec, [&] {
		App *s = sim.ServerApp(40020);
		return s && RxDone(s, len);
	}));
	EXPECT_EQ(drops, 3);
	EXPECT_GE(sim.term.env.ctr[SGW_SPLIT_C_ANTI_FREEZE], 1u);
	// each of the three dropped updates followed a zero window the leg sent
	EXPECT_GE(sim.term.st.ctr[SGW_TCP_C_ZERO_WND_OUT], 3u);
	EXPECT_EQ(sim.ServerApp(40020)->rx_bad, 0u);
	EXPECT_EQ(sim.term.st.ctr[SGW_TCP_C_RX_CLIPPED], 0u);  // RWND: nothing beyond the relay
	sgw_split *sp = sim.Split(sim.term, 40020);
	EXPECT_EQ(sp->rx.overflows, 0u);
	EXPECT_EQ(c->rx_bad, 0u);
	printf("anti-freeze updates %llu, client persist probes %llu, zero windows sent %llu\n",
	       (unsigned long long)sim.term.env.ctr[SGW_SPLIT_C_ANTI_FREEZE],
	       (unsigned long long)sim.client.st.ctr[SGW_TCP_C_PERSIST_PROBES],
	       (unsigned long long)sim.term.st.ctr[SGW_TCP_C_ZERO_WND_OUT]);
}

// The three schemes on the terminal's leg, an upload into a slow satellite:
// all deliver every byte; RWND never lets a byte beyond the relay; PETRA and
// ACKRES withhold ACKs above b_th.
TEST(SplitRelay, SchemesSelectable)
{
	for (uint8_t scheme : {SGW_RWC_RWND, SGW_RWC_PETRA, SGW_RWC_ACKRES}) {
		SCOPED_TRACE(sgw_rwc_scheme_name(scheme));
		sgw_split_conf sc;
		sgw_split_conf_default(&sc);
		sc.rwc.scheme = scheme;
		sc.rwc.b_th = 16384;
		sc.rwc.rto_min_ns = 200 * kMs;  // the client's (sgw_tcp's, as Linux) RTO floor
		Sim sim(&sc);
		sim.up.rate_bps = 2000000;
		sim.term.rx_ring = sim.term.rx_limit = 65536;
		App *c = sim.Connect(40021, 1u << 20, true);
		ASSERT_TRUE(sim.RunUntil(120 * kSec, [&] {
			App *s = sim.ServerApp(40021);
			return s && RxDone(s, 1u << 20);
		}));
		EXPECT_EQ(sim.ServerApp(40021)->rx_bad, 0u);
		EXPECT_EQ(c->rx_bad, 0u);
		sgw_split *sp = sim.Split(sim.term, 40021);
		uint64_t clipped = sim.term.st.ctr[SGW_TCP_C_RX_CLIPPED];
		uint64_t withheld = sim.term.env.ctr[SGW_SPLIT_C_ACKS_WITHHELD];
		if (scheme == SGW_RWC_RWND) {
			EXPECT_EQ(clipped, 0u);
			EXPECT_EQ(withheld, 0u);
		} else {
			EXPECT_GT(withheld, 0u);
		}
		EXPECT_LE(sp->rx.occ_max, sp->rx.limit);
		sgw_rwc *rwc = sim.term.rwcs.begin()->second.get();
		if (scheme == SGW_RWC_ACKRES) {
			// the estimator gets path samples from the timestamps echoed
			EXPECT_GT(rwc->st.rtt_samples, 0u);
		}
		printf("%s: 1 MB up in %.2f s, ACKs withheld %llu, bytes beyond the relay %llu, "
		       "client RTOs %llu, relay max %u of %u, rto refreshes %u, rtt samples %u\n",
		       sgw_rwc_scheme_name(scheme), (double)sim.now / kSec,
		       (unsigned long long)withheld, (unsigned long long)clipped,
		       (unsigned long long)sim.client.st.ctr[SGW_TCP_C_RTO], sp->rx.occ_max,
		       sp->rx.limit, scheme == SGW_RWC_RWND ? 0u : rwc->st.rto_refreshes,
		       scheme == SGW_RWC_RWND ? 0u : rwc->st.rtt_samples);
	}
}

// IPv6: the opener's OPEN carries the 16-byte addresses and ports once; the
// acceptor's half names the same connection (its leg speaks as the client's
// port toward the server's). Two bare envs, messages handed over by hand.
struct Cap {
	std::vector<std::vector<uint8_t>> msgs;
	std::vector<std::vector<uint8_t>> segs;
};

uint32_t
CapCan(void *, const sgw_split *, uint64_t)
{
	return 1u << 20;
}

int
CapSend(void *ctx, sgw_split *, uint16_t, const sgw_split_iov *iov, unsigned n)
{
	std::vector<uint8_t> m;
	for (unsigned i = 0; i < n; i++)
		m.insert(m.end(), iov[i].p, iov[i].p + iov[i].len);
	static_cast<Cap *>(ctx)->msgs.push_back(m);
	return 0;
}

void
CapTx(void *ctx, sgw_split *, const uint8_t *hdr, uint32_t hlen, const sgw_split_iov *, unsigned)
{
	static_cast<Cap *>(ctx)->segs.emplace_back(hdr, hdr + hlen);
}

TEST(SplitIpv6, OpenCarriesAddressesOnce)
{
	static const sgw_split_io_ops io = {CapTx};
	static const sgw_split_sat_ops sat = {CapCan, CapSend};
	sgw_split_conf sc;
	sgw_split_conf_default(&sc);
	sgw_tcp_conf tc;
	sgw_tcp_conf_default(&tc);
	Cap tcap, hcap;
	sgw_tcp_stack tst, hst;
	sgw_split_env tenv, henv;
	ASSERT_EQ(sgw_tcp_stack_init(&tst, &tc, &sgw_split_tcp_ops, &tenv), 0);
	ASSERT_EQ(sgw_tcp_stack_init(&hst, &tc, &sgw_split_tcp_ops, &henv), 0);
	ASSERT_EQ(sgw_split_env_init(&tenv, &sc, &tst, &io, &sat, &tcap), 0);
	ASSERT_EQ(sgw_split_env_init(&henv, &sc, &hst, &io, &sat, &hcap), 0);
	std::vector<uint8_t> mem(4 * 65536);
	sgw_split_bufs tb = {mem.data(), 65536, 65536, mem.data() + 65536, 65536, 65536};
	sgw_split_bufs hb = {mem.data() + 131072, 65536, 65536, mem.data() + 196608, 65536, 65536};
	auto term = std::make_unique<sgw_split>();
	auto hub = std::make_unique<sgw_split>();
	sgw_split_addr a;
	memset(&a, 0, sizeof(a));
	a.ipv6 = 1;
	for (int i = 0; i < 16; i++) {
		a.saddr[i] = static_cast<uint8_t>(0x20 + i);
		a.daddr[i] = static_cast<uint8_t>(0xa0 + i);
	}
	a.sport = 51000;
	a.dport = 443;
	sgw_tcp_seg syn;
	memset(&syn, 0, sizeof(syn));
	syn.sport = 51000;
	syn.dport = 443;
	syn.seq = 777;
	syn.flags = SGW_TCP_F_SYN;
	syn.win = 65535;
	syn.opts = SGW_TCP_O_MSS | SGW_TCP_O_SACK_PERM | SGW_TCP_O_TS | SGW_TCP_O_WS;
	syn.mss = 1220;
	syn.wscale = 9;
	sgw_split_out o;
	ASSERT_EQ(sgw_split_open(&tenv, term.get(), kSec, &a, &syn, SGW_SPLIT_END_TO_END, 5, 1234,
				 &tb, nullptr, &o), 0);
	EXPECT_TRUE(tcap.segs.empty());  // end to end: the SYN is held
	ASSERT_EQ(tcap.msgs.size(), 1u);
	ASSERT_EQ(tcap.msgs[0].size(), SGW_STREAM_OPEN6_LEN);
	sgw_stream_msg m;
	ASSERT_EQ(sgw_stream_decode(tcap.msgs[0].data(), tcap.msgs[0].size(), &m, nullptr),
		  SGW_STREAM_E_OK);
	EXPECT_EQ(m.flags, SGW_STREAM_F_IPV6);
	EXPECT_EQ(m.opts, SGW_STREAM_O__ALL);
	EXPECT_EQ(m.mss, 1220);
	EXPECT_EQ(m.wscale, 9);
	EXPECT_EQ(m.off, 65536u);
	ASSERT_EQ(sgw_split_accept(&henv, hub.get(), kSec, &m, 5, 4321, &hb, nullptr, &o), 0);
	EXPECT_EQ(hub->addr.ipv6, 1);
	EXPECT_EQ(memcmp(hub->addr.saddr, a.saddr, 16), 0);
	EXPECT_EQ(memcmp(hub->addr.daddr, a.daddr, 16), 0);
	// the hub's leg: a SYN from the client's port to the server's
	ASSERT_EQ(hcap.segs.size(), 1u);
	sgw_tcp_seg s;
	ASSERT_EQ(sgw_tcp_seg_parse(hcap.segs[0].data(), hcap.segs[0].size(), &s, nullptr),
		  SGW_TCP_PR_OK);
	EXPECT_EQ(s.flags, SGW_TCP_F_SYN);
	EXPECT_EQ(s.sport, 51000);
	EXPECT_EQ(s.dport, 443);
	EXPECT_TRUE(hcap.msgs.empty());  // no OPEN_OK before the server answered
}

// State per idle split connection, excluding relay buffers.
TEST(SplitSize, BytesPerIdleConnection)
{
	printf("sizeof: sgw_split %zu (of which sgw_tcp_conn %zu, 2 x sgw_relay %zu, "
	       "sgw_split_addr %zu, held SYN %zu); sgw_rwc %zu (PETRA/ACKRES only); "
	       "sgw_split_env %zu per worker; sgw_tcp_sb %zu per connection holding SACK "
	       "ranges or recovering (the stack's pool)\n",
	       sizeof(sgw_split), sizeof(sgw_tcp_conn), 2 * sizeof(sgw_relay),
	       sizeof(sgw_split_addr), sizeof(sgw_split_syn), sizeof(sgw_rwc),
	       sizeof(sgw_split_env), sizeof(sgw_tcp_sb));
	// 4 cache lines: the RFC 6675 scoreboard is out of line (lib/sgw_tcp.h, struct sgw_tcp_sb)
	EXPECT_EQ(sizeof(sgw_tcp_conn), 256u);
	EXPECT_EQ(sizeof(sgw_tcp_sb), 64u);
	EXPECT_EQ(alignof(sgw_split), 64u);
	// 7 cache lines: with its scoreboard share (16) and its running timer (24) 488
	EXPECT_LE(sizeof(sgw_split), 448u);
}

}  // namespace

// Issue 10 follow-up: with an idle timeout below TIME-WAIT (2 MSL, 60 s), a
// connection that closed cleanly is not idle-reset while its hub leg waits
// out TIME-WAIT: no idle reset, no RST message, and the halves end when the
// leg's TIME-WAIT does (the hub's leg closed actively).
TEST(SplitIdle, CleanCloseInTimeWaitNotReset)
{
	sgw_split_conf sc;
	sgw_split_conf_default(&sc);
	sc.idle_ns = 5 * kSec;
	Sim sim(&sc);
	// an upload, then the client's FIN: the hub's leg closes first toward the
	// server (which closes once it read everything): TIME-WAIT at the hub
	sim.server.srv_send = 0;
	App *c = sim.Connect(40031, 100000, true);
	ASSERT_TRUE(sim.RunUntil(20 * kSec, [&] {
		App *s = sim.ServerApp(40031);
		return s && RxDone(s, 100000) && (c->events & SGW_TCP_EV_PEER_FIN) &&
		       (s->events & SGW_TCP_EV_PEER_FIN);
	}));
	sgw_split *hub_sp = sim.Split(sim.hub, 40031);
	ASSERT_NE(hub_sp, nullptr);
	ASSERT_TRUE(sim.RunUntil(sim.now + 2 * kSec, [&] {
		return hub_sp->tcp.state == SGW_TCP_TIME_WAIT;
	}));
	const uint64_t tw_from = sim.now;
	// well past the idle timeout, inside TIME-WAIT: the hub's half is still there
	ASSERT_FALSE(sim.RunUntil(sim.now + 30 * kSec, [&] { return sim.hub.closed.size() == 1; }));
	EXPECT_EQ(hub_sp->tcp.state, SGW_TCP_TIME_WAIT);
	ASSERT_TRUE(sim.RunUntil(sim.now + 40 * kSec, [&] {
		return sim.term.closed.size() == 1 && sim.hub.closed.size() == 1;
	}));
	EXPECT_GE(sim.now - tw_from, 55 * kSec) << "ended by TIME-WAIT, not earlier";
	const uint64_t *tc = sim.term.env.ctr, *hc = sim.hub.env.ctr;
	EXPECT_EQ(tc[SGW_SPLIT_C_IDLE_TIMEOUT] + hc[SGW_SPLIT_C_IDLE_TIMEOUT], 0u);
	EXPECT_EQ(tc[SGW_SPLIT_C_RST_OUT] + hc[SGW_SPLIT_C_RST_OUT], 0u);
	EXPECT_EQ(c->events & SGW_TCP_EV_RESET, 0);
	EXPECT_EQ(sim.ServerApp(40031)->events & SGW_TCP_EV_RESET, 0);
	EXPECT_EQ(c->rx_bad, 0u);
}

// sgw_split_relays_done: 0 while the stream carries data and while only one
// FIN crossed; 1 once both FINs crossed and the leg waits in TIME-WAIT with
// both relays empty (the stage then gives the relay budget back). A half
// whose leg closed passively never reaches it; a reset half neither
// (SplitStop.ResetsBothWaysMidTransfer).
TEST(SplitTimeWait, RelaysDoneOnlyAfterCleanEndInTimeWait)
{
	Sim sim;
	sim.server.srv_send = 0;
	App *c = sim.Connect(40034, 400000, true);
	sgw_split *hub_sp = nullptr, *term_sp = nullptr;
	ASSERT_TRUE(sim.RunUntil(20 * kSec, [&] {
		App *s = sim.ServerApp(40034);
		return s && s->inorder > 100000;
	}));
	hub_sp = sim.Split(sim.hub, 40034);
	term_sp = sim.Split(sim.term, 40034);
	ASSERT_NE(hub_sp, nullptr);
	ASSERT_NE(term_sp, nullptr);
	EXPECT_EQ(sgw_split_relays_done(hub_sp), 0) << "mid-transfer";
	EXPECT_EQ(sgw_split_relays_done(term_sp), 0) << "mid-transfer";
	int done_before_tw = 0;
	ASSERT_TRUE(sim.RunUntil(sim.now + 20 * kSec, [&] {
		if (hub_sp->tcp.state != SGW_TCP_TIME_WAIT)
			done_before_tw |= sgw_split_relays_done(hub_sp);
		return hub_sp->tcp.state == SGW_TCP_TIME_WAIT;
	}));
	EXPECT_EQ(done_before_tw, 0);
	EXPECT_TRUE(RxDone(sim.ServerApp(40034), 400000));
	EXPECT_EQ(sgw_split_relays_done(hub_sp), 1) << "clean end, TIME-WAIT, relays empty";
	EXPECT_EQ(sgw_relay_used(&hub_sp->rx) + sgw_relay_used(&hub_sp->tx), 0u);
	/* the terminal's leg closed passively: never TIME-WAIT */
	if (sim.term.closed.empty()) {
		EXPECT_NE(term_sp->tcp.state, SGW_TCP_TIME_WAIT);
		EXPECT_EQ(sgw_split_relays_done(term_sp), 0);
	}
	EXPECT_EQ(c->rx_bad, 0u);
}

// Shutdown (sgw_split_stop): the terminal's half of a download in progress is
// reset both ways: a RST to the client (its prefix intact), RST ABORT to the
// hub's half, which resets the server; a half that is already over is left
// alone (0).
TEST(SplitStop, ResetsBothWaysMidTransfer)
{
	Sim sim;
	sim.server.srv_send = 4u << 20;
	App *c = sim.Connect(40032, 100, false);
	ASSERT_TRUE(sim.RunUntil(30 * kSec, [&] { return c->inorder > 300000; }));
	sgw_split *sp = sim.Split(sim.term, 40032);
	ASSERT_NE(sp, nullptr);
	sgw_split_out out;
	ASSERT_EQ(sgw_split_stop(&sim.term.env, sp, sim.now, &out), 1);
	sim.GwOut(sim.term, sp->channel, out);
	EXPECT_EQ(sim.term.env.ctr[SGW_SPLIT_C_RST_OUT], 1u);
	EXPECT_EQ(sgw_split_relays_done(sp), 0) << "reset: not a clean end";
	EXPECT_EQ(sgw_split_stop(&sim.term.env, sp, sim.now, &out), 0) << "reset once";
	ASSERT_TRUE(sim.RunUntil(sim.now + 5 * kSec, [&] {
		App *s = sim.ServerApp(40032);
		return c->c.state == SGW_TCP_CLOSED && s && s->c.state == SGW_TCP_CLOSED;
	}));
	EXPECT_EQ(c->reset_reason, SGW_TCP_RR_PEER);
	EXPECT_EQ(sim.ServerApp(40032)->reset_reason, SGW_TCP_RR_PEER);
	EXPECT_EQ(c->rx_bad, 0u);
	EXPECT_LT(c->inorder, 4u << 20);
	EXPECT_EQ(sim.hub.env.ctr[SGW_SPLIT_C_RST_IN], 1u);
	ASSERT_TRUE(sim.RunUntil(sim.now + 5 * kSec, [&] {
		return sim.term.closed.size() == 1 && sim.hub.closed.size() == 1;
	}));
}

// A half whose stream ended cleanly (FINs both ways) is not reset at stop.
TEST(SplitStop, CleanlyClosedHalfLeftAlone)
{
	Sim sim;
	// an upload, then the client's FIN: the hub's leg closes first toward the
	// server (which closes once it read everything): TIME-WAIT at the hub
	sim.server.srv_send = 0;
	App *c = sim.Connect(40033, 100000, true);
	ASSERT_TRUE(sim.RunUntil(20 * kSec, [&] {
		App *s = sim.ServerApp(40033);
		return s && RxDone(s, 100000) && (c->events & SGW_TCP_EV_PEER_FIN) &&
		       (s->events & SGW_TCP_EV_PEER_FIN);
	}));
	sgw_split *hub_sp = sim.Split(sim.hub, 40033);
	ASSERT_NE(hub_sp, nullptr);
	ASSERT_TRUE(sim.RunUntil(sim.now + 2 * kSec, [&] {
		return hub_sp->tcp.state == SGW_TCP_TIME_WAIT;
	}));
	sgw_split_out out;
	EXPECT_EQ(sgw_split_stop(&sim.hub.env, hub_sp, sim.now, &out), 0);
	EXPECT_EQ(sim.hub.env.ctr[SGW_SPLIT_C_RST_OUT], 0u);
	EXPECT_EQ(hub_sp->tcp.state, SGW_TCP_TIME_WAIT);
}
