/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The verbs beyond the basic ones, on one loopback device: re-registration,
 * CQ resizing with completions pending, the extended device and port
 * queries, the ibv_wr_* API on UC, UD and XRC QPs, and ibv_cq_ex with its
 * ibv_wc_read_* accessors. Only <infiniband/verbs.h> calls.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "droce_test.h"

#define BUF_SIZE (1u << 20)
#define ACCESS_ALL (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
		    IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)
#define UD_QKEY 0x11111111u
#define GRH_LEN 40

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static uint8_t *abuf, *bbuf;
static struct ibv_mr *amr, *bmr;
static union ibv_gid gid;

static void
connect_qp(struct ibv_qp *qp, uint32_t dqpn)
{
	struct droce_test_path p = { .dqpn = dqpn, .dgid = gid, .psn = 0x100, .qkey = UD_QKEY };

	ck_assert_int_eq(droce_test_connect(qp, &p), 0);
}

/* Two connected QPs of @p type on CQ @p c; the first with @p send_ops. */
static void
qp_pair(enum ibv_qp_type type, struct ibv_cq *c, uint64_t send_ops, struct ibv_qp **q1,
	struct ibv_qp **q2)
{
	*q1 = droce_test_qp_new(pd, c, type, send_ops);
	*q2 = droce_test_qp_new(pd, c, type, 0);
	connect_qp(*q1, (*q2)->qp_num);
	connect_qp(*q2, (*q1)->qp_num);
}

static struct ibv_wc
wait_ok(struct ibv_cq *c)
{
	struct ibv_wc wc = droce_test_wait_wc(c);

	ck_assert_msg(wc.status == IBV_WC_SUCCESS, "completion %s", ibv_wc_status_str(wc.status));
	return wc;
}

/* A receive into bbuf. */
static void
post_recv(struct ibv_qp *qp, uint64_t id, uint8_t *buf, uint32_t len)
{
	droce_test_post_recv(qp, id, buf, len, bmr->lkey);
}

/* A signaled RDMA WRITE of @p len bytes from @p src with key @p rkey. */
static void
post_write(struct ibv_qp *qp, uint64_t id, const uint8_t *src, uint32_t len, uint64_t dst,
	   uint32_t rkey)
{
	struct ibv_sge sge = { (uintptr_t)src, len, amr->lkey };
	struct ibv_send_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED },
			   *bad;

	wr.wr.rdma.remote_addr = dst;
	wr.wr.rdma.rkey = rkey;
	ck_assert_int_eq(ibv_post_send(qp, &wr, &bad), 0);
}

static void
destroy_qps(struct ibv_qp *q1, struct ibv_qp *q2)
{
	ck_assert_int_eq(ibv_destroy_qp(q1), 0);
	ck_assert_int_eq(ibv_destroy_qp(q2), 0);
}

/* ---- tests ---- */

/* One port, in the extended query too; width x speed as rxe derives them
 * from the link: net_ring reports 10 Gb/s, which is 1X FDR10. */
START_TEST(query_device_ex_and_port)
{
	struct ibv_device_attr_ex ax;
	struct ibv_port_attr pa;

	memset(&ax, 0xff, sizeof(ax));
	ck_assert_int_eq(ibv_query_device_ex(ctx, NULL, &ax), 0);
	ck_assert_int_eq(ax.orig_attr.phys_port_cnt, 1);
	ck_assert_uint_eq(ax.phys_port_cnt_ex, 1);
	ck_assert_int_eq(ibv_query_port(ctx, 1, &pa), 0);
	ck_assert_int_eq(pa.state, IBV_PORT_ACTIVE);
	ck_assert_uint_eq(pa.active_width, 1);      /* 1X */
	ck_assert_uint_eq(pa.active_speed, 8);      /* FDR10: 10 Gb/s per lane */
	ck_assert_int_eq(pa.link_layer, IBV_LINK_LAYER_ETHERNET);
}
END_TEST

/* rdma-core's return codes for requests it refuses itself, and for those
 * the device refuses; the region is unchanged by either. */
START_TEST(rereg_mr_refusals)
{
	struct ibv_mr *mr = ibv_reg_mr(pd, abuf, 4096, IBV_ACCESS_LOCAL_WRITE);
	struct ibv_context *ctx2;
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_pd *pd2;

	ck_assert_ptr_nonnull(mr);
	errno = 0;
	ck_assert_int_eq(ibv_rereg_mr(mr, 1 << 3, NULL, NULL, 0, 0), IBV_REREG_MR_ERR_INPUT);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, NULL, 4096, 0),
			 IBV_REREG_MR_ERR_INPUT);
	ck_assert_int_eq(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, abuf, 0, 0),
			 IBV_REREG_MR_ERR_INPUT);
	ck_assert_int_eq(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_PD, pd, NULL, 0,
				      IBV_ACCESS_LOCAL_WRITE), IBV_REREG_MR_ERR_INPUT);
	errno = 0;
	ck_assert_int_eq(ibv_rereg_mr(mr, 0, NULL, NULL, 0, 0), IBV_REREG_MR_ERR_CMD);
	ck_assert_int_eq(errno, EINVAL);
	/* Remote write without local write (IB spec 10.6.3.1). */
	ck_assert_int_eq(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
				      IBV_ACCESS_REMOTE_WRITE), IBV_REREG_MR_ERR_CMD);
	ck_assert_int_eq(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_PD, NULL, NULL, 0, 0),
			 IBV_REREG_MR_ERR_CMD);
	/* A PD of another context. */
	ctx2 = ibv_open_device(list[0]);
	pd2 = ibv_alloc_pd(ctx2);
	ck_assert_int_eq(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_PD, pd2, NULL, 0, 0),
			 IBV_REREG_MR_ERR_CMD);
	ck_assert_ptr_eq(mr->pd, pd);
	ck_assert_ptr_eq(mr->addr, abuf);
	ck_assert_uint_eq(mr->length, 4096);
	ck_assert_int_eq(ibv_dealloc_pd(pd2), 0);
	ck_assert_int_eq(ibv_close_device(ctx2), 0);
	ibv_free_device_list(list);
	ck_assert_int_eq(ibv_dereg_mr(mr), 0);
}
END_TEST

/* Access, translation and PD changes take effect for the peer, with the
 * same keys. */
START_TEST(rereg_mr_changes)
{
	struct ibv_qp *q1, *q2;
	uint8_t *target = bbuf + 65536, *moved = bbuf + 131072;
	struct ibv_mr *mr = ibv_reg_mr(pd, target, 4096, IBV_ACCESS_LOCAL_WRITE);
	struct ibv_pd *pd2 = ibv_alloc_pd(ctx);
	uint32_t rkey;
	struct ibv_wc wc;

	ck_assert_ptr_nonnull(mr);
	ck_assert_ptr_nonnull(pd2);
	rkey = mr->rkey;
	droce_test_fill(abuf, 4096, 3);
	memset(target, 0, 4096);
	memset(moved, 0, 4096);

	/* Not writable yet: the peer's WRITE fails. */
	qp_pair(IBV_QPT_RC, cq, 0, &q1, &q2);
	post_write(q1, 1, abuf, 512, (uintptr_t)target, rkey);
	wc = droce_test_wait_wc(cq);
	ck_assert_int_eq(wc.status, IBV_WC_REM_ACCESS_ERR);
	destroy_qps(q1, q2);
	while (ibv_poll_cq(cq, 1, &wc) > 0)
		;

	ck_assert_int_eq(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
				      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE), 0);
	ck_assert_uint_eq(mr->rkey, rkey);
	qp_pair(IBV_QPT_RC, cq, 0, &q1, &q2);
	post_write(q1, 2, abuf, 512, (uintptr_t)target, rkey);
	ck_assert_uint_eq(wait_ok(cq).wr_id, 2);
	ck_assert_int_eq(memcmp(target, abuf, 512), 0);

	/* Another range: the same key now reaches the new memory only. */
	ck_assert_int_eq(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, moved, 8192, 0),
			 0);
	ck_assert_ptr_eq(mr->addr, moved);
	ck_assert_uint_eq(mr->length, 8192);
	post_write(q1, 3, abuf + 100, 1000, (uintptr_t)moved + 7000, rkey);
	ck_assert_uint_eq(wait_ok(cq).wr_id, 3);
	ck_assert_int_eq(memcmp(moved + 7000, abuf + 100, 1000), 0);
	destroy_qps(q1, q2);

	/* Another PD: the QPs of the old one lose access, and the PDs' users
	 * follow the region. */
	ck_assert_int_eq(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_PD, pd2, NULL, 0, 0), 0);
	ck_assert_ptr_eq(mr->pd, pd2);
	ck_assert_int_eq(ibv_dealloc_pd(pd2), EBUSY);
	qp_pair(IBV_QPT_RC, cq, 0, &q1, &q2);
	post_write(q1, 4, abuf, 64, (uintptr_t)moved, rkey);
	ck_assert_int_eq(droce_test_wait_wc(cq).status, IBV_WC_REM_ACCESS_ERR);
	destroy_qps(q1, q2);
	while (ibv_poll_cq(cq, 1, &wc) > 0)
		;
	ck_assert_int_eq(ibv_dereg_mr(mr), 0);
	ck_assert_int_eq(ibv_dealloc_pd(pd2), 0);
}
END_TEST

/* ibv_resize_cq(c, n) == EINVAL while more than n completions are pending. */
static void
wait_pending(struct ibv_cq *c, int n)
{
	double end = droce_test_now() + 20;

	while (ibv_resize_cq(c, n - 1) != EINVAL)
		ck_assert_msg(droce_test_now() < end, "%d completions not pending within 20 s", n);
}

/* Grow and shrink with completions pending: none is lost or reordered,
 * and no size below what is pending is accepted. */
START_TEST(resize_cq_keeps_pending)
{
	struct ibv_cq *c = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_qp *q1, *q2;
	uint64_t id;
	int cqe;

	ck_assert_ptr_nonnull(c);
	ck_assert_int_ge(c->cqe, 16);
	ck_assert_int_eq(ibv_resize_cq(c, 0), EINVAL);
	ck_assert_int_eq(ibv_resize_cq(c, -1), EINVAL);
	ck_assert_int_eq(ibv_resize_cq(c, 1 << 30), EINVAL);
	qp_pair(IBV_QPT_RC, c, 0, &q1, &q2);
	for (id = 1; id <= 10; id++)
		post_write(q1, id, abuf, 64, (uintptr_t)bbuf, bmr->rkey);
	wait_pending(c, 10);
	/* Down to exactly what is pending, then up. */
	ck_assert_int_eq(ibv_resize_cq(c, 10), 0);
	ck_assert_int_ge(c->cqe, 10);
	ck_assert_int_eq(ibv_resize_cq(c, 9), EINVAL);
	ck_assert_int_eq(ibv_resize_cq(c, 1000), 0);
	ck_assert_int_ge(c->cqe, 1000);
	cqe = c->cqe;
	/* The send queue holds 64: 50 more. */
	for (; id <= 60; id++)
		post_write(q1, id, abuf, 64, (uintptr_t)bbuf, bmr->rkey);
	ck_assert_int_eq(c->cqe, cqe);
	wait_pending(c, 60);
	ck_assert_int_eq(ibv_resize_cq(c, 59), EINVAL);
	ck_assert_int_eq(ibv_resize_cq(c, 60), 0);
	for (id = 1; id <= 60; id++)
		ck_assert_uint_eq(wait_ok(c).wr_id, id);
	ck_assert_int_eq(ibv_resize_cq(c, 1), 0);
	destroy_qps(q1, q2);
	ck_assert_int_eq(ibv_destroy_cq(c), 0);
}
END_TEST

/* Every field droce fills, read through ibv_cq_ex; timestamps it cannot
 * fill are refused at creation. */
START_TEST(cq_ex_read_accessors)
{
	struct ibv_cq_init_attr_ex ca = {
		.cqe = 64,
		.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM | IBV_WC_EX_WITH_QP_NUM |
			    IBV_WC_EX_WITH_SLID | IBV_WC_EX_WITH_SL |
			    IBV_WC_EX_WITH_DLID_PATH_BITS,
	};
	struct ibv_poll_cq_attr pa = { 0 };
	struct ibv_cq_ex *cx;
	struct ibv_qp *q1, *q2;
	struct ibv_sge sge = { (uintptr_t)abuf, 300, amr->lkey };
	struct ibv_send_wr wr = { .wr_id = 7, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND_WITH_IMM, .send_flags = IBV_SEND_SIGNALED,
				  .imm_data = htobe32(0xfeed) }, *bad;
	bool seen_send = false, seen_recv = false;
	double end = droce_test_now() + 20;
	int rc;

	ca.wc_flags |= IBV_WC_EX_WITH_CVLAN;
	errno = 0;
	ck_assert_ptr_null(ibv_create_cq_ex(ctx, &ca));
	ck_assert_int_eq(errno, EOPNOTSUPP);
	ca.wc_flags &= ~(uint64_t)IBV_WC_EX_WITH_CVLAN;
	cx = ibv_create_cq_ex(ctx, &ca);
	ck_assert_ptr_nonnull(cx);
	qp_pair(IBV_QPT_RC, ibv_cq_ex_to_cq(cx), 0, &q1, &q2);
	post_recv(q2, 8, bbuf, 4096);
	ck_assert_int_eq(ibv_post_send(q1, &wr, &bad), 0);
	while ((rc = ibv_start_poll(cx, &pa)) == ENOENT)
		ck_assert_msg(droce_test_now() < end, "no completion within 20 s");
	ck_assert_int_eq(rc, 0);
	do {
		ck_assert_int_eq(cx->status, IBV_WC_SUCCESS);
		if (cx->wr_id == 7) {
			ck_assert_int_eq(ibv_wc_read_opcode(cx), IBV_WC_SEND);
			ck_assert_uint_eq(ibv_wc_read_qp_num(cx), q1->qp_num);
			seen_send = true;
		} else {
			ck_assert_uint_eq(cx->wr_id, 8);
			ck_assert_int_eq(ibv_wc_read_opcode(cx), IBV_WC_RECV);
			ck_assert_uint_eq(ibv_wc_read_byte_len(cx), 300);
			ck_assert(ibv_wc_read_wc_flags(cx) & IBV_WC_WITH_IMM);
			ck_assert_uint_eq(be32toh(ibv_wc_read_imm_data(cx)), 0xfeed);
			ck_assert_uint_eq(ibv_wc_read_qp_num(cx), q2->qp_num);
			ck_assert_uint_eq(ibv_wc_read_slid(cx), 0);
			ck_assert_uint_eq(ibv_wc_read_sl(cx), 0);
			ck_assert_uint_eq(ibv_wc_read_dlid_path_bits(cx), 0);
			ck_assert_uint_eq(ibv_wc_read_vendor_err(cx), 0);
			seen_recv = true;
		}
		while ((rc = ibv_next_poll(cx)) == ENOENT && !(seen_send && seen_recv))
			ck_assert_msg(droce_test_now() < end, "no completion within 20 s");
	} while (rc == 0);
	ibv_end_poll(cx);
	ck_assert(seen_send && seen_recv);
	ck_assert_int_eq(memcmp(bbuf, abuf, 300), 0);
	destroy_qps(q1, q2);
	ck_assert_int_eq(ibv_destroy_cq(ibv_cq_ex_to_cq(cx)), 0);
}
END_TEST

/*
 * Completion timestamps: the device clock's rate and mask, a raw clock
 * that moves on, and CQEs stamped in the order they entered the CQ
 * (non-zero, never going back, between two raw clock readings), with a
 * wall-clock twin near CLOCK_REALTIME. The CQ is resized on the way.
 */
START_TEST(cq_ex_timestamps)
{
	struct ibv_cq_init_attr_ex ca = {
		.cqe = 16,
		.wc_flags = IBV_WC_EX_WITH_COMPLETION_TIMESTAMP |
			    IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK,
	};
	struct ibv_values_ex v0 = { .comp_mask = IBV_VALUES_MASK_RAW_CLOCK }, v1 = v0;
	struct ibv_device_attr_ex dx;
	struct ibv_poll_cq_attr pa = { 0 };
	struct ibv_cq_ex *cx;
	struct ibv_qp *q1, *q2;
	struct timespec now;
	uint64_t last = 0, t0, t1, wall;
	int n = 0, rc;

	ck_assert_int_eq(ibv_query_device_ex(ctx, NULL, &dx), 0);
	ck_assert_uint_gt(dx.hca_core_clock, 0);
	ck_assert_uint_eq(dx.completion_timestamp_mask, UINT64_MAX);
	v1.comp_mask = 1u << 7;
	ck_assert_int_eq(ibv_query_rt_values_ex(ctx, &v1), EINVAL);
	v1.comp_mask = IBV_VALUES_MASK_RAW_CLOCK;
	ck_assert_int_eq(ibv_query_rt_values_ex(ctx, &v0), 0);
	cx = ibv_create_cq_ex(ctx, &ca);
	ck_assert_ptr_nonnull(cx);
	qp_pair(IBV_QPT_RC, ibv_cq_ex_to_cq(cx), 0, &q1, &q2);
	for (int i = 0; i < 4; i++)
		post_write(q1, (uint64_t)i, abuf, 64, (uintptr_t)bbuf, bmr->rkey);
	wait_pending(ibv_cq_ex_to_cq(cx), 4);
	ck_assert_int_eq(ibv_resize_cq(ibv_cq_ex_to_cq(cx), 64), 0);
	ck_assert_int_eq(ibv_query_rt_values_ex(ctx, &v1), 0);
	t0 = (uint64_t)v0.raw_clock.tv_nsec;
	t1 = (uint64_t)v1.raw_clock.tv_nsec;
	ck_assert_uint_gt(t1, t0);
	ck_assert_int_eq(ibv_start_poll(cx, &pa), 0);
	do {
		uint64_t ts = ibv_wc_read_completion_ts(cx);

		ck_assert_int_eq(cx->status, IBV_WC_SUCCESS);
		ck_assert_uint_ge(ts, last);
		ck_assert(ts >= t0 && ts <= t1);
		last = ts;
		wall = ibv_wc_read_completion_wallclock_ns(cx);
		clock_gettime(CLOCK_REALTIME, &now);
		ck_assert_uint_le(wall, (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec);
		ck_assert_uint_gt(wall + 10000000000u,
				  (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec);
		n++;
	} while ((rc = ibv_next_poll(cx)) == 0);
	ibv_end_poll(cx);
	ck_assert_int_eq(rc, ENOENT);
	ck_assert_int_eq(n, 4);
	destroy_qps(q1, q2);
	ck_assert_int_eq(ibv_destroy_cq(ibv_cq_ex_to_cq(cx)), 0);
}
END_TEST

/* UC: sends and writes through ibv_wr_*; what UC has no opcode for is
 * refused at creation. */
START_TEST(qp_ex_uc)
{
	const uint64_t ops = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |
			     IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM;
	struct ibv_qp_init_attr_ex ax = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_UC,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS, .pd = pd,
	};
	const uint64_t refused[] = { IBV_QP_EX_WITH_RDMA_READ, IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD,
				     IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP,
				     IBV_QP_EX_WITH_SEND_WITH_INV };
	struct ibv_qp *q1, *q2;
	struct ibv_qp_ex *x;
	unsigned i, got = 0;

	for (i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		ax.send_ops_flags = ops | refused[i];
		errno = 0;
		ck_assert_ptr_null(ibv_create_qp_ex(ctx, &ax));
		ck_assert_int_eq(errno, EOPNOTSUPP);
	}
	qp_pair(IBV_QPT_UC, cq, ops, &q1, &q2);
	x = ibv_qp_to_qp_ex(q1);
	ck_assert_ptr_nonnull(x);
	droce_test_fill(abuf, 8192, 5);
	post_recv(q2, 20, bbuf, 4096);
	post_recv(q2, 21, bbuf + 4096, 16);
	ibv_wr_start(x);
	x->wr_id = 10;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(x);
	ibv_wr_set_sge(x, amr->lkey, (uintptr_t)abuf, 3000);
	x->wr_id = 11;
	ibv_wr_rdma_write(x, bmr->rkey, (uintptr_t)bbuf + 8192);
	ibv_wr_set_sge(x, amr->lkey, (uintptr_t)abuf + 1000, 5000);
	x->wr_id = 12;
	ibv_wr_rdma_write_imm(x, bmr->rkey, (uintptr_t)bbuf + 16384, htobe32(77));
	ibv_wr_set_sge(x, amr->lkey, (uintptr_t)abuf, 100);
	ck_assert_int_eq(ibv_wr_complete(x), 0);
	while (got < 5) {
		struct ibv_wc wc = wait_ok(cq);

		if (wc.wr_id == 21) {
			ck_assert_int_eq(wc.opcode, IBV_WC_RECV_RDMA_WITH_IMM);
			ck_assert_uint_eq(be32toh(wc.imm_data), 77);
		}
		got++;
	}
	ck_assert_int_eq(memcmp(bbuf, abuf, 3000), 0);
	ck_assert_int_eq(memcmp(bbuf + 8192, abuf + 1000, 5000), 0);
	ck_assert_int_eq(memcmp(bbuf + 16384, abuf, 100), 0);
	destroy_qps(q1, q2);
}
END_TEST

/* UD: datagrams with an address handle set by ibv_wr_set_ud_addr(). */
START_TEST(qp_ex_ud)
{
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1,
				  .grh = { .dgid = gid, .sgid_index = 1, .hop_limit = 64 } };
	struct ibv_qp_init_attr_ex ax = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS, .pd = pd,
		.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_WRITE,
	};
	struct ibv_qp *q1, *q2;
	struct ibv_qp_ex *x;
	struct ibv_ah *ah = ibv_create_ah(pd, &aa);
	unsigned got = 0;

	ck_assert_ptr_nonnull(ah);
	errno = 0;
	ck_assert_ptr_null(ibv_create_qp_ex(ctx, &ax));
	ck_assert_int_eq(errno, EOPNOTSUPP);
	qp_pair(IBV_QPT_UD, cq, IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM, &q1, &q2);
	x = ibv_qp_to_qp_ex(q1);
	droce_test_fill(abuf, 1024, 9);
	post_recv(q2, 30, bbuf, GRH_LEN + 1024);
	post_recv(q2, 31, bbuf + 4096, GRH_LEN + 1024);
	ibv_wr_start(x);
	x->wr_id = 40;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(x);
	ibv_wr_set_ud_addr(x, ah, q2->qp_num, UD_QKEY);
	ibv_wr_set_sge(x, amr->lkey, (uintptr_t)abuf, 1024);
	x->wr_id = 41;
	ibv_wr_send_imm(x, htobe32(99));
	ibv_wr_set_ud_addr(x, ah, q2->qp_num, UD_QKEY);
	ibv_wr_set_inline_data(x, abuf, 32);
	ck_assert_int_eq(ibv_wr_complete(x), 0);
	while (got < 4) {
		struct ibv_wc wc = wait_ok(cq);

		if (wc.wr_id == 30) {
			ck_assert_uint_eq(wc.byte_len, GRH_LEN + 1024);
			ck_assert_uint_eq(wc.src_qp, q1->qp_num);
		} else if (wc.wr_id == 31) {
			ck_assert(wc.wc_flags & IBV_WC_WITH_IMM);
			ck_assert_uint_eq(wc.byte_len, GRH_LEN + 32);
		}
		got++;
	}
	ck_assert_int_eq(memcmp(bbuf + GRH_LEN, abuf, 1024), 0);
	ck_assert_int_eq(memcmp(bbuf + 4096 + GRH_LEN, abuf, 32), 0);
	destroy_qps(q1, q2);
	ck_assert_int_eq(ibv_destroy_ah(ah), 0);
}
END_TEST

/* XRC: an XRC_SEND initiator built with ibv_wr_* reaches the SRQ it
 * names with ibv_wr_set_xrc_srqn(), and RDMA WRITE goes through too. */
START_TEST(qp_ex_xrc)
{
	struct ibv_xrcd_init_attr xa = { .comp_mask = IBV_XRCD_INIT_ATTR_FD |
						     IBV_XRCD_INIT_ATTR_OFLAGS,
					 .fd = -1, .oflags = O_CREAT };
	struct ibv_srq_init_attr_ex sa = {
		.attr = { .max_wr = 8, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			     IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ,
		.srq_type = IBV_SRQT_XRC, .pd = pd, .cq = cq,
	};
	struct ibv_qp_init_attr_ex ta = { .qp_type = IBV_QPT_XRC_RECV,
					  .comp_mask = IBV_QP_INIT_ATTR_XRCD };
	struct ibv_qp_init_attr_ex ia = {
		.qp_type = IBV_QPT_XRC_SEND, .send_cq = cq,
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS, .pd = pd,
		.cap = { .max_send_wr = 8, .max_send_sge = 1 },
		.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_WRITE,
	};
	struct ibv_sge rsge = { (uintptr_t)bbuf, 4096, bmr->lkey };
	struct ibv_recv_wr rwr = { .wr_id = 50, .sg_list = &rsge, .num_sge = 1 }, *rbad;
	struct ibv_xrcd *xrcd;
	struct ibv_srq *srq;
	struct ibv_qp *tgt, *ini;
	struct ibv_qp_ex *x;
	uint32_t srqn;
	unsigned got = 0;

	ta.send_ops_flags = IBV_QP_EX_WITH_SEND;
	ta.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	xa.fd = open("/dev/null", O_RDONLY);
	ck_assert_int_ge(xa.fd, 0);
	xrcd = ibv_open_xrcd(ctx, &xa);
	ck_assert_ptr_nonnull(xrcd);
	sa.xrcd = xrcd;
	srq = ibv_create_srq_ex(ctx, &sa);
	ck_assert_ptr_nonnull(srq);
	ck_assert_int_eq(ibv_get_srq_num(srq, &srqn), 0);
	ta.xrcd = xrcd;
	/* A target QP sends nothing: no send operations for it. */
	ck_assert_ptr_null(ibv_create_qp_ex(ctx, &ta));
	ta.comp_mask &= ~(uint32_t)IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	tgt = ibv_create_qp_ex(ctx, &ta);
	ck_assert_ptr_nonnull(tgt);
	ini = ibv_create_qp_ex(ctx, &ia);
	ck_assert_ptr_nonnull(ini);
	connect_qp(tgt, ini->qp_num);
	connect_qp(ini, tgt->qp_num);
	ck_assert_int_eq(ibv_post_srq_recv(srq, &rwr, &rbad), 0);
	x = ibv_qp_to_qp_ex(ini);
	ck_assert_ptr_nonnull(x);
	droce_test_fill(abuf, 8192, 11);
	ibv_wr_start(x);
	x->wr_id = 60;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(x);
	ibv_wr_set_xrc_srqn(x, srqn);
	ibv_wr_set_sge(x, amr->lkey, (uintptr_t)abuf, 2500);
	x->wr_id = 61;
	ibv_wr_rdma_write(x, bmr->rkey, (uintptr_t)bbuf + 8192);
	ibv_wr_set_xrc_srqn(x, srqn);
	ibv_wr_set_sge(x, amr->lkey, (uintptr_t)abuf + 10, 6000);
	ck_assert_int_eq(ibv_wr_complete(x), 0);
	while (got < 3) {
		struct ibv_wc wc = wait_ok(cq);

		if (wc.wr_id == 50)
			ck_assert_uint_eq(wc.byte_len, 2500);
		got++;
	}
	ck_assert_int_eq(memcmp(bbuf, abuf, 2500), 0);
	ck_assert_int_eq(memcmp(bbuf + 8192, abuf + 10, 6000), 0);
	ck_assert_int_eq(ibv_destroy_qp(ini), 0);
	ck_assert_int_eq(ibv_destroy_qp(tgt), 0);
	ck_assert_int_eq(ibv_destroy_srq(srq), 0);
	ck_assert_int_eq(ibv_close_xrcd(xrcd), 0);
	close(xa.fd);
}
END_TEST

int
main(void)
{
	struct droce_test_loop loop;
	Suite *s = suite_create("verbs_ex");
	TCase *tc = tcase_create("loopback");
	int failed;

	if (droce_test_loop_open(&loop, BUF_SIZE, ACCESS_ALL) != 0)
		return 1;
	ctx = loop.ctx, pd = loop.pd, cq = loop.cq, gid = loop.gid;
	abuf = loop.buf[0], bbuf = loop.buf[1], amr = loop.mr[0], bmr = loop.mr[1];
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, query_device_ex_and_port);
	tcase_add_test(tc, rereg_mr_refusals);
	tcase_add_test(tc, rereg_mr_changes);
	tcase_add_test(tc, resize_cq_keeps_pending);
	tcase_add_test(tc, cq_ex_read_accessors);
	tcase_add_test(tc, cq_ex_timestamps);
	tcase_add_test(tc, qp_ex_uc);
	tcase_add_test(tc, qp_ex_ud);
	tcase_add_test(tc, qp_ex_xrc);
	suite_add_tcase(s, tc);
	failed = droce_test_run(s);
	droce_test_loop_close(&loop);
	return failed == 0 ? 0 : 1;
}
