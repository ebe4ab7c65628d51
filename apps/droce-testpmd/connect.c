/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Connecting QPs: RESET (if needed), INIT, RTR, RTS with the attributes
 * each QP type needs (the IB spec's required attributes per transition),
 * aimed at a peer given by QPN, GID and PSN: another local QP, or one
 * whose numbers the user copied from the other side's `show qp ...
 * connect-info`.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_common.h>

#include "testpmd.h"

/* Generous defaults: about 67 ms ACK timeout, 7 retries, RNR retried forever. */
#define TP_TIMEOUT 14
#define TP_RETRY 7
#define TP_RNR_RETRY 7
#define TP_MIN_RNR 12
#define TP_RD_ATOMIC 16
#define TP_HOP_LIMIT 64

static enum ibv_mtu
port_mtu(unsigned p)
{
	return tp_mtu_from_bytes(droce_port_mtu(tp_ports[p].port));
}

void
tp_peer_of(const struct tp_obj *q, struct tp_peer *p)
{
	const struct tp_port *tp = &tp_ports[q->port];

	memset(p, 0, sizeof(*p));
	p->qpn = q->qp.qp->qp_num;
	if (droce_port_gid(tp->port, tp->sgid_index, p->gid.raw) != 0)
		memset(p->gid.raw, 0, sizeof(p->gid.raw));
	p->psn = q->qp.psn;
	p->mtu = port_mtu(q->port);
}

static int
step(struct tp_obj *q, struct ibv_qp_attr *a, int mask)
{
	int rc = ibv_modify_qp(q->qp.qp, a, mask);

	if (rc == 0)
		return 0;
	return tp_error(tp_verbs_rc(rc), "connect qp %u: to %s", q->id,
			tp_qp_state_name(a->qp_state));
}

/* UD: an AH to the peer becomes the QP's destination, as a new object. */
static int
ud_dest(struct tp_obj *q, const struct tp_peer *peer)
{
	struct ibv_ah_attr aa = {
		.is_global = 1,
		.port_num = 1,
		.grh = { .dgid = peer->gid, .sgid_index = (uint8_t)tp_ports[q->port].sgid_index,
			 .hop_limit = TP_HOP_LIMIT },
	};
	struct tp_obj *ah = tp_obj_new(TP_AH, q->port);

	if (ah == NULL)
		return -ENOMEM;
	ah->ah.ah = ibv_create_ah(q->qp.qp->pd, &aa);
	if (ah->ah.ah == NULL) {
		int rc = tp_errno();

		tp_obj_free(ah);
		return tp_error(rc, "connect qp %u: AH to the peer", q->id);
	}
	ah->ah.dgid = peer->gid;
	q->qp.dest = (struct tp_ud_dest){ .set = true, .ah = ah->id, .qpn = peer->qpn,
					  .qkey = TP_QKEY };
	printf("ah %u created: qp %u sends to qpn 0x%x through it\n", ah->id, q->id, peer->qpn);
	return 0;
}

int
tp_connect(struct tp_obj *q, const struct tp_peer *peer)
{
	enum ibv_qp_type t = q->qp.type;
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr a;
	int mask, rc;

	/* From wherever it is: connecting again starts over. */
	if (ibv_query_qp(q->qp.qp, &a, IBV_QP_STATE, &init) == 0 && a.qp_state != IBV_QPS_RESET) {
		memset(&a, 0, sizeof(a));
		a.qp_state = IBV_QPS_RESET;
		if ((rc = step(q, &a, IBV_QP_STATE)) != 0)
			return rc;
	}

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
	if (t == IBV_QPT_UD) {
		a.qkey = TP_QKEY;
		mask |= IBV_QP_QKEY;
	} else {
		a.qp_access_flags = t == IBV_QPT_UC ?
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE :
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
		mask |= IBV_QP_ACCESS_FLAGS;
	}
	if ((rc = step(q, &a, mask)) != 0)
		return rc;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	mask = IBV_QP_STATE;
	if (t != IBV_QPT_UD) {
		a.path_mtu = RTE_MIN(port_mtu(q->port), peer->mtu);
		a.dest_qp_num = peer->qpn;
		a.rq_psn = peer->psn;
		a.ah_attr.is_global = 1;
		a.ah_attr.port_num = 1;
		a.ah_attr.grh.dgid = peer->gid;
		a.ah_attr.grh.sgid_index = (uint8_t)tp_ports[q->port].sgid_index;
		a.ah_attr.grh.hop_limit = TP_HOP_LIMIT;
		mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
	}
	if (t == IBV_QPT_RC || t == IBV_QPT_XRC_RECV) {
		a.max_dest_rd_atomic = TP_RD_ATOMIC;
		a.min_rnr_timer = TP_MIN_RNR;
		mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	}
	if ((rc = step(q, &a, mask)) != 0)
		return rc;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = q->qp.psn;
	mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
	if (t == IBV_QPT_RC || t == IBV_QPT_XRC_SEND || t == IBV_QPT_XRC_RECV) {
		a.timeout = TP_TIMEOUT;
		mask |= IBV_QP_TIMEOUT;
	}
	if (t == IBV_QPT_RC || t == IBV_QPT_XRC_SEND) {
		a.retry_cnt = TP_RETRY;
		a.rnr_retry = TP_RNR_RETRY;
		a.max_rd_atomic = TP_RD_ATOMIC;
		mask |= IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
	}
	if ((rc = step(q, &a, mask)) != 0)
		return rc;
	return t == IBV_QPT_UD ? ud_dest(q, peer) : 0;
}

/* Whether QPs of types @p a and @p b can talk to each other. */
static bool
types_match(enum ibv_qp_type a, enum ibv_qp_type b)
{
	if (a == IBV_QPT_XRC_SEND)
		return b == IBV_QPT_XRC_RECV;
	if (a == IBV_QPT_XRC_RECV)
		return b == IBV_QPT_XRC_SEND;
	return a == b;
}

int
tp_connect_local(struct tp_obj *a, struct tp_obj *b)
{
	struct tp_peer pa, pb;
	int rc;

	if (a == b)
		return tp_error(-EINVAL, "connect qp %u: a QP cannot connect to itself", a->id);
	if (!types_match(a->qp.type, b->qp.type))
		return tp_error(-EINVAL, "connect: qp %u is %s, qp %u is %s", a->id,
				tp_qp_type_name(a->qp.type), b->id, tp_qp_type_name(b->qp.type));
	tp_peer_of(a, &pa);
	tp_peer_of(b, &pb);
	rc = tp_connect(a, &pb);
	return rc == 0 ? tp_connect(b, &pa) : rc;
}
