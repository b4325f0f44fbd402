/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Tests of the YAML policy loader (control/policy_yaml.c): the good corpus
 * loads and round-trips through sgw_policy_dump_yaml; every file of the bad
 * corpus yields exactly the errors its "# expect: LINE:COL: text" header
 * lines name; plus the limits (file size, error cap, table sizes).
 */
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "policy_yaml.h"
#include "sgw_policy.h"

namespace fs = std::filesystem;

namespace {

std::string
policy_dir(const char *sub)
{
	return std::string(SGW_TEST_DATA_DIR) + "/policy/" + sub;
}

std::vector<std::string>
yaml_files(const char *sub)
{
	std::vector<std::string> out;
	std::error_code ec;

	for (const auto &e : fs::directory_iterator(policy_dir(sub), ec))
		if (e.path().extension() == ".yaml")
			out.push_back(e.path().string());
	std::sort(out.begin(), out.end());
	return out;
}

std::string
test_name(const ::testing::TestParamInfo<std::string> &info)
{
	std::string s = fs::path(info.param).stem().string();

	for (char &c : s)
		if (!isalnum(static_cast<unsigned char>(c)))
			c = '_';
	return s;
}

std::string
errors_text(const sgw_cfg_errors &errs)
{
	std::string s;
	char line[600];

	for (uint32_t i = 0; i < errs.n; i++) {
		sgw_cfg_error_format(&errs.e[i], line, sizeof(line));
		s += std::string("  ") + line + "\n";
	}
	return s;
}

/* Loads into a policy that frees itself. */
struct Loaded {
	sgw_policy p;
	sgw_cfg_errors errs;
	int rc;

	explicit Loaded(const std::string &path)
	{
		rc = sgw_policy_load_file(path.c_str(), &p, &errs);
	}
	Loaded(const char *name, const std::string &text)
	{
		rc = sgw_policy_load_buffer(name, text.data(), text.size(), &p, &errs);
	}
	~Loaded() { sgw_policy_free(&p); }
	Loaded(const Loaded &) = delete;
	Loaded &operator=(const Loaded &) = delete;
};

std::string
dump(const sgw_policy &p)
{
	FILE *f = tmpfile();
	std::string s;
	char buf[4096];
	size_t n;

	EXPECT_NE(f, nullptr);
	if (f == nullptr)
		return s;
	EXPECT_EQ(sgw_policy_dump_yaml(&p, f), 0);
	rewind(f);
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		s.append(buf, n);
	fclose(f);
	return s;
}

void
expect_same_prefix(const sgw_prefix &a, const sgw_prefix &b)
{
	EXPECT_EQ(a.family, b.family);
	EXPECT_EQ(a.len, b.len);
	EXPECT_EQ(0, memcmp(a.addr, b.addr, sizeof(a.addr)));
}

void
expect_same_policy(const sgw_policy &a, const sgw_policy &b)
{
	EXPECT_EQ(a.role, b.role);
	EXPECT_EQ(a.lift_proto, b.lift_proto);
	EXPECT_EQ(a.xcp_proto, b.xcp_proto);
	EXPECT_EQ(a.malformed, b.malformed);
	EXPECT_EQ(a.default_action, b.default_action);
	ASSERT_EQ(a.n_ports, b.n_ports);
	for (unsigned i = 0; i < a.n_ports; i++) {
		SCOPED_TRACE("port " + std::to_string(i));
		EXPECT_STREQ(a.ports[i].name, b.ports[i].name);
		EXPECT_STREQ(a.ports[i].device, b.ports[i].device);
		EXPECT_EQ(a.ports[i].role, b.ports[i].role);
		EXPECT_EQ(a.ports[i].peer, b.ports[i].peer);
		EXPECT_EQ(a.ports[i].rx_desc, b.ports[i].rx_desc);
		EXPECT_EQ(a.ports[i].tx_desc, b.ports[i].tx_desc);
		EXPECT_EQ(a.ports[i].mtu, b.ports[i].mtu);
		EXPECT_EQ(a.ports[i].promiscuous, b.ports[i].promiscuous);
	}
	ASSERT_EQ(a.n_next_hops, b.n_next_hops);
	for (unsigned i = 0; i < a.n_next_hops; i++) {
		EXPECT_STREQ(a.next_hops[i].name, b.next_hops[i].name);
		EXPECT_EQ(a.next_hops[i].port, b.next_hops[i].port);
		EXPECT_EQ(0, memcmp(a.next_hops[i].mac, b.next_hops[i].mac, 6));
	}
	ASSERT_EQ(a.n_terminals, b.n_terminals);
	for (uint32_t i = 0; i < a.n_terminals; i++) {
		const sgw_terminal &x = a.terminals[i], &y = b.terminals[i];

		SCOPED_TRACE("terminal " + std::to_string(i));
		EXPECT_STREQ(x.name, y.name);
		EXPECT_EQ(x.id, y.id);
		ASSERT_EQ(x.n_prefixes, y.n_prefixes);
		for (unsigned k = 0; k < x.n_prefixes; k++)
			expect_same_prefix(x.prefixes[k], y.prefixes[k]);
	}
	ASSERT_EQ(a.n_rules, b.n_rules);
	for (uint32_t i = 0; i < a.n_rules; i++) {
		const sgw_rule &x = a.rules[i], &y = b.rules[i];

		SCOPED_TRACE("rule " + std::to_string(i));
		EXPECT_STREQ(x.name, y.name);
		EXPECT_EQ(x.in_port, y.in_port);
		EXPECT_EQ(x.terminal, y.terminal);
		ASSERT_EQ(x.n_src, y.n_src);
		for (unsigned k = 0; k < x.n_src; k++)
			expect_same_prefix(x.src[k], y.src[k]);
		ASSERT_EQ(x.n_dst, y.n_dst);
		for (unsigned k = 0; k < x.n_dst; k++)
			expect_same_prefix(x.dst[k], y.dst[k]);
		ASSERT_EQ(x.n_proto, y.n_proto);
		EXPECT_EQ(0, memcmp(x.proto, y.proto, x.n_proto));
		ASSERT_EQ(x.n_sport, y.n_sport);
		for (unsigned k = 0; k < x.n_sport; k++) {
			EXPECT_EQ(x.sport[k].lo, y.sport[k].lo);
			EXPECT_EQ(x.sport[k].hi, y.sport[k].hi);
		}
		ASSERT_EQ(x.n_dport, y.n_dport);
		for (unsigned k = 0; k < x.n_dport; k++) {
			EXPECT_EQ(x.dport[k].lo, y.dport[k].lo);
			EXPECT_EQ(x.dport[k].hi, y.dport[k].hi);
		}
		ASSERT_EQ(x.n_spi, y.n_spi);
		for (unsigned k = 0; k < x.n_spi; k++) {
			EXPECT_EQ(x.spi[k].lo, y.spi[k].lo);
			EXPECT_EQ(x.spi[k].hi, y.spi[k].hi);
		}
		EXPECT_EQ(x.dscp_mask, y.dscp_mask);
		EXPECT_EQ(x.action, y.action);
		EXPECT_EQ(x.next_hop, y.next_hop);
	}
	EXPECT_EQ(a.limits.flows_per_core, b.limits.flows_per_core);
	EXPECT_EQ(a.limits.mbufs, b.limits.mbufs);
	EXPECT_EQ(a.limits.mbuf_cache, b.limits.mbuf_cache);
	EXPECT_EQ(a.limits.ring_size, b.limits.ring_size);
	EXPECT_EQ(a.limits.flow_idle_ms, b.limits.flow_idle_ms);
	EXPECT_EQ(a.limits.timers_per_core, b.limits.timers_per_core);
	EXPECT_EQ(a.workers.idle_backoff_us, b.workers.idle_backoff_us);
	EXPECT_EQ(a.workers.idle_sleep_us, b.workers.idle_sleep_us);
	EXPECT_EQ(a.workers.burst, b.workers.burst);
	EXPECT_EQ(a.workers.tx_drain_us, b.workers.tx_drain_us);
	EXPECT_EQ(a.workers.timer_tick_us, b.workers.timer_tick_us);
}

/* Load text, dump it, load the dump: same policy, and the dump is a fixed point. */
void
expect_round_trip(const sgw_policy &p)
{
	std::string text = dump(p);
	Loaded again("dump.yaml", text);

	ASSERT_EQ(again.rc, 0) << errors_text(again.errs) << text;
	expect_same_policy(p, again.p);
	EXPECT_EQ(text, dump(again.p));
}

struct Expect {
	uint32_t line, col;
	std::string text;
};

/* "# expect: L:C: text" lines in the leading comment block. */
std::vector<Expect>
read_expects(const std::string &path)
{
	std::ifstream in(path);
	std::vector<Expect> out;
	std::string line;
	const std::string tag = "# expect: ";

	while (std::getline(in, line) && !line.empty() && line[0] == '#') {
		unsigned l, c;
		int used = 0;

		if (line.compare(0, tag.size(), tag) != 0)
			continue;
		if (sscanf(line.c_str() + tag.size(), "%u:%u: %n", &l, &c, &used) != 2 ||
		    used == 0) {
			ADD_FAILURE() << path << ": bad expect line: " << line;
			continue;
		}
		out.push_back({ l, c, line.substr(tag.size() + used) });
	}
	return out;
}

class GoodPolicy : public ::testing::TestWithParam<std::string> {};

TEST_P(GoodPolicy, LoadsAndRoundTrips)
{
	Loaded l(GetParam());

	ASSERT_EQ(l.rc, 0) << errors_text(l.errs);
	EXPECT_EQ(l.errs.n, 0u);
	EXPECT_EQ(l.errs.dropped, 0u);
	EXPECT_GE(l.p.n_ports, 1u);
	expect_round_trip(l.p);
}

INSTANTIATE_TEST_SUITE_P(Corpus, GoodPolicy, ::testing::ValuesIn(yaml_files("good")),
			 test_name);

class BadPolicy : public ::testing::TestWithParam<std::string> {};

TEST_P(BadPolicy, ReportsExactlyTheExpectedErrors)
{
	const std::string path = GetParam();
	std::vector<Expect> want = read_expects(path);
	Loaded l(path);

	ASSERT_FALSE(want.empty()) << path << " has no '# expect:' lines";
	ASSERT_EQ(l.rc, -1);
	ASSERT_EQ(l.errs.n, want.size()) << errors_text(l.errs);
	EXPECT_EQ(l.errs.dropped, 0u);
	for (size_t i = 0; i < want.size(); i++) {
		const sgw_cfg_error &e = l.errs.e[i];

		SCOPED_TRACE(errors_text(l.errs));
		EXPECT_EQ(e.line, want[i].line) << "error " << i;
		EXPECT_EQ(e.col, want[i].col) << "error " << i;
		EXPECT_NE(std::string(e.msg).find(want[i].text), std::string::npos)
			<< "error " << i << ": '" << e.msg << "' lacks '" << want[i].text << "'";
		EXPECT_STREQ(e.file, path.c_str());
	}
	/* A failed load leaves nothing behind. */
	EXPECT_EQ(l.p.n_terminals, 0u);
	EXPECT_EQ(l.p.terminals, nullptr);
	EXPECT_EQ(l.p.n_rules, 0u);
	EXPECT_EQ(l.p.rules, nullptr);
}

INSTANTIATE_TEST_SUITE_P(Corpus, BadPolicy, ::testing::ValuesIn(yaml_files("bad")),
			 test_name);

TEST(PolicyCorpus, IsLargeEnough)
{
	EXPECT_GE(yaml_files("bad").size(), 30u);
	EXPECT_GE(yaml_files("good").size(), 2u);
	EXPECT_TRUE(fs::exists(policy_dir("good") + "/hub-example.yaml"));
}

std::string
slurp(const std::string &path)
{
	std::ifstream in(path, std::ios::binary);
	std::stringstream ss;

	ss << in.rdbuf();
	return ss.str();
}

/* docs/configuration.md quotes both example files: they must not drift apart. */
TEST(PolicyCorpus, DocsQuoteTheExamples)
{
	std::string doc = slurp(std::string(SGW_TEST_DATA_DIR) + "/../../docs/configuration.md");

	ASSERT_FALSE(doc.empty());
	for (const char *f : { "hub-example.yaml", "terminal-site.yaml" }) {
		std::string text = slurp(policy_dir("good") + "/" + f);

		ASSERT_FALSE(text.empty()) << f;
		EXPECT_NE(doc.find("```yaml\n" + text + "```"), std::string::npos)
			<< f << " is not quoted verbatim in docs/configuration.md";
	}
}

TEST(PolicyYaml, HubExampleValues)
{
	Loaded l(policy_dir("good") + "/hub-example.yaml");
	char buf[SGW_PREFIX_STRLEN];

	ASSERT_EQ(l.rc, 0) << errors_text(l.errs);
	const sgw_policy &p = l.p;
	EXPECT_EQ(p.role, SGW_ROLE_HUB);
	ASSERT_EQ(p.n_ports, 2);
	EXPECT_STREQ(p.ports[0].name, "terr");
	EXPECT_STREQ(p.ports[0].device, "net_af_packet0");
	EXPECT_EQ(p.ports[0].role, SGW_PORT_TERRESTRIAL);
	EXPECT_EQ(p.ports[0].peer, 1);
	EXPECT_EQ(p.ports[1].peer, 0);
	EXPECT_STREQ(p.ports[1].device, "0000:3b:00.1");
	EXPECT_EQ(p.ports[1].role, SGW_PORT_SATELLITE);
	EXPECT_EQ(p.ports[1].rx_desc, 2048);
	EXPECT_EQ(p.ports[1].mtu, 1500);
	EXPECT_TRUE(p.ports[1].promiscuous); /* "yes" */

	ASSERT_EQ(p.n_next_hops, 2);
	EXPECT_EQ(p.next_hops[0].port, 1);
	const uint8_t modem[6] = { 2, 0, 0, 0, 0, 2 };
	EXPECT_EQ(0, memcmp(p.next_hops[0].mac, modem, 6));

	ASSERT_EQ(p.n_terminals, 3u);
	EXPECT_EQ(p.terminals[1].id, 0x3eau);
	EXPECT_EQ(p.terminals[2].id, 4294967295u);
	ASSERT_EQ(p.terminals[0].n_prefixes, 2);
	sgw_prefix_format(&p.terminals[0].prefixes[1], buf, sizeof(buf));
	EXPECT_STREQ(buf, "2001:db8:1::/48");
	ASSERT_EQ(p.terminals[2].n_prefixes, 1); /* a lone scalar */
	sgw_prefix_format(&p.terminals[2].prefixes[0], buf, sizeof(buf));
	EXPECT_STREQ(buf, "100.64.7.0/28");

	ASSERT_EQ(p.n_rules, 6u);
	const sgw_rule &tel = p.rules[0];
	EXPECT_EQ(tel.action, SGW_ACT_DROP);
	ASSERT_EQ(tel.n_proto, 1);
	EXPECT_EQ(tel.proto[0], 6);
	ASSERT_EQ(tel.n_dport, 1);
	EXPECT_EQ(tel.dport[0].lo, 23);
	EXPECT_EQ(tel.dport[0].hi, 23);
	EXPECT_EQ(tel.in_port, -1);
	EXPECT_EQ(tel.next_hop, -1);

	const sgw_rule &voice = p.rules[1];
	EXPECT_STREQ(voice.name, "voice");
	EXPECT_EQ(voice.in_port, 0);
	EXPECT_EQ(voice.terminal, 0);
	EXPECT_EQ(voice.action, SGW_ACT_COUNT);
	EXPECT_EQ(voice.next_hop, 0);
	EXPECT_EQ(voice.n_src, 1);
	EXPECT_EQ(voice.n_dst, 2);
	ASSERT_EQ(voice.n_sport, 2);
	EXPECT_EQ(voice.sport[0].lo, 1);
	EXPECT_EQ(voice.sport[0].hi, 1023);
	EXPECT_EQ(voice.sport[1].lo, 5060);
	ASSERT_EQ(voice.n_dport, 2);
	EXPECT_EQ(voice.dport[1].lo, 16384);
	EXPECT_EQ(voice.dport[1].hi, 32767);
	EXPECT_EQ(voice.dscp_mask, (1ull << 46) | (0x1full << 10));

	const sgw_rule &ipsec = p.rules[2];
	ASSERT_EQ(ipsec.n_spi, 2);
	EXPECT_EQ(ipsec.spi[0].lo, 0x1000u);
	EXPECT_EQ(ipsec.spi[0].hi, 0x1fffu);
	EXPECT_EQ(ipsec.spi[1].lo, 4096u);
	EXPECT_EQ(ipsec.spi[1].hi, 4096u);

	const sgw_rule &tun = p.rules[4];
	ASSERT_EQ(tun.n_proto, 5);
	const uint8_t tun_protos[5] = { 47, 51, 1, 58, 115 };
	EXPECT_EQ(0, memcmp(tun.proto, tun_protos, 5));

	const sgw_rule &rest = p.rules[5];
	EXPECT_EQ(rest.n_src + rest.n_dst + rest.n_proto + rest.n_sport + rest.n_dport +
		  rest.n_spi, 0);
	EXPECT_EQ(rest.dscp_mask, 0u);

	EXPECT_EQ(p.limits.timers_per_core, 131072u);
	EXPECT_EQ(p.workers.burst, 32);
	EXPECT_EQ(p.lift_proto, 253);
	EXPECT_EQ(p.xcp_proto, 254);
	EXPECT_EQ(p.malformed, SGW_MALFORMED_DROP);
	EXPECT_EQ(p.default_action, SGW_ACT_FORWARD);
}

TEST(PolicyYaml, FormsAndDefaults)
{
	Loaded l(policy_dir("good") + "/forms.yaml");

	ASSERT_EQ(l.rc, 0) << errors_text(l.errs);
	const sgw_policy &p = l.p;
	EXPECT_EQ(p.ports[0].rx_desc, 64);       /* "0x40" */
	EXPECT_FALSE(p.ports[0].promiscuous);    /* no */
	EXPECT_FALSE(p.ports[1].promiscuous);    /* False */
	EXPECT_EQ(p.ports[1].peer, -1);
	EXPECT_EQ(p.ports[1].rx_desc, 1024);     /* default */
	EXPECT_STREQ(p.ports[0].device, "net_ring0,nodeaction=r0:0:CREATE");
	EXPECT_EQ(p.n_next_hops, 0);             /* "next_hops:" with no value */
	EXPECT_EQ(p.rules[1].dscp_mask, ~0ull);
	EXPECT_EQ(p.rules[1].spi[0].hi, 0xffffffffu);
	EXPECT_EQ(p.rules[0].n_src, 0);          /* "match:" with no value */
	EXPECT_EQ(p.lift_proto, 200);
	EXPECT_EQ(p.malformed, SGW_MALFORMED_FORWARD);
	EXPECT_EQ(p.default_action, SGW_ACT_DROP);

	sgw_policy d;
	sgw_policy_init_defaults(&d);
	EXPECT_EQ(p.limits.mbufs, d.limits.mbufs);
	EXPECT_EQ(p.workers.idle_backoff_us, d.workers.idle_backoff_us);
}

TEST(PolicyYaml, TimersDefaultToFlows)
{
	Loaded l("t.yaml", "version: 1\nrole: hub\nports: [{name: a, device: d, role: lan}]\n"
		 "limits: {flows_per_core: 2048}\n");

	ASSERT_EQ(l.rc, 0) << errors_text(l.errs);
	EXPECT_EQ(l.p.limits.flows_per_core, 2048u);
	EXPECT_EQ(l.p.limits.timers_per_core, 2048u);
}

TEST(PolicyYaml, TerminalPolicy)
{
	Loaded l(policy_dir("good") + "/terminal-site.yaml");

	ASSERT_EQ(l.rc, 0) << errors_text(l.errs);
	EXPECT_EQ(l.p.role, SGW_ROLE_TERMINAL);
	EXPECT_EQ(l.p.ports[1].role, SGW_PORT_LAN);
	EXPECT_EQ(l.p.workers.idle_backoff_us, 0u);
	EXPECT_EQ(l.p.workers.idle_sleep_us, 50u);
}

TEST(PolicyYaml, MissingFile)
{
	sgw_policy p;
	sgw_cfg_errors errs;
	char line[600];

	ASSERT_EQ(sgw_policy_load_file("/nonexistent/satgw.yaml", &p, &errs), -1);
	ASSERT_EQ(errs.n, 1u);
	sgw_cfg_error_format(&errs.e[0], line, sizeof(line));
	EXPECT_STREQ(line, "/nonexistent/satgw.yaml:0:0: cannot open: No such file or directory");
	EXPECT_EQ(p.terminals, nullptr);
	sgw_policy_free(&p);
}

TEST(PolicyYaml, DirectoryIsNotAPolicy)
{
	sgw_policy p;
	sgw_cfg_errors errs;

	ASSERT_EQ(sgw_policy_load_file(SGW_TEST_DATA_DIR, &p, &errs), -1);
	ASSERT_EQ(errs.n, 1u);
	EXPECT_EQ(errs.e[0].line, 0u);
	EXPECT_NE(std::string(errs.e[0].msg).find("cannot"), std::string::npos) << errs.e[0].msg;
	sgw_policy_free(&p);
}

TEST(PolicyYaml, TooLarge)
{
	std::string big(SGW_CFG_MAX_BYTES + 1, '#');
	Loaded b("big.yaml", big);

	ASSERT_EQ(b.rc, -1);
	ASSERT_EQ(b.errs.n, 1u);
	EXPECT_EQ(b.errs.e[0].line, 0u);
	EXPECT_NE(std::string(b.errs.e[0].msg).find("too large"), std::string::npos);

	std::string path = (fs::temp_directory_path() / "satgw-too-large.yaml").string();
	{
		std::ofstream o(path, std::ios::binary);
		o << big;
	}
	Loaded f(path);
	fs::remove(path);
	ASSERT_EQ(f.rc, -1);
	ASSERT_EQ(f.errs.n, 1u);
	EXPECT_NE(std::string(f.errs.e[0].msg).find("too large"), std::string::npos);
}

TEST(PolicyYaml, ErrorCapCountsTheRest)
{
	std::string text = "version: 1\nrole: hub\nports: [{name: a, device: d, role: lan}]\n";

	for (int i = 0; i < 100; i++)
		text += "unknown_" + std::to_string(i) + ": 1\n";
	Loaded l("many.yaml", text);
	ASSERT_EQ(l.rc, -1);
	EXPECT_EQ(l.errs.n, (uint32_t)SGW_CFG_MAX_ERRORS);
	EXPECT_EQ(l.errs.dropped, 36u);
	EXPECT_EQ(l.errs.e[0].line, 4u);
	EXPECT_EQ(l.errs.e[63].line, 67u);

	FILE *f = tmpfile();
	ASSERT_NE(f, nullptr);
	sgw_cfg_errors_print(f, &l.errs);
	rewind(f);
	std::string out;
	char buf[1024];
	size_t n;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		out.append(buf, n);
	fclose(f);
	EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 65);
	EXPECT_EQ(out.rfind("many.yaml:4:1: unknown key 'unknown_0' in the policy", 0), 0u)
		<< out;
	EXPECT_NE(out.find("\n... and 36 more errors\n"), std::string::npos) << out;
}

TEST(PolicyYaml, ErrorFormat)
{
	sgw_cfg_error e;
	char buf[32];

	snprintf(e.file, sizeof(e.file), "hub.yaml");
	e.line = 12;
	e.col = 5;
	snprintf(e.msg, sizeof(e.msg), "something is wrong");
	char full[600];
	EXPECT_EQ(sgw_cfg_error_format(&e, full, sizeof(full)), 33);
	EXPECT_STREQ(full, "hub.yaml:12:5: something is wrong");
	/* Truncates like snprintf and says how long the whole line is. */
	EXPECT_EQ(sgw_cfg_error_format(&e, buf, 10), 33);
	EXPECT_STREQ(buf, "hub.yaml:");
}

TEST(PolicyYaml, NullErrsAndUnterminatedBuffer)
{
	const char text[] = "version: 1\nrole: hub\nports: [{name: a, device: d, role: lan}]\nX";
	sgw_policy p;

	/* The trailing X is outside len: must not be read. */
	EXPECT_EQ(sgw_policy_load_buffer("b", text, sizeof(text) - 2, &p, nullptr), 0);
	sgw_policy_free(&p);
	EXPECT_EQ(sgw_policy_load_buffer("b", text, sizeof(text) - 1, &p, nullptr), -1);
	sgw_policy_free(&p);
	sgw_policy_free(&p); /* twice is harmless */
}

TEST(PolicyYaml, InvalidUtf8)
{
	Loaded l("bin.yaml", std::string("version: 1\nrole: \xff\xfe hub\n"));

	ASSERT_EQ(l.rc, -1);
	ASSERT_EQ(l.errs.n, 1u) << errors_text(l.errs);
	EXPECT_EQ(l.errs.e[0].line, 2u);
	EXPECT_EQ(l.errs.e[0].col, 7u);
	EXPECT_NE(std::string(l.errs.e[0].msg).find("UTF-8"), std::string::npos);
}

TEST(PolicyYaml, DeepNestingIsRefused)
{
	std::string text = "version: 1\nrole: hub\nports: " + std::string(200, '[') +
		std::string(200, ']') + "\n";
	Loaded l("deep.yaml", text);

	ASSERT_EQ(l.rc, -1);
	ASSERT_EQ(l.errs.n, 1u) << errors_text(l.errs);
	EXPECT_NE(std::string(l.errs.e[0].msg).find("nesting"), std::string::npos);
}

std::string
many_terminals(uint32_t n)
{
	std::string s = "version: 1\nrole: hub\nports: [{name: a, device: d, role: lan}]\n"
		"terminals:\n";
	char line[160];

	for (uint32_t i = 0; i < n; i++) {
		snprintf(line, sizeof(line),
			 "  - {name: t%u, id: %u, "
			 "prefixes: [%u.%u.%u.0/24, \"2001:db8:%x:%x::/64\"]}\n",
			 i, i, 10 + (i >> 16), i >> 8 & 0xff, i & 0xff, i >> 16, i & 0xffff);
		s += line;
	}
	return s;
}

TEST(PolicyYaml, FullTerminalTable)
{
	Loaded l("terms.yaml", many_terminals(SGW_MAX_TERMINALS));

	ASSERT_EQ(l.rc, 0) << errors_text(l.errs);
	EXPECT_EQ(l.p.n_terminals, (uint32_t)SGW_MAX_TERMINALS);
	EXPECT_EQ(l.p.terminals[65535].id, 65535u);
}

TEST(PolicyYaml, TerminalTableTooLargeAndLateOverlap)
{
	Loaded big("terms.yaml", many_terminals(SGW_MAX_TERMINALS + 1));

	ASSERT_EQ(big.rc, -1);
	ASSERT_EQ(big.errs.n, 1u) << errors_text(big.errs);
	EXPECT_EQ(big.errs.e[0].line, 5u); /* the list starts at its first "-" */
	EXPECT_NE(std::string(big.errs.e[0].msg).find("'terminals' must have 0..65536 entries "
						       "(got 65537)"), std::string::npos);

	std::string text = many_terminals(1000) +
		"  - {name: late, id: 99999, prefixes: [\"2001:db8:0:3e7:8000::/65\"]}\n";
	Loaded l("late.yaml", text);
	ASSERT_EQ(l.rc, -1);
	ASSERT_EQ(l.errs.n, 1u) << errors_text(l.errs);
	EXPECT_EQ(l.errs.e[0].line, 1005u);
	EXPECT_NE(std::string(l.errs.e[0].msg).find(
			  "2001:db8:0:3e7:8000::/65 overlaps 2001:db8:0:3e7::/64 of terminal "
			  "'t999'"
			  " (line 1004)"), std::string::npos) << errors_text(l.errs);
}

TEST(PolicyYaml, RuleTableLimit)
{
	std::string s = "version: 1\nrole: hub\nports: [{name: a, device: d, role: lan}]\n"
		"rules:\n";

	for (int i = 0; i < SGW_MAX_RULES; i++)
		s += "  - {name: r" + std::to_string(i) + ", action: drop}\n";
	{
		Loaded l("rules.yaml", s);
		ASSERT_EQ(l.rc, 0) << errors_text(l.errs);
		EXPECT_EQ(l.p.n_rules, (uint32_t)SGW_MAX_RULES);
	}
	s += "  - {name: one-too-many, action: drop}\n";
	Loaded l("rules.yaml", s);
	ASSERT_EQ(l.rc, -1);
	ASSERT_EQ(l.errs.n, 1u) << errors_text(l.errs);
	EXPECT_EQ(l.errs.e[0].line, 5u);
	EXPECT_NE(std::string(l.errs.e[0].msg)
			  .find("'rules' must have 0..4096 entries (got 4097)"),
		  std::string::npos);
}

/* Random valid policies built in code survive dump -> load unchanged. */
TEST(PolicyYaml, RandomPoliciesRoundTrip)
{
	std::mt19937 rng(1234);

	for (int iter = 0; iter < 50; iter++) {
		sgw_policy p;
		auto rnd = [&](uint32_t n) { return (uint32_t)(rng() % n); };

		sgw_policy_init_defaults(&p);
		p.role = rnd(2) ? SGW_ROLE_HUB : SGW_ROLE_TERMINAL;
		p.n_ports = (uint16_t)(1 + rnd(SGW_MAX_PORTS));
		for (unsigned i = 0; i < p.n_ports; i++) {
			sgw_port_conf &pc = p.ports[i];
			snprintf(pc.name, sizeof(pc.name), "%sp%u", rnd(2) ? "-" : "", i);
			snprintf(pc.device, sizeof(pc.device), "net_ring%u,x=\"%u\"\\", i, rnd(9));
			pc.role = (sgw_port_role)rnd(3);
			pc.peer = (int16_t)(rnd(3) == 0 || p.n_ports == 1 ? -1 :
					    (i + 1) % p.n_ports);
			pc.rx_desc = (uint16_t)(64 + rnd(16384 - 63));
			pc.tx_desc = (uint16_t)(64 + rnd(16384 - 63));
			pc.mtu = (uint16_t)(rnd(2) ? 0 : 68 + rnd(9600 - 67));
			pc.promiscuous = rnd(2);
		}
		p.n_next_hops = (uint16_t)rnd(5);
		for (unsigned i = 0; i < p.n_next_hops; i++) {
			snprintf(p.next_hops[i].name, SGW_NAME_MAX, "nh.%u", i);
			p.next_hops[i].port = (int16_t)rnd(p.n_ports);
			for (auto &b : p.next_hops[i].mac)
				b = (uint8_t)rng();
			p.next_hops[i].mac[0] = (uint8_t)((p.next_hops[i].mac[0] & 0xfe) | 2);
		}
		p.n_terminals = rnd(20);
		p.terminals = (sgw_terminal *)calloc(p.n_terminals + 1, sizeof(sgw_terminal));
		for (uint32_t i = 0; i < p.n_terminals; i++) {
			sgw_terminal &t = p.terminals[i];
			snprintf(t.name, sizeof(t.name), "site_%u", i);
			t.id = (uint32_t)rng() / 64 * 64 + i;
			t.n_prefixes = (uint16_t)(1 + rnd(SGW_TERM_PREFIX_MAX));
			for (unsigned k = 0; k < t.n_prefixes; k++) {
				/* Disjoint by construction: terminal i, prefix k. */
				sgw_prefix &pf = t.prefixes[k];
				pf.family = k % 2 ? 6 : 4;
				if (pf.family == 4) {
					pf.len = 24;
					pf.addr[0] = 10;
					pf.addr[1] = (uint8_t)i;
					pf.addr[2] = (uint8_t)k;
				} else {
					pf.len = (uint8_t)(48 + rnd(81));
					pf.addr[0] = 0x20;
					pf.addr[1] = 0x01;
					pf.addr[2] = (uint8_t)i;
					pf.addr[3] = (uint8_t)k;
					if (pf.len > 48)
						pf.addr[6] =
							(uint8_t)(0x80 >> ((pf.len - 49) % 8));
					if (pf.len < 56)
						pf.addr[6] = 0;
				}
			}
		}
		p.n_rules = rnd(30);
		p.rules = (sgw_rule *)calloc(p.n_rules + 1, sizeof(sgw_rule));
		for (uint32_t i = 0; i < p.n_rules; i++) {
			sgw_rule &r = p.rules[i];
			sgw_rule_init(&r);
			snprintf(r.name, sizeof(r.name), "r%u", i);
			if (rnd(2))
				r.in_port = (int16_t)rnd(p.n_ports);
			if (p.n_terminals && rnd(2))
				r.terminal = (int32_t)rnd(p.n_terminals);
			r.n_src = (uint8_t)rnd(3);
			for (unsigned k = 0; k < r.n_src; k++) {
				r.src[k].family = 4;
				r.src[k].len = (uint8_t)rnd(33);
				uint32_t a = (uint32_t)rng() & (r.src[k].len ?
							  ~0u << (32 - r.src[k].len) : 0);
				for (int b = 0; b < 4; b++)
					r.src[k].addr[b] = (uint8_t)(a >> (24 - 8 * b));
			}
			r.n_dst = (uint8_t)rnd(2);
			for (unsigned k = 0; k < r.n_dst; k++) {
				r.dst[k].family = 4;
				r.dst[k].len = 32;
				r.dst[k].addr[0] = (uint8_t)rng();
			}
			r.n_proto = (uint8_t)rnd(SGW_RULE_PROTO_MAX + 1);
			for (unsigned k = 0; k < r.n_proto; k++)
				r.proto[k] = (uint8_t)rng();
			r.n_sport = (uint8_t)rnd(SGW_RULE_RANGE_MAX + 1);
			for (unsigned k = 0; k < r.n_sport; k++) {
				r.sport[k].lo = (uint16_t)rnd(65536);
				r.sport[k].hi =
					(uint16_t)(r.sport[k].lo + rnd(65536 - r.sport[k].lo));
			}
			r.n_dport = (uint8_t)rnd(3);
			for (unsigned k = 0; k < r.n_dport; k++) {
				r.dport[k].lo = (uint16_t)rnd(100);
				r.dport[k].hi = r.dport[k].lo;
			}
			r.n_spi = (uint8_t)rnd(SGW_RULE_RANGE_MAX + 1);
			for (unsigned k = 0; k < r.n_spi; k++) {
				r.spi[k].lo = (uint32_t)rng() / 2;
				r.spi[k].hi = rnd(2) ? r.spi[k].lo :
					r.spi[k].lo + (uint32_t)rng() / 2;
			}
			r.dscp_mask = rnd(2) ? ((uint64_t)rng() << 32 | rng()) : 0;
			r.action = (sgw_action)rnd(3);
			if (r.action != SGW_ACT_DROP && p.n_next_hops && rnd(2))
				r.next_hop = (int16_t)rnd(p.n_next_hops);
		}
		p.limits.flows_per_core = 1024 + rnd(16777216 - 1023);
		p.limits.ring_size = 256u << rnd(13);
		p.limits.timers_per_core = 1024 + rnd(1000);
		p.workers.idle_backoff_us = rnd(1000001);
		p.workers.burst = (uint16_t)(1 + rnd(64));
		p.lift_proto = (uint8_t)(100 + rnd(50));
		p.xcp_proto = (uint8_t)(150 + rnd(50));
		p.malformed = (sgw_malformed_policy)rnd(2);
		p.default_action = rnd(2) ? SGW_ACT_FORWARD : SGW_ACT_DROP;

		SCOPED_TRACE("iteration " + std::to_string(iter));
		expect_round_trip(p);
		sgw_policy_free(&p);
	}
}

} /* namespace */
