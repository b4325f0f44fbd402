/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The unit tests' deterministic random numbers (splitmix64): a seed gives the
 * same run on every machine, so a failing seed can be replayed.
 */
#ifndef SGW_TEST_RNG_H
#define SGW_TEST_RNG_H

#include <cmath>
#include <cstdint>

struct Rng {
	uint64_t s;
	explicit Rng(uint64_t seed) : s(seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull) {}
	uint64_t Next()
	{
		uint64_t z = (s += 0x9E3779B97F4A7C15ull);
		z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
		z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
		return z ^ (z >> 31);
	}
	double Uni() { return static_cast<double>(Next() >> 11) * (1.0 / 9007199254740992.0); }
	uint64_t Range(uint64_t lo, uint64_t hi) { return lo + Next() % (hi - lo + 1); }
	bool Chance(double p) { return p > 0 && Uni() < p; }
	uint64_t Exp(uint64_t mean)
	{
		return static_cast<uint64_t>(-std::log(1.0 - Uni()) * static_cast<double>(mean));
	}
};

#endif /* SGW_TEST_RNG_H */
