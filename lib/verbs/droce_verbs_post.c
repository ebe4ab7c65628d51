/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ibv_post_send and ibv_post_recv: check each work request, write it into
 * the QP's ring, ring the engine's doorbell (a kick), and give the engine
 * a turn in this thread when nobody else is running it.
 *
 * Checks here are the ones rdma-core's providers make at post time
 * (opcode, SGE count, inline size, ring space); keys and bounds are
 * checked by the engine when it touches the memory, and fail as a
 * completion with an error status, as on hardware.
 */
#include <errno.h>
#include <string.h>

#include <rte_memcpy.h>
#include <rte_prefetch.h>

#include "droce_verbs_priv.h"

static bool
send_opcode_ok(enum ibv_qp_type t, enum ibv_wr_opcode op)
{
	switch (op) {
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
		return true;
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		return t == IBV_QPT_RC || t == IBV_QPT_UC || t == IBV_QPT_XRC_SEND;
	case IBV_WR_RDMA_READ:
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
	case IBV_WR_SEND_WITH_INV:
		return t == IBV_QPT_RC || t == IBV_QPT_XRC_SEND;
	case IBV_WR_BIND_MW:
	case IBV_WR_LOCAL_INV:
		return t == IBV_QPT_RC || t == IBV_QPT_UC || t == IBV_QPT_XRC_SEND;
	default:
		return false;
	}
}

uint32_t
droce_send_opcodes(enum ibv_qp_type t)
{
	uint32_t ops = 0;
	unsigned op;

	for (op = 0; op < 32; op++)
		if (send_opcode_ok(t, (enum ibv_wr_opcode)op))
			ops |= UINT32_C(1) << op;
	return ops;
}

/* Opcodes whose WQE takes more than a SEND's, WRITE's or READ's fields
 * (send_wqe_fill_other()): local operations, atomics, SEND with
 * invalidate. */
#define SEND_OPS_OTHER (UINT32_C(1) << IBV_WR_LOCAL_INV | UINT32_C(1) << IBV_WR_BIND_MW | \
			UINT32_C(1) << IBV_WR_ATOMIC_CMP_AND_SWP |                        \
			UINT32_C(1) << IBV_WR_ATOMIC_FETCH_AND_ADD |                      \
			UINT32_C(1) << IBV_WR_SEND_WITH_INV)

uint32_t
droce_send_plain_opcodes(enum ibv_qp_type t)
{
	if (t != IBV_QPT_RC && t != IBV_QPT_UC)
		return 0;
	return droce_send_opcodes(t) & ~SEND_OPS_OTHER;
}

/* The fields every SEND, WRITE, READ and atomic WQE has but its SGEs or
 * inline data: who it is, what it does and its length. */
static __rte_always_inline void
send_wqe_fill_head(struct droce_send_wqe *w, const struct ibv_send_wr *wr,
		   enum ibv_wr_opcode opcode, unsigned int flags, uint32_t len)
{
	w->wr_id = wr->wr_id;
	w->opcode = opcode;
	w->send_flags = flags;
	w->imm = wr->imm_data;
	w->length = len;
	w->state = DROCE_WQE_POSTED;
	w->num_sge = (uint16_t)wr->num_sge;
	w->is_inline = (flags & IBV_SEND_INLINE) != 0;
}

/*
 * What every SEND, WRITE, READ and atomic WQE has: its SGEs (or inline
 * data), length, flags, and where it goes. Inlined twice, the QP's type
 * told (@p plain) or not: into droce_send_wqe_fill() for the plain
 * opcodes of an RC or UC QP, the posts that count, which then test
 * neither for UD's address nor for XRC's SRQ; and into
 * send_wqe_fill_other() for all else. A WR of one SGE, not inline, the
 * common one, is tested once for it: every QP takes at least one SGE.
 */
static __rte_always_inline int
send_wqe_fill_data(const struct droce_qp *qp, struct droce_send_wqe *w,
		   const struct ibv_send_wr *wr, enum ibv_wr_opcode opcode, unsigned int flags,
		   bool plain)
{
	const int num_sge = wr->num_sge;
	uint64_t len = 0;
	int i;

	if (likely(num_sge == 1 && !(flags & IBV_SEND_INLINE))) {
		const struct ibv_sge *sge = wr->sg_list;

		len = sge->length;
		if (len > DROCE_MAX_MSG)
			return EINVAL;
		send_wqe_fill_head(w, wr, opcode, flags, (uint32_t)len);
		*droce_wqe_sge(w) = *sge;
	} else {
		if (flags & IBV_SEND_INLINE) {
			if (opcode == IBV_WR_RDMA_READ || droce_wr_is_atomic(opcode) ||
			    num_sge < 0)
				return EINVAL;
		} else if ((uint32_t)num_sge > qp->sq.max_sge) {
			/* A negative count too. */
			return EINVAL;
		}
		for (i = 0; i < num_sge; i++)
			len += wr->sg_list[i].length;
		if (len > DROCE_MAX_MSG || ((flags & IBV_SEND_INLINE) && len > qp->sq.max_inline))
			return EINVAL;
		send_wqe_fill_head(w, wr, opcode, flags, (uint32_t)len);
		if (flags & IBV_SEND_INLINE) {
			uint8_t *p = w->data;

			/* Inline data is copied now: the buffers need no key and
			 * may be reused as soon as this call returns. One SGE (a
			 * few dozen bytes, as a rule) with rte_memcpy(), inline: a
			 * call of libc's memcpy() made the compiler keep the
			 * post's values across it. */
			if (likely(num_sge == 1))
				rte_memcpy(p, (void *)(uintptr_t)wr->sg_list[0].addr, len);
			else
				for (i = 0; i < num_sge; i++) {
					/* An empty SGE's address may be 0. */
					if (wr->sg_list[i].length != 0)
						memcpy(p, (void *)(uintptr_t)wr->sg_list[i].addr,
						       wr->sg_list[i].length);
					p += wr->sg_list[i].length;
				}
		} else if (num_sge > 0) {
			memcpy(droce_wqe_sge(w), wr->sg_list, (size_t)num_sge * sizeof(struct ibv_sge));
		}
	}
	if (!plain && qp->type == IBV_QPT_UD) {
		/* A datagram is one packet: it must fit the path MTU. */
		if (wr->wr.ud.ah == NULL || len > qp->mtu)
			return EINVAL;
		w->ah = (struct droce_ah *)wr->wr.ud.ah;
		w->remote_qpn = wr->wr.ud.remote_qpn & DROCE_QPN_MASK;
		w->remote_qkey = wr->wr.ud.remote_qkey;
	} else {
		w->remote_addr = wr->wr.rdma.remote_addr;
		w->rkey = wr->wr.rdma.rkey;
	}
	if (!plain && qp->type == IBV_QPT_XRC_SEND)
		w->xrc_srqn = wr->qp_type.xrc.remote_srqn & DROCE_QPN_MASK;
	return 0;
}

/* Any WQE but a plain opcode's of an RC or UC QP: UD and XRC QPs, local
 * operations, atomics, SEND with invalidate, and opcodes the QP does not
 * take. Out of line, so that the common post pays one test for all of
 * them. */
static int __rte_noinline
send_wqe_fill_other(const struct droce_qp *qp, struct droce_send_wqe *w,
		    const struct ibv_send_wr *wr, enum ibv_wr_opcode opcode, unsigned int flags)
{
	int rc;

	/* A bit per opcode the QP's type takes, worked out when it was made. */
	if ((unsigned int)opcode >= 32 || !((qp->send_opcodes >> opcode) & 1))
		return EINVAL;
	if (droce_wr_is_local(opcode))
		return droce_local_wqe_fill(w, wr);
	rc = send_wqe_fill_data(qp, w, wr, opcode, flags, false);
	if (rc != 0 || !((SEND_OPS_OTHER >> opcode) & 1))
		return rc;
	if (opcode == IBV_WR_SEND_WITH_INV) {
		w->invalidate_rkey = wr->invalidate_rkey;
		return 0;
	}
	/* An atomic: one 8-byte SGE, an aligned remote address, its operands. */
	if (wr->num_sge != 1 || w->length != sizeof(uint64_t) ||
	    (wr->wr.atomic.remote_addr & 7))
		return EINVAL;
	w->remote_addr = wr->wr.atomic.remote_addr;
	w->rkey = wr->wr.atomic.rkey;
	w->compare_add = wr->wr.atomic.compare_add;
	w->swap = wr->wr.atomic.swap;
	return 0;
}

__rte_always_inline int
droce_send_wqe_fill(const struct droce_qp *qp, struct droce_send_wqe *w, const struct ibv_send_wr *wr)
{
	/* Each read on its own, 4 bytes: applications set send_flags just
	 * before they post (perftest its IBV_SEND_SIGNALED), and the one
	 * 8-byte load the compiler would merge opcode and flags into spans
	 * that store, misses store forwarding and stalls the post until the
	 * store retires, some 12 cycles. */
	const enum ibv_wr_opcode opcode = *(const volatile enum ibv_wr_opcode *)&wr->opcode;
	const unsigned int flags = *(const volatile unsigned int *)&wr->send_flags;

	/* A SEND, WRITE or READ of an RC or UC QP, in one test of a bit per
	 * opcode (droce_qp::send_plain): a switch on the opcode cost each
	 * post some ten instructions, and the tests for UD's and XRC's
	 * fields five more. */
	if (likely((unsigned int)opcode < 32 && ((qp->send_plain >> opcode) & 1)))
		return send_wqe_fill_data(qp, w, wr, opcode, flags, true);
	return send_wqe_fill_other(qp, w, wr, opcode, flags);
}

/*
 * A post list is an array in the posters we know (perftest, NCCL's
 * net_ib, droce-perf): WRs one after another, and their SGEs. The post
 * follows each WR's next, so a WR's line is asked for only once the one
 * before it has come in; when the list has left the L1 since the last
 * post (a list's frames and WQEs pass through it), those misses wait
 * each for the last, some 14 cycles a WR from L2. Fetching the WR and
 * the SGE line POST_LIST_AHEAD places on, as if the list were an array,
 * breaks that chain: the 64-byte sender with post lists of 32 ran some
 * 1.5 % faster (alternating memif pairs, 10 of 11 in the machine's fast
 * state). Where the list is no array, the fetch reads a line nobody
 * needs; a prefetch never faults.
 */
#define POST_LIST_AHEAD 4

static __rte_always_inline void
post_list_prefetch(const struct ibv_send_wr *wr)
{
	rte_prefetch0((const void *)((uintptr_t)wr + POST_LIST_AHEAD * sizeof(*wr)));
	rte_prefetch0((const void *)((uintptr_t)wr->sg_list +
				     POST_LIST_AHEAD * sizeof(struct ibv_sge)));
}

int
droce_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
	struct droce_qp *qp = droce_qp_of(ibqp);
	enum ibv_qp_state st = droce_qp_state(qp);
	struct droce_wq *sq = &qp->sq;
	uint32_t prod;
	bool due;
	int rc = 0;

	if (st == IBV_QPS_RESET || st == IBV_QPS_INIT || st == IBV_QPS_RTR ||
	    qp->type == IBV_QPT_XRC_RECV) {
		*bad = wr;
		return EINVAL;
	}
	droce_wq_lock(sq);
	for (prod = sq->prod; wr != NULL; wr = wr->next, prod++) {
		if (!droce_wq_room_at(sq, prod)) {
			rc = ENOMEM;
			break;
		}
		if (wr->next != NULL)
			post_list_prefetch(wr);
		rc = droce_send_wqe_fill(qp, droce_wq_at(sq, prod), wr);
		if (rc != 0)
			break;
	}
	/* The list, or its part before the bad WR, is published in one step. */
	__atomic_store_n(&sq->prod, prod, __ATOMIC_RELEASE);
	due = droce_wq_batch_due(sq, prod);
	droce_wq_unlock(sq);
	if (rc != 0)
		*bad = wr;
	droce_post_ring(qp, due);
	return rc;
}

int
droce_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	struct droce_qp *qp = droce_qp_of(ibqp);
	enum ibv_qp_state st = droce_qp_state(qp);
	int rc;

	if (st == IBV_QPS_RESET || qp->srq != NULL || qp->type == IBV_QPT_XRC_SEND ||
	    qp->type == IBV_QPT_XRC_RECV) {
		*bad = wr;
		return EINVAL;
	}
	rc = droce_wq_post_recv(&qp->rq, wr, bad);
	/* A QP in the error state flushes what arrives. */
	if (st == IBV_QPS_ERR)
		droce_engine_kick(qp->engine, qp);
	return rc;
}
