/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer harness for BS-LIFT (lib/sgw_lift.c): the codec and the machine
 * fed what a hostile mobile host or a forged terrestrial sender could send.
 * The input is a sequence of records [op (1 byte)][ms since the last record
 * (1 byte)][len (1 byte)][len bytes]:
 *   op & 3 == 0, 3  LIFT bytes (after the IP header) from MH (op >> 2) & 3,
 *                   trusted unless op & 0x10 (sgw_lift_rx)
 *   op & 3 == 1     a downlink ESP packet: SPI and sequence number from the
 *                   first 8 bytes (short records are zero-padded)
 *   op & 3 == 2     nothing but time passing
 * Due timers (the harness is the caller's wheel, from TIMER_ARM / CANCEL) fire
 * in time order before each record. At the end every flow any record could
 * have named is torn down. Aborts when a handle comes back twice, never, or
 * was not given; when an action is lost for room; when anything is still held
 * or any flow left; when the machine arms a timer in the past; when a CTRL_ACK
 * it asks for cannot be built and decoded back. ASan catches reads past a
 * record.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sgw_lift.h"

#define MAX_HANDLES 8192u
#define MAX_FLOWS 8u
#define N_MH 4u

static bool live[MAX_HANDLES];
static uint32_t n_given;
static uint64_t t_at[MAX_FLOWS];
static uint32_t t_gen[MAX_FLOWS];
static bool t_on[MAX_FLOWS];
static uint8_t seen[N_MH][65536 / 8];

static void
take_back(uint64_t h)
{
	if (h == 0 || h > n_given || !live[h - 1])
		abort();
	live[h - 1] = false;
}

static void
run(struct sgw_lift_out *out, uint64_t now)
{
	uint32_t i;

	for (i = 0; i < out->n; i++) {
		const struct sgw_lift_act *a = &out->act[i];
		uint8_t b[8];
		struct sgw_lift_msg m;

		switch (a->type) {
		case SGW_LIFT_ACT_FORWARD:
		case SGW_LIFT_ACT_DROP:
			take_back(a->handle);
			break;
		case SGW_LIFT_ACT_TIMER_ARM:
			if (a->flow >= MAX_FLOWS || a->at < now)
				abort();
			t_on[a->flow] = true;
			t_at[a->flow] = a->at;
			t_gen[a->flow] = a->gen;
			break;
		case SGW_LIFT_ACT_TIMER_CANCEL:
			if (a->flow >= MAX_FLOWS)
				abort();
			t_on[a->flow] = false;
			break;
		case SGW_LIFT_ACT_CTRL_ACK:
			if (sgw_lift_build_ctrl_ack(b, 8, a->code2, a->flow_id, a->spi, a->code) != 8 ||
			    sgw_lift_decode(b, 8, &m) != SGW_LIFT_DEC_OK || m.kind != a->code2 ||
			    m.flow_id != a->flow_id || m.word != a->spi || m.next != a->code)
				abort();
			break;
		default:
			abort();
		}
	}
	out->n = 0;
}

static void
fire_due(struct sgw_lift *l, struct sgw_lift_out *out, uint64_t now)
{
	uint32_t guard, i, best;

	for (guard = 0; guard < 1000; guard++) {
		best = MAX_FLOWS;
		for (i = 0; i < MAX_FLOWS; i++)
			if (t_on[i] && t_at[i] <= now && (best == MAX_FLOWS || t_at[i] < t_at[best]))
				best = i;
		if (best == MAX_FLOWS)
			return;
		t_on[best] = false;
		if (sgw_lift_timer(l, t_at[best], best, t_gen[best], out) != 0)
			abort();
		run(out, t_at[best]);
	}
}

static uint32_t
be32(const uint8_t *p)
{
	return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t mem[1 << 16];
	struct sgw_lift_act act[SGW_LIFT_MIN_ROOM];
	struct sgw_lift_out out = {.act = act, .n = 0, .cap = SGW_LIFT_MIN_ROOM};
	struct sgw_lift_addr mh[N_MH];
	struct sgw_lift_conf conf;
	struct sgw_lift_stats st;
	struct sgw_lift *l;
	uint64_t now = 1000000;
	size_t off = 0;
	uint32_t i, f;

	sgw_lift_conf_default(&conf);
	conf.max_flows = MAX_FLOWS;
	conf.max_sas = 4;
	conf.max_frozen_ns = 3000000000ull;
	conf.share_window_ns = 8000000000ull;
	conf.suspend_ns = 2000000000ull;
	conf.timer_mode = size & 1 ? SGW_LIFT_TIMER_ADAPTIVE : SGW_LIFT_TIMER_FIXED;
	conf.paper_hold = (size >> 1) & 1;
	conf.thaw = (size >> 2) & 1;
	conf.spare_frack = !((size >> 3) & 1);
	if (sgw_lift_mem_size(&conf) > sizeof(mem))
		abort();
	l = sgw_lift_init(mem, sizeof(mem), &conf, now);
	if (l == NULL)
		abort();
	for (i = 0; i < N_MH; i++) {
		uint8_t a[4] = {10, 0, 0, (uint8_t)(i + 1)};

		mh[i] = sgw_lift_addr_v4(a);
	}
	n_given = 0;
	memset(live, 0, sizeof(live));
	memset(t_on, 0, sizeof(t_on));
	memset(seen, 0, sizeof(seen));

	while (off + 3 <= size && n_given < MAX_HANDLES) {
		uint8_t op = data[off], rec[16] = {0};
		size_t len = data[off + 2];
		const uint8_t *p;
		uint32_t m = (op >> 2) & 3;

		now += (uint64_t)data[off + 1] * 20000000u;  /* 0-5.1 s per record */
		off += 3;
		if (len > size - off)
			len = size - off;
		p = data + off;
		off += len;
		fire_due(l, &out, now);
		switch (op & 3) {
		case 0:
		case 3:
			if (len >= 3)
				seen[m][((p[1] << 8) | p[2]) / 8] |=
					(uint8_t)(1u << (((p[1] << 8) | p[2]) % 8));
			live[n_given] = true;
			if (sgw_lift_rx(l, now, &mh[m], p, len, ++n_given, !(op & 0x10), &out) != 0)
				abort();
			run(&out, now);
			break;
		case 1:
			memcpy(rec, p, len < 8 ? len : 8);
			sgw_lift_esp_down(l, now, &mh[m], be32(rec), be32(rec + 4));
			break;
		default:
			break;
		}
	}
	/* Tear down every flow any record could have named: all comes back. */
	for (i = 0; i < N_MH; i++) {
		for (f = 0; f < 65536; f++) {
			uint8_t b[8];

			if (!(seen[i][f / 8] & (1u << (f % 8))) || n_given >= MAX_HANDLES)
				continue;
			sgw_lift_build_teardown(b, 8, (uint16_t)f);
			live[n_given] = true;
			if (sgw_lift_rx(l, now, &mh[i], b, 8, ++n_given, 1, &out) != 0)
				abort();
			run(&out, now);
		}
	}
	sgw_lift_get_stats(l, &st);
	if (st.act_overflow != 0 || st.flows != 0 || st.held != 0 || st.sas != 0)
		abort();
	for (i = 0; i < n_given; i++)
		if (live[i])
			abort();
	return 0;
}
