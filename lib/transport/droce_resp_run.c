/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The responder's runs of WRITE packets (droce_transport.h): a long
 * WRITE's MIDDLE packets, what its bandwidth is made of, and small WRITE
 * ONLY messages one after the other, what a message rate is made of.
 * droce_resp_rx() checks every one of them against the QP (its state, the
 * opcode sequence, the length, the rights, the region), then copies its
 * payload and moves the QP on; for a run of them in one burst the checks
 * that are the same for all are made once, and per packet only the ICRC
 * is checked (by the engine), an ONLY packet's RETH checked, and the
 * payload copied. Any packet a check would treat differently ends the run
 * before it, and goes to droce_resp_rx(), which deals with it as always.
 */
#include "droce_mw.h"
#include "droce_transport.h"

/* Is @p pkt the next packet of a run whose first is @p first, at @p psn?
 * A MIDDLE packet holds one MTU (@p mtu), an ONLY packet at most one. */
static bool
run_goes_on(struct rte_mbuf *m, const struct droce_pkt *pkt, const struct droce_pkt *first,
	    rte_be16_t pkey, uint32_t psn, uint32_t mtu, bool only)
{
	const struct droce_bth *bth = droce_pkt_hdr(m, pkt, DROCE_HDR_BTH);

	return pkt->qpn == first->qpn && pkt->opcode == first->opcode && pkt->psn == psn &&
	       (only ? pkt->payload_len <= mtu : pkt->payload_len == mtu) &&
	       (pkt->tclass & 0x3u) != 0x3u && bth->pkey == pkey;
}

unsigned
droce_resp_write_run_start(struct droce_tx *tx, struct droce_qp *qp,
			   struct rte_mbuf *const *pkts, unsigned n, struct droce_write_run *run)
{
	const struct droce_pkt *first = droce_pkt_of(pkts[0]);
	const struct droce_bth *bth = droce_pkt_hdr(pkts[0], first, DROCE_HDR_BTH);
	bool only = (first->opcode & DROCE_OP_MASK) == DROCE_OP_WRITE_ONLY;
	uint32_t psn = qp->resp.epsn, mtu = qp->mtu, bytes = 0;
	unsigned k;

	/* Where the QP is in its messages (droce_rx_resp_seq_ok()): a MIDDLE
	 * packet goes on with a WRITE, an ONLY packet comes between messages.
	 * What droce_rx_check() and the engine check of the first (the first
	 * packet in RTR raises an event), and what resp_write() checks of
	 * every packet of its kind but its RETH. */
	if (first->opcode != (droce_qp_service(qp) |
			      (only ? DROCE_OP_WRITE_ONLY : DROCE_OP_WRITE_MIDDLE)) ||
	    (qp->type != IBV_QPT_RC && qp->type != IBV_QPT_UC) ||
	    (only ? qp->resp.in_write || qp->resp.in_send : !qp->resp.in_write) ||
	    (droce_qp_state(qp) == IBV_QPS_RTR && !qp->resp.comm_est) ||
	    !(qp->attr.qp_access_flags & IBV_ACCESS_REMOTE_WRITE) ||
	    !droce_rx_acceptable(tx, qp, pkts[0], first))
		return 0;
	/* From the expected PSN on, the others as the first: the same opcode
	 * and P_Key pass the same validity check (droce_rx_acceptable()). A
	 * packet marked CE goes alone: it asks for a CNP. No MIDDLE run is
	 * longer than what is left of its WRITE; the packet that would not
	 * fit goes alone and is refused. */
	for (k = 0; k < n; k++) {
		if ((!only && bytes + mtu > qp->resp.write_resid) ||
		    !run_goes_on(pkts[k], droce_pkt_of(pkts[k]), first, bth->pkey, psn, mtu, only))
			break;
		bytes += mtu;
		psn = droce_psn_add(psn, 1);
	}
	run->n = 0;
	run->ackreq = false;
	run->only = only;
	run->dst = NULL;
	/* A message alone shares no check with another: it goes the general
	 * way, as fast. */
	if (only)
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

bool
droce_resp_write_run_frame(struct droce_tx *tx, struct droce_qp *qp,
			   struct droce_write_run *run, struct rte_mbuf *m)
{
	const struct droce_pkt *pkt = droce_pkt_of(m);
	uint8_t *dst = run->dst;

	if (run->only) {
		const struct droce_reth *reth = droce_pkt_hdr(m, pkt, DROCE_HDR_RETH);

		/* The whole message, and a range its region takes; a message of
		 * no bytes names no memory (resp_write() as well). */
		if (rte_be_to_cpu_32(reth->len) != pkt->payload_len)
			return false;
		if (pkt->payload_len > 0 &&
		    (dst = droce_rkey_addr(tx->mrt, qp->qpn, rte_be_to_cpu_32(reth->rkey),
					   qp->pd_handle, rte_be_to_cpu_64(reth->va),
					   pkt->payload_len, IBV_ACCESS_REMOTE_WRITE)) == NULL)
			return false;
	}
	run->ackreq |= droce_bth_ackreq(droce_pkt_hdr(m, pkt, DROCE_HDR_BTH));
	/* No completion follows: the copy may wait for the next frame. */
	if (pkt->payload_len > 0)
		droce_payload_to_mem(tx, dst, m, pkt, true);
	if (!run->only)
		run->dst = dst + pkt->payload_len;
	run->n++;
	return true;
}

void
droce_resp_write_run_end(struct droce_tx *tx, struct droce_qp *qp,
			 const struct droce_write_run *run)
{
	uint32_t bytes = run->n * qp->mtu;

	if (run->n == 0)
		return;
	tx->rxs->rx_run_pkts += run->n;
	qp->resp.nak_sent = false;
	if (run->only) {
		/* Each a message. What resp_write() keeps of a WRITE under way
		 * (its address, key and what is left) means nothing once it
		 * ended: the next FIRST or ONLY sets it again. */
		qp->resp.msn += run->n;
	} else {
		qp->resp.write_va += bytes;
		qp->resp.write_resid -= bytes;
	}
	qp->resp.epsn = droce_psn_add(qp->resp.epsn, run->n);
	if (run->ackreq && qp->type != IBV_QPT_UC)
		qp->resp.ack_pending = true;
}
