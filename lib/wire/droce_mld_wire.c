/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MLD on the wire, a host's side of it: queries parsed (versions 1 and 2,
 * told apart by length, RFC 3810 8.1), version 1 reports and dones built.
 * MLD is ICMPv6 behind a Hop-by-Hop Options header that carries the
 * Router Alert (RFC 2710 3, RFC 2711), so that routers and snooping
 * switches look at it: droce sends the header and asks it of what it
 * takes. A switch that snoops MLD forwards a group's frames only to the
 * ports that reported it.
 */
#include <errno.h>
#include <netinet/in.h>
#include <string.h>

#include <rte_ip.h>

#include "droce_wire.h"

#define MLD_LEN 24           /* v1 messages; a v2 query is 28 and more */
#define MLD_V2_QUERY_LEN 28
/* Hop-by-Hop options (RFC 8200 4.2, RFC 2711) */
#define OPT_PAD1 0
#define OPT_PADN 1
#define OPT_RA 5
#define OPT_RA_LEN 2
/* The header droce sends: next header, length 0 (8 bytes), the Router
 * Alert with value 0 (MLD), and a PadN of no data to the 8 bytes. */
#define MLD_HBH_LEN 8
/* The longest Hop-by-Hop header parsed; an MLD message's has 8 bytes. */
#define MLD_HBH_MAX 64

static bool
mld_type(uint8_t t)
{
	return t == DROCE_MLD_QUERY || t == DROCE_MLD_V1_REPORT || t == DROCE_MLD_V1_DONE ||
	       t == DROCE_MLD_V2_REPORT;
}

/* The Hop-by-Hop Options header @p h of @p len bytes: the Router Alert of
 * MLD in it, and no option that asks to drop a packet whose receiver does
 * not know it (an unknown type whose two high bits are not 00). */
static bool
mld_hbh_ok(const uint8_t *h, uint32_t len)
{
	bool ra = false;
	uint32_t i = 2;

	while (i < len) {
		const uint8_t t = h[i];

		if (t == OPT_PAD1) {
			i++;
			continue;
		}
		if (i + 2 > len || i + 2 + h[i + 1] > len)
			return false;
		if (t == OPT_RA) {
			if (h[i + 1] != OPT_RA_LEN || h[i + 2] != 0 || h[i + 3] != 0)
				return false;
			ra = true;
		} else if (t != OPT_PADN && (t >> 6) != 0) {
			return false;
		}
		i += 2 + (uint32_t)h[i + 1];
	}
	return ra;
}

/* The one's complement sum of ICMPv6's pseudo-header (RFC 8200 8.1): the
 * addresses, the upper-layer length, the next header (ICMPv6, not the
 * IPv6 header's, which is Hop-by-Hop's). */
static uint32_t
mld_phdr_sum(const uint8_t src[16], const uint8_t dst[16], uint32_t len)
{
	struct {
		uint8_t src[16], dst[16];
		rte_be32_t len;
		uint8_t zero[3], next;
	} __rte_packed ph = { .len = rte_cpu_to_be_32(len), .next = IPPROTO_ICMPV6 };

	memcpy(ph.src, src, 16);
	memcpy(ph.dst, dst, 16);
	return rte_raw_cksum(&ph, sizeof(ph));
}

static uint16_t
mld_fold(uint32_t s)
{
	s = (s & 0xffff) + (s >> 16);
	return (uint16_t)((s & 0xffff) + (s >> 16));
}

static bool
addr_is_zero(const uint8_t a[16])
{
	static const uint8_t zero[16];

	return memcmp(a, zero, 16) == 0;
}

enum droce_mld_err
droce_mld_parse(const struct rte_mbuf *m, uint32_t l3_off, uint16_t vlan_tci,
		struct droce_mld_msg *msg)
{
	struct rte_ipv6_hdr ip;
	struct rte_ether_hdr eh;
	uint8_t hbh[MLD_HBH_MAX], mld[MLD_LEN];
	uint32_t plen, hlen, len, off;
	uint16_t ck;

	if (droce_mbuf_copy(m, l3_off, sizeof(ip), &ip) != 0 ||
	    (rte_be_to_cpu_32(ip.vtc_flow) >> 28) != 6 || ip.proto != IPPROTO_HOPOPTS ||
	    droce_mbuf_copy(m, l3_off + sizeof(ip), 2, hbh) != 0 || hbh[0] != IPPROTO_ICMPV6)
		return DROCE_MLD_NOT_MLD;
	hlen = ((uint32_t)hbh[1] + 1) * 8;
	off = l3_off + (uint32_t)sizeof(ip) + hlen;
	if (droce_mbuf_copy(m, off, 1, mld) != 0 || !mld_type(mld[0]))
		return DROCE_MLD_NOT_MLD;
	plen = rte_be_to_cpu_16(ip.payload_len);
	if (hlen > sizeof(hbh) || plen < hlen + MLD_LEN ||
	    l3_off + sizeof(ip) + plen > rte_pktmbuf_pkt_len(m) || ip.hop_limits != 1 ||
	    droce_mbuf_copy(m, l3_off + sizeof(ip), hlen, hbh) != 0 || !mld_hbh_ok(hbh, hlen))
		return DROCE_MLD_INVALID;
	len = plen - hlen;
	if (droce_mbuf_copy(m, off, sizeof(mld), mld) != 0 ||
	    droce_mbuf_copy(m, 0, sizeof(eh), &eh) != 0 ||
	    rte_raw_cksum_mbuf(m, off, len, &ck) != 0 ||
	    mld_fold(mld_phdr_sum(ip.src_addr, ip.dst_addr, len) + ck) != 0xffff)
		return DROCE_MLD_INVALID;
	memset(msg, 0, sizeof(*msg));
	msg->type = mld[0];
	msg->vlan_tci = vlan_tci;
	msg->eth_src = eh.src_addr;
	memcpy(msg->src, ip.src_addr, 16);
	memcpy(msg->dst, ip.dst_addr, 16);
	memcpy(msg->group, mld + 8, 16);
	if (msg->type != DROCE_MLD_QUERY)
		return DROCE_MLD_OK;
	/* A query is 24 bytes (v1) or at least 28 (v2); it comes from a
	 * router's link-local address, for all or for one group. */
	if ((len != MLD_LEN && len < MLD_V2_QUERY_LEN) ||
	    msg->src[0] != 0xfe || (msg->src[1] & 0xc0) != 0x80 ||
	    (!addr_is_zero(msg->group) && msg->group[0] != 0xff))
		return DROCE_MLD_INVALID;
	return DROCE_MLD_OK;
}

int
droce_mld_write(struct rte_mbuf *m, const struct droce_mld_msg *msg)
{
	uint32_t l2_len = RTE_ETHER_HDR_LEN + (msg->vlan_tci ? RTE_VLAN_HLEN : 0);
	uint32_t len = l2_len + (uint32_t)sizeof(struct rte_ipv6_hdr) + MLD_HBH_LEN + MLD_LEN;
	struct rte_ether_addr dst_mac;
	struct rte_ipv6_hdr *ip;
	uint8_t *p, *hbh, *mld;
	uint16_t ck;

	p = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)len);
	if (p == NULL)
		return -ENOMEM;
	memset(p, 0, len);
	droce_ipv6_mcast_mac(msg->dst, &dst_mac);
	droce_eth_hdr_write(p, &dst_mac, &msg->eth_src, msg->vlan_tci, RTE_ETHER_TYPE_IPV6);
	ip = (struct rte_ipv6_hdr *)(p + l2_len);
	ip->vtc_flow = RTE_BE32(6u << 28);
	ip->payload_len = RTE_BE16(MLD_HBH_LEN + MLD_LEN);
	ip->proto = IPPROTO_HOPOPTS;
	ip->hop_limits = 1;
	memcpy(ip->src_addr, msg->src, 16);
	memcpy(ip->dst_addr, msg->dst, 16);
	hbh = (uint8_t *)(ip + 1);
	hbh[0] = IPPROTO_ICMPV6;
	hbh[2] = OPT_RA;
	hbh[3] = OPT_RA_LEN;
	hbh[6] = OPT_PADN; /* its length, hbh[7], is 0 */
	mld = hbh + MLD_HBH_LEN;
	mld[0] = msg->type;
	memcpy(mld + 8, msg->group, 16);
	ck = (uint16_t)~mld_fold(mld_phdr_sum(msg->src, msg->dst, MLD_LEN) +
				 rte_raw_cksum(mld, MLD_LEN));
	memcpy(mld + 2, &ck, sizeof(ck));
	return 0;
}
