// SPDX-License-Identifier: BSD-3-Clause
// Tests of lib/sgw_stream.c: the split TCP stream messages carried as satlink
// channel payloads. Round trips of every type (IPv4 and IPv6 OPEN), the exact
// bytes of each layout, every prefix of every message refused with the right
// reason (exact-size heap copies: an over-read shows under ASan), one case
// per decode reason with its counter, and the encoder refusing what the
// decoder would refuse.

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "sgw_stream.h"

namespace {

sgw_stream_msg
Open4()
{
	sgw_stream_msg m;
	memset(&m, 0, sizeof(m));
	m.type = SGW_STREAM_OPEN;
	m.flags = SGW_STREAM_F_SPOOFED;
	m.opts = SGW_STREAM_O_MSS | SGW_STREAM_O_WS | SGW_STREAM_O_SACK | SGW_STREAM_O_TS;
	m.wscale = 7;
	m.mss = 1460;
	m.sport = 40001;
	m.dport = 443;
	m.off = 262144;
	const uint8_t s[4] = {192, 168, 7, 2}, d[4] = {203, 0, 113, 9};
	memcpy(m.saddr, s, 4);
	memcpy(m.daddr, d, 4);
	return m;
}

sgw_stream_msg
Open6()
{
	sgw_stream_msg m = Open4();
	m.flags = SGW_STREAM_F_IPV6;
	m.opts = SGW_STREAM_O_MSS | SGW_STREAM_O_SACK;
	m.wscale = 0;
	m.mss = 1220;
	for (int i = 0; i < 16; i++) {
		m.saddr[i] = static_cast<uint8_t>(0x20 + i);
		m.daddr[i] = static_cast<uint8_t>(0xa0 + i);
	}
	return m;
}

std::vector<sgw_stream_msg>
AllKinds(std::vector<uint8_t> *payload)
{
	std::vector<sgw_stream_msg> v;
	v.push_back(Open4());
	v.push_back(Open6());
	sgw_stream_msg m;
	memset(&m, 0, sizeof(m));
	m.type = SGW_STREAM_OPEN_OK;
	m.opts = SGW_STREAM_O_MSS | SGW_STREAM_O_TS;
	m.mss = 1400;
	m.off = 0x01020304;
	v.push_back(m);
	memset(&m, 0, sizeof(m));
	m.type = SGW_STREAM_OPEN_REFUSED;
	m.reason = SGW_STREAM_REFUSE_UNREACHABLE;
	v.push_back(m);
	memset(&m, 0, sizeof(m));
	m.type = SGW_STREAM_DATA;
	m.off = 0xfffffff0u;
	m.data = payload->data();
	m.len = static_cast<uint32_t>(payload->size());
	v.push_back(m);
	memset(&m, 0, sizeof(m));
	m.type = SGW_STREAM_FIN;
	m.off = 123456789;
	v.push_back(m);
	memset(&m, 0, sizeof(m));
	m.type = SGW_STREAM_RST;
	m.reason = SGW_STREAM_RST_IDLE;
	v.push_back(m);
	memset(&m, 0, sizeof(m));
	m.type = SGW_STREAM_CREDIT;
	m.off = 0x80000001u;
	v.push_back(m);
	return v;
}

void
ExpectSame(const sgw_stream_msg &a, const sgw_stream_msg &b)
{
	EXPECT_EQ(a.type, b.type);
	EXPECT_EQ(a.flags, b.flags);
	EXPECT_EQ(a.opts, b.opts);
	EXPECT_EQ(a.wscale, b.wscale);
	EXPECT_EQ(a.reason, b.reason);
	EXPECT_EQ(a.mss, b.mss);
	EXPECT_EQ(a.sport, b.sport);
	EXPECT_EQ(a.dport, b.dport);
	EXPECT_EQ(a.off, b.off);
	size_t alen = a.type != SGW_STREAM_OPEN ? 0 : (a.flags & SGW_STREAM_F_IPV6) ? 16 : 4;
	EXPECT_EQ(memcmp(a.saddr, b.saddr, alen), 0);
	EXPECT_EQ(memcmp(a.daddr, b.daddr, alen), 0);
	EXPECT_EQ(a.len, b.len);
	if (a.len == b.len && a.len > 0) {
		EXPECT_EQ(memcmp(a.data, b.data, a.len), 0);
	}
}

TEST(StreamCodec, RoundTripEveryType)
{
	std::vector<uint8_t> payload(1400);
	for (size_t i = 0; i < payload.size(); i++)
		payload[i] = static_cast<uint8_t>(i * 7 + 3);
	for (const sgw_stream_msg &m : AllKinds(&payload)) {
		SCOPED_TRACE(sgw_stream_type_name(m.type));
		std::vector<uint8_t> buf(sgw_stream_len(&m));
		ASSERT_GT(buf.size(), 0u);
		ASSERT_EQ(sgw_stream_encode(buf.data(), buf.size(), &m), buf.size());
		// one byte short: refused, nothing claimed
		EXPECT_EQ(sgw_stream_encode(buf.data(), buf.size() - 1, &m), 0u);
		std::vector<uint8_t> exact(buf);  // exact-size: ASan sees an over-read
		sgw_stream_msg d;
		uint64_t ctr[SGW_STREAM_E__COUNT] = {};
		ASSERT_EQ(sgw_stream_decode(exact.data(), exact.size(), &d, ctr), SGW_STREAM_E_OK);
		ExpectSame(m, d);
		for (uint64_t c : ctr)
			EXPECT_EQ(c, 0u);
	}
}

TEST(StreamCodec, ExactLayouts)
{
	std::vector<uint8_t> payload = {0xaa, 0xbb};
	std::vector<sgw_stream_msg> v = AllKinds(&payload);
	uint8_t b[64];
	// OPEN (IPv4): type, flags, opts, wscale, mss, ports, reserved, credit, addresses
	ASSERT_EQ(sgw_stream_encode(b, sizeof(b), &v[0]), 24u);
	const uint8_t open4[24] = {1, 2, 0x0f, 7, 0x05, 0xb4, 0x9c, 0x41, 0x01, 0xbb, 0, 0,
				   0, 4, 0, 0, 192, 168, 7, 2, 203, 0, 113, 9};
	EXPECT_EQ(memcmp(b, open4, 24), 0);
	ASSERT_EQ(sgw_stream_encode(b, sizeof(b), &v[1]), 48u);
	EXPECT_EQ(b[1], SGW_STREAM_F_IPV6);
	EXPECT_EQ(b[16], 0x20);
	EXPECT_EQ(b[47], 0xaf);
	ASSERT_EQ(sgw_stream_encode(b, sizeof(b), &v[2]), 12u);
	const uint8_t ok[12] = {2, 0x09, 0, 0, 0x05, 0x78, 0, 0, 1, 2, 3, 4};
	EXPECT_EQ(memcmp(b, ok, 12), 0);
	ASSERT_EQ(sgw_stream_encode(b, sizeof(b), &v[3]), 2u);
	EXPECT_EQ(b[0], 3);
	EXPECT_EQ(b[1], SGW_STREAM_REFUSE_UNREACHABLE);
	// DATA: 5 bytes of header, then the bytes
	ASSERT_EQ(sgw_stream_encode(b, sizeof(b), &v[4]), 7u);
	const uint8_t data[7] = {4, 0xff, 0xff, 0xff, 0xf0, 0xaa, 0xbb};
	EXPECT_EQ(memcmp(b, data, 7), 0);
	uint8_t h[5];
	sgw_stream_data_hdr(h, 0xfffffff0u);
	EXPECT_EQ(memcmp(h, data, 5), 0);
	ASSERT_EQ(sgw_stream_encode(b, sizeof(b), &v[5]), 5u);
	const uint8_t fin[5] = {5, 0x07, 0x5b, 0xcd, 0x15};
	EXPECT_EQ(memcmp(b, fin, 5), 0);
	ASSERT_EQ(sgw_stream_encode(b, sizeof(b), &v[6]), 2u);
	EXPECT_EQ(b[0], 6);
	EXPECT_EQ(b[1], SGW_STREAM_RST_IDLE);
	ASSERT_EQ(sgw_stream_encode(b, sizeof(b), &v[7]), 5u);
	const uint8_t cr[5] = {7, 0x80, 0, 0, 1};
	EXPECT_EQ(memcmp(b, cr, 5), 0);
}

TEST(StreamCodec, EveryPrefixRefused)
{
	std::vector<uint8_t> payload = {1, 2, 3};
	for (const sgw_stream_msg &m : AllKinds(&payload)) {
		SCOPED_TRACE(sgw_stream_type_name(m.type));
		std::vector<uint8_t> buf(sgw_stream_len(&m));
		ASSERT_EQ(sgw_stream_encode(buf.data(), buf.size(), &m), buf.size());
		for (size_t n = 0; n < buf.size(); n++) {
			SCOPED_TRACE(n);
			uint8_t *copy = new uint8_t[n + 1];
			memcpy(copy, buf.data(), n);
			uint64_t ctr[SGW_STREAM_E__COUNT] = {};
			sgw_stream_msg d;
			int e = sgw_stream_decode(n ? copy : nullptr, n, &d, ctr);
			int want;
			if (n == 0)
				want = SGW_STREAM_E_EMPTY;
			else if (m.type == SGW_STREAM_DATA && n >= SGW_STREAM_DATA_HDR)
				want = SGW_STREAM_E_NO_PAYLOAD;  // DATA: header alone
			else
				want = SGW_STREAM_E_TRUNC;
			if (m.type == SGW_STREAM_DATA && n > SGW_STREAM_DATA_HDR)
				want = SGW_STREAM_E_OK;  // a shorter DATA is a valid DATA
			EXPECT_EQ(e, want);
			if (want != SGW_STREAM_E_OK) {
				EXPECT_EQ(ctr[want], 1u);
			} else {
				EXPECT_EQ(d.len, n - SGW_STREAM_DATA_HDR);
			}
			delete[] copy;
		}
		// one byte too many: a fixed-size message refuses it, DATA takes it
		std::vector<uint8_t> longer(buf);
		longer.push_back(0);
		sgw_stream_msg d;
		int e = sgw_stream_decode(longer.data(), longer.size(), &d, nullptr);
		EXPECT_EQ(e, m.type == SGW_STREAM_DATA ? SGW_STREAM_E_OK : SGW_STREAM_E_BAD_LEN);
	}
}

int
Decode(std::vector<uint8_t> b, uint64_t *ctr)
{
	sgw_stream_msg d;
	return sgw_stream_decode(b.data(), b.size(), &d, ctr);
}

std::vector<uint8_t>
Enc(const sgw_stream_msg &m)
{
	std::vector<uint8_t> b(sgw_stream_len(&m));
	EXPECT_EQ(sgw_stream_encode(b.data(), b.size(), &m), b.size());
	return b;
}

TEST(StreamCodec, EachReasonCounted)
{
	uint64_t ctr[SGW_STREAM_E__COUNT] = {};
	EXPECT_EQ(Decode({0}, ctr), SGW_STREAM_E_BAD_TYPE);
	EXPECT_EQ(Decode({8, 0, 0, 0, 0}, ctr), SGW_STREAM_E_BAD_TYPE);
	EXPECT_EQ(Decode({0xff}, ctr), SGW_STREAM_E_BAD_TYPE);
	EXPECT_EQ(ctr[SGW_STREAM_E_BAD_TYPE], 3u);

	std::vector<uint8_t> o = Enc(Open4());
	std::vector<uint8_t> b = o;
	b[1] |= 0x04;  // unknown OPEN flag
	EXPECT_EQ(Decode(b, ctr), SGW_STREAM_E_BAD_FLAGS);
	b = o;
	b[2] |= 0x10;  // unknown option bit
	EXPECT_EQ(Decode(b, ctr), SGW_STREAM_E_BAD_FLAGS);
	b = o;
	b[11] = 1;  // reserved
	EXPECT_EQ(Decode(b, ctr), SGW_STREAM_E_BAD_FLAGS);
	EXPECT_EQ(ctr[SGW_STREAM_E_BAD_FLAGS], 3u);
	b = o;
	b[3] = 15;
	EXPECT_EQ(Decode(b, ctr), SGW_STREAM_E_BAD_WSCALE);
	b = o;
	b[4] = 0;
	b[5] = 63;
	EXPECT_EQ(Decode(b, ctr), SGW_STREAM_E_BAD_MSS);
	b = o;
	b[6] = b[7] = 0;
	EXPECT_EQ(Decode(b, ctr), SGW_STREAM_E_BAD_PORT);
	b = o;
	b[8] = b[9] = 0;
	EXPECT_EQ(Decode(b, ctr), SGW_STREAM_E_BAD_PORT);
	EXPECT_EQ(ctr[SGW_STREAM_E_BAD_PORT], 2u);
	// IPv4 length with the IPv6 flag: truncated
	b = o;
	b[1] |= SGW_STREAM_F_IPV6;
	EXPECT_EQ(Decode(b, ctr), SGW_STREAM_E_TRUNC);
	// an IPv6 OPEN claiming IPv4: too long
	b = Enc(Open6());
	b[1] = 0;
	EXPECT_EQ(Decode(b, ctr), SGW_STREAM_E_BAD_LEN);

	EXPECT_EQ(Decode({3, 0}, ctr), SGW_STREAM_E_BAD_REASON);
	EXPECT_EQ(Decode({3, SGW_STREAM_REFUSE__END}, ctr), SGW_STREAM_E_BAD_REASON);
	EXPECT_EQ(Decode({6, 0}, ctr), SGW_STREAM_E_BAD_REASON);
	EXPECT_EQ(Decode({6, SGW_STREAM_RST__END}, ctr), SGW_STREAM_E_BAD_REASON);
	EXPECT_EQ(ctr[SGW_STREAM_E_BAD_REASON], 4u);
	EXPECT_EQ(Decode({4, 0, 0, 0, 1}, ctr), SGW_STREAM_E_NO_PAYLOAD);
	EXPECT_EQ(Decode({7, 0, 0, 0, 1, 0}, ctr), SGW_STREAM_E_BAD_LEN);
	// OPEN_OK: wscale without the WS option, reserved bytes
	EXPECT_EQ(Decode({2, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0}, ctr), SGW_STREAM_E_BAD_FLAGS);
	EXPECT_EQ(Decode({2, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0}, ctr), SGW_STREAM_E_BAD_FLAGS);
	EXPECT_EQ(Decode({2, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0, 0}, ctr), SGW_STREAM_E_BAD_FLAGS);
	// an MSS value without the MSS option
	EXPECT_EQ(Decode({2, 0, 0, 0, 5, 0xb4, 0, 0, 0, 0, 0, 0}, ctr), SGW_STREAM_E_BAD_FLAGS);
	EXPECT_EQ(Decode({2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, ctr), SGW_STREAM_E_OK);
	uint64_t total = 0;
	for (int i = 0; i < SGW_STREAM_E__COUNT; i++)
		total += ctr[i];
	EXPECT_EQ(total, 22u);
	EXPECT_EQ(ctr[SGW_STREAM_E_OK], 0u);
	for (int i = 0; i < SGW_STREAM_E__COUNT; i++)
		EXPECT_STRNE(sgw_stream_err_name(i), "unknown");
	EXPECT_STREQ(sgw_stream_err_name(SGW_STREAM_E__COUNT), "unknown");
}

TEST(StreamCodec, EncoderRefusesWhatDecoderWould)
{
	uint8_t b[64];
	sgw_stream_msg m = Open4();
	m.sport = 0;
	EXPECT_EQ(sgw_stream_encode(b, sizeof(b), &m), 0u);
	m = Open4();
	m.wscale = 15;
	EXPECT_EQ(sgw_stream_encode(b, sizeof(b), &m), 0u);
	m = Open4();
	m.flags = 0x80;
	EXPECT_EQ(sgw_stream_encode(b, sizeof(b), &m), 0u);
	m = Open4();
	m.opts = 0;  // mss and wscale set without their options
	EXPECT_EQ(sgw_stream_encode(b, sizeof(b), &m), 0u);
	memset(&m, 0, sizeof(m));
	m.type = SGW_STREAM_DATA;
	EXPECT_EQ(sgw_stream_encode(b, sizeof(b), &m), 0u);  // no bytes
	m.type = SGW_STREAM_RST;
	EXPECT_EQ(sgw_stream_encode(b, sizeof(b), &m), 0u);  // reason 0
	m.type = SGW_STREAM_T__END;
	EXPECT_EQ(sgw_stream_encode(b, sizeof(b), &m), 0u);
	EXPECT_EQ(sgw_stream_len(&m), 0u);
}

}  // namespace
