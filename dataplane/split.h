/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The TCP split stage (row SGW_STAGE_SPLIT of the stage table, stage.h):
 * split halves (lib/sgw_split.h) in the dataplane. At a terminal a client's
 * SYN of a flow whose rule is `split` opens a half (the opener) on the
 * worker that owns the terminal's satlink session; its stream messages ride
 * that session on a channel of their own (reliable service). At the hub an
 * OPEN delivered on a channel opens the acceptor half, which connects to the
 * server with the client's address and port (transparent), and takes the
 * server's segments from the flow stage. IPv4 and IPv6 (without extension
 * headers). docs/tcp-split.md, "The dataplane
 * stage" says what is built and what is not.
 */
#ifndef SGW_DP_SPLIT_H
#define SGW_DP_SPLIT_H

#include <stdint.h>

#include <rte_mbuf.h>

#include "sgw_dp.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Why a connection a split rule selects is forwarded untouched (counted once per flow). */
enum sgw_spd_bypass {
	SGW_SPD_BYP_NOT_SYN = 0,        /* first packet seen is not a SYN (mid-stream flow) */
	SGW_SPD_BYP_IPV6_EXT,           /* an IPv6 SYN with extension headers (the legs
					 * send bare IPv6 + TCP) */
	SGW_SPD_BYP_FRAGMENT,           /* an IP fragment */
	SGW_SPD_BYP_NO_SESSION,         /* the terminal has no satlink session */
	SGW_SPD_BYP_NOT_OWNER,          /* its session lives on another worker */
	SGW_SPD_BYP_NO_ROOM,            /* the session's queue has no room for OPEN */
	SGW_SPD_BYP_POOL_FULL,          /* max_connections_per_worker / relay_worker_bytes */
	SGW_SPD_BYP_TERMINAL_CAP,       /* max_connections_per_terminal */
	SGW_SPD_BYP_TERMINAL_RELAY,     /* relay_terminal_bytes */
	SGW_SPD_BYP_FROM_SAT,           /* a SYN from the satellite: the far box forwarded it */
	SGW_SPD_BYP_OPEN_FAILED,        /* sgw_split_open refused it (bad options) */
	SGW_SPD_BYP__COUNT
};

/* Stage counters (per worker). */
enum sgw_spd_ctr {
	SGW_SPD_OPENED = 0,             /* opener halves created */
	SGW_SPD_ACCEPTED,               /* acceptor halves created */
	SGW_SPD_CLOSED,                 /* halves freed */
	SGW_SPD_REFUSED,                /* OPENs refused here (no resources) */
	SGW_SPD_LATE_MSG,               /* a message for no half that is not OPEN */
	SGW_SPD_NO_MBUF,                /* a segment or message not built: no mbuf (retried
					 * by the TCP leg / the stream) */
	SGW_SPD_TIMER_FULL,             /* a half's timer could not be armed: aborted */
	SGW_SPD_RELAY_MAX,              /* gauge: relay bytes in use, high-water (a worker) */
	SGW_SPD_ABORTED_RESTART,        /* halves given up: their satlink peer restarted */
	SGW_SPD_TW_REUSED,              /* an OPEN took over a tuple whose acceptor half
					 * was in TIME-WAIT (the old half freed) */
	SGW_SPD_RESTART_PROBES,         /* SYNs sent toward the far peer of a half given up
					 * for a restart (split_sess_restart) */
	SGW_SPD_RESET_AT_STOP,          /* halves reset both ways at a graceful stop
					 * (SIGINT/SIGTERM: split_stop) */
	SGW_SPD_TW_RELEASED,            /* halves whose relays' budget went back when their
					 * leg entered TIME-WAIT after a clean end */
	SGW_SPD_TW_RECYCLED,            /* halves in TIME-WAIT freed early for a new
					 * connection: the pool was full (oldest first) */
	SGW_SPD__COUNT
};

/*
 * From the flow stage (stage_flow.c): a TCP packet of flow fp whose rule is
 * `split` or whose state the split owns. 1: the split took m; 0: the flow
 * stage forwards it as usual (not split, counted once per flow by reason).
 */
int sgw_split_flow_input(struct sgw_worker *w, const struct sgw_snapshot *s, struct rte_mbuf *m,
			 const struct sgw_pkt_meta *pm, int32_t fp, int32_t rule);

/* Does flow fp belong to a live split half (its idle expiry must not remove it)? */
int sgw_split_flow_alive(const struct sgw_worker *w, uint32_t fp);

/* Counters, all workers (tests, reports). */
uint64_t sgw_split_dp_ctr(const struct sgw_dp *dp, enum sgw_spd_ctr c);
uint64_t sgw_split_dp_bypass(const struct sgw_dp *dp, enum sgw_spd_bypass b);
/* The lib's counters (enum sgw_split_ctr), all workers. */
uint64_t sgw_split_dp_lib_ctr(const struct sgw_dp *dp, int c);
/* Halves alive now, all workers. */
uint64_t sgw_split_dp_open(const struct sgw_dp *dp);
/* A counter of the exit report's split.counters (and /satgw/split) by name: 0, or -1 none. */
int sgw_split_dp_field(const struct sgw_dp *dp, const char *name, uint64_t *v);
/* Worker 0's pool size (halves); its state and relay allocations in bytes (may be NULL). */
uint64_t sgw_split_dp_cap(const struct sgw_dp *dp, uint64_t *state_bytes,
			  uint64_t *relay_bytes);

#ifdef __cplusplus
}
#endif

#endif /* SGW_DP_SPLIT_H */
