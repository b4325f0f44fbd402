/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer harness for the split TCP stream messages (lib/sgw_stream.c), as
 * a hostile satlink peer would send them on a stream's channel. Input: a
 * sequence of records [len (1)][len bytes], each one channel payload (the
 * last record takes what is left). Each goes through sgw_stream_decode; a
 * message it accepts must encode back to exactly the same bytes (the format
 * has one encoding per message: reserved bytes 0, no trailing bytes), and a
 * refusal must be counted once under a known reason. Aborts on a mismatch;
 * ASan catches reads past each record (each is copied to an exact-size heap
 * buffer).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sgw_stream.h"

static void
one(const uint8_t *p, size_t n)
{
	uint64_t ctr[SGW_STREAM_E__COUNT] = {0};
	uint8_t out[512];
	struct sgw_stream_msg m;
	uint8_t *copy;
	uint64_t sum = 0;
	size_t i, len;
	int e;

	copy = malloc(n ? n : 1);
	if (copy == NULL)
		return;
	memcpy(copy, p, n);
	e = sgw_stream_decode(copy, n, &m, ctr);
	for (i = 0; i < SGW_STREAM_E__COUNT; i++)
		sum += ctr[i];
	if (e < 0 || e >= SGW_STREAM_E__COUNT)
		abort();
	if (e != SGW_STREAM_E_OK) {
		if (sum != 1 || ctr[e] != 1)
			abort();
		free(copy);
		return;
	}
	if (sum != 0)
		abort();
	if (m.type == SGW_STREAM_DATA &&
	    (m.data != copy + SGW_STREAM_DATA_HDR || m.len != n - SGW_STREAM_DATA_HDR))
		abort();
	if (sgw_stream_len(&m) != n)
		abort();
	len = sgw_stream_encode(out, sizeof(out), &m);
	if (n <= sizeof(out) && (len != n || memcmp(out, copy, n) != 0))
		abort();
	free(copy);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t pos = 0, n;
	unsigned int rec;

	/* at most 64 records per input: the loop is bounded by the input and this */
	for (rec = 0; rec < 64 && pos < size; rec++) {
		n = data[pos++];
		if (n > size - pos)
			n = size - pos;
		one(data + pos, n);
		pos += n;
	}
	return 0;
}
