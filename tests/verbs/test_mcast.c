/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * UD multicast over one loopback device: UD QPs attached to a multicast
 * GID (IPv4-mapped and IPv6) each receive what another QP sends to the
 * group (QPN 0xffffff), a detached or never attached QP does not, and
 * attach/detach refuse what the kernel refuses. Only <infiniband/verbs.h>
 * calls.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "droce_test.h"

#define BUF_SIZE (1u << 16)
#define QKEY 0x12345u
#define GRH_LEN 40
#define MCAST_QPN 0xffffffu

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static uint8_t *abuf, *bbuf;
static struct ibv_mr *amr, *bmr;
static union ibv_gid gid;

static const union ibv_gid group4 = { .raw = { [10] = 0xff, [11] = 0xff, [12] = 239, [13] = 1,
					       [14] = 2, [15] = 3 } };
static const union ibv_gid group6 = { .raw = { 0xff, 0x0e, [14] = 0x12, [15] = 0x34 } };

static struct ibv_qp *
ud_qp(void)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct droce_test_path p = { .dgid = gid, .qkey = QKEY };
	struct ibv_qp *qp = ibv_create_qp(pd, &ia);

	ck_assert_ptr_nonnull(qp);
	ck_assert_int_eq(droce_test_connect(qp, &p), 0);
	return qp;
}

/* Send @p len bytes of abuf from @p qp to @p group (source GID @p sgid). */
static void
send_to_group(struct ibv_qp *qp, const union ibv_gid *group, uint8_t sgid, uint32_t len)
{
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1,
				  .grh = { .dgid = *group, .sgid_index = sgid, .hop_limit = 1 } };
	struct ibv_ah *ah = ibv_create_ah(pd, &aa);
	struct ibv_sge sge = { (uintptr_t)abuf, len, amr->lkey };
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc;

	ck_assert_ptr_nonnull(ah);
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = MCAST_QPN;
	wr.wr.ud.remote_qkey = QKEY;
	ck_assert_int_eq(ibv_post_send(qp, &wr, &bad), 0);
	wc = droce_test_wait_wc(cq);
	ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
	ck_assert_uint_eq(wc.qp_num, qp->qp_num);
	ck_assert_int_eq(ibv_destroy_ah(ah), 0);
}

/* Each QP of @p rx (receives posted at bbuf + 4096 * i) gets the datagram
 * of @p len bytes from @p src, with the group in its GRH; nothing else
 * arrives within a short wait. */
static void
expect_delivery(struct ibv_qp *src, struct ibv_qp **rx, unsigned n, const union ibv_gid *group,
		uint32_t len)
{
	bool seen[4] = { false };
	struct ibv_wc wc;
	double end;

	for (unsigned k = 0; k < n; k++) {
		wc = droce_test_wait_wc(cq);
		ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
		ck_assert_int_eq(wc.opcode, IBV_WC_RECV);
		ck_assert_uint_lt(wc.wr_id, n);
		ck_assert(!seen[wc.wr_id]);
		seen[wc.wr_id] = true;
		ck_assert_uint_eq(wc.qp_num, rx[wc.wr_id]->qp_num);
		ck_assert_uint_eq(wc.src_qp, src->qp_num);
		ck_assert(wc.wc_flags & IBV_WC_GRH);
		ck_assert_uint_eq(wc.byte_len, GRH_LEN + len);
		ck_assert_int_eq(memcmp(bbuf + 4096 * wc.wr_id + GRH_LEN, abuf, len), 0);
		/* The GRH's destination (its last 16 bytes): the group's GID, or
		 * for IPv4 the group's address in the IPv4 header's last 4 bytes. */
		if (group->raw[0] == 0xff)
			ck_assert_int_eq(memcmp(bbuf + 4096 * wc.wr_id + 24, group->raw, 16), 0);
		else
			ck_assert_int_eq(memcmp(bbuf + 4096 * wc.wr_id + 36, group->raw + 12, 4), 0);
	}
	end = droce_test_now() + 0.2;
	while (droce_test_now() < end)
		ck_assert_int_eq(ibv_poll_cq(cq, 1, &wc), 0);
}

static void
group_run(const union ibv_gid *group, uint8_t sgid)
{
	struct ibv_qp *src = ud_qp(), *rx[3] = { ud_qp(), ud_qp(), ud_qp() };
	struct ibv_wc wc;

	for (unsigned i = 0; i < 3; i++)
		droce_test_post_recv(rx[i], i, bbuf + 4096 * i, 4096, bmr->lkey);
	ck_assert_int_eq(ibv_attach_mcast(rx[0], group, 0), 0);
	ck_assert_int_eq(ibv_attach_mcast(rx[1], group, 0), 0);
	/* Twice is no error, and still one delivery. */
	ck_assert_int_eq(ibv_attach_mcast(rx[1], group, 0), 0);
	droce_test_fill(abuf, 512, 1);
	send_to_group(src, group, sgid, 512);
	expect_delivery(src, rx, 2, group, 512);

	/* rx[1] leaves: only rx[0] receives (rx[2] never joined). */
	ck_assert_int_eq(ibv_detach_mcast(rx[1], group, 0), 0);
	ck_assert_int_eq(ibv_detach_mcast(rx[1], group, 0), EINVAL);
	droce_test_post_recv(rx[0], 0, bbuf, 4096, bmr->lkey);
	droce_test_fill(abuf, 100, 2);
	send_to_group(src, group, sgid, 100);
	expect_delivery(src, rx, 1, group, 100);

	/* Destroying an attached QP leaves the group: nobody receives. */
	ck_assert_int_eq(ibv_destroy_qp(rx[0]), 0);
	send_to_group(src, group, sgid, 100);
	ck_assert_int_eq(ibv_poll_cq(cq, 1, &wc), 0);
	ck_assert_int_eq(ibv_destroy_qp(rx[1]), 0);
	ck_assert_int_eq(ibv_destroy_qp(rx[2]), 0);
	ck_assert_int_eq(ibv_destroy_qp(src), 0);
	/* The flushed receives of the destroyed QPs. */
	while (ibv_poll_cq(cq, 1, &wc) == 1)
		ck_assert_int_eq(wc.status, IBV_WC_WR_FLUSH_ERR);
}

START_TEST(ipv4_group)
{
	group_run(&group4, 1);
}
END_TEST

START_TEST(ipv6_group)
{
	group_run(&group6, 0);
}
END_TEST

/* The limits the device reports, and what attach and detach refuse. */
START_TEST(refusals)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp *rc = ibv_create_qp(pd, &ia), *ud = ud_qp();
	struct ibv_device_attr a;

	ck_assert_int_eq(ibv_query_device(ctx, &a), 0);
	ck_assert_int_gt(a.max_mcast_grp, 0);
	ck_assert_int_gt(a.max_mcast_qp_attach, 0);
	ck_assert_int_ge(a.max_total_mcast_qp_attach, a.max_mcast_qp_attach);
	ck_assert_ptr_nonnull(rc);
	ck_assert_int_eq(ibv_attach_mcast(rc, &group4, 0), EINVAL);
	ck_assert_int_eq(ibv_attach_mcast(ud, &gid, 0), EINVAL);
	ck_assert_int_eq(ibv_detach_mcast(ud, &group6, 0), EINVAL);
	ck_assert_int_eq(ibv_destroy_qp(rc), 0);
	ck_assert_int_eq(ibv_destroy_qp(ud), 0);
}
END_TEST

int
main(void)
{
	struct droce_test_loop loop;
	Suite *s = suite_create("mcast");
	TCase *tc = tcase_create("loopback");
	int failed;

	if (droce_test_loop_open(&loop, BUF_SIZE, IBV_ACCESS_LOCAL_WRITE) != 0)
		return 1;
	ctx = loop.ctx, pd = loop.pd, cq = loop.cq, gid = loop.gid;
	abuf = loop.buf[0], bbuf = loop.buf[1], amr = loop.mr[0], bmr = loop.mr[1];
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, ipv4_group);
	tcase_add_test(tc, ipv6_group);
	tcase_add_test(tc, refusals);
	suite_add_tcase(s, tc);
	failed = droce_test_run(s);
	droce_test_loop_close(&loop);
	return failed == 0 ? 0 : 1;
}
