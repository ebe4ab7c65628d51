/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdio.h>
#include <stdlib.h>
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

int
droce_test_loop_open(struct droce_test_loop *l, size_t size, int access)
{
	struct ibv_device **list;
	int n, rc;

	list = ibv_get_device_list(&n);
	if (list == NULL || n < 1) {
		fprintf(stderr, "no droce device\n");
		ibv_free_device_list(list);
		return -1;
	}
	rc = droce_test_dev_open(l, list[0], size, access);
	l->list = list;
	return rc;
}

int
droce_test_dev_open(struct droce_test_loop *l, struct ibv_device *dev, size_t size, int access)
{
	int i;

	memset(l, 0, sizeof(*l));
	l->ctx = ibv_open_device(dev);
	l->pd = l->ctx != NULL ? ibv_alloc_pd(l->ctx) : NULL;
	l->cq = l->ctx != NULL ? ibv_create_cq(l->ctx, 1024, NULL, NULL, 0) : NULL;
	for (i = 0; i < 2; i++) {
		l->buf[i] = aligned_alloc(4096, size);
		if (l->pd != NULL && l->buf[i] != NULL)
			l->mr[i] = ibv_reg_mr(l->pd, l->buf[i], size, access);
	}
	if (l->cq == NULL || l->mr[0] == NULL || l->mr[1] == NULL ||
	    ibv_query_gid(l->ctx, 1, 1, &l->gid) != 0) {
		fprintf(stderr, "setup failed\n");
		return -1;
	}
	return 0;
}

void
droce_test_loop_close(struct droce_test_loop *l)
{
	for (int i = 0; i < 2; i++) {
		if (l->mr[i] != NULL)
			ibv_dereg_mr(l->mr[i]);
		free(l->buf[i]);
	}
	if (l->cq != NULL)
		ibv_destroy_cq(l->cq);
	if (l->pd != NULL)
		ibv_dealloc_pd(l->pd);
	if (l->ctx != NULL)
		ibv_close_device(l->ctx);
	ibv_free_device_list(l->list);
}

void
droce_test_post_recv(struct ibv_qp *qp, uint64_t wr_id, uint8_t *buf, uint32_t len,
		     uint32_t lkey)
{
	struct ibv_sge sge = { (uintptr_t)buf, len, lkey };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 }, *bad;

	ck_assert_int_eq(ibv_post_recv(qp, &wr, &bad), 0);
}

void
droce_test_fill(uint8_t *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 31 + seed);
}

struct ibv_wc
droce_test_wait_wc(struct ibv_cq *cq)
{
	struct ibv_wc wc;
	double end = droce_test_now() + 20;
	int n;

	while ((n = ibv_poll_cq(cq, 1, &wc)) == 0)
		ck_assert_msg(droce_test_now() < end, "no completion within 20 s");
	ck_assert_int_eq(n, 1);
	return wc;
}

int
droce_test_run(Suite *s)
{
	SRunner *sr = srunner_create(s);
	int failed;

	srunner_set_fork_status(sr, CK_NOFORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed;
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

struct ibv_qp *
droce_test_qp_new(struct ibv_pd *pd, struct ibv_cq *cq, enum ibv_qp_type type, uint64_t send_ops)
{
	struct ibv_qp_init_attr_ex ax = {
		.send_cq = cq, .recv_cq = cq, .qp_type = type,
		.cap = { .max_send_wr = 64, .max_recv_wr = 64, .max_send_sge = 2,
			 .max_recv_sge = 2, .max_inline_data = 64 },
		.comp_mask = IBV_QP_INIT_ATTR_PD, .pd = pd,
	};
	struct ibv_qp *qp;

	if (send_ops != 0) {
		ax.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		ax.send_ops_flags = send_ops;
	}
	qp = ibv_create_qp_ex(pd->context, &ax);
	ck_assert_ptr_nonnull(qp);
	return qp;
}
