/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The control thread: policy hot reload (SIGHUP or the /satgw/reload
 * telemetry command), run duration, periodic stats, and the DPDK telemetry
 * commands. It reaches the workers only by publishing snapshots under RCU.
 */
#ifndef SGW_CONTROL_H
#define SGW_CONTROL_H

#include <limits.h>
#include <pthread.h>
#include <stdint.h>

#include "policy_yaml.h"
#include "sgw_dp.h"

#ifdef __cplusplus
extern "C" {
#endif

struct sgw_ctl {
	struct sgw_dp *dp;
	char config_path[PATH_MAX];
	pthread_mutex_t lock;       /* serialises reloads, snapshot frees and telemetry reads */
	pthread_t thread;
	volatile int stop;
	volatile int reload_req;    /* set from the SIGHUP handler */
	bool closing;               /* under lock: shutdown began, no reload or telemetry read */
	double duration_s;          /* 0 = run until a signal */
	double stats_interval_s;    /* 0 = no periodic line */
	uint64_t start_tsc;
	uint64_t reloads_ok;
	uint64_t reloads_failed;
	char last_error[512];       /* the last refused reload's message; "" once one succeeds */
	uint64_t last_error_unix_s; /* when it was refused (0: none since the last success) */
};

/* Apply the policy file again. Returns 0, or -1 with errs/msg filled. */
int sgw_ctl_reload(struct sgw_ctl *ctl, struct sgw_cfg_errors *errs, char *msg, size_t msglen);
/* Keys that cannot change while running: a message naming the first that did. */
int sgw_policy_restart_diff(const struct sgw_policy *cur, const struct sgw_policy *next,
			    char *why, size_t len);
int sgw_ctl_start(struct sgw_ctl *ctl);
void sgw_ctl_join(struct sgw_ctl *ctl);
/* Shutdown begins: from now on reloads and telemetry reads are refused. */
void sgw_ctl_close(struct sgw_ctl *ctl);
double sgw_ctl_elapsed(const struct sgw_ctl *ctl);

int sgw_telemetry_register(struct sgw_ctl *ctl);

#ifdef __cplusplus
}
#endif

#endif /* SGW_CONTROL_H */
