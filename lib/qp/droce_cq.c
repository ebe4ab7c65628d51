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

int
droce_cq_push(struct droce_cq *cq, const struct ibv_wc *wc, bool solicited)
{
	uint32_t armed;

	rte_spinlock_lock(&cq->plock);
	if (droce_cq_space(cq) == 0) {
		bool first = cq->overflows++ == 0;

		rte_spinlock_unlock(&cq->plock);
		/* A completion is lost: the CQ is in error (IB 11.6.2), told once. */
		if (first && droce_event_hook != NULL)
			droce_event_hook(cq->ibv.context, IBV_EVENT_CQ_ERR, &cq->ibv);
		return -ENOSPC;
	}
	cq->ring[cq->prod & cq->mask] = *wc;
	if (cq->ts != NULL)
		cq->ts[cq->prod & cq->mask] = rte_get_tsc_cycles();
	__atomic_store_n(&cq->prod, cq->prod + 1, __ATOMIC_RELEASE);
	rte_spinlock_unlock(&cq->plock);

	/* Arming is one-shot: whoever clears it owns the notification. */
	armed = __atomic_load_n(&cq->armed, __ATOMIC_ACQUIRE);
	if (armed != 0 && (armed == 1 || solicited || wc->status != IBV_WC_SUCCESS) &&
	    __atomic_compare_exchange_n(&cq->armed, &armed, 0, false,
					__ATOMIC_ACQ_REL, __ATOMIC_RELAXED) &&
	    droce_cq_notify_hook != NULL)
		droce_cq_notify_hook(cq);
	return 0;
}

int
droce_cq_pop(struct droce_cq *cq, int n, struct ibv_wc *wc)
{
	int got = 0;
	uint32_t prod;

	/* Empty is the common answer of a polling loop: no lock for it. */
	if (__atomic_load_n(&cq->prod, __ATOMIC_ACQUIRE) ==
	    __atomic_load_n(&cq->cons, __ATOMIC_RELAXED))
		return 0;
	rte_spinlock_lock(&cq->clock);
	prod = __atomic_load_n(&cq->prod, __ATOMIC_ACQUIRE);
	while (got < n && cq->cons != prod) {
		if (cq->ts != NULL)
			cq->cur_ts = cq->ts[cq->cons & cq->mask];
		wc[got++] = cq->ring[cq->cons & cq->mask];
		__atomic_store_n(&cq->cons, cq->cons + 1, __ATOMIC_RELEASE);
	}
	rte_spinlock_unlock(&cq->clock);
	return got;
}
