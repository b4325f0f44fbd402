/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Tests of the YAML policy loader (control/policy_yaml.c): the good corpus
 * loads and round-trips through sgw_policy_dump_yaml; every file of the bad
 * corpus yields exactly the errors its "# expect: LINE:COL: text" header
 * lines name; plus the limits (file size, error cap, table sizes).
 */
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
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
expect_same_loss_state(const sgw_loss_state &a, const sgw_loss_state &b)
{
	EXPECT_EQ(a.mean_s, b.mean_s);
	EXPECT_EQ(a.ber, b.ber);
	EXPECT_EQ(a.p, b.p);
}

/* Field by field, then bytewise: the control thread compares links with memcmp. */
void
expect_same_link(const sgw_emulator_conf &a, const sgw_emulator_conf &b)
{
	EXPECT_EQ(a.seed, b.seed);
	for (int d = 0; d < 2; d++) {
		const sgw_link_dir &x = a.dir[d], &y = b.dir[d];
		const sgw_linkem_conf &c = x.em, &e = y.em;

		SCOPED_TRACE(d == 0 ? "link forward" : "link return");
		EXPECT_EQ(x.from_port, y.from_port);
		EXPECT_EQ(x.to_port, y.to_port);
		EXPECT_EQ(c.rate_bps, e.rate_bps);
		EXPECT_EQ(c.delay_ns, e.delay_ns);
		EXPECT_EQ(c.jitter_ns, e.jitter_ns);
		EXPECT_EQ(c.overhead_bytes, e.overhead_bytes);
		EXPECT_EQ(c.queue_bytes, e.queue_bytes);
		EXPECT_EQ(c.queue_pkts, e.queue_pkts);
		EXPECT_EQ(c.aqm, e.aqm);
		EXPECT_EQ(c.red_min_bytes, e.red_min_bytes);
		EXPECT_EQ(c.red_max_bytes, e.red_max_bytes);
		EXPECT_EQ(c.red_max_p, e.red_max_p);
		EXPECT_EQ(c.red_wq, e.red_wq);
		EXPECT_EQ(c.loss, e.loss);
		expect_same_loss_state(c.good, e.good);
		expect_same_loss_state(c.bad, e.bad);
		ASSERT_EQ(c.n_outages, e.n_outages);
		for (unsigned i = 0; i < c.n_outages; i++) {
			EXPECT_EQ(c.outages[i].start_ns, e.outages[i].start_ns);
			EXPECT_EQ(c.outages[i].dur_ns, e.outages[i].dur_ns);
			EXPECT_EQ(c.outages[i].period_ns, e.outages[i].period_ns);
		}
	}
	EXPECT_EQ(0, memcmp(&a, &b, sizeof(a)));
}

/* Field by field, then bytewise: restart_diff compares the section key by key. */
void
expect_same_satlink(const sgw_satlink_conf &a, const sgw_satlink_conf &b)
{
	EXPECT_EQ(a.enabled, b.enabled);
	EXPECT_EQ(a.port, b.port);
	EXPECT_EQ(a.terminal_id, b.terminal_id);
	EXPECT_EQ(0, memcmp(a.peer_mac, b.peer_mac, 6));
	EXPECT_EQ(a.forward_rate_bps, b.forward_rate_bps);
	EXPECT_EQ(a.return_rate_bps, b.return_rate_bps);
	EXPECT_EQ(a.rtt_ms, b.rtt_ms);
	EXPECT_EQ(a.frame_size, b.frame_size);
	EXPECT_EQ(a.retx_copies, b.retx_copies);
	EXPECT_EQ(a.retx_copies_idle, b.retx_copies_idle);
	EXPECT_EQ(a.frame_size_adapt, b.frame_size_adapt);
	EXPECT_EQ(a.frame_size_min, b.frame_size_min);
	EXPECT_EQ(a.retx_spacing_us, b.retx_spacing_us);
	EXPECT_EQ(a.status_interval_ms, b.status_interval_ms);
	EXPECT_EQ(a.keepalive_ms, b.keepalive_ms);
	EXPECT_EQ(a.link_down_ms, b.link_down_ms);
	EXPECT_EQ(a.rto_max_ms, b.rto_max_ms);
	EXPECT_EQ(a.send_queue, b.send_queue);
	EXPECT_EQ(a.window_max, b.window_max);
	EXPECT_EQ(a.default_service, b.default_service);
	EXPECT_STREQ(a.keys, b.keys);
	EXPECT_EQ(0, memcmp(&a, &b, sizeof(a)));
}

void
expect_same_lift(const sgw_lift_policy &a, const sgw_lift_policy &b)
{
	EXPECT_EQ(a.enabled, b.enabled);
	if (!a.enabled || !b.enabled)
		return;  /* a disabled section is not dumped: its keys do not survive */
	EXPECT_EQ(a.timer_mode, b.timer_mode);
	EXPECT_EQ(a.timer_ms, b.timer_ms);
	if (a.timer_mode == SGW_LIFT_TIMER_POL_ADAPTIVE) {
		EXPECT_EQ(a.timer_min_ms, b.timer_min_ms);
	}
	EXPECT_EQ(a.max_frozen_ms, b.max_frozen_ms);
	EXPECT_EQ(a.share_window_ms, b.share_window_ms);
	EXPECT_EQ(a.max_share_permille, b.max_share_permille);
	EXPECT_EQ(a.suspend_ms, b.suspend_ms);
	EXPECT_EQ(a.max_flows, b.max_flows);
	EXPECT_EQ(a.max_sas, b.max_sas);
	EXPECT_EQ(a.thaw, b.thaw);
	EXPECT_EQ(a.spare_frack, b.spare_frack);
}

void
expect_same_split(const sgw_split_policy &a, const sgw_split_policy &b)
{
	EXPECT_EQ(a.present, b.present);
	EXPECT_EQ(a.rwnd, b.rwnd);
	EXPECT_EQ(a.relay_connection_bytes, b.relay_connection_bytes);
	EXPECT_EQ(a.relay_terminal_bytes, b.relay_terminal_bytes);
	EXPECT_EQ(a.relay_worker_bytes, b.relay_worker_bytes);
	EXPECT_EQ(a.max_connections_worker, b.max_connections_worker);
	EXPECT_EQ(a.max_connections_terminal, b.max_connections_terminal);
	EXPECT_EQ(a.idle_timeout_ms, b.idle_timeout_ms);
	EXPECT_EQ(a.threshold_bytes, b.threshold_bytes);
	EXPECT_EQ(a.open_credit, b.open_credit);
}

void
expect_same_xcp(const sgw_xcp_policy &a, const sgw_xcp_policy &b)
{
	EXPECT_EQ(a.enabled, b.enabled);
	if (!a.enabled || !b.enabled)
		return;  /* a disabled section is not dumped: its keys do not survive */
	EXPECT_EQ(a.protocol, b.protocol);
	EXPECT_EQ(a.port, b.port);
	EXPECT_EQ(a.capacity_bps, b.capacity_bps);
	EXPECT_EQ(a.shaper_queue, b.shaper_queue);
	EXPECT_EQ(a.alpha, b.alpha);  /* exact: the dump writes what reads back the same */
	EXPECT_EQ(a.beta, b.beta);
	EXPECT_EQ(a.gamma, b.gamma);
	EXPECT_EQ(a.interval_min_us, b.interval_min_us);
	EXPECT_EQ(a.interval_init_ms, b.interval_init_ms);
	EXPECT_EQ(a.rtt_max_ms, b.rtt_max_ms);
	EXPECT_EQ(a.legacy, b.legacy);
	EXPECT_EQ(a.legacy_max_flows, b.legacy_max_flows);
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
		EXPECT_EQ(x.sl_service, y.sl_service);
		EXPECT_EQ(x.split_handshake, y.split_handshake);
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
	expect_same_link(a.emu, b.emu);
	expect_same_satlink(a.satlink, b.satlink);
	expect_same_lift(a.lift, b.lift);
	expect_same_xcp(a.xcp, b.xcp);
	expect_same_split(a.split, b.split);
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

/* docs/configuration.md quotes the example files: they must not drift apart. */
TEST(PolicyCorpus, DocsQuoteTheExamples)
{
	std::string doc = slurp(std::string(SGW_TEST_DATA_DIR) + "/../../docs/configuration.md");

	ASSERT_FALSE(doc.empty());
	for (const char *f : { "hub-example.yaml", "terminal-site.yaml", "emulator-geo.yaml",
			       "satlink-hub.yaml" }) {
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
	EXPECT_STREQ(errs.e[0].msg, "not a regular file");
	sgw_policy_free(&p);
}

// A FIFO given as the policy file used to block the control thread in open
// (and with it every later reload). It is refused at once. Should the loader
// block again, the watchdog opens the FIFO's other end so the test fails
// instead of hanging.
TEST(PolicyYaml, FifoIsRefusedWithoutBlocking)
{
	char dir[] = "/tmp/sgw-policy-fifo-XXXXXX";
	ASSERT_NE(mkdtemp(dir), nullptr);
	std::string path = std::string(dir) + "/policy.yaml";
	ASSERT_EQ(mkfifo(path.c_str(), 0600), 0);
	sgw_policy p;
	sgw_cfg_errors errs;
	auto done = std::async(std::launch::async,
			       [&]() { return sgw_policy_load_file(path.c_str(), &p, &errs); });
	bool blocked = done.wait_for(std::chrono::seconds(30)) != std::future_status::ready;
	if (blocked) {
		int fd = open(path.c_str(), O_WRONLY | O_NONBLOCK);  // release the reader
		if (fd >= 0)
			close(fd);
	}
	int rc = done.get();
	EXPECT_FALSE(blocked) << "sgw_policy_load_file blocked on a FIFO";
	EXPECT_EQ(rc, -1);
	ASSERT_EQ(errs.n, 1u);
	EXPECT_STREQ(errs.e[0].msg, "not a regular file");
	sgw_policy_free(&p);
	unlink(path.c_str());
	rmdir(dir);
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

/*
 * A byte that is not UTF-8 is reported at the line and column libyaml would
 * give it: a byte order mark takes no column, and CR, CR LF and NEL end
 * lines as LF does (the corpus cannot hold these: its headers are LF lines).
 */
TEST(PolicyYaml, InvalidUtf8PositionCountsLikeLibyaml)
{
	const struct {
		std::string text;
		uint32_t line, col;
	} cases[] = {
		{ "\xEF\xBB\xBFversion: \xff\n", 1, 10 },
		{ "version: 1\rrole: hub\rports: \xff\r", 3, 8 },
		{ "version: 1\r\nrole: hub\r\nports: \xff\r\n", 3, 8 },
		{ "version: 1\xC2\x85role: \xff\n", 2, 7 },
	};

	for (const auto &c : cases) {
		Loaded l("bin.yaml", c.text);

		SCOPED_TRACE(errors_text(l.errs));
		ASSERT_EQ(l.rc, -1);
		ASSERT_EQ(l.errs.n, 1u);
		EXPECT_EQ(l.errs.e[0].line, c.line);
		EXPECT_EQ(l.errs.e[0].col, c.col);
		EXPECT_NE(std::string(l.errs.e[0].msg).find("UTF-8"), std::string::npos);
	}
}

/* After a byte order mark, libyaml's marks are not byte offsets: the tab hint is still found. */
TEST(PolicyYaml, TabHintAfterByteOrderMark)
{
	Loaded l("bom.yaml", "\xEF\xBB\xBFversion: 1\nrole: hub\nports:\n  - name: a\n\tdevice: b\n");

	ASSERT_EQ(l.rc, -1);
	ASSERT_EQ(l.errs.n, 1u) << errors_text(l.errs);
	EXPECT_EQ(l.errs.e[0].line, 5u);
	EXPECT_EQ(l.errs.e[0].col, 1u);
	EXPECT_NE(std::string(l.errs.e[0].msg).find("YAML indents with spaces, not tabs"),
		  std::string::npos)
		<< l.errs.e[0].msg;
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

/* A private temporary directory, removed at the end (key files need mode 0600). */
class TmpDir {
public:
	TmpDir()
	{
		char tmpl[] = "/tmp/sgw_pol_XXXXXX";
		char *d = mkdtemp(tmpl);
		EXPECT_NE(d, nullptr);
		path_ = d != nullptr ? d : "/tmp";
	}
	~TmpDir() { fs::remove_all(path_); }
	TmpDir(const TmpDir &) = delete;
	TmpDir &operator=(const TmpDir &) = delete;

	std::string write(const std::string &name, const std::string &text, mode_t mode)
	{
		std::string p = path_ + "/" + name;
		std::ofstream(p, std::ios::binary) << text;
		EXPECT_EQ(chmod(p.c_str(), mode), 0);
		return p;
	}
	const std::string &path() const { return path_; }

private:
	std::string path_;
};

/* A satlink key file with an AES-128 key of its own for each id. */
std::string
key_file(const std::vector<uint32_t> &ids)
{
	std::string s = "# test keys\n";
	char line[64];

	for (uint32_t id : ids) {
		snprintf(line, sizeof(line), "%u %08x5eed0000000000000000%04x\n", id, id,
			 (unsigned)(s.size() & 0xffff));
		s += line;
	}
	return s;
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
	TmpDir tmp;
	int n_satlink = 0, n_keys = 0, n_services = 0, n_lift = 0, n_xcp = 0;

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
		/* satlink: needs a satellite port and a terminal (this one, at a terminal). */
		if (p.n_terminals > 0 && rnd(3) != 0) {
			sgw_satlink_conf &sl = p.satlink;
			sl.enabled = true;
			sl.port = (int16_t)rnd(p.n_ports);
			p.ports[sl.port].role = SGW_PORT_SATELLITE;
			if (p.role == SGW_ROLE_TERMINAL)
				sl.terminal_id = p.terminals[rnd(p.n_terminals)].id;
			if (rnd(2))
				for (auto &b : sl.peer_mac)
					b = (uint8_t)rng();
			sl.peer_mac[5] |= 1; /* never all zeros; multicast is fine */
			sl.forward_rate_bps = 1000 + ((uint64_t)rng() << 32 | rng()) %
				(400000000000ull - 999);
			sl.return_rate_bps = 1000 + rnd(100000000);
			sl.rtt_ms = 1 + rnd(10000);
			/* A frame must fit the port's MTU (1500 when not set). */
			if (p.ports[sl.port].mtu != 0 && p.ports[sl.port].mtu < 114)
				p.ports[sl.port].mtu = 114;
			sl.frame_size = (uint16_t)(64 + rnd(std::min(1960u,
				(p.ports[sl.port].mtu ? p.ports[sl.port].mtu : 1500u) - 50u) - 63));
			sl.retx_copies = (uint8_t)(1 + rnd(8));
			sl.retx_copies_idle = rnd(2) != 0;
			sl.frame_size_adapt = rnd(2) != 0;
			sl.frame_size_min = (uint16_t)(64 + rnd(sl.frame_size - 63u));
			sl.retx_spacing_us = rnd(1000001);
			sl.status_interval_ms = 1 + rnd(1000);
			sl.keepalive_ms = 10 + rnd(60000 - 9);
			sl.link_down_ms = std::max(20u, sl.keepalive_ms + 1 + rnd(600000 -
								  sl.keepalive_ms));
			sl.rto_max_ms = 200 + rnd(60000 - 199);
			sl.send_queue = 1 + rnd(65536);
			sl.window_max = 64 + rnd(8192 - 63);
			sl.default_service = (sgw_sl_service)(SGW_SL_SVC_RELIABLE + rnd(3));
			if (rnd(2)) {
				std::vector<uint32_t> ids;
				for (uint32_t i = 0; i < p.n_terminals; i++)
					ids.push_back(p.terminals[i].id);
				std::string kp = tmp.write("k" + std::to_string(iter) + ".keys",
							   key_file(ids), 0600);
				ASSERT_LT(kp.size(), sizeof(sl.keys));
				snprintf(sl.keys, sizeof(sl.keys), "%s", kp.c_str());
				n_keys++;
				/* lift: role hub, satlink with keys. */
				if (p.role == SGW_ROLE_HUB && rnd(2)) {
					sgw_lift_policy &lp = p.lift;
					lp.enabled = true;
					lp.timer_mode = (uint8_t)rnd(2);
					lp.timer_ms = 10 + rnd(60000 - 9);
					if (lp.timer_mode == SGW_LIFT_TIMER_POL_ADAPTIVE)
						lp.timer_min_ms = 10 + rnd(lp.timer_ms - 9);
					lp.max_frozen_ms = 100 + rnd(3600000 - 99);
					lp.share_window_ms = 1000 + rnd(3600000 - 999);
					lp.max_share_permille = 1 + rnd(1000);
					lp.suspend_ms = rnd(3600001);
					lp.max_flows = 1 + rnd(65536);
					lp.max_sas = rnd(65537);
					lp.thaw = rnd(2) != 0;
					lp.spare_frack = rnd(2) != 0;
					n_lift++;
				}
			}
			n_satlink++;
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
			if (r.action != SGW_ACT_DROP && p.satlink.enabled && rnd(2)) {
				r.sl_service = (sgw_sl_service)rnd(SGW_SL_SVC__COUNT);
				n_services += r.sl_service != SGW_SL_SVC_DEFAULT;
			}
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
		/* xcp: at satlink's port, or without satlink at a satellite port's shaper. */
		if (rnd(2)) {
			sgw_xcp_policy &xp = p.xcp;
			xp.enabled = true;
			xp.protocol = p.xcp_proto;
			if (p.satlink.enabled) {
				xp.port = p.satlink.port;
				xp.capacity_bps = rnd(2) ? 1000 + rnd(1000000000) : 0;
			} else {
				xp.port = (int16_t)rnd(p.n_ports);
				p.ports[xp.port].role = SGW_PORT_SATELLITE;
				xp.capacity_bps = 1000 + rnd(1000000000);
				xp.shaper_queue = 1 + rnd(65536);
			}
			/* Reals of every length: 1 to 17 significant digits. */
			xp.alpha = std::max(1e-9, (double)rng() / 4294967296.0 * 0.55);
			xp.beta = rnd(2) ? 0.226 : std::max(1e-9, (double)rng() / 4294967296.0);
			xp.gamma = rnd(3) == 0 ? 0.0 : (double)rnd(1001) / 1000.0;
			xp.rtt_max_ms = 1000 + rnd(59001);
			xp.interval_init_ms = 1 + rnd(xp.rtt_max_ms);
			xp.interval_min_us = 1 + rnd(std::min(1000000u, 1000 * xp.interval_init_ms));
			xp.legacy = rnd(2);
			xp.legacy_max_flows = 8 + rnd(1048576 - 7);
			n_xcp++;
		}

		SCOPED_TRACE("iteration " + std::to_string(iter));
		expect_round_trip(p);
		sgw_policy_free(&p);
	}
	/* The seed exercises every part. */
	EXPECT_GE(n_satlink, 10);
	EXPECT_GE(n_keys, 3);
	EXPECT_GE(n_lift, 1);
	EXPECT_GE(n_xcp, 10);
	EXPECT_GE(n_services, 10);
}


/* ---- role: emulator, the link section ----------------------------------------- */

TEST(PolicyYaml, EmulatorGeoValues)
{
	Loaded l(policy_dir("good") + "/emulator-geo.yaml");

	ASSERT_EQ(l.rc, 0) << errors_text(l.errs);
	const sgw_policy &p = l.p;
	const sgw_link_dir &f = p.emu.dir[SGW_LINK_FORWARD], &r = p.emu.dir[SGW_LINK_RETURN];
	EXPECT_EQ(p.role, SGW_ROLE_EMULATOR);
	EXPECT_EQ(p.emu.seed, 42u);
	EXPECT_EQ(f.from_port, 0);
	EXPECT_EQ(f.to_port, 1);
	EXPECT_EQ(r.from_port, 1);
	EXPECT_EQ(r.to_port, 0);
	EXPECT_EQ(f.em.rate_bps, 20000000u);
	EXPECT_EQ(f.em.delay_ns, 270000000u);
	EXPECT_EQ(f.em.jitter_ns, 500000u);
	EXPECT_EQ(f.em.overhead_bytes, 24u);
	EXPECT_EQ(f.em.queue_pkts, 1000u);
	EXPECT_EQ(f.em.queue_bytes, 1500000u);
	EXPECT_EQ(f.em.aqm, SGW_AQM_DROPTAIL);
	EXPECT_EQ(f.em.loss, SGW_LOSS_GE);
	EXPECT_EQ(f.em.good.mean_s, 4.0);
	EXPECT_EQ(f.em.good.ber, 0.0);
	EXPECT_EQ(f.em.good.p, 0.0);
	EXPECT_EQ(f.em.bad.mean_s, 1.0);
	EXPECT_EQ(f.em.bad.ber, 1e-5);
	EXPECT_EQ(f.em.bad.p, 0.01);
	EXPECT_EQ(f.em.n_outages, 0u);
	/* The return direction leaves most keys at their defaults. */
	EXPECT_EQ(r.em.rate_bps, 5000000u);
	EXPECT_EQ(r.em.delay_ns, 270000000u);
	EXPECT_EQ(r.em.jitter_ns, 0u);
	EXPECT_EQ(r.em.overhead_bytes, 0u);
	EXPECT_EQ(r.em.queue_pkts, 1000u);
	EXPECT_EQ(r.em.queue_bytes, 0u);
	EXPECT_EQ(r.em.good.ber, 0.0);
	EXPECT_EQ(r.em.good.p, 0.0001);
	EXPECT_EQ(r.em.bad.p, 0.3);
	/* Valid link models, and the example's mbufs cover both directions. */
	for (const sgw_link_dir &d : p.emu.dir) {
		char why[160] = "";
		EXPECT_EQ(sgw_linkem_conf_check(&d.em, why, sizeof(why)), 0) << why;
	}
	EXPECT_LT(sgw_linkem_max_in_flight(&f.em, 60) + sgw_linkem_max_in_flight(&r.em, 60),
		  (uint64_t)p.limits.mbufs);
}

TEST(PolicyYaml, EmulatorAsymmetricValues)
{
	Loaded l(policy_dir("good") + "/emulator-asymmetric.yaml");

	ASSERT_EQ(l.rc, 0) << errors_text(l.errs);
	const sgw_policy &p = l.p;
	const sgw_linkem_conf &f = p.emu.dir[SGW_LINK_FORWARD].em;
	const sgw_linkem_conf &r = p.emu.dir[SGW_LINK_RETURN].em;
	EXPECT_EQ(p.emu.seed, 1u); /* default */
	EXPECT_EQ(f.rate_bps, 100 * r.rate_bps);
	EXPECT_EQ(f.delay_ns, 255250000u);   /* 255.25 */
	EXPECT_EQ(f.jitter_ns, 2000000u);
	EXPECT_EQ(f.queue_pkts, 5000u);
	EXPECT_EQ(f.aqm, SGW_AQM_GRED);
	EXPECT_EQ(f.red_min_bytes, 30000u);
	EXPECT_EQ(f.red_max_bytes, 90000u);
	EXPECT_EQ(f.red_max_p, 0.1);
	EXPECT_EQ(f.red_wq, 0.002);
	EXPECT_EQ(f.loss, SGW_LOSS_BER);
	EXPECT_EQ(f.good.ber, 1e-7);
	ASSERT_EQ(f.n_outages, 2u);
	EXPECT_EQ(f.outages[0].start_ns, 10000000000u);
	EXPECT_EQ(f.outages[0].dur_ns, 2000000000u);
	EXPECT_EQ(f.outages[0].period_ns, 0u);
	EXPECT_EQ(f.outages[1].start_ns, 30000000000u);
	EXPECT_EQ(f.outages[1].dur_ns, 1000000000u);
	EXPECT_EQ(f.outages[1].period_ns, 60000000000u);
	EXPECT_EQ(r.delay_ns, 255000000u);   /* 2.55E2 */
	EXPECT_EQ(r.overhead_bytes, 8u);
	EXPECT_EQ(r.queue_pkts, 200u);
	EXPECT_EQ(r.queue_bytes, 100000u);
	EXPECT_EQ(r.aqm, SGW_AQM_RED);
	EXPECT_EQ(r.red_max_p, 0.25);        /* .25 */
	EXPECT_EQ(r.red_wq, 1.0);
	EXPECT_EQ(r.loss, SGW_LOSS_RANDOM);
	EXPECT_EQ(r.good.p, 0.001);
	ASSERT_EQ(r.n_outages, 1u);
	EXPECT_EQ(r.outages[0].start_ns, 1u);  /* 0.000000001 s */
	EXPECT_EQ(r.outages[0].dur_ns, 1500000u);
	EXPECT_EQ(r.outages[0].period_ns, 3600000000000u);
	EXPECT_EQ(p.ports[0].rx_desc, 2048);
}

/* An emulator policy around one forward direction's extra keys. */
std::string
emu_text(const std::string &fwd_extra, const std::string &link_extra = "")
{
	return "version: 1\nrole: emulator\nports:\n"
	       "  - {name: a, device: d0, role: satellite}\n"
	       "  - {name: b, device: d1, role: satellite}\n"
	       "link:\n" + link_extra +
	       "  forward: {from: a, to: b, rate_bps: 1000000" + fwd_extra + "}\n"
	       "  return: {from: b, to: a, rate_bps: 1000000}\n";
}

TEST(PolicyYaml, LinkDurationsAreExactDecimals)
{
	/* Decimal text to whole ns with no binary rounding; halves round up. */
	const struct {
		const char *text;
		uint64_t ns;
	} cases[] = {
		{ "0", 0 }, { "270", 270000000 }, { "0.000001", 1 }, { "0.0000004", 0 },
		{ "0.0000005", 1 }, { "1e3", 1000000000 }, { "2.5E-3", 2500 },
		{ "+7", 7000000 }, { "\"10000\"", 10000000000 }, { "9999.999999", 9999999999 },
		{ ".5", 500000 }, { "5.", 5000000 }, { "0.1", 100000 }, { "0.3", 300000 },
		{ "1234.56789012345678901234", 1234567890 },
		{ "123456789012345678901234e-20", 1234567890 }, { "0e99999", 0 },
		{ "0.00000000000000000000000000001e29", 1000000 },
	};

	for (const auto &c : cases) {
		Loaded l("d.yaml", emu_text(std::string(", delay_ms: ") + c.text));

		ASSERT_EQ(l.rc, 0) << c.text << "\n" << errors_text(l.errs);
		EXPECT_EQ(l.p.emu.dir[0].em.delay_ns, c.ns) << c.text;
	}
}

TEST(PolicyYaml, LinkRealsAndSeeds)
{
	const struct {
		const char *text;
		double x;
	} reals[] = {
		{ "1e-5", 1e-5 }, { "0.00001", 1e-5 }, { "1E-05", 1e-5 }, { "0", 0.0 },
		{ "-0", 0.0 }, { "-0.0e0", 0.0 }, { "1", 1.0 }, { ".5e-2", 0.005 },
		{ "4.9e-324", 4.9e-324 }, { "1e-400", 0.0 }, { "0.1", 0.1 },
	};

	for (const auto &r : reals) {
		std::string loss = std::string(", loss: {model: ber, ber: ") + r.text + "}";
		Loaded l("r.yaml", emu_text(loss));

		ASSERT_EQ(l.rc, 0) << r.text << "\n" << errors_text(l.errs);
		EXPECT_EQ(l.p.emu.dir[0].em.good.ber, r.x) << r.text;
		EXPECT_FALSE(std::signbit(l.p.emu.dir[0].em.good.ber)) << r.text;
	}
	for (const char *bad : { "1.0000000000000002", "-1e-300", "2", "1e", "e5", "0x0",
				 "1..2", "1e5.5", "- 1", "Inf", "+.inf", "--1", "" }) {
		std::string loss = std::string(", loss: {model: ber, ber: '") + bad + "'}";
		Loaded l("r.yaml", emu_text(loss));

		ASSERT_EQ(l.rc, -1) << bad;
		ASSERT_EQ(l.errs.n, 1u) << bad << "\n" << errors_text(l.errs);
		EXPECT_NE(std::string(l.errs.e[0].msg).find("'ber'"), std::string::npos)
			<< errors_text(l.errs);
	}
	const struct {
		const char *text;
		uint64_t seed;
	} seeds[] = { { "0", 0 }, { "0x2a", 42 }, { "18446744073709551615", UINT64_MAX } };
	for (const auto &s : seeds) {
		Loaded l("s.yaml", emu_text("", std::string("  seed: ") + s.text + "\n"));

		ASSERT_EQ(l.rc, 0) << s.text << "\n" << errors_text(l.errs);
		EXPECT_EQ(l.p.emu.seed, s.seed) << s.text;
	}
	Loaded dflt("s.yaml", emu_text(""));
	ASSERT_EQ(dflt.rc, 0) << errors_text(dflt.errs);
	EXPECT_EQ(dflt.p.emu.seed, 1u);
	EXPECT_EQ(dflt.p.emu.dir[0].em.loss, SGW_LOSS_NONE);
	EXPECT_EQ(dflt.p.emu.dir[0].em.queue_pkts, 1000u);
}

/* Random valid emulator policies, floats of every magnitude, survive dump -> load. */
TEST(PolicyYaml, RandomEmulatorPoliciesRoundTrip)
{
	std::mt19937_64 rng(4321);
	auto rnd = [&](uint64_t n) { return n ? rng() % n : 0; };
	auto u01 = [&]() { return double(rng() >> 11) * 0x1.0p-53; };
	/* A probability: exactly 0 or 1 sometimes, else log-uniform down to 1e-12. */
	auto prob = [&]() {
		uint64_t k = rnd(6);
		return k == 0 ? 0.0 : k == 1 ? 1.0 : k == 2 ? u01() : std::pow(10.0, -12 * u01());
	};

	for (int iter = 0; iter < 200; iter++) {
		sgw_policy p;

		sgw_policy_init_defaults(&p);
		p.role = SGW_ROLE_EMULATOR;
		p.n_ports = 2;
		for (unsigned i = 0; i < 2; i++) {
			snprintf(p.ports[i].name, SGW_NAME_MAX, "port%u", i);
			snprintf(p.ports[i].device, SGW_DEVICE_MAX, "net_ring%u", i);
			p.ports[i].peer = -1;
			p.ports[i].rx_desc = p.ports[i].tx_desc = 1024;
			p.ports[i].promiscuous = true;
		}
		p.emu.seed = rng();
		for (int d = 0; d < 2; d++) {
			sgw_link_dir &ld = p.emu.dir[d];
			sgw_linkem_conf &c = ld.em;

			ld.from_port = (int16_t)d;
			ld.to_port = (int16_t)(1 - d);
			sgw_linkem_conf_init(&c);
			c.rate_bps = 1000 + rnd(SGW_LINKEM_MAX_RATE_BPS - 999);
			c.delay_ns = rnd(2) ? rnd(SGW_LINKEM_MAX_DELAY_NS + 1) : 270000000;
			c.jitter_ns = rnd(2) ? rnd(SGW_LINKEM_MAX_DELAY_NS + 1) : 0;
			c.overhead_bytes = (uint32_t)rnd(SGW_LINKEM_MAX_OVERHEAD + 1);
			c.queue_pkts = 1 + (uint32_t)rnd(SGW_LINKEM_MAX_QUEUE_PKTS);
			c.queue_bytes = (uint32_t)rnd(SGW_LINKEM_MAX_QUEUE_BYTES + 1);
			c.aqm = (sgw_aqm)rnd(3);
			if (c.aqm != SGW_AQM_DROPTAIL) {
				c.red_max_bytes = 1 + (uint32_t)rnd(SGW_LINKEM_MAX_QUEUE_BYTES);
				c.red_min_bytes = (uint32_t)rnd(c.red_max_bytes);
				c.red_max_p = prob();
				c.red_wq = std::max(u01(), 1e-300);
			}
			c.loss = (sgw_loss_model)rnd(4);
			if (c.loss == SGW_LOSS_BER)
				c.good.ber = prob();
			if (c.loss == SGW_LOSS_RANDOM)
				c.good.p = prob();
			if (c.loss == SGW_LOSS_GE) {
				const double lo = SGW_LINKEM_GE_MIN_MEAN_S;
				const double hi = SGW_LINKEM_GE_MAX_MEAN_S;

				for (sgw_loss_state *s : { &c.good, &c.bad }) {
					/* Log-uniform over the whole range, clamped. */
					double span = std::log(hi) - std::log(lo);

					s->mean_s = std::exp(std::log(lo) + u01() * span);
					s->mean_s = std::min(std::max(s->mean_s, lo), hi);
					s->ber = prob();
					s->p = prob();
				}
			}
			c.n_outages = (uint32_t)rnd(SGW_LINKEM_MAX_OUTAGES + 1);
			for (uint32_t i = 0; i < c.n_outages; i++) {
				sgw_outage &o = c.outages[i];
				o.start_ns = rnd(31536000ull * 1000000000ull + 1);
				o.dur_ns = 1 + rnd(86400ull * 1000000000ull);
				o.period_ns = rnd(2) ? 0 : o.dur_ns + 1 +
					rnd(31536000ull * 1000000000ull - o.dur_ns);
			}
			char why[160] = "";
			ASSERT_EQ(sgw_linkem_conf_check(&c, why, sizeof(why)), 0) << why;
		}
		SCOPED_TRACE("iteration " + std::to_string(iter));
		expect_round_trip(p);
		sgw_policy_free(&p);
	}
}


/* ---- roles hub and terminal: the satlink section ------------------------------- */

TEST(PolicyYaml, SatlinkHubValues)
{
	Loaded l(policy_dir("good") + "/satlink-hub.yaml");

	ASSERT_EQ(l.rc, 0) << errors_text(l.errs);
	const sgw_satlink_conf &sl = l.p.satlink;
	const uint8_t mac[6] = { 2, 0, 0, 0, 4, 1 };
	EXPECT_TRUE(sl.enabled);
	EXPECT_EQ(sl.port, 1);
	EXPECT_EQ(sl.terminal_id, 0u);
	EXPECT_EQ(0, memcmp(sl.peer_mac, mac, 6));
	EXPECT_EQ(sl.forward_rate_bps, 20000000u);
	EXPECT_EQ(sl.return_rate_bps, 2000000u);
	EXPECT_EQ(sl.rtt_ms, 560u);
	EXPECT_EQ(sl.frame_size, 1400);
	EXPECT_EQ(sl.retx_copies, 2);
	EXPECT_TRUE(sl.retx_copies_idle);
	EXPECT_TRUE(sl.frame_size_adapt);
	EXPECT_EQ(sl.frame_size_min, 256);
	EXPECT_EQ(sl.retx_spacing_us, 5000u);
	EXPECT_EQ(sl.status_interval_ms, 20u);
	EXPECT_EQ(sl.keepalive_ms, 500u);
	EXPECT_EQ(sl.link_down_ms, 2000u);
	EXPECT_EQ(sl.rto_max_ms, 1000u);
	EXPECT_EQ(sl.send_queue, 1024u);
	EXPECT_EQ(sl.window_max, 8192u);
	EXPECT_EQ(sl.default_service, SGW_SL_SVC_RELIABLE);
	EXPECT_STREQ(sl.keys, "");
	ASSERT_EQ(l.p.n_rules, 4u);
	EXPECT_EQ(l.p.rules[0].sl_service, SGW_SL_SVC_DATAGRAM);
	EXPECT_EQ(l.p.rules[0].next_hop, 0);
	EXPECT_EQ(l.p.rules[1].sl_service, SGW_SL_SVC_BYPASS);
	EXPECT_EQ(l.p.rules[2].sl_service, SGW_SL_SVC_RELIABLE);
	EXPECT_EQ(l.p.rules[3].sl_service, SGW_SL_SVC_DEFAULT);
}

TEST(PolicyYaml, SatlinkMinimalTakesTheDefaults)
{
	Loaded l(policy_dir("good") + "/satlink-hub-minimal.yaml");
	sgw_policy d;

	ASSERT_EQ(l.rc, 0) << errors_text(l.errs);
	sgw_policy_init_defaults(&d);
	d.satlink.enabled = true;
	d.satlink.port = 1;
	d.satlink.forward_rate_bps = 20000000;
	d.satlink.return_rate_bps = 2000000;
	expect_same_satlink(l.p.satlink, d.satlink);
	const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	EXPECT_EQ(0, memcmp(l.p.satlink.peer_mac, bcast, 6));
	EXPECT_EQ(l.p.satlink.rtt_ms, 600u);
	EXPECT_EQ(l.p.satlink.default_service, SGW_SL_SVC_RELIABLE);

	/* The canonical form writes every key, defaults included. */
	std::string text = dump(l.p);
	EXPECT_NE(text.find("satlink:\n  port: sat\n  peer_mac: \"ff:ff:ff:ff:ff:ff\"\n"
			    "  forward_rate_bps: 20000000\n  return_rate_bps: 2000000\n"
			    "  rtt_ms: 600\n  frame_size: 1400\n  retx_copies: 2\n"
			    "  retx_spacing_us: 5000\n  status_interval_ms: 20\n"
			    "  keepalive_ms: 500\n  link_down_ms: 2000\n  rto_max_ms: 1000\n"
			    "  send_queue: 1024\n"
			    "  window_max: 8192\n  default_service: reliable\n"),
		  std::string::npos) << text;
	EXPECT_EQ(text.find("terminal: "), std::string::npos) << text;
	EXPECT_EQ(text.find("keys: "), std::string::npos) << text;
}

TEST(PolicyYaml, SatlinkTerminalValues)
{
	Loaded l(policy_dir("good") + "/satlink-terminal.yaml");

	ASSERT_EQ(l.rc, 0) << errors_text(l.errs);
	EXPECT_EQ(l.p.role, SGW_ROLE_TERMINAL);
	EXPECT_TRUE(l.p.satlink.enabled);
	EXPECT_EQ(l.p.satlink.port, 0);
	EXPECT_EQ(l.p.satlink.terminal_id, 1001u);
	EXPECT_EQ(l.p.satlink.rtt_ms, 541u);
	ASSERT_EQ(l.p.n_rules, 1u);
	EXPECT_EQ(l.p.rules[0].sl_service, SGW_SL_SVC_DATAGRAM);
	EXPECT_NE(dump(l.p).find("satlink:\n  port: sat\n  terminal: 1001\n"), std::string::npos);
}

/* A hub or terminal policy with a satlink section holding extra. */
std::string
satlink_text(const std::string &extra, const std::string &role = "hub")
{
	std::string s = "version: 1\nrole: " + role + "\nports:\n"
		"  - {name: terr, device: d0, role: terrestrial, peer: sat}\n"
		"  - {name: sat, device: d1, role: satellite, peer: terr}\n"
		"terminals:\n"
		"  - {name: site-a, id: 1001, prefixes: [10.20.1.0/24]}\n"
		"  - {name: site-b, id: 1002, prefixes: [10.20.2.0/24]}\n"
		"  - {name: site-c, id: 7, prefixes: [10.20.3.0/24]}\n"
		"satlink:\n  port: sat\n"
		"  forward_rate_bps: 20000000\n  return_rate_bps: 2000000\n";
	if (role == "terminal")
		s += "  terminal: 1001\n";
	return s + extra;
}

/* One error, its position and its text. */
void
expect_one_error(const Loaded &l, uint32_t line, uint32_t col, const std::string &msg)
{
	ASSERT_EQ(l.rc, -1);
	ASSERT_EQ(l.errs.n, 1u) << errors_text(l.errs);
	EXPECT_EQ(l.errs.e[0].line, line) << errors_text(l.errs);
	EXPECT_EQ(l.errs.e[0].col, col) << errors_text(l.errs);
	EXPECT_EQ(std::string(l.errs.e[0].msg), msg);
}

TEST(PolicyYaml, SatlinkAbsentOrEmptyIsOff)
{
	for (const char *text : { "", "satlink:\n", "satlink: ~\n" }) {
		Loaded l("s.yaml", std::string("version: 1\nrole: hub\nports: [{name: a, "
					       "device: d, role: satellite}]\n") + text);

		ASSERT_EQ(l.rc, 0) << errors_text(l.errs);
		EXPECT_FALSE(l.p.satlink.enabled);
		EXPECT_EQ(l.p.satlink.port, -1);
		EXPECT_EQ(dump(l.p).find("satlink"), std::string::npos);
	}
}

TEST(PolicyYaml, SatlinkRtoMax)
{
	/* The extra keys start at line 14 (hub). */
	expect_one_error(Loaded("s.yaml", satlink_text("  rto_max_ms: 199\n")), 14, 15,
			 "'rto_max_ms' 199 is out of range 200..60000");
	expect_one_error(Loaded("s.yaml", satlink_text("  rto_max_ms: 60001\n")), 14, 15,
			 "'rto_max_ms' 60001 is out of range 200..60000");
	/* Below rtt_ms is allowed: the backoff is then off, the RTO stays the line's. */
	Loaded ok("s.yaml", satlink_text("  rtt_ms: 2000\n  rto_max_ms: 500\n"));
	ASSERT_EQ(ok.rc, 0) << errors_text(ok.errs);
	EXPECT_EQ(ok.p.satlink.rto_max_ms, 500u);
	EXPECT_NE(dump(ok.p).find("  rto_max_ms: 500\n"), std::string::npos);
}

TEST(PolicyYaml, SatlinkLinkDownAgainstKeepalive)
{
	/* The extra keys start at line 14 (hub) or 15 (terminal). */
	expect_one_error(Loaded("s.yaml", satlink_text("  link_down_ms: 500\n")), 14, 17,
			 "'link_down_ms' 500 must be more than 'keepalive_ms' (500, the default)");
	expect_one_error(Loaded("s.yaml", satlink_text("  keepalive_ms: 2000\n")), 14, 17,
			 "'keepalive_ms' 2000 must be less than 'link_down_ms' (default 2000): "
			 "set 'link_down_ms' too");
	expect_one_error(Loaded("s.yaml", satlink_text("  keepalive_ms: 3000\n"
							 "  link_down_ms: 2999\n")), 15, 17,
			 "'link_down_ms' 2999 must be more than 'keepalive_ms' (3000)");
	/* A bad keepalive_ms is reported once, not compared. */
	expect_one_error(Loaded("s.yaml", satlink_text("  keepalive_ms: 5\n"
							 "  link_down_ms: 20\n")), 14, 17,
			 "'keepalive_ms' 5 is out of range 10..60000");

	Loaded ok("s.yaml", satlink_text("  keepalive_ms: 3000\n  link_down_ms: 3001\n"));
	ASSERT_EQ(ok.rc, 0) << errors_text(ok.errs);
	EXPECT_EQ(ok.p.satlink.keepalive_ms, 3000u);
	EXPECT_EQ(ok.p.satlink.link_down_ms, 3001u);
	Loaded edge("s.yaml", satlink_text("  keepalive_ms: 10\n  link_down_ms: 20\n"
					   "  retx_spacing_us: 0\n  rtt_ms: 10000\n",
					   "terminal"));
	ASSERT_EQ(edge.rc, 0) << errors_text(edge.errs);
	EXPECT_EQ(edge.p.satlink.link_down_ms, 20u);
	EXPECT_EQ(edge.p.satlink.retx_spacing_us, 0u);
	EXPECT_EQ(edge.p.satlink.rtt_ms, 10000u);
	expect_one_error(Loaded("s.yaml", satlink_text("  forward_rate_bps: 0x5d21dba000\n")),
			 14, 3, "duplicate key 'forward_rate_bps' in satlink (first at line 12)");
}

TEST(PolicyYaml, SatlinkLimitsAndForms)
{
	std::string text = "version: 1\nrole: terminal\nports:\n"
		"  - {name: sat, device: d1, role: satellite}\n"
		"terminals:\n  - {name: me, id: 0, prefixes: [10.0.0.0/8]}\n"
		"satlink: {port: sat, terminal: 0x0, forward_rate_bps: 400000000000, "
		"return_rate_bps: \"1000\", rtt_ms: 1, frame_size: 64, retx_copies: 1, "
		"retx_copies_when: always, frame_size_adapt: false, frame_size_min: 64, "
		"retx_spacing_us: 1000000, status_interval_ms: 1000, keepalive_ms: 60000, "
		"link_down_ms: 600000, rto_max_ms: 200, send_queue: 65536, window_max: 64, "
		"default_service: bypass, peer_mac: \"01:00:5E:00:00:01\"}\n";
	Loaded l("f.yaml", text);

	ASSERT_EQ(l.rc, 0) << errors_text(l.errs);
	const sgw_satlink_conf &sl = l.p.satlink;
	const uint8_t mcast[6] = { 1, 0, 0x5e, 0, 0, 1 };
	EXPECT_EQ(sl.terminal_id, 0u);
	EXPECT_EQ(sl.forward_rate_bps, 400000000000u);
	EXPECT_EQ(sl.return_rate_bps, 1000u);
	EXPECT_EQ(sl.rtt_ms, 1u);
	EXPECT_EQ(sl.frame_size, 64);
	EXPECT_EQ(sl.retx_copies, 1);
	EXPECT_FALSE(sl.retx_copies_idle);
	EXPECT_FALSE(sl.frame_size_adapt);
	EXPECT_EQ(sl.frame_size_min, 64);
	EXPECT_EQ(sl.retx_spacing_us, 1000000u);
	EXPECT_EQ(sl.status_interval_ms, 1000u);
	EXPECT_EQ(sl.keepalive_ms, 60000u);
	EXPECT_EQ(sl.link_down_ms, 600000u);
	EXPECT_EQ(sl.rto_max_ms, 200u);
	EXPECT_EQ(sl.send_queue, 65536u);
	EXPECT_EQ(sl.window_max, 64u);
	EXPECT_EQ(sl.default_service, SGW_SL_SVC_BYPASS);
	EXPECT_EQ(0, memcmp(sl.peer_mac, mcast, 6)); /* a group address is fine here */
	expect_round_trip(l.p);

	expect_one_error(Loaded("m.yaml", satlink_text("  peer_mac: \"00:00:00:00:00:00\"\n")),
			 14, 13, "MAC address '00:00:00:00:00:00' is all zeros");
	expect_one_error(Loaded("m.yaml", satlink_text("  peer_mac: 2\n")), 14, 13,
			 "bad MAC address '2' (expected xx:xx:xx:xx:xx:xx)");
	expect_one_error(Loaded("m.yaml", satlink_text("  keys: \"a\\tb\"\n")), 14, 9,
			 "'keys' must be a file path without control characters (got 'a?b')");
	expect_one_error(Loaded("m.yaml", satlink_text("  keys: [a]\n")), 14, 9,
			 "'keys' must be a file path (got a list)");
	expect_one_error(Loaded("m.yaml", satlink_text("  terminal: 1001\n")), 14, 3,
			 "'terminal' is only used by role terminal (this policy's role is hub: it "
			 "has a session per terminal)");
	expect_one_error(Loaded("m.yaml", satlink_text("", "terminal") + "  window_max: 9000\n"),
			 15, 15, "'window_max' 9000 is out of range 64..8192");
}

TEST(PolicyYaml, SatlinkRuleServices)
{
	std::string rules = "rules:\n"
		"  - {name: a, action: forward, satlink: reliable}\n"
		"  - {name: b, action: count, satlink: datagram}\n"
		"  - {name: c, action: forward, satlink: bypass}\n"
		"  - {name: d, action: drop}\n";
	Loaded l("r.yaml", satlink_text("") + rules);

	ASSERT_EQ(l.rc, 0) << errors_text(l.errs);
	EXPECT_EQ(l.p.rules[0].sl_service, SGW_SL_SVC_RELIABLE);
	EXPECT_EQ(l.p.rules[1].sl_service, SGW_SL_SVC_DATAGRAM);
	EXPECT_EQ(l.p.rules[2].sl_service, SGW_SL_SVC_BYPASS);
	EXPECT_EQ(l.p.rules[3].sl_service, SGW_SL_SVC_DEFAULT);
	expect_round_trip(l.p);

	/*
	 * Refused without the section (a broken one counts as there: reported
	 * once, as itself), and on drop rules; the section after the rules.
	 */
	expect_one_error(Loaded("r.yaml", "version: 1\nrole: terminal\nports: [{name: a, device: "
				"d, role: lan}]\nrules:\n  - {name: web, action: forward, "
				"satlink: bypass}\n"), 5, 34,
			 "rule 'web' names a satlink service but the policy has no satlink section");
	expect_one_error(Loaded("r.yaml", "version: 1\nrole: hub\nports: [{name: a, device: d, "
				"role: satellite}]\nrules:\n  - {name: x, action: forward, satlink: "
				"datagram}\nsatlink: [port]\n"), 6, 10,
			 "'satlink' must be a mapping (got a list)");
	expect_one_error(Loaded("r.yaml", "version: 1\nrole: hub\nports: [{name: a, device: d, "
				"role: satellite}]\nrules:\n  - {name: x, action: drop, satlink: "
				"datagram}\nterminals: [{name: t, id: 1, prefixes: 10.0.0.0/8}]\n"
				"satlink: {port: a, forward_rate_bps: 1000, return_rate_bps: 1000}\n"),
			 5, 29, "'satlink' is only allowed with action forward or count (this rule "
			 "drops)");
	expect_one_error(Loaded("r.yaml", satlink_text("") + "rules:\n  - {name: x, action: "
				"forward, satlnk: datagram}\n"), 15, 32,
			 "unknown key 'satlnk' in rule (did you mean 'satlink'?)");
}

/* A policy file and its key file in one private directory. */
struct KeyedPolicy {
	TmpDir dir;
	std::string policy, keys;

	KeyedPolicy(const std::string &text, const std::string &key_text, mode_t mode = 0600,
		    const std::string &key_name = "satlink.keys")
	{
		policy = dir.write("hub.yaml", text, 0644);
		keys = dir.path() + "/" + key_name;
		if (!key_text.empty())
			dir.write(key_name, key_text, mode);
	}
};

TEST(PolicyYaml, SatlinkKeysRelativeToThePolicyFile)
{
	KeyedPolicy kp(satlink_text("  keys: satlink.keys\n"), key_file({ 1001, 1002, 7 }));
	Loaded l(kp.policy);

	ASSERT_EQ(l.rc, 0) << errors_text(l.errs);
	EXPECT_EQ(std::string(l.p.satlink.keys), kp.keys);
	expect_round_trip(l.p);
	EXPECT_NE(dump(l.p).find("  keys: \"" + kp.keys + "\"\n"), std::string::npos);

	/* Absolute paths are taken as they are; a terminal needs only its own key. */
	KeyedPolicy t(satlink_text("  keys: \"" + kp.keys + "\"\n", "terminal"), "");
	Loaded lt(t.policy);
	ASSERT_EQ(lt.rc, 0) << errors_text(lt.errs);
	EXPECT_EQ(std::string(lt.p.satlink.keys), kp.keys);
	KeyedPolicy own(satlink_text("  keys: k\n", "terminal"), key_file({ 1001 }), 0640, "k");
	Loaded lo(own.policy);
	ASSERT_EQ(lo.rc, 0) << errors_text(lo.errs);

	/* A buffer's name is the file: its directory, or none. */
	std::string text = satlink_text("  keys: satlink.keys\n");
	expect_one_error(Loaded("no-such-dir/hub.yaml", text), 14, 9,
			 "satlink keys: no-such-dir/satlink.keys: cannot open: No such file or "
			 "directory");
	Loaded named((kp.dir.path() + "/other.yaml").c_str(), text);
	ASSERT_EQ(named.rc, 0) << errors_text(named.errs);
	EXPECT_EQ(std::string(named.p.satlink.keys), kp.keys);

	/* Too long once resolved: 255 bytes at most. */
	std::string dir(250, 'd');
	expect_one_error(Loaded((dir + "/hub.yaml").c_str(), text), 14, 9,
			 "'keys' path 'satlink.keys' is too long: 263 bytes once resolved (at "
			 "most 255)");
	std::string at_most = std::string(242, 'd') + "/";
	/* 255 bytes: fits, then cannot be opened (the message is cut at 255 bytes). */
	Loaded fits((at_most + "hub.yaml").c_str(), text);
	ASSERT_EQ(fits.errs.n, 1u) << errors_text(fits.errs);
	EXPECT_EQ(std::string(fits.errs.e[0].msg),
		  ("satlink keys: " + at_most + "satlink.keys: cannot open").substr(0, 255));
}

TEST(PolicyYaml, SatlinkKeyFileErrorsAtTheKeysValue)
{
	/* Every error of the key loader, one per line, at the keys value. */
	std::string bad = "# keys\n1001 00112233445566778899aabbccddeeff\n"
		"1002 0011223344556677889\n7 zz112233445566778899aabbccddeeff\n";
	KeyedPolicy kb(satlink_text("  rtt_ms: 500\n  keys: satlink.keys\n"), bad);
	Loaded l(kb.policy);

	ASSERT_EQ(l.rc, -1);
	ASSERT_EQ(l.errs.n, 2u) << errors_text(l.errs);
	EXPECT_EQ(l.errs.e[0].line, 15u);
	EXPECT_EQ(l.errs.e[0].col, 9u);
	EXPECT_EQ(std::string(l.errs.e[0].msg), "satlink keys: " + kb.keys +
		  ":3: terminal 1002: key has an odd number of hex digits (19)");
	EXPECT_EQ(l.errs.e[1].line, 15u);
	EXPECT_EQ(l.errs.e[1].col, 9u);
	EXPECT_EQ(std::string(l.errs.e[1].msg), "satlink keys: " + kb.keys +
		  ":4: terminal 7: key character 1 is not a hex digit");
	EXPECT_EQ(l.p.n_terminals, 0u); /* a failed load leaves nothing */

	/* The permission rule of the key loader. */
	KeyedPolicy kp(satlink_text("  keys: satlink.keys\n"), key_file({ 1001, 1002, 7 }), 0644);
	expect_one_error(Loaded(kp.policy), 14, 9, "satlink keys: " + kp.keys +
			 ": permissions 0644 are too open: a key file must not be accessible by "
			 "others nor writable by its group (chmod 600 or 640)");
}

TEST(PolicyYaml, SatlinkEverySessionNeedsAKey)
{
	/* A hub: every terminal; the first without a key is named. */
	KeyedPolicy hub(satlink_text("  keys: satlink.keys\n"), key_file({ 1001, 99 }));
	expect_one_error(Loaded(hub.policy), 14, 9, "satlink keys: " + hub.keys +
			 " has no key for terminal 'site-b' (id 1002)");

	/* A terminal: its own. */
	KeyedPolicy term(satlink_text("  keys: satlink.keys\n", "terminal"),
			 key_file({ 1002, 7 }));
	expect_one_error(Loaded(term.policy), 15, 9, "satlink keys: " + term.keys +
			 " has no key for terminal 'site-a' (id 1001)");
}

} /* namespace */
