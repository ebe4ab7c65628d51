/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The completer: ACKs, NAKs and responses from the peer's responder turn
 * send WQEs into completions, in posting order. A response also
 * acknowledges, implicitly, every request sent before it.
 */
#include <string.h>

#include <rte_cycles.h>

#include "droce_transport.h"
#include "droce_req_priv.h"
#include "droce_sq_quiet.h"

static enum ibv_wc_opcode
wc_opcode(uint32_t wr_opcode)
{
	switch (wr_opcode) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		return IBV_WC_RDMA_WRITE;
	case IBV_WR_RDMA_READ:
		return IBV_WC_RDMA_READ;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
		return IBV_WC_COMP_SWAP;
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		return IBV_WC_FETCH_ADD;
	case IBV_WR_BIND_MW:
		return IBV_WC_BIND_MW;
	case IBV_WR_LOCAL_INV:
		return IBV_WC_LOCAL_INV;
	default:
		return IBV_WC_SEND;
	}
}

/* The work completion for send WQE @p w ending with @p status.
 * @return false when none is due (a successful unsignaled WQE). */
static __rte_always_inline bool
send_wc(const struct droce_qp *qp, const struct droce_send_wqe *w, enum ibv_wc_status status,
	struct ibv_wc *wc)
{
	if (status == IBV_WC_SUCCESS && !qp->sq_sig_all &&
	    !(w->send_flags & IBV_SEND_SIGNALED))
		return false;
	memset(wc, 0, sizeof(*wc));
	wc->wr_id = w->wr_id;
	wc->status = status;
	wc->opcode = wc_opcode(w->opcode);
	wc->qp_num = qp->qpn;
	if (status == IBV_WC_SUCCESS) {
		if (w->opcode == IBV_WR_RDMA_READ)
			wc->byte_len = w->length;
		else if (droce_wr_is_atomic(w->opcode))
			wc->byte_len = sizeof(uint64_t);
	}
	return true;
}

void
droce_sq_retire(struct droce_qp *qp, enum ibv_wc_status status)
{
	struct droce_send_wqe *w = droce_wq_at(&qp->sq, qp->sq.cons);
	struct ibv_wc wc;
	bool report = send_wc(qp, w, status, &wc);

	if (droce_wr_is_rd_atomic(w->opcode) && w->state != DROCE_WQE_POSTED &&
	    qp->req.rd_out > 0)
		qp->req.rd_out--;
	/* Free the slot before the completion shows: an application that
	 * posts as soon as it sees the CQE must find room. */
	__atomic_store_n(&qp->sq.cons, qp->sq.cons + 1, __ATOMIC_RELEASE);
	if (report)
		droce_cq_push(qp->scq, &wc, false);
}

/* Completions gathered per ACK and written to the CQ in one burst. */
#define COMP_BURST 32

/* Free the send queue's slots before @p cons, then show the @p n
 * completions in @p wc: an application that posts as soon as it sees a
 * completion must find room. */
static inline void
comp_publish(struct droce_qp *qp, uint32_t cons, const struct ibv_wc *wc, unsigned n)
{
	__atomic_store_n(&qp->sq.cons, cons, __ATOMIC_RELEASE);
	droce_cq_push_burst(qp->scq, wc, n, false);
}

/*
 * The WQEs from index @p i that retire without a completion: SENDs and
 * WRITEs, unsignaled, sent, acknowledged by @p psn, that failed nothing
 * and whose frames no driver holds. With post lists and selective
 * signaling they are nearly all of an ACK's. @p w0 is one such, just
 * retired. First those the requester marked quiet (droce_sq_quiet.h),
 * by their bits alone: each of one packet, the k-th after @p w0 has its
 * PSN plus k, so @p psn acknowledges as many as it is past @p w0's last.
 * Then, WQE by WQE, any other: a WQE with @p w0's opcode and flags (one
 * 8-byte compare, droce_wqe_op_word) is unsignaled and neither a READ nor
 * an atomic; one of other ones ends the run, and comp_ack_upto()'s loop,
 * which tells every case apart, takes it. The ring's fields are locals (the load of
 * a WQE's driver references orders the loads after it, so the compiler
 * would load them again per WQE) and the next WQE is a step along the
 * ring: some 19 instructions a WQE, where the loop with each check on
 * its own and the ring's index took 27 (docs/benchmarks.md, forty-fifth
 * session). Only for a QP without sq_sig_all, which an unsignaled WQE
 * says. @return the index of the first WQE that is not such, or @p next.
 */
static __rte_always_inline uint32_t
comp_skip_quiet(const struct droce_qp *qp, const struct droce_send_wqe *w0, uint32_t i,
		uint32_t next, uint32_t psn)
{
	const uint64_t op = droce_wqe_op_word(w0);
	const int32_t past = droce_psn_diff(psn, w0->last_psn);
	const uint8_t *const ring = qp->sq.buf;
	const uint32_t stride = qp->sq.stride;
	const uint8_t *const ring_end = ring + (size_t)(qp->sq.mask + 1) * stride;
	const uint8_t *p;
	uint32_t left;

	if (past > 0)
		i += droce_sq_quiet_run(qp, i, RTE_MIN(next - i, (uint32_t)past));
	p = (const uint8_t *)droce_wq_at(&qp->sq, i);
	for (left = next - i; left != 0; left--) {
		const struct droce_send_wqe *w = (const void *)p;

		if (droce_wqe_op_word(w) != op || w->error != 0 || w->state != DROCE_WQE_SENT ||
		    droce_psn_diff(w->last_psn, psn) > 0 || !droce_wqe_released(w))
			break;
		p += stride;
		if (p == ring_end)
			p = ring;
	}
	return next - left;
}

/*
 * Complete, in order, every sent WQE that @p psn acknowledges; those the
 * CQ has no room for, or whose frames a driver still holds, are retired
 * later (droce_comp_pending()). The completions go to the CQ in bursts,
 * one tail update each, and the slots are freed once per burst, not per
 * WQE: most of an ACK's WQEs are unsignaled, and only retire (a store to
 * sq.cons per WQE also made the compiler load the ring's fields again for
 * each). A READ or atomic that @p psn acknowledges lost its response (an
 * implied NAK): @return the first such WQE, else NULL.
 */
static struct droce_send_wqe *
comp_ack_upto(struct droce_qp *qp, uint32_t psn)
{
	struct ibv_wc wc[COMP_BURST];
	uint32_t room = droce_cq_space(qp->scq);
	uint32_t cons = qp->sq.cons, next = qp->req.next, i;
	struct droce_send_wqe *lost = NULL;
	bool retire = true;
	unsigned n = 0;

	/* Retiring advances cons: i follows it while WQEs retire, and goes
	 * on alone to find a READ or atomic behind one that cannot (among
	 * PSNs not acknowledged before: the rest was looked at). */
	for (i = cons; i != next; i++) {
		struct droce_send_wqe *w = droce_wq_at(&qp->sq, i);

		/* Everything before the WQE that failed locally is done: now it. */
		if (w->error != 0) {
			if (!retire)
				break;
			comp_publish(qp, cons, wc, n);
			droce_qp_fatal(qp, w->error);
			return NULL;
		}
		if (w->state != DROCE_WQE_SENT || droce_psn_diff(w->last_psn, psn) > 0)
			break;
		if (droce_wr_is_rd_atomic(w->opcode)) {
			lost = w;
			break;
		}
		/* Retried from droce_req_run() once the CQ drains, and once no
		 * frame in a TX queue points into the WQE's buffers. */
		if (!retire || room == 0 || !droce_wqe_released(w)) {
			retire = false;
			/* Below comp.psn an earlier call looked already. */
			if (droce_psn_diff(psn, qp->comp.psn) < 0)
				break;
			continue;
		}
		/* A SEND or WRITE: no READ credit to give back (droce_sq_retire()). */
		cons = i + 1;
		if (!send_wc(qp, w, IBV_WC_SUCCESS, &wc[n])) {
			/* Unsignaled: those after it most likely are too, and
			 * are taken a run at a time. A signaled WQE of its own
			 * (a latency test's) pays nothing for it. */
			cons = comp_skip_quiet(qp, w, cons, next, psn);
			i = cons - 1;
			continue;
		}
		room--;
		if (++n == COMP_BURST) {
			comp_publish(qp, cons, wc, n);
			n = 0;
		}
	}
	comp_publish(qp, cons, wc, n);
	return lost;
}

/*
 * Something not acknowledged before, up to @p psn: the retry budget is
 * whole again, a retry under way is over, the timer restarts.
 */
static void
comp_progress(struct droce_qp *qp, uint64_t now, uint32_t psn)
{
	uint32_t next = droce_psn_add(psn, 1);

	if (droce_psn_diff(next, qp->comp.psn) > 0)
		qp->comp.psn = next;
	if (droce_psn_diff(next, qp->comp.acked) > 0)
		qp->comp.acked = next;
	qp->req.retries = qp->attr.retry_cnt;
	qp->req.rnr_retries = qp->attr.rnr_retry;
	qp->req.retrying = false;
	droce_req_timer_rearm(qp, now);
}

/*
 * A sequence error (a NAK, or an implied NAK: responses past a gap, an
 * ACK past a READ or atomic that got no answer): go back and resend. As
 * the IB spec (9.7) counts them, each such go-back is one retry of
 * retry_cnt, unless the same packet brought @p progress (the budget is
 * whole then). One
 * go-back per gap: while it is under way (req.retrying), the responses
 * past the same gap, which the lost packet's successors were already
 * carrying, start none; if the resend is lost too, the ACK timer tells.
 */
static void
comp_retry(struct droce_qp *qp, bool progress)
{
	if (qp->req.retrying)
		return;
	if (!progress) {
		if (qp->req.retries == 0) {
			droce_qp_fatal(qp, IBV_WC_RETRY_EXC_ERR);
			return;
		}
		qp->req.retries--;
	}
	qp->req.retrying = true;
	qp->req.need_retry = true;
}

/* READ or atomic @p w lost its response: it is asked again from where its
 * answer stopped, which is the response expected next. */
static void
comp_lost(struct droce_qp *qp, struct droce_send_wqe *w, bool progress)
{
	qp->comp.psn = droce_req_rd_atomic_resume(qp, w);
	comp_retry(qp, progress);
}

void
droce_comp_pending(struct droce_qp *qp)
{
	uint32_t psn = droce_psn_add(qp->comp.psn, DROCE_PSN_MASK);
	const struct droce_send_wqe *w;
	struct droce_send_wqe *lost;

	/* The requester asks before each turn; as a rule the oldest WQE is
	 * not acknowledged yet, which comp_ack_upto() would find first thing
	 * (after saving the registers its loop takes). */
	if (qp->sq.cons == qp->req.next)
		return;
	w = droce_wq_at(&qp->sq, qp->sq.cons);
	if (w->error == 0 && (w->state != DROCE_WQE_SENT || droce_psn_diff(w->last_psn, psn) > 0))
		return;
	lost = comp_ack_upto(qp, psn);
	/* None as a rule: comp.psn does not pass a READ or atomic that got
	 * no answer (comp_lost() brings it back). */
	if (lost != NULL)
		comp_lost(qp, lost, false);
}

/*
 * An ACK for @p psn, or a sequence NAK (@p nak) for the PSN after it:
 * everything up to @p psn arrived. A NAK asks to resend from psn + 1: as
 * the responder NAKs a gap once (until the PSN it expects comes), the
 * same NAK again, with no progress in between, is a copy of the first
 * (duplicated or delayed) and costs neither a retry nor a resend.
 */
static void
comp_acked(struct droce_tx *tx, struct droce_qp *qp, uint32_t psn, bool nak)
{
	bool progress = droce_psn_diff(psn, qp->comp.acked) >= 0;
	struct droce_send_wqe *lost = comp_ack_upto(qp, psn);

	if (progress)
		comp_progress(qp, tx->now, psn);
	/* With progress past a READ or atomic still unanswered, it is asked
	 * again (free) even while a go-back for it is under way: the
	 * progress restarts the ACK timer, which would otherwise leave it
	 * waiting as long as later requests are acknowledged. */
	if (lost != NULL) {
		comp_lost(qp, lost, progress);
	} else if (nak) {
		if (!progress && qp->req.retrying) {
			qp->stats.duplicates++;
			return;
		}
		qp->comp.psn = droce_psn_add(psn, 1);
		comp_retry(qp, progress);
	}
}

static enum ibv_wc_status
nak_status(uint8_t code)
{
	switch (code) {
	case DROCE_NAK_REM_ACCESS_ERR:
		return IBV_WC_REM_ACCESS_ERR;
	case DROCE_NAK_REM_OP_ERR:
		return IBV_WC_REM_OP_ERR;
	default:
		return IBV_WC_REM_INV_REQ_ERR;
	}
}

static void
comp_aeth(struct droce_tx *tx, struct droce_qp *qp, const struct droce_pkt *pkt,
	  const struct droce_aeth *aeth)
{
	uint8_t syn = droce_aeth_syndrome(aeth);
	uint32_t psn = pkt->psn;

	/* An ACK for a PSN never sent is bogus; a NAK for one already
	 * acknowledged is stale (it crossed a later ACK): both are dropped. */
	if (droce_psn_diff(psn, qp->req.psn) >= 0 ||
	    ((syn & DROCE_AETH_TYPE_MASK) != DROCE_AETH_ACK &&
	     droce_psn_diff(psn, qp->comp.psn) < 0)) {
		qp->stats.duplicates++;
		return;
	}
	switch (syn & DROCE_AETH_TYPE_MASK) {
	case DROCE_AETH_ACK:
		comp_acked(tx, qp, psn, false);
		break;
	case DROCE_AETH_RNR_NAK:
		/* Everything before the NAKed PSN arrived; a READ or atomic
		 * among it is asked again when the wait is over. */
		comp_ack_upto(qp, droce_psn_add(psn, DROCE_PSN_MASK));
		qp->stats.rnr_naks_rcvd++;
		droce_req_rnr_wait(qp, tx->now, syn & DROCE_AETH_VALUE_MASK);
		break;
	case DROCE_AETH_NAK:
		if ((syn & DROCE_AETH_VALUE_MASK) == DROCE_NAK_PSN_SEQ_ERR) {
			qp->stats.seq_naks_rcvd++;
			comp_acked(tx, qp, droce_psn_add(psn, DROCE_PSN_MASK), true);
			break;
		}
		comp_ack_upto(qp, droce_psn_add(psn, DROCE_PSN_MASK));
		if (qp->sq.cons != qp->req.next)
			droce_qp_fatal(qp, nak_status(syn & DROCE_AETH_VALUE_MASK));
		break;
	default:
		qp->stats.dropped++;
		break;
	}
}

/* The WQE a response at @p psn belongs to: the head, once the requests
 * before it are acknowledged. NULL if the response is stale or unexpected. */
static struct droce_send_wqe *
comp_response_wqe(struct droce_qp *qp, uint32_t psn, bool atomic)
{
	struct droce_send_wqe *w = comp_ack_upto(qp, droce_psn_add(psn, DROCE_PSN_MASK));

	/* An answer to a later request: this one's went missing. */
	if (w != NULL) {
		comp_lost(qp, w, false);
		return NULL;
	}
	if (qp->sq.cons == qp->req.next)
		return NULL;
	w = droce_wq_at(&qp->sq, qp->sq.cons);
	if (w->state == DROCE_WQE_POSTED || droce_wr_is_atomic(w->opcode) != atomic ||
	    (!atomic && w->opcode != IBV_WR_RDMA_READ) ||
	    droce_psn_diff(psn, w->first_psn) < 0 || droce_psn_diff(psn, w->last_psn) > 0)
		return NULL;
	/* The responder answers in order: a response for this request
	 * acknowledges every PSN before it, even if the coalesced ACK for
	 * them has not arrived yet. */
	if (droce_psn_diff(w->first_psn, qp->comp.psn) > 0)
		qp->comp.psn = w->first_psn;
	if (droce_psn_diff(w->first_psn, qp->comp.acked) > 0)
		qp->comp.acked = w->first_psn;
	return w;
}

static void
comp_read_resp(struct droce_tx *tx, struct droce_qp *qp, struct rte_mbuf *m,
	       const struct droce_pkt *pkt)
{
	struct droce_send_wqe *w = comp_response_wqe(qp, pkt->psn, false);
	uint32_t flags = pkt->op->flags;
	uint64_t off;

	if (w == NULL) {
		qp->stats.duplicates++;
		return;
	}
	/* No room for the completion: drop; the retransmitted READ brings it back. */
	if ((flags & DROCE_OPF_LAST) && droce_cq_space(qp->scq) == 0)
		return;
	if (pkt->psn != qp->comp.psn) {
		/* A response went missing: ask again from the one we expect. */
		if (droce_psn_diff(pkt->psn, qp->comp.psn) > 0)
			comp_retry(qp, false);
		else
			qp->stats.duplicates++;
		return;
	}
	/* A MIDDLE or LAST with no FIRST before it: a stale or forged
	 * packet. Dropped: the READ is asked again if it is really missing. */
	if (!droce_rx_comp_seq_ok(qp, pkt)) {
		tx->rxs->rx_bad_opcode_seq++;
		return;
	}
	off = (uint64_t)droce_psn_diff(pkt->psn, w->first_psn) * qp->mtu;
	if ((!(flags & DROCE_OPF_LAST) && pkt->payload_len != qp->mtu) ||
	    off + pkt->payload_len > w->length ||
	    ((flags & DROCE_OPF_LAST) && off + pkt->payload_len != w->length)) {
		tx->rxs->rx_bad_response++;
		droce_qp_fatal(qp, IBV_WC_BAD_RESP_ERR);
		return;
	}
	/* The LAST packet's completion follows: no waiting copy for it. */
	if (droce_payload_to_sge(tx, qp->pd_handle, droce_wqe_sge(w), w->num_sge, off, m,
				 pkt, !(flags & DROCE_OPF_LAST)) != 0) {
		droce_qp_fatal(qp, IBV_WC_LOC_PROT_ERR);
		return;
	}
	qp->comp.in_read = !(flags & DROCE_OPF_LAST);
	/* Bytes received so far: where a go-back-N READ resumes. */
	w->sent = (uint32_t)(off + pkt->payload_len);
	comp_progress(qp, tx->now, pkt->psn);
	if (flags & DROCE_OPF_LAST)
		droce_sq_retire(qp, IBV_WC_SUCCESS);
}

static void
comp_atomic_ack(struct droce_tx *tx, struct droce_qp *qp, const struct droce_pkt *pkt,
		const struct droce_atomic_ack_eth *ack)
{
	struct droce_send_wqe *w = comp_response_wqe(qp, pkt->psn, true);
	uint64_t orig = rte_be_to_cpu_64(ack->orig);

	if (w == NULL) {
		qp->stats.duplicates++;
		return;
	}
	if (droce_sge_copy(tx->mrt, qp->pd_handle, droce_wqe_sge(w), w->num_sge, 0,
			   &orig, sizeof(orig), true) != 0) {
		droce_qp_fatal(qp, IBV_WC_LOC_PROT_ERR);
		return;
	}
	comp_progress(qp, tx->now, pkt->psn);
	droce_sq_retire(qp, IBV_WC_SUCCESS);
}

void
droce_comp_rx(struct droce_tx *tx, struct droce_qp *qp, struct rte_mbuf *m,
	      const struct droce_pkt *pkt)
{
	const struct droce_aeth *aeth = droce_pkt_hdr(m, pkt, DROCE_HDR_AETH);
	uint8_t op = pkt->opcode & DROCE_OP_MASK;

	if (aeth != NULL && (droce_aeth_syndrome(aeth) & DROCE_AETH_TYPE_MASK) != DROCE_AETH_ACK) {
		comp_aeth(tx, qp, pkt, aeth);
		return;
	}
	switch (op) {
	case DROCE_OP_ACK:
		comp_aeth(tx, qp, pkt, aeth);
		break;
	case DROCE_OP_ATOMIC_ACK:
		comp_atomic_ack(tx, qp, pkt, droce_pkt_hdr(m, pkt, DROCE_HDR_ATMACK));
		break;
	default:
		comp_read_resp(tx, qp, m, pkt);
		break;
	}
}

static bool
flush_recv(struct droce_qp *qp, uint64_t wr_id)
{
	struct ibv_wc wc = {
		.wr_id = wr_id,
		.status = IBV_WC_WR_FLUSH_ERR,
		.opcode = IBV_WC_RECV,
		.qp_num = qp->qpn,
	};

	return droce_cq_push(qp->rcq, &wc, false) == 0;
}

/* The receive being filled, then (without an SRQ, whose WQEs other QPs
 * may still take) everything posted. */
static void
flush_rq(struct droce_qp *qp)
{
	uint32_t prod = __atomic_load_n(&qp->rq.prod, __ATOMIC_ACQUIRE);

	/* An XRC target's SRQ (and CQ) is named per packet and may be gone:
	 * its partly received message is dropped with the QP. */
	if (qp->type == IBV_QPT_XRC_RECV) {
		qp->resp.has_wqe = false;
		return;
	}
	if (qp->resp.has_wqe) {
		if (!flush_recv(qp, qp->rwqe->wr_id))
			return;
		qp->resp.has_wqe = false;
	}
	if (qp->srq != NULL)
		return;
	while (qp->rq.cons != prod) {
		struct droce_recv_wqe *r = droce_wq_at(&qp->rq, qp->rq.cons);

		if (!flush_recv(qp, r->wr_id))
			break;
		__atomic_store_n(&qp->rq.cons, qp->rq.cons + 1, __ATOMIC_RELEASE);
	}
}

void
droce_qp_flush_sq(struct droce_qp *qp)
{
	uint32_t prod = __atomic_load_n(&qp->sq.prod, __ATOMIC_ACQUIRE);

	while (qp->sq.cons != prod && qp->scq != NULL && droce_cq_space(qp->scq) > 0)
		droce_sq_retire(qp, IBV_WC_WR_FLUSH_ERR);
	qp->req.next = qp->sq.cons;
	qp->comp.in_read = false;
	qp->req.timeout_tsc = 0;
	qp->req.rnr_tsc = 0;
	qp->req.rd_out = 0;
	qp->req.retrying = false;
}

void
droce_qp_flush(struct droce_qp *qp)
{
	droce_qp_flush_sq(qp);
	if (qp->rcq != NULL || qp->type == IBV_QPT_XRC_RECV)
		flush_rq(qp);
	/* A QP on an SRQ tells when its last receive is done (IB 11.6.3.1). */
	if (qp->srq != NULL && qp->type != IBV_QPT_XRC_RECV && !qp->resp.last_wqe &&
	    !qp->resp.has_wqe) {
		qp->resp.last_wqe = true;
		droce_qp_event(qp, IBV_EVENT_QP_LAST_WQE_REACHED);
	}
}

void
droce_qp_fatal(struct droce_qp *qp, enum ibv_wc_status status)
{
	/* UC and UD have no connection to lose: a send error stops only the
	 * send queue (SQE); receives go on, and SQE -> RTS resumes sending. */
	bool sqe = qp->type == IBV_QPT_UC || qp->type == IBV_QPT_UD;

	/* The new state first: a program that sees the error completion and
	 * queries the QP must find it there. */
	__atomic_store_n(&qp->state, sqe ? IBV_QPS_SQE : IBV_QPS_ERR, __ATOMIC_RELEASE);
	/* The WQE at the head is the one that failed: one being resent after
	 * go-back-N (its packets went out before) is as much as one waiting
	 * for its ACK. */
	if (qp->sq.cons != __atomic_load_n(&qp->sq.prod, __ATOMIC_ACQUIRE) &&
	    ((struct droce_send_wqe *)droce_wq_at(&qp->sq, qp->sq.cons))->state !=
	    DROCE_WQE_POSTED)
		droce_sq_retire(qp, status);
	qp->req.stopped = false; /* the state stops sending from here on */
	/* An error of the QP's own work queue (not reported by the peer) is
	 * also an affiliated asynchronous error. */
	if (status == IBV_WC_LOC_PROT_ERR || status == IBV_WC_LOC_LEN_ERR ||
	    status == IBV_WC_LOC_QP_OP_ERR)
		droce_qp_event(qp, IBV_EVENT_QP_FATAL);
	if (sqe)
		droce_qp_flush_sq(qp);
	else
		droce_qp_flush(qp);
}
