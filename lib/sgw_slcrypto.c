/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * satlink frame protection (contract: sgw_slcrypto.h, design and wire format:
 * docs/satlink-security.md).
 *
 * AES-GCM comes from Intel IPsec-MB 1.3 (a plain C library, linked with
 * -lIPSec_MB), through its direct GCM API: IMB_AES{128,256}_GCM_PRE once per
 * context to precompute the key schedule (struct gcm_key_data), then the
 * one-shot IMB_AES{128,256}_GCM_ENC / _DEC per frame. One IMB_MGR per engine
 * (sgw_gcm.h: arch choice and known-answer test shared with the ESP of
 * sgw_esp.c), one engine per thread.
 *
 * Open checks what it can without crypto first (length, direction bit,
 * epoch, replay window), then decrypts and recomputes the tag in one pass,
 * compares the tags in constant time and, on a mismatch, zeroes the
 * plaintext it wrote. The window and the peer epoch move only after a frame
 * authenticates, so a forged frame changes nothing but a counter.
 *
 * The replay window is RFC 6479's: a ring of 64-bit words, a power of two of
 * them, at least one word more than the window, so moving the top forward
 * clears whole words and never shifts bits.
 *
 * Plain C11 plus POSIX (open, fstat, read) for the key file; no DPDK, no
 * globals (const tables only), no clock reads. Allocation happens only in
 * the create, load and parse functions.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <intel-ipsec-mb.h>

#include "sgw_hex.h"
#include "sgw_gcm.h"
#include "sgw_slcrypto.h"

_Static_assert((int)SGW_SLC_ARCH_AUTO == (int)SGW_GCM_ARCH_AUTO &&
	       (int)SGW_SLC_ARCH_SSE == (int)SGW_GCM_ARCH_SSE &&
	       (int)SGW_SLC_ARCH_AVX == (int)SGW_GCM_ARCH_AVX &&
	       (int)SGW_SLC_ARCH_AVX2 == (int)SGW_GCM_ARCH_AVX2 &&
	       (int)SGW_SLC_ARCH_AVX512 == (int)SGW_GCM_ARCH_AVX512,
	       "sgw_slc_arch is passed to sgw_gcm_mgr_create as is");

#define SLC_DIR_BIT (UINT64_C(1) << 63)
#define SLC_KEY_MAX 32u

/* ------------------------------------------------------------ reason names */

static const char *const slc_reason_names[SGW_SLC__NUM] = {
	[SGW_SLC_OK] = "ok",
	[SGW_SLC_TRUNC] = "trunc",
	[SGW_SLC_TOO_LONG] = "too_long",
	[SGW_SLC_BAD_DIR] = "bad_dir",
	[SGW_SLC_STALE_EPOCH] = "stale_epoch",
	[SGW_SLC_TOO_OLD] = "too_old",
	[SGW_SLC_REPLAY] = "replay",
	[SGW_SLC_BAD_TAG] = "bad_tag",
	[SGW_SLC_NO_KEY] = "no_key",
	[SGW_SLC_UNPROTECTED] = "unprotected",
	[SGW_SLC_NO_ROOM] = "no_room",
	[SGW_SLC_EXHAUSTED] = "exhausted",
	[SGW_SLC_BAD_ARG] = "bad_arg",
};

const char *
sgw_slcrypto_reason_name(int reason)
{
	if (reason < 0)
		reason = -reason;
	if (reason >= SGW_SLC__NUM)
		return "unknown";
	return slc_reason_names[reason];
}

/* --------------------------------------------------------------- helpers */

static inline void
slc_put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static inline void
slc_put_be64(uint8_t *p, uint64_t v)
{
	slc_put_be32(p, (uint32_t)(v >> 32));
	slc_put_be32(p + 4, (uint32_t)v);
}

static inline uint32_t
slc_get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline uint64_t
slc_get_be64(const uint8_t *p)
{
	return (uint64_t)slc_get_be32(p) << 32 | slc_get_be32(p + 4);
}

/* Do [a, a + alen) and [b, b + blen) share a byte? */
static inline int
slc_overlap(const void *a, size_t alen, const void *b, size_t blen)
{
	uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;

	if (alen == 0 || blen == 0)
		return 0;
	return x < y + blen && y < x + alen;
}

/* Constant time: 0 when equal. */
static inline unsigned int
slc_tag_diff(const uint8_t *a, const uint8_t *b)
{
	unsigned int d = 0;
	unsigned int i;

	for (i = 0; i < SGW_SLC_TAG_LEN; i++)
		d |= (unsigned int)(a[i] ^ b[i]);
	return d;
}

static int
slc_is_pow2(uint32_t v)
{
	return v != 0 && (v & (v - 1)) == 0;
}

static uint32_t
slc_pow2_ceil(uint32_t v)
{
	uint32_t p = 1;

	while (p < v)
		p <<= 1;
	return p;
}

/* ---------------------------------------------------------------- engine */

struct sgw_slcrypto_engine {
	IMB_MGR *mgr;
	enum sgw_slc_arch arch;
};

struct sgw_slcrypto_engine *
sgw_slcrypto_engine_create(enum sgw_slc_arch arch)
{
	struct sgw_slcrypto_engine *eng;
	enum sgw_gcm_arch used = SGW_GCM_ARCH_AUTO;

	eng = calloc(1, sizeof(*eng));
	if (eng == NULL)
		return NULL;
	/* sgw_slc_arch and sgw_gcm_arch name the same archs with the same values */
	eng->mgr = sgw_gcm_mgr_create((enum sgw_gcm_arch)arch, &used);
	if (eng->mgr == NULL) {
		free(eng);
		return NULL;
	}
	eng->arch = (enum sgw_slc_arch)used;
	return eng;
}

void
sgw_slcrypto_engine_destroy(struct sgw_slcrypto_engine *eng)
{
	if (eng == NULL)
		return;
	sgw_gcm_mgr_destroy(eng->mgr);
	free(eng);
}

const char *
sgw_slcrypto_engine_arch(const struct sgw_slcrypto_engine *eng)
{
	switch (eng->arch) {
	case SGW_SLC_ARCH_SSE:
		return "sse";
	case SGW_SLC_ARCH_AVX:
		return "avx";
	case SGW_SLC_ARCH_AVX2:
		return "avx2";
	case SGW_SLC_ARCH_AVX512:
		return "avx512";
	default:
		return "unknown";
	}
}

/* ------------------------------------------------------------- key table */

struct sgw_slcrypto_key {
	uint32_t id;
	uint32_t line;          /* where it was defined (for duplicate errors) */
	uint32_t len;           /* 16 or 32 */
	uint8_t key[SLC_KEY_MAX];
};

struct sgw_slcrypto_keys {
	uint32_t n;
	struct sgw_slcrypto_key *k;     /* sorted by id */
};

/* Errors are gathered, sorted by line, then written to errbuf. */
struct slc_err {
	uint32_t line;          /* 0: the whole file */
	uint32_t seq;           /* order found, for a stable sort */
	char msg[160];
};

struct slc_errs {
	const char *name;
	uint32_t n;
	uint32_t dropped;
	struct slc_err e[SGW_SLC_KEYS_MAX_ERRORS];
};

static void
slc_err_add(struct slc_errs *es, uint32_t line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void
slc_err_add(struct slc_errs *es, uint32_t line, const char *fmt, ...)
{
	struct slc_err *e;
	va_list ap;

	if (es->n == SGW_SLC_KEYS_MAX_ERRORS) {
		es->dropped++;
		return;
	}
	e = &es->e[es->n];
	e->line = line;
	e->seq = es->n;
	es->n++;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
}

static int
slc_err_cmp(const void *a, const void *b)
{
	const struct slc_err *x = a, *y = b;

	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void
slc_err_format(struct slc_errs *es, char *errbuf, size_t errlen)
{
	size_t used = 0;
	uint32_t i;
	int w;

	if (errbuf == NULL || errlen == 0)
		return;
	errbuf[0] = '\0';
	qsort(es->e, es->n, sizeof(es->e[0]), slc_err_cmp);
	for (i = 0; i <= es->n && used < errlen; i++) {
		if (i == es->n) {
			if (es->dropped == 0)
				break;
			w = snprintf(errbuf + used, errlen - used, "%s: %u more errors\n",
				     es->name, es->dropped);
		} else if (es->e[i].line == 0) {
			w = snprintf(errbuf + used, errlen - used, "%s: %s\n", es->name,
				     es->e[i].msg);
		} else {
			w = snprintf(errbuf + used, errlen - used, "%s:%u: %s\n", es->name,
				     es->e[i].line, es->e[i].msg);
		}
		if (w < 0)
			break;
		used += (size_t)w;
	}
}

static int
slc_is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/*
 * One line (without its '\n'). Fills *k and returns 1 for a key line, 0 for a
 * blank or comment line, -1 after adding an error. Messages carry positions
 * and lengths, never the key's characters.
 */
static int
slc_parse_line(const char *s, size_t len, uint32_t line, struct slc_errs *es,
	       struct sgw_slcrypto_key *k)
{
	size_t i = 0, id_start, key_start, key_end, j;
	uint64_t id = 0;
	int bad = 0;

	while (i < len && slc_is_space(s[i]))
		i++;
	if (i == len || s[i] == '#')
		return 0;

	/* terminal id */
	id_start = i;
	while (i < len && !slc_is_space(s[i]) && s[i] != '#') {
		if (s[i] < '0' || s[i] > '9' || i - id_start >= 10)
			bad = 1;
		else
			id = id * 10 + (uint64_t)(s[i] - '0');
		i++;
	}
	if (bad || id > UINT32_MAX) {
		slc_err_add(es, line, "terminal id must be a decimal number from 0 to %u",
			    UINT32_MAX);
		return -1;
	}
	while (i < len && slc_is_space(s[i]))
		i++;
	if (i == len || s[i] == '#') {
		slc_err_add(es, line, "terminal %u: no key (want \"<terminal id> <hex key>\")",
			    (uint32_t)id);
		return -1;
	}

	/* key */
	key_start = i;
	while (i < len && !slc_is_space(s[i]) && s[i] != '#')
		i++;
	key_end = i;
	while (i < len && slc_is_space(s[i]))
		i++;
	if (i < len && s[i] != '#') {
		slc_err_add(es, line, "terminal %u: unexpected text after the key",
			    (uint32_t)id);
		return -1;
	}
	for (j = key_start; j < key_end; j++) {
		if (sgw_hexval(s[j]) < 0) {
			slc_err_add(es, line,
				    "terminal %u: key character %zu is not a hex digit",
				    (uint32_t)id, j - key_start + 1);
			return -1;
		}
	}
	if ((key_end - key_start) % 2 != 0) {
		slc_err_add(es, line, "terminal %u: key has an odd number of hex digits (%zu)",
			    (uint32_t)id, key_end - key_start);
		return -1;
	}
	if ((key_end - key_start) / 2 != 16 && (key_end - key_start) / 2 != 32) {
		slc_err_add(es, line,
			    "terminal %u: key is %zu bytes; want 16 (AES-128) or 32 (AES-256)",
			    (uint32_t)id, (key_end - key_start) / 2);
		return -1;
	}
	k->id = (uint32_t)id;
	k->line = line;
	k->len = (uint32_t)((key_end - key_start) / 2);
	bad = 1;
	for (j = 0; j < k->len; j++) {
		k->key[j] = (uint8_t)(sgw_hexval(s[key_start + 2 * j]) << 4 |
				      sgw_hexval(s[key_start + 2 * j + 1]));
		if (k->key[j] != 0)
			bad = 0;
	}
	if (bad) {
		imb_clear_mem(k, sizeof(*k));
		slc_err_add(es, line, "terminal %u: key is all zeros", (uint32_t)id);
		return -1;
	}
	return 1;
}

static int
slc_key_cmp(const void *a, const void *b)
{
	const struct sgw_slcrypto_key *x = a, *y = b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

static int
slc_key_bytes_cmp(const void *a, const void *b)
{
	const struct sgw_slcrypto_key *x = *(const struct sgw_slcrypto_key *const *)a;
	const struct sgw_slcrypto_key *y = *(const struct sgw_slcrypto_key *const *)b;
	int d;

	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	d = memcmp(x->key, y->key, x->len);
	if (d != 0)
		return d;
	return x->line < y->line ? -1 : x->line > y->line;
}

/*
 * Two terminals with one key would reuse nonces: the hub's contexts for both
 * send with the same epoch, direction and counters. Refused, by line.
 */
static void
slc_check_shared(const struct sgw_slcrypto_keys *keys, struct slc_errs *es)
{
	const struct sgw_slcrypto_key **v;
	uint32_t i, first = 0;

	if (keys->n < 2)
		return;
	v = malloc((size_t)keys->n * sizeof(*v));
	if (v == NULL) {
		slc_err_add(es, 0, "out of memory");
		return;
	}
	for (i = 0; i < keys->n; i++)
		v[i] = &keys->k[i];
	qsort(v, keys->n, sizeof(*v), slc_key_bytes_cmp);
	for (i = 1; i < keys->n; i++) {
		if (v[i]->len != v[first]->len ||
		    memcmp(v[i]->key, v[first]->key, v[i]->len) != 0) {
			first = i;
			continue;
		}
		slc_err_add(es, v[i]->line,
			    "terminal %u has the same key as terminal %u (line %u); "
			    "every terminal needs its own",
			    v[i]->id, v[first]->id, v[first]->line);
	}
	free(v);
}

static int
slc_keys_parse(struct slc_errs *es, const char *buf, size_t len,
	       struct sgw_slcrypto_keys **out)
{
	struct sgw_slcrypto_keys *keys = NULL;
	size_t pos = 0, eol, cap = 1;
	uint32_t line = 0, i, n;

	*out = NULL;
	for (pos = 0; pos < len; pos++)
		cap += buf[pos] == '\n';

	keys = calloc(1, sizeof(*keys));
	if (keys == NULL || (keys->k = calloc(cap, sizeof(keys->k[0]))) == NULL) {
		free(keys);
		slc_err_add(es, 0, "out of memory");
		return -1;
	}
	for (pos = 0; pos < len; pos = eol + 1) {
		int r;

		line++;
		eol = pos;
		while (eol < len && buf[eol] != '\n')
			eol++;
		if (memchr(buf + pos, '\0', eol - pos) != NULL) {
			slc_err_add(es, line, "NUL byte in the line");
			continue;
		}
		if (eol - pos > SGW_SLC_KEYFILE_MAX_LINE) {
			slc_err_add(es, line, "line longer than %u bytes",
				    SGW_SLC_KEYFILE_MAX_LINE);
			continue;
		}
		r = slc_parse_line(buf + pos, eol - pos, line, es, &keys->k[keys->n]);
		if (r > 0)
			keys->n++;
	}

	/* Duplicates: sorted by (id, line), a repeat follows its first. */
	qsort(keys->k, keys->n, sizeof(keys->k[0]), slc_key_cmp);
	for (i = 1, n = keys->n ? 1 : 0; i < keys->n; i++) {
		if (keys->k[i].id == keys->k[n - 1].id)
			slc_err_add(es, keys->k[i].line,
				    "terminal %u already has a key (line %u)",
				    keys->k[i].id, keys->k[n - 1].line);
		else
			keys->k[n++] = keys->k[i];
	}
	for (i = n; i < keys->n; i++)
		imb_clear_mem(&keys->k[i], sizeof(keys->k[i]));
	keys->n = n;
	slc_check_shared(keys, es);
	if (keys->n == 0 && es->n == 0)
		slc_err_add(es, 0, "no keys");
	if (es->n != 0 || es->dropped != 0) {
		sgw_slcrypto_keys_free(keys);
		return -1;
	}
	*out = keys;
	return 0;
}

int
sgw_slcrypto_keys_parse(const char *name, const char *buf, size_t len,
			struct sgw_slcrypto_keys **out, char *errbuf, size_t errlen)
{
	struct slc_errs es;
	int r;

	memset(&es, 0, sizeof(es));
	es.name = name != NULL ? name : "(keys)";
	if (out == NULL)
		return -1;
	*out = NULL;
	if (buf == NULL && len != 0) {
		slc_err_add(&es, 0, "no buffer");
		slc_err_format(&es, errbuf, errlen);
		return -1;
	}
	if (len > SGW_SLC_KEYFILE_MAX_BYTES) {
		slc_err_add(&es, 0, "larger than %u bytes", SGW_SLC_KEYFILE_MAX_BYTES);
		slc_err_format(&es, errbuf, errlen);
		return -1;
	}
	r = slc_keys_parse(&es, buf, len, out);
	if (r != 0)
		slc_err_format(&es, errbuf, errlen);
	else if (errbuf != NULL && errlen != 0)
		errbuf[0] = '\0';
	return r;
}

int
sgw_slcrypto_keys_load(const char *path, struct sgw_slcrypto_keys **out, char *errbuf,
		       size_t errlen)
{
	struct slc_errs es;
	struct stat st;
	char *buf = NULL;
	size_t got = 0, size = 0;
	int fd, r = -1;

	memset(&es, 0, sizeof(es));
	es.name = path != NULL ? path : "(null)";
	if (out == NULL)
		return -1;
	*out = NULL;
	if (path == NULL) {
		slc_err_add(&es, 0, "no key file named");
		goto done;
	}
	/*
	 * Only a regular file: a FIFO would block the control thread (and every
	 * later reload) in open or read, a device could be anything. Refused
	 * before opening it, and opened non-blocking so that a file swapped for
	 * a FIFO in between cannot block either; fstat checks what was opened.
	 */
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		slc_err_add(&es, 0, "not a regular file");
		goto done;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		slc_err_add(&es, 0, "cannot open: %s", strerror(errno));
		goto done;
	}
	if (fstat(fd, &st) != 0) {
		slc_err_add(&es, 0, "cannot stat: %s", strerror(errno));
		goto out_close;
	}
	if (!S_ISREG(st.st_mode)) {
		slc_err_add(&es, 0, "not a regular file");
		goto out_close;
	}
	if ((st.st_mode & (S_IRWXO | S_IWGRP)) != 0) {
		slc_err_add(&es, 0,
			    "permissions %04o are too open: a key file must not be "
			    "accessible by others nor writable by its group (chmod 600 or 640)",
			    (unsigned int)(st.st_mode & 07777));
		goto out_close;
	}
	if ((uint64_t)st.st_size > SGW_SLC_KEYFILE_MAX_BYTES) {
		slc_err_add(&es, 0, "larger than %u bytes", SGW_SLC_KEYFILE_MAX_BYTES);
		goto out_close;
	}
	size = (size_t)st.st_size;
	buf = malloc(size + 1);
	if (buf == NULL) {
		slc_err_add(&es, 0, "out of memory");
		goto out_close;
	}
	while (got < size) {
		ssize_t n = read(fd, buf + got, size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			slc_err_add(&es, 0, "cannot read: %s", strerror(errno));
			goto out_close;
		}
		if (n == 0)
			break;  /* shrank meanwhile: parse what is there */
		got += (size_t)n;
	}
	r = slc_keys_parse(&es, buf, got, out);
out_close:
	close(fd);
done:
	if (buf != NULL) {
		imb_clear_mem(buf, size + 1);
		free(buf);
	}
	if (r != 0)
		slc_err_format(&es, errbuf, errlen);
	else if (errbuf != NULL && errlen != 0)
		errbuf[0] = '\0';
	return r;
}

void
sgw_slcrypto_keys_free(struct sgw_slcrypto_keys *keys)
{
	if (keys == NULL)
		return;
	if (keys->k != NULL) {
		imb_clear_mem(keys->k, (size_t)keys->n * sizeof(keys->k[0]));
		free(keys->k);
	}
	free(keys);
}

uint32_t
sgw_slcrypto_keys_count(const struct sgw_slcrypto_keys *keys)
{
	return keys != NULL ? keys->n : 0;
}

uint32_t
sgw_slcrypto_keys_id_at(const struct sgw_slcrypto_keys *keys, uint32_t i)
{
	return keys != NULL && i < keys->n ? keys->k[i].id : 0;
}

const struct sgw_slcrypto_key *
sgw_slcrypto_keys_find(const struct sgw_slcrypto_keys *keys, uint32_t terminal_id)
{
	uint32_t lo = 0, hi;

	if (keys == NULL)
		return NULL;
	hi = keys->n;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (keys->k[mid].id == terminal_id)
			return &keys->k[mid];
		if (keys->k[mid].id < terminal_id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

unsigned int
sgw_slcrypto_key_bits(const struct sgw_slcrypto_key *key)
{
	return key != NULL ? key->len * 8 : 0;
}

/* --------------------------------------------------------------- context */

struct sgw_slcrypto_ctx {
	struct gcm_key_data kd;         /* first: 64-byte aligned allocation */
	IMB_MGR *mgr;
	uint32_t key_len;               /* 16, 32, or 0: no key */

	/* send */
	uint32_t tx_epoch;
	uint64_t tx_dir;                /* SLC_DIR_BIT or 0 */
	uint64_t tx_next;               /* next counter; > COUNTER_MAX: exhausted */

	/* receive */
	uint64_t rx_dir;
	uint32_t rx_epoch;              /* the peer's current epoch */
	uint32_t rx_valid;              /* rx_top and the bitmap mean something */
	uint64_t rx_top;                /* highest counter authenticated in rx_epoch */
	uint32_t win;                   /* window, frames */
	uint32_t words_mask;            /* bitmap words - 1 */

	struct sgw_slcrypto_stats st;
	uint64_t bm[];                  /* words_mask + 1 words */
};

struct sgw_slcrypto_ctx *
sgw_slcrypto_ctx_create(struct sgw_slcrypto_engine *eng, const struct sgw_slcrypto_key *key,
			const struct sgw_slcrypto_conf *conf)
{
	struct sgw_slcrypto_ctx *ctx;
	uint32_t win, words;
	size_t size;

	if (eng == NULL || conf == NULL)
		return NULL;
	if (conf->role != SGW_SLC_ROLE_HUB && conf->role != SGW_SLC_ROLE_TERMINAL)
		return NULL;
	win = conf->replay_window != 0 ? conf->replay_window : SGW_SLC_WINDOW_DEFAULT;
	if (!slc_is_pow2(win) || win < SGW_SLC_WINDOW_MIN || win > SGW_SLC_WINDOW_MAX)
		return NULL;
	if (conf->rx_min_counter > SGW_SLC_COUNTER_MAX + 1)
		return NULL;
	if (key != NULL && key->len != 16 && key->len != 32)
		return NULL;
	/* At least one word more than the window: see the file comment. */
	words = slc_pow2_ceil(win / 64 + 1);
	size = sizeof(*ctx) + (size_t)words * sizeof(uint64_t);
	size = (size + 63) & ~(size_t)63;
	ctx = aligned_alloc(64, size);
	if (ctx == NULL)
		return NULL;
	memset(ctx, 0, size);
	ctx->mgr = eng->mgr;
	if (key != NULL) {
		ctx->key_len = key->len;
		if (key->len == 16)
			IMB_AES128_GCM_PRE(eng->mgr, key->key, &ctx->kd);
		else
			IMB_AES256_GCM_PRE(eng->mgr, key->key, &ctx->kd);
	}
	ctx->tx_epoch = conf->tx_epoch;
	ctx->tx_dir = conf->role == SGW_SLC_ROLE_TERMINAL ? SLC_DIR_BIT : 0;
	ctx->rx_dir = conf->role == SGW_SLC_ROLE_TERMINAL ? 0 : SLC_DIR_BIT;
	ctx->tx_next = 0;
	ctx->win = win;
	ctx->words_mask = words - 1;
	ctx->rx_epoch = conf->rx_min_epoch;
	if (conf->rx_min_counter > 0) {
		/* As if every counter below the floor had been received. */
		ctx->rx_valid = 1;
		ctx->rx_top = conf->rx_min_counter - 1;
		memset(ctx->bm, 0xff, (size_t)words * sizeof(uint64_t));
	}
	return ctx;
}

void
sgw_slcrypto_ctx_destroy(struct sgw_slcrypto_ctx *ctx)
{
	if (ctx == NULL)
		return;
	imb_clear_mem(&ctx->kd, sizeof(ctx->kd));
	free(ctx);
}

static inline int
slc_tx_fail(struct sgw_slcrypto_ctx *ctx, enum sgw_slc_reason r)
{
	ctx->st.tx_refused[r]++;
	return -(int)r;
}

static inline int
slc_rx_fail(struct sgw_slcrypto_ctx *ctx, enum sgw_slc_reason r)
{
	ctx->st.rx_dropped[r]++;
	return -(int)r;
}

int
sgw_slcrypto_seal(struct sgw_slcrypto_ctx *ctx, const uint8_t *aad, uint32_t aad_len,
		  const uint8_t *payload, uint32_t payload_len, uint8_t *out, uint32_t out_cap)
{
	struct gcm_context_data gc;
	uint8_t iv[SGW_SLC_NONCE_LEN];
	uint8_t *ct, *tag;
	uint32_t total;

	if (ctx == NULL)
		return -SGW_SLC_BAD_ARG;
	if (ctx->key_len == 0)
		return slc_tx_fail(ctx, SGW_SLC_NO_KEY);
	if (out == NULL || (payload == NULL && payload_len != 0) || (aad == NULL && aad_len != 0))
		return slc_tx_fail(ctx, SGW_SLC_BAD_ARG);
	if (payload_len > SGW_SLC_MAX_PAYLOAD || aad_len > SGW_SLC_MAX_PAYLOAD)
		return slc_tx_fail(ctx, SGW_SLC_TOO_LONG);
	total = payload_len + SGW_SLC_OVERHEAD;
	if (out_cap < total)
		return slc_tx_fail(ctx, SGW_SLC_NO_ROOM);
	ct = out + SGW_SLC_NONCE_LEN;
	tag = ct + payload_len;
	/* In place (payload == ct) or apart; never partly overlapping. */
	if ((payload != ct && slc_overlap(payload, payload_len, out, total)) ||
	    slc_overlap(aad, aad_len, out, total))
		return slc_tx_fail(ctx, SGW_SLC_BAD_ARG);
	if (ctx->tx_next > SGW_SLC_COUNTER_MAX)
		return slc_tx_fail(ctx, SGW_SLC_EXHAUSTED);

	slc_put_be32(iv, ctx->tx_epoch);
	slc_put_be64(iv + 4, ctx->tx_dir | ctx->tx_next);
	ctx->tx_next++;
	memcpy(out, iv, sizeof(iv));
	if (payload_len == 0)
		payload = ct;   /* IPsec-MB wants real pointers even for 0 bytes */
	if (aad_len == 0)
		aad = iv;
	if (ctx->key_len == 16)
		IMB_AES128_GCM_ENC(ctx->mgr, &ctx->kd, &gc, ct, payload, payload_len, iv, aad,
				   aad_len, tag, SGW_SLC_TAG_LEN);
	else
		IMB_AES256_GCM_ENC(ctx->mgr, &ctx->kd, &gc, ct, payload, payload_len, iv, aad,
				   aad_len, tag, SGW_SLC_TAG_LEN);
	ctx->st.sealed++;
	ctx->st.sealed_bytes += payload_len;
	return (int)total;
}

/* Replay window check for counter c in the current epoch: OK, TOO_OLD or REPLAY. */
static inline enum sgw_slc_reason
slc_window_check(const struct sgw_slcrypto_ctx *ctx, uint64_t c)
{
	uint64_t w;

	if (!ctx->rx_valid || c > ctx->rx_top)
		return SGW_SLC_OK;
	if (ctx->rx_top - c >= ctx->win)
		return SGW_SLC_TOO_OLD;
	w = ctx->bm[(c >> 6) & ctx->words_mask];
	if ((w >> (c & 63)) & 1)
		return SGW_SLC_REPLAY;
	return SGW_SLC_OK;
}

/* Record counter c (authenticated, passed slc_window_check). */
static inline void
slc_window_update(struct sgw_slcrypto_ctx *ctx, uint64_t c)
{
	uint64_t cur, nw, i, n;

	if (!ctx->rx_valid) {
		memset(ctx->bm, 0, ((size_t)ctx->words_mask + 1) * sizeof(uint64_t));
		ctx->rx_valid = 1;
		ctx->rx_top = c;
	} else if (c > ctx->rx_top) {
		cur = ctx->rx_top >> 6;
		nw = c >> 6;
		n = nw - cur;
		if (n > (uint64_t)ctx->words_mask + 1)
			n = (uint64_t)ctx->words_mask + 1;
		for (i = 1; i <= n; i++)
			ctx->bm[(cur + i) & ctx->words_mask] = 0;
		ctx->rx_top = c;
	}
	ctx->bm[(c >> 6) & ctx->words_mask] |= UINT64_C(1) << (c & 63);
}

int
sgw_slcrypto_open(struct sgw_slcrypto_ctx *ctx, const uint8_t *aad, uint32_t aad_len,
		  const uint8_t *frame, uint32_t len, uint8_t *out)
{
	struct gcm_context_data gc;
	uint8_t iv[SGW_SLC_NONCE_LEN];
	uint8_t tag[SGW_SLC_TAG_LEN];
	const uint8_t *ct;
	uint32_t epoch, plen;
	uint64_t w, c;
	int new_epoch;
	enum sgw_slc_reason r;

	if (ctx == NULL)
		return -SGW_SLC_BAD_ARG;
	if (ctx->key_len == 0)
		return slc_rx_fail(ctx, SGW_SLC_NO_KEY);
	if (out == NULL || (frame == NULL && len != 0) || (aad == NULL && aad_len != 0))
		return slc_rx_fail(ctx, SGW_SLC_BAD_ARG);
	if (len < SGW_SLC_OVERHEAD)
		return slc_rx_fail(ctx, SGW_SLC_TRUNC);
	plen = len - SGW_SLC_OVERHEAD;
	if (plen > SGW_SLC_MAX_PAYLOAD || aad_len > SGW_SLC_MAX_PAYLOAD)
		return slc_rx_fail(ctx, SGW_SLC_TOO_LONG);
	ct = frame + SGW_SLC_NONCE_LEN;
	/* In place (out == ct) or apart. The tag and nonce are read-only. */
	if ((out != ct && slc_overlap(out, plen, frame, len)) ||
	    slc_overlap(out, plen, aad, aad_len))
		return slc_rx_fail(ctx, SGW_SLC_BAD_ARG);

	memcpy(iv, frame, sizeof(iv));
	epoch = slc_get_be32(iv);
	w = slc_get_be64(iv + 4);
	if ((w & SLC_DIR_BIT) != ctx->rx_dir)
		return slc_rx_fail(ctx, SGW_SLC_BAD_DIR);
	c = w & ~SLC_DIR_BIT;
	if (epoch < ctx->rx_epoch)
		return slc_rx_fail(ctx, SGW_SLC_STALE_EPOCH);
	new_epoch = epoch > ctx->rx_epoch;
	if (!new_epoch) {
		r = slc_window_check(ctx, c);
		if (r != SGW_SLC_OK)
			return slc_rx_fail(ctx, r);
	}

	if (aad_len == 0)
		aad = iv;
	if (ctx->key_len == 16)
		IMB_AES128_GCM_DEC(ctx->mgr, &ctx->kd, &gc, out, ct, plen, iv, aad, aad_len,
				   tag, SGW_SLC_TAG_LEN);
	else
		IMB_AES256_GCM_DEC(ctx->mgr, &ctx->kd, &gc, out, ct, plen, iv, aad, aad_len,
				   tag, SGW_SLC_TAG_LEN);
	if (slc_tag_diff(tag, ct + plen) != 0) {
		imb_clear_mem(out, plen);
		return slc_rx_fail(ctx, SGW_SLC_BAD_TAG);
	}

	if (new_epoch) {
		/* Authenticated: the peer restarted. A new window for its epoch. */
		ctx->rx_epoch = epoch;
		ctx->rx_valid = 0;
		ctx->st.peer_epochs++;
	}
	slc_window_update(ctx, c);
	ctx->st.opened++;
	ctx->st.opened_bytes += plen;
	return (int)plen;
}

int
sgw_slcrypto_refuse_clear(struct sgw_slcrypto_ctx *ctx)
{
	if (ctx == NULL)
		return -SGW_SLC_BAD_ARG;
	return slc_rx_fail(ctx, SGW_SLC_UNPROTECTED);
}

void
sgw_slcrypto_get_stats(const struct sgw_slcrypto_ctx *ctx, struct sgw_slcrypto_stats *st)
{
	*st = ctx->st;
}

void
sgw_slcrypto_tx_state(const struct sgw_slcrypto_ctx *ctx, uint32_t *epoch,
		      uint64_t *next_counter)
{
	if (epoch != NULL)
		*epoch = ctx->tx_epoch;
	if (next_counter != NULL)
		*next_counter = ctx->tx_next;
}

int
sgw_slcrypto_tx_skip(struct sgw_slcrypto_ctx *ctx, uint64_t next_counter)
{
	if (next_counter < ctx->tx_next || next_counter > SGW_SLC_COUNTER_MAX + 1)
		return -1;
	ctx->tx_next = next_counter;
	return 0;
}

int
sgw_slcrypto_rx_state(const struct sgw_slcrypto_ctx *ctx, uint32_t *epoch,
		      uint64_t *top_counter)
{
	if (epoch != NULL)
		*epoch = ctx->rx_epoch;
	if (top_counter != NULL)
		*top_counter = ctx->rx_valid ? ctx->rx_top : 0;
	return ctx->rx_valid || ctx->rx_epoch != 0;
}

int
sgw_slcrypto_next_epoch(uint32_t prev, uint64_t now_unix_s, uint32_t *out)
{
	uint64_t e;

	if (prev == UINT32_MAX)
		return -1;
	e = (uint64_t)prev + 1;
	if (now_unix_s > e)
		e = now_unix_s > UINT32_MAX ? UINT32_MAX : now_unix_s;
	*out = (uint32_t)e;
	return 0;
}
