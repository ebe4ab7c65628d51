/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * droce_copy(): memmove()'s result for every length around the vector
 * loop's threshold and its steps, at every alignment of source and
 * destination, and for runs that overlap either way; not a byte outside
 * the destination written: on the path the CPU takes (the loop where it
 * has AVX2), which is the one droce_copy_init() reports.
 * droce_copy_small(): memmove()'s result for every length it takes, at
 * every place in a line, apart and overlapping either way by every
 * distance up to its longest run, not a byte outside written.
 * droce_copy_crc32(): the same copy and zlib's CRC of it, continued from
 * any CRC, for every length mod 64 at every place in a cache line, where
 * the CPU runs it;
 * nothing touched where it declines.
 * droce_crc32_beside(): zlib's CRC of one run and memcpy()'s bytes of the
 * other, the copy shorter, as long as, or longer than the CRC's run, or
 * none, on every CRC path.
 * droce_crc32_beside_masked(): the same with a mask on the run's first 64
 * bytes (zlib's CRC of a masked copy), the run left as it was, at every
 * place in a line against every length mod 64, on every CRC path.
 */
#include <string.h>
#include <zlib.h>

#include <rte_cpuflags.h>

#include "wire_test.h"

#define PAGE 4096
#define AREA (4 * PAGE)
#define GUARD 0x5a

static uint8_t src_area[AREA] __rte_aligned(PAGE), dst_area[AREA] __rte_aligned(PAGE);
static uint8_t want[AREA];

/* Lengths: short, each side of the threshold, of the loop's 128- and
 * 32-byte steps, a frame's payload at MTU 4096. */
static const size_t lens[] = {
	0, 1, 31, 32, 33, 255, DROCE_COPY_VEC_MIN - 1, DROCE_COPY_VEC_MIN,
	DROCE_COPY_VEC_MIN + 1, DROCE_COPY_VEC_MIN + 31, DROCE_COPY_VEC_MIN + 32,
	DROCE_COPY_VEC_MIN + 127, DROCE_COPY_VEC_MIN + 129, 2047, 2048, 4042, 4096, 4099,
};

static void
fill(uint8_t *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 131 + seed * 7 + (i >> 8));
}

/* Every length, the source at offsets 0..63 into a page, the destination
 * 0..70 bytes past it modulo a page (where the loop copies from 1 on) and
 * a few before it. */
static void
check_apart(void)
{
	static const unsigned before[] = { PAGE - 1, PAGE - 6, PAGE - 64 };

	fill(src_area, AREA, 1);
	for (unsigned l = 0; l < RTE_DIM(lens); l++)
		for (unsigned so = 0; so < 64; so += 7)
			for (unsigned d = 0; d < 71 + RTE_DIM(before); d++) {
				size_t n = lens[l], dist = d < 71 ? d : before[d - 71];
				size_t at = PAGE + so + dist;

				memset(dst_area, GUARD, AREA);
				memset(want, GUARD, AREA);
				memcpy(want + at, src_area + so, n);
				droce_copy(dst_area + at, src_area + so, n);
				ck_assert_msg(memcmp(dst_area, want, AREA) == 0,
					      "len %zu src +%u distance %zu", n, so, dist);
			}
}

/* Source and destination in one buffer, the destination @p shift bytes
 * after (or before, negative) the source. */
static void
check_overlap(ptrdiff_t shift)
{
	for (unsigned l = 0; l < RTE_DIM(lens); l++) {
		size_t n = lens[l], at = PAGE;

		fill(dst_area, AREA, 2);
		memcpy(want, dst_area, AREA);
		memmove(want + at + shift, want + at, n);
		droce_copy(dst_area + at + shift, dst_area + at, n);
		ck_assert_msg(memcmp(dst_area, want, AREA) == 0, "len %zu shift %td", n, shift);
	}
}

static void
check_all(void)
{
	static const ptrdiff_t shifts[] = { 0, 1, 6, 31, 32, 64, 1000, -1, -6, -32, -1000 };

	check_apart();
	for (unsigned i = 0; i < RTE_DIM(shifts); i++)
		check_overlap(shifts[i]);
}

START_TEST(copy_loop)
{
	droce_copy_init();
	check_all();
}
END_TEST

START_TEST(copy_loop_chosen)
{
	/* The loop is taken exactly where the CPU runs it. */
#ifdef RTE_ARCH_X86
	ck_assert(droce_copy_init() == (rte_cpu_get_flag_enabled(RTE_CPUFLAG_AVX2) > 0));
#else
	ck_assert(!droce_copy_init());
#endif
}
END_TEST

START_TEST(copy_small)
{
	for (uint32_t n = 0; n <= DROCE_COPY_SMALL_MAX; n++)
		for (unsigned so = 0; so < 64; so += 5)
			for (int shift = -DROCE_COPY_SMALL_MAX - 3; shift <= DROCE_COPY_SMALL_MAX + 3;
			     shift++) {
				size_t at = PAGE + so;

				/* Apart: the destination in the other area. */
				fill(src_area, AREA, n);
				memset(dst_area, GUARD, AREA);
				memset(want, GUARD, AREA);
				memcpy(want + at + shift, src_area + at, n);
				droce_copy_small(dst_area + at + shift, src_area + at, n);
				ck_assert_msg(memcmp(dst_area, want, AREA) == 0,
					      "apart: len %u src +%u shift %d", n, so, shift);
				/* Overlapping (or not) in one area. */
				fill(dst_area, AREA, n + 1);
				memcpy(want, dst_area, AREA);
				memmove(want + at + shift, want + at, n);
				droce_copy_small(dst_area + at + shift, dst_area + at, n);
				ck_assert_msg(memcmp(dst_area, want, AREA) == 0,
					      "overlap: len %u src +%u shift %d", n, so, shift);
			}
}
END_TEST

/* droce_copy_crc32() of @p n bytes from src + @p so to a distance @p dist
 * past it, continued from @p prev: memcpy()'s bytes and zlib's CRC. */
static void
check_copy_crc(size_t n, unsigned so, size_t dist, uint32_t prev)
{
	size_t at = PAGE + so + dist;
	uint32_t crc = prev;

	memset(dst_area, GUARD, AREA);
	memset(want, GUARD, AREA);
	memcpy(want + at, src_area + so, n);
	ck_assert_msg(droce_copy_crc32(dst_area + at, src_area + so, (uint32_t)n, &crc),
		      "len %zu declined", n);
	ck_assert_msg(memcmp(dst_area, want, AREA) == 0, "len %zu src +%u distance %zu", n, so,
		      dist);
	ck_assert_msg(crc == (uint32_t)crc32(prev, src_area + so, (uInt)n),
		      "len %zu src +%u prev %08x: crc %08x", n, so, prev, crc);
}

/* droce_copy_crc32() on @p path: fused where it has VPCLMULQDQ, declined
 * elsewhere. */
static void
copy_crc_on(enum droce_crc_path path)
{
	static const uint32_t prevs[] = { 0, 0xffffffff, 0x12345678 };
	uint32_t crc = 7;

	if (path != DROCE_CRC_VPCLMUL && path != DROCE_CRC_AVX2) {
		/* Declined, touching nothing: the caller copies and computes. */
		memset(dst_area, GUARD, AREA);
		ck_assert(!droce_copy_crc32(dst_area, src_area, 4096, &crc));
		ck_assert_uint_eq(crc, 7);
		ck_assert_uint_eq(dst_area[0], GUARD);
		return;
	}
	fill(src_area, AREA, 3);
	/* Every length mod 64 from the threshold, a frame's payloads. */
	for (size_t n = DROCE_COPY_CRC_MIN; n < DROCE_COPY_CRC_MIN + 130; n++)
		check_copy_crc(n, (unsigned)(n % 61), n % 67, prevs[n % 3]);
	/* Every place in a line against every length mod 64: the 512-bit
	 * path's blocks follow the lines, the bytes after the last whole one
	 * moved in; the 256-bit path's follow the length, the register's
	 * bytes moved across its first two blocks. */
	for (unsigned so = 0; so < 64; so++)
		for (size_t n = DROCE_COPY_CRC_MIN; n < DROCE_COPY_CRC_MIN + 64; n++)
			check_copy_crc(n + 64 * (so % 3), so, 64 + n % 5, prevs[(so + n) % 3]);
	for (unsigned i = 0; i < 3; i++)
		for (unsigned so = 0; so < 64; so += 9) {
			check_copy_crc(4096, so, 4096 - so, prevs[i]);
			check_copy_crc(4042, so, 6, prevs[i]);
			check_copy_crc(1279 + 256 * i, so, 64 + so, prevs[i]);
			check_copy_crc(3 * 1024 + 255, so, 1, prevs[i]);
		}
	/* Too short, or overlapping: declined, nothing touched. */
	fill(dst_area, AREA, 4);
	memcpy(want, dst_area, AREA);
	ck_assert(!droce_copy_crc32(dst_area, src_area, DROCE_COPY_CRC_MIN - 1, &crc));
	ck_assert(!droce_copy_crc32(dst_area + 100, dst_area, 4096, &crc));
	ck_assert(!droce_copy_crc32(dst_area, dst_area + 100, 4096, &crc));
	ck_assert_uint_eq(crc, 7);
	ck_assert(memcmp(dst_area, want, AREA) == 0);
}

START_TEST(copy_crc)
{
	for (int path = DROCE_CRC_LIB; path <= DROCE_CRC_VPCLMUL; path++)
		if (droce_crc32_path_set((enum droce_crc_path)path) == 0)
			copy_crc_on((enum droce_crc_path)path);
	droce_crc32_init();
}
END_TEST

/* droce_crc32_beside() of @p len bytes at src + @p so, with a copy of
 * @p n bytes from src + @p cs to dst + @p cd beside it. */
static void
check_beside(uint32_t len, unsigned so, uint32_t n, unsigned cs, unsigned cd)
{
	struct droce_side_copy side = {
		.dst = dst_area + cd, .src = src_area + cs, .n = n,
	};
	uint32_t crc;

	memset(dst_area, GUARD, AREA);
	memset(want, GUARD, AREA);
	memcpy(want + cd, src_area + cs, n);
	crc = droce_crc32_beside(src_area + so, len, &side);
	ck_assert_msg(crc == (uint32_t)crc32(0, src_area + so, len),
		      "len %u +%u beside %u: crc %08x", len, so, n, crc);
	ck_assert_msg(memcmp(dst_area, want, AREA) == 0, "len %u beside %u from +%u to +%u", len,
		      n, cs, cd);
	ck_assert_uint_eq(side.n, 0);
}

/* droce_crc32_beside() of @p len bytes at src + @p so with no copy: none
 * given, or an empty one whose buffers are NULL (the engine's, before its
 * first payload). Under UBSan this also holds that nothing offsets them. */
static void
check_beside_none(uint32_t len, unsigned so)
{
	struct droce_side_copy empty = { .dst = NULL, .src = NULL, .n = 0 };
	uint32_t want_crc = (uint32_t)crc32(0, src_area + so, len);

	ck_assert_uint_eq(droce_crc32_beside(src_area + so, len, NULL), want_crc);
	ck_assert_uint_eq(droce_crc32_beside(src_area + so, len, &empty), want_crc);
	ck_assert_uint_eq(empty.n, 0);
}

START_TEST(crc_beside)
{
	static const enum droce_crc_path paths[] = {
		DROCE_CRC_VPCLMUL, DROCE_CRC_AVX512, DROCE_CRC_AVX2, DROCE_CRC_SSE, DROCE_CRC_LIB,
	};

	fill(src_area, AREA, 5);
	for (unsigned p = 0; p < RTE_DIM(paths); p++) {
		if (droce_crc32_path_set(paths[p]) != 0)
			continue;
		/* Every length mod 64 around the fused path's threshold. */
		for (uint32_t len = DROCE_COPY_CRC_MIN - 70; len < DROCE_COPY_CRC_MIN + 130; len++)
			check_beside(len, len % 59, 4096 - len % 200, 2 * PAGE + len % 64,
				     len % 61);
		/* Every place in a line against every length mod 64. */
		for (unsigned so = 0; so < 64; so++)
			for (uint32_t len = DROCE_COPY_CRC_MIN; len < DROCE_COPY_CRC_MIN + 64; len++)
				check_beside(len + 64 * (so % 3), so, len % 7 * 100, 2 * PAGE + so,
					     len % 64);
		/* A frame's check beside the payload before it, the copy
		 * shorter, as long, longer, or nothing. */
		for (unsigned so = 0; so < 64; so += 13) {
			check_beside(4096 + 58, so, 4096, 2 * PAGE + 6 + so, 0);
			check_beside(4096 + 58, so, 1000, 2 * PAGE + so, 64 - so);
			check_beside(1058, so, 4096, 2 * PAGE + so, so);
			check_beside(1058, so, 1058, 2 * PAGE + so, 1);
			check_beside(300, so, 0, 0, 0);
			check_beside_none(4096 + 58, so);
			check_beside_none(300, so);
		}
	}
	droce_crc32_init();
}
END_TEST

/* droce_crc32_beside_masked() of @p len bytes at src + @p so under
 * @p mask, with a copy of @p n bytes beside it (none: a NULL side). */
static void
check_beside_masked(uint32_t len, unsigned so, const struct droce_crc_mask *mask, uint32_t n)
{
	static uint8_t masked[AREA], before[AREA];
	struct droce_side_copy side = { .dst = dst_area + so, .src = src_area + 2 * PAGE, .n = n };
	uint32_t crc, i;

	memcpy(masked, src_area + so, len);
	for (i = 0; i < len && i < DROCE_CRC_MASK_LEN; i++)
		masked[i] |= mask->b[16 + i];
	memset(dst_area, GUARD, AREA);
	memset(want, GUARD, AREA);
	memcpy(want + so, src_area + 2 * PAGE, n);
	memcpy(before, src_area, AREA);
	crc = droce_crc32_beside_masked(src_area + so, len, mask, n != 0 ? &side : NULL);
	ck_assert_msg(crc == (uint32_t)crc32(0, masked, len), "len %u +%u masked: crc %08x", len,
		      so, crc);
	ck_assert_msg(memcmp(src_area, before, AREA) == 0, "len %u +%u: the run changed", len, so);
	ck_assert_msg(memcmp(dst_area, want, AREA) == 0, "len %u +%u: beside %u", len, so, n);
	ck_assert_uint_eq(side.n, 0);
}

START_TEST(crc_beside_masked)
{
	static const enum droce_crc_path paths[] = {
		DROCE_CRC_VPCLMUL, DROCE_CRC_AVX512, DROCE_CRC_AVX2, DROCE_CRC_SSE, DROCE_CRC_LIB,
	};
	struct droce_crc_mask mask;

	fill(src_area, AREA, 9);
	/* Bits in each of the 64 bytes a mask covers, all of them in some. */
	memset(&mask, 0, sizeof(mask));
	for (unsigned i = 0; i < DROCE_CRC_MASK_LEN; i++)
		droce_crc_mask_set(&mask, i, (uint8_t)(i % 5 == 0 ? 0xff : 1u << (i % 8)));
	for (unsigned p = 0; p < RTE_DIM(paths); p++) {
		if (droce_crc32_path_set(paths[p]) != 0)
			continue;
		/* Every place in a line against every length mod 64, from the
		 * masked short runs' lengths to the fused path's. */
		for (unsigned so = 0; so < 64; so++)
			for (uint32_t len = DROCE_CRC_MASK_LEN; len < DROCE_COPY_CRC_MIN + 64; len += 5)
				check_beside_masked(len + 64 * (so % 3), so, &mask, len % 3 * 700);
		/* A received frame from the LRH's place: both ICRC masks. */
		for (unsigned so = 0; so < 64; so += 3) {
			check_beside_masked(4096 + 52, so, droce_icrc_mask(false), 4096);
			check_beside_masked(4096 + 72, so, droce_icrc_mask(true), 0);
		}
	}
	droce_crc32_init();
}
END_TEST

Suite *
suite_copy(void)
{
	Suite *s = suite_create("copy");
	TCase *tc = tcase_create("copy");

	tcase_add_test(tc, copy_loop);
	tcase_add_test(tc, copy_loop_chosen);
	tcase_add_test(tc, copy_small);
	tcase_add_test(tc, copy_crc);
	tcase_add_test(tc, crc_beside);
	tcase_add_test(tc, crc_beside_masked);
	suite_add_tcase(s, tc);
	return s;
}
