/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * CRC-32 (the Ethernet polynomial, as zlib and rte_net_crc compute it) for
 * the short runs most RoCE frames are: headers and small payloads.
 *
 * rte_net_crc's AVX-512 path folds 64 bytes at a time and is the fastest
 * for long runs, but a call of its own on a run of 64-128 bytes takes some
 * 45-65 cycles from data to result here, and the engine waits for each
 * (the frame's check decides what happens next). Short runs go through
 * this one instead: the run as 16-byte blocks, the first one a masked load
 * padded with zeros in front (they do not change a CRC whose register
 * starts at 0, and the initial ones are XORed into the first four data
 * bytes instead), folded four lanes abreast with carry-less multiplies,
 * the lanes joined, then the 128 bits reduced to 32 (Barrett), as in
 * Intel's "Fast CRC Computation for Generic Polynomials Using PCLMULQDQ".
 * About 25 cycles for 64 bytes, 35 for 128.
 *
 * Runs from SHORT_MAX bytes on, CPUs without PCLMULQDQ and AVX-512 BW/VL
 * (for the masked load), and builds for other architectures use
 * rte_net_crc_calc().
 *
 * droce_crc32_masked() is the same CRC of a run with some bits of its
 * first bytes set to ones, the ICRC's view of a frame's headers: the
 * ones are ORed into the blocks as they are loaded, so the frame itself
 * is neither written nor saved and restored.
 */
#include <stdbool.h>
#include <string.h>

#include <rte_cpuflags.h>
#include <rte_net_crc.h>

#include "droce_wire.h"

/* From here on rte_net_crc's 64-byte folding is as fast or faster. */
#define SHORT_MAX DROCE_CRC_MASKED_MAX

static bool crc_short_ok;

#ifdef RTE_ARCH_X86
#include <immintrin.h>

#define CRC_TARGET __attribute__((target("pclmul,sse4.1,avx512bw,avx512vl")))

/*
 * Folding constants for the bit-reflected polynomial: a 128-bit block
 * moved D bits on is {x^(D+32), x^(D-32)} mod P, reflected and shifted
 * left by one (low 64 bits: the factor of the block's low half).
 */
#define K(lo, hi) { (long long)(lo), (long long)(hi) }
static const long long k128[2] __rte_aligned(16) = K(0x1751997d0, 0x0ccaa009e);
static const long long k256[2] __rte_aligned(16) = K(0x0f1da05aa, 0x15a546366);
static const long long k384[2] __rte_aligned(16) = K(0x03db1ecdc, 0x174359406);
static const long long k512[2] __rte_aligned(16) = K(0x154442bd4, 0x1c6e41596);
/* x^64 mod P, for 128 -> 64 bits; P and its Barrett quotient for 64 -> 32. */
static const long long k64[2] __rte_aligned(16) = K(0x163cd6124, 0);
static const long long kpoly[2] __rte_aligned(16) = K(0x1db710641, 0x1f7011641);
/* Ones at bytes 32..35: a 16-byte load at 32 - pad (48 - pad) puts the
 * initial ones where the data of the first (second) block starts. */
static const uint8_t init_ones[64] __rte_aligned(64) = {
	[32] = 0xff, [33] = 0xff, [34] = 0xff, [35] = 0xff,
};

CRC_TARGET static inline __m128i
fold(__m128i x, __m128i k)
{
	return _mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00), _mm_clmulepi64_si128(x, k, 0x11));
}

/*
 * Block j >= 1 of the run (data bytes 16 j - pad on), with the ones of
 * @p mask when it has any there (the mask's padded layout puts its byte i
 * at 16 + i, so the same offset reads it).
 */
CRC_TARGET static inline __attribute__((always_inline)) __m128i
block(const uint8_t *p, uint32_t j, uint32_t pad, const struct droce_crc_mask *mask)
{
	__m128i x = _mm_loadu_si128((const __m128i *)(p + 16 * j - pad));

	if (mask != NULL && j * 16 < DROCE_CRC_MASK_LEN + 16)
		x = _mm_or_si128(x, _mm_loadu_si128((const __m128i *)(mask->b + 16 + 16 * j - pad)));
	return x;
}

CRC_TARGET static inline __attribute__((always_inline)) uint32_t
crc_short(const uint8_t *p, uint32_t len, const struct droce_crc_mask *mask)
{
	uint32_t r = len & 15, pad = r != 0 ? 16 - r : 0, n = (len + pad) / 16, i;
	__m128i x0, x1, x2, x3, t, m3;

	/* Block 0: zeros, then the first r bytes (a whole block when r is 0);
	 * the masked load reads nothing before p. */
	x0 = _mm_maskz_loadu_epi8((__mmask16)(0xffffu << pad), p - pad);
	if (mask != NULL)
		x0 = _mm_or_si128(x0, _mm_loadu_si128((const __m128i *)(mask->b + 16 - pad)));
	x0 = _mm_xor_si128(x0, _mm_loadu_si128((const __m128i *)(init_ones + 32 - pad)));
	i = 1;
	if (n >= 2) {
		/* With fewer than four bytes in block 0 the ones reach into block 1. */
		x1 = _mm_xor_si128(block(p, 1, pad, mask),
				   _mm_loadu_si128((const __m128i *)(init_ones + 48 - pad)));
		i = 2;
		if (n >= 4) {
			const __m128i k = _mm_load_si128((const __m128i *)k512);

			x2 = block(p, 2, pad, mask);
			x3 = block(p, 3, pad, mask);
			for (i = 4; i + 4 <= n; i += 4) {
				x0 = _mm_xor_si128(fold(x0, k), block(p, i, pad, mask));
				x1 = _mm_xor_si128(fold(x1, k), block(p, i + 1, pad, mask));
				x2 = _mm_xor_si128(fold(x2, k), block(p, i + 2, pad, mask));
				x3 = _mm_xor_si128(fold(x3, k), block(p, i + 3, pad, mask));
			}
			/* The four lanes into one, each moved on by its distance. */
			x0 = _mm_xor_si128(
				_mm_xor_si128(fold(x0, _mm_load_si128((const __m128i *)k384)),
					      fold(x1, _mm_load_si128((const __m128i *)k256))),
				_mm_xor_si128(fold(x2, _mm_load_si128((const __m128i *)k128)), x3));
		} else {
			x0 = _mm_xor_si128(fold(x0, _mm_load_si128((const __m128i *)k128)), x1);
		}
	}
	for (; i < n; i++)
		x0 = _mm_xor_si128(fold(x0, _mm_load_si128((const __m128i *)k128)),
				   block(p, i, pad, mask));
	/* 128 -> 64 bits. */
	m3 = _mm_setr_epi32(~0, 0, ~0, 0);
	t = _mm_clmulepi64_si128(x0, _mm_load_si128((const __m128i *)k128), 0x10);
	x0 = _mm_xor_si128(_mm_srli_si128(x0, 8), t);
	t = _mm_srli_si128(x0, 4);
	x0 = _mm_clmulepi64_si128(_mm_and_si128(x0, m3), _mm_load_si128((const __m128i *)k64),
				  0x00);
	x0 = _mm_xor_si128(x0, t);
	/* 64 -> 32 bits (Barrett). */
	t = _mm_clmulepi64_si128(_mm_and_si128(x0, m3), _mm_load_si128((const __m128i *)kpoly),
				 0x10);
	t = _mm_clmulepi64_si128(_mm_and_si128(t, m3), _mm_load_si128((const __m128i *)kpoly),
				 0x00);
	x0 = _mm_xor_si128(x0, t);
	return ~(uint32_t)_mm_extract_epi32(x0, 1);
}

/* The two instances, each with its mask known (none, or one). */
CRC_TARGET static uint32_t
crc_plain(const uint8_t *p, uint32_t len)
{
	return crc_short(p, len, NULL);
}

CRC_TARGET static uint32_t
crc_masked(const uint8_t *p, uint32_t len, const struct droce_crc_mask *mask)
{
	return crc_short(p, len, mask);
}

bool
droce_crc32_init(void)
{
	crc_short_ok = rte_cpu_get_flag_enabled(RTE_CPUFLAG_PCLMULQDQ) > 0 &&
		       rte_cpu_get_flag_enabled(RTE_CPUFLAG_SSE4_1) > 0 &&
		       rte_cpu_get_flag_enabled(RTE_CPUFLAG_AVX512BW) > 0 &&
		       rte_cpu_get_flag_enabled(RTE_CPUFLAG_AVX512VL) > 0;
	return crc_short_ok;
}
#else
bool
droce_crc32_init(void)
{
	return false;
}
#endif

uint32_t
droce_crc32(const void *p, uint32_t len)
{
#ifdef RTE_ARCH_X86
	if (crc_short_ok && len >= 16 && len < SHORT_MAX)
		return crc_plain(p, len);
#endif
	return rte_net_crc_calc(p, len, RTE_NET_CRC32_ETH);
}

uint32_t
droce_crc32_masked(const void *p, uint32_t len, const struct droce_crc_mask *mask)
{
	uint8_t copy[DROCE_CRC_MASKED_MAX];
	uint32_t i;

	RTE_ASSERT(len < DROCE_CRC_MASKED_MAX);
#ifdef RTE_ARCH_X86
	if (crc_short_ok && len >= 16)
		return crc_masked(p, len, mask);
#endif
	/* Without the short path: the ICRC's view in a copy. */
	memcpy(copy, p, len);
	for (i = 0; i < RTE_MIN(len, (uint32_t)DROCE_CRC_MASK_LEN); i++)
		copy[i] |= mask->b[16 + i];
	return rte_net_crc_calc(copy, len, RTE_NET_CRC32_ETH);
}
