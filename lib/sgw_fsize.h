/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Frame-size adaptation for satlink's sender: chooses the payload bytes per
 * frame from the losses the sender sees, so that a link with bit errors gets
 * shorter frames (a frame of L bytes survives with (1 - b)^(8L)) and a link
 * whose losses do not depend on length (fades, bursts, congestion) keeps the
 * longest frames (fewer headers).
 *
 * Why two sizes at once: a loss rate measured at one size cannot tell a bit
 * error from a burst. So one packet in probe_every that would go as one
 * frame is cut into two halves, and first-transmission losses are counted
 * for the long frames and the short ones over the same period (the same
 * channel states hit both). The model
 *
 *     ln P(frame of L wire bytes arrives) = ln(1 - e) + L ln(1 - b)^8
 *
 * (e: losses that do not depend on length, b: bit error rate) is a straight
 * line in L; the two bins give its slope, and the slope alone fixes the best
 * payload s: maximise s / (s + h) x (1 - b)^(8 (s + h)), h the per-frame
 * overhead, i.e. s (s + h) = h / (-8 ln(1 - b)). The size changes only when
 * it is not the best one for any slope within three standard errors of the
 * estimate, and the best one promises more than 1 % of goodput (hysteresis):
 * length-independent losses keep the longest frames.
 *
 * Plain C11: no clock (it counts frames), no globals. docs/satlink.md,
 * "Frame size from the channel", has the measurements.
 */
#ifndef SGW_FSIZE_H
#define SGW_FSIZE_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct sgw_fsize_conf {
	uint16_t max;          /* largest payload per frame: the configured frame_size */
	uint16_t min;          /* smallest it may choose (256), <= max */
	uint16_t overhead;     /* wire bytes per frame besides its payload (headers) */
	uint16_t probe_every;  /* one single-frame packet in this many is cut in two (16) */
	uint32_t min_samples;  /* acknowledged frames per bin before a decision (1024) */
};

struct sgw_fsize_stats {
	uint64_t probes;       /* packets cut in two to measure short frames */
	uint64_t decisions;    /* estimates made (both bins full) */
	uint64_t changes;      /* decisions that changed the size */
	uint32_t ber_ppb;      /* last estimate of the bit error rate, parts per 10^9 */
};

struct sgw_fsize {
	struct sgw_fsize_conf c;
	uint16_t cur;          /* payload bytes per frame now */
	uint16_t skip;         /* packets until the next probe */
	double k;              /* -slope (ln survival per wire byte) of the last change */
	/* bin 0: long frames (> 5/8 of cur), bin 1: short (the others) */
	uint32_t n[2];
	uint32_t lost[2];
	uint64_t bytes[2];
	struct sgw_fsize_stats st;
};

/* Defaults above for a given max and overhead. */
void sgw_fsize_conf_default(struct sgw_fsize_conf *c, uint16_t max, uint16_t overhead);
/* NULL when valid, else the name of the first bad field. */
const char *sgw_fsize_conf_check(const struct sgw_fsize_conf *c);
/* Starts at max. c must be valid. */
void sgw_fsize_init(struct sgw_fsize *f, const struct sgw_fsize_conf *c);

/*
 * The fragment size for a packet of len bytes about to be cut: cur for one
 * that fits a frame; else the size that cuts it in equal frames, as many as
 * the fitted bit error rate makes cheapest (floor or ceil of len / cur, each
 * frame at most max); for a probe (about one packet in probe_every of those
 * up to max bytes that make long frames, while short frames are rare) the
 * size that cuts it in equal frames of at most half of cur.
 */
uint16_t sgw_fsize_cut(struct sgw_fsize *f, uint32_t len);

/*
 * One frame of len payload bytes acknowledged; lost: its first transmission
 * did not arrive. Decides when both bins hold min_samples; returns true when
 * the size changed (read it with sgw_fsize_now).
 */
bool sgw_fsize_sample(struct sgw_fsize *f, uint16_t len, bool lost);

static inline uint16_t
sgw_fsize_now(const struct sgw_fsize *f)
{
	return f->cur;
}

/*
 * The best payload for a loss slope (ln of survival per wire byte, <= 0) and
 * a per-frame overhead, within [min, max]. Exposed for the tests and docs.
 */
uint16_t sgw_fsize_best(double slope, uint16_t overhead, uint16_t min, uint16_t max);

#ifdef __cplusplus
}
#endif

#endif /* SGW_FSIZE_H */
