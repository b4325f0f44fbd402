/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Flow keys: the bidirectional 5-tuple a flow table is keyed on, and the
 * symmetric address hash used to shard packets that belong to no terminal.
 * Both directions of a connection give the same key (addresses and ports are
 * put in a canonical order; dir says which way the packet went).
 */
#ifndef SGW_FLOW_KEY_H
#define SGW_FLOW_KEY_H

#include <stdint.h>
#include <string.h>

#include "sgw_parse.h"

#ifdef __cplusplus
extern "C" {
#endif

struct sgw_flow_key {
	uint8_t a[16];      /* the lower (address, port) endpoint */
	uint8_t b[16];
	uint16_t a_port;    /* TCP/UDP port of a; for ESP the high half of the SPI */
	uint16_t b_port;    /* for ESP the low half of the SPI */
	uint8_t proto;
	uint8_t family;
	/*
	 * Always zero. 48 bytes, not 44: rte_hash compares keys of 16, 32, 48...
	 * bytes with vector instructions and any other length with memcmp.
	 */
	uint8_t pad[10];
};

#ifdef __cplusplus
static_assert(sizeof(struct sgw_flow_key) == 48, "flow key is hashed as 48 bytes");
#else
_Static_assert(sizeof(struct sgw_flow_key) == 48, "flow key is hashed as 48 bytes");
#endif

/*
 * Fill key from a parsed TCP, UDP or ESP packet. Returns the direction: 0 when
 * the packet's source is endpoint a, 1 when it is endpoint b. ESP security
 * associations are one-way, so the SPI keys them and the key keeps the
 * packet's source as a (dir is always 0); hand-off uses the symmetric
 * address hash, so both SAs of a pair still meet on one worker.
 */
static inline int
sgw_flow_key_from_info(const struct sgw_pkt_info *pi, struct sgw_flow_key *key)
{
	const uint8_t *lo = pi->src, *hi = pi->dst;
	uint16_t sp = pi->sport, dp = pi->dport, lp, hp;
	uint8_t proto = pi->esp_in_udp ? 50 : pi->ip_proto;
	int dir;

	if (proto == 50) {
		sp = (uint16_t)(pi->esp_spi >> 16);
		dp = (uint16_t)pi->esp_spi;
		dir = 0;
	} else {
		int cmp;

		if (pi->ip_ver == 4) {
			/* The parser zeroes bytes 4..15 of IPv4 addresses: compare 4. */
			uint32_t x, y;

			memcpy(&x, pi->src, 4);
			memcpy(&y, pi->dst, 4);
			x = __builtin_bswap32(x);
			y = __builtin_bswap32(y);
			cmp = (x > y) - (x < y);
		} else {
			cmp = memcmp(pi->src, pi->dst, 16);
		}
		dir = cmp > 0 || (cmp == 0 && sp > dp);
	}
	lp = sp;
	hp = dp;
	if (dir) {
		lo = pi->dst;
		hi = pi->src;
		lp = dp;
		hp = sp;
	}
	/* Whole 16-byte copies: IPv4 addresses come zero-padded from the parser. */
	memcpy(key->a, lo, 16);
	memcpy(key->b, hi, 16);
	key->a_port = lp;
	key->b_port = hp;
	key->proto = proto;
	key->family = pi->ip_ver;
	memset(key->pad, 0, sizeof(key->pad));
	return dir;
}

/* Same value for (src, dst) and (dst, src): shards traffic of no terminal. */
static inline uint32_t
sgw_sym_addr_hash(const struct sgw_pkt_info *pi)
{
	uint32_t h = 0, x, y;
	size_t i, alen = pi->ip_ver == 4 ? 4 : 16;

	for (i = 0; i < alen; i += 4) {
		memcpy(&x, pi->src + i, 4);
		memcpy(&y, pi->dst + i, 4);
		h ^= x ^ y;
	}
	/* murmur3 finaliser: spread the XOR over all bits */
	h ^= h >> 16;
	h *= 0x85ebca6bu;
	h ^= h >> 13;
	h *= 0xc2b2ae35u;
	h ^= h >> 16;
	return h;
}

/* Worker index for a terminal id: stable across reloads and reorderings. */
static inline uint32_t
sgw_terminal_shard(uint32_t terminal_id, uint32_t n_workers)
{
	uint32_t h = terminal_id * 0x9e3779b1u;

	h ^= h >> 15;
	return (uint32_t)(((uint64_t)h * n_workers) >> 32);
}

#ifdef __cplusplus
}
#endif

#endif /* SGW_FLOW_KEY_H */
