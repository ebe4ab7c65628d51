/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RDMA_PS_UDP: no connection, only service ID resolution (SIDR), as the
 * kernel's cma.c does it. rdma_connect() sends a SIDR REQ for the port's
 * service ID with the cma_hdr in front of the private data; the listener
 * gets CONNECT_REQUEST on a new ID, and rdma_accept() answers with a
 * SIDR REP naming its UD QP and the Q_Key of the port space
 * (RDMA_UDP_QKEY), rdma_reject() with status REJECT. The active side
 * gets ESTABLISHED with the peer's QPN, Q_Key and an address handle's
 * attributes, or UNREACHABLE: with the REP's status (1: nobody listens,
 * 2: rejected) or -ETIMEDOUT when no REP came after every retry.
 */
#include <errno.h>
#include <string.h>

#include "droce_rdmacm_priv.h"

/* rdma_cm's private data in a SIDR REQ, after the cma_hdr. */
#define CMA_SIDR_REQ_PDATA (DROCE_CM_SIDR_REQ_PDATA - DROCE_CMA_HDR_SIZE)

int
cma_ud_connect(struct cma_id *c, const struct rdma_conn_param *param)
{
	const struct droce_cm_timing t = cma_timing();
	struct rdma_cm_id *id = &c->id;
	struct droce_cm_sidr_req req;
	struct droce_cma_hdr h;
	uint8_t len = param != NULL ? param->private_data_len : 0;
	int rc;

	if (c->dev == NULL || id->route.path_rec == NULL || len > CMA_SIDR_REQ_PDATA)
		return cma_fail(EINVAL);
	memset(&req, 0, sizeof(req));
	req.pkey = DROCE_GSI_PKEY;
	req.service_id = DROCE_CMA_SERVICE_ID(id->ps, ntohs(rdma_get_dst_port(id)));
	cma_hdr_of(id, &h);
	droce_cma_hdr_encode(&h, req.private_data);
	if (len > 0)
		memcpy(req.private_data + DROCE_CMA_HDR_SIZE, param->private_data, len);
	droce_cm_lock(c->dev->cm);
	if (c->cm_id != NULL) {
		droce_cm_unlock(c->dev->cm);
		return cma_fail(EISCONN);
	}
	c->cm_id = droce_cm_id_create(c->dev->cm, c);
	/* cma.c: the response timeout (about 4 s a try), CMA_MAX_CM_RETRIES. */
	rc = c->cm_id == NULL ? -ENOMEM :
	     droce_cm_send_sidr_req(c->cm_id, id->route.addr.addr.ibaddr.dgid.raw, &req,
				    droce_cm_time_us(t.cm_response_timeout), CMA_MAX_CM_RETRIES);
	droce_cm_unlock(c->dev->cm);
	if (rc != 0)
		return cma_fail(-rc);
	return c->sync ? cma_event_wait(c, RDMA_CM_EVENT_ESTABLISHED) : 0;
}

/* Called with the CM lock held. */
static int
ud_rep(struct cma_id *c, uint8_t status, uint32_t qpn, const void *pdata, uint8_t len)
{
	struct droce_cm_sidr_rep rep;

	if (len > DROCE_CM_SIDR_REP_PDATA)
		return -EINVAL;
	memset(&rep, 0, sizeof(rep));
	rep.status = status;
	if (status == DROCE_SIDR_SUCCESS) {
		rep.qpn = qpn;
		rep.qkey = DROCE_RDMA_UDP_QKEY;
	}
	if (len > 0)
		memcpy(rep.private_data, pdata, len);
	return droce_cm_send_sidr_rep(c->cm_id, &rep);
}

int
cma_ud_accept(struct cma_id *c, const struct rdma_conn_param *param)
{
	struct rdma_cm_id *id = &c->id;
	int rc;

	if (id->qp == NULL && (param == NULL || param->qp_num == 0))
		return cma_fail(EINVAL);
	droce_cm_lock(c->dev->cm);
	rc = ud_rep(c, DROCE_SIDR_SUCCESS, id->qp != NULL ? id->qp->qp_num : param->qp_num,
		    param != NULL ? param->private_data : NULL,
		    param != NULL ? param->private_data_len : 0);
	droce_cm_unlock(c->dev->cm);
	if (id->event != NULL) {
		rdma_ack_cm_event(id->event);
		id->event = NULL;
	}
	/* Nothing follows a SIDR REP: the passive side gets no ESTABLISHED. */
	return rc != 0 ? cma_fail(-rc) : 0;
}

int
cma_ud_reject(struct cma_id *c, const void *pdata, uint8_t len)
{
	return ud_rep(c, DROCE_SIDR_REJECT, 0, pdata, len);
}

/* A SIDR REQ for listener @p l: a new ID, and CONNECT_REQUEST on the listener's channel. */
static void
on_sidr_req(struct cma_dev *d, struct droce_cm_id *cm_id, struct cma_id *l,
	    const struct droce_cm_sidr_req *req)
{
	struct droce_cm_sidr_rep rep = { .status = DROCE_SIDR_REJECT };
	struct ibv_port_attr pa;
	struct droce_cma_hdr h;
	struct cma_id *c;

	if (droce_cma_hdr_decode(req->private_data, &h) != 0 ||
	    ibv_query_port(d->verbs, 1, &pa) != 0 ||
	    (c = cma_conn_id(d, cm_id, l, &h, (uint8_t)pa.active_mtu)) == NULL) {
		droce_cm_send_sidr_rep(cm_id, &rep);
		return;
	}
	cma_event_queue_ud(c, RDMA_CM_EVENT_CONNECT_REQUEST, 0, NULL,
			   req->private_data + DROCE_CMA_HDR_SIZE, CMA_SIDR_REQ_PDATA, l);
}

void
cma_ud_ah_attr(const struct cma_id *c, const union ibv_gid *dgid, int sgid, struct ibv_ah_attr *ah)
{
	memset(ah, 0, sizeof(*ah));
	ah->is_global = 1;
	ah->port_num = 1;
	ah->grh.dgid = *dgid;
	ah->grh.sgid_index = (uint8_t)sgid;
	ah->grh.hop_limit = 64;
	ah->grh.traffic_class = c->tos;
}

/* The active side's answer: the peer's QP, Q_Key and the way to it. */
static void
on_sidr_rep(struct cma_id *c, const struct droce_cm_sidr_rep *rep)
{
	struct rdma_cm_id *id = &c->id;
	struct rdma_ud_param p = { .qp_num = rep->qpn, .qkey = rep->qkey };
	int sgid = cma_dev_gid_index(c->dev, &id->route.addr.addr.ibaddr.sgid);

	if (rep->status != DROCE_SIDR_SUCCESS || sgid < 0) {
		cma_event_queue_ud(c, RDMA_CM_EVENT_UNREACHABLE,
				   rep->status != DROCE_SIDR_SUCCESS ? rep->status : -EADDRNOTAVAIL,
				   NULL, rep->private_data, DROCE_CM_SIDR_REP_PDATA, NULL);
		return;
	}
	cma_ud_ah_attr(c, &id->route.addr.addr.ibaddr.dgid, sgid, &p.ah_attr);
	cma_event_queue_ud(c, RDMA_CM_EVENT_ESTABLISHED, 0, &p, rep->private_data,
			   DROCE_CM_SIDR_REP_PDATA, NULL);
}

void
cma_ud_event(struct cma_dev *d, struct droce_cm_id *cm_id, const struct droce_cm_event *ev)
{
	struct cma_id *c = droce_cm_id_context(cm_id);

	switch (ev->type) {
	case DROCE_CM_EV_SIDR_REQ_RECEIVED:
		on_sidr_req(d, cm_id, droce_cm_id_context(ev->listener), &ev->msg->sidr_req);
		break;
	case DROCE_CM_EV_SIDR_REP_RECEIVED:
		on_sidr_rep(c, &ev->msg->sidr_rep);
		break;
	case DROCE_CM_EV_SIDR_REQ_ERROR:
		cma_event_queue_ud(c, RDMA_CM_EVENT_UNREACHABLE, -ETIMEDOUT, NULL, NULL, 0, NULL);
		break;
	default:
		break;
	}
}
