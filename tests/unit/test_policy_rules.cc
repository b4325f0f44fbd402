/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Tests of the policy model in lib/sgw_policy.c: prefix parse / format /
 * contains / overlap for IPv4 and IPv6, rule matching criterion by
 * criterion, first-match-wins lookup, non-IP keys, and a randomized check of
 * sgw_rules_lookup against a deliberately naive reference.
 */
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "sgw_policy.h"

namespace {

sgw_prefix
P(const char *s)
{
	sgw_prefix p;

	memset(&p, 0xa5, sizeof(p));
	int rc = sgw_prefix_parse(s, strlen(s), &p);
	EXPECT_EQ(rc, 0) << s;
	return p;
}

std::string
fmt(const sgw_prefix &p)
{
	char buf[SGW_PREFIX_STRLEN];

	if (sgw_prefix_format(&p, buf, sizeof(buf)) < 0)
		return "<error>";
	return buf;
}

/* ---------------------------------------------------------------- parse */

TEST(PrefixParse, Ipv4)
{
	sgw_prefix p = P("192.168.1.0/24");
	const uint8_t want[16] = { 192, 168, 1, 0 };

	EXPECT_EQ(p.family, 4);
	EXPECT_EQ(p.len, 24);
	EXPECT_EQ(0, memcmp(p.addr, want, 16)); /* bytes past the address are zero */

	p = P("0.0.0.0/0");
	EXPECT_EQ(p.len, 0);
	p = P("255.255.255.255/32");
	EXPECT_EQ(p.len, 32);
	EXPECT_EQ(p.addr[3], 255);
	p = P("10.0.0.0/8");
	EXPECT_EQ(p.addr[0], 10);
}

TEST(PrefixParse, Ipv6TextForms)
{
	struct {
		const char *text;
		uint8_t len;
		uint8_t addr[16];
	} cases[] = {
		{ "::/0", 0, {} },
		{ "::1/128", 128, { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1 } },
		{ "1::/16", 16, { 0, 1 } },
		{ "2001:db8::/32", 32, { 0x20, 0x01, 0x0d, 0xb8 } },
		{ "2001:DB8:0:0:8:800:200C:417A/128", 128,
		  { 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 8, 8, 0, 0x20, 0x0c, 0x41, 0x7a } },
		{ "2001:0db8:0000:0000:0000:0000:0000:0000/32", 32, { 0x20, 0x01, 0x0d, 0xb8 } },
		{ "1:2:3:4:5:6:7::/128", 128, { 0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0, 7, 0, 0 } },
		{ "::2:3:4:5:6:7:8/128", 128, { 0, 0, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0, 7, 0, 8 } },
		{ "1:2::7:8/128", 128, { 0, 1, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7, 0, 8 } },
		{ "::ffff:192.0.2.128/128", 128,
		  { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 0, 2, 128 } },
		{ "1:2:3:4:5:6:10.0.0.1/128", 128,
		  { 0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 10, 0, 0, 1 } },
		{ "::10.0.0.1/128", 128, { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 10, 0, 0, 1 } },
		{ "fe80::/10", 10, { 0xfe, 0x80 } },
	};

	for (const auto &c : cases) {
		sgw_prefix p = P(c.text);

		EXPECT_EQ(p.family, 6) << c.text;
		EXPECT_EQ(p.len, c.len) << c.text;
		EXPECT_EQ(0, memcmp(p.addr, c.addr, 16)) << c.text;
	}
}

TEST(PrefixParse, RejectsMalformed)
{
	const char *bad[] = {
		"", "/", "/8", "10.0.0.0", "10.0.0.0/", "10.0.0.0/33", "10.0.0.0/-1",
		"10.0.0.0/024", "10.0.0.0/8/8", "10.0.0/8", "10.0.0.0.0/8", "256.0.0.0/8",
		"01.0.0.0/8", "1000.0.0.0/8", " 10.0.0.0/8", "10.0.0.0/8 ", "10.0.0.0/8x",
		"0x0a.0.0.0/8", "+10.0.0.0/8", "10..0.0/8", "10.0.0.0/ 8", "10.0.0.0 /8",
		":::/0", "1::2::3/64", "1:2:3:4:5:6:7:8:9/128", "1:2:3:4:5:6:7/112",
		"12345::/16", "::g/128", ":1::/16", "1::2:/64", "1:2:3:4:5:6:7:8::/128",
		"::1:2:3:4:5:6:7:8/128", "::1.2.3.4.5/128", "::1.2.3/128", "1.2.3.4::/128",
		"::1.2.3.4:5/128", "::256.0.0.1/128", "1:2:3:4:5:6:7:1.2.3.4/128",
		"fe80::1%eth0/64", "2001:db8::/129", "[::1]/128", "::/", "2001:db8::/032",
		"1:/16", ":/0",
	};

	for (const char *s : bad) {
		sgw_prefix p;

		EXPECT_EQ(sgw_prefix_parse(s, strlen(s), &p), -1) << "'" << s << "'";
	}
}

TEST(PrefixParse, HostBitsSetIsMinusTwoWithTheFix)
{
	struct {
		const char *in, *fixed;
	} cases[] = {
		{ "10.0.0.1/24", "10.0.0.0/24" },
		{ "0.0.0.1/0", "0.0.0.0/0" },
		{ "10.255.0.0/9", "10.128.0.0/9" },
		{ "2001:db8::1/64", "2001:db8::/64" },
		{ "::1/127", "::/127" },
		{ "ff::/7", "::/7" },
		{ "2001:db8:0:0:8000::/64", "2001:db8::/64" },
	};

	for (const auto &c : cases) {
		sgw_prefix p;
		const char *why = nullptr;

		EXPECT_EQ(sgw_prefix_parse_ex(c.in, strlen(c.in), &p, &why), -2) << c.in;
		EXPECT_EQ(fmt(p), c.fixed) << c.in;
		EXPECT_STREQ(why, "host bits set");
	}
}

TEST(PrefixParse, HonoursLength)
{
	const char s[] = "10.0.0.0/8 trailing";
	sgw_prefix p;

	EXPECT_EQ(sgw_prefix_parse(s, 10, &p), 0);
	EXPECT_EQ(p.len, 8);
	EXPECT_EQ(sgw_prefix_parse(s, 9, &p), -1);  /* "10.0.0.0/": no length */
	EXPECT_EQ(sgw_prefix_parse(s, 11, &p), -1); /* "10.0.0.0/8 " */
}

/* --------------------------------------------------------------- format */

TEST(PrefixFormat, Rfc5952Canonical)
{
	struct {
		const char *in, *out;
	} cases[] = {
		{ "2001:0db8:0000:0000:0000:ff00:0042:8329/128", "2001:db8::ff00:42:8329/128" },
		{ "2001:db8:0:0:1:0:0:1/128", "2001:db8::1:0:0:1/128" },  /* tie: first run */
		{ "2001:0:0:1:0:0:0:1/128", "2001:0:0:1::1/128" },        /* longest run */
		{ "1:0:2:3:4:5:6:7/128", "1:0:2:3:4:5:6:7/128" },         /* one 0 stays */
		{ "1:2:3:4:5:6:7:0/128", "1:2:3:4:5:6:7:0/128" },
		{ "0:0:1::/48", "0:0:1::/48" },
		{ "::/0", "::/0" },
		{ "::1/128", "::1/128" },
		{ "1::/16", "1::/16" },
		{ "::ffff:10.0.0.1/128", "::ffff:a00:1/128" },
		{ "FE80::/10", "fe80::/10" },
		{ "10.0.0.0/8", "10.0.0.0/8" },
		{ "0.0.0.0/0", "0.0.0.0/0" },
	};

	for (const auto &c : cases)
		EXPECT_EQ(fmt(P(c.in)), c.out) << c.in;
}

TEST(PrefixFormat, BufferBoundsAndBadInput)
{
	sgw_prefix p = P("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff/128");
	char buf[SGW_PREFIX_STRLEN];

	EXPECT_EQ(sgw_prefix_format(&p, buf, sizeof(buf)), SGW_PREFIX_STRLEN - 1);
	EXPECT_EQ(sgw_prefix_format(&p, buf, sizeof(buf) - 1), -1);
	p = P("255.255.255.255/32");
	EXPECT_EQ(sgw_prefix_format(&p, buf, 19), 18);
	EXPECT_EQ(sgw_prefix_format(&p, buf, 18), -1);
	p.family = 5;
	EXPECT_EQ(sgw_prefix_format(&p, buf, sizeof(buf)), -1);
	p.family = 4;
	p.len = 33;
	EXPECT_EQ(sgw_prefix_format(&p, buf, sizeof(buf)), -1);
}

/* ------------------------------------------------------ contains/overlap */

struct Addr {
	uint8_t family;
	uint8_t b[16];
};

Addr
A(const char *s)
{
	std::string t = std::string(s) + (strchr(s, ':') ? "/128" : "/32");
	sgw_prefix p = P(t.c_str());
	Addr a;

	a.family = p.family;
	memcpy(a.b, p.addr, 16);
	return a;
}

bool
contains(const char *prefix, const char *addr)
{
	sgw_prefix p = P(prefix);
	Addr a = A(addr);

	return sgw_prefix_contains(&p, a.family, a.b);
}

TEST(PrefixContains, Ipv4)
{
	EXPECT_TRUE(contains("10.0.0.0/8", "10.255.255.255"));
	EXPECT_TRUE(contains("10.0.0.0/8", "10.0.0.0"));
	EXPECT_FALSE(contains("10.0.0.0/8", "11.0.0.0"));
	EXPECT_FALSE(contains("10.0.0.0/8", "9.255.255.255"));
	EXPECT_TRUE(contains("0.0.0.0/0", "255.1.2.3"));
	EXPECT_TRUE(contains("192.0.2.7/32", "192.0.2.7"));
	EXPECT_FALSE(contains("192.0.2.7/32", "192.0.2.6"));
	EXPECT_TRUE(contains("128.0.0.0/1", "200.0.0.1"));
	EXPECT_FALSE(contains("128.0.0.0/1", "127.255.255.255"));
	EXPECT_TRUE(contains("10.20.30.40/31", "10.20.30.41"));
	EXPECT_FALSE(contains("10.20.30.40/31", "10.20.30.42"));
}

TEST(PrefixContains, Ipv6)
{
	EXPECT_TRUE(contains("::/0", "ffff::1"));
	EXPECT_TRUE(contains("2001:db8::/32", "2001:db8:ffff::1"));
	EXPECT_FALSE(contains("2001:db8::/32", "2001:db9::"));
	EXPECT_TRUE(contains("2001:db8::/64", "2001:db8::ffff:ffff:ffff:ffff"));
	EXPECT_FALSE(contains("2001:db8::/64", "2001:db8:0:1::"));
	/* Across the 64-bit boundary. */
	EXPECT_TRUE(contains("2001:db8::8000:0:0:0/65", "2001:db8::ffff:0:0:1"));
	EXPECT_FALSE(contains("2001:db8::8000:0:0:0/65", "2001:db8::7fff:0:0:1"));
	EXPECT_TRUE(contains("::1/128", "::1"));
	EXPECT_FALSE(contains("::1/128", "::2"));
	EXPECT_FALSE(contains("::/127", "::2"));
	EXPECT_TRUE(contains("::/127", "::1"));
}

TEST(PrefixContains, FamilyMustMatch)
{
	/* 0.0.0.0/0 matches no IPv6 address, ::/0 no IPv4 one, whatever the bytes. */
	uint8_t zeros[16] = {};
	sgw_prefix v4 = P("0.0.0.0/0"), v6 = P("::/0");

	EXPECT_FALSE(sgw_prefix_contains(&v4, 6, zeros));
	EXPECT_FALSE(sgw_prefix_contains(&v6, 4, zeros));
	EXPECT_FALSE(sgw_prefix_contains(&v4, 0, zeros));
	EXPECT_TRUE(sgw_prefix_contains(&v4, 4, zeros));
}

TEST(PrefixOverlap, NestedDisjointAndFamilies)
{
	auto ov = [](const char *a, const char *b) {
		sgw_prefix x = P(a), y = P(b);
		bool r = sgw_prefix_overlap(&x, &y);

		EXPECT_EQ(r, sgw_prefix_overlap(&y, &x)) << a << " " << b; /* symmetric */
		return r;
	};

	EXPECT_TRUE(ov("10.0.0.0/8", "10.1.0.0/16"));
	EXPECT_TRUE(ov("10.1.0.0/16", "10.1.0.0/16"));
	EXPECT_FALSE(ov("10.0.0.0/8", "11.0.0.0/8"));
	EXPECT_TRUE(ov("0.0.0.0/0", "203.0.113.9/32"));
	EXPECT_FALSE(ov("10.1.0.0/25", "10.1.0.128/25"));
	EXPECT_TRUE(ov("10.1.0.0/24", "10.1.0.128/25"));
	EXPECT_FALSE(ov("0.0.0.0/0", "::/0"));
	EXPECT_TRUE(ov("::/0", "2001:db8::/32"));
	EXPECT_TRUE(ov("2001:db8::/64", "2001:db8::8000:0:0:0/65"));
	EXPECT_FALSE(ov("2001:db8::/64", "2001:db8:0:1::/64"));
	EXPECT_TRUE(ov("::1/128", "::1/128"));
	EXPECT_FALSE(ov("::1/128", "::/128"));
}

/* --------------------------------------------------------------- rules */

struct Key {
	sgw_match_key k;
	Addr src, dst;

	Key(const char *s = "10.0.0.1", const char *d = "192.0.2.1", uint8_t proto = 6)
	{
		memset(&k, 0, sizeof(k));
		src = A(s);
		dst = A(d);
		k.in_port = 0;
		k.terminal = -1;
		k.family = src.family;
		k.proto = proto;
		k.src = src.b;
		k.dst = dst.b;
	}
	Key &ports(uint16_t s, uint16_t d)
	{
		k.has_ports = 1;
		k.sport = s;
		k.dport = d;
		return *this;
	}
	/* Points k at this object's addresses, wherever copies have been made. */
	const sgw_match_key *key()
	{
		k.src = src.b;
		k.dst = dst.b;
		return &k;
	}
};

sgw_rule
R()
{
	sgw_rule r;

	sgw_rule_init(&r);
	return r;
}

bool
M(const sgw_rule &r, Key k)
{
	return sgw_rule_matches(&r, k.key());
}

TEST(RuleMatch, InitMeansAny)
{
	sgw_rule r = R();
	Key k;

	EXPECT_EQ(r.in_port, -1);
	EXPECT_EQ(r.terminal, -1);
	EXPECT_EQ(r.next_hop, -1);
	EXPECT_TRUE(M(r, k));
	k.k.family = 0; /* ARP: an empty rule still matches */
	EXPECT_TRUE(M(r, k));
}

TEST(RuleMatch, InPort)
{
	sgw_rule r = R();
	Key k;

	r.in_port = 2;
	EXPECT_FALSE(M(r, k));
	k.k.in_port = 2;
	EXPECT_TRUE(M(r, k));
	k.k.family = 0; /* in_port is not an L3 criterion */
	EXPECT_TRUE(M(r, k));
}

TEST(RuleMatch, Terminal)
{
	sgw_rule r = R();
	Key k;

	r.terminal = 0;
	EXPECT_FALSE(M(r, k)); /* key belongs to no terminal */
	k.k.terminal = 1;
	EXPECT_FALSE(M(r, k));
	k.k.terminal = 0;
	EXPECT_TRUE(M(r, k));
}

TEST(RuleMatch, SrcAndDstPrefixes)
{
	sgw_rule r = R();

	r.n_src = 2;
	r.src[0] = P("10.0.0.0/8");
	r.src[1] = P("2001:db8::/32");
	EXPECT_TRUE(M(r, Key("10.9.9.9")));
	EXPECT_FALSE(M(r, Key("11.0.0.1")));
	EXPECT_TRUE(M(r, Key("2001:db8::5", "2001:db8::6")));
	EXPECT_FALSE(M(r, Key("2001:db9::5", "2001:db8::6")));

	sgw_rule d = R();
	d.n_dst = 1;
	d.dst[0] = P("192.0.2.0/24");
	EXPECT_TRUE(M(d, Key("1.1.1.1", "192.0.2.200")));
	EXPECT_FALSE(M(d, Key("192.0.2.200", "1.1.1.1")));
	/* An IPv4 prefix never matches an IPv6 key with the same leading bytes. */
	d.dst[0] = P("0.0.0.0/0");
	EXPECT_FALSE(M(d, Key("::1", "::2")));
}

TEST(RuleMatch, ProtoList)
{
	sgw_rule r = R();

	r.n_proto = 2;
	r.proto[0] = 17;
	r.proto[1] = 50;
	EXPECT_FALSE(M(r, Key("10.0.0.1", "10.0.0.2", 6)));
	EXPECT_TRUE(M(r, Key("10.0.0.1", "10.0.0.2", 17)));
	EXPECT_TRUE(M(r, Key("10.0.0.1", "10.0.0.2", 50)));
}

TEST(RuleMatch, PortRangesNeedPorts)
{
	sgw_rule r = R();
	Key k;

	r.n_dport = 2;
	r.dport[0] = { 80, 80 };
	r.dport[1] = { 8000, 8080 };
	EXPECT_FALSE(M(r, k)); /* no ports in the key (ICMP, fragment) */
	EXPECT_TRUE(M(r, Key(k).ports(1, 80)));
	EXPECT_TRUE(M(r, Key(k).ports(1, 8000)));
	EXPECT_TRUE(M(r, Key(k).ports(1, 8080)));
	EXPECT_FALSE(M(r, Key(k).ports(1, 8081)));
	EXPECT_FALSE(M(r, Key(k).ports(80, 79)));

	sgw_rule s = R();
	s.n_sport = 1;
	s.sport[0] = { 0, 1023 };
	EXPECT_TRUE(M(s, Key(k).ports(1023, 9)));
	EXPECT_FALSE(M(s, Key(k).ports(1024, 9)));
	EXPECT_FALSE(M(s, k));
}

TEST(RuleMatch, SpiRangesNeedSpi)
{
	sgw_rule r = R();
	Key k("10.0.0.1", "10.0.0.2", 50);

	r.n_spi = 2;
	r.spi[0] = { 0x1000, 0x1fff };
	r.spi[1] = { 0xffffffff, 0xffffffff };
	k.k.spi = 0x1000;
	EXPECT_FALSE(M(r, k)); /* has_spi not set */
	k.k.has_spi = 1;
	EXPECT_TRUE(M(r, k));
	k.k.spi = 0x1fff;
	EXPECT_TRUE(M(r, k));
	k.k.spi = 0x2000;
	EXPECT_FALSE(M(r, k));
	k.k.spi = 0xffffffff;
	EXPECT_TRUE(M(r, k));
}

TEST(RuleMatch, DscpMask)
{
	sgw_rule r = R();
	Key k;

	r.dscp_mask = 1ull << 46 | 1ull << 0 | 1ull << 63;
	k.k.dscp = 46;
	EXPECT_TRUE(M(r, k));
	k.k.dscp = 0;
	EXPECT_TRUE(M(r, k));
	k.k.dscp = 63;
	EXPECT_TRUE(M(r, k));
	k.k.dscp = 45;
	EXPECT_FALSE(M(r, k));
}

TEST(RuleMatch, NonIpKeysMissEveryL3Criterion)
{
	Key k;
	k.k.family = 0;
	k.k.has_ports = 1;
	k.k.has_spi = 1;

	std::vector<sgw_rule> rules(7, R());
	rules[0].n_src = 1;
	rules[0].src[0] = P("0.0.0.0/0");
	rules[1].n_dst = 1;
	rules[1].dst[0] = P("::/0");
	rules[2].n_proto = 1;
	rules[2].proto[0] = 0;
	rules[3].n_sport = 1;
	rules[3].sport[0] = { 0, 65535 };
	rules[4].n_dport = 1;
	rules[4].dport[0] = { 0, 65535 };
	rules[5].n_spi = 1;
	rules[5].spi[0] = { 0, 0xffffffff };
	rules[6].dscp_mask = ~0ull;
	for (size_t i = 0; i < rules.size(); i++) {
		EXPECT_FALSE(M(rules[i], k)) << "criterion " << i;
		/* ...while the same rule matches an IP key that has everything. */
		Key ip("10.0.0.1", "10.0.0.2", 0);
		ip.k.has_ports = ip.k.has_spi = 1;
		if (i == 1) {
			ip = Key("::1", "::2", 0);
			ip.k.has_ports = ip.k.has_spi = 1;
		}
		EXPECT_TRUE(M(rules[i], ip)) << "criterion " << i;
	}
}

TEST(RuleMatch, AllCriteriaTogether)
{
	sgw_rule r = R();

	r.in_port = 1;
	r.terminal = 7;
	r.n_src = 1;
	r.src[0] = P("10.20.0.0/16");
	r.n_dst = 1;
	r.dst[0] = P("198.51.100.0/24");
	r.n_proto = 1;
	r.proto[0] = 17;
	r.n_sport = 1;
	r.sport[0] = { 5060, 5061 };
	r.n_dport = 1;
	r.dport[0] = { 10000, 20000 };
	r.n_spi = 1;
	r.spi[0] = { 1, 1 };
	r.dscp_mask = 1ull << 46;

	Key good("10.20.1.2", "198.51.100.9", 17);
	good.ports(5060, 15000);
	good.k.in_port = 1;
	good.k.terminal = 7;
	good.k.has_spi = 1;
	good.k.spi = 1;
	good.k.dscp = 46;
	ASSERT_TRUE(M(r, good));

	/* Break one criterion at a time: each must be enough to miss. */
	std::vector<Key> bad(10, good);
	bad[0].k.in_port = 0;
	bad[1].k.terminal = 8;
	bad[2].src.b[1] = 21;
	bad[3].dst.b[2] = 101;
	bad[4].k.proto = 6;
	bad[5].k.sport = 5062;
	bad[6].k.dport = 9999;
	bad[7].k.spi = 2;
	bad[8].k.dscp = 0;
	bad[9].k.family = 0;
	for (size_t i = 0; i < bad.size(); i++)
		EXPECT_FALSE(M(r, bad[i])) << "broken criterion " << i;
}

TEST(RulesLookup, FirstMatchWins)
{
	sgw_policy p;
	sgw_rule rules[3] = { R(), R(), R() };

	sgw_policy_init_defaults(&p);
	EXPECT_EQ(sgw_rules_lookup(&p, Key().key()), -1); /* no rules */

	rules[0].n_proto = 1;
	rules[0].proto[0] = 6;
	rules[0].n_dport = 1;
	rules[0].dport[0] = { 23, 23 };
	rules[0].action = SGW_ACT_DROP;
	rules[1].n_proto = 1;
	rules[1].proto[0] = 6;
	rules[2].n_proto = 1;
	rules[2].proto[0] = 17;
	p.rules = rules;
	p.n_rules = 3;

	EXPECT_EQ(sgw_rules_lookup(&p, Key().ports(1000, 23).key()), 0);
	EXPECT_EQ(sgw_rules_lookup(&p, Key().ports(1000, 80).key()), 1);
	EXPECT_EQ(sgw_rules_lookup(&p, Key("10.0.0.1", "10.0.0.2", 17).key()), 2);
	EXPECT_EQ(sgw_rules_lookup(&p, Key("10.0.0.1", "10.0.0.2", 1).key()), -1);

	/* Swap: the general rule now shadows the specific one. */
	std::swap(rules[0], rules[1]);
	EXPECT_EQ(sgw_rules_lookup(&p, Key().ports(1000, 23).key()), 0);
	p.rules = nullptr;
	p.n_rules = 0;
}

TEST(PolicyDefaults, InitAndFree)
{
	sgw_policy p;

	memset(&p, 0, sizeof(p));
	sgw_policy_free(&p); /* zeroed: harmless */
	sgw_policy_init_defaults(&p);
	EXPECT_EQ(p.lift_proto, 253);
	EXPECT_EQ(p.xcp_proto, 254);
	EXPECT_EQ(p.default_action, SGW_ACT_FORWARD);
	EXPECT_EQ(p.malformed, SGW_MALFORMED_DROP);
	EXPECT_EQ(p.limits.flows_per_core, 65536u);
	EXPECT_EQ(p.limits.mbufs, 16383u);
	EXPECT_EQ(p.limits.mbuf_cache, 256u);
	EXPECT_EQ(p.limits.ring_size, 4096u);
	EXPECT_EQ(p.limits.flow_idle_ms, 120000u);
	EXPECT_EQ(p.limits.timers_per_core, 65536u);
	EXPECT_EQ(p.workers.idle_backoff_us, 100u);
	EXPECT_EQ(p.workers.idle_sleep_us, 50u);
	EXPECT_EQ(p.workers.burst, 32);
	EXPECT_EQ(p.workers.tx_drain_us, 100);
	EXPECT_EQ(p.workers.timer_tick_us, 100u);
	p.rules = (sgw_rule *)calloc(2, sizeof(sgw_rule));
	p.n_rules = 2;
	p.terminals = (sgw_terminal *)calloc(2, sizeof(sgw_terminal));
	p.n_terminals = 2;
	sgw_policy_free(&p);
	EXPECT_EQ(p.rules, nullptr);
	EXPECT_EQ(p.n_rules, 0u);
	EXPECT_EQ(p.terminals, nullptr);
	sgw_policy_free(&p); /* twice: harmless */
}

TEST(PolicyNames, AllNamed)
{
	EXPECT_STREQ(sgw_action_name(SGW_ACT_FORWARD), "forward");
	EXPECT_STREQ(sgw_action_name(SGW_ACT_XCP), "xcp");
	EXPECT_STREQ(sgw_action_name(SGW_ACT__COUNT), "?");
	EXPECT_TRUE(sgw_action_built(SGW_ACT_COUNT));
	EXPECT_TRUE(sgw_action_built(SGW_ACT_SPLIT));
	EXPECT_FALSE(sgw_action_built(SGW_ACT_LIFT));
	EXPECT_STREQ(sgw_role_name(SGW_ROLE_EMULATOR), "emulator");
	EXPECT_STREQ(sgw_port_role_name(SGW_PORT_LAN), "lan");
}

/* ------------------------------------------------ randomized reference */

/* Bit by bit, nothing shared with the library's word-at-a-time code. */
bool
ref_in_prefix(const sgw_prefix &p, uint8_t family, const uint8_t *a)
{
	if (p.family != family)
		return false;
	for (unsigned i = 0; i < p.len; i++) {
		unsigned byte = i / 8, bit = 7 - i % 8;

		if (((a[byte] >> bit) & 1) != ((p.addr[byte] >> bit) & 1))
			return false;
	}
	return true;
}

bool
ref_matches(const sgw_rule &r, const sgw_match_key &k)
{
	bool l3 = r.n_src || r.n_dst || r.n_proto || r.n_sport || r.n_dport || r.n_spi ||
		r.dscp_mask;

	if (r.in_port != -1 && r.in_port != k.in_port)
		return false;
	if (r.terminal != -1 && r.terminal != k.terminal)
		return false;
	if (!l3)
		return true;
	if (k.family != 4 && k.family != 6)
		return false;
	auto any = [](unsigned n, auto pred) {
		for (unsigned i = 0; i < n; i++)
			if (pred(i))
				return true;
		return n == 0;
	};
	return any(r.n_src, [&](unsigned i) {
			   return ref_in_prefix(r.src[i], k.family, k.src); }) &&
		any(r.n_dst, [&](unsigned i) {
			return ref_in_prefix(r.dst[i], k.family, k.dst); }) &&
		any(r.n_proto, [&](unsigned i) { return r.proto[i] == k.proto; }) &&
		(r.n_sport == 0 || (k.has_ports && any(r.n_sport, [&](unsigned i) {
			 return r.sport[i].lo <= k.sport && k.sport <= r.sport[i].hi; }))) &&
		(r.n_dport == 0 || (k.has_ports && any(r.n_dport, [&](unsigned i) {
			 return r.dport[i].lo <= k.dport && k.dport <= r.dport[i].hi; }))) &&
		(r.n_spi == 0 || (k.has_spi && any(r.n_spi, [&](unsigned i) {
			 return r.spi[i].lo <= k.spi && k.spi <= r.spi[i].hi; }))) &&
		(r.dscp_mask == 0 || ((r.dscp_mask >> k.dscp) & 1));
}

TEST(RulesLookup, RandomizedAgainstReference)
{
	std::mt19937 rng(20240607);
	auto rnd = [&](uint32_t n) { return (uint32_t)(rng() % n); };
	/* Small value pools, so rules and keys collide often. */
	auto rand_addr = [&](uint8_t family, uint8_t *a) {
		memset(a, 0, 16);
		a[0] = (uint8_t)(family == 4 ? 10 : 0x20);
		a[1] = (uint8_t)rnd(3);
		a[2] = (uint8_t)(rnd(2) ? 0 : rng());
		a[3] = (uint8_t)rng();
		if (family == 6) {
			a[8] = (uint8_t)rnd(2);
			a[15] = (uint8_t)rng();
		}
	};
	auto rand_prefix = [&](sgw_prefix &p) {
		uint8_t a[16];

		p.family = rnd(3) ? 4 : 6;
		p.len = (uint8_t)rnd(p.family == 4 ? 33 : 129);
		rand_addr(p.family, a);
		memset(p.addr, 0, 16);
		for (unsigned i = 0; i < p.len; i++)
			p.addr[i / 8] |= a[i / 8] & (0x80 >> (i % 8));
	};
	size_t matched = 0, total = 0;

	for (int iter = 0; iter < 400; iter++) {
		std::vector<sgw_rule> rules(1 + rnd(40));
		for (auto &r : rules) {
			sgw_rule_init(&r);
			if (rnd(4) == 0)
				r.in_port = (int16_t)rnd(3);
			if (rnd(4) == 0)
				r.terminal = (int32_t)rnd(3);
			if (rnd(3) == 0) {
				r.n_src = (uint8_t)(1 + rnd(3));
				for (unsigned i = 0; i < r.n_src; i++)
					rand_prefix(r.src[i]);
			}
			if (rnd(3) == 0) {
				r.n_dst = (uint8_t)(1 + rnd(3));
				for (unsigned i = 0; i < r.n_dst; i++)
					rand_prefix(r.dst[i]);
			}
			if (rnd(3) == 0) {
				r.n_proto = (uint8_t)(1 + rnd(3));
				for (unsigned i = 0; i < r.n_proto; i++)
					r.proto[i] = (uint8_t)(rnd(2) ? 6 : 17 + rnd(40));
			}
			auto ranges16 = [&](uint8_t &n, sgw_range16 *r16) {
				n = (uint8_t)(1 + rnd(3));
				for (unsigned i = 0; i < n; i++) {
					r16[i].lo = (uint16_t)rnd(2000);
					r16[i].hi = (uint16_t)(r16[i].lo + rnd(500));
				}
			};
			if (rnd(4) == 0)
				ranges16(r.n_sport, r.sport);
			if (rnd(4) == 0)
				ranges16(r.n_dport, r.dport);
			if (rnd(6) == 0) {
				r.n_spi = (uint8_t)(1 + rnd(2));
				for (unsigned i = 0; i < r.n_spi; i++) {
					r.spi[i].lo = rnd(3000);
					r.spi[i].hi = r.spi[i].lo + rnd(3000);
				}
			}
			if (rnd(5) == 0)
				r.dscp_mask = (uint64_t)rng() << 32 | rng();
			/* Catch-all rules end the search: keep them rare. */
			if (r.in_port < 0 && r.terminal < 0 && !r.n_src && !r.n_dst &&
			    !r.n_proto && !r.n_sport && !r.n_dport && !r.n_spi && !r.dscp_mask &&
			    rnd(16)) {
				r.n_dport = 1;
				r.dport[0].lo = r.dport[0].hi = (uint16_t)rnd(2500);
			}
		}
		sgw_policy p;
		sgw_policy_init_defaults(&p);
		p.rules = rules.data();
		p.n_rules = (uint32_t)rules.size();

		for (int q = 0; q < 100; q++) {
			uint8_t src[16], dst[16];
			sgw_match_key k;

			memset(&k, 0, sizeof(k));
			k.in_port = (int16_t)rnd(3);
			k.terminal = (int32_t)rnd(4) - 1;
			k.family = (uint8_t)(rnd(10) == 0 ? 0 : rnd(3) ? 4 : 6);
			rand_addr(k.family == 6 ? 6 : 4, src);
			rand_addr(k.family == 6 ? 6 : 4, dst);
			k.src = src;
			k.dst = dst;
			k.proto = (uint8_t)(rnd(2) ? 6 : 17 + rnd(40));
			k.dscp = (uint8_t)rnd(64);
			k.has_ports = (uint8_t)rnd(2);
			k.sport = (uint16_t)rnd(2500);
			k.dport = (uint16_t)rnd(2500);
			k.has_spi = (uint8_t)rnd(2);
			k.spi = rnd(6000);

			int32_t want = -1;
			for (size_t i = 0; i < rules.size(); i++) {
				bool m = ref_matches(rules[i], k);

				ASSERT_EQ(sgw_rule_matches(&rules[i], &k), m)
					<< "iter " << iter << " query " << q << " rule " << i;
				if (m && want < 0)
					want = (int32_t)i;
			}
			ASSERT_EQ(sgw_rules_lookup(&p, &k), want) << "iter " << iter;
			matched += want >= 0;
			total++;
		}
		p.rules = nullptr;
		p.n_rules = 0;
	}
	/* The pools must give both outcomes plenty of exercise. */
	EXPECT_GT(matched, total / 5) << matched << "/" << total;
	EXPECT_LT(matched, total * 4 / 5) << matched << "/" << total;
}

} /* namespace */
