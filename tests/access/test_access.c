/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The remote-access matrix: every request opcode of RC, UC and UD against
 * every fault that applies to it (keys, protection domains, bounds,
 * access flags of the region and of the QP, atomic alignment, receive
 * buffer length, Q_Key, P_Key), plus the valid case of each, on the
 * loopback device. Each row runs on fresh QPs and checks:
 * - the requester's completion, as the IB spec and rxe give it (RC only:
 *   UC and UD requesters never hear about the responder);
 * - the responder QP's state afterwards: RC moves to ERR after a fatal
 *   NAK, UC and UD drop the packet and stay in RTS;
 * - every byte of an arena that holds every registered region, each
 *   between guard areas: filled with a pattern before, compared after;
 *   only what the valid operation writes may change;
 * - the engine counter of the fault, and the NAKs an RC responder sent.
 *
 * Most rows are posted through verbs. A wrong P_Key and a misaligned
 * atomic cannot be (droce's requester writes the port's P_Key, and
 * ibv_post_send refuses a misaligned atomic, as rxe does), so for those
 * the requester's frame is dropped by the port's TX fault stage and a
 * crafted copy with the fault goes in its place: built with the raw
 * peer's builder (droce_peer_build(), on lib/wire's helpers) and put on
 * the net_ring port's ring, which is the RX ring of the same port, so it
 * takes the whole receive path.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <infiniband/verbs.h>
#include <rte_ethdev.h>

#include "droce.h"
#include "droce_peer.h"
#include "droce_qp.h"
#include "droce_test.h"
#include "droce_wire.h"

#define GUARD 4096
#define TGT_LEN 4092         /* not a multiple of 8: an aligned atomic can straddle the end */
#define OTHER_LEN 4096
#define SRC_LEN 8192
#define RECV_LEN 4096
#define RECV_POST 552        /* bytes of the one receive posted: 40 (GRH) + 512 */
#define GRH_LEN 40
#define MSG_LEN 256          /* length of a valid request */
#define LONG_LEN 600         /* longer than the receive posted, shorter than the MTU */
#define PAST_LEN 5120        /* five packets at MTU 1024 */
#define OFF 64               /* where valid requests start in the target region */
#define QKEY 0x1234
#define PSN 0x100
#define IMM 0x5a5aa5a5u
#define SETTLE_S 0.02        /* how long a row waits for late effects */

/* Where each region lies in the arena; a guard before each and after the last. */
enum { R_TGT, R_OTHER, R_SRC, R_RECV, R_NUM };
static const size_t reg_len[R_NUM] = { TGT_LEN, OTHER_LEN, SRC_LEN, RECV_LEN };
static const char *const reg_name[R_NUM] = { "target", "other PD", "source", "receive" };
static size_t reg_off[R_NUM];
static size_t arena_len;
static uint8_t *arena, *expect;

static struct ibv_context *ctx;
static struct ibv_pd *pd, *pd2;
static struct ibv_cq *scq, *rcq;
static struct ibv_mr *other_mr, *src_mr, *recv_mr;
static union ibv_gid gid;
static struct droce_port *port;
/* The device as its own raw peer: droce_peer_build() needs only its pool
 * and addresses, droce_peer_stat() its index. */
static struct droce_peer self;

static uint8_t *
reg(int r)
{
	return arena + reg_off[r];
}

/* ---- the matrix ---- */

enum { T_RC = 1, T_UC = 2, T_UD = 4 };

/* The request opcodes. */
enum {
	O_SEND, O_SEND_IMM, O_SEND_INV, O_WRITE, O_WRITE_IMM, O_READ, O_CAS, O_FAA, O_NUM
};
#define OB(o) (1u << (o))
#define OPS_SEND (OB(O_SEND) | OB(O_SEND_IMM) | OB(O_SEND_INV))
#define OPS_RDMA (OB(O_WRITE) | OB(O_WRITE_IMM) | OB(O_READ))
#define OPS_ATOMIC (OB(O_CAS) | OB(O_FAA))
#define OPS_KEYED (OPS_RDMA | OPS_ATOMIC)
#define OPS_ALL ((1u << O_NUM) - 1)

static const struct op {
	const char *name;
	enum ibv_wr_opcode wr;
	unsigned types;
	int remote;              /* the IBV_ACCESS_REMOTE_* flag it needs, 0: none */
	uint8_t bth;             /* opcode of its only packet, without the service */
	bool recv;               /* consumes a receive */
} ops[O_NUM] = {
	[O_SEND] = { "SEND", IBV_WR_SEND, T_RC | T_UC | T_UD, 0, DROCE_OP_SEND_ONLY, true },
	[O_SEND_IMM] = { "SEND_WITH_IMM", IBV_WR_SEND_WITH_IMM, T_RC | T_UC | T_UD, 0,
			 DROCE_OP_SEND_ONLY_IMM, true },
	[O_SEND_INV] = { "SEND_WITH_INV", IBV_WR_SEND_WITH_INV, T_RC, 0,
			 DROCE_OP_SEND_ONLY_INV, true },
	[O_WRITE] = { "RDMA_WRITE", IBV_WR_RDMA_WRITE, T_RC | T_UC, IBV_ACCESS_REMOTE_WRITE,
		      DROCE_OP_WRITE_ONLY, false },
	[O_WRITE_IMM] = { "RDMA_WRITE_WITH_IMM", IBV_WR_RDMA_WRITE_WITH_IMM, T_RC | T_UC,
			  IBV_ACCESS_REMOTE_WRITE, DROCE_OP_WRITE_ONLY_IMM, true },
	[O_READ] = { "RDMA_READ", IBV_WR_RDMA_READ, T_RC, IBV_ACCESS_REMOTE_READ,
		     DROCE_OP_READ_REQUEST, false },
	[O_CAS] = { "ATOMIC_CMP_AND_SWP", IBV_WR_ATOMIC_CMP_AND_SWP, T_RC,
		    IBV_ACCESS_REMOTE_ATOMIC, DROCE_OP_CMP_SWAP, false },
	[O_FAA] = { "ATOMIC_FETCH_AND_ADD", IBV_WR_ATOMIC_FETCH_AND_ADD, T_RC,
		    IBV_ACCESS_REMOTE_ATOMIC, DROCE_OP_FETCH_ADD, false },
};

/* What a request carries where it differs from the valid one. */
enum where {
	W_VALID,        /* OFF bytes into the target region */
	W_NO_KEY,       /* an rkey no region has */
	W_OTHER_PD,     /* the rkey and address of a region in another PD */
	W_BELOW,        /* entirely below the region */
	W_ABOVE,        /* entirely above it */
	W_STRADDLE,     /* starts inside, ends past the end */
	W_PAST_END,     /* starts at the region, length past its end (several packets) */
	W_WRAP,         /* va + length wraps past 2^64 */
	W_ZERO,         /* zero length, no key at all */
	W_LONG,         /* a message longer than the receive posted */
	W_MISALIGNED,   /* crafted: the atomic's address is 4 bytes off */
};

static const struct fault {
	const char *name;
	unsigned ops;            /* OB() of the opcodes it applies to */
	unsigned types;          /* T_* it applies to */
	enum where where;
	bool mr_lacks;           /* the target region lacks the flag the opcode needs */
	bool qp_lacks;           /* the responder QP lacks it */
	uint32_t qkey;           /* UD: the work request's remote Q_Key (0: the QP's) */
	uint16_t pkey;           /* crafted frame with this P_Key (0: posted normally) */
	bool inv_no_key;         /* SEND_WITH_INV names an rkey no region has */
	/* what happens */
	enum ibv_wc_status req;  /* the RC requester's completion */
	bool refused;            /* no effect; an RC responder goes to ERR unless silent */
	bool silent;             /* dropped without a word: the RC requester resends */
	bool recv_fails;         /* the receive completes in error (RC) */
	const char *counter;     /* engine counter that counts it, once */
} faults[] = {
	{ "no fault", OPS_ALL, T_RC | T_UC | T_UD, W_VALID, .req = IBV_WC_SUCCESS },
	{ "rkey no region has", OPS_KEYED, T_RC | T_UC, W_NO_KEY,
	  .req = IBV_WC_REM_ACCESS_ERR, .refused = true, .counter = "rx_bad_access" },
	{ "rkey of a region in another PD", OPS_KEYED, T_RC | T_UC, W_OTHER_PD,
	  .req = IBV_WC_REM_ACCESS_ERR, .refused = true, .counter = "rx_bad_access" },
	{ "address below the region", OPS_KEYED, T_RC | T_UC, W_BELOW,
	  .req = IBV_WC_REM_ACCESS_ERR, .refused = true, .counter = "rx_bad_access" },
	{ "address above the region", OPS_KEYED, T_RC | T_UC, W_ABOVE,
	  .req = IBV_WC_REM_ACCESS_ERR, .refused = true, .counter = "rx_bad_access" },
	{ "range straddling the region's end", OPS_KEYED, T_RC | T_UC, W_STRADDLE,
	  .req = IBV_WC_REM_ACCESS_ERR, .refused = true, .counter = "rx_bad_access" },
	{ "length past the region's end", OPS_RDMA, T_RC | T_UC, W_PAST_END,
	  .req = IBV_WC_REM_ACCESS_ERR, .refused = true, .counter = "rx_bad_access" },
	{ "va + length wrapping past 2^64", OPS_KEYED, T_RC | T_UC, W_WRAP,
	  .req = IBV_WC_REM_ACCESS_ERR, .refused = true, .counter = "rx_bad_access" },
	{ "region without the access flag", OPS_KEYED, T_RC | T_UC, W_VALID, .mr_lacks = true,
	  .req = IBV_WC_REM_ACCESS_ERR, .refused = true, .counter = "rx_bad_access" },
	/* "The operation is not supported by this receive queue": an invalid
	 * request (the completion statuses of the IB spec, chapter 11; rxe's
	 * check_op_valid()), not an access error. */
	{ "QP without the access flag", OPS_KEYED, T_RC | T_UC, W_VALID, .qp_lacks = true,
	  .req = IBV_WC_REM_INV_REQ_ERR, .refused = true, .counter = "rx_bad_access" },
	{ "misaligned atomic", OPS_ATOMIC, T_RC, W_MISALIGNED, .pkey = DROCE_PKEY_DEFAULT,
	  .req = IBV_WC_REM_INV_REQ_ERR, .refused = true, .counter = "rx_misaligned_atomic" },
	/* A zero-length RDMA needs no key or address (rxe's check_rkey). */
	{ "zero length without a key", OB(O_WRITE) | OB(O_READ), T_RC | T_UC, W_ZERO,
	  .req = IBV_WC_SUCCESS },
	{ "message longer than the receive", OPS_SEND, T_RC | T_UC | T_UD, W_LONG,
	  .req = IBV_WC_REM_INV_REQ_ERR, .refused = true, .recv_fails = true,
	  .counter = "rx_recv_too_small" },
	/* (Any SEND_WITH_INV that gets through fails: see row_outcome().) */
	{ "invalidating an rkey no region has", OB(O_SEND_INV), T_RC, W_VALID,
	  .inv_no_key = true, .refused = true, .recv_fails = true },
	{ "wrong Q_Key", OB(O_SEND) | OB(O_SEND_IMM), T_UD, W_VALID, .qkey = 0x4321,
	  .refused = true, .silent = true, .counter = "rx_bad_qkey" },
	/* A work request's Q_Key with the high bit set means the QP's own. */
	{ "Q_Key taken from the QP", OB(O_SEND) | OB(O_SEND_IMM), T_UD, W_VALID,
	  .qkey = 0x80000000u },
	{ "P_Key of another partition", OPS_ALL, T_RC | T_UC | T_UD, W_VALID, .pkey = 0x8001,
	  .refused = true, .silent = true, .counter = "rx_bad_pkey" },
	{ "P_Key 0xffff, crafted", OPS_ALL, T_RC | T_UC | T_UD, W_VALID, .pkey = 0xffff },
	/* The port is a full member: a limited member's P_Key matches. */
	{ "P_Key 0x7fff (limited member)", OPS_ALL, T_RC | T_UC | T_UD, W_VALID, .pkey = 0x7fff },
};

static const char *
type_name(unsigned t)
{
	return t == T_RC ? "RC" : t == T_UC ? "UC" : "UD";
}

static enum ibv_qp_type
qp_type(unsigned t)
{
	return t == T_RC ? IBV_QPT_RC : t == T_UC ? IBV_QPT_UC : IBV_QPT_UD;
}

/* ---- one row ---- */

struct row {
	unsigned type;
	unsigned op;
	const struct fault *f;
	char name[128];
	/* set up */
	struct ibv_mr *tgt_mr;
	struct ibv_qp *req, *resp;
	struct ibv_ah *ah;
	/* the request */
	uint64_t va;
	uint32_t rkey, len;
	uint64_t compare_add, swap;
	/* what it may change besides its exact effects */
	size_t may_off[2], may_len[2];
	unsigned nmay;
	/* what must happen */
	enum ibv_wc_status req_status; /* the requester's completion */
	bool resp_err;           /* the responder QP ends in ERR (else RTS) */
	bool applied;            /* the operation takes effect */
	bool recv_fails;         /* the receive completes in error (checked for RC) */
	bool consumes;           /* the receive completes successfully */
	struct {
		const char *name;
		unsigned delta;
	} counts[3];             /* engine counters and how much they grow */
	unsigned ncounts;
};

static struct row rows[256];
static unsigned nrows;
static struct row *cur;      /* the row running, for row_teardown() */

static void
pattern_fill(void)
{
	uint32_t x = 0x9e3779b9u;

	for (size_t i = 0; i < arena_len; i++) {
		x = x * 1664525u + 1013904223u;
		arena[i] = (uint8_t)(x >> 24);
	}
	memcpy(expect, arena, arena_len);
}

static void
row_count(struct row *r, const char *name, unsigned delta)
{
	r->counts[r->ncounts].name = name;
	r->counts[r->ncounts++].delta = delta;
}

/*
 * What the row must end in. A silently dropped RC request is sent again
 * unharmed, so it ends as the valid one. A SEND_WITH_INV that gets through
 * fails at the responder: only memory windows and fast-register regions
 * can be invalidated, droce has neither, and rxe then fails the receive
 * and moves the QP to ERR after acknowledging (IB class J).
 */
static void
row_outcome(struct row *r)
{
	const struct fault *f = r->f;
	bool through = !f->refused || (f->silent && r->type == T_RC);
	bool inv = through && r->op == O_SEND_INV;

	r->req_status = r->type == T_RC && !through ? f->req : IBV_WC_SUCCESS;
	r->resp_err = r->type == T_RC && ((f->refused && !f->silent) || inv);
	r->applied = through && !inv;
	r->recv_fails = f->recv_fails || inv;
	r->consumes = ops[r->op].recv && r->applied;
	/* The fault's own counter; an RC responder's NAKs, whatever the row. */
	if (f->counter != NULL)
		row_count(r, f->counter, 1);
	if (r->type == T_RC) {
		row_count(r, "naks_rem_access_sent", r->req_status == IBV_WC_REM_ACCESS_ERR);
		row_count(r, "naks_inv_req_sent", r->req_status == IBV_WC_REM_INV_REQ_ERR);
	}
}

/* The address, key and length the row's request carries. */
static void
row_request(struct row *r)
{
	uint64_t base = (uintptr_t)reg(R_TGT);
	bool atomic = OB(r->op) & OPS_ATOMIC;
	uint32_t small = atomic ? 8 : 32;

	r->va = base + OFF;
	r->rkey = r->tgt_mr->rkey;
	r->len = atomic ? 8 : MSG_LEN;
	switch (r->f->where) {
	case W_VALID:
	case W_MISALIGNED:
		break;
	case W_NO_KEY:
		/* Same slot, another tag: the key of no region. */
		r->rkey ^= 0xff;
		break;
	case W_OTHER_PD:
		r->va = (uintptr_t)reg(R_OTHER) + OFF;
		r->rkey = other_mr->rkey;
		break;
	case W_BELOW:
		r->va = base - 64;
		r->len = small;
		break;
	case W_ABOVE:
		r->va = base + RTE_ALIGN_CEIL(TGT_LEN, 8) + 8;
		r->len = small;
		break;
	case W_STRADDLE:
		r->va = base + RTE_ALIGN_FLOOR(TGT_LEN - 4, 8);
		r->len = small;
		break;
	case W_PAST_END:
		r->va = base;
		r->len = PAST_LEN;
		break;
	case W_WRAP:
		r->va = UINT64_MAX - 7;
		r->len = small;
		break;
	case W_ZERO:
		r->va = 0;
		r->rkey = 0;
		r->len = 0;
		break;
	case W_LONG:
		r->len = LONG_LEN;
		break;
	}
	memcpy(&r->compare_add, reg(R_TGT) + OFF, 8);
	if (r->op == O_FAA)
		r->compare_add = 0x0101;
	r->swap = 0x1122334455667788ull;
}

static void
may_change(struct row *r, int region, size_t off, size_t len)
{
	r->may_off[r->nmay] = reg_off[region] + off;
	r->may_len[r->nmay++] = len;
}

/* What the arena must hold after the row: the valid effect, if any. */
static void
row_expect(struct row *r)
{
	uint8_t *src = expect + reg_off[R_SRC];
	uint8_t *rcv = expect + reg_off[R_RECV];
	uint8_t *tgt;
	uint64_t v;

	if (r->recv_fails)
		may_change(r, R_RECV, 0, RECV_POST); /* data may land before the failure */
	if (!r->applied || r->len == 0)
		return;
	/* An applied request lies inside the target region. */
	tgt = expect + reg_off[R_TGT] + (r->va - (uintptr_t)reg(R_TGT));
	switch (r->op) {
	case O_SEND:
	case O_SEND_IMM:
	case O_SEND_INV:
		if (r->type == T_UD) {
			may_change(r, R_RECV, 0, GRH_LEN);
			rcv += GRH_LEN;
		}
		memcpy(rcv, src, r->len);
		break;
	case O_WRITE:
	case O_WRITE_IMM:
		memcpy(tgt, src, r->len);
		break;
	case O_READ:
		memcpy(src, tgt, r->len);
		break;
	case O_CAS:
	case O_FAA:
		memcpy(&v, tgt, 8);
		memcpy(src, &v, 8);
		v = r->op == O_CAS ? r->swap : v + r->compare_add;
		memcpy(tgt, &v, 8);
		break;
	}
}

static struct ibv_qp *
make_qp(unsigned type)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = scq, .recv_cq = rcq, .qp_type = qp_type(type),
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &ia);

	ck_assert_ptr_nonnull(qp);
	return qp;
}

static int
all_remote(unsigned type)
{
	return IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
	       (type == T_RC ? IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC : 0);
}

static void
row_setup(struct row *r)
{
	int mr_access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	/* ACK timeout 15: 134 ms, so a request sent again after a silent
	 * drop is told apart from one that was answered. */
	struct droce_test_path p = { .dgid = gid, .qkey = QKEY, .psn = PSN, .timeout = 15,
				     .access = all_remote(r->type) };
	struct ibv_sge sge = { (uintptr_t)reg(R_RECV), RECV_POST, recv_mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1 }, *bad;

	pattern_fill();
	if (r->f->mr_lacks)
		mr_access &= ~ops[r->op].remote;
	r->tgt_mr = ibv_reg_mr(pd, reg(R_TGT), TGT_LEN, mr_access);
	ck_assert_ptr_nonnull(r->tgt_mr);
	r->req = make_qp(r->type);
	r->resp = make_qp(r->type);
	p.dqpn = r->resp->qp_num;
	ck_assert_int_eq(droce_test_connect(r->req, &p), 0);
	if (r->f->qp_lacks)
		p.access &= ~ops[r->op].remote;
	p.dqpn = r->req->qp_num;
	ck_assert_int_eq(droce_test_connect(r->resp, &p), 0);
	if (r->type == T_UD) {
		struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1,
					  .grh = { .dgid = gid, .sgid_index = 1, .hop_limit = 64 } };

		r->ah = ibv_create_ah(pd, &aa);
		ck_assert_ptr_nonnull(r->ah);
	}
	/* One receive whatever the opcode: nothing but a valid SEND or
	 * WRITE_WITH_IMM may consume it. */
	ck_assert_int_eq(ibv_post_recv(r->resp, &wr, &bad), 0);
	row_request(r);
	row_outcome(r);
	row_expect(r);
}

static void
set_tx_drop(bool on)
{
	struct droce_fault_conf f = { .drop = 1, .seed = 1 };

	ck_assert_int_eq(droce_port_fault_set(port, false, on ? &f : NULL), 0);
}

/* After each row, passed or failed: whatever it left. */
static void
row_teardown(void)
{
	struct row *r = cur;
	struct ibv_wc wc;

	cur = NULL;
	set_tx_drop(false);
	if (r == NULL)
		return;
	if (r->req != NULL)
		ck_assert_int_eq(ibv_destroy_qp(r->req), 0);
	if (r->resp != NULL)
		ck_assert_int_eq(ibv_destroy_qp(r->resp), 0);
	if (r->ah != NULL)
		ck_assert_int_eq(ibv_destroy_ah(r->ah), 0);
	if (r->tgt_mr != NULL)
		ck_assert_int_eq(ibv_dereg_mr(r->tgt_mr), 0);
	while (ibv_poll_cq(scq, 1, &wc) > 0 || ibv_poll_cq(rcq, 1, &wc) > 0)
		;
}

static int
row_post(struct row *r, uint64_t va)
{
	struct ibv_sge sge = { (uintptr_t)reg(R_SRC), r->len, src_mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 7, .sg_list = &sge, .num_sge = r->len > 0, .opcode = ops[r->op].wr,
		.send_flags = IBV_SEND_SIGNALED, .imm_data = htobe32(IMM),
	}, *bad;

	if (r->type == T_UD) {
		wr.wr.ud.ah = r->ah;
		wr.wr.ud.remote_qpn = r->resp->qp_num;
		wr.wr.ud.remote_qkey = r->f->qkey ? r->f->qkey : QKEY;
	} else if (OB(r->op) & OPS_ATOMIC) {
		wr.wr.atomic.remote_addr = va;
		wr.wr.atomic.rkey = r->rkey;
		wr.wr.atomic.compare_add = r->compare_add;
		wr.wr.atomic.swap = r->swap;
	} else {
		wr.wr.rdma.remote_addr = va;
		wr.wr.rdma.rkey = r->rkey;
	}
	if (r->op == O_SEND_INV)
		wr.invalidate_rkey = r->f->inv_no_key ? r->tgt_mr->rkey ^ 0xff : r->tgt_mr->rkey;
	return ibv_post_send(r->req, &wr, &bad);
}

/* ---- crafted frames ---- */

/* The frame droce's requester would send for the row, with P_Key @p pkey
 * and the remote address @p va, put on the port's ethdev ring: net_ring's
 * TX ring is its own RX ring, and droce sends nothing there itself (its
 * frames to its own address take the port's loopback ring). */
static void
inject(const struct row *r, uint16_t pkey, uint64_t va)
{
	uint8_t opcode = (r->type == T_RC ? DROCE_SVC_RC : r->type == T_UC ? DROCE_SVC_UC :
			  DROCE_SVC_UD) | ops[r->op].bth;
	const struct droce_opcode_info *op = &droce_opcode_table[opcode];
	/* The extension headers, at their offsets from the end of the BTH. */
	uint8_t ext[DROCE_HDR_NUM * 16] = { 0 };
	struct droce_peer_frame f = {
		.opcode = opcode, .dqpn = r->resp->qp_num, .psn = PSN, .ackreq = r->type == T_RC,
		.pkey = pkey, .ext = ext, .ext_len = op->hdr_len - sizeof(struct droce_bth),
		.payload = reg(R_SRC), .len = op->flags & DROCE_OPF_PAYLOAD ? r->len : 0,
	};
	struct rte_mbuf *m;

#define EXT(h, type) ((type *)(ext + op->off[h] - sizeof(struct droce_bth)))
	if (op->off[DROCE_HDR_DETH]) {
		EXT(DROCE_HDR_DETH, struct droce_deth)->qkey = rte_cpu_to_be_32(QKEY);
		droce_put24(EXT(DROCE_HDR_DETH, struct droce_deth)->sqpn, r->req->qp_num);
	}
	if (op->off[DROCE_HDR_RETH]) {
		EXT(DROCE_HDR_RETH, struct droce_reth)->va = rte_cpu_to_be_64(va);
		EXT(DROCE_HDR_RETH, struct droce_reth)->rkey = rte_cpu_to_be_32(r->rkey);
		EXT(DROCE_HDR_RETH, struct droce_reth)->len = rte_cpu_to_be_32(r->len);
	}
	if (op->off[DROCE_HDR_ATMETH]) {
		struct droce_atomic_eth *a = EXT(DROCE_HDR_ATMETH, struct droce_atomic_eth);

		a->va = rte_cpu_to_be_64(va);
		a->rkey = rte_cpu_to_be_32(r->rkey);
		a->swap_add = rte_cpu_to_be_64(r->op == O_CAS ? r->swap : r->compare_add);
		a->compare = rte_cpu_to_be_64(r->op == O_CAS ? r->compare_add : 0);
	}
	if (op->off[DROCE_HDR_IMMDT])
		EXT(DROCE_HDR_IMMDT, struct droce_immdt)->imm = htobe32(IMM);
	if (op->off[DROCE_HDR_IETH])
		EXT(DROCE_HDR_IETH, struct droce_ieth)->rkey = rte_cpu_to_be_32(r->tgt_mr->rkey);
#undef EXT
	m = droce_peer_build(&self, &f);
	ck_assert_ptr_nonnull(m);
	ck_assert_uint_eq(rte_eth_tx_burst(droce_port_ethdev(port), 0, &m, 1), 1);
}

/* The requester posts the row's request, the port drops its frame, and a
 * crafted copy with the row's fault takes its place. */
static void
post_crafted(struct row *r)
{
	struct droce_port_stats s0, s;
	double end = droce_test_now() + 5;

	if (r->f->where == W_MISALIGNED)
		/* ibv_post_send refuses it, as rxe's does. */
		ck_assert_int_eq(row_post(r, r->va + 4), EINVAL);
	droce_port_stats_get(port, &s0);
	set_tx_drop(true);
	ck_assert_int_eq(row_post(r, r->va), 0);
	do {
		droce_dev_poll(0);
		droce_port_stats_get(port, &s);
		ck_assert_msg(droce_test_now() < end, "%s: the request never went out", r->name);
	} while (s.tx_fault.dropped == s0.tx_fault.dropped);
	set_tx_drop(false);
	inject(r, r->f->pkey, r->f->where == W_MISALIGNED ? r->va + 4 : r->va);
}

/* ---- checks ---- */

static uint64_t
qp_timeouts(struct ibv_qp *qp)
{
	return __atomic_load_n(&droce_qp_of(qp)->stats.timeouts, __ATOMIC_RELAXED);
}

static bool
may(const struct row *r, size_t i)
{
	for (unsigned k = 0; k < r->nmay; k++)
		if (i >= r->may_off[k] && i < r->may_off[k] + r->may_len[k])
			return true;
	return false;
}

static void
check_memory(const struct row *r)
{
	for (size_t i = 0; i < arena_len; i++) {
		int g;

		if (arena[i] == expect[i] || may(r, i))
			continue;
		for (g = R_NUM - 1; g > 0 && i < reg_off[g]; g--)
			;
		ck_abort_msg("%s: byte %zd from the start of the %s region is 0x%02x, expected 0x%02x",
			     r->name, (ssize_t)(i - reg_off[g]), reg_name[g], arena[i], expect[i]);
	}
}

/* The port's counters of frames it could not make sense of. */
static uint64_t
port_rejects(void)
{
	struct droce_port_stats s;

	droce_port_stats_get(port, &s);
	return s.rx_malformed + s.rx_bad_opcode + s.rx_bad_icrc + s.rx_not_ours + s.rx_not_roce;
}

static void
run_row(struct row *r)
{
	const struct fault *f = r->f;
	unsigned recv_ok = 0, recv_err = 0, sent = 0;
	uint64_t rejects = port_rejects(), before[RTE_DIM(r->counts)];
	struct ibv_wc wc, swc;
	int st, want;
	double end;

	cur = r;
	row_setup(r);
	for (unsigned k = 0; k < r->ncounts; k++)
		before[k] = droce_peer_stat(&self, r->counts[k].name);
	if (f->pkey != 0)
		post_crafted(r);
	else
		ck_assert_int_eq(row_post(r, r->va), 0);
	/* The requester's completion: UC and UD complete once sent; RC when
	 * answered, or after resending what was silently dropped. */
	end = droce_test_now() + 5;
	while (sent == 0) {
		ck_assert_msg(droce_test_now() < end, "%s: no completion at the requester", r->name);
		sent = (unsigned)ibv_poll_cq(scq, 1, &swc);
	}
	end = droce_test_now() + SETTLE_S;
	while (droce_test_now() < end) {
		if (ibv_poll_cq(rcq, 1, &wc) <= 0)
			continue;
		if (wc.status == IBV_WC_SUCCESS)
			recv_ok++;
		else if (wc.status != IBV_WC_WR_FLUSH_ERR)
			recv_err++;
	}

	check_memory(r);
	ck_assert_msg(swc.status == r->req_status, "%s: requester completion %s, expected %s",
		      r->name, ibv_wc_status_str(swc.status), ibv_wc_status_str(r->req_status));
	/* A fatal NAK fails the requester's QP too. */
	st = droce_test_qp_state(r->req);
	want = r->req_status != IBV_WC_SUCCESS ? IBV_QPS_ERR : IBV_QPS_RTS;
	ck_assert_msg(st == want, "%s: requester QP in state %d afterwards, expected %d", r->name,
		      st, want);
	st = droce_test_qp_state(r->resp);
	want = r->resp_err ? IBV_QPS_ERR : IBV_QPS_RTS;
	ck_assert_msg(st == want, "%s: responder QP in state %d afterwards, expected %d", r->name,
		      st, want);
	ck_assert_msg(recv_ok == r->consumes, "%s: %u successful receive completions, expected %u",
		      r->name, recv_ok, r->consumes);
	if (r->type == T_RC && r->recv_fails)
		ck_assert_msg(recv_err == 1, "%s: %u failed receive completions, expected 1",
			      r->name, recv_err);
	if (r->type == T_RC && f->silent)
		ck_assert_msg(qp_timeouts(r->req) > 0,
			      "%s: the requester got an answer to a request that should vanish",
			      r->name);
	else if (f->pkey != 0 && !f->refused)
		ck_assert_msg(qp_timeouts(r->req) == 0,
			      "%s: the crafted request was not answered", r->name);
	ck_assert_msg(port_rejects() == rejects, "%s: the port rejected a frame", r->name);
	for (unsigned k = 0; k < r->ncounts; k++) {
		uint64_t v = droce_peer_stat(&self, r->counts[k].name);

		ck_assert_msg(v - before[k] == r->counts[k].delta,
			      "%s: engine counter %s grew by %" PRIu64 ", expected %u", r->name,
			      r->counts[k].name, v - before[k], r->counts[k].delta);
	}
}

/* Every applicable (QP type, opcode, fault). */
static void
matrix_build(void)
{
	static const unsigned types[] = { T_RC, T_UC, T_UD };

	for (unsigned t = 0; t < RTE_DIM(types); t++)
		for (unsigned fi = 0; fi < RTE_DIM(faults); fi++)
			for (unsigned o = 0; o < O_NUM; o++) {
				struct row *r = &rows[nrows];

				if (!(ops[o].types & types[t]) || !(faults[fi].ops & OB(o)) ||
				    !(faults[fi].types & types[t]))
					continue;
				if (nrows == RTE_DIM(rows))
					abort();
				*r = (struct row){ .type = types[t], .op = o, .f = &faults[fi] };
				snprintf(r->name, sizeof(r->name), "%s %s, %s", type_name(types[t]),
					 ops[o].name, faults[fi].name);
				nrows++;
			}
}

START_TEST(matrix_row)
{
	run_row(&rows[_i]);
}
END_TEST

static void
arena_setup(void)
{
	size_t off = GUARD;

	for (int r = 0; r < R_NUM; r++) {
		reg_off[r] = off;
		off += RTE_ALIGN_CEIL(reg_len[r], GUARD) + GUARD;
	}
	arena_len = off;
	if (posix_memalign((void **)&arena, GUARD, arena_len) != 0 ||
	    (expect = malloc(arena_len)) == NULL)
		abort();
}

int
main(void)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	Suite *su = suite_create("access");
	TCase *tc = tcase_create("matrix");
	SRunner *sr;
	int failed;

	if (list == NULL || list[0] == NULL)
		return 1;
	arena_setup();
	ctx = ibv_open_device(list[0]);
	pd = ibv_alloc_pd(ctx);
	pd2 = ibv_alloc_pd(ctx);
	scq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	rcq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	port = droce_dev_port(0);
	if (!ctx || !pd || !pd2 || !scq || !rcq || !port || ibv_query_gid(ctx, 1, 1, &gid) != 0)
		return 1;
	self.mp = droce_port_mempool(port);
	self.l3.ttl = 64;
	droce_port_mac(port, &self.l3.src_mac);
	self.l3.dst_mac = self.l3.src_mac;
	memcpy(self.l3.sgid, gid.raw, 16);
	memcpy(self.l3.dgid, gid.raw, 16);
	other_mr = ibv_reg_mr(pd2, reg(R_OTHER), OTHER_LEN, IBV_ACCESS_LOCAL_WRITE |
			      IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			      IBV_ACCESS_REMOTE_ATOMIC);
	src_mr = ibv_reg_mr(pd, reg(R_SRC), SRC_LEN, IBV_ACCESS_LOCAL_WRITE);
	recv_mr = ibv_reg_mr(pd, reg(R_RECV), RECV_LEN, IBV_ACCESS_LOCAL_WRITE);
	if (!other_mr || !src_mr || !recv_mr)
		return 1;
	matrix_build();
	printf("%u rows\n", nrows);
	tcase_add_checked_fixture(tc, NULL, row_teardown);
	tcase_add_loop_test(tc, matrix_row, 0, (int)nrows);
	suite_add_tcase(su, tc);
	sr = srunner_create(su);
	srunner_set_fork_status(sr, CK_NOFORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	ibv_dereg_mr(other_mr);
	ibv_dereg_mr(src_mr);
	ibv_dereg_mr(recv_mr);
	ibv_destroy_cq(scq);
	ibv_destroy_cq(rcq);
	ibv_dealloc_pd(pd);
	ibv_dealloc_pd(pd2);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	free(arena);
	free(expect);
	return failed == 0 ? 0 : 1;
}
