/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The dataplane's shared types: the application context, the per-lcore
 * worker, the immutable policy snapshot the workers read under RCU, and the
 * counters. Everything here is owned by dataplane/ and control/.
 */
#ifndef SGW_DP_H
#define SGW_DP_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <rte_common.h>
#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_log.h>
#include <rte_mbuf.h>

#include "sgw_flow_key.h"
#include "sgw_parse.h"
#include "sgw_policy.h"
#include "sgw_ring.h"
#include "stage.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SGW_VERSION        "0.1.0"
#define SGW_MAX_WORKERS    64
#define SGW_TXBUF_MAX      64
#define SGW_TW_BATCH       64   /* timer expiries handled per loop */
#define SGW_REINJECT_MIN   256  /* re-inject queue size when no stage asks for more */

extern int sgw_logtype_dp;
extern int sgw_logtype_ctl;
#define SGW_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_ ## level, sgw_logtype_dp, "satgw: " fmt "\n", ##__VA_ARGS__)
#define SGW_CLOG(level, fmt, ...) \
	rte_log(RTE_LOG_ ## level, sgw_logtype_ctl, "satgw-control: " fmt "\n", ##__VA_ARGS__)

/* Why the dataplane dropped a packet (beyond per-reason malformed counts). */
enum sgw_drop {
	SGW_DROP_MALFORMED = 0, /* parse failed and policy says drop */
	SGW_DROP_RULE,          /* a rule with action drop */
	SGW_DROP_DEFAULT,       /* no rule matched and default_action is drop */
	SGW_DROP_NO_ROUTE,      /* forward with no next hop and no peer port */
	SGW_DROP_HANDOFF_FULL,  /* the owning worker's ring was full */
	SGW_DROP_TX_FULL,       /* the driver or the TX ring refused it */
	SGW_DROP_SHUTDOWN,      /* still queued when the ports closed at exit (satlink too) */
	SGW_DROP_REINJECT_FULL, /* a stage handed back more than the re-inject queue holds */
	/*
	 * Then each stage's own reasons, in stage-table order (its ops'
	 * drop_names, from sgw_stage_drop_base()): drops.* is every packet and
	 * frame satgw freed without sending it.
	 */
	SGW_DROP__CORE
};

#define SGW_DROP_MAX 64  /* core and stage reasons; sgw_stages_init checks the sum */


struct sgw_rule_ctr {
	uint64_t pkts;
	uint64_t bytes;
};

/* Per-worker counters: one writer (the worker), read by telemetry. */
struct sgw_counters {
	uint64_t rx_pkts[SGW_MAX_PORTS];
	uint64_t rx_bytes[SGW_MAX_PORTS];
	uint64_t tx_pkts[SGW_MAX_PORTS];
	uint64_t tx_bytes[SGW_MAX_PORTS];
	uint64_t cls_pkts[SGW_CLASS__COUNT];
	uint64_t cls_bytes[SGW_CLASS__COUNT];
	uint64_t malformed[SGW_PR__COUNT];
	uint64_t act[SGW_ACT__COUNT];
	uint64_t drop[SGW_DROP_MAX];
	uint64_t unmatched;
	uint64_t handoff_out;
	uint64_t handoff_in;
	uint64_t flows_created;
	uint64_t flows_expired;
	uint64_t flows_bypassed;    /* flow table full: forwarded without state */
	uint64_t flow_hits;
	uint64_t timers_expired;
	uint64_t loops;
	uint64_t idle_sleeps;
	uint64_t snapshot_gen;      /* generation this worker last ran with */
} __rte_cache_aligned;

/*
 * An immutable policy snapshot. Built by control/, published with an atomic
 * pointer swap, freed after an RCU grace period. Workers never write to it,
 * except their own row of rule counters.
 */
struct sgw_snapshot {
	uint64_t gen;
	struct sgw_policy pol;
	struct sgw_parse_conf parse;
	struct rte_lpm *lpm4;         /* next hop = terminal index */
	struct rte_lpm6 *lpm6;
	uint16_t *term_owner;         /* terminal index -> worker index */
	int32_t default_term;         /* terminal of IP traffic of no terminal, else -1 (a stage's) */
	void *sdata[SGW_STAGE__COUNT]; /* what each stage keeps per snapshot (its own type) */
	uint32_t n_workers;
	bool rules_dscp;              /* some rule matches on DSCP: no per-flow rule cache */
	struct sgw_rule_ctr *rule_ctr;  /* [n_workers * pol.n_rules], row per worker */
	struct sgw_rule_ctr *rule_base; /* [pol.n_rules] totals carried from older snapshots */
};

struct sgw_txbuf {
	uint16_t n;
	struct rte_mbuf *m[SGW_TXBUF_MAX];
};

struct sgw_rxq {
	uint16_t port_id;
	uint16_t queue;
	uint16_t pidx;                /* policy port index */
};

struct sgw_flow_table;
struct sgw_tw;
struct sgw_dp;
struct sgw_linkem;

/* role: emulator. One direction's link model and the frames it holds (a FIFO). */
struct sgw_emu_dir {
	struct sgw_linkem *lm;
	int16_t in_pidx;
	int16_t out_pidx;
	struct sgw_ring r;            /* the held frames, in q[] */
	uint64_t hold_full;           /* must stay 0: the FIFO is sized from the model's bound */
	/*
	 * The model's counters as worker 0 last published them (every 10 ms):
	 * reading the model itself advances its channel and RNG, so only its
	 * owner may. Readers retry while pub_seq is odd or changes under them.
	 */
	uint32_t pub_seq;
	struct sgw_linkem_stats *pub;
	struct {
		struct rte_mbuf *m;
		uint64_t release_ns;
	} *q;
};

/*
 * Everything the pipeline knows of one packet of the burst: the parse result
 * and what the loop and the stages add to it. Indexed like the burst.
 */
struct sgw_pkt_meta {
	struct sgw_pkt_info info;     /* lib/sgw_parse.h */
	int32_t term;                 /* terminal index in the snapshot, -1 none */
	int32_t obj;                  /* the owning stage's object (satlink: session), -1 none;
				       * set only for classes whose stage has a prepare hook */
	uint8_t pidx;                 /* input policy port */
	uint8_t owner;                /* worker that owns it (hand-off) */
};

struct sgw_worker {
	/* read-mostly */
	struct sgw_dp *dp;
	uint32_t idx;
	unsigned int lcore;
	uint16_t n_rxq;
	struct sgw_rxq rxq[SGW_MAX_PORTS];
	int32_t txq[SGW_MAX_PORTS];   /* my TX queue on each policy port, -1: via dp->txring */
	bool drains_txring[SGW_MAX_PORTS];
	struct sgw_flow_table *flows;
	struct sgw_tw *tw;
	uint64_t ns_base_tsc;
	double ns_per_tsc;

	/* hot, written every loop */
	struct sgw_txbuf tx[SGW_MAX_PORTS] __rte_cache_aligned;
	uint64_t tx_deadline;
	uint64_t last_busy_tsc;
	uint64_t now_ns;
	uint64_t drain_tsc;           /* from the snapshot, cached for use outside the RCU section */
	uint64_t backoff_tsc;
	uint32_t sleep_us;

	/* per-burst scratch */
	struct sgw_pkt_meta pm[SGW_BURST_MAX] __rte_cache_aligned;
	struct sgw_burst_classes cls;

	/* packets stages handed back, run through the pipeline after the stages */
	uint32_t reinj_n;
	uint32_t reinj_cap;
	struct rte_mbuf **reinj;

	void *sctx[SGW_STAGE__COUNT];  /* each stage's per-worker state (its own type) */

	struct sgw_counters c;
} __rte_cache_aligned;

/* Port bookkeeping fixed at startup: ports are not hot-reloadable. */
struct sgw_port_state {
	uint16_t port_id;
	uint16_t n_rxq;
	uint16_t n_txq;
	struct rte_ether_addr mac;
	bool opened;
	bool started;
	char driver[64];
	struct rte_eth_stats final;   /* device counters at close */
};

struct sgw_dp {
	struct sgw_snapshot *snap;    /* swapped with __atomic; read once per loop */
	struct rte_rcu_qsbr *rcu;
	struct rte_mempool *pool;
	uint16_t n_ports;
	struct sgw_port_state ports[SGW_MAX_PORTS];
	int16_t pidx_of[RTE_MAX_ETHPORTS];
	struct rte_ring *txring[SGW_MAX_PORTS];  /* for workers without their own TX queue */
	uint32_t n_workers;
	struct sgw_worker *workers[SGW_MAX_WORKERS];
	struct rte_ring *inring[SGW_MAX_WORKERS]; /* hand-off to the owning worker */
	uint64_t tsc_hz;
	bool bare_forward;
	volatile int quit;
	uint64_t next_gen;
	bool emulator;                /* role: emulator (worker 0 runs both directions) */
	int8_t emu_dir_of[SGW_MAX_PORTS];  /* input port -> direction, -1 none */
	struct sgw_emu_dir emu[2];
	uint64_t emu_pub_ns;          /* when worker 0 last published link counters */
	char instance[12];            /* unique suffix for DPDK object names (pid) */
	/* the stage table's state: which is on, who takes each class and port */
	bool stage_on[SGW_STAGE__COUNT];
	uint8_t stage_of_class[SGW_CLASS__COUNT];
	int8_t stage_of_port[SGW_MAX_PORTS];   /* egress: the stage whose action takes it, -1 */
	uint32_t reinj_cap;                    /* per worker: the most any stage asked for */
	void *sdata[SGW_STAGE__COUNT];         /* each stage's shared state (its own type) */
};

/* Hand-off and TX ring bursts handled per loop, so rings drain as fast as RX fills them. */
#define SGW_RING_BURSTS_PER_LOOP 4

/* dp.c: setup and teardown (mempool, ports, rings, workers) */
int sgw_dp_init(struct sgw_dp *dp, const struct sgw_policy *pol, uint32_t n_workers,
		const unsigned int *lcores, bool bare_forward, const char *instance);
int sgw_dp_publish(struct sgw_dp *dp, struct sgw_policy *pol, char *err, size_t errlen);
/* Stop and close every port (their RX rings give back mbufs); keeps final device stats. */
void sgw_dp_close_ports(struct sgw_dp *dp);
/* Frees everything; returns the number of mbufs still in use (0 when none leaked). */
unsigned int sgw_dp_fini(struct sgw_dp *dp);
void sgw_dp_drain(struct sgw_dp *dp);

/* snapshot.c */
struct sgw_snapshot *sgw_snapshot_build(struct sgw_dp *dp, struct sgw_policy *pol,
					char *err, size_t errlen);
void sgw_snapshot_free(struct sgw_snapshot *s);

/* worker.c */
int sgw_worker_main(void *arg);
/* One loop iteration: RX, hand-off, stages, re-inject, timers, TX drain. Returns packets. */
uint32_t sgw_worker_iter(struct sgw_worker *w, uint64_t now_tsc);
/* Classify a burst, hand off what other workers own, run the stages on the rest. */
uint32_t sgw_worker_process(struct sgw_worker *w, const struct sgw_snapshot *s,
			    struct rte_mbuf **m, uint16_t n, bool may_handoff);
/* Run what stages handed back (sgw_reinject) through the pipeline. */
void sgw_worker_reinject_drain(struct sgw_worker *w, const struct sgw_snapshot *s);
/*
 * Graceful stop, on the worker's lcore once its loop saw quit, before the
 * ports stop: sgw_worker_stop_begin runs every stage's stop hook (the split
 * resets its open halves both ways); sgw_worker_stop_iter is one loop without
 * RX (timers, loop hooks, re-inject, TX) and returns what the stages still
 * have to send (stop_busy, 0: done). sgw_worker_stop does both in real time,
 * lingering at most SGW_STOP_LINGER_MS, then flushes TX.
 */
#define SGW_STOP_LINGER_MS 250u
void sgw_worker_stop_begin(struct sgw_worker *w, uint64_t now_tsc);
uint32_t sgw_worker_stop_iter(struct sgw_worker *w, uint64_t now_tsc);
void sgw_worker_stop(struct sgw_worker *w);

/* tx.c */
void sgw_worker_flush(struct sgw_worker *w);
/* Send what other workers queued for our TX queues; returns packets sent. */
uint32_t sgw_worker_drain_txrings(struct sgw_worker *w);

/* emulator.c */
int sgw_emu_init(struct sgw_dp *dp, const struct sgw_policy *pol);
uint32_t sgw_emu_iter(struct sgw_worker *w, const struct sgw_snapshot *s);
uint64_t sgw_emu_next_release(const struct sgw_dp *dp, uint64_t now_ns);
void sgw_emu_drop_held(struct sgw_dp *dp);
void sgw_emu_fini(struct sgw_dp *dp);
const char *sgw_emu_dir_name(int d);
/* A consistent copy of a direction's published counters (any thread). */
void sgw_emu_read_stats(const struct sgw_dp *dp, int d, struct sgw_linkem_stats *st);

/* tx.c: queue a packet for TX on a policy port (buffered, flushed at burst or deadline). */
void sgw_worker_tx(struct sgw_worker *w, uint16_t pidx, struct rte_mbuf *m, uint16_t burst);

/*
 * The accounting identity of the exit report (docs/operations.md): every
 * packet and frame is counted once,
 *   rx + originated == tx + dropped + consumed + held.
 * rx and tx are the ports' packet counts; originated what stages made (satlink:
 * its frames); dropped drops.* and, role emulator, the link model's drops;
 * consumed what stages took in without loss; held what satgw holds now (0
 * after the drain at exit). held is exact only while the workers are stopped.
 */
#define SGW_ACCT_TERMS_MAX 16

struct sgw_acct_term {
	const char *name;
	uint64_t v;
};

struct sgw_account {
	uint64_t rx;
	uint64_t tx;
	uint64_t drops;               /* sum of drops.* */
	uint64_t link_drops;          /* emulator: queue, loss and outage drops */
	uint64_t held_tx_buffers;     /* the workers' TX buffers and re-inject queues */
	uint64_t held_rings;          /* hand-off and TX rings */
	uint64_t held_link;           /* emulator: frames on the emulated link */
	/* The stages' terms (their ops' account and held), every row of the table. */
	uint16_t n_orig, n_cons, n_held;
	struct sgw_acct_term orig[SGW_ACCT_TERMS_MAX];   /* originated */
	struct sgw_acct_term cons[SGW_ACCT_TERMS_MAX];   /* consumed */
	struct sgw_acct_term held[SGW_ACCT_TERMS_MAX];   /* held by a stage (its name) */
	uint64_t originated, consumed, held_stages;      /* their sums */
	uint64_t in;                  /* rx + originated */
	uint64_t out;                 /* tx + dropped + consumed + held */
};

/* stats.c */
/* Fill *a from the counters and queues now; returns 0 when in == out. */
int sgw_dp_account(const struct sgw_dp *dp, struct sgw_account *a);
struct sgw_tw_stats;
void sgw_counters_sum(const struct sgw_dp *dp, struct sgw_counters *sum);
void sgw_timer_stats_sum(const struct sgw_dp *dp, struct sgw_tw_stats *sum);
int sgw_stats_write_json(const struct sgw_dp *dp, FILE *f, double elapsed_s);
void sgw_stats_print_summary(const struct sgw_dp *dp, FILE *f, double elapsed_s);
/* Drop reason d's name (core or a stage's), and how many reasons there are. */
const char *sgw_drop_name(unsigned int d);
unsigned int sgw_drop_count(void);
const char *sgw_dp_mode_name(const struct sgw_dp *dp);
void sgw_rule_totals(const struct sgw_snapshot *s, uint32_t r, uint64_t *pkts, uint64_t *bytes);
uint32_t sgw_flows_active(const struct sgw_dp *dp);

#ifdef __cplusplus
}
#endif

#endif /* SGW_DP_H */
