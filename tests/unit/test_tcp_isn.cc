// SPDX-License-Identifier: BSD-3-Clause
// SipHash-2-4 (lib/sgw_siphash.c) against the reference vectors, and RFC 6528
// ISNs (sgw_tcp_isn): M the 4-us timer from the time passed in, F keyed by the
// stack's secret over the 4-tuple.

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <set>

#include "sgw_siphash.h"
#include "sgw_tcp.h"

namespace {

// The reference implementation's vectors_sip64 (key 00..0f, message 00..n-1),
// n = 0..16; n = 15 is the worked example of the paper's Appendix A.
const uint64_t kVectors[17] = {
	0x726fdb47dd0e0e31ull, 0x74f839c593dc67fdull, 0x0d6c8009d9a94f5aull,
	0x85676696d7fb7e2dull, 0xcf2794e0277187b7ull, 0x18765564cd99a68dull,
	0xcbc9466e58fee3ceull, 0xab0200f58b01d137ull, 0x93f5f5799a932462ull,
	0x9e0082df0ba9e4b0ull, 0x7a5dbbc594ddb9f3ull, 0xf4b32f46226bada7ull,
	0x751e8fbc860ee5fbull, 0x14ea5627c0843d90ull, 0xf723ca908e7af2eeull,
	0xa129ca6149be45e5ull, 0x3f2acc7f57c29bdbull,
};

TEST(SipHash, ReferenceVectors)
{
	uint8_t key[16], msg[17];
	for (int i = 0; i < 16; i++)
		key[i] = (uint8_t)i;
	for (int i = 0; i < 17; i++)
		msg[i] = (uint8_t)i;
	for (size_t n = 0; n <= 16; n++)
		EXPECT_EQ(sgw_siphash24(key, msg, n), kVectors[n]) << "n " << n;
}

TEST(SipHash, UnalignedInputSameResult)
{
	uint8_t key[16], buf[40];
	for (int i = 0; i < 16; i++)
		key[i] = (uint8_t)i;
	for (int off = 0; off < 8; off++) {
		for (int i = 0; i < 17; i++)
			buf[off + i] = (uint8_t)i;
		EXPECT_EQ(sgw_siphash24(key, buf + off, 15), kVectors[15]);
	}
}

struct Stack {
	sgw_tcp_stack st;
	Stack()
	{
		sgw_tcp_conf conf;
		sgw_tcp_conf_default(&conf);
		sgw_tcp_ops ops{};
		ops.tx = [](void *, sgw_tcp_conn *, const uint8_t *, uint32_t, uint32_t,
			    uint32_t) {};
		ops.rx_data = [](void *, sgw_tcp_conn *, uint32_t, const uint8_t *, uint32_t) {};
		ops.rx_advance = [](void *, sgw_tcp_conn *, uint32_t) {};
		ops.rx_space = [](void *, sgw_tcp_conn *) -> uint32_t { return 65535; };
		ops.tx_acked = [](void *, sgw_tcp_conn *, uint32_t) {};
		EXPECT_EQ(sgw_tcp_stack_init(&st, &conf, &ops, nullptr), 0);
	}
};

const uint8_t kL4[4] = {10, 0, 0, 1}, kR4[4] = {192, 0, 2, 7};

TEST(TcpIsn, Rfc6528FromSipHashAndTheFourMicrosecondClock)
{
	Stack s;
	uint8_t key[16];
	for (int i = 0; i < 16; i++)
		key[i] = (uint8_t)(0xA0 + i);
	sgw_tcp_stack_set_secret(&s.st, key);
	EXPECT_EQ(s.st.isn_key_set, 1);
	// F computed here from the documented message layout
	const uint8_t m[12] = {10, 0, 0, 1, 0x1f, 0x90, 192, 0, 2, 7, 0xc3, 0x50};
	uint32_t f = (uint32_t)sgw_siphash24(key, m, sizeof(m));
	EXPECT_EQ(sgw_tcp_isn(&s.st, kL4, kR4, 4, 8080, 50000, 0), f);
	// M: +1 every 4 us, wrapping modulo 2^32 (a cycle of about 4.77 hours)
	EXPECT_EQ(sgw_tcp_isn(&s.st, kL4, kR4, 4, 8080, 50000, 3999), f);
	EXPECT_EQ(sgw_tcp_isn(&s.st, kL4, kR4, 4, 8080, 50000, 4000), f + 1);
	EXPECT_EQ(sgw_tcp_isn(&s.st, kL4, kR4, 4, 8080, 50000, 1000000000ull), f + 250000);
	uint64_t wrap = 4000ull << 32;
	EXPECT_EQ(sgw_tcp_isn(&s.st, kL4, kR4, 4, 8080, 50000, wrap + 8000), f + 2);
}

TEST(TcpIsn, TupleAndSecretChangeF)
{
	Stack a, b;
	uint8_t ka[16] = {1}, kb[16] = {2};
	sgw_tcp_stack_set_secret(&a.st, ka);
	sgw_tcp_stack_set_secret(&b.st, kb);
	std::set<uint32_t> seen;
	uint64_t now = 123456789;
	seen.insert(sgw_tcp_isn(&a.st, kL4, kR4, 4, 80, 40000, now));
	seen.insert(sgw_tcp_isn(&a.st, kL4, kR4, 4, 80, 40001, now));   // remote port
	seen.insert(sgw_tcp_isn(&a.st, kL4, kR4, 4, 81, 40000, now));   // local port
	seen.insert(sgw_tcp_isn(&a.st, kR4, kL4, 4, 80, 40000, now));   // addresses swapped
	seen.insert(sgw_tcp_isn(&b.st, kL4, kR4, 4, 80, 40000, now));   // another secret
	uint8_t l6[16] = {0x20, 0x01, 0x0d, 0xb8}, r6[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 1};
	seen.insert(sgw_tcp_isn(&a.st, l6, r6, 16, 80, 40000, now));
	r6[15] = 1;
	seen.insert(sgw_tcp_isn(&a.st, l6, r6, 16, 80, 40000, now));
	EXPECT_EQ(seen.size(), 7u);
	// the same tuple and time: the same ISN (a retransmitted SYN's answer is stable)
	EXPECT_EQ(sgw_tcp_isn(&a.st, kL4, kR4, 4, 80, 40000, now),
		  sgw_tcp_isn(&a.st, kL4, kR4, 4, 80, 40000, now));
}

// Successive connections of one tuple get increasing ISNs (RFC 6528's point:
// old duplicates of an earlier incarnation fall below the new ISN).
TEST(TcpIsn, SameTupleIncreasesWithTime)
{
	Stack s;
	uint8_t key[16] = {9, 9, 9};
	sgw_tcp_stack_set_secret(&s.st, key);
	uint32_t prev = sgw_tcp_isn(&s.st, kL4, kR4, 4, 80, 40000, 0);
	for (uint64_t t = 1; t <= 100; t++) {
		uint32_t isn = sgw_tcp_isn(&s.st, kL4, kR4, 4, 80, 40000, t * 60 * 1000000000ull);
		EXPECT_GT((int32_t)(isn - prev), 0);
		EXPECT_EQ(isn - prev, 60u * 250000u);
		prev = isn;
	}
}

}  // namespace
