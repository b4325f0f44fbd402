// SPDX-License-Identifier: BSD-3-Clause
// Unit tests for sgw_classify_burst(): a burst is parsed and each frame's
// index lands in the array of its class, in arrival order.

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "sgw_parse.h"

namespace {

using Bytes = std::vector<uint8_t>;

// A compact frame builder (test_parse.cc has the full one).
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
eth(uint16_t et, const Bytes &l3)
{
	Bytes b = {0x02, 0, 0, 0, 0, 1, 0x02, 0, 0, 0, 0, 2};
	put16(b, et);
	b.insert(b.end(), l3.begin(), l3.end());
	return b;
}

Bytes
ip4(uint8_t proto, const Bytes &l4, uint16_t frag = 0)
{
	Bytes b = {0x45, 0};
	put16(b, static_cast<uint16_t>(20 + l4.size()));
	put16(b, 1);
	put16(b, frag);
	b.push_back(64);
	b.push_back(proto);
	put16(b, 0);
	put32(b, 0x0a000001);
	put32(b, 0x0a000002);
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

Bytes
tcp(uint16_t sport, uint16_t dport)
{
	Bytes b;
	put16(b, sport);
	put16(b, dport);
	put32(b, 1);
	put32(b, 2);
	b.push_back(0x50);
	b.push_back(0x10);
	put16(b, 1000);
	put32(b, 0);
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

const Bytes ESP8 = {0, 0, 0x10, 0, 0, 0, 0, 1};

struct Case {
	Bytes frame;
	sgw_class cls;
};

std::vector<Case>
hub_mix()
{
	return {
		{eth(0x0800, ip4(6, tcp(40000, 80))), SGW_CLASS_TCP},
		{eth(0x0800, ip4(17, udp(5000, 53, {1, 2, 3}))), SGW_CLASS_UDP},
		{eth(0x0800, ip4(50, ESP8)), SGW_CLASS_ESP},
		{eth(0x0806, Bytes(28, 0)), SGW_CLASS_NON_IP},
		{eth(0x0800, ip4(17, udp(4500, 4500, ESP8))), SGW_CLASS_ESP},
		{eth(0x0800, ip4(17, udp(4500, 4500, {0xff}))), SGW_CLASS_UDP},
		{eth(0x0800, ip4(1, {8, 0, 0, 0})), SGW_CLASS_ICMP},
		{eth(0x86dd, ip6(6, tcp(443, 50000))), SGW_CLASS_TCP},
		{eth(0x0800, ip4(253, {0x80, 0, 1, 0, 0, 0, 1, 50})), SGW_CLASS_LIFT},
		{eth(0x0800, ip4(254, Bytes(20, 0x20))), SGW_CLASS_XCP},
		{Bytes(10, 0), SGW_CLASS_MALFORMED},                        // runt
		{eth(0x0800, ip4(6, Bytes(12, 0))), SGW_CLASS_MALFORMED},  // TCP cut short
		{eth(0x0800, ip4(47, Bytes(8, 0))), SGW_CLASS_IP_OTHER},   // GRE
		{eth(0x0800, ip4(6, Bytes(8, 0), 100)), SGW_CLASS_IP_OTHER},  // non-first fragment
		{eth(0x86dd, ip6(58, {128, 0, 0, 0})), SGW_CLASS_ICMP},
		{eth(0x0800, ip4(6, tcp(40001, 80))), SGW_CLASS_TCP},
		{eth(0x86dd, ip6(17, udp(1, 2, {}))), SGW_CLASS_UDP},
		{eth(0x0800, ip4(50, ESP8)), SGW_CLASS_ESP},
		{eth(0x88b5, Bytes(30, 0x10)), SGW_CLASS_SATLINK},
	};
}

// Holds a burst's frames in exactly-sized heap buffers.
struct Burst {
	std::vector<std::unique_ptr<uint8_t[]>> bufs;
	std::vector<const uint8_t *> ptrs;
	std::vector<uint16_t> lens;

	void
	add(const Bytes &f)
	{
		bufs.emplace_back(new uint8_t[f.size()]);
		if (!f.empty())
			memcpy(bufs.back().get(), f.data(), f.size());
		ptrs.push_back(bufs.back().get());
		lens.push_back(static_cast<uint16_t>(f.size()));
	}
};

sgw_burst_classes
garbage_classes()
{
	sgw_burst_classes out;
	memset(&out, 0xab, sizeof(out));
	return out;
}

TEST(ClassifyBurst, MixedBurstInArrivalOrder)
{
	std::vector<Case> cases = hub_mix();
	Burst b;
	for (const Case &c : cases)
		b.add(c.frame);
	uint16_t n = static_cast<uint16_t>(cases.size());
	std::vector<sgw_pkt_info> info(n);
	sgw_burst_classes out = garbage_classes();
	sgw_parse_conf conf;
	sgw_parse_conf_default(&conf);

	sgw_classify_burst(&conf, b.ptrs.data(), b.lens.data(), n, info.data(), &out);

	std::vector<uint16_t> want[SGW_CLASS__COUNT];
	for (uint16_t i = 0; i < n; i++)
		want[cases[i].cls].push_back(i);
	unsigned total = 0;
	for (int c = 0; c < SGW_CLASS__COUNT; c++) {
		ASSERT_EQ(out.n[c], want[c].size()) << sgw_class_name(static_cast<sgw_class>(c));
		for (size_t k = 0; k < want[c].size(); k++)
			EXPECT_EQ(out.idx[c][k], want[c][k])
				<< sgw_class_name(static_cast<sgw_class>(c)) << " slot " << k;
		total += out.n[c];
	}
	EXPECT_EQ(total, n);
	// Every class of the mix is exercised, and info[] matches a lone parse.
	for (int c = 0; c < SGW_CLASS__COUNT; c++)
		EXPECT_GT(out.n[c], 0) << sgw_class_name(static_cast<sgw_class>(c));
	for (uint16_t i = 0; i < n; i++) {
		sgw_pkt_info one;
		sgw_parse_reason r = sgw_parse_frame(&conf, b.ptrs[i], b.lens[i], &one);
		EXPECT_EQ(info[i].cls, cases[i].cls) << i;
		EXPECT_EQ(info[i].reason, r) << i;
		EXPECT_EQ(info[i].l4_off, one.l4_off) << i;
		EXPECT_EQ(info[i].sport, one.sport) << i;
		EXPECT_EQ(info[i].esp_spi, one.esp_spi) << i;
	}
	EXPECT_EQ(info[15].sport, 40001);
	EXPECT_EQ(info[4].esp_in_udp, 1);
	EXPECT_EQ(info[4].esp_spi, 0x1000u);
	EXPECT_EQ(info[10].reason, SGW_PR_ETH_TRUNC);
	EXPECT_EQ(info[11].reason, SGW_PR_TCP_TRUNC);
}

TEST(ClassifyBurst, EmptyBurstResetsCounts)
{
	sgw_burst_classes out = garbage_classes();
	sgw_classify_burst(nullptr, nullptr, nullptr, 0, nullptr, &out);
	for (int c = 0; c < SGW_CLASS__COUNT; c++)
		EXPECT_EQ(out.n[c], 0) << c;
}

TEST(ClassifyBurst, SecondBurstStartsFromZero)
{
	Burst b;
	b.add(eth(0x0800, ip4(6, tcp(1, 2))));
	b.add(eth(0x0800, ip4(17, udp(1, 2, {}))));
	std::vector<sgw_pkt_info> info(2);
	sgw_burst_classes out = garbage_classes();
	sgw_classify_burst(nullptr, b.ptrs.data(), b.lens.data(), 2, info.data(), &out);
	sgw_classify_burst(nullptr, b.ptrs.data() + 1, b.lens.data() + 1, 1, info.data(), &out);
	EXPECT_EQ(out.n[SGW_CLASS_TCP], 0);
	EXPECT_EQ(out.n[SGW_CLASS_UDP], 1);
	EXPECT_EQ(out.idx[SGW_CLASS_UDP][0], 0);
}

TEST(ClassifyBurst, FullBurstOfOneClass)
{
	Burst b;
	for (int i = 0; i < SGW_BURST_MAX; i++)
		b.add(eth(0x0800, ip4(6, tcp(static_cast<uint16_t>(1000 + i), 80))));
	std::vector<sgw_pkt_info> info(SGW_BURST_MAX);
	sgw_burst_classes out = garbage_classes();
	sgw_classify_burst(nullptr, b.ptrs.data(), b.lens.data(), SGW_BURST_MAX, info.data(),
			   &out);
	ASSERT_EQ(out.n[SGW_CLASS_TCP], SGW_BURST_MAX);
	for (int i = 0; i < SGW_BURST_MAX; i++) {
		EXPECT_EQ(out.idx[SGW_CLASS_TCP][i], i);
		EXPECT_EQ(info[i].sport, 1000 + i);
	}
	for (int c = 0; c < SGW_CLASS__COUNT; c++) {
		if (c != SGW_CLASS_TCP) {
			EXPECT_EQ(out.n[c], 0) << c;
		}
	}
}

TEST(ClassifyBurst, AlternatingClassesFullBurst)
{
	std::vector<Case> cases = hub_mix();
	Burst b;
	std::vector<sgw_class> want;
	for (int i = 0; i < SGW_BURST_MAX; i++) {
		const Case &c = cases[static_cast<size_t>(i) % cases.size()];
		b.add(c.frame);
		want.push_back(c.cls);
	}
	std::vector<sgw_pkt_info> info(SGW_BURST_MAX);
	sgw_burst_classes out = garbage_classes();
	sgw_classify_burst(nullptr, b.ptrs.data(), b.lens.data(), SGW_BURST_MAX, info.data(),
			   &out);
	unsigned total = 0;
	for (int c = 0; c < SGW_CLASS__COUNT; c++) {
		int prev = -1;
		for (uint16_t k = 0; k < out.n[c]; k++) {
			uint16_t i = out.idx[c][k];
			ASSERT_LT(i, SGW_BURST_MAX);
			EXPECT_EQ(want[i], c) << i;
			EXPECT_GT(static_cast<int>(i), prev);  // arrival order
			prev = i;
		}
		total += out.n[c];
	}
	EXPECT_EQ(total, static_cast<unsigned>(SGW_BURST_MAX));
}

TEST(ClassifyBurst, ConfIsHonoured)
{
	Burst b;
	b.add(eth(0x0800, ip4(143, Bytes(8, 0x80))));
	b.add(eth(0x0800, ip4(253, Bytes(8, 0x80))));
	b.add(eth(0x0800, ip4(17, udp(1, 4501, ESP8))));
	sgw_parse_conf conf;
	sgw_parse_conf_default(&conf);
	conf.lift_proto = 143;
	conf.esp_udp_port = 4501;
	std::vector<sgw_pkt_info> info(3);
	sgw_burst_classes out = garbage_classes();
	sgw_classify_burst(&conf, b.ptrs.data(), b.lens.data(), 3, info.data(), &out);
	ASSERT_EQ(out.n[SGW_CLASS_LIFT], 1);
	EXPECT_EQ(out.idx[SGW_CLASS_LIFT][0], 0);
	ASSERT_EQ(out.n[SGW_CLASS_IP_OTHER], 1);
	EXPECT_EQ(out.idx[SGW_CLASS_IP_OTHER][0], 1);
	ASSERT_EQ(out.n[SGW_CLASS_ESP], 1);
	EXPECT_EQ(out.idx[SGW_CLASS_ESP][0], 2);
}

TEST(ClassifyBurst, OversizedBurstIsClampedNotOverrun)
{
	const int n = SGW_BURST_MAX + 3;
	Burst b;
	for (int i = 0; i < n; i++)
		b.add(eth(0x0800, ip4(6, tcp(1, 2))));
	std::vector<sgw_pkt_info> info(n);
	memset(&info[SGW_BURST_MAX], 0x5a, 3 * sizeof(sgw_pkt_info));
	sgw_burst_classes out = garbage_classes();
	sgw_classify_burst(nullptr, b.ptrs.data(), b.lens.data(), static_cast<uint16_t>(n),
			   info.data(), &out);
	EXPECT_EQ(out.n[SGW_CLASS_TCP], SGW_BURST_MAX);
	EXPECT_EQ(info[SGW_BURST_MAX].cls, 0x5a);  // not parsed
}

}  // namespace
