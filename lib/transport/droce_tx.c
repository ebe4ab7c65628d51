/* SPDX-License-Identifier: BSD-3-Clause */
#include <string.h>

#include "droce_tx_inline.h"

void
droce_tx_release(struct droce_tx *tx)
{
	rte_pktmbuf_free_bulk(tx->spare, tx->nb_spare);
	tx->nb_spare = 0;
}

struct rte_mbuf *
droce_tx_start(struct droce_tx *tx, const struct droce_qp *qp, struct droce_av *av,
	       uint8_t opcode, uint32_t paylen, uint32_t dqpn, uint32_t psn, bool ackreq,
	       bool se)
{
	return droce_tx_start_inline(tx, qp, av, opcode, paylen, dqpn, psn, ackreq, se);
}

struct rte_mbuf *
droce_tx_again(struct droce_tx *tx, uint32_t psn, bool ackreq)
{
	return droce_tx_again_inline(tx, psn, ackreq);
}

/* Append the ICRC @p crc to the one-segment frame @p m. */
static void
tx_icrc_put(struct rte_mbuf *m, uint32_t crc)
{
	crc = rte_cpu_to_le_32(crc);
	if (unlikely(rte_pktmbuf_tailroom(m) < DROCE_ICRC_LEN))
		return;
	memcpy(rte_pktmbuf_mtod_offset(m, uint8_t *, rte_pktmbuf_data_len(m)), &crc,
	       DROCE_ICRC_LEN);
	m->data_len = (uint16_t)(m->data_len + DROCE_ICRC_LEN);
	m->pkt_len += DROCE_ICRC_LEN;
}

void
droce_tx_finish_long(struct droce_tx *tx, struct rte_mbuf *m)
{
	tx->staged_bytes += tx->paylen;
	if (tx->staged_bytes >= DROCE_TX_BURST_BYTES)
		tx->room_max = (uint16_t)(tx->n + 1);
	if (tx->icrc_ready) {
		tx->icrc_ready = false;
		tx_icrc_put(m, tx->icrc);
	} else {
		droce_icrc_append(m, tx->tmpl->l2_len);
	}
}

void
droce_tx_finish(struct droce_tx *tx, struct rte_mbuf *m)
{
	*tx->msgs += (tx->op->flags & (DROCE_OPF_LAST | DROCE_OPF_ACK)) == DROCE_OPF_LAST;
	*tx->payload_bytes += tx->paylen;
	droce_tx_finish_uncounted(tx, m);
}

void
droce_tx_seal(struct droce_tx *tx)
{
	droce_hdr_tmpl_seal_burst(tx->pkts, tx->unsealed);
	tx->unsealed = 0;
}

int
droce_av_route(struct droce_tx *tx, struct droce_av *av)
{
	const struct ibv_global_route *grh = &av->attr.grh;
	int rc;

	if (av->routed)
		return 0;
	droce_hdr_tmpl_invalidate(&av->tmpl);
	rc = droce_port_route(tx->port, tx->queue, grh->sgid_index, grh->dgid.raw, &av->l3);
	if (rc != 0)
		return rc;
	av->l3.ttl = grh->hop_limit != 0 ? grh->hop_limit : 64;
	droce_port_qos(tx->port, av->attr.sl, grh->traffic_class, &av->l3);
	av->l3.flow_label = grh->flow_label;
	av->routed = true;
	return 0;
}
