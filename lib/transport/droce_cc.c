/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Congestion control of one engine's QPs (docs/congestion.md): the ECN
 * codepoint of sent frames, the notification point that answers CE-marked
 * requests with CNPs, and the reaction point that hands CNPs to DCQCN and
 * paces a QP while DCQCN holds it below line rate.
 *
 * A QP that never got a CNP is not paced at all (droce_cc_may_send() is
 * one branch): a port whose "line rate" is a guess (memif, ring) runs as
 * fast as it can until congestion says otherwise. From its first CNP on,
 * the QP is paced at its DCQCN rate, which climbs back to the line rate
 * but never above: a NIC's QP never sends faster than its link, and a
 * QP that burst at the speed of memory after every idle spell (a
 * retransmission timeout, say) would refill the queue DCQCN just drained.
 */
#include <errno.h>
#include <string.h>

#include "droce.h"
#include "droce_transport.h"

void
droce_cc_init(struct droce_cc *cc, const struct droce_cc_conf *conf, uint32_t link_mbps,
	      uint64_t tsc_hz)
{
	memset(cc, 0, sizeof(*cc));
	cc->ecn = conf->ecn;
	/* Without ECN nothing is marked, so there is nothing to notify. */
	if (conf->ecn != DROCE_ECN_NOT_ECT)
		cc->cnp_interval_tsc = tsc_hz * conf->cnp_interval_us / 1000000u;
	cc->np = conf->ecn != DROCE_ECN_NOT_ECT && conf->cnp_interval_us != 0;
	cc->dcqcn = conf->dcqcn;
	if (cc->dcqcn)
		droce_dcqcn_params_init(&cc->params, &conf->dcqcn_conf, link_mbps, tsc_hz);
}

void
droce_cc_rx_ce(struct droce_tx *tx, struct droce_qp *qp)
{
	struct rte_mbuf *m;
	struct droce_bth *bth;

	tx->ccs->ce_received++;
	if (!tx->cc.np)
		return;
	/* One CNP per QP per interval, as NICs rate-limit them; and none to
	 * a peer whose address is not resolved yet (the next CE will do). */
	if (tx->now < qp->cc.cnp_next || droce_av_route(tx, &qp->av) != 0) {
		tx->ccs->cnps_suppressed++;
		return;
	}
	m = droce_tx_start(tx, qp, &qp->av, DROCE_OPCODE_CNP, 0, qp->attr.dest_qp_num, 0,
			   false, false);
	if (m == NULL) {
		tx->ccs->cnps_suppressed++;
		return;
	}
	/* Annex A17.9: BECN set, PSN 0, 16 reserved bytes of zeros. */
	bth = (struct droce_bth *)droce_tx_cur(tx, DROCE_HDR_BTH);
	bth->resv8a = DROCE_BTH_BECN;
	memset(bth + 1, 0, droce_opcode_table[DROCE_OPCODE_CNP].hdr_len - sizeof(*bth));
	droce_tx_finish(tx, m);
	qp->cc.cnp_next = tx->now + tx->cc.cnp_interval_tsc;
	qp->stats.cnps_sent++;
	tx->ccs->cnps_sent++;
}

void
droce_cc_rx_cnp(struct droce_tx *tx, struct droce_qp *qp)
{
	struct droce_dcqcn *d = &qp->cc.dcqcn;

	qp->stats.cnps_rcvd++;
	tx->ccs->cnps_received++;
	if (!tx->cc.dcqcn)
		return;
	if (!qp->cc.limited) {
		droce_dcqcn_init(d, &tx->cc.params, tx->now);
	} else {
		/* Alpha's timer stood while the QP ran at line rate. */
		uint64_t inc = droce_dcqcn_increases(d);

		droce_dcqcn_tick(d, &tx->cc.params, tx->now);
		tx->ccs->rate_increases += droce_dcqcn_increases(d) - inc;
	}
	droce_dcqcn_on_cnp(d, &tx->cc.params, tx->now);
	/* Written by the engine, read by droce_qp_cc() from any thread. */
	__atomic_store_n(&qp->cc.limited, true, __ATOMIC_RELEASE);
	tx->ccs->rate_decreases++;
}

bool
droce_cc_pace(struct droce_tx *tx, struct droce_qp *qp, uint32_t bytes)
{
	struct droce_dcqcn *d = &qp->cc.dcqcn;
	const struct droce_dcqcn_params *p = &tx->cc.params;
	uint64_t inc = droce_dcqcn_increases(d);
	bool ok;

	droce_dcqcn_tick(d, p, tx->now);
	ok = droce_dcqcn_may_send(d, p, bytes, tx->now);
	tx->ccs->rate_increases += droce_dcqcn_increases(d) - inc;
	if (!ok)
		tx->ccs->paced++;
	return ok;
}

/* Bytes per second to megabits per second. */
static uint64_t
bps_to_mbps(uint64_t bps)
{
	return bps * 8 / 1000000u;
}

int
droce_qp_cc(struct ibv_qp *ibqp, struct droce_qp_cc *cc)
{
	const struct droce_qp *qp;

	if (ibqp == NULL || cc == NULL)
		return -EINVAL;
	qp = droce_qp_of(ibqp);
	memset(cc, 0, sizeof(*cc));
	/* The engine writes these; aligned 64-bit loads see each whole, and
	 * a report may mix the rate of one iteration with another's count. */
	cc->paced = __atomic_load_n(&qp->cc.limited, __ATOMIC_ACQUIRE);
	if (cc->paced) {
		cc->rate_mbps = bps_to_mbps(__atomic_load_n(&qp->cc.dcqcn.rc, __ATOMIC_RELAXED));
		cc->min_rate_mbps =
			bps_to_mbps(__atomic_load_n(&qp->cc.dcqcn.rc_min, __ATOMIC_RELAXED));
	}
	cc->cnps_sent = __atomic_load_n(&qp->stats.cnps_sent, __ATOMIC_RELAXED);
	cc->cnps_received = __atomic_load_n(&qp->stats.cnps_rcvd, __ATOMIC_RELAXED);
	return 0;
}
