/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The RoCE transport, split as in rxe: the requester turns send WQEs into
 * packets, the responder answers request packets (receive queue, memory
 * regions, ACK/NAK, READ and atomic responses), the completer turns ACKs
 * and responses into completions.
 *
 * Every function here runs in the engine that owns the QP, so none of
 * them locks anything. Packets go out through a struct droce_tx, the
 * engine's staging area: when it is full, generation stops and resumes on
 * a later iteration, so a slow link pushes back instead of losing packets.
 */
#ifndef DROCE_TRANSPORT_H
#define DROCE_TRANSPORT_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf.h>

#include "droce_wire.h"
#include "droce_qp.h"
#include "droce_mr.h"
#include "droce_num_table.h"

#ifdef __cplusplus
extern "C" {
#endif

struct droce_port;

/** Most packets staged for one transmit burst. */
#define DROCE_TX_BURST 64

/** The engine's transmit staging, handed to the transport. */
struct droce_tx {
	struct droce_port *port;
	struct rte_mempool *mp;
	const struct droce_mr_table *mrt;
	const struct droce_num_table *srqt; /**< XRC SRQs by number */
	uint64_t now;                /**< rte_get_tsc_cycles() of this iteration */
	uint16_t n;
	struct rte_mbuf *pkts[DROCE_TX_BURST];
	uint64_t *no_mbuf;           /**< the engine's count of failed mbuf allocations */
};

/** Free places in the staging area. */
static inline unsigned
droce_tx_room(const struct droce_tx *tx)
{
	return DROCE_TX_BURST - tx->n;
}

/**
 * Start a packet for @p qp to @p av with @p opcode and @p paylen bytes of
 * payload: the L2/L3/UDP headers and the BTH are written, the extension
 * headers are left for the caller at droce_tx_hdr().
 * @return the mbuf, or NULL when no mbuf or no staging room is left.
 */
struct rte_mbuf *droce_tx_start(struct droce_tx *tx, const struct droce_qp *qp,
				const struct droce_av *av, uint8_t opcode, uint32_t paylen,
				uint32_t dqpn, uint32_t psn, bool ackreq, bool se);

/**
 * Resolve @p av's destination MAC once (ARP may take a few iterations) and
 * take hop limit, traffic class and flow label from its GRH.
 * @return 0 when @p av can be sent to, -EAGAIN while resolution goes on,
 * another negative errno when the destination is unreachable.
 */
int droce_av_route(struct droce_tx *tx, struct droce_av *av);

/** Pointer to extension header @p h (or the payload) of a packet being built. */
uint8_t *droce_tx_hdr(struct rte_mbuf *m, enum droce_hdr h);

/** Append the ICRC and stage the packet. */
void droce_tx_finish(struct droce_tx *tx, struct rte_mbuf *m);

/* ---- requester ---- */

/**
 * Send what the QP's send queue allows now (new WQEs, retransmissions).
 * @return true while the requester has work left (more to send, or packets
 * awaiting acknowledgement whose timer runs).
 */
bool droce_req_run(struct droce_tx *tx, struct droce_qp *qp);

/* ---- responder ---- */

/** Handle one request packet addressed to @p qp. The mbuf stays the caller's. */
void droce_resp_rx(struct droce_tx *tx, struct droce_qp *qp, struct rte_mbuf *m,
		   const struct droce_pkt *pkt);

/** Send owed ACKs/NAKs and READ responses. @return true while some are left. */
bool droce_resp_run(struct droce_tx *tx, struct droce_qp *qp);

/**
 * Send only the ACK or NAK @p qp owes. A QP being destroyed still does
 * this (its application may have seen the completion before the ACK left,
 * and a NIC would have sent it already); it touches no application memory.
 * @return true when no room was left to send it.
 */
bool droce_resp_send_owed(struct droce_tx *tx, struct droce_qp *qp);

/* ---- completer ---- */

/** Handle one response packet (ACK, NAK, READ response, atomic ACK). */
void droce_comp_rx(struct droce_tx *tx, struct droce_qp *qp, struct rte_mbuf *m,
		   const struct droce_pkt *pkt);

/**
 * Complete every outstanding send and receive WQE of @p qp with
 * IBV_WC_WR_FLUSH_ERR (the QP is in the error state). Safe to call from
 * the engine, or from a destroying thread once the engine let go.
 */
void droce_qp_flush(struct droce_qp *qp);

/** Complete every outstanding send WQE with IBV_WC_WR_FLUSH_ERR. */
void droce_qp_flush_sq(struct droce_qp *qp);

/**
 * A fatal error in the engine: complete the WQE at the head of the send
 * queue with @p status, then move RC/XRC QPs to the error state (all
 * flushed) and UC/UD QPs to the send queue error state (SQE: sends
 * flushed, receives go on).
 */
void droce_qp_fatal(struct droce_qp *qp, enum ibv_wc_status status);

/**
 * The work completion for send WQE @p w ending with @p status.
 * @return false when none is due (a successful unsignaled WQE).
 */
bool droce_send_wc(const struct droce_qp *qp, const struct droce_send_wqe *w,
		   enum ibv_wc_status status, struct ibv_wc *wc);

/** Retire the WQE at the head of the send queue with @p status, and
 *  report it if due. */
void droce_sq_retire(struct droce_qp *qp, enum ibv_wc_status status);

#ifdef __cplusplus
}
#endif
#endif /* DROCE_TRANSPORT_H */
