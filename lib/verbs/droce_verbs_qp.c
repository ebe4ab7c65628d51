/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Queue pair control: create, modify (the spec's state machine), query,
 * destroy.
 *
 * The engine reads a QP's attributes only in the states that use them,
 * and reads the state with acquire order, so modify writes the attributes
 * first and the state last. Leaving a state the engine acts in for RESET
 * waits one RCU grace period before the engine's fields are cleared.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "droce_verbs_priv.h"
#include "droce_qp_state.h"

static bool
qp_type_supported(enum ibv_qp_type t)
{
	return t == IBV_QPT_RC || t == IBV_QPT_UC || t == IBV_QPT_UD;
}

static struct ibv_qp *
qp_create(struct ibv_context *ctx, struct ibv_pd *pd, struct ibv_qp_init_attr *ia,
	  struct droce_qp_handle **out_h)
{
	struct droce_dev *d = droce_dev_of_ctx(ctx);
	struct ibv_qp_cap *cap = &ia->cap;
	struct droce_qp_handle *h = NULL;
	struct droce_qp *qp = NULL;
	uint32_t sq_stride, rq_stride;
	int rc;

	if (pd == NULL || ia->send_cq == NULL || ia->recv_cq == NULL ||
	    cap->max_send_wr > DROCE_MAX_QP_WR || cap->max_recv_wr > DROCE_MAX_QP_WR ||
	    cap->max_send_sge > DROCE_MAX_SGE || cap->max_recv_sge > DROCE_MAX_SGE ||
	    cap->max_inline_data > DROCE_MAX_INLINE) {
		errno = EINVAL;
		return NULL;
	}
	if (!qp_type_supported(ia->qp_type)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	h = calloc(1, sizeof(*h));
	qp = calloc(1, sizeof(*qp));
	if (h == NULL || qp == NULL) {
		rc = -ENOMEM;
		goto fail;
	}
	/* Report what we give, as providers do: at least one SGE, and inline
	 * room up to what the SGE list would take anyway. */
	cap->max_send_sge = RTE_MAX(cap->max_send_sge, 1u);
	cap->max_recv_sge = RTE_MAX(cap->max_recv_sge, 1u);
	sq_stride = RTE_ALIGN_CEIL(sizeof(struct droce_send_wqe) +
				   RTE_MAX(cap->max_send_sge * sizeof(struct ibv_sge),
					   cap->max_inline_data), 64);
	cap->max_inline_data = RTE_MIN(sq_stride - sizeof(struct droce_send_wqe),
				       (size_t)DROCE_MAX_INLINE);
	rq_stride = RTE_ALIGN_CEIL(sizeof(struct droce_recv_wqe) +
				   cap->max_recv_sge * sizeof(struct ibv_sge), 16);
	if (ia->srq != NULL) {
		/* Receives come from the SRQ: the QP's own RQ stays empty. */
		cap->max_recv_wr = cap->max_recv_sge = 0;
		rq_stride = droce_srq_of(ia->srq)->rq.stride;
	}
	rc = droce_wq_init(&qp->sq, cap->max_send_wr, sq_stride);
	if (rc == 0)
		rc = droce_wq_init(&qp->rq, cap->max_recv_wr, rq_stride);
	if (rc != 0)
		goto fail;
	qp->rwqe = malloc(rq_stride);
	if (qp->rwqe == NULL) {
		rc = -ENOMEM;
		goto fail;
	}
	qp->sq.max_sge = cap->max_send_sge;
	qp->sq.max_inline = cap->max_inline_data;
	qp->rq.max_sge = cap->max_recv_sge;
	qp->type = ia->qp_type;
	qp->state = IBV_QPS_RESET;
	pthread_mutex_init(&qp->mutex, NULL);
	qp->handles = 1;
	qp->engine = d->engine;
	qp->dev = d;
	qp->pd_handle = pd->handle;
	qp->scq = droce_cq_of(ia->send_cq);
	qp->rcq = droce_cq_of(ia->recv_cq);
	qp->srq = ia->srq != NULL ? droce_srq_of(ia->srq) : NULL;
	/* UD has no path MTU attribute: datagrams use the port's. */
	qp->mtu = droce_port_mtu(d->port);
	qp->sq_sig_all = ia->sq_sig_all != 0;
	qp->attr.cap = *cap;
	rc = droce_qp_table_add(&d->qpt, qp);
	if (rc != 0)
		goto fail;
	/* A fixed UDP source port per QP, from the range RoCEv2 reserves for
	 * entropy (0xC000 and up), as rxe does. */
	qp->udp_sport = 0xc000 | (qp->qpn & 0x3fff);
	__atomic_add_fetch(&qp->scq->users, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&qp->rcq->users, 1, __ATOMIC_RELAXED);
	if (qp->srq != NULL)
		__atomic_add_fetch(&qp->srq->users, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&droce_pd_of(pd)->users, 1, __ATOMIC_RELAXED);

	h->qp = qp;
	h->ibv.qp_base.context = ctx;
	h->ibv.qp_base.qp_context = ia->qp_context;
	h->ibv.qp_base.pd = pd;
	h->ibv.qp_base.send_cq = ia->send_cq;
	h->ibv.qp_base.recv_cq = ia->recv_cq;
	h->ibv.qp_base.srq = ia->srq;
	h->ibv.qp_base.qp_num = qp->qpn;
	h->ibv.qp_base.state = IBV_QPS_RESET;
	h->ibv.qp_base.qp_type = ia->qp_type;
	pthread_mutex_init(&h->ibv.qp_base.mutex, NULL);
	pthread_cond_init(&h->ibv.qp_base.cond, NULL);
	if (out_h != NULL)
		*out_h = h;
	return &h->ibv.qp_base;
fail:
	if (qp != NULL) {
		free(qp->sq.buf);
		free(qp->rq.buf);
		free(qp->rwqe);
	}
	free(qp);
	free(h);
	errno = -rc;
	return NULL;
}

struct ibv_qp *
ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *ia)
{
	return qp_create(pd->context, pd, ia, NULL);
}

struct ibv_qp *
droce_create_qp_ex(struct ibv_context *ctx, struct ibv_qp_init_attr_ex *ax)
{
	struct ibv_qp_init_attr ia = {
		.qp_context = ax->qp_context,
		.send_cq = ax->send_cq,
		.recv_cq = ax->recv_cq,
		.srq = ax->srq,
		.cap = ax->cap,
		.qp_type = ax->qp_type,
		.sq_sig_all = ax->sq_sig_all,
	};
	struct ibv_qp *qp;

	if (ax->comp_mask & ~(uint32_t)IBV_QP_INIT_ATTR_PD) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (!(ax->comp_mask & IBV_QP_INIT_ATTR_PD)) {
		errno = EINVAL;
		return NULL;
	}
	qp = qp_create(ctx, ax->pd, &ia, NULL);
	if (qp != NULL)
		ax->cap = ia.cap;
	return qp;
}

/* Clear everything the engine keeps in the QP (it is in RESET and the
 * engine let go of it). */
static void
qp_reset_engine_state(struct droce_qp *qp)
{
	qp->sq.prod = qp->sq.cons = 0;
	qp->rq.prod = qp->rq.cons = 0;
	memset(&qp->req, 0, sizeof(qp->req));
	memset(&qp->comp, 0, sizeof(qp->comp));
	memset(&qp->resp, 0, sizeof(qp->resp));
	qp->av.routed = false;
}

/* Values the state machine does not check. */
static int
qp_check_values(const struct droce_qp *qp, const struct ibv_qp_attr *a, int mask)
{
	struct droce_dev *d = qp->dev;

	if ((mask & IBV_QP_PORT) && a->port_num != 1)
		return EINVAL;
	if ((mask & IBV_QP_PKEY_INDEX) && a->pkey_index != 0)
		return EINVAL;
	if ((mask & IBV_QP_PATH_MTU) && droce_mtu_bytes(a->path_mtu) == 0)
		return EINVAL;
	if ((mask & IBV_QP_MAX_QP_RD_ATOMIC) && a->max_rd_atomic > DROCE_MAX_RD_ATOMIC)
		return EINVAL;
	if ((mask & IBV_QP_MAX_DEST_RD_ATOMIC) && a->max_dest_rd_atomic > DROCE_MAX_RD_ATOMIC)
		return EINVAL;
	if ((mask & IBV_QP_RETRY_CNT) && a->retry_cnt > 7)
		return EINVAL;
	if ((mask & IBV_QP_RNR_RETRY) && a->rnr_retry > 7)
		return EINVAL;
	if ((mask & IBV_QP_MIN_RNR_TIMER) && a->min_rnr_timer > 31)
		return EINVAL;
	if ((mask & IBV_QP_TIMEOUT) && a->timeout > 31)
		return EINVAL;
	if ((mask & IBV_QP_DEST_QPN) && a->dest_qp_num > DROCE_QPN_MASK)
		return EINVAL;
	if ((mask & IBV_QP_SQ_PSN) && a->sq_psn > DROCE_PSN_MASK)
		return EINVAL;
	if ((mask & IBV_QP_RQ_PSN) && a->rq_psn > DROCE_PSN_MASK)
		return EINVAL;
	if ((mask & IBV_QP_CAP) && (a->cap.max_send_wr > qp->sq.max_wr ||
				    a->cap.max_recv_wr > qp->rq.max_wr))
		return EINVAL;
	if (mask & IBV_QP_AV) {
		/* RoCE has no LIDs: the destination is the GRH's GID. */
		if (!a->ah_attr.is_global || a->ah_attr.port_num > 1 ||
		    a->ah_attr.grh.sgid_index >= droce_port_gid_count(d->port))
			return EINVAL;
	}
	return 0;
}

static void
qp_apply(struct droce_qp *qp, const struct ibv_qp_attr *a, int mask)
{
	struct droce_dev *d = qp->dev;
	struct ibv_qp_attr *s = &qp->attr;

	if (mask & IBV_QP_ACCESS_FLAGS)
		s->qp_access_flags = a->qp_access_flags;
	if (mask & IBV_QP_PKEY_INDEX)
		s->pkey_index = a->pkey_index;
	if (mask & IBV_QP_PORT)
		s->port_num = a->port_num;
	if (mask & IBV_QP_QKEY)
		s->qkey = a->qkey;
	if (mask & IBV_QP_PATH_MTU) {
		s->path_mtu = a->path_mtu;
		/* The port's MTU caps what a path may use, as rxe does. */
		qp->mtu = RTE_MIN(droce_mtu_bytes(a->path_mtu), droce_port_mtu(d->port));
	}
	if (mask & IBV_QP_TIMEOUT)
		s->timeout = a->timeout;
	if (mask & IBV_QP_RETRY_CNT)
		s->retry_cnt = a->retry_cnt;
	if (mask & IBV_QP_RNR_RETRY)
		s->rnr_retry = a->rnr_retry;
	if (mask & IBV_QP_RQ_PSN) {
		s->rq_psn = a->rq_psn;
		qp->resp.epsn = a->rq_psn;
	}
	if (mask & IBV_QP_SQ_PSN) {
		s->sq_psn = a->sq_psn;
		qp->req.psn = qp->comp.psn = a->sq_psn;
	}
	if (mask & IBV_QP_MAX_QP_RD_ATOMIC)
		s->max_rd_atomic = a->max_rd_atomic;
	if (mask & IBV_QP_MAX_DEST_RD_ATOMIC)
		s->max_dest_rd_atomic = a->max_dest_rd_atomic;
	if (mask & IBV_QP_MIN_RNR_TIMER)
		s->min_rnr_timer = a->min_rnr_timer;
	if (mask & IBV_QP_DEST_QPN)
		s->dest_qp_num = a->dest_qp_num;
	if (mask & IBV_QP_EN_SQD_ASYNC_NOTIFY)
		s->en_sqd_async_notify = a->en_sqd_async_notify;
	if (mask & IBV_QP_AV) {
		s->ah_attr = a->ah_attr;
		qp->av.attr = a->ah_attr;
		qp->av.routed = false;
	}
	if (mask & (IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY)) {
		qp->req.retries = s->retry_cnt;
		qp->req.rnr_retries = s->rnr_retry;
	}
}

int
ibv_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int mask)
{
	struct droce_qp *qp = droce_qp_of(ibqp);
	struct droce_dev *d = qp->dev;
	enum ibv_qp_state cur, next;
	int rc;

	pthread_mutex_lock(&qp->mutex);
	cur = (mask & IBV_QP_CUR_STATE) ? attr->cur_qp_state : droce_qp_state(qp);
	next = (mask & IBV_QP_STATE) ? attr->qp_state : cur;
	if (!droce_qp_modify_is_ok(cur, next, qp->type, mask)) {
		DROCE_LOG(DEBUG, "QP 0x%x: %s -> %s with mask 0x%x refused", qp->qpn,
			  droce_qp_state_str(cur), droce_qp_state_str(next), mask);
		rc = EINVAL;
		goto out;
	}
	rc = qp_check_values(qp, attr, mask);
	if (rc != 0)
		goto out;
	if (next == IBV_QPS_RESET && droce_qp_state(qp) != IBV_QPS_RESET) {
		__atomic_store_n(&qp->state, IBV_QPS_RESET, __ATOMIC_RELEASE);
		/* Wait out engine iterations that saw the old state. */
		rte_rcu_qsbr_synchronize(d->rcu, RTE_QSBR_THRID_INVALID);
		qp_reset_engine_state(qp);
	}
	qp_apply(qp, attr, mask);
	qp->attr.qp_state = next;
	qp->attr.cur_qp_state = next;
	__atomic_store_n(&qp->state, next, __ATOMIC_RELEASE);
	ibqp->state = next;
	if (next == IBV_QPS_ERR || next == IBV_QPS_RTS || next == IBV_QPS_RTR)
		droce_engine_kick(qp->engine, qp);
out:
	pthread_mutex_unlock(&qp->mutex);
	return rc;
}

int
ibv_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int mask,
	     struct ibv_qp_init_attr *init)
{
	struct droce_qp *qp = droce_qp_of(ibqp);

	(void)mask; /* everything is cheap to return */
	pthread_mutex_lock(&qp->mutex);
	*attr = qp->attr;
	attr->qp_state = attr->cur_qp_state = droce_qp_state(qp);
	attr->path_mig_state = IBV_MIG_MIGRATED;
	attr->sq_draining = 0;
	memset(init, 0, sizeof(*init));
	init->qp_context = ibqp->qp_context;
	init->send_cq = ibqp->send_cq;
	init->recv_cq = ibqp->recv_cq;
	init->srq = ibqp->srq;
	init->cap = qp->attr.cap;
	init->qp_type = qp->type;
	init->sq_sig_all = qp->sq_sig_all;
	pthread_mutex_unlock(&qp->mutex);
	return 0;
}

/*
 * The lifetime DESIGN.md describes: error state, unpublish the QPN, one
 * grace period, wait for the engine to drop its references (running its
 * iterations here when no other thread does), flush, free.
 */
static void
qp_teardown(struct droce_qp *qp)
{
	struct droce_dev *d = qp->dev;
	int32_t pos;

	__atomic_store_n(&qp->destroying, true, __ATOMIC_RELEASE);
	__atomic_store_n(&qp->state, IBV_QPS_ERR, __ATOMIC_RELEASE);
	pos = droce_qp_table_remove(&d->qpt, qp->qpn);
	rte_rcu_qsbr_synchronize(d->rcu, RTE_QSBR_THRID_INVALID);
	while (__atomic_load_n(&qp->engine_refs, __ATOMIC_ACQUIRE) != 0)
		if (droce_engine_poll(qp->engine) < 0)
			sched_yield();
	/* One more grace period: the iteration that dropped the last
	 * reference may still be running. */
	rte_rcu_qsbr_synchronize(d->rcu, RTE_QSBR_THRID_INVALID);
	if (pos >= 0)
		droce_qp_table_release(&d->qpt, pos);
	droce_qp_flush(qp);
	__atomic_sub_fetch(&qp->scq->users, 1, __ATOMIC_RELEASE);
	__atomic_sub_fetch(&qp->rcq->users, 1, __ATOMIC_RELEASE);
	if (qp->srq != NULL)
		__atomic_sub_fetch(&qp->srq->users, 1, __ATOMIC_RELEASE);
	free(qp->sq.buf);
	free(qp->rq.buf);
	free(qp->rwqe);
	free(qp);
}

int
ibv_destroy_qp(struct ibv_qp *ibqp)
{
	struct droce_qp_handle *h = (struct droce_qp_handle *)ibqp;
	struct droce_qp *qp = h->qp;
	uint32_t left;

	pthread_mutex_lock(&qp->mutex);
	left = --qp->handles;
	pthread_mutex_unlock(&qp->mutex);
	__atomic_sub_fetch(&droce_pd_of(ibqp->pd)->users, 1, __ATOMIC_RELEASE);
	if (left == 0)
		qp_teardown(qp);
	free(h);
	return 0;
}
