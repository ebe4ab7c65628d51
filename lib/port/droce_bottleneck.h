/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * A switch's congested egress, in software: the test bench for
 * congestion control. Frames join a FIFO that drains at a set rate; a
 * frame that leaves while more than the marking threshold is queued
 * leaves with CE set in its IP header when it is ECN-capable (ECT(0) or
 * ECT(1)), as a switch that marks at dequeue above a RED threshold does;
 * a frame that does not fit is dropped (tail drop).
 *
 * A port puts it on its receive path, after the fault stage (the
 * bottleneck= key family, docs/congestion.md): every sender that reaches
 * the port then shares one queue, as flows share a switch port. The ICRC
 * does not cover the ECN bits (Annex A17 masks the whole traffic class),
 * so marking keeps frames valid; the IPv4 header checksum is updated.
 *
 * One thread (the port's engine) calls everything here.
 */
#ifndef DROCE_BOTTLENECK_H
#define DROCE_BOTTLENECK_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf.h>

#include "droce_port.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Most frames the queue holds, whatever their size (a power of 2). */
#define DROCE_BOTTLENECK_FRAMES 4096

/** A bottleneck queue. The fields are the module's own. */
struct droce_bottleneck {
	struct droce_bottleneck_conf conf;
	uint64_t per_tsc;         /**< drain rate, bytes << 32 per TSC tick */
	uint64_t credit;          /**< bytes << 32 the link may still send */
	uint64_t credit_max;      /**< what an idle link saves up: a burst */
	uint64_t dt_max;          /**< ticks that drain a full queue and a burst */
	uint64_t drained_at;      /**< TSC of the last drain */
	uint64_t queued_bytes;
	uint32_t head, tail;      /**< free-running indices into q */
	struct droce_bottleneck_stats *stats; /**< the owner's counters */
	struct rte_mbuf *q[DROCE_BOTTLENECK_FRAMES];
};

/**
 * Set up @p b for @p c (which must pass the check) on a TSC of @p tsc_hz,
 * counting into @p stats (which other threads may read: each counter is
 * written whole).
 */
void droce_bottleneck_init(struct droce_bottleneck *b, const struct droce_bottleneck_conf *c,
			   struct droce_bottleneck_stats *stats, uint64_t tsc_hz, uint64_t now);

/** Free the frames still queued. */
void droce_bottleneck_fini(struct droce_bottleneck *b);

/** True when frames wait in the queue. */
static inline bool
droce_bottleneck_busy(const struct droce_bottleneck *b)
{
	return b->head != b->tail;
}

/** Queue @p n frames (each marked, queued or dropped and freed). */
void droce_bottleneck_input(struct droce_bottleneck *b, struct rte_mbuf **pkts, uint16_t n);

/**
 * Take out up to @p n frames the link has sent by @p now.
 * @return the number of frames in @p pkts.
 */
uint16_t droce_bottleneck_output(struct droce_bottleneck *b, struct rte_mbuf **pkts, uint16_t n,
				 uint64_t now);

/**
 * Set CE in the IP header of @p m (Ethernet, an optional VLAN tag, then
 * IPv4 or IPv6) when it is ECN-capable, keeping the IPv4 checksum right.
 * @return true when marked (or already CE), false for Not-ECT or non-IP.
 */
bool droce_ecn_mark_ce(struct rte_mbuf *m);

#ifdef __cplusplus
}
#endif
#endif /* DROCE_BOTTLENECK_H */
