/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Shared receive queues. Posting is the application's side of the ring;
 * the engine takes WQEs for whichever attached QP a message arrives on.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "droce_verbs_priv.h"

struct ibv_srq *
ibv_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *attr)
{
	struct droce_dev *d = droce_dev_of_ctx(pd->context);
	struct ibv_srq_attr *a = &attr->attr;
	struct droce_srq *srq;
	uint32_t stride;

	if (a->max_wr == 0 || a->max_wr > DROCE_MAX_QP_WR || a->max_sge > DROCE_MAX_SGE ||
	    a->srq_limit > a->max_wr) {
		errno = EINVAL;
		return NULL;
	}
	srq = calloc(1, sizeof(*srq));
	if (srq == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	a->max_sge = RTE_MAX(a->max_sge, 1u);
	stride = RTE_ALIGN_CEIL(sizeof(struct droce_recv_wqe) + a->max_sge * sizeof(struct ibv_sge),
				16);
	if (droce_wq_init(&srq->rq, a->max_wr, stride) != 0) {
		free(srq);
		errno = ENOMEM;
		return NULL;
	}
	srq->rq.max_sge = a->max_sge;
	if (droce_pd_single_thread(pd))
		srq->rq.single_producer = true;
	srq->limit = a->srq_limit;
	srq->pd_handle = pd->handle;
	srq->engine = droce_dev_engine_pick(d, IBV_QPT_DRIVER, NULL);
	srq->ibv.context = pd->context;
	srq->ibv.srq_context = attr->srq_context;
	srq->ibv.pd = pd;
	pthread_mutex_init(&srq->ibv.mutex, NULL);
	pthread_cond_init(&srq->ibv.cond, NULL);
	__atomic_add_fetch(&droce_pd_of(pd)->users, 1, __ATOMIC_RELAXED);
	return &srq->ibv;
}

int
ibv_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr, int mask)
{
	struct droce_srq *srq = droce_srq_of(ibsrq);

	if (mask & ~(IBV_SRQ_MAX_WR | IBV_SRQ_LIMIT))
		return EINVAL;
	/* Growing the ring under a running engine is not supported. */
	if (mask & IBV_SRQ_MAX_WR)
		return EOPNOTSUPP;
	if (attr->srq_limit > srq->rq.max_wr)
		return EINVAL;
	__atomic_store_n(&srq->limit, attr->srq_limit, __ATOMIC_RELEASE);
	return 0;
}

int
ibv_query_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr)
{
	struct droce_srq *srq = droce_srq_of(ibsrq);

	attr->max_wr = srq->rq.max_wr;
	attr->max_sge = srq->rq.max_sge;
	attr->srq_limit = __atomic_load_n(&srq->limit, __ATOMIC_ACQUIRE);
	return 0;
}

int
ibv_destroy_srq(struct ibv_srq *ibsrq)
{
	struct droce_srq *srq = droce_srq_of(ibsrq);

	if (__atomic_load_n(&srq->users, __ATOMIC_ACQUIRE) != 0)
		return EBUSY;
	if (srq->type == IBV_SRQT_XRC) {
		struct droce_dev *d = droce_dev_of_ctx(ibsrq->context);
		int32_t pos;

		/* XRC target QPs find it by number, per packet: unpublish first,
		 * and free the number's slot only after the grace period. */
		pos = droce_num_table_remove(&d->srqt, srq->srqn);
		droce_dev_sync(d);
		if (pos >= 0)
			droce_num_table_release(&d->srqt, pos);
		__atomic_sub_fetch(&srq->xrcd->users, 1, __ATOMIC_RELEASE);
		__atomic_sub_fetch(&srq->cq->users, 1, __ATOMIC_RELEASE);
	}
	__atomic_sub_fetch(&droce_pd_of(ibsrq->pd)->users, 1, __ATOMIC_RELEASE);
	droce_events_retire(ibsrq->context, &(struct ibv_async_event){
		.event_type = IBV_EVENT_SRQ_LIMIT_REACHED, .element.srq = ibsrq });
	free(srq->rq.buf);
	free(srq);
	return 0;
}

int
droce_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	return droce_wq_post_recv(&droce_srq_of(ibsrq)->rq, wr, bad);
}
