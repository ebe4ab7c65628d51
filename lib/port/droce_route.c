/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * From a destination GID to the L2/L3 addresses of a packet.
 *
 * What is reachable: the port's own GIDs (looped back), hosts on the
 * port's link (IPv4 subnet through ARP; IPv6 link-local and the port's
 * IPv6 prefixes through neighbour discovery) and, through a static route
 * or a default gateway, hosts beyond it: then the next hop's MAC goes
 * into the frame while the GID's address stays its destination. IPv6
 * link-local GIDs made from a MAC (fe80::/64 with a modified EUI-64
 * interface id, as rxe's and droce's own are) give their MAC themselves
 * and need no solicitation.
 */
#include <errno.h>
#include <string.h>

#include <rte_hash_crc.h>

#include "droce_port_priv.h"

/* IPv4 TTL and IPv6 hop limit when the AH says none, as rxe sends. */
#define ROUTE_TTL 64
/* UDP source ports for RoCEv2 flows: 0xc000-0xffff, as rxe uses. */
#define ROUTE_SPORT_BASE 0xc000
#define ROUTE_SPORT_MASK 0x3fff

/* The MAC inside a fe80::/64 modified EUI-64 address (RFC 4291 app. A). */
static int
route_ipv6_link_local(const uint8_t dgid[16], struct rte_ether_addr *mac)
{
	static const uint8_t ll_prefix[8] = { 0xfe, 0x80, 0, 0, 0, 0, 0, 0 };

	if (memcmp(dgid, ll_prefix, sizeof(ll_prefix)) != 0 ||
	    dgid[11] != 0xff || dgid[12] != 0xfe)
		return -EHOSTUNREACH;
	mac->addr_bytes[0] = dgid[8] ^ 0x02;
	mac->addr_bytes[1] = dgid[9];
	mac->addr_bytes[2] = dgid[10];
	mac->addr_bytes[3] = dgid[13];
	mac->addr_bytes[4] = dgid[14];
	mac->addr_bytes[5] = dgid[15];
	return rte_is_valid_assigned_ether_addr(mac) ? 0 : -EHOSTUNREACH;
}

void
droce_port_qos(const struct droce_port *p, uint8_t sl, uint8_t tclass,
	       struct droce_l3_addr *a)
{
	droce_net_qos(p, sl, tclass, a);
}

int
droce_port_reachable(const struct droce_port *p, int sgid_index, const uint8_t dgid[16])
{
	const uint8_t *hop;

	if (sgid_index < 0 || sgid_index >= p->nb_gids)
		return -EINVAL;
	if (droce_gid_is_v4mapped(p->gids[sgid_index]) != droce_gid_is_v4mapped(dgid))
		return -EHOSTUNREACH;
	if (droce_port_gid_find(p, dgid) >= 0 || droce_gid_is_mcast(dgid))
		return 0;
	return droce_net_next_hop(p, dgid, &hop);
}

int
droce_port_resolve(struct droce_port *p, int sgid_index, const uint8_t dgid[16])
{
	struct rte_ether_addr mac;
	const uint8_t *hop;
	int rc = droce_port_reachable(p, sgid_index, dgid);

	if (rc != 0 || droce_port_gid_find(p, dgid) >= 0 || droce_gid_is_mcast(dgid) ||
	    (!droce_gid_is_v4mapped(dgid) && route_ipv6_link_local(dgid, &mac) == 0))
		return rc;
	rc = droce_net_next_hop(p, dgid, &hop);
	return rc != 0 ? rc : droce_neigh_probe(p, hop);
}

int
droce_port_route(struct droce_port *p, uint16_t q, int sgid_index, const uint8_t dgid[16],
		 struct droce_l3_addr *a)
{
	const uint8_t *sgid, *hop;
	bool v4;
	int rc;

	if (sgid_index < 0 || sgid_index >= p->nb_gids)
		return -EINVAL;
	sgid = p->gids[sgid_index];
	v4 = droce_gid_is_v4mapped(sgid);
	if (v4 != droce_gid_is_v4mapped(dgid))
		return -EHOSTUNREACH;
	memset(a, 0, sizeof(*a));
	a->ipv6 = !v4;
	a->src_mac = p->mac;
	a->ttl = ROUTE_TTL;
	/* One port per destination spreads flows to different hosts over
	 * ECMP paths; the caller picks one per QP as rxe does. */
	a->udp_sport = ROUTE_SPORT_BASE |
		       (rte_hash_crc(dgid, 16, 0) & ROUTE_SPORT_MASK);
	memcpy(a->sgid, sgid, 16);
	memcpy(a->dgid, dgid, 16);
	a->vlan_tci = droce_net_vlan_tci(p, 0);
	if (droce_port_gid_find(p, dgid) >= 0) {
		a->dst_mac = p->mac;
		return 0;
	}
	if (droce_gid_mcast_mac(dgid, &a->dst_mac))
		return 0;
	if (!v4 && route_ipv6_link_local(dgid, &a->dst_mac) == 0)
		return 0;
	rc = droce_net_next_hop(p, dgid, &hop);
	if (rc != 0)
		return rc;
	rc = droce_neigh_resolve(p, &p->q[q], hop, &a->dst_mac, &a->vlan_tci);
	/* On a VLAN every frame carries the port's tag, whatever tag the
	 * neighbour's ARP or NA came with (there: the port's, or dropped). */
	a->vlan_tci = p->net.vlan != 0 ? droce_net_vlan_tci(p, 0) : a->vlan_tci;
	return rc;
}
