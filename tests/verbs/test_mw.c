/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Memory windows over one loopback device, as rxe behaves: type 1 bound
 * by ibv_bind_mw(), type 2 by a bind work request (ibv_post_send and
 * ibv_wr_bind_mw), the key byte changing at each bind, remote accesses
 * checked against the window (bounds, rights, QP, key), invalidation by
 * LOCAL_INV and by a received SEND with invalidate, ibv_dereg_mr() refusing
 * while a window is bound, and the completion each misuse ends with.
 * Only <infiniband/verbs.h> calls.
 *
 * Binds and invalidations between WRITEs survive go-back-N under loss:
 * done once, never again when the WRITEs around them are resent.
 *
 * In every test, QP "t" (the target) owns the windows and QP "r" (its
 * peer, the remote) reaches them; both complete on the test's own CQ.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "droce.h"
#include "droce_test.h"

#define BUF_SIZE (1u << 16)
#define ACCESS_ALL (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
		    IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_MW_BIND)
#define MW_RW (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static uint8_t *abuf, *bbuf;
static struct ibv_mr *amr, *bmr;
static union ibv_gid gid;

/* One test's QPs: t and r connected to each other, on cq. */
struct pair {
	struct ibv_cq *cq;
	struct ibv_qp *t, *r;
};

static void
pair_open(struct pair *p, enum ibv_qp_type type, uint64_t send_ops)
{
	struct droce_test_path path = { .dgid = gid, .psn = 0x10 };

	p->cq = ibv_create_cq(ctx, 256, NULL, NULL, 0);
	ck_assert_ptr_nonnull(p->cq);
	p->t = droce_test_qp_new(pd, p->cq, type, send_ops);
	p->r = droce_test_qp_new(pd, p->cq, type, 0);
	path.dqpn = p->r->qp_num;
	ck_assert_int_eq(droce_test_connect(p->t, &path), 0);
	path.dqpn = p->t->qp_num;
	ck_assert_int_eq(droce_test_connect(p->r, &path), 0);
}

static void
pair_close(struct pair *p)
{
	ck_assert_int_eq(ibv_destroy_qp(p->t), 0);
	ck_assert_int_eq(ibv_destroy_qp(p->r), 0);
	ck_assert_int_eq(ibv_destroy_cq(p->cq), 0);
}

/* The next completion, which must be of @p qp with @p status (and, when
 * it succeeds, @p opcode). */
static struct ibv_wc
expect_wc(struct pair *p, struct ibv_qp *qp, enum ibv_wc_status status, enum ibv_wc_opcode opcode)
{
	struct ibv_wc wc = droce_test_wait_wc(p->cq);

	ck_assert_msg(wc.status == status, "completion %s, expected %s",
		      ibv_wc_status_str(wc.status), ibv_wc_status_str(status));
	ck_assert_uint_eq(wc.qp_num, qp->qp_num);
	if (status == IBV_WC_SUCCESS)
		ck_assert_int_eq(wc.opcode, opcode);
	return wc;
}

/* A signaled WRITE (or READ) of @p len bytes of abuf at @p va with @p rkey. */
static void
post_rdma(struct ibv_qp *qp, enum ibv_wr_opcode op, uint32_t rkey, uint64_t va, uint32_t len)
{
	struct ibv_sge sge = { (uintptr_t)abuf, len, amr->lkey };
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1, .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;

	wr.wr.rdma.remote_addr = va;
	wr.wr.rdma.rkey = rkey;
	ck_assert_int_eq(ibv_post_send(qp, &wr, &bad), 0);
}

/* A WRITE through the window that must succeed and land (UC completes
 * when sent: the data may land a little later). */
static void
write_ok(struct pair *p, uint32_t rkey, uint64_t va, uint8_t *dst, uint32_t len, unsigned seed)
{
	double end;

	droce_test_fill(abuf, len, seed);
	post_rdma(p->r, IBV_WR_RDMA_WRITE, rkey, va, len);
	expect_wc(p, p->r, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	end = droce_test_now() + 5;
	while (memcmp(dst, abuf, len) != 0)
		ck_assert_msg(droce_test_now() < end, "WRITE through the window did not land");
}

/* Type 2 bind (or, with @p mr NULL, nothing) by a work request. */
static void
post_bind(struct ibv_qp *qp, struct ibv_mw *mw, uint32_t new_rkey, struct ibv_mr *mr,
	  uint64_t addr, uint64_t len, unsigned access)
{
	struct ibv_send_wr wr = { .wr_id = 2, .opcode = IBV_WR_BIND_MW,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;

	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = new_rkey;
	wr.bind_mw.bind_info = (struct ibv_mw_bind_info){ mr, addr, len, access };
	ck_assert_int_eq(ibv_post_send(qp, &wr, &bad), 0);
}

/* Type 1 bind through ibv_bind_mw(); @return the window's new key. */
static uint32_t
bind1(struct pair *p, struct ibv_mw *mw, struct ibv_mr *mr, uint64_t addr, uint64_t len,
      unsigned access)
{
	uint32_t old = mw->rkey;
	struct ibv_mw_bind b = { .wr_id = 3, .send_flags = IBV_SEND_SIGNALED,
				 .bind_info = { mr, addr, len, access } };

	ck_assert_int_eq(ibv_bind_mw(p->t, mw, &b), 0);
	/* Same window index, the key byte moved on (ibv_inc_rkey()). */
	ck_assert_uint_eq(mw->rkey, ibv_inc_rkey(old));
	expect_wc(p, p->t, IBV_WC_SUCCESS, IBV_WC_BIND_MW);
	return mw->rkey;
}

static void
post_op_rkey(struct ibv_qp *qp, enum ibv_wr_opcode op, uint32_t rkey)
{
	struct ibv_sge sge = { (uintptr_t)abuf, 8, amr->lkey };
	struct ibv_send_wr wr = { .wr_id = 4, .opcode = op, .sg_list = &sge,
				  .num_sge = op == IBV_WR_SEND_WITH_INV,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;

	wr.invalidate_rkey = rkey;
	ck_assert_int_eq(ibv_post_send(qp, &wr, &bad), 0);
}

START_TEST(type1_bind_access_rebind)
{
	struct pair p;
	struct ibv_mw *mw = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	uint64_t base = (uintptr_t)bbuf;
	uint32_t k1, k2;

	ck_assert_ptr_nonnull(mw);
	ck_assert_int_eq(mw->type, IBV_MW_TYPE_1);
	ck_assert_uint_ne(mw->rkey, bmr->rkey);
	pair_open(&p, IBV_QPT_RC, 0);
	/* Unbound: nothing reaches through it. */
	post_rdma(p.r, IBV_WR_RDMA_WRITE, mw->rkey, base, 8);
	expect_wc(&p, p.r, IBV_WC_REM_ACCESS_ERR, 0);
	pair_close(&p);

	pair_open(&p, IBV_QPT_RC, 0);
	k1 = bind1(&p, mw, bmr, base + 4096, 8192, MW_RW);
	write_ok(&p, k1, base + 4096, bbuf + 4096, 8192, 1);
	write_ok(&p, k1, base + 8192, bbuf + 8192, 100, 2);
	/* The window may be rebound at once; the old key reaches nothing. */
	k2 = bind1(&p, mw, bmr, base, 4096, IBV_ACCESS_REMOTE_READ);
	ck_assert_uint_eq(k2 >> 8, k1 >> 8);
	post_rdma(p.r, IBV_WR_RDMA_READ, k2, base + 16, 64);
	expect_wc(&p, p.r, IBV_WC_SUCCESS, IBV_WC_RDMA_READ);
	ck_assert_int_eq(memcmp(abuf, bbuf + 16, 64), 0);
	post_rdma(p.r, IBV_WR_RDMA_READ, k1, base + 4096, 64);
	expect_wc(&p, p.r, IBV_WC_REM_ACCESS_ERR, 0);
	pair_close(&p);

	/* Read-only window: no WRITE through it, though the region allows it. */
	pair_open(&p, IBV_QPT_RC, 0);
	post_rdma(p.r, IBV_WR_RDMA_WRITE, k2, base, 8);
	expect_wc(&p, p.r, IBV_WC_REM_ACCESS_ERR, 0);
	pair_close(&p);

	/* Past the window's end, inside the region: refused. */
	pair_open(&p, IBV_QPT_RC, 0);
	post_rdma(p.r, IBV_WR_RDMA_READ, k2, base + 4000, 200);
	expect_wc(&p, p.r, IBV_WC_REM_ACCESS_ERR, 0);
	pair_close(&p);

	/* Bound to nothing (length 0): refused again. */
	pair_open(&p, IBV_QPT_RC, 0);
	k1 = bind1(&p, mw, NULL, 0, 0, 0);
	post_rdma(p.r, IBV_WR_RDMA_READ, k1, base, 8);
	expect_wc(&p, p.r, IBV_WC_REM_ACCESS_ERR, 0);
	pair_close(&p);
	ck_assert_int_eq(ibv_dealloc_mw(mw), 0);
}
END_TEST

START_TEST(type2_bind_qp_and_invalidate)
{
	struct pair p, o;
	struct ibv_mw *mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	uint64_t base = (uintptr_t)bbuf;
	uint32_t k;
	struct ibv_wc wc;

	ck_assert_ptr_nonnull(mw);
	pair_open(&p, IBV_QPT_RC, 0);
	k = ibv_inc_rkey(mw->rkey);
	post_bind(p.t, mw, k, bmr, base + 1024, 2048, IBV_ACCESS_REMOTE_WRITE);
	expect_wc(&p, p.t, IBV_WC_SUCCESS, IBV_WC_BIND_MW);
	mw->rkey = k;
	write_ok(&p, k, base + 1024, bbuf + 1024, 2048, 3);

	/* Another QP of the same PD: a type 2 window answers only its own. */
	pair_open(&o, IBV_QPT_RC, 0);
	post_rdma(o.r, IBV_WR_RDMA_WRITE, k, base + 1024, 8);
	expect_wc(&o, o.r, IBV_WC_REM_ACCESS_ERR, 0);
	pair_close(&o);

	/* SEND with invalidate: the receive says which key it revoked. */
	droce_test_post_recv(p.t, 9, bbuf + 8192, 64, bmr->lkey);
	post_op_rkey(p.r, IBV_WR_SEND_WITH_INV, k);
	wc = droce_test_wait_wc(p.cq);
	if (wc.qp_num == p.r->qp_num) {
		ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
		wc = droce_test_wait_wc(p.cq);
	} else {
		expect_wc(&p, p.r, IBV_WC_SUCCESS, IBV_WC_SEND);
	}
	ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
	ck_assert_uint_eq(wc.qp_num, p.t->qp_num);
	ck_assert_int_eq(wc.opcode, IBV_WC_RECV);
	ck_assert(wc.wc_flags & IBV_WC_WITH_INV);
	ck_assert_uint_eq(wc.invalidated_rkey, k);
	post_rdma(p.r, IBV_WR_RDMA_WRITE, k, base + 1024, 8);
	expect_wc(&p, p.r, IBV_WC_REM_ACCESS_ERR, 0);
	pair_close(&p);

	/* Bound again (zero-based this time), then invalidated locally. */
	pair_open(&p, IBV_QPT_RC, 0);
	k = ibv_inc_rkey(mw->rkey);
	post_bind(p.t, mw, k, bmr, base + 4096, 512,
		  IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_ZERO_BASED);
	expect_wc(&p, p.t, IBV_WC_SUCCESS, IBV_WC_BIND_MW);
	mw->rkey = k;
	write_ok(&p, k, 100, bbuf + 4096 + 100, 412, 4);
	post_op_rkey(p.t, IBV_WR_LOCAL_INV, k);
	expect_wc(&p, p.t, IBV_WC_SUCCESS, IBV_WC_LOCAL_INV);
	post_rdma(p.r, IBV_WR_RDMA_WRITE, k, 0, 8);
	expect_wc(&p, p.r, IBV_WC_REM_ACCESS_ERR, 0);
	pair_close(&p);
	ck_assert_int_eq(ibv_dealloc_mw(mw), 0);
}
END_TEST

/* ibv_wr_bind_mw() and ibv_wr_local_inv() of the extended QP, on UC too. */
START_TEST(type2_qp_ex)
{
	const enum ibv_qp_type types[] = { IBV_QPT_RC, IBV_QPT_UC };
	struct ibv_mw_bind_info bi = { bmr, (uintptr_t)bbuf, 4096, IBV_ACCESS_REMOTE_WRITE };

	for (unsigned i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		struct ibv_mw *mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
		uint32_t k = ibv_inc_rkey(mw->rkey);
		struct ibv_qp_ex *x;
		struct pair p;

		pair_open(&p, types[i], IBV_QP_EX_WITH_BIND_MW | IBV_QP_EX_WITH_LOCAL_INV |
					IBV_QP_EX_WITH_RDMA_WRITE);
		x = ibv_qp_to_qp_ex(p.t);
		ck_assert_ptr_nonnull(x);
		ibv_wr_start(x);
		x->wr_id = 5;
		x->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_bind_mw(x, mw, k, &bi);
		ck_assert_int_eq(ibv_wr_complete(x), 0);
		expect_wc(&p, p.t, IBV_WC_SUCCESS, IBV_WC_BIND_MW);
		write_ok(&p, k, (uintptr_t)bbuf + 64, bbuf + 64, 256, 5 + i);
		ibv_wr_start(x);
		ibv_wr_local_inv(x, k);
		ck_assert_int_eq(ibv_wr_complete(x), 0);
		expect_wc(&p, p.t, IBV_WC_SUCCESS, IBV_WC_LOCAL_INV);
		pair_close(&p);
		ck_assert_int_eq(ibv_dealloc_mw(mw), 0);
	}
}
END_TEST

/* A type 2 bind and a local invalidation between WRITEs on a lossy link
 * (the port drops 10% of what it sends): go-back-N resends the WRITEs
 * around them, but a bind or invalidation done once is not done again (a
 * second bind of a bound type 2 window would fail). */
START_TEST(local_ops_under_loss)
{
	struct droce_fault_conf f = { .drop = 0.1, .seed = 11 };
	struct ibv_mw *mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	uint64_t base = (uintptr_t)bbuf;
	struct pair p;

	ck_assert_ptr_nonnull(mw);
	ck_assert_int_eq(droce_port_fault_set(droce_dev_port(0), false, &f), 0);
	pair_open(&p, IBV_QPT_RC, 0);
	for (int round = 0; round < 20; round++) {
		uint32_t k = ibv_inc_rkey(mw->rkey);

		post_rdma(p.t, IBV_WR_RDMA_WRITE, amr->rkey, (uintptr_t)abuf + 8192, 3000);
		post_bind(p.t, mw, k, bmr, base, 4096, IBV_ACCESS_REMOTE_WRITE);
		post_rdma(p.t, IBV_WR_RDMA_WRITE, amr->rkey, (uintptr_t)abuf + 16384, 3000);
		post_op_rkey(p.t, IBV_WR_LOCAL_INV, k);
		post_rdma(p.t, IBV_WR_RDMA_WRITE, amr->rkey, (uintptr_t)abuf + 24576, 3000);
		expect_wc(&p, p.t, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
		expect_wc(&p, p.t, IBV_WC_SUCCESS, IBV_WC_BIND_MW);
		expect_wc(&p, p.t, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
		expect_wc(&p, p.t, IBV_WC_SUCCESS, IBV_WC_LOCAL_INV);
		expect_wc(&p, p.t, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
		mw->rkey = k;
	}
	ck_assert_int_eq(droce_port_fault_set(droce_dev_port(0), false, NULL), 0);
	pair_close(&p);
	ck_assert_int_eq(ibv_dealloc_mw(mw), 0);
}
END_TEST

START_TEST(dereg_busy_while_bound)
{
	uint8_t *buf = calloc(1, 8192);
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, 8192, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	struct ibv_mw *w1 = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	struct ibv_mw *w2 = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	struct pair p;
	uint32_t k;

	ck_assert_ptr_nonnull(mr);
	pair_open(&p, IBV_QPT_RC, 0);
	bind1(&p, w1, mr, (uintptr_t)buf, 4096, IBV_ACCESS_REMOTE_READ);
	k = ibv_inc_rkey(w2->rkey);
	post_bind(p.t, w2, k, mr, (uintptr_t)buf + 4096, 4096, IBV_ACCESS_REMOTE_WRITE);
	expect_wc(&p, p.t, IBV_WC_SUCCESS, IBV_WC_BIND_MW);
	w2->rkey = k;
	ck_assert_int_eq(ibv_dereg_mr(mr), EBUSY);
	/* Still registered, still reachable through its windows. */
	post_rdma(p.r, IBV_WR_RDMA_WRITE, k, (uintptr_t)buf + 4096, 16);
	expect_wc(&p, p.r, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	/* Unbinding the type 1 window leaves the type 2 one holding it. */
	bind1(&p, w1, NULL, 0, 0, 0);
	ck_assert_int_eq(ibv_dereg_mr(mr), EBUSY);
	post_op_rkey(p.t, IBV_WR_LOCAL_INV, k);
	expect_wc(&p, p.t, IBV_WC_SUCCESS, IBV_WC_LOCAL_INV);
	ck_assert_int_eq(ibv_dereg_mr(mr), 0);
	pair_close(&p);
	/* A bound window's deallocation lets its region go too. */
	mr = ibv_reg_mr(pd, buf, 8192, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	pair_open(&p, IBV_QPT_RC, 0);
	bind1(&p, w1, mr, (uintptr_t)buf, 64, IBV_ACCESS_REMOTE_READ);
	pair_close(&p);
	ck_assert_int_eq(ibv_dereg_mr(mr), EBUSY);
	ck_assert_int_eq(ibv_dealloc_mw(w1), 0);
	ck_assert_int_eq(ibv_dereg_mr(mr), 0);
	ck_assert_int_eq(ibv_dealloc_mw(w2), 0);
	free(buf);
}
END_TEST

/* A bind that must fail: IBV_WC_MW_BIND_ERR, and the QP in the error state. */
static void
bind_fails(struct ibv_mw *mw, struct ibv_mr *mr, uint64_t addr, uint64_t len, unsigned access)
{
	struct pair p;

	pair_open(&p, IBV_QPT_RC, 0);
	post_bind(p.t, mw, ibv_inc_rkey(mw->rkey), mr, addr, len, access);
	expect_wc(&p, p.t, IBV_WC_MW_BIND_ERR, 0);
	ck_assert_int_eq(droce_test_qp_state(p.t), IBV_QPS_ERR);
	pair_close(&p);
}

/* A local invalidation that must fail: IBV_WC_LOC_QP_OP_ERR. */
static void
local_inv_fails(uint32_t rkey)
{
	struct pair p;

	pair_open(&p, IBV_QPT_RC, 0);
	post_op_rkey(p.t, IBV_WR_LOCAL_INV, rkey);
	expect_wc(&p, p.t, IBV_WC_LOC_QP_OP_ERR, 0);
	pair_close(&p);
}

START_TEST(misuse_completions)
{
	uint8_t *buf = calloc(1, 4096);
	struct ibv_mr *nobind = ibv_reg_mr(pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE);
	struct ibv_mr *ro = ibv_reg_mr(pd, buf, 4096, IBV_ACCESS_MW_BIND);
	struct ibv_mw *w1 = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	struct ibv_mw *w2 = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	struct ibv_pd *pd2 = ibv_alloc_pd(ctx);
	struct ibv_mw *w2pd2 = ibv_alloc_mw(pd2, IBV_MW_TYPE_2);
	struct ibv_mw_bind b = { .bind_info = { bmr, (uintptr_t)bbuf, 64, MW_RW } };
	uint64_t base = (uintptr_t)bbuf;
	struct pair p;
	uint32_t k;

	ck_assert_ptr_null(ibv_alloc_mw(pd, (enum ibv_mw_type)7));
	ck_assert_int_eq(errno, EINVAL);
	/* Region without IBV_ACCESS_MW_BIND (C10-73). */
	bind_fails(w2, nobind, (uintptr_t)buf, 64, IBV_ACCESS_REMOTE_READ);
	/* Remote write on a region without local write (C10-74). */
	bind_fails(w2, ro, (uintptr_t)buf, 64, IBV_ACCESS_REMOTE_WRITE);
	/* Beyond the region (C10-75). */
	bind_fails(w2, bmr, base + BUF_SIZE - 32, 64, IBV_ACCESS_REMOTE_READ);
	/* Type 2 with no region or length (o10-37.2.40). */
	bind_fails(w2, NULL, 0, 0, IBV_ACCESS_REMOTE_READ);
	/* Window of another PD than the QP's (C10-72). */
	bind_fails(w2pd2, bmr, base, 64, IBV_ACCESS_REMOTE_READ);
	/* A key that is not the window's. */
	k = w2->rkey;
	w2->rkey = ibv_inc_rkey(k);
	bind_fails(w2, bmr, base, 64, IBV_ACCESS_REMOTE_READ);
	w2->rkey = k;
	/* Type 2 bound already (o10-37.2.30): the second bind fails. */
	pair_open(&p, IBV_QPT_RC, 0);
	post_bind(p.t, w2, ibv_inc_rkey(k), bmr, base, 64, IBV_ACCESS_REMOTE_READ);
	post_bind(p.t, w2, ibv_inc_rkey(ibv_inc_rkey(k)), bmr, base, 64, IBV_ACCESS_REMOTE_READ);
	expect_wc(&p, p.t, IBV_WC_SUCCESS, IBV_WC_BIND_MW);
	expect_wc(&p, p.t, IBV_WC_MW_BIND_ERR, 0);
	pair_close(&p);
	w2->rkey = ibv_inc_rkey(k);
	/* Type 1 zero-based (o10-36.2.2), as a bind work request. */
	bind_fails(w1, bmr, 0, 64, IBV_ACCESS_REMOTE_READ | IBV_ACCESS_ZERO_BASED);
	/* ibv_bind_mw() refuses type 2, and a region of another PD. */
	pair_open(&p, IBV_QPT_RC, 0);
	ck_assert_int_eq(ibv_bind_mw(p.t, w2, &b), EINVAL);
	b.bind_info.mr = nobind;
	ck_assert_int_eq(ibv_dereg_mr(nobind), 0);
	nobind = ibv_reg_mr(pd2, buf, 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	b.bind_info.mr = nobind;
	ck_assert_int_eq(ibv_bind_mw(p.t, w1, &b), EPERM);
	pair_close(&p);
	/* Only bound type 2 windows can be invalidated: not a type 1 window
	 * (o10-37.2.26), not a region (none is fast-registered), not an
	 * unknown key. */
	local_inv_fails(w1->rkey);
	local_inv_fails(bmr->rkey);
	local_inv_fails(w2->rkey + 1);
	/* A SEND with invalidate of a type 1 key: acknowledged, and the
	 * receive fails (IBA class J, as rxe). */
	pair_open(&p, IBV_QPT_RC, 0);
	droce_test_post_recv(p.t, 9, bbuf, 64, bmr->lkey);
	post_op_rkey(p.r, IBV_WR_SEND_WITH_INV, w1->rkey);
	for (int seen = 0; seen != 3;) {
		struct ibv_wc wc = droce_test_wait_wc(p.cq);

		if (wc.qp_num == p.r->qp_num) {
			ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
			seen |= 1;
		} else {
			ck_assert_int_eq(wc.status, IBV_WC_REM_INV_REQ_ERR);
			seen |= 2;
		}
	}
	pair_close(&p);
	ck_assert_int_eq(ibv_dealloc_mw(w1), 0);
	ck_assert_int_eq(ibv_dealloc_mw(w2), 0);
	ck_assert_int_eq(ibv_dealloc_mw(w2pd2), 0);
	ck_assert_int_eq(ibv_dereg_mr(nobind), 0);
	ck_assert_int_eq(ibv_dereg_mr(ro), 0);
	ck_assert_int_eq(ibv_dealloc_pd(pd2), 0);
	free(buf);
}
END_TEST

START_TEST(device_caps)
{
	struct ibv_device_attr a;

	ck_assert_int_eq(ibv_query_device(ctx, &a), 0);
	ck_assert(a.device_cap_flags & IBV_DEVICE_MEM_WINDOW);
	ck_assert(a.device_cap_flags & IBV_DEVICE_MEM_WINDOW_TYPE_2B);
	ck_assert_int_gt(a.max_mw, 0);
}
END_TEST

int
main(void)
{
	struct droce_test_loop loop;
	Suite *s = suite_create("mw");
	TCase *tc = tcase_create("loopback");
	int failed;

	if (droce_test_loop_open(&loop, BUF_SIZE, ACCESS_ALL) != 0)
		return 1;
	ctx = loop.ctx, pd = loop.pd, gid = loop.gid;
	abuf = loop.buf[0], bbuf = loop.buf[1], amr = loop.mr[0], bmr = loop.mr[1];
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, device_caps);
	tcase_add_test(tc, type1_bind_access_rebind);
	tcase_add_test(tc, type2_bind_qp_and_invalidate);
	tcase_add_test(tc, type2_qp_ex);
	tcase_add_test(tc, local_ops_under_loss);
	tcase_add_test(tc, dereg_busy_while_bound);
	tcase_add_test(tc, misuse_completions);
	suite_add_tcase(s, tc);
	failed = droce_test_run(s);
	droce_test_loop_close(&loop);
	return failed == 0 ? 0 : 1;
}
