/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A verbs program linked against the drop-in libibverbs.so.1: the verbs
 * droce added for rdma-core compatibility answer what rdma-core's would,
 * and what droce does not support fails the documented way. The device
 * comes from DROCE_CONF (set by meson to a loopback port without
 * hugepages).
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <infiniband/verbs.h>

#include "droce_driver_abi.h"

static struct ibv_device **list;
static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_qp *qp;
static struct ibv_mr *mr;
static uint8_t buf[4096];

START_TEST(fork_is_always_safe)
{
	ck_assert_int_eq(ibv_is_fork_initialized(), IBV_FORK_UNNEEDED);
	ck_assert_int_eq(ibv_fork_init(), 0);
	ck_assert_int_eq(ibv_is_fork_initialized(), IBV_FORK_UNNEEDED);
	ck_assert_int_eq(ibv_dontfork_range(buf, sizeof(buf)), 0);
	ck_assert_int_eq(ibv_dofork_range(buf, sizeof(buf)), 0);
}
END_TEST

START_TEST(device_index_follows_the_list)
{
	ck_assert_str_eq(ibv_get_device_name(list[0]), "droce0");
	ck_assert_int_eq(ibv_get_device_index(list[0]), 0);
}
END_TEST

START_TEST(gids_are_roce_v2)
{
	const uint8_t v4mapped[16] = { [10] = 0xff, [11] = 0xff, 10, 98, 0, 1 };
	struct ibv_gid_entry e, table[64];
	enum ibv_gid_type_sysfs type;
	struct ibv_port_attr pa;
	union ibv_gid gid;
	uint32_t len;
	ssize_t n;
	int i;

	ck_assert_int_eq(ibv_query_port(ctx, 1, &pa), 0);
	len = (uint32_t)pa.gid_tbl_len;
	ck_assert_uint_le(len, 64);

	for (i = 0; i < 2; i++) {
		memset(&e, 0xa5, sizeof(e));
		ck_assert_int_eq(ibv_query_gid_ex(ctx, 1, i, &e, 0), 0);
		ck_assert_int_eq(ibv_query_gid(ctx, 1, i, &gid), 0);
		ck_assert_mem_eq(e.gid.raw, gid.raw, sizeof(gid));
		ck_assert_uint_eq(e.gid_index, i);
		ck_assert_uint_eq(e.port_num, 1);
		ck_assert_uint_eq(e.gid_type, IBV_GID_TYPE_ROCE_V2);
		ck_assert_uint_eq(e.ndev_ifindex, 0);
		ck_assert_int_eq(ibv_query_gid_type(ctx, 1, i, &type), 0);
		ck_assert_int_eq(type, IBV_GID_TYPE_SYSFS_ROCE_V2);
	}
	ck_assert_mem_eq(e.gid.raw, v4mapped, 16);

	/* An empty slot, a slot past the table, a bad port, bad flags. */
	ck_assert_int_eq(ibv_query_gid_ex(ctx, 1, 2, &e, 0), ENODATA);
	ck_assert_int_eq(ibv_query_gid_type(ctx, 1, 2, &type), 0);
	ck_assert_int_eq(type, IBV_GID_TYPE_SYSFS_IB_ROCE_V1);
	ck_assert_int_eq(ibv_query_gid_ex(ctx, 1, len, &e, 0), EINVAL);
	errno = 0;
	ck_assert_int_eq(ibv_query_gid_type(ctx, 1, len, &type), -1);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(ibv_query_gid_ex(ctx, 2, 0, &e, 0), EINVAL);
	ck_assert_int_eq(ibv_query_gid_ex(ctx, 1, 0, &e, 1), EINVAL);

	n = ibv_query_gid_table(ctx, table, len, 0);
	ck_assert_int_eq(n, 2);
	for (i = 0; i < n; i++) {
		ck_assert_int_eq(ibv_query_gid_ex(ctx, 1, i, &e, 0), 0);
		ck_assert_mem_eq(&table[i], &e, sizeof(e));
	}
	ck_assert_int_eq(ibv_query_gid_table(ctx, table, 1, 0), -EINVAL);
	ck_assert_int_eq(ibv_query_gid_table(ctx, table, len, 1), -EINVAL);
}
END_TEST

START_TEST(rates_convert_both_ways)
{
	static const enum ibv_rate all[] = {
		IBV_RATE_2_5_GBPS, IBV_RATE_5_GBPS, IBV_RATE_10_GBPS, IBV_RATE_20_GBPS,
		IBV_RATE_30_GBPS, IBV_RATE_40_GBPS, IBV_RATE_60_GBPS, IBV_RATE_80_GBPS,
		IBV_RATE_120_GBPS, IBV_RATE_14_GBPS, IBV_RATE_56_GBPS, IBV_RATE_112_GBPS,
		IBV_RATE_168_GBPS, IBV_RATE_25_GBPS, IBV_RATE_100_GBPS, IBV_RATE_200_GBPS,
		IBV_RATE_300_GBPS, IBV_RATE_28_GBPS, IBV_RATE_50_GBPS, IBV_RATE_400_GBPS,
		IBV_RATE_600_GBPS, IBV_RATE_800_GBPS, IBV_RATE_1200_GBPS,
	};
	size_t i;

	ck_assert_int_eq(ibv_rate_to_mult(IBV_RATE_2_5_GBPS), 1);
	ck_assert_int_eq(ibv_rate_to_mult(IBV_RATE_40_GBPS), 16);
	ck_assert_int_eq(ibv_rate_to_mult(IBV_RATE_120_GBPS), 48);
	ck_assert_int_eq(mult_to_ibv_rate(4), IBV_RATE_10_GBPS);
	ck_assert_int_eq(ibv_rate_to_mult(IBV_RATE_25_GBPS), -1);
	ck_assert_int_eq(ibv_rate_to_mult(IBV_RATE_MAX), -1);
	ck_assert_int_eq(mult_to_ibv_rate(3), IBV_RATE_MAX);
	ck_assert_int_eq(ibv_rate_to_mbps(IBV_RATE_14_GBPS), 14062);
	ck_assert_int_eq(ibv_rate_to_mbps(IBV_RATE_100_GBPS), 103125);
	ck_assert_int_eq(ibv_rate_to_mbps(IBV_RATE_400_GBPS), 425000);
	ck_assert_int_eq(ibv_rate_to_mbps(IBV_RATE_MAX), -1);
	ck_assert_int_eq(mbps_to_ibv_rate(100000), IBV_RATE_MAX);
	for (i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		int mult = ibv_rate_to_mult(all[i]);

		ck_assert_int_eq(mbps_to_ibv_rate(ibv_rate_to_mbps(all[i])), all[i]);
		if (mult > 0) {
			ck_assert_int_eq(mult_to_ibv_rate(mult), all[i]);
			ck_assert_int_eq(ibv_rate_to_mbps(all[i]), mult * 2500);
		}
	}
}
END_TEST

START_TEST(unsupported_verbs_fail_with_eopnotsupp)
{
	union ibv_gid mgid = { .raw = { 0xff, 0x0e } };
	struct ibv_values_ex rt = { .comp_mask = IBV_VALUES_MASK_RAW_CLOCK };
	struct ibv_ece ece;

	errno = 0;
	ck_assert_ptr_null(ibv_import_device(3));
	ck_assert_int_eq(errno, EOPNOTSUPP);
	errno = 0;
	ck_assert_ptr_null(ibv_import_pd(ctx, 1));
	ck_assert_int_eq(errno, EOPNOTSUPP);
	errno = 0;
	ck_assert_ptr_null(ibv_import_mr(pd, 1));
	ck_assert_int_eq(errno, EOPNOTSUPP);
	errno = 0;
	ck_assert_ptr_null(ibv_import_dm(ctx, 1));
	ck_assert_int_eq(errno, EOPNOTSUPP);
	errno = 0;
	ck_assert_ptr_null(ibv_reg_dmabuf_mr(pd, 0, 4096, 0, 3, IBV_ACCESS_LOCAL_WRITE));
	ck_assert_int_eq(errno, EOPNOTSUPP);
	/* Re-registration works (tests/verbs/test_verbs_ex.c), with rdma-core's
	 * refusals: access without IBV_REREG_MR_CHANGE_ACCESS. */
	errno = 0;
	ck_assert_int_eq(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_PD, pd, NULL, 0,
				      IBV_ACCESS_LOCAL_WRITE), IBV_REREG_MR_ERR_INPUT);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
				      IBV_ACCESS_LOCAL_WRITE), 0);
	/* Multicast is for UD QPs (tests/verbs/test_mcast.c): not this RC one. */
	ck_assert_int_eq(ibv_attach_mcast(qp, &mgid, 0), EINVAL);
	ck_assert_int_eq(ibv_detach_mcast(qp, &mgid, 0), EINVAL);
	/* The inline ibv_query_rt_values_ex() finds droce's clock. */
	ck_assert_int_eq(ibv_query_rt_values_ex(ctx, &rt), 0);
	ck_assert_int_ne(rt.raw_clock.tv_nsec, 0);
	ck_assert_int_eq(ibv_query_ece(qp, &ece), EOPNOTSUPP);
	ck_assert_int_eq(ibv_set_ece(qp, &ece), EOPNOTSUPP);
	ck_assert_int_eq(ibv_query_qp_data_in_order(qp, IBV_WR_RDMA_WRITE, 0), 0);
	/* The MR's range is untouched by either re-registration. */
	ck_assert_ptr_eq(mr->addr, buf);
	ck_assert_uint_eq(mr->length, sizeof(buf));
}
END_TEST

/* The inline verbs of verbs.h whose context slot droce leaves empty. */
START_TEST(inline_verbs_without_a_droce_op_fail)
{
	struct ibv_alloc_dm_attr dm = { .length = 4096 };
	struct ibv_counters_init_attr ci = { 0 };
	struct ibv_wq_init_attr wi = { .wq_type = IBV_WQT_RQ, .max_wr = 1, .max_sge = 1,
				       .pd = pd, .cq = cq };
	struct ibv_rwq_ind_table_init_attr ri = { 0 };
	struct ibv_flow_attr fa = { .size = sizeof(fa), .port = 1 };
	struct ibv_modify_cq_attr mc = { .attr_mask = IBV_CQ_ATTR_MODERATE };
	struct ibv_qp_rate_limit_attr rl = { .rate_limit = 1000 };
	struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = 64, .lkey = mr->lkey };
	struct ibv_qp_init_attr raw = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RAW_PACKET,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1 },
	};

#define NULL_EOPNOTSUPP(call) do {				\
		errno = 0;					\
		ck_assert_ptr_null(call);			\
		ck_assert_int_eq(errno, EOPNOTSUPP);		\
	} while (0)
	NULL_EOPNOTSUPP(ibv_create_flow(qp, &fa));
	NULL_EOPNOTSUPP(ibv_alloc_dm(ctx, &dm));
	NULL_EOPNOTSUPP(ibv_create_counters(ctx, &ci));
	NULL_EOPNOTSUPP(ibv_create_wq(ctx, &wi));
	NULL_EOPNOTSUPP(ibv_create_rwq_ind_table(ctx, &ri));
	NULL_EOPNOTSUPP(ibv_alloc_null_mr(pd));
#undef NULL_EOPNOTSUPP
	ck_assert_int_eq(ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, &sge, 1),
			 EOPNOTSUPP);
	ck_assert_int_eq(ibv_modify_cq(cq, &mc), EOPNOTSUPP);
	ck_assert_int_eq(ibv_modify_qp_rate_limit(qp, &rl), EOPNOTSUPP);
	ck_assert_ptr_null(ibv_create_qp(pd, &raw));
}
END_TEST

/* The inline thread and parent domain verbs find droce's slots in the
 * context (tests/verbs/test_td.c checks the rest). */
START_TEST(thread_and_parent_domains_reach_droce)
{
	struct ibv_td_init_attr ta = { 0 };
	struct ibv_td *td = ibv_alloc_td(ctx, &ta);
	struct ibv_parent_domain_init_attr pa = { .pd = pd, .td = td };
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_pd *pdom;
	struct ibv_qp *q;

	ck_assert_ptr_nonnull(td);
	pdom = ibv_alloc_parent_domain(ctx, &pa);
	ck_assert_ptr_nonnull(pdom);
	ck_assert_uint_eq(pdom->handle, pd->handle);
	q = ibv_create_qp(pdom, &ia);
	ck_assert_ptr_nonnull(q);
	ck_assert_int_eq(ibv_dealloc_td(td), EBUSY);
	ck_assert_int_eq(ibv_dealloc_pd(pdom), EBUSY);
	ck_assert_int_eq(ibv_destroy_qp(q), 0);
	ck_assert_int_eq(ibv_dealloc_pd(pdom), 0);
	ck_assert_int_eq(ibv_dealloc_td(td), 0);
	ta.comp_mask = 1;
	errno = 0;
	ck_assert_ptr_null(ibv_alloc_td(ctx, &ta));
	ck_assert_int_eq(errno, EINVAL);
}
END_TEST

START_TEST(provider_interface_fails_cleanly)
{
	struct ibv_send_wr swr = { .wr_id = 1 }, *sbad = NULL;
	struct ibv_recv_wr rwr = { .wr_id = 2 }, *rbad = NULL;
	struct ibv_wc wc;
	char text[16];
	struct ibv_pd other;
	void (*register_1_1)(const char *name, ibv_driver_init_func init_func);

	errno = 0;
	ck_assert_ptr_null(_verbs_init_and_alloc_context(list[0], -1, 4096, NULL, 0));
	ck_assert_int_eq(errno, EOPNOTSUPP);
	errno = 0;
	ck_assert_ptr_null(verbs_open_device(list[0], NULL));
	ck_assert_int_eq(errno, EOPNOTSUPP);
	ck_assert_int_eq(execute_ioctl(ctx, NULL), EOPNOTSUPP);
	ck_assert_int_eq(ibv_cmd_alloc_pd(ctx, &other, NULL, 0, NULL, 0), EOPNOTSUPP);
	ck_assert_int_eq(ibv_cmd_destroy_qp(qp), EOPNOTSUPP);
	errno = 0;
	ck_assert_int_eq(ibv_cmd_poll_cq(cq, 1, &wc), -1);
	ck_assert_int_eq(errno, EOPNOTSUPP);
	ck_assert_int_eq(ibv_cmd_post_send(qp, &swr, &sbad), EOPNOTSUPP);
	ck_assert_ptr_eq(sbad, &swr);
	ck_assert_int_eq(ibv_cmd_post_recv(qp, &rwr, &rbad), EOPNOTSUPP);
	ck_assert_ptr_eq(rbad, &rwr);
	/* A provider registering itself (libmlx5's constructor) changes nothing. */
	verbs_register_driver_34(NULL);
	/* Nor does an old one, through the non-default version rdma-core
	 * keeps for old binaries (which a .symver lost to LTO once dropped). */
	register_1_1 = (void (*)(const char *, ibv_driver_init_func))
		dlvsym(RTLD_DEFAULT, "ibv_register_driver", "IBVERBS_1.1");
	ck_assert_ptr_nonnull(register_1_1);
	register_1_1("old", NULL);
	ck_assert_str_eq(ibv_get_device_name(list[0]), "droce0");
	errno = 0;
	ck_assert_int_eq(ibv_read_sysfs_file(list[0]->ibdev_path, "board_id", text,
					     sizeof(text)), -1);
	ck_assert_int_eq(errno, ENOENT);
	ck_assert_str_eq(ibv_get_sysfs_path(), "/sys");
}
END_TEST

START_TEST(ioctl_attrs_counted_over_the_chain)
{
	/* Buffers with room for 4 attributes each, allocated as rdma-core's
	 * DECLARE_COMMAND_BUFFER lays them out; on the heap, because a
	 * struct ending in a flexible array cannot portably be embedded. */
	const size_t len = sizeof(struct ibv_command_buffer) + 4 * sizeof(struct ib_uverbs_attr);
	struct ibv_command_buffer *a = calloc(1, len), *b = calloc(1, len);

	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	a->next = b;
	a->next_attr = a->hdr.attrs + 3;
	b->next = NULL;
	b->next_attr = b->hdr.attrs + 1;
	ck_assert_uint_eq(__ioctl_final_num_attrs(2, a), 6);
	ck_assert_uint_eq(__ioctl_final_num_attrs(2, NULL), 2);
	free(a);
	free(b);
}
END_TEST

START_TEST(kernel_structs_copy_field_by_field)
{
	struct ib_uverbs_qp_attr k = {
		.qp_state = IBV_QPS_RTS, .cur_qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_4096,
		.qkey = 0x11111111, .rq_psn = 0x123456, .sq_psn = 0x654321, .dest_qp_num = 0x42,
		.qp_access_flags = IBV_ACCESS_REMOTE_READ, .max_send_wr = 7, .max_inline_data = 64,
		.pkey_index = 0, .max_rd_atomic = 4, .min_rnr_timer = 12, .port_num = 1,
		.timeout = 14, .retry_cnt = 7, .rnr_retry = 6,
		.ah_attr = { .grh = { .dgid = { 0xfe, 0x80 }, .flow_label = 5, .sgid_index = 1,
				      .hop_limit = 64, .traffic_class = 3 },
			     .dlid = 9, .sl = 2, .is_global = 1, .port_num = 1 },
	};
	struct ib_user_path_rec kp = {
		.dgid = { 1, 2, 3 }, .sgid = { 4, 5, 6 }, .dlid = 7, .slid = 8,
		.flow_label = 9, .reversible = 1, .mtu = IBV_MTU_1024, .pkey = 0xffff,
		.hop_limit = 64, .traffic_class = 1, .numb_path = 1, .sl = 3, .rate = 7,
		.packet_life_time = 18, .preference = 1,
	}, back;
	struct ibv_sa_path_rec p;
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	ibv_copy_qp_attr_from_kern(&a, &k);
	ck_assert_int_eq(a.qp_state, IBV_QPS_RTS);
	ck_assert_int_eq(a.cur_qp_state, IBV_QPS_RTR);
	ck_assert_int_eq(a.path_mtu, IBV_MTU_4096);
	ck_assert_uint_eq(a.qkey, 0x11111111);
	ck_assert_uint_eq(a.rq_psn, 0x123456);
	ck_assert_uint_eq(a.sq_psn, 0x654321);
	ck_assert_uint_eq(a.dest_qp_num, 0x42);
	ck_assert_uint_eq(a.cap.max_send_wr, 7);
	ck_assert_uint_eq(a.cap.max_inline_data, 64);
	ck_assert_uint_eq(a.max_rd_atomic, 4);
	ck_assert_uint_eq(a.min_rnr_timer, 12);
	ck_assert_uint_eq(a.timeout, 14);
	ck_assert_uint_eq(a.rnr_retry, 6);
	ck_assert_uint_eq(a.ah_attr.grh.dgid.raw[1], 0x80);
	ck_assert_uint_eq(a.ah_attr.grh.flow_label, 5);
	ck_assert_uint_eq(a.ah_attr.grh.sgid_index, 1);
	ck_assert_uint_eq(a.ah_attr.grh.hop_limit, 64);
	ck_assert_uint_eq(a.ah_attr.dlid, 9);
	ck_assert_uint_eq(a.ah_attr.sl, 2);
	ck_assert_uint_eq(a.ah_attr.is_global, 1);

	ibv_copy_path_rec_from_kern(&p, &kp);
	ck_assert_uint_eq(p.dgid.raw[2], 3);
	ck_assert_uint_eq(p.sgid.raw[2], 6);
	ck_assert_uint_eq(p.mtu, IBV_MTU_1024);
	ck_assert_uint_eq(p.packet_life_time, 18);
	memset(&back, 0, sizeof(back));
	ibv_copy_path_rec_to_kern(&back, &p);
	ck_assert_mem_eq(&back, &kp, sizeof(kp));
}
END_TEST

int
main(void)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	Suite *s = suite_create("dropin");
	TCase *tc = tcase_create("compat");
	SRunner *sr;
	int n, failed;

	list = ibv_get_device_list(&n);
	if (list == NULL || n < 1) {
		fprintf(stderr, "no droce device\n");
		return 1;
	}
	ctx = ibv_open_device(list[0]);
	pd = ctx != NULL ? ibv_alloc_pd(ctx) : NULL;
	cq = ctx != NULL ? ibv_create_cq(ctx, 16, NULL, NULL, 0) : NULL;
	ia.send_cq = ia.recv_cq = cq;
	qp = pd != NULL && cq != NULL ? ibv_create_qp(pd, &ia) : NULL;
	mr = pd != NULL ? ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE) : NULL;
	if (qp == NULL || mr == NULL) {
		fprintf(stderr, "setup failed: %s\n", strerror(errno));
		return 1;
	}
	tcase_add_test(tc, fork_is_always_safe);
	tcase_add_test(tc, device_index_follows_the_list);
	tcase_add_test(tc, gids_are_roce_v2);
	tcase_add_test(tc, rates_convert_both_ways);
	tcase_add_test(tc, unsupported_verbs_fail_with_eopnotsupp);
	tcase_add_test(tc, inline_verbs_without_a_droce_op_fail);
	tcase_add_test(tc, thread_and_parent_domains_reach_droce);
	tcase_add_test(tc, provider_interface_fails_cleanly);
	tcase_add_test(tc, ioctl_attrs_counted_over_the_chain);
	tcase_add_test(tc, kernel_structs_copy_field_by_field);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_set_fork_status(sr, CK_NOFORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	ibv_dereg_mr(mr);
	ibv_destroy_qp(qp);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
