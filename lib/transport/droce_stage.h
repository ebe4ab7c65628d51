/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Where an engine's busy cycles go, stage by stage (docs/benchmarks.md).
 *
 * Off by default: with DROCE_STAGE_CYCLES set in its environment, an
 * engine reads the TSC at every stage boundary of an iteration (a lap)
 * and charges the cycles since the last lap to the stage that just ended.
 * The laps of an iteration that moved frames are added to the engine's
 * counters, those of idle or preempted iterations are not, as for
 * busy_cycles; the port's burst calls are taken out of the rx and tx
 * stages, so the stages add up to droce's own cycles. The TSC reads cost
 * some cycles of their own, charged to the stages they end.
 */
#ifndef DROCE_STAGE_H
#define DROCE_STAGE_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rte_branch_prediction.h>
#include <rte_cycles.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The stages, in the order of an iteration. */
#define DROCE_STAGES(X)							\
	X(rx)         /* the port's receive and parse, less rte_eth_rx_burst() */ \
	X(icrc)       /* the ICRC check of received frames */		\
	X(validity)   /* QPN lookup and the validity check */		\
	X(responder)  /* request packets, less the payload copy; ACKs owed */ \
	X(copy)       /* payload into memory regions and receive buffers */ \
	X(completion) /* ACKs and responses into completions */	\
	X(requester)  /* WQEs into frames: headers, payload, ICRC; ACKs sent */ \
	X(tx)         /* staging and flushing, less rte_eth_tx_burst() */ \
	X(engine)     /* the rest: kicks, timers, the port's housekeeping */

enum droce_stage {
#define DROCE_STAGE_ENUM(name) DROCE_STAGE_##name,
	DROCE_STAGES(DROCE_STAGE_ENUM)
#undef DROCE_STAGE_ENUM
	DROCE_STAGE_NB
};

/** Cycles per stage, summed over an engine's busy iterations. */
struct droce_stage_cycles {
#define DROCE_STAGE_FIELD(name) uint64_t stage_##name##_cycles;
	DROCE_STAGES(DROCE_STAGE_FIELD)
#undef DROCE_STAGE_FIELD
};

/** An engine's stage clock: this iteration's laps. */
struct droce_stage_clock {
	bool on;                     /**< DROCE_STAGE_CYCLES was set */
	uint64_t last;               /**< TSC of the last lap */
	uint64_t cur[DROCE_STAGE_NB]; /**< this iteration's cycles per stage */
};

/** An iteration starts at @p now. */
static inline void
droce_stage_start(struct droce_stage_clock *c, uint64_t now)
{
	if (likely(!c->on))
		return;
	memset(c->cur, 0, sizeof(c->cur));
	c->last = now;
}

/** Stage @p s ends now: charge it the cycles since the last lap. */
static inline void
droce_stage_lap(struct droce_stage_clock *c, enum droce_stage s)
{
	uint64_t now;

	if (likely(!c->on))
		return;
	now = rte_rdtsc();
	c->cur[s] += now - c->last;
	c->last = now;
}

/**
 * A busy iteration ends (the last lap is taken): add its laps to @p total,
 * less @p rx_burst and @p tx_burst, the port's cycles inside them.
 */
static inline void
droce_stage_commit(struct droce_stage_clock *c, struct droce_stage_cycles *total,
		   uint64_t rx_burst, uint64_t tx_burst)
{
	uint64_t *t = (uint64_t *)total;
	unsigned i;

	if (likely(!c->on))
		return;
	c->cur[DROCE_STAGE_rx] -= RTE_MIN(rx_burst, c->cur[DROCE_STAGE_rx]);
	c->cur[DROCE_STAGE_tx] -= RTE_MIN(tx_burst, c->cur[DROCE_STAGE_tx]);
	for (i = 0; i < DROCE_STAGE_NB; i++)
		t[i] += c->cur[i];
}

#ifdef __cplusplus
}
#endif
#endif /* DROCE_STAGE_H */
