/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The send ring's quiet bits: one bit per slot, set while the WQE there
 * is a SEND or WRITE of one packet, unsignaled, sent with a copied
 * payload by the requester's run of like WQEs (req_only_like()), and not
 * retired, resent or flushed since. Such a WQE retires on its ACK with
 * nothing to report and nothing to wait for, and its PSN is the one
 * after the WQE before it: the completer retires a run of them by their
 * bits (comp_skip_quiet()), without reading a WQE. With post lists and
 * selective signaling that is 31 WQEs of 32, each a cache line the ACK's
 * completer read a few hundred messages after the WQE was sent, when it
 * had left the L1 cache (docs/benchmarks.md, forty-sixth session).
 *
 * Engine only: the requester writes a WQE's bit whenever it starts it
 * (cleared; set by the run once its frame is built) and the go-back
 * clears those it will send again, all in the QP's engine; posters never
 * see them. A bit is only looked at for a WQE between sq.cons and
 * req.next: one the requester started since the slot was last posted.
 */
#ifndef DROCE_SQ_QUIET_H
#define DROCE_SQ_QUIET_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_common.h>

#include "droce_qp.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Words of quiet bits a send ring of @p mask + 1 slots needs. */
static inline size_t
droce_sq_quiet_words(uint32_t mask)
{
	return ((size_t)mask + 64) / 64;
}

/* Of @p n bits from slot @p pos (a ring position), how many lie in its
 * word before the word or the ring ends. */
static inline uint32_t
sq_quiet_chunk(uint32_t mask, uint32_t pos, uint32_t n)
{
	return RTE_MIN(n, RTE_MIN(64 - (pos & 63), mask + 1 - pos));
}

/* The low @p k bits (1..64). */
static inline uint64_t
sq_quiet_low(uint32_t k)
{
	return k >= 64 ? ~UINT64_C(0) : (UINT64_C(1) << k) - 1;
}

/** Clear the quiet bit of slot @p idx. */
static inline void
droce_sq_quiet_off(struct droce_qp *qp, uint32_t idx)
{
	uint32_t pos = idx & qp->sq.mask;

	qp->sq_quiet[pos >> 6] &= ~(UINT64_C(1) << (pos & 63));
}

/** Set (@p on) or clear the quiet bits of slots @p from up to, not
 *  including, @p to. */
static inline void
droce_sq_quiet_set(struct droce_qp *qp, uint32_t from, uint32_t to, bool on)
{
	const uint32_t mask = qp->sq.mask;
	uint32_t n = RTE_MIN(to - from, mask + 1);

	while (n != 0) {
		uint32_t pos = from & mask, k = sq_quiet_chunk(mask, pos, n);
		uint64_t m = sq_quiet_low(k) << (pos & 63);

		if (on)
			qp->sq_quiet[pos >> 6] |= m;
		else
			qp->sq_quiet[pos >> 6] &= ~m;
		from += k;
		n -= k;
	}
}

/** How many slots from @p idx on, at most @p max, have their quiet bit. */
static inline uint32_t
droce_sq_quiet_run(const struct droce_qp *qp, uint32_t idx, uint32_t max)
{
	const uint32_t mask = qp->sq.mask;
	uint32_t run = 0;

	while (run < max) {
		uint32_t pos = (idx + run) & mask, k = sq_quiet_chunk(mask, pos, max - run);
		uint64_t ones = ~(qp->sq_quiet[pos >> 6] >> (pos & 63));
		uint32_t got = ones == 0 ? 64 : (uint32_t)__builtin_ctzll(ones);

		if (got < k)
			return run + got;
		run += k;
	}
	return max;
}

#ifdef __cplusplus
}
#endif

#endif /* DROCE_SQ_QUIET_H */
