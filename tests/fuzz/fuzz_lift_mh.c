/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer harness for MH-LIFT (lib/sgw_lift_mh.c): the agent's machine fed
 * what the host, the fixed host (through ESP) and a hostile hub could give it.
 * The input is a sequence of records [op (1)][ms since the last record (1)]
 * [len (1)][len bytes]:
 *   op & 3 == 0  a cleartext packet the host sends (sgw_lift_mh_tx)
 *   op & 3 == 1  a decrypted downlink packet (sgw_lift_mh_rx); SPI from op
 *                bit 6 (two SAs), ESP sequence number from the first 4 bytes
 *   op & 3 == 2  a control packet from the hub (sgw_lift_mh_ctrl_rx); with
 *                op & 8: the acknowledgement of the last control packet
 *                polled, status from the first byte
 *   op & 3 == 3  poll with room for 1 + ((op >> 2) & 3) control packets
 * For ops 0 and 1, op & 4 means the bytes describe a segment that the
 * harness builds (valid IPv4 or IPv6 TCP, so the input reaches the flow
 * logic): [flags][seq (2)][ack (2)][window (1)][payload (1)][port (1)]
 * (see synth());
 * otherwise the bytes are the IP packet itself. The machine is polled whenever
 * its deadline has come. At the end, with nobody answering, time runs on until
 * every flow is gone. Aborts when a verdict and its reason disagree, a header
 * it built does not decode back, a pair's FrACK cannot be cloned or the clone
 * is not a zero-window pure ACK with a right checksum, a control packet
 * polled is not a Setup or Teardown of a flow it holds, the deadline lies in
 * the past after a poll, the flow count is off, or a flow is left at the end.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sgw_lift.h"
#include "sgw_lift_mh.h"

#define MS 1000000ull

static uint8_t *mem;	/* one block for every input: no leak, no reuse of state */
static size_t mem_len;
static struct sgw_lift_mh_ctrl last_ctrl;
static bool have_last;

static uint16_t
g16(const uint8_t *p)
{
	return (uint16_t)((p[0] << 8) | p[1]);
}

static uint32_t
sum16(uint32_t s, const uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i + 1 < n; i += 2)
		s += g16(p + i);
	if (n & 1)
		s += (uint32_t)p[n - 1] << 8;
	return s;
}

static uint16_t
fold(uint32_t s)
{
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

/* Build a TCP/IP segment from an 8-byte description; returns its length. */
static size_t
synth(const uint8_t *d, size_t n, bool from_mh, uint8_t *out)
{
	uint8_t x[8] = {0};
	bool v6;
	size_t hl, pay, tot;
	uint8_t *t;
	uint16_t mp, fp = 80;
	uint32_t s = 0, seq, ack;

	memcpy(x, d, n < 8 ? n : 8);
	v6 = x[7] & 0x80;
	mp = (uint16_t)(40000 + (x[7] & 7));
	hl = v6 ? 40 : 20;
	pay = (size_t)(x[6] % 3) * 50u;
	tot = hl + 20 + pay;
	memset(out, 0, tot);
	/* in units of 50 above the ISNs + 1 (a SYN sits one below), the
	 * window's bit 2 adds 1 to the ACK (a FIN acknowledged) */
	seq = (uint32_t)g16(x + 1) * 50u + (from_mh ? 1000u : 500000u) -
	      ((x[0] & 0x02) ? 1u : 0u);
	ack = (uint32_t)g16(x + 3) * 50u + (from_mh ? 500000u : 1000u) +
	      ((x[5] & 4) ? 1u : 0u);
	if (v6) {
		out[0] = 0x60;
		out[4] = (uint8_t)((20 + pay) >> 8);
		out[5] = (uint8_t)(20 + pay);
		out[6] = 6;
		out[8] = 0x20;
		out[23] = from_mh ? 7 : 1;
		out[24] = 0x20;
		out[39] = from_mh ? 1 : 7;
	} else {
		out[0] = 0x45;
		out[2] = (uint8_t)(tot >> 8);
		out[3] = (uint8_t)tot;
		out[9] = 6;
		out[12] = 10;
		out[15] = from_mh ? 7 : 1;
		out[16] = 10;
		out[19] = from_mh ? 1 : 7;
	}
	t = out + hl;
	t[0] = (uint8_t)((from_mh ? mp : fp) >> 8);
	t[1] = (uint8_t)(from_mh ? mp : fp);
	t[2] = (uint8_t)((from_mh ? fp : mp) >> 8);
	t[3] = (uint8_t)(from_mh ? fp : mp);
	t[4] = (uint8_t)(seq >> 24); t[5] = (uint8_t)(seq >> 16);
	t[6] = (uint8_t)(seq >> 8); t[7] = (uint8_t)seq;
	t[8] = (uint8_t)(ack >> 24); t[9] = (uint8_t)(ack >> 16);
	t[10] = (uint8_t)(ack >> 8); t[11] = (uint8_t)ack;
	t[12] = 0x50;
	t[13] = x[0] & 0x3f;
	t[15] = (uint8_t)(x[5] & 3);  /* windows 0..3: zero windows are common */
	if (v6)
		s = sum16(s, out + 8, 32);
	else
		s = sum16(s, out + 12, 8);
	s += 6 + (uint32_t)(20 + pay);
	s = sum16(s, t, 20 + pay);
	t[16] = (uint8_t)(fold(s) >> 8);
	t[17] = (uint8_t)fold(s);
	return tot;
}

static void
check_tx(const struct sgw_lift_mh_tx_out *tx, const uint8_t *pkt, size_t len)
{
	struct sgw_lift_msg m;
	uint8_t b[16] = {0}, o[256];
	size_t n, hl;
	uint32_t s;

	if (tx->why >= SGW_LIFT_MH_W__COUNT)
		abort();
	if (tx->verdict == SGW_LIFT_MH_PLAIN) {
		if (tx->why >= SGW_LIFT_MH_W_PENDING)
			abort();
		return;
	}
	if (tx->why < SGW_LIFT_MH_W_PENDING)
		abort();
	if ((tx->verdict == SGW_LIFT_MH_PAIR) !=
	    (tx->why == SGW_LIFT_MH_W_NEW_DATA || tx->why == SGW_LIFT_MH_W_NEW_DATA_PIGGY))
		abort();
	memcpy(b, tx->ack_hdr, 8);
	if (sgw_lift_decode(b, sizeof(b), &m) != SGW_LIFT_DEC_OK ||
	    m.kind != SGW_LIFT_K_TCP_ACK || m.flow_id != tx->flow_id ||
	    m.word != tx->ipsec_ack || (m.flags & 0x38) != tx->flags)
		abort();
	/* S never with F or D: a duplicate is never also to go at once */
	if ((tx->flags & SGW_LIFT_BIT_S) && (tx->flags & (SGW_LIFT_BIT_F | SGW_LIFT_BIT_D)))
		abort();
	if (tx->verdict != SGW_LIFT_MH_PAIR)
		return;
	memcpy(b, tx->frack_hdr, 8);
	if (sgw_lift_decode(b, sizeof(b), &m) != SGW_LIFT_DEC_OK ||
	    m.kind != SGW_LIFT_K_FRACK || m.flow_id != tx->flow_id)
		abort();
	n = sgw_lift_mh_frack_clone(pkt, len, o, sizeof(o));
	if (n == 0)
		abort();
	hl = (o[0] >> 4) == 4 ? (size_t)(o[0] & 15) * 4u : 40u;
	if (n < hl + 20 || n != hl + (size_t)(o[hl + 12] >> 4) * 4u)
		abort();
	if (g16(o + hl + 14) != 0 || (o[hl + 13] & 0x3f) != 0x10)
		abort();
	if (hl == 40)
		s = sum16(0, o + 8, 32);
	else
		s = sum16(0, o + 12, 8);
	s += 6 + (uint32_t)(n - hl);
	if (fold(sum16(s, o + hl, n - hl)) != 0)
		abort();
	if (hl != 40 && fold(sum16(0, o, hl)) != 0)
		abort();
}

static void
poll_check(struct sgw_lift_mh *m, uint64_t now, uint32_t cap)
{
	struct sgw_lift_mh_ctrl c[4];
	struct sgw_lift_msg msg;
	struct sgw_lift_mh_stats st;
	uint32_t n, i;
	uint64_t d;

	n = sgw_lift_mh_poll(m, now, c, cap);
	if (n > cap)
		abort();
	for (i = 0; i < n; i++) {
		if (sgw_lift_decode(c[i].hdr, 8, &msg) != SGW_LIFT_DEC_OK ||
		    msg.kind != c[i].kind || msg.flow_id != c[i].flow_id ||
		    (c[i].kind != SGW_LIFT_K_SETUP && c[i].kind != SGW_LIFT_K_TEARDOWN))
			abort();
		last_ctrl = c[i];
		have_last = true;
	}
	d = sgw_lift_mh_next_deadline(m);
	if (d < now)
		abort();
	/* a poll that filled its room may leave more due now; else nothing due */
	if (n < cap && d == now)
		abort();
	sgw_lift_mh_get_stats(m, &st);
	if (st.flows_created - st.flows_freed != st.flows || st.flows > 8)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sgw_lift_mh_conf c;
	struct sgw_lift_mh *m;
	struct sgw_lift_mh_tx_out tx;
	struct sgw_lift_mh_stats st;
	uint64_t now = 0;
	size_t off = 0;
	uint8_t pkt[256];
	int k;

	sgw_lift_mh_conf_default(&c);
	c.max_flows = 8;
	c.track = 4;
	c.max_sas = 2;
	c.probe_run_max = 2;
	c.share_window_ns = 10000 * MS;
	if (mem == NULL) {
		mem_len = sgw_lift_mh_mem_size(&c);
		mem = malloc(mem_len);
		if (mem == NULL)
			abort();
	}
	m = sgw_lift_mh_init(mem, mem_len, &c, 0);
	if (m == NULL)
		abort();
	have_last = false;

	while (off + 3 <= size) {
		uint8_t op = data[off], step = data[off + 1];
		size_t len = data[off + 2];
		const uint8_t *b = data + off + 3;
		uint32_t seq = 0;

		if (len > size - off - 3)
			len = size - off - 3;
		off += 3 + len;
		/* steps of 50 ms, every 16th of 20 s: retransmissions, tests, holds */
		now += (uint64_t)step * ((op & 0x80) ? 20000 * MS : 50 * MS);
		if (now >= sgw_lift_mh_next_deadline(m))
			poll_check(m, now, 4);

		switch (op & 3) {
		case 0:
			if (op & 4) {
				size_t n = synth(b, len, true, pkt);

				sgw_lift_mh_tx(m, now, pkt, n, 0x1000, 50, &tx);
				check_tx(&tx, pkt, n);
				if (getenv("FUZZ_LIFT_MH_DEBUG") != NULL)
					fprintf(stderr, "tx %s\n", sgw_lift_mh_why_name(tx.why));
			} else {
				sgw_lift_mh_tx(m, now, b, len, 0x1000, 50, &tx);
				check_tx(&tx, b, len);
			}
			break;
		case 1:
			if (len >= 4) {
				seq = ((uint32_t)b[0] << 24) | ((uint32_t)b[1] << 16) |
				      ((uint32_t)b[2] << 8) | b[3];
				b += 4;
				len -= 4;
			}
			if (op & 4) {
				size_t n = synth(b, len, false, pkt);

				k = sgw_lift_mh_rx(m, now, (op & 0x40) ? 0x2000 : 0x1000, seq,
						   pkt, n);
				if (getenv("FUZZ_LIFT_MH_DEBUG") != NULL)
					fprintf(stderr, "rx %s\n", sgw_lift_mh_rx_name(k));
			} else {
				k = sgw_lift_mh_rx(m, now, (op & 0x40) ? 0x2000 : 0x1000, seq,
						   b, len);
			}
			if (k < 0 || k >= SGW_LIFT_MH_RX__COUNT)
				abort();
			break;
		case 2:
			if ((op & 8) && have_last) {
				uint8_t a[8];
				struct sgw_lift_msg msg;
				uint8_t kind = last_ctrl.kind == SGW_LIFT_K_SETUP ?
					       SGW_LIFT_K_SETUP_ACK : SGW_LIFT_K_TEARDOWN_ACK;

				if (sgw_lift_decode(last_ctrl.hdr, 8, &msg) != SGW_LIFT_DEC_OK)
					abort();
				sgw_lift_build_ctrl_ack(a, 8, kind, msg.flow_id,
							kind == SGW_LIFT_K_SETUP_ACK ? msg.word : 0,
							(uint8_t)((len ? b[0] : 0) & 3));
				k = sgw_lift_mh_ctrl_rx(m, now, a, 8);
			} else {
				k = sgw_lift_mh_ctrl_rx(m, now, b, len);
			}
			if (k < 0 || k >= SGW_LIFT_MH_C__COUNT)
				abort();
			break;
		default:
			poll_check(m, now, 1 + ((op >> 2) & 3));
			break;
		}
		sgw_lift_mh_get_stats(m, &st);
		if (st.flows_created - st.flows_freed != st.flows)
			abort();
	}

	if (getenv("FUZZ_LIFT_MH_DEBUG") != NULL) {
		/* what a seed reached: FUZZ_LIFT_MH_DEBUG=1 fuzz_lift_mh SEED */
		sgw_lift_mh_get_stats(m, &st);
		fprintf(stderr, "flows %u pairs %lu setups %lu teardowns %lu ok %lu td_ok %lu "
			"D %lu S %lu probes %lu susp %lu forced %lu channel %lu\n", st.flows,
			(unsigned long)st.pairs, (unsigned long)st.setups_sent,
			(unsigned long)st.teardowns_sent,
			(unsigned long)st.ctrl_why[SGW_LIFT_MH_C_SETUP_OK],
			(unsigned long)st.ctrl_why[SGW_LIFT_MH_C_TEARDOWN_OK],
			(unsigned long)st.flag_d, (unsigned long)st.flag_s,
			(unsigned long)st.probes, (unsigned long)(st.susp_run + st.susp_share),
			(unsigned long)st.verdict_forced, (unsigned long)st.verdict_channel);
	}

	/* Nobody answers any more: idle expiry and give-ups end every flow. */
	for (k = 0; k < 400; k++) {
		uint64_t d = sgw_lift_mh_next_deadline(m);

		sgw_lift_mh_get_stats(m, &st);
		if (st.flows == 0)
			break;
		if (d == SGW_LIFT_MH_NEVER)
			abort();
		if (d > now)
			now = d;
		poll_check(m, now, 4);
	}
	sgw_lift_mh_get_stats(m, &st);
	if (st.flows != 0)
		abort();
	return 0;
}
