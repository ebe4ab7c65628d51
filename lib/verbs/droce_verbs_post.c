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

/* Inlined into droce_post_send(): the call's saved registers were some
 * eight instructions of each post. */
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
	uint64_t len = 0;
	int i;

	/* A bit per opcode the QP's type takes, worked out when it was made:
	 * a switch on the opcode cost each post some ten instructions. */
	if ((unsigned int)opcode >= 32 || !((qp->send_opcodes >> opcode) & 1) || wr->num_sge < 0)
		return EINVAL;
	if (droce_wr_is_local(opcode))
		return droce_local_wqe_fill(w, wr);
	if (flags & IBV_SEND_INLINE) {
		if (opcode == IBV_WR_RDMA_READ || droce_wr_is_atomic(opcode))
			return EINVAL;
	} else if ((uint32_t)wr->num_sge > qp->sq.max_sge) {
		return EINVAL;
	}
	if (likely(wr->num_sge == 1))
		len = wr->sg_list[0].length;
	else
		for (i = 0; i < wr->num_sge; i++)
			len += wr->sg_list[i].length;
	if (len > DROCE_MAX_MSG)
		return EINVAL;
	if (droce_wr_is_atomic(opcode) &&
	    (wr->num_sge != 1 || len != sizeof(uint64_t) || (wr->wr.atomic.remote_addr & 7)))
		return EINVAL;

	w->wr_id = wr->wr_id;
	w->opcode = opcode;
	w->send_flags = flags;
	w->imm = wr->imm_data;
	w->invalidate_rkey = opcode == IBV_WR_SEND_WITH_INV ? wr->invalidate_rkey : 0;
	w->length = (uint32_t)len;
	w->state = DROCE_WQE_POSTED;
	w->num_sge = (uint16_t)wr->num_sge;
	if (qp->type == IBV_QPT_UD) {
		/* A datagram is one packet: it must fit the path MTU. */
		if (wr->wr.ud.ah == NULL || len > qp->mtu)
			return EINVAL;
		w->ah = (struct droce_ah *)wr->wr.ud.ah;
		w->remote_qpn = wr->wr.ud.remote_qpn & DROCE_QPN_MASK;
		w->remote_qkey = wr->wr.ud.remote_qkey;
	} else if (droce_wr_is_atomic(opcode)) {
		w->remote_addr = wr->wr.atomic.remote_addr;
		w->rkey = wr->wr.atomic.rkey;
		w->compare_add = wr->wr.atomic.compare_add;
		w->swap = wr->wr.atomic.swap;
	} else {
		w->remote_addr = wr->wr.rdma.remote_addr;
		w->rkey = wr->wr.rdma.rkey;
	}
	if (qp->type == IBV_QPT_XRC_SEND)
		w->xrc_srqn = wr->qp_type.xrc.remote_srqn & DROCE_QPN_MASK;
	w->is_inline = (flags & IBV_SEND_INLINE) != 0;
	if (w->is_inline) {
		uint8_t *p = w->data;

		if (len > qp->sq.max_inline)
			return EINVAL;
		/* Inline data is copied now: the buffers need no key and may be
		 * reused as soon as this call returns. One SGE (a few dozen
		 * bytes, as a rule) with rte_memcpy(), inline: a call of libc's
		 * memcpy() made the compiler keep the post's values across it. */
		if (likely(wr->num_sge == 1))
			rte_memcpy(p, (void *)(uintptr_t)wr->sg_list[0].addr, len);
		else
			for (i = 0; i < wr->num_sge; i++) {
				memcpy(p, (void *)(uintptr_t)wr->sg_list[i].addr,
				       wr->sg_list[i].length);
				p += wr->sg_list[i].length;
			}
	} else if (wr->num_sge == 1) {
		/* The common case, without a call to memcpy() for 16 bytes. */
		*droce_wqe_sge(w) = wr->sg_list[0];
	} else if (wr->num_sge > 0) {
		memcpy(droce_wqe_sge(w), wr->sg_list, (size_t)wr->num_sge * sizeof(struct ibv_sge));
	}
	return 0;
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
