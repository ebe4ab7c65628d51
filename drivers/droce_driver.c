/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The port driver table, and what drivers share.
 */
#include <stdlib.h>

#include <rte_common.h>
#include <rte_dev.h>
#include <rte_devargs.h>
#include <rte_kvargs.h>
#include <rte_log.h>

#include "droce_driver.h"

RTE_LOG_REGISTER(droce_drv_logtype, droce.driver, NOTICE);

/* Most specific first: the generic driver matches everything, so it ends
 * the table. */
static const struct droce_driver_ops *const droce_drivers[] = {
	&droce_drv_mlx5,
	&droce_drv_ice,
	&droce_drv_i40e,
	&droce_drv_af_xdp,
	&droce_drv_memif,
	&droce_drv_af_packet,
	&droce_drv_generic,
};

const struct droce_driver_ops *
droce_driver_find(const struct rte_eth_dev_info *dev_info)
{
	unsigned i;

	for (i = 0; i < RTE_DIM(droce_drivers); i++)
		if (droce_drivers[i]->match(dev_info))
			return droce_drivers[i];
	return NULL;
}

uint32_t
droce_drv_devarg_u32(const struct rte_eth_dev_info *dev_info, const char *key, uint32_t dflt)
{
	const struct rte_devargs *da = dev_info->device != NULL ?
				       rte_dev_devargs(dev_info->device) : NULL;
	struct rte_kvargs *kv;
	unsigned long v = 0;
	const char *s;

	if (da == NULL || da->args == NULL)
		return dflt;
	kv = rte_kvargs_parse(da->args, NULL);
	s = kv != NULL ? rte_kvargs_get(kv, key) : NULL;
	if (s != NULL)
		v = strtoul(s, NULL, 0);
	rte_kvargs_free(kv);
	return v > 0 && v <= UINT32_MAX ? (uint32_t)v : dflt;
}

void
droce_drv_mtu_set(struct droce_port_drv_ctx *ctx)
{
	int ret = rte_eth_dev_set_mtu(ctx->port_id, ctx->eth_mtu);

	ctx->mtu_set = ret == 0;
	if (ret != 0)
		rte_log(RTE_LOG_NOTICE, droce_drv_logtype,
			"droce: ethdev %u (%s) keeps its MTU (setting %u: %s); droce keeps to its own\n",
			ctx->port_id, ctx->dev_info->driver_name, ctx->eth_mtu,
			rte_strerror(-ret));
}

void
droce_drv_tx_vlan(struct droce_port_drv_ctx *ctx, struct rte_eth_conf *conf)
{
	/* droce writes the 802.1Q tag of a port with a VLAN into the frame;
	 * where the ethdev inserts tags, the port's TX stage moves it into
	 * the mbuf instead (droce_port_tx.c), so the NIC tags the frame
	 * itself, from the descriptor, as it does for its priority queues. */
	if (ctx->dev_info->tx_offload_capa & RTE_ETH_TX_OFFLOAD_VLAN_INSERT) {
		conf->txmode.offloads |= RTE_ETH_TX_OFFLOAD_VLAN_INSERT;
		ctx->caps.tx_vlan_insert = true;
	}
}
