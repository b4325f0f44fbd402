/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Arithmetic every protocol machine in lib/ needs: 32-bit sequence numbers
 * compared as serial numbers (RFC 1982: the signed distance, so a wrap is
 * never "behind"), deadlines added without overflow (NEVER stays NEVER), and
 * ring sizes rounded up to a power of two. Header only.
 */
#ifndef SGW_SEQ_H
#define SGW_SEQ_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

static inline int32_t
sgw_seq_diff(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b);
}

#define SGW_SEQ_LT(a, b) (sgw_seq_diff((a), (b)) < 0)
#define SGW_SEQ_LE(a, b) (sgw_seq_diff((a), (b)) <= 0)
#define SGW_SEQ_GT(a, b) (sgw_seq_diff((a), (b)) > 0)
#define SGW_SEQ_GE(a, b) (sgw_seq_diff((a), (b)) >= 0)

/* a + b, or UINT64_MAX when that overflows (a deadline past "never" is never). */
static inline uint64_t
sgw_add_sat(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* The least power of two >= v, at most 2^31 (the loop is bounded by the width). */
static inline uint32_t
sgw_pow2_at_least(uint32_t v)
{
	uint32_t p = 1;

	while (p < v && p < (UINT32_C(1) << 31))
		p <<= 1;
	return p;
}

#ifdef __cplusplus
}
#endif

#endif /* SGW_SEQ_H */
