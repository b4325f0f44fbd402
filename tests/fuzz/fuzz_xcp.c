/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer harness for the XCP header codec and the controller's inputs
 * (lib/sgw_xcp.c). Input: [xcp proto (1)][new feedback (4, BE)][capacity
 * (4, BE, bytes/s)][queue (4, BE)][header bytes...]. The header bytes go
 * through sgw_xcp_parse; a header it accepts must build back to the same
 * fields, survive sgw_xcp_process (parse, accumulate, lower) with only the
 * feedback bytes changed as the patch says, and the checksum adjustment
 * must agree with a recomputation. Each accepted header is also one packet
 * of a controller interval whose parameters must come out finite and
 * non-negative whatever the header said. Aborts on any mismatch; ASan
 * catches reads past the input.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sgw_xcp.h"

static uint32_t
be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint16_t
csum(const uint8_t *p, size_t n)
{
	uint32_t s = 0;
	size_t i;

	for (i = 0; i + 1 < n; i += 2)
		s += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (n & 1)
		s += (uint32_t)p[n - 1] << 8;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct sgw_xcp_acc acc;
	static struct sgw_xcp_ctl ctl;
	struct sgw_xcp_conf c;
	struct sgw_xcp_params p, out;
	struct sgw_xcp_fields f, g;
	struct sgw_xcp_patch pt;
	struct sgw_xcp_sums snap;
	enum sgw_xcp_err e, e2;
	uint8_t *hdr, built[SGW_XCPW_LEN];
	uint8_t proto;
	int32_t fb;
	size_t len, i;
	uint16_t c0, c1, c2;
	int r;

	if (size < 13)
		return 0;
	proto = data[0];
	fb = (int32_t)be32(data + 1);
	len = size - 13;
	/* A copy of exactly len bytes, so ASan sees any read past it. */
	hdr = malloc(len ? len : 1);
	if (hdr == NULL)
		return 0;
	memcpy(hdr, data + 13, len);

	sgw_xcp_conf_default(&c);
	sgw_xcp_acc_init(&acc);
	sgw_xcp_ctl_init(&c, &ctl, 0, NULL, 1, &p);
	p.xi_p = 1e-9;
	p.xi_n = 1e-10;
	p.pos_left = p.neg_left = 1e12;

	e = sgw_xcp_parse(hdr, len, proto, &f);
	if ((unsigned)e >= SGW_XCP_E__COUNT)
		abort();
	if (e == SGW_XCP_OK) {
		if (len < SGW_XCPW_LEN || f.hlen < SGW_XCPW_LEN || f.hlen > len ||
		    f.next == proto)
			abort();
		/* Build and parse again: the same fields (hlen is always 20 built). */
		if (sgw_xcp_build(built, sizeof(built), proto, &f) != SGW_XCPW_LEN)
			abort();
		if (sgw_xcp_parse(built, sizeof(built), proto, &g) != SGW_XCP_OK)
			abort();
		if (g.next != f.next || g.flags != f.flags || g.rtt_us != f.rtt_us ||
		    g.cwnd != f.cwnd || g.feedback != f.feedback || g.reverse != f.reverse)
			abort();

		/* The router's rewrite, with an explicit target. */
		memcpy(built, hdr, SGW_XCPW_LEN);
		c0 = csum(hdr, len);
		r = sgw_xcp_lower_feedback(hdr, len, fb, &pt);
		if (r != (fb < f.feedback ? 1 : 0))
			abort();
		for (i = 0; i < SGW_XCPW_LEN; i++)
			if ((i < SGW_XCPW_OFF_FEEDBACK || i >= SGW_XCPW_OFF_FEEDBACK + 4) &&
			    hdr[i] != built[i])
				abort();
		if (r == 1) {
			if (pt.off != SGW_XCPW_OFF_FEEDBACK || pt.len != 4 ||
			    memcmp(pt.old_b, built + pt.off, 4) != 0 ||
			    memcmp(pt.new_b, hdr + pt.off, 4) != 0 ||
			    (int32_t)be32(hdr + pt.off) != fb)
				abort();
			c1 = csum(hdr, len);
			c2 = sgw_xcp_csum_adjust(c0, &pt);
			if (c1 != c2 && !((c1 == 0 && c2 == 0xffff) || (c1 == 0xffff && c2 == 0)))
				abort();
		}
	}

	/* The whole fast path on the same bytes (refusals count as load). */
	r = sgw_xcp_process(&acc, &p, proto, hdr, len, (uint32_t)size, &pt, &e2);
	if ((r == -1) != (e2 != SGW_XCP_OK) || r < -1 || r > 1)
		abort();
	sgw_xcp_acc_read(&acc, &snap);
	if (snap.v[SGW_XCP_S_PKTS] != 1 || snap.v[SGW_XCP_S_BYTES] != size ||
	    snap.v[SGW_XCP_S_BAD] != (e2 != SGW_XCP_OK ? 1u : 0u))
		abort();
	/* One interval: any capacity or queue, any header values. */
	sgw_xcp_aggregate(&c, &ctl, &snap, 1, (double)be32(data + 5),
			  (double)be32(data + 9), 1 + (uint64_t)(data[5] ^ data[12]) * 1000000ull,
			  &ctl, &out);
	if (!isfinite(out.xi_p) || !isfinite(out.xi_n) || out.xi_p < 0 || out.xi_n < 0 ||
	    !isfinite(out.pos_budget) || !isfinite(out.neg_budget) || out.pos_budget < 0 ||
	    out.neg_budget < 0)
		abort();
	if (ctl.d_ns < c.d_min_ns || ctl.d_ns > c.rtt_max_ns)
		abort();
	free(hdr);
	return 0;
}
