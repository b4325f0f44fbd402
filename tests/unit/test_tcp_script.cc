// SPDX-License-Identifier: BSD-3-Clause
// packetdrill-style scripted tests of the TCP endpoint (lib/sgw_tcp_*.c).
//
// A script is lines of "<time> <what>" run against one endpoint in virtual
// time. <time> is "+S.sss" (after the previous line) or "S.sss" (from the
// start). <what> is:
//   < FLAGS START:END(LEN) [ack N] [win N] [<options>]   a segment from the peer
//   > FLAGS START:END(LEN) [ack N] [win N] [<options>]   the next segment the
//                                 endpoint must have emitted, at exactly this time
//   listen | connect | write N | shutdown | abort | read N | timers
//   expect state NAME | expect event NAME | expect reason NAME | expect ctr NAME N
// FLAGS as packetdrill: S F R P and '.' for ACK ("S." is a SYN-ACK). Sequence
// numbers are relative: the peer's ISN is 0 in its space, ours is 0 in ours;
// "<" lines give seq in the peer's space and ack in ours, ">" lines the
// reverse. Options in wire order: mss N, sackOK, TS val N ecr N, nop, wscale
// N, sack L:R ... (SACK blocks relative like ack). Our TS val is written as
// the milliseconds of the script clock (the connection's offset is added),
// and so is a non-zero TS ecr of a "<" line (the peer echoes our clock).
// A ">" line is compared byte for byte: header fields and the option bytes
// encoded here from the script (not by the lib's builder); a missing "ack"
// means the field is 0, a missing "win" means 0, missing options mean none.
// Before every "<" line and command, and at the end, every emitted segment
// must have been matched: an unexpected segment fails the script. Timers due
// up to a line's time fire before it, in deadline order.

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <sstream>
#include <string>
#include <vector>

#include "sgw_tcp.h"

namespace {

constexpr uint64_t kNever = SGW_TCP_NEVER;
constexpr uint32_t kOurIss = 0x10000000u;
constexpr uint32_t kPeerIss = 0x70000000u;
constexpr uint16_t kOurPort = 8080, kPeerPort = 50000;

uint8_t
Pat(uint32_t seed, uint64_t pos)
{
	uint64_t x = (pos + 1) * 0x9E3779B97F4A7C15ull ^ seed;
	return (uint8_t)(x >> 29);
}

struct Emitted {
	std::vector<uint8_t> hdr;
	uint32_t data_len;
	uint64_t at;
};

class Script {
 public:
	sgw_tcp_conf conf;
	sgw_tcp_stack st;
	alignas(64) sgw_tcp_conn c;
	bool started = false;
	uint64_t now = 0;
	uint64_t timer[SGW_TCP_T__COUNT];
	uint32_t events = 0;
	uint8_t reason = 0;
	std::deque<Emitted> out;
	// send buffer: stream positions [acked, appended)
	uint64_t appended = 0, acked = 0;
	// receive: auto-read unless "read" is used (then the app reads only on read)
	uint32_t rx_cap = 1 << 20;
	uint64_t inorder = 0, readpos = 0;
	bool auto_read = true;
	uint64_t bad_rx = 0;
	std::vector<uint8_t> ring;
	std::string where;

	Script()
	{
		sgw_tcp_conf_default(&conf);
		for (auto &t : timer)
			t = kNever;
	}

	static void OpTx(void *ctx, sgw_tcp_conn *, const uint8_t *h, uint32_t hl, uint32_t off,
			 uint32_t len)
	{
		auto *s = static_cast<Script *>(ctx);
		EXPECT_LE(s->acked + off + len, s->appended);
		s->out.push_back({std::vector<uint8_t>(h, h + hl), len, s->now});
	}
	static void OpRxData(void *ctx, sgw_tcp_conn *, uint32_t off, const uint8_t *p,
			     uint32_t len)
	{
		auto *s = static_cast<Script *>(ctx);
		EXPECT_LE((uint64_t)off + len, s->Space());
		for (uint32_t i = 0; i < len; i++)
			s->ring[(s->inorder + off + i) % s->rx_cap] = p[i];
	}
	static void OpRxAdvance(void *ctx, sgw_tcp_conn *, uint32_t n)
	{
		auto *s = static_cast<Script *>(ctx);
		for (uint32_t i = 0; i < n; i++)
			if (s->ring[(s->inorder + i) % s->rx_cap] != Pat(0xE, s->inorder + i))
				s->bad_rx++;
		s->inorder += n;
		if (s->auto_read)
			s->readpos = s->inorder;
	}
	static uint32_t OpRxSpace(void *ctx, sgw_tcp_conn *)
	{
		return static_cast<Script *>(ctx)->Space();
	}
	static void OpTxAcked(void *ctx, sgw_tcp_conn *, uint32_t n)
	{
		static_cast<Script *>(ctx)->acked += n;
	}

	uint32_t Space() const { return rx_cap - (uint32_t)(inorder - readpos); }

	void Start()
	{
		if (started)
			return;
		static const sgw_tcp_ops ops = {OpTx, OpRxData, OpRxAdvance, OpRxSpace, OpTxAcked};
		ASSERT_EQ(sgw_tcp_stack_init(&st, &conf, &ops, this), 0);
		sgw_tcp_conn_init(&st, &c, kOurIss, kOurPort, kPeerPort);
		ring.assign(rx_cap, 0);
		started = true;
	}

	void Apply(const sgw_tcp_out &o)
	{
		for (unsigned i = 0; i < SGW_TCP_T__COUNT; i++)
			if (o.timer_set & (1u << i))
				timer[i] = o.timer_at[i];
		events |= o.events;
		if (o.reason)
			reason = o.reason;
	}

	// Fire timers due at or before t, in deadline order.
	void AdvanceTo(uint64_t t)
	{
		for (int guard = 0; guard < 10000; guard++) {
			unsigned id = 0;
			uint64_t d = kNever;
			for (unsigned i = 0; i < SGW_TCP_T__COUNT; i++)
				if (timer[i] < d) {
					d = timer[i];
					id = i;
				}
			if (d == kNever || d > t)
				break;
			now = std::max(now, d);
			timer[id] = kNever;
			sgw_tcp_out o;
			sgw_tcp_out_reset(&o);
			sgw_tcp_timer(&st, &c, now, id, &o);
			Apply(o);
		}
		now = std::max(now, t);
	}

	// ---- parsing helpers

	static uint8_t Flags(const std::string &f)
	{
		uint8_t r = 0;
		for (char ch : f) {
			switch (ch) {
			case 'S': r |= SGW_TCP_F_SYN; break;
			case 'F': r |= SGW_TCP_F_FIN; break;
			case 'R': r |= SGW_TCP_F_RST; break;
			case 'P': r |= SGW_TCP_F_PSH; break;
			case '.': r |= SGW_TCP_F_ACK; break;
			default: ADD_FAILURE() << "flag " << ch;
			}
		}
		return r;
	}

	static void Put16(std::vector<uint8_t> &b, uint32_t v)
	{
		b.push_back((uint8_t)(v >> 8));
		b.push_back((uint8_t)v);
	}
	static void Put32(std::vector<uint8_t> &b, uint32_t v)
	{
		Put16(b, v >> 16);
		Put16(b, v & 0xffff);
	}

	// Options in script order -> wire bytes. sack_base: what relative SACK edges add to.
	std::vector<uint8_t> Options(const std::string &txt, bool ours, uint32_t sack_base)
	{
		std::vector<uint8_t> o;
		std::stringstream ss(txt);
		std::string item;
		while (std::getline(ss, item, ',')) {
			std::stringstream is(item);
			std::string k;
			is >> k;
			if (k == "mss") {
				uint32_t v;
				is >> v;
				o.push_back(2);
				o.push_back(4);
				Put16(o, v);
			} else if (k == "sackOK") {
				o.push_back(4);
				o.push_back(2);
			} else if (k == "nop") {
				o.push_back(1);
			} else if (k == "wscale") {
				uint32_t v;
				is >> v;
				o.push_back(3);
				o.push_back(3);
				o.push_back((uint8_t)v);
			} else if (k == "TS") {
				std::string w1, w2;
				uint32_t val, ecr;
				is >> w1 >> val >> w2 >> ecr;
				if (ours)
					val += c.ts_offset;
				else if (ecr != 0)
					ecr += c.ts_offset;  // the peer echoes our clock
				o.push_back(8);
				o.push_back(10);
				Put32(o, val);
				Put32(o, ecr);
			} else if (k == "sack") {
				std::vector<std::pair<uint32_t, uint32_t>> bl;
				std::string blk;
				while (is >> blk) {
					unsigned long l = 0, r = 0;
					if (sscanf(blk.c_str(), "%lu:%lu", &l, &r) != 2)
						ADD_FAILURE() << where << ": sack block " << blk;
					bl.push_back({(uint32_t)l, (uint32_t)r});
				}
				o.push_back(5);
				o.push_back((uint8_t)(2 + 8 * bl.size()));
				for (auto &x : bl) {
					Put32(o, sack_base + x.first);
					Put32(o, sack_base + x.second);
				}
			} else {
				ADD_FAILURE() << where << ": option " << k;
			}
		}
		return o;
	}

	struct SegLine {
		uint8_t flags = 0;
		uint32_t start = 0, end = 0, len = 0;
		bool has_ack = false;
		uint32_t ack = 0;
		uint32_t win = 0;
		std::string opts;
	};

	SegLine ParseSeg(const std::string &rest)
	{
		SegLine l;
		std::string body = rest, opts;
		size_t lt = rest.find('<');
		if (lt != std::string::npos) {
			size_t gt = rest.rfind('>');
			EXPECT_NE(gt, std::string::npos) << where;
			l.opts = rest.substr(lt + 1, gt - lt - 1);
			body = rest.substr(0, lt);
		}
		std::stringstream ss(body);
		std::string f, range, w;
		ss >> f >> range;
		l.flags = Flags(f);
		unsigned long a = 0, b = 0, n = 0;
		EXPECT_EQ(sscanf(range.c_str(), "%lu:%lu(%lu)", &a, &b, &n), 3) << where;
		EXPECT_EQ(b - a, n) << where << ": range and length disagree";
		l.start = (uint32_t)a;
		l.end = (uint32_t)b;
		l.len = (uint32_t)n;
		while (ss >> w) {
			unsigned long v;
			ss >> v;
			if (w == "ack") {
				l.has_ack = true;
				l.ack = (uint32_t)v;
			} else if (w == "win") {
				l.win = (uint32_t)v;
			} else {
				ADD_FAILURE() << where << ": " << w;
			}
		}
		return l;
	}

	void Inject(const SegLine &l)
	{
		std::vector<uint8_t> b;
		std::vector<uint8_t> o = l.opts.empty() ? std::vector<uint8_t>()
							: Options(l.opts, false, kOurIss);
		while (o.size() % 4)
			o.push_back(1);  // the script should pad; pad with NOPs as a peer would not
		Put16(b, kPeerPort);
		Put16(b, kOurPort);
		Put32(b, kPeerIss + l.start);
		Put32(b, l.has_ack ? kOurIss + l.ack : 0);
		b.push_back((uint8_t)(((20 + o.size()) / 4) << 4));
		b.push_back(l.flags);
		Put16(b, l.win);
		Put16(b, 0);
		Put16(b, 0);
		b.insert(b.end(), o.begin(), o.end());
		// the payload: the peer's pattern at its stream position
		uint32_t pos = l.start - 1 + ((l.flags & SGW_TCP_F_SYN) ? 1 : 0);
		for (uint32_t i = 0; i < l.len; i++)
			b.push_back(Pat(0xE, pos + i));
		sgw_tcp_seg s;
		ASSERT_EQ(sgw_tcp_seg_parse(b.data(), b.size(), &s, nullptr), SGW_TCP_PR_OK) << where;
		sgw_tcp_out o2;
		sgw_tcp_out_reset(&o2);
		sgw_tcp_input(&st, &c, now, &s, &o2);
		Apply(o2);
	}

	void Expect(const SegLine &l)
	{
		ASSERT_FALSE(out.empty()) << where << ": no segment emitted";
		Emitted e = out.front();
		out.pop_front();
		EXPECT_EQ(e.at, now) << where << ": emitted at another time";
		std::vector<uint8_t> want;
		Put16(want, kOurPort);
		Put16(want, kPeerPort);
		Put32(want, kOurIss + l.start);
		Put32(want, l.has_ack ? kPeerIss + l.ack : 0);
		std::vector<uint8_t> o = l.opts.empty() ? std::vector<uint8_t>()
							: Options(l.opts, true, kPeerIss);
		EXPECT_EQ(o.size() % 4, 0u) << where << ": options not padded";
		want.push_back((uint8_t)(((20 + o.size()) / 4) << 4));
		want.push_back(l.flags);
		Put16(want, l.win);
		Put16(want, 0);  // checksum: the caller's
		Put16(want, 0);
		want.insert(want.end(), o.begin(), o.end());
		EXPECT_EQ(e.data_len, l.len) << where;
		if (e.hdr != want) {
			sgw_tcp_seg g;
			sgw_tcp_seg_parse(e.hdr.data(), e.hdr.size(), &g, nullptr);
			std::string gh, wh;
			char x[4];
			for (auto v : e.hdr) {
				snprintf(x, sizeof(x), "%02x", v);
				gh += x;
			}
			for (auto v : want) {
				snprintf(x, sizeof(x), "%02x", v);
				wh += x;
			}
			ADD_FAILURE() << where << ": segment differs\n  got  " << gh << "\n  want " << wh
				      << "\n  got flags " << (int)g.flags << " seq "
				      << g.seq - kOurIss << " ack " << g.ack - kPeerIss << " win "
				      << g.win << " len " << e.data_len << " tsval-offset "
				      << g.tsval - c.ts_offset << " tsecr " << g.tsecr;
		}
	}

	void NoPending()
	{
		while (!out.empty()) {
			sgw_tcp_seg g;
			sgw_tcp_seg_parse(out.front().hdr.data(), out.front().hdr.size(), &g, nullptr);
			ADD_FAILURE() << where << ": unexpected segment flags " << (int)g.flags
				      << " seq " << g.seq - kOurIss << " ack " << g.ack - kPeerIss
				      << " win " << g.win << " len " << out.front().data_len
				      << " at " << out.front().at;
			out.pop_front();
		}
	}

	static int StateByName(const std::string &n)
	{
		for (int i = 0; i < SGW_TCP_S__COUNT; i++)
			if (n == sgw_tcp_state_name(i))
				return i;
		ADD_FAILURE() << "state " << n;
		return -1;
	}

	void Command(const std::string &cmd, std::stringstream &ss)
	{
		sgw_tcp_out o;
		sgw_tcp_out_reset(&o);
		if (cmd == "listen") {
			EXPECT_EQ(sgw_tcp_listen(&st, &c), 0) << where;
		} else if (cmd == "connect") {
			EXPECT_EQ(sgw_tcp_connect(&st, &c, now, &o), 0) << where;
		} else if (cmd == "write") {
			uint32_t n;
			ss >> n;
			appended += n;
			EXPECT_EQ(sgw_tcp_send(&st, &c, now, n, &o), 0) << where;
		} else if (cmd == "shutdown") {
			EXPECT_EQ(sgw_tcp_shutdown(&st, &c, now, &o), 0) << where;
		} else if (cmd == "abort") {
			sgw_tcp_abort(&st, &c, now, &o);
		} else if (cmd == "noread") {
			auto_read = false;
		} else if (cmd == "read") {
			uint64_t n;
			ss >> n;
			readpos = std::min(inorder, readpos + n);
			sgw_tcp_rx_consumed(&st, &c, now, &o);
		} else if (cmd == "timers") {
			// nothing: the timers up to this time have fired
		} else if (cmd == "expect") {
			std::string what, name;
			ss >> what >> name;
			if (what == "state") {
				EXPECT_EQ(c.state, StateByName(name))
					<< where << ": in " << sgw_tcp_state_name(c.state);
			} else if (what == "event") {
				uint32_t bit = name == "CONNECTED" ? SGW_TCP_EV_CONNECTED
					       : name == "PEER_FIN" ? SGW_TCP_EV_PEER_FIN
					       : name == "RESET"    ? SGW_TCP_EV_RESET
					       : name == "CLOSED"   ? SGW_TCP_EV_CLOSED
								    : 0;
				EXPECT_NE(bit, 0u) << where;
				EXPECT_TRUE(events & bit) << where << ": event " << name;
			} else if (what == "reason") {
				int r = name == "REFUSED"    ? SGW_TCP_RR_REFUSED
					: name == "PEER"     ? SGW_TCP_RR_PEER
					: name == "TIMEOUT"  ? SGW_TCP_RR_TIMEOUT
					: name == "ABORT"    ? SGW_TCP_RR_ABORT
					: name == "PROTOCOL" ? SGW_TCP_RR_PROTOCOL
							     : -1;
				EXPECT_EQ(reason, r) << where;
			} else if (what == "ctr") {
				uint64_t v;
				ss >> v;
				int id = -1;
				for (int i = 0; i < SGW_TCP_C__COUNT; i++)
					if (name == sgw_tcp_ctr_name(i))
						id = i;
				ASSERT_GE(id, 0) << where << ": counter " << name;
				EXPECT_EQ(st.ctr[id], v) << where << ": " << name;
			} else if (what == "timer") {
				// expect timer NAME +S.sss (from now) | none
				std::string at;
				ss >> at;
				unsigned id = name == "RTX"	? SGW_TCP_T_RTX
					      : name == "PERSIST" ? SGW_TCP_T_PERSIST
					      : name == "DELACK"  ? SGW_TCP_T_DELACK
								  : SGW_TCP_T_WAIT;
				if (at == "none")
					EXPECT_EQ(timer[id], kNever) << where;
				else
					EXPECT_EQ(timer[id],
						  now + (uint64_t)std::llround(atof(at.c_str() + 1) * 1e9))
						<< where;
			} else {
				ADD_FAILURE() << where << ": expect " << what;
			}
		} else {
			ADD_FAILURE() << where << ": command " << cmd;
		}
		Apply(o);
	}

	// Lines starting "conf KEY VALUE" come first: they change the stack's configuration.
	void Run(const std::string &text)
	{
		std::stringstream lines(text);
		std::string line;
		int lineno = 0;
		uint64_t t = 0;
		while (std::getline(lines, line)) {
			lineno++;
			where = "line " + std::to_string(lineno) + " \"" + line + "\"";
			size_t h = line.find('#');
			if (h != std::string::npos)
				line = line.substr(0, h);
			std::stringstream ss(line);
			std::string ts;
			if (!(ss >> ts))
				continue;
			if (ts == "conf") {
				std::string k;
				uint64_t v;
				ss >> k >> v;
				if (k == "sack")
					conf.sack = (uint8_t)v;
				else if (k == "timestamps")
					conf.timestamps = (uint8_t)v;
				else if (k == "wscale")
					conf.wscale = (uint8_t)v;
				else if (k == "mss")
					conf.mss = (uint16_t)v;
				else if (k == "rcv_buf")
					conf.rcv_buf = (uint32_t)v;
				else if (k == "rx_cap")
					rx_cap = (uint32_t)v;
				else if (k == "init_cwnd_segs")
					conf.init_cwnd_segs = (uint32_t)v;
				else
					ADD_FAILURE() << where << ": conf " << k;
				continue;
			}
			Start();
			double sec = atof(ts.c_str() + (ts[0] == '+' ? 1 : 0));
			uint64_t d = (uint64_t)std::llround(sec * 1e9);
			t = ts[0] == '+' ? t + d : d;
			AdvanceTo(t);
			std::string rest;
			std::getline(ss, rest);
			size_t p = rest.find_first_not_of(' ');
			rest = p == std::string::npos ? "" : rest.substr(p);
			if (rest.empty())
				continue;
			if (rest[0] == '>') {
				Expect(ParseSeg(rest.substr(1)));
				continue;
			}
			NoPending();
			if (rest[0] == '<') {
				Inject(ParseSeg(rest.substr(1)));
				continue;
			}
			std::stringstream cs(rest);
			std::string cmd;
			cs >> cmd;
			Command(cmd, cs);
		}
		where = "end of script";
		NoPending();
		EXPECT_EQ(bad_rx, 0u);
	}
};

void
RunScript(const char *text)
{
	Script s;
	s.Run(text);
}

// Passive open with every option, data both ways, delayed ACK, close by the peer.
TEST(TcpScript, PassiveOpenWithOptions)
{
	RunScript(R"(
0.000 listen
+0.100 < S 0:0(0) win 65535 <mss 1460,sackOK,TS val 7000 ecr 0,nop,wscale 7>
+0 > S. 0:0(0) ack 1 win 65535 <mss 1460,sackOK,TS val 100 ecr 7000,nop,wscale 7>
+0.050 < . 1:1(0) ack 1 win 502 <nop,nop,TS val 7050 ecr 100>
+0 expect state ESTABLISHED
+0 expect event CONNECTED
# one segment: the delayed ACK 40 ms later; the window is 1 MB >> 7 (the
# SYN-ACK's edge, 65535, is passed at once)
+0.010 < P. 1:1001(1000) ack 1 win 502 <nop,nop,TS val 7060 ecr 100>
+0.040 > . 1:1(0) ack 1001 win 8192 <nop,nop,TS val 200 ecr 7060>
# two full segments: ACKed at once
+0.010 < . 1001:2449(1448) ack 1 win 502 <nop,nop,TS val 7070 ecr 200>
+0 < . 2449:3897(1448) ack 1 win 502 <nop,nop,TS val 7070 ecr 200>
+0 > . 1:1(0) ack 3897 win 8192 <nop,nop,TS val 210 ecr 7070>
# we send 3000 bytes: MSS 1448 (1460 - 12 for TS), PSH on the last
+0.005 write 3000
+0 > . 1:1449(1448) ack 3897 win 8192 <nop,nop,TS val 215 ecr 7070>
+0 > . 1449:2897(1448) ack 3897 win 8192 <nop,nop,TS val 215 ecr 7070>
+0 > P. 2897:3001(104) ack 3897 win 8192 <nop,nop,TS val 215 ecr 7070>
+0.050 < . 3897:3897(0) ack 3001 win 502 <nop,nop,TS val 7125 ecr 215>
+0 expect timer RTX none
# the peer closes: ACKed at once, CLOSE-WAIT; we close: LAST-ACK, then CLOSED
+0.010 < F. 3897:3897(0) ack 3001 win 502 <nop,nop,TS val 7135 ecr 215>
# the FIN took one byte of window; the edge moves only by >= 1460 (receiver SWS)
+0 > . 3001:3001(0) ack 3898 win 8191 <nop,nop,TS val 275 ecr 7135>
+0 expect state CLOSE-WAIT
+0 expect event PEER_FIN
+0.001 shutdown
+0 > F. 3001:3001(0) ack 3898 win 8191 <nop,nop,TS val 276 ecr 7135>
+0 expect state LAST-ACK
+0.050 < . 3898:3898(0) ack 3002 win 502 <nop,nop,TS val 7186 ecr 276>
+0 expect state CLOSED
+0 expect event CLOSED
)");
}

// Active open: our SYN, the SYN-ACK, data; the peer offers no window scaling.
TEST(TcpScript, ActiveOpen)
{
	RunScript(R"(
0.000 connect
+0 > S 0:0(0) win 65535 <mss 1460,sackOK,TS val 0 ecr 0,nop,wscale 7>
+0 expect timer RTX +1.000
+0.080 < S. 0:0(0) ack 1 win 29200 <mss 1400,sackOK,TS val 500 ecr 0>
+0 > . 1:1(0) ack 1 win 65535 <nop,nop,TS val 80 ecr 500>
+0 expect state ESTABLISHED
# no wscale from the peer: ours is not used either; MSS 1400 - 12
+0 write 2000
+0 > . 1:1389(1388) ack 1 win 65535 <nop,nop,TS val 80 ecr 500>
+0 > P. 1389:2001(612) ack 1 win 65535 <nop,nop,TS val 80 ecr 500>
+0.080 < . 1:1(0) ack 2001 win 29200 <nop,nop,TS val 580 ecr 80>
+0 expect ctr rtt_samples 2
)");
}

// Simultaneous close: both FINs cross, CLOSING on our side, then TIME-WAIT for 2 MSL.
TEST(TcpScript, SimultaneousClose)
{
	RunScript(R"(
conf timestamps 0
conf sack 0
conf wscale 0
conf rx_cap 60000
conf rcv_buf 60000
0.000 listen
+0 < S 0:0(0) win 32768 <mss 1000>
+0 > S. 0:0(0) ack 1 win 60000 <mss 1460>
+0.020 < . 1:1(0) ack 1 win 32768
+0.100 shutdown
+0 > F. 1:1(0) ack 1 win 60000
+0 expect state FIN-WAIT-1
# the peer's FIN crossed ours: it does not ACK our FIN
+0.010 < F. 1:1(0) ack 1 win 32768
+0 > . 2:2(0) ack 2 win 59999
+0 expect state CLOSING
+0.010 < . 2:2(0) ack 2 win 32768
+0 expect state TIME-WAIT
+0 expect timer WAIT +60.000
# a retransmitted FIN in TIME-WAIT is ACKed and restarts 2 MSL
+10.000 < F. 1:1(0) ack 2 win 32768
+0 > . 2:2(0) ack 2 win 59999
+0 expect timer WAIT +60.000
+60.000 timers
+0 expect state CLOSED
)");
}

// Half-close: the peer stops sending (FIN), we keep sending for a while, then close.
TEST(TcpScript, HalfClose)
{
	RunScript(R"(
conf timestamps 0
conf sack 0
conf wscale 0
conf rx_cap 60000
conf rcv_buf 60000
0.000 listen
+0 < S 0:0(0) win 32768 <mss 1000>
+0 > S. 0:0(0) ack 1 win 60000 <mss 1460>
+0.020 < P. 1:101(100) ack 1 win 32768
+0 expect state ESTABLISHED
+0.040 > . 1:1(0) ack 101 win 59900
+0.010 < F. 101:101(0) ack 1 win 32768
+0 > . 1:1(0) ack 102 win 59899
+0 expect state CLOSE-WAIT
# still sending after the peer's FIN
+0.010 write 1500
+0 > . 1:1001(1000) ack 102 win 59899
+0 > P. 1001:1501(500) ack 102 win 59899
+0.020 < . 102:102(0) ack 1501 win 32768
+0.100 write 10
+0 > P. 1501:1511(10) ack 102 win 59899
+0.001 shutdown
+0 > F. 1511:1511(0) ack 102 win 59899
+0 expect state LAST-ACK
# the FIN is lost: the RTO (200 ms floor; 20 ms RTT), restarted by the ACK
# of the last bytes, sends it again
+0.020 < . 102:102(0) ack 1511 win 32768
+0.200 > F. 1511:1511(0) ack 102 win 59899
+0.020 < . 102:102(0) ack 1512 win 32768
+0 expect state CLOSED
)");
}

// RST in SYN-RECEIVED: a RST at rcv_nxt resets; out of window it is ignored;
// a bad ACK in SYN-RECEIVED gets a RST <SEQ=SEG.ACK>.
TEST(TcpScript, RstInSynReceived)
{
	RunScript(R"(
conf timestamps 0
conf sack 0
conf wscale 0
conf rx_cap 60000
conf rcv_buf 60000
0.000 listen
+0 < S 0:0(0) win 32768 <mss 1000>
+0 > S. 0:0(0) ack 1 win 60000 <mss 1460>
+0 expect state SYN-RECEIVED
# an ACK of something we never sent
+0.010 < . 1:1(0) ack 5 win 32768
+0 > R 5:5(0)
+0 expect state SYN-RECEIVED
# a RST out of the window: ignored
+0.010 < R 70001:70001(0) win 0
+0 expect state SYN-RECEIVED
+0 expect ctr rst_ignored 1
# in the window but not at rcv_nxt: a challenge ACK (RFC 5961)
+0.010 < R 2:2(0) win 0
+0 > . 1:1(0) ack 1 win 60000
+0 expect state SYN-RECEIVED
# exactly at rcv_nxt: reset
+0.010 < R 1:1(0) win 0
+0 expect state CLOSED
+0 expect event RESET
+0 expect reason PEER
)");
}

// Zero window: no data goes, persist probes <SEQ=SND.UNA-1> back off from the RTO.
TEST(TcpScript, ZeroWindowAndPersistProbes)
{
	RunScript(R"(
conf timestamps 0
conf sack 0
conf wscale 0
conf rx_cap 60000
conf rcv_buf 60000
0.000 listen
+0 < S 0:0(0) win 4000 <mss 1000>
+0 > S. 0:0(0) ack 1 win 60000 <mss 1460>
+0.100 < . 1:1(0) ack 1 win 4000
+0 write 6000
+0 > . 1:1001(1000) ack 1 win 60000
+0 > . 1001:2001(1000) ack 1 win 60000
+0 > . 2001:3001(1000) ack 1 win 60000
+0 > . 3001:4001(1000) ack 1 win 60000
# everything acknowledged, the window shut. Two 100 ms samples: SRTT 100 ms,
# RTTVAR 37.5 ms, RTO 250 ms; the probes back off 250, 500, 1000 ms
+0.100 < . 1:1(0) ack 4001 win 0
+0 expect timer PERSIST +0.250
+0.250 > . 4000:4000(0) ack 1 win 60000
+0 expect timer PERSIST +0.500
+0.100 < . 1:1(0) ack 4001 win 0
+0.400 > . 4000:4000(0) ack 1 win 60000
+0.100 < . 1:1(0) ack 4001 win 0
+0.900 > . 4000:4000(0) ack 1 win 60000
+0 expect ctr persist_probes 3
# the window opens: the rest goes at once
+0.050 < . 1:1(0) ack 4001 win 3000
+0 > . 4001:5001(1000) ack 1 win 60000
+0 > P. 5001:6001(1000) ack 1 win 60000
+0 expect timer PERSIST none
+0.100 < . 1:1(0) ack 6001 win 4000
+0 expect timer RTX none
)");
}

// SACK recovery of two holes (RFC 6675): the exact retransmissions.
TEST(TcpScript, SackRecoveryTwoHoles)
{
	RunScript(R"(
conf timestamps 0
conf wscale 0
conf rx_cap 60000
conf rcv_buf 60000
0.000 listen
+0 < S 0:0(0) win 60000 <mss 1000,nop,nop,sackOK>
+0 > S. 0:0(0) ack 1 win 60000 <mss 1460,nop,nop,sackOK>
+0.100 < . 1:1(0) ack 1 win 60000
+0 write 10000
+0 > . 1:1001(1000) ack 1 win 60000
+0 > . 1001:2001(1000) ack 1 win 60000
+0 > . 2001:3001(1000) ack 1 win 60000
+0 > . 3001:4001(1000) ack 1 win 60000
+0 > . 4001:5001(1000) ack 1 win 60000
+0 > . 5001:6001(1000) ack 1 win 60000
+0 > . 6001:7001(1000) ack 1 win 60000
+0 > . 7001:8001(1000) ack 1 win 60000
+0 > . 8001:9001(1000) ack 1 win 60000
+0 > P. 9001:10001(1000) ack 1 win 60000
# 1:1001 and 4001:5001 lost; the rest SACKed as it arrives
+0.100 < . 1:1(0) ack 1 win 60000 <nop,nop,sack 1001:2001>
+0 < . 1:1(0) ack 1 win 60000 <nop,nop,sack 1001:3001>
+0 < . 1:1(0) ack 1 win 60000 <nop,nop,sack 1001:4001>
# third duplicate ACK: recovery, the first hole at once; cwnd = ssthresh = 5000
+0 > . 1:1001(1000) ack 1 win 60000
+0 expect ctr sack_recovery 1
+0 < . 1:1(0) ack 1 win 60000 <nop,nop,sack 5001:6001 1001:4001>
+0 < . 1:1(0) ack 1 win 60000 <nop,nop,sack 5001:7001 1001:4001>
+0 < . 1:1(0) ack 1 win 60000 <nop,nop,sack 5001:8001 1001:4001>
# three segments SACKed above 4001: lost, pipe (3000) has room: the second hole,
# then NextSeg rule 4 (nothing lost, no new data): the rescue of the tail
+0 > . 4001:5001(1000) ack 1 win 60000
+0 > P. 9001:10001(1000) ack 1 win 60000
+0 expect ctr rescue_retx 1
+0 < . 1:1(0) ack 1 win 60000 <nop,nop,sack 5001:9001 1001:4001>
+0 < . 1:1(0) ack 1 win 60000 <nop,nop,sack 5001:10001 1001:4001>
# the retransmissions arrive: the cumulative ACK jumps, recovery ends
+0.100 < . 1:1(0) ack 4001 win 60000 <nop,nop,sack 5001:10001>
+0 < . 1:1(0) ack 10001 win 60000
+0 expect ctr retx_segs 3
+0 expect ctr rto 0
+0 expect timer RTX none
)");
}

// The interpreter itself: a wrong window, a missing segment and an unexpected
// one each fail a script.
TEST(TcpScript, HarnessCatchesMismatches)
{
	EXPECT_NONFATAL_FAILURE(RunScript(R"(
conf timestamps 0
conf sack 0
conf wscale 0
0.000 listen
+0 < S 0:0(0) win 32768 <mss 1000>
+0 > S. 0:0(0) ack 1 win 65534 <mss 1460>
)"),
				"segment differs");
	EXPECT_NONFATAL_FAILURE(RunScript(R"(
conf timestamps 0
0.000 listen
+0 < S 0:0(0) win 32768 <mss 1000>
)"),
				"unexpected segment");
	EXPECT_FATAL_FAILURE(RunScript(R"(
0.000 listen
+0 > S. 0:0(0) ack 1 win 65535
)"),
			     "no segment emitted");
	EXPECT_NONFATAL_FAILURE(RunScript(R"(
conf timestamps 0
conf sack 0
conf wscale 0
0.000 listen
+0 < S 0:0(0) win 32768 <mss 1000>
+0.001 > S. 0:0(0) ack 1 win 65535 <mss 1460>
)"),
				"emitted at another time");
}

}  // namespace
