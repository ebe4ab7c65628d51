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
 * About 25 cycles for 64 bytes, 35 for 128. Where the CPU has VPCLMULQDQ,
 * runs from CRC512_MIN bytes on do the same with 64-byte blocks, all four
 * lanes of a 512-bit register folded at once: fewer instructions, and a
 * 64 B WRITE's ICRC check on receipt some 5 cycles faster.
 *
 * CPUs without AVX-512 BW/VL (AMD before Zen 4, Intel's clients before Ice
 * Lake) have no masked load: there the first block is the run's first 16
 * bytes, moved up by a byte shuffle (SSSE3) that brings the zeros in
 * front. Everything else is the same code.
 *
 * CPUs without the 512-bit path fold long runs the same way: DPDK 22.11's
 * CRC for them (its SSE4.2 path) folds one 16-byte block at a time, each
 * fold waiting for the one before, some 0.28 cycles a byte on Zen 4. Four
 * lanes abreast take two thirds of that (the carry-less multiplies' rate
 * is then the limit, not their latency), and where the CPU has VPCLMULQDQ
 * with AVX2 (AMD Zen 3, Intel's clients since Alder Lake) runs from
 * CRC256_MIN bytes on are folded as eight lanes in four 256-bit
 * registers, two lanes per multiply: a third (tests/bench/crc_bench).
 *
 * Runs from SHORT_MAX bytes on where the CPU has the 512-bit path (DPDK's
 * AVX-512 CRC is as fast there), runs shorter than 16 bytes, CPUs without
 * PCLMULQDQ and SSE4.1, and builds for other architectures use
 * rte_net_crc_calc().
 *
 * droce_crc32_masked() is the same CRC of a run with some bits of its
 * first bytes set to ones, the ICRC's view of a frame's headers: the
 * ones are ORed into the blocks as they are loaded, so the frame itself
 * is neither written nor saved and restored.
 *
 * Long runs on VPCLMULQDQ CPUs can carry a copy along (fold_run512()):
 * droce_copy_crc32() stores each block it folds elsewhere (a sent
 * payload into its frame), droce_crc32_beside() moves another run beside
 * the CRC's (a received payload into its region, during the next frame's
 * check). Their blocks are where the cache lines are, not where the run's
 * length puts them: a frame sits where its PMD put it (droce's mbufs start
 * their data on a line, and a 4 KiB payload's headers end 6 bytes into
 * one), and a 64-byte load across two lines costs about twice one within
 * a line. The few bytes after the last whole line are shifted into place
 * with byte permutes (AVX-512 VBMI), so that path needs it too.
 */
#include <assert.h>
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include <rte_cpuflags.h>
#include <rte_net_crc.h>

#include "droce_wire.h"

/* From here on rte_net_crc's 64-byte folding is as fast or faster. */
#define SHORT_MAX DROCE_CRC_MASKED_MAX

#ifdef RTE_ARCH_X86
#include <immintrin.h>

/* The folding itself; the first block's load needs more (below). */
#define CRC_TARGET_SSE __attribute__((target("pclmul,ssse3,sse4.1")))
#define CRC_TARGET __attribute__((target("pclmul,ssse3,sse4.1,avx512bw,avx512vl")))

/*
 * Folding constants for the bit-reflected polynomial: a 128-bit block
 * moved D bits on is {x^(D+32), x^(D-32)} mod P, reflected and shifted
 * left by one (low 64 bits: the factor of the block's low half).
 */
#define K128 0x1751997d0, 0x0ccaa009e
#define K256 0x0f1da05aa, 0x15a546366
#define K384 0x03db1ecdc, 0x174359406
#define K512 0x154442bd4, 0x1c6e41596
#define K1024 0x1e88ef372, 0x14a7fe880
#define K1536 0x1821d8bc0, 0x12e958ac4
#define K2048 0x11542778a, 0x1322d1430
static const long long k128[2] __rte_aligned(16) = { K128 };
static const long long k256[2] __rte_aligned(16) = { K256 };
static const long long k384[2] __rte_aligned(16) = { K384 };
static const long long k512[2] __rte_aligned(16) = { K512 };
static const long long k1024[2] __rte_aligned(16) = { K1024 };
static const long long k1536[2] __rte_aligned(16) = { K1536 };
static const long long k2048[2] __rte_aligned(16) = { K2048 };
/* x^64 mod P, for 128 -> 64 bits; P and its Barrett quotient for 64 -> 32. */
static const long long k64[2] __rte_aligned(16) = { 0x163cd6124, 0 };
static const long long kpoly[2] __rte_aligned(16) = { 0x1db710641, 0x1f7011641 };
/* Ones at bytes 32..35: a 16-byte load at 32 - pad (48 - pad) puts the
 * initial ones where the data of the first (second) block starts. */
static const uint8_t init_ones[64] __rte_aligned(64) = {
	[32] = 0xff, [33] = 0xff, [34] = 0xff, [35] = 0xff,
};
/* A shuffle control read at 16 - pad: zeros (0x80) in the first pad
 * bytes, then bytes 0.. of the source; read at 32 - pad: the source's
 * bytes 16 - pad.. (those the first read moved out), then zeros. */
static const uint8_t head_shuffle[48] __rte_aligned(16) = {
	0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
	0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
	0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
	0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
	0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
};

CRC_TARGET_SSE static inline __m128i
fold(__m128i x, __m128i k)
{
	return _mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00), _mm_clmulepi64_si128(x, k, 0x11));
}

/* The CRC of a run folded into 128 bits: 128 -> 64 bits, then 64 -> 32
 * (Barrett). */
CRC_TARGET_SSE static inline __attribute__((always_inline)) uint32_t
crc_reduce(__m128i x0)
{
	const __m128i m3 = _mm_setr_epi32(~0, 0, ~0, 0);
	__m128i t;

	t = _mm_clmulepi64_si128(x0, _mm_load_si128((const __m128i *)k128), 0x10);
	x0 = _mm_xor_si128(_mm_srli_si128(x0, 8), t);
	t = _mm_srli_si128(x0, 4);
	x0 = _mm_clmulepi64_si128(_mm_and_si128(x0, m3), _mm_load_si128((const __m128i *)k64),
				  0x00);
	x0 = _mm_xor_si128(x0, t);
	t = _mm_clmulepi64_si128(_mm_and_si128(x0, m3), _mm_load_si128((const __m128i *)kpoly),
				 0x10);
	t = _mm_clmulepi64_si128(_mm_and_si128(t, m3), _mm_load_si128((const __m128i *)kpoly),
				 0x00);
	x0 = _mm_xor_si128(x0, t);
	return ~(uint32_t)_mm_extract_epi32(x0, 1);
}

/*
 * Block j >= 1 of the run (data bytes 16 j - pad on), with the ones of
 * @p mask when it has any there (the mask's padded layout puts its byte i
 * at 16 + i, so the same offset reads it).
 */
CRC_TARGET_SSE static inline __attribute__((always_inline)) __m128i
block(const uint8_t *p, uint32_t j, uint32_t pad, const struct droce_crc_mask *mask)
{
	__m128i x = _mm_loadu_si128((const __m128i *)(p + 16 * j - pad));

	if (mask != NULL && j * 16 < DROCE_CRC_MASK_LEN + 16)
		x = _mm_or_si128(x, _mm_loadu_si128((const __m128i *)(mask->b + 16 + 16 * j - pad)));
	return x;
}

/* The zeros in front of a run of @p len bytes that end its first block
 * where the run's first len % 16 bytes end (none when that is 0). */
static inline uint32_t
crc_pad(uint32_t len)
{
	return (16 - (len & 15)) & 15;
}

/* Block 0 of the @p len bytes at @p p: the pad's zeros, then the run's
 * first bytes. The masked load reads nothing before p. */
CRC_TARGET static inline __attribute__((always_inline)) __m128i
head_masked(const uint8_t *p, uint32_t len)
{
	uint32_t pad = crc_pad(len);

	return _mm_maskz_loadu_epi8((__mmask16)(0xffffu << pad), p - pad);
}

/* The same without AVX-512: the run's first 16 bytes (it has them), moved
 * up by the pad, zeros shuffled in front. */
CRC_TARGET_SSE static inline __attribute__((always_inline)) __m128i
head_shuffled(const uint8_t *p, uint32_t len)
{
	return _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)p),
				_mm_loadu_si128((const __m128i *)(head_shuffle + 16 -
								  crc_pad(len))));
}

/* The CRC of the @p len (>= 16) bytes at @p p, whose block 0 @p x0 holds
 * (head_masked() or head_shuffled()), four 128-bit lanes abreast at any
 * length: inlined into each caller, it takes that caller's instruction
 * set. */
CRC_TARGET_SSE static inline __attribute__((always_inline)) uint32_t
crc_fold128(const uint8_t *p, uint32_t len, const struct droce_crc_mask *mask, __m128i x0)
{
	uint32_t pad = crc_pad(len), n = (len + pad) / 16, i;
	__m128i x1, x2, x3;

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
	return crc_reduce(x0);
}

/*
 * Long runs with 256-bit carry-less multiplies (VPCLMULQDQ with AVX2, no
 * AVX-512 needed): blocks as crc_fold128() reads them, eight lanes in four
 * registers, each lane folded 1024 bits on per step. The first eight
 * blocks, which hold the mask's bytes and the CRC's register, are read
 * as crc_fold128() reads them; the lanes are joined pairwise (512, 256,
 * then 128 bits on), and the blocks after the last whole step are folded
 * in one at a time. As fold_run512() below, it can carry a copy along
 * (droce_copy_crc32()) where the CPU has no AVX-512: without byte-masked
 * loads and permutes, its blocks follow the run's length, as crc_fold128()'s
 * do, not its cache lines. It does not move another run beside the CRC
 * (droce_crc32_beside()): a received payload's copy into its region made
 * 128 bytes per step took the engine's 4 KiB WRITE 800-1300 cycles a
 * frame against 580-640 with the copy made first (engine_bench write_rx,
 * -C avx2), whatever the region's offset.
 */
#define CRC256_TARGET __attribute__((target("pclmul,ssse3,sse4.1,avx2,vpclmulqdq")))

/* Runs from here on take the 256-bit path: two steps of eight blocks at
 * least, below which the 128-bit path's four lanes are as fast. */
#define CRC256_MIN 256

static_assert(DROCE_CRC_MASK_LEN + 16 <= 8 * 16,
	      "the mask's bytes lie in the blocks fold_long256() reads one by one");
static_assert(DROCE_COPY_CRC_MIN >= CRC256_MIN, "fused runs are long ones");

CRC256_TARGET static inline __attribute__((always_inline)) __m256i
fold256(__m256i x, __m256i k)
{
	return _mm256_xor_si256(_mm256_clmulepi64_epi128(x, k, 0x00),
				_mm256_clmulepi64_epi128(x, k, 0x11));
}

CRC256_TARGET static inline __attribute__((always_inline)) __m256i
k256x2(const long long k[2])
{
	return _mm256_broadcastsi128_si256(_mm_load_si128((const __m128i *)k));
}

/* Blocks @p lo and @p hi side by side, @p lo in the low lane. */
CRC256_TARGET static inline __attribute__((always_inline)) __m256i
pair256(__m128i lo, __m128i hi)
{
	return _mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1);
}

/* Block j >= 1 as block() reads it, stored at @p d too when @p d is not
 * NULL (a copy, which never has a mask). */
CRC256_TARGET static inline __attribute__((always_inline)) __m128i
block_copied(uint8_t *d, const uint8_t *s, uint32_t j, uint32_t pad,
	     const struct droce_crc_mask *mask)
{
	__m128i b = block(s, j, pad, mask);

	if (d != NULL)
		_mm_storeu_si128((__m128i *)(d + 16 * j - pad), b);
	return b;
}

/*
 * The CRC of the @p n (>= CRC256_MIN) bytes at @p s continued from
 * @p prev (zlib's crc32(prev, s, n)), @p mask ORed into its first bytes
 * (not with @p d); each block stored at @p d too when @p d is not NULL.
 * The continued CRC's register, ~prev, goes where the
 * run's first four bytes are: byte pad of block 0 on, moved into place by
 * the shuffles that move block 0 (what does not fit goes into block 1).
 * Block 0 is copied as the run's first 16 bytes, unmoved; each block
 * after it is stored where it was read.
 */
CRC256_TARGET static inline __attribute__((always_inline)) uint32_t
fold_long256(uint8_t *d, const uint8_t *s, uint32_t n, uint32_t prev,
	     const struct droce_crc_mask *mask)
{
	uint32_t pad = crc_pad(n), nb = (n + pad) / 16, i;
	__m128i reg = _mm_cvtsi32_si128((int)~prev), b0 = head_shuffled(s, n), y;
	__m256i x0, x1, x2, x3, k;

	if (d != NULL)
		_mm_storeu_si128((__m128i *)d, _mm_loadu_si128((const __m128i *)s));
	if (mask != NULL)
		b0 = _mm_or_si128(b0, _mm_loadu_si128((const __m128i *)(mask->b + 16 - pad)));
	b0 = _mm_xor_si128(b0, _mm_shuffle_epi8(reg, _mm_loadu_si128((const __m128i *)
								 (head_shuffle + 16 - pad))));
	x0 = pair256(b0, _mm_xor_si128(block_copied(d, s, 1, pad, mask),
				       _mm_shuffle_epi8(reg, _mm_loadu_si128((const __m128i *)
									     (head_shuffle + 32 - pad)))));
	x1 = pair256(block_copied(d, s, 2, pad, mask), block_copied(d, s, 3, pad, mask));
	x2 = pair256(block_copied(d, s, 4, pad, mask), block_copied(d, s, 5, pad, mask));
	x3 = pair256(block_copied(d, s, 6, pad, mask), block_copied(d, s, 7, pad, mask));
	k = k256x2(k1024);
	for (i = 8; i + 8 <= nb; i += 8) {
		const uint32_t off = 16 * i - pad;
		__m256i b[4];
		unsigned j;

		for (j = 0; j < 4; j++) {
			b[j] = _mm256_loadu_si256((const __m256i *)(s + off + 32 * j));
			if (d != NULL)
				_mm256_storeu_si256((__m256i *)(d + off + 32 * j), b[j]);
		}
		x0 = _mm256_xor_si256(fold256(x0, k), b[0]);
		x1 = _mm256_xor_si256(fold256(x1, k), b[1]);
		x2 = _mm256_xor_si256(fold256(x2, k), b[2]);
		x3 = _mm256_xor_si256(fold256(x3, k), b[3]);
	}
	/* The eight lanes (blocks i - 8 .. i - 1) into the last one. */
	k = k256x2(k512);
	x0 = _mm256_xor_si256(fold256(x0, k), x2);
	x1 = _mm256_xor_si256(fold256(x1, k), x3);
	x0 = _mm256_xor_si256(fold256(x0, k256x2(k256)), x1);
	y = _mm_xor_si128(fold(_mm256_castsi256_si128(x0), _mm_load_si128((const __m128i *)k128)),
			  _mm256_extracti128_si256(x0, 1));
	for (; i < nb; i++)
		y = _mm_xor_si128(fold(y, _mm_load_si128((const __m128i *)k128)),
				  block_copied(d, s, i, pad, NULL));
	return crc_reduce(y);
}

/* One instance for both droce_crc32() and the masked runs. */
CRC256_TARGET static uint32_t
crc_long256(const uint8_t *p, uint32_t len, const struct droce_crc_mask *mask)
{
	return fold_long256(NULL, p, len, 0, mask);
}

CRC256_TARGET static uint32_t
copy_crc256(uint8_t *d, const uint8_t *s, uint32_t n, uint32_t prev)
{
	return fold_long256(d, s, n, prev, NULL);
}

/*
 * Four short runs of one length at once on the AVX2 path
 * (droce_crc32_masked4()), as crc_masked4() below does them in one
 * 512-bit register: here two runs to a 256-bit register, in two
 * registers, each block of all four folded by two multiplies; even and
 * odd blocks in chains of their own, joined at the end, so that fewer
 * multiplies wait on each other; then each run's reduction (crc_reduce()).
 */

/* Bytes 16 at @p p in both lanes. */
CRC256_TARGET static inline __attribute__((always_inline)) __m256i
lanes2_bcast(const void *p)
{
	return _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)p));
}

/* The block at @p off (> 0) of runs @p a and @p b, with the mask's bits
 * where it has any. */
CRC256_TARGET static inline __attribute__((always_inline)) __m256i
lanes2_masked(const uint8_t *a, const uint8_t *b, int32_t off, const struct droce_crc_mask *mask)
{
	__m256i x = pair256(_mm_loadu_si128((const __m128i *)(a + off)),
			    _mm_loadu_si128((const __m128i *)(b + off)));

	if (off < DROCE_CRC_MASK_LEN)
		x = _mm256_or_si256(x, lanes2_bcast(mask->b + 16 + off));
	return x;
}

/* crc_reduce() of each lane of @p x, into @p crc[0] and @p crc[1]: in
 * 128-bit registers, a few multiplies more than in one 256-bit one. */
CRC256_TARGET static inline __attribute__((always_inline)) void
lanes2_reduce(__m256i x, uint32_t crc[2])
{
	crc[0] = crc_reduce(_mm256_castsi256_si128(x));
	crc[1] = crc_reduce(_mm256_extracti128_si256(x, 1));
}

CRC256_TARGET static void
crc_masked4_256(const uint8_t *const p[4], uint32_t len, const struct droce_crc_mask *mask,
		uint32_t crc[4])
{
	int32_t pad = (int32_t)crc_pad(len), n = (int32_t)(len + (uint32_t)pad) / 16, j;
	__m256i k = k256x2(k128), m = lanes2_bcast(mask->b + 16 - pad);
	__m256i ones = lanes2_bcast(init_ones + 32 - pad), xa, xb, ya, yb;

	/* Block 0: zeros, then the runs' first bytes; mask and initial ones.
	 * With fewer than four bytes in it, the ones reach into block 1. */
	xa = pair256(head_shuffled(p[0], len), head_shuffled(p[1], len));
	xb = pair256(head_shuffled(p[2], len), head_shuffled(p[3], len));
	xa = _mm256_xor_si256(_mm256_or_si256(xa, m), ones);
	xb = _mm256_xor_si256(_mm256_or_si256(xb, m), ones);
	j = 1;
	if (n >= 2) {
		const __m256i k2 = k256x2(k256);

		ones = lanes2_bcast(init_ones + 48 - pad);
		ya = _mm256_xor_si256(lanes2_masked(p[0], p[1], 16 - pad, mask), ones);
		yb = _mm256_xor_si256(lanes2_masked(p[2], p[3], 16 - pad, mask), ones);
		for (j = 2; j + 2 <= n; j += 2) {
			xa = _mm256_xor_si256(fold256(xa, k2),
					      lanes2_masked(p[0], p[1], 16 * j - pad, mask));
			xb = _mm256_xor_si256(fold256(xb, k2),
					      lanes2_masked(p[2], p[3], 16 * j - pad, mask));
			ya = _mm256_xor_si256(fold256(ya, k2),
					      lanes2_masked(p[0], p[1], 16 * j + 16 - pad, mask));
			yb = _mm256_xor_si256(fold256(yb, k2),
					      lanes2_masked(p[2], p[3], 16 * j + 16 - pad, mask));
		}
		xa = _mm256_xor_si256(fold256(xa, k), ya);
		xb = _mm256_xor_si256(fold256(xb, k), yb);
	}
	for (; j < n; j++) {
		xa = _mm256_xor_si256(fold256(xa, k), lanes2_masked(p[0], p[1], 16 * j - pad, mask));
		xb = _mm256_xor_si256(fold256(xb, k), lanes2_masked(p[2], p[3], 16 * j - pad, mask));
	}
	lanes2_reduce(xa, crc);
	lanes2_reduce(xb, crc + 2);
}

/*
 * The same with 512-bit carry-less multiplies (VPCLMULQDQ): 64-byte
 * blocks, the first padded in front as above, each 128-bit lane folded
 * 512 bits on at once, then the four lanes joined. Fewer instructions
 * for the 64-200 byte runs of small messages' frames.
 */
#define CRC512_TARGET \
	__attribute__((target("pclmul,sse4.1,avx512f,avx512bw,avx512vl,avx512vbmi,vpclmulqdq")))

/* Ones at bytes 64..67: a load at 64 - pad (128 - pad) puts the initial
 * ones where the data of the first (second) block starts. */
static const uint8_t init_ones512[192] __rte_aligned(64) = {
	[64] = 0xff, [65] = 0xff, [66] = 0xff, [67] = 0xff,
};
/* Lanes 0..2 of a block moved on by 384, 256 and 128 bits (lane 3 stays,
 * and its product here is dropped). */
static const long long kjoin[8] __rte_aligned(64) = { K384, K256, K128, 0, 0 };

/* Runs from here on take the 512-bit path: shorter ones are one or two
 * 64-byte blocks mostly of padding, where the 128-bit path is as fast or
 * faster (engine_bench: a 72-byte ICRC run 5 cycles slower on the 512-bit
 * path, a 104-byte one 5 faster). */
#define CRC512_MIN 96

CRC512_TARGET static inline __attribute__((always_inline)) __m512i
fold512(__m512i x, __m512i k)
{
	return _mm512_xor_si512(_mm512_clmulepi64_epi128(x, k, 0x00),
				_mm512_clmulepi64_epi128(x, k, 0x11));
}

/* One instance for both callers: its mask is tested twice per run, not
 * per block, so no copy with the mask known is needed. */
CRC512_TARGET static uint32_t
crc_short512(const uint8_t *p, uint32_t len, const struct droce_crc_mask *mask)
{
	uint32_t r = len & 63, pad = r != 0 ? 64 - r : 0, n = (len + pad) / 64, j;
	__mmask64 first = ~0ULL << pad;
	__m512i x, k, b;
	__m128i y;

	/* Block 0: zeros, then the first r bytes (all 64 when r is 0); the
	 * masked loads read nothing before p or the mask's bytes. */
	x = _mm512_maskz_loadu_epi8(first, p - pad);
	if (mask != NULL)
		x = _mm512_or_si512(x, _mm512_maskz_loadu_epi8(first, mask->b + 16 - pad));
	x = _mm512_xor_si512(x, _mm512_loadu_si512(init_ones512 + 64 - pad));
	if (n >= 2) {
		k = _mm512_broadcast_i32x4(_mm_load_si128((const __m128i *)k512));
		/* Block 1 holds the rest of the mask's bytes (those before byte
		 * 64), and of the ones when block 0 has fewer than four bytes. */
		b = _mm512_loadu_si512(p + 64 - pad);
		if (mask != NULL)
			b = _mm512_or_si512(b, _mm512_maskz_loadu_epi8(~first, mask->b + 80 - pad));
		b = _mm512_xor_si512(b, _mm512_loadu_si512(init_ones512 + 128 - pad));
		x = _mm512_xor_si512(fold512(x, k), b);
		for (j = 2; j < n; j++)
			x = _mm512_xor_si512(fold512(x, k), _mm512_loadu_si512(p + 64 * j - pad));
	}
	/* The four lanes into one, each moved on by its distance. */
	b = fold512(x, _mm512_load_si512(kjoin));
	y = _mm_xor_si128(_mm_xor_si128(_mm512_castsi512_si128(b), _mm512_extracti32x4_epi32(b, 1)),
			  _mm_xor_si128(_mm512_extracti32x4_epi32(b, 2), _mm512_extracti32x4_epi32(x, 3)));
	return crc_reduce(y);
}

/*
 * Four runs of the same length at once (droce_crc32_masked4()): each in
 * a 128-bit lane of a 512-bit register, so one carry-less multiply folds
 * a block of all four, and one Barrett reduction ends them all. Block j
 * of run i is its bytes 16 j - pad on, as crc_fold128() reads them; the
 * mask and the initial ones are the same for the four and are broadcast.
 * Even and odd blocks go in two chains, each folded 256 bits on, joined
 * at the end: half as many multiplies wait on each other. Where a burst's
 * frames are sealed one after another, each crc_short512() call costs
 * some 21 cycles at 128 bytes; four of them here some 14 each, and some
 * 10 for an ACK's 52.
 */
CRC512_TARGET static inline __attribute__((always_inline)) __m512i
lanes_bcast(const void *p)
{
	return _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)p));
}

/* Block 0 of the four runs: @p pad zeros, then their first bytes (the
 * masked loads read nothing before the runs). */
CRC512_TARGET static inline __attribute__((always_inline)) __m512i
lanes_head(const uint8_t *const p[4], int32_t pad)
{
	__mmask16 m = (__mmask16)(0xffffu << pad);
	__m512i x = _mm512_castsi128_si512(_mm_maskz_loadu_epi8(m, p[0] - pad));

	x = _mm512_inserti32x4(x, _mm_maskz_loadu_epi8(m, p[1] - pad), 1);
	x = _mm512_inserti32x4(x, _mm_maskz_loadu_epi8(m, p[2] - pad), 2);
	return _mm512_inserti32x4(x, _mm_maskz_loadu_epi8(m, p[3] - pad), 3);
}

/* The block at @p off (> 0) of the four runs, with the mask's bits where
 * it has any. Plain loads: each insert takes its load with it. */
CRC512_TARGET static inline __attribute__((always_inline)) __m512i
lanes_masked(const uint8_t *const p[4], int32_t off, const struct droce_crc_mask *mask)
{
	__m512i b = _mm512_castsi128_si512(_mm_loadu_si128((const __m128i *)(p[0] + off)));

	b = _mm512_inserti32x4(b, _mm_loadu_si128((const __m128i *)(p[1] + off)), 1);
	b = _mm512_inserti32x4(b, _mm_loadu_si128((const __m128i *)(p[2] + off)), 2);
	b = _mm512_inserti32x4(b, _mm_loadu_si128((const __m128i *)(p[3] + off)), 3);
	if (off < DROCE_CRC_MASK_LEN)
		b = _mm512_or_si512(b, lanes_bcast(mask->b + 16 + off));
	return b;
}

CRC512_TARGET static void
crc_masked4(const uint8_t *const p[4], uint32_t len, const struct droce_crc_mask *mask,
	    uint32_t crc[4])
{
	const __m512i m3 = _mm512_set_epi32(0, ~0, 0, ~0, 0, ~0, 0, ~0, 0, ~0, 0, ~0, 0, ~0, 0, ~0);
	int32_t pad = (int32_t)crc_pad(len), n = (int32_t)(len + (uint32_t)pad) / 16, j;
	__m512i k = lanes_bcast(k128), x, y, t;

	/* Block 0: zeros, then the runs' first bytes; mask and initial ones
	 * in (a | b) ^ c. With fewer than four bytes in it, the ones reach
	 * into block 1. */
	x = _mm512_ternarylogic_epi64(lanes_head(p, pad),
				      lanes_bcast(mask->b + 16 - pad),
				      lanes_bcast(init_ones512 + 64 - pad), 0x56);
	j = 1;
	if (n >= 2) {
		__m512i k256x4 = lanes_bcast(k256);

		y = _mm512_xor_si512(lanes_masked(p, 16 - pad, mask),
				     lanes_bcast(init_ones512 + 80 - pad));
		for (j = 2; j + 2 <= n; j += 2) {
			x = _mm512_xor_si512(fold512(x, k256x4), lanes_masked(p, 16 * j - pad, mask));
			y = _mm512_xor_si512(fold512(y, k256x4),
					     lanes_masked(p, 16 * j + 16 - pad, mask));
		}
		x = _mm512_xor_si512(fold512(x, k), y);
	}
	for (; j < n; j++)
		x = _mm512_xor_si512(fold512(x, k), lanes_masked(p, 16 * j - pad, mask));
	/* crc_reduce() in each lane. */
	t = _mm512_clmulepi64_epi128(x, k, 0x10);
	x = _mm512_xor_si512(_mm512_bsrli_epi128(x, 8), t);
	t = _mm512_bsrli_epi128(x, 4);
	x = _mm512_clmulepi64_epi128(_mm512_and_si512(x, m3), lanes_bcast(k64), 0x00);
	x = _mm512_xor_si512(x, t);
	t = _mm512_clmulepi64_epi128(_mm512_and_si512(x, m3), lanes_bcast(kpoly), 0x10);
	t = _mm512_clmulepi64_epi128(_mm512_and_si512(t, m3), lanes_bcast(kpoly), 0x00);
	x = _mm512_xor_si512(x, t);
	/* Each lane's second 32 bits, inverted. */
	_mm_storeu_si128((__m128i *)crc,
			 _mm_xor_si128(_mm512_castsi512_si128(_mm512_permutexvar_epi32(
					       _mm512_set_epi32(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
								13, 9, 5, 1), x)),
				       _mm_set1_epi32(-1)));
}

/* Fold in the 64-byte block at @p off of the run (the run less the pad,
 * as crc_short512() reads it), stored at @p d too when @p d is not NULL. */
CRC512_TARGET static inline __attribute__((always_inline)) __m512i
block512(uint8_t *d, const uint8_t *s, uint32_t off)
{
	__m512i b = _mm512_loadu_si512(s + off);

	if (d != NULL)
		_mm512_storeu_si512(d + off, b);
	return b;
}

/* Another run's 256 bytes moved, if it has as many left. */
CRC512_TARGET static inline __attribute__((always_inline)) void
side_move256(struct droce_side_copy *side)
{
	uint8_t *d = side->dst;
	const uint8_t *s = side->src;

	if (side->n < 256)
		return;
	_mm512_storeu_si512(d, _mm512_loadu_si512(s));
	_mm512_storeu_si512(d + 64, _mm512_loadu_si512(s + 64));
	_mm512_storeu_si512(d + 128, _mm512_loadu_si512(s + 128));
	_mm512_storeu_si512(d + 192, _mm512_loadu_si512(s + 192));
	side->dst = d + 256;
	side->src = s + 256;
	side->n -= 256;
}

/* What is left of another run after side_move256() (up to 255 bytes
 * beside a long CRC, all of it beside a short one): 64-byte moves, then
 * a masked one for the last bytes. */
CRC512_TARGET static inline __attribute__((always_inline)) void
side_move_rest(struct droce_side_copy *side)
{
	uint8_t *d = side->dst;
	const uint8_t *s = side->src;
	uint32_t n = side->n, i;

	for (i = 0; i + 64 <= n; i += 64)
		_mm512_storeu_si512(d + i, _mm512_loadu_si512(s + i));
	if (i < n) {
		__mmask64 k = (UINT64_C(1) << (n - i)) - 1;

		_mm512_mask_storeu_epi8(d + i, k, _mm512_maskz_loadu_epi8(k, s + i));
	}
	/* Done: with n 0 nobody reads its pointers, which may be NULL. */
	side->n = 0;
}

/* 0, 1, .. 127: read at t, the byte permutes' indices that move a block
 * t bytes on. */
static const uint8_t iota128[128] __rte_aligned(64) = {
#define IOTA8(i) i, i + 1, i + 2, i + 3, i + 4, i + 5, i + 6, i + 7
	IOTA8(0), IOTA8(8), IOTA8(16), IOTA8(24), IOTA8(32), IOTA8(40), IOTA8(48), IOTA8(56),
	IOTA8(64), IOTA8(72), IOTA8(80), IOTA8(88), IOTA8(96), IOTA8(104), IOTA8(112), IOTA8(120),
#undef IOTA8
};

/*
 * The CRC of the @p n (>= DROCE_COPY_CRC_MIN) bytes at @p s continued
 * from @p prev (zlib's crc32(prev, s, n)): 64-byte blocks on @p s's cache
 * lines, the first padded in front with the zeros before @p s in its line
 * (crc_short512() pads by the length instead), four abreast, each folded
 * 2048 bits on, then the four joined. The continued CRC's register,
 * ~prev, goes where crc_short512() puts the initial ones. The t bytes
 * after the last whole line then join the block X folded so far: X moved
 * t bytes on is its first t bytes (a block of their own, in front) and
 * its last 64 - t bytes followed by the t bytes (the last block), the
 * first folded onto the last. Each block is also stored at @p d when
 * @p d is not NULL (droce_copy_crc32()); with @p side, 256 bytes of that
 * other run are moved per 256 of the CRC's, and the rest before the
 * joins (droce_crc32_beside()). The
 * carry-less multiplies decide the pace: the loads and stores of a copy
 * fit in beside them. @p mask (not with @p d) is ORed into the first
 * blocks as they are read, as crc_short512() does.
 */
CRC512_TARGET static inline __attribute__((always_inline)) uint32_t
fold_run512(uint8_t *d, const uint8_t *s, uint32_t n, uint32_t prev,
	    const struct droce_crc_mask *mask, struct droce_side_copy *side)
{
	uint32_t pad = (uint32_t)((uintptr_t)s & 63), nb = (n + pad) / 64, t = (n + pad) & 63, j;
	__mmask64 first = ~0ULL << pad;
	/* The register, ~prev, where the data starts: byte pad of block 0,
	 * and of block 1 what does not fit before its end. Moved there in
	 * registers: from a buffer of its own, stored and then loaded at an
	 * offset, the loads would wait for the stores to reach the cache. */
	__m512i reg = _mm512_zextsi128_si512(_mm_cvtsi32_si128((int)~prev));
	__m512i to_pad = _mm512_loadu_si512(iota128 + 64 - pad);
	__m512i x0, x1, x2, x3, k;
	__m128i y;

	if (d != NULL)
		d -= pad;
	s -= pad;
	/* Block 0: zeros, then the first 64 - pad bytes; the masked load and
	 * store touch nothing before either run. */
	x0 = _mm512_maskz_loadu_epi8(first, s);
	x1 = block512(d, s, 64);
	if (d != NULL)
		_mm512_mask_storeu_epi8(d, first, x0);
	/* The mask's bytes: those of block 0 after the pad, the rest in
	 * block 1 (the masked loads read none outside the mask). */
	if (mask != NULL) {
		x0 = _mm512_or_si512(x0, _mm512_maskz_loadu_epi8(first, mask->b + 16 - pad));
		x1 = _mm512_or_si512(x1, _mm512_maskz_loadu_epi8(~first, mask->b + 80 - pad));
	}
	x0 = _mm512_xor_si512(x0, _mm512_maskz_permutexvar_epi8(first, to_pad, reg));
	x1 = _mm512_xor_si512(x1, _mm512_maskz_permutexvar_epi8(~first, to_pad, reg));
	x2 = block512(d, s, 128);
	x3 = block512(d, s, 192);
	k = _mm512_broadcast_i32x4(_mm_load_si128((const __m128i *)k2048));
	for (j = 4; j + 4 <= nb; j += 4) {
		x0 = _mm512_xor_si512(fold512(x0, k), block512(d, s, 64 * j));
		x1 = _mm512_xor_si512(fold512(x1, k), block512(d, s, 64 * j + 64));
		x2 = _mm512_xor_si512(fold512(x2, k), block512(d, s, 64 * j + 128));
		x3 = _mm512_xor_si512(fold512(x3, k), block512(d, s, 64 * j + 192));
		if (side != NULL)
			side_move256(side);
	}
	/* The rest of the other run, beside the joins below: their multiplies
	 * wait on each other and leave the load and store ports idle. Made
	 * after the CRC, it was a call to memmove() that also waited for it. */
	if (side != NULL)
		side_move_rest(side);
	/* The four into one, each moved on by its distance from the last. */
	k = _mm512_broadcast_i32x4(_mm_load_si128((const __m128i *)k512));
	x0 = _mm512_xor_si512(
		_mm512_xor_si512(
			fold512(x0, _mm512_broadcast_i32x4(_mm_load_si128((const __m128i *)k1536))),
			fold512(x1, _mm512_broadcast_i32x4(_mm_load_si128((const __m128i *)k1024)))),
		_mm512_xor_si512(fold512(x2, k), x3));
	for (; j < nb; j++)
		x0 = _mm512_xor_si512(fold512(x0, k), block512(d, s, 64 * j));
	/* The t bytes after the last whole line: X's first t bytes, a block
	 * of their own in front, folded onto X's other 64 - t and them. */
	if (t != 0) {
		__mmask64 last = (1ULL << t) - 1;
		__m512i idx = _mm512_loadu_si512(iota128 + t);
		__m512i tail = _mm512_maskz_loadu_epi8(last, s + 64 * nb);

		if (d != NULL)
			_mm512_mask_storeu_epi8(d + 64 * nb, last, tail);
		x0 = _mm512_xor_si512(fold512(_mm512_maskz_permutexvar_epi8(~0ULL << (64 - t), idx, x0), k),
				      _mm512_permutex2var_epi8(x0, idx, tail));
	}
	/* The four lanes into one, as crc_short512() joins them. */
	x1 = fold512(x0, _mm512_load_si512(kjoin));
	y = _mm_xor_si128(_mm_xor_si128(_mm512_castsi512_si128(x1), _mm512_extracti32x4_epi32(x1, 1)),
			  _mm_xor_si128(_mm512_extracti32x4_epi32(x1, 2), _mm512_extracti32x4_epi32(x0, 3)));
	return crc_reduce(y);
}

CRC512_TARGET static uint32_t
copy_crc512(uint8_t *d, const uint8_t *s, uint32_t n, uint32_t prev)
{
	return fold_run512(d, s, n, prev, NULL, NULL);
}

/* The copy's place and length in registers: kept in *@p side, they would
 * be stored and loaded back at every step, as the loop's vector stores
 * might alias them, and each step would wait for the one before. */
CRC512_TARGET static uint32_t
crc_beside512(const uint8_t *s, uint32_t n, const struct droce_crc_mask *mask,
	      struct droce_side_copy *side)
{
	struct droce_side_copy own = *side;
	uint32_t crc = fold_run512(NULL, s, n, 0, mask, &own);

	*side = own;
	return crc;
}

/* The four instances, each with its mask known (none, or one) and its
 * first block's load. */
CRC_TARGET static uint32_t
crc_plain(const uint8_t *p, uint32_t len)
{
	return crc_fold128(p, len, NULL, head_masked(p, len));
}

CRC_TARGET static uint32_t
crc_masked(const uint8_t *p, uint32_t len, const struct droce_crc_mask *mask)
{
	return crc_fold128(p, len, mask, head_masked(p, len));
}

CRC_TARGET_SSE static uint32_t
crc_plain_sse(const uint8_t *p, uint32_t len)
{
	return crc_fold128(p, len, NULL, head_shuffled(p, len));
}

CRC_TARGET_SSE static uint32_t
crc_masked_sse(const uint8_t *p, uint32_t len, const struct droce_crc_mask *mask)
{
	return crc_fold128(p, len, mask, head_shuffled(p, len));
}

static bool
cpu_has(enum rte_cpu_flag_t f)
{
	return rte_cpu_get_flag_enabled(f) > 0;
}

/* Whether the CPU runs @p path. Not an order: a CPU may have VPCLMULQDQ
 * with AVX2 but not AVX-512 (AMD Zen 3), or AVX-512 but not VPCLMULQDQ
 * (Intel's Skylake servers). */
static bool
crc_runs(enum droce_crc_path path)
{
	bool sse = cpu_has(RTE_CPUFLAG_PCLMULQDQ) && cpu_has(RTE_CPUFLAG_SSSE3) &&
		   cpu_has(RTE_CPUFLAG_SSE4_1);
	bool avx512 = sse && cpu_has(RTE_CPUFLAG_AVX512BW) && cpu_has(RTE_CPUFLAG_AVX512VL);

	switch (path) {
	case DROCE_CRC_LIB:
		return true;
	case DROCE_CRC_SSE:
		return sse;
	case DROCE_CRC_AVX2:
		return sse && cpu_has(RTE_CPUFLAG_AVX2) && cpu_has(RTE_CPUFLAG_VPCLMULQDQ);
	case DROCE_CRC_AVX512:
		return avx512;
	case DROCE_CRC_VPCLMUL:
		return avx512 && cpu_has(RTE_CPUFLAG_AVX512F) && cpu_has(RTE_CPUFLAG_AVX512VBMI) &&
		       cpu_has(RTE_CPUFLAG_VPCLMULQDQ);
	}
	return false;
}

/* The fastest path the CPU runs: the paths are declared slowest first. */
static enum droce_crc_path
crc_best(void)
{
	int path;

	for (path = DROCE_CRC_VPCLMUL; path > DROCE_CRC_LIB; path--)
		if (crc_runs((enum droce_crc_path)path))
			break;
	return (enum droce_crc_path)path;
}
#else
static bool
crc_runs(enum droce_crc_path path)
{
	return path == DROCE_CRC_LIB;
}

static enum droce_crc_path
crc_best(void)
{
	return DROCE_CRC_LIB;
}
#endif

static enum droce_crc_path crc_path;

enum droce_crc_path
droce_crc32_init(void)
{
	crc_path = crc_best();
	return crc_path;
}

int
droce_crc32_path_set(enum droce_crc_path path)
{
	if (!crc_runs(path))
		return -ENOTSUP;
	crc_path = path;
	return 0;
}

enum droce_crc_path
droce_crc32_path(void)
{
	return crc_path;
}

static const char *const crc_path_names[] = {
	[DROCE_CRC_LIB] = "lib", [DROCE_CRC_SSE] = "sse", [DROCE_CRC_AVX2] = "avx2",
	[DROCE_CRC_AVX512] = "avx512", [DROCE_CRC_VPCLMUL] = "vpclmul",
};

const char *
droce_crc32_path_name(enum droce_crc_path path)
{
	return (unsigned)path < RTE_DIM(crc_path_names) ? crc_path_names[path] : NULL;
}

int
droce_crc32_path_by_name(const char *name)
{
	unsigned i;

	for (i = 0; i < RTE_DIM(crc_path_names); i++)
		if (strcmp(name, crc_path_names[i]) == 0)
			return (int)i;
	return -EINVAL;
}

#ifdef RTE_ARCH_X86
/*
 * The CRC of a run of @p len >= 16 bytes with @p mask ORed into its first
 * bytes (none when NULL) on the paths that fold every length themselves
 * (all but DROCE_CRC_VPCLMUL and DROCE_CRC_LIB). The mask's NULL is seen
 * where each caller inlines this, so each gets the instances it needs.
 */
static __rte_always_inline uint32_t
crc_folded(const uint8_t *p, uint32_t len, const struct droce_crc_mask *mask)
{
	if (crc_path == DROCE_CRC_AVX512)
		return mask == NULL ? crc_plain(p, len) : crc_masked(p, len, mask);
	if (crc_path == DROCE_CRC_AVX2 && len >= CRC256_MIN)
		return crc_long256(p, len, mask);
	return mask == NULL ? crc_plain_sse(p, len) : crc_masked_sse(p, len, mask);
}
#endif

uint32_t
droce_crc32(const void *p, uint32_t len)
{
#ifdef RTE_ARCH_X86
	if (crc_path == DROCE_CRC_VPCLMUL) {
		if (len >= 16 && len < SHORT_MAX)
			return len >= CRC512_MIN ? crc_short512(p, len, NULL) : crc_plain(p, len);
	} else if (crc_path != DROCE_CRC_LIB && len >= 16) {
		return crc_folded(p, len, NULL);
	}
#endif
	return rte_net_crc_calc(p, len, RTE_NET_CRC32_ETH);
}

bool
droce_copy_crc32(void *dst, const void *src, uint32_t n, uint32_t *crc)
{
#ifdef RTE_ARCH_X86
	uintptr_t d = (uintptr_t)dst, s = (uintptr_t)src;

	/* Runs that overlap keep droce_copy()'s memmove() order. */
	if (n < DROCE_COPY_CRC_MIN || d - s < n || s - d < n)
		return false;
	if (crc_path == DROCE_CRC_VPCLMUL) {
		*crc = copy_crc512(dst, src, n, *crc);
		return true;
	}
	if (crc_path == DROCE_CRC_AVX2) {
		*crc = copy_crc256(dst, src, n, *crc);
		return true;
	}
#else
	RTE_SET_USED(dst);
	RTE_SET_USED(src);
	RTE_SET_USED(n);
	RTE_SET_USED(crc);
#endif
	return false;
}

uint32_t
droce_crc32_beside(const void *p, uint32_t len, struct droce_side_copy *side)
{
	/* Without a mask nothing is written. */
	return droce_crc32_beside_masked((void *)(uintptr_t)p, len, NULL, side);
}

uint32_t
droce_crc32_beside_masked(void *p, uint32_t len, const struct droce_crc_mask *mask,
			  struct droce_side_copy *side)
{
	struct droce_side_copy none = { .n = 0 };
	uint8_t saved[DROCE_CRC_MASK_LEN], *b = p;
	uint32_t crc, i;

	if (side == NULL)
		side = &none;
#ifdef RTE_ARCH_X86
	if (crc_path == DROCE_CRC_VPCLMUL && len >= DROCE_COPY_CRC_MIN) {
		crc = crc_beside512(p, len, mask, side);
		droce_side_copy_run(side);
		return crc;
	}
#endif
	droce_side_copy_run(side);
	if (mask == NULL)
		return droce_crc32(p, len);
	if (len < DROCE_CRC_MASKED_MAX)
		return droce_crc32_masked(p, len, mask);
#ifdef RTE_ARCH_X86
	if (crc_path != DROCE_CRC_LIB)
		return crc_folded(p, len, mask);
#endif
	/* A long run on rte_net_crc, which takes no mask: the bytes are
	 * masked in place for its call, and put back. */
	memcpy(saved, b, sizeof(saved));
	for (i = 0; i < sizeof(saved); i++)
		b[i] |= mask->b[16 + i];
	crc = droce_crc32(b, len);
	memcpy(b, saved, sizeof(saved));
	return crc;
}

bool
droce_crc32_masked4_wide(void)
{
	return crc_path == DROCE_CRC_VPCLMUL || crc_path == DROCE_CRC_AVX2;
}

void
droce_crc32_masked4(const uint8_t *const p[4], uint32_t len, const struct droce_crc_mask *mask,
		    uint32_t crc[4])
{
	unsigned i;

#ifdef RTE_ARCH_X86
	if (crc_path == DROCE_CRC_VPCLMUL && len >= 16 && len < DROCE_CRC_MASKED_MAX) {
		crc_masked4(p, len, mask, crc);
		return;
	}
	if (crc_path == DROCE_CRC_AVX2 && len >= 16 && len < DROCE_CRC_MASKED_MAX) {
		crc_masked4_256(p, len, mask, crc);
		return;
	}
#endif
	for (i = 0; i < 4; i++)
		crc[i] = droce_crc32_masked(p[i], len, mask);
}

uint32_t
droce_crc32_masked(const void *p, uint32_t len, const struct droce_crc_mask *mask)
{
	uint8_t copy[DROCE_CRC_MASKED_MAX];
	uint32_t i;

	RTE_ASSERT(len < DROCE_CRC_MASKED_MAX);
#ifdef RTE_ARCH_X86
	if (crc_path == DROCE_CRC_VPCLMUL && len >= 16)
		return len >= CRC512_MIN ? crc_short512(p, len, mask) : crc_masked(p, len, mask);
	if (crc_path != DROCE_CRC_LIB && len >= 16)
		return crc_folded(p, len, mask);
#endif
	/* Without the short path: the ICRC's view in a copy. */
	memcpy(copy, p, len);
	for (i = 0; i < RTE_MIN(len, (uint32_t)DROCE_CRC_MASK_LEN); i++)
		copy[i] |= mask->b[16 + i];
	return rte_net_crc_calc(copy, len, RTE_NET_CRC32_ETH);
}
