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

#include "droce_driver.h"
#include "droce_gsi.h"
#include "droce_verbs_priv.h"
#include "droce_qp_state.h"
#include "droce_sq_quiet.h"

/* How long ibv_destroy_qp() waits for zero-copy frames that point into
 * the QP to leave before it keeps the QP's memory for them instead: on a
 * port that sends, they leave within microseconds. */
#define DROCE_QP_DESTROY_WAIT_MS 100

/* What each QP type needs at creation, the way rdma-core's providers check it. */
static int
qp_check_init(const struct ibv_qp_init_attr_ex *ax)
{
	const struct ibv_qp_cap *cap = &ax->cap;

	if (ax->comp_mask & ~(uint32_t)(IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_XRCD |
					IBV_QP_INIT_ATTR_SEND_OPS_FLAGS))
		return EOPNOTSUPP;
	if ((ax->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) && ax->qp_type == IBV_QPT_XRC_RECV)
		return EINVAL;
	if (cap->max_send_wr > DROCE_MAX_QP_WR || cap->max_recv_wr > DROCE_MAX_QP_WR ||
	    cap->max_send_sge > DROCE_MAX_SGE || cap->max_recv_sge > DROCE_MAX_SGE ||
	    cap->max_inline_data > DROCE_MAX_INLINE)
		return EINVAL;
	switch (ax->qp_type) {
	case IBV_QPT_RC:
	case IBV_QPT_UC:
	case IBV_QPT_UD:
		if (!(ax->comp_mask & IBV_QP_INIT_ATTR_PD) || ax->pd == NULL ||
		    ax->send_cq == NULL || ax->recv_cq == NULL)
			return EINVAL;
		if (ax->srq != NULL && droce_srq_of(ax->srq)->type != IBV_SRQT_BASIC)
			return EINVAL;
		return 0;
	case IBV_QPT_XRC_SEND:
		if (!(ax->comp_mask & IBV_QP_INIT_ATTR_PD) || ax->pd == NULL || ax->send_cq == NULL)
			return EINVAL;
		return 0;
	case IBV_QPT_XRC_RECV:
		if (!(ax->comp_mask & IBV_QP_INIT_ATTR_XRCD) || ax->xrcd == NULL)
			return EINVAL;
		return 0;
	default:
		return EOPNOTSUPP;
	}
}

/* A new handle on @p qp for context @p ctx, linked into the QP's list. */
struct droce_qp_handle *
droce_qp_handle_new(struct droce_qp *qp, struct ibv_context *ctx, void *qp_context,
		    struct ibv_pd *pd, struct ibv_cq *scq, struct ibv_cq *rcq, struct ibv_srq *srq)
{
	struct droce_qp_handle *h = calloc(1, sizeof(*h));

	if (h == NULL)
		return NULL;
	h->qp = qp;
	h->ibv.qp_base.context = ctx;
	h->ibv.qp_base.qp_context = qp_context;
	h->ibv.qp_base.pd = pd;
	h->ibv.qp_base.send_cq = scq;
	h->ibv.qp_base.recv_cq = rcq;
	h->ibv.qp_base.srq = srq;
	h->ibv.qp_base.qp_num = qp->qpn;
	h->ibv.qp_base.state = droce_qp_state(qp);
	h->ibv.qp_base.qp_type = qp->type;
	pthread_mutex_init(&h->ibv.qp_base.mutex, NULL);
	pthread_cond_init(&h->ibv.qp_base.cond, NULL);
	rte_spinlock_lock(&qp->hlock);
	LIST_INSERT_HEAD(&qp->handle_list, h, link);
	rte_spinlock_unlock(&qp->hlock);
	return h;
}

/* Take (or with @p n = -1, give back) the references a QP holds on the
 * objects it was created with. */
static void
qp_refs(struct droce_qp *qp, int n)
{
	/* An XRC target's SRQ and CQ are taken per packet, not held. */
	bool xrc_tgt = qp->type == IBV_QPT_XRC_RECV;

	if (qp->scq != NULL)
		__atomic_add_fetch(&qp->scq->users, n, __ATOMIC_ACQ_REL);
	if (qp->rcq != NULL && !xrc_tgt)
		__atomic_add_fetch(&qp->rcq->users, n, __ATOMIC_ACQ_REL);
	if (qp->srq != NULL && !xrc_tgt)
		__atomic_add_fetch(&qp->srq->users, n, __ATOMIC_ACQ_REL);
	if (qp->xrcd != NULL)
		__atomic_add_fetch(&qp->xrcd->users, n, __ATOMIC_ACQ_REL);
	if (qp->pd != NULL)
		__atomic_add_fetch(&droce_pd_of(qp->pd)->users, n, __ATOMIC_ACQ_REL);
}

/* Take a QP that never got to anyone out of the QPN table again. */
static void
qp_unpublish_new(struct droce_dev *d, struct droce_qp *qp)
{
	int32_t pos = droce_num_table_remove(&d->qpt, qp->qpn);

	/* An engine may have looked the number up for a stray packet. */
	droce_dev_sync(d);
	droce_num_table_release(&d->qpt, pos);
}

/* Create a QP; with @p qpn non-zero, under that fixed number (QP1). */
static struct ibv_qp *
qp_create(struct ibv_context *ctx, struct ibv_qp_init_attr_ex *ax, uint32_t qpn)
{
	struct droce_dev *d = droce_dev_of_ctx(ctx);
	struct ibv_qp_cap *cap = &ax->cap;
	bool has_sq = ax->qp_type != IBV_QPT_XRC_RECV;
	bool has_rq = ax->qp_type != IBV_QPT_XRC_RECV && ax->qp_type != IBV_QPT_XRC_SEND &&
		      ax->srq == NULL;
	struct droce_qp_handle *h;
	struct droce_qp *qp;
	uint32_t sq_stride, rq_stride;
	int rc = qp_check_init(ax);

	if (rc != 0) {
		errno = rc;
		return NULL;
	}
	qp = calloc(1, sizeof(*qp));
	if (qp == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	if (!has_sq)
		cap->max_send_wr = cap->max_send_sge = cap->max_inline_data = 0;
	if (!has_rq)
		cap->max_recv_wr = cap->max_recv_sge = 0;
	/* Report what we give, as providers do: at least one SGE, and inline
	 * room up to what the SGE list takes anyway. */
	cap->max_send_sge = RTE_MAX(cap->max_send_sge, 1u);
	cap->max_recv_sge = RTE_MAX(cap->max_recv_sge, 1u);
	sq_stride = RTE_ALIGN_CEIL(sizeof(struct droce_send_wqe) +
				   RTE_MAX(cap->max_send_sge * sizeof(struct ibv_sge),
					   cap->max_inline_data), 64);
	if (has_sq)
		cap->max_inline_data = RTE_MIN(sq_stride - sizeof(struct droce_send_wqe),
					       (size_t)DROCE_MAX_INLINE);
	rq_stride = RTE_ALIGN_CEIL(sizeof(struct droce_recv_wqe) +
				   RTE_MAX(cap->max_recv_sge, DROCE_MAX_SGE) * sizeof(struct ibv_sge),
				   16);
	rc = droce_wq_init(&qp->sq, cap->max_send_wr, sq_stride);
	if (rc == 0 &&
	    (qp->sq_quiet = calloc(droce_sq_quiet_words(qp->sq.mask), sizeof(uint64_t))) == NULL)
		rc = -ENOMEM;
	if (rc == 0)
		rc = droce_wq_init(&qp->rq, cap->max_recv_wr, rq_stride);
	/* Receives are copied out here when a message starts: room for the
	 * largest WQE any SRQ could hand over. */
	if (rc == 0 && (qp->rwqe = malloc(rq_stride)) == NULL)
		rc = -ENOMEM;
	if (rc != 0)
		goto fail;
	qp->sq.max_sge = cap->max_send_sge;
	qp->sq.max_inline = cap->max_inline_data;
	qp->rq.max_sge = cap->max_recv_sge;
	qp->type = ax->qp_type;
	qp->state = IBV_QPS_RESET;
	qp->idle = 1;
	pthread_mutex_init(&qp->mutex, NULL);
	rte_spinlock_init(&qp->hlock);
	LIST_INIT(&qp->handle_list);
	qp->handles = 1;
	qp->dev = d;
	qp->pd = ax->qp_type != IBV_QPT_XRC_RECV ? ax->pd : NULL;
	qp->pd_handle = qp->pd != NULL ? qp->pd->handle : 0;
	/* A thread domain: one poster per queue, whatever DROCE_SINGLE_THREADED says. */
	if (droce_pd_single_thread(qp->pd))
		qp->sq.single_producer = qp->rq.single_producer = true;
	qp->scq = has_sq ? droce_cq_of(ax->send_cq) : NULL;
	qp->rcq = has_rq || ax->srq != NULL ? droce_cq_of(ax->recv_cq) : NULL;
	qp->srq = ax->qp_type != IBV_QPT_XRC_SEND && ax->srq != NULL ? droce_srq_of(ax->srq) : NULL;
	qp->xrcd = ax->qp_type == IBV_QPT_XRC_RECV ? droce_xrcd_of(ax->xrcd) : NULL;
	qp->sq_sig_all = ax->sq_sig_all != 0;
	qp->send_opcodes = droce_send_opcodes(ax->qp_type);
	qp->send_plain = droce_send_plain_opcodes(ax->qp_type);
	/* UD has no path MTU attribute: datagrams use the port's. */
	qp->mtu = droce_port_mtu(d->port);
	qp->attr.cap = *cap;
	/* The owner engine, and a QPN it owns (droce_qpn_engine()); a fixed
	 * QPN (QP1) belongs to the engine its number names. */
	if (qpn != 0) {
		qp->engine = d->engines[droce_qpn_engine(qpn, d->nb_engines)];
		qp->qpn = qpn;
		rc = droce_num_table_add_at(&d->qpt, qp, qpn);
	} else {
		qp->engine = droce_dev_engine_pick(d, qp->type, qp->srq);
		rc = droce_num_table_add_in(&d->qpt, qp, d->nb_engines - 1, qp->engine->queue,
					    &qp->qpn);
	}
	if (rc != 0)
		goto fail;
	/* A fixed UDP source port per QP, from the range RoCEv2 reserves for
	 * entropy (0xC000 and up), as rxe does. */
	h = droce_qp_handle_new(qp, ctx, ax->qp_context, ax->pd, qp->scq ? ax->send_cq : NULL,
				qp->rcq ? ax->recv_cq : NULL, qp->srq ? ax->srq : NULL);
	if (h == NULL) {
		qp_unpublish_new(d, qp);
		rc = -ENOMEM;
		goto fail;
	}
	if (ax->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) {
		rc = droce_qpx_init(h, ax->send_ops_flags);
		if (rc != 0) {
			/* Nothing refers to the QP yet: undo by hand. */
			LIST_REMOVE(h, link);
			free(h);
			qp_unpublish_new(d, qp);
			rc = -rc;
			goto fail;
		}
	}
	qp_refs(qp, 1);
	droce_dev_engine_qps(d, qp->engine, 1);
	return &h->ibv.qp_base;
fail:
	free(qp->sq.buf);
	free(qp->sq_quiet);
	free(qp->rq.buf);
	free(qp->rwqe);
	free(qp);
	errno = -rc;
	return NULL;
}

struct ibv_qp *
ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *ia)
{
	struct ibv_qp_init_attr_ex ax = {
		.qp_context = ia->qp_context,
		.send_cq = ia->send_cq,
		.recv_cq = ia->recv_cq,
		.srq = ia->srq,
		.cap = ia->cap,
		.qp_type = ia->qp_type,
		.sq_sig_all = ia->sq_sig_all,
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = pd,
	};
	struct ibv_qp *qp = qp_create(pd->context, &ax, 0);

	if (qp != NULL)
		ia->cap = ax.cap;
	return qp;
}

struct ibv_qp *
droce_create_qp_ex(struct ibv_context *ctx, struct ibv_qp_init_attr_ex *ax)
{
	return qp_create(ctx, ax, 0);
}

struct ibv_qp *
droce_create_special_qp(struct ibv_context *ctx, struct ibv_qp_init_attr_ex *ax, uint32_t qpn)
{
	return qp_create(ctx, ax, qpn);
}

/* Clear everything the engine keeps in the QP (it is in RESET and the
 * engine let go of it). */
static void
qp_reset_engine_state(struct droce_qp *qp)
{
	qp->sq.prod = qp->sq.cons = qp->sq.cons_seen = 0;
	qp->rq.prod = qp->rq.cons = qp->rq.cons_seen = 0;
	memset(&qp->req, 0, sizeof(qp->req));
	memset(&qp->comp, 0, sizeof(qp->comp));
	memset(qp->sq_quiet, 0, droce_sq_quiet_words(qp->sq.mask) * sizeof(uint64_t));
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
		qp->resp.epsn = qp->resp.acked_psn = a->rq_psn;
	}
	if (mask & IBV_QP_SQ_PSN) {
		s->sq_psn = a->sq_psn;
		qp->req.psn = qp->comp.psn = qp->comp.acked = a->sq_psn;
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

/*
 * The attributes an XRC QP's type has no use for, which the kernel's
 * uverbs takes out of the mask before it checks the transition
 * (modify_qp_mask() in drivers/infiniband/core/uverbs_cmd.c): an
 * initiator has no responder (a destination's reads and RNR timer), a
 * target no requester (reads in flight, retry counts). Programs written
 * for RC set them on XRC QPs too, perftest's -c XRC among them; they are
 * ignored, not refused.
 */
static int
qp_modify_mask(enum ibv_qp_type type, int mask)
{
	switch (type) {
	case IBV_QPT_XRC_SEND:
		return mask & ~(IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
	case IBV_QPT_XRC_RECV:
		return mask & ~(IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY);
	default:
		return mask;
	}
}

int
ibv_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int mask)
{
	struct droce_qp *qp = droce_qp_of(ibqp);
	struct droce_dev *d = qp->dev;
	enum ibv_qp_state cur, next;
	int rc;

	if (__atomic_load_n(&qp->stack_owned, __ATOMIC_ACQUIRE))
		return EPERM;
	mask = qp_modify_mask(qp->type, mask);
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
	if (next == IBV_QPS_SQD)
		qp->req.sqd_notified = false;
	if (next == IBV_QPS_RESET && droce_qp_state(qp) != IBV_QPS_RESET) {
		__atomic_store_n(&qp->state, IBV_QPS_RESET, __ATOMIC_RELEASE);
		/* Wait out engine iterations that saw the old state. */
		droce_dev_sync(d);
		qp_reset_engine_state(qp);
	}
	qp_apply(qp, attr, mask);
	qp->attr.qp_state = next;
	qp->attr.cur_qp_state = next;
	__atomic_store_n(&qp->state, next, __ATOMIC_RELEASE);
	ibqp->state = next;
	if (next == IBV_QPS_ERR || next == IBV_QPS_RTS || next == IBV_QPS_RTR || next == IBV_QPS_SQD)
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

static void
qp_free(struct droce_qp *qp)
{
	free(qp->sq.buf);
	free(qp->sq_quiet);
	free(qp->rq.buf);
	free(qp->rwqe);
	free(qp);
}

unsigned
droce_dev_qps_reap(struct droce_dev *d)
{
	struct droce_qp *qp, *next;
	unsigned kept = 0;

	pthread_mutex_lock(&d->lock);
	for (qp = LIST_FIRST(&d->kept_qps); qp != NULL; qp = next) {
		next = LIST_NEXT(qp, kept_link);
		/* A frame's free callback lets go of the QP with this count,
		 * after its WQE's (zc_free_cb()): 0 means nothing touches it. */
		if (__atomic_load_n(&qp->zc_refs, __ATOMIC_ACQUIRE) != 0) {
			kept++;
			continue;
		}
		LIST_REMOVE(qp, kept_link);
		qp_free(qp);
	}
	pthread_mutex_unlock(&d->lock);
	return kept;
}

/*
 * The lifetime DESIGN.md describes: error state, unpublish the QPN, one
 * grace period, wait for the engine to drop its references (running its
 * iterations here when no other thread does), flush, free. Zero-copy
 * frames may still point into its WQEs (their free callback counts them
 * off on the QP) where whoever holds them does not let go: a ring's
 * reader that stopped reading, a NIC that reclaims sent frames only when
 * it needs descriptors. The memory then stays on the device's list until
 * they leave (droce_dev_qps_reap()); the rest of the QP goes now, so the
 * destroy returns and its CQs and PD are free to go too.
 */
static void
qp_teardown(struct droce_qp *qp)
{
	struct droce_dev *d = qp->dev;
	bool kept;
	int32_t pos;

	__atomic_store_n(&qp->destroying, true, __ATOMIC_RELEASE);
	__atomic_store_n(&qp->state, IBV_QPS_ERR, __ATOMIC_RELEASE);
	if (qp->type == IBV_QPT_UD)
		droce_port_mcast_detach_all(d->port, qp->qpn);
	pos = droce_num_table_remove(&d->qpt, qp->qpn);
	droce_dev_engine_qps(d, qp->engine, -1);
	droce_dev_sync(d);
	while (__atomic_load_n(&qp->engine_refs, __ATOMIC_ACQUIRE) != 0)
		if (droce_engine_poll(qp->engine) < 0)
			sched_yield();
	/* One more grace period: the iteration that dropped the last
	 * reference may still be running. */
	droce_dev_sync(d);
	/* Frames in TX queues may still point into its WQEs' buffers and
	 * count on the QP: most leave with the engine's TX bursts. */
	kept = !droce_dev_wait_refs(d, &qp->zc_refs, DROCE_QP_DESTROY_WAIT_MS);
	if (kept)
		DROCE_LOG(WARNING, "QP 0x%x: %u frames still in TX queues point into it: "
			  "its memory stays until they leave", qp->qpn,
			  __atomic_load_n(&qp->zc_refs, __ATOMIC_RELAXED));
	if (pos >= 0)
		droce_num_table_release(&d->qpt, pos);
	droce_qp_flush(qp);
	qp_refs(qp, -1);
	if (kept) {
		pthread_mutex_lock(&d->lock);
		LIST_INSERT_HEAD(&d->kept_qps, qp, kept_link);
		pthread_mutex_unlock(&d->lock);
	} else {
		qp_free(qp);
	}
	droce_dev_qps_reap(d);
}

/*
 * Destroy (or close, for an opened XRC target QP) one handle. The real QP
 * goes with its last handle: the creator's is one reference among others,
 * as with the kernel's ib_close_qp().
 */
void
droce_qp_on_destroy(struct ibv_qp *ibqp, void (*fn)(void *arg), void *arg)
{
	struct droce_qp_handle *h = (struct droce_qp_handle *)ibqp;

	h->on_destroy = fn;
	h->on_destroy_arg = arg;
}

int
ibv_destroy_qp(struct ibv_qp *ibqp)
{
	struct droce_qp_handle *h = (struct droce_qp_handle *)ibqp;
	struct droce_qp *qp = h->qp;
	uint32_t left;

	if (__atomic_load_n(&qp->stack_owned, __ATOMIC_ACQUIRE))
		return EPERM;
	if (h->on_destroy != NULL)
		h->on_destroy(h->on_destroy_arg);
	pthread_mutex_lock(&qp->mutex);
	left = --qp->handles;
	rte_spinlock_lock(&qp->hlock);
	LIST_REMOVE(h, link);
	rte_spinlock_unlock(&qp->hlock);
	pthread_mutex_unlock(&qp->mutex);
	/* No event reaches this handle from here on: forget or await them. */
	droce_events_retire(ibqp->context, &(struct ibv_async_event){
		.event_type = IBV_EVENT_QP_FATAL, .element.qp = ibqp });
	if (left == 0)
		qp_teardown(qp);
	droce_qpx_fini(h);
	free(h);
	return 0;
}
