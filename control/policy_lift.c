/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The policy's lift section (role hub): it fills sgw_policy.lift, the
 * BS-LIFT stage's settings (dataplane/lift.c, docs/lift.md). LIFT is refused
 * without satlink with AES-GCM keys: the stage acts on LIFT packets only when
 * an authenticated satlink session delivered them, so without keys it could
 * never act, and an operator would believe it protects flows it does not.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "policy_load.h"

enum {
	LK_ENABLED, LK_PROTOCOL, LK_TIMER, LK_TIMER_MS, LK_TIMER_MIN, LK_MAX_FROZEN,
	LK_SHARE_WINDOW, LK_MAX_SHARE, LK_SUSPEND, LK_MAX_FLOWS, LK_MAX_SAS, LK_THAW,
	LK_SPARE,
};
static const struct keyspec lift_keys[] = {
	[LK_ENABLED] = { "enabled", false },
	[LK_PROTOCOL] = { "protocol", false },
	[LK_TIMER] = { "timer", false },
	[LK_TIMER_MS] = { "timer_ms", false },
	[LK_TIMER_MIN] = { "timer_min_ms", false },
	[LK_MAX_FROZEN] = { "max_frozen_ms", false },
	[LK_SHARE_WINDOW] = { "share_window_ms", false },
	[LK_MAX_SHARE] = { "max_share_permille", false },
	[LK_SUSPEND] = { "suspend_ms", false },
	[LK_MAX_FLOWS] = { "max_flows", false },
	[LK_MAX_SAS] = { "max_sas", false },
	[LK_THAW] = { "thaw", false },
	[LK_SPARE] = { "spare_frack", false },
};

/* At the top level these get "belongs under 'lift:'" (not 'enabled', 'protocol'). */
const struct keyset lift_keyset = {
	&lift_keys[LK_TIMER], NKEYS(lift_keys) - LK_TIMER
};

static const char *const lift_timer_names[] = { "fixed", "adaptive" };

#define LIFT_MS_MAX 3600000u    /* an hour: any bound past it is a typo */
#define LIFT_ENTRIES_MAX (1u << 24)

/* lift.protocol: the same rules as protocols.lift, and set in one place only. */
static void
lift_protocol(struct ld *ld, const struct ynode *v)
{
	const struct ynode *protos = section_value(ld, "protocols");
	uint32_t x, i;

	if (!get_u32(ld, v, "protocol", 1, 255, &x))
		return;
	if (protos != NULL && protos->kind == YN_MAP) {
		for (i = 0; i + 1 < 2 * protos->n; i += 2)
			if (seq(protos->u.kids[i], "lift")) {
				ERR(ld, v, "'protocol' of 'lift' is also set by 'protocols: lift' "
				    "(line %" PRIu32 "): set it in one place", protos->u.kids[i]->line);
				return;
			}
	}
	/* What the parser takes for itself (AH, GRE, SCTP it does not: as protocols.lift). */
	for (i = 0; i < N_PROTO_NAMES; i++)
		if (proto_names[i].num == x && x != 51 && x != 47 && x != 132) {
			ERR(ld, v, "lift 'protocol' %" PRIu32 " is the protocol number of %s", x,
			    proto_names[i].name);
			return;
		}
	if (x == ld->p->xcp_proto) {
		ERR(ld, v, "lift 'protocol' %" PRIu32 " is the same protocol number as 'xcp'", x);
		return;
	}
	ld->p->lift_proto = (uint8_t)x;
}

/* lift: optional, role hub only; needs satlink with keys. */
void
load_lift(struct ld *ld, const struct ynode *key, const struct ynode *v)
{
	const struct ynode *vals[NKEYS(lift_keys)], *keys[NKEYS(lift_keys)];
	struct sgw_policy *p = ld->p;
	struct sgw_lift_policy *lp = &p->lift;
	bool enabled = true;
	unsigned int en;
	uint32_t x;

	if (v == NULL || is_null(v))
		return;
	if (ld->role_known && p->role != SGW_ROLE_HUB) {
		ERR(ld, key, "'lift' is only used by role hub (BS-LIFT; this policy's role is %s: "
		    "a terminal carries LIFT packets on satlink without it)", sgw_role_name(p->role));
		return;
	}
	v = get_map(ld, v, "lift");
	if (v == NULL)
		return;
	map_fields(ld, v, "lift", lift_keys, NKEYS(lift_keys), vals, keys, false);

	if (vals[LK_ENABLED] != NULL && !get_bool(ld, vals[LK_ENABLED], "enabled", &enabled))
		enabled = false;
	if (vals[LK_PROTOCOL] != NULL)
		lift_protocol(ld, vals[LK_PROTOCOL]);
	if (vals[LK_TIMER] != NULL &&
	    get_enum(ld, vals[LK_TIMER], "timer", lift_timer_names, 2, &en))
		lp->timer_mode = (uint8_t)en;
	get_u32(ld, vals[LK_TIMER_MS], "timer_ms", 10, 60000, &lp->timer_ms);
	if (get_u32(ld, vals[LK_TIMER_MIN], "timer_min_ms", 10, 60000, &x)) {
		if (x > lp->timer_ms)
			ERR(ld, vals[LK_TIMER_MIN], "'timer_min_ms' %" PRIu32 " must not exceed "
			    "'timer_ms' (%" PRIu32 "%s)", x, lp->timer_ms,
			    vals[LK_TIMER_MS] ? "" : ", the default");
		else
			lp->timer_min_ms = x;
	} else if (vals[LK_TIMER_MIN] == NULL && lp->timer_min_ms > lp->timer_ms) {
		lp->timer_min_ms = lp->timer_ms;  /* a short fixed value lowers the default floor */
	}
	if (vals[LK_TIMER_MIN] != NULL && lp->timer_mode != SGW_LIFT_TIMER_POL_ADAPTIVE)
		ERR(ld, keys[LK_TIMER_MIN], "'timer_min_ms' is used by 'timer: adaptive' only");
	get_u32(ld, vals[LK_MAX_FROZEN], "max_frozen_ms", 100, LIFT_MS_MAX, &lp->max_frozen_ms);
	get_u32(ld, vals[LK_SHARE_WINDOW], "share_window_ms", 1000, LIFT_MS_MAX,
		&lp->share_window_ms);
	get_u32(ld, vals[LK_MAX_SHARE], "max_share_permille", 1, 1000, &lp->max_share_permille);
	get_u32(ld, vals[LK_SUSPEND], "suspend_ms", 0, LIFT_MS_MAX, &lp->suspend_ms);
	get_u32(ld, vals[LK_MAX_FLOWS], "max_flows", 1, LIFT_ENTRIES_MAX, &lp->max_flows);
	get_u32(ld, vals[LK_MAX_SAS], "max_sas", 0, LIFT_ENTRIES_MAX, &lp->max_sas);
	/* For Linux senders, whose timer runs under a zero window (docs/lift.md). */
	if (vals[LK_THAW] != NULL)
		get_bool(ld, vals[LK_THAW], "thaw", &lp->thaw);
	if (vals[LK_SPARE] != NULL)
		get_bool(ld, vals[LK_SPARE], "spare_frack", &lp->spare_frack);
	/* The freeze bound is checked before the thaw: at or below the timer it
	 * would end every freeze first (and suspend the flow). */
	if (lp->thaw && lp->max_frozen_ms <= lp->timer_ms)
		ERR(ld, vals[LK_THAW], "'thaw' needs 'max_frozen_ms' (%" PRIu32 "%s) above "
		    "'timer_ms' (%" PRIu32 "%s): the freeze bound would end every freeze "
		    "before the thaw", lp->max_frozen_ms, vals[LK_MAX_FROZEN] ? "" : ", the default",
		    lp->timer_ms, vals[LK_TIMER_MS] ? "" : ", the default");

	if (!enabled)
		return;
	/* Section III: LIFT only from the satellite side over an authenticated session. */
	if (!p->satlink.enabled || p->satlink.keys[0] == '\0') {
		const struct ynode *at = vals[LK_ENABLED] != NULL ? vals[LK_ENABLED] : key;

		ERR(ld, at, "'lift' needs satlink with AES-GCM (a 'satlink' section with "
		    "'keys'): LIFT packets are acted on only when an authenticated satlink "
		    "session delivered them%s", p->satlink.enabled ? " (satlink has no 'keys')" :
		    " (no 'satlink' section)");
		return;
	}
	lp->enabled = true;
}
