/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The policy's link section (role emulator): it fills sgw_policy.emu. Its
 * numbers keep their decimal text exact (durations become whole ns), and the
 * link model's own check (sgw_linkem_conf_check) has the last word on each
 * direction.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy_load.h"

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

/* "270", "0.5", "12.000001": also the dump's (policy_dump.c). */
void
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

/* Met at the top level, these keys get "belongs under 'link:'". */
const struct keyset link_keyset = { link_keys, NKEYS(link_keys) };

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

/*
 * link: required for role emulator, refused for the others. The emulator's
 * own section: it first checks that the rest of the policy fits an emulator.
 */
void
load_link(struct ld *ld, const struct ynode *key, const struct ynode *v)
{
	const struct ynode *vals[NKEYS(link_keys)], *keys[NKEYS(link_keys)];
	const struct ynode *from[2], *to[2];
	struct sgw_emulator_conf *emu = &ld->p->emu;
	const struct sgw_port_conf *ports = ld->p->ports;
	bool role_known = ld->role_known;
	int d;

	if (role_known && ld->p->role == SGW_ROLE_EMULATOR)
		check_emulator_sections(ld);
	if (role_known && ld->p->role != SGW_ROLE_EMULATOR) {
		if (key != NULL)
			ERR(ld, key, "'link' is only used by role emulator (this policy's role "
			    "is %s)", sgw_role_name(ld->p->role));
		return;
	}
	if (v == NULL) {
		if (role_known)
			ERR(ld, ld->root, "missing required key 'link' in the policy (top level): "
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
