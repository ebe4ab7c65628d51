/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The responder's runs of requests (droce_transport.h): a long WRITE's
 * MIDDLE packets, what its bandwidth is made of, and small messages one
 * after the other, WRITEs or SENDs, what a message rate is made of.
 * droce_resp_rx() checks every one of them against the QP (its state, the
 * opcode sequence, the length, the rights), then lands its payload and
 * moves the QP on; for a run of them in one burst the checks that are the
 * same for all are made once, and per packet only the ICRC is checked (by
 * the engine), the packet's own part taken (a WRITE ONLY packet's RETH
 * and region, a SEND's receive) and the payload copied. Any packet a
 * check would treat differently ends the run before it, and goes to
 * droce_resp_rx(), which deals with it as always.
 */
#include "droce_mw.h"
#include "droce_transport.h"

/* The run's kind a packet of @p opcode (without its service) starts, or
 * -1 when it starts none: one for each of DROCE_RX_RUN_OPCODES. */
static int
run_kind(uint8_t opcode)
{
	switch (opcode & DROCE_OP_MASK) {
	case DROCE_OP_WRITE_MIDDLE:
		return DROCE_RUN_WRITE_MIDDLE;
	case DROCE_OP_WRITE_ONLY:
		return DROCE_RUN_WRITE_ONLY;
	case DROCE_OP_SEND_ONLY:
	case DROCE_OP_SEND_ONLY_IMM:
		return DROCE_RUN_SEND_ONLY;
	default:
		return -1;
	}
}

/* Is @p pkt the next packet of a run whose first is @p first, at @p psn?
 * A MIDDLE packet holds one MTU (@p mtu), a message's only one at most one. */
static bool
run_goes_on(struct rte_mbuf *m, const struct droce_pkt *pkt, const struct droce_pkt *first,
	    rte_be16_t pkey, uint32_t psn, uint32_t mtu, bool middle)
{
	const struct droce_bth *bth = droce_pkt_hdr(m, pkt, DROCE_HDR_BTH);

	return pkt->qpn == first->qpn && pkt->opcode == first->opcode && pkt->psn == psn &&
	       (middle ? pkt->payload_len == mtu : pkt->payload_len <= mtu) &&
	       (pkt->tclass & 0x3u) != 0x3u && bth->pkey == pkey;
}

/* Does @p qp take a run of @p kind now? Where it is in its messages
 * (droce_rx_resp_seq_ok()): a MIDDLE packet goes on with a WRITE, a
 * message's only packet comes between messages; and its rights. */
static bool
run_takes(const struct droce_qp *qp, int kind)
{
	switch (kind) {
	case DROCE_RUN_WRITE_MIDDLE:
		return qp->resp.in_write && (qp->attr.qp_access_flags & IBV_ACCESS_REMOTE_WRITE);
	case DROCE_RUN_WRITE_ONLY:
		return !qp->resp.in_write && !qp->resp.in_send &&
		       (qp->attr.qp_access_flags & IBV_ACCESS_REMOTE_WRITE);
	default:
		return !qp->resp.in_write && !qp->resp.in_send;
	}
}

unsigned
droce_resp_rx_run_start(struct droce_tx *tx, struct droce_qp *qp, struct rte_mbuf *const *pkts,
			unsigned n, struct droce_rx_run *run)
{
	const struct droce_pkt *first = droce_pkt_of(pkts[0]);
	const struct droce_bth *bth = droce_pkt_hdr(pkts[0], first, DROCE_HDR_BTH);
	int kind = run_kind(first->opcode);
	bool middle = kind == DROCE_RUN_WRITE_MIDDLE;
	uint32_t psn = qp->resp.epsn, mtu = qp->mtu, bytes = 0;
	unsigned k;

	/* What droce_rx_check() and the engine check of the first (the first
	 * packet in RTR raises an event), and what droce_resp_rx() checks of
	 * every packet of its kind but its own part. */
	if (kind < 0 || (first->opcode & DROCE_SVC_MASK) != droce_qp_service(qp) ||
	    (qp->type != IBV_QPT_RC && qp->type != IBV_QPT_UC) || !run_takes(qp, kind) ||
	    (droce_qp_state(qp) == IBV_QPS_RTR && !qp->resp.comm_est) ||
	    !droce_rx_acceptable(tx, qp, pkts[0], first))
		return 0;
	/* From the expected PSN on, the others as the first: the same opcode
	 * and P_Key pass the same validity check (droce_rx_acceptable()). A
	 * packet marked CE goes alone: it asks for a CNP. No MIDDLE run is
	 * longer than what is left of its WRITE; the packet that would not
	 * fit goes alone and is refused. */
	n = RTE_MIN(n, (unsigned)DROCE_RX_RUN_MAX);
	for (k = 0; k < n; k++) {
		if ((middle && bytes + mtu > qp->resp.write_resid) ||
		    !run_goes_on(pkts[k], droce_pkt_of(pkts[k]), first, bth->pkey, psn, mtu, middle))
			break;
		bytes += mtu;
		psn = droce_psn_add(psn, 1);
	}
	run->n = 0;
	run->ackreq = false;
	run->solicited = false;
	run->kind = (uint8_t)kind;
	run->dst = NULL;
	run->mr = NULL;
	/* A message alone shares no check with another: it goes the general
	 * way, as fast. */
	if (!middle)
		return k >= 2 ? k : 0;
	if (k == 0)
		return 0;
	/* The region takes the whole run now, as it would take each packet:
	 * one that went away since the WRITE began is found gone either way,
	 * and none can go during the engine's iteration. */
	run->dst = droce_rkey_addr(tx->mrt, qp->qpn, qp->resp.write_rkey, qp->pd_handle,
				   qp->resp.write_va, bytes, IBV_ACCESS_REMOTE_WRITE);
	return run->dst != NULL ? k : 0;
}

/* Where a WRITE ONLY packet's payload goes, or NULL when resp_write()
 * would refuse it: the whole message, a range its region takes. The RETH
 * is read only now, the ICRC checked. */
static uint8_t *
run_write_dst(struct droce_tx *tx, const struct droce_qp *qp, struct droce_rx_run *run,
	      struct rte_mbuf *m, const struct droce_pkt *pkt)
{
	const struct droce_reth *reth = droce_pkt_hdr(m, pkt, DROCE_HDR_RETH);
	uint32_t rkey = rte_be_to_cpu_32(reth->rkey);
	uint64_t va = rte_be_to_cpu_64(reth->va);

	if (rte_be_to_cpu_32(reth->len) != pkt->payload_len)
		return NULL;
	/* A run's WRITEs mostly name one region: its lookup, a chain of
	 * dependent loads, once. Its bounds, PD and rights are checked
	 * for every packet. */
	if (run->mr == NULL || rkey != run->rkey) {
		if (droce_key_is_mw(rkey))
			return droce_mw_addr(tx->mrt, qp->qpn, rkey, qp->pd_handle, va,
					     pkt->payload_len, IBV_ACCESS_REMOTE_WRITE);
		run->mr = droce_mr_lookup(tx->mrt, rkey);
		run->rkey = rkey;
	}
	return droce_mr_addr(run->mr, qp->pd_handle, va, pkt->payload_len, IBV_ACCESS_REMOTE_WRITE);
}

/* A SEND ONLY packet's receive, claimed, and where its payload goes
 * (@p dst; NULL for no payload). @return false when resp_send() would not
 * take it as simply: no room for its completion, no receive (an RNR NAK),
 * a receive that is not one SGE that holds it (checked as
 * droce_sge_copy() checks it). */
static bool
run_send_claim(struct droce_tx *tx, struct droce_qp *qp, const struct droce_rx_run *run,
	       const struct droce_pkt *pkt, struct droce_recv_wqe **r, uint8_t **dst)
{
	/* The run's completions are not in the CQ yet. */
	if (droce_cq_space(qp->rcq) <= run->n || (*r = droce_recv_claim(qp)) == NULL)
		return false;
	if (pkt->payload_len == 0)
		return true;
	*dst = droce_sge_one_addr(tx->mrt, qp->pd_handle, (*r)->sge, (*r)->num_sge, 0,
				  pkt->payload_len, IBV_ACCESS_LOCAL_WRITE);
	return *dst != NULL;
}

bool
droce_resp_rx_run_frame(struct droce_tx *tx, struct droce_qp *qp, struct droce_rx_run *run,
			struct rte_mbuf *m)
{
	const struct droce_pkt *pkt = droce_pkt_of(m);
	const struct droce_bth *bth = droce_pkt_hdr(m, pkt, DROCE_HDR_BTH);
	struct droce_recv_wqe *r = NULL;
	uint8_t *dst = run->dst;

	switch (run->kind) {
	case DROCE_RUN_WRITE_ONLY:
		/* A message of no bytes names no memory (resp_write() as well). */
		if (pkt->payload_len > 0 && (dst = run_write_dst(tx, qp, run, m, pkt)) == NULL)
			return false;
		break;
	case DROCE_RUN_SEND_ONLY:
		if (!run_send_claim(tx, qp, run, pkt, &r, &dst))
			return false;
		break;
	default:
		break;
	}
	run->ackreq |= droce_bth_ackreq(bth);
	/* A completion, if any, shows only as the run ends: the copy may
	 * wait for the next frame. */
	if (pkt->payload_len > 0)
		droce_payload_to_mem(tx, dst, m, pkt, true);
	if (run->kind == DROCE_RUN_WRITE_MIDDLE) {
		run->dst = dst + pkt->payload_len;
	} else if (run->kind == DROCE_RUN_SEND_ONLY) {
		droce_resp_recv_wc(qp, r, IBV_WC_SUCCESS, IBV_WC_RECV, pkt->payload_len, pkt, m,
				   &run->wc[run->n]);
		qp->resp.has_wqe = false;
		run->solicited |= droce_bth_se(bth);
	}
	run->n++;
	return true;
}

void
droce_resp_rx_run_end(struct droce_tx *tx, struct droce_qp *qp, struct droce_rx_run *run)
{
	if (run->n == 0)
		return;
	tx->rxs->rx_run_pkts += run->n;
	qp->resp.nak_sent = false;
	if (run->kind == DROCE_RUN_WRITE_MIDDLE) {
		uint32_t bytes = run->n * qp->mtu;

		qp->resp.write_va += bytes;
		qp->resp.write_resid -= bytes;
	} else {
		/* Each a message. What resp_write() and resp_send() keep of a
		 * message under way (a WRITE's address, key and what is left,
		 * a SEND's offset) means nothing once it ended: the next FIRST
		 * or ONLY sets it again. */
		qp->resp.msn += run->n;
	}
	if (run->kind == DROCE_RUN_SEND_ONLY) {
		/* Every byte in place before a completion shows. */
		droce_side_copy_run(&tx->rx_copy);
		droce_cq_push_burst(qp->rcq, run->wc, run->n, run->solicited);
	}
	qp->resp.epsn = droce_psn_add(qp->resp.epsn, run->n);
	if (run->ackreq && qp->type != IBV_QPT_UC)
		qp->resp.ack_pending = true;
}
