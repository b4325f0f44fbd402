/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The BS-LIFT stage (row SGW_STAGE_LIFT of the stage table, stage.h; issue 8,
 * docs/lift.md "The dataplane stage"): LIFT packets from mobile hosts behind
 * the terminals, accepted only when an authenticated (AES-GCM) satlink
 * session delivered them, into lib/sgw_lift.h's machine; its actions carried
 * out on mbufs (hold, forward toward the fixed host with the LIFT header
 * stripped, drop by reason, Setup-/Teardown-ACKs back to the mobile host over
 * satlink's reliable service) and its per-flow timer on the worker's wheel.
 * It also takes the esp class to note ESP toward the mobile hosts (the local
 * acknowledgement) and hands that burst on to the flow stage unchanged.
 * State: dp->sdata[SGW_STAGE_LIFT] (struct sgw_lift_dp) and each worker's
 * sctx[SGW_STAGE_LIFT] (struct sgw_lift_worker). Role hub only.
 */
#ifndef SGW_DP_LIFT_H
#define SGW_DP_LIFT_H

#include <stdint.h>

#include "sgw_dp.h"
#include "sgw_lift.h"
#include "sgw_timer_wheel.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The stage's drop reasons (drops.lift_*, after the core and earlier stages' ones). */
enum sgw_ld_drop {
	SGW_LD_NOT_FROM_SATELLITE = 0, /* LIFT that entered by another port than satlink's */
	SGW_LD_UNAUTHENTICATED,        /* on the satlink port, not from an AES-GCM session */
	SGW_LD_BAD,                    /* refused by the decoder (lib reasons: rx_refused_*) */
	SGW_LD_FRACK_SUPERSEDED,       /* its TCP ACK went on, or a newer pair came */
	SGW_LD_FRACK_STALE,            /* older than the TCP ACK that came after it */
	SGW_LD_FRACK_UNUSED,           /* freezing off (transitory, out of order, suspended) */
	SGW_LD_DUP_SUPERSEDED,         /* a stored duplicate ACK replaced by a newer one */
	SGW_LD_UNKNOWN_FLOW,           /* a FrACK of a flow not in the table */
	SGW_LD_FLOW_GONE,              /* a FrACK held when its flow was removed */
	SGW_LD_UNEXPECTED,             /* an acknowledgement sent to the hub */
	SGW_LD_NO_ROOM,                /* no action or re-inject room (never expected) */
	SGW_LD_CHAINED,                /* multi-segment and could not be linearised */
	SGW_LD_STRIP,                  /* the LIFT header could not be stripped */
	SGW_LD__COUNT
};

/* Stage counters (not drops). */
enum sgw_lc_ctr {
	SGW_LC_RX = 0,          /* LIFT packets the stage took */
	SGW_LC_TO_FH,           /* handed on toward the fixed host, LIFT header stripped */
	SGW_LC_ESP_DOWN,        /* ESP toward a mobile host on an SA the table names */
	SGW_LC_ESP_SEEN,        /* ESP from the terrestrial side looked at */
	SGW_LC_CTRL_ACKS,       /* Setup-/Teardown-ACKs built and sent toward the MH */
	SGW_LC_CTRL_ACK_NO_MBUF, /* ... not built: no mbuf (the agent repeats its request) */
	SGW_LC_TIMER_FAIL,      /* a flow timer the wheel had no room for */
	SGW_LC_TIMER_DEFER,     /* an expiry put off one tick for re-inject room */
	SGW_LC__COUNT
};

/* What the stage makes (originated) and takes in without loss (consumed). */
enum { SGW_LIFT_ORIG_CTRL_ACK = 0, SGW_LIFT_ORIG__COUNT };
enum { SGW_LIFT_CONS_CTRL = 0, SGW_LIFT_CONS__COUNT };

#define SGW_LIFT_ACT_CAP 64u     /* actions per call (>= SGW_LIFT_MIN_ROOM) */

struct sgw_lift_worker {
	struct sgw_lift *l;
	void *mem;
	sgw_tw_handle_t *th;         /* per flow index: its one timer */
	uint32_t *tgen;              /* per flow index: the generation it was armed for */
	uint32_t drop_base;          /* sgw_stage_drop_base(SGW_STAGE_LIFT) */
	uint64_t ctr[SGW_LC__COUNT];
	uint64_t orig[SGW_LIFT_ORIG__COUNT];
	uint64_t cons[SGW_LIFT_CONS__COUNT];
	/* the machine's counters, published for telemetry (seqlock: odd while written) */
	uint64_t pub_ns;
	uint32_t pub_seq;
	struct sgw_lift_stats pub;
	struct sgw_lift_act act[SGW_LIFT_ACT_CAP];
};

struct sgw_lift_dp {
	int16_t sat_pidx;            /* the satlink port: LIFT must arrive there */
	int16_t ack_pidx;            /* where the hub's acknowledgements enter the pipeline */
	uint16_t ack_port_id;
	uint8_t proto;               /* LIFT's IP protocol */
	uint64_t auth_flag;          /* satlink's authenticated-delivery mbuf flag */
	uint64_t self;               /* the stage's own flag on its acknowledgements */
	struct sgw_lift_conf conf;
};

static inline struct sgw_lift_worker *
sgw_lift_worker_of(const struct sgw_worker *w)
{
	return (struct sgw_lift_worker *)w->sctx[SGW_STAGE_LIFT];
}

/* The machine's counters summed over workers (published copies; any thread). */
void sgw_lift_dp_stats(const struct sgw_dp *dp, struct sgw_lift_stats *st);
/* A stage counter summed over workers. */
uint64_t sgw_lift_dp_ctr(const struct sgw_dp *dp, enum sgw_lc_ctr c);
/* One of the stage's drop reasons summed over workers. */
uint64_t sgw_lift_drop_total(const struct sgw_dp *dp, enum sgw_ld_drop why);

#ifdef __cplusplus
}
#endif

#endif /* SGW_DP_LIFT_H */
