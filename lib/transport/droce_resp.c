/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The responder: request packets in PSN order land in receive WQEs or
 * memory regions; READs and atomics queue responses; ACKs are coalesced
 * to one per engine pass; sequence gaps get one NAK until the gap closes;
 * duplicates are answered again (READs re-executed from the duplicate
 * PSN, atomics replayed from their saved result, never applied twice).
 * Packets reach it only after droce_rx_check(); the opcode sequence is
 * checked here, once a packet is known to be the next one in PSN order.
 */
#include <string.h>

#include "droce_log.h"
#include "droce_mw.h"
#include "droce_transport.h"
#include "droce_req_priv.h"

/* Owe the requester a NAK (or RNR NAK) for @p psn instead of an ACK. */
static void
resp_nak(struct droce_qp *qp, uint8_t syndrome, uint32_t psn)
{
	qp->resp.pending_syndrome = syndrome;
	qp->resp.pending_psn = psn;
	qp->resp.ack_pending = false;
	/* Packets already on their way after this one are dropped silently
	 * until the requester resends from @p psn. */
	qp->resp.nak_sent = true;
}

/* Complete the receive being filled with an error: nothing more lands in it. */
static void
resp_recv_fail(struct droce_qp *qp, enum ibv_wc_status status)
{
	struct ibv_wc wc = {
		.wr_id = qp->rwqe->wr_id,
		.status = status,
		.opcode = IBV_WC_RECV,
		.qp_num = qp->qpn,
	};

	droce_cq_push(qp->rcq, &wc, false);
	qp->resp.has_wqe = false;
}

/*
 * A request the responder refuses (IBA 9.9.3.1.2, errors of class C and
 * D/E). RC and XRC NAK it with @p code, complete the receive being filled
 * in error and go to the error state, raising the affiliated event a NIC
 * raises: no byte of this message or any later one is delivered. UC has
 * no NAK: the message is dropped, and its receive completes in error when
 * it came from an SRQ (class D) or is kept for the next message (class E).
 */
static void
resp_error(struct droce_tx *tx, struct droce_qp *qp, uint8_t code, uint32_t psn,
	   const char *why)
{
	bool access = code == DROCE_NAK_REM_ACCESS_ERR;
	enum ibv_wc_status st = access ? IBV_WC_REM_ACCESS_ERR : IBV_WC_REM_INV_REQ_ERR;

	DROCE_LOG(DEBUG, "QP 0x%x: request at PSN 0x%x refused (NAK %u): %s", qp->qpn, psn,
		  code, why);
	qp->resp.in_send = false;
	qp->resp.in_write = false;
	if (qp->type == IBV_QPT_UC) {
		if (qp->resp.has_wqe && qp->srq != NULL)
			resp_recv_fail(qp, st);
		return;
	}
	if (access)
		tx->rxs->naks_rem_access_sent++;
	else
		tx->rxs->naks_inv_req_sent++;
	resp_nak(qp, DROCE_AETH_NAK | code, psn);
	if (qp->resp.has_wqe)
		resp_recv_fail(qp, st);
	/* The engine sends the NAK it owes, then flushes (droce_engine.c). */
	__atomic_store_n(&qp->state, IBV_QPS_ERR, __ATOMIC_RELEASE);
	droce_qp_event(qp, access ? IBV_EVENT_QP_ACCESS_ERR : IBV_EVENT_QP_REQ_ERR);
}

void
droce_resp_recv_wc(const struct droce_qp *qp, const struct droce_recv_wqe *r,
		   enum ibv_wc_status status, enum ibv_wc_opcode opcode, uint32_t byte_len,
		   const struct droce_pkt *pkt, struct rte_mbuf *m, struct ibv_wc *wc)
{
	const struct droce_immdt *imm = droce_pkt_hdr(m, pkt, DROCE_HDR_IMMDT);
	const struct droce_ieth *ieth = droce_pkt_hdr(m, pkt, DROCE_HDR_IETH);

	*wc = (struct ibv_wc){
		.wr_id = r->wr_id,
		.status = status,
		.opcode = opcode,
		.byte_len = byte_len,
		.qp_num = qp->qpn,
		.src_qp = qp->attr.dest_qp_num,
	};
	if (imm != NULL) {
		wc->wc_flags |= IBV_WC_WITH_IMM;
		wc->imm_data = imm->imm;
	} else if (ieth != NULL) {
		wc->wc_flags |= IBV_WC_WITH_INV;
		wc->invalidated_rkey = rte_be_to_cpu_32(ieth->rkey);
	}
	if (qp->type == IBV_QPT_UD) {
		const struct droce_deth *deth = droce_pkt_hdr(m, pkt, DROCE_HDR_DETH);

		wc->src_qp = droce_get24(deth->sqpn);
		wc->wc_flags |= IBV_WC_GRH;
		/* RoCE has no SL; mlx5 reports the network header's kind there
		 * (2: IPv4, 0: IPv6) and UCX reads it to parse the GRH. */
		wc->sl = pkt->ipv6 ? 0 : 2;
	}
}

static void
resp_recv_complete(struct droce_qp *qp, struct droce_recv_wqe *r, enum ibv_wc_status status,
		   enum ibv_wc_opcode opcode, uint32_t byte_len, const struct droce_pkt *pkt,
		   struct rte_mbuf *m)
{
	struct ibv_wc wc;

	droce_resp_recv_wc(qp, r, status, opcode, byte_len, pkt, m, &wc);
	droce_cq_push(qp->rcq, &wc, droce_bth_se(droce_pkt_hdr(m, pkt, DROCE_HDR_BTH)));
	qp->resp.has_wqe = false;
}

/* Check that a message can complete: a receive WQE and room in the CQ.
 * A UC receive kept from a dropped message is used again. */
static struct droce_recv_wqe *
resp_need_recv(struct droce_qp *qp, const struct droce_pkt *pkt)
{
	struct droce_recv_wqe *r = droce_cq_space(qp->rcq) > 0 ? droce_recv_claim(qp) : NULL;

	if (r == NULL) {
		qp->stats.rnr_naks_sent++;
		resp_nak(qp, DROCE_AETH_RNR_NAK | (qp->attr.min_rnr_timer & DROCE_AETH_VALUE_MASK),
			 pkt->psn);
		return NULL;
	}
	return r;
}

/*
 * Is the operation enabled on this QP (its qp_access_flags)? An RDMA
 * operation the QP does not take is not supported by this receive queue:
 * an invalid request (the IB completion statuses; rxe's check_op_valid),
 * not an access error, which is about a memory region.
 */
static bool
resp_op_enabled(struct droce_tx *tx, struct droce_qp *qp, const struct droce_pkt *pkt,
		int access)
{
	if (qp->attr.qp_access_flags & access)
		return true;
	tx->rxs->rx_bad_access++;
	resp_error(tx, qp, DROCE_NAK_INVALID_REQ, pkt->psn, "operation not enabled on this QP");
	return false;
}

/* Payload length rules: FIRST and MIDDLE packets are exactly one MTU. */
static bool
resp_len_ok(struct droce_tx *tx, struct droce_qp *qp, const struct droce_pkt *pkt)
{
	bool ok = (pkt->op->flags & DROCE_OPF_LAST) ? pkt->payload_len <= qp->mtu :
						      pkt->payload_len == qp->mtu;

	if (!ok) {
		tx->rxs->rx_bad_length++;
		resp_error(tx, qp, DROCE_NAK_INVALID_REQ, pkt->psn, "payload of the wrong length");
	}
	return ok;
}

/*
 * A SEND with invalidate that names a key this QP cannot invalidate (no
 * such window, a type 1 window, another PD, or a region: droce has no
 * fast-registration regions) ends as IBA class J errors do, as in rxe:
 * acknowledged (the requester succeeds), its receive completed in error,
 * the QP in the error state. Never a success that claims a key was revoked
 * while its memory stays reachable.
 */
static void
resp_invalidate_failed(struct droce_tx *tx, struct droce_qp *qp)
{
	tx->rxs->rx_bad_invalidate++;
	resp_recv_fail(qp, IBV_WC_REM_INV_REQ_ERR);
	__atomic_store_n(&qp->state, IBV_QPS_ERR, __ATOMIC_RELEASE);
	droce_qp_event(qp, IBV_EVENT_QP_REQ_ERR);
}

/* SEND FIRST/MIDDLE/LAST/ONLY. @return false if the packet was refused. */
static bool
resp_send(struct droce_tx *tx, struct droce_qp *qp, struct rte_mbuf *m,
	  const struct droce_pkt *pkt)
{
	uint32_t flags = pkt->op->flags;
	struct droce_recv_wqe *r;
	int rc;

	if (!resp_len_ok(tx, qp, pkt))
		return false;
	/* A message under way has its receive (droce_rx_resp_seq_ok()). */
	r = (flags & DROCE_OPF_FIRST) ? resp_need_recv(qp, pkt) : qp->rwqe;
	if (r == NULL)
		return false;
	qp->resp.in_send = true;
	if (flags & DROCE_OPF_FIRST)
		qp->resp.send_offset = 0;
	droce_stage_lap(&tx->stage, DROCE_STAGE_responder);
	/* The LAST packet's completion follows at once: no waiting copy. */
	rc = droce_payload_to_sge(tx, qp->pd_handle, r->sge, r->num_sge, qp->resp.send_offset,
				  m, pkt, !(flags & DROCE_OPF_LAST));
	droce_stage_lap(&tx->stage, DROCE_STAGE_copy);
	if (rc != 0) {
		/* Too long for the buffers, or a bad lkey: the message fails here. */
		tx->rxs->rx_recv_too_small++;
		resp_recv_complete(qp, r, IBV_WC_LOC_LEN_ERR, IBV_WC_RECV, 0, pkt, m);
		resp_error(tx, qp, DROCE_NAK_INVALID_REQ, pkt->psn, "receive buffers too small, or a bad lkey");
		return false;
	}
	qp->resp.send_offset += pkt->payload_len;
	if (flags & DROCE_OPF_LAST) {
		const struct droce_ieth *ieth = droce_pkt_hdr(m, pkt, DROCE_HDR_IETH);

		if (ieth != NULL &&
		    !droce_key_invalidate(tx->mrt, qp->pd_handle, rte_be_to_cpu_32(ieth->rkey)))
			resp_invalidate_failed(tx, qp);
		else
			resp_recv_complete(qp, r, IBV_WC_SUCCESS, IBV_WC_RECV,
					   qp->resp.send_offset, pkt, m);
		qp->resp.in_send = false;
		qp->resp.msn++;
	}
	return true;
}

/* RDMA WRITE FIRST/MIDDLE/LAST/ONLY, with or without immediate. */
static bool
resp_write(struct droce_tx *tx, struct droce_qp *qp, struct rte_mbuf *m,
	   const struct droce_pkt *pkt)
{
	uint32_t flags = pkt->op->flags;
	struct droce_recv_wqe *r = NULL;
	uint8_t *dst = NULL;

	if (!resp_len_ok(tx, qp, pkt) || !resp_op_enabled(tx, qp, pkt, IBV_ACCESS_REMOTE_WRITE))
		return false;
	if (flags & DROCE_OPF_FIRST) {
		const struct droce_reth *reth = droce_pkt_hdr(m, pkt, DROCE_HDR_RETH);

		qp->resp.write_va = rte_be_to_cpu_64(reth->va);
		qp->resp.write_rkey = rte_be_to_cpu_32(reth->rkey);
		qp->resp.write_resid = rte_be_to_cpu_32(reth->len);
		qp->resp.send_offset = qp->resp.write_resid; /* byte_len of a WRITE_IMM */
		/* The whole range the RETH names, before a byte of it is
		 * written: a WRITE that runs past its region writes nothing. */
		if (qp->resp.write_resid > 0 &&
		    (dst = droce_rkey_addr(tx->mrt, qp->qpn, qp->resp.write_rkey, qp->pd_handle,
					   qp->resp.write_va, qp->resp.write_resid,
					   IBV_ACCESS_REMOTE_WRITE)) == NULL) {
			tx->rxs->rx_bad_access++;
			resp_error(tx, qp, DROCE_NAK_REM_ACCESS_ERR, pkt->psn,
				   "WRITE outside the region");
			return false;
		}
	}
	if (pkt->payload_len > qp->resp.write_resid ||
	    ((flags & DROCE_OPF_LAST) && pkt->payload_len != qp->resp.write_resid)) {
		tx->rxs->rx_bad_length++;
		resp_error(tx, qp, DROCE_NAK_INVALID_REQ, pkt->psn, "WRITE of another length than its RETH says");
		return false;
	}
	if ((flags & DROCE_OPF_IMMDT) && (r = resp_need_recv(qp, pkt)) == NULL)
		return false;
	/* Looked up again per packet after the FIRST: the region may be gone
	 * since. A FIRST's (or ONLY's) payload starts the range just looked up. */
	if (!(flags & DROCE_OPF_FIRST) &&
	    (dst = droce_rkey_addr(tx->mrt, qp->qpn, qp->resp.write_rkey, qp->pd_handle,
				   qp->resp.write_va, pkt->payload_len,
				   IBV_ACCESS_REMOTE_WRITE)) == NULL && pkt->payload_len > 0) {
		tx->rxs->rx_bad_access++;
		resp_error(tx, qp, DROCE_NAK_REM_ACCESS_ERR, pkt->psn, "WRITE outside the region");
		return false;
	}
	if (pkt->payload_len > 0) {
		droce_stage_lap(&tx->stage, DROCE_STAGE_responder);
		/* A completion for it follows at once: no waiting copy. */
		droce_payload_to_mem(tx, dst, m, pkt, r == NULL);
		droce_stage_lap(&tx->stage, DROCE_STAGE_copy);
	}
	qp->resp.in_write = !(flags & DROCE_OPF_LAST);
	qp->resp.write_va += pkt->payload_len;
	qp->resp.write_resid -= pkt->payload_len;
	if (flags & DROCE_OPF_LAST) {
		if (r != NULL)
			resp_recv_complete(qp, r, IBV_WC_SUCCESS, IBV_WC_RECV_RDMA_WITH_IMM,
					   qp->resp.send_offset, pkt, m);
		qp->resp.msn++;
	}
	return true;
}

/* Slots for READs and atomics: max_dest_rd_atomic, as the peer was told.
 * A modify in SQD may make it smaller while requests are kept: the ring
 * then keeps to its new size, the slots it still has. */
static uint32_t
resp_res_depth(struct droce_qp *qp)
{
	uint32_t depth = RTE_MIN(RTE_MAX(qp->attr.max_dest_rd_atomic, 1), DROCE_MAX_RD_ATOMIC);

	if (unlikely(qp->resp.res_next >= depth))
		qp->resp.res_next = 0;
	if (unlikely(qp->resp.res_count > depth))
		qp->resp.res_count = depth;
	if (unlikely(qp->resp.res_scan > qp->resp.res_count))
		qp->resp.res_scan = qp->resp.res_count;
	return depth;
}

/* The slot of the @p i-th newest READ/atomic resource (@p i below
 * res_count; a slot in the ring whatever @p i is). The ring wraps by a
 * comparison: its depth is any number up to DROCE_MAX_RD_ATOMIC, and a
 * division per slot, for each slot scanned in every engine turn of a QP,
 * cost a READ responder some 25 cycles per request. */
static struct droce_read_res *
resp_res_at(struct droce_qp *qp, uint32_t i)
{
	uint32_t depth = resp_res_depth(qp), back = RTE_MIN(i + 1, depth);

	return &qp->resp.res[qp->resp.res_next >= back ? qp->resp.res_next - back :
			     qp->resp.res_next + depth - back];
}

/*
 * The slot for a new READ or atomic: the oldest one, as in rxe. A
 * requester that keeps to max_rd_atomic no longer needs it (a duplicate
 * READ may have restarted it, which is why a still-pending oldest slot is
 * no reason to refuse the new request).
 */
static struct droce_read_res *
resp_res_alloc(struct droce_qp *qp)
{
	struct droce_read_res *res;

	resp_res_depth(qp);
	res = &qp->resp.res[qp->resp.res_next];
	memset(res, 0, sizeof(*res));
	return res;
}

static void
resp_res_commit(struct droce_qp *qp, struct droce_read_res *res)
{
	uint32_t depth = resp_res_depth(qp);

	res->pending = true;
	if (++qp->resp.res_next == depth)
		qp->resp.res_next = 0;
	if (qp->resp.res_count < depth)
		qp->resp.res_count++;
	if (qp->resp.res_scan < qp->resp.res_count)
		qp->resp.res_scan++;
}

static bool
resp_read(struct droce_tx *tx, struct droce_qp *qp, struct rte_mbuf *m,
	  const struct droce_pkt *pkt)
{
	const struct droce_reth *reth = droce_pkt_hdr(m, pkt, DROCE_HDR_RETH);
	uint64_t va = rte_be_to_cpu_64(reth->va);
	uint32_t rkey = rte_be_to_cpu_32(reth->rkey);
	uint32_t len = rte_be_to_cpu_32(reth->len);
	uint32_t npkts = len == 0 ? 1 : droce_qp_mtu_pkts(qp, len + qp->mtu - 1);
	struct droce_read_res *res;

	/* No message is longer than 2^31 bytes (IBA 9.4.4). */
	if (len > DROCE_MAX_MSG_LEN) {
		tx->rxs->rx_bad_length++;
		resp_error(tx, qp, DROCE_NAK_INVALID_REQ, pkt->psn, "READ longer than 2^31 bytes");
		return false;
	}
	if (!resp_op_enabled(tx, qp, pkt, IBV_ACCESS_REMOTE_READ))
		return false;
	if (len > 0 && droce_rkey_addr(tx->mrt, qp->qpn, rkey, qp->pd_handle, va, len,
				       IBV_ACCESS_REMOTE_READ) == NULL) {
		tx->rxs->rx_bad_access++;
		resp_error(tx, qp, DROCE_NAK_REM_ACCESS_ERR, pkt->psn, "READ outside the region");
		return false;
	}
	res = resp_res_alloc(qp);
	res->atomic = false;
	res->psn = res->start_psn = res->cur_psn = pkt->psn;
	res->last_psn = droce_psn_add(pkt->psn, npkts - 1);
	res->orig_va = res->va = va;
	res->rkey = rkey;
	res->pd_handle = qp->pd_handle;
	res->total = res->resid = len;
	res->msn = ++qp->resp.msn;
	resp_res_commit(qp, res);
	/* The responses use the PSNs up to last_psn: the next request follows. */
	qp->resp.epsn = res->last_psn;
	return true;
}

static bool
resp_atomic(struct droce_tx *tx, struct droce_qp *qp, struct rte_mbuf *m,
	    const struct droce_pkt *pkt)
{
	const struct droce_atomic_eth *a = droce_pkt_hdr(m, pkt, DROCE_HDR_ATMETH);
	uint64_t va = rte_be_to_cpu_64(a->va);
	struct droce_read_res *res;
	uint64_t *p;

	if (!resp_op_enabled(tx, qp, pkt, IBV_ACCESS_REMOTE_ATOMIC))
		return false;
	if ((va & 7) != 0) {
		tx->rxs->rx_misaligned_atomic++;
		resp_error(tx, qp, DROCE_NAK_INVALID_REQ, pkt->psn, "unaligned atomic");
		return false;
	}
	p = (uint64_t *)droce_rkey_addr(tx->mrt, qp->qpn, rte_be_to_cpu_32(a->rkey),
					qp->pd_handle, va, sizeof(uint64_t),
					IBV_ACCESS_REMOTE_ATOMIC);
	if (p == NULL) {
		tx->rxs->rx_bad_access++;
		resp_error(tx, qp, DROCE_NAK_REM_ACCESS_ERR, pkt->psn, "atomic outside the region");
		return false;
	}
	res = resp_res_alloc(qp);
	if ((pkt->opcode & DROCE_OP_MASK) == DROCE_OP_CMP_SWAP) {
		uint64_t expect = rte_be_to_cpu_64(a->compare);

		__atomic_compare_exchange_n(p, &expect, rte_be_to_cpu_64(a->swap_add), false,
					    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
		res->atomic_orig = expect;
	} else {
		res->atomic_orig = __atomic_fetch_add(p, rte_be_to_cpu_64(a->swap_add),
						      __ATOMIC_SEQ_CST);
	}
	res->atomic = true;
	res->psn = res->start_psn = res->cur_psn = res->last_psn = pkt->psn;
	res->msn = ++qp->resp.msn;
	resp_res_commit(qp, res);
	return true;
}

/*
 * A request we have seen before. SENDs and WRITEs are acknowledged again;
 * a READ is answered again from the duplicate PSN on; an atomic gets its
 * saved result, and is not executed a second time.
 */
static void
resp_duplicate(struct droce_qp *qp, const struct droce_pkt *pkt)
{
	uint32_t flags = pkt->op->flags;
	uint32_t i;

	qp->stats.duplicates++;
	if (!(flags & (DROCE_OPF_READ | DROCE_OPF_ATOMIC))) {
		qp->resp.ack_pending = true;
		return;
	}
	for (i = 0; i < qp->resp.res_count; i++) {
		struct droce_read_res *res = resp_res_at(qp, i);
		uint32_t skip;

		if (droce_psn_diff(pkt->psn, res->psn) < 0 ||
		    droce_psn_diff(pkt->psn, res->last_psn) > 0)
			continue;
		if (res->atomic != !!(flags & DROCE_OPF_ATOMIC))
			return;
		skip = (uint32_t)droce_psn_diff(pkt->psn, res->psn);
		/* Answered as a new READ of the rest: FIRST (or ONLY) again,
		 * as IBA 9.7.5.1.4 wants and rxe does. */
		res->start_psn = res->cur_psn = pkt->psn;
		res->va = res->orig_va + (uint64_t)skip * qp->mtu;
		res->resid = res->total - RTE_MIN(res->total, skip * qp->mtu);
		res->pending = true;
		qp->resp.res_scan = RTE_MAX(qp->resp.res_scan, i + 1);
		return;
	}
	DROCE_LOG(DEBUG, "QP 0x%x: duplicate %s at PSN 0x%x matches no kept request", qp->qpn,
		  pkt->op->name, pkt->psn);
}

/*
 * A UD SEND: one packet, one receive. The receive buffer starts with the
 * 40 bytes of the GRH: for RoCEv2 over IPv4 the IPv4 header sits in its
 * last 20 bytes (the first 20 are zero), over IPv6 it is the IPv6 header,
 * as rxe and RoCE NICs deliver it and ibv_init_ah_from_wc() expects.
 */
static void
resp_ud(struct droce_tx *tx, struct droce_qp *qp, struct rte_mbuf *m,
	const struct droce_pkt *pkt)
{
	uint8_t grh[40] = { 0 };
	struct droce_recv_wqe *r;
	enum ibv_wc_status st = IBV_WC_SUCCESS;

	if (pkt->payload_len > qp->mtu) {
		tx->rxs->rx_bad_length++;
		qp->stats.dropped++;
		return;
	}
	/* UD has no RNR: with no receive posted (or no CQ room) the datagram is lost. */
	r = droce_cq_space(qp->rcq) > 0 ? droce_recv_claim(qp) : NULL;
	if (r == NULL) {
		tx->rxs->rx_ud_no_recv++;
		qp->stats.dropped++;
		return;
	}
	/* The IP header is in the first segment: droce_pkt_parse() checked. */
	if (pkt->ipv6)
		memcpy(grh, rte_pktmbuf_mtod_offset(m, void *, pkt->l3_off), sizeof(grh));
	else
		memcpy(grh + 20, rte_pktmbuf_mtod_offset(m, void *, pkt->l3_off), 20);
	if (droce_sge_copy(tx->mrt, qp->pd_handle, r->sge, r->num_sge, 0, grh, sizeof(grh),
			   true) != 0 ||
	    droce_payload_to_sge(tx, qp->pd_handle, r->sge, r->num_sge, sizeof(grh), m, pkt,
				 false) != 0) {
		tx->rxs->rx_recv_too_small++;
		st = IBV_WC_LOC_LEN_ERR;
	}
	resp_recv_complete(qp, r, st, IBV_WC_RECV, sizeof(grh) + pkt->payload_len, pkt, m);
}

/*
 * An XRC target QP receives into the SRQ each packet names, and checks
 * memory against that SRQ's PD. An SRQ of another XRC domain (or none),
 * or another SRQ than the one a message under way lands in, is an
 * invalid request. Only a packet that starts a message binds the QP to
 * its SRQ, so no duplicate or stray packet moves a message elsewhere.
 * @return false when the packet was refused.
 */
static bool
resp_xrc_srq(struct droce_tx *tx, struct droce_qp *qp, struct rte_mbuf *m,
	     const struct droce_pkt *pkt)
{
	const struct droce_xrceth *x = droce_pkt_hdr(m, pkt, DROCE_HDR_XRCETH);
	struct droce_srq *srq = droce_num_table_lookup(tx->srqt, droce_get24(x->srqn));

	if (srq == NULL || srq->type != IBV_SRQT_XRC || srq->xrcd != qp->xrcd ||
	    srq->cq == NULL ||
	    ((qp->resp.in_send || qp->resp.in_write) && srq != qp->srq)) {
		tx->rxs->rx_bad_xrc_srq++;
		qp->stats.dropped++;
		resp_error(tx, qp, DROCE_NAK_INVALID_REQ, pkt->psn, "no XRC SRQ of this domain with that number");
		return false;
	}
	qp->srq = srq;
	qp->rcq = srq->cq;
	qp->pd_handle = srq->pd_handle;
	return true;
}

/*
 * A request that breaks the opcode sequence (IBA 9.8.3.1): an RC or XRC
 * responder refuses it (NAK invalid request, QP to error). A UC responder
 * drops the message under way (its receive is kept for the next one) and
 * takes the packet if it starts a new message.
 * @return true when the packet goes on to be handled.
 */
static bool
resp_bad_sequence(struct droce_tx *tx, struct droce_qp *qp, const struct droce_pkt *pkt)
{
	tx->rxs->rx_bad_opcode_seq++;
	if (qp->type != IBV_QPT_UC) {
		resp_error(tx, qp, DROCE_NAK_INVALID_REQ, pkt->psn, "opcode out of sequence");
		return false;
	}
	qp->resp.in_send = qp->resp.in_write = false;
	if (!(pkt->op->flags & DROCE_OPF_FIRST)) {
		qp->stats.dropped++;
		return false;
	}
	return true;
}

void
droce_resp_rx(struct droce_tx *tx, struct droce_qp *qp, struct rte_mbuf *m,
	      const struct droce_pkt *pkt)
{
	uint32_t flags = pkt->op->flags;
	bool reliable = qp->type != IBV_QPT_UC;
	int32_t diff;
	bool ok;

	if (qp->type == IBV_QPT_UD) {
		resp_ud(tx, qp, m, pkt);
		return;
	}
	diff = droce_psn_diff(pkt->psn, qp->resp.epsn);
	if (diff < 0 && reliable) {
		resp_duplicate(qp, pkt);
		return;
	}
	if (diff != 0) {
		if (!reliable) {
			/* UC: a lost packet loses its message; resume at the next FIRST/ONLY. */
			qp->resp.in_send = qp->resp.in_write = false;
			qp->resp.epsn = pkt->psn;
			if (!(flags & DROCE_OPF_FIRST)) {
				qp->stats.dropped++;
				return;
			}
		} else {
			/* One NAK per gap: the requester goes back to epsn. */
			if (!qp->resp.nak_sent) {
				qp->resp.nak_sent = true;
				qp->stats.seq_naks_sent++;
				resp_nak(qp, DROCE_AETH_NAK | DROCE_NAK_PSN_SEQ_ERR, qp->resp.epsn);
			}
			return;
		}
	}
	qp->resp.nak_sent = false;
	if (!droce_rx_resp_seq_ok(qp, pkt) && !resp_bad_sequence(tx, qp, pkt))
		return;
	if (qp->type == IBV_QPT_XRC_RECV && !resp_xrc_srq(tx, qp, m, pkt))
		return;
	if (flags & DROCE_OPF_SEND)
		ok = resp_send(tx, qp, m, pkt);
	else if (flags & DROCE_OPF_WRITE)
		ok = resp_write(tx, qp, m, pkt);
	else if (flags & DROCE_OPF_READ)
		ok = resp_read(tx, qp, m, pkt);
	else
		ok = resp_atomic(tx, qp, m, pkt);
	if (!ok) {
		if (!reliable)
			qp->resp.in_send = qp->resp.in_write = false;
		return;
	}
	qp->resp.epsn = droce_psn_add(qp->resp.epsn, 1);
	if (reliable && droce_bth_ackreq(droce_pkt_hdr(m, pkt, DROCE_HDR_BTH)) &&
	    !(flags & (DROCE_OPF_READ | DROCE_OPF_ATOMIC)))
		qp->resp.ack_pending = true;
}

/* An ACK, NAK or RNR NAK. @return false when no packet could be built. */
static bool
resp_send_ack(struct droce_tx *tx, struct droce_qp *qp, uint8_t syndrome, uint32_t psn)
{
	struct rte_mbuf *m = droce_tx_start(tx, qp, &qp->av, droce_qp_service(qp) | DROCE_OP_ACK, 0,
					    qp->attr.dest_qp_num, psn, false, false);

	if (m == NULL)
		return false;
	droce_aeth_set((struct droce_aeth *)droce_tx_cur(tx, DROCE_HDR_AETH), syndrome,
		       qp->resp.msn);
	droce_tx_finish(tx, m);
	qp->stats.tx_pkts++;
	return true;
}

/* The next packet of a READ response or an atomic ACK. */
static bool
resp_send_response(struct droce_tx *tx, struct droce_qp *qp, struct droce_read_res *res)
{
	uint8_t syn = DROCE_AETH_ACK | DROCE_AETH_CREDIT_INVALID;
	struct rte_mbuf *m;
	uint8_t opcode;
	uint32_t seg;
	bool first, last;

	if (res->atomic) {
		m = droce_tx_start(tx, qp, &qp->av, droce_qp_service(qp) | DROCE_OP_ATOMIC_ACK, 0,
				   qp->attr.dest_qp_num, res->psn, false, false);
		if (m == NULL)
			return false;
		droce_aeth_set((void *)droce_tx_cur(tx, DROCE_HDR_AETH), syn, res->msn);
		((struct droce_atomic_ack_eth *)droce_tx_cur(tx, DROCE_HDR_ATMACK))->orig =
			rte_cpu_to_be_64(res->atomic_orig);
		droce_tx_finish(tx, m);
		res->pending = false;
		return true;
	}
	seg = RTE_MIN(qp->mtu, res->resid);
	first = res->cur_psn == res->start_psn;
	last = seg == res->resid;
	opcode = first && last ? DROCE_OP_READ_RESP_ONLY : first ? DROCE_OP_READ_RESP_FIRST :
		 last ? DROCE_OP_READ_RESP_LAST : DROCE_OP_READ_RESP_MIDDLE;
	m = droce_tx_start(tx, qp, &qp->av, droce_qp_service(qp) | opcode, seg, qp->attr.dest_qp_num,
			   res->cur_psn, false, false);
	if (m == NULL)
		return false;
	if (droce_opcode_table[opcode].off[DROCE_HDR_AETH])
		droce_aeth_set((void *)droce_tx_cur(tx, DROCE_HDR_AETH), syn, res->msn);
	if (seg > 0) {
		/* Looked up again per packet: the region may be gone since the
		 * request. A duplicate READ answered again references it anew. */
		if (droce_tx_payload_rkey(tx, m, qp, res->rkey, res->pd_handle, res->va,
					  seg) != 0) {
			rte_pktmbuf_free(m);
			res->pending = false;
			tx->rxs->rx_bad_access++;
			resp_error(tx, qp, DROCE_NAK_REM_ACCESS_ERR, res->cur_psn, "region gone while answering a READ");
			return true;
		}
	}
	droce_tx_finish(tx, m);
	qp->stats.tx_pkts++;
	res->va += seg;
	res->resid -= seg;
	res->cur_psn = droce_psn_add(res->cur_psn, 1);
	res->pending = !last;
	return true;
}

/*
 * ACKs coalesced across receive bursts while a stream goes on (the IBA
 * lets a responder acknowledge any number of requests with one ACK of the
 * newest). One per burst is what the engine does anyway; when the burst
 * came back full, more requests wait on the port, and an ACK owed waits
 * one iteration to cover those too, up to DROCE_RESP_ACK_EVERY packets
 * since the last ACK. It waits again only if the QP took requests in
 * the meantime: the first iteration whose burst is not full, or that took
 * none of the QP's (its stream stopped, and its requester may wait on
 * this ACK), sends it; so does every path but this one (a QP in error or
 * being destroyed). A NAK never waits.
 */
static inline bool
resp_ack_waits(const struct droce_tx *tx, struct droce_qp *qp)
{
	if (tx->rx_full_at != tx->now || !qp->resp.ack_pending || qp->resp.pending_syndrome != 0 ||
	    qp->resp.epsn == qp->resp.ack_wait_psn ||
	    droce_psn_diff(qp->resp.epsn, qp->resp.acked_psn) >= DROCE_RESP_ACK_EVERY)
		return false;
	qp->resp.ack_wait_psn = qp->resp.epsn;
	return true;
}

bool
droce_resp_run(struct droce_tx *tx, struct droce_qp *qp)
{
	if (qp->type == IBV_QPT_UC || qp->type == IBV_QPT_UD)
		return false;
	/* Responses first, oldest first: an ACK must not overtake READ data
	 * that comes before it. Only the slots that may have some are looked
	 * at (a QP serves its responder in every engine turn, and each slot
	 * is a cache line of its own). */
	for (uint32_t i = qp->resp.res_scan; i-- > 0;) {
		struct droce_read_res *res = resp_res_at(qp, i);

		while (res->pending) {
			if (!resp_send_response(tx, qp, res)) {
				qp->resp.res_scan = i + 1;
				return true;
			}
		}
	}
	qp->resp.res_scan = 0;
	if (resp_ack_waits(tx, qp))
		return true;
	return droce_resp_send_owed(tx, qp);
}

bool
droce_resp_send_owed(struct droce_tx *tx, struct droce_qp *qp)
{
	if (qp->type == IBV_QPT_UC || qp->type == IBV_QPT_UD || !qp->av.routed)
		return false;
	if (qp->resp.pending_syndrome != 0) {
		if (!resp_send_ack(tx, qp, qp->resp.pending_syndrome, qp->resp.pending_psn))
			return true;
		qp->resp.pending_syndrome = 0;
	}
	if (qp->resp.ack_pending) {
		if (!resp_send_ack(tx, qp, DROCE_AETH_ACK | DROCE_AETH_CREDIT_INVALID,
				   droce_psn_add(qp->resp.epsn, DROCE_PSN_MASK)))
			return true;
		qp->resp.ack_pending = false;
		qp->resp.acked_psn = qp->resp.epsn;
	}
	return false;
}
