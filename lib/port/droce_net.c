/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The port's place in the network beyond its IPv4 address: its IPv6
 * addresses, its VLAN, the priority (PCP) and DSCP/ECN of what it sends,
 * and its static routes. Checked and copied at attach, then read-only.
 *
 * Priority follows what RoCE NICs do with their trust mode: the PCP comes
 * from the AH's service level (trust PCP), from the DSCP (trust DSCP,
 * with the usual map: priority = DSCP / 8) or is fixed; the DSCP comes
 * from the AH's traffic class or is fixed. The ECN bits are congestion
 * control's (droce_cc_conf.ecn, set where the frame is built).
 */
#include <errno.h>
#include <string.h>

#include "droce_port_priv.h"

#define NET_VLAN_MAX 4094
#define NET_PCP_SHIFT 13
#define NET_PCP_MAX 7
#define NET_DSCP_MAX 63
#define NET_ECN_MASK 0x3
/* The IPv4-mapped part of a mapped prefix's length. */
#define NET_V4MAPPED_BITS 96

static bool
net_family_v4(const struct droce_prefix *pfx)
{
	return pfx->len >= NET_V4MAPPED_BITS && droce_gid_is_v4mapped(pfx->addr);
}

/* A global unicast address: not ::, not multicast, not link-local, not
 * IPv4-mapped (those come from the ipv4 setting). */
static bool
net_ipv6_usable(const struct droce_prefix *pfx)
{
	static const uint8_t zero[16];

	return pfx->len >= 1 && pfx->len <= 128 && memcmp(pfx->addr, zero, 16) != 0 &&
	       pfx->addr[0] != 0xff &&
	       !(pfx->addr[0] == 0xfe && (pfx->addr[1] & 0xc0) == 0x80) &&
	       !droce_gid_is_v4mapped(pfx->addr);
}

int
droce_net_init(struct droce_port *p, const struct droce_net_conf *c)
{
	unsigned i;

	if (c->nb_ipv6 > DROCE_NET_MAX_IPV6 || c->nb_routes > DROCE_NET_MAX_ROUTES ||
	    c->vlan > NET_VLAN_MAX || c->pcp > NET_PCP_MAX || c->dscp > NET_DSCP_MAX ||
	    c->pcp_mode > DROCE_PCP_DSCP)
		return -EINVAL;
	for (i = 0; i < c->nb_ipv6; i++)
		if (!net_ipv6_usable(&c->ipv6[i]))
			return -EINVAL;
	p->net = *c;
	/* Each route's next hop is of its family and on the link, or the
	 * route could never be used. */
	for (i = 0; i < c->nb_routes; i++) {
		const struct droce_route_conf *r = &c->routes[i];

		if (r->dst.len > 128 ||
		    net_family_v4(&r->dst) != droce_gid_is_v4mapped(r->via) ||
		    !droce_neigh_on_link(p, r->via)) {
			DROCE_PORT_LOG(ERR, "port %u: route %u: the next hop is not on the link",
				       p->port_id, i);
			return -EINVAL;
		}
	}
	return 0;
}

uint16_t
droce_net_vlan_tci(const struct droce_port *p, uint8_t pcp)
{
	if (p->net.vlan == 0)
		return 0;
	return (uint16_t)(p->net.vlan | (pcp & NET_PCP_MAX) << NET_PCP_SHIFT);
}

bool
droce_net_vlan_ok(const struct droce_port *p, uint16_t vlan_tci)
{
	return p->net.vlan == 0 || (vlan_tci & RTE_VLAN_ID_MASK) == p->net.vlan;
}

uint16_t
droce_net_reply_tci(const struct droce_port *p, uint16_t vlan_tci)
{
	return p->net.vlan != 0 ? droce_net_vlan_tci(p, p->net.pcp) : vlan_tci;
}

void
droce_net_qos(const struct droce_port *p, uint8_t sl, uint8_t tclass,
	      struct droce_l3_addr *a)
{
	uint8_t dscp = p->net.dscp_fixed ? p->net.dscp : tclass >> 2;
	uint8_t pcp;

	a->tclass = (uint8_t)(dscp << 2 | (tclass & NET_ECN_MASK));
	if (p->net.vlan == 0)
		return;
	switch (p->net.pcp_mode) {
	case DROCE_PCP_FIXED:
		pcp = p->net.pcp;
		break;
	case DROCE_PCP_DSCP:
		pcp = dscp >> 3;
		break;
	default:
		pcp = sl;
		break;
	}
	a->vlan_tci = droce_net_vlan_tci(p, pcp);
}

int
droce_net_next_hop(const struct droce_port *p, const uint8_t dst[16],
		   const uint8_t **hop)
{
	const struct droce_route_conf *best = NULL;
	bool v4 = droce_gid_is_v4mapped(dst);
	unsigned i;

	if (droce_neigh_on_link(p, dst)) {
		*hop = dst;
		return 0;
	}
	/* The longest matching prefix of the destination's family. */
	for (i = 0; i < p->net.nb_routes; i++) {
		const struct droce_route_conf *r = &p->net.routes[i];

		if (net_family_v4(&r->dst) == v4 && droce_prefix_match(&r->dst, dst) &&
		    (best == NULL || r->dst.len > best->dst.len))
			best = r;
	}
	if (best == NULL)
		return -EHOSTUNREACH;
	*hop = best->via;
	return 0;
}
