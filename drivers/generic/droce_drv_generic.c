/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The generic port driver: any ethdev, no offloads. droce computes the
 * IPv4 header checksum itself (droce_l3_hdr_write()), leaves the UDP
 * checksum 0 as RoCEv2 allows, and classifies every received frame in
 * software, so all this driver has to do is configure the ethdev plainly.
 */
#include <rte_ethdev.h>

#include "droce_driver.h"

static int
generic_match(const struct rte_eth_dev_info *dev_info __rte_unused)
{
	return 1;
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
	ret = rte_eth_dev_configure(ctx->port_id, ctx->nb_queues, ctx->nb_queues, &conf);
	if (ret != 0)
		return ret;
	droce_drv_mtu_set(ctx);
	return 0;
}

int
droce_drv_generic_start(struct droce_port_drv_ctx *ctx)
{
	int ret;

	/*
	 * Only frames to the port's MAC and broadcast (ARP) are droce's; the
	 * RX path drops the rest anyway, but a NIC that filters saves it the
	 * work. Allmulticast stays as the PMD has it: broadcast reaches every
	 * port without it, and droce receives no multicast (it does not answer
	 * IPv6 neighbour discovery). PMDs without RX modes (ring, memif) say
	 * -ENOTSUP, which is fine.
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
};
