/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * DCQCN's reaction point and the pacer it drives: the congestion control
 * of a RoCE requester (Zhu et al., "Congestion Control for Large-Scale
 * RDMA Deployments", SIGCOMM 2015), as RoCE NICs ship it.
 *
 * A QP sends at its current rate R_C. A CNP from the peer (the peer saw
 * a CE mark on one of the QP's packets) remembers R_C as the target R_T,
 * cuts R_C by alpha/2 and raises alpha, the QP's estimate of how
 * congested the path is: alpha = (1 - g) alpha + g. Alpha decays,
 * alpha = (1 - g) alpha, for every alpha period without a CNP. The rate
 * grows again in stages, each counted by a timer (every rate_timer) and
 * by a byte counter (every byte_counter bytes sent): while both counts
 * are at most F, fast recovery halves the distance to R_T; once one is
 * past F, additive increase raises R_T by R_AI first; once both are,
 * hyper-additive increase raises it by i * R_HAI (i: stages past F).
 *
 * The pacer is a token bucket filled at R_C. The engine asks it before
 * each data frame of the QP; a QP without tokens waits (its frames stay
 * in order, nothing spins). Everything here runs on the QP's engine, so
 * nothing is atomic; the arithmetic is integer (rates in bytes per
 * second, alpha in 1/65536, tokens in 1/2^32 bytes) and free of division
 * except where a rate changes.
 */
#ifndef DROCE_DCQCN_H
#define DROCE_DCQCN_H

#include <stdbool.h>
#include <stdint.h>

#include "droce_port.h" /* struct droce_dcqcn_conf */

#ifdef __cplusplus
extern "C" {
#endif

/** The parameters in the units the engine counts in (TSC, bytes/s). */
struct droce_dcqcn_params {
	uint64_t line_rate, min_rate, rai, rhai; /**< bytes per second */
	uint64_t rate_timer_tsc, alpha_timer_tsc;
	uint64_t byte_counter;
	uint64_t burst;
	uint64_t tsc_hz;
	uint8_t g_shift;
	uint8_t fast_recovery;
};

/**
 * Convert @p c for a TSC of @p tsc_hz, on a port whose link runs at
 * @p link_mbps (used when c->line_rate_mbps is 0; 0 when the ethdev does
 * not say: then 10 Gb/s). @p c must pass the check.
 */
void droce_dcqcn_params_init(struct droce_dcqcn_params *p, const struct droce_dcqcn_conf *c,
			     uint32_t link_mbps, uint64_t tsc_hz);

/** One alpha in this fixed point is 1.0. */
#define DROCE_DCQCN_ALPHA_ONE (1u << 16)

/** What one QP's reaction point did. Every field only grows. */
struct droce_dcqcn_stats {
	uint64_t cnps;            /**< CNPs received */
	uint64_t decreases;       /**< rate cuts */
	uint64_t fast_recoveries; /**< increase stages in fast recovery */
	uint64_t additive;        /**< ... in additive increase */
	uint64_t hyper;           /**< ... in hyper-additive increase */
	uint64_t paced;           /**< times a frame had to wait for tokens */
};

/** One QP's reaction point and pacer. */
struct droce_dcqcn {
	uint64_t rc, rt;          /**< current and target rate, bytes/s */
	uint64_t rc_min;          /**< the lowest R_C since droce_dcqcn_init() */
	uint32_t alpha;           /**< congestion estimate, DROCE_DCQCN_ALPHA_ONE = 1 */
	uint32_t t_stage;         /**< timer stages since the last cut */
	uint32_t bc_stage;        /**< byte-counter stages since the last cut */
	bool cnp_in_period;       /**< a CNP came in this alpha period */
	uint64_t bytes;           /**< bytes sent in this byte-counter stage */
	uint64_t rate_timer_at;   /**< TSC of the next timer stage */
	uint64_t alpha_timer_at;  /**< TSC of the next alpha update */
	/* the pacer */
	int64_t tokens;           /**< bytes << 32; a frame may take it below 0 */
	uint64_t tokens_max;      /**< the bucket, bytes << 32 */
	uint64_t per_tsc;         /**< R_C in bytes << 32 per TSC tick */
	uint64_t refill_cap;      /**< ticks that fill an empty bucket: no overflow past it */
	uint64_t refilled_at;     /**< TSC of the last refill */
	struct droce_dcqcn_stats stats;
};

/** Increase stages of every kind @p d went through. */
static inline uint64_t
droce_dcqcn_increases(const struct droce_dcqcn *d)
{
	return d->stats.fast_recoveries + d->stats.additive + d->stats.hyper;
}

/** Start a QP at line rate with alpha 1 (the paper's initial value). */
void droce_dcqcn_init(struct droce_dcqcn *d, const struct droce_dcqcn_params *p, uint64_t now);

/** A CNP for the QP arrived: cut the rate. */
void droce_dcqcn_on_cnp(struct droce_dcqcn *d, const struct droce_dcqcn_params *p, uint64_t now);

/**
 * Run the timers that are due at @p now: alpha updates and rate-timer
 * stages. Cheap when none is.
 */
void droce_dcqcn_tick(struct droce_dcqcn *d, const struct droce_dcqcn_params *p, uint64_t now);

/**
 * May the QP send a frame of @p bytes at @p now? Yes when its tokens are
 * not negative: the frame takes them (whatever its size: the debt is
 * paid before the next frame) and counts towards the byte counter, which
 * may raise the rate. No leaves everything as it was, to be asked again.
 */
bool droce_dcqcn_may_send(struct droce_dcqcn *d, const struct droce_dcqcn_params *p,
			  uint32_t bytes, uint64_t now);

#ifdef __cplusplus
}
#endif
#endif /* DROCE_DCQCN_H */
