/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The requester: send WQEs become packets, segmented at the path MTU,
 * numbered with PSNs. Nothing is kept of a sent packet: a WQE can be
 * turned into the same packets again from its first PSN, which is how
 * go-back-N retransmission works.
 */
#include <errno.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_memcpy.h>
#include <rte_prefetch.h>

#include "droce_log.h"
#include "droce_mw.h"
#include "droce_transport.h"
#include "droce_req_priv.h"
#include "droce_sq_quiet.h"
#include "droce_tx_inline.h"

/* Within a long message, ask for an ACK this often, so the window keeps
 * opening before the message's last packet. */
#define REQ_ACKREQ_EVERY 128

/* RNR NAK timer codes (IBTA table 45), in units of 10 us. */
static const uint32_t rnr_timer_10us[32] = {
	65536, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192,
	256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192, 12288,
	16384, 24576, 32768, 49152,
};

void
droce_req_timer_rearm(struct droce_qp *qp, uint64_t now)
{
	uint8_t t = qp->attr.timeout;

	if (t == 0 || qp->req.psn == qp->comp.psn) {
		qp->req.timeout_tsc = 0;
		return;
	}
	/* 4.096 us * 2^timeout, worked out once per value, not per ACK */
	if (unlikely(qp->req.timeout_for != t)) {
		qp->req.timeout_cycles = (uint64_t)((rte_get_tsc_hz() * 4096.0 / 1e9) *
						    (double)(1ull << RTE_MIN(t, 31)));
		qp->req.timeout_for = t;
	}
	qp->req.timeout_tsc = now + qp->req.timeout_cycles;
}

void
droce_req_rnr_wait(struct droce_qp *qp, uint64_t now, uint8_t timer_code)
{
	if (qp->attr.rnr_retry != 7) {
		if (qp->req.rnr_retries == 0) {
			droce_qp_fatal(qp, IBV_WC_RNR_RETRY_EXC_ERR);
			return;
		}
		qp->req.rnr_retries--;
	}
	qp->req.rnr_tsc = now + rte_get_tsc_hz() / 100000 * rnr_timer_10us[timer_code & 31];
	qp->req.timeout_tsc = 0;
}

uint32_t
droce_req_rd_atomic_resume(const struct droce_qp *qp, const struct droce_send_wqe *w)
{
	if (w->opcode == IBV_WR_RDMA_READ)
		return droce_psn_add(w->first_psn, droce_qp_mtu_pkts(qp, w->sent));
	return w->first_psn;
}

/*
 * Go back N: resend from the first PSN the responder has not acknowledged.
 * The WQE holding it resumes mid-message (a SEND or WRITE from that packet
 * on; a READ asks again for the bytes it has not received, which the
 * responder answers as a duplicate from that PSN); every later WQE is sent
 * again from the start, with the same PSNs as before.
 */
static void
req_go_back(struct droce_qp *qp)
{
	uint32_t prod = __atomic_load_n(&qp->sq.prod, __ATOMIC_ACQUIRE);
	struct droce_send_wqe *w;
	uint32_t i, resume;

	qp->req.need_retry = false;
	qp->req.rd_out = 0;
	/* The resend waits a whole ACK timeout, from when it goes out (the
	 * deadline of the first send may be close: its expiry would count
	 * a second retry for this one). */
	qp->req.timeout_tsc = 0;
	/* Acknowledged WQEs still waiting for CQ room stay as they are. */
	for (i = qp->sq.cons; i != prod; i++) {
		w = droce_wq_at(&qp->sq, i);
		if (w->state != DROCE_WQE_SENT || droce_wr_is_rd_atomic(w->opcode) ||
		    droce_psn_diff(w->last_psn, qp->comp.psn) >= 0)
			break;
	}
	/* What is sent again is quiet only if sent alike again. */
	droce_sq_quiet_set(qp, i, qp->req.next, false);
	qp->req.next = i;
	if (i == prod || (w = droce_wq_at(&qp->sq, i))->state == DROCE_WQE_POSTED)
		return;
	if (droce_wr_is_rd_atomic(w->opcode))
		resume = droce_req_rd_atomic_resume(qp, w);
	else if (droce_psn_diff(qp->comp.psn, w->first_psn) < 0)
		resume = w->first_psn;
	else
		resume = qp->comp.psn;
	if (w->opcode != IBV_WR_RDMA_READ)
		w->sent = (uint32_t)droce_psn_diff(resume, w->first_psn) * qp->mtu;
	w->state = DROCE_WQE_SENDING;
	DROCE_LOG(DEBUG, "QP 0x%x: go back to PSN 0x%x (WQE opcode %u, PSNs 0x%x-0x%x)",
		  qp->qpn, resume, w->opcode, w->first_psn, w->last_psn);
	qp->req.psn = qp->comp.psn = resume;
	qp->stats.retransmits++;
	for (i++; i != prod; i++) {
		w = droce_wq_at(&qp->sq, i);
		if (w->state == DROCE_WQE_POSTED || w->error != 0)
			break;
		/* A bind or invalidation is done once, not resent. */
		if (droce_wr_is_local(w->opcode))
			continue;
		w->state = DROCE_WQE_POSTED;
		qp->stats.retransmits++;
	}
}

static bool
req_check_timers(struct droce_qp *qp, uint64_t now)
{
	if (qp->req.rnr_tsc != 0) {
		if (now < qp->req.rnr_tsc)
			return false;
		qp->req.rnr_tsc = 0;
		qp->req.need_retry = true;
	}
	if (qp->req.timeout_tsc != 0 && now >= qp->req.timeout_tsc) {
		qp->stats.timeouts++;
		qp->req.timeout_tsc = 0; /* rearmed when the resend goes out */
		DROCE_LOG(DEBUG, "QP 0x%x: ACK timeout, resending from PSN 0x%x", qp->qpn,
			  qp->comp.psn);
		if (qp->req.retries == 0) {
			droce_qp_fatal(qp, IBV_WC_RETRY_EXC_ERR);
			return false;
		}
		qp->req.retries--;
		qp->req.need_retry = true;
		/* A new try: the NAK its resend may bring, or a gap in the
		 * READ responses it brings, is a new error. */
		qp->req.retrying = false;
	}
	if (qp->req.need_retry)
		req_go_back(qp);
	return true;
}

/* The opcode of a message's only packet, by its WQE's opcode (below 32,
 * as posting checks): a load instead of the comparisons that work it out
 * (some 13 instructions of every small message). */
static const uint8_t req_only_opcode[32] = {
	[IBV_WR_RDMA_WRITE] = DROCE_OP_WRITE_ONLY,
	[IBV_WR_RDMA_WRITE_WITH_IMM] = DROCE_OP_WRITE_ONLY_IMM,
	[IBV_WR_SEND] = DROCE_OP_SEND_ONLY,
	[IBV_WR_SEND_WITH_IMM] = DROCE_OP_SEND_ONLY_IMM,
	[IBV_WR_SEND_WITH_INV] = DROCE_OP_SEND_ONLY_INV,
};

/* The opcode of a SEND or WRITE packet, by its place in the message.
 * Inlined: with constant @p first and @p last, little of it is left. */
static __rte_always_inline uint8_t
req_data_opcode(const struct droce_send_wqe *w, bool first, bool last)
{
	bool write = w->opcode == IBV_WR_RDMA_WRITE || w->opcode == IBV_WR_RDMA_WRITE_WITH_IMM;
	bool imm = w->opcode == IBV_WR_RDMA_WRITE_WITH_IMM || w->opcode == IBV_WR_SEND_WITH_IMM;
	bool inv = w->opcode == IBV_WR_SEND_WITH_INV;

	if (first && last)
		return req_only_opcode[w->opcode & 31];
	if (first)
		return write ? DROCE_OP_WRITE_FIRST : DROCE_OP_SEND_FIRST;
	if (!last)
		return write ? DROCE_OP_WRITE_MIDDLE : DROCE_OP_SEND_MIDDLE;
	if (write)
		return imm ? DROCE_OP_WRITE_LAST_IMM : DROCE_OP_WRITE_LAST;
	return imm ? DROCE_OP_SEND_LAST_IMM : inv ? DROCE_OP_SEND_LAST_INV : DROCE_OP_SEND_LAST;
}

static uint32_t
req_npkts(const struct droce_qp *qp, const struct droce_send_wqe *w)
{
	if (droce_wr_is_atomic(w->opcode))
		return 1;
	return w->length == 0 ? 1 : droce_qp_mtu_pkts(qp, w->length + qp->mtu - 1);
}

/*
 * WQE @p w failed before it went out (a bad lkey). The WQEs before it may
 * still be waiting for their ACKs: they complete first, in order, and the
 * QP fails when the completer reaches @p w. Nothing more is sent.
 */
static void
req_local_error(struct droce_qp *qp, struct droce_send_wqe *w, enum ibv_wc_status status)
{
	w->error = (uint8_t)status;
	w->state = DROCE_WQE_SENT;
	w->last_psn = droce_psn_add(qp->req.psn, DROCE_PSN_MASK);
	qp->req.next++;
	qp->req.stopped = true;
	if (droce_wq_at(&qp->sq, qp->sq.cons) == (void *)w)
		droce_qp_fatal(qp, status);
}

/*
 * A bind or a local invalidation, done when the requester reaches it, in
 * send-queue order, as rxe does its local operations. It sends nothing and
 * takes no PSN: it completes once every packet before it is acknowledged.
 * A failure completes it with rxe's status and stops the QP.
 */
static void
req_local_op(struct droce_tx *tx, struct droce_qp *qp, struct droce_send_wqe *w)
{
	struct droce_mw_bind b;
	bool ok;

	if (w->opcode == IBV_WR_BIND_MW) {
		droce_wqe_bind_get(w, &b);
		ok = droce_mw_bind(tx->mrt, qp->qpn, qp->pd_handle, &b);
	} else {
		ok = droce_key_invalidate(tx->mrt, qp->pd_handle, w->invalidate_rkey);
	}
	if (!ok) {
		req_local_error(qp, w, w->opcode == IBV_WR_BIND_MW ? IBV_WC_MW_BIND_ERR :
							      IBV_WC_LOC_QP_OP_ERR);
		return;
	}
	w->last_psn = droce_psn_add(qp->req.psn, DROCE_PSN_MASK);
	w->state = DROCE_WQE_SENT;
	qp->req.next++;
}

/* XRC requests name the receiving SRQ right after the BTH. */
static void
req_xrceth(const struct droce_tx *tx, const struct droce_qp *qp, const struct droce_send_wqe *w)
{
	struct droce_xrceth *x;

	if (qp->type != IBV_QPT_XRC_SEND)
		return;
	x = (struct droce_xrceth *)droce_tx_cur(tx, DROCE_HDR_XRCETH);
	x->resv = 0;
	droce_put24(x->srqn, w->xrc_srqn);
}

/* One READ request or atomic. @return false when nothing could be built. */
static bool
req_rd_atomic(struct droce_tx *tx, struct droce_qp *qp, struct droce_send_wqe *w)
{
	uint8_t svc = droce_qp_service(qp);
	bool atomic = droce_wr_is_atomic(w->opcode);
	uint8_t opcode = svc | (atomic ? (w->opcode == IBV_WR_ATOMIC_CMP_AND_SWP ?
					  DROCE_OP_CMP_SWAP : DROCE_OP_FETCH_ADD) :
				DROCE_OP_READ_REQUEST);
	struct rte_mbuf *m;

	/* A READ resumed by go-back-N asks only for what has not arrived. */
	uint32_t done = atomic ? 0 : w->sent;

	m = droce_tx_start(tx, qp, &qp->av, opcode, 0, qp->attr.dest_qp_num,
			   droce_psn_add(w->first_psn, droce_qp_mtu_pkts(qp, done)), true, false);
	if (m == NULL)
		return false;
	req_xrceth(tx, qp, w);
	if (atomic) {
		struct droce_atomic_eth *a = (void *)droce_tx_cur(tx, DROCE_HDR_ATMETH);

		a->va = rte_cpu_to_be_64(w->remote_addr);
		a->rkey = rte_cpu_to_be_32(w->rkey);
		a->swap_add = rte_cpu_to_be_64(w->opcode == IBV_WR_ATOMIC_CMP_AND_SWP ?
					       w->swap : w->compare_add);
		a->compare = rte_cpu_to_be_64(w->opcode == IBV_WR_ATOMIC_CMP_AND_SWP ?
					      w->compare_add : 0);
	} else {
		struct droce_reth *r = (void *)droce_tx_cur(tx, DROCE_HDR_RETH);

		r->va = rte_cpu_to_be_64(w->remote_addr + done);
		r->rkey = rte_cpu_to_be_32(w->rkey);
		r->len = rte_cpu_to_be_32(w->length - done);
	}
	droce_tx_finish(tx, m);
	qp->stats.tx_pkts++;
	qp->req.psn = droce_psn_add(w->last_psn, 1);
	qp->req.rd_out++;
	w->state = DROCE_WQE_SENT;
	return true;
}

/*
 * READ requests after the one req_rd_atomic() just built (the last frame
 * staged), from WQE @p next on, each a copy of that frame with its own
 * PSN and RETH: a READ's request is its headers and a RETH, the same for
 * every READ of an RC QP but for those two. The template's look-up and
 * the requester's loop per WQE cost a 64-byte READ's requester some 16 %
 * of its cycles over memif. What that loop checks before each WQE is
 * checked here too, or holds for the run as in req_only_run(): the QP's
 * state, the producer index @p prod, the window, READ credits
 * (@p max_rd), no fence (a READ is out now), no pacer (a QP a CNP limited
 * builds each request on its own). A WQE of any other kind, or one
 * started already (a go-back's), ends the run. @return how many it built.
 */
static __rte_noinline uint32_t
req_read_like(struct droce_tx *tx, struct droce_qp *qp, uint32_t next, uint32_t prod,
	      uint32_t max_rd)
{
	const struct rte_mbuf *first = tx->pkts[tx->n - 1];
	const uint8_t *from = rte_pktmbuf_mtod(first, const uint8_t *);
	const unsigned bth_off = (unsigned)(tx->bth - from);
	const uint8_t reth = tx->op->off[DROCE_HDR_RETH];
	uint32_t psn = qp->req.psn, i;
	uint8_t *bth = tx->bth;

	if (qp->type != IBV_QPT_RC || qp->cc.limited || !((tx->unsealed >> (tx->n - 1)) & 1))
		return 0;
	for (i = 0; next + i != prod && droce_tx_room(tx) > 0 && qp->req.rd_out < max_rd &&
		    droce_psn_diff(psn, qp->comp.psn) < DROCE_REQ_WINDOW; i++) {
		struct droce_send_wqe *w = droce_wq_at(&qp->sq, next + i);
		struct droce_reth *r;
		struct rte_mbuf *m;

		if (w->opcode != IBV_WR_RDMA_READ || w->state != DROCE_WQE_POSTED ||
		    (w->send_flags & IBV_SEND_FENCE))
			break;
		m = droce_tx_mbuf(tx);
		if (m == NULL)
			break;
		m->data_len = first->data_len;
		m->pkt_len = first->pkt_len;
		m->tx_offload = first->tx_offload;
		bth = rte_pktmbuf_mtod(m, uint8_t *) + bth_off;
		memcpy(bth - bth_off, from, DROCE_HDR_TMPL_COPY);
		((struct droce_bth *)bth)->apsn = rte_cpu_to_be_32(DROCE_BTH_ACKREQ | psn);
		r = (void *)(bth + reth);
		r->va = rte_cpu_to_be_64(w->remote_addr);
		r->rkey = rte_cpu_to_be_32(w->rkey);
		r->len = rte_cpu_to_be_32(w->length);
		w->first_psn = psn;
		psn = droce_psn_add(psn, req_npkts(qp, w));
		w->last_psn = droce_psn_add(psn, DROCE_PSN_MASK);
		w->sent = 0;
		w->error = 0;
		w->state = DROCE_WQE_SENT;
		droce_sq_quiet_off(qp, next + i);
		tx->unsealed |= UINT64_C(1) << tx->n;
		tx->pkts[tx->n++] = m;
		qp->req.rd_out++;
	}
	if (i == 0)
		return 0;
	/* Where droce_tx_again() and droce_tx_cur() look: the last frame. */
	tx->bth = bth;
	qp->req.psn = psn;
	*tx->msgs += i;
	qp->stats.tx_pkts += i;
	return i;
}

/*
 * The next packet of a SEND or WRITE, the message's only one when @p only
 * (a constant: req_only_run() has the copy for a message of one packet
 * not yet started, req_data() the one for every other). @return false
 * when nothing could be built.
 */
static __rte_always_inline bool
req_data_pkt(struct droce_tx *tx, struct droce_qp *qp, struct droce_send_wqe *w, bool only,
	     bool again)
{
	uint32_t seg = only ? w->length : RTE_MIN(qp->mtu, w->length - w->sent);
	bool first = only || w->sent == 0;
	bool last = only || w->sent + seg == w->length;
	uint8_t opcode = droce_qp_service(qp) | req_data_opcode(w, first, last);
	uint32_t pidx = only ? 0 : droce_qp_mtu_pkts(qp, w->sent);
	bool ackreq = last || (pidx % REQ_ACKREQ_EVERY) == REQ_ACKREQ_EVERY - 1;
	bool se = last && (w->send_flags & IBV_SEND_SOLICITED);
	uint32_t dqpn = qp->attr.dest_qp_num;
	const struct droce_opcode_info *op;
	struct rte_mbuf *m;

	ackreq = ackreq && qp->type != IBV_QPT_UC;
	m = !only ? droce_tx_start(tx, qp, &qp->av, opcode, seg, dqpn, qp->req.psn, ackreq, se) :
	    again ? droce_tx_again_inline(tx, qp->req.psn, ackreq) :
		    droce_tx_start_inline(tx, qp, &qp->av, opcode, seg, dqpn, qp->req.psn, ackreq, se);
	if (m == NULL)
		return false;
	/* The opcode's row, as the start left it (inlined: still in a register). */
	op = tx->op;
	req_xrceth(tx, qp, w);
	if (first && op->off[DROCE_HDR_RETH]) {
		struct droce_reth *r = (void *)droce_tx_cur(tx, DROCE_HDR_RETH);

		r->va = rte_cpu_to_be_64(w->remote_addr);
		r->rkey = rte_cpu_to_be_32(w->rkey);
		r->len = rte_cpu_to_be_32(w->length);
	}
	if (last && op->off[DROCE_HDR_IMMDT])
		((struct droce_immdt *)droce_tx_cur(tx, DROCE_HDR_IMMDT))->imm = w->imm;
	if (last && op->off[DROCE_HDR_IETH])
		((struct droce_ieth *)droce_tx_cur(tx, DROCE_HDR_IETH))->rkey =
			rte_cpu_to_be_32(w->invalidate_rkey);
	if (w->is_inline) {
		/* At most DROCE_MAX_INLINE bytes: inline, not a call. */
		rte_memcpy(droce_tx_cur(tx, DROCE_HDR_PAYLOAD), w->data + w->sent, seg);
	} else if ((only ? droce_tx_payload_short(tx, m, qp->pd_handle, droce_wqe_sge(w),
						  w->num_sge, seg, qp, w) :
			   droce_tx_payload(tx, m, qp->pd_handle, droce_wqe_sge(w), w->num_sge,
					    w->sent, seg, 0, qp, w)) != 0) {
		rte_pktmbuf_free(m);
		req_local_error(qp, w, IBV_WC_LOC_PROT_ERR);
		return false;
	}
	/* A run counts its frames once (req_only_run()). */
	if (only) {
		droce_tx_finish_uncounted(tx, m);
	} else {
		droce_tx_finish(tx, m);
		qp->stats.tx_pkts++;
	}
	qp->req.psn = droce_psn_add(qp->req.psn, 1);
	w->sent += seg;
	if (last)
		w->state = DROCE_WQE_SENT;
	return true;
}

/* The next packet of a SEND or WRITE that req_only_run() does not take:
 * one of a longer message, or a one-packet message resent by go-back-N or
 * held to a rate by the pacer. */
static bool
req_data(struct droce_tx *tx, struct droce_qp *qp, struct droce_send_wqe *w)
{
	return req_data_pkt(tx, qp, w, false, false);
}

/*
 * A UD SEND: one packet to the address handle the WQE names. A destination
 * that cannot be reached loses the datagram, as on a real network.
 */
static bool
req_ud(struct droce_tx *tx, struct droce_qp *qp, struct droce_send_wqe *w)
{
	uint8_t opcode = DROCE_SVC_UD | (w->opcode == IBV_WR_SEND_WITH_IMM ?
					 DROCE_OP_SEND_ONLY_IMM : DROCE_OP_SEND_ONLY);
	struct droce_deth *deth;
	struct rte_mbuf *m;
	int rc = droce_av_route(tx, &w->ah->av);

	if (rc == -EAGAIN)
		return false;
	if (rc != 0) {
		qp->stats.dropped++;
		w->state = DROCE_WQE_SENT;
		return true;
	}
	m = droce_tx_start(tx, qp, &w->ah->av, opcode, w->length, w->remote_qpn, qp->req.psn,
			   false, (w->send_flags & IBV_SEND_SOLICITED) != 0);
	if (m == NULL)
		return false;
	deth = (struct droce_deth *)droce_tx_cur(tx, DROCE_HDR_DETH);
	/* A Q_Key with the high bit set means: use the QP's own. */
	deth->qkey = rte_cpu_to_be_32((w->remote_qkey & 0x80000000u) ? qp->attr.qkey :
				      w->remote_qkey);
	deth->resv = 0;
	droce_put24(deth->sqpn, qp->qpn);
	if (opcode == (DROCE_SVC_UD | DROCE_OP_SEND_ONLY_IMM))
		((struct droce_immdt *)droce_tx_cur(tx, DROCE_HDR_IMMDT))->imm = w->imm;
	if (w->is_inline) {
		memcpy(droce_tx_cur(tx, DROCE_HDR_PAYLOAD), w->data, w->length);
	} else if (droce_tx_payload(tx, m, qp->pd_handle, droce_wqe_sge(w), w->num_sge, 0,
				    w->length, 0, qp, w) != 0) {
		rte_pktmbuf_free(m);
		req_local_error(qp, w, IBV_WC_LOC_PROT_ERR);
		return false;
	}
	droce_tx_finish(tx, m);
	qp->stats.tx_pkts++;
	qp->req.psn = droce_psn_add(qp->req.psn, 1);
	w->state = DROCE_WQE_SENT;
	return true;
}

/* About the size of the WQE's next frame, for the pacer: its payload and
 * the RoCEv2 headers (Ethernet, IPv4, UDP, BTH, ICRC) around it. */
static uint32_t
req_frame_bytes(const struct droce_qp *qp, const struct droce_send_wqe *w, bool rd_atomic)
{
	uint32_t hdrs = RTE_ETHER_HDR_LEN + 20 + 8 + 12 + 4;

	if (rd_atomic)
		return hdrs + 28;
	return hdrs + (w->state == DROCE_WQE_POSTED ? RTE_MIN(qp->mtu, w->length) :
		       RTE_MIN(qp->mtu, w->length - w->sent));
}

/* UC and UD: nothing comes back, a WQE is complete once it is on the wire
 * and the driver has let go of its buffers. */
static void
req_complete_unacked(struct droce_qp *qp)
{
	while (qp->sq.cons != qp->req.next && droce_cq_space(qp->scq) > 0 &&
	       droce_wqe_released(droce_wq_at(&qp->sq, qp->sq.cons)))
		droce_sq_retire(qp, IBV_WC_SUCCESS);
}

/* May the WQE @p w, one of whose packets was just built, go on to its next? */
static __rte_always_inline bool
req_data_goes_on(struct droce_tx *tx, struct droce_qp *qp, const struct droce_send_wqe *w,
		 bool reliable)
{
	return w->state != DROCE_WQE_SENT && droce_tx_room(tx) != 0 && !qp->req.stopped &&
	       droce_qp_state(qp) == IBV_QPS_RTS &&
	       (!reliable || droce_psn_diff(qp->req.psn, qp->comp.psn) < DROCE_REQ_WINDOW) &&
	       droce_cc_may_send(tx, qp, req_frame_bytes(qp, w, false));
}

/*
 * The MIDDLE packets of a long SEND or WRITE of an RC or UC QP, from its
 * next one on and before its LAST, as many as the staging and the window
 * take: what req_data() works out per packet (the opcode, the extension
 * headers, the length, where the payload is) is the same for all of them,
 * so it is worked out once, the run's payload found in one SGE at once.
 * Frames that go by reference (zero copy), inline data, payloads over
 * several SGEs, XRC and a QP the pacer holds to a rate (DCQCN, after a
 * CNP) go by req_data(), one at a time. Out of line: a message of one
 * packet, the common one, never calls it.
 * @return how many it built.
 */
static unsigned __rte_noinline
req_middle_run(struct droce_tx *tx, struct droce_qp *qp, struct droce_send_wqe *w,
	       bool reliable)
{
	uint32_t mtu = qp->mtu, left = w->length - w->sent, bytes = 0;
	unsigned n = 0, i;
	uint32_t window = reliable ? DROCE_REQ_WINDOW -
				     (uint32_t)droce_psn_diff(qp->req.psn, qp->comp.psn) :
				     UINT32_MAX;
	uint8_t opcode = droce_qp_service(qp) | req_data_opcode(w, false, false);
	const uint8_t *src;

	if (w->is_inline || (qp->type != IBV_QPT_RC && qp->type != IBV_QPT_UC) ||
	    qp->cc.limited)
		return 0;
	/* The staging's room stops it too (droce_tx_again() says so). */
	for (; bytes + mtu < left && n < window; bytes += mtu)
		n++;
	if (n == 0 || (src = droce_tx_payload_run(tx, qp->pd_handle, droce_wqe_sge(w),
						  w->num_sge, w->sent, bytes, mtu)) == NULL)
		return 0;
	for (i = 0; i < n; i++) {
		bool ackreq = qp->type != IBV_QPT_UC &&
			      droce_qp_mtu_pkts(qp, w->sent) % REQ_ACKREQ_EVERY ==
				      REQ_ACKREQ_EVERY - 1;
		struct rte_mbuf *m;

		m = i == 0 ? droce_tx_start(tx, qp, &qp->av, opcode, mtu, qp->attr.dest_qp_num,
					    qp->req.psn, ackreq, false) :
			     droce_tx_again(tx, qp->req.psn, ackreq);
		if (m == NULL)
			break;
		droce_tx_payload_copy(tx, m, src, mtu);
		droce_tx_finish(tx, m);
		src += mtu;
		qp->req.psn = droce_psn_add(qp->req.psn, 1);
		w->sent += mtu;
	}
	qp->stats.tx_pkts += i;
	tx->zcs->tx_run_pkts += i;
	return i;
}

/*
 * The packets of a SEND or WRITE, from its next one on, while the staging
 * has room and nothing else stops the QP: what droce_req_run() checks
 * before each WQE (its state, fences, READ credits) holds for the rest of
 * the same WQE, so a long message's packets skip it. @return false when
 * not even the first could be built.
 */
static bool
req_data_frames(struct droce_tx *tx, struct droce_qp *qp, struct droce_send_wqe *w,
		bool reliable)
{
	bool built = false;

	/* One call of req_data(), which is inlined here. */
	while (req_data(tx, qp, w)) {
		built = true;
		if (!req_data_goes_on(tx, qp, w, reliable) ||
		    (req_middle_run(tx, qp, w, reliable) != 0 &&
		     !req_data_goes_on(tx, qp, w, reliable)))
			break;
	}
	return built;
}

/* Is @p w, the requester's next WQE, a SEND or WRITE of one packet not yet
 * started, which req_only_run() may build? The opcode's row in
 * req_only_opcode[] says SEND or WRITE in one load. */
static __rte_always_inline bool
req_is_only(const struct droce_qp *qp, const struct droce_send_wqe *w)
{
	return w->state == DROCE_WQE_POSTED && req_only_opcode[w->opcode & 31] != 0 &&
	       w->length <= qp->mtu;
}

/*
 * The WQEs after @p w0, whose frame req_data_pkt() has just built as the
 * staging's last, that are messages of one packet of its shape: the same
 * opcode, length, solicited bit and payload kind, at most @p n of them.
 * What building that frame worked out holds for each of these and is not
 * worked out again: their headers are its headers (copied from it up to
 * the BTH's end, where the PSN, RETH and immediate data go, without the
 * shape's comparisons of droce_hdr_tmpl_get_owned()), its pad and its
 * ICRC, left to the flush as droce_hdr_tmpl_finish_later() said of it;
 * a payload under the zero-copy threshold is copied. Each WQE costs its
 * checks, PSN, RETH, immediate data and payload; some 100 instructions
 * fewer than req_data_pkt() takes for it.
 * RC and UC only (an XRC request names its SRQ per WQE), SENDs and WRITEs
 * with immediate data or not, a payload inline or in one SGE of the
 * region @p w0's first SGE names. That region is looked up once and its
 * PD checked (@p w0's frame may not have read it: an empty first SGE is
 * skipped); it stays for the engine's turn (the device's RCU), and so do
 * its PD and rights, which droce_mr_update() changes a grace period
 * later; each payload is checked against its bounds. A WQE of another
 * shape or key, or one fenced behind READs (@p fence_waits), ends it:
 * req_only_run() takes that one as any.
 * Every frame copies its headers from @p w0's, not from the one before
 * it, whose stores may not have left the store buffer. A WQE's shape is
 * two 8-byte words compared with what the run wants (droce_wqe_op_word,
 * droce_wqe_len_word), and the next WQE's address a step along the ring:
 * the loop's constants outnumber the registers, and each one fewer
 * is a reload from the stack fewer per WQE. Out of line: a
 * call per run is nothing, and inlined, its registers made every call
 * of the engine's QP service some 20 instructions longer (a lone
 * message's three of them).
 * @return how many it built.
 */
static __rte_noinline uint32_t
req_only_like(struct droce_tx *tx, struct droce_qp *qp, struct droce_send_wqe *w0,
	      uint32_t n, bool fence_waits)
{
	const struct rte_mbuf *first = tx->pkts[tx->n - 1];
	const uint8_t *from = rte_pktmbuf_mtod(first, const uint8_t *);
	const unsigned bth_off = (unsigned)(tx->bth - from);
	const struct droce_opcode_info *op = tx->op;
	const uint8_t reth = op->off[DROCE_HDR_RETH], immdt = op->off[DROCE_HDR_IMMDT];
	const uint8_t pay = op->off[DROCE_HDR_PAYLOAD];
	const uint32_t len = w0->length;
	const unsigned pad = (4 - (len & 3)) & 3;
	const uint32_t ackreq = qp->type == IBV_QPT_RC ? DROCE_BTH_ACKREQ : 0;
	const bool is_inline = w0->is_inline;
	/* An RC QP without sq_sig_all marks its unsignaled WQEs quiet
	 * (droce_sq_quiet.h): its runs are all signaled or all unsignaled,
	 * and their bits one store after the loop, not a test per WQE. */
	const bool quiet = qp->type == IBV_QPT_RC && !qp->sq_sig_all;
	const uint32_t signaled = quiet ? w0->send_flags & IBV_SEND_SIGNALED : 0;
	/* Each WQE's shape against @p w0's: its opcode and solicited bit (and
	 * no fence while READs are out; the signaled bit, above), its length,
	 * a single SGE unless inline, and not started. */
	const uint64_t op_want = droce_wqe_word_of(&(struct droce_wqe_op_word){
		.opcode = w0->opcode,
		.send_flags = (w0->send_flags & IBV_SEND_SOLICITED) | signaled,
	});
	const uint64_t op_bits = droce_wqe_word_of(&(struct droce_wqe_op_word){
		.opcode = UINT32_MAX,
		.send_flags = IBV_SEND_SOLICITED | (fence_waits ? IBV_SEND_FENCE : 0) |
			      (quiet ? IBV_SEND_SIGNALED : 0),
	});
	const uint64_t len_want = droce_wqe_word_of(&(struct droce_wqe_len_word){
		.length = len, .num_sge = 1, .is_inline = is_inline, .state = DROCE_WQE_POSTED,
	});
	const uint64_t len_bits = droce_wqe_word_of(&(struct droce_wqe_len_word){
		.length = UINT32_MAX, .num_sge = is_inline ? 0 : UINT16_MAX,
		.is_inline = UINT8_MAX, .state = UINT8_MAX,
	});
	/* Locals, not fields: every byte stored into a frame may alias a
	 * field, which the compiler would load again for each WQE. */
	uint8_t *const ring = qp->sq.buf;
	const uint32_t stride = qp->sq.stride;
	const uint8_t *const ring_end = ring + (size_t)(qp->sq.mask + 1) * stride;
	const uint32_t lkey = droce_wqe_sge(w0)->lkey;
	const struct droce_mr *mr = is_inline ? NULL : droce_mr_lookup(tx->mrt, lkey);
	const uint8_t *base = NULL;
	uint64_t iova = 0, last = 0;
	/* One count walks the run: a frame's place in the staging, from which
	 * its PSN and the WQEs taken follow. */
	const unsigned staged0 = tx->n;
	const uint32_t psn0 = qp->req.psn - staged0;
	unsigned staged, end;
	uint8_t *bth = tx->bth;
	uint32_t i;
	/* The first frame's lengths and offloads, every frame's (locals too). */
	const uint16_t data_len = first->data_len;
	const uint32_t pkt_len = first->pkt_len;
	const uint64_t tx_offload = first->tx_offload;
	uint8_t *w_next;

	if ((qp->type != IBV_QPT_RC && qp->type != IBV_QPT_UC) ||
	    w0->opcode == IBV_WR_SEND_WITH_INV || len == 0 || len >= DROCE_COPY_CRC_MIN ||
	    (!is_inline && (len >= tx->zc_from || mr == NULL || mr->pd_handle != qp->pd_handle ||
			    len > mr->length)) ||
	    !((tx->unsealed >> (staged0 - 1)) & 1))
		return 0;
	if (!is_inline) {
		base = mr->base;
		iova = mr->iova;
		/* The last offset into the region a payload may start at. */
		last = mr->length - len;
	}
	end = staged0 + RTE_MIN(n, droce_tx_room(tx));
	w_next = droce_wq_at(&qp->sq, qp->req.next);
	for (staged = staged0; staged < end; staged++) {
		struct droce_send_wqe *w = (void *)w_next;
		const uint32_t psn = droce_psn_add(psn0, staged);
		const struct ibv_sge *sge = droce_wqe_sge(w);
		const uint8_t *src = w->data;
		struct rte_mbuf *m;

		w_next += stride;
		if (w_next == ring_end)
			w_next = ring;
		rte_prefetch0(w_next);
		if ((((droce_wqe_op_word(w) ^ op_want) & op_bits) |
		     ((droce_wqe_len_word(w) ^ len_want) & len_bits)) != 0)
			break;
		if (!is_inline) {
			/* droce_mr_range(), the region's fields read once
			 * (below its start, the offset wraps above last). */
			if (sge->lkey != lkey || len > sge->length || sge->addr - iova > last)
				break;
			src = base + (sge->addr - iova);
		}
		m = droce_tx_mbuf(tx);
		if (m == NULL)
			break;
		/* From the pool the first frame came from: the same room. */
		m->data_len = data_len;
		m->pkt_len = pkt_len;
		m->tx_offload = tx_offload;
		bth = rte_pktmbuf_mtod(m, uint8_t *) + bth_off;
		memcpy(bth - bth_off, from, DROCE_HDR_TMPL_COPY);
		((struct droce_bth *)bth)->apsn = rte_cpu_to_be_32(ackreq | psn);
		if (reth) {
			struct droce_reth *r = (void *)(bth + reth);

			r->va = rte_cpu_to_be_64(w->remote_addr);
			r->rkey = rte_cpu_to_be_32(w->rkey);
			r->len = rte_cpu_to_be_32(len);
		}
		if (immdt)
			((struct droce_immdt *)(bth + immdt))->imm = w->imm;
		rte_memcpy(bth + pay, src, len);
		if (pad)
			memset(bth + pay + len, 0, pad);
		tx->pkts[staged] = m;
		w->first_psn = w->last_psn = psn;
		w->sent = len;
		w->error = 0;
		w->state = DROCE_WQE_SENT;
	}
	i = staged - staged0;
	if (i == 0)
		return 0;
	/* @p w0's bit and those of the WQEs after it, all one way. */
	droce_sq_quiet_set(qp, qp->req.next - 1, qp->req.next + i, quiet && !signaled);
	/* Where droce_tx_again() and droce_tx_cur() look: the last frame. The
	 * run's frames are left to the flush to seal, as the first was. */
	tx->bth = bth;
	tx->n = (uint16_t)staged;
	tx->unsealed |= (~UINT64_C(0) >> (64 - i)) << staged0;
	qp->req.psn = droce_psn_add(psn0, staged);
	qp->req.next += i;
	if (!is_inline)
		*tx->zc_copy_count += i;
	return i;
}

/*
 * Messages of one packet, SENDs and WRITEs not yet started, from the
 * requester's next WQE on, of a QP with a remote QP of its own (RC, UC,
 * XRC) that the pacer does not hold to a rate: the common small message,
 * a run of them at a time. What droce_req_run() checks before each WQE
 * (the QP's state, the producer index, the window, the pacer, READ
 * credits for a fence) holds for the whole run, so it is checked once,
 * as are the ACK timer and the next WQE's index; each WQE then has its
 * PSN and its frame, the message's only one. The run ends at a WQE of any
 * other kind, at @p prod, when the window closes, and when a frame cannot
 * be built (the staging full, no mbuf, a bad lkey: req_data_pkt() says
 * which). @return how many WQEs it sent, 0 when not even the first could be
 * sent (the requester stops there), -1 when the next WQE is not of its
 * kind.
 */
static int
req_only_run(struct droce_tx *tx, struct droce_qp *qp, uint32_t prod, bool reliable)
{
	uint32_t n = prod - qp->req.next, i, k, shape, prev = UINT32_MAX;
	bool fence_waits = qp->req.rd_out > 0;
	uint64_t bytes = 0;
	struct droce_send_wqe *w;

	if (reliable)
		n = RTE_MIN(n, (uint32_t)(DROCE_REQ_WINDOW -
					  droce_psn_diff(qp->req.psn, qp->comp.psn)));
	for (i = 0; i < n;) {
		w = droce_wq_at(&qp->sq, qp->req.next);
		rte_prefetch0(droce_wq_at(&qp->sq, qp->req.next + 1));
		if (!req_is_only(qp, w) || ((w->send_flags & IBV_SEND_FENCE) && fence_waits)) {
			if (i == 0)
				return -1;
			break;
		}
		w->first_psn = w->last_psn = qp->req.psn;
		w->sent = 0;
		w->error = 0;
		droce_sq_quiet_off(qp, qp->req.next);
		/* A short frame like the last (the same opcode, length and
		 * solicited bit: the same headers to the BTH's end but for
		 * the PSN) is started from that one's headers. */
		shape = (w->length << 8) | (w->opcode << 1) |
			((w->send_flags & IBV_SEND_SOLICITED) != 0);
		if (!req_data_pkt(tx, qp, w, true,
				  shape == prev && w->length < DROCE_COPY_CRC_MIN))
			break;
		prev = shape;
		qp->req.next++;
		/* The latency test's lone message does not pay its set-up. */
		k = 1 + (i + 1 < n ? req_only_like(tx, qp, w, n - i - 1, fence_waits) : 0);
		bytes += (uint64_t)k * w->length;
		i += k;
	}
	if (i == 0)
		return 0;
	/* Each frame of the run is a message of its own. */
	*tx->msgs += i;
	*tx->payload_bytes += bytes;
	qp->stats.tx_pkts += i;
	if (reliable && qp->req.timeout_tsc == 0)
		droce_req_timer_rearm(qp, tx->now);
	return (int)i;
}

bool
droce_req_run(struct droce_tx *tx, struct droce_qp *qp)
{
	bool reliable = qp->type == IBV_QPT_RC || qp->type == IBV_QPT_XRC_SEND;
	uint32_t max_rd = RTE_MAX(qp->attr.max_rd_atomic, 1);

	if (reliable) {
		if (!req_check_timers(qp, tx->now))
			return droce_qp_state(qp) != IBV_QPS_ERR;
		droce_comp_pending(qp);
	}
	while (droce_tx_room(tx) > 0 && droce_qp_state(qp) == IBV_QPS_RTS) {
		uint32_t prod = __atomic_load_n(&qp->sq.prod, __ATOMIC_ACQUIRE);
		struct droce_send_wqe *w;
		bool rd_atomic;

		if (qp->req.next == prod || qp->req.stopped)
			break;
		if (reliable && droce_psn_diff(qp->req.psn, qp->comp.psn) >= DROCE_REQ_WINDOW)
			break;
		if (qp->type != IBV_QPT_UD && !qp->cc.limited) {
			int run = req_only_run(tx, qp, prod, reliable);

			if (run == 0)
				break;
			if (run > 0)
				continue;
		}
		w = droce_wq_at(&qp->sq, qp->req.next);
		/* The next WQE's first line, while this one's frames are built
		 * (past prod it is a slot the poster will write: harmless). */
		rte_prefetch0(droce_wq_at(&qp->sq, qp->req.next + 1));
		rd_atomic = droce_wr_is_rd_atomic(w->opcode);
		if (!droce_cc_may_send(tx, qp, req_frame_bytes(qp, w, rd_atomic)))
			break;
		/* A WQE stays POSTED until its first packet is built, so these
		 * checks hold even when the link pushed back on a previous try. */
		if (w->state == DROCE_WQE_POSTED) {
			if (rd_atomic && qp->req.rd_out >= max_rd)
				break;
			/* A fenced WQE waits for every earlier READ and atomic. */
			if ((w->send_flags & IBV_SEND_FENCE) && qp->req.rd_out > 0)
				break;
			w->first_psn = qp->req.psn;
			w->last_psn = droce_psn_add(qp->req.psn, req_npkts(qp, w) - 1);
			w->sent = 0;
			w->error = 0;
			droce_sq_quiet_off(qp, qp->req.next);
		}
		if (droce_wr_is_local(w->opcode)) {
			/* Left SENT by a go-back-N: done already. */
			if (w->state == DROCE_WQE_POSTED)
				req_local_op(tx, qp, w);
			else
				qp->req.next++;
			continue;
		}
		if (!(qp->type == IBV_QPT_UD ? req_ud(tx, qp, w) :
		      rd_atomic ? req_rd_atomic(tx, qp, w) : req_data_frames(tx, qp, w, reliable)))
			break;
		if (w->state == DROCE_WQE_POSTED)
			w->state = DROCE_WQE_SENDING;
		if (reliable && qp->req.timeout_tsc == 0)
			droce_req_timer_rearm(qp, tx->now);
		if (w->state == DROCE_WQE_SENT) {
			qp->req.next++;
			/* A READ's request: the READs after it from its frame. */
			if (w->opcode == IBV_WR_RDMA_READ)
				qp->req.next += req_read_like(tx, qp, qp->req.next, prod, max_rd);
		}
	}
	/* Everything is sent, and the oldest WQE waits for its frames. */
	if (qp->sq.cons != qp->req.next &&
	    qp->req.next == __atomic_load_n(&qp->sq.prod, __ATOMIC_ACQUIRE) &&
	    !droce_wqe_released(droce_wq_at(&qp->sq, qp->sq.cons)))
		droce_zc_reclaim(tx);
	if (!reliable) {
		req_complete_unacked(qp);
		return qp->req.next != __atomic_load_n(&qp->sq.prod, __ATOMIC_ACQUIRE) ||
		       qp->sq.cons != qp->req.next;
	}
	return qp->sq.cons != __atomic_load_n(&qp->sq.prod, __ATOMIC_ACQUIRE) ||
	       qp->req.rnr_tsc != 0;
}
