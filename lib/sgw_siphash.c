/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * SipHash-2-4 (contract: sgw_siphash.h): 2 compression rounds per 8-byte
 * word, 4 finalization rounds, written from the paper's description.
 */
#include "sgw_siphash.h"

static inline uint64_t
rotl(uint64_t x, unsigned int b)
{
	return (x << b) | (x >> (64 - b));
}

static inline uint64_t
load_le64(const uint8_t *p)
{
	uint64_t v = 0;
	unsigned int i;

	for (i = 0; i < 8; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

#define SIPROUND(v0, v1, v2, v3)                                                                  \
	do {                                                                                       \
		v0 += v1;                                                                          \
		v1 = rotl(v1, 13);                                                                 \
		v1 ^= v0;                                                                          \
		v0 = rotl(v0, 32);                                                                 \
		v2 += v3;                                                                          \
		v3 = rotl(v3, 16);                                                                 \
		v3 ^= v2;                                                                          \
		v0 += v3;                                                                          \
		v3 = rotl(v3, 21);                                                                 \
		v3 ^= v0;                                                                          \
		v2 += v1;                                                                          \
		v1 = rotl(v1, 17);                                                                 \
		v1 ^= v2;                                                                          \
		v2 = rotl(v2, 32);                                                                 \
	} while (0)

uint64_t
sgw_siphash24(const uint8_t key[16], const void *p, size_t len)
{
	const uint8_t *m = p;
	uint64_t k0 = load_le64(key), k1 = load_le64(key + 8);
	uint64_t v0 = k0 ^ 0x736f6d6570736575ull;
	uint64_t v1 = k1 ^ 0x646f72616e646f6dull;
	uint64_t v2 = k0 ^ 0x6c7967656e657261ull;
	uint64_t v3 = k1 ^ 0x7465646279746573ull;
	uint64_t b = (uint64_t)len << 56, w;
	size_t i, full = len & ~(size_t)7;

	for (i = 0; i < full; i += 8) {
		w = load_le64(m + i);
		v3 ^= w;
		SIPROUND(v0, v1, v2, v3);
		SIPROUND(v0, v1, v2, v3);
		v0 ^= w;
	}
	/* the last 0-7 bytes, and the length in the top byte */
	for (i = 0; i < (len & 7); i++)
		b |= (uint64_t)m[full + i] << (8 * i);
	v3 ^= b;
	SIPROUND(v0, v1, v2, v3);
	SIPROUND(v0, v1, v2, v3);
	v0 ^= b;
	v2 ^= 0xff;
	SIPROUND(v0, v1, v2, v3);
	SIPROUND(v0, v1, v2, v3);
	SIPROUND(v0, v1, v2, v3);
	SIPROUND(v0, v1, v2, v3);
	return v0 ^ v1 ^ v2 ^ v3;
}
