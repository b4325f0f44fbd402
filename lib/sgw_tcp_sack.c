/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * TCP endpoint, SACK-based loss recovery on the sending side (RFC 6675):
 * the scoreboard of SACKed ranges the peer reported (at most SGW_TCP_SB_MAX
 * ranges above snd_una), IsLost, SetPipe, NextSeg with the rescue
 * retransmission, and recovery entry. Used only when SACK-permitted was
 * negotiated; otherwise sgw_tcp_input.c does NewReno (RFC 6582).
 *
 * The scoreboard (struct sgw_tcp_sb) lives out of line in the stack's pool:
 * a connection takes one when the first range arrives or when recovery
 * starts, and gives it back (tcp_sb_idle) once it has no range and is not
 * in SACK recovery; an idle connection holds none (sgw_tcp.h says why). An
 * empty pool is not an error: the SACK information of that ACK is ignored
 * (counted), and a recovery that cannot get a board runs NewReno
 * (SGW_TCP_CF_NOSB, counted) - what a sender without SACK would do.
 *
 * The scoreboard holds byte ranges, not per-segment marks: IsLost is the
 * same for every byte of a hole (the SACKed bytes above it do not change
 * inside the hole), so pipe and NextSeg walk the holes between ranges, at
 * most SGW_TCP_SB_MAX + 1 of them. No loop here runs on a number taken from
 * a segment: blocks per ACK are at most SGW_TCP_MAX_SACK (the parser's
 * bound), ranges at most SGW_TCP_SB_MAX.
 */
#include <string.h>

#include "sgw_tcp.h"
#include "sgw_tcp_priv.h"

/* RFC 6675 DupThresh */
#define TCP_DUPTHRESH 3u

int
sgw_tcp_stack_set_sb_pool(struct sgw_tcp_stack *st, struct sgw_tcp_sb *pool, uint32_t n)
{
	if (st == NULL || st->sb_used != 0 || (pool != NULL && n == SGW_TCP_SB_NONE))
		return -1;
	st->sb_pool = pool;
	st->sb_cap = pool != NULL ? n : SGW_TCP_SB_POOL_DEFAULT;
	/* boards are handed out from sb_next up, then from the free list: no init loop */
	st->sb_next = 0;
	st->sb_free = SGW_TCP_SB_NONE;
	return 0;
}

const struct sgw_tcp_sack *
sgw_tcp_sb_ranges(const struct sgw_tcp_stack *st, const struct sgw_tcp_conn *c)
{
	if (c->sb_idx == SGW_TCP_SB_NONE)
		return NULL;
	return tcp_sb((struct sgw_tcp_stack *)(uintptr_t)st, c)->r;
}

/* c's board, taken from the pool if it has none; NULL when the pool is empty. */
static struct sgw_tcp_sb *
sb_attach(struct sgw_tcp_stack *st, struct sgw_tcp_conn *c)
{
	struct sgw_tcp_sb *b;
	uint32_t i;

	if (c->sb_idx != SGW_TCP_SB_NONE)
		return tcp_sb(st, c);
	if (st->sb_free != SGW_TCP_SB_NONE) {
		i = st->sb_free;
		c->sb_idx = i;
		b = tcp_sb(st, c);
		st->sb_free = b->next;
	} else if (st->sb_next < st->sb_cap) {
		i = st->sb_next++;
		c->sb_idx = i;
		b = tcp_sb(st, c);
	} else {
		return NULL;
	}
	b->owner = c;
	b->next = SGW_TCP_SB_NONE;
	b->high_rxt = c->snd_una;
	c->sb_n = 0;
	if (++st->sb_used > st->sb_used_max)
		st->sb_used_max = st->sb_used;
	return b;
}

/* Give c's board back (its ranges are forgotten). */
void
tcp_sb_drop(struct sgw_tcp_stack *st, struct sgw_tcp_conn *c)
{
	struct sgw_tcp_sb *b;

	c->sb_n = 0;
	if (c->sb_idx == SGW_TCP_SB_NONE)
		return;
	b = tcp_sb(st, c);
	b->owner = NULL;
	b->next = st->sb_free;
	st->sb_free = c->sb_idx;
	st->sb_used--;
	c->sb_idx = SGW_TCP_SB_NONE;
}


/* Remove ranges below snd_una; the ACK stopping exactly at a range is reneging. */
void
tcp_sb_acked(struct sgw_tcp_stack *st, struct sgw_tcp_conn *c)
{
	struct sgw_tcp_sack *sb;
	unsigned int drop = 0, k;

	if (c->sb_n == 0)
		return;
	sb = tcp_sb(st, c)->r;
	while (drop < c->sb_n && SGW_SEQ_LE(sb[drop].right, c->snd_una))
		drop++;
	if (drop) {
		for (k = 0; k + drop < c->sb_n; k++)
			sb[k] = sb[k + drop];
		c->sb_n = (uint8_t)(c->sb_n - drop);
	}
	if (c->sb_n == 0)
		return;
	if (SGW_SEQ_LT(sb[0].left, c->snd_una))
		sb[0].left = c->snd_una;
	/*
	 * A receiver that holds [left, right) and has everything below left
	 * acknowledges past right. An ACK that stops at left means it dropped
	 * what it SACKed (RFC 2018 8: reneging): forget the scoreboard, so the
	 * bytes are sent again rather than never.
	 */
	if (sb[0].left == c->snd_una) {
		st->ctr[SGW_TCP_C_SACK_RENEGE]++;
		c->sb_n = 0;
	}
}

/* Record [l, r) in the sorted, disjoint, non-adjacent ranges. */
static void
sb_insert(struct sgw_tcp_stack *st, struct sgw_tcp_conn *c, struct sgw_tcp_sack *sb,
	  uint32_t l, uint32_t r)
{
	unsigned int n = c->sb_n, i = 0, j, k;

	while (i < n && SGW_SEQ_LT(sb[i].right, l))
		i++;
	j = i;
	while (j < n && SGW_SEQ_LE(sb[j].left, r))
		j++;
	if (j == i) {
		if (n == SGW_TCP_SB_MAX) {
			st->ctr[SGW_TCP_C_SB_FULL]++;
			/*
			 * Keep the lowest ranges: they decide what is lost and
			 * retransmitted first. A forgotten range is only sent again.
			 */
			if (i == n)
				return;
			n--;
		}
		for (k = n; k > i; k--)
			sb[k] = sb[k - 1];
		sb[i].left = l;
		sb[i].right = r;
		c->sb_n = (uint8_t)(n + 1);
		return;
	}
	if (SGW_SEQ_LT(l, sb[i].left))
		sb[i].left = l;
	sb[i].right = SGW_SEQ_GT(r, sb[j - 1].right) ? r : sb[j - 1].right;
	for (k = i + 1; k + (j - i - 1) < n; k++)
		sb[k] = sb[k + (j - i - 1)];
	c->sb_n = (uint8_t)(n - (j - i - 1));
}

/*
 * Take the SACK blocks of an acceptable ACK (snd_una already moved by it).
 * RFC 2883 D-SACK (the first block below the cumulative ACK or inside the
 * second) is counted and ignored: it reports a duplicate, nothing to repair.
 * Returns 1 when the scoreboard learnt something; -1 when the ACK carried no
 * usable SACK information: no scoreboard was free for its blocks, or every
 * block that was not a D-SACK was bad (e.g. a middlebox that rewrites
 * sequence numbers but not SACK blocks); 0 when it only repeated what the
 * scoreboard knew (or held only D-SACKs).
 */
int
tcp_sb_update(struct sgw_tcp_stack *st, struct sgw_tcp_conn *c, const struct sgw_tcp_seg *seg)
{
	unsigned int i, n = seg->n_sack, bad = 0, usable = 0;
	struct sgw_tcp_sack *sb = NULL;
	int news = 0;

	if (n > SGW_TCP_MAX_SACK)
		n = SGW_TCP_MAX_SACK;
	for (i = 0; i < n; i++) {
		uint32_t l = seg->sack[i].left, r = seg->sack[i].right;

		if (i == 0 && (SGW_SEQ_LE(r, seg->ack) ||
			       (n > 1 && SGW_SEQ_GE(l, seg->sack[1].left) &&
				SGW_SEQ_LE(r, seg->sack[1].right)))) {
			st->ctr[SGW_TCP_C_DSACK_IN]++;
			continue;
		}
		/*
		 * A receiver SACKs only above its cumulative ACK: a block at or
		 * below snd_una (not a D-SACK) is a peer's invention, and taking
		 * it would mark the head as held, which only an RTO could undo.
		 */
		if (!SGW_SEQ_LT(l, r) || SGW_SEQ_GT(r, c->snd_max) || !SGW_SEQ_GT(l, c->snd_una)) {
			st->ctr[SGW_TCP_C_SACK_BAD]++;
			bad++;
			continue;
		}
		usable++;
		if (sb == NULL) {
			struct sgw_tcp_sb *b = sb_attach(st, c);

			if (b == NULL) {
				/* as if the ACK carried no SACK information */
				st->ctr[SGW_TCP_C_SB_NOMEM]++;
				return -1; /* nothing was inserted before: sb was NULL */
			}
			sb = b->r;
		}
		/* already known? */
		{
			unsigned int k;
			int known = 0;

			for (k = 0; k < c->sb_n; k++)
				if (SGW_SEQ_LE(sb[k].left, l) && SGW_SEQ_GE(sb[k].right, r))
					known = 1;
			if (known)
				continue;
		}
		sb_insert(st, c, sb, l, r);
		news = 1;
	}
	return bad != 0 && usable == 0 ? -1 : news;
}

/* SACKed bytes at or above seq, and the number of segments they make (rounded up). */
static void
sacked_above(const struct sgw_tcp_conn *c, const struct sgw_tcp_sack *sb, uint32_t seq,
	     uint32_t *bytes, uint32_t *segs)
{
	unsigned int k;
	uint32_t b = 0, n = 0;

	for (k = 0; k < c->sb_n; k++) {
		uint32_t l = sb[k].left, len;

		if (SGW_SEQ_LE(sb[k].right, seq))
			continue;
		if (SGW_SEQ_LT(l, seq))
			l = seq;
		len = sb[k].right - l;
		b += len;
		n += (len + c->snd_mss - 1) / c->snd_mss;
	}
	*bytes = b;
	*segs = n;
}

/*
 * RFC 6675 IsLost(seq): DupThresh SACKed segments above it, or more than
 * (DupThresh - 1) * SMSS SACKed bytes above it.
 */
static int
is_lost(const struct sgw_tcp_conn *c, const struct sgw_tcp_sack *sb, uint32_t seq)
{
	uint32_t b, n;

	sacked_above(c, sb, seq, &b, &n);
	return n >= TCP_DUPTHRESH || b > (TCP_DUPTHRESH - 1) * (uint32_t)c->snd_mss;
}

int
tcp_sb_is_lost(struct sgw_tcp_stack *st, const struct sgw_tcp_conn *c, uint32_t seq)
{
	if (c->sb_n == 0)
		return 0;
	return is_lost(c, tcp_sb(st, c)->r, seq);
}

/*
 * Hole k (0 .. sb_n): [start, end) of unSACKed bytes: below the first range,
 * between ranges, and above the last one up to snd_max.
 */
static void
hole(const struct sgw_tcp_conn *c, const struct sgw_tcp_sack *sb, unsigned int k, uint32_t *s,
     uint32_t *e)
{
	*s = k == 0 ? c->snd_una : sb[k - 1].right;
	*e = k == c->sb_n ? c->snd_max : sb[k].left;
}

/* RFC 6675 SetPipe: the octets the sender believes are still in the network. */
static uint32_t
sack_pipe(const struct sgw_tcp_conn *c, const struct sgw_tcp_sb *b)
{
	uint32_t pipe = 0, s, e;
	unsigned int k;

	for (k = 0; k <= c->sb_n; k++) {
		hole(c, b->r, k, &s, &e);
		if (!SGW_SEQ_LT(s, e))
			continue;
		/* (a) not lost: still in flight */
		if (!is_lost(c, b->r, s))
			pipe += e - s;
		/* (b) retransmitted (below HighRxt): the retransmission is in flight */
		if (SGW_SEQ_LT(s, b->high_rxt))
			pipe += (SGW_SEQ_LT(e, b->high_rxt) ? e : b->high_rxt) - s;
	}
	return pipe;
}

/* Sequence numbers below snd_nxt that the scoreboard holds (go-back-N after an RTO). */
uint32_t
tcp_sb_sacked_below(struct sgw_tcp_stack *st, const struct sgw_tcp_conn *c, uint32_t seq)
{
	const struct sgw_tcp_sack *sb;
	uint32_t b = 0;
	unsigned int k;

	if (c->sb_n == 0)
		return 0;
	sb = tcp_sb(st, c)->r;
	for (k = 0; k < c->sb_n && SGW_SEQ_LT(sb[k].left, seq); k++)
		b += (SGW_SEQ_LT(sb[k].right, seq) ? sb[k].right : seq) - sb[k].left;
	return b;
}

/*
 * Retransmit up to SMSS from seq, not past end (a hole's end). The FIN, if
 * sent, is sequence snd_end. Returns the sequence space sent.
 */
static uint32_t
rtx(struct sgw_tcp_stack *st, struct sgw_tcp_conn *c, uint64_t now, uint32_t seq, uint32_t end,
    struct sgw_tcp_out *out)
{
	uint32_t len = end - seq, data;
	int fin = 0;

	if (len > c->snd_mss)
		len = c->snd_mss;
	/* the data bytes of [seq, seq + len) and whether the FIN (seq snd_end) is in it */
	if (SGW_SEQ_GE(seq, c->snd_end))
		data = 0;
	else
		data = SGW_SEQ_GT(seq + len, c->snd_end) ? c->snd_end - seq : len;
	fin = (c->flags & SGW_TCP_CF_FIN_SENT) && seq + data == c->snd_end &&
	      SGW_SEQ_GT(end, c->snd_end);
	if (data == 0 && !fin)
		return 0;
	tcp_send_data(st, c, now, seq, data, fin, out);
	return data + (fin ? 1u : 0u);
}

/*
 * RFC 6675 5 step (C): while cwnd - pipe >= 1 SMSS, send what NextSeg picks.
 * Each turn sends at least one sequence number or stops; the turns are
 * bounded by cwnd (capped by conf.cwnd_max) and the holes.
 */
void
tcp_sack_output(struct sgw_tcp_stack *st, struct sgw_tcp_conn *c, uint64_t now,
		struct sgw_tcp_out *out)
{
	/* in SACK recovery: the board is attached (tcp_sack_enter) */
	struct sgw_tcp_sb *b = tcp_sb(st, c);
	uint32_t pipe = sack_pipe(c, b);

	while (c->cwnd >= pipe + c->snd_mss) {
		uint32_t s = 0, e = 0, sent = 0, highest_sacked;
		unsigned int k;
		int32_t left;

		/* (1) the first unSACKed byte above HighRxt that IsLost */
		for (k = 0; k < c->sb_n; k++) {
			hole(c, b->r, k, &s, &e);
			if (SGW_SEQ_LT(s, b->high_rxt))
				s = b->high_rxt;
			if (SGW_SEQ_LT(s, e) && is_lost(c, b->r, s))
				break;
		}
		if (k < c->sb_n) {
			sent = rtx(st, c, now, s, e, out);
			if (sent) {
				st->ctr[SGW_TCP_C_SACK_RETX]++;
				b->high_rxt = s + sent;
				pipe += sent;
				continue;
			}
		}
		/* (2) new data the peer's window takes */
		left = (int32_t)(c->snd_end - c->snd_nxt);
		if (left > 0) {
			uint32_t room = c->snd_una + c->snd_wnd - c->snd_nxt;
			uint32_t len = (uint32_t)left;

			if (SGW_SEQ_LT(c->snd_una + c->snd_wnd, c->snd_nxt))
				room = 0;
			if (len > c->snd_mss)
				len = c->snd_mss;
			if (len > room)
				len = room;
			if (len > 0 && (len == c->snd_mss || len == (uint32_t)left)) {
				int fin = (c->flags & SGW_TCP_CF_FIN_QUEUED) &&
					  len == (uint32_t)left;

				tcp_send_data(st, c, now, c->snd_nxt, len, fin, out);
				c->snd_nxt += len + (fin ? 1 : 0);
				pipe += len + (fin ? 1 : 0);
				continue;
			}
		} else if (left == 0 && (c->flags & SGW_TCP_CF_FIN_QUEUED) &&
			   c->snd_nxt == c->snd_end) {
			tcp_send_data(st, c, now, c->snd_nxt, 0, 1, out);
			c->snd_nxt++;
			pipe++;
			continue;
		}
		/* (3) an unSACKed byte above HighRxt below the highest SACKed byte */
		highest_sacked = c->sb_n ? b->r[c->sb_n - 1].right : c->snd_una;
		for (k = 0; k < c->sb_n; k++) {
			hole(c, b->r, k, &s, &e);
			if (SGW_SEQ_LT(s, b->high_rxt))
				s = b->high_rxt;
			if (SGW_SEQ_LT(s, e) && SGW_SEQ_LT(s, highest_sacked))
				break;
		}
		if (k < c->sb_n) {
			sent = rtx(st, c, now, s, e, out);
			if (sent) {
				st->ctr[SGW_TCP_C_SACK_RETX]++;
				b->high_rxt = s + sent;
				pipe += sent;
				continue;
			}
		}
		/*
		 * (4) once per recovery, the rescue: one segment that holds the
		 * highest unSACKed byte, so a lost tail is repaired without an
		 * RTO. HighRxt is not moved.
		 */
		if (!(c->flags & SGW_TCP_CF_RESCUED)) {
			hole(c, b->r, c->sb_n, &s, &e);
			if (SGW_SEQ_LT(s, e)) {
				uint32_t from = e - s > c->snd_mss ? e - c->snd_mss : s;

				c->flags |= SGW_TCP_CF_RESCUED;
				sent = rtx(st, c, now, from, e, out);
				if (sent) {
					st->ctr[SGW_TCP_C_RESCUE_RETX]++;
					pipe += sent;
					continue;
				}
			}
		}
		break;
	}
}

/*
 * RFC 6675 5 step (4): enter loss recovery on the DupThresh-th duplicate ACK
 * or when IsLost(HighACK + 1). Retransmits the first segment; the caller's
 * tcp_output then runs step (C). -1 (nothing done) when there is no board
 * for HighRxt: the caller recovers by NewReno instead.
 */
int
tcp_sack_enter(struct sgw_tcp_stack *st, struct sgw_tcp_conn *c, uint64_t now,
	       struct sgw_tcp_out *out)
{
	struct sgw_tcp_sb *b = sb_attach(st, c);
	uint32_t e, sent;

	if (b == NULL)
		return -1;
	e = c->sb_n ? b->r[0].left : c->snd_max;

	st->ctr[SGW_TCP_C_FAST_RETX]++;
	st->ctr[SGW_TCP_C_SACK_RECOVERY]++;
	c->ssthresh = c->cc->ssthresh(c, now);
	c->cwnd = c->ssthresh;
	c->recover = c->snd_max; /* RecoveryPoint = HighData */
	c->flags |= SGW_TCP_CF_RECOVERY;
	c->flags &= ~(uint32_t)SGW_TCP_CF_RESCUED;
	b->high_rxt = c->snd_una;
	sent = rtx(st, c, now, c->snd_una, e, out);
	b->high_rxt = c->snd_una + sent;
	return 0;
}
