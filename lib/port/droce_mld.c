/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MLD for the port's IPv6 groups (RFC 2710): version 1 reports and dones
 * sent from the port's link-local address (GID 0, as RFC 2710 3 asks),
 * queries of either version taken and answered. When they are sent is
 * droce_mcast_report.c's, which IGMP shares.
 */
#include <string.h>

#include "droce_port_priv.h"

/* ff02::2, where dones go */
static const uint8_t all_routers[16] = {
	0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02
};

void
droce_mld_send(struct droce_port *p, struct droce_port_queue *pq, const uint8_t gid[16],
	       bool leave)
{
	struct droce_mld_msg msg = {
		.type = leave ? DROCE_MLD_V1_DONE : DROCE_MLD_V1_REPORT,
		.vlan_tci = droce_net_vlan_tci(p, p->net.pcp),
		.eth_src = p->mac,
	};
	struct rte_mbuf *m = rte_pktmbuf_alloc(p->mp);

	if (m == NULL)
		return;
	memcpy(msg.src, p->gids[0], 16);
	memcpy(msg.dst, leave ? all_routers : gid, 16);
	memcpy(msg.group, gid, 16);
	droce_port_ctl_send(p, pq, m, droce_mld_write(m, &msg), true);
}

bool
droce_mld_input(struct droce_port *p, struct droce_port_queue *pq, struct rte_mbuf *m,
		uint32_t off, uint16_t vlan_tci)
{
	static const uint8_t unspecified[16];
	struct droce_mld_msg msg;
	enum droce_mld_err err = droce_mld_parse(m, off, vlan_tci, &msg);

	if (err == DROCE_MLD_NOT_MLD)
		return false;
	/* Other hosts' reports and dones are theirs: nothing to do. */
	if (!droce_port_ctl_take(p, pq, m, err == DROCE_MLD_OK, vlan_tci) ||
	    msg.type != DROCE_MLD_QUERY)
		return true;
	droce_mcast_report_answer(p, pq, false,
				  memcmp(msg.group, unspecified, 16) != 0 ? msg.group : NULL);
	return true;
}
