/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Completion queues: a ring of work completions that engines fill and the
 * application drains with ibv_poll_cq().
 *
 * Producers (engines, and a thread flushing a QP it destroys) serialise on
 * a spinlock held for the few stores of one completion; consumers
 * serialise on another, as ibv_poll_cq() is thread-safe in rdma-core's
 * providers, unless the CQ has a single consumer. Neither lock is held
 * across anything that can block.
 */
#ifndef DROCE_CQ_H
#define DROCE_CQ_H

#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include <rte_spinlock.h>

#ifdef __cplusplus
extern "C" {
#endif

struct droce_comp_channel;

/** One completion queue. */
struct droce_cq {
	struct ibv_cq_ex ibv;        /**< first: an ibv_cq is its prefix */
	struct ibv_wc *ring;
	uint32_t mask;               /**< ring entries - 1 (a power of two minus one) */
	uint32_t prod;               /**< written under plock, read by consumers and room checks */
	uint32_t cons;               /**< written under clock */
	rte_spinlock_t plock;
	rte_spinlock_t clock;
	/** One polling thread at a time (IBV_CREATE_CQ_ATTR_SINGLE_THREADED,
	 *  or a parent domain with a thread domain): clock is not taken. */
	bool single_consumer;
	/** The parent domain it was created on (it holds it), or NULL. */
	struct ibv_pd *pd;
	/** 0: not armed; 1: next completion; 2: next solicited completion. */
	uint32_t armed;
	struct droce_comp_channel *channel;
	uint32_t events;             /**< events ibv_get_cq_event() handed out */
	uint32_t async_reported;     /**< async events (CQ_ERR) ibv_get_async_event() handed out */
	uint32_t users;              /**< QPs and SRQs using it (EBUSY on destroy) */
	uint64_t overflows;          /**< completions that found the ring full */
	/** Engine that serves this CQ's QPs; ibv_poll_cq drives it inline. */
	struct droce_engine *engine;
	/** The completion being read through the ibv_cq_ex interface. */
	struct ibv_wc cur;
	/** TSC when each ring entry was pushed, beside the ring; NULL unless
	 *  the CQ was created with a completion timestamp. */
	uint64_t *ts;
	uint64_t cur_ts;             /**< ts of the last completion popped */
};

/** The droce CQ behind an ibv_cq. */
static inline struct droce_cq *
droce_cq_of(struct ibv_cq *cq)
{
	return (struct droce_cq *)cq;
}

/** Allocate the ring for at least @p cqe completions. @return 0 or -ENOMEM. */
int droce_cq_init(struct droce_cq *cq, uint32_t cqe);

/**
 * Move the completions not yet polled, in order, into a new ring for at
 * least @p cqe completions. Producers and pollers wait on the ring locks
 * meanwhile (a single-consumer CQ's poller is the caller itself); an
 * engine that saw room in the old ring (droce_cq_space()) still has at
 * least one entry, as the new ring has room for cqe + 1.
 * @return 0, -EINVAL when more than @p cqe completions are pending, or
 * -ENOMEM.
 */
int droce_cq_resize(struct droce_cq *cq, uint32_t cqe);

/** Keep a TSC timestamp per completion from now on. @return 0 or -ENOMEM. */
int droce_cq_enable_ts(struct droce_cq *cq);

/** Free the ring. */
void droce_cq_fini(struct droce_cq *cq);

/**
 * Add one completion (producer side) and wake a completion channel the CQ
 * is armed for. @p solicited says whether it counts for a solicited-only
 * request. @return 0, or -ENOSPC when the ring is full (nothing written).
 */
int droce_cq_push(struct droce_cq *cq, const struct ibv_wc *wc, bool solicited);

/**
 * Add @p n completions with one tail update (producer side), waking an
 * armed channel once: @p solicited says whether one of them counts for a
 * solicited-only request (an error always does). What does not fit is
 * lost and puts the CQ in error, as with droce_cq_push().
 * @return how many were written.
 */
int droce_cq_push_burst(struct droce_cq *cq, const struct ibv_wc *wc, unsigned n,
			bool solicited);

/** Free entries now (producer side estimate). */
static inline uint32_t
droce_cq_space(const struct droce_cq *cq)
{
	/* Engines ask without plock, while another producer (a thread
	 * flushing a QP it destroys) may be pushing: prod is read atomically. */
	return cq->mask + 1 - (__atomic_load_n(&cq->prod, __ATOMIC_RELAXED) -
			       __atomic_load_n(&cq->cons, __ATOMIC_ACQUIRE));
}

/** Take up to @p n completions (consumer side); cur_ts gets the last one's
 *  timestamp. @return how many. */
int droce_cq_pop(struct droce_cq *cq, int n, struct ibv_wc *wc);

/**
 * Completion-channel hook, set by the verbs layer: called (producer side,
 * outside the ring lock) when a completion arrives on an armed CQ.
 */
extern void (*droce_cq_notify_hook)(struct droce_cq *cq);

#ifdef __cplusplus
}
#endif
#endif /* DROCE_CQ_H */
