/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A receiver's two passes over a burst of long frames, in cycles per
 * frame: each frame's CRC, then the copy of its payload into a region
 * (what droce did up to the eighteenth session), against each payload's
 * copy made beside the next frame's CRC (droce_crc32_beside(), what the
 * engine's RX loop does now). The frames are 4 KiB payloads behind 58
 * bytes of headers, the region's lines either in the cache or not:
 *
 *   hot    frames just written (as a PMD's copy leaves them), one region
 *          written again and again (a benchmark's buffer)
 *   cold   frames and region evicted from every cache before each burst
 *          (a NIC's DMA into memory, a region nobody touched lately)
 *   mixed  frames just written, the region evicted
 *
 * The mean of many bursts, the two ways alternating; the CRC path is
 * the fastest the CPU runs, or CRC (lib, sse, avx2, avx512 or vpclmul:
 * the copy goes beside the CRC only on the vpclmul path; elsewhere both
 * ways are the same work).
 *
 * Usage: rx_copy_bench [-f FRAMES] [-r RUNS] [-C CRC]
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_cycles.h>

#include "droce_wire.h"

#define PAYLOAD 4096
#define HDRS 58                 /* Ethernet to RETH, as the ICRC sees them less the LRH */
#define FRAME (HDRS + PAYLOAD + 4)
#define EVICT (64u << 20)       /* more than this machine's caches */

enum place { HOT, COLD, MIXED };

static const char *const place_names[] = { "hot", "cold", "mixed" };

struct bench {
	unsigned frames;
	uint8_t *frame;              /* @ref frames of FRAME bytes, each 64-byte aligned + 6 */
	uint8_t *region;             /* @ref frames payloads */
	uint8_t *evict;
	volatile uint32_t sink;
};

static uint8_t *
frame_at(const struct bench *b, unsigned i)
{
	/* A payload 6 bytes into a line, as behind a PMD's headroom. */
	return b->frame + (size_t)i * RTE_ALIGN_CEIL(FRAME + 64, 64) + 6;
}

static void
prepare(struct bench *b, enum place where, unsigned run)
{
	if (where != HOT)
		memset(b->evict, (int)run, EVICT);
	if (where != COLD)
		for (unsigned i = 0; i < b->frames; i++)
			memset(frame_at(b, i), (int)(run + i), FRAME);
}

/* The CRC of each frame, then its payload's copy. */
static uint64_t
two_passes(struct bench *b)
{
	uint64_t t = rte_rdtsc();

	for (unsigned i = 0; i < b->frames; i++) {
		const uint8_t *f = frame_at(b, i);

		b->sink = droce_crc32(f, HDRS + PAYLOAD);
		droce_copy(b->region + (size_t)i * PAYLOAD, f + HDRS, PAYLOAD);
	}
	return rte_rdtsc() - t;
}

/* Each payload's copy beside the next frame's CRC; the last one after. */
static uint64_t
beside(struct bench *b)
{
	struct droce_side_copy side = { .n = 0 };
	uint64_t t = rte_rdtsc();

	for (unsigned i = 0; i < b->frames; i++) {
		const uint8_t *f = frame_at(b, i);

		b->sink = droce_crc32_beside(f, HDRS + PAYLOAD, &side);
		side = (struct droce_side_copy){
			.dst = b->region + (size_t)i * PAYLOAD, .src = f + HDRS, .n = PAYLOAD,
		};
	}
	droce_side_copy_run(&side);
	return rte_rdtsc() - t;
}

int
main(int argc, char **argv)
{
	struct bench b = { .frames = 32 };
	const char *crc = NULL, *rte_path;
	unsigned runs = 2000;
	int opt, path;

	while ((opt = getopt(argc, argv, "f:r:C:")) != -1) {
		switch (opt) {
		case 'f': b.frames = (unsigned)atoi(optarg); break;
		case 'r': runs = (unsigned)atoi(optarg); break;
		case 'C': crc = optarg; break;
		default:
			fprintf(stderr, "usage: rx_copy_bench [-f FRAMES] [-r RUNS] [-C CRC]\n");
			return 2;
		}
	}
	rte_path = droce_icrc_init();
	if (crc != NULL) {
		path = droce_crc32_path_by_name(crc);
		if (path < 0 || droce_crc32_path_set((enum droce_crc_path)path) != 0) {
			fprintf(stderr, "rx_copy_bench: -C lib, sse, avx2, avx512 or vpclmul, "
					"one this CPU runs\n");
			return 2;
		}
	}
	if (b.frames < 1 || b.frames > 256 || runs < 1) {
		fprintf(stderr, "rx_copy_bench: -f 1..256, -r 1 or more\n");
		return 2;
	}
	b.frame = aligned_alloc(64, (size_t)b.frames * RTE_ALIGN_CEIL(FRAME + 64, 64));
	b.region = aligned_alloc(4096, (size_t)b.frames * PAYLOAD);
	b.evict = malloc(EVICT);
	if (b.frame == NULL || b.region == NULL || b.evict == NULL)
		return 1;
	memset(b.region, 0, (size_t)b.frames * PAYLOAD);
	printf("rx_copy_bench: %u frames of %u B payload, CRC path %s (rte_net_crc's %s); "
	       "mean cycles per frame\n", b.frames, PAYLOAD,
	       droce_crc32_path_name(droce_crc32_path()), rte_path);
	for (enum place where = HOT; where <= MIXED; where++) {
		/* Cold runs evict 64 MiB each: fewer of them. */
		unsigned n = where == HOT ? runs : RTE_MAX(runs / 10, 1u);
		uint64_t sum[2] = { 0, 0 };

		for (unsigned r = 0; r < n; r++)
			for (unsigned way = 0; way < 2; way++) {
				/* Alternate which goes first. */
				unsigned w = (r & 1) ^ way;

				prepare(&b, where, r);
				sum[w] += w == 0 ? two_passes(&b) : beside(&b);
			}
		printf("  %-5s  check, then copy %6" PRIu64 "   copy beside the next check %6" PRIu64
		       "\n", place_names[where], sum[0] / n / b.frames, sum[1] / n / b.frames);
	}
	free(b.evict);
	free(b.region);
	free(b.frame);
	return 0;
}
