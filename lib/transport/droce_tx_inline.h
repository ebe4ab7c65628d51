/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The start of a frame (droce_tx_start(), and droce_tx_again() for one
 * like the last), its finish but for the counts (droce_tx_finish()) and a
 * short payload's copy (droce_tx_payload_short()) as inline functions,
 * for the one caller on every small message's path: the requester's run
 * of messages of one packet (req_only_run()). Inlined there, they lose
 * their calls' own cost and what the caller's constants decide (together
 * some 140 instructions of a 64-byte WRITE's 900); every other sender
 * calls droce_tx.c's and droce_zcopy.c's copies.
 */
#ifndef DROCE_TX_INLINE_H
#define DROCE_TX_INLINE_H

#include <string.h>

#include <rte_memcpy.h>

#include "droce_transport.h"
#include "droce_port.h"

/*
 * An mbuf for a frame: from the spares, refilled in bulk. When the pool
 * has fewer than a bulk left (a get is all or nothing), one at a time.
 * The spares come raw from the pool, not reset (rte_pktmbuf_alloc_bulk()
 * was some 10 instructions per frame): the pool's own invariant makes
 * each a direct mbuf of one segment and one reference, a frame's start
 * sets its lengths and offloads, and this what else a frame reads: where
 * its data starts, and no offload flags (a received frame's, left in a
 * freed mbuf, would mean something to a driver).
 */
static __rte_always_inline struct rte_mbuf *
droce_tx_mbuf(struct droce_tx *tx)
{
	struct rte_mbuf *m;

	if (tx->nb_spare == 0) {
		if (rte_mempool_get_bulk(tx->mp, (void **)tx->spare, DROCE_TX_SPARE) != 0)
			return rte_pktmbuf_alloc(tx->mp);
		tx->nb_spare = DROCE_TX_SPARE;
	}
	m = tx->spare[--tx->nb_spare];
	/* The next spare's lines that its frame's start writes: the mbuf's
	 * two, and the frame's first three (the headers, and a small
	 * message's payload and ICRC). Since the last burst the port's copy
	 * (memif's, into its shared ring) has pushed them out of L1: a
	 * profile of the 64-byte sender over memif had a sixth of the
	 * engine's samples on the first store into each line, some 7 cycles
	 * a message that a fetch one frame ahead takes off (alternating
	 * runs). On a ring port, where they stay in L1, it costs nothing.
	 * Where the frame starts is the engine's constant (@ref
	 * droce_tx.frame_off), not the pool's fields: the fetch reads
	 * nothing but the spare's address. */
	if (tx->nb_spare != 0) {
		const char *next = (const char *)tx->spare[tx->nb_spare - 1];
		const char *frame = next + tx->frame_off;

		rte_prefetch0(next);
		rte_prefetch0(next + RTE_CACHE_LINE_SIZE);
		rte_prefetch0(frame);
		rte_prefetch0(frame + RTE_CACHE_LINE_SIZE);
		rte_prefetch0(frame + 2 * RTE_CACHE_LINE_SIZE);
	}
	m->data_off = RTE_PKTMBUF_HEADROOM;
	m->ol_flags = 0;
	return m;
}

/* An mbuf for the next frame to stage, or NULL when no room or no mbuf
 * is left (counted). Inlined in every frame's start. */
static __rte_always_inline struct rte_mbuf *
droce_tx_frame_mbuf(struct droce_tx *tx)
{
	struct rte_mbuf *m;

	if (droce_tx_room(tx) == 0)
		return NULL;
	m = droce_tx_mbuf(tx);
	if (m == NULL)
		(*tx->no_mbuf)++;
	return m;
}

/** droce_tx_start(), inline. */
static __rte_always_inline struct rte_mbuf *
droce_tx_start_inline(struct droce_tx *tx, const struct droce_qp *qp, struct droce_av *av,
		      uint8_t opcode, uint32_t paylen, uint32_t dqpn, uint32_t psn, bool ackreq,
		      bool se)
{
	const struct droce_opcode_info *op = &droce_opcode_table[opcode];
	unsigned pad = (4 - (paylen & 3)) & 3;
	uint32_t l4len = op->hdr_len + paylen + pad;
	struct droce_hdr_tmpl *t;
	struct rte_mbuf *m;
	unsigned bth_off;
	uint32_t len;
	uint8_t tclass;
	uint8_t *p;

	m = droce_tx_frame_mbuf(tx);
	if (m == NULL)
		return NULL;
	/* The AV's class keeps its DSCP; the ECN bits are the port's (a CNP
	 * goes Not-ECT, as NICs send it). A UD address handle may serve QPs of
	 * several engines at once: its frames use the engine's own template,
	 * rebuilt when the AH changes. */
	tclass = (uint8_t)((av->l3.tclass & ~0x3u) | (opcode == DROCE_OPCODE_CNP ? 0 : tx->cc.ecn));
	/* A QP's own template is invalidated where its addresses are routed
	 * (droce_av_route()); the engine's one for UD compares them. */
	t = av == &qp->av ?
		droce_hdr_tmpl_get_owned(&av->tmpl, &av->l3, qp->qpn, dqpn, tclass) :
		droce_hdr_tmpl_get(&tx->ud_tmpl, &av->l3,
				   droce_udp_sport(av->l3.flow_label, qp->qpn, dqpn), tclass);
	/* Loopback is decided once per template, not per frame by the port. */
	if (unlikely(t->local < 0))
		t->local = droce_port_frame_local(tx->port, t->sent, t->len);
	tx->local |= t->local;
	/* A new mbuf is one empty segment: the frame's length is set, not
	 * appended (rte_pktmbuf_append() would look for the last segment).
	 * The template's copy may reach past a short frame's end. */
	len = t->len + l4len;
	if (unlikely(RTE_MAX(len, (uint32_t)DROCE_HDR_TMPL_COPY) > tx->frame_room)) {
		rte_pktmbuf_free(m);
		(*tx->no_mbuf)++;
		return NULL;
	}
	m->data_len = (uint16_t)len;
	m->pkt_len = len;
	tx->frame_len = (uint16_t)len;
	p = rte_pktmbuf_mtod(m, uint8_t *);
	bth_off = droce_hdr_tmpl_start(t, p, l4len);
	tx->tmpl = t;
	tx->bth = p + bth_off;
	tx->op = op;
	tx->paylen = paylen;
	droce_bth_set((struct droce_bth *)(p + bth_off), opcode, se, pad, DROCE_PKEY_DEFAULT,
		      dqpn, ackreq, psn);
	if (pad)
		memset(p + bth_off + op->hdr_len + paylen, 0, pad);
	/* Remember where things are for droce_tx_hdr() (once the frame is
	 * built) and the ICRC. */
	m->tx_offload = t->tx_offload;
	return m;
}

/** droce_tx_again(), inline. */
static __rte_always_inline struct rte_mbuf *
droce_tx_again_inline(struct droce_tx *tx, uint32_t psn, bool ackreq)
{
	const struct rte_mbuf *prev = tx->pkts[tx->n - 1];
	const uint8_t *from = rte_pktmbuf_mtod(prev, const uint8_t *);
	unsigned pad = (4 - (tx->paylen & 3)) & 3;
	uint16_t len = tx->frame_len;
	struct rte_mbuf *m;
	uint8_t *p;

	RTE_BUILD_BUG_ON(DROCE_HDR_TMPL_MAX + sizeof(struct droce_bth) > DROCE_HDR_TMPL_COPY);
	m = droce_tx_frame_mbuf(tx);
	if (m == NULL)
		return NULL;
	/* From the pool the last frame came from: the same room. */
	m->data_len = len;
	m->pkt_len = len;
	m->tx_offload = prev->tx_offload;
	p = rte_pktmbuf_mtod(m, uint8_t *);
	/* The headers up to the BTH's end, and the start of what the caller
	 * writes next. */
	memcpy(p, from, DROCE_HDR_TMPL_COPY);
	tx->bth = p + (tx->bth - from);
	((struct droce_bth *)tx->bth)->apsn =
		rte_cpu_to_be_32((ackreq ? DROCE_BTH_ACKREQ : 0) | (psn & DROCE_PSN_MASK));
	if (pad)
		memset(p + len - pad, 0, pad);
	return m;
}

/*
 * A frame of DROCE_COPY_CRC_MIN payload bytes or more (only small frames
 * are counted apart from these: 64 of them stay far below the budget):
 * counted against the burst's DROCE_TX_BURST_BYTES, and its ICRC written,
 * the one computed as its payload was copied or now (such a frame is too
 * long to be sealed at the flush). Out of line, in droce_tx.c.
 */
void droce_tx_finish_long(struct droce_tx *tx, struct rte_mbuf *m);

/**
 * droce_tx_finish(), inline, but for the engine's counts of messages and
 * payload bytes: a caller that builds many frames at once adds them up
 * itself (req_only_run(); per frame, two counters through pointers,
 * which the compiler cannot keep in registers).
 */
static __rte_always_inline void
droce_tx_finish_uncounted(struct droce_tx *tx, struct rte_mbuf *m)
{
	RTE_BUILD_BUG_ON(DROCE_TX_BURST > 64);
	if (unlikely(tx->paylen >= DROCE_COPY_CRC_MIN))
		droce_tx_finish_long(tx, m);
	else if (droce_hdr_tmpl_finish_later(tx->tmpl, m) > 0)
		tx->unsealed |= UINT64_C(1) << tx->n;
	tx->pkts[tx->n++] = m;
}

/**
 * droce_tx_payload() of a message's whole payload of @p len bytes, short
 * of DROCE_COPY_CRC_MIN, inline: from one SGE of a region it may read,
 * and too short to go by reference (the zero-copy gate read first when
 * this iteration has not read it yet), it is copied here (a copy of a few
 * dozen bytes was some 50 instructions of calls and their arguments);
 * anything else goes to droce_tx_payload().
 */
static __rte_always_inline int
droce_tx_payload_short(struct droce_tx *tx, struct rte_mbuf *m, uint32_t pd_handle,
		       const struct ibv_sge *sge, unsigned num_sge, uint32_t len,
		       struct droce_qp *qp, struct droce_send_wqe *w)
{
	const uint8_t *src;

	RTE_BUILD_BUG_ON(DROCE_COPY_CRC_MIN > DROCE_COPY_VEC_MIN);
	if (unlikely(tx->zc_gate_at != tx->now))
		droce_tx_zc_gate(tx);
	if (likely(len != 0 && len < DROCE_COPY_CRC_MIN && len < tx->zc_from)) {
		/* A send reads its own regions, which every region allows. */
		src = droce_sge_one_addr(tx->mrt, pd_handle, sge, num_sge, 0, len, 0);
		if (likely(src != NULL)) {
			(*tx->zc_copy_count)++;
			/* Into the frame's own new mbuf, which no region
			 * can overlap: rte_memcpy(), inline, not a call of
			 * memmove() for a few dozen bytes. */
			rte_memcpy(droce_tx_cur(tx, DROCE_HDR_PAYLOAD), src, len);
			return 0;
		}
	}
	return droce_tx_payload(tx, m, pd_handle, sge, num_sge, 0, len, 0, qp, w);
}

#endif /* DROCE_TX_INLINE_H */
