/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * SipHash-2-4 (Aumasson and Bernstein, "SipHash: a fast short-input PRF",
 * 2012): a keyed 64-bit hash of a short message, the F of RFC 6528's ISN
 * and usable for any hash a peer must not be able to steer (flow tables).
 * Plain C11, byte loads (no alignment or endianness assumption).
 */
#ifndef SGW_SIPHASH_H
#define SGW_SIPHASH_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* SipHash-2-4 of len bytes at p under the 16-byte key (k0, k1 little-endian). */
uint64_t sgw_siphash24(const uint8_t key[16], const void *p, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* SGW_SIPHASH_H */
