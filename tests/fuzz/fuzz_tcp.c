/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer harness for the TCP endpoint's segment input (lib/sgw_tcp_seg.c,
 * lib/sgw_tcp_input.c, lib/sgw_tcp_output.c): the input is a sequence of
 * segments a hostile peer could send, each as [len (1 byte)][step (1 byte)]
 * [TCP header + payload], parsed by sgw_tcp_seg_parse and given to one
 * connection that starts in LISTEN (ISS 1000, ports 80 <- 9999), with its due
 * timers fired between segments. step: bits 0-6 are milliseconds to advance,
 * bit 7 makes the application append 3000 bytes (or shut down, every 4th).
 * Aborts when the endpoint writes beyond the receive space it was given,
 * sends bytes the application never gave, acknowledges more than was sent,
 * emits a header it cannot parse itself, or keeps more out-of-order records
 * than its bound, or lets snd_una <= snd_nxt <= snd_max break, or lets the
 * sender's SACK scoreboard leave its bound, order or [snd_una, snd_max], or
 * holds a scoreboard from the stack's pool when it has no range and is not
 * in SACK recovery (or none when it should), or keeps it after the close.
 * The SACK blocks' edges in an input are offsets from the connection's
 * snd_una (so that the sender's scoreboard and RFC 6675 recovery are
 * reached). Keepalive is on (2 s idle, 1 s interval, 3 probes); odd-sized inputs run
 * CUBIC, even-sized NewReno; sizes 2 mod 4 have an empty scoreboard pool (the
 * NewReno fallback). ASan catches reads past a segment.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sgw_tcp.h"

#define RX_CAP 20000u

struct h {
	uint64_t appended;
	uint64_t acked;
	uint64_t inorder;
	uint64_t read;
	uint64_t timer[SGW_TCP_T__COUNT];
};

static void
tx(void *ctx, struct sgw_tcp_conn *c, const uint8_t *hdr, uint32_t hlen, uint32_t off,
   uint32_t len)
{
	struct h *x = ctx;
	struct sgw_tcp_seg s;

	(void)c;
	if (sgw_tcp_seg_parse(hdr, hlen, &s, NULL) != SGW_TCP_PR_OK || s.hlen != hlen)
		abort();
	if (x->acked + off + len > x->appended)
		abort();
}

static uint32_t
space(void *ctx, struct sgw_tcp_conn *c)
{
	struct h *x = ctx;

	(void)c;
	return RX_CAP - (uint32_t)(x->inorder - x->read);
}

static void
rx_data(void *ctx, struct sgw_tcp_conn *c, uint32_t off, const uint8_t *p, uint32_t len)
{
	volatile uint8_t sink = 0;
	uint32_t i;

	if ((uint64_t)off + len > space(ctx, c))
		abort();
	for (i = 0; i < len; i++)
		sink ^= p[i]; /* ASan: the bytes must be inside the segment */
	(void)sink;
}

static void
rx_advance(void *ctx, struct sgw_tcp_conn *c, uint32_t n)
{
	struct h *x = ctx;

	if (n > space(ctx, c))
		abort();
	x->inorder += n;
	/* the application reads half of what it has, so windows open and close */
	x->read += (x->inorder - x->read) / 2;
}

static void
tx_acked(void *ctx, struct sgw_tcp_conn *c, uint32_t n)
{
	struct h *x = ctx;

	(void)c;
	if (x->acked + n > x->appended)
		abort();
	x->acked += n;
}

/*
 * The SACK scoreboard: at most SGW_TCP_SB_MAX ranges, each non-empty, in
 * order, disjoint and not adjacent, inside [snd_una, snd_max]. It is lent
 * from the stack's pool exactly while ranges are held or SACK recovery runs
 * (an idle connection holds none), and it is this connection's.
 */
static int
bad_sb(const struct sgw_tcp_stack *st, const struct sgw_tcp_conn *c)
{
	const struct sgw_tcp_sack *sb = sgw_tcp_sb_ranges(st, c);
	int sack_rec = (c->flags & (SGW_TCP_CF_SACK | SGW_TCP_CF_RECOVERY | SGW_TCP_CF_NOSB)) ==
		       (SGW_TCP_CF_SACK | SGW_TCP_CF_RECOVERY);
	unsigned int k;

	if (c->sb_n > SGW_TCP_SB_MAX)
		return 1;
	if ((sb != NULL) != (c->sb_n > 0 || sack_rec))
		return 1;
	if (st->sb_used != (sb != NULL ? 1u : 0u) || st->sb_used_max > st->sb_cap)
		return 1;
	if (sb == NULL)
		return 0;
	if (c->sb_idx >= st->sb_cap ||
	    (st->sb_pool != NULL ? st->sb_pool : st->sb_local)[c->sb_idx].owner != c)
		return 1;
	for (k = 0; k < c->sb_n; k++) {
		if ((int32_t)(sb[k].right - sb[k].left) <= 0 ||
		    (int32_t)(sb[k].left - c->snd_una) < 0 ||
		    (int32_t)(c->snd_max - sb[k].right) < 0)
			return 1;
		if (k > 0 && (int32_t)(sb[k].left - sb[k - 1].right) <= 0)
			return 1;
	}
	return 0;
}

/* snd_una <= snd_nxt <= snd_max, serial */
static int
bad_seq(const struct sgw_tcp_conn *c)
{
	return (int32_t)(c->snd_nxt - c->snd_una) < 0 || (int32_t)(c->snd_max - c->snd_nxt) < 0;
}

static void
apply(struct h *x, const struct sgw_tcp_out *o)
{
	unsigned int i;

	for (i = 0; i < SGW_TCP_T__COUNT; i++)
		if (o->timer_set & (1u << i))
			x->timer[i] = o->timer_at[i];
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct sgw_tcp_ops ops = {tx, rx_data, rx_advance, space, tx_acked};
	struct sgw_tcp_conf conf;
	struct sgw_tcp_stack st;
	struct sgw_tcp_sb no_boards[1];
	_Alignas(64) struct sgw_tcp_conn c;
	struct sgw_tcp_out o;
	struct sgw_tcp_seg s;
	struct h x;
	uint64_t now = 1000000000ull;
	unsigned int i, n_app = 0;
	size_t pos = 0;

	memset(&x, 0, sizeof(x));
	for (i = 0; i < SGW_TCP_T__COUNT; i++)
		x.timer[i] = SGW_TCP_NEVER;
	sgw_tcp_conf_default(&conf);
	conf.rcv_buf = RX_CAP;
	/* keepalive on, short, so its probes and give-up are reachable */
	conf.keepalive_idle_ns = 2000000000ull;
	conf.keepalive_intvl_ns = 1000000000ull;
	conf.keepalive_probes = 3;
	if (sgw_tcp_stack_init(&st, &conf, &ops, &x) != 0)
		abort();
	/* odd-sized inputs run CUBIC, even-sized NewReno */
	if (size & 1)
		sgw_tcp_stack_set_cc(&st, &sgw_tcp_cc_cubic);
	/* sizes 2 mod 4: no scoreboard free, SACK ignored, NewReno recoveries */
	if ((size & 3) == 2 && sgw_tcp_stack_set_sb_pool(&st, no_boards, 0) != 0)
		abort();
	sgw_tcp_conn_init(&st, &c, 1000, 80, 9999);
	sgw_tcp_listen(&st, &c);
	while (pos + 2 <= size) {
		size_t len = data[pos];
		uint8_t step = data[pos + 1];

		pos += 2;
		if (len > size - pos)
			len = size - pos;
		now += (uint64_t)(step & 0x7f) * 1000000ull;
		/* the timers due by now, earliest first; each fires at most once a turn */
		for (i = 0; i < SGW_TCP_T__COUNT; i++) {
			if (x.timer[i] <= now) {
				x.timer[i] = SGW_TCP_NEVER;
				sgw_tcp_out_reset(&o);
				sgw_tcp_timer(&st, &c, now, i, &o);
				apply(&x, &o);
			}
		}
		if (step & 0x80) {
			sgw_tcp_out_reset(&o);
			if (++n_app % 4 == 0) {
				sgw_tcp_shutdown(&st, &c, now, &o);
			} else {
				x.appended += 3000;
				if (sgw_tcp_send(&st, &c, now, 3000, &o) != 0)
					x.appended -= 3000;
			}
			apply(&x, &o);
		}
		if (sgw_tcp_seg_parse(data + pos, len, &s, st.parse_ctr) == SGW_TCP_PR_OK) {
			/*
			 * SACK edges count from snd_una, so that mutations land
			 * in and around what was sent (a hostile peer knows our
			 * numbers; every 32-bit value is still reachable).
			 */
			for (i = 0; i < s.n_sack; i++) {
				s.sack[i].left += c.snd_una;
				s.sack[i].right += c.snd_una;
			}
			sgw_tcp_out_reset(&o);
			sgw_tcp_input(&st, &c, now, &s, &o);
			apply(&x, &o);
		}
		if (c.ooo_n > SGW_TCP_OOO_MAX || bad_seq(&c) || bad_sb(&st, &c))
			abort();
		pos += len;
	}
	/* closing gives every board back */
	sgw_tcp_out_reset(&o);
	sgw_tcp_abort(&st, &c, now, &o);
	if (st.sb_used != 0 || c.sb_idx != SGW_TCP_SB_NONE)
		abort();
	return 0;
}
