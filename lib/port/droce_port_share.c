/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Shared mode: a droce port on an ethdev the application configured and
 * started, and keeps using on its other queues (droce.h, "Sharing a port
 * with the application").
 *
 * droce reads the ethdev's settings and never changes them. Its engines
 * poll the queues the application reserved for them (what the driver's
 * flow rules steer there, droce_drv_hw_start()); the frames that reach the
 * application's own queues instead (no flow rules, or ARP and ND, which no
 * rule sends to droce) the application hands over with
 * droce_port_app_rx(), which sorts them in the caller's thread: droce's
 * go to their engine's app ring, the rest straight back. The engine
 * classifies what its app ring holds as it classifies the ethdev's frames
 * (droce_port_rx()).
 *
 * The application's mbufs may come from pools without droce's private
 * area (the parse result, DROCE_MBUF_PRIV_SIZE): such frames are copied
 * into droce's pool once, when droce takes them.
 */
#include <string.h>

#include <rte_arp.h>
#include <rte_errno.h>

#include "droce_port_priv.h"

/* The queue ids the application reserved: configured on the ethdev, and
 * each for one engine only. */
static int
share_queues_check(const struct droce_port *p)
{
	unsigned i, j;

	for (i = 0; i < p->nb_queues; i++) {
		if (p->q[i].qid >= p->dev_info.nb_rx_queues ||
		    p->q[i].qid >= p->dev_info.nb_tx_queues) {
			DROCE_PORT_LOG(ERR, "port %u: queue %u is not configured on the ethdev "
				       "(%u RX, %u TX queues)", p->port_id, p->q[i].qid,
				       p->dev_info.nb_rx_queues, p->dev_info.nb_tx_queues);
			return -EINVAL;
		}
		for (j = 0; j < i; j++)
			if (p->q[j].qid == p->q[i].qid)
				return -EINVAL;
	}
	return 0;
}

/* The IB MTU whose frames the application's Ethernet MTU carries (a PMD
 * that reports none is taken at its word: memif and ring pass anything). */
static void
share_mtu(struct droce_port *p)
{
	uint16_t eth_mtu, ib_mtu = p->ib_mtu;

	if (rte_eth_dev_get_mtu(p->port_id, &eth_mtu) != 0) {
		p->drv_ctx.mtu_set = true;
		return;
	}
	while (ib_mtu > 256 && ib_mtu + DROCE_PORT_L3_OVERHEAD > eth_mtu)
		ib_mtu /= 2;
	if (ib_mtu < p->ib_mtu)
		DROCE_PORT_LOG(NOTICE, "port %u: the ethdev's MTU %u (the application's) carries "
			       "IB MTU %u, not %u", p->port_id, eth_mtu, ib_mtu, p->ib_mtu);
	p->ib_mtu = ib_mtu;
	p->drv_ctx.eth_mtu = ib_mtu + DROCE_PORT_L3_OVERHEAD;
	p->drv_ctx.mtu_set = p->drv_ctx.eth_mtu <= eth_mtu;
}

int
droce_port_share_setup(struct droce_port *p)
{
	char name[RTE_RING_NAMESIZE];
	unsigned i;
	int ret = share_queues_check(p);

	if (ret != 0)
		return ret;
	p->drv_ctx.shared = true;
	share_mtu(p);
	/* As large as droce's pool: a full ring means droce's engines are
	 * far behind, and a frame dropped there the transport resends. */
	for (i = 0; i < p->nb_queues; i++) {
		snprintf(name, sizeof(name), "droce_app%u_%u", p->port_id, i);
		p->q[i].app = rte_ring_create(name, p->mp->size, rte_eth_dev_socket_id(p->port_id),
					      RING_F_SC_DEQ | RING_F_EXACT_SZ);
		if (p->q[i].app == NULL)
			return -rte_errno;
	}
	return 0;
}

/* @p m, or a copy of it in droce's pool when its own pool has no room for
 * the parse result (then @p m is freed). NULL: no mbuf for the copy. */
static struct rte_mbuf *
share_adopt_one(struct droce_port *p, struct rte_mbuf *m)
{
	struct rte_mbuf *c;

	if (likely(rte_pktmbuf_priv_size(m->pool) >= DROCE_MBUF_PRIV_SIZE))
		return m;
	c = rte_pktmbuf_copy(m, p->mp, 0, UINT32_MAX);
	rte_pktmbuf_free(m);
	__atomic_fetch_add(c != NULL ? &p->app_copied : &p->app_drops, 1, __ATOMIC_RELAXED);
	return c;
}

uint16_t
droce_port_adopt(struct droce_port *p, struct rte_mbuf **pkts, uint16_t n)
{
	uint16_t i, kept = 0;

	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = share_adopt_one(p, pkts[i]);

		if (m != NULL)
			pkts[kept++] = m;
	}
	return kept;
}

/* ARP asking for, or answering, the port's IPv4 address. */
static bool
share_arp_ours(const struct droce_port *p, struct rte_mbuf *m, uint32_t off)
{
	struct rte_arp_hdr buf;
	const struct rte_arp_hdr *arp = rte_pktmbuf_read(m, off, sizeof(buf), &buf);

	return arp != NULL && p->ipv4 != 0 &&
	       arp->arp_protocol == RTE_BE16(RTE_ETHER_TYPE_IPV4) &&
	       rte_be_to_cpu_32(arp->arp_data.arp_tip) == p->ipv4;
}

/* An NS for one of the port's IPv6 GIDs, or an NA sent to one of them
 * (the answer to droce's solicitation). */
static bool
share_nd_ours(const struct droce_port *p, struct rte_mbuf *m, uint32_t off, uint16_t vlan_tci)
{
	struct droce_nd_msg msg;

	if (droce_nd_parse(m, off, vlan_tci, &msg) != DROCE_ND_OK)
		return false;
	if (msg.type == DROCE_ND_NS)
		return !droce_gid_is_v4mapped(msg.target) &&
		       droce_port_gid_find(p, msg.target) >= 0;
	return droce_port_gid_find(p, msg.dst) >= 0;
}

/* The engine that takes @p m, or -1: the frame is the application's. */
static int
share_owner(struct droce_port *p, struct rte_mbuf *m)
{
	struct droce_pkt pkt;
	uint16_t vlan_tci;
	rte_be16_t type;
	uint32_t off;

	if (droce_port_l2(p, m, true, &type, &off, &vlan_tci) != DROCE_L2_OURS)
		return -1;
	switch (type) {
	case RTE_BE16(RTE_ETHER_TYPE_ARP):
		return share_arp_ours(p, m, off) ? 0 : -1;
	case RTE_BE16(RTE_ETHER_TYPE_IPV6):
		if (share_nd_ours(p, m, off, vlan_tci))
			return 0;
		/* fall through */
	case RTE_BE16(RTE_ETHER_TYPE_IPV4):
		if (droce_pkt_parse(m, &pkt, false) != DROCE_PARSE_OK ||
		    !droce_port_roce_ours(p, &pkt))
			return -1;
		/* Multicast goes to engine 0, which copies it to the others. */
		return pkt.qpn == DROCE_QPN_MCAST ? 0 : (int)droce_qpn_engine(pkt.qpn, p->nb_queues);
	default:
		return -1;
	}
}

uint16_t
droce_port_app_rx(struct droce_port *p, struct rte_mbuf **pkts, uint16_t n)
{
	uint16_t i, back = 0;
	uint64_t taken = 0, drops = 0;
	int e;

	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];

		e = share_owner(p, m);
		if (e < 0) {
			pkts[back++] = m;
			continue;
		}
		m = share_adopt_one(p, m);
		if (m == NULL)
			continue;
		if (rte_ring_mp_enqueue(p->q[e].app, m) == 0) {
			taken++;
		} else {
			rte_pktmbuf_free(m);
			drops++;
		}
	}
	if (taken != 0)
		__atomic_fetch_add(&p->app_taken, taken, __ATOMIC_RELAXED);
	if (drops != 0)
		__atomic_fetch_add(&p->app_drops, drops, __ATOMIC_RELAXED);
	if (back != 0)
		__atomic_fetch_add(&p->app_returned, back, __ATOMIC_RELAXED);
	return back;
}
