/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The stage interface: every mechanism in the packet path is one struct of
 * operations and one row of the stage table (stage.c). The worker loop knows
 * only the table: it hands each class's burst of packets to the stage that
 * owns the class (one indirect call per class burst, never per packet), calls
 * a stage's action for a packet that leaves by a port the stage owns, fires
 * timers by the stage id in their user value (lib/sgw_tev.h), and calls the
 * per-burst and per-loop hooks. The shape of DPDK l3fwd's lookup-mode table
 * and lib/ipsec's per-SA function pointers.
 *
 * Adding a mechanism: its lib/ module, its dataplane/ stage file, its policy
 * section file in control/, its tests, one row in stage.c and CMake
 * (docs/architecture.md, "Adding a mechanism").
 */
#ifndef SGW_STAGE_H
#define SGW_STAGE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <rte_mbuf.h>
#include <rte_telemetry.h>

#include "sgw_parse.h"

#ifdef __cplusplus
extern "C" {
#endif

struct sgw_dp;
struct sgw_worker;
struct sgw_snapshot;
struct sgw_pkt_meta;
struct sgw_policy;

/* The rows of the stage table. */
enum sgw_stage_id {
	SGW_STAGE_FLOW = 0,     /* TCP, UDP, ESP: flow table, cached rule (stage_flow.c) */
	SGW_STAGE_STATELESS,    /* ICMP, LIFT, XCP, other IP, non-IP: rule per packet */
	SGW_STAGE_MALFORMED,    /* count by reason; drop or forward untouched */
	SGW_STAGE_SATLINK,      /* satlink frames; packets leaving by the satlink port */
	SGW_STAGE_LIFT,         /* BS-LIFT (hub): LIFT; notes ESP, then the flow stage (lift.c) */
	SGW_STAGE_XCP,          /* XCP: class xcp; before satlink's action on its port (xcp.c) */
	SGW_STAGE_SPLIT,        /* TCP split: the flows a split rule selects (split.c) */
	SGW_STAGE__COUNT
};

#define SGW_CLASS_BIT(c) (1u << (c))

/* (name, value) for the exit JSON and telemetry. */
typedef void (*sgw_kv_fn)(void *ctx, const char *key, uint64_t v);

struct sgw_stage_ops {
	const char *name;
	/* The classes whose bursts it takes while it is on. */
	uint32_t classes;

	/*
	 * Startup on the main lcore, before the workers run: 1 on, 0 off for
	 * this policy (its classes go to the stateless stage), < 0 error. It may
	 * claim ports with sgw_stage_own_port(). NULL: always on.
	 */
	int (*init)(struct sgw_dp *dp, const struct sgw_policy *pol);
	/*
	 * A policy snapshot is being built (control thread): fill s->sdata[id]
	 * (and s->default_term) from the policy and the stage's state. 0, or -1
	 * with err set. snapshot_free undoes it once no worker can see s.
	 */
	int (*snapshot)(struct sgw_dp *dp, struct sgw_snapshot *s, char *err, size_t errlen);
	void (*snapshot_free)(struct sgw_snapshot *s);
	/* The workers have stopped: publish final counters, free what it holds. */
	void (*drain)(struct sgw_dp *dp);
	void (*fini)(struct sgw_dp *dp);

	/*
	 * Before hand-off, per class burst: set w->pm[i].obj (its object for the
	 * packet, -1 none) and w->pm[i].owner (the worker that owns it) for each
	 * packet. NULL: the owner comes from the terminal (or the address hash).
	 */
	void (*prepare)(struct sgw_worker *w, const struct sgw_snapshot *s, struct rte_mbuf **m,
			const uint16_t *idx, uint16_t n);
	/* A burst of its classes, after hand-off: m[idx[j]], meta w->pm[idx[j]]. */
	void (*burst)(struct sgw_worker *w, const struct sgw_snapshot *s, struct rte_mbuf **m,
		      const uint16_t *idx, uint16_t n);
	/* A packet that leaves by a port it owns: it carries, bypasses or drops it. */
	void (*action)(struct sgw_worker *w, const struct sgw_snapshot *s, struct rte_mbuf *m,
		       const struct sgw_pkt_info *pi, int32_t term, int32_t rule);
	/*
	 * Flows it owns (the TCP split): the flow stage hands it each packet of a flow whose
	 * entry names it (sgw_flow.mech_stage) or whose rule's action it implements
	 * (sgw_action_stage): 1 it took m, 0 the flow stage forwards m as usual.
	 */
	int (*flow_input)(struct sgw_worker *w, const struct sgw_snapshot *s, struct rte_mbuf *m,
			  const struct sgw_pkt_meta *pm, int32_t fp, int32_t rule);
	/* A flow it owns hit the flow idle timeout: nonzero keeps it (the stage times it). */
	int (*flow_alive)(const struct sgw_worker *w, uint32_t fp);
	/* One of its timers fired (lib/sgw_tev.h: object, timer id). */
	void (*timer)(struct sgw_worker *w, const struct sgw_snapshot *s, uint32_t obj,
		      uint8_t timer);
	/* After each burst's stages (work it collected over the burst). */
	void (*burst_done)(struct sgw_worker *w, const struct sgw_snapshot *s);
	/* Once per loop, after the timers. */
	void (*loop)(struct sgw_worker *w, const struct sgw_snapshot *s);

	/*
	 * Packets and frames it holds now (exact while the workers are stopped):
	 * the exit report's accounting identity counts them as held.
	 */
	uint64_t (*held)(const struct sgw_dp *dp);
	/*
	 * Its own drop reasons, after the core ones in drops.* (names as the
	 * exit JSON and telemetry show them): it counts reason r in
	 * w->c.drop[sgw_stage_drop_base(id) + r], so a loss of its own is a
	 * drop like any other and the accounting identity holds.
	 */
	const char *const *drop_names;
	uint16_t n_drops;
	/*
	 * Its terms of the accounting identity (docs/operations.md): units it
	 * made (originated) and units it took in without loss (consumed), summed
	 * over workers into orig[0..n_orig) and cons[0..n_cons), named for the
	 * exit JSON. account NULL: none.
	 */
	const char *const *orig_names;
	const char *const *cons_names;
	uint8_t n_orig, n_cons;
	void (*account)(const struct sgw_dp *dp, uint64_t *orig, uint64_t *cons);
	/* Reporting: its section of the exit JSON, its lines of the summary. */
	void (*write_json)(const struct sgw_dp *dp, FILE *f);
	void (*print_summary)(const struct sgw_dp *dp, FILE *f);
	/*
	 * Its telemetry command (tel_cmd, e.g. "/satgw/satlink", NULL: none):
	 * control/telemetry.c registers it and calls this under the control
	 * lock with the command's parameters.
	 */
	const char *tel_cmd;
	const char *tel_help;
	int (*telemetry)(const struct sgw_dp *dp, const char *params, struct rte_tel_data *d);
	/*
	 * Graceful stop (sgw_worker_stop): the worker's loop saw quit. On the
	 * worker's lcore, before the ports stop: end what it holds toward its
	 * peers (the split: RST both ways for every open half). The worker then
	 * keeps running its timers and loop hooks (no RX) while any stage's
	 * stop_busy is nonzero, at most SGW_STOP_LINGER_MS, and flushes TX.
	 * NULL: nothing to do / nothing left to send.
	 */
	void (*stop)(struct sgw_worker *w, const struct sgw_snapshot *s);
	uint32_t (*stop_busy)(const struct sgw_worker *w);
};

/* The stage table, indexed by enum sgw_stage_id. */
extern const struct sgw_stage_ops *const sgw_stages[SGW_STAGE__COUNT];
/* The stage a rule action hands its flows to (SGW_STAGE_FLOW: the flow stage keeps them). */
extern const uint8_t sgw_action_stage[];  /* indexed by enum sgw_action */

/* The first of stage id's drop reasons in drops.* (w->c.drop[]); the table's order. */
unsigned int sgw_stage_drop_base(enum sgw_stage_id id);

/* Every stage's init, in table order; builds dp's class and port maps. */
int sgw_stages_init(struct sgw_dp *dp, const struct sgw_policy *pol);
void sgw_stages_drain(struct sgw_dp *dp);
void sgw_stages_fini(struct sgw_dp *dp);
void sgw_stages_write_json(const struct sgw_dp *dp, FILE *f);
void sgw_stages_print_summary(const struct sgw_dp *dp, FILE *f);

/* From a stage's init: packets leaving by policy port pidx go to its action. */
void sgw_stage_own_port(struct sgw_dp *dp, int16_t pidx, enum sgw_stage_id id);
/* From a stage's init: the re-inject queue must hold at least n packets. */
void sgw_stage_reinject_room(struct sgw_dp *dp, uint32_t n);

/* Telemetry helpers for stages (and control/telemetry.c): add a container
 * to d, or free it (logged once) when telemetry refuses it; a paged command's
 * parameter, the first index (none: 0), or -1 when malformed. */
void sgw_tel_add_container(struct rte_tel_data *d, const char *key, struct rte_tel_data *c);
int sgw_tel_parse_first(const char *params, uint32_t *first);

#ifdef __cplusplus
}
#endif

#endif /* SGW_STAGE_H */
