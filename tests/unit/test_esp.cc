/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Tests of lib/sgw_esp.c, ESP transport mode with AES-GCM (RFC 4303/4106):
 *  - known answers through the ESP path: whole packets (IPv4, IPv4 with
 *    options, IPv6; AES-128 with the key and salt of draft-mcgrew-gcm-test's
 *    case 2, AES-256) produced by an independent implementation, scapy 2.5's
 *    scapy.layers.ipsec over python3-cryptography (OpenSSL), generator below;
 *    encrypt_at gives them byte for byte and decrypt turns them back;
 *  - round trips IPv4 / IPv6, AES-128 / AES-256, payloads 0..300 bytes, the
 *    ESP alignment, sequence numbers and IVs of consecutive packets;
 *  - sequence number overflow (no ESN): the last one is 2^32 - 1;
 *  - the replay window at its edges (32, 64, 1024), duplicates, seq 0, big
 *    jumps, and that a forged packet does not move it;
 *  - forgeries: every single-bit flip of the ESP part is refused and no
 *    plaintext comes out; wrong key; wrong SPI;
 *  - authenticated packets with bad padding and dummy packets (next hdr 59);
 *  - truncation at every length, with and without a consistent IP length;
 *  - what is refused on the way out (IPv6 extension headers, fragments,
 *    no room) and the key parser.
 *
 * The vectors were made with (python3, scapy 2.5):
 *   sa = SecurityAssociation(ESP, spi=SPI, crypt_algo="AES-GCM", crypt_key=KEYSALT)
 *   raw(sa.encrypt(pkt, seq_num=SEQ, iv=IV))
 * with kat4: IP(src="10.61.0.2", dst="10.61.0.1", id=0x1234, ttl=64, flags="DF")
 *   / UDP(sport=4000, dport=53) / Raw(b"satgw esp kat v4 payload"),
 * kat6: IPv6(src="fd00:6c::2", dst="fd00:6c::1", hlim=64, fl=0x12345) /
 *   TCP(sport=40000, dport=80, seq=1, ack=2, flags="PA") / Raw(b"satgw esp kat v6 / AES-256!"),
 * kat4opt: IP(src="10.61.0.2", dst="10.61.0.1", id=7, options=b"\1\1\1\0", proto=253) / b"ab".
 */
#include <gtest/gtest.h>

#include <intel-ipsec-mb.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <set>
#include <vector>

#include "sgw_esp.h"

namespace {

static const uint8_t kat4_in[] = {
	0x45, 0x00, 0x00, 0x34, 0x12, 0x34, 0x40, 0x00, 0x40, 0x11, 0x14, 0x09,
	0x0a, 0x3d, 0x00, 0x02, 0x0a, 0x3d, 0x00, 0x01, 0x0f, 0xa0, 0x00, 0x35,
	0x00, 0x20, 0x01, 0x6c, 0x73, 0x61, 0x74, 0x67, 0x77, 0x20, 0x65, 0x73,
	0x70, 0x20, 0x6b, 0x61, 0x74, 0x20, 0x76, 0x34, 0x20, 0x70, 0x61, 0x79,
	0x6c, 0x6f, 0x61, 0x64,
};
static const uint8_t kat4_out[] = {
	0x45, 0x00, 0x00, 0x58, 0x12, 0x34, 0x40, 0x00, 0x40, 0x32, 0x13, 0xc4,
	0x0a, 0x3d, 0x00, 0x02, 0x0a, 0x3d, 0x00, 0x01, 0x00, 0x00, 0x43, 0x21,
	0x00, 0x00, 0x87, 0x65, 0x49, 0x56, 0xed, 0x7e, 0x3b, 0x24, 0x4c, 0xfe,
	0xb4, 0x6f, 0x53, 0x03, 0x1b, 0x27, 0x5a, 0x6b, 0x2f, 0x40, 0xe6, 0x82,
	0x3a, 0x5a, 0x4f, 0x07, 0x3d, 0x93, 0xf2, 0x13, 0x18, 0x2d, 0x21, 0x9f,
	0x2c, 0x26, 0x69, 0x83, 0x7f, 0xa0, 0xcd, 0x50, 0xce, 0xa0, 0x41, 0x7e,
	0xbb, 0xc6, 0x86, 0x10, 0xd2, 0x2f, 0x42, 0x2e, 0xd7, 0x00, 0xf9, 0x0a,
	0xae, 0xe4, 0xfd, 0x4d,
};
static const uint8_t kat6_in[] = {
	0x60, 0x01, 0x23, 0x45, 0x00, 0x2f, 0x06, 0x40, 0xfd, 0x00, 0x00, 0x6c,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02,
	0xfd, 0x00, 0x00, 0x6c, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x01, 0x9c, 0x40, 0x00, 0x50, 0x00, 0x00, 0x00, 0x01,
	0x00, 0x00, 0x00, 0x02, 0x50, 0x18, 0x20, 0x00, 0x64, 0xe0, 0x00, 0x00,
	0x73, 0x61, 0x74, 0x67, 0x77, 0x20, 0x65, 0x73, 0x70, 0x20, 0x6b, 0x61,
	0x74, 0x20, 0x76, 0x36, 0x20, 0x2f, 0x20, 0x41, 0x45, 0x53, 0x2d, 0x32,
	0x35, 0x36, 0x21,
};
static const uint8_t kat6_out[] = {
	0x60, 0x01, 0x23, 0x45, 0x00, 0x54, 0x32, 0x40, 0xfd, 0x00, 0x00, 0x6c,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02,
	0xfd, 0x00, 0x00, 0x6c, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x01, 0xde, 0xad, 0xbe, 0xef, 0xff, 0xff, 0xff, 0xfe,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x85, 0x88, 0x74, 0x9f,
	0x02, 0x87, 0x62, 0xc1, 0x32, 0x67, 0xf5, 0x4a, 0x0c, 0xcf, 0x85, 0xb8,
	0x5c, 0x4f, 0x03, 0x50, 0x96, 0x06, 0x0e, 0x29, 0xa9, 0xde, 0x71, 0x0c,
	0x69, 0x43, 0x98, 0x30, 0xf3, 0xa3, 0x7b, 0x94, 0xa9, 0x34, 0x93, 0x9a,
	0x2f, 0x00, 0x1c, 0x72, 0xf1, 0xf8, 0xc9, 0xf0, 0x9b, 0x20, 0x81, 0x36,
	0x37, 0xa3, 0x7a, 0x73, 0x1a, 0x75, 0x4d, 0x67, 0x04, 0x83, 0xd6, 0xde,
	0x98, 0x9a, 0x93, 0xfd,
};
static const uint8_t kat4opt_in[] = {
	0x46, 0x00, 0x00, 0x1a, 0x00, 0x07, 0x00, 0x00, 0x40, 0xfd, 0x62, 0x63,
	0x0a, 0x3d, 0x00, 0x02, 0x0a, 0x3d, 0x00, 0x01, 0x01, 0x01, 0x01, 0x00,
	0x61, 0x62,
};
static const uint8_t kat4opt_out[] = {
	0x46, 0x00, 0x00, 0x3c, 0x00, 0x07, 0x00, 0x00, 0x40, 0x32, 0x63, 0x0c,
	0x0a, 0x3d, 0x00, 0x02, 0x0a, 0x3d, 0x00, 0x01, 0x01, 0x01, 0x01, 0x00,
	0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x01, 0x01, 0x02, 0x03, 0x04,
	0x05, 0x06, 0x07, 0x08, 0x62, 0xab, 0xa0, 0x76, 0x4e, 0x15, 0x2f, 0xb7,
	0xe1, 0xcd, 0xfe, 0x57, 0xd8, 0x42, 0x59, 0xcf, 0x46, 0xf3, 0xd9, 0x16,
};

const char *const kKey128 = "0x4c80cdefbb5d10da906ac73c3613a6342e443b68";
const char *const kKey256 =
	"0xabbccddef00112233445566778899aababbccddef00112233445566778899aab11223344";

constexpr uint32_t kOff = 64;   /* headroom the tests leave */

struct EspTest : public ::testing::Test {
	sgw_esp_engine *eng = nullptr;
	std::vector<sgw_esp_sa *> sas;

	void SetUp() override
	{
		eng = sgw_esp_engine_create();
		ASSERT_NE(eng, nullptr);
	}
	void TearDown() override
	{
		for (auto *s : sas)
			sgw_esp_sa_destroy(s);
		sgw_esp_engine_destroy(eng);
	}
	sgw_esp_sa *make(const char *key, uint32_t spi, uint32_t win = 0, uint32_t seq0 = 0)
	{
		sgw_esp_sa_conf c;
		memset(&c, 0, sizeof(c));
		EXPECT_EQ(sgw_esp_parse_key(key, &c), 0);
		c.spi = spi;
		c.replay_window = win;
		c.tx_seq_next = seq0;
		sgw_esp_sa *s = sgw_esp_sa_create(eng, &c);
		EXPECT_NE(s, nullptr);
		sas.push_back(s);
		return s;
	}
};

/* A buffer holding pkt at kOff with room behind it. */
/* g++ 12 at -O3 sees an impossible size here (a false positive). */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#pragma GCC diagnostic ignored "-Wrestrict"
#pragma GCC diagnostic ignored "-Warray-bounds"
#endif
std::vector<uint8_t> place(const uint8_t *p, size_t n)
{
	std::vector<uint8_t> b(kOff + n + 64, 0xee);
	memcpy(b.data() + kOff, p, n);
	return b;
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

uint16_t csum16(const uint8_t *h, size_t n)
{
	uint32_t s = 0;
	for (size_t i = 0; i + 1 < n; i += 2)
		s += (uint32_t)h[i] << 8 | h[i + 1];
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

std::vector<uint8_t> mk_ip4(size_t payload, uint8_t proto = 6, uint32_t seed = 1)
{
	std::vector<uint8_t> p(20 + payload);
	std::mt19937 rng(seed);
	p[0] = 0x45;
	p[2] = (uint8_t)(p.size() >> 8);
	p[3] = (uint8_t)p.size();
	p[4] = 0xab;
	p[6] = 0x40;    /* DF */
	p[8] = 64;
	p[9] = proto;
	const uint8_t a[8] = {10, 61, 0, 2, 10, 61, 0, 1};
	memcpy(&p[12], a, 8);
	for (size_t i = 20; i < p.size(); i++)
		p[i] = (uint8_t)rng();
	uint16_t c = csum16(p.data(), 20);
	p[10] = (uint8_t)(c >> 8);
	p[11] = (uint8_t)c;
	return p;
}

std::vector<uint8_t> mk_ip6(size_t payload, uint8_t nh = 17, uint32_t seed = 1)
{
	std::vector<uint8_t> p(40 + payload);
	std::mt19937 rng(seed);
	p[0] = 0x60;
	p[4] = (uint8_t)(payload >> 8);
	p[5] = (uint8_t)payload;
	p[6] = nh;
	p[7] = 64;
	p[8] = 0xfd;
	p[23] = 2;
	p[24] = 0xfd;
	p[39] = 1;
	for (size_t i = 40; i < p.size(); i++)
		p[i] = (uint8_t)rng();
	return p;
}

/* Encrypt pkt with sa; returns the ESP packet. */
std::vector<uint8_t> enc(sgw_esp_sa *sa, const std::vector<uint8_t> &pkt)
{
	auto b = place(pkt.data(), pkt.size());
	uint32_t off = 0;
	int n = sgw_esp_encrypt(sa, b.data(), (uint32_t)b.size(), kOff, (uint32_t)pkt.size(),
				&off);
	EXPECT_GT(n, 0) << sgw_esp_reason_name(n);
	if (n <= 0)
		return {};
	return std::vector<uint8_t>(b.begin() + off, b.begin() + off + n);
}

/* Decrypt: the result code, and the cleartext in *out on success. */
int dec(sgw_esp_sa *sa, std::vector<uint8_t> esp, std::vector<uint8_t> *out = nullptr,
	uint32_t *seq = nullptr)
{
	uint32_t off = 0;
	int n = sgw_esp_decrypt(sa, esp.data(), (uint32_t)esp.size(), &off, seq);
	if (n > 0 && out != nullptr)
		out->assign(esp.begin() + off, esp.begin() + off + n);
	return n;
}

uint64_t dropped(sgw_esp_sa *sa, sgw_esp_reason r)
{
	sgw_esp_stats st;
	sgw_esp_get_stats(sa, &st);
	return st.rx_dropped[r];
}

/* An authenticated ESP packet with any plaintext trailer (bad padding, dummy),
 * built with IPsec-MB directly: outer IPv4 header, SPI, seq, IV, GCM. */
std::vector<uint8_t> seal_raw(const char *keytext, uint32_t spi, uint32_t seq,
			      const std::vector<uint8_t> &plain)
{
	sgw_esp_sa_conf c;
	memset(&c, 0, sizeof(c));
	EXPECT_EQ(sgw_esp_parse_key(keytext, &c), 0);
	IMB_MGR *mgr = alloc_mb_mgr(0);
	init_mb_mgr_auto(mgr, nullptr);
	alignas(64) gcm_key_data kd;
	gcm_context_data gc;
	if (c.key_len == 16)
		IMB_AES128_GCM_PRE(mgr, c.key, &kd);
	else
		IMB_AES256_GCM_PRE(mgr, c.key, &kd);
	auto p = mk_ip4(16 + plain.size() + 16, 50);
	uint8_t *e = &p[20];
	const uint8_t hdr[16] = {(uint8_t)(spi >> 24), (uint8_t)(spi >> 16), (uint8_t)(spi >> 8),
				 (uint8_t)spi, (uint8_t)(seq >> 24), (uint8_t)(seq >> 16),
				 (uint8_t)(seq >> 8), (uint8_t)seq, 9, 8, 7, 6, 5, 4, 3, 2};
	memcpy(e, hdr, 16);
	memcpy(e + 16, plain.data(), plain.size());
	uint8_t nonce[12];
	memcpy(nonce, c.salt, 4);
	memcpy(nonce + 4, e + 8, 8);
	if (c.key_len == 16)
		IMB_AES128_GCM_ENC(mgr, &kd, &gc, e + 16, e + 16, plain.size(), nonce, e, 8,
				   e + 16 + plain.size(), 16);
	else
		IMB_AES256_GCM_ENC(mgr, &kd, &gc, e + 16, e + 16, plain.size(), nonce, e, 8,
				   e + 16 + plain.size(), 16);
	free_mb_mgr(mgr);
	return p;
}

struct Kat {
	const char *key;
	uint32_t spi, seq;
	uint64_t iv;
	const uint8_t *in;
	size_t in_len;
	const uint8_t *out;
	size_t out_len;
};

TEST_F(EspTest, KnownAnswersThroughEspPath)
{
	const Kat kats[] = {
		{kKey128, 0x4321, 0x8765, 0x4956ed7e3b244cfeULL, kat4_in, sizeof(kat4_in),
		 kat4_out, sizeof(kat4_out)},
		{kKey256, 0xdeadbeef, 0xfffffffe, 1, kat6_in, sizeof(kat6_in), kat6_out,
		 sizeof(kat6_out)},
		{kKey128, 0x100, 1, 0x0102030405060708ULL, kat4opt_in, sizeof(kat4opt_in),
		 kat4opt_out, sizeof(kat4opt_out)},
	};
	for (const auto &k : kats) {
		sgw_esp_sa *sa = make(k.key, k.spi);
		auto b = place(k.in, k.in_len);
		uint32_t off = 0;
		int n = sgw_esp_encrypt_at(sa, k.seq, k.iv, b.data(), (uint32_t)b.size(), kOff,
					   (uint32_t)k.in_len, &off);
		ASSERT_EQ(n, (int)k.out_len) << sgw_esp_reason_name(n);
		EXPECT_EQ(off, kOff - SGW_ESP_HEADROOM);
		EXPECT_EQ(0, memcmp(b.data() + off, k.out, k.out_len));
		/* encrypt_at leaves the send state alone */
		EXPECT_EQ(sgw_esp_tx_seq_next(sa), 1u);

		std::vector<uint8_t> clear;
		uint32_t seq = 0;
		ASSERT_EQ(dec(sa, std::vector<uint8_t>(k.out, k.out + k.out_len), &clear, &seq),
			  (int)k.in_len);
		EXPECT_EQ(clear, std::vector<uint8_t>(k.in, k.in + k.in_len));
		EXPECT_EQ(seq, k.seq);
		EXPECT_EQ(sgw_esp_rx_top(sa), k.seq);
	}
}

TEST_F(EspTest, RoundTripsV4V6)
{
	for (const char *key : {kKey128, kKey256}) {
		sgw_esp_sa *tx = make(key, 0x1001);
		sgw_esp_sa *rx = make(key, 0x1001);
		std::set<std::vector<uint8_t>> ivs;
		uint32_t expect_seq = 1;
		for (int v6 = 0; v6 <= 1; v6++) {
			for (size_t pl = 0; pl <= 300; pl++) {
				auto p = v6 ? mk_ip6(pl, 6, (uint32_t)pl) : mk_ip4(pl, 17, (uint32_t)pl);
				auto e = enc(tx, p);
				ASSERT_FALSE(e.empty());
				size_t hl = v6 ? 40 : 20;
				/* ESP, aligned to 4, protocol 50, length fields right */
				EXPECT_EQ((e.size() - hl - 16 - 16) % 4, 0u);
				EXPECT_EQ(e.size() - p.size(), 16 + 16 + 2 + (4 - (pl + 2) % 4) % 4);
				if (v6) {
					EXPECT_EQ(e[6], 50);
					EXPECT_EQ((size_t)(e[4] << 8 | e[5]), e.size() - 40);
				} else {
					EXPECT_EQ(e[9], 50);
					EXPECT_EQ((size_t)(e[2] << 8 | e[3]), e.size());
					EXPECT_EQ(csum16(e.data(), 20), 0);
					EXPECT_EQ(e[8], p[8]);    /* TTL kept */
					EXPECT_EQ(e[4], p[4]);    /* ID kept */
				}
				uint32_t seq = (uint32_t)e[hl + 4] << 24 | (uint32_t)e[hl + 5] << 16 |
					       (uint32_t)e[hl + 6] << 8 | e[hl + 7];
				EXPECT_EQ(seq, expect_seq++);
				ivs.insert(std::vector<uint8_t>(e.begin() + hl + 8,
								e.begin() + hl + 16));
				std::vector<uint8_t> clear;
				ASSERT_EQ(dec(rx, e, &clear), (int)p.size());
				EXPECT_EQ(clear, p);
			}
		}
		EXPECT_EQ(ivs.size(), 2u * 301u);   /* never an IV twice */
		sgw_esp_stats st;
		sgw_esp_get_stats(rx, &st);
		EXPECT_EQ(st.decrypted, 2u * 301u);
		for (int r = 1; r < SGW_ESP__NUM; r++)
			EXPECT_EQ(st.rx_dropped[r], 0u) << sgw_esp_reason_name(r);
	}
}

TEST_F(EspTest, SequenceNumberOverflowRefuses)
{
	sgw_esp_sa *tx = make(kKey128, 7, 0, 0xfffffffeu);
	sgw_esp_sa *rx = make(kKey128, 7);
	auto p = mk_ip4(10);
	auto e1 = enc(tx, p);
	auto e2 = enc(tx, p);
	ASSERT_FALSE(e2.empty());
	EXPECT_EQ(e2[24], 0xff);
	EXPECT_EQ(e2[27], 0xff);   /* 2^32 - 1, the last */
	EXPECT_EQ(sgw_esp_tx_seq_next(tx), 0u);
	auto b = place(p.data(), p.size());
	auto before = b;
	uint32_t off = 0;
	EXPECT_EQ(sgw_esp_encrypt(tx, b.data(), (uint32_t)b.size(), kOff, (uint32_t)p.size(), &off),
		  -SGW_ESP_SEQ_OVERFLOW);
	EXPECT_EQ(b, before);   /* nothing written */
	sgw_esp_stats st;
	sgw_esp_get_stats(tx, &st);
	EXPECT_EQ(st.tx_refused[SGW_ESP_SEQ_OVERFLOW], 1u);
	EXPECT_EQ(st.encrypted, 2u);
	EXPECT_EQ(dec(rx, e1), (int)p.size());
	EXPECT_EQ(dec(rx, e2), (int)p.size());
	EXPECT_EQ(sgw_esp_rx_top(rx), 0xffffffffu);
}

/* Packets with given sequence numbers, sealed by one sender. */
std::vector<uint8_t> at_seq(sgw_esp_sa *tx, uint32_t seq, uint64_t iv)
{
	auto p = mk_ip4(40, 6, seq);
	auto b = place(p.data(), p.size());
	uint32_t off = 0;
	int n = sgw_esp_encrypt_at(tx, seq, iv, b.data(), (uint32_t)b.size(), kOff,
				   (uint32_t)p.size(), &off);
	EXPECT_GT(n, 0);
	return std::vector<uint8_t>(b.begin() + off, b.begin() + off + n);
}

TEST_F(EspTest, ReplayWindowEdges)
{
	for (uint32_t win : {32u, 64u, 100u, 1024u}) {
		sgw_esp_sa *tx = make(kKey128, 9);
		sgw_esp_sa *rx = make(kKey128, 9, win);
		uint64_t iv = 1;
		const uint32_t top = 5000;
		ASSERT_GT(dec(rx, at_seq(tx, top, iv++)), 0);
		/* the oldest inside the window, and the first outside */
		EXPECT_GT(dec(rx, at_seq(tx, top - win + 1, iv++)), 0) << win;
		EXPECT_EQ(dec(rx, at_seq(tx, top - win, iv++)), -SGW_ESP_TOO_OLD) << win;
		EXPECT_EQ(dec(rx, at_seq(tx, 1, iv++)), -SGW_ESP_TOO_OLD);
		/* duplicates */
		EXPECT_EQ(dec(rx, at_seq(tx, top, iv++)), -SGW_ESP_REPLAY);
		EXPECT_EQ(dec(rx, at_seq(tx, top - win + 1, iv++)), -SGW_ESP_REPLAY);
		/* out of order inside the window, once each */
		for (uint32_t s = top - 1; s > top - win + 1; s -= 7) {
			EXPECT_GT(dec(rx, at_seq(tx, s, iv++)), 0) << s;
			EXPECT_EQ(dec(rx, at_seq(tx, s, iv++)), -SGW_ESP_REPLAY) << s;
		}
		/* seq 0 is never sent */
		EXPECT_EQ(dec(rx, at_seq(tx, 0, iv++)), -SGW_ESP_BAD_SEQ);
		/* a jump far ahead: the old top falls out, the gap below is open */
		const uint32_t far = top + 3 * win + 13;
		EXPECT_GT(dec(rx, at_seq(tx, far, iv++)), 0);
		EXPECT_EQ(dec(rx, at_seq(tx, top, iv++)), -SGW_ESP_TOO_OLD);
		EXPECT_GT(dec(rx, at_seq(tx, far - 1, iv++)), 0);
		EXPECT_GT(dec(rx, at_seq(tx, far - win + 1, iv++)), 0);
		EXPECT_EQ(sgw_esp_rx_top(rx), far);
		/* the top of the space */
		EXPECT_GT(dec(rx, at_seq(tx, 0xffffffffu, iv++)), 0);
		EXPECT_EQ(dec(rx, at_seq(tx, 0xffffffffu, iv++)), -SGW_ESP_REPLAY);
		EXPECT_GT(dec(rx, at_seq(tx, 0xffffffffu - win + 1, iv++)), 0);
		EXPECT_EQ(dec(rx, at_seq(tx, 0xffffffffu - win, iv++)), -SGW_ESP_TOO_OLD);
	}
	/* windows out of range are refused */
	sgw_esp_sa_conf c;
	memset(&c, 0, sizeof(c));
	ASSERT_EQ(sgw_esp_parse_key(kKey128, &c), 0);
	c.spi = 1;
	c.replay_window = 31;
	EXPECT_EQ(sgw_esp_sa_create(eng, &c), nullptr);
	c.replay_window = 1025;
	EXPECT_EQ(sgw_esp_sa_create(eng, &c), nullptr);
	c.replay_window = 0;
	c.spi = 0;
	EXPECT_EQ(sgw_esp_sa_create(eng, &c), nullptr);
}

/* Against a model: random order, duplicates, jumps; the window decides like a
 * set of seen numbers bounded by top - win. */
TEST_F(EspTest, ReplayWindowAgainstModel)
{
	const uint32_t win = 64;
	sgw_esp_sa *tx = make(kKey128, 11);
	sgw_esp_sa *rx = make(kKey128, 11, win);
	std::mt19937 rng(42);
	std::set<uint32_t> seen;
	uint32_t top = 0, base = 1;
	uint64_t iv = 1;
	for (int i = 0; i < 4000; i++) {
		uint32_t s;
		int k = (int)(rng() % 10);
		if (k < 5)
			s = base + (uint32_t)(rng() % 80);
		else if (k < 9)
			s = top > 100 ? top - (uint32_t)(rng() % 100) : 1 + (uint32_t)(rng() % 100);
		else
			s = top + 1 + (uint32_t)(rng() % 300);
		if (s == 0)
			s = 1;
		if (k < 5)
			base += (uint32_t)(rng() % 3);
		int want;
		if (top != 0 && s <= top && top - s >= win)
			want = -SGW_ESP_TOO_OLD;
		else if (seen.count(s))
			want = -SGW_ESP_REPLAY;
		else
			want = 1;
		int got = dec(rx, at_seq(tx, s, iv++));
		if (want > 0) {
			ASSERT_GT(got, 0) << "i " << i << " s " << s << " top " << top;
			seen.insert(s);
			if (s > top)
				top = s;
		} else {
			ASSERT_EQ(got, want) << "i " << i << " s " << s << " top " << top;
		}
	}
}

TEST_F(EspTest, ForgedIcvAndEveryBitFlipRefused)
{
	sgw_esp_sa *tx = make(kKey128, 0x2222);
	sgw_esp_sa *rx = make(kKey128, 0x2222);
	auto p = mk_ip4(33);
	auto e = enc(tx, p);
	ASSERT_FALSE(e.empty());
	uint64_t refused = 0;
	for (size_t byte = 20; byte < e.size(); byte++) {
		for (int bit = 0; bit < 8; bit++) {
			auto f = e;
			f[byte] ^= (uint8_t)(1u << bit);
			uint32_t off = 0;
			int n = sgw_esp_decrypt(rx, f.data(), (uint32_t)f.size(), &off, nullptr);
			ASSERT_LT(n, 0) << byte << "." << bit;
			refused++;
			if (byte < 24) {
				EXPECT_EQ(n, -SGW_ESP_BAD_SPI);
			} else if (byte < 28 && (f[24] | f[25] | f[26] | f[27]) == 0) {
				EXPECT_EQ(n, -SGW_ESP_BAD_SEQ);     /* seq 1 -> 0 */
			} else {
				EXPECT_EQ(n, -SGW_ESP_AUTH_FAIL) << sgw_esp_reason_name(n);
			}
			if (n == -SGW_ESP_AUTH_FAIL) {
				/* the plaintext area is zeroed, never exposed */
				for (size_t i = 36; i < f.size() - 16; i++)
					ASSERT_EQ(f[i], 0) << i;
			}
		}
	}
	EXPECT_EQ(dropped(rx, SGW_ESP_BAD_SPI), 4u * 8u);
	EXPECT_EQ(dropped(rx, SGW_ESP_BAD_SEQ), 1u);
	EXPECT_EQ(dropped(rx, SGW_ESP_AUTH_FAIL), refused - 4u * 8u - 1u);
	EXPECT_EQ(sgw_esp_rx_top(rx), 0u);  /* nothing authenticated, window untouched */
	/* the genuine packet still passes */
	EXPECT_EQ(dec(rx, e), (int)p.size());
	/* a forged packet with a sequence number far ahead does not move the window */
	auto far = at_seq(tx, 100000, 77);
	far[far.size() - 1] ^= 1;
	EXPECT_EQ(dec(rx, far), -SGW_ESP_AUTH_FAIL);
	EXPECT_EQ(sgw_esp_rx_top(rx), 1u);
	EXPECT_GT(dec(rx, at_seq(tx, 2, 78)), 0);
	/* wrong key, same SPI */
	sgw_esp_sa *other = make(kKey256, 0x2222);
	EXPECT_EQ(dec(other, enc(tx, p)), -SGW_ESP_AUTH_FAIL);
	/* an SA for another SPI */
	sgw_esp_sa *spi2 = make(kKey128, 0x2223);
	EXPECT_EQ(dec(spi2, enc(tx, p)), -SGW_ESP_BAD_SPI);
}

TEST_F(EspTest, BadPaddingAndDummyAfterAuthentication)
{
	sgw_esp_sa *rx = make(kKey128, 0x55);
	/* payload "abcd" | pad 1 2 | pad len 2 | nh 6: fine */
	std::vector<uint8_t> good = {'a', 'b', 'c', 'd', 1, 2, 2, 6};
	std::vector<uint8_t> clear;
	ASSERT_EQ(dec(rx, seal_raw(kKey128, 0x55, 1, good), &clear), 24);
	EXPECT_EQ(clear[9], 6);
	EXPECT_EQ(0, memcmp(&clear[20], "abcd", 4));
	/* pad bytes not 1, 2 */
	std::vector<uint8_t> badb = {'a', 'b', 'c', 'd', 1, 3, 2, 6};
	EXPECT_EQ(dec(rx, seal_raw(kKey128, 0x55, 2, badb)), -SGW_ESP_BAD_PAD);
	/* pad length beyond the plaintext */
	std::vector<uint8_t> badl = {'a', 'b', 7, 6};
	EXPECT_EQ(dec(rx, seal_raw(kKey128, 0x55, 3, badl)), -SGW_ESP_BAD_PAD);
	/* the smallest: no payload, no pad */
	std::vector<uint8_t> empty = {0, 6};
	EXPECT_EQ(dec(rx, seal_raw(kKey128, 0x55, 4, empty)), 20);
	/* dummy packet (next header 59): authenticated, discarded */
	std::vector<uint8_t> dummy = {'x', 'y', 0, 59};
	EXPECT_EQ(dec(rx, seal_raw(kKey128, 0x55, 5, dummy)), -SGW_ESP_DUMMY);
	EXPECT_EQ(dropped(rx, SGW_ESP_BAD_PAD), 2u);
	EXPECT_EQ(dropped(rx, SGW_ESP_DUMMY), 1u);
	/* they were authenticated: their sequence numbers are taken */
	EXPECT_EQ(dec(rx, seal_raw(kKey128, 0x55, 2, good)), -SGW_ESP_REPLAY);
}

TEST_F(EspTest, TruncatedAtEveryLength)
{
	sgw_esp_sa *tx = make(kKey256, 0x77);
	sgw_esp_sa *rx = make(kKey256, 0x77);
	for (int v6 = 0; v6 <= 1; v6++) {
		auto p = v6 ? mk_ip6(50) : mk_ip4(50);
		auto e = enc(tx, p);
		ASSERT_FALSE(e.empty());
		size_t hl = v6 ? 40 : 20;
		for (size_t n = 0; n < e.size(); n++) {
			/* the buffer is short, the IP length still says the whole */
			auto t = e;
			uint32_t off = 0;
			int r = sgw_esp_decrypt(rx, t.data(), (uint32_t)n, &off, nullptr);
			EXPECT_EQ(r, -SGW_ESP_BAD_LEN) << n << " " << sgw_esp_reason_name(r);
			/* the IP length agrees with the truncation */
			if (n >= hl) {
				if (v6) {
					t[4] = (uint8_t)((n - 40) >> 8);
					t[5] = (uint8_t)(n - 40);
				} else {
					t[2] = (uint8_t)(n >> 8);
					t[3] = (uint8_t)n;
				}
				r = sgw_esp_decrypt(rx, t.data(), (uint32_t)n, &off, nullptr);
				if (n < hl + 16 + 2 + 16)
					EXPECT_EQ(r, -SGW_ESP_BAD_LEN) << n;
				else
					EXPECT_EQ(r, -SGW_ESP_AUTH_FAIL) << n;
			}
		}
		/* a null pointer is an argument error, not a crash */
		uint32_t off = 0;
		EXPECT_EQ(sgw_esp_decrypt(rx, nullptr, 10, &off, nullptr), -SGW_ESP_BAD_ARG);
		/* bytes past the IP length (link padding) are ignored */
		auto padded = e;
		padded.resize(e.size() + 7, 0);
		std::vector<uint8_t> clear;
		EXPECT_EQ(dec(rx, padded, &clear), (int)p.size());
		EXPECT_EQ(clear, p);
	}
	sgw_esp_stats st;
	sgw_esp_get_stats(rx, &st);
	EXPECT_EQ(st.decrypted, 2u);
}

TEST_F(EspTest, RefusedOnTheWayOut)
{
	sgw_esp_sa *tx = make(kKey128, 0x88);
	uint32_t off = 0;
	/* IPv6 extension headers */
	for (uint8_t nh : {0, 43, 44, 60, 51}) {
		auto p = mk_ip6(24, nh);
		auto b = place(p.data(), p.size());
		EXPECT_EQ(sgw_esp_encrypt(tx, b.data(), (uint32_t)b.size(), kOff, (uint32_t)p.size(),
					  &off), -SGW_ESP_UNSUPPORTED) << (int)nh;
	}
	/* IPv4 fragments */
	auto f = mk_ip4(24);
	f[6] = 0x20;    /* MF */
	auto b = place(f.data(), f.size());
	EXPECT_EQ(sgw_esp_encrypt(tx, b.data(), (uint32_t)b.size(), kOff, (uint32_t)f.size(), &off),
		  -SGW_ESP_BAD_IP);
	/* IP length disagrees with len */
	auto p = mk_ip4(24);
	b = place(p.data(), p.size());
	EXPECT_EQ(sgw_esp_encrypt(tx, b.data(), (uint32_t)b.size(), kOff, (uint32_t)p.size() - 1,
				  &off), -SGW_ESP_BAD_LEN);
	/* no headroom, no tailroom (payload 24: pad 2 + 2 + 16 = 20 needed) */
	std::vector<uint8_t> front(15 + p.size() + 64);
	memcpy(front.data() + 15, p.data(), p.size());
	EXPECT_EQ(sgw_esp_encrypt(tx, front.data(), (uint32_t)front.size(), 15, (uint32_t)p.size(),
				  &off), -SGW_ESP_NO_ROOM);
	std::vector<uint8_t> tight(16 + p.size() + 19);
	memcpy(tight.data() + 16, p.data(), p.size());
	EXPECT_EQ(sgw_esp_encrypt(tx, tight.data(), (uint32_t)tight.size(), 16, (uint32_t)p.size(),
				  &off), -SGW_ESP_NO_ROOM);
	tight.push_back(0);
	EXPECT_EQ(sgw_esp_encrypt(tx, tight.data(), (uint32_t)tight.size(), 16, (uint32_t)p.size(),
				  &off), (int)(p.size() + 16 + 4 + 16));
	/* not IP */
	std::vector<uint8_t> junk(40, 0x11);
	b = place(junk.data(), junk.size());
	EXPECT_EQ(sgw_esp_encrypt(tx, b.data(), (uint32_t)b.size(), kOff, 40, &off), -SGW_ESP_BAD_IP);
	sgw_esp_stats st;
	sgw_esp_get_stats(tx, &st);
	EXPECT_EQ(st.encrypted, 1u);
	EXPECT_EQ(st.tx_refused[SGW_ESP_UNSUPPORTED], 5u);
	EXPECT_EQ(st.tx_refused[SGW_ESP_NO_ROOM], 2u);
	/* only the successful one used a sequence number */
	EXPECT_EQ(sgw_esp_tx_seq_next(tx), 2u);
	/* decrypt: not ESP, IPv6 with an extension header in front */
	sgw_esp_sa *rx = make(kKey128, 0x88);
	EXPECT_EQ(dec(rx, mk_ip4(40, 6)), -SGW_ESP_NOT_ESP);
	EXPECT_EQ(dec(rx, mk_ip6(40, 0)), -SGW_ESP_UNSUPPORTED);
}

TEST(EspKey, Parse)
{
	sgw_esp_sa_conf c;
	memset(&c, 0, sizeof(c));
	ASSERT_EQ(sgw_esp_parse_key(kKey128, &c), 0);
	EXPECT_EQ(c.key_len, 16u);
	EXPECT_EQ(c.key[0], 0x4c);
	EXPECT_EQ(c.key[15], 0x34);
	EXPECT_EQ(c.salt[0], 0x2e);
	EXPECT_EQ(c.salt[3], 0x68);
	ASSERT_EQ(sgw_esp_parse_key(kKey256 + 2, &c), 0);   /* without 0x */
	EXPECT_EQ(c.key_len, 32u);
	EXPECT_EQ(c.salt[3], 0x44);
	EXPECT_NE(sgw_esp_parse_key("0x0102", &c), 0);
	EXPECT_NE(sgw_esp_parse_key("0x4c80cdefbb5d10da906ac73c3613a6342e443b6", &c), 0);
	EXPECT_NE(sgw_esp_parse_key("0x4c80cdefbb5d10da906ac73c3613a6342e443b6g", &c), 0);
	/* AES-192 (56 digits) is not offered */
	EXPECT_NE(sgw_esp_parse_key("0x000102030405060708090a0b0c0d0e0f101112131415161718191a1b",
				    &c), 0);
	EXPECT_NE(sgw_esp_parse_key(nullptr, &c), 0);
	EXPECT_STREQ(sgw_esp_reason_name(-SGW_ESP_AUTH_FAIL), "auth_fail");
	EXPECT_STREQ(sgw_esp_reason_name(SGW_ESP__NUM), "unknown");
}

} // namespace
