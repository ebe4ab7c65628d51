/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * QP1 (lib/cm/droce_gsi.c) on a loopback device: it is QPN 1, a device
 * has one, applications can neither modify nor destroy it, their own QPs
 * never get its number, and a MAD sent to our own GID comes back through
 * it with the sender's GID.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "droce_test.h"
#include "droce_gsi.h"
#include "droce_verbs_priv.h"

static struct droce_test_loop loop;
static pthread_mutex_t got_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned got;
static uint8_t got_mad[DROCE_MAD_SIZE], got_src[16], got_dst[16];

static void
on_recv(void *arg, const uint8_t src[16], const uint8_t dst[16], const uint8_t mad[DROCE_MAD_SIZE])
{
	(void)arg;
	pthread_mutex_lock(&got_lock);
	memcpy(got_mad, mad, DROCE_MAD_SIZE);
	memcpy(got_src, src, 16);
	memcpy(got_dst, dst, 16);
	got++;
	pthread_mutex_unlock(&got_lock);
}

static uint64_t
on_timer(void *arg)
{
	(void)arg;
	return UINT64_MAX;
}

static const struct droce_gsi_ops ops = { .recv = on_recv, .timer = on_timer };

static void
setup(void)
{
	ck_assert_int_eq(droce_test_loop_open(&loop, 4096, IBV_ACCESS_LOCAL_WRITE), 0);
	got = 0;
}

static void
teardown(void)
{
	droce_test_loop_close(&loop);
}

/* QP1's handle, as no application gets it: through the QPN table. */
static struct ibv_qp *
qp1_handle(void)
{
	struct droce_qp *qp = droce_num_table_lookup(&droce_dev_of_ctx(loop.ctx)->qpt,
						     DROCE_GSI_QPN);

	ck_assert_ptr_nonnull(qp);
	return &LIST_FIRST(&qp->handle_list)->ibv.qp_base;
}

START_TEST(qp1_belongs_to_the_stack)
{
	struct droce_gsi *g = droce_gsi_open(loop.ctx, &ops, NULL);
	struct ibv_qp_init_attr ia = {
		.send_cq = loop.cq, .recv_cq = loop.cq, .qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };
	struct ibv_qp *app, *qp1;

	ck_assert_ptr_nonnull(g);
	ck_assert_uint_eq(droce_gsi_qpn(g), 1);
	/* One QP1 per device. */
	ck_assert_ptr_null(droce_gsi_open(loop.ctx, &ops, NULL));
	ck_assert_int_eq(errno, EBUSY);
	qp1 = qp1_handle();
	ck_assert_int_eq(qp1->qp_type, IBV_QPT_UD);
	ck_assert_int_eq(ibv_modify_qp(qp1, &a, IBV_QP_STATE), EPERM);
	ck_assert_int_eq(ibv_destroy_qp(qp1), EPERM);
	ck_assert_int_eq(droce_test_qp_state(qp1), IBV_QPS_RTS);
	/* An application's QPs come and go around it. */
	for (int i = 0; i < 4; i++) {
		app = ibv_create_qp(loop.pd, &ia);
		ck_assert_ptr_nonnull(app);
		ck_assert_uint_ge(app->qp_num, 0x11);
		ck_assert_int_eq(ibv_destroy_qp(app), 0);
	}
	ck_assert_ptr_eq(qp1_handle(), qp1);
	droce_gsi_close(g);
	/* Gone with its owner, and free for the next. */
	ck_assert_ptr_null(droce_num_table_lookup(&droce_dev_of_ctx(loop.ctx)->qpt, 1));
	g = droce_gsi_open(loop.ctx, &ops, NULL);
	ck_assert_ptr_nonnull(g);
	droce_gsi_close(g);
}
END_TEST

START_TEST(mad_to_ourselves)
{
	struct droce_gsi *g = droce_gsi_open(loop.ctx, &ops, NULL);
	uint8_t mad[DROCE_MAD_SIZE];
	double t0 = droce_test_now();

	ck_assert_ptr_nonnull(g);
	droce_test_fill(mad, sizeof(mad), 7);
	ck_assert_int_eq(droce_gsi_send(g, loop.gid.raw, mad), 0);
	for (;;) {
		pthread_mutex_lock(&got_lock);
		if (got > 0)
			break;
		pthread_mutex_unlock(&got_lock);
		ck_assert_msg(droce_test_now() - t0 < 20, "no MAD came back");
		usleep(1000);
	}
	ck_assert_uint_eq(got, 1);
	ck_assert_mem_eq(got_mad, mad, DROCE_MAD_SIZE);
	ck_assert_mem_eq(got_src, loop.gid.raw, 16);
	ck_assert_mem_eq(got_dst, loop.gid.raw, 16);
	pthread_mutex_unlock(&got_lock);
	droce_gsi_close(g);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("gsi");
	TCase *tc = tcase_create("qp1");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, qp1_belongs_to_the_stack);
	tcase_add_test(tc, mad_to_ourselves);
	suite_add_tcase(s, tc);
	return droce_test_run(s);
}
