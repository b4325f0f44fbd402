/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The XCP gateway stage (row SGW_STAGE_XCP of the stage table, stage.h):
 * the router controller of lib/sgw_xcp.h at this end's egress toward the
 * satellite, which is satlink's queue (the feed queues and pacers of the
 * sessions), or without satlink the stage's own egress shaper (one worker).
 * With satlink, xcp.scope says which queue one controller watches:
 * - session (default): one controller per satlink session (its feed queue
 *   and pacer, paced at its share of the carrier), run by the session's
 *   owner alone: its accumulator, parameters and interval are the owner's,
 *   nothing is shared between workers (struct sgw_xs_sess).
 * - carrier: one controller for the satlink port, carried by every worker:
 *   each worker adds the packets it sends toward the link to its own
 *   accumulator and lowers H_feedback from its own copy of the parameters;
 *   worker 0 aggregates once per control interval and publishes the
 *   parameters through each worker's seqlock.
 * docs/xcp.md, "The dataplane stage". Its state: dp->sdata[SGW_STAGE_XCP]
 * (struct sgw_xs) and each worker's sctx[SGW_STAGE_XCP] (struct
 * sgw_xs_worker). The header is for the stage and its tests.
 */
#ifndef SGW_DP_XCP_H
#define SGW_DP_XCP_H

#include <stdbool.h>
#include <stdint.h>

#include "sgw_arq.h"
#include "sgw_dp.h"
#include "sgw_ring.h"
#include "sgw_xcp.h"
#include "sgw_xcp_legacy.h"
#include "sgw_xcp_wq.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How often each worker samples the queue of its sessions, and worker 0 the link's. */
#define SGW_XS_QSAMPLE_NS 1000000ull

/* Per-worker packet counters of the stage (one writer: the worker). */
enum sgw_xs_ctr {
	SGW_XS_XCP_SEEN = 0,    /* packets of class xcp the stage took (any destination) */
	SGW_XS_XCP_LINK,        /* XCP packets toward the link (controller input) */
	SGW_XS_OTHER_LINK,      /* packets without XCP header toward the link (load only) */
	SGW_XS_LOWERED,         /* headers whose H_feedback the stage lowered */
	SGW_XS_BAD,             /* XCP packets toward the link with a refused header */
	SGW_XS_CHAINED,         /* XCP header not in the first segment: counted as load */
	SGW_XS_SHAPED,          /* packets the egress shaper sent (without satlink) */
	/* legacy mode (xcp.legacy; docs/xcp.md, "Legacy mode in the stage") */
	SGW_XS_LEG_DATA,        /* plain TCP to the link given feedback as a legacy flow */
	SGW_XS_LEG_LOAD,        /* plain TCP to the link left as load (no slot, malformed) */
	SGW_XS_LEG_ACKS,        /* TCP from the link side given to the window clamp */
	SGW_XS_LEG_CLAMPED,     /* of those, windows lowered (TCP checksum updated) */
	SGW_XS_LEG_CHAINED,     /* TCP not whole in its first segment: not looked at */
	SGW_XS_LEG_PURE_ACK,    /* pure ACKs to the link (no data, SYN, FIN, RST): load only */
	/* separate queues (xcp.separate_queues, the shaper): per class */
	SGW_XS_QX_IN,           /* packets that joined the XCP class's queue */
	SGW_XS_QO_IN,           /* packets that joined the other class's queue */
	SGW_XS_QX_SENT,         /* packets the XCP class sent */
	SGW_XS_QO_SENT,         /* packets the other class sent */
	SGW_XS_QX_SENT_BYTES,   /* IP bytes the XCP class sent */
	SGW_XS_QO_SENT_BYTES,   /* IP bytes the other class sent */
	SGW_XS_QX_DROP,         /* dropped at the XCP class's full queue */
	SGW_XS_QO_DROP,         /* dropped at the other class's full queue */
	/* scope session */
	SGW_XS_NO_SESSION,      /* to the link without a session of this worker's: no controller */
	SGW_XS__COUNT
};

/* What worker 0 publishes after each control interval (seqlock, dataplane/seqlock.h). */
struct sgw_xs_tpub {
	uint64_t epoch;               /* control intervals completed */
	uint64_t d_ns;                /* the current control interval */
	uint64_t t_start_ns;          /* when the current interval started (worker 0's clock) */
	double capacity_Bps;          /* the capacity now */
	uint64_t queue_bytes;         /* the link's queue at the last sample */
	uint64_t queue_persistent;    /* the persistent queue (minimum over the window) */
	struct sgw_xcp_telem last;    /* the interval that ended last */
	double xi_p, xi_n;            /* the parameters published last */
	/* separate queues: the share's interval that ended last (weight, flows, capacity) */
	struct sgw_xcpq_telem wq;
};

/*
 * xcp.scope session: one satlink session's controller. Written by the
 * session's owner only (its accumulator with relaxed stores, its telemetry
 * under its seqlock); read by any thread through those two.
 */
struct sgw_xs_sess {
	struct sgw_xcp_acc acc;       /* the packets that joined this session's queue */
	struct sgw_xcp_params par;    /* the parameters (the owner's: no publication) */
	struct sgw_xcp_conf conf;     /* the constants of the running interval */
	struct sgw_xcp_qest qest;
	struct sgw_xcp_sums snap;
	struct sgw_xcp_ctl ctl;
	/* the IP share of its line: what it carried until the last interval's end */
	struct sgw_arq_tx_totals tx;
	double eff;
	uint32_t tseq;
	struct sgw_xs_tpub tpub;
} __attribute__((aligned(64)));

/* dp->sdata[SGW_STAGE_XCP] while the stage is on. */
struct sgw_xs {
	uint8_t proto;                /* the XCP protocol number */
	int16_t pidx;                 /* the satlink port: the link */
	uint32_t n_workers;
	uint32_t n_sess;              /* satlink's sessions (the default capacity) */
	bool per_sess;                /* xcp.scope session (with satlink): ss[n_sess] */
	struct sgw_xs_sess *ss;
	/*
	 * Without satlink: the egress shaper (one worker, worker 0) owns the
	 * link's queue, a FIFO of packets sent at the capacity.
	 */
	bool shaper;
	struct sgw_ring fr;           /* which slots of fq are held */
	struct rte_mbuf **fq;
	uint32_t *fsz;                /* each held packet's size as the link counts it */
	uint64_t fbytes;              /* bytes held */
	uint64_t next_ns;             /* when the next packet may leave */
	uint32_t frame_ovh;           /* satlink's bytes per frame besides its payload (capacity) */
	uint16_t frame_size;          /* satlink.frame_size: the capacity until a session reports */
	/*
	 * xcp.separate_queues (the shaper only): fr/fq/fsz/fbytes are the XCP
	 * class's queue (what the controller watches), fro/foq/fosz/fobytes the
	 * other class's; wq shares the link between them (lib/sgw_xcp_wq.h).
	 */
	bool twoq;
	struct sgw_ring fro;
	struct rte_mbuf **foq;
	uint32_t *fosz;
	uint64_t fobytes;
	struct sgw_xcpq wq;
	struct sgw_xcpq_conf wqc;
	double cap_x;                 /* the XCP class's capacity from the last interval */
	/* Legacy mode: fixed at startup (a reload that changes it is refused). */
	bool legacy;
	uint32_t legacy_max_flows;    /* per worker, as the policy gave it */
	/* per worker, single writer each */
	struct sgw_xcp_acc acc[SGW_MAX_WORKERS];
	struct sgw_xcp_pub pub[SGW_MAX_WORKERS];   /* written by worker 0 */
	struct {
		alignas(64) uint64_t bytes;        /* the worker's sessions' queue, last sample */
		/* scope carrier: what the worker's sessions carried, last sample */
		uint64_t tx_new_frames, tx_new_bytes, tx_lost;
	} q[SGW_MAX_WORKERS];
	/* worker 0 only: the aggregator */
	bool started;
	struct sgw_arq_tx_totals car_tx;  /* scope carrier: all sessions' at the interval's start */
	double car_eff;                   /* scope carrier: the IP share of a session's line */
	uint64_t next_qsample_ns;
	struct sgw_xcp_conf conf;
	struct sgw_xcp_ctl ctl;
	struct sgw_xcp_qest qest;
	struct sgw_xcp_params out[SGW_MAX_WORKERS];
	struct sgw_xcp_sums snaps[SGW_MAX_WORKERS];
	/* publication for readers */
	uint32_t tseq;
	struct sgw_xs_tpub tpub;
};

/* Each worker's sctx[SGW_STAGE_XCP]. */
struct sgw_xs_worker {
	struct sgw_xcp_params local;  /* this worker's copy of the parameters */
	uint64_t next_qsample_ns;
	/* scope session: the sessions this worker owns (their controllers run here) */
	uint32_t n_own;
	uint32_t *own;
	bool started;
	uint64_t ctr[SGW_XS__COUNT];
	uint64_t bad[SGW_XCP_E__COUNT];   /* refused headers by sgw_xcp_err */
	/*
	 * Legacy mode: this worker's flows (its terminals' plain TCP; both
	 * directions of a terminal's flows come to its worker). NULL: off.
	 */
	struct sgw_xcpl *leg;
	void *leg_mem;
};

/* The legacy table's counters summed over the workers (relaxed loads; any thread). */
struct sgw_xs_legacy_stats {
	uint64_t active;                  /* slots in use (idle ones included until reused) */
	uint64_t ctr[SGW_XCPL_C__COUNT];  /* sgw_xcpl_ctr */
	uint64_t flows_new, flows_reused, table_full;
};
void sgw_xs_legacy_read(const struct sgw_dp *dp, struct sgw_xs_legacy_stats *out);

static inline struct sgw_xs *
sgw_xs_of(const struct sgw_dp *dp)
{
	return (struct sgw_xs *)dp->sdata[SGW_STAGE_XCP];
}

static inline struct sgw_xs_worker *
sgw_xs_worker_of(const struct sgw_worker *w)
{
	return (struct sgw_xs_worker *)w->sctx[SGW_STAGE_XCP];
}

/*
 * A consistent copy of what worker 0 published (any thread). Scope session:
 * the sessions' sums (capacity, input, spare, queues, phi, shuffled, flows,
 * intervals; the largest interval and RTT; xi_p and xi_n zero: see
 * sgw_xs_sess_read).
 */
void sgw_xs_read(const struct sgw_dp *dp, struct sgw_xs_tpub *out);
/* Scope session: session si's controller (any thread). -1 if there is none. */
int sgw_xs_sess_read(const struct sgw_dp *dp, uint32_t si, struct sgw_xs_tpub *out,
		     struct sgw_xcp_sums *sums);
/* The stage's counters summed over the workers (relaxed loads; any thread). */
void sgw_xs_counters(const struct sgw_dp *dp, uint64_t ctr[SGW_XS__COUNT],
		     uint64_t bad[SGW_XCP_E__COUNT], struct sgw_xcp_sums *sums);
/* Counter names (exit JSON, telemetry). */
const char *sgw_xs_ctr_name(enum sgw_xs_ctr c);

#ifdef __cplusplus
}
#endif

#endif /* SGW_DP_XCP_H */
