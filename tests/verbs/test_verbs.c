/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Verbs on one droce device in one process: two RC QPs connected through
 * the device's loopback. Only <infiniband/verbs.h> calls: this is how a
 * verbs program sees droce. The configuration comes from DROCE_CONF (set
 * by meson to a loopback port without hugepages).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include <check.h>
#include <infiniband/verbs.h>

#include "droce_stats.h"
#include "droce_test.h"

#define BUF_SIZE (4u << 20)
#define ACCESS_ALL (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
		    IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static uint8_t *abuf, *bbuf;
static struct ibv_mr *amr, *bmr;
static union ibv_gid gid;

static struct ibv_qp *
rc_qp(void)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 128, .max_recv_wr = 128, .max_send_sge = 4,
			 .max_recv_sge = 4, .max_inline_data = 128 },
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &ia);

	ck_assert_ptr_nonnull(qp);
	ck_assert_uint_ge(ia.cap.max_inline_data, 128);
	return qp;
}

/* RC to RTS, with PSNs just below the 24-bit wrap so every test crosses it. */
static void
rc_connect(struct ibv_qp *qp, uint32_t dqpn, uint8_t timeout, uint8_t retry, uint8_t rnr_retry)
{
	struct droce_test_path p = { .dqpn = dqpn, .dgid = gid, .psn = 0xfffff0,
				     .timeout = timeout, .retry_cnt = retry, .rnr_retry = rnr_retry };

	ck_assert_int_eq(droce_test_connect(qp, &p), 0);
}

/* The pairs' ACK timeout, 4.096 us << 14: 67 ms. Under ThreadSanitizer
 * on a busy machine a 1 MiB message can take longer than that to cross the
 * loopback, and the resends then pile up behind it: 1 s there. */
#ifdef __SANITIZE_THREAD__
#define PAIR_TIMEOUT 18
#else
#define PAIR_TIMEOUT 14
#endif

static void
pair(struct ibv_qp **q1, struct ibv_qp **q2)
{
	*q1 = rc_qp();
	*q2 = rc_qp();
	rc_connect(*q1, (*q2)->qp_num, PAIR_TIMEOUT, 7, 7);
	rc_connect(*q2, (*q1)->qp_num, PAIR_TIMEOUT, 7, 7);
}

static struct ibv_wc
wait_wc(void)
{
	return droce_test_wait_wc(cq);
}

/* The key of whichever buffer @p p lies in. */
static uint32_t
lkey_of(const uint8_t *p)
{
	return (p >= bbuf && p < bbuf + BUF_SIZE) ? bmr->lkey : amr->lkey;
}

static void
post_send(struct ibv_qp *qp, enum ibv_wr_opcode op, uint64_t id, uint8_t *local, uint32_t len,
	  uint8_t *remote, uint32_t rkey, unsigned flags)
{
	struct ibv_sge sge = { (uintptr_t)local, len, lkey_of(local) };
	struct ibv_send_wr wr = {
		.wr_id = id, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED | flags, .imm_data = htobe32(0x1234abcd),
	}, *bad;

	wr.wr.rdma.remote_addr = (uintptr_t)remote;
	wr.wr.rdma.rkey = rkey;
	ck_assert_int_eq(ibv_post_send(qp, &wr, &bad), 0);
}

static void
post_recv(struct ibv_qp *qp, uint64_t id, uint8_t *buf, uint32_t len)
{
	droce_test_post_recv(qp, id, buf, len, lkey_of(buf));
}

/* The next async event of @p c is @p type on @p qp. */
static void
expect_qp_event(struct ibv_context *c, enum ibv_event_type type, struct ibv_qp *qp)
{
	struct ibv_async_event ev;

	ck_assert_int_eq(ibv_get_async_event(c, &ev), 0);
	ck_assert_int_eq(ev.event_type, type);
	ck_assert_ptr_eq(ev.element.qp, qp);
	ibv_ack_async_event(&ev);
}

/* @p qp is in @p state. */
static void
expect_qp_state(struct ibv_qp *qp, enum ibv_qp_state state)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	ck_assert_int_eq(ibv_query_qp(qp, &a, IBV_QP_STATE, &ia), 0);
	ck_assert_int_eq(a.qp_state, state);
}

static void
destroy_pair(struct ibv_qp *q1, struct ibv_qp *q2)
{
	struct ibv_wc wc;

	ck_assert_int_eq(ibv_destroy_qp(q1), 0);
	ck_assert_int_eq(ibv_destroy_qp(q2), 0);
	while (ibv_poll_cq(cq, 1, &wc) > 0)
		ck_assert_int_eq(wc.status, IBV_WC_WR_FLUSH_ERR);
}

START_TEST(device_looks_like_roce)
{
	struct ibv_device_attr da;
	struct ibv_port_attr pa;
	union ibv_gid g0;

	ck_assert_int_eq(ibv_query_device(ctx, &da), 0);
	ck_assert_int_eq(da.phys_port_cnt, 1);
	ck_assert_uint_gt(da.max_qp, 0);
	ck_assert_int_eq(ibv_query_port(ctx, 1, &pa), 0);
	ck_assert_int_eq(pa.state, IBV_PORT_ACTIVE);
	ck_assert_int_eq(pa.link_layer, IBV_LINK_LAYER_ETHERNET);
	ck_assert_int_eq(ibv_query_gid(ctx, 1, 0, &g0), 0);
	ck_assert_uint_eq(g0.raw[0], 0xfe);
	ck_assert_uint_eq(g0.raw[1], 0x80);
	/* index 1: ::ffff:a.b.c.d */
	ck_assert_uint_eq(gid.raw[10], 0xff);
	ck_assert_uint_eq(gid.raw[11], 0xff);
	ck_assert_int_ne(ibv_query_port(ctx, 2, &pa), 0);
	ck_assert_int_ne(ibv_query_gid(ctx, 1, 99, &g0), 0);
}
END_TEST

START_TEST(bad_arguments_fail_with_errno)
{
	struct ibv_qp_init_attr ia = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = 1, .max_recv_wr = 1,
						.max_send_sge = 1000 } };
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTS };
	struct ibv_send_wr wr = { .opcode = IBV_WR_SEND }, *bad;
	struct ibv_qp *qp;

	errno = 0;
	ck_assert_ptr_null(ibv_create_cq(ctx, 0, NULL, NULL, 0));
	ck_assert_int_eq(errno, EINVAL);
	errno = 0;
	ck_assert_ptr_null(ibv_reg_mr(pd, abuf, 64, IBV_ACCESS_REMOTE_WRITE));
	ck_assert_int_eq(errno, EINVAL); /* remote write without local write */
	errno = 0;
	ck_assert_ptr_null(ibv_create_qp(pd, &ia));
	ck_assert_int_eq(errno, EINVAL);
	ia.cap.max_send_sge = 1;
	qp = ibv_create_qp(pd, &ia);
	ck_assert_ptr_nonnull(qp);
	/* RESET -> RTS is not a transition; the QP stays in RESET. */
	ck_assert_int_eq(ibv_modify_qp(qp, &a, IBV_QP_STATE), EINVAL);
	ck_assert_int_eq(qp->state, IBV_QPS_RESET);
	ck_assert_int_eq(ibv_post_send(qp, &wr, &bad), EINVAL);
	ck_assert_ptr_eq(bad, &wr);
	/* Objects in use cannot go. */
	ck_assert_int_eq(ibv_dealloc_pd(pd), EBUSY);
	ck_assert_int_eq(ibv_destroy_cq(cq), EBUSY);
	ck_assert_int_eq(ibv_destroy_qp(qp), 0);
}
END_TEST

static const uint32_t send_sizes[] = { 0, 1, 3, 1023, 1024, 1025, 4096, 65537, 1u << 20 };

START_TEST(rc_send_sizes)
{
	struct ibv_qp *q1, *q2;

	pair(&q1, &q2);
	for (unsigned i = 0; i < sizeof(send_sizes) / sizeof(send_sizes[0]); i++) {
		uint32_t len = send_sizes[i];
		struct ibv_wc wc[2];

		droce_test_fill(abuf, len, i);
		memset(bbuf, 0, len + 16);
		post_recv(q2, 100 + i, bbuf, len + 16);
		post_send(q1, i % 2 ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND, i, abuf, len, NULL, 0, 0);
		wc[0] = wait_wc();
		wc[1] = wait_wc();
		ck_assert_msg(wc[0].status == IBV_WC_SUCCESS && wc[1].status == IBV_WC_SUCCESS,
			      "size %u: %s / %s", len, ibv_wc_status_str(wc[0].status),
			      ibv_wc_status_str(wc[1].status));
		for (int k = 0; k < 2; k++) {
			ck_assert_int_eq(wc[k].status, IBV_WC_SUCCESS);
			if (wc[k].opcode == IBV_WC_RECV) {
				ck_assert_uint_eq(wc[k].wr_id, 100 + i);
				ck_assert_uint_eq(wc[k].byte_len, len);
				ck_assert_uint_eq(wc[k].qp_num, q2->qp_num);
				ck_assert_int_eq(!!(wc[k].wc_flags & IBV_WC_WITH_IMM), i % 2);
				if (i % 2)
					ck_assert_uint_eq(be32toh(wc[k].imm_data), 0x1234abcd);
			} else {
				ck_assert_int_eq(wc[k].opcode, IBV_WC_SEND);
				ck_assert_uint_eq(wc[k].wr_id, i);
			}
		}
		ck_assert_int_eq(memcmp(abuf, bbuf, len), 0);
	}
	destroy_pair(q1, q2);
}
END_TEST

START_TEST(rc_write_read_atomic)
{
	struct ibv_qp *q1, *q2;
	uint64_t *target = (uint64_t *)(bbuf + 4096);
	struct ibv_wc wc;

	pair(&q1, &q2);
	droce_test_fill(abuf, 300000, 7);
	post_send(q1, IBV_WR_RDMA_WRITE, 1, abuf, 300000, bbuf + 8192 + 3, bmr->rkey, 0);
	wc = wait_wc();
	ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
	ck_assert_int_eq(wc.opcode, IBV_WC_RDMA_WRITE);
	ck_assert_int_eq(memcmp(abuf, bbuf + 8192 + 3, 300000), 0);

	memset(abuf, 0, 300000);
	post_send(q1, IBV_WR_RDMA_READ, 2, abuf + 5, 299000, bbuf + 8192 + 3, bmr->rkey, 0);
	wc = wait_wc();
	ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
	ck_assert_int_eq(wc.opcode, IBV_WC_RDMA_READ);
	ck_assert_uint_eq(wc.byte_len, 299000);
	ck_assert_int_eq(memcmp(abuf + 5, bbuf + 8192 + 3, 299000), 0);

	/* WRITE with immediate consumes a receive on the target. */
	post_recv(q2, 77, bbuf, 0);
	post_send(q1, IBV_WR_RDMA_WRITE_WITH_IMM, 3, abuf, 5000, bbuf + 100000, bmr->rkey, 0);
	for (int k = 0; k < 2; k++) {
		wc = wait_wc();
		ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
		if (wc.wr_id == 77) {
			ck_assert_int_eq(wc.opcode, IBV_WC_RECV_RDMA_WITH_IMM);
			ck_assert_uint_eq(wc.byte_len, 5000);
		}
	}

	*target = 40;
	{
		struct ibv_sge sge = { (uintptr_t)abuf, 8, amr->lkey }, two[2];
		struct ibv_send_wr wr = { .wr_id = 4, .sg_list = &sge, .num_sge = 1,
					  .opcode = IBV_WR_ATOMIC_FETCH_AND_ADD,
					  .send_flags = IBV_SEND_SIGNALED }, *bad;

		wr.wr.atomic.remote_addr = (uintptr_t)target;
		wr.wr.atomic.rkey = bmr->rkey;
		wr.wr.atomic.compare_add = 2;
		ck_assert_int_eq(ibv_post_send(q1, &wr, &bad), 0);
		wc = wait_wc();
		ck_assert_int_eq(wc.opcode, IBV_WC_FETCH_ADD);
		ck_assert_uint_eq(*(uint64_t *)abuf, 40);
		ck_assert_uint_eq(*target, 42);

		wr.opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
		wr.wr.atomic.compare_add = 42;
		wr.wr.atomic.swap = 7;
		ck_assert_int_eq(ibv_post_send(q1, &wr, &bad), 0);
		wc = wait_wc();
		ck_assert_int_eq(wc.opcode, IBV_WC_COMP_SWAP);
		ck_assert_uint_eq(*(uint64_t *)abuf, 42);
		ck_assert_uint_eq(*target, 7);

		/* What an atomic may not be, refused at post time as rdma-core's
		 * providers refuse it, nothing posted: another length, two
		 * SGEs, an address not 8-byte aligned, inline. Nor a READ
		 * inline, or a negative SGE count. */
		sge.length = 4;
		ck_assert_int_eq(ibv_post_send(q1, &wr, &bad), EINVAL);
		sge.length = 8;
		two[0] = two[1] = sge;
		wr.sg_list = two;
		wr.num_sge = 2;
		ck_assert_int_eq(ibv_post_send(q1, &wr, &bad), EINVAL);
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.wr.atomic.remote_addr = (uintptr_t)target + 4;
		ck_assert_int_eq(ibv_post_send(q1, &wr, &bad), EINVAL);
		wr.wr.atomic.remote_addr = (uintptr_t)target;
		wr.send_flags |= IBV_SEND_INLINE;
		ck_assert_int_eq(ibv_post_send(q1, &wr, &bad), EINVAL);
		wr.opcode = IBV_WR_RDMA_READ;
		ck_assert_int_eq(ibv_post_send(q1, &wr, &bad), EINVAL);
		wr.opcode = IBV_WR_RDMA_WRITE;
		wr.num_sge = -1;
		ck_assert_int_eq(ibv_post_send(q1, &wr, &bad), EINVAL);
		wr.send_flags = IBV_SEND_SIGNALED;
		ck_assert_int_eq(ibv_post_send(q1, &wr, &bad), EINVAL);
		ck_assert_ptr_eq(bad, &wr);
		/* Still usable: the refused ones took no slot. */
		wr.num_sge = 1;
		wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
		wr.wr.atomic.compare_add = 1;
		ck_assert_int_eq(ibv_post_send(q1, &wr, &bad), 0);
		wc = wait_wc();
		ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
		ck_assert_int_eq(wc.opcode, IBV_WC_FETCH_ADD);
		ck_assert_uint_eq(*target, 8);
	}
	destroy_pair(q1, q2);
}
END_TEST

/* @p n WRITEs of 64 bytes from @p qp, ids from @p id0, none of them
 * flagged IBV_SEND_SIGNALED but the last when @p last_signaled. */
static void
post_writes(struct ibv_qp *qp, uint64_t id0, unsigned n, bool last_signaled)
{
	for (unsigned i = 0; i < n; i++) {
		struct ibv_sge sge = { (uintptr_t)(abuf + 64 * i), 64, amr->lkey };
		struct ibv_send_wr wr = {
			.wr_id = id0 + i, .sg_list = &sge, .num_sge = 1,
			.opcode = IBV_WR_RDMA_WRITE,
			.send_flags = last_signaled && i == n - 1 ? IBV_SEND_SIGNALED : 0,
		}, *bad;

		wr.wr.rdma.remote_addr = (uintptr_t)(bbuf + 64 * i);
		wr.wr.rdma.rkey = bmr->rkey;
		ck_assert_int_eq(ibv_post_send(qp, &wr, &bad), 0);
	}
}

/* Selective signaling: the ACKs retire every WRITE, and only the one
 * flagged IBV_SEND_SIGNALED completes visibly; on a QP created with
 * sq_sig_all every one does, flagged or not. */
START_TEST(rc_selective_signaling)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC, .sq_sig_all = 1,
		.cap = { .max_send_wr = 64, .max_recv_wr = 4, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct ibv_qp *q1, *q2;
	struct ibv_wc wc;

	pair(&q1, &q2);
	droce_test_fill(abuf, 64 * 40, 9);
	memset(bbuf, 0, 64 * 40);
	post_writes(q1, 1, 40, true);
	wc = wait_wc();
	ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
	ck_assert_uint_eq(wc.wr_id, 40);
	ck_assert_int_eq(wc.opcode, IBV_WC_RDMA_WRITE);
	ck_assert_int_eq(memcmp(abuf, bbuf, 64 * 40), 0);
	/* The next ones find room: the 39 before it were retired too. */
	post_writes(q1, 101, 40, true);
	wc = wait_wc();
	ck_assert_uint_eq(wc.wr_id, 140);
	ck_assert_int_eq(ibv_poll_cq(cq, 1, &wc), 0);

	destroy_pair(q1, q2);

	q1 = ibv_create_qp(pd, &ia);
	ck_assert_ptr_nonnull(q1);
	q2 = rc_qp();
	rc_connect(q1, q2->qp_num, PAIR_TIMEOUT, 7, 7);
	rc_connect(q2, q1->qp_num, PAIR_TIMEOUT, 7, 7);
	post_writes(q1, 201, 3, false);
	for (uint64_t id = 201; id <= 203; id++) {
		wc = wait_wc();
		ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
		ck_assert_uint_eq(wc.wr_id, id);
	}
	ck_assert_int_eq(ibv_poll_cq(cq, 1, &wc), 0);
	destroy_pair(q1, q2);
}
END_TEST

START_TEST(rc_inline_and_sge_lists)
{
	struct ibv_qp *q1, *q2;
	struct ibv_sge sge[3] = {
		{ (uintptr_t)abuf, 10, amr->lkey },
		{ (uintptr_t)abuf + 5000, 3000, amr->lkey },
		{ (uintptr_t)abuf + 100, 1, amr->lkey },
	};
	struct ibv_sge rsge[2] = {
		{ (uintptr_t)bbuf, 1500, bmr->lkey },
		{ (uintptr_t)bbuf + 9000, 2000, bmr->lkey },
	};
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = sge, .num_sge = 3,
				  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_recv_wr rwr = { .wr_id = 2, .sg_list = rsge, .num_sge = 2 }, *rbad;
	uint8_t expect[3011];
	struct ibv_wc wc;

	pair(&q1, &q2);
	droce_test_fill(abuf, 10000, 3);
	memcpy(expect, abuf, 10);
	memcpy(expect + 10, abuf + 5000, 3000);
	expect[3010] = abuf[100];
	ck_assert_int_eq(ibv_post_recv(q2, &rwr, &rbad), 0);
	ck_assert_int_eq(ibv_post_send(q1, &wr, &bad), 0);
	for (int k = 0; k < 2; k++)
		ck_assert_int_eq(wait_wc().status, IBV_WC_SUCCESS);
	ck_assert_int_eq(memcmp(bbuf, expect, 1500), 0);
	ck_assert_int_eq(memcmp(bbuf + 9000, expect + 1500, 1511), 0);

	/* Inline: the source buffer may change right after the post. An
	 * empty SGE may have no address (UBSan: no memcpy() from NULL). */
	memcpy(abuf, "inline!", 8);
	sge[0].length = 8;
	sge[1] = (struct ibv_sge){ 0 };
	wr.num_sge = 2;
	wr.send_flags |= IBV_SEND_INLINE;
	ck_assert_int_eq(ibv_post_recv(q2, &rwr, &rbad), 0);
	ck_assert_int_eq(ibv_post_send(q1, &wr, &bad), 0);
	memset(abuf, 0, 8);
	for (int k = 0; k < 2; k++) {
		wc = wait_wc();
		ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
	}
	ck_assert_str_eq((char *)bbuf, "inline!");

	/* SEND with invalidate of a key no peer may invalidate (not a memory
	 * window or fast-registered region): as in rxe (IB class J), the
	 * sender succeeds, the receive fails and the receiver's QP errs. */
	wr.opcode = IBV_WR_SEND_WITH_INV;
	wr.invalidate_rkey = 0x1234;
	wr.send_flags = IBV_SEND_SIGNALED;
	ck_assert_int_eq(ibv_post_recv(q2, &rwr, &rbad), 0);
	ck_assert_int_eq(ibv_post_send(q1, &wr, &bad), 0);
	for (int k = 0; k < 2; k++) {
		wc = wait_wc();
		ck_assert_int_eq(wc.status, wc.qp_num == q1->qp_num ? IBV_WC_SUCCESS :
					    IBV_WC_REM_INV_REQ_ERR);
	}
	expect_qp_event(ctx, IBV_EVENT_QP_REQ_ERR, q2);
	expect_qp_state(q2, IBV_QPS_ERR);
	destroy_pair(q1, q2);
}
END_TEST

START_TEST(rc_rnr_then_recovery)
{
	struct ibv_qp *q1, *q2;
	struct ibv_wc wc;
	double t0;

	pair(&q1, &q2);
	droce_test_fill(abuf, 2000, 9);
	/* No receive posted: the responder answers RNR NAK, the requester waits. */
	post_send(q1, IBV_WR_SEND, 1, abuf, 2000, NULL, 0, 0);
	t0 = droce_test_now();
	while (droce_test_now() - t0 < 0.05)
		ck_assert_int_eq(ibv_poll_cq(cq, 1, &wc), 0);
	post_recv(q2, 2, bbuf, 4096);
	for (int k = 0; k < 2; k++)
		ck_assert_int_eq(wait_wc().status, IBV_WC_SUCCESS);
	ck_assert_int_eq(memcmp(abuf, bbuf, 2000), 0);
	destroy_pair(q1, q2);
}
END_TEST

START_TEST(rc_rnr_retry_exceeded)
{
	struct ibv_qp *q1 = rc_qp(), *q2 = rc_qp();
	struct ibv_wc wc;

	rc_connect(q1, q2->qp_num, 14, 7, 1);
	rc_connect(q2, q1->qp_num, 14, 7, 7);
	post_send(q1, IBV_WR_SEND, 1, abuf, 64, NULL, 0, 0);
	wc = wait_wc();
	ck_assert_int_eq(wc.status, IBV_WC_RNR_RETRY_EXC_ERR);
	destroy_pair(q1, q2);
}
END_TEST

START_TEST(rc_retry_exceeded_without_peer)
{
	struct ibv_qp *q1 = rc_qp();
	struct ibv_wc wc;
	double t0 = droce_test_now();

	/* A destination QPN nobody has: requests vanish, the ACK timer runs
	 * out retry_cnt times (4.096 us * 2^10 = 4 ms each). */
	rc_connect(q1, 0xabcde, 10, 2, 7);
	post_send(q1, IBV_WR_RDMA_WRITE, 1, abuf, 64, bbuf, bmr->rkey, 0);
	wc = wait_wc();
	ck_assert_int_eq(wc.status, IBV_WC_RETRY_EXC_ERR);
	ck_assert_double_lt(droce_test_now() - t0, 5.0);
	ck_assert_int_eq(ibv_destroy_qp(q1), 0);
}
END_TEST

START_TEST(rc_remote_access_error)
{
	struct ibv_qp *q1, *q2;
	struct ibv_wc wc;

	pair(&q1, &q2);
	post_send(q1, IBV_WR_RDMA_WRITE, 1, abuf, 16, bbuf, bmr->rkey ^ 0x100, 0);
	wc = wait_wc();
	ck_assert_int_eq(wc.status, IBV_WC_REM_ACCESS_ERR);
	/* The responder NAKed it and went to the error state, as a NIC does. */
	expect_qp_event(ctx, IBV_EVENT_QP_ACCESS_ERR, q2);
	expect_qp_state(q2, IBV_QPS_ERR);
	/* Out of bounds of a valid key fails the same way on a fresh pair. */
	destroy_pair(q1, q2);
	pair(&q1, &q2);
	post_send(q1, IBV_WR_RDMA_READ, 2, abuf, 64, bbuf + BUF_SIZE - 32, bmr->rkey, 0);
	wc = wait_wc();
	ck_assert_int_eq(wc.status, IBV_WC_REM_ACCESS_ERR);
	expect_qp_event(ctx, IBV_EVENT_QP_ACCESS_ERR, q2);
	destroy_pair(q1, q2);
}
END_TEST

START_TEST(destroy_flushes_outstanding)
{
	struct ibv_qp *q1, *q2;
	struct ibv_wc wc;
	int flushed = 0;

	pair(&q1, &q2);
	for (int i = 0; i < 5; i++)
		post_recv(q2, 10 + i, bbuf, 64);
	ck_assert_int_eq(ibv_destroy_qp(q2), 0);
	while (ibv_poll_cq(cq, 1, &wc) > 0) {
		ck_assert_int_eq(wc.status, IBV_WC_WR_FLUSH_ERR);
		flushed++;
	}
	ck_assert_int_eq(flushed, 5);
	ck_assert_int_eq(ibv_destroy_qp(q1), 0);
}
END_TEST

START_TEST(error_state_flushes_posts)
{
	struct ibv_qp *q1, *q2;
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
	struct ibv_wc wc;

	pair(&q1, &q2);
	ck_assert_int_eq(ibv_modify_qp(q1, &a, IBV_QP_STATE), 0);
	post_send(q1, IBV_WR_SEND, 9, abuf, 16, NULL, 0, 0);
	wc = wait_wc();
	ck_assert_int_eq(wc.status, IBV_WC_WR_FLUSH_ERR);
	ck_assert_uint_eq(wc.wr_id, 9);
	destroy_pair(q1, q2);
}
END_TEST

static struct ibv_qp *
ud_qp(uint32_t qkey)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &ia);
	struct droce_test_path p = { .qkey = qkey, .psn = 0x123 };

	ck_assert_ptr_nonnull(qp);
	ck_assert_int_eq(droce_test_connect(qp, &p), 0);
	return qp;
}

START_TEST(ud_send_grh_and_reply)
{
	struct ibv_qp *q1 = ud_qp(0x11111111), *q2 = ud_qp(0x11111111);
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1,
				  .grh = { .dgid = gid, .sgid_index = 1, .hop_limit = 64 } };
	struct ibv_ah *ah = ibv_create_ah(pd, &aa), *back;
	struct ibv_sge sge = { (uintptr_t)abuf, 1000, amr->lkey };
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND_WITH_IMM, .send_flags = IBV_SEND_SIGNALED,
				  .imm_data = htobe32(77) }, *bad;
	struct ibv_wc wc, rwc = { 0 };

	ck_assert_ptr_nonnull(ah);
	droce_test_fill(abuf, 1000, 5);
	post_recv(q2, 2, bbuf, 1040);
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = q2->qp_num;
	wr.wr.ud.remote_qkey = 0x11111111;
	ck_assert_int_eq(ibv_post_send(q1, &wr, &bad), 0);
	for (int k = 0; k < 2; k++) {
		wc = wait_wc();
		ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
		if (wc.wr_id == 2)
			rwc = wc;
	}
	ck_assert_uint_eq(rwc.byte_len, 1040);
	ck_assert_uint_eq(rwc.src_qp, q1->qp_num);
	ck_assert(rwc.wc_flags & IBV_WC_GRH);
	ck_assert(rwc.wc_flags & IBV_WC_WITH_IMM);
	ck_assert_uint_eq(be32toh(rwc.imm_data), 77);
	ck_assert_uint_eq(bbuf[20], 0x45); /* the IPv4 header in the GRH's last 20 bytes */
	ck_assert_int_eq(memcmp(bbuf + 40, abuf, 1000), 0);
	/* The receiver answers the sender from the completion alone. */
	back = ibv_create_ah_from_wc(pd, &rwc, (struct ibv_grh *)bbuf, 1);
	ck_assert_ptr_nonnull(back);
	post_recv(q1, 3, bbuf + 65536, 1040);
	wr.wr.ud.ah = back;
	wr.wr.ud.remote_qpn = rwc.src_qp;
	wr.opcode = IBV_WR_SEND;
	ck_assert_int_eq(ibv_post_send(q2, &wr, &bad), 0);
	for (int k = 0; k < 2; k++)
		ck_assert_int_eq(wait_wc().status, IBV_WC_SUCCESS);
	/* A wrong Q_Key is dropped: nothing arrives. */
	post_recv(q2, 4, bbuf, 1040);
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = q2->qp_num;
	wr.wr.ud.remote_qkey = 0x22222222;
	ck_assert_int_eq(ibv_post_send(q1, &wr, &bad), 0);
	wc = wait_wc();
	ck_assert_uint_eq(wc.wr_id, 1);
	/* Larger than the MTU is refused at post time. */
	sge.length = 5000;
	ck_assert_int_eq(ibv_post_send(q1, &wr, &bad), EINVAL);
	/* So are opcodes a UD QP does not take, and ones that are none; of
	 * 8 bytes, which an atomic's own checks would let through. */
	sge.length = 8;
	wr.opcode = IBV_WR_RDMA_WRITE;
	ck_assert_int_eq(ibv_post_send(q1, &wr, &bad), EINVAL);
	wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	ck_assert_int_eq(ibv_post_send(q1, &wr, &bad), EINVAL);
	wr.opcode = (enum ibv_wr_opcode)99;
	ck_assert_int_eq(ibv_post_send(q1, &wr, &bad), EINVAL);
	wr.opcode = (enum ibv_wr_opcode)-1;
	ck_assert_int_eq(ibv_post_send(q1, &wr, &bad), EINVAL);
	ck_assert_ptr_eq(bad, &wr);
	ck_assert_int_eq(ibv_destroy_qp(q1), 0);
	ck_assert_int_eq(ibv_destroy_qp(q2), 0);
	wc = wait_wc();
	ck_assert_int_eq(wc.status, IBV_WC_WR_FLUSH_ERR);
	ck_assert_uint_eq(wc.wr_id, 4);
	ck_assert_int_eq(ibv_destroy_ah(ah), 0);
	ck_assert_int_eq(ibv_destroy_ah(back), 0);
}
END_TEST

START_TEST(ud_send_error_goes_to_sqe)
{
	struct ibv_qp *q1 = ud_qp(0x42), *q2 = ud_qp(0x42);
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1,
				  .grh = { .dgid = gid, .sgid_index = 1, .hop_limit = 64 } };
	struct ibv_ah *ah = ibv_create_ah(pd, &aa);
	struct ibv_sge sge = { (uintptr_t)abuf, 64, amr->lkey ^ 0x80 };
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTS, .cur_qp_state = IBV_QPS_SQE };
	struct ibv_wc wc;

	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = q2->qp_num;
	wr.wr.ud.remote_qkey = 0x42;
	/* A bad lkey: the send fails locally, the QP stops sending (SQE)... */
	ck_assert_int_eq(ibv_post_send(q1, &wr, &bad), 0);
	wc = wait_wc();
	ck_assert_int_eq(wc.status, IBV_WC_LOC_PROT_ERR);
	expect_qp_state(q1, IBV_QPS_SQE);
	/* The local error is an affiliated asynchronous event too. */
	expect_qp_event(ctx, IBV_EVENT_QP_FATAL, q1);
	/* ... but still receives. */
	post_recv(q1, 2, bbuf, 1040);
	sge.lkey = amr->lkey;
	wr.wr.ud.remote_qpn = q1->qp_num;
	ck_assert_int_eq(ibv_post_send(q2, &wr, &bad), 0);
	for (int k = 0; k < 2; k++)
		ck_assert_int_eq(wait_wc().status, IBV_WC_SUCCESS);
	/* SQE -> RTS, and it sends again. */
	a.qp_state = IBV_QPS_RTS;
	ck_assert_int_eq(ibv_modify_qp(q1, &a, IBV_QP_STATE), 0);
	post_recv(q2, 3, bbuf, 1040);
	wr.wr.ud.remote_qpn = q2->qp_num;
	ck_assert_int_eq(ibv_post_send(q1, &wr, &bad), 0);
	for (int k = 0; k < 2; k++)
		ck_assert_int_eq(wait_wc().status, IBV_WC_SUCCESS);
	ck_assert_int_eq(ibv_destroy_qp(q1), 0);
	ck_assert_int_eq(ibv_destroy_qp(q2), 0);
	ck_assert_int_eq(ibv_destroy_ah(ah), 0);
}
END_TEST

START_TEST(srq_shared_by_two_qps_and_limit_event)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 16, .max_sge = 1, .srq_limit = 0 } };
	struct ibv_srq *srq = ibv_create_srq(pd, &sa);
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .srq = srq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_send_sge = 1 },
	};
	struct ibv_qp *s1 = rc_qp(), *s2 = rc_qp(), *r1, *r2;
	struct ibv_srq_attr attr = { .srq_limit = 6 };
	struct ibv_async_event ev;
	struct ibv_recv_wr rwr, *rbad;
	struct ibv_sge rsge;
	int got = 0;

	ck_assert_ptr_nonnull(srq);
	r1 = ibv_create_qp(pd, &ia);
	r2 = ibv_create_qp(pd, &ia);
	ck_assert_ptr_nonnull(r1);
	ck_assert_ptr_nonnull(r2);
	rc_connect(s1, r1->qp_num, 14, 7, 7);
	rc_connect(r1, s1->qp_num, 14, 7, 7);
	rc_connect(s2, r2->qp_num, 14, 7, 7);
	rc_connect(r2, s2->qp_num, 14, 7, 7);
	for (int i = 0; i < 8; i++) {
		rsge = (struct ibv_sge){ (uintptr_t)bbuf + i * 4096, 4096, bmr->lkey };
		rwr = (struct ibv_recv_wr){ .wr_id = 1000 + i, .sg_list = &rsge, .num_sge = 1 };
		ck_assert_int_eq(ibv_post_srq_recv(srq, &rwr, &rbad), 0);
	}
	ck_assert_int_eq(ibv_modify_srq(srq, &attr, IBV_SRQ_LIMIT), 0);
	/* Two senders, one queue of receives: both land. */
	post_send(s1, IBV_WR_SEND, 1, abuf, 100, NULL, 0, 0);
	post_send(s2, IBV_WR_SEND, 2, abuf, 200, NULL, 0, 0);
	post_send(s1, IBV_WR_SEND, 3, abuf, 300, NULL, 0, 0);
	for (int k = 0; k < 6; k++) {
		struct ibv_wc wc = wait_wc();

		ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
		if (wc.opcode == IBV_WC_RECV) {
			ck_assert_uint_ge(wc.wr_id, 1000);
			ck_assert(wc.qp_num == r1->qp_num || wc.qp_num == r2->qp_num);
			got++;
		}
	}
	ck_assert_int_eq(got, 3);
	/* 5 left < limit 6: the event fired, once. */
	ck_assert_int_eq(ibv_get_async_event(ctx, &ev), 0);
	ck_assert_int_eq(ev.event_type, IBV_EVENT_SRQ_LIMIT_REACHED);
	ck_assert_ptr_eq(ev.element.srq, srq);
	ibv_ack_async_event(&ev);
	ck_assert_int_eq(ibv_query_srq(srq, &attr), 0);
	ck_assert_uint_eq(attr.srq_limit, 0);
	ck_assert_int_eq(ibv_destroy_srq(srq), EBUSY);
	destroy_pair(s1, r1);
	destroy_pair(s2, r2);
	ck_assert_int_eq(ibv_destroy_srq(srq), 0);
}
END_TEST

static void
xrc_modify(struct ibv_qp *qp, uint32_t dqpn)
{
	struct droce_test_path p = { .dqpn = dqpn, .dgid = gid, .psn = 7 };

	ck_assert_int_eq(droce_test_connect(qp, &p), 0);
}

/* What an XRC test starts from: an XRC SRQ of domain @p x completing on
 * @p srq_cq (its number in @p srqn), a target QP of @p x, and an
 * initiator on the test's CQ. */
static void
xrc_make(struct ibv_xrcd *x, struct ibv_cq *srq_cq, struct ibv_srq **srq, uint32_t *srqn,
	 struct ibv_qp **tgt, struct ibv_qp **ini)
{
	struct ibv_srq_init_attr_ex sa = {
		.attr = { .max_wr = 8, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			     IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ,
		.srq_type = IBV_SRQT_XRC, .pd = pd, .xrcd = x, .cq = srq_cq,
	};
	struct ibv_qp_init_attr_ex ta = { .qp_type = IBV_QPT_XRC_RECV,
					  .comp_mask = IBV_QP_INIT_ATTR_XRCD, .xrcd = x };
	struct ibv_qp_init_attr_ex ia = { .qp_type = IBV_QPT_XRC_SEND, .send_cq = cq,
					  .comp_mask = IBV_QP_INIT_ATTR_PD, .pd = pd,
					  .cap = { .max_send_wr = 8, .max_send_sge = 1 } };

	*srq = ibv_create_srq_ex(ctx, &sa);
	ck_assert_ptr_nonnull(*srq);
	ck_assert_int_eq(ibv_get_srq_num(*srq, srqn), 0);
	*tgt = ibv_create_qp_ex(ctx, &ta);
	*ini = ibv_create_qp_ex(ctx, &ia);
	ck_assert_ptr_nonnull(*tgt);
	ck_assert_ptr_nonnull(*ini);
}

START_TEST(xrc_shared_target_qp)
{
	char path[] = "/tmp/droce-xrcd-XXXXXX";
	int fd = mkstemp(path);
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx2 = ibv_open_device(list[0]);
	struct ibv_xrcd_init_attr xa = { .comp_mask = IBV_XRCD_INIT_ATTR_FD |
						     IBV_XRCD_INIT_ATTR_OFLAGS,
					 .fd = fd, .oflags = 0 };
	struct ibv_xrcd *x1, *x2;
	struct ibv_cq *xcq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	struct ibv_qp_open_attr oa = { .comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD |
						    IBV_QP_OPEN_ATTR_TYPE,
				       .qp_type = IBV_QPT_XRC_RECV };
	struct ibv_srq *srq;
	struct ibv_qp *tgt, *opened, *ini;
	struct ibv_sge sge = { (uintptr_t)abuf, 3000, amr->lkey };
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_recv_wr rwr, *rbad;
	struct ibv_sge rsge = { (uintptr_t)bbuf, 4096, bmr->lkey };
	struct ibv_wc wc;
	uint32_t srqn;

	ck_assert_int_ge(fd, 0);
	/* No domain behind this file yet, and no O_CREAT: refused. */
	ck_assert_ptr_null(ibv_open_xrcd(ctx, &xa));
	xa.oflags = O_CREAT;
	x1 = ibv_open_xrcd(ctx, &xa);
	ck_assert_ptr_nonnull(x1);
	xa.oflags = O_CREAT | O_EXCL;
	ck_assert_ptr_null(ibv_open_xrcd(ctx2, &xa));
	xa.oflags = 0;
	x2 = ibv_open_xrcd(ctx2, &xa); /* the same domain, from another context */
	ck_assert_ptr_nonnull(x2);

	xrc_make(x1, xcq, &srq, &srqn, &tgt, &ini);
	oa.qp_num = tgt->qp_num;
	oa.xrcd = x2;
	opened = ibv_open_qp(ctx2, &oa);
	ck_assert_ptr_nonnull(opened);
	ck_assert_uint_eq(opened->qp_num, tgt->qp_num);
	xrc_modify(tgt, ini->qp_num);
	xrc_modify(ini, tgt->qp_num);

	/* The creator lets go first: the opened handle keeps the QP alive. */
	ck_assert_int_eq(ibv_destroy_qp(tgt), 0);
	droce_test_fill(abuf, 3000, 11);
	for (int i = 0; i < 2; i++) {
		rwr = (struct ibv_recv_wr){ .wr_id = 50 + i, .sg_list = &rsge, .num_sge = 1 };
		ck_assert_int_eq(ibv_post_srq_recv(srq, &rwr, &rbad), 0);
	}
	wr.qp_type.xrc.remote_srqn = srqn;
	ck_assert_int_eq(ibv_post_send(ini, &wr, &bad), 0);
	wc = wait_wc();
	ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
	ck_assert_int_eq(wc.opcode, IBV_WC_SEND);
	{
		double end = droce_test_now() + 10;

		while (ibv_poll_cq(xcq, 1, &wc) == 0)
			ck_assert(droce_test_now() < end);
	}
	ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
	ck_assert_uint_eq(wc.wr_id, 50);
	ck_assert_uint_eq(wc.byte_len, 3000);
	ck_assert_uint_eq(wc.qp_num, opened->qp_num);
	ck_assert_int_eq(memcmp(abuf, bbuf, 3000), 0);

	/* A wrong SRQ number is an invalid request: the initiator fails. */
	wr.qp_type.xrc.remote_srqn = srqn + 1000;
	ck_assert_int_eq(ibv_post_send(ini, &wr, &bad), 0);
	wc = wait_wc();
	ck_assert_int_eq(wc.status, IBV_WC_REM_INV_REQ_ERR);
	/* The target refused it and went to the error state. */
	expect_qp_event(ctx2, IBV_EVENT_QP_REQ_ERR, opened);
	expect_qp_state(opened, IBV_QPS_ERR);

	/* The domain is in use: its last close fails; a non-last close works. */
	ck_assert_int_eq(ibv_close_xrcd(x2), 0);
	ck_assert_int_eq(ibv_close_xrcd(x1), EBUSY);
	/* The last handle takes the QP with it. */
	ck_assert_int_eq(ibv_destroy_qp(opened), 0);
	oa.xrcd = x1;
	errno = 0;
	ck_assert_ptr_null(ibv_open_qp(ctx, &oa));
	ck_assert_int_eq(errno, ENOENT);
	ck_assert_int_eq(ibv_destroy_qp(ini), 0);
	while (ibv_poll_cq(cq, 1, &wc) > 0)
		;
	ck_assert_int_eq(ibv_destroy_srq(srq), 0);
	ck_assert_int_eq(ibv_close_xrcd(x1), 0);
	while (ibv_poll_cq(xcq, 1, &wc) > 0)
		;
	ck_assert_int_eq(ibv_destroy_cq(xcq), 0);
	ck_assert_int_eq(ibv_close_device(ctx2), 0);
	ibv_free_device_list(list);
	close(fd);
	unlink(path);
}
END_TEST

/*
 * Bring @p qp to RTS with an RC QP's attributes whatever its type, as
 * perftest's -c XRC does: each XRC QP gets the other side's fields too.
 */
static void
xrc_modify_as_rc(struct ibv_qp *qp, uint32_t dqpn)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qp_access_flags = IBV_ACCESS_REMOTE_WRITE };

	ck_assert_int_eq(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
					       IBV_QP_ACCESS_FLAGS), 0);
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024,
				  .dest_qp_num = dqpn, .rq_psn = 9, .max_dest_rd_atomic = 4,
				  .min_rnr_timer = 12,
				  .ah_attr = { .is_global = 1, .port_num = 1,
					       .grh = { .dgid = gid, .sgid_index = 1, .hop_limit = 64 } } };
	ck_assert_int_eq(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
					       IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
					       IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER), 0);
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTS, .sq_psn = 9, .timeout = 14,
				  .retry_cnt = 7, .rnr_retry = 7, .max_rd_atomic = 4 };
	ck_assert_int_eq(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
					       IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
					       IBV_QP_MAX_QP_RD_ATOMIC), 0);
}

/*
 * The fields an XRC QP's type has no use for are ignored, as the kernel's
 * uverbs ignores them (modify_qp_mask()), not refused: the initiator's
 * responder fields, the target's requester fields. What a type needs is
 * still required.
 */
START_TEST(xrc_modify_ignores_other_sides_fields)
{
	struct ibv_xrcd_init_attr xa = { .comp_mask = IBV_XRCD_INIT_ATTR_FD |
						     IBV_XRCD_INIT_ATTR_OFLAGS,
					 .fd = -1, .oflags = O_CREAT };
	struct ibv_xrcd *x = ibv_open_xrcd(ctx, &xa);
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
	struct ibv_qp_init_attr init;
	struct ibv_srq *srq;
	struct ibv_qp *tgt, *ini;
	struct ibv_sge sge = { (uintptr_t)abuf, 100, amr->lkey };
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_sge rsge = { (uintptr_t)bbuf, 4096, bmr->lkey };
	struct ibv_recv_wr rwr = { .wr_id = 2, .sg_list = &rsge, .num_sge = 1 }, *rbad;
	struct ibv_wc wc;
	uint32_t srqn;
	int seen = 0;

	ck_assert_ptr_nonnull(x);
	xrc_make(x, cq, &srq, &srqn, &tgt, &ini);

	/* Without its peer's QPN the initiator still cannot reach RTR. */
	ck_assert_int_eq(ibv_modify_qp(ini, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
						IBV_QP_ACCESS_FLAGS), 0);
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024,
				  .ah_attr = { .is_global = 1, .port_num = 1,
					       .grh = { .dgid = gid, .sgid_index = 1 } } };
	ck_assert_int_eq(ibv_modify_qp(ini, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
						IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC), EINVAL);
	ck_assert_int_eq(ibv_modify_qp(ini, &(struct ibv_qp_attr){ .qp_state = IBV_QPS_RESET },
				       IBV_QP_STATE), 0);

	xrc_modify_as_rc(tgt, ini->qp_num);
	xrc_modify_as_rc(ini, tgt->qp_num);
	/* Taken where they mean something, left out where they do not. */
	ck_assert_int_eq(ibv_query_qp(ini, &a, 0, &init), 0);
	ck_assert_uint_eq(a.max_dest_rd_atomic, 0);
	ck_assert_uint_eq(a.min_rnr_timer, 0);
	ck_assert_uint_eq(a.retry_cnt, 7);
	ck_assert_uint_eq(a.max_rd_atomic, 4);
	ck_assert_int_eq(ibv_query_qp(tgt, &a, 0, &init), 0);
	ck_assert_uint_eq(a.retry_cnt, 0);
	ck_assert_uint_eq(a.rnr_retry, 0);
	ck_assert_uint_eq(a.max_rd_atomic, 0);
	ck_assert_uint_eq(a.max_dest_rd_atomic, 4);
	ck_assert_uint_eq(a.min_rnr_timer, 12);

	/* And the pair carries a SEND. */
	droce_test_fill(abuf, 100, 5);
	ck_assert_int_eq(ibv_post_srq_recv(srq, &rwr, &rbad), 0);
	wr.qp_type.xrc.remote_srqn = srqn;
	ck_assert_int_eq(ibv_post_send(ini, &wr, &bad), 0);
	{
		double end = droce_test_now() + 10;

		while (seen != 3) {
			ck_assert(droce_test_now() < end);
			if (ibv_poll_cq(cq, 1, &wc) == 0)
				continue;
			ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
			seen |= (int)wc.wr_id;
		}
	}
	ck_assert_int_eq(memcmp(abuf, bbuf, 100), 0);

	ck_assert_int_eq(ibv_destroy_qp(ini), 0);
	ck_assert_int_eq(ibv_destroy_qp(tgt), 0);
	ck_assert_int_eq(ibv_destroy_srq(srq), 0);
	ck_assert_int_eq(ibv_close_xrcd(x), 0);
}
END_TEST

START_TEST(qp_ex_work_request_builder)
{
	struct ibv_qp_init_attr_ex ax = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 32, .max_recv_wr = 32, .max_send_sge = 2,
			 .max_recv_sge = 1, .max_inline_data = 64 },
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS, .pd = pd,
		.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
				  IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD,
	};
	struct ibv_qp *q1, *q2 = rc_qp();
	struct ibv_qp_ex *x;
	uint64_t *target = (uint64_t *)(bbuf + 8192);
	struct ibv_sge two[2] = { { (uintptr_t)abuf, 100, amr->lkey },
				  { (uintptr_t)abuf + 1000, 50, amr->lkey } };
	char msg[] = "built with ibv_wr_*";
	int n = 0;

	ax.send_ops_flags |= IBV_QP_EX_WITH_TSO;
	errno = 0;
	ck_assert_ptr_null(ibv_create_qp_ex(ctx, &ax));
	ck_assert_int_eq(errno, EOPNOTSUPP);
	ax.send_ops_flags &= ~(uint64_t)IBV_QP_EX_WITH_TSO;
	q1 = ibv_create_qp_ex(ctx, &ax);
	ck_assert_ptr_nonnull(q1);
	ck_assert_ptr_null(ibv_qp_to_qp_ex(q2));
	x = ibv_qp_to_qp_ex(q1);
	ck_assert_ptr_nonnull(x);
	rc_connect(q1, q2->qp_num, 14, 7, 7);
	rc_connect(q2, q1->qp_num, 14, 7, 7);
	droce_test_fill(abuf, 2000, 1);
	*target = 1;
	post_recv(q2, 90, bbuf, 4096);
	post_recv(q2, 91, bbuf + 4096, 64);
	post_recv(q2, 92, bbuf + 16384, 4096);
	post_recv(q2, 93, bbuf + 24576, 64);

	ibv_wr_start(x);
	x->wr_id = 1;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(x);
	ibv_wr_set_sge_list(x, 2, two);
	x->wr_id = 2;
	ibv_wr_send(x);
	ibv_wr_set_inline_data(x, msg, sizeof(msg));
	x->wr_id = 3;
	ibv_wr_rdma_write_imm(x, bmr->rkey, (uintptr_t)bbuf + 20000, htobe32(5));
	ibv_wr_set_sge(x, amr->lkey, (uintptr_t)abuf, 700);
	x->wr_id = 4;
	ibv_wr_atomic_fetch_add(x, bmr->rkey, (uintptr_t)target, 9);
	ibv_wr_set_sge(x, amr->lkey, (uintptr_t)abuf + 4096, 8);
	/* An empty list may be NULL (UBSan: no memcpy() from it). */
	x->wr_id = 5;
	ibv_wr_send(x);
	ibv_wr_set_sge_list(x, 0, NULL);
	memset(msg, 0, sizeof(msg)); /* inline data was copied when it was set */
	ck_assert_int_eq(ibv_wr_complete(x), 0);
	for (int k = 0; k < 9; k++) {
		struct ibv_wc wc = wait_wc();

		ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
		n++;
	}
	ck_assert_int_eq(n, 9);
	ck_assert_int_eq(memcmp(bbuf, abuf, 100), 0);
	ck_assert_int_eq(memcmp(bbuf + 100, abuf + 1000, 50), 0);
	ck_assert_str_eq((char *)bbuf + 4096, "built with ibv_wr_*");
	ck_assert_int_eq(memcmp(bbuf + 20000, abuf, 700), 0);
	ck_assert_uint_eq(*(uint64_t *)(abuf + 4096), 1);
	ck_assert_uint_eq(*target, 10);

	/* An error drops the whole batch; abort posts nothing either. */
	ibv_wr_start(x);
	ibv_wr_send(x);
	ibv_wr_set_sge_list(x, 64, two);
	ck_assert_int_eq(ibv_wr_complete(x), EINVAL);
	ibv_wr_start(x);
	ibv_wr_rdma_read(x, bmr->rkey, (uintptr_t)bbuf);
	ibv_wr_set_sge(x, amr->lkey, (uintptr_t)abuf, 8);
	ibv_wr_abort(x);
	{
		struct ibv_wc wc;
		double end = droce_test_now() + 0.05;

		while (droce_test_now() < end)
			ck_assert_int_eq(ibv_poll_cq(cq, 1, &wc), 0);
	}
	destroy_pair(q1, q2);
}
END_TEST

/*
 * A post list with one poster (DROCE_SINGLE_THREADED: no lock): what
 * comes before the bad WR is posted, all of it at once, and completes in
 * order; the bad WR and what follows are not. Receives alike. More
 * completions than one CQ burst, so the bursts join in order.
 */
START_TEST(post_lists_single_poster)
{
	enum { N = 100, BAD = 70, LEN = 64 };
	static struct ibv_send_wr wrs[N];
	static struct ibv_recv_wr rwrs[N];
	static struct ibv_sge sges[N], rsges[N];
	struct ibv_send_wr *bad;
	struct ibv_recv_wr *rbad;
	struct ibv_qp *q1, *q2;
	unsigned got[2] = { 0, 0 };

	setenv("DROCE_SINGLE_THREADED", "1", 1);
	pair(&q1, &q2);
	unsetenv("DROCE_SINGLE_THREADED");
	droce_test_fill(abuf, N * LEN, 9);
	memset(bbuf, 0, 2 * N * LEN);
	for (unsigned i = 0; i < N; i++) {
		sges[i] = (struct ibv_sge){ (uintptr_t)abuf + i * LEN, LEN, amr->lkey };
		wrs[i] = (struct ibv_send_wr){
			.wr_id = i, .sg_list = &sges[i], .num_sge = 1, .opcode = IBV_WR_SEND,
			.send_flags = IBV_SEND_SIGNALED, .next = i + 1 < N ? &wrs[i + 1] : NULL,
		};
		rsges[i] = (struct ibv_sge){ (uintptr_t)bbuf + i * LEN, LEN, bmr->lkey };
		rwrs[i] = (struct ibv_recv_wr){
			.wr_id = 1000 + i, .sg_list = &rsges[i], .num_sge = 1,
			.next = i + 1 < N ? &rwrs[i + 1] : NULL,
		};
	}
	wrs[BAD].num_sge = 5; /* more than max_send_sge */
	rwrs[BAD].num_sge = 5;
	ck_assert_int_eq(ibv_post_recv(q2, rwrs, &rbad), EINVAL);
	ck_assert_ptr_eq(rbad, &rwrs[BAD]);
	ck_assert_int_eq(ibv_post_send(q1, wrs, &bad), EINVAL);
	ck_assert_ptr_eq(bad, &wrs[BAD]);
	for (unsigned k = 0; k < 2 * BAD; k++) {
		struct ibv_wc wc = wait_wc();
		unsigned recv = wc.opcode == IBV_WC_RECV;

		ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
		ck_assert_uint_eq(wc.wr_id, recv ? 1000 + got[1] : got[0]);
		got[recv]++;
	}
	ck_assert_uint_eq(got[0], BAD);
	ck_assert_uint_eq(got[1], BAD);
	ck_assert_int_eq(memcmp(bbuf, abuf, BAD * LEN), 0);
	/* Nothing of the rest was posted: the rings go on where they stopped. */
	wrs[BAD].num_sge = 1;
	rwrs[BAD].num_sge = 1;
	wrs[BAD].next = NULL;
	rwrs[BAD].next = NULL;
	ck_assert_int_eq(ibv_post_recv(q2, &rwrs[BAD], &rbad), 0);
	ck_assert_int_eq(ibv_post_send(q1, &wrs[BAD], &bad), 0);
	for (unsigned k = 0; k < 2; k++) {
		struct ibv_wc wc = wait_wc();

		ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
		ck_assert_uint_eq(wc.wr_id, wc.opcode == IBV_WC_RECV ? 1000u + BAD : (unsigned)BAD);
	}
	ck_assert_int_eq(memcmp(bbuf + BAD * LEN, abuf + BAD * LEN, LEN), 0);
	destroy_pair(q1, q2);
}
END_TEST

/* One post list of small WRITEs, which the requester sends a run at a
 * time: a READ ends a run, and a fenced WRITE after it waits for it. A bad
 * lkey right after a READ (the first WQE of a run, with WRITEs before it
 * waiting for their ACK) fails its WRITE locally once those complete, and
 * flushes the ones after it, which never reach the wire; so does a bad
 * lkey at the head of the queue. */
START_TEST(rc_small_write_runs)
{
	enum { N = 8, LEN = 64, FENCED = 3, BAD = 6 };
	const uint8_t is_read[N] = { [2] = 1, [5] = 1 };
	struct ibv_send_wr wrs[N], *bad;
	struct ibv_sge sges[N];
	struct ibv_qp *q1, *q2;
	uint8_t *src = abuf, *dst = bbuf + 65536, *rd = abuf + 65536;

	pair(&q1, &q2);
	droce_test_fill(src, N * LEN, 3);
	droce_test_fill(dst, N * LEN, 5);
	memset(rd, 0, N * LEN);
	for (unsigned i = 0; i < N; i++) {
		sges[i] = (struct ibv_sge){ (uintptr_t)((is_read[i] ? rd : src) + i * LEN), LEN,
					    amr->lkey };
		wrs[i] = (struct ibv_send_wr){
			.wr_id = i, .sg_list = &sges[i], .num_sge = 1,
			.opcode = is_read[i] ? IBV_WR_RDMA_READ : IBV_WR_RDMA_WRITE,
			.send_flags = IBV_SEND_SIGNALED, .next = i + 1 < N ? &wrs[i + 1] : NULL,
		};
		wrs[i].wr.rdma.remote_addr = (uintptr_t)(dst + i * LEN);
		wrs[i].wr.rdma.rkey = bmr->rkey;
	}
	wrs[FENCED].send_flags |= IBV_SEND_FENCE;
	sges[BAD].lkey = amr->lkey ^ 0x80;
	ck_assert_int_eq(ibv_post_send(q1, wrs, &bad), 0);
	for (unsigned i = 0; i < N; i++) {
		struct ibv_wc wc = wait_wc();

		ck_assert_uint_eq(wc.wr_id, i);
		ck_assert_int_eq(wc.status, i < BAD ? IBV_WC_SUCCESS :
					    i == BAD ? IBV_WC_LOC_PROT_ERR : IBV_WC_WR_FLUSH_ERR);
		if (i < BAD)
			ck_assert_int_eq(wc.opcode, is_read[i] ? IBV_WC_RDMA_READ :
								 IBV_WC_RDMA_WRITE);
	}
	/* What the READs fetched is what the WRITEs left untouched; the
	 * WRITEs from the bad one on wrote nothing. */
	droce_test_fill(rd + N * LEN, N * LEN, 5);
	for (unsigned i = 0; i < N; i++)
		ck_assert_int_eq(memcmp(is_read[i] ? rd + i * LEN : dst + i * LEN,
					is_read[i] || i >= BAD ? rd + N * LEN + i * LEN :
								 src + i * LEN, LEN), 0);
	expect_qp_state(q1, IBV_QPS_ERR);
	destroy_pair(q1, q2);

	pair(&q1, &q2);
	memset(dst, 0, N * LEN);
	for (unsigned i = 0; i < 3; i++) {
		wrs[i].opcode = IBV_WR_RDMA_WRITE;
		sges[i] = (struct ibv_sge){ (uintptr_t)(src + i * LEN), LEN,
					    i == 0 ? amr->lkey ^ 0x80 : amr->lkey };
	}
	wrs[2].next = NULL;
	ck_assert_int_eq(ibv_post_send(q1, wrs, &bad), 0);
	for (unsigned i = 0; i < 3; i++) {
		struct ibv_wc wc = wait_wc();

		ck_assert_uint_eq(wc.wr_id, i);
		ck_assert_int_eq(wc.status, i == 0 ? IBV_WC_LOC_PROT_ERR : IBV_WC_WR_FLUSH_ERR);
	}
	for (unsigned i = 0; i < N * LEN; i++)
		ck_assert_uint_eq(dst[i], 0);
	expect_qp_state(q1, IBV_QPS_ERR);
	destroy_pair(q1, q2);
}
END_TEST

/* The engine writes its counters without atomics (one writer; readers
 * load each whole): under ThreadSanitizer a read while the progress
 * thread runs is a race it reports, so the counts are checked in the
 * other builds only. */
#ifdef __SANITIZE_THREAD__
#define COUNTS_CHECKED 0
#else
#define COUNTS_CHECKED 1
#endif

/* A list of small messages, a few alike in a row (the requester builds a
 * frame like the one before it from that one's headers) and the next of
 * another opcode, length, pad, solicited flag or inline: every WRITE
 * lands where its own WR says, every SEND in its own receive, each with
 * its own immediate. */
START_TEST(rc_small_runs_of_like_frames)
{
	static const struct { enum ibv_wr_opcode op; uint32_t len; unsigned flags; } k[] = {
		{ IBV_WR_RDMA_WRITE, 5, 0 }, { IBV_WR_RDMA_WRITE, 5, 0 },
		{ IBV_WR_RDMA_WRITE, 5, 0 }, { IBV_WR_RDMA_WRITE, 64, 0 },
		{ IBV_WR_RDMA_WRITE, 64, 0 }, { IBV_WR_RDMA_WRITE_WITH_IMM, 6, 0 },
		{ IBV_WR_RDMA_WRITE_WITH_IMM, 6, 0 }, { IBV_WR_SEND, 13, IBV_SEND_SOLICITED },
		{ IBV_WR_SEND, 13, IBV_SEND_SOLICITED }, { IBV_WR_SEND, 13, 0 },
		{ IBV_WR_SEND_WITH_IMM, 13, IBV_SEND_INLINE },
		{ IBV_WR_SEND_WITH_IMM, 13, IBV_SEND_INLINE },
		{ IBV_WR_RDMA_WRITE, 1, IBV_SEND_INLINE }, { IBV_WR_RDMA_WRITE, 1, IBV_SEND_INLINE },
		{ IBV_WR_RDMA_WRITE, 0, 0 }, { IBV_WR_RDMA_WRITE, 0, 0 },
		{ IBV_WR_SEND, 64, 0 }, { IBV_WR_SEND, 64, 0 },
		{ IBV_WR_RDMA_WRITE, 63, 0 }, { IBV_WR_RDMA_WRITE, 63, 0 },
	};
	enum { N = sizeof(k) / sizeof(k[0]), SLOT = 128 };
	struct ibv_send_wr wrs[N], *bad;
	struct ibv_sge sges[N];
	struct ibv_qp *q1, *q2;
	uint8_t *src = abuf, *dst = bbuf + 65536, *rbuf = bbuf + 131072;
	unsigned recvs = 0, got = 0, seen_recv = 0;
	struct droce_dev_stats s0 = { 0 }, s1;
	uint64_t tx, rx, bytes = 0;

	pair(&q1, &q2);
	if (COUNTS_CHECKED)
		ck_assert_int_eq(droce_dev_stats(0, &s0), 0);
	droce_test_fill(src, N * SLOT, 11);
	memset(dst, 0, N * SLOT);
	memset(rbuf, 0, N * SLOT);
	for (unsigned i = 0; i < N; i++) {
		bool recv = k[i].op == IBV_WR_SEND || k[i].op == IBV_WR_SEND_WITH_IMM ||
			    k[i].op == IBV_WR_RDMA_WRITE_WITH_IMM;

		if (recv)
			post_recv(q2, 1000 + recvs, rbuf + recvs * SLOT, SLOT), recvs++;
		sges[i] = (struct ibv_sge){ (uintptr_t)(src + i * SLOT), k[i].len, amr->lkey };
		wrs[i] = (struct ibv_send_wr){
			.wr_id = i, .sg_list = &sges[i], .num_sge = k[i].len != 0, .opcode = k[i].op,
			.send_flags = IBV_SEND_SIGNALED | k[i].flags, .imm_data = htobe32(0x100 + i),
			.next = i + 1 < N ? &wrs[i + 1] : NULL,
		};
		wrs[i].wr.rdma.remote_addr = (uintptr_t)(dst + i * SLOT);
		wrs[i].wr.rdma.rkey = bmr->rkey;
		bytes += k[i].len;
	}
	ck_assert_int_eq(ibv_post_send(q1, wrs, &bad), 0);
	while (got < N + recvs) {
		struct ibv_wc wc = wait_wc();

		ck_assert_msg(wc.status == IBV_WC_SUCCESS, "wr %llu: %s",
			      (unsigned long long)wc.wr_id, ibv_wc_status_str(wc.status));
		got++;
		if (wc.wr_id >= 1000) {
			/* Receives complete in the order of the messages that
			 * consumed them: find which one this was. */
			unsigned i, r = 0;

			ck_assert_uint_eq(wc.wr_id, 1000 + seen_recv);
			for (i = 0; i < N; i++)
				if (k[i].op != IBV_WR_RDMA_WRITE && r++ == seen_recv)
					break;
			ck_assert_uint_eq(wc.byte_len, k[i].len);
			ck_assert_int_eq(!!(wc.wc_flags & IBV_WC_WITH_IMM), k[i].op != IBV_WR_SEND);
			if (k[i].op != IBV_WR_SEND)
				ck_assert_uint_eq(be32toh(wc.imm_data), 0x100 + i);
			if (k[i].op != IBV_WR_RDMA_WRITE_WITH_IMM)
				ck_assert_int_eq(memcmp(rbuf + seen_recv * SLOT, src + i * SLOT,
							k[i].len), 0);
			seen_recv++;
		}
	}
	for (unsigned i = 0; i < N; i++) {
		bool write = k[i].op == IBV_WR_RDMA_WRITE || k[i].op == IBV_WR_RDMA_WRITE_WITH_IMM;

		ck_assert_int_eq(memcmp(dst + i * SLOT, src + i * SLOT, write ? k[i].len : 0), 0);
		for (unsigned b = write ? k[i].len : 0; b < SLOT; b++)
			ck_assert_uint_eq(dst[i * SLOT + b], 0);
	}
	/* The engine's counts: each message once as sent (a run adds its
	 * frames up at its end) and once as received; a resend would count
	 * on both sides alike. */
	if (COUNTS_CHECKED) {
		ck_assert_int_eq(droce_dev_stats(0, &s1), 0);
		tx = s1.engine.tx_msgs - s0.engine.tx_msgs;
		rx = s1.engine.rx_msgs - s0.engine.rx_msgs;
		ck_assert_msg(tx >= N && tx == rx, "%u messages: %llu sent, %llu received",
			      (unsigned)N, (unsigned long long)tx, (unsigned long long)rx);
		tx = s1.engine.tx_payload_bytes - s0.engine.tx_payload_bytes;
		rx = s1.engine.rx_payload_bytes - s0.engine.rx_payload_bytes;
		ck_assert_msg(tx >= bytes && tx == rx, "%llu bytes: %llu sent, %llu received",
			      (unsigned long long)bytes, (unsigned long long)tx,
			      (unsigned long long)rx);
	}
	destroy_pair(q1, q2);
}
END_TEST

int
main(void)
{
	struct droce_test_loop loop;
	Suite *s = suite_create("verbs");
	TCase *tc = tcase_create("loopback");
	int failed;

	if (droce_test_loop_open(&loop, BUF_SIZE, ACCESS_ALL) != 0)
		return 1;
	ctx = loop.ctx, pd = loop.pd, cq = loop.cq, gid = loop.gid;
	abuf = loop.buf[0], bbuf = loop.buf[1], amr = loop.mr[0], bmr = loop.mr[1];
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, device_looks_like_roce);
	tcase_add_test(tc, bad_arguments_fail_with_errno);
	tcase_add_test(tc, rc_send_sizes);
	tcase_add_test(tc, rc_write_read_atomic);
	tcase_add_test(tc, rc_selective_signaling);
	tcase_add_test(tc, rc_inline_and_sge_lists);
	tcase_add_test(tc, rc_rnr_then_recovery);
	tcase_add_test(tc, rc_rnr_retry_exceeded);
	tcase_add_test(tc, rc_retry_exceeded_without_peer);
	tcase_add_test(tc, rc_remote_access_error);
	tcase_add_test(tc, destroy_flushes_outstanding);
	tcase_add_test(tc, error_state_flushes_posts);
	tcase_add_test(tc, ud_send_grh_and_reply);
	tcase_add_test(tc, ud_send_error_goes_to_sqe);
	tcase_add_test(tc, srq_shared_by_two_qps_and_limit_event);
	tcase_add_test(tc, xrc_shared_target_qp);
	tcase_add_test(tc, xrc_modify_ignores_other_sides_fields);
	tcase_add_test(tc, qp_ex_work_request_builder);
	tcase_add_test(tc, post_lists_single_poster);
	tcase_add_test(tc, rc_small_write_runs);
	tcase_add_test(tc, rc_small_runs_of_like_frames);
	suite_add_tcase(s, tc);
	failed = droce_test_run(s);
	droce_test_loop_close(&loop);
	return failed == 0 ? 0 : 1;
}
