/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * droce_crc32()'s cycles per call on each CRC path this CPU runs
 * (enum droce_crc_path), beside rte_net_crc_calc()'s own SSE4.2 and
 * AVX-512 paths, for runs from a small frame's to a jumbo frame's: what a
 * CPU without a faster path's instructions pays for each byte it sends and
 * receives. Each figure is the lowest of many runs, the run's data in L1.
 * Two per length: calls one after another that do not wait for each other
 * (the bytes a core can fold per cycle), and calls that each wait for the
 * last one's result (the time from data to result, which a frame's check
 * waits for).
 *
 * Usage: crc_bench [-r RUNS]
 * Prints a markdown table: cycles per call, independent / dependent.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_cpuflags.h>
#include <rte_cycles.h>
#include <rte_net_crc.h>
#include <rte_vect.h>

#include "droce_wire.h"

#define CALLS 8        /* per timed run */
#define MAX_LEN 9000

static const uint32_t lens[] = { 64, 128, 256, 512, 1024, 4096, MAX_LEN };

/* The lowest of @p runs runs, cycles per call: calls that do not wait
 * for each other, or (@p dep) each with the last one's result in the
 * first bytes of its run. */
static uint64_t
time_crc(uint8_t *buf, uint32_t len, unsigned runs, bool dep)
{
	uint64_t best = UINT64_MAX, t;
	volatile uint32_t sink = 0;
	uint32_t crc = 0;

	for (unsigned r = 0; r < runs; r++) {
		t = rte_rdtsc_precise();
		for (unsigned k = 0; k < CALLS; k++) {
			if (dep)
				memcpy(buf, &crc, sizeof(crc));
			crc ^= droce_crc32(buf, len);
		}
		t = rte_rdtsc_precise() - t;
		best = RTE_MIN(best, t);
	}
	sink = crc;
	RTE_SET_USED(sink);
	return best / CALLS;
}

static void
row(const char *name, uint8_t *buf, unsigned runs)
{
	printf("| %s |", name);
	for (unsigned i = 0; i < RTE_DIM(lens); i++)
		printf(" %" PRIu64 " / %" PRIu64 " |", time_crc(buf, lens[i], runs, false),
		       time_crc(buf, lens[i], runs, true));
	printf(" %.3f |\n", (double)time_crc(buf, 4096, runs, false) / 4096);
}

int
main(int argc, char **argv)
{
	static uint8_t buf[MAX_LEN] __rte_aligned(64);
	unsigned runs = 2000;
	char name[64];
	int opt;

	while ((opt = getopt(argc, argv, "r:")) != -1) {
		switch (opt) {
		case 'r': runs = (unsigned)atoi(optarg); break;
		default:
			fprintf(stderr, "usage: crc_bench [-r RUNS]\n");
			return 2;
		}
	}
	for (unsigned i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 131 + 7);
	/* What droce_icrc_init() does: the fastest rte_net_crc path too. */
	droce_icrc_init();
	printf("| path |");
	for (unsigned i = 0; i < RTE_DIM(lens); i++)
		printf(" %u B |", lens[i]);
	printf(" cycles/B at 4096, independent |\n|---|");
	for (unsigned i = 0; i <= RTE_DIM(lens); i++)
		printf("---|");
	printf("\n");
	/* rte_net_crc's own paths, under droce's LIB path. */
	droce_crc32_path_set(DROCE_CRC_LIB);
	if (rte_cpu_get_flag_enabled(RTE_CPUFLAG_PCLMULQDQ) > 0) {
		rte_net_crc_set_alg(RTE_NET_CRC_SSE42);
		row("rte_net_crc SSE4.2", buf, runs);
	}
	if (rte_cpu_get_flag_enabled(RTE_CPUFLAG_AVX512F) > 0 &&
	    rte_cpu_get_flag_enabled(RTE_CPUFLAG_VPCLMULQDQ) > 0 &&
	    rte_vect_get_max_simd_bitwidth() >= RTE_VECT_SIMD_512) {
		rte_net_crc_set_alg(RTE_NET_CRC_AVX512);
		row("rte_net_crc AVX-512", buf, runs);
	}
	droce_icrc_init();
	for (int path = DROCE_CRC_SSE; path <= DROCE_CRC_VPCLMUL; path++) {
		if (droce_crc32_path_set((enum droce_crc_path)path) != 0)
			continue;
		snprintf(name, sizeof(name), "droce %s",
			 droce_crc32_path_name((enum droce_crc_path)path));
		row(name, buf, runs);
	}
	return 0;
}
