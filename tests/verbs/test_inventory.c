/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The inventory of docs/verbs-programs.md, checked: every verb listed as
 * failing fails exactly that way (NULL and errno EOPNOTSUPP for a
 * creator, EOPNOTSUPP returned otherwise), and every verb listed as
 * supported that no other test calls does what the list says. (Which test
 * calls the rest is in the list; tests/verbs/check_inventory.py checks
 * that the list names every function of <infiniband/verbs.h>.)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "droce_test.h"

static struct ibv_device **list;
static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_qp *qp;
static uint8_t buf[4096];

#define FAILS_NULL(call) do { \
		errno = 0; \
		ck_assert_ptr_null(call); \
		ck_assert_int_eq(errno, EOPNOTSUPP); \
	} while (0)
#define FAILS_ERRNO(call) ck_assert_int_eq((call), EOPNOTSUPP)

/* Verbs whose objects droce cannot create: they fail at creation, and
 * their other verbs on an object of the right context fail too. */
START_TEST(unsupported_families)
{
	struct ibv_flow_attr fa = { .size = sizeof(fa), .port = 1 };
	struct ibv_flow_action_esp_attr esp = { 0 };
	struct ibv_alloc_dm_attr dma = { .length = 64 };
	struct ibv_counters_init_attr cia = { 0 };
	struct ibv_wq_init_attr wqa = { .wq_type = IBV_WQT_RQ, .max_wr = 1, .max_sge = 1,
					.pd = pd, .cq = cq };
	struct ibv_rwq_ind_table_init_attr ria = { 0 };
	struct ibv_flow flow = { .context = ctx };
	struct ibv_flow_action action = { .context = ctx };
	struct ibv_dm dm = { .context = ctx };
	struct ibv_counters counters = { .context = ctx };
	struct ibv_counter_attach_attr caa = { 0 };
	struct ibv_wq wq = { .context = ctx };
	struct ibv_wq_attr wqattr = { 0 };
	struct ibv_rwq_ind_table rwq = { .context = ctx };
	uint64_t value;

	/* Flow steering and flow actions. */
	FAILS_NULL(ibv_create_flow(qp, &fa));
	FAILS_ERRNO(ibv_destroy_flow(&flow));
	FAILS_NULL(ibv_create_flow_action_esp(ctx, &esp));
	FAILS_ERRNO(ibv_modify_flow_action_esp(&action, &esp));
	FAILS_ERRNO(ibv_destroy_flow_action(&action));
	/* Device memory. */
	FAILS_NULL(ibv_alloc_dm(ctx, &dma));
	FAILS_ERRNO(ibv_free_dm(&dm));
	FAILS_NULL(ibv_reg_dm_mr(pd, &dm, 0, 64, IBV_ACCESS_ZERO_BASED));
	/* Counters. */
	FAILS_NULL(ibv_create_counters(ctx, &cia));
	FAILS_ERRNO(ibv_destroy_counters(&counters));
	FAILS_ERRNO(ibv_attach_counters_point_flow(&counters, &caa, &flow));
	FAILS_ERRNO(ibv_read_counters(&counters, &value, 1, 0));
	/* WQs and RSS indirection tables. */
	FAILS_NULL(ibv_create_wq(ctx, &wqa));
	FAILS_ERRNO(ibv_modify_wq(&wq, &wqattr));
	FAILS_ERRNO(ibv_destroy_wq(&wq));
	FAILS_NULL(ibv_create_rwq_ind_table(ctx, &ria));
	FAILS_ERRNO(ibv_destroy_rwq_ind_table(&rwq));
}
END_TEST

START_TEST(unsupported_verbs)
{
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	struct ibv_sge sge = { (uintptr_t)buf, 64, mr->lkey };
	struct ibv_ece ece = { 0 };
	struct ibv_qp_rate_limit_attr rl = { .rate_limit = 1000 };
	struct ibv_modify_cq_attr mca = { .attr_mask = IBV_CQ_ATTR_MODERATE,
					  .moderate = { .cq_count = 1, .cq_period = 1 } };
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1 };
	uint8_t mac[6];
	uint16_t vid;

	ck_assert_ptr_nonnull(mr);
	FAILS_NULL(ibv_reg_dmabuf_mr(pd, 0, 4096, 0, 0, IBV_ACCESS_LOCAL_WRITE));
	FAILS_NULL(ibv_import_device(3));
	FAILS_NULL(ibv_import_pd(ctx, 1));
	FAILS_NULL(ibv_import_mr(pd, 1));
	FAILS_NULL(ibv_import_dm(ctx, 1));
	FAILS_ERRNO(ibv_query_ece(qp, &ece));
	FAILS_ERRNO(ibv_set_ece(qp, &ece));
	errno = 0;
	ck_assert_int_eq(ibv_resolve_eth_l2_from_gid(ctx, &aa, mac, &vid), -EOPNOTSUPP);
	ck_assert_int_eq(errno, EOPNOTSUPP);
	FAILS_ERRNO(ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, &sge, 1));
	FAILS_NULL(ibv_alloc_null_mr(pd));
	FAILS_ERRNO(ibv_modify_cq(cq, &mca));
	FAILS_ERRNO(ibv_modify_qp_rate_limit(qp, &rl));
	ck_assert_int_eq(ibv_dereg_mr(mr), 0);
}
END_TEST

/* The extended-CQ fields and extended send operations droce has no data
 * or operation for: refused when the CQ or QP is created. */
START_TEST(unsupported_extended_fields)
{
	const uint64_t wc_flags[] = { IBV_WC_EX_WITH_CVLAN, IBV_WC_EX_WITH_FLOW_TAG,
				      IBV_WC_EX_WITH_TM_INFO };
	const uint64_t ops[] = { IBV_QP_EX_WITH_TSO, IBV_QP_EX_WITH_ATOMIC_WRITE };
	struct ibv_cq_init_attr_ex ca = { .cqe = 8 };
	struct ibv_qp_init_attr_ex qa = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS, .pd = pd,
	};
	struct ibv_srq_init_attr_ex sa = { .attr = { .max_wr = 4, .max_sge = 1 },
					   .comp_mask = IBV_SRQ_INIT_ATTR_TYPE |
							IBV_SRQ_INIT_ATTR_PD,
					   .srq_type = IBV_SRQT_BASIC, .pd = pd };
	struct ibv_ops_wr op = { .opcode = IBV_WR_TAG_ADD };
	struct ibv_ops_wr *bad;
	struct ibv_srq *srq;
	size_t i;

	for (i = 0; i < sizeof(wc_flags) / sizeof(wc_flags[0]); i++) {
		ca.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | wc_flags[i];
		FAILS_NULL(ibv_create_cq_ex(ctx, &ca));
	}
	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		qa.send_ops_flags = IBV_QP_EX_WITH_SEND | ops[i];
		FAILS_NULL(ibv_create_qp_ex(ctx, &qa));
	}
	qa.comp_mask = IBV_QP_INIT_ATTR_PD;
	qa.qp_type = IBV_QPT_RAW_PACKET;
	FAILS_NULL(ibv_create_qp_ex(ctx, &qa));
	/* Tag matching: no tag-matching SRQ, so no operations on one. */
	sa.srq_type = IBV_SRQT_TM;
	FAILS_NULL(ibv_create_srq_ex(ctx, &sa));
	sa.srq_type = IBV_SRQT_BASIC;
	srq = ibv_create_srq_ex(ctx, &sa);
	ck_assert_ptr_nonnull(srq);
	FAILS_ERRNO(ibv_post_srq_ops(srq, &op, &bad));
	ck_assert_int_eq(ibv_destroy_srq(srq), 0);
}
END_TEST

/* Supported verbs no other test calls. */
START_TEST(supported_small_verbs)
{
	struct ibv_device_attr_ex ax;
	struct ibv_gid_entry ge[8];
	union ibv_gid gid;
	__be16 pkey;
	ssize_t n;

	ck_assert_str_eq(ibv_get_device_name(list[0]), "droce0");
	ck_assert_uint_ne(ibv_get_device_guid(list[0]), 0);
	ck_assert_int_eq(ibv_get_device_index(list[0]), 0);
	ck_assert_int_eq(ibv_query_device_ex(ctx, NULL, &ax), 0);
	ck_assert_int_eq(ibv_query_gid(ctx, 1, 1, &gid), 0);
	ck_assert_int_eq(ibv_query_gid_ex(ctx, 1, 1, &ge[0], 0), 0);
	ck_assert_int_eq(memcmp(ge[0].gid.raw, gid.raw, 16), 0);
	ck_assert_int_eq(ge[0].gid_type, IBV_GID_TYPE_ROCE_V2);
	n = ibv_query_gid_table(ctx, ge, 8, 0);
	ck_assert_int_eq(n, 2);
	ck_assert_int_eq(ibv_query_pkey(ctx, 1, 0, &pkey), 0);
	ck_assert_int_eq(ibv_get_pkey_index(ctx, 1, pkey), 0);
	ck_assert(ibv_is_qpt_supported(1u << IBV_QPT_RC, IBV_QPT_RC));
	ck_assert_uint_eq(ibv_inc_rkey(0x12ff), 0x1200);
	ck_assert_uint_ge(ibv_flow_label_to_udp_sport(0x12345), 0xc000);
	ck_assert_int_eq(ibv_fork_init(), 0);
	ck_assert_int_eq(ibv_is_fork_initialized(), IBV_FORK_UNNEEDED);
	ck_assert_int_eq(ibv_query_qp_data_in_order(qp, IBV_WR_RDMA_WRITE, 0), 0);
	ck_assert_str_eq(ibv_node_type_str(IBV_NODE_CA), "InfiniBand channel adapter");
	ck_assert_str_eq(ibv_port_state_str(IBV_PORT_ACTIVE), "active");
	ck_assert_str_eq(ibv_event_type_str(IBV_EVENT_PORT_ERR), "port error");
	ck_assert_str_eq(ibv_wc_status_str(IBV_WC_SUCCESS), "success");
	ck_assert_int_eq(ibv_rate_to_mult(IBV_RATE_10_GBPS), 4);
	ck_assert_int_eq(mult_to_ibv_rate(4), IBV_RATE_10_GBPS);
	ck_assert_int_eq(ibv_rate_to_mbps(IBV_RATE_25_GBPS), 25781);
	ck_assert_int_eq(mbps_to_ibv_rate(25781), IBV_RATE_25_GBPS);
}
END_TEST

int
main(void)
{
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct droce_test_loop loop;
	Suite *s = suite_create("inventory");
	TCase *tc = tcase_create("verbs");
	int failed;

	if (droce_test_loop_open(&loop, sizeof(buf), IBV_ACCESS_LOCAL_WRITE) != 0)
		return 1;
	list = loop.list, ctx = loop.ctx, pd = loop.pd, cq = loop.cq;
	qa.send_cq = qa.recv_cq = cq;
	qp = ibv_create_qp(pd, &qa);
	if (qp == NULL) {
		fprintf(stderr, "setup failed\n");
		return 1;
	}
	tcase_add_test(tc, unsupported_families);
	tcase_add_test(tc, unsupported_verbs);
	tcase_add_test(tc, unsupported_extended_fields);
	tcase_add_test(tc, supported_small_verbs);
	suite_add_tcase(s, tc);
	failed = droce_test_run(s);
	ibv_destroy_qp(qp);
	droce_test_loop_close(&loop);
	return failed == 0 ? 0 : 1;
}
