/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Thread domains and parent domains (lib/verbs/droce_verbs_pd.c): their
 * error codes and EBUSY rules as rdma-core's providers have them, a parent
 * domain in the same protection domain as its inner PD (QPs and MRs of
 * one used with the other over the device's loopback, and refused on
 * another PD), and the queues created on a parent domain with a thread
 * domain taking no lock: the rings' single_producer and the CQ's
 * single_consumer, read inside droce.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "droce_test.h"
#include "droce_verbs_priv.h"

#define BUF_SIZE 65536u
#define ACCESS_ALL (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
		    IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)

static struct droce_test_loop loop;

#define FAILS_WITH(call, err) do { \
		errno = 0; \
		ck_assert_ptr_null(call); \
		ck_assert_int_eq(errno, (err)); \
	} while (0)

static struct ibv_td *
td_new(struct ibv_context *ctx)
{
	struct ibv_td_init_attr a = { 0 };
	struct ibv_td *td = ibv_alloc_td(ctx, &a);

	ck_assert_ptr_nonnull(td);
	return td;
}

static struct ibv_pd *
parent_new(struct ibv_pd *pd, struct ibv_td *td)
{
	struct ibv_parent_domain_init_attr a = { .pd = pd, .td = td };
	struct ibv_pd *p = ibv_alloc_parent_domain(pd->context, &a);

	ck_assert_ptr_nonnull(p);
	return p;
}

/* An extended CQ with @p comp_mask, @p flags and parent domain @p pd. */
static struct ibv_cq_ex *
cqx_new(uint32_t comp_mask, uint32_t flags, struct ibv_pd *pd)
{
	struct ibv_cq_init_attr_ex a = {
		.cqe = 256, .wc_flags = IBV_WC_STANDARD_FLAGS, .comp_mask = comp_mask,
		.flags = flags, .parent_domain = pd,
	};

	return ibv_create_cq_ex(loop.ctx, &a);
}

static struct ibv_srq *
srq_new(struct ibv_pd *pd)
{
	struct ibv_srq_init_attr a = { .attr = { .max_wr = 16, .max_sge = 1 } };
	struct ibv_srq *srq = ibv_create_srq(pd, &a);

	ck_assert_ptr_nonnull(srq);
	return srq;
}

static bool
qp_lockless(struct ibv_qp *qp)
{
	struct droce_qp *q = droce_qp_of(qp);

	/* Both rings or neither. */
	ck_assert_int_eq(q->sq.single_producer, q->rq.single_producer);
	return q->sq.single_producer;
}

static bool
cq_lockless(struct ibv_cq_ex *cq)
{
	return droce_cq_of(ibv_cq_ex_to_cq(cq))->single_consumer;
}

START_TEST(td_alloc_and_dealloc)
{
	struct ibv_td_init_attr bad = { .comp_mask = 1 };
	struct ibv_td *td;

	FAILS_WITH(ibv_alloc_td(loop.ctx, &bad), EINVAL);
	td = td_new(loop.ctx);
	ck_assert_ptr_eq(td->context, loop.ctx);
	ck_assert_int_eq(ibv_dealloc_td(td), 0);
}
END_TEST

static void *
never_alloc(struct ibv_pd *pd, void *pd_context, size_t size, size_t alignment, uint64_t type)
{
	(void)pd, (void)pd_context, (void)size, (void)alignment, (void)type;
	ck_abort_msg("droce has no custom allocators");
	return NULL;
}

static void
never_free(struct ibv_pd *pd, void *pd_context, void *ptr, uint64_t type)
{
	(void)pd, (void)pd_context, (void)ptr, (void)type;
	ck_abort_msg("droce has no custom allocators");
}

START_TEST(parent_domain_arguments)
{
	struct ibv_context *other = ibv_open_device(loop.ctx->device);
	struct ibv_pd *other_pd = ibv_alloc_pd(other);
	struct ibv_td *td = td_new(loop.ctx), *other_td = td_new(other);
	struct ibv_parent_domain_init_attr a = { .pd = NULL };
	struct ibv_pd *p, *nested_of;
	int cookie;

	ck_assert_ptr_nonnull(other_pd);
	/* No PD, unknown bits, allocators. */
	FAILS_WITH(ibv_alloc_parent_domain(loop.ctx, &a), EINVAL);
	a = (struct ibv_parent_domain_init_attr){ .pd = loop.pd, .comp_mask = 1u << 7 };
	FAILS_WITH(ibv_alloc_parent_domain(loop.ctx, &a), EINVAL);
	a = (struct ibv_parent_domain_init_attr){
		.pd = loop.pd, .comp_mask = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS,
		.alloc = never_alloc, .free = never_free,
	};
	FAILS_WITH(ibv_alloc_parent_domain(loop.ctx, &a), EOPNOTSUPP);
	/* A PD or TD of another context, a parent domain of a parent domain. */
	a = (struct ibv_parent_domain_init_attr){ .pd = other_pd };
	FAILS_WITH(ibv_alloc_parent_domain(loop.ctx, &a), EINVAL);
	a = (struct ibv_parent_domain_init_attr){ .pd = loop.pd, .td = other_td };
	FAILS_WITH(ibv_alloc_parent_domain(loop.ctx, &a), EINVAL);
	nested_of = parent_new(loop.pd, NULL);
	a = (struct ibv_parent_domain_init_attr){ .pd = nested_of };
	FAILS_WITH(ibv_alloc_parent_domain(loop.ctx, &a), EINVAL);
	/* pd_context is accepted; the parent domain shares the PD's handle. */
	a = (struct ibv_parent_domain_init_attr){
		.pd = loop.pd, .td = td, .comp_mask = IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT,
		.pd_context = &cookie,
	};
	p = ibv_alloc_parent_domain(loop.ctx, &a);
	ck_assert_ptr_nonnull(p);
	ck_assert_ptr_eq(p->context, loop.ctx);
	ck_assert_uint_eq(p->handle, loop.pd->handle);
	ck_assert_uint_eq(nested_of->handle, loop.pd->handle);
	ck_assert_int_eq(ibv_dealloc_pd(p), 0);
	ck_assert_int_eq(ibv_dealloc_pd(nested_of), 0);
	ck_assert_int_eq(ibv_dealloc_td(td), 0);
	ck_assert_int_eq(ibv_dealloc_td(other_td), 0);
	ck_assert_int_eq(ibv_dealloc_pd(other_pd), 0);
	ck_assert_int_eq(ibv_close_device(other), 0);
}
END_TEST

/* ibv_dealloc_pd(parent) is EBUSY while the object @p make returns
 * (freed by @p destroy) uses it, and the object goes. */
#define HOLDS(parent, make, destroy) do { \
		__typeof__(make) obj_ = (make); \
		ck_assert_ptr_nonnull(obj_); \
		ck_assert_int_eq(ibv_dealloc_pd(parent), EBUSY); \
		ck_assert_int_eq(destroy(obj_), 0); \
	} while (0)

START_TEST(ebusy_while_used)
{
	struct ibv_pd *pd = ibv_alloc_pd(loop.ctx);
	struct ibv_td *td = td_new(loop.ctx);
	struct ibv_pd *p = parent_new(pd, td);
	struct ibv_ah_attr aa = {
		.is_global = 1, .port_num = 1,
		.grh = { .dgid = loop.gid, .sgid_index = 1, .hop_limit = 64 },
	};

	/* The TD and the inner PD are held by the parent domain. */
	ck_assert_int_eq(ibv_dealloc_td(td), EBUSY);
	ck_assert_int_eq(ibv_dealloc_pd(pd), EBUSY);
	/* Every object created on the parent domain holds it. */
	HOLDS(p, ibv_reg_mr(p, loop.buf[0], 4096, IBV_ACCESS_LOCAL_WRITE), ibv_dereg_mr);
	HOLDS(p, ibv_alloc_mw(p, IBV_MW_TYPE_2), ibv_dealloc_mw);
	HOLDS(p, ibv_create_ah(p, &aa), ibv_destroy_ah);
	HOLDS(p, srq_new(p), ibv_destroy_srq);
	HOLDS(p, droce_test_qp_new(p, loop.cq, IBV_QPT_RC, 0), ibv_destroy_qp);
	HOLDS(p, ibv_cq_ex_to_cq(cqx_new(IBV_CQ_INIT_ATTR_MASK_PD, 0, p)), ibv_destroy_cq);
	/* An MR moved onto it by re-registration, too. */
	{
		struct ibv_mr *mr = ibv_reg_mr(pd, loop.buf[0], 4096, IBV_ACCESS_LOCAL_WRITE);

		ck_assert_int_eq(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_PD, p, NULL, 0, 0), 0);
		HOLDS(p, mr, ibv_dereg_mr);
	}
	ck_assert_int_eq(ibv_dealloc_pd(p), 0);
	ck_assert_int_eq(ibv_dealloc_td(td), 0);
	ck_assert_int_eq(ibv_dealloc_pd(pd), 0);
}
END_TEST

START_TEST(thread_domain_queues_take_no_lock)
{
	struct ibv_td *td = td_new(loop.ctx);
	struct ibv_pd *p_td = parent_new(loop.pd, td), *p = parent_new(loop.pd, NULL);
	struct ibv_qp *qps[4];
	struct ibv_srq *srqs[2];
	struct ibv_cq_ex *cqs[4];
	unsigned i;

	unsetenv("DROCE_SINGLE_THREADED");
	qps[0] = droce_test_qp_new(p_td, loop.cq, IBV_QPT_RC, 0);
	qps[1] = droce_test_qp_new(p_td, loop.cq, IBV_QPT_UD, IBV_QP_EX_WITH_SEND);
	qps[2] = droce_test_qp_new(p, loop.cq, IBV_QPT_RC, 0);
	qps[3] = droce_test_qp_new(loop.pd, loop.cq, IBV_QPT_RC, 0);
	ck_assert(qp_lockless(qps[0]));
	ck_assert(qp_lockless(qps[1]));
	ck_assert(!qp_lockless(qps[2]));
	ck_assert(!qp_lockless(qps[3]));
	/* Whatever DROCE_SINGLE_THREADED says. */
	setenv("DROCE_SINGLE_THREADED", "0", 1);
	ck_assert_int_eq(ibv_destroy_qp(qps[0]), 0);
	qps[0] = droce_test_qp_new(p_td, loop.cq, IBV_QPT_RC, 0);
	ck_assert(qp_lockless(qps[0]));
	unsetenv("DROCE_SINGLE_THREADED");

	srqs[0] = srq_new(p_td);
	srqs[1] = srq_new(p);
	ck_assert(droce_srq_of(srqs[0])->rq.single_producer);
	ck_assert(!droce_srq_of(srqs[1])->rq.single_producer);

	/* CQs: the flag, or a parent domain with a thread domain. */
	cqs[0] = cqx_new(IBV_CQ_INIT_ATTR_MASK_FLAGS, IBV_CREATE_CQ_ATTR_SINGLE_THREADED, NULL);
	cqs[1] = cqx_new(IBV_CQ_INIT_ATTR_MASK_PD, 0, p_td);
	cqs[2] = cqx_new(IBV_CQ_INIT_ATTR_MASK_PD, 0, p);
	cqs[3] = cqx_new(0, IBV_CREATE_CQ_ATTR_SINGLE_THREADED, NULL); /* flags not in comp_mask */
	for (i = 0; i < 4; i++)
		ck_assert_ptr_nonnull(cqs[i]);
	ck_assert(cq_lockless(cqs[0]));
	ck_assert(cq_lockless(cqs[1]));
	ck_assert(!cq_lockless(cqs[2]));
	ck_assert(!cq_lockless(cqs[3]));
	ck_assert(!droce_cq_of(loop.cq)->single_consumer);
	/* A plain PD is no parent domain; unknown flags. */
	FAILS_WITH(cqx_new(IBV_CQ_INIT_ATTR_MASK_PD, 0, loop.pd), EINVAL);
	FAILS_WITH(cqx_new(IBV_CQ_INIT_ATTR_MASK_FLAGS, 1u << 9, NULL), EINVAL);

	for (i = 0; i < 4; i++) {
		ck_assert_int_eq(ibv_destroy_qp(qps[i]), 0);
		ck_assert_int_eq(ibv_destroy_cq(ibv_cq_ex_to_cq(cqs[i])), 0);
	}
	ck_assert_int_eq(ibv_destroy_srq(srqs[0]), 0);
	ck_assert_int_eq(ibv_destroy_srq(srqs[1]), 0);
	ck_assert_int_eq(ibv_dealloc_pd(p_td), 0);
	ck_assert_int_eq(ibv_dealloc_pd(p), 0);
	ck_assert_int_eq(ibv_dealloc_td(td), 0);
}
END_TEST

static void
post(struct ibv_qp *qp, enum ibv_wr_opcode op, uint64_t id, uint8_t *local, uint32_t len,
     uint32_t lkey, uint8_t *remote, uint32_t rkey)
{
	struct ibv_sge sge = { (uintptr_t)local, len, lkey };
	struct ibv_send_wr wr = {
		.wr_id = id, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	wr.wr.rdma.remote_addr = (uintptr_t)remote;
	wr.wr.rdma.rkey = rkey;
	ck_assert_int_eq(ibv_post_send(qp, &wr, &bad), 0);
}

static void
expect_wc(struct ibv_cq *cq, uint64_t id, enum ibv_wc_status status)
{
	struct ibv_wc wc = droce_test_wait_wc(cq);

	ck_assert_uint_eq(wc.wr_id, id);
	ck_assert_int_eq(wc.status, status);
}

/*
 * A QP on a parent domain with a thread domain (a) and one on its inner
 * PD (b), completing on a single-threaded CQ of the parent domain: each
 * uses, locally and remotely, the regions registered on the other's
 * domain. A region of another PD is refused.
 */
START_TEST(rc_across_parent_and_inner_pd)
{
	enum { LEN = 3000 };
	struct ibv_td *td = td_new(loop.ctx);
	struct ibv_pd *p = parent_new(loop.pd, td), *other = ibv_alloc_pd(loop.ctx);
	struct ibv_cq_ex *cqx = cqx_new(IBV_CQ_INIT_ATTR_MASK_PD, 0, p);
	struct ibv_cq *cq = ibv_cq_ex_to_cq(cqx);
	uint8_t *abuf = loop.buf[0], *bbuf = loop.buf[1];
	struct ibv_mr *amr = loop.mr[0];                 /* inner PD: a's memory */
	struct ibv_mr *bmr = ibv_reg_mr(p, bbuf, BUF_SIZE, ACCESS_ALL); /* parent: b's */
	struct ibv_mr *omr = ibv_reg_mr(other, abuf, BUF_SIZE, ACCESS_ALL);
	struct ibv_qp *a, *b;

	ck_assert_ptr_nonnull(cqx);
	ck_assert_ptr_nonnull(bmr);
	ck_assert_ptr_nonnull(omr);
	a = droce_test_qp_new(p, cq, IBV_QPT_RC, 0);
	b = droce_test_qp_new(loop.pd, cq, IBV_QPT_RC, 0);
	ck_assert(qp_lockless(a));
	ck_assert(cq_lockless(cqx));
	ck_assert_int_eq(droce_test_connect(a, &(struct droce_test_path){
		.dqpn = b->qp_num, .dgid = loop.gid }), 0);
	ck_assert_int_eq(droce_test_connect(b, &(struct droce_test_path){
		.dqpn = a->qp_num, .dgid = loop.gid }), 0);
	droce_test_fill(abuf, BUF_SIZE, 1);
	droce_test_fill(bbuf, BUF_SIZE, 2);

	/* SEND: a (parent) from the inner PD's region, into b's (parent)
	 * region; the two completions come in either order. */
	droce_test_post_recv(b, 1, bbuf, LEN, bmr->lkey);
	post(a, IBV_WR_SEND, 2, abuf, LEN, amr->lkey, NULL, 0);
	for (int i = 0, seen = 0; i < 2; i++) {
		struct ibv_wc wc = droce_test_wait_wc(cq);

		ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
		ck_assert(wc.wr_id == 1 || wc.wr_id == 2);
		ck_assert_int_eq(seen & (1 << wc.wr_id), 0);
		seen |= 1 << wc.wr_id;
	}
	ck_assert_int_eq(memcmp(bbuf, abuf, LEN), 0);
	/* WRITE: a into b's region on the parent domain, b into a's on the PD. */
	post(a, IBV_WR_RDMA_WRITE, 3, abuf + 8192, LEN, amr->lkey, bbuf + 8192, bmr->rkey);
	expect_wc(cq, 3, IBV_WC_SUCCESS);
	ck_assert_int_eq(memcmp(bbuf + 8192, abuf + 8192, LEN), 0);
	post(b, IBV_WR_RDMA_WRITE, 4, bbuf + 16384, LEN, bmr->lkey, abuf + 16384, amr->rkey);
	expect_wc(cq, 4, IBV_WC_SUCCESS);
	ck_assert_int_eq(memcmp(abuf + 16384, bbuf + 16384, LEN), 0);
	/* READ: a reads b's region into its own. */
	post(a, IBV_WR_RDMA_READ, 5, abuf + 32768, LEN, amr->lkey, bbuf + 32768, bmr->rkey);
	expect_wc(cq, 5, IBV_WC_SUCCESS);
	ck_assert_int_eq(memcmp(abuf + 32768, bbuf + 32768, LEN), 0);
	/* Another PD's region is another protection domain. */
	post(a, IBV_WR_SEND, 6, abuf, LEN, omr->lkey, NULL, 0);
	expect_wc(cq, 6, IBV_WC_LOC_PROT_ERR);

	ck_assert_int_eq(ibv_destroy_qp(a), 0);
	ck_assert_int_eq(ibv_destroy_qp(b), 0);
	ck_assert_int_eq(ibv_destroy_cq(cq), 0);
	ck_assert_int_eq(ibv_dereg_mr(bmr), 0);
	ck_assert_int_eq(ibv_dereg_mr(omr), 0);
	ck_assert_int_eq(ibv_dealloc_pd(other), 0);
	ck_assert_int_eq(ibv_dealloc_pd(p), 0);
	ck_assert_int_eq(ibv_dealloc_td(td), 0);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("verbs_td");
	TCase *tc = tcase_create("domains");
	int failed;

	if (droce_test_loop_open(&loop, BUF_SIZE, ACCESS_ALL) != 0)
		return 1;
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, td_alloc_and_dealloc);
	tcase_add_test(tc, parent_domain_arguments);
	tcase_add_test(tc, ebusy_while_used);
	tcase_add_test(tc, thread_domain_queues_take_no_lock);
	tcase_add_test(tc, rc_across_parent_and_inner_pd);
	suite_add_tcase(s, tc);
	failed = droce_test_run(s);
	droce_test_loop_close(&loop);
	return failed == 0 ? 0 : 1;
}
