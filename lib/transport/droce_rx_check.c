/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The validity check of received packets. The opcode table in lib/wire
 * says which QPs an opcode may be addressed to; the tables here say which
 * QP states receive requests and responses, and which opcode may follow
 * which within a message. Handlers run only on packets that passed, so
 * none of them has to guess what a hostile peer might have sent.
 */
#include "droce_transport.h"

/* The receiver kind of each QP type (0: receives nothing). */
static uint8_t
qp_rcv(enum ibv_qp_type type)
{
	switch (type) {
	case IBV_QPT_RC:
		return DROCE_RCV_RC;
	case IBV_QPT_UC:
		return DROCE_RCV_UC;
	case IBV_QPT_UD:
		return DROCE_RCV_UD;
	case IBV_QPT_XRC_SEND:
		return DROCE_RCV_XRC_INI;
	case IBV_QPT_XRC_RECV:
		return DROCE_RCV_XRC_TGT;
	default:
		return 0;
	}
}

/*
 * QP states in which requests and responses are received (IBA 10.3.1):
 * from RTR on for requests; responses only once the QP sends (RTS and
 * later). SQE exists only for UC and UD, which get no responses.
 */
#define STATE_BIT(s) (1u << (s))
static const uint32_t rx_states[2] = {
	[0] = STATE_BIT(IBV_QPS_RTR) | STATE_BIT(IBV_QPS_RTS) | STATE_BIT(IBV_QPS_SQD) |
	      STATE_BIT(IBV_QPS_SQE),		/* requests */
	[1] = STATE_BIT(IBV_QPS_RTS) | STATE_BIT(IBV_QPS_SQD),	/* responses */
};

/* A BTH P_Key matches the port's only partition, the default one: the
 * same 15-bit key (a full member takes limited and full members). */
static bool
pkey_ok(const struct droce_bth *bth)
{
	return (rte_be_to_cpu_16(bth->pkey) & 0x7fff) == (DROCE_PKEY_DEFAULT & 0x7fff);
}

/* Requests that complete a receive WQE: SENDs and WRITEs with immediate. */
static bool
consumes_recv(uint32_t flags)
{
	return (flags & DROCE_OPF_SEND) ||
	       ((flags & DROCE_OPF_WRITE) && (flags & DROCE_OPF_IMMDT));
}

/* The counter of what refuses @p pkt for @p qp, or NULL when nothing
 * does. Inlined into both callers: every received packet takes it. */
static __rte_always_inline uint64_t *
rx_refusal(struct droce_rx_stats *s, const struct droce_qp *qp, struct rte_mbuf *m,
	   const struct droce_pkt *pkt)
{
	const struct droce_opcode_info *op = pkt->op;
	const struct droce_bth *bth = droce_pkt_hdr(m, pkt, DROCE_HDR_BTH);
	bool resp = (op->flags & DROCE_OPF_RESP) != 0;

	if (!(op->to & qp_rcv(qp->type)))
		return (pkt->opcode & DROCE_SVC_MASK) != droce_qp_service(qp) ?
			       &s->rx_wrong_service : &s->rx_bad_qp_type;
	if (!pkey_ok(bth))
		return &s->rx_bad_pkey;
	if (!(rx_states[resp] & STATE_BIT(droce_qp_state(qp))))
		return &s->rx_bad_state;
	/* An XRC target takes its receive CQ from the SRQ each packet names. */
	if ((resp && qp->scq == NULL) ||
	    (!resp && consumes_recv(op->flags) && qp->rcq == NULL &&
	     qp->type != IBV_QPT_XRC_RECV))
		return &s->rx_no_resources;
	if (qp->type == IBV_QPT_UD) {
		const struct droce_deth *deth = droce_pkt_hdr(m, pkt, DROCE_HDR_DETH);

		if (rte_be_to_cpu_32(deth->qkey) != qp->attr.qkey)
			return &s->rx_bad_qkey;
	}
	return NULL;
}

bool
droce_rx_check(struct droce_tx *tx, const struct droce_qp *qp, struct rte_mbuf *m,
	       const struct droce_pkt *pkt)
{
	uint64_t *why = rx_refusal(tx->rxs, qp, m, pkt);

	if (why != NULL)
		(*why)++;
	return why == NULL;
}

bool
droce_rx_acceptable(struct droce_tx *tx, const struct droce_qp *qp, struct rte_mbuf *m,
		    const struct droce_pkt *pkt)
{
	return rx_refusal(tx->rxs, qp, m, pkt) == NULL;
}

/*
 * The responder's opcode sequence (IBA 9.8.3): what a packet must have
 * and must not have, by what the responder is in the middle of.
 */
enum resp_seq { SEQ_IDLE, SEQ_IN_SEND, SEQ_IN_WRITE };

static const struct {
	uint32_t need;    /* flags the packet must all have */
	uint32_t forbid;  /* flags it must not have */
} resp_seq_rules[] = {
	/* A new message: FIRST or ONLY of anything (READ and atomics are ONLY). */
	[SEQ_IDLE] = { .need = DROCE_OPF_FIRST },
	/* The message goes on: MIDDLE or LAST of the same operation. */
	[SEQ_IN_SEND] = { .need = DROCE_OPF_SEND, .forbid = DROCE_OPF_FIRST },
	[SEQ_IN_WRITE] = { .need = DROCE_OPF_WRITE, .forbid = DROCE_OPF_FIRST },
};

bool
droce_rx_resp_seq_ok(const struct droce_qp *qp, const struct droce_pkt *pkt)
{
	enum resp_seq seq = qp->resp.in_send ? SEQ_IN_SEND :
			    qp->resp.in_write ? SEQ_IN_WRITE : SEQ_IDLE;
	uint32_t flags = pkt->op->flags;

	return (flags & resp_seq_rules[seq].need) == resp_seq_rules[seq].need &&
	       !(flags & resp_seq_rules[seq].forbid);
}

bool
droce_rx_comp_seq_ok(const struct droce_qp *qp, const struct droce_pkt *pkt)
{
	return qp->comp.in_read || (pkt->op->flags & DROCE_OPF_FIRST);
}
