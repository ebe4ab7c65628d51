/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * IPv6 neighbour discovery (RFC 4861) for the port's IPv6 GIDs, the
 * counterpart of droce_arp.c: answer solicitations for them, learn the
 * neighbours that solicit or advertise, solicit the ones droce_port_route()
 * needs, and advertise every address unsolicited once the port runs so
 * that peers with a stale entry learn its MAC. Duplicate address detection
 * is not done: the addresses are configured, not autoconfigured, and a
 * DAD probe for them is ignored.
 *
 * VLAN tags as for ARP, and like ARP on the queue of the engine that
 * receives or needs it (announcements: queue 0's, from droce_neigh_gc()).
 * ND frames are counted with ARP's (rx_arp, tx_arp).
 */
#include <errno.h>
#include <string.h>

#include <rte_cycles.h>

#include "droce_port_priv.h"

static const uint8_t nd_all_nodes[16] = {
	0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01
};

static const uint8_t nd_unspecified[16];

static int
nd_send(struct droce_port *p, struct droce_port_queue *pq, struct droce_nd_msg *msg)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(p->mp);

	if (m == NULL)
		return -ENOMEM;
	msg->eth_src = p->mac;
	msg->has_lladdr = true;
	msg->lladdr = p->mac;
	return droce_port_ctl_send(p, pq, m, droce_nd_write(m, msg), false);
}

/* The port's address to send from towards @p dst: one of its global
 * addresses whose prefix holds @p dst, else the link-local one. */
static const uint8_t *
nd_source(const struct droce_port *p, const uint8_t dst[16])
{
	unsigned i;

	for (i = 0; i < p->net.nb_ipv6; i++)
		if (droce_prefix_match(&p->net.ipv6[i], dst))
			return p->net.ipv6[i].addr;
	return p->gids[0];
}

int
droce_nd_solicit(struct droce_port *p, struct droce_port_queue *pq, const uint8_t target[16])
{
	struct droce_nd_msg msg = {
		.type = DROCE_ND_NS,
		.vlan_tci = droce_net_vlan_tci(p, p->net.pcp),
	};

	memcpy(msg.target, target, 16);
	memcpy(msg.src, nd_source(p, target), 16);
	droce_nd_solicited_node(target, msg.dst);
	droce_ipv6_mcast_mac(msg.dst, &msg.eth_dst);
	return nd_send(p, pq, &msg);
}

void
droce_nd_announce(struct droce_port *p, struct droce_port_queue *pq)
{
	struct droce_nd_msg msg = {
		.type = DROCE_ND_NA,
		.flags = DROCE_ND_NA_OVERRIDE,
		.vlan_tci = droce_net_vlan_tci(p, p->net.pcp),
	};
	int i;

	memcpy(msg.dst, nd_all_nodes, 16);
	droce_ipv6_mcast_mac(nd_all_nodes, &msg.eth_dst);
	for (i = 0; i < p->nb_gids; i++) {
		if (droce_gid_is_v4mapped(p->gids[i]))
			continue;
		memcpy(msg.target, p->gids[i], 16);
		memcpy(msg.src, p->gids[i], 16);
		nd_send(p, pq, &msg);
	}
}

/* A solicitation for one of the port's addresses: answer it. */
static void
nd_answer(struct droce_port *p, struct droce_port_queue *pq, const struct droce_nd_msg *ns)
{
	struct droce_nd_msg na = {
		.type = DROCE_ND_NA,
		.flags = DROCE_ND_NA_SOLICITED | DROCE_ND_NA_OVERRIDE,
		.vlan_tci = droce_net_reply_tci(p, ns->vlan_tci),
		.eth_dst = ns->has_lladdr ? ns->lladdr : ns->eth_src,
	};

	memcpy(na.src, ns->target, 16);
	memcpy(na.dst, ns->src, 16);
	memcpy(na.target, ns->target, 16);
	nd_send(p, pq, &na);
}

bool
droce_nd_input(struct droce_port *p, struct droce_port_queue *pq, struct rte_mbuf *m,
	       uint32_t off, uint16_t vlan_tci)
{
	struct droce_nd_msg msg;
	enum droce_nd_err err = droce_nd_parse(m, off, vlan_tci, &msg);

	if (err == DROCE_ND_NOT_ND)
		return false;
	if (!droce_port_ctl_take(p, pq, m, err == DROCE_ND_OK, vlan_tci))
		return true;
	if (msg.type == DROCE_ND_NA) {
		/* Solicited or not, an advertisement says where its target is. */
		droce_neigh_learn(p, msg.target,
				  msg.has_lladdr ? &msg.lladdr : &msg.eth_src,
				  vlan_tci, rte_get_tsc_cycles());
		return true;
	}
	if (droce_gid_is_v4mapped(msg.target) || droce_port_gid_find(p, msg.target) < 0)
		return true;
	/* A DAD probe (from ::) has nobody to learn or answer. */
	if (memcmp(msg.src, nd_unspecified, 16) == 0)
		return true;
	if (msg.has_lladdr)
		droce_neigh_learn(p, msg.src, &msg.lladdr, vlan_tci, rte_get_tsc_cycles());
	nd_answer(p, pq, &msg);
	return true;
}

bool
droce_nd_mcast_accept(const struct droce_port *p, const struct rte_ether_addr *dst)
{
	static const struct rte_ether_addr all_nodes = {{ 0x33, 0x33, 0, 0, 0, 1 }};
	const uint8_t *d = dst->addr_bytes;
	int i;

	if (rte_is_same_ether_addr(dst, &all_nodes))
		return true;
	/* 33:33:ff:xx:xx:xx, the group of a solicited-node address: one of
	 * the port's IPv6 GIDs ends in xx:xx:xx. */
	if (d[0] != 0x33 || d[1] != 0x33 || d[2] != 0xff)
		return false;
	for (i = 0; i < p->nb_gids; i++)
		if (!droce_gid_is_v4mapped(p->gids[i]) && memcmp(p->gids[i] + 13, d + 3, 3) == 0)
			return true;
	return false;
}
