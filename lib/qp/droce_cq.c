/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdlib.h>

#include <rte_common.h>
#include <rte_cycles.h>

#include "droce_cq.h"
#include "droce_qp.h"

void (*droce_cq_notify_hook)(struct droce_cq *cq);

int
droce_cq_init(struct droce_cq *cq, uint32_t cqe)
{
	uint32_t n = rte_align32pow2(cqe + 1);

	cq->ring = calloc(n, sizeof(*cq->ring));
	if (cq->ring == NULL)
		return -ENOMEM;
	cq->mask = n - 1;
	cq->prod = cq->cons = 0;
	rte_spinlock_init(&cq->plock);
	rte_spinlock_init(&cq->clock);
	return 0;
}

int
droce_cq_enable_ts(struct droce_cq *cq)
{
	cq->ts = calloc(cq->mask + 1, sizeof(*cq->ts));
	return cq->ts == NULL ? -ENOMEM : 0;
}

void
droce_cq_fini(struct droce_cq *cq)
{
	free(cq->ring);
	free(cq->ts);
	cq->ring = NULL;
	cq->ts = NULL;
}

int
droce_cq_resize(struct droce_cq *cq, uint32_t cqe)
{
	uint32_t n = rte_align32pow2(cqe + 1), pending, i;
	struct ibv_wc *ring = calloc(n, sizeof(*ring)), *old;
	uint64_t *ts = cq->ts != NULL ? calloc(n, sizeof(*ts)) : NULL, *old_ts;

	if (ring == NULL || (cq->ts != NULL && ts == NULL)) {
		free(ring);
		free(ts);
		return -ENOMEM;
	}
	/* Producers, then consumers: nobody touches the ring while it moves. */
	rte_spinlock_lock(&cq->plock);
	rte_spinlock_lock(&cq->clock);
	pending = cq->prod - cq->cons;
	if (pending > cqe) {
		rte_spinlock_unlock(&cq->clock);
		rte_spinlock_unlock(&cq->plock);
		free(ring);
		free(ts);
		return -EINVAL;
	}
	for (i = 0; i < pending; i++) {
		ring[i] = cq->ring[(cq->cons + i) & cq->mask];
		if (ts != NULL)
			ts[i] = cq->ts[(cq->cons + i) & cq->mask];
	}
	old = cq->ring;
	old_ts = cq->ts;
	cq->ring = ring;
	cq->ts = ts;
	cq->mask = n - 1;
	__atomic_store_n(&cq->cons, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&cq->prod, pending, __ATOMIC_RELEASE);
	rte_spinlock_unlock(&cq->clock);
	rte_spinlock_unlock(&cq->plock);
	free(old);
	free(old_ts);
	return 0;
}

/* A completion was lost: the CQ is in error (IB 11.6.2), told once. */
static void
cq_overflow(struct droce_cq *cq, bool first)
{
	if (first && droce_event_hook != NULL)
		droce_event_hook(cq->ibv.context, IBV_EVENT_CQ_ERR, &cq->ibv);
}

/* Arming is one-shot: whoever clears it owns the notification. */
static void
cq_notify(struct droce_cq *cq, bool wake)
{
	uint32_t armed = __atomic_load_n(&cq->armed, __ATOMIC_ACQUIRE);

	if (armed != 0 && (armed == 1 || wake) &&
	    __atomic_compare_exchange_n(&cq->armed, &armed, 0, false,
					__ATOMIC_ACQ_REL, __ATOMIC_RELAXED) &&
	    droce_cq_notify_hook != NULL)
		droce_cq_notify_hook(cq);
}

int
droce_cq_push_burst(struct droce_cq *cq, const struct ibv_wc *wc, unsigned n, bool solicited)
{
	uint32_t prod, room;
	unsigned i, put;
	bool wake = solicited, first = false;

	if (n == 0)
		return 0;
	rte_spinlock_lock(&cq->plock);
	prod = cq->prod;
	room = droce_cq_space(cq);
	put = RTE_MIN(n, room);
	for (i = 0; i < put; i++) {
		cq->ring[(prod + i) & cq->mask] = wc[i];
		wake |= wc[i].status != IBV_WC_SUCCESS;
	}
	if (cq->ts != NULL) {
		uint64_t now = rte_get_tsc_cycles();

		for (i = 0; i < put; i++)
			cq->ts[(prod + i) & cq->mask] = now;
	}
	/* One tail update for the burst: pollers see all of it or none. */
	__atomic_store_n(&cq->prod, prod + put, __ATOMIC_RELEASE);
	if (put < n) {
		first = cq->overflows == 0;
		cq->overflows += n - put;
	}
	rte_spinlock_unlock(&cq->plock);
	if (put < n)
		cq_overflow(cq, first);
	if (put > 0)
		cq_notify(cq, wake);
	return (int)put;
}

int
droce_cq_push(struct droce_cq *cq, const struct ibv_wc *wc, bool solicited)
{
	rte_spinlock_lock(&cq->plock);
	if (droce_cq_space(cq) == 0) {
		bool first = cq->overflows++ == 0;

		rte_spinlock_unlock(&cq->plock);
		cq_overflow(cq, first);
		return -ENOSPC;
	}
	cq->ring[cq->prod & cq->mask] = *wc;
	if (cq->ts != NULL)
		cq->ts[cq->prod & cq->mask] = rte_get_tsc_cycles();
	__atomic_store_n(&cq->prod, cq->prod + 1, __ATOMIC_RELEASE);
	rte_spinlock_unlock(&cq->plock);
	cq_notify(cq, solicited || wc->status != IBV_WC_SUCCESS);
	return 0;
}

int
droce_cq_pop(struct droce_cq *cq, int n, struct ibv_wc *wc)
{
	int got = 0;
	uint32_t prod, cons;

	/* Empty is the common answer of a polling loop: no lock for it. */
	if (__atomic_load_n(&cq->prod, __ATOMIC_ACQUIRE) ==
	    __atomic_load_n(&cq->cons, __ATOMIC_RELAXED))
		return 0;
	if (!cq->single_consumer)
		rte_spinlock_lock(&cq->clock);
	prod = __atomic_load_n(&cq->prod, __ATOMIC_ACQUIRE);
	cons = cq->cons;
	while (got < n && cons != prod) {
		if (cq->ts != NULL)
			cq->cur_ts = cq->ts[cons & cq->mask];
		wc[got++] = cq->ring[cons++ & cq->mask];
	}
	/* One head update: the slots are the engine's again only after the copies. */
	__atomic_store_n(&cq->cons, cons, __ATOMIC_RELEASE);
	if (!cq->single_consumer)
		rte_spinlock_unlock(&cq->clock);
	return got;
}
