/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Publication of a worker's counters to readers on other threads (telemetry,
 * the exit report) without locks: a single-writer sequence lock. The owner
 * makes the sequence odd, writes the published copy, makes it even; a reader
 * copies and retries while the sequence was odd or moved under it. The owner
 * never waits; readers are off the fast path.
 */
#ifndef SGW_SEQLOCK_H
#define SGW_SEQLOCK_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline void
sgw_seq_write_begin(uint32_t *seq)
{
	__atomic_store_n(seq, *seq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
}

static inline void
sgw_seq_write_end(uint32_t *seq)
{
	__atomic_store_n(seq, *seq + 1, __ATOMIC_RELEASE);
}

/* A consistent copy of len bytes at src, published under seq. */
static inline void
sgw_seq_read(const uint32_t *seq, void *dst, const void *src, size_t len)
{
	uint32_t a, b;

	do {
		a = __atomic_load_n(seq, __ATOMIC_ACQUIRE);
		memcpy(dst, src, len);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		b = __atomic_load_n(seq, __ATOMIC_RELAXED);
	} while ((a & 1u) != 0 || a != b);
}

#endif /* SGW_SEQLOCK_H */
