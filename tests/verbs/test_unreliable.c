/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * UD and UC under loss, on the loopback device with the port's TX fault
 * stage dropping frames (droce_port_fault_set). The spec's promises:
 * - UD: each datagram arrives intact, once, or not at all;
 * - UC: a message that lost a packet is lost whole; the others arrive
 *   intact; the sender completes every message successfully either way.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <rte_common.h>
#include <infiniband/verbs.h>

#include "droce.h"
#include "droce_test.h"

#define MSGS 1000
#define ACCESS (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE)

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *scq, *rcq;
static union ibv_gid gid;

static void
set_drop(double p)
{
	struct droce_fault_conf f = { .drop = p, .seed = 7 };

	ck_assert_int_eq(droce_port_fault_set(droce_dev_port(0), false, p > 0 ? &f : NULL), 0);
}

/* The payload of message @p seq: its number, then a pattern of it. */
static void
fill(uint8_t *p, uint32_t len, uint32_t seq)
{
	memcpy(p, &seq, sizeof(seq));
	for (uint32_t i = sizeof(seq); i < len; i++)
		p[i] = (uint8_t)(seq * 7 + i);
}

static bool
intact(const uint8_t *p, uint32_t len, uint32_t *seq)
{
	memcpy(seq, p, sizeof(*seq));
	for (uint32_t i = sizeof(*seq); i < len; i++)
		if (p[i] != (uint8_t)(*seq * 7 + i))
			return false;
	return *seq < MSGS;
}

static struct ibv_qp *
make_qp(enum ibv_qp_type t)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = scq, .recv_cq = rcq, .qp_type = t,
		.cap = { .max_send_wr = MSGS, .max_recv_wr = MSGS, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &ia);

	ck_assert_ptr_nonnull(qp);
	return qp;
}

static void
to_rts(struct ibv_qp *qp, uint32_t dqpn)
{
	struct droce_test_path p = { .dqpn = dqpn, .dgid = gid, .qkey = 0x1234,
				     .access = ACCESS };

	ck_assert_int_eq(droce_test_connect(qp, &p), 0);
}

/* Post @p n receives of @p len bytes each into @p buf. */
static void
post_recvs(struct ibv_qp *qp, struct ibv_mr *mr, uint8_t *buf, uint32_t len, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		struct ibv_sge sge = { (uintptr_t)buf + (size_t)i * len, len, mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 }, *bad;

		ck_assert_int_eq(ibv_post_recv(qp, &wr, &bad), 0);
	}
}

/* Send MSGS messages of @p len bytes, wait for their completions, then
 * collect the receives: @return how many arrived (each checked intact and
 * seen once). */
static unsigned
exchange(struct ibv_qp *s, struct ibv_qp *r, struct ibv_ah *ah, uint32_t len,
	 uint32_t grh, uint8_t *sbuf, struct ibv_mr *smr, uint8_t *rbuf)
{
	static bool seen[MSGS];
	unsigned sent = 0, got = 0;
	struct ibv_wc wc[32];
	double end;
	int n;

	memset(seen, 0, sizeof(seen));
	for (uint32_t i = 0; i < MSGS; i++) {
		struct ibv_sge sge = { (uintptr_t)sbuf + (size_t)i * len, len, smr->lkey };
		struct ibv_send_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1,
					  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED },
				   *bad;

		fill(sbuf + (size_t)i * len, len, i);
		wr.wr.ud.ah = ah;
		wr.wr.ud.remote_qpn = r->qp_num;
		wr.wr.ud.remote_qkey = 0x1234;
		ck_assert_int_eq(ibv_post_send(s, &wr, &bad), 0);
	}
	end = droce_test_now() + 30;
	while (sent < MSGS) {
		n = ibv_poll_cq(scq, 32, wc);
		for (int i = 0; i < n; i++)
			ck_assert_int_eq(wc[i].status, IBV_WC_SUCCESS);
		sent += (unsigned)n;
		ck_assert(droce_test_now() < end);
	}
	/* Whatever is still on its way arrives well within this. */
	end = droce_test_now() + 0.5;
	while (droce_test_now() < end) {
		n = ibv_poll_cq(rcq, 32, wc);
		for (int i = 0; i < n; i++) {
			uint32_t seq;

			ck_assert_int_eq(wc[i].status, IBV_WC_SUCCESS);
			ck_assert_uint_eq(wc[i].byte_len, len + grh);
			ck_assert_msg(intact(rbuf + wc[i].wr_id * (len + grh) + grh, len, &seq),
				      "message damaged");
			ck_assert_msg(!seen[seq], "message %u delivered twice", seq);
			seen[seq] = true;
			got++;
		}
	}
	return got;
}

START_TEST(ud_datagrams_whole_or_lost)
{
	const uint32_t len = 1000, grh = 40;
	struct ibv_qp *s = make_qp(IBV_QPT_UD), *r = make_qp(IBV_QPT_UD);
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1,
				  .grh = { .dgid = gid, .sgid_index = 1, .hop_limit = 64 } };
	struct ibv_ah *ah = ibv_create_ah(pd, &aa);
	uint8_t *sbuf = calloc(MSGS, len), *rbuf = calloc(MSGS, len + grh);
	struct ibv_mr *smr = ibv_reg_mr(pd, sbuf, (size_t)MSGS * len, ACCESS);
	struct ibv_mr *rmr = ibv_reg_mr(pd, rbuf, (size_t)MSGS * (len + grh), ACCESS);
	unsigned got;

	to_rts(s, 0);
	to_rts(r, 0);
	post_recvs(r, rmr, rbuf, len + grh, MSGS);
	set_drop(0.2);
	got = exchange(s, r, ah, len, grh, sbuf, smr, rbuf);
	set_drop(0);
	printf("UD at 20%% loss: %u of %u datagrams arrived\n", got, MSGS);
	/* 800 expected; 5 sigma is about 63. */
	ck_assert_uint_gt(got, 700);
	ck_assert_uint_lt(got, 900);
	ck_assert_int_eq(ibv_destroy_qp(s), 0);
	ck_assert_int_eq(ibv_destroy_qp(r), 0);
	ck_assert_int_eq(ibv_destroy_ah(ah), 0);
	ibv_dereg_mr(smr);
	ibv_dereg_mr(rmr);
	free(sbuf);
	free(rbuf);
	while (ibv_poll_cq(rcq, 1, &(struct ibv_wc){ 0 }) > 0)
		;
}
END_TEST

START_TEST(uc_messages_whole_or_lost)
{
	const uint32_t len = 5000; /* five packets at path MTU 1024 */
	struct ibv_qp *s = make_qp(IBV_QPT_UC), *r = make_qp(IBV_QPT_UC);
	uint8_t *sbuf = calloc(MSGS, len), *rbuf = calloc(MSGS, len);
	struct ibv_mr *smr = ibv_reg_mr(pd, sbuf, (size_t)MSGS * len, ACCESS);
	struct ibv_mr *rmr = ibv_reg_mr(pd, rbuf, (size_t)MSGS * len, ACCESS);
	unsigned got;

	to_rts(s, r->qp_num);
	to_rts(r, s->qp_num);
	post_recvs(r, rmr, rbuf, len, MSGS);
	set_drop(0.05);
	got = exchange(s, r, NULL, len, 0, sbuf, smr, rbuf);
	set_drop(0);
	printf("UC at 5%% loss: %u of %u five-packet messages arrived\n", got, MSGS);
	/* 0.95^5 = 77% expected, give or take 7%. */
	ck_assert_uint_gt(got, 700);
	ck_assert_uint_lt(got, 840);
	ck_assert_int_eq(ibv_destroy_qp(s), 0);
	ck_assert_int_eq(ibv_destroy_qp(r), 0);
	ibv_dereg_mr(smr);
	ibv_dereg_mr(rmr);
	free(sbuf);
	free(rbuf);
	while (ibv_poll_cq(rcq, 1, &(struct ibv_wc){ 0 }) > 0)
		;
}
END_TEST

/* What a UC QP refuses at post time, as rdma-core's providers do, nothing
 * posted: the opcodes only RC has (READ, atomics, SEND with invalidate),
 * more SGEs than it was made with, and a message over 2 GiB in one SGE.
 * A WRITE of one SGE, the short path's, goes through after all of them. */
START_TEST(uc_refuses_at_post_time)
{
	static const enum ibv_wr_opcode rc_only[] = {
		IBV_WR_RDMA_READ, IBV_WR_ATOMIC_CMP_AND_SWP, IBV_WR_ATOMIC_FETCH_AND_ADD,
		IBV_WR_SEND_WITH_INV,
	};
	struct ibv_qp *s = make_qp(IBV_QPT_UC), *r = make_qp(IBV_QPT_UC);
	uint64_t *buf = calloc(2, sizeof(*buf));
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, 2 * sizeof(*buf), ACCESS);
	struct ibv_sge sge = { (uintptr_t)buf, sizeof(*buf), mr->lkey }, two[2] = { sge, sge };
	struct ibv_send_wr wr = { .wr_id = 9, .sg_list = &sge, .num_sge = 1,
				  .send_flags = IBV_SEND_SIGNALED,
				  .wr.rdma = { (uintptr_t)(buf + 1), mr->rkey } },
			   *bad;
	struct ibv_recv_wr *rbad;
	struct ibv_wc wc;
	double end;

	to_rts(s, r->qp_num);
	to_rts(r, s->qp_num);
	for (unsigned i = 0; i < RTE_DIM(rc_only); i++) {
		wr.opcode = rc_only[i];
		bad = NULL;
		ck_assert_int_eq(ibv_post_send(s, &wr, &bad), EINVAL);
		ck_assert_ptr_eq(bad, &wr);
	}
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.sg_list = two;
	wr.num_sge = 2;
	ck_assert_int_eq(ibv_post_send(s, &wr, &bad), EINVAL);
	wr.sg_list = &sge;
	wr.num_sge = 1;
	sge.length = (1u << 31) + 1;
	ck_assert_int_eq(ibv_post_send(s, &wr, &bad), EINVAL);
	sge.length = sizeof(*buf);
	*buf = 0x1122334455667788;
	ck_assert_int_eq(ibv_post_send(s, &wr, &bad), 0);
	while (ibv_poll_cq(scq, 1, &wc) == 0)
		droce_dev_poll(0);
	ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
	ck_assert_uint_eq(wc.wr_id, 9);
	/* A UC sender's completion says nothing of the peer. A SEND behind the
	 * WRITE on the same QP, nothing lost, is received after the WRITE has
	 * landed; its receive completion orders the read of the bytes after
	 * the engine's write of them (a loop on the bytes alone would race). */
	ck_assert_int_eq(ibv_post_recv(r, &(struct ibv_recv_wr){ .wr_id = 10 }, &rbad), 0);
	ck_assert_int_eq(ibv_post_send(s, &(struct ibv_send_wr){ .wr_id = 11,
				       .opcode = IBV_WR_SEND }, &bad), 0);
	end = droce_test_now() + 10;
	do {
		while (ibv_poll_cq(rcq, 1, &wc) == 0) {
			droce_dev_poll(0);
			ck_assert(droce_test_now() < end);
		}
	} while (wc.qp_num != r->qp_num); /* an earlier test's flushed receives */
	ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
	ck_assert_uint_eq(wc.wr_id, 10);
	ck_assert_uint_eq(buf[1], *buf);
	ck_assert_int_eq(ibv_destroy_qp(s), 0);
	ck_assert_int_eq(ibv_destroy_qp(r), 0);
	ibv_dereg_mr(mr);
	free(buf);
}
END_TEST

int
main(void)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	Suite *su = suite_create("unreliable");
	TCase *tc = tcase_create("loss");
	SRunner *sr;
	int failed;

	if (list == NULL || list[0] == NULL)
		return 1;
	ctx = ibv_open_device(list[0]);
	pd = ibv_alloc_pd(ctx);
	scq = ibv_create_cq(ctx, 2 * MSGS, NULL, NULL, 0);
	rcq = ibv_create_cq(ctx, 2 * MSGS, NULL, NULL, 0);
	if (!ctx || !pd || !scq || !rcq || ibv_query_gid(ctx, 1, 1, &gid) != 0)
		return 1;
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, ud_datagrams_whole_or_lost);
	tcase_add_test(tc, uc_messages_whole_or_lost);
	tcase_add_test(tc, uc_refuses_at_post_time);
	suite_add_tcase(su, tc);
	sr = srunner_create(su);
	srunner_set_fork_status(sr, CK_NOFORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	ibv_destroy_cq(scq);
	ibv_destroy_cq(rcq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	return failed == 0 ? 0 : 1;
}
