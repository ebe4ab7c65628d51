/* SPDX-License-Identifier: BSD-3-Clause */
/* What the requester and completer share, inside lib/transport. */
#ifndef DROCE_REQ_PRIV_H
#define DROCE_REQ_PRIV_H

#include "droce_qp.h"

/** Packets a requester sends and has not had acknowledged, at most. */
#define DROCE_REQ_WINDOW 1024

/** (Re)start the ACK timer when requests are outstanding, else stop it. */
void droce_req_timer_rearm(struct droce_qp *qp, uint64_t now);

/** An RNR NAK arrived: wait the time @p timer_code says, then resend. */
void droce_req_rnr_wait(struct droce_qp *qp, uint64_t now, uint8_t timer_code);

/** Where a go-back resumes WQE @p w, a READ or atomic whose answer went
 *  missing: a READ at its first byte not yet received, an atomic whole. */
uint32_t droce_req_rd_atomic_resume(const struct droce_qp *qp, const struct droce_send_wqe *w);

/** Retire WQEs acknowledged earlier whose completion found the CQ full. */
void droce_comp_pending(struct droce_qp *qp);

#endif
