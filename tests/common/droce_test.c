/* SPDX-License-Identifier: BSD-3-Clause */
#include <string.h>
#include <time.h>

#include "droce_test.h"

double
droce_test_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

#define OR(v, d) ((v) ? (v) : (d))

int
droce_test_connect(struct ibv_qp *qp, const struct droce_test_path *p)
{
	enum ibv_qp_type t = qp->qp_type;
	struct ibv_qp_attr a;
	int mask, rc;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
	if (t == IBV_QPT_UD) {
		a.qkey = p->qkey;
		mask |= IBV_QP_QKEY;
	} else {
		a.qp_access_flags = OR(p->access, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
					       IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
		mask |= IBV_QP_ACCESS_FLAGS;
	}
	rc = ibv_modify_qp(qp, &a, mask);
	if (rc != 0)
		return rc;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	mask = IBV_QP_STATE;
	if (t != IBV_QPT_UD) {
		a.path_mtu = OR(p->mtu, IBV_MTU_1024);
		a.dest_qp_num = p->dqpn;
		a.rq_psn = p->psn;
		a.ah_attr.is_global = 1;
		a.ah_attr.grh.dgid = p->dgid;
		a.ah_attr.grh.sgid_index = OR(p->sgid_index, 1);
		a.ah_attr.grh.hop_limit = 64;
		a.ah_attr.port_num = 1;
		mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
		if (t == IBV_QPT_RC || t == IBV_QPT_XRC_RECV) {
			a.max_dest_rd_atomic = OR(p->rd_atomic, 4);
			a.min_rnr_timer = OR(p->min_rnr_timer, 1);
			mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
		}
	}
	rc = ibv_modify_qp(qp, &a, mask);
	if (rc != 0)
		return rc;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = p->psn;
	mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
	if (t == IBV_QPT_RC || t == IBV_QPT_XRC_SEND || t == IBV_QPT_XRC_RECV) {
		a.timeout = OR(p->timeout, 14);
		mask |= IBV_QP_TIMEOUT;
	}
	if (t == IBV_QPT_RC || t == IBV_QPT_XRC_SEND) {
		a.retry_cnt = OR(p->retry_cnt, 7);
		a.rnr_retry = OR(p->rnr_retry, 7);
		a.max_rd_atomic = OR(p->rd_atomic, 4);
		mask |= IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
	}
	return ibv_modify_qp(qp, &a, mask);
}

int
droce_test_qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr a;

	return ibv_query_qp(qp, &a, IBV_QP_STATE, &ia) == 0 ? (int)a.qp_state : -1;
}
