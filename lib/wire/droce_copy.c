/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The one copy of a payload between a frame and memory.
 *
 * glibc's memmove() moves runs of more than 2 KiB with `rep movsb`. On
 * AMD Zen 4 (and, by reports, Zen 3) that instruction falls off a cliff
 * when the destination lies 1-15 bytes past the source modulo 4096 (the
 * loads then seem to wait on the stores just made to the same offsets in
 * the page): a 4 KiB copy takes some 3000 cycles instead of 180-250, and
 * it is slower than usual up to some 60 bytes past
 * (`tests/bench/copy_bench`; docs/benchmarks.md, "A copy's distance").
 * Where a frame's payload and an application's buffer fall is nobody's
 * choice, so about one copy in 300 between them would land there, and
 * with the mempool handing the same few mbufs back, a workload can land
 * there on every frame. Such copies take a loop of unaligned 32-byte
 * moves instead, which runs at 250 cycles at any distance; all others
 * stay with memmove(), whose `rep movsb` is faster than the loop in the
 * engine (engine_bench, 4 KiB WRITEs: 455-490 cycles per message against
 * 520-560 with the loop for every copy).
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rte_cpuflags.h>

#include "droce_wire.h"

#ifdef RTE_ARCH_X86
#include <immintrin.h>

/* The distances modulo a page at which the loop copies: 1..COPY_NEAR. */
#define COPY_PAGE_MASK 4095u
#define COPY_NEAR 63u

static bool copy_vec;

/* @p n >= DROCE_COPY_VEC_MIN bytes, the two runs apart: 128 bytes per
 * step, then 32, then the last 32 (overlapping what the steps wrote). */
__attribute__((target("avx2"))) static void
copy_avx2(uint8_t *d, const uint8_t *s, size_t n)
{
	__m256i tail = _mm256_loadu_si256((const __m256i *)(s + n - 32));
	size_t i;

	for (i = 0; i + 128 <= n; i += 128) {
		__m256i a = _mm256_loadu_si256((const __m256i *)(s + i));
		__m256i b = _mm256_loadu_si256((const __m256i *)(s + i + 32));
		__m256i c = _mm256_loadu_si256((const __m256i *)(s + i + 64));
		__m256i e = _mm256_loadu_si256((const __m256i *)(s + i + 96));

		_mm256_storeu_si256((__m256i *)(d + i), a);
		_mm256_storeu_si256((__m256i *)(d + i + 32), b);
		_mm256_storeu_si256((__m256i *)(d + i + 64), c);
		_mm256_storeu_si256((__m256i *)(d + i + 96), e);
	}
	for (; i + 32 <= n; i += 32)
		_mm256_storeu_si256((__m256i *)(d + i),
				    _mm256_loadu_si256((const __m256i *)(s + i)));
	_mm256_storeu_si256((__m256i *)(d + n - 32), tail);
}

bool
droce_copy_init(void)
{
	copy_vec = rte_cpu_get_flag_enabled(RTE_CPUFLAG_AVX2) > 0;
	return copy_vec;
}

void
droce_copy_long(void *dst, const void *src, size_t n)
{
	uintptr_t d = (uintptr_t)dst, s = (uintptr_t)src;

	/* Runs that overlap (a looped-back zero-copy frame may point into
	 * the region it is copied to) keep memmove()'s order. */
	if (copy_vec && ((d - s) & COPY_PAGE_MASK) - 1 < COPY_NEAR && d - s >= n && s - d >= n)
		copy_avx2(dst, src, n);
	else
		memmove(dst, src, n);
}
#else
bool
droce_copy_init(void)
{
	return false;
}

void
droce_copy_long(void *dst, const void *src, size_t n)
{
	memmove(dst, src, n);
}
#endif
