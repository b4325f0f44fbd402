// SPDX-License-Identifier: BSD-3-Clause
// Google Benchmarks for lib/sgw_slcrypto.c (satlink AES-GCM through Intel
// IPsec-MB), per frame, at 64, 512 and 1400 payload bytes, AES-128 and
// AES-256, with a 24-byte AAD (an Ethernet header and a satlink header's worth):
//  - BM_SealOpen: seal in place on one end, open in place on the other (the
//    figure docs/satlink-security.md quotes);
//  - BM_Seal, BM_Open: each side alone (open from pre-sealed frames, apart);
//  - BM_ImbGcmEncDec: IPsec-MB's one-shot GCM encrypt + decrypt alone, same
//    sizes: what the layer adds is BM_SealOpen minus this.
// items_per_second counts frames, so 1e9 / items_per_second is ns/frame;
// bytes_per_second counts payload bytes.
// Reproduce: tests/bench/bench_lib_slcrypto --benchmark_repetitions=5
//            --benchmark_enable_random_interleaving=true
//            --benchmark_report_aggregates_only=true  (docs/satlink-security.md)

#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <intel-ipsec-mb.h>

#include "sgw_slcrypto.h"

namespace {

constexpr uint32_t kAad = 24;
constexpr uint32_t kBatch = 1024;

// Bench keys only: never use on a link.
const char *kKeys =
	"1 32a73b28162f89ea833a6b7709fd6f42\n"
	"2 0d573e71ff4e310d2179419985be801ea5577ea9adc7cae741d754d03fd1d5e8\n";

struct Setup {
	sgw_slcrypto_engine *eng = nullptr;
	sgw_slcrypto_keys *keys = nullptr;

	explicit Setup(int bits)
	{
		char err[256];

		eng = sgw_slcrypto_engine_create(SGW_SLC_ARCH_AUTO);
		sgw_slcrypto_keys_parse("bench", kKeys, strlen(kKeys), &keys, err, sizeof(err));
		id = bits == 128 ? 1 : 2;
	}
	~Setup()
	{
		sgw_slcrypto_keys_free(keys);
		sgw_slcrypto_engine_destroy(eng);
	}
	Setup(const Setup &) = delete;
	Setup &operator=(const Setup &) = delete;

	sgw_slcrypto_ctx *
	ctx(sgw_slc_role role) const
	{
		sgw_slcrypto_conf c;

		memset(&c, 0, sizeof(c));
		c.role = role;
		c.tx_epoch = 1;
		return sgw_slcrypto_ctx_create(eng, sgw_slcrypto_keys_find(keys, id), &c);
	}

	uint32_t id;
};

bool
check(benchmark::State &state, const Setup &s)
{
	if (s.eng == nullptr || s.keys == nullptr) {
		state.SkipWithError("no engine or keys");
		return false;
	}
	state.SetLabel(std::string(sgw_slcrypto_engine_arch(s.eng)) + " aes" +
		       std::to_string(state.range(0)));
	return true;
}

void
done(benchmark::State &state, uint32_t len)
{
	state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
	state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * len);
}

// The frame as the dataplane holds it: [aad][nonce][payload][tag].
void
BM_SealOpen(benchmark::State &state)
{
	Setup s(static_cast<int>(state.range(0)));
	if (!check(state, s))
		return;
	const uint32_t len = static_cast<uint32_t>(state.range(1));
	sgw_slcrypto_ctx *tx = s.ctx(SGW_SLC_ROLE_HUB);
	sgw_slcrypto_ctx *rx = s.ctx(SGW_SLC_ROLE_TERMINAL);
	std::vector<uint8_t> buf(kAad + SGW_SLC_OVERHEAD + len, 0x5a);
	uint8_t *frame = buf.data() + kAad;
	uint8_t *payload = frame + SGW_SLC_NONCE_LEN;

	for (auto _ : state) {
		int r = sgw_slcrypto_seal(tx, buf.data(), kAad, payload, len, frame,
					  len + SGW_SLC_OVERHEAD);
		r = sgw_slcrypto_open(rx, buf.data(), kAad, frame, static_cast<uint32_t>(r),
				      payload);
		if (r != static_cast<int>(len)) {
			state.SkipWithError("open failed");
			break;
		}
		benchmark::DoNotOptimize(payload[0]);
	}
	done(state, len);
	sgw_slcrypto_ctx_destroy(tx);
	sgw_slcrypto_ctx_destroy(rx);
}

void
BM_Seal(benchmark::State &state)
{
	Setup s(static_cast<int>(state.range(0)));
	if (!check(state, s))
		return;
	const uint32_t len = static_cast<uint32_t>(state.range(1));
	sgw_slcrypto_ctx *tx = s.ctx(SGW_SLC_ROLE_HUB);
	std::vector<uint8_t> buf(kAad + SGW_SLC_OVERHEAD + len, 0x5a);
	uint8_t *frame = buf.data() + kAad;

	for (auto _ : state) {
		int r = sgw_slcrypto_seal(tx, buf.data(), kAad, frame + SGW_SLC_NONCE_LEN, len,
					  frame, len + SGW_SLC_OVERHEAD);
		benchmark::DoNotOptimize(r);
		benchmark::ClobberMemory();
	}
	done(state, len);
	sgw_slcrypto_ctx_destroy(tx);
}

// Opens kBatch pre-sealed frames (apart, so they stay sealed), then a fresh
// receiver (outside the timing) for the next round over the same frames.
void
BM_Open(benchmark::State &state)
{
	Setup s(static_cast<int>(state.range(0)));
	if (!check(state, s))
		return;
	const uint32_t len = static_cast<uint32_t>(state.range(1));
	const uint32_t flen = len + SGW_SLC_OVERHEAD;
	sgw_slcrypto_ctx *tx = s.ctx(SGW_SLC_ROLE_HUB);
	std::vector<uint8_t> aad(kAad, 0x11), pt(len, 0x22), out(len + 1);
	std::vector<uint8_t> frames(static_cast<size_t>(kBatch) * flen);
	for (uint32_t i = 0; i < kBatch; i++)
		sgw_slcrypto_seal(tx, aad.data(), kAad, pt.data(), len, &frames[i * flen], flen);
	sgw_slcrypto_ctx *rx = s.ctx(SGW_SLC_ROLE_TERMINAL);
	uint32_t i = 0;

	for (auto _ : state) {
		if (i == kBatch) {
			state.PauseTiming();
			sgw_slcrypto_ctx_destroy(rx);
			rx = s.ctx(SGW_SLC_ROLE_TERMINAL);
			i = 0;
			state.ResumeTiming();
		}
		int r = sgw_slcrypto_open(rx, aad.data(), kAad, &frames[i * flen], flen,
					  out.data());
		if (r != static_cast<int>(len)) {
			state.SkipWithError("open failed");
			break;
		}
		i++;
	}
	done(state, len);
	sgw_slcrypto_ctx_destroy(tx);
	sgw_slcrypto_ctx_destroy(rx);
}

// IPsec-MB alone: one-shot encrypt then decrypt in place, same sizes, no
// nonce building, window or tag compare.
void
BM_ImbGcmEncDec(benchmark::State &state)
{
	const int bits = static_cast<int>(state.range(0));
	const uint32_t len = static_cast<uint32_t>(state.range(1));
	IMB_MGR *mgr = alloc_mb_mgr(0);
	if (mgr == nullptr) {
		state.SkipWithError("alloc_mb_mgr");
		return;
	}
	IMB_ARCH arch;
	init_mb_mgr_auto(mgr, &arch);
	alignas(64) gcm_key_data kd;
	gcm_context_data gc;
	uint8_t key[32] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
			    17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32 };
	uint8_t iv[12] = { 0 }, tag[16], tag2[16];
	std::vector<uint8_t> aad(kAad, 0x11), buf(len, 0x22);
	if (bits == 128)
		IMB_AES128_GCM_PRE(mgr, key, &kd);
	else
		IMB_AES256_GCM_PRE(mgr, key, &kd);
	state.SetLabel("aes" + std::to_string(bits));

	for (auto _ : state) {
		iv[11]++;
		if (bits == 128) {
			IMB_AES128_GCM_ENC(mgr, &kd, &gc, buf.data(), buf.data(), len, iv,
					   aad.data(), kAad, tag, 16);
			IMB_AES128_GCM_DEC(mgr, &kd, &gc, buf.data(), buf.data(), len, iv,
					   aad.data(), kAad, tag2, 16);
		} else {
			IMB_AES256_GCM_ENC(mgr, &kd, &gc, buf.data(), buf.data(), len, iv,
					   aad.data(), kAad, tag, 16);
			IMB_AES256_GCM_DEC(mgr, &kd, &gc, buf.data(), buf.data(), len, iv,
					   aad.data(), kAad, tag2, 16);
		}
		benchmark::DoNotOptimize(tag2[0]);
		benchmark::ClobberMemory();
	}
	done(state, len);
	free_mb_mgr(mgr);
}

void
Sizes(benchmark::internal::Benchmark *b)
{
	b->ArgNames({ "bits", "len" });
	for (int bits : { 128, 256 })
		for (int len : { 64, 512, 1400 })
			b->Args({ bits, len });
}

BENCHMARK(BM_SealOpen)->Apply(Sizes);
BENCHMARK(BM_Seal)->Apply(Sizes);
BENCHMARK(BM_Open)->Apply(Sizes);
BENCHMARK(BM_ImbGcmEncDec)->Apply(Sizes);

}  // namespace

BENCHMARK_MAIN();
