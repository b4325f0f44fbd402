// SPDX-License-Identifier: BSD-3-Clause
// Unit tests for lib/sgw_satlink.c, the satlink wire format: round trips of
// every frame type field by field, every truncation of every frame refused,
// every bad field refused with its reason, Ethernet padding ignored, bodies of
// encrypted control frames left to the crypto layer, and the writers' limits.
// Every parse runs on a heap buffer of exactly the bytes given, so ASan or
// valgrind report any read past buf + len.

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "sgw_satlink.h"

namespace {

using Bytes = std::vector<uint8_t>;

sgw_satlink_hdr
Hdr(uint8_t type, uint8_t flags, uint16_t plen)
{
	sgw_satlink_hdr h{};
	h.version = SGW_SATLINK_VERSION;
	h.type = type;
	h.flags = flags;
	h.channel = type == SGW_SL_DATA ? 0xBEEF : 0;
	h.terminal_id = 0xA1B2C3D4;
	h.sender_epoch = 0x11223344;
	h.peer_epoch = 0x55667788;
	h.seq = 0xFFFFFFFE;
	h.payload_len = plen;
	return h;
}

Bytes
Frame(const sgw_satlink_hdr &h, const Bytes &body)
{
	Bytes b(SGW_SATLINK_HDR_LEN);
	EXPECT_EQ(sgw_satlink_write_hdr(b.data(), b.size(), &h), SGW_SATLINK_HDR_LEN);
	b.insert(b.end(), body.begin(), body.end());
	return b;
}

// Parse from an exact-size heap copy.
int
Parse(const Bytes &b, size_t len, sgw_satlink_hdr *h)
{
	std::vector<uint8_t> copy(b.begin(), b.begin() + static_cast<long>(len));
	uint8_t *p = len ? new uint8_t[len] : nullptr;
	if (len)
		memcpy(p, copy.data(), len);
	int r = sgw_satlink_parse_hdr(p, len, h);
	delete[] p;
	return r;
}

Bytes
StatusBody(uint32_t echo, uint32_t delay, const std::vector<uint32_t> &words)
{
	sgw_satlink_status st{};
	st.echo_seq = echo;
	st.echo_delay_us = delay;
	st.nwords = static_cast<uint16_t>(words.size());
	Bytes b(SGW_SATLINK_STATUS_FIXED + 4 * words.size());
	EXPECT_EQ(sgw_satlink_write_status(b.data(), b.size(), &st,
					   words.empty() ? nullptr : words.data()),
		  b.size());
	return b;
}

Bytes
HelloBody(uint32_t win, uint16_t mf, uint16_t fs, uint16_t idle = 250)
{
	sgw_satlink_hello hb{win, mf, fs, idle};
	Bytes b(SGW_SATLINK_HELLO_LEN);
	EXPECT_EQ(sgw_satlink_write_hello(b.data(), b.size(), &hb), SGW_SATLINK_HELLO_LEN);
	return b;
}

TEST(Satlink, HeaderLayoutIsBigEndianAt22Bytes)
{
	sgw_satlink_hdr h = Hdr(SGW_SL_DATA, SGW_SL_F_FIRST | SGW_SL_F_LAST, 0x0102);
	uint8_t b[SGW_SATLINK_HDR_LEN];
	ASSERT_EQ(sgw_satlink_write_hdr(b, sizeof(b), &h), 22u);
	const uint8_t want[22] = {0x10, 0x03, 0xBE, 0xEF, 0xA1, 0xB2, 0xC3, 0xD4,
				  0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88,
				  0xFF, 0xFF, 0xFF, 0xFE, 0x01, 0x02};
	EXPECT_EQ(0, memcmp(b, want, sizeof(want)));
	EXPECT_EQ(SGW_SATLINK_ETHERTYPE, 0x88B5);
}

TEST(Satlink, DataRoundTripEveryFlagCombination)
{
	const uint8_t data_flags[] = {SGW_SL_F_FIRST, SGW_SL_F_LAST, SGW_SL_F_RETX,
				      SGW_SL_F_DATAGRAM, SGW_SL_F_ENCRYPTED};
	for (unsigned m = 0; m < 32; m++) {
		uint8_t f = 0;
		for (unsigned i = 0; i < 5; i++)
			if (m & (1u << i))
				f |= data_flags[i];
		sgw_satlink_hdr h = Hdr(SGW_SL_DATA, f, 100);
		Bytes b = Frame(h, Bytes(100, 0xAB));
		sgw_satlink_hdr g{};
		ASSERT_EQ(Parse(b, b.size(), &g), SGW_SL_OK) << "flags " << int(f);
		EXPECT_EQ(g.version, 1);
		EXPECT_EQ(g.type, SGW_SL_DATA);
		EXPECT_EQ(g.flags, f);
		EXPECT_EQ(g.channel, 0xBEEF);
		EXPECT_EQ(g.terminal_id, 0xA1B2C3D4u);
		EXPECT_EQ(g.sender_epoch, 0x11223344u);
		EXPECT_EQ(g.peer_epoch, 0x55667788u);
		EXPECT_EQ(g.seq, 0xFFFFFFFEu);
		EXPECT_EQ(g.payload_len, 100);
	}
}

TEST(Satlink, StatusRoundTrip)
{
	std::vector<uint32_t> words;
	for (uint32_t i = 0; i < SGW_SATLINK_STATUS_MAX_WORDS; i++)
		words.push_back(i * 0x9E3779B9u);
	for (size_t n : {size_t(0), size_t(1), size_t(7), size_t(SGW_SATLINK_STATUS_MAX_WORDS)}) {
		std::vector<uint32_t> w(words.begin(), words.begin() + static_cast<long>(n));
		Bytes body = StatusBody(1234, 5678, w);
		sgw_satlink_hdr h = Hdr(SGW_SL_STATUS, 0, static_cast<uint16_t>(body.size()));
		Bytes b = Frame(h, body);
		ASSERT_LE(b.size(), SGW_SATLINK_STATUS_MAX_LEN);
		sgw_satlink_hdr g{};
		ASSERT_EQ(Parse(b, b.size(), &g), SGW_SL_OK);
		EXPECT_EQ(g.type, SGW_SL_STATUS);
		EXPECT_EQ(g.seq, 0xFFFFFFFEu);
		sgw_satlink_status st{};
		ASSERT_EQ(sgw_satlink_parse_status(b.data() + 22, g.payload_len, &st), SGW_SL_OK);
		EXPECT_EQ(st.echo_seq, 1234u);
		EXPECT_EQ(st.echo_delay_us, 5678u);
		ASSERT_EQ(st.nwords, n);
		for (uint32_t i = 0; i < n; i++)
			EXPECT_EQ(sgw_satlink_status_word(&st, i), w[i]);
		EXPECT_EQ(sgw_satlink_status_word(&st, static_cast<uint32_t>(n)), 0u);
	}
}

TEST(Satlink, HelloRoundTripAndPeerEpochZeroOnlyInHello)
{
	for (uint8_t type : {uint8_t(SGW_SL_HELLO), uint8_t(SGW_SL_HELLO_ACK)}) {
		Bytes body = HelloBody(8192, 1024, 1400, 65535);
		sgw_satlink_hdr h = Hdr(type, 0, SGW_SATLINK_HELLO_LEN);
		Bytes b = Frame(h, body);
		ASSERT_EQ(b.size(), SGW_SATLINK_HELLO_FRAME_LEN);
		sgw_satlink_hdr g{};
		ASSERT_EQ(Parse(b, b.size(), &g), SGW_SL_OK);
		EXPECT_EQ(g.type, type);
		sgw_satlink_hello hb{};
		ASSERT_EQ(sgw_satlink_parse_hello(b.data() + 22, SGW_SATLINK_HELLO_LEN, &hb),
			  SGW_SL_OK);
		EXPECT_EQ(hb.rx_window, 8192u);
		EXPECT_EQ(hb.max_frags, 1024);
		EXPECT_EQ(hb.frag_size, 1400);
		EXPECT_EQ(hb.idle_ms, 65535);

		h.peer_epoch = 0;
		b = Frame(h, body);
		EXPECT_EQ(Parse(b, b.size(), &g),
			  type == SGW_SL_HELLO ? SGW_SL_OK : SGW_SL_BAD_EPOCH);
	}
}

// Every prefix of every valid frame is refused: shorter than the header is
// TRUNC, a header whose payload runs past the bytes is BAD_LEN.
TEST(Satlink, EveryTruncationRefused)
{
	std::vector<Bytes> frames;
	frames.push_back(Frame(Hdr(SGW_SL_DATA, SGW_SL_F_FIRST, 40), Bytes(40, 1)));
	frames.push_back(Frame(Hdr(SGW_SL_DATA, SGW_SL_F_DATAGRAM, 1), Bytes(1, 1)));
	Bytes st = StatusBody(1, 2, {3, 4, 5});
	frames.push_back(Frame(Hdr(SGW_SL_STATUS, 0, static_cast<uint16_t>(st.size())), st));
	for (uint8_t t : {uint8_t(SGW_SL_HELLO), uint8_t(SGW_SL_HELLO_ACK)})
		frames.push_back(Frame(Hdr(t, 0, SGW_SATLINK_HELLO_LEN), HelloBody(64, 8, 512)));
	int n = 0;
	for (const Bytes &f : frames) {
		sgw_satlink_hdr g{};
		ASSERT_EQ(Parse(f, f.size(), &g), SGW_SL_OK);
		for (size_t len = 0; len < f.size(); len++) {
			int r = Parse(f, len, &g);
			EXPECT_EQ(r, len < SGW_SATLINK_HDR_LEN ? SGW_SL_TRUNC : SGW_SL_BAD_LEN)
				<< "len " << len << " of " << f.size();
			n++;
		}
	}
	EXPECT_GT(n, 150);
	sgw_satlink_hdr g{};
	EXPECT_EQ(sgw_satlink_parse_hdr(nullptr, 100, &g), SGW_SL_TRUNC);
}

TEST(Satlink, PaddingAfterPayloadIgnored)
{
	Bytes b = Frame(Hdr(SGW_SL_DATA, SGW_SL_F_LAST, 3), Bytes(3, 7));
	b.resize(60, 0);  // Ethernet minimum frame
	sgw_satlink_hdr g{};
	ASSERT_EQ(Parse(b, b.size(), &g), SGW_SL_OK);
	EXPECT_EQ(g.payload_len, 3);
	Bytes h = Frame(Hdr(SGW_SL_HELLO, 0, SGW_SATLINK_HELLO_LEN), HelloBody(1, 1, 1));
	h.resize(60, 0);
	ASSERT_EQ(Parse(h, h.size(), &g), SGW_SL_OK);
}

TEST(Satlink, BadVersionAndType)
{
	Bytes b = Frame(Hdr(SGW_SL_DATA, 0, 4), Bytes(4, 0));
	sgw_satlink_hdr g{};
	for (int v = 0; v < 16; v++) {
		Bytes c = b;
		c[0] = static_cast<uint8_t>(v << 4 | (c[0] & 0x0f));
		EXPECT_EQ(Parse(c, c.size(), &g), v == 1 ? SGW_SL_OK : SGW_SL_BAD_VERSION) << v;
	}
	for (int t = SGW_SL__TYPE_COUNT; t < 16; t++) {
		Bytes c = b;
		c[0] = static_cast<uint8_t>(0x10 | t);
		EXPECT_EQ(Parse(c, c.size(), &g), SGW_SL_BAD_TYPE) << t;
	}
}

TEST(Satlink, BadFlags)
{
	sgw_satlink_hdr g{};
	// Reserved bits on DATA.
	for (uint8_t bit : {uint8_t(0x10), uint8_t(0x20), uint8_t(0x40)}) {
		Bytes b = Frame(Hdr(SGW_SL_DATA, bit, 4), Bytes(4, 0));
		EXPECT_EQ(Parse(b, b.size(), &g), SGW_SL_BAD_FLAGS) << int(bit);
	}
	// DATA-only bits on control frames; ENCRYPTED is fine on all.
	Bytes st = StatusBody(0, 0, {});
	for (uint8_t bit = 1; bit != 0; bit = static_cast<uint8_t>(bit << 1)) {
		Bytes s = Frame(Hdr(SGW_SL_STATUS, bit, 12), st);
		Bytes h = Frame(Hdr(SGW_SL_HELLO, bit, SGW_SATLINK_HELLO_LEN), HelloBody(1, 1, 1));
		int want = bit == SGW_SL_F_ENCRYPTED ? SGW_SL_OK : SGW_SL_BAD_FLAGS;
		EXPECT_EQ(Parse(s, s.size(), &g), want) << int(bit);
		EXPECT_EQ(Parse(h, h.size(), &g), want) << int(bit);
	}
}

TEST(Satlink, BadLengths)
{
	sgw_satlink_hdr g{};
	Bytes d = Frame(Hdr(SGW_SL_DATA, 0, 0), Bytes());
	EXPECT_EQ(Parse(d, d.size(), &g), SGW_SL_BAD_LEN);  // DATA without payload
	// Clear HELLO bodies of any size but 12.
	for (uint16_t n : {0, 8, 11, 13, 64}) {
		Bytes h = Frame(Hdr(SGW_SL_HELLO, 0, n), Bytes(n, 1));
		EXPECT_EQ(Parse(h, h.size(), &g), SGW_SL_BAD_LEN) << n;
	}
	// STATUS body whose size does not match its word count.
	Bytes st = StatusBody(0, 0, {1, 2});
	Bytes s1 = Frame(Hdr(SGW_SL_STATUS, 0, static_cast<uint16_t>(st.size() - 4)), st);
	EXPECT_EQ(Parse(s1, s1.size(), &g), SGW_SL_BAD_LEN);
	Bytes s2 = Frame(Hdr(SGW_SL_STATUS, 0, 11), Bytes(11, 0));
	EXPECT_EQ(Parse(s2, s2.size(), &g), SGW_SL_BAD_LEN);
	// Encrypted control frames: the body is the crypto layer's (any length).
	Bytes e = Frame(Hdr(SGW_SL_STATUS, SGW_SL_F_ENCRYPTED, 5), Bytes(5, 0xEE));
	EXPECT_EQ(Parse(e, e.size(), &g), SGW_SL_OK);
	Bytes eh = Frame(Hdr(SGW_SL_HELLO_ACK, SGW_SL_F_ENCRYPTED, 36), Bytes(36, 0xEE));
	EXPECT_EQ(Parse(eh, eh.size(), &g), SGW_SL_OK);
	// A payload length past the frame.
	Bytes p = Frame(Hdr(SGW_SL_DATA, 0, 0xFFFF), Bytes(100, 0));
	EXPECT_EQ(Parse(p, p.size(), &g), SGW_SL_BAD_LEN);
}

TEST(Satlink, BadEpochsAndChannel)
{
	sgw_satlink_hdr g{};
	for (uint8_t t = 0; t < SGW_SL__TYPE_COUNT; t++) {
		uint16_t plen = t == SGW_SL_DATA ? 4 :
				t == SGW_SL_STATUS ? 12 : SGW_SATLINK_HELLO_LEN;
		Bytes body = t == SGW_SL_DATA ? Bytes(4, 0) : t == SGW_SL_STATUS ?
			     StatusBody(0, 0, {}) : HelloBody(1, 1, 1);
		sgw_satlink_hdr h = Hdr(t, 0, plen);
		h.sender_epoch = 0;
		Bytes b = Frame(h, body);
		EXPECT_EQ(Parse(b, b.size(), &g), SGW_SL_BAD_EPOCH) << int(t);
		h = Hdr(t, 0, plen);
		h.peer_epoch = 0;
		b = Frame(h, body);
		EXPECT_EQ(Parse(b, b.size(), &g),
			  t == SGW_SL_HELLO ? SGW_SL_OK : SGW_SL_BAD_EPOCH);
		if (t != SGW_SL_DATA) {
			h = Hdr(t, 0, plen);
			h.channel = 1;
			b = Frame(h, body);
			EXPECT_EQ(Parse(b, b.size(), &g), SGW_SL_BAD_CHANNEL) << int(t);
		}
	}
}

TEST(Satlink, StatusBodyParser)
{
	sgw_satlink_status st{};
	Bytes b = StatusBody(9, 8, {1, 2, 3});
	for (size_t len = 0; len < SGW_SATLINK_STATUS_FIXED; len++) {
		Bytes c(b.begin(), b.begin() + static_cast<long>(len));
		EXPECT_EQ(sgw_satlink_parse_status(c.empty() ? nullptr : c.data(), len, &st),
			  SGW_SL_TRUNC);
	}
	for (size_t len = SGW_SATLINK_STATUS_FIXED; len < b.size(); len++) {
		uint8_t *p = new uint8_t[len];
		memcpy(p, b.data(), len);
		EXPECT_EQ(sgw_satlink_parse_status(p, len, &st), SGW_SL_BAD_LEN) << len;
		delete[] p;
	}
	Bytes big = b;
	big[8] = 0x01;  // 257 words
	big[9] = 0x01;
	EXPECT_EQ(sgw_satlink_parse_status(big.data(), big.size(), &st), SGW_SL_BAD_BODY);
	EXPECT_EQ(sgw_satlink_parse_status(b.data(), b.size(), &st), SGW_SL_OK);
}

TEST(Satlink, HelloBodyParser)
{
	sgw_satlink_hello hb{};
	Bytes good = HelloBody(100, 2, 3);
	EXPECT_EQ(sgw_satlink_parse_hello(good.data(), SGW_SATLINK_HELLO_LEN - 1, &hb),
		  SGW_SL_TRUNC);
	Bytes longer = good;
	longer.push_back(0);
	EXPECT_EQ(sgw_satlink_parse_hello(longer.data(), longer.size(), &hb), SGW_SL_BAD_LEN);
	struct {
		uint32_t w;
		uint16_t mf, fs;
	} bad[] = {{0, 1, 1}, {SGW_SATLINK_MAX_WINDOW + 1, 1, 1}, {1, 0, 1}, {1, 1, 0}};
	for (auto &c : bad) {
		Bytes b = HelloBody(c.w, c.mf, c.fs);
		EXPECT_EQ(sgw_satlink_parse_hello(b.data(), b.size(), &hb), SGW_SL_BAD_BODY);
	}
}

TEST(Satlink, WritersRefuseSmallBuffers)
{
	sgw_satlink_hdr h = Hdr(SGW_SL_DATA, 0, 1);
	uint8_t buf[2048];
	EXPECT_EQ(sgw_satlink_write_hdr(buf, 21, &h), 0u);
	EXPECT_EQ(sgw_satlink_write_hdr(nullptr, 100, &h), 0u);
	h.type = 16;
	EXPECT_EQ(sgw_satlink_write_hdr(buf, sizeof(buf), &h), 0u);
	sgw_satlink_status st{};
	std::vector<uint32_t> w(SGW_SATLINK_STATUS_MAX_WORDS + 1, 0);
	st.nwords = 2;
	EXPECT_EQ(sgw_satlink_write_status(buf, 19, &st, w.data()), 0u);
	EXPECT_EQ(sgw_satlink_write_status(buf, 20, &st, w.data()), 20u);
	EXPECT_EQ(sgw_satlink_write_status(buf, 20, &st, nullptr), 0u);
	st.nwords = SGW_SATLINK_STATUS_MAX_WORDS + 1;
	EXPECT_EQ(sgw_satlink_write_status(buf, sizeof(buf), &st, w.data()), 0u);
	sgw_satlink_hello hb{1, 1, 1, 0};
	EXPECT_EQ(sgw_satlink_write_hello(buf, SGW_SATLINK_HELLO_LEN - 1, &hb), 0u);
}

TEST(Satlink, NamesAreStableAndDistinct)
{
	std::set<std::string> names;
	for (int r = 0; r < SGW_SL__REASON_COUNT; r++)
		names.insert(sgw_satlink_reason_name(r));
	EXPECT_EQ(names.size(), size_t(SGW_SL__REASON_COUNT));
	EXPECT_STREQ(sgw_satlink_reason_name(SGW_SL_BAD_FLAGS), "bad_flags");
	EXPECT_STREQ(sgw_satlink_reason_name(-1), "unknown");
	EXPECT_STREQ(sgw_satlink_reason_name(SGW_SL__REASON_COUNT), "unknown");
	EXPECT_STREQ(sgw_satlink_type_name(SGW_SL_HELLO_ACK), "hello_ack");
	EXPECT_STREQ(sgw_satlink_type_name(4), "unknown");
}

// Random single-byte corruption of the header: whatever the parser accepts
// re-encodes to exactly the same bytes (no field is silently reinterpreted).
TEST(Satlink, ParsedHeadersReencodeExactly)
{
	uint64_t s = 0x1234567;
	auto rnd = [&s]() {
		s ^= s << 13;
		s ^= s >> 7;
		s ^= s << 17;
		return s;
	};
	Bytes base = Frame(Hdr(SGW_SL_DATA, SGW_SL_F_FIRST, 64), Bytes(64, 0));
	int accepted = 0, refused = 0;
	for (int i = 0; i < 20000; i++) {
		Bytes b = base;
		b[rnd() % SGW_SATLINK_HDR_LEN] = static_cast<uint8_t>(rnd());
		sgw_satlink_hdr g{};
		if (Parse(b, b.size(), &g) != SGW_SL_OK) {
			refused++;
			continue;
		}
		accepted++;
		uint8_t out[SGW_SATLINK_HDR_LEN];
		ASSERT_EQ(sgw_satlink_write_hdr(out, sizeof(out), &g), SGW_SATLINK_HDR_LEN);
		ASSERT_EQ(0, memcmp(out, b.data(), SGW_SATLINK_HDR_LEN));
	}
	EXPECT_GT(accepted, 0);
	EXPECT_GT(refused, 0);
}

}  // namespace
