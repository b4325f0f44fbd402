/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer harness for the satlink receive path (lib/sgw_satlink.c,
 * lib/sgw_arq.c): the input is a sequence of frames a hostile or broken peer
 * could send, each as [len (1 byte)][time step (1 byte)][frame bytes],
 * handed to one fresh session the way the dataplane does (parse the header,
 * DATA to sgw_arq_rx_data with a handle, control frames to sgw_arq_rx_ctrl),
 * with polls between frames. Aborts when a handle is released or delivered
 * twice, or never, or one the harness did not give, or when the session writes
 * a frame it cannot parse itself. ASan catches reads past a frame.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sgw_arq.h"
#include "sgw_satlink.h"

#define MAX_HANDLES 4096u
#define ACT_CAP 512u

static bool live[MAX_HANDLES];
static uint32_t n_given;

static void
take_back(uint64_t h)
{
	if (h == 0 || h > n_given || !live[h - 1])
		abort();  /* unknown, or released / delivered twice */
	live[h - 1] = false;
}

static void
run(struct sgw_arq *arq, struct sgw_arq_out *out, uint64_t now)
{
	uint8_t buf[SGW_SATLINK_STATUS_MAX_LEN];
	struct sgw_satlink_hdr h;
	uint32_t i;

	for (i = 0; i < out->n; i++) {
		const struct sgw_arq_act *a = &out->act[i];
		size_t n;

		switch (a->type) {
		case SGW_ARQ_ACT_DELIVER:
		case SGW_ARQ_ACT_RELEASE:
			take_back(a->handle);
			break;
		case SGW_ARQ_ACT_TX_CTRL:
			/* What the session writes, it must be able to read back. */
			n = sgw_arq_write_ctrl(arq, a, now, buf, sizeof(buf));
			if (n != 0 && sgw_satlink_parse_hdr(buf, n, &h) != SGW_SL_OK)
				abort();
			break;
		default:
			break;
		}
	}
	out->n = 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct sgw_arq_act act[ACT_CAP];
	struct sgw_arq_out out = {.act = act, .n = 0, .cap = ACT_CAP};
	struct sgw_arq_conf conf;
	struct sgw_arq *arq;
	uint64_t now = 1000000;
	size_t off = 0;
	uint32_t i;
	int rc;

	sgw_arq_conf_default(&conf);
	conf.terminal_id = 1;
	conf.local_epoch = 7;
	conf.tx_window = 64;
	conf.rx_window = 64;
	conf.max_frags = 8;
	conf.frag_size = 64;
	conf.dgram_slots = 16;
	arq = sgw_arq_create(&conf, now);
	if (arq == NULL)
		abort();
	n_given = 0;
	memset(live, 0, sizeof(live));

	while (off + 2 <= size && n_given < MAX_HANDLES) {
		size_t len = data[off];
		struct sgw_satlink_hdr h;
		const uint8_t *f;

		now += (uint64_t)data[off + 1] * 1000000u;  /* 0-255 ms between frames */
		off += 2;
		if (len > size - off)
			len = size - off;
		f = data + off;
		off += len;
		sgw_arq_poll(arq, now, &out);
		run(arq, &out, now);
		if (sgw_satlink_parse_hdr(f, len, &h) != SGW_SL_OK)
			continue;
		if (h.type == SGW_SL_DATA) {
			live[n_given] = true;
			rc = sgw_arq_rx_data(arq, now, &h, ++n_given, &out);
			if (rc != SGW_ARQ_RX_OK)
				take_back(n_given);  /* refused: the caller frees it */
		} else {
			sgw_arq_rx_ctrl(arq, now, &h, f + SGW_SATLINK_HDR_LEN, h.payload_len, &out);
		}
		run(arq, &out, now);
	}
	/* Shutdown gives every handle back, exactly once. */
	while (!sgw_arq_drain(arq, &out))
		run(arq, &out, now);
	run(arq, &out, now);
	for (i = 0; i < n_given; i++)
		if (live[i])
			abort();
	sgw_arq_destroy(arq);
	return 0;
}
