/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The mlx5 port driver (NVIDIA ConnectX-4 and later, BlueField: net_mlx5).
 *
 * mlx5 is bifurcated: the kernel's mlx5_core keeps the netdev, and the
 * PMD's queues receive what its flow rules take. In flow isolation mode
 * (rte_flow_isolate(), only while the port is stopped, so before
 * rte_eth_dev_configure()) they take nothing else: droce's rules bring it
 * RoCEv2 (UDP 4791, IPv4 and IPv6) and ARP, and the kernel keeps the
 * rest. The kernel's own RoCE must be off on that port (docs/nics.md), or
 * the NIC consumes RoCEv2 in hardware before any rule sees it.
 *
 * DPDK 22.11's mlx5 has no RAW item, and its FLEX item needs a flex parser
 * configured for the NIC (BlueField-2 only, says its guide): so no
 * rule matches the BTH's destination QP here, and with several engines
 * the RoCEv2 rule is an RSS action on the UDP ports over droce's queues;
 * the port hands the strays to their owner.
 *
 * TX: the IPv4 header checksum and mbuf chains; the UDP checksum stays 0,
 * as RoCEv2 allows.
 */
#include <string.h>

#include "droce_drv_hw.h"

static int
mlx5_match(const struct rte_eth_dev_info *dev_info)
{
	return strcmp(dev_info->driver_name, "net_mlx5") == 0;
}

static int
mlx5_configure(struct droce_port_drv_ctx *ctx)
{
	struct rte_flow_error err = { 0 };

	/* Without isolation droce still works, but takes all the port's
	 * traffic from the kernel. */
	if (rte_flow_isolate(ctx->port_id, 1, &err) == 0)
		ctx->caps.flow_isolate = true;
	else
		rte_log(RTE_LOG_WARNING, droce_drv_logtype,
			"droce: ethdev %u: no flow isolation (%s): the kernel loses this port's traffic\n",
			ctx->port_id, err.message ? err.message : "refused");
	return droce_drv_hw_configure(ctx);
}

static const struct droce_drv_hw mlx5_hw = { .arp_rule = true };

static int
mlx5_start(struct droce_port_drv_ctx *ctx)
{
	return droce_drv_hw_start(ctx, &mlx5_hw);
}

const struct droce_driver_ops droce_drv_mlx5 = {
	.name = "mlx5",
	.match = mlx5_match,
	.configure = mlx5_configure,
	.start = mlx5_start,
	.stop = droce_drv_hw_stop,
};
