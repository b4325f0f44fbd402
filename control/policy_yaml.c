/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The YAML policy loader and dumper (schema: docs/configuration.md).
 *
 * Two passes: libyaml's event API builds a small tree (in an arena; every node
 * keeps its 1-based line and column), then the schema walk fills a struct
 * sgw_policy and collects every error it finds instead of stopping at the
 * first. References between sections (peer, next_hop, terminal, in_port) are
 * resolved through sorted name tables, and the terminal-prefix overlap check
 * sorts all prefixes once: O(n log n) for 65536 terminals x 16 prefixes.
 * The emulator's link section fills sgw_policy.emu; its numbers keep their
 * decimal text exact (durations become whole ns), and the link model's own
 * check (sgw_linkem_conf_check) has the last word on each direction.
 * The satlink section (roles hub and terminal) fills sgw_policy.satlink; its
 * key file, when named, is loaded once to check that every session has a
 * key, then freed (the dataplane loads it again at startup).
 * Pure C11 + libyaml (+ lib/sgw_slcrypto for the key file): no DPDK.
 */
/* open, fstat, fdopen: the policy file is opened non-blocking (see sgw_policy_load_file). */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <yaml.h>

#include "policy_yaml.h"
#include "sgw_slcrypto.h"

#define ARENA_CHUNK (256u * 1024u)
#define MAX_DEPTH 64
#define SHOW_MAX 48   /* longest value quoted back in a message */

#if defined(__GNUC__)
#define SGW_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define SGW_PRINTF(a, b)
#endif

/* ---------------------------------------------------------------- arena */

struct arena_chunk {
	struct arena_chunk *next;
	size_t size, used;
	max_align_t data[];
};

struct arena {
	struct arena_chunk *head;
};

static void *
arena_alloc(struct arena *a, size_t n)
{
	struct arena_chunk *c = a->head;
	void *p;

	n = (n + sizeof(max_align_t) - 1) & ~(sizeof(max_align_t) - 1);
	if (c == NULL || c->size - c->used < n) {
		size_t sz = n > ARENA_CHUNK ? n : ARENA_CHUNK;

		c = malloc(sizeof(*c) + sz);
		if (c == NULL)
			return NULL;
		c->size = sz;
		c->used = 0;
		c->next = a->head;
		a->head = c;
	}
	p = (char *)c->data + c->used;
	c->used += n;
	return p;
}

static void
arena_free(struct arena *a)
{
	while (a->head != NULL) {
		struct arena_chunk *next = a->head->next;

		free(a->head);
		a->head = next;
	}
}

/* ----------------------------------------------------------------- tree */

enum ykind {
	YN_SCALAR,
	YN_SEQ,
	YN_MAP,
	YN_BAD,   /* an alias: already reported, every check skips it silently */
};

struct ynode {
	uint8_t kind;
	uint8_t plain;       /* scalar written without quotes */
	uint32_t line, col;  /* 1-based */
	uint32_t n;          /* scalar: bytes; seq: items; map: pairs */
	union {
		const char *s;            /* NUL terminated copy */
		struct ynode **kids;      /* seq: n items; map: key, value, key, value... */
	} u;
};

/* ------------------------------------------------------- loader context */

struct nent {
	const char *s;
	uint32_t idx;
	uint32_t line;
};

/* Names of one section's entries, sorted by (name, index) for lookup. */
struct ntab {
	struct nent *e;
	uint32_t n;
	bool usable;   /* false when the section itself was broken: skip references */
};

struct ld {
	const char *file;
	const char *buf;
	size_t len;
	struct sgw_cfg_errors *errs;
	struct sgw_policy *p;
	struct arena arena;
	bool oom;
	struct ntab ports, nhops, terms;
};

static void SGW_PRINTF(4, 5)
err_at(struct ld *ld, uint32_t line, uint32_t col, const char *fmt, ...)
{
	struct sgw_cfg_errors *errs = ld->errs;
	struct sgw_cfg_error *e;
	va_list ap;

	if (errs->n >= SGW_CFG_MAX_ERRORS) {
		errs->dropped++;
		return;
	}
	e = &errs->e[errs->n++];
	snprintf(e->file, sizeof(e->file), "%s", ld->file);
	e->line = line;
	e->col = col;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
}

#define ERR(ld, node, ...) err_at((ld), (node)->line, (node)->col, __VA_ARGS__)

static void
oom(struct ld *ld)
{
	if (!ld->oom)
		err_at(ld, 0, 0, "out of memory");
	ld->oom = true;
}

/* ---------------------------------------------------------- small utils */

static bool
seq(const struct ynode *v, const char *s)
{
	size_t n = strlen(s);

	return v->kind == YN_SCALAR && v->n == n && memcmp(v->u.s, s, n) == 0;
}

static bool
is_null(const struct ynode *v)
{
	return v->kind == YN_SCALAR && v->plain &&
		(v->n == 0 || seq(v, "~") || seq(v, "null") || seq(v, "Null") ||
		 seq(v, "NULL"));
}

/* A value for a message: 'text' (shortened, control bytes as ?), "a list", ... */
static const char *
show(const struct ynode *v, char *buf, size_t len)
{
	size_t i, o = 0;

	if (v->kind == YN_SEQ)
		return "a list";
	if (v->kind == YN_MAP)
		return "a mapping";
	if (is_null(v))
		return "nothing";
	buf[o++] = '\'';
	for (i = 0; i < v->n && o + 5 < len; i++) {
		unsigned char c = (unsigned char)v->u.s[i];

		if (i == SHOW_MAX) {
			memcpy(buf + o, "...", 3);
			o += 3;
			break;
		}
		buf[o++] = (c < 0x20 || c == 0x7f) ? '?' : (char)c;
	}
	buf[o++] = '\'';
	buf[o] = '\0';
	return buf;
}

/* Optimal string alignment distance, for "did you mean"; large for long strings. */
static unsigned int
edit_distance(const char *a, size_t la, const char *b, size_t lb)
{
	unsigned int rows[3][65];
	unsigned int *pp, *p, *c;
	size_t i, j;

	if (la > 64 || lb > 64)
		return 99;
	for (j = 0; j <= lb; j++)
		rows[1][j] = (unsigned int)j;
	for (i = 1; i <= la; i++) {
		/* Row r lives in rows[(r + 1) % 3]. */
		c = rows[(i + 1) % 3];
		p = rows[i % 3];
		pp = rows[(i + 2) % 3];
		c[0] = (unsigned int)i;
		for (j = 1; j <= lb; j++) {
			unsigned int cost = a[i - 1] != b[j - 1];
			unsigned int best = p[j] + 1;

			if (c[j - 1] + 1 < best)
				best = c[j - 1] + 1;
			if (p[j - 1] + cost < best)
				best = p[j - 1] + cost;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    pp[j - 2] + 1 < best)
				best = pp[j - 2] + 1;
			c[j] = best;
		}
	}
	return rows[(la + 1) % 3][lb];
}

/* Keeps the best candidate seen so far for a "did you mean" hint. */
struct suggest {
	const char *word;
	size_t wlen;
	const char *best;
	unsigned int score;
};

static void
suggest_init(struct suggest *sg, const char *word, size_t wlen)
{
	sg->word = word;
	sg->wlen = wlen;
	sg->best = NULL;
	sg->score = 5; /* accept up to distance 2 */
}

/*
 * Nearest candidate within edit distance 2, but not a distance-2 match for a
 * word of 3 letters or fewer ('lan' is not a typo of 'sat'). A word that is a
 * prefix of a candidate or the other way round ("flows", "sat" for
 * "satellite") ranks between distance 1 and 2 once the shorter has 3 letters.
 * Scores are distances times two so that fits in between.
 */
static void
suggest_try(struct suggest *sg, const char *cand)
{
	size_t clen = strlen(cand), shorter = clen < sg->wlen ? clen : sg->wlen;
	unsigned int d = edit_distance(sg->word, sg->wlen, cand, clen);
	unsigned int score = 2 * d;

	if (d > 2 || 2 * d > sg->wlen)
		score = 99;
	if (score > 3 && shorter >= 3 && memcmp(sg->word, cand, shorter) == 0)
		score = 3;
	if (score < sg->score) {
		sg->best = cand;
		sg->score = score;
	}
}

/* " (did you mean 'x'?)" or "" */
static const char *
suggest_text(const struct suggest *sg, char *buf, size_t len)
{
	if (sg->best == NULL)
		return "";
	snprintf(buf, len, " (did you mean '%s'?)", sg->best);
	return buf;
}

/*
 * Unsigned integer: decimal without leading zeros, or 0x hex. 0 ok,
 * -1 not an integer, -2 too large for 64 bits, -3 leading zero.
 */
static int
parse_uint(const char *s, size_t n, uint64_t *out)
{
	uint64_t v = 0;
	size_t i;

	if (n == 0)
		return -1;
	if (n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		bool big = false;

		for (i = 2; i < n; i++) {
			int d;

			if (s[i] >= '0' && s[i] <= '9')
				d = s[i] - '0';
			else if (s[i] >= 'a' && s[i] <= 'f')
				d = s[i] - 'a' + 10;
			else if (s[i] >= 'A' && s[i] <= 'F')
				d = s[i] - 'A' + 10;
			else
				return -1;
			if (v >> 60)
				big = true;
			v = v << 4 | (uint64_t)d;
		}
		if (big)
			return -2;
		*out = v;
		return 0;
	}
	for (i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return -1;
	if (n > 1 && s[0] == '0')
		return -3;
	for (i = 0; i < n; i++) {
		uint64_t d = (uint64_t)(s[i] - '0');

		if (v > (UINT64_MAX - d) / 10)
			return -2;
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

/* ------------------------------------------------------- mapping fields */

struct keyspec {
	const char *name;
	bool required;
};

#define NKEYS(t) ((unsigned int)(sizeof(t) / sizeof((t)[0])))

/*
 * Sort a mapping's pairs into vals[] (by keyspec index): unknown keys (with a
 * "did you mean") and duplicate keys are reported here. keys[] gets the key
 * nodes, for "first at line" messages. hint(name) may add where a key that is
 * unknown here belongs.
 */
static const char *subsection_of(const struct ynode *key);

static void
map_fields(struct ld *ld, const struct ynode *m, const char *what,
	   const struct keyspec *ks, unsigned int nks,
	   const struct ynode **vals, const struct ynode **keys, bool top)
{
	uint32_t i;
	unsigned int k;

	for (k = 0; k < nks; k++) {
		vals[k] = NULL;
		keys[k] = NULL;
	}
	for (i = 0; i < m->n; i++) {
		const struct ynode *key = m->u.kids[2 * i];
		const struct ynode *val = m->u.kids[2 * i + 1];
		char sb[SHOW_MAX + 8], hb[96];
		struct suggest sg;

		if (key->kind == YN_BAD)
			continue;
		if (key->kind != YN_SCALAR) {
			ERR(ld, key, "keys in %s must be plain words (got %s)", what,
			    show(key, sb, sizeof(sb)));
			continue;
		}
		for (k = 0; k < nks; k++)
			if (seq(key, ks[k].name))
				break;
		if (k == nks && top && subsection_of(key) != NULL) {
			ERR(ld, key, "unknown key '%s' in %s ('%s' belongs under '%s:')",
			    key->u.s, what, key->u.s, subsection_of(key));
			continue;
		}
		if (k == nks) {
			suggest_init(&sg, key->u.s, key->n);
			for (k = 0; k < nks; k++)
				suggest_try(&sg, ks[k].name);
			ERR(ld, key, "unknown key %s in %s%s", show(key, sb, sizeof(sb)), what,
			    suggest_text(&sg, hb, sizeof(hb)));
			continue;
		}
		if (vals[k] != NULL) {
			ERR(ld, key, "duplicate key '%s' in %s (first at line %" PRIu32 ")",
			    ks[k].name, what, keys[k]->line);
			continue;
		}
		vals[k] = val;
		keys[k] = key;
	}
}

/* who: the entry's name, for the message, or NULL. */
static void
check_required(struct ld *ld, const struct ynode *m, const char *what, const char *who,
	       const struct keyspec *ks, unsigned int nks, const struct ynode **vals)
{
	unsigned int k;

	for (k = 0; k < nks; k++)
		if (ks[k].required && vals[k] == NULL)
			ERR(ld, m, "missing required key '%s' in %s%s%s%s", ks[k].name, what,
			    who ? " '" : "", who ? who : "", who ? "'" : "");
}

/* ------------------------------------------------------- typed getters */

/* False (reported) unless v is a scalar with a value. */
static bool
want_scalar(struct ld *ld, const struct ynode *v, const char *key, const char *expect)
{
	char sb[SHOW_MAX + 8];

	if (v->kind == YN_BAD)
		return false;
	if (v->kind != YN_SCALAR || is_null(v)) {
		ERR(ld, v, "'%s' must be %s (got %s)", key, expect, show(v, sb, sizeof(sb)));
		return false;
	}
	return true;
}

static bool
get_uint(struct ld *ld, const struct ynode *v, const char *key, uint64_t lo, uint64_t hi,
	 uint64_t *out)
{
	char sb[SHOW_MAX + 8], expect[80];
	uint64_t x = 0;
	int rc;

	snprintf(expect, sizeof(expect), "an integer in %" PRIu64 "..%" PRIu64, lo, hi);
	if (!want_scalar(ld, v, key, expect))
		return false;
	rc = parse_uint(v->u.s, v->n, &x);
	if (rc == -1) {
		ERR(ld, v, "'%s' must be %s (got %s)", key, expect, show(v, sb, sizeof(sb)));
		return false;
	}
	if (rc == -3) {
		ERR(ld, v, "'%s' %s has a leading zero (write decimal without it, or 0x hex)",
		    key, show(v, sb, sizeof(sb)));
		return false;
	}
	if (rc == -2 || x < lo || x > hi) {
		ERR(ld, v, "'%s' %s is out of range %" PRIu64 "..%" PRIu64, key,
		    v->u.s, lo, hi);
		return false;
	}
	*out = x;
	return true;
}

static bool
get_u32(struct ld *ld, const struct ynode *v, const char *key, uint32_t lo, uint32_t hi,
	uint32_t *out)
{
	uint64_t x;

	if (v == NULL || !get_uint(ld, v, key, lo, hi, &x))
		return false;
	*out = (uint32_t)x;
	return true;
}

static bool
get_bool(struct ld *ld, const struct ynode *v, const char *key, bool *out)
{
	static const char *const yes[] = { "true", "yes" };
	static const char *const no[] = { "false", "no" };
	char sb[SHOW_MAX + 8], low[8];
	unsigned int i;

	if (!want_scalar(ld, v, key, "true or false"))
		return false;
	for (i = 0; i < v->n && i < sizeof(low) - 1; i++)
		low[i] = (char)(v->u.s[i] >= 'A' && v->u.s[i] <= 'Z' ?
				v->u.s[i] - 'A' + 'a' : v->u.s[i]);
	low[i] = '\0';
	if (v->n < sizeof(low)) {
		for (i = 0; i < 2; i++) {
			if (strcmp(low, yes[i]) == 0) {
				*out = true;
				return true;
			}
			if (strcmp(low, no[i]) == 0) {
				*out = false;
				return true;
			}
		}
	}
	ERR(ld, v, "'%s' must be true or false (got %s)", key, show(v, sb, sizeof(sb)));
	return false;
}

/* One of names[]; the index in *out. */
static bool
get_enum(struct ld *ld, const struct ynode *v, const char *key,
	 const char *const *names, unsigned int n, unsigned int *out)
{
	char sb[SHOW_MAX + 8], hb[96], list[128];
	struct suggest sg;
	unsigned int i;
	size_t o = 0;

	if (!want_scalar(ld, v, key, "a word"))
		return false;
	for (i = 0; i < n; i++) {
		if (seq(v, names[i])) {
			*out = i;
			return true;
		}
	}
	suggest_init(&sg, v->u.s, v->n);
	list[0] = '\0';
	for (i = 0; i < n; i++) {
		suggest_try(&sg, names[i]);
		o += (size_t)snprintf(list + o, sizeof(list) - o, "%s%s", i ? ", " : "",
				      names[i]);
		if (o >= sizeof(list))
			break;
	}
	ERR(ld, v, "'%s' must be one of %s (got %s)%s", key, list, show(v, sb, sizeof(sb)),
	    suggest_text(&sg, hb, sizeof(hb)));
	return false;
}

static bool
name_char_ok(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		c == '_' || c == '.' || c == '-';
}

/* A name: [A-Za-z0-9_.-]{1,31}, copied into dst[SGW_NAME_MAX]. */
static bool
get_name(struct ld *ld, const struct ynode *v, const char *key, char *dst)
{
	char sb[SHOW_MAX + 8];
	uint32_t i;

	if (!want_scalar(ld, v, key, "a name"))
		return false;
	for (i = 0; i < v->n; i++)
		if (!name_char_ok(v->u.s[i]))
			break;
	if (v->n >= SGW_NAME_MAX || i < v->n) {
		ERR(ld, v, "'%s' %s is not a valid name (1..%d characters of A-Z a-z 0-9 _ . -)",
		    key, show(v, sb, sizeof(sb)), SGW_NAME_MAX - 1);
		return false;
	}
	memcpy(dst, v->u.s, v->n + 1);
	return true;
}

/* ---------------------------------------------------------- name tables */

static int
nent_cmp(const void *a, const void *b)
{
	const struct nent *x = a, *y = b;
	int c = strcmp(x->s, y->s);

	if (c != 0)
		return c;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/*
 * Collect the name of every entry that has a scalar one (valid or not, so a
 * reference to a badly named entry is not reported twice), sort, and report
 * duplicates at every later occurrence. names[i] is entry i's name node or NULL.
 */
static void
ntab_build(struct ld *ld, struct ntab *t, const struct ynode *const *names, uint32_t n,
	   const char *what)
{
	uint32_t i, first = 0;

	t->e = NULL;
	t->n = 0;
	t->usable = true;
	if (n == 0)
		return;
	t->e = malloc(sizeof(*t->e) * n);
	if (t->e == NULL) {
		oom(ld);
		t->usable = false;
		return;
	}
	for (i = 0; i < n; i++) {
		const struct ynode *v = names[i];

		if (v == NULL || v->kind != YN_SCALAR)
			continue;
		t->e[t->n].s = v->u.s;
		t->e[t->n].idx = i;
		t->e[t->n].line = v->line;
		t->n++;
	}
	qsort(t->e, t->n, sizeof(*t->e), nent_cmp);
	for (i = 1; i < t->n; i++) {
		if (strcmp(t->e[i].s, t->e[first].s) != 0) {
			first = i;
			continue;
		}
		{
			const struct ynode *v = names[t->e[i].idx];
			char sb[SHOW_MAX + 8];

			ERR(ld, v, "duplicate %s name %s (first at line %" PRIu32 ")", what,
			    show(v, sb, sizeof(sb)), t->e[first].line);
		}
	}
}

/* Index of the first entry named like v, or -1. */
static int64_t
ntab_find(const struct ntab *t, const struct ynode *v)
{
	uint32_t lo = 0, hi = t->n;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (strcmp(t->e[mid].s, v->u.s) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < t->n && strcmp(t->e[lo].s, v->u.s) == 0)
		return t->e[lo].idx;
	return -1;
}

/*
 * Resolve a reference to an entry of t. Returns the index, -1 when unknown
 * (reported) and -2 when it cannot be checked (bad value or broken section).
 */
static int64_t
resolve(struct ld *ld, const struct ntab *t, const struct ynode *v, const char *key,
	const char *what)
{
	char sb[SHOW_MAX + 8], hb[96];
	struct suggest sg;
	int64_t idx;
	uint32_t i;

	if (!want_scalar(ld, v, key, "a name"))
		return -2;
	if (!t->usable)
		return -2;
	idx = ntab_find(t, v);
	if (idx >= 0)
		return idx;
	suggest_init(&sg, v->u.s, v->n);
	for (i = 0; i < t->n; i++)
		suggest_try(&sg, t->e[i].s);
	ERR(ld, v, "unknown %s %s%s", what, show(v, sb, sizeof(sb)),
	    suggest_text(&sg, hb, sizeof(hb)));
	return -1;
}

/* ---------------------------------------------------------------- lists */

struct list {
	const struct ynode *const *items;
	uint32_t n;
	const struct ynode *single;
};

/* A list key with lo..hi entries; a lone scalar counts as a one-element list. */
static bool
get_list(struct ld *ld, const struct ynode *v, const char *key, uint32_t lo, uint32_t hi,
	 struct list *l)
{
	char sb[SHOW_MAX + 8];

	if (v->kind == YN_BAD)
		return false;
	if (v->kind == YN_MAP || is_null(v)) {
		ERR(ld, v, "'%s' must be a list of %" PRIu32 "..%" PRIu32 " entries (got %s)",
		    key, lo, hi, show(v, sb, sizeof(sb)));
		return false;
	}
	if (v->kind == YN_SCALAR) {
		l->single = v;
		l->items = &l->single;
		l->n = 1;
	} else {
		l->items = (const struct ynode *const *)v->u.kids;
		l->n = v->n;
	}
	if (l->n < lo || l->n > hi) {
		ERR(ld, v, "'%s' must have %" PRIu32 "..%" PRIu32 " entries (got %" PRIu32 ")",
		    key, lo, hi, l->n);
		return false;
	}
	return true;
}

/*
 * A list of entries (mappings) of an optional or required section. Absent or
 * null: an empty list. Returns false when the section is unusable.
 */
static bool
get_section(struct ld *ld, const struct ynode *v, const char *key, uint32_t lo,
	    uint32_t hi, struct list *l)
{
	char sb[SHOW_MAX + 8];

	l->n = 0;
	l->items = NULL;
	if (v == NULL)
		return true;
	if (v->kind == YN_BAD)
		return false;
	if (is_null(v) && lo == 0)
		return true;
	if (v->kind != YN_SEQ) {
		ERR(ld, v, "'%s' must be a list of %" PRIu32 "..%" PRIu32 " entries (got %s)",
		    key, lo, hi, show(v, sb, sizeof(sb)));
		return false;
	}
	l->items = (const struct ynode *const *)v->u.kids;
	l->n = v->n;
	if (l->n < lo || l->n > hi)
		ERR(ld, v, "'%s' must have %" PRIu32 "..%" PRIu32 " entries (got %" PRIu32 ")",
		    key, lo, hi, l->n);
	return true;
}

/* An optional mapping section; absent or null: NULL. */
static const struct ynode *
get_map(struct ld *ld, const struct ynode *v, const char *key)
{
	char sb[SHOW_MAX + 8];

	if (v == NULL || v->kind == YN_BAD || is_null(v))
		return NULL;
	if (v->kind != YN_MAP) {
		ERR(ld, v, "'%s' must be a mapping (got %s)", key, show(v, sb, sizeof(sb)));
		return NULL;
	}
	return v;
}

/* Each entry of a list section must be a mapping. */
static bool
entry_is_map(struct ld *ld, const struct ynode *v, const char *section)
{
	char sb[SHOW_MAX + 8];

	if (v->kind == YN_BAD)
		return false;
	if (v->kind != YN_MAP) {
		ERR(ld, v, "each entry of '%s' must be a mapping (got %s)", section,
		    show(v, sb, sizeof(sb)));
		return false;
	}
	return true;
}

/* ------------------------------------------------------------- prefixes */

static bool
get_prefix(struct ld *ld, const struct ynode *v, const char *key, struct sgw_prefix *out)
{
	char sb[SHOW_MAX + 8], fixed[SGW_PREFIX_STRLEN];
	const char *why;
	int rc;

	if (!want_scalar(ld, v, key, "an address prefix"))
		return false;
	rc = sgw_prefix_parse_ex(v->u.s, v->n, out, &why);
	if (rc == -2) {
		sgw_prefix_format(out, fixed, sizeof(fixed));
		ERR(ld, v, "host bits set in prefix %s (did you mean %s?)", v->u.s, fixed);
		return false;
	}
	if (rc != 0) {
		ERR(ld, v, "bad prefix %s in '%s': %s", show(v, sb, sizeof(sb)), key, why);
		return false;
	}
	return true;
}

/* One terminal prefix, for the overlap check. */
struct pfx_rec {
	struct sgw_prefix p;
	uint32_t term;
	uint32_t line, col;
};

static int
pfx_rec_cmp(const void *a, const void *b)
{
	const struct pfx_rec *x = a, *y = b;
	int c;

	if (x->p.family != y->p.family)
		return x->p.family < y->p.family ? -1 : 1;
	c = memcmp(x->p.addr, y->p.addr, sizeof(x->p.addr));
	if (c != 0)
		return c;
	if (x->p.len != y->p.len)
		return x->p.len < y->p.len ? -1 : 1;
	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	return x->col < y->col ? -1 : x->col > y->col;
}

static bool
rec_before(const struct pfx_rec *a, const struct pfx_rec *b)
{
	return a->line < b->line || (a->line == b->line && a->col < b->col);
}

/*
 * Terminal prefixes must not overlap. Sorted by (family, address, length),
 * prefixes nest or are disjoint, so the earlier prefix reaching furthest is
 * the only one a new prefix can fall into: one pass after the sort.
 */
static void
check_overlaps(struct ld *ld, struct pfx_rec *r, size_t n, const struct ynode *const *tnames)
{
	const struct pfx_rec *m = NULL;
	size_t i;

	qsort(r, n, sizeof(*r), pfx_rec_cmp);
	for (i = 0; i < n; i++) {
		const struct pfx_rec *first, *second;
		char a[SGW_PREFIX_STRLEN], b[SGW_PREFIX_STRLEN], tn[64];
		const struct ynode *name;

		if (m == NULL || m->p.family != r[i].p.family ||
		    !sgw_prefix_overlap(&m->p, &r[i].p)) {
			m = &r[i];
			continue;
		}
		/* Report at whichever comes later in the file. */
		first = rec_before(m, &r[i]) ? m : &r[i];
		second = first == m ? &r[i] : m;
		sgw_prefix_format(&second->p, a, sizeof(a));
		sgw_prefix_format(&first->p, b, sizeof(b));
		name = tnames[first->term];
		if (name != NULL && name->kind == YN_SCALAR)
			snprintf(tn, sizeof(tn), "'%s'", name->u.s);
		else
			snprintf(tn, sizeof(tn), "#%" PRIu32, first->term + 1);
		err_at(ld, second->line, second->col,
		       "%s overlaps %s of terminal %s (line %" PRIu32 ")", a, b, tn,
		       first->line);
	}
}

/* --------------------------------------------------------------- ranges */

/*
 * "N" or "LO-HI" (ints in decimal or 0x hex) with values <= max. what names
 * the thing ("port", "SPI", "DSCP") in messages.
 */
static bool
get_range(struct ld *ld, const struct ynode *v, const char *key, const char *what,
	  uint64_t max, uint64_t *lo, uint64_t *hi)
{
	char sb[SHOW_MAX + 8];
	const char *dash;
	int rc1, rc2;

	if (!want_scalar(ld, v, key, "an integer or a \"LO-HI\" range"))
		return false;
	dash = memchr(v->u.s, '-', v->n);
	if (dash == NULL) {
		rc1 = parse_uint(v->u.s, v->n, lo);
		*hi = *lo;
		rc2 = rc1;
	} else {
		rc1 = parse_uint(v->u.s, (size_t)(dash - v->u.s), lo);
		rc2 = parse_uint(dash + 1, v->n - (size_t)(dash - v->u.s) - 1, hi);
	}
	if (rc1 == -1 || rc2 == -1 || rc1 == -3 || rc2 == -3) {
		ERR(ld, v, "bad %s range %s in '%s' (expected N or LO-HI, decimal or 0x hex)",
		    what, show(v, sb, sizeof(sb)), key);
		return false;
	}
	if (rc1 == -2 || rc2 == -2 || *lo > max || *hi > max) {
		ERR(ld, v, "%s %s in '%s' is out of range 0..%" PRIu64, what,
		    show(v, sb, sizeof(sb)), key, max);
		return false;
	}
	if (*lo > *hi) {
		ERR(ld, v, "bad %s range %s in '%s': %" PRIu64 " is greater than %" PRIu64,
		    what, show(v, sb, sizeof(sb)), key, *lo, *hi);
		return false;
	}
	return true;
}

/* ---------------------------------------------------------- top / ports */

enum {
	TK_VERSION, TK_ROLE, TK_PORTS, TK_NEXT_HOPS, TK_TERMINALS, TK_RULES,
	TK_LIMITS, TK_WORKERS, TK_PROTOCOLS, TK_MALFORMED, TK_DEFAULT_ACTION, TK_LINK,
	TK_SATLINK,
};
static const struct keyspec top_keys[] = {
	[TK_VERSION] = { "version", true },
	[TK_ROLE] = { "role", true },
	[TK_PORTS] = { "ports", true },
	[TK_NEXT_HOPS] = { "next_hops", false },
	[TK_TERMINALS] = { "terminals", false },
	[TK_RULES] = { "rules", false },
	[TK_LIMITS] = { "limits", false },
	[TK_WORKERS] = { "workers", false },
	[TK_PROTOCOLS] = { "protocols", false },
	[TK_MALFORMED] = { "malformed", false },
	[TK_DEFAULT_ACTION] = { "default_action", false },
	[TK_LINK] = { "link", false },   /* required for role emulator only */
	[TK_SATLINK] = { "satlink", false }, /* roles hub and terminal only */
};

enum { PK_NAME, PK_DEVICE, PK_ROLE, PK_PEER, PK_RX, PK_TX, PK_MTU, PK_PROMISC };
static const struct keyspec port_keys[] = {
	[PK_NAME] = { "name", true },
	[PK_DEVICE] = { "device", true },
	[PK_ROLE] = { "role", true },
	[PK_PEER] = { "peer", false },
	[PK_RX] = { "rx_desc", false },
	[PK_TX] = { "tx_desc", false },
	[PK_MTU] = { "mtu", false },
	[PK_PROMISC] = { "promiscuous", false },
};

static const char *const port_role_names[] = { "terrestrial", "satellite", "lan" };

/* Entry i's "name" value, or NULL. */
static const struct ynode *
entry_name(const struct ynode *e)
{
	uint32_t i;

	if (e->kind != YN_MAP)
		return NULL;
	for (i = 0; i < e->n; i++)
		if (seq(e->u.kids[2 * i], "name"))
			return e->u.kids[2 * i + 1];
	return NULL;
}

static const char *
name_or_null(const struct ynode *v)
{
	return v != NULL && v->kind == YN_SCALAR && !is_null(v) ? v->u.s : NULL;
}

/* Names of a section's entries, for ntab_build; NULL on OOM. */
static const struct ynode **
collect_names(struct ld *ld, const struct list *l)
{
	const struct ynode **names;
	uint32_t i;

	names = calloc(l->n ? l->n : 1, sizeof(*names));
	if (names == NULL) {
		oom(ld);
		return NULL;
	}
	for (i = 0; i < l->n; i++)
		names[i] = entry_name(l->items[i]);
	return names;
}

static void
load_ports(struct ld *ld, const struct ynode *v)
{
	struct sgw_policy *p = ld->p;
	const struct ynode *vals[NKEYS(port_keys)], *keys[NKEYS(port_keys)];
	const struct ynode **names, *peers[SGW_MAX_PORTS] = { NULL };
	const struct ynode *devs[SGW_MAX_PORTS] = { NULL };
	struct sgw_port_conf scratch;
	struct list l;
	uint32_t i, j;

	ld->ports.usable = false;
	if (v == NULL)
		return; /* reported as a missing required key */
	if (!get_section(ld, v, "ports", 1, SGW_MAX_PORTS, &l))
		return;
	names = collect_names(ld, &l);
	if (names == NULL)
		return;
	ntab_build(ld, &ld->ports, names, l.n, "port");
	free(names);
	p->n_ports = (uint16_t)(l.n < SGW_MAX_PORTS ? l.n : SGW_MAX_PORTS);

	for (i = 0; i < l.n; i++) {
		const struct ynode *e = l.items[i];
		struct sgw_port_conf *pc = i < SGW_MAX_PORTS ? &p->ports[i] : &scratch;
		uint32_t x;
		unsigned int en;
		bool b;

		memset(pc, 0, sizeof(*pc));
		pc->peer = -1;
		pc->rx_desc = 1024;
		pc->tx_desc = 1024;
		pc->promiscuous = true;
		if (!entry_is_map(ld, e, "ports"))
			continue;
		map_fields(ld, e, "port", port_keys, NKEYS(port_keys), vals, keys, false);
		check_required(ld, e, "port", name_or_null(vals[PK_NAME]), port_keys,
			       NKEYS(port_keys), vals);
		if (vals[PK_NAME])
			get_name(ld, vals[PK_NAME], "name", pc->name);
		if (vals[PK_DEVICE] && want_scalar(ld, vals[PK_DEVICE], "device",
						   "a DPDK device name")) {
			const struct ynode *d = vals[PK_DEVICE];
			char sb[SHOW_MAX + 8];

			for (j = 0; j < d->n; j++)
				if (d->u.s[j] <= ' ' || d->u.s[j] > '~')
					break;
			if (d->n >= SGW_DEVICE_MAX || j < d->n)
				ERR(ld, d, "'device' %s must be 1..%d printable characters "
				    "without spaces", show(d, sb, sizeof(sb)),
				    SGW_DEVICE_MAX - 1);
			else if (i < SGW_MAX_PORTS) {
				memcpy(pc->device, d->u.s, d->n + 1);
				devs[i] = d;
			}
		}
		if (vals[PK_ROLE] && get_enum(ld, vals[PK_ROLE], "role", port_role_names, 3, &en))
			pc->role = (enum sgw_port_role)en;
		if (i < SGW_MAX_PORTS)
			peers[i] = vals[PK_PEER];
		if (get_u32(ld, vals[PK_RX], "rx_desc", 64, 16384, &x))
			pc->rx_desc = (uint16_t)x;
		if (get_u32(ld, vals[PK_TX], "tx_desc", 64, 16384, &x))
			pc->tx_desc = (uint16_t)x;
		if (get_u32(ld, vals[PK_MTU], "mtu", 0, 9600, &x)) {
			if (x != 0 && x < 68)
				ERR(ld, vals[PK_MTU], "'mtu' %" PRIu32 " is out of range "
				    "(0 keeps the device's MTU, else 68..9600)", x);
			else
				pc->mtu = (uint16_t)x;
		}
		if (vals[PK_PROMISC] && get_bool(ld, vals[PK_PROMISC], "promiscuous", &b))
			pc->promiscuous = b;
	}

	/* Two ports on one device cannot both be opened. */
	for (i = 0; i < p->n_ports; i++) {
		for (j = 0; j < i; j++) {
			if (devs[i] == NULL || devs[j] == NULL ||
			    strcmp(p->ports[i].device, p->ports[j].device) != 0)
				continue;
			ERR(ld, devs[i], "device '%s' is already used by port '%s' (line %" PRIu32
			    ")", p->ports[i].device, p->ports[j].name, devs[j]->line);
			break;
		}
	}

	ld->ports.usable = true;
	for (i = 0; i < p->n_ports; i++) {
		int64_t idx;

		if (peers[i] == NULL)
			continue;
		idx = resolve(ld, &ld->ports, peers[i], "peer", "port");
		if (idx == (int64_t)i)
			ERR(ld, peers[i], "port '%s' cannot be its own peer", peers[i]->u.s);
		else if (idx >= 0 && idx < SGW_MAX_PORTS)
			p->ports[i].peer = (int16_t)idx;
	}
}

/* ------------------------------------------------------------ next hops */

enum { NK_NAME, NK_PORT, NK_MAC };
static const struct keyspec nh_keys[] = {
	[NK_NAME] = { "name", true },
	[NK_PORT] = { "port", true },
	[NK_MAC] = { "mac", true },
};

/*
 * A MAC address, xx:xx:xx:xx:xx:xx. unicast: a next hop's, refused when
 * multicast; a satlink peer_mac may be any (ff:ff:ff:ff:ff:ff is its default).
 */
static bool
get_mac(struct ld *ld, const struct ynode *v, const char *key, bool unicast, uint8_t mac[6])
{
	char sb[SHOW_MAX + 8];
	unsigned int k;
	int hi, lo;

	if (!want_scalar(ld, v, key, "a MAC address"))
		return false;
	if (v->n != 17)
		goto bad;
	for (k = 0; k < 6; k++) {
		const char *s = v->u.s + 3 * k;

		if (k < 5 && s[2] != ':')
			goto bad;
		hi = s[0] >= '0' && s[0] <= '9' ? s[0] - '0' :
			s[0] >= 'a' && s[0] <= 'f' ? s[0] - 'a' + 10 :
			s[0] >= 'A' && s[0] <= 'F' ? s[0] - 'A' + 10 : -1;
		lo = s[1] >= '0' && s[1] <= '9' ? s[1] - '0' :
			s[1] >= 'a' && s[1] <= 'f' ? s[1] - 'a' + 10 :
			s[1] >= 'A' && s[1] <= 'F' ? s[1] - 'A' + 10 : -1;
		if (hi < 0 || lo < 0)
			goto bad;
		mac[k] = (uint8_t)(hi << 4 | lo);
	}
	if (unicast && (mac[0] & 1)) {
		ERR(ld, v, "MAC address %s is a multicast address: a next hop needs a "
		    "unicast one", show(v, sb, sizeof(sb)));
		return false;
	}
	if ((mac[0] | mac[1] | mac[2] | mac[3] | mac[4] | mac[5]) == 0) {
		ERR(ld, v, "MAC address %s is all zeros", show(v, sb, sizeof(sb)));
		return false;
	}
	return true;
bad:
	ERR(ld, v, "bad MAC address %s (expected xx:xx:xx:xx:xx:xx)", show(v, sb, sizeof(sb)));
	return false;
}

static void
load_next_hops(struct ld *ld, const struct ynode *v)
{
	struct sgw_policy *p = ld->p;
	const struct ynode *vals[NKEYS(nh_keys)], *keys[NKEYS(nh_keys)];
	const struct ynode **names;
	struct sgw_next_hop scratch;
	struct list l;
	uint32_t i;

	ld->nhops.usable = false;
	if (!get_section(ld, v, "next_hops", 0, SGW_MAX_NEXT_HOPS, &l))
		return;
	names = collect_names(ld, &l);
	if (names == NULL)
		return;
	ntab_build(ld, &ld->nhops, names, l.n, "next_hop");
	free(names);
	p->n_next_hops = (uint16_t)(l.n < SGW_MAX_NEXT_HOPS ? l.n : SGW_MAX_NEXT_HOPS);

	for (i = 0; i < l.n; i++) {
		const struct ynode *e = l.items[i];
		struct sgw_next_hop *nh = i < SGW_MAX_NEXT_HOPS ? &p->next_hops[i] : &scratch;
		int64_t idx;

		memset(nh, 0, sizeof(*nh));
		nh->port = -1;
		if (!entry_is_map(ld, e, "next_hops"))
			continue;
		map_fields(ld, e, "next_hop", nh_keys, NKEYS(nh_keys), vals, keys, false);
		check_required(ld, e, "next_hop", name_or_null(vals[NK_NAME]), nh_keys,
			       NKEYS(nh_keys), vals);
		if (vals[NK_NAME])
			get_name(ld, vals[NK_NAME], "name", nh->name);
		if (vals[NK_PORT]) {
			idx = resolve(ld, &ld->ports, vals[NK_PORT], "port", "port");
			if (idx >= 0 && idx < SGW_MAX_PORTS)
				nh->port = (int16_t)idx;
		}
		if (vals[NK_MAC])
			get_mac(ld, vals[NK_MAC], "mac", true, nh->mac);
	}
	ld->nhops.usable = true;
}

/* ------------------------------------------------------------ terminals */

enum { TMK_NAME, TMK_ID, TMK_PREFIXES };
static const struct keyspec term_keys[] = {
	[TMK_NAME] = { "name", true },
	[TMK_ID] = { "id", true },
	[TMK_PREFIXES] = { "prefixes", true },
};

struct id_rec {
	uint32_t id;
	uint32_t term;
	uint32_t line, col;
};

static int
id_rec_cmp(const void *a, const void *b)
{
	const struct id_rec *x = a, *y = b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->term < y->term ? -1 : x->term > y->term;
}

static void
check_ids(struct ld *ld, struct id_rec *r, size_t n, const struct ynode *const *tnames)
{
	size_t i, first = 0;

	qsort(r, n, sizeof(*r), id_rec_cmp);
	for (i = 1; i < n; i++) {
		const char *fn;

		if (r[i].id != r[first].id) {
			first = i;
			continue;
		}
		fn = name_or_null(tnames[r[first].term]);
		err_at(ld, r[i].line, r[i].col, "duplicate terminal id %" PRIu32
		       " (first used by terminal '%s' at line %" PRIu32 ")", r[i].id,
		       fn ? fn : "?", r[first].line);
	}
}

static void
load_terminals(struct ld *ld, const struct ynode *v)
{
	struct sgw_policy *p = ld->p;
	const struct ynode *vals[NKEYS(term_keys)], *keys[NKEYS(term_keys)];
	const struct ynode **names = NULL;
	struct pfx_rec *prefixes = NULL;
	struct id_rec *ids = NULL;
	size_t n_prefixes = 0, cap_prefixes = 0, n_ids = 0;
	struct list l;
	uint32_t i, k;

	ld->terms.usable = false;
	if (!get_section(ld, v, "terminals", 0, SGW_MAX_TERMINALS, &l))
		return;
	if (l.n == 0) {
		ld->terms.usable = true;
		return;
	}
	names = collect_names(ld, &l);
	p->terminals = calloc(l.n, sizeof(*p->terminals));
	ids = malloc(sizeof(*ids) * l.n);
	if (names == NULL || p->terminals == NULL || ids == NULL) {
		oom(ld);
		goto out;
	}
	p->n_terminals = l.n;
	ntab_build(ld, &ld->terms, names, l.n, "terminal");

	for (i = 0; i < l.n; i++) {
		const struct ynode *e = l.items[i];
		struct sgw_terminal *t = &p->terminals[i];
		struct list pl;

		if (!entry_is_map(ld, e, "terminals"))
			continue;
		map_fields(ld, e, "terminal", term_keys, NKEYS(term_keys), vals, keys, false);
		check_required(ld, e, "terminal", name_or_null(vals[TMK_NAME]), term_keys,
			       NKEYS(term_keys), vals);
		if (vals[TMK_NAME])
			get_name(ld, vals[TMK_NAME], "name", t->name);
		if (get_u32(ld, vals[TMK_ID], "id", 0, UINT32_MAX, &t->id)) {
			ids[n_ids].id = t->id;
			ids[n_ids].term = i;
			ids[n_ids].line = vals[TMK_ID]->line;
			ids[n_ids].col = vals[TMK_ID]->col;
			n_ids++;
		}
		if (vals[TMK_PREFIXES] == NULL ||
		    !get_list(ld, vals[TMK_PREFIXES], "prefixes", 1, SGW_TERM_PREFIX_MAX, &pl))
			continue;
		for (k = 0; k < pl.n; k++) {
			struct sgw_prefix pf;

			if (!get_prefix(ld, pl.items[k], "prefixes", &pf))
				continue;
			t->prefixes[t->n_prefixes++] = pf;
			if (n_prefixes == cap_prefixes) {
				size_t nc = cap_prefixes ? cap_prefixes * 2 : 1024;
				struct pfx_rec *np = realloc(prefixes, nc * sizeof(*np));

				if (np == NULL) {
					oom(ld);
					goto out;
				}
				prefixes = np;
				cap_prefixes = nc;
			}
			prefixes[n_prefixes].p = pf;
			prefixes[n_prefixes].term = i;
			prefixes[n_prefixes].line = pl.items[k]->line;
			prefixes[n_prefixes].col = pl.items[k]->col;
			n_prefixes++;
		}
	}
	check_ids(ld, ids, n_ids, names);
	check_overlaps(ld, prefixes, n_prefixes, names);
	ld->terms.usable = true;
out:
	free(prefixes);
	free(ids);
	free(names);
}

/* ---------------------------------------------------------------- rules */

enum { RK_NAME, RK_MATCH, RK_ACTION, RK_NEXT_HOP, RK_SATLINK };
static const struct keyspec rule_keys[] = {
	[RK_NAME] = { "name", true },
	[RK_MATCH] = { "match", false },
	[RK_ACTION] = { "action", true },
	[RK_NEXT_HOP] = { "next_hop", false },
	[RK_SATLINK] = { "satlink", false },  /* a service; needs the satlink section */
};

/* Rule and satlink section service names: enum sgw_sl_service minus 1 (no "default"). */
static const char *const sl_service_names[] = { "reliable", "datagram", "bypass" };
#define N_SL_SERVICES (sizeof(sl_service_names) / sizeof(sl_service_names[0]))

static const char *
sl_service_name(enum sgw_sl_service s)
{
	if (s < SGW_SL_SVC_RELIABLE || s >= SGW_SL_SVC__COUNT)
		return "?";
	return sl_service_names[s - SGW_SL_SVC_RELIABLE];
}

enum {
	MK_IN_PORT, MK_TERMINAL, MK_SRC, MK_DST, MK_PROTO, MK_SPORTS, MK_DPORTS,
	MK_DSCP, MK_SPI,
};
static const struct keyspec match_keys[] = {
	[MK_IN_PORT] = { "in_port", false },
	[MK_TERMINAL] = { "terminal", false },
	[MK_SRC] = { "src", false },
	[MK_DST] = { "dst", false },
	[MK_PROTO] = { "proto", false },
	[MK_SPORTS] = { "src_ports", false },
	[MK_DPORTS] = { "dst_ports", false },
	[MK_DSCP] = { "dscp", false },
	[MK_SPI] = { "esp_spi", false },
};

struct proto_name {
	const char *name;
	uint8_t num;
};

static const struct proto_name proto_names[] = {
	{ "tcp", 6 }, { "udp", 17 }, { "esp", 50 }, { "ah", 51 }, { "icmp", 1 },
	{ "icmpv6", 58 }, { "gre", 47 }, { "sctp", 132 },
};

#define N_PROTO_NAMES (sizeof(proto_names) / sizeof(proto_names[0]))

static bool
get_proto(struct ld *ld, const struct ynode *v, uint8_t *out)
{
	char sb[SHOW_MAX + 8], hb[96];
	struct suggest sg;
	uint64_t x;
	unsigned int i;

	if (!want_scalar(ld, v, "proto", "a protocol name or number"))
		return false;
	if (v->u.s[0] >= '0' && v->u.s[0] <= '9') {
		if (!get_uint(ld, v, "proto", 0, 255, &x))
			return false;
		*out = (uint8_t)x;
		return true;
	}
	for (i = 0; i < N_PROTO_NAMES; i++) {
		if (seq(v, proto_names[i].name)) {
			*out = proto_names[i].num;
			return true;
		}
	}
	suggest_init(&sg, v->u.s, v->n);
	for (i = 0; i < N_PROTO_NAMES; i++)
		suggest_try(&sg, proto_names[i].name);
	ERR(ld, v, "unknown protocol %s%s; use tcp, udp, esp, ah, icmp, icmpv6, gre, sctp "
	    "or a number 0..255", show(v, sb, sizeof(sb)), suggest_text(&sg, hb, sizeof(hb)));
	return false;
}

static uint8_t
prefix_list(struct ld *ld, const struct ynode *v, const char *key, struct sgw_prefix *dst,
	    unsigned int *families)
{
	struct list l;
	uint8_t n = 0;
	uint32_t i;

	*families = 0;
	if (v == NULL || !get_list(ld, v, key, 1, SGW_RULE_PREFIX_MAX, &l))
		return 0;
	for (i = 0; i < l.n; i++) {
		if (get_prefix(ld, l.items[i], key, &dst[n])) {
			*families |= dst[n].family == 4 ? 1u : 2u;
			n++;
		}
	}
	return n;
}

static uint8_t
range16_list(struct ld *ld, const struct ynode *v, const char *key, struct sgw_range16 *dst)
{
	struct list l;
	uint64_t lo, hi;
	uint8_t n = 0;
	uint32_t i;

	if (v == NULL || !get_list(ld, v, key, 1, SGW_RULE_RANGE_MAX, &l))
		return 0;
	for (i = 0; i < l.n; i++) {
		if (get_range(ld, l.items[i], key, "port", 65535, &lo, &hi)) {
			dst[n].lo = (uint16_t)lo;
			dst[n].hi = (uint16_t)hi;
			n++;
		}
	}
	return n;
}

static void
load_match(struct ld *ld, const struct ynode *m, struct sgw_rule *r)
{
	const struct ynode *vals[NKEYS(match_keys)], *keys[NKEYS(match_keys)];
	unsigned int fam_src = 0, fam_dst = 0;
	struct list l;
	uint64_t lo, hi;
	int64_t idx;
	uint32_t i;

	m = get_map(ld, m, "match");
	if (m == NULL)
		return;
	map_fields(ld, m, "rule match", match_keys, NKEYS(match_keys), vals, keys, false);
	if (vals[MK_IN_PORT]) {
		idx = resolve(ld, &ld->ports, vals[MK_IN_PORT], "in_port", "port");
		if (idx >= 0 && idx < SGW_MAX_PORTS)
			r->in_port = (int16_t)idx;
	}
	if (vals[MK_TERMINAL]) {
		idx = resolve(ld, &ld->terms, vals[MK_TERMINAL], "terminal", "terminal");
		if (idx >= 0)
			r->terminal = (int32_t)idx;
	}
	r->n_src = prefix_list(ld, vals[MK_SRC], "src", r->src, &fam_src);
	r->n_dst = prefix_list(ld, vals[MK_DST], "dst", r->dst, &fam_dst);
	/* fam_*: bit 0 IPv4, bit 1 IPv6. A packet has one family for both addresses. */
	if (r->n_src && r->n_dst && (fam_src & fam_dst) == 0)
		ERR(ld, vals[MK_DST], "this rule can never match: its src prefixes are all "
		    "IPv%u and its dst prefixes all IPv%u", fam_src == 1 ? 4 : 6,
		    fam_dst == 1 ? 4 : 6);
	if (vals[MK_PROTO] && get_list(ld, vals[MK_PROTO], "proto", 1, SGW_RULE_PROTO_MAX, &l))
		for (i = 0; i < l.n; i++)
			if (get_proto(ld, l.items[i], &r->proto[r->n_proto]))
				r->n_proto++;
	r->n_sport = range16_list(ld, vals[MK_SPORTS], "src_ports", r->sport);
	r->n_dport = range16_list(ld, vals[MK_DPORTS], "dst_ports", r->dport);
	if (vals[MK_DSCP] && get_list(ld, vals[MK_DSCP], "dscp", 1, 64, &l)) {
		for (i = 0; i < l.n; i++) {
			if (!get_range(ld, l.items[i], "dscp", "DSCP", 63, &lo, &hi))
				continue;
			for (; lo <= hi; lo++)
				r->dscp_mask |= (uint64_t)1 << lo;
		}
	}
	if (vals[MK_SPI] && get_list(ld, vals[MK_SPI], "esp_spi", 1, SGW_RULE_RANGE_MAX, &l)) {
		for (i = 0; i < l.n; i++) {
			if (!get_range(ld, l.items[i], "esp_spi", "SPI", UINT32_MAX, &lo, &hi))
				continue;
			r->spi[r->n_spi].lo = (uint32_t)lo;
			r->spi[r->n_spi].hi = (uint32_t)hi;
			r->n_spi++;
		}
	}
}


/* has_satlink: the policy has a satlink section (a rule may then name a service). */
static void
load_rules(struct ld *ld, const struct ynode *v, bool has_satlink)
{
	struct sgw_policy *p = ld->p;
	const struct ynode *vals[NKEYS(rule_keys)], *keys[NKEYS(rule_keys)];
	const struct ynode **names;
	struct ntab rt = { NULL, 0, false };
	/* The action names come from lib (sgw_action_name): one list, never two. */
	const char *action_names[SGW_ACT__COUNT];
	struct list l;
	uint32_t i;

	for (i = 0; i < SGW_ACT__COUNT; i++)
		action_names[i] = sgw_action_name((enum sgw_action)i);
	if (!get_section(ld, v, "rules", 0, SGW_MAX_RULES, &l) || l.n == 0)
		return;
	names = collect_names(ld, &l);
	p->rules = malloc(sizeof(*p->rules) * l.n);
	if (names == NULL || p->rules == NULL) {
		free(names);
		oom(ld);
		return;
	}
	p->n_rules = l.n;
	ntab_build(ld, &rt, names, l.n, "rule");
	free(rt.e);
	free(names);

	for (i = 0; i < l.n; i++) {
		const struct ynode *e = l.items[i];
		struct sgw_rule *r = &p->rules[i];
		unsigned int en;
		int64_t idx;

		sgw_rule_init(r);
		if (!entry_is_map(ld, e, "rules"))
			continue;
		map_fields(ld, e, "rule", rule_keys, NKEYS(rule_keys), vals, keys, false);
		check_required(ld, e, "rule", name_or_null(vals[RK_NAME]), rule_keys,
			       NKEYS(rule_keys), vals);
		if (vals[RK_NAME])
			get_name(ld, vals[RK_NAME], "name", r->name);
		if (vals[RK_MATCH])
			load_match(ld, vals[RK_MATCH], r);
		if (vals[RK_ACTION] &&
		    get_enum(ld, vals[RK_ACTION], "action", action_names, SGW_ACT__COUNT, &en)) {
			r->action = (enum sgw_action)en;
			if (!sgw_action_built(r->action))
				ERR(ld, vals[RK_ACTION], "action '%s' is not built yet in this "
				    "version of satgw", action_names[en]);
		}
		if (vals[RK_NEXT_HOP]) {
			idx = resolve(ld, &ld->nhops, vals[RK_NEXT_HOP], "next_hop", "next_hop");
			if (idx >= 0 && idx < SGW_MAX_NEXT_HOPS)
				r->next_hop = (int16_t)idx;
			if (vals[RK_ACTION] && r->action == SGW_ACT_DROP)
				ERR(ld, keys[RK_NEXT_HOP], "'next_hop' is only allowed with "
				    "action forward or count (this rule drops)");
		}
		if (vals[RK_SATLINK]) {
			if (get_enum(ld, vals[RK_SATLINK], "satlink", sl_service_names,
				     N_SL_SERVICES, &en))
				r->sl_service = (enum sgw_sl_service)(en + SGW_SL_SVC_RELIABLE);
			if (!has_satlink)
				ERR(ld, keys[RK_SATLINK], "rule '%s' names a satlink service but "
				    "the policy has no satlink section",
				    name_or_null(vals[RK_NAME]) ? name_or_null(vals[RK_NAME]) : "?");
			else if (vals[RK_ACTION] && r->action == SGW_ACT_DROP)
				ERR(ld, keys[RK_SATLINK], "'satlink' is only allowed with "
				    "action forward or count (this rule drops)");
		}
	}
}

/* -------------------------------------------------- limits and friends */

enum { LK_FLOWS, LK_MBUFS, LK_CACHE, LK_RING, LK_IDLE, LK_TIMERS };
static const struct keyspec limit_keys[] = {
	[LK_FLOWS] = { "flows_per_core", false },
	[LK_MBUFS] = { "mbufs", false },
	[LK_CACHE] = { "mbuf_cache", false },
	[LK_RING] = { "ring_size", false },
	[LK_IDLE] = { "flow_idle_ms", false },
	[LK_TIMERS] = { "timers_per_core", false },
};

enum { WK_BACKOFF, WK_SLEEP, WK_BURST, WK_DRAIN, WK_TICK };
static const struct keyspec worker_keys[] = {
	[WK_BACKOFF] = { "idle_backoff_us", false },
	[WK_SLEEP] = { "idle_sleep_us", false },
	[WK_BURST] = { "burst", false },
	[WK_DRAIN] = { "tx_drain_us", false },
	[WK_TICK] = { "timer_tick_us", false },
};

enum { XK_LIFT, XK_XCP };
static const struct keyspec proto_keys[] = {
	[XK_LIFT] = { "lift", false },
	[XK_XCP] = { "xcp", false },
};

static void
load_limits(struct ld *ld, const struct ynode *v)
{
	const struct ynode *vals[NKEYS(limit_keys)], *keys[NKEYS(limit_keys)];
	struct sgw_limits *lim = &ld->p->limits;
	uint32_t x;

	v = get_map(ld, v, "limits");
	if (v == NULL)
		return;
	map_fields(ld, v, "limits", limit_keys, NKEYS(limit_keys), vals, keys, false);
	get_u32(ld, vals[LK_FLOWS], "flows_per_core", 1024, 16777216, &lim->flows_per_core);
	get_u32(ld, vals[LK_MBUFS], "mbufs", 1023, 16777215, &lim->mbufs);
	get_u32(ld, vals[LK_CACHE], "mbuf_cache", 0, 512, &lim->mbuf_cache);
	if (get_u32(ld, vals[LK_RING], "ring_size", 256, 1048576, &x)) {
		/* rte_ring sizes are powers of two; better to say so than round. */
		if (x & (x - 1))
			ERR(ld, vals[LK_RING], "'ring_size' %" PRIu32 " is not a power of two",
			    x);
		else
			lim->ring_size = x;
	}
	get_u32(ld, vals[LK_IDLE], "flow_idle_ms", 1000, 86400000, &lim->flow_idle_ms);
	/* Every flow may hold a timer: the wheel defaults to one slot per flow. */
	if (vals[LK_TIMERS] == NULL)
		lim->timers_per_core = lim->flows_per_core;
	else
		get_u32(ld, vals[LK_TIMERS], "timers_per_core", 1024, 16777216,
			&lim->timers_per_core);
}

static void
load_workers(struct ld *ld, const struct ynode *v)
{
	const struct ynode *vals[NKEYS(worker_keys)], *keys[NKEYS(worker_keys)];
	struct sgw_workers_conf *w = &ld->p->workers;
	uint32_t x;

	v = get_map(ld, v, "workers");
	if (v == NULL)
		return;
	map_fields(ld, v, "workers", worker_keys, NKEYS(worker_keys), vals, keys, false);
	get_u32(ld, vals[WK_BACKOFF], "idle_backoff_us", 0, 1000000, &w->idle_backoff_us);
	get_u32(ld, vals[WK_SLEEP], "idle_sleep_us", 1, 100000, &w->idle_sleep_us);
	if (get_u32(ld, vals[WK_BURST], "burst", 1, 64, &x))
		w->burst = (uint16_t)x;
	if (get_u32(ld, vals[WK_DRAIN], "tx_drain_us", 1, 10000, &x))
		w->tx_drain_us = (uint16_t)x;
	get_u32(ld, vals[WK_TICK], "timer_tick_us", 10, 100000, &w->timer_tick_us);
}

/* Protocol numbers LIFT and XCP must not take from traffic satgw classifies. */
static const char *
proto_taken(uint32_t x)
{
	unsigned int i;

	for (i = 0; i < N_PROTO_NAMES; i++)
		if (proto_names[i].num == x && x != 51 && x != 47 && x != 132)
			return proto_names[i].name;
	return NULL;
}

static void
load_protocols(struct ld *ld, const struct ynode *v)
{
	const struct ynode *vals[NKEYS(proto_keys)], *keys[NKEYS(proto_keys)];
	struct sgw_policy *p = ld->p;
	bool lift_ok = false;
	const char *taken;
	uint32_t x;

	v = get_map(ld, v, "protocols");
	if (v == NULL)
		return;
	map_fields(ld, v, "protocols", proto_keys, NKEYS(proto_keys), vals, keys, false);
	if (get_u32(ld, vals[XK_LIFT], "lift", 1, 255, &x)) {
		taken = proto_taken(x);
		if (taken != NULL) {
			ERR(ld, vals[XK_LIFT], "'lift' %" PRIu32 " is the protocol number of %s",
			    x, taken);
		} else {
			p->lift_proto = (uint8_t)x;
			lift_ok = true;
		}
	}
	if (get_u32(ld, vals[XK_XCP], "xcp", 1, 255, &x)) {
		taken = proto_taken(x);
		if (taken != NULL)
			ERR(ld, vals[XK_XCP], "'xcp' %" PRIu32 " is the protocol number of %s",
			    x, taken);
		else if (x == p->lift_proto && (lift_ok || vals[XK_LIFT] == NULL))
			ERR(ld, vals[XK_XCP], "'xcp' %" PRIu32 " is the same protocol number "
			    "as 'lift'", x);
		else
			p->xcp_proto = (uint8_t)x;
	}
	/* lift moved onto the default xcp number without xcp moving away. */
	if (lift_ok && vals[XK_XCP] == NULL && p->lift_proto == p->xcp_proto)
		ERR(ld, vals[XK_LIFT], "'lift' %u is the same protocol number as 'xcp' "
		    "(default %u): move 'xcp' too", p->lift_proto, p->xcp_proto);
}

/* ---------------------------------------------------- link (role: emulator) */

/*
 * A number: [+-] digits [. digits] [(e|E) [+-] digits], or [+-] . digits;
 * decimal only (no hex, no '_'), no nan or inf. Kept exactly as m x 10^e
 * (19 significant digits) so that durations become whole nanoseconds without
 * binary rounding; reals come from strtod on the checked text.
 */
struct dec {
	uint64_t m;
	int32_t e;
	bool neg;
};

static const uint64_t pow10_u64[20] = {
	1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull, 10000000ull,
	100000000ull, 1000000000ull, 10000000000ull, 100000000000ull, 1000000000000ull,
	10000000000000ull, 100000000000000ull, 1000000000000000ull, 10000000000000000ull,
	100000000000000000ull, 1000000000000000000ull, 10000000000000000000ull,
};

/* Case-insensitive: is s[0..n) equal to w? */
static bool
word_ieq(const char *s, size_t n, const char *w)
{
	size_t i;

	if (strlen(w) != n)
		return false;
	for (i = 0; i < n; i++) {
		char c = s[i] >= 'A' && s[i] <= 'Z' ? (char)(s[i] - 'A' + 'a') : s[i];

		if (c != w[i])
			return false;
	}
	return true;
}

/* 0 ok, -1 not a number, -3 leading zero, -4 nan or infinity. */
static int
parse_number(const char *s, size_t n, struct dec *d)
{
	size_t i = 0, digits = 0, j;
	bool point = false;
	int32_t ex = 0;

	d->m = 0;
	d->e = 0;
	d->neg = false;
	if (n > 0 && (s[0] == '+' || s[0] == '-')) {
		d->neg = s[0] == '-';
		i++;
	}
	j = i < n && s[i] == '.' ? i + 1 : i;  /* YAML writes .inf and .nan */
	if (word_ieq(s + j, n - j, "nan") || word_ieq(s + j, n - j, "inf") ||
	    word_ieq(s + j, n - j, "infinity"))
		return -4;
	if (i + 1 < n && s[i] == '0' && s[i + 1] >= '0' && s[i + 1] <= '9')
		return -3;
	for (; i < n; i++) {
		if (s[i] >= '0' && s[i] <= '9') {
			digits++;
			if (d->m <= (UINT64_MAX - 9) / 10) {
				d->m = d->m * 10 + (uint64_t)(s[i] - '0');
				if (point)
					d->e--;
			} else if (!point) {
				d->e++; /* past 19 digits: keep the magnitude */
			}
		} else if (s[i] == '.' && !point) {
			point = true;
		} else {
			break;
		}
	}
	if (digits == 0)
		return -1;
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		bool eneg = false;
		size_t ed = 0;

		i++;
		if (i < n && (s[i] == '+' || s[i] == '-')) {
			eneg = s[i] == '-';
			i++;
		}
		for (; i < n && s[i] >= '0' && s[i] <= '9'; i++, ed++)
			if (ex < 100000)
				ex = ex * 10 + (s[i] - '0');
		if (ed == 0)
			return -1;
		d->e += eneg ? -ex : ex;
	}
	return i == n ? 0 : -1;
}

/* value x 10^k, rounded to the nearest integer; false when negative or too large. */
static bool
dec_scale(const struct dec *d, int k, uint64_t *out)
{
	int32_t e = d->e + k;
	uint64_t v = d->m;

	if (v == 0) {
		*out = 0;
		return true;
	}
	if (d->neg)
		return false;
	if (e >= 0) {
		for (; e > 0; e--) {
			if (v > UINT64_MAX / 10)
				return false;
			v *= 10;
		}
	} else if (e < -19) {
		v = 0;
	} else {
		uint64_t p = pow10_u64[-e], r = v % p;

		v = v / p + (r >= p - r);
	}
	*out = v;
	return true;
}

/* "270", "0.5", "12.000001": ns as a decimal in units of 10^k ns, exactly. */
static void
units_text(char *buf, size_t len, uint64_t ns, int k)
{
	uint64_t unit = pow10_u64[k], frac = ns % unit;
	int w = k;

	if (frac == 0) {
		snprintf(buf, len, "%" PRIu64, ns / unit);
		return;
	}
	while (frac % 10 == 0) {
		frac /= 10;
		w--;
	}
	snprintf(buf, len, "%" PRIu64 ".%0*" PRIu64, ns / unit, w, frac);
}

/* A scalar that parses as a number; reported otherwise. */
static bool
want_number(struct ld *ld, const struct ynode *v, const char *key, const char *range,
	    struct dec *d)
{
	char sb[SHOW_MAX + 8], expect[96];
	int rc;

	snprintf(expect, sizeof(expect), "a number %s", range);
	if (!want_scalar(ld, v, key, expect))
		return false;
	rc = parse_number(v->u.s, v->n, d);
	if (rc == -4) {
		ERR(ld, v, "'%s' must be a finite number %s (got %s)", key, range,
		    show(v, sb, sizeof(sb)));
		return false;
	}
	if (rc == -3) {
		ERR(ld, v, "'%s' %s has a leading zero (write the number without it)", key,
		    show(v, sb, sizeof(sb)));
		return false;
	}
	if (rc != 0) {
		ERR(ld, v, "'%s' must be %s (got %s)", key, expect, show(v, sb, sizeof(sb)));
		return false;
	}
	return true;
}

/* A real in lo..hi, or (lo_open) more than lo and at most hi. */
static bool
get_real(struct ld *ld, const struct ynode *v, const char *key, double lo, double hi,
	 bool lo_open, double *out)
{
	char range[96];
	struct dec d;
	char *end;
	double x;

	if (lo_open)
		snprintf(range, sizeof(range), "more than %.10g and at most %.10g", lo, hi);
	else
		snprintf(range, sizeof(range), "in %.10g..%.10g", lo, hi);
	if (v == NULL || !want_number(ld, v, key, range, &d))
		return false;
	x = strtod(v->u.s, &end);
	if (end != v->u.s + v->n)  /* a locale with another decimal point */
		x = (d.neg ? -1.0 : 1.0) * (double)d.m * pow(10.0, d.e);
	if (!(x >= lo && x <= hi) || (lo_open && x <= lo)) {
		ERR(ld, v, "'%s' %s is out of range (must be %s)", key, v->u.s, range);
		return false;
	}
	*out = x == 0.0 ? 0.0 : x; /* no -0: policies are compared bytewise */
	return true;
}

/* A duration written in units of 10^k ns (ms: 6, s: 9), as whole ns. */
static bool
get_dur(struct ld *ld, const struct ynode *v, const char *key, int k, uint64_t lo_ns,
	uint64_t hi_ns, bool lo_open, uint64_t *out)
{
	char range[96], lo[32], hi[32];
	struct dec d;
	uint64_t ns;

	units_text(lo, sizeof(lo), lo_ns, k);
	units_text(hi, sizeof(hi), hi_ns, k);
	if (lo_open)
		snprintf(range, sizeof(range), "more than %s and at most %s", lo, hi);
	else
		snprintf(range, sizeof(range), "in %s..%s", lo, hi);
	if (v == NULL || !want_number(ld, v, key, range, &d))
		return false;
	if (!dec_scale(&d, k, &ns) || ns < lo_ns || ns > hi_ns || (lo_open && ns == lo_ns)) {
		ERR(ld, v, "'%s' %s is out of range (must be %s)", key, v->u.s, range);
		return false;
	}
	*out = ns;
	return true;
}

/* A mapping, required to be one: unlike get_map, an empty value is an error. */
static const struct ynode *
want_map(struct ld *ld, const struct ynode *v, const char *key)
{
	char sb[SHOW_MAX + 8];

	if (v == NULL || v->kind == YN_BAD)
		return NULL;
	if (v->kind != YN_MAP) {
		ERR(ld, v, "'%s' must be a mapping (got %s)", key, show(v, sb, sizeof(sb)));
		return NULL;
	}
	return v;
}

enum { LNK_SEED, LNK_FORWARD, LNK_RETURN };
static const struct keyspec link_keys[] = {
	[LNK_SEED] = { "seed", false },
	[LNK_FORWARD] = { "forward", true },
	[LNK_RETURN] = { "return", true },
};

enum {
	DK_FROM, DK_TO, DK_RATE, DK_DELAY, DK_JITTER, DK_OVERHEAD, DK_QUEUE, DK_LOSS,
	DK_OUTAGES,
};
static const struct keyspec dir_keys[] = {
	[DK_FROM] = { "from", true },
	[DK_TO] = { "to", true },
	[DK_RATE] = { "rate_bps", true },
	[DK_DELAY] = { "delay_ms", false },
	[DK_JITTER] = { "jitter_ms", false },
	[DK_OVERHEAD] = { "overhead_bytes", false },
	[DK_QUEUE] = { "queue", false },
	[DK_LOSS] = { "loss", false },
	[DK_OUTAGES] = { "outages", false },
};

enum { QK_PKTS, QK_BYTES, QK_AQM, QK_MIN, QK_MAX, QK_MAXP, QK_WQ };
static const struct keyspec queue_keys[] = {
	[QK_PKTS] = { "limit_packets", false },
	[QK_BYTES] = { "limit_bytes", false },
	[QK_AQM] = { "aqm", false },
	[QK_MIN] = { "min_bytes", false },   /* required for red and gred */
	[QK_MAX] = { "max_bytes", false },   /* required for red and gred */
	[QK_MAXP] = { "max_p", false },
	[QK_WQ] = { "wq", false },
};

enum { LSK_MODEL, LSK_BER, LSK_P, LSK_GOOD, LSK_BAD };
static const struct keyspec loss_keys[] = {
	[LSK_MODEL] = { "model", true },
	[LSK_BER] = { "ber", false },   /* model ber */
	[LSK_P] = { "p", false },       /* model random */
	[LSK_GOOD] = { "good", false }, /* model gilbert-elliott */
	[LSK_BAD] = { "bad", false },   /* model gilbert-elliott */
};

/* Which loss keys each model takes (all required): none, ber, random, gilbert-elliott. */
static const bool loss_uses[4][NKEYS(loss_keys)] = {
	{ true, false, false, false, false },
	{ true, true, false, false, false },
	{ true, false, true, false, false },
	{ true, false, false, true, true },
};

enum { SK_MEAN, SK_BER, SK_P };
static const struct keyspec state_keys[] = {
	[SK_MEAN] = { "mean_s", true },
	[SK_BER] = { "ber", false },
	[SK_P] = { "p", false },
};

enum { OK_AT, OK_FOR, OK_EVERY };
static const struct keyspec outage_keys[] = {
	[OK_AT] = { "at_s", true },
	[OK_FOR] = { "for_s", true },
	[OK_EVERY] = { "every_s", false },
};

static const char *const aqm_names[] = { "droptail", "red", "gred" };
static const char *const loss_names[] = { "none", "ber", "random", "gilbert-elliott" };

#define SEC_NS 1000000000ull
#define OUTAGE_AT_MAX_NS (31536000ull * SEC_NS)    /* a year */
#define OUTAGE_FOR_MAX_NS (86400ull * SEC_NS)      /* a day */

static void
load_queue(struct ld *ld, const struct ynode *v, const char *dname,
	   struct sgw_linkem_conf *c)
{
	const struct ynode *vals[NKEYS(queue_keys)], *keys[NKEYS(queue_keys)];
	char what[48];
	unsigned int en, k;

	snprintf(what, sizeof(what), "link %s queue", dname);
	v = get_map(ld, v, "queue");
	if (v == NULL)
		return;
	map_fields(ld, v, what, queue_keys, NKEYS(queue_keys), vals, keys, false);
	get_u32(ld, vals[QK_PKTS], "limit_packets", 1, SGW_LINKEM_MAX_QUEUE_PKTS,
		&c->queue_pkts);
	get_u32(ld, vals[QK_BYTES], "limit_bytes", 0, SGW_LINKEM_MAX_QUEUE_BYTES,
		&c->queue_bytes);
	get_u32(ld, vals[QK_MIN], "min_bytes", 0, SGW_LINKEM_MAX_QUEUE_BYTES,
		&c->red_min_bytes);
	get_u32(ld, vals[QK_MAX], "max_bytes", 1, SGW_LINKEM_MAX_QUEUE_BYTES,
		&c->red_max_bytes);
	get_real(ld, vals[QK_MAXP], "max_p", 0.0, 1.0, false, &c->red_max_p);
	get_real(ld, vals[QK_WQ], "wq", 0.0, 1.0, true, &c->red_wq);
	if (vals[QK_AQM] == NULL)
		en = SGW_AQM_DROPTAIL;
	else if (!get_enum(ld, vals[QK_AQM], "aqm", aqm_names, 3, &en))
		return;
	c->aqm = (enum sgw_aqm)en;
	for (k = QK_MIN; k <= QK_WQ; k++) {
		if (c->aqm == SGW_AQM_DROPTAIL && keys[k] != NULL)
			ERR(ld, keys[k], "'%s' is only used with aqm red or gred (this queue is "
			    "droptail)", queue_keys[k].name);
		else if (c->aqm != SGW_AQM_DROPTAIL && vals[k] == NULL && k <= QK_MAX)
			ERR(ld, v, "missing required key '%s' in %s (aqm %s)",
			    queue_keys[k].name, what, aqm_names[en]);
	}
}

static void
load_loss_state(struct ld *ld, const struct ynode *v, const char *dname, const char *sname,
		struct sgw_loss_state *s)
{
	const struct ynode *vals[NKEYS(state_keys)], *keys[NKEYS(state_keys)];
	char what[48];

	snprintf(what, sizeof(what), "link %s loss %s", dname, sname);
	v = want_map(ld, v, sname);
	if (v == NULL)
		return;
	map_fields(ld, v, what, state_keys, NKEYS(state_keys), vals, keys, false);
	check_required(ld, v, what, NULL, state_keys, NKEYS(state_keys), vals);
	get_real(ld, vals[SK_MEAN], "mean_s", SGW_LINKEM_GE_MIN_MEAN_S,
		 SGW_LINKEM_GE_MAX_MEAN_S, false, &s->mean_s);
	get_real(ld, vals[SK_BER], "ber", 0.0, 1.0, false, &s->ber);
	get_real(ld, vals[SK_P], "p", 0.0, 1.0, false, &s->p);
}

static void
load_loss(struct ld *ld, const struct ynode *v, const char *dname, struct sgw_linkem_conf *c)
{
	const struct ynode *vals[NKEYS(loss_keys)], *keys[NKEYS(loss_keys)];
	char what[48];
	unsigned int en, k;

	snprintf(what, sizeof(what), "link %s loss", dname);
	v = get_map(ld, v, "loss");
	if (v == NULL)
		return;
	map_fields(ld, v, what, loss_keys, NKEYS(loss_keys), vals, keys, false);
	check_required(ld, v, what, NULL, loss_keys, NKEYS(loss_keys), vals);
	/* ber and p alone are the BER and random models' parameters: in good. */
	get_real(ld, vals[LSK_BER], "ber", 0.0, 1.0, false, &c->good.ber);
	get_real(ld, vals[LSK_P], "p", 0.0, 1.0, false, &c->good.p);
	if (vals[LSK_GOOD])
		load_loss_state(ld, vals[LSK_GOOD], dname, "good", &c->good);
	if (vals[LSK_BAD])
		load_loss_state(ld, vals[LSK_BAD], dname, "bad", &c->bad);
	if (vals[LSK_MODEL] == NULL ||
	    !get_enum(ld, vals[LSK_MODEL], "model", loss_names, 4, &en))
		return;
	c->loss = (enum sgw_loss_model)en;
	for (k = LSK_BER; k < NKEYS(loss_keys); k++) {
		if (keys[k] != NULL && !loss_uses[en][k])
			ERR(ld, keys[k], "'%s' is not used by loss model '%s'", loss_keys[k].name,
			    loss_names[en]);
		else if (vals[k] == NULL && loss_uses[en][k])
			ERR(ld, v, "missing required key '%s' in %s (model %s)",
			    loss_keys[k].name, what, loss_names[en]);
	}
}

static void
load_outages(struct ld *ld, const struct ynode *v, const char *dname,
	     struct sgw_linkem_conf *c)
{
	const struct ynode *vals[NKEYS(outage_keys)], *keys[NKEYS(outage_keys)];
	char what[48];
	struct list l;
	uint32_t i;

	snprintf(what, sizeof(what), "link %s outage", dname);
	if (!get_section(ld, v, "outages", 0, SGW_LINKEM_MAX_OUTAGES, &l) ||
	    l.n > SGW_LINKEM_MAX_OUTAGES)
		return;
	for (i = 0; i < l.n; i++) {
		const struct ynode *e = l.items[i];
		struct sgw_outage *o = &c->outages[i];

		if (!entry_is_map(ld, e, "outages"))
			continue;
		map_fields(ld, e, what, outage_keys, NKEYS(outage_keys), vals, keys, false);
		check_required(ld, e, what, NULL, outage_keys, NKEYS(outage_keys), vals);
		get_dur(ld, vals[OK_AT], "at_s", 9, 0, OUTAGE_AT_MAX_NS, false, &o->start_ns);
		get_dur(ld, vals[OK_FOR], "for_s", 9, 0, OUTAGE_FOR_MAX_NS, true, &o->dur_ns);
		get_dur(ld, vals[OK_EVERY], "every_s", 9, 0, OUTAGE_AT_MAX_NS, true,
			&o->period_ns);
	}
	c->n_outages = l.n;
}

/*
 * One direction of the link. from/to: the port nodes when they resolved.
 * When the direction has no error of its own, sgw_linkem_conf_check has the
 * last word, reported at the direction's key.
 */
static void
load_link_dir(struct ld *ld, const struct ynode *key, const struct ynode *v,
	      const char *dname, struct sgw_link_dir *d, const struct ynode **from,
	      const struct ynode **to)
{
	const struct ynode *vals[NKEYS(dir_keys)], *keys[NKEYS(dir_keys)];
	uint32_t before = ld->errs->n + ld->errs->dropped;
	char what[48], why[160];
	int64_t idx;

	d->from_port = -1;
	d->to_port = -1;
	sgw_linkem_conf_init(&d->em);
	*from = NULL;
	*to = NULL;
	snprintf(what, sizeof(what), "link %s", dname);
	v = want_map(ld, v, dname);
	if (v == NULL)
		return;
	map_fields(ld, v, what, dir_keys, NKEYS(dir_keys), vals, keys, false);
	check_required(ld, v, what, NULL, dir_keys, NKEYS(dir_keys), vals);
	if (vals[DK_FROM]) {
		idx = resolve(ld, &ld->ports, vals[DK_FROM], "from", "port");
		if (idx >= 0 && idx < SGW_MAX_PORTS) {
			d->from_port = (int16_t)idx;
			*from = vals[DK_FROM];
		}
	}
	if (vals[DK_TO]) {
		idx = resolve(ld, &ld->ports, vals[DK_TO], "to", "port");
		if (idx >= 0 && idx < SGW_MAX_PORTS) {
			d->to_port = (int16_t)idx;
			*to = vals[DK_TO];
		}
	}
	if (vals[DK_RATE])
		get_uint(ld, vals[DK_RATE], "rate_bps", 1000, SGW_LINKEM_MAX_RATE_BPS,
			 &d->em.rate_bps);
	get_dur(ld, vals[DK_DELAY], "delay_ms", 6, 0, SGW_LINKEM_MAX_DELAY_NS, false,
		&d->em.delay_ns);
	get_dur(ld, vals[DK_JITTER], "jitter_ms", 6, 0, SGW_LINKEM_MAX_DELAY_NS, false,
		&d->em.jitter_ns);
	get_u32(ld, vals[DK_OVERHEAD], "overhead_bytes", 0, SGW_LINKEM_MAX_OVERHEAD,
		&d->em.overhead_bytes);
	if (vals[DK_QUEUE])
		load_queue(ld, vals[DK_QUEUE], dname, &d->em);
	if (vals[DK_LOSS])
		load_loss(ld, vals[DK_LOSS], dname, &d->em);
	if (vals[DK_OUTAGES])
		load_outages(ld, vals[DK_OUTAGES], dname, &d->em);
	if (ld->errs->n + ld->errs->dropped == before &&
	    sgw_linkem_conf_check(&d->em, why, sizeof(why)) != 0)
		ERR(ld, key, "link %s: %s", dname, why);
}

/* link: required for role emulator, refused for the others. */
static void
load_link(struct ld *ld, const struct ynode *root, const struct ynode *key,
	  const struct ynode *v, bool role_known)
{
	const struct ynode *vals[NKEYS(link_keys)], *keys[NKEYS(link_keys)];
	const struct ynode *from[2], *to[2];
	struct sgw_emulator_conf *emu = &ld->p->emu;
	const struct sgw_port_conf *ports = ld->p->ports;
	int d;

	if (role_known && ld->p->role != SGW_ROLE_EMULATOR) {
		if (key != NULL)
			ERR(ld, key, "'link' is only used by role emulator (this policy's role "
			    "is %s)", sgw_role_name(ld->p->role));
		return;
	}
	if (v == NULL) {
		if (role_known)
			ERR(ld, root, "missing required key 'link' in the policy (top level): "
			    "role emulator needs it");
		return;
	}
	v = want_map(ld, v, "link");
	if (v == NULL)
		return;
	map_fields(ld, v, "link", link_keys, NKEYS(link_keys), vals, keys, false);
	check_required(ld, v, "link", NULL, link_keys, NKEYS(link_keys), vals);
	emu->seed = 1;
	if (vals[LNK_SEED])
		get_uint(ld, vals[LNK_SEED], "seed", 0, UINT64_MAX, &emu->seed);
	load_link_dir(ld, keys[LNK_FORWARD], vals[LNK_FORWARD], "forward",
		      &emu->dir[SGW_LINK_FORWARD], &from[0], &to[0]);
	load_link_dir(ld, keys[LNK_RETURN], vals[LNK_RETURN], "return",
		      &emu->dir[SGW_LINK_RETURN], &from[1], &to[1]);

	/* The two directions join the two ports, opposite ways. */
	for (d = 0; d < 2; d++)
		if (from[d] != NULL && to[d] != NULL &&
		    emu->dir[d].from_port == emu->dir[d].to_port)
			ERR(ld, to[d], "link %s goes from port '%s' to itself: 'to' must be "
			    "the other port", d == 0 ? "forward" : "return",
			    ports[emu->dir[d].to_port].name);
	if (from[0] && to[0] && from[1] && to[1] &&
	    emu->dir[0].from_port != emu->dir[0].to_port &&
	    emu->dir[1].from_port != emu->dir[1].to_port &&
	    (emu->dir[1].from_port != emu->dir[0].to_port ||
	     emu->dir[1].to_port != emu->dir[0].from_port))
		ERR(ld, from[1], "link return must run opposite to forward (%s -> %s): from "
		    "'%s' to '%s'", ports[emu->dir[0].from_port].name,
		    ports[emu->dir[0].to_port].name, ports[emu->dir[0].to_port].name,
		    ports[emu->dir[0].from_port].name);
}

/* ------------------------------------------- satlink (roles hub, terminal) */

enum {
	SLK_PORT, SLK_TERMINAL, SLK_PEER_MAC, SLK_FWD_RATE, SLK_RET_RATE, SLK_RTT,
	SLK_FRAME, SLK_COPIES, SLK_SPACING, SLK_STATUS, SLK_KEEPALIVE, SLK_LINK_DOWN,
	SLK_SENDQ, SLK_WINDOW, SLK_SERVICE, SLK_KEYS,
};
static const struct keyspec satlink_keys[] = {
	[SLK_PORT] = { "port", true },
	[SLK_TERMINAL] = { "terminal", false },   /* required for role terminal only */
	[SLK_PEER_MAC] = { "peer_mac", false },
	[SLK_FWD_RATE] = { "forward_rate_bps", true },
	[SLK_RET_RATE] = { "return_rate_bps", true },
	[SLK_RTT] = { "rtt_ms", false },
	[SLK_FRAME] = { "frame_size", false },
	[SLK_COPIES] = { "retx_copies", false },
	[SLK_SPACING] = { "retx_spacing_us", false },
	[SLK_STATUS] = { "status_interval_ms", false },
	[SLK_KEEPALIVE] = { "keepalive_ms", false },
	[SLK_LINK_DOWN] = { "link_down_ms", false },
	[SLK_SENDQ] = { "send_queue", false },
	[SLK_WINDOW] = { "window_max", false },
	[SLK_SERVICE] = { "default_service", false },
	[SLK_KEYS] = { "keys", false },
};

#define SL_RATE_MIN 1000ull
#define SL_RATE_MAX 400000000000ull
#define SL_KEYS_ERRBUF 16384

/*
 * keys: a path, relative ones from the policy file's directory (the name the
 * loader was given; none when it has no '/'). False (reported) when it is
 * empty or too long once resolved.
 */
static bool
satlink_keys_path(struct ld *ld, const struct ynode *v, char *out, size_t len)
{
	const char *slash = strrchr(ld->file, '/');
	char sb[SHOW_MAX + 8];
	size_t dir;
	uint32_t i;

	if (!want_scalar(ld, v, "keys", "a file path"))
		return false;
	dir = v->u.s[0] != '/' && slash != NULL ? (size_t)(slash - ld->file) + 1 : 0;
	for (i = 0; i < v->n; i++)
		if ((unsigned char)v->u.s[i] < 0x20 || v->u.s[i] == 0x7f)
			break;
	if (v->n == 0 || i < v->n) {
		ERR(ld, v, "'keys' must be a file path without control characters (got %s)",
		    show(v, sb, sizeof(sb)));
		return false;
	}
	if (dir + v->n >= len) {
		ERR(ld, v, "'keys' path %s is too long: %zu bytes once resolved (at most %zu)",
		    show(v, sb, sizeof(sb)), dir + v->n, len - 1);
		return false;
	}
	memcpy(out, ld->file, dir);
	memcpy(out + dir, v->u.s, v->n + 1);
	return true;
}

/*
 * Load the key file (errors reported at v, one per line the key loader
 * gives), check that every session has a key, and free it again. all: every
 * terminal has a session (hub); else term, when >= 0, is the only one.
 */
static void
satlink_check_keys(struct ld *ld, const struct ynode *v, const char *path, bool all,
		   int64_t term)
{
	const struct sgw_policy *p = ld->p;
	struct sgw_slcrypto_keys *keys = NULL;
	char *eb = malloc(SL_KEYS_ERRBUF);
	uint32_t i;

	if (eb == NULL) {
		oom(ld);
		return;
	}
	if (sgw_slcrypto_keys_load(path, &keys, eb, SL_KEYS_ERRBUF) != 0) {
		char *line = eb, *end;
		bool any = false;

		while (*line != '\0') {
			end = line + strcspn(line, "\n");
			if (end > line) {
				ERR(ld, v, "satlink keys: %.*s", (int)(end - line), line);
				any = true;
			}
			line = *end != '\0' ? end + 1 : end;
		}
		if (!any)
			ERR(ld, v, "satlink keys: %s: cannot load", path);
		free(eb);
		return;
	}
	free(eb);
	if (all) {
		for (i = 0; i < p->n_terminals; i++) {
			if (sgw_slcrypto_keys_find(keys, p->terminals[i].id) != NULL)
				continue;
			ERR(ld, v, "satlink keys: %s has no key for terminal '%s' (id %" PRIu32
			    ")", path, p->terminals[i].name, p->terminals[i].id);
			break;
		}
	} else if (term >= 0 && sgw_slcrypto_keys_find(keys, p->terminals[term].id) == NULL) {
		ERR(ld, v, "satlink keys: %s has no key for terminal '%s' (id %" PRIu32 ")",
		    path, p->terminals[term].name, p->terminals[term].id);
	}
	sgw_slcrypto_keys_free(keys);
}

/* satlink: optional for roles hub and terminal, refused for emulator. */
static void
load_satlink(struct ld *ld, const struct ynode *key, const struct ynode *v, bool role_known)
{
	const struct ynode *vals[NKEYS(satlink_keys)], *keys[NKEYS(satlink_keys)];
	struct sgw_policy *p = ld->p;
	struct sgw_satlink_conf *sl = &p->satlink;
	char path[SGW_SL_KEYS_PATH_MAX];
	bool keepalive_ok = true, path_ok = false;
	int64_t term = -1, idx;
	uint8_t mac[6];
	unsigned int en;
	uint32_t x, i;

	if (v == NULL || is_null(v))
		return;
	if (role_known && p->role == SGW_ROLE_EMULATOR) {
		ERR(ld, key, "'satlink' is only used by roles hub and terminal (this policy's "
		    "role is %s)", sgw_role_name(p->role));
		return;
	}
	v = get_map(ld, v, "satlink");
	if (v == NULL)
		return;
	sl->enabled = true;
	map_fields(ld, v, "satlink", satlink_keys, NKEYS(satlink_keys), vals, keys, false);
	check_required(ld, v, "satlink", NULL, satlink_keys, NKEYS(satlink_keys), vals);

	if (vals[SLK_PORT]) {
		idx = resolve(ld, &ld->ports, vals[SLK_PORT], "port", "port");
		if (idx >= 0 && idx < SGW_MAX_PORTS) {
			if (p->ports[idx].role != SGW_PORT_SATELLITE)
				ERR(ld, vals[SLK_PORT], "satlink port '%s' has role %s: satlink "
				    "runs on a port whose role is satellite", p->ports[idx].name,
				    sgw_port_role_name(p->ports[idx].role));
			else
				sl->port = (int16_t)idx;
		}
	}

	/* terminal: which terminal this box is; a hub has a session per terminal. */
	if (role_known && p->role == SGW_ROLE_HUB && keys[SLK_TERMINAL] != NULL)
		ERR(ld, keys[SLK_TERMINAL], "'terminal' is only used by role terminal (this "
		    "policy's role is hub: it has a session per terminal)");
	else if (role_known && p->role == SGW_ROLE_TERMINAL && vals[SLK_TERMINAL] == NULL)
		ERR(ld, v, "missing required key 'terminal' in satlink (role terminal)");
	else if (vals[SLK_TERMINAL] &&
		 get_u32(ld, vals[SLK_TERMINAL], "terminal", 0, UINT32_MAX, &x)) {
		sl->terminal_id = x;
		if (ld->terms.usable) {
			for (i = 0; i < p->n_terminals; i++)
				if (p->terminals[i].id == x)
					break;
			if (i < p->n_terminals)
				term = i;
			else
				ERR(ld, vals[SLK_TERMINAL], "satlink terminal %" PRIu32 " is not "
				    "the id of any terminal in 'terminals'", x);
		}
	}
	if (role_known && p->role == SGW_ROLE_HUB && ld->terms.usable && p->n_terminals == 0)
		ERR(ld, key, "satlink on a hub needs at least one terminal in 'terminals' "
		    "(one session per terminal)");

	if (vals[SLK_PEER_MAC] && get_mac(ld, vals[SLK_PEER_MAC], "peer_mac", false, mac))
		memcpy(sl->peer_mac, mac, sizeof(mac));
	if (vals[SLK_FWD_RATE])
		get_uint(ld, vals[SLK_FWD_RATE], "forward_rate_bps", SL_RATE_MIN, SL_RATE_MAX,
			 &sl->forward_rate_bps);
	if (vals[SLK_RET_RATE])
		get_uint(ld, vals[SLK_RET_RATE], "return_rate_bps", SL_RATE_MIN, SL_RATE_MAX,
			 &sl->return_rate_bps);
	get_u32(ld, vals[SLK_RTT], "rtt_ms", 1, 10000, &sl->rtt_ms);
	if (get_u32(ld, vals[SLK_FRAME], "frame_size", 64, 1960, &x))
		sl->frame_size = (uint16_t)x;
	/* A frame (payload + 22 header + 28 crypto) must fit the port's MTU (DPDK's 1500
	 * when the policy leaves it): the dataplane would refuse to start otherwise. */
	if (sl->port >= 0) {
		uint32_t mtu = p->ports[sl->port].mtu != 0 ? p->ports[sl->port].mtu : 1500;

		if (sl->frame_size + 50u > mtu)
			ERR(ld, vals[SLK_FRAME] ? vals[SLK_FRAME] : vals[SLK_PORT],
			    "satlink frame_size %u + 50 bytes of satlink headers exceeds port "
			    "'%s' mtu %" PRIu32 "%s: at most %" PRIu32, sl->frame_size,
			    p->ports[sl->port].name, mtu,
			    p->ports[sl->port].mtu != 0 ? "" : " (not set: 1500)", mtu - 50);
	}
	if (get_u32(ld, vals[SLK_COPIES], "retx_copies", 1, 8, &x))
		sl->retx_copies = (uint8_t)x;
	get_u32(ld, vals[SLK_SPACING], "retx_spacing_us", 0, 1000000, &sl->retx_spacing_us);
	get_u32(ld, vals[SLK_STATUS], "status_interval_ms", 1, 1000, &sl->status_interval_ms);
	if (vals[SLK_KEEPALIVE])
		keepalive_ok = get_u32(ld, vals[SLK_KEEPALIVE], "keepalive_ms", 10, 60000,
				       &sl->keepalive_ms);
	if (vals[SLK_LINK_DOWN]) {
		if (get_u32(ld, vals[SLK_LINK_DOWN], "link_down_ms", 20, 600000, &x) &&
		    keepalive_ok) {
			if (x <= sl->keepalive_ms)
				ERR(ld, vals[SLK_LINK_DOWN], "'link_down_ms' %" PRIu32 " must be "
				    "more than 'keepalive_ms' (%" PRIu32 "%s)", x, sl->keepalive_ms,
				    vals[SLK_KEEPALIVE] ? "" : ", the default");
			else
				sl->link_down_ms = x;
		}
	} else if (vals[SLK_KEEPALIVE] && keepalive_ok && sl->keepalive_ms >= sl->link_down_ms) {
		/* keepalive moved past the default link_down_ms without it moving too. */
		ERR(ld, vals[SLK_KEEPALIVE], "'keepalive_ms' %" PRIu32 " must be less than "
		    "'link_down_ms' (default %" PRIu32 "): set 'link_down_ms' too",
		    sl->keepalive_ms, sl->link_down_ms);
	}
	get_u32(ld, vals[SLK_SENDQ], "send_queue", 1, 65536, &sl->send_queue);
	get_u32(ld, vals[SLK_WINDOW], "window_max", 64, 8192, &sl->window_max);
	if (vals[SLK_SERVICE] && get_enum(ld, vals[SLK_SERVICE], "default_service",
					  sl_service_names, N_SL_SERVICES, &en))
		sl->default_service = (enum sgw_sl_service)(en + SGW_SL_SVC_RELIABLE);

	if (vals[SLK_KEYS] && satlink_keys_path(ld, vals[SLK_KEYS], path, sizeof(path))) {
		memcpy(sl->keys, path, strlen(path) + 1);
		path_ok = true;
	}
	/* Sessions: every terminal at a hub, this terminal at a terminal. */
	if (path_ok)
		satlink_check_keys(ld, vals[SLK_KEYS], path, role_known &&
				   p->role == SGW_ROLE_HUB && ld->terms.usable, term);
}

/* An emulator joins two ports and forwards every frame through the link model. */
static void
check_emulator_sections(struct ld *ld, const struct ynode *const *vals,
			const struct ynode *const *keys)
{
	static const unsigned int unused[] = { TK_NEXT_HOPS, TK_TERMINALS, TK_RULES };
	const struct ynode *ports = vals[TK_PORTS];
	unsigned int i;

	if (ports != NULL && ports->kind == YN_SEQ && ports->n != 2 &&
	    ports->n <= SGW_MAX_PORTS && ports->n > 0)
		ERR(ld, ports, "an emulator joins exactly two ports (got %" PRIu32 ")", ports->n);
	for (i = 0; i < NKEYS(unused); i++) {
		const struct ynode *v = vals[unused[i]];

		if (v != NULL && v->kind != YN_BAD && !is_null(v) &&
		    !(v->kind == YN_SEQ && v->n == 0))
			ERR(ld, keys[unused[i]], "'%s' is not used by role emulator (it forwards "
			    "every frame through the link model)", top_keys[unused[i]].name);
	}
}

static const char *const role_names[] = { "hub", "terminal", "emulator" };
static const char *const malformed_names[] = { "drop", "forward" };
static const char *const default_action_names[] = { "forward", "drop" };

/* Top-level key that belongs in a subsection, for a better hint. */
static const char *
subsection_of(const struct ynode *key)
{
	unsigned int i;

	for (i = 0; i < NKEYS(limit_keys); i++)
		if (seq(key, limit_keys[i].name))
			return "limits";
	for (i = 0; i < NKEYS(worker_keys); i++)
		if (seq(key, worker_keys[i].name))
			return "workers";
	for (i = 0; i < NKEYS(link_keys); i++)
		if (seq(key, link_keys[i].name))
			return "link";
	/* Not 'port' nor 'terminal': at the top those are more likely 'ports', 'terminals'. */
	for (i = SLK_PEER_MAC; i < NKEYS(satlink_keys); i++)
		if (seq(key, satlink_keys[i].name))
			return "satlink";
	return NULL;
}

static void
load_root(struct ld *ld, const struct ynode *root)
{
	const struct ynode *vals[NKEYS(top_keys)], *keys[NKEYS(top_keys)];
	struct sgw_policy *p = ld->p;
	char sb[SHOW_MAX + 8];
	bool role_known = false;
	unsigned int en;
	uint64_t x64;

	if (is_null(root)) {
		ERR(ld, root, "empty policy: expected a mapping with at least 'version', "
		    "'role' and 'ports'");
		return;
	}
	if (root->kind != YN_MAP) {
		ERR(ld, root, "a policy must be a mapping of keys such as 'version' and "
		    "'role' (got %s)", show(root, sb, sizeof(sb)));
		return;
	}
	map_fields(ld, root, "the policy (top level)", top_keys, NKEYS(top_keys), vals, keys,
		   true);
	check_required(ld, root, "the policy (top level)", NULL, top_keys, NKEYS(top_keys),
		       vals);

	if (vals[TK_VERSION] && want_scalar(ld, vals[TK_VERSION], "version", "1") &&
	    (parse_uint(vals[TK_VERSION]->u.s, vals[TK_VERSION]->n, &x64) != 0 || x64 != 1))
		ERR(ld, vals[TK_VERSION], "unsupported policy version %.*s: this satgw reads "
		    "version 1", SHOW_MAX, vals[TK_VERSION]->u.s);
	if (vals[TK_ROLE] && get_enum(ld, vals[TK_ROLE], "role", role_names, 3, &en)) {
		p->role = (enum sgw_role)en;
		role_known = true;
	}
	load_ports(ld, vals[TK_PORTS]);
	load_next_hops(ld, vals[TK_NEXT_HOPS]);
	load_terminals(ld, vals[TK_TERMINALS]);
	load_rules(ld, vals[TK_RULES], vals[TK_SATLINK] != NULL &&
		   vals[TK_SATLINK]->kind != YN_BAD && !is_null(vals[TK_SATLINK]));
	load_limits(ld, vals[TK_LIMITS]);
	load_workers(ld, vals[TK_WORKERS]);
	load_protocols(ld, vals[TK_PROTOCOLS]);
	if (vals[TK_MALFORMED] &&
	    get_enum(ld, vals[TK_MALFORMED], "malformed", malformed_names, 2, &en))
		p->malformed = (enum sgw_malformed_policy)en;
	if (vals[TK_DEFAULT_ACTION] &&
	    get_enum(ld, vals[TK_DEFAULT_ACTION], "default_action", default_action_names, 2,
		     &en))
		p->default_action = en == 0 ? SGW_ACT_FORWARD : SGW_ACT_DROP;
	if (role_known && p->role == SGW_ROLE_EMULATOR)
		check_emulator_sections(ld, vals, keys);
	load_link(ld, root, keys[TK_LINK], vals[TK_LINK], role_known);
	load_satlink(ld, keys[TK_SATLINK], vals[TK_SATLINK], role_known);
}

/* ------------------------------------------------------ YAML -> tree */

struct frame {
	struct ynode *node;
	struct ynode **kids;
	size_t n, cap;
};

static struct ynode *
new_node(struct ld *ld, const yaml_event_t *ev, uint8_t kind)
{
	struct ynode *v = arena_alloc(&ld->arena, sizeof(*v));

	if (v == NULL) {
		oom(ld);
		return NULL;
	}
	memset(v, 0, sizeof(*v));
	v->kind = kind;
	v->line = (uint32_t)ev->start_mark.line + 1;
	v->col = (uint32_t)ev->start_mark.column + 1;
	return v;
}

static bool
frame_push_kid(struct ld *ld, struct frame *f, struct ynode *kid)
{
	if (f->n == f->cap) {
		size_t nc = f->cap ? f->cap * 2 : 8;
		struct ynode **nk = realloc(f->kids, nc * sizeof(*nk));

		if (nk == NULL) {
			oom(ld);
			return false;
		}
		f->kids = nk;
		f->cap = nc;
	}
	f->kids[f->n++] = kid;
	return true;
}

/*
 * Where libyaml's marks are. They count characters, not bytes, from after a
 * UTF-8 byte order mark, and a line ends at LF, CR, CR LF, NEL, LS or PS;
 * reader errors (bad UTF-8) carry a byte offset instead. These convert.
 */
static bool
utf8_cont(char c)
{
	return ((unsigned char)c & 0xC0) == 0x80;
}

static size_t
bom_len(const struct ld *ld)
{
	return ld->len >= 3 && memcmp(ld->buf, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
}

/* The length of the line break at byte i, 0 if there is none. */
static size_t
break_len(const struct ld *ld, size_t i)
{
	const unsigned char *b = (const unsigned char *)ld->buf;

	if (b[i] == '\n')
		return 1;
	if (b[i] == '\r')
		return i + 1 < ld->len && b[i + 1] == '\n' ? 2 : 1;
	if (b[i] == 0xC2 && i + 1 < ld->len && b[i + 1] == 0x85)
		return 2;
	if (b[i] == 0xE2 && i + 2 < ld->len && b[i + 1] == 0x80 &&
	    (b[i + 2] == 0xA8 || b[i + 2] == 0xA9))
		return 3;
	return 0;
}

/* The 1-based line and column of the byte at offset at. */
static void
byte_mark(const struct ld *ld, size_t at, uint32_t *line, uint32_t *col)
{
	size_t i = bom_len(ld), brk;

	*line = 1;
	*col = 1;
	while (i < at && i < ld->len) {
		brk = break_len(ld, i);
		if (brk != 0) {
			(*line)++;
			*col = 1;
			i += brk;
			continue;
		}
		if (!utf8_cont(ld->buf[i]))
			(*col)++;
		i++;
	}
}

/* The byte offset of libyaml's character index idx. */
static size_t
char_offset(const struct ld *ld, size_t idx)
{
	size_t i, n = 0;

	for (i = bom_len(ld); i < ld->len; i++) {
		if (utf8_cont(ld->buf[i]))
			continue;
		if (n++ == idx)
			return i;
	}
	return ld->len;
}

/* The number of spaces that indent the line holding byte at. */
static size_t
line_indent(const struct ld *ld, size_t at)
{
	size_t s = at, n = 0;

	while (s > bom_len(ld) && ld->buf[s - 1] != '\n' && ld->buf[s - 1] != '\r')
		s--;
	while (s + n < ld->len && ld->buf[s + n] == ' ')
		n++;
	return n;
}

/*
 * libyaml notices some mistakes only later, at its problem mark, and names
 * where the construct it was reading began, its context mark. Report the
 * context mark when that is where the operator has to look:
 * - a simple key without ':' ('action:drop', no space after the colon): it
 *   is noticed at the next token, on a later line;
 * - an unclosed quote: noticed at the end of the file (or at a '---');
 * - an unclosed '[' or '{': noticed on a later line; when that line is back
 *   at the indentation of the line that opened the bracket (the next key,
 *   the end of the file), the bracket was never closed. Inside a flow written
 *   over several lines (a missing ',') the problem mark is the nearer one.
 * Elsewhere the problem mark is the mistake itself (a tab, a bad escape, a
 * badly indented key) and the context can be far above it.
 */
static bool
at_context(const struct ld *ld, const yaml_parser_t *yp)
{
	const char *ctx = yp->context, *pb = yp->problem != NULL ? yp->problem : "";

	if (ctx == NULL)
		return false;
	if (strstr(ctx, "simple key") != NULL)
		return true;
	if (strstr(ctx, "quoted scalar") != NULL)
		return strstr(pb, "end of stream") != NULL ||
			strstr(pb, "document indicator") != NULL;
	if (strstr(ctx, "flow") != NULL && yp->context_mark.line < yp->problem_mark.line)
		return line_indent(ld, char_offset(ld, yp->problem_mark.index)) <=
			line_indent(ld, char_offset(ld, yp->context_mark.index));
	return false;
}

/* A libyaml error as "YAML syntax error: ..." where the operator has to look. */
static void
syntax_error(struct ld *ld, const yaml_parser_t *yp)
{
	const yaml_mark_t *m = at_context(ld, yp) ? &yp->context_mark : &yp->problem_mark;
	uint32_t line = (uint32_t)m->line + 1;
	uint32_t col = (uint32_t)m->column + 1;
	const char *hint = "";
	size_t at;

	if (yp->error == YAML_MEMORY_ERROR) {
		oom(ld);
		return;
	}
	if (yp->error == YAML_READER_ERROR) {
		/*
		 * Bad UTF-8 or a control character, at a byte offset. A trailing
		 * byte that is wrong is reported at the character it should end.
		 */
		at = yp->problem_offset;
		if (yp->problem != NULL && strstr(yp->problem, "trailing") != NULL) {
			while (at > 0 && at - 1 < ld->len && utf8_cont(ld->buf[at - 1]))
				at--;
			if (at > 0)
				at--;
		}
		byte_mark(ld, at, &line, &col);
		err_at(ld, line, col, "cannot read the file as UTF-8 text: %s", yp->problem);
		return;
	}
	at = char_offset(ld, m->index);
	if (at < ld->len && ld->buf[at] == '\t')
		hint = ": YAML indents with spaces, not tabs";
	else if (at + 1 < ld->len && ld->buf[at] == ':' && ld->buf[at + 1] == ':')
		hint = ": quote values that start with ':' (\"::1/128\")";
	err_at(ld, line, col, "YAML syntax error: %s%s%s%s%s", yp->problem ? yp->problem : "?",
	       yp->context ? " (" : "", yp->context ? yp->context : "", yp->context ? ")" : "",
	       hint);
}

/*
 * Events to a tree. Returns the document's root, or NULL (errors reported)
 * for a syntax error, an empty stream, or running out of memory.
 */
static struct ynode *
build_tree(struct ld *ld)
{
	struct frame *stack = NULL;
	size_t depth = 0, i;
	struct ynode *root = NULL;
	unsigned int docs = 0;
	yaml_parser_t yp;
	bool done = false, failed = false;

	stack = calloc(MAX_DEPTH + 1, sizeof(*stack));
	if (stack == NULL || !yaml_parser_initialize(&yp)) {
		free(stack);
		oom(ld);
		return NULL;
	}
	yaml_parser_set_input_string(&yp, (const unsigned char *)ld->buf, ld->len);
	while (!done && !failed) {
		yaml_event_t ev;
		struct ynode *v = NULL;
		const yaml_char_t *anchor = NULL;

		if (!yaml_parser_parse(&yp, &ev)) {
			syntax_error(ld, &yp);
			failed = true;
			break;
		}
		switch (ev.type) {
		case YAML_STREAM_END_EVENT:
			done = true;
			break;
		case YAML_DOCUMENT_START_EVENT:
			if (++docs > 1) {
				err_at(ld, (uint32_t)ev.start_mark.line + 1,
				       (uint32_t)ev.start_mark.column + 1,
				       "a policy file holds one YAML document; this is a second");
				failed = true;
			}
			break;
		case YAML_SCALAR_EVENT: {
			char *s;

			anchor = ev.data.scalar.anchor;
			v = new_node(ld, &ev, YN_SCALAR);
			s = v ? arena_alloc(&ld->arena, ev.data.scalar.length + 1) : NULL;
			if (s == NULL) {
				oom(ld);
				failed = true;
				break;
			}
			memcpy(s, ev.data.scalar.value, ev.data.scalar.length);
			s[ev.data.scalar.length] = '\0';
			v->u.s = s;
			v->n = (uint32_t)ev.data.scalar.length;
			v->plain = ev.data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
			/* An embedded NUL ("\0") would cut the string short: refuse it. */
			if (strlen(s) != ev.data.scalar.length) {
				err_at(ld, v->line, v->col, "NUL character in a value");
				v->kind = YN_BAD;
			}
			break;
		}
		case YAML_ALIAS_EVENT:
			v = new_node(ld, &ev, YN_BAD);
			if (v != NULL)
				err_at(ld, v->line, v->col, "YAML aliases (*%s) are not "
				       "supported: write the value out",
				       (const char *)ev.data.alias.anchor);
			break;
		case YAML_SEQUENCE_START_EVENT:
		case YAML_MAPPING_START_EVENT:
			anchor = ev.type == YAML_SEQUENCE_START_EVENT ?
				ev.data.sequence_start.anchor : ev.data.mapping_start.anchor;
			v = new_node(ld, &ev, ev.type == YAML_SEQUENCE_START_EVENT ?
				     YN_SEQ : YN_MAP);
			if (v == NULL)
				break;
			if (depth == MAX_DEPTH) {
				err_at(ld, v->line, v->col, "nesting deeper than %d levels",
				       MAX_DEPTH);
				failed = true;
				break;
			}
			stack[depth].node = v;
			stack[depth].n = 0;
			depth++;
			break;
		case YAML_SEQUENCE_END_EVENT:
		case YAML_MAPPING_END_EVENT: {
			struct frame *f = &stack[--depth];

			v = f->node;
			v->n = (uint32_t)(v->kind == YN_MAP ? f->n / 2 : f->n);
			v->u.kids = arena_alloc(&ld->arena,
						(f->n ? f->n : 1) * sizeof(*v->u.kids));
			if (v->u.kids == NULL) {
				oom(ld);
				break;
			}
			if (f->n)
				memcpy(v->u.kids, f->kids, f->n * sizeof(*v->u.kids));
			break;
		}
		default:
			break;
		}
		if (anchor != NULL && v != NULL)
			err_at(ld, v->line, v->col, "YAML anchors (&%s) are not supported: "
			       "write the value out", (const char *)anchor);
		/* Attach a finished node to its parent (starts attach at their end). */
		if (v != NULL && !ld->oom && ev.type != YAML_SEQUENCE_START_EVENT &&
		    ev.type != YAML_MAPPING_START_EVENT) {
			struct frame *f = depth ? &stack[depth - 1] : NULL;

			/*
			 * "key:" with nothing after it: libyaml marks the empty value
			 * past the colon; "'key' needs a value" reads better at the key.
			 */
			if (f != NULL && f->node->kind == YN_MAP && f->n % 2 == 1 &&
			    is_null(v) && v->n == 0) {
				v->line = f->kids[f->n - 1]->line;
				v->col = f->kids[f->n - 1]->col;
			}
			if (f == NULL)
				root = v;
			else if (!frame_push_kid(ld, f, v))
				failed = true;
		}
		if (ld->oom)
			failed = true;
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&yp);
	for (i = 0; i <= MAX_DEPTH; i++)
		free(stack[i].kids);
	free(stack);
	if (failed)
		return NULL;
	if (root == NULL)
		err_at(ld, 1, 1, "empty policy: expected a mapping with at least 'version', "
		       "'role' and 'ports'");
	return root;
}

/* ------------------------------------------------------------ entry points */

static int
errpos_cmp(const void *a, const void *b)
{
	const struct sgw_cfg_error *x = a, *y = b;

	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	if (x->col != y->col)
		return x->col < y->col ? -1 : 1;
	return 0;
}

/* Stable insertion sort by position: qsort is not stable, and n <= 64. */
static void
sort_errors(struct sgw_cfg_errors *errs)
{
	uint32_t i, j;

	for (i = 1; i < errs->n; i++) {
		struct sgw_cfg_error tmp = errs->e[i];

		for (j = i; j > 0 && errpos_cmp(&errs->e[j - 1], &tmp) > 0; j--)
			errs->e[j] = errs->e[j - 1];
		errs->e[j] = tmp;
	}
}

int
sgw_policy_load_buffer(const char *name, const char *buf, size_t len,
		       struct sgw_policy *out, struct sgw_cfg_errors *errs)
{
	struct sgw_cfg_errors local;
	struct ld ld;
	struct ynode *root;

	if (errs == NULL)
		errs = &local;
	errs->n = 0;
	errs->dropped = 0;
	sgw_policy_init_defaults(out);
	memset(&ld, 0, sizeof(ld));
	ld.file = name ? name : "<policy>";
	ld.buf = buf;
	ld.len = len;
	ld.errs = errs;
	ld.p = out;

	if (len > SGW_CFG_MAX_BYTES) {
		err_at(&ld, 0, 0, "file is too large (%zu bytes; the limit is %u MiB)", len,
		       SGW_CFG_MAX_BYTES >> 20);
		return -1;
	}
	root = build_tree(&ld);
	if (root != NULL)
		load_root(&ld, root);
	free(ld.ports.e);
	free(ld.nhops.e);
	free(ld.terms.e);
	arena_free(&ld.arena);
	if (errs->n == 0 && errs->dropped == 0)
		return 0;
	sort_errors(errs);
	sgw_policy_free(out);
	sgw_policy_init_defaults(out);
	return -1;
}

int
sgw_policy_load_file(const char *path, struct sgw_policy *out, struct sgw_cfg_errors *errs)
{
	struct sgw_cfg_errors local;
	struct sgw_cfg_error *e;
	size_t len = 0, cap = 0;
	struct stat st;
	char *buf = NULL;
	FILE *f;
	int rc, saved, fd;

	if (errs == NULL)
		errs = &local;
	errs->n = 0;
	errs->dropped = 0;
	sgw_policy_init_defaults(out);
	e = &errs->e[0];
	/*
	 * Only a regular file: a FIFO would block the control thread (and every
	 * later reload) in open or read. Checked before opening, opened
	 * non-blocking, and checked again on what was opened.
	 */
	f = NULL;
	saved = 0;  /* with f == NULL: not a regular file */
	if (stat(path, &st) != 0 || S_ISREG(st.st_mode)) {
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
		if (fd < 0) {
			saved = errno;
		} else if (fstat(fd, &st) != 0) {
			saved = errno;
			close(fd);
		} else if (!S_ISREG(st.st_mode)) {
			close(fd);
		} else if ((f = fdopen(fd, "rb")) == NULL) {
			saved = errno;
			close(fd);
		}
	}
	if (f == NULL) {
		errs->n = 1;
		snprintf(e->file, sizeof(e->file), "%s", path);
		e->line = 0;
		e->col = 0;
		if (saved != 0)
			snprintf(e->msg, sizeof(e->msg), "cannot open: %s", strerror(saved));
		else
			snprintf(e->msg, sizeof(e->msg), "not a regular file");
		return -1;
	}
	/* Read at most one byte past the limit: enough to know it is too large. */
	for (;;) {
		size_t got;

		if (len == cap) {
			size_t nc = cap ? cap * 2 : 65536;
			char *nb;

			if (nc > SGW_CFG_MAX_BYTES + 1)
				nc = SGW_CFG_MAX_BYTES + 1;
			if (nc == cap)
				break;
			nb = realloc(buf, nc);
			if (nb == NULL) {
				saved = ENOMEM;
				goto read_error;
			}
			buf = nb;
			cap = nc;
		}
		errno = 0;
		got = fread(buf + len, 1, cap - len, f);
		len += got;
		if (got == 0) {
			if (ferror(f)) {
				saved = errno ? errno : EIO;
				goto read_error;
			}
			break;
		}
	}
	fclose(f);
	if (len > SGW_CFG_MAX_BYTES) {
		free(buf);
		errs->n = 1;
		snprintf(e->file, sizeof(e->file), "%s", path);
		e->line = 0;
		e->col = 0;
		snprintf(e->msg, sizeof(e->msg), "file is too large (more than %u MiB)",
			 SGW_CFG_MAX_BYTES >> 20);
		return -1;
	}
	rc = sgw_policy_load_buffer(path, buf ? buf : "", len, out, errs);
	free(buf);
	return rc;

read_error:
	fclose(f);
	free(buf);
	errs->n = 1;
	snprintf(e->file, sizeof(e->file), "%s", path);
	e->line = 0;
	e->col = 0;
	snprintf(e->msg, sizeof(e->msg), "cannot read: %s", strerror(saved));
	return -1;
}

int
sgw_cfg_error_format(const struct sgw_cfg_error *e, char *buf, size_t len)
{
	return snprintf(buf, len, "%s:%" PRIu32 ":%" PRIu32 ": %s", e->file, e->line, e->col,
			e->msg);
}

void
sgw_cfg_errors_print(FILE *f, const struct sgw_cfg_errors *errs)
{
	char line[sizeof(errs->e[0].file) + sizeof(errs->e[0].msg) + 32];
	uint32_t i;

	for (i = 0; i < errs->n && i < SGW_CFG_MAX_ERRORS; i++) {
		sgw_cfg_error_format(&errs->e[i], line, sizeof(line));
		fprintf(f, "%s\n", line);
	}
	if (errs->dropped)
		fprintf(f, "... and %" PRIu32 " more error%s\n", errs->dropped,
			errs->dropped == 1 ? "" : "s");
}

/* ------------------------------------------------------------------ dump */

/* Names are [A-Za-z0-9_.-]: plain unless they start with what YAML reads as syntax. */
static void
put_name(FILE *f, const char *s)
{
	bool plain = (s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z') ||
		(s[0] >= '0' && s[0] <= '9') || s[0] == '_';

	fprintf(f, plain ? "%s" : "\"%s\"", s);
}

static void
put_quoted(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

static void
put_prefixes(FILE *f, const struct sgw_prefix *p, unsigned int n)
{
	char buf[SGW_PREFIX_STRLEN];
	unsigned int i;

	fputc('[', f);
	for (i = 0; i < n; i++) {
		if (sgw_prefix_format(&p[i], buf, sizeof(buf)) < 0)
			snprintf(buf, sizeof(buf), "?");
		fprintf(f, "%s\"%s\"", i ? ", " : "", buf);
	}
	fputs("]\n", f);
}

static void
put_ranges16(FILE *f, const char *key, const struct sgw_range16 *r, unsigned int n)
{
	unsigned int i;

	fprintf(f, "      %s: [", key);
	for (i = 0; i < n; i++) {
		if (r[i].lo == r[i].hi)
			fprintf(f, "%s%u", i ? ", " : "", r[i].lo);
		else
			fprintf(f, "%s\"%u-%u\"", i ? ", " : "", r[i].lo, r[i].hi);
	}
	fputs("]\n", f);
}

static void
put_match(FILE *f, const struct sgw_policy *p, const struct sgw_rule *r)
{
	unsigned int i, k, n;

	if (r->in_port < 0 && r->terminal < 0 && !r->n_src && !r->n_dst && !r->n_proto &&
	    !r->n_sport && !r->n_dport && !r->n_spi && !r->dscp_mask)
		return;
	fputs("    match:\n", f);
	if (r->in_port >= 0 && r->in_port < p->n_ports) {
		fputs("      in_port: ", f);
		put_name(f, p->ports[r->in_port].name);
		fputc('\n', f);
	}
	if (r->terminal >= 0 && (uint32_t)r->terminal < p->n_terminals) {
		fputs("      terminal: ", f);
		put_name(f, p->terminals[r->terminal].name);
		fputc('\n', f);
	}
	if (r->n_src) {
		fputs("      src: ", f);
		put_prefixes(f, r->src, r->n_src);
	}
	if (r->n_dst) {
		fputs("      dst: ", f);
		put_prefixes(f, r->dst, r->n_dst);
	}
	if (r->n_proto) {
		fputs("      proto: [", f);
		for (i = 0; i < r->n_proto; i++) {
			const char *nm = NULL;

			for (k = 0; k < N_PROTO_NAMES; k++)
				if (proto_names[k].num == r->proto[i])
					nm = proto_names[k].name;
			if (nm != NULL)
				fprintf(f, "%s%s", i ? ", " : "", nm);
			else
				fprintf(f, "%s%u", i ? ", " : "", r->proto[i]);
		}
		fputs("]\n", f);
	}
	if (r->n_sport)
		put_ranges16(f, "src_ports", r->sport, r->n_sport);
	if (r->n_dport)
		put_ranges16(f, "dst_ports", r->dport, r->n_dport);
	if (r->dscp_mask) {
		/* The mask back as the shortest list of values and runs. */
		fputs("      dscp: [", f);
		for (i = 0, n = 0; i < 64; i++) {
			if (!(r->dscp_mask >> i & 1))
				continue;
			for (k = i; k + 1 < 64 && (r->dscp_mask >> (k + 1) & 1); k++)
				;
			if (k == i)
				fprintf(f, "%s%u", n++ ? ", " : "", i);
			else
				fprintf(f, "%s\"%u-%u\"", n++ ? ", " : "", i, k);
			i = k;
		}
		fputs("]\n", f);
	}
	if (r->n_spi) {
		fputs("      esp_spi: [", f);
		for (i = 0; i < r->n_spi; i++) {
			if (r->spi[i].lo == r->spi[i].hi)
				fprintf(f, "%s0x%" PRIx32, i ? ", " : "", r->spi[i].lo);
			else
				fprintf(f, "%s\"0x%" PRIx32 "-0x%" PRIx32 "\"", i ? ", " : "",
					r->spi[i].lo, r->spi[i].hi);
		}
		fputs("]\n", f);
	}
}

/* The shortest text strtod reads back as the same double. */
static void
put_real(FILE *f, double x)
{
	char buf[40];
	int prec;

	for (prec = 1; prec <= 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*g", prec, x);
		if (strtod(buf, NULL) == x)
			break;
	}
	fputs(buf, f);
}

static void
put_units(FILE *f, uint64_t ns, int k)
{
	char buf[40];

	units_text(buf, sizeof(buf), ns, k);
	fputs(buf, f);
}

static void
put_loss_state(FILE *f, const char *name, const struct sgw_loss_state *s)
{
	fprintf(f, "      %s: {mean_s: ", name);
	put_real(f, s->mean_s);
	fputs(", ber: ", f);
	put_real(f, s->ber);
	fputs(", p: ", f);
	put_real(f, s->p);
	fputs("}\n", f);
}

static void
put_link_dir(FILE *f, const struct sgw_policy *p, const char *name,
	     const struct sgw_link_dir *d)
{
	const struct sgw_linkem_conf *c = &d->em;
	uint32_t i;

	fprintf(f, "  %s:\n    from: ", name);
	put_name(f, d->from_port >= 0 && d->from_port < p->n_ports ?
		 p->ports[d->from_port].name : "?");
	fputs("\n    to: ", f);
	put_name(f, d->to_port >= 0 && d->to_port < p->n_ports ? p->ports[d->to_port].name : "?");
	fprintf(f, "\n    rate_bps: %" PRIu64 "\n    delay_ms: ", c->rate_bps);
	put_units(f, c->delay_ns, 6);
	fputs("\n    jitter_ms: ", f);
	put_units(f, c->jitter_ns, 6);
	fprintf(f, "\n    overhead_bytes: %" PRIu32 "\n", c->overhead_bytes);
	fprintf(f, "    queue:\n      limit_packets: %" PRIu32 "\n      limit_bytes: %" PRIu32
		"\n      aqm: %s\n", c->queue_pkts, c->queue_bytes, sgw_aqm_name(c->aqm));
	if (c->aqm != SGW_AQM_DROPTAIL) {
		fprintf(f, "      min_bytes: %" PRIu32 "\n      max_bytes: %" PRIu32
			"\n      max_p: ", c->red_min_bytes, c->red_max_bytes);
		put_real(f, c->red_max_p);
		fputs("\n      wq: ", f);
		put_real(f, c->red_wq);
		fputc('\n', f);
	}
	fprintf(f, "    loss:\n      model: %s\n", sgw_loss_model_name(c->loss));
	if (c->loss == SGW_LOSS_BER) {
		fputs("      ber: ", f);
		put_real(f, c->good.ber);
		fputc('\n', f);
	} else if (c->loss == SGW_LOSS_RANDOM) {
		fputs("      p: ", f);
		put_real(f, c->good.p);
		fputc('\n', f);
	} else if (c->loss == SGW_LOSS_GE) {
		put_loss_state(f, "good", &c->good);
		put_loss_state(f, "bad", &c->bad);
	}
	fputs(c->n_outages ? "    outages:\n" : "    outages: []\n", f);
	for (i = 0; i < c->n_outages && i < SGW_LINKEM_MAX_OUTAGES; i++) {
		const struct sgw_outage *o = &c->outages[i];

		fputs("      - {at_s: ", f);
		put_units(f, o->start_ns, 9);
		fputs(", for_s: ", f);
		put_units(f, o->dur_ns, 9);
		if (o->period_ns != 0) {
			fputs(", every_s: ", f);
			put_units(f, o->period_ns, 9);
		}
		fputs("}\n", f);
	}
}

static void
put_satlink(FILE *f, const struct sgw_policy *p)
{
	const struct sgw_satlink_conf *sl = &p->satlink;

	fputs("satlink:\n  port: ", f);
	put_name(f, sl->port >= 0 && sl->port < p->n_ports ? p->ports[sl->port].name : "?");
	fputc('\n', f);
	if (p->role == SGW_ROLE_TERMINAL)
		fprintf(f, "  terminal: %" PRIu32 "\n", sl->terminal_id);
	fprintf(f, "  peer_mac: \"%02x:%02x:%02x:%02x:%02x:%02x\"\n", sl->peer_mac[0],
		sl->peer_mac[1], sl->peer_mac[2], sl->peer_mac[3], sl->peer_mac[4],
		sl->peer_mac[5]);
	fprintf(f, "  forward_rate_bps: %" PRIu64 "\n  return_rate_bps: %" PRIu64
		"\n  rtt_ms: %" PRIu32 "\n  frame_size: %u\n  retx_copies: %u\n"
		"  retx_spacing_us: %" PRIu32 "\n  status_interval_ms: %" PRIu32
		"\n  keepalive_ms: %" PRIu32 "\n  link_down_ms: %" PRIu32
		"\n  send_queue: %" PRIu32 "\n  window_max: %" PRIu32
		"\n  default_service: %s\n",
		sl->forward_rate_bps, sl->return_rate_bps, sl->rtt_ms, sl->frame_size,
		sl->retx_copies, sl->retx_spacing_us, sl->status_interval_ms, sl->keepalive_ms,
		sl->link_down_ms, sl->send_queue, sl->window_max,
		sl_service_name(sl->default_service));
	if (sl->keys[0] != '\0') {
		fputs("  keys: ", f);
		put_quoted(f, sl->keys);
		fputc('\n', f);
	}
}

int
sgw_policy_dump_yaml(const struct sgw_policy *p, FILE *f)
{
	uint32_t i;

	fputs("# satgw policy, canonical form\n", f);
	fputs("version: 1\n", f);
	fprintf(f, "role: %s\n", sgw_role_name(p->role));

	fputs("ports:\n", f);
	for (i = 0; i < p->n_ports; i++) {
		const struct sgw_port_conf *pc = &p->ports[i];

		fputs("  - name: ", f);
		put_name(f, pc->name);
		fputs("\n    device: ", f);
		put_quoted(f, pc->device);
		fprintf(f, "\n    role: %s\n", sgw_port_role_name(pc->role));
		if (pc->peer >= 0 && pc->peer < p->n_ports) {
			fputs("    peer: ", f);
			put_name(f, p->ports[pc->peer].name);
			fputc('\n', f);
		}
		fprintf(f, "    rx_desc: %u\n    tx_desc: %u\n    mtu: %u\n    promiscuous: %s\n",
			pc->rx_desc, pc->tx_desc, pc->mtu, pc->promiscuous ? "true" : "false");
	}

	fputs(p->n_next_hops ? "next_hops:\n" : "next_hops: []\n", f);
	for (i = 0; i < p->n_next_hops; i++) {
		const struct sgw_next_hop *nh = &p->next_hops[i];

		fputs("  - name: ", f);
		put_name(f, nh->name);
		fputs("\n    port: ", f);
		put_name(f, nh->port >= 0 && nh->port < p->n_ports ?
			 p->ports[nh->port].name : "?");
		fprintf(f, "\n    mac: \"%02x:%02x:%02x:%02x:%02x:%02x\"\n", nh->mac[0],
			nh->mac[1], nh->mac[2], nh->mac[3], nh->mac[4], nh->mac[5]);
	}

	fputs(p->n_terminals ? "terminals:\n" : "terminals: []\n", f);
	for (i = 0; i < p->n_terminals; i++) {
		const struct sgw_terminal *t = &p->terminals[i];

		fputs("  - name: ", f);
		put_name(f, t->name);
		fprintf(f, "\n    id: %" PRIu32 "\n    prefixes: ", t->id);
		put_prefixes(f, t->prefixes, t->n_prefixes);
	}

	fputs(p->n_rules ? "rules:\n" : "rules: []\n", f);
	for (i = 0; i < p->n_rules; i++) {
		const struct sgw_rule *r = &p->rules[i];

		fputs("  - name: ", f);
		put_name(f, r->name);
		fputc('\n', f);
		put_match(f, p, r);
		fprintf(f, "    action: %s\n", sgw_action_name(r->action));
		if (r->next_hop >= 0 && r->next_hop < p->n_next_hops) {
			fputs("    next_hop: ", f);
			put_name(f, p->next_hops[r->next_hop].name);
			fputc('\n', f);
		}
		if (r->sl_service != SGW_SL_SVC_DEFAULT)
			fprintf(f, "    satlink: %s\n", sl_service_name(r->sl_service));
	}

	fprintf(f, "limits:\n  flows_per_core: %" PRIu32 "\n  mbufs: %" PRIu32
		"\n  mbuf_cache: %" PRIu32 "\n  ring_size: %" PRIu32 "\n  flow_idle_ms: %"
		PRIu32 "\n  timers_per_core: %" PRIu32 "\n",
		p->limits.flows_per_core, p->limits.mbufs, p->limits.mbuf_cache,
		p->limits.ring_size, p->limits.flow_idle_ms, p->limits.timers_per_core);
	fprintf(f, "workers:\n  idle_backoff_us: %" PRIu32 "\n  idle_sleep_us: %" PRIu32
		"\n  burst: %u\n  tx_drain_us: %u\n  timer_tick_us: %" PRIu32 "\n",
		p->workers.idle_backoff_us, p->workers.idle_sleep_us, p->workers.burst,
		p->workers.tx_drain_us, p->workers.timer_tick_us);
	fprintf(f, "protocols:\n  lift: %u\n  xcp: %u\n", p->lift_proto, p->xcp_proto);
	fprintf(f, "malformed: %s\n", p->malformed == SGW_MALFORMED_FORWARD ? "forward" : "drop");
	fprintf(f, "default_action: %s\n", sgw_action_name(p->default_action));
	if (p->role == SGW_ROLE_EMULATOR) {
		fprintf(f, "link:\n  seed: %" PRIu64 "\n", p->emu.seed);
		put_link_dir(f, p, "forward", &p->emu.dir[SGW_LINK_FORWARD]);
		put_link_dir(f, p, "return", &p->emu.dir[SGW_LINK_RETURN]);
	}
	if (p->satlink.enabled)
		put_satlink(f, p);
	return ferror(f) ? -1 : 0;
}
