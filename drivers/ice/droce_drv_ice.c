/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The ice port driver (Intel E810: net_ice).
 *
 * DPDK 22.11's ice flow director matches bytes beyond the UDP header only
 * through its protocol-agnostic rules: a pattern of one RAW item whose
 * spec is a whole example packet written as a hex string, and whose mask
 * (a hex string of the same length) picks the bits to match; the PMD runs
 * its DDP parser on the example to find the packet type
 * (ice_fdir_parse_pattern()). So with several engines each rule is an
 * Ethernet / IPv4 or IPv6 / UDP 4791 / BTH example whose destination QP
 * holds the engine number, masked to the UDP destination port and the QP
 * bits that name the owner (droce_qpn_engine()); ice_parser_profile_init()
 * makes each masked word a field of the nearest header before it (UDP).
 * Not tried on an E810 (none here): where the PMD refuses the rules, RSS
 * on the UDP ports spreads the frames and the port hands the strays to
 * their owner.
 *
 * TX: the IPv4 header checksum and mbuf chains; the UDP checksum stays 0,
 * as RoCEv2 allows (the ICRC covers the payload).
 */
#include <stdio.h>
#include <string.h>

#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_udp.h>

#include "droce_drv_hw.h"

/* The BTH: 12 bytes, the destination QP in bytes 5..7. */
#define ICE_BTH_LEN 12
#define ICE_BTH_QPN_LAST 7
#define ICE_PKT_MAX (RTE_ETHER_HDR_LEN + sizeof(struct rte_ipv6_hdr) + \
		     sizeof(struct rte_udp_hdr) + ICE_BTH_LEN)
static_assert(2 * ICE_PKT_MAX < sizeof(((struct droce_drv_qpn_buf *)0)->bytes[0]),
	      "the hex string of the example packet fits");

static int
ice_match(const struct rte_eth_dev_info *dev_info)
{
	return strcmp(dev_info->driver_name, "net_ice") == 0;
}

/* @p len bytes as lower-case hex, NUL-terminated. */
static void
ice_hex(const uint8_t *b, size_t len, uint8_t *out)
{
	size_t i;

	for (i = 0; i < len; i++)
		snprintf((char *)out + 2 * i, 3, "%02x", b[i]);
}

/* The example frame (@p pkt) and the mask (@p msk) of one engine's rule.
 * @return their length. */
static size_t
ice_example(const struct droce_port_drv_ctx *ctx, unsigned engine, bool ipv6,
	    uint8_t *pkt, uint8_t *msk)
{
	const size_t l3 = ipv6 ? sizeof(struct rte_ipv6_hdr) : sizeof(struct rte_ipv4_hdr);
	const size_t udp_len = sizeof(struct rte_udp_hdr) + ICE_BTH_LEN;
	const size_t len = RTE_ETHER_HDR_LEN + l3 + udp_len;
	struct rte_ether_hdr *eth = (struct rte_ether_hdr *)pkt;
	struct rte_udp_hdr *udp = (struct rte_udp_hdr *)(pkt + RTE_ETHER_HDR_LEN + l3);
	struct rte_udp_hdr *udp_msk = (struct rte_udp_hdr *)(msk + RTE_ETHER_HDR_LEN + l3);
	uint8_t *bth = (uint8_t *)(udp + 1);

	memset(pkt, 0, len);
	memset(msk, 0, len);
	if (ipv6) {
		struct rte_ipv6_hdr *ip = (struct rte_ipv6_hdr *)(eth + 1);

		eth->ether_type = RTE_BE16(RTE_ETHER_TYPE_IPV6);
		ip->vtc_flow = RTE_BE32(6u << 28);
		ip->payload_len = rte_cpu_to_be_16(udp_len);
		ip->proto = IPPROTO_UDP;
		ip->hop_limits = 64;
	} else {
		struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(eth + 1);

		eth->ether_type = RTE_BE16(RTE_ETHER_TYPE_IPV4);
		ip->version_ihl = RTE_IPV4_VHL_DEF;
		ip->total_length = rte_cpu_to_be_16(l3 + udp_len);
		ip->time_to_live = 64;
		ip->next_proto_id = IPPROTO_UDP;
	}
	udp->dst_port = DROCE_DRV_ROCE_PORT_BE;
	udp->dgram_len = rte_cpu_to_be_16(udp_len);
	udp_msk->dst_port = RTE_BE16(0xffff);
	bth[ICE_BTH_QPN_LAST] = engine;
	msk[len - ICE_BTH_LEN + ICE_BTH_QPN_LAST] = ctx->nb_queues - 1;
	return len;
}

static void
ice_qpn_pattern(const struct droce_port_drv_ctx *ctx, unsigned engine, bool ipv6,
		struct droce_drv_qpn_buf *buf, struct rte_flow_item *pattern)
{
	uint8_t pkt[ICE_PKT_MAX], msk[ICE_PKT_MAX];
	size_t len = ice_example(ctx, engine, ipv6, pkt, msk);

	ice_hex(pkt, len, buf->bytes[0]);
	ice_hex(msk, len, buf->bytes[1]);
	buf->raw_spec = (struct rte_flow_item_raw){ .length = 2 * len, .pattern = buf->bytes[0] };
	buf->raw_mask = (struct rte_flow_item_raw){ .length = 2 * len, .pattern = buf->bytes[1] };
	pattern[0] = (struct rte_flow_item){ .type = RTE_FLOW_ITEM_TYPE_RAW,
					     .spec = &buf->raw_spec, .mask = &buf->raw_mask };
	pattern[1] = (struct rte_flow_item){ .type = RTE_FLOW_ITEM_TYPE_END };
}

static const struct droce_drv_hw ice_hw = { .qpn_pattern = ice_qpn_pattern };

static int
ice_start(struct droce_port_drv_ctx *ctx)
{
	return droce_drv_hw_start(ctx, &ice_hw);
}

const struct droce_driver_ops droce_drv_ice = {
	.name = "ice",
	.match = ice_match,
	.configure = droce_drv_hw_configure,
	.start = ice_start,
	.stop = droce_drv_hw_stop,
};
