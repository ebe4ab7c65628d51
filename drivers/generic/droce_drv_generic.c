/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The generic port driver: any ethdev, no offloads but VLAN insertion
 * where the ethdev has it. droce computes the
 * IPv4 header checksum itself (droce_l3_hdr_write()), leaves the UDP
 * checksum 0 as RoCEv2 allows, and classifies every received frame in
 * software, so all this driver has to do is configure the ethdev plainly.
 * With several queues it asks for RSS on the IP addresses and UDP ports
 * where the ethdev offers it (flows then keep to one queue, and the
 * requester's UDP source port, derived from the QPNs, spreads them);
 * otherwise the ethdev spreads frames as it likes. Either way a frame
 * that lands on a queue whose engine does not own its QP is handed over
 * in software (droce_port_rx()).
 */
#include <rte_ethdev.h>

#include "droce_drv_hw.h"

static int
generic_match(const struct rte_eth_dev_info *dev_info __rte_unused)
{
	return 1;
}

/* RSS on what the ethdev offers of the IPv4/IPv6 addresses and UDP
 * ports, with its default key. */
static void
generic_rss(struct droce_port_drv_ctx *ctx, struct rte_eth_conf *conf)
{
	uint64_t hf = ctx->dev_info->flow_type_rss_offloads &
		      (RTE_ETH_RSS_IP | RTE_ETH_RSS_UDP);

	if (hf == 0)
		return;
	conf->rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
	conf->rx_adv_conf.rss_conf.rss_hf = hf;
	ctx->caps.rx_rss_udp = (hf & RTE_ETH_RSS_UDP) != 0;
}

int
droce_drv_generic_configure(struct droce_port_drv_ctx *ctx)
{
	struct rte_eth_conf conf = { 0 };
	int ret;

	/* Frames may come from the transport as mbuf chains (headers in one
	 * segment, payload in others): let the PMD take them where it can. */
	if (ctx->dev_info->tx_offload_capa & RTE_ETH_TX_OFFLOAD_MULTI_SEGS)
		conf.txmode.offloads |= RTE_ETH_TX_OFFLOAD_MULTI_SEGS;
	droce_drv_tx_vlan(ctx, &conf);
	if (ctx->nb_queues > 1)
		generic_rss(ctx, &conf);
	ret = rte_eth_dev_configure(ctx->port_id, ctx->nb_queues, ctx->nb_queues, &conf);
	if (ret != 0)
		return ret;
	droce_drv_mtu_set(ctx);
	return 0;
}

int
droce_drv_generic_start(struct droce_port_drv_ctx *ctx)
{
	static const struct droce_drv_hw shared = { 0 };
	int ret;

	/* The application's RX modes stay; a rule for UDP 4791 to droce's
	 * queues where the PMD takes one, else the application hands the
	 * frames over. */
	if (ctx->shared)
		return droce_drv_hw_start(ctx, &shared);

	/*
	 * Only frames to the port's MAC and broadcast (ARP) are droce's; the
	 * RX path drops the rest anyway, but a NIC that filters saves it the
	 * work. Allmulticast stays as the PMD has it: broadcast reaches every
	 * port without it, and the port adds the MACs of the UD multicast
	 * groups it joins and those IPv6 neighbour discovery needs
	 * (droce_mcast.c). PMDs without RX modes
	 * (ring, memif) say -ENOTSUP, which is fine.
	 */
	ret = rte_eth_promiscuous_disable(ctx->port_id);
	if (ret != 0 && ret != -ENOTSUP)
		return ret;
	return 0;
}

const struct droce_driver_ops droce_drv_generic = {
	.name = "generic",
	.match = generic_match,
	.configure = droce_drv_generic_configure,
	.start = droce_drv_generic_start,
	/* Shared mode: the rules start() made. */
	.stop = droce_drv_hw_stop,
};
