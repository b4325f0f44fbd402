/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The policy's xcp section (control/policy_xcp.c): defaults from lib/sgw_xcp.h,
 * values, and every refusal with its FILE:LINE:COLUMN.
 */
#include <gtest/gtest.h>

#include <string>

#include "policy_yaml.h"
#include "sgw_policy.h"
#include "sgw_xcp.h"

namespace {

struct Loaded {
	sgw_policy p{};
	sgw_cfg_errors errs{};
	int rc;

	explicit Loaded(const std::string &text)
	{
		rc = sgw_policy_load_buffer("x.yaml", text.data(), text.size(), &p, &errs);
	}
	~Loaded() { sgw_policy_free(&p); }
	std::string errors() const
	{
		std::string s;
		for (uint32_t i = 0; i < errs.n; i++)
			s += std::to_string(errs.e[i].line) + ":" + std::to_string(errs.e[i].col) +
			     ": " + errs.e[i].msg + "\n";
		return s;
	}
};

/* A hub with satlink (with_satlink) and the given tail; the tail starts at line 11 or 9. */
std::string
hub(const std::string &tail, bool with_satlink = true, const std::string &role = "hub")
{
	std::string s = "version: 1\nrole: " + role + "\nports:\n"
			"  - {name: terr, device: d0, role: terrestrial, peer: sat}\n"
			"  - {name: sat, device: d1, role: satellite, peer: terr}\n"
			"terminals:\n"
			"  - {name: site-a, id: 1001, prefixes: [10.20.1.0/24]}\n";
	if (with_satlink)
		s += "satlink: {port: sat, forward_rate_bps: 20000000, return_rate_bps: 2000000}\n"
		     "protocols: {lift: 253}\n";
	return s + tail;
}

void
expect_one(const Loaded &l, uint32_t line, uint32_t col, const std::string &msg)
{
	ASSERT_EQ(l.rc, -1);
	ASSERT_EQ(l.errs.n, 1u) << l.errors();
	EXPECT_EQ(l.errs.e[0].line, line) << l.errors();
	EXPECT_EQ(l.errs.e[0].col, col) << l.errors();
	EXPECT_EQ(std::string(l.errs.e[0].msg), msg);
}

TEST(PolicyXcp, AbsentIsOffWithLibDefaults)
{
	Loaded l(hub(""));
	ASSERT_EQ(l.rc, 0) << l.errors();
	EXPECT_FALSE(l.p.xcp.enabled);
	sgw_xcp_conf c;
	sgw_xcp_conf_default(&c);
	EXPECT_EQ(l.p.xcp.protocol, 254);
	EXPECT_EQ(l.p.xcp.capacity_bps, 0u);
	EXPECT_DOUBLE_EQ(l.p.xcp.alpha, c.alpha);
	EXPECT_DOUBLE_EQ(l.p.xcp.beta, c.beta);
	EXPECT_DOUBLE_EQ(l.p.xcp.gamma, c.gamma);
	EXPECT_EQ(uint64_t(l.p.xcp.interval_min_us) * 1000u, c.d_min_ns);
	EXPECT_EQ(uint64_t(l.p.xcp.interval_init_ms) * 1000000u, c.d_init_ns);
	EXPECT_EQ(uint64_t(l.p.xcp.rtt_max_ms) * 1000000u, c.rtt_max_ns);
}

TEST(PolicyXcp, EmptyMapIsOnAndValuesAreTaken)
{
	Loaded e(hub("xcp: {}\n"));
	ASSERT_EQ(e.rc, 0) << e.errors();
	EXPECT_TRUE(e.p.xcp.enabled);

	Loaded l(hub("xcp:\n  enabled: true\n  protocol: 254\n  capacity_bps: 15000000\n"
		     "  alpha: 0.3\n  beta: 0.127\n  gamma: 0\n  interval_min_us: 500\n"
		     "  interval_init_ms: 700\n  rtt_max_ms: 20000\n"));
	ASSERT_EQ(l.rc, 0) << l.errors();
	EXPECT_TRUE(l.p.xcp.enabled);
	EXPECT_EQ(l.p.xcp.capacity_bps, 15000000u);
	EXPECT_DOUBLE_EQ(l.p.xcp.alpha, 0.3);
	EXPECT_DOUBLE_EQ(l.p.xcp.beta, 0.127);
	EXPECT_DOUBLE_EQ(l.p.xcp.gamma, 0.0);
	EXPECT_EQ(l.p.xcp.interval_min_us, 500u);
	EXPECT_EQ(l.p.xcp.interval_init_ms, 700u);
	EXPECT_EQ(l.p.xcp.rtt_max_ms, 20000u);

	Loaded off(hub("xcp: {enabled: false}\n", false));
	ASSERT_EQ(off.rc, 0) << off.errors();  // off: no satlink needed
	EXPECT_FALSE(off.p.xcp.enabled);
}

TEST(PolicyXcp, ProtocolFollowsProtocolsSection)
{
	std::string base = "version: 1\nrole: hub\nports:\n"
			   "  - {name: sat, device: d1, role: satellite}\n"
			   "terminals: [{name: a, id: 1, prefixes: [10.0.0.0/24]}]\n"
			   "satlink: {port: sat, forward_rate_bps: 2000000, "
			   "return_rate_bps: 2000000}\n";
	Loaded l(base + "protocols: {xcp: 200}\nxcp: {protocol: 200}\n");
	ASSERT_EQ(l.rc, 0) << l.errors();
	EXPECT_EQ(l.p.xcp.protocol, 200);
	EXPECT_EQ(l.p.xcp_proto, 200);
	expect_one(Loaded(base + "protocols: {xcp: 200}\nxcp: {protocol: 201}\n"), 8, 17,
		   "xcp 'protocol' 201 differs from 'protocols: xcp' (200): the parser "
		   "classifies XCP by that one; give one number");
	expect_one(Loaded(base + "xcp: {protocol: 201}\n"), 7, 17,
		   "xcp 'protocol' 201 differs from the number the parser reserves for XCP "
		   "(254): set 'protocols: xcp' to 201 instead");
}

TEST(PolicyXcp, Refusals)
{
	/* The xcp section starts at line 10 (with satlink). */
	expect_one(Loaded(hub("xcp:\n  alpha: 0.6\n")), 11, 10,
		   "'alpha' 0.6 is out of range (must be more than 0 and at most 0.55)");
	expect_one(Loaded(hub("xcp:\n  alpha: 0\n")), 11, 10,
		   "'alpha' 0 is out of range (must be more than 0 and at most 0.55)");
	expect_one(Loaded(hub("xcp:\n  beta: -1\n")), 11, 9,
		   "'beta' must be a decimal number like 0.4 (got '-1')");
	expect_one(Loaded(hub("xcp:\n  gamma: 1.5\n")), 11, 10,
		   "'gamma' 1.5 is out of range (must be at least 0 and at most 1)");
	expect_one(Loaded(hub("xcp:\n  rtt_max_ms: 500\n")), 11, 15,
		   "'rtt_max_ms' 500 is out of range 1000..60000");
	expect_one(Loaded(hub("xcp:\n  interval_init_ms: 20000\n")), 11, 21,
		   "'interval_init_ms' 20000 must be at most 'rtt_max_ms' (10000)");
	expect_one(Loaded(hub("xcp:\n  interval_min_us: 200000\n")), 11, 20,
		   "'interval_min_us' 200000 must be at most 'interval_init_ms' (100 ms)");
	expect_one(Loaded(hub("xcp:\n  capacity_bps: 10\n")), 11, 17,
		   "'capacity_bps' 10 is out of range 1000..400000000000");
	expect_one(Loaded(hub("xcp:\n  capcity_bps: 10\n")), 11, 3,
		   "unknown key 'capcity_bps' in xcp (did you mean 'capacity_bps'?)");
	/* No satlink: the shaper needs its port and its rate. */
	Loaded ns(hub("xcp: {}\n", false));
	ASSERT_EQ(ns.rc, -1);
	ASSERT_EQ(ns.errs.n, 2u) << ns.errors();
	EXPECT_EQ(std::string(ns.errs.e[0].msg),
		  "'xcp' without 'satlink' needs 'port': the satellite port whose egress its "
		  "shaper owns");
	EXPECT_EQ(std::string(ns.errs.e[1].msg),
		  "'xcp' without 'satlink' needs 'capacity_bps': the rate its egress shaper "
		  "sends at");
	EXPECT_EQ(ns.errs.e[1].line, 8u);
	EXPECT_EQ(ns.errs.e[1].col, 1u);
	expect_one(Loaded(hub("xcp: {port: terr, capacity_bps: 8000000}\n", false)), 8, 13,
		   "xcp port 'terr' has role terrestrial: the XCP controller runs at a port "
		   "whose role is satellite");
	expect_one(Loaded(hub("xcp: {shaper_queue: 10}\n")), 10, 21,
		   "'shaper_queue' is for the egress shaper, which runs without satlink (with "
		   "it, satlink's send_queue holds the packets)");
	/* A top-level key of the section gets the hint. */
	Loaded t(hub("rtt_max_ms: 2000\n"));
	ASSERT_EQ(t.rc, -1);
	ASSERT_EQ(t.errs.n, 1u) << t.errors();
	EXPECT_NE(std::string(t.errs.e[0].msg).find("xcp"), std::string::npos) << t.errors();
}

TEST(PolicyXcp, WithoutSatlinkTheShaperTakesPortAndRate)
{
	Loaded l(hub("xcp: {port: sat, capacity_bps: 8000000, shaper_queue: 300}\n", false));
	ASSERT_EQ(l.rc, 0) << l.errors();
	EXPECT_TRUE(l.p.xcp.enabled);
	EXPECT_EQ(l.p.xcp.port, 1);
	EXPECT_EQ(l.p.xcp.capacity_bps, 8000000u);
	EXPECT_EQ(l.p.xcp.shaper_queue, 300u);
	Loaded d(hub("xcp: {port: sat, capacity_bps: 8000000}\n", false));
	ASSERT_EQ(d.rc, 0) << d.errors();
	EXPECT_EQ(d.p.xcp.shaper_queue, 1024u);
	/* With satlink the port is satlink's. */
	Loaded w(hub("xcp: {}\n"));
	ASSERT_EQ(w.rc, 0) << w.errors();
	EXPECT_EQ(w.p.xcp.port, 1);
}

TEST(PolicyXcp, EmulatorRefusesIt)
{
	Loaded l("version: 1\nrole: emulator\nports:\n"
		 "  - {name: a, device: d0, role: terrestrial}\n"
		 "  - {name: b, device: d1, role: satellite}\n"
		 "link: {forward: {rate_bps: 1000000, delay_ms: 270}, "
		 "return: {rate_bps: 1000000, delay_ms: 270}}\n"
		 "xcp: {}\n");
	ASSERT_EQ(l.rc, -1);
	bool found = false;
	for (uint32_t i = 0; i < l.errs.n; i++)
		if (std::string(l.errs.e[i].msg).find("'xcp' is only used by roles hub and "
						      "terminal") == 0) {
			found = true;
			EXPECT_EQ(l.errs.e[i].line, 7u);
			EXPECT_EQ(l.errs.e[i].col, 1u);
		}
	EXPECT_TRUE(found) << l.errors();
}

TEST(PolicyXcp, LegacyModeKeys)
{
	/* Off by default, 4096 flows per worker. */
	Loaded d(hub("xcp: {}\n"));
	ASSERT_EQ(d.rc, 0) << d.errors();
	EXPECT_FALSE(d.p.xcp.legacy);
	EXPECT_EQ(d.p.xcp.legacy_max_flows, 4096u);
	Loaded l(hub("xcp:\n  legacy: true\n  legacy_max_flows: 512\n"));
	ASSERT_EQ(l.rc, 0) << l.errors();
	EXPECT_TRUE(l.p.xcp.legacy);
	EXPECT_EQ(l.p.xcp.legacy_max_flows, 512u);
	Loaded f(hub("xcp: {legacy: false}\n"));
	ASSERT_EQ(f.rc, 0) << f.errors();
	EXPECT_FALSE(f.p.xcp.legacy);
	/* Refusals, at the value (the section starts at line 10). */
	expect_one(Loaded(hub("xcp:\n  legacy: maybe\n")), 11, 11,
		   "'legacy' must be true or false (got 'maybe')");
	expect_one(Loaded(hub("xcp:\n  legacy_max_flows: 4\n")), 11, 21,
		   "'legacy_max_flows' 4 is out of range 8..1048576");
	expect_one(Loaded(hub("xcp:\n  legacy_max_flows: 2000000\n")), 11, 21,
		   "'legacy_max_flows' 2000000 is out of range 8..1048576");
	expect_one(Loaded(hub("xcp:\n  legacy_max_flow: 64\n")), 11, 3,
		   "unknown key 'legacy_max_flow' in xcp (did you mean 'legacy_max_flows'?)");
}

TEST(PolicyXcp, SeparateQueuesKeys)
{
	/* Off by default; gain 0.5 and floor 0.02 (lib/sgw_xcp_wq.h's). */
	Loaded d(hub("xcp: {port: sat, capacity_bps: 8000000}\n", false));
	ASSERT_EQ(d.rc, 0) << d.errors();
	EXPECT_FALSE(d.p.xcp.separate_queues);
	EXPECT_EQ(d.p.xcp.queue_weight_gain, 0.5);
	EXPECT_EQ(d.p.xcp.queue_weight_min, 0.02);
	Loaded l(hub("xcp: {port: sat, capacity_bps: 8000000, separate_queues: true, "
		     "queue_weight_gain: 0.25, queue_weight_min: 0.1}\n", false));
	ASSERT_EQ(l.rc, 0) << l.errors();
	EXPECT_TRUE(l.p.xcp.separate_queues);
	EXPECT_EQ(l.p.xcp.queue_weight_gain, 0.25);
	EXPECT_EQ(l.p.xcp.queue_weight_min, 0.1);
	/* With satlink: false is taken, true refused (built for the shaper only). */
	Loaded f(hub("xcp: {separate_queues: false}\n"));
	ASSERT_EQ(f.rc, 0) << f.errors();
	expect_one(Loaded(hub("xcp: {separate_queues: true}\n")), 10, 24,
		   "'separate_queues' is built for the egress shaper (xcp without satlink) "
		   "only, not for satlink's queues");
	expect_one(Loaded(hub("xcp: {queue_weight_gain: 0}\n")), 10, 26,
		   "'queue_weight_gain' 0 is out of range (must be more than 0 and at most 1)");
	expect_one(Loaded(hub("xcp: {queue_weight_min: 0.6}\n")), 10, 25,
		   "'queue_weight_min' 0.6 is out of range (must be more than 0 and at most 0.5)");
}

TEST(PolicyXcp, ScopeKeys)
{
	/* With satlink: one controller per session by default, or one for the carrier. */
	Loaded d(hub("xcp: {}\n"));
	ASSERT_EQ(d.rc, 0) << d.errors();
	EXPECT_EQ(d.p.xcp.scope, SGW_XCP_SCOPE_SESSION);
	Loaded c(hub("xcp: {scope: carrier}\n"));
	ASSERT_EQ(c.rc, 0) << c.errors();
	EXPECT_EQ(c.p.xcp.scope, SGW_XCP_SCOPE_CARRIER);
	Loaded s(hub("xcp: {scope: session}\n"));
	ASSERT_EQ(s.rc, 0) << s.errors();
	EXPECT_EQ(s.p.xcp.scope, SGW_XCP_SCOPE_SESSION);
	Loaded bad(hub("xcp: {scope: link}\n"));
	ASSERT_EQ(bad.rc, -1);
	ASSERT_EQ(bad.errs.n, 1u) << bad.errors();
	EXPECT_EQ(bad.errs.e[0].line, 10u);
	EXPECT_EQ(bad.errs.e[0].col, 14u);
	EXPECT_NE(std::string(bad.errs.e[0].msg).find("session"), std::string::npos)
		<< bad.errors();
	/* Without satlink the shaper is the one queue: the key is refused. */
	expect_one(Loaded(hub("xcp: {port: sat, capacity_bps: 8000000, scope: carrier}\n",
			      false)), 8, 48,
		   "'scope' chooses between satlink's sessions and its carrier; without "
		   "satlink the egress shaper is the one queue");
}

} // namespace
