/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * IPv6 neighbour solicitations and advertisements (RFC 4861) on the wire:
 * parsing with the validity checks of section 7.1 and building, frame and
 * all. Only the link-layer address options are read; every other option
 * is stepped over, as the RFC asks.
 */
#include <errno.h>
#include <netinet/in.h>
#include <string.h>

#include <rte_ip.h>

#include "droce_wire.h"

/* ICMPv6 header (type, code, checksum), 4 bytes of flags or reserved,
 * the target address: the fixed part of NS and NA. */
#define ND_FIXED_LEN 24
/* Link-layer address options: type, length (in 8 bytes), the MAC. */
#define ND_OPT_SLLA 1
#define ND_OPT_TLLA 2
#define ND_OPT_LL_LEN 8
/* Longest message parsed: the fixed part and a few options. A longer one
 * is no neighbour discovery droce needs (an NS or NA is 32 bytes). */
#define ND_MAX_LEN 256
#define ND_HOP_LIMIT 255

struct nd_frame {
	struct rte_ipv6_hdr ip;
	uint8_t icmp[ND_MAX_LEN];
} __rte_packed;

static bool
ipv6_is_multicast(const uint8_t a[16])
{
	return a[0] == 0xff;
}

static bool
ipv6_is_unspecified(const uint8_t a[16])
{
	static const uint8_t zero[16];

	return memcmp(a, zero, 16) == 0;
}

void
droce_nd_solicited_node(const uint8_t addr[16], uint8_t out[16])
{
	static const uint8_t prefix[13] = {
		0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01, 0xff
	};

	memcpy(out, prefix, sizeof(prefix));
	memcpy(out + 13, addr + 13, 3);
}

void
droce_ipv6_mcast_mac(const uint8_t addr[16], struct rte_ether_addr *mac)
{
	mac->addr_bytes[0] = 0x33;
	mac->addr_bytes[1] = 0x33;
	memcpy(&mac->addr_bytes[2], addr + 12, 4);
}

/* Walk the options after the fixed part: the link-layer address one of
 * @p want is kept. @return false on an option of length 0 or past the end. */
static bool
nd_options(const uint8_t *o, uint32_t len, uint8_t want, struct droce_nd_msg *msg)
{
	while (len != 0) {
		uint32_t olen;

		if (len < 2 || o[1] == 0)
			return false;
		olen = (uint32_t)o[1] * 8;
		if (olen > len)
			return false;
		if (o[0] == want && olen == ND_OPT_LL_LEN) {
			msg->has_lladdr = true;
			memcpy(&msg->lladdr, o + 2, RTE_ETHER_ADDR_LEN);
		}
		o += olen;
		len -= olen;
	}
	return true;
}

enum droce_nd_err
droce_nd_parse(const struct rte_mbuf *m, uint32_t l3_off, uint16_t vlan_tci,
	       struct droce_nd_msg *msg)
{
	struct nd_frame f;
	struct rte_ether_hdr eh;
	uint32_t plen;

	if (droce_mbuf_copy(m, l3_off, sizeof(f.ip), &f.ip) != 0 ||
	    (rte_be_to_cpu_32(f.ip.vtc_flow) >> 28) != 6 || f.ip.proto != IPPROTO_ICMPV6)
		return DROCE_ND_NOT_ND;
	plen = rte_be_to_cpu_16(f.ip.payload_len);
	if (plen < 1 || droce_mbuf_copy(m, l3_off + sizeof(f.ip), 1, f.icmp) != 0 ||
	    (f.icmp[0] != DROCE_ND_NS && f.icmp[0] != DROCE_ND_NA))
		return DROCE_ND_NOT_ND;
	if (plen < ND_FIXED_LEN || plen > ND_MAX_LEN ||
	    droce_mbuf_copy(m, l3_off + sizeof(f.ip), plen, f.icmp) != 0 ||
	    droce_mbuf_copy(m, 0, sizeof(eh), &eh) != 0)
		return DROCE_ND_INVALID;
	/* Only a neighbour on the link sends with 255: nothing routed. */
	if (f.ip.hop_limits != ND_HOP_LIMIT || f.icmp[1] != 0 ||
	    rte_ipv6_udptcp_cksum_verify(&f.ip, f.icmp) != 0)
		return DROCE_ND_INVALID;
	memset(msg, 0, sizeof(*msg));
	msg->type = f.icmp[0];
	msg->flags = msg->type == DROCE_ND_NA ? f.icmp[4] : 0;
	msg->vlan_tci = vlan_tci;
	msg->eth_src = eh.src_addr;
	msg->eth_dst = eh.dst_addr;
	memcpy(msg->src, f.ip.src_addr, 16);
	memcpy(msg->dst, f.ip.dst_addr, 16);
	memcpy(msg->target, f.icmp + 8, 16);
	if (ipv6_is_multicast(msg->target) ||
	    !nd_options(f.icmp + ND_FIXED_LEN, plen - ND_FIXED_LEN,
			msg->type == DROCE_ND_NS ? ND_OPT_SLLA : ND_OPT_TLLA, msg))
		return DROCE_ND_INVALID;
	if (msg->type == DROCE_ND_NS && ipv6_is_unspecified(msg->src) &&
	    (msg->has_lladdr || !ipv6_is_multicast(msg->dst)))
		return DROCE_ND_INVALID;
	if (msg->type == DROCE_ND_NA && ipv6_is_multicast(msg->dst) &&
	    (msg->flags & DROCE_ND_NA_SOLICITED))
		return DROCE_ND_INVALID;
	return DROCE_ND_OK;
}

int
droce_nd_write(struct rte_mbuf *m, const struct droce_nd_msg *msg)
{
	uint32_t icmp_len = ND_FIXED_LEN + (msg->has_lladdr ? ND_OPT_LL_LEN : 0);
	uint32_t l2_len = RTE_ETHER_HDR_LEN + (msg->vlan_tci ? RTE_VLAN_HLEN : 0);
	struct rte_ipv6_hdr *ip;
	uint8_t *p, *icmp;
	uint16_t ck;

	p = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)(l2_len + sizeof(*ip) + icmp_len));
	if (p == NULL)
		return -ENOMEM;
	memset(p, 0, l2_len + sizeof(*ip) + icmp_len);
	droce_eth_hdr_write(p, &msg->eth_dst, &msg->eth_src, msg->vlan_tci, RTE_ETHER_TYPE_IPV6);
	ip = (struct rte_ipv6_hdr *)(p + l2_len);
	ip->vtc_flow = RTE_BE32(6u << 28);
	ip->payload_len = rte_cpu_to_be_16((uint16_t)icmp_len);
	ip->proto = IPPROTO_ICMPV6;
	ip->hop_limits = ND_HOP_LIMIT;
	memcpy(ip->src_addr, msg->src, 16);
	memcpy(ip->dst_addr, msg->dst, 16);
	icmp = (uint8_t *)(ip + 1);
	icmp[0] = msg->type;
	if (msg->type == DROCE_ND_NA)
		icmp[4] = msg->flags;
	memcpy(icmp + 8, msg->target, 16);
	if (msg->has_lladdr) {
		icmp[ND_FIXED_LEN] = msg->type == DROCE_ND_NS ? ND_OPT_SLLA : ND_OPT_TLLA;
		icmp[ND_FIXED_LEN + 1] = 1;
		memcpy(icmp + ND_FIXED_LEN + 2, &msg->lladdr, RTE_ETHER_ADDR_LEN);
	}
	ck = rte_ipv6_udptcp_cksum(ip, icmp);
	memcpy(icmp + 2, &ck, sizeof(ck));
	return 0;
}
