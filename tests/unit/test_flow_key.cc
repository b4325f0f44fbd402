/* SPDX-License-Identifier: BSD-3-Clause */
/* Flow keys, the symmetric address hash and the terminal shard function. */
#include <gtest/gtest.h>

#include <arpa/inet.h>

#include <cstring>
#include <random>
#include <set>

#include "sgw_flow_key.h"

namespace {

sgw_pkt_info
pkt(int ver, const char *src, const char *dst, uint8_t proto, uint16_t sp, uint16_t dp)
{
	sgw_pkt_info pi;
	memset(&pi, 0, sizeof(pi));
	pi.ip_ver = uint8_t(ver);
	inet_pton(ver == 4 ? AF_INET : AF_INET6, src, pi.src);
	inet_pton(ver == 4 ? AF_INET : AF_INET6, dst, pi.dst);
	pi.ip_proto = proto;
	pi.sport = sp;
	pi.dport = dp;
	return pi;
}

bool
same(const sgw_flow_key &x, const sgw_flow_key &y)
{
	return memcmp(&x, &y, sizeof(x)) == 0;
}

TEST(FlowKey, BothDirectionsGiveOneKey)
{
	for (int ver : {4, 6}) {
		const char *a = ver == 4 ? "198.51.100.7" : "2001:db8::7";
		const char *b = ver == 4 ? "10.20.1.5" : "2001:db8:1::5";
		sgw_pkt_info down = pkt(ver, a, b, 6, 443, 40000);
		sgw_pkt_info up = pkt(ver, b, a, 6, 40000, 443);
		sgw_flow_key k1, k2;
		int d1 = sgw_flow_key_from_info(&down, &k1);
		int d2 = sgw_flow_key_from_info(&up, &k2);
		EXPECT_TRUE(same(k1, k2)) << "v" << ver;
		EXPECT_NE(d1, d2);
		EXPECT_EQ(k1.family, ver);
		EXPECT_EQ(k1.proto, 6);
		/* a is the lower address */
		EXPECT_LE(memcmp(k1.a, k1.b, 16), 0);
	}
}

TEST(FlowKey, SameAddressesOrderByPort)
{
	sgw_pkt_info x = pkt(4, "10.0.0.1", "10.0.0.1", 17, 5000, 53);
	sgw_pkt_info y = pkt(4, "10.0.0.1", "10.0.0.1", 17, 53, 5000);
	sgw_flow_key k1, k2;
	EXPECT_EQ(sgw_flow_key_from_info(&x, &k1), 1);
	EXPECT_EQ(sgw_flow_key_from_info(&y, &k2), 0);
	EXPECT_TRUE(same(k1, k2));
	EXPECT_EQ(k1.a_port, 53);
}

TEST(FlowKey, DistinctFlowsDistinctKeys)
{
	sgw_flow_key k[5];
	sgw_pkt_info p[5] = {
		pkt(4, "10.0.0.1", "10.0.0.2", 6, 1, 2),
		pkt(4, "10.0.0.1", "10.0.0.2", 17, 1, 2),  /* other protocol */
		pkt(4, "10.0.0.1", "10.0.0.2", 6, 1, 3),   /* other port */
		pkt(4, "10.0.0.1", "10.0.0.3", 6, 1, 2),   /* other address */
		pkt(6, "::a00:1", "::a00:2", 6, 1, 2),     /* same bytes as v6: other family */
	};
	for (int i = 0; i < 5; i++)
		sgw_flow_key_from_info(&p[i], &k[i]);
	for (int i = 0; i < 5; i++)
		for (int j = i + 1; j < 5; j++)
			EXPECT_FALSE(same(k[i], k[j])) << i << " vs " << j;
}

TEST(FlowKey, EspIsKeyedBySpiOneWay)
{
	sgw_pkt_info out = pkt(4, "10.20.1.5", "198.51.100.7", 50, 0, 0);
	out.esp_spi = 0xc0de1234;
	sgw_pkt_info back = pkt(4, "198.51.100.7", "10.20.1.5", 50, 0, 0);
	back.esp_spi = 0x0badf00d;
	sgw_flow_key k1, k2;
	EXPECT_EQ(sgw_flow_key_from_info(&out, &k1), 0);
	EXPECT_EQ(sgw_flow_key_from_info(&back, &k2), 0);
	EXPECT_FALSE(same(k1, k2));
	EXPECT_EQ(k1.a_port, 0xc0de);
	EXPECT_EQ(k1.b_port, 0x1234);
	/* ESP in UDP 4500 is keyed as ESP too, by SPI, not by the UDP ports. */
	sgw_pkt_info natt = pkt(4, "10.20.1.5", "198.51.100.7", 17, 4500, 4500);
	natt.esp_in_udp = 1;
	natt.esp_spi = 0xc0de1234;
	sgw_flow_key k3;
	sgw_flow_key_from_info(&natt, &k3);
	EXPECT_TRUE(same(k1, k3));
}

TEST(FlowKey, PaddingIsAlwaysZero)
{
	sgw_flow_key k;
	memset(&k, 0xee, sizeof(k));
	sgw_pkt_info p = pkt(4, "10.0.0.1", "10.0.0.2", 6, 1, 2);
	sgw_flow_key_from_info(&p, &k);
	for (uint8_t byte : k.pad)
		EXPECT_EQ(byte, 0);
	for (int i = 4; i < 16; i++) {
		EXPECT_EQ(k.a[i], 0);
		EXPECT_EQ(k.b[i], 0);
	}
}

TEST(SymHash, SymmetricAndSpread)
{
	std::mt19937 rng(7);
	std::set<uint32_t> buckets;
	for (int i = 0; i < 2000; i++) {
		sgw_pkt_info p;
		memset(&p, 0, sizeof(p));
		p.ip_ver = uint8_t(i % 2 ? 4 : 6);
		for (int j = 0; j < (p.ip_ver == 4 ? 4 : 16); j++) {
			p.src[j] = uint8_t(rng());
			p.dst[j] = uint8_t(rng());
		}
		sgw_pkt_info q = p;
		memcpy(q.src, p.dst, 16);
		memcpy(q.dst, p.src, 16);
		ASSERT_EQ(sgw_sym_addr_hash(&p), sgw_sym_addr_hash(&q));
		buckets.insert(sgw_sym_addr_hash(&p) >> 28);
	}
	EXPECT_EQ(buckets.size(), 16u); /* the top bits (used to pick a worker) vary */
}

TEST(TerminalShard, InRangeStableAndBalanced)
{
	for (uint32_t nw : {1u, 2u, 3u, 8u, 64u}) {
		std::vector<int> count(nw, 0);
		for (uint32_t id = 0; id < 10000; id++) {
			uint32_t w = sgw_terminal_shard(id, nw);
			ASSERT_LT(w, nw);
			ASSERT_EQ(w, sgw_terminal_shard(id, nw));
			count[w]++;
		}
		for (uint32_t w = 0; w < nw; w++)
			EXPECT_GT(count[w], int(10000 / nw / 2)) << nw << " workers, worker " << w;
	}
}

} // namespace
