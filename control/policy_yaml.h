/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The YAML policy loader: reads a version 1 policy file (docs/configuration.md),
 * validates all of it against the schema, and fills a struct sgw_policy. Every
 * problem is collected with FILE:LINE:COLUMN so an operator can fix a file in
 * one pass. Pure C11 + libyaml: no DPDK, usable from tests and tools.
 */
#ifndef SGW_POLICY_YAML_H
#define SGW_POLICY_YAML_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sgw_policy.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Files larger than this are refused before parsing. */
#define SGW_CFG_MAX_BYTES (16u << 20)
#define SGW_CFG_MAX_ERRORS 64

struct sgw_cfg_error {
	char file[256];
	uint32_t line, col;  /* 1-based; 0:0 when the file could not be read at all */
	char msg[256];
};

struct sgw_cfg_errors {
	uint32_t n;          /* entries used in e[] */
	uint32_t dropped;    /* errors found beyond the first SGW_CFG_MAX_ERRORS */
	struct sgw_cfg_error e[SGW_CFG_MAX_ERRORS];
};

/*
 * Load and validate a policy. out is overwritten, not freed: pass a struct
 * that holds nothing (a running policy must be loaded into a fresh one, so it
 * survives a bad file). Returns 0 with out filled and errs->n == 0, or -1
 * with out empty (defaults, no terminals or rules) and every error found in
 * errs, sorted by position. errs may be NULL.
 */
int sgw_policy_load_file(const char *path, struct sgw_policy *out,
			 struct sgw_cfg_errors *errs);
/* name is what errors call the file. buf need not be NUL terminated. */
int sgw_policy_load_buffer(const char *name, const char *buf, size_t len,
			   struct sgw_policy *out, struct sgw_cfg_errors *errs);

/* One line per error: "FILE:LINE:COLUMN: message", then a count of dropped ones. */
void sgw_cfg_errors_print(FILE *f, const struct sgw_cfg_errors *errs);
/* "FILE:LINE:COLUMN: message" into buf; returns snprintf's result. */
int sgw_cfg_error_format(const struct sgw_cfg_error *e, char *buf, size_t len);

/*
 * Write p as canonical version 1 YAML: every key, defaults included, in the
 * schema's order. Loading the output gives back the same policy.
 * Returns 0, or -1 on a write error.
 */
int sgw_policy_dump_yaml(const struct sgw_policy *p, FILE *f);

#ifdef __cplusplus
}
#endif

#endif /* SGW_POLICY_YAML_H */
