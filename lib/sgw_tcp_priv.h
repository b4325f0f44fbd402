/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * TCP endpoint internals shared by sgw_tcp_input.c and sgw_tcp_output.c:
 * serial-number comparisons, the timestamp clock, timer actions and the
 * output entry points input needs. Not part of the lib's interface.
 */
#ifndef SGW_TCP_PRIV_H
#define SGW_TCP_PRIV_H

#include <stdint.h>

#include "sgw_seq.h"
#include "sgw_tcp.h"


#define TCP_NS_PER_MS 1000000ull
#define TCP_NS_PER_US 1000ull
/* RFC 7323 5.5: TS.Recent older than 24 days no longer rejects segments. */
#define TCP_PAWS_IDLE_NS (24ull * 86400ull * 1000000000ull)
#define TCP_DEFAULT_MSS 536u

/* Our timestamp clock: milliseconds plus the connection's offset. */
static inline uint32_t
tcp_ts_now(const struct sgw_tcp_conn *c, uint64_t now_ns)
{
	return (uint32_t)(now_ns / TCP_NS_PER_MS) + c->ts_offset;
}

static inline void
tcp_timer_arm(struct sgw_tcp_conn *c, struct sgw_tcp_out *out, unsigned int id, uint64_t at)
{
	c->armed |= (uint8_t)(1u << id);
	out->timer_at[id] = at;
	out->timer_set |= (uint8_t)(1u << id);
}

static inline void
tcp_timer_cancel(struct sgw_tcp_conn *c, struct sgw_tcp_out *out, unsigned int id)
{
	if (!(c->armed & (1u << id)))
		return;
	c->armed &= (uint8_t)~(1u << id);
	out->timer_at[id] = SGW_TCP_NEVER;
	out->timer_set |= (uint8_t)(1u << id);
}

static inline int
tcp_timer_armed(const struct sgw_tcp_conn *c, unsigned int id)
{
	return (c->armed >> id) & 1;
}

/* The RTO with backoff, in ns, within [rto_min, rto_max]. */
static inline uint64_t
tcp_cur_rto_ns(const struct sgw_tcp_stack *st, const struct sgw_tcp_conn *c)
{
	uint64_t rto = (uint64_t)c->rto_us * TCP_NS_PER_US;
	unsigned int b = c->backoff;

	if (rto < st->conf.rto_min_ns)
		rto = st->conf.rto_min_ns;
	while (b-- > 0 && rto < st->conf.rto_max_ns)
		rto <<= 1;
	if (rto > st->conf.rto_max_ns)
		rto = st->conf.rto_max_ns;
	return rto;
}

/* sgw_tcp_output.c */
void tcp_send_syn(struct sgw_tcp_stack *st, struct sgw_tcp_conn *c, uint64_t now,
		  struct sgw_tcp_out *out);
void tcp_send_ack(struct sgw_tcp_stack *st, struct sgw_tcp_conn *c, uint64_t now,
		  struct sgw_tcp_out *out);
void tcp_send_rst(struct sgw_tcp_stack *st, struct sgw_tcp_conn *c, uint32_t seq,
		  uint32_t ack, uint8_t flags, struct sgw_tcp_out *out);
void tcp_output(struct sgw_tcp_stack *st, struct sgw_tcp_conn *c, uint64_t now,
		struct sgw_tcp_out *out);
void tcp_retransmit_head(struct sgw_tcp_stack *st, struct sgw_tcp_conn *c, uint64_t now,
			 struct sgw_tcp_out *out);
void tcp_closed(struct sgw_tcp_stack *st, struct sgw_tcp_conn *c, struct sgw_tcp_out *out);
void tcp_set_timers(struct sgw_tcp_stack *st, struct sgw_tcp_conn *c, uint64_t now,
		    struct sgw_tcp_out *out);
void tcp_enter_time_wait(struct sgw_tcp_stack *st, struct sgw_tcp_conn *c, uint64_t now,
			 struct sgw_tcp_out *out);
uint32_t tcp_rcv_window(struct sgw_tcp_stack *st, struct sgw_tcp_conn *c, int syn);
void tcp_send_data(struct sgw_tcp_stack *st, struct sgw_tcp_conn *c, uint64_t now, uint32_t seq,
		   uint32_t len, int fin, struct sgw_tcp_out *out);

/* SACK recovery runs (RFC 6675): SACK negotiated, in recovery, with a scoreboard. */
static inline int
tcp_sack_recovery(const struct sgw_tcp_conn *c)
{
	return (c->flags & (SGW_TCP_CF_SACK | SGW_TCP_CF_RECOVERY | SGW_TCP_CF_NOSB)) ==
	       (SGW_TCP_CF_SACK | SGW_TCP_CF_RECOVERY);
}

/* The ACKs' SACK blocks are used: SACK negotiated, not in a NewReno fallback recovery. */
static inline int
tcp_sack_on(const struct sgw_tcp_conn *c)
{
	return (c->flags & (SGW_TCP_CF_SACK | SGW_TCP_CF_NOSB)) == SGW_TCP_CF_SACK;
}

/* c's scoreboard: only when c->sb_idx != SGW_TCP_SB_NONE. */
static inline struct sgw_tcp_sb *
tcp_sb(struct sgw_tcp_stack *st, const struct sgw_tcp_conn *c)
{
	return (st->sb_pool != NULL ? st->sb_pool : st->sb_local) + c->sb_idx;
}

/* sgw_tcp_sack.c (RFC 6675) */
void tcp_sb_acked(struct sgw_tcp_stack *st, struct sgw_tcp_conn *c);
int tcp_sb_update(struct sgw_tcp_stack *st, struct sgw_tcp_conn *c,
		  const struct sgw_tcp_seg *seg);
int tcp_sb_is_lost(struct sgw_tcp_stack *st, const struct sgw_tcp_conn *c, uint32_t seq);
uint32_t tcp_sb_sacked_below(struct sgw_tcp_stack *st, const struct sgw_tcp_conn *c,
			     uint32_t seq);
void tcp_sb_drop(struct sgw_tcp_stack *st, struct sgw_tcp_conn *c);

/*
 * Give c's board back if it holds nothing that matters: no range, not in
 * SACK recovery. Inline: every ACK of a SACK connection asks.
 */
static inline void
tcp_sb_idle(struct sgw_tcp_stack *st, struct sgw_tcp_conn *c)
{
	if (c->sb_idx != SGW_TCP_SB_NONE && c->sb_n == 0 && !tcp_sack_recovery(c))
		tcp_sb_drop(st, c);
}
void tcp_sack_output(struct sgw_tcp_stack *st, struct sgw_tcp_conn *c, uint64_t now,
		     struct sgw_tcp_out *out);
int tcp_sack_enter(struct sgw_tcp_stack *st, struct sgw_tcp_conn *c, uint64_t now,
		   struct sgw_tcp_out *out);

#endif /* SGW_TCP_PRIV_H */
