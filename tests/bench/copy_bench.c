/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A payload copy's cycles by where its destination lies from its source:
 * memmove() (glibc's) and droce_copy(), for each distance modulo a page
 * from 0 to 4095 (-a) or to 80, the lowest of many runs. On AMD Zen 4
 * glibc's `rep movsb` takes some 15 times as long when the destination
 * lies 1-15 bytes past the source modulo 4096 (lib/wire/droce_copy.c).
 *
 * Usage: copy_bench [-n LEN] [-a]
 *   LEN bytes per copy (default 4096); -a every distance modulo a page,
 *   printing only the slow ones (over twice the median), else 0..80.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_cycles.h>

#include "droce_wire.h"

#define PAGE 4096
#define COPIES 8     /* per timed run, each in its own 8 KiB */
#define RUNS 300

typedef void (*copy_fn)(void *, const void *, size_t);

static void
copy_memmove(void *d, const void *s, size_t n)
{
	memmove(d, s, n);
}

/* The lowest of RUNS runs, cycles per copy. */
static uint64_t
time_copy(copy_fn f, uint8_t *dst, const uint8_t *src, size_t n)
{
	uint64_t best = UINT64_MAX, t;

	for (unsigned r = 0; r < RUNS; r++) {
		t = rte_rdtsc();
		for (unsigned k = 0; k < COPIES; k++)
			f(dst + k * 2 * PAGE, src + k * 2 * PAGE, n);
		t = rte_rdtsc() - t;
		best = RTE_MIN(best, t);
	}
	return best / COPIES;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int
main(int argc, char **argv)
{
	static const copy_fn fns[] = { copy_memmove, droce_copy };
	static const char *const names[] = { "memmove", "droce_copy" };
	size_t n = PAGE, size = COPIES * 2 * PAGE + 2 * PAGE;
	unsigned last = 80, dist;
	bool all = false;
	uint64_t *c[2], sorted[PAGE];
	uint8_t *src, *dst;
	int opt;

	while ((opt = getopt(argc, argv, "n:a")) != -1) {
		switch (opt) {
		case 'n': n = (size_t)atoi(optarg); break;
		case 'a': all = true; last = PAGE - 1; break;
		default:
			fprintf(stderr, "usage: copy_bench [-n LEN] [-a]\n");
			return 2;
		}
	}
	if (n < 1 || n > PAGE) {
		fprintf(stderr, "copy_bench: -n 1..%u\n", PAGE);
		return 2;
	}
	src = aligned_alloc(PAGE, size);
	dst = aligned_alloc(PAGE, size);
	c[0] = calloc(PAGE, sizeof(uint64_t));
	c[1] = calloc(PAGE, sizeof(uint64_t));
	if (src == NULL || dst == NULL || c[0] == NULL || c[1] == NULL)
		return 1;
	memset(src, 1, size);
	memset(dst, 2, size);
	printf("copy_bench: %zu B, loop %s; cycles per copy by the destination's distance "
	       "past the source modulo %u\n", n, droce_copy_init() ? "on (AVX2)" : "off", PAGE);
	for (dist = 0; dist <= last; dist++)
		for (unsigned f = 0; f < 2; f++)
			c[f][dist] = time_copy(fns[f], dst + dist, src, n);
	for (unsigned f = 0; f < 2; f++) {
		uint64_t median, worst = 0;

		memcpy(sorted, c[f], (last + 1) * sizeof(uint64_t));
		qsort(sorted, last + 1, sizeof(uint64_t), cmp_u64);
		median = sorted[last / 2];
		for (dist = 0; dist <= last; dist++)
			worst = RTE_MAX(worst, c[f][dist]);
		printf("  %-10s median %5" PRIu64 "  worst %5" PRIu64 "  distances over twice the "
		       "median:", names[f], median, worst);
		for (dist = 0; dist <= last; dist++)
			if (c[f][dist] > 2 * median)
				printf(" %u", dist);
		printf("\n");
	}
	if (!all)
		for (dist = 0; dist <= last; dist++)
			printf("  %4u  %5" PRIu64 "  %5" PRIu64 "\n", dist, c[0][dist], c[1][dist]);
	free(c[0]);
	free(c[1]);
	free(src);
	free(dst);
	return 0;
}
