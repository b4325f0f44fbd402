// SPDX-License-Identifier: BSD-3-Clause
// Tests of lib/sgw_lift_mh.c (MH-LIFT) in virtual time.
//
// Packets are real cleartext TCP/IP bytes (IPv4 and IPv6, checksummed) as the
// agent reads them from the TUN device or gets them after decryption. The
// fixture (class Mh) owns the machine's memory and the clock and answers the
// control packets it polls with acknowledgements built by lib/sgw_lift.h's
// codec, as the hub would. Last, the machine wired to the real hub machine
// (sgw_lift_rx / sgw_lift_esp_down / sgw_lift_timer): Setup, pairs held and
// released, a freeze on the hub's timer and the unfreeze, D and Teardown.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <set>
#include <vector>

#include "sgw_lift.h"
#include "sgw_lift_mh.h"
#include "test_rng.h"

namespace {

constexpr uint64_t kMs = 1000000ull;
constexpr uint64_t kSec = 1000 * kMs;
constexpr uint32_t kDlSpi = 0x1000;
constexpr uint32_t kUpSpi = 0x2000;
constexpr uint8_t kFin = 0x01, kSyn = 0x02, kRst = 0x04, kPsh = 0x08, kAck = 0x10;
constexpr uint32_t kMss = 1224;

const uint8_t kMh4[4] = {10, 0, 0, 7};
const uint8_t kFh4[4] = {192, 0, 2, 1};

uint32_t
Sum16(uint32_t s, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i + 1 < n; i += 2)
		s += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (n & 1)
		s += (uint32_t)p[n - 1] << 8;
	return s;
}

uint16_t
Fold(uint32_t s)
{
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

uint32_t
Get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

uint16_t
Get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

// The TCP checksum of a whole IPv4/IPv6 segment, verified independently of
// the code under test: 0 when it is right.
uint16_t
TcpCsumCheck(const std::vector<uint8_t> &b)
{
	uint32_t s = 0;
	size_t hl, tl;
	if ((b[0] >> 4) == 4) {
		hl = (b[0] & 15) * 4u;
		tl = Get16(&b[2]) - hl;
		s = Sum16(s, &b[12], 8);
		s += 6 + (uint32_t)tl;
	} else {
		hl = 40;
		tl = Get16(&b[4]);
		s = Sum16(s, &b[8], 32);
		s += 6 + (uint32_t)tl;
	}
	s = Sum16(s, &b[hl], tl);
	return Fold(s);
}

// One TCP connection's cleartext segments.
struct Conn {
	bool v6 = false;
	uint16_t mh_port = 40000, fh_port = 80;
	uint8_t mh6[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7};
	uint8_t fh6[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
	uint8_t mh4[4] = {10, 0, 0, 7};

	std::vector<uint8_t> Seg(bool from_mh, uint32_t seq, uint32_t ack, uint8_t flags,
				 uint16_t win, size_t paylen, size_t optlen = 0) const
	{
		size_t hl = v6 ? 40 : 20, th = 20 + optlen;
		std::vector<uint8_t> b(hl + th + paylen, 0);
		if (v6) {
			b[0] = 0x60;
			b[4] = (uint8_t)((th + paylen) >> 8);
			b[5] = (uint8_t)(th + paylen);
			b[6] = 6;
			b[7] = 64;
			memcpy(&b[8], from_mh ? mh6 : fh6, 16);
			memcpy(&b[24], from_mh ? fh6 : mh6, 16);
		} else {
			size_t tot = hl + th + paylen;
			b[0] = 0x45;
			b[2] = (uint8_t)(tot >> 8);
			b[3] = (uint8_t)tot;
			b[6] = 0x40; // DF
			b[8] = 64;
			b[9] = 6;
			memcpy(&b[12], from_mh ? mh4 : kFh4, 4);
			memcpy(&b[16], from_mh ? kFh4 : mh4, 4);
			uint16_t c = Fold(Sum16(0, b.data(), 20));
			b[10] = (uint8_t)(c >> 8);
			b[11] = (uint8_t)c;
		}
		uint8_t *t = &b[hl];
		uint16_t sp = from_mh ? mh_port : fh_port, dp = from_mh ? fh_port : mh_port;
		t[0] = (uint8_t)(sp >> 8); t[1] = (uint8_t)sp;
		t[2] = (uint8_t)(dp >> 8); t[3] = (uint8_t)dp;
		t[4] = (uint8_t)(seq >> 24); t[5] = (uint8_t)(seq >> 16);
		t[6] = (uint8_t)(seq >> 8); t[7] = (uint8_t)seq;
		t[8] = (uint8_t)(ack >> 24); t[9] = (uint8_t)(ack >> 16);
		t[10] = (uint8_t)(ack >> 8); t[11] = (uint8_t)ack;
		t[12] = (uint8_t)((th / 4) << 4);
		t[13] = flags;
		t[14] = (uint8_t)(win >> 8); t[15] = (uint8_t)win;
		for (size_t i = 0; i < optlen; i++)
			t[20 + i] = 1; // NOP
		if (optlen >= 10) { // timestamps
			t[20] = 1; t[21] = 1; t[22] = 8; t[23] = 10;
			for (int i = 0; i < 8; i++)
				t[24 + i] = (uint8_t)(0x11 * (i + 1));
		}
		for (size_t i = 0; i < paylen; i++)
			t[th + i] = (uint8_t)(i * 7 + 3);
		uint32_t s = 0;
		if (v6) {
			s = Sum16(s, &b[8], 32);
		} else {
			s = Sum16(s, &b[12], 8);
		}
		s += 6 + (uint32_t)(th + paylen);
		s = Sum16(s, t, th + paylen);
		uint16_t c = Fold(s);
		t[16] = (uint8_t)(c >> 8);
		t[17] = (uint8_t)c;
		return b;
	}
};

// The machine, its memory, the clock, the hub's side of control packets.
class Mh {
public:
	explicit Mh(const sgw_lift_mh_conf *cp = nullptr)
	{
		if (cp)
			c_ = *cp;
		else
			sgw_lift_mh_conf_default(&c_);
		mem_.resize(sgw_lift_mh_mem_size(&c_) + 3);
		m_ = sgw_lift_mh_init(mem_.data() + 3, mem_.size() - 3, &c_, 0); // odd start
	}
	sgw_lift_mh *m() { return m_; }
	const sgw_lift_mh_conf &conf() const { return c_; }
	sgw_lift_mh_stats Stats() const
	{
		sgw_lift_mh_stats s;
		sgw_lift_mh_get_stats(m_, &s);
		return s;
	}
	sgw_lift_mh_tx_out Tx(const std::vector<uint8_t> &p, uint32_t spi = kDlSpi)
	{
		sgw_lift_mh_tx_out t;
		int v = sgw_lift_mh_tx(m_, now, p.data(), p.size(), spi, 50, &t);
		EXPECT_EQ(v, t.verdict);
		if (t.verdict != SGW_LIFT_MH_PLAIN) {
			// The headers decode back, flow id and number as said.
			sgw_lift_msg msg;
			uint8_t b[8 + 8] = {0};
			memcpy(b, t.ack_hdr, 8);
			EXPECT_EQ(sgw_lift_decode(b, sizeof(b), &msg), SGW_LIFT_DEC_OK);
			EXPECT_EQ(msg.kind, SGW_LIFT_K_TCP_ACK);
			EXPECT_EQ(msg.flow_id, t.flow_id);
			EXPECT_EQ(msg.word, t.ipsec_ack);
			EXPECT_EQ(msg.flags & 0x38, t.flags);
			EXPECT_EQ(msg.next, 50);
			if (t.verdict == SGW_LIFT_MH_PAIR) {
				memcpy(b, t.frack_hdr, 8);
				EXPECT_EQ(sgw_lift_decode(b, sizeof(b), &msg), SGW_LIFT_DEC_OK);
				EXPECT_EQ(msg.kind, SGW_LIFT_K_FRACK);
				EXPECT_EQ(msg.flow_id, t.flow_id);
			}
		}
		return t;
	}
	int Rx(uint32_t esp, const std::vector<uint8_t> &p, uint32_t spi = kDlSpi)
	{
		return sgw_lift_mh_rx(m_, now, spi, esp, p.data(), p.size());
	}
	std::vector<sgw_lift_mh_ctrl> Poll(uint32_t cap = 16)
	{
		std::vector<sgw_lift_mh_ctrl> v(cap);
		uint32_t n = sgw_lift_mh_poll(m_, now, v.data(), cap);
		v.resize(n);
		uint64_t d = sgw_lift_mh_next_deadline(m_);
		EXPECT_TRUE(d == SGW_LIFT_MH_NEVER || d >= now || n == cap);
		return v;
	}
	// Answer a polled control packet as the hub would.
	int Answer(const sgw_lift_mh_ctrl &c, uint8_t status = SGW_LIFT_ST_OK)
	{
		sgw_lift_msg msg;
		EXPECT_EQ(sgw_lift_decode(c.hdr, 8, &msg), SGW_LIFT_DEC_OK);
		uint8_t b[8];
		uint8_t kind = c.kind == SGW_LIFT_K_SETUP ? SGW_LIFT_K_SETUP_ACK :
			       SGW_LIFT_K_TEARDOWN_ACK;
		EXPECT_EQ(sgw_lift_build_ctrl_ack(b, 8, kind, msg.flow_id,
						  c.kind == SGW_LIFT_K_SETUP ? msg.word : 0,
						  status), 8u);
		return sgw_lift_mh_ctrl_rx(m_, now, b, 8);
	}
	sgw_lift_mh_flow_info Info(const std::vector<uint8_t> &p)
	{
		sgw_lift_mh_flow_info i;
		memset(&i, 0, sizeof(i));
		EXPECT_EQ(sgw_lift_mh_flow_get(m_, p.data(), p.size(), &i), 0);
		return i;
	}
	bool Has(const std::vector<uint8_t> &p)
	{
		sgw_lift_mh_flow_info i;
		return sgw_lift_mh_flow_get(m_, p.data(), p.size(), &i) == 0;
	}

	uint64_t now = 0;

private:
	sgw_lift_mh_conf c_;
	std::vector<uint8_t> mem_;
	sgw_lift_mh *m_ = nullptr;
};

constexpr uint32_t kIssMh = 1000, kIssFh = 500000;

// The host opens a connection; the Setup is answered (or not). Returns the
// flow's state. The host has acknowledged the SYN-ACK (esp 1).
void
OpenClient(Mh &h, const Conn &c, bool answer = true)
{
	EXPECT_EQ(h.Tx(c.Seg(true, kIssMh, 0, kSyn, 65535, 0)).why, SGW_LIFT_MH_W_HANDSHAKE);
	h.now += 600 * kMs;
	EXPECT_EQ(h.Rx(1, c.Seg(false, kIssFh, kIssMh + 1, kSyn | kAck, 65535, 0)),
		  SGW_LIFT_MH_RX_SYN);
	auto ctl = h.Poll();
	ASSERT_EQ(ctl.size(), 1u);
	EXPECT_EQ(ctl[0].kind, SGW_LIFT_K_SETUP);
	auto a = h.Tx(c.Seg(true, kIssMh + 1, kIssFh + 1, kAck, 65535, 0));
	EXPECT_EQ(a.why, SGW_LIFT_MH_W_PENDING);
	EXPECT_EQ(a.verdict, SGW_LIFT_MH_ACK);
	EXPECT_EQ(a.flags, SGW_LIFT_BIT_S); // acknowledges no data: never new data
	EXPECT_EQ(a.ipsec_ack, 1u);
	if (answer) {
		h.now += 600 * kMs;
		EXPECT_EQ(h.Answer(ctl[0]), SGW_LIFT_MH_C_SETUP_OK);
	}
}

// FH data: segment k (0-based) of kMss bytes, ESP sequence number esp.
std::vector<uint8_t>
Data(const Conn &c, uint32_t k, uint8_t extra = 0)
{
	return c.Seg(false, kIssFh + 1 + k * kMss, kIssMh + 1, kAck | kPsh | extra, 65535, kMss);
}

// The host's ACK of the first k segments.
std::vector<uint8_t>
AckOf(const Conn &c, uint32_t k, uint16_t win = 65535, size_t pay = 0, uint8_t extra = 0)
{
	return c.Seg(true, kIssMh + 1, kIssFh + 1 + k * kMss, kAck | extra, win, pay);
}

// ------------------------------------------------------------------- conf

TEST(LiftMhConf, DefaultsValidAndChecked)
{
	sgw_lift_mh_conf c;
	sgw_lift_mh_conf_default(&c);
	EXPECT_EQ(sgw_lift_mh_conf_check(&c), nullptr);
	EXPECT_GT(sgw_lift_mh_mem_size(&c), 0u);
	sgw_lift_mh_conf b = c;
	b.max_flows = 0;
	EXPECT_STREQ(sgw_lift_mh_conf_check(&b), "max_flows");
	EXPECT_EQ(sgw_lift_mh_mem_size(&b), 0u);
	b = c;
	b.max_flows = SGW_LIFT_MH_MAX_FLOWS + 1;
	EXPECT_STREQ(sgw_lift_mh_conf_check(&b), "max_flows");
	b = c;
	b.track = 2;
	EXPECT_STREQ(sgw_lift_mh_conf_check(&b), "track");
	b = c;
	b.next_header = 6;
	EXPECT_STREQ(sgw_lift_mh_conf_check(&b), "next_header");
	b = c;
	b.ctrl_rto_max_ns = c.ctrl_rto_ns - 1;
	EXPECT_STREQ(sgw_lift_mh_conf_check(&b), "ctrl_rto_ns");
	b = c;
	b.share_permille = 1001;
	EXPECT_STREQ(sgw_lift_mh_conf_check(&b), "share_permille");
	b = c;
	b.ack_scope = 2;
	EXPECT_STREQ(sgw_lift_mh_conf_check(&b), "ack_scope");
	std::vector<uint8_t> mem(sgw_lift_mh_mem_size(&c));
	EXPECT_EQ(sgw_lift_mh_init(mem.data(), mem.size() - 1, &c, 0), nullptr);
	EXPECT_NE(sgw_lift_mh_init(mem.data(), mem.size(), &c, 0), nullptr);
	EXPECT_EQ(sgw_lift_mh_init(mem.data(), mem.size(), &b, 0), nullptr);
}

// ---------------------------------------------------------------- control

TEST(LiftMhCtrl, ClientSetupCarriesTheDownlinkSaAndActivates)
{
	Mh h;
	Conn c;
	EXPECT_EQ(sgw_lift_mh_next_deadline(h.m()), SGW_LIFT_MH_NEVER);
	h.Tx(c.Seg(true, kIssMh, 0, kSyn, 65535, 0));
	EXPECT_EQ(h.Info(c.Seg(true, 0, 0, 0, 0, 0)).state, SGW_LIFT_MH_S_HANDSHAKE);
	EXPECT_TRUE(h.Poll().empty()); // no Setup before the connection is up
	h.now = 600 * kMs;
	// The SYN-ACK comes on SPI 0x1234, not the configured one: that one counts.
	EXPECT_EQ(h.Rx(1, c.Seg(false, kIssFh, kIssMh + 1, kSyn | kAck, 65535, 0), 0x1234),
		  SGW_LIFT_MH_RX_SYN);
	EXPECT_EQ(sgw_lift_mh_next_deadline(h.m()), h.now);
	auto ctl = h.Poll();
	ASSERT_EQ(ctl.size(), 1u);
	sgw_lift_msg msg;
	ASSERT_EQ(sgw_lift_decode(ctl[0].hdr, 8, &msg), SGW_LIFT_DEC_OK);
	EXPECT_EQ(msg.kind, SGW_LIFT_K_SETUP);
	EXPECT_EQ(msg.word, 0x1234u);
	EXPECT_EQ(msg.next, 50);
	EXPECT_EQ(msg.flow_id, ctl[0].flow_id);
	EXPECT_EQ(ctl[0].retransmit, 0);
	auto i = h.Info(c.Seg(true, 0, 0, 0, 0, 0));
	EXPECT_EQ(i.state, SGW_LIFT_MH_S_PENDING);
	EXPECT_EQ(i.flow_id, ctl[0].flow_id);
	EXPECT_EQ(i.ctrl_next, h.now + 1500 * kMs);
	EXPECT_TRUE(h.Poll().empty()); // nothing due before the retransmission
	h.now += 500 * kMs;
	EXPECT_EQ(h.Answer(ctl[0]), SGW_LIFT_MH_C_SETUP_OK);
	i = h.Info(c.Seg(true, 0, 0, 0, 0, 0));
	EXPECT_EQ(i.state, SGW_LIFT_MH_S_ACTIVE);
	EXPECT_EQ(i.transitory, 1);
	EXPECT_EQ(i.hub_entry, 1);
	EXPECT_EQ(i.ctrl_inflight, 0);
	// The same acknowledgement again: nothing outstanding.
	EXPECT_EQ(h.Answer(ctl[0]), SGW_LIFT_MH_C_UNEXPECTED);
	EXPECT_TRUE(h.Poll().empty());
	auto st = h.Stats();
	EXPECT_EQ(st.setups_sent, 1u);
	EXPECT_EQ(st.ctrl_retx, 0u);
	EXPECT_EQ(st.ctrl_why[SGW_LIFT_MH_C_SETUP_OK], 1u);
	EXPECT_EQ(st.ctrl_why[SGW_LIFT_MH_C_UNEXPECTED], 1u);
	EXPECT_EQ(st.flows, 1u);
}

TEST(LiftMhCtrl, ServerSideSetupOnTheSynAck)
{
	Mh h;
	Conn c;
	EXPECT_EQ(h.Rx(1, c.Seg(false, kIssFh, 0, kSyn, 65535, 0), 0x77), SGW_LIFT_MH_RX_SYN);
	EXPECT_TRUE(h.Poll().empty());
	auto t = h.Tx(c.Seg(true, kIssMh, kIssFh + 1, kSyn | kAck, 65535, 0));
	EXPECT_EQ(t.verdict, SGW_LIFT_MH_PLAIN);
	EXPECT_EQ(t.why, SGW_LIFT_MH_W_HANDSHAKE);
	auto ctl = h.Poll();
	ASSERT_EQ(ctl.size(), 1u);
	sgw_lift_msg msg;
	ASSERT_EQ(sgw_lift_decode(ctl[0].hdr, 8, &msg), SGW_LIFT_DEC_OK);
	EXPECT_EQ(msg.word, 0x77u);
	EXPECT_EQ(h.Answer(ctl[0]), SGW_LIFT_MH_C_SETUP_OK);
	// The FH uploads; the host's ACK of it is a pair.
	EXPECT_EQ(h.Rx(2, c.Seg(false, kIssFh + 1, kIssMh + 1, kAck, 65535, 0), 0x77),
		  SGW_LIFT_MH_RX_PURE);
	EXPECT_EQ(h.Rx(3, c.Seg(false, kIssFh + 1, kIssMh + 1, kAck, 65535, 100), 0x77),
		  SGW_LIFT_MH_RX_DATA);
	auto a = h.Tx(c.Seg(true, kIssMh + 1, kIssFh + 101, kAck, 65535, 0), 0x77);
	EXPECT_EQ(a.verdict, SGW_LIFT_MH_PAIR);
	EXPECT_EQ(a.ipsec_ack, 3u);
}

// Found end to end (test_lift_chain.sh): the SYN-ACK was delayed past the
// FH's 1 s SYN timer, the retransmitted SYN replaced the set-up entry with a
// new one stuck in HANDSHAKE, and the whole download went without LIFT.
TEST(LiftMhCtrl, RetransmittedSynKeepsTheEntry)
{
	Mh h;
	Conn c;
	EXPECT_EQ(h.Rx(1, c.Seg(false, kIssFh, 0, kSyn, 65535, 0), 0x77), SGW_LIFT_MH_RX_SYN);
	h.Tx(c.Seg(true, kIssMh, kIssFh + 1, kSyn | kAck, 65535, 0));
	auto ctl = h.Poll();
	ASSERT_EQ(ctl.size(), 1u);
	EXPECT_EQ(h.Answer(ctl[0]), SGW_LIFT_MH_C_SETUP_OK);
	// The same SYN again, on a newer ESP sequence number.
	EXPECT_EQ(h.Rx(2, c.Seg(false, kIssFh, 0, kSyn, 65535, 0), 0x77), SGW_LIFT_MH_RX_SYN);
	EXPECT_TRUE(h.Poll().empty()); // no Teardown, no new Setup
	EXPECT_EQ(h.Rx(3, c.Seg(false, kIssFh + 1, kIssMh + 1, kAck, 65535, 100), 0x77),
		  SGW_LIFT_MH_RX_DATA);
	auto a = h.Tx(c.Seg(true, kIssMh + 1, kIssFh + 101, kAck, 65535, 0), 0x77);
	EXPECT_EQ(a.verdict, SGW_LIFT_MH_PAIR);
	EXPECT_EQ(a.ipsec_ack, 3u);
	sgw_lift_mh_stats st = h.Stats();
	EXPECT_EQ(st.flows_created, 1u);
	EXPECT_EQ(st.teardowns_sent, 0u);
	// A SYN with another ISN on the 4-tuple is a new connection: the old
	// entry is torn down and a new one waits for its handshake.
	EXPECT_EQ(h.Rx(4, c.Seg(false, kIssFh + 5000000, 0, kSyn, 65535, 0), 0x77),
		  SGW_LIFT_MH_RX_SYN);
	st = h.Stats();
	EXPECT_EQ(st.flows_created, 2u);
	auto td = h.Poll();
	ASSERT_EQ(td.size(), 1u);
	EXPECT_EQ(td[0].kind, SGW_LIFT_K_TEARDOWN);
}

TEST(LiftMhCtrl, RetransmitWithBackoffThenGiveUp)
{
	Mh h;
	Conn c;
	OpenClient(h, c, false);
	const uint64_t t0 = h.now;
	// 1.5 s, then doubling: 3, 6, then capped at 8 s; 6 transmissions in all.
	const uint64_t gaps[] = {1500, 3000, 6000, 8000, 8000};
	uint64_t t = t0;
	for (uint64_t g : gaps) {
		t += g * kMs;
		EXPECT_EQ(sgw_lift_mh_next_deadline(h.m()), t);
		h.now = t - 1;
		EXPECT_TRUE(h.Poll().empty());
		h.now = t;
		auto ctl = h.Poll();
		ASSERT_EQ(ctl.size(), 1u);
		EXPECT_EQ(ctl[0].kind, SGW_LIFT_K_SETUP);
		EXPECT_GT(ctl[0].retransmit, 0);
	}
	EXPECT_EQ(h.Stats().ctrl_retx, 5u);
	// The last one waits 8 s too, then the machine gives up: LIFT off.
	t += 8000 * kMs;
	EXPECT_EQ(sgw_lift_mh_next_deadline(h.m()), t);
	h.now = t;
	EXPECT_TRUE(h.Poll().empty());
	EXPECT_EQ(h.Stats().setup_gaveup, 1u);
	EXPECT_EQ(h.Info(c.Seg(true, 0, 0, 0, 0, 0)).state, SGW_LIFT_MH_S_OFF);
	h.Rx(2, Data(c, 0));
	auto a = h.Tx(AckOf(c, 1));
	EXPECT_EQ(a.verdict, SGW_LIFT_MH_PLAIN);
	EXPECT_EQ(a.why, SGW_LIFT_MH_W_OFF);
}

TEST(LiftMhCtrl, LateAckAfterRetransmissionStillCounts)
{
	Mh h;
	Conn c;
	OpenClient(h, c, false);
	h.now += 1500 * kMs;
	auto ctl = h.Poll();
	ASSERT_EQ(ctl.size(), 1u);
	h.now += 100 * kMs;
	EXPECT_EQ(h.Answer(ctl[0]), SGW_LIFT_MH_C_SETUP_OK);
	EXPECT_EQ(h.Info(c.Seg(true, 0, 0, 0, 0, 0)).state, SGW_LIFT_MH_S_ACTIVE);
	EXPECT_EQ(sgw_lift_mh_next_deadline(h.m()), h.now);
	h.Poll();
	// Only the idle expiry is left (the host's ACK at 600 ms was the last packet).
	EXPECT_EQ(sgw_lift_mh_next_deadline(h.m()), 600 * kMs + h.conf().idle_ns);
}

TEST(LiftMhCtrl, RefusedSetupTurnsLiftOffForTheFlow)
{
	for (uint8_t st : {SGW_LIFT_ST_FULL, SGW_LIFT_ST_BAD_PROTO}) {
		Mh h;
		Conn c;
		OpenClient(h, c, false);
		auto i = h.Info(c.Seg(true, 0, 0, 0, 0, 0));
		uint8_t b[8];
		sgw_lift_build_ctrl_ack(b, 8, SGW_LIFT_K_SETUP_ACK, i.flow_id, kDlSpi, st);
		EXPECT_EQ(sgw_lift_mh_ctrl_rx(h.m(), h.now, b, 8), SGW_LIFT_MH_C_SETUP_REFUSED);
		EXPECT_EQ(h.Info(c.Seg(true, 0, 0, 0, 0, 0)).state, SGW_LIFT_MH_S_OFF);
		EXPECT_TRUE(h.Poll().empty()); // no Teardown for an entry never built
		EXPECT_EQ(h.Tx(AckOf(c, 0)).why, SGW_LIFT_MH_W_OFF);
		auto s = h.Stats();
		EXPECT_EQ(s.setup_full, st == SGW_LIFT_ST_FULL ? 1u : 0u);
		EXPECT_EQ(s.setup_bad_proto, st == SGW_LIFT_ST_BAD_PROTO ? 1u : 0u);
	}
}

TEST(LiftMhCtrl, BadAndUnexpectedAcknowledgements)
{
	Mh h;
	Conn c;
	OpenClient(h, c, false);
	auto i = h.Info(c.Seg(true, 0, 0, 0, 0, 0));
	uint8_t b[8];
	// wrong SPI echoed
	sgw_lift_build_ctrl_ack(b, 8, SGW_LIFT_K_SETUP_ACK, i.flow_id, kDlSpi + 1, 0);
	EXPECT_EQ(sgw_lift_mh_ctrl_rx(h.m(), h.now, b, 8), SGW_LIFT_MH_C_UNEXPECTED);
	// another flow id (same slot, other generation; and a slot out of range)
	sgw_lift_build_ctrl_ack(b, 8, SGW_LIFT_K_SETUP_ACK, (uint16_t)(i.flow_id ^ 0x8000),
				kDlSpi, 0);
	EXPECT_EQ(sgw_lift_mh_ctrl_rx(h.m(), h.now, b, 8), SGW_LIFT_MH_C_UNEXPECTED);
	sgw_lift_build_ctrl_ack(b, 8, SGW_LIFT_K_SETUP_ACK, 0x00ff, kDlSpi, 0);
	EXPECT_EQ(sgw_lift_mh_ctrl_rx(h.m(), h.now, b, 8), SGW_LIFT_MH_C_UNEXPECTED);
	// a Teardown-ACK while a Setup is outstanding
	sgw_lift_build_ctrl_ack(b, 8, SGW_LIFT_K_TEARDOWN_ACK, i.flow_id, 0, 0);
	EXPECT_EQ(sgw_lift_mh_ctrl_rx(h.m(), h.now, b, 8), SGW_LIFT_MH_C_UNEXPECTED);
	// not acknowledgements at all
	sgw_lift_build_setup(b, 8, i.flow_id, kDlSpi, 50);
	EXPECT_EQ(sgw_lift_mh_ctrl_rx(h.m(), h.now, b, 8), SGW_LIFT_MH_C_BAD);
	EXPECT_EQ(sgw_lift_mh_ctrl_rx(h.m(), h.now, b, 7), SGW_LIFT_MH_C_BAD);
	EXPECT_EQ(sgw_lift_mh_ctrl_rx(h.m(), h.now, nullptr, 0), SGW_LIFT_MH_C_BAD);
	sgw_lift_build_ctrl_ack(b, 8, SGW_LIFT_K_SETUP_ACK, i.flow_id, kDlSpi, 0);
	b[7] = 9; // bad status
	EXPECT_EQ(sgw_lift_mh_ctrl_rx(h.m(), h.now, b, 8), SGW_LIFT_MH_C_BAD);
	EXPECT_EQ(h.Info(c.Seg(true, 0, 0, 0, 0, 0)).state, SGW_LIFT_MH_S_PENDING);
	auto s = h.Stats();
	EXPECT_EQ(s.ctrl_why[SGW_LIFT_MH_C_UNEXPECTED], 4u);
	EXPECT_EQ(s.ctrl_why[SGW_LIFT_MH_C_BAD], 4u);
}

TEST(LiftMhCtrl, FinAckedSendsDThenTeardownUntilAcked)
{
	Mh h;
	Conn c;
	OpenClient(h, c);
	h.Poll();
	h.Rx(2, Data(c, 0));
	EXPECT_EQ(h.Tx(AckOf(c, 1)).verdict, SGW_LIFT_MH_PAIR);
	// The FH's last segment carries its FIN.
	EXPECT_EQ(h.Rx(3, Data(c, 1, kFin)), SGW_LIFT_MH_RX_FIN);
	auto a = h.Tx(c.Seg(true, kIssMh + 1, kIssFh + 1 + 2 * kMss + 1, kAck, 65535, 0));
	EXPECT_EQ(a.why, SGW_LIFT_MH_W_FIN_ACK);
	EXPECT_EQ(a.verdict, SGW_LIFT_MH_ACK);
	EXPECT_EQ(a.flags, SGW_LIFT_BIT_D | SGW_LIFT_BIT_F);
	EXPECT_EQ(a.ipsec_ack, 3u);
	EXPECT_EQ(h.Info(c.Seg(true, 0, 0, 0, 0, 0)).state, SGW_LIFT_MH_S_CLOSING);
	// The host's own FIN afterwards: plain.
	auto f = h.Tx(c.Seg(true, kIssMh + 1, kIssFh + 2 + 2 * kMss, kAck | kFin, 65535, 0));
	EXPECT_EQ(f.verdict, SGW_LIFT_MH_PLAIN);
	EXPECT_EQ(f.why, SGW_LIFT_MH_W_CLOSING);
	auto ctl = h.Poll();
	ASSERT_EQ(ctl.size(), 1u);
	EXPECT_EQ(ctl[0].kind, SGW_LIFT_K_TEARDOWN);
	h.now += 1500 * kMs;
	ctl = h.Poll();
	ASSERT_EQ(ctl.size(), 1u); // retransmitted
	EXPECT_EQ(ctl[0].retransmit, 1);
	// The D flag already removed the hub's entry: status unknown flow.
	EXPECT_EQ(h.Answer(ctl[0], SGW_LIFT_ST_UNKNOWN_FLOW), SGW_LIFT_MH_C_TEARDOWN_OK);
	EXPECT_FALSE(h.Has(c.Seg(true, 0, 0, 0, 0, 0)));
	auto s = h.Stats();
	EXPECT_EQ(s.flows, 0u);
	EXPECT_EQ(s.flows_freed, 1u);
	EXPECT_EQ(s.teardowns_sent, 1u);
	EXPECT_EQ(s.flag_d, 1u);
}

TEST(LiftMhCtrl, RstEitherWayTearsDown)
{
	for (int from_mh = 0; from_mh < 2; from_mh++) {
		Mh h;
		Conn c;
		OpenClient(h, c);
		h.Poll();
		h.Rx(2, Data(c, 0));
		if (from_mh) {
			auto a = h.Tx(c.Seg(true, kIssMh + 1, kIssFh + 1 + kMss, kRst | kAck, 0,
					    0));
			EXPECT_EQ(a.why, SGW_LIFT_MH_W_RST);
			EXPECT_EQ(a.flags, SGW_LIFT_BIT_D | SGW_LIFT_BIT_F);
		} else {
			EXPECT_EQ(h.Rx(3, c.Seg(false, kIssFh + 1 + kMss, 0, kRst, 0, 0)),
				  SGW_LIFT_MH_RX_RST);
		}
		EXPECT_EQ(h.Info(c.Seg(true, 0, 0, 0, 0, 0)).state, SGW_LIFT_MH_S_CLOSING);
		auto ctl = h.Poll();
		ASSERT_EQ(ctl.size(), 1u);
		EXPECT_EQ(ctl[0].kind, SGW_LIFT_K_TEARDOWN);
		EXPECT_EQ(h.Answer(ctl[0]), SGW_LIFT_MH_C_TEARDOWN_OK);
		EXPECT_EQ(h.Stats().flows, 0u);
	}
}

TEST(LiftMhCtrl, TeardownGivesUpAndFreesTheEntry)
{
	Mh h;
	Conn c;
	OpenClient(h, c);
	h.Poll();
	h.Rx(3, c.Seg(false, kIssFh + 1, 0, kRst, 0, 0));
	int sent = 0;
	for (int k = 0; k < 20 && h.Stats().flows > 0; k++) {
		sent += (int)h.Poll().size();
		if (h.Stats().flows == 0)
			break;
		h.now = sgw_lift_mh_next_deadline(h.m());
		ASSERT_NE(h.now, SGW_LIFT_MH_NEVER);
	}
	h.Poll();
	EXPECT_EQ(sent, 6);
	EXPECT_EQ(h.Stats().teardown_gaveup, 1u);
	EXPECT_EQ(h.Stats().flows, 0u);
	EXPECT_EQ(sgw_lift_mh_next_deadline(h.m()), SGW_LIFT_MH_NEVER);
}

TEST(LiftMhCtrl, TeardownWaitsForTheOutstandingSetup)
{
	Mh h;
	Conn c;
	OpenClient(h, c, false);
	h.Rx(3, c.Seg(false, kIssFh + 1, 0, kRst, 0, 0));
	EXPECT_TRUE(h.Poll().empty()); // one request at a time per flow
	auto i = h.Info(c.Seg(true, 0, 0, 0, 0, 0));
	uint8_t b[8];
	sgw_lift_build_ctrl_ack(b, 8, SGW_LIFT_K_SETUP_ACK, i.flow_id, kDlSpi, 0);
	EXPECT_EQ(sgw_lift_mh_ctrl_rx(h.m(), h.now, b, 8), SGW_LIFT_MH_C_SETUP_OK);
	auto ctl = h.Poll();
	ASSERT_EQ(ctl.size(), 1u);
	EXPECT_EQ(ctl[0].kind, SGW_LIFT_K_TEARDOWN);
	EXPECT_EQ(h.Answer(ctl[0]), SGW_LIFT_MH_C_TEARDOWN_OK);
	EXPECT_EQ(h.Stats().flows, 0u);
}

TEST(LiftMhCtrl, PollRespectsItsCapacity)
{
	Mh h;
	std::vector<Conn> cs(5);
	for (int k = 0; k < 5; k++) {
		cs[k].mh_port = (uint16_t)(41000 + k);
		h.Tx(cs[k].Seg(true, kIssMh, 0, kSyn, 65535, 0));
		h.Rx(1, cs[k].Seg(false, kIssFh, kIssMh + 1, kSyn | kAck, 65535, 0));
	}
	auto a = h.Poll(2);
	EXPECT_EQ(a.size(), 2u);
	EXPECT_EQ(sgw_lift_mh_next_deadline(h.m()), h.now); // more due
	auto b = h.Poll(2);
	auto d = h.Poll(2);
	EXPECT_EQ(b.size() + d.size(), 3u);
	std::set<uint16_t> ids;
	for (auto *v : {&a, &b, &d})
		for (auto &x : *v)
			ids.insert(x.flow_id);
	EXPECT_EQ(ids.size(), 5u); // distinct flow ids
	EXPECT_EQ(h.Stats().setups_sent, 5u);
}

TEST(LiftMhCtrl, IdleAndUnansweredHandshakeExpire)
{
	Mh h;
	Conn c, d;
	d.mh_port = 41001;
	OpenClient(h, c);
	h.Poll();
	h.Tx(d.Seg(true, kIssMh, 0, kSyn, 65535, 0)); // never answered
	h.now += h.conf().handshake_ns;
	h.Poll();
	EXPECT_FALSE(h.Has(d.Seg(true, 0, 0, 0, 0, 0)));
	EXPECT_TRUE(h.Has(c.Seg(true, 0, 0, 0, 0, 0)));
	h.now = sgw_lift_mh_next_deadline(h.m());
	auto ctl = h.Poll();
	ASSERT_EQ(ctl.size(), 1u);
	EXPECT_EQ(ctl[0].kind, SGW_LIFT_K_TEARDOWN);
	EXPECT_EQ(h.Stats().idle_expired, 2u);
	EXPECT_EQ(h.Answer(ctl[0]), SGW_LIFT_MH_C_TEARDOWN_OK);
	EXPECT_EQ(h.Stats().flows, 0u);
}

// --------------------------------------------------------------- ACK path

TEST(LiftMhAck, PairsOnlyForAcksOfNewData)
{
	Mh h;
	Conn c;
	OpenClient(h, c);
	h.Poll();
	EXPECT_EQ(h.Info(c.Seg(true, 0, 0, 0, 0, 0)).transitory, 1);
	// Transitory: nothing acknowledged yet, a repeat of the handshake ACK: S,
	// so that the hub does not start its timer on it.
	auto t = h.Tx(AckOf(c, 0));
	EXPECT_EQ(t.why, SGW_LIFT_MH_W_TRANSITORY);
	EXPECT_EQ(t.flags, SGW_LIFT_BIT_S);
	// Even when it carries a window update.
	t = h.Tx(AckOf(c, 0, 60000));
	EXPECT_EQ(t.why, SGW_LIFT_MH_W_TRANSITORY);
	EXPECT_EQ(t.flags, SGW_LIFT_BIT_S);
	EXPECT_EQ(t.verdict, SGW_LIFT_MH_ACK);
	for (uint32_t k = 0; k < 4; k++)
		EXPECT_EQ(h.Rx(2 + k, Data(c, k)), SGW_LIFT_MH_RX_DATA);
	// The first ACK of new data: a pair with no flag, the transitory phase ends.
	auto p = h.Tx(AckOf(c, 2));
	EXPECT_EQ(p.verdict, SGW_LIFT_MH_PAIR);
	EXPECT_EQ(p.why, SGW_LIFT_MH_W_NEW_DATA);
	EXPECT_EQ(p.flags, 0);
	EXPECT_EQ(p.ipsec_ack, 3u); // ESP 2 and 3 carried the two segments
	EXPECT_EQ(h.Info(c.Seg(true, 0, 0, 0, 0, 0)).transitory, 0);
	// A duplicate: S, no FrACK, the number unchanged.
	auto d = h.Tx(AckOf(c, 2));
	EXPECT_EQ(d.verdict, SGW_LIFT_MH_ACK);
	EXPECT_EQ(d.why, SGW_LIFT_MH_W_DUP);
	EXPECT_EQ(d.flags, SGW_LIFT_BIT_S);
	EXPECT_EQ(d.ipsec_ack, 3u);
	// Same ACK, another window: F.
	auto w = h.Tx(AckOf(c, 2, 30000));
	EXPECT_EQ(w.why, SGW_LIFT_MH_W_WIN_UPDATE);
	EXPECT_EQ(w.flags, SGW_LIFT_BIT_F);
	// Host data that acknowledges nothing new: F, no FrACK.
	auto dt = h.Tx(AckOf(c, 2, 30000, 300, kPsh));
	EXPECT_EQ(dt.why, SGW_LIFT_MH_W_DATA);
	EXPECT_EQ(dt.verdict, SGW_LIFT_MH_ACK);
	EXPECT_EQ(dt.flags, SGW_LIFT_BIT_F);
	// Host data that acknowledges new data: a pair, F (piggybacked).
	auto pg = h.Tx(AckOf(c, 3, 30000, 300, kPsh));
	EXPECT_EQ(pg.why, SGW_LIFT_MH_W_NEW_DATA_PIGGY);
	EXPECT_EQ(pg.verdict, SGW_LIFT_MH_PAIR);
	EXPECT_EQ(pg.flags, SGW_LIFT_BIT_F);
	EXPECT_EQ(pg.ipsec_ack, 4u);
	// An older ACK than one sent: S.
	auto o = h.Tx(AckOf(c, 1, 30000));
	EXPECT_EQ(o.why, SGW_LIFT_MH_W_OLD);
	EXPECT_EQ(o.flags, SGW_LIFT_BIT_S);
	// The host's window closes (new data, window 0): F, no FrACK.
	auto z = h.Tx(AckOf(c, 4, 0));
	EXPECT_EQ(z.why, SGW_LIFT_MH_W_WIN_ZERO);
	EXPECT_EQ(z.verdict, SGW_LIFT_MH_ACK);
	EXPECT_EQ(z.flags, SGW_LIFT_BIT_F);
	EXPECT_EQ(z.ipsec_ack, 5u);
	// ... and reopens: F (it unfreezes the sender).
	auto r = h.Tx(AckOf(c, 4, 65535));
	EXPECT_EQ(r.why, SGW_LIFT_MH_W_WIN_OPEN);
	EXPECT_EQ(r.flags, SGW_LIFT_BIT_F);
	// Then a duplicate is S again.
	EXPECT_EQ(h.Tx(AckOf(c, 4, 65535)).flags, SGW_LIFT_BIT_S);
	auto s = h.Stats();
	EXPECT_EQ(s.pairs, 2u);
	EXPECT_EQ(s.tx_why[SGW_LIFT_MH_W_NEW_DATA], 1u);
	EXPECT_EQ(s.tx_why[SGW_LIFT_MH_W_DUP], 2u);
	EXPECT_EQ(s.flag_s, 6u); // pending 1, transitory 2, dup 2, old 1
}

TEST(LiftMhAck, WithoutTheHubsConfirmationNoFrack)
{
	Mh h;
	Conn c;
	OpenClient(h, c, false);
	h.Rx(2, Data(c, 0));
	auto a = h.Tx(AckOf(c, 1));
	EXPECT_EQ(a.why, SGW_LIFT_MH_W_PENDING);
	EXPECT_EQ(a.verdict, SGW_LIFT_MH_ACK);
	EXPECT_EQ(a.flags, 0); // new data: no flag, and no FrACK
	EXPECT_EQ(a.ipsec_ack, 2u);
	EXPECT_EQ(h.Tx(AckOf(c, 1)).flags, SGW_LIFT_BIT_S);
	EXPECT_EQ(h.Stats().pairs, 0u);
	// Confirmed: still transitory until the next ACK of new data, a pair.
	auto ctl = h.Poll();
	ASSERT_EQ(ctl.size(), 0u); // the Setup went in OpenClient
	EXPECT_EQ(h.Info(c.Seg(true, 0, 0, 0, 0, 0)).transitory, 1);
}

TEST(LiftMhAck, IpsecAckNumberFollowsWhatTheAckCovers)
{
	Mh h;
	Conn c;
	OpenClient(h, c);
	h.Poll();
	// Segment 0 on ESP 5, segment 2 on ESP 7 (segment 1 late), ESP 6 is segment 1.
	h.Rx(5, Data(c, 0));
	EXPECT_EQ(h.Tx(AckOf(c, 1)).ipsec_ack, 5u);
	h.Rx(7, Data(c, 2));
	// The host's duplicate ACK (a hole): ESP 7 is not covered by it.
	auto d = h.Tx(AckOf(c, 1));
	EXPECT_EQ(d.why, SGW_LIFT_MH_W_DUP);
	EXPECT_EQ(d.ipsec_ack, 5u);
	EXPECT_EQ(h.Info(c.Seg(true, 0, 0, 0, 0, 0)).track_n, 1u);
	EXPECT_EQ(h.Rx(6, Data(c, 1)), SGW_LIFT_MH_RX_DATA);
	auto a = h.Tx(AckOf(c, 3));
	EXPECT_EQ(a.verdict, SGW_LIFT_MH_PAIR);
	EXPECT_EQ(a.ipsec_ack, 7u);
	EXPECT_EQ(h.Info(c.Seg(true, 0, 0, 0, 0, 0)).track_n, 0u);
	// A retransmitted copy on a newer ESP number: the duplicate ACK it
	// draws covers it (S, a higher number, as the hub expects).
	EXPECT_EQ(h.Rx(9, Data(c, 2)), SGW_LIFT_MH_RX_OLD);
	auto r = h.Tx(AckOf(c, 3));
	EXPECT_EQ(r.why, SGW_LIFT_MH_W_DUP);
	EXPECT_EQ(r.ipsec_ack, 9u);
	// An FH ACK with nothing outstanding is covered at once (ESP 10).
	EXPECT_EQ(h.Rx(10, c.Seg(false, kIssFh + 1 + 3 * kMss, kIssMh + 1, kAck, 65535, 0)),
		  SGW_LIFT_MH_RX_PURE);
	EXPECT_EQ(h.Tx(AckOf(c, 3)).ipsec_ack, 10u);
	auto s = h.Stats();
	EXPECT_EQ(s.esp_late, 1u);  // 6 after 7
	EXPECT_GE(s.esp_gap, 2u);   // 1 -> 5, 5 -> 7, 7 -> 9
	EXPECT_EQ(s.sas, 1u);
}

// Two connections on one downlink SA (Linux transport-mode SAs are per host
// pair). The hub compares a flow's number with the SA's highest: with the
// seed's per-flow number an ACK of A never covers B's packets.
TEST(LiftMhAck, SharedSaScope)
{
	for (uint8_t scope : {SGW_LIFT_MH_ACK_FLOW, SGW_LIFT_MH_ACK_SA}) {
		sgw_lift_mh_conf cf;
		sgw_lift_mh_conf_default(&cf);
		cf.ack_scope = scope;
		Mh h(&cf);
		Conn a, b;
		b.mh_port = 40001;
		OpenClient(h, a);    // SYN-ACK on ESP 1
		h.Poll();
		h.Tx(b.Seg(true, kIssMh, 0, kSyn, 65535, 0));
		h.Rx(2, b.Seg(false, kIssFh, kIssMh + 1, kSyn | kAck, 65535, 0));
		for (auto &x : h.Poll())
			h.Answer(x);
		h.Tx(AckOf(b, 0));
		h.Rx(3, Data(a, 0));
		h.Rx(4, Data(a, 1));
		h.Rx(5, Data(b, 0));
		h.Rx(6, Data(b, 1));
		// A acknowledges all of its data.
		auto x = h.Tx(AckOf(a, 2));
		EXPECT_EQ(x.verdict, SGW_LIFT_MH_PAIR);
		EXPECT_EQ(x.ipsec_ack, scope == SGW_LIFT_MH_ACK_SA ? 6u : 4u);
		// B acknowledges its first segment: never past its own second.
		auto y = h.Tx(AckOf(b, 1));
		EXPECT_EQ(y.ipsec_ack, 5u);
		// ESP 7 lost upstream, 8 (B) arrives: A's number stops before the hole.
		h.Rx(8, Data(b, 2));
		EXPECT_EQ(h.Tx(AckOf(a, 2)).ipsec_ack, scope == SGW_LIFT_MH_ACK_SA ? 6u : 4u);
		// B's ACK of its three segments covers its own ESP 8 (the missing
		// 7 belongs to no flow here; B's number is about B's data).
		EXPECT_EQ(h.Tx(AckOf(b, 3)).ipsec_ack, 8u);
		// The retransmission of whatever ESP 7 carried comes as 9 (no flow
		// here): A's number moves on only in SA scope, and only to 6 while
		// 7 is missing.
		Conn other;
		other.fh_port = 443;
		h.Rx(9, other.Seg(false, 1, 1, kAck, 100, 10));
		EXPECT_EQ(h.Tx(AckOf(a, 2)).ipsec_ack, scope == SGW_LIFT_MH_ACK_SA ? 6u : 4u);
	}
}

TEST(LiftMhAck, SaScopeGivesUpOldHoles)
{
	Mh h;
	Conn c;
	OpenClient(h, c); // ESP 1
	h.Poll();
	h.Rx(200, Data(c, 0));
	// 2..135 given up (more than 64 behind), 136..199 still missing.
	EXPECT_EQ(h.Tx(AckOf(c, 1)).ipsec_ack, 200u); // its own packet, acked
	Conn other;
	other.fh_port = 443;
	h.Rx(201, other.Seg(false, 1, 1, kAck, 100, 10));
	h.Rx(202, Data(c, 1));
	// Own record 202 uncredited; the SA's contiguous point is 136.
	auto d = h.Tx(AckOf(c, 1));
	EXPECT_EQ(d.ipsec_ack, 200u);
	for (uint32_t s = 136; s < 200; s++)
		h.Rx(s, other.Seg(false, 1, 1, kAck, 100, 10));
	// Now everything up to 201 was received; 202 is this flow's, unacked.
	EXPECT_EQ(h.Tx(AckOf(c, 1)).ipsec_ack, 201u);
	EXPECT_EQ(h.Tx(AckOf(c, 2)).ipsec_ack, 202u);
}

TEST(LiftMhAck, FullTrackMergesAndNeverClaimsEarly)
{
	sgw_lift_mh_conf cf;
	sgw_lift_mh_conf_default(&cf);
	cf.track = 4;
	Mh h(&cf);
	Conn c;
	OpenClient(h, c);
	h.Poll();
	for (uint32_t k = 0; k < 6; k++)
		h.Rx(10 + k, Data(c, k));
	EXPECT_EQ(h.Stats().track_merged, 2u);
	// ACK of 4 segments: 10..12 credited; 13 sits with 14 and 15 now.
	auto a = h.Tx(AckOf(c, 4));
	EXPECT_EQ(a.ipsec_ack, 12u);
	auto b = h.Tx(AckOf(c, 6));
	EXPECT_EQ(b.ipsec_ack, 15u);
}

TEST(LiftMhAck, RekeyStartsOverWithANewSetup)
{
	Mh h;
	Conn c;
	OpenClient(h, c);
	h.Poll();
	h.Rx(2, Data(c, 0));
	EXPECT_EQ(h.Tx(AckOf(c, 1)).ipsec_ack, 2u);
	EXPECT_EQ(h.Rx(1, Data(c, 1), 0x9999), SGW_LIFT_MH_RX_REKEY);
	auto i = h.Info(c.Seg(true, 0, 0, 0, 0, 0));
	EXPECT_EQ(i.state, SGW_LIFT_MH_S_PENDING);
	EXPECT_EQ(i.dl_spi, 0x9999u);
	auto ctl = h.Poll();
	ASSERT_EQ(ctl.size(), 1u);
	sgw_lift_msg msg;
	sgw_lift_decode(ctl[0].hdr, 8, &msg);
	EXPECT_EQ(msg.kind, SGW_LIFT_K_SETUP);
	EXPECT_EQ(msg.word, 0x9999u);
	EXPECT_EQ(h.Answer(ctl[0]), SGW_LIFT_MH_C_SETUP_OK);
	auto a = h.Tx(AckOf(c, 2));
	EXPECT_EQ(a.verdict, SGW_LIFT_MH_PAIR); // the new data ends the transitory phase
	EXPECT_EQ(a.ipsec_ack, 1u);              // numbers of the new SA
}

TEST(LiftMhAck, Ipv6Flow)
{
	Mh h;
	Conn c;
	c.v6 = true;
	OpenClient(h, c);
	h.Poll();
	h.Rx(2, Data(c, 0));
	h.Rx(3, Data(c, 1));
	auto a = h.Tx(AckOf(c, 2));
	EXPECT_EQ(a.verdict, SGW_LIFT_MH_PAIR);
	EXPECT_EQ(a.ipsec_ack, 3u);
	Conn c4; // the same ports over IPv4 are another flow
	EXPECT_FALSE(h.Has(c4.Seg(true, 0, 0, 0, 0, 0)));
}

TEST(LiftMhAck, TableFullBypasses)
{
	sgw_lift_mh_conf cf;
	sgw_lift_mh_conf_default(&cf);
	cf.max_flows = 2;
	Mh h(&cf);
	Conn a, b, x, y;
	b.mh_port = 40001;
	x.mh_port = 40002;
	y.mh_port = 40003;
	OpenClient(h, a);
	OpenClient(h, b);
	h.Poll();
	auto t = h.Tx(x.Seg(true, kIssMh, 0, kSyn, 65535, 0));
	EXPECT_EQ(t.why, SGW_LIFT_MH_W_TABLE_FULL);
	EXPECT_EQ(t.verdict, SGW_LIFT_MH_PLAIN);
	EXPECT_EQ(h.Rx(1, x.Seg(false, kIssFh, kIssMh + 1, kSyn | kAck, 65535, 0)),
		  SGW_LIFT_MH_RX_NO_FLOW);
	h.Rx(2, Data(x, 0));
	EXPECT_EQ(h.Tx(AckOf(x, 1)).why, SGW_LIFT_MH_W_NO_FLOW);
	EXPECT_EQ(h.Rx(1, y.Seg(false, kIssFh, 0, kSyn, 65535, 0)), SGW_LIFT_MH_RX_TABLE_FULL);
	EXPECT_TRUE(h.Poll().empty());
	auto s = h.Stats();
	EXPECT_EQ(s.flows, 2u);
	EXPECT_EQ(s.tx_why[SGW_LIFT_MH_W_TABLE_FULL], 1u);
	EXPECT_EQ(s.rx_why[SGW_LIFT_MH_RX_TABLE_FULL], 1u);
	// The others still work.
	h.Rx(2, Data(a, 0));
	EXPECT_EQ(h.Tx(AckOf(a, 1)).verdict, SGW_LIFT_MH_PAIR);
}

TEST(LiftMhAck, MalformedAndForeignInputIsPlainAndCounted)
{
	Mh h;
	Conn c;
	OpenClient(h, c);
	h.Poll();
	h.Rx(2, Data(c, 0));
	auto good = AckOf(c, 1, 65535, 0);
	auto before = h.Stats();
	// Every truncation of a valid segment, both directions.
	for (size_t n = 0; n < good.size(); n++) {
		std::vector<uint8_t> cut(good.begin(), good.begin() + (long)n);
		auto t = h.Tx(cut);
		EXPECT_EQ(t.verdict, SGW_LIFT_MH_PLAIN);
		EXPECT_EQ(t.why, SGW_LIFT_MH_W_MALFORMED) << n;
		EXPECT_EQ(h.Rx(3, cut), SGW_LIFT_MH_RX_MALFORMED) << n;
	}
	auto s = h.Stats();
	EXPECT_EQ(s.tx_why[SGW_LIFT_MH_W_MALFORMED] - before.tx_why[SGW_LIFT_MH_W_MALFORMED],
		  good.size());
	EXPECT_EQ(s.pairs, before.pairs);
	// Bad data offset, bad IHL, total length past the end, version 5.
	auto b = good;
	b[20 + 12] = 0x40;
	EXPECT_EQ(h.Tx(b).why, SGW_LIFT_MH_W_MALFORMED);
	b = good;
	b[20 + 12] = 0xf0;
	EXPECT_EQ(h.Tx(b).why, SGW_LIFT_MH_W_MALFORMED);
	b = good;
	b[0] = 0x44;
	EXPECT_EQ(h.Tx(b).why, SGW_LIFT_MH_W_MALFORMED);
	b = good;
	b[3] = (uint8_t)(b[3] + 1);
	EXPECT_EQ(h.Tx(b).why, SGW_LIFT_MH_W_MALFORMED);
	b = good;
	b[0] = 0x55;
	EXPECT_EQ(h.Tx(b).why, SGW_LIFT_MH_W_MALFORMED);
	// UDP, a fragment, IPv6 with an extension header.
	b = good;
	b[9] = 17;
	EXPECT_EQ(h.Tx(b).why, SGW_LIFT_MH_W_NOT_TCP);
	EXPECT_EQ(h.Rx(3, b), SGW_LIFT_MH_RX_NOT_TCP);
	b = good;
	b[6] = 0x20; // MF
	EXPECT_EQ(h.Tx(b).why, SGW_LIFT_MH_W_FRAGMENT);
	Conn c6;
	c6.v6 = true;
	b = c6.Seg(true, 1, 1, kAck, 100, 0);
	b[6] = 0; // hop-by-hop
	EXPECT_EQ(h.Tx(b).why, SGW_LIFT_MH_W_IP6_EXT);
	b[6] = 17;
	EXPECT_EQ(h.Tx(b).why, SGW_LIFT_MH_W_NOT_TCP);
	// No ACK flag, and SYN+RST.
	EXPECT_EQ(h.Tx(c.Seg(true, kIssMh + 1, 0, kPsh, 100, 10)).why, SGW_LIFT_MH_W_NO_ACK);
	EXPECT_EQ(h.Tx(c.Seg(true, kIssMh + 1, 0, kSyn | kRst, 100, 0)).why,
		  SGW_LIFT_MH_W_MALFORMED);
	// The flow is untouched by all that.
	EXPECT_EQ(h.Info(c.Seg(true, 0, 0, 0, 0, 0)).state, SGW_LIFT_MH_S_ACTIVE);
	EXPECT_STREQ(sgw_lift_mh_why_name(SGW_LIFT_MH_W_NEW_DATA), "new_data");
	EXPECT_STREQ(sgw_lift_mh_why_name(-1), "?");
	EXPECT_STREQ(sgw_lift_mh_rx_name(SGW_LIFT_MH_RX_PROBE), "probe");
	EXPECT_STREQ(sgw_lift_mh_ctrl_name(SGW_LIFT_MH_C__COUNT), "?");
}

// ------------------------------------------------------------- the clone

TEST(LiftMhClone, Ipv4WithPayloadAndOptions)
{
	Conn c;
	auto p = c.Seg(true, 7000, 123456, kAck | kPsh, 29200, 300, 12);
	ASSERT_EQ(TcpCsumCheck(p), 0);
	std::vector<uint8_t> o(200, 0xee);
	size_t n = sgw_lift_mh_frack_clone(p.data(), p.size(), o.data(), o.size());
	ASSERT_EQ(n, 20u + 32u);
	o.resize(n);
	EXPECT_EQ(Get16(&o[2]), n);
	EXPECT_EQ(Fold(Sum16(0, o.data(), 20)), 0); // IP header checksum
	EXPECT_EQ(TcpCsumCheck(o), 0);
	EXPECT_EQ(Get32(&o[24]), 7300u);            // past the payload
	EXPECT_EQ(Get32(&o[28]), 123456u);          // the same ACK number
	EXPECT_EQ(o[33], kAck);                     // PSH cleared
	EXPECT_EQ(Get16(&o[34]), 0);                // window 0
	EXPECT_EQ(0, memcmp(&o[40], &p[40], 12));   // options kept
	EXPECT_EQ(0, memcmp(&o[12], &p[12], 8));    // addresses
	// Too small a buffer, a SYN, an RST, no ACK flag, garbage: 0.
	EXPECT_EQ(sgw_lift_mh_frack_clone(p.data(), p.size(), o.data(), n - 1), 0u);
	auto s = c.Seg(true, 1, 1, kSyn | kAck, 100, 0);
	EXPECT_EQ(sgw_lift_mh_frack_clone(s.data(), s.size(), o.data(), 200), 0u);
	s = c.Seg(true, 1, 1, kRst | kAck, 100, 0);
	EXPECT_EQ(sgw_lift_mh_frack_clone(s.data(), s.size(), o.data(), 200), 0u);
	s = c.Seg(true, 1, 1, kPsh, 100, 5);
	EXPECT_EQ(sgw_lift_mh_frack_clone(s.data(), s.size(), o.data(), 200), 0u);
	EXPECT_EQ(sgw_lift_mh_frack_clone(p.data(), 30, o.data(), 200), 0u);
	EXPECT_EQ(sgw_lift_mh_frack_clone(nullptr, 0, o.data(), 200), 0u);
}

TEST(LiftMhClone, Ipv6AndFin)
{
	Conn c;
	c.v6 = true;
	auto p = c.Seg(true, 0xfffffff0u, 99, kAck | kFin, 4000, 100);
	ASSERT_EQ(TcpCsumCheck(p), 0);
	std::vector<uint8_t> o(200);
	size_t n = sgw_lift_mh_frack_clone(p.data(), p.size(), o.data(), o.size());
	ASSERT_EQ(n, 60u);
	o.resize(n);
	EXPECT_EQ(Get16(&o[4]), 20);
	EXPECT_EQ(TcpCsumCheck(o), 0);
	EXPECT_EQ(Get32(&o[44]), 0xfffffff0u + 101u); // wraps: payload + FIN
	EXPECT_EQ(o[53], kAck);
	EXPECT_EQ(Get16(&o[54]), 0);
	// A pure ACK: only the window changes (and the checksum).
	auto q = c.Seg(true, 5, 6, kAck, 1000, 0);
	o.assign(200, 0);
	n = sgw_lift_mh_frack_clone(q.data(), q.size(), o.data(), o.size());
	ASSERT_EQ(n, q.size());
	o.resize(n);
	EXPECT_EQ(TcpCsumCheck(o), 0);
	o[54] = q[54];
	o[55] = q[55];
	o[56] = q[56];
	o[57] = q[57];
	EXPECT_EQ(o, q);
}

// ------------------------------------------------------- self-protection

// The FH probes a zero window the host never advertised: a probe is a
// zero-length segment below what the host has received (Linux: snd_una - 1).
std::vector<uint8_t>
Probe(const Conn &c, uint32_t k)
{
	return c.Seg(false, kIssFh + k * kMss, kIssMh + 1, kAck, 65535, 0);
}

TEST(LiftMhProtect, OneProbeThenDataIsAFreezeThatEnded)
{
	Mh h;
	Conn c;
	OpenClient(h, c);
	h.Poll();
	h.Rx(2, Data(c, 0));
	EXPECT_EQ(h.Tx(AckOf(c, 1)).verdict, SGW_LIFT_MH_PAIR);
	h.now += 2 * kSec;
	EXPECT_EQ(h.Rx(3, Probe(c, 1)), SGW_LIFT_MH_RX_PROBE);
	EXPECT_EQ(h.Info(c.Seg(true, 0, 0, 0, 0, 0)).probe_run, 1);
	// The host's answer to the probe serves to unfreeze: F, and it covers
	// the probe's ESP number.
	auto r = h.Tx(AckOf(c, 1));
	EXPECT_EQ(r.why, SGW_LIFT_MH_W_PROBE_REPLY);
	EXPECT_EQ(r.flags, SGW_LIFT_BIT_F);
	EXPECT_EQ(r.ipsec_ack, 3u);
	h.now += 600 * kMs;
	EXPECT_EQ(h.Rx(4, Data(c, 1)), SGW_LIFT_MH_RX_DATA);
	auto i = h.Info(c.Seg(true, 0, 0, 0, 0, 0));
	EXPECT_EQ(i.probe_run, 0);
	EXPECT_EQ(i.state, SGW_LIFT_MH_S_ACTIVE);
	EXPECT_EQ(h.Tx(AckOf(c, 2)).verdict, SGW_LIFT_MH_PAIR);
	auto s = h.Stats();
	EXPECT_EQ(s.probes, 1u);
	EXPECT_EQ(s.probe_runs, 1u);
	EXPECT_EQ(s.susp_run + s.susp_share, 0u);
}

TEST(LiftMhProtect, KeepaliveAndInvitedProbesDoNotCount)
{
	Mh h;
	Conn c;
	OpenClient(h, c);
	h.Poll();
	h.Rx(2, Data(c, 0));
	h.Tx(AckOf(c, 1));
	// Long after the last data: a keepalive.
	h.now += h.conf().probe_guard_ns + 1;
	EXPECT_EQ(h.Rx(3, Probe(c, 1)), SGW_LIFT_MH_RX_PURE);
	// The host closed its window itself: the probe is invited.
	h.Rx(4, Data(c, 1));
	h.Tx(AckOf(c, 2, 0));
	h.now += kSec;
	EXPECT_EQ(h.Rx(5, Probe(c, 2)), SGW_LIFT_MH_RX_PURE);
	EXPECT_EQ(h.Stats().probes, 0u);
}

// Three probes the host's open-window answers do not end: suspended, the
// Teardown goes, ACKs go plain; data comes with LIFT off: forced, held off;
// after the hold LIFT is tried again through a new Setup.
TEST(LiftMhProtect, ProbeRunSuspendsThenForcedVerdictHoldsThenResumes)
{
	Mh h;
	Conn c;
	OpenClient(h, c);
	h.Poll();
	h.Rx(2, Data(c, 0));
	h.Tx(AckOf(c, 1));
	uint32_t esp = 3;
	for (int k = 0; k < 3; k++) {
		h.now += (1u << k) * kSec;
		h.Rx(esp++, Probe(c, 1));
		if (k < 2) {
			EXPECT_EQ(h.Tx(AckOf(c, 1)).why, SGW_LIFT_MH_W_PROBE_REPLY);
			EXPECT_EQ(h.Info(c.Seg(true, 0, 0, 0, 0, 0)).state, SGW_LIFT_MH_S_ACTIVE);
		}
	}
	auto i = h.Info(c.Seg(true, 0, 0, 0, 0, 0));
	EXPECT_EQ(i.state, SGW_LIFT_MH_S_TEST);
	EXPECT_EQ(h.Stats().susp_run, 1u);
	auto ctl = h.Poll();
	ASSERT_EQ(ctl.size(), 1u);
	EXPECT_EQ(ctl[0].kind, SGW_LIFT_K_TEARDOWN);
	EXPECT_EQ(h.Answer(ctl[0]), SGW_LIFT_MH_C_TEARDOWN_OK);
	EXPECT_TRUE(h.Has(c.Seg(true, 0, 0, 0, 0, 0))); // kept locally
	auto a = h.Tx(AckOf(c, 1));
	EXPECT_EQ(a.verdict, SGW_LIFT_MH_PLAIN);
	EXPECT_EQ(a.why, SGW_LIFT_MH_W_SUSPENDED);
	// With LIFT off the sender sends at once: the freezes were forced.
	h.now += 700 * kMs;
	h.Rx(esp++, Data(c, 1));
	EXPECT_EQ(h.Tx(AckOf(c, 2)).verdict, SGW_LIFT_MH_PLAIN);
	h.now = i.state_until - 1;
	h.Poll();
	EXPECT_EQ(h.Info(c.Seg(true, 0, 0, 0, 0, 0)).state, SGW_LIFT_MH_S_TEST);
	h.now = i.state_until;
	EXPECT_TRUE(h.Poll().empty());
	i = h.Info(c.Seg(true, 0, 0, 0, 0, 0));
	EXPECT_EQ(i.state, SGW_LIFT_MH_S_HOLD);
	EXPECT_EQ(i.state_until, h.now + h.conf().hold_ns);
	EXPECT_EQ(h.Stats().verdict_forced, 1u);
	// The flow goes on during the hold, LIFT off.
	for (int k = 0; k < 9; k++) {
		h.now += 30 * kSec;
		h.Rx(esp++, Data(c, 2 + k));
		EXPECT_EQ(h.Tx(AckOf(c, 3 + k)).why, SGW_LIFT_MH_W_SUSPENDED);
		h.Poll();
	}
	h.now = i.state_until;
	ctl = h.Poll();
	ASSERT_EQ(ctl.size(), 1u);
	EXPECT_EQ(ctl[0].kind, SGW_LIFT_K_SETUP);
	EXPECT_EQ(h.Stats().resumed, 1u);
	EXPECT_EQ(h.Answer(ctl[0]), SGW_LIFT_MH_C_SETUP_OK);
	i = h.Info(c.Seg(true, 0, 0, 0, 0, 0));
	EXPECT_EQ(i.state, SGW_LIFT_MH_S_ACTIVE);
	EXPECT_EQ(i.transitory, 1);
	EXPECT_EQ(h.Tx(AckOf(c, 11)).why, SGW_LIFT_MH_W_TRANSITORY);
	h.Rx(esp, Data(c, 11));
	auto p = h.Tx(AckOf(c, 12));
	EXPECT_EQ(p.verdict, SGW_LIFT_MH_PAIR);
	EXPECT_EQ(p.ipsec_ack, esp);
}

TEST(LiftMhProtect, NothingDuringTheTestBlamesTheChannel)
{
	Mh h;
	Conn c;
	OpenClient(h, c);
	h.Poll();
	h.Rx(2, Data(c, 0));
	h.Tx(AckOf(c, 1));
	for (int k = 0; k < 3; k++) {
		h.now += kSec;
		h.Rx(3 + k, Probe(c, 1));
	}
	auto i = h.Info(c.Seg(true, 0, 0, 0, 0, 0));
	ASSERT_EQ(i.state, SGW_LIFT_MH_S_TEST);
	h.Poll(); // Teardown, never answered: the test does not wait for it
	h.now = i.state_until;
	auto ctl = h.Poll();
	EXPECT_EQ(h.Stats().verdict_channel, 1u);
	i = h.Info(c.Seg(true, 0, 0, 0, 0, 0));
	EXPECT_EQ(i.state, SGW_LIFT_MH_S_PENDING);
	EXPECT_EQ(i.ctrl_inflight, 1 + SGW_LIFT_K_TEARDOWN); // Setup after it
	sgw_lift_mh_ctrl td;
	td.kind = SGW_LIFT_K_TEARDOWN;
	sgw_lift_build_teardown(td.hdr, 8, i.flow_id);
	EXPECT_EQ(h.Answer(td), SGW_LIFT_MH_C_TEARDOWN_OK);
	ctl = h.Poll();
	ASSERT_EQ(ctl.size(), 1u);
	EXPECT_EQ(ctl[0].kind, SGW_LIFT_K_SETUP);
}

// A legitimate freeze at the end of a transfer: one probe, the host's answer
// unfreezes, the sender has nothing more to send. The run must not be taken
// for a forced freeze: it ends quietly.
TEST(LiftMhProtect, AQuietRunEndsWithoutSuspension)
{
	Mh h;
	Conn c;
	OpenClient(h, c);
	h.Poll();
	h.Rx(2, Data(c, 0));
	h.Tx(AckOf(c, 1));
	h.now += kSec;
	EXPECT_EQ(h.Rx(3, Probe(c, 1)), SGW_LIFT_MH_RX_PROBE);
	h.Tx(AckOf(c, 1));
	EXPECT_LE(sgw_lift_mh_next_deadline(h.m()), h.now + h.conf().probe_quiet_ns);
	h.now += h.conf().probe_quiet_ns;
	h.Poll();
	auto i = h.Info(c.Seg(true, 0, 0, 0, 0, 0));
	EXPECT_EQ(i.state, SGW_LIFT_MH_S_ACTIVE);
	EXPECT_EQ(i.probe_run, 0);
	EXPECT_EQ(h.Stats().susp_run + h.Stats().susp_share, 0u);
}

// Probes far apart (a large RTO): the count is not reached, the span is.
TEST(LiftMhProtect, ARunSpanningTooLongSuspends)
{
	sgw_lift_mh_conf cf;
	sgw_lift_mh_conf_default(&cf);
	cf.probe_run_max = 100;
	cf.share_permille = 1000; // the share rule would fire first (15 s)
	Mh h(&cf);
	Conn c;
	OpenClient(h, c);
	h.Poll();
	h.Rx(2, Data(c, 0));
	h.Tx(AckOf(c, 1));
	uint32_t esp = 3;
	h.now += 5 * kSec;
	h.Rx(esp++, Probe(c, 1));
	for (uint64_t gap : {10ull, 9ull}) {
		h.now += gap * kSec;
		h.Rx(esp++, Probe(c, 1));
		h.Poll();
		EXPECT_EQ(h.Info(c.Seg(true, 0, 0, 0, 0, 0)).state, SGW_LIFT_MH_S_ACTIVE);
	}
	h.now += 1 * kSec; // 20 s after the first
	h.Rx(esp++, Probe(c, 1));
	EXPECT_EQ(h.Info(c.Seg(true, 0, 0, 0, 0, 0)).state, SGW_LIFT_MH_S_TEST);
	EXPECT_EQ(h.Stats().susp_run, 1u);
}

TEST(LiftMhProtect, TooLargeAShareProbedSuspends)
{
	sgw_lift_mh_conf cf;
	sgw_lift_mh_conf_default(&cf);
	cf.probe_run_max = 100;
	cf.probe_run_max_ns = 100 * kSec;
	Mh h(&cf); // share: 250 permille of 60 s = 15 s
	Conn c;
	OpenClient(h, c);
	h.Poll();
	uint32_t esp = 2, k = 0;
	h.Rx(esp++, Data(c, k++));
	h.Tx(AckOf(c, k));
	// Three freezes of 4 s each, each ended by data: 12 s probed.
	for (int r = 0; r < 3; r++) {
		h.now += kSec;
		EXPECT_EQ(h.Rx(esp++, Probe(c, k)), SGW_LIFT_MH_RX_PROBE);
		h.now += 4 * kSec;
		h.Rx(esp++, Data(c, k++));
		h.Tx(AckOf(c, k));
	}
	EXPECT_EQ(h.Info(c.Seg(true, 0, 0, 0, 0, 0)).state, SGW_LIFT_MH_S_ACTIVE);
	// The fourth: its second probe 3 s in makes 15 s.
	h.now += kSec;
	h.Rx(esp++, Probe(c, k));
	h.now += 2 * kSec;
	h.Rx(esp++, Probe(c, k));
	EXPECT_EQ(h.Info(c.Seg(true, 0, 0, 0, 0, 0)).state, SGW_LIFT_MH_S_ACTIVE);
	h.now += kSec;
	h.Rx(esp++, Probe(c, k));
	EXPECT_EQ(h.Info(c.Seg(true, 0, 0, 0, 0, 0)).state, SGW_LIFT_MH_S_TEST);
	auto s = h.Stats();
	EXPECT_EQ(s.susp_share, 1u);
	EXPECT_EQ(s.susp_run, 0u);
	EXPECT_EQ(s.probe_runs, 4u);
}

TEST(LiftMhProtect, ShareFadesWithTheWindow)
{
	sgw_lift_mh_conf cf;
	sgw_lift_mh_conf_default(&cf);
	cf.probe_run_max = 100;
	cf.probe_run_max_ns = 100 * kSec;
	Mh h(&cf);
	Conn c;
	OpenClient(h, c);
	h.Poll();
	uint32_t esp = 2, k = 0;
	h.Rx(esp++, Data(c, k++));
	h.Tx(AckOf(c, k));
	for (int r = 0; r < 3; r++) {
		h.now += kSec;
		h.Rx(esp++, Probe(c, k));
		h.now += 4 * kSec;
		h.Rx(esp++, Data(c, k++));
		h.Tx(AckOf(c, k));
	}
	// Two windows later the old freezes no longer count.
	for (int r = 0; r < 8; r++) {
		h.now += 15 * kSec;
		h.Rx(esp++, Data(c, k++));
		h.Tx(AckOf(c, k));
	}
	h.now += kSec;
	h.Rx(esp++, Probe(c, k));
	h.now += 4 * kSec;
	h.Rx(esp++, Probe(c, k));
	EXPECT_EQ(h.Info(c.Seg(true, 0, 0, 0, 0, 0)).state, SGW_LIFT_MH_S_ACTIVE);
}

// ------------------------------------------------------------ random input

TEST(LiftMhRandom, BoundedAndConsistentUnderRandomTraffic)
{
	for (uint64_t seed = 1; seed <= 20; seed++) {
		Rng rng(seed);
		sgw_lift_mh_conf cf;
		sgw_lift_mh_conf_default(&cf);
		cf.max_flows = 8;
		cf.track = 4;
		Mh h(&cf);
		std::vector<Conn> cs(12);
		for (size_t i = 0; i < cs.size(); i++) {
			cs[i].mh_port = (uint16_t)(50000 + i);
			cs[i].v6 = (i % 3) == 0;
		}
		std::vector<sgw_lift_mh_ctrl> pending;
		uint32_t esp = 1;
		for (int step = 0; step < 3000; step++) {
			h.now += rng.Range(0, 800) * kMs;
			Conn &c = cs[rng.Range(0, cs.size() - 1)];
			uint8_t fl = (uint8_t)rng.Range(0, 0x3f);
			uint32_t seq = (uint32_t)rng.Range(0, 20) * kMss;
			uint32_t ack = (uint32_t)rng.Range(0, 20) * kMss;
			auto p = c.Seg(rng.Chance(0.5), kIssFh + seq, kIssMh + ack, fl,
				       (uint16_t)rng.Range(0, 3), rng.Chance(0.5) ? 100 : 0);
			if (rng.Chance(0.05))
				p.resize(rng.Range(0, p.size()));
			if (rng.Chance(0.05) && !p.empty())
				p[rng.Range(0, p.size() - 1)] ^= (uint8_t)rng.Range(1, 255);
			if (rng.Chance(0.5)) {
				sgw_lift_mh_tx_out t;
				int v = sgw_lift_mh_tx(h.m(), h.now, p.data(), p.size(), kDlSpi, 50,
						       &t);
				ASSERT_GE(v, SGW_LIFT_MH_PLAIN);
				ASSERT_LE(v, SGW_LIFT_MH_PAIR);
				if (v == SGW_LIFT_MH_PAIR) {
					std::vector<uint8_t> o(200);
					ASSERT_GT(sgw_lift_mh_frack_clone(p.data(), p.size(),
									  o.data(), o.size()), 0u);
				}
			} else {
				int r = h.Rx(rng.Chance(0.1) ? esp - 3 : esp++, p,
					     rng.Chance(0.02) ? 0x5555 : kDlSpi);
				ASSERT_GE(r, 0);
				ASSERT_LT(r, SGW_LIFT_MH_RX__COUNT);
			}
			if (h.now >= sgw_lift_mh_next_deadline(h.m()) || rng.Chance(0.2)) {
				auto v = h.Poll(2);
				for (auto &x : v)
					pending.push_back(x);
			}
			if (!pending.empty() && rng.Chance(0.3)) {
				size_t i = rng.Range(0, pending.size() - 1);
				h.Answer(pending[i], (uint8_t)rng.Range(0, 3));
				pending.erase(pending.begin() + (long)i);
			}
			auto s = h.Stats();
			ASSERT_LE(s.flows, cf.max_flows);
			ASSERT_EQ(s.flows_created - s.flows_freed, s.flows);
		}
		// Everything ends: with nobody answering, every flow goes within
		// the idle time plus the give-up time.
		for (int k = 0; k < 1000 && h.Stats().flows > 0; k++) {
			uint64_t d = sgw_lift_mh_next_deadline(h.m());
			ASSERT_NE(d, SGW_LIFT_MH_NEVER);
			h.now = std::max(h.now, d);
			h.Poll();
		}
		EXPECT_EQ(h.Stats().flows, 0u) << seed;
	}
}

// ------------------------------------------- wired to the hub's machine

// The hub (lib/sgw_lift.h) as the dataplane stage drives it: handles are
// packet ids, its one timer per flow is kept here, every handle given comes
// back exactly once.
class HubSide {
public:
	HubSide()
	{
		sgw_lift_conf_default(&c_);
		mem_.resize(sgw_lift_mem_size(&c_));
		l_ = sgw_lift_init(mem_.data(), mem_.size(), &c_, 0);
		acts_.resize(32);
		mh_ = sgw_lift_addr_v4(kMh4);
	}
	// A LIFT packet from the MH: header, then an ESP header (uplink SA).
	void Rx(uint64_t now, const uint8_t hdr[8], uint32_t up_seq, uint64_t handle)
	{
		std::vector<uint8_t> b(8 + 8 + 40, 0xab);
		memcpy(b.data(), hdr, 8);
		uint8_t *e = b.data() + 8;
		e[0] = kUpSpi >> 24; e[1] = (kUpSpi >> 16) & 0xff; e[2] = (kUpSpi >> 8) & 0xff;
		e[3] = kUpSpi & 0xff;
		e[4] = (uint8_t)(up_seq >> 24); e[5] = (uint8_t)(up_seq >> 16);
		e[6] = (uint8_t)(up_seq >> 8); e[7] = (uint8_t)up_seq;
		if (hdr[0] & 0x80) {
			given_.insert(handle);
		} else {
			b.resize(8);
			given_.insert(handle);
		}
		Out();
		ASSERT_EQ(sgw_lift_rx(l_, now, &mh_, b.data(), b.size(), handle, 1, &out_), 0);
		Take();
	}
	void Down(uint64_t now, uint32_t seq)
	{
		sgw_lift_esp_down(l_, now, &mh_, kDlSpi, seq);
	}
	// Fire the flow's timer if due by now.
	bool Fire(uint64_t now)
	{
		bool any = false;
		for (auto it = timers_.begin(); it != timers_.end();) {
			if (it->second.at > now) {
				++it;
				continue;
			}
			auto t = it->second;
			it = timers_.erase(it);
			Out();
			EXPECT_EQ(sgw_lift_timer(l_, t.at, t.flow, t.gen, &out_), 0);
			Take();
			any = true;
		}
		return any;
	}
	uint64_t NextTimer() const
	{
		uint64_t d = UINT64_MAX;
		for (auto &t : timers_)
			d = std::min(d, t.second.at);
		return d;
	}
	sgw_lift_stats Stats() const
	{
		sgw_lift_stats s;
		sgw_lift_get_stats(l_, &s);
		return s;
	}
	int Flow(uint16_t id, sgw_lift_flow_info *i) const
	{
		return sgw_lift_flow_get(l_, 0, &mh_, id, i);
	}

	struct Fwd {
		uint64_t handle;
		uint8_t code;
	};
	std::vector<Fwd> fwd;                // toward the FH, in order
	std::vector<std::vector<uint8_t>> ctrl_acks;
	std::set<uint64_t> given_, back_;

private:
	struct Tm {
		uint64_t at;
		uint32_t flow, gen;
	};
	void Out()
	{
		out_.act = acts_.data();
		out_.n = 0;
		out_.cap = (uint32_t)acts_.size();
	}
	void Take()
	{
		for (uint32_t i = 0; i < out_.n; i++) {
			const sgw_lift_act &a = acts_[i];
			switch (a.type) {
			case SGW_LIFT_ACT_FORWARD:
				fwd.push_back({a.handle, a.code});
				EXPECT_TRUE(back_.insert(a.handle).second);
				break;
			case SGW_LIFT_ACT_DROP:
				EXPECT_TRUE(back_.insert(a.handle).second);
				break;
			case SGW_LIFT_ACT_TIMER_ARM:
				timers_[a.flow] = {a.at, a.flow, a.gen};
				break;
			case SGW_LIFT_ACT_TIMER_CANCEL:
				timers_.erase(a.flow);
				break;
			case SGW_LIFT_ACT_CTRL_ACK: {
				std::vector<uint8_t> b(8);
				EXPECT_EQ(sgw_lift_build_ctrl_ack(b.data(), 8, a.code2, a.flow_id,
								  a.spi, a.code), 8u);
				ctrl_acks.push_back(b);
				break;
			}
			}
		}
	}
	sgw_lift_conf c_;
	std::vector<uint8_t> mem_;
	sgw_lift *l_;
	std::vector<sgw_lift_act> acts_;
	sgw_lift_out out_;
	sgw_lift_addr mh_;
	std::map<uint32_t, Tm> timers_;
};

// The agent between them: what it would do with each verdict.
struct Wire {
	Wire(Mh &m, HubSide &h) : mh(m), hub(h) {}
	Mh &mh;
	HubSide &hub;
	uint32_t up_seq = 1;
	uint64_t handle = 1;
	uint32_t dl_seq = 1;
	std::map<uint64_t, char> kind; // handle -> 'F' FrACK, 'A' TCP ACK, 'C' control

	// The host sends a segment; returns its verdict.
	sgw_lift_mh_tx_out Send(const std::vector<uint8_t> &seg)
	{
		auto t = mh.Tx(seg);
		if (t.verdict == SGW_LIFT_MH_PAIR) {
			std::vector<uint8_t> o(200);
			EXPECT_GT(sgw_lift_mh_frack_clone(seg.data(), seg.size(), o.data(),
							  o.size()), 0u);
			kind[handle] = 'F';
			hub.Rx(mh.now, t.frack_hdr, up_seq++, handle++);
		}
		if (t.verdict != SGW_LIFT_MH_PLAIN) {
			kind[handle] = 'A';
			hub.Rx(mh.now, t.ack_hdr, up_seq++, handle++);
		} else {
			up_seq++; // plain ESP: not through BS-LIFT
		}
		return t;
	}
	// The FH sends a segment: the hub forwards it (ESP) toward the MH.
	int Deliver(const std::vector<uint8_t> &seg)
	{
		hub.Down(mh.now, dl_seq);
		return mh.Rx(dl_seq++, seg);
	}
	void Control()
	{
		for (auto &c : mh.Poll()) {
			kind[handle] = 'C';
			hub.Rx(mh.now, c.hdr, 0, handle++);
		}
		for (auto &b : hub.ctrl_acks)
			sgw_lift_mh_ctrl_rx(mh.m(), mh.now, b.data(), b.size());
		hub.ctrl_acks.clear();
	}
	size_t Count(char k, uint8_t code)
	{
		size_t n = 0;
		for (auto &f : hub.fwd)
			n += kind[f.handle] == k && f.code == code;
		return n;
	}
};

TEST(LiftMhWithHub, SetupPairsHeldFreezeUnfreezeAndTeardown)
{
	Mh mh;
	HubSide hub;
	Wire w(mh, hub);
	Conn c;

	// Handshake: the SYN goes plain, the SYN-ACK comes down, the Setup goes
	// up and the hub's Setup-ACK comes back.
	EXPECT_EQ(w.Send(c.Seg(true, kIssMh, 0, kSyn, 65535, 0)).verdict, SGW_LIFT_MH_PLAIN);
	mh.now += 600 * kMs;
	w.Deliver(c.Seg(false, kIssFh, kIssMh + 1, kSyn | kAck, 65535, 0));
	w.Control();
	EXPECT_EQ(hub.Stats().setups, 1u);
	auto i = mh.Info(c.Seg(true, 0, 0, 0, 0, 0));
	EXPECT_EQ(i.state, SGW_LIFT_MH_S_ACTIVE);
	sgw_lift_flow_info hi;
	ASSERT_EQ(hub.Flow(i.flow_id, &hi), 0);
	EXPECT_EQ(hi.spi, kDlSpi);
	EXPECT_EQ(hi.timer_running, 0); // the hub's transitory phase too
	// Another connection's packet on the same SA passes (the host ignores
	// it here). Then a repeated handshake ACK in the transitory phase (S):
	// the first IPsec ACK Number the hub's entry sees, which the hub alone
	// would take for new data; S keeps its timer from starting on it.
	Conn other;
	other.fh_port = 443;
	EXPECT_EQ(w.Deliver(other.Seg(false, 1, 1, kAck, 100, 10)), SGW_LIFT_MH_RX_NO_FLOW);
	EXPECT_EQ(w.Send(AckOf(c, 0)).why, SGW_LIFT_MH_W_TRANSITORY);
	ASSERT_EQ(hub.Flow(i.flow_id, &hi), 0);
	EXPECT_EQ(hi.timer_running, 0);
	EXPECT_EQ(w.Count('A', SGW_LIFT_FWD_ACK), 1u);

	// Six segments down, the host ACKs two: the first ACK of new data ends
	// both transitory phases; the hub forwards it and starts its timer.
	mh.now += 600 * kMs;
	uint32_t k = 0;
	for (; k < 6; k++)
		w.Deliver(Data(c, k));
	auto p = w.Send(AckOf(c, 2));
	EXPECT_EQ(p.verdict, SGW_LIFT_MH_PAIR);
	ASSERT_EQ(hub.Flow(i.flow_id, &hi), 0);
	EXPECT_EQ(hi.timer_running, 1);
	EXPECT_EQ(hi.held_pair, 0);
	EXPECT_EQ(w.Count('A', SGW_LIFT_FWD_ACK), 2u);
	// The next pair is held: data still in flight toward the MH.
	mh.now += 20 * kMs;
	w.Send(AckOf(c, 4));
	ASSERT_EQ(hub.Flow(i.flow_id, &hi), 0);
	EXPECT_EQ(hi.held_pair, 1);
	EXPECT_EQ(hi.ack_num, 6u);
	EXPECT_EQ(hi.sa_highest, 8u);
	// Two more down, a fresher pair: the held TCP ACK goes on, this one held.
	mh.now += 20 * kMs;
	w.Deliver(Data(c, k++));
	w.Deliver(Data(c, k++));
	w.Send(AckOf(c, 6));
	EXPECT_EQ(w.Count('A', SGW_LIFT_FWD_HELD_ACK), 1u);
	ASSERT_EQ(hub.Flow(i.flow_id, &hi), 0);
	EXPECT_EQ(hi.held_pair, 1);
	// A duplicate (S) waits behind the held pair.
	w.Send(AckOf(c, 6));
	ASSERT_EQ(hub.Flow(i.flow_id, &hi), 0);
	EXPECT_EQ(hi.held_dup, 1);
	EXPECT_EQ(hub.Stats().dups_stored, 1u);

	// The satellite goes bad: no ACK reaches the hub, its timer expires with
	// data unacknowledged (8 < 10): the held FrACK freezes the sender.
	uint64_t t = hub.NextTimer();
	ASSERT_NE(t, UINT64_MAX);
	EXPECT_LE(t, mh.now + 980 * kMs);
	mh.now = t;
	EXPECT_TRUE(hub.Fire(mh.now));
	EXPECT_EQ(w.Count('F', SGW_LIFT_FWD_FRACK), 1u);
	EXPECT_EQ(hub.Stats().freezes, 1u);
	ASSERT_EQ(hub.Flow(i.flow_id, &hi), 0);
	EXPECT_EQ(hi.frozen, 1);

	// The channel is back: the host ACKs everything; the held TCP ACK
	// unfreezes the sender first, then this one goes on.
	mh.now += 3 * kSec;
	auto u = w.Send(AckOf(c, 8));
	EXPECT_EQ(u.verdict, SGW_LIFT_MH_PAIR);
	EXPECT_EQ(u.ipsec_ack, 10u);
	EXPECT_EQ(hub.Stats().unfreezes, 1u);
	EXPECT_EQ(w.Count('A', SGW_LIFT_FWD_HELD_ACK), 2u);
	ASSERT_EQ(hub.Flow(i.flow_id, &hi), 0);
	EXPECT_EQ(hi.frozen, 0);
	EXPECT_EQ(hi.held_pair, 0); // it covers everything: forwarded at once
	// The order toward the FH: the FrACK before the TCP ACK that reopens.
	size_t fr = 0, un = 0;
	for (size_t j = 0; j < hub.fwd.size(); j++) {
		if (hub.fwd[j].code == SGW_LIFT_FWD_FRACK)
			fr = j;
		if (hub.fwd[j].code == SGW_LIFT_FWD_HELD_ACK)
			un = j;
	}
	EXPECT_LT(fr, un);

	// The FH's FIN; the host's ACK of it carries D: the hub removes the
	// entry, the Teardown that follows is answered "unknown flow", and the
	// agent's entry goes.
	mh.now += 100 * kMs;
	w.Deliver(Data(c, k++, kFin));
	auto d = w.Send(c.Seg(true, kIssMh + 1, kIssFh + 1 + k * kMss + 1, kAck, 65535, 0));
	EXPECT_EQ(d.flags, SGW_LIFT_BIT_D | SGW_LIFT_BIT_F);
	EXPECT_EQ(hub.Stats().d_deletes, 1u);
	EXPECT_EQ(hub.Flow(i.flow_id, &hi), -1);
	w.Control();
	EXPECT_EQ(hub.Stats().teardown_unknown, 1u);
	EXPECT_EQ(mh.Stats().flows, 0u);
	EXPECT_EQ(mh.Stats().ctrl_why[SGW_LIFT_MH_C_TEARDOWN_OK], 1u);
	hub.Fire(UINT64_MAX - 1);

	// Every packet handed to the hub came back exactly once; nothing held.
	EXPECT_EQ(hub.given_, hub.back_);
	EXPECT_EQ(hub.Stats().held, 0u);
	EXPECT_EQ(hub.Stats().flows, 0u);
}

// Two connections on one SA (as Linux transport-mode SAs are), wired to the
// hub: A's last ACK covers all of A, B's packets were acknowledged by B. With
// the seed's per-flow number the hub still sees data unacknowledged for A,
// holds A's pair and freezes A's idle sender on expiry; in SA scope it does
// neither.
TEST(LiftMhWithHub, SharedSaScopeAvoidsSpuriousFreezes)
{
	for (uint8_t scope : {SGW_LIFT_MH_ACK_FLOW, SGW_LIFT_MH_ACK_SA}) {
		sgw_lift_mh_conf cf;
		sgw_lift_mh_conf_default(&cf);
		cf.ack_scope = scope;
		Mh mh(&cf);
		HubSide hub;
		Wire w(mh, hub);
		Conn a, b;
		b.mh_port = 40001;
		for (Conn *c : {&a, &b}) {
			w.Send(c->Seg(true, kIssMh, 0, kSyn, 65535, 0));
			mh.now += 600 * kMs;
			w.Deliver(c->Seg(false, kIssFh, kIssMh + 1, kSyn | kAck, 65535, 0));
			w.Control();
			w.Send(AckOf(*c, 0));
		}
		uint16_t ida = mh.Info(a.Seg(true, 0, 0, 0, 0, 0)).flow_id;
		// First ACKs of new data: both timers start.
		w.Deliver(Data(a, 0));
		EXPECT_EQ(w.Send(AckOf(a, 1)).verdict, SGW_LIFT_MH_PAIR);
		w.Deliver(Data(b, 0));
		w.Deliver(Data(b, 1));
		w.Send(AckOf(b, 2));
		// More for both; B acknowledges its own, then A all of A's.
		mh.now += 50 * kMs;
		w.Deliver(Data(a, 1));
		w.Deliver(Data(b, 2));
		w.Send(AckOf(b, 3));
		auto x = w.Send(AckOf(a, 2));
		EXPECT_EQ(x.verdict, SGW_LIFT_MH_PAIR);
		sgw_lift_flow_info hi;
		ASSERT_EQ(hub.Flow(ida, &hi), 0);
		EXPECT_EQ(hi.held_pair, scope == SGW_LIFT_MH_ACK_FLOW ? 1 : 0);
		// Nothing more comes: the hub's timer for A expires.
		mh.now += 2 * kSec;
		while (hub.NextTimer() <= mh.now)
			hub.Fire(mh.now);
		EXPECT_EQ(hub.Stats().freezes, scope == SGW_LIFT_MH_ACK_FLOW ? 1u : 0u)
			<< (int)scope;
		ASSERT_EQ(hub.Flow(ida, &hi), 0);
		EXPECT_EQ(hi.frozen, scope == SGW_LIFT_MH_ACK_FLOW ? 1 : 0);
	}
}

// The hub turned hostile (section III): it forwards every FrACK it gets at
// once. The sender, frozen although the host's window is open, probes; the
// host's answers do not help; MH-LIFT suspends LIFT for the flow, finds data
// flowing with LIFT off, and keeps it off.
TEST(LiftMhWithHub, ForcedFreezesAreFoundAndLiftStaysOff)
{
	Mh mh;
	Conn c;
	OpenClient(mh, c);
	mh.Poll();
	uint32_t esp = 2, k = 0, fracks = 0;
	// The FH: sends a segment per ACK when not frozen; probes with backoff
	// when frozen. The hostile hub turns each FrACK into a freeze.
	bool frozen = false;
	uint64_t probe_gap = kSec;
	mh.Rx(esp++, Data(c, k++));
	for (int step = 0; step < 40; step++) {
		auto t = mh.Tx(AckOf(c, k));
		if (t.verdict == SGW_LIFT_MH_PAIR) {
			fracks++;
			frozen = true; // forwarded as soon as it came
		} else if (t.verdict == SGW_LIFT_MH_PLAIN) {
			frozen = false; // plain ACKs reach the FH untouched: window open
		}
		mh.now += 600 * kMs;
		if (frozen) {
			mh.now += probe_gap;
			probe_gap *= 2;
			mh.Rx(esp++, Probe(c, k));
		} else {
			probe_gap = kSec;
			mh.Rx(esp++, Data(c, k++));
		}
		for (auto &x : mh.Poll())
			mh.Answer(x);
	}
	auto s = mh.Stats();
	EXPECT_EQ(fracks, 1u); // one freeze, never released by the hub
	EXPECT_EQ(s.susp_run, 1u);
	EXPECT_EQ(s.verdict_forced, 1u);
	EXPECT_EQ(mh.Info(c.Seg(true, 0, 0, 0, 0, 0)).state, SGW_LIFT_MH_S_HOLD);
	EXPECT_GT(k, 20u); // the transfer went on with LIFT off
}

} // namespace
