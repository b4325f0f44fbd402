/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The policy's split section and the split keys of a rule (roles hub and
 * terminal): it fills sgw_policy.split, the TCP split stage's bounds
 * (dataplane/split.c, docs/tcp-split.md), and a rule's split_handshake. The
 * split carries each connection's byte stream on a satlink channel of its
 * terminal's session, so both need the satlink section.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "policy_load.h"

enum {
	SK_RELAY_CONN, SK_RELAY_TERM, SK_RELAY_WORKER, SK_MAX_WORKER, SK_MAX_TERM, SK_IDLE,
	SK_RWND, SK_THRESHOLD, SK_OPEN_CREDIT,
	SK_ACKRES_RTO_MIN, SK_LEG_RETRIES, SK_SAT_QUEUE,
};
static const struct keyspec split_keys[] = {
	[SK_RELAY_CONN] = { "relay_connection_bytes", false },
	[SK_RELAY_TERM] = { "relay_terminal_bytes", false },
	[SK_RELAY_WORKER] = { "relay_worker_bytes", false },
	[SK_MAX_WORKER] = { "max_connections_per_worker", false },
	[SK_MAX_TERM] = { "max_connections_per_terminal", false },
	[SK_IDLE] = { "idle_timeout_ms", false },
	[SK_RWND] = { "rwnd", false },
	[SK_THRESHOLD] = { "threshold_bytes", false },
	[SK_OPEN_CREDIT] = { "open_credit", false },
	[SK_ACKRES_RTO_MIN] = { "ackres_rto_min_ms", false },
	[SK_LEG_RETRIES] = { "leg_retries", false },
	[SK_SAT_QUEUE] = { "sat_queue_ms", false },
};

/* At the top level every key of the section gets "belongs under 'split:'". */
const struct keyset split_keyset = { split_keys, NKEYS(split_keys) };

#define SPLIT_RELAY_MIN 4096u                 /* one segment and some */
#define SPLIT_RELAY_MAX (64u << 20)           /* a relay ring's size fits 32 bits */
#define SPLIT_TOTAL_MAX ((uint64_t)1 << 40)   /* a terabyte: past it is a typo */
#define SPLIT_CONNS_MAX (1u << 24)
#define SPLIT_SAT_QUEUE_MAX 10000u          /* 10 s of queue: past it is a typo */
#define SPLIT_IDLE_MAX 86400000u              /* a day */
#define SPLIT_RTO_MIN_MAX 60000u              /* lib/sgw_relay.c's RTO ceiling, 60 s */
#define SPLIT_LEG_RETRIES_MAX 30u             /* Linux's tcp_retries2 is 15 */

static const char *const handshake_names[SGW_SPLIT_HS__COUNT] = { "end-to-end", "spoofed" };
static const char *const rwnd_names[SGW_SPLIT_RWND__COUNT] = { "rwnd", "petra", "ackres" };

/*
 * A rule's split keys, after its action was read: handshake (only with
 * action split). act: the action's value; a bad one was reported already
 * and gets no second message here.
 */
void
load_rule_split(struct ld *ld, struct sgw_rule *r, const struct ynode *hs_key,
		const struct ynode *hs_val, const struct ynode *act)
{
	const struct ynode *slv = section_value(ld, "satlink");
	bool has_satlink = slv != NULL && slv->kind != YN_BAD && !is_null(slv);
	bool action_ok = false, is_split = false;
	unsigned int en, i;

	for (i = 0; act != NULL && i < SGW_ACT__COUNT; i++)
		if (seq(act, sgw_action_name((enum sgw_action)i))) {
			action_ok = true;
			is_split = i == SGW_ACT_SPLIT;
		}

	if (hs_val != NULL) {
		if (get_enum(ld, hs_val, "handshake", handshake_names, SGW_SPLIT_HS__COUNT, &en))
			r->split_handshake = (uint8_t)en;
		if (action_ok && !is_split)
			ERR(ld, hs_key, "'handshake' is only allowed with action split");
	}
	/* While the stage is refused, "not built yet" is the one message to give. */
	if (!is_split || !sgw_action_built(SGW_ACT_SPLIT))
		return;
	if (ld->role_known && ld->p->role == SGW_ROLE_EMULATOR) {
		ERR(ld, act, "action 'split' is only used by roles hub and terminal");
		return;
	}
	if (!has_satlink)
		ERR(ld, act, "action 'split' needs a 'satlink' section: a split connection's "
		    "bytes cross the satellite on a channel of its terminal's satlink session");
}

/*
 * ackres_rto_min_ms (ACKRES's assumed RTO floor of the senders: its refresh
 * ACK goes out before the estimate expires), leg_retries (the legs' RTO
 * expiries of one segment before a leg gives up) and sat_queue_ms (the DATA
 * kept queued in a satlink session, dataplane/split.c data_room).
 */
static void
load_split_legs(struct ld *ld, const struct ynode **vals, const struct ynode **keys)
{
	struct sgw_split_policy *sp = &ld->p->split;
	uint32_t r;

	get_u32(ld, vals[SK_ACKRES_RTO_MIN], "ackres_rto_min_ms", 1, SPLIT_RTO_MIN_MAX,
		&sp->ackres_rto_min_ms);
	if (vals[SK_ACKRES_RTO_MIN] != NULL && sp->rwnd != SGW_SPLIT_RWND_ACKRES)
		ERR(ld, keys[SK_ACKRES_RTO_MIN], "'ackres_rto_min_ms' is used by "
		    "'rwnd: ackres' only");
	if (vals[SK_LEG_RETRIES] != NULL &&
	    get_u32(ld, vals[SK_LEG_RETRIES], "leg_retries", 1, SPLIT_LEG_RETRIES_MAX, &r))
		sp->leg_retries = (uint8_t)r;
	get_u32(ld, vals[SK_SAT_QUEUE], "sat_queue_ms", 0, SPLIT_SAT_QUEUE_MAX, &sp->sat_queue_ms);
}

/* split: optional, roles hub and terminal; needs satlink. */
void
load_split(struct ld *ld, const struct ynode *key, const struct ynode *v)
{
	const struct ynode *vals[NKEYS(split_keys)], *keys[NKEYS(split_keys)];
	struct sgw_policy *p = ld->p;
	struct sgw_split_policy *sp = &p->split;
	unsigned int en;
	uint64_t x;

	if (v == NULL || is_null(v))
		return;
	if (ld->role_known && p->role == SGW_ROLE_EMULATOR) {
		ERR(ld, key, "'split' is only used by roles hub and terminal (this policy's "
		    "role is %s)", sgw_role_name(p->role));
		return;
	}
	v = get_map(ld, v, "split");
	if (v == NULL)
		return;
	map_fields(ld, v, "split", split_keys, NKEYS(split_keys), vals, keys, false);
	sp->present = true;

	get_u32(ld, vals[SK_RELAY_CONN], "relay_connection_bytes", SPLIT_RELAY_MIN,
		SPLIT_RELAY_MAX, &sp->relay_connection_bytes);
	if (vals[SK_RELAY_TERM] != NULL &&
	    get_uint(ld, vals[SK_RELAY_TERM], "relay_terminal_bytes", SPLIT_RELAY_MIN,
		     SPLIT_TOTAL_MAX, &x))
		sp->relay_terminal_bytes = x;
	if (vals[SK_RELAY_WORKER] != NULL &&
	    get_uint(ld, vals[SK_RELAY_WORKER], "relay_worker_bytes", SPLIT_RELAY_MIN,
		     SPLIT_TOTAL_MAX, &x))
		sp->relay_worker_bytes = x;
	get_u32(ld, vals[SK_MAX_WORKER], "max_connections_per_worker", 1, SPLIT_CONNS_MAX,
		&sp->max_connections_worker);
	get_u32(ld, vals[SK_MAX_TERM], "max_connections_per_terminal", 1, SPLIT_CONNS_MAX,
		&sp->max_connections_terminal);
	get_u32(ld, vals[SK_IDLE], "idle_timeout_ms", 0, SPLIT_IDLE_MAX, &sp->idle_timeout_ms);
	if (vals[SK_RWND] != NULL &&
	    get_enum(ld, vals[SK_RWND], "rwnd", rwnd_names, SGW_SPLIT_RWND__COUNT, &en))
		sp->rwnd = (uint8_t)en;
	get_u32(ld, vals[SK_THRESHOLD], "threshold_bytes", 1, SPLIT_RELAY_MAX,
		&sp->threshold_bytes);
	get_u32(ld, vals[SK_OPEN_CREDIT], "open_credit", 1024, SPLIT_RELAY_MAX,
		&sp->open_credit);

	/* One connection has two relays (one per direction): both must fit each total. */
	if (vals[SK_RELAY_TERM] != NULL &&
	    sp->relay_terminal_bytes < 2 * (uint64_t)sp->relay_connection_bytes)
		ERR(ld, vals[SK_RELAY_TERM], "'relay_terminal_bytes' %" PRIu64 " holds less than "
		    "one connection's two relays (2 x relay_connection_bytes = %" PRIu64 ")",
		    sp->relay_terminal_bytes, 2 * (uint64_t)sp->relay_connection_bytes);
	if (vals[SK_RELAY_WORKER] != NULL &&
	    sp->relay_worker_bytes < sp->relay_terminal_bytes)
		ERR(ld, vals[SK_RELAY_WORKER], "'relay_worker_bytes' %" PRIu64 " is less than "
		    "'relay_terminal_bytes' (%" PRIu64 ")", sp->relay_worker_bytes,
		    sp->relay_terminal_bytes);
	if (vals[SK_MAX_TERM] != NULL &&
	    sp->max_connections_terminal > sp->max_connections_worker)
		ERR(ld, vals[SK_MAX_TERM], "'max_connections_per_terminal' %" PRIu32 " exceeds "
		    "'max_connections_per_worker' (%" PRIu32 ")", sp->max_connections_terminal,
		    sp->max_connections_worker);
	/* An acceptor's relay toward its peer must take what OPEN already allows. */
	if (sp->open_credit > sp->relay_connection_bytes) {
		const struct ynode *at = vals[SK_OPEN_CREDIT] != NULL ? vals[SK_OPEN_CREDIT] :
			vals[SK_RELAY_CONN];

		if (at != NULL)
			ERR(ld, at, "'open_credit' %" PRIu32 " exceeds 'relay_connection_bytes' "
			    "(%" PRIu32 "): the far half's relay must hold what the opener may "
			    "send before it answers", sp->open_credit,
			    sp->relay_connection_bytes);
	}
	if (vals[SK_THRESHOLD] != NULL) {
		if (sp->rwnd == SGW_SPLIT_RWND_RWND)
			ERR(ld, keys[SK_THRESHOLD], "'threshold_bytes' is used by 'rwnd: petra' "
			    "and 'rwnd: ackres' only");
		else if (sp->threshold_bytes >= sp->relay_connection_bytes)
			ERR(ld, vals[SK_THRESHOLD], "'threshold_bytes' %" PRIu32 " must be below "
			    "'relay_connection_bytes' (%" PRIu32 ")", sp->threshold_bytes,
			    sp->relay_connection_bytes);
	}
	load_split_legs(ld, vals, keys);
	if (!p->satlink.enabled)
		ERR(ld, key, "'split' needs a 'satlink' section: a split connection's bytes "
		    "cross the satellite on a channel of its terminal's satlink session");
}
