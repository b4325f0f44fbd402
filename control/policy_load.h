/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Private to control/policy_*.c (not installed, not for other code): what the
 * policy loader's files share. The YAML tree and the loader context, the
 * error reporting, and the helpers a section file reads its keys with (all
 * defined in policy_yaml.c), then what each section file gives the others.
 * The public API is policy_yaml.h.
 */
#ifndef SGW_POLICY_LOAD_H
#define SGW_POLICY_LOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy_yaml.h"

#define SHOW_MAX 48   /* longest value quoted back in a message */

#if defined(__GNUC__)
#define SGW_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define SGW_PRINTF(a, b)
#endif

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

struct arena_chunk;

/* Where the tree lives: freed in one go after the load. */
struct arena {
	struct arena_chunk *head;
};

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
	/* Set by the root while its sections load (policy_yaml.c). */
	const struct ynode *root;
	const struct ynode *const *top_vals, *const *top_keys;  /* by section */
	bool role_known;   /* p->role was given and valid */
};

/* An error at line:col (1-based; 0:0 for the file as a whole). */
void SGW_PRINTF(4, 5)
err_at(struct ld *ld, uint32_t line, uint32_t col, const char *fmt, ...);

#define ERR(ld, node, ...) err_at((ld), (node)->line, (node)->col, __VA_ARGS__)

/* "out of memory", reported once. */
void oom(struct ld *ld);

/* ---------------------------------------------------------- small utils */

/* Is v the scalar s? */
bool seq(const struct ynode *v, const char *s);
/* A plain empty, ~ or null scalar. */
bool is_null(const struct ynode *v);
/* A value for a message: 'text' (shortened, control bytes as ?), "a list", ... */
const char *show(const struct ynode *v, char *buf, size_t len);

/* Keeps the best candidate seen so far for a "did you mean" hint. */
struct suggest {
	const char *word;
	size_t wlen;
	const char *best;
	unsigned int score;
};

void suggest_init(struct suggest *sg, const char *word, size_t wlen);
void suggest_try(struct suggest *sg, const char *cand);
/* " (did you mean 'x'?)" or "" */
const char *suggest_text(const struct suggest *sg, char *buf, size_t len);

/*
 * Unsigned integer: decimal without leading zeros, or 0x hex. 0 ok,
 * -1 not an integer, -2 too large for 64 bits, -3 leading zero.
 */
int parse_uint(const char *s, size_t n, uint64_t *out);

/* ------------------------------------------------------- mapping fields */

struct keyspec {
	const char *name;
	bool required;
};

#define NKEYS(t) ((unsigned int)(sizeof(t) / sizeof((t)[0])))

/* Some of a section's keys, for the hint a top-level key gets. */
struct keyset {
	const struct keyspec *k;
	unsigned int n;
};

/*
 * Sort a mapping's pairs into vals[] (by keyspec index), reporting unknown
 * and duplicate keys; keys[] gets the key nodes. top: the policy's root,
 * where a key of a section's mapping gets "belongs under 'section:'".
 */
void map_fields(struct ld *ld, const struct ynode *m, const char *what,
		const struct keyspec *ks, unsigned int nks,
		const struct ynode **vals, const struct ynode **keys, bool top);
/* who: the entry's name, for the message, or NULL. */
void check_required(struct ld *ld, const struct ynode *m, const char *what, const char *who,
		    const struct keyspec *ks, unsigned int nks, const struct ynode **vals);

/* ------------------------------------------------------- typed getters */

/*
 * Each reports what is wrong with v at v and returns false; key names the
 * key in messages. The get_* taking a possibly absent v say so.
 */
bool want_scalar(struct ld *ld, const struct ynode *v, const char *key, const char *expect);
bool get_uint(struct ld *ld, const struct ynode *v, const char *key, uint64_t lo, uint64_t hi,
	      uint64_t *out);
/* v may be NULL (false, nothing reported). */
bool get_u32(struct ld *ld, const struct ynode *v, const char *key, uint32_t lo, uint32_t hi,
	     uint32_t *out);
bool get_bool(struct ld *ld, const struct ynode *v, const char *key, bool *out);
/* One of names[]; the index in *out. */
bool get_enum(struct ld *ld, const struct ynode *v, const char *key,
	      const char *const *names, unsigned int n, unsigned int *out);
/* A name: [A-Za-z0-9_.-]{1,31}, copied into dst[SGW_NAME_MAX]. */
bool get_name(struct ld *ld, const struct ynode *v, const char *key, char *dst);
/* xx:xx:xx:xx:xx:xx; unicast: a multicast address is refused. */
bool get_mac(struct ld *ld, const struct ynode *v, const char *key, bool unicast,
	     uint8_t mac[6]);
bool get_prefix(struct ld *ld, const struct ynode *v, const char *key,
		struct sgw_prefix *out);
/* "N" or "LO-HI" with values <= max; what names the thing in messages. */
bool get_range(struct ld *ld, const struct ynode *v, const char *key, const char *what,
	       uint64_t max, uint64_t *lo, uint64_t *hi);

/* ---------------------------------------------------------- name tables */

void ntab_build(struct ld *ld, struct ntab *t, const struct ynode *const *names, uint32_t n,
		const char *what);
/*
 * Resolve a reference to an entry of t. Returns the index, -1 when unknown
 * (reported) and -2 when it cannot be checked (bad value or broken section).
 */
int64_t resolve(struct ld *ld, const struct ntab *t, const struct ynode *v, const char *key,
		const char *what);

/* ---------------------------------------------------------------- lists */

struct list {
	const struct ynode *const *items;
	uint32_t n;
	const struct ynode *single;
};

/* A list key with lo..hi entries; a lone scalar counts as a one-element list. */
bool get_list(struct ld *ld, const struct ynode *v, const char *key, uint32_t lo,
	      uint32_t hi, struct list *l);
/*
 * A list of entries (mappings) of an optional or required section. Absent or
 * null: an empty list. Returns false when the section is unusable.
 */
bool get_section(struct ld *ld, const struct ynode *v, const char *key, uint32_t lo,
		 uint32_t hi, struct list *l);
/* An optional mapping section; absent or null: NULL. */
const struct ynode *get_map(struct ld *ld, const struct ynode *v, const char *key);
/* Each entry of a list section must be a mapping. */
bool entry_is_map(struct ld *ld, const struct ynode *v, const char *section);

/* ------------------------------------------------------------- sections */

/*
 * A top-level section's loader: key and v are its key and value in the
 * policy, NULL when it has none. A section is one row of the table in
 * policy_yaml.c; they load in the table's order.
 */
typedef void section_load_fn(struct ld *ld, const struct ynode *key, const struct ynode *v);

/* The value of the top-level key, or NULL: for a section that depends on another. */
const struct ynode *section_value(const struct ld *ld, const char *key);
/* Role emulator: refuse the sections it does not use, and ports other than two. */
void check_emulator_sections(struct ld *ld);


/* policy_ports.c: ports, next_hops, terminals, rules, limits, workers, protocols. */
struct proto_name {
	const char *name;
	uint8_t num;
};

#define N_PROTO_NAMES 8u
extern const struct proto_name proto_names[N_PROTO_NAMES];
extern const struct keyset limits_keyset, workers_keyset;

section_load_fn load_ports, load_next_hops, load_terminals, load_rules, load_limits,
	load_workers, load_protocols;

/* policy_link.c: link (role emulator). */
extern const struct keyset link_keyset;

/* "270", "0.5", "12.000001": ns as a decimal in units of 10^k ns, exactly. */
void units_text(char *buf, size_t len, uint64_t ns, int k);
section_load_fn load_link;

/* policy_satlink.c: satlink (roles hub and terminal). */

/* A rule's satlink service, default_service: enum sgw_sl_service from RELIABLE on. */
#define N_SL_SERVICES ((unsigned int)(SGW_SL_SVC__COUNT - SGW_SL_SVC_RELIABLE))
extern const char *const sl_service_names[N_SL_SERVICES];
extern const struct keyset satlink_keyset;

section_load_fn load_satlink;

/* policy_lift.c: lift (role hub, BS-LIFT). */
extern const struct keyset lift_keyset;
section_load_fn load_lift;
/* policy_xcp.c: xcp (roles hub and terminal, with satlink). */
extern const struct keyset xcp_keyset;

section_load_fn load_xcp;

/* policy_split.c: split (roles hub and terminal, the TCP split) and a rule's split keys. */
extern const struct keyset split_keyset;
section_load_fn load_split;
/* After the rule's action: act is the action's value (NULL: none). */
void load_rule_split(struct ld *ld, struct sgw_rule *r, const struct ynode *hs_key,
		     const struct ynode *hs_val, const struct ynode *act);

#endif /* SGW_POLICY_LOAD_H */
