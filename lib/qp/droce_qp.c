/* SPDX-License-Identifier: BSD-3-Clause */
/* Receive queues, plain and shared: the consumer side, in the engine. */
#include <string.h>

#include "droce_qp.h"

void (*droce_event_hook)(struct ibv_context *ctx, enum ibv_event_type type, void *element);

struct droce_recv_wqe *
droce_recv_claim(struct droce_qp *qp)
{
	struct droce_wq *q = qp->srq != NULL ? &qp->srq->rq : &qp->rq;
	uint32_t prod = __atomic_load_n(&q->prod, __ATOMIC_ACQUIRE);
	const struct droce_recv_wqe *r;

	if (qp->resp.has_wqe)
		return qp->rwqe;
	if (q->cons == prod)
		return NULL;
	r = droce_wq_at(q, q->cons);
	memcpy(qp->rwqe, r, sizeof(*r) + r->num_sge * sizeof(struct ibv_sge));
	__atomic_store_n(&q->cons, q->cons + 1, __ATOMIC_RELEASE);
	qp->resp.has_wqe = true;
	if (qp->srq != NULL) {
		struct droce_srq *srq = qp->srq;
		uint32_t limit = __atomic_load_n(&srq->limit, __ATOMIC_ACQUIRE);

		/* One-shot, as the spec says: the event disarms the limit. */
		if (limit != 0 && prod - q->cons < limit &&
		    __atomic_compare_exchange_n(&srq->limit, &limit, 0, false,
						__ATOMIC_ACQ_REL, __ATOMIC_RELAXED) &&
		    droce_event_hook != NULL)
			droce_event_hook(srq->ibv.context, IBV_EVENT_SRQ_LIMIT_REACHED, &srq->ibv);
	}
	return qp->rwqe;
}

void
droce_qp_event(struct droce_qp *qp, enum ibv_event_type type)
{
	struct droce_qp_handle *h;

	if (droce_event_hook == NULL)
		return;
	rte_spinlock_lock(&qp->hlock);
	LIST_FOREACH(h, &qp->handle_list, link)
		droce_event_hook(h->ibv.qp_base.context, type, &h->ibv.qp_base);
	rte_spinlock_unlock(&qp->hlock);
}
