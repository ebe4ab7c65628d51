/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ARP (RFC 826) for the port's IPv4 address: answer requests for it, learn
 * every sender on the subnet, ask for the neighbours droce_port_route()
 * needs. On a port with a VLAN every ARP frame carries its tag and
 * frames of other VLANs are ignored; on a port without, requests go out
 * untagged and a tagged request is answered with its own tag.
 */
#include <errno.h>
#include <string.h>

#include <rte_arp.h>
#include <rte_cycles.h>

#include "droce_port_priv.h"

/* Shortest Ethernet frame without its FCS: the rest is zero padding. */
#define ARP_FRAME_MIN (RTE_ETHER_MIN_LEN - RTE_ETHER_CRC_LEN)

static int
arp_send(struct droce_port *p, struct droce_port_queue *pq, uint16_t op, const struct rte_ether_addr *dst,
	 const struct rte_ether_addr *tha, uint32_t tip, uint16_t vlan_tci)
{
	uint32_t len = sizeof(struct rte_ether_hdr) + sizeof(struct rte_arp_hdr) +
		       (vlan_tci ? sizeof(struct rte_vlan_hdr) : 0);
	struct rte_ether_hdr *eh;
	struct rte_arp_hdr *arp;
	struct rte_mbuf *m;
	uint8_t *d;

	m = rte_pktmbuf_alloc(p->mp);
	if (m == NULL)
		return -ENOMEM;
	d = (uint8_t *)rte_pktmbuf_append(m, RTE_MAX(len, (uint32_t)ARP_FRAME_MIN));
	memset(d, 0, rte_pktmbuf_data_len(m));
	eh = (struct rte_ether_hdr *)d;
	eh->dst_addr = *dst;
	eh->src_addr = p->mac;
	if (vlan_tci) {
		struct rte_vlan_hdr *vh = (struct rte_vlan_hdr *)(eh + 1);

		eh->ether_type = RTE_BE16(RTE_ETHER_TYPE_VLAN);
		vh->vlan_tci = rte_cpu_to_be_16(vlan_tci);
		vh->eth_proto = RTE_BE16(RTE_ETHER_TYPE_ARP);
		arp = (struct rte_arp_hdr *)(vh + 1);
	} else {
		eh->ether_type = RTE_BE16(RTE_ETHER_TYPE_ARP);
		arp = (struct rte_arp_hdr *)(eh + 1);
	}
	arp->arp_hardware = RTE_BE16(RTE_ARP_HRD_ETHER);
	arp->arp_protocol = RTE_BE16(RTE_ETHER_TYPE_IPV4);
	arp->arp_hlen = RTE_ETHER_ADDR_LEN;
	arp->arp_plen = sizeof(uint32_t);
	arp->arp_opcode = rte_cpu_to_be_16(op);
	arp->arp_data.arp_sha = p->mac;
	arp->arp_data.arp_sip = rte_cpu_to_be_32(p->ipv4);
	arp->arp_data.arp_tha = *tha;
	arp->arp_data.arp_tip = rte_cpu_to_be_32(tip);
	return droce_port_ctl_send(p, pq, m, 0, false);
}

int
droce_arp_request(struct droce_port *p, struct droce_port_queue *pq, uint32_t ip)
{
	static const struct rte_ether_addr bcast = {
		.addr_bytes = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff }
	};
	static const struct rte_ether_addr unknown;

	return arp_send(p, pq, RTE_ARP_OP_REQUEST, &bcast, &unknown, ip,
			droce_net_vlan_tci(p, p->net.pcp));
}

void
droce_arp_input(struct droce_port *p, struct droce_port_queue *pq, struct rte_mbuf *m,
		uint32_t off, uint16_t vlan_tci)
{
	struct rte_arp_hdr buf;
	const struct rte_arp_hdr *arp = rte_pktmbuf_read(m, off, sizeof(buf), &buf);
	struct rte_ether_addr sha;
	uint8_t sgid[16];
	uint32_t sip, tip;
	uint16_t op;

	if (!droce_net_vlan_ok(p, vlan_tci)) {
		DROCE_STAT_ADD(pq, rx_not_ours, 1);
		rte_pktmbuf_free(m);
		return;
	}
	if (arp == NULL || arp->arp_hardware != RTE_BE16(RTE_ARP_HRD_ETHER) ||
	    arp->arp_protocol != RTE_BE16(RTE_ETHER_TYPE_IPV4) ||
	    arp->arp_hlen != RTE_ETHER_ADDR_LEN || arp->arp_plen != sizeof(uint32_t)) {
		DROCE_STAT_ADD(pq, rx_malformed, 1);
		rte_pktmbuf_free(m);
		return;
	}
	DROCE_STAT_ADD(pq, rx_arp, 1);
	op = rte_be_to_cpu_16(arp->arp_opcode);
	sip = rte_be_to_cpu_32(arp->arp_data.arp_sip);
	tip = rte_be_to_cpu_32(arp->arp_data.arp_tip);
	sha = arp->arp_data.arp_sha;
	rte_pktmbuf_free(m);
	if (op != RTE_ARP_OP_REQUEST && op != RTE_ARP_OP_REPLY)
		return;
	/* Requests, replies and gratuitous ARP all say where the sender is;
	 * a probe (sender 0.0.0.0) says nothing. */
	droce_gid_from_ipv4(sip, sgid);
	droce_neigh_learn(p, sgid, &sha, vlan_tci, rte_get_tsc_cycles());
	if (op == RTE_ARP_OP_REQUEST && p->ipv4 != 0 && tip == p->ipv4 &&
	    rte_is_valid_assigned_ether_addr(&sha))
		arp_send(p, pq, RTE_ARP_OP_REPLY, &sha, &sha, sip,
			 droce_net_reply_tci(p, vlan_tci));
}
