/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Fault injection: a stage a port puts on its receive or transmit path
 * that drops, duplicates, corrupts, delays and reorders frames with given
 * probabilities, to exercise the reliable transport without a bad cable.
 * Its configuration and counters (struct droce_fault_conf, struct
 * droce_fault_stats) are part of the port's API in droce_port.h; this
 * header is lib/port's own.
 *
 * Every decision comes from the stage's own PRNG (splitmix64) seeded from
 * the configuration, so the same seed and the same frames give the same
 * actions on every run. A configuration whose probabilities are all 0 is
 * off, and a stage that is off and empty costs its path one branch.
 *
 * Threads: droce_fault_set() and droce_fault_get() may be called from any
 * thread; they meet the engine through a seqlock the engine reads without
 * waiting. Every other function is for the one thread that runs the path
 * (the port's engine).
 */
#ifndef DROCE_FAULT_H
#define DROCE_FAULT_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_common.h>
#include <rte_mbuf.h>
#include <rte_seqlock.h>

#include "droce_port.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Frames a stage keeps ready to go on (a power of 2). */
#define DROCE_FAULT_READY 512
/** Frames a stage can hold for their delay (a power of 2); more go on at once. */
#define DROCE_FAULT_DELAYED 256
/** Longest a reordered frame waits for a successor before it goes on alone. */
#define DROCE_FAULT_HOLD_US 1000

/** The actions a stage draws for each frame, in draw order. */
enum droce_fault_action {
	DROCE_FAULT_DROP,
	DROCE_FAULT_CORRUPT,
	DROCE_FAULT_DUPLICATE,
	DROCE_FAULT_DELAY,
	DROCE_FAULT_REORDER,
	DROCE_FAULT_NB_ACTIONS,
};

/**
 * A fault stage. Embedded in its owner (a port); the fields are the
 * module's own.
 */
struct droce_fault {
	/* Written by droce_fault_set(), any thread. */
	rte_seqlock_t pub_lock;
	struct droce_fault_conf pub;

	/* The engine's. */
	uint32_t seen;               /* pub_lock sequence number applied */
	bool busy;                   /* armed, or frames inside */
	bool armed;                  /* the applied configuration is active */
	uint64_t thr[DROCE_FAULT_NB_ACTIONS]; /* probability * 2^53 */
	uint64_t rng;                /* splitmix64 state */
	uint64_t delay_tsc, hold_tsc;
	uint16_t segment;            /* cut frames into segments this long; 0: no */
	struct rte_mempool *mp;      /* duplicates and copies come from here */
	struct droce_fault_stats *stats;
	struct rte_mbuf *held;       /* the reordered frame */
	uint64_t held_since;
	uint32_t rd_head, rd_tail;   /* free-running indices */
	uint32_t dl_head, dl_tail;
	struct rte_mbuf *ready[DROCE_FAULT_READY];
	struct {
		struct rte_mbuf *m;
		uint64_t due;        /* TSC */
	} delayed[DROCE_FAULT_DELAYED];
};

/**
 * Set up @p f with @p conf (checked by the caller with
 * droce_fault_conf_check()). Copies come from @p mp; the stage counts
 * into @p stats, which readers on other threads load relaxed.
 */
void droce_fault_init(struct droce_fault *f, const struct droce_fault_conf *conf,
		      struct rte_mempool *mp, struct droce_fault_stats *stats);

/** Free every frame the stage holds. */
void droce_fault_fini(struct droce_fault *f);

/**
 * Replace the configuration (checked by the caller); the engine applies it
 * on its next pass through the stage, reseeding the PRNG. Frames already
 * held keep their fate. Any thread.
 */
void droce_fault_set(struct droce_fault *f, const struct droce_fault_conf *conf);

/** The configuration last set. Any thread. */
void droce_fault_get(const struct droce_fault *f, struct droce_fault_conf *conf);

/**
 * The path's test: true when the stage is armed, holds frames or has a
 * new configuration to apply. One branch for the caller.
 */
static inline bool
droce_fault_busy(const struct droce_fault *f)
{
	return f->busy | (rte_seqlock_read_begin(&f->pub_lock) != f->seen);
}

/** Apply a configuration droce_fault_set() published, if there is one. */
void droce_fault_sync(struct droce_fault *f);

/**
 * How many frames droce_fault_input() takes now: as many as can never
 * overflow the ready queue, whatever the stage does with them.
 */
uint16_t droce_fault_room(const struct droce_fault *f);

/**
 * Take @p n frames (at most droce_fault_room()), all of them: each is
 * dropped, held, or queued ready (with its duplicate) in order.
 * @p now is the TSC delays count from.
 */
void droce_fault_input(struct droce_fault *f, struct rte_mbuf **pkts, uint16_t n,
		       uint64_t now);

/**
 * Point @p pkts at up to @p n frames ready to go on, oldest first, after
 * readying the delayed frames whose time (@p now) has come and a
 * reordered frame that waited long enough. The frames stay the stage's
 * until droce_fault_taken().
 * @return how many are in @p pkts.
 */
uint16_t droce_fault_ready(struct droce_fault *f, struct rte_mbuf **pkts, uint16_t n,
			   uint64_t now);

/** The caller took the first @p n frames droce_fault_ready() gave. */
void droce_fault_taken(struct droce_fault *f, uint16_t n);

#ifdef __cplusplus
}
#endif
#endif /* DROCE_FAULT_H */
