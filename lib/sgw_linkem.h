/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The satellite link model of the emulator role, one direction of a link:
 * a queue in front of a rate limiter (drop-tail, RED or gentle RED, limits in
 * bytes and packets), exact serialisation at the configured rate, propagation
 * delay with optional jitter (order kept), and a channel that loses frames:
 * none, i.i.d. bit errors per frame length, i.i.d. packet loss, or a
 * Gilbert-Elliott two-state chain given as mean sojourn times, plus scheduled
 * and periodic outages. Seeded, so a run repeats exactly.
 *
 * Plain C11: time comes in as an argument (ns); no clock reads, no globals;
 * memory is allocated by sgw_linkem_create only. The dataplane holds the
 * frames; this decides each frame's fate and its release time.
 */
#ifndef SGW_LINKEM_H
#define SGW_LINKEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SGW_LINKEM_MAX_OUTAGES 16

/* Ranges sgw_linkem_conf_check enforces (the policy loader's are the same). */
#define SGW_LINKEM_MAX_RATE_BPS    100000000000ull  /* 100 Gbit/s */
#define SGW_LINKEM_MAX_DELAY_NS    10000000000ull   /* 10 s: delay and jitter each */
#define SGW_LINKEM_MAX_OVERHEAD    256u
#define SGW_LINKEM_MAX_QUEUE_PKTS  1000000u
#define SGW_LINKEM_MAX_QUEUE_BYTES 1000000000u
#define SGW_LINKEM_GE_MIN_MEAN_S   0.001            /* GE mean sojourn: 1 ms .. */
#define SGW_LINKEM_GE_MAX_MEAN_S   1000000.0        /* .. 1e6 s */
#define SGW_LINKEM_MAX_OUTAGE_NS   1000000000000000000ull /* start, duration, period */

enum sgw_aqm {
	SGW_AQM_DROPTAIL = 0,
	SGW_AQM_RED,         /* Floyd & Jacobson: drop with p rising 0..max_p over min_th..max_th */
	SGW_AQM_GRED,        /* gentle RED: p rises max_p..1 over max_th..2*max_th (seed 004) */
};

enum sgw_loss_model {
	SGW_LOSS_NONE = 0,
	SGW_LOSS_BER,        /* i.i.d. bit errors: P(frame lost) = 1 - (1 - ber)^(8 * len) */
	SGW_LOSS_RANDOM,     /* i.i.d. packet loss with probability p */
	SGW_LOSS_GE,         /* Gilbert-Elliott: good/bad states, exponential sojourn times */
};

/* Loss in one channel state: a bit error rate, a packet loss probability, or both. */
struct sgw_loss_state {
	double mean_s;       /* GE only: mean sojourn time in this state (seed 000: 0.5-8.5 s) */
	double ber;          /* 0..1 */
	double p;            /* 0..1 */
};

struct sgw_outage {
	uint64_t start_ns;   /* from the model's time zero */
	uint64_t dur_ns;
	uint64_t period_ns;  /* 0: once; else repeats every period_ns (period_ns > dur_ns) */
};

struct sgw_linkem_conf {
	uint64_t rate_bps;          /* 0 = no rate limit (and no queue) */
	uint64_t delay_ns;          /* one-way propagation delay */
	uint64_t jitter_ns;         /* uniform extra delay in [0, jitter_ns]; order is kept */
	uint32_t overhead_bytes;    /* per-frame bytes on the wire beyond the frame (0) */
	uint32_t queue_bytes;       /* queue limit in bytes (0 = none) */
	uint32_t queue_pkts;        /* queue limit in packets (> 0) */
	enum sgw_aqm aqm;
	uint32_t red_min_bytes;     /* RED/GRED thresholds on the average queue, bytes */
	uint32_t red_max_bytes;
	double red_max_p;           /* 0..1 */
	double red_wq;              /* EWMA weight of the average queue (default 0.002) */
	enum sgw_loss_model loss;
	struct sgw_loss_state good; /* BER and RANDOM use good.ber / good.p */
	struct sgw_loss_state bad;  /* GE only */
	uint32_t n_outages;
	struct sgw_outage outages[SGW_LINKEM_MAX_OUTAGES];
};

enum sgw_linkem_verdict {
	SGW_LE_PASS = 0,
	SGW_LE_DROP_QUEUE,   /* queue full, or RED chose it */
	SGW_LE_DROP_LOSS,    /* the channel lost it (bit errors, packet loss, GE state) */
	SGW_LE_DROP_OUTAGE,  /* sent during an outage */
	SGW_LE__COUNT
};

struct sgw_linkem_stats {
	uint64_t offered_pkts, offered_bytes;
	uint64_t delivered_pkts, delivered_bytes;   /* passed: will be released */
	uint64_t drop_pkts[SGW_LE__COUNT];          /* by verdict; [SGW_LE_PASS] unused */
	uint64_t drop_bytes[SGW_LE__COUNT];
	uint32_t queue_pkts, queue_bytes;           /* queued or on the wire now */
	uint32_t queue_pkts_max, queue_bytes_max;
	uint64_t state_ns[2];                       /* time spent in good (0) and bad (1) */
	uint64_t state_changes;
	uint64_t loss_bursts;                       /* runs of consecutive channel losses */
	/* Added after the first cut: */
	double queue_avg_bytes;                     /* RED/GRED: the EWMA the AQM decides on */
};

struct sgw_linkem;

/*
 * Defaults: no rate limit, no delay, 1000-packet drop-tail queue, RED max_p
 * 0.1 and wq 0.002 (Floyd's), no loss, no outages.
 */
void sgw_linkem_conf_init(struct sgw_linkem_conf *conf);

/*
 * Validate conf: 0, or -1 with a reason in why (for the policy loader).
 * Checks ranges, queue_pkts > 0, RED thresholds, GE means > 0, outages.
 */
int sgw_linkem_conf_check(const struct sgw_linkem_conf *conf, char *why, size_t len);

/* Frames that can be between offer and release at once (queue + in flight), for sizing. */
uint64_t sgw_linkem_max_in_flight(const struct sgw_linkem_conf *conf, uint32_t min_frame_len);

struct sgw_linkem *sgw_linkem_create(const struct sgw_linkem_conf *conf, uint64_t seed,
				     uint64_t now_ns);
void sgw_linkem_destroy(struct sgw_linkem *lm);

/*
 * Offer a frame of len bytes at now_ns (non-decreasing across calls). On
 * SGW_LE_PASS, *release_ns is when its last bit arrives at the far end:
 * end of serialisation + delay + jitter, never earlier than the previous
 * frame's release. Every other verdict is a drop, counted.
 */
enum sgw_linkem_verdict sgw_linkem_offer(struct sgw_linkem *lm, uint64_t now_ns, uint32_t len,
					 uint64_t *release_ns);

/* Counters, with queue occupancy and channel-state times brought up to now_ns. */
void sgw_linkem_get_stats(struct sgw_linkem *lm, uint64_t now_ns, struct sgw_linkem_stats *st);

/* Current channel state: 0 good, 1 bad (GE); always 0 for other models. */
int sgw_linkem_state(struct sgw_linkem *lm, uint64_t now_ns);

const char *sgw_linkem_verdict_name(enum sgw_linkem_verdict v);
/* "droptail", "red", "gred"; "none", "ber", "random", "gilbert-elliott" (the YAML words). */
const char *sgw_aqm_name(enum sgw_aqm a);
const char *sgw_loss_model_name(enum sgw_loss_model m);

#ifdef __cplusplus
}
#endif

#endif /* SGW_LINKEM_H */
