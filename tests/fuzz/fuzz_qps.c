/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One input's queues: a CQ, a basic SRQ, an XRC SRQ and one QP of each
 * kind, connected to made-up peer QPNs, made anew for every input so an
 * input (a regression file) behaves the same on its own as after others.
 * Between frames: completions are checked, receives reposted, async
 * events taken, and a QP a frame put in the error state is reconnected
 * (a few times per input at most, as it costs a reset).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "droce_qp.h"
#include "droce_test.h"
#include "fuzz_rx.h"

#define CQ_SIZE 512
#define SRQ_SIZE 16
#define RQ_DEPTH 4        /* receives kept posted on a QP's own RQ */
#define SRQ_DEPTH 6       /* ... and on each SRQ */
#define MAX_RECONNECTS 4  /* per input */
#define PEER_VA 0x10000   /* where requests to the peer point */
#define PEER_RKEY 0x1234
#define PEER_SRQN 0x42

struct fz_qps fzq;

static const enum ibv_qp_type qp_type[FZ_NQP] = {
	[FZ_RC] = IBV_QPT_RC, [FZ_UC] = IBV_QPT_UC, [FZ_UD] = IBV_QPT_UD,
	[FZ_XRC_INI] = IBV_QPT_XRC_SEND, [FZ_XRC_TGT] = IBV_QPT_XRC_RECV,
	[FZ_RC_SRQ] = IBV_QPT_RC, [FZ_UD_SRQ] = IBV_QPT_UD,
};

static void __rte_noreturn
die(const char *what, unsigned i)
{
	fprintf(stderr, "fuzz_rx: %s failed (QP kind %u)\n", what, i);
	abort();
}

static void
poll_all(void)
{
	struct ibv_wc wc[16];
	int n, i;

	while ((n = ibv_poll_cq(fzq.cq, RTE_DIM(wc), wc)) > 0)
		for (i = 0; i < n; i++)
			fz_track_complete(&wc[i]);
	if (n < 0)
		die("ibv_poll_cq", 0);
}

/* Take and acknowledge every async event, except those of QP @p gone
 * (just destroyed: its handle is freed). */
static void
events_drain(const struct ibv_qp *gone)
{
	struct ibv_async_event ev;

	while (ibv_get_async_event(fz.peer.ctx, &ev) == 0)
		if (gone == NULL || ev.element.qp != gone)
			ibv_ack_async_event(&ev);
}

static void
post_recv(unsigned i, struct ibv_srq *srq)
{
	uint64_t id = fz_track_take(FZ_WR_RECV, fzq.qpn[i], srq, FZ_SLOT_BUF);
	uint8_t *buf = fz.slot_buf[id & 0xff];
	uint32_t lkey = fz.slot_mr[id & 0xff]->lkey;
	/* Two SGEs: the copy has to scatter. */
	struct ibv_sge sge[2] = { { (uintptr_t)buf, 64, lkey },
				  { (uintptr_t)buf + 64, FZ_SLOT_BUF - 64, lkey } };
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = sge, .num_sge = 2 }, *bad;
	int rc;

	if (id == 0)
		return;
	rc = srq != NULL ? ibv_post_srq_recv(srq, &wr, &bad) : ibv_post_recv(fzq.qp[i], &wr, &bad);
	if (rc != 0)
		fz_track_untake(id);
}

static void
recv_top_up(void)
{
	unsigned i, n;

	for (i = 0; i < FZ_NQP; i++) {
		if (qp_type[i] == IBV_QPT_XRC_SEND || qp_type[i] == IBV_QPT_XRC_RECV ||
		    fzq.rsrq[i] != NULL)
			continue;
		for (n = fz_track_count_recv(fzq.qpn[i], NULL); n < RQ_DEPTH; n++)
			post_recv(i, NULL);
	}
	for (n = fz_track_count_recv(0, fzq.srq); n < SRQ_DEPTH; n++)
		post_recv(FZ_RC_SRQ, fzq.srq);
	for (n = fz_track_count_recv(0, fzq.xsrq); n < SRQ_DEPTH; n++)
		post_recv(FZ_XRC_TGT, fzq.xsrq);
}

static int
qp_connect(unsigned i)
{
	struct droce_test_path p = {
		.dqpn = FZ_PEER_QPN + i, .dgid = fz.peer.gid, .psn = FZ_PSN,
		/* The longest ACK timeout (2.4 hours): retransmission comes
		 * from the frames, not from the clock, so inputs replay alike. */
		.timeout = 31, .qkey = FZ_QKEY,
	};

	return droce_test_connect(fzq.qp[i], &p);
}

static void
qp_create(unsigned i)
{
	struct ibv_qp_init_attr_ex a = {
		.qp_type = qp_type[i], .sq_sig_all = 1,
		.cap = { .max_send_wr = 16, .max_recv_wr = 8, .max_send_sge = 2,
			 .max_recv_sge = 2, .max_inline_data = 64 },
		.comp_mask = IBV_QP_INIT_ATTR_PD, .pd = fz.pd,
	};

	if (qp_type[i] == IBV_QPT_XRC_RECV) {
		a.comp_mask = IBV_QP_INIT_ATTR_XRCD;
		a.xrcd = fz.xrcd;
		a.pd = NULL;
		fzq.rsrq[i] = fzq.xsrq;
	} else {
		a.send_cq = fzq.cq;
		if (qp_type[i] != IBV_QPT_XRC_SEND)
			a.recv_cq = fzq.cq;
		if (i == FZ_RC_SRQ || i == FZ_UD_SRQ)
			a.srq = fzq.srq;
		fzq.rsrq[i] = a.srq;
	}
	fzq.qp[i] = ibv_create_qp_ex(fz.peer.ctx, &a);
	if (fzq.qp[i] == NULL)
		die("ibv_create_qp_ex", i);
	fzq.qpn[i] = fzq.qp[i]->qp_num;
	if (qp_connect(i) != 0)
		die("connect", i);
}

void
fz_qps_create(void)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = SRQ_SIZE, .max_sge = 2 } };
	struct ibv_srq_init_attr_ex xa = {
		.attr = { .max_wr = SRQ_SIZE, .max_sge = 2 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			     IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ,
		.srq_type = IBV_SRQT_XRC, .pd = fz.pd, .xrcd = fz.xrcd,
	};
	unsigned i;

	memset(&fzq, 0, sizeof(fzq));
	fzq.cq = ibv_create_cq(fz.peer.ctx, CQ_SIZE, NULL, NULL, 0);
	if (fzq.cq == NULL)
		die("ibv_create_cq", 0);
	xa.cq = fzq.cq;
	fzq.srq = ibv_create_srq(fz.pd, &sa);
	fzq.xsrq = ibv_create_srq_ex(fz.peer.ctx, &xa);
	if (fzq.srq == NULL || fzq.xsrq == NULL || ibv_get_srq_num(fzq.xsrq, &fzq.xsrqn) != 0)
		die("SRQs", 0);
	for (i = 0; i < FZ_NQP; i++)
		qp_create(i);
	recv_top_up();
}

/* A send of @p len bytes from a fresh slot's buffer (two SGEs when it can). */
static void
post_send(unsigned i, enum ibv_wr_opcode op, uint32_t len)
{
	uint64_t id = fz_track_take(FZ_WR_SEND, fzq.qpn[i], NULL, len);
	uint8_t *buf = fz.slot_buf[id & 0xff];
	uint32_t lkey = fz.slot_mr[id & 0xff]->lkey;
	struct ibv_sge sge[2] = { { (uintptr_t)buf, len / 2, lkey },
				  { (uintptr_t)buf + len / 2, len - len / 2, lkey } };
	struct ibv_send_wr wr = {
		.wr_id = id, .opcode = op, .sg_list = sge + (len < 2),
		.num_sge = len < 2 ? 1 : 2, .imm_data = htobe32(0x5eed),
	}, *bad;

	if (id == 0)
		return;
	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD || op == IBV_WR_ATOMIC_CMP_AND_SWP) {
		sge[0] = (struct ibv_sge){ (uintptr_t)buf, 8, lkey };
		wr.sg_list = sge;
		wr.num_sge = 1;
		wr.wr.atomic.remote_addr = PEER_VA;
		wr.wr.atomic.rkey = PEER_RKEY;
		wr.wr.atomic.compare_add = 1;
		wr.wr.atomic.swap = 2;
	} else if (qp_type[i] == IBV_QPT_UD) {
		wr.wr.ud.ah = fz.ah;
		wr.wr.ud.remote_qpn = FZ_PEER_QPN;
		wr.wr.ud.remote_qkey = FZ_QKEY;
	} else {
		wr.wr.rdma.remote_addr = PEER_VA;
		wr.wr.rdma.rkey = PEER_RKEY;
	}
	wr.qp_type.xrc.remote_srqn = PEER_SRQN;
	if (ibv_post_send(fzq.qp[i], &wr, &bad) != 0)
		fz_track_untake(id);
}

void
fz_qps_post_sends(uint8_t mask)
{
	static const unsigned rc[] = { FZ_RC, FZ_RC_SRQ };
	unsigned r, k;

	for (r = 0; r < ((mask & FZ_POST_TWICE) ? 2u : 1u); r++) {
		for (k = 0; k < RTE_DIM(rc); k++) {
			if (mask & FZ_POST_SEND)
				post_send(rc[k], IBV_WR_SEND, 1500);
			if (mask & FZ_POST_WRITE)
				post_send(rc[k], IBV_WR_RDMA_WRITE_WITH_IMM, 300);
			if (mask & FZ_POST_READ)
				post_send(rc[k], IBV_WR_RDMA_READ, 2500);
			if (mask & FZ_POST_FADD)
				post_send(rc[k], IBV_WR_ATOMIC_FETCH_AND_ADD, 8);
			if (mask & FZ_POST_CSWAP)
				post_send(rc[k], IBV_WR_ATOMIC_CMP_AND_SWP, 8);
		}
		if (mask & FZ_POST_XRC) {
			post_send(FZ_XRC_INI, IBV_WR_SEND, 100);
			post_send(FZ_XRC_INI, IBV_WR_RDMA_READ, 1200);
		}
		if (mask & FZ_POST_UNREL) {
			post_send(FZ_UC, IBV_WR_SEND, 100);
			post_send(FZ_UC, IBV_WR_RDMA_WRITE, 2000);
			post_send(FZ_UD, IBV_WR_SEND, 64);
			post_send(FZ_UD_SRQ, IBV_WR_SEND_WITH_IMM, 0);
		}
	}
	fz_env_run();
}

/* QP @p i failed: let the engine flush it, then take it back to RTS. */
static void
qp_reconnect(unsigned i)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };

	fz_env_run();
	poll_all();
	events_drain(NULL);
	if (ibv_modify_qp(fzq.qp[i], &a, IBV_QP_STATE) != 0)
		die("modify to RESET", i);
	/* RESET discards without completions what the flush left. */
	fz_track_forget(fzq.qpn[i]);
	if (qp_connect(i) != 0)
		die("reconnect", i);
	fzq.reconnects++;
}

void
fz_qps_service(void)
{
	struct ibv_qp_attr rts = { .qp_state = IBV_QPS_RTS };
	unsigned i;

	poll_all();
	events_drain(NULL);
	for (i = 0; i < FZ_NQP; i++) {
		enum ibv_qp_state st = droce_qp_state(droce_qp_of(fzq.qp[i]));

		if (st == IBV_QPS_SQE) {
			/* UC/UD send error: the send queue resumes. */
			if (ibv_modify_qp(fzq.qp[i], &rts, IBV_QP_STATE) != 0)
				die("SQE to RTS", i);
		} else if (st == IBV_QPS_ERR && fzq.reconnects < MAX_RECONNECTS) {
			qp_reconnect(i);
		}
	}
	recv_top_up();
}

uint32_t
fz_qps_psn(unsigned i, bool request)
{
	const struct droce_qp *qp = droce_qp_of(fzq.qp[i]);

	return request ? qp->resp.epsn : qp->comp.psn;
}

void
fz_qps_destroy(void)
{
	unsigned i;

	fz_env_run();
	for (i = 0; i < FZ_NQP; i++) {
		struct ibv_qp *qp = fzq.qp[i];

		poll_all();
		events_drain(NULL);
		if (ibv_destroy_qp(qp) != 0)
			die("ibv_destroy_qp", i);
		fzq.qp[i] = NULL;
		/* What the destroy flushed is checked like the rest. */
		poll_all();
		events_drain(qp);
	}
	if (ibv_destroy_srq(fzq.srq) != 0 || ibv_destroy_srq(fzq.xsrq) != 0)
		die("ibv_destroy_srq", 0);
	poll_all();
	if (ibv_destroy_cq(fzq.cq) != 0)
		die("ibv_destroy_cq", 0);
	fz_track_forget(0);
}
