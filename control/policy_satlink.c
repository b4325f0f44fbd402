/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The policy's satlink section (roles hub and terminal): it fills
 * sgw_policy.satlink. Its key file, when named, is loaded once to check that
 * every session has a key, then freed (the dataplane loads it again at
 * startup).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy_load.h"
#include "sgw_slcrypto.h"

/* ------------------------------------------- satlink (roles hub, terminal) */

enum {
	SLK_PORT, SLK_TERMINAL, SLK_PEER_MAC, SLK_FWD_RATE, SLK_RET_RATE, SLK_RTT,
	SLK_FRAME, SLK_COPIES, SLK_SPACING, SLK_STATUS, SLK_KEEPALIVE, SLK_LINK_DOWN,
	SLK_SENDQ, SLK_WINDOW, SLK_SERVICE, SLK_KEYS, SLK_COPIES_WHEN, SLK_ADAPT, SLK_FRAME_MIN,
	SLK_RTO_MAX,
};
static const struct keyspec satlink_keys[] = {
	[SLK_PORT] = { "port", true },
	[SLK_TERMINAL] = { "terminal", false },   /* required for role terminal only */
	[SLK_PEER_MAC] = { "peer_mac", false },
	[SLK_FWD_RATE] = { "forward_rate_bps", true },
	[SLK_RET_RATE] = { "return_rate_bps", true },
	[SLK_RTT] = { "rtt_ms", false },
	[SLK_FRAME] = { "frame_size", false },
	[SLK_COPIES] = { "retx_copies", false },
	[SLK_SPACING] = { "retx_spacing_us", false },
	[SLK_STATUS] = { "status_interval_ms", false },
	[SLK_KEEPALIVE] = { "keepalive_ms", false },
	[SLK_LINK_DOWN] = { "link_down_ms", false },
	[SLK_SENDQ] = { "send_queue", false },
	[SLK_WINDOW] = { "window_max", false },
	[SLK_SERVICE] = { "default_service", false },
	[SLK_KEYS] = { "keys", false },
	[SLK_COPIES_WHEN] = { "retx_copies_when", false },
	[SLK_ADAPT] = { "frame_size_adapt", false },
	[SLK_FRAME_MIN] = { "frame_size_min", false },
	[SLK_RTO_MAX] = { "rto_max_ms", false },
};

/*
 * Met at the top level, these keys get "belongs under 'satlink:'"; not 'port'
 * nor 'terminal': at the top those are more likely 'ports', 'terminals'.
 */
const struct keyset satlink_keyset = {
	&satlink_keys[SLK_PEER_MAC], NKEYS(satlink_keys) - SLK_PEER_MAC
};

/* Rule and satlink section service names: enum sgw_sl_service minus 1 (no "default"). */
const char *const sl_service_names[] = { "reliable", "datagram", "bypass" };
/* retx_copies_when: the extra copies of a repair on an idle line only, or always */
static const char *const sl_copies_when_names[] = { "idle", "always" };

#define SL_RATE_MIN 1000ull
#define SL_RATE_MAX 400000000000ull
#define SL_KEYS_ERRBUF 16384

/*
 * keys: a path, relative ones from the policy file's directory (the name the
 * loader was given; none when it has no '/'). False (reported) when it is
 * empty or too long once resolved.
 */
static bool
satlink_keys_path(struct ld *ld, const struct ynode *v, char *out, size_t len)
{
	const char *slash = strrchr(ld->file, '/');
	char sb[SHOW_MAX + 8];
	size_t dir;
	uint32_t i;

	if (!want_scalar(ld, v, "keys", "a file path"))
		return false;
	dir = v->u.s[0] != '/' && slash != NULL ? (size_t)(slash - ld->file) + 1 : 0;
	for (i = 0; i < v->n; i++)
		if ((unsigned char)v->u.s[i] < 0x20 || v->u.s[i] == 0x7f)
			break;
	if (v->n == 0 || i < v->n) {
		ERR(ld, v, "'keys' must be a file path without control characters (got %s)",
		    show(v, sb, sizeof(sb)));
		return false;
	}
	if (dir + v->n >= len) {
		ERR(ld, v, "'keys' path %s is too long: %zu bytes once resolved (at most %zu)",
		    show(v, sb, sizeof(sb)), dir + v->n, len - 1);
		return false;
	}
	memcpy(out, ld->file, dir);
	memcpy(out + dir, v->u.s, v->n + 1);
	return true;
}

/*
 * Load the key file (errors reported at v, one per line the key loader
 * gives), check that every session has a key, and free it again. all: every
 * terminal has a session (hub); else term, when >= 0, is the only one.
 */
static void
satlink_check_keys(struct ld *ld, const struct ynode *v, const char *path, bool all,
		   int64_t term)
{
	const struct sgw_policy *p = ld->p;
	struct sgw_slcrypto_keys *keys = NULL;
	char *eb = malloc(SL_KEYS_ERRBUF);
	uint32_t i;

	if (eb == NULL) {
		oom(ld);
		return;
	}
	if (sgw_slcrypto_keys_load(path, &keys, eb, SL_KEYS_ERRBUF) != 0) {
		char *line = eb, *end;
		bool any = false;

		while (*line != '\0') {
			end = line + strcspn(line, "\n");
			if (end > line) {
				ERR(ld, v, "satlink keys: %.*s", (int)(end - line), line);
				any = true;
			}
			line = *end != '\0' ? end + 1 : end;
		}
		if (!any)
			ERR(ld, v, "satlink keys: %s: cannot load", path);
		free(eb);
		return;
	}
	free(eb);
	if (all) {
		for (i = 0; i < p->n_terminals; i++) {
			if (sgw_slcrypto_keys_find(keys, p->terminals[i].id) != NULL)
				continue;
			ERR(ld, v, "satlink keys: %s has no key for terminal '%s' (id %" PRIu32
			    ")", path, p->terminals[i].name, p->terminals[i].id);
			break;
		}
	} else if (term >= 0 && sgw_slcrypto_keys_find(keys, p->terminals[term].id) == NULL) {
		ERR(ld, v, "satlink keys: %s has no key for terminal '%s' (id %" PRIu32 ")",
		    path, p->terminals[term].name, p->terminals[term].id);
	}
	sgw_slcrypto_keys_free(keys);
}

/* satlink: optional for roles hub and terminal, refused for emulator. */
void
load_satlink(struct ld *ld, const struct ynode *key, const struct ynode *v)
{
	const struct ynode *vals[NKEYS(satlink_keys)], *keys[NKEYS(satlink_keys)];
	struct sgw_policy *p = ld->p;
	struct sgw_satlink_conf *sl = &p->satlink;
	char path[SGW_SL_KEYS_PATH_MAX];
	bool keepalive_ok = true, path_ok = false;
	int64_t term = -1, idx;
	uint8_t mac[6];
	unsigned int en;
	bool role_known = ld->role_known;
	uint32_t x, i;

	if (v == NULL || is_null(v))
		return;
	if (role_known && p->role == SGW_ROLE_EMULATOR) {
		ERR(ld, key, "'satlink' is only used by roles hub and terminal (this policy's "
		    "role is %s)", sgw_role_name(p->role));
		return;
	}
	v = get_map(ld, v, "satlink");
	if (v == NULL)
		return;
	sl->enabled = true;
	map_fields(ld, v, "satlink", satlink_keys, NKEYS(satlink_keys), vals, keys, false);
	check_required(ld, v, "satlink", NULL, satlink_keys, NKEYS(satlink_keys), vals);

	if (vals[SLK_PORT]) {
		idx = resolve(ld, &ld->ports, vals[SLK_PORT], "port", "port");
		if (idx >= 0 && idx < SGW_MAX_PORTS) {
			if (p->ports[idx].role != SGW_PORT_SATELLITE)
				ERR(ld, vals[SLK_PORT], "satlink port '%s' has role %s: satlink "
				    "runs on a port whose role is satellite", p->ports[idx].name,
				    sgw_port_role_name(p->ports[idx].role));
			else
				sl->port = (int16_t)idx;
		}
	}

	/* terminal: which terminal this box is; a hub has a session per terminal. */
	if (role_known && p->role == SGW_ROLE_HUB && keys[SLK_TERMINAL] != NULL)
		ERR(ld, keys[SLK_TERMINAL], "'terminal' is only used by role terminal (this "
		    "policy's role is hub: it has a session per terminal)");
	else if (role_known && p->role == SGW_ROLE_TERMINAL && vals[SLK_TERMINAL] == NULL)
		ERR(ld, v, "missing required key 'terminal' in satlink (role terminal)");
	else if (vals[SLK_TERMINAL] &&
		 get_u32(ld, vals[SLK_TERMINAL], "terminal", 0, UINT32_MAX, &x)) {
		sl->terminal_id = x;
		if (ld->terms.usable) {
			for (i = 0; i < p->n_terminals; i++)
				if (p->terminals[i].id == x)
					break;
			if (i < p->n_terminals)
				term = i;
			else
				ERR(ld, vals[SLK_TERMINAL], "satlink terminal %" PRIu32 " is not "
				    "the id of any terminal in 'terminals'", x);
		}
	}
	if (role_known && p->role == SGW_ROLE_HUB && ld->terms.usable && p->n_terminals == 0)
		ERR(ld, key, "satlink on a hub needs at least one terminal in 'terminals' "
		    "(one session per terminal)");

	if (vals[SLK_PEER_MAC] && get_mac(ld, vals[SLK_PEER_MAC], "peer_mac", false, mac))
		memcpy(sl->peer_mac, mac, sizeof(mac));
	if (vals[SLK_FWD_RATE])
		get_uint(ld, vals[SLK_FWD_RATE], "forward_rate_bps", SL_RATE_MIN, SL_RATE_MAX,
			 &sl->forward_rate_bps);
	if (vals[SLK_RET_RATE])
		get_uint(ld, vals[SLK_RET_RATE], "return_rate_bps", SL_RATE_MIN, SL_RATE_MAX,
			 &sl->return_rate_bps);
	get_u32(ld, vals[SLK_RTT], "rtt_ms", 1, 10000, &sl->rtt_ms);
	if (get_u32(ld, vals[SLK_FRAME], "frame_size", 64, 1960, &x))
		sl->frame_size = (uint16_t)x;
	/* A frame (payload + 22 header + 28 crypto) must fit the port's MTU (DPDK's 1500
	 * when the policy leaves it): the dataplane would refuse to start otherwise. */
	if (sl->port >= 0) {
		uint32_t mtu = p->ports[sl->port].mtu != 0 ? p->ports[sl->port].mtu : 1500;

		if (sl->frame_size + 50u > mtu)
			ERR(ld, vals[SLK_FRAME] ? vals[SLK_FRAME] : vals[SLK_PORT],
			    "satlink frame_size %u + 50 bytes of satlink headers exceeds port "
			    "'%s' mtu %" PRIu32 "%s: at most %" PRIu32, sl->frame_size,
			    p->ports[sl->port].name, mtu,
			    p->ports[sl->port].mtu != 0 ? "" : " (not set: 1500)", mtu - 50);
	}
	if (vals[SLK_ADAPT])
		get_bool(ld, vals[SLK_ADAPT], "frame_size_adapt", &sl->frame_size_adapt);
	/* frame_size_min defaults to 256, or to frame_size when that is smaller */
	if (sl->frame_size_min > sl->frame_size)
		sl->frame_size_min = sl->frame_size;
	if (vals[SLK_FRAME_MIN] && get_u32(ld, vals[SLK_FRAME_MIN], "frame_size_min", 64, 1960, &x)) {
		if (x > sl->frame_size)
			ERR(ld, vals[SLK_FRAME_MIN], "'frame_size_min' %" PRIu32 " must be at most "
			    "'frame_size' (%u%s)", x, sl->frame_size,
			    vals[SLK_FRAME] ? "" : ", the default");
		else
			sl->frame_size_min = (uint16_t)x;
	}
	if (get_u32(ld, vals[SLK_COPIES], "retx_copies", 1, 8, &x))
		sl->retx_copies = (uint8_t)x;
	if (vals[SLK_COPIES_WHEN] && get_enum(ld, vals[SLK_COPIES_WHEN], "retx_copies_when",
					      sl_copies_when_names, 2, &en))
		sl->retx_copies_idle = en == 0;
	get_u32(ld, vals[SLK_SPACING], "retx_spacing_us", 0, 1000000, &sl->retx_spacing_us);
	get_u32(ld, vals[SLK_STATUS], "status_interval_ms", 1, 1000, &sl->status_interval_ms);
	if (vals[SLK_KEEPALIVE])
		keepalive_ok = get_u32(ld, vals[SLK_KEEPALIVE], "keepalive_ms", 10, 60000,
				       &sl->keepalive_ms);
	if (vals[SLK_LINK_DOWN]) {
		if (get_u32(ld, vals[SLK_LINK_DOWN], "link_down_ms", 20, 600000, &x) &&
		    keepalive_ok) {
			if (x <= sl->keepalive_ms)
				ERR(ld, vals[SLK_LINK_DOWN], "'link_down_ms' %" PRIu32 " must be "
				    "more than 'keepalive_ms' (%" PRIu32 "%s)", x,
				    sl->keepalive_ms, vals[SLK_KEEPALIVE] ? "" : ", the default");
			else
				sl->link_down_ms = x;
		}
	} else if (vals[SLK_KEEPALIVE] && keepalive_ok && sl->keepalive_ms >= sl->link_down_ms) {
		/* keepalive moved past the default link_down_ms without it moving too. */
		ERR(ld, vals[SLK_KEEPALIVE], "'keepalive_ms' %" PRIu32 " must be less than "
		    "'link_down_ms' (default %" PRIu32 "): set 'link_down_ms' too",
		    sl->keepalive_ms, sl->link_down_ms);
	}
	/*
	 * rto_max_ms: the ceiling of the ARQ timer's backoff (never of the RTO the
	 * line's RTT gives). After an outage that nothing new follows (a TCP
	 * sender waiting, or frozen by LIFT) the timer is what starts the repair,
	 * so it comes at most max(this, that RTO) after the outage.
	 */
	get_u32(ld, vals[SLK_RTO_MAX], "rto_max_ms", 200, 60000, &sl->rto_max_ms);
	get_u32(ld, vals[SLK_SENDQ], "send_queue", 1, 65536, &sl->send_queue);
	get_u32(ld, vals[SLK_WINDOW], "window_max", 64, 8192, &sl->window_max);
	if (vals[SLK_SERVICE] && get_enum(ld, vals[SLK_SERVICE], "default_service",
					  sl_service_names, N_SL_SERVICES, &en))
		sl->default_service = (enum sgw_sl_service)(en + SGW_SL_SVC_RELIABLE);

	if (vals[SLK_KEYS] && satlink_keys_path(ld, vals[SLK_KEYS], path, sizeof(path))) {
		memcpy(sl->keys, path, strlen(path) + 1);
		path_ok = true;
	}
	/* Sessions: every terminal at a hub, this terminal at a terminal. */
	if (path_ok)
		satlink_check_keys(ld, vals[SLK_KEYS], path, role_known &&
				   p->role == SGW_ROLE_HUB && ld->terms.usable, term);
}
