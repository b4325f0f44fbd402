/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sgw_rules_lookup cost with 1, 16 and 256 rules where only the last rule
 * matches: the worst case a flow's first packet pays before the dataplane
 * caches the verdict per flow. Every earlier rule passes its proto and port
 * checks and fails on the destination prefix, the last check made, so each
 * miss costs as much as a miss can. Policies are built in code (this binary
 * links sgw_lib only, no YAML).
 */
#include <benchmark/benchmark.h>

#include <cstring>
#include <vector>

#include "sgw_policy.h"

namespace {

struct Setup {
	std::vector<sgw_rule> rules;
	sgw_policy p;
	sgw_match_key key;
	uint8_t src[16], dst[16];

	Setup(int n, uint8_t family)
	{
		rules.resize(n);
		for (int i = 0; i < n; i++) {
			sgw_rule &r = rules[i];

			sgw_rule_init(&r);
			r.n_proto = 2;
			r.proto[0] = 17;
			r.proto[1] = 6;
			r.n_dport = 2;
			r.dport[0] = { 80, 80 };
			r.dport[1] = { 443, 443 };
			r.n_dst = 1;
			r.dst[0].family = family;
			if (family == 4) {
				r.dst[0].len = 16;
				r.dst[0].addr[0] = 10;
				r.dst[0].addr[1] = (uint8_t)i;
			} else {
				r.dst[0].len = 48;
				r.dst[0].addr[0] = 0x20;
				r.dst[0].addr[1] = 0x01;
				r.dst[0].addr[5] = (uint8_t)i;
			}
		}
		sgw_policy_init_defaults(&p);
		p.rules = rules.data();
		p.n_rules = (uint32_t)n;

		memset(&key, 0, sizeof(key));
		memset(src, 0, sizeof(src));
		memset(dst, 0, sizeof(dst));
		memcpy(dst, rules[n - 1].dst[0].addr, 16);
		dst[family == 4 ? 3 : 15] = 1;
		src[0] = family == 4 ? 192 : 0x20;
		key.in_port = 0;
		key.terminal = -1;
		key.family = family;
		key.proto = 6;
		key.has_ports = 1;
		key.sport = 40000;
		key.dport = 443;
		key.src = src;
		key.dst = dst;
	}
};

void
BM_RulesLookupLastMatch(benchmark::State &state, uint8_t family)
{
	Setup s((int)state.range(0), family);

	if (sgw_rules_lookup(&s.p, &s.key) != (int32_t)state.range(0) - 1) {
		state.SkipWithError("the last rule does not match");
		return;
	}
	for (auto _ : state) {
		int32_t r = sgw_rules_lookup(&s.p, &s.key);

		benchmark::DoNotOptimize(r);
	}
	state.SetItemsProcessed(state.iterations());
}

void
BM_RulesLookupLastMatchV4(benchmark::State &state)
{
	BM_RulesLookupLastMatch(state, 4);
}

void
BM_RulesLookupLastMatchV6(benchmark::State &state)
{
	BM_RulesLookupLastMatch(state, 6);
}

BENCHMARK(BM_RulesLookupLastMatchV4)->Arg(1)->Arg(16)->Arg(256);
BENCHMARK(BM_RulesLookupLastMatchV6)->Arg(1)->Arg(16)->Arg(256);

} /* namespace */

BENCHMARK_MAIN();
