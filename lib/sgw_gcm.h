/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The Intel IPsec-MB manager every AES-GCM user of satgw shares: satlink's
 * frame protection (sgw_slcrypto.c) and the MH-LIFT agent's ESP (sgw_esp.c).
 * One place decides which arch runs, refuses IPsec-MB's no-AES-NI emulation
 * and a failed library self-test, and checks the manager against the GCM
 * specification's known answers before anything is encrypted with it.
 *
 * Plain C11, no globals (const tables only), no clock reads.
 */
#ifndef SGW_GCM_H
#define SGW_GCM_H

#include <intel-ipsec-mb.h>

#ifdef __cplusplus
extern "C" {
#endif

enum sgw_gcm_arch {
	SGW_GCM_ARCH_AUTO = 0,
	SGW_GCM_ARCH_SSE,
	SGW_GCM_ARCH_AVX,
	SGW_GCM_ARCH_AVX2,
	SGW_GCM_ARCH_AVX512,
};

/*
 * A manager for arch `want` (AUTO: the best the CPU has), with the arch in
 * use in *used (may be NULL). NULL when the CPU lacks the arch or AES-NI,
 * the library's self-test failed, or AES-128/256-GCM gives a wrong known
 * answer. One manager per thread.
 */
IMB_MGR *sgw_gcm_mgr_create(enum sgw_gcm_arch want, enum sgw_gcm_arch *used);
void sgw_gcm_mgr_destroy(IMB_MGR *mgr);

#ifdef __cplusplus
}
#endif

#endif /* SGW_GCM_H */
