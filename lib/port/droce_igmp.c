/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * IGMP for the port's IPv4 groups (RFC 2236): version 2 reports and
 * leaves sent, queries of any version taken and answered. When they are
 * sent is droce_mcast_report.c's, which MLD shares.
 */
#include <string.h>

#include "droce_port_priv.h"

void
droce_igmp_send(struct droce_port *p, struct droce_port_queue *pq, const uint8_t gid[16],
		bool leave)
{
	struct droce_igmp_msg msg = {
		.type = leave ? DROCE_IGMP_V2_LEAVE : DROCE_IGMP_V2_REPORT,
		.vlan_tci = droce_net_vlan_tci(p, p->net.pcp),
		.eth_src = p->mac,
		.src = p->ipv4,
	};
	struct rte_mbuf *m;
	rte_be32_t be;

	memcpy(&be, gid + 12, sizeof(be));
	msg.group = rte_be_to_cpu_32(be);
	msg.dst = leave ? DROCE_IGMP_ALL_ROUTERS : msg.group;
	m = rte_pktmbuf_alloc(p->mp);
	if (m != NULL)
		droce_port_ctl_send(p, pq, m, droce_igmp_write(m, &msg), true);
}

bool
droce_igmp_input(struct droce_port *p, struct droce_port_queue *pq, struct rte_mbuf *m,
		 uint32_t off, uint16_t vlan_tci)
{
	struct droce_igmp_msg msg;
	enum droce_igmp_err err = droce_igmp_parse(m, off, vlan_tci, &msg);
	uint8_t asked[16];

	if (err == DROCE_IGMP_NOT_IGMP)
		return false;
	/* Other hosts' reports and leaves are theirs: nothing to do. */
	if (!droce_port_ctl_take(p, pq, m, err == DROCE_IGMP_OK, vlan_tci) ||
	    msg.type != DROCE_IGMP_QUERY || p->ipv4 == 0)
		return true;
	droce_gid_from_ipv4(msg.group, asked);
	droce_mcast_report_answer(p, pq, true, msg.group != 0 ? asked : NULL);
	return true;
}
