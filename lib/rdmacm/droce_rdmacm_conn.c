/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Connections: rdma_connect()/rdma_accept()/rdma_reject()/rdma_disconnect()
 * as IB CM messages, and the CM's events as rdma_cm events, the way the
 * kernel's cma.c maps them (REJ: REJECTED with the reason as status; no
 * answer to a REQ or REP: UNREACHABLE, -ETIMEDOUT; DREQ, DREP or a DREQ
 * nobody answered: DISCONNECTED).
 *
 * What the two ends negotiate, as cm.c does: each side's QP gets the
 * peer's QPN; each side sends from the starting PSN the *peer's* message
 * carries and expects its own (rxe's capture shows it: the active side
 * sends from the REP's PSN, the passive side from the REQ's); the REQ's initiator depth is the passive
 * side's responder resources (max_dest_rd_atomic) and the other way
 * round; the REQ's retry count is both sides' ACK retry count; the RNR
 * retry count is the one the *other* side sent (REQ's for the passive
 * side, REP's for the active side); the path MTU is the smaller of the
 * REQ's and the port's; the ACK timeout is the REQ's local ACK timeout
 * (RoCE's packet lifetime plus one).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "droce_rdmacm_priv.h"

static uint32_t
random_psn(void)
{
	static __thread unsigned seed;

	if (seed == 0)
		seed = (unsigned)droce_gsi_now_us() ^ (unsigned)(uintptr_t)&seed;
	return (uint32_t)rand_r(&seed) & 0xffffffu;
}

static uint8_t
min7(uint8_t v)
{
	return v > 7 ? 7 : v;
}

void
cma_hdr_of(const struct rdma_cm_id *id, struct droce_cma_hdr *h)
{
	const struct sockaddr *src = &id->route.addr.src_addr;
	const struct sockaddr *dst = &id->route.addr.dst_addr;

	memset(h, 0, sizeof(*h));
	h->ip_version = src->sa_family == AF_INET6 ? 6 : 4;
	h->src_port = ntohs(cma_addr_port(src));
	if (src->sa_family == AF_INET) {
		memcpy(h->src_addr + 12, &((const struct sockaddr_in *)src)->sin_addr, 4);
		memcpy(h->dst_addr + 12, &((const struct sockaddr_in *)dst)->sin_addr, 4);
	} else {
		memcpy(h->src_addr, &((const struct sockaddr_in6 *)src)->sin6_addr, 16);
		memcpy(h->dst_addr, &((const struct sockaddr_in6 *)dst)->sin6_addr, 16);
	}
}

/*
 * The CM's timing for the connections this process starts: the kernel's
 * (RoCE's packet lifetime and cma.c's response timeout, about 6 s a try)
 * unless DROCE_CM_TIMEOUT gives one IBA time exponent for both, which is
 * how tests see a silent peer's retries run out in seconds, not minutes.
 */
struct droce_cm_timing
cma_timing(void)
{
	struct droce_cm_timing t = {
		.packet_life_time = CMA_IBOE_PACKET_LIFETIME,
		.cm_response_timeout = CMA_CM_RESPONSE_TIMEOUT,
	};
	const char *env = getenv("DROCE_CM_TIMEOUT");
	char *end;
	unsigned long v;

	if (env != NULL && env[0] != '\0') {
		v = strtoul(env, &end, 0);
		if (*end == '\0' && v >= 8 && v <= 31)
			t.packet_life_time = t.cm_response_timeout = (uint8_t)v;
	}
	return t;
}

int
rdma_connect(struct rdma_cm_id *id, struct rdma_conn_param *param)
{
	const struct droce_cm_timing t = cma_timing();
	struct cma_id *c = cma_id_of(id);
	struct rdma_conn_param none = { .retry_count = 7, .rnr_retry_count = 7 };
	struct droce_cm_req req;
	struct droce_cma_hdr h;
	int rc;

	if (cma_is_ud(id))
		return cma_ud_connect(c, param);
	param = param != NULL ? param : &none;
	if (c->dev == NULL || id->route.path_rec == NULL ||
	    param->private_data_len > CMA_REQ_PDATA || (id->qp == NULL && param->qp_num == 0))
		return cma_fail(EINVAL);
	memset(&req, 0, sizeof(req));
	req.service_id = DROCE_CMA_SERVICE_ID(id->ps, ntohs(rdma_get_dst_port(id)));
	req.local_qpn = id->qp != NULL ? id->qp->qp_num : param->qp_num;
	req.responder_resources = param->responder_resources;
	req.initiator_depth = param->initiator_depth;
	req.remote_cm_response_timeout = t.cm_response_timeout;
	req.transport_type = id->qp_type == IBV_QPT_UC ? 1 : 0;
	req.end_to_end_flow_control = param->flow_control;
	req.retry_count = min7(param->retry_count);
	req.rnr_retry_count = min7(param->rnr_retry_count);
	req.pkey = DROCE_GSI_PKEY;
	req.path_mtu = id->route.path_rec->mtu;
	req.max_cm_retries = CMA_MAX_CM_RETRIES;
	req.srq = id->srq != NULL || param->srq;
	req.primary.local_lid = req.primary.remote_lid = 0xffff;
	memcpy(req.primary.local_gid, id->route.addr.addr.ibaddr.sgid.raw, 16);
	memcpy(req.primary.remote_gid, id->route.addr.addr.ibaddr.dgid.raw, 16);
	req.primary.hop_limit = 64;
	req.primary.traffic_class = c->tos;
	req.primary.local_ack_timeout = c->conn.ack_timeout != 0 ? c->conn.ack_timeout :
					CMA_IBOE_PACKET_LIFETIME + 1;
	cma_hdr_of(id, &h);
	droce_cma_hdr_encode(&h, req.private_data);
	if (param->private_data_len > 0)
		memcpy(req.private_data + DROCE_CMA_HDR_SIZE, param->private_data,
		       param->private_data_len);

	droce_cm_lock(c->dev->cm);
	if (c->cm_id != NULL) {
		droce_cm_unlock(c->dev->cm);
		return cma_fail(EISCONN);
	}
	c->cm_id = droce_cm_id_create(c->dev->cm, c);
	c->conn.psn = req.starting_psn = random_psn();
	c->conn.mtu = req.path_mtu;
	c->conn.retry_count = req.retry_count;
	c->conn.ack_timeout = req.primary.local_ack_timeout;
	rc = c->cm_id == NULL ? -ENOMEM :
	     droce_cm_send_req(c->cm_id, req.primary.remote_gid, &req, &t);
	droce_cm_unlock(c->dev->cm);
	if (rc != 0)
		return cma_fail(-rc);
	return c->sync ? cma_event_wait(c, RDMA_CM_EVENT_ESTABLISHED) : 0;
}

/* The active side, REP in hand: QP to RTS and RTU, or leave it to rdma_establish(). */
static void
on_rep(struct cma_id *c, const struct droce_cm_rep *rep)
{
	struct rdma_conn_param p = {
		.responder_resources = rep->responder_resources,
		.initiator_depth = rep->initiator_depth,
		.flow_control = rep->end_to_end_flow_control,
		.rnr_retry_count = rep->rnr_retry_count,
		.srq = rep->srq,
		.qp_num = rep->local_qpn,
	};
	int rc;

	c->conn.remote_qpn = rep->local_qpn;
	c->conn.remote_psn = rep->starting_psn;
	c->conn.responder_resources = rep->initiator_depth;
	c->conn.initiator_depth = rep->responder_resources;
	c->conn.rnr_retry_count = rep->rnr_retry_count;
	if (c->id.qp == NULL) {
		cma_event_queue(c, RDMA_CM_EVENT_CONNECT_RESPONSE, 0, &p, rep->private_data,
				DROCE_CM_REP_PDATA, NULL);
		return;
	}
	rc = cma_qp_ready(c);
	if (rc == 0)
		rc = droce_cm_send_rtu(c->cm_id, NULL, 0);
	if (rc != 0) {
		droce_cm_send_rej(c->cm_id, DROCE_REJ_CONSUMER_DEFINED, NULL, 0);
		cma_event_queue(c, RDMA_CM_EVENT_CONNECT_ERROR, rc, NULL, NULL, 0, NULL);
		return;
	}
	cma_event_queue(c, RDMA_CM_EVENT_ESTABLISHED, 0, &p, rep->private_data,
			DROCE_CM_REP_PDATA, NULL);
}

int
rdma_establish(struct rdma_cm_id *id)
{
	struct cma_id *c = cma_id_of(id);
	int rc;

	if (c->dev == NULL || c->cm_id == NULL)
		return cma_fail(EINVAL);
	droce_cm_lock(c->dev->cm);
	rc = cma_qp_ready(c);
	if (rc == 0)
		rc = droce_cm_send_rtu(c->cm_id, NULL, 0);
	droce_cm_unlock(c->dev->cm);
	if (rc != 0)
		return cma_fail(-rc);
	return 0;
}

/* The GID of a cma_hdr address (IPv4 in its last 4 bytes). */
static void
hdr_gid(const uint8_t addr[16], uint8_t ip_version, union ibv_gid *gid)
{
	memcpy(gid->raw, addr, 16);
	if (ip_version == 4) {
		memset(gid->raw, 0, 10);
		gid->raw[10] = gid->raw[11] = 0xff;
	}
}

struct cma_id *
cma_conn_id(struct cma_dev *d, struct droce_cm_id *cm_id, struct cma_id *l,
	    const struct droce_cma_hdr *h, uint8_t mtu)
{
	uint16_t port = cma_addr_port(&l->id.route.addr.src_addr);
	struct rdma_cm_id *nid;
	union ibv_gid gid;
	struct cma_id *c;

	if (rdma_create_id(l->id.channel, &nid, l->id.context, l->id.ps) != 0)
		return NULL;
	c = cma_id_of(nid);
	c->cm_id = cm_id;
	droce_cm_id_set_context(cm_id, c);
	hdr_gid(h->dst_addr, h->ip_version, &gid);
	cma_gid_addr(&gid, port, &nid->route.addr.src_storage);
	hdr_gid(h->src_addr, h->ip_version, &gid);
	cma_gid_addr(&gid, htons(h->src_port), &nid->route.addr.dst_storage);
	c->dev = d;
	nid->verbs = d->verbs;
	nid->port_num = 1;
	cma_addr_gid(&nid->route.addr.src_addr, &nid->route.addr.addr.ibaddr.sgid);
	cma_addr_gid(&nid->route.addr.dst_addr, &nid->route.addr.addr.ibaddr.dgid);
	nid->route.addr.addr.ibaddr.pkey = htons(DROCE_GSI_PKEY);
	nid->route.path_rec = calloc(1, sizeof(*nid->route.path_rec));
	if (nid->route.path_rec != NULL) {
		nid->route.num_paths = 1;
		nid->route.path_rec->sgid = nid->route.addr.addr.ibaddr.sgid;
		nid->route.path_rec->dgid = nid->route.addr.addr.ibaddr.dgid;
		nid->route.path_rec->pkey = htons(DROCE_GSI_PKEY);
		nid->route.path_rec->mtu = mtu;
		nid->route.path_rec->hop_limit = 64;
		nid->route.path_rec->packet_life_time = CMA_IBOE_PACKET_LIFETIME;
	}
	return c;
}

/* A REQ for listener @p l: a new ID, and CONNECT_REQUEST on the listener's channel. */
static void
on_req(struct cma_dev *d, struct droce_cm_id *cm_id, struct cma_id *l,
       const struct droce_cm_req *req)
{
	struct rdma_conn_param p = {
		.responder_resources = req->initiator_depth,
		.initiator_depth = req->responder_resources,
		.flow_control = req->end_to_end_flow_control,
		.retry_count = req->retry_count,
		.rnr_retry_count = req->rnr_retry_count,
		.srq = req->srq,
		.qp_num = req->local_qpn,
	};
	struct ibv_port_attr pa;
	struct droce_cma_hdr h;
	struct cma_id *c;
	uint8_t mtu;

	if (droce_cma_hdr_decode(req->private_data, &h) != 0 || req->transport_type != 0 ||
	    ibv_query_port(d->verbs, 1, &pa) != 0)
		goto reject;
	mtu = req->path_mtu < pa.active_mtu ? req->path_mtu : (uint8_t)pa.active_mtu;
	c = cma_conn_id(d, cm_id, l, &h, mtu);
	if (c == NULL)
		goto reject;
	c->conn.psn = random_psn();
	c->conn.remote_qpn = req->local_qpn;
	c->conn.remote_psn = req->starting_psn;
	c->conn.mtu = mtu;
	c->conn.retry_count = req->retry_count;
	c->conn.rnr_retry_count = req->rnr_retry_count;
	c->conn.ack_timeout = req->primary.local_ack_timeout;
	/* Until rdma_accept() says otherwise: what the REQ asked for. */
	c->conn.responder_resources = req->initiator_depth;
	c->conn.initiator_depth = req->responder_resources;
	cma_event_queue(c, RDMA_CM_EVENT_CONNECT_REQUEST, 0, &p,
			req->private_data + DROCE_CMA_HDR_SIZE, CMA_REQ_PDATA, l);
	return;
reject:
	droce_cm_send_rej(cm_id, DROCE_REJ_CONSUMER_DEFINED, NULL, 0);
}

int
rdma_get_request(struct rdma_cm_id *listen, struct rdma_cm_id **id)
{
	struct cma_id *l = cma_id_of(listen), *c;
	struct rdma_event_channel *ch;
	struct rdma_cm_event *ev;

	if (id == NULL || !l->sync)
		return cma_fail(EINVAL);
	if (rdma_get_cm_event(listen->channel, &ev) != 0)
		return -1;
	if (ev->event != RDMA_CM_EVENT_CONNECT_REQUEST) {
		rdma_ack_cm_event(ev);
		return cma_fail(EINVAL);
	}
	c = cma_id_of(ev->id);
	/* A synchronous listener's connections are synchronous too: each on a
	 * channel of its own from here on. */
	ch = rdma_create_event_channel();
	if (ch == NULL) {
		rdma_ack_cm_event(ev);
		return -1;
	}
	droce_cm_lock(c->dev->cm);
	c->id.channel = ch;
	c->sync = true;
	droce_cm_unlock(c->dev->cm);
	/* Acknowledged by rdma_accept(), rdma_reject() or rdma_destroy_id(). */
	c->id.event = ev;
	if (l->ep_qp_attr != NULL) {
		struct ibv_qp_init_attr a = *l->ep_qp_attr;

		if (rdma_create_qp(&c->id, listen->pd, &a) != 0) {
			int err = errno;

			rdma_reject(&c->id, NULL, 0);
			rdma_destroy_id(&c->id);
			return cma_fail(err);
		}
	}
	*id = &c->id;
	return 0;
}

int
rdma_accept(struct rdma_cm_id *id, struct rdma_conn_param *param)
{
	struct cma_id *c = cma_id_of(id);
	struct droce_cm_rep rep;
	int rc;

	if (cma_is_ud(id) && c->dev != NULL && c->cm_id != NULL)
		return cma_ud_accept(c, param);
	if (c->dev == NULL || c->cm_id == NULL ||
	    (param != NULL && param->private_data_len > DROCE_CM_REP_PDATA) ||
	    (id->qp == NULL && (param == NULL || param->qp_num == 0)))
		return cma_fail(EINVAL);
	memset(&rep, 0, sizeof(rep));
	droce_cm_lock(c->dev->cm);
	if (param != NULL) {
		c->conn.responder_resources = param->responder_resources;
		c->conn.initiator_depth = param->initiator_depth;
	}
	rc = cma_qp_ready(c);
	if (rc == 0) {
		rep.local_qpn = id->qp != NULL ? id->qp->qp_num : param->qp_num;
		rep.starting_psn = c->conn.psn;
		rep.responder_resources = c->conn.responder_resources;
		rep.initiator_depth = c->conn.initiator_depth;
		/* rxe's (and droce's) local CA ACK delay. */
		rep.target_ack_delay = 15;
		rep.end_to_end_flow_control = param != NULL ? param->flow_control : 0;
		rep.rnr_retry_count = min7(param != NULL ? param->rnr_retry_count : 7);
		rep.srq = id->srq != NULL || (param != NULL && param->srq);
		if (param != NULL && param->private_data_len > 0)
			memcpy(rep.private_data, param->private_data, param->private_data_len);
		rc = droce_cm_send_rep(c->cm_id, &rep);
	}
	droce_cm_unlock(c->dev->cm);
	if (id->event != NULL) {
		rdma_ack_cm_event(id->event);
		id->event = NULL;
	}
	if (rc != 0)
		return cma_fail(-rc);
	return c->sync ? cma_event_wait(c, RDMA_CM_EVENT_ESTABLISHED) : 0;
}

int
rdma_reject(struct rdma_cm_id *id, const void *private_data, uint8_t private_data_len)
{
	struct cma_id *c = cma_id_of(id);
	int rc;

	if (c->dev == NULL || c->cm_id == NULL)
		return cma_fail(EINVAL);
	droce_cm_lock(c->dev->cm);
	rc = cma_is_ud(id) ? cma_ud_reject(c, private_data, private_data_len) :
	     droce_cm_send_rej(c->cm_id, DROCE_REJ_CONSUMER_DEFINED, private_data,
			       private_data_len);
	droce_cm_unlock(c->dev->cm);
	if (id->event != NULL) {
		rdma_ack_cm_event(id->event);
		id->event = NULL;
	}
	if (rc != 0)
		return cma_fail(-rc);
	return 0;
}

int
rdma_reject_ece(struct rdma_cm_id *id, const void *private_data, uint8_t private_data_len)
{
	/* No ECE is exchanged: a plain reject (consumer defined). */
	return rdma_reject(id, private_data, private_data_len);
}

int
rdma_disconnect(struct rdma_cm_id *id)
{
	struct cma_id *c = cma_id_of(id);
	int rc = -EINVAL;

	if (c->dev == NULL || c->cm_id == NULL)
		return cma_fail(EINVAL);
	droce_cm_lock(c->dev->cm);
	/* cma.c: the QP goes to the error state first, flushing its work. */
	cma_qp_to(c, IBV_QPS_ERR);
	switch (droce_cm_id_state(c->cm_id)) {
	case DROCE_CM_ESTABLISHED:
		c->want_drep = true;
		rc = droce_cm_send_dreq(c->cm_id, NULL, 0);
		break;
	case DROCE_CM_DREQ_RCVD:
		rc = droce_cm_send_drep(c->cm_id, NULL, 0);
		break;
	default:
		/* A UD ID has no connection to end: stopping its QP is all, as in cma.c. */
		if (cma_is_ud(id))
			rc = 0;
		break;
	}
	droce_cm_unlock(c->dev->cm);
	if (rc != 0)
		return cma_fail(-rc);
	return 0;
}

static void
disconnected(struct cma_id *c)
{
	if (c->disconnected)
		return;
	c->disconnected = true;
	cma_event_queue(c, RDMA_CM_EVENT_DISCONNECTED, 0, NULL, NULL, 0, NULL);
}

void
cma_cm_event(void *arg, struct droce_cm_id *cm_id, const struct droce_cm_event *ev)
{
	struct cma_id *c = droce_cm_id_context(cm_id);
	const struct droce_cm_msg *m = ev->msg;

	switch (ev->type) {
	case DROCE_CM_EV_REQ_RECEIVED:
		on_req(arg, cm_id, droce_cm_id_context(ev->listener), &m->req);
		break;
	case DROCE_CM_EV_REP_RECEIVED:
		on_rep(c, &m->rep);
		break;
	case DROCE_CM_EV_RTU_RECEIVED:
		cma_event_queue(c, RDMA_CM_EVENT_ESTABLISHED, 0, NULL, NULL, 0, NULL);
		break;
	case DROCE_CM_EV_REJ_RECEIVED:
		cma_qp_to(c, IBV_QPS_ERR);
		cma_event_queue(c, RDMA_CM_EVENT_REJECTED, m->rej.reason, NULL,
				m->rej.private_data, DROCE_CM_REJ_PDATA, NULL);
		break;
	case DROCE_CM_EV_DREQ_RECEIVED:
		cma_qp_to(c, IBV_QPS_ERR);
		/* Both ends disconnected at once: ours is answered already. */
		if (c->want_drep)
			droce_cm_send_drep(cm_id, NULL, 0);
		disconnected(c);
		break;
	case DROCE_CM_EV_DREP_RECEIVED:
	case DROCE_CM_EV_DREQ_ERROR:
		disconnected(c);
		break;
	case DROCE_CM_EV_REQ_ERROR:
	case DROCE_CM_EV_REP_ERROR:
		cma_qp_to(c, IBV_QPS_ERR);
		cma_event_queue(c, RDMA_CM_EVENT_UNREACHABLE, -ETIMEDOUT, NULL, NULL, 0, NULL);
		break;
	case DROCE_CM_EV_MRA_RECEIVED:
		break;
	case DROCE_CM_EV_SIDR_REQ_RECEIVED:
	case DROCE_CM_EV_SIDR_REP_RECEIVED:
	case DROCE_CM_EV_SIDR_REQ_ERROR:
		cma_ud_event(arg, cm_id, ev);
		break;
	}
}

int
rdma_notify(struct rdma_cm_id *id, enum ibv_event_type event)
{
	/* The QP saw traffic before the RTU: the RTU (or its retry) still
	 * comes, and the CM moves on then. */
	if (id == NULL || event != IBV_EVENT_COMM_EST)
		return cma_fail(EINVAL);
	return 0;
}

int
rdma_set_local_ece(struct rdma_cm_id *id, struct ibv_ece *ece)
{
	/* Accepted and not sent: the CM exchanges no ECE, like a device without it. */
	if (id == NULL || ece == NULL)
		return cma_fail(EINVAL);
	return 0;
}

int
rdma_get_remote_ece(struct rdma_cm_id *id, struct ibv_ece *ece)
{
	if (id == NULL || ece == NULL)
		return cma_fail(EINVAL);
	memset(ece, 0, sizeof(*ece));
	return 0;
}
