/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * UD multicast on a port: the groups its QPs joined (ibv_attach_mcast),
 * the MACs the port accepts for them, and the local copy of what the port
 * sends to a group it has joined itself.
 *
 * A RoCEv2 multicast GID is an IPv6 multicast address (ff00::/8) or an
 * IPv4-mapped one (::ffff:224.0.0.0/4); its frames go to the multicast MAC
 * of that address (RFC 1112: 01:00:5e and the low 23 bits; RFC 2464:
 * 33:33 and the low 32 bits), as rxe sends them through the kernel.
 *
 * The table is written by application threads and read by the engine
 * only for multicast frames, under a reader-writer lock. The ethdev's
 * multicast filter holds the MACs of the groups joined and those IPv6
 * neighbour discovery needs (all nodes, and the solicited-node group of
 * each IPv6 GID: a peer's NS for one of droce's addresses goes there),
 * programmed when the GID table is built and whenever a group comes or
 * goes; where the PMD has no filter list (virtual ports) all-multicast
 * reception goes on instead, and droce filters by MAC itself, as it does
 * for unicast. With an IPv4 group joined the port also takes IGMP's
 * general queries (all systems, 224.0.0.1; MLD's go to all nodes, which
 * it takes for ND), and each group's first member and last member's
 * going are told to the network (droce_mcast_report.c).
 */
#include <errno.h>
#include <string.h>

#include "droce_port_priv.h"

bool
droce_gid_is_mcast(const uint8_t gid[16])
{
	return gid[0] == 0xff || (droce_gid_is_v4mapped(gid) && (gid[12] & 0xf0) == 0xe0);
}

bool
droce_gid_mcast_mac(const uint8_t gid[16], struct rte_ether_addr *mac)
{
	if (!droce_gid_is_mcast(gid))
		return false;
	if (droce_gid_is_v4mapped(gid)) {
		*mac = (struct rte_ether_addr){ { 0x01, 0x00, 0x5e, gid[13] & 0x7f, gid[14],
						   gid[15] } };
	} else {
		*mac = (struct rte_ether_addr){ { 0x33, 0x33, gid[12], gid[13], gid[14],
						   gid[15] } };
	}
	return true;
}

static struct droce_mcast_group *
mcast_find(struct droce_mcast *mc, const uint8_t gid[16])
{
	for (unsigned i = 0; i < mc->nb_groups; i++)
		if (memcmp(mc->groups[i].gid, gid, 16) == 0)
			return &mc->groups[i];
	return NULL;
}

/* Add @p mac to the @p n MACs of @p macs unless it is there. @return the count. */
static unsigned
mac_add(struct rte_ether_addr *macs, unsigned n, const struct rte_ether_addr *mac)
{
	for (unsigned i = 0; i < n; i++)
		if (rte_is_same_ether_addr(&macs[i], mac))
			return n;
	macs[n] = *mac;
	return n + 1;
}

/* IGMP's general queries: 224.0.0.1 */
static const struct rte_ether_addr all_systems = {{ 0x01, 0x00, 0x5e, 0, 0, 1 }};

/* Has the port an IPv4 group? Under the lock. */
static bool
mcast_any_v4(const struct droce_mcast *mc)
{
	for (unsigned i = 0; i < mc->nb_groups; i++)
		if (droce_gid_is_v4mapped(mc->groups[i].gid))
			return true;
	return false;
}

unsigned
droce_port_mcast_macs(const struct droce_port *p, struct rte_ether_addr *macs)
{
	static const struct rte_ether_addr all_nodes = {{ 0x33, 0x33, 0, 0, 0, 1 }};
	const struct droce_mcast *mc = &p->mcast;
	unsigned n = 0;

	for (int i = 0; i < p->nb_gids; i++) {
		const uint8_t *g = p->gids[i];
		/* RFC 4291 2.7.1: ff02::1:ffXX:XXXX, at 33:33 and its low 32 bits */
		struct rte_ether_addr sn = {{ 0x33, 0x33, 0xff, g[13], g[14], g[15] }};

		if (droce_gid_is_v4mapped(g))
			continue;
		n = mac_add(macs, n, &all_nodes);
		n = mac_add(macs, n, &sn);
	}
	for (unsigned i = 0; i < mc->nb_groups; i++)
		n = mac_add(macs, n, &mc->groups[i].mac);
	if (mcast_any_v4(mc))
		n = mac_add(macs, n, &all_systems);
	return n;
}

/* The ethdev accepts the multicast MACs the port needs now; under the
 * write lock. */
static void
mcast_filter(struct droce_port *p)
{
	struct droce_mcast *mc = &p->mcast;
	struct rte_ether_addr macs[DROCE_PORT_MCAST_MACS];
	uint32_t n;
	bool all;

	/* A shared ethdev's filters are the application's, which lets the
	 * multicast droce needs in (or is promiscuous). */
	if (p->shared)
		return;
	n = droce_port_mcast_macs(p, macs);
	all = rte_eth_dev_set_mc_addr_list(p->port_id, macs, n) != 0 && n > 0;
	if (all != mc->allmulti) {
		if (all)
			rte_eth_allmulticast_enable(p->port_id);
		else
			rte_eth_allmulticast_disable(p->port_id);
		mc->allmulti = all;
	}
}

void
droce_port_mcast_sync(struct droce_port *p)
{
	rte_rwlock_write_lock(&p->mcast.lock);
	mcast_filter(p);
	rte_rwlock_write_unlock(&p->mcast.lock);
}

int
droce_port_mcast_attach(struct droce_port *p, const uint8_t gid[16], uint32_t qpn)
{
	struct droce_mcast *mc = &p->mcast;
	struct droce_mcast_group *g;
	int rc = 0;

	if (!droce_gid_is_mcast(gid))
		return -EINVAL;
	rte_rwlock_write_lock(&mc->lock);
	g = mcast_find(mc, gid);
	if (g == NULL) {
		if (mc->nb_groups == DROCE_MCAST_MAX) {
			rc = -ENOMEM;
			goto out;
		}
		g = &mc->groups[mc->nb_groups];
		memset(g, 0, sizeof(*g));
		memcpy(g->gid, gid, 16);
		droce_gid_mcast_mac(gid, &g->mac);
		/* Atomic: the senders' fast test reads it without the lock. */
		__atomic_store_n(&mc->nb_groups, mc->nb_groups + 1, __ATOMIC_RELAXED);
		mcast_filter(p);
		droce_mcast_report_joined(p, gid);
	}
	for (unsigned i = 0; i < g->nb_qps; i++)
		if (g->qpn[i] == qpn)
			goto out; /* attached already: nothing to do, as in rxe */
	if (g->nb_qps == DROCE_MCAST_QPS)
		rc = -ENOMEM;
	else
		g->qpn[g->nb_qps++] = qpn;
out:
	rte_rwlock_write_unlock(&mc->lock);
	return rc;
}

/* Take @p qpn out of group @p g; a group left empty goes. Write lock held.
 * @return whether it was attached. */
static bool
mcast_remove(struct droce_port *p, struct droce_mcast_group *g, uint32_t qpn)
{
	struct droce_mcast *mc = &p->mcast;

	for (unsigned i = 0; i < g->nb_qps; i++) {
		if (g->qpn[i] != qpn)
			continue;
		g->qpn[i] = g->qpn[--g->nb_qps];
		if (g->nb_qps == 0) {
			droce_mcast_report_left(p, g->gid);
			*g = mc->groups[mc->nb_groups - 1];
			__atomic_store_n(&mc->nb_groups, mc->nb_groups - 1, __ATOMIC_RELAXED);
			mcast_filter(p);
		}
		return true;
	}
	return false;
}

int
droce_port_mcast_detach(struct droce_port *p, const uint8_t gid[16], uint32_t qpn)
{
	struct droce_mcast_group *g;
	bool found;

	rte_rwlock_write_lock(&p->mcast.lock);
	g = mcast_find(&p->mcast, gid);
	found = g != NULL && mcast_remove(p, g, qpn);
	rte_rwlock_write_unlock(&p->mcast.lock);
	return found ? 0 : -EINVAL;
}

void
droce_port_mcast_detach_all(struct droce_port *p, uint32_t qpn)
{
	struct droce_mcast *mc = &p->mcast;

	rte_rwlock_write_lock(&mc->lock);
	/* Backwards: a group that empties is replaced by the last one. */
	for (unsigned i = mc->nb_groups; i-- > 0;)
		mcast_remove(p, &mc->groups[i], qpn);
	rte_rwlock_write_unlock(&mc->lock);
}

unsigned
droce_port_mcast_qpns(struct droce_port *p, const uint8_t gid[16],
		      uint32_t qpn[DROCE_MCAST_QPS])
{
	struct droce_mcast_group *g;
	unsigned n = 0;

	rte_rwlock_read_lock(&p->mcast.lock);
	g = mcast_find(&p->mcast, gid);
	if (g != NULL) {
		n = g->nb_qps;
		memcpy(qpn, g->qpn, n * sizeof(*qpn));
	}
	rte_rwlock_read_unlock(&p->mcast.lock);
	return n;
}

/* Has the port joined a group whose MAC is @p mac (or, with an IPv4
 * group, is it IGMP's all systems)? */
static bool
mcast_mac_joined(struct droce_port *p, const struct rte_ether_addr *mac)
{
	struct droce_mcast *mc = &p->mcast;
	bool found = false;

	if (__atomic_load_n(&mc->nb_groups, __ATOMIC_RELAXED) == 0)
		return false;
	rte_rwlock_read_lock(&mc->lock);
	for (unsigned i = 0; i < mc->nb_groups && !found; i++)
		found = rte_is_same_ether_addr(&mc->groups[i].mac, mac);
	if (!found && rte_is_same_ether_addr(mac, &all_systems))
		found = mcast_any_v4(mc);
	rte_rwlock_read_unlock(&mc->lock);
	return found;
}

bool
droce_port_mcast_accept(struct droce_port *p, const struct rte_ether_hdr *eh)
{
	/* The port's own frame, reflected by the link (a ring PMD does):
	 * its local copy came through the loopback ring already. */
	if (rte_is_same_ether_addr(&eh->src_addr, &p->mac))
		return false;
	return rte_is_multicast_ether_addr(&eh->dst_addr) && mcast_mac_joined(p, &eh->dst_addr);
}

bool
droce_port_mcast_copy(struct droce_port *p, struct rte_mbuf **pkts, uint16_t n,
		      struct rte_mbuf **copies)
{
	bool any = false;

	if (__atomic_load_n(&p->mcast.nb_groups, __ATOMIC_RELAXED) == 0)
		return false;
	for (uint16_t i = 0; i < n; i++) {
		const struct rte_ether_hdr *eh = rte_pktmbuf_mtod(pkts[i],
								   const struct rte_ether_hdr *);

		copies[i] = NULL;
		if (rte_is_multicast_ether_addr(&eh->dst_addr) &&
		    !rte_is_broadcast_ether_addr(&eh->dst_addr) &&
		    mcast_mac_joined(p, &eh->dst_addr))
			copies[i] = rte_pktmbuf_copy(pkts[i], p->mp, 0, UINT32_MAX);
		any |= copies[i] != NULL;
	}
	return any;
}

void
droce_port_mcast_copies_done(struct droce_port_queue *pq, struct rte_mbuf **copies, uint16_t n,
			     uint16_t sent)
{
	for (uint16_t i = 0; i < n; i++) {
		if (copies[i] == NULL)
			continue;
		/* A frame the ethdev did not take is sent (and copied) again
		 * later; one it took loops back (lost if the ring is full). */
		if (i >= sent || rte_ring_sp_enqueue(pq->lo, copies[i]) != 0)
			rte_pktmbuf_free(copies[i]);
	}
}
