/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * XCP at the satellite gateway (SatERN, seed 001; Katabi, Handley, Rohrs,
 * SIGCOMM 2002): the congestion header codec and the router controller of
 * one link and direction. docs/xcp.md has the equations, units and the
 * multi-core scheme; docs/wire-formats.md the header layout.
 *
 * Codec. The header sits between the IP header (after any IPv6 extension
 * headers) and the transport header or ESP, with its own next-header byte, so
 * a gateway reads and rewrites it on encrypted traffic. Its IP protocol
 * number is a parameter of every call (the policy's protocols.xcp). Parse is
 * bounds-checked and answers one reason per failure; the feedback is lowered
 * in place and the caller is told which bytes changed. The header carries no
 * checksum of its own and no checksum covers it (not the IPv4 header
 * checksum, not the transport checksum, which senders compute without it,
 * not an ESP ICV): lowering H_feedback needs no checksum fix unless the
 * caller carries the header inside something that covers it, which the
 * patch (offset, old and new bytes, sgw_xcp_csum_adjust()) is for.
 *
 * Controller, split for several workers carrying one link without locks:
 *   struct sgw_xcp_acc     per worker, single writer: cumulative integer
 *                          sums the fast path adds each packet to.
 *   sgw_xcp_aggregate()    pure: snapshots of N accumulators, the capacity and
 *                          the persistent queue at the end of a control
 *                          interval -> the next controller state and the
 *                          published parameters. Integer sums, so splitting
 *                          a stream across workers gives the same result.
 *   sgw_xcp_on_packet()    per packet: Katabi's feedback from the worker's
 *                          copy of the parameters (xi_p, xi_n and its part
 *                          of the interval's budgets, which it spends in
 *                          its own copy); sgw_xcp_feedback() is the formula
 *                          alone, pure.
 *   struct sgw_xcp_pub     seqlock per worker through which the aggregator
 *                          publishes the parameters; readers never wait (a
 *                          reader that meets a write keeps its copy).
 *   struct sgw_xcp_qest    the persistent queue: minimum of the queue samples
 *                          over the last propagation delay (single writer:
 *                          the thread that owns the queue).
 * Time is passed in (uint64_t ns, monotonic). No allocation, no globals, no
 * clock reads, plain C11.
 */
#ifndef SGW_XCP_H
#define SGW_XCP_H

#include <stdalign.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * C++ (the tests) sees the shared words as plain uint64_t, of the same size
 * and alignment, and touches them through the functions only.
 */
#ifdef __cplusplus
#define SGW_XCP_ATOMIC_U64 uint64_t
extern "C" {
#else
#include <stdatomic.h>
#define SGW_XCP_ATOMIC_U64 _Atomic uint64_t
#endif

/* ---- Codec (wire layout: docs/wire-formats.md, "XCP congestion header") ---- */

/*
 * Version 2. (Version 1 was a 16-byte layout once reserved in sgw_parse.h,
 * which had no H_cwnd and no reverse feedback; it is refused here as
 * SGW_XCP_E_VERSION. The parser frames the header with SGW_XCPW_LEN.)
 */
#define SGW_XCPW_VERSION 2
#define SGW_XCPW_LEN 20          /* bytes; also the only header length sent */
#define SGW_XCPW_OFF_NEXT 0      /* 8 bits: next header */
#define SGW_XCPW_OFF_VER_FLAGS 1 /* version high 4 bits, flags low 4 */
#define SGW_XCPW_OFF_HLEN 2      /* 8 bits: header length in 32-bit words (5) */
#define SGW_XCPW_OFF_RSVD 3      /* 8 bits: zero when sent, ignored */
#define SGW_XCPW_OFF_RTT 4       /* 32 bits: H_rtt, microseconds, 0 = unknown */
#define SGW_XCPW_OFF_CWND 8      /* 32 bits: H_cwnd, bytes */
#define SGW_XCPW_OFF_FEEDBACK 12 /* 32 bits signed: H_feedback, bytes */
#define SGW_XCPW_OFF_REVERSE 16  /* 32 bits signed: reverse feedback, bytes */

/* Flags (low 4 bits of byte 1). Unknown flags are ignored on receipt. */
#define SGW_XCPW_F_REVERSE 0x1 /* the reverse-feedback field carries a value */
#define SGW_XCPW_F_MASK 0xf

struct sgw_xcp_fields {
	uint8_t next;      /* next header: 6 TCP, 17 UDP, 50 ESP, ... */
	uint8_t flags;     /* SGW_XCPW_F_* */
	uint16_t hlen;     /* header length in bytes (parse output; build writes 20) */
	uint32_t rtt_us;   /* H_rtt: sender's smoothed RTT, us; 0 = not known yet */
	uint32_t cwnd;     /* H_cwnd: sender's congestion window, bytes */
	int32_t feedback;  /* H_feedback: window change wanted, bytes; routers lower */
	int32_t reverse;   /* reverse feedback: H_feedback returned by the receiver */
};

enum sgw_xcp_err {
	SGW_XCP_OK = 0,
	SGW_XCP_E_TRUNC,      /* fewer than 20 bytes */
	SGW_XCP_E_VERSION,    /* version != 2 */
	SGW_XCP_E_HLEN,       /* header length field < 5 words */
	SGW_XCP_E_HLEN_TRUNC, /* header length runs past the bytes given */
	SGW_XCP_E_NESTED,     /* next header is the XCP protocol number itself */
	SGW_XCP_E__COUNT
};

/* Stable snake_case names (counter names): "ok", "trunc", ... */
const char *
sgw_xcp_err_name(enum sgw_xcp_err e);

/*
 * Parse the header at p (len bytes from the header's first byte to the end
 * of the IP payload). xcp_proto is the protocol number XCP is carried under.
 * On SGW_XCP_OK *f is filled; otherwise *f is untouched.
 */
enum sgw_xcp_err
sgw_xcp_parse(const uint8_t *p, size_t len, uint8_t xcp_proto, struct sgw_xcp_fields *f);

/*
 * Write a version-2 header (hlen 5 words, reserved byte 0; f->hlen ignored)
 * at p. Returns SGW_XCPW_LEN, or 0 when cap < SGW_XCPW_LEN or f->next is
 * xcp_proto (nothing written).
 */
size_t
sgw_xcp_build(uint8_t *p, size_t cap, uint8_t xcp_proto, const struct sgw_xcp_fields *f);

/* What an in-place rewrite changed: bytes [off, off + 4) of the header. */
struct sgw_xcp_patch {
	uint16_t off;       /* from the header's first byte: SGW_XCPW_OFF_FEEDBACK */
	uint16_t len;       /* 4 */
	uint8_t old_b[4];   /* the bytes before, as on the wire */
	uint8_t new_b[4];   /* the bytes after */
};

/*
 * The router's rewrite: if fb < the header's H_feedback, write fb and
 * return 1 (*patch, if not NULL, says what changed); else leave the header
 * as it is and return 0. -1 if len < SGW_XCPW_LEN (nothing touched). The
 * header is assumed parsed (version and length are not checked again).
 */
int
sgw_xcp_lower_feedback(uint8_t *p, size_t len, int32_t fb, struct sgw_xcp_patch *patch);

/* The receiver's echo: write the reverse field and set SGW_XCPW_F_REVERSE. */
int
sgw_xcp_set_reverse(uint8_t *p, size_t len, int32_t rev, struct sgw_xcp_patch *patch);

/*
 * RFC 1624 incremental update of a 16-bit one's-complement checksum (as
 * stored, network order already converted to host uint16) when a patch
 * changes 4 bytes that start at an even offset of the checksummed data.
 */
uint16_t
sgw_xcp_csum_adjust(uint16_t csum, const struct sgw_xcp_patch *patch);

/* ---- Controller ---- */

/* Indices of the cumulative sums each worker keeps (struct sgw_xcp_sums). */
enum sgw_xcp_sum {
	SGW_XCP_S_BYTES = 0,  /* bytes offered to the queue, XCP or not */
	SGW_XCP_S_PKTS,       /* packets offered */
	SGW_XCP_S_XBYTES,     /* bytes of XCP packets with H_rtt > 0: sum s_i */
	SGW_XCP_S_XPKTS,      /* XCP packets with H_rtt > 0 */
	SGW_XCP_S_RTT_B,      /* sum rtt_i * s_i, us * bytes (for the mean RTT) */
	SGW_XCP_S_RSC,        /* sum rtt_i * s_i / cwnd_i, us, 16 fraction bits */
	SGW_XCP_S_R2SC,       /* sum rtt_i^2 * s_i / cwnd_i, us^2 (telemetry) */
	SGW_XCP_S_NORTT,      /* XCP packets with H_rtt = 0 (no feedback) */
	SGW_XCP_S_CLAMPED,    /* packets whose H_rtt was above rtt_max */
	SGW_XCP_S_FB_POS,     /* sum of positive feedback computed, bytes */
	SGW_XCP_S_FB_NEG,     /* sum of |negative feedback| computed, bytes */
	SGW_XCP_S_LOWERED,    /* headers the gateway lowered */
	SGW_XCP_S_BAD,        /* headers refused by sgw_xcp_parse (any reason) */
	SGW_XCP_S__COUNT
};

const char *
sgw_xcp_sum_name(enum sgw_xcp_sum s);

/* A plain copy of the sums (snapshot of an accumulator, or a total). */
struct sgw_xcp_sums {
	uint64_t v[SGW_XCP_S__COUNT];
};

/*
 * One worker's accumulator: cumulative since init, never reset, written by
 * one thread only (relaxed atomic load + store: plain moves on x86 and ARM,
 * no locked instruction), read by the aggregator at any time. Differences
 * between two snapshots are exact modulo 2^64. Aligned to its own cache line.
 */
struct sgw_xcp_acc {
	alignas(64) SGW_XCP_ATOMIC_U64 v[SGW_XCP_S__COUNT];
};

void
sgw_xcp_acc_init(struct sgw_xcp_acc *a);

/* Relaxed loads of every sum into *out. */
void
sgw_xcp_acc_read(const struct sgw_xcp_acc *a, struct sgw_xcp_sums *out);

/* Add v to one sum (single writer). */
void
sgw_xcp_acc_bump(struct sgw_xcp_acc *a, enum sgw_xcp_sum s, uint64_t v);

struct sgw_xcp_conf {
	double alpha;          /* 0.4 (stability: 0 < alpha < pi / (4 sqrt 2)) */
	double beta;           /* 0.226 (= alpha^2 sqrt 2) */
	double gamma;          /* 0.1, shuffled share of the traffic per interval */
	uint64_t d_init_ns;    /* control interval before any RTT is seen: 100 ms */
	uint64_t d_min_ns;     /* floor of the control interval: 1 ms */
	uint64_t rtt_max_ns;   /* H_rtt above is taken as this: 10 s (no GEO cap) */
	uint64_t qwin_min_ns;  /* floor of the persistent-queue window: 2 ms */
};

void
sgw_xcp_conf_default(struct sgw_xcp_conf *c);

/* 0 if usable, else -1 (alpha, beta > 0, gamma in [0, 1], 0 < d_min <= d_init
 * <= rtt_max <= 60 s, rtt_max >= 1 s). */
int
sgw_xcp_conf_check(const struct sgw_xcp_conf *c);

/*
 * Published per-packet parameters of one worker: all it needs to compute
 * feedback. Units: rtt in us, sizes and windows in bytes.
 *   p_i = xi_p * rtt_i^2 * s_i / cwnd_i      n_i = xi_n * rtt_i * s_i
 *   feedback_i = round(p_i - n_i), saturated to int32
 * The budgets (the residues of Katabi's ns-2 XCP queue: what the interval
 * may hand out in all, here this worker's part of it) bound the positive and
 * negative feedback the worker gives before the next publication. xi_p, xi_n
 * and rtt_max_us are the same for every worker; the budgets are the link's
 * budgets split in proportion to each worker's part of the last interval's
 * sum rtt s / cwnd (positive) and sum s (negative).
 */
struct sgw_xcp_params {
	uint64_t epoch;       /* control intervals completed; 0 = none yet */
	double xi_p;          /* bytes / us^2 */
	double xi_n;          /* 1 / us */
	double pos_budget;    /* bytes of positive feedback this worker may give */
	double neg_budget;    /* bytes of negative feedback */
	uint32_t rtt_max_us;  /* the clamp the accumulators apply too */
	uint32_t pad;
	/* A worker's own copy only (not published): */
	uint64_t seq;         /* the publication it came from */
	double pos_left;      /* budgets not yet spent in this interval */
	double neg_left;
};

/* Telemetry of the interval that ended last (units in the names). */
struct sgw_xcp_telem {
	uint64_t interval_ns;   /* measured length of the interval (now - start) */
	uint64_t d_ns;          /* mean RTT measured in it: the next interval */
	double capacity_Bps;    /* C given at its end, bytes/s */
	double input_Bps;       /* y / interval, bytes/s */
	double spare_Bps;       /* S = C - input */
	double queue_bytes;     /* Q: persistent queue given at its end */
	double phi_bytes;       /* alpha d S - beta Q */
	double h_bytes;         /* shuffled traffic */
	double flows;           /* estimated flows: sum rtt s / cwnd / interval */
	double rtt_flow_ns;     /* per-flow mean RTT: sum r^2 s/c / sum r s/c */
	struct sgw_xcp_sums delta; /* the sums over the interval, all workers */
};

#define SGW_XCP_MAX_WORKERS 64u

/* Controller state of one link and direction (owned by the aggregator). */
struct sgw_xcp_ctl {
	uint64_t t_start_ns;          /* start of the current interval */
	uint64_t d_ns;                /* its length: the control interval */
	uint64_t epoch;
	uint32_t n_workers;
	struct sgw_xcp_sums base;     /* total of all workers' sums at t_start */
	struct sgw_xcp_telem last;    /* the interval that ended last */
	double pos_budget;            /* the link's budgets for the current interval */
	double neg_budget;
	/*
	 * Each worker's sums at t_start, only the two its budget share is cut
	 * by (16 bytes a worker, not the 104 of all sums: a one-worker
	 * controller per satlink session pays for 64 of them)
	 */
	struct {
		uint64_t rsc;         /* SGW_XCP_S_RSC */
		uint64_t xbytes;      /* SGW_XCP_S_XBYTES */
	} wbase[SGW_XCP_MAX_WORKERS];
};

/*
 * Start a controller of n workers (1..SGW_XCP_MAX_WORKERS) at now: interval
 * d_init, parameters zero (no feedback until the first interval has been
 * measured). snaps: the workers' snapshots at now (NULL: fresh accumulators).
 * out: n parameter sets, one per worker. Returns 0, or -1 if n is out of
 * range (nothing written).
 */
int
sgw_xcp_ctl_init(const struct sgw_xcp_conf *c, struct sgw_xcp_ctl *ctl, uint64_t now,
		 const struct sgw_xcp_sums *snaps, uint32_t n, struct sgw_xcp_params *out);

/* When the current interval ends: call sgw_xcp_aggregate() at or after it. */
static inline uint64_t
sgw_xcp_ctl_deadline(const struct sgw_xcp_ctl *ctl)
{
	return ctl->t_start_ns + ctl->d_ns;
}

/*
 * End the current interval at now. snaps: snapshots of the workers'
 * accumulators (sgw_xcp_acc_read, worker w at snaps[w], n = the n given to
 * init, taken at about now; sums are cumulative, so a packet a snapshot
 * misses is counted in the next interval); capacity_Bps: the link's rate now
 * (bytes/s); queue_bytes: the persistent queue (sgw_xcp_qest_value). Pure:
 * reads *prev, writes *next and out[0..n) (next may be prev). If now <=
 * prev->t_start_ns, or n is not prev->n_workers, nothing is measured and the
 * parameters are zero.
 */
void
sgw_xcp_aggregate(const struct sgw_xcp_conf *c, const struct sgw_xcp_ctl *prev,
		  const struct sgw_xcp_sums *snaps, uint32_t n, double capacity_Bps,
		  double queue_bytes, uint64_t now, struct sgw_xcp_ctl *next,
		  struct sgw_xcp_params *out);

/*
 * Per-packet feedback (bytes) for a packet of size bytes with header values
 * rtt_us, cwnd: Katabi's formula from xi_p and xi_n alone, no budgets. Pure.
 * H_rtt = 0 gives 0; rtt is clamped to rtt_max, cwnd raised to size (a
 * window is never less than the packet in it).
 */
int32_t
sgw_xcp_feedback(const struct sgw_xcp_params *p, uint32_t size, uint32_t rtt_us,
		 uint32_t cwnd);

/*
 * Fast path of one worker for one XCP packet: add it to the worker's
 * accumulator and return its feedback: p_i limited by p->pos_left and n_i by
 * p->neg_left, both spent (p is the worker's own copy).
 */
int32_t
sgw_xcp_on_packet(struct sgw_xcp_acc *a, struct sgw_xcp_params *p, uint32_t size,
		  uint32_t rtt_us, uint32_t cwnd);

/* A packet that joins the queue without an XCP header: load, no feedback. */
void
sgw_xcp_on_other(struct sgw_xcp_acc *a, uint32_t size);

/*
 * Whole fast path on the header bytes (p, len as for sgw_xcp_parse; size is
 * the packet's length as the queue counts it): parse, accumulate, lower
 * H_feedback. Returns 1 if the header was lowered (*patch filled), 0 if not,
 * -1 if the header was refused (counted in SGW_XCP_S_BAD and as load, *err
 * says why if err is not NULL).
 */
int
sgw_xcp_process(struct sgw_xcp_acc *a, struct sgw_xcp_params *p, uint8_t xcp_proto,
		uint8_t *hdr, size_t len, uint32_t size, struct sgw_xcp_patch *patch,
		enum sgw_xcp_err *err);

/* ---- Publication (seqlock; one writer, any number of readers) ---- */

/* One per worker (each its own cache line): the aggregator writes out[w]
 * into worker w's. */
#define SGW_XCP_PUB_WORDS 6

struct sgw_xcp_pub {
	alignas(64) SGW_XCP_ATOMIC_U64 seq;  /* odd while a write is under way */
	SGW_XCP_ATOMIC_U64 w[SGW_XCP_PUB_WORDS];
};

void
sgw_xcp_pub_init(struct sgw_xcp_pub *pub, const struct sgw_xcp_params *p);

void
sgw_xcp_pub_write(struct sgw_xcp_pub *pub, const struct sgw_xcp_params *p);

/*
 * Refresh a worker's copy: if something was published since local was
 * copied and no write is under way, copy it, reset the budgets left to the
 * new budgets and return true; else leave *local and return false. Never
 * loops, never waits.
 */
bool
sgw_xcp_pub_refresh(const struct sgw_xcp_pub *pub, struct sgw_xcp_params *local);

/* ---- Persistent queue ---- */

#define SGW_XCP_QEST_SUBS 8u

/*
 * Minimum of the queue over the last propagation delay (Katabi: "the minimum
 * queue seen by an arriving packet during the last propagation delay", the
 * propagation delay being the mean RTT minus the local queueing delay). The
 * window is cut into SGW_XCP_QEST_SUBS sub-windows of window/SUBS each; the
 * value is the minimum over the current one and the SUBS - 1 before it,
 * i.e. over the last (SUBS - 1)/SUBS to 1 window. A sub-window without a
 * sample holds the last sample (the queue did not move unseen).
 */
struct sgw_xcp_qest {
	uint64_t sub_min[SGW_XCP_QEST_SUBS];
	uint64_t sub_end_ns;   /* end of the current sub-window */
	uint64_t sub_len_ns;   /* length of the sub-windows, set at each sample */
	uint64_t last;         /* last sample */
	uint32_t cur;          /* index of the current sub-window */
	uint32_t started;
};

void
sgw_xcp_qest_init(struct sgw_xcp_qest *q);

/*
 * A queue sample (bytes) at now; d_ns: the current control interval
 * (ctl->d_ns), capacity_Bps the link rate: window = max(qwin_min,
 * d - queue / C).
 */
void
sgw_xcp_qest_sample(struct sgw_xcp_qest *q, const struct sgw_xcp_conf *c, uint64_t now,
		    uint64_t queue_bytes, uint64_t d_ns, double capacity_Bps);

/* The persistent queue (bytes) at now; 0 before any sample. */
uint64_t
sgw_xcp_qest_value(const struct sgw_xcp_qest *q, uint64_t now);

#ifdef __cplusplus
}
#endif

#endif /* SGW_XCP_H */
