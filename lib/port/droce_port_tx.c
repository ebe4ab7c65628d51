/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * TX, per queue: frames for the port itself (its MAC, or one of its IP
 * addresses) go to the queue's loopback ring that droce_port_rx() of the
 * same queue drains (and hands to the owner of the destination QP); the
 * rest go to the ethdev's TX queue. Order is kept: frames are taken in runs of the same
 * destination, and taking stops at the first frame that does not fit, so
 * the caller keeps exactly the tail it got back.
 *
 * Looped back frames are parsed into their mbuf's private area like
 * received ones, so they must come from droce_port_mempool() (or a pool
 * with a private area as large).
 *
 * With TX faults on, frames pass the fault stage before that split. The
 * stage's ready queue is then the port's pending queue: what it holds
 * goes out before anything new is taken, and new frames are taken only
 * as far as it has room, so a full ethdev still loses nothing.
 */
#include <errno.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>

#include "droce_port_priv.h"

bool
droce_port_frame_local(const struct droce_port *p, const void *frame, uint32_t len)
{
	const uint8_t *d = frame;
	const struct rte_ether_hdr *eh = frame;
	uint32_t off = sizeof(*eh);
	rte_be16_t type;

	if (len < sizeof(*eh))
		return false;
	if (rte_is_same_ether_addr(&eh->dst_addr, &p->mac))
		return true;
	if (!rte_is_unicast_ether_addr(&eh->dst_addr))
		return false;
	type = eh->ether_type;
	if (type == RTE_BE16(RTE_ETHER_TYPE_VLAN)) {
		if (len < off + sizeof(struct rte_vlan_hdr))
			return false;
		type = ((const struct rte_vlan_hdr *)(d + off))->eth_proto;
		off += sizeof(struct rte_vlan_hdr);
	}
	if (type == RTE_BE16(RTE_ETHER_TYPE_IPV4) &&
	    len >= off + sizeof(struct rte_ipv4_hdr))
		return p->ipv4 != 0 &&
		       ((const struct rte_ipv4_hdr *)(d + off))->dst_addr ==
		       rte_cpu_to_be_32(p->ipv4);
	if (type == RTE_BE16(RTE_ETHER_TYPE_IPV6) &&
	    len >= off + sizeof(struct rte_ipv6_hdr))
		return droce_port_gid_find(p,
			((const struct rte_ipv6_hdr *)(d + off))->dst_addr) >= 0;
	return false;
}

/* Does @p m go to this port itself? Reads only the first segment, where
 * the headers of every frame droce builds are. */
static bool
tx_is_local(const struct droce_port *p, const struct rte_mbuf *m)
{
	return droce_port_frame_local(p, rte_pktmbuf_mtod(m, const void *),
				      rte_pktmbuf_data_len(m));
}

/* The ethdev inserts 802.1Q tags (caps.tx_vlan_insert): each tag droce
 * wrote moves into its mbuf, and the NIC tags the frame as it leaves. A
 * frame the ethdev did not take comes here again untagged, and stays as
 * it is. */
static void
tx_vlan_offload(struct rte_mbuf **pkts, uint16_t n)
{
	for (uint16_t i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		struct rte_ether_hdr *eh = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
		const struct rte_vlan_hdr *vh = (const struct rte_vlan_hdr *)(eh + 1);

		if (eh->ether_type != RTE_BE16(RTE_ETHER_TYPE_VLAN) ||
		    rte_pktmbuf_data_len(m) < sizeof(*eh) + sizeof(*vh))
			continue;
		m->vlan_tci = rte_be_to_cpu_16(vh->vlan_tci);
		m->ol_flags |= RTE_MBUF_F_TX_VLAN;
		/* the MACs over the tag: the ethertype after it follows them */
		memmove((uint8_t *)eh + RTE_VLAN_HLEN, eh, 2 * RTE_ETHER_ADDR_LEN);
		rte_pktmbuf_adj(m, RTE_VLAN_HLEN);
	}
}

static uint16_t
tx_wire(struct droce_port *p, struct droce_port_queue *pq, struct droce_capture *c,
	struct rte_mbuf **pkts, uint16_t n)
{
	struct rte_mbuf *copies[DROCE_PORT_BURST], *mcast[DROCE_PORT_BURST];
	uint64_t t0;
	uint16_t k;
	bool loop;

	/* Not started yet: like a link that is down, it takes nothing. */
	if (unlikely(!droce_port_started(p)))
		return 0;
	/* Copy before sending: PMDs that copy (memif, af_packet) free the
	 * mbuf inside rte_eth_tx_burst(). Copies of frames the ethdev did
	 * not take are dropped: they are captured when sent again. */
	if (c != NULL)
		droce_capture_copy(c, p->port_id, pkts, n, RTE_PCAPNG_DIRECTION_OUT,
				   copies);
	loop = droce_port_mcast_copy(p, pkts, n, mcast);
	if (p->drv_ctx.caps.tx_vlan_insert)
		tx_vlan_offload(pkts, n);
	t0 = pq->cycles.timed ? rte_get_tsc_cycles() : 0;
	k = droce_port_ethdev_tx_burst(p->burst_lock, p->port_id, pq->qid, pkts, n);
	/* the port's cycles, not droce's */
	if (pq->cycles.timed) {
		pq->cycles.tx_end = rte_get_tsc_cycles();
		pq->cycles.tx += pq->cycles.tx_end - t0;
	}
	if (c != NULL) {
		droce_capture_write(c, copies, k);
		rte_pktmbuf_free_bulk(copies + k, n - k);
	}
	if (unlikely(loop))
		droce_port_mcast_copies_done(pq, mcast, n, k);
	return k;
}

static uint16_t
tx_loopback(struct droce_port *p, struct droce_port_queue *pq, struct droce_capture *c,
	    struct rte_mbuf **pkts, uint16_t n)
{
	uint16_t k = (uint16_t)rte_ring_sp_enqueue_burst(pq->lo, (void **)pkts, n, NULL);

	/* The ring keeps them untouched until this thread's next RX. */
	if (c != NULL)
		droce_capture_frames(c, p->port_id, pkts, k, RTE_PCAPNG_DIRECTION_OUT);
	return k;
}

/* Loopback or wire, in runs of the same destination; all wire when the
 * caller knows them @p remote. @return frames taken. */
static uint16_t
tx_send(struct droce_port *p, struct droce_port_queue *pq, struct droce_capture *c,
	struct rte_mbuf **pkts, uint16_t n, bool remote)
{
	uint16_t sent = 0, run, k;
	bool local;

	while (sent < n) {
		if (remote) {
			local = false;
			run = (uint16_t)RTE_MIN(n - sent, DROCE_PORT_BURST);
		} else {
			local = tx_is_local(p, pkts[sent]);
			for (run = 1; run < DROCE_PORT_BURST && sent + run < n &&
			     tx_is_local(p, pkts[sent + run]) == local; run++)
				;
		}
		k = local ? tx_loopback(p, pq, c, pkts + sent, run) :
			    tx_wire(p, pq, c, pkts + sent, run);
		sent += k;
		if (k < run)
			break;
	}
	DROCE_STAT_ADD(pq, tx_frames, sent);
	return sent;
}

void
droce_port_tx_fault_flush(struct droce_port *p, struct droce_port_queue *pq,
			  struct droce_capture *c, uint64_t now)
{
	struct rte_mbuf *pkts[DROCE_PORT_BURST];
	uint16_t n, k;

	droce_fault_sync(&pq->fault_tx);
	do {
		n = droce_fault_ready(&pq->fault_tx, pkts, DROCE_PORT_BURST, now);
		k = n != 0 ? tx_send(p, pq, c, pkts, n, false) : 0;
		droce_fault_taken(&pq->fault_tx, k);
	} while (k == DROCE_PORT_BURST);
}

/* Through the fault stage: what it has ready first, then as many new
 * frames as it has room for, then what of them is ready. */
static uint16_t
tx_faulty(struct droce_port *p, struct droce_port_queue *pq, struct droce_capture *c,
	  struct rte_mbuf **pkts, uint16_t n)
{
	uint64_t now = rte_get_tsc_cycles();
	uint16_t k;

	droce_port_tx_fault_flush(p, pq, c, now);
	k = RTE_MIN(n, droce_fault_room(&pq->fault_tx));
	droce_fault_input(&pq->fault_tx, pkts, k, now);
	droce_port_tx_fault_flush(p, pq, c, now);
	return k;
}

uint16_t
droce_port_queue_tx(struct droce_port *p, struct droce_port_queue *pq,
		    struct rte_mbuf **pkts, uint16_t n, bool remote)
{
	struct droce_capture *c = droce_capture_enter(p);
	uint16_t sent;

	/* The fault stage may hold frames of other calls: it asks each. */
	if (unlikely(droce_fault_busy(&pq->fault_tx)))
		sent = tx_faulty(p, pq, c, pkts, n);
	else
		sent = tx_send(p, pq, c, pkts, n, remote);
	if (sent < n)
		DROCE_STAT_ADD(pq, tx_busy, n - sent);
	droce_capture_exit(p, c);
	return sent;
}

int
droce_port_ctl_send(struct droce_port *p, struct droce_port_queue *pq, struct rte_mbuf *m,
		    int written, bool remote)
{
	if (written == 0 && droce_port_queue_tx(p, pq, &m, 1, remote) == 1) {
		DROCE_STAT_ADD(pq, tx_arp, 1);
		return 0;
	}
	rte_pktmbuf_free(m);
	return written != 0 ? written : -ENOBUFS;
}

uint16_t
droce_port_tx(struct droce_port *p, uint16_t q, struct rte_mbuf **pkts, uint16_t n)
{
	return droce_port_queue_tx(p, &p->q[q], pkts, n, false);
}

uint16_t
droce_port_tx_remote(struct droce_port *p, uint16_t q, struct rte_mbuf **pkts, uint16_t n)
{
	return droce_port_queue_tx(p, &p->q[q], pkts, n, true);
}
