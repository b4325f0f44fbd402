/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The control thread (see control.h). Parsing and validation run here, off
 * the fast path; a valid policy becomes a new snapshot, swapped in under RCU;
 * an invalid one is rejected and the running policy stays.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_lcore.h>

#include "control.h"

static int
u32_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* The first satlink key that differs, or NULL: the whole section is restart-only. */
static const char *
satlink_diff(const struct sgw_satlink_conf *a, const struct sgw_satlink_conf *b)
{
	if (a->port != b->port)
		return "port";
	if (a->terminal_id != b->terminal_id)
		return "terminal";
	if (memcmp(a->peer_mac, b->peer_mac, sizeof(a->peer_mac)) != 0)
		return "peer_mac";
	if (a->forward_rate_bps != b->forward_rate_bps)
		return "forward_rate_bps";
	if (a->return_rate_bps != b->return_rate_bps)
		return "return_rate_bps";
	if (a->rtt_ms != b->rtt_ms)
		return "rtt_ms";
	if (a->frame_size != b->frame_size)
		return "frame_size";
	if (a->retx_copies != b->retx_copies)
		return "retx_copies";
	if (a->retx_copies_idle != b->retx_copies_idle)
		return "retx_copies_when";
	if (a->frame_size_adapt != b->frame_size_adapt)
		return "frame_size_adapt";
	if (a->frame_size_min != b->frame_size_min)
		return "frame_size_min";
	if (a->retx_spacing_us != b->retx_spacing_us)
		return "retx_spacing_us";
	if (a->status_interval_ms != b->status_interval_ms)
		return "status_interval_ms";
	if (a->keepalive_ms != b->keepalive_ms)
		return "keepalive_ms";
	if (a->link_down_ms != b->link_down_ms)
		return "link_down_ms";
	if (a->rto_max_ms != b->rto_max_ms)
		return "rto_max_ms";
	if (a->send_queue != b->send_queue)
		return "send_queue";
	if (a->window_max != b->window_max)
		return "window_max";
	if (a->default_service != b->default_service)
		return "default_service";
	if (strcmp(a->keys, b->keys) != 0)
		return "keys";
	return NULL;
}

/*
 * The first key of two enabled lift sections that differs, or NULL: each worker's machine
 * (tables, timer, bounds) is built from the section at startup.
 */
static const char *
lift_diff(const struct sgw_lift_policy *a, const struct sgw_lift_policy *b)
{
	if (a->timer_mode != b->timer_mode)
		return "timer";
	if (a->timer_ms != b->timer_ms)
		return "timer_ms";
	if (a->timer_min_ms != b->timer_min_ms)
		return "timer_min_ms";
	if (a->max_frozen_ms != b->max_frozen_ms)
		return "max_frozen_ms";
	if (a->share_window_ms != b->share_window_ms)
		return "share_window_ms";
	if (a->max_share_permille != b->max_share_permille)
		return "max_share_permille";
	if (a->suspend_ms != b->suspend_ms)
		return "suspend_ms";
	if (a->max_flows != b->max_flows)
		return "max_flows";
	if (a->max_sas != b->max_sas)
		return "max_sas";
	if (a->thaw != b->thaw)
		return "thaw";
	if (a->spare_frack != b->spare_frack)
		return "spare_frack";
	return NULL;
}

/*
 * The first key of two split sections that differs, or NULL: each worker's
 * pool of halves and its relay memory are sized from the section at
 * startup, and the halves' flow-control scheme is fixed then.
 */
static const char *
split_diff(const struct sgw_split_policy *a, const struct sgw_split_policy *b)
{
	if (a->rwnd != b->rwnd)
		return "rwnd";
	if (a->relay_connection_bytes != b->relay_connection_bytes)
		return "relay_connection_bytes";
	if (a->relay_terminal_bytes != b->relay_terminal_bytes)
		return "relay_terminal_bytes";
	if (a->relay_worker_bytes != b->relay_worker_bytes)
		return "relay_worker_bytes";
	if (a->max_connections_worker != b->max_connections_worker)
		return "max_connections_per_worker";
	if (a->max_connections_terminal != b->max_connections_terminal)
		return "max_connections_per_terminal";
	if (a->idle_timeout_ms != b->idle_timeout_ms)
		return "idle_timeout_ms";
	if (a->threshold_bytes != b->threshold_bytes)
		return "threshold_bytes";
	if (a->open_credit != b->open_credit)
		return "open_credit";
	if (a->ackres_rto_min_ms != b->ackres_rto_min_ms)
		return "ackres_rto_min_ms";
	if (a->leg_retries != b->leg_retries)
		return "leg_retries";
	return NULL;
}

static bool
has_split_rule(const struct sgw_policy *p)
{
	uint32_t i;

	for (i = 0; i < p->n_rules; i++)
		if (p->rules[i].action == SGW_ACT_SPLIT)
			return true;
	return false;
}

/*
 * With satlink the sessions (one per terminal at a hub) are created at
 * startup: the set of terminal ids, in any order, must stay. 1 when it
 * changed (or cannot be compared for want of memory), else 0.
 */
static int
terminal_ids_differ(const struct sgw_policy *cur, const struct sgw_policy *next)
{
	uint32_t *a, *b, i, n = cur->n_terminals;
	int rc = 1;

	if (cur->n_terminals != next->n_terminals)
		return 1;
	if (n == 0)
		return 0;
	a = malloc(sizeof(*a) * n);
	b = malloc(sizeof(*b) * n);
	if (a != NULL && b != NULL) {
		for (i = 0; i < n; i++) {
			a[i] = cur->terminals[i].id;
			b[i] = next->terminals[i].id;
		}
		qsort(a, n, sizeof(*a), u32_cmp);
		qsort(b, n, sizeof(*b), u32_cmp);
		rc = memcmp(a, b, sizeof(*a) * n) != 0;
	}
	free(a);
	free(b);
	return rc;
}

int
sgw_policy_restart_diff(const struct sgw_policy *cur, const struct sgw_policy *next, char *why,
			size_t len)
{
	const char *key;
	uint16_t p;

	if (cur->role != next->role) {
		snprintf(why, len, "role changed (%s -> %s)", sgw_role_name(cur->role),
			 sgw_role_name(next->role));
		return 1;
	}
	if (cur->n_ports != next->n_ports) {
		snprintf(why, len, "number of ports changed (%u -> %u)", cur->n_ports,
			 next->n_ports);
		return 1;
	}
	for (p = 0; p < cur->n_ports; p++) {
		const struct sgw_port_conf *a = &cur->ports[p], *b = &next->ports[p];

		if (strcmp(a->name, b->name) != 0 || strcmp(a->device, b->device) != 0 ||
		    a->role != b->role || a->rx_desc != b->rx_desc || a->tx_desc != b->tx_desc ||
		    a->mtu != b->mtu || a->promiscuous != b->promiscuous) {
			snprintf(why, len, "port '%s' changed", a->name);
			return 1;
		}
	}
	if (memcmp(&cur->limits, &next->limits, sizeof(cur->limits)) != 0) {
		snprintf(why, len, "limits changed");
		return 1;
	}
	if (memcmp(&cur->emu, &next->emu, sizeof(cur->emu)) != 0) {
		/* The link models hold state (schedule, channel, RNG) the workers own. */
		snprintf(why, len, "link changed");
		return 1;
	}
	if (cur->workers.burst != next->workers.burst ||
	    cur->workers.timer_tick_us != next->workers.timer_tick_us) {
		snprintf(why, len, "workers.burst or workers.timer_tick_us changed");
		return 1;
	}
	/* lift: each worker's machine is built from the section at startup. */
	if (cur->lift.enabled != next->lift.enabled) {
		snprintf(why, len, "lift %s", next->lift.enabled ? "added" : "removed");
		return 1;
	}
	key = cur->lift.enabled ? lift_diff(&cur->lift, &next->lift) : NULL;
	if (key != NULL) {
		snprintf(why, len, "lift.%s changed", key);
		return 1;
	}
	/*
	 * xcp: the stage's row is on or off from startup (a stage that is off is never asked
	 * about a snapshot), and its shaper's port and queue are sized then. Its controller
	 * constants and capacity are reloadable (the stage takes them at an interval's end).
	 */
	if (cur->xcp.enabled != next->xcp.enabled) {
		snprintf(why, len, "xcp %s", next->xcp.enabled ? "added" : "removed");
		return 1;
	}
	if (cur->xcp.enabled && (cur->xcp.port != next->xcp.port ||
				 cur->xcp.shaper_queue != next->xcp.shaper_queue)) {
		snprintf(why, len, "xcp.%s changed",
			 cur->xcp.port != next->xcp.port ? "port" : "shaper_queue");
		return 1;
	}
	/* One controller per session or one for the carrier: the stage's state is sized for one. */
	if (cur->xcp.enabled && cur->satlink.enabled && cur->xcp.scope != next->xcp.scope) {
		snprintf(why, len, "xcp.scope changed");
		return 1;
	}
	/*
	 * split: the stage is on from startup when a rule splits (its pools and
	 * relays are sized then); rules that split may come and go on a reload
	 * only while the stage is on. Removing the last one is a restart too:
	 * the stage would stay on, holding its memory, for no rule.
	 */
	if (has_split_rule(cur) != has_split_rule(next)) {
		snprintf(why, len, "action split %s: the split stage is set up at startup",
			 has_split_rule(next) ? "added" : "removed (the last rule)");
		return 1;
	}
	/* An absent section is its defaults: only the values count. */
	key = split_diff(&cur->split, &next->split);
	if (key != NULL) {
		snprintf(why, len, "split.%s changed", key);
		return 1;
	}
	/* satlink: sessions, windows, pacing and keys are set up at startup. */
	if (cur->satlink.enabled != next->satlink.enabled) {
		snprintf(why, len, "satlink %s", next->satlink.enabled ? "added" : "removed");
		return 1;
	}
	if (!cur->satlink.enabled)
		return 0;
	key = satlink_diff(&cur->satlink, &next->satlink);
	if (key != NULL) {
		snprintf(why, len, "satlink.%s changed", key);
		return 1;
	}
	if (terminal_ids_differ(cur, next)) {
		snprintf(why, len, "terminals (ids) changed with satlink: sessions are created "
			 "at startup");
		return 1;
	}
	return 0;
}

/*
 * A message for the log and telemetry. The config path can be as long as
 * PATH_MAX, longer than any message buffer: a message that does not fit is
 * cut and ends in "...", so the reader knows.
 */
static void __attribute__((format(printf, 3, 4)))
ctl_msg(char *msg, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(msg, len, fmt, ap);
	va_end(ap);
	if (n >= 0 && (size_t)n >= len && len > 4)
		memcpy(msg + len - 4, "...", 4);
}

int
sgw_ctl_reload(struct sgw_ctl *ctl, struct sgw_cfg_errors *errs, char *msg, size_t msglen)
{
	struct sgw_policy pol;
	char why[256];
	int rc = -1;

	memset(errs, 0, sizeof(*errs));
	msg[0] = '\0';
	pthread_mutex_lock(&ctl->lock);
	if (ctl->closing) {
		ctl_msg(msg, msglen, "satgw is shutting down");
		goto out;
	}
	if (sgw_policy_load_file(ctl->config_path, &pol, errs) != 0) {
		ctl_msg(msg, msglen, "%s: %u error(s), running policy kept", ctl->config_path,
			 errs->n + errs->dropped);
		goto out;
	}
	if (sgw_policy_restart_diff(&ctl->dp->snap->pol, &pol, why, sizeof(why)) != 0) {
		ctl_msg(msg, msglen, "%s: %s: restart satgw to apply; running policy kept",
			 ctl->config_path, why);
		sgw_policy_free(&pol);
		goto out;
	}
	if (sgw_dp_publish(ctl->dp, &pol, why, sizeof(why)) != 0) {
		ctl_msg(msg, msglen, "%s: %s; running policy kept", ctl->config_path, why);
		sgw_policy_free(&pol);
		goto out;
	}
	ctl_msg(msg, msglen, "%s: policy generation %" PRIu64 " active", ctl->config_path,
		 ctl->dp->snap->gen);
	rc = 0;
out:
	/* The last error describes the running state only until a reload succeeds. */
	if (rc == 0) {
		ctl->reloads_ok++;
		ctl->last_error[0] = '\0';
		ctl->last_error_unix_s = 0;
	} else {
		ctl->reloads_failed++;
		ctl_msg(ctl->last_error, sizeof(ctl->last_error), "%s", msg);
		ctl->last_error_unix_s = (uint64_t)time(NULL);
	}
	pthread_mutex_unlock(&ctl->lock);
	return rc;
}

double
sgw_ctl_elapsed(const struct sgw_ctl *ctl)
{
	return (double)(rte_rdtsc() - ctl->start_tsc) / (double)ctl->dp->tsc_hz;
}

static void
log_reload(struct sgw_ctl *ctl)
{
	struct sgw_cfg_errors errs;
	char msg[512], line[600];
	uint32_t i;

	if (sgw_ctl_reload(ctl, &errs, msg, sizeof(msg)) == 0) {
		SGW_CLOG(NOTICE, "reload: %s", msg);
		return;
	}
	SGW_CLOG(ERR, "reload rejected: %s", msg);
	for (i = 0; i < errs.n; i++) {
		sgw_cfg_error_format(&errs.e[i], line, sizeof(line));
		SGW_CLOG(ERR, "%s", line);
	}
}

static void
periodic_stats(struct sgw_ctl *ctl, struct sgw_counters *prev, double dt)
{
	struct sgw_counters c;
	uint64_t rx = 0, tx = 0, prx = 0, ptx = 0, drops = 0;
	uint32_t i;

	sgw_counters_sum(ctl->dp, &c);
	for (i = 0; i < SGW_MAX_PORTS; i++) {
		rx += c.rx_pkts[i];
		tx += c.tx_pkts[i];
		prx += prev->rx_pkts[i];
		ptx += prev->tx_pkts[i];
	}
	for (i = 0; i < SGW_DROP_MAX; i++)
		drops += c.drop[i];
	SGW_CLOG(INFO, "rx %.0f pps, tx %.0f pps, flows %u, drops %" PRIu64 ", gen %" PRIu64,
		 (double)(rx - prx) / dt, (double)(tx - ptx) / dt, sgw_flows_active(ctl->dp),
		 drops, c.snapshot_gen);
	*prev = c;
}

static void *
ctl_main(void *arg)
{
	struct sgw_ctl *ctl = arg;
	struct sgw_counters prev;
	double last_stats = 0;

	memset(&prev, 0, sizeof(prev));
	while (!ctl->stop) {
		double t = sgw_ctl_elapsed(ctl);

		if (__atomic_exchange_n(&ctl->reload_req, 0, __ATOMIC_ACQ_REL))
			log_reload(ctl);
		if (ctl->duration_s > 0 && t >= ctl->duration_s) {
			SGW_CLOG(INFO, "run duration %.1f s reached, stopping", ctl->duration_s);
			__atomic_store_n(&ctl->dp->quit, 1, __ATOMIC_RELAXED);
		}
		if (ctl->stats_interval_s > 0 && t - last_stats >= ctl->stats_interval_s) {
			periodic_stats(ctl, &prev, t - last_stats);
			last_stats = t;
		}
		usleep(10000);
	}
	return NULL;
}

int
sgw_ctl_start(struct sgw_ctl *ctl)
{
	int rc;

	ctl->start_tsc = rte_rdtsc();
	rc = rte_ctrl_thread_create(&ctl->thread, "satgw-ctl", NULL, ctl_main, ctl);
	if (rc != 0)
		SGW_CLOG(ERR, "cannot start the control thread: %s", strerror(rc));
	return rc;
}

void
sgw_ctl_join(struct sgw_ctl *ctl)
{
	ctl->stop = 1;
	pthread_join(ctl->thread, NULL);
}

void
sgw_ctl_close(struct sgw_ctl *ctl)
{
	pthread_mutex_lock(&ctl->lock);
	ctl->closing = true;
	pthread_mutex_unlock(&ctl->lock);
}
