/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * IGMP on the wire, a host's side of it: queries parsed (versions 1 to 3,
 * told apart by length and max response code, RFC 3376 7.1), version 2
 * reports and leaves built. A switch that snoops IGMP forwards a group's
 * frames only to the ports that reported it.
 */
#include <errno.h>
#include <netinet/in.h>
#include <string.h>

#include <rte_ip.h>

#include "droce_wire.h"

#define IGMP_LEN 8      /* v1 and v2 messages; a v3 query is 12 and more */
#define IGMP_V3_QUERY_LEN 12
/* RFC 2113: router alert, 4 bytes, value 0 ("examine the packet"). */
#define IGMP_RA_OPT_LEN 4
#define IGMP_TOS 0xc0   /* DSCP CS6 (network control), as Linux sends IGMP */

enum droce_igmp_err
droce_igmp_parse(const struct rte_mbuf *m, uint32_t l3_off, uint16_t vlan_tci,
		 struct droce_igmp_msg *msg)
{
	union {
		struct rte_ipv4_hdr ip;
		uint8_t b[15 * RTE_IPV4_IHL_MULTIPLIER]; /* the longest header */
	} h;
	struct rte_ipv4_hdr ip;
	struct rte_ether_hdr eh;
	uint8_t igmp[IGMP_LEN];
	uint32_t ihl, total, len;
	uint16_t ck;

	if (droce_mbuf_copy(m, l3_off, sizeof(ip), &ip) != 0 ||
	    (ip.version_ihl >> 4) != 4 || ip.next_proto_id != IPPROTO_IGMP)
		return DROCE_IGMP_NOT_IGMP;
	ihl = (uint32_t)(ip.version_ihl & 0xf) * RTE_IPV4_IHL_MULTIPLIER;
	total = rte_be_to_cpu_16(ip.total_length);
	if (ihl < sizeof(ip) || total < ihl + IGMP_LEN || l3_off + total > rte_pktmbuf_pkt_len(m) ||
	    (rte_be_to_cpu_16(ip.fragment_offset) & (RTE_IPV4_HDR_MF_FLAG | RTE_IPV4_HDR_OFFSET_MASK)))
		return DROCE_IGMP_INVALID;
	/* The header's checksum, options and all. */
	if (droce_mbuf_copy(m, l3_off, ihl, h.b) != 0 || rte_raw_cksum(h.b, ihl) != 0xffff)
		return DROCE_IGMP_INVALID;
	len = total - ihl;
	if (droce_mbuf_copy(m, l3_off + ihl, sizeof(igmp), igmp) != 0 ||
	    droce_mbuf_copy(m, 0, sizeof(eh), &eh) != 0 ||
	    rte_raw_cksum_mbuf(m, l3_off + ihl, len, &ck) != 0 || ck != 0xffff)
		return DROCE_IGMP_INVALID;
	memset(msg, 0, sizeof(*msg));
	msg->type = igmp[0];
	msg->vlan_tci = vlan_tci;
	msg->eth_src = eh.src_addr;
	msg->src = rte_be_to_cpu_32(ip.src_addr);
	msg->dst = rte_be_to_cpu_32(ip.dst_addr);
	memcpy(&msg->group, igmp + 4, sizeof(msg->group));
	msg->group = rte_be_to_cpu_32(msg->group);
	if (msg->type != DROCE_IGMP_QUERY)
		return DROCE_IGMP_OK;
	/* A query is 8 bytes (v1, v2) or at least 12 (v3); it comes from the
	 * link (TTL 1), for all or for one group. */
	if ((len != IGMP_LEN && len < IGMP_V3_QUERY_LEN) || ip.time_to_live != 1 ||
	    (msg->group != 0 && (msg->group >> 28) != 0xe))
		return DROCE_IGMP_INVALID;
	return DROCE_IGMP_OK;
}

int
droce_igmp_write(struct rte_mbuf *m, const struct droce_igmp_msg *msg)
{
	uint32_t l2_len = RTE_ETHER_HDR_LEN + (msg->vlan_tci ? RTE_VLAN_HLEN : 0);
	uint32_t l3_len = sizeof(struct rte_ipv4_hdr) + IGMP_RA_OPT_LEN;
	/* RFC 1112: 01:00:5e and the group's low 23 bits. */
	const struct rte_ether_addr dst_mac = { { 0x01, 0x00, 0x5e, (msg->dst >> 16) & 0x7f,
						  (msg->dst >> 8) & 0xff, msg->dst & 0xff } };
	struct rte_ipv4_hdr *ip;
	uint8_t *p, *igmp;
	rte_be32_t be;
	uint16_t ck;

	p = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)(l2_len + l3_len + IGMP_LEN));
	if (p == NULL)
		return -ENOMEM;
	memset(p, 0, l2_len + l3_len + IGMP_LEN);
	droce_eth_hdr_write(p, &dst_mac, &msg->eth_src, msg->vlan_tci, RTE_ETHER_TYPE_IPV4);
	ip = (struct rte_ipv4_hdr *)(p + l2_len);
	ip->version_ihl = (uint8_t)(4 << 4 | l3_len / 4);
	ip->type_of_service = IGMP_TOS;
	ip->total_length = rte_cpu_to_be_16((uint16_t)(l3_len + IGMP_LEN));
	ip->fragment_offset = RTE_BE16(RTE_IPV4_HDR_DF_FLAG);
	ip->time_to_live = 1;
	ip->next_proto_id = IPPROTO_IGMP;
	ip->src_addr = rte_cpu_to_be_32(msg->src);
	ip->dst_addr = rte_cpu_to_be_32(msg->dst);
	/* Router alert: copied flag and option 20, length 4, value 0. */
	p[l2_len + sizeof(*ip)] = 0x94;
	p[l2_len + sizeof(*ip) + 1] = IGMP_RA_OPT_LEN;
	ip->hdr_checksum = rte_ipv4_cksum(ip); /* the option's bytes too */
	igmp = p + l2_len + l3_len;
	igmp[0] = msg->type;
	be = rte_cpu_to_be_32(msg->group);
	memcpy(igmp + 4, &be, sizeof(be));
	ck = (uint16_t)~rte_raw_cksum(igmp, IGMP_LEN);
	memcpy(igmp + 2, &ck, sizeof(ck));
	return 0;
}
