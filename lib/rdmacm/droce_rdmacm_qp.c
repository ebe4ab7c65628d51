/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * QPs on IDs: rdma_create_qp() (with CQs and completion channels made
 * here when the caller gives none, as rdma_create_ep() users expect),
 * rdma_init_qp_attr() (the attributes of INIT, RTR and RTS from what the
 * CM exchange settled, as the kernel's cma.c and cm.c derive them), and
 * the transitions the connection makes with them. A UD QP (RDMA_PS_UDP)
 * has no peer: it gets the port space's Q_Key in INIT and goes to RTS at
 * once, as rdma-core's librdmacm takes it there.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "droce_rdmacm_priv.h"

/* The CQs and channels an ID gets when rdma_create_qp() is given none. */
static int
qp_make_cqs(struct cma_id *c, struct ibv_qp_init_attr *a)
{
	struct rdma_cm_id *id = &c->id;
	int send = (int)(a->cap.max_send_wr > 0 ? a->cap.max_send_wr : 1);
	int recv = (int)(a->cap.max_recv_wr > 0 ? a->cap.max_recv_wr : 1);

	if (a->send_cq != NULL && a->recv_cq != NULL)
		return 0;
	c->own_cqs = true;
	if (a->recv_cq == NULL) {
		id->recv_cq_channel = ibv_create_comp_channel(id->verbs);
		if (id->recv_cq_channel == NULL ||
		    (id->recv_cq = ibv_create_cq(id->verbs, recv, id, id->recv_cq_channel, 0)) == NULL)
			return -1;
		a->recv_cq = id->recv_cq;
	}
	if (a->send_cq == NULL) {
		id->send_cq_channel = ibv_create_comp_channel(id->verbs);
		if (id->send_cq_channel == NULL ||
		    (id->send_cq = ibv_create_cq(id->verbs, send, id, id->send_cq_channel, 0)) == NULL)
			return -1;
		a->send_cq = id->send_cq;
	}
	return 0;
}

static void
qp_free_cqs(struct cma_id *c)
{
	struct rdma_cm_id *id = &c->id;

	if (!c->own_cqs)
		return;
	if (id->recv_cq != NULL)
		ibv_destroy_cq(id->recv_cq);
	if (id->recv_cq_channel != NULL)
		ibv_destroy_comp_channel(id->recv_cq_channel);
	if (id->send_cq != NULL)
		ibv_destroy_cq(id->send_cq);
	if (id->send_cq_channel != NULL)
		ibv_destroy_comp_channel(id->send_cq_channel);
	id->recv_cq = id->send_cq = NULL;
	id->recv_cq_channel = id->send_cq_channel = NULL;
	c->own_cqs = false;
}

/* The application destroys the ID's QP itself (ibv_destroy_qp()): no CM
 * event may touch it from here on. */
static void
qp_gone(void *arg)
{
	struct cma_id *c = arg;

	droce_cm_lock(c->dev->cm);
	c->id.qp = NULL;
	droce_cm_unlock(c->dev->cm);
}

int
rdma_create_qp(struct rdma_cm_id *id, struct ibv_pd *pd, struct ibv_qp_init_attr *qp_init_attr)
{
	struct cma_id *c = cma_id_of(id);
	struct ibv_qp_attr qa;
	struct ibv_qp *qp;
	int mask;

	if (c->dev == NULL || qp_init_attr == NULL || id->qp != NULL)
		return cma_fail(EINVAL);
	/* A UD QP for a UDP ID, connected ones for the others. */
	if ((qp_init_attr->qp_type == IBV_QPT_UD) != cma_is_ud(id) ||
	    (qp_init_attr->qp_type != IBV_QPT_RC && qp_init_attr->qp_type != IBV_QPT_UC &&
	     qp_init_attr->qp_type != IBV_QPT_UD))
		return cma_fail(EOPNOTSUPP);
	pd = pd != NULL ? pd : id->pd != NULL ? id->pd : c->dev->pd;
	if (pd->context != id->verbs || qp_make_cqs(c, qp_init_attr) != 0)
		goto fail;
	if (qp_init_attr->srq == NULL)
		qp_init_attr->srq = id->srq;
	qp = ibv_create_qp(pd, qp_init_attr);
	if (qp == NULL)
		goto fail;
	id->qp = qp;
	id->pd = pd;
	id->qp_type = qp_init_attr->qp_type;
	qa.qp_state = IBV_QPS_INIT;
	if (rdma_init_qp_attr(id, &qa, &mask) != 0 || ibv_modify_qp(qp, &qa, mask) != 0 ||
	    (cma_is_ud(id) && cma_qp_ready(c) != 0)) {
		ibv_destroy_qp(qp);
		id->qp = NULL;
		goto fail;
	}
	droce_qp_on_destroy(qp, qp_gone, c);
	return 0;
fail:
	if (errno == 0)
		errno = EINVAL;
	qp_free_cqs(c);
	return -1;
}

int
rdma_create_qp_ex(struct rdma_cm_id *id, struct ibv_qp_init_attr_ex *qp_init_attr)
{
	struct ibv_qp_init_attr a;

	/* The plain attributes only: what droce's QPs take from the _ex form. */
	if (qp_init_attr == NULL || (qp_init_attr->comp_mask & ~IBV_QP_INIT_ATTR_PD))
		return cma_fail(EOPNOTSUPP);
	memset(&a, 0, sizeof(a));
	a.qp_context = qp_init_attr->qp_context;
	a.send_cq = qp_init_attr->send_cq;
	a.recv_cq = qp_init_attr->recv_cq;
	a.srq = qp_init_attr->srq;
	a.cap = qp_init_attr->cap;
	a.qp_type = qp_init_attr->qp_type;
	a.sq_sig_all = qp_init_attr->sq_sig_all;
	if (rdma_create_qp(id, qp_init_attr->pd, &a) != 0)
		return -1;
	qp_init_attr->cap = a.cap;
	return 0;
}

void
rdma_destroy_qp(struct rdma_cm_id *id)
{
	struct cma_id *c = cma_id_of(id);
	struct ibv_qp *qp;

	/* CM events (a DREQ or REJ moves the QP to the error state) arrive
	 * under the device's CM lock on QP1's thread: unhook the QP under
	 * that lock first, so no event touches it once it is destroyed. */
	if (c->dev != NULL)
		droce_cm_lock(c->dev->cm);
	qp = id->qp;
	id->qp = NULL;
	if (c->dev != NULL)
		droce_cm_unlock(c->dev->cm);
	if (qp != NULL) {
		droce_qp_on_destroy(qp, NULL, NULL);
		ibv_destroy_qp(qp);
	}
	qp_free_cqs(c);
}

/* A UD QP's attributes: the Q_Key in INIT, nothing from a peer after. */
static int
ud_qp_attr(struct ibv_qp_attr *qa, int *mask)
{
	switch (qa->qp_state) {
	case IBV_QPS_INIT:
		qa->pkey_index = 0;
		qa->port_num = 1;
		qa->qkey = DROCE_RDMA_UDP_QKEY;
		*mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY;
		return 0;
	case IBV_QPS_RTR:
	case IBV_QPS_ERR:
		*mask = IBV_QP_STATE;
		return 0;
	case IBV_QPS_RTS:
		qa->sq_psn = 0;
		*mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
		return 0;
	default:
		return cma_fail(EINVAL);
	}
}

int
rdma_init_qp_attr(struct rdma_cm_id *id, struct ibv_qp_attr *qa, int *mask)
{
	struct cma_id *c = cma_id_of(id);
	const struct cma_conn *k = &c->conn;
	enum ibv_qp_state st = qa->qp_state;
	int sgid;

	if (c->dev == NULL || mask == NULL)
		return cma_fail(EINVAL);
	memset(qa, 0, sizeof(*qa));
	qa->qp_state = st;
	if (cma_is_ud(id))
		return ud_qp_attr(qa, mask);
	switch (st) {
	case IBV_QPS_INIT:
		/* cma.c: remote writes always, reads with responder resources,
		 * which rdma_accept() may still change: allow them. */
		qa->pkey_index = 0;
		qa->port_num = 1;
		qa->qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				      IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
		*mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
		return 0;
	case IBV_QPS_RTR:
		sgid = cma_dev_gid_index(c->dev, &id->route.addr.addr.ibaddr.sgid);
		if (sgid < 0 || k->remote_qpn == 0)
			break;
		qa->path_mtu = (enum ibv_mtu)k->mtu;
		qa->dest_qp_num = k->remote_qpn;
		/* The kernel's CM (and rxe) read each side's starting PSN as
		 * the one its *peer* sends with: in rxe's capture the active
		 * side sends from the REP's PSN, the passive side from the REQ's. */
		qa->rq_psn = k->psn;
		qa->max_dest_rd_atomic = k->responder_resources;
		/* cm.c leaves the RNR NAK timer at 0 (655 ms) on RoCE: so do we. */
		qa->min_rnr_timer = 0;
		qa->ah_attr.is_global = 1;
		qa->ah_attr.port_num = 1;
		qa->ah_attr.grh.dgid = id->route.addr.addr.ibaddr.dgid;
		qa->ah_attr.grh.sgid_index = (uint8_t)sgid;
		qa->ah_attr.grh.hop_limit = 64;
		qa->ah_attr.grh.traffic_class = c->tos;
		*mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
		return 0;
	case IBV_QPS_RTS:
		if (k->remote_qpn == 0)
			break;
		qa->sq_psn = k->remote_psn;
		qa->timeout = k->ack_timeout;
		qa->retry_cnt = k->retry_count;
		qa->rnr_retry = k->rnr_retry_count;
		qa->max_rd_atomic = k->initiator_depth;
		*mask = IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
		return 0;
	case IBV_QPS_ERR:
		*mask = IBV_QP_STATE;
		return 0;
	default:
		break;
	}
	return cma_fail(EINVAL);
}

/* Move the ID's QP to @p st with the attributes rdma_init_qp_attr() gives. */
int
cma_qp_to(struct cma_id *c, enum ibv_qp_state st)
{
	struct ibv_qp_attr qa = { .qp_state = st };
	int mask, rc;

	if (c->id.qp == NULL)
		return 0;
	if (rdma_init_qp_attr(&c->id, &qa, &mask) != 0)
		return -errno;
	rc = ibv_modify_qp(c->id.qp, &qa, mask);
	return -rc;
}

int
cma_qp_ready(struct cma_id *c)
{
	int rc = cma_qp_to(c, IBV_QPS_RTR);

	return rc == 0 ? cma_qp_to(c, IBV_QPS_RTS) : rc;
}

int
rdma_create_srq(struct rdma_cm_id *id, struct ibv_pd *pd, struct ibv_srq_init_attr *attr)
{
	struct cma_id *c = cma_id_of(id);
	struct ibv_srq *srq;

	if (c->dev == NULL || attr == NULL)
		return cma_fail(EINVAL);
	srq = ibv_create_srq(pd != NULL ? pd : c->dev->pd, attr);
	if (srq == NULL)
		return -1;
	id->srq = srq;
	id->pd = pd != NULL ? pd : c->dev->pd;
	return 0;
}

int
rdma_create_srq_ex(struct rdma_cm_id *id, struct ibv_srq_init_attr_ex *attr)
{
	struct ibv_srq_init_attr a;

	/* Basic SRQs only, as droce's rdma_create_qp() takes RC and UC. */
	if (attr == NULL || (attr->comp_mask & ~(uint32_t)IBV_SRQ_INIT_ATTR_PD) ||
	    ((attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE) && attr->srq_type != IBV_SRQT_BASIC))
		return cma_fail(EOPNOTSUPP);
	memset(&a, 0, sizeof(a));
	a.srq_context = attr->srq_context;
	a.attr = attr->attr;
	return rdma_create_srq(id, (attr->comp_mask & IBV_SRQ_INIT_ATTR_PD) ? attr->pd : NULL, &a);
}

void
rdma_destroy_srq(struct rdma_cm_id *id)
{
	if (id->srq != NULL)
		ibv_destroy_srq(id->srq);
	id->srq = NULL;
}
