/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The YAML policy loader's core (schema: docs/configuration.md): the tree,
 * the helpers every section reads its keys with, the root and the entry
 * points. The sections themselves are in policy_ports.c (ports, next_hops,
 * terminals, rules, limits, workers, protocols), policy_link.c (link, role
 * emulator) and policy_satlink.c (satlink); the dumper in policy_dump.c.
 * What they share is in policy_load.h.
 *
 * Two passes: libyaml's event API builds a small tree (in an arena; every node
 * keeps its 1-based line and column), then the schema walk fills a struct
 * sgw_policy and collects every error it finds instead of stopping at the
 * first. References between sections (peer, next_hop, terminal, in_port) are
 * resolved through sorted name tables.
 * Pure C11 + libyaml: no DPDK.
 */
/* open, fstat, fdopen: the policy file is opened non-blocking (see sgw_policy_load_file). */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <yaml.h>

#include "policy_load.h"

#define ARENA_CHUNK (256u * 1024u)
#define MAX_DEPTH 64

/* ---------------------------------------------------------------- arena */

struct arena_chunk {
	struct arena_chunk *next;
	size_t size, used;
	max_align_t data[];
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

void SGW_PRINTF(4, 5)
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

void
oom(struct ld *ld)
{
	if (!ld->oom)
		err_at(ld, 0, 0, "out of memory");
	ld->oom = true;
}

/* ---------------------------------------------------------- small utils */

bool
seq(const struct ynode *v, const char *s)
{
	size_t n = strlen(s);

	return v->kind == YN_SCALAR && v->n == n && memcmp(v->u.s, s, n) == 0;
}

bool
is_null(const struct ynode *v)
{
	return v->kind == YN_SCALAR && v->plain &&
		(v->n == 0 || seq(v, "~") || seq(v, "null") || seq(v, "Null") ||
		 seq(v, "NULL"));
}

/* A value for a message: 'text' (shortened, control bytes as ?), "a list", ... */
const char *
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

void
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
void
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
const char *
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
int
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

/*
 * Sort a mapping's pairs into vals[] (by keyspec index): unknown keys (with a
 * "did you mean") and duplicate keys are reported here. keys[] gets the key
 * nodes, for "first at line" messages. At the top, subsection_of() may add
 * where a key that is unknown here belongs.
 */
static const char *subsection_of(const struct ynode *key);

void
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
void
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
bool
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

bool
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

bool
get_u32(struct ld *ld, const struct ynode *v, const char *key, uint32_t lo, uint32_t hi,
	uint32_t *out)
{
	uint64_t x;

	if (v == NULL || !get_uint(ld, v, key, lo, hi, &x))
		return false;
	*out = (uint32_t)x;
	return true;
}

bool
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
bool
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
bool
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

/*
 * A MAC address, xx:xx:xx:xx:xx:xx. unicast: a next hop's, refused when
 * multicast; a satlink peer_mac may be any (ff:ff:ff:ff:ff:ff is its default).
 */
bool
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
void
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
int64_t
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

/* A list key with lo..hi entries; a lone scalar counts as a one-element list. */
bool
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
bool
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
const struct ynode *
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
bool
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

bool
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

/* --------------------------------------------------------------- ranges */

/*
 * "N" or "LO-HI" (ints in decimal or 0x hex) with values <= max. what names
 * the thing ("port", "SPI", "DSCP") in messages.
 */
bool
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

/* ----------------------------------------------------------------- root */

static const char *const role_names[] = { "hub", "terminal", "emulator" };
static const char *const malformed_names[] = { "drop", "forward" };
static const char *const default_action_names[] = { "forward", "drop" };

static void
load_version(struct ld *ld, const struct ynode *key, const struct ynode *v)
{
	uint64_t x64;

	if (v && want_scalar(ld, v, "version", "1") &&
	    (parse_uint(v->u.s, v->n, &x64) != 0 || x64 != 1))
		ERR(ld, v, "unsupported policy version %.*s: this satgw reads version 1",
		    SHOW_MAX, v->u.s);
}

static void
load_role(struct ld *ld, const struct ynode *key, const struct ynode *v)
{
	unsigned int en;

	if (v && get_enum(ld, v, "role", role_names, 3, &en)) {
		ld->p->role = (enum sgw_role)en;
		ld->role_known = true;
	}
}

static void
load_malformed(struct ld *ld, const struct ynode *key, const struct ynode *v)
{
	unsigned int en;

	if (v && get_enum(ld, v, "malformed", malformed_names, 2, &en))
		ld->p->malformed = (enum sgw_malformed_policy)en;
}

static void
load_default_action(struct ld *ld, const struct ynode *key, const struct ynode *v)
{
	unsigned int en;

	if (v && get_enum(ld, v, "default_action", default_action_names, 2, &en))
		ld->p->default_action = en == 0 ? SGW_ACT_FORWARD : SGW_ACT_DROP;
}

/*
 * The top-level sections, in the schema's order: missing keys are reported
 * and sections loaded in this order (a section may use what an earlier one
 * resolved: ports before next_hops, terminals before rules). A new section
 * is its file, with its loader, and one row here.
 */
struct section {
	const char *key;
	bool required;
	bool emulator_unused;        /* role emulator refuses it unless empty */
	section_load_fn *load;
	const struct keyset *hint;   /* its keys that, at the top, belong under it */
};

static const struct section sections[] = {
	{ .key = "version", .required = true, .load = load_version },
	{ .key = "role", .required = true, .load = load_role },
	{ .key = "ports", .required = true, .load = load_ports },
	{ .key = "next_hops", .emulator_unused = true, .load = load_next_hops },
	{ .key = "terminals", .emulator_unused = true, .load = load_terminals },
	{ .key = "rules", .emulator_unused = true, .load = load_rules },
	{ .key = "limits", .load = load_limits, .hint = &limits_keyset },
	{ .key = "workers", .load = load_workers, .hint = &workers_keyset },
	{ .key = "protocols", .load = load_protocols },
	{ .key = "malformed", .load = load_malformed },
	{ .key = "default_action", .load = load_default_action },
	/* Required for role emulator only. */
	{ .key = "link", .load = load_link, .hint = &link_keyset },
	/* Roles hub and terminal only. */
	{ .key = "satlink", .load = load_satlink, .hint = &satlink_keyset },
	/* Role hub only; after satlink, whose keys it needs. */
	{ .key = "lift", .load = load_lift, .hint = &lift_keyset },
	/* Roles hub and terminal, after satlink (its queue). */
	{ .key = "xcp", .load = load_xcp, .hint = &xcp_keyset },
	/* Roles hub and terminal; after satlink, which it needs. */
	{ .key = "split", .load = load_split, .hint = &split_keyset },
};

const struct ynode *
section_value(const struct ld *ld, const char *key)
{
	unsigned int i;

	for (i = 0; i < NKEYS(sections); i++)
		if (strcmp(sections[i].key, key) == 0)
			return ld->top_vals[i];
	return NULL;
}

/* An emulator joins two ports and forwards every frame through the link model. */
void
check_emulator_sections(struct ld *ld)
{
	const struct ynode *ports = section_value(ld, "ports");
	unsigned int i;

	if (ports != NULL && ports->kind == YN_SEQ && ports->n != 2 &&
	    ports->n <= SGW_MAX_PORTS && ports->n > 0)
		ERR(ld, ports, "an emulator joins exactly two ports (got %" PRIu32 ")", ports->n);
	for (i = 0; i < NKEYS(sections); i++) {
		const struct ynode *v = ld->top_vals[i];

		if (sections[i].emulator_unused && v != NULL && v->kind != YN_BAD &&
		    !is_null(v) && !(v->kind == YN_SEQ && v->n == 0))
			ERR(ld, ld->top_keys[i], "'%s' is not used by role emulator (it forwards "
			    "every frame through the link model)", sections[i].key);
	}
}

/* Top-level key that belongs in a subsection, for a better hint. */
static const char *
subsection_of(const struct ynode *key)
{
	const struct keyset *h;
	unsigned int i, k;

	for (i = 0; i < NKEYS(sections); i++)
		for (h = sections[i].hint, k = 0; h != NULL && k < h->n; k++)
			if (seq(key, h->k[k].name))
				return sections[i].key;
	return NULL;
}

static void
load_root(struct ld *ld, const struct ynode *root)
{
	const struct ynode *vals[NKEYS(sections)], *keys[NKEYS(sections)];
	struct keyspec top_keys[NKEYS(sections)];
	char sb[SHOW_MAX + 8];
	unsigned int i;

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
	for (i = 0; i < NKEYS(sections); i++) {
		top_keys[i].name = sections[i].key;
		top_keys[i].required = sections[i].required;
	}
	map_fields(ld, root, "the policy (top level)", top_keys, NKEYS(top_keys), vals, keys,
		   true);
	check_required(ld, root, "the policy (top level)", NULL, top_keys, NKEYS(top_keys),
		       vals);

	ld->root = root;
	ld->top_vals = vals;
	ld->top_keys = keys;
	for (i = 0; i < NKEYS(sections); i++)
		sections[i].load(ld, keys[i], vals[i]);
	ld->top_vals = NULL;
	ld->top_keys = NULL;
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
