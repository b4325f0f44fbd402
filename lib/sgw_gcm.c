/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The shared IPsec-MB manager for AES-GCM (contract: sgw_gcm.h): arch choice,
 * the library's self-test, and a known-answer test of both key sizes through
 * the direct GCM API the users call (IMB_AES{128,256}_GCM_PRE / _ENC / _DEC).
 */
#include <stdint.h>
#include <string.h>

#include "sgw_gcm.h"

/* The GCM specification's test vectors (McGrew & Viega, "The Galois/Counter
 * Mode of Operation (GCM)", 2005, appendix B): case 4 (AES-128) and case 16
 * (AES-256): same IV, AAD and plaintext. */
static const uint8_t gcm_kat_key[32] = {
	0xfe, 0xff, 0xe9, 0x92, 0x86, 0x65, 0x73, 0x1c,
	0x6d, 0x6a, 0x8f, 0x94, 0x67, 0x30, 0x83, 0x08,
	0xfe, 0xff, 0xe9, 0x92, 0x86, 0x65, 0x73, 0x1c,
	0x6d, 0x6a, 0x8f, 0x94, 0x67, 0x30, 0x83, 0x08,
};
static const uint8_t gcm_kat_iv[12] = {
	0xca, 0xfe, 0xba, 0xbe, 0xfa, 0xce, 0xdb, 0xad, 0xde, 0xca, 0xf8, 0x88,
};
static const uint8_t gcm_kat_aad[20] = {
	0xfe, 0xed, 0xfa, 0xce, 0xde, 0xad, 0xbe, 0xef, 0xfe, 0xed,
	0xfa, 0xce, 0xde, 0xad, 0xbe, 0xef, 0xab, 0xad, 0xda, 0xd2,
};
static const uint8_t gcm_kat_pt[60] = {
	0xd9, 0x31, 0x32, 0x25, 0xf8, 0x84, 0x06, 0xe5, 0xa5, 0x59, 0x09, 0xc5,
	0xaf, 0xf5, 0x26, 0x9a, 0x86, 0xa7, 0xa9, 0x53, 0x15, 0x34, 0xf7, 0xda,
	0x2e, 0x4c, 0x30, 0x3d, 0x8a, 0x31, 0x8a, 0x72, 0x1c, 0x3c, 0x0c, 0x95,
	0x95, 0x68, 0x09, 0x53, 0x2f, 0xcf, 0x0e, 0x24, 0x49, 0xa6, 0xb5, 0x25,
	0xb1, 0x6a, 0xed, 0xf5, 0xaa, 0x0d, 0xe6, 0x57, 0xba, 0x63, 0x7b, 0x39,
};
static const uint8_t gcm_kat_ct128[60] = {
	0x42, 0x83, 0x1e, 0xc2, 0x21, 0x77, 0x74, 0x24, 0x4b, 0x72, 0x21, 0xb7,
	0x84, 0xd0, 0xd4, 0x9c, 0xe3, 0xaa, 0x21, 0x2f, 0x2c, 0x02, 0xa4, 0xe0,
	0x35, 0xc1, 0x7e, 0x23, 0x29, 0xac, 0xa1, 0x2e, 0x21, 0xd5, 0x14, 0xb2,
	0x54, 0x66, 0x93, 0x1c, 0x7d, 0x8f, 0x6a, 0x5a, 0xac, 0x84, 0xaa, 0x05,
	0x1b, 0xa3, 0x0b, 0x39, 0x6a, 0x0a, 0xac, 0x97, 0x3d, 0x58, 0xe0, 0x91,
};
static const uint8_t gcm_kat_tag128[16] = {
	0x5b, 0xc9, 0x4f, 0xbc, 0x32, 0x21, 0xa5, 0xdb,
	0x94, 0xfa, 0xe9, 0x5a, 0xe7, 0x12, 0x1a, 0x47,
};
static const uint8_t gcm_kat_ct256[60] = {
	0x52, 0x2d, 0xc1, 0xf0, 0x99, 0x56, 0x7d, 0x07, 0xf4, 0x7f, 0x37, 0xa3,
	0x2a, 0x84, 0x42, 0x7d, 0x64, 0x3a, 0x8c, 0xdc, 0xbf, 0xe5, 0xc0, 0xc9,
	0x75, 0x98, 0xa2, 0xbd, 0x25, 0x55, 0xd1, 0xaa, 0x8c, 0xb0, 0x8e, 0x48,
	0x59, 0x0d, 0xbb, 0x3d, 0xa7, 0xb0, 0x8b, 0x10, 0x56, 0x82, 0x88, 0x38,
	0xc5, 0xf6, 0x1e, 0x63, 0x93, 0xba, 0x7a, 0x0a, 0xbc, 0xc9, 0xf6, 0x62,
};
static const uint8_t gcm_kat_tag256[16] = {
	0x76, 0xfc, 0x6e, 0xce, 0x0f, 0x4e, 0x17, 0x68,
	0xcd, 0xdf, 0x88, 0x53, 0xbb, 0x2d, 0x55, 0x1b,
};

/* Known-answer self-test of one key size through the engine's manager. */
static int
gcm_kat(IMB_MGR *mgr, unsigned int bits)
{
	_Alignas(64) struct gcm_key_data kd;
	struct gcm_context_data gc;
	uint8_t buf[sizeof(gcm_kat_pt)];
	uint8_t tag[16];
	const uint8_t *want_ct = bits == 128 ? gcm_kat_ct128 : gcm_kat_ct256;
	const uint8_t *want_tag = bits == 128 ? gcm_kat_tag128 : gcm_kat_tag256;
	int ok;

	memset(tag, 0, sizeof(tag));
	if (bits == 128) {
		IMB_AES128_GCM_PRE(mgr, gcm_kat_key, &kd);
		IMB_AES128_GCM_ENC(mgr, &kd, &gc, buf, gcm_kat_pt, sizeof(buf), gcm_kat_iv,
				   gcm_kat_aad, sizeof(gcm_kat_aad), tag, sizeof(tag));
	} else {
		IMB_AES256_GCM_PRE(mgr, gcm_kat_key, &kd);
		IMB_AES256_GCM_ENC(mgr, &kd, &gc, buf, gcm_kat_pt, sizeof(buf), gcm_kat_iv,
				   gcm_kat_aad, sizeof(gcm_kat_aad), tag, sizeof(tag));
	}
	ok = memcmp(buf, want_ct, sizeof(buf)) == 0 && memcmp(tag, want_tag, sizeof(tag)) == 0;
	memset(tag, 0, sizeof(tag));
	if (bits == 128)
		IMB_AES128_GCM_DEC(mgr, &kd, &gc, buf, buf, sizeof(buf), gcm_kat_iv,
				   gcm_kat_aad, sizeof(gcm_kat_aad), tag, sizeof(tag));
	else
		IMB_AES256_GCM_DEC(mgr, &kd, &gc, buf, buf, sizeof(buf), gcm_kat_iv,
				   gcm_kat_aad, sizeof(gcm_kat_aad), tag, sizeof(tag));
	ok = ok && memcmp(buf, gcm_kat_pt, sizeof(buf)) == 0 &&
	     memcmp(tag, want_tag, sizeof(tag)) == 0;
	imb_clear_mem(&kd, sizeof(kd));
	return ok ? 0 : -1;
}

/* The CPU features IPsec-MB needs for an arch (intel-ipsec-mb.h). */
static uint64_t
gcm_arch_flags(enum sgw_gcm_arch arch)
{
	switch (arch) {
	case SGW_GCM_ARCH_SSE:
		return IMB_CPUFLAGS_SSE;
	case SGW_GCM_ARCH_AVX:
		return IMB_CPUFLAGS_AVX;
	case SGW_GCM_ARCH_AVX2:
		return IMB_CPUFLAGS_AVX2;
	case SGW_GCM_ARCH_AVX512:
		return IMB_CPUFLAGS_AVX512;
	default:
		return 0;
	}
}

IMB_MGR *
sgw_gcm_mgr_create(enum sgw_gcm_arch want, enum sgw_gcm_arch *used_out)
{
	IMB_MGR *mgr;
	IMB_ARCH used = IMB_ARCH_NONE;
	enum sgw_gcm_arch arch;

	mgr = alloc_mb_mgr(0);
	if (mgr == NULL)
		return NULL;
	/*
	 * alloc_mb_mgr() filled in the CPU's features. A forced arch the CPU
	 * lacks is refused here: IPsec-MB 1.3's init_mb_mgr_avx512() can crash
	 * rather than fail on such a CPU (seen under valgrind, which hides
	 * AVX-512).
	 */
	if (want != SGW_GCM_ARCH_AUTO && (mgr->features & gcm_arch_flags(want)) !=
					 gcm_arch_flags(want))
		goto fail;
	switch (want) {
	case SGW_GCM_ARCH_AUTO:
		init_mb_mgr_auto(mgr, &used);
		break;
	case SGW_GCM_ARCH_SSE:
		init_mb_mgr_sse(mgr);
		used = IMB_ARCH_SSE;
		break;
	case SGW_GCM_ARCH_AVX:
		init_mb_mgr_avx(mgr);
		used = IMB_ARCH_AVX;
		break;
	case SGW_GCM_ARCH_AVX2:
		init_mb_mgr_avx2(mgr);
		used = IMB_ARCH_AVX2;
		break;
	case SGW_GCM_ARCH_AVX512:
		init_mb_mgr_avx512(mgr);
		used = IMB_ARCH_AVX512;
		break;
	default:
		goto fail;
	}
	if (imb_get_errno(mgr) != 0)
		goto fail;      /* e.g. IMB_ERR_MISSING_CPUFLAGS_INIT_MGR */
	if ((mgr->features & IMB_FEATURE_SELF_TEST) != 0 &&
	    (mgr->features & IMB_FEATURE_SELF_TEST_PASS) == 0)
		goto fail;
	switch (used) {
	case IMB_ARCH_SSE:
		arch = SGW_GCM_ARCH_SSE;
		break;
	case IMB_ARCH_AVX:
		arch = SGW_GCM_ARCH_AVX;
		break;
	case IMB_ARCH_AVX2:
		arch = SGW_GCM_ARCH_AVX2;
		break;
	case IMB_ARCH_AVX512:
		arch = SGW_GCM_ARCH_AVX512;
		break;
	default:
		goto fail;      /* no AES-NI: IPsec-MB's emulation is not used */
	}
	if (gcm_kat(mgr, 128) != 0 || gcm_kat(mgr, 256) != 0)
		goto fail;
	if (used_out != NULL)
		*used_out = arch;
	return mgr;
fail:
	free_mb_mgr(mgr);
	return NULL;
}

void
sgw_gcm_mgr_destroy(IMB_MGR *mgr)
{
	if (mgr != NULL)
		free_mb_mgr(mgr);
}
