/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The i40e port driver (Intel X710, XL710, XXV710: net_i40e).
 *
 * With several engines, one flow director rule per engine and IP version
 * puts a RoCEv2 frame on its owner's queue: ETH / IPV4 or IPV6 / UDP dst
 * 4791 / RAW, the RAW item being the i40e "flexible payload": relative to
 * the UDP header (the BTH), at an even offset, whole 16-bit words
 * (i40e_flow_check_raw_item() in DPDK 22.11). The word at BTH bytes 6..7
 * holds the low 16 bits of the destination QP; the mask keeps the bits
 * that name the owner engine (droce_qpn_engine()). Every rule has the
 * same mask and the same flexible payload layout, as the NIC's one
 * per-packet-type flex configuration requires. Where the flow director is
 * not available (the PMD loaded with support-multi-driver=1 refuses
 * flexible payload), RSS on the UDP ports spreads the frames and the port
 * hands the strays to their owner.
 *
 * TX: the IPv4 header checksum and mbuf chains; the UDP checksum stays 0,
 * as RoCEv2 allows (the ICRC covers the payload).
 */
#include <string.h>

#include "droce_drv_hw.h"

static int
i40e_match(const struct rte_eth_dev_info *dev_info)
{
	return strcmp(dev_info->driver_name, "net_i40e") == 0;
}

static void
i40e_qpn_pattern(const struct droce_port_drv_ctx *ctx, unsigned engine, bool ipv6,
		 struct droce_drv_qpn_buf *buf, struct rte_flow_item *pattern)
{
	uint8_t *spec = buf->bytes[0], *mask = buf->bytes[1];

	droce_drv_hw_roce_pattern(ipv6, buf, pattern);
	/* Big endian: the engine bits are in the word's second byte. */
	spec[0] = 0;
	spec[1] = engine;
	mask[0] = 0;
	mask[1] = ctx->nb_queues - 1;
	buf->raw_spec = (struct rte_flow_item_raw){
		.relative = 1, .offset = DROCE_DRV_BTH_QPN_LOW_OFF, .length = 2, .pattern = spec };
	buf->raw_mask = rte_flow_item_raw_mask;
	buf->raw_mask.pattern = mask;
	pattern[3] = (struct rte_flow_item){ .type = RTE_FLOW_ITEM_TYPE_RAW,
					     .spec = &buf->raw_spec, .mask = &buf->raw_mask };
	pattern[4] = (struct rte_flow_item){ .type = RTE_FLOW_ITEM_TYPE_END };
}

static const struct droce_drv_hw i40e_hw = { .qpn_pattern = i40e_qpn_pattern };

static int
i40e_start(struct droce_port_drv_ctx *ctx)
{
	return droce_drv_hw_start(ctx, &i40e_hw);
}

const struct droce_driver_ops droce_drv_i40e = {
	.name = "i40e",
	.match = i40e_match,
	.configure = droce_drv_hw_configure,
	.start = i40e_start,
	.stop = droce_drv_hw_stop,
};
