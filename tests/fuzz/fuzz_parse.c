/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer harness for lib/sgw_parse.c: parses the input as a frame (default
 * conf, then a conf taken from the input's last bytes), as a TCP option area,
 * and as a small burst, and aborts when a result breaks the parser's own
 * invariants. ASan catches any read past the input.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sgw_parse.h"

/* Invariants that hold for every input: see "Parsed headers" in docs/wire-formats.md. */
static void
check(const struct sgw_pkt_info *i, enum sgw_parse_reason r, size_t len)
{
	size_t l3_end;

	if (r != i->reason || r >= SGW_PR__COUNT || i->cls >= SGW_CLASS__COUNT)
		abort();
	if ((r != SGW_PR_OK) != (i->cls == SGW_CLASS_MALFORMED))
		abort();
	if (i->n_vlan > 2 || (i->frag & ~7u) != 0)
		abort();
	if ((i->frag & (SGW_FRAG_FIRST | SGW_FRAG_MORE)) && !(i->frag & SGW_FRAG_IS_FRAGMENT))
		abort();
	if (r != SGW_PR_OK)
		return;  /* fields past the failure point are not promised */
	if (i->cls != SGW_CLASS_TCP && (i->tcp_opts.present != 0 || i->tcp_opts.n_sack != 0))
		abort();
	if (i->cls == SGW_CLASS_NON_IP || i->cls == SGW_CLASS_SATLINK)
		return;
	l3_end = (size_t)i->l3_off + i->l3_len;
	if (l3_end > len || i->payload_off != i->l4_off + i->l4_hlen || i->payload_off > l3_end)
		abort();
	if (i->l4_off < i->l3_off + (i->ip_ver == 4 ? 20u : 40u))
		abort();
	if (i->cls == SGW_CLASS_TCP) {
		const struct sgw_tcp_opts *o = &i->tcp_opts;

		if (i->l4_hlen < 20 || i->l4_hlen > 60 || o->n_sack > SGW_TCP_MAX_SACK)
			abort();
		if ((o->present & SGW_TCPOPT_MSS) && o->mss_off + 4u > i->l4_hlen)
			abort();
		if ((o->present & SGW_TCPOPT_TS) && o->ts_off + 10u > i->l4_hlen)
			abort();
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sgw_parse_conf conf;
	struct sgw_pkt_info info[4];
	struct sgw_burst_classes out;
	struct sgw_tcp_opts opts;
	const uint8_t *ptrs[4];
	uint16_t lens[4];
	enum sgw_parse_reason r;
	unsigned int c, total = 0;
	size_t q;

	sgw_parse_conf_default(&conf);
	r = sgw_parse_frame(&conf, data, size, &info[0]);
	check(&info[0], r, size);

	/* A non-default conf: LIFT/XCP on other numbers and another encap port. */
	if (size >= 4) {
		conf.lift_proto = data[size - 1];
		conf.xcp_proto = data[size - 2];
		conf.esp_udp_port = (uint16_t)((data[size - 3] << 8) | data[size - 4]);
	} else {
		conf.lift_proto = 6;
		conf.xcp_proto = 17;
		conf.esp_udp_port = 0;
	}
	r = sgw_parse_frame(&conf, data, size, &info[0]);
	check(&info[0], r, size);

	r = sgw_parse_tcp_options(data, size, &opts);
	if (r != SGW_PR_OK && r != SGW_PR_TCP_BAD_OPTION)
		abort();
	if (r == SGW_PR_OK && opts.n_sack > SGW_TCP_MAX_SACK)
		abort();

	/* The same bytes as a burst of four overlapping frames. */
	if (size > UINT16_MAX)
		return 0;
	q = size / 4;
	for (c = 0; c < 4; c++) {
		ptrs[c] = data + c * q;
		lens[c] = (uint16_t)(size - c * q);
	}
	sgw_parse_conf_default(&conf);
	sgw_classify_burst(&conf, ptrs, lens, 4, info, &out);
	for (c = 0; c < SGW_CLASS__COUNT; c++) {
		unsigned int k;

		for (k = 0; k < out.n[c]; k++) {
			if (out.idx[c][k] >= 4 || info[out.idx[c][k]].cls != c)
				abort();
			if (k > 0 && out.idx[c][k] <= out.idx[c][k - 1])
				abort();
		}
		total += out.n[c];
	}
	if (total != 4)
		abort();
	for (c = 0; c < 4; c++)
		check(&info[c], (enum sgw_parse_reason)info[c].reason, lens[c]);
	return 0;
}
