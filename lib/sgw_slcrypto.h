/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * satlink frame protection: AES-GCM (128 or 256, by key length) through Intel
 * IPsec-MB's direct GCM API, with a per-terminal key, a 96-bit nonce that
 * never repeats for a key, and an anti-replay window (docs/satlink-security.md).
 *
 * This layer knows nothing of the satlink header: the caller gives the bytes
 * to authenticate (aad, aad_len) and the payload; the layer adds its own fixed
 * fields. A sealed payload on the wire is
 *
 *   | explicit nonce (12) | ciphertext (payload_len) | tag (16) |
 *     epoch (4, BE) | D | counter (63 bits, BE)
 *
 * where the nonce is exactly the GCM IV, epoch is the sender's epoch (unique
 * and increasing per restart, supplied by the caller), D the direction bit
 * (0 hub -> terminal, 1 terminal -> hub) and counter the sender's per-context
 * frame counter. The receiver never trusts D, epoch or counter before the tag
 * has been checked, except to refuse early.
 *
 * lib/ rules hold: plain C11 (plus POSIX open/fstat/read for the key file
 * loader), no DPDK, no globals, no clock reads. Intel IPsec-MB is a plain C
 * library and is used directly from here (link with -lIPSec_MB). Memory is
 * allocated only by the *_create / keys_load / keys_parse functions; seal
 * and open never allocate.
 *
 * Threads: an engine (one IMB_MGR) and the contexts created with it belong to
 * one thread (a worker core). A key table is read-only after loading and may
 * be shared; contexts copy what they need, so the table may be freed once the
 * contexts exist.
 */
#ifndef SGW_SLCRYPTO_H
#define SGW_SLCRYPTO_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SGW_SLC_NONCE_LEN 12u    /* explicit nonce in front of the ciphertext */
#define SGW_SLC_TAG_LEN 16u      /* GCM tag after the ciphertext */
#define SGW_SLC_OVERHEAD (SGW_SLC_NONCE_LEN + SGW_SLC_TAG_LEN)
#define SGW_SLC_MAX_PAYLOAD 65535u   /* payload (and AAD) length limit */
/* The last counter value a sender may use; it refuses to send after it. */
#define SGW_SLC_COUNTER_MAX ((UINT64_C(1) << 63) - 1)

/* Replay window, in frames: a power of two in [64, 65536]. */
#define SGW_SLC_WINDOW_DEFAULT 1024u
#define SGW_SLC_WINDOW_MIN 64u
#define SGW_SLC_WINDOW_MAX 65536u

/* Key file limits. */
#define SGW_SLC_KEYFILE_MAX_BYTES (16u << 20)
#define SGW_SLC_KEYFILE_MAX_LINE 1024u
#define SGW_SLC_KEYS_MAX_ERRORS 16u  /* errors reported; the rest are counted */

/*
 * Result codes. seal and open return a length (>= 0) on success or the
 * negated code. The names (sgw_slcrypto_reason_name) are counter names and do
 * not change.
 */
enum sgw_slc_reason {
	SGW_SLC_OK = 0,
	SGW_SLC_TRUNC,        /* open: shorter than nonce + tag */
	SGW_SLC_TOO_LONG,     /* payload or AAD longer than SGW_SLC_MAX_PAYLOAD */
	SGW_SLC_BAD_DIR,      /* open: the nonce's direction bit is our own (a
			       * reflected frame, or both ends have one role) */
	SGW_SLC_STALE_EPOCH,  /* open: epoch older than the peer's current one */
	SGW_SLC_TOO_OLD,      /* open: counter behind the replay window */
	SGW_SLC_REPLAY,       /* open: counter already received */
	SGW_SLC_BAD_TAG,      /* open: authentication failed (forged, corrupted,
			       * wrong key) */
	SGW_SLC_NO_KEY,       /* the context has no key */
	SGW_SLC_UNPROTECTED,  /* a clear frame where protection is required
			       * (counted by sgw_slcrypto_refuse_clear) */
	SGW_SLC_NO_ROOM,      /* seal: out_cap < payload_len + SGW_SLC_OVERHEAD */
	SGW_SLC_EXHAUSTED,    /* seal: counter past SGW_SLC_COUNTER_MAX */
	SGW_SLC_BAD_ARG,      /* NULL pointer, or buffers overlapping other than
			       * in place */
	SGW_SLC__NUM
};

/* Counter name of a reason ("bad_tag", ...); "unknown" when out of range. */
const char *sgw_slcrypto_reason_name(int reason);

/* ---------------------------------------------------------------- engine */

/* Which IPsec-MB code path to use. AUTO: the best the CPU has. */
enum sgw_slc_arch {
	SGW_SLC_ARCH_AUTO = 0,
	SGW_SLC_ARCH_SSE,
	SGW_SLC_ARCH_AVX,
	SGW_SLC_ARCH_AVX2,
	SGW_SLC_ARCH_AVX512,
};

struct sgw_slcrypto_engine;

/*
 * One IPsec-MB manager (alloc_mb_mgr + init_mb_mgr_*), for one thread. Runs
 * the GCM specification's test cases 4 and 16 through it before returning
 * (a known-answer self-test). NULL when the CPU lacks the arch asked for, the
 * self-test fails, or there is no memory.
 */
struct sgw_slcrypto_engine *sgw_slcrypto_engine_create(enum sgw_slc_arch arch);
void sgw_slcrypto_engine_destroy(struct sgw_slcrypto_engine *eng);
/* The arch in use: "sse", "avx", "avx2", "avx512", or "unknown". */
const char *sgw_slcrypto_engine_arch(const struct sgw_slcrypto_engine *eng);

/* ------------------------------------------------------------- key table */

struct sgw_slcrypto_keys;
struct sgw_slcrypto_key;

/*
 * Key file: one key per line, "<terminal id> <hex key>", the id a decimal
 * uint32, the key 32 hex digits (AES-128) or 64 (AES-256); blank lines and
 * '#' comments (whole line or after the key) are ignored. Every error is
 * reported as "FILE:LINE: message" (or "FILE: message" for the whole file),
 * one per line in errbuf, in line order; messages never contain key
 * material. On error *out is NULL and -1 is returned; else 0.
 *
 * load: the file must be a regular file that others cannot access at all
 * (no o+rwx bits) and the group cannot write (mode & 0027 == 0); else it is
 * refused with the mode in the message, like ssh does.
 * parse: from a buffer (need not be NUL terminated); name is what errors
 * call it. No permission check.
 */
int sgw_slcrypto_keys_load(const char *path, struct sgw_slcrypto_keys **out,
			   char *errbuf, size_t errlen);
int sgw_slcrypto_keys_parse(const char *name, const char *buf, size_t len,
			    struct sgw_slcrypto_keys **out, char *errbuf, size_t errlen);
/* Wipes the key material, then frees. NULL is fine. */
void sgw_slcrypto_keys_free(struct sgw_slcrypto_keys *keys);

uint32_t sgw_slcrypto_keys_count(const struct sgw_slcrypto_keys *keys);
/* The i-th terminal id, in increasing id order (for the policy's checks). */
uint32_t sgw_slcrypto_keys_id_at(const struct sgw_slcrypto_keys *keys, uint32_t i);
/* The key of a terminal, or NULL. Valid while the table lives. */
const struct sgw_slcrypto_key *sgw_slcrypto_keys_find(const struct sgw_slcrypto_keys *keys,
						      uint32_t terminal_id);
/* 128 or 256. */
unsigned int sgw_slcrypto_key_bits(const struct sgw_slcrypto_key *key);

/* --------------------------------------------------------------- context */

enum sgw_slc_role {
	SGW_SLC_ROLE_HUB = 0,       /* sends with D = 0, receives D = 1 */
	SGW_SLC_ROLE_TERMINAL = 1,  /* sends with D = 1, receives D = 0 */
};

struct sgw_slcrypto_conf {
	enum sgw_slc_role role;  /* this end */
	/*
	 * This sender's epoch. It must be greater than every epoch this end
	 * used before with the same key (see sgw_slcrypto_next_epoch); with a
	 * fresh counter per context, that is what makes nonces unique.
	 */
	uint32_t tx_epoch;
	/* Replay window in frames; 0 means SGW_SLC_WINDOW_DEFAULT. */
	uint32_t replay_window;
	/*
	 * Receive floor: frames below (rx_min_epoch, rx_min_counter) in
	 * (epoch, counter) order are refused, as if everything up to there
	 * had been received. 0, 0 accepts any first frame. A restarted
	 * receiver can pass what sgw_slcrypto_rx_state said before.
	 */
	uint32_t rx_min_epoch;
	uint64_t rx_min_counter;
};

struct sgw_slcrypto_stats {
	uint64_t sealed;               /* frames sealed */
	uint64_t sealed_bytes;         /* payload bytes sealed */
	uint64_t opened;               /* frames authenticated and decrypted */
	uint64_t opened_bytes;
	uint64_t peer_epochs;          /* authenticated peer epoch changes */
	uint64_t tx_refused[SGW_SLC__NUM];  /* seal failures by reason */
	uint64_t rx_dropped[SGW_SLC__NUM];  /* open failures by reason */
};

struct sgw_slcrypto_ctx;

/*
 * One session: one terminal's key, this end's epoch and counter, the peer's
 * epoch and replay window, counters. The key schedule is precomputed here
 * with the engine (copied: the key table may go). key may be NULL: every
 * seal and open then fails with SGW_SLC_NO_KEY (counted). NULL on a bad conf
 * (window not a power of two in range, role unknown) or no memory.
 */
struct sgw_slcrypto_ctx *sgw_slcrypto_ctx_create(struct sgw_slcrypto_engine *eng,
						 const struct sgw_slcrypto_key *key,
						 const struct sgw_slcrypto_conf *conf);
/* Wipes the key schedule, then frees. NULL is fine. */
void sgw_slcrypto_ctx_destroy(struct sgw_slcrypto_ctx *ctx);

/*
 * Seal: out receives nonce || ciphertext || tag, payload_len +
 * SGW_SLC_OVERHEAD bytes, which is returned. In place: payload == out +
 * SGW_SLC_NONCE_LEN (the caller leaves 12 bytes of headroom in front of the
 * payload and 16 bytes of tailroom after it); any other overlap of payload or
 * aad with out is refused (SGW_SLC_BAD_ARG). Every call uses a new counter;
 * a retransmission must be sealed again, not resent.
 * Errors (negated, counted in tx_refused): NO_KEY, TOO_LONG, NO_ROOM,
 * EXHAUSTED, BAD_ARG. On error nothing is written and no counter is used.
 */
int sgw_slcrypto_seal(struct sgw_slcrypto_ctx *ctx, const uint8_t *aad, uint32_t aad_len,
		      const uint8_t *payload, uint32_t payload_len,
		      uint8_t *out, uint32_t out_cap);

/*
 * Open: frame is nonce || ciphertext || tag (len bytes); out receives the
 * plaintext, len - SGW_SLC_OVERHEAD bytes, which is returned. In place: out
 * == frame + SGW_SLC_NONCE_LEN; other overlaps are refused. Order: length,
 * direction, epoch and window checks (no crypto), then GCM; the window and
 * the peer epoch move only after the tag checks out.
 * Errors (negated, counted in rx_dropped): NO_KEY, TRUNC, TOO_LONG, BAD_DIR,
 * STALE_EPOCH, TOO_OLD, REPLAY, BAD_TAG, BAD_ARG. After BAD_TAG the
 * plaintext area out[0 .. len - 28) is zeroed (in place, the ciphertext is
 * gone); after any other error out is untouched. Plaintext is never
 * returned from a frame that did not authenticate.
 */
int sgw_slcrypto_open(struct sgw_slcrypto_ctx *ctx, const uint8_t *aad, uint32_t aad_len,
		      const uint8_t *frame, uint32_t len, uint8_t *out);

/* Count a clear frame that arrived where protection is required. */
int sgw_slcrypto_refuse_clear(struct sgw_slcrypto_ctx *ctx);

void sgw_slcrypto_get_stats(const struct sgw_slcrypto_ctx *ctx, struct sgw_slcrypto_stats *st);

/* This end's epoch and the counter the next seal will use. */
void sgw_slcrypto_tx_state(const struct sgw_slcrypto_ctx *ctx, uint32_t *epoch,
			   uint64_t *next_counter);
/*
 * Move the send counter forward to next_counter (never back: -1 if it is
 * lower than the current one or above SGW_SLC_COUNTER_MAX + 1). For a
 * sender resuming past counters it persisted, and for tests.
 */
int sgw_slcrypto_tx_skip(struct sgw_slcrypto_ctx *ctx, uint64_t next_counter);
/*
 * The peer's current epoch and the highest counter authenticated in it.
 * Returns 0 if nothing is known (no frame yet and a 0, 0 floor), else 1.
 */
int sgw_slcrypto_rx_state(const struct sgw_slcrypto_ctx *ctx, uint32_t *epoch,
			  uint64_t *top_counter);

/*
 * The epoch for a new sending context: max(prev + 1, now_unix_s), so it
 * increases across restarts with a persisted prev even when the clock steps
 * back, and still increases without prev (0) if the clock is right and
 * restarts are >= 1 s apart. -1 when the 32-bit space is used up.
 */
int sgw_slcrypto_next_epoch(uint32_t prev, uint64_t now_unix_s, uint32_t *out);

#ifdef __cplusplus
}
#endif

#endif /* SGW_SLCRYPTO_H */
