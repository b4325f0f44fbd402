/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Tests of lib/sgw_slcrypto.c, satlink frame protection with AES-GCM through
 * Intel IPsec-MB:
 *  - known answers: the GCM specification's test cases 3, 4 (AES-128) and
 *    15, 16 (AES-256) (McGrew & Viega, "The Galois/Counter Mode of Operation
 *    (GCM)", 2005, appendix B) come out of sgw_slcrypto_seal byte for byte,
 *    nonce included, and open from the spec's own bytes, on every IPsec-MB
 *    arch this CPU has;
 *  - round trips, in place and apart, AES-128 and AES-256, 0 to 65535 bytes;
 *  - forgeries: every single-bit flip of AAD, nonce, ciphertext and tag is
 *    refused and counted, and no plaintext comes out; wrong key; reflection;
 *  - replay: duplicates, out of order inside the window, too old, a window
 *    model compared over random traffic, a forged epoch that must not reset
 *    the window, the receive floor for a restarted receiver;
 *  - nonces: 10^5 frames per direction under one key and one epoch, all
 *    distinct, across both directions and a restart; counter exhaustion;
 *  - the key file: the good files, every parser error as FILE:LINE, no key
 *    material in messages, the permission rule.
 */
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <memory>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <unordered_set>
#include <vector>

#include "sgw_slcrypto.h"

namespace fs = std::filesystem;

namespace {

using Bytes = std::vector<uint8_t>;

Bytes
hex(const std::string &s)
{
	Bytes b;

	for (size_t i = 0; i + 1 < s.size(); i += 2)
		b.push_back((uint8_t)std::stoul(s.substr(i, 2), nullptr, 16));
	return b;
}

std::string
tohex(const uint8_t *p, size_t n)
{
	static const char d[] = "0123456789abcdef";
	std::string s;

	for (size_t i = 0; i < n; i++) {
		s += d[p[i] >> 4];
		s += d[p[i] & 15];
	}
	return s;
}

std::string
tohex(const Bytes &b)
{
	return tohex(b.data(), b.size());
}

std::string
data_dir(const std::string &sub)
{
	return std::string(SGW_TEST_DATA_DIR) + "/keys/" + sub;
}

std::string
slurp(const std::string &path)
{
	std::ifstream f(path, std::ios::binary);
	std::stringstream ss;

	ss << f.rdbuf();
	return ss.str();
}

struct EngineDel {
	void operator()(sgw_slcrypto_engine *e) const { sgw_slcrypto_engine_destroy(e); }
};
struct KeysDel {
	void operator()(sgw_slcrypto_keys *k) const { sgw_slcrypto_keys_free(k); }
};
struct CtxDel {
	void operator()(sgw_slcrypto_ctx *c) const { sgw_slcrypto_ctx_destroy(c); }
};
using EnginePtr = std::unique_ptr<sgw_slcrypto_engine, EngineDel>;
using KeysPtr = std::unique_ptr<sgw_slcrypto_keys, KeysDel>;
using CtxPtr = std::unique_ptr<sgw_slcrypto_ctx, CtxDel>;

KeysPtr
parse_keys(const std::string &text, std::string *err = nullptr)
{
	sgw_slcrypto_keys *k = nullptr;
	char buf[4096];

	int r = sgw_slcrypto_keys_parse("test.keys", text.data(), text.size(), &k, buf,
					sizeof(buf));
	if (err != nullptr)
		*err = buf;
	EXPECT_EQ(r == 0, k != nullptr);
	return KeysPtr(k);
}

sgw_slcrypto_conf
conf(sgw_slc_role role, uint32_t epoch, uint32_t window = 0)
{
	sgw_slcrypto_conf c;

	memset(&c, 0, sizeof(c));
	c.role = role;
	c.tx_epoch = epoch;
	c.replay_window = window;
	return c;
}

CtxPtr
make_ctx(sgw_slcrypto_engine *eng, const sgw_slcrypto_key *key, sgw_slc_role role,
	 uint32_t epoch, uint32_t window = 0)
{
	sgw_slcrypto_conf c = conf(role, epoch, window);
	return CtxPtr(sgw_slcrypto_ctx_create(eng, key, &c));
}

sgw_slcrypto_stats
stats(const sgw_slcrypto_ctx *c)
{
	sgw_slcrypto_stats st;

	sgw_slcrypto_get_stats(c, &st);
	return st;
}

/* Seal apart; returns the sealed bytes (nonce || ct || tag), empty on error. */
Bytes
seal(sgw_slcrypto_ctx *c, const Bytes &aad, const Bytes &pt, int *rc = nullptr)
{
	Bytes out(pt.size() + SGW_SLC_OVERHEAD);
	int r = sgw_slcrypto_seal(c, aad.data(), (uint32_t)aad.size(), pt.data(),
				  (uint32_t)pt.size(), out.data(), (uint32_t)out.size());
	if (rc != nullptr)
		*rc = r;
	if (r < 0)
		return Bytes();
	EXPECT_EQ((size_t)r, out.size());
	return out;
}

/* Open apart; returns the result code and fills *pt on success. */
int
open_frame(sgw_slcrypto_ctx *c, const Bytes &aad, const Bytes &frame, Bytes *pt = nullptr)
{
	Bytes out(frame.size() >= SGW_SLC_OVERHEAD ? frame.size() - SGW_SLC_OVERHEAD + 1 : 1,
		  0xa5);
	int r = sgw_slcrypto_open(c, aad.data(), (uint32_t)aad.size(), frame.data(),
				  (uint32_t)frame.size(), out.data());
	if (r >= 0 && pt != nullptr)
		*pt = Bytes(out.begin(), out.begin() + r);
	return r;
}

Bytes
pattern(size_t n, uint32_t seed)
{
	Bytes b(n);
	std::mt19937 rng(seed);

	for (auto &x : b)
		x = (uint8_t)rng();
	return b;
}

/* Test keys (also in tests/data/keys/hub.keys). Never use on a link. */
const char *kKeys =
	"# TEST KEYS ONLY\n"
	"1001 32a73b28162f89ea833a6b7709fd6f42\n"
	"1002 0d573e71ff4e310d2179419985be801ea5577ea9adc7cae741d754d03fd1d5e8\n"
	"1003 23c91547ba0af12bb0b87316a6f2f27d\n"
	"1004 8dcfad9538a9f8d410f44e6bce0f5a81fc8e8bff7267b01785f1e22a39321937\n";

class Slc : public ::testing::Test {
 protected:
	void
	SetUp() override
	{
		eng_.reset(sgw_slcrypto_engine_create(SGW_SLC_ARCH_AUTO));
		ASSERT_NE(eng_, nullptr);
		keys_ = parse_keys(kKeys);
		ASSERT_NE(keys_, nullptr);
	}

	const sgw_slcrypto_key *
	key(uint32_t id) const
	{
		return sgw_slcrypto_keys_find(keys_.get(), id);
	}

	/* A hub and a terminal sharing terminal id's key. */
	void
	pair(uint32_t id, CtxPtr *hub, CtxPtr *term, uint32_t hub_epoch = 1,
	     uint32_t term_epoch = 1, uint32_t window = 0)
	{
		*hub = make_ctx(eng_.get(), key(id), SGW_SLC_ROLE_HUB, hub_epoch, window);
		*term = make_ctx(eng_.get(), key(id), SGW_SLC_ROLE_TERMINAL, term_epoch, window);
		ASSERT_NE(*hub, nullptr);
		ASSERT_NE(*term, nullptr);
	}

	EnginePtr eng_;
	KeysPtr keys_;
};

/* ------------------------------------------------------- known answers */

struct Kat {
	const char *name;
	const char *key, *iv, *aad, *pt, *ct, *tag;
};

/* McGrew & Viega, GCM specification (2005), appendix B, test cases 3, 4, 15, 16. */
const Kat kKats[] = {
	{ "case3_aes128", "feffe9928665731c6d6a8f9467308308", "cafebabefacedbaddecaf888", "",
	  "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72"
	  "1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b391aafd255",
	  "42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e"
	  "21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091473f5985",
	  "4d5c2af327cd64a62cf35abd2ba6fab4" },
	{ "case4_aes128", "feffe9928665731c6d6a8f9467308308", "cafebabefacedbaddecaf888",
	  "feedfacedeadbeeffeedfacedeadbeefabaddad2",
	  "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72"
	  "1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39",
	  "42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e"
	  "21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091",
	  "5bc94fbc3221a5db94fae95ae7121a47" },
	{ "case15_aes256",
	  "feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308",
	  "cafebabefacedbaddecaf888", "",
	  "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72"
	  "1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b391aafd255",
	  "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa"
	  "8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662898015ad",
	  "b094dac5d93471bdec1a502270e3cc6c" },
	{ "case16_aes256",
	  "feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308",
	  "cafebabefacedbaddecaf888", "feedfacedeadbeeffeedfacedeadbeefabaddad2",
	  "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72"
	  "1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39",
	  "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa"
	  "8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662",
	  "76fc6ece0f4e1768cddf8853bb2d551b" },
};

const sgw_slc_arch kArchs[] = { SGW_SLC_ARCH_AUTO, SGW_SLC_ARCH_SSE, SGW_SLC_ARCH_AVX,
				SGW_SLC_ARCH_AVX2, SGW_SLC_ARCH_AVX512 };

/*
 * The spec's IV cafebabe facedbaddecaf888 is, in our nonce layout, epoch
 * 0xcafebabe, direction bit 1 (terminal -> hub) and counter
 * 0x7acedbaddecaf888: a terminal context at that counter must produce the
 * spec's ciphertext and tag, and a hub context must open the spec's bytes.
 */
TEST(SlcKnownAnswer, GcmSpecVectorsThroughSealAndOpenOnEveryArch)
{
	int archs_run = 0;

	for (sgw_slc_arch arch : kArchs) {
		EnginePtr eng(sgw_slcrypto_engine_create(arch));
		if (eng == nullptr) {
			ASSERT_NE(arch, SGW_SLC_ARCH_AUTO);
			ASSERT_NE(arch, SGW_SLC_ARCH_SSE);      /* AES-NI is required */
			continue;
		}
		archs_run++;
		for (const Kat &v : kKats) {
			SCOPED_TRACE(std::string(sgw_slcrypto_engine_arch(eng.get())) + " " +
				     v.name);
			KeysPtr keys = parse_keys(std::string("9 ") + v.key + "\n");
			ASSERT_NE(keys, nullptr);
			const sgw_slcrypto_key *k = sgw_slcrypto_keys_find(keys.get(), 9);
			ASSERT_NE(k, nullptr);
			EXPECT_EQ(sgw_slcrypto_key_bits(k), strlen(v.key) * 4);
			CtxPtr term = make_ctx(eng.get(), k, SGW_SLC_ROLE_TERMINAL, 0xcafebabe);
			CtxPtr hub = make_ctx(eng.get(), k, SGW_SLC_ROLE_HUB, 7);
			ASSERT_NE(term, nullptr);
			ASSERT_NE(hub, nullptr);
			ASSERT_EQ(sgw_slcrypto_tx_skip(term.get(), 0x7acedbaddecaf888ULL), 0);

			Bytes aad = hex(v.aad), pt = hex(v.pt);
			Bytes sealed = seal(term.get(), aad, pt);
			EXPECT_EQ(tohex(sealed), std::string(v.iv) + v.ct + v.tag);

			Bytes spec = hex(std::string(v.iv) + v.ct + v.tag), got;
			EXPECT_EQ(open_frame(hub.get(), aad, spec, &got), (int)pt.size());
			EXPECT_EQ(tohex(got), v.pt);
			uint32_t e;
			uint64_t top;
			EXPECT_EQ(sgw_slcrypto_rx_state(hub.get(), &e, &top), 1);
			EXPECT_EQ(e, 0xcafebabeu);
			EXPECT_EQ(top, 0x7acedbaddecaf888ULL);
		}
	}
	EXPECT_GE(archs_run, 2);
}

/* Every arch writes what every other arch reads. */
TEST(SlcKnownAnswer, ArchsInteroperate)
{
	KeysPtr keys = parse_keys(kKeys);
	std::vector<EnginePtr> engs;

	for (sgw_slc_arch arch : kArchs) {
		EnginePtr e(sgw_slcrypto_engine_create(arch));
		if (e != nullptr)
			engs.push_back(std::move(e));
	}
	for (uint32_t id : { 1001u, 1002u }) {
		const sgw_slcrypto_key *k = sgw_slcrypto_keys_find(keys.get(), id);
		for (auto &a : engs) {
			for (auto &b : engs) {
				std::string an = sgw_slcrypto_engine_arch(a.get());
				SCOPED_TRACE(an + " -> " + sgw_slcrypto_engine_arch(b.get()));
				CtxPtr tx = make_ctx(a.get(), k, SGW_SLC_ROLE_HUB, 3);
				CtxPtr rx = make_ctx(b.get(), k, SGW_SLC_ROLE_TERMINAL, 4);
				for (size_t n : { 0u, 1u, 63u, 64u, 65u, 257u, 1400u, 9000u }) {
					Bytes aad = pattern(n % 37, (uint32_t)n);
					Bytes pt = pattern(n, 5), got;
					Bytes f = seal(tx.get(), aad, pt);
					ASSERT_EQ(open_frame(rx.get(), aad, f, &got), (int)n);
					EXPECT_EQ(got, pt);
				}
			}
		}
	}
}

TEST(SlcEngine, NamesItsArch)
{
	EnginePtr e(sgw_slcrypto_engine_create(SGW_SLC_ARCH_AUTO));
	ASSERT_NE(e, nullptr);
	std::string a = sgw_slcrypto_engine_arch(e.get());
	EXPECT_TRUE(a == "sse" || a == "avx" || a == "avx2" || a == "avx512") << a;
	EXPECT_EQ(sgw_slcrypto_engine_create((sgw_slc_arch)99), nullptr);
}

/* ------------------------------------------------------------ round trip */

TEST_F(Slc, RoundTripBothDirectionsBothKeySizes)
{
	for (uint32_t id : { 1001u, 1002u }) {
		CtxPtr hub, term;
		pair(id, &hub, &term);
		for (size_t n : { 0u, 1u, 15u, 16u, 17u, 64u, 512u, 1400u, 9000u, 65535u }) {
			SCOPED_TRACE("key " + std::to_string(id) + " len " + std::to_string(n));
			Bytes aad = pattern(20, 1), pt = pattern(n, (uint32_t)n), got;

			Bytes f = seal(hub.get(), aad, pt);
			ASSERT_EQ(f.size(), n + SGW_SLC_OVERHEAD);
			if (n >= 16) {
				EXPECT_NE(Bytes(f.begin() + 12, f.begin() + 12 + 16),
					  Bytes(pt.begin(), pt.begin() + 16));
			}
			ASSERT_EQ(open_frame(term.get(), aad, f, &got), (int)n);
			EXPECT_EQ(got, pt);

			f = seal(term.get(), aad, pt);
			ASSERT_EQ(open_frame(hub.get(), aad, f, &got), (int)n);
			EXPECT_EQ(got, pt);
		}
		sgw_slcrypto_stats st = stats(hub.get());
		EXPECT_EQ(st.sealed, 10u);
		EXPECT_EQ(st.opened, 10u);
		EXPECT_EQ(st.sealed_bytes, st.opened_bytes);
		EXPECT_EQ(st.sealed_bytes, 0u + 1 + 15 + 16 + 17 + 64 + 512 + 1400 + 9000 + 65535);
	}
}

TEST_F(Slc, RoundTripWithoutAad)
{
	CtxPtr hub, term;
	pair(1002, &hub, &term);
	Bytes pt = pattern(100, 3), got;
	Bytes f = seal(hub.get(), Bytes(), pt);
	ASSERT_EQ(open_frame(term.get(), Bytes(), f, &got), 100);
	EXPECT_EQ(got, pt);
	/* The same frame checked against some AAD fails: the AAD is bound. */
	f = seal(hub.get(), Bytes(), pt);
	EXPECT_EQ(open_frame(term.get(), Bytes{ 0 }, f), -SGW_SLC_BAD_TAG);
}

/*
 * The dataplane's way: an mbuf-like buffer holding [aad][12 headroom][payload]
 * [16 tailroom]; seal writes the nonce into the headroom, encrypts the payload
 * where it is and appends the tag; open decrypts where the ciphertext is.
 */
TEST_F(Slc, InPlaceSealAndOpen)
{
	for (uint32_t id : { 1003u, 1004u }) {
		CtxPtr hub, term;
		pair(id, &hub, &term);
		for (uint32_t n : { 0u, 1u, 64u, 512u, 1400u, 4097u }) {
			SCOPED_TRACE(n);
			const uint32_t aad_len = 18;
			Bytes pt = pattern(n, n + 11);
			Bytes buf(aad_len + SGW_SLC_OVERHEAD + n + 7, 0xee);
			Bytes aad = pattern(aad_len, 9);
			uint8_t *frame = buf.data() + aad_len;
			memcpy(buf.data(), aad.data(), aad_len);
			if (n != 0)
				memcpy(frame + SGW_SLC_NONCE_LEN, pt.data(), n);

			int r = sgw_slcrypto_seal(hub.get(), buf.data(), aad_len,
						  frame + SGW_SLC_NONCE_LEN, n, frame,
						  n + SGW_SLC_OVERHEAD);
			ASSERT_EQ(r, (int)(n + SGW_SLC_OVERHEAD));
			EXPECT_EQ(buf.back(), 0xee);    /* nothing past the tag */
			EXPECT_EQ(Bytes(buf.begin(), buf.begin() + aad_len), aad);

			/* The same bytes as sealing apart with the same counter. */
			uint64_t next;
			sgw_slcrypto_tx_state(hub.get(), nullptr, &next);
			CtxPtr hub2 = make_ctx(eng_.get(), key(id), SGW_SLC_ROLE_HUB, 1);
			ASSERT_EQ(sgw_slcrypto_tx_skip(hub2.get(), next - 1), 0);
			Bytes apart = seal(hub2.get(), aad, pt);
			EXPECT_EQ(Bytes(frame, frame + r), apart);

			r = sgw_slcrypto_open(term.get(), buf.data(), aad_len, frame,
					      n + SGW_SLC_OVERHEAD, frame + SGW_SLC_NONCE_LEN);
			ASSERT_EQ(r, (int)n);
			const uint8_t *p = frame + SGW_SLC_NONCE_LEN;
			EXPECT_EQ(Bytes(p, p + n), pt);
		}
	}
}

TEST_F(Slc, OverlapOtherThanInPlaceIsRefused)
{
	CtxPtr hub, term;
	pair(1001, &hub, &term);
	Bytes buf(400, 1);

	/* Payload starting at out (not out + 12): refused, nothing written. */
	Bytes before = buf;
	EXPECT_EQ(sgw_slcrypto_seal(hub.get(), nullptr, 0, buf.data(), 100, buf.data(), 400),
		  -SGW_SLC_BAD_ARG);
	EXPECT_EQ(sgw_slcrypto_seal(hub.get(), nullptr, 0, buf.data() + 13, 100, buf.data(), 400),
		  -SGW_SLC_BAD_ARG);
	/* AAD inside the output. */
	EXPECT_EQ(sgw_slcrypto_seal(hub.get(), buf.data() + 124, 8, buf.data() + 12, 100,
				    buf.data(), 400), -SGW_SLC_BAD_ARG);
	EXPECT_EQ(buf, before);
	EXPECT_EQ(stats(hub.get()).tx_refused[SGW_SLC_BAD_ARG], 3u);
	uint64_t next;
	sgw_slcrypto_tx_state(hub.get(), nullptr, &next);
	EXPECT_EQ(next, 0u);    /* no counter used by a refused seal */

	ASSERT_EQ(sgw_slcrypto_seal(hub.get(), nullptr, 0, buf.data() + 12, 100, buf.data(), 400),
		  128);
	/* Plaintext to where the nonce is: refused. Then in place works. */
	EXPECT_EQ(sgw_slcrypto_open(term.get(), nullptr, 0, buf.data(), 128, buf.data()),
		  -SGW_SLC_BAD_ARG);
	EXPECT_EQ(sgw_slcrypto_open(term.get(), buf.data() + 20, 4, buf.data(), 128,
				    buf.data() + 12), -SGW_SLC_BAD_ARG);
	EXPECT_EQ(sgw_slcrypto_open(term.get(), nullptr, 0, buf.data(), 128, buf.data() + 12),
		  100);
	EXPECT_EQ(Bytes(buf.begin() + 12, buf.begin() + 112), Bytes(100, 1));
}

/* --------------------------------------------------------------- forgery */

/*
 * Every single-bit flip anywhere in AAD, nonce, ciphertext or tag is refused
 * and counted, and no flip returns plaintext. The reason is BAD_TAG, except:
 * the nonce's direction bit (byte 4, bit 7) is refused before any crypto as
 * BAD_DIR, and, once a peer epoch is known, a flip that lowers the epoch is
 * refused before any crypto as STALE_EPOCH. The output is zeroed after
 * BAD_TAG and untouched otherwise; the receiver's state does not move, so the
 * genuine frame still opens afterwards. Both key sizes, in place and apart,
 * with a fresh receiver and with one that has a live window.
 */
TEST_F(Slc, EveryBitFlipIsRefusedAndCounted)
{
	const uint32_t epoch = 6;       /* 0b110: some flips lower it */

	for (uint32_t id : { 1001u, 1002u }) {
		for (int warm = 0; warm < 2; warm++) {
			for (int in_place = 0; in_place < 2; in_place++) {
				SCOPED_TRACE("key " + std::to_string(id) +
					     (warm ? " warm" : " fresh") +
					     (in_place ? " in place" : " apart"));
				CtxPtr hub, term;
				pair(id, &hub, &term, 5, epoch);
				Bytes aad = pattern(24, 1), pt = pattern(40, 2);
				Bytes first = seal(term.get(), aad, pt);
				Bytes second = seal(term.get(), aad, pt);
				if (warm) {
					ASSERT_EQ(open_frame(hub.get(), aad, second), 40);
				}
				Bytes good = seal(term.get(), aad, pt);

				uint64_t flips = 0, bad_tag = 0, bad_dir = 0, stale = 0;
				size_t nbits = (aad.size() + good.size()) * 8;
				for (size_t bit = 0; bit < nbits; bit++) {
					Bytes a = aad, g = good;
					size_t byte = bit / 8;
					uint8_t mask = (uint8_t)(1u << (bit % 8));
					int want = -SGW_SLC_BAD_TAG;
					if (byte < a.size()) {
						a[byte] ^= mask;
					} else {
						size_t fb = byte - a.size();
						g[fb] ^= mask;
						if (fb == 4 && mask == 0x80)
							want = -SGW_SLC_BAD_DIR;
						if (fb < 4 && warm && (g[fb] & mask) == 0)
							want = -SGW_SLC_STALE_EPOCH;
					}
					Bytes out(pt.size(), 0xa5);
					uint8_t *dst = in_place ? g.data() + 12 : out.data();
					int r = sgw_slcrypto_open(hub.get(), a.data(),
								  (uint32_t)a.size(), g.data(),
								  (uint32_t)g.size(), dst);
					if (in_place)
						out.assign(g.begin() + 12, g.end() - 16);
					flips++;
					ASSERT_EQ(r, want) << "bit " << bit;
					if (want == -SGW_SLC_BAD_TAG) {
						bad_tag++;
						EXPECT_EQ(out, Bytes(pt.size(), 0)) << bit;
					} else {
						(want == -SGW_SLC_BAD_DIR ? bad_dir : stale)++;
						if (!in_place)
							EXPECT_EQ(out, Bytes(pt.size(), 0xa5));
						else
							EXPECT_EQ(out, Bytes(good.begin() + 12,
									     good.end() - 16));
					}
					EXPECT_NE(out, pt);
				}
				EXPECT_EQ(flips, (uint64_t)(24 + 40 + SGW_SLC_OVERHEAD) * 8);
				EXPECT_EQ(bad_dir, 1u);
				EXPECT_EQ(stale, warm ? 2u : 0u);       /* bits 1 and 2 of 6 */
				sgw_slcrypto_stats st = stats(hub.get());
				EXPECT_EQ(st.rx_dropped[SGW_SLC_BAD_TAG], bad_tag);
				EXPECT_EQ(st.rx_dropped[SGW_SLC_BAD_DIR], bad_dir);
				EXPECT_EQ(st.rx_dropped[SGW_SLC_STALE_EPOCH], stale);
				EXPECT_EQ(st.opened, (uint64_t)warm);
				EXPECT_EQ(st.peer_epochs, (uint64_t)warm);
				uint32_t e;
				uint64_t top;
				EXPECT_EQ(sgw_slcrypto_rx_state(hub.get(), &e, &top), warm);
				EXPECT_EQ(e, warm ? epoch : 0u);
				EXPECT_EQ(top, warm ? 1u : 0u);

				Bytes got;
				ASSERT_EQ(open_frame(hub.get(), aad, good, &got), 40);
				EXPECT_EQ(got, pt);
				/* Out of order, still inside the window. */
				ASSERT_EQ(open_frame(hub.get(), aad, first, &got), 40);
				EXPECT_EQ(got, pt);
			}
		}
	}
}

TEST_F(Slc, WrongKeyIsRefused)
{
	/* Same size, different key; and a 128-bit key against a 256-bit one. */
	for (auto ids : { std::pair<uint32_t, uint32_t>{ 1001, 1003 }, { 1002, 1004 },
			  { 1001, 1002 } }) {
		CtxPtr term = make_ctx(eng_.get(), key(ids.first), SGW_SLC_ROLE_TERMINAL, 1);
		CtxPtr hub = make_ctx(eng_.get(), key(ids.second), SGW_SLC_ROLE_HUB, 1);
		Bytes aad = pattern(16, 1), pt = pattern(300, 2);
		Bytes out(300, 0xa5);
		Bytes f = seal(term.get(), aad, pt);
		EXPECT_EQ(sgw_slcrypto_open(hub.get(), aad.data(), 16, f.data(),
					    (uint32_t)f.size(), out.data()), -SGW_SLC_BAD_TAG);
		EXPECT_EQ(out, Bytes(300, 0));
		EXPECT_EQ(stats(hub.get()).rx_dropped[SGW_SLC_BAD_TAG], 1u);
		uint32_t e;
		uint64_t top;
		EXPECT_EQ(sgw_slcrypto_rx_state(hub.get(), &e, &top), 0);
	}
}

/* A frame sent back to its sender, or two ends both configured as hubs. */
TEST_F(Slc, ReflectedFrameIsRefused)
{
	CtxPtr hub, term;
	pair(1001, &hub, &term);
	Bytes aad = pattern(10, 1), pt = pattern(50, 2);
	Bytes f = seal(hub.get(), aad, pt);
	EXPECT_EQ(open_frame(hub.get(), aad, f), -SGW_SLC_BAD_DIR);
	CtxPtr other_hub = make_ctx(eng_.get(), key(1001), SGW_SLC_ROLE_HUB, 9);
	EXPECT_EQ(open_frame(other_hub.get(), aad, f), -SGW_SLC_BAD_DIR);
	EXPECT_EQ(stats(other_hub.get()).rx_dropped[SGW_SLC_BAD_DIR], 1u);
	EXPECT_EQ(open_frame(term.get(), aad, f), 50);
}

TEST_F(Slc, TruncatedAndOversizedFrames)
{
	CtxPtr hub, term;
	pair(1001, &hub, &term);
	Bytes f = seal(term.get(), Bytes(), Bytes());
	ASSERT_EQ(f.size(), SGW_SLC_OVERHEAD);
	for (size_t n = 0; n < SGW_SLC_OVERHEAD; n++)
		EXPECT_EQ(open_frame(hub.get(), Bytes(), Bytes(f.begin(), f.begin() + n)),
			  -SGW_SLC_TRUNC);
	EXPECT_EQ(stats(hub.get()).rx_dropped[SGW_SLC_TRUNC], (uint64_t)SGW_SLC_OVERHEAD);
	EXPECT_EQ(open_frame(hub.get(), Bytes(), f), 0);

	Bytes big(SGW_SLC_MAX_PAYLOAD + SGW_SLC_OVERHEAD + 1);
	Bytes out(big.size());
	EXPECT_EQ(sgw_slcrypto_open(hub.get(), nullptr, 0, big.data(), (uint32_t)big.size(),
				    out.data()), -SGW_SLC_TOO_LONG);
	EXPECT_EQ(sgw_slcrypto_seal(hub.get(), nullptr, 0, big.data(), SGW_SLC_MAX_PAYLOAD + 1,
				    out.data(), (uint32_t)out.size()), -SGW_SLC_TOO_LONG);
	EXPECT_EQ(sgw_slcrypto_seal(hub.get(), big.data(), SGW_SLC_MAX_PAYLOAD + 1, nullptr, 0,
				    out.data(), (uint32_t)out.size()), -SGW_SLC_TOO_LONG);
	EXPECT_EQ(sgw_slcrypto_seal(hub.get(), nullptr, 0, big.data(), 100, out.data(),
				    100 + SGW_SLC_OVERHEAD - 1), -SGW_SLC_NO_ROOM);
	sgw_slcrypto_stats st = stats(hub.get());
	EXPECT_EQ(st.tx_refused[SGW_SLC_TOO_LONG], 2u);
	EXPECT_EQ(st.tx_refused[SGW_SLC_NO_ROOM], 1u);
	EXPECT_EQ(st.rx_dropped[SGW_SLC_TOO_LONG], 1u);
}

/* Random frames never open (a 2^-128 event aside), whatever their header says. */
TEST_F(Slc, RandomFramesNeverOpen)
{
	CtxPtr hub, term;
	pair(1002, &hub, &term);
	std::mt19937_64 rng(42);
	uint64_t refused = 0;

	for (int i = 0; i < 20000; i++) {
		Bytes f = pattern(rng() % 200, (uint32_t)rng());
		if (f.size() >= 12 && (rng() & 1))
			f[4] |= 0x80;   /* right direction: reach the crypto */
		int r = open_frame(hub.get(), Bytes{ 1, 2, 3 }, f);
		ASSERT_LT(r, 0);
		refused++;
	}
	sgw_slcrypto_stats st = stats(hub.get());
	uint64_t sum = 0;
	for (int r = 0; r < SGW_SLC__NUM; r++)
		sum += st.rx_dropped[r];
	EXPECT_EQ(sum, refused);
	EXPECT_GT(st.rx_dropped[SGW_SLC_BAD_TAG], 5000u);
	EXPECT_EQ(st.opened, 0u);
}

/* ---------------------------------------------------------------- replay */

TEST_F(Slc, ReplayedFrameIsRefused)
{
	CtxPtr hub, term;
	pair(1001, &hub, &term);
	Bytes aad = pattern(8, 1), pt = pattern(64, 2), got;
	Bytes f = seal(term.get(), aad, pt);
	ASSERT_EQ(open_frame(hub.get(), aad, f), 64);
	Bytes out(64, 0xa5);
	EXPECT_EQ(sgw_slcrypto_open(hub.get(), aad.data(), 8, f.data(), (uint32_t)f.size(),
				    out.data()), -SGW_SLC_REPLAY);
	EXPECT_EQ(out, Bytes(64, 0xa5));     /* refused before decrypting */
	EXPECT_EQ(open_frame(hub.get(), aad, f), -SGW_SLC_REPLAY);
	EXPECT_EQ(stats(hub.get()).rx_dropped[SGW_SLC_REPLAY], 2u);
	EXPECT_EQ(stats(hub.get()).opened, 1u);
}

TEST_F(Slc, OutOfOrderInsideWindowAcceptedOnce)
{
	CtxPtr hub, term;
	pair(1002, &hub, &term);
	Bytes aad = pattern(8, 1);
	std::vector<Bytes> frames, pts;
	for (uint32_t i = 0; i < 1000; i++) {
		pts.push_back(pattern(i % 100, i));
		frames.push_back(seal(term.get(), aad, pts.back()));
	}
	std::vector<size_t> order(frames.size());
	for (size_t i = 0; i < order.size(); i++)
		order[i] = i;
	std::shuffle(order.begin(), order.end(), std::mt19937(7));
	for (size_t i : order) {
		Bytes got;
		ASSERT_EQ(open_frame(hub.get(), aad, frames[i], &got), (int)pts[i].size()) << i;
		EXPECT_EQ(got, pts[i]);
	}
	for (size_t i : order)
		ASSERT_EQ(open_frame(hub.get(), aad, frames[i]), -SGW_SLC_REPLAY) << i;
	EXPECT_EQ(stats(hub.get()).opened, 1000u);
	EXPECT_EQ(stats(hub.get()).rx_dropped[SGW_SLC_REPLAY], 1000u);
}

TEST_F(Slc, TooOldFramesAreRefusedAtTheWindowEdge)
{
	for (uint32_t w : { 64u, 1024u, 4096u }) {
		SCOPED_TRACE(w);
		CtxPtr hub, term;
		pair(1001, &hub, &term, 1, 1, w);
		Bytes aad = pattern(8, 1);
		std::vector<Bytes> f;
		for (uint32_t i = 0; i < w + 100; i++)
			f.push_back(seal(term.get(), aad, pattern(10, i)));
		uint32_t top = w + 99;
		ASSERT_EQ(open_frame(hub.get(), aad, f[top]), 10);
		/* top - c >= w is too old; top - c == w - 1 is the window's last. */
		EXPECT_EQ(open_frame(hub.get(), aad, f[top - w]), -SGW_SLC_TOO_OLD);
		EXPECT_EQ(open_frame(hub.get(), aad, f[0]), -SGW_SLC_TOO_OLD);
		EXPECT_EQ(open_frame(hub.get(), aad, f[top - w + 1]), 10);
		EXPECT_EQ(open_frame(hub.get(), aad, f[top - w + 1]), -SGW_SLC_REPLAY);
		EXPECT_EQ(stats(hub.get()).rx_dropped[SGW_SLC_TOO_OLD], 2u);
	}
}

/*
 * The window against a model (a set of accepted counters, the highest one,
 * the window size) over random traffic: in order, reordered, duplicated,
 * with jumps of up to several windows, for several window sizes.
 */
TEST_F(Slc, WindowMatchesModelOnRandomTraffic)
{
	for (uint32_t w : { 64u, 128u, 1024u, 65536u }) {
		SCOPED_TRACE(w);
		CtxPtr hub, term;
		pair(1003, &hub, &term, 1, 1, w);
		std::mt19937_64 rng(w);
		std::vector<std::pair<uint64_t, Bytes>> sent;
		uint64_t c = 0;
		const uint64_t n = 6000;
		for (uint64_t i = 0; i < n; i++) {
			uint64_t jump = rng() % 100 == 0 ? rng() % (3 * (uint64_t)w) : 0;
			if (jump != 0) {
				c += jump;
				ASSERT_EQ(sgw_slcrypto_tx_skip(term.get(), c), 0);
			}
			Bytes f = seal(term.get(), Bytes(), Bytes{ (uint8_t)i });
			sent.push_back({ c, f });
			c++;
		}
		/* Deliver: mostly in order with local shuffles, some repeats of old frames. */
		std::vector<size_t> order;
		for (size_t i = 0; i < sent.size(); i += 16) {
			std::vector<size_t> blk;
			for (size_t j = i; j < std::min(sent.size(), i + 16); j++)
				blk.push_back(j);
			std::shuffle(blk.begin(), blk.end(), rng);
			order.insert(order.end(), blk.begin(), blk.end());
			for (int k = 0; k < 4; k++)
				order.push_back(rng() % (i + 1));
		}
		std::set<uint64_t> seen;
		bool any = false;
		uint64_t top = 0, ok = 0, replay = 0, old = 0;
		for (size_t i : order) {
			uint64_t ctr = sent[i].first;
			int want;
			if (any && ctr <= top && top - ctr >= w)
				want = -SGW_SLC_TOO_OLD;
			else if (seen.count(ctr))
				want = -SGW_SLC_REPLAY;
			else
				want = 1;
			int r = open_frame(hub.get(), Bytes(), sent[i].second);
			if (want == 1) {
				ASSERT_EQ(r, 1) << "counter " << ctr << " top " << top;
				seen.insert(ctr);
				top = any ? std::max(top, ctr) : ctr;
				any = true;
				ok++;
			} else {
				ASSERT_EQ(r, want) << "counter " << ctr << " top " << top;
				(want == -SGW_SLC_REPLAY ? replay : old)++;
			}
		}
		sgw_slcrypto_stats st = stats(hub.get());
		EXPECT_EQ(st.opened, ok);
		EXPECT_EQ(st.rx_dropped[SGW_SLC_REPLAY], replay);
		EXPECT_EQ(st.rx_dropped[SGW_SLC_TOO_OLD], old);
		EXPECT_GT(replay, 0u);
		if (w < 1024) {
			EXPECT_GT(old, 0u);
		}
	}
}

/*
 * A frame claiming a newer epoch must authenticate before the window is
 * reset for it: a forged one changes nothing, so replays of the current
 * epoch stay refused. A genuine restart of the peer does move the epoch,
 * after which the old epoch's frames are stale.
 */
TEST_F(Slc, ForgedNewEpochDoesNotResetTheWindow)
{
	CtxPtr hub, term;
	pair(1001, &hub, &term, 1, 5);
	Bytes aad = pattern(12, 1);
	std::vector<Bytes> f;
	for (int i = 0; i < 20; i++)
		f.push_back(seal(term.get(), aad, pattern(32, i)));
	for (int i = 0; i < 10; i++)
		ASSERT_EQ(open_frame(hub.get(), aad, f[i]), 32);

	/* Forge: frame 3 relabelled with epoch 6, and with epoch 0xffffffff. */
	for (uint32_t forged_epoch : { 6u, 0xffffffffu }) {
		Bytes g = f[3];
		g[0] = (uint8_t)(forged_epoch >> 24);
		g[1] = (uint8_t)(forged_epoch >> 16);
		g[2] = (uint8_t)(forged_epoch >> 8);
		g[3] = (uint8_t)forged_epoch;
		EXPECT_EQ(open_frame(hub.get(), aad, g), -SGW_SLC_BAD_TAG);
		/* Also with a counter far ahead. */
		g[5] ^= 0x40;
		EXPECT_EQ(open_frame(hub.get(), aad, g), -SGW_SLC_BAD_TAG);
	}
	uint32_t e;
	uint64_t top;
	ASSERT_EQ(sgw_slcrypto_rx_state(hub.get(), &e, &top), 1);
	EXPECT_EQ(e, 5u);
	EXPECT_EQ(top, 9u);
	for (int i = 0; i < 10; i++)
		EXPECT_EQ(open_frame(hub.get(), aad, f[i]), -SGW_SLC_REPLAY) << i;
	EXPECT_EQ(open_frame(hub.get(), aad, f[10]), 32);
	EXPECT_EQ(stats(hub.get()).peer_epochs, 1u);

	/* A forged older epoch is refused without crypto. */
	Bytes old = f[11];
	old[3] = 4;
	EXPECT_EQ(open_frame(hub.get(), aad, old), -SGW_SLC_STALE_EPOCH);

	/* The terminal really restarts with epoch 6: accepted, new window. */
	CtxPtr term2 = make_ctx(eng_.get(), key(1001), SGW_SLC_ROLE_TERMINAL, 6);
	Bytes n0 = seal(term2.get(), aad, pattern(32, 100));
	EXPECT_EQ(open_frame(hub.get(), aad, n0), 32);
	EXPECT_EQ(open_frame(hub.get(), aad, n0), -SGW_SLC_REPLAY);
	EXPECT_EQ(stats(hub.get()).peer_epochs, 2u);
	sgw_slcrypto_rx_state(hub.get(), &e, &top);
	EXPECT_EQ(e, 6u);
	EXPECT_EQ(top, 0u);
	/* Epoch 5's unseen frames are now stale, not "new in a fresh window". */
	EXPECT_EQ(open_frame(hub.get(), aad, f[11]), -SGW_SLC_STALE_EPOCH);
	EXPECT_EQ(open_frame(hub.get(), aad, f[3]), -SGW_SLC_STALE_EPOCH);
	EXPECT_EQ(stats(hub.get()).rx_dropped[SGW_SLC_STALE_EPOCH], 3u);
	EXPECT_EQ(stats(hub.get()).rx_dropped[SGW_SLC_BAD_TAG], 4u);
}

/* A restarted receiver given the floor it saved refuses what it had seen. */
TEST_F(Slc, ReceiveFloorAfterReceiverRestart)
{
	CtxPtr hub, term;
	pair(1002, &hub, &term, 1, 5);
	std::vector<Bytes> f;
	for (int i = 0; i < 200; i++)
		f.push_back(seal(term.get(), Bytes(), Bytes{ (uint8_t)i }));
	for (int i = 0; i < 150; i++)
		ASSERT_EQ(open_frame(hub.get(), Bytes(), f[i]), 1);
	uint32_t e;
	uint64_t top;
	ASSERT_EQ(sgw_slcrypto_rx_state(hub.get(), &e, &top), 1);

	sgw_slcrypto_conf c = conf(SGW_SLC_ROLE_HUB, 2);
	c.rx_min_epoch = e;
	c.rx_min_counter = top + 1;
	CtxPtr hub2(sgw_slcrypto_ctx_create(eng_.get(), key(1002), &c));
	ASSERT_NE(hub2, nullptr);
	EXPECT_EQ(open_frame(hub2.get(), Bytes(), f[149]), -SGW_SLC_REPLAY);
	EXPECT_EQ(open_frame(hub2.get(), Bytes(), f[100]), -SGW_SLC_REPLAY);
	EXPECT_EQ(open_frame(hub2.get(), Bytes(), f[0]), -SGW_SLC_REPLAY);
	EXPECT_EQ(open_frame(hub2.get(), Bytes(), f[150]), 1);
	EXPECT_EQ(open_frame(hub2.get(), Bytes(), f[199]), 1);

	/* An epoch floor alone: older epochs are stale, the floor epoch opens. */
	c.rx_min_epoch = 6;
	c.rx_min_counter = 0;
	CtxPtr hub3(sgw_slcrypto_ctx_create(eng_.get(), key(1002), &c));
	EXPECT_EQ(sgw_slcrypto_rx_state(hub3.get(), &e, &top), 1);
	EXPECT_EQ(open_frame(hub3.get(), Bytes(), f[160]), -SGW_SLC_STALE_EPOCH);
	CtxPtr term6 = make_ctx(eng_.get(), key(1002), SGW_SLC_ROLE_TERMINAL, 6);
	EXPECT_EQ(open_frame(hub3.get(), Bytes(), seal(term6.get(), Bytes(), Bytes{ 1 })), 1);

	/* Nothing known without a floor. */
	CtxPtr hub4 = make_ctx(eng_.get(), key(1002), SGW_SLC_ROLE_HUB, 3);
	EXPECT_EQ(sgw_slcrypto_rx_state(hub4.get(), &e, &top), 0);
}

/* ---------------------------------------------------------------- nonces */

/*
 * 10^5 frames each way under one key, both ends with the same epoch value:
 * all 2 x 10^5 nonces are distinct, each has the expected layout, and a
 * restarted sender (next epoch) repeats none of them.
 */
TEST_F(Slc, NoncesNeverRepeat)
{
	CtxPtr hub, term;
	pair(1001, &hub, &term, 77, 77);
	const int n = 100000;
	std::unordered_set<std::string> seen;
	uint8_t buf[SGW_SLC_OVERHEAD + 4];
	uint8_t pt[4] = { 1, 2, 3, 4 };

	auto run = [&](sgw_slcrypto_ctx *c, uint32_t epoch, uint8_t dir) {
		for (int i = 0; i < n; i++) {
			ASSERT_EQ(sgw_slcrypto_seal(c, nullptr, 0, pt, 4, buf, sizeof(buf)),
				  (int)sizeof(buf));
			std::string nonce((const char *)buf, SGW_SLC_NONCE_LEN);
			ASSERT_TRUE(seen.insert(nonce).second) << "repeated nonce at " << i;
			ASSERT_EQ(buf[0] << 24 | buf[1] << 16 | buf[2] << 8 | buf[3], (int)epoch);
			ASSERT_EQ(buf[4] >> 7, dir);
			uint64_t ctr = 0;
			for (int k = 4; k < 12; k++)
				ctr = ctr << 8 | buf[k];
			ASSERT_EQ(ctr & ~(1ULL << 63), (uint64_t)i);
		}
	};
	run(hub.get(), 77, 0);
	run(term.get(), 77, 1);
	EXPECT_EQ(seen.size(), 2u * n);

	uint32_t e2;
	ASSERT_EQ(sgw_slcrypto_next_epoch(77, 0, &e2), 0);
	CtxPtr hub2 = make_ctx(eng_.get(), key(1001), SGW_SLC_ROLE_HUB, e2);
	run(hub2.get(), 78, 0);
	EXPECT_EQ(seen.size(), 3u * n);
}

TEST_F(Slc, CounterExhaustionRefusesToSend)
{
	CtxPtr hub, term;
	pair(1004, &hub, &term);
	ASSERT_EQ(sgw_slcrypto_tx_skip(term.get(), SGW_SLC_COUNTER_MAX - 1), 0);
	Bytes a = seal(term.get(), Bytes(), Bytes{ 1 });
	Bytes b = seal(term.get(), Bytes(), Bytes{ 2 });
	ASSERT_FALSE(a.empty());
	ASSERT_FALSE(b.empty());
	EXPECT_EQ(tohex(b.data() + 4, 8), "ffffffffffffffff");   /* D = 1, counter max */

	int rc;
	Bytes c = seal(term.get(), Bytes(), Bytes{ 3 }, &rc);
	EXPECT_EQ(rc, -SGW_SLC_EXHAUSTED);
	EXPECT_TRUE(c.empty());
	seal(term.get(), Bytes(), Bytes{ 3 }, &rc);
	EXPECT_EQ(rc, -SGW_SLC_EXHAUSTED);
	EXPECT_EQ(stats(term.get()).tx_refused[SGW_SLC_EXHAUSTED], 2u);
	EXPECT_EQ(stats(term.get()).sealed, 2u);

	uint64_t next;
	sgw_slcrypto_tx_state(term.get(), nullptr, &next);
	EXPECT_EQ(next, SGW_SLC_COUNTER_MAX + 1);
	/* No way back, and no way past the end. */
	EXPECT_EQ(sgw_slcrypto_tx_skip(term.get(), 0), -1);
	EXPECT_EQ(sgw_slcrypto_tx_skip(term.get(), SGW_SLC_COUNTER_MAX), -1);
	EXPECT_EQ(sgw_slcrypto_tx_skip(term.get(), SGW_SLC_COUNTER_MAX + 2), -1);

	/* The receiver takes the last frames. */
	EXPECT_EQ(open_frame(hub.get(), Bytes(), a), 1);
	EXPECT_EQ(open_frame(hub.get(), Bytes(), b), 1);
	uint32_t e;
	uint64_t top;
	sgw_slcrypto_rx_state(hub.get(), &e, &top);
	EXPECT_EQ(top, SGW_SLC_COUNTER_MAX);
}

TEST_F(Slc, TxSkipOnlyMovesForward)
{
	CtxPtr hub, term;
	pair(1001, &hub, &term);
	seal(hub.get(), Bytes(), Bytes{ 1 });
	seal(hub.get(), Bytes(), Bytes{ 1 });
	EXPECT_EQ(sgw_slcrypto_tx_skip(hub.get(), 1), -1);
	EXPECT_EQ(sgw_slcrypto_tx_skip(hub.get(), 2), 0);
	EXPECT_EQ(sgw_slcrypto_tx_skip(hub.get(), 1000), 0);
	uint32_t e;
	uint64_t next;
	sgw_slcrypto_tx_state(hub.get(), &e, &next);
	EXPECT_EQ(e, 1u);
	EXPECT_EQ(next, 1000u);
}

TEST(SlcEpoch, NextEpochIncreases)
{
	uint32_t e = 0;

	EXPECT_EQ(sgw_slcrypto_next_epoch(0, 0, &e), 0);
	EXPECT_EQ(e, 1u);
	EXPECT_EQ(sgw_slcrypto_next_epoch(41, 0, &e), 0);
	EXPECT_EQ(e, 42u);
	EXPECT_EQ(sgw_slcrypto_next_epoch(41, 1700000000, &e), 0);
	EXPECT_EQ(e, 1700000000u);
	/* The clock stepped back: still prev + 1. */
	EXPECT_EQ(sgw_slcrypto_next_epoch(1700000000, 1600000000, &e), 0);
	EXPECT_EQ(e, 1700000001u);
	EXPECT_EQ(sgw_slcrypto_next_epoch(5, 1ULL << 40, &e), 0);
	EXPECT_EQ(e, 0xffffffffu);
	EXPECT_EQ(sgw_slcrypto_next_epoch(0xffffffffu, 0, &e), -1);
}

/* ------------------------------------------------------ misc. contract */

TEST_F(Slc, NoKeyContextRefusesAndCounts)
{
	CtxPtr c = make_ctx(eng_.get(), nullptr, SGW_SLC_ROLE_HUB, 1);
	ASSERT_NE(c, nullptr);
	int rc;
	EXPECT_TRUE(seal(c.get(), Bytes(), Bytes{ 1 }, &rc).empty());
	EXPECT_EQ(rc, -SGW_SLC_NO_KEY);
	EXPECT_EQ(open_frame(c.get(), Bytes(), Bytes(40)), -SGW_SLC_NO_KEY);
	EXPECT_EQ(sgw_slcrypto_refuse_clear(c.get()), -SGW_SLC_UNPROTECTED);
	sgw_slcrypto_stats st = stats(c.get());
	EXPECT_EQ(st.tx_refused[SGW_SLC_NO_KEY], 1u);
	EXPECT_EQ(st.rx_dropped[SGW_SLC_NO_KEY], 1u);
	EXPECT_EQ(st.rx_dropped[SGW_SLC_UNPROTECTED], 1u);
}

TEST_F(Slc, BadConfIsRefused)
{
	for (uint32_t w : { 1u, 32u, 100u, 1000u, 131072u })
		EXPECT_EQ(make_ctx(eng_.get(), key(1001), SGW_SLC_ROLE_HUB, 1, w), nullptr) << w;
	for (uint32_t w : { 0u, 64u, 1024u, 65536u })
		EXPECT_NE(make_ctx(eng_.get(), key(1001), SGW_SLC_ROLE_HUB, 1, w), nullptr) << w;
	EXPECT_EQ(make_ctx(eng_.get(), key(1001), (sgw_slc_role)2, 1), nullptr);
	EXPECT_EQ(make_ctx(nullptr, key(1001), SGW_SLC_ROLE_HUB, 1), nullptr);
}

TEST(SlcReason, NamesAreStable)
{
	EXPECT_STREQ(sgw_slcrypto_reason_name(SGW_SLC_OK), "ok");
	EXPECT_STREQ(sgw_slcrypto_reason_name(SGW_SLC_TRUNC), "trunc");
	EXPECT_STREQ(sgw_slcrypto_reason_name(SGW_SLC_TOO_LONG), "too_long");
	EXPECT_STREQ(sgw_slcrypto_reason_name(SGW_SLC_BAD_DIR), "bad_dir");
	EXPECT_STREQ(sgw_slcrypto_reason_name(SGW_SLC_STALE_EPOCH), "stale_epoch");
	EXPECT_STREQ(sgw_slcrypto_reason_name(SGW_SLC_TOO_OLD), "too_old");
	EXPECT_STREQ(sgw_slcrypto_reason_name(SGW_SLC_REPLAY), "replay");
	EXPECT_STREQ(sgw_slcrypto_reason_name(-SGW_SLC_BAD_TAG), "bad_tag");
	EXPECT_STREQ(sgw_slcrypto_reason_name(SGW_SLC_NO_KEY), "no_key");
	EXPECT_STREQ(sgw_slcrypto_reason_name(SGW_SLC_UNPROTECTED), "unprotected");
	EXPECT_STREQ(sgw_slcrypto_reason_name(SGW_SLC_NO_ROOM), "no_room");
	EXPECT_STREQ(sgw_slcrypto_reason_name(SGW_SLC_EXHAUSTED), "exhausted");
	EXPECT_STREQ(sgw_slcrypto_reason_name(SGW_SLC_BAD_ARG), "bad_arg");
	EXPECT_STREQ(sgw_slcrypto_reason_name(SGW_SLC__NUM), "unknown");
}

/* -------------------------------------------------------------- key file */

/* A private temporary directory, removed at the end. */
class TmpDir {
 public:
	TmpDir()
	{
		char tmpl[] = "/tmp/sgw_slc_XXXXXX";
		char *d = mkdtemp(tmpl);
		EXPECT_NE(d, nullptr);
		path_ = d != nullptr ? d : "/tmp";
	}
	~TmpDir() { fs::remove_all(path_); }
	TmpDir(const TmpDir &) = delete;
	TmpDir &operator=(const TmpDir &) = delete;

	std::string
	write(const std::string &name, const std::string &text, mode_t mode)
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

int
load(const std::string &path, KeysPtr *out, std::string *err)
{
	sgw_slcrypto_keys *k = nullptr;
	char buf[4096];
	int r = sgw_slcrypto_keys_load(path.c_str(), &k, buf, sizeof(buf));

	out->reset(k);
	*err = buf;
	return r;
}

TEST(SlcKeyFile, GoodFilesLoad)
{
	TmpDir tmp;
	KeysPtr k;
	std::string err;
	std::string p = tmp.write("hub.keys", slurp(data_dir("hub.keys")), 0600);

	ASSERT_EQ(load(p, &k, &err), 0) << err;
	EXPECT_EQ(err, "");
	ASSERT_EQ(sgw_slcrypto_keys_count(k.get()), 5u);
	const uint32_t ids[] = { 0, 1001, 1002, 1003, 4294967295u };
	const unsigned bits[] = { 128, 128, 256, 128, 256 };
	for (uint32_t i = 0; i < 5; i++) {
		EXPECT_EQ(sgw_slcrypto_keys_id_at(k.get(), i), ids[i]);
		const sgw_slcrypto_key *key = sgw_slcrypto_keys_find(k.get(), ids[i]);
		ASSERT_NE(key, nullptr) << ids[i];
		EXPECT_EQ(sgw_slcrypto_key_bits(key), bits[i]);
	}
	EXPECT_EQ(sgw_slcrypto_keys_find(k.get(), 1004), nullptr);
	EXPECT_EQ(sgw_slcrypto_keys_find(k.get(), 1), nullptr);

	/* The terminal's file holds the same key as the hub's entry: they talk. */
	KeysPtr tk;
	p = tmp.write("t.keys", slurp(data_dir("terminal-1001.keys")), 0640);
	ASSERT_EQ(load(p, &tk, &err), 0) << err;
	EnginePtr eng(sgw_slcrypto_engine_create(SGW_SLC_ARCH_AUTO));
	CtxPtr hub = make_ctx(eng.get(), sgw_slcrypto_keys_find(k.get(), 1001),
			      SGW_SLC_ROLE_HUB, 1);
	CtxPtr term = make_ctx(eng.get(), sgw_slcrypto_keys_find(tk.get(), 1001),
			       SGW_SLC_ROLE_TERMINAL, 1);
	/* The contexts copied the key: the tables can go. */
	k.reset();
	tk.reset();
	Bytes f = seal(term.get(), Bytes{ 1 }, Bytes{ 2, 3 }), got;
	EXPECT_EQ(open_frame(hub.get(), Bytes{ 1 }, f, &got), 2);
	EXPECT_EQ(got, (Bytes{ 2, 3 }));

	/* Upper-case hex is the same key as lower case. */
	KeysPtr a = parse_keys("1 23C91547BA0AF12BB0B87316A6F2F27D\n");
	KeysPtr b = parse_keys("1 23c91547ba0af12bb0b87316a6f2f27d\n");
	CtxPtr ca = make_ctx(eng.get(), sgw_slcrypto_keys_find(a.get(), 1), SGW_SLC_ROLE_HUB, 1);
	CtxPtr cb = make_ctx(eng.get(), sgw_slcrypto_keys_find(b.get(), 1),
			     SGW_SLC_ROLE_TERMINAL, 1);
	EXPECT_EQ(open_frame(cb.get(), Bytes(), seal(ca.get(), Bytes(), Bytes{ 9 })), 1);

	/* No trailing newline, CRLF line ends. */
	EXPECT_NE(parse_keys("7 23c91547ba0af12bb0b87316a6f2f27d"), nullptr);
	EXPECT_NE(parse_keys("7 23c91547ba0af12bb0b87316a6f2f27d\r\n8 "
			     "23c91547ba0af12bb0b87316a6f2f27e\r\n"), nullptr);
}

/* Every "# expect:" line of each bad file, in order, and nothing else. */
TEST(SlcKeyFile, EveryParserErrorAsFileLine)
{
	TmpDir tmp;
	int files = 0;

	for (const auto &e : fs::directory_iterator(data_dir("bad"))) {
		if (e.path().extension() != ".keys")
			continue;
		files++;
		std::string text = slurp(e.path().string());
		std::string name = e.path().filename().string();
		SCOPED_TRACE(name);
		std::string p = tmp.write(name, text, 0600);
		std::string want, line;
		std::istringstream is(text);
		while (std::getline(is, line)) {
			const std::string tag = "# expect: ";
			if (line.rfind(tag, 0) != 0)
				continue;
			std::string rest = line.substr(tag.size());
			if (!rest.empty() && isdigit((unsigned char)rest[0]))
				want += p + ":" + rest + "\n";
			else
				want += p + ": " + rest + "\n";
		}
		ASSERT_FALSE(want.empty());
		KeysPtr k;
		std::string err;
		EXPECT_EQ(load(p, &k, &err), -1);
		EXPECT_EQ(k, nullptr);
		EXPECT_EQ(err, want);

		/* Parsing the bytes gives the same, under the given name. */
		sgw_slcrypto_keys *kp = nullptr;
		char buf[4096];
		EXPECT_EQ(sgw_slcrypto_keys_parse(p.c_str(), text.data(), text.size(), &kp, buf,
						  sizeof(buf)), -1);
		EXPECT_EQ(kp, nullptr);
		EXPECT_EQ(std::string(buf), want);

		/* No key material in any message: no 6 hex digits in a row from a key. */
		std::istringstream ks(text);
		while (std::getline(ks, line)) {
			if (line.empty() || line[0] == '#')
				continue;
			std::istringstream ls(line);
			std::string id, key;
			ls >> id >> key;
			for (size_t i = 0; key.size() >= 6 && i + 6 <= key.size(); i++)
				EXPECT_EQ(err.find(key.substr(i, 6)), std::string::npos)
					<< "key text in: " << err;
		}
	}
	EXPECT_GE(files, 7);
}

TEST(SlcKeyFile, ErrorsAreCappedAndCounted)
{
	std::string text;
	for (int i = 0; i < 40; i++)
		text += std::to_string(i) + " nothex\n";
	std::string err;
	EXPECT_EQ(parse_keys(text, &err), nullptr);
	size_t lines = std::count(err.begin(), err.end(), '\n');
	EXPECT_EQ(lines, SGW_SLC_KEYS_MAX_ERRORS + 1);
	EXPECT_NE(err.find("test.keys:1: terminal 0: key character 1 is not a hex digit\n"),
		  std::string::npos) << err;
	EXPECT_NE(err.find("test.keys: 24 more errors\n"), std::string::npos) << err;

	/* A small errbuf is filled and terminated, never overrun. */
	char small[20];
	memset(small, 'x', sizeof(small));
	sgw_slcrypto_keys *k = nullptr;
	EXPECT_EQ(sgw_slcrypto_keys_parse("f", text.data(), text.size(), &k, small, 10), -1);
	EXPECT_EQ(strlen(small), 9u);
	EXPECT_EQ(small[10], 'x');

	/* Over-long lines and NUL bytes. */
	std::string longline = "1 " + std::string(SGW_SLC_KEYFILE_MAX_LINE, 'a') + "\n";
	EXPECT_EQ(parse_keys(longline, &err), nullptr);
	EXPECT_EQ(err, "test.keys:1: line longer than 1024 bytes\n");
	std::string nul = std::string("1 23c91547ba0af12b\0b0b87316a6f2f27d\n", 36);
	EXPECT_EQ(parse_keys(nul, &err), nullptr);
	EXPECT_EQ(err, "test.keys:1: NUL byte in the line\n");
}

/* Like ssh: a key file others can read (or the group can write) is refused. */
// A FIFO or a device given as the key path used to block the control thread
// in open. Anything but a regular file is refused at once; should the loader
// block again, the watchdog opens the FIFO's other end so the test fails
// instead of hanging.
TEST(SlcKeyFile, FifoAndDeviceAreRefusedWithoutBlocking)
{
	TmpDir tmp;
	std::string fifo = tmp.path() + "/hub.keys";
	ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
	KeysPtr k;
	std::string err;
	auto done = std::async(std::launch::async, [&]() { return load(fifo, &k, &err); });
	bool blocked = done.wait_for(std::chrono::seconds(30)) != std::future_status::ready;
	if (blocked) {
		int fd = open(fifo.c_str(), O_WRONLY | O_NONBLOCK);  // release the reader
		if (fd >= 0)
			close(fd);
	}
	int rc = done.get();
	EXPECT_FALSE(blocked) << "sgw_slcrypto_keys_load blocked on a FIFO";
	EXPECT_EQ(rc, -1);
	EXPECT_NE(err.find("not a regular file"), std::string::npos) << err;
	EXPECT_EQ(k.get(), nullptr);
	unlink(fifo.c_str());

	EXPECT_EQ(load("/dev/zero", &k, &err), -1);
	EXPECT_NE(err.find("not a regular file"), std::string::npos) << err;
}

TEST(SlcKeyFile, WorldReadableKeyFileIsRefused)
{
	TmpDir tmp;
	std::string text = slurp(data_dir("terminal-1001.keys"));
	KeysPtr k;
	std::string err;

	for (mode_t m : { 0644, 0604, 0600 | 0001, 0600 | 0002, 0620, 0666, 0777 }) {
		char ms[8];
		snprintf(ms, sizeof(ms), "%04o", (unsigned)m);
		std::string p = tmp.write(std::string("k") + ms, text, m);
		EXPECT_EQ(load(p, &k, &err), -1) << ms;
		EXPECT_EQ(k, nullptr);
		EXPECT_EQ(err, p + ": permissions " + ms +
			  " are too open: a key file must not be accessible by others "
			  "nor writable by its group (chmod 600 or 640)\n");
	}
	for (mode_t m : { 0600, 0640, 0400, 0440 }) {
		std::string p = tmp.write("ok" + std::to_string(m), text, m);
		EXPECT_EQ(load(p, &k, &err), 0) << m << " " << err;
		EXPECT_EQ(sgw_slcrypto_keys_count(k.get()), 1u);
	}
	/* The checked-in file itself, world-readable after a git checkout. */
	struct stat st;
	ASSERT_EQ(stat(data_dir("hub.keys").c_str(), &st), 0);
	if ((st.st_mode & 0007) != 0) {
		EXPECT_EQ(load(data_dir("hub.keys"), &k, &err), -1);
		EXPECT_NE(err.find("are too open"), std::string::npos) << err;
	}

	/* Not a regular file; missing file. */
	EXPECT_EQ(chmod(tmp.path().c_str(), 0700), 0);
	EXPECT_EQ(load(tmp.path(), &k, &err), -1);
	EXPECT_EQ(err, tmp.path() + ": not a regular file\n");
	EXPECT_EQ(load(tmp.path() + "/missing.keys", &k, &err), -1);
	EXPECT_EQ(err, tmp.path() + "/missing.keys: cannot open: No such file or directory\n");
}

}  // namespace
