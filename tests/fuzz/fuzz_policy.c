/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer harness for the YAML policy loader: any byte string must give
 * either a policy or a list of positioned errors, never a crash or a leak.
 */
#include <stddef.h>
#include <stdint.h>

#include "policy_yaml.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct sgw_cfg_errors errs;
	struct sgw_policy pol;

	if (sgw_policy_load_buffer("fuzz.yaml", (const char *)data, size, &pol, &errs) == 0)
		sgw_policy_free(&pol);
	else if (errs.n == 0)
		__builtin_trap(); /* a refusal must say why */
	return 0;
}
