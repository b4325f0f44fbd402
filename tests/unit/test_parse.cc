// SPDX-License-Identifier: BSD-3-Clause
// Unit tests for lib/sgw_parse.c: every parser on valid input (field by
// field) and on malformed input (tables of truncations and bad lengths).
// Every parse runs on a heap buffer of exactly the frame's size, so ASan or
// valgrind report any read past data + len.

#include <gtest/gtest.h>

#include <algorithm>

#include <array>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "sgw_parse.h"

namespace {

using Bytes = std::vector<uint8_t>;

// ---------------------------------------------------------------- builder

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
cat(std::initializer_list<Bytes> parts)
{
	Bytes out;
	for (const Bytes &p : parts)
		out.insert(out.end(), p.begin(), p.end());
	return out;
}

using Vlan = std::pair<uint16_t, uint16_t>;  // TPID, TCI

Bytes
eth(uint16_t ethertype, const Bytes &l3, const std::vector<Vlan> &tags = {})
{
	Bytes b = {0x02, 0, 0, 0, 0, 1, 0x02, 0, 0, 0, 0, 2};
	for (const Vlan &t : tags) {
		put16(b, t.first);
		put16(b, t.second);
	}
	put16(b, ethertype);
	b.insert(b.end(), l3.begin(), l3.end());
	return b;
}

struct Ip4 {
	uint8_t proto = 6;
	uint8_t tos = 0;
	uint8_t ttl = 64;
	uint16_t frag = 0;  // flags + fragment offset field
	Bytes opts;         // multiple of 4
	int ihl = -1;       // override
	int totlen = -1;    // override
	uint8_t version = 4;
	std::array<uint8_t, 4> src{{10, 0, 0, 1}};
	std::array<uint8_t, 4> dst{{192, 168, 1, 2}};
};

Bytes
ip4(const Ip4 &h, const Bytes &l4)
{
	size_t hl = 20 + h.opts.size();
	int ihl = h.ihl >= 0 ? h.ihl : static_cast<int>(hl / 4);
	int tot = h.totlen >= 0 ? h.totlen : static_cast<int>(hl + l4.size());
	Bytes b;

	b.push_back(static_cast<uint8_t>((h.version << 4) | (ihl & 0x0f)));
	b.push_back(h.tos);
	put16(b, static_cast<uint16_t>(tot));
	put16(b, 0x1234);
	put16(b, h.frag);
	b.push_back(h.ttl);
	b.push_back(h.proto);
	put16(b, 0);
	b.insert(b.end(), h.src.begin(), h.src.end());
	b.insert(b.end(), h.dst.begin(), h.dst.end());
	b.insert(b.end(), h.opts.begin(), h.opts.end());
	b.insert(b.end(), l4.begin(), l4.end());
	return b;
}

struct Ip6 {
	uint8_t nh = 6;
	uint8_t tc = 0;
	uint8_t hlim = 64;
	int paylen = -1;  // override
	uint8_t version = 6;
	std::array<uint8_t, 16> src{{0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}};
	std::array<uint8_t, 16> dst{{0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2}};
};

Bytes
ip6(const Ip6 &h, const Bytes &rest)
{
	int pl = h.paylen >= 0 ? h.paylen : static_cast<int>(rest.size());
	Bytes b;

	b.push_back(static_cast<uint8_t>((h.version << 4) | (h.tc >> 4)));
	b.push_back(static_cast<uint8_t>((h.tc << 4) | 0x0a));  // flow label bits
	put16(b, 0xbcde);
	put16(b, static_cast<uint16_t>(pl));
	b.push_back(h.nh);
	b.push_back(h.hlim);
	b.insert(b.end(), h.src.begin(), h.src.end());
	b.insert(b.end(), h.dst.begin(), h.dst.end());
	b.insert(b.end(), rest.begin(), rest.end());
	return b;
}

// Generic extension header (hop-by-hop, routing, dest opts, ...): len % 8 == 0.
Bytes
ext6(uint8_t nh, size_t len)
{
	Bytes b = {nh, static_cast<uint8_t>(len / 8 - 1)};
	b.resize(len, 0);
	return b;
}

// AH: len % 4 == 0, len >= 12.
Bytes
ah6(uint8_t nh, size_t len)
{
	Bytes b = {nh, static_cast<uint8_t>(len / 4 - 2), 0, 0};
	put32(b, 0xabcdef01);
	put32(b, 9);
	b.resize(len, 0x5a);
	return b;
}

Bytes
frag6(uint8_t nh, uint16_t offset_units, bool more)
{
	Bytes b = {nh, 0};
	put16(b, static_cast<uint16_t>((offset_units << 3) | (more ? 1 : 0)));
	put32(b, 0xdeadbeef);
	return b;
}

struct Tcp {
	uint16_t sport = 40000;
	uint16_t dport = 80;
	uint32_t seq = 0x01020304;
	uint32_t ack = 0xa0b0c0d0;
	uint8_t flags = 0x18;
	uint16_t win = 0xfedc;
	Bytes opts;     // multiple of 4
	Bytes payload;
	int doff = -1;  // override
};

Bytes
tcp(const Tcp &t)
{
	int doff = t.doff >= 0 ? t.doff : static_cast<int>((20 + t.opts.size()) / 4);
	Bytes b;

	put16(b, t.sport);
	put16(b, t.dport);
	put32(b, t.seq);
	put32(b, t.ack);
	b.push_back(static_cast<uint8_t>(doff << 4));
	b.push_back(t.flags);
	put16(b, t.win);
	put16(b, 0);
	put16(b, 0);
	b.insert(b.end(), t.opts.begin(), t.opts.end());
	b.insert(b.end(), t.payload.begin(), t.payload.end());
	return b;
}

Bytes
udp(uint16_t sport, uint16_t dport, const Bytes &payload, int len = -1)
{
	Bytes b;

	put16(b, sport);
	put16(b, dport);
	put16(b, static_cast<uint16_t>(len >= 0 ? len : 8 + static_cast<int>(payload.size())));
	put16(b, 0);
	b.insert(b.end(), payload.begin(), payload.end());
	return b;
}

Bytes
esp(uint32_t spi, uint32_t seq, const Bytes &payload)
{
	Bytes b;

	put32(b, spi);
	put32(b, seq);
	b.insert(b.end(), payload.begin(), payload.end());
	return b;
}

Bytes
icmp(uint8_t type, uint8_t code, const Bytes &rest)
{
	// Sized first: GCC 12 at -O3 misreads an insert into a 4-byte vector
	// as an out-of-bounds memcpy (-Warray-bounds, a libstdc++ false positive).
	Bytes b(4 + rest.size());
	b[0] = type;
	b[1] = code;
	std::copy(rest.begin(), rest.end(), b.begin() + 4);
	return b;
}

Bytes
lift(uint8_t flags, uint16_t flow, uint32_t word, uint8_t next)
{
	Bytes b = {flags};
	put16(b, flow);
	put32(b, word);
	b.push_back(next);
	return b;
}

// XCP version 2 (lib/sgw_xcp.h): next, version 2 / flags, 5 words, reserved,
// H_rtt, H_cwnd, H_feedback, reverse feedback.
Bytes
xcp(uint8_t next, uint32_t rtt_us, uint32_t cwnd, int32_t fb, int32_t rev = 0)
{
	Bytes b = {next, 0x20, 5, 0};
	put32(b, rtt_us);
	put32(b, cwnd);
	put32(b, static_cast<uint32_t>(fb));
	put32(b, static_cast<uint32_t>(rev));
	return b;
}

// TCP options.
Bytes
o_mss(uint16_t v)
{
	Bytes b = {2, 4};
	put16(b, v);
	return b;
}

Bytes o_ws(uint8_t s) { return {3, 3, s}; }
Bytes o_sackperm() { return {4, 2}; }

Bytes
o_ts(uint32_t val, uint32_t ecr)
{
	Bytes b = {8, 10};
	put32(b, val);
	put32(b, ecr);
	return b;
}

Bytes
o_sack(const std::vector<std::pair<uint32_t, uint32_t>> &blocks)
{
	Bytes b = {5, static_cast<uint8_t>(2 + 8 * blocks.size())};
	for (const auto &bl : blocks) {
		put32(b, bl.first);
		put32(b, bl.second);
	}
	return b;
}

const Bytes NOP = {1};
const Bytes EOL = {0};

// Linux SYN options: MSS SACK_PERM TS NOP WS (20 bytes).
Bytes
syn_opts()
{
	return cat({o_mss(1460), o_sackperm(), o_ts(0x11111111, 0x22222222), NOP, o_ws(7)});
}

// ---------------------------------------------------------------- parse helpers

struct Parsed {
	enum sgw_parse_reason r;
	struct sgw_pkt_info info;
};

sgw_parse_conf
defconf()
{
	sgw_parse_conf c;
	sgw_parse_conf_default(&c);
	return c;
}

// Copies the frame into a heap buffer of exactly its size and poisons info
// first, so a field the parser forgets to set shows up as 0xa5.
Parsed
parse(const Bytes &f, const sgw_parse_conf *conf = nullptr, size_t n = SIZE_MAX)
{
	size_t len = n == SIZE_MAX ? f.size() : n;
	std::unique_ptr<uint8_t[]> buf(new uint8_t[len]);
	if (len)
		memcpy(buf.get(), f.data(), len);
	sgw_parse_conf c = defconf();
	Parsed p;

	memset(&p.info, 0xa5, sizeof(p.info));
	p.r = sgw_parse_frame(conf ? conf : &c, buf.get(), len, &p.info);
	return p;
}

// Invariants that hold for every input, valid or not.
void
check_invariants(const Parsed &p, size_t len)
{
	const sgw_pkt_info &i = p.info;

	ASSERT_EQ(p.r, i.reason);
	ASSERT_LT(i.reason, SGW_PR__COUNT);
	ASSERT_LT(i.cls, SGW_CLASS__COUNT);
	ASSERT_EQ(i.reason != SGW_PR_OK, i.cls == SGW_CLASS_MALFORMED);
	ASSERT_TRUE(i.ip_ver == 0 || i.ip_ver == 4 || i.ip_ver == 6);
	ASSERT_LE(i.n_vlan, 2);
	ASSERT_EQ(i.frag & ~7u, 0u);
	if ((i.frag & (SGW_FRAG_FIRST | SGW_FRAG_MORE)) != 0) {
		ASSERT_TRUE(i.frag & SGW_FRAG_IS_FRAGMENT);
	}
	if (i.reason != SGW_PR_OK)
		return;
	ASSERT_LE(i.l3_off, len);
	if (i.cls == SGW_CLASS_NON_IP || i.cls == SGW_CLASS_SATLINK) {
		ASSERT_EQ(i.ip_ver, 0);
		return;
	}
	ASSERT_NE(i.ip_ver, 0);
	size_t l3_end = i.l3_off + static_cast<size_t>(i.l3_len);
	ASSERT_LE(l3_end, len);
	ASSERT_GE(i.l4_off, i.l3_off + (i.ip_ver == 4 ? 20 : 40));
	ASSERT_EQ(i.payload_off, i.l4_off + i.l4_hlen);
	ASSERT_LE(i.payload_off, l3_end);
	if (i.cls == SGW_CLASS_TCP) {
		const sgw_tcp_opts &o = i.tcp_opts;
		ASSERT_GE(i.l4_hlen, 20);
		ASSERT_LE(i.l4_hlen, 60);
		ASSERT_LE(o.n_sack, SGW_TCP_MAX_SACK);
		ASSERT_EQ((o.present & SGW_TCPOPT_SACK) != 0, o.n_sack != 0);
		if (o.present & SGW_TCPOPT_MSS) {
			ASSERT_GE(o.mss_off, 20);
			ASSERT_LE(o.mss_off + 4, i.l4_hlen);
		}
		if (o.present & SGW_TCPOPT_TS) {
			ASSERT_GE(o.ts_off, 20);
			ASSERT_LE(o.ts_off + 10, i.l4_hlen);
		}
	} else {
		ASSERT_EQ(i.tcp_opts.present, 0);
		ASSERT_EQ(i.tcp_opts.n_sack, 0);
	}
}

// A typical frame from each family, used by several tables.
Bytes
tcp4_frame()
{
	Tcp t;
	t.opts = syn_opts();
	t.payload = Bytes(10, 0x77);
	Ip4 h;
	h.opts = {148, 4, 0, 0, 1, 1, 1, 0};  // router alert, NOP x3, EOL
	return eth(0x0800, ip4(h, tcp(t)));
}

Bytes
tcp6_frame()
{
	Tcp t;
	t.opts = cat({NOP, NOP, o_ts(5, 6)});
	t.payload = {1, 2, 3};
	Ip6 h;
	h.nh = 0;
	return eth(0x86dd, ip6(h, cat({ext6(60, 8), ext6(6, 16), tcp(t)})));
}

// ---------------------------------------------------------------- names, conf

TEST(ParseConf, Defaults)
{
	sgw_parse_conf c;
	memset(&c, 0xff, sizeof(c));
	sgw_parse_conf_default(&c);
	EXPECT_EQ(c.lift_proto, 253);
	EXPECT_EQ(c.xcp_proto, 254);
	EXPECT_EQ(c.esp_udp_port, 4500);
}

TEST(ParseConf, NullConfMeansDefaults)
{
	Ip4 h;
	h.proto = 253;
	Bytes f = eth(0x0800, ip4(h, lift(0x80, 1, 2, 6)));
	std::unique_ptr<uint8_t[]> buf(new uint8_t[f.size()]);
	memcpy(buf.get(), f.data(), f.size());
	sgw_pkt_info info;
	EXPECT_EQ(sgw_parse_frame(nullptr, buf.get(), f.size(), &info), SGW_PR_OK);
	EXPECT_EQ(info.cls, SGW_CLASS_LIFT);
}

TEST(ParseNames, ReasonNamesAreStableSnakeCase)
{
	std::set<std::string> seen;
	for (int r = 0; r < SGW_PR__COUNT; r++) {
		const char *n = sgw_parse_reason_name(static_cast<sgw_parse_reason>(r));
		ASSERT_NE(n, nullptr) << r;
		std::string s(n);
		ASSERT_FALSE(s.empty()) << r;
		for (char ch : s)
			ASSERT_TRUE((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
				    ch == '_')
				<< s;
		EXPECT_TRUE(seen.insert(s).second) << "duplicate " << s;
	}
	EXPECT_STREQ(sgw_parse_reason_name(SGW_PR_OK), "ok");
	EXPECT_STREQ(sgw_parse_reason_name(SGW_PR_ETH_TRUNC), "eth_trunc");
	EXPECT_STREQ(sgw_parse_reason_name(SGW_PR_VLAN_TOO_MANY), "vlan_too_many");
	EXPECT_STREQ(sgw_parse_reason_name(SGW_PR_IP4_BAD_IHL), "ip4_bad_ihl");
	EXPECT_STREQ(sgw_parse_reason_name(SGW_PR_IP4_BAD_TOTLEN), "ip4_bad_totlen");
	EXPECT_STREQ(sgw_parse_reason_name(SGW_PR_IP6_EXT_TOO_MANY), "ip6_ext_too_many");
	EXPECT_STREQ(sgw_parse_reason_name(SGW_PR_TCP_BAD_OPTION), "tcp_bad_option");
	EXPECT_STREQ(sgw_parse_reason_name(SGW_PR_UDP_BAD_LEN), "udp_bad_len");
	EXPECT_STREQ(sgw_parse_reason_name(SGW_PR_XCP_TRUNC), "xcp_trunc");
	EXPECT_STREQ(sgw_parse_reason_name(SGW_PR__COUNT), "unknown");
	EXPECT_STREQ(sgw_parse_reason_name(static_cast<sgw_parse_reason>(200)), "unknown");
}

TEST(ParseNames, ClassNames)
{
	const char *want[SGW_CLASS__COUNT] = {"tcp", "udp", "esp", "icmp", "lift", "xcp",
					      "ip_other", "satlink", "non_ip", "malformed"};
	for (int c = 0; c < SGW_CLASS__COUNT; c++)
		EXPECT_STREQ(sgw_class_name(static_cast<sgw_class>(c)), want[c]);
	EXPECT_STREQ(sgw_class_name(SGW_CLASS__COUNT), "unknown");
}

// ---------------------------------------------------------------- Ethernet / VLAN

TEST(ParseEth, NonIpIsForwardedClass)
{
	Bytes f = eth(0x0806, Bytes(28, 0x11));  // ARP
	Parsed p = parse(f);
	EXPECT_EQ(p.r, SGW_PR_OK);
	EXPECT_EQ(p.info.cls, SGW_CLASS_NON_IP);
	EXPECT_EQ(p.info.ethertype, 0x0806);
	EXPECT_EQ(p.info.l3_off, 14);
	EXPECT_EQ(p.info.ip_ver, 0);
	EXPECT_EQ(p.info.n_vlan, 0);
	EXPECT_EQ(p.info.sport, 0);
	EXPECT_EQ(p.info.tcp_opts.present, 0);
	for (uint8_t b : p.info.src)
		EXPECT_EQ(b, 0);
	check_invariants(p, f.size());
}

TEST(ParseEth, BareEthernetHeaderIsNonIp)
{
	Parsed p = parse(eth(0x88cc, {}));  // LLDP, nothing after the header
	EXPECT_EQ(p.r, SGW_PR_OK);
	EXPECT_EQ(p.info.cls, SGW_CLASS_NON_IP);
}

TEST(ParseEth, SatlinkEtherTypeHasItsOwnClass)
{
	// The class only: the satlink stage parses and counts the frame itself,
	// so even a truncated one is SATLINK, behind a VLAN tag too.
	Parsed p = parse(eth(0x88b5, Bytes(22, 0x10)));
	EXPECT_EQ(p.r, SGW_PR_OK);
	EXPECT_EQ(p.info.cls, SGW_CLASS_SATLINK);
	EXPECT_EQ(p.info.l3_off, 14);
	Bytes tagged = {0x02, 0, 0, 0, 0, 1, 0x02, 0, 0, 0, 0, 2, 0x81, 0x00, 0x00, 0x07, 0x88, 0xb5, 0x10};
	Parsed q = parse(tagged);
	EXPECT_EQ(q.info.cls, SGW_CLASS_SATLINK);
	EXPECT_EQ(q.info.l3_off, 18);
	EXPECT_EQ(parse(eth(0x88b6, {})).info.cls, SGW_CLASS_NON_IP);
}

TEST(ParseEth, OneVlanTag)
{
	Tcp t;
	Bytes f = eth(0x0800, ip4(Ip4{}, tcp(t)), {{0x8100, 0x2064}});
	Parsed p = parse(f);
	ASSERT_EQ(p.r, SGW_PR_OK);
	EXPECT_EQ(p.info.cls, SGW_CLASS_TCP);
	EXPECT_EQ(p.info.n_vlan, 1);
	EXPECT_EQ(p.info.vlan_tci[0], 0x2064);
	EXPECT_EQ(p.info.vlan_tci[1], 0);
	EXPECT_EQ(p.info.ethertype, 0x0800);
	EXPECT_EQ(p.info.l3_off, 18);
	EXPECT_EQ(p.info.l4_off, 38);
	EXPECT_EQ(p.info.payload_off, 58);
}

TEST(ParseEth, QinQTwoTagsOuterFirst)
{
	Tcp t;
	Bytes f = eth(0x86dd, ip6(Ip6{}, tcp(t)), {{0x88a8, 0x0123}, {0x8100, 0xe456}});
	Parsed p = parse(f);
	ASSERT_EQ(p.r, SGW_PR_OK);
	EXPECT_EQ(p.info.cls, SGW_CLASS_TCP);
	EXPECT_EQ(p.info.n_vlan, 2);
	EXPECT_EQ(p.info.vlan_tci[0], 0x0123);
	EXPECT_EQ(p.info.vlan_tci[1], 0xe456);
	EXPECT_EQ(p.info.ethertype, 0x86dd);
	EXPECT_EQ(p.info.l3_off, 22);
	EXPECT_EQ(p.info.l4_off, 62);
}

TEST(ParseEth, ThreeTagsIsTooMany)
{
	for (uint16_t third : {0x8100, 0x88a8}) {
		Bytes f = eth(0x0800, ip4(Ip4{}, tcp(Tcp{})),
			      {{0x88a8, 1}, {0x8100, 2}, {third, 3}});
		Parsed p = parse(f);
		EXPECT_EQ(p.r, SGW_PR_VLAN_TOO_MANY);
		EXPECT_EQ(p.info.cls, SGW_CLASS_MALFORMED);
		check_invariants(p, f.size());
	}
}

TEST(ParseEth, TruncationTableWithTwoTags)
{
	Bytes f = eth(0x0800, ip4(Ip4{}, tcp(Tcp{})), {{0x88a8, 1}, {0x8100, 2}});
	for (size_t n = 0; n <= f.size(); n++) {
		Parsed p = parse(f, nullptr, n);
		sgw_parse_reason want;
		if (n < 14)
			want = SGW_PR_ETH_TRUNC;
		else if (n < 22)
			want = SGW_PR_VLAN_TRUNC;
		else if (n < 42)
			want = SGW_PR_IP4_TRUNC;
		else if (n < f.size())
			want = SGW_PR_IP4_BAD_TOTLEN;
		else
			want = SGW_PR_OK;
		EXPECT_EQ(p.r, want) << "len " << n;
		check_invariants(p, n);
	}
}

// ---------------------------------------------------------------- IPv4

TEST(ParseIp4, TcpWithOptionsEveryField)
{
	Tcp t;
	t.sport = 0xc350;
	t.dport = 443;
	t.seq = 0xdeadbeef;
	t.ack = 0x01234567;
	t.flags = 0x12;  // SYN|ACK
	t.win = 29200;
	t.opts = syn_opts();
	t.payload = Bytes(7, 0x33);
	Ip4 h;
	h.tos = 0xb9;  // DSCP 46 (EF), ECN 1
	h.ttl = 61;
	h.frag = 0x4000;  // DF only: not a fragment
	Bytes f = eth(0x0800, ip4(h, tcp(t)));
	Parsed p = parse(f);
	const sgw_pkt_info &i = p.info;

	ASSERT_EQ(p.r, SGW_PR_OK);
	EXPECT_EQ(i.cls, SGW_CLASS_TCP);
	EXPECT_EQ(i.reason, SGW_PR_OK);
	EXPECT_EQ(i.ip_ver, 4);
	EXPECT_EQ(i.n_vlan, 0);
	EXPECT_EQ(i.ethertype, 0x0800);
	EXPECT_EQ(i.l3_off, 14);
	EXPECT_EQ(i.l4_off, 34);
	EXPECT_EQ(i.l4_hlen, 40);
	EXPECT_EQ(i.payload_off, 74);
	EXPECT_EQ(i.l3_len, 20u + 40 + 7);
	EXPECT_EQ(i.ip_proto, 6);
	EXPECT_EQ(i.dscp, 46);
	EXPECT_EQ(i.ecn, 1);
	EXPECT_EQ(i.ttl, 61);
	EXPECT_EQ(i.frag, 0);
	EXPECT_EQ(i.esp_in_udp, 0);
	EXPECT_EQ(i.tcp_flags, 0x12);
	EXPECT_EQ(i.icmp_type, 0);
	EXPECT_EQ(i.icmp_code, 0);
	EXPECT_EQ(i.lift_next, 0);
	EXPECT_EQ(i.sport, 0xc350);
	EXPECT_EQ(i.dport, 443);
	EXPECT_EQ(i.tcp_win, 29200);
	EXPECT_EQ(i.tcp_seq, 0xdeadbeefu);
	EXPECT_EQ(i.tcp_ack, 0x01234567u);
	EXPECT_EQ(i.esp_spi, 0u);
	EXPECT_EQ(i.esp_seq, 0u);
	const uint8_t src[16] = {10, 0, 0, 1};
	const uint8_t dst[16] = {192, 168, 1, 2};
	EXPECT_EQ(memcmp(i.src, src, 16), 0);
	EXPECT_EQ(memcmp(i.dst, dst, 16), 0);
	const sgw_tcp_opts &o = i.tcp_opts;
	EXPECT_EQ(o.present, SGW_TCPOPT_MSS | SGW_TCPOPT_SACK_PERM | SGW_TCPOPT_TS |
				     SGW_TCPOPT_WSCALE);
	EXPECT_EQ(o.mss, 1460);
	EXPECT_EQ(o.mss_off, 20);
	EXPECT_EQ(o.ts_off, 26);
	EXPECT_EQ(o.ts_val, 0x11111111u);
	EXPECT_EQ(o.ts_ecr, 0x22222222u);
	EXPECT_EQ(o.wscale, 7);
	EXPECT_EQ(o.n_sack, 0);
	// The offsets point at the option bytes a later stage rewrites in place.
	EXPECT_EQ(f[i.l4_off + o.mss_off], 2);
	EXPECT_EQ(f[i.l4_off + o.ts_off], 8);
	check_invariants(p, f.size());
}

TEST(ParseIp4, EthernetPaddingAfterTotalLength)
{
	Tcp t;
	t.opts = {};
	t.flags = 0x10;
	Bytes f = eth(0x0800, ip4(Ip4{}, tcp(t)));
	ASSERT_EQ(f.size(), 54u);
	f.resize(60, 0);  // minimum Ethernet frame
	Parsed p = parse(f);
	ASSERT_EQ(p.r, SGW_PR_OK);
	EXPECT_EQ(p.info.cls, SGW_CLASS_TCP);
	EXPECT_EQ(p.info.l3_len, 40u);
	EXPECT_EQ(p.info.payload_off, 54);
	EXPECT_EQ(p.info.tcp_opts.present, 0);
	EXPECT_EQ(p.info.tcp_opts.mss_off, 0);
	EXPECT_EQ(p.info.tcp_opts.ts_off, 0);
}

TEST(ParseIp4, PaddingIsNotTcpHeader)
{
	// doff says 24 bytes but the IP packet holds 20; padding must not count.
	Tcp t;
	t.doff = 6;
	Bytes f = eth(0x0800, ip4(Ip4{}, tcp(t)));
	f.resize(60, 0);
	EXPECT_EQ(parse(f).r, SGW_PR_TCP_BAD_DOFF);
}

TEST(ParseIp4, BadVersion)
{
	for (uint8_t v : {0, 5, 6, 15}) {
		Ip4 h;
		h.version = v;
		Parsed p = parse(eth(0x0800, ip4(h, tcp(Tcp{}))));
		EXPECT_EQ(p.r, SGW_PR_IP4_BAD_VERSION) << int(v);
		EXPECT_EQ(p.info.cls, SGW_CLASS_MALFORMED);
		for (uint8_t b : p.info.src)
			EXPECT_EQ(b, 0);
	}
}

TEST(ParseIp4, BadIhl)
{
	for (int ihl = 0; ihl < 5; ihl++) {
		Ip4 h;
		h.ihl = ihl;
		EXPECT_EQ(parse(eth(0x0800, ip4(h, tcp(Tcp{})))).r, SGW_PR_IP4_BAD_IHL) << ihl;
	}
	// IHL 15 (60 bytes) but only 20 + 20 bytes present.
	Ip4 h;
	h.ihl = 15;
	h.totlen = 40;
	EXPECT_EQ(parse(eth(0x0800, ip4(h, tcp(Tcp{})))).r, SGW_PR_IP4_BAD_IHL);
	// IHL 6 with exactly 24 bytes present is fine as far as the IHL goes.
	h.ihl = 6;
	h.totlen = 24;
	Bytes f = eth(0x0800, ip4(h, {}));
	f.resize(14 + 24, 1);  // option area: NOPs
	Parsed p = parse(f);
	EXPECT_EQ(p.r, SGW_PR_TCP_TRUNC);
}

TEST(ParseIp4, BadTotalLength)
{
	struct Row {
		int totlen;
		sgw_parse_reason want;
	} rows[] = {
		{0, SGW_PR_IP4_BAD_TOTLEN},
		{19, SGW_PR_IP4_BAD_TOTLEN},
		{20, SGW_PR_TCP_TRUNC},  // valid IP, empty payload
		{39, SGW_PR_TCP_TRUNC},
		{40, SGW_PR_OK},
		{41, SGW_PR_IP4_BAD_TOTLEN},  // one more than present
		{65535, SGW_PR_IP4_BAD_TOTLEN},
	};
	for (const Row &r : rows) {
		Ip4 h;
		h.totlen = r.totlen;
		Parsed p = parse(eth(0x0800, ip4(h, tcp(Tcp{}))));
		EXPECT_EQ(p.r, r.want) << r.totlen;
		if (r.want == SGW_PR_IP4_BAD_TOTLEN) {
			EXPECT_EQ(p.info.ip_ver, 4);
		}
	}
	// With IP options the lower bound is IHL*4, not 20.
	Ip4 h;
	h.opts = {1, 1, 1, 1};
	h.totlen = 23;
	EXPECT_EQ(parse(eth(0x0800, ip4(h, tcp(Tcp{})))).r, SGW_PR_IP4_BAD_TOTLEN);
}

TEST(ParseIp4, OptionsTable)
{
	struct Row {
		const char *what;
		Bytes opts;
		sgw_parse_reason want;
	} rows[] = {
		{"nops", {1, 1, 1, 1}, SGW_PR_OK},
		{"eol then garbage", {0, 0xff, 0xff, 0xff}, SGW_PR_OK},
		{"router alert", {148, 4, 0, 0}, SGW_PR_OK},
		{"record route 7 + eol", {7, 7, 4, 0, 0, 0, 0, 0}, SGW_PR_OK},
		{"option fills header", {68, 8, 5, 0, 0, 0, 0, 0}, SGW_PR_OK},
		{"len 0", {148, 0, 0, 0}, SGW_PR_IP4_BAD_OPTION},
		{"len 1", {148, 1, 0, 0}, SGW_PR_IP4_BAD_OPTION},
		{"past header", {1, 148, 4, 0}, SGW_PR_IP4_BAD_OPTION},
		{"no length byte", {1, 1, 1, 7}, SGW_PR_IP4_BAD_OPTION},
		{"second bad", {148, 4, 0, 0, 7, 9, 0, 0}, SGW_PR_IP4_BAD_OPTION},
	};
	for (const Row &r : rows) {
		Ip4 h;
		h.opts = r.opts;
		Bytes f = eth(0x0800, ip4(h, tcp(Tcp{})));
		Parsed p = parse(f);
		EXPECT_EQ(p.r, r.want) << r.what;
		check_invariants(p, f.size());
		if (r.want == SGW_PR_OK) {
			EXPECT_EQ(p.info.l4_off, 14 + 20 + r.opts.size()) << r.what;
		}
	}
}

TEST(ParseIp4, Fragments)
{
	Tcp t;
	t.payload = Bytes(16, 9);
	struct Row {
		uint16_t frag;
		uint8_t want_frag;
		sgw_class want_cls;
	} rows[] = {
		{0x0000, 0, SGW_CLASS_TCP},
		{0x4000, 0, SGW_CLASS_TCP},  // DF
		{0x2000, SGW_FRAG_IS_FRAGMENT | SGW_FRAG_FIRST | SGW_FRAG_MORE, SGW_CLASS_TCP},
		{0x2000 | 185, SGW_FRAG_IS_FRAGMENT | SGW_FRAG_MORE, SGW_CLASS_IP_OTHER},
		{185, SGW_FRAG_IS_FRAGMENT, SGW_CLASS_IP_OTHER},  // last fragment
		{0x1fff, SGW_FRAG_IS_FRAGMENT, SGW_CLASS_IP_OTHER},
	};
	for (const Row &r : rows) {
		Ip4 h;
		h.frag = r.frag;
		Bytes f = eth(0x0800, ip4(h, tcp(t)));
		Parsed p = parse(f);
		EXPECT_EQ(p.r, SGW_PR_OK) << std::hex << r.frag;
		EXPECT_EQ(p.info.frag, r.want_frag) << std::hex << r.frag;
		EXPECT_EQ(p.info.cls, r.want_cls) << std::hex << r.frag;
		EXPECT_EQ(p.info.ip_proto, 6);
		EXPECT_EQ(p.info.l4_off, 34);
		if (r.want_cls == SGW_CLASS_IP_OTHER) {
			EXPECT_EQ(p.info.sport, 0);
			EXPECT_EQ(p.info.dport, 0);
			EXPECT_EQ(p.info.l4_hlen, 0);
			EXPECT_EQ(p.info.payload_off, 34);
		}
		check_invariants(p, f.size());
	}
}

TEST(ParseIp4, NonFirstFragmentNeedsNoL4Bytes)
{
	// 3 bytes of payload cannot be a TCP header, and need not be.
	Ip4 h;
	h.frag = 100;
	Parsed p = parse(eth(0x0800, ip4(h, {1, 2, 3})));
	EXPECT_EQ(p.r, SGW_PR_OK);
	EXPECT_EQ(p.info.cls, SGW_CLASS_IP_OTHER);
}

TEST(ParseIp4, FirstFragmentUdpLengthCountsWholeDatagram)
{
	Ip4 h;
	h.proto = 17;
	h.frag = 0x2000;
	Bytes f = eth(0x0800, ip4(h, udp(5000, 53, Bytes(32, 1), 8 + 1400)));
	Parsed p = parse(f);
	EXPECT_EQ(p.r, SGW_PR_OK);
	EXPECT_EQ(p.info.cls, SGW_CLASS_UDP);
	EXPECT_EQ(p.info.dport, 53);
	// The same UDP length in an unfragmented packet is a lie.
	h.frag = 0;
	EXPECT_EQ(parse(eth(0x0800, ip4(h, udp(5000, 53, Bytes(32, 1), 8 + 1400)))).r,
		  SGW_PR_UDP_BAD_LEN);
}

TEST(ParseIp4, FirstFragmentTooShortForTcpIsMalformed)
{
	Ip4 h;
	h.frag = 0x2000;
	EXPECT_EQ(parse(eth(0x0800, ip4(h, Bytes(8, 0)))).r, SGW_PR_TCP_TRUNC);
}

TEST(ParseIp4, OtherProtocols)
{
	for (uint8_t proto : {47, 4, 41, 132, 51, 0, 255}) {  // GRE, IPIP, 6in4, SCTP, AH, ...
		Ip4 h;
		h.proto = proto;
		Bytes f = eth(0x0800, ip4(h, Bytes(24, 0xee)));
		Parsed p = parse(f);
		EXPECT_EQ(p.r, SGW_PR_OK) << int(proto);
		EXPECT_EQ(p.info.cls, SGW_CLASS_IP_OTHER) << int(proto);
		EXPECT_EQ(p.info.ip_proto, proto);
		EXPECT_EQ(p.info.l4_off, 34);
		EXPECT_EQ(p.info.payload_off, 34);
		EXPECT_EQ(p.info.sport, 0);
		check_invariants(p, f.size());
	}
	// ICMPv6's protocol number means nothing in IPv4.
	Ip4 h;
	h.proto = 58;
	EXPECT_EQ(parse(eth(0x0800, ip4(h, icmp(128, 0, {})))).info.cls, SGW_CLASS_IP_OTHER);
}

// Every truncation of a TCP/IPv4 frame with IP and TCP options, on a buffer
// of exactly that many bytes.
TEST(ParseIp4, TruncationTableRaw)
{
	Bytes f = tcp4_frame();
	ASSERT_EQ(f.size(), 14u + 28 + 40 + 10);
	for (size_t n = 0; n <= f.size(); n++) {
		Parsed p = parse(f, nullptr, n);
		sgw_parse_reason want;
		if (n < 14)
			want = SGW_PR_ETH_TRUNC;
		else if (n < 34)
			want = SGW_PR_IP4_TRUNC;
		else if (n < 42)
			want = SGW_PR_IP4_BAD_IHL;
		else if (n < f.size())
			want = SGW_PR_IP4_BAD_TOTLEN;
		else
			want = SGW_PR_OK;
		EXPECT_EQ(p.r, want) << "len " << n;
		check_invariants(p, n);
	}
}

// Every truncation of the TCP segment with the IP total length kept honest.
TEST(ParseIp4, TruncationTableL4)
{
	Tcp t;
	t.opts = syn_opts();
	t.payload = Bytes(10, 0x77);
	Bytes seg = tcp(t);
	for (size_t k = 0; k <= seg.size(); k++) {
		Bytes f = eth(0x0800, ip4(Ip4{}, Bytes(seg.begin(), seg.begin() + k)));
		Parsed p = parse(f);
		sgw_parse_reason want;
		if (k < 20)
			want = SGW_PR_TCP_TRUNC;
		else if (k < 40)
			want = SGW_PR_TCP_BAD_DOFF;
		else
			want = SGW_PR_OK;
		EXPECT_EQ(p.r, want) << "seg " << k;
		if (k >= 20) {
			EXPECT_EQ(p.info.l4_off, 34);
		}
		check_invariants(p, f.size());
	}
}

// ---------------------------------------------------------------- TCP

TEST(ParseTcp, BadDataOffset)
{
	for (int doff = 0; doff < 5; doff++) {
		Tcp t;
		t.doff = doff;
		Parsed p = parse(eth(0x0800, ip4(Ip4{}, tcp(t))));
		EXPECT_EQ(p.r, SGW_PR_TCP_BAD_DOFF) << doff;
		EXPECT_EQ(p.info.cls, SGW_CLASS_MALFORMED);
	}
	for (int doff = 6; doff <= 15; doff++) {
		Tcp t;
		t.opts = {1, 1, 1, 1};  // 24 bytes present
		t.doff = doff;
		EXPECT_EQ(parse(eth(0x0800, ip4(Ip4{}, tcp(t)))).r,
			  doff == 6 ? SGW_PR_OK : SGW_PR_TCP_BAD_DOFF)
			<< doff;
	}
}

TEST(ParseTcp, FullOptionAreaWithSack)
{
	Tcp t;
	t.opts = cat({NOP, NOP,
		      o_sack({{1, 2}, {3, 4}, {0xfffffff0, 0x10}, {0x80000000, 0x80001000}})});
	ASSERT_EQ(t.opts.size(), 36u);
	t.opts.push_back(1);
	t.opts.push_back(1);
	t.opts.push_back(1);
	t.opts.push_back(0);
	Bytes f = eth(0x0800, ip4(Ip4{}, tcp(t)));
	Parsed p = parse(f);
	ASSERT_EQ(p.r, SGW_PR_OK);
	EXPECT_EQ(p.info.l4_hlen, 60);
	const sgw_tcp_opts &o = p.info.tcp_opts;
	EXPECT_EQ(o.present, SGW_TCPOPT_SACK);
	ASSERT_EQ(o.n_sack, 4);
	EXPECT_EQ(o.sack[0].left, 1u);
	EXPECT_EQ(o.sack[0].right, 2u);
	EXPECT_EQ(o.sack[1].left, 3u);
	EXPECT_EQ(o.sack[1].right, 4u);
	EXPECT_EQ(o.sack[2].left, 0xfffffff0u);
	EXPECT_EQ(o.sack[2].right, 0x10u);
	EXPECT_EQ(o.sack[3].left, 0x80000000u);
	EXPECT_EQ(o.sack[3].right, 0x80001000u);
	EXPECT_EQ(o.mss_off, 0);
	EXPECT_EQ(o.ts_off, 0);
}

TEST(ParseTcp, TimestampFastPathAndSlowPathAgree)
{
	// NOP NOP TS (the usual) and TS NOP NOP: same values, different offsets.
	Tcp a;
	a.opts = cat({NOP, NOP, o_ts(0xcafef00d, 0x0badc0de)});
	Tcp b;
	b.opts = cat({o_ts(0xcafef00d, 0x0badc0de), NOP, NOP});
	Parsed pa = parse(eth(0x0800, ip4(Ip4{}, tcp(a))));
	Parsed pb = parse(eth(0x0800, ip4(Ip4{}, tcp(b))));
	ASSERT_EQ(pa.r, SGW_PR_OK);
	ASSERT_EQ(pb.r, SGW_PR_OK);
	EXPECT_EQ(pa.info.tcp_opts.present, SGW_TCPOPT_TS);
	EXPECT_EQ(pb.info.tcp_opts.present, SGW_TCPOPT_TS);
	EXPECT_EQ(pa.info.tcp_opts.ts_off, 22);
	EXPECT_EQ(pb.info.tcp_opts.ts_off, 20);
	EXPECT_EQ(pa.info.tcp_opts.ts_val, 0xcafef00du);
	EXPECT_EQ(pb.info.tcp_opts.ts_val, 0xcafef00du);
	EXPECT_EQ(pa.info.tcp_opts.ts_ecr, 0x0badc0deu);
	EXPECT_EQ(pb.info.tcp_opts.ts_ecr, 0x0badc0deu);
	EXPECT_EQ(pa.info.tcp_opts.n_sack, 0);
}

struct OptRow {
	const char *what;
	Bytes opts;
	sgw_parse_reason want;
	uint8_t present;
};

const std::vector<OptRow> &
opt_rows()
{
	static const std::vector<OptRow> rows = {
		{"empty", {}, SGW_PR_OK, 0},
		{"nops", {1, 1, 1, 1}, SGW_PR_OK, 0},
		{"eol then garbage", {0, 2, 0, 9}, SGW_PR_OK, 0},
		{"mss", o_mss(536), SGW_PR_OK, SGW_TCPOPT_MSS},
		{"ws", cat({o_ws(14), NOP}), SGW_PR_OK, SGW_TCPOPT_WSCALE},
		{"sack perm", cat({o_sackperm(), NOP, NOP}), SGW_PR_OK, SGW_TCPOPT_SACK_PERM},
		{"ts", cat({NOP, NOP, o_ts(1, 2)}), SGW_PR_OK, SGW_TCPOPT_TS},
		{"sack 1", cat({NOP, NOP, o_sack({{1, 2}})}), SGW_PR_OK, SGW_TCPOPT_SACK},
		{"sack 2", cat({NOP, NOP, o_sack({{1, 2}, {3, 4}})}), SGW_PR_OK, SGW_TCPOPT_SACK},
		{"sack 3 + ts",
		 cat({NOP, NOP, o_ts(1, 2), NOP, NOP, o_sack({{1, 2}, {3, 4}, {5, 6}})}),
		 SGW_PR_OK, SGW_TCPOPT_SACK | SGW_TCPOPT_TS},
		{"syn", syn_opts(), SGW_PR_OK,
		 SGW_TCPOPT_MSS | SGW_TCPOPT_SACK_PERM | SGW_TCPOPT_TS | SGW_TCPOPT_WSCALE},
		{"unknown kind (TFO cookie)", {34, 10, 1, 2, 3, 4, 5, 6, 7, 8, 1, 1}, SGW_PR_OK,
		 SGW_TCPOPT_UNKNOWN},
		{"unknown kind len 2", {30, 2, 1, 1}, SGW_PR_OK, SGW_TCPOPT_UNKNOWN},
		{"mss len 3", {2, 3, 5, 1}, SGW_PR_TCP_BAD_OPTION, 0},
		{"mss len 5", {2, 5, 5, 180, 0, 1, 1, 1}, SGW_PR_TCP_BAD_OPTION, 0},
		{"ws len 2", {3, 2, 1, 1}, SGW_PR_TCP_BAD_OPTION, 0},
		{"ws len 4", {3, 4, 7, 1}, SGW_PR_TCP_BAD_OPTION, 0},
		{"sack perm len 3", {4, 3, 0, 1}, SGW_PR_TCP_BAD_OPTION, 0},
		{"sack perm len 4", {4, 4, 0, 0}, SGW_PR_TCP_BAD_OPTION, 0},
		{"sack len 2", {5, 2, 1, 1}, SGW_PR_TCP_BAD_OPTION, 0},
		{"sack len 9", {5, 9, 0, 0, 0, 1, 0, 0, 2, 1, 1, 1}, SGW_PR_TCP_BAD_OPTION, 0},
		{"sack len 11", {5, 11, 0, 0, 0, 1, 0, 0, 0, 2, 0, 1}, SGW_PR_TCP_BAD_OPTION, 0},
		{"sack len 12", {5, 12, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0}, SGW_PR_TCP_BAD_OPTION, 0},
		{"sack len 6", {5, 6, 0, 0, 0, 1, 1, 1}, SGW_PR_TCP_BAD_OPTION, 0},
		{"ts len 9", {8, 9, 0, 0, 0, 1, 0, 0, 0, 1, 1, 1}, SGW_PR_TCP_BAD_OPTION, 0},
		{"ts len 11", {8, 11, 0, 0, 0, 1, 0, 0, 0, 1, 0, 1}, SGW_PR_TCP_BAD_OPTION, 0},
		{"len 0", {30, 0, 1, 1}, SGW_PR_TCP_BAD_OPTION, 0},
		{"len 1", {30, 1, 1, 1}, SGW_PR_TCP_BAD_OPTION, 0},
		{"past the area", {1, 1, 30, 3}, SGW_PR_TCP_BAD_OPTION, 0},
		{"mss past the area", {1, 1, 2, 4}, SGW_PR_TCP_BAD_OPTION, 0},
		{"kind without length", {1, 1, 1, 2}, SGW_PR_TCP_BAD_OPTION, 0},
		{"ts after six nops", cat({NOP, NOP, NOP, NOP, NOP, NOP, o_ts(1, 2)}),
		 SGW_PR_OK, SGW_TCPOPT_TS},  // 16 bytes: fits exactly
		{"good then bad", cat({o_mss(1400), {30, 1, 0, 0}}), SGW_PR_TCP_BAD_OPTION, 0},
	};
	return rows;
}

TEST(ParseTcp, OptionTableDirect)
{
	for (const OptRow &r : opt_rows()) {
		std::unique_ptr<uint8_t[]> buf(new uint8_t[r.opts.size()]);
		if (!r.opts.empty())
			memcpy(buf.get(), r.opts.data(), r.opts.size());
		sgw_tcp_opts o;
		memset(&o, 0xa5, sizeof(o));
		sgw_parse_reason got = sgw_parse_tcp_options(buf.get(), r.opts.size(), &o);
		EXPECT_EQ(got, r.want) << r.what;
		if (r.want == SGW_PR_OK) {
			EXPECT_EQ(o.present, r.present) << r.what;
			EXPECT_EQ(o.n_sack != 0, (r.present & SGW_TCPOPT_SACK) != 0) << r.what;
			EXPECT_EQ(o.mss_off != 0, (r.present & SGW_TCPOPT_MSS) != 0) << r.what;
			EXPECT_EQ(o.ts_off != 0, (r.present & SGW_TCPOPT_TS) != 0) << r.what;
		}
	}
}

TEST(ParseTcp, OptionTableInFrame)
{
	for (const OptRow &r : opt_rows()) {
		if (r.opts.size() % 4 != 0) {
			ADD_FAILURE() << "row must be a multiple of 4: " << r.what;
			continue;
		}
		Tcp t;
		t.opts = r.opts;
		Bytes f = eth(0x0800, ip4(Ip4{}, tcp(t)));
		Parsed p = parse(f);
		EXPECT_EQ(p.r, r.want) << r.what;
		EXPECT_EQ(p.info.cls, r.want == SGW_PR_OK ? SGW_CLASS_TCP : SGW_CLASS_MALFORMED)
			<< r.what;
		if (r.want == SGW_PR_OK) {
			EXPECT_EQ(p.info.tcp_opts.present, r.present) << r.what;
		}
		check_invariants(p, f.size());
	}
}

TEST(ParseTcp, OptionValuesAndOffsets)
{
	Bytes opts = cat({NOP, o_ws(9), o_mss(1380), o_sackperm(), NOP, NOP,
			  o_sack({{100, 200}, {300, 400}}), NOP, NOP});
	ASSERT_EQ(opts.size(), 32u);
	sgw_tcp_opts o;
	memset(&o, 0xa5, sizeof(o));
	ASSERT_EQ(sgw_parse_tcp_options(opts.data(), opts.size(), &o), SGW_PR_OK);
	EXPECT_EQ(o.present, SGW_TCPOPT_WSCALE | SGW_TCPOPT_MSS | SGW_TCPOPT_SACK_PERM |
				     SGW_TCPOPT_SACK);
	EXPECT_EQ(o.wscale, 9);
	EXPECT_EQ(o.mss, 1380);
	EXPECT_EQ(o.mss_off, 20 + 4);
	EXPECT_EQ(o.ts_off, 0);
	EXPECT_EQ(o.ts_val, 0u);
	EXPECT_EQ(o.ts_ecr, 0u);
	ASSERT_EQ(o.n_sack, 2);
	EXPECT_EQ(o.sack[0].left, 100u);
	EXPECT_EQ(o.sack[0].right, 200u);
	EXPECT_EQ(o.sack[1].left, 300u);
	EXPECT_EQ(o.sack[1].right, 400u);
}

TEST(ParseTcp, OptionAreaLongerThan40IsRejected)
{
	Bytes opts(44, 1);
	sgw_tcp_opts o;
	EXPECT_EQ(sgw_parse_tcp_options(opts.data(), opts.size(), &o), SGW_PR_TCP_BAD_OPTION);
	EXPECT_EQ(sgw_parse_tcp_options(opts.data(), 40, &o), SGW_PR_OK);
}

// Every cut of a valid option list: OK exactly on option boundaries.
TEST(ParseTcp, OptionTruncationTable)
{
	Bytes opts = syn_opts();  // MSS(0-3) SACKOK(4-5) TS(6-15) NOP(16) WS(17-19)
	const std::set<size_t> boundaries = {0, 4, 6, 16, 17, 20};
	for (size_t m = 0; m <= opts.size(); m++) {
		std::unique_ptr<uint8_t[]> buf(new uint8_t[m]);
		if (m)
			memcpy(buf.get(), opts.data(), m);
		sgw_tcp_opts o;
		sgw_parse_reason got = sgw_parse_tcp_options(buf.get(), m, &o);
		EXPECT_EQ(got, boundaries.count(m) ? SGW_PR_OK : SGW_PR_TCP_BAD_OPTION) << m;
	}
}

// ---------------------------------------------------------------- IPv6

TEST(ParseIp6, TcpEveryField)
{
	Tcp t;
	t.sport = 22;
	t.dport = 51000;
	t.flags = 0x11;
	t.opts = cat({NOP, NOP, o_ts(7, 8)});
	t.payload = Bytes(5, 0);
	Ip6 h;
	h.tc = 0x2e;  // DSCP 11, ECN 2
	h.hlim = 255;
	Bytes f = eth(0x86dd, ip6(h, tcp(t)));
	Parsed p = parse(f);
	const sgw_pkt_info &i = p.info;

	ASSERT_EQ(p.r, SGW_PR_OK);
	EXPECT_EQ(i.cls, SGW_CLASS_TCP);
	EXPECT_EQ(i.ip_ver, 6);
	EXPECT_EQ(i.ethertype, 0x86dd);
	EXPECT_EQ(i.l3_off, 14);
	EXPECT_EQ(i.l4_off, 54);
	EXPECT_EQ(i.l4_hlen, 32);
	EXPECT_EQ(i.payload_off, 86);
	EXPECT_EQ(i.l3_len, 40u + 32 + 5);
	EXPECT_EQ(i.ip_proto, 6);
	EXPECT_EQ(i.dscp, 11);
	EXPECT_EQ(i.ecn, 2);
	EXPECT_EQ(i.ttl, 255);
	EXPECT_EQ(i.frag, 0);
	EXPECT_EQ(i.sport, 22);
	EXPECT_EQ(i.dport, 51000);
	EXPECT_EQ(i.tcp_flags, 0x11);
	EXPECT_EQ(i.tcp_seq, t.seq);
	EXPECT_EQ(i.tcp_ack, t.ack);
	EXPECT_EQ(i.tcp_win, t.win);
	EXPECT_EQ(memcmp(i.src, h.src.data(), 16), 0);
	EXPECT_EQ(memcmp(i.dst, h.dst.data(), 16), 0);
	EXPECT_EQ(i.tcp_opts.present, SGW_TCPOPT_TS);
	EXPECT_EQ(i.tcp_opts.ts_off, 22);
	EXPECT_EQ(i.tcp_opts.ts_val, 7u);
	EXPECT_EQ(i.tcp_opts.ts_ecr, 8u);
	check_invariants(p, f.size());
}

TEST(ParseIp6, ExtensionChain)
{
	Tcp t;
	Ip6 h;
	h.nh = 0;
	// hop-by-hop 8, dest opts 16, routing 24, AH 24 ((4+2)*4), mobility 8, HIP 8, shim6 8
	Bytes chain = cat({ext6(60, 8), ext6(43, 16), ext6(51, 24), ah6(135, 24), ext6(139, 8),
			   ext6(140, 8), ext6(6, 8)});
	Bytes f = eth(0x86dd, ip6(h, cat({chain, tcp(t)})));
	Parsed p = parse(f);
	ASSERT_EQ(p.r, SGW_PR_OK) << sgw_parse_reason_name(p.r);
	EXPECT_EQ(p.info.cls, SGW_CLASS_TCP);
	EXPECT_EQ(p.info.ip_proto, 6);
	EXPECT_EQ(p.info.l4_off, 54 + chain.size());
	EXPECT_EQ(p.info.payload_off, 54 + chain.size() + 20);
	EXPECT_EQ(p.info.sport, t.sport);
	check_invariants(p, f.size());
}

TEST(ParseIp6, AhLengthRuleIsNotTheGenericOne)
{
	// AH payload length 1 means (1+2)*4 = 12 bytes; the generic rule would say 16.
	Ip6 h;
	h.nh = 51;
	Bytes f = eth(0x86dd, ip6(h, cat({ah6(17, 12), udp(1, 2, {9, 9})})));
	Parsed p = parse(f);
	ASSERT_EQ(p.r, SGW_PR_OK);
	EXPECT_EQ(p.info.cls, SGW_CLASS_UDP);
	EXPECT_EQ(p.info.l4_off, 54 + 12);
	EXPECT_EQ(p.info.sport, 1);
	EXPECT_EQ(p.info.dport, 2);
}

TEST(ParseIp6, ChainLengthLimit)
{
	for (int n = 0; n <= SGW_IP6_MAX_EXT + 2; n++) {
		Ip6 h;
		h.nh = n ? 60 : 6;
		Bytes chain;
		for (int k = 0; k < n; k++) {
			Bytes e = ext6(k == n - 1 ? 6 : 60, 8);
			chain.insert(chain.end(), e.begin(), e.end());
		}
		Bytes f = eth(0x86dd, ip6(h, cat({chain, tcp(Tcp{})})));
		Parsed p = parse(f);
		EXPECT_EQ(p.r, n <= SGW_IP6_MAX_EXT ? SGW_PR_OK : SGW_PR_IP6_EXT_TOO_MANY) << n;
		check_invariants(p, f.size());
	}
}

TEST(ParseIp6, ExtensionChainTruncationTable)
{
	// hop-by-hop 8 + AH 16 + TCP 20, cut to k bytes with payload length = k.
	Bytes rest = cat({ext6(51, 8), ah6(6, 16), tcp(Tcp{})});
	for (size_t k = 0; k <= rest.size(); k++) {
		Ip6 h;
		h.nh = 0;
		Bytes f = eth(0x86dd, ip6(h, Bytes(rest.begin(), rest.begin() + k)));
		Parsed p = parse(f);
		sgw_parse_reason want;
		if (k < 24)
			want = SGW_PR_IP6_EXT_TRUNC;
		else if (k < 44)
			want = SGW_PR_TCP_TRUNC;
		else
			want = SGW_PR_OK;
		EXPECT_EQ(p.r, want) << "k " << k;
		check_invariants(p, f.size());
	}
}

TEST(ParseIp6, ExtensionLengthBeyondPayload)
{
	Ip6 h;
	h.nh = 43;
	// Routing header claims 255 * 8 + 8 bytes.
	Bytes e = {6, 255, 0, 0, 0, 0, 0, 0};
	EXPECT_EQ(parse(eth(0x86dd, ip6(h, cat({e, tcp(Tcp{})})))).r, SGW_PR_IP6_EXT_TRUNC);
	// Payload length 1: only the next-header byte of the first extension.
	h.nh = 0;
	h.paylen = 1;
	Bytes f = eth(0x86dd, ip6(h, {6}));
	EXPECT_EQ(parse(f).r, SGW_PR_IP6_EXT_TRUNC);
}

TEST(ParseIp6, TruncationTableRaw)
{
	Bytes f = tcp6_frame();
	size_t hdr_end = 14 + 40;
	for (size_t n = 0; n <= f.size(); n++) {
		Parsed p = parse(f, nullptr, n);
		sgw_parse_reason want;
		if (n < 14)
			want = SGW_PR_ETH_TRUNC;
		else if (n < hdr_end)
			want = SGW_PR_IP6_TRUNC;
		else if (n < f.size())
			want = SGW_PR_IP6_BAD_PAYLEN;
		else
			want = SGW_PR_OK;
		EXPECT_EQ(p.r, want) << "len " << n;
		check_invariants(p, n);
	}
}

TEST(ParseIp6, BadVersionAndPayloadLength)
{
	Ip6 h;
	h.version = 4;
	Parsed p = parse(eth(0x86dd, ip6(h, tcp(Tcp{}))));
	EXPECT_EQ(p.r, SGW_PR_IP6_BAD_VERSION);
	EXPECT_EQ(p.info.ip_ver, 0);

	Ip6 h2;
	h2.paylen = 21;
	EXPECT_EQ(parse(eth(0x86dd, ip6(h2, tcp(Tcp{})))).r, SGW_PR_IP6_BAD_PAYLEN);
	h2.paylen = 19;
	EXPECT_EQ(parse(eth(0x86dd, ip6(h2, tcp(Tcp{})))).r, SGW_PR_TCP_TRUNC);
	h2.paylen = 0;  // jumbograms are not supported: nothing follows
	EXPECT_EQ(parse(eth(0x86dd, ip6(h2, tcp(Tcp{})))).r, SGW_PR_TCP_TRUNC);
}

TEST(ParseIp6, PaddingAfterPayload)
{
	Ip6 h;
	h.nh = 17;
	Bytes f = eth(0x86dd, ip6(h, udp(1000, 2000, {1, 2, 3, 4})));
	f.resize(f.size() + 6, 0xee);
	Parsed p = parse(f);
	ASSERT_EQ(p.r, SGW_PR_OK);
	EXPECT_EQ(p.info.l3_len, 40u + 12);
}

TEST(ParseIp6, Fragments)
{
	struct Row {
		uint16_t off;
		bool more;
		uint8_t want_frag;
		sgw_class want_cls;
	} rows[] = {
		{0, false, 0, SGW_CLASS_TCP},  // atomic fragment (RFC 6946): not a fragment
		{0, true, SGW_FRAG_IS_FRAGMENT | SGW_FRAG_FIRST | SGW_FRAG_MORE, SGW_CLASS_TCP},
		{181, true, SGW_FRAG_IS_FRAGMENT | SGW_FRAG_MORE, SGW_CLASS_IP_OTHER},
		{181, false, SGW_FRAG_IS_FRAGMENT, SGW_CLASS_IP_OTHER},
		{8191, false, SGW_FRAG_IS_FRAGMENT, SGW_CLASS_IP_OTHER},
	};
	for (const Row &r : rows) {
		Ip6 h;
		h.nh = 0;
		Bytes f = eth(0x86dd, ip6(h, cat({ext6(44, 8), frag6(6, r.off, r.more),
						  tcp(Tcp{})})));
		Parsed p = parse(f);
		EXPECT_EQ(p.r, SGW_PR_OK) << r.off << r.more;
		EXPECT_EQ(p.info.frag, r.want_frag) << r.off << r.more;
		EXPECT_EQ(p.info.cls, r.want_cls) << r.off << r.more;
		EXPECT_EQ(p.info.ip_proto, 6);
		EXPECT_EQ(p.info.l4_off, 14 + 40 + 8 + 8);
		if (r.want_cls == SGW_CLASS_IP_OTHER) {
			EXPECT_EQ(p.info.sport, 0);
			EXPECT_EQ(p.info.payload_off, p.info.l4_off);
		}
		check_invariants(p, f.size());
	}
	// A non-first fragment whose data could not be a TCP header is fine.
	Ip6 h;
	h.nh = 44;
	Parsed p = parse(eth(0x86dd, ip6(h, cat({frag6(6, 10, false), {1, 2}}))));
	EXPECT_EQ(p.r, SGW_PR_OK);
	EXPECT_EQ(p.info.cls, SGW_CLASS_IP_OTHER);
	// A fragment header cut short.
	EXPECT_EQ(parse(eth(0x86dd, ip6(h, {6, 0, 0, 0, 0}))).r, SGW_PR_IP6_EXT_TRUNC);
}

TEST(ParseIp6, EspEndsChainAndNoNextHeader)
{
	Ip6 h;
	h.nh = 0;
	// ESP payload bytes that look like an extension header must not be walked.
	Parsed p = parse(eth(0x86dd, ip6(h, cat({ext6(50, 8), esp(0x1234, 77, {0, 255, 1, 2})}))));
	ASSERT_EQ(p.r, SGW_PR_OK);
	EXPECT_EQ(p.info.cls, SGW_CLASS_ESP);
	EXPECT_EQ(p.info.ip_proto, 50);
	EXPECT_EQ(p.info.esp_spi, 0x1234u);
	EXPECT_EQ(p.info.esp_seq, 77u);
	EXPECT_EQ(p.info.esp_in_udp, 0);
	EXPECT_EQ(p.info.l4_off, 62);
	EXPECT_EQ(p.info.payload_off, 70);

	for (bool via_ext : {false, true}) {
		Ip6 h2;
		h2.nh = via_ext ? 60 : 59;
		Bytes rest = via_ext ? cat({ext6(59, 8), {1, 2, 3}}) : Bytes{1, 2, 3};
		Parsed q = parse(eth(0x86dd, ip6(h2, rest)));
		EXPECT_EQ(q.r, SGW_PR_OK);
		EXPECT_EQ(q.info.cls, SGW_CLASS_IP_OTHER);
		EXPECT_EQ(q.info.ip_proto, 59);
	}
}

TEST(ParseIp6, Icmpv6)
{
	Ip6 h;
	h.nh = 58;
	Bytes f = eth(0x86dd, ip6(h, icmp(135, 0, Bytes(20, 0))));  // neighbour solicitation
	Parsed p = parse(f);
	ASSERT_EQ(p.r, SGW_PR_OK);
	EXPECT_EQ(p.info.cls, SGW_CLASS_ICMP);
	EXPECT_EQ(p.info.icmp_type, 135);
	EXPECT_EQ(p.info.icmp_code, 0);
	EXPECT_EQ(p.info.l4_hlen, 4);
	EXPECT_EQ(p.info.payload_off, 58);
	EXPECT_EQ(p.info.sport, 0);
	for (size_t k = 0; k < 4; k++) {
		Parsed q = parse(eth(0x86dd, ip6(h, Bytes(k, 1))));
		EXPECT_EQ(q.r, SGW_PR_ICMP_TRUNC) << k;
	}
	// ICMPv4's number in IPv6 is not ICMP.
	h.nh = 1;
	EXPECT_EQ(parse(eth(0x86dd, ip6(h, icmp(8, 0, {})))).info.cls, SGW_CLASS_IP_OTHER);
}

// ---------------------------------------------------------------- UDP, ESP, ICMP

TEST(ParseUdp, PlainUdp)
{
	Ip4 h;
	h.proto = 17;
	Bytes f = eth(0x0800, ip4(h, udp(5353, 53, Bytes(30, 1))));
	Parsed p = parse(f);
	ASSERT_EQ(p.r, SGW_PR_OK);
	EXPECT_EQ(p.info.cls, SGW_CLASS_UDP);
	EXPECT_EQ(p.info.sport, 5353);
	EXPECT_EQ(p.info.dport, 53);
	EXPECT_EQ(p.info.l4_off, 34);
	EXPECT_EQ(p.info.l4_hlen, 8);
	EXPECT_EQ(p.info.payload_off, 42);
	EXPECT_EQ(p.info.esp_in_udp, 0);
	EXPECT_EQ(p.info.esp_spi, 0u);
	EXPECT_EQ(p.info.tcp_seq, 0u);
	EXPECT_EQ(p.info.tcp_flags, 0);
	check_invariants(p, f.size());
}

TEST(ParseUdp, LengthTable)
{
	struct Row {
		size_t ip_payload;  // bytes of UDP datagram actually present
		int udp_len;
		sgw_parse_reason want;
	} rows[] = {
		{0, 8, SGW_PR_UDP_TRUNC},
		{7, 8, SGW_PR_UDP_TRUNC},
		{8, 8, SGW_PR_OK},
		{8, 0, SGW_PR_UDP_BAD_LEN},
		{8, 7, SGW_PR_UDP_BAD_LEN},
		{8, 9, SGW_PR_UDP_BAD_LEN},
		{20, 20, SGW_PR_OK},
		{20, 12, SGW_PR_OK},  // IP payload may be longer than the UDP datagram
		{20, 21, SGW_PR_UDP_BAD_LEN},
		{20, 65535, SGW_PR_UDP_BAD_LEN},
	};
	for (const Row &r : rows) {
		Ip4 h;
		h.proto = 17;
		Bytes d = udp(1000, 2000, Bytes(r.ip_payload > 8 ? r.ip_payload - 8 : 0, 3),
			      r.udp_len);
		d.resize(r.ip_payload);
		Bytes f = eth(0x0800, ip4(h, d));
		Parsed p = parse(f);
		EXPECT_EQ(p.r, r.want) << r.ip_payload << "/" << r.udp_len;
		check_invariants(p, f.size());
	}
}

TEST(ParseUdp, EspInUdpBothDirections)
{
	for (bool to_4500 : {true, false}) {
		Ip4 h;
		h.proto = 17;
		uint16_t sp = to_4500 ? 61000 : 4500, dp = to_4500 ? 4500 : 61000;
		Bytes f = eth(0x0800, ip4(h, udp(sp, dp, esp(0xc0ffee01, 0x42, Bytes(48, 0xab)))));
		Parsed p = parse(f);
		ASSERT_EQ(p.r, SGW_PR_OK);
		EXPECT_EQ(p.info.cls, SGW_CLASS_ESP);
		EXPECT_EQ(p.info.esp_in_udp, 1);
		EXPECT_EQ(p.info.esp_spi, 0xc0ffee01u);
		EXPECT_EQ(p.info.esp_seq, 0x42u);
		EXPECT_EQ(p.info.sport, sp);
		EXPECT_EQ(p.info.dport, dp);
		EXPECT_EQ(p.info.ip_proto, 17);
		EXPECT_EQ(p.info.l4_off, 34);
		EXPECT_EQ(p.info.l4_hlen, 8);
		EXPECT_EQ(p.info.payload_off, 42);  // the ESP header
		check_invariants(p, f.size());
	}
}

TEST(ParseUdp, Rfc3948Table)
{
	struct Row {
		const char *what;
		Bytes payload;
		sgw_parse_reason want;
		sgw_class cls;
	} rows[] = {
		{"nat keepalive", {0xff}, SGW_PR_OK, SGW_CLASS_UDP},
		{"ike non-esp marker", cat({{0, 0, 0, 0}, Bytes(28, 0x21)}), SGW_PR_OK,
		 SGW_CLASS_UDP},
		{"bare non-esp marker", {0, 0, 0, 0}, SGW_PR_OK, SGW_CLASS_UDP},
		{"spi 0 with seq", {0, 0, 0, 0, 0, 0, 0, 1}, SGW_PR_OK, SGW_CLASS_UDP},
		{"esp minimal", {0, 0, 1, 0, 0, 0, 0, 1}, SGW_PR_OK, SGW_CLASS_ESP},
		{"empty", {}, SGW_PR_ESP_TRUNC, SGW_CLASS_MALFORMED},
		{"one byte not 0xff", {0xfe}, SGW_PR_ESP_TRUNC, SGW_CLASS_MALFORMED},
		{"two 0xff", {0xff, 0xff}, SGW_PR_ESP_TRUNC, SGW_CLASS_MALFORMED},
		{"three zeros", {0, 0, 0}, SGW_PR_ESP_TRUNC, SGW_CLASS_MALFORMED},
		{"spi only", {0, 0, 1, 0}, SGW_PR_ESP_TRUNC, SGW_CLASS_MALFORMED},
		{"seven bytes", {1, 2, 3, 4, 5, 6, 7}, SGW_PR_ESP_TRUNC, SGW_CLASS_MALFORMED},
	};
	for (const Row &r : rows) {
		for (bool v6 : {false, true}) {
			Bytes d = udp(4500, 4500, r.payload);
			Bytes f;
			if (v6) {
				Ip6 h;
				h.nh = 17;
				f = eth(0x86dd, ip6(h, d));
			} else {
				Ip4 h;
				h.proto = 17;
				f = eth(0x0800, ip4(h, d));
			}
			Parsed p = parse(f);
			EXPECT_EQ(p.r, r.want) << r.what << " v6=" << v6;
			EXPECT_EQ(p.info.cls, r.cls) << r.what << " v6=" << v6;
			EXPECT_EQ(p.info.esp_in_udp, r.cls == SGW_CLASS_ESP ? 1 : 0) << r.what;
			check_invariants(p, f.size());
		}
	}
}

TEST(ParseUdp, UdpLengthBoundsTheEspCheck)
{
	// 12 bytes of ESP-looking data after the header, but UDP length says 3.
	Ip4 h;
	h.proto = 17;
	Bytes f = eth(0x0800, ip4(h, udp(4500, 4500, esp(5, 6, {1, 2, 3, 4}), 8 + 3)));
	EXPECT_EQ(parse(f).r, SGW_PR_ESP_TRUNC);
	// ...and 1 byte that is 0xff is a keepalive even with trailing IP bytes.
	Bytes g = eth(0x0800, ip4(h, udp(4500, 4500, {0xff, 0, 0, 0, 0, 0, 0, 0}, 9)));
	Parsed p = parse(g);
	EXPECT_EQ(p.r, SGW_PR_OK);
	EXPECT_EQ(p.info.cls, SGW_CLASS_UDP);
}

TEST(ParseUdp, ConfiguredEncapPort)
{
	sgw_parse_conf c = defconf();
	c.esp_udp_port = 4501;
	Ip4 h;
	h.proto = 17;
	Bytes payload = esp(0x99, 1, Bytes(16, 0));
	EXPECT_EQ(parse(eth(0x0800, ip4(h, udp(1, 4500, payload))), &c).info.cls,
		  SGW_CLASS_UDP);
	EXPECT_EQ(parse(eth(0x0800, ip4(h, udp(1, 4501, payload))), &c).info.cls,
		  SGW_CLASS_ESP);
	c.esp_udp_port = 0;  // disabled
	EXPECT_EQ(parse(eth(0x0800, ip4(h, udp(0, 0, payload))), &c).info.cls, SGW_CLASS_UDP);
}

TEST(ParseEsp, DirectEsp)
{
	Ip4 h;
	h.proto = 50;
	h.tos = 0x03;
	Bytes f = eth(0x0800, ip4(h, esp(0x00000100, 0xfffffffe, Bytes(64, 0x5c))));
	Parsed p = parse(f);
	ASSERT_EQ(p.r, SGW_PR_OK);
	EXPECT_EQ(p.info.cls, SGW_CLASS_ESP);
	EXPECT_EQ(p.info.ip_proto, 50);
	EXPECT_EQ(p.info.esp_spi, 0x100u);
	EXPECT_EQ(p.info.esp_seq, 0xfffffffeu);
	EXPECT_EQ(p.info.esp_in_udp, 0);
	EXPECT_EQ(p.info.ecn, 3);
	EXPECT_EQ(p.info.sport, 0);
	EXPECT_EQ(p.info.dport, 0);
	EXPECT_EQ(p.info.l4_hlen, 8);
	EXPECT_EQ(p.info.payload_off, 42);
	check_invariants(p, f.size());
	for (size_t k = 0; k < 8; k++) {
		Bytes g = eth(0x0800, ip4(h, Bytes(k, 1)));
		Parsed q = parse(g);
		EXPECT_EQ(q.r, SGW_PR_ESP_TRUNC) << k;
		check_invariants(q, g.size());
	}
}

TEST(ParseIcmp, Icmpv4)
{
	Ip4 h;
	h.proto = 1;
	Bytes f = eth(0x0800, ip4(h, icmp(3, 4, Bytes(28, 0))));  // frag needed
	Parsed p = parse(f);
	ASSERT_EQ(p.r, SGW_PR_OK);
	EXPECT_EQ(p.info.cls, SGW_CLASS_ICMP);
	EXPECT_EQ(p.info.icmp_type, 3);
	EXPECT_EQ(p.info.icmp_code, 4);
	EXPECT_EQ(p.info.l4_hlen, 4);
	EXPECT_EQ(p.info.payload_off, 38);
	EXPECT_EQ(p.info.sport, 0);
	for (size_t k = 0; k < 4; k++)
		EXPECT_EQ(parse(eth(0x0800, ip4(h, Bytes(k, 8)))).r, SGW_PR_ICMP_TRUNC) << k;
	EXPECT_EQ(parse(eth(0x0800, ip4(h, {8, 0, 0, 0}))).r, SGW_PR_OK);
}

// ---------------------------------------------------------------- LIFT, XCP

TEST(ParseLift, HeaderLayout)
{
	EXPECT_EQ(sizeof(sgw_lift_hdr), static_cast<size_t>(SGW_LIFT_HDR_LEN));
	EXPECT_EQ(offsetof(sgw_lift_hdr, flow_id), static_cast<size_t>(SGW_LIFT_OFF_FLOW_ID));
	EXPECT_EQ(offsetof(sgw_lift_hdr, word), static_cast<size_t>(SGW_LIFT_OFF_WORD));
	EXPECT_EQ(offsetof(sgw_lift_hdr, next), static_cast<size_t>(SGW_LIFT_OFF_NEXT));
	EXPECT_EQ(sgw_lift_type(0x00), SGW_LIFT_SETUP);
	EXPECT_EQ(sgw_lift_type(SGW_LIFT_F_T), SGW_LIFT_TEARDOWN);
	EXPECT_EQ(sgw_lift_type(SGW_LIFT_F_A | SGW_LIFT_F_D | SGW_LIFT_F_F), SGW_LIFT_TCP_ACK);
	EXPECT_EQ(sgw_lift_type(SGW_LIFT_F_A | SGW_LIFT_F_T | 0x07), SGW_LIFT_FRACK);
	// One definition of the XCP header's length: the v2 codec's.
	EXPECT_EQ(static_cast<size_t>(SGW_XCP_HDR_LEN), static_cast<size_t>(SGW_XCPW_LEN));
	EXPECT_EQ(SGW_XCP_HDR_LEN, 20);
}

TEST(ParseLift, TcpAckOverEsp)
{
	Ip4 h;
	h.proto = 253;
	Bytes f = eth(0x0800, ip4(h, cat({lift(SGW_LIFT_F_A | SGW_LIFT_F_F, 0x0102, 77, 50),
					 esp(0x1001, 78, Bytes(40, 0))})));
	Parsed p = parse(f);
	ASSERT_EQ(p.r, SGW_PR_OK);
	EXPECT_EQ(p.info.cls, SGW_CLASS_LIFT);
	EXPECT_EQ(p.info.ip_proto, 253);
	EXPECT_EQ(p.info.lift_next, 50);
	EXPECT_EQ(p.info.l4_off, 34);
	EXPECT_EQ(p.info.l4_hlen, 8);
	EXPECT_EQ(p.info.payload_off, 42);
	EXPECT_EQ(p.info.esp_spi, 0u);  // the ESP inside is a later stage's business
	const sgw_lift_hdr *lh = reinterpret_cast<const sgw_lift_hdr *>(f.data() + 34);
	EXPECT_EQ(lh->flow_id[0], 1);
	EXPECT_EQ(lh->flow_id[1], 2);
	EXPECT_EQ(lh->word[3], 77);
	check_invariants(p, f.size());
}

TEST(ParseLift, ControlPacketsHaveNoNextHeader)
{
	Ip6 h;
	h.nh = 253;
	// Setup: byte 7 is the downlink protocol (ESP), not a next header.
	Parsed p = parse(eth(0x86dd, ip6(h, lift(0x00, 9, 0xabcdef, 50))));
	ASSERT_EQ(p.r, SGW_PR_OK);
	EXPECT_EQ(p.info.cls, SGW_CLASS_LIFT);
	EXPECT_EQ(p.info.lift_next, 59);
	// FrACK: next header is meaningful.
	p = parse(eth(0x86dd, ip6(h, lift(SGW_LIFT_F_A | SGW_LIFT_F_T, 9, 0, 50))));
	EXPECT_EQ(p.info.lift_next, 50);
}

TEST(ParseLift, TruncationAndConfiguredProtocol)
{
	Ip4 h;
	h.proto = 253;
	for (size_t k = 0; k < SGW_LIFT_HDR_LEN; k++) {
		Parsed p = parse(eth(0x0800, ip4(h, Bytes(k, 0x80))));
		EXPECT_EQ(p.r, SGW_PR_LIFT_TRUNC) << k;
		EXPECT_EQ(p.info.cls, SGW_CLASS_MALFORMED);
	}
	EXPECT_EQ(parse(eth(0x0800, ip4(h, lift(0x80, 1, 1, 6)))).r, SGW_PR_OK);

	sgw_parse_conf c = defconf();
	c.lift_proto = 143;
	Parsed p = parse(eth(0x0800, ip4(h, lift(0x80, 1, 1, 6))), &c);
	EXPECT_EQ(p.info.cls, SGW_CLASS_IP_OTHER);  // 253 is no longer LIFT
	h.proto = 143;
	p = parse(eth(0x0800, ip4(h, lift(0x80, 1, 1, 6))), &c);
	EXPECT_EQ(p.info.cls, SGW_CLASS_LIFT);
	EXPECT_EQ(p.info.lift_next, 6);
}

TEST(ParseXcp, OkTruncatedAndConfigured)
{
	Ip4 h;
	h.proto = 254;
	Tcp t;
	t.sport = 40001;
	t.dport = 443;
	Bytes f = eth(0x0800, ip4(h, cat({xcp(6, 600000, 1250000, -3000), tcp(t)})));
	Parsed p = parse(f);
	ASSERT_EQ(p.r, SGW_PR_OK);
	EXPECT_EQ(p.info.cls, SGW_CLASS_XCP);
	EXPECT_EQ(p.info.ip_proto, 254);
	EXPECT_EQ(p.info.l4_off, 34);
	EXPECT_EQ(p.info.l4_hlen, 20);
	EXPECT_EQ(p.info.payload_off, 34 + 20);
	EXPECT_EQ(p.info.sport, 0);  // the TCP inside is not parsed here
	EXPECT_EQ(p.info.lift_next, 0);
	check_invariants(p, f.size());
	// payload_off is the TCP header's first byte (a v1 length would be 4 short).
	EXPECT_EQ(f[p.info.payload_off], 40001 >> 8);
	EXPECT_EQ(f[p.info.payload_off + 1], 40001 & 0xff);
	EXPECT_EQ(f[p.info.payload_off + 2], 443 >> 8);
	EXPECT_EQ(f[p.info.payload_off + 3], 443 & 0xff);
	// The codec reads the same header at l4_off, of the length the parser framed.
	sgw_xcp_fields xf;
	ASSERT_EQ(sgw_xcp_parse(f.data() + p.info.l4_off, f.size() - p.info.l4_off, 254, &xf),
		  SGW_XCP_OK);
	EXPECT_EQ(xf.hlen, p.info.l4_hlen);
	EXPECT_EQ(xf.next, 6);
	EXPECT_EQ(xf.rtt_us, 600000u);
	EXPECT_EQ(xf.cwnd, 1250000u);
	EXPECT_EQ(xf.feedback, -3000);
	for (size_t k = 0; k < SGW_XCP_HDR_LEN; k++) {
		for (bool v6 : {false, true}) {
			Bytes g;
			if (v6) {
				Ip6 h6;
				h6.nh = 254;
				g = eth(0x86dd, ip6(h6, Bytes(k, 0x20)));
			} else {
				g = eth(0x0800, ip4(h, Bytes(k, 0x20)));
			}
			EXPECT_EQ(parse(g).r, SGW_PR_XCP_TRUNC) << k << " v6=" << v6;
		}
	}
	// Exactly 20 bytes (no transport behind it) is a whole header.
	EXPECT_EQ(parse(eth(0x0800, ip4(h, xcp(59, 1, 2, 3)))).r, SGW_PR_OK);
	sgw_parse_conf c = defconf();
	c.xcp_proto = 200;
	h.proto = 200;
	EXPECT_EQ(parse(eth(0x0800, ip4(h, xcp(6, 1, 2, 3))), &c).info.cls, SGW_CLASS_XCP);
	EXPECT_EQ(parse(eth(0x0800, ip4(h, xcp(6, 1, 2, 3)))).info.cls, SGW_CLASS_IP_OTHER);
}

TEST(ParseXcp, EspBehindTheHeaderV4AndV6)
{
	const Bytes payload(48, 0xa5);  // ciphertext: never looked at
	for (bool v6 : {false, true}) {
		Bytes ip;
		size_t l4;
		if (v6) {
			Ip6 h6;
			h6.nh = 0;  // hop-by-hop, then a destination-options header, then XCP
			ip = ip6(h6, cat({ext6(60, 8), ext6(254, 16),
					  xcp(50, 700000, 64000, 1500, -7),
					  esp(0x01020304, 99, payload)}));
			l4 = 14 + 40 + 8 + 16;
		} else {
			Ip4 h;
			h.proto = 254;
			ip = ip4(h, cat({xcp(50, 700000, 64000, 1500, -7),
					 esp(0x01020304, 99, payload)}));
			l4 = 34;
		}
		Bytes f = eth(v6 ? 0x86dd : 0x0800, ip);
		Parsed p = parse(f);
		ASSERT_EQ(p.r, SGW_PR_OK) << v6;
		EXPECT_EQ(p.info.cls, SGW_CLASS_XCP) << v6;
		EXPECT_EQ(p.info.ip_proto, 254) << v6;
		EXPECT_EQ(p.info.l4_off, l4) << v6;
		EXPECT_EQ(p.info.l4_hlen, 20) << v6;
		EXPECT_EQ(p.info.payload_off, l4 + 20) << v6;
		EXPECT_EQ(p.info.esp_spi, 0u);  // ESP inside is not the parser's business
		check_invariants(p, f.size());
		// The SPI starts at payload_off.
		EXPECT_EQ(f[p.info.payload_off], 0x01) << v6;
		EXPECT_EQ(f[p.info.payload_off + 3], 0x04) << v6;
		sgw_xcp_fields xf;
		ASSERT_EQ(sgw_xcp_parse(f.data() + l4, f.size() - l4, 254, &xf), SGW_XCP_OK);
		EXPECT_EQ(xf.next, 50);
		EXPECT_EQ(xf.reverse, -7);
	}
}

// ---------------------------------------------------------------- robustness

std::vector<Bytes>
corpus()
{
	Ip4 u4;
	u4.proto = 17;
	Ip4 e4;
	e4.proto = 50;
	Ip4 l4;
	l4.proto = 253;
	Ip6 u6;
	u6.nh = 17;
	Tcp sack;
	sack.opts = cat({NOP, NOP, o_sack({{1, 2}, {3, 4}})});
	return {
		tcp4_frame(),
		tcp6_frame(),
		eth(0x0800, ip4(Ip4{}, tcp(sack)), {{0x8100, 5}}),
		eth(0x0800, ip4(u4, udp(4500, 4500, esp(7, 8, Bytes(12, 1))))),
		eth(0x86dd, ip6(u6, udp(500, 4500, {0, 0, 0, 0, 1}))),
		eth(0x0800, ip4(e4, esp(1, 2, {3}))),
		eth(0x0800, ip4(l4, lift(0x80, 1, 2, 50))),
	};
}

// Every byte of every sample frame replaced by several values, and every
// truncation of each: the parser must keep its invariants and stay in bounds.
TEST(ParseRobustness, SingleByteMutationsAndTruncations)
{
	const uint8_t vals[] = {0x00, 0x01, 0x02, 0x05, 0x08, 0x0a, 0x3b, 0x44, 0x45, 0x60,
				0x7f, 0x80, 0xfe, 0xff};
	size_t n_parsed = 0, n_ok = 0;
	for (const Bytes &f : corpus()) {
		for (size_t n = 0; n <= f.size(); n++) {
			check_invariants(parse(f, nullptr, n), n);
			n_parsed++;
		}
		for (size_t pos = 0; pos < f.size(); pos++) {
			for (uint8_t v : vals) {
				Bytes g = f;
				g[pos] = v;
				Parsed p = parse(g);
				check_invariants(p, g.size());
				n_ok += p.r == SGW_PR_OK;
				n_parsed++;
				if (HasFatalFailure())
					return;
			}
		}
	}
	EXPECT_GT(n_parsed, 5000u);
	EXPECT_GT(n_ok, 0u);
	EXPECT_LT(n_ok, n_parsed);
}

}  // namespace

/*
 * Multi-segment frames (jumbo frames in chained mbufs): only the first len
 * bytes are contiguous; IP/UDP length fields are checked against frame_len.
 */
namespace {

/* Parse the first `contig` bytes of f from an exactly sized buffer. */
sgw_parse_reason
parse_seg(const Bytes &f, size_t contig, size_t frame_len, sgw_pkt_info *info)
{
	std::vector<uint8_t> head(f.begin(), f.begin() + static_cast<long>(contig));
	return sgw_parse_frame_seg(nullptr, head.data(), head.size(), frame_len, info);
}

} // namespace

TEST(ParseSegmented, Ip4TcpTailInLaterSegments)
{
	Tcp t;
	t.payload.assign(8000, 0x5a);
	Bytes f = eth(0x0800, ip4(Ip4{}, tcp(t)));
	sgw_pkt_info info;

	/* Contiguous part alone: the IPv4 total length is longer than what we see. */
	std::vector<uint8_t> head(f.begin(), f.begin() + 2048);
	EXPECT_EQ(sgw_parse_frame(nullptr, head.data(), head.size(), &info),
		  SGW_PR_IP4_BAD_TOTLEN);
	ASSERT_EQ(parse_seg(f, 2048, f.size(), &info), SGW_PR_OK);
	EXPECT_EQ(info.cls, SGW_CLASS_TCP);
	EXPECT_EQ(info.l3_len, f.size() - 14);
	EXPECT_EQ(info.sport, 40000);
	EXPECT_EQ(info.tcp_win, 0xfedc);
	/* frame_len shorter than the IPv4 total length: still malformed. */
	EXPECT_EQ(parse_seg(f, 2048, f.size() - 1, &info), SGW_PR_IP4_BAD_TOTLEN);
	/* frame_len below len is treated as len. */
	EXPECT_EQ(parse_seg(f, 2048, 10, &info), SGW_PR_IP4_BAD_TOTLEN);
}

TEST(ParseSegmented, HeadersMustBeContiguous)
{
	Tcp t;
	t.payload.assign(3000, 1);
	Bytes f = eth(0x0800, ip4(Ip4{}, tcp(t)));
	sgw_pkt_info info;

	/* TCP header split across segments: the parser does not read past len. */
	EXPECT_EQ(parse_seg(f, 14 + 20 + 10, f.size(), &info), SGW_PR_TCP_TRUNC);
	EXPECT_EQ(parse_seg(f, 14 + 10, f.size(), &info), SGW_PR_IP4_TRUNC);
}

TEST(ParseSegmented, Ip6AndUdpLengthsFromTheWholeFrame)
{
	Bytes payload(5000, 7);
	Ip6 h6;
	h6.nh = 17;
	Bytes f6 = eth(0x86dd, ip6(h6, udp(5000, 6000, payload)));
	Ip4 h4;
	h4.proto = 17;
	Bytes f4 = eth(0x0800, ip4(h4, udp(5000, 6000, payload)));
	sgw_pkt_info info;

	ASSERT_EQ(parse_seg(f6, 1500, f6.size(), &info), SGW_PR_OK);
	EXPECT_EQ(info.cls, SGW_CLASS_UDP);
	EXPECT_EQ(info.dport, 6000);
	EXPECT_EQ(parse_seg(f6, 1500, 1500, &info), SGW_PR_IP6_BAD_PAYLEN);
	ASSERT_EQ(parse_seg(f4, 1500, f4.size(), &info), SGW_PR_OK);
	EXPECT_EQ(info.cls, SGW_CLASS_UDP);
	/* Whole frame in one segment but a UDP length past it: still bad. */
	Bytes bad = eth(0x0800, ip4(h4, udp(5000, 6000, Bytes(100, 1), 500)));
	EXPECT_EQ(parse_seg(bad, bad.size(), bad.size(), &info), SGW_PR_UDP_BAD_LEN);
}

TEST(ParseSegmented, ClassifyBurstUsesFrameLengths)
{
	Tcp t;
	t.payload.assign(4000, 2);
	Bytes big = eth(0x0800, ip4(Ip4{}, tcp(t)));
	std::vector<uint8_t> head(big.begin(), big.begin() + 2000);
	const uint8_t *data[2] = {head.data(), head.data()};
	uint16_t len[2] = {2000, 2000};
	uint32_t flen[2] = {uint32_t(big.size()), 2000};
	sgw_pkt_info info[2];
	sgw_burst_classes cls;

	sgw_classify_burst_seg(nullptr, data, len, flen, 2, info, &cls);
	EXPECT_EQ(cls.n[SGW_CLASS_TCP], 1);
	EXPECT_EQ(cls.n[SGW_CLASS_MALFORMED], 1);
	EXPECT_EQ(info[1].reason, SGW_PR_IP4_BAD_TOTLEN);
	sgw_classify_burst_seg(nullptr, data, len, nullptr, 2, info, &cls);
	EXPECT_EQ(cls.n[SGW_CLASS_MALFORMED], 2);
}

// ESP-in-UDP cut inside its first 8 bytes, the datagram going on in later
// segments: too few bytes to tell keepalive, IKE and ESP apart, so a
// truncation (the worker then parses a copy read across segments), never a
// NAT-keepalive because the one byte seen is 0xff.
TEST(ParseSegmented, EspInUdpCutBeforeItsEightBytesIsTruncated)
{
	Ip4 h;
	h.proto = 17;
	Bytes f = eth(0x0800, ip4(h, udp(4500, 4500, esp(0xff000001, 1, Bytes(1000, 3)))));
	sgw_pkt_info info;

	for (size_t contig = 42; contig < 50; contig++) {
		EXPECT_EQ(parse_seg(f, contig, f.size(), &info), SGW_PR_ESP_TRUNC) << contig;
		EXPECT_EQ(info.cls, SGW_CLASS_MALFORMED) << contig;
	}
	ASSERT_EQ(parse_seg(f, 50, f.size(), &info), SGW_PR_OK);
	EXPECT_EQ(info.cls, SGW_CLASS_ESP);
	EXPECT_EQ(info.esp_spi, 0xff000001u);
	ASSERT_EQ(parse_seg(f, f.size(), f.size(), &info), SGW_PR_OK);
	EXPECT_EQ(info.cls, SGW_CLASS_ESP);
	// A real keepalive, all of it given, is still one.
	Bytes k = eth(0x0800, ip4(h, udp(4500, 4500, {0xff})));
	ASSERT_EQ(parse_seg(k, k.size(), k.size(), &info), SGW_PR_OK);
	EXPECT_EQ(info.cls, SGW_CLASS_UDP);
	EXPECT_EQ(parse_seg(k, k.size() - 1, k.size(), &info), SGW_PR_ESP_TRUNC);
}

// SGW_PARSE_HDR_MAX is the longest walk there is: two VLAN tags, IPv6, eight
// extension headers of 2,048 bytes, TCP with 40 bytes of options. Given that
// many bytes the parse succeeds; one fewer and it stops short.
TEST(ParseSegmented, HdrMaxIsTheLongestHeaderWalk)
{
	Bytes chain;
	for (int k = 0; k < SGW_IP6_MAX_EXT; k++) {
		Bytes e = ext6(k == SGW_IP6_MAX_EXT - 1 ? 6 : 60, 2048);
		chain.insert(chain.end(), e.begin(), e.end());
	}
	Tcp t;
	t.opts = cat({syn_opts(), Bytes(20, 1)});
	t.payload.assign(100, 0x42);
	ASSERT_EQ(t.opts.size(), 40u);
	Ip6 h;
	h.nh = 60;
	Bytes f = eth(0x86dd, ip6(h, cat({chain, tcp(t)})), {{0x88a8, 1}, {0x8100, 2}});
	sgw_pkt_info info;

	ASSERT_EQ(f.size(), size_t(SGW_PARSE_HDR_MAX) + 100);
	ASSERT_EQ(parse_seg(f, SGW_PARSE_HDR_MAX, f.size(), &info), SGW_PR_OK);
	EXPECT_EQ(info.cls, SGW_CLASS_TCP);
	EXPECT_EQ(info.payload_off, SGW_PARSE_HDR_MAX);
	EXPECT_EQ(info.sport, t.sport);
	EXPECT_EQ(parse_seg(f, SGW_PARSE_HDR_MAX - 1, f.size(), &info), SGW_PR_TCP_BAD_DOFF);
	EXPECT_EQ(parse_seg(f, SGW_PARSE_HDR_MAX - 41, f.size(), &info), SGW_PR_TCP_TRUNC);
	EXPECT_EQ(parse_seg(f, SGW_PARSE_HDR_MAX - 61, f.size(), &info), SGW_PR_IP6_EXT_TRUNC);
}
