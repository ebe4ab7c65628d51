/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The device clock behind completion timestamps: the TSC, which every
 * engine and poller of the process shares. hca_core_clock is its rate in
 * kHz, completion_timestamp_mask all 64 bits, and ibv_query_rt_values_ex()
 * reads it now (raw_clock.tv_nsec holds the cycles, as mlx5 reports its
 * own clock). Wall-clock timestamps are the TSC mapped onto CLOCK_REALTIME
 * from one reading of both, taken once per process.
 */
#include <errno.h>
#include <pthread.h>
#include <time.h>

#include <rte_cycles.h>

#include "droce_verbs_priv.h"

static pthread_once_t wall_once = PTHREAD_ONCE_INIT;
static uint64_t wall_ns0, wall_tsc0;

static void
wall_calibrate(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	wall_tsc0 = rte_get_tsc_cycles();
	wall_ns0 = (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

uint64_t
droce_clock_khz(void)
{
	return rte_get_tsc_hz() / 1000;
}

uint64_t
droce_clock_wall_ns(uint64_t tsc)
{
	pthread_once(&wall_once, wall_calibrate);
	return wall_ns0 + (uint64_t)((double)(int64_t)(tsc - wall_tsc0) * 1e9 /
				     (double)rte_get_tsc_hz());
}

int
droce_query_rt_values(struct ibv_context *ctx, struct ibv_values_ex *values)
{
	RTE_SET_USED(ctx);
	if (values->comp_mask & ~(uint32_t)IBV_VALUES_MASK_RAW_CLOCK)
		return EINVAL;
	if (values->comp_mask & IBV_VALUES_MASK_RAW_CLOCK) {
		values->raw_clock.tv_sec = 0;
		values->raw_clock.tv_nsec = (long)rte_get_tsc_cycles();
	}
	return 0;
}
