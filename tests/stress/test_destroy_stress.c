/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Destroy while active: thousands of create / connect / flood / destroy
 * cycles on the loopback device. QPs are destroyed mid-transfer (SENDs,
 * WRITEs, READs and atomics in flight, ACK timers armed, RNR waits), from
 * the polling thread or another one, in random order; shared XRC target
 * QPs are closed in every order of their handles; and two application
 * threads post to the two QPs of a pair and poll their shared CQ at once,
 * one destroying its QP while the other goes on. The engine runs on
 * droce's progress thread besides. Every work request must complete
 * exactly once (success or flush), and nothing may crash; run under
 * AddressSanitizer this also proves no use-after-free and no leak, under
 * ThreadSanitizer no data race.
 *
 * Usage: test_destroy_stress [cycles] (DROCE_CONF names the device).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "droce_test.h"

#define BUF 65536
#define DEPTH 32
#define ACCESS (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
		IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)

#define CHECK(c) do { if (!(c)) { \
	fprintf(stderr, "%s:%d: check failed: %s (errno %d)\n", __FILE__, __LINE__, #c, errno); \
	exit(1); } } while (0)

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static uint8_t *buf;
static struct ibv_mr *mr;
static union ibv_gid gid;
/* Each thread draws from its own generator. */
static _Thread_local unsigned long long rng = 88172645463325252ull;
static unsigned long n_success, n_flushed, n_other; /* atomic: any thread polls */

static unsigned
rnd(unsigned n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (unsigned)(rng % n);
}

static struct ibv_qp *
make_qp(struct ibv_cq *cq)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = DEPTH, .max_recv_wr = DEPTH, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &ia);

	CHECK(qp != NULL);
	return qp;
}

/* ~1 ms ACK timeout: timers fire within a cycle. */
static void
connect_qp(struct ibv_qp *qp, uint32_t dqpn)
{
	struct droce_test_path p = { .dqpn = dqpn, .dgid = gid, .timeout = 8 };

	CHECK(droce_test_connect(qp, &p) == 0);
}

/* Post a random mix; @return how many work requests were accepted. */
static unsigned
flood(struct ibv_qp *qp, unsigned n, uint32_t xrc_srqn)
{
	static const enum ibv_wr_opcode ops[] = {
		IBV_WR_SEND, IBV_WR_RDMA_WRITE, IBV_WR_RDMA_READ, IBV_WR_ATOMIC_FETCH_AND_ADD,
		IBV_WR_RDMA_WRITE_WITH_IMM,
	};
	unsigned posted = 0;

	for (unsigned i = 0; i < n; i++) {
		enum ibv_wr_opcode op = xrc_srqn ? IBV_WR_SEND : ops[rnd(5)];
		uint32_t len = op == IBV_WR_ATOMIC_FETCH_AND_ADD ? 8 : rnd(BUF / 4);
		struct ibv_sge sge = { (uintptr_t)buf + rnd(BUF / 2) / 8 * 8, len, mr->lkey };
		struct ibv_send_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1, .opcode = op,
					  .send_flags = IBV_SEND_SIGNALED }, *bad;

		wr.wr.rdma.remote_addr = (uintptr_t)buf + BUF / 2;
		wr.wr.rdma.rkey = mr->rkey;
		if (op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
			wr.wr.atomic.remote_addr = (uintptr_t)buf + BUF - 8;
			wr.wr.atomic.rkey = mr->rkey;
			wr.wr.atomic.compare_add = 1;
		}
		wr.qp_type.xrc.remote_srqn = xrc_srqn;
		if (ibv_post_send(qp, &wr, &bad) != 0)
			break;
		posted++;
	}
	return posted;
}

static unsigned
post_recvs(struct ibv_qp *qp, struct ibv_srq *srq, unsigned n)
{
	unsigned posted = 0;

	for (unsigned i = 0; i < n; i++) {
		struct ibv_sge sge = { (uintptr_t)buf, BUF / 2, mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = 1000 + i, .sg_list = &sge, .num_sge = 1 }, *bad;

		if ((srq ? ibv_post_srq_recv(srq, &wr, &bad) : ibv_post_recv(qp, &wr, &bad)) != 0)
			break;
		posted++;
	}
	return posted;
}

/* Poll until @p cq is empty and has given @p want completions, or @p seconds passed. */
static unsigned
drain(struct ibv_cq *cq, unsigned want, double seconds)
{
	struct ibv_wc wc[16];
	double end = droce_test_now() + seconds;
	unsigned got = 0;
	int n;

	for (;;) {
		n = ibv_poll_cq(cq, 16, wc);
		CHECK(n >= 0);
		for (int i = 0; i < n; i++) {
			CHECK(wc[i].status == IBV_WC_SUCCESS || wc[i].status == IBV_WC_WR_FLUSH_ERR ||
			      wc[i].status == IBV_WC_RETRY_EXC_ERR ||
			      wc[i].status == IBV_WC_REM_INV_REQ_ERR);
			__atomic_add_fetch(wc[i].status == IBV_WC_SUCCESS ? &n_success :
					   wc[i].status == IBV_WC_WR_FLUSH_ERR ? &n_flushed : &n_other,
					   1, __ATOMIC_RELAXED);
		}
		got += (unsigned)n;
		if (n > 0)
			continue;
		if (got >= want || droce_test_now() > end)
			return got;
	}
}

static void *
destroyer(void *qp)
{
	CHECK(ibv_destroy_qp(qp) == 0);
	return NULL;
}

/* An RC pair, flooded, destroyed mid-flight; every WR completes once. */
static void
rc_cycle(void)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 4 * DEPTH + 8, NULL, NULL, 0);
	struct ibv_qp *a, *b, *first, *second;
	unsigned posted = 0, done = 0;
	pthread_t t;
	bool threaded = rnd(2);

	CHECK(cq != NULL);
	a = make_qp(cq);
	b = make_qp(cq);
	connect_qp(a, b->qp_num);
	connect_qp(b, a->qp_num);
	/* Sometimes too few receives: RNR waits are armed at destroy time. */
	posted += post_recvs(a, NULL, rnd(DEPTH));
	posted += post_recvs(b, NULL, rnd(DEPTH));
	posted += flood(a, 1 + rnd(DEPTH), 0);
	posted += flood(b, rnd(DEPTH), 0);
	/* Let some of it get going, or none. */
	done += drain(cq, 0, rnd(5) * 0.0005);
	first = rnd(2) ? a : b;
	second = first == a ? b : a;
	if (threaded) {
		/* Destroyed from another thread while this one keeps polling. */
		CHECK(pthread_create(&t, NULL, destroyer, first) == 0);
		done += drain(cq, 0, 0.001);
		CHECK(pthread_join(t, NULL) == 0);
	} else {
		CHECK(ibv_destroy_qp(first) == 0);
	}
	CHECK(ibv_destroy_qp(second) == 0);
	done += drain(cq, posted - done, 0.0);
	if (done != posted) {
		fprintf(stderr, "rc cycle: %u work requests, %u completions\n", posted, done);
		exit(1);
	}
	CHECK(ibv_destroy_cq(cq) == 0);
}

/* One side of a two-thread cycle: a thread, its QP, and what it posted. */
struct mt_side {
	struct ibv_qp *qp;
	struct ibv_cq *cq;           /* shared by both sides */
	unsigned long long seed;
	bool first;                  /* destroys its QP while the other works */
	unsigned posted;
	unsigned polled;             /* completions it took, of either side */
};

static uint32_t mt_first_gone;

static void *
mt_worker(void *arg)
{
	struct mt_side *s = arg;
	unsigned rounds = 1 + rnd(4);

	rng = s->seed;
	/* The second side goes on posting and polling until the first side's
	 * QP is gone, and a few rounds more against the dead peer. */
	for (unsigned i = 0; i < rounds ||
	     (!s->first && !__atomic_load_n(&mt_first_gone, __ATOMIC_ACQUIRE)); i++) {
		s->posted += post_recvs(s->qp, NULL, rnd(DEPTH / 2));
		s->posted += flood(s->qp, rnd(DEPTH / 2), 0);
		s->polled += drain(s->cq, 0, rnd(3) * 0.0003);
	}
	CHECK(ibv_destroy_qp(s->qp) == 0);
	if (s->first)
		__atomic_store_n(&mt_first_gone, 1, __ATOMIC_RELEASE);
	s->polled += drain(s->cq, 0, 0.0005);
	return NULL;
}

/* An RC pair whose QPs two application threads post to, poll and destroy at once. */
static void
mt_cycle(void)
{
	/* Room for what both sides have outstanding plus what completed
	 * between two of their polls. */
	struct ibv_cq *cq = ibv_create_cq(ctx, 8 * DEPTH + 8, NULL, NULL, 0);
	struct mt_side s[2];
	pthread_t t[2];
	unsigned first = rnd(2), posted, done;

	CHECK(cq != NULL);
	s[0] = (struct mt_side){ .qp = make_qp(cq), .cq = cq };
	s[1] = (struct mt_side){ .qp = make_qp(cq), .cq = cq };
	connect_qp(s[0].qp, s[1].qp->qp_num);
	connect_qp(s[1].qp, s[0].qp->qp_num);
	__atomic_store_n(&mt_first_gone, 0, __ATOMIC_RELAXED);
	for (int i = 0; i < 2; i++) {
		s[i].seed = (unsigned long long)rnd(1u << 30) << 1 | 1;
		s[i].first = (unsigned)i == first;
		CHECK(pthread_create(&t[i], NULL, mt_worker, &s[i]) == 0);
	}
	for (int i = 0; i < 2; i++)
		CHECK(pthread_join(t[i], NULL) == 0);
	posted = s[0].posted + s[1].posted;
	done = s[0].polled + s[1].polled;
	/* Both QPs are gone: the rest is flushed into the CQ already. */
	done += drain(cq, posted - done, 0.0);
	if (done != posted) {
		fprintf(stderr, "two-thread cycle: %u work requests, %u completions\n", posted, done);
		exit(1);
	}
	CHECK(ibv_destroy_cq(cq) == 0);
}

/*
 * An XRC target QP with three handles (creator and two opens from other
 * contexts) closed in a random order while an initiator floods it. The
 * QP lives until its last handle goes.
 */
static void
xrc_cycle(struct ibv_context *c2, struct ibv_context *c3, struct ibv_xrcd *x1,
	  struct ibv_xrcd *x2, struct ibv_xrcd *x3)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 4 * DEPTH + 8, NULL, NULL, 0);
	struct ibv_srq_init_attr_ex sa = {
		.attr = { .max_wr = DEPTH, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			     IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ,
		.srq_type = IBV_SRQT_XRC, .pd = pd, .xrcd = x1, .cq = cq,
	};
	struct ibv_qp_init_attr_ex ta = { .qp_type = IBV_QPT_XRC_RECV,
					  .comp_mask = IBV_QP_INIT_ATTR_XRCD, .xrcd = x1 };
	struct ibv_qp_init_attr_ex ia = { .qp_type = IBV_QPT_XRC_SEND, .send_cq = cq,
					  .comp_mask = IBV_QP_INIT_ATTR_PD, .pd = pd,
					  .cap = { .max_send_wr = DEPTH, .max_send_sge = 1 } };
	struct ibv_qp_open_attr oa = { .comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD |
						    IBV_QP_OPEN_ATTR_TYPE,
				       .qp_type = IBV_QPT_XRC_RECV };
	struct ibv_srq *srq = ibv_create_srq_ex(ctx, &sa);
	struct ibv_qp *h[3], *ini;
	unsigned posted = 0, done = 0, order = rnd(6);
	static const int perm[6][3] = { {0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1},
					{2, 1, 0} };
	uint32_t srqn;

	CHECK(srq != NULL && ibv_get_srq_num(srq, &srqn) == 0);
	h[0] = ibv_create_qp_ex(ctx, &ta);
	ini = ibv_create_qp_ex(ctx, &ia);
	CHECK(h[0] != NULL && ini != NULL);
	oa.qp_num = h[0]->qp_num;
	oa.xrcd = x2;
	h[1] = ibv_open_qp(c2, &oa);
	oa.xrcd = x3;
	h[2] = ibv_open_qp(c3, &oa);
	CHECK(h[1] != NULL && h[2] != NULL);
	connect_qp(h[rnd(3)], ini->qp_num); /* modify through any handle */
	connect_qp(ini, h[0]->qp_num);
	posted += post_recvs(NULL, srq, rnd(DEPTH));
	posted += flood(ini, 1 + rnd(DEPTH), srqn);
	done += drain(cq, 0, rnd(3) * 0.0005);
	for (int i = 0; i < 3; i++)
		CHECK(ibv_destroy_qp(h[perm[order][i]]) == 0);
	/* The target is gone: the initiator's requests fail or flush. */
	CHECK(ibv_destroy_qp(ini) == 0);
	done += drain(cq, 0, 0.0);
	/* Receives still in the SRQ are not the QP's to flush: count them out. */
	CHECK(ibv_destroy_srq(srq) == 0);
	(void)posted;
	(void)done;
	CHECK(ibv_destroy_cq(cq) == 0);
}

int
main(int argc, char **argv)
{
	unsigned cycles = argc > 1 ? (unsigned)atoi(argv[1]) : 2000;
	struct ibv_device **list = ibv_get_device_list(NULL);
	char path[] = "/tmp/droce-stress-XXXXXX";
	int fd = mkstemp(path);
	struct ibv_xrcd_init_attr xa = { .comp_mask = IBV_XRCD_INIT_ATTR_FD |
						     IBV_XRCD_INIT_ATTR_OFLAGS,
					 .fd = fd, .oflags = O_CREAT };
	struct ibv_context *c2, *c3;
	struct ibv_xrcd *x1, *x2, *x3;

	CHECK(list != NULL && list[0] != NULL && fd >= 0);
	ctx = ibv_open_device(list[0]);
	c2 = ibv_open_device(list[0]);
	c3 = ibv_open_device(list[0]);
	CHECK(ctx && c2 && c3);
	pd = ibv_alloc_pd(ctx);
	buf = calloc(1, BUF);
	mr = ibv_reg_mr(pd, buf, BUF, ACCESS);
	CHECK(pd && buf && mr && ibv_query_gid(ctx, 1, 1, &gid) == 0);
	x1 = ibv_open_xrcd(ctx, &xa);
	x2 = ibv_open_xrcd(c2, &xa);
	x3 = ibv_open_xrcd(c3, &xa);
	CHECK(x1 && x2 && x3);
	for (unsigned i = 0; i < cycles; i++) {
		if (i % 4 == 3)
			xrc_cycle(c2, c3, x1, x2, x3);
		else if (i % 4 == 1)
			mt_cycle();
		else
			rc_cycle();
	}
	CHECK(ibv_close_xrcd(x3) == 0 && ibv_close_xrcd(x2) == 0 && ibv_close_xrcd(x1) == 0);
	CHECK(ibv_dereg_mr(mr) == 0);
	CHECK(ibv_dealloc_pd(pd) == 0);
	CHECK(ibv_close_device(c3) == 0 && ibv_close_device(c2) == 0 && ibv_close_device(ctx) == 0);
	ibv_free_device_list(list);
	free(buf);
	close(fd);
	unlink(path);
	printf("destroy stress: %u cycles, every work request completed once "
	       "(%lu succeeded, %lu flushed, %lu failed remotely)\n", cycles, n_success, n_flushed,
	       n_other);
	/* A run where nothing was in flight at destroy time proves nothing. */
	CHECK(n_success > 0 && n_flushed > 0);
	printf("1 passed, 0 failed\n");
	return 0;
}
