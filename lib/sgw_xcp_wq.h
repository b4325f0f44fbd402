/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Two classes at the XCP bottleneck (docs/xcp.md, "Separate XCP and non-XCP
 * queues"): the XCP class (packets the controller gives feedback to) and the
 * other class (plain TCP, UDP, ESP: load the controller cannot steer). Each
 * has its own queue; this module owns the share between them:
 *
 * - the scheduler: which backlogged class sends next, a weighted share of the
 *   link (self-clocked fair queuing over two classes: each class's service
 *   normalised by its weight, the smaller goes; a class that was idle cannot
 *   bank credit; work conserving);
 * - the weight, adapted once per control interval so that the average
 *   throughput per flow is the same in both classes when both are backlogged:
 *   target w_x = N_x / (N_x + N_o), N = the distinct flows that sent a
 *   packet of more than SGW_XCPQ_FLOW_MIN_BYTES in the last
 *   SGW_XCPQ_FC_MEM intervals (linear counting over fixed bitmaps, no
 *   per-flow state; several intervals because a TCP flow stalled in loss
 *   recovery or a timeout for a whole interval is still one of the class's
 *   flows), then
 *   w_x += gain (target - w_x), within [w_min, 1 - w_min];
 * - the capacity the XCP controller is given: its weighted share w_x C, or,
 *   if the other class ran out of packets at some moment of the interval,
 *   max(w_x C, C - the other class's sending rate over the interval): more
 *   when the other class leaves part of its share unused. A class that
 *   always had a backlog used what it could: when the line itself delivered
 *   less than C (a late loop), C minus its rate would overstate the XCP
 *   class's part and leave XCP a standing queue.
 *
 * Plain C11, no clock reads, no allocation; the caller passes the time. One
 * writer (the thread that owns the queues).
 */
#ifndef SGW_XCP_WQ_H
#define SGW_XCP_WQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { SGW_XCPQ_X = 0, SGW_XCPQ_O = 1, SGW_XCPQ_N = 2 };

/* Bits of each class's flow bitmap (linear counting; accurate to a few % up to ~10^4 flows). */
#define SGW_XCPQ_FC_BITS 4096u
/* Intervals a flow stays counted after its last packet (this one and the 3 before). */
#define SGW_XCPQ_FC_MEM 4u
/* A packet at most this long (IP bytes) does not count its flow (pure ACKs, probes). */
#define SGW_XCPQ_FLOW_MIN_BYTES 128u

struct sgw_xcpq_conf {
	double gain;   /* share of the way to the target per interval, (0, 1]: 0.5 */
	double w_min;  /* floor of either class's weight, (0, 0.5]: 0.02 */
	double w_init; /* the XCP class's weight before any interval: 0.5 */
};

/* What the interval that ended last measured (telemetry). */
struct sgw_xcpq_telem {
	uint64_t dt_ns;                    /* its length */
	double flows[SGW_XCPQ_N];          /* distinct flows counted */
	double w_target;                   /* N_x / (N_x + N_o) (previous w without flows) */
	double w;                          /* the XCP class's weight from now on */
	double sent_Bps[SGW_XCPQ_N];       /* what each class sent */
	double cap_x_Bps;                  /* the capacity given to the XCP controller */
	bool o_idle;                       /* the other class ran out in the interval */
};

struct sgw_xcpq {
	double w;                          /* the XCP class's weight; the other's is 1 - w */
	double vt[SGW_XCPQ_N];             /* service / weight (bytes) */
	uint64_t t_start_ns;               /* the interval's start */
	uint64_t sent_iv[SGW_XCPQ_N];      /* bytes sent in the interval */
	bool o_idle;                       /* the other class had nothing at a pick */
	uint64_t fc[SGW_XCPQ_N][SGW_XCPQ_FC_BITS / 64];          /* this interval */
	uint64_t fc_old[SGW_XCPQ_FC_MEM - 1][SGW_XCPQ_N][SGW_XCPQ_FC_BITS / 64];
	uint32_t fc_pos;                   /* the oldest of fc_old */
	/* cumulative, for counters */
	uint64_t sent_bytes[SGW_XCPQ_N];
	uint64_t sent_pkts[SGW_XCPQ_N];
	uint64_t intervals;
	struct sgw_xcpq_telem last;
};

void
sgw_xcpq_conf_default(struct sgw_xcpq_conf *c);
/* 0 if usable, -1 otherwise. */
int
sgw_xcpq_conf_check(const struct sgw_xcpq_conf *c);

void
sgw_xcpq_init(struct sgw_xcpq *q, const struct sgw_xcpq_conf *c, uint64_t now);

/* A 32-bit hash of a flow key (bytes); any key layout, the same for both classes. */
uint32_t
sgw_xcpq_hash(const uint8_t *key, size_t len);

/* A packet of size bytes of flow h joined class cls (counts the flow, see above). */
void
sgw_xcpq_arrive(struct sgw_xcpq *q, unsigned int cls, uint32_t h, uint32_t size);

/*
 * Which class sends next, given which have something queued: SGW_XCPQ_X,
 * SGW_XCPQ_O, or -1 if neither. An idle class is brought up to the busy
 * one's normalised service, so it cannot bank credit while it has nothing.
 */
int
sgw_xcpq_pick(struct sgw_xcpq *q, bool backlog_x, bool backlog_o);

/* Class cls sent a packet of size bytes. */
void
sgw_xcpq_sent(struct sgw_xcpq *q, unsigned int cls, uint32_t size);

/*
 * End the interval at now on a link of cap_Bps (bytes/s): count the flows,
 * move the weight, reset the interval's sums. Returns the capacity the XCP
 * controller is given for the next interval (also in q->last). conf may
 * differ from the one given to init (a reload).
 */
double
sgw_xcpq_interval(struct sgw_xcpq *q, const struct sgw_xcpq_conf *c, uint64_t now,
		  double cap_Bps);

/* The linear-counting estimate of the distinct flows in a bitmap of SGW_XCPQ_FC_BITS. */
double
sgw_xcpq_count(const uint64_t *bits);

#ifdef __cplusplus
}
#endif

#endif /* SGW_XCP_WQ_H */
